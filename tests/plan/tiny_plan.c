// SPDX-License-Identifier: Apache-2.0
#include "plan/tiny_plan.h"

static vkp_status_t tiny_front(vkp_graph_t **out) {
  int64_t shape[] = {1, TINY_WIDTH};
  const char *a[] = {"a"}, *h[] = {"h"}, *z[] = {"z"};
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_create("front", &g);
  if (!st) st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 2, shape, NULL);
  if (!st) st = vkp_graph_add_node(g, "relu", VKP_OP_RELU, 1, a, 1, h, 0, NULL, NULL);
  if (!st) st = vkp_graph_add_node(g, "neg", VKP_OP_NEG, 1, h, 1, z, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "z");
  if (!st) st = vkp_graph_validate(g);
  if (st) vkp_graph_destroy(g);
  *out = st ? NULL : g;
  return st;
}

static vkp_status_t tiny_back(vkp_graph_t **out) {
  int64_t shape[] = {1, TINY_WIDTH};
  const char *in[] = {"zin", "b"}, *y[] = {"y"};
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_create("back", &g);
  if (!st) st = vkp_graph_add_input(g, "zin", VKP_DTYPE_FLOAT32, 2, shape, NULL);
  if (!st) st = vkp_graph_add_input(g, "b", VKP_DTYPE_FLOAT32, 2, shape, NULL);
  if (!st) st = vkp_graph_add_node(g, "add", VKP_OP_ADD, 2, in, 1, y, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  if (st) vkp_graph_destroy(g);
  *out = st ? NULL : g;
  return st;
}

vkp_status_t tiny_plan_create(int32_t back_rank, vkp_plan_t **out_plan) {
  vkp_plan_t *p = NULL;
  vkp_graph_t *front = NULL, *back = NULL;
  *out_plan = NULL;
  vkp_status_t st = vkp_plan_create("tiny", &p);
  if (!st) st = tiny_front(&front);
  if (!st) st = vkp_plan_add_stage(p, "front", "ref", front, NULL);
  if (!st) st = tiny_back(&back);
  if (!st) st = vkp_plan_add_stage(p, "back", "ref", back, NULL);
  if (!st) st = vkp_plan_set_stage_rank(p, 1, back_rank);
  if (!st) st = vkp_plan_add_global_input(p, "x_a");
  if (!st) st = vkp_plan_add_global_input(p, "x_b");
  if (!st) st = vkp_plan_add_global_output(p, "y");
  if (!st) st = vkp_plan_add_global_output(p, "z");
  if (!st) st = vkp_plan_bind(p, VKP_PLAN_GLOBAL, "x_a", 0, "a");
  if (!st) st = vkp_plan_bind(p, 0, "z", 1, "zin");
  if (!st) st = vkp_plan_bind(p, VKP_PLAN_GLOBAL, "x_b", 1, "b");
  if (!st) st = vkp_plan_bind(p, 1, "y", VKP_PLAN_GLOBAL, "y");
  if (!st) st = vkp_plan_bind(p, 0, "z", VKP_PLAN_GLOBAL, "z");
  if (!st) st = vkp_plan_validate(p);
  if (st) {
    vkp_plan_destroy(p);
    return st;
  }
  *out_plan = p;
  return NULL;
}

void tiny_plan_expect(const float *a, const float *b, float *y, float *z) {
  for (int i = 0; i < TINY_WIDTH; ++i) {
    z[i] = -(a[i] > 0 ? a[i] : 0.0f);
    y[i] = z[i] + b[i];
  }
}
