// SPDX-License-Identifier: Apache-2.0
// The reference kernels. Clarity first: every kernel walks its output in
// row-major order and computes each element from the definition in
// docs/ops.md, accumulating in double.
#include "runtime/ref/ref_ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/status_macros.h"

// ---------------------------------------------------------------------------
// Index helpers

// Row-major element strides of `t`.
static void vkp__strides(const vkp_tensor_t *t, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= t->shape[d];
  }
}

// Strides of `t` seen through NumPy broadcasting to an `out_rank` shape:
// missing leading dims and dims of size 1 get stride 0.
static void vkp__broadcast_strides(const vkp_tensor_t *t, int32_t out_rank,
                                   int64_t *strides) {
  int64_t own[VKP_MAX_RANK];
  vkp__strides(t, own);
  for (int32_t d = 0; d < out_rank; ++d) {
    int32_t td = d - (out_rank - t->rank);
    strides[d] = (td < 0 || t->shape[td] == 1) ? 0 : own[td];
  }
}

// Advances the multi-index `idx` over `shape` (row-major); false after the
// last index (idx is then all zeros again).
static bool vkp__next_index(int32_t rank, const int64_t *shape, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

static int64_t vkp__dot(int32_t rank, const int64_t *idx, const int64_t *strides) {
  int64_t off = 0;
  for (int32_t d = 0; d < rank; ++d) off += idx[d] * strides[d];
  return off;
}

static int64_t vkp__prod(const int64_t *shape, int32_t begin, int32_t end) {
  int64_t p = 1;
  for (int32_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

static float *vkp__f32(vkp_tensor_t *t) { return (float *)t->data; }
static const float *vkp__cf32(const vkp_tensor_t *t) {
  return (const float *)t->data;
}

// Integers are read as int64 and written back with two's complement wrap
// (the conversion to int32 keeps the low 32 bits).
static int64_t vkp__get_int(const vkp_tensor_t *t, int64_t i) {
  return t->dtype == VKP_DTYPE_INT32 ? (int64_t)((const int32_t *)t->data)[i]
                                     : ((const int64_t *)t->data)[i];
}

static void vkp__set_int(vkp_tensor_t *t, int64_t i, uint64_t bits) {
  if (t->dtype == VKP_DTYPE_INT32)
    ((int32_t *)t->data)[i] = (int32_t)(uint32_t)bits;
  else
    ((int64_t *)t->data)[i] = (int64_t)bits;
}

static vkp_status_t vkp__unsupported_dtype(const vkp_node_t *n, vkp_dtype_t dt) {
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "node '%s' (%s): dtype %s not handled by ref "
                         "(supported: %s)",
                         n->name, vkp_op_name(n->op), vkp_dtype_name(dt),
                         vkp__ref_dtypes_text(n->op));
}

// ---------------------------------------------------------------------------
// Elementwise

static double vkp__unary_f(const vkp_node_t *n, double x) {
  switch (n->op) {
    case VKP_OP_SQRT: return sqrt(x);
    case VKP_OP_EXP: return exp(x);
    case VKP_OP_NEG: return -x;
    case VKP_OP_ABS: return fabs(x);
    case VKP_OP_RELU: return x < 0 ? 0.0 : x;
    case VKP_OP_LEAKY_RELU:
      return x < 0 ? vkp_node_attr_float(n, "alpha", 0.01) * x : x;
    case VKP_OP_CLIP: {
      double lo = vkp_node_attr_float(n, "min", -HUGE_VAL);
      double hi = vkp_node_attr_float(n, "max", HUGE_VAL);
      double y = x < lo ? lo : x;  // NaN passes through; min > max gives max
      return y > hi ? hi : y;
    }
    case VKP_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case VKP_OP_TANH: return tanh(x);
    case VKP_OP_ERF: return erf(x);
    case VKP_OP_GELU:
      if (strcmp(vkp_node_attr_string(n, "approximate", "none"), "tanh") == 0) {
        const double k = sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
      }
      return 0.5 * x * (1.0 + erf(x / M_SQRT2));
    default: return NAN;  // not reached: vkp__unary only dispatches the above
  }
}

static uint64_t vkp__unary_int(vkp_op_t op, int64_t x) {
  switch (op) {
    case VKP_OP_NEG: return 0u - (uint64_t)x;
    case VKP_OP_ABS: return x < 0 ? 0u - (uint64_t)x : (uint64_t)x;
    case VKP_OP_RELU: return x < 0 ? 0u : (uint64_t)x;
    default: return 0;  // not reached: supports() admits only these for ints
  }
}

static vkp_status_t vkp__unary(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(out);
  if (x->dtype == VKP_DTYPE_FLOAT32) {
    const float *px = vkp__cf32(x);
    float *py = vkp__f32(out);
    for (int64_t i = 0; i < count; ++i) py[i] = (float)vkp__unary_f(n, px[i]);
    return NULL;
  }
  if (x->dtype != VKP_DTYPE_INT32 && x->dtype != VKP_DTYPE_INT64)
    return vkp__unsupported_dtype(n, x->dtype);
  for (int64_t i = 0; i < count; ++i)
    vkp__set_int(out, i, vkp__unary_int(n->op, vkp__get_int(x, i)));
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

// Wrapping integer arithmetic; division truncates toward zero (C semantics)
// and INT_MIN / -1 wraps to INT_MIN. The caller rejects b == 0 for DIV.
static uint64_t vkp__binary_int(vkp_op_t op, int64_t a, int64_t b) {
  switch (op) {
    case VKP_OP_ADD: return (uint64_t)a + (uint64_t)b;
    case VKP_OP_SUB: return (uint64_t)a - (uint64_t)b;
    case VKP_OP_MUL: return (uint64_t)a * (uint64_t)b;
    case VKP_OP_DIV:
      if (b == -1) return 0u - (uint64_t)a;  // also covers INT64_MIN / -1
      return (uint64_t)(a / b);
    default: return 0;  // not reached
  }
}

static vkp_status_t vkp__binary(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1];
  int64_t sa[VKP_MAX_RANK], sb[VKP_MAX_RANK], idx[VKP_MAX_RANK] = {0};
  vkp__broadcast_strides(a, out->rank, sa);
  vkp__broadcast_strides(b, out->rank, sb);
  int64_t count = (int64_t)vkp_tensor_numel(out);
  bool is_float = a->dtype == VKP_DTYPE_FLOAT32;
  if (!is_float && a->dtype != VKP_DTYPE_INT32 && a->dtype != VKP_DTYPE_INT64)
    return vkp__unsupported_dtype(n, a->dtype);
  for (int64_t i = 0; i < count; ++i) {
    int64_t ia = vkp__dot(out->rank, idx, sa), ib = vkp__dot(out->rank, idx, sb);
    if (is_float) {
      vkp__f32(out)[i] = (float)vkp__binary_f(n->op, vkp__cf32(a)[ia],
                                              vkp__cf32(b)[ib]);
    } else {
      int64_t x = vkp__get_int(a, ia), y = vkp__get_int(b, ib);
      if (n->op == VKP_OP_DIV && y == 0)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "node '%s' (div): integer division by zero at "
                               "output element %lld",
                               n->name, (long long)i);
      vkp__set_int(out, i, vkp__binary_int(n->op, x, y));
    }
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

static vkp_status_t vkp__copy(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  // identity, reshape, flatten, squeeze, unsqueeze: same bytes, new shape.
  size_t bytes = vkp_tensor_nbytes(out);
  if (bytes != vkp_tensor_nbytes(in[0]))
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "node '%s' (%s): output has %zu bytes, input %zu",
                           n->name, vkp_op_name(n->op), bytes,
                           vkp_tensor_nbytes(in[0]));
  if (bytes) memcpy(out->data, in[0]->data, bytes);
  return NULL;
}

// ---------------------------------------------------------------------------
// Linear algebra

static vkp_status_t vkp__matmul(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1];
  // 1-D promotion: a [K] is [1, K], b [K] is [K, 1]; the unit dim is dropped
  // from the result, which inference already did.
  int64_t m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
  int64_t k = a->shape[a->rank - 1];
  int64_t nn = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch_rank = ba > bb ? ba : bb;
  int64_t batch_shape[VKP_MAX_RANK], sa[VKP_MAX_RANK], sb[VKP_MAX_RANK];
  for (int32_t d = 0; d < batch_rank; ++d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    batch_shape[d] = da == 1 ? db : da;
  }
  // Batch strides in units of whole matrices, 0 where broadcast.
  int64_t stride_a = 1, stride_b = 1;
  for (int32_t d = batch_rank - 1; d >= 0; --d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    sa[d] = (ia < 0 || a->shape[ia] == 1) ? 0 : stride_a;
    sb[d] = (ib < 0 || b->shape[ib] == 1) ? 0 : stride_b;
    if (ia >= 0) stride_a *= a->shape[ia];
    if (ib >= 0) stride_b *= b->shape[ib];
  }
  int64_t batches = vkp__prod(batch_shape, 0, batch_rank);
  int64_t idx[VKP_MAX_RANK] = {0};
  const float *pa = vkp__cf32(a), *pb = vkp__cf32(b);
  float *py = vkp__f32(out);
  for (int64_t t = 0; t < batches; ++t) {
    const float *ma = pa + vkp__dot(batch_rank, idx, sa) * m * k;
    const float *mb = pb + vkp__dot(batch_rank, idx, sb) * k * nn;
    float *my = py + t * m * nn;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += (double)ma[i * k + p] * (double)mb[p * nn + j];
        my[i * nn + j] = (float)acc;
      }
    vkp__next_index(batch_rank, batch_shape, idx);
  }
  return NULL;
}

