// SPDX-License-Identifier: Apache-2.0
// The ONNX op table: how each ONNX op (default domain, opsets 1..22;
// onnx_legacy.c upgrades nodes of opsets 1..6 first) becomes
// IR nodes, with the operator spec's attribute semantics and defaults per
// opset. docs/onnx.md is the prose version of this file.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// ---------------------------------------------------------------------------
// Helpers

vkp_attr_t vkp__onnx_a_int(const char *name, int64_t v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INT, .i = v};
}
vkp_attr_t vkp__onnx_a_float(const char *name, double v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_FLOAT, .f = v};
}
vkp_attr_t vkp__onnx_a_ints(const char *name, const int64_t *v, int32_t n) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = n};
}

// Outputs from index `used` on must be absent: vkpipe computes only the
// first `used` outputs.
vkp_status_t vkp__onnx_only_outputs(vkp__onnx_ctx_t *ctx, int32_t used) {
  if (!vkp__onnx_output(ctx, 0) && used > 0)
    return VKP__ONNX_INVALID("output 0 has no name");
  for (size_t i = (size_t)used; i < ctx->node->n_output; ++i)
    if (vkp__onnx_output(ctx, (int32_t)i))
      return VKP__ONNX_UNSUPPORTED("output %zu ('%s') is not supported", i,
                                   ctx->node->output[i]);
  return NULL;
}

// Emits `op` defining output 0 of the current node.
vkp_status_t vkp__onnx_emit_out(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                  int32_t n_in, const int32_t *inputs,
                                  int32_t n_attrs, const vkp_attr_t *attrs) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  const char *out = vkp__onnx_output(ctx, 0);
  int32_t value;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit(ctx, op, n_in, inputs, n_attrs, attrs, out, &value));
  return vkp__onnx_bind_value(ctx, out, value);
}

const vkp_value_t *vkp__onnx_value(const vkp__onnx_ctx_t *ctx, int32_t v) {
  return &ctx->graph->values[v];
}

// Reads a 1-D (or scalar) integer constant into `out` (at most `cap`).
vkp_status_t vkp__onnx_const_ints(const vkp__onnx_tensor_t *t,
                                    const char *what, int64_t *out,
                                    int32_t cap, int32_t *out_count) {
  if (t->type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 &&
      t->type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
    return VKP__ONNX_INVALID("%s must be int64 or int32, is %s", what,
                             vkp__onnx_type_name(t->type));
  if (t->rank > 1)
    return VKP__ONNX_INVALID("%s must be 1-D, has rank %d", what, (int)t->rank);
  size_t n = vkp__onnx_tensor_numel(t);
  if (n > (size_t)cap)
    return VKP__ONNX_UNSUPPORTED("%s has %zu entries; at most %d", what, n,
                                 (int)cap);
  for (size_t i = 0; i < n; ++i) out[i] = vkp__onnx_tensor_get_i(t, i);
  *out_count = (int32_t)n;
  return NULL;
}

// A scalar (or one-element) numeric constant.
vkp_status_t vkp__onnx_const_scalar(const vkp__onnx_tensor_t *t,
                                      const char *what, double *out) {
  if (vkp__onnx_tensor_numel(t) != 1)
    return VKP__ONNX_INVALID("%s must have one element", what);
  if (vkp__onnx_type_size(t->type) == 0)
    return VKP__ONNX_INVALID("%s has type %s", what,
                             vkp__onnx_type_name(t->type));
  *out = vkp__onnx_tensor_get_f(t, 0);
  return NULL;
}

// ---------------------------------------------------------------------------
// Elementwise

// Ops whose ONNX form is exactly the IR op on the same inputs and attributes
// (the table's IR column). The attributes are the ones the table lists (no
// other gets this far); they keep their names, and the IR schema has ONNX's
// defaults for those left out.
vkp_status_t vkp__map_simple(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_op_t *entry = vkp__onnx_op_find(ctx->node->op_type);
  vkp_op_t op = entry ? entry->ir : VKP_OP_COUNT;
  if (op == VKP_OP_COUNT) return VKP__ONNX_UNSUPPORTED("unsupported op");
  int32_t lo, hi;
  vkp_op_arity(op, &lo, &hi, NULL, NULL);
  size_t n = ctx->node->n_input;
  if (n < (size_t)lo || (hi >= 0 && n > (size_t)hi))
    return VKP__ONNX_INVALID("has %zu inputs; %s takes %d to %d", n,
                             ctx->node->op_type, (int)lo, (int)hi);
  int32_t in[64];
  if (n > 64) return VKP__ONNX_UNSUPPORTED("%zu inputs (at most 64)", n);
  for (size_t i = 0; i < n; ++i) {
    in[i] = -1;  // an omitted optional input
    if (vkp__onnx_input(ctx, (int32_t)i) || (int32_t)i < lo)
      VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, (int32_t)i, &in[i]));
  }
  enum { MAX_ATTRS = 4 };
  vkp_attr_t attrs[MAX_ATTRS];
  char strings[MAX_ATTRS][32];
  size_t n_attrs = ctx->node->n_attribute;
  if (n_attrs > MAX_ATTRS)
    return VKP__ONNX_INVALID("has %zu attributes (at most %d)", n_attrs,
                             (int)MAX_ATTRS);
  for (size_t k = 0; k < n_attrs; ++k) {
    const Onnx__AttributeProto *a = ctx->node->attribute[k];
    // Old exporters leave `type` out; then the filled field decides.
    int type = a->has_type ? (int)a->type
               : a->has_f  ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
               : a->has_i  ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
                           : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
      double f;
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, a->name, 0.0, &f));
      attrs[k] = vkp__onnx_a_float(a->name, (float)f);
    } else if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
      int64_t i;
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, a->name, 0, &i));
      attrs[k] = vkp__onnx_a_int(a->name, i);
    } else if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING) {
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_string(ctx, a->name, "", strings[k],
                                                sizeof strings[k]));
      attrs[k] = (vkp_attr_t){.name = a->name, .kind = VKP_ATTR_STRING,
                              .s = strings[k]};
    } else {
      return VKP__ONNX_UNSUPPORTED("attribute '%s' has ONNX type %d", a->name,
                                   type);
    }
  }
  return vkp__onnx_emit_out(ctx, op, (int32_t)n, in, (int32_t)n_attrs, attrs);
}

vkp_status_t vkp__map_leaky_relu(vkp__onnx_ctx_t *ctx) {
  double alpha;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 0.01, &alpha));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  vkp_attr_t a = vkp__onnx_a_float("alpha", (float)alpha);
  return vkp__onnx_emit_out(ctx, VKP_OP_LEAKY_RELU, 1, &x, 1, &a);
}

// ---------------------------------------------------------------------------
// Linear algebra

vkp_status_t vkp__map_gemm(vkp__onnx_ctx_t *ctx) {
  double alpha, beta;
  int64_t ta, tb;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 1.0, &alpha));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "beta", 1.0, &beta));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "transA", 0, &ta));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "transB", 0, &tb));
  if (ctx->opset < 11 && !vkp__onnx_input(ctx, 2))
    return VKP__ONNX_INVALID("input C is required before opset 11");
  int32_t in[3] = {-1, -1, -1};
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  int32_t n_in = 2;
  if (vkp__onnx_input(ctx, 2)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &in[2]));
    n_in = 3;
  }
  vkp_attr_t a[4] = {vkp__onnx_a_float("alpha", (float)alpha),
                     vkp__onnx_a_float("beta", (float)beta),
                     vkp__onnx_a_int("transA", ta != 0), vkp__onnx_a_int("transB", tb != 0)};
  return vkp__onnx_emit_out(ctx, VKP_OP_GEMM, n_in, in, 4, a);
}

// ---------------------------------------------------------------------------
// Convolution and pooling

// Window attributes (kernel, strides, dilations, pads) beyond this are
// refused: they are absurd, and products of them must not overflow.
#define VKP__MAX_WINDOW ((int64_t)1 << 30)

// Explicit [begin..., end...] pads from auto_pad / pads for a window op over
// `s` spatial dims `in`, kernel `k`, strides, dilations.
static vkp_status_t vkp__window_pads_nd(vkp__onnx_ctx_t *ctx, int32_t s,
                                        const int64_t *in, const int64_t *k,
                                        const int64_t *strides,
                                        const int64_t *dil, int64_t *pads) {
  char auto_pad[32];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_string(ctx, "auto_pad", "NOTSET", auto_pad, sizeof auto_pad));
  int32_t n;
  int64_t given[8];
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "pads", given, 8, &n));
  for (int32_t i = 0; i < 2 * s; ++i) pads[i] = 0;
  if (strcmp(auto_pad, "NOTSET") == 0) {
    if (n >= 0 && n != 2 * s)
      return VKP__ONNX_INVALID("attribute 'pads' has %d entries; %d for %d "
                               "spatial dims",
                               (int)n, (int)(2 * s), (int)s);
    for (int32_t i = 0; i < 2 * s && n == 2 * s; ++i) {
      if (given[i] < 0)
        return VKP__ONNX_UNSUPPORTED("negative pads (%lld) are not supported",
                                     (long long)given[i]);
      if (given[i] > VKP__MAX_WINDOW)
        return VKP__ONNX_INVALID("pad %lld is absurd", (long long)given[i]);
      pads[i] = given[i];
    }
    return NULL;
  }
  // Exporters write explicit zero pads beside VALID; other pads conflict.
  bool zero_pads = true;
  for (int32_t i = 0; i < n; ++i) zero_pads = zero_pads && given[i] == 0;
  if (n >= 0 && !zero_pads)
    return VKP__ONNX_INVALID("auto_pad '%s' and explicit pads are both given",
                             auto_pad);
  if (strcmp(auto_pad, "VALID") == 0) return NULL;
  bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
  if (!upper && strcmp(auto_pad, "SAME_LOWER") != 0)
    return VKP__ONNX_INVALID("auto_pad '%s' is not NOTSET, SAME_UPPER, "
                             "SAME_LOWER or VALID",
                             auto_pad);
  for (int32_t i = 0; i < s; ++i) {
    if (strides[i] < 1 || dil[i] < 1 || k[i] < 1)
      return VKP__ONNX_INVALID("kernel, strides and dilations must be >= 1");
    int64_t out = in[i] / strides[i] + (in[i] % strides[i] != 0);
    int64_t span = (k[i] - 1) * dil[i] + 1;
    int64_t total = (out - 1) * strides[i] + span - in[i];
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    pads[i] = upper ? small : big;
    pads[s + i] = upper ? big : small;
  }
  return NULL;
}

