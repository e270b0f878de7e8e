// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime's com.microsoft contrib ops (what optimum's
// model_optimized.onnx, ORT's transformers optimizer and its QOperator
// quantization write), mapped onto IR ops where the semantics match those
// of ORT's CPU kernels exactly: the Gelu family, BiasAdd, FusedMatMul,
// FusedConv, the (Skip)(Simplified)LayerNormalization family, Attention,
// MultiHeadAttention, GroupQueryAttention (prompt), EmbedLayerNormalization,
// RotaryEmbedding, the QLinear* elementwise / concat / pooling ops,
// Quantize/DequantizeLinear, MatMulIntegerToFloat, DynamicQuantizeMatMul,
// MatMulNBits. The op list is VKP__ONNX_MS_OP_LIST (onnx_internal.h); every
// other op of the domain is refused as "com.microsoft::<Op> is not
// supported". docs/onnx.md, "com.microsoft contrib ops", says the same in
// prose, form by form.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// ---------------------------------------------------------------------------
// Helpers

static vkp_status_t vkp__ms_bin(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t a,
                                int32_t b, const char *out, int32_t *v) {
  int32_t in[2] = {a, b};
  return vkp__onnx_emit_bind(ctx, op, 2, in, 0, NULL, out, v);
}

static vkp_status_t vkp__ms_un(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t a,
                               const char *out, int32_t *v) {
  return vkp__onnx_emit_bind(ctx, op, 1, &a, 0, NULL, out, v);
}

// Runs default-domain mapper `map` on a copy of the current node whose
// inputs and outputs are the given names (attributes kept): the contrib op
// is that op on other operands.
static vkp_status_t vkp__ms_as_op(vkp__onnx_ctx_t *ctx, vkp__onnx_map_fn map,
                                  const char *op_type, const char **inputs,
                                  int32_t n_in, const char **outputs, int32_t n_out) {
  const Onnx__NodeProto *orig = ctx->node;
  Onnx__NodeProto copy = *orig;
  if (op_type) copy.op_type = (char *)op_type;
  copy.input = (char **)inputs;
  copy.n_input = (size_t)n_in;
  copy.output = (char **)outputs;
  copy.n_output = (size_t)n_out;
  ctx->node = &copy;
  vkp_status_t st = map(ctx);
  ctx->node = orig;
  return st;
}

static vkp_status_t vkp__ms_as(vkp__onnx_ctx_t *ctx, vkp__onnx_map_fn map,
                               const char **inputs, int32_t n_in,
                               const char **outputs, int32_t n_out) {
  return vkp__ms_as_op(ctx, map, NULL, inputs, n_in, outputs, n_out);
}

// A fresh ONNX-side name for an intermediate of the current node.
static char *vkp__ms_temp(vkp__onnx_ctx_t *ctx, const char *what) {
  char *base = vkp__asprintf("%s/%s", ctx->node_name, what);
  if (!base) return NULL;
  char *name = vkp__fresh_name(ctx, base, false);
  vkp__free(base);
  return name;
}

static vkp_status_t vkp__ms_gelu_attr(vkp__onnx_ctx_t *ctx, bool tanh_form,
                                      int32_t x, const char *out, int32_t *v) {
  vkp_attr_t a = {.name = "approximate", .kind = VKP_ATTR_STRING,
                  .s = tanh_form ? "tanh" : "none"};
  return vkp__onnx_emit_bind(ctx, VKP_OP_GELU, 1, &x, 1, &a, out, v);
}

// ---------------------------------------------------------------------------
// Activations

// Gelu(X), BiasGelu(A, B) = Gelu(A + B) (erf form); FastGelu(X, bias?) =
// the tanh form of Gelu(X + bias).
vkp_status_t vkp__map_ms_gelu(vkp__onnx_ctx_t *ctx) {
  const char *op = ctx->node->op_type;
  bool fast = strcmp(op, "FastGelu") == 0, bias_gelu = strcmp(op, "BiasGelu") == 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x, b, v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  if (bias_gelu && !vkp__onnx_input(ctx, 1))
    return VKP__ONNX_INVALID("input 1 (bias) is required");
  if ((bias_gelu || fast) && vkp__onnx_input(ctx, 1)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &b));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, x, b, NULL, &x));
  } else if (!fast && !bias_gelu && ctx->node->n_input > 1) {
    return VKP__ONNX_INVALID("Gelu takes one input");
  }
  return vkp__ms_gelu_attr(ctx, fast, x, vkp__onnx_output(ctx, 0), &v);
}

// QuickGelu(X) = X * Sigmoid(alpha * X), alpha 1.702 by default.
vkp_status_t vkp__map_ms_quick_gelu(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  double alpha;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 1.702, &alpha));
  int32_t x, ax, s, c, v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  ax = x;
  if ((float)alpha != 1.0f) {
    VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, (float)alpha, &c));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, x, c, NULL, &ax));
  }
  VKP_RETURN_IF_ERROR(vkp__ms_un(ctx, VKP_OP_SIGMOID, ax, NULL, &s));
  return vkp__ms_bin(ctx, VKP_OP_MUL, x, s, vkp__onnx_output(ctx, 0), &v);
}

// BiasAdd(X, bias, skip) = X + bias + skip.
vkp_status_t vkp__map_ms_bias_add(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x, b, s, v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &b));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &s));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, x, b, NULL, &x));
  return vkp__ms_bin(ctx, VKP_OP_ADD, x, s, vkp__onnx_output(ctx, 0), &v);
}

// ---------------------------------------------------------------------------
// FusedMatMul: alpha · op(A) @ op(B), where op moves dim 0 behind the other
// batch dims (transBatch: perm [1 .. r-2, 0, r-1]) and then swaps the last
// two (trans), in that order (ORT's MatMulComputeHelper).

static vkp_status_t vkp__ms_matmul_operand(vkp__onnx_ctx_t *ctx, int32_t i,
                                           const char *trans_name,
                                           const char *batch_name,
                                           int32_t *out) {
  int64_t trans, batch;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, trans_name, 0, &trans));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, batch_name, 0, &batch));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, out));
  int32_t rank = vkp__onnx_value(ctx, *out)->rank;
  if (batch && rank < 3)
    return VKP__ONNX_INVALID("%s needs input %d of rank 3 or more (it has "
                             "rank %d)",
                             batch_name, (int)i, (int)rank);
  if (rank < 2) return NULL;  // a vector: transposing changes nothing
  int64_t perm[VKP_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) perm[d] = d;
  if (batch) {
    for (int32_t d = 0; d < rank - 2; ++d) perm[d] = d + 1;
    perm[rank - 2] = 0;
  }
  if (trans) {
    int64_t t = perm[rank - 2];
    perm[rank - 2] = perm[rank - 1];
    perm[rank - 1] = t;
  }
  if (!batch && !trans) return NULL;
  vkp_attr_t a = vkp__onnx_a_ints("perm", perm, rank);
  return vkp__onnx_emit_bind(ctx, VKP_OP_TRANSPOSE, 1, out, 1, &a, NULL, out);
}

vkp_status_t vkp__map_ms_fused_matmul(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  double alpha;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 1.0, &alpha));
  int32_t a, b, y, c, v;
  VKP_RETURN_IF_ERROR(vkp__ms_matmul_operand(ctx, 0, "transA", "transBatchA", &a));
  VKP_RETURN_IF_ERROR(vkp__ms_matmul_operand(ctx, 1, "transB", "transBatchB", &b));
  const char *out = vkp__onnx_output(ctx, 0);
  bool scaled = (float)alpha != 1.0f;
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MATMUL, a, b, scaled ? NULL : out, &y));
  if (!scaled) return NULL;
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, (float)alpha, &c));
  return vkp__ms_bin(ctx, VKP_OP_MUL, y, c, out, &v);
}

// ---------------------------------------------------------------------------
// FusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z), activation one of
// Relu, Tanh, Sigmoid, LeakyRelu (alpha), Clip (min, max), HardSigmoid
// (alpha, beta), from activation_params; absent: none.

