// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the selection family: TopK (k an attribute before opset
// 10, the input K from 10; largest and sorted from 11), CumSum (axis an
// input), and the ops whose output shape depends on the input's values,
// NonZero and Unique. ArgMax and ArgMin map one to one (the `simple` rows
// of VKP__ONNX_OP_LIST). docs/onnx.md says the same in prose.
//
// NonZero and Unique have output shapes that depend on the input's values.
// When the input is known at import time they fold here, through the
// folders below; on run-time data they become the IR's non_zero and unique,
// whose outputs are bounded values (a static upper bound, the extent known
// at run time: docs/onnx.md, "Data-dependent output shapes").
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"
#include "graph/ops_internal.h"

// A constant integer input holding exactly one value (a scalar or a 1-D
// tensor of one element), read as the attribute `what` of the IR op. A
// value computed at run time is refused: the output shape (TopK's K) or the
// kernel (CumSum's axis) depends on it.
static vkp_status_t vkp__const_int_input(vkp__onnx_ctx_t *ctx, int32_t i,
                                         const char *what, const char *why,
                                         int64_t *out) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s) return VKP__ONNX_INVALID("input %d (%s) is required", (int)i, what);
  if (!s->is_const)
    return VKP__ONNX_UNSUPPORTED("%s (input %d, '%s') is computed at run time: %s",
                                 what, (int)i, s->name, why);
  int64_t v[2];
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(&s->constant, what, v, 2, &n));
  if (n != 1)
    return VKP__ONNX_INVALID("%s (input %d, '%s') must hold one value, has %d",
                             what, (int)i, s->name, (int)n);
  *out = v[0];
  return NULL;
}

// TopK with K computed at run time: the IR's top_k with K as input 1, whose
// outputs are bounded by the axis length (extent min(K, length)).
static vkp_status_t vkp__map_top_k_runtime(vkp__onnx_ctx_t *ctx) {
  int64_t axis, largest, sorted;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "largest", 1, &largest));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "sorted", 1, &sorted));
  int32_t in[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  vkp_attr_t a[3] = {vkp__onnx_a_int("axis", axis),
                     vkp__onnx_a_int("largest", largest != 0),
                     vkp__onnx_a_int("sorted", sorted != 0)};
  const char *outs[2] = {vkp__onnx_output(ctx, 0), vkp__onnx_output(ctx, 1)};
  int32_t values[2];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit_multi(ctx, VKP_OP_TOP_K, 2, in, 3, a, 2, outs, values));
  for (int32_t i = 0; i < 2; ++i)
    if (outs[i]) VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}

vkp_status_t vkp__map_top_k(vkp__onnx_ctx_t *ctx) {
  int64_t k, axis, largest = 1, sorted = 1;
  if (ctx->opset >= 10) {
    if (vkp__onnx_attr(ctx, "k"))
      return VKP__ONNX_INVALID("from opset 10 TopK takes k as input 1 (K)");
    vkp__onnx_sym_t *ks = vkp__onnx_input(ctx, 1);
    if (ks && !ks->is_const) return vkp__map_top_k_runtime(ctx);
    VKP_RETURN_IF_ERROR(vkp__const_int_input(
        ctx, 1, "K",
        "the output shape depends on it, and vkpipe compiles static shapes", &k));
  } else {
    if (ctx->node->n_input > 1)
      return VKP__ONNX_INVALID("before opset 10 k is an attribute");
    if (!vkp__onnx_attr(ctx, "k"))
      return VKP__ONNX_INVALID("attribute 'k' is required");
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "k", 0, &k));
  }
  if (ctx->opset < 11 && (vkp__onnx_attr(ctx, "largest") || vkp__onnx_attr(ctx, "sorted")))
    return VKP__ONNX_INVALID("attributes 'largest' and 'sorted' need opset 11");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "largest", 1, &largest));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "sorted", 1, &sorted));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  vkp_attr_t a[4] = {vkp__onnx_a_int("k", k), vkp__onnx_a_int("axis", axis),
                     vkp__onnx_a_int("largest", largest != 0),
                     vkp__onnx_a_int("sorted", sorted != 0)};
  const char *outs[2] = {vkp__onnx_output(ctx, 0), vkp__onnx_output(ctx, 1)};
  int32_t values[2];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit_multi(ctx, VKP_OP_TOP_K, 1, &x, 4, a, 2, outs, values));
  for (int32_t i = 0; i < 2; ++i)
    if (outs[i]) VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}

