// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the elementwise family whose ONNX form is not exactly the
// IR op (the rest map through `simple`): Clip, whose bounds moved from
// attributes to optional inputs in opset 11, and Dropout, an identity at
// inference.
#include <float.h>
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// Masks beyond this many bytes are refused rather than held as constants.
#define VKP__MAX_MASK_BYTES ((size_t)256 << 20)

// Clip: attributes before opset 11, optional inputs from 11. A constant
// bound of a float X becomes the IR attribute (what the code generators
// fold into the expression); a runtime bound, or any bound of an integer X
// (exact, whatever its size), stays an IR input.
vkp_status_t vkp__map_clip(vkp__onnx_ctx_t *ctx) {
  int32_t in[3] = {-1, -1, -1}, n_in = 1;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  double bound[2] = {-FLT_MAX, FLT_MAX};
  static const char *const names[2] = {"min", "max"};
  if (ctx->opset < 11) {
    for (int i = 0; i < 2; ++i)
      VKP_RETURN_IF_ERROR(
          vkp__onnx_attr_float(ctx, names[i], bound[i], &bound[i]));
  } else {
    if (vkp__onnx_attr(ctx, "min") || vkp__onnx_attr(ctx, "max"))
      return VKP__ONNX_INVALID("from opset 11 min and max are inputs");
    bool is_float = vkp_dtype_is_float(vkp__onnx_value(ctx, in[0])->dtype);
    for (int32_t i = 1; i < 3; ++i) {
      vkp__onnx_sym_t *sym = vkp__onnx_input(ctx, i);
      if (!sym) continue;
      if (sym->is_const && is_float) {
        VKP_RETURN_IF_ERROR(
            vkp__onnx_const_scalar(&sym->constant, names[i - 1], &bound[i - 1]));
        continue;
      }
      VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, sym, &in[i]));
      n_in = i + 1;
    }
  }
  vkp_attr_t a[2] = {vkp__onnx_a_float("min", bound[0]),
                     vkp__onnx_a_float("max", bound[1])};
  return vkp__onnx_emit_out(ctx, VKP_OP_CLIP, n_in, in, 2, a);
}

// The optional mask output of an identity Dropout: all true, X's shape.
static vkp_status_t vkp__bind_mask(vkp__onnx_ctx_t *ctx, const char *name,
                                   const vkp__onnx_sym_t *x) {
  if (ctx->opset < 10)
    return VKP__ONNX_UNSUPPORTED("the mask output before opset 10 (it has X's "
                                 "type there; bool from 10)");
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, x, &rank, shape);
  size_t bytes;
  if (!vkp_shape_numel(rank, shape, 1, &bytes) || bytes > VKP__MAX_MASK_BYTES)
    return VKP__ONNX_UNSUPPORTED("the mask output of X '%s' is too large to "
                                 "hold as a constant",
                                 x->name);
  vkp__onnx_tensor_t mask;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
      &mask, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, rank, shape));
  memset(mask.data, 1, mask.nbytes);
  return vkp__onnx_bind_const(ctx, name, &mask);
}

// Dropout is an identity (with an all-true mask) unless it drops: in
// training mode with a ratio other than 0, where the result is random.
// From opset 12 both are inputs; either may be a runtime value as long as
// the other settles it (training_mode false, or ratio 0).
vkp_status_t vkp__map_dropout(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 2));
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (!x) return VKP__ONNX_INVALID("input 0 is required");
  if (ctx->opset >= 12) {
    vkp__onnx_sym_t *ratio = vkp__onnx_input(ctx, 1);
    vkp__onnx_sym_t *training = vkp__onnx_input(ctx, 2);
    bool inference = !training || (training->is_const &&
                                   vkp__onnx_tensor_numel(&training->constant) == 1 &&
                                   !vkp__onnx_tensor_get_i(&training->constant, 0));
    double r = 0.5;  // the default ratio
    if (ratio && ratio->is_const)
      VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(&ratio->constant, "ratio", &r));
    if (!inference && (r != 0.0 || (ratio && !ratio->is_const)))
      return VKP__ONNX_UNSUPPORTED(
          "training_mode is %s and ratio is %s: the result would be random "
          "(vkpipe runs Dropout as the identity it is at inference)",
          training->is_const ? "true" : "a runtime value",
          ratio && !ratio->is_const ? "a runtime value" : "not 0");
  }
  const char *mask = vkp__onnx_output(ctx, 1);
  if (mask) VKP_RETURN_IF_ERROR(vkp__bind_mask(ctx, mask, x));
  return vkp__onnx_bind_alias(ctx, vkp__onnx_output(ctx, 0), x);
}
