// SPDX-License-Identifier: Apache-2.0
// The cost model: per-op work, profiles (defaults, JSON) and estimates.
#include "vkpipe/cost.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/json_hooks.h"
#include "base/status_macros.h"
#include "target/builtin.h"

// ---------------------------------------------------------------------------
// Per-op work

static double vkp__numel(const vkp_value_t *v) {
  double n = 1.0;
  for (int32_t i = 0; i < v->rank; ++i) n *= (double)v->shape[i];
  return n;
}

static double vkp__bytes(const vkp_value_t *v) {
  return vkp__numel(v) * (double)vkp_dtype_size(v->dtype);
}

vkp_status_t vkp_op_cost(const vkp_graph_t *graph, const vkp_node_t *node,
                         vkp_op_cost_t *out_cost) {
  out_cost->flops = 0.0;
  out_cost->bytes = 0.0;
  out_cost->weight_bytes = 0.0;
  double in_bytes = 0.0, out_bytes = 0.0, weight_bytes = 0.0;
  for (int32_t i = 0; i < node->n_inputs; ++i) {
    if (node->inputs[i] < 0) continue;
    const vkp_value_t *v = &graph->values[node->inputs[i]];
    if (!v->shape_known)
      return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                             "node '%s': shape of input '%s' is unknown",
                             node->name, v->name);
    in_bytes += vkp__bytes(v);
    if (v->kind == VKP_VALUE_CONSTANT) weight_bytes += vkp__bytes(v);
  }
  for (int32_t i = 0; i < node->n_outputs; ++i) {
    const vkp_value_t *v = &graph->values[node->outputs[i]];
    if (!v->shape_known)
      return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                             "node '%s': shape of output '%s' is unknown",
                             node->name, v->name);
    out_bytes += vkp__bytes(v);
  }
  const vkp_value_t *x = node->n_inputs > 0 && node->inputs[0] >= 0
                             ? &graph->values[node->inputs[0]]
                             : NULL;
  const vkp_value_t *w = node->n_inputs > 1 && node->inputs[1] >= 0
                             ? &graph->values[node->inputs[1]]
                             : NULL;
  const vkp_value_t *y = &graph->values[node->outputs[0]];
  double out_n = vkp__numel(y);
  double flops = 0.0, bytes = in_bytes + out_bytes;
  // The op table gives each op a cost class and factor (include/vkpipe/ops.h).
  double factor = vkp_op_cost_factor(node->op);
  switch (vkp_op_cost_class(node->op)) {
    case VKP_OP_COST_VIEW:
      // No arithmetic and, in a fused stage, no memory traffic.
      bytes = 0.0;
      break;
    case VKP_OP_COST_MOVE:
      break;
    case VKP_OP_COST_SLICE:
      bytes = 2.0 * out_bytes;  // reads what it keeps, writes it
      break;
    case VKP_OP_COST_ELEMWISE:
    case VKP_OP_COST_NORM:
      flops = factor * out_n;
      break;
    case VKP_OP_COST_REDUCE:
      flops = factor * (x ? vkp__numel(x) : out_n);
      break;
    case VKP_OP_COST_MATMUL: {
      double k = x && x->rank > 0 ? (double)x->shape[x->rank - 1] : 1.0;
      flops = factor * out_n * k;
      break;
    }
    case VKP_OP_COST_GEMM: {
      int64_t ta = vkp_node_int(node, "transA");
      double k = x && x->rank == 2 ? (double)x->shape[ta ? 0 : 1] : 1.0;
      flops = factor * out_n * k + (node->n_inputs > 2 && node->inputs[2] >= 0
                                        ? 2.0 * out_n
                                        : 0.0);
      break;
    }
    case VKP_OP_COST_CONV: {
      // Weight [Cout, Cin/group, k...]: each output element is a dot
      // product over Cin/group * prod(k) taps.
      double taps = w && w->rank >= 3 && w->shape[0] > 0
                        ? vkp__numel(w) / (double)w->shape[0]
                        : 1.0;
      flops = factor * out_n * taps + (node->n_inputs > 2 && node->inputs[2] >= 0
                                           ? out_n
                                           : 0.0);
      break;
    }
    case VKP_OP_COST_CONV_TRANSPOSE: {
      // Weight [Cin, Cout/group, k...]: each input element spreads over
      // Cout/group * prod(k) outputs.
      double taps = w && w->rank >= 3 && w->shape[0] > 0
                        ? vkp__numel(w) / (double)w->shape[0]
                        : 1.0;
      flops = factor * (x ? vkp__numel(x) : out_n) * taps +
              (node->n_inputs > 2 && node->inputs[2] >= 0 ? out_n : 0.0);
      break;
    }
    case VKP_OP_COST_WINDOW: {
      const int64_t *k = NULL;
      double window = 1.0;
      int32_t nk = vkp_node_attr_ints(node, "kernel_shape", &k);
      for (int32_t i = 0; i < nk; ++i) window *= (double)k[i];
      flops = factor * out_n * window;
      break;
    }
    case VKP_OP_COST_ATTENTION: {
      // Per query row: Lk dot products of length D, a softmax over Lk
      // scores (~5 flops each), Dv weighted sums of length Lk.
      double d = x && x->rank > 0 ? (double)x->shape[x->rank - 1] : 1.0;
      double lk = w && w->rank > 0 ? (double)w->shape[w->rank - 1] : 1.0;
      double dv = y->rank > 0 && y->shape[y->rank - 1] > 0
                      ? (double)y->shape[y->rank - 1]
                      : 1.0;
      double rows = out_n / dv;
      flops = rows * lk * (factor * d + 5.0 + factor * dv);
      break;
    }
    case VKP_OP_COST_COUNT:
      break;
  }
  out_cost->flops = flops;
  out_cost->bytes = bytes;
  out_cost->weight_bytes = bytes > 0 ? (weight_bytes < bytes ? weight_bytes : bytes) : 0.0;
  return NULL;
}

