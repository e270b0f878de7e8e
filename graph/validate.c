// SPDX-License-Identifier: Apache-2.0
// Graph validation: references, cycles, topological order, shape inference.
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"

// Lists up to a few node names of `nodes` flagged in `mask` into `buf`.
static void vkp__list_nodes(const vkp_graph_t *g, const uint8_t *mask, char *buf,
                            size_t size) {
  size_t used = 0;
  int listed = 0, total = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    if (!mask[i]) continue;
    ++total;
    if (listed >= 8 || used >= size) continue;
    int w = snprintf(buf + used, size - used, "%s'%s'", listed ? ", " : "",
                     g->nodes[i].name);
    if (w < 0) break;
    used += (size_t)w;
    ++listed;
  }
  if (total > listed && used < size)
    snprintf(buf + used, size - used, " and %d more", total - listed);
}

static vkp_status_t vkp__check_references(const vkp_graph_t *g) {
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      if (v < 0) continue;
      const vkp_value_t *val = &g->values[v];
      if (val->kind == VKP_VALUE_INTERMEDIATE && val->producer < 0)
        return vkp_status_make(VKP_STATUS_NOT_FOUND,
                               "node '%s' (%s): input %d refers to unknown "
                               "tensor '%s'",
                               n->name, vkp_op_name(n->op), (int)j, val->name);
    }
  }
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    const vkp_value_t *val = &g->values[g->outputs[i]];
    if (val->kind == VKP_VALUE_INTERMEDIATE && val->producer < 0)
      return vkp_status_make(VKP_STATUS_NOT_FOUND,
                             "graph output '%s' is not produced by any node",
                             val->name);
  }
  if (g->n_outputs == 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "graph '%s' has no outputs", g->name);
  return NULL;
}

// Kahn's algorithm over producer edges; reorders g->nodes in place (stable:
// among ready nodes the earliest declared goes first).
static vkp_status_t vkp__topo_sort(vkp_graph_t *g) {
  int32_t nn = g->n_nodes;
  vkp_status_t st = NULL;
  int32_t *pending = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  int32_t *order = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  int32_t *heap = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  // consumers as CSR: for each value, the nodes reading it.
  int32_t *first = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  int32_t total_edges = 0;
  for (int32_t i = 0; i < nn; ++i) total_edges += g->nodes[i].n_inputs;
  int32_t *edges = vkp__calloc((size_t)total_edges + 1, sizeof(int32_t));
  uint8_t *mask = vkp__calloc((size_t)nn + 1, 1);
  vkp_node_t *sorted = vkp__calloc((size_t)nn + 1, sizeof(vkp_node_t));
  int32_t *remap = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  if (!pending || !order || !heap || !first || !edges || !mask || !sorted ||
      !remap) {
    st = VKP_OOM("topological sort");
    goto done;
  }
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      if (v < 0 || g->values[v].producer < 0) continue;
      pending[i]++;
      first[v]++;
    }
  }
  // Prefix sums: first[v] becomes the end of v's slot, then we fill backwards.
  for (int32_t v = 1; v < g->n_values; ++v) first[v] += first[v - 1];
  int32_t counted = g->n_values ? first[g->n_values - 1] : 0;
  for (int32_t i = nn - 1; i >= 0; --i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = n->n_inputs - 1; j >= 0; --j) {
      int32_t v = n->inputs[j];
      if (v < 0 || g->values[v].producer < 0) continue;
      edges[--first[v]] = i;
    }
  }
  // Min-heap of ready node indices keeps declaration order where possible.
  int32_t heap_size = 0, emitted = 0;
#define VKP__HEAP_PUSH(x)                                              \
  do {                                                                 \
    int32_t c_ = heap_size++;                                          \
    heap[c_] = (x);                                                    \
    while (c_ > 0 && heap[(c_ - 1) / 2] > heap[c_]) {                  \
      int32_t p_ = (c_ - 1) / 2, t_ = heap[p_];                        \
      heap[p_] = heap[c_];                                             \
      heap[c_] = t_;                                                   \
      c_ = p_;                                                         \
    }                                                                  \
  } while (0)
  for (int32_t i = 0; i < nn; ++i)
    if (pending[i] == 0) VKP__HEAP_PUSH(i);
  while (heap_size > 0) {
    int32_t top = heap[0];
    heap[0] = heap[--heap_size];
    for (int32_t c = 0;;) {
      int32_t l = 2 * c + 1, r = l + 1, m = c;
      if (l < heap_size && heap[l] < heap[m]) m = l;
      if (r < heap_size && heap[r] < heap[m]) m = r;
      if (m == c) break;
      int32_t t = heap[m];
      heap[m] = heap[c];
      heap[c] = t;
      c = m;
    }
    order[emitted++] = top;
    const vkp_node_t *n = &g->nodes[top];
    for (int32_t j = 0; j < n->n_outputs; ++j) {
      int32_t v = n->outputs[j];
      int32_t end = v + 1 < g->n_values ? first[v + 1] : counted;
      for (int32_t e = first[v]; e < end; ++e)
        if (--pending[edges[e]] == 0) VKP__HEAP_PUSH(edges[e]);
    }
  }