static vkp_status_t vkp__gemm(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1], *c = n->n_inputs > 2 ? in[2] : NULL;
  double alpha = vkp_node_attr_float(n, "alpha", 1.0);
  double beta = vkp_node_attr_float(n, "beta", 1.0);
  bool ta = vkp_node_attr_int(n, "transA", 0) != 0;
  bool tb = vkp_node_attr_int(n, "transB", 0) != 0;
  int64_t m = out->shape[0], nn = out->shape[1];
  int64_t k = ta ? a->shape[0] : a->shape[1];
  // Element (i, p) of op(A) and (p, j) of op(B), row-major storage.
  int64_t a_row = ta ? 1 : k, a_col = ta ? m : 1;
  int64_t b_row = tb ? 1 : nn, b_col = tb ? k : 1;
  int64_t sc[2] = {0, 0};
  if (c) vkp__broadcast_strides(c, 2, sc);
  const float *pa = vkp__cf32(a), *pb = vkp__cf32(b);
  float *py = vkp__f32(out);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < nn; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p)
        acc += (double)pa[i * a_row + p * a_col] * (double)pb[p * b_row + j * b_col];
      double y = alpha * acc;
      if (c) y += beta * (double)vkp__cf32(c)[i * sc[0] + j * sc[1]];
      py[i * nn + j] = (float)y;
    }
  return NULL;
}

