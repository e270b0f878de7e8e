// SPDX-License-Identifier: Apache-2.0
// ONNX SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss -> the IR ops
// of the same names (graph/op_loss.c): same inputs and outputs, `reduction`
// and the optional `ignore_index`.
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

vkp_status_t vkp__map_loss(vkp__onnx_ctx_t *ctx) {
  bool sce = strcmp(ctx->node->op_type, "SoftmaxCrossEntropyLoss") == 0;
  vkp_op_t op = sce ? VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS : VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS;
  int32_t max_out = sce ? 2 : 1;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, max_out));
  char reduction[16];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_string(ctx, "reduction", "mean", reduction, sizeof reduction));
  vkp_attr_t a[2] = {{.name = "reduction", .kind = VKP_ATTR_STRING, .s = reduction}};
  int32_t n_attrs = 1;
  if (vkp__onnx_attr(ctx, "ignore_index")) {
    int64_t ignore;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "ignore_index", 0, &ignore));
    a[n_attrs++] = vkp__onnx_a_int("ignore_index", ignore);
  }
  int32_t in[3] = {-1, -1, -1}, n_in = 2;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  if (vkp__onnx_input(ctx, 2)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &in[2]));
    n_in = 3;
  }
  const char *outs[2] = {vkp__onnx_output(ctx, 0), sce ? vkp__onnx_output(ctx, 1) : NULL};
  int32_t n_out = outs[1] ? 2 : 1, values[2];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit_multi(ctx, op, n_in, in, n_attrs, a, n_out, outs, values));
  for (int32_t i = 0; i < n_out; ++i)
    VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}
