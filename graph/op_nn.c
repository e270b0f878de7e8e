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
const vkp__attr_spec_t vkp__attrs_conv_transpose[] = {
    VKP__ATTR("pads", INTS), VKP__ATTR("strides", INTS),
    VKP__ATTR("dilations", INTS), VKP__ATTR("output_padding", INTS),
    VKP__ATTR_INT("group", 1), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_max_pool2d[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("dilations", INTS),
    VKP__ATTR_INT("ceil_mode", 0), VKP__ATTR_INT("storage_order", 0),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_avg_pool2d[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("dilations", INTS),
    VKP__ATTR_INT("ceil_mode", 0), VKP__ATTR_INT("count_include_pad", 0),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_lp_pool[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("dilations", INTS),
    VKP__ATTR_INT("ceil_mode", 0), VKP__ATTR_INT("p", 2), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_max_unpool[] = {
    VKP__ATTR("kernel_shape", INTS), VKP__ATTR("pads", INTS),
    VKP__ATTR("strides", INTS), VKP__ATTR("output_shape", INTS), VKP__ATTR_END};
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

// Window ops take 1, 2 or 3 spatial dims: pads hold the S begins, then the
// S ends (ONNX's order); strides, dilations, kernel_shape S entries each.
static const int64_t vkp__zeros[6] = {0, 0, 0, 0, 0, 0};
static const int64_t vkp__ones[3] = {1, 1, 1};

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

// The spatial dim count of window op input `x` (rank 3 to 5).
static vkp_status_t vkp__spatial_dims(const vkp_value_t *x, int32_t *out_s) {
  if (x->rank < 3 || x->rank > 5)
    return VKP__ERR("input '%s' must be N, C and 1 to 3 spatial dims (rank 3 "
                    "to 5), has rank %d",
                    x->name, (int)x->rank);
  *out_s = x->rank - 2;
  return NULL;
}

// Reads and checks pads, strides and dilations for `s` spatial dims.
static vkp_status_t vkp__window_attrs(vkp_node_t *n, int32_t s,
                                      const int64_t **pads,
                                      const int64_t **strides,
                                      const int64_t **dil) {
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 2 * s, vkp__zeros, pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", s, vkp__ones, strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", s, vkp__ones, dil));
  VKP_RETURN_IF_ERROR(vkp__check_positive(*pads, 2 * s, "pads", true));
  VKP_RETURN_IF_ERROR(vkp__check_positive(*strides, s, "strides", false));
  return vkp__check_positive(*dil, s, "dilations", false);
}

// Checks conv / conv_transpose weight and bias: weight [M, C/G, k...] for a
// convolution, [C, M/G, k...] transposed; *out_m gets M.
static vkp_status_t vkp__conv_operands(vkp_graph_t *g, vkp_node_t *n,
                                       bool transposed, int64_t *out_m) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1),
                    *b = vkp__in(g, n, 2);
  int64_t group = vkp_node_int(n, "group");
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, w));
  if (w->rank != x->rank)
    return VKP__ERR("weight '%s' has rank %d; the input has rank %d", w->name,
                    (int)w->rank, (int)x->rank);
  if (group < 1) return VKP__ERR("attribute 'group' is %lld; must be >= 1", (long long)group);
  int64_t c = x->shape[1], m;
  if (transposed) {
    if (w->shape[0] != c || c % group != 0)
      return VKP__ERR("input has %lld channels; weight '%s' has %lld (must be "
                      "equal and divisible by group %lld)",
                      (long long)c, w->name, (long long)w->shape[0], (long long)group);
    m = w->shape[1] * group;
  } else {
    m = w->shape[0];
    if (w->shape[1] * group != c)
      return VKP__ERR("input has %lld channels but weight expects %lld x group %lld",
                      (long long)c, (long long)w->shape[1], (long long)group);
    if (m % group != 0)
      return VKP__ERR("%lld output channels are not divisible by group %lld",
                      (long long)m, (long long)group);
  }
  if (b) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, b));
    if (b->rank != 1 || b->shape[0] != m)
      return VKP__ERR("bias '%s' must have shape [%lld]", b->name, (long long)m);
  }
  *out_m = m;
  return NULL;
}

