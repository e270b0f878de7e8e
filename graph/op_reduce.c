// SPDX-License-Identifier: Apache-2.0
// Reductions over a set of axes (ONNX Reduce*): sum, mean, max, min, prod,
// l1, l2, log_sum, log_sum_exp, sum_square.
//
// Float data is reduced in double and rounded once. Integer (and bool) data
// is reduced exactly where the result is an integer by nature (sum, prod,
// l1, sum_square wrap around like NumPy's fixed-width integers; max and min
// compare exactly, uint64 included); mean, l2, log_sum and log_sum_exp of
// integers are computed in double and truncated toward zero, which is what
// ONNX's reference (NumPy, then astype) gives. An empty reduction yields the
// identity of the operation: 0 for sum, l1, l2 and sum_square, 1 for prod,
// -inf for log_sum and log_sum_exp (log 0), NaN for mean (0 / 0, as in
// NumPy), and for max / min -inf / +inf, or for integers the smallest /
// largest value of the dtype (ONNX opset 18).
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_reduce[] = {
    VKP__ATTR("axes", INTS), VKP__ATTR_INT("keepdims", 1), VKP__ATTR_END};

vkp_status_t vkp__infer_reduce(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  if (count == 0) {  // empty: reduce over every axis
    count = x->rank;
    for (int32_t i = 0; i < count; ++i) norm[i] = i;
  } else {
    VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  bool keep = vkp_node_int(n, "keepdims") != 0;
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    bool reduced = j < count && norm[j] == d;
    if (reduced) ++j;
    if (!reduced) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

// The reduced elements of one output element: `n` offsets from `base`,
// walked through the multi-index `idx` over `shape` / `strides`.
typedef struct vkp__reduce_walk_t {
  const vkp_tensor_t *x;
  int64_t base, n;
  int32_t rank;
  const int64_t *shape, *strides;
} vkp__reduce_walk_t;

static double vkp__reduce_float(vkp_op_t op, const vkp__reduce_walk_t *w) {
  int64_t idx[VKP_MAX_RANK] = {0};
  double acc = op == VKP_OP_REDUCE_PROD ? 1.0
               : op == VKP_OP_REDUCE_MAX || op == VKP_OP_REDUCE_LOG_SUM_EXP ? -INFINITY
               : op == VKP_OP_REDUCE_MIN ? INFINITY
                                         : 0.0;
  for (int64_t r = 0; r < w->n; ++r) {
    double v = vkp__get_f(w->x, w->base + vkp__dot(w->rank, idx, w->strides));
    vkp__next_index(w->rank, w->shape, idx);
    switch (op) {
      case VKP_OP_REDUCE_MAX:  // NaN wins, as in NumPy
        if (!isnan(acc) && (isnan(v) || v > acc)) acc = v;
        break;
      case VKP_OP_REDUCE_MIN:
        if (!isnan(acc) && (isnan(v) || v < acc)) acc = v;
        break;
      case VKP_OP_REDUCE_LOG_SUM_EXP:  // first pass: the max
        if (!isnan(acc) && (isnan(v) || v > acc)) acc = v;
        break;
      case VKP_OP_REDUCE_PROD: acc *= v; break;
      case VKP_OP_REDUCE_L1: acc += fabs(v); break;
      case VKP_OP_REDUCE_L2: case VKP_OP_REDUCE_SUM_SQUARE: acc += v * v; break;
      default: acc += v; break;  // sum, mean, log_sum
    }
  }
  switch (op) {
    case VKP_OP_REDUCE_MEAN: return w->n ? acc / (double)w->n : NAN;
    case VKP_OP_REDUCE_L2: return sqrt(acc);
    case VKP_OP_REDUCE_LOG_SUM: return log(acc);
    case VKP_OP_REDUCE_LOG_SUM_EXP: {
      // log(sum(exp(v - max))) + max; infinities and NaN pass through.
      if (!isfinite(acc)) return acc;
      double mx = acc, sum = 0.0;
      memset(idx, 0, sizeof idx);
      for (int64_t r = 0; r < w->n; ++r) {
        sum += exp(vkp__get_f(w->x, w->base + vkp__dot(w->rank, idx, w->strides)) - mx);
        vkp__next_index(w->rank, w->shape, idx);
      }
      return mx + log(sum);
    }
    default: return acc;
  }
}

// The smallest (or largest) value of an integer or bool dtype, as the
// int64 whose low bits store it.
static int64_t vkp__int_limit(vkp_dtype_t dt, bool largest) {
  int bits = (int)vkp_dtype_size(dt) * 8;
  if (dt == VKP_DTYPE_BOOL) return largest ? 1 : 0;
  if (vkp_dtype_kind(dt) == VKP_DTYPE_KIND_UINT)  // uint64's: all ones
    return largest ? (bits == 64 ? -1 : (int64_t)(((uint64_t)1 << bits) - 1)) : 0;
  uint64_t top = (uint64_t)1 << (bits - 1);
  return largest ? (int64_t)(top - 1) : -(int64_t)(top - 1) - 1;
}

// Sum, prod, l1, sum_square, max and min of integers, exactly (wrapping
// through uint64 like fixed-width integers).
static int64_t vkp__reduce_int(vkp_op_t op, const vkp__reduce_walk_t *w) {
  vkp_dtype_t dt = w->x->dtype;
  bool u64 = dt == VKP_DTYPE_UINT64;
  int64_t idx[VKP_MAX_RANK] = {0};
  uint64_t acc = op == VKP_OP_REDUCE_PROD ? 1u : 0u;
  if (op == VKP_OP_REDUCE_MAX) acc = (uint64_t)vkp__int_limit(dt, false);
  if (op == VKP_OP_REDUCE_MIN) acc = (uint64_t)vkp__int_limit(dt, true);
  for (int64_t r = 0; r < w->n; ++r) {
    int64_t v = vkp__get_i(w->x, w->base + vkp__dot(w->rank, idx, w->strides));
    vkp__next_index(w->rank, w->shape, idx);
    uint64_t uv = (uint64_t)v;
    switch (op) {
      case VKP_OP_REDUCE_MAX:
        if (u64 ? uv > acc : v > (int64_t)acc) acc = uv;
        break;
      case VKP_OP_REDUCE_MIN:
        if (u64 ? uv < acc : v < (int64_t)acc) acc = uv;
        break;
      case VKP_OP_REDUCE_PROD: acc *= uv; break;
      case VKP_OP_REDUCE_L1: acc += v < 0 && !u64 ? 0u - uv : uv; break;
      case VKP_OP_REDUCE_SUM_SQUARE: acc += uv * uv; break;
      default: acc += uv; break;  // sum
    }
  }
  return (int64_t)acc;
}

vkp_status_t vkp__eval_reduce(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *axes;
  int32_t n_axes = vkp_node_attr_ints(n, "axes", &axes);  // sorted, positive
  vkp__axis_split_t sp;
  vkp__split_axes(x, axes, n_axes, &sp);
  int64_t n_out = vkp__prod(sp.kept_shape, 0, sp.n_kept);
  vkp__reduce_walk_t w = {.x = x, .n = vkp__prod(sp.red_shape, 0, sp.n_red),
                          .rank = sp.n_red, .shape = sp.red_shape, .strides = sp.red_strides};
  bool exact_int = !vkp_dtype_is_float(x->dtype) &&
                   (n->op == VKP_OP_REDUCE_SUM || n->op == VKP_OP_REDUCE_PROD ||
                    n->op == VKP_OP_REDUCE_L1 || n->op == VKP_OP_REDUCE_SUM_SQUARE ||
                    n->op == VKP_OP_REDUCE_MAX || n->op == VKP_OP_REDUCE_MIN);
  int64_t kidx[VKP_MAX_RANK] = {0};
  for (int64_t o = 0; o < n_out; ++o) {
    w.base = vkp__dot(sp.n_kept, kidx, sp.kept_strides);
    if (exact_int) vkp__put_i(out, o, vkp__reduce_int(n->op, &w));
    else vkp__put_f(out, o, vkp__reduce_float(n->op, &w));
    vkp__next_index(sp.n_kept, sp.kept_shape, kidx);
  }
  return NULL;
}
