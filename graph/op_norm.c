// SPDX-License-Identifier: Apache-2.0
// Softmax relatives and normalisations (ONNX semantics, latest opsets):
// log_softmax and hardmax over one axis; instance_norm and group_norm over
// (groups of) channels of N x C x D1..Dn data; lp_norm over one axis;
// mean_variance_norm over a set of axes; lrn across channels. Schemas,
// inference and reference kernels (double precision, rounded once).
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas (log_softmax and hardmax share softmax's, graph/op_nn.c)

const vkp__attr_spec_t vkp__attrs_instance_norm[] = {
    VKP__ATTR_FLOAT("epsilon", 1e-5), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_group_norm[] = {
    VKP__ATTR("num_groups", INT), VKP__ATTR_FLOAT("epsilon", 1e-5), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_lp_norm[] = {
    VKP__ATTR_INT("axis", -1), VKP__ATTR_INT("p", 2), VKP__ATTR_END};
// axes defaults to [0, 2, 3] (ONNX), written by inference.
const vkp__attr_spec_t vkp__attrs_mean_variance_norm[] = {
    VKP__ATTR("axes", INTS), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_lrn[] = {
    VKP__ATTR("size", INT), VKP__ATTR_FLOAT("alpha", 1e-4),
    VKP__ATTR_FLOAT("beta", 0.75), VKP__ATTR_FLOAT("bias", 1.0), VKP__ATTR_END};

// The epsilon mean_variance_norm adds to the standard deviation (ONNX's
// function body of MeanVarianceNormalization).
#define VKP__MVN_EPSILON 1e-9

// ---------------------------------------------------------------------------
// Inference

static vkp_status_t vkp__need_rank(const vkp_value_t *x, int32_t min,
                                   const char *layout) {
  if (x->rank < min)
    return VKP__ERR("input '%s' needs rank >= %d (%s), has %d", x->name, (int)min,
                    layout, (int)x->rank);
  return NULL;
}

// instance_norm (one group per channel) and group_norm: x [N, C, ...],
// scale and bias [C].
vkp_status_t vkp__infer_group_norm(vkp_graph_t *g, vkp_node_t *n,
                                   vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_rank(x, 2, "N, C, spatial..."));
  int64_t c = x->shape[1];
  if (n->op == VKP_OP_GROUP_NORM) {
    int64_t groups = vkp_node_int(n, "num_groups");
    if (groups < 1 || c % groups != 0)
      return VKP__ERR("attribute 'num_groups' is %lld; it must be >= 1 and "
                      "divide the %lld channels",
                      (long long)groups, (long long)c);
  }
  static const char *const names[] = {"scale", "bias"};
  for (int32_t i = 1; i < 3; ++i) {
    const vkp_value_t *p = vkp__in(g, n, i);
    if (!p) return VKP__ERR("input %d (%s) is required", (int)i, names[i - 1]);
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, p));
    if (p->rank != 1 || p->shape[0] != c)
      return VKP__ERR("%s '%s' must have shape [%lld] (the channel count)",
                      names[i - 1], p->name, (long long)c);
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_lp_norm(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_rank(x, 1, "one axis to normalise"));
  int64_t axis = 0, p = vkp_node_int(n, "p");
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false,
                                     "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  if (p != 1 && p != 2)
    return VKP__ERR("attribute 'p' is %lld; must be 1 or 2", (long long)p);
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_mean_variance_norm(vkp_graph_t *g, vkp_node_t *n,
                                           vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const int64_t onnx_default[3] = {0, 2, 3};
  const int64_t *axes = onnx_default;
  int32_t count = 3;
  if (vkp_node_attr(n, "axes")) count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_lrn(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_rank(x, 2, "N, C, spatial..."));
  int64_t size = vkp_node_int(n, "size");
  if (size < 1)
    return VKP__ERR("attribute 'size' is %lld; must be >= 1", (long long)size);
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

// x viewed as [outer, len, inner] around `axis`.
static void vkp__axis_view(const vkp_tensor_t *x, int32_t axis, int64_t *outer,
                           int64_t *len, int64_t *inner) {
  *outer = vkp__prod(x->shape, 0, axis);
  *len = x->shape[axis];
  *inner = vkp__prod(x->shape, axis + 1, x->rank);
}

vkp_status_t vkp__eval_log_softmax(const vkp_node_t *n,
                                   const vkp_tensor_t *const *in,
                                   vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t outer, len, inner;
  vkp__axis_view(x, (int32_t)vkp_node_int(n, "axis"), &outer, &len, &inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        double v = vkp__get_f(x, base + j * inner);
        if (v > mx) mx = v;
      }
      for (int64_t j = 0; j < len; ++j) sum += exp(vkp__get_f(x, base + j * inner) - mx);
      double lse = mx + log(sum);
      for (int64_t j = 0; j < len; ++j)
        vkp__put_f(out, base + j * inner, vkp__get_f(x, base + j * inner) - lse);
    }
  return NULL;
}

// 1 at the first maximum along the axis (NaN counts as the maximum, as in
// NumPy's argmax), 0 elsewhere.
vkp_status_t vkp__eval_hardmax(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t outer, len, inner;
  vkp__axis_view(x, (int32_t)vkp_node_int(n, "axis"), &outer, &len, &inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i, best = 0;
      double mx = len ? vkp__get_f(x, base) : 0.0;
      for (int64_t j = 1; j < len && !isnan(mx); ++j) {
        double v = vkp__get_f(x, base + j * inner);
        if (isnan(v) || v > mx) mx = v, best = j;
      }
      for (int64_t j = 0; j < len; ++j)
        vkp__put_f(out, base + j * inner, j == best ? 1.0 : 0.0);
    }
  return NULL;
}

// Each (n, group) is a contiguous block of C / G channels x spatial
// elements: normalised by its own mean and variance, then scaled and
// shifted per channel.
vkp_status_t vkp__eval_group_norm(const vkp_node_t *n,
                                  const vkp_tensor_t *const *in,
                                  vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1], *bias = in[2];
  double eps = vkp_node_float(n, "epsilon");
  int64_t batch = x->shape[0], c = x->shape[1];
  int64_t groups = n->op == VKP_OP_GROUP_NORM ? vkp_node_int(n, "num_groups") : c;
  int64_t spatial = vkp__prod(x->shape, 2, x->rank);
  int64_t per_group = c / groups, len = per_group * spatial;
  for (int64_t r = 0; r < batch * groups; ++r) {
    int64_t row = r * len;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += vkp__get_f(x, row + j);
    mean = len ? mean / (double)len : 0.0;
    for (int64_t j = 0; j < len; ++j) {
      double d = vkp__get_f(x, row + j) - mean;
      var += d * d;
    }
    double inv = 1.0 / sqrt((len ? var / (double)len : 0.0) + eps);
    for (int64_t j = 0; j < len; ++j) {
      int64_t ch = (r % groups) * per_group + j / (spatial ? spatial : 1);
      double y = (vkp__get_f(x, row + j) - mean) * inv * vkp__get_f(scale, ch) +
                 vkp__get_f(bias, ch);
      vkp__put_f(out, row + j, y);
    }
  }
  return NULL;
}

// x / ||x||_p along the axis; a zero norm gives zeros (not 0 / 0).
vkp_status_t vkp__eval_lp_norm(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  bool l1 = vkp_node_int(n, "p") == 1;
  int64_t outer, len, inner;
  vkp__axis_view(x, (int32_t)vkp_node_int(n, "axis"), &outer, &len, &inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      double norm = 0;
      for (int64_t j = 0; j < len; ++j) {
        double v = vkp__get_f(x, base + j * inner);
        norm += l1 ? fabs(v) : v * v;
      }
      if (!l1) norm = sqrt(norm);
      for (int64_t j = 0; j < len; ++j) {
        double v = vkp__get_f(x, base + j * inner);
        vkp__put_f(out, base + j * inner, norm == 0.0 ? 0.0 : v / norm);
      }
    }
  return NULL;
}

// (x - mean) / (std + 1e-9) over the axes (population variance).
vkp_status_t vkp__eval_mean_variance_norm(const vkp_node_t *n,
                                          const vkp_tensor_t *const *in,
                                          vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *axes;
  int32_t n_axes = vkp_node_attr_ints(n, "axes", &axes);  // sorted, positive
  vkp__axis_split_t sp;
  vkp__split_axes(x, axes, n_axes, &sp);
  const int32_t n_red = sp.n_red;
  const int64_t *red_shape = sp.red_shape, *red_strides = sp.red_strides;
  int64_t n_rows = vkp__prod(sp.kept_shape, 0, sp.n_kept);
  int64_t len = vkp__prod(red_shape, 0, n_red);
  int64_t kidx[VKP_MAX_RANK] = {0};
  for (int64_t o = 0; o < n_rows; ++o) {
    int64_t base = vkp__dot(sp.n_kept, kidx, sp.kept_strides);
    int64_t ridx[VKP_MAX_RANK] = {0};
    double mean = 0, var = 0;
    for (int64_t r = 0; r < len; ++r) {
      mean += vkp__get_f(x, base + vkp__dot(n_red, ridx, red_strides));
      vkp__next_index(n_red, red_shape, ridx);
    }
    mean /= (double)len;  // (len 0: no element, nothing is written)
    for (int64_t r = 0; r < len; ++r) {
      double d = vkp__get_f(x, base + vkp__dot(n_red, ridx, red_strides)) - mean;
      var += d * d;
      vkp__next_index(n_red, red_shape, ridx);
    }
    double den = sqrt(var / (double)len) + VKP__MVN_EPSILON;
    for (int64_t r = 0; r < len; ++r) {
      int64_t at = base + vkp__dot(n_red, ridx, red_strides);
      vkp__put_f(out, at, (vkp__get_f(x, at) - mean) / den);
      vkp__next_index(n_red, red_shape, ridx);
    }
    vkp__next_index(sp.n_kept, sp.kept_shape, kidx);
  }
  return NULL;
}

// y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
// the window [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the
// channels.
vkp_status_t vkp__eval_lrn(const vkp_node_t *n, const vkp_tensor_t *const *in,
                           vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t size = vkp_node_int(n, "size");
  double alpha = vkp_node_float(n, "alpha"), beta = vkp_node_float(n, "beta"),
         bias = vkp_node_float(n, "bias");
  int64_t batch = x->shape[0], c = x->shape[1];
  int64_t spatial = vkp__prod(x->shape, 2, x->rank);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      int64_t lo = ch - before < 0 ? 0 : ch - before;
      int64_t hi = ch + after >= c ? c - 1 : ch + after;
      for (int64_t s = 0; s < spatial; ++s) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          double v = vkp__get_f(x, (b * c + k) * spatial + s);
          sq += v * v;
        }
        int64_t at = (b * c + ch) * spatial + s;
        vkp__put_f(out, at,
                   vkp__get_f(x, at) / pow(bias + alpha / (double)size * sq, beta));
      }
    }
  return NULL;
}
