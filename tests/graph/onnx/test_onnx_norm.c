// SPDX-License-Identifier: Apache-2.0
// graph/onnx_norm.c: the reduction, softmax-family and normalisation
// mappers across opsets, against NumPy (gen_models.py gen_norm_opsets) on
// "ref". The ONNX node tests cover each op's attributes further.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// Opset 11: LogSoftmax and Hardmax coerce to 2-D at axis 1 (a reshape on
// each side), ReduceL2 and ReduceMax take axes as attributes.
Test(onnx_norm, opset11_coercion_and_attribute_axes, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("norm_opset11.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LOG_SOFTMAX), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_HARDMAX), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 4);
  onnx_run_and_compare(g, "norm_opset11", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Opset 18: GroupNormalization with a per-group constant scale (expanded
// at import) and a per-group runtime bias (expanded by IR nodes);
// BatchNormalization of 1-D data; ReduceProd with an axes input;
// ReduceLogSumExp with noop_with_empty_axes (no node at all).
Test(onnx_norm, opset18_group_norm_batch_norm_1d_axes_inputs, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("norm_opset18.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GROUP_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_LOG_SUM_EXP), 0);
  onnx_run_and_compare(g, "norm_opset18", 1e-4, 1e-5);
  vkp_graph_destroy(g);
  g = onnx_load_model("norm_opset18b.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LP_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_MEAN_VARIANCE_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_LRN), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_INSTANCE_NORM), 1);
  onnx_run_and_compare(g, "norm_opset18b", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Opset 21: GroupNormalization per channel; an empty axes input reduces
// every axis.
Test(onnx_norm, opset21_group_norm_and_empty_axes, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("norm_opset21.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GROUP_NORM), 1);
  onnx_run_and_compare(g, "norm_opset21", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Axes computed at run time decide the output shape: refused, saying so.
Test(onnx_norm, runtime_axes_are_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "reduce_runtime_axes.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "axes (input 1, 'axes') is computed at run "
                                           "time: the output shape depends on it"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
}