vkp_status_t vkp__map_ms_fused_conv(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  char act[32];
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "activation", "", act, sizeof act));
  float params[2] = {0, 0};
  int32_t n_params = 0;
  const Onnx__AttributeProto *pa = vkp__onnx_attr(ctx, "activation_params");
  if (pa) {
    n_params = (int32_t)pa->n_floats;
    for (int32_t i = 0; i < n_params && i < 2; ++i) params[i] = pa->floats[i];
  }
  static const struct {
    const char *name;
    vkp_op_t op;
    int32_t n_params;
  } acts[] = {
      {"", VKP_OP_COUNT, 0},          {"Relu", VKP_OP_RELU, 0},
      {"Tanh", VKP_OP_TANH, 0},       {"Sigmoid", VKP_OP_SIGMOID, 0},
      {"LeakyRelu", VKP_OP_LEAKY_RELU, 1}, {"Clip", VKP_OP_CLIP, 2},
      {"HardSigmoid", VKP_OP_HARD_SIGMOID, 2},
  };
  int32_t k = -1;
  for (int32_t i = 0; i < (int32_t)(sizeof acts / sizeof *acts) && k < 0; ++i)
    if (strcmp(act, acts[i].name) == 0) k = i;
  if (k < 0)
    return VKP__ONNX_UNSUPPORTED("activation '%s' is not supported (Relu, Tanh, "
                                 "Sigmoid, LeakyRelu, Clip, HardSigmoid)",
                                 act);
  if (n_params < acts[k].n_params)
    return VKP__ONNX_INVALID("activation %s needs %d activation_params (the "
                             "node has %d)",
                             act, (int)acts[k].n_params, (int)n_params);
  const char *out = vkp__onnx_output(ctx, 0);
  bool has_z = vkp__onnx_input(ctx, 3) != NULL;
  char *conv_out = NULL;
  if (has_z || acts[k].op != VKP_OP_COUNT) {
    conv_out = vkp__ms_temp(ctx, "conv");
    if (!conv_out) return VKP_OOM("FusedConv name");
  }
  const char *ins[3] = {ctx->node->input[0], ctx->node->n_input > 1 ? ctx->node->input[1] : "",
                        ctx->node->n_input > 2 ? ctx->node->input[2] : ""};
  const char *outs[1] = {conv_out ? conv_out : out};
  vkp_status_t st = vkp__ms_as(ctx, vkp__map_conv, ins, 3, outs, 1);
  int32_t y = -1, z, v, c[2];
  if (!st && conv_out) st = vkp__onnx_sym_value(ctx, vkp__onnx_sym_find(ctx, conv_out), &y);
  vkp__free(conv_out);
  VKP_RETURN_IF_ERROR(st);
  if (!has_z && acts[k].op == VKP_OP_COUNT) return NULL;
  bool act_after = acts[k].op != VKP_OP_COUNT;
  if (has_z) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &z));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, y, z, act_after ? NULL : out, &y));
  }
  if (!act_after) return NULL;
  switch (acts[k].op) {
    case VKP_OP_LEAKY_RELU: {
      vkp_attr_t a = vkp__onnx_a_float("alpha", params[0]);
      return vkp__onnx_emit_bind(ctx, VKP_OP_LEAKY_RELU, 1, &y, 1, &a, out, &v);
    }
    case VKP_OP_HARD_SIGMOID: {
      vkp_attr_t a[2] = {vkp__onnx_a_float("alpha", params[0]),
                         vkp__onnx_a_float("beta", params[1])};
      return vkp__onnx_emit_bind(ctx, VKP_OP_HARD_SIGMOID, 1, &y, 2, a, out, &v);
    }
    case VKP_OP_CLIP: {
      VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, params[0], &c[0]));
      VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, params[1], &c[1]));
      int32_t in[3] = {y, c[0], c[1]};
      return vkp__onnx_emit_bind(ctx, VKP_OP_CLIP, 3, in, 0, NULL, out, &v);
    }
    default:
      return vkp__ms_un(ctx, acts[k].op, y, out, &v);
  }
}

// ---------------------------------------------------------------------------
// Normalisations

// SimplifiedLayerNormalization(X, scale) -> (Y, inv_std_var): RMSNorm over
// axis.. (the IR's layer_norm with rms = 1); inv_std_var =
// 1 / sqrt(mean(X²) + epsilon), keeping the reduced dims as 1. ORT
// registers it in the default domain as well as in com.microsoft.
vkp_status_t vkp__map_simplified_layer_norm(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 2));
  int64_t axis, stash;
  double eps;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "epsilon", 1e-5, &eps));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "stash_type", 1, &stash));
  if (stash != 1)
    return VKP__ONNX_UNSUPPORTED("stash_type %lld (only 1, float)", (long long)stash);
  int32_t in[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  if (ctx->node->n_input > 2 && vkp__onnx_input(ctx, 2))
    return VKP__ONNX_INVALID("SimplifiedLayerNormalization takes two inputs");
  int32_t rank = vkp__onnx_value(ctx, in[0])->rank;
  if (axis < -(int64_t)rank || axis >= rank)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d", (long long)axis,
                             (int)rank);
  if (axis < 0) axis += rank;
  vkp_attr_t a[3] = {vkp__onnx_a_int("axis", axis), vkp__onnx_a_float("epsilon", (float)eps),
                     vkp__onnx_a_int("rms", 1)};
  int32_t y;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_LAYER_NORM, 2, in, 3, a,
                                          vkp__onnx_output(ctx, 0), &y));
  const char *inv_out = vkp__onnx_output(ctx, 1);
  if (!inv_out) return NULL;
  int64_t axes[VKP_MAX_RANK];
  for (int32_t d = (int32_t)axis; d < rank; ++d) axes[d - axis] = d;
  vkp_attr_t r[2] = {vkp__onnx_a_ints("axes", axes, rank - (int32_t)axis),
                     vkp__onnx_a_int("keepdims", 1)};
  int32_t sq, ms, e, one, ve, sd, inv;
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, in[0], in[0], NULL, &sq));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_REDUCE_MEAN, 1, &sq, 2, r, NULL, &ms));
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, (float)eps, &e));
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, 1.0, &one));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, ms, e, NULL, &ve));
  VKP_RETURN_IF_ERROR(vkp__ms_un(ctx, VKP_OP_SQRT, ve, NULL, &sd));
  return vkp__ms_bin(ctx, VKP_OP_DIV, one, sd, inv_out, &inv);
}

// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) -> (output,
// mean, inv_std_var, input_skip_bias_sum): s = input + skip (+ bias), the
// (RMS) layer norm of s over the last axis; skip broadcasts to input
// (ORT takes [B, S, H], [S, H] or [H] skips... any right-aligned one here).
vkp_status_t vkp__map_ms_skip_layer_norm(vkp__onnx_ctx_t *ctx) {
  bool simplified = strcmp(ctx->node->op_type, "SkipSimplifiedLayerNormalization") == 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 4));
  if (!vkp__onnx_output(ctx, 0)) return VKP__ONNX_INVALID("output 0 has no name");
  if (vkp__onnx_attr(ctx, "epsilon") == NULL)
    return VKP__ONNX_INVALID("attribute 'epsilon' is required");
  int32_t x, skip, bias, s;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &skip));
  if (!vkp__onnx_input(ctx, 2)) return VKP__ONNX_INVALID("input 2 (gamma) is required");
  int32_t bias_at = simplified ? 3 : 4;
  if (simplified && ctx->node->n_input > 4 && vkp__onnx_input(ctx, 4))
    return VKP__ONNX_INVALID("SkipSimplifiedLayerNormalization takes at most 4 inputs");
  const char *sum_out = vkp__onnx_output(ctx, 3);
  char *sum_name = NULL;
  if (!sum_out) {
    sum_name = vkp__ms_temp(ctx, "sum");
    if (!sum_name) return VKP_OOM("SkipLayerNormalization name");
  }
  const char *sum = sum_out ? sum_out : sum_name;
  vkp_status_t st = NULL;
  if (vkp__onnx_input(ctx, bias_at)) {
    st = vkp__onnx_input_value(ctx, bias_at, &bias);
    if (!st) st = vkp__ms_bin(ctx, VKP_OP_ADD, x, skip, NULL, &x);
    if (!st) st = vkp__ms_bin(ctx, VKP_OP_ADD, x, bias, sum, &s);
  } else {
    st = vkp__ms_bin(ctx, VKP_OP_ADD, x, skip, sum, &s);
  }
  if (!st) {
    const char *ins[3] = {sum, ctx->node->input[2],
                          !simplified && ctx->node->n_input > 3 ? ctx->node->input[3] : ""};
    const char *none = "";
    if (simplified) {
      // mean is not computed by RMSNorm: the output stays unset.
      if (vkp__onnx_output(ctx, 1))
        st = VKP__ONNX_UNSUPPORTED("output 1 (mean) of SkipSimplifiedLayerNormalization "
                                   "is not computed (RMSNorm has no mean)");
      const char *outs[2] = {ctx->node->output[0],
                             vkp__onnx_output(ctx, 2) ? ctx->node->output[2] : none};
      if (!st) st = vkp__ms_as(ctx, vkp__map_simplified_layer_norm, ins, 2, outs, 2);
    } else {
      const char *outs[3] = {ctx->node->output[0],
                             vkp__onnx_output(ctx, 1) ? ctx->node->output[1] : none,
                             vkp__onnx_output(ctx, 2) ? ctx->node->output[2] : none};
      st = vkp__ms_as(ctx, vkp__map_layer_norm, ins, ins[2][0] ? 3 : 2, outs, 3);
    }
  }
  vkp__free(sum_name);
  return st;
}

