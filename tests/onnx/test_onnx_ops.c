// SPDX-License-Identifier: Apache-2.0
// graph/onnx_ops.c: ONNX ops to IR ops with each opset's attribute
// semantics, checked against NumPy (gen_models.py) on "ref". The ONNX node
// tests (ctest onnx_conformance_ref) cover every op's attributes further.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "onnx/onnx_test_util.h"
#include "support/test_support.h"

// Conv, BatchNormalization, Relu, MaxPool, Add, GlobalAveragePool, Flatten,
// Gemm, as PyTorch exports a small CNN (plus Dropout and Identity).
Test(onnx_ops, cnn_matches_numpy, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("cnn.onnx");
  // Both Conv -> BatchNormalization pairs fold; the third BatchNormalization
  // follows an Add and stays. Dropout and Identity disappear.
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_IDENTITY), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GLOBAL_AVG_POOL), 1);
  onnx_run_and_compare(g, "cnn", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_ops, softmax_axis_before_and_after_opset13, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("softmax_opset11.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 2);  // coerced to 2-D
  onnx_run_and_compare(g, "softmax_opset11", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  g = onnx_load_model("softmax_opset13.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 0);
  onnx_run_and_compare(g, "softmax_opset13", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Slice, Clip, Squeeze, Unsqueeze, Split and ReduceSum with attributes.
Test(onnx_ops, opset9_parameters_are_attributes, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("opset9.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_SLICE), 3);  // one, and two from Split
  onnx_run_and_compare(g, "opset9", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}