vkp_status_t vkp__infer_conv2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1);
  int32_t s = 0;
  const int64_t *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__spatial_dims(x, &s));
  VKP_RETURN_IF_ERROR(vkp__window_attrs(n, s, &pads, &strides, &dil));
  int64_t m;
  VKP_RETURN_IF_ERROR(vkp__conv_operands(g, n, false, &m));
  int64_t shape[5] = {x->shape[0], m};
  for (int32_t i = 0; i < s; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[s + i],
                                        w->shape[2 + i], strides[i], dil[i],
                                        false, &shape[2 + i]));
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// Output size of a transposed convolution along one dim: the input's
// stride-spaced taps, each spreading a dilated kernel, less the pads, plus
// output_padding.
vkp_status_t vkp__infer_conv_transpose(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1);
  int32_t s = 0;
  const int64_t *pads, *strides, *dil, *opad;
  VKP_RETURN_IF_ERROR(vkp__spatial_dims(x, &s));
  VKP_RETURN_IF_ERROR(vkp__window_attrs(n, s, &pads, &strides, &dil));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "output_padding", s, vkp__zeros, &opad));
  VKP_RETURN_IF_ERROR(vkp__check_positive(opad, s, "output_padding", true));
  int64_t m;
  VKP_RETURN_IF_ERROR(vkp__conv_operands(g, n, true, &m));
  int64_t shape[5] = {x->shape[0], m};
  for (int32_t i = 0; i < s; ++i) {
    if (opad[i] >= strides[i] && opad[i] >= dil[i])
      return VKP__ERR("output_padding %lld must be smaller than the stride %lld "
                      "or the dilation %lld",
                      (long long)opad[i], (long long)strides[i], (long long)dil[i]);
    int64_t full = (x->shape[2 + i] - 1) * strides[i] +
                   (w->shape[2 + i] - 1) * dil[i] + 1 + opad[i];
    shape[2 + i] = full - pads[i] - pads[s + i];
    if (x->shape[2 + i] < 1 || shape[2 + i] < 1)
      return VKP__ERR("spatial dim %d: output size %lld (input %lld, pads %lld "
                      "+ %lld) is not positive",
                      (int)i, (long long)shape[2 + i], (long long)x->shape[2 + i],
                      (long long)pads[i], (long long)pads[s + i]);
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// max_pool2d, avg_pool2d and lp_pool (any of 1-3 spatial dims despite the
// historical names); max_pool2d's optional second output is the int64
// flat index of each maximum.
vkp_status_t vkp__infer_pool2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int32_t s = 0;
  const int64_t *k, *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__spatial_dims(x, &s));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "kernel_shape", s, NULL, &k));
  VKP_RETURN_IF_ERROR(vkp__check_positive(k, s, "kernel_shape", false));
  VKP_RETURN_IF_ERROR(vkp__window_attrs(n, s, &pads, &strides, &dil));
  for (int32_t i = 0; i < 2 * s; ++i)
    if (pads[i] >= k[i % s] * dil[i % s] && pads[i] > 0)
      return VKP__ERR("pad %lld is not smaller than the window %lld",
                      (long long)pads[i], (long long)k[i % s]);
  if (n->op == VKP_OP_MAX_POOL2D) {
    int64_t order = vkp_node_int(n, "storage_order");
    if (order != 0 && order != 1)
      return VKP__ERR("attribute 'storage_order' is %lld; must be 0 or 1",
                      (long long)order);
  }
  if (n->op == VKP_OP_LP_POOL && vkp_node_int(n, "p") < 1)
    return VKP__ERR("attribute 'p' is %lld; must be >= 1",
                    (long long)vkp_node_int(n, "p"));
  bool ceil = vkp_node_int(n, "ceil_mode") != 0;
  int64_t shape[5] = {x->shape[0], x->shape[1]};
  for (int32_t i = 0; i < s; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[s + i],
                                        k[i], strides[i], dil[i], ceil,
                                        &shape[2 + i]));
  vkp__set_out(out, x->dtype, x->rank, shape);
  if (n->n_outputs > 1) {
    if (n->op != VKP_OP_MAX_POOL2D)
      return VKP__ERR("%s has one output", vkp_op_name(n->op));
    vkp__set_out(vkp__out(g, n, 1), VKP_DTYPE_INT64, x->rank, shape);
  }
  return NULL;
}