// ---------------------------------------------------------------------------
// Attention (packed QKV projection) and MultiHeadAttention (separate Q, K,
// V): both become the IR's attention over [B, N, S, head] operands, with the
// masks of ORT's CPU kernel (PrepareMask) as one additive float mask:
// masked keys get mask_filter_value added to their score, and with
// unidirectional the keys after the query are filled with the lowest float.

static vkp_status_t vkp__ms_reshape(vkp__onnx_ctx_t *ctx, int32_t x, int32_t rank,
                                    const int64_t *shape, int32_t *out) {
  vkp_attr_t a = vkp__onnx_a_ints("shape", shape, rank);
  return vkp__onnx_emit_bind(ctx, VKP_OP_RESHAPE, 1, &x, 1, &a, NULL, out);
}

static vkp_status_t vkp__ms_transpose(vkp__onnx_ctx_t *ctx, int32_t x, int32_t rank,
                                      const int64_t *perm, int32_t *out) {
  vkp_attr_t a = vkp__onnx_a_ints("perm", perm, rank);
  return vkp__onnx_emit_bind(ctx, VKP_OP_TRANSPOSE, 1, &x, 1, &a, NULL, out);
}

// x[..., begin:end] along `axis`.
static vkp_status_t vkp__ms_slice(vkp__onnx_ctx_t *ctx, int32_t x, int64_t axis,
                                  int64_t begin, int64_t end, int32_t *out) {
  int64_t step = 1;
  vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", &begin, 1), vkp__onnx_a_ints("ends", &end, 1),
                     vkp__onnx_a_ints("axes", &axis, 1), vkp__onnx_a_ints("steps", &step, 1)};
  return vkp__onnx_emit_bind(ctx, VKP_OP_SLICE, 1, &x, 4, a, NULL, out);
}

// An integer constant of ONNX `type`, `rank` / `shape`: 0, 1, 2, ... with
// `iota`, else v everywhere.
static vkp_status_t vkp__ms_int_const(vkp__onnx_ctx_t *ctx, int32_t type, int32_t rank,
                                      const int64_t *shape, bool iota, int64_t v,
                                      int32_t *out) {
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, type, rank, shape));
  size_t n = vkp__onnx_tensor_numel(&t);
  for (size_t i = 0; i < n; ++i) vkp__onnx_tensor_set_i(&t, i, iota ? (int64_t)i : v);
  vkp_status_t st = vkp__onnx_add_const(ctx, &t, out);
  vkp__onnx_tensor_deinit(&t);
  return st;
}

// [B, L, N*h] -> [B, N, L, h] (kt: [B, N, h, L]).
static vkp_status_t vkp__ms_heads(vkp__onnx_ctx_t *ctx, int32_t x, int64_t heads, bool kt,
                                  int32_t *out) {
  const vkp_value_t *v = vkp__onnx_value(ctx, x);
  int64_t shape[4] = {v->shape[0], v->shape[1], heads, v->shape[2] / heads};
  int64_t perm_q[4] = {0, 2, 1, 3}, perm_k[4] = {0, 2, 3, 1};
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, x, 4, shape, &x));
  return vkp__ms_transpose(ctx, x, 4, kt ? perm_k : perm_q, out);
}

typedef struct vkp__ms_attention_t {
  int64_t batch, q_len, kv_len, heads;
  bool causal;
  double scale;        // 0: 1/sqrt(head size)
  double filter;       // mask_filter_value
  int32_t mask_input;  // mask_index / key_padding_mask input, or -1
  int32_t bias_input;  // attention_bias input, or -1
} vkp__ms_attention_t;

// The additive mask from mask_index (int32): [B] end positions, [2B] end
// then start positions, [B, T] or [B, S, T] 0/1, [B, 1, M, M] 0/1 (the
// first S rows and T columns); *out -1 when there is none.
static vkp_status_t vkp__ms_key_mask(vkp__onnx_ctx_t *ctx, const vkp__ms_attention_t *at,
                                     int32_t *out) {
  *out = -1;
  vkp__onnx_sym_t *ms = at->mask_input >= 0 ? vkp__onnx_input(ctx, at->mask_input) : NULL;
  if (!ms) return NULL;
  int32_t m, keep, zero, filter, cond;
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, ms, &m));
  // A copy: emitting nodes may move the graph's value array.
  const vkp_value_t mval = *vkp__onnx_value(ctx, m), *mv = &mval;
  if (mv->dtype != VKP_DTYPE_INT32 && mv->dtype != VKP_DTYPE_INT64)
    return VKP__ONNX_UNSUPPORTED("mask (input %d) is %s; int32 expected", (int)at->mask_input,
                                 vkp_dtype_name(mv->dtype));
  const int32_t itype = vkp__onnx_type_from_dtype(mv->dtype);
  const int64_t B = at->batch, S = at->q_len, T = at->kv_len;
  int64_t mshape[4] = {B, 1, 1, T};
  int32_t mrank = 4;
  if (mv->rank == 1 && (mv->shape[0] == B || mv->shape[0] == 2 * B)) {
    // Positions t < end (and t >= start) are kept.
    int64_t tshape[2] = {1, T}, bshape[2] = {B, 1};
    int32_t tv, end, start, lt, ge;
    VKP_RETURN_IF_ERROR(vkp__ms_int_const(ctx, itype, 2, tshape, true, 0, &tv));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, m, 0, 0, B, &end));
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, end, 2, bshape, &end));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_LESS, tv, end, NULL, &lt));
    keep = lt;
    if (mv->shape[0] == 2 * B) {
      VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, m, 0, B, 2 * B, &start));
      VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, start, 2, bshape, &start));
      VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_GREATER_OR_EQUAL, tv, start, NULL, &ge));
      VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_AND, lt, ge, NULL, &keep));
    }
  } else if ((mv->rank == 2 && mv->shape[0] == B && mv->shape[1] == T) ||
             (mv->rank == 3 && mv->shape[0] == B && mv->shape[1] == S && mv->shape[2] == T) ||
             (mv->rank == 4 && mv->shape[0] == B && mv->shape[1] == 1 && mv->shape[2] >= S &&
              mv->shape[3] >= T)) {
    int32_t src = m;
    if (mv->rank == 4) {
      VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, src, 2, 0, S, &src));
      VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, src, 3, 0, T, &src));
    }
    if (mv->rank == 3) mshape[2] = S;
    if (mv->rank == 4) mshape[2] = S;
    VKP_RETURN_IF_ERROR(vkp__ms_int_const(ctx, itype, 0, NULL, false, 0, &zero));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_GREATER, src, zero, NULL, &keep));
  } else {
    char dims[96] = "";
    size_t o = 0;
    for (int32_t d = 0; d < mv->rank && o < sizeof dims - 24; ++d)
      o += (size_t)snprintf(dims + o, sizeof dims - o, "%s%lld", d ? ", " : "",
                            (long long)mv->shape[d]);
    return VKP__ONNX_UNSUPPORTED("mask of shape [%s] (supported: [B], [2B], [B, T], "
                                 "[B, S, T], [B, 1, M, M] with B %lld, S %lld, T %lld)",
                                 dims, (long long)B, (long long)S, (long long)T);
  }
  int32_t fzero;
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, 0.0, &fzero));
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, (float)at->filter, &filter));
  int32_t in[3] = {keep, fzero, filter};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_WHERE, 3, in, 0, NULL, NULL, &cond));
  return vkp__ms_reshape(ctx, cond, mrank, mshape, out);
}

