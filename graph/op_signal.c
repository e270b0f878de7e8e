// SPDX-License-Identifier: Apache-2.0
// Discrete Fourier transforms (ONNX DFT, STFT). Complex data is stored as a
// trailing dim of 2 ([re, im]); a trailing dim of 1 is real data. The
// reference kernels sum directly, in double, over a table of the n-th roots
// of unity: O(n^2) per line, independent of the C generator's FFT
// (codegen/c/prelude_signal.c).
//
//   dft:  x [..., L, ..., 1|2] -> y [..., n or n/2+1, ..., 2] along `axis`;
//         `length` n (0: L) zero-pads or truncates the line, `inverse`
//         uses e^{+2 pi i jk/n} and divides by n, `onesided` keeps bins
//         0..n/2.
//   stft: signal [B, L, 1|2], optional window [n] ->
//         y [B, (L - n) / frame_step + 1, n or n/2+1, 2]; frame f is samples
//         f * frame_step .. + n, times the window, transformed.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_dft[] = {
    VKP__ATTR_INT("axis", 1), VKP__ATTR_INT("length", 0),
    VKP__ATTR_INT("onesided", 0), VKP__ATTR_INT("inverse", 0), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_stft[] = {
    VKP__ATTR("frame_step", INT), VKP__ATTR_INT("frame_length", 0),
    VKP__ATTR_INT("onesided", 1), VKP__ATTR_END};

static vkp_status_t vkp__flag(vkp_node_t *n, const char *name) {
  int64_t v = vkp_node_int(n, name);
  if (v != 0 && v != 1)
    return VKP__ERR("attribute '%s' is %lld; must be 0 or 1", name, (long long)v);
  return NULL;
}

// The last dim of a complex operand: 1 (real) or 2 ([re, im]).
static vkp_status_t vkp__complex_dim(const vkp_value_t *x) {
  if (x->rank < 2 || (x->shape[x->rank - 1] != 1 && x->shape[x->rank - 1] != 2)) {
    char s[128];
    return VKP__ERR("input '%s' %s must end in a dim of 1 (real) or 2 (complex)",
                    x->name, vkp__fmt(x, s, sizeof s));
  }
  return NULL;
}

vkp_status_t vkp__infer_dft(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__complex_dim(x));
  VKP_RETURN_IF_ERROR(vkp__flag(n, "onesided"));
  VKP_RETURN_IF_ERROR(vkp__flag(n, "inverse"));
  // ONNX: [-r, -2] or [0, r-2]; the last dim holds [re, im].
  int64_t axis = vkp_node_int(n, "axis");
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis > x->rank - 2)
    return VKP__ERR("attribute 'axis' is %lld; input '%s' of rank %d takes "
                    "%d..%d or %d..-2 (the last dim is [re, im])",
                    (long long)vkp_node_int(n, "axis"), x->name, (int)x->rank,
                    0, (int)x->rank - 2, -(int)x->rank);
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t len = vkp_node_int(n, "length");
  if (len < 0) return VKP__ERR("attribute 'length' is %lld; must be >= 1", (long long)len);
  if (len == 0) len = x->shape[axis];
  if (len < 1)
    return VKP__ERR("the transform length is 0 (axis %lld of '%s' is empty)",
                    (long long)axis, x->name);
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "length", len));
  int64_t shape[VKP_MAX_RANK];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
  shape[axis] = vkp_node_int(n, "onesided") ? len / 2 + 1 : len;
  shape[x->rank - 1] = 2;
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_stft(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1);
  char s[128];
  if (x->rank != 3)
    return VKP__ERR("signal '%s' %s must be [batch, length, 1 or 2]", x->name,
                    vkp__fmt(x, s, sizeof s));
  VKP_RETURN_IF_ERROR(vkp__complex_dim(x));
  VKP_RETURN_IF_ERROR(vkp__flag(n, "onesided"));
  int64_t step = vkp_node_int(n, "frame_step");
  if (step < 1)
    return VKP__ERR("attribute 'frame_step' is %lld; must be >= 1", (long long)step);
  int64_t len = vkp_node_int(n, "frame_length");
  if (len < 0)
    return VKP__ERR("attribute 'frame_length' is %lld; must be >= 1", (long long)len);
  if (w) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(x, w));
    if (w->rank != 1 || (len && w->shape[0] != len))
      return VKP__ERR("window '%s' %s must be 1-D%s", w->name, vkp__fmt(w, s, sizeof s),
                      len ? " with frame_length entries" : "");
    len = w->shape[0];
  }
  if (len < 1)
    return VKP__ERR("the frame length is unknown or 0: give a window or frame_length");
  if (len > x->shape[1])
    return VKP__ERR("frame length %lld exceeds the signal's %lld samples",
                    (long long)len, (long long)x->shape[1]);
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "frame_length", len));
  int64_t shape[4] = {x->shape[0], (x->shape[1] - len) / step + 1,
                      vkp_node_int(n, "onesided") ? len / 2 + 1 : len, 2};
  vkp__set_out(out, x->dtype, 4, shape);
  return NULL;
}

