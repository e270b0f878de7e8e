// SPDX-License-Identifier: Apache-2.0
// Placement: which target runs each node. Policies "auto" and "<target>",
// manual overrides, fallbacks, and the local search of "auto".
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "partition/partition_internal.h"

// Local search passes of "auto" (each pass is linear in the graph).
#define VKP__MAX_PASSES 16

double vkp__value_transfer(const vkp__pctx_t *c, const int32_t *labels,
                           int32_t v) {
  const vkp_value_t *val = &c->graph->values[v];
  if (val->kind == VKP_VALUE_CONSTANT) return 0.0;
  double bytes = c->value_bytes[v];
  int32_t src = val->producer >= 0 ? labels[val->producer] : -1;
  const char *src_dev = src >= 0 ? c->device[src] : c->profile->host_device;
  uint32_t seen = 0;
  double s = 0.0;
  for (int32_t k = c->cons_start[v]; k < c->cons_start[v + 1]; ++k) {
    int32_t t = labels[c->cons[k]];
    if (t == src || (seen & (1u << t))) continue;
    seen |= 1u << t;
    s += vkp_profile_transfer_seconds(c->profile, src_dev, c->device[t], bytes);
  }
  if (val->is_output && src >= 0)
    s += vkp_profile_transfer_seconds(c->profile, src_dev,
                                      c->profile->host_device, bytes);
  return s;
}

double vkp__placement_objective(const vkp__pctx_t *c, const int32_t *labels) {
  double s = 0.0;
  for (int32_t i = 0; i < c->graph->n_nodes; ++i) s += vkp__est(c, i, labels[i]);
  for (int32_t v = 0; v < c->graph->n_values; ++v)
    s += vkp__value_transfer(c, labels, v);
  return s;
}

vkp_status_t vkp__note(vkp_partition_t *part, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkp_status_t st = vkp__lines_vappendf(&part->notes, "partition notes", fmt, ap);
  va_end(ap);
  return st;
}

vkp_status_t vkp__set_reason(vkp_partition_t *part, int32_t node,
                             const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  char *copy = vkp__strdup(line);
  if (!copy) return VKP_OOM("placement reason");
  vkp__free(part->node_reason[node]);
  part->node_reason[node] = copy;
  return NULL;
}

vkp_status_t vkp_assign_parse(char *text, vkp_assign_t *out) {
  char *eq = text ? strrchr(text, '=') : NULL;
  if (!eq || eq == text || !eq[1])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "assignment '%s' is not PATTERN=TARGET",
                           text ? text : "");
  *eq = '\0';
  out->pattern = text;
  out->target = eq + 1;
  return NULL;
}

static int32_t vkp__target_index(const vkp__pctx_t *c, const char *name) {
  for (int32_t t = 0; t < c->n_targets; ++t)
    if (strcmp(c->part->targets[t]->vtable->name, name) == 0) return t;
  return -1;
}

static vkp_status_t vkp__lookup(const vkp__pctx_t *c,
                                const vkp_registry_t *registry,
                                const char *name, int32_t *out) {
  *out = -1;
  const vkp_target_t *t = NULL;
  VKP_RETURN_IF_ERROR(vkp_registry_lookup(registry, name, &t));
  *out = vkp__target_index(c, name);
  return NULL;
}

static const char *vkp__tname(const vkp__pctx_t *c, int32_t t) {
  return c->part->targets[t]->vtable->name;
}