vkp_status_t vkp__onnx_window_pads(vkp__onnx_ctx_t *ctx, const int64_t *in,
                                     const int64_t *k, const int64_t *strides,
                                     const int64_t *dil, int64_t *pads) {
  return vkp__window_pads_nd(ctx, 2, in, k, strides, dil, pads);
}

// Reads an INTS attribute with exactly `s` entries (1 to `max`), or `def`
// `s` times when absent.
static vkp_status_t vkp__attr_nd(vkp__onnx_ctx_t *ctx, const char *name,
                                 int32_t s, int64_t def, int64_t min,
                                 int64_t *out) {
  int64_t v[8];
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, name, v, 8, &n));
  if (n < 0) {
    for (int32_t i = 0; i < s; ++i) out[i] = def;
    return NULL;
  }
  if (n != s)
    return VKP__ONNX_INVALID("attribute '%s' has %d entries; the input has %d "
                             "spatial dims",
                             name, (int)n, (int)s);
  for (int32_t i = 0; i < s; ++i) {
    if (v[i] < min || v[i] > VKP__MAX_WINDOW)
      return VKP__ONNX_INVALID("attribute '%s' entry %d is %lld; must be %lld "
                               "to %lld",
                               name, (int)i, (long long)v[i], (long long)min,
                               (long long)VKP__MAX_WINDOW);
    out[i] = v[i];
  }
  return NULL;
}

// Reads an INTS attribute with exactly two entries (2-D), or `def` when
// absent.
vkp_status_t vkp__onnx_attr_pair(vkp__onnx_ctx_t *ctx, const char *name,
                                   int64_t def, int64_t *out) {
  int64_t v[8];
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, name, v, 8, &n));
  if (n >= 0 && n != 2)
    return VKP__ONNX_UNSUPPORTED("attribute '%s' has %d entries; only 2-D "
                                 "windows are supported",
                                 name, (int)n);
  return vkp__attr_nd(ctx, name, 2, def, 1, out);
}

// The spatial dim count of window op input `value`: 1 to 3.
static vkp_status_t vkp__spatial(const vkp__onnx_ctx_t *ctx, int32_t value,
                                 int32_t *out_s) {
  const vkp_value_t *v = vkp__onnx_value(ctx, value);
  if (v->rank < 3 || v->rank > 5)
    return VKP__ONNX_UNSUPPORTED("input '%s' has rank %d; windows over 1 to 3 "
                                 "spatial dims (rank 3 to 5) are supported",
                                 v->name, (int)v->rank);
  *out_s = v->rank - 2;
  return NULL;
}

// 1-D window ops run as 2-D ones over a unit height ([N, C, L] ->
// [N, C, 1, L], the same bytes), so every target's 2-D kernels take them.
static vkp_status_t vkp__add_unit_height(vkp__onnx_ctx_t *ctx, int32_t value,
                                         int32_t *out_value) {
  const vkp_value_t *v = vkp__onnx_value(ctx, value);
  int64_t shape[4] = {v->shape[0], v->shape[1], 1, v->shape[2]};
  vkp_attr_t a = vkp__onnx_a_ints("shape", shape, 4);
  return vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &value, 1, &a, NULL, out_value);
}

// Attributes of a 1-D window as the 2-D window over a unit height.
static void vkp__unit_height_attrs(int64_t *pads, int64_t *strides,
                                   int64_t *dil, int64_t *extra) {
  int64_t b = pads[0], e = pads[1];
  pads[0] = 0, pads[1] = b, pads[2] = 0, pads[3] = e;
  strides[1] = strides[0], strides[0] = 1;
  dil[1] = dil[0], dil[0] = 1;
  if (extra) extra[1] = extra[0], extra[0] = 1;
}

// Emits `op` for a window node; a 1-D one (`unit` true: inputs already
// reshaped) has each output reshaped back to [N, C, L] under its ONNX
// name.
static vkp_status_t vkp__emit_window(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                     bool unit, int32_t n_in, const int32_t *in,
                                     int32_t n_attrs, const vkp_attr_t *attrs,
                                     int32_t n_out, const char *const *names) {
  int32_t values[2];
  const char *fresh[2] = {NULL, NULL};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_multi(ctx, op, n_in, in, n_attrs, attrs, n_out,
                                           unit ? fresh : names, values));
  for (int32_t i = 0; i < n_out; ++i) {
    if (!names[i]) continue;
    int32_t v = values[i];
    if (unit) {
      const vkp_value_t *y = vkp__onnx_value(ctx, v);
      int64_t shape[3] = {y->shape[0], y->shape[1], y->shape[3]};
      vkp_attr_t a = vkp__onnx_a_ints("shape", shape, 3);
      VKP_RETURN_IF_ERROR(
          vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &values[i], 1, &a, names[i], &v));
    }
    VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, names[i], v));
  }
  return NULL;
}

// Folds BatchNormalization node `bn` into convolution weights `w` [M, ...]
// and bias `b` (may be NULL) into fresh host tensors. Returns false (and no
// error) when the BatchNormalization does not qualify.
static vkp_status_t vkp__fold_bn(vkp__onnx_ctx_t *ctx,
                                 const Onnx__NodeProto *bn,
                                 const vkp__onnx_tensor_t *w,
                                 const vkp__onnx_tensor_t *b,
                                 vkp__onnx_tensor_t *out_w,
                                 vkp__onnx_tensor_t *out_b, bool *out_ok) {
  *out_ok = false;
  double eps = 1e-5;
  for (size_t i = 0; i < bn->n_attribute; ++i) {
    const Onnx__AttributeProto *a = bn->attribute[i];
    const char *n = a && a->name ? a->name : "";
    if (strcmp(n, "epsilon") == 0) eps = a->f;
    else if (strcmp(n, "momentum") == 0 || strcmp(n, "is_test") == 0 ||
             strcmp(n, "consumed_inputs") == 0)
      continue;  // no effect on the result (the last two: opsets 1 to 6)
    else if ((strcmp(n, "spatial") == 0 && a->i == 1) ||
             (strcmp(n, "training_mode") == 0 && a->i == 0))
      continue;
    else return NULL;
  }
  for (size_t i = 1; i < bn->n_output; ++i)
    if (bn->output[i] && bn->output[i][0]) return NULL;
  if (bn->n_output < 1 || !bn->output[0] || !bn->output[0][0]) return NULL;
  if (w->type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || w->rank < 3) return NULL;
  int64_t m = w->shape[0];
  const vkp__onnx_tensor_t *p[4];
  for (int i = 0; i < 4; ++i) {
    vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, bn->input[1 + i]);
    if (!s || !s->is_const) return NULL;
    p[i] = &s->constant;
    if (p[i]->type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || p[i]->rank != 1 ||
        p[i]->shape[0] != m)
      return NULL;
  }
  if (b && (b->type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || b->rank != 1 ||
            b->shape[0] != m))
    return NULL;
  const float *scale = p[0]->data, *shift = p[1]->data, *mean = p[2]->data,
              *var = p[3]->data;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(out_w, w->type, w->rank, w->shape));
  int64_t bshape[1] = {m};
  vkp_status_t st = vkp__onnx_tensor_alloc(out_b, w->type, 1, bshape);
  if (st) {
    vkp__onnx_tensor_deinit(out_w);
    return st;
  }
  size_t per = m ? vkp__onnx_tensor_numel(w) / (size_t)m : 0;
  const float *wd = w->data;
  float *ow = out_w->data, *ob = out_b->data;
  for (int64_t c = 0; c < m; ++c) {
    double f = (double)scale[c] / sqrt((double)var[c] + eps);
    for (size_t j = 0; j < per; ++j)
      ow[(size_t)c * per + j] = (float)((double)wd[(size_t)c * per + j] * f);
    double bias = b ? (double)((const float *)b->data)[c] : 0.0;
    ob[c] = (float)((bias - (double)mean[c]) * f + (double)shift[c]);
  }
  *out_ok = true;
  return NULL;
}