vkp_status_t vkp__map_cum_sum(vkp__onnx_ctx_t *ctx) {
  int64_t axis = 0, exclusive, reverse;
  VKP_RETURN_IF_ERROR(vkp__const_int_input(
      ctx, 1, "axis",
      "vkpipe compiles each kernel for an axis known at import time", &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "exclusive", 0, &exclusive));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "reverse", 0, &reverse));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  vkp_attr_t a[3] = {vkp__onnx_a_int("axis", axis),
                     vkp__onnx_a_int("exclusive", exclusive != 0),
                     vkp__onnx_a_int("reverse", reverse != 0)};
  return vkp__onnx_emit_out(ctx, VKP_OP_CUM_SUM, 1, &x, 3, a);
}

// ---------------------------------------------------------------------------
// Data-dependent output shapes: NonZero, Unique

vkp_status_t vkp__map_non_zero(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  return vkp__onnx_emit_out(ctx, VKP_OP_NON_ZERO, 1, &x, 0, NULL);
}

// Unique(X) -> Y, indices, inverse_indices, counts: the IR computes all
// four (an omitted output gets an internal name).
vkp_status_t vkp__map_unique(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  int64_t sorted, axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "sorted", 1, &sorted));
  vkp_attr_t a[2] = {vkp__onnx_a_int("sorted", sorted != 0), {0}};
  int32_t n_attrs = 1;
  if (vkp__onnx_attr(ctx, "axis")) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
    a[n_attrs++] = vkp__onnx_a_int("axis", axis);
  }
  const char *outs[4];
  for (int32_t i = 0; i < 4; ++i) outs[i] = vkp__onnx_output(ctx, i);
  int32_t values[4];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit_multi(ctx, VKP_OP_UNIQUE, 1, &x, n_attrs, a, 4, outs, values));
  for (int32_t i = 0; i < 4; ++i)
    if (outs[i]) VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}

// The constant input 0 as a borrowed tensor view (for the op table's exact
// comparisons).
static vkp_status_t vkp__const_view(vkp__onnx_ctx_t *ctx, vkp_tensor_t *out) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 0);
  if (!s || !s->is_const) return VKP__ONNX_INVALID("input 0 is required");
  vkp_dtype_t dt;
  if (!vkp__onnx_type_to_dtype(s->constant.type, &dt))
    return VKP__ONNX_UNSUPPORTED("input '%s' has type %s", s->name,
                                 vkp__onnx_type_name(s->constant.type));
  return vkp_tensor_init_view(out, dt, s->constant.rank, s->constant.shape,
                              s->constant.data);
}

// The most entries of an index array the folders here build (256 MiB of
// int64, the bound onnx_fold.c puts on any folded tensor).
#define VKP__SELECT_FOLD_MAX_ENTRIES ((uint64_t)32 << 20)

// Binds output `i` of the current node to *t (consumed); an unnamed
// output is dropped.
static vkp_status_t vkp__bind_output(vkp__onnx_ctx_t *ctx, int32_t i,
                                     vkp__onnx_tensor_t *t) {
  const char *name = vkp__onnx_output(ctx, i);
  if (!name) {
    vkp__onnx_tensor_deinit(t);
    return NULL;
  }
  return vkp__onnx_bind_const(ctx, name, t);
}

