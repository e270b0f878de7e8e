// SPDX-License-Identifier: Apache-2.0
// target/target.c: the registry and vkp_target_run_graph, exercised with a
// toy target defined here (add of equal shapes and relu, float32, by hand)
// and checked against "ref" on the same fresh random inputs.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"
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
  vkp_graph_t *g = g_new("toy_graph");
  int64_t shape[] = {ROWS, COLS};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, shape);
  g_in(g, "x2", VKP_DTYPE_FLOAT32, 2, shape);
  g_const_data(g, "c", VKP_DTYPE_FLOAT32, 2, shape, c);
  g_node(g, "sum", VKP_OP_ADD, "x,x2", "s", 0, NULL);
  g_node(g, "act", VKP_OP_RELU, "s", "h", 0, NULL);
  g_node(g, "shift", VKP_OP_ADD, "h,c", "y", 0, NULL);
  g_out(g, "y,h");
  g_validate(g);
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

  vkp_graph_t *g = g_new("mixed");
  int64_t xs[] = {2, 4}, ws[] = {4, 4}, bs[] = {4};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_in(g, "w", VKP_DTYPE_FLOAT32, 2, ws);
  g_in(g, "b", VKP_DTYPE_FLOAT32, 1, bs);
  g_node(g, "mm", VKP_OP_MATMUL, "x,w", "m", 0, NULL);
  g_node(g, "act", VKP_OP_RELU, "m", "r", 0, NULL);
  g_node(g, "bias", VKP_OP_ADD, "r,b", "a", 0, NULL);  // broadcasting add
  g_node(g, "sm", VKP_OP_SOFTMAX, "a", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);

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
  // Every name, the unavailable one included, in registration order.
  cr_assert_eq(vkp_registry_count_all(reg), 2);
  cr_assert_eq(vkp_registry_count(reg), 1);
  cr_assert_str_eq(vkp_registry_name(reg, 0), "npu");
  cr_assert_str_eq(vkp_registry_name(reg, 1), "toy");
  cr_assert_null(vkp_registry_name(reg, 2));
  cr_assert_null(vkp_registry_name(reg, -1));
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
  vkp_graph_t *raw = g_new("raw");
  st = vkp_target_run_graph(toy, raw, NULL, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  vkp_status_free(st);
  vkp_graph_destroy(raw);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// ---------------------------------------------------------------------------
// Interface v2: each part checked whole, capabilities declared

static vkp_status_t toy_submit(vkp_stage_t *stage, const vkp_submit_info_t *info) {
  return NULL;
}
static vkp_status_t toy_staging_alloc(const vkp_target_t *t, size_t size,
                                      vkp_staging_t *out) {
  return NULL;
}
static void toy_staging_free(const vkp_target_t *t, vkp_staging_t *s) {}
static vkp_status_t toy_bind_slots(vkp_stage_t *stage, int32_t n,
                                   const vkp_staging_t *in, const vkp_staging_t *out) {
  return NULL;
}
static vkp_status_t toy_timeline_create(const vkp_target_t *t, uint64_t *out) {
  return NULL;
}
static void toy_timeline_destroy(const vkp_target_t *t, uint64_t sem) {}
static vkp_status_t toy_timeline_signal(const vkp_target_t *t, uint64_t sem,
                                        uint64_t value) {
  return NULL;
}

// Eight of the nine device entries of version 1 (timeline_wait is missing;
// timeline_query is gone in version 2).
static const vkp_target_device_ops_t eight_of_nine_ops = {
    .submit = toy_submit,
    .staging_alloc = toy_staging_alloc,
    .staging_free = toy_staging_free,
    .bind_slots = toy_bind_slots,
    .timeline_create = toy_timeline_create,
    .timeline_destroy = toy_timeline_destroy,
    .timeline_signal = toy_timeline_signal,
};

#define TOY_PARTS                                                  \
  .compiler = {.supports = toy_supports, .compile = toy_compile}, \
  .stage = {.load = toy_load, .run = toy_run, .unload = toy_unload}, .destroy = toy_destroy

static const vkp_target_vtable_t almost_device_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "almost",
    .caps = {.flags = VKP_TARGET_DEVICE_FLAGS, .dtypes = VKP_DTYPE_SET_ALL},
    .device = &eight_of_nine_ops,
    TOY_PARTS,
};
static const vkp_target_vtable_t old_version_vtable = {
    .api_version = 1,
    .name = "old",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL},
    TOY_PARTS,
};
static const vkp_target_vtable_t flags_without_device_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "claims",
    .caps = {.flags = VKP_TARGET_TIMELINE_EXPORT, .dtypes = VKP_DTYPE_SET_ALL},
    TOY_PARTS,
};
static const vkp_target_vtable_t no_dtypes_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "nodtypes",
    TOY_PARTS,
};
static const vkp_target_rates_t bad_rates = {.device = "host", .gflops = 0.0, .gbps = 1.0};
static const vkp_target_vtable_t bad_rates_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "badrates",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL, .default_rates = &bad_rates},
    TOY_PARTS,
};
static const vkp_target_kernel_rate_t bad_memory_kernels[] = {{"gemm", 1.0, -0.5}};
static const vkp_target_rates_t bad_memory_rates = {
    .device = "host", .gflops = 1.0, .gbps = 1.0, .n_kernels = 1,
    .kernels = bad_memory_kernels};
static const vkp_target_vtable_t bad_memory_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "badmemory",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL, .default_rates = &bad_memory_rates},
    TOY_PARTS,
};
static const vkp_target_compile_ops_t no_compile = {.supports = toy_supports};
static const vkp_target_vtable_t no_compile_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "nocompile",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL},
    .compiler = no_compile,
    .stage = {.load = toy_load, .run = toy_run, .unload = toy_unload},
    .destroy = toy_destroy,
};

