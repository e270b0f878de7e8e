// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the padding and resampling family: Pad (attributes before
// opset 11; pads, constant_value and, from 18, axes as inputs), Resize
// (opset 10's scales input; from 11 roi, scales, sizes; from 18 axes,
// antialias and keep_aspect_ratio_policy), Upsample (opsets 7 to 9), Tile,
// Expand, Trilu and EyeLike. Inputs that decide shapes or index ranges must
// be known at import time: they become IR attributes. docs/onnx.md says the
// same in prose.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

static vkp_attr_t vkp__a_string(const char *name, const char *v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_STRING, .s = v};
}

static vkp_attr_t vkp__a_floats(const char *name, const double *v, int32_t n) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_FLOATS, .floats = v, .count = n};
}

// A constant 1-D float or integer input into out (at most cap entries).
static vkp_status_t vkp__const_floats(const vkp__onnx_tensor_t *t, const char *what,
                                      double *out, int32_t cap, int32_t *out_count) {
  if (vkp__onnx_type_size(t->type) == 0)
    return VKP__ONNX_INVALID("%s has type %s", what, vkp__onnx_type_name(t->type));
  if (t->rank > 1)
    return VKP__ONNX_INVALID("%s must be 1-D, has rank %d", what, (int)t->rank);
  size_t n = vkp__onnx_tensor_numel(t);
  if (n > (size_t)cap)
    return VKP__ONNX_INVALID("%s has %zu entries; at most %d", what, n, (int)cap);
  for (size_t i = 0; i < n; ++i) out[i] = vkp__onnx_tensor_get_f(t, i);
  *out_count = (int32_t)n;
  return NULL;
}

// The axes of Pad / Resize (opset 18): normalised, distinct; all dims when
// absent (*count = rank).
static vkp_status_t vkp__axes_list(const int64_t *given, int32_t n_given,
                                   int32_t rank, int64_t *axes, int32_t *count) {
  if (n_given < 0) {
    for (int32_t d = 0; d < rank; ++d) axes[d] = d;
    *count = rank;
    return NULL;
  }
  bool seen[VKP_MAX_RANK] = {false};
  for (int32_t i = 0; i < n_given; ++i) {
    int64_t a = given[i];
    if (a < -rank || a >= rank)
      return VKP__ONNX_INVALID("axis %lld is out of range for rank %d", (long long)a,
                               (int)rank);
    if (a < 0) a += rank;
    if (seen[a]) return VKP__ONNX_INVALID("axis %lld is listed twice", (long long)a);
    seen[a] = true;
    axes[i] = a;
  }
  *count = n_given;
  return NULL;
}

// ---------------------------------------------------------------------------
// Pad

vkp_status_t vkp__map_pad(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  int32_t rank = vkp__onnx_value(ctx, x)->rank;
  char mode[16];
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "mode", "constant", mode, sizeof mode));
  int64_t given[2 * VKP_MAX_RANK], pads[2 * VKP_MAX_RANK] = {0};
  int64_t axes_given[VKP_MAX_RANK], axes[VKP_MAX_RANK];
  int32_t n_given = -1, n_axes_given = -1, n_axes;
  double value = 0.0;
  if (ctx->opset < 11) {
    VKP_RETURN_IF_ERROR(
        vkp__onnx_attr_ints(ctx, "pads", given, 2 * VKP_MAX_RANK, &n_given));
    if (n_given < 0) return VKP__ONNX_INVALID("attribute 'pads' is required");
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "value", 0.0, &value));
  } else {
    if (vkp__onnx_attr(ctx, "pads") || vkp__onnx_attr(ctx, "value"))
      return VKP__ONNX_INVALID("from opset 11 pads and the value are inputs");
    const vkp__onnx_tensor_t *t;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "pads", &t));
    if (!t) return VKP__ONNX_INVALID("input 1 (pads) is required");
    VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "pads", given, 2 * VKP_MAX_RANK, &n_given));
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "constant_value", &t));
    if (t && vkp__onnx_tensor_numel(t) > 0)
      VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(t, "constant_value", &value));
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 3, "axes", &t));
    if (t && ctx->opset < 18)
      return VKP__ONNX_INVALID("the axes input needs opset 18");
    if (t)
      VKP_RETURN_IF_ERROR(
          vkp__onnx_const_ints(t, "axes", axes_given, VKP_MAX_RANK, &n_axes_given));
  }
  VKP_RETURN_IF_ERROR(vkp__axes_list(axes_given, n_axes_given, rank, axes, &n_axes));
  if (n_given != 2 * n_axes)
    return VKP__ONNX_INVALID("pads has %d entries; expected %d (two per axis)",
                             (int)n_given, (int)(2 * n_axes));
  for (int32_t i = 0; i < n_axes; ++i) {
    pads[axes[i]] = given[i];
    pads[rank + axes[i]] = given[n_axes + i];
  }
  vkp_attr_t a[3] = {vkp__onnx_a_ints("pads", pads, 2 * rank), vkp__a_string("mode", mode),
                     vkp__onnx_a_float("value", value)};
  return vkp__onnx_emit_out(ctx, VKP_OP_PAD, 1, &x, 3, a);
}