// ---------------------------------------------------------------------------
// Convolution and pooling (NCHW)

static vkp_status_t vkp__conv2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *w = in[1], *bias = n->n_inputs > 2 ? in[2] : NULL;
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);  // top, left, bottom, right
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int64_t group = vkp_node_attr_int(n, "group", 1);
  int64_t batch = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t m = w->shape[0], cg = w->shape[1], kh = w->shape[2], kw = w->shape[3];
  int64_t oh = out->shape[2], ow = out->shape[3], mg = m / group;
  const float *px = vkp__cf32(x), *pw = vkp__cf32(w);
  float *py = vkp__f32(out);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oc = 0; oc < m; ++oc) {
      int64_t c0 = (oc / mg) * cg;  // first input channel of this group
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = bias ? (double)vkp__cf32(bias)[oc] : 0.0;
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t i = 0; i < kh; ++i) {
              int64_t iy = y * strides[0] - pads[0] + i * dil[0];
              if (iy < 0 || iy >= h) continue;
              for (int64_t j = 0; j < kw; ++j) {
                int64_t ix = xo * strides[1] - pads[1] + j * dil[1];
                if (ix < 0 || ix >= wd) continue;
                acc += (double)px[((b * c + c0 + ic) * h + iy) * wd + ix] *
                       (double)pw[((oc * cg + ic) * kh + i) * kw + j];
              }
            }
          py[((b * m + oc) * oh + y) * ow + xo] = (float)acc;
        }
    }
  return NULL;
}