// max_unpool (ONNX MaxUnpool): the pooled x [N, C, in...] and its int64
// indices (flat offsets into the unpooled [N, C, u...], u = (in - 1) *
// stride + kernel - pads) scatter into zeros of that shape, placed at the
// start of a larger output_shape when one is given (pads are then ignored).
// Canonical form: output_shape always set, pads zero when it was given.
vkp_status_t vkp__infer_max_unpool(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1);
  int32_t s = 0;
  const int64_t *k, *pads, *strides;
  VKP_RETURN_IF_ERROR(vkp__spatial_dims(x, &s));
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(idx, "indices", VKP_DTYPE_SET(VKP_DTYPE_INT64)));
  char a[128], b[128];
  if (idx->rank != x->rank ||
      memcmp(idx->shape, x->shape, sizeof(int64_t) * (size_t)x->rank) != 0)
    return VKP__ERR("indices '%s' %s must have the shape of '%s' %s", idx->name,
                    vkp__fmt(idx, a, sizeof a), x->name, vkp__fmt(x, b, sizeof b));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "kernel_shape", s, NULL, &k));
  VKP_RETURN_IF_ERROR(vkp__check_positive(k, s, "kernel_shape", false));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", s, vkp__ones, &strides));
  VKP_RETURN_IF_ERROR(vkp__check_positive(strides, s, "strides", false));
  const int64_t *given = NULL;
  int32_t n_given = vkp_node_attr_ints(n, "output_shape", &given);
  if (n_given >= 0 && vkp_node_attr(n, "output_shape")) {
    if (n_given != x->rank)
      return VKP__ERR("attribute 'output_shape' has %d entries; input '%s' has rank %d",
                      (int)n_given, x->name, (int)x->rank);
    VKP_RETURN_IF_ERROR(vkp__set_ints(n, "pads", 2 * s, vkp__zeros));
  }
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 2 * s, vkp__zeros, &pads));
  VKP_RETURN_IF_ERROR(vkp__check_positive(pads, 2 * s, "pads", true));
  int64_t shape[VKP_MAX_RANK] = {x->shape[0], x->shape[1]};
  for (int32_t i = 0; i < s; ++i) {
    shape[2 + i] = (x->shape[2 + i] - 1) * strides[i] + k[i] - pads[i] - pads[s + i];
    if (shape[2 + i] < 0)
      return VKP__ERR("the unpooled dim %d is %lld (pads larger than the output)",
                      (int)(2 + i), (long long)shape[2 + i]);
  }
  if (vkp_node_attr(n, "output_shape")) {
    vkp_node_attr_ints(n, "output_shape", &given);
    for (int32_t d = 0; d < x->rank; ++d)
      if (given[d] < shape[d] || (d < 2 && given[d] != shape[d]))
        return VKP__ERR("output_shape entry %d is %lld; the unpooled shape needs %s%lld",
                        (int)d, (long long)given[d], d < 2 ? "" : "at least ",
                        (long long)shape[d]);
    memcpy(shape, given, sizeof(int64_t) * (size_t)x->rank);
  } else {
    VKP_RETURN_IF_ERROR(vkp__set_ints(n, "output_shape", x->rank, shape));
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
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

// The geometry of a window op seen as 3-D: 1-D and 2-D ops get leading unit
// dims (1 x 1 x L, 1 x H x W) and no padding along them.
typedef struct vkp__win3_t {
  int64_t in[3], out[3], k[3], st[3], dil[3], pb[3], pe[3];
} vkp__win3_t;

// `kernel`: the S window sizes (a weight's trailing dims or kernel_shape).
static void vkp__win3(const vkp_node_t *n, const vkp_tensor_t *x,
                      const vkp_tensor_t *y, const int64_t *kernel,
                      vkp__win3_t *w) {
  int32_t s = x->rank - 2, lead = 3 - s;
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  for (int32_t d = 0; d < 3; ++d) {
    int32_t i = d - lead;
    bool real = i >= 0;
    w->in[d] = real ? x->shape[2 + i] : 1;
    w->out[d] = real ? y->shape[2 + i] : 1;
    w->k[d] = real ? kernel[i] : 1;
    w->st[d] = real ? strides[i] : 1;
    w->dil[d] = real ? dil[i] : 1;
    w->pb[d] = real ? pads[i] : 0;
    w->pe[d] = real ? pads[s + i] : 0;
  }
}

vkp_status_t vkp__eval_conv2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *w = in[1], *bias = n->n_inputs > 2 ? in[2] : NULL;
  vkp__win3_t g3;
  vkp__win3(n, x, out, w->shape + 2, &g3);
  int64_t group = vkp_node_int(n, "group");
  int64_t batch = x->shape[0], c = x->shape[1], m = w->shape[0], cg = w->shape[1];
  const int64_t *in3 = g3.in, *o3 = g3.out, *k3 = g3.k, *st = g3.st, *dl = g3.dil,
                *pb = g3.pb;
  int64_t in_plane = in3[0] * in3[1] * in3[2], taps = k3[0] * k3[1] * k3[2];
  int64_t mg = m / group;
  bool f32 = x->dtype == VKP_DTYPE_FLOAT32 && w->dtype == VKP_DTYPE_FLOAT32;
#define VKP__CONV_LOOP(LOAD)                                                   \
  for (int64_t b = 0; b < batch; ++b)                                          \
    for (int64_t oc = 0; oc < m; ++oc) {                                       \
      int64_t c0 = (oc / mg) * cg; /* first input channel of the group */      \
      int64_t at = (b * m + oc) * o3[0] * o3[1] * o3[2];                       \
      for (int64_t z = 0; z < o3[0]; ++z)                                      \
        for (int64_t y = 0; y < o3[1]; ++y)                                    \
          for (int64_t xo = 0; xo < o3[2]; ++xo) {                             \
            double acc = bias ? vkp__get_f(bias, oc) : 0.0;                    \
            for (int64_t ic = 0; ic < cg; ++ic) {                              \
              int64_t xc = (b * c + c0 + ic) * in_plane;                       \
              int64_t wc = (oc * cg + ic) * taps;                              \
              for (int64_t i0 = 0; i0 < k3[0]; ++i0) {                         \
                int64_t iz = z * st[0] - pb[0] + i0 * dl[0];                   \
                if (iz < 0 || iz >= in3[0]) continue;                          \
                for (int64_t i = 0; i < k3[1]; ++i) {                          \
                  int64_t iy = y * st[1] - pb[1] + i * dl[1];                  \
                  if (iy < 0 || iy >= in3[1]) continue;                        \
                  int64_t xr = xc + (iz * in3[1] + iy) * in3[2];               \
                  int64_t wr = wc + (i0 * k3[1] + i) * k3[2];                  \
                  for (int64_t j = 0; j < k3[2]; ++j) {                        \
                    int64_t ix = xo * st[2] - pb[2] + j * dl[2];               \
                    if (ix < 0 || ix >= in3[2]) continue;                      \
                    acc += LOAD(x, xr + ix) * LOAD(w, wr + j);                 \
                  }                                                            \
                }                                                              \
              }                                                                \
            }                                                                  \
            vkp__put_f(out, at++, acc);                                        \
          }                                                                    \
    }
  VKP__F32_OR_ANY(f32, VKP__CONV_LOOP);
#undef VKP__CONV_LOOP
  return NULL;
}

