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

// The line kernels (vkp_lines in prelude.c splits the lines across the
// pool) of log_softmax, hardmax and lp_norm over the middle axis of
// [outer, n, inner].
static void vkp_log_softmax_line(const float *xs, float *ys, ptrdiff_t n, ptrdiff_t inner,
                                 int arg) {
  (void)arg;
  float mx = -INFINITY;
  for (ptrdiff_t k = 0; k < n; ++k) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
  double sum = 0.0;
  for (ptrdiff_t k = 0; k < n; ++k) sum += exp((double)(xs[k * inner] - mx));
  // (x - max) - log(sum), not x - (max + log(sum)): with |x| large the sum
  // max + log(sum) would round away up to half an ulp of max.
  float lse = (float)log(sum);
  for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = (xs[k * inner] - mx) - lse;
}

VKP_FN void vkp_log_softmax(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                            ptrdiff_t inner) {
  vkp_lines(x, y, outer, n, inner, vkp_log_softmax_line, 0, 16);
}

// hardmax: 1 at the first maximum (NaN counts as the maximum), 0 elsewhere.
static void vkp_hardmax_line(const float *xs, float *ys, ptrdiff_t n, ptrdiff_t inner,
                             int arg) {
  (void)arg;
  ptrdiff_t best = 0;
  for (ptrdiff_t k = 1; k < n && xs[best * inner] == xs[best * inner]; ++k)
    if (xs[k * inner] != xs[k * inner] || xs[k * inner] > xs[best * inner]) best = k;
  for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = k == best ? 1.0f : 0.0f;
}

VKP_FN void vkp_hardmax(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                        ptrdiff_t inner) {
  vkp_lines(x, y, outer, n, inner, vkp_hardmax_line, 0, 2);
}

// group_norm (instance_norm: one channel per group) of [batch, C, spatial]
// data: each (batch, group) is a contiguous row of per_group * spatial
// elements; scale and bias are per channel. A task takes rows [r0, r1).
typedef struct vkp_group_norm_job_t {
  const float *x, *scale, *bias;
  float *y;
  ptrdiff_t groups, per_group, spatial;
  float eps;
} vkp_group_norm_job_t;

static void vkp_group_norm_task(void *ctx, ptrdiff_t r0, ptrdiff_t r1, int worker) {
  const vkp_group_norm_job_t *j = ctx;
  const float *x = j->x, *scale = j->scale, *bias = j->bias;
  float *y = j->y;
  ptrdiff_t groups = j->groups, per_group = j->per_group, spatial = j->spatial;
  ptrdiff_t len = per_group * spatial;
  (void)worker;
  for (ptrdiff_t r = r0; r < r1; ++r) {
    const float *xr = x + r * len;
    float *yr = y + r * len;
    float mean, rstd;
    vkp_row_stats(xr, len, j->eps, &mean, &rstd);
    for (ptrdiff_t c = 0; c < per_group; ++c) {
      ptrdiff_t ch = (r % groups) * per_group + c;
      float a = rstd * scale[ch], b = bias[ch] - mean * a;
      for (ptrdiff_t s = 0; s < spatial; ++s)
        yr[c * spatial + s] = xr[c * spatial + s] * a + b;
    }
  }
}

VKP_FN void vkp_group_norm(const float *x, const float *scale, const float *bias,
                           float *y, ptrdiff_t batch, ptrdiff_t groups,
                           ptrdiff_t per_group, ptrdiff_t spatial, float eps) {
  vkp_group_norm_job_t j = {x, scale, bias, y, groups, per_group, spatial, eps};
  vkp_parallel_range(batch * groups, VKP_GRAIN(4 * per_group * spatial),
                     vkp_group_norm_task, &j);
}

// x / ||x||_p (p 1 or 2) over the middle axis; a zero norm gives zeros.
static void vkp_lp_norm_line(const float *xs, float *ys, ptrdiff_t n, ptrdiff_t inner,
                             int p) {
  double norm = 0.0;
  for (ptrdiff_t k = 0; k < n; ++k) {
    double v = xs[k * inner];
    norm += p == 1 ? fabs(v) : v * v;
  }
  if (p != 1) norm = sqrt(norm);
  float inv = norm == 0.0 ? 0.0f : (float)(1.0 / norm);
  for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] = xs[k * inner] * inv;
}

VKP_FN void vkp_lp_norm(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                        ptrdiff_t inner, int p) {
  vkp_lines(x, y, outer, n, inner, vkp_lp_norm_line, p, 4);
}

// lrn across the channels of [batch, c, spatial]: planes [p0, p1) of
// batch * c.
typedef struct vkp_lrn_job_t {
  const float *x;
  float *y;
  ptrdiff_t c, spatial, size;
  float alpha, beta, bias;
} vkp_lrn_job_t;

static void vkp_lrn_task(void *ctx, ptrdiff_t p0, ptrdiff_t p1, int worker) {
  const vkp_lrn_job_t *j = ctx;
  const float *x = j->x;
  float *y = j->y;
  ptrdiff_t c = j->c, spatial = j->spatial, size = j->size;
  float alpha = j->alpha, beta = j->beta, bias = j->bias;
  ptrdiff_t before = (size - 1) / 2, after = size - 1 - before;
  (void)worker;
  for (ptrdiff_t plane = p0; plane < p1; ++plane) {
    ptrdiff_t b = plane / c, ch = plane % c;
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

VKP_FN void vkp_lrn(const float *x, float *y, ptrdiff_t batch, ptrdiff_t c,
                    ptrdiff_t spatial, ptrdiff_t size, float alpha, float beta,
                    float bias) {
  vkp_lrn_job_t j = {x, y, c, spatial, size, alpha, beta, bias};
  vkp_parallel_range(batch * c, VKP_GRAIN(spatial * (2 * size + 8)), vkp_lrn_task, &j);
}
