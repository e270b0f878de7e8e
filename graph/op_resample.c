// SPDX-License-Identifier: Apache-2.0
// Padding, resampling and layout: pad, resize, depth_to_space,
// space_to_depth, tile, expand, trilu, eye_like. Schemas, inference,
// reference kernels, and the index plans (graph/resample.h) that the code
// generators share with the kernels here.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"
#include "graph/resample.h"

// The most taps an antialiased resize window may span along one axis.
#define VKP__RESIZE_MAX_TAPS (1 << 20)

// ---------------------------------------------------------------------------
// Schemas

// pads: [begin..., end...], one pair per dim (negative: crop).
const vkp__attr_spec_t vkp__attrs_pad[] = {
    VKP__ATTR("pads", INTS), VKP__ATTR_STRING("mode", "constant"),
    VKP__ATTR_FLOAT("value", 0.0), VKP__ATTR_END};
// scales: one per dim; sizes: the output shape (written by inference when
// absent); roi: [start..., end...] for tf_crop_and_resize.
const vkp__attr_spec_t vkp__attrs_resize[] = {
    VKP__ATTR_STRING("mode", "nearest"),
    VKP__ATTR_STRING("coordinate_transformation_mode", "half_pixel"),
    VKP__ATTR_STRING("nearest_mode", "round_prefer_floor"),
    VKP__ATTR_FLOAT("cubic_coeff_a", -0.75),
    VKP__ATTR_INT("exclude_outside", 0),
    VKP__ATTR_FLOAT("extrapolation_value", 0.0),
    VKP__ATTR_INT("antialias", 0),
    VKP__ATTR("scales", FLOATS),
    VKP__ATTR("sizes", INTS),
    VKP__ATTR("roi", FLOATS),
    VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_depth_to_space[] = {
    VKP__ATTR("blocksize", INT), VKP__ATTR_STRING("mode", "DCR"), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_space_to_depth[] = {VKP__ATTR("blocksize", INT),
                                                      VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_tile[] = {VKP__ATTR("repeats", INTS),
                                            VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_expand[] = {VKP__ATTR("shape", INTS),
                                              VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_trilu[] = {
    VKP__ATTR_INT("upper", 1), VKP__ATTR_INT("k", 0), VKP__ATTR_END};
// dtype: the output's (absent: the input's).
const vkp__attr_spec_t vkp__attrs_eye_like[] = {
    VKP__ATTR("dtype", STRING), VKP__ATTR_INT("k", 0), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

static bool vkp__str_in(const char *s, const char *const *set, size_t n) {
  for (size_t i = 0; s && i < n; ++i)
    if (strcmp(s, set[i]) == 0) return true;
  return false;
}

vkp_status_t vkp__infer_pad(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
  const char *mode = vkp_node_string(n, "mode");
  if (!vkp__str_in(mode, modes, 4))
    return VKP__ERR("attribute 'mode' is '%s'; expected constant, reflect, "
                    "edge or wrap", mode ? mode : "");
  const int64_t *pads;
  if (!vkp_node_attr(n, "pads")) return VKP__ERR("attribute 'pads' is required");
  int32_t count = vkp_node_attr_ints(n, "pads", &pads);
  if (count != 2 * x->rank)
    return VKP__ERR("attribute 'pads' has %d entries for rank %d", (int)count,
                    (int)x->rank);
  int64_t shape[VKP_MAX_RANK];
  bool constant = strcmp(mode, "constant") == 0;
  for (int32_t d = 0; d < x->rank; ++d) {
    int64_t b = pads[d], e = pads[x->rank + d];
    if (b < -x->shape[d] || e < -x->shape[d] || b > (INT64_C(1) << 40) ||
        e > (INT64_C(1) << 40))
      return VKP__ERR("pads %lld, %lld of dim %d (size %lld) are out of range",
                      (long long)b, (long long)e, (int)d, (long long)x->shape[d]);
    shape[d] = x->shape[d] + b + e;
    if (shape[d] < 0)
      return VKP__ERR("pads %lld, %lld crop dim %d (size %lld) below zero",
                      (long long)b, (long long)e, (int)d, (long long)x->shape[d]);
    int64_t kept = x->shape[d] - (b < 0 ? -b : 0) - (e < 0 ? -e : 0);
    if (!constant && shape[d] > 0 && kept <= 0)
      return VKP__ERR("%s padding of dim %d needs input elements, and none "
                      "are left", mode, (int)d);
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_resize(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  static const char *const ctms[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                        "floor", "ceil"};
  const char *mode = vkp_node_string(n, "mode");
  const char *ctm = vkp_node_string(n, "coordinate_transformation_mode");
  const char *nm = vkp_node_string(n, "nearest_mode");
  if (!vkp__str_in(mode, modes, 3))
    return VKP__ERR("attribute 'mode' is '%s'; expected nearest, linear or cubic",
                    mode ? mode : "");
  if (!vkp__str_in(ctm, ctms, sizeof ctms / sizeof *ctms))
    return VKP__ERR("attribute 'coordinate_transformation_mode' is '%s', not "
                    "one ONNX defines", ctm ? ctm : "");
  if (!vkp__str_in(nm, nearest, 4))
    return VKP__ERR("attribute 'nearest_mode' is '%s', not one ONNX defines",
                    nm ? nm : "");
  const vkp_attr_t *scales = vkp_node_attr(n, "scales");
  if (!scales || scales->count != x->rank)
    return VKP__ERR("attribute 'scales' needs %d entries (one per dim)",
                    (int)x->rank);
  const vkp_attr_t *roi = vkp_node_attr(n, "roi");
  if (roi && roi->count != 2 * x->rank)
    return VKP__ERR("attribute 'roi' has %d entries for rank %d", (int)roi->count,
                    (int)x->rank);
  int64_t shape[VKP_MAX_RANK];
  const int64_t *sizes;
  int32_t n_sizes = vkp_node_attr_ints(n, "sizes", &sizes);
  if (vkp_node_attr(n, "sizes") && n_sizes != x->rank)
    return VKP__ERR("attribute 'sizes' has %d entries for rank %d", (int)n_sizes,
                    (int)x->rank);
  for (int32_t d = 0; d < x->rank; ++d) {
    double s = scales->floats[d];
    if (!(s > 0) || !isfinite(s))
      return VKP__ERR("scale %g of dim %d is not positive", s, (int)d);
    // Antialiased downsampling widens the window by 1 / scale: bounded, so
    // the window's taps fit the kernels' int32 counts.
    if (vkp_node_int(n, "antialias") && s < 1.0 &&
        strcmp(vkp_node_string(n, "mode"), "nearest") != 0 &&
        4.0 / s > (double)VKP__RESIZE_MAX_TAPS)
      return VKP__ERR("antialiased downsampling of dim %d by %g needs a window of about "
                      "%.3g taps (at most %d)", (int)d, s, 4.0 / s, VKP__RESIZE_MAX_TAPS);
    double len = floor(s * (double)x->shape[d]);
    // The bound before the conversion (a double past int64's range does not
    // convert).
    if (!n_sizes && len > (double)(INT64_C(1) << 40))
      return VKP__ERR("dim %d resizes to %g elements", (int)d, len);
    shape[d] = n_sizes ? sizes[d] : (int64_t)len;
    if (shape[d] < 0) return VKP__ERR("dim %d resizes to %g elements", (int)d, len);
    if (shape[d] > 0 && x->shape[d] == 0)
      return VKP__ERR("dim %d is empty and cannot be resized to %lld", (int)d,
                      (long long)shape[d]);
  }
  if (!n_sizes) VKP_RETURN_IF_ERROR(vkp__set_ints(n, "sizes", x->rank, shape));
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_depth_to_space(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t bs = vkp_node_int(n, "blocksize");
  if (!vkp_node_attr(n, "blocksize") || bs < 1)
    return VKP__ERR("attribute 'blocksize' must be positive");
  if (x->rank != 4) return VKP__ERR("input has rank %d; expected 4 (NCHW)", (int)x->rank);
  int64_t shape[4] = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]};
  if (n->op == VKP_OP_DEPTH_TO_SPACE) {
    static const char *const modes[] = {"DCR", "CRD"};
    const char *mode = vkp_node_string(n, "mode");
    if (!vkp__str_in(mode, modes, 2))
      return VKP__ERR("attribute 'mode' is '%s'; expected DCR or CRD", mode ? mode : "");
    if (x->shape[1] % (bs * bs))
      return VKP__ERR("%lld channels do not split into blocks of %lld x %lld",
                      (long long)x->shape[1], (long long)bs, (long long)bs);
    shape[1] /= bs * bs;
    shape[2] *= bs;
    shape[3] *= bs;
  } else {
    if (x->shape[2] % bs || x->shape[3] % bs)
      return VKP__ERR("spatial dims %lld x %lld are not multiples of blocksize %lld",
                      (long long)x->shape[2], (long long)x->shape[3], (long long)bs);
    shape[1] *= bs * bs;
    shape[2] /= bs;
    shape[3] /= bs;
  }
  vkp__set_out(out, x->dtype, 4, shape);
  return NULL;
}

vkp_status_t vkp__infer_tile(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *rep;
  int32_t count = vkp_node_attr_ints(n, "repeats", &rep);
  if (!vkp_node_attr(n, "repeats") || count != x->rank)
    return VKP__ERR("attribute 'repeats' needs %d entries (one per dim)", (int)x->rank);
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0; d < x->rank; ++d) {
    if (rep[d] < 0 || rep[d] > (INT64_C(1) << 31))
      return VKP__ERR("repeat %lld of dim %d is out of range", (long long)rep[d], (int)d);
    shape[d] = x->shape[d] * rep[d];
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// ONNX Expand: the input broadcast with `shape` (NumPy rules, both ways).
vkp_status_t vkp__infer_expand(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *spec;
  int32_t count = vkp_node_attr_ints(n, "shape", &spec);
  if (!vkp_node_attr(n, "shape")) return VKP__ERR("attribute 'shape' is required");
  if (count > VKP_MAX_RANK)
    return VKP__ERR("attribute 'shape' has %d entries (at most %d)", (int)count,
                    VKP_MAX_RANK);
  vkp_value_t target = {.name = "shape", .dtype = x->dtype, .rank = count};
  for (int32_t d = 0; d < count; ++d) {
    if (spec[d] < 0) return VKP__ERR("attribute 'shape' has %lld", (long long)spec[d]);
    target.shape[d] = spec[d];
  }
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast_shapes(x, &target, &rank, shape));
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_trilu(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank < 2) return VKP__ERR("input has rank %d; trilu needs 2 or more", (int)x->rank);
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__infer_eye_like(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x->rank != 2) return VKP__ERR("input has rank %d; expected 2", (int)x->rank);
  vkp_dtype_t dtype = x->dtype;
  const char *name = vkp_node_string(n, "dtype");
  if (name && !vkp_dtype_parse(name, &dtype))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "attribute 'dtype' is '%s', not a dtype vkpipe has", name);
  vkp__set_out(out, dtype, 2, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Plans

void vkp__remap_deinit(vkp__remap_t *plan) {
  for (int32_t d = 0; d < VKP_MAX_RANK; ++d) {
    vkp__free(plan->map[d]);
    plan->map[d] = NULL;
  }
}

// Input index of padded position j (relative to the first kept element) of
// a dim with m kept elements, or -1 for the constant.
static int64_t vkp__pad_index(const char *mode, int64_t j, int64_t m) {
  if (j >= 0 && j < m) return j;
  switch (mode[0]) {
    case 'e':  // edge
      return j < 0 ? 0 : m - 1;
    case 'w': {  // wrap
      int64_t r = j % m;
      return r < 0 ? r + m : r;
    }
    case 'r': {  // reflect: period 2 (m - 1), mirrored around the edges
      if (m == 1) return 0;
      int64_t p = 2 * (m - 1), r = j % p;
      if (r < 0) r += p;
      return r < m ? r : p - r;
    }
    default:  // constant
      return -1;
  }
}

static vkp_status_t vkp__map_alloc(vkp__remap_t *plan, int32_t d) {
  size_t len = (size_t)(plan->shape[d] > 0 ? plan->shape[d] : 1);
  plan->map[d] = vkp__calloc(len, sizeof(int32_t));
  if (!plan->map[d]) {
    vkp__remap_deinit(plan);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "index map of %zu entries", len);
  }
  return NULL;
}

vkp_status_t vkp__remap_plan(const vkp_node_t *n, int32_t in_rank,
                             const int64_t *in_shape, vkp__remap_t *plan) {
  memset(plan, 0, sizeof *plan);
  int64_t strides[VKP_MAX_RANK], s = 1;
  for (int32_t d = in_rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= in_shape[d];
  }
  switch (n->op) {
    case VKP_OP_PAD: {
      const int64_t *pads;
      vkp_node_attr_ints(n, "pads", &pads);
      const char *mode = vkp_node_string(n, "mode");
      plan->fill = vkp_node_float(n, "value");
      plan->rank = in_rank;
      for (int32_t d = 0; d < in_rank; ++d) {
        int64_t b = pads[d], e = pads[in_rank + d];
        int64_t lo = b < 0 ? -b : 0, m = in_shape[d] - lo - (e < 0 ? -e : 0);
        plan->shape[d] = in_shape[d] + b + e;
        plan->stride[d] = strides[d];
        if (b == 0 && e == 0) continue;
        VKP_RETURN_IF_ERROR(vkp__map_alloc(plan, d));
        for (int64_t o = 0; o < plan->shape[d]; ++o) {
          int64_t j = m > 0 ? vkp__pad_index(mode, o - (b > 0 ? b : 0), m) : -1;
          plan->map[d][o] = j < 0 ? -1 : (int32_t)(lo + j);
        }
      }
      return NULL;
    }
    case VKP_OP_TILE: {
      plan->rank = in_rank;
      const int64_t *rep;
      vkp_node_attr_ints(n, "repeats", &rep);
      for (int32_t d = 0; d < in_rank; ++d) {
        plan->shape[d] = in_shape[d] * rep[d];
        plan->stride[d] = strides[d];
        if (rep[d] == 1) continue;
        VKP_RETURN_IF_ERROR(vkp__map_alloc(plan, d));
        for (int64_t o = 0; o < plan->shape[d]; ++o)
          plan->map[d][o] = (int32_t)(o % in_shape[d]);
      }
      return NULL;
    }
    case VKP_OP_EXPAND: {
      const int64_t *spec;
      int32_t count = vkp_node_attr_ints(n, "shape", &spec);
      plan->rank = count > in_rank ? count : in_rank;
      for (int32_t d = 0; d < plan->rank; ++d) {
        int32_t xd = d - (plan->rank - in_rank), sd = d - (plan->rank - count);
        int64_t xdim = xd >= 0 ? in_shape[xd] : 1, sdim = sd >= 0 ? spec[sd] : 1;
        plan->shape[d] = xdim == 1 ? sdim : xdim;
        plan->stride[d] = xd >= 0 && xdim != 1 ? strides[xd] : 0;
      }
      return NULL;
    }
    case VKP_OP_DEPTH_TO_SPACE: case VKP_OP_SPACE_TO_DEPTH: {
      int64_t bs = vkp_node_int(n, "blocksize");
      int64_t N = in_shape[0], C = in_shape[1], H = in_shape[2], W = in_shape[3];
      plan->rank = 6;
      if (n->op == VKP_OP_DEPTH_TO_SPACE) {
        // out [N, C', H, bs, W, bs]: x[n, (i bs + j) C' + c, h, w] (DCR) or
        // x[n, c bs bs + i bs + j, h, w] (CRD).
        int64_t Co = C / (bs * bs), hw = H * W;
        bool crd = strcmp(vkp_node_string(n, "mode"), "CRD") == 0;
        int64_t shape[6] = {N, Co, H, bs, W, bs};
        int64_t stride[6] = {C * hw, crd ? bs * bs * hw : hw, W,
                             crd ? bs * hw : bs * Co * hw, 1, crd ? hw : Co * hw};
        memcpy(plan->shape, shape, sizeof shape);
        memcpy(plan->stride, stride, sizeof stride);
      } else {
        // out [N, bs, bs, C, H', W'] reads x[n, c, h' bs + i, w' bs + j].
        int64_t shape[6] = {N, bs, bs, C, H / bs, W / bs};
        int64_t stride[6] = {C * H * W, W, 1, H * W, bs * W, bs};
        memcpy(plan->shape, shape, sizeof shape);
        memcpy(plan->stride, stride, sizeof stride);
      }
      return NULL;
    }
    default:
      return vkp_status_make(VKP_STATUS_INTERNAL, "node '%s': %s has no index plan",
                             n->name, vkp_op_name(n->op));
  }
}

// Resize: the source coordinate of output index o along `axis`. As ONNX's
// reference does, the resized length in these formulas is scale * in_len,
// not the (whole) output length.
static double vkp__resize_coord(const vkp_node_t *n, int32_t axis, int64_t in_len,
                                int64_t out_len, int64_t o, bool *outside) {
  const vkp_attr_t *scales = vkp_node_attr(n, "scales");
  double s = scales->floats[axis], x = (double)o, resized = s * (double)in_len;
  double last = (double)(in_len - 1);
  const char *ctm = vkp_node_string(n, "coordinate_transformation_mode");
  *outside = false;
  if (strcmp(ctm, "half_pixel") == 0) return (x + 0.5) / s - 0.5;
  if (strcmp(ctm, "pytorch_half_pixel") == 0)
    return resized == 1.0 ? -0.5 : (x + 0.5) / s - 0.5;
  if (strcmp(ctm, "half_pixel_symmetric") == 0) {
    double adjust = (double)out_len / resized;
    double center = (double)in_len / 2.0;
    return center * (1.0 - adjust) + (x + 0.5) / s - 0.5;
  }
  if (strcmp(ctm, "align_corners") == 0)
    return resized == 1.0 ? 0.0 : x * last / (resized - 1.0);
  if (strcmp(ctm, "asymmetric") == 0) return x / s;
  if (strcmp(ctm, "tf_half_pixel_for_nn") == 0) return (x + 0.5) / s;
  // tf_crop_and_resize
  const vkp_attr_t *roi = vkp_node_attr(n, "roi");
  int32_t rank = scales->count;
  double start = roi ? roi->floats[axis] : 0.0, end = roi ? roi->floats[rank + axis] : 1.0;
  double c = resized == 1.0 ? 0.5 * (start + end) * last
                            : start * last + x * (end - start) * last / (resized - 1.0);
  *outside = c < 0.0 || c > last;
  return c;
}

bool vkp__resize_keeps_axis(const vkp_node_t *n, int32_t axis) {
  const vkp_attr_t *scales = vkp_node_attr(n, "scales");
  const char *ctm = vkp_node_string(n, "coordinate_transformation_mode");
  // Scale 1 keeps the length (inference: floor(1 * len)); these modes map
  // index o to o itself then.
  return scales->floats[axis] == 1.0 && strcmp(ctm, "tf_crop_and_resize") != 0 &&
         strcmp(ctm, "tf_half_pixel_for_nn") != 0 && strcmp(ctm, "half_pixel_symmetric") != 0;
}

// Half-width of the window of linear (1) or cubic (2) interpolation, widened
// by 1 / scale for antialiased downsampling.
static int64_t vkp__resize_half_width(const vkp_node_t *n, int32_t axis, double *aa) {
  const vkp_attr_t *scales = vkp_node_attr(n, "scales");
  double s = scales->floats[axis];
  int64_t r = strcmp(vkp_node_string(n, "mode"), "cubic") == 0 ? 2 : 1;
  *aa = 1.0;
  if (!vkp_node_int(n, "antialias") || s >= 1.0) return r;
  *aa = s;
  return 1 - ((int64_t)floor(-(double)r / s) + 1);
}

int32_t vkp__resize_width(const vkp_node_t *n, int32_t axis) {
  if (strcmp(vkp_node_string(n, "mode"), "nearest") == 0) return 1;
  if (vkp__resize_keeps_axis(n, axis)) return 1;
  double aa;
  return (int32_t)(2 * vkp__resize_half_width(n, axis, &aa));
}

static double vkp__resize_kernel(bool cubic, double a, double d) {
  d = fabs(d);
  if (!cubic) return d < 1.0 ? 1.0 - d : 0.0;
  if (d <= 1.0) return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
  if (d < 2.0) return ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
  return 0.0;
}

static int64_t vkp__clamp_index(int64_t i, int64_t len) {
  return i < 0 ? 0 : (i >= len ? len - 1 : i);
}

void vkp__resize_taps(const vkp_node_t *n, int32_t axis, int64_t in_len,
                      int64_t out_len, int64_t o, int64_t *idx, double *w,
                      bool *outside) {
  const char *mode = vkp_node_string(n, "mode");
  int32_t width = vkp__resize_width(n, axis);
  *outside = false;
  if (width == 1 && strcmp(mode, "nearest") != 0) {  // identity axis
    idx[0] = vkp__clamp_index(o, in_len);
    w[0] = 1.0;
    return;
  }
  if (width == 1 && vkp__resize_keeps_axis(n, axis) && in_len == out_len) {
    idx[0] = o;
    w[0] = 1.0;
    return;
  }
  double x = vkp__resize_coord(n, axis, in_len, out_len, o, outside);
  double fl = floor(x);
  if (strcmp(mode, "nearest") == 0) {
    const char *nm = vkp_node_string(n, "nearest_mode");
    double r;
    if (strcmp(nm, "floor") == 0) {
      r = fl;
    } else if (strcmp(nm, "ceil") == 0) {
      r = ceil(x);
    } else if (x - fl == 0.5) {
      r = strcmp(nm, "round_prefer_ceil") == 0 ? fl + 1.0 : fl;
    } else {
      r = round(x);
    }
    idx[0] = vkp__clamp_index((int64_t)r, in_len);
    w[0] = 1.0;
    return;
  }
  double aa;
  int64_t m = vkp__resize_half_width(n, axis, &aa);
  bool cubic = strcmp(mode, "cubic") == 0;
  bool exclude = vkp_node_int(n, "exclude_outside") != 0;
  double a = vkp_node_float(n, "cubic_coeff_a"), sum = 0.0;
  for (int64_t t = 0; t < 2 * m; ++t) {
    int64_t i = (int64_t)fl - m + 1 + t;
    double wt = vkp__resize_kernel(cubic, a, ((double)i - x) * aa);
    if (exclude && (i < 0 || i >= in_len)) wt = 0.0;
    idx[t] = vkp__clamp_index(i, in_len);
    w[t] = wt;
    sum += wt;
  }
  if ((exclude || aa != 1.0) && sum != 0.0)
    for (int64_t t = 0; t < 2 * m; ++t) w[t] /= sum;
}

// ---------------------------------------------------------------------------
// Kernels

// pad, tile, expand, depth_to_space, space_to_depth: a gather through the
// node's plan.
vkp_status_t vkp__eval_remap(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  vkp__remap_t plan;
  VKP_RETURN_IF_ERROR(vkp__remap_plan(n, in[0]->rank, in[0]->shape, &plan));
  int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    bool fill = false;
    for (int32_t d = 0; d < plan.rank; ++d) {
      int64_t j = plan.map[d] ? plan.map[d][idx[d]] : idx[d];
      if (j < 0) fill = true;
      src += j * plan.stride[d];
    }
    if (fill)
      vkp__put_f(out, i, plan.fill);
    else
      vkp__copy_elem(out, i, in[0], src);
    vkp__next_index(plan.rank, plan.shape, idx);
  }
  vkp__remap_deinit(&plan);
  return NULL;
}

vkp_status_t vkp__eval_resize(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int32_t rank = x->rank, width[VKP_MAX_RANK];
  int64_t *tap_idx[VKP_MAX_RANK] = {NULL};
  double *tap_w[VKP_MAX_RANK] = {NULL};
  bool *outside[VKP_MAX_RANK] = {NULL};
  vkp_status_t st = NULL;
  for (int32_t d = 0; d < rank && !st; ++d) {
    width[d] = vkp__resize_width(n, d);
    size_t len = (size_t)(out->shape[d] > 0 ? out->shape[d] : 1);
    tap_idx[d] = vkp__calloc(len * (size_t)width[d], sizeof(int64_t));
    tap_w[d] = vkp__calloc(len * (size_t)width[d], sizeof(double));
    outside[d] = vkp__calloc(len, sizeof(bool));
    if (!tap_idx[d] || !tap_w[d] || !outside[d]) {
      st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "node '%s': resize taps", n->name);
      break;
    }
    for (int64_t o = 0; o < out->shape[d]; ++o)
      vkp__resize_taps(n, d, x->shape[d], out->shape[d], o,
                       tap_idx[d] + o * width[d], tap_w[d] + o * width[d],
                       &outside[d][o]);
  }
  if (!st) {
    int64_t strides[VKP_MAX_RANK];
    vkp__strides(x, strides);
    double extrapolation = vkp_node_float(n, "extrapolation_value");
    int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
    for (int64_t i = 0; i < count; ++i) {
      bool out_of_roi = false;
      for (int32_t d = 0; d < rank; ++d) out_of_roi |= outside[d][idx[d]];
      double acc = 0.0;
      if (out_of_roi) {
        acc = extrapolation;
      } else {
        // Every combination of one tap per axis.
        int32_t t[VKP_MAX_RANK] = {0};
        for (;;) {
          double wt = 1.0;
          int64_t src = 0;
          for (int32_t d = 0; d < rank; ++d) {
            int64_t k = idx[d] * width[d] + t[d];
            wt *= tap_w[d][k];
            src += tap_idx[d][k] * strides[d];
          }
          if (wt != 0.0) acc += wt * vkp__get_f(x, src);
          int32_t d = rank - 1;
          while (d >= 0 && ++t[d] == width[d]) t[d--] = 0;
          if (d < 0) break;
        }
      }
      vkp__put_f(out, i, acc);
      vkp__next_index(rank, out->shape, idx);
    }
  }
  for (int32_t d = 0; d < rank; ++d) {
    vkp__free(tap_idx[d]);
    vkp__free(tap_w[d]);
    vkp__free(outside[d]);
  }
  return st;
}

vkp_status_t vkp__eval_trilu(const vkp_node_t *n, const vkp_tensor_t *const *in,
                             vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
  int64_t k = vkp_node_int(n, "k"), count = (int64_t)vkp_tensor_numel(out);
  bool upper = vkp_node_int(n, "upper") != 0;
  size_t es = vkp_dtype_size(x->dtype);
  for (int64_t i = 0; i < count; ++i) {
    int64_t c = i % cols, r = i / cols % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (keep)
      vkp__copy_elem(out, i, x, i);
    else
      memset((char *)out->data + (size_t)i * es, 0, es);
  }
  return NULL;
}

vkp_status_t vkp__eval_eye_like(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  (void)in;
  int64_t rows = out->shape[0], cols = out->shape[1], k = vkp_node_int(n, "k");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) vkp__put_f(out, r * cols + c, c - r == k ? 1.0 : 0.0);
  return NULL;
}
