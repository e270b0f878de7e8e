// SPDX-License-Identifier: Apache-2.0
// The partitioner's driver: set-up, the plan, the table and the picture.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "partition/partition_internal.h"

static void vkp__pctx_free(vkp__pctx_t *c) {
  if (!c) return;
  size_t cells = (size_t)c->graph->n_nodes * (size_t)c->n_targets;
  for (size_t i = 0; c->reason && i < cells; ++i) vkp__free(c->reason[i]);
  vkp__free(c->reason);
  vkp__free(c->est);
  vkp__free(c->would_cost);
  vkp__free(c->device);
  vkp__free(c->fixed);
  vkp__free(c->assign_matched);
  vkp__free(c->cons_start);
  vkp__free(c->cons);
  vkp__free(c->value_bytes);
  vkp__free(c->pos);
  vkp__free(c->unit_region);
  vkp__free(c->target_device);
  vkp__free(c->device_concurrency);
  vkp__free(c->target_threads);
  vkp__free(c->stamp);
  vkp__free(c->seg);
  vkp__free(c->unit_compute);
  vkp__free(c->seg_labels);
  vkp_profile_destroy(c->owned_profile);
  vkp__free(c);
}

void vkp_partition_destroy(vkp_partition_t *part) {
  if (!part) return;
  int32_t n = part->graph ? part->graph->n_nodes : 0;
  for (int32_t i = 0; part->node_reason && i < n; ++i) vkp__free(part->node_reason[i]);
  vkp__free(part->node_reason);
  for (int32_t i = 0; part->node_refusal && i < n; ++i) vkp__free(part->node_refusal[i]);
  vkp__free(part->node_refusal);
  vkp__free(part->node_fallback_from);
  for (int32_t s = 0; part->stages && s < part->n_stages; ++s)
    vkp__free(part->stages[s].nodes);
  vkp__free(part->stages);
  vkp__free(part->targets);
  vkp__free(part->node_target);
  vkp__free(part->node_first_choice);
  vkp__free(part->node_seconds);
  vkp__free(part->node_region);
  vkp__free(part->node_stage);
  vkp__free(part->order);
  vkp__free(part->unit_start);
  vkp__free(part->notes);
  vkp__pctx_free(part->internal);
  vkp__free(part);
}

const char *vkp_partition_target_name(const vkp_partition_t *part, int32_t t) {
  return t >= 0 && t < part->n_targets ? part->targets[t]->vtable->name : "?";
}

// Consumers of every value (each consuming node once) and value sizes.
static vkp_status_t vkp__consumers(vkp__pctx_t *c) {
  const vkp_graph_t *g = c->graph;
  size_t total = 0;
  for (int32_t i = 0; i < g->n_nodes; ++i) total += (size_t)g->nodes[i].n_inputs;
  c->cons_start = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  c->cons = vkp__calloc(total + 1, sizeof(int32_t));
  c->value_bytes = vkp__calloc((size_t)g->n_values + 1, sizeof(double));
  int32_t *fill = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  if (!c->cons_start || !c->cons || !c->value_bytes || !fill) {
    vkp__free(fill);
    return VKP_OOM("consumer lists");
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (int32_t i = 0; i < g->n_nodes; ++i) {
      const vkp_node_t *n = &g->nodes[i];
      for (int32_t k = 0; k < n->n_inputs; ++k) {
        int32_t v = n->inputs[k];
        bool dup = v < 0;
        for (int32_t q = 0; q < k && !dup; ++q) dup = n->inputs[q] == v;
        if (dup) continue;
        if (pass == 0)
          c->cons_start[v + 1]++;
        else
          c->cons[c->cons_start[v] + fill[v]++] = i;
      }
    }
    if (pass == 0)
      for (int32_t v = 0; v < g->n_values; ++v) c->cons_start[v + 1] += c->cons_start[v];
  }
  vkp__free(fill);
  for (int32_t v = 0; v < g->n_values; ++v) {
    const vkp_value_t *val = &g->values[v];
    double b = (double)vkp_dtype_size(val->dtype);
    for (int32_t d = 0; d < val->rank; ++d) b *= (double)val->shape[d];
    c->value_bytes[v] = b;
  }
  return NULL;
}

