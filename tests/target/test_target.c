// SPDX-License-Identifier: Apache-2.0
// target/target.c: the registry and vkp_target_run_graph, exercised with a
// toy target defined here (add of equal shapes and relu, float32, by hand)
// and checked against "ref" on the same fresh random inputs.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

// ---------------------------------------------------------------------------
// The toy target

typedef struct toy_impl_t {
  bool *destroyed;  // set by destroy, so tests can see it ran
} toy_impl_t;

typedef struct toy_stage_t {
  vkp_stage_t base;
  const vkp_graph_t *graph;
  float **buffers;  // per value; intermediates owned, others borrowed per run
} toy_stage_t;

static bool toy_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                         const vkp_node_t *node, char *reason, size_t reason_size) {
  for (int32_t i = 0; i < node->n_inputs; ++i)
    if (graph->values[node->inputs[i]].dtype != VKP_DTYPE_FLOAT32) {
      snprintf(reason, reason_size, "toy handles float32 only");
      return false;
    }
  if (node->op == VKP_OP_RELU) return true;
  if (node->op == VKP_OP_ADD) {
    const vkp_value_t *a = &graph->values[node->inputs[0]];
    const vkp_value_t *b = &graph->values[node->inputs[1]];
    bool same = a->rank == b->rank;
    for (int32_t d = 0; same && d < a->rank; ++d) same = a->shape[d] == b->shape[d];
    if (!same) snprintf(reason, reason_size, "toy add needs equal shapes");
    return same;
  }
  snprintf(reason, reason_size, "toy has no %s", vkp_op_name(node->op));
  return false;
}

static vkp_status_t toy_compile(const vkp_target_t *target, const vkp_graph_t *graph,
                                const vkp_compile_options_t *options,
                                vkp_blob_t *out_blob) {
  vkp_status_t st = vkp_blob_alloc(out_blob, 4);
  if (st) return st;
  memcpy(out_blob->data, "TOY", 4);
  return NULL;
}

static void toy_unload(vkp_stage_t *stage) {
  toy_stage_t *s = (toy_stage_t *)stage;
  if (!s) return;
  for (int32_t v = 0; v < s->graph->n_values; ++v)
    if (s->graph->values[v].kind == VKP_VALUE_INTERMEDIATE &&
        !s->graph->values[v].is_output)
      free(s->buffers[v]);
  free(s->buffers);
  free(s);
}

static vkp_status_t toy_load(const vkp_target_t *target, const vkp_graph_t *graph,
                             const void *blob, size_t blob_size,
                             vkp_stage_t **out_stage) {
  cr_assert_eq(blob_size, 4);
  cr_assert_str_eq(blob, "TOY");
  toy_stage_t *s = calloc(1, sizeof(*s));
  s->base.target = target;
  s->graph = graph;
  s->buffers = calloc((size_t)graph->n_values, sizeof(float *));
  for (int32_t v = 0; v < graph->n_values; ++v) {
    const vkp_value_t *val = &graph->values[v];
    if (val->kind == VKP_VALUE_CONSTANT) s->buffers[v] = val->data;
    if (val->kind == VKP_VALUE_INTERMEDIATE && !val->is_output) {
      size_t bytes;
      cr_assert(vkp_shape_numel(val->rank, val->shape, sizeof(float), &bytes));
      s->buffers[v] = malloc(bytes ? bytes : 1);
    }
  }
  *out_stage = &s->base;
  return NULL;
}

