// SPDX-License-Identifier: Apache-2.0
// Regions: a topological order that stays on one target as long as it can.
// A maximal same-target run of a topological order is convex (every path
// between two of its nodes stays inside the run, since a path only moves
// forward in the order), so the regions never form a cycle.
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "partition/partition_internal.h"

// Labels are target indices; a heap per label is allocated.
#define VKP__MAX_LABELS 1024

// A binary min-heap of node indices per label.
typedef struct vkp__heap_t {
  int32_t *items;
  int32_t size;
} vkp__heap_t;

static void vkp__heap_push(vkp__heap_t *h, int32_t x) {
  int32_t i = h->size++;
  h->items[i] = x;
  while (i > 0 && h->items[(i - 1) / 2] > h->items[i]) {
    int32_t p = (i - 1) / 2, tmp = h->items[p];
    h->items[p] = h->items[i];
    h->items[i] = tmp;
    i = p;
  }
}

static int32_t vkp__heap_pop(vkp__heap_t *h) {
  int32_t top = h->items[0];
  h->items[0] = h->items[--h->size];
  int32_t i = 0;
  for (;;) {
    int32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->size && h->items[l] < h->items[m]) m = l;
    if (r < h->size && h->items[r] < h->items[m]) m = r;
    if (m == i) break;
    int32_t tmp = h->items[m];
    h->items[m] = h->items[i];
    h->items[i] = tmp;
    i = m;
  }
  return top;
}

typedef enum vkp__switch_rule_t {
  VKP__SWITCH_EARLIEST,   // the ready node earliest in graph order
  VKP__SWITCH_MOST_READY, // the label with the most ready nodes
} vkp__switch_rule_t;

// One affinity order; returns its number of runs.
static int32_t vkp__affinity_order(int32_t n, const int32_t *labels,
                                   int32_t n_labels, const int32_t *succ_start,
                                   const int32_t *succ, int32_t *indeg,
                                   vkp__heap_t *heaps, vkp__switch_rule_t rule,
                                   int32_t first_label, int32_t *order) {
  for (int32_t l = 0; l < n_labels; ++l) heaps[l].size = 0;
  for (int32_t i = 0; i < n; ++i)
    if (indeg[i] == 0) vkp__heap_push(&heaps[labels[i]], i);
  int32_t cur = first_label, runs = first_label >= 0 ? 1 : 0;
  for (int32_t k = 0; k < n; ++k) {
    if (cur < 0 || heaps[cur].size == 0) {
      int32_t pick = -1;
      for (int32_t l = 0; l < n_labels; ++l) {
        if (!heaps[l].size) continue;
        if (pick < 0) {
          pick = l;
        } else if (rule == VKP__SWITCH_EARLIEST) {
          if (heaps[l].items[0] < heaps[pick].items[0]) pick = l;
        } else if (heaps[l].size > heaps[pick].size) {
          pick = l;
        }
      }
      cur = pick;
      ++runs;
    }
    int32_t v = vkp__heap_pop(&heaps[cur]);
    order[k] = v;
    for (int32_t q = succ_start[v]; q < succ_start[v + 1]; ++q)
      if (--indeg[succ[q]] == 0) vkp__heap_push(&heaps[labels[succ[q]]], succ[q]);
  }
  return runs;
}

vkp_status_t vkp_partition_regions(const vkp_graph_t *graph,
                                   const int32_t *labels, int32_t *order,
                                   int32_t *node_region, int32_t *out_n_regions) {
  *out_n_regions = 0;
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "regions need a validated graph");
  int32_t n = graph->n_nodes, n_labels = 0;
  if (n == 0) return NULL;
  for (int32_t i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= VKP__MAX_LABELS)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "node '%s' has target label %d (want 0..%d)",
                             graph->nodes[i].name, (int)labels[i], VKP__MAX_LABELS - 1);
    if (labels[i] + 1 > n_labels) n_labels = labels[i] + 1;
  }
  // Node successor lists, one entry per (producer, consumer input) edge.
  size_t n_edges = 0;
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < graph->nodes[i].n_inputs; ++k) {
      int32_t v = graph->nodes[i].inputs[k];
      if (v >= 0 && graph->values[v].producer >= 0) ++n_edges;
    }
  int32_t *succ_start = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *succ = vkp__calloc(n_edges + 1, sizeof(int32_t));
  int32_t *fill = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *indeg0 = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *indeg = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *trial = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *heap_items = vkp__calloc((size_t)n * (size_t)n_labels + 1, sizeof(int32_t));
  vkp__heap_t *heaps = vkp__calloc((size_t)n_labels + 1, sizeof(vkp__heap_t));
  vkp_status_t st = NULL;
  if (!succ_start || !succ || !fill || !indeg0 || !indeg || !trial ||
      !heap_items || !heaps) {
    st = VKP_OOM("region order");
    goto done;
  }
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < graph->nodes[i].n_inputs; ++k) {
      int32_t v = graph->nodes[i].inputs[k];
      if (v < 0 || graph->values[v].producer < 0) continue;
      succ_start[graph->values[v].producer + 1]++;
      indeg0[i]++;
    }
  for (int32_t i = 0; i < n; ++i) succ_start[i + 1] += succ_start[i];
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < graph->nodes[i].n_inputs; ++k) {
      int32_t v = graph->nodes[i].inputs[k];
      if (v < 0 || graph->values[v].producer < 0) continue;
      int32_t p = graph->values[v].producer;
      succ[succ_start[p] + fill[p]++] = i;
    }
  for (int32_t l = 0; l < n_labels; ++l) heaps[l].items = heap_items + (size_t)l * (size_t)n;
  int32_t best_runs = -1;
  // A few cheap variants (each switch rule, starting from each label that
  // has a source node); the one with the fewest regions wins.
  const vkp__switch_rule_t rules[] = {VKP__SWITCH_EARLIEST, VKP__SWITCH_MOST_READY};
  for (size_t r = 0; r < sizeof rules / sizeof rules[0]; ++r) {
    for (int32_t first = 0; first < n_labels; ++first) {
      bool has_source = false;
      for (int32_t i = 0; i < n && !has_source; ++i)
        has_source = indeg0[i] == 0 && labels[i] == first;
      if (!has_source) continue;
      memcpy(indeg, indeg0, (size_t)n * sizeof(int32_t));
      int32_t runs = vkp__affinity_order(n, labels, n_labels, succ_start, succ,
                                         indeg, heaps, rules[r], first, trial);
      if (best_runs < 0 || runs < best_runs) {
        best_runs = runs;
        memcpy(order, trial, (size_t)n * sizeof(int32_t));
      }
    }
  }
  int32_t region = -1;
  for (int32_t k = 0; k < n; ++k) {
    if (k == 0 || labels[order[k]] != labels[order[k - 1]]) ++region;
    node_region[order[k]] = region;
  }
  *out_n_regions = region + 1;
done:
  vkp__free(succ_start);
  vkp__free(succ);
  vkp__free(fill);
  vkp__free(indeg0);
  vkp__free(indeg);
  vkp__free(trial);
  vkp__free(heap_items);
  vkp__free(heaps);
  return st;
}