// One partition with `threads` threads per stage of every threaded target,
// cut for `hosts` ranks' worth of devices (1: one process).
static vkp_status_t vkp__partition_one(const vkp_graph_t *graph,
                                       const vkp_registry_t *registry,
                                       const vkp_profile_t *profile,
                                       const vkp_partition_options_t *options,
                                       int32_t threads, int32_t hosts, int32_t copies,
                                       vkp_partition_t **out_part) {
  *out_part = NULL;
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "partitioning needs a validated graph");
  int32_t nt = vkp_registry_count(registry);
  if (nt == 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE, "no target is registered");
  if (nt > VKP__MAX_TARGETS)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "%d targets registered; the partitioner handles %d",
                           (int)nt, VKP__MAX_TARGETS);
  vkp_partition_t *part = vkp__calloc(1, sizeof(*part));
  vkp__pctx_t *c = vkp__calloc(1, sizeof(*c));
  if (!part || !c) {
    vkp__free(part);
    vkp__free(c);
    return VKP_OOM("partition");
  }
  part->graph = graph;
  part->internal = c;
  c->graph = graph;
  c->part = part;
  if (options) c->options_copy = *options;
  c->options = &c->options_copy;
  c->hosts = hosts > 1 ? hosts : 1;
  vkp_status_t st = NULL;
  if (!profile) {
    st = vkp_profile_create_default(&c->owned_profile);
    profile = c->owned_profile;
  }
  c->profile = profile;
  part->profile = profile;
  int32_t n = graph->n_nodes;
  size_t cells = (size_t)n * (size_t)nt;
  c->n_targets = nt;
  part->n_targets = nt;
  part->targets = vkp__calloc((size_t)nt, sizeof(vkp_target_t *));
  part->node_target = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->node_first_choice = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->node_reason = vkp__calloc((size_t)n + 1, sizeof(char *));
  part->node_refusal = vkp__calloc((size_t)n + 1, sizeof(char *));
  part->node_fallback_from = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->node_seconds = vkp__calloc((size_t)n + 1, sizeof(double));
  part->node_region = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->node_stage = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->order = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  part->unit_start = vkp__calloc((size_t)n + 2, sizeof(int32_t));
  c->est = vkp__calloc(cells + 1, sizeof(double));
  c->would_cost = vkp__calloc(cells + 1, sizeof(double));
  c->reason = vkp__calloc(cells + 1, sizeof(char *));
  c->device = vkp__calloc((size_t)nt, sizeof(char *));
  c->fixed = vkp__calloc((size_t)n + 1, sizeof(bool));
  c->assign_matched = vkp__calloc((size_t)(options ? options->n_assigns : 0) + 1,
                                  sizeof(bool));
  c->pos = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  c->unit_region = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  c->target_device = vkp__calloc((size_t)nt, sizeof(int32_t));
  c->device_concurrency = vkp__calloc((size_t)nt, sizeof(int32_t));
  c->target_threads = vkp__calloc((size_t)nt, sizeof(int32_t));
  c->stamp = vkp__calloc((size_t)graph->n_values + 1, sizeof(uint32_t));
  if (!st && (!part->targets || !part->node_target || !part->node_first_choice ||
              !part->node_reason || !part->node_refusal ||
              !part->node_fallback_from || !c->would_cost ||
              !part->node_seconds || !part->node_region ||
              !part->node_stage || !part->order || !part->unit_start || !c->est ||
              !c->reason || !c->device || !c->fixed || !c->assign_matched || !c->pos ||
              !c->unit_region || !c->target_device || !c->device_concurrency ||
              !c->target_threads || !c->stamp))
    st = VKP_OOM("partition tables");
  for (int32_t t = 0; t < nt && !st; ++t) {
    part->targets[t] = vkp_registry_get(registry, t);
    vkp_profile_target_t scratch;
    const vkp_profile_target_t *rates =
        vkp_profile_target_rates(profile, part->targets[t], &scratch);
    // A target's declared device is static storage; the profile's is owned
    // by the profile, which outlives the partition.
    c->device[t] = rates->device ? rates->device : part->targets[t]->vtable->name;
    // Targets on the host run on its cores: their stages get `threads`.
    c->target_threads[t] = strcmp(c->device[t], profile->host_device) == 0 ? threads : 1;
    int32_t d = 0;
    while (d < c->n_devices && strcmp(c->device[c->device_concurrency[d]], c->device[t]))
      ++d;
    // device_concurrency temporarily holds a representative target per device.
    if (d == c->n_devices) c->device_concurrency[c->n_devices++] = t;
    c->target_device[t] = d;
  }
  c->host_dev = -1;
  c->host_threads = threads;
  for (int32_t t = 0; t < nt && !st; ++t)
    if (strcmp(c->device[t], profile->host_device) == 0) c->host_dev = c->target_device[t];
  // Copies: each copy of the stages gets its share of the host's cores.
  for (int32_t d = 0; d < c->n_devices && !st; ++d) {
    const char *dev = c->device[c->device_concurrency[d]];
    int32_t conc = vkp_profile_concurrency(profile, dev) * c->hosts;
    if (copies > 1 && strcmp(dev, profile->host_device) == 0)
      conc = conc / copies > 0 ? conc / copies : 1;
    c->device_concurrency[d] = conc;
  }
  part->threads = threads;
  part->replicas = 1;
  part->n_ranks = 1;
  if (!st) st = vkp__consumers(c);
  if (!st) st = vkp__place(c, registry);
  if (!st) st = vkp__cut_stages(c);
  if (st) {
    vkp_partition_destroy(part);
    return st;
  }
  *out_part = part;
  return NULL;
}

