// SPDX-License-Identifier: Apache-2.0
// Comparisons, boolean logic, where, bitwise ops and float classes, with
// NumPy broadcasting. Bool results are bytes holding 0 or 1. Schemas,
// inference and reference kernels.
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas

const vkp__attr_spec_t vkp__attrs_bit_shift[] = {VKP__ATTR("direction", STRING),
                                                 VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_is_inf[] = {
    VKP__ATTR_INT("detect_negative", 1), VKP__ATTR_INT("detect_positive", 1),
    VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

// Two inputs of one dtype, broadcast; a bool result.
vkp_status_t vkp__infer_compare(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(a, b, &rank, shape));
  vkp__set_out(out, VKP_DTYPE_BOOL, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_bit_shift(vkp_graph_t *g, vkp_node_t *n,
                                  vkp_value_t *out) {
  const char *dir = vkp_node_string(n, "direction");
  if (!dir) return VKP__ERR("attribute 'direction' is required");
  if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
    return VKP__ERR("attribute 'direction' is '%s'; expected 'LEFT' or 'RIGHT'",
                    dir);
  return vkp__infer_broadcast(g, n, out);
}

// where(condition, X, Y): X and Y share a dtype (any); all three broadcast.
vkp_status_t vkp__infer_where(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  VKP_RETURN_IF_ERROR(vkp__same_dtypes(g, n, 1));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_inputs(g, n, 0, &rank, shape));
  vkp__set_out(out, vkp__in(g, n, 1)->dtype, rank, shape);
  return NULL;
}

// is_nan, is_inf: a bool of X's shape.
vkp_status_t vkp__infer_classify(vkp_graph_t *g, vkp_node_t *n,
                                 vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (n->op == VKP_OP_IS_INF) {
    static const char *const flags[2] = {"detect_negative", "detect_positive"};
    for (int i = 0; i < 2; ++i) {
      int64_t v = vkp_node_int(n, flags[i]);
      if (v != 0 && v != 1)
        return VKP__ERR("attribute '%s' is %lld; expected 0 or 1", flags[i],
                        (long long)v);
    }
  }
  vkp__set_out(out, VKP_DTYPE_BOOL, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

// Calls `body` for every output element i with ia, ib: the offsets of the
// two broadcast operands.
#define VKP__BINARY_LOOP(a, b, out, body)                              \
  do {                                                                 \
    int64_t sa_[VKP_MAX_RANK], sb_[VKP_MAX_RANK], idx_[VKP_MAX_RANK] = {0}; \
    vkp__broadcast_strides((a), (out)->rank, sa_);                     \
    vkp__broadcast_strides((b), (out)->rank, sb_);                     \
    int64_t count_ = (int64_t)vkp_tensor_numel(out);                   \
    for (int64_t i = 0; i < count_; ++i) {                             \
      int64_t ia = vkp__dot((out)->rank, idx_, sa_);                   \
      int64_t ib = vkp__dot((out)->rank, idx_, sb_);                   \
      body;                                                            \
      vkp__next_index((out)->rank, (out)->shape, idx_);                \
    }                                                                  \
  } while (0)

// Exact for every dtype; NaN compares unequal and unordered to everything.
vkp_status_t vkp__eval_compare(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1];
  VKP__BINARY_LOOP(a, b, out, {
    int c = vkp__compare_elems(a, ia, b, ib);
    bool r = false;
    switch (n->op) {
      case VKP_OP_EQUAL: r = c == 0; break;
      case VKP_OP_LESS: r = c == -1; break;
      case VKP_OP_GREATER: r = c == 1; break;
      case VKP_OP_LESS_OR_EQUAL: r = c == -1 || c == 0; break;
      case VKP_OP_GREATER_OR_EQUAL: r = c == 1 || c == 0; break;
      default: break;  // not reached: the table routes only these here
    }
    vkp__put_i(out, i, r);
  });
  return NULL;
}

// A shift by the dtype's width or more gives 0 (C leaves it undefined).
static uint64_t vkp__shift(bool left, uint64_t x, uint64_t by, int bits) {
  if (by >= (uint64_t)bits) return 0;
  return left ? x << by : x >> by;
}

// and/or/xor on bools and the bitwise ops on the 64-bit patterns (a
// narrower dtype keeps the low bits on store, which are the right ones).
vkp_status_t vkp__eval_bitwise(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1];
  bool left = n->op == VKP_OP_BIT_SHIFT &&
              strcmp(vkp_node_string(n, "direction"), "LEFT") == 0;
  int bits = (int)vkp_dtype_size(a->dtype) * 8;
  VKP__BINARY_LOOP(a, b, out, {
    uint64_t x = vkp__scalar_get_u(a->dtype, a->data, (size_t)ia);
    uint64_t y = vkp__scalar_get_u(b->dtype, b->data, (size_t)ib);
    uint64_t r = 0;
    switch (n->op) {
      case VKP_OP_AND: case VKP_OP_BITWISE_AND: r = x & y; break;
      case VKP_OP_OR: case VKP_OP_BITWISE_OR: r = x | y; break;
      case VKP_OP_XOR: case VKP_OP_BITWISE_XOR: r = x ^ y; break;
      case VKP_OP_BIT_SHIFT: r = vkp__shift(left, x, y, bits); break;
      default: break;  // not reached
    }
    vkp__put_i(out, i, (int64_t)r);
  });
  return NULL;
}

// not (bool) and bitwise_not (integers).
vkp_status_t vkp__eval_invert(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(out);
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = vkp__get_i(x, i);
    vkp__put_i(out, i, n->op == VKP_OP_NOT ? v == 0 : (int64_t)~(uint64_t)v);
  }
  return NULL;
}

// Copies the chosen element's bytes: any dtype, NaN payloads included.
vkp_status_t vkp__eval_where(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  (void)n;
  int64_t s[3][VKP_MAX_RANK], idx[VKP_MAX_RANK] = {0};
  for (int k = 0; k < 3; ++k) vkp__broadcast_strides(in[k], out->rank, s[k]);
  int64_t count = (int64_t)vkp_tensor_numel(out);
  for (int64_t i = 0; i < count; ++i) {
    bool pick_x = vkp__get_i(in[0], vkp__dot(out->rank, idx, s[0])) != 0;
    int k = pick_x ? 1 : 2;
    vkp__copy_elem(out, i, in[k], vkp__dot(out->rank, idx, s[k]));
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

vkp_status_t vkp__eval_classify(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  bool neg = true, pos = true;
  if (n->op == VKP_OP_IS_INF) {
    neg = vkp_node_int(n, "detect_negative") != 0;
    pos = vkp_node_int(n, "detect_positive") != 0;
  }
  int64_t count = (int64_t)vkp_tensor_numel(out);
  for (int64_t i = 0; i < count; ++i) {
    double v = vkp__get_f(x, i);
    bool r = n->op == VKP_OP_IS_NAN ? isnan(v) : isinf(v) && (v < 0 ? neg : pos);
    vkp__put_i(out, i, r);
  }
  return NULL;
}
