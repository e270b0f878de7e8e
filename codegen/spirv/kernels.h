// SPDX-License-Identifier: Apache-2.0
//
// GLSL generation for one dispatch: a fused group of graph nodes, or a copy.
// codegen.c decides what is fused and where values live; this file turns a
// group into GLSL text, a grid and the list of values bound to it.
//
// Binding convention of every kernel: binding 0 is the destination (OUT),
// bindings 1.. are inputs (IN0, IN1, ... for the anchor's inputs, then the
// epilogue's external operands). Every kernel writes element o of its
// destination through STORE(o, v) = OUT[o] = vkp_epilogue(v, o), where
// vkp_epilogue evaluates the fused elementwise ops that follow the anchor.
//
// Kernel variants (vkp__kernel_config_t.gemm_tiled):
//   - GEMM/matmul use the shared-memory tiled kernel (gemm_tiled.comp) on
//     devices that are not CPU implementations and have >= 8 KiB of shared
//     memory, >= 256 invocations and a 16 x 16 workgroup; otherwise (lavapipe
//     and other CPU devices, where barrier() costs ~10x) the register-blocked,
//     barrier-free kernel (gemm_blocked.comp). VKPIPE_SPIRV_GEMM=tiled|blocked
//     overrides the choice (for tests and benchmarks).
//   - Cooperative matrices: with VKPIPE_SPIRV_GEMM=coopmat, on devices that
//     report 16 x 16 x 16 float16 products with float32 sums per subgroup of
//     32 (VK_NV_cooperative_matrix, enabled by runtime/vulkan/device.c for
//     the vendors it allows), GEMMs and the implicit-GEMM convolutions run on
//     them (gemm_coopmat.comp, conv_gemm_coopmat.comp: both operands rounded
//     to float16, sums in float32; the fp16 tolerance) in place of the tiled
//     kernels. Not a default yet: on an NVIDIA H200 this first 64 x 64 tiling
//     ran ResNet-18 at --precision fp16 in 7.6 ms against 3.5 ms tiled (its
//     128 invocations stage every operand through shared memory one scalar
//     at a time; docs/benchmarks.md).
//   - Group-1 convolutions (2 or 3 spatial dims) with >= 32 output pixels
//     per image run as an implicit GEMM over the same choice
//     (conv_gemm_tiled.comp / conv_gemm_blocked.comp: weights
//     [M, C*KD*KH*KW] times the input gathered on the fly, no im2col buffer). Its tiles are 64 pixels wide, so below
//     half a tile most of the work is wasted and the direct kernel
//     (conv2d.comp) is faster (lavapipe: 4x on a 3x3 output); grouped
//     convolutions always use the direct kernel, depthwise ones (group = C)
//     conv_depthwise.comp (4 output columns per invocation);
//     VKPIPE_SPIRV_DEPTHWISE=direct gives them the direct kernel.
//     VKPIPE_SPIRV_CONV=gemm|direct forces either for every group-1 conv.
//     On the register-blocked kernel, a convolution whose windows stay
//     inside its input reads it unchecked; one whose windows reach the
//     padding first copies the input into zero-padded planes (conv_pad.comp,
//     a float32 temporary at the scratch's end) and reads that unchecked: on
//     lavapipe the per-tap padding checks cost a third of the kernel's time
//     (ResNet-18's 3x3 layers 7-9 GFLOP/s checked, 10-12 on the copy). A
//     copy that would not fit one binding (or exceed 64 MiB and twice the
//     input) is not made; VKPIPE_SPIRV_CONV_PAD=off never makes one.
//   - Transposed convolutions with >= 8 output channels per group run as an
//     implicit GEMM per output phase (conv_transpose_gemm.comp, register-
//     blocked on every device), others as a gather (conv_transpose.comp);
//     VKPIPE_SPIRV_CONV=gemm|direct forces either.
//   - Split-K: a MatMul/Gemm whose 64 x 64 tiles (times batch) fill fewer
//     than split_k_groups workgroups (128 on GPUs; 0 on CPU devices, where
//     it measured slower, so only VKPIPE_SPIRV_SPLITK=on splits) while
//     K >= 1024 splits K into up to 32 slices of >= 256 (multiples of 64),
//     partial sums in scratch, then a reduction dispatch (see
//     vkp__spv_split_k). VKPIPE_SPIRV_SPLITK=on splits every GEMM with
//     K >= 32 and every convolution into <= 4 slices (tests); =off never
//     splits by choice. Past lavapipe's loop budget splitting is not a
//     choice: GEMMs with K > 32768, and convolutions (conv_split.comp) whose
//     unsplit kernels would loop more than 65535 times in an invocation.
//   - Row kernels (softmax, layer_norm, reduce_*, global_avg_pool) run one
//     invocation per row, barrier-free (softmax.comp, layer_norm.comp,
//     reduce.comp), except on non-CPU devices for rows of >= 64 elements:
//     there one workgroup per row reduces through shared memory (*_wg.comp).
//     That workgroup has 256 invocations, lowered to a power of two within
//     the device's invocation and x-size limits and its shared memory, and
//     never below the subgroup size. VKPIPE_SPIRV_ROWS=workgroup|thread
//     forces either variant for every row length, except that rows longer
//     than 8192 always take a workgroup (lavapipe's loop budget). That
//     workgroup reduces through subgroup arithmetic where the device has it
//     in compute shaders (one shared-memory value per subgroup, two
//     barriers), else through a shared-memory tree (workgroup_reduce.glsl);
//     VKPIPE_SPIRV_SUBGROUP=off forces the tree.
//   - 1-D kernels use 64 invocations per workgroup, raised to the device's
//     subgroup size when that is larger and capped at the device limit; no
//     kernel assumes a particular subgroup size.
#ifndef VKPIPE_CODEGEN_SPIRV_KERNELS_H_
#define VKPIPE_CODEGEN_SPIRV_KERNELS_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/sb.h"
#include "codegen/spirv/program.h"
#include "codegen/spirv/shaders.h"
#include "vkpipe/graph.h"
#include "vkpipe/status.h"