vkp_status_t vkp__map_conv(vkp__onnx_ctx_t *ctx) {
  int32_t x, w, b = -1, s = 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__spatial(ctx, x, &s));
  vkp__onnx_sym_t *wsym = vkp__onnx_input(ctx, 1), *bsym = vkp__onnx_input(ctx, 2);
  if (!wsym) return VKP__ONNX_INVALID("input 1 (W) is required");
  int32_t wrank;
  int64_t wshape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, wsym, &wrank, wshape);
  if (wrank != s + 2)
    return VKP__ONNX_INVALID("weight has rank %d; the input has %d spatial dims",
                             (int)wrank, (int)s);
  int64_t strides[3], dil[3], kernel[3], pads[6], group;
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "strides", s, 1, 1, strides));
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "dilations", s, 1, 1, dil));
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "kernel_shape", s, 0, 1, kernel));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "group", 1, &group));
  for (int32_t i = 0; i < s; ++i) {
    if (vkp__onnx_attr(ctx, "kernel_shape") && kernel[i] != wshape[2 + i])
      return VKP__ONNX_INVALID("kernel_shape entry %d is %lld; the weight's is "
                               "%lld",
                               (int)i, (long long)kernel[i], (long long)wshape[2 + i]);
    kernel[i] = wshape[2 + i];
  }
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  VKP_RETURN_IF_ERROR(
      vkp__window_pads_nd(ctx, s, &xv->shape[2], kernel, strides, dil, pads));
  const char *out = vkp__onnx_output(ctx, 0);
  // A following BatchNormalization folds into the weights when everything
  // is known at import time.
  int32_t bn_index =
      ctx->fold_bn && ctx->node_index >= 0 ? ctx->fold_bn[ctx->node_index] : -1;
  bool folded = false;
  if (bn_index >= 0 && wsym->is_const && (!bsym || bsym->is_const)) {
    const Onnx__NodeProto *bn = ctx->onnx_graph->node[bn_index];
    vkp__onnx_tensor_t fw, fb;
    VKP_RETURN_IF_ERROR(vkp__fold_bn(ctx, bn, &wsym->constant,
                                     bsym ? &bsym->constant : NULL, &fw, &fb,
                                     &folded));
    if (folded) {
      vkp_status_t st = vkp__onnx_add_const(ctx, &fw, &w);
      if (!st) st = vkp__onnx_add_const(ctx, &fb, &b);
      vkp__onnx_tensor_deinit(&fw);
      vkp__onnx_tensor_deinit(&fb);
      VKP_RETURN_IF_ERROR(st);
      out = bn->output[0];
      ctx->skip[bn_index] = true;
    }
  }
  if (!folded) {
    VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, wsym, &w));
    if (bsym) VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, bsym, &b));
  }
  bool unit = s == 1;
  if (unit) {
    VKP_RETURN_IF_ERROR(vkp__add_unit_height(ctx, x, &x));
    VKP_RETURN_IF_ERROR(vkp__add_unit_height(ctx, w, &w));
    vkp__unit_height_attrs(pads, strides, dil, NULL);
    s = 2;
  }
  int32_t in[3] = {x, w, b};
  vkp_attr_t a[4] = {vkp__onnx_a_ints("pads", pads, 2 * s),
                     vkp__onnx_a_ints("strides", strides, s),
                     vkp__onnx_a_ints("dilations", dil, s), vkp__onnx_a_int("group", group)};
  return vkp__emit_window(ctx, VKP_OP_CONV2D, unit, b >= 0 ? 3 : 2, in, 4, a, 1, &out);
}

// ConvTranspose: output_shape (and auto_pad) become explicit pads and
// output_padding at import. With output_shape given, the total padding of
// a dim is what the full output exceeds it by; SAME_UPPER puts the smaller
// half at the beginning, NOTSET and SAME_LOWER the larger (ONNX's
// reference, which the node tests follow).
vkp_status_t vkp__map_conv_transpose(vkp__onnx_ctx_t *ctx) {
  int32_t x, w, b = -1, s = 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__spatial(ctx, x, &s));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &w));
  if (vkp__onnx_input(ctx, 2)) VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &b));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x), *wv = vkp__onnx_value(ctx, w);
  if (wv->rank != s + 2)
    return VKP__ONNX_INVALID("weight has rank %d; the input has %d spatial dims",
                             (int)wv->rank, (int)s);
  int64_t strides[3], dil[3], kernel[3], opad[3], pads[6], group, oshape[3];
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "strides", s, 1, 1, strides));
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "dilations", s, 1, 1, dil));
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "kernel_shape", s, 0, 1, kernel));
  VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "output_padding", s, 0, 0, opad));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "group", 1, &group));
  for (int32_t i = 0; i < s; ++i) {
    if (vkp__onnx_attr(ctx, "kernel_shape") && kernel[i] != wv->shape[2 + i])
      return VKP__ONNX_INVALID("kernel_shape entry %d is %lld; the weight's is "
                               "%lld",
                               (int)i, (long long)kernel[i], (long long)wv->shape[2 + i]);
    kernel[i] = wv->shape[2 + i];
  }
  char auto_pad[32];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_string(ctx, "auto_pad", "NOTSET", auto_pad, sizeof auto_pad));
  bool same = strncmp(auto_pad, "SAME_", 5) == 0;
  bool upper = strcmp(auto_pad, "SAME_UPPER") == 0;
  if (!same && strcmp(auto_pad, "NOTSET") != 0 && strcmp(auto_pad, "VALID") != 0)
    return VKP__ONNX_INVALID("auto_pad '%s' is not NOTSET, SAME_UPPER, "
                             "SAME_LOWER or VALID",
                             auto_pad);
  if (same && !upper && strcmp(auto_pad, "SAME_LOWER") != 0)
    return VKP__ONNX_INVALID("auto_pad '%s' is not SAME_UPPER or SAME_LOWER",
                             auto_pad);
  bool has_shape = vkp__onnx_attr(ctx, "output_shape") != NULL;
  if (has_shape) {
    int64_t given[8];
    int32_t n;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "output_shape", given, 8, &n));
    // output_shape may list N and C too.
    if (n != s && n != s + 2)
      return VKP__ONNX_INVALID("attribute 'output_shape' has %d entries; the "
                               "input has %d spatial dims",
                               (int)n, (int)s);
    for (int32_t i = 0; i < s; ++i) oshape[i] = given[n - s + i];
  } else if (same) {
    for (int32_t i = 0; i < s; ++i) oshape[i] = xv->shape[2 + i] * strides[i];
  }
  if (has_shape || same) {
    for (int32_t i = 0; i < s; ++i) {
      int64_t full = (xv->shape[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dil[i] +
                     1 + opad[i];
      int64_t total = full - oshape[i];
      if (total < 0) {
        // A larger output than the taps reach: the rest is output_padding.
        opad[i] -= total;
        total = 0;
      }
      int64_t small = total / 2, big = total - small;
      pads[i] = upper ? small : big;
      pads[s + i] = upper ? big : small;
    }
  } else {
    VKP_RETURN_IF_ERROR(vkp__window_pads_nd(ctx, s, &xv->shape[2], kernel, strides,
                                            dil, pads));
  }
  bool unit = s == 1;
  if (unit) {
    VKP_RETURN_IF_ERROR(vkp__add_unit_height(ctx, x, &x));
    VKP_RETURN_IF_ERROR(vkp__add_unit_height(ctx, w, &w));
    vkp__unit_height_attrs(pads, strides, dil, opad);
    opad[0] = 0;
    s = 2;
  }
  int32_t in[3] = {x, w, b};
  vkp_attr_t a[5] = {vkp__onnx_a_ints("pads", pads, 2 * s),
                     vkp__onnx_a_ints("strides", strides, s),
                     vkp__onnx_a_ints("dilations", dil, s),
                     vkp__onnx_a_ints("output_padding", opad, s),
                     vkp__onnx_a_int("group", group)};
  const char *out = vkp__onnx_output(ctx, 0);
  return vkp__emit_window(ctx, VKP_OP_CONV_TRANSPOSE, unit, b >= 0 ? 3 : 2, in, 5, a,
                          1, &out);
}

// MaxPool, AveragePool, LpPool and their Global forms (a window over all
// of the spatial dims; GlobalMaxPool is a reduce_max).
vkp_status_t vkp__map_pool(vkp__onnx_ctx_t *ctx) {
  const char *type = ctx->node->op_type;
  bool global = strncmp(type, "Global", 6) == 0;
  const char *kind = global ? type + 6 : type;
  bool is_max = strcmp(kind, "MaxPool") == 0, is_lp = strcmp(kind, "LpPool") == 0;
  bool indices = is_max && !global && vkp__onnx_output(ctx, 1);
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, indices ? 2 : 1));
  int32_t x, s = 0;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__spatial(ctx, x, &s));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int64_t kernel[3], strides[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pads[6] = {0},
                     ceil_mode = 0, count_include_pad = 0, storage_order = 0, p = 2;
  if (is_lp) {
    const Onnx__AttributeProto *pa = vkp__onnx_attr(ctx, "p");
    // Before opset 2, p was a float.
    if (pa && pa->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) {
      if (pa->f != floorf(pa->f) || pa->f < 1)
        return VKP__ONNX_UNSUPPORTED("p = %g: only whole p >= 1", (double)pa->f);
      p = (int64_t)pa->f;
    } else {
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "p", 2, &p));
    }
    if (p < 1) return VKP__ONNX_INVALID("attribute 'p' is %lld; must be >= 1", (long long)p);
  }
  if (global) {
    if (is_max) {
      int64_t axes[3];
      for (int32_t i = 0; i < s; ++i) axes[i] = 2 + i;
      vkp_attr_t a[2] = {vkp__onnx_a_ints("axes", axes, s), vkp__onnx_a_int("keepdims", 1)};
      return vkp__onnx_emit_out(ctx, VKP_OP_REDUCE_MAX, 1, &x, 2, a);
    }
    for (int32_t i = 0; i < s; ++i) kernel[i] = xv->shape[2 + i];
  } else {
    if (!vkp__onnx_attr(ctx, "kernel_shape"))
      return VKP__ONNX_INVALID("attribute 'kernel_shape' is required");
    VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "kernel_shape", s, 1, 1, kernel));
    VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "strides", s, 1, 1, strides));
    // dilations: MaxPool from opset 10, AveragePool and LpPool from 19 and
    // 18; ceil_mode: MaxPool and AveragePool from 10, LpPool from 18.
    int min_dil = is_max ? 10 : is_lp ? 18 : 19, min_ceil = is_lp ? 18 : 10;
    if (vkp__onnx_attr(ctx, "dilations") && ctx->opset < min_dil)
      return VKP__ONNX_INVALID("%s dilations need opset %d", kind, min_dil);
    if (vkp__onnx_attr(ctx, "ceil_mode") && ctx->opset < min_ceil)
      return VKP__ONNX_INVALID("%s ceil_mode needs opset %d", kind, min_ceil);
    VKP_RETURN_IF_ERROR(vkp__attr_nd(ctx, "dilations", s, 1, 1, dil));
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "ceil_mode", 0, &ceil_mode));
    if (is_max)
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "storage_order", 0, &storage_order));
    if (!is_max && !is_lp)
      VKP_RETURN_IF_ERROR(
          vkp__onnx_attr_int(ctx, "count_include_pad", 0, &count_include_pad));
    VKP_RETURN_IF_ERROR(
        vkp__window_pads_nd(ctx, s, &xv->shape[2], kernel, strides, dil, pads));
  }
  bool unit = s == 1;
  if (unit) {
    VKP_RETURN_IF_ERROR(vkp__add_unit_height(ctx, x, &x));
    vkp__unit_height_attrs(pads, strides, dil, kernel);
    s = 2;
  }
  vkp_attr_t a[7] = {vkp__onnx_a_ints("kernel_shape", kernel, s),
                     vkp__onnx_a_ints("pads", pads, 2 * s),
                     vkp__onnx_a_ints("strides", strides, s),
                     vkp__onnx_a_ints("dilations", dil, s),
                     vkp__onnx_a_int("ceil_mode", ceil_mode != 0),
                     vkp__onnx_a_int("storage_order", storage_order),
                     vkp__onnx_a_int("count_include_pad", count_include_pad != 0)};
  const char *names[2] = {vkp__onnx_output(ctx, 0), indices ? vkp__onnx_output(ctx, 1) : NULL};
  vkp_op_t op = is_max ? VKP_OP_MAX_POOL2D : is_lp ? VKP_OP_LP_POOL : VKP_OP_AVG_POOL2D;
  if (is_lp) a[5] = vkp__onnx_a_int("p", p);
  // max: storage_order; avg: count_include_pad (a[6] moved up); lp: p.
  if (!is_max && !is_lp) a[5] = a[6];
  return vkp__emit_window(ctx, op, unit, 1, &x, 6, a, indices ? 2 : 1, names);
}

