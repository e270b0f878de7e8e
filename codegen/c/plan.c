// SPDX-License-Identifier: Apache-2.0
// The C code generator's planner: fusion groups, then storage, views and
// the liveness-based workspace plan (codegen/c/plan.h).
#include "codegen/c/plan.h"

#include "base/alloc.h"
#include "base/status_macros.h"

// Decides fusion groups: walking backwards, each node not yet claimed roots a
// group and absorbs single-use elementwise producers of the same shape (and
// at most one conv/gemm/matmul, which becomes the group's anchor, when the
// group's result is float32).
static void vkp__absorb(vkp__cg_t *cg, int32_t node, int32_t root) {
  const vkp_graph_t *g = cg->g;
  const vkp_node_t *n = &g->nodes[node];
  const vkp_value_t *root_out = vkp__outv(cg, &g->nodes[root]);
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    int32_t v = n->inputs[i];
    if (v < 0) continue;
    const vkp_value_t *val = &g->values[v];
    if (n->op == VKP_OP_BATCH_NORM && i > 0) continue;  // parameters
    if (val->producer < 0 || val->is_output || cg->uses[v] != 1) continue;
    int32_t p = val->producer;
    if (cg->group_of[p] >= 0) continue;
    const vkp_node_t *pn = &g->nodes[p];
    if (!vkp__same_shape(val, root_out)) continue;
    // A bounded group runs over its root's run-time extent: every member's
    // result is bounded alike (a static one of the same shape only where
    // the bound is 1, which stays apart).
    if (!vkp__same_bounds(val, root_out)) continue;
    // Every member keeps its result in a temporary of its own C type, so
    // members of any dtypes mix (a comparison of float math feeding a
    // where); an anchor's epilogue stores float32 (ep_*: float *c).
    if (vkp__is_elementwise(pn->op)) {
      cg->group_of[p] = root;
      vkp__absorb(cg, p, root);
    } else if (vkp__is_anchor(cg, pn) && cg->anchor_of[root] < 0 &&
               val->dtype == VKP_DTYPE_FLOAT32 &&
               root_out->dtype == VKP_DTYPE_FLOAT32) {
      cg->group_of[p] = root;
      cg->anchor_of[root] = p;
    }
  }
}

void vkp__plan_groups(vkp__cg_t *cg) {
  const vkp_graph_t *g = cg->g;
  for (int32_t i = g->n_nodes - 1; i >= 0; --i) {
    if (cg->group_of[i] >= 0) continue;
    cg->group_of[i] = i;
    const vkp_node_t *n = &g->nodes[i];
    if (vkp__is_elementwise(n->op)) vkp__absorb(cg, i, i);
    else if (vkp__is_anchor(cg, n)) cg->anchor_of[i] = i;
  }
}

