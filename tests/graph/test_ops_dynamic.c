// SPDX-License-Identifier: Apache-2.0
// graph/op_dynamic.c: the bounds validation infers for non_max_suppression
// and branch_select, and errors that name the node and the input at fault.
// Their results are checked against NumPy in tests/runtime/ref (cases_dynamic.py)
// and through the importer in tests/graph/onnx (test_onnx_control.c).
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

// boxes [2, 7, 4], scores [2, 3, scores_n]; max_output_boxes_per_class a
// constant (max >= 0), a graph input (max == -1) or absent (max == -2).
static vkp_graph_t *nms_graph(int64_t scores_n, int64_t max, vkp_dtype_t max_dtype,
                              int64_t center) {
  vkp_graph_t *g = g_new("nms");
  g_in(g, "boxes", VKP_DTYPE_FLOAT32, 3, SH(2, 7, 4));
  g_in(g, "scores", VKP_DTYPE_FLOAT32, 3, SH(2, 3, scores_n));
  if (max >= 0)
    g_const_data(g, "max", max_dtype, 1, SH(1), &max);
  else if (max == -1)
    g_in(g, "max", max_dtype, 1, SH(1));
  const char *in[3] = {"boxes", "scores", "max"}, *out[1] = {"sel"};
  vkp_attr_t a = {.name = "center_point_box", .kind = VKP_ATTR_INT, .i = center};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", VKP_OP_NON_MAX_SUPPRESSION, max == -2 ? 2 : 3,
                                 in, 1, out, 1, &a, NULL));
  g_out(g, "sel");
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
    g_validate(g);
    const vkp_value_t *y = g_value(g, "sel");
    cr_assert_eq(y->dtype, VKP_DTYPE_INT64);
    cr_assert(y->bounded && y->bounded_axis == 0);
    cr_assert(y->rank == 2 && y->shape[0] == cases[i].bound && y->shape[1] == 3,
              "max %lld: [%lld, %lld]", (long long)cases[i].max, (long long)y->shape[0],
              (long long)y->shape[1]);
    vkp_graph_destroy(g);
  }
}

Test(ops_dynamic, nms_errors_name_node_and_input, .timeout = 30) {
  g_expect_invalid(nms_graph(6, 4, VKP_DTYPE_INT64, 0), VKP_STATUS_INVALID_ARGUMENT, "n", "scores 'scores' [2, 3, 6] must be [batches, classes, boxes]", NULL);
  g_expect_invalid(nms_graph(7, 4, VKP_DTYPE_INT32, 0), VKP_STATUS_UNSUPPORTED, "n", "max_output_boxes_per_class", NULL);
  g_expect_invalid(nms_graph(7, 4, VKP_DTYPE_INT64, 2), VKP_STATUS_INVALID_ARGUMENT, "n", "'center_point_box' is 2", NULL);
}

// branch_select(cond, a, b) with a of `a_shape` and b of `b_shape`.
static vkp_graph_t *select_graph(const int64_t *cond_shape, int32_t cond_rank,
                                 vkp_dtype_t b_dtype, const int64_t *a_shape,
                                 const int64_t *b_shape, int32_t rank) {
  vkp_graph_t *g = g_new("select");
  g_in(g, "cond", VKP_DTYPE_BOOL, cond_rank, cond_shape);
  g_in(g, "a", VKP_DTYPE_FLOAT32, rank, a_shape);
  g_in(g, "b", b_dtype, rank, b_shape);
  g_node(g, "n", VKP_OP_BRANCH_SELECT, "cond,a,b", "y", 0, NULL);
  g_out(g, "y");
  return g;
}

Test(ops_dynamic, branch_select_shapes, .timeout = 30) {
  // Equal shapes: a static result.
  vkp_graph_t *g = select_graph(NULL, 0, VKP_DTYPE_FLOAT32, SH(2, 3), SH(2, 3), 2);
  g_validate(g);
  const vkp_value_t *y = g_value(g, "y");
  cr_assert(!y->bounded && y->shape[0] == 2 && y->shape[1] == 3);
  vkp_graph_destroy(g);
  // [2, 0] beside [2, 5]: bounded along axis 1 by 5.
  g = select_graph(SH(1), 1, VKP_DTYPE_FLOAT32, SH(2, 0), SH(2, 5), 2);
  g_validate(g);
  y = g_value(g, "y");
  cr_assert(y->bounded && y->bounded_axis == 1 && y->shape[0] == 2 && y->shape[1] == 5);
  vkp_graph_destroy(g);
  // A bounded branch beside an empty one: bounded along its axis.
  vkp_graph_t *b = g_new("bounded");
  g_in(b, "cond", VKP_DTYPE_BOOL, 0, NULL);
  g_in(b, "x", VKP_DTYPE_FLOAT32, 1, SH(6));
  g_in(b, "e", VKP_DTYPE_INT64, 2, SH(1, 0));
  g_node(b, "nz", VKP_OP_NON_ZERO, "x", "nz", 0, NULL);
  g_node(b, "n", VKP_OP_BRANCH_SELECT, "cond,e,nz", "y", 0, NULL);
  g_out(b, "y");
  g_validate(b);
  y = g_value(b, "y");
  cr_assert(y->bounded && y->bounded_axis == 1 && y->shape[0] == 1 && y->shape[1] == 6);
  vkp_graph_destroy(b);
}

Test(ops_dynamic, branch_select_errors_name_node, .timeout = 30) {
  g_expect_invalid(select_graph(NULL, 0, VKP_DTYPE_FLOAT32, SH(2, 3), SH(3, 4), 2), VKP_STATUS_UNSUPPORTED, "n", "differ along more than one axis", NULL);
  g_expect_invalid(select_graph(NULL, 0, VKP_DTYPE_INT32, SH(2, 3), SH(2, 3), 2), VKP_STATUS_INVALID_ARGUMENT, "n", "one dtype", NULL);
  g_expect_invalid(select_graph(SH(2), 1, VKP_DTYPE_FLOAT32, SH(2, 3), SH(2, 3), 2), VKP_STATUS_INVALID_ARGUMENT, "n", "must hold one element", NULL);
}