// ---------------------------------------------------------------------------
// Normalisation

// spatial=0 (opsets 1 to 8): statistics per activation, scale, B, mean and
// var shaped like one sample [C, D1, ...]; elementwise,
// (x - mean) * (scale / sqrt(var + epsilon)) + B, which folds to one
// multiply-add on constants. (1-D statistics are per channel either way.)
static vkp_status_t vkp__batch_norm_per_activation(vkp__onnx_ctx_t *ctx,
                                                   const int32_t *in, double eps) {
  const vkp_value_t *x = vkp__onnx_value(ctx, in[0]);
  for (int32_t i = 1; i < 5; ++i) {
    const vkp_value_t *p = vkp__onnx_value(ctx, in[i]);
    bool fits = p->rank == x->rank - 1;
    for (int32_t d = 0; fits && d < p->rank; ++d)
      fits = p->shape[d] == x->shape[d + 1];
    if (!fits)
      return VKP__ONNX_INVALID("spatial=0: input %d must have X's shape less "
                               "the batch dim (or be 1-D per channel)",
                               (int)i);
  }
  int32_t e, v, r, f, c, m;
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, eps, &e));
  int32_t ve[2] = {in[4], e};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_ADD, 2, ve, 0, NULL, NULL, &v));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_SQRT, 1, &v, 0, NULL, NULL, &r));
  int32_t sr[2] = {in[1], r};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_DIV, 2, sr, 0, NULL, NULL, &f));
  int32_t xm[2] = {in[0], in[3]};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_SUB, 2, xm, 0, NULL, NULL, &c));
  int32_t cf[2] = {c, f};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_MUL, 2, cf, 0, NULL, NULL, &m));
  int32_t mb[2] = {m, in[2]};
  return vkp__onnx_emit_out(ctx, VKP_OP_ADD, 2, mb, 0, NULL);
}

vkp_status_t vkp__map_batch_norm(vkp__onnx_ctx_t *ctx) {
  double eps;
  int64_t spatial, training;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "epsilon", 1e-5, &eps));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "spatial", 1, &spatial));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "training_mode", 0, &training));
  if (training != 0)
    return VKP__ONNX_UNSUPPORTED(
        "training_mode=1 (normalise with the batch's statistics and output "
        "updated running statistics): vkpipe runs inference only");
  if (spatial != 0 && spatial != 1)
    return VKP__ONNX_INVALID("spatial=%lld (0 or 1)", (long long)spatial);
  if (spatial == 0 && ctx->opset >= 9)
    return VKP__ONNX_INVALID("attribute 'spatial' was removed in opset 9");
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  if (ctx->node->n_input != 5)
    return VKP__ONNX_INVALID("takes 5 inputs, has %zu", ctx->node->n_input);
  int32_t in[5];
  for (int32_t i = 0; i < 5; ++i)
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  vkp_attr_t a = vkp__onnx_a_float("epsilon", (float)eps);
  const vkp_value_t *x = vkp__onnx_value(ctx, in[0]);
  bool per_channel = true;
  for (int32_t i = 1; i < 5; ++i)
    per_channel = per_channel && vkp__onnx_value(ctx, in[i])->rank == 1;
  if (!spatial && !per_channel) return vkp__batch_norm_per_activation(ctx, in, eps);
  if (x->rank != 1)
    return vkp__onnx_emit_out(ctx, VKP_OP_BATCH_NORM, 5, in, 1, &a);
  // A 1-D input is N values of one channel: [N] -> [N, 1] and back.
  int64_t n = x->shape[0], col[2] = {n, 1};
  vkp_attr_t ra = vkp__onnx_a_ints("shape", col, 2), ba = vkp__onnx_a_ints("shape", &n, 1);
  int32_t r, y;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &in[0], 1, &ra, NULL, &r));
  in[0] = r;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_BATCH_NORM, 5, in, 1, &a, NULL, &y));
  return vkp__onnx_emit_out(ctx, VKP_OP_RESHAPE, 1, &y, 1, &ba);
}

// A float32 scalar IR constant.
vkp_status_t vkp__onnx_scalar_const(vkp__onnx_ctx_t *ctx, double v,
                                      int32_t *out_value) {
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL));
  vkp__onnx_tensor_set_f(&t, 0, v);
  vkp_status_t st = vkp__onnx_add_const(ctx, &t, out_value);
  vkp__onnx_tensor_deinit(&t);
  return st;
}

vkp_status_t vkp__onnx_emit_bind(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                   int32_t n_in, const int32_t *in,
                                   int32_t n_attrs, const vkp_attr_t *attrs,
                                   const char *out, int32_t *out_value) {
  VKP_RETURN_IF_ERROR(
      vkp__onnx_emit(ctx, op, n_in, in, n_attrs, attrs, out, out_value));
  return out ? vkp__onnx_bind_value(ctx, out, *out_value) : NULL;
}

vkp_status_t vkp__map_layer_norm(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 3));
  int64_t axis, stash;
  double eps;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", -1, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "epsilon", 1e-5, &eps));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "stash_type", 1, &stash));
  if (stash != 1)
    return VKP__ONNX_UNSUPPORTED("stash_type %lld (only 1, float)",
                                 (long long)stash);
  int32_t in[3] = {-1, -1, -1}, n_in = 2;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  if (vkp__onnx_input(ctx, 2)) {
    VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 2, &in[2]));
    n_in = 3;
  }
  int32_t rank = vkp__onnx_value(ctx, in[0])->rank;
  if (axis < -(int64_t)rank || axis >= rank)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                             (long long)axis, (int)rank);
  if (axis < 0) axis += rank;
  vkp_attr_t a[2] = {vkp__onnx_a_int("axis", axis), vkp__onnx_a_float("epsilon", (float)eps)};
  int32_t y;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_LAYER_NORM, n_in, in, 2, a,
                                     vkp__onnx_output(ctx, 0), &y));
  const char *mean_out = vkp__onnx_output(ctx, 1),
             *inv_out = vkp__onnx_output(ctx, 2);
  if (!mean_out && !inv_out) return NULL;
  // The optional Mean and InvStdDev outputs, from IR ops:
  // mean = E[x], inv = 1 / sqrt(E[(x - mean)^2] + epsilon), over axis.. .
  int64_t axes[VKP_MAX_RANK];
  for (int32_t d = (int32_t)axis; d < rank; ++d) axes[d - axis] = d;
  vkp_attr_t r[2] = {vkp__onnx_a_ints("axes", axes, rank - (int32_t)axis),
                     vkp__onnx_a_int("keepdims", 1)};
  int32_t mean, diff, sq, var, e, one, ve, sd, inv;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_REDUCE_MEAN, 1, in, 2, r,
                                     mean_out, &mean));
  if (!inv_out) return NULL;
  int32_t dm[2] = {in[0], mean};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_SUB, 2, dm, 0, NULL, NULL, &diff));
  int32_t dd[2] = {diff, diff};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_MUL, 2, dd, 0, NULL, NULL, &sq));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_REDUCE_MEAN, 1, &sq, 2, r, NULL, &var));
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, (float)eps, &e));
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, 1.0, &one));
  int32_t vpe[2] = {var, e};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_ADD, 2, vpe, 0, NULL, NULL, &ve));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_bind(ctx, VKP_OP_SQRT, 1, &ve, 0, NULL, NULL, &sd));
  int32_t os[2] = {one, sd};
  return vkp__onnx_emit_bind(ctx, VKP_OP_DIV, 2, os, 0, NULL, inv_out, &inv);
}

static int64_t vkp__prod(const int64_t *s, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t i = from; i < to; ++i) p *= s[i];
  return p;
}

// ---------------------------------------------------------------------------
// Shape ops

vkp_status_t vkp__onnx_reshape_target(vkp__onnx_ctx_t *ctx, int32_t rank,
                                      const int64_t *shape, int32_t *out_rank,
                                      int64_t *out_shape) {
  return vkp__onnx_reshape_axes(ctx, rank, shape, out_rank, out_shape, NULL,
                                NULL);
}