#define VKP__MAX_THREAD_CANDIDATES 64

// Makes `part`, cut for the host's cores over `copies`, `copies` copies of
// every stage: its bottleneck is the cut's over the copies, or the host's
// `cores` working through every stage's threads x seconds when the copies
// ask for more cores than there are. False when a stage runs elsewhere than
// on the host (copies are host stages only); `why` then names it.
static bool vkp__make_copies(vkp_partition_t *part, int32_t copies, int32_t cores, char *why,
                             size_t size) {
  for (int32_t s = 0; s < part->n_stages; ++s) part->stages[s].replicas = 1;
  if (copies <= 1) return true;
  for (int32_t s = 0; s < part->n_stages; ++s) {
    if (part->stages[s].threads <= 0) {
      snprintf(why, size, "stage%d runs on '%s', and only stages on the host run as copies",
               (int)s, vkp_partition_target_name(part, part->stages[s].target));
      return false;
    }
  }
  double work = 0;
  int64_t threads = 0;
  for (int32_t s = 0; s < part->n_stages; ++s) {
    part->stages[s].replicas = copies;
    work += part->stages[s].threads * part->stages[s].seconds;
    threads += (int64_t)part->stages[s].threads * copies;
  }
  part->replicas = copies;
  part->bottleneck_s /= copies;
  if (cores > 0) work *= vkp__sharing(threads, cores);
  if (cores > 0 && work / cores > part->bottleneck_s) part->bottleneck_s = work / cores;
  return true;
}