// Manual placements: the graph's own "target", then --assign globs in order
// (the last match wins). A manual target that cannot run the node is an
// error: the user asked for something impossible.
static vkp_status_t vkp__manual(vkp__pctx_t *c, const vkp_registry_t *registry,
                                int32_t *labels, int32_t *origin) {
  const vkp_graph_t *g = c->graph;
  const vkp_partition_options_t *o = c->options;
  for (int32_t a = 0; a < o->n_assigns; ++a) {
    int32_t t = -1;
    VKP_RETURN_IF_ERROR(vkp_status_annotate(
        vkp__lookup(c, registry, o->assigns[a].target, &t),
        "--assign '%s=%s'", o->assigns[a].pattern, o->assigns[a].target));
  }
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    origin[i] = -1;
    if (n->target && n->target[0]) {
      int32_t t = -1;
      VKP_RETURN_IF_ERROR(vkp_status_annotate(vkp__lookup(c, registry, n->target, &t),
                                              "node '%s' \"target\"", n->name));
      labels[i] = t;
      origin[i] = o->n_assigns;  // marks "from the graph"
    }
    for (int32_t a = 0; a < o->n_assigns; ++a) {
      if (fnmatch(o->assigns[a].pattern, n->name, 0) != 0) continue;
      labels[i] = vkp__target_index(c, o->assigns[a].target);
      origin[i] = a;
      c->assign_matched[a] = true;
    }
    if (origin[i] < 0) continue;
    int32_t t = labels[i];
    if (vkp__est(c, i, t) < 0) {
      char where[300];
      if (origin[i] == o->n_assigns)
        snprintf(where, sizeof where, "its \"target\" in the graph");
      else
        snprintf(where, sizeof where, "--assign '%s=%s'",
                 o->assigns[origin[i]].pattern, o->assigns[origin[i]].target);
      return vkp_status_make(
          VKP_STATUS_UNSUPPORTED,
          "node '%s' (%s) is placed on '%s' by %s, but that target cannot run "
          "it: %s",
          n->name, vkp_op_name(n->op), vkp__tname(c, t), where,
          c->reason[(size_t)i * (size_t)c->n_targets + (size_t)t]);
    }
    c->fixed[i] = true;
  }
  // An assignment that matches nothing is almost always a typo in the
  // pattern: say so rather than partition silently without it.
  for (int32_t a = 0; a < o->n_assigns; ++a)
    if (!c->assign_matched[a])
      VKP_RETURN_IF_ERROR(vkp__note(c->part, "warning: --assign '%s=%s' matches no node",
                                    o->assigns[a].pattern, o->assigns[a].target));
  return NULL;
}

// The fallback target's index: the caller's, else the first registered
// target that declares itself the default fallback; -1 when there is none
// (or the caller's is not registered). *out_name is NULL only when no
// registered target declares it.
static int32_t vkp__fallback_target(const vkp__pctx_t *c, const char **out_name) {
  *out_name = c->options->fallback;
  if (*out_name) return vkp__target_index(c, *out_name);
  for (int32_t t = 0; t < c->n_targets; ++t)
    if (c->part->targets[t]->caps.flags & VKP_TARGET_DEFAULT_FALLBACK) {
      *out_name = c->part->targets[t]->vtable->name;
      return t;
    }
  return -1;
}

// The target a node gets when its policy target cannot run it.
static vkp_status_t vkp__fallback(vkp__pctx_t *c, int32_t node, int32_t policy,
                                  int32_t *out) {
  const char *fb = NULL;
  int32_t f = vkp__fallback_target(c, &fb);
  const char *why = c->reason[(size_t)node * (size_t)c->n_targets + (size_t)policy];
  if (f >= 0 && vkp__est(c, node, f) >= 0) {
    *out = f;
    return vkp__set_reason(c->part, node, "'%s' cannot run it (%s); fell back to '%s'",
                           vkp__tname(c, policy), why, fb);
  }
  for (int32_t t = 0; t < c->n_targets; ++t) {
    if (vkp__est(c, node, t) < 0) continue;
    *out = t;
    if (!fb)
      return vkp__set_reason(
          c->part, node,
          "'%s' cannot run it (%s); no registered target is the default "
          "fallback, so it went to '%s', the first registered target that can",
          vkp__tname(c, policy), why, vkp__tname(c, t));
    return vkp__set_reason(
        c->part, node,
        "'%s' cannot run it (%s); fallback '%s' %s, so it went to '%s', the "
        "first registered target that can",
        vkp__tname(c, policy), why, fb,
        f < 0 ? "is not registered" : "cannot run it either", vkp__tname(c, t));
  }
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "node '%s' (%s): no registered target can run it "
                         "('%s': %s)",
                         c->graph->nodes[node].name,
                         vkp_op_name(c->graph->nodes[node].op),
                         vkp__tname(c, policy), why);
}

// Seconds that depend on node `i`'s label: its estimate plus the transfers
// of the values it reads and writes.
static double vkp__local(const vkp__pctx_t *c, const int32_t *labels,
                         int32_t i) {
  const vkp_node_t *n = &c->graph->nodes[i];
  double s = vkp__est(c, i, labels[i]);
  for (int32_t k = 0; k < n->n_inputs; ++k)
    if (n->inputs[k] >= 0) s += vkp__value_transfer(c, labels, n->inputs[k]);
  for (int32_t k = 0; k < n->n_outputs; ++k)
    s += vkp__value_transfer(c, labels, n->outputs[k]);
  return s;
}