// Reshape's target when exactly one of its entries is computed at run time
// (exporters' Concat of Unsqueeze(Gather(Shape(v), k)) pieces, where
// Shape(v)[k] is the run-time extent of a bounded v): that entry becomes
// -1. ONNX Reshape keeps the element count, so the entry can only be what
// -1 infers.
static bool vkp__shape_one_unknown(vkp__onnx_ctx_t *ctx, const vkp__onnx_sym_t *s,
                                   int64_t *spec, int32_t *out_n) {
  if (!s || s->is_const || s->value < 0) return false;
  const vkp_value_t *v = vkp__onnx_value(ctx, s->value);
  if (v->rank != 1 || v->bounded || v->dtype != VKP_DTYPE_INT64 ||
      v->shape[0] > VKP_MAX_RANK)
    return false;
  if (v->shape[0] == 1) {
    spec[0] = -1;
    *out_n = 1;
    return true;
  }
  vkp__shape_expr_t e;
  if (vkp__onnx_shape_expr(ctx, s->value, &e) && e.n == v->shape[0]) {
    // Entries known but for one extent (which becomes the -1). A -1 beside
    // it is resolved here against the bounded input's static dims: the
    // extent entry stands for the input's varying extent.
    int32_t extent = -1, infer = -1;
    int64_t known = 1;
    for (int32_t i = 0; i < e.n; ++i) {
      if (e.d[i].src >= 0) {
        if (extent >= 0) return false;
        extent = i;
      } else if (e.d[i].value == -1) {
        infer = i;
      } else {
        known *= e.d[i].value;
      }
      spec[i] = e.d[i].value;
    }
    if (extent >= 0 && infer >= 0) {
      const vkp__onnx_sym_t *xs = vkp__onnx_input(ctx, 0);
      const vkp_value_t *x = xs && !xs->is_const && xs->value >= 0
                                 ? vkp__onnx_value(ctx, xs->value) : NULL;
      if (!x || !x->bounded || known <= 0) return false;
      int64_t others = 1;
      for (int32_t d = 0; d < x->rank; ++d)
        if (d != x->bounded_axis) others *= x->shape[d];
      if (others % known) return false;
      spec[infer] = others / known;
    }
    if (extent >= 0) {
      spec[extent] = -1;
      *out_n = e.n;
      return true;
    }
  }
  if (v->producer < 0 || ctx->graph->nodes[v->producer].op != VKP_OP_CONCAT) return false;
  const vkp_node_t *cat = &ctx->graph->nodes[v->producer];
  int32_t n = 0, unknown = 0;
  for (int32_t i = 0; i < cat->n_inputs; ++i) {
    const vkp_value_t *u = vkp__onnx_value(ctx, cat->inputs[i]);
    if (u->rank != 1 || u->bounded) return false;
    if (u->kind != VKP_VALUE_CONSTANT) {
      if (u->shape[0] != 1 || unknown++) return false;
      spec[n++] = -1;
      continue;
    }
    for (int64_t j = 0; j < u->shape[0]; ++j) {
      int64_t d;
      memcpy(&d, (const char *)u->data + j * (int64_t)sizeof d, sizeof d);
      if (d == -1) return false;  // a second -1
      spec[n++] = d;
    }
  }
  *out_n = n;
  return unknown == 1;
}

// Reshape's target as ints: a constant, or one entry at run time (-1).
static vkp_status_t vkp__reshape_spec(vkp__onnx_ctx_t *ctx, int64_t *spec,
                                      int32_t *out_n) {
  if (vkp__shape_one_unknown(ctx, vkp__onnx_input(ctx, 1), spec, out_n)) return NULL;
  const vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 1);
  if (!s) return VKP__ONNX_INVALID("input 1 (shape) is required");
  if (!s->is_const)
    return VKP__ONNX_UNSUPPORTED("shape (input 1, '%s') must be known at import "
                                 "time (an initializer or a constant "
                                 "expression), or computed at run time in one "
                                 "entry only",
                                 s->name);
  const vkp__onnx_tensor_t *t = &s->constant;
  return vkp__onnx_const_ints(t, "shape", spec, VKP_MAX_RANK, out_n);
}

vkp_status_t vkp__onnx_reshape_axes(vkp__onnx_ctx_t *ctx, int32_t rank,
                                    const int64_t *shape, int32_t *out_rank,
                                    int64_t *out_shape, int64_t *out_axes,
                                    int32_t *out_n_axes) {
  const char *op = ctx->node->op_type;
  int64_t axes[VKP_MAX_RANK];
  int32_t n = -1;
  if (strcmp(op, "Reshape") == 0) {
    VKP_RETURN_IF_ERROR(vkp__reshape_spec(ctx, out_shape, &n));
    int64_t allowzero;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "allowzero", 0, &allowzero));
    size_t total = 1, known = 1;
    int32_t infer = -1;
    for (int32_t i = 0; i < rank; ++i) total *= (size_t)shape[i];
    for (int32_t i = 0; i < n; ++i) {
      int64_t d = out_shape[i];
      if (d == 0 && !allowzero) {
        if (i >= rank)
          return VKP__ONNX_INVALID("shape entry %d is 0 (copy) but the input "
                                   "has rank %d",
                                   (int)i, (int)rank);
        d = out_shape[i] = shape[i];
      }
      if (d == -1) {
        if (infer >= 0) return VKP__ONNX_INVALID("shape has more than one -1");
        infer = i;
        continue;
      }
      if (d < 0)
        return VKP__ONNX_INVALID("shape entry %d is %lld", (int)i, (long long)d);
      if (d > 0 && known > SIZE_MAX / (size_t)d)
        return VKP__ONNX_INVALID("shape is too large");
      known *= (size_t)d;
    }
    if (infer >= 0) {
      if (known == 0 || total % known)
        return VKP__ONNX_INVALID("cannot infer the -1 entry of the shape");
      out_shape[infer] = (int64_t)(total / known);
      known = total;
    }
    if (known != total)
      return VKP__ONNX_INVALID("cannot reshape %zu elements into %zu", total,
                               known);
    *out_rank = n;
    return NULL;
  }
  if (strcmp(op, "Flatten") == 0) {
    int64_t axis;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 1, &axis));
    if (axis < -(int64_t)rank || axis > rank)
      return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                               (long long)axis, (int)rank);
    if (axis < 0) axis += rank;
    out_shape[0] = vkp__prod(shape, 0, (int32_t)axis);
    out_shape[1] = vkp__prod(shape, (int32_t)axis, rank);
    *out_rank = 2;
    return NULL;
  }
  if (strcmp(op, "Identity") == 0) {
    for (int32_t i = 0; i < rank; ++i) out_shape[i] = shape[i];
    *out_rank = rank;
    return NULL;
  }
  bool squeeze = strcmp(op, "Squeeze") == 0;
  if (ctx->opset >= 13) {
    if (vkp__onnx_attr(ctx, "axes"))
      return VKP__ONNX_INVALID("from opset 13 axes are an input");
    const vkp__onnx_tensor_t *t;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "axes", &t));
    if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "axes", axes, VKP_MAX_RANK, &n));
  } else {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "axes", axes, VKP_MAX_RANK, &n));
  }
  bool mark[VKP_MAX_RANK] = {false};
  if (squeeze) {
    if (n <= 0) {
      for (int32_t d = 0; d < rank; ++d) mark[d] = shape[d] == 1;
    } else {
      for (int32_t i = 0; i < n; ++i) {
        int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank || mark[a])
          return VKP__ONNX_INVALID("axis %lld is out of range or repeated",
                                   (long long)axes[i]);
        if (shape[a] != 1)
          return VKP__ONNX_INVALID("cannot squeeze axis %lld of size %lld",
                                   (long long)a, (long long)shape[a]);
        mark[a] = true;
      }
    }
    *out_rank = 0;
    for (int32_t d = 0; d < rank; ++d) {
      if (!mark[d]) out_shape[(*out_rank)++] = shape[d];
      else if (out_axes) out_axes[(*out_n_axes)++] = d;
    }
    return NULL;
  }
  // Unsqueeze
  if (n <= 0) return VKP__ONNX_INVALID("axes are required");
  int32_t r = rank + n;
  if (r > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("result rank %d exceeds %d", (int)r, VKP_MAX_RANK);
  for (int32_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || mark[a])
      return VKP__ONNX_INVALID("axis %lld is out of range or repeated",
                               (long long)axes[i]);
    mark[a] = true;
  }
  for (int32_t d = 0, k = 0; d < r; ++d) {
    out_shape[d] = mark[d] ? 1 : shape[k++];
    if (mark[d] && out_axes) out_axes[(*out_n_axes)++] = d;
  }
  *out_rank = r;
  return NULL;
}


// Reshape, Flatten, Squeeze and Unsqueeze on a runtime tensor: the IR op of
// the same name, after computing the target shape here with ONNX's rules
// (Reshape gets the resolved shape, Squeeze/Unsqueeze normalised axes).
vkp_status_t vkp__map_reshape_like(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank, n_axes = 0;
  int64_t shape[VKP_MAX_RANK], axes[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__onnx_reshape_axes(ctx, xv->rank, xv->shape, &rank,
                                             shape, axes, &n_axes));
  const char *op = ctx->node->op_type;
  bool squeeze = strcmp(op, "Squeeze") == 0;
  if (squeeze || strcmp(op, "Unsqueeze") == 0) {
    if (squeeze && n_axes == 0)  // nothing to remove: the IR reads [] as all
      return vkp__map_passthrough(ctx);
    vkp_attr_t a = vkp__onnx_a_ints("axes", axes, n_axes);
    return vkp__onnx_emit_out(ctx, squeeze ? VKP_OP_SQUEEZE : VKP_OP_UNSQUEEZE, 1,
                         &x, 1, &a);
  }
  if (strcmp(op, "Flatten") == 0) {
    int64_t axis;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 1, &axis));
    vkp_attr_t a = vkp__onnx_a_int("axis", axis < 0 ? axis + xv->rank : axis);
    return vkp__onnx_emit_out(ctx, VKP_OP_FLATTEN, 1, &x, 1, &a);
  }
  // The IR reads a 0 in a reshape target as "copy the input's dim".
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] == 0 && (i >= xv->rank || xv->shape[i] != 0))
      return VKP__ONNX_UNSUPPORTED("a result with a 0-sized dim %d (the IR "
                                   "reshape reads 0 as 'copy')",
                                   (int)i);
  if (xv->bounded) {
    // A bounded input: the exporter's -1 (or a 0 copying the bounded dim)
    // says where the run-time extent goes; keep it for the IR.
    int64_t spec[VKP_MAX_RANK];
    int32_t n = 0;
    VKP_RETURN_IF_ERROR(vkp__reshape_spec(ctx, spec, &n));
    for (int32_t i = 0; i < n && i < rank; ++i)
      if (spec[i] == -1 || (spec[i] == 0 && i == xv->bounded_axis)) shape[i] = spec[i];
  }
  vkp_attr_t a = vkp__onnx_a_ints("shape", shape, rank);
  return vkp__onnx_emit_out(ctx, VKP_OP_RESHAPE, 1, &x, 1, &a);
}