static vkp_status_t toy_run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                            vkp_tensor_t *outputs) {
  toy_stage_t *s = (toy_stage_t *)stage;
  const vkp_graph_t *g = s->graph;
  for (int32_t i = 0; i < g->n_inputs; ++i) s->buffers[g->inputs[i]] = inputs[i].data;
  for (int32_t i = 0; i < g->n_outputs; ++i) s->buffers[g->outputs[i]] = outputs[i].data;
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    const vkp_value_t *out = &g->values[n->outputs[0]];
    size_t count = 1;
    for (int32_t d = 0; d < out->rank; ++d) count *= (size_t)out->shape[d];
    float *y = s->buffers[n->outputs[0]];
    const float *a = s->buffers[n->inputs[0]];
    if (n->op == VKP_OP_RELU) {
      for (size_t k = 0; k < count; ++k) y[k] = a[k] > 0 ? a[k] : 0.0f;
    } else {
      const float *b = s->buffers[n->inputs[1]];
      for (size_t k = 0; k < count; ++k) y[k] = a[k] + b[k];
    }
  }
  return NULL;
}

static void toy_destroy(vkp_target_t *target) {
  toy_impl_t *impl = target->impl;
  *impl->destroyed = true;
  free(impl);
}

static const vkp_target_vtable_t toy_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "toy",
    .caps = {.dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)},
    .compiler = {.supports = toy_supports, .compile = toy_compile},
    .stage = {.load = toy_load, .run = toy_run, .unload = toy_unload},
    .destroy = toy_destroy,
};

// Lacks run.
static const vkp_target_vtable_t broken_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "broken",
    .caps = {.dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)},
    .compiler = {.supports = toy_supports, .compile = toy_compile},
    .stage = {.load = toy_load, .unload = toy_unload},
    .destroy = toy_destroy,
};

static toy_impl_t *toy_impl(bool *destroyed) {
  toy_impl_t *impl = calloc(1, sizeof(*impl));
  *destroyed = false;
  impl->destroyed = destroyed;
  return impl;
}

// ---------------------------------------------------------------------------
// Graphs

enum { ROWS = 3, COLS = 5 };

// y = relu(x + x2) + c, with c a constant: every node is one the toy runs.
static vkp_graph_t *make_toy_graph(const float *c) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("toy_graph", &g));
  int64_t shape[] = {ROWS, COLS};
  VKP_TEST_OK(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, shape, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "x2", VKP_DTYPE_FLOAT32, 2, shape, NULL));
  VKP_TEST_OK(vkp_graph_add_constant(g, "c", VKP_DTYPE_FLOAT32, 2, shape, c, NULL));
  const char *a_in[] = {"x", "x2"}, *a_out[] = {"s"};
  VKP_TEST_OK(vkp_graph_add_node(g, "sum", VKP_OP_ADD, 2, a_in, 1, a_out, 0, NULL, NULL));
  const char *r_in[] = {"s"}, *r_out[] = {"h"};
  VKP_TEST_OK(vkp_graph_add_node(g, "act", VKP_OP_RELU, 1, r_in, 1, r_out, 0, NULL, NULL));
  const char *b_in[] = {"h", "c"}, *b_out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "shift", VKP_OP_ADD, 2, b_in, 1, b_out, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  VKP_TEST_OK(vkp_graph_mark_output(g, "h"));
  VKP_TEST_OK(vkp_graph_validate(g));
  return g;
}

// ---------------------------------------------------------------------------

Test(target, toy_matches_ref, .timeout = 30) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  bool destroyed;
  vkp_registry_t *reg, *defaults;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &toy_vtable, toy_impl(&destroyed)));
  VKP_TEST_OK(vkp_registry_create_default(&defaults));
  const vkp_target_t *toy = NULL, *ref = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "toy", &toy));
  VKP_TEST_OK(vkp_registry_lookup(defaults, "ref", &ref));

  float c[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; ++i) c[i] = vkp_test_rng_uniform(&rng, -1, 1);
  vkp_graph_t *g = make_toy_graph(c);
  int64_t shape[] = {ROWS, COLS};
  vkp_tensor_t in[2], got[2], want[2];
  for (int i = 0; i < 2; ++i) {
    VKP_TEST_OK(vkp_tensor_init(&in[i], VKP_DTYPE_FLOAT32, 2, shape));
    vkp_test_fill_uniform(&rng, &in[i], -2, 2);
  }
  VKP_TEST_OK(vkp_target_run_graph(toy, g, NULL, in, got));
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, in, want));
  for (int i = 0; i < 2; ++i) {
    char msg[256];
    cr_assert(vkp_test_allclose(&got[i], &want[i], 1e-6, 1e-7, msg, sizeof msg),
              "output %d (VKPIPE_TEST_SEED=%llu): %s", i, (unsigned long long)seed, msg);
    vkp_tensor_deinit(&got[i]);
    vkp_tensor_deinit(&want[i]);
    vkp_tensor_deinit(&in[i]);
  }
  vkp_graph_destroy(g);
  vkp_registry_destroy(defaults);
  cr_assert_not(destroyed);
  vkp_registry_destroy(reg);
  cr_assert(destroyed, "registry_destroy must call the target's destroy");
}