// Max and average pooling. A window tap is "in the input" when it lands on a
// real element, "in the padded area" when it lands inside the input grown by
// the pads; with ceil_mode the last window may reach past that and those taps
// count for nothing. A window with no tap in the input gives -inf (max) or 0
// (average).
static vkp_status_t vkp__pool2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *k, *pads, *strides, *dil;
  vkp_node_attr_ints(n, "kernel_shape", &k);
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  bool is_max = n->op == VKP_OP_MAX_POOL2D;
  bool include_pad = vkp_node_attr_int(n, "count_include_pad", 0) != 0;
  int64_t planes = x->shape[0] * x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t oh = out->shape[2], ow = out->shape[3];
  const float *px = vkp__cf32(x);
  float *py = vkp__f32(out);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo) {
        double best = -INFINITY, sum = 0;
        int64_t real = 0, padded = 0;
        for (int64_t i = 0; i < k[0]; ++i) {
          int64_t iy = y * strides[0] - pads[0] + i * dil[0];
          if (iy >= h + pads[2]) continue;
          for (int64_t j = 0; j < k[1]; ++j) {
            int64_t ix = xo * strides[1] - pads[1] + j * dil[1];
            if (ix >= wd + pads[3]) continue;
            ++padded;
            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
            ++real;
            double v = px[(p * h + iy) * wd + ix];
            sum += v;
            if (isnan(best)) continue;  // NaN wins, as in NumPy's max
            if (isnan(v) || v > best) best = v;
          }
        }
        double r;
        if (is_max) {
          r = best;
        } else {
          int64_t div = include_pad ? padded : real;
          r = div ? sum / (double)div : 0.0;
        }
        py[(p * oh + y) * ow + xo] = (float)r;
      }
  return NULL;
}

static vkp_status_t vkp__global_avg_pool(const vkp_node_t *n,
                                         const vkp_tensor_t *const *in,
                                         vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t planes = x->shape[0] * x->shape[1];
  int64_t area = vkp__prod(x->shape, 2, x->rank);
  const float *px = vkp__cf32(x);
  float *py = vkp__f32(out);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < area; ++i) sum += px[p * area + i];
    py[p] = area ? (float)(sum / (double)area) : 0.0f;
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Normalisation

static vkp_status_t vkp__batch_norm(const vkp_node_t *n,
                                    const vkp_tensor_t *const *in,
                                    vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  double eps = vkp_node_attr_float(n, "epsilon", 1e-5);
  const float *scale = vkp__cf32(in[1]), *shift = vkp__cf32(in[2]);
  const float *mean = vkp__cf32(in[3]), *var = vkp__cf32(in[4]);
  int64_t batch = x->shape[0], c = x->shape[1];
  int64_t inner = vkp__prod(x->shape, 2, x->rank);
  const float *px = vkp__cf32(x);
  float *py = vkp__f32(out);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double inv = 1.0 / sqrt((double)var[ch] + eps);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (b * c + ch) * inner + i;
        py[at] = (float)(((double)px[at] - mean[ch]) * inv * scale[ch] + shift[ch]);
      }
    }
  return NULL;
}