// Upper bound on the bindings of one dispatch; fusion stops before it.
#define VKP__MAX_BINDINGS 8

// llvmpipe (lavapipe's compiler) ends a shader's loops once they have taken
// this many back-edges in one invocation, silently ("lavapipe's loop limit"
// in README.md): kernels split or refuse what would loop longer.
#define VKP__SPV_LOOP_BUDGET VKP_SPIRV_LAVAPIPE_LOOP_BUDGET

typedef struct vkp__group_t {
  int32_t root;        // node whose output the dispatch writes
  int32_t anchor;      // the non-elementwise node, or -1 (pure elementwise)
  int32_t n_members;   // fused elementwise nodes, topological order
  int32_t members[64];
} vkp__group_t;

typedef struct vkp__kernel_config_t {
  bool gemm_tiled;        // see the variant rule above
  bool coopmat;           // GEMMs and implicit-GEMM convs on cooperative
                          // matrices (see above)
  bool coopmat_forced;    // VKPIPE_SPIRV_GEMM=coopmat
  int conv_gemm;          // group-1 convs as implicit GEMM: 1 always, 0 never,
                          // -1 when >= 32 output pixels (see above)
  uint32_t local_1d;      // workgroup size of 1-D kernels
  bool rows_workgroup;    // row kernels may use a workgroup per row
  bool rows_forced;       // ... even for short rows (VKPIPE_SPIRV_ROWS)
  bool rows_subgroup;     // ... reducing through subgroup arithmetic
  uint32_t row_wg;        // that workgroup's size (a power of two)
  uint64_t part_bytes;    // a tensor larger than this is bound as several
                          // ranges of this size (maxStorageBufferRange rounded
                          // down to the offset alignment); 0: never split
  const bool *half_values;  // per value: kept as float16 (--precision fp16,
                            // read through LD<i> as float); NULL: none
  int split_k;            // split-K GEMMs: 1 always (K >= 32), 0 never, -1 by
                          // shape (VKPIPE_SPIRV_SPLITK=on|off; see above)
  uint32_t split_k_groups;  // workgroups a GEMM should fill (by device type)
  bool depthwise;         // depthwise convs use conv_depthwise.comp
                          // (VKPIPE_SPIRV_DEPTHWISE=direct: conv2d.comp)
  bool conv_pad;          // register-blocked implicit-GEMM convs whose
                          // windows reach the padding read a zero-padded
                          // copy (VKPIPE_SPIRV_CONV_PAD=off: never)
} vkp__kernel_config_t;

// Input index of a kernel's temporary in vkp__kernel_t.inputs (not a graph
// value): the region the codegen places at the end of the scratch buffer
// for a kernel that runs as two dispatches (vkp__spv_kernel_temp).
#define VKP__KERNEL_TEMP (-2)