Test(target, check_graph_lists_every_unsupported_node, .timeout = 30) {
  bool destroyed;
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &toy_vtable, toy_impl(&destroyed)));
  const vkp_target_t *toy = vkp_registry_find(reg, "toy");
  cr_assert_not_null(toy);

  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("mixed", &g));
  int64_t xs[] = {2, 4}, ws[] = {4, 4}, bs[] = {4};
  VKP_TEST_OK(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, xs, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "w", VKP_DTYPE_FLOAT32, 2, ws, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "b", VKP_DTYPE_FLOAT32, 1, bs, NULL));
  const char *mm_in[] = {"x", "w"}, *mm_out[] = {"m"};
  VKP_TEST_OK(vkp_graph_add_node(g, "mm", VKP_OP_MATMUL, 2, mm_in, 1, mm_out, 0, NULL, NULL));
  const char *r_in[] = {"m"}, *r_out[] = {"r"};
  VKP_TEST_OK(vkp_graph_add_node(g, "act", VKP_OP_RELU, 1, r_in, 1, r_out, 0, NULL, NULL));
  const char *a_in[] = {"r", "b"}, *a_out[] = {"a"};  // broadcasting add
  VKP_TEST_OK(vkp_graph_add_node(g, "bias", VKP_OP_ADD, 2, a_in, 1, a_out, 0, NULL, NULL));
  const char *s_in[] = {"a"}, *s_out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "sm", VKP_OP_SOFTMAX, 1, s_in, 1, s_out, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  VKP_TEST_OK(vkp_graph_validate(g));

  vkp_status_t st = vkp_target_check_graph(toy, g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "3 nodes"), "%s", msg);
  cr_assert(strstr(msg, "'mm' (matmul): toy has no matmul"), "%s", msg);
  cr_assert(strstr(msg, "'bias' (add): toy add needs equal shapes"), "%s", msg);
  cr_assert(strstr(msg, "'sm' (softmax)"), "%s", msg);
  cr_assert_null(strstr(msg, "'act'"), "%s", msg);
  vkp_status_free(st);

  // run_graph refuses before compiling, and leaves the outputs zeroed.
  vkp_tensor_t in[3], out[1];
  int64_t *shapes[] = {xs, ws, bs};
  int32_t ranks[] = {2, 2, 1};
  for (int i = 0; i < 3; ++i)
    VKP_TEST_OK(vkp_tensor_init(&in[i], VKP_DTYPE_FLOAT32, ranks[i], shapes[i]));
  st = vkp_target_run_graph(toy, g, NULL, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert_null(out[0].data);
  vkp_status_free(st);
  for (int i = 0; i < 3; ++i) vkp_tensor_deinit(&in[i]);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(target, refuses_duplicates_and_incomplete_vtables, .timeout = 30) {
  bool first, second, broken;
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &toy_vtable, toy_impl(&first)));

  vkp_status_t st = vkp_registry_add(reg, &toy_vtable, toy_impl(&second));
  cr_assert(vkp_status_is(st, VKP_STATUS_ALREADY_EXISTS), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "'toy'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  cr_assert(second, "a refused target's impl is destroyed");
  cr_assert_not(first, "the registered one is untouched");

  st = vkp_registry_add(reg, &broken_vtable, toy_impl(&broken));
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "broken"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  cr_assert(broken, "a refused target's impl is destroyed");
  cr_assert_null(vkp_registry_find(reg, "broken"));

  // A name taken by an unavailable target is taken too.
  VKP_TEST_OK(vkp_registry_add_unavailable(reg, "npu", "no driver"));
  st = vkp_registry_add_unavailable(reg, "npu", "again");
  cr_assert(vkp_status_is(st, VKP_STATUS_ALREADY_EXISTS));
  vkp_status_free(st);

  cr_assert_eq(vkp_registry_count(reg), 1);
  cr_assert_eq(vkp_registry_get(reg, 0), vkp_registry_find(reg, "toy"));
  cr_assert_null(vkp_registry_get(reg, 1));
  vkp_registry_destroy(reg);
  cr_assert(first);
}