// ---------------------------------------------------------------------------
// Profiles

#define VKP__DEFAULT_LATENCY_US 50.0
#define VKP__DEFAULT_LINK_GBPS 8.0
// Same device, no link listed: a copy through a staging slot.
#define VKP__SAME_DEVICE_GBPS 20.0


void vkp_profile_destroy(vkp_profile_t *p) {
  if (!p) return;
  for (int32_t i = 0; i < p->n_targets; ++i) {
    vkp__free(p->targets[i].target);
    vkp__free(p->targets[i].device);
  }
  vkp__free(p->targets);
  for (int32_t i = 0; i < p->n_links; ++i) {
    vkp__free(p->links[i].from);
    vkp__free(p->links[i].to);
  }
  vkp__free(p->links);
  for (int32_t i = 0; i < p->n_devices; ++i) vkp__free(p->devices[i].name);
  vkp__free(p->devices);
  vkp__free(p->host_device);
  vkp__free(p);
}

vkp_status_t vkp_profile_set_target(vkp_profile_t *p,
                                    const vkp_profile_target_t *rates) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  if (!rates->target || !rates->target[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target entry has no name");
  if (!(rates->gflops > 0) || !(rates->gbps > 0) || !(rates->launch_us >= 0) ||
      !isfinite(rates->gflops) || !isfinite(rates->gbps) ||
      !isfinite(rates->launch_us))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': gflops and gbps must be "
                           "positive and launch_us non-negative",
                           rates->target);
  if (!(rates->thread_compute_eff >= 0 && rates->thread_compute_eff <= 1) ||
      !(rates->thread_memory_eff >= 0 && rates->thread_memory_eff <= 1))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': thread efficiencies must be "
                           "in 0..1",
                           rates->target);
  if (!(rates->thread_split_us >= 0) || !isfinite(rates->thread_split_us))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': thread_split_us must be "
                           "non-negative",
                           rates->target);
  if (!(rates->gemm_half_columns >= 0) || !isfinite(rates->gemm_half_columns))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': gemm_half_columns must be "
                           "non-negative",
                           rates->target);
  char *device = vkp__strdup(rates->device ? rates->device : rates->target);
  if (!device) return VKP_OOM("profile device name");
  for (int32_t i = 0; i < p->n_targets; ++i) {
    if (strcmp(p->targets[i].target, rates->target) != 0) continue;
    vkp__free(p->targets[i].device);
    p->targets[i].device = device;
    p->targets[i].gflops = rates->gflops;
    p->targets[i].gbps = rates->gbps;
    p->targets[i].launch_us = rates->launch_us;
    p->targets[i].thread_compute_eff = rates->thread_compute_eff;
    p->targets[i].thread_memory_eff = rates->thread_memory_eff;
    p->targets[i].thread_split_us = rates->thread_split_us;
    p->targets[i].gemm_half_columns = rates->gemm_half_columns;
    return NULL;
  }
  vkp_profile_target_t *grown = vkp__reallocarray(
      p->targets, (size_t)p->n_targets + 1, sizeof(*grown));
  if (!grown) {
    vkp__free(device);
    return VKP_OOM("profile targets");
  }
  p->targets = grown;
  vkp_profile_target_t *t = &p->targets[p->n_targets];
  t->target = vkp__strdup(rates->target);
  if (!t->target) {
    vkp__free(device);
    return VKP_OOM("profile target name");
  }
  t->device = device;
  t->gflops = rates->gflops;
  t->gbps = rates->gbps;
  t->launch_us = rates->launch_us;
  t->thread_compute_eff = rates->thread_compute_eff;
  t->thread_memory_eff = rates->thread_memory_eff;
  t->thread_split_us = rates->thread_split_us;
  t->gemm_half_columns = rates->gemm_half_columns;
  t->n_kernels = 0;
  p->n_targets++;
  return NULL;
}

