// SPDX-License-Identifier: Apache-2.0
// Selection along one axis: arg_max / arg_min (ONNX ArgMax, ArgMin), top_k
// (TopK) and cum_sum (CumSum). Indices are int64.
//
// Every op here views its input as [outer, n, inner] around "axis" and
// works on each of the outer * inner rows of n elements. Values are
// compared exactly for every dtype (uint64 and int64 included); NaN counts
// as larger than every number, which is where NumPy's argmax, argmin and
// sort put it: arg_max and arg_min both pick a NaN, top_k with largest puts
// NaNs first and with largest 0 last. Ties go to the lower index (ONNX's
// TopK rule, NumPy's argmax) unless arg_* has select_last_index.
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"

// The [outer, n, inner] view of a shape around `axis`.
static void vkp__axis_split(int32_t rank, const int64_t *shape, int64_t axis,
                            int64_t *outer, int64_t *n, int64_t *inner) {
  *outer = vkp__prod(shape, 0, (int32_t)axis);
  *n = shape[axis];
  *inner = vkp__prod(shape, (int32_t)axis + 1, rank);
}

// Reads the node's "axis", checks it against input `x` and writes it back
// non-negative.
static vkp_status_t vkp__canonical_axis(vkp_node_t *n, const vkp_value_t *x,
                                        int64_t *out_axis) {
  if (x->rank < 1)
    return VKP__ERR("input '%s' is a scalar: %s needs an axis", x->name,
                    vkp_op_name(n->op));
  VKP_RETURN_IF_ERROR(
      vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false, "axis", out_axis));
  return vkp__set_int(n, "axis", *out_axis);
}

// Writes INT attribute `name` back as 0 or 1.
static vkp_status_t vkp__canonical_flag(vkp_node_t *n, const char *name) {
  return vkp__set_int(n, name, vkp_node_int(n, name) != 0);
}

// -1, 0 or 1 as element a of x sorts before, with or after element b in
// ascending order, NaN after every number and equal to another NaN.
static int vkp__order(const vkp_tensor_t *x, int64_t a, int64_t b) {
  int c = vkp__compare_elems(x, a, x, b);
  if (c != 2) return c;
  bool a_nan = vkp__compare_elems(x, a, x, a) == 2;
  bool b_nan = vkp__compare_elems(x, b, x, b) == 2;
  return a_nan == b_nan ? 0 : a_nan ? 1 : -1;
}

// ---------------------------------------------------------------------------
// arg_max, arg_min

const vkp__attr_spec_t vkp__attrs_arg[] = {
    VKP__ATTR_INT("axis", 0), VKP__ATTR_INT("keepdims", 1),
    VKP__ATTR_INT("select_last_index", 0), VKP__ATTR_END};

vkp_status_t vkp__infer_arg(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__canonical_axis(n, x, &axis));
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "keepdims"));
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "select_last_index"));
  if (x->shape[axis] == 0)
    return VKP__ERR("axis %lld of input '%s' has length 0: %s has no element "
                    "to pick",
                    (long long)axis, x->name, vkp_op_name(n->op));
  bool keep = vkp_node_int(n, "keepdims") != 0;
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < x->rank; ++d) {
    if (d != axis) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  vkp__set_out(out, VKP_DTYPE_INT64, rank, shape);
  return NULL;
}

vkp_status_t vkp__eval_arg(const vkp_node_t *n, const vkp_tensor_t *const *in,
                           vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t outer, len, inner;
  vkp__axis_split(x->rank, x->shape, vkp_node_int(n, "axis"), &outer, &len, &inner);
  // The wanted side of the order, and whether a tie moves the pick on.
  int want = n->op == VKP_OP_ARG_MAX ? 1 : -1;
  bool last = vkp_node_int(n, "select_last_index") != 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i, best = 0;
      for (int64_t k = 1; k < len; ++k) {
        int64_t a = base + k * inner, b = base + best * inner;
        int c = vkp__order(x, a, b);
        // NaN is picked by both ops (NumPy's argmax and argmin).
        bool a_nan = vkp__compare_elems(x, a, x, a) == 2;
        bool b_nan = vkp__compare_elems(x, b, x, b) == 2;
        if (a_nan != b_nan) c = a_nan ? want : -want;
        if (c == want || (c == 0 && last)) best = k;
      }
      vkp__put_i(out, o * inner + i, best);
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// top_k

const vkp__attr_spec_t vkp__attrs_top_k[] = {
    VKP__ATTR("k", INT), VKP__ATTR_INT("axis", -1), VKP__ATTR_INT("largest", 1),
    VKP__ATTR_INT("sorted", 1), VKP__ATTR_END};

vkp_status_t vkp__infer_top_k(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  // K known at run time (input 1, one integer): the outputs are bounded by
  // the axis length and their extent is min(K, length) (docs/onnx.md,
  // "Data-dependent output shapes").
  const vkp_value_t *k_in = vkp__in(g, n, 1);
  if (k_in && vkp_node_attr(n, "k"))
    return VKP__ERR("takes k as the attribute or as input 1, not both");
  if (!k_in && !vkp_node_attr(n, "k")) return VKP__ERR("attribute 'k' is required");
  if (k_in) {
    VKP_RETURN_IF_ERROR(vkp__need_dtypes(k_in, "k", VKP_OP_DTYPES_SIGNED_INT));
    if (vkp__prod(k_in->shape, 0, k_in->rank) != 1)
      return VKP__ERR("input 1 (k) '%s' must hold one value", k_in->name);
  }
  int64_t axis, k = vkp_node_int(n, "k");
  VKP_RETURN_IF_ERROR(vkp__canonical_axis(n, x, &axis));
  if (k_in) k = x->shape[axis];
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "largest"));
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "sorted"));
  // Over a data-dependent axis K is clamped to the run-time extent
  // (docs/onnx.md, "Data-dependent output shapes").
  bool clamp = x->bounded && x->bounded_axis == axis;
  if (clamp && k > x->shape[axis]) k = x->shape[axis];
  if (k < 0 || k > x->shape[axis])
    return VKP__ERR("k %lld out of range: axis %lld of input '%s' has %lld "
                    "elements",
                    (long long)k, (long long)axis, x->name,
                    (long long)x->shape[axis]);
  int64_t shape[VKP_MAX_RANK];
  memcpy(shape, x->shape, sizeof shape);
  shape[axis] = k;
  vkp__set_out(out, x->dtype, x->rank, shape);
  vkp__set_out(vkp__out(g, n, 1), VKP_DTYPE_INT64, x->rank, shape);
  for (int32_t i = 0; k_in && i < 2; ++i) {
    vkp__out(g, n, i)->bounded = true;
    vkp__out(g, n, i)->bounded_axis = (int32_t)axis;
  }
  return NULL;
}

