// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the reduction, softmax and normalisation families:
// Reduce* (axes as attribute or, from opset 13 for ReduceSum and 18 for the
// others, as a constant input; keepdims; noop_with_empty_axes), Softmax /
// LogSoftmax / Hardmax (before opset 13 the input is coerced to 2-D at
// `axis`), InstanceNormalization, GroupNormalization (opset 18: scale and
// bias per group; 21: per channel), LpNormalization,
// MeanVarianceNormalization, LRN. docs/onnx.md says the same in prose.
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// ---------------------------------------------------------------------------
// Reductions

typedef struct vkp__onnx_reduce_t {
  const char *onnx;
  vkp_op_t op;
  int64_t axes_input_from;  // the opset from which axes is an input
} vkp__onnx_reduce_t;

static const vkp__onnx_reduce_t vkp__onnx_reduces[] = {
    {"ReduceSum", VKP_OP_REDUCE_SUM, 13},
    {"ReduceMean", VKP_OP_REDUCE_MEAN, 18},
    {"ReduceMax", VKP_OP_REDUCE_MAX, 18},
    {"ReduceMin", VKP_OP_REDUCE_MIN, 18},
    {"ReduceProd", VKP_OP_REDUCE_PROD, 18},
    {"ReduceL1", VKP_OP_REDUCE_L1, 18},
    {"ReduceL2", VKP_OP_REDUCE_L2, 18},
    {"ReduceLogSum", VKP_OP_REDUCE_LOG_SUM, 18},
    {"ReduceLogSumExp", VKP_OP_REDUCE_LOG_SUM_EXP, 18},
    {"ReduceSumSquare", VKP_OP_REDUCE_SUM_SQUARE, 18},
};

vkp_status_t vkp__map_reduce(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_reduce_t *r = NULL;
  for (size_t i = 0; i < sizeof vkp__onnx_reduces / sizeof *r && !r; ++i)
    if (strcmp(ctx->node->op_type, vkp__onnx_reduces[i].onnx) == 0)
      r = &vkp__onnx_reduces[i];
  if (!r) return VKP__ONNX_UNSUPPORTED("unsupported op");
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int64_t keepdims, noop = 0, axes[VKP_MAX_RANK];
  int32_t n_axes = -1;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "keepdims", 1, &keepdims));
  if (ctx->opset >= r->axes_input_from) {
    VKP_RETURN_IF_ERROR(
        vkp__onnx_attr_int(ctx, "noop_with_empty_axes", 0, &noop));
    if (vkp__onnx_attr(ctx, "axes"))
      return VKP__ONNX_INVALID("from opset %lld %s takes axes as an input",
                               (long long)r->axes_input_from, r->onnx);
    vkp__onnx_sym_t *axes_sym = vkp__onnx_input(ctx, 1);
    if (axes_sym && !axes_sym->is_const)
      return VKP__ONNX_UNSUPPORTED(
          "axes (input 1, '%s') is computed at run time: the output shape "
          "depends on it, and vkpipe compiles static shapes",
          axes_sym->name);
    if (axes_sym)
      VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(&axes_sym->constant, "axes", axes,
                                               VKP_MAX_RANK, &n_axes));
  } else {
    if (vkp__onnx_attr(ctx, "noop_with_empty_axes"))
      return VKP__ONNX_INVALID("noop_with_empty_axes needs opset %lld (%s)",
                               (long long)r->axes_input_from, r->onnx);
    if (ctx->node->n_input > 1)
      return VKP__ONNX_INVALID("axes are an attribute in this opset");
    VKP_RETURN_IF_ERROR(
        vkp__onnx_attr_ints(ctx, "axes", axes, VKP_MAX_RANK, &n_axes));
  }
  if (n_axes < 0) n_axes = 0;
  vkp__onnx_sym_t *xs = vkp__onnx_input(ctx, 0);
  if (!xs) return VKP__ONNX_INVALID("input 0 is required");
  // No axes with noop_with_empty_axes: the input, unreduced.
  if (n_axes == 0 && noop)
    return vkp__onnx_bind_alias(ctx, vkp__onnx_output(ctx, 0), xs);
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, xs, &x));
  vkp_attr_t a[2] = {vkp__onnx_a_ints("axes", axes, n_axes),
                     vkp__onnx_a_int("keepdims", keepdims != 0)};
  return vkp__onnx_emit_out(ctx, r->op, 1, &x, 2, a);
}

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax

