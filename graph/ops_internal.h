// SPDX-License-Identifier: Apache-2.0
//
// Private parts of the op table shared by graph/ops.c (the table and its
// generic checks) and the per-family files graph/op_<family>.c, which hold
// each op's attribute schema, shape inference and reference kernel:
//
//   op_elementwise.c  arithmetic, functions, activations, cast, min/max/sum
//   op_logic.c        comparisons, boolean logic, where, bitwise ops
//   op_linalg.c       matmul, gemm, einsum, det
//   op_nn.c           convolution, pooling, max_unpool, normalisation, softmax
//   op_reduce.c       reductions
//   op_norm.c         log_softmax, hardmax, instance/group/lp/mean-variance
//                     normalisation, lrn
//   op_shape.c        reshape family, transpose, concat, slice
//   op_index.c        gather, gather_elements, gather_nd, scatter_elements,
//                     scatter_nd, one_hot (indices known at run time)
//   op_rnn.c          lstm, gru, rnn
//   op_loss.c         softmax cross entropy, negative log likelihood
//   op_quant.c        linear (de)quantization, integer matmul and conv
//   op_select.c       arg_max, arg_min, top_k, cum_sum
//   op_resample.c     pad, resize, depth/space moves, tile, expand, trilu,
//                     eye_like (index plans shared with the code
//                     generators: graph/resample.h)
//   op_signal.c       dft, stft (complex data as a trailing [re, im] dim)
//   op_sample.c       grid_sample, roi_align (coordinate rules shared with
//                     the cpu code generator: graph/sample.h)
//
// A schema lists the attributes an op takes, with their kind and, where the
// op has one, the default that validation writes in (vkp__op_infer fills
// defaults before calling the op's inference). Inference sees a node whose
// arity and attribute kinds are checked, whose defaults are filled and whose
// input 0 has one of the op's dtypes; it checks the rest, writes attributes
// in canonical form and sets every output's dtype and shape.
//
// A reference kernel (vkp_op_eval_fn) computes a validated node: inputs are
// borrowed (NULL for an omitted optional input), outputs are the node's
// n_outputs tensors, preallocated with the inferred dtypes and shapes, that
// alias no input. Kernels keep no state and accumulate in double.
#ifndef VKPIPE_GRAPH_OPS_INTERNAL_H_
#define VKPIPE_GRAPH_OPS_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "base/scalar.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"

typedef struct vkp__attr_spec_t {
  const char *name;  // NULL ends a list
  vkp_attr_kind_t kind;
  bool has_default;
  int64_t i;         // INT default
  double f;          // FLOAT default
  const char *s;     // STRING default
} vkp__attr_spec_t;

// Schema entries: without a default, and with one of each kind.
#define VKP__ATTR(name, kind) {name, VKP_ATTR_##kind, false, 0, 0.0, NULL}
#define VKP__ATTR_INT(name, v) {name, VKP_ATTR_INT, true, (v), 0.0, NULL}
#define VKP__ATTR_FLOAT(name, v) {name, VKP_ATTR_FLOAT, true, 0, (v), NULL}
#define VKP__ATTR_STRING(name, v) {name, VKP_ATTR_STRING, true, 0, 0.0, (v)}
#define VKP__ATTR_END {NULL, VKP_ATTR_INT, false, 0, 0.0, NULL}

typedef vkp_status_t (*vkp__infer_fn)(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out);

// Every schema, inference function and kernel the table names (duplicate
// declarations of shared ones are harmless).
#define VKP__OP_DECLARE(e, name, imin, imax, omin, omax, attrs, infer, eval, \
                        ...)                                                 \
  extern const vkp__attr_spec_t vkp__attrs_##attrs[];                        \
  vkp_status_t vkp__infer_##infer(vkp_graph_t *g, vkp_node_t *n,             \
                                  vkp_value_t *out);                         \
  vkp_status_t vkp__eval_##eval(const vkp_node_t *n,                         \
                                const vkp_tensor_t *const *in,               \
                                vkp_tensor_t *out);
VKP_OP_LIST(VKP__OP_DECLARE)
#undef VKP__OP_DECLARE

// Bounded values (graph/op_dynamic.c): after an op's inference, checks that
// the op takes the node's bounded inputs and marks its bounded outputs.
vkp_status_t vkp__bounded_infer(vkp_graph_t *g, vkp_node_t *n) VKP_MUST_USE;
// "[2, <=12]": a value's shape with its bound marked.
const char *vkp__fmt_bounded(const vkp_value_t *v, char *buf, size_t size);