vkp_status_t vkp__onnx_transpose_perm(vkp__onnx_ctx_t *ctx, int32_t rank,
                                      int64_t *out_perm) {
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "perm", out_perm, VKP_MAX_RANK, &n));
  if (n < 0) {
    for (int32_t i = 0; i < rank; ++i) out_perm[i] = rank - 1 - i;
    return NULL;
  }
  bool used[VKP_MAX_RANK] = {false};
  if (n != rank)
    return VKP__ONNX_INVALID("perm has %d entries for rank %d", (int)n, (int)rank);
  for (int32_t i = 0; i < n; ++i) {
    if (out_perm[i] < 0 || out_perm[i] >= rank || used[out_perm[i]])
      return VKP__ONNX_INVALID("perm is not a permutation");
    used[out_perm[i]] = true;
  }
  return NULL;
}

vkp_status_t vkp__map_transpose(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  int64_t perm[VKP_MAX_RANK];
  int32_t rank = vkp__onnx_value(ctx, x)->rank;
  VKP_RETURN_IF_ERROR(vkp__onnx_transpose_perm(ctx, rank, perm));
  vkp_attr_t a = vkp__onnx_a_ints("perm", perm, rank);
  return vkp__onnx_emit_out(ctx, VKP_OP_TRANSPOSE, 1, &x, 1, &a);
}

// The most inputs one imported concat node takes (see vkp__map_concat).
#define VKP__CONCAT_FANIN 32

vkp_status_t vkp__onnx_concat_values(vkp__onnx_ctx_t *ctx, int32_t n,
                                     int32_t *in, int64_t axis,
                                     const char *out, int32_t *out_value) {
  vkp_status_t st = NULL;
  vkp_attr_t a = vkp__onnx_a_int("axis", axis);
  // Any number of inputs: past VKP__CONCAT_FANIN, consecutive runs are
  // concatenated first and their results concatenated (the same tensor; it
  // keeps every node within what the emitters and a shader's bindings take).
  while (!st && n > VKP__CONCAT_FANIN) {
    int32_t groups = (n + VKP__CONCAT_FANIN - 1) / VKP__CONCAT_FANIN;
    for (int32_t gi = 0; gi < groups && !st; ++gi) {
      int32_t first = gi * VKP__CONCAT_FANIN;
      int32_t count = n - first < VKP__CONCAT_FANIN ? n - first : VKP__CONCAT_FANIN;
      if (count == 1) {
        in[gi] = in[first];
        continue;
      }
      st = vkp__onnx_emit(ctx, VKP_OP_CONCAT, count, in + first, 1, &a, NULL,
                          &in[gi]);
    }
    n = groups;
  }
  if (!st) st = vkp__onnx_emit(ctx, VKP_OP_CONCAT, n, in, 1, &a, out, out_value);
  if (!st && out) st = vkp__onnx_bind_value(ctx, out, *out_value);
  return st;
}

vkp_status_t vkp__map_concat(vkp__onnx_ctx_t *ctx) {
  if (!vkp__onnx_attr(ctx, "axis"))
    return VKP__ONNX_INVALID("attribute 'axis' is required");
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  size_t n = ctx->node->n_input;
  if (n < 1 || n > INT32_MAX / 2)
    return VKP__ONNX_INVALID("Concat of %zu inputs", n);
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  int32_t *in = vkp__calloc(n, sizeof *in);
  if (!in) return VKP_OOM("Concat inputs");
  vkp_status_t st = NULL;
  for (size_t i = 0; i < n && !st; ++i)
    st = vkp__onnx_input_value(ctx, (int32_t)i, &in[i]);
  int32_t y;
  if (!st)
    st = vkp__onnx_concat_values(ctx, (int32_t)n, in, axis,
                                 vkp__onnx_output(ctx, 0), &y);
  vkp__free(in);
  return st;
}

// Slice's ends computed at run time, as x[:n] where n is the run-time
// extent of a value whose extent is x's own along the same axis (exporters
// write it when they trim a batch to the count of proposals): that end
// keeps the whole axis. The other entries must be known. False when the
// ends are not of that form (the caller then wants them constant).
static bool vkp__slice_ends_through(vkp__onnx_ctx_t *ctx, int64_t *ends, int32_t *out_n) {
  const vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 2);
  vkp__shape_expr_t e;
  if (!s || s->is_const || s->value < 0 || !vkp__onnx_shape_expr(ctx, s->value, &e))
    return false;
  const vkp__onnx_sym_t *xs = vkp__onnx_input(ctx, 0);
  if (!xs || xs->is_const || xs->value < 0) return false;
  const vkp_value_t *x = vkp__onnx_value(ctx, xs->value);
  const vkp__onnx_sym_t *as = vkp__onnx_input(ctx, 3);
  const vkp__onnx_tensor_t *axes = as && as->is_const ? &as->constant : NULL;
  if (as && !axes) return false;
  for (int32_t i = 0; i < e.n; ++i) {
    if (e.d[i].src < 0) {
      ends[i] = e.d[i].value;
      continue;
    }
    int64_t a = axes ? vkp__onnx_tensor_get_i(axes, (size_t)i) : i;
    if (a < 0) a += x->rank;
    if (!x->bounded || a != x->bounded_axis ||
        vkp__onnx_extent_origin(ctx, e.d[i].src) != vkp__onnx_extent_origin(ctx, xs->value))
      return false;
    ends[i] = INT64_MAX;
  }
  *out_n = e.n;
  return true;
}

vkp_status_t vkp__onnx_slice_params(vkp__onnx_ctx_t *ctx, int32_t rank,
                                    const int64_t *shape,
                                    vkp__onnx_slice_t *out) {
  memset(out, 0, sizeof *out);
  int32_t ns = -1, ne = -1, na = -1, nst = -1;
  if (ctx->opset < 10) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "starts", out->starts, VKP_MAX_RANK, &ns));
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "ends", out->ends, VKP_MAX_RANK, &ne));
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "axes", out->axes, VKP_MAX_RANK, &na));
  } else {
    if (vkp__onnx_attr(ctx, "starts") || vkp__onnx_attr(ctx, "ends") ||
        vkp__onnx_attr(ctx, "axes"))
      return VKP__ONNX_INVALID("from opset 10 Slice takes inputs, not "
                               "attributes");
    const vkp__onnx_tensor_t *t;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "starts", &t));
    if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "starts", out->starts, VKP_MAX_RANK, &ns));
    if (!vkp__slice_ends_through(ctx, out->ends, &ne)) {
      VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "ends", &t));
      if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "ends", out->ends, VKP_MAX_RANK, &ne));
    }
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 3, "axes", &t));
    if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "axes", out->axes, VKP_MAX_RANK, &na));
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 4, "steps", &t));
    if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "steps", out->steps, VKP_MAX_RANK, &nst));
  }
  if (ns < 0 || ne < 0) return VKP__ONNX_INVALID("starts and ends are required");
  if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return VKP__ONNX_INVALID("starts, ends, axes and steps differ in length");
  if (ns > rank)
    return VKP__ONNX_INVALID("%d slice entries for rank %d", (int)ns, (int)rank);
  out->count = ns;
  for (int32_t i = 0; i < ns; ++i) {
    if (na < 0) out->axes[i] = i;
    if (nst < 0) out->steps[i] = 1;
    int64_t a = out->axes[i] < 0 ? out->axes[i] + rank : out->axes[i];
    if (a < 0 || a >= rank)
      return VKP__ONNX_INVALID("slice axis %lld out of range for rank %d",
                               (long long)out->axes[i], (int)rank);
    // A step longer than the dim takes one element either way; clamping it
    // keeps later arithmetic (ends - starts + step) far from overflow.
    int64_t dim = shape[a] > 1 ? shape[a] : 1;
    if (out->steps[i] > dim) out->steps[i] = dim;
    if (out->steps[i] < -dim) out->steps[i] = -dim;
  }
  return NULL;
}

// An int64 IR constant of `n` values, shape [n].
static vkp_status_t vkp__slice_i64_const(vkp__onnx_ctx_t *ctx, const int64_t *values,
                                         int64_t n, int32_t *out_value) {
  vkp__onnx_tensor_t t = {0};
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &n));
  for (int64_t i = 0; i < n; ++i) vkp__onnx_tensor_set_i(&t, (size_t)i, values[i]);
  vkp_status_t st = vkp__onnx_add_const(ctx, &t, out_value);
  vkp__onnx_tensor_deinit(&t);
  return st;
}

// Input `i` (starts or ends, one entry) as an int64 [1] IR value, wrapped
// and clamped into [0, n] as ONNX does: v < 0 counts from the end.
static vkp_status_t vkp__slice_bound(vkp__onnx_ctx_t *ctx, int32_t i, int32_t n_const,
                                     int32_t zero, int32_t *out_value) {
  int32_t v;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &v));
  if (vkp__onnx_value(ctx, v)->dtype != VKP_DTYPE_INT64) {
    vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "int64"};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_CAST, 1, &v, 1, &to, NULL, &v));
  }
  int32_t neg, wrapped;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_LESS, v, zero, &neg));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_ADD, v, n_const, &wrapped));
  const int32_t pick[3] = {neg, wrapped, v};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_WHERE, 3, pick, 0, NULL, NULL, &v));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_MAX, v, zero, &v));
  return vkp__onnx_emit2(ctx, VKP_OP_MIN, v, n_const, out_value);
}