vkp_status_t vkp__onnx_fold_non_zero(vkp__onnx_ctx_t *ctx) {
  vkp_tensor_t x;
  VKP_RETURN_IF_ERROR(vkp__const_view(ctx, &x));
  int64_t n = (int64_t)vkp_tensor_numel(&x), nnz = 0;
  bool is_float = vkp_dtype_is_float(x.dtype);
  for (int64_t i = 0; i < n; ++i)
    nnz += is_float ? vkp__get_f(&x, i) != 0.0 : vkp__get_i(&x, i) != 0;
  if ((uint64_t)nnz * (uint64_t)(x.rank ? x.rank : 1) > VKP__SELECT_FOLD_MAX_ENTRIES)
    return VKP__ONNX_UNSUPPORTED("NonZero of %lld elements is too large to fold",
                                 (long long)nnz);
  int64_t shape[2] = {x.rank, nnz};
  vkp__onnx_tensor_t y;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&y, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 2, shape));
  int64_t idx[VKP_MAX_RANK] = {0}, col = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool nonzero = is_float ? vkp__get_f(&x, i) != 0.0 : vkp__get_i(&x, i) != 0;
    if (nonzero) {
      for (int32_t d = 0; d < x.rank; ++d)
        vkp__onnx_tensor_set_i(&y, (size_t)(d * nnz + col), idx[d]);
      ++col;
    }
    vkp__next_index(x.rank, x.shape, idx);
  }
  return vkp__bind_output(ctx, 0, &y);
}

vkp_status_t vkp__onnx_fold_unique(vkp__onnx_ctx_t *ctx) {
  vkp_tensor_t x;
  VKP_RETURN_IF_ERROR(vkp__const_view(ctx, &x));
  int64_t sorted, axis = 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "sorted", 1, &sorted));
  bool has_axis = vkp__onnx_attr(ctx, "axis") != NULL;
  int64_t n = (int64_t)vkp_tensor_numel(&x);
  if (has_axis) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
    if (axis < -(int64_t)x.rank || axis >= x.rank)
      return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                               (long long)axis, (int)x.rank);
    if (axis < 0) axis += x.rank;
    n = x.shape[axis];
  }
  // Seven index arrays of n entries: bounded like any folded result.
  if ((uint64_t)n > VKP__SELECT_FOLD_MAX_ENTRIES)
    return VKP__ONNX_UNSUPPORTED("Unique over %lld slices is too large to fold",
                                 (long long)n);
  vkp__unique_t u;
  VKP_RETURN_IF_ERROR(vkp__unique_compute(&x, has_axis, (int32_t)axis, sorted != 0, &u));
  int64_t m = u.m;
  // Y: the unique slices; indices, inverse_indices, counts: int64.
  vkp__onnx_sym_t *xs = vkp__onnx_input(ctx, 0);
  int32_t y_rank = has_axis ? x.rank : 1;
  int64_t y_shape[VKP_MAX_RANK];
  if (has_axis) {
    memcpy(y_shape, x.shape, sizeof y_shape);
    y_shape[axis] = m;
  } else {
    y_shape[0] = m;
  }
  vkp__onnx_tensor_t out[4] = {{0}};
  int64_t lens[4] = {0, m, n, m};
  vkp_status_t st = vkp__onnx_tensor_alloc(&out[0], xs->constant.type, y_rank, y_shape);
  for (int i = 1; i < 4 && !st; ++i)
    st = vkp__onnx_tensor_alloc(&out[i], ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &lens[i]);
  if (!st) {
    size_t elem = vkp_dtype_size(x.dtype);
    for (int64_t g = 0; g < m; ++g) {
      for (int64_t o = 0; o < u.outer; ++o)
        memcpy((char *)out[0].data + (size_t)((o * m + g) * u.inner) * elem,
               (const char *)x.data + (size_t)((o * n + u.first[g]) * u.inner) * elem,
               (size_t)u.inner * elem);
      vkp__onnx_tensor_set_i(&out[1], (size_t)g, u.first[g]);
      vkp__onnx_tensor_set_i(&out[3], (size_t)g, u.count[g]);
    }
    for (int64_t j = 0; j < n; ++j) vkp__onnx_tensor_set_i(&out[2], (size_t)j, u.group[j]);
  }
  vkp__unique_free(&u);
  for (int32_t i = 0; i < 4; ++i) {
    if (st) vkp__onnx_tensor_deinit(&out[i]);
    else st = vkp__bind_output(ctx, i, &out[i]);
  }
  for (int32_t i = 0; i < 4; ++i) vkp__onnx_tensor_deinit(&out[i]);
  return st;
}
