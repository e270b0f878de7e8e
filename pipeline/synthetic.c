// SPDX-License-Identifier: Apache-2.0
// Synthetic pipelines: a chain of host stages with fixed costs (sleeping or
// spinning), driven by a private target that no registry holds. Used by
// vkpipe-bench and the tests to measure the executor itself.
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "pipeline/pipeline_internal.h"
#include "vkpipe/mpi.h"

typedef struct vkp__synthetic_stage_t {
  vkp_stage_t base;
  vkp_pipeline_synthetic_stage_t cost;
} vkp__synthetic_stage_t;

static bool vkp__synthetic_supports(const vkp_target_t *target,
                                    const vkp_graph_t *graph,
                                    const vkp_node_t *node, char *reason,
                                    size_t reason_size) {
  return node->op == VKP_OP_IDENTITY;
}

static vkp_status_t vkp__synthetic_compile(const vkp_target_t *target,
                                           const vkp_graph_t *graph,
                                           const vkp_compile_options_t *options,
                                           vkp_blob_t *out_blob) {
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "synthetic stages are made by "
                         "vkp_pipeline_create_synthetic, not compiled");
}

static vkp_status_t vkp__synthetic_load(const vkp_target_t *target,
                                        const vkp_graph_t *graph,
                                        const void *blob, size_t blob_size,
                                        vkp_stage_t **out_stage) {
  *out_stage = NULL;
  return vkp__synthetic_compile(target, graph, NULL, NULL);
}