// q [B, S, Dq], k [B, T, Dq], v [B, T, Dv] (projected, biased) -> output 0
// of the current node, [B, S, Dv].
static vkp_status_t vkp__ms_attend(vkp__onnx_ctx_t *ctx, const vkp__ms_attention_t *at,
                                   int32_t q, int32_t k, int32_t v) {
  const int64_t N = at->heads;
  int64_t dq = vkp__onnx_value(ctx, q)->shape[2], dv = vkp__onnx_value(ctx, v)->shape[2];
  if (dq % N || dv % N || vkp__onnx_value(ctx, k)->shape[2] != dq)
    return VKP__ONNX_INVALID("hidden sizes %lld (Q, K) and %lld (V) must be multiples of "
                             "num_heads %lld, and K's must equal Q's",
                             (long long)dq, (long long)dv, (long long)N);
  int32_t qh, kt, vh, mask = -1, cond = -1, y;
  VKP_RETURN_IF_ERROR(vkp__ms_heads(ctx, q, N, false, &qh));
  VKP_RETURN_IF_ERROR(vkp__ms_heads(ctx, k, N, true, &kt));
  VKP_RETURN_IF_ERROR(vkp__ms_heads(ctx, v, N, false, &vh));
  VKP_RETURN_IF_ERROR(vkp__ms_key_mask(ctx, at, &mask));
  if (at->bias_input >= 0 && vkp__onnx_input(ctx, at->bias_input)) {
    int32_t bias;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, at->bias_input, &bias));
    const vkp_value_t *bv = vkp__onnx_value(ctx, bias);
    if (bv->rank != 4 || (bv->shape[0] != 1 && bv->shape[0] != at->batch) ||
        (bv->shape[1] != 1 && bv->shape[1] != N) || bv->shape[2] != at->q_len ||
        bv->shape[3] != at->kv_len)
      return VKP__ONNX_INVALID("attention_bias must be [B or 1, num_heads or 1, %lld, %lld]",
                               (long long)at->q_len, (long long)at->kv_len);
    if (mask >= 0)
      VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, mask, bias, NULL, &mask));
    else
      mask = bias;
  }
  if (at->causal) {
    int64_t S = at->q_len, T = at->kv_len, shape[2] = {S, T};
    vkp__onnx_tensor_t t;
    VKP_RETURN_IF_ERROR(
        vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, shape));
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < T; ++j) vkp__onnx_tensor_set_f(&t, (size_t)(i * T + j), j > i);
    vkp_status_t st = vkp__onnx_add_const(ctx, &t, &cond);
    vkp__onnx_tensor_deinit(&t);
    VKP_RETURN_IF_ERROR(st);
  }
  double scale = at->scale != 0.0 ? at->scale : 1.0 / sqrt((double)(dq / N));
  vkp_attr_t a[3] = {vkp__onnx_a_float("scale", (float)scale),
                     vkp__onnx_a_float("fill", -FLT_MAX), vkp__onnx_a_int("fill_where", 1)};
  int32_t in[5] = {qh, kt, vh, mask, cond};
  int32_t n_in = cond >= 0 ? 5 : mask >= 0 ? 4 : 3;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_ATTENTION, n_in, in, 3, a, NULL, &y));
  int64_t perm[4] = {0, 2, 1, 3}, shape[3] = {at->batch, at->q_len, dv};
  VKP_RETURN_IF_ERROR(vkp__ms_transpose(ctx, y, 4, perm, &y));
  vkp_attr_t r = vkp__onnx_a_ints("shape", shape, 3);
  return vkp__onnx_emit_bind(ctx, VKP_OP_RESHAPE, 1, &y, 1, &r, vkp__onnx_output(ctx, 0), &y);
}

static vkp_status_t vkp__ms_attention_attrs(vkp__onnx_ctx_t *ctx, vkp__ms_attention_t *at) {
  int64_t heads, uni;
  if (!vkp__onnx_attr(ctx, "num_heads"))
    return VKP__ONNX_INVALID("attribute 'num_heads' is required");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_heads", 0, &heads));
  if (heads < 1) return VKP__ONNX_INVALID("num_heads %lld must be positive", (long long)heads);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "unidirectional", 0, &uni));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "scale", 0.0, &at->scale));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "mask_filter_value", -10000.0, &at->filter));
  at->heads = heads;
  at->causal = uni != 0;
  return NULL;
}

// Attention(input, weights, bias?, mask_index?, past?, attention_bias?,
// past_sequence_length?) -> output (present refused).
vkp_status_t vkp__map_ms_attention(vkp__onnx_ctx_t *ctx) {
  if (vkp__onnx_input(ctx, 4) || vkp__onnx_input(ctx, 6) || vkp__onnx_output(ctx, 1))
    return VKP__ONNX_UNSUPPORTED("past state (inputs 4 and 6, output 1 'present': decoding "
                                 "with a key/value cache) is not supported");
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__ms_attention_t at = {.mask_input = 3, .bias_input = 5};
  VKP_RETURN_IF_ERROR(vkp__ms_attention_attrs(ctx, &at));
  int64_t flag;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "do_rotary", 0, &flag));
  if (flag) return VKP__ONNX_UNSUPPORTED("do_rotary = 1 (rotary embedding inside Attention)");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "past_present_share_buffer", 0, &flag));
  if (flag) return VKP__ONNX_UNSUPPORTED("past_present_share_buffer = 1");
  int32_t x, w, b, qkv, q, k, v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &w));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x), *wv = vkp__onnx_value(ctx, w);
  if (xv->rank != 3 || wv->rank != 2 || wv->shape[0] != xv->shape[2])
    return VKP__ONNX_INVALID("input must be [B, S, hidden] and weights [hidden, 3 * hidden]");
  int64_t sizes[3];
  int32_t n_sizes;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "qkv_hidden_sizes", sizes, 3, &n_sizes));
  if (n_sizes < 0) {
    if (wv->shape[1] % 3)
      return VKP__ONNX_INVALID("weights' second dim %lld is not 3 * hidden (give "
                               "qkv_hidden_sizes)",
                               (long long)wv->shape[1]);
    sizes[0] = sizes[1] = sizes[2] = wv->shape[1] / 3;
  } else if (n_sizes != 3 || sizes[0] != sizes[1] || sizes[0] < 1 || sizes[2] < 1 ||
             sizes[0] + sizes[1] + sizes[2] != wv->shape[1]) {
    return VKP__ONNX_INVALID("qkv_hidden_sizes must be [H, H, Hv] summing to the weights' "
                             "second dim %lld",
                             (long long)wv->shape[1]);
  }
  at.batch = xv->shape[0];
  at.q_len = at.kv_len = xv->shape[1];
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MATMUL, x, w, NULL, &qkv));
  if (vkp__onnx_input(ctx, 2)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &b));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, qkv, b, NULL, &qkv));
  }
  VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, 0, sizes[0], &q));
  VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, sizes[0], 2 * sizes[0], &k));
  VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, 2 * sizes[0], 2 * sizes[0] + sizes[2], &v));
  return vkp__ms_attend(ctx, &at, q, k, v);
}

// MultiHeadAttention(query, key, value, bias?, key_padding_mask?,
// attention_bias?, past_key?, past_value?, ...) -> output, for 3-D query,
// key and value ([B, S, D], [B, L, D], [B, L, Dv]); the packed and
// pre-transposed (BNSH) forms and past state are refused.
vkp_status_t vkp__map_ms_multi_head_attention(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__ms_attention_t at = {.mask_input = 4, .bias_input = 5};
  VKP_RETURN_IF_ERROR(vkp__ms_attention_attrs(ctx, &at));
  for (int32_t i = 6; i < (int32_t)ctx->node->n_input; ++i)
    if (vkp__onnx_input(ctx, i))
      return VKP__ONNX_UNSUPPORTED("input %d (past state or cache inputs) is not supported",
                                   (int)i);
  if (!vkp__onnx_input(ctx, 1) || !vkp__onnx_input(ctx, 2))
    return VKP__ONNX_UNSUPPORTED("packed QKV in the query (no key and value inputs) is not "
                                 "supported");
  int32_t q, k, v, b;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &q));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &k));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &v));
  const vkp_value_t *qv = vkp__onnx_value(ctx, q), *kv = vkp__onnx_value(ctx, k),
                    *vv = vkp__onnx_value(ctx, v);
  if (qv->rank != 3 || kv->rank != 3 || vv->rank != 3 || kv->shape[0] != qv->shape[0] ||
      vv->shape[0] != qv->shape[0] || vv->shape[1] != kv->shape[1])
    return VKP__ONNX_UNSUPPORTED("query, key and value must be [B, S, D], [B, L, D] and "
                                 "[B, L, Dv] (packed and BNSH forms are not supported)");
  at.batch = qv->shape[0];
  at.q_len = qv->shape[1];
  at.kv_len = kv->shape[1];
  const int64_t d = qv->shape[2], dv = vv->shape[2];
  if (vkp__onnx_input(ctx, 3)) {
    int32_t bq, bk, bv;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &b));
    const vkp_value_t *bvv = vkp__onnx_value(ctx, b);
    if (bvv->rank != 1 || bvv->shape[0] != 2 * d + dv)
      return VKP__ONNX_INVALID("bias must be [2 * %lld + %lld]", (long long)d, (long long)dv);
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, b, 0, 0, d, &bq));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, b, 0, d, 2 * d, &bk));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, b, 0, 2 * d, 2 * d + dv, &bv));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, q, bq, NULL, &q));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, k, bk, NULL, &k));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, v, bv, NULL, &v));
  }
  return vkp__ms_attend(ctx, &at, q, k, v);
}