vkp_status_t vkp_profile_set_kernel(vkp_profile_t *p, const char *target,
                                    const char *kernel, double compute_scale) {
  return vkp_profile_set_kernel_rates(p, target, kernel, compute_scale, 0.0);
}

vkp_status_t vkp_profile_set_kernel_rates(vkp_profile_t *p, const char *target,
                                          const char *kernel, double compute_scale,
                                          double memory_scale) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  vkp_profile_target_t *t = NULL;
  for (int32_t i = 0; target && i < p->n_targets; ++i)
    if (strcmp(p->targets[i].target, target) == 0) t = &p->targets[i];
  if (!t)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile has no target '%s' for kernel '%s'",
                           target ? target : "?", kernel ? kernel : "?");
  if (!kernel || !kernel[0] || strlen(kernel) >= sizeof t->kernels[0].name)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': kernel class names are 1..%d "
                           "characters",
                           target, (int)sizeof t->kernels[0].name - 1);
  if (!(compute_scale > 0) || !isfinite(compute_scale))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': kernel '%s' needs a positive "
                           "factor",
                           target, kernel);
  if (!(memory_scale >= 0) || !isfinite(memory_scale))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': kernel '%s' needs a memory factor "
                           "of 0 or more",
                           target, kernel);
  for (int32_t i = 0; i < t->n_kernels; ++i) {
    if (strcmp(t->kernels[i].name, kernel)) continue;
    t->kernels[i].compute_scale = compute_scale;
    t->kernels[i].memory_scale = memory_scale;
    return NULL;
  }
  if (t->n_kernels >= VKP_PROFILE_MAX_KERNELS)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile target '%s': more than %d kernel classes",
                           target, VKP_PROFILE_MAX_KERNELS);
  vkp_profile_kernel_t *k = &t->kernels[t->n_kernels++];
  snprintf(k->name, sizeof k->name, "%s", kernel);
  k->compute_scale = compute_scale;
  k->memory_scale = memory_scale;
  return NULL;
}

double vkp_profile_kernel_scale(const vkp_profile_target_t *rates,
                                const char *kernel) {
  for (int32_t i = 0; kernel && i < rates->n_kernels; ++i)
    if (strcmp(rates->kernels[i].name, kernel) == 0)
      return rates->kernels[i].compute_scale;
  return 1.0;
}

double vkp_profile_kernel_memory_scale(const vkp_profile_target_t *rates,
                                       const char *kernel) {
  for (int32_t i = 0; kernel && i < rates->n_kernels; ++i)
    if (strcmp(rates->kernels[i].name, kernel) == 0) return rates->kernels[i].memory_scale;
  return 0.0;
}

vkp_status_t vkp_profile_set_link(vkp_profile_t *p, const char *from,
                                  const char *to, double latency_us,
                                  double gbps) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  if (!from || !to || !from[0] || !to[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile link needs 'from' and 'to' devices");
  if (!(gbps > 0) || !(latency_us >= 0) || !isfinite(gbps) ||
      !isfinite(latency_us))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile link %s -> %s: gbps must be positive and "
                           "latency_us non-negative",
                           from, to);
  for (int32_t i = 0; i < p->n_links; ++i) {
    if (strcmp(p->links[i].from, from) || strcmp(p->links[i].to, to)) continue;
    p->links[i].latency_us = latency_us;
    p->links[i].gbps = gbps;
    return NULL;
  }
  vkp_profile_link_t *grown =
      vkp__reallocarray(p->links, (size_t)p->n_links + 1, sizeof(*grown));
  if (!grown) return VKP_OOM("profile links");
  p->links = grown;
  vkp_profile_link_t *l = &p->links[p->n_links];
  l->from = vkp__strdup(from);
  l->to = vkp__strdup(to);
  if (!l->from || !l->to) {
    vkp__free(l->from);
    vkp__free(l->to);
    return VKP_OOM("profile link");
  }
  l->latency_us = latency_us;
  l->gbps = gbps;
  p->n_links++;
  return NULL;
}

vkp_status_t vkp_profile_set_device(vkp_profile_t *p, const char *name,
                                    int32_t concurrency) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  if (!name || !name[0] || concurrency < 1)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "profile device needs a name and concurrency >= 1");
  for (int32_t i = 0; i < p->n_devices; ++i) {
    if (strcmp(p->devices[i].name, name)) continue;
    p->devices[i].concurrency = concurrency;
    return NULL;
  }
  vkp_profile_device_t *grown =
      vkp__reallocarray(p->devices, (size_t)p->n_devices + 1, sizeof(*grown));
  if (!grown) return VKP_OOM("profile devices");
  p->devices = grown;
  p->devices[p->n_devices].name = vkp__strdup(name);
  if (!p->devices[p->n_devices].name) return VKP_OOM("profile device");
  p->devices[p->n_devices].concurrency = concurrency;
  p->n_devices++;
  return NULL;
}