#define VKP__ERR(...) vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

// ---------------------------------------------------------------------------
// Inference helpers (graph/ops.c)

// Input `i` of `n`, or NULL when omitted or past the end.
const vkp_value_t *vkp__in(const vkp_graph_t *g, const vkp_node_t *n, int32_t i);
// Output `i` of `n`.
vkp_value_t *vkp__out(vkp_graph_t *g, const vkp_node_t *n, int32_t i);
// Sets a value's dtype and shape (known from now on).
void vkp__set_out(vkp_value_t *out, vkp_dtype_t dtype, int32_t rank,
                  const int64_t *shape);
// "[1, 3, 224, 224]" of a value into buf.
const char *vkp__fmt(const vkp_value_t *v, char *buf, size_t size);
// UNSUPPORTED unless v's dtype is in `set`; `what` names v ("input", "bias").
vkp_status_t vkp__need_dtypes(const vkp_value_t *v, const char *what,
                              vkp_dtype_set_t set) VKP_MUST_USE;
// INVALID_ARGUMENT unless a and b have the same dtype.
vkp_status_t vkp__same_dtype(const vkp_value_t *a, const vkp_value_t *b)
    VKP_MUST_USE;
// Writes an attribute (replacing it).
vkp_status_t vkp__set_int(vkp_node_t *n, const char *name, int64_t v) VKP_MUST_USE;
vkp_status_t vkp__set_float(vkp_node_t *n, const char *name, double v) VKP_MUST_USE;
vkp_status_t vkp__set_ints(vkp_node_t *n, const char *name, int32_t count,
                           const int64_t *v) VKP_MUST_USE;
vkp_status_t vkp__set_string(vkp_node_t *n, const char *name, const char *v)
    VKP_MUST_USE;
// Normalises axis `a` against `rank` (-rank..rank-1, or ..rank when
// `inclusive`).
vkp_status_t vkp__norm_axis(int64_t a, int32_t rank, bool inclusive,
                            const char *what, int64_t *out) VKP_MUST_USE;
// Normalises an axes list against `rank`: positive, sorted, no duplicates.
vkp_status_t vkp__norm_axes(const int64_t *axes, int32_t count, int32_t rank,
                            int64_t *out) VKP_MUST_USE;
// Reads an INTS attribute that must have `count` entries (or be absent:
// then `defaults` is written in; NULL defaults: required).
vkp_status_t vkp__ints_exact(vkp_node_t *n, const char *name, int32_t count,
                             const int64_t *defaults, const int64_t **out)
    VKP_MUST_USE;
// NumPy broadcast of shapes a and b into out (rank *out_rank); the error
// names both.
vkp_status_t vkp__broadcast_shapes(const vkp_value_t *a, const vkp_value_t *b,
                                   int32_t *out_rank, int64_t *out_shape)
    VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Kernel helpers (graph/ops.c)

// Row-major element strides of `t`.
void vkp__strides(const vkp_tensor_t *t, int64_t *strides);
// Strides of `t` seen through NumPy broadcasting to an `out_rank` shape:
// missing leading dims and dims of size 1 get stride 0.
void vkp__broadcast_strides(const vkp_tensor_t *t, int32_t out_rank,
                            int64_t *strides);
// Advances the multi-index `idx` over `shape` (row-major); false after the
// last index (idx is then all zeros again).
bool vkp__next_index(int32_t rank, const int64_t *shape, int64_t *idx);
// Sum of idx[d] * strides[d].
int64_t vkp__dot(int32_t rank, const int64_t *idx, const int64_t *strides);
// Product of shape[begin..end).
int64_t vkp__prod(const int64_t *shape, int32_t begin, int32_t end);
// The dims of `x` split into those kept (walked by the output) and those
// named by `axes` (sorted, positive: walked for every output element), each
// with its shape and row-major strides in x.
typedef struct vkp__axis_split_t {
  int32_t n_kept, n_red;
  int64_t kept_shape[VKP_MAX_RANK], kept_strides[VKP_MAX_RANK];
  int64_t red_shape[VKP_MAX_RANK], red_strides[VKP_MAX_RANK];
} vkp__axis_split_t;
void vkp__split_axes(const vkp_tensor_t *x, const int64_t *axes, int32_t n_axes,
                     vkp__axis_split_t *out);

