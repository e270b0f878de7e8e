// SPDX-License-Identifier: Apache-2.0
// Target registry and the run-a-whole-graph-on-one-target helper.
#include "vkpipe/target.h"

#include <math.h>
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
  vkp_allocator_t allocator;  // current while targets are added and brought up
};

vkp_status_t vkp_blob_alloc(vkp_blob_t *blob, size_t size) {
  blob->data = vkp__malloc(size ? size : 1);
  blob->size = blob->data ? size : 0;
  return blob->data ? NULL : VKP_OOM("compiled blob");
}

const char *vkp_precision_name(vkp_precision_t precision) {
  return precision == VKP_PRECISION_FP16 ? "fp16" : "fp32";
}

bool vkp_precision_parse(const char *text, vkp_precision_t *out_precision) {
  if (!text) return false;
  if (strcmp(text, "fp32") == 0) *out_precision = VKP_PRECISION_FP32;
  else if (strcmp(text, "fp16") == 0) *out_precision = VKP_PRECISION_FP16;
  else return false;
  return true;
}

void vkp_blob_deinit(vkp_blob_t *blob) {
  if (!blob) return;
  vkp__free(blob->data);
  blob->data = NULL;
  blob->size = 0;
}

vkp_status_t vkp_registry_create(vkp_registry_t **out_registry) {
  return vkp_registry_create_with_allocator(NULL, out_registry);
}

vkp_status_t vkp_registry_create_with_allocator(const vkp_allocator_t *allocator,
                                                vkp_registry_t **out_registry) {
  *out_registry = NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "target registry"));
  const vkp_allocator_t chosen = vkp__allocator_resolve(allocator);
  VKP__ALLOCATOR_SCOPE(&chosen);
  vkp_registry_t *r = vkp__calloc(1, sizeof(vkp_registry_t));
  if (!r) return VKP_OOM("target registry");
  r->allocator = chosen;
  *out_registry = r;
  return NULL;
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

// One entry of a part: whether it is set, and its name for the error.
typedef struct vkp__entry_check_t {
  bool set;
  const char *name;
} vkp__entry_check_t;

// NULL when every entry of `part` is set, else an error naming the first
// missing one.
static vkp_status_t vkp__check_part(const char *target, const char *part,
                                    const vkp__entry_check_t *entries, size_t n,
                                    const char *hint) {
  for (size_t i = 0; i < n; ++i)
    if (!entries[i].set)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "target '%s': the %s part lacks '%s' (%s)", target,
                             part, entries[i].name, hint);
  return NULL;
}

static vkp_status_t vkp__check_rates(const char *name, const vkp_target_rates_t *r) {
  if (!r) return NULL;
  if (!r->device || !r->device[0] || !(r->gflops > 0) || !(r->gbps > 0) ||
      !(r->launch_us >= 0) || !isfinite(r->gflops) || !isfinite(r->gbps) ||
      !isfinite(r->launch_us) || !(r->thread_compute_eff >= 0) ||
      !(r->thread_compute_eff <= 1) || !(r->thread_memory_eff >= 0) ||
      !(r->thread_memory_eff <= 1) || !(r->gemm_half_columns >= 0) ||
      !isfinite(r->gemm_half_columns) || r->n_kernels < 0 ||
      r->n_kernels > VKP_TARGET_MAX_KERNEL_RATES || (r->n_kernels > 0 && !r->kernels))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "target '%s': default rates need a device, positive "
                           "gflops and gbps, non-negative launch_us and "
                           "gemm_half_columns, thread efficiencies in 0..1 and "
                           "at most %d kernel rates",
                           name, VKP_TARGET_MAX_KERNEL_RATES);
  for (int32_t i = 0; i < r->n_kernels; ++i)
    if (!r->kernels[i].kernel || !r->kernels[i].kernel[0] ||
        strlen(r->kernels[i].kernel) > VKP_TARGET_MAX_KERNEL_NAME ||
        !(r->kernels[i].compute_scale > 0) || !isfinite(r->kernels[i].compute_scale) ||
        !(r->kernels[i].memory_scale >= 0) || !isfinite(r->kernels[i].memory_scale))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "target '%s': default kernel rate %d needs a name "
                             "of 1..%d characters, a positive compute factor and "
                             "a memory factor of 0 or more",
                             name, (int)i, VKP_TARGET_MAX_KERNEL_NAME);
  return NULL;
}

