// SPDX-License-Identifier: Apache-2.0
#include "tmath.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include <stdlib.h>

typedef struct tmath_impl_t {
  uint32_t max_delay_us;
  uint32_t delay_percent;
  atomic_uint_fast64_t seed;
} tmath_impl_t;

typedef struct tmath_stage_t {
  vkp_stage_t base;
  const vkp_graph_t *graph;
  uint64_t rng;
  float **values;  // per value index: buffer for intermediates
} tmath_stage_t;

static bool tmath_supports(const vkp_target_t *t, const vkp_graph_t *g,
                           const vkp_node_t *n, char *reason, size_t size) {
  return n->op == VKP_OP_ADD || n->op == VKP_OP_MUL || n->op == VKP_OP_RELU ||
         n->op == VKP_OP_IDENTITY;
}

static vkp_status_t tmath_compile(const vkp_target_t *t, const vkp_graph_t *g,
                                  const vkp_compile_options_t *o,
                                  vkp_blob_t *out) {
  vkp_status_t st = vkp_blob_alloc(out, 4);
  if (!st) memcpy(out->data, "tmth", 4);
  return st;
}

static void tmath_unload(vkp_stage_t *stage) {
  tmath_stage_t *s = (tmath_stage_t *)stage;
  if (!s) return;
  for (int32_t v = 0; s->values && v < s->graph->n_values; ++v) free(s->values[v]);
  free(s->values);
  free(s);
}

static vkp_status_t tmath_load(const vkp_target_t *t, const vkp_graph_t *g,
                               const void *blob, size_t size,
                               vkp_stage_t **out) {
  *out = NULL;
  if (size != 4 || memcmp(blob, "tmth", 4) != 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "not a tmath blob");
  tmath_stage_t *s = calloc(1, sizeof(*s));
  if (!s) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath stage");
  s->base.target = t;
  s->graph = g;
  tmath_impl_t *impl = t->impl;
  s->rng = atomic_fetch_add(&impl->seed, 0x9e3779b97f4a7c15ull) | 1;
  s->values = calloc((size_t)g->n_values, sizeof(float *));
  if (!s->values) {
    tmath_unload(&s->base);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath values");
  }
  for (int32_t v = 0; v < g->n_values; ++v) {
    if (g->values[v].kind != VKP_VALUE_INTERMEDIATE) continue;
    size_t bytes = 0;
    vkp_shape_numel(g->values[v].rank, g->values[v].shape, 4, &bytes);
    s->values[v] = calloc(1, bytes + 4);
    if (!s->values[v]) {
      tmath_unload(&s->base);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath value");
    }
  }
  *out = &s->base;
  return NULL;
}

// Value buffers for one evaluation: graph inputs and outputs point at the
// caller's tensors, intermediates at `scratch` (may be NULL when every
// intermediate is an output).
static vkp_status_t tmath_eval_into(const vkp_graph_t *g, const vkp_tensor_t *in,
                                    vkp_tensor_t *out, float **scratch) {
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    float v0 = ((const float *)in[i].data)[0];
    if (v0 == TMATH_FAIL_VALUE)
      return vkp_status_make(VKP_STATUS_INTERNAL, "injected failure in '%s'",
                             g->name);
    if (v0 == TMATH_LOST_VALUE)
      return vkp_status_make(VKP_STATUS_DEVICE_LOST,
                             "injected device loss in '%s'", g->name);
  }
  float **buf = calloc((size_t)g->n_values, sizeof(float *));
  if (!buf) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath eval");
  for (int32_t v = 0; v < g->n_values; ++v) buf[v] = scratch ? scratch[v] : NULL;
  for (int32_t i = 0; i < g->n_inputs; ++i) buf[g->inputs[i]] = in[i].data;
  for (int32_t i = 0; i < g->n_outputs; ++i) buf[g->outputs[i]] = out[i].data;
  vkp_status_t st = NULL;
  for (int32_t n = 0; n < g->n_nodes && !st; ++n) {
    const vkp_node_t *node = &g->nodes[n];
    const vkp_value_t *ov = &g->values[node->outputs[0]];
    size_t numel = 1;
    for (int32_t d = 0; d < ov->rank; ++d) numel *= (size_t)ov->shape[d];
    float *o = buf[node->outputs[0]];
    const float *a = buf[node->inputs[0]];
    const float *b = node->n_inputs > 1 ? buf[node->inputs[1]] : NULL;
    if (!o || !a) {
      st = vkp_status_make(VKP_STATUS_INTERNAL, "tmath: no buffer");
      break;
    }
    for (size_t k = 0; k < numel; ++k) {
      switch (node->op) {
        case VKP_OP_ADD: o[k] = a[k] + b[k]; break;
        case VKP_OP_MUL: o[k] = a[k] * b[k]; break;
        case VKP_OP_RELU: o[k] = a[k] > 0 ? a[k] : 0; break;
        default: o[k] = a[k]; break;
      }
    }
  }
  free(buf);
  return st;
}