// Grows the same-label component of `seed` (over producer/consumer edges,
// movable nodes only) into `members`; returns its size.
static int32_t vkp__component(const vkp__pctx_t *c, const int32_t *labels,
                              int32_t seed, int32_t *members, uint8_t *mark) {
  const vkp_graph_t *g = c->graph;
  int32_t n = 0, head = 0;
  members[n++] = seed;
  mark[seed] = 1;
  while (head < n) {
    const vkp_node_t *node = &g->nodes[members[head++]];
    for (int32_t k = 0; k < node->n_inputs; ++k) {
      int32_t v = node->inputs[k];
      int32_t p = v >= 0 ? g->values[v].producer : -1;
      if (p >= 0 && !mark[p] && !c->fixed[p] && labels[p] == labels[seed]) {
        mark[p] = 1;
        members[n++] = p;
      }
    }
    for (int32_t k = 0; k < node->n_outputs; ++k) {
      int32_t v = node->outputs[k];
      for (int32_t q = c->cons_start[v]; q < c->cons_start[v + 1]; ++q) {
        int32_t m = c->cons[q];
        if (!mark[m] && !c->fixed[m] && labels[m] == labels[seed]) {
          mark[m] = 1;
          members[n++] = m;
        }
      }
    }
  }
  return n;
}

// "auto": move single nodes, then whole same-target components, to another
// target while that lowers the objective. Each accepted move lowers it, so
// the search ends; passes are capped anyway.
static vkp_status_t vkp__auto_search(vkp__pctx_t *c, int32_t *labels) {
  const vkp_graph_t *g = c->graph;
  int32_t *members = vkp__calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
  uint8_t *mark = vkp__calloc((size_t)g->n_nodes + 1, 1);
  if (!members || !mark) {
    vkp__free(members);
    vkp__free(mark);
    return VKP_OOM("placement search");
  }
  for (int pass = 0; pass < VKP__MAX_PASSES; ++pass) {
    bool moved = false;
    for (int32_t i = 0; i < g->n_nodes; ++i) {
      if (c->fixed[i]) continue;
      int32_t cur = labels[i];
      double best = vkp__local(c, labels, i);
      int32_t best_t = cur;
      for (int32_t t = 0; t < c->n_targets; ++t) {
        if (t == cur || vkp__est(c, i, t) < 0) continue;
        labels[i] = t;
        double s = vkp__local(c, labels, i);
        if (s < best - 1e-12 * (1.0 + best)) {
          best = s;
          best_t = t;
        }
      }
      labels[i] = best_t;
      moved |= best_t != cur;
    }
    memset(mark, 0, (size_t)g->n_nodes + 1);
    for (int32_t i = 0; i < g->n_nodes; ++i) {
      if (c->fixed[i] || mark[i]) continue;
      int32_t n = vkp__component(c, labels, i, members, mark);
      int32_t cur = labels[i];
      double base = vkp__placement_objective(c, labels);
      int32_t best_t = cur;
      double best = base;
      for (int32_t t = 0; t < c->n_targets; ++t) {
        if (t == cur) continue;
        bool ok = true;
        for (int32_t k = 0; k < n && ok; ++k) ok = vkp__est(c, members[k], t) >= 0;
        if (!ok) continue;
        for (int32_t k = 0; k < n; ++k) labels[members[k]] = t;
        double s = vkp__placement_objective(c, labels);
        if (s < best - 1e-12 * (1.0 + best)) {
          best = s;
          best_t = t;
        }
      }
      for (int32_t k = 0; k < n; ++k) labels[members[k]] = best_t;
      moved |= best_t != cur;
    }
    if (!moved) break;
  }
  vkp__free(members);
  vkp__free(mark);
  return NULL;
}

