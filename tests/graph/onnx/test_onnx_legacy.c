// SPDX-License-Identifier: Apache-2.0
// graph/onnx_legacy.c: models of default-domain opsets 1 to 6 in the forms
// the ONNX node tests do not cover (models_legacy.py), checked against NumPy
// on "ref", "cpu" and "vulkan" (validation on); and the legacy forms that cannot be mapped, refused
// naming the node, the attribute and the opset.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"

// Broadcast at an axis (constant and run-time B), Conv -> BatchNormalization
// with is_test and consumed_inputs, per-channel PRelu, Reshape's `shape`
// attribute, Gemm's `broadcast`, Dropout's is_test.
Test(onnx_legacy, caffe2_cnn_at_opset4, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("legacy_caffe2_cnn.onnx");
  // The first BatchNormalization folds into the Conv; the second follows an
  // Add and stays. Dropout disappears.
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 1);
  // The run-time B of the second Add is unsqueezed to [C, 1, 1].
  cr_assert_eq(onnx_count_op(g, VKP_OP_UNSQUEEZE), 1);
  onnx_run_and_compare(g, "legacy_caffe2_cnn", 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "legacy_caffe2_cnn", "cpu", 1, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "legacy_caffe2_cnn", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Pad's paddings, Split's sizes as an input, Concat without axis, Tile-1,
// Cast to a type name, Upsample-1, Selu-1's defaults.
Test(onnx_legacy, opset1_forms, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("legacy_opset1.onnx");
  onnx_run_and_compare(g, "legacy_opset1", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_opset1", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_opset1", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_legacy, batch_norm_spatial0, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("legacy_bn_spatial0.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 0);
  onnx_run_and_compare(g, "legacy_bn_spatial0", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_bn_spatial0", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_bn_spatial0", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// ImageScaler, Affine, ScaledTanh, ParametricSoftplus, Scale and Crop (both
// forms) at opset 8.
Test(onnx_legacy, experimental_ops, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("legacy_experimental.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_SLICE), 2);
  onnx_run_and_compare(g, "legacy_experimental", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_experimental", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "legacy_experimental", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// MeanVarianceNormalization-1's per-channel default and across_channels.
Test(onnx_legacy, mean_variance_norm_opset1_form, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("legacy_mvn1.onnx");
  onnx_run_and_compare(g, "legacy_mvn1", 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "legacy_mvn1", "cpu", 1, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "legacy_mvn1", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// No opset_import at all (IR version 2): opset 1.
Test(onnx_legacy, no_opset_import_is_opset1, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("legacy_no_opset_import.onnx");
  onnx_run_and_compare(g, "legacy_no_opset_import", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

Test(onnx_legacy, unmappable_forms_are_refused, .timeout = 60) {
  onnx_expect_refused("legacy_bad_broadcast0.onnx", VKP_STATUS_OK,
                      "node 'shapes_differ' (Add): broadcast=0 (opset 6) needs A and "
                      "B of one shape", NULL);
  onnx_expect_refused("legacy_bad_axis.onnx", VKP_STATUS_OK,
                      "node 'axis_too_far' (Mul): broadcast axis 2 (opset 4): B of "
                      "rank 2 does not fit in A of rank 3", NULL);
  onnx_expect_refused("legacy_bad_cast.onnx", VKP_STATUS_OK,
                      "node 'bad_type' (Cast): attribute 'to' is 'REAL': not a "
                      "TensorProto DataType name (opset 3)", NULL);
  onnx_expect_refused("legacy_bad_experimental.onnx", VKP_STATUS_OK,
                      "node 'too_new' (ImageScaler): ImageScaler is an experimental "
                      "op of opsets 1 to 9 (removed in opset 10; the model's is 10)", NULL);
  onnx_expect_refused("legacy_no_default_domain.onnx", VKP_STATUS_OK,
                      "node 'relu' (Relu): the model imports no opset of the default "
                      "domain", NULL);
}

// Every allocation of importing the legacy models (the node copies, the
// symbols bound for inputs, the emitted unsqueezes) may fail: each failure
// is an error, and nothing leaks.
Test(onnx_legacy, allocation_failures_are_reported, .timeout = 120) {
  onnx_walk_import_allocations("legacy_caffe2_cnn.onnx");
  onnx_walk_import_allocations("legacy_opset1.onnx");
}
