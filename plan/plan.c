// SPDX-License-Identifier: Apache-2.0
// Pipeline plan: construction and validation.
#include "vkpipe/plan.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

vkp_status_t vkp_plan_create(const char *name, vkp_plan_t **out_plan) {
  return vkp_plan_create_with_allocator(name, NULL, out_plan);
}

vkp_status_t vkp_plan_create_with_allocator(const char *name,
                                            const vkp_allocator_t *allocator,
                                            vkp_plan_t **out_plan) {
  *out_plan = NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "plan"));
  const vkp_allocator_t chosen = vkp__allocator_resolve(allocator);
  VKP__ALLOCATOR_SCOPE(&chosen);
  vkp_plan_t *p = vkp__calloc(1, sizeof(*p));
  if (!p) return VKP_OOM("plan");
  p->name = vkp__strdup(name ? name : "plan");
  if (!p->name) {
    vkp__free(p);
    return VKP_OOM("plan");
  }
  p->allocator = chosen;
  *out_plan = p;
  return NULL;
}

void vkp_plan_destroy(vkp_plan_t *plan) {
  if (!plan) return;
  for (int32_t i = 0; i < plan->n_stages; ++i) {
    vkp__free(plan->stages[i].name);
    vkp__free(plan->stages[i].target);
    vkp__free(plan->stages[i].graph_file);
    vkp_graph_destroy(plan->stages[i].graph);
    for (int32_t f = 0; f < plan->stages[i].n_fallbacks; ++f) {
      vkp__free(plan->stages[i].fallbacks[f].node);
      vkp__free(plan->stages[i].fallbacks[f].instead_of);
      vkp__free(plan->stages[i].fallbacks[f].reason);
    }
    vkp__free(plan->stages[i].fallbacks);
    vkp__free(plan->stages[i].cpu_affinity);
  }
  vkp__free(plan->stages);
  for (int32_t i = 0; i < plan->n_bindings; ++i) {
    vkp__free(plan->bindings[i].src_name);
    vkp__free(plan->bindings[i].dst_name);
  }
  vkp__free(plan->bindings);
  for (int32_t i = 0; i < plan->n_inputs; ++i) vkp__free(plan->inputs[i]);
  vkp__free(plan->inputs);
  for (int32_t i = 0; i < plan->n_outputs; ++i) vkp__free(plan->outputs[i]);
  vkp__free(plan->outputs);
  vkp__free(plan->source);
  vkp__free(plan->name);
  vkp__free(plan);
}

static vkp_status_t vkp__replace_string(char **slot, const char *value) {
  char *copy = NULL;
  if (value) {
    copy = vkp__strdup(value);
    if (!copy) return VKP_OOM("plan string");
  }
  vkp__free(*slot);
  *slot = copy;
  return NULL;
}

vkp_status_t vkp_plan_set_source(vkp_plan_t *plan, const char *source) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  return vkp__replace_string(&plan->source, source);
}

vkp_status_t vkp_plan_set_stage_file(vkp_plan_t *plan, int32_t stage,
                                     const char *graph_file) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  if (stage < 0 || stage >= plan->n_stages)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "stage index %d", (int)stage);
  return vkp__replace_string(&plan->stages[stage].graph_file, graph_file);
}

vkp_status_t vkp_plan_set_stage_cpu_affinity(vkp_plan_t *plan, int32_t stage, int32_t n,
                                             const int32_t *cpus) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  if (stage < 0 || stage >= plan->n_stages)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "stage index %d", (int)stage);
  vkp_plan_stage_t *s = &plan->stages[stage];
  if (n < 0 || n > VKP_PLAN_MAX_AFFINITY)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "stage '%s': cpu_affinity lists %d cpus; at most %d", s->name,
                           (int)n, VKP_PLAN_MAX_AFFINITY);
  for (int32_t i = 0; i < n; ++i) {
    if (cpus[i] < 0 || cpus[i] > VKP_PLAN_MAX_CPU)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "stage '%s': cpu_affinity entry %d is %d, not a cpu number "
                             "(0..%d)",
                             s->name, (int)i, (int)cpus[i], VKP_PLAN_MAX_CPU);
    for (int32_t j = 0; j < i; ++j)
      if (cpus[j] == cpus[i])
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "stage '%s': cpu_affinity lists cpu %d twice", s->name,
                               (int)cpus[i]);
  }
  int32_t *copy = NULL;
  if (n > 0) {
    copy = vkp__calloc((size_t)n, sizeof *copy);
    if (!copy) return VKP_OOM("cpu_affinity");
    memcpy(copy, cpus, (size_t)n * sizeof *copy);
  }
  vkp__free(s->cpu_affinity);
  s->cpu_affinity = copy;
  s->n_cpu_affinity = n;
  return NULL;
}