// Fallbacks, for the table, the plan and the picture: a node fell back when
// the policy target refused it, or (under "auto") when a target that
// refused it would have been faster than the one it got. Manual placements
// are where the user put them.
static vkp_status_t vkp__mark_fallbacks(vkp__pctx_t *c) {
  vkp_partition_t *part = c->part;
  for (int32_t i = 0; i < c->graph->n_nodes; ++i) {
    part->node_fallback_from[i] = -1;
    if (c->fixed[i]) continue;
    int32_t placed = part->node_target[i], from = -1;
    if (part->policy_target >= 0) {
      if (vkp__est(c, i, part->policy_target) < 0) from = part->policy_target;
    } else {
      double best = vkp__est(c, i, placed);
      for (int32_t t = 0; t < c->n_targets; ++t) {
        size_t at = (size_t)i * (size_t)c->n_targets + (size_t)t;
        if (c->est[at] >= 0 || c->would_cost[at] >= best) continue;
        best = c->would_cost[at];
        from = t;
      }
    }
    if (from < 0) continue;
    part->node_fallback_from[i] = from;
    part->node_refusal[i] =
        vkp__strdup(c->reason[(size_t)i * (size_t)c->n_targets + (size_t)from]);
    if (!part->node_refusal[i]) return VKP_OOM("fallback reason");
  }
  return NULL;
}

// Scales the estimates by the measured stage times in the options (see
// vkp_partition_measure_t), with a note per measured stage.
static vkp_status_t vkp__apply_measured(vkp__pctx_t *c) {
  const vkp_partition_options_t *o = c->options;
  const vkp_graph_t *g = c->graph;
  if (o->n_measured < 0 || (o->n_measured > 0 && !o->measured))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "measured stages: %d entries at %p", (int)o->n_measured,
                           (const void *)o->measured);
  for (int32_t k = 0; k < o->n_measured; ++k) {
    const vkp_plan_stage_t *ps = o->measured[k].stage;
    double seconds = o->measured[k].seconds;
    if (!ps || !ps->graph || !ps->target)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "measured stage %d has no stage, graph or target", (int)k);
    double estimated = ps->estimated_ms * 1e-3;
    if (!(estimated > 0) || !isfinite(estimated))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "measured stage '%s' has no estimate to correct "
                             "(estimated_ms %g): only stages the partitioner "
                             "estimated can be measured against it",
                             ps->name, ps->estimated_ms);
    if (!(seconds > 0) || !isfinite(seconds))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "measured stage '%s': time %g s is not a positive number",
                             ps->name, seconds);
    int32_t t = 0;
    while (t < c->n_targets && strcmp(c->part->targets[t]->vtable->name, ps->target))
      ++t;
    if (t == c->n_targets)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "measured stage '%s' ran on target '%s', which is "
                             "not registered here",
                             ps->name, ps->target);
    double factor = seconds / estimated;
    int32_t matched = 0;
    for (int32_t j = 0; j < ps->graph->n_nodes; ++j) {
      int32_t i = vkp_graph_find_node(g, ps->graph->nodes[j].name);
      if (i < 0) continue;
      size_t at = (size_t)i * (size_t)c->n_targets + (size_t)t;
      if (c->est[at] >= 0) c->est[at] *= factor;
      c->would_cost[at] *= factor;
      ++matched;
    }
    if (matched == 0 && ps->graph->n_nodes > 0)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "measured stage '%s': none of its %d nodes is in "
                             "graph '%s' (a plan of another model?)",
                             ps->name, (int)ps->graph->n_nodes, g->name);
    VKP_RETURN_IF_ERROR(vkp__note(c->part,
                                  "measured: %s (%s, %d nodes) %.3f ms per frame "
                                  "against %.3f ms estimated: its nodes' estimates "
                                  "x%.3f",
                                  ps->name, ps->target, (int)matched, seconds * 1e3,
                                  estimated * 1e3, factor));
  }
  return NULL;
}