vkp_status_t vkp_partition_create(const vkp_graph_t *graph,
                                  const vkp_registry_t *registry,
                                  const vkp_profile_t *profile,
                                  const vkp_partition_options_t *options,
                                  vkp_partition_t **out_part) {
  *out_part = NULL;
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "partition"));
  VKP__ALLOCATOR_SCOPE(allocator);
  int32_t want = options ? options->threads : 0;
  if (want < 0 || want > 1024)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "threads must be 0 (choose) or 1..1024, got %d", (int)want);
  int32_t ranks = options ? options->ranks : 0;
  if (ranks < 0 || ranks > VKP_PARTITION_MAX_STAGES)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "ranks must be 0..%d, got %d", VKP_PARTITION_MAX_STAGES,
                           (int)ranks);
  int32_t want_copies = options ? options->replicas : 0;
  if (want_copies < VKP_PARTITION_REPLICAS_AUTO || want_copies > VKP_PLAN_MAX_REPLICAS)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "replicas must be 1..%d or auto, got %d", VKP_PLAN_MAX_REPLICAS,
                           (int)want_copies);
  if (want_copies != 0 && want_copies != 1 && ranks > 1)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "copies of stages (replicas) over MPI ranks are not supported "
                           "yet: ask for copies or for ranks, not both");
  vkp_profile_t *defaults = NULL;
  if (!profile) {
    VKP_RETURN_IF_ERROR(vkp_profile_create_default(&defaults));
    profile = defaults;
  }
  int32_t cores = vkp_profile_concurrency(profile, profile->host_device);
  // Candidates: (threads, copies), every stage occupying threads x copies
  // of the cores (copies 1 unless asked for).
  int32_t cand[VKP__MAX_THREAD_CANDIDATES], cand_copies[VKP__MAX_THREAD_CANDIDATES];
  int32_t n_cand = 0;
  int32_t copy_list[16], n_copy = 0;
  if (want_copies == VKP_PARTITION_REPLICAS_AUTO) {
    for (int32_t r = 1; r <= cores && n_copy < 15; r *= 2) copy_list[n_copy++] = r;
    if (copy_list[n_copy - 1] != cores && cores <= VKP_PLAN_MAX_REPLICAS)
      copy_list[n_copy++] = cores;
  } else {
    copy_list[n_copy++] = want_copies > 1 ? want_copies : 1;
  }
  for (int32_t k = 0; k < n_copy; ++k) {
    int32_t share = cores / copy_list[k] > 0 ? cores / copy_list[k] : 1;
    if (want > 0 || share <= 1) {
      if (n_cand < VKP__MAX_THREAD_CANDIDATES) {
        cand_copies[n_cand] = copy_list[k];
        cand[n_cand++] = want > 0 ? want : 1;
      }
      continue;
    }
    int32_t first = n_cand;
    for (int32_t t = 1; t <= share && n_cand < VKP__MAX_THREAD_CANDIDATES - 1;
         t = t < 8 ? t + 1 : t * 2) {
      cand_copies[n_cand] = copy_list[k];
      cand[n_cand++] = t;
    }
    if (n_cand > first && cand[n_cand - 1] != share && n_cand < VKP__MAX_THREAD_CANDIDATES) {
      cand_copies[n_cand] = copy_list[k];
      cand[n_cand++] = share;
    }
  }
  vkp_partition_t *parts[VKP__MAX_THREAD_CANDIDATES] = {0};
  char why[VKP__MAX_THREAD_CANDIDATES][160];
  vkp_status_t st = NULL;
  int32_t best = -1, chosen = -1;
  bool any_copies = false;
  for (int32_t i = 0; i < n_cand && !st; ++i) {
    why[i][0] = '\0';
    // The partition keeps the caller's profile (or owns the defaults).
    st = vkp__partition_one(graph, registry, defaults ? NULL : profile, options,
                            cand[i], ranks, cand_copies[i], &parts[i]);
    // Over ranks, each candidate is judged placed: its stages in blocks per
    // rank, every rank with its own devices, the rank link priced.
    if (!st && ranks > 1) st = vkp__place_ranks(parts[i], ranks);
    if (!st && !vkp__make_copies(parts[i], cand_copies[i], cores, why[i], sizeof why[i])) {
      if (want_copies > 1)
        st = vkp_status_make(VKP_STATUS_UNSUPPORTED, "%d replicas: %s", (int)want_copies,
                             why[i]);
      continue;  // not a candidate
    }
    any_copies |= cand_copies[i] > 1;
    if (!st && (best < 0 || parts[i]->bottleneck_s < parts[best]->bottleneck_s)) best = i;
  }
  for (int32_t i = 0; i < n_cand && !st; ++i) {
    if (why[i][0] ||
        parts[i]->bottleneck_s > parts[best]->bottleneck_s * VKP_PARTITION_THREADS_SLACK)
      continue;
    if (chosen < 0 || parts[i]->latency_s < parts[chosen]->latency_s * (1.0 - 1e-9))
      chosen = i;
  }
  if (!st && chosen != best) {
    parts[chosen]->alt_threads = cand[best];
    parts[chosen]->alt_replicas = cand_copies[best];
  }
  if (!st && n_cand > 1) {
    vkp_partition_t *part = parts[chosen];
    if (ranks > 1)
      st = vkp__note(part, "threads per stage: %d core%s on each of %d ranks, each "
                           "stage uses as many as its threads; estimated per "
                           "configuration, placed over the ranks:",
                     (int)cores, cores == 1 ? "" : "s", (int)ranks);
    else if (any_copies || want_copies == VKP_PARTITION_REPLICAS_AUTO)
      st = vkp__note(part, "threads per stage and copies: %d core%s, each stage uses as "
                           "many as its threads times its copies; estimated per "
                           "configuration:",
                     (int)cores, cores == 1 ? "" : "s");
    else
      st = vkp__note(part, "threads per stage: %d core%s, each stage uses as many "
                           "as its threads; estimated per configuration:",
                     (int)cores, cores == 1 ? "" : "s");
    for (int32_t i = 0; i < n_cand && !st; ++i) {
      const vkp_partition_t *p = parts[i];
      char copies[48] = "";
      if (any_copies || want_copies == VKP_PARTITION_REPLICAS_AUTO)
        snprintf(copies, sizeof copies, " x %d cop%s", (int)cand_copies[i],
                 cand_copies[i] == 1 ? "y  " : "ies");
      if (why[i][0]) {
        st = vkp__note(part, "  %2d thread%s x %d stage%s%s: not a candidate (%s)",
                       (int)cand[i], cand[i] == 1 ? " " : "s", (int)p->n_stages,
                       p->n_stages == 1 ? " " : "s", copies, why[i]);
        continue;
      }
      const char *reason = "";
      if (i == chosen)
        reason = i == best ? "  <- chosen: best throughput"
                           : "  <- chosen: within 5% of the best throughput, "
                             "lower latency";
      st = vkp__note(part, "  %2d thread%s x %d stage%s%s: %.3f ms/frame (%.1f "
                           "frames/s), latency %.3f ms%s",
                     (int)cand[i], cand[i] == 1 ? " " : "s", (int)p->n_stages,
                     p->n_stages == 1 ? " " : "s", copies, p->bottleneck_s * 1e3,
                     p->bottleneck_s > 0 ? 1.0 / p->bottleneck_s : 0.0,
                     p->latency_s * 1e3, reason);
    }
  }
  for (int32_t i = 0; i < n_cand; ++i)
    if (i != chosen || st) vkp_partition_destroy(parts[i]);
  vkp_profile_destroy(defaults);
  if (st) return vkp_status_annotate(st, "partitioning graph '%s'", graph->name);
  *out_part = parts[chosen];
  return NULL;
}