static int64_t vkp__dims(const int64_t *s, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; ++i) p *= s[i];
  return p;
}

vkp_status_t vkp__map_softmax(vkp__onnx_ctx_t *ctx) {
  const char *type = ctx->node->op_type;
  vkp_op_t op = strcmp(type, "LogSoftmax") == 0 ? VKP_OP_LOG_SOFTMAX
                : strcmp(type, "Hardmax") == 0  ? VKP_OP_HARDMAX
                                                : VKP_OP_SOFTMAX;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int64_t axis;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_int(ctx, "axis", ctx->opset >= 13 ? -1 : 1, &axis));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank = xv->rank;
  if (axis < -(int64_t)rank || axis >= rank || rank < 1)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                             (long long)axis, (int)rank);
  if (axis < 0) axis += rank;
  if (ctx->opset >= 13 || axis == rank - 1) {
    vkp_attr_t a = vkp__onnx_a_int("axis", axis);
    return vkp__onnx_emit_out(ctx, op, 1, &x, 1, &a);
  }
  // Before opset 13 the input is coerced to 2-D [prod(:axis), prod(axis:)]
  // and normalised over the second dimension.
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < rank; ++i) shape[i] = xv->shape[i];
  int64_t flat[2] = {vkp__dims(shape, 0, (int32_t)axis),
                     vkp__dims(shape, (int32_t)axis, rank)};
  vkp_attr_t ra = vkp__onnx_a_ints("shape", flat, 2);
  int32_t r, s;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &x, 1, &ra, NULL, &r));
  vkp_attr_t sa = vkp__onnx_a_int("axis", 1);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, op, 1, &r, 1, &sa, NULL, &s));
  vkp_attr_t ba = vkp__onnx_a_ints("shape", shape, rank);
  return vkp__onnx_emit_out(ctx, VKP_OP_RESHAPE, 1, &s, 1, &ba);
}

// ---------------------------------------------------------------------------
// Normalisations

// The IR values of the current node's first `n` inputs (all required).
static vkp_status_t vkp__inputs(vkp__onnx_ctx_t *ctx, int32_t n, int32_t *in) {
  if (ctx->node->n_input != (size_t)n)
    return VKP__ONNX_INVALID("takes %d inputs, has %zu", (int)n,
                             ctx->node->n_input);
  for (int32_t i = 0; i < n; ++i)
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  return NULL;
}

vkp_status_t vkp__map_instance_norm(vkp__onnx_ctx_t *ctx) {
  double eps;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "epsilon", 1e-5, &eps));
  int32_t in[3];
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, 3, in));
  vkp_attr_t a = vkp__onnx_a_float("epsilon", (float)eps);
  return vkp__onnx_emit_out(ctx, VKP_OP_INSTANCE_NORM, 3, in, 1, &a);
}

// Opset 18's per-group scale or bias [G] as the IR's per-channel [C]: each
// entry repeated C / G times, at import for a constant, else through
// reshape [G, 1] * ones [1, C / G] -> reshape [C].
static vkp_status_t vkp__per_channel(vkp__onnx_ctx_t *ctx, int32_t i,
                                     int64_t groups, int64_t channels,
                                     int32_t *out_value) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  const char *what = i == 1 ? "scale" : "bias";
  if (!s) return VKP__ONNX_INVALID("input %d (%s) is required", (int)i, what);
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, s, &rank, shape);
  if (rank != 1 || shape[0] != groups)
    return VKP__ONNX_INVALID("%s '%s' must have shape [%lld] (num_groups) "
                             "before opset 21",
                             what, s->name, (long long)groups);
  int64_t per = channels / groups;
  if (s->is_const) {
    vkp__onnx_tensor_t t;
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, s->constant.type, 1, &channels));
    for (int64_t c = 0; c < channels; ++c)
      vkp__onnx_tensor_set_f(&t, (size_t)c,
                             vkp__onnx_tensor_get_f(&s->constant, (size_t)(c / per)));
    vkp_status_t st = vkp__onnx_add_const(ctx, &t, out_value);
    vkp__onnx_tensor_deinit(&t);
    return st;
  }
  int32_t v;
  VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, s, &v));
  vkp__onnx_tensor_t ones;
  int64_t ones_shape[2] = {1, per}, col[2] = {groups, 1};
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
      &ones, vkp__onnx_type_from_dtype(vkp__onnx_value(ctx, v)->dtype), 2, ones_shape));
  for (int64_t k = 0; k < per; ++k) vkp__onnx_tensor_set_f(&ones, (size_t)k, 1.0);
  int32_t one, r, m;
  vkp_status_t st = vkp__onnx_add_const(ctx, &ones, &one);
  vkp__onnx_tensor_deinit(&ones);
  VKP_RETURN_IF_ERROR(st);
  vkp_attr_t ra = vkp__onnx_a_ints("shape", col, 2);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &v, 1, &ra, NULL, &r));
  int32_t mi[2] = {r, one};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_MUL, 2, mi, 0, NULL, NULL, &m));
  vkp_attr_t fa = vkp__onnx_a_ints("shape", &channels, 1);
  return vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &m, 1, &fa, NULL, out_value);
}