// What a two-dispatch kernel keeps in its temporary between the dispatches:
// split-K's [KSPLIT, BATCH, M, N] float32 partial sums (vkp__spv_split_k),
// or a convolution's input copied into zero-padded planes, [BATCH, C, XD,
// XH, XW] float32 (conv_pad.comp), which the implicit GEMM then reads
// without checking each tap against the padding.
typedef enum vkp__temp_kind_t {
  VKP__TEMP_NONE,
  VKP__TEMP_SPLIT_K,
  VKP__TEMP_CONV_PAD,
} vkp__temp_kind_t;

// How node `n` runs: in one dispatch (VKP__TEMP_NONE) or in two through a
// temporary of *out_bytes.
vkp__temp_kind_t vkp__spv_kernel_temp(const vkp_graph_t *g, const vkp_node_t *n,
                                      const vkp__kernel_config_t *config,
                                      uint64_t *out_bytes);

// How many K slices the MatMul/Gemm, Conv or ConvTranspose `n` runs as (1:
// no split-K), with the slice length and the bytes of its partial sums.
// Split-K runs as two dispatches: part 0 writes each slice's partial
// products (gemm_blocked/gemm_tiled over K range [ks * KSLICE, (ks+1) *
// KSLICE); conv_split.comp over the same range of a convolution's reduction
// (input channels of a group) x taps), part 1 (gemm_splitk_reduce.comp) adds
// them in slice order and applies alpha, beta * C or the bias, and the fused
// epilogue.
uint32_t vkp__spv_split_k(const vkp_graph_t *g, const vkp_node_t *n,
                          const vkp__kernel_config_t *config, uint64_t *out_kslice,
                          uint64_t *out_partial_bytes);

typedef struct vkp__kernel_t {
  char *glsl;                  // owned (vkp__free)
  uint32_t local_size[3];
  uint32_t groups[3];
  int32_t n_inputs;            // logical inputs (b1..b<n_inputs> in the text)
  int32_t inputs[VKP__MAX_BINDINGS];  // value index of logical input i
  // Bindings: the destination's out_parts ranges first (binding 0 when it
  // is not split), then each input's parts[i] ranges in order. A value
  // larger than config->part_bytes is split into ceil(bytes / part_bytes)
  // consecutive ranges; the kernel reaches its elements through ld<i>(idx)
  // and STORE, which pick the range (see "Large tensors" in README.md).
  uint32_t out_parts;
  uint32_t parts[VKP__MAX_BINDINGS];
} vkp__kernel_t;

// How many bindings a tensor of `bytes` takes under `part_bytes` (1 when it
// fits or part_bytes is 0).
uint32_t vkp__spv_parts(uint64_t bytes, uint64_t part_bytes);
// True when the kernel of `op` reads anchor input i through LD<i>(idx), so
// that input may be split across bindings. Elementwise operands (epilogue
// and elementwise groups) and destinations written through STORE may always
// be split; other kernels index their inputs directly.
bool vkp__spv_splits_input(vkp_op_t op, int32_t i);

// The variant configuration for `device`, honouring VKPIPE_SPIRV_GEMM.
void vkp__kernel_config_init(vkp__kernel_config_t *config,
                             const vkp_spirv_device_info_t *device);

// ---------------------------------------------------------------------------
// Kernel emitters. An op that is not elementwise gets an emitter in the
// generator's op table (codegen/spirv/ops.c): it appends `#define`s for its
// shapes and a template from shaders/ to e->body, adds helper functions to
// e->head, and sets the grid (vkp__spv_grid_1d for one invocation per output
// element, which most kernels use). The anchor's inputs are bound, in order,
// as IN0, IN1, ...; the kernel writes output element o with STORE(o, v),
// which applies the fused epilogue. Emitters of an op family live in
// codegen/spirv/kernels_<family>.c and are declared at the end of this file.
//
//   vkp_status_t vkp__spv_emit_tile(vkp__emit_t *e, const vkp_node_t *n) {
//     vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(out));
//     ...
//     vkp__spv_grid_1d(e, vkp__spv_numel(out));
//     vkp__spv_template(e, VKP__SHADER_tile);  // shaders/tile.comp, declared
//     return NULL;                             // in codegen/spirv/shaders.h
//   }

