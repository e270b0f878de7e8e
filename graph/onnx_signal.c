// SPDX-License-Identifier: Apache-2.0
// ONNX mappers of the signal family: DFT (axis an attribute at opsets 17-19,
// input 2 from 20; dft_length input 1), STFT (frame_step, window,
// frame_length), MaxUnpool (output_shape input 2); and the folders of the
// ops that only make constants: HannWindow, HammingWindow, BlackmanWindow
// (periodic, output_datatype) and MelWeightMatrix. Inputs that decide a
// shape must be known at import time: they become IR attributes. Det maps
// one to one (a `simple` row). docs/onnx.md says the same in prose.
#include <math.h>
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// Constant integer input `i` holding one value into *out; *present false
// (and *out untouched) when the input is omitted. A run-time value is
// refused with `why`.
static vkp_status_t vkp__const_one(vkp__onnx_ctx_t *ctx, int32_t i, const char *what,
                                   const char *why, bool *present, int64_t *out) {
  *present = false;
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s) return NULL;
  if (!s->is_const)
    return VKP__ONNX_UNSUPPORTED("%s (input %d, '%s') is computed at run time: %s", what,
                                 (int)i, s->name, why);
  int64_t v[2];
  int32_t n;
  VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(&s->constant, what, v, 2, &n));
  if (n != 1)
    return VKP__ONNX_INVALID("%s (input %d, '%s') must hold one value, has %d", what,
                             (int)i, s->name, (int)n);
  *present = true;
  *out = v[0];
  return NULL;
}

#define VKP__SHAPE_WHY "the output shape depends on it, and vkpipe compiles static shapes"

vkp_status_t vkp__map_dft(vkp__onnx_ctx_t *ctx) {
  int64_t axis = 1, len = 0, inverse, onesided;
  bool present;
  if (ctx->opset >= 20) {
    if (vkp__onnx_attr(ctx, "axis"))
      return VKP__ONNX_INVALID("from opset 20 DFT takes axis as input 2");
    axis = -2;
    int64_t v;
    VKP_RETURN_IF_ERROR(vkp__const_one(ctx, 2, "axis",
                                       "vkpipe compiles each kernel for an axis known at "
                                       "import time",
                                       &present, &v));
    if (present) axis = v;
  } else {
    if (ctx->node->n_input > 2)
      return VKP__ONNX_INVALID("before opset 20 DFT's axis is an attribute");
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 1, &axis));
  }
  int64_t v;
  VKP_RETURN_IF_ERROR(vkp__const_one(ctx, 1, "dft_length", VKP__SHAPE_WHY, &present, &v));
  if (present) {
    if (v < 1) return VKP__ONNX_INVALID("dft_length is %lld; must be >= 1", (long long)v);
    len = v;
  }
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "inverse", 0, &inverse));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "onesided", 0, &onesided));
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  vkp_attr_t a[4] = {vkp__onnx_a_int("axis", axis), vkp__onnx_a_int("length", len),
                     vkp__onnx_a_int("inverse", inverse), vkp__onnx_a_int("onesided", onesided)};
  return vkp__onnx_emit_out(ctx, VKP_OP_DFT, 1, &x, 4, a);
}

vkp_status_t vkp__map_stft(vkp__onnx_ctx_t *ctx) {
  int64_t step = 0, len = 0, onesided;
  bool present;
  VKP_RETURN_IF_ERROR(vkp__const_one(ctx, 1, "frame_step", VKP__SHAPE_WHY, &present, &step));
  if (!present) return VKP__ONNX_INVALID("input 1 (frame_step) is required");
  VKP_RETURN_IF_ERROR(vkp__const_one(ctx, 3, "frame_length", VKP__SHAPE_WHY, &present, &len));
  if (present && len < 1)
    return VKP__ONNX_INVALID("frame_length is %lld; must be >= 1", (long long)len);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "onesided", 1, &onesided));
  int32_t in[2] = {-1, -1};
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  vkp__onnx_sym_t *w = vkp__onnx_input(ctx, 2);
  if (w) VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, w, &in[1]));
  vkp_attr_t a[3] = {vkp__onnx_a_int("frame_step", step),
                     vkp__onnx_a_int("frame_length", len),
                     vkp__onnx_a_int("onesided", onesided)};
  return vkp__onnx_emit_out(ctx, VKP_OP_STFT, w ? 2 : 1, in, 3, a);
}

