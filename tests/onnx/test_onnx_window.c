// SPDX-License-Identifier: Apache-2.0
// graph/onnx_ops.c's window mappers over 1 to 3 spatial dims: small
// models (gen_models.py models_window.py) against NumPy on "ref", "cpu" and,
// for the 1-D and 2-D ones, "vulkan" (validation on). The node tests and
// tests/ref's cases cover each op's attributes further.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "onnx/onnx_test_util.h"
#include "support/test_support.h"

// Conv1d, BatchNorm1d, MaxPool1d, a grouped dilated SAME_UPPER Conv1d,
// AvgPool1d: imported as 2-D ops over a unit height, the BatchNormalization
// folded into the first convolution.
Test(onnx_window, audio_convnet_1d, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("window_audio_1d.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_MAX_POOL2D), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_AVG_POOL2D), 1);
  onnx_run_and_compare(g, "window_audio_1d", 1e-5, 1e-5);
  onnx_run_and_compare_on(g, "window_audio_1d", "cpu", 2, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "window_audio_1d", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Encoder, MaxPool, a stride-2 ConvTranspose, skip Concat, decoder.
Test(onnx_window, unet_with_conv_transpose, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("window_unet.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV_TRANSPOSE), 1);
  onnx_run_and_compare(g, "window_unet", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "window_unet", "cpu", 2, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "window_unet", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// 3-D Conv, MaxPool and ConvTranspose (output_shape: output_padding at
// import), LpPool, GlobalMaxPool (a reduce_max) and GlobalLpPool: host
// targets (the Vulkan kernels take 2 spatial dims).
Test(onnx_window, volume_and_lp_pools, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("window_volume_pools.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LP_POOL), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MAX), 1);
  onnx_run_and_compare(g, "window_volume_pools", 1e-5, 1e-5);
  onnx_run_and_compare_on(g, "window_volume_pools", "cpu", 2, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}