// cos and sin of 2 pi k / n for k in [0, n): tab[2k], tab[2k + 1].
static vkp_status_t vkp__roots(int64_t n, double **out) {
  double *tab = vkp__reallocarray(NULL, 2 * (size_t)n, sizeof(double));
  if (!tab) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "roots of unity for n=%lld",
                                   (long long)n);
  for (int64_t k = 0; k < n; ++k) {
    double a = 2.0 * M_PI * (double)k / (double)n;
    tab[2 * k] = cos(a);
    tab[2 * k + 1] = sin(a);
  }
  *out = tab;
  return NULL;
}

// One line: `have` input samples (re at x[j * xs], im at +1 when ch is 2,
// scaled by win[j] when win), zero beyond, transformed at length n; bins
// 0..n_out-1 written at y[k * ys] (re, im).
static void vkp__dft_line(const vkp_tensor_t *x, int64_t x0, int64_t xs, int64_t ch,
                          int64_t have, const vkp_tensor_t *win, const double *tab,
                          int64_t n, bool inverse, vkp_tensor_t *y, int64_t y0, int64_t ys,
                          int64_t n_out) {
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)n : 1.0;
  for (int64_t k = 0; k < n_out; ++k) {
    double re = 0.0, im = 0.0;
    int64_t e = 0;  // j * k mod n
    for (int64_t j = 0; j < have; ++j, e = (e + k) % n) {
      double w = win ? vkp__get_f(win, j) : 1.0;
      double a = vkp__get_f(x, x0 + j * xs) * w;
      double b = ch == 2 ? vkp__get_f(x, x0 + j * xs + 1) * w : 0.0;
      double c = tab[2 * e], s = sign * tab[2 * e + 1];
      re += a * c - b * s;
      im += a * s + b * c;
    }
    vkp__put_f(y, y0 + k * ys, re * scale);
    vkp__put_f(y, y0 + k * ys + 1, im * scale);
  }
}

vkp_status_t vkp__eval_dft(const vkp_node_t *n, const vkp_tensor_t *const *in,
                           vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  int64_t axis = vkp_node_int(n, "axis"), len = vkp_node_int(n, "length");
  int64_t ch = x->shape[x->rank - 1], l_in = x->shape[axis], n_out = out->shape[axis];
  int64_t outer = vkp__prod(x->shape, 0, (int32_t)axis);
  int64_t inner = vkp__prod(x->shape, (int32_t)axis + 1, x->rank - 1);
  double *tab = NULL;
  VKP_RETURN_IF_ERROR(vkp__roots(len, &tab));
  int64_t have = l_in < len ? l_in : len;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      vkp__dft_line(x, (o * l_in * inner + i) * ch, inner * ch, ch, have, NULL, tab, len,
                    vkp_node_int(n, "inverse") != 0, out, (o * n_out * inner + i) * 2,
                    inner * 2, n_out);
  vkp__free(tab);
  return NULL;
}

vkp_status_t vkp__eval_stft(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *win = n->n_inputs > 1 ? in[1] : NULL;
  int64_t len = vkp_node_int(n, "frame_length"), step = vkp_node_int(n, "frame_step");
  int64_t ch = x->shape[2], frames = out->shape[1], bins = out->shape[2];
  double *tab = NULL;
  VKP_RETURN_IF_ERROR(vkp__roots(len, &tab));
  for (int64_t b = 0; b < x->shape[0]; ++b)
    for (int64_t f = 0; f < frames; ++f)
      vkp__dft_line(x, (b * x->shape[1] + f * step) * ch, ch, ch, len, win, tab, len,
                    false, out, (b * frames + f) * bins * 2, 2, bins);
  vkp__free(tab);
  return NULL;
}