// Slice whose starts or ends are computed at run time, as torch exports
// nn.EmbeddingBag (a Loop whose body slices the ids between two run-time
// offsets): one axis, a constant positive step. The positions p of that
// axis kept are start <= p < end with (p - start) % step == 0 (start and
// end wrapped and clamped as ONNX says), gathered like a run-time Compress:
// gather(x, reshape(non_zero(mask), [-1]), axis), a value bounded by the
// axis length ("Data-dependent output shapes" in docs/onnx.md).
static vkp_status_t vkp__map_slice_runtime(vkp__onnx_ctx_t *ctx, int32_t x) {
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank = xv->rank;
  for (int32_t i = 1; i <= 2; ++i) {
    int32_t r;
    int64_t shape[VKP_MAX_RANK], entries = 1;
    vkp__onnx_sym_shape(ctx, vkp__onnx_input(ctx, i), &r, shape);
    for (int32_t d = 0; d < r; ++d) entries *= shape[d];
    if (r != 1 || entries != 1)
      return VKP__ONNX_UNSUPPORTED("%s has %lld entries and starts or ends are computed at "
                                   "run time; such a slice takes exactly one axis",
                                   i == 1 ? "starts" : "ends", (long long)entries);
  }
  const vkp__onnx_tensor_t *t;
  int64_t axis = 0, step = 1;
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 3, "axes of a run-time slice", &t));
  if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "axes", &axis, 1, &n));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 4, "steps of a run-time slice", &t));
  if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "steps", &step, 1, &n));
  if (axis < -(int64_t)rank || axis >= rank)
    return VKP__ONNX_INVALID("slice axis %lld out of range for rank %d", (long long)axis,
                             (int)rank);
  if (axis < 0) axis += rank;
  if (step <= 0)
    return VKP__ONNX_UNSUPPORTED("step %lld with run-time starts or ends (a run-time slice "
                                 "takes a positive step)", (long long)step);
  if (xv->bounded)
    return VKP__ONNX_UNSUPPORTED("input 0 has a data-dependent shape; a slice with "
                                 "run-time starts or ends takes a static one");
  int64_t len = xv->shape[axis], zero_v = 0;
  if (len < 1 || len > ((int64_t)1 << 24))
    return VKP__ONNX_UNSUPPORTED("a run-time slice of an axis of %lld (1 to 2^24)",
                                 (long long)len);
  int64_t *iota = vkp__malloc((size_t)len * sizeof *iota);
  if (!iota) return VKP_OOM("run-time slice positions");
  for (int64_t i = 0; i < len; ++i) iota[i] = i;
  int32_t pos, zero, n_const;
  vkp_status_t st = vkp__slice_i64_const(ctx, iota, len, &pos);
  vkp__free(iota);
  VKP_RETURN_IF_ERROR(st);
  VKP_RETURN_IF_ERROR(vkp__slice_i64_const(ctx, &zero_v, 1, &zero));
  VKP_RETURN_IF_ERROR(vkp__slice_i64_const(ctx, &len, 1, &n_const));
  int32_t start, end, lo, hi, mask;
  VKP_RETURN_IF_ERROR(vkp__slice_bound(ctx, 1, n_const, zero, &start));
  VKP_RETURN_IF_ERROR(vkp__slice_bound(ctx, 2, n_const, zero, &end));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_GREATER_OR_EQUAL, pos, start, &lo));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_LESS, pos, end, &hi));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_AND, lo, hi, &mask));
  if (step > 1) {
    int32_t offset, rem, on_step, step_c;
    VKP_RETURN_IF_ERROR(vkp__slice_i64_const(ctx, &step, 1, &step_c));
    VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_SUB, pos, start, &offset));
    VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_MOD, offset, step_c, &rem));
    VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_EQUAL, rem, zero, &on_step));
    VKP_RETURN_IF_ERROR(vkp__onnx_emit2(ctx, VKP_OP_AND, mask, on_step, &mask));
  }
  return vkp__onnx_emit_compress(ctx, x, mask, axis);
}

vkp_status_t vkp__map_slice(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  if (ctx->opset >= 10) {
    const vkp__onnx_sym_t *starts = vkp__onnx_input(ctx, 1), *ends = vkp__onnx_input(ctx, 2);
    int64_t through[VKP_MAX_RANK];
    int32_t n_through;
    if (starts && ends &&
        (!starts->is_const ||
         (!ends->is_const && !vkp__slice_ends_through(ctx, through, &n_through))))
      return vkp__map_slice_runtime(ctx, x);
  }
  vkp__onnx_slice_t s;
  VKP_RETURN_IF_ERROR(vkp__onnx_slice_params(ctx, vkp__onnx_value(ctx, x)->rank,
                                             vkp__onnx_value(ctx, x)->shape, &s));
  vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", s.starts, s.count),
                     vkp__onnx_a_ints("ends", s.ends, s.count),
                     vkp__onnx_a_ints("axes", s.axes, s.count),
                     vkp__onnx_a_ints("steps", s.steps, s.count)};
  return vkp__onnx_emit_out(ctx, VKP_OP_SLICE, 1, &x, 4, a);
}

// Split: one IR slice per output.
vkp_status_t vkp__map_split(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  if (axis < -(int64_t)xv->rank || axis >= xv->rank)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                             (long long)axis, (int)xv->rank);
  if (axis < 0) axis += xv->rank;
  int64_t dim = xv->shape[axis];
  size_t n_out = ctx->node->n_output;
  if (n_out < 1 || n_out > 64)
    return VKP__ONNX_UNSUPPORTED("Split into %zu outputs (1 to 64)", n_out);
  int64_t sizes[64];
  int32_t n = -1;
  if (ctx->opset >= 13) {
    if (vkp__onnx_attr(ctx, "split"))
      return VKP__ONNX_INVALID("from opset 13 split is an input");
    const vkp__onnx_tensor_t *t;
    VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "split", &t));
    if (t) VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "split", sizes, 64, &n));
  } else {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "split", sizes, 64, &n));
  }
  if (n < 0) {
    // No sizes: equal parts. From opset 18 `num_outputs` gives the count and
    // parts are ceil(dim / count) long, the last one shorter; before, the
    // output count, and the axis must divide evenly.
    int64_t parts = (int64_t)n_out;
    if (ctx->opset >= 18) {
      if (!vkp__onnx_attr(ctx, "num_outputs"))
        return VKP__ONNX_INVALID("from opset 18 Split needs the 'split' input "
                                 "or the 'num_outputs' attribute");
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_outputs", 0, &parts));
      if (parts != (int64_t)n_out)
        return VKP__ONNX_INVALID("num_outputs is %lld, the node has %zu outputs",
                                 (long long)parts, n_out);
      int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t i = 0; i < parts; ++i) {
        int64_t left = dim - i * chunk;
        sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
      }
    } else {
      if (dim % parts)
        return VKP__ONNX_INVALID("dimension %lld does not split evenly into %lld",
                                 (long long)dim, (long long)parts);
      for (int64_t i = 0; i < parts; ++i) sizes[i] = dim / parts;
    }
    n = (int32_t)parts;
  } else if (vkp__onnx_attr(ctx, "num_outputs")) {
    return VKP__ONNX_INVALID("'split' and 'num_outputs' are both given");
  }
  if ((size_t)n != n_out)
    return VKP__ONNX_INVALID("split has %d entries for %zu outputs", (int)n, n_out);
  int64_t sum = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (sizes[i] < 0) return VKP__ONNX_INVALID("negative split size");
    if (sizes[i] > dim - sum)  // (also keeps the sum from overflowing)
      return VKP__ONNX_INVALID("split sizes add up to more than the axis's %lld",
                               (long long)dim);
    sum += sizes[i];
  }
  if (sum != dim)
    return VKP__ONNX_INVALID("split sizes add up to %lld, the axis has %lld",
                             (long long)sum, (long long)dim);
  int64_t start = 0;
  for (int32_t i = 0; i < n; ++i) {
    const char *out = vkp__onnx_output(ctx, i);
    int64_t s = start, e = start + sizes[i], ax = axis, st = 1;
    start = e;
    if (!out) continue;
    vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", &s, 1), vkp__onnx_a_ints("ends", &e, 1),
                       vkp__onnx_a_ints("axes", &ax, 1), vkp__onnx_a_ints("steps", &st, 1)};
    int32_t value;
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_SLICE, 1, &x, 4, a, out, &value));
    VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, out, value));
  }
  return NULL;
}

// Identity disappears: the output names the input (Dropout: onnx_elementwise.c).
vkp_status_t vkp__map_passthrough(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (!x) return VKP__ONNX_INVALID("input 0 is required");
  return vkp__onnx_bind_alias(ctx, vkp__onnx_output(ctx, 0), x);
}

// Shape and Size of a static shape fold. Of a bounded value (one whose
// extent is known only at run time) they become the IR's shape op (and a
// reduce_prod of it for Size).
vkp_status_t vkp__map_shape(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (!x) return VKP__ONNX_INVALID("input 0 is required");
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, x, &rank, shape);
  bool is_size = strcmp(ctx->node->op_type, "Size") == 0;
  if (!x->is_const && x->value >= 0 && vkp__onnx_value(ctx, x->value)->bounded) {
    int64_t start = 0, end = rank;
    if (ctx->opset >= 15 && !is_size) {
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "start", 0, &start));
      VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "end", rank, &end));
    }
    vkp_attr_t a[2] = {vkp__onnx_a_int("start", start), vkp__onnx_a_int("end", end)};
    if (!is_size) return vkp__onnx_emit_out(ctx, VKP_OP_SHAPE, 1, &x->value, 2, a);
    int32_t dims;
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_SHAPE, 1, &x->value, 2, a, NULL, &dims));
    vkp_attr_t keep = vkp__onnx_a_int("keepdims", 0);
    return vkp__onnx_emit_out(ctx, VKP_OP_REDUCE_PROD, 1, &dims, 1, &keep);
  }
  vkp__onnx_tensor_t t;
  if (is_size) {
    VKP_RETURN_IF_ERROR(
        vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 0, NULL));
    vkp__onnx_tensor_set_i(&t, 0, vkp__prod(shape, 0, rank));
    return vkp__onnx_bind_const(ctx, vkp__onnx_output(ctx, 0), &t);
  }
  int64_t start = 0, end = rank;
  if (ctx->opset >= 15) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "start", 0, &start));
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "end", rank, &end));
  }
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  int64_t len = end > start ? end - start : 0;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &len));
  for (int64_t i = 0; i < len; ++i) vkp__onnx_tensor_set_i(&t, (size_t)i, shape[start + i]);
  return vkp__onnx_bind_const(ctx, vkp__onnx_output(ctx, 0), &t);
}