// Checks a target about to be registered as a whole: version, parts,
// capabilities.
static vkp_status_t vkp__check_target(const vkp_target_t *t) {
  const vkp_target_vtable_t *v = t->vtable;
  // Nothing else is read from a vtable of another version, not even its name
  // (a version 1 vtable began with the name, where api_version is now).
  if (v->api_version != VKP_TARGET_API_VERSION)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "a target vtable declares target interface version %u; "
                           "this vkpipe implements version %u (set .api_version "
                           "= VKP_TARGET_API_VERSION and build against this "
                           "vkpipe's headers; docs/targets.md)",
                           (unsigned)v->api_version,
                           (unsigned)VKP_TARGET_API_VERSION);
  const char *name = v->name ? v->name : "(unnamed)";
  const vkp__entry_check_t compiler[] = {
      {v->compiler.supports != NULL, "supports"},
      {v->compiler.compile != NULL, "compile"},
  };
  VKP_RETURN_IF_ERROR(vkp__check_part(name, "compile", compiler,
                                      sizeof compiler / sizeof compiler[0],
                                      "required: supports and compile"));
  const vkp__entry_check_t stage[] = {
      {v->stage.load != NULL, "load"},
      {v->stage.run != NULL, "run"},
      {v->stage.unload != NULL, "unload"},
  };
  VKP_RETURN_IF_ERROR(vkp__check_part(name, "stage", stage,
                                      sizeof stage / sizeof stage[0],
                                      "required: load, run and unload"));
  const vkp_target_device_ops_t *d = v->device;
  if (d) {
    const vkp__entry_check_t device[] = {
        {d->submit != NULL, "submit"},
        {d->staging_alloc != NULL, "staging_alloc"},
        {d->staging_free != NULL, "staging_free"},
        {d->bind_slots != NULL, "bind_slots"},
        {d->timeline_create != NULL, "timeline_create"},
        {d->timeline_destroy != NULL, "timeline_destroy"},
        {d->timeline_signal != NULL, "timeline_signal"},
        {d->timeline_wait != NULL, "timeline_wait"},
    };
    VKP_RETURN_IF_ERROR(vkp__check_part(
        name, "device", device, sizeof device / sizeof device[0],
        "a device part fills every entry; a host target leaves .device NULL"));
  }
  const vkp_target_caps_t *c = &t->caps;
  if (c->flags & ~(uint32_t)VKP_TARGET_KNOWN_FLAGS)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "target '%s' declares unknown capability flags 0x%x",
                           name, (unsigned)(c->flags & ~(uint32_t)VKP_TARGET_KNOWN_FLAGS));
  uint32_t device_flags = c->flags & VKP_TARGET_DEVICE_FLAGS;
  if (d && device_flags != VKP_TARGET_DEVICE_FLAGS)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "target '%s' has a device part but does not declare "
                           "async submit, host-visible staging and timeline "
                           "export (the runtime drives a device stage with all "
                           "three)",
                           name);
  if (!d && device_flags)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "target '%s' declares %s but has no device part",
                           name,
                           device_flags & VKP_TARGET_ASYNC_SUBMIT ? "async submit"
                           : device_flags & VKP_TARGET_HOST_VISIBLE_STAGING
                               ? "host-visible staging"
                               : "timeline export");
  if (!(c->dtypes & VKP_DTYPE_SET_ALL) || (c->dtypes & ~VKP_DTYPE_SET_ALL))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "target '%s' declares no dtypes, or unknown ones "
                           "(caps.dtypes 0x%x)",
                           name, (unsigned)c->dtypes);
  return vkp__check_rates(name, c->default_rates);
}