Test(target, unavailable_and_unknown_targets, .timeout = 30) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add_unavailable(reg, "npu", "no NPU driver loaded"));
  bool destroyed;
  VKP_TEST_OK(vkp_registry_add(reg, &toy_vtable, toy_impl(&destroyed)));

  cr_assert_null(vkp_registry_find(reg, "npu"));
  cr_assert_str_eq(vkp_registry_unavailable_reason(reg, "npu"), "no NPU driver loaded");
  cr_assert_null(vkp_registry_unavailable_reason(reg, "toy"));
  const vkp_target_t *t = (const vkp_target_t *)1;
  vkp_status_t st = vkp_registry_lookup(reg, "npu", &t);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNAVAILABLE));
  cr_assert(strstr(vkp_status_message(st), "no NPU driver loaded"), "%s",
            vkp_status_message(st));
  cr_assert_null(t);
  vkp_status_free(st);

  st = vkp_registry_lookup(reg, "dsp", &t);
  cr_assert(vkp_status_is(st, VKP_STATUS_NOT_FOUND));
  cr_assert(strstr(vkp_status_message(st), "'dsp'") &&
                strstr(vkp_status_message(st), "npu") &&
                strstr(vkp_status_message(st), "toy"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  cr_assert_eq(vkp_registry_count(reg), 1);
  vkp_registry_destroy(reg);
}

Test(target, run_graph_checks_inputs, .timeout = 30) {
  bool destroyed;
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &toy_vtable, toy_impl(&destroyed)));
  const vkp_target_t *toy = vkp_registry_find(reg, "toy");
  float c[ROWS * COLS] = {0};
  vkp_graph_t *g = make_toy_graph(c);

  int64_t good[] = {ROWS, COLS}, bad[] = {ROWS, COLS - 1};
  vkp_tensor_t in[2], out[2];
  VKP_TEST_OK(vkp_tensor_init(&in[0], VKP_DTYPE_FLOAT32, 2, good));
  VKP_TEST_OK(vkp_tensor_init(&in[1], VKP_DTYPE_FLOAT32, 2, bad));
  vkp_status_t st = vkp_target_run_graph(toy, g, NULL, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "input 'x2'") && strstr(msg, "[3, 5]") && strstr(msg, "[3, 4]"),
            "%s", msg);
  vkp_status_free(st);
  vkp_tensor_deinit(&in[1]);

  // Wrong dtype, same shape.
  VKP_TEST_OK(vkp_tensor_init(&in[1], VKP_DTYPE_INT32, 2, good));
  st = vkp_target_run_graph(toy, g, NULL, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "int32"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_tensor_deinit(&in[1]);
  vkp_tensor_deinit(&in[0]);

  // A graph that was never validated is refused.
  vkp_graph_t *raw;
  VKP_TEST_OK(vkp_graph_create("raw", &raw));
  st = vkp_target_run_graph(toy, raw, NULL, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  vkp_status_free(st);
  vkp_graph_destroy(raw);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}