// Lists `target` in the profile with `rates` (nothing when NULL).
static vkp_status_t vkp__profile_add_rates(vkp_profile_t *p, const char *target,
                                           const vkp_target_rates_t *rates) {
  if (!rates) return NULL;
  vkp_profile_target_t r = {.target = (char *)target,
                            .device = (char *)rates->device,
                            .gflops = rates->gflops,
                            .gbps = rates->gbps,
                            .launch_us = rates->launch_us,
                            .thread_compute_eff = rates->thread_compute_eff,
                            .thread_memory_eff = rates->thread_memory_eff,
                            .thread_split_us = rates->thread_split_us,
                            .gemm_half_columns = rates->gemm_half_columns};
  VKP_RETURN_IF_ERROR(vkp_profile_set_target(p, &r));
  for (int32_t k = 0; k < rates->n_kernels; ++k)
    VKP_RETURN_IF_ERROR(vkp_profile_set_kernel_rates(p, target, rates->kernels[k].kernel,
                                                     rates->kernels[k].compute_scale,
                                                     rates->kernels[k].memory_scale));
  return NULL;
}

vkp_status_t vkp_profile_create_default(vkp_profile_t **out_profile) {
  return vkp_profile_create_default_with_allocator(NULL, out_profile);
}

vkp_status_t vkp_profile_create_default_with_allocator(const vkp_allocator_t *allocator,
                                                       vkp_profile_t **out_profile) {
  *out_profile = NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "profile"));
  const vkp_allocator_t chosen = vkp__allocator_resolve(allocator);
  VKP__ALLOCATOR_SCOPE(&chosen);
  vkp_profile_t *p = vkp__calloc(1, sizeof(*p));
  if (!p) return VKP_OOM("profile");
  p->allocator = chosen;
  vkp_status_t st = NULL;
  p->host_device = vkp__strdup("host");
  if (!p->host_device) st = VKP_OOM("profile");
  p->fallback.gflops = 1.0;
  p->fallback.gbps = 4.0;
  p->fallback.launch_us = 10.0;
  p->default_latency_us = VKP__DEFAULT_LATENCY_US;
  p->default_link_gbps = VKP__DEFAULT_LINK_GBPS;
  // Each built-in target's own declared defaults (its rates and kernel
  // class factors), whether or not it can be brought up on this machine.
  const vkp_target_vtable_t *vt;
  for (int32_t i = 0; (vt = vkp__builtin_target_vtable(i)) != NULL && !st; ++i)
    st = vkp__profile_add_rates(p, vt->name, vt->caps.default_rates);
  if (!st) st = vkp_profile_set_device(p, "host", 1);
  if (st) {
    vkp_profile_destroy(p);
    return st;
  }
  *out_profile = p;
  return NULL;
}

const vkp_profile_target_t *vkp_profile_target(const vkp_profile_t *p,
                                               const char *target) {
  for (int32_t i = 0; target && i < p->n_targets; ++i)
    if (strcmp(p->targets[i].target, target) == 0) return &p->targets[i];
  return &p->fallback;
}

_Static_assert(VKP_PROFILE_MAX_KERNELS >= VKP_TARGET_MAX_KERNEL_RATES &&
                   sizeof(((vkp_profile_kernel_t *)0)->name) > VKP_TARGET_MAX_KERNEL_NAME,
               "a profile entry holds every rate a target may declare");

const vkp_profile_target_t *vkp_profile_target_rates(const vkp_profile_t *p,
                                                     const vkp_target_t *target,
                                                     vkp_profile_target_t *scratch) {
  const char *name = target->vtable->name;
  for (int32_t i = 0; i < p->n_targets; ++i)
    if (strcmp(p->targets[i].target, name) == 0) return &p->targets[i];
  const vkp_target_rates_t *d = target->caps.default_rates;
  if (!d) return &p->fallback;
  *scratch = (vkp_profile_target_t){.target = (char *)name,
                                    .device = (char *)d->device,
                                    .gflops = d->gflops,
                                    .gbps = d->gbps,
                                    .launch_us = d->launch_us,
                                    .thread_compute_eff = d->thread_compute_eff,
                                    .thread_memory_eff = d->thread_memory_eff,
                                    .thread_split_us = d->thread_split_us,
                                    .gemm_half_columns = d->gemm_half_columns,
                                    .n_kernels = d->n_kernels};
  for (int32_t k = 0; k < d->n_kernels; ++k) {
    snprintf(scratch->kernels[k].name, sizeof scratch->kernels[k].name, "%s",
             d->kernels[k].kernel);
    scratch->kernels[k].compute_scale = d->kernels[k].compute_scale;
    scratch->kernels[k].memory_scale = d->kernels[k].memory_scale;
  }
  return scratch;
}