vkp_status_t vkp_registry_add(vkp_registry_t *registry,
                              const vkp_target_vtable_t *vtable, void *impl) {
  VKP__ALLOCATOR_SCOPE(&registry->allocator);
  if (!vtable) {
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "target vtable is NULL");
  }
  vkp_target_t orphan = {.vtable = vtable, .impl = impl, .caps = vtable->caps};
  vkp_status_t st = NULL;
  // The version first: nothing else of a vtable of another layout is read.
  if (vtable->api_version == VKP_TARGET_API_VERSION && vtable->query_caps)
    vtable->query_caps(&orphan, &orphan.caps);
  st = vkp__check_target(&orphan);
  // A vtable of another version has an unknown layout: its destroy is not
  // called, and `impl` is left to the caller.
  vkp__registry_entry_t *e = NULL;
  if (!st) st = vkp__registry_append(registry, vtable->name, &e);
  if (st) {
    if (vtable->api_version == VKP_TARGET_API_VERSION && vtable->destroy)
      vtable->destroy(&orphan);
    return st;
  }
  e->target = orphan;
  return NULL;
}

bool vkp_target_is_device(const vkp_target_t *target) {
  return (target->caps.flags & VKP_TARGET_DEVICE_FLAGS) == VKP_TARGET_DEVICE_FLAGS;
}

// Whether every tensor `node` reads or writes fits the declared dtypes and
// limits; when not, the reason names the tensor.
static bool vkp__within_caps(const vkp_target_t *target, const vkp_graph_t *graph,
                             const vkp_node_t *node, char *reason,
                             size_t reason_size) {
  const vkp_target_caps_t *c = &target->caps;
  for (int32_t k = 0; k < node->n_inputs + node->n_outputs; ++k) {
    int32_t id = k < node->n_inputs ? node->inputs[k] : node->outputs[k - node->n_inputs];
    if (id < 0) continue;
    const vkp_value_t *v = &graph->values[id];
    if (!(c->dtypes & VKP_DTYPE_SET(v->dtype))) {
      snprintf(reason, reason_size, "'%s' is %s, a dtype target '%s' does not declare",
               v->name, vkp_dtype_name(v->dtype), target->vtable->name);
      return false;
    }
    size_t bytes = 0;
    if (c->limits.max_tensor_bytes &&
        (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes) ||
         bytes > c->limits.max_tensor_bytes)) {
      snprintf(reason, reason_size,
               "'%s' is larger than target '%s''s limit of %llu bytes per tensor",
               v->name, target->vtable->name,
               (unsigned long long)c->limits.max_tensor_bytes);
      return false;
    }
  }
  return true;
}

bool vkp_target_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                         const vkp_node_t *node, char *reason,
                         size_t reason_size) {
  if (reason_size) reason[0] = '\0';
  // The target's own answer first: its reason is the more precise one.
  if (!target->vtable->compiler.supports(target, graph, node, reason, reason_size))
    return false;
  return vkp__within_caps(target, graph, node, reason, reason_size);
}

vkp_status_t vkp_registry_add_unavailable(vkp_registry_t *registry,
                                          const char *name, const char *reason) {
  VKP__ALLOCATOR_SCOPE(&registry->allocator);
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

int32_t vkp_registry_count_all(const vkp_registry_t *registry) {
  return registry->count;
}

const char *vkp_registry_name(const vkp_registry_t *registry, int32_t index) {
  return index >= 0 && index < registry->count ? registry->entries[index]->name : NULL;
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
    if (vkp_target_supports(target, graph, n, reason, sizeof reason))
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
    VKP_RETURN_IF_ERROR(vkp_value_check_tensor(v, &inputs[i], "input"));
  }
  VKP_RETURN_IF_ERROR(vkp_target_check_graph(target, graph));
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  vkp_status_t st = target->vtable->compiler.compile(target, graph, options, &blob);
  if (!st) st = target->vtable->stage.load(target, graph, blob.data, blob.size, &stage);
  for (int32_t i = 0; i < graph->n_outputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->outputs[i]];
    st = vkp_tensor_init(&outputs[i], v->dtype, v->rank, v->shape);
  }
  if (!st) st = target->vtable->stage.run(stage, inputs, outputs);
  if (stage) target->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  if (st) {
    for (int32_t i = 0; i < graph->n_outputs; ++i) vkp_tensor_deinit(&outputs[i]);
    return vkp_status_annotate(st, "running graph '%s' on target '%s'",
                               graph->name, target->vtable->name);
  }
  return NULL;
}