static vkp_status_t vkp__softmax(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                 vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int32_t axis = (int32_t)vkp_node_attr_int(n, "axis", x->rank - 1);
  int64_t outer = vkp__prod(x->shape, 0, axis), len = x->shape[axis];
  int64_t inner = vkp__prod(x->shape, axis + 1, x->rank);
  const float *px = vkp__cf32(x);
  float *py = vkp__f32(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *row = px + o * len * inner + i;
      float *dst = py + o * len * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j)
        if (row[j * inner] > mx) mx = row[j * inner];
      for (int64_t j = 0; j < len; ++j) sum += exp((double)row[j * inner] - mx);
      for (int64_t j = 0; j < len; ++j)
        dst[j * inner] = (float)(exp((double)row[j * inner] - mx) / sum);
    }
  return NULL;
}

static vkp_status_t vkp__layer_norm(const vkp_node_t *n,
                                    const vkp_tensor_t *const *in,
                                    vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1];
  const vkp_tensor_t *bias = n->n_inputs > 2 ? in[2] : NULL;
  int32_t axis = (int32_t)vkp_node_attr_int(n, "axis", x->rank - 1);
  double eps = vkp_node_attr_float(n, "epsilon", 1e-5);
  int32_t norm_rank = x->rank - axis;
  const int64_t *norm_shape = x->shape + axis;
  int64_t outer = vkp__prod(x->shape, 0, axis);
  int64_t len = vkp__prod(x->shape, axis, x->rank);
  // scale and bias broadcast (right-aligned) to x.shape[axis:].
  int64_t ss[VKP_MAX_RANK], sbias[VKP_MAX_RANK] = {0};
  vkp__broadcast_strides(scale, norm_rank, ss);
  if (bias) vkp__broadcast_strides(bias, norm_rank, sbias);
  const float *px = vkp__cf32(x), *pscale = vkp__cf32(scale);
  float *py = vkp__f32(out);
  for (int64_t o = 0; o < outer; ++o) {
    const float *row = px + o * len;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += row[j];
    mean = len ? mean / (double)len : 0.0;
    for (int64_t j = 0; j < len; ++j) var += (row[j] - mean) * (row[j] - mean);
    var = len ? var / (double)len : 0.0;
    double inv = 1.0 / sqrt(var + eps);
    int64_t idx[VKP_MAX_RANK] = {0};
    for (int64_t j = 0; j < len; ++j) {
      double y = ((double)row[j] - mean) * inv *
                 (double)pscale[vkp__dot(norm_rank, idx, ss)];
      if (bias) y += (double)vkp__cf32(bias)[vkp__dot(norm_rank, idx, sbias)];
      py[o * len + j] = (float)y;
      vkp__next_index(norm_rank, norm_shape, idx);
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Reductions

static vkp_status_t vkp__reduce(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *axes;
  int32_t n_axes = vkp_node_attr_ints(n, "axes", &axes);  // sorted, positive
  int64_t strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  // Split the input dims into kept ones (walked by the output) and reduced
  // ones (walked for every output element).
  int32_t n_kept = 0, n_red = 0;
  int64_t kept_shape[VKP_MAX_RANK], kept_strides[VKP_MAX_RANK];
  int64_t red_shape[VKP_MAX_RANK], red_strides[VKP_MAX_RANK];
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    if (j < n_axes && axes[j] == d) {
      ++j;
      red_shape[n_red] = x->shape[d];
      red_strides[n_red++] = strides[d];
    } else {
      kept_shape[n_kept] = x->shape[d];
      kept_strides[n_kept++] = strides[d];
    }
  }
  int64_t n_out = vkp__prod(kept_shape, 0, n_kept);
  int64_t n_in = vkp__prod(red_shape, 0, n_red);
  bool mean = n->op == VKP_OP_REDUCE_MEAN;
  const float *px = vkp__cf32(x);
  float *py = vkp__f32(out);
  int64_t kidx[VKP_MAX_RANK] = {0};
  for (int64_t o = 0; o < n_out; ++o) {
    int64_t base = vkp__dot(n_kept, kidx, kept_strides);
    int64_t ridx[VKP_MAX_RANK] = {0};
    double sum = 0;
    for (int64_t r = 0; r < n_in; ++r) {
      sum += px[base + vkp__dot(n_red, ridx, red_strides)];
      vkp__next_index(n_red, red_shape, ridx);
    }
    // The mean of nothing is NaN, as in NumPy.
    py[o] = (float)(mean ? (n_in ? sum / (double)n_in : NAN) : sum);
    vkp__next_index(n_kept, kept_shape, kidx);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Data movement (any dtype: elements are moved as bytes)

static vkp_status_t vkp__transpose(const vkp_node_t *n,
                                   const vkp_tensor_t *const *in,
                                   vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *perm;
  vkp_node_attr_ints(n, "perm", &perm);
  int64_t in_strides[VKP_MAX_RANK], src_strides[VKP_MAX_RANK];
  vkp__strides(x, in_strides);
  for (int32_t d = 0; d < out->rank; ++d) src_strides[d] = in_strides[perm[d]];
  size_t es = vkp_dtype_size(x->dtype);
  int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
  const char *src = x->data;
  char *dst = out->data;
  for (int64_t i = 0; i < count; ++i) {
    memcpy(dst + (size_t)i * es,
           src + (size_t)vkp__dot(out->rank, idx, src_strides) * es, es);
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

static vkp_status_t vkp__concat(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  int32_t axis = (int32_t)vkp_node_attr_int(n, "axis", 0);
  size_t es = vkp_dtype_size(out->dtype);
  int64_t outer = vkp__prod(out->shape, 0, axis);
  int64_t inner = vkp__prod(out->shape, axis + 1, out->rank);
  size_t out_row = (size_t)(out->shape[axis] * inner) * es;
  size_t at = 0;  // byte offset of the current input's block inside a row
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_tensor_t *x = in[i];
    size_t row = (size_t)(x->shape[axis] * inner) * es;
    for (int64_t o = 0; o < outer && row; ++o)
      memcpy((char *)out->data + (size_t)o * out_row + at,
             (const char *)x->data + (size_t)o * row, row);
    at += row;
  }
  return NULL;
}

static vkp_status_t vkp__slice(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *starts, *steps;  // canonical: one entry per dim
  vkp_node_attr_ints(n, "starts", &starts);
  vkp_node_attr_ints(n, "steps", &steps);
  int64_t strides[VKP_MAX_RANK], src_strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  int64_t base = 0;
  for (int32_t d = 0; d < x->rank; ++d) {
    base += starts[d] * strides[d];
    src_strides[d] = steps[d] * strides[d];
  }
  size_t es = vkp_dtype_size(x->dtype);
  int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = base + vkp__dot(out->rank, idx, src_strides);
    memcpy((char *)out->data + (size_t)i * es,
           (const char *)x->data + (size_t)src * es, es);
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Dispatch

typedef enum vkp__dtype_class_t {
  VKP__FLOAT_ONLY,  // float32
  VKP__NUMERIC,     // float32, int32, int64
  VKP__ANY,         // every dtype (bytes are moved, not computed on)
} vkp__dtype_class_t;

// No default: -Wswitch (an error here) flags an op added to VKP_OP_LIST
// without a kernel.
static vkp__dtype_class_t vkp__dtype_class(vkp_op_t op) {
  switch (op) {
    case VKP_OP_ADD: case VKP_OP_SUB: case VKP_OP_MUL: case VKP_OP_DIV:
    case VKP_OP_NEG: case VKP_OP_ABS: case VKP_OP_RELU:
      return VKP__NUMERIC;
    case VKP_OP_IDENTITY: case VKP_OP_RESHAPE: case VKP_OP_FLATTEN:
    case VKP_OP_TRANSPOSE: case VKP_OP_CONCAT: case VKP_OP_SLICE:
    case VKP_OP_SQUEEZE: case VKP_OP_UNSQUEEZE:
      return VKP__ANY;
    case VKP_OP_POW: case VKP_OP_SQRT: case VKP_OP_EXP: case VKP_OP_LEAKY_RELU:
    case VKP_OP_CLIP: case VKP_OP_SIGMOID: case VKP_OP_TANH: case VKP_OP_ERF:
    case VKP_OP_GELU: case VKP_OP_MATMUL: case VKP_OP_GEMM: case VKP_OP_CONV2D:
    case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: case VKP_OP_GLOBAL_AVG_POOL:
    case VKP_OP_BATCH_NORM: case VKP_OP_SOFTMAX: case VKP_OP_LAYER_NORM:
    case VKP_OP_REDUCE_MEAN: case VKP_OP_REDUCE_SUM:
    case VKP_OP_COUNT:
      return VKP__FLOAT_ONLY;
  }
  return VKP__FLOAT_ONLY;
}

vkp_ref_kernel_fn vkp__ref_kernel(vkp_op_t op) {
  switch (op) {
    case VKP_OP_ADD: case VKP_OP_SUB: case VKP_OP_MUL: case VKP_OP_DIV:
    case VKP_OP_POW:
      return vkp__binary;
    case VKP_OP_SQRT: case VKP_OP_EXP: case VKP_OP_NEG: case VKP_OP_ABS:
    case VKP_OP_RELU: case VKP_OP_LEAKY_RELU: case VKP_OP_CLIP:
    case VKP_OP_SIGMOID: case VKP_OP_TANH: case VKP_OP_ERF: case VKP_OP_GELU:
      return vkp__unary;
    case VKP_OP_MATMUL: return vkp__matmul;
    case VKP_OP_GEMM: return vkp__gemm;
    case VKP_OP_CONV2D: return vkp__conv2d;
    case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: return vkp__pool2d;
    case VKP_OP_GLOBAL_AVG_POOL: return vkp__global_avg_pool;
    case VKP_OP_BATCH_NORM: return vkp__batch_norm;
    case VKP_OP_SOFTMAX: return vkp__softmax;
    case VKP_OP_LAYER_NORM: return vkp__layer_norm;
    case VKP_OP_REDUCE_MEAN: case VKP_OP_REDUCE_SUM: return vkp__reduce;
    case VKP_OP_TRANSPOSE: return vkp__transpose;
    case VKP_OP_CONCAT: return vkp__concat;
    case VKP_OP_SLICE: return vkp__slice;
    case VKP_OP_IDENTITY: case VKP_OP_RESHAPE: case VKP_OP_FLATTEN:
    case VKP_OP_SQUEEZE: case VKP_OP_UNSQUEEZE:
      return vkp__copy;
    case VKP_OP_COUNT:
      return NULL;
  }
  return NULL;
}

bool vkp__ref_supports_dtype(vkp_op_t op, vkp_dtype_t dtype) {
  if ((unsigned)op >= VKP_OP_COUNT || (unsigned)dtype >= VKP_DTYPE_COUNT)
    return false;
  switch (vkp__dtype_class(op)) {
    case VKP__ANY: return true;
    case VKP__NUMERIC:
      return dtype == VKP_DTYPE_FLOAT32 || dtype == VKP_DTYPE_INT32 ||
             dtype == VKP_DTYPE_INT64;
    case VKP__FLOAT_ONLY: return dtype == VKP_DTYPE_FLOAT32;
  }
  return false;
}

const char *vkp__ref_dtypes_text(vkp_op_t op) {
  switch (vkp__dtype_class(op)) {
    case VKP__ANY: return "any dtype";
    case VKP__NUMERIC: return "float32, int32, int64";
    case VKP__FLOAT_ONLY: return "float32";
  }
  return "float32";
}