typedef struct vkp__emit_t {
  const vkp_graph_t *g;
  const vkp__group_t *group;
  const vkp__kernel_config_t *config;
  vkp__sb_t head;     // bindings, helpers
  vkp__sb_t body;     // op defines + template
  vkp__kernel_t *k;
  int32_t n_anchor_inputs;
  int32_t part;       // concat: the input copied; an anchor with several
                      // outputs (top_k): the output written
  int splitk_phase;       // 0: no split-K; 1: partial sums; 2: their reduction
  int pad_phase;          // 0: no padded copy; 1: the copy; 2: the
                          // convolution reading it
  uint64_t out_bytes;     // the destination's bytes when not the root value
                          // (split-K partials); 0: the root's
  bool coopmat;           // the template uses cooperative matrices: the
                          // header enables their extensions
  bool subgroup;          // the template uses subgroup arithmetic
} vkp__emit_t;

typedef vkp_status_t (*vkp__spv_emit_fn)(vkp__emit_t *e, const vkp_node_t *anchor);

// The emitter codegen/spirv/ops.c names for `op`, or NULL.
vkp__spv_emit_fn vkp__spv_emitter(vkp_op_t op);
// Input i of n (NULL when omitted).
const vkp_value_t *vkp__spv_input(const vkp_graph_t *g, const vkp_node_t *n,
                                  int32_t i);
uint64_t vkp__spv_numel(const vkp_value_t *v);
// Row-major element strides of v.
void vkp__spv_strides(const vkp_value_t *v, int64_t *strides);
// `#define NAME <v>u` / `#define NAME <v>`.
void vkp__spv_define_u(vkp__sb_t *sb, const char *name, uint64_t v);
void vkp__spv_define_i(vkp__sb_t *sb, const char *name, int64_t v);
// One invocation per element of `total`, 1-D workgroups.
void vkp__spv_grid_1d(vkp__emit_t *e, uint64_t total);
// A row kernel over `rows` rows of `len` (shaders/<name>.comp, or
// <name>_wg.comp with a workgroup per row; see the variant rule above).
void vkp__spv_row_kernel(vkp__emit_t *e, vkp__row_shader_t row, uint64_t rows,
                         uint64_t len);
// Appends a template (codegen/spirv/shaders.h) to the body.
void vkp__spv_template(vkp__emit_t *e, vkp__shader_t shader);
// `uint fname(uint o)`: base + sum_d coord_d(o) * coefs[d] over the
// row-major `shape` (index arithmetic of a strided view).
void vkp__spv_affine(vkp__sb_t *sb, const char *fname, int32_t rank,
                     const int64_t *shape, const int64_t *coefs, int64_t base);
// `uint fname(uint o)`: the index into `in` of output element o of shape
// `out_shape` under NumPy broadcasting.
void vkp__spv_broadcast(vkp__sb_t *sb, const char *fname, const vkp_value_t *in,
                        int32_t out_rank, const int64_t *out_shape);

// An op-specific limit on what its kernel takes (beyond float32 data and
// the binding count): false, with the reason, when `n` is past it.
// `loop_budget`: the most loop iterations the device runs in one
// invocation (65,535 on lavapipe), 0 for none.
typedef bool (*vkp__spv_check_fn)(const vkp_graph_t *g, const vkp_node_t *n,
                                  uint32_t loop_budget, char *reason, size_t reason_size);