// ---------------------------------------------------------------------------
// Resize and Upsample

// Emits resize of x with full-rank `scales`, optional `sizes` and `roi`.
static vkp_status_t vkp__emit_resize(vkp__onnx_ctx_t *ctx, int32_t x, const char *mode,
                                     const char *ctm, const char *nearest_mode,
                                     const double *scales, const int64_t *sizes,
                                     const double *roi) {
  int32_t rank = vkp__onnx_value(ctx, x)->rank;
  double a_cubic, extrapolation;
  int64_t exclude, antialias = 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "cubic_coeff_a", -0.75, &a_cubic));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "exclude_outside", 0, &exclude));
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_float(ctx, "extrapolation_value", 0.0, &extrapolation));
  if (ctx->opset >= 18)
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "antialias", 0, &antialias));
  vkp_attr_t a[10] = {
      vkp__a_string("mode", mode),
      vkp__a_string("coordinate_transformation_mode", ctm),
      vkp__a_string("nearest_mode", nearest_mode),
      vkp__onnx_a_float("cubic_coeff_a", a_cubic),
      vkp__onnx_a_int("exclude_outside", exclude != 0),
      vkp__onnx_a_float("extrapolation_value", extrapolation),
      vkp__onnx_a_int("antialias", antialias != 0),
      vkp__a_floats("scales", scales, rank)};
  int32_t n_attrs = 8;
  if (sizes) a[n_attrs++] = vkp__onnx_a_ints("sizes", sizes, rank);
  if (roi) a[n_attrs++] = vkp__a_floats("roi", roi, 2 * rank);
  return vkp__onnx_emit_out(ctx, VKP_OP_RESIZE, 1, &x, n_attrs, a);
}

// ONNX spells linear "linear" or, in Upsample-7, "bilinear".
static vkp_status_t vkp__resize_mode(vkp__onnx_ctx_t *ctx, char *mode, size_t size) {
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "mode", "nearest", mode, size));
  if (strcmp(mode, "bilinear") == 0 || strcmp(mode, "trilinear") == 0)
    snprintf(mode, size, "linear");
  return NULL;
}

