// SPDX-License-Identifier: Apache-2.0
// A data-dependent (bounded) value crossing a stage boundary: stage 0 picks
// the positive elements of x (non_zero, reshape, gather), stage 1 squares
// them; the extent travels in the ring slot with the bytes, and every
// frame's outputs come back at their run-time shapes through
// vkp_pipeline_get_output, checked against a direct computation.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/test_graph.h"
#include "harness.h"
#include "vkpipe/alloc.h"

enum { N = 12, FRAMES = 24 };

static vkp_graph_t *make_graph(void) {
  vkp_graph_t *g = g_new("pick");
  int64_t shape[] = {N}, one = 1, minus_one = -1;
  float zero = 0.0f;
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, shape);
  g_const_data(g, "zero", VKP_DTYPE_FLOAT32, 1, &one, &zero);
  g_node(g, "gt", VKP_OP_GREATER, "x,zero", "mask", 0, NULL);
  g_node(g, "nz", VKP_OP_NON_ZERO, "mask", "nz", 0, NULL);
  vkp_attr_t flat = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = &minus_one, .count = 1};
  g_node(g, "flat", VKP_OP_RESHAPE, "nz", "idx", 1, &flat);
  g_node(g, "pick", VKP_OP_GATHER, "x,idx", "vals", 0, NULL);
  g_node(g, "square", VKP_OP_MUL, "vals,vals", "sq", 0, NULL);
  g_out(g, "idx,sq");
  g_validate(g);
  return g;
}

Test(bounded, extent_crosses_stage_boundary, .timeout = 60) {
  vkp_graph_t *g = make_graph();
  cr_assert(g->values[vkp_graph_find_value(g, "vals")].bounded);
  // Nodes in topological order: gt, nz, flat, pick | square.
  int32_t s0[] = {0, 1, 2, 3, -1}, s1[] = {4, -1};
  const int32_t *groups[] = {s0, s1};
  const char *targets[] = {"ref", "ref"};
  vkp_plan_t *plan = NULL;
  VKP_TEST_OK(plan_from_groups(g, 2, groups, targets, &plan));
  cr_assert(plan->stages[1].graph->values[plan->stages[1].graph->inputs[0]].bounded,
            "stage 1 reads 'vals' as a bounded input");
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  vkp_pipeline_t *pipe = NULL;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  float xs[FRAMES][N];
  srand(1234u + (unsigned)time(NULL));
  for (int f = 0; f < FRAMES; ++f) {
    for (int i = 0; i < N; ++i)
      xs[f][i] = (float)(rand() % 2001 - 1000) / 250.0f;
    if (f == 3)
      for (int i = 0; i < N; ++i) xs[f][i] = -1.0f - (float)i;  // none picked
    int64_t shape[] = {N};
    vkp_tensor_t x;
    VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 1, shape, xs[f]));
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &x));
    VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
  }
  for (int f = 0; f < FRAMES; ++f) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
    cr_assert_null(res.status, "%s", vkp_status_message(res.status));
    int64_t want_idx[N], k = 0;
    for (int i = 0; i < N; ++i)
      if (xs[f][i] > 0.0f) want_idx[k++] = i;
    const vkp_tensor_t *idx = &res.outputs[0], *sq = &res.outputs[1];
    cr_assert_eq(idx->rank, 1);
    cr_assert_eq(idx->shape[0], k, "frame %d: %lld indices, want %lld", f,
                 (long long)idx->shape[0], (long long)k);
    cr_assert_eq(sq->shape[0], k);
    for (int64_t j = 0; j < k; ++j) {
      cr_assert_eq(((const int64_t *)idx->data)[j], want_idx[j]);
      float v = xs[f][want_idx[j]];
      cr_assert_eq(((const float *)sq->data)[j], v * v);
    }
    vkp_pipeline_result_deinit(&res);
  }
  vkp_pipeline_destroy(pipe);
  vkp_registry_destroy(reg);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

// A bounded graph input (vkp_graph_set_input_bounded): any extent up to the
// bound is accepted, past it refused, and the output follows it.
Test(bounded, bounded_graph_input, .timeout = 60) {
  vkp_graph_t *g = g_new("var");
  int64_t shape[] = {2, 8};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, shape);
  VKP_TEST_OK(vkp_graph_set_input_bounded(g, "x", 1));
  g_node(g, "neg", VKP_OP_NEG, "x", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  float data[2 * 9];
  for (int i = 0; i < 18; ++i) data[i] = (float)i - 3.5f;
  for (int64_t e = 0; e <= 9; ++e) {
    int64_t s[] = {2, e};
    vkp_tensor_t x, y;
    VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 2, s, data));
    vkp_status_t st = vkp_target_run_graph(ref, g, NULL, &x, &y);
    if (e > 8) {
      cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
      cr_assert(strstr(vkp_status_message(st), "[2, <=8]"), "%s", vkp_status_message(st));
      vkp_status_free(st);
      continue;
    }
    VKP_TEST_OK(st);
    cr_assert_eq(y.shape[1], e);
    for (int64_t i = 0; i < 2 * e; ++i) cr_assert_eq(((float *)y.data)[i], -data[i]);
    vkp_tensor_deinit(&y);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// A stage graph with a bounded input survives the JSON format (artifacts
// store stage graphs that way): "bounded_axis" on the input.
Test(bounded, bounded_input_json_round_trip, .timeout = 60) {
  vkp_graph_t *g = g_new("var");
  int64_t shape[] = {3, 5};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, shape);
  VKP_TEST_OK(vkp_graph_set_input_bounded(g, "x", 0));
  g_node(g, "relu", VKP_OP_RELU, "x", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  cr_assert(g->values[vkp_graph_find_value(g, "y")].bounded);
  char *json = NULL;
  void *bin = NULL;
  size_t json_size = 0, bin_size = 0;
  VKP_TEST_OK(vkp_graph_save_memory(g, "var.bin", &json, &json_size, &bin, &bin_size));
  cr_assert(strstr(json, "\"bounded_axis\""), "%s", json);
  vkp_graph_t *back = NULL;
  VKP_TEST_OK(vkp_graph_load_memory(json, json_size, bin, bin_size, &back));
  const vkp_value_t *x = &back->values[vkp_graph_find_value(back, "x")];
  const vkp_value_t *y = &back->values[vkp_graph_find_value(back, "y")];
  cr_assert(x->bounded && x->bounded_axis == 0);
  cr_assert(y->bounded && y->bounded_axis == 0);
  vkp_graph_destroy(back);
  vkp_free(json);
  vkp_free(bin);
  vkp_graph_destroy(g);
}