// Registers `vtable`, expects INVALID_ARGUMENT with every one of `needles`
// in the message, the impl destroyed and nothing registered.
static void expect_refused(const vkp_target_vtable_t *vtable, const char *const *needles,
                           int n_needles, bool expect_destroyed) {
  vkp_registry_t *reg;
  bool destroyed = false;
  VKP_TEST_OK(vkp_registry_create(&reg));
  toy_impl_t *impl = toy_impl(&destroyed);
  vkp_status_t st = vkp_registry_add(reg, vtable, impl);
  if (!destroyed) free(impl);  // refused unread: still the caller's
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s: %s", vtable->name,
            st ? vkp_status_message(st) : "registered");
  for (int i = 0; i < n_needles; ++i)
    cr_assert(strstr(vkp_status_message(st), needles[i]), "'%s' not in: %s", needles[i],
              vkp_status_message(st));
  vkp_status_free(st);
  cr_assert_eq(destroyed, expect_destroyed, "%s", vtable->name);
  cr_assert_eq(vkp_registry_count(reg), 0);
  vkp_registry_destroy(reg);
}

Test(target, each_part_is_checked_whole_at_registration, .timeout = 30) {
  expect_refused(&almost_device_vtable,
                 (const char *const[]){"'almost'", "device part", "'timeline_wait'"}, 3,
                 true);
  expect_refused(&broken_vtable, (const char *const[]){"'broken'", "stage part", "'run'"},
                 3, true);
  expect_refused(&no_compile_vtable,
                 (const char *const[]){"'nocompile'", "compile part", "'compile'"}, 3, true);
  expect_refused(&flags_without_device_vtable,
                 (const char *const[]){"'claims'", "timeline export", "no device part"}, 3,
                 true);
  expect_refused(&no_dtypes_vtable, (const char *const[]){"'nodtypes'", "no dtypes"}, 2,
                 true);
  expect_refused(&bad_rates_vtable, (const char *const[]){"'badrates'", "positive"}, 2,
                 true);
  expect_refused(&bad_memory_vtable,
                 (const char *const[]){"'badmemory'", "kernel rate 0", "memory factor"}, 3,
                 true);
  // Another layout: refused by version, and its destroy is not trusted.
  expect_refused(&old_version_vtable,
                 (const char *const[]){"version 1", "version 3"}, 2, false);
}

Test(target, built_in_targets_declare_their_capabilities, .timeout = 60) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  for (int32_t i = 0; i < vkp_registry_count(reg); ++i) {
    const vkp_target_t *t = vkp_registry_get(reg, i);
    cr_assert_eq(t->vtable->api_version, VKP_TARGET_API_VERSION);
    cr_assert(t->caps.dtypes & VKP_DTYPE_SET(VKP_DTYPE_FLOAT32), "%s", t->vtable->name);
    cr_assert_not_null(t->caps.default_rates, "%s declares its own rates",
                       t->vtable->name);
    // A device target is exactly one with a device part.
    cr_assert_eq(vkp_target_is_device(t), t->vtable->device != NULL, "%s",
                 t->vtable->name);
  }
  vkp_registry_destroy(reg);
}

// A target whose supports says yes to anything: the declared dtypes and
// limits still hold placement to what it can run.
static bool yes_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                         const vkp_node_t *node, char *reason, size_t reason_size) {
  return true;
}
static void small_limits(const vkp_target_t *target, vkp_target_caps_t *caps) {
  caps->limits.max_tensor_bytes = 64;
}
static const vkp_target_vtable_t eager_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "eager",
    .caps = {.dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)},
    .query_caps = small_limits,
    .compiler = {.supports = yes_supports, .compile = toy_compile},
    .stage = {.load = toy_load, .run = toy_run, .unload = toy_unload},
    .destroy = toy_destroy,
};

Test(target, declared_dtypes_and_limits_hold, .timeout = 30) {
  vkp_registry_t *reg;
  bool destroyed;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &eager_vtable, toy_impl(&destroyed)));
  const vkp_target_t *t = vkp_registry_find(reg, "eager");
  cr_assert_eq(t->caps.limits.max_tensor_bytes, 64, "query_caps adjusted the copy");
  cr_assert_eq(eager_vtable.caps.limits.max_tensor_bytes, 0);

  vkp_graph_t *g = g_new("caps");
  int64_t small[1] = {4}, big[1] = {32};
  g_in(g, "a", VKP_DTYPE_FLOAT32, 1, small);
  g_in(g, "b", VKP_DTYPE_FLOAT32, 1, big);
  g_in(g, "i", VKP_DTYPE_INT32, 1, small);
  g_node(g, "ra", VKP_OP_RELU, "a", "ya", 0, NULL);
  g_node(g, "rb", VKP_OP_RELU, "b", "yb", 0, NULL);
  g_node(g, "ri", VKP_OP_RELU, "i", "yi", 0, NULL);
  g_out(g, "ya,yb,yi");
  g_validate(g);
  char why[256];
  cr_assert(vkp_target_supports(t, g, &g->nodes[vkp_graph_find_node(g, "ra")], why,
                                sizeof why));
  cr_assert_not(vkp_target_supports(t, g, &g->nodes[vkp_graph_find_node(g, "rb")], why,
                                    sizeof why));
  cr_assert(strstr(why, "'b'") && strstr(why, "64 bytes"), "%s", why);
  cr_assert_not(vkp_target_supports(t, g, &g->nodes[vkp_graph_find_node(g, "ri")], why,
                                    sizeof why));
  cr_assert(strstr(why, "'i'") && strstr(why, "int32"), "%s", why);
  vkp_status_t st = vkp_target_check_graph(t, g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "2 nodes"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}
