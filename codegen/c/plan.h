// SPDX-License-Identifier: Apache-2.0
//
// The C code generator's plan, shared by the planner (plan.c) and the
// emitters (emit.c): which nodes fuse into which group, and where every value
// lives (storage kind, views, workspace offsets from the liveness plan).
//
//   vkp__cg_t cg = {.g = graph, ...arrays sized by the graph...};
//   vkp__plan_groups(&cg);                 // fusion
//   st = vkp__plan_buffers(&cg);           // storage, views, liveness
//   ...emit from cg (codegen/c/emit.c)...
#ifndef VKPIPE_CODEGEN_C_PLAN_H_
#define VKPIPE_CODEGEN_C_PLAN_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/sb.h"
#include "vkpipe/graph.h"
#include "vkpipe/ops.h"
#include "vkpipe/status.h"

// ---------------------------------------------------------------------------
// The plan: which nodes fuse, where every value lives.

typedef enum vkp__storage_t {
  VKP__ST_NONE,      // inlined into a fused loop: never materialised
  VKP__ST_INPUT,
  VKP__ST_OUTPUT,
  VKP__ST_CONSTANT,
  VKP__ST_WORKSPACE,
  VKP__ST_ALIAS,     // a view of another value's buffer
} vkp__storage_t;

typedef struct vkp__cg_t {
  const vkp_graph_t *g;
  int32_t threads;
  vkp__sb_t out;
  int32_t *group_of;    // node -> root node of its fused group
  int32_t *anchor_of;   // root node -> conv/gemm/matmul node or -1
  int32_t *uses;        // value -> number of node inputs reading it
  int32_t *io_index;    // value -> index among inputs/outputs/constants
  vkp__storage_t *storage;
  int32_t *alias_of;    // value -> value whose buffer it views
  int64_t *alias_off;   // value -> byte offset of its view in that buffer
  bool *in_place;       // value -> written by its producer straight into
                        // the concatenation that reads it
  int64_t *offset;      // value -> workspace byte offset
  char **vname;         // value -> C identifier
  char **ename;         // value -> C name of its run-time extent (a
                        // bounded value), else NULL (emit_bounded.c)
  char **nname;         // node -> C function name
  int64_t ws_bytes;
  vkp__sb_t prepack;          // body of vkp_stage_prepack
  int32_t n_prepack;          // constant conv weights packed at load
  vkp__sb_t scratch_terms;     // body of vkp_scratch_floats (see emit_all)
  int32_t n_constants;
  int32_t *constants;
  int32_t n_kernels;
  vkp__sb_t kernel_names;      // per kernel, a C string literal and a comma
                               // (vkp_stage_node_times, VKP_NODE_TIMES)
  vkp__sb_t errors;            // cases of vkp_stage_error (see emit_group)
  int32_t n_errors;            // run-time error codes handed out
  // Branches (branch_select): per node, the select whose one side alone
  // reads its results (-1: none) and that side (1: then, 2: else); the
  // group being emitted runs only when `guard` (a C condition, or NULL)
  // holds, and so do its extents' error checks (emit.c, emit_bounded.c).
  int32_t *excl_select;
  uint8_t *excl_side;
  const char *guard;
  // A max pooling the group before it already computed (its node + 1; 0:
  // none): the convolution it reads was fused with it (emit.c,
  // vkp__pool_after_conv).
  int32_t pool_done;
} vkp__cg_t;

// The op table decides what fuses into a loop over the output (elementwise
// and broadcast ops) and what is a view of its input's bytes.
static inline bool vkp__is_elementwise(vkp_op_t op) {
  return vkp_op_pattern(op) <= VKP_OP_PATTERN_BROADCAST;
}

static inline bool vkp__is_view(vkp_op_t op) { return vkp_op_is_view(op); }

static inline const vkp_value_t *vkp__val(const vkp__cg_t *cg, const vkp_node_t *n,
                                          int32_t i) {
  if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  return &cg->g->values[n->inputs[i]];
}

static inline const vkp_value_t *vkp__outv(const vkp__cg_t *cg, const vkp_node_t *n) {
  return &cg->g->values[n->outputs[0]];
}

// 2-D conv and pooling with one output run the kernels here; the other
// window ops (1-D, 3-D, max_pool2d's indices, int8 / uint8 max pooling) the
// emitter of ops.c.
static inline bool vkp__window_2d(const vkp__cg_t *cg, const vkp_node_t *n) {
  // (A bounded batch: the emitter, over the run-time batch.)
  return !vkp_node_is_bounded(cg->g, n) &&
         (n->op == VKP_OP_CONV2D || n->op == VKP_OP_MAX_POOL2D ||
          n->op == VKP_OP_AVG_POOL2D) &&
         vkp__val(cg, n, 0)->rank == 4 && n->n_outputs == 1 &&
         vkp__val(cg, n, 0)->dtype == VKP_DTYPE_FLOAT32;
}

// Conv2d, gemm and matmul with 2-D (or batched) operands take an epilogue.
// (Bounded rows: no epilogue; emit.c runs them over the run-time rows.)
static inline bool vkp__is_anchor(const vkp__cg_t *cg, const vkp_node_t *n) {
  if (vkp_node_is_bounded(cg->g, n)) return false;
  if (n->op == VKP_OP_CONV2D) return vkp__window_2d(cg, n);
  if (n->op == VKP_OP_GEMM) return true;
  if (n->op == VKP_OP_MATMUL)
    return vkp__val(cg, n, 0)->rank >= 2 && vkp__val(cg, n, 1)->rank >= 2;
  return false;
}

static inline bool vkp__same_shape(const vkp_value_t *a, const vkp_value_t *b) {
  if (a->rank != b->rank) return false;
  for (int32_t d = 0; d < a->rank; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

static inline int64_t vkp__numel(const vkp_value_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->rank; ++d) n *= v->shape[d];
  return n;
}

// Bounded values (docs/onnx.md, "Data-dependent output shapes"): their
// extents are computed in the generated code (codegen/c/emit_bounded.c).
static inline bool vkp__same_bounds(const vkp_value_t *a, const vkp_value_t *b) {
  return a->bounded == b->bounded && (!a->bounded || a->bounded_axis == b->bounded_axis);
}

// Decides fusion groups (group_of, anchor_of); `uses` must be counted and
// group_of/anchor_of set to -1 first.
void vkp__plan_groups(vkp__cg_t *cg);
// Storage, views and workspace offsets of every value (after
// vkp__plan_groups).
vkp_status_t vkp__plan_buffers(vkp__cg_t *cg) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Bounded values (codegen/c/emit_bounded.c)

// Appends a case to vkp_stage_error for a run-time failure of node `n`
// ("node '<name>' (<op>): <message>") and returns its code.
int32_t vkp__c_error_code(vkp__cg_t *cg, const vkp_node_t *n, const char *message);
// Writes into `calls` the statements that compute the run-time extent of
// each bounded output of `n` (declaring cg->ename of it), from its inputs'
// extents by the op's rule (graph/bounded.h); a mismatch returns an error
// code from the stage. Outputs whose extent the kernel makes (non_zero,
// unique) are declared 0 and passed to it by address.
void vkp__c_emit_extents(vkp__cg_t *cg, const vkp_node_t *n, vkp__sb_t *calls);
// Whether the kernel of `n` makes its outputs' extents itself (they are
// `ptrdiff_t *` parameters of its node function).
bool vkp__c_makes_extents(const vkp_node_t *n);

#endif  // VKPIPE_CODEGEN_C_PLAN_H_
