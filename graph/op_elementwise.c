// SPDX-License-Identifier: Apache-2.0
// Elementwise ops: arithmetic with NumPy broadcasting, functions and
// activations, min/max/sum/mean over any number of inputs, cast. Schemas,
// inference and reference kernels.
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/alloc.h"
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
const vkp__attr_spec_t vkp__attrs_hard_sigmoid[] = {
    VKP__ATTR_FLOAT("alpha", 0.2), VKP__ATTR_FLOAT("beta", 0.5), VKP__ATTR_END};
// elu, celu, thresholded_relu.
const vkp__attr_spec_t vkp__attrs_alpha_one[] = {VKP__ATTR_FLOAT("alpha", 1.0),
                                                 VKP__ATTR_END};
// ONNX's defaults, the float32 values of SELU's constants.
const vkp__attr_spec_t vkp__attrs_selu[] = {
    VKP__ATTR_FLOAT("alpha", 1.67326319217681884765625),
    VKP__ATTR_FLOAT("gamma", 1.05070102214813232421875), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_shrink[] = {
    VKP__ATTR_FLOAT("bias", 0.0), VKP__ATTR_FLOAT("lambd", 0.5), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_mod[] = {VKP__ATTR_INT("fmod", 0), VKP__ATTR_END};

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

// prelu: the slope broadcasts to X (ONNX's unidirectional broadcasting): the
// result has X's shape.
vkp_status_t vkp__infer_prelu(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *slope = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, slope));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(x, slope, &rank, shape));
  bool same = rank == x->rank;
  for (int32_t d = 0; same && d < rank; ++d) same = shape[d] == x->shape[d];
  if (!same) {
    char sx[128], ss[128];
    return VKP__ERR("slope '%s' %s does not broadcast to X '%s' %s (the result "
                    "must keep X's shape)",
                    slope->name, vkp__fmt(slope, ss, sizeof ss), x->name,
                    vkp__fmt(x, sx, sizeof sx));
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_mod(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  int64_t fmod_flag = vkp_node_int(n, "fmod");
  if (fmod_flag != 0 && fmod_flag != 1)
    return VKP__ERR("attribute 'fmod' is %lld; expected 0 or 1",
                    (long long)fmod_flag);
  return vkp__infer_broadcast(g, n, out);
}

// min, max, sum, mean: one or more inputs of one dtype, broadcast together.
vkp_status_t vkp__infer_variadic(vkp_graph_t *g, vkp_node_t *n,
                                 vkp_value_t *out) {
  for (int32_t i = 0; i < n->n_inputs; ++i)
    if (n->inputs[i] < 0) return VKP__ERR("input %d is omitted", (int)i);
  VKP_RETURN_IF_ERROR(vkp__same_dtypes(g, n, 0));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_inputs(g, n, 0, &rank, shape));
  vkp__set_out(out, vkp__in(g, n, 0)->dtype, rank, shape);
  return NULL;
}

// clip: the optional bounds (inputs 1 and 2) have X's dtype and one element;
// an omitted one falls back to its attribute.
vkp_status_t vkp__infer_clip(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const char *const names[3] = {"X", "min", "max"};
  for (int32_t i = 1; i < 3; ++i) {
    const vkp_value_t *b = vkp__in(g, n, i);
    if (!b) continue;
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, b));
    size_t count;
    if (!vkp_shape_numel(b->rank, b->shape, 1, &count) || count != 1) {
      char sb[128];
      return VKP__ERR("%s '%s' has shape %s; it must have one element",
                      names[i], b->name, vkp__fmt(b, sb, sizeof sb));
    }
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
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