vkp_status_t vkp__map_max_unpool(vkp__onnx_ctx_t *ctx) {
  int32_t in[2];
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &in[0]));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 1, &in[1]));
  vkp_attr_t a[4];
  int32_t n_attrs = 0;
  int64_t k[VKP_MAX_RANK], strides[VKP_MAX_RANK], pads[2 * VKP_MAX_RANK];
  int64_t shape[VKP_MAX_RANK];
  int32_t nk, ns, np;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "kernel_shape", k, VKP_MAX_RANK, &nk));
  if (nk < 0) return VKP__ONNX_INVALID("attribute 'kernel_shape' is required");
  a[n_attrs++] = vkp__onnx_a_ints("kernel_shape", k, nk);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "strides", strides, VKP_MAX_RANK, &ns));
  if (ns >= 0) a[n_attrs++] = vkp__onnx_a_ints("strides", strides, ns);
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "pads", pads, 2 * VKP_MAX_RANK, &np));
  if (np >= 0) a[n_attrs++] = vkp__onnx_a_ints("pads", pads, np);
  const vkp__onnx_tensor_t *t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "output_shape", &t));
  if (t) {
    int32_t n;
    VKP_RETURN_IF_ERROR(vkp__onnx_const_ints(t, "output_shape", shape, VKP_MAX_RANK, &n));
    a[n_attrs++] = vkp__onnx_a_ints("output_shape", shape, n);
  }
  return vkp__onnx_emit_out(ctx, VKP_OP_MAX_UNPOOL, 2, in, n_attrs, a);
}

// ---------------------------------------------------------------------------
// Folders: constants of a size known at import time

// Constant input `i` (required, one element) as a double.
static vkp_status_t vkp__fold_scalar(vkp__onnx_ctx_t *ctx, int32_t i, const char *what,
                                     double *out) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s || !s->is_const) return VKP__ONNX_INVALID("input %d (%s) is required", (int)i, what);
  return vkp__onnx_const_scalar(&s->constant, what, out);
}

// A new constant of type `output_datatype` (default float) and `n` elements
// (shape [rows, cols] when cols > 0, else [rows]).
static vkp_status_t vkp__fold_alloc(vkp__onnx_ctx_t *ctx, int64_t rows, int64_t cols,
                                    vkp__onnx_tensor_t *out) {
  int64_t type;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "output_datatype", 1, &type));
  if (!vkp__onnx_type_size((int32_t)type) || type == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL)
    return VKP__ONNX_INVALID("output_datatype %lld is not a numeric type", (long long)type);
  int64_t shape[2] = {rows, cols};
  if (rows * (cols > 0 ? cols : 1) > (int64_t)1 << 24)
    return VKP__ONNX_UNSUPPORTED("a %s of %lld x %lld elements is too large to fold",
                                 ctx->node->op_type, (long long)rows, (long long)cols);
  return vkp__onnx_tensor_alloc(out, (int32_t)type, cols > 0 ? 2 : 1, shape);
}

static vkp_status_t vkp__fold_bind(vkp__onnx_ctx_t *ctx, vkp__onnx_tensor_t *t) {
  const char *name = vkp__onnx_output(ctx, 0);
  if (!name) {
    vkp__onnx_tensor_deinit(t);
    return VKP__ONNX_INVALID("output 0 has no name");
  }
  return vkp__onnx_bind_const(ctx, name, t);
}