// The check codegen/spirv/ops.c names for `op`, or NULL.
vkp__spv_check_fn vkp__spv_checker(vkp_op_t op);
// True when input i of `op` is read as int32/int64 indices (gather's
// input 1): the one place a Vulkan kernel takes a value that is not
// float32. Such a binding is declared uint[] (an int64 as two words).
bool vkp__spv_is_index_input(vkp_op_t op, int32_t i);
// True when `op`'s kernel also runs on int32 and int64 data (elementwise:
// its expression, or the row's integer form, is valid on int / int64_t;
// others: a kernel that moves or compares values of any of those types).
bool vkp__spv_takes_ints(vkp_op_t op);
// An integer dtype (8 to 64 bits, signed or not); 64-bit ones need
// shaderInt64.
bool vkp__spv_is_int(vkp_dtype_t dt);
bool vkp__spv_is_64bit(vkp_dtype_t dt);
// True for the dtypes a buffer holds narrower than a kernel computes on
// them: bool, (u)int8, (u)int16, float16, bfloat16. They widen on load
// (ld<i>/LD<j>) and narrow on store (STORE), so only kernels that read
// through LD<j> take them (vkp__spv_reads_narrow).
bool vkp__spv_is_narrow(vkp_dtype_t dt);
// How Vulkan kernels hold a dtype: the element type of its buffer bindings
// (bool: uint8_t, int8: int8_t, int16: int16_t, float16: float16_t, int32:
// int, int64: int64_t, float32: float, float64: double, bfloat16:
// uint16_t) and the type a kernel computes in (the same for 32- and 64-bit
// types; narrow integers widen to int/uint, float16 and bfloat16 to float;
// bool is a float 0.0/1.0).
const char *vkp__spv_storage_type(vkp_dtype_t dt);
const char *vkp__spv_value_type(vkp_dtype_t dt);
// True when `op`'s kernel reads every data input through LD<j> and computes
// in ACC_T (elementwise ops, and the rows marked `narrow`): it takes the
// narrow dtypes above. Other kernels index IN<j> directly.
bool vkp__spv_reads_narrow(vkp_op_t op);
// True when `op`'s kernel also computes on float64 (double) data (rows
// marked `f64`; needs shaderFloat64).
bool vkp__spv_takes_f64(vkp_op_t op);
// The input slot of `anchor` bound at its binding 1 + i.
int32_t vkp__anchor_input_slot(const vkp_node_t *anchor, int32_t i);
// The row's GLSL expression for integer data, or NULL (the float one
// serves) (codegen/spirv/ops.c).
const char *vkp__glsl_int_expr(vkp_op_t op);
// True when `op`'s kernel writes every output of its node, one dispatch
// per output (top_k): such a node anchors no epilogue.
bool vkp__spv_writes_outputs(vkp_op_t op);
// True when `op` may read and write bool values (comparisons, logic,
// where): bytes in buffers (uint8_t bindings, storage_8bit devices only),
// 0.0 or 1.0 inside a kernel.
bool vkp__spv_takes_bool(vkp_op_t op);

// ---------------------------------------------------------------------------
// Emitters, by family (codegen/spirv/kernels_<family>.c)