// ---------------------------------------------------------------------------
// The plan

// Marks the nodes some graph output depends on; the others compute nothing
// anyone reads and are left out of the plan.
static vkp_status_t vkp__live_nodes(const vkp_graph_t *g, uint8_t **out_live) {
  uint8_t *live = vkp__calloc((size_t)g->n_nodes + 1, 1);
  int32_t *stack = vkp__calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
  if (!live || !stack) {
    vkp__free(live);
    vkp__free(stack);
    return VKP_OOM("live nodes");
  }
  int32_t top = 0;
  for (int32_t k = 0; k < g->n_outputs; ++k) {
    int32_t p = g->values[g->outputs[k]].producer;
    if (p >= 0 && !live[p]) {
      live[p] = 1;
      stack[top++] = p;
    }
  }
  while (top > 0) {
    const vkp_node_t *n = &g->nodes[stack[--top]];
    for (int32_t q = 0; q < n->n_inputs; ++q) {
      int32_t v = n->inputs[q];
      int32_t p = v >= 0 ? g->values[v].producer : -1;
      if (p >= 0 && !live[p]) {
        live[p] = 1;
        stack[top++] = p;
      }
    }
  }
  vkp__free(stack);
  *out_live = live;
  return NULL;
}

vkp_status_t vkp_partition_to_plan(const vkp_partition_t *part,
                                   const char *name, vkp_plan_t **out_plan) {
  *out_plan = NULL;
  const vkp_graph_t *g = part->graph;
  uint8_t *live = NULL;
  VKP_RETURN_IF_ERROR(vkp__live_nodes(g, &live));
  int32_t *plan_stage = vkp__calloc((size_t)part->n_stages + 1, sizeof(int32_t));
  int32_t *nodes = vkp__calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
  vkp_plan_t *plan = NULL;
  vkp_status_t st = !plan_stage || !nodes ? VKP_OOM("plan stages")
                                          : vkp_plan_create(name ? name : g->name, &plan);
  for (int32_t s = 0; s < part->n_stages && !st; ++s) {
    const vkp_partition_stage_t *ps = &part->stages[s];
    int32_t n = 0;
    for (int32_t k = 0; k < ps->n_nodes; ++k)
      if (live[ps->nodes[k]]) nodes[n++] = ps->nodes[k];
    plan_stage[s] = -1;
    if (n == 0) continue;  // only dead nodes: nothing to run
    char sname[32];
    snprintf(sname, sizeof sname, "stage%d", (int)plan->n_stages);
    vkp_graph_t *sub = NULL;
    st = vkp_graph_extract(g, n, nodes, sname, &sub);
    if (!st)
      st = vkp_plan_add_stage(plan, sname, vkp_partition_target_name(part, ps->target),
                              sub, &plan_stage[s]);
    if (!st) {
      plan->stages[plan_stage[s]].estimated_ms = ps->seconds * 1e3;
      plan->stages[plan_stage[s]].threads = ps->threads;
      if (ps->replicas > 1) plan->stages[plan_stage[s]].replicas = ps->replicas;
      if (ps->rank != 0) st = vkp_plan_set_stage_rank(plan, plan_stage[s], ps->rank);
    }
    for (int32_t k = 0; k < n && !st; ++k) {
      int32_t i = nodes[k], from = part->node_fallback_from[i];
      if (from >= 0)
        st = vkp_plan_add_fallback(plan, plan_stage[s], g->nodes[i].name,
                                   vkp_partition_target_name(part, from),
                                   part->node_refusal[i]);
    }
  }
  for (int32_t k = 0; k < g->n_inputs && !st; ++k) {
    int32_t v = g->inputs[k];
    bool used = false;
    for (int32_t i = 0; i < g->n_nodes && !used; ++i)
      for (int32_t q = 0; live[i] && q < g->nodes[i].n_inputs; ++q)
        used |= g->nodes[i].inputs[q] == v;
    if (used) st = vkp_plan_add_global_input(plan, g->values[v].name);
  }
  for (int32_t k = 0; k < g->n_outputs && !st; ++k) {
    const vkp_value_t *v = &g->values[g->outputs[k]];
    if (v->producer < 0) {
      st = vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "graph output '%s' is not computed by any node",
                           v->name);
      break;
    }
    st = vkp_plan_add_global_output(plan, v->name);
    if (!st) st = vkp_plan_bind(plan, plan_stage[part->node_stage[v->producer]], v->name,
                                VKP_PLAN_GLOBAL, v->name);
  }
  for (int32_t s = 0; plan && s < plan->n_stages && !st; ++s) {
    const vkp_graph_t *sub = plan->stages[s].graph;
    for (int32_t k = 0; k < sub->n_inputs && !st; ++k) {
      const char *vname = sub->values[sub->inputs[k]].name;
      int32_t v = vkp_graph_find_value(g, vname);
      int32_t p = v >= 0 ? g->values[v].producer : -1;
      st = vkp_plan_bind(plan, p >= 0 ? plan_stage[part->node_stage[p]] : VKP_PLAN_GLOBAL,
                         vname, s, vname);
    }
  }
  if (!st) st = vkp_plan_validate(plan);
  vkp__free(live);
  vkp__free(plan_stage);
  vkp__free(nodes);
  if (st) {
    vkp_plan_destroy(plan);
    return vkp_status_annotate(st, "building the plan of graph '%s'", g->name);
  }
  *out_plan = plan;
  return NULL;
}

