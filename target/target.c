// SPDX-License-Identifier: Apache-2.0
// Target registry and the run-a-whole-graph-on-one-target helper.
#include "vkpipe/target.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "base/tensor_check.h"

typedef struct vkp__registry_entry_t {
  vkp_target_t target;  // vtable NULL when unavailable
  char *name;
  char *unavailable_reason;
} vkp__registry_entry_t;

struct vkp_registry_t {
  vkp__registry_entry_t **entries;
  int32_t count;
};

vkp_status_t vkp_blob_alloc(vkp_blob_t *blob, size_t size) {
  blob->data = vkp__malloc(size ? size : 1);
  blob->size = blob->data ? size : 0;
  return blob->data ? NULL : VKP_OOM("compiled blob");
}

void vkp_blob_deinit(vkp_blob_t *blob) {
  if (!blob) return;
  vkp__free(blob->data);
  blob->data = NULL;
  blob->size = 0;
}

vkp_status_t vkp_registry_create(vkp_registry_t **out_registry) {
  *out_registry = vkp__calloc(1, sizeof(vkp_registry_t));
  return *out_registry ? NULL : VKP_OOM("target registry");
}

void vkp_registry_destroy(vkp_registry_t *registry) {
  if (!registry) return;
  for (int32_t i = registry->count - 1; i >= 0; --i) {
    vkp__registry_entry_t *e = registry->entries[i];
    if (e->target.vtable && e->target.vtable->destroy)
      e->target.vtable->destroy(&e->target);
    vkp__free(e->name);
    vkp__free(e->unavailable_reason);
    vkp__free(e);
  }
  vkp__free(registry->entries);
  vkp__free(registry);
}

static vkp__registry_entry_t *vkp__registry_entry(const vkp_registry_t *r,
                                                  const char *name) {
  for (int32_t i = 0; r && name && i < r->count; ++i)
    if (strcmp(r->entries[i]->name, name) == 0) return r->entries[i];
  return NULL;
}

static vkp_status_t vkp__registry_append(vkp_registry_t *r, const char *name,
                                         vkp__registry_entry_t **out) {
  if (!name || !name[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "target has no name");
  if (vkp__registry_entry(r, name))
    return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                           "a target named '%s' is already registered", name);
  vkp__registry_entry_t **entries = vkp__reallocarray(
      r->entries, (size_t)r->count + 1, sizeof(*entries));
  if (!entries) return VKP_OOM("target registry");
  r->entries = entries;
  vkp__registry_entry_t *e = vkp__calloc(1, sizeof(*e));
  if (!e) return VKP_OOM("target registry entry");
  e->name = vkp__strdup(name);
  if (!e->name) {
    vkp__free(e);
    return VKP_OOM("target name");
  }
  r->entries[r->count++] = e;
  *out = e;
  return NULL;
}

vkp_status_t vkp_registry_add(vkp_registry_t *registry,
                              const vkp_target_vtable_t *vtable, void *impl) {
  vkp_target_t orphan = {.vtable = vtable, .impl = impl};
  vkp_status_t st = NULL;
  if (!vtable) {
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "target vtable is NULL");
  }
  if (!vtable->supports || !vtable->compile || !vtable->load || !vtable->run ||
      !vtable->unload) {
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "target '%s' lacks a required entry (supports, "
                         "compile, load, run and unload are required)",
                         vtable->name ? vtable->name : "(unnamed)");
  }
  vkp__registry_entry_t *e = NULL;
  if (!st) st = vkp__registry_append(registry, vtable->name, &e);
  if (st) {
    if (vtable->destroy) vtable->destroy(&orphan);
    return st;
  }
  e->target = orphan;
  return NULL;
}

vkp_status_t vkp_registry_add_unavailable(vkp_registry_t *registry,
                                          const char *name, const char *reason) {
  vkp__registry_entry_t *e = NULL;
  VKP_RETURN_IF_ERROR(vkp__registry_append(registry, name, &e));
  e->unavailable_reason = vkp__strdup(reason ? reason : "unavailable");
  return e->unavailable_reason ? NULL : VKP_OOM("target reason");
}

const vkp_target_t *vkp_registry_find(const vkp_registry_t *registry,
                                      const char *name) {
  vkp__registry_entry_t *e = vkp__registry_entry(registry, name);
  return e && e->target.vtable ? &e->target : NULL;
}

