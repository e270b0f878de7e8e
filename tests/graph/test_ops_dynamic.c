// SPDX-License-Identifier: Apache-2.0
// graph/op_dynamic.c: the bounds validation infers for non_max_suppression
// and branch_select, and errors that name the node and the input at fault.
// Their results are checked against NumPy in tests/runtime/ref (cases_dynamic.py)
// and through the importer in tests/graph/onnx (test_onnx_control.c).
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

static const vkp_value_t *value(const vkp_graph_t *g, const char *name) {
  int32_t v = vkp_graph_find_value(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  return &g->values[v];
}

// Validation fails with `code` and a message naming node "n" and `want`.
static void expect_invalid(vkp_graph_t *g, vkp_status_code_t code, const char *want) {
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert(vkp_status_is(st, code), "%s", st ? vkp_status_message(st) : "validated");
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "'n'"), "names the node: %s", msg);
  cr_assert(strstr(msg, want), "'%s' in: %s", want, msg);
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// boxes [2, 7, 4], scores [2, 3, scores_n]; max_output_boxes_per_class a
// constant (max >= 0), a graph input (max == -1) or absent (max == -2).
static vkp_graph_t *nms_graph(int64_t scores_n, int64_t max, vkp_dtype_t max_dtype,
                              int64_t center) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("nms", &g));
  VKP_TEST_OK(vkp_graph_add_input(g, "boxes", VKP_DTYPE_FLOAT32, 3, SH(2, 7, 4), NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "scores", VKP_DTYPE_FLOAT32, 3, SH(2, 3, scores_n), NULL));
  if (max >= 0)
    VKP_TEST_OK(vkp_graph_add_constant(g, "max", max_dtype, 1, SH(1), &max, NULL));
  else if (max == -1)
    VKP_TEST_OK(vkp_graph_add_input(g, "max", max_dtype, 1, SH(1), NULL));
  const char *in[3] = {"boxes", "scores", "max"}, *out[1] = {"sel"};
  vkp_attr_t a = {.name = "center_point_box", .kind = VKP_ATTR_INT, .i = center};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", VKP_OP_NON_MAX_SUPPRESSION, max == -2 ? 2 : 3,
                                 in, 1, out, 1, &a, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "sel"));
  return g;
}

Test(ops_dynamic, nms_bound, .timeout = 30) {
  // batches * classes * min(max, boxes): a constant max, a run-time one
  // (every box), none (nothing kept).
  static const struct {
    int64_t max, bound;
  } cases[] = {{4, 2 * 3 * 4}, {100, 2 * 3 * 7}, {0, 0}, {-1, 2 * 3 * 7}, {-2, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    vkp_graph_t *g = nms_graph(7, cases[i].max, VKP_DTYPE_INT64, 1);
    VKP_TEST_OK(vkp_graph_validate(g));
    const vkp_value_t *y = value(g, "sel");
    cr_assert_eq(y->dtype, VKP_DTYPE_INT64);
    cr_assert(y->bounded && y->bounded_axis == 0);
    cr_assert(y->rank == 2 && y->shape[0] == cases[i].bound && y->shape[1] == 3,
              "max %lld: [%lld, %lld]", (long long)cases[i].max, (long long)y->shape[0],
              (long long)y->shape[1]);
    vkp_graph_destroy(g);
  }
}

Test(ops_dynamic, nms_errors_name_node_and_input, .timeout = 30) {
  expect_invalid(nms_graph(6, 4, VKP_DTYPE_INT64, 0), VKP_STATUS_INVALID_ARGUMENT,
                 "scores 'scores' [2, 3, 6] must be [batches, classes, boxes]");
  expect_invalid(nms_graph(7, 4, VKP_DTYPE_INT32, 0), VKP_STATUS_UNSUPPORTED,
                 "max_output_boxes_per_class");
  expect_invalid(nms_graph(7, 4, VKP_DTYPE_INT64, 2), VKP_STATUS_INVALID_ARGUMENT,
                 "'center_point_box' is 2");
}

// branch_select(cond, a, b) with a of `a_shape` and b of `b_shape`.
static vkp_graph_t *select_graph(const int64_t *cond_shape, int32_t cond_rank,
                                 vkp_dtype_t b_dtype, const int64_t *a_shape,
                                 const int64_t *b_shape, int32_t rank) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("select", &g));
  VKP_TEST_OK(vkp_graph_add_input(g, "cond", VKP_DTYPE_BOOL, cond_rank, cond_shape, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, rank, a_shape, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "b", b_dtype, rank, b_shape, NULL));
  const char *in[3] = {"cond", "a", "b"}, *out[1] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", VKP_OP_BRANCH_SELECT, 3, in, 1, out, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  return g;
}

Test(ops_dynamic, branch_select_shapes, .timeout = 30) {
  // Equal shapes: a static result.
  vkp_graph_t *g = select_graph(NULL, 0, VKP_DTYPE_FLOAT32, SH(2, 3), SH(2, 3), 2);
  VKP_TEST_OK(vkp_graph_validate(g));
  const vkp_value_t *y = value(g, "y");
  cr_assert(!y->bounded && y->shape[0] == 2 && y->shape[1] == 3);
  vkp_graph_destroy(g);
  // [2, 0] beside [2, 5]: bounded along axis 1 by 5.
  g = select_graph(SH(1), 1, VKP_DTYPE_FLOAT32, SH(2, 0), SH(2, 5), 2);
  VKP_TEST_OK(vkp_graph_validate(g));
  y = value(g, "y");
  cr_assert(y->bounded && y->bounded_axis == 1 && y->shape[0] == 2 && y->shape[1] == 5);
  vkp_graph_destroy(g);
  // A bounded branch beside an empty one: bounded along its axis.
  vkp_graph_t *b;
  VKP_TEST_OK(vkp_graph_create("bounded", &b));
  VKP_TEST_OK(vkp_graph_add_input(b, "cond", VKP_DTYPE_BOOL, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_add_input(b, "x", VKP_DTYPE_FLOAT32, 1, SH(6), NULL));
  VKP_TEST_OK(vkp_graph_add_input(b, "e", VKP_DTYPE_INT64, 2, SH(1, 0), NULL));
  const char *nz_in[1] = {"x"}, *nz_out[1] = {"nz"};
  VKP_TEST_OK(vkp_graph_add_node(b, "nz", VKP_OP_NON_ZERO, 1, nz_in, 1, nz_out, 0, NULL, NULL));
  const char *in[3] = {"cond", "e", "nz"}, *out[1] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(b, "n", VKP_OP_BRANCH_SELECT, 3, in, 1, out, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(b, "y"));
  VKP_TEST_OK(vkp_graph_validate(b));
  y = value(b, "y");
  cr_assert(y->bounded && y->bounded_axis == 1 && y->shape[0] == 1 && y->shape[1] == 6);
  vkp_graph_destroy(b);
}

Test(ops_dynamic, branch_select_errors_name_node, .timeout = 30) {
  expect_invalid(select_graph(NULL, 0, VKP_DTYPE_FLOAT32, SH(2, 3), SH(3, 4), 2),
                 VKP_STATUS_UNSUPPORTED, "differ along more than one axis");
  expect_invalid(select_graph(NULL, 0, VKP_DTYPE_INT32, SH(2, 3), SH(2, 3), 2),
                 VKP_STATUS_INVALID_ARGUMENT, "one dtype");
  expect_invalid(select_graph(SH(2), 1, VKP_DTYPE_FLOAT32, SH(2, 3), SH(2, 3), 2),
                 VKP_STATUS_INVALID_ARGUMENT, "must hold one element");
}