// The transposed convolution as a gather: output position o along a dim
// takes input position i through kernel tap t when
// i * stride + t * dilation == o + pad_begin.
vkp_status_t vkp__eval_conv_transpose(const vkp_node_t *n,
                                      const vkp_tensor_t *const *in,
                                      vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *w = in[1], *bias = n->n_inputs > 2 ? in[2] : NULL;
  vkp__win3_t g3;
  vkp__win3(n, x, out, w->shape + 2, &g3);
  int64_t group = vkp_node_int(n, "group");
  int64_t batch = x->shape[0], c = x->shape[1], mg = w->shape[1], m = mg * group;
  int64_t cg = c / group;
  const int64_t *in3 = g3.in, *o3 = g3.out, *k3 = g3.k, *st = g3.st, *dl = g3.dil,
                *pb = g3.pb;
  int64_t in_plane = in3[0] * in3[1] * in3[2], taps = k3[0] * k3[1] * k3[2];
  int64_t at = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oc = 0; oc < m; ++oc) {
      int64_t gi = oc / mg, ocg = oc % mg;
      for (int64_t z = 0; z < o3[0]; ++z)
        for (int64_t y = 0; y < o3[1]; ++y)
          for (int64_t xo = 0; xo < o3[2]; ++xo) {
            double acc = bias ? vkp__get_f(bias, oc) : 0.0;
            for (int64_t i0 = 0; i0 < k3[0]; ++i0) {
              int64_t tz = z + pb[0] - i0 * dl[0];
              if (tz < 0 || tz % st[0] || tz / st[0] >= in3[0]) continue;
              for (int64_t i = 0; i < k3[1]; ++i) {
                int64_t ty = y + pb[1] - i * dl[1];
                if (ty < 0 || ty % st[1] || ty / st[1] >= in3[1]) continue;
                for (int64_t j = 0; j < k3[2]; ++j) {
                  int64_t tx = xo + pb[2] - j * dl[2];
                  if (tx < 0 || tx % st[2] || tx / st[2] >= in3[2]) continue;
                  int64_t sp = ((tz / st[0]) * in3[1] + ty / st[1]) * in3[2] + tx / st[2];
                  int64_t tap = (i0 * k3[1] + i) * k3[2] + j;
                  for (int64_t ic = 0; ic < cg; ++ic) {
                    int64_t ci = gi * cg + ic;
                    acc += vkp__get_f(x, (b * c + ci) * in_plane + sp) *
                           vkp__get_f(w, (ci * mg + ocg) * taps + tap);
                  }
                }
              }
            }
            vkp__put_f(out, at++, acc);
          }
    }
  return NULL;
}