vkp_status_t tmath_eval(const vkp_graph_t *g, const vkp_tensor_t *in,
                        vkp_tensor_t *out) {
  float **scratch = calloc((size_t)g->n_values, sizeof(float *));
  vkp_status_t st = NULL;
  for (int32_t v = 0; scratch && v < g->n_values; ++v) {
    size_t bytes = 0;
    vkp_shape_numel(g->values[v].rank, g->values[v].shape, 4, &bytes);
    scratch[v] = calloc(1, bytes + 4);
  }
  if (!scratch) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath eval");
  st = tmath_eval_into(g, in, out, scratch);
  for (int32_t v = 0; v < g->n_values; ++v) free(scratch[v]);
  free(scratch);
  return st;
}

static vkp_status_t tmath_run(vkp_stage_t *stage, const vkp_tensor_t *in,
                              vkp_tensor_t *out) {
  tmath_stage_t *s = (tmath_stage_t *)stage;
  const tmath_impl_t *impl = stage->target->impl;
  s->rng ^= s->rng << 13;
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  if (impl->delay_percent && s->rng % 100 < impl->delay_percent) {
    uint64_t us = (s->rng >> 8) % (impl->max_delay_us + 1);
    struct timespec ts = {0, (long)(us * 1000)};
    nanosleep(&ts, NULL);
  }
  return tmath_eval_into(s->graph, in, out, s->values);
}

static void tmath_destroy(vkp_target_t *t) { free(t->impl); }

static const vkp_target_vtable_t tmath_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "tmath",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL},
    .compiler = {.supports = tmath_supports, .compile = tmath_compile},
    .stage = {.load = tmath_load, .run = tmath_run, .unload = tmath_unload},
    .destroy = tmath_destroy,
};

vkp_status_t tmath_register(vkp_registry_t *registry, uint32_t max_delay_us,
                            uint32_t delay_percent) {
  tmath_impl_t *impl = calloc(1, sizeof(*impl));
  if (!impl) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tmath");
  impl->max_delay_us = max_delay_us;
  impl->delay_percent = delay_percent;
  atomic_init(&impl->seed, (uint64_t)time(NULL) * 2654435761u);
  return vkp_registry_add(registry, &tmath_vtable, impl);
}

// ---------------------------------------------------------------------------

typedef struct diamond_node_t {
  const char *name;
  vkp_op_t op;
  const char *in[2];
  const char *out;
} diamond_node_t;

static vkp_status_t diamond_stage(vkp_plan_t *plan, const char *name,
                                  const char *target, int32_t n_in,
                                  const char *const *inputs, int32_t n_nodes,
                                  const diamond_node_t *nodes, int32_t n_out,
                                  const char *const *outputs) {
  vkp_graph_t *g = NULL;
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  vkp_status_t st = vkp_graph_create(name, &g);
  for (int32_t i = 0; i < n_in && !st; ++i)
    st = vkp_graph_add_input(g, inputs[i], VKP_DTYPE_FLOAT32, 2, shape, NULL);
  for (int32_t n = 0; n < n_nodes && !st; ++n) {
    const char *outs[1] = {nodes[n].out};
    int32_t arity = nodes[n].in[1] ? 2 : 1;
    st = vkp_graph_add_node(g, nodes[n].name, nodes[n].op, arity, nodes[n].in,
                            1, outs, 0, NULL, NULL);
  }
  for (int32_t o = 0; o < n_out && !st; ++o) st = vkp_graph_mark_output(g, outputs[o]);
  if (!st) st = vkp_graph_validate(g);
  if (st) {
    vkp_graph_destroy(g);
    return st;
  }
  return vkp_plan_add_stage(plan, name, target, g, NULL);
}