const char *vkp_profile_device_of(const vkp_profile_t *p, const char *target) {
  const vkp_profile_target_t *t = vkp_profile_target(p, target);
  return t->device ? t->device : target;
}

int32_t vkp_profile_concurrency(const vkp_profile_t *p, const char *device) {
  for (int32_t i = 0; device && i < p->n_devices; ++i)
    if (strcmp(p->devices[i].name, device) == 0) return p->devices[i].concurrency;
  return 1;
}

double vkp_profile_transfer_seconds(const vkp_profile_t *p, const char *from,
                                    const char *to, double bytes) {
  if (bytes <= 0) return 0.0;
  for (int32_t i = 0; i < p->n_links; ++i)
    if (strcmp(p->links[i].from, from) == 0 && strcmp(p->links[i].to, to) == 0)
      return p->links[i].latency_us * 1e-6 + bytes / (p->links[i].gbps * 1e9);
  if (strcmp(from, to) == 0) return bytes / (VKP__SAME_DEVICE_GBPS * 1e9);
  return p->default_latency_us * 1e-6 + bytes / (p->default_link_gbps * 1e9);
}

double vkp_profile_rank_link_seconds(const vkp_profile_t *p, double bytes,
                                     bool *out_calibrated) {
  double lat = VKP_PROFILE_RANK_LATENCY_US, gbps = VKP_PROFILE_RANK_GBPS;
  bool found = false;
  for (int32_t i = 0; i < p->n_links && !found; ++i) {
    if (strcmp(p->links[i].from, VKP_PROFILE_RANK_LINK) ||
        strcmp(p->links[i].to, VKP_PROFILE_RANK_LINK))
      continue;
    lat = p->links[i].latency_us;
    gbps = p->links[i].gbps;
    found = true;
  }
  if (out_calibrated) *out_calibrated = found;
  if (bytes <= 0) return 0.0;
  return lat * 1e-6 + bytes / (gbps * 1e9);
}

double vkp_roofline_seconds(const vkp_profile_target_t *rates,
                            const vkp_op_cost_t *work) {
  return vkp_roofline_seconds_threads(rates, work, 1);
}

static double vkp__speedup(double eff, int32_t threads) {
  return threads > 1 ? 1.0 + (double)(threads - 1) * eff : 1.0;
}

double vkp_roofline_seconds_threads(const vkp_profile_target_t *rates,
                                    const vkp_op_cost_t *work, int32_t threads) {
  double compute = work->flops /
                   (rates->gflops * 1e9 * vkp__speedup(rates->thread_compute_eff, threads));
  double gbps = rates->gbps * 1e9 * vkp__speedup(rates->thread_memory_eff, threads);
  double memory = (work->bytes - work->weight_bytes) / gbps;
  return (compute > memory ? compute : memory) + work->weight_bytes / gbps +
         rates->launch_us * 1e-6;
}

int32_t vkp_host_cores(void) { return vkp__host_cores(); }

// Seconds of `work` on `rates` with `threads` threads for a node whose
// kernel computes at `compute` times the target's rate: the roofline, or,
// with a memory factor (> 0), the compute time plus the activations' bytes
// at gbps times that factor.
static double vkp__kernel_seconds(const vkp_profile_target_t *rates, const vkp_op_cost_t *work,
                                  double compute, double memory, int32_t threads) {
  if (!(compute > 0)) return 0.0;  // computed in another node's kernel
  vkp_profile_target_t scaled = *rates;
  scaled.gflops *= compute;
  if (!(memory > 0)) return vkp_roofline_seconds_threads(&scaled, work, threads);
  double gbps = rates->gbps * 1e9 * vkp__speedup(rates->thread_memory_eff, threads);
  return work->flops / (scaled.gflops * 1e9 * vkp__speedup(rates->thread_compute_eff, threads)) +
         (work->bytes - work->weight_bytes) / (gbps * memory) + work->weight_bytes / gbps +
         rates->launch_us * 1e-6;
}

// A kernel of `one` seconds on one thread and `split` on `threads`: the
// split pays the rates' thread_split_us, and a kernel it would not pay for
// stays on one thread (the CPU kernels do not split below a grain of work).
static double vkp__threads_seconds(const vkp_profile_target_t *rates, double one,
                                   double split, int32_t threads) {
  if (threads <= 1) return one;
  split += rates->thread_split_us * 1e-6;
  return split < one ? split : one;
}