#undef VKP__HEAP_PUSH
  if (emitted != nn) {
    for (int32_t i = 0; i < nn; ++i) mask[i] = pending[i] > 0;
    char names[512];
    vkp__list_nodes(g, mask, names, sizeof names);
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "graph '%s' has a cycle through nodes %s", g->name,
                         names);
    goto done;
  }
  for (int32_t i = 0; i < nn; ++i) {
    sorted[i] = g->nodes[order[i]];
    remap[order[i]] = i;
  }
  memcpy(g->nodes, sorted, (size_t)nn * sizeof(vkp_node_t));
  for (int32_t v = 0; v < g->n_values; ++v)
    if (g->values[v].producer >= 0)
      g->values[v].producer = remap[g->values[v].producer];
  st = vkp__graph_reindex(g);
done:
  vkp__free(pending);
  vkp__free(order);
  vkp__free(heap);
  vkp__free(first);
  vkp__free(edges);
  vkp__free(mask);
  vkp__free(sorted);
  vkp__free(remap);
  return st;
}

// Puts the values in a canonical order: graph inputs (declared order),
// constants (their existing relative order), then node outputs in node order,
// then anything left (unreferenced names). Two graphs with the same inputs,
// constants and topologically ordered nodes thus number their values alike,
// so a blob that refers to value indices (a target's compiled code) stays
// valid for the same graph saved and loaded again, e.g. from an artifact.
static vkp_status_t vkp__canonical_value_order(vkp_graph_t *g) {
  int32_t n = g->n_values;
  vkp_status_t st = NULL;
  int32_t *renum = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  vkp_value_t *sorted = vkp__calloc((size_t)n + 1, sizeof(vkp_value_t));
  if (!renum || !sorted) {
    st = VKP_OOM("value order");
    goto done;
  }
  for (int32_t v = 0; v < n; ++v) renum[v] = -1;
  int32_t k = 0;
#define VKP__TAKE(v)                        \
  do {                                      \
    if (renum[(v)] < 0) renum[(v)] = k++;   \
  } while (0)
  for (int32_t i = 0; i < g->n_inputs; ++i) VKP__TAKE(g->inputs[i]);
  for (int32_t v = 0; v < n; ++v)
    if (g->values[v].kind == VKP_VALUE_CONSTANT) VKP__TAKE(v);
  for (int32_t i = 0; i < g->n_nodes; ++i)
    for (int32_t j = 0; j < g->nodes[i].n_outputs; ++j) VKP__TAKE(g->nodes[i].outputs[j]);
  for (int32_t v = 0; v < n; ++v) VKP__TAKE(v);
#undef VKP__TAKE
  bool same = true;
  for (int32_t v = 0; v < n && same; ++v) same = renum[v] == v;
  if (same) goto done;
  for (int32_t v = 0; v < n; ++v) sorted[renum[v]] = g->values[v];
  memcpy(g->values, sorted, (size_t)n * sizeof(vkp_value_t));
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    vkp_node_t *node = &g->nodes[i];
    for (int32_t j = 0; j < node->n_inputs; ++j)
      if (node->inputs[j] >= 0) node->inputs[j] = renum[node->inputs[j]];
    for (int32_t j = 0; j < node->n_outputs; ++j)
      node->outputs[j] = renum[node->outputs[j]];
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) g->inputs[i] = renum[g->inputs[i]];
  for (int32_t i = 0; i < g->n_outputs; ++i) g->outputs[i] = renum[g->outputs[i]];
  st = vkp__graph_reindex_values(g);
done:
  vkp__free(renum);
  vkp__free(sorted);
  return st;
}

vkp_status_t vkp_graph_validate(vkp_graph_t *graph) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  if (graph->validated) return NULL;
  VKP_RETURN_IF_ERROR(vkp__check_references(graph));
  VKP_RETURN_IF_ERROR(vkp__topo_sort(graph));
  VKP_RETURN_IF_ERROR(vkp__canonical_value_order(graph));
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    vkp_status_t st = vkp__op_infer(graph, i);
    if (st)
      return vkp_status_annotate(st, "node '%s' (%s)", graph->nodes[i].name,
                                 vkp_op_name(graph->nodes[i].op));
  }
  graph->validated = true;
  return NULL;
}
