// SPDX-License-Identifier: Apache-2.0
// graph/onnx_function.c: model-local functions inlined at import, against
// NumPy (models_function.py) on "ref" and "cpu": nested calls, attributes
// from the call or the op's default, a body at another opset, a call in an
// If branch; and the refusals, which name the node and the reason.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// Two calls of Block (each calling Swish): their bodies join the graph
// under "<call>/" names, once per call.
Test(onnx_function, nested_calls_with_attributes, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("function_nested.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_SIGMOID), 2);  // one Swish per call
  for (int32_t k = 0; k < g->n_nodes; ++k)
    if (g->nodes[k].op == VKP_OP_SIGMOID)
      cr_assert(strstr(g->nodes[k].name, "Block_") && strstr(g->nodes[k].name, "/Swish_"),
                "%s", g->nodes[k].name);
  onnx_run_and_compare(g, "function_nested", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "function_nested", "cpu", 1, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

Test(onnx_function, call_in_an_if_branch, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("function_in_branch.onnx");
  onnx_run_and_compare(g, "function_in_branch", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}


Test(onnx_function, refusals_name_the_reason, .timeout = 60) {
  onnx_expect_refused("function_recursive.onnx", VKP_STATUS_UNSUPPORTED,
                      "nested more than 16 deep", NULL);
  onnx_expect_refused("function_bad_arity.onnx", VKP_STATUS_INVALID_ARGUMENT,
                      "the call has 2 inputs and 1 outputs", NULL);
}