// The estimate of `node` on `target` (no estimate hook) with `threads`
// threads: its kernel class's compute factor times the GEMM width term (1
// and no term without a kernel_class hook), its memory factor; no time for
// a node computed in another's kernel (VKP_KERNEL_CLASS_FUSED).
static vkp_status_t vkp__class_estimate(const vkp_profile_target_t *rates,
                                        const vkp_target_t *target, const vkp_graph_t *graph,
                                        const vkp_node_t *node, int32_t threads,
                                        double *out_seconds) {
  vkp_op_cost_t work;
  VKP_RETURN_IF_ERROR(vkp_op_cost(graph, node, &work));
  double compute = 1.0, memory = 0.0;
  if (target->vtable->compiler.kernel_class) {
    double columns = 0.0;
    const char *kernel = target->vtable->compiler.kernel_class(target, graph, node, &columns);
    if (kernel && strcmp(kernel, VKP_KERNEL_CLASS_FUSED) == 0) {
      *out_seconds = 0.0;
      return NULL;
    }
    compute = vkp_profile_kernel_scale(rates, kernel);
    memory = vkp_profile_kernel_memory_scale(rates, kernel);
    double h = rates->gemm_half_columns;
    if (columns > 0 && h > 0)
      compute *= (columns / (columns + h)) /
                 (VKP_PROFILE_GEMM_COLUMNS / (VKP_PROFILE_GEMM_COLUMNS + h));
  }
  double one = vkp__kernel_seconds(rates, &work, compute, memory, 1);
  *out_seconds =
      threads > 1
          ? vkp__threads_seconds(rates, one,
                                 vkp__kernel_seconds(rates, &work, compute, memory, threads),
                                 threads)
          : one;
  return NULL;
}

vkp_status_t vkp_node_estimate_threads(const vkp_profile_t *profile,
                                       const vkp_target_t *target,
                                       const vkp_graph_t *graph,
                                       const vkp_node_t *node, int32_t threads,
                                       double *out_seconds) {
  vkp_profile_target_t scratch;
  const vkp_profile_target_t *rates = vkp_profile_target_rates(profile, target, &scratch);
  if (threads <= 1 || target->vtable->compiler.estimate) {
    VKP_RETURN_IF_ERROR(vkp_node_estimate(profile, target, graph, node, out_seconds));
    double one = *out_seconds;
    if (one > 0)
      *out_seconds = vkp__threads_seconds(
          rates, one, one / vkp__speedup(rates->thread_compute_eff, threads), threads);
    return NULL;
  }
  return vkp__class_estimate(rates, target, graph, node, threads, out_seconds);
}

vkp_status_t vkp_node_estimate(const vkp_profile_t *profile,
                               const vkp_target_t *target,
                               const vkp_graph_t *graph, const vkp_node_t *node,
                               double *out_seconds) {
  *out_seconds = 0.0;
  if (target->vtable->compiler.estimate) {
    double s = 0.0;
    VKP_RETURN_IF_ERROR(target->vtable->compiler.estimate(target, graph, node, &s));
    if (!(s >= 0) || !isfinite(s))
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "target '%s' estimated %g s for node '%s'",
                             target->vtable->name, s, node->name);
    *out_seconds = s;
    return NULL;
  }
  vkp_profile_target_t scratch;
  const vkp_profile_target_t *rates = vkp_profile_target_rates(profile, target, &scratch);
  return vkp__class_estimate(rates, target, graph, node, 1, out_seconds);
}

// ---------------------------------------------------------------------------
// Profile JSON

static bool vkp__json_number(const cJSON *obj, const char *key, double *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(item)) return false;
  *out = item->valuedouble;
  return true;
}

