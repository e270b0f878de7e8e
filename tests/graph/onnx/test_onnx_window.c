// SPDX-License-Identifier: Apache-2.0
// graph/onnx_ops.c's window mappers over 1 to 3 spatial dims: small
// models (gen_models.py models_window.py) against NumPy on "ref", "cpu" and
// "vulkan" (validation on). The node tests and
// tests/runtime/ref's cases cover each op's attributes further.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
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
// import), LpPool, GlobalMaxPool (a reduce_max) and GlobalLpPool, on every
// target.
Test(onnx_window, volume_and_lp_pools, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("window_volume_pools.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LP_POOL), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MAX), 1);
  onnx_run_and_compare(g, "window_volume_pools", 1e-5, 1e-5);
  onnx_run_and_compare_on(g, "window_volume_pools", "cpu", 2, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "window_volume_pools", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

static void expect_refused(const char *file, vkp_status_code_t code, const char *text) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g, "%s imported", file);
  cr_assert(vkp_status_is(st, code), "%s: %s", file, vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), text), "%s: %s", file, vkp_status_message(st));
  vkp_status_free(st);
}

// Bad window models are refused with a reason naming the problem.
Test(onnx_window, refused_with_reasons, .timeout = 60) {
  expect_refused("window_bad_rank6.onnx", VKP_STATUS_UNSUPPORTED,
                 "windows over 1 to 3 spatial dims");
  expect_refused("window_bad_output_shape.onnx", VKP_STATUS_INVALID_ARGUMENT,
                 "'output_shape' has 3 entries");
  expect_refused("window_bad_channels.onnx", VKP_STATUS_INVALID_ARGUMENT,
                 "input has 3 channels");
}
