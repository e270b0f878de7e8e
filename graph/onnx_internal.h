// SPDX-License-Identifier: Apache-2.0
// Private parts of the ONNX importer shared by graph/onnx*.c:
//   onnx.c         the loader: file, ModelProto, opsets, inputs, outputs,
//                  the node loop and the one error listing every problem
//   onnx_tensor.c  TensorProto -> host tensor (typed fields, raw_data,
//                  external data), dtype mapping
//   onnx_ops.c     the per-op table: ONNX node -> IR nodes, attribute
//                  semantics per opset
//   onnx_fold.c    import-time constant folding (shape computations)
//   onnx_contrib.c ONNX Runtime's com.microsoft contrib ops
//   onnx_legacy.c  opsets 1 to 6: nodes upgraded to the forms the mappers
//                  know; opset 1's experimental ops (ImageScaler, ...)
//   onnx_<family>.c  mappers of an op family (onnx_elementwise.c: Clip,
//                  Dropout; onnx_norm.c: reductions, softmax family,
//                  normalisations; onnx_resample.c: Pad, Resize,
//                  Upsample, Tile, Expand, Trilu, EyeLike; onnx_select.c:
//                  TopK, CumSum, NonZero, Unique; onnx_index.c: OneHot,
//                  Compress; onnx_control.c: If, Loop, Scan;
//                  onnx_sequence.c: Sequence*, Optional*, SequenceMap;
//                  onnx_signal.c: DFT, STFT, MaxUnpool, window functions,
//                  MelWeightMatrix)
//
// The importer walks the ONNX nodes in order and keeps a symbol per ONNX
// value name: either a host tensor known at import time (initializers,
// Constant, and everything folded from them) or an IR value of the graph
// being built. Constants become IR constants only when an IR node reads them.
#ifndef VKPIPE_GRAPH_ONNX_INTERNAL_H_
#define VKPIPE_GRAPH_ONNX_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The most bytes a constant the importer makes itself (a fold, a mask, a
// table) may hold: a model asking for more is refused before anything is
// allocated.
#define VKP__ONNX_MADE_MAX_BYTES ((size_t)256 << 20)

#include "base/strmap.h"
#include "graph/bind.h"
#include "onnx/onnx.pb-c.h"
#include "vkpipe/graph.h"
#include "vkpipe/onnx.h"

// The opsets of the default domain the importer understands. Below
// VKP_ONNX_MODERN_OPSET nodes of ops whose schema changed are upgraded as
// they are imported (onnx_legacy.c).
#define VKP_ONNX_MIN_OPSET 1
#define VKP_ONNX_MODERN_OPSET 7
#define VKP_ONNX_MAX_OPSET 22

// A host tensor known at import time. `type` is an ONNX TensorProto
// DataType; data is owned (little-endian, row-major, nbytes bytes).
typedef struct vkp__onnx_tensor_t {
  int32_t type;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  void *data;
  size_t nbytes;
} vkp__onnx_tensor_t;

// Element size of an ONNX DataType; 0 for types without a fixed size
// (STRING, UNDEFINED, unknown).
size_t vkp__onnx_type_size(int32_t type);
// "float", "int64", ... for messages.
const char *vkp__onnx_type_name(int32_t type);
// The IR dtype for an ONNX DataType; false when the IR has none.
bool vkp__onnx_type_to_dtype(int32_t type, vkp_dtype_t *out_dtype);
int32_t vkp__onnx_type_from_dtype(vkp_dtype_t dtype);

// Number of elements; 1 for a scalar.
size_t vkp__onnx_tensor_numel(const vkp__onnx_tensor_t *t);
// Allocates a zeroed tensor of `type` and `shape` (checks rank, dims and the
// byte size for overflow).
vkp_status_t vkp__onnx_tensor_alloc(vkp__onnx_tensor_t *t, int32_t type,
                                    int32_t rank, const int64_t *shape)
    VKP_MUST_USE;
void vkp__onnx_tensor_deinit(vkp__onnx_tensor_t *t);
// Element `i` as a double / int64 (for numeric types; 0 otherwise).
double vkp__onnx_tensor_get_f(const vkp__onnx_tensor_t *t, size_t i);
int64_t vkp__onnx_tensor_get_i(const vkp__onnx_tensor_t *t, size_t i);
// Stores `v` converted to the tensor's type.
void vkp__onnx_tensor_set_f(vkp__onnx_tensor_t *t, size_t i, double v);
void vkp__onnx_tensor_set_i(vkp__onnx_tensor_t *t, size_t i, int64_t v);
// True for FLOAT, DOUBLE, FLOAT16 (the types set_f rounds into).
bool vkp__onnx_type_is_float(int32_t type);

// Decodes a TensorProto. `base_dir` (may be NULL) resolves external data;
// paths that are absolute or climb out of it are refused.
vkp_status_t vkp__onnx_tensor_decode(const Onnx__TensorProto *proto,
                                     const char *base_dir,
                                     vkp__onnx_tensor_t *out) VKP_MUST_USE;

// The ProtobufCAllocator routing protobuf-c through the library allocator.
extern ProtobufCAllocator vkp__onnx_protobuf_allocator;

// ---------------------------------------------------------------------------
// The problem list (onnx_problems.c): everything that cannot be imported,
// reported at once, grouped.

typedef struct vkp__problem_t {
  char *group;      // the ONNX op type, or "graph input", "initializer",
                    // "graph output", "load options", "graph"
  char *subject;    // node or value name ("" when none)
  char *message;
  char *key;        // group + message with quoted names blanked
  vkp_status_code_t code;
} vkp__problem_t;

typedef struct vkp__blocked_t {
  char *op;
  int32_t count;
} vkp__blocked_t;

typedef struct vkp__problems_t {
  vkp__problem_t *items;
  int32_t count, cap;
  int32_t unsupported;
  vkp_status_code_t first_code;
  vkp_status_t oom;          // the first allocation failure, if any
  // Nodes not imported only because an input comes from a refused node.
  vkp__blocked_t *blocked;
  int32_t n_blocked;
} vkp__problems_t;

// Records `st` (consumed) for `subject` (a node or value name; may be NULL)
// of `group`. Out-of-memory is kept apart and wins.
void vkp__problem_add(vkp__problems_t *p, vkp_status_t st, const char *group,
                      const char *subject);
// Counts a node of ONNX op `op` that was not imported only because an input
// comes from a refused node.
void vkp__problem_blocked(vkp__problems_t *p, const char *op);
// The grouped error for everything recorded (NULL when nothing was), naming
// the model as `what`.
vkp_status_t vkp__problems_status(vkp__problems_t *p, const char *what)
    VKP_MUST_USE;
void vkp__problems_deinit(vkp__problems_t *p);

// ---------------------------------------------------------------------------
// Import context