// Unique over the slices of x along `axis` (has_axis) or over all its
// elements, as ONNX Unique defines it (NaN sorts last and equals NaN): n
// slices, m distinct ones; first[g] and count[g] per distinct slice g (in
// sorted order, or in order of first occurrence when !sorted), group[j] per
// slice j; x viewed as [outer, n, inner]. Used by the unique op and by the
// importer's fold of a constant Unique. Release with vkp__unique_free.
typedef struct vkp__unique_t {
  int64_t n, m, outer, inner;
  int64_t *first, *count, *group;
  int64_t *buf;  // owns the three arrays
} vkp__unique_t;
vkp_status_t vkp__unique_compute(const vkp_tensor_t *x, bool has_axis, int32_t axis,
                                 bool sorted, vkp__unique_t *out_unique);
void vkp__unique_free(vkp__unique_t *unique);
// Element i of t through double / int64, and stores (base/scalar.h). The
// common dtypes are read inline (a predictable branch per element); the
// rest go through the shared conversions. Kernels whose inner loops read
// elements many times (matmul, conv) also have a float32 path with plain
// loads (VKP__F32_OR_ANY).
static inline double vkp__get_f(const vkp_tensor_t *t, int64_t i) {
  if (t->dtype == VKP_DTYPE_FLOAT32) return ((const float *)t->data)[i];
  return vkp__scalar_get_f(t->dtype, t->data, (size_t)i);
}
static inline int64_t vkp__get_i(const vkp_tensor_t *t, int64_t i) {
  if (t->dtype == VKP_DTYPE_INT64) return ((const int64_t *)t->data)[i];
  return vkp__scalar_get_i(t->dtype, t->data, (size_t)i);
}
static inline void vkp__put_f(vkp_tensor_t *t, int64_t i, double v) {
  if (t->dtype == VKP_DTYPE_FLOAT32) {
    ((float *)t->data)[i] = (float)v;
    return;
  }
  vkp__scalar_set_f(t->dtype, t->data, (size_t)i, v);
}
static inline void vkp__put_i(vkp_tensor_t *t, int64_t i, int64_t v) {
  if (t->dtype == VKP_DTYPE_INT64) {
    ((int64_t *)t->data)[i] = v;
    return;
  }
  vkp__scalar_set_i(t->dtype, t->data, (size_t)i, v);
}

// The hot loops of matmul and convolution are written once, as a macro
// taking a LOAD(t, i) macro, and expanded twice: with plain float loads when
// every operand is float32, through vkp__get_f otherwise (no allocation, no
// per-element dtype test in the common case).
#define VKP__LOAD_F32(t, i) ((double)((const float *)(t)->data)[i])
#define VKP__LOAD_ANY(t, i) vkp__get_f((t), (i))
#define VKP__F32_OR_ANY(all_f32, LOOP) \
  do {                                 \
    if (all_f32) {                     \
      LOOP(VKP__LOAD_F32)              \
    } else {                           \
      LOOP(VKP__LOAD_ANY)              \
    }                                  \
  } while (0)

// ---------------------------------------------------------------------------
// Elementwise helpers (graph/op_elementwise.c), for ops with many inputs

// NumPy broadcast of the shapes of inputs `first`.. of `n` (omitted ones
// skipped) into out (rank *out_rank); the error names the input at fault.
vkp_status_t vkp__broadcast_inputs(const vkp_graph_t *g, const vkp_node_t *n,
                                   int32_t first, int32_t *out_rank,
                                   int64_t *out_shape) VKP_MUST_USE;
// INVALID_ARGUMENT unless inputs `first`.. of `n` (omitted ones skipped)
// have input `first`'s dtype.
vkp_status_t vkp__same_dtypes(const vkp_graph_t *g, const vkp_node_t *n,
                              int32_t first) VKP_MUST_USE;
// Compares element ia of a with element ib of b (same dtype), exactly for
// every dtype: -1, 0 or 1 as a <, ==, > b; 2 when unordered (a NaN).
int vkp__compare_elems(const vkp_tensor_t *a, int64_t ia, const vkp_tensor_t *b,
                       int64_t ib);
// Copies element `from` of src into element `to` of dst (same dtype).
void vkp__copy_elem(vkp_tensor_t *dst, int64_t to, const vkp_tensor_t *src,
                    int64_t from);

#endif  // VKPIPE_GRAPH_OPS_INTERNAL_H_