vkp_status_t vkp__place(vkp__pctx_t *c, const vkp_registry_t *registry) {
  const vkp_graph_t *g = c->graph;
  vkp_partition_t *part = c->part;
  const vkp_partition_options_t *o = c->options;
  int32_t *labels = part->node_target;
  int32_t *origin = vkp__calloc((size_t)g->n_nodes + 1, sizeof(int32_t));
  if (!origin) return VKP_OOM("placement");
  vkp_status_t st = NULL;
  // Estimates and support of every node on every target.
  for (int32_t i = 0; i < g->n_nodes && !st; ++i) {
    for (int32_t t = 0; t < c->n_targets && !st; ++t) {
      const vkp_target_t *tg = part->targets[t];
      char why[256] = "";
      size_t at = (size_t)i * (size_t)c->n_targets + (size_t)t;
      if (!vkp_target_supports(tg, g, &g->nodes[i], why, sizeof why)) {
        c->est[at] = -1.0;
        c->reason[at] = vkp__strdup(why[0] ? why : "not supported");
        if (!c->reason[at]) st = VKP_OOM("placement reason");
        // What it would cost there, by the roofline alone (the target's own
        // estimator need not handle nodes it refuses).
        vkp_op_cost_t work;
        if (!st) st = vkp_op_cost(g, &g->nodes[i], &work);
        vkp_profile_target_t scratch;
        if (!st)
          c->would_cost[at] = vkp_roofline_seconds(
              vkp_profile_target_rates(c->profile, tg, &scratch), &work);
        continue;
      }
      st = vkp_status_annotate(
          vkp_node_estimate_threads(c->profile, tg, g, &g->nodes[i],
                                    c->target_threads[t], &c->est[at]),
          "estimating node '%s' on '%s'", g->nodes[i].name, tg->vtable->name);
      c->would_cost[at] = c->est[at];
    }
  }
  if (!st) st = vkp__apply_measured(c);
  const char *policy = o->policy ? o->policy : "auto";
  part->policy_target = -1;
  if (!st && strcmp(policy, "auto") != 0)
    st = vkp_status_annotate(vkp__lookup(c, registry, policy, &part->policy_target),
                             "policy '%s'", policy);
  // A fallback is checked whether or not a node needs it: a misspelt one
  // would otherwise only surface on the model that first falls back. A
  // known target that is unavailable here is fine (the fallback path says
  // so when it is used).
  if (!st && o->fallback && !vkp_registry_find(registry, o->fallback) &&
      !vkp_registry_unavailable_reason(registry, o->fallback)) {
    const vkp_target_t *unused = NULL;
    st = vkp_status_annotate(vkp_registry_lookup(registry, o->fallback, &unused),
                             "fallback '%s'", o->fallback);
  }
  if (!st) st = vkp__manual(c, registry, labels, origin);
  // The policy's first choice for every node, and the start placement.
  for (int32_t i = 0; i < g->n_nodes && !st; ++i) {
    int32_t first = -1;
    if (part->policy_target >= 0) {
      first = part->policy_target;
    } else {
      for (int32_t t = 0; t < c->n_targets; ++t)
        if (vkp__est(c, i, t) >= 0 && (first < 0 || vkp__est(c, i, t) < vkp__est(c, i, first)))
          first = t;
      if (first < 0)
        st = vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "node '%s' (%s): no registered target can run it",
                             g->nodes[i].name, vkp_op_name(g->nodes[i].op));
    }
    part->node_first_choice[i] = first;
    if (st || c->fixed[i]) continue;
    if (vkp__est(c, i, first) >= 0)
      labels[i] = first;
    else
      st = vkp__fallback(c, i, first, &labels[i]);
  }
  if (!st && part->policy_target < 0) st = vkp__auto_search(c, labels);
  for (int32_t i = 0; i < g->n_nodes && !st; ++i) {
    int32_t t = labels[i], first = part->node_first_choice[i];
    part->node_seconds[i] = vkp__est(c, i, t);
    if (t == first) continue;
    if (c->fixed[i]) {
      if (origin[i] == o->n_assigns)
        st = vkp__set_reason(part, i, "placed on '%s' by its \"target\" in the graph",
                             vkp__tname(c, t));
      else
        st = vkp__set_reason(part, i, "placed on '%s' by --assign '%s=%s'",
                             vkp__tname(c, t), o->assigns[origin[i]].pattern,
                             o->assigns[origin[i]].target);
    } else if (part->policy_target < 0) {
      st = vkp__set_reason(part, i,
                           "cheapest alone on '%s' (%.4f ms vs %.4f ms on '%s'), "
                           "but its neighbours' data lives on '%s': moving it "
                           "saves transfers",
                           vkp__tname(c, first), vkp__est(c, i, first) * 1e3,
                           vkp__est(c, i, t) * 1e3, vkp__tname(c, t),
                           vkp__tname(c, t));
    }
  }
  if (!st) st = vkp__mark_fallbacks(c);
  vkp__free(origin);
  return st;
}