#define TRY(expr)             \
  do {                        \
    vkp_status_t st_ = (expr); \
    if (st_) {                \
      vkp_plan_destroy(plan); \
      return st_;             \
    }                         \
  } while (0)

vkp_status_t diamond_plan(const char *target, const char *alt_target,
                          uint32_t alt_mask, vkp_plan_t **out_plan) {
  *out_plan = NULL;
  vkp_plan_t *plan = NULL;
  vkp_status_t st0 = vkp_plan_create("diamond", &plan);
  if (st0) return st0;
  const char *t[4];
  for (int i = 0; i < 4; ++i) t[i] = (alt_mask >> i) & 1 ? alt_target : target;
  {
    const char *in[] = {"x"}, *out[] = {"a", "b"};
    diamond_node_t nodes[] = {{"add0", VKP_OP_ADD, {"x", "x"}, "a"},
                              {"mul0", VKP_OP_MUL, {"x", "x"}, "b"}};
    TRY(diamond_stage(plan, "s0", t[0], 1, in, 2, nodes, 2, out));
  }
  {
    const char *in[] = {"p", "q"}, *out[] = {"c"};
    diamond_node_t nodes[] = {{"mul1", VKP_OP_MUL, {"p", "q"}, "c"}};
    TRY(diamond_stage(plan, "s1", t[1], 2, in, 1, nodes, 1, out));
  }
  {
    const char *in[] = {"b", "z"}, *out[] = {"d"};
    diamond_node_t nodes[] = {{"add2", VKP_OP_ADD, {"b", "z"}, "d"}};
    TRY(diamond_stage(plan, "s2", t[2], 2, in, 1, nodes, 1, out));
  }
  {
    const char *in[] = {"c", "d", "x", "a"}, *out[] = {"y", "w"};
    diamond_node_t nodes[] = {{"add3", VKP_OP_ADD, {"c", "d"}, "y"},
                              {"mul3", VKP_OP_MUL, {"y", "a"}, "ya"},
                              {"add4", VKP_OP_ADD, {"ya", "x"}, "w"}};
    TRY(diamond_stage(plan, "s3", t[3], 4, in, 3, nodes, 2, out));
  }
  TRY(vkp_plan_add_global_input(plan, "x"));
  TRY(vkp_plan_add_global_input(plan, "z"));
  TRY(vkp_plan_add_global_output(plan, "y"));
  TRY(vkp_plan_add_global_output(plan, "w"));
  TRY(vkp_plan_add_global_output(plan, "u"));
  TRY(vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x"));
  TRY(vkp_plan_bind(plan, 0, "a", 1, "p"));
  TRY(vkp_plan_bind(plan, 0, "a", 1, "q"));
  TRY(vkp_plan_bind(plan, 0, "b", 2, "b"));
  TRY(vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "z", 2, "z"));
  TRY(vkp_plan_bind(plan, 1, "c", 3, "c"));
  TRY(vkp_plan_bind(plan, 2, "d", 3, "d"));
  TRY(vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 3, "x"));
  TRY(vkp_plan_bind(plan, 0, "a", 3, "a"));
  TRY(vkp_plan_bind(plan, 3, "y", VKP_PLAN_GLOBAL, "y"));
  TRY(vkp_plan_bind(plan, 3, "w", VKP_PLAN_GLOBAL, "w"));
  TRY(vkp_plan_bind(plan, 0, "b", VKP_PLAN_GLOBAL, "u"));
  TRY(vkp_plan_validate(plan));
  *out_plan = plan;
  return NULL;
}

void diamond_expected(const float *x, const float *z, float *y, float *w,
                      float *u) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) {
    float a = x[k] + x[k], b = x[k] * x[k];
    float c = a * a, d = b + z[k];
    y[k] = c + d;
    w[k] = y[k] * a + x[k];
    u[k] = b;
  }
}