static vkp_status_t vkp__profile_from_cjson(vkp_profile_t *p, const cJSON *root) {
  if (!cJSON_IsObject(root))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "profile is not a JSON object");
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (version && (!cJSON_IsNumber(version) || version->valueint != 1))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "profile version is not 1");
  const cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host_device");
  if (host) {
    if (!cJSON_IsString(host) || !host->valuestring[0])
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "'host_device' must be a non-empty string");
    char *copy = vkp__strdup(host->valuestring);
    if (!copy) return VKP_OOM("profile");
    vkp__free(p->host_device);
    p->host_device = copy;
  }
  const cJSON *fb = cJSON_GetObjectItemCaseSensitive(root, "fallback");
  if (fb) {
    vkp__json_number(fb, "gflops", &p->fallback.gflops);
    vkp__json_number(fb, "gbps", &p->fallback.gbps);
    vkp__json_number(fb, "launch_us", &p->fallback.launch_us);
    if (!(p->fallback.gflops > 0) || !(p->fallback.gbps > 0) ||
        !(p->fallback.launch_us >= 0))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "profile 'fallback': rates must be positive");
  }
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(root, "default_link");
  if (dl) {
    vkp__json_number(dl, "latency_us", &p->default_latency_us);
    vkp__json_number(dl, "gbps", &p->default_link_gbps);
    if (!(p->default_link_gbps > 0) || !(p->default_latency_us >= 0))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "profile 'default_link': gbps must be positive");
  }
  const cJSON *targets = cJSON_GetObjectItemCaseSensitive(root, "targets");
  if (targets && !cJSON_IsObject(targets))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "profile 'targets' must be an object");
  const cJSON *t;
  cJSON_ArrayForEach(t, targets) {
    if (!cJSON_IsObject(t))
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "profile target '%s' must be an object", t->string);
    const vkp_profile_target_t *old = vkp_profile_target(p, t->string);
    vkp_profile_target_t r = *old;
    r.target = t->string;
    r.device = (char *)vkp_profile_device_of(p, t->string);
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(t, "device");
    if (dev) {
      if (!cJSON_IsString(dev) || !dev->valuestring[0])
        return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                               "profile target '%s': 'device' must be a "
                               "non-empty string",
                               t->string);
      r.device = dev->valuestring;
    }
    vkp__json_number(t, "gflops", &r.gflops);
    vkp__json_number(t, "gbps", &r.gbps);
    vkp__json_number(t, "launch_us", &r.launch_us);
    vkp__json_number(t, "thread_compute_eff", &r.thread_compute_eff);
    vkp__json_number(t, "thread_memory_eff", &r.thread_memory_eff);
    vkp__json_number(t, "thread_split_us", &r.thread_split_us);
    vkp__json_number(t, "gemm_half_columns", &r.gemm_half_columns);
    VKP_RETURN_IF_ERROR(vkp_profile_set_target(p, &r));
    const cJSON *kernels = cJSON_GetObjectItemCaseSensitive(t, "kernels");
    if (kernels && !cJSON_IsObject(kernels))
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "profile target '%s': 'kernels' must be an object",
                             t->string);
    // A class is its compute factor, or {"compute": c, "memory": m}.
    const cJSON *k;
    cJSON_ArrayForEach(k, kernels) {
      double compute = 0.0, memory = 0.0;
      bool ok = cJSON_IsNumber(k);
      if (ok) compute = k->valuedouble;
      if (cJSON_IsObject(k)) {
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(k, "memory");
        ok = vkp__json_number(k, "compute", &compute) && (!mem || cJSON_IsNumber(mem));
        if (mem) vkp__json_number(k, "memory", &memory);
      }
      if (!ok)
        return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                               "profile target '%s': kernel '%s' must be a number or "
                               "{\"compute\": number, \"memory\": number}",
                               t->string, k->string);
      VKP_RETURN_IF_ERROR(vkp_profile_set_kernel_rates(p, t->string, k->string, compute, memory));
    }
  }
  const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
  const cJSON *d;
  cJSON_ArrayForEach(d, devices) {
    double c = 1;
    if (!cJSON_IsObject(d) || !vkp__json_number(d, "concurrency", &c) || c < 1 ||
        c > 1024)
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "profile device '%s' needs 'concurrency' in 1..1024",
                             d->string ? d->string : "?");
    VKP_RETURN_IF_ERROR(vkp_profile_set_device(p, d->string, (int32_t)c));
  }
  const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
  if (links && !cJSON_IsArray(links))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "profile 'links' must be an array");
  const cJSON *l;
  int idx = 0;
  cJSON_ArrayForEach(l, links) {
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(l, "from");
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(l, "to");
    double lat = p->default_latency_us, gbps = p->default_link_gbps;
    if (!cJSON_IsString(from) || !cJSON_IsString(to))
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "profile links[%d] needs string 'from' and 'to'",
                             idx);
    vkp__json_number(l, "latency_us", &lat);
    vkp__json_number(l, "gbps", &gbps);
    VKP_RETURN_IF_ERROR(vkp_status_annotate(
        vkp_profile_set_link(p, from->valuestring, to->valuestring, lat, gbps),
        "profile links[%d]", idx));
    ++idx;
  }
  return NULL;
}

vkp_status_t vkp_profile_load_json(const char *json, size_t size,
                                   vkp_profile_t **out_profile) {
  *out_profile = NULL;
  vkp_profile_t *p = NULL;
  VKP_RETURN_IF_ERROR(vkp_profile_create_default(&p));
  vkp__json_init_hooks();
  cJSON *root = cJSON_ParseWithLength(json, size);
  vkp_status_t st = NULL;
  if (!root && vkp__json_oom()) {
    st = VKP_OOM("profile JSON");
  } else if (!root) {
    const char *at = cJSON_GetErrorPtr();
    st = vkp_status_make(VKP_STATUS_PARSE_ERROR,
                         "profile is not valid JSON (near byte %ld)",
                         at ? (long)(at - json) : -1L);
  } else {
    st = vkp__profile_from_cjson(p, root);
  }
  cJSON_Delete(root);
  if (st) {
    vkp_profile_destroy(p);
    return st;
  }
  *out_profile = p;
  return NULL;
}