static vkp_status_t vkp__synthetic_run(vkp_stage_t *stage,
                                       const vkp_tensor_t *inputs,
                                       vkp_tensor_t *outputs) {
  const vkp__synthetic_stage_t *s = (const vkp__synthetic_stage_t *)stage;
  uint64_t cost = s->cost.cost_ns;
  if (cost && s->cost.kind == VKP_PIPELINE_SYNTHETIC_SLEEP) {
    struct timespec ts = {.tv_sec = (time_t)(cost / 1000000000u),
                          .tv_nsec = (long)(cost % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
  } else if (cost) {
    uint64_t end = vkp__now_ns() + cost;
    while (vkp__now_ns() < end) {
    }
  }
  memcpy(outputs[0].data, inputs[0].data, vkp_tensor_nbytes(&inputs[0]));
  ((float *)outputs[0].data)[0] += 1.0f;
  return NULL;
}

static void vkp__synthetic_unload(vkp_stage_t *stage) { vkp__free(stage); }

// Never registered: a host target (zero caps) the synthetic pipelines use.
static const vkp_target_vtable_t vkp__synthetic_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "synthetic",
    .compiler = {.supports = vkp__synthetic_supports, .compile = vkp__synthetic_compile},
    .stage = {.load = vkp__synthetic_load,
              .run = vkp__synthetic_run,
              .unload = vkp__synthetic_unload},
};

static const vkp_target_t vkp__synthetic_target = {
    .vtable = &vkp__synthetic_vtable, .impl = NULL};

vkp_status_t vkp__synthetic_stage_new(const vkp_pipeline_synthetic_stage_t *cost,
                                      const vkp_target_t **out_target,
                                      vkp_stage_t **out_stage) {
  *out_stage = NULL;
  vkp__synthetic_stage_t *s = vkp__calloc(1, sizeof(*s));
  if (!s) return VKP_OOM("synthetic stage");
  s->base.target = &vkp__synthetic_target;
  s->cost = *cost;
  *out_target = &vkp__synthetic_target;
  *out_stage = &s->base;
  return NULL;
}

vkp_status_t vkp__synthetic_plan(int32_t n_stages, int64_t numel,
                                 vkp_plan_t *plan) {
  VKP_RETURN_IF_ERROR(vkp_plan_add_global_input(plan, "x"));
  VKP_RETURN_IF_ERROR(vkp_plan_add_global_output(plan, "y"));
  for (int32_t i = 0; i < n_stages; ++i) {
    char in[32], out[32], name[32];
    snprintf(in, sizeof in, "x%d", (int)i);
    snprintf(out, sizeof out, "x%d", (int)i + 1);
    snprintf(name, sizeof name, "stage%d", (int)i);
    vkp_graph_t *g = NULL;
    VKP_RETURN_IF_ERROR(vkp_graph_create(name, &g));
    const char *ins[] = {in}, *outs[] = {out};
    vkp_status_t st = vkp_graph_add_input(g, in, VKP_DTYPE_FLOAT32, 1, &numel, NULL);
    if (!st) st = vkp_graph_add_node(g, "copy", VKP_OP_IDENTITY, 1, ins, 1, outs,
                                     0, NULL, NULL);
    if (!st) st = vkp_graph_mark_output(g, out);
    if (!st) st = vkp_graph_validate(g);
    if (st) {
      vkp_graph_destroy(g);
      return st;
    }
    VKP_RETURN_IF_ERROR(vkp_plan_add_stage(plan, name, "synthetic", g, NULL));
    VKP_RETURN_IF_ERROR(vkp_plan_bind(plan, i ? i - 1 : VKP_PLAN_GLOBAL,
                                      i ? in : "x", i, in));
  }
  char last[32];
  snprintf(last, sizeof last, "x%d", (int)n_stages);
  VKP_RETURN_IF_ERROR(vkp_plan_bind(plan, n_stages - 1, last, VKP_PLAN_GLOBAL, "y"));
  return vkp_plan_validate(plan);
}

static vkp_status_t vkp__create_synthetic(
    const vkp_pipeline_synthetic_stage_t *stages, const int32_t *ranks,
    int32_t n_stages, int64_t numel, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "pipeline"));
  VKP__ALLOCATOR_SCOPE(allocator);
  if (n_stages < 1 || numel < 1 || !stages)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "a synthetic pipeline needs >= 1 stage and >= 1 "
                           "element (got %d stages, %lld elements)",
                           (int)n_stages, (long long)numel);
  vkp_plan_t *plan = NULL;
  VKP_RETURN_IF_ERROR(vkp_plan_create("synthetic", &plan));
  vkp_status_t st = vkp__synthetic_plan(n_stages, numel, plan);
  for (int32_t i = 0; ranks && i < n_stages && !st; ++i)
    st = vkp_plan_set_stage_rank(plan, i, ranks[i]);
  vkp_pipeline_t *p = NULL;
  if (!st) st = vkp__pipeline_alloc(plan, options, &p);
  if (st) {
    vkp_plan_destroy(plan);
    return vkp_status_annotate(st, "creating a synthetic pipeline");
  }
  p->owned_plan = plan;
  for (int32_t i = 0; i < n_stages && !st; ++i) {
    if (plan->stages[i].rank != 0)
      st = vkp__mpi_proxy_load(plan, i, p->depth, &p->stages[i].target,
                               &p->stages[i].loaded);
    else
      st = vkp__synthetic_stage_new(&stages[i], &p->stages[i].target,
                                    &p->stages[i].loaded);
  }
  if (!st) st = vkp__pipeline_build(p);
  if (st) {
    vkp_pipeline_destroy(p);
    return vkp_status_annotate(st, "creating a synthetic pipeline");
  }
  *out_pipeline = p;
  return NULL;
}

vkp_status_t vkp_pipeline_create_synthetic(
    const vkp_pipeline_synthetic_stage_t *stages, int32_t n_stages,
    int64_t numel, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) {
  return vkp__create_synthetic(stages, NULL, n_stages, numel, options,
                               out_pipeline);
}

vkp_status_t vkp_pipeline_create_synthetic_ranks(
    const vkp_pipeline_synthetic_stage_t *stages, const int32_t *ranks,
    int32_t n_stages, int64_t numel, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) {
  return vkp__create_synthetic(stages, ranks, n_stages, numel, options,
                               out_pipeline);
}