// Upsample (7: scales attribute; 9: scales input) and Resize-10: asymmetric
// coordinates, nearest rounds down (what np.repeat gives for whole scales).
static vkp_status_t vkp__map_legacy_resize(vkp__onnx_ctx_t *ctx, int32_t x) {
  int32_t rank = vkp__onnx_value(ctx, x)->rank, n = -1;
  double scales[VKP_MAX_RANK];
  char mode[16];
  VKP_RETURN_IF_ERROR(vkp__resize_mode(ctx, mode, sizeof mode));
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
    return VKP__ONNX_INVALID("mode '%s'; expected nearest or linear", mode);
  if (strcmp(ctx->node->op_type, "Upsample") == 0 && ctx->opset < 9) {
    const Onnx__AttributeProto *attr = vkp__onnx_attr(ctx, "scales");
    if (!attr) return VKP__ONNX_INVALID("attribute 'scales' is required");
    if (attr->n_floats > VKP_MAX_RANK)
      return VKP__ONNX_INVALID("attribute 'scales' has %zu entries", attr->n_floats);
    n = (int32_t)attr->n_floats;
    for (int32_t i = 0; i < n; ++i) scales[i] = attr->floats[i];
  } else {
    const vkp__onnx_tensor_t *t;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "scales", &t));
    if (!t) return VKP__ONNX_INVALID("input 1 (scales) is required");
    VKP_RETURN_IF_ERROR(vkp__const_floats(t, "scales", scales, VKP_MAX_RANK, &n));
  }
  if (n != rank)
    return VKP__ONNX_INVALID("scales has %d entries for rank %d", (int)n, (int)rank);
  return vkp__emit_resize(ctx, x, mode, "asymmetric", "floor", scales, NULL, NULL);
}

vkp_status_t vkp__map_upsample(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  if (ctx->opset >= 10)
    return VKP__ONNX_INVALID("Upsample was removed in opset 10 (use Resize)");
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  return vkp__map_legacy_resize(ctx, x);
}