const char *vkp_registry_unavailable_reason(const vkp_registry_t *registry,
                                            const char *name) {
  vkp__registry_entry_t *e = vkp__registry_entry(registry, name);
  return e && !e->target.vtable ? e->unavailable_reason : NULL;
}

int32_t vkp_registry_count(const vkp_registry_t *registry) {
  int32_t n = 0;
  for (int32_t i = 0; i < registry->count; ++i)
    if (registry->entries[i]->target.vtable) ++n;
  return n;
}

const vkp_target_t *vkp_registry_get(const vkp_registry_t *registry,
                                     int32_t index) {
  for (int32_t i = 0; i < registry->count; ++i) {
    if (!registry->entries[i]->target.vtable) continue;
    if (index-- == 0) return &registry->entries[i]->target;
  }
  return NULL;
}

vkp_status_t vkp_registry_lookup(const vkp_registry_t *registry,
                                 const char *name,
                                 const vkp_target_t **out_target) {
  *out_target = vkp_registry_find(registry, name);
  if (*out_target) return NULL;
  const char *why = vkp_registry_unavailable_reason(registry, name);
  if (why)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "target '%s' is unavailable: %s", name, why);
  char known[256] = "";
  size_t used = 0;
  for (int32_t i = 0; i < registry->count; ++i) {
    int w = snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                     registry->entries[i]->name);
    if (w < 0 || (size_t)w >= sizeof known - used) break;
    used += (size_t)w;
  }
  return vkp_status_make(VKP_STATUS_NOT_FOUND,
                         "unknown target '%s' (registered: %s)",
                         name ? name : "", used ? known : "none");
}

// ---------------------------------------------------------------------------

vkp_status_t vkp_target_check_graph(const vkp_target_t *target,
                                    const vkp_graph_t *graph) {
  vkp__sb_t list = {0};
  int32_t bad = 0;
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    const vkp_node_t *n = &graph->nodes[i];
    char reason[256] = "";
    if (target->vtable->supports(target, graph, n, reason, sizeof reason))
      continue;
    ++bad;
    vkp__sb_printf(&list, "\n  node '%s' (%s): %s", n->name, vkp_op_name(n->op),
                   reason[0] ? reason : "not supported");
  }
  if (!bad) return NULL;
  vkp_status_t st = vkp__sb_status(&list, "unsupported-node list");
  if (!st)
    st = vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "target '%s' cannot run %d node%s of graph '%s':%s",
                         target->vtable->name, (int)bad, bad == 1 ? "" : "s",
                         graph->name, list.data);
  vkp__sb_deinit(&list);
  return st;
}

vkp_status_t vkp_target_run_graph(const vkp_target_t *target,
                                  const vkp_graph_t *graph,
                                  const vkp_compile_options_t *options,
                                  const vkp_tensor_t *inputs,
                                  vkp_tensor_t *outputs) {
  vkp_compile_options_t defaults = {0};
  if (!options) options = &defaults;
  for (int32_t i = 0; i < graph->n_outputs; ++i)
    memset(&outputs[i], 0, sizeof(outputs[i]));
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "graph '%s' is not validated", graph->name);
  for (int32_t i = 0; i < graph->n_inputs; ++i) {
    const vkp_value_t *v = &graph->values[graph->inputs[i]];
    VKP_RETURN_IF_ERROR(vkp__tensor_check_matches(&inputs[i], "input", v->name,
                                                  v->dtype, v->rank, v->shape));
  }
  VKP_RETURN_IF_ERROR(vkp_target_check_graph(target, graph));
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  vkp_status_t st = target->vtable->compile(target, graph, options, &blob);
  if (!st) st = target->vtable->load(target, graph, blob.data, blob.size, &stage);
  for (int32_t i = 0; i < graph->n_outputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->outputs[i]];
    st = vkp_tensor_init(&outputs[i], v->dtype, v->rank, v->shape);
  }
  if (!st) st = target->vtable->run(stage, inputs, outputs);
  if (stage) target->vtable->unload(stage);
  vkp_blob_deinit(&blob);
  if (st) {
    for (int32_t i = 0; i < graph->n_outputs; ++i) vkp_tensor_deinit(&outputs[i]);
    return vkp_status_annotate(st, "running graph '%s' on target '%s'",
                               graph->name, target->vtable->name);
  }
  return NULL;
}