// What an ONNX value is at import time. Sequences and optionals exist only
// here: an import-time list of other symbols (docs/onnx.md, "Sequences,
// optionals and loops"); every element is an ordinary tensor symbol.
typedef enum vkp__onnx_sym_kind_t {
  VKP__SYM_TENSOR,
  VKP__SYM_SEQUENCE,
  VKP__SYM_OPTIONAL,  // n_items 0 (empty) or 1
} vkp__onnx_sym_kind_t;

typedef struct vkp__onnx_sym_t {
  char *name;                 // ONNX value name (owned)
  vkp__onnx_sym_kind_t kind;
  int32_t *items;             // sequence/optional: element symbols, as
                              // indices into ctx->syms (owned)
  int32_t n_items;
  int32_t elem_type;          // sequence: ONNX element type when known, else 0
  bool is_const;              // `constant` holds the value
  vkp__onnx_tensor_t constant;  // data borrowed from the graph once borrowed
  bool borrowed;              // constant.data is the IR constant's bytes
  int32_t value;              // IR value index; -1 until materialised
  bool poisoned;              // produced by a node that could not be imported
} vkp__onnx_sym_t;

// The names an If branch defines (graph/onnx.c, vkp__onnx_import_branch):
// ONNX name -> "<If node>/<branch>/<name>", with the enclosing scope.
typedef struct vkp__onnx_scope_t {
  char *prefix;                  // "<If node>/<branch>/" (owned)
  vkp_strmap_t names;            // ONNX name (borrowed) -> index in renamed
  char **renamed;                // owned
  int32_t n, cap;
  struct vkp__onnx_scope_t *outer;  // NULL: the model's graph
} vkp__onnx_scope_t;

// If nodes nest at most this deep.
#define VKP__ONNX_MAX_BRANCH_DEPTH 16
// Loop, Scan and SequenceMap unroll at import: at most this many body nodes
// (iterations x nodes of the body) per node; past it the node is refused.
#define VKP__ONNX_MAX_UNROLL 65536

typedef struct vkp__onnx_ctx_t {
  vkp_graph_t *graph;            // being built (owned by the loader)
  const char *base_dir;          // model directory, for external data
  int64_t opset;                 // default-domain opset
  vkp__onnx_sym_t *syms;
  int32_t n_syms, cap_syms;
  vkp_strmap_t sym_index;        // ONNX name -> syms index
  // vkp__fresh_name's memo: "n:" or "v:" + base -> a slot (keys owned in
  // fresh_keys), fresh_suffix[slot] the suffix to try next, so n names
  // from one base cost O(n).
  vkp_strmap_t fresh_slot;
  char **fresh_keys;
  int32_t *fresh_suffix;
  int32_t n_fresh, cap_fresh;
  int32_t name_counter;          // for generated IR names
  const Onnx__NodeProto *node;   // the node being imported
  const char *node_name;         // its unique IR-side name
  int32_t emitted;               // IR nodes emitted for it so far
  int32_t node_index;            // its index in the ONNX graph
  // Conv -> BatchNormalization pairs folded at import: fold_bn[i] is the
  // index of the BatchNormalization folded into Conv node i, or -1.
  int32_t *fold_bn;
  bool *skip;                    // ONNX nodes already handled by a fusion
  const Onnx__GraphProto *onnx_graph;
  const vkp_onnx_options_t *options;  // never NULL
  char *const *node_names;       // IR-side name of every ONNX node
  // Exporter-expanded subgraphs recognised as one IR op (onnx_fuse.c):
  // fusion_at[k] is the group whose last node is k, or -1.
  struct vkp__onnx_fusion_t *fusions;
  int32_t n_fusions;
  int32_t *fusion_at;
  bool no_fold;                  // emit nodes as they are (graph outputs)
  vkp__binder_t binder;          // options->bindings: symbolic input dims
  vkp__problems_t *problems;     // the import's problem list (branch nodes
                                 // record theirs there too)
  vkp__onnx_scope_t *scope;      // the innermost If branch being imported,
                                 // or NULL
  const Onnx__ModelProto *model;  // for its local functions
  int32_t function_depth;        // model-local function bodies being imported
} vkp__onnx_ctx_t;

// The importer's own steps, shared by If branches (onnx.c) and model-local
// functions (onnx_function.c).
// Imports `node` under IR name `name` (k: its index in the model's graph,
// or -1 for a node of a branch or function body): a problem is recorded
// and poisons the node's outputs; only out-of-memory comes back.
vkp_status_t vkp__import_proto(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *node,
                               const char *name, int32_t k,
                               vkp__problems_t *problems) VKP_MUST_USE;
// A name not used yet in the graph, from `base` (owned by the caller).
char *vkp__fresh_name(vkp__onnx_ctx_t *ctx, const char *base, bool node);
// Defines `name` in scope `sc` as "<prefix><name>"; *out is that name.
vkp_status_t vkp__scope_define(vkp__onnx_scope_t *sc, const char *name,
                               const char **out) VKP_MUST_USE;
void vkp__scope_deinit(vkp__onnx_scope_t *sc);
// Imports node k of a branch, loop body or function body in scope `sc`: a
// copy of it whose inputs and outputs carry their scoped names. `call`: the
// function call whose body it is (its formal outputs are already in `sc`
// and its attributes bind the node's references), or NULL.
vkp_status_t vkp__import_scoped_node(vkp__onnx_ctx_t *ctx, vkp__onnx_scope_t *sc,
                                     const Onnx__NodeProto *node, size_t k,
                                     const Onnx__NodeProto *call) VKP_MUST_USE;
// The attributes of function body node `node` as `call` gives them (ref_attr_name
// bound to the call's attribute, or left out): *out_attrs, an array of *out_n
// pointers, some into *out_storage (both owned by the caller, vkp__free).
vkp_status_t vkp__onnx_call_attrs(const Onnx__NodeProto *call, const Onnx__NodeProto *node,
                                  Onnx__AttributeProto ***out_attrs,
                                  Onnx__AttributeProto **out_storage,
                                  size_t *out_n) VKP_MUST_USE;

// Model-local functions (onnx_function.c): the function a node of
// `domain` / `op_type` calls, or NULL; and the current node replaced by
// the function's body.
const Onnx__FunctionProto *vkp__onnx_function_find(const vkp__onnx_ctx_t *ctx,
                                                   const char *domain,
                                                   const char *op_type);
vkp_status_t vkp__onnx_inline_function(vkp__onnx_ctx_t *ctx,
                                       const Onnx__FunctionProto *fn) VKP_MUST_USE;

// The name `name` has in the current scope: its renamed form when an
// enclosing If branch defines it, else itself.
const char *vkp__onnx_scoped_name(const vkp__onnx_ctx_t *ctx, const char *name);
// Sets uses[name] = count for every name the subgraphs of `node`'s
// attributes (If branches, recursively) read: the fusion planners count
// those values as used elsewhere.
vkp_status_t vkp__onnx_mark_branch_uses(const Onnx__NodeProto *node,
                                        vkp_strmap_t *uses, int32_t count)
    VKP_MUST_USE;
