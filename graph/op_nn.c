// SPDX-License-Identifier: Apache-2.0
// Convolution, pooling and normalisation (NCHW): schemas, inference and
// reference kernels.
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas

const vkp__attr_spec_t vkp__attrs_conv2d[] = {
    VKP__ATTR("pads", INTS), VKP__ATTR("strides", INTS),
    VKP__ATTR("dilations", INTS), VKP__ATTR_INT("group", 1), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_max_pool2d[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("dilations", INTS),
    VKP__ATTR_INT("ceil_mode", 0), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_avg_pool2d[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("dilations", INTS),
    VKP__ATTR_INT("ceil_mode", 0), VKP__ATTR_INT("count_include_pad", 0),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_batch_norm[] = {
    VKP__ATTR_FLOAT("epsilon", 1e-5), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_softmax[] = {VKP__ATTR_INT("axis", -1),
                                               VKP__ATTR_END};
// rms = 1: RMSNorm (no mean subtracted: x / sqrt(mean(x^2) + epsilon)).
const vkp__attr_spec_t vkp__attrs_layer_norm[] = {
    VKP__ATTR_INT("axis", -1), VKP__ATTR_FLOAT("epsilon", 1e-5),
    VKP__ATTR_INT("rms", 0), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

static const int64_t vkp__zeros4[4] = {0, 0, 0, 0};
static const int64_t vkp__ones2[2] = {1, 1};

static vkp_status_t vkp__window_out(int64_t in, int64_t pad_begin,
                                    int64_t pad_end, int64_t kernel,
                                    int64_t stride, int64_t dilation, bool ceil,
                                    int64_t *out) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = in + pad_begin + pad_end - span;
  if (room < 0)
    return VKP__ERR("window of %lld (kernel %lld, dilation %lld) is larger than "
                    "the padded input %lld",
                    (long long)span, (long long)kernel, (long long)dilation,
                    (long long)(in + pad_begin + pad_end));
  int64_t o = (ceil ? (room + stride - 1) / stride : room / stride) + 1;
  // A last window that would start in the end padding is dropped.
  if (ceil && (o - 1) * stride >= in + pad_begin) --o;
  *out = o;
  return NULL;
}

static vkp_status_t vkp__check_positive(const int64_t *v, int32_t n,
                                        const char *what, bool allow_zero) {
  for (int32_t i = 0; i < n; ++i)
    if (v[i] < (allow_zero ? 0 : 1))
      return VKP__ERR("attribute '%s' entry %d is %lld; must be %s", what, (int)i,
                      (long long)v[i], allow_zero ? ">= 0" : ">= 1");
  return NULL;
}

vkp_status_t vkp__infer_conv2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1),
                    *b = vkp__in(g, n, 2);
  const int64_t *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 4, vkp__zeros4, &pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", 2, vkp__ones2, &strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", 2, vkp__ones2, &dil));
  VKP_RETURN_IF_ERROR(vkp__check_positive(pads, 4, "pads", true));
  VKP_RETURN_IF_ERROR(vkp__check_positive(strides, 2, "strides", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(dil, 2, "dilations", false));
  int64_t group = vkp_node_int(n, "group");
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, w));
  if (x->rank != 4) return VKP__ERR("input '%s' must be 4-D NCHW (rank %d)", x->name, (int)x->rank);
  if (w->rank != 4) return VKP__ERR("weight '%s' must be 4-D (rank %d)", w->name, (int)w->rank);
  if (group < 1) return VKP__ERR("attribute 'group' is %lld; must be >= 1", (long long)group);
  int64_t c = x->shape[1], m = w->shape[0];
  if (w->shape[1] * group != c)
    return VKP__ERR("input has %lld channels but weight expects %lld x group %lld",
                    (long long)c, (long long)w->shape[1], (long long)group);
  if (m % group != 0)
    return VKP__ERR("%lld output channels are not divisible by group %lld",
                    (long long)m, (long long)group);
  if (b) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, b));
    if (b->rank != 1 || b->shape[0] != m)
      return VKP__ERR("bias '%s' must have shape [%lld]", b->name, (long long)m);
  }
  int64_t shape[4] = {x->shape[0], m, 0, 0};
  for (int i = 0; i < 2; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[2 + i],
                                        w->shape[2 + i], strides[i], dil[i],
                                        false, &shape[2 + i]));
  vkp__set_out(out, x->dtype, 4, shape);
  return NULL;
}

