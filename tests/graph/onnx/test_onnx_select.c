// SPDX-License-Identifier: Apache-2.0
// graph/onnx_select.c: TopK, ArgMax, ArgMin and CumSum across opsets,
// NonZero and Unique folded on constants, and the run-time forms refused
// with their reasons (a CumSum axis), against NumPy
// (models_select.py) on "ref" and "cpu".
// The ONNX node tests cover each op's attributes further.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// Opset 9: TopK's k attribute; ArgMax and ArgMin with their defaults; ties
// resolved toward the lower index.
Test(onnx_select, opset9_attribute_k, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("select_opset9.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_TOP_K), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ARG_MAX), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ARG_MIN), 1);
  onnx_run_and_compare(g, "select_opset9", 0, 0);
  onnx_run_and_compare_on(g, "select_opset9", "cpu", 1, 0, 0);
  vkp_graph_destroy(g);
}

// Opset 13: a constant K (Indices unused), largest 0 over a negative axis,
// select_last_index, CumSum with a scalar int32 and a 1-D int64 axis,
// exclusive and reverse.
Test(onnx_select, opset13_constant_inputs, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("select_opset13.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_TOP_K), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_CUM_SUM), 2);
  onnx_run_and_compare(g, "select_opset13", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "select_opset13", "cpu", 1, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Rows of 200 and 160 with K of 6 and 7: the C kernel's one-pass selection
// (K * 16 <= n) rather than its sort, with ties, NaNs (the largest value),
// largest and smallest, over the last axis and the first; against NumPy
// on "ref" and on "cpu".
Test(onnx_select, top_k_long_rows, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("select_topk_long.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_TOP_K), 2);
  onnx_run_and_compare(g, "select_topk_long", 0, 0);
  onnx_run_and_compare_on(g, "select_topk_long", "cpu", 1, 0, 0);
  vkp_graph_destroy(g);
}

// NonZero and Unique on constants become constants at import: only the
// run-time arithmetic is left.
Test(onnx_select, non_zero_and_unique_fold, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("select_fold.onnx");
  for (int32_t i = 0; i < g->n_nodes; ++i)
    cr_assert(g->nodes[i].op == VKP_OP_ADD || g->nodes[i].op == VKP_OP_MUL,
              "node '%s' (%s) left", g->nodes[i].name, vkp_op_name(g->nodes[i].op));
  onnx_run_and_compare(g, "select_fold", 0, 0);
  vkp_graph_destroy(g);
}

// CumSum's axis computed at run time: an error naming the node and why.
// (TopK with a run-time K, NonZero and Unique on run-time data run:
// test_onnx_dynamic.c.)
Test(onnx_select, runtime_forms_are_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "select_runtime.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "axis (input 1, 'ax') is computed at run time"), "%s", msg);
  vkp_status_free(st);
}