// The cosine-sum windows: a0 - a1 cos(2 pi k / N) + a2 cos(4 pi k / N), N
// the size when periodic, size - 1 otherwise.
static vkp_status_t vkp__fold_window(vkp__onnx_ctx_t *ctx, double a0, double a1, double a2) {
  double size;
  int64_t periodic;
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 0, "size", &size));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "periodic", 1, &periodic));
  if (!(size >= 0) || size != floor(size))
    return VKP__ONNX_INVALID("size is %g; must be a non-negative integer", size);
  vkp__onnx_tensor_t out;
  VKP_RETURN_IF_ERROR(vkp__fold_alloc(ctx, (int64_t)size, 0, &out));
  double span = periodic ? size : size - 1;
  for (int64_t k = 0; k < (int64_t)size; ++k) {
    double t = span > 0 ? 2.0 * M_PI * (double)k / span : 0.0;
    vkp__onnx_tensor_set_f(&out, (size_t)k, a0 - a1 * cos(t) + a2 * cos(2.0 * t));
  }
  return vkp__fold_bind(ctx, &out);
}

vkp_status_t vkp__onnx_fold_hann_window(vkp__onnx_ctx_t *ctx) {
  return vkp__fold_window(ctx, 0.5, 0.5, 0.0);
}

vkp_status_t vkp__onnx_fold_hamming_window(vkp__onnx_ctx_t *ctx) {
  return vkp__fold_window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

vkp_status_t vkp__onnx_fold_blackman_window(vkp__onnx_ctx_t *ctx) {
  return vkp__fold_window(ctx, 0.42, 0.5, 0.08);
}

static double vkp__hz_to_mel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }

// [dft_length / 2 + 1, num_mel_bins] triangular filters: num_mel_bins + 2
// points evenly spaced in mel from lower_edge_hertz, a step of (high - low)
// / (num_mel_bins + 2) (as ONNX's reference computes it), each mapped to the
// spectrogram bin floor((dft_length + 1) * hz / sample_rate).
vkp_status_t vkp__onnx_fold_mel_weight_matrix(vkp__onnx_ctx_t *ctx) {
  double mels, dft_len, rate, lo, hi;
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 0, "num_mel_bins", &mels));
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 1, "dft_length", &dft_len));
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 2, "sample_rate", &rate));
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 3, "lower_edge_hertz", &lo));
  VKP_RETURN_IF_ERROR(vkp__fold_scalar(ctx, 4, "upper_edge_hertz", &hi));
  if (!(mels >= 1) || !(dft_len >= 1) || !(rate > 0) || mels > 65536 || dft_len > 1 << 24)
    return VKP__ONNX_INVALID("num_mel_bins %g, dft_length %g and sample_rate %g must be "
                             "positive (num_mel_bins at most 65536, dft_length at most "
                             "2^24)",
                             mels, dft_len, rate);
  if (!(lo >= 0) || !(hi >= lo))
    return VKP__ONNX_INVALID("the edges %g Hz .. %g Hz must satisfy 0 <= lower <= upper",
                             lo, hi);
  int64_t n_mel = (int64_t)mels, n_fft = (int64_t)dft_len, bins = n_fft / 2 + 1;
  vkp__onnx_tensor_t out;
  VKP_RETURN_IF_ERROR(vkp__fold_alloc(ctx, bins, n_mel, &out));
  double mel_lo = vkp__hz_to_mel(lo), step = (vkp__hz_to_mel(hi) - mel_lo) / (double)(n_mel + 2);
  for (int64_t i = 0; i < n_mel; ++i) {
    int64_t p[3];
    for (int32_t e = 0; e < 3; ++e) {
      double hz = 700.0 * (pow(10.0, ((double)(i + e) * step + mel_lo) / 2595.0) - 1.0);
      p[e] = (int64_t)floor((double)(n_fft + 1) * hz / rate);
    }
    int64_t up = p[1] - p[0], down = p[2] - p[1];
    for (int64_t j = p[0]; j <= p[2]; ++j) {
      if (j < 0 || j >= bins) continue;
      double w = 0.0;
      if (j < p[1]) w = (double)(j - p[0]) / (double)up;
      else if (j == p[1]) w = 1.0;
      else if (j < p[2]) w = (double)(p[2] - j) / (double)down;
      if (w != 0.0) vkp__onnx_tensor_set_f(&out, (size_t)(j * n_mel + i), w);
    }
  }
  return vkp__fold_bind(ctx, &out);
}
