// SPDX-License-Identifier: Apache-2.0
// Which nodes only one side of a branch_select reads (graph/branch.h).
#include "graph/branch.h"

#include "base/alloc.h"
#include "base/status_macros.h"

vkp_status_t vkp__graph_branch_sides(const vkp_graph_t *g, int32_t *excl_select,
                                     uint8_t *excl_side) {
  int32_t nn = g->n_nodes;
  // Readers of each value: (node, input slot) pairs, grouped by value.
  int32_t *first = vkp__calloc((size_t)g->n_values + 2, sizeof(int32_t));
  int32_t n_edges = 0;
  for (int32_t i = 0; i < nn; ++i) n_edges += g->nodes[i].n_inputs;
  int32_t *edge_node = vkp__calloc((size_t)n_edges + 1, sizeof(int32_t));
  int32_t *edge_slot = vkp__calloc((size_t)n_edges + 1, sizeof(int32_t));
  vkp_status_t st = NULL;
  if (!first || !edge_node || !edge_slot) {
    st = VKP_OOM("branch plan");
    goto done;
  }
  bool any = false;
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    any |= n->op == VKP_OP_BRANCH_SELECT;
    for (int32_t j = 0; j < n->n_inputs; ++j)
      if (n->inputs[j] >= 0) first[n->inputs[j] + 1]++;
  }
  for (int32_t v = 0; v < g->n_values; ++v) first[v + 1] += first[v];
  int32_t *fill = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  if (!fill) {
    st = VKP_OOM("branch plan");
    goto done;
  }
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      if (v < 0) continue;
      int32_t at = first[v] + fill[v]++;
      edge_node[at] = i;
      edge_slot[at] = j;
    }
  }
  vkp__free(fill);
  for (int32_t i = nn - 1; i >= 0; --i) {
    const vkp_node_t *n = &g->nodes[i];
    int32_t sel = -1, side = 0;
    bool ok = any;
    for (int32_t j = 0; ok && j < n->n_outputs; ++j) {
      int32_t v = n->outputs[j];
      ok = !g->values[v].is_output;
      for (int32_t e = first[v]; ok && e < first[v + 1]; ++e) {
        int32_t c = edge_node[e], k = edge_slot[e], cs, cside;
        if (g->nodes[c].op == VKP_OP_BRANCH_SELECT && k > 0) {
          cs = c;
          cside = k;
        } else if (excl_select[c] >= 0) {
          cs = excl_select[c];
          cside = excl_side[c];
        } else {
          ok = false;
          break;
        }
        if (sel < 0) {
          sel = cs;
          side = cside;
        } else {
          ok = cs == sel && cside == side;
        }
      }
    }
    excl_select[i] = ok ? sel : -1;
    excl_side[i] = (uint8_t)(ok && sel >= 0 ? side : 0);
  }
done:
  vkp__free(first);
  vkp__free(edge_node);
  vkp__free(edge_slot);
  return st;
}
