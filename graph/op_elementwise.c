// SPDX-License-Identifier: Apache-2.0
// Elementwise ops: arithmetic with NumPy broadcasting, functions and
// activations, cast. Schemas, inference and reference kernels.
#include <float.h>
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas

const vkp__attr_spec_t vkp__attrs_none[] = {VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_leaky_relu[] = {
    VKP__ATTR_FLOAT("alpha", 0.01), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_clip[] = {
    VKP__ATTR_FLOAT("min", -FLT_MAX), VKP__ATTR_FLOAT("max", FLT_MAX),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_gelu[] = {
    VKP__ATTR_STRING("approximate", "none"), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_cast[] = {VKP__ATTR("to", STRING),
                                            VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

vkp_status_t vkp__infer_unary(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (n->op == VKP_OP_GELU) {
    const char *ap = vkp_node_string(n, "approximate");
    if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0)
      return VKP__ERR("attribute 'approximate' is '%s'; expected 'none' or "
                      "'tanh'",
                      ap);
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_broadcast(vkp_graph_t *g, vkp_node_t *n,
                                  vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(a, b, &rank, shape));
  vkp__set_out(out, a->dtype, rank, shape);
  return NULL;
}

// pow: the exponent may have any numeric dtype (ONNX's T1); the result has
// the base's.
vkp_status_t vkp__infer_pow(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(b, "exponent", VKP_OP_DTYPES_NUMERIC));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(a, b, &rank, shape));
  vkp__set_out(out, a->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_cast(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const char *to = vkp_node_string(n, "to");
  vkp_dtype_t dtype;
  if (!to) return VKP__ERR("attribute 'to' is required");
  if (!vkp_dtype_parse(to, &dtype))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "attribute 'to' is '%s', not a dtype vkpipe has", to);
  vkp__set_out(out, dtype, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

static double vkp__unary_f(const vkp_node_t *n, double x) {
  switch (n->op) {
    case VKP_OP_SQRT: return sqrt(x);
    case VKP_OP_EXP: return exp(x);
    case VKP_OP_NEG: return -x;
    case VKP_OP_ABS: return fabs(x);
    case VKP_OP_RELU: return x < 0 ? 0.0 : x;
    case VKP_OP_LEAKY_RELU: return x < 0 ? vkp_node_float(n, "alpha") * x : x;
    case VKP_OP_CLIP: {
      double lo = vkp_node_float(n, "min"), hi = vkp_node_float(n, "max");
      double y = x < lo ? lo : x;  // NaN passes through; min > max gives max
      return y > hi ? hi : y;
    }
    case VKP_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case VKP_OP_TANH: return tanh(x);
    case VKP_OP_ERF: return erf(x);
    case VKP_OP_GELU:
      if (strcmp(vkp_node_string(n, "approximate"), "tanh") == 0) {
        const double k = sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
      }
      return 0.5 * x * (1.0 + erf(x / M_SQRT2));
    case VKP_OP_HARD_SWISH: {
      double t = x / 6.0 + 0.5;
      return x * (t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t);
    }
    default: return NAN;  // not reached: the table routes only these here
  }
}

// Integer forms of the unary ops whose dtypes include integers.
static int64_t vkp__unary_i(vkp_op_t op, int64_t x, bool is_unsigned) {
  switch (op) {
    case VKP_OP_NEG: return (int64_t)(0u - (uint64_t)x);
    case VKP_OP_ABS: return !is_unsigned && x < 0 ? (int64_t)(0u - (uint64_t)x) : x;
    case VKP_OP_RELU: return x < 0 ? 0 : x;
    default: return 0;  // not reached: the table admits integers only here
  }
}

vkp_status_t vkp__eval_unary(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(out);
  if (vkp_dtype_is_float(x->dtype)) {
    for (int64_t i = 0; i < count; ++i) vkp__put_f(out, i, vkp__unary_f(n, vkp__get_f(x, i)));
    return NULL;
  }
  bool is_unsigned = vkp_dtype_kind(x->dtype) == VKP_DTYPE_KIND_UINT;
  for (int64_t i = 0; i < count; ++i)
    vkp__put_i(out, i, vkp__unary_i(n->op, vkp__get_i(x, i), is_unsigned));
  return NULL;
}

static double vkp__binary_f(vkp_op_t op, double a, double b) {
  switch (op) {
    case VKP_OP_ADD: return a + b;
    case VKP_OP_SUB: return a - b;
    case VKP_OP_MUL: return a * b;
    case VKP_OP_DIV: return a / b;
    case VKP_OP_POW: return pow(a, b);
    default: return NAN;  // not reached
  }
}

// Wrapping integer arithmetic on the 64-bit patterns (narrower results keep
// the low bits on store). Division truncates toward zero; INT64_MIN / -1
// wraps. The caller rejects b == 0 for DIV.
static int64_t vkp__binary_i(vkp_op_t op, int64_t a, int64_t b,
                             bool is_unsigned) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
    case VKP_OP_ADD: return (int64_t)(ua + ub);
    case VKP_OP_SUB: return (int64_t)(ua - ub);
    case VKP_OP_MUL: return (int64_t)(ua * ub);
    case VKP_OP_DIV:
      if (is_unsigned) return (int64_t)(ua / ub);
      if (b == -1) return (int64_t)(0u - ua);
      return a / b;
    default: return 0;  // not reached
  }
}

vkp_status_t vkp__eval_binary(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1];
  int64_t sa[VKP_MAX_RANK], sb[VKP_MAX_RANK], idx[VKP_MAX_RANK] = {0};
  vkp__broadcast_strides(a, out->rank, sa);
  vkp__broadcast_strides(b, out->rank, sb);
  int64_t count = (int64_t)vkp_tensor_numel(out);
  bool is_float = vkp_dtype_is_float(a->dtype);
  bool is_unsigned = vkp_dtype_kind(a->dtype) == VKP_DTYPE_KIND_UINT;
  for (int64_t i = 0; i < count; ++i) {
    int64_t ia = vkp__dot(out->rank, idx, sa), ib = vkp__dot(out->rank, idx, sb);
    if (is_float) {
      vkp__put_f(out, i, vkp__binary_f(n->op, vkp__get_f(a, ia), vkp__get_f(b, ib)));
    } else {
      int64_t x = vkp__get_i(a, ia), y = vkp__get_i(b, ib);
      if (n->op == VKP_OP_DIV && y == 0)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "node '%s' (div): integer division by zero at "
                               "output element %lld",
                               n->name, (long long)i);
      vkp__put_i(out, i, vkp__binary_i(n->op, x, y, is_unsigned));
    }
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

// Float to float through double, integers through int64 (uint64 exactly),
// floats to integers truncating (base/scalar.h), anything to bool "!= 0".
vkp_status_t vkp__eval_cast(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(out);
  bool from_float = vkp_dtype_is_float(x->dtype);
  bool to_float = vkp_dtype_is_float(out->dtype);
  for (int64_t i = 0; i < count; ++i) {
    if (from_float || to_float) {
      vkp__put_f(out, i, vkp__get_f(x, i));
    } else if (x->dtype == VKP_DTYPE_UINT64) {
      uint64_t u = vkp__scalar_get_u(x->dtype, x->data, (size_t)i);
      vkp__put_i(out, i, out->dtype == VKP_DTYPE_BOOL ? u != 0 : (int64_t)u);
    } else {
      vkp__put_i(out, i, vkp__get_i(x, i));
    }
  }
  return NULL;
}
