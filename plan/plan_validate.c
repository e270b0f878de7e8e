// SPDX-License-Identifier: Apache-2.0
// Plan validation: every problem is collected and reported at once, each line
// naming the binding or stage it is about.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "base/strmap.h"
#include "vkpipe/plan.h"

typedef struct vkp__problems_t {
  vkp__sb_t text;  // "\n  <problem>" per problem
  int32_t count;
} vkp__problems_t;

static void vkp__problem(vkp__problems_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void vkp__problem(vkp__problems_t *p, const char *fmt, ...) {
  vkp__sb_append(&p->text, "\n  ");
  va_list ap;
  va_start(ap, fmt);
  vkp__sb_vprintf(&p->text, fmt, ap);
  va_end(ap);
  p->count++;
}

static void vkp__describe(const vkp_plan_t *plan, const vkp_plan_binding_t *b,
                          char *buf, size_t size) {
  const char *src = b->src_stage == VKP_PLAN_GLOBAL ? "global"
                    : b->src_stage >= 0 && b->src_stage < plan->n_stages
                        ? plan->stages[b->src_stage].name
                        : "?";
  const char *dst = b->dst_stage == VKP_PLAN_GLOBAL ? "global"
                    : b->dst_stage >= 0 && b->dst_stage < plan->n_stages
                        ? plan->stages[b->dst_stage].name
                        : "?";
  snprintf(buf, size, "binding %s.%s -> %s.%s", src, b->src_name, dst,
           b->dst_name);
}

static bool vkp__same_type(const vkp_value_t *a, const vkp_value_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static bool vkp__stage_edge(const vkp_plan_t *plan, const vkp_plan_binding_t *b) {
  int32_t n = plan->n_stages;
  return b->src_stage >= 0 && b->dst_stage >= 0 && b->src_stage < n &&
         b->dst_stage < n && b->src_stage != b->dst_stage;
}

// One problem per cycle: Kahn's algorithm over the stage edges leaves the
// stages on cycles; walking back from one of them finds a cycle, reported
// through the binding on it that goes back in stage order, which is then
// set aside and the search repeated.
static void vkp__check_cycles(const vkp_plan_t *plan, vkp__problems_t *p) {
  int32_t n = plan->n_stages, nb = plan->n_bindings;
  int32_t *indeg = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *queue = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *path = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *via = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *where = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  uint8_t *ignored = vkp__calloc((size_t)nb + 1, 1);
  if (!indeg || !queue || !path || !via || !where || !ignored) {
    p->text.failed = true;
    goto done;
  }
  for (int32_t round = 0; round <= nb; ++round) {
    memset(indeg, 0, (size_t)n * sizeof(int32_t));
    for (int32_t i = 0; i < nb; ++i)
      if (!ignored[i] && vkp__stage_edge(plan, &plan->bindings[i]))
        indeg[plan->bindings[i].dst_stage]++;
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; ++i)
      if (!indeg[i]) queue[tail++] = i;
    while (head < tail) {
      int32_t s = queue[head++];
      for (int32_t i = 0; i < nb; ++i) {
        const vkp_plan_binding_t *b = &plan->bindings[i];
        if (!ignored[i] && vkp__stage_edge(plan, b) && b->src_stage == s &&
            --indeg[b->dst_stage] == 0)
          queue[tail++] = b->dst_stage;
      }
    }
    if (tail == n) break;
    // Stages left have a predecessor that is left too: walk back until a
    // stage repeats.
    int32_t s = 0;
    while (indeg[s] == 0) ++s;
    for (int32_t i = 0; i < n; ++i) where[i] = -1;
    int32_t len = 0;
    while (where[s] < 0) {
      where[s] = len;
      path[len] = s;
      int32_t pick = -1;
      for (int32_t i = 0; i < nb && pick < 0; ++i) {
        const vkp_plan_binding_t *b = &plan->bindings[i];
        if (!ignored[i] && vkp__stage_edge(plan, b) && b->dst_stage == s &&
            indeg[b->src_stage] > 0)
          pick = i;
      }
      via[len++] = pick;  // binding into path[len - 1]
      s = plan->bindings[pick].src_stage;
    }
    // The cycle is path[where[s]] <- ... <- path[len-1] <- s (== path[where[s]]).
    int32_t first = where[s], closing = via[first];
    for (int32_t k = first; k < len; ++k) {
      const vkp_plan_binding_t *b = &plan->bindings[via[k]];
      if (b->src_stage > b->dst_stage) closing = via[k];
    }
    // Forward: path[first] -> path[len-1] -> ... -> path[first+1] -> path[first].
    char route[256] = "";
    size_t used = 0;
    for (int32_t k = len; k >= first && used < sizeof route; --k) {
      int32_t stage = k == len ? path[first] : path[k];
      int w = snprintf(route + used, sizeof route - used, "%s%s", used ? " -> " : "",
                       plan->stages[stage].name);
      if (w < 0) break;
      used += (size_t)w;
    }
    char d[256];
    vkp__describe(plan, &plan->bindings[closing], d, sizeof d);
    vkp__problem(p, "%s: makes a cycle (%s)", d, route);
    ignored[closing] = 1;
  }
done:
  vkp__free(indeg);
  vkp__free(queue);
  vkp__free(path);
  vkp__free(via);
  vkp__free(where);
  vkp__free(ignored);
}

vkp_status_t vkp_plan_validate(const vkp_plan_t *plan) {
  vkp__problems_t p = {0};
  int32_t n = plan->n_stages;
  if (n == 0) vkp__problem(&p, "plan '%s' has no stages", plan->name);
  // How many times each stage input and each global output is bound, and the
  // first value bound to each global input (to compare types).
  int32_t **bound = vkp__calloc((size_t)n + 1, sizeof(int32_t *));
  int32_t *out_bound = vkp__calloc((size_t)plan->n_outputs + 1, sizeof(int32_t));
  int32_t *in_used = vkp__calloc((size_t)plan->n_inputs + 1, sizeof(int32_t));
  const vkp_value_t **in_type =
      vkp__calloc((size_t)plan->n_inputs + 1, sizeof(vkp_value_t *));
  if (!bound || !out_bound || !in_used || !in_type) {
    p.text.failed = true;
    goto done;
  }
  for (int32_t s = 0; s < n; ++s) {
    const vkp_graph_t *g = plan->stages[s].graph;
    if (!g->validated)
      vkp__problem(&p, "stage '%s': its subgraph is not validated",
                   plan->stages[s].name);
    if (plan->stages[s].rank < 0 || plan->stages[s].rank > VKP_PLAN_MAX_RANK)
      vkp__problem(&p, "stage '%s': rank %d out of range 0..%d",
                   plan->stages[s].name, (int)plan->stages[s].rank,
                   VKP_PLAN_MAX_RANK);
    const vkp_plan_stage_t *ps = &plan->stages[s];
    if (ps->replicas < 0 || ps->replicas > VKP_PLAN_MAX_REPLICAS)
      vkp__problem(&p, "stage '%s': %d replicas out of range 1..%d", ps->name,
                   (int)ps->replicas, VKP_PLAN_MAX_REPLICAS);
    if (ps->replicas > 1 && ps->rank != 0)
      vkp__problem(&p, "stage '%s': replicas on another MPI rank (rank %d) are not "
                   "supported yet; place the copies in the process that creates the "
                   "pipeline", ps->name, (int)ps->rank);
    if (ps->replicas > 1 && ps->n_cpu_affinity)
      vkp__problem(&p, "stage '%s': replicas and cpu_affinity together are not "
                   "supported yet (every copy would pin its threads to the same cpus)",
                   ps->name);
    bound[s] = vkp__calloc((size_t)g->n_inputs + 1, sizeof(int32_t));
    if (!bound[s]) {
      p.text.failed = true;
      goto done;
    }
  }
  for (int32_t i = 0; i < plan->n_bindings; ++i) {
    const vkp_plan_binding_t *b = &plan->bindings[i];
    char d[256];
    vkp__describe(plan, b, d, sizeof d);
    bool src_ok = true, dst_ok = true;
    const vkp_value_t *src_val = NULL, *dst_val = NULL;
    if (b->src_stage != VKP_PLAN_GLOBAL && (b->src_stage < 0 || b->src_stage >= n)) {
      vkp__problem(&p, "%s: unknown source stage %d", d, (int)b->src_stage);
      src_ok = false;
    }
    if (b->dst_stage != VKP_PLAN_GLOBAL && (b->dst_stage < 0 || b->dst_stage >= n)) {
      vkp__problem(&p, "%s: unknown destination stage %d", d, (int)b->dst_stage);
      dst_ok = false;
    }
    if (src_ok && dst_ok && b->src_stage >= 0 && b->src_stage == b->dst_stage) {
      vkp__problem(&p, "%s: a stage cannot bind to itself", d);
      continue;
    }
    int32_t gin = -1;
    if (src_ok && b->src_stage == VKP_PLAN_GLOBAL) {
      gin = vkp__strlist_index(plan->inputs, plan->n_inputs, b->src_name);
      if (gin < 0) {
        if (vkp__strlist_index(plan->outputs, plan->n_outputs, b->src_name) >= 0)
          vkp__problem(&p, "%s: global output '%s' used as a source", d,
                       b->src_name);
        else
          vkp__problem(&p, "%s: unknown global input '%s'", d, b->src_name);
        src_ok = false;
      } else {
        in_used[gin]++;
      }
    } else if (src_ok) {
      const vkp_graph_t *g = plan->stages[b->src_stage].graph;
      int32_t k = vkp_graph_find_output(g, b->src_name);
      if (k < 0) {
        vkp__problem(&p, "%s: stage '%s' has no output '%s'", d,
                     plan->stages[b->src_stage].name, b->src_name);
        src_ok = false;
      } else {
        src_val = &g->values[g->outputs[k]];
      }
    }
    if (dst_ok && b->dst_stage == VKP_PLAN_GLOBAL) {
      int32_t k = vkp__strlist_index(plan->outputs, plan->n_outputs, b->dst_name);
      if (k < 0) {
        if (vkp__strlist_index(plan->inputs, plan->n_inputs, b->dst_name) >= 0)
          vkp__problem(&p, "%s: output bound to global input '%s'", d,
                       b->dst_name);
        else
          vkp__problem(&p, "%s: unknown global output '%s'", d, b->dst_name);
        dst_ok = false;
      } else {
        out_bound[k]++;
        if (src_ok && b->src_stage == VKP_PLAN_GLOBAL)
          vkp__problem(&p, "%s: a global input cannot feed a global output "
                       "directly", d);
      }
    } else if (dst_ok) {
      const vkp_graph_t *g = plan->stages[b->dst_stage].graph;
      int32_t k = vkp_graph_find_input(g, b->dst_name);
      if (k < 0) {
        vkp__problem(&p, "%s: stage '%s' has no input '%s'", d,
                     plan->stages[b->dst_stage].name, b->dst_name);
        dst_ok = false;
      } else {
        bound[b->dst_stage][k]++;
        dst_val = &g->values[g->inputs[k]];
      }
    }
    if (gin >= 0 && dst_val) {
      if (!in_type[gin]) in_type[gin] = dst_val;
      else src_val = in_type[gin];
    }
    if (src_val && dst_val && !vkp__same_type(src_val, dst_val)) {
      char a[128], c[128];
      vkp__problem(&p, "%s: type mismatch: %s %s vs %s %s", d,
                   vkp_dtype_name(src_val->dtype),
                   vkp_shape_format(src_val->rank, src_val->shape, a, sizeof a),
                   vkp_dtype_name(dst_val->dtype),
                   vkp_shape_format(dst_val->rank, dst_val->shape, c, sizeof c));
    }
  }
  for (int32_t s = 0; s < n; ++s) {
    const vkp_graph_t *g = plan->stages[s].graph;
    for (int32_t k = 0; k < g->n_inputs; ++k) {
      if (bound[s][k] == 1) continue;
      vkp__problem(&p, "stage '%s' input '%s' is %s", plan->stages[s].name,
                   g->values[g->inputs[k]].name,
                   bound[s][k] ? "bound more than once" : "not bound");
    }
  }
  for (int32_t k = 0; k < plan->n_outputs; ++k)
    if (out_bound[k] != 1)
      vkp__problem(&p, "global output '%s' is %s", plan->outputs[k],
                   out_bound[k] ? "bound more than once" : "not bound");
  for (int32_t k = 0; k < plan->n_inputs; ++k)
    if (!in_used[k])
      vkp__problem(&p, "global input '%s' is not bound to any stage",
                   plan->inputs[k]);
  vkp__check_cycles(plan, &p);
done:
  for (int32_t s = 0; bound && s < n; ++s) vkp__free(bound[s]);
  vkp__free(bound);
  vkp__free(out_bound);
  vkp__free(in_used);
  vkp__free(in_type);
  vkp_status_t st = NULL;
  if (p.text.failed) {
    st = VKP_OOM("plan validation");
  } else if (p.count) {
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "plan '%s' has %d problem%s:%s", plan->name,
                         (int)p.count, p.count == 1 ? "" : "s", p.text.data);
  }
  vkp__sb_deinit(&p.text);
  return st;
}
