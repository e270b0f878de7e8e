// SPDX-License-Identifier: Apache-2.0
// graph/op_select.c: the canonical forms validation writes for arg_max,
// arg_min, top_k and cum_sum, and errors that name the node and the
// attribute or input at fault instead of aborting. Their results are
// checked against NumPy in tests/runtime/ref (cases_select.py).
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

static vkp_attr_t int_attr(const char *name, int64_t v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INT, .i = v};
}

// A graph with input x [2, 5, 3] of `dt` and node "n" of `op` on it, with
// outputs y0[, y1].
static vkp_graph_t *select_graph(vkp_op_t op, vkp_dtype_t dt, const int64_t *shape,
                                 int32_t rank, int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("select", &g));
  VKP_TEST_OK(vkp_graph_add_input(g, "x", dt, rank, shape, NULL));
  const char *in[1] = {"x"}, *outs[2] = {"y0", "y1"};
  int32_t n_out = op == VKP_OP_TOP_K ? 2 : 1;
  VKP_TEST_OK(vkp_graph_add_node(g, "n", op, 1, in, n_out, outs, n_attrs, attrs, NULL));
  for (int32_t i = 0; i < n_out; ++i) VKP_TEST_OK(vkp_graph_mark_output(g, outs[i]));
  return g;
}

static const vkp_value_t *value(const vkp_graph_t *g, const char *name) {
  int32_t v = vkp_graph_find_value(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  return &g->values[v];
}

// Validation fails with `code` and a message naming the node and `want`.
static void expect_invalid(vkp_graph_t *g, vkp_status_code_t code, const char *want) {
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert(vkp_status_is(st, code), "%s", st ? vkp_status_message(st) : "validated");
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "'n'"), "names the node: %s", msg);
  cr_assert(strstr(msg, want), "'%s' in: %s", want, msg);
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

Test(ops_select, arg_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {int_attr("axis", -2), int_attr("keepdims", 7)};
  vkp_graph_t *g = select_graph(VKP_OP_ARG_MIN, VKP_DTYPE_UINT16, SH(2, 5, 3), 3, 2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 1);
  cr_assert_eq(vkp_node_int(n, "keepdims"), 1);
  cr_assert_eq(vkp_node_int(n, "select_last_index"), 0);
  const vkp_value_t *y = value(g, "y0");
  cr_assert_eq(y->dtype, VKP_DTYPE_INT64);
  cr_assert(y->rank == 3 && y->shape[0] == 2 && y->shape[1] == 1 && y->shape[2] == 3);
  vkp_graph_destroy(g);
  // Defaults: axis 0, dropped with keepdims 0.
  vkp_attr_t k0 = int_attr("keepdims", 0);
  g = select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, SH(2, 5, 3), 3, 1, &k0);
  VKP_TEST_OK(vkp_graph_validate(g));
  y = value(g, "y0");
  cr_assert(y->rank == 2 && y->shape[0] == 5 && y->shape[1] == 3);
  vkp_graph_destroy(g);
}

Test(ops_select, top_k_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {int_attr("k", 4), int_attr("largest", 0)};
  vkp_graph_t *g = select_graph(VKP_OP_TOP_K, VKP_DTYPE_INT8, SH(2, 5, 6), 3, 2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 2);  // -1, non-negative
  cr_assert_eq(vkp_node_int(n, "sorted"), 1);
  const vkp_value_t *v = value(g, "y0"), *i = value(g, "y1");
  cr_assert_eq(v->dtype, VKP_DTYPE_INT8);
  cr_assert_eq(i->dtype, VKP_DTYPE_INT64);
  cr_assert(v->rank == 3 && v->shape[2] == 4 && i->shape[2] == 4 && i->shape[1] == 5);
  vkp_graph_destroy(g);
}

Test(ops_select, cum_sum_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {int_attr("axis", -3), int_attr("reverse", 2)};
  vkp_graph_t *g = select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_FLOAT64, SH(2, 5, 3), 3, 2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "axis"), 0);
  cr_assert_eq(vkp_node_int(n, "reverse"), 1);
  cr_assert_eq(vkp_node_int(n, "exclusive"), 0);
  cr_assert_eq(value(g, "y0")->dtype, VKP_DTYPE_FLOAT64);
  vkp_graph_destroy(g);
}

Test(ops_select, bad_attributes_and_inputs_are_named, .timeout = 30) {
  vkp_attr_t ax = int_attr("axis", 3);
  expect_invalid(select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, SH(2, 5, 3), 3, 1, &ax),
                 VKP_STATUS_INVALID_ARGUMENT, "axis 3 out of range for rank 3");
  vkp_attr_t a1 = int_attr("axis", 1);
  expect_invalid(select_graph(VKP_OP_ARG_MIN, VKP_DTYPE_FLOAT32, SH(2, 0, 3), 3, 1, &a1),
                 VKP_STATUS_INVALID_ARGUMENT, "axis 1 of input 'x' has length 0");
  expect_invalid(select_graph(VKP_OP_ARG_MAX, VKP_DTYPE_FLOAT32, NULL, 0, 0, NULL),
                 VKP_STATUS_INVALID_ARGUMENT, "input 'x' is a scalar");
  vkp_attr_t big = int_attr("k", 7);
  expect_invalid(select_graph(VKP_OP_TOP_K, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 1, &big),
                 VKP_STATUS_INVALID_ARGUMENT, "k 7 out of range: axis 2 of input 'x' has 6");
  expect_invalid(select_graph(VKP_OP_TOP_K, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 0, NULL),
                 VKP_STATUS_INVALID_ARGUMENT, "attribute 'k' is required");
  expect_invalid(select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_FLOAT32, SH(2, 5, 6), 3, 0, NULL),
                 VKP_STATUS_INVALID_ARGUMENT, "attribute 'axis' is required");
  // bool is not a numeric dtype: refused naming the input.
  expect_invalid(select_graph(VKP_OP_CUM_SUM, VKP_DTYPE_BOOL, SH(4), 1, 1,
                              (vkp_attr_t[]){int_attr("axis", 0)}),
                 VKP_STATUS_UNSUPPORTED, "input 'x' has dtype bool");
}
