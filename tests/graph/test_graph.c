// SPDX-License-Identifier: Apache-2.0
// graph/graph.c and graph/validate.c: building, validation, topological
// order, liveness and subgraph extraction.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

static vkp_graph_t *make_mlp(void) {
  vkp_graph_t *g = g_new("mlp");
  int64_t xs[] = {2, 8}, w1s[] = {8, 4}, b1s[] = {4}, w2s[] = {4, 3};
  float w1[32], b1[4], w2[12];
  for (int i = 0; i < 32; ++i) w1[i] = (float)i * 0.01f;
  for (int i = 0; i < 4; ++i) b1[i] = (float)i;
  for (int i = 0; i < 12; ++i) w2[i] = (float)-i;
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_const_data(g, "w1", VKP_DTYPE_FLOAT32, 2, w1s, w1);
  g_const_data(g, "b1", VKP_DTYPE_FLOAT32, 1, b1s, b1);
  g_const_data(g, "w2", VKP_DTYPE_FLOAT32, 2, w2s, w2);
  // Declared out of order on purpose: validate sorts.
  g_node(g, "fc2", VKP_OP_MATMUL, "h,w2", "y", 0, NULL);
  g_node(g, "act", VKP_OP_RELU, "z", "h", 0, NULL);
  g_node(g, "fc1", VKP_OP_MATMUL, "x,w1", "xw", 0, NULL);
  g_node(g, "bias", VKP_OP_ADD, "xw,b1", "z", 0, NULL);
  g_out(g, "y");
  return g;
}

Test(graph, validate_sorts_and_infers, .timeout = 10) {
  vkp_graph_t *g = make_mlp();
  g_validate(g);
  cr_assert_str_eq(g->nodes[0].name, "fc1");
  cr_assert_str_eq(g->nodes[1].name, "bias");
  cr_assert_str_eq(g->nodes[2].name, "act");
  cr_assert_str_eq(g->nodes[3].name, "fc2");
  const vkp_value_t *y = &g->values[vkp_graph_find_value(g, "y")];
  cr_assert_eq(y->rank, 2);
  cr_assert_eq(y->shape[0], 2);
  cr_assert_eq(y->shape[1], 3);
  cr_assert_eq(vkp_graph_find_node(g, "act"), 2);
  cr_assert_eq(vkp_graph_constant_bytes(g), (32 + 4 + 12) * 4);
  vkp_graph_destroy(g);
}

Test(graph, liveness, .timeout = 10) {
  vkp_graph_t *g = make_mlp();
  g_validate(g);
  int32_t def[32], use[32];
  VKP_TEST_OK(vkp_graph_liveness(g, def, use));
  int32_t xw = vkp_graph_find_value(g, "xw"), y = vkp_graph_find_value(g, "y");
  cr_assert_eq(def[xw], 0);
  cr_assert_eq(use[xw], 1);
  cr_assert_eq(def[y], 3);
  cr_assert_eq(use[y], g->n_nodes);
  vkp_graph_destroy(g);
}

Test(graph, extract_middle, .timeout = 10) {
  vkp_graph_t *g = make_mlp(), *sub;
  g_validate(g);
  int32_t nodes[] = {1, 2};  // bias, act
  VKP_TEST_OK(vkp_graph_extract(g, 2, nodes, "mid", &sub));
  cr_assert_eq(sub->n_inputs, 1);
  cr_assert_str_eq(sub->values[sub->inputs[0]].name, "xw");
  cr_assert_eq(sub->n_outputs, 1);
  cr_assert_str_eq(sub->values[sub->outputs[0]].name, "h");
  int32_t b1 = vkp_graph_find_value(sub, "b1");
  cr_assert_eq(sub->values[b1].kind, VKP_VALUE_CONSTANT);
  vkp_graph_destroy(sub);
  vkp_graph_destroy(g);
}