vkp_status_t vkp_plan_set_stage_rank(vkp_plan_t *plan, int32_t stage,
                                     int32_t rank) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  if (stage < 0 || stage >= plan->n_stages)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "stage index %d", (int)stage);
  if (rank < 0 || rank > VKP_PLAN_MAX_RANK)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "stage '%s': rank %d out of range 0..%d",
                           plan->stages[stage].name, (int)rank, VKP_PLAN_MAX_RANK);
  plan->stages[stage].rank = rank;
  return NULL;
}

vkp_status_t vkp_plan_set_stage_replicas(vkp_plan_t *plan, int32_t stage,
                                         int32_t replicas) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  if (stage < 0 || stage >= plan->n_stages)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "stage index %d", (int)stage);
  if (replicas < 1 || replicas > VKP_PLAN_MAX_REPLICAS)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "stage '%s': %d replicas out of range 1..%d",
                           plan->stages[stage].name, (int)replicas, VKP_PLAN_MAX_REPLICAS);
  plan->stages[stage].replicas = replicas;
  return NULL;
}

vkp_status_t vkp_plan_add_stage(vkp_plan_t *plan, const char *name,
                                const char *target, vkp_graph_t *graph,
                                int32_t *out_stage) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  vkp_status_t st = NULL;
  if (!name || !name[0] || !target || !target[0] || !graph) {
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "stage needs a name, a target and a graph");
    goto fail;
  }
  if (vkp_plan_find_stage(plan, name) >= 0) {
    st = vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                         "stage '%s' is defined twice", name);
    goto fail;
  }
  vkp_plan_stage_t *stages = vkp__reallocarray(
      plan->stages, (size_t)plan->n_stages + 1, sizeof(*stages));
  if (!stages) {
    st = VKP_OOM("plan stages");
    goto fail;
  }
  plan->stages = stages;
  vkp_plan_stage_t *s = &plan->stages[plan->n_stages];
  memset(s, 0, sizeof(*s));
  s->name = vkp__strdup(name);
  s->target = vkp__strdup(target);
  if (!s->name || !s->target) {
    vkp__free(s->name);
    vkp__free(s->target);
    st = VKP_OOM("plan stage");
    goto fail;
  }
  s->graph = graph;
  if (out_stage) *out_stage = plan->n_stages;
  plan->n_stages++;
  return NULL;
fail:
  vkp_graph_destroy(graph);
  return st;
}

static vkp_status_t vkp__append_name(char ***list, int32_t *count,
                                     const char *name, const char *what) {
  if (!name || !name[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "%s has an empty name",
                           what);
  for (int32_t i = 0; i < *count; ++i)
    if (strcmp((*list)[i], name) == 0)
      return vkp_status_make(VKP_STATUS_ALREADY_EXISTS, "%s '%s' declared twice",
                             what, name);
  char **grown = vkp__reallocarray(*list, (size_t)*count + 1, sizeof(char *));
  if (!grown) return VKP_OOM(what);
  *list = grown;
  grown[*count] = vkp__strdup(name);
  if (!grown[*count]) return VKP_OOM(what);
  ++*count;
  return NULL;
}

vkp_status_t vkp_plan_add_global_input(vkp_plan_t *plan, const char *name) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  return vkp__append_name(&plan->inputs, &plan->n_inputs, name, "global input");
}