// Storage and workspace offsets. A group runs at its root's position;
// values it reads stay live through that position (its output never shares
// memory with them).
vkp_status_t vkp__plan_buffers(vkp__cg_t *cg) {
  const vkp_graph_t *g = cg->g;
  int32_t nv = g->n_values;
  for (int32_t v = 0; v < nv; ++v) {
    cg->alias_of[v] = -1;
    cg->io_index[v] = -1;
    cg->storage[v] = VKP__ST_NONE;
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    cg->storage[g->inputs[i]] = VKP__ST_INPUT;
    cg->io_index[g->inputs[i]] = i;
  }
  for (int32_t v = 0; v < nv; ++v) {
    if (g->values[v].kind != VKP_VALUE_CONSTANT) continue;
    cg->storage[v] = VKP__ST_CONSTANT;
    cg->io_index[v] = cg->n_constants;
    cg->constants[cg->n_constants++] = v;
  }
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    int32_t v = g->outputs[i];
    if (cg->storage[v] != VKP__ST_NONE) continue;  // an input: copied
    cg->storage[v] = VKP__ST_OUTPUT;
    cg->io_index[v] = i;
  }
  // Materialised intermediates and views; every output of a node with
  // several (only emitters run those) has its own buffer.
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_outputs; ++j) {
      int32_t v = n->outputs[j];
      if (cg->group_of[i] != i || cg->storage[v] == VKP__ST_OUTPUT) continue;
      if (vkp__is_view(n->op)) {
        cg->storage[v] = VKP__ST_ALIAS;
        int32_t src = n->inputs[0];
        cg->alias_of[v] = cg->alias_of[src] >= 0 ? cg->alias_of[src] : src;
      } else {
        cg->storage[v] = VKP__ST_WORKSPACE;
      }
    }
  }
  // Concatenation in place: along an axis with nothing but size-1 dims
  // before it, each input is a contiguous run of the output; an input that
  // only the concat reads, made by a group of its own, becomes a view of its
  // run, so its producer writes there and the concat copies nothing for it.
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (n->op != VKP_OP_CONCAT || cg->group_of[i] != i) continue;
    int32_t out = n->outputs[0];
    if (cg->storage[out] != VKP__ST_WORKSPACE && cg->storage[out] != VKP__ST_OUTPUT) continue;
    const vkp_value_t *y = &g->values[out];
    // Bounded: the runs' offsets are known only at run time.
    if (vkp_node_is_bounded(g, n)) continue;
    int64_t axis = vkp_node_int(n, "axis"), outer = 1, at = 0;
    for (int32_t d = 0; d < axis; ++d) outer *= y->shape[d];
    if (outer != 1) continue;
    for (int32_t k = 0; k < n->n_inputs; ++k) {
      int32_t v = n->inputs[k];
      const vkp_value_t *val = &g->values[v];
      int32_t p = val->producer;
      // (Not another concat's output: its inputs may already view it.)
      if (p >= 0 && cg->group_of[p] == p && g->nodes[p].n_outputs == 1 &&
          g->nodes[p].op != VKP_OP_CONCAT &&
          cg->storage[v] == VKP__ST_WORKSPACE && cg->uses[v] == 1 && !val->is_output) {
        cg->storage[v] = VKP__ST_ALIAS;
        cg->alias_of[v] = out;
        cg->alias_off[v] = at;
        cg->in_place[v] = true;
      }
      at += vkp__numel(val) * (int64_t)vkp_dtype_size(val->dtype);
    }
  }
  // Lifetimes in group positions, views extending their base.
  int32_t *def = vkp__calloc((size_t)nv, sizeof(int32_t));
  int32_t *last = vkp__calloc((size_t)nv, sizeof(int32_t));
  int32_t *order = vkp__calloc((size_t)nv, sizeof(int32_t));
  if (!def || !last || !order) {
    vkp__free(def);
    vkp__free(last);
    vkp__free(order);
    return VKP_OOM("buffer plan");
  }
  for (int32_t v = 0; v < nv; ++v) {
    def[v] = -1;
    last[v] = -1;
  }
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    int32_t pos = cg->group_of[i];
    // An output lives at least where it is written, read or not: the
    // outputs of one node never share memory.
    for (int32_t j = 0; j < n->n_outputs; ++j) {
      int32_t o = n->outputs[j];
      int32_t ob = cg->alias_of[o] >= 0 ? cg->alias_of[o] : o;
      if (def[ob] < 0) def[ob] = pos;
      if (last[ob] < pos) last[ob] = pos;
    }
    for (int32_t k = 0; k < n->n_inputs; ++k) {
      int32_t v = n->inputs[k];
      if (v < 0) continue;
      int32_t b = cg->alias_of[v] >= 0 ? cg->alias_of[v] : v;
      if (last[b] < pos) last[b] = pos;
    }
  }
  int32_t n_ws = 0;
  for (int32_t v = 0; v < nv; ++v)
    if (cg->storage[v] == VKP__ST_WORKSPACE) order[n_ws++] = v;
  // Already in definition order (nodes are topological, outputs follow).
  // First fit among the buffers still live at the definition point.
  for (int32_t a = 0; a < n_ws; ++a) {
    int32_t v = order[a];
    int64_t bytes = vkp__numel(&g->values[v]) *
                    (int64_t)vkp_dtype_size(g->values[v].dtype);
    bytes = (bytes + 63) / 64 * 64;
    int64_t at = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (int32_t b = 0; b < a; ++b) {
        int32_t u = order[b];
        if (last[u] < def[v]) continue;  // dead by now
        int64_t ub = (vkp__numel(&g->values[u]) *
                          (int64_t)vkp_dtype_size(g->values[u].dtype) + 63) /
                     64 * 64;
        if (at < cg->offset[u] + ub && cg->offset[u] < at + bytes) {
          at = cg->offset[u] + ub;
          moved = true;
        }
      }
    }
    cg->offset[v] = at;
    if (at + bytes > cg->ws_bytes) cg->ws_bytes = at + bytes;
  }
  vkp__free(def);
  vkp__free(last);
  vkp__free(order);
  return NULL;
}