vkp_status_t vkp__infer_pool2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *k, *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "kernel_shape", 2, NULL, &k));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 4, vkp__zeros4, &pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", 2, vkp__ones2, &strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", 2, vkp__ones2, &dil));
  VKP_RETURN_IF_ERROR(vkp__check_positive(k, 2, "kernel_shape", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(pads, 4, "pads", true));
  VKP_RETURN_IF_ERROR(vkp__check_positive(strides, 2, "strides", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(dil, 2, "dilations", false));
  for (int i = 0; i < 4; ++i)
    if (pads[i] >= k[i % 2] * dil[i % 2] && pads[i] > 0)
      return VKP__ERR("pad %lld is not smaller than the window %lld",
                      (long long)pads[i], (long long)k[i % 2]);
  if (x->rank != 4) return VKP__ERR("input '%s' must be 4-D NCHW (rank %d)", x->name, (int)x->rank);
  bool ceil = vkp_node_int(n, "ceil_mode") != 0;
  int64_t shape[4] = {x->shape[0], x->shape[1], 0, 0};
  for (int i = 0; i < 2; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[2 + i],
                                        k[i], strides[i], dil[i], ceil,
                                        &shape[2 + i]));
  vkp__set_out(out, x->dtype, 4, shape);
  return NULL;
}

vkp_status_t vkp__infer_global_pool(vkp_graph_t *g, vkp_node_t *n,
                                           vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank < 3)
    return VKP__ERR("input '%s' needs rank >= 3 (N, C, spatial...), has %d",
                    x->name, (int)x->rank);
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < x->rank; ++i) shape[i] = i < 2 ? x->shape[i] : 1;
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Normalisation

vkp_status_t vkp__infer_batch_norm(vkp_graph_t *g, vkp_node_t *n,
                                          vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const char *const names[] = {"X", "scale", "B", "mean", "var"};
  for (int32_t i = 0; i < 5; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) return VKP__ERR("input %d (%s) is required", (int)i, names[i]);
    VKP_RETURN_IF_ERROR(vkp__need_dtypes(v, names[i], VKP_OP_DTYPES_FLOAT));
  }
  if (x->rank < 2) return VKP__ERR("input '%s' needs rank >= 2", x->name);
  for (int32_t i = 1; i < 5; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (v->rank != 1 || v->shape[0] != x->shape[1])
      return VKP__ERR("%s '%s' must have shape [%lld] (the channel count)",
                      names[i], v->name, (long long)x->shape[1]);
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_softmax(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank < 1) return VKP__ERR("input '%s' needs rank >= 1", x->name);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_layer_norm(vkp_graph_t *g, vkp_node_t *n,
                                          vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank < 1) return VKP__ERR("input '%s' needs rank >= 1", x->name);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t rms = vkp_node_int(n, "rms");
  if (rms != 0 && rms != 1)
    return VKP__ERR("attribute 'rms' is %lld; it must be 0 or 1", (long long)rms);
  // scale (and bias) broadcast to x.shape[axis:].
  for (int32_t i = 1; i < 3; ++i) {
    const vkp_value_t *p = vkp__in(g, n, i);
    if (!p) {
      if (i == 1) return VKP__ERR("input 1 (scale) is required");
      continue;
    }
    const char *what = i == 1 ? "scale" : "bias";
    VKP_RETURN_IF_ERROR(vkp__need_dtypes(p, what, VKP_OP_DTYPES_FLOAT));
    int32_t norm_rank = x->rank - (int32_t)axis;
    bool ok = p->rank <= norm_rank;
    for (int32_t d = 0; ok && d < p->rank; ++d) {
      int64_t want = x->shape[x->rank - p->rank + d];
      if (p->shape[d] != want && p->shape[d] != 1) ok = false;
    }
    if (!ok) {
      char sp[128];
      return VKP__ERR("%s '%s' %s does not broadcast to the normalised dims",
                      what, p->name, vkp__fmt(p, sp, sizeof sp));
    }
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

vkp_status_t vkp__eval_conv2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *w = in[1], *bias = n->n_inputs > 2 ? in[2] : NULL;
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);  // top, left, bottom, right
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int64_t group = vkp_node_int(n, "group");
  int64_t batch = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t m = w->shape[0], cg = w->shape[1], kh = w->shape[2], kw = w->shape[3];
  int64_t oh = out->shape[2], ow = out->shape[3], mg = m / group;
  bool f32 = x->dtype == VKP_DTYPE_FLOAT32 && w->dtype == VKP_DTYPE_FLOAT32;
#define VKP__CONV_LOOP(LOAD)                                                 \
  for (int64_t b = 0; b < batch; ++b)                                        \
    for (int64_t oc = 0; oc < m; ++oc) {                                     \
      int64_t c0 = (oc / mg) * cg; /* first input channel of the group */    \
      for (int64_t y = 0; y < oh; ++y)                                       \
        for (int64_t xo = 0; xo < ow; ++xo) {                                \
          double acc = bias ? vkp__get_f(bias, oc) : 0.0;                    \
          for (int64_t ic = 0; ic < cg; ++ic)                                \
            for (int64_t i = 0; i < kh; ++i) {                               \
              int64_t iy = y * strides[0] - pads[0] + i * dil[0];            \
              if (iy < 0 || iy >= h) continue;                               \
              int64_t xr = ((b * c + c0 + ic) * h + iy) * wd;                \
              int64_t wr = ((oc * cg + ic) * kh + i) * kw;                   \
              for (int64_t j = 0; j < kw; ++j) {                             \
                int64_t ix = xo * strides[1] - pads[1] + j * dil[1];         \
                if (ix < 0 || ix >= wd) continue;                            \
                acc += LOAD(x, xr + ix) * LOAD(w, wr + j);                   \
              }                                                              \
            }                                                                \
          vkp__put_f(out, ((b * m + oc) * oh + y) * ow + xo, acc);           \
        }                                                                    \
    }
  VKP__F32_OR_ANY(f32, VKP__CONV_LOOP);
#undef VKP__CONV_LOOP
  return NULL;
}