vkp_status_t vkp__map_resize(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  if (ctx->opset < 11) return vkp__map_legacy_resize(ctx, x);
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank = xv->rank;
  char mode[16], ctm[32], nearest_mode[32], policy[16];
  VKP_RETURN_IF_ERROR(vkp__resize_mode(ctx, mode, sizeof mode));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "coordinate_transformation_mode",
                                            "half_pixel", ctm, sizeof ctm));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "nearest_mode", "round_prefer_floor",
                                            nearest_mode, sizeof nearest_mode));
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_string(ctx, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy));
  int64_t axes_given[VKP_MAX_RANK], axes[VKP_MAX_RANK];
  int32_t n_axes_given = -1, n_axes;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_ints(ctx, "axes", axes_given, VKP_MAX_RANK, &n_axes_given));
  VKP_RETURN_IF_ERROR(vkp__axes_list(axes_given, n_axes_given, rank, axes, &n_axes));
  // scales (input 2) or sizes (input 3); an empty scales tensor is absent.
  const vkp__onnx_tensor_t *ts, *tz, *tr;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "scales", &ts));
  if (ts && vkp__onnx_tensor_numel(ts) == 0) ts = NULL;
  tz = NULL;
  if (ctx->node->n_input > 3) VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 3, "sizes", &tz));
  if (tz && vkp__onnx_tensor_numel(tz) == 0) tz = NULL;
  if (!ts == !tz)
    return VKP__ONNX_INVALID("exactly one of scales and sizes must be given");
  double scales[VKP_MAX_RANK];
  int64_t sizes[VKP_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) {
    scales[d] = 1.0;
    sizes[d] = xv->shape[d];
  }
  double given[VKP_MAX_RANK];
  int32_t n = 0;
  if (ts) {
    VKP_RETURN_IF_ERROR(vkp__const_floats(ts, "scales", given, VKP_MAX_RANK, &n));
  } else {
    int64_t ints[VKP_MAX_RANK];
    VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(tz, "sizes", ints, VKP_MAX_RANK, &n));
    for (int32_t i = 0; i < n; ++i) given[i] = (double)ints[i];
  }
  if (n != n_axes)
    return VKP__ONNX_INVALID("%s has %d entries for %d axes", ts ? "scales" : "sizes",
                             (int)n, (int)n_axes);
  if (tz && xv->bounded)
    for (int32_t i = 0; i < n_axes; ++i)
      if (axes[i] == xv->bounded_axis)
        return VKP__ONNX_UNSUPPORTED(
            "input 0 '%s' varies along axis %d at run time and sizes (input 3) fix "
            "that axis's length to %lld; a varying axis resizes only by a scale of 1",
            xv->name, (int)xv->bounded_axis, (long long)given[i]);
  if (ts) {
    for (int32_t i = 0; i < n; ++i) scales[axes[i]] = given[i];
  } else if (strcmp(policy, "stretch") == 0) {
    for (int32_t i = 0; i < n; ++i) {
      int64_t in = xv->shape[axes[i]];
      if (in == 0) return VKP__ONNX_INVALID("axis %lld is empty", (long long)axes[i]);
      sizes[axes[i]] = (int64_t)given[i];
      scales[axes[i]] = given[i] / (double)in;
    }
  } else {
    bool larger = strcmp(policy, "not_smaller") == 0;
    if (!larger && strcmp(policy, "not_larger") != 0)
      return VKP__ONNX_INVALID("keep_aspect_ratio_policy '%s'; expected stretch, "
                               "not_larger or not_smaller", policy);
    double s = 0.0;
    for (int32_t i = 0; i < n; ++i) {
      int64_t in = xv->shape[axes[i]];
      if (in == 0) return VKP__ONNX_INVALID("axis %lld is empty", (long long)axes[i]);
      double r = given[i] / (double)in;
      if (i == 0 || (larger ? r > s : r < s)) s = r;
    }
    for (int32_t i = 0; i < n; ++i) {
      scales[axes[i]] = s;
      sizes[axes[i]] = (int64_t)floor(s * (double)xv->shape[axes[i]] + 0.5);
    }
  }
  double roi[2 * VKP_MAX_RANK];
  bool use_roi = strcmp(ctm, "tf_crop_and_resize") == 0;
  if (use_roi) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "roi", &tr));
    if (!tr || vkp__onnx_tensor_numel(tr) == 0)
      return VKP__ONNX_INVALID("tf_crop_and_resize needs roi (input 1)");
    double r[2 * VKP_MAX_RANK];
    int32_t nr;
    VKP_RETURN_IF_ERROR(vkp__const_floats(tr, "roi", r, 2 * VKP_MAX_RANK, &nr));
    if (nr != 2 * n_axes)
      return VKP__ONNX_INVALID("roi has %d entries; expected %d (two per axis)",
                               (int)nr, (int)(2 * n_axes));
    for (int32_t d = 0; d < rank; ++d) {
      roi[d] = 0.0;
      roi[rank + d] = 1.0;
    }
    for (int32_t i = 0; i < n_axes; ++i) {
      roi[axes[i]] = r[i];
      roi[rank + axes[i]] = r[n_axes + i];
    }
  }
  return vkp__emit_resize(ctx, x, mode, ctm, nearest_mode, scales, ts ? NULL : sizes,
                          use_roi ? roi : NULL);
}

// ---------------------------------------------------------------------------
// Tile, Expand, Trilu, EyeLike

// Tile and Expand: X and a required constant int list (input 1) that becomes
// the IR attribute of the same name.
static vkp_status_t vkp__map_with_ints(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                       const char *what) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x, n;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp__onnx_tensor_t *t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, what, &t));
  if (!t) return VKP__ONNX_INVALID("input 1 (%s) is required", what);
  int64_t v[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, what, v, VKP_MAX_RANK, &n));
  vkp_attr_t a = vkp__onnx_a_ints(what, v, n);
  return vkp__onnx_emit_out(ctx, op, 1, &x, 1, &a);
}

vkp_status_t vkp__map_tile(vkp__onnx_ctx_t *ctx) {
  return vkp__map_with_ints(ctx, VKP_OP_TILE, "repeats");
}

