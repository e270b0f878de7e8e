// SPDX-License-Identifier: Apache-2.0
//
// What a kernel emitter of the C generator sees. Elementwise ops need only an
// expression in the generator's op table (codegen/c/ops.c); any other op gets
// an emitter there, a function that writes the body of the node's function
//
//   static void node_<name>(const T0 *in0, const T1 *in1, ..., T *restrict out
//                           [, float *scratch, const float *packed])
//
// (returning int instead when the emitter sets can_fail, below)
//
// from a vkp__c_kernel_t. A node with several outputs (an emitter is the only
// way to run one) has them all as parameters, in order:
//
//   static void node_<name>(const T0 *in0, ..., T *restrict out0,
//                           T *restrict out1, ... [, float *scratch, ...])
//
// each with its own storage (an output nothing reads still gets a buffer).
// Emitters of an op family live in
// codegen/c/emit_<family>.c, heavy loops they call in
// codegen/c/prelude_<family>.c (pasted into every generated unit after
// prelude.c), and are declared below.
//
//   vkp_status_t vkp__c_emit_tile(vkp__c_kernel_t *k) {
//     vkp__sb_printf(k->body, "  vkp_tile(%s, %s, ...);\n", k->in[0], k->out);
//     return NULL;
//   }
//
// Shapes are compile-time constants: write them into the code as literals
// (a bounded value's extent is the one exception: "Bounded values" below).
// An emitter that needs temporary memory sets k->scratch_floats; the body
// then has `float *scratch` with at least that many floats (64-byte aligned,
// not shared with any tensor, garbage on entry).
#ifndef VKPIPE_CODEGEN_C_EMIT_INTERNAL_H_
#define VKPIPE_CODEGEN_C_EMIT_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sb.h"
#include "vkpipe/graph.h"

#define VKP__C_MAX_INPUTS 64
#define VKP__C_MAX_OUTPUTS 8

typedef struct vkp__c_kernel_t {
  const vkp_graph_t *graph;          // validated, borrowed
  const vkp_node_t *node;            // the node
  const char *in[VKP__C_MAX_INPUTS]; // C names of the inputs (NULL: omitted)
  const char *out;                   // C name of output 0 (outs[0])
  const char *outs[VKP__C_MAX_OUTPUTS];  // C names of the node->n_outputs outputs
  int32_t threads;                   // the stage's thread count
  vkp__sb_t *body;                   // where the body goes
  size_t scratch_floats;             // set by the emitter; 0: no scratch
  // More scratch floats, after those: a C expression over the prelude's
  // size macros and VKP_STAGE_THREADS, which the generated source
  // evaluates (per-thread kernel scratch); "" for none.
  char scratch_expr[160];
  // Set by an emitter that calls vkp_gemm: `scratch` then starts with the
  // GEMM's packing scratch (VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS
  // floats) and the emitter's scratch_floats follow it.
  bool after_gemm_scratch;
  vkp__sb_t *pre;                    // code placed before the node function
  const char *fn;                    // the node function is node_<fn>
  // Set by an emitter whose kernel checks data at run time (an index out
  // of range): the node's function then returns int, the body may
  // `return 1;` on failure, and the stage stops there and reports
  // "node '<name>' (<op>): <fail_message>" (vkp_stage_error).
  bool can_fail;
  char fail_message[160];
  void *cg;                          // the generator (for vkp__c_emit_prepack)
  // Bounded values (docs/onnx.md, "Data-dependent output shapes"): the C
  // name of the run-time extent of each bounded input and output, NULL for
  // a static one. The node function takes each as a `ptrdiff_t` (after the
  // pointers), except the outputs of an op whose kernel makes their extent
  // (non_zero, unique), which are `ptrdiff_t *` it stores through. Every
  // other output's extent is computed before the call.
  const char *in_ext[VKP__C_MAX_INPUTS];
  const char *out_ext[VKP__C_MAX_OUTPUTS];
} vkp__c_kernel_t;

typedef vkp_status_t (*vkp__c_emit_fn)(vkp__c_kernel_t *k);

// Splits a loop of the kernel across the stage's thread pool: `loop` is
// code over the iterations [lo, hi) of [0, n) (every input and output is in
// scope under its k->in / k->outs name, and `scratch` with `with_scratch`);
// it becomes a task function before the node function, and the body gets
// the call that runs it, split in chunks of at least VKP_GRAIN(work)
// iterations (`work`: the steps of one iteration). A loop whose iterations
// write disjoint outputs, each computed the same way in any chunk, gives
// results that do not depend on the thread count.
void vkp__c_emit_split(vkp__c_kernel_t *k, bool with_scratch, long long n, long long work,
                       const char *loop);

