// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the indexing family whose ONNX form is not exactly the IR
// op (Gather, GatherElements, GatherND, Scatter, ScatterElements and
// ScatterND map through `simple`): OneHot, whose depth must be known at
// import time because it sizes the result, and Compress, which becomes a
// gather of the positions its import-time condition keeps.
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// OneHot(indices, depth, values): depth (a one-element number, truncated)
// becomes the IR attribute; indices and values stay IR inputs.
vkp_status_t vkp__map_one_hot(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_tensor_t *depth_t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "depth (it sizes the result)",
                                            &depth_t));
  if (!depth_t) return VKP__ONNX_INVALID("input 1 (depth) is required");
  double depth;
  VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(depth_t, "depth", &depth));
  if (!(depth >= 1 && depth <= (double)INT32_MAX))
    return VKP__ONNX_INVALID("depth %g is not a positive count", depth);
  int32_t in[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &in[1]));
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  vkp_attr_t a[2] = {vkp__onnx_a_int("depth", (int64_t)depth),
                     vkp__onnx_a_int("axis", axis)};
  return vkp__onnx_emit_out(ctx, VKP_OP_ONE_HOT, 2, in, 2, a);
}

// Compress(input, condition[, axis]): the positions where the condition is
// true, gathered along `axis`, or from the flattened input when there is
// none. A condition shorter than the axis keeps nothing past its end
// (ONNX). A condition known at import time becomes a constant index list;
// one computed at run time becomes gather(x, reshape(non_zero(condition),
// [-1])), whose result is bounded by the condition's length.
vkp_status_t vkp__onnx_emit_compress(vkp__onnx_ctx_t *ctx, int32_t x, int32_t mask,
                                     int64_t axis) {
  int32_t nz, idx;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_NON_ZERO, 1, &mask, 0, NULL, NULL, &nz));
  int64_t minus_one = -1;
  vkp_attr_t ra = vkp__onnx_a_ints("shape", &minus_one, 1);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &nz, 1, &ra, NULL, &idx));
  int32_t in[2] = {x, idx};
  vkp_attr_t a = vkp__onnx_a_int("axis", axis);
  return vkp__onnx_emit_out(ctx, VKP_OP_GATHER, 2, in, 1, &a);
}

vkp_status_t vkp__map_compress(vkp__onnx_ctx_t *ctx) {
  vkp__onnx_sym_t *cs = vkp__onnx_input(ctx, 1);
  if (!cs) return VKP__ONNX_INVALID("input 1 (condition) is required");
  const vkp__onnx_tensor_t *cond = cs->is_const ? &cs->constant : NULL;
  int32_t cond_rank;
  int64_t cond_shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, cs, &cond_rank, cond_shape);
  if (cond_rank != 1) return VKP__ONNX_INVALID("condition has rank %d; 1", (int)cond_rank);
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank = xv->rank;
  int64_t xshape[VKP_MAX_RANK];
  memcpy(xshape, xv->shape, sizeof xshape);
  bool flat = !vkp__onnx_attr(ctx, "axis");
  int64_t axis = 0;
  if (flat) {
    int64_t numel = 1;
    for (int32_t d = 0; d < rank; ++d) numel *= xshape[d];
    vkp_attr_t a = vkp__onnx_a_ints("shape", &numel, 1);
    int32_t flat_x;
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &x, 1, &a, NULL, &flat_x));
    x = flat_x;
    xshape[0] = numel;
    rank = 1;
  } else {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
    if (axis < -(int64_t)rank || axis >= rank)
      return VKP__ONNX_INVALID("axis %lld out of range for rank %d", (long long)axis,
                               (int)rank);
    if (axis < 0) axis += rank;
  }
  size_t n = (size_t)cond_shape[0];
  if ((int64_t)n > xshape[axis])
    return VKP__ONNX_INVALID("condition has %zu entries; the axis only %lld", n,
                             (long long)xshape[axis]);
  if (!cond) {
    int32_t c;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &c));
    return vkp__onnx_emit_compress(ctx, x, c, axis);
  }
  int64_t kept = 0;
  for (size_t i = 0; i < n; ++i) kept += vkp__onnx_tensor_get_i(cond, i) != 0;
  vkp__onnx_tensor_t idx;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&idx, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &kept));
  for (size_t i = 0, j = 0; i < n; ++i)
    if (vkp__onnx_tensor_get_i(cond, i) != 0) vkp__onnx_tensor_set_i(&idx, j++, (int64_t)i);
  int32_t in[2] = {x, -1};
  vkp_status_t st = vkp__onnx_add_const(ctx, &idx, &in[1]);
  vkp__onnx_tensor_deinit(&idx);
  VKP_RETURN_IF_ERROR(st);
  vkp_attr_t a = vkp__onnx_a_int("axis", axis);
  return vkp__onnx_emit_out(ctx, VKP_OP_GATHER, 2, in, 1, &a);
}