// log(1 + e^x) without overflow for large x or loss for very negative x.
static double vkp__softplus(double x) {
  return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x)));
}

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
    case VKP_OP_LOG: return log(x);
    case VKP_OP_FLOOR: return floor(x);
    case VKP_OP_CEIL: return ceil(x);
    case VKP_OP_ROUND: return nearbyint(x);  // ties to even (the default mode)
    case VKP_OP_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x;  // 0 and NaN stay
    case VKP_OP_RECIPROCAL: return 1.0 / x;
    case VKP_OP_SIN: return sin(x);
    case VKP_OP_COS: return cos(x);
    case VKP_OP_TAN: return tan(x);
    case VKP_OP_ASIN: return asin(x);
    case VKP_OP_ACOS: return acos(x);
    case VKP_OP_ATAN: return atan(x);
    case VKP_OP_SINH: return sinh(x);
    case VKP_OP_COSH: return cosh(x);
    case VKP_OP_ASINH: return asinh(x);
    case VKP_OP_ACOSH: return acosh(x);
    case VKP_OP_ATANH: return atanh(x);
    case VKP_OP_SOFTPLUS: return vkp__softplus(x);
    case VKP_OP_SOFTSIGN: return x / (1.0 + fabs(x));
    case VKP_OP_MISH: return x * tanh(vkp__softplus(x));
    case VKP_OP_HARD_SIGMOID: {
      double t = vkp_node_float(n, "alpha") * x + vkp_node_float(n, "beta");
      return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    }
    case VKP_OP_ELU: return x < 0 ? vkp_node_float(n, "alpha") * expm1(x) : x;
    case VKP_OP_SELU:
      return vkp_node_float(n, "gamma") *
             (x <= 0 ? vkp_node_float(n, "alpha") * expm1(x) : x);
    case VKP_OP_CELU: {
      double alpha = vkp_node_float(n, "alpha");
      return x > 0 ? x : alpha * expm1(x / alpha);
    }
    case VKP_OP_THRESHOLDED_RELU: return x > vkp_node_float(n, "alpha") ? x : 0.0;
    case VKP_OP_SHRINK: {
      double lambd = vkp_node_float(n, "lambd"), bias = vkp_node_float(n, "bias");
      return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0;
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
    case VKP_OP_SIGN: return is_unsigned ? x != 0 : (x > 0) - (x < 0);
    default: return 0;  // not reached: the table admits integers only here
  }
}

vkp_status_t vkp__eval_unary(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(out);
  // Integer shrink computes in double with its float attributes and
  // truncates, as ONNX's reference does.
  if (vkp_dtype_is_float(x->dtype) || n->op == VKP_OP_SHRINK) {
    for (int64_t i = 0; i < count; ++i) vkp__put_f(out, i, vkp__unary_f(n, vkp__get_f(x, i)));
    return NULL;
  }
  bool is_unsigned = vkp_dtype_kind(x->dtype) == VKP_DTYPE_KIND_UINT;
  for (int64_t i = 0; i < count; ++i)
    vkp__put_i(out, i, vkp__unary_i(n->op, vkp__get_i(x, i), is_unsigned));
  return NULL;
}

static double vkp__binary_f(const vkp_node_t *n, double a, double b) {
  switch (n->op) {
    case VKP_OP_ADD: return a + b;
    case VKP_OP_SUB: return a - b;
    case VKP_OP_MUL: return a * b;
    case VKP_OP_DIV: return a / b;
    case VKP_OP_POW: return pow(a, b);
    case VKP_OP_PRELU: return a < 0 ? b * a : a;
    case VKP_OP_MOD: {
      double r = fmod(a, b);  // exact; the sign of a
      if (vkp_node_int(n, "fmod")) return r;
      // NumPy's mod: the sign of b.
      if (r != 0) return (r < 0) != (b < 0) ? r + b : r;
      return copysign(0.0, b);
    }
    default: return NAN;  // not reached
  }
}

// b ** e on integers (either may be unsigned), wrapping; *ok false for 0 to
// a negative power.
static int64_t vkp__ipow(int64_t b, bool b_unsigned, int64_t e, bool e_unsigned,
                         bool *ok) {
  *ok = true;
  if (e < 0 && !e_unsigned) {  // 1 / b ** -e, truncated
    if (b == 1) return 1;
    if (b == -1 && !b_unsigned) return (e & 1) ? -1 : 1;
    *ok = b != 0;
    return 0;
  }
  uint64_t r = 1, base = (uint64_t)b;
  for (uint64_t k = (uint64_t)e; k; k >>= 1) {
    if (k & 1) r *= base;
    base *= base;
  }
  return (int64_t)r;
}