// GroupQueryAttention(query, key?, value?, past_key?, past_value?,
// seqlens_k, total_sequence_length, ...) -> (output, present_key,
// present_value), for a prompt without past state: causal attention where
// query head h reads key/value head h / (num_heads / kv_num_heads). The
// query heads become [B, kvN, G, S, H] so one attention node broadcasts
// each key/value head over its group. present_key/value are K and V as
// [B, kvN, S, H]. Query s of batch b attends keys 0 .. min(s, seqlens_k[b])
// (ORT's prompt path: keys past a right-padded sequence's end are left
// out, also for the padding rows).
vkp_status_t vkp__map_ms_group_query_attention(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 3));
  int64_t heads, kv_heads, flag;
  double scale, softcap;
  if (!vkp__onnx_attr(ctx, "num_heads") || !vkp__onnx_attr(ctx, "kv_num_heads"))
    return VKP__ONNX_INVALID("attributes 'num_heads' and 'kv_num_heads' are required");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_heads", 0, &heads));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "kv_num_heads", 0, &kv_heads));
  if (heads < 1 || kv_heads < 1 || heads % kv_heads)
    return VKP__ONNX_INVALID("num_heads %lld must be a positive multiple of kv_num_heads %lld",
                             (long long)heads, (long long)kv_heads);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "scale", 0.0, &scale));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "softcap", 0.0, &softcap));
  if (softcap != 0.0) return VKP__ONNX_UNSUPPORTED("softcap is not supported");
  static const char *const zero_attrs[] = {"do_rotary", "smooth_softmax", "qk_output"};
  for (size_t i = 0; i < sizeof zero_attrs / sizeof *zero_attrs; ++i) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, zero_attrs[i], 0, &flag));
    if (flag) return VKP__ONNX_UNSUPPORTED("%s = %lld is not supported", zero_attrs[i],
                                           (long long)flag);
  }
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "local_window_size", -1, &flag));
  if (flag != -1) return VKP__ONNX_UNSUPPORTED("local_window_size (sliding window) is not supported");
  if (vkp__onnx_input(ctx, 3) || vkp__onnx_input(ctx, 4))
    return VKP__ONNX_UNSUPPORTED("past_key/past_value (decoding with a KV cache) are not "
                                 "supported");
  for (int32_t i = 7; i < (int32_t)ctx->node->n_input; ++i)
    if (vkp__onnx_input(ctx, i))
      return VKP__ONNX_UNSUPPORTED("input %d (rotary caches, position ids, attention bias, "
                                   "head sink) is not supported",
                                   (int)i);
  if (!vkp__onnx_input(ctx, 5) || !vkp__onnx_input(ctx, 6))
    return VKP__ONNX_INVALID("inputs 5 (seqlens_k) and 6 (total_sequence_length) are "
                             "required");
  int32_t q, k, v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &q));
  const vkp_value_t qv = *vkp__onnx_value(ctx, q);
  if (qv.rank != 3) return VKP__ONNX_INVALID("query must be [B, S, hidden]");
  const int64_t B = qv.shape[0], S = qv.shape[1];
  int64_t H;
  if (!vkp__onnx_input(ctx, 1)) {
    if (vkp__onnx_input(ctx, 2)) return VKP__ONNX_INVALID("value without key");
    if (qv.shape[2] % (heads + 2 * kv_heads))
      return VKP__ONNX_INVALID("packed QKV hidden size is not (num_heads + 2 kv_num_heads) "
                               "* head size");
    H = qv.shape[2] / (heads + 2 * kv_heads);
    int32_t qkv = q;
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, 0, heads * H, &q));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, heads * H, (heads + kv_heads) * H, &k));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, qkv, 2, (heads + kv_heads) * H,
                                      (heads + 2 * kv_heads) * H, &v));
  } else {
    if (qv.shape[2] % heads) return VKP__ONNX_INVALID("hidden size not a multiple of num_heads");
    H = qv.shape[2] / heads;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &k));
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &v));
    const vkp_value_t kv = *vkp__onnx_value(ctx, k), vv = *vkp__onnx_value(ctx, v);
    if (kv.rank != 3 || vv.rank != 3 || kv.shape[0] != B || kv.shape[1] != S ||
        kv.shape[2] != kv_heads * H || vv.shape[0] != B || vv.shape[1] != S ||
        vv.shape[2] != kv_heads * H)
      return VKP__ONNX_UNSUPPORTED("key and value must be [B, S, kv_num_heads * head size] "
                                   "like the query (BNSH forms are not supported)");
  }
  const vkp__onnx_tensor_t *total;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 6, "total_sequence_length", &total));
  double total_len;
  VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(total, "total_sequence_length", &total_len));
  if ((int64_t)total_len != S)
    return VKP__ONNX_UNSUPPORTED("total_sequence_length %lld is not the sequence length %lld "
                                 "(past state is not supported)",
                                 (long long)total_len, (long long)S);
  const int64_t G = heads / kv_heads;
  int64_t s5[5] = {B, S, kv_heads, G, H}, s4[4] = {B, S, kv_heads, H};
  int64_t pq[5] = {0, 2, 3, 1, 4}, pk[4] = {0, 2, 1, 3}, pkt[4] = {0, 1, 3, 2};
  int32_t qh, kh, vh, kt, cond, y;
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, q, 5, s5, &qh));
  VKP_RETURN_IF_ERROR(vkp__ms_transpose(ctx, qh, 5, pq, &qh));
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, k, 4, s4, &kh));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_TRANSPOSE, 1, &kh, 1,
                                          (vkp_attr_t[]){vkp__onnx_a_ints("perm", pk, 4)},
                                          vkp__onnx_output(ctx, 1), &kh));
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, v, 4, s4, &vh));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_TRANSPOSE, 1, &vh, 1,
                                          (vkp_attr_t[]){vkp__onnx_a_ints("perm", pk, 4)},
                                          vkp__onnx_output(ctx, 2), &vh));
  VKP_RETURN_IF_ERROR(vkp__ms_transpose(ctx, kh, 4, pkt, &kt));
  int64_t g5[5] = {B, kv_heads, 1, H, S}, v5[5] = {B, kv_heads, 1, S, H};
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, kt, 5, g5, &kt));
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, vh, 5, v5, &vh));
  {
    int64_t shape[2] = {S, S};
    vkp__onnx_tensor_t t;
    VKP_RETURN_IF_ERROR(
        vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, shape));
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) vkp__onnx_tensor_set_f(&t, (size_t)(i * S + j), j > i);
    vkp_status_t st = vkp__onnx_add_const(ctx, &t, &cond);
    vkp__onnx_tensor_deinit(&t);
    VKP_RETURN_IF_ERROR(st);
  }
  // Keys past seqlens_k[b] (right padding) are excluded too: -FLT_MAX added.
  int32_t sl, iota, keep, zero, lowest, mask;
  {
    int64_t tshape[2] = {1, S}, bshape[2] = {B, 1}, mshape[5] = {B, 1, 1, 1, S};
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 5, &sl));
    const vkp_value_t slv = *vkp__onnx_value(ctx, sl);
    if (slv.rank != 1 || slv.shape[0] != B)
      return VKP__ONNX_INVALID("seqlens_k must be [B]");
    VKP_RETURN_IF_ERROR(vkp__ms_int_const(ctx, vkp__onnx_type_from_dtype(slv.dtype), 2, tshape,
                                          true, 0, &iota));
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, sl, 2, bshape, &sl));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_LESS_OR_EQUAL, iota, sl, NULL, &keep));
    VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, 0.0, &zero));
    VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, -FLT_MAX, &lowest));
    int32_t w[3] = {keep, zero, lowest};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_WHERE, 3, w, 0, NULL, NULL, &mask));
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, mask, 5, mshape, &mask));
  }
  if (scale == 0.0) scale = 1.0 / sqrt((double)H);
  vkp_attr_t a[3] = {vkp__onnx_a_float("scale", (float)scale),
                     vkp__onnx_a_float("fill", -FLT_MAX), vkp__onnx_a_int("fill_where", 1)};
  int32_t in[5] = {qh, kt, vh, mask, cond};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_ATTENTION, 5, in, 3, a, NULL, &y));
  int64_t po[5] = {0, 3, 1, 2, 4}, s3[3] = {B, S, heads * H};
  VKP_RETURN_IF_ERROR(vkp__ms_transpose(ctx, y, 5, po, &y));
  vkp_attr_t r = vkp__onnx_a_ints("shape", s3, 3);
  return vkp__onnx_emit_bind(ctx, VKP_OP_RESHAPE, 1, &y, 1, &r, vkp__onnx_output(ctx, 0), &y);
}

// ---------------------------------------------------------------------------
// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
// position_embedding, segment_embedding?, gamma, beta, mask?,
// position_ids?) -> (output, mask_index, embedding_sum): the layer norm of
// word[ids] + position[position_ids, or 0 .. S-1] (+ segment[segment_ids]);
// mask_index[b] counts the ones of mask[b] (zeros without a mask).

