// SPDX-License-Identifier: Apache-2.0
// ONNX quantization ops -> the IR's (graph/op_quant.c): QuantizeLinear and
// DequantizeLinear (per tensor from opset 10, `axis` from 13, `block_size`
// and QuantizeLinear's `output_dtype` from 21), DynamicQuantizeLinear (three
// outputs), ConvInteger and QLinearConv (2-D, pads as Conv's).
// MatMulInteger and QLinearMatMul map one to one (the `simple` mapper).
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// Inputs 0..n-1 of the current node (optional ones may be omitted).
static vkp_status_t vkp__inputs(vkp__onnx_ctx_t *ctx, int32_t required,
                                int32_t *in, int32_t *n_in) {
  size_t n = ctx->node->n_input;
  if (n > 9) return VKP__ONNX_INVALID("has %zu inputs", n);
  for (int32_t i = 0; i < (int32_t)n; ++i) {
    in[i] = -1;
    if (i < required || vkp__onnx_input(ctx, i))
      VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  }
  *n_in = (int32_t)n;
  return NULL;
}

vkp_status_t vkp__map_quantize(vkp__onnx_ctx_t *ctx) {
  bool quantize = strcmp(ctx->node->op_type, "QuantizeLinear") == 0;
  int32_t in[9], n_in = 0;
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, 2, in, &n_in));
  if (n_in > 3) return VKP__ONNX_INVALID("has %d inputs; 2 or 3", (int)n_in);
  vkp_attr_t a[3];
  int32_t n_attrs = 0;
  int64_t axis = 1, block = 0, out_type = 0;
  if (ctx->opset >= 13) VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 1, &axis));
  else if (vkp__onnx_attr(ctx, "axis"))
    return VKP__ONNX_INVALID("attribute 'axis' needs opset 13");
  if (ctx->opset >= 21) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "block_size", 0, &block));
    if (quantize)
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "output_dtype", 0, &out_type));
  } else if (vkp__onnx_attr(ctx, "block_size") || vkp__onnx_attr(ctx, "output_dtype")) {
    return VKP__ONNX_INVALID("attributes 'block_size' and 'output_dtype' need opset 21");
  }
  // `saturate` (19) only concerns float8 outputs, which the IR has not got.
  a[n_attrs++] = vkp__onnx_a_int("axis", axis);
  a[n_attrs++] = vkp__onnx_a_int("block_size", block);
  vkp_dtype_t dt;
  if (out_type) {
    if (!vkp__onnx_type_to_dtype((int32_t)out_type, &dt))
      return VKP__ONNX_UNSUPPORTED("output_dtype %s: the IR has no such dtype",
                                   vkp__onnx_type_name((int32_t)out_type));
    a[n_attrs++] = (vkp_attr_t){.name = "output_dtype", .kind = VKP_ATTR_STRING,
                                .s = vkp_dtype_name(dt)};
  }
  return vkp__onnx_emit_out(ctx, quantize ? VKP_OP_QUANTIZE_LINEAR : VKP_OP_DEQUANTIZE_LINEAR,
                            n_in, in, n_attrs, a);
}

vkp_status_t vkp__map_dynamic_quantize(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 3));
  int32_t x, values[3];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const char *outs[3] = {vkp__onnx_output(ctx, 0), vkp__onnx_output(ctx, 1),
                         vkp__onnx_output(ctx, 2)};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_multi(ctx, VKP_OP_DYNAMIC_QUANTIZE_LINEAR, 1, &x,
                                           0, NULL, 3, outs, values));
  for (int32_t i = 0; i < 3; ++i)
    if (outs[i]) VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}

// ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x,
// x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
// B): 2-D windows as Conv's.
vkp_status_t vkp__map_qconv(vkp__onnx_ctx_t *ctx) {
  bool qlinear = strcmp(ctx->node->op_type, "QLinearConv") == 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t in[9], n_in = 0;
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, qlinear ? 8 : 2, in, &n_in));
  if (n_in > (qlinear ? 9 : 4))
    return VKP__ONNX_INVALID("has %d inputs", (int)n_in);
  const vkp_value_t *x = vkp__onnx_value(ctx, in[0]),
                    *w = vkp__onnx_value(ctx, in[qlinear ? 3 : 1]);
  if (x->rank != 4 || w->rank != 4)
    return VKP__ONNX_UNSUPPORTED("input and weight have rank %d and %d; only 2-D "
                                 "(NCHW) convolution is supported",
                                 (int)x->rank, (int)w->rank);
  int64_t strides[2], dil[2], kernel[2], pads[4], group;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_pair(ctx, "strides", 1, strides));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_pair(ctx, "dilations", 1, dil));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_pair(ctx, "kernel_shape", 1, kernel));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "group", 1, &group));
  if (vkp__onnx_attr(ctx, "kernel_shape") &&
      (kernel[0] != w->shape[2] || kernel[1] != w->shape[3]))
    return VKP__ONNX_INVALID("kernel_shape differs from the weight's");
  kernel[0] = w->shape[2];
  kernel[1] = w->shape[3];
  VKP_RETURN_IF_ERROR(vkp__onnx_window_pads(ctx, &x->shape[2], kernel, strides, dil, pads));
  vkp_attr_t a[4] = {vkp__onnx_a_ints("pads", pads, 4), vkp__onnx_a_ints("strides", strides, 2),
                     vkp__onnx_a_ints("dilations", dil, 2), vkp__onnx_a_int("group", group)};
  return vkp__onnx_emit_out(ctx, qlinear ? VKP_OP_QLINEAR_CONV : VKP_OP_CONV_INTEGER, n_in,
                            in, 4, a);
}

// ---------------------------------------------------------------------------
// QDQ folding (planned by graph/onnx_fuse.c)
//
// DequantizeLinear(x_q; sx, zx) and DequantizeLinear(w_q; sw, zw)
// [and DequantizeLinear(b_q; sb)] -> Conv, Gemm (C the bias) or MatMul [->
// Add(., b), MatMul only] [-> Relu] -> QuantizeLinear(.; sy, zy) becomes
// qlinear_conv / qlinear_matmul(x_q, sx, zx, w_q, sw, zw, sy, zy[, b_q])
// when that is the same computation up to the float rounding of the
// unfused path:
//   - Gemm without transA, alpha or beta (a transposed B is transposed
//     once at import, its per-channel axis then 0);
//   - sx, zx, sy, zy are constants of one value; x_q and y int8 or uint8;
//   - w_q, sw, zw are constants, the scale per tensor or per output channel
//     (DequantizeLinear's axis 0 for Conv's weight, 1 for MatMul's [K, N]);
//   - the bias is int32 with zero point 0 and scale sx * sw (in float32),
//     so that it adds to the int32 accumulator as it is;
//   - a Relu only when zy is the lowest value of y's dtype (the saturation
//     then clamps exactly where Relu would);
//   - no block_size anywhere.
// Otherwise the nodes are imported one by one (float Conv / MatMul between
// the quantizers).

// An ONNX node's integer attribute, or `def`.
static int64_t vkp__qdq_attr(const Onnx__NodeProto *n, const char *name, int64_t def) {
  for (size_t i = 0; i < n->n_attribute; ++i)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
      return n->attribute[i]->i;
  return def;
}

// An ONNX node's float attribute, or `def`.
static float vkp__qdq_attr_f(const Onnx__NodeProto *n, const char *name, float def) {
  for (size_t i = 0; i < n->n_attribute; ++i)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
      return n->attribute[i]->f;
  return def;
}

// Input `i` of ONNX node `n` as a host constant, or NULL.
static const vkp__onnx_tensor_t *vkp__qdq_const(vkp__onnx_ctx_t *ctx,
                                                const Onnx__NodeProto *n, size_t i) {
  if (i >= n->n_input || !n->input[i] || !n->input[i][0]) return NULL;
  vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, n->input[i]);
  return s && s->is_const && !s->poisoned ? &s->constant : NULL;
}

static vkp__onnx_sym_t *vkp__qdq_sym(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *n,
                                     size_t i) {
  return vkp__onnx_sym_find(ctx, n->input[i]);
}

static bool vkp__qdq_is_8bit(int32_t type) {
  return type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ||
         type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
}