// ---------------------------------------------------------------------------
// Output

static const char *vkp__human_bytes(double b, char *buf, size_t size) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024.0 && u < 3) {
    b /= 1024.0;
    ++u;
  }
  if (u == 0)
    snprintf(buf, size, "%.0f B", b);
  else
    snprintf(buf, size, "%.1f %s", b, units[u]);
  return buf;
}

void vkp_partition_print(const vkp_partition_t *part, FILE *out) {
  fprintf(out, "%-8s %-10s %7s %6s %10s %12s %12s\n", "stage", "target", "threads",
          "nodes", "est. ms", "bytes in", "bytes out");
  for (int32_t s = 0; s < part->n_stages; ++s) {
    const vkp_partition_stage_t *ps = &part->stages[s];
    char a[32], b[32], name[32];
    snprintf(name, sizeof name, "stage%d", (int)s);
    char threads[16] = "-";
    if (ps->threads > 0) snprintf(threads, sizeof threads, "%d", (int)ps->threads);
    fprintf(out, "%-8s %-10s %7s %6d %10.4f %12s %12s\n", name,
            vkp_partition_target_name(part, ps->target), threads, (int)ps->n_nodes,
            ps->seconds * 1e3, vkp__human_bytes(ps->bytes_in, a, sizeof a),
            vkp__human_bytes(ps->bytes_out, b, sizeof b));
  }
  fprintf(out, "bottleneck: %.4f ms per frame (%.1f frames/s), latency %.4f ms, "
          "%d region%s\n",
          part->bottleneck_s * 1e3,
          part->bottleneck_s > 0 ? 1.0 / part->bottleneck_s : 0.0,
          part->latency_s * 1e3, (int)part->n_regions, part->n_regions == 1 ? "" : "s");
  for (int32_t s = 0; part->n_ranks > 1 && s < part->n_stages; ++s)
    fprintf(out, "stage%d on rank %d, rank link %.4f ms per frame\n", (int)s,
            (int)part->stages[s].rank, part->stages[s].link_s * 1e3);
  if (part->replicas > 1)
    fprintf(out, "every stage runs as %d copies side by side, frames alternating "
                 "between them\n", (int)part->replicas);
  if (part->notes) fprintf(out, "%s", part->notes);
  bool header = false;
  for (int32_t i = 0; i < part->graph->n_nodes; ++i) {
    // Fallbacks get their own section below.
    if (!part->node_reason[i] || part->node_fallback_from[i] >= 0) continue;
    if (!header) {
      fprintf(out, "nodes not on the policy's first choice:\n");
      header = true;
    }
    fprintf(out, "  %s (%s) -> %s: %s\n", part->graph->nodes[i].name,
            vkp_op_name(part->graph->nodes[i].op),
            vkp_partition_target_name(part, part->node_target[i]),
            part->node_reason[i]);
  }
  int32_t fell = 0;
  for (int32_t i = 0; i < part->graph->n_nodes; ++i)
    fell += part->node_fallback_from[i] >= 0;
  if (!fell) return;
  fprintf(out, "fell back (%d node%s run elsewhere because the target that "
          "would run them cannot):\n", (int)fell, fell == 1 ? "" : "s");
  for (int32_t i = 0; i < part->graph->n_nodes; ++i) {
    int32_t from = part->node_fallback_from[i];
    if (from < 0) continue;
    fprintf(out, "  %s (%s): on %s instead of %s: %s\n", part->graph->nodes[i].name,
            vkp_op_name(part->graph->nodes[i].op),
            vkp_partition_target_name(part, part->node_target[i]),
            vkp_partition_target_name(part, from), part->node_refusal[i]);
  }
}