vkp_status_t vkp__map_ms_embed_layer_norm(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 3));
  if (!vkp__onnx_output(ctx, 0)) return VKP__ONNX_INVALID("output 0 has no name");
  for (int32_t i = 2; i <= 6; ++i)
    if (i != 4 && !vkp__onnx_input(ctx, i))
      return VKP__ONNX_INVALID("input %d is required", (int)i);
  int32_t ids, word, pos, sum, emb;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &ids));
  const vkp_value_t iv = *vkp__onnx_value(ctx, ids);
  if (iv.rank != 2) return VKP__ONNX_INVALID("input_ids must be [B, S]");
  const int64_t B = iv.shape[0], S = iv.shape[1];
  vkp_attr_t axis0 = vkp__onnx_a_int("axis", 0);
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &word));
  int32_t in2[2] = {word, ids};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_GATHER, 2, in2, 1, &axis0, NULL, &emb));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &pos));
  if (vkp__onnx_input(ctx, 8)) {
    int32_t pids;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 8, &pids));
    int32_t gin[2] = {pos, pids};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_GATHER, 2, gin, 1, &axis0, NULL, &pos));
  } else {
    if (vkp__onnx_value(ctx, pos)->shape[0] < S)
      return VKP__ONNX_INVALID("position_embedding has fewer than %lld rows", (long long)S);
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, pos, 0, 0, S, &pos));
  }
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, emb, pos, NULL, &sum));
  const char *sum_out = vkp__onnx_output(ctx, 2);
  bool has_segment = vkp__onnx_input(ctx, 1) && vkp__onnx_input(ctx, 4);
  if (!has_segment && (vkp__onnx_input(ctx, 1) || vkp__onnx_input(ctx, 4)))
    return VKP__ONNX_INVALID("segment_ids and segment_embedding come together");
  char *sum_name = NULL;
  if (!sum_out) {
    sum_name = vkp__ms_temp(ctx, "sum");
    if (!sum_name) return VKP_OOM("EmbedLayerNormalization name");
  }
  const char *sum_sym = sum_out ? sum_out : sum_name;
  vkp_status_t st = NULL;
  if (has_segment) {
    int32_t seg_ids = -1, seg = -1, g = -1;
    st = vkp__onnx_input_value(ctx, 1, &seg_ids);
    if (!st) st = vkp__onnx_input_value(ctx, 4, &seg);
    int32_t gin[2] = {seg, seg_ids};
    if (!st) st = vkp__onnx_emit_bind(ctx, VKP_OP_GATHER, 2, gin, 1, &axis0, NULL, &g);
    if (!st) st = vkp__ms_bin(ctx, VKP_OP_ADD, sum, g, sum_sym, &sum);
  } else {
    st = vkp__ms_un(ctx, VKP_OP_IDENTITY, sum, sum_sym, &sum);
  }
  if (!st) {
    const char *ins[3] = {sum_sym, ctx->node->input[5], ctx->node->input[6]};
    const char *outs[1] = {ctx->node->output[0]};
    // The layer norm sees only epsilon, with ORT's default (1e-12), not
    // ONNX's.
    double eps;
    st = vkp__onnx_attr_float(ctx, "epsilon", 1e-12, &eps);
    Onnx__AttributeProto attr = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&attr};
    attr.name = (char *)"epsilon";
    attr.has_type = true;
    attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    attr.has_f = true;
    attr.f = (float)eps;
    Onnx__NodeProto node = *ctx->node;
    node.attribute = attrs;
    node.n_attribute = 1;
    const Onnx__NodeProto *orig = ctx->node;
    ctx->node = &node;
    if (!st) st = vkp__ms_as(ctx, vkp__map_layer_norm, ins, 3, outs, 1);
    ctx->node = orig;
  }
  vkp__free(sum_name);
  VKP_RETURN_IF_ERROR(st);
  const char *mask_out = vkp__onnx_output(ctx, 1);
  if (!mask_out) return NULL;
  int32_t mi;
  if (!vkp__onnx_input(ctx, 7)) {
    int64_t shape[1] = {B};
    VKP_RETURN_IF_ERROR(
        vkp__ms_int_const(ctx, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, shape, false, 0, &mi));
    return vkp__ms_un(ctx, VKP_OP_IDENTITY, mi, mask_out, &mi);
  }
  int32_t mask, one, eq;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 7, &mask));
  const vkp_value_t mv = *vkp__onnx_value(ctx, mask);
  if (mv.rank != 2 || mv.shape[0] != B || mv.shape[1] != S)
    return VKP__ONNX_INVALID("mask must be [B, S] like input_ids");
  VKP_RETURN_IF_ERROR(
      vkp__ms_int_const(ctx, vkp__onnx_type_from_dtype(mv.dtype), 0, NULL, false, 1, &one));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_EQUAL, mask, one, NULL, &eq));
  // Counted in float32 (exact below 2^24; every target reduces floats).
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"},
             to_int = {.name = "to", .kind = VKP_ATTR_STRING, .s = "int32"};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_CAST, 1, &eq, 1, &to, NULL, &eq));
  int64_t axes[1] = {1};
  vkp_attr_t r[2] = {vkp__onnx_a_ints("axes", axes, 1), vkp__onnx_a_int("keepdims", 0)};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_REDUCE_SUM, 1, &eq, 2, r, NULL, &mi));
  return vkp__onnx_emit_bind(ctx, VKP_OP_CAST, 1, &mi, 1, &to_int, mask_out, &mi);
}

// ---------------------------------------------------------------------------
// RotaryEmbedding(input, position_ids, cos_cache, sin_cache) for input
// [B, N, S, H] or [B, S, N*H] (num_heads), rotating the first
// rotary_embedding_dim (default H) entries of each head by the angle of
// its position: halves (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), the
// halves being the two contiguous halves, or the even and odd entries with
// interleaved. position_ids is [B, S], or [1]: an offset added to 0 .. S-1.

