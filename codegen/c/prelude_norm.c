// SPDX-License-Identifier: Apache-2.0
// Loops of the reduction and normalisation family (codegen/c/emit_norm.c),
// pasted into every generated unit after prelude.c: float32 data, the
// reference's semantics (graph/op_reduce.c, graph/op_norm.c).

// |v| of an integer as the uint64 an exact, wrapping l1 sum adds.
#define VKP_UABS_SIGNED(T) \
  static inline uint64_t vkp_uabs_##T(T v) { return v < 0 ? 0u - (uint64_t)v : (uint64_t)v; }
#define VKP_UABS_UNSIGNED(T) \
  static inline uint64_t vkp_uabs_##T(T v) { return (uint64_t)v; }
VKP_UABS_SIGNED(int8_t)
VKP_UABS_SIGNED(int16_t)
VKP_UABS_SIGNED(int32_t)
VKP_UABS_SIGNED(int64_t)
VKP_UABS_UNSIGNED(uint8_t)
VKP_UABS_UNSIGNED(uint16_t)
VKP_UABS_UNSIGNED(uint32_t)
VKP_UABS_UNSIGNED(uint64_t)

// log_softmax over the middle axis of [outer, n, inner].
VKP_FN void vkp_log_softmax(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                            ptrdiff_t inner) {
  for (ptrdiff_t o = 0; o < outer; ++o)
    for (ptrdiff_t i = 0; i < inner; ++i) {
      const float *xs = x + o * n * inner + i;
      float *ys = y + o * n * inner + i;
      float mx = -INFINITY;
      for (ptrdiff_t k = 0; k < n; ++k) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
      double sum = 0.0;
      for (ptrdiff_t k = 0; k < n; ++k) sum += exp((double)(xs[k * inner] - mx));
      float lse = mx + (float)log(sum);
      for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = xs[k * inner] - lse;
    }
}

// hardmax over the middle axis: 1 at the first maximum (NaN counts as the
// maximum), 0 elsewhere.
VKP_FN void vkp_hardmax(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                        ptrdiff_t inner) {
  for (ptrdiff_t o = 0; o < outer; ++o)
    for (ptrdiff_t i = 0; i < inner; ++i) {
      const float *xs = x + o * n * inner + i;
      float *ys = y + o * n * inner + i;
      ptrdiff_t best = 0;
      for (ptrdiff_t k = 1; k < n && xs[best * inner] == xs[best * inner]; ++k)
        if (xs[k * inner] != xs[k * inner] || xs[k * inner] > xs[best * inner]) best = k;
      for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = k == best ? 1.0f : 0.0f;
    }
}

// group_norm (instance_norm: one channel per group) of [batch, C, spatial]
// data: each (batch, group) is a contiguous row of per_group * spatial
// elements; scale and bias are per channel.
VKP_FN void vkp_group_norm(const float *x, const float *scale, const float *bias,
                           float *y, ptrdiff_t batch, ptrdiff_t groups,
                           ptrdiff_t per_group, ptrdiff_t spatial, float eps) {
  ptrdiff_t len = per_group * spatial;
  for (ptrdiff_t r = 0; r < batch * groups; ++r) {
    const float *xr = x + r * len;
    float *yr = y + r * len;
    float mean, rstd;
    vkp_row_stats(xr, len, eps, &mean, &rstd);
    for (ptrdiff_t c = 0; c < per_group; ++c) {
      ptrdiff_t ch = (r % groups) * per_group + c;
      float a = rstd * scale[ch], b = bias[ch] - mean * a;
      for (ptrdiff_t s = 0; s < spatial; ++s)
        yr[c * spatial + s] = xr[c * spatial + s] * a + b;
    }
  }
}

// x / ||x||_p (p 1 or 2) over the middle axis; a zero norm gives zeros.
VKP_FN void vkp_lp_norm(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                        ptrdiff_t inner, int p) {
  for (ptrdiff_t o = 0; o < outer; ++o)
    for (ptrdiff_t i = 0; i < inner; ++i) {
      const float *xs = x + o * n * inner + i;
      float *ys = y + o * n * inner + i;
      double norm = 0.0;
      for (ptrdiff_t k = 0; k < n; ++k) {
        double v = xs[k * inner];
        norm += p == 1 ? fabs(v) : v * v;
      }
      if (p != 1) norm = sqrt(norm);
      float inv = norm == 0.0 ? 0.0f : (float)(1.0 / norm);
      for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = xs[k * inner] * inv;
    }
}

// lrn across the channels of [batch, c, spatial].
VKP_FN void vkp_lrn(const float *x, float *y, ptrdiff_t batch, ptrdiff_t c,
                    ptrdiff_t spatial, ptrdiff_t size, float alpha, float beta,
                    float bias) {
  ptrdiff_t before = (size - 1) / 2, after = size - 1 - before;
  for (ptrdiff_t b = 0; b < batch; ++b)
    for (ptrdiff_t ch = 0; ch < c; ++ch) {
      ptrdiff_t lo = ch - before < 0 ? 0 : ch - before;
      ptrdiff_t hi = ch + after >= c ? c - 1 : ch + after;
      const float *xb = x + b * c * spatial;
      for (ptrdiff_t s = 0; s < spatial; ++s) {
        float sq = 0.0f;
        for (ptrdiff_t k = lo; k <= hi; ++k) sq += xb[k * spatial + s] * xb[k * spatial + s];
        ptrdiff_t at = ch * spatial + s;
        y[b * c * spatial + at] = xb[at] / powf(bias + alpha / (float)size * sq, beta);
      }
    }
}
