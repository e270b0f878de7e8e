// SPDX-License-Identifier: Apache-2.0
// graph/onnx_fuse.c: exporter-expanded LayerNorm and GELU recognised.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "onnx/onnx_test_util.h"
#include "support/test_support.h"

// A transformer encoder layer as PyTorch exports it (MatMul, Add, Softmax,
// Transpose, Reshape, ReduceMean, Sub, Pow, Sqrt, Div, Erf, Mul), against
// NumPy.
Test(onnx_fuse, transformer_layer_norm_and_gelu, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("transformer.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GELU), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MEAN), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ERF), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_POW), 0);
  onnx_run_and_compare(g, "transformer", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// The same pattern over a middle axis: not what layer_norm computes, so the
// nodes import one by one and still match.
Test(onnx_fuse, normalisation_over_a_middle_axis_is_not_fused, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("ln_middle_axis.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MEAN), 2);
  onnx_run_and_compare(g, "ln_middle_axis", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}