vkp_status_t vkp__map_ms_rotary_embedding(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int64_t interleaved, heads, rot, packed;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "interleaved", 0, &interleaved));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_heads", 0, &heads));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "rotary_embedding_dim", 0, &rot));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "is_packed_batching", 0, &packed));
  if (packed) return VKP__ONNX_UNSUPPORTED("is_packed_batching = 1");
  int32_t x, pids, cosc, sinc;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &pids));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &cosc));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &sinc));
  const vkp_value_t xv = *vkp__onnx_value(ctx, x), pv = *vkp__onnx_value(ctx, pids),
                    cv = *vkp__onnx_value(ctx, cosc);
  int64_t B = xv.shape[0], S, N, H;
  bool three_d = xv.rank == 3;
  if (xv.rank == 4) {
    N = xv.shape[1], S = xv.shape[2], H = xv.shape[3];
  } else if (three_d) {
    S = xv.shape[1];
    if (heads <= 0 && rot > 0 && cv.rank == 2 && cv.shape[1] * 2 == rot) heads = 0;
    if (heads <= 0)
      return VKP__ONNX_UNSUPPORTED("a 3-D input needs num_heads");
    if (xv.shape[2] % heads) return VKP__ONNX_INVALID("hidden size not a multiple of num_heads");
    N = heads, H = xv.shape[2] / heads;
  } else {
    return VKP__ONNX_INVALID("input must be [B, N, S, H] or [B, S, hidden]");
  }
  if (rot == 0) rot = H;
  if (rot > H || rot % 2 || cv.rank != 2 || cv.shape[1] * 2 != rot)
    return VKP__ONNX_INVALID("cos_cache must be [max_position, %lld / 2] with "
                             "rotary_embedding_dim %lld even and at most the head size %lld",
                             (long long)rot, (long long)rot, (long long)H);
  const int64_t half = rot / 2;
  // Positions: [B, S], or an offset [1] plus 0 .. S-1.
  int32_t pos = pids;
  if (pv.rank == 1 && pv.shape[0] == 1) {
    int64_t shape[1] = {S};
    int32_t iota;
    VKP_RETURN_IF_ERROR(vkp__ms_int_const(ctx, vkp__onnx_type_from_dtype(pv.dtype), 1, shape,
                                          true, 0, &iota));
    VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, pids, iota, NULL, &pos));
  } else if (!(pv.rank == 2 && (pv.shape[0] == B || pv.shape[0] == 1) && pv.shape[1] == S)) {
    return VKP__ONNX_INVALID("position_ids must be [B, S] or [1]");
  }
  vkp_attr_t axis0 = vkp__onnx_a_int("axis", 0);
  int32_t c, sn;
  int32_t gin[2] = {cosc, pos};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_GATHER, 2, gin, 1, &axis0, NULL, &c));
  gin[0] = sinc;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_GATHER, 2, gin, 1, &axis0, NULL, &sn));
  // cos, sin: [Bp, S, half] (or [S, half]) -> against x as [B, N, S, H]
  // ([B, S, N, H] for a 3-D input) with the pair axis last when
  // interleaved.
  int64_t bp = vkp__onnx_value(ctx, c)->rank == 3 ? vkp__onnx_value(ctx, c)->shape[0] : 1;
  int64_t cshape[5];
  int32_t crank;
  if (three_d) {
    int64_t s4[4] = {B, S, N, H};
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, x, 4, s4, &x));
    cshape[0] = bp, cshape[1] = S, cshape[2] = 1, cshape[3] = half;
  } else {
    cshape[0] = bp, cshape[1] = 1, cshape[2] = S, cshape[3] = half;
  }
  crank = 4;
  if (interleaved) cshape[crank++] = 1;
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, c, crank, cshape, &c));
  VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, sn, crank, cshape, &sn));
  int32_t xr = x, rest = -1, x1, x2, a, b2, o1, o2, y;
  if (rot < H) {
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, x, 3, 0, rot, &xr));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, x, 3, rot, H, &rest));
  }
  int64_t x4[4] = {three_d ? S : N, three_d ? N : S, 0, 0};
  int32_t pair_axis = 3;
  if (interleaved) {
    int64_t s5[5] = {B, x4[0], x4[1], half, 2};
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, xr, 5, s5, &xr));
    pair_axis = 4;
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, xr, pair_axis, 0, 1, &x1));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, xr, pair_axis, 1, 2, &x2));
  } else {
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, xr, 3, 0, half, &x1));
    VKP_RETURN_IF_ERROR(vkp__ms_slice(ctx, xr, 3, half, rot, &x2));
  }
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, x1, c, NULL, &a));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, x2, sn, NULL, &b2));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_SUB, a, b2, NULL, &o1));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, x2, c, NULL, &a));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, x1, sn, NULL, &b2));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_ADD, a, b2, NULL, &o2));
  vkp_attr_t cat = vkp__onnx_a_int("axis", pair_axis);
  int32_t parts[2] = {o1, o2};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_CONCAT, 2, parts, 1, &cat, NULL, &y));
  if (interleaved) {
    int64_t s4[4] = {B, x4[0], x4[1], rot};
    VKP_RETURN_IF_ERROR(vkp__ms_reshape(ctx, y, 4, s4, &y));
  }
  const char *out = vkp__onnx_output(ctx, 0);
  if (rest >= 0) {
    vkp_attr_t cat3 = vkp__onnx_a_int("axis", 3);
    int32_t both[2] = {y, rest};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_CONCAT, 2, both, 1, &cat3,
                                            three_d ? NULL : out, &y));
  }
  if (three_d) {
    int64_t s3[3] = {B, S, N * H};
    vkp_attr_t a3 = vkp__onnx_a_ints("shape", s3, 3);
    return vkp__onnx_emit_bind(ctx, VKP_OP_RESHAPE, 1, &y, 1, &a3, out, &y);
  }
  if (rest < 0) return vkp__ms_un(ctx, VKP_OP_IDENTITY, y, out, &y);
  return NULL;
}

// ---------------------------------------------------------------------------
// QOperator ops (ORT's quantization tool, QOperator format): dequantize
// the operands, the float op, quantize the result (dequantize_linear /
// quantize_linear, rounding half to even and saturating, the zero point's
// dtype, or X's when it is omitted). Scales and zero points per tensor.

// dequantize_linear(input x, input scale, input zp (-1: none)).
static vkp_status_t vkp__ms_dq(vkp__onnx_ctx_t *ctx, int32_t xi, int32_t si, int32_t zi,
                               int32_t *out) {
  int32_t in[3] = {-1, -1, -1};
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, xi, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, si, &in[1]));
  int32_t n = 2;
  if (zi >= 0 && vkp__onnx_input(ctx, zi)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, zi, &in[2]));
    n = 3;
  }
  return vkp__onnx_emit_bind(ctx, VKP_OP_DEQUANTIZE_LINEAR, n, in, 0, NULL, NULL, out);
}

// Output 0 = quantize_linear(v, input si, input zi (optional)) in the
// dtype of input `like` when zi is omitted.
static vkp_status_t vkp__ms_q(vkp__onnx_ctx_t *ctx, int32_t v, int32_t si, int32_t zi,
                              int32_t like) {
  int32_t in[3] = {v, -1, -1}, n = 2, y;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, si, &in[1]));
  if (vkp__onnx_input(ctx, zi)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, zi, &in[2]));
    n = 3;
  }
  int32_t lv;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, like, &lv));
  vkp_attr_t a = {.name = "output_dtype", .kind = VKP_ATTR_STRING,
                  .s = vkp_dtype_name(vkp__onnx_value(ctx, lv)->dtype)};
  return vkp__onnx_emit_bind(ctx, VKP_OP_QUANTIZE_LINEAR, n, in, n == 3 ? 0 : 1, &a,
                             vkp__onnx_output(ctx, 0), &y);
}

// QLinearAdd / QLinearMul(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale,
// C_zp?): broadcast.
vkp_status_t vkp__map_ms_qlinear_binary(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  bool mul = strcmp(ctx->node->op_type, "QLinearMul") == 0;
  int32_t a, b, c;
  VKP_RETURN_IF_ERROR(vkp__ms_dq(ctx, 0, 1, 2, &a));
  VKP_RETURN_IF_ERROR(vkp__ms_dq(ctx, 3, 4, 5, &b));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, mul ? VKP_OP_MUL : VKP_OP_ADD, a, b, NULL, &c));
  return vkp__ms_q(ctx, c, 6, 7, 0);
}

// QLinearSigmoid / QLinearLeakyRelu (alpha 0.01)(X, X_scale, X_zp?,
// Y_scale, Y_zp?).
vkp_status_t vkp__map_ms_qlinear_unary(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  bool leaky = strcmp(ctx->node->op_type, "QLinearLeakyRelu") == 0;
  int32_t x, y;
  VKP_RETURN_IF_ERROR(vkp__ms_dq(ctx, 0, 1, 2, &x));
  if (leaky) {
    double alpha;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 0.01, &alpha));
    vkp_attr_t a = vkp__onnx_a_float("alpha", (float)alpha);
    VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_LEAKY_RELU, 1, &x, 1, &a, NULL, &y));
  } else {
    VKP_RETURN_IF_ERROR(vkp__ms_un(ctx, VKP_OP_SIGMOID, x, NULL, &y));
  }
  return vkp__ms_q(ctx, y, 3, 4, 0);
}

// QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...) along axis.
vkp_status_t vkp__map_ms_qlinear_concat(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t n_in = (int32_t)ctx->node->n_input;
  if (n_in < 5 || (n_in - 2) % 3)
    return VKP__ONNX_INVALID("QLinearConcat takes Y_scale, Y_zero_point and (X, scale, "
                             "zero point) triples; it has %d inputs",
                             (int)n_in);
  if (!vkp__onnx_attr(ctx, "axis")) return VKP__ONNX_INVALID("attribute 'axis' is required");
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  int32_t n = (n_in - 2) / 3, y;
  int32_t *parts = vkp__calloc((size_t)n, sizeof *parts);
  if (!parts) return VKP_OOM("QLinearConcat inputs");
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < n && !st; ++i) st = vkp__ms_dq(ctx, 2 + 3 * i, 3 + 3 * i, 4 + 3 * i, &parts[i]);
  int32_t rank = st ? 0 : vkp__onnx_value(ctx, parts[0])->rank;
  if (!st && (axis < -(int64_t)rank || axis >= rank))
    st = VKP__ONNX_INVALID("axis %lld out of range for rank %d", (long long)axis, (int)rank);
  if (axis < 0) axis += rank;
  vkp_attr_t a = vkp__onnx_a_int("axis", axis);
  if (!st) st = vkp__onnx_emit_bind(ctx, VKP_OP_CONCAT, n, parts, 1, &a, NULL, &y);
  vkp__free(parts);
  VKP_RETURN_IF_ERROR(st);
  return vkp__ms_q(ctx, y, 0, 1, 2);
}

