// SPDX-License-Identifier: Apache-2.0
// graph/onnx_fold.c: import-time constant folding.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// Range, Cast, Reshape, Transpose, Gather (2-D indices), Squeeze, Slice
// (negative step), ConstantOfShape, Concat, integer Div, Unsqueeze, Mul,
// Size and Add on constants: all of it becomes one constant.
Test(onnx_fold, constant_expression_folds_to_one_constant, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("fold.onnx");
  cr_assert_eq(g->n_nodes, 1);
  cr_assert_eq(g->nodes[0].op, VKP_OP_ADD);
  onnx_run_and_compare(g, "fold", 0, 0);
  vkp_graph_destroy(g);
}

// Equal, Less, Greater, And, Or, Not, Where, Expand, Max, Min, Floor, Ceil.
Test(onnx_fold, comparisons_and_selection_fold, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("fold_select.onnx");
  cr_assert_eq(g->n_nodes, 1);
  onnx_run_and_compare(g, "fold_select", 0, 0);
  vkp_graph_destroy(g);
}

// The exporter's shape arithmetic (Shape, Gather, Unsqueeze, Concat) folds
// into the reshapes' attributes: only the math is left.
Test(onnx_fold, transformer_shape_arithmetic_folds, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("transformer.onnx");
  for (int32_t i = 0; i < g->n_nodes; ++i)
    cr_assert(g->nodes[i].op != VKP_OP_CONCAT && g->nodes[i].op != VKP_OP_SLICE &&
                  g->nodes[i].op != VKP_OP_UNSQUEEZE,
              "node '%s' (%s) should have folded away", g->nodes[i].name,
              vkp_op_name(g->nodes[i].op));
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 4);
  vkp_graph_destroy(g);
}