vkp_status_t vkp_profile_load(const char *path, vkp_profile_t **out_profile) {
  *out_profile = NULL;
  char *text = NULL;
  size_t size = 0;
  VKP_RETURN_IF_ERROR(
      vkp__file_read(path, (size_t)64 << 20, "a device profile", (void **)&text, &size));
  vkp_status_t st = vkp_profile_load_json(text, size, out_profile);
  vkp__free(text);
  return vkp_status_annotate(st, "loading profile '%s'", path);
}

vkp_status_t vkp_profile_to_json(const vkp_profile_t *p, char **out_json) {
  *out_json = NULL;
  vkp__json_init_hooks();
  cJSON *root = cJSON_CreateObject();
  bool ok = root != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "version", 1);
  ok = ok && cJSON_AddStringToObject(root, "host_device", p->host_device);
  cJSON *targets = ok ? cJSON_AddObjectToObject(root, "targets") : NULL;
  ok = ok && targets;
  for (int32_t i = 0; ok && i < p->n_targets; ++i) {
    const vkp_profile_target_t *t = &p->targets[i];
    cJSON *o = cJSON_AddObjectToObject(targets, t->target);
    ok = o && cJSON_AddStringToObject(o, "device", t->device) &&
         cJSON_AddNumberToObject(o, "gflops", t->gflops) &&
         cJSON_AddNumberToObject(o, "gbps", t->gbps) &&
         cJSON_AddNumberToObject(o, "launch_us", t->launch_us) &&
         cJSON_AddNumberToObject(o, "thread_compute_eff", t->thread_compute_eff) &&
         cJSON_AddNumberToObject(o, "thread_memory_eff", t->thread_memory_eff) &&
         cJSON_AddNumberToObject(o, "thread_split_us", t->thread_split_us) &&
         cJSON_AddNumberToObject(o, "gemm_half_columns", t->gemm_half_columns);
    cJSON *ks = ok && t->n_kernels > 0 ? cJSON_AddObjectToObject(o, "kernels") : NULL;
    ok = ok && (t->n_kernels == 0 || ks);
    for (int32_t j = 0; ok && j < t->n_kernels; ++j) {
      const vkp_profile_kernel_t *kr = &t->kernels[j];
      if (kr->memory_scale > 0) {
        cJSON *ko = cJSON_AddObjectToObject(ks, kr->name);
        ok = ko && cJSON_AddNumberToObject(ko, "compute", kr->compute_scale) &&
             cJSON_AddNumberToObject(ko, "memory", kr->memory_scale);
      } else {
        ok = cJSON_AddNumberToObject(ks, kr->name, kr->compute_scale) != NULL;
      }
    }
  }
  cJSON *devices = ok ? cJSON_AddObjectToObject(root, "devices") : NULL;
  ok = ok && devices;
  for (int32_t i = 0; ok && i < p->n_devices; ++i) {
    cJSON *o = cJSON_AddObjectToObject(devices, p->devices[i].name);
    ok = o && cJSON_AddNumberToObject(o, "concurrency", p->devices[i].concurrency);
  }
  cJSON *links = ok ? cJSON_AddArrayToObject(root, "links") : NULL;
  ok = ok && links;
  for (int32_t i = 0; ok && i < p->n_links; ++i) {
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(links, o);
    ok = ok && cJSON_AddStringToObject(o, "from", p->links[i].from) &&
         cJSON_AddStringToObject(o, "to", p->links[i].to) &&
         cJSON_AddNumberToObject(o, "latency_us", p->links[i].latency_us) &&
         cJSON_AddNumberToObject(o, "gbps", p->links[i].gbps);
  }
  cJSON *dl = ok ? cJSON_AddObjectToObject(root, "default_link") : NULL;
  ok = ok && dl && cJSON_AddNumberToObject(dl, "latency_us", p->default_latency_us) &&
       cJSON_AddNumberToObject(dl, "gbps", p->default_link_gbps);
  cJSON *fb = ok ? cJSON_AddObjectToObject(root, "fallback") : NULL;
  ok = ok && fb && cJSON_AddNumberToObject(fb, "gflops", p->fallback.gflops) &&
       cJSON_AddNumberToObject(fb, "gbps", p->fallback.gbps) &&
       cJSON_AddNumberToObject(fb, "launch_us", p->fallback.launch_us);
  return vkp__json_print(root, ok, "profile JSON", out_json);
}

vkp_status_t vkp_profile_save(const vkp_profile_t *profile, const char *path) {
  char *text = NULL;
  VKP_RETURN_IF_ERROR(vkp_profile_to_json(profile, &text));
  vkp_status_t st = vkp__write_text_line(path, text);
  vkp__free(text);
  return st;
}