vkp_status_t vkp__map_group_norm(vkp__onnx_ctx_t *ctx) {
  double eps;
  int64_t groups, stash;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "epsilon", 1e-5, &eps));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_groups", 0, &groups));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "stash_type", 1, &stash));
  if (!vkp__onnx_attr(ctx, "num_groups"))
    return VKP__ONNX_INVALID("attribute 'num_groups' is required");
  // The precision of the statistics: vkpipe computes them in at least
  // float32 (double on ref) whichever float type is asked for.
  if (stash != 1 && stash != 10 && stash != 11 && stash != 16)
    return VKP__ONNX_INVALID("stash_type %lld is not a float type",
                             (long long)stash);
  if (ctx->node->n_input != 3)
    return VKP__ONNX_INVALID("takes 3 inputs, has %zu", ctx->node->n_input);
  int32_t in[3];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  const vkp_value_t *x = vkp__onnx_value(ctx, in[0]);
  if (x->rank < 2)
    return VKP__ONNX_INVALID("input '%s' needs rank >= 2 (N, C, ...)", x->name);
  int64_t channels = x->shape[1];
  if (groups < 1 || channels % groups != 0)
    return VKP__ONNX_INVALID("num_groups %lld does not divide the %lld channels",
                             (long long)groups, (long long)channels);
  for (int32_t i = 1; i < 3; ++i) {
    if (ctx->opset < 21)
      VKP_RETURN_IF_ERROR(vkp__per_channel(ctx, i, groups, channels, &in[i]));
    else
      VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  }
  vkp_attr_t a[2] = {vkp__onnx_a_int("num_groups", groups),
                     vkp__onnx_a_float("epsilon", (float)eps)};
  return vkp__onnx_emit_out(ctx, VKP_OP_GROUP_NORM, 3, in, 2, a);
}

vkp_status_t vkp__map_lp_norm(vkp__onnx_ctx_t *ctx) {
  int64_t axis, p;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "p", 2, &p));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, 1, &x));
  vkp_attr_t a[2] = {vkp__onnx_a_int("axis", axis), vkp__onnx_a_int("p", p)};
  return vkp__onnx_emit_out(ctx, VKP_OP_LP_NORM, 1, &x, 2, a);
}

vkp_status_t vkp__map_mean_variance_norm(vkp__onnx_ctx_t *ctx) {
  int64_t axes[VKP_MAX_RANK];
  int32_t n_axes;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "axes", axes, VKP_MAX_RANK, &n_axes));
  if (n_axes < 0) {  // ONNX's default
    axes[0] = 0, axes[1] = 2, axes[2] = 3;
    n_axes = 3;
  }
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, 1, &x));
  vkp_attr_t a = vkp__onnx_a_ints("axes", axes, n_axes);
  return vkp__onnx_emit_out(ctx, VKP_OP_MEAN_VARIANCE_NORM, 1, &x, 1, &a);
}

vkp_status_t vkp__map_lrn(vkp__onnx_ctx_t *ctx) {
  int64_t size;
  double alpha, beta, bias;
  if (!vkp__onnx_attr(ctx, "size"))
    return VKP__ONNX_INVALID("attribute 'size' is required");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "size", 0, &size));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 1e-4, &alpha));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "beta", 0.75, &beta));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "bias", 1.0, &bias));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__inputs(ctx, 1, &x));
  vkp_attr_t a[4] = {vkp__onnx_a_int("size", size),
                     vkp__onnx_a_float("alpha", (float)alpha),
                     vkp__onnx_a_float("beta", (float)beta),
                     vkp__onnx_a_float("bias", (float)bias)};
  return vkp__onnx_emit_out(ctx, VKP_OP_LRN, 1, &x, 4, a);
}