// QLinearGlobalAveragePool / QLinearAveragePool(X, x_scale, x_zp?,
// y_scale, y_zp?), NCHW (channels_last = 0) only.
vkp_status_t vkp__map_ms_qlinear_pool(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int64_t channels_last;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "channels_last", 0, &channels_last));
  if (channels_last) return VKP__ONNX_UNSUPPORTED("channels_last = 1 (NHWC) is not supported");
  bool global = strcmp(ctx->node->op_type, "QLinearGlobalAveragePool") == 0;
  int32_t x, y;
  char *xname = vkp__ms_temp(ctx, "x"), *yname = vkp__ms_temp(ctx, "pool");
  vkp_status_t st = !xname || !yname ? VKP_OOM("QLinear pool names") : NULL;
  if (!st) st = vkp__ms_dq(ctx, 0, 1, 2, &x);
  if (!st) st = vkp__ms_un(ctx, VKP_OP_IDENTITY, x, xname, &x);
  const char *ins[1] = {xname}, *outs[1] = {yname};
  if (!st)
    st = vkp__ms_as_op(ctx, vkp__map_pool, global ? "GlobalAveragePool" : "AveragePool", ins,
                       1, outs, 1);
  if (!st) st = vkp__onnx_sym_value(ctx, vkp__onnx_sym_find(ctx, yname), &y);
  vkp__free(xname);
  vkp__free(yname);
  VKP_RETURN_IF_ERROR(st);
  return vkp__ms_q(ctx, y, 3, 4, 0);
}

// ---------------------------------------------------------------------------
// Integer products with a float result.

// Output 0 = float(acc) * scale_a * scale_b (+ bias): acc int32.
static vkp_status_t vkp__ms_rescale(vkp__onnx_ctx_t *ctx, int32_t acc, int32_t sa, int32_t sb,
                                    int32_t bias_input) {
  int32_t f, s, y;
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_CAST, 1, &acc, 1, &to, NULL, &f));
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, sa, sb, NULL, &s));
  bool bias = bias_input >= 0 && vkp__onnx_input(ctx, bias_input);
  const char *out = vkp__onnx_output(ctx, 0);
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MUL, f, s, bias ? NULL : out, &y));
  if (!bias) return NULL;
  int32_t b;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, bias_input, &b));
  return vkp__ms_bin(ctx, VKP_OP_ADD, y, b, out, &y);
}

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?):
// (A - a_zp) @ (B - b_zp) in int32, times a_scale · b_scale, plus bias.
vkp_status_t vkp__map_ms_matmul_integer_to_float(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t in[4] = {-1, -1, -1, -1}, acc, sa, sb;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  if (vkp__onnx_input(ctx, 4)) VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 4, &in[2]));
  if (vkp__onnx_input(ctx, 5)) VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 5, &in[3]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &sa));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &sb));
  int32_t n = in[3] >= 0 ? 4 : in[2] >= 0 ? 3 : 2;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit_bind(ctx, VKP_OP_MATMUL_INTEGER, n, in, 0, NULL, NULL, &acc));
  return vkp__ms_rescale(ctx, acc, sa, sb, 6);
}

// DynamicQuantizeMatMul(A, B, b_scale, b_zp?, bias?): A quantized to uint8
// as DynamicQuantizeLinear does, then as MatMulIntegerToFloat.
vkp_status_t vkp__map_ms_dynamic_quantize_matmul(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t a, q[3], in[4] = {-1, -1, -1, -1}, acc, sb;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &a));
  const char *none[3] = {NULL, NULL, NULL};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_multi(ctx, VKP_OP_DYNAMIC_QUANTIZE_LINEAR, 1, &a, 0, NULL,
                                           3, none, q));
  in[0] = q[0];
  in[2] = q[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  if (vkp__onnx_input(ctx, 3)) VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 3, &in[3]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &sb));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_MATMUL_INTEGER, in[3] >= 0 ? 4 : 3, in,
                                          0, NULL, NULL, &acc));
  return vkp__ms_rescale(ctx, acc, q[1], sb, 4);
}

// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): B holds N rows
// of ceil(K / block_size) blocks of block_size `bits`-bit values packed
// low bits first; W[k, n] = (q - zp) · scale per (n, block), zp default
// 2^(bits-1), uint8 zero points packed the same way (or float ones). The
// weights are dequantized here into a float32 [K, N] constant: 4·K·N bytes
// (8x the 4-bit blob), and A @ W (+ bias) runs as a float matmul.
vkp_status_t vkp__map_ms_matmul_nbits(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int64_t K, N, bits, block;
  for (const char *const *a = (const char *const[]){"K", "N", "block_size", NULL}; *a; ++a)
    if (!vkp__onnx_attr(ctx, *a)) return VKP__ONNX_INVALID("attribute '%s' is required", *a);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "K", 0, &K));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "N", 0, &N));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "bits", 4, &bits));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "block_size", 0, &block));
  if (bits != 4 && bits != 8 && bits != 2)
    return VKP__ONNX_UNSUPPORTED("bits = %lld (2, 4 or 8)", (long long)bits);
  if (K < 1 || N < 1 || block < 16 || (block & (block - 1)))
    return VKP__ONNX_INVALID("K %lld, N %lld, block_size %lld (a power of 2, >= 16)",
                             (long long)K, (long long)N, (long long)block);
  if (vkp__onnx_input(ctx, 4))
    return VKP__ONNX_UNSUPPORTED("g_idx (input 4: act-order) is not supported");
  const vkp__onnx_tensor_t *b, *sc, *zp;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "B (quantized weights)", &b));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "scales", &sc));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 3, "zero_points", &zp));
  if (!b || !sc) return VKP__ONNX_INVALID("inputs 1 (B) and 2 (scales) are required");
  const int64_t blocks = (K + block - 1) / block, blob = block * bits / 8;
  const int64_t per_byte = 8 / bits, mask = (1 << bits) - 1;
  if (b->type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ||
      vkp__onnx_tensor_numel(b) != (size_t)(N * blocks * blob))
    return VKP__ONNX_INVALID("B must be uint8 [%lld, %lld, %lld]", (long long)N,
                             (long long)blocks, (long long)blob);
  if (vkp__onnx_tensor_numel(sc) != (size_t)(N * blocks))
    return VKP__ONNX_INVALID("scales must hold N * ceil(K / block_size) = %lld values",
                             (long long)(N * blocks));
  const int64_t zp_row = (blocks * bits + 7) / 8;
  bool zp_float = zp && vkp__onnx_type_is_float(zp->type);
  if (zp && (zp_float ? vkp__onnx_tensor_numel(zp) != (size_t)(N * blocks)
                      : zp->type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ||
                            vkp__onnx_tensor_numel(zp) != (size_t)(N * zp_row)))
    return VKP__ONNX_INVALID("zero_points must be uint8 [%lld] (packed) or float [%lld]",
                             (long long)(N * zp_row), (long long)(N * blocks));
  vkp__onnx_tensor_t w;
  int64_t shape[2] = {K, N};
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&w, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, shape));
  const uint8_t *bq = b->data, *zq = zp && !zp_float ? zp->data : NULL;
  float *wd = w.data;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      int64_t blk = k / block, in_blk = k % block;
      uint8_t byte = bq[(n * blocks + blk) * blob + in_blk / per_byte];
      int64_t q = (byte >> ((in_blk % per_byte) * bits)) & mask;
      double z = (double)(1 << (bits - 1));
      if (zp_float) {
        z = vkp__onnx_tensor_get_f(zp, (size_t)(n * blocks + blk));
      } else if (zq) {
        int64_t zi = blk * bits;
        z = (double)((zq[n * zp_row + zi / 8] >> (zi % 8)) & mask);
      }
      double scale = vkp__onnx_tensor_get_f(sc, (size_t)(n * blocks + blk));
      // A float zero point is subtracted the same way: (q - zp) · scale.
      wd[k * N + n] = (float)(((double)q - z) * scale);
    }
  int32_t a, wv, y;
  vkp_status_t st = vkp__onnx_add_const(ctx, &w, &wv);
  vkp__onnx_tensor_deinit(&w);
  VKP_RETURN_IF_ERROR(st);
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &a));
  bool bias = vkp__onnx_input(ctx, 5) != NULL;
  const char *out = vkp__onnx_output(ctx, 0);
  VKP_RETURN_IF_ERROR(vkp__ms_bin(ctx, VKP_OP_MATMUL, a, wv, bias ? NULL : out, &y));
  if (!bias) return NULL;
  int32_t bv;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 5, &bv));
  return vkp__ms_bin(ctx, VKP_OP_ADD, y, bv, out, &y);
}

// ---------------------------------------------------------------------------
// The table

#define VKP__MS_NONE VKP_OP_COUNT
#define VKP__MS_ENTRY(name, map, fold, ir, attrs) \
  {name, vkp__map_##map, NULL, VKP__MS_##ir, attrs},

static const vkp__onnx_op_t vkp__onnx_ms_ops[] = {VKP__ONNX_MS_OP_LIST(VKP__MS_ENTRY)};

const vkp__onnx_op_t *vkp__onnx_ms_op_find(const char *op_type) {
  for (size_t i = 0; i < sizeof vkp__onnx_ms_ops / sizeof vkp__onnx_ms_ops[0]; ++i)
    if (strcmp(vkp__onnx_ms_ops[i].onnx_name, op_type) == 0) return &vkp__onnx_ms_ops[i];
  return NULL;
}