// Whether element a of x goes before element b in top_k's output (b a
// later index than a is ordered only by value, so ties keep index order).
static bool vkp__top_first(const vkp_tensor_t *x, int64_t a, int64_t b,
                           bool largest) {
  int c = vkp__order(x, a, b);
  return largest ? c > 0 : c < 0;
}

vkp_status_t vkp__eval_top_k(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t outer, len, inner, axis = vkp_node_int(n, "axis");
  int64_t k = out[0].shape[axis];  // the attribute, or clamped to a bounded x
  vkp__axis_split(x->rank, x->shape, axis, &outer, &len, &inner);
  bool largest = vkp_node_int(n, "largest") != 0;
  if (len == 0 || outer * inner == 0) return NULL;
  // A stable merge sort of each row's indices (ping-ponging between two
  // halves of one buffer): ties keep their index order, as ONNX asks.
  int64_t *buf = vkp__malloc(2 * (size_t)len * sizeof(int64_t));
  if (!buf) return VKP_OOM("top_k row");
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      int64_t *src = buf, *dst = buf + len;
      for (int64_t j = 0; j < len; ++j) src[j] = j;
      for (int64_t width = 1; width < len; width *= 2) {
        for (int64_t lo = 0; lo < len; lo += 2 * width) {
          int64_t mid = lo + width < len ? lo + width : len;
          int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
          int64_t a = lo, b = mid, w = lo;
          while (a < mid && b < hi)
            dst[w++] = vkp__top_first(x, base + src[b] * inner, base + src[a] * inner,
                                      largest)
                           ? src[b++]
                           : src[a++];
          while (a < mid) dst[w++] = src[a++];
          while (b < hi) dst[w++] = src[b++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
      }
      for (int64_t j = 0; j < k; ++j) {
        int64_t at = o * k * inner + j * inner + i;
        vkp__copy_elem(&out[0], at, x, base + src[j] * inner);
        vkp__put_i(&out[1], at, src[j]);
      }
    }
  }
  vkp__free(buf);
  return NULL;
}

// ---------------------------------------------------------------------------
// cum_sum

const vkp__attr_spec_t vkp__attrs_cum_sum[] = {
    VKP__ATTR("axis", INT), VKP__ATTR_INT("exclusive", 0),
    VKP__ATTR_INT("reverse", 0), VKP__ATTR_END};

vkp_status_t vkp__infer_cum_sum(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (!vkp_node_attr(n, "axis")) return VKP__ERR("attribute 'axis' is required");
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__canonical_axis(n, x, &axis));
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "exclusive"));
  VKP_RETURN_IF_ERROR(vkp__canonical_flag(n, "reverse"));
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// Float data sums in double, rounded once per output element; integers sum
// exactly, wrapping like fixed-width integers.
vkp_status_t vkp__eval_cum_sum(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t outer, len, inner;
  vkp__axis_split(x->rank, x->shape, vkp_node_int(n, "axis"), &outer, &len, &inner);
  bool exclusive = vkp_node_int(n, "exclusive") != 0;
  bool reverse = vkp_node_int(n, "reverse") != 0;
  bool is_float = vkp_dtype_is_float(x->dtype);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0.0;
      uint64_t iacc = 0;
      for (int64_t j = 0; j < len; ++j) {
        int64_t at = o * len * inner + (reverse ? len - 1 - j : j) * inner + i;
        if (is_float) {
          double v = vkp__get_f(x, at);
          if (!exclusive) acc += v;
          vkp__put_f(out, at, acc);
          if (exclusive) acc += v;
        } else {
          uint64_t v = (uint64_t)vkp__get_i(x, at);
          if (!exclusive) iacc += v;
          vkp__put_i(out, at, (int64_t)iacc);
          if (exclusive) iacc += v;
        }
      }
    }
  }
  return NULL;
}