static char *validate_error(vkp_graph_t *g) {
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert_not_null(st, "validate unexpectedly succeeded");
  char *msg = strdup(vkp_status_message(st));
  vkp_status_free(st);
  return msg;
}

Test(graph, cycle_is_reported, .timeout = 10) {
  vkp_graph_t *g = g_new("cyc");
  int64_t s[] = {4};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, s);
  g_node(g, "A", VKP_OP_ADD, "x,c", "a", 0, NULL);
  g_node(g, "B", VKP_OP_RELU, "a", "b", 0, NULL);
  g_node(g, "C", VKP_OP_EXP, "b", "c", 0, NULL);
  g_out(g, "c");
  char *msg = validate_error(g);
  cr_assert(strstr(msg, "cycle") && strstr(msg, "'A'") && strstr(msg, "'C'"), "%s", msg);
  free(msg);
  vkp_graph_destroy(g);
}

Test(graph, dangling_and_shape_errors_name_the_node, .timeout = 10) {
  vkp_graph_t *g = g_new("bad");
  int64_t s[] = {1, 784}, ws[] = {512, 10};
  float *w = calloc(5120, sizeof(float));
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  g_const_data(g, "w", VKP_DTYPE_FLOAT32, 2, ws, w);
  free(w);
  g_node(g, "fc1", VKP_OP_MATMUL, "x,w", "y", 0, NULL);
  g_out(g, "y");
  char *msg = validate_error(g);
  cr_assert(strstr(msg, "node 'fc1' (matmul): inner dimensions 784 and 512 differ"), "%s", msg);
  free(msg);
  g_node(g, "r", VKP_OP_RELU, "nope", "z", 0, NULL);
  msg = validate_error(g);
  cr_assert(strstr(msg, "node 'r' (relu): input 0 refers to unknown tensor 'nope'"), "%s", msg);
  free(msg);
  vkp_graph_destroy(g);
}

Test(graph, duplicate_names_are_refused, .timeout = 10) {
  vkp_graph_t *g = g_new("dup");
  int64_t s[] = {3};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, s);
  vkp_status_t st = vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, s, NULL);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_ALREADY_EXISTS);
  vkp_status_free(st);
  const char *in[] = {"x"}, *out[] = {"x"};
  st = vkp_graph_add_node(g, "n", VKP_OP_RELU, 1, in, 1, out, 0, NULL, NULL);
  cr_assert(strstr(vkp_status_message(st), "already a graph input"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// Slice with extreme steps and bounds (as ONNX exporters write INT64_MAX for
// "to the end"): canonical, in range, and no overflow (UBSan checks).
Test(graph, slice_extreme_steps, .timeout = 10) {
  vkp_graph_t *g = g_new("slice");
  int64_t s[] = {5, 7};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  int64_t starts[] = {INT64_MAX, 0}, ends[] = {INT64_MIN, INT64_MAX};
  int64_t steps[] = {INT64_MIN, INT64_MAX};
  vkp_attr_t attrs[] = {
      {.name = "starts", .kind = VKP_ATTR_INTS, .ints = starts, .count = 2},
      {.name = "ends", .kind = VKP_ATTR_INTS, .ints = ends, .count = 2},
      {.name = "steps", .kind = VKP_ATTR_INTS, .ints = steps, .count = 2},
  };
  g_node(g, "sl", VKP_OP_SLICE, "x", "y", 3, attrs);
  g_out(g, "y");
  g_validate(g);
  const vkp_value_t *y = &g->values[vkp_graph_find_value(g, "y")];
  // Backwards from the last row with a huge step: one row; forwards from
  // column 0 with a huge step: one column.
  cr_assert_eq(y->shape[0], 1);
  cr_assert_eq(y->shape[1], 1);
  const int64_t *cs;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[0], "starts", &cs), 2);
  cr_assert_eq(cs[0], 4);
  cr_assert_eq(cs[1], 0);
  vkp_graph_destroy(g);
}