// Expand to a constant shape is the IR expand; to a shape known but for one
// entry, the run-time extent of a bounded value (torchvision's RoI heads
// expand their level indices so), x broadcast against a mask bounded alike.
vkp_status_t vkp__map_expand(vkp__onnx_ctx_t *ctx) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 1);
  vkp__shape_expr_t e;
  if (s && !s->is_const && s->value >= 0 && vkp__onnx_shape_expr(ctx, s->value, &e)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
    int32_t x;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
    bool done;
    VKP_RETURN_IF_ERROR(vkp__onnx_broadcast_to_expr(ctx, x, &e, &done));
    if (done) return NULL;
  }
  return vkp__map_with_ints(ctx, VKP_OP_EXPAND, "shape");
}

vkp_status_t vkp__map_trilu(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  int64_t upper;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "upper", 1, &upper));
  const vkp__onnx_tensor_t *t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "k", &t));
  double k = 0.0;
  if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(t, "k", &k));
  vkp_attr_t a[2] = {vkp__onnx_a_int("upper", upper != 0),
                     vkp__onnx_a_int("k", (int64_t)k)};
  return vkp__onnx_emit_out(ctx, VKP_OP_TRILU, 1, &x, 2, a);
}

vkp_status_t vkp__map_eye_like(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  int64_t k, type;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "k", 0, &k));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "dtype", -1, &type));
  vkp_attr_t a[2] = {vkp__onnx_a_int("k", k)};
  int32_t n_attrs = 1;
  if (type >= 0) {
    vkp_dtype_t dtype;
    if (!vkp__onnx_type_to_dtype((int32_t)type, &dtype))
      return VKP__ONNX_UNSUPPORTED("dtype %lld has no vkpipe dtype", (long long)type);
    a[n_attrs++] = vkp__a_string("dtype", vkp_dtype_name(dtype));
  }
  return vkp__onnx_emit_out(ctx, VKP_OP_EYE_LIKE, 1, &x, n_attrs, a);
}

// GridSample: opset 16 names the modes bilinear / bicubic, opset 20 linear /
// cubic (and allows any number of spatial dims); the IR uses the new names.
vkp_status_t vkp__map_grid_sample(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t in[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  char mode[32], padding[32];
  int64_t align;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "mode", ctx->opset >= 20 ? "linear" : "bilinear",
                                            mode, sizeof mode));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "padding_mode", "zeros", padding,
                                            sizeof padding));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "align_corners", 0, &align));
  const char *ir_mode = mode;
  if (strcmp(mode, "bilinear") == 0) ir_mode = "linear";
  else if (strcmp(mode, "bicubic") == 0) ir_mode = "cubic";
  vkp_attr_t a[3] = {vkp__a_string("mode", ir_mode), vkp__a_string("padding_mode", padding),
                     vkp__onnx_a_int("align_corners", align)};
  return vkp__onnx_emit_out(ctx, VKP_OP_GRID_SAMPLE, 2, in, 3, a);
}

// RoiAlign: opset 10 has no coordinate_transformation_mode and behaves as
// output_half_pixel; opset 16 adds it with half_pixel as the default.
vkp_status_t vkp__map_roi_align(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t in[3];
  for (int32_t i = 0; i < 3; ++i) VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  char mode[32], ctm[32];
  int64_t oh, ow, ratio;
  double scale;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, "mode", "avg", mode, sizeof mode));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(
      ctx, "coordinate_transformation_mode",
      ctx->opset >= 16 ? "half_pixel" : "output_half_pixel", ctm, sizeof ctm));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "output_height", 1, &oh));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "output_width", 1, &ow));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "sampling_ratio", 0, &ratio));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "spatial_scale", 1.0, &scale));
  vkp_attr_t a[6] = {vkp__a_string("mode", mode),
                     vkp__a_string("coordinate_transformation_mode", ctm),
                     vkp__onnx_a_int("output_height", oh),
                     vkp__onnx_a_int("output_width", ow),
                     vkp__onnx_a_int("sampling_ratio", ratio),
                     vkp__onnx_a_float("spatial_scale", scale)};
  return vkp__onnx_emit_out(ctx, VKP_OP_ROI_ALIGN, 3, in, 6, a);
}