vkp_status_t vkp_plan_add_global_output(vkp_plan_t *plan, const char *name) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  return vkp__append_name(&plan->outputs, &plan->n_outputs, name,
                          "global output");
}

vkp_status_t vkp_plan_bind(vkp_plan_t *plan, int32_t src_stage,
                           const char *src_name, int32_t dst_stage,
                           const char *dst_name) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  vkp_plan_binding_t *b = vkp__reallocarray(
      plan->bindings, (size_t)plan->n_bindings + 1, sizeof(*b));
  if (!b) return VKP_OOM("plan bindings");
  plan->bindings = b;
  vkp_plan_binding_t *nb = &plan->bindings[plan->n_bindings];
  nb->src_stage = src_stage;
  nb->dst_stage = dst_stage;
  nb->src_name = vkp__strdup(src_name ? src_name : "");
  nb->dst_name = vkp__strdup(dst_name ? dst_name : "");
  if (!nb->src_name || !nb->dst_name) {
    vkp__free(nb->src_name);
    vkp__free(nb->dst_name);
    return VKP_OOM("plan binding");
  }
  plan->n_bindings++;
  return NULL;
}

vkp_status_t vkp_plan_add_fallback(vkp_plan_t *plan, int32_t stage,
                                   const char *node, const char *instead_of,
                                   const char *reason) {
  VKP__ALLOCATOR_SCOPE(&plan->allocator);
  if (stage < 0 || stage >= plan->n_stages)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "no stage %d", (int)stage);
  vkp_plan_stage_t *s = &plan->stages[stage];
  vkp_plan_fallback_t *grown = vkp__reallocarray(
      s->fallbacks, (size_t)s->n_fallbacks + 1, sizeof(*grown));
  if (!grown) return VKP_OOM("plan fallbacks");
  s->fallbacks = grown;
  vkp_plan_fallback_t *f = &s->fallbacks[s->n_fallbacks];
  f->node = vkp__strdup(node);
  f->instead_of = vkp__strdup(instead_of);
  f->reason = vkp__strdup(reason);
  if (!f->node || !f->instead_of || !f->reason) {
    vkp__free(f->node);
    vkp__free(f->instead_of);
    vkp__free(f->reason);
    return VKP_OOM("plan fallback");
  }
  s->n_fallbacks++;
  return NULL;
}

int32_t vkp_plan_find_stage(const vkp_plan_t *plan, const char *name) {
  for (int32_t i = 0; name && i < plan->n_stages; ++i)
    if (strcmp(plan->stages[i].name, name) == 0) return i;
  return -1;
}

// The stage value at the stage end of the first binding that names global
// input (or output) `name`.
static const vkp_value_t *vkp__global_value(const vkp_plan_t *plan, bool output,
                                            const char *name) {
  for (int32_t b = 0; b < plan->n_bindings; ++b) {
    const vkp_plan_binding_t *bd = &plan->bindings[b];
    int32_t stage = output ? bd->src_stage : bd->dst_stage;
    int32_t global = output ? bd->dst_stage : bd->src_stage;
    const char *global_name = output ? bd->dst_name : bd->src_name;
    if (global != VKP_PLAN_GLOBAL || stage < 0 || stage >= plan->n_stages ||
        strcmp(global_name, name) != 0)
      continue;
    const vkp_graph_t *g = plan->stages[stage].graph;
    int32_t v = vkp_graph_find_value(g, output ? bd->src_name : bd->dst_name);
    return v >= 0 ? &g->values[v] : NULL;
  }
  return NULL;
}

const vkp_value_t *vkp_plan_input_value(const vkp_plan_t *plan, int32_t index) {
  if (index < 0 || index >= plan->n_inputs) return NULL;
  return vkp__global_value(plan, false, plan->inputs[index]);
}

const vkp_value_t *vkp_plan_output_value(const vkp_plan_t *plan, int32_t index) {
  if (index < 0 || index >= plan->n_outputs) return NULL;
  return vkp__global_value(plan, true, plan->outputs[index]);
}
