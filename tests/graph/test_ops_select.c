// SPDX-License-Identifier: Apache-2.0
// graph/op_select.c: the canonical forms validation writes for arg_max,
// arg_min, top_k and cum_sum, and errors that name the node and the
// attribute or input at fault instead of aborting. Their results are
// checked against NumPy in tests/runtime/ref (cases_select.py).
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

// A graph with input x [2, 5, 3] of `dt` and node "n" of `op` on it, with
// outputs y0[, y1].
static vkp_graph_t *select_graph(vkp_op_t op, vkp_dtype_t dt, const int64_t *shape,
                                 int32_t rank, int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g = g_new("select");
  g_in(g, "x", dt, rank, shape);
  const char *in[1] = {"x"}, *outs[2] = {"y0", "y1"};
  int32_t n_out = op == VKP_OP_TOP_K ? 2 : 1;
  VKP_TEST_OK(vkp_graph_add_node(g, "n", op, 1, in, n_out, outs, n_attrs, attrs, NULL));
  for (int32_t i = 0; i < n_out; ++i) g_out(g, outs[i]);
  return g;
}

Test(ops_select, arg_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {at_i("axis", -2), at_i("keepdims", 7)};
  vkp_graph_t *g = select_graph(VKP_OP_ARG_MIN, VKP_DTYPE_UINT16, SH(2, 5, 3), 3, 2, a);
  g_validate(g);
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 1);
  cr_assert_eq(vkp_node_int(n, "keepdims"), 1);
  cr_assert_eq(vkp_node_int(n, "select_last_index"), 0);
  const vkp_value_t *y = g_value(g, "y0");
  cr_assert_eq(y->dtype, VKP_DTYPE_INT64);
  cr_assert(y->rank == 3 && y->shape[0] == 2 && y->shape[1] == 1 && y->shape[2] == 3);
  vkp_graph_destroy(g);
  // Defaults: axis 0, dropped with keepdims 0.
  vkp_attr_t k0 = at_i("keepdims", 0);
  g = select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, SH(2, 5, 3), 3, 1, &k0);
  g_validate(g);
  y = g_value(g, "y0");
  cr_assert(y->rank == 2 && y->shape[0] == 5 && y->shape[1] == 3);
  vkp_graph_destroy(g);
}

Test(ops_select, top_k_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {at_i("k", 4), at_i("largest", 0)};
  vkp_graph_t *g = select_graph(VKP_OP_TOP_K, VKP_DTYPE_INT8, SH(2, 5, 6), 3, 2, a);
  g_validate(g);
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 2);  // -1, non-negative
  cr_assert_eq(vkp_node_int(n, "sorted"), 1);
  const vkp_value_t *v = g_value(g, "y0"), *i = g_value(g, "y1");
  cr_assert_eq(v->dtype, VKP_DTYPE_INT8);
  cr_assert_eq(i->dtype, VKP_DTYPE_INT64);
  cr_assert(v->rank == 3 && v->shape[2] == 4 && i->shape[2] == 4 && i->shape[1] == 5);
  vkp_graph_destroy(g);
}

Test(ops_select, cum_sum_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {at_i("axis", -3), at_i("reverse", 2)};
  vkp_graph_t *g = select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_FLOAT64, SH(2, 5, 3), 3, 2, a);
  g_validate(g);
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 0);
  cr_assert_eq(vkp_node_int(n, "reverse"), 1);
  cr_assert_eq(vkp_node_int(n, "exclusive"), 0);
  cr_assert_eq(g_value(g, "y0")->dtype, VKP_DTYPE_FLOAT64);
  vkp_graph_destroy(g);
}

Test(ops_select, bad_attributes_and_inputs_are_named, .timeout = 30) {
  vkp_attr_t ax = at_i("axis", 3);
  g_expect_invalid(select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, SH(2, 5, 3), 3, 1, &ax), VKP_STATUS_INVALID_ARGUMENT, "n", "axis 3 out of range for rank 3", NULL);
  vkp_attr_t a1 = at_i("axis", 1);
  g_expect_invalid(select_graph(VKP_OP_ARG_MIN, VKP_DTYPE_FLOAT32, SH(2, 0, 3), 3, 1, &a1), VKP_STATUS_INVALID_ARGUMENT, "n", "axis 1 of input 'x' has length 0", NULL);
  g_expect_invalid(select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, NULL, 0, 0, NULL), VKP_STATUS_INVALID_ARGUMENT, "n", "input 'x' is a scalar", NULL);
  vkp_attr_t big = at_i("k", 7);
  g_expect_invalid(select_graph(VKP_OP_TOP_K, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 1, &big), VKP_STATUS_INVALID_ARGUMENT, "n", "k 7 out of range: axis 2 of input 'x' has 6", NULL);
  g_expect_invalid(select_graph(VKP_OP_TOP_K, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 0, NULL), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'k' is required", NULL);
  g_expect_invalid(select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 0, NULL), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'axis' is required", NULL);
  // bool is not a numeric dtype: refused naming the input.
  g_expect_invalid(select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_BOOL, SH(4), 1, 1, (vkp_attr_t[]){at_i("axis", 0)}), VKP_STATUS_UNSUPPORTED, "n", "input 'x' has dtype bool", NULL);
}
