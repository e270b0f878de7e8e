// SPDX-License-Identifier: Apache-2.0
// graph/onnx_signal.c: an audio front end (HannWindow and MelWeightMatrix
// folded, STFT, magnitude, Log, Conv1d, a log-mel MatMul), DFT at opset 20
// with its axis and dft_length inputs, Det and MaxUnpool after a MaxPool's
// indices, the window functions with periodic 0 and output_datatype double,
// against numpy.fft and numpy.linalg (models_signal.py) on "ref"
// and "cpu"; a run-time dft_length refused with its reason.
// The ONNX node tests cover each op's attributes further.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// The window and the mel filters are constants after import: only the
// transforms and the arithmetic run.
Test(onnx_signal, audio_frontend, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("signal_audio_frontend.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_STFT), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_DFT), 0);
  onnx_run_and_compare(g, "signal_audio_frontend", 1e-4, 1e-4);
  onnx_run_and_compare_on(g, "signal_audio_frontend", "cpu", 1, 1e-4, 1e-4);
  onnx_run_and_compare_on(g, "signal_audio_frontend", "cpu", 3, 1e-4, 1e-4);
  vkp_graph_destroy(g);
}

Test(onnx_signal, dft_opset20_inputs, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("signal_dft_opset20.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_DFT), 2);
  onnx_run_and_compare(g, "signal_dft_opset20", 1e-5, 1e-5);
  onnx_run_and_compare_on(g, "signal_dft_opset20", "cpu", 1, 1e-5, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_signal, det_and_max_unpool, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("signal_det_unpool.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_DET), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_MAX_UNPOOL), 1);
  onnx_run_and_compare(g, "signal_det_unpool", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "signal_det_unpool", "cpu", 1, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// The symmetric windows and output_datatype double, folded: only the Muls
// remain (float64, ref).
Test(onnx_signal, window_functions_fold, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("signal_windows.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_MUL), 3);
  cr_assert_eq(g->n_nodes, 3);
  onnx_run_and_compare(g, "signal_windows", 1e-12, 1e-12);
  vkp_graph_destroy(g);
}

Test(onnx_signal, runtime_dft_length_is_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "signal_runtime.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "dft_length (input 1, 'len') is computed at run time"), "%s", msg);
  vkp_status_free(st);
}