// A DequantizeLinear / QuantizeLinear's scale and zero point: constants,
// float32 scale of one value (channels 0) or `channels` values along
// `axis` of a rank-`rank` operand, zero point (when present) of 8-bit
// `type` and the scale's size; no blocks.
static bool vkp__qdq_params(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *n, int32_t type,
                            int32_t rank, int32_t axis, int64_t channels) {
  const vkp__onnx_tensor_t *s = vkp__qdq_const(ctx, n, 1), *z = vkp__qdq_const(ctx, n, 2);
  if (!s || s->type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || s->rank > 1) return false;
  if (vkp__qdq_attr(n, "block_size", 0) != 0) return false;
  size_t numel = vkp__onnx_tensor_numel(s);
  if (numel != 1) {
    int64_t a = vkp__qdq_attr(n, "axis", 1);
    if (a < 0) a += rank;
    if (channels <= 0 || (int64_t)numel != channels || a != axis) return false;
  }
  if (n->n_input > 2 && n->input[2] && n->input[2][0]) {
    if (!z || z->type != type || vkp__onnx_tensor_numel(z) != numel || z->rank > 1)
      return false;
  }
  return true;
}

// The IR value of node input `i`, or a zero scalar of `type` when absent.
static vkp_status_t vkp__qdq_value(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *n,
                                   size_t i, int32_t type, int32_t *out) {
  if (i < n->n_input && n->input[i] && n->input[i][0])
    return vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, n, i), out);
  vkp__onnx_tensor_t zero;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&zero, type, 0, NULL));
  vkp_status_t st = vkp__onnx_add_const(ctx, &zero, out);
  vkp__onnx_tensor_deinit(&zero);
  return st;
}