// Imports the nodes of If branch `branch` of the current node (`label`:
// "then" or "else") into the graph being built; a node that cannot be
// imported is recorded as a problem and poisons its outputs. out_names
// (branch->n_output entries, owned by the caller, vkp__free) get the names
// of the symbols the branch's outputs are.
vkp_status_t vkp__onnx_import_branch(vkp__onnx_ctx_t *ctx,
                                     const Onnx__GraphProto *branch,
                                     const char *label, char **out_names)
    VKP_MUST_USE;

// The general form: `branch` (a Loop or Scan body, a SequenceMap body, an
// If branch) imported once under `label`, its inputs bound to the symbols
// with indices bind[0..n_bind) (their number must match). Loops call it
// once per iteration with a new label ("iter3").
vkp_status_t vkp__onnx_import_subgraph(vkp__onnx_ctx_t *ctx,
                                       const Onnx__GraphProto *branch,
                                       const char *label, int32_t n_bind,
                                       const int32_t *bind, char **out_names)
    VKP_MUST_USE;

typedef enum vkp__onnx_fusion_kind_t {
  VKP__FUSE_LAYER_NORM,
  VKP__FUSE_GELU,
  VKP__FUSE_ATTENTION,
  VKP__FUSE_GROUP_NORM,
  VKP__FUSE_RMS_NORM,
  VKP__FUSE_GELU_TANH,
  VKP__FUSE_QDQ,
} vkp__onnx_fusion_kind_t;

// A QDQ integer product (ONNX Runtime's quantization layout): the ONNX node
// indices of DequantizeLinear(x), DequantizeLinear(w), DequantizeLinear(b)
// (-1: no bias), the Conv, MatMul or Gemm, the Relu (-1: none) and the closing
// QuantizeLinear (the anchor). The fusion's x is the quantized input.
typedef struct vkp__onnx_qdq_t {
  int32_t dq_x, dq_w, dq_b, product, relu, q;
  int32_t add;  // MatMul's bias Add (its other operand is dq_b), or -1
} vkp__onnx_qdq_t;

// Attention's operands (x is Q): scalar factors as Mul (divide false) or
// Div (divide true) by constants, on Q, on Kt and on the scores.
typedef struct vkp__onnx_attention_t {
  const char *kt, *v;
  const char *mask;          // Add's other operand, or NULL
  const char *cond, *fill;   // Where's condition and fill, or NULL
  bool fill_where;           // Where(cond, fill, S): true; (cond, S, fill): false
  const char *factors[3];
  bool divide[3];
  int32_t n_factors;
  int32_t softmax;           // the Softmax node
} vkp__onnx_attention_t;

// One recognised pattern: its ONNX nodes in graph order (the last one is
// the anchor) and the ONNX value names of its operands.
typedef struct vkp__onnx_fusion_t {
  vkp__onnx_fusion_kind_t kind;
  int32_t n_nodes;
  int32_t *nodes;
  const char *x;        // the input
  const char *axes_of;  // LayerNorm: the first ReduceMean (axes, keepdims)
  const char *eps;      // LayerNorm, RMSNorm: epsilon; GELU: the divisor
                        // (sqrt 2); tanh GELU: sqrt(2 / pi)
  const char *two;      // LayerNorm, RMSNorm: the exponent (RMSNorm: NULL for
                        // x * x); GELU: the 1 added; tanh GELU: 0.044715
  const char *one;      // RMSNorm: the 1 of Div(1, rms) (NULL: other forms);
                        // tanh GELU: the 1 added
  const char *scale;    // LayerNorm, GroupNorm, RMSNorm: gamma (NULL: none);
                        // GELU, tanh GELU: the 0.5 (NULL: tanh GELU's
                        // x * 0.5 folded as Div(x, 2): see half_div)
  const char *bias;     // LayerNorm, GroupNorm: beta (NULL: none)
  const char *cube;     // tanh GELU: Pow's exponent (3), or NULL for x*x*x
  int32_t mean_node;    // LayerNorm: the first ReduceMean's index; RMSNorm: its
                        // ReduceMean's;
                        // GroupNorm: the InstanceNormalization's
  vkp__onnx_attention_t att;  // Attention
  vkp__onnx_qdq_t qdq;        // QDQ
} vkp__onnx_fusion_t;

// graph/onnx_quant.c: emits qlinear_conv / qlinear_matmul for a planned QDQ
// group when the folding is exact (see there); *out_fused false otherwise.
vkp_status_t vkp__onnx_emit_qdq(vkp__onnx_ctx_t *ctx, const vkp__onnx_fusion_t *f,
                                int32_t xv, bool *out_fused) VKP_MUST_USE;

