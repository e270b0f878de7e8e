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
  int32_t in[9], n_in;
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
  int32_t in[9], n_in;
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