vkp_status_t vkp__onnx_emit_qdq(vkp__onnx_ctx_t *ctx, const vkp__onnx_fusion_t *f,
                                int32_t xv, bool *out_fused) {
  const Onnx__GraphProto *g = ctx->onnx_graph;
  const vkp__onnx_qdq_t *p = &f->qdq;
  const Onnx__NodeProto *dqx = g->node[p->dq_x], *dqw = g->node[p->dq_w],
                        *prod = g->node[p->product], *q = g->node[p->q];
  const Onnx__NodeProto *dqb = p->dq_b >= 0 ? g->node[p->dq_b] : NULL;
  bool conv = strcmp(prod->op_type, "Conv") == 0, gemm = strcmp(prod->op_type, "Gemm") == 0;
  vkp_value_t x = *vkp__onnx_value(ctx, xv);
  int32_t xt = vkp__onnx_type_from_dtype(x.dtype);
  if (!vkp__qdq_is_8bit(xt) || x.rank != (conv ? 4 : gemm ? 2 : x.rank) || x.rank < 2)
    return NULL;
  if (!vkp__qdq_params(ctx, dqx, xt, x.rank, 0, 0)) return NULL;
  // Gemm: Y = A B' (+ C) with B' = B or Bt; no transposed A, no scaling.
  bool trans_b = gemm && vkp__qdq_attr(prod, "transB", 0) != 0;
  if (gemm && (vkp__qdq_attr(prod, "transA", 0) != 0 ||
               vkp__qdq_attr_f(prod, "alpha", 1.0f) != 1.0f ||
               vkp__qdq_attr_f(prod, "beta", 1.0f) != 1.0f))
    return NULL;
  // The weight ([N, K] for a transposed Gemm B: per channel along axis 0).
  const vkp__onnx_tensor_t *w = vkp__qdq_const(ctx, dqw, 0);
  if (!w || !vkp__qdq_is_8bit(w->type) || w->rank != (conv ? 4 : 2)) return NULL;
  int32_t w_axis = conv || trans_b ? 0 : 1;
  int64_t channels = w->shape[w_axis];
  if (!vkp__qdq_params(ctx, dqw, w->type, w->rank, w_axis, channels)) return NULL;
  // The output quantizer (its zero point decides y's dtype).
  const vkp__onnx_tensor_t *zy = vkp__qdq_const(ctx, q, 2);
  if (!zy || !vkp__qdq_is_8bit(zy->type) || !vkp__qdq_params(ctx, q, zy->type, 0, 0, 0))
    return NULL;
  if (p->relu >= 0 &&
      vkp__onnx_tensor_get_i(zy, 0) != (zy->type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ? -128 : 0))
    return NULL;
  // The bias: int32, zero point 0, scale sx * sw in float32.
  if (dqb) {
    const vkp__onnx_tensor_t *b = vkp__qdq_const(ctx, dqb, 0), *sb = vkp__qdq_const(ctx, dqb, 1),
                             *zb = vkp__qdq_const(ctx, dqb, 2);
    if (!b || b->type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 || b->rank != 1 ||
        b->shape[0] != channels || !sb || sb->type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
        vkp__qdq_attr(dqb, "block_size", 0) != 0)
      return NULL;
    if (dqb->n_input > 2 && dqb->input[2] && dqb->input[2][0]) {
      if (!zb) return NULL;
      for (size_t i = 0; i < vkp__onnx_tensor_numel(zb); ++i)
        if (vkp__onnx_tensor_get_i(zb, i) != 0) return NULL;
    }
    const vkp__onnx_tensor_t *sx = vkp__qdq_const(ctx, dqx, 1), *sw = vkp__qdq_const(ctx, dqw, 1);
    size_t nsb = vkp__onnx_tensor_numel(sb), nsw = vkp__onnx_tensor_numel(sw);
    if (nsb != 1 && nsb != (size_t)channels) return NULL;
    for (int64_t m = 0; m < channels; ++m) {
      float want = (float)vkp__onnx_tensor_get_f(sx, 0) *
                   (float)vkp__onnx_tensor_get_f(sw, nsw == 1 ? 0 : (size_t)m);
      if ((float)vkp__onnx_tensor_get_f(sb, nsb == 1 ? 0 : (size_t)m) != want) return NULL;
    }
  }
  // Conv's window attributes, read from the Conv node.
  vkp_attr_t a[4];
  int64_t strides[2], dil[2], kernel[2], pads[4], group = 1;
  if (conv) {
    const Onnx__NodeProto *anchor = ctx->node;
    ctx->node = prod;
    vkp_status_t st = vkp__onnx_attr_pair(ctx, "strides", 1, strides);
    if (!st) st = vkp__onnx_attr_pair(ctx, "dilations", 1, dil);
    if (!st) st = vkp__onnx_attr_int(ctx, "group", 1, &group);
    kernel[0] = w->shape[2];
    kernel[1] = w->shape[3];
    if (!st) st = vkp__onnx_window_pads(ctx, &x.shape[2], kernel, strides, dil, pads);
    ctx->node = anchor;
    if (st) {  // the unfused Conv reports it
      vkp_status_free(st);
      return NULL;
    }
    a[0] = vkp__onnx_a_ints("pads", pads, 4);
    a[1] = vkp__onnx_a_ints("strides", strides, 2);
    a[2] = vkp__onnx_a_ints("dilations", dil, 2);
    a[3] = vkp__onnx_a_int("group", group);
  }
  int32_t in[9];
  in[0] = xv;
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, dqx, 1), &in[1]));
  VKP_RETURN_IF_ERROR(vkp__qdq_value(ctx, dqx, 2, xt, &in[2]));
  if (trans_b) {
    // The kernels take B as [K, N]: a transposed copy of the constant.
    vkp__onnx_tensor_t wt;
    int64_t shape[2] = {w->shape[1], w->shape[0]};
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&wt, w->type, 2, shape));
    const uint8_t *src = w->data;
    uint8_t *dst = wt.data;
    for (int64_t r = 0; r < w->shape[0]; ++r)
      for (int64_t c = 0; c < w->shape[1]; ++c) dst[c * w->shape[0] + r] = src[r * w->shape[1] + c];
    vkp_status_t st = vkp__onnx_add_const(ctx, &wt, &in[3]);
    vkp__onnx_tensor_deinit(&wt);
    VKP_RETURN_IF_ERROR(st);
  } else {
    VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, dqw, 0), &in[3]));
  }
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, dqw, 1), &in[4]));
  VKP_RETURN_IF_ERROR(vkp__qdq_value(ctx, dqw, 2, w->type, &in[5]));
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, q, 1), &in[6]));
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, q, 2), &in[7]));
  int32_t n_in = 8;
  if (dqb) VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, vkp__qdq_sym(ctx, dqb, 0), &in[n_in++]));
  const char *out = q->output[0];
  int32_t value;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, conv ? VKP_OP_QLINEAR_CONV : VKP_OP_QLINEAR_MATMUL,
                                     n_in, in, conv ? 4 : 0, conv ? a : NULL, out, &value));
  *out_fused = true;
  return vkp__onnx_bind_value(ctx, out, value);
}