// Max and average pooling. A window tap is "in the input" when it lands on a
// real element, "in the padded area" when it lands inside the input grown by
// the pads; with ceil_mode the last window may reach past that and those taps
// count for nothing. A window with no tap in the input gives -inf (max) or 0
// (average).
vkp_status_t vkp__eval_pool2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *k, *pads, *strides, *dil;
  vkp_node_attr_ints(n, "kernel_shape", &k);
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  bool is_max = n->op == VKP_OP_MAX_POOL2D;
  bool include_pad = !is_max && vkp_node_int(n, "count_include_pad") != 0;
  int64_t planes = x->shape[0] * x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t oh = out->shape[2], ow = out->shape[3];
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
            double v = vkp__get_f(x, (p * h + iy) * wd + ix);
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
        vkp__put_f(out, (p * oh + y) * ow + xo, r);
      }
  return NULL;
}

vkp_status_t vkp__eval_global_avg_pool(const vkp_node_t *n,
                                       const vkp_tensor_t *const *in,
                                       vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = in[0];
  int64_t planes = x->shape[0] * x->shape[1];
  int64_t area = vkp__prod(x->shape, 2, x->rank);
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < area; ++i) sum += vkp__get_f(x, p * area + i);
    vkp__put_f(out, p, area ? sum / (double)area : 0.0);
  }
  return NULL;
}

vkp_status_t vkp__eval_batch_norm(const vkp_node_t *n,
                                  const vkp_tensor_t *const *in,
                                  vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1], *shift = in[2], *mean = in[3],
                     *var = in[4];
  double eps = vkp_node_float(n, "epsilon");
  int64_t batch = x->shape[0], c = x->shape[1];
  int64_t inner = vkp__prod(x->shape, 2, x->rank);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double inv = 1.0 / sqrt(vkp__get_f(var, ch) + eps);
      double mu = vkp__get_f(mean, ch), g = vkp__get_f(scale, ch),
             beta = vkp__get_f(shift, ch);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (b * c + ch) * inner + i;
        vkp__put_f(out, at, (vkp__get_f(x, at) - mu) * inv * g + beta);
      }
    }
  return NULL;
}

vkp_status_t vkp__eval_softmax(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  int64_t outer = vkp__prod(x->shape, 0, axis), len = x->shape[axis];
  int64_t inner = vkp__prod(x->shape, axis + 1, x->rank);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        double v = vkp__get_f(x, base + j * inner);
        if (v > mx) mx = v;
      }
      for (int64_t j = 0; j < len; ++j) sum += exp(vkp__get_f(x, base + j * inner) - mx);
      for (int64_t j = 0; j < len; ++j)
        vkp__put_f(out, base + j * inner, exp(vkp__get_f(x, base + j * inner) - mx) / sum);
    }
  return NULL;
}

vkp_status_t vkp__eval_layer_norm(const vkp_node_t *n,
                                  const vkp_tensor_t *const *in,
                                  vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1];
  const vkp_tensor_t *bias = n->n_inputs > 2 ? in[2] : NULL;
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  double eps = vkp_node_float(n, "epsilon");
  bool rms = vkp_node_int(n, "rms") != 0;
  int32_t norm_rank = x->rank - axis;
  const int64_t *norm_shape = x->shape + axis;
  int64_t outer = vkp__prod(x->shape, 0, axis);
  int64_t len = vkp__prod(x->shape, axis, x->rank);
  // scale and bias broadcast (right-aligned) to x.shape[axis:].
  int64_t ss[VKP_MAX_RANK], sbias[VKP_MAX_RANK] = {0};
  vkp__broadcast_strides(scale, norm_rank, ss);
  if (bias) vkp__broadcast_strides(bias, norm_rank, sbias);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t row = o * len;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len && !rms; ++j) mean += vkp__get_f(x, row + j);
    mean = len ? mean / (double)len : 0.0;
    for (int64_t j = 0; j < len; ++j) {
      double d = vkp__get_f(x, row + j) - mean;
      var += d * d;
    }
    var = len ? var / (double)len : 0.0;
    double inv = 1.0 / sqrt(var + eps);
    int64_t idx[VKP_MAX_RANK] = {0};
    for (int64_t j = 0; j < len; ++j) {
      double y = (vkp__get_f(x, row + j) - mean) * inv *
                 vkp__get_f(scale, vkp__dot(norm_rank, idx, ss));
      if (bias) y += vkp__get_f(bias, vkp__dot(norm_rank, idx, sbias));
      vkp__put_f(out, row + j, y);
      vkp__next_index(norm_rank, norm_shape, idx);
    }
  }
  return NULL;
}