// Fill colours by target index (data, not target names).
static const char *const vkp__palette[] = {
    "#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99",
    "#1f78b4", "#33a02c", "#e31a1c", "#ff7f00",
};

vkp_status_t vkp_partition_to_dot(const vkp_partition_t *part, char **out_dot) {
  *out_dot = NULL;
  const vkp_graph_t *g = part->graph;
  const vkp__pctx_t *c = part->internal;
  const size_t n_colors = sizeof vkp__palette / sizeof vkp__palette[0];
  vkp__sb_t t = {0};
  vkp__sb_printf(&t, "digraph \"");
  vkp__sb_append_quoted(&t, g->name);
  vkp__sb_printf(&t, "\" {\n  rankdir=TB;\n  node [shape=box, style=filled];\n");
  for (int32_t s = 0; s < part->n_stages; ++s) {
    const vkp_partition_stage_t *ps = &part->stages[s];
    vkp__sb_printf(&t,
                   "  subgraph cluster_%d {\n    label=\"stage%d: %s, %.4f ms\";\n"
                   "    style=rounded;\n",
                   (int)s, (int)s, vkp_partition_target_name(part, ps->target),
                   ps->seconds * 1e3);
    for (int32_t k = 0; k < ps->n_nodes; ++k) {
      int32_t i = ps->nodes[k];
      vkp__sb_printf(&t, "    n%d [label=\"", (int)i);
      vkp__sb_append_quoted(&t, g->nodes[i].name);
      vkp__sb_printf(&t, "\\n%s", vkp_op_name(g->nodes[i].op));
      int32_t from = part->node_fallback_from[i];
      if (from >= 0) {  // fell back: say from where and why
        vkp__sb_printf(&t, "\\nfell back from %s: ",
                       vkp_partition_target_name(part, from));
        vkp__sb_append_quoted(&t, part->node_refusal[i]);
        vkp__sb_printf(&t, "\", style=\"filled,dashed\", color=red, penwidth=2");
      } else {
        vkp__sb_printf(&t, "\"");
      }
      vkp__sb_printf(&t, ", fillcolor=\"%s\"];\n",
                     vkp__palette[(size_t)part->node_target[i] % n_colors]);
    }
    vkp__sb_printf(&t, "  }\n");
  }
  // Legend: one entry per target.
  for (int32_t tg = 0; tg < part->n_targets; ++tg)
    vkp__sb_printf(&t, "  legend_%d [label=\"%s\", shape=note, fillcolor=\"%s\"];\n",
                   (int)tg, vkp_partition_target_name(part, tg),
                   vkp__palette[(size_t)tg % n_colors]);
  for (int32_t k = 0; k < g->n_inputs; ++k) {
    int32_t v = g->inputs[k];
    vkp__sb_printf(&t, "  v%d [label=\"", (int)v);
    vkp__sb_append_quoted(&t, g->values[v].name);
    vkp__sb_printf(&t, "\", shape=ellipse, style=solid];\n");
  }
  for (int32_t k = 0; k < g->n_outputs; ++k) {
    int32_t v = g->outputs[k];
    vkp__sb_printf(&t, "  o%d [label=\"", (int)v);
    vkp__sb_append_quoted(&t, g->values[v].name);
    vkp__sb_printf(&t, "\", shape=ellipse, style=solid];\n");
    if (g->values[v].producer >= 0) {
      char b[32];
      vkp__sb_printf(&t, "  n%d -> o%d [label=\"%s\", color=red];\n",
                     (int)g->values[v].producer, (int)v,
                     vkp__human_bytes(c->value_bytes[v], b, sizeof b));
    }
  }
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_inputs; ++k) {
      int32_t v = n->inputs[k];
      if (v < 0 || g->values[v].kind == VKP_VALUE_CONSTANT) continue;
      bool dup = false;
      for (int32_t q = 0; q < k && !dup; ++q) dup = n->inputs[q] == v;
      if (dup) continue;
      int32_t p = g->values[v].producer;
      bool crossing = p < 0 || part->node_stage[p] != part->node_stage[i];
      if (p >= 0)
        vkp__sb_printf(&t, "  n%d -> n%d", (int)p, (int)i);
      else
        vkp__sb_printf(&t, "  v%d -> n%d", (int)v, (int)i);
      if (crossing) {
        char b[32];
        vkp__sb_printf(&t, " [label=\"%s\", color=red]",
                       vkp__human_bytes(c->value_bytes[v], b, sizeof b));
      }
      vkp__sb_printf(&t, ";\n");
    }
  }
  vkp__sb_printf(&t, "}\n");
  *out_dot = vkp__sb_take(&t);
  return *out_dot ? NULL : VKP_OOM("DOT text");
}
