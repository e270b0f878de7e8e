// SPDX-License-Identifier: Apache-2.0
// Private parts of vkp_graph_t shared by the files of graph/.
#ifndef VKPIPE_GRAPH_INTERNAL_H_
#define VKPIPE_GRAPH_INTERNAL_H_

#include "base/alloc.h"
#include "base/strmap.h"
#include "vkpipe/graph.h"

struct vkp__graph_internal_t {
  vkp_strmap_t value_index;  // name -> value
  vkp_strmap_t node_index;   // name -> node
  int32_t cap_values;
  int32_t cap_nodes;
  // What the graph allocates with (the creator's, or the current one when
  // the creator gave none); current during every call that changes it.
  vkp_allocator_t allocator;
};

// The graph's allocator, for VKP__ALLOCATOR_SCOPE (NULL: leave the current).
static inline const vkp_allocator_t *vkp__graph_allocator(const vkp_graph_t *g) {
  return g && g->internal ? &g->internal->allocator : NULL;
}

// Frees what an attribute owns (its name and arrays).
void vkp__attr_deinit(vkp_attr_t *attr);
// Deep copy of `src` into `dst`.
vkp_status_t vkp__attr_copy(vkp_attr_t *dst, const vkp_attr_t *src);
// Replaces (or adds) an attribute of `node` with a deep copy of `attr`.
vkp_status_t vkp__node_set_attr(vkp_node_t *node, const vkp_attr_t *attr);

// Rebuilds the node name index after nodes were reordered.
vkp_status_t vkp__graph_reindex(vkp_graph_t *graph);
// Rebuilds the value name index after values were reordered.
vkp_status_t vkp__graph_reindex_values(vkp_graph_t *graph);

// Replaces the graph's last node by its results: each of its outputs becomes
// a constant holding data[i] (consumed: heap memory of the output's byte
// size), and the node is removed. For constant folding while a graph is
// built (the ONNX importer): nothing may refer to the node by index yet.
vkp_status_t vkp__graph_fold_last_node(vkp_graph_t *graph, void **data)
    VKP_MUST_USE;

// Drops the trailing outputs of a node that nothing reads (no node input,
// no graph output) while the op allows fewer (its minimum output count;
// never for ops with any number of outputs): exporters name every output
// of LSTM (Y_h, Y_c), MaxPool (Indices) or Unique whether it is used or not,
// and a target that writes only the first should not refuse the node for
// them. The dropped values go too.
vkp_status_t vkp__graph_trim_outputs(vkp_graph_t *graph) VKP_MUST_USE;
// Removes constants that no node reads and no output lists, renumbering
// the remaining values.
vkp_status_t vkp__graph_prune_constants(vkp_graph_t *graph) VKP_MUST_USE;

// Shape inference and attribute canonicalisation for one node whose inputs
// have known shapes (graph/ops.c).
vkp_status_t vkp__op_infer(vkp_graph_t *graph, int32_t node);
// Checks a node's arity and attribute kinds against the op schema.
vkp_status_t vkp__op_check_schema(vkp_graph_t *graph, int32_t node);

#endif  // VKPIPE_GRAPH_INTERNAL_H_
