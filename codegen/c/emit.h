// SPDX-License-Identifier: Apache-2.0
//
// codegen/c: one C translation unit for a validated subgraph.
//
//   vkp_codegen_c_t code;
//   vkp_status_t st = vkp_codegen_c_emit(graph, /*threads=*/1, &code);
//   // code.source: the prelude (codegen/c/prelude.c) followed by one
//   // function per fused group of nodes and the stage entry:
//   //   int vkp_stage_run(const void *const *inputs, void *const *outputs,
//   //                     const void *const *constants, void *workspace);
//   //   size_t vkp_stage_workspace_size(void);
//   //   void vkp_stage_prepack(const void *const *constants, void *workspace);
//   vkp_codegen_c_deinit(&code);
//
// Shapes are compile-time constants, except the run-time extents of bounded
// values (VKP_CODEGEN_C_ENTRY_BOUNDED below). Weights are not in the source: the entry
// receives one pointer per constant, in the order of code.constants. Inputs
// and outputs follow graph->inputs and graph->outputs. Intermediates live in
// one workspace of vkp_stage_workspace_size() bytes (64-byte aligned), planned
// by liveness; it also holds the GEMM packing scratch and, in its last region,
// constant convolution weights packed into GEMM panels: the loader calls
// vkp_stage_prepack once, after allocating the workspace and before any run,
// and runs never write that region.
//
// Fusion: chains and trees of elementwise nodes become one loop; an
// elementwise consumer tree of a conv2d/gemm/matmul becomes that node's
// epilogue, applied to each finished register tile. Reshape-like nodes are
// views that copy nothing.
//
// Pure text generation: thread-safe, no I/O.
#ifndef VKPIPE_CODEGEN_C_EMIT_H_
#define VKPIPE_CODEGEN_C_EMIT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Whether the generator has a kernel for `node` (op, dtypes, outputs); when
// not, a one-line reason is written to `reason`.
bool vkp_codegen_c_supports(const vkp_graph_t *graph, const vkp_node_t *node,
                            char *reason, size_t reason_size);
// The dtypes of input 0 the generator handles for `op` (0: no kernel).
vkp_dtype_set_t vkp_codegen_c_dtypes(vkp_op_t op);
// The C expression template (codegen/expr.h) of elementwise `op` computing
// in `dtype`; NULL when the op has no template.
const char *vkp_codegen_c_expr(vkp_op_t op, vkp_dtype_t dtype);
// A float literal in C ("0.5f", "-INFINITY").
void vkp_codegen_c_literal(double value, char *buf, size_t size);

// The kernel class the generator runs `node` of `graph` with, for the cost
// model (docs/pipeline-config.md, "Kernel classes"): "conv_winograd",
// "conv_winograd4", "conv_depthwise", "conv_depthwise_s2", "conv_pointwise",
// "conv_gemm" (im2col GEMM) for a 2-D convolution, "gemm" for matmul/gemm,
// "attention", VKP_KERNEL_CLASS_FUSED for an elementwise node computed in a
// conv/gemm/matmul's epilogue, NULL for every other node (the op's own cost
// class). Static strings; the same choice vkp_codegen_c_emit makes.
// *out_columns: the width of the GEMMs it runs (a convolution: its output
// positions, Winograd: its 2x2 output tiles; matmul: min(rows, columns) of
// the output, 0 for a single row; depthwise: the output width), 0 for other
// nodes.
const char *vkp_codegen_c_kernel_class(const vkp_graph_t *graph,
                                       const vkp_node_t *node, double *out_columns);

// Name of the entry point and workspace query in generated code.
#define VKP_CODEGEN_C_ENTRY "vkp_stage_run"
// The entry of a graph with bounded values (docs/onnx.md, "Data-dependent
// output shapes"), instead of VKP_CODEGEN_C_ENTRY:
//   int vkp_stage_run_bounded(const void *const *inputs, void *const *outputs,
//                             const void *const *constants, void *workspace,
//                             int64_t *extents);
// extents[i] is the run-time extent of graph input i when it is bounded
// (read), extents[n_inputs + j] that of graph output j when it is bounded
// (written); buffers hold their bound, elements stored compactly for the
// run-time shape. The code reads the extents and computes its loop bounds
// from them: one object serves every extent.
#define VKP_CODEGEN_C_ENTRY_BOUNDED "vkp_stage_run_bounded"
#define VKP_CODEGEN_C_WORKSPACE "vkp_stage_workspace_size"
#define VKP_CODEGEN_C_PREPACK "vkp_stage_prepack"
// const char *vkp_stage_error(int code): what a nonzero result of the
// entry means ("node 'emb' (gather): an index is outside [-50, 50) (axis
// 0)"), NULL for a code it does not know. Objects without the symbol
// predate run-time checks.
#define VKP_CODEGEN_C_ERROR "vkp_stage_error"
// Exported only by objects compiled with -DVKP_NODE_TIMES: the kernels'
// names and their wall seconds summed over the finished runs.
#define VKP_CODEGEN_C_NODE_TIMES "vkp_stage_node_times"
// int vkp_stage_abi(void): 2 for objects whose workspace starts with a
// VKP_CODEGEN_C_WS_HEADER-byte header the host fills with its thread pool
// (runtime/cpu/pool.h, vkp_cpu_pool_ref_t); objects without the symbol
// predate it and start their own threads.
#define VKP_CODEGEN_C_ABI_SYMBOL "vkp_stage_abi"
#define VKP_CODEGEN_C_ABI 2
#define VKP_CODEGEN_C_WS_HEADER 64

typedef struct vkp_codegen_c_t {
  char *source;          // owned, NUL-terminated
  size_t source_size;    // strlen(source)
  int32_t n_constants;
  int32_t *constants;    // owned: value indices of the constants, in the
                         // order the entry's `constants` array follows
  int32_t n_kernels;     // number of emitted node functions (after fusion)
  int64_t intermediate_bytes;  // workspace bytes for intermediates (the
                               // GEMM scratch comes on top)
} vkp_codegen_c_t;

// Emits C for `graph` (validated; borrowed). `threads` > 1 builds the GEMM
// with a pthread split (the object must then be linked with -pthread).
// Fails with UNSUPPORTED naming the node for anything it cannot generate.
vkp_status_t vkp_codegen_c_emit(const vkp_graph_t *graph, int32_t threads,
                                vkp_codegen_c_t *out) VKP_MUST_USE;

// Frees what `code` owns and zeroes it. Safe on a zeroed struct.
void vkp_codegen_c_deinit(vkp_codegen_c_t *code);

// The prelude source (static storage), NUL-terminated.
const char *vkp_codegen_c_prelude(void);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_CODEGEN_C_EMIT_H_