// Max, average and Lp pooling. A window tap is "in the input" when it
// lands on a real element, "in the padded area" when it lands inside the
// input grown by the pads; with ceil_mode the last window may reach past
// that and those taps count for nothing. A window with no tap in the input
// gives -inf (max; the lowest value for integers) or 0 (average, Lp). max_pool2d's indices are flat
// offsets into x, the spatial dims row-major (storage_order 0) or
// column-major (1); the first maximum wins.
vkp_status_t vkp__eval_pool2d(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *k;
  vkp_node_attr_ints(n, "kernel_shape", &k);
  vkp__win3_t g3;
  vkp__win3(n, x, out, k, &g3);
  const int64_t *in3 = g3.in, *o3 = g3.out, *k3 = g3.k, *st = g3.st, *dl = g3.dil,
                *pb = g3.pb, *pe = g3.pe;
  bool is_max = n->op == VKP_OP_MAX_POOL2D, is_lp = n->op == VKP_OP_LP_POOL;
  bool include_pad = n->op == VKP_OP_AVG_POOL2D && vkp_node_int(n, "count_include_pad") != 0;
  double p = is_lp ? (double)vkp_node_int(n, "p") : 1.0;
  vkp_tensor_t *indices = is_max && n->n_outputs > 1 ? &out[1] : NULL;
  bool col_major = indices && vkp_node_int(n, "storage_order") != 0;
  int64_t planes = x->shape[0] * x->shape[1], in_plane = in3[0] * in3[1] * in3[2];
  int64_t at = 0;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t z = 0; z < o3[0]; ++z)
      for (int64_t y = 0; y < o3[1]; ++y)
        for (int64_t xo = 0; xo < o3[2]; ++xo, ++at) {
          double best = -INFINITY, sum = 0;
          int64_t real = 0, padded = 0, best_at = -1;
          for (int64_t i0 = 0; i0 < k3[0]; ++i0) {
            int64_t iz = z * st[0] - pb[0] + i0 * dl[0];
            if (iz >= in3[0] + pe[0]) continue;
            for (int64_t i = 0; i < k3[1]; ++i) {
              int64_t iy = y * st[1] - pb[1] + i * dl[1];
              if (iy >= in3[1] + pe[1]) continue;
              for (int64_t j = 0; j < k3[2]; ++j) {
                int64_t ix = xo * st[2] - pb[2] + j * dl[2];
                if (ix >= in3[2] + pe[2]) continue;
                ++padded;
                if (iz < 0 || iz >= in3[0] || iy < 0 || iy >= in3[1] || ix < 0 ||
                    ix >= in3[2])
                  continue;
                ++real;
                int64_t sp = (iz * in3[1] + iy) * in3[2] + ix;
                double v = vkp__get_f(x, pl * in_plane + sp);
                if (is_lp) {
                  sum += pow(fabs(v), p);
                  continue;
                }
                sum += v;
                if (isnan(best)) continue;  // NaN wins, as in NumPy's max
                if (isnan(v) || v > best || best_at < 0) {
                  best = v;
                  best_at = col_major ? iz + (iy + ix * in3[1]) * in3[0] : sp;
                }
              }
            }
          }
          double r;
          if (is_max) r = best;
          else if (is_lp) r = pow(sum, 1.0 / p);
          else r = (include_pad ? padded : real) ? sum / (double)(include_pad ? padded : real) : 0.0;
          // An integer maximum over no tap: the type's lowest value.
          if (is_max && best_at < 0 && !vkp_dtype_is_float(out->dtype))
            vkp__put_i(out, at, out->dtype == VKP_DTYPE_INT8 ? -128 : 0);
          else
            vkp__put_f(out, at, r);
          if (indices)
            vkp__put_i(indices, at, best_at < 0 ? -1 : pl * in_plane + best_at);
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

vkp_status_t vkp__eval_max_unpool(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                  vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1];
  const int64_t *k, *pads, *strides;
  vkp_node_attr_ints(n, "kernel_shape", &k);
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  int32_t s = x->rank - 2;
  int64_t u[VKP_MAX_RANK] = {x->shape[0], x->shape[1]};
  for (int32_t i = 0; i < s; ++i)
    u[2 + i] = (x->shape[2 + i] - 1) * strides[i] + k[i] - pads[i] - pads[s + i];
  int64_t u_count = vkp__prod(u, 0, x->rank), count = vkp__prod(out->shape, 0, out->rank);
  int64_t out_strides[VKP_MAX_RANK];
  vkp__strides(out, out_strides);
  for (int64_t i = 0; i < count; ++i) vkp__put_f(out, i, 0.0);
  int64_t n_in = vkp__prod(x->shape, 0, x->rank);
  for (int64_t i = 0; i < n_in; ++i) {
    int64_t at = vkp__get_i(idx, i);
    if (at < 0 || at >= u_count)
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "index %lld at %lld is outside the %lld unpooled elements",
                             (long long)at, (long long)i, (long long)u_count);
    // The offset in the unpooled shape, moved into the output's.
    int64_t dst = 0, rest = at;
    for (int32_t d = x->rank - 1; d >= 0; --d) {
      dst += (rest % u[d]) * out_strides[d];
      rest /= u[d];
    }
    vkp__put_f(out, dst, vkp__get_f(x, i));
  }
  return NULL;
}
