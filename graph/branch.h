// SPDX-License-Identifier: Apache-2.0
//
// Which nodes only one side of a branch_select reads (ONNX If on a run-time
// condition): the rule every target that skips an untaken branch follows
// (the ref interpreter, the C code generator).
#ifndef VKPIPE_GRAPH_BRANCH_H_
#define VKPIPE_GRAPH_BRANCH_H_

#include <stdint.h>

#include "vkpipe/graph.h"

// For each node i of `graph` (validated, in topological order):
// excl_select[i] is the branch_select node whose side excl_side[i] (1 or 2,
// its input index) alone reads it, or -1. A node is exclusive to side k of
// select S when every reader of every output is S at input k or a node
// exclusive to that same side (a nested select included), and no output is
// a graph output. Both arrays have graph->n_nodes entries (the caller's).
vkp_status_t vkp__graph_branch_sides(const vkp_graph_t *graph, int32_t *excl_select,
                                     uint8_t *excl_side) VKP_MUST_USE;

#endif  // VKPIPE_GRAPH_BRANCH_H_