// Window ops (kernels.c): conv_transpose. Every window kernel (conv2d,
// conv_transpose, the pools) takes 1 to 3 spatial dims (vkp__spv_check_window);
// convolutions past lavapipe's loop budget run as split-K.
vkp_status_t vkp__spv_emit_conv_transpose(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_window(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size);

// Fused attention (kernels_attention.c); refused past lavapipe's loop budget
// (keys x (D + 2 DV) per invocation: vkp__spv_check_attention).
vkp_status_t vkp__spv_emit_attention(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_attention(const vkp_graph_t *g, const vkp_node_t *n,
                              uint32_t loop_budget, char *reason, size_t reason_size);

// Indexing: gather, gather_elements, gather_nd by runtime indices
// (kernels_index.c).
vkp_status_t vkp__spv_emit_gather(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_gather_elements(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_gather_nd(vkp__emit_t *e, const vkp_node_t *n);
// scatter_elements / scatter_nd (every reduction) as per-output gathers.
vkp_status_t vkp__spv_emit_scatter_elements(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_scatter_nd(vkp__emit_t *e, const vkp_node_t *n);
// one_hot, through the same template (vkp_element(o) picks off/on value).
vkp_status_t vkp__spv_emit_one_hot(vkp__emit_t *e, const vkp_node_t *n);
// reverse_sequence, through the same template (kernels_index.c).
vkp_status_t vkp__spv_emit_reverse_sequence(vkp__emit_t *e, const vkp_node_t *n);

// Reductions and normalisations (kernels_norm.c).
vkp_status_t vkp__spv_emit_reduce(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_softmax_family(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_group_norm(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_lp_norm(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_mean_variance_norm(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_lrn(vkp__emit_t *e, const vkp_node_t *n);

// Selection: cum_sum, arg_max / arg_min, top_k; the losses
// (kernels_select.c). cum_sum along an axis past lavapipe's loop budget is
// refused (vkp__spv_check_cum_sum).
vkp_status_t vkp__spv_emit_cum_sum(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_cum_sum(const vkp_graph_t *g, const vkp_node_t *n,
                            uint32_t loop_budget, char *reason, size_t reason_size);
vkp_status_t vkp__spv_emit_arg(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_top_k(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_loss(vkp__emit_t *e, const vkp_node_t *n);
// Whether `iters` loop iterations in one invocation fit the device's loop
// budget (0: none). If not, the reason reads "<what>: one invocation of the
// Vulkan kernel loops about N times, and lavapipe's compiler cuts a
// shader's loops at B iterations (<lost>)".
bool vkp__spv_within_loop_budget(uint64_t iters, uint32_t loop_budget, const char *what,
                                 const char *lost, char *reason, size_t reason_size);
// A reduced loss sums every position in one invocation (softmax's loops
// over the classes inside): refused past the loop budget.
bool vkp__spv_check_loss(const vkp_graph_t *g, const vkp_node_t *n,
                         uint32_t loop_budget, char *reason, size_t reason_size);
// Recurrent ops: lstm, gru, rnn (kernels_rnn.c); the state must fit 16 KiB
// of shared memory (vkp__spv_check_rnn).
vkp_status_t vkp__spv_emit_rnn(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_rnn(const vkp_graph_t *g, const vkp_node_t *n,
                        uint32_t loop_budget, char *reason, size_t reason_size);
// Linear quantizers (kernels_quant.c), per tensor, axis or block.
vkp_status_t vkp__spv_emit_quantize_linear(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_dequantize_linear(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_matmul_integer(vkp__emit_t *e, const vkp_node_t *n);
// Padding and resampling (kernels_resample.c): pad, tile, expand,
// depth_to_space and space_to_depth share vkp__spv_emit_remap.
vkp_status_t vkp__spv_emit_remap(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_resize(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_trilu(vkp__emit_t *e, const vkp_node_t *n);
// grid_sample over 2-D images (grid_sample.comp); other ranks are refused.
vkp_status_t vkp__spv_emit_grid_sample(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_grid_sample(const vkp_graph_t *g, const vkp_node_t *n,
                                uint32_t loop_budget, char *reason, size_t reason_size);
vkp_status_t vkp__spv_emit_eye_like(vkp__emit_t *e, const vkp_node_t *n);
// Fourier transforms: dft, stft (kernels_signal.c), float32.
vkp_status_t vkp__spv_emit_dft(vkp__emit_t *e, const vkp_node_t *n);
vkp_status_t vkp__spv_emit_stft(vkp__emit_t *e, const vkp_node_t *n);
// One invocation per bin sums its whole line (or frame): refused when the
// line passes the loop budget.
bool vkp__spv_check_signal(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size);
// det (kernels_signal.c): matrices of at most 16 x 16 (vkp__spv_check_det).
vkp_status_t vkp__spv_emit_det(vkp__emit_t *e, const vkp_node_t *n);
bool vkp__spv_check_det(const vkp_graph_t *g, const vkp_node_t *n,
                        uint32_t loop_budget, char *reason, size_t reason_size);
bool vkp__spv_check_remap(const vkp_graph_t *g, const vkp_node_t *n,
                          uint32_t loop_budget, char *reason, size_t reason_size);
bool vkp__spv_check_resize(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size);

// ---------------------------------------------------------------------------

// The GLSL expression template (codegen/expr.h) of elementwise `op`, or
// NULL (codegen/spirv/ops.c).
const char *vkp__glsl_expr(vkp_op_t op);
// True for ops fused as elementwise members (unary and broadcasting binary).
bool vkp__op_is_elementwise(vkp_op_t op);
// True for reshape-like ops that only relabel the shape of their input.
bool vkp__op_is_alias(vkp_op_t op);
// True when `op` as an anchor can take an epilogue (all anchors but concat).
bool vkp__op_takes_epilogue(vkp_op_t op);
// How many external operands the epilogue of `group` reads (for the binding
// budget), counting each distinct value once.
int32_t vkp__group_epilogue_inputs(const vkp_graph_t *graph,
                                   const vkp__group_t *group);
// Number of bindings the anchor's own kernel needs (without the epilogue),
// its split inputs and destination counted by their parts.
int32_t vkp__anchor_bindings(const vkp_graph_t *graph, int32_t anchor,
                             uint64_t part_bytes);

// Emits the kernel of `group`. For a concat anchor `part` selects the input
// (one dispatch per input); otherwise it is 0.
vkp_status_t vkp__kernel_emit(const vkp_graph_t *graph,
                              const vkp__group_t *group, int32_t part,
                              const vkp__kernel_config_t *config,
                              vkp__kernel_t *out_kernel) VKP_MUST_USE;

// Emits a plain copy of `bytes` bytes (binding 1 -> binding 0), as words
// when `bytes` is a multiple of 4.
vkp_status_t vkp__kernel_emit_copy(uint64_t bytes, int32_t src_value,
                                   const vkp__kernel_config_t *config,
                                   vkp__kernel_t *out_kernel) VKP_MUST_USE;

void vkp__kernel_deinit(vkp__kernel_t *kernel);

#endif  // VKPIPE_CODEGEN_SPIRV_KERNELS_H_