// Gather of the run-time shape of a bounded value v (Shape(v) -> Gather:
// exporters read x.shape[k]) folds when every index picks a dim of v other
// than its bounded axis: those dims are static. Otherwise the IR's gather.
vkp_status_t vkp__map_gather(vkp__onnx_ctx_t *ctx) {
  vkp__onnx_sym_t *d = vkp__onnx_input(ctx, 0), *ix = vkp__onnx_input(ctx, 1);
  const vkp_node_t *shape = NULL;
  if (d && !d->is_const && d->value >= 0 && ix && ix->is_const) {
    int32_t producer = vkp__onnx_value(ctx, d->value)->producer;
    if (producer >= 0 && ctx->graph->nodes[producer].op == VKP_OP_SHAPE)
      shape = &ctx->graph->nodes[producer];
  }
  int64_t axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  if (!shape || (axis != 0 && axis != -1)) return vkp__map_simple(ctx);
  const vkp_value_t *v = vkp__onnx_value(ctx, shape->inputs[0]);
  int64_t start = vkp_node_int(shape, "start");
  int64_t len = vkp_node_int(shape, "end") - start;
  const vkp__onnx_tensor_t *idx = &ix->constant;
  size_t count = vkp__onnx_tensor_numel(idx);
  if (vkp__onnx_type_is_float(idx->type)) return vkp__map_simple(ctx);
  for (size_t i = 0; i < count; ++i) {
    int64_t k = vkp__onnx_tensor_get_i(idx, i);
    if (k < 0) k += len;
    if (k < 0 || k >= len || (v->bounded && start + k == v->bounded_axis))
      return vkp__map_simple(ctx);  // the varying dim, or an error to report
  }
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
                                             idx->rank, idx->shape));
  for (size_t i = 0; i < count; ++i) {
    int64_t k = vkp__onnx_tensor_get_i(idx, i);
    vkp__onnx_tensor_set_i(&t, i, v->shape[start + (k < 0 ? k + len : k)]);
  }
  return vkp__onnx_bind_const(ctx, vkp__onnx_output(ctx, 0), &t);
}

vkp_status_t vkp__map_constant(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  if (ctx->node->n_attribute != 1)
    return VKP__ONNX_INVALID("needs exactly one value attribute, has %zu",
                             ctx->node->n_attribute);
  const Onnx__AttributeProto *a = ctx->node->attribute[0];
  const char *name = a->name ? a->name : "";
  vkp__onnx_tensor_t t;
  if (strcmp(name, "value") == 0) {
    if (!a->t) return VKP__ONNX_INVALID("attribute 'value' holds no tensor");
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_decode(a->t, ctx->base_dir, &t));
  } else if (strcmp(name, "value_float") == 0 || strcmp(name, "value_int") == 0) {
    bool f = name[6] == 'f';
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
        &t, f ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT : ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
        0, NULL));
    if (f) vkp__onnx_tensor_set_f(&t, 0, a->f);
    else vkp__onnx_tensor_set_i(&t, 0, a->i);
  } else if (strcmp(name, "value_floats") == 0 || strcmp(name, "value_ints") == 0) {
    bool f = name[6] == 'f';
    int64_t n = (int64_t)(f ? a->n_floats : a->n_ints);
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
        &t, f ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT : ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
        1, &n));
    for (int64_t i = 0; i < n; ++i) {
      if (f) vkp__onnx_tensor_set_f(&t, (size_t)i, a->floats[i]);
      else vkp__onnx_tensor_set_i(&t, (size_t)i, a->ints[i]);
    }
  } else {
    return VKP__ONNX_UNSUPPORTED("attribute '%s' is not supported", name);
  }
  return vkp__onnx_bind_const(ctx, vkp__onnx_output(ctx, 0), &t);
}

// Cast to the ONNX type `to`; CastLike to the type of input 1.
vkp_status_t vkp__map_cast(vkp__onnx_ctx_t *ctx) {
  int64_t to = 0;
  if (strcmp(ctx->node->op_type, "CastLike") == 0) {
    vkp__onnx_sym_t *like = vkp__onnx_input(ctx, 1);
    if (!like) return VKP__ONNX_INVALID("input 1 (target_type) is required");
    if (like->is_const) {
      to = like->constant.type;
    } else {
      to = vkp__onnx_type_from_dtype(ctx->graph->values[like->value].dtype);
    }
  } else {
    if (!vkp__onnx_attr(ctx, "to"))
      return VKP__ONNX_INVALID("attribute 'to' is required");
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "to", 0, &to));
  }
  vkp_dtype_t dtype;
  if (!vkp__onnx_type_to_dtype((int32_t)to, &dtype))
    return VKP__ONNX_UNSUPPORTED("casting to %s (vkpipe has no such dtype)",
                                 vkp__onnx_type_name((int32_t)to));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  vkp_attr_t a = {.name = "to", .kind = VKP_ATTR_STRING, .s = vkp_dtype_name(dtype)};
  return vkp__onnx_emit_out(ctx, VKP_OP_CAST, 1, &x, 1, &a);
}

// ConstantOfShape of a shape known at import time folds (onnx_fold.c). Of
// a run-time shape it runs when that shape is known but for one entry, the
// run-time extent of a bounded value v (Shape(v), or the Concat of pieces
// of it and constants that detection heads build their buffers from): the
// value broadcast to that shape, bounded like v (onnx_shape_expr.c).
vkp_status_t vkp__map_constant_of_shape(vkp__onnx_ctx_t *ctx) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 0);
  vkp__shape_expr_t e;
  if (!s || s->is_const || s->value < 0 || !vkp__onnx_shape_expr(ctx, s->value, &e))
    return VKP__ONNX_UNSUPPORTED("ConstantOfShape is only supported on a shape "
                                 "known at import time, or one known but for "
                                 "the run-time extent of a data-dependent value");
  vkp__onnx_tensor_t value = {0};
  VKP_RETURN_IF_ERROR(vkp__onnx_fill_value(ctx, &value));
  value.rank = 0;  // one element, broadcast
  int32_t c;
  vkp_status_t st = vkp__onnx_add_const(ctx, &value, &c);
  vkp__onnx_tensor_deinit(&value);
  VKP_RETURN_IF_ERROR(st);
  bool done;
  VKP_RETURN_IF_ERROR(vkp__onnx_broadcast_to_expr(ctx, c, &e, &done));
  if (!done)
    return VKP__ONNX_UNSUPPORTED("ConstantOfShape: its shape has more than one "
                                 "entry computed at run time");
  return NULL;
}

// Range of constants folds (onnx_fold.c). torch.arange(n) on a run-time
// count (detection heads index their kept boxes with it) runs when start is
// 0, delta 1 and limit the run-time extent of a bounded value v (read
// through Shape / Gather / Cast ..., onnx_shape_expr.c): 0..n-1, bounded
// like v, cast to Range's type.
vkp_status_t vkp__map_range(vkp__onnx_ctx_t *ctx) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__onnx_sym_t *limit = vkp__onnx_input(ctx, 1);
  vkp__shape_expr_t e;
  if (!limit || limit->is_const || limit->value < 0 ||
      !vkp__onnx_shape_expr(ctx, limit->value, &e) || e.n != 1)
    return VKP__ONNX_UNSUPPORTED("Range is only supported on inputs known at import "
                                 "time, or from 0 by 1 to the run-time extent of a "
                                 "data-dependent value");
  const vkp__onnx_tensor_t *t0, *t2;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 0, "start", &t0));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "delta", &t2));
  double start = 0.0, delta = 0.0;
  if (t0) VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(t0, "start", &start));
  if (t2) VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(t2, "delta", &delta));
  if (!t0 || !t2 || start != 0.0 || delta != 1.0)
    return VKP__ONNX_UNSUPPORTED("Range to a run-time limit is supported from start 0 "
                                 "by delta 1 (has start %g, delta %g)", start, delta);
  int32_t iota;
  bool done;
  VKP_RETURN_IF_ERROR(vkp__onnx_extent_iota(ctx, &e, &iota, &done));
  if (!done)
    return VKP__ONNX_UNSUPPORTED("Range: its limit is computed at run time and is not "
                                 "the extent of a data-dependent value");
  const vkp_value_t *lv = vkp__onnx_value(ctx, limit->value);
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = vkp_dtype_name(lv->dtype)};
  return vkp__onnx_emit_out(ctx, VKP_OP_CAST, 1, &iota, 1, &to);
}

// Ops that only fold: their inputs must be known at import time.
vkp_status_t vkp__map_fold_only(vkp__onnx_ctx_t *ctx) {
  return VKP__ONNX_UNSUPPORTED("%s is only supported on inputs known at "
                               "import time",
                               ctx->node->op_type);
}

// ---------------------------------------------------------------------------
// The table (VKP__ONNX_OP_LIST in onnx_internal.h)

#define vkp__onnx_fold_NULL NULL
#define VKP_OP_NONE VKP_OP_COUNT
#define VKP__ONNX_OP_ENTRY(name, map, fold, ir, attrs) \
  {name, vkp__map_##map, vkp__onnx_fold_##fold, VKP_OP_##ir, attrs},

static const vkp__onnx_op_t vkp__onnx_ops[] = {VKP__ONNX_OP_LIST(VKP__ONNX_OP_ENTRY)};

const vkp__onnx_op_t *vkp__onnx_op_find(const char *op_type) {
  for (size_t i = 0; i < sizeof vkp__onnx_ops / sizeof vkp__onnx_ops[0]; ++i)
    if (strcmp(vkp__onnx_ops[i].onnx_name, op_type) == 0) return &vkp__onnx_ops[i];
  return NULL;
}