// Finds the patterns (docs/onnx.md) and marks their inner nodes skipped.
vkp_status_t vkp__onnx_plan_fusions(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
// At a group's last node: emits the fused op when the operands qualify
// (constants where needed, shapes that fit); *out_fused false otherwise,
// and nothing was emitted.
vkp_status_t vkp__onnx_try_fusion(vkp__onnx_ctx_t *ctx, int32_t group,
                                  bool *out_fused) VKP_MUST_USE;

// The symbol named `name`, or NULL.
vkp__onnx_sym_t *vkp__onnx_sym_find(vkp__onnx_ctx_t *ctx, const char *name);
// Defines `name` as a host constant (consumes *t; it is zeroed).
vkp_status_t vkp__onnx_bind_const(vkp__onnx_ctx_t *ctx, const char *name,
                                  vkp__onnx_tensor_t *t) VKP_MUST_USE;
// Defines `name` as IR value `value`.
vkp_status_t vkp__onnx_bind_value(vkp__onnx_ctx_t *ctx, const char *name,
                                  int32_t value) VKP_MUST_USE;
// Defines `name` as another name for `sym` (Identity, Dropout); a sequence
// or optional is copied as a list of the same elements.
vkp_status_t vkp__onnx_bind_alias(vkp__onnx_ctx_t *ctx, const char *name,
                                  const vkp__onnx_sym_t *sym) VKP_MUST_USE;
// Defines `name` as a sequence or optional (`kind`) of the symbols with
// indices items[0..n) (copied).
vkp_status_t vkp__onnx_bind_list(vkp__onnx_ctx_t *ctx, const char *name,
                                 vkp__onnx_sym_kind_t kind,
                                 const int32_t *items, int32_t n,
                                 int32_t elem_type) VKP_MUST_USE;
// The index of `sym` in ctx->syms (stable; the pointer is not, across
// bindings).
int32_t vkp__onnx_sym_index(const vkp__onnx_ctx_t *ctx,
                            const vkp__onnx_sym_t *sym);
// "a tensor", "a sequence", "an optional" for messages.
const char *vkp__onnx_sym_kind_name(vkp__onnx_sym_kind_t kind);

// Input `i` of the current node, or NULL when absent or "" (optional).
vkp__onnx_sym_t *vkp__onnx_input(vkp__onnx_ctx_t *ctx, int32_t i);
// Output name `i` of the current node, or NULL when absent or "".
const char *vkp__onnx_output(const vkp__onnx_ctx_t *ctx, int32_t i);
// The IR value of a symbol, making an IR constant of a host one on first use
// (UNSUPPORTED when the IR has no such dtype).
vkp_status_t vkp__onnx_sym_value(vkp__onnx_ctx_t *ctx, vkp__onnx_sym_t *sym,
                                 int32_t *out_value) VKP_MUST_USE;
// IR value of input `i` (required).
vkp_status_t vkp__onnx_input_value(vkp__onnx_ctx_t *ctx, int32_t i,
                                   int32_t *out_value) VKP_MUST_USE;
// Host constant of input `i`; UNSUPPORTED naming `what` when it is not known
// at import time; NOT_FOUND-free: *out NULL when the input is omitted.
vkp_status_t vkp__onnx_input_const(vkp__onnx_ctx_t *ctx, int32_t i,
                                   const char *what,
                                   const vkp__onnx_tensor_t **out)
    VKP_MUST_USE;

// Emits one IR node for the current ONNX node: inputs are IR value indices
// (-1: omitted), `out_name` the ONNX output it defines (NULL: a fresh
// internal name). Infers its shape at once; *out_value gets its output.
vkp_status_t vkp__onnx_emit(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t n_in,
                            const int32_t *inputs, int32_t n_attrs,
                            const vkp_attr_t *attrs, const char *out_name,
                            int32_t *out_value) VKP_MUST_USE;
// A binary node without attributes, a fresh output: op(a, b).
vkp_status_t vkp__onnx_emit2(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t a, int32_t b,
                             int32_t *out_value) VKP_MUST_USE;
// The same for an IR node with `n_out` outputs: out_names[i] is the ONNX
// output output i defines (NULL: a fresh internal name); out_values gets
// the IR values.
vkp_status_t vkp__onnx_emit_multi(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                  int32_t n_in, const int32_t *inputs,
                                  int32_t n_attrs, const vkp_attr_t *attrs,
                                  int32_t n_out, const char *const *out_names,
                                  int32_t *out_values) VKP_MUST_USE;
// Adds an IR constant with a fresh name from a host tensor (copied).
vkp_status_t vkp__onnx_add_const(vkp__onnx_ctx_t *ctx,
                                 const vkp__onnx_tensor_t *t,
                                 int32_t *out_value) VKP_MUST_USE;

// Attributes of the current node.
const Onnx__AttributeProto *vkp__onnx_attr(const vkp__onnx_ctx_t *ctx,
                                           const char *name);
vkp_status_t vkp__onnx_attr_int(const vkp__onnx_ctx_t *ctx, const char *name,
                                int64_t fallback, int64_t *out) VKP_MUST_USE;
vkp_status_t vkp__onnx_attr_float(const vkp__onnx_ctx_t *ctx,
                                  const char *name, double fallback,
                                  double *out) VKP_MUST_USE;
// INTS attribute: *out_count = -1 when absent; at most `cap` entries.
vkp_status_t vkp__onnx_attr_ints(const vkp__onnx_ctx_t *ctx, const char *name,
                                 int64_t *out, int32_t cap,
                                 int32_t *out_count) VKP_MUST_USE;
// STRING attribute into buf; `fallback` when absent.
vkp_status_t vkp__onnx_attr_string(const vkp__onnx_ctx_t *ctx,
                                   const char *name, const char *fallback,
                                   char *buf, size_t buf_size) VKP_MUST_USE;

// Shape information of a symbol (constant or IR value).
void vkp__onnx_sym_shape(const vkp__onnx_ctx_t *ctx, const vkp__onnx_sym_t *sym,
                         int32_t *out_rank, int64_t *out_shape);

// ---------------------------------------------------------------------------
// The op table (onnx_ops.c) and folding (onnx_fold.c)

typedef vkp_status_t (*vkp__onnx_map_fn)(vkp__onnx_ctx_t *ctx);

typedef struct vkp__onnx_op_t {
  const char *onnx_name;
  vkp__onnx_map_fn map;      // builds IR nodes (or binds constants)
  vkp__onnx_map_fn fold;     // when every input is constant; may be NULL
  vkp_op_t ir;               // `simple` ops: the IR op (else VKP_OP_COUNT)
  const char *attrs;         // the attributes understood, comma-separated
} vkp__onnx_op_t;

// The table entry for `op_type`, or NULL when the op is not supported.
const vkp__onnx_op_t *vkp__onnx_op_find(const char *op_type);
// Whether the mapper of `op` reads sequence and optional inputs (the
// Sequence*/Optional* ops, Identity, If, Loop, Scan); every other op takes
// tensors and is refused one such input by name.
bool vkp__onnx_op_takes_lists(const vkp__onnx_op_t *op);

// Folds IR node `index` (the graph's last) through the op table's reference
// kernel when every input is a constant: its outputs become constants and
// the node goes. *out_folded says whether it did.
vkp_status_t vkp__onnx_fold_ir_node(vkp__onnx_ctx_t *ctx, int32_t index,
                                    bool *out_folded) VKP_MUST_USE;

// Folding entry points used by the op table.
vkp_status_t vkp__onnx_fold_range(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_constant_of_shape(vkp__onnx_ctx_t *ctx)
    VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_expand(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
// NonZero and Unique of inputs known at import time fold here; on run-time
// data they become the IR's non_zero and unique (onnx_select.c).
vkp_status_t vkp__onnx_fold_non_zero(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_unique(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
// The window functions and MelWeightMatrix make constants (onnx_signal.c).
vkp_status_t vkp__onnx_fold_hann_window(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_hamming_window(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_blackman_window(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;
vkp_status_t vkp__onnx_fold_mel_weight_matrix(vkp__onnx_ctx_t *ctx) VKP_MUST_USE;

// Shared with the folder: the new shape of Reshape/Squeeze/Unsqueeze/Flatten
// for an input of `rank`/`shape` under the current node's semantics.
vkp_status_t vkp__onnx_reshape_target(vkp__onnx_ctx_t *ctx, int32_t rank,
                                      const int64_t *shape, int32_t *out_rank,
                                      int64_t *out_shape) VKP_MUST_USE;
// Same, also listing the axes Squeeze removes / Unsqueeze inserts
// (normalised, ascending) when out_axes is not NULL (*out_n_axes starts at 0).
vkp_status_t vkp__onnx_reshape_axes(vkp__onnx_ctx_t *ctx, int32_t rank,
                                    const int64_t *shape, int32_t *out_rank,
                                    int64_t *out_shape, int64_t *out_axes,
                                    int32_t *out_n_axes) VKP_MUST_USE;
// Slice parameters of the current node (attributes before opset 10, inputs
// from 10) as per-axis lists: count entries each, axes possibly negative
// (but in range), steps clamped to the dim's length.
typedef struct vkp__onnx_slice_t {
  int32_t count;
  int64_t starts[VKP_MAX_RANK], ends[VKP_MAX_RANK], axes[VKP_MAX_RANK],
      steps[VKP_MAX_RANK];
} vkp__onnx_slice_t;
vkp_status_t vkp__onnx_slice_params(vkp__onnx_ctx_t *ctx, int32_t rank,
                                    const int64_t *shape,
                                    vkp__onnx_slice_t *out) VKP_MUST_USE;
// The permutation of a Transpose for `rank` (default: reversed).
vkp_status_t vkp__onnx_transpose_perm(vkp__onnx_ctx_t *ctx, int32_t rank,
                                      int64_t *out_perm) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Legacy opsets (onnx_legacy.c)

// Most attributes one upgrade adds, and entries in a list it makes.
#define VKP__LEGACY_MAX_MADE 4
#define VKP__LEGACY_MAX_LIST 64

// A node upgraded to its opset-7 form: `node` is a copy of the model's node
// with arrays of its own; ctx->node points at it while it is imported.
typedef struct vkp__onnx_legacy_t {
  bool active;                    // an upgrade took place
  const Onnx__NodeProto *orig;    // the model's node (borrowed)
  Onnx__NodeProto node;           // the copy
  Onnx__AttributeProto **attrs;   // owned array; entries borrowed or `made`
  char **inputs;                  // owned array; strings borrowed or `names`
  Onnx__AttributeProto made[VKP__LEGACY_MAX_MADE];
  int64_t ints[VKP__LEGACY_MAX_MADE][VKP__LEGACY_MAX_LIST];
  float floats[4];
  char *names[4];                 // owned names of symbols bound for inputs
  int32_t n_made, n_names;
} vkp__onnx_legacy_t;

// When the model's opset is below the modern form of the current node's op,
// upgrades the node (*up; ctx->node then points at up->node), binding the
// symbols and emitting the IR nodes the upgrade needs; else leaves *up
// inactive. An error names the legacy form that cannot be mapped.
vkp_status_t vkp__onnx_legacy_upgrade(vkp__onnx_ctx_t *ctx,
                                      vkp__onnx_legacy_t *up) VKP_MUST_USE;
// Points ctx->node back at the model's node and frees the copy.
void vkp__onnx_legacy_deinit(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
// Whether `name` is a legacy attribute of `op_type` at `opset` (one the
// upgrade consumes).
bool vkp__onnx_legacy_attr(const char *op_type, const char *name,
                           int64_t opset);

// ---------------------------------------------------------------------------
// The ONNX op table: X(ONNX op, mapper, folder, IR op, understood
// attributes). The IR op (an enum suffix, or NONE) is for the `simple`
// mapper: ops whose ONNX form is exactly that IR op on the same inputs and
// attributes (those listed, under the same names, with ONNX's defaults in the
// IR schema).
// `mapper` names vkp__map_<mapper> (onnx_ops.c or a family file
// graph/onnx_<family>.c), which builds IR nodes; `folder` names
// vkp__onnx_fold_<folder> (onnx_fold.c) for ONNX ops the IR has no op for,
// run when every input is constant (NULL: IR nodes fold by themselves).

#define VKP__ONNX_OP_LIST(X) \
  X("Abs", simple, NULL, ABS, "") \
  X("Acos", simple, NULL, ACOS, "") \
  X("Acosh", simple, NULL, ACOSH, "") \
  X("Add", simple, NULL, ADD, "") \
  X("Affine", experimental, NULL, NONE, "alpha,beta") \
  X("And", simple, NULL, AND, "") \
  X("ArgMax", simple, NULL, ARG_MAX, "axis,keepdims,select_last_index") \
  X("ArgMin", simple, NULL, ARG_MIN, "axis,keepdims,select_last_index") \
  X("Asin", simple, NULL, ASIN, "") \
  X("Asinh", simple, NULL, ASINH, "") \
  X("Atan", simple, NULL, ATAN, "") \
  X("Atanh", simple, NULL, ATANH, "") \
  X("AveragePool", pool, NULL, NONE, "auto_pad,ceil_mode,count_include_pad,dilations,kernel_shape,pads,strides") \
  X("BlackmanWindow", fold_only, blackman_window, NONE, "output_datatype,periodic") \
  X("BatchNormalization", batch_norm, NULL, NONE, "epsilon,momentum,spatial,training_mode") \
  X("BitShift", simple, NULL, BIT_SHIFT, "direction") \
  X("BitwiseAnd", simple, NULL, BITWISE_AND, "") \
  X("BitwiseNot", simple, NULL, BITWISE_NOT, "") \
  X("BitwiseOr", simple, NULL, BITWISE_OR, "") \
  X("BitwiseXor", simple, NULL, BITWISE_XOR, "") \
  X("Cast", cast, NULL, NONE, "saturate,to") \
  X("CastLike", cast, NULL, NONE, "saturate") \
  X("Celu", simple, NULL, CELU, "alpha") \
  X("Clip", clip, NULL, NONE, "min,max") \
  X("ConcatFromSequence", sequence, NULL, NONE, "axis,new_axis") \
  X("Concat", concat, NULL, NONE, "axis") \
  X("Constant", constant, NULL, NONE, "value,value_float,value_floats,value_int,value_ints,sparse_value,value_string,value_strings") \
  X("ConstantOfShape", constant_of_shape, constant_of_shape, NONE, "value") \
  X("Compress", compress, NULL, NONE, "axis") \
  X("Conv", conv, NULL, NONE, "auto_pad,dilations,group,kernel_shape,pads,strides") \
  X("ConvTranspose", conv_transpose, NULL, NONE, "auto_pad,dilations,group,kernel_shape,output_padding,output_shape,pads,strides") \
  X("Ceil", simple, NULL, CEIL, "") \
  X("ConvInteger", qconv, NULL, NONE, "auto_pad,dilations,group,kernel_shape,pads,strides") \
  X("Cos", simple, NULL, COS, "") \
  X("Cosh", simple, NULL, COSH, "") \
  X("Crop", experimental, NULL, NONE, "border,scale") \
  X("CumSum", cum_sum, NULL, NONE, "exclusive,reverse") \
  X("DepthToSpace", simple, NULL, DEPTH_TO_SPACE, "blocksize,mode") \
  X("DFT", dft, NULL, NONE, "axis,inverse,onesided") \
  X("DequantizeLinear", quantize, NULL, NONE, "axis,block_size") \
  X("Det", simple, NULL, DET, "") \
  X("Div", simple, NULL, DIV, "") \
  X("Dropout", dropout, NULL, NONE, "ratio,seed") \
  X("DynamicQuantizeLinear", dynamic_quantize, NULL, NONE, "") \
  X("Einsum", einsum, NULL, NONE, "equation") \
  X("Elu", simple, NULL, ELU, "alpha") \
  X("Equal", simple, NULL, EQUAL, "") \
  X("Erf", simple, NULL, ERF, "") \
  X("Exp", simple, NULL, EXP, "") \
  X("Expand", expand, expand, NONE, "") \
  X("EyeLike", eye_like, NULL, NONE, "dtype,k") \
  X("Flatten", reshape_like, NULL, NONE, "axis") \
  X("Floor", simple, NULL, FLOOR, "") \
  X("GRU", rnn, NULL, NONE, "activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout,linear_before_reset") \
  X("Gather", gather, NULL, GATHER, "axis") \
  X("GatherElements", simple, NULL, GATHER_ELEMENTS, "axis") \
  X("GatherND", simple, NULL, GATHER_ND, "batch_dims") \
  X("Gemm", gemm, NULL, NONE, "alpha,beta,transA,transB") \
  X("GlobalAveragePool", simple, NULL, GLOBAL_AVG_POOL, "") \
  X("GlobalLpPool", pool, NULL, NONE, "p") \
  X("GlobalMaxPool", pool, NULL, NONE, "") \
  X("GroupNormalization", group_norm, NULL, NONE, "epsilon,num_groups,stash_type") \
  X("Hardmax", softmax, NULL, NONE, "axis") \
  X("HammingWindow", fold_only, hamming_window, NONE, "output_datatype,periodic") \
  X("HannWindow", fold_only, hann_window, NONE, "output_datatype,periodic") \
  X("HardSigmoid", simple, NULL, HARD_SIGMOID, "alpha,beta") \
  X("HardSwish", simple, NULL, HARD_SWISH, "") \
  X("Greater", simple, NULL, GREATER, "") \
  X("GridSample", grid_sample, NULL, NONE, "align_corners,mode,padding_mode") \
  X("GreaterOrEqual", simple, NULL, GREATER_OR_EQUAL, "") \
  X("Identity", passthrough, NULL, NONE, "") \
  X("If", if_else, NULL, NONE, "else_branch,then_branch") \
  X("ImageScaler", experimental, NULL, NONE, "bias,scale") \
  X("InstanceNormalization", instance_norm, NULL, NONE, "epsilon") \
  X("IsInf", simple, NULL, IS_INF, "detect_negative,detect_positive") \
  X("IsNaN", simple, NULL, IS_NAN, "") \
  X("LSTM", rnn, NULL, NONE, "activation_alpha,activation_beta,activations,clip,direction,hidden_size,input_forget,layout") \
  X("Loop", loop, NULL, NONE, "body") \
  X("LayerNormalization", layer_norm, NULL, NONE, "axis,epsilon,stash_type") \
  X("LeakyRelu", leaky_relu, NULL, NONE, "alpha") \
  X("Less", simple, NULL, LESS, "") \
  X("LessOrEqual", simple, NULL, LESS_OR_EQUAL, "") \
  X("Log", simple, NULL, LOG, "") \
  X("LogSoftmax", softmax, NULL, NONE, "axis") \
  X("LpNormalization", lp_norm, NULL, NONE, "axis,p") \
  X("LRN", lrn, NULL, NONE, "alpha,beta,bias,size") \
  X("MatMul", simple, NULL, MATMUL, "") \
  X("MatMulInteger", simple, NULL, MATMUL_INTEGER, "") \
  X("Max", simple, NULL, MAX, "") \
  X("LpPool", pool, NULL, NONE, "auto_pad,ceil_mode,dilations,kernel_shape,p,pads,strides") \
  X("MaxPool", pool, NULL, NONE, "auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides") \
  X("MaxUnpool", max_unpool, NULL, NONE, "kernel_shape,pads,strides") \
  X("Mean", simple, NULL, MEAN, "") \
  X("MeanVarianceNormalization", mean_variance_norm, NULL, NONE, "axes") \
  X("MelWeightMatrix", fold_only, mel_weight_matrix, NONE, "output_datatype") \
  X("Min", simple, NULL, MIN, "") \
  X("Mish", simple, NULL, MISH, "") \
  X("Mod", simple, NULL, MOD, "fmod") \
  X("Mul", simple, NULL, MUL, "") \
  X("Neg", simple, NULL, NEG, "") \
  X("NonZero", non_zero, non_zero, NONE, "") \
  X("NonMaxSuppression", simple, NULL, NON_MAX_SUPPRESSION, "center_point_box") \
  X("NegativeLogLikelihoodLoss", loss, NULL, NONE, "ignore_index,reduction") \
  X("Not", simple, NULL, NOT, "") \
  X("OneHot", one_hot, NULL, NONE, "axis") \
  X("Optional", optional, NULL, NONE, "type") \
  X("OptionalGetElement", optional, NULL, NONE, "") \
  X("OptionalHasElement", optional, NULL, NONE, "") \
  X("Or", simple, NULL, OR, "") \
  X("PRelu", simple, NULL, PRELU, "") \
  X("ParametricSoftplus", experimental, NULL, NONE, "alpha,beta") \
  X("Pad", pad, NULL, NONE, "mode,pads,value") \
  X("Pow", simple, NULL, POW, "") \
  X("QLinearConv", qconv, NULL, NONE, "auto_pad,dilations,group,kernel_shape,pads,strides") \
  X("QLinearMatMul", simple, NULL, QLINEAR_MATMUL, "") \
  X("QuantizeLinear", quantize, NULL, NONE, "axis,block_size,output_dtype,saturate") \
  X("ReverseSequence", simple, NULL, REVERSE_SEQUENCE, "batch_axis,time_axis") \
  X("RNN", rnn, NULL, NONE, "activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout") \
  X("Range", range, range, NONE, "") \
  X("Reciprocal", simple, NULL, RECIPROCAL, "") \
  X("ReduceL1", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceL2", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceLogSum", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceLogSumExp", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceMax", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceMean", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceMin", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceProd", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceSum", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("ReduceSumSquare", reduce, NULL, NONE, "axes,keepdims,noop_with_empty_axes") \
  X("Relu", simple, NULL, RELU, "") \
  X("Reshape", reshape_like, NULL, NONE, "allowzero") \
  X("Resize", resize, NULL, NONE, "antialias,axes,coordinate_transformation_mode,cubic_coeff_a,exclude_outside,extrapolation_value,keep_aspect_ratio_policy,mode,nearest_mode") \
  X("RoiAlign", roi_align, NULL, NONE, "coordinate_transformation_mode,mode,output_height,output_width,sampling_ratio,spatial_scale") \
  X("Round", simple, NULL, ROUND, "") \
  X("Scatter", simple, NULL, SCATTER_ELEMENTS, "axis") \
  X("Scale", experimental, NULL, NONE, "scale") \
  X("ScaledTanh", experimental, NULL, NONE, "alpha,beta") \
  X("ScatterElements", simple, NULL, SCATTER_ELEMENTS, "axis,reduction") \
  X("ScatterND", simple, NULL, SCATTER_ND, "reduction") \
  X("Scan", scan, NULL, NONE, "body,directions,num_scan_inputs,scan_input_axes,scan_input_directions,scan_output_axes,scan_output_directions") \
  X("Selu", simple, NULL, SELU, "alpha,gamma") \
  X("SequenceAt", sequence, NULL, NONE, "") \
  X("SequenceConstruct", sequence, NULL, NONE, "") \
  X("SequenceEmpty", sequence, NULL, NONE, "dtype") \
  X("SequenceErase", sequence, NULL, NONE, "") \
  X("SequenceInsert", sequence, NULL, NONE, "") \
  X("SequenceLength", sequence, NULL, NONE, "") \
  X("SequenceMap", sequence_map, NULL, NONE, "body") \
  X("Shape", shape, NULL, NONE, "start,end") \
  X("Shrink", simple, NULL, SHRINK, "bias,lambd") \
  X("Sigmoid", simple, NULL, SIGMOID, "") \
  X("Sign", simple, NULL, SIGN, "") \
  X("SimplifiedLayerNormalization", simplified_layer_norm, NULL, NONE, "axis,epsilon,stash_type") \
  X("Sin", simple, NULL, SIN, "") \
  X("Sinh", simple, NULL, SINH, "") \
  X("Size", shape, NULL, NONE, "") \
  X("Slice", slice, NULL, NONE, "axes,ends,starts") \
  X("Softmax", softmax, NULL, NONE, "axis") \
  X("SoftmaxCrossEntropyLoss", loss, NULL, NONE, "ignore_index,reduction") \
  X("Softplus", simple, NULL, SOFTPLUS, "") \
  X("Softsign", simple, NULL, SOFTSIGN, "") \
  X("SpaceToDepth", simple, NULL, SPACE_TO_DEPTH, "blocksize") \
  X("Split", split, NULL, NONE, "axis,num_outputs,split") \
  X("SplitToSequence", sequence, NULL, NONE, "axis,keepdims") \
  X("STFT", stft, NULL, NONE, "onesided") \
  X("Sqrt", simple, NULL, SQRT, "") \
  X("Squeeze", reshape_like, NULL, NONE, "axes") \
  X("Sub", simple, NULL, SUB, "") \
  X("Sum", simple, NULL, SUM, "") \
  X("Tan", simple, NULL, TAN, "") \
  X("Tanh", simple, NULL, TANH, "") \
  X("ThresholdedRelu", simple, NULL, THRESHOLDED_RELU, "alpha") \
  X("Tile", tile, NULL, NONE, "") \
  X("TopK", top_k, NULL, NONE, "axis,k,largest,sorted") \
  X("Transpose", transpose, NULL, NONE, "perm") \
  X("Trilu", trilu, NULL, NONE, "upper") \
  X("Unique", unique, unique, NONE, "axis,sorted") \
  X("Unsqueeze", reshape_like, NULL, NONE, "axes") \
  X("Upsample", upsample, NULL, NONE, "mode,scales") \
  X("Where", simple, NULL, WHERE, "") \
  X("Xor", simple, NULL, XOR, "")

// The com.microsoft contrib ops (onnx_contrib.c), in the same form; a node
// of that domain whose op is not listed here is refused as
// "com.microsoft::<Op> is not supported". Folding: IR nodes fold by
// themselves.
#define VKP__ONNX_MS_OP_LIST(X) \
  X("DequantizeLinear", quantize, NULL, NONE, "axis") \
  X("DynamicQuantizeMatMul", ms_dynamic_quantize_matmul, NULL, NONE, "") \
  X("Attention", ms_attention, NULL, NONE, "do_rotary,mask_filter_value,num_heads,past_present_share_buffer,qkv_hidden_sizes,rotary_embedding_dim,scale,unidirectional") \
  X("BiasAdd", ms_bias_add, NULL, NONE, "") \
  X("BiasGelu", ms_gelu, NULL, NONE, "") \
  X("EmbedLayerNormalization", ms_embed_layer_norm, NULL, NONE, "epsilon,mask_index_type") \
  X("FastGelu", ms_gelu, NULL, NONE, "") \
  X("FusedConv", ms_fused_conv, NULL, NONE, "activation,activation_params,auto_pad,dilations,group,kernel_shape,pads,strides") \
  X("FusedMatMul", ms_fused_matmul, NULL, NONE, "alpha,transA,transB,transBatchA,transBatchB") \
  X("Gelu", ms_gelu, NULL, NONE, "") \
  X("GroupQueryAttention", ms_group_query_attention, NULL, NONE, "do_rotary,kv_num_heads,local_window_size,num_heads,qk_output,rotary_interleaved,scale,smooth_softmax,softcap") \
  X("LayerNormalization", layer_norm, NULL, NONE, "axis,epsilon,stash_type") \
  X("MatMulIntegerToFloat", ms_matmul_integer_to_float, NULL, NONE, "") \
  X("MatMulNBits", ms_matmul_nbits, NULL, NONE, "K,N,accuracy_level,bits,block_size") \
  X("MultiHeadAttention", ms_multi_head_attention, NULL, NONE, "mask_filter_value,num_heads,scale,unidirectional") \
  X("QLinearAdd", ms_qlinear_binary, NULL, NONE, "") \
  X("QLinearAveragePool", ms_qlinear_pool, NULL, NONE, "auto_pad,ceil_mode,channels_last,count_include_pad,kernel_shape,pads,strides") \
  X("QLinearConcat", ms_qlinear_concat, NULL, NONE, "axis") \
  X("QLinearGlobalAveragePool", ms_qlinear_pool, NULL, NONE, "channels_last") \
  X("QLinearLeakyRelu", ms_qlinear_unary, NULL, NONE, "alpha") \
  X("QLinearMul", ms_qlinear_binary, NULL, NONE, "") \
  X("QLinearSigmoid", ms_qlinear_unary, NULL, NONE, "") \
  X("QuantizeLinear", quantize, NULL, NONE, "axis") \
  X("QuickGelu", ms_quick_gelu, NULL, NONE, "alpha") \
  X("RotaryEmbedding", ms_rotary_embedding, NULL, NONE, "interleaved,is_packed_batching,num_heads,rotary_embedding_dim,scale") \
  X("SimplifiedLayerNormalization", simplified_layer_norm, NULL, NONE, "axis,epsilon,stash_type") \
  X("SkipLayerNormalization", ms_skip_layer_norm, NULL, NONE, "epsilon") \
  X("SkipSimplifiedLayerNormalization", ms_skip_layer_norm, NULL, NONE, "epsilon")

// The table entry of com.microsoft op `op_type`, or NULL.
const vkp__onnx_op_t *vkp__onnx_ms_op_find(const char *op_type);

// Every mapper the table names.
#define VKP__ONNX_DECLARE_MAP(name, map, fold, ir, attrs) \
  vkp_status_t vkp__map_##map(vkp__onnx_ctx_t *ctx);
VKP__ONNX_OP_LIST(VKP__ONNX_DECLARE_MAP)
vkp_status_t vkp__map_ms_attention(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_bias_add(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_dynamic_quantize_matmul(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_matmul_integer_to_float(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_matmul_nbits(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_qlinear_binary(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_qlinear_concat(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_qlinear_pool(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_qlinear_unary(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_embed_layer_norm(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_group_query_attention(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_rotary_embedding(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_multi_head_attention(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_gelu(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_fused_conv(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_fused_matmul(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_quick_gelu(vkp__onnx_ctx_t *ctx);
vkp_status_t vkp__map_ms_skip_layer_norm(vkp__onnx_ctx_t *ctx);
#undef VKP__ONNX_DECLARE_MAP

// ---------------------------------------------------------------------------
// Helpers for mappers (onnx_ops.c)

// Attribute literals for vkp__onnx_emit.
vkp_attr_t vkp__onnx_a_int(const char *name, int64_t v);
vkp_attr_t vkp__onnx_a_float(const char *name, double v);
vkp_attr_t vkp__onnx_a_ints(const char *name, const int64_t *v, int32_t n);
// Outputs from index `used` on must be absent: vkpipe computes only the
// first `used` outputs.
vkp_status_t vkp__onnx_only_outputs(vkp__onnx_ctx_t *ctx, int32_t used)
    VKP_MUST_USE;
// The node's output as x's slices along `axis` where the 1-D `mask` is
// true: gather(x, reshape(non_zero(mask), [-1]), axis), a bounded value
// (Compress on a run-time condition, Slice with run-time starts/ends).
vkp_status_t vkp__onnx_emit_compress(vkp__onnx_ctx_t *ctx, int32_t x, int32_t mask,
                                     int64_t axis) VKP_MUST_USE;
// Emits `op` defining output 0 of the current node (and checks that no
// other output is used).
vkp_status_t vkp__onnx_emit_out(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                int32_t n_in, const int32_t *inputs,
                                int32_t n_attrs, const vkp_attr_t *attrs)
    VKP_MUST_USE;
// Emits `op` defining ONNX value `out` (NULL: an internal value) and binds
// it; *out_value gets the IR value.
vkp_status_t vkp__onnx_emit_bind(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                 int32_t n_in, const int32_t *in,
                                 int32_t n_attrs, const vkp_attr_t *attrs,
                                 const char *out, int32_t *out_value)
    VKP_MUST_USE;
// Concatenates IR values in[0..n) along `axis` (in is scratch: overwritten)
// into ONNX value `out` (bound; NULL: internal); any n >= 1.
vkp_status_t vkp__onnx_concat_values(vkp__onnx_ctx_t *ctx, int32_t n,
                                     int32_t *in, int64_t axis,
                                     const char *out, int32_t *out_value)
    VKP_MUST_USE;
// The IR value with index v.
const vkp_value_t *vkp__onnx_value(const vkp__onnx_ctx_t *ctx, int32_t v);
// A 1-D (or scalar) integer constant into `out` (at most `cap` entries).
vkp_status_t vkp__onnx_const_ints(const vkp__onnx_tensor_t *t,
                                  const char *what, int64_t *out, int32_t cap,
                                  int32_t *out_count) VKP_MUST_USE;
// A one-element numeric constant.
vkp_status_t vkp__onnx_const_scalar(const vkp__onnx_tensor_t *t,
                                    const char *what, double *out) VKP_MUST_USE;
// ConstantOfShape's `value` attribute (one element; absent: float32 0) into
// *out_value (release with vkp__onnx_tensor_deinit).
vkp_status_t vkp__onnx_fill_value(vkp__onnx_ctx_t *ctx, vkp__onnx_tensor_t *out_value)
    VKP_MUST_USE;
// A float32 scalar IR constant.
vkp_status_t vkp__onnx_scalar_const(vkp__onnx_ctx_t *ctx, double v,
                                    int32_t *out_value) VKP_MUST_USE;
// Explicit pads [begin..., end...] from auto_pad / pads for a 2-D window op
// over spatial dims `in` with kernel `k`, strides and dilations.
vkp_status_t vkp__onnx_window_pads(vkp__onnx_ctx_t *ctx, const int64_t *in,
                                   const int64_t *k, const int64_t *strides,
                                   const int64_t *dil, int64_t *pads)
    VKP_MUST_USE;
// An INTS attribute with exactly two entries (2-D), or `def` twice.
vkp_status_t vkp__onnx_attr_pair(vkp__onnx_ctx_t *ctx, const char *name,
                                 int64_t def, int64_t *out) VKP_MUST_USE;

// A shape vector computed at run time, read back at import
// (graph/onnx_shape_expr.c): each entry is a number (src < 0) or the
// run-time extent of bounded IR value `src` along its bounded axis.
typedef struct vkp__dim_expr_t {
  int64_t value;
  int32_t src;
} vkp__dim_expr_t;
typedef struct vkp__shape_expr_t {
  int32_t n;
  bool scalar;  // a rank-0 value (n == 1)
  vkp__dim_expr_t d[VKP_MAX_RANK];
} vkp__shape_expr_t;
// Reads IR value `value` (an int64/int32 vector of at most VKP_MAX_RANK
// entries) as a vkp__shape_expr_t through the nodes exporters build shapes
// with (Shape, Gather, Slice, Unsqueeze, Concat, Cast, Equal, Where, + - *
// by constants). False when some entry is neither known nor an extent.
bool vkp__onnx_shape_expr(const vkp__onnx_ctx_t *ctx, int32_t value,
                          vkp__shape_expr_t *out);
// The value whose kernel decided bounded value `value`'s run-time extent
// (non_zero, top_k, ...), found by walking back through ops that pass an
// extent on unchanged; two values with one origin have equal extents.
int32_t vkp__onnx_extent_origin(const vkp__onnx_ctx_t *ctx, int32_t value);
// When exactly one entry of `e` is an extent and the others are known sizes:
// emits output 0 of the current node as x broadcast to shape e (bounded like
// the extent's source) and sets *out_done; otherwise emits nothing.
vkp_status_t vkp__onnx_broadcast_to_expr(vkp__onnx_ctx_t *ctx, int32_t x,
                                         const vkp__shape_expr_t *e,
                                         bool *out_done) VKP_MUST_USE;

// When the scalar `e` is the run-time extent n of a bounded value: emits
// the int64 vector 0, 1, ..., n - 1, bounded like that value (NonZero of a
// true mask of n entries), into *out_value and sets *out_done; otherwise
// emits nothing.
vkp_status_t vkp__onnx_extent_iota(vkp__onnx_ctx_t *ctx, const vkp__shape_expr_t *e,
                                   int32_t *out_value, bool *out_done) VKP_MUST_USE;

#define VKP__ONNX_UNSUPPORTED(...) \
  vkp_status_make(VKP_STATUS_UNSUPPORTED, __VA_ARGS__)
#define VKP__ONNX_INVALID(...) \
  vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

#endif  // VKPIPE_GRAPH_ONNX_INTERNAL_H_