// Reserves `floats` floats of the workspace's region of data packed once at
// stage load (vkp_stage_prepack) for input `input` of the kernel's node when
// that input is a constant, and adds `code` to vkp_stage_prepack to fill
// it (in scope there: `src`, the constant as const void *, and `dst`, the
// region as float *). Returns the region's id (the node's function reads it
// at packed + VKP_PACKED_<id>_AT), or -1 when the input is not a constant.
int32_t vkp__c_emit_prepack(vkp__c_kernel_t *k, int32_t input, long long floats,
                            const char *code);

// The emitter codegen/c/ops.c names for `op`, or NULL.
vkp__c_emit_fn vkp__c_emitter(vkp_op_t op);
// The C type a dtype is stored in ("float", "int64_t"; float16 as
// "uint16_t").
const char *vkp__c_type(vkp_dtype_t dtype);
// Input `i` / output 0 / output `i` of the kernel's node.
const vkp_value_t *vkp__c_in(const vkp__c_kernel_t *k, int32_t i);
const vkp_value_t *vkp__c_out(const vkp__c_kernel_t *k);
const vkp_value_t *vkp__c_out_at(const vkp__c_kernel_t *k, int32_t i);

// ---------------------------------------------------------------------------
// Bounded values (codegen/c/emit_bounded.c). A kernel with any bounded
// input or output writes its loops over run-time sizes; the others keep
// their literals (and the code they always had).

// A C expression of a run-time size, held by value.
typedef struct vkp__c_dim_t {
  char s[192];
} vkp__c_dim_t;

// Whether any input or output of the kernel's node is bounded.
bool vkp__c_bounded(const vkp__c_kernel_t *k);
// The element count of dims [begin, end) of `v`: a literal, or "(P * ext)"
// when `ext` (v's extent, NULL for a static v) is set and the range holds
// v's bounded axis.
vkp__c_dim_t vkp__c_dims(const vkp_value_t *v, const char *ext, int32_t begin,
                         int32_t end);
// Writes `const ptrdiff_t name[] = {...};` (at least one entry): v's
// run-time shape, or its compact strides when `strides`.
void vkp__c_emit_shape(vkp__sb_t *sb, const char *name, const vkp_value_t *v,
                       const char *ext, bool strides);

// Data-dependent shapes: non_zero, unique, shape (emit_bounded.c).
vkp_status_t vkp__c_emit_non_zero(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_unique(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_shape_op(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_non_max_suppression(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_branch_select(vkp__c_kernel_t *k);

// ---------------------------------------------------------------------------
// Emitters, by family (codegen/c/emit_<family>.c)

// Fused attention (emit_attention.c).
vkp_status_t vkp__c_emit_attention(vkp__c_kernel_t *k);

// Recurrent networks: lstm, gru, rnn (emit_rnn.c).
vkp_status_t vkp__c_emit_rnn(vkp__c_kernel_t *k);

// Losses: softmax_cross_entropy_loss, negative_log_likelihood_loss
// (emit_loss.c).
vkp_status_t vkp__c_emit_loss(vkp__c_kernel_t *k);

// Indexing: gather, gather_elements, gather_nd, scatter_elements,
// scatter_nd, one_hot (emit_index.c).
vkp_status_t vkp__c_emit_gather(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_gather_elements(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_gather_nd(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_scatter(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_reverse_sequence(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_one_hot(vkp__c_kernel_t *k);

// Quantization (emit_quant.c).
vkp_status_t vkp__c_emit_quantize_linear(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_dequantize_linear(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_dynamic_quantize_linear(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_matmul_integer(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_qlinear_matmul(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_conv_integer(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_qlinear_conv(vkp__c_kernel_t *k);

// Reductions and normalisations (emit_norm.c).
vkp_status_t vkp__c_emit_reduce(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_softmax_family(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_group_norm(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_lp_norm(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_mean_variance_norm(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_lrn(vkp__c_kernel_t *k);

// Selection: arg_max, arg_min, top_k, cum_sum (emit_select.c).
vkp_status_t vkp__c_emit_arg(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_top_k(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_cum_sum(vkp__c_kernel_t *k);
// Window ops over 1 to 3 spatial dims, conv_transpose, lp_pool and
// max_pool2d's indices (emit_window.c).
vkp_status_t vkp__c_emit_window(vkp__c_kernel_t *k);
// Padding and resampling (emit_resample.c): pad, tile, expand,
// depth_to_space and space_to_depth share vkp__c_emit_remap.
vkp_status_t vkp__c_emit_remap(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_resize(vkp__c_kernel_t *k);
// emit_sample.c
vkp_status_t vkp__c_emit_grid_sample(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_roi_align(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_trilu(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_eye_like(vkp__c_kernel_t *k);
// Fourier transforms: dft, stft (emit_signal.c).
vkp_status_t vkp__c_emit_dft(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_stft(vkp__c_kernel_t *k);
// det (emit_linalg.c) and max_unpool (emit_window.c).
vkp_status_t vkp__c_emit_det(vkp__c_kernel_t *k);
vkp_status_t vkp__c_emit_max_unpool(vkp__c_kernel_t *k);

#endif  // VKPIPE_CODEGEN_C_EMIT_INTERNAL_H_