// Wrapping integer arithmetic on the 64-bit patterns (narrower results keep
// the low bits on store). Division truncates toward zero; INT64_MIN / -1
// wraps. *ok false for a zero divisor (div, mod) and 0 ** negative (pow).
static int64_t vkp__binary_i(const vkp_node_t *n, int64_t a, int64_t b,
                             bool is_unsigned, bool b_unsigned, bool *ok) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  *ok = true;
  switch (n->op) {
    case VKP_OP_ADD: return (int64_t)(ua + ub);
    case VKP_OP_SUB: return (int64_t)(ua - ub);
    case VKP_OP_MUL: return (int64_t)(ua * ub);
    case VKP_OP_DIV:
      if (b == 0) return *ok = false, 0;
      if (is_unsigned) return (int64_t)(ua / ub);
      if (b == -1) return (int64_t)(0u - ua);
      return a / b;
    case VKP_OP_MOD: {
      if (b == 0) return *ok = false, 0;
      if (is_unsigned) return (int64_t)(ua % ub);
      int64_t r = b == -1 ? 0 : a % b;  // C's: the sign of a
      if (vkp_node_int(n, "fmod") || r == 0 || (r < 0) == (b < 0)) return r;
      return r + b;  // Python's: the sign of b
    }
    case VKP_OP_POW: return vkp__ipow(a, is_unsigned, b, b_unsigned, ok);
    case VKP_OP_PRELU: return !is_unsigned && a < 0 ? (int64_t)(ua * ub) : a;
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
  // An integer base with a float exponent: pow in double, then truncated to
  // the base's dtype (ONNX's reference).
  bool is_float = vkp_dtype_is_float(a->dtype) || vkp_dtype_is_float(b->dtype);
  bool is_unsigned = vkp_dtype_kind(a->dtype) == VKP_DTYPE_KIND_UINT;
  bool b_unsigned = vkp_dtype_kind(b->dtype) == VKP_DTYPE_KIND_UINT;
  for (int64_t i = 0; i < count; ++i) {
    int64_t ia = vkp__dot(out->rank, idx, sa), ib = vkp__dot(out->rank, idx, sb);
    if (is_float) {
      vkp__put_f(out, i, vkp__binary_f(n, vkp__get_f(a, ia), vkp__get_f(b, ib)));
    } else {
      bool ok;
      int64_t y = vkp__binary_i(n, vkp__get_i(a, ia), vkp__get_i(b, ib),
                                is_unsigned, b_unsigned, &ok);
      if (!ok)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "node '%s' (%s): %s at output element %lld",
                               n->name, vkp_op_name(n->op),
                               n->op == VKP_OP_POW ? "integer 0 to a negative power"
                               : n->op == VKP_OP_MOD ? "integer modulo by zero"
                                                     : "integer division by zero",
                               (long long)i);
      vkp__put_i(out, i, y);
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

// min and max propagate NaN (NumPy's minimum/maximum); sum and mean add in
// double. Integer min/max compare exactly and copy the winning element.
vkp_status_t vkp__eval_variadic(const vkp_node_t *n,
                                const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  int32_t k = n->n_inputs;
  int64_t(*strides)[VKP_MAX_RANK] = vkp__calloc((size_t)k, sizeof *strides);
  int64_t *at = vkp__calloc((size_t)k, sizeof *at);
  if (!strides || !at) {
    vkp__free(strides);
    vkp__free(at);
    return VKP_OOM("input strides");
  }
  for (int32_t j = 0; j < k; ++j) vkp__broadcast_strides(in[j], out->rank, strides[j]);
  int64_t idx[VKP_MAX_RANK] = {0};
  int64_t count = (int64_t)vkp_tensor_numel(out);
  bool is_float = vkp_dtype_is_float(out->dtype);
  for (int64_t i = 0; i < count; ++i) {
    for (int32_t j = 0; j < k; ++j) at[j] = vkp__dot(out->rank, idx, strides[j]);
    if (n->op == VKP_OP_SUM || n->op == VKP_OP_MEAN) {
      double acc = 0.0;
      for (int32_t j = 0; j < k; ++j) acc += vkp__get_f(in[j], at[j]);
      vkp__put_f(out, i, n->op == VKP_OP_MEAN ? acc / k : acc);
    } else if (is_float) {
      double best = vkp__get_f(in[0], at[0]);
      for (int32_t j = 1; j < k && !isnan(best); ++j) {
        double v = vkp__get_f(in[j], at[j]);
        if (isnan(v) || (n->op == VKP_OP_MIN ? v < best : v > best)) best = v;
      }
      vkp__put_f(out, i, best);
    } else {
      int32_t best = 0;
      for (int32_t j = 1; j < k; ++j) {
        int c = vkp__compare_elems(in[j], at[j], in[best], at[best]);
        if (c == (n->op == VKP_OP_MIN ? -1 : 1)) best = j;
      }
      vkp__copy_elem(out, i, in[best], at[best]);
    }
    vkp__next_index(out->rank, out->shape, idx);
  }
  vkp__free(strides);
  vkp__free(at);
  return NULL;
}

// An integer clip bound from a float attribute: rounded inward (min up, max
// down) and saturated to the range of a `bits`-wide dtype, so that it is a
// value of the dtype (NaN: no bound).
static int64_t vkp__bound_s(int bits, double v, bool is_min) {
  v = is_min ? ceil(v) : floor(v);
  int64_t top = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  int64_t bottom = -top - 1;
  if (!(v == v)) return is_min ? bottom : top;
  if (v >= (double)top) return top;
  if (v <= (double)bottom) return bottom;
  return (int64_t)v;
}

static uint64_t vkp__bound_u(int bits, double v, bool is_min) {
  v = is_min ? ceil(v) : floor(v);
  uint64_t top = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (!(v == v)) return is_min ? 0 : top;
  if (v >= (double)top) return top;
  if (v <= 0.0) return 0;
  return (uint64_t)v;
}

// The bounds come from inputs 1 and 2 where given, else from the attributes.
// y = min(max(x, lo), hi): NaN passes through, min > max gives max (NumPy's
// clip). Integers compare exactly.
vkp_status_t vkp__eval_clip(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const vkp_tensor_t *lo_t = n->n_inputs > 1 ? in[1] : NULL;
  const vkp_tensor_t *hi_t = n->n_inputs > 2 ? in[2] : NULL;
  int64_t count = (int64_t)vkp_tensor_numel(out);
  double lo_attr = vkp_node_float(n, "min"), hi_attr = vkp_node_float(n, "max");
  int bits = (int)vkp_dtype_size(x->dtype) * 8;
  if (vkp_dtype_is_float(x->dtype)) {
    double lo = lo_t ? vkp__get_f(lo_t, 0) : lo_attr;
    double hi = hi_t ? vkp__get_f(hi_t, 0) : hi_attr;
    for (int64_t i = 0; i < count; ++i) {
      double y = vkp__get_f(x, i);
      y = y < lo ? lo : y;
      vkp__put_f(out, i, y > hi ? hi : y);
    }
  } else if (vkp_dtype_kind(x->dtype) == VKP_DTYPE_KIND_UINT) {
    uint64_t lo = lo_t ? vkp__scalar_get_u(x->dtype, lo_t->data, 0)
                       : vkp__bound_u(bits, lo_attr, true);
    uint64_t hi = hi_t ? vkp__scalar_get_u(x->dtype, hi_t->data, 0)
                       : vkp__bound_u(bits, hi_attr, false);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t y = vkp__scalar_get_u(x->dtype, x->data, (size_t)i);
      y = y < lo ? lo : y;
      vkp__put_i(out, i, (int64_t)(y > hi ? hi : y));
    }
  } else {
    int64_t lo = lo_t ? vkp__get_i(lo_t, 0) : vkp__bound_s(bits, lo_attr, true);
    int64_t hi = hi_t ? vkp__get_i(hi_t, 0) : vkp__bound_s(bits, hi_attr, false);
    for (int64_t i = 0; i < count; ++i) {
      int64_t y = vkp__get_i(x, i);
      y = y < lo ? lo : y;
      vkp__put_i(out, i, y > hi ? hi : y);
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Helpers for ops with many inputs (ops_internal.h)

vkp_status_t vkp__broadcast_inputs(const vkp_graph_t *g, const vkp_node_t *n,
                                   int32_t first, int32_t *out_rank,
                                   int64_t *out_shape) {
  vkp_value_t acc = {0};
  bool any = false;
  for (int32_t i = first; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) continue;
    if (!any) {
      acc = *v;
      any = true;
      continue;
    }
    // Into a copy: the result is written from its first dim while acc's dims
    // are still read, and acc may have the lower rank.
    int32_t rank;
    int64_t shape[VKP_MAX_RANK];
    VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(&acc, v, &rank, shape));
    acc.rank = rank;
    memcpy(acc.shape, shape, (size_t)rank * sizeof shape[0]);
    acc.name = "the inputs before it";
  }
  *out_rank = acc.rank;
  for (int32_t d = 0; d < acc.rank; ++d) out_shape[d] = acc.shape[d];
  return NULL;
}

vkp_status_t vkp__same_dtypes(const vkp_graph_t *g, const vkp_node_t *n,
                              int32_t first) {
  const vkp_value_t *a = vkp__in(g, n, first);
  for (int32_t i = first + 1; a && i < n->n_inputs; ++i) {
    const vkp_value_t *b = vkp__in(g, n, i);
    if (b) VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  }
  return NULL;
}

int vkp__compare_elems(const vkp_tensor_t *a, int64_t ia, const vkp_tensor_t *b,
                       int64_t ib) {
  if (vkp_dtype_is_float(a->dtype)) {
    double x = vkp__get_f(a, ia), y = vkp__get_f(b, ib);
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
  }
  if (a->dtype == VKP_DTYPE_UINT64) {
    uint64_t x = vkp__scalar_get_u(a->dtype, a->data, (size_t)ia);
    uint64_t y = vkp__scalar_get_u(b->dtype, b->data, (size_t)ib);
    return (x > y) - (x < y);
  }
  int64_t x = vkp__get_i(a, ia), y = vkp__get_i(b, ib);
  return (x > y) - (x < y);
}

void vkp__copy_elem(vkp_tensor_t *dst, int64_t to, const vkp_tensor_t *src,
                    int64_t from) {
  size_t size = vkp_dtype_size(dst->dtype);
  memcpy((char *)dst->data + (size_t)to * size,
         (const char *)src->data + (size_t)from * size, size);
}
