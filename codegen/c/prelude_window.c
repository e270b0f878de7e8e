// SPDX-License-Identifier: Apache-2.0
// N-d window kernels (codegen/c/emit_window.c), pasted into every generated
// unit after prelude.c: convolution and pooling over 1 to 3 spatial dims
// where the 2-D fast paths (GEMM, Winograd, depthwise, vkp_pool2d) do not
// apply, and the transposed convolution. float32 data, the reference's
// semantics (graph/op_nn.c): every op is seen as 3-D, fewer spatial dims
// as leading unit dims. Work is split over output planes across the
// stage's thread pool.

// The geometry: input, output and kernel sizes, strides, dilations,
// begin and end pads per dim (D, H, W).
typedef struct vkp_win3_t {
  ptrdiff_t in[3], out[3], k[3], st[3], dil[3], pb[3], pe[3];
} vkp_win3_t;

// [*lo, *hi): the i in [0, n) with 0 <= i * st + off < lim.
static inline void vkp_win_span(ptrdiff_t n, ptrdiff_t st, ptrdiff_t off, ptrdiff_t lim,
                                ptrdiff_t *lo, ptrdiff_t *hi) {
  ptrdiff_t a = off >= 0 ? 0 : (-off + st - 1) / st;
  ptrdiff_t b = lim - 1 - off < 0 ? 0 : (lim - 1 - off) / st + 1;
  if (b > n) b = n;
  *lo = a < b ? a : b;
  *hi = b;
}

typedef struct vkp_conv3d_job_t {
  const float *x, *w, *b;
  float *y;
  const vkp_win3_t *g;
  ptrdiff_t c, m, cg, mg;
} vkp_conv3d_job_t;

// Planes [lo, hi) of (batch, output channel).
static void vkp_conv3d_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_conv3d_job_t *j = arg;
  const vkp_win3_t *g = j->g;
  ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];
  ptrdiff_t out_plane = g->out[0] * g->out[1] * g->out[2];
  ptrdiff_t taps = g->k[0] * g->k[1] * g->k[2];
  for (ptrdiff_t p = lo; p < hi; ++p) {
    ptrdiff_t b = p / j->m, oc = p % j->m, c0 = (oc / j->mg) * j->cg;
    float *yp = j->y + p * out_plane;
    float bias = j->b ? j->b[oc] : 0.0f;
    for (ptrdiff_t o = 0; o < out_plane; ++o) yp[o] = bias;
    for (ptrdiff_t ic = 0; ic < j->cg; ++ic) {
      const float *xc = j->x + (b * j->c + c0 + ic) * in_plane;
      const float *wc = j->w + (oc * j->cg + ic) * taps;
      for (ptrdiff_t t0 = 0; t0 < g->k[0]; ++t0)
        for (ptrdiff_t t1 = 0; t1 < g->k[1]; ++t1)
          for (ptrdiff_t t2 = 0; t2 < g->k[2]; ++t2) {
            float wv = wc[(t0 * g->k[1] + t1) * g->k[2] + t2];
            ptrdiff_t x0 = t2 * g->dil[2] - g->pb[2], xlo, xhi;
            vkp_win_span(g->out[2], g->st[2], x0, g->in[2], &xlo, &xhi);
            float *yo = yp;
            for (ptrdiff_t z = 0; z < g->out[0]; ++z) {
              ptrdiff_t iz = z * g->st[0] - g->pb[0] + t0 * g->dil[0];
              if (iz < 0 || iz >= g->in[0]) {
                yo += g->out[1] * g->out[2];
                continue;
              }
              for (ptrdiff_t yy = 0; yy < g->out[1]; ++yy, yo += g->out[2]) {
                ptrdiff_t iy = yy * g->st[1] - g->pb[1] + t1 * g->dil[1];
                if (iy < 0 || iy >= g->in[1]) continue;
                const float *xr = xc + (iz * g->in[1] + iy) * g->in[2];
                for (ptrdiff_t xo = xlo; xo < xhi; ++xo) yo[xo] += wv * xr[xo * g->st[2] + x0];
              }
            }
          }
    }
  }
}

// Direct convolution of x [N, C, spatial] with w [M, C/G, k...].
VKP_FN void vkp_conv3d(const float *x, const float *w, const float *b, float *y,
                       ptrdiff_t n, ptrdiff_t c, ptrdiff_t m, ptrdiff_t groups,
                       const vkp_win3_t *g) {
  vkp_conv3d_job_t j = {x, w, b, y, g, c, m, c / groups, m / groups};
  ptrdiff_t work = g->out[0] * g->out[1] * g->out[2] * j.cg * g->k[0] * g->k[1] * g->k[2];
  vkp_parallel_range(n * m, work >= 4096 ? 1 : 4096 / (work + 1) + 1, vkp_conv3d_planes, &j);
}

// vkp_conv3d as one GEMM per (image, group, output frame): the weights
// [M/G, C/G * kd * kh * kw], as they are, against that frame's im2col view
// of the clip (vkp_bsrc_t with kt: depth rows (channel, frame tap, kh, kw);
// frame taps in the padding read as zeros), the bias in the GEMM's row
// epilogue. 1-D windows are the same with one frame of one row. `scratch`
// holds `threads` GEMM scratch areas. (S3D's first layer, 3 -> 64 channels
// over 1 x 7 x 7 on 16 frames of 224 x 224: 530 ms a call as the direct
// loops.)
VKP_FN void vkp_conv3d_gemm(const float *x, const float *w, const float *b, float *y,
                            ptrdiff_t n, ptrdiff_t c, ptrdiff_t m, ptrdiff_t groups,
                            const vkp_win3_t *g, float *scratch, int threads) {
  const ptrdiff_t cg = c / groups, mg = m / groups;
  const ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2], frame = g->out[1] * g->out[2];
  const ptrdiff_t out_plane = g->out[0] * frame;
  const ptrdiff_t K = cg * g->k[0] * g->k[1] * g->k[2];
  const vkp_row_ep_t ep = {b, -INFINITY, INFINITY, 0};
  for (ptrdiff_t bi = 0; bi < n; ++bi)
    for (ptrdiff_t gi = 0; gi < groups; ++gi)
      for (ptrdiff_t z = 0; z < g->out[0]; ++z) {
        const vkp_bsrc_t src = {
            .b = x + (bi * c + gi * cg) * in_plane, .conv = 1, .C = cg * g->k[0],
            .H = g->in[1], .W = g->in[2], .KH = g->k[1], .KW = g->k[2], .SH = g->st[1],
            .SW = g->st[2], .PT = g->pb[1], .PL = g->pb[2], .DH = g->dil[1], .DW = g->dil[2],
            .OH = g->out[1], .OW = g->out[2], .kt = g->k[0], .cs = in_plane, .D = g->in[0],
            .iz0 = z * g->st[0] - g->pb[0], .dz = g->dil[0]};
        vkp_gemm(mg, frame, K, 1.0f, w + gi * mg * K, K, 1, NULL, &src,
                 y + (bi * m + gi * mg) * out_plane + z * frame, out_plane,
                 b ? vkp_ep_rows : NULL, &ep, gi * mg, 0, scratch, threads);
      }
}

// Adds wv * src (an input-shaped plane) into the output plane yp for kernel
// tap (t0, t1, t2): input position i lands on i * stride + t * dilation -
// pad_begin (the transposed convolution's scatter, and its col2im with wv 1).
static void vkp_scatter_tap(float *yp, const float *src, float wv, const vkp_win3_t *g,
                            ptrdiff_t t0, ptrdiff_t t1, ptrdiff_t t2) {
  ptrdiff_t x0 = t2 * g->dil[2] - g->pb[2], xlo, xhi;
  vkp_win_span(g->in[2], g->st[2], x0, g->out[2], &xlo, &xhi);
  for (ptrdiff_t z = 0; z < g->in[0]; ++z) {
    ptrdiff_t oz = z * g->st[0] + t0 * g->dil[0] - g->pb[0];
    if (oz < 0 || oz >= g->out[0]) continue;
    for (ptrdiff_t yy = 0; yy < g->in[1]; ++yy) {
      ptrdiff_t oy = yy * g->st[1] + t1 * g->dil[1] - g->pb[1];
      if (oy < 0 || oy >= g->out[1]) continue;
      const float *xr = src + (z * g->in[1] + yy) * g->in[2];
      float *yr = yp + (oz * g->out[1] + oy) * g->out[2];
      for (ptrdiff_t xi = xlo; xi < xhi; ++xi) yr[xi * g->st[2] + x0] += wv * xr[xi];
    }
  }
}

// Transposed convolution as a scatter per (batch, output channel) plane:
// input position i with kernel tap t lands on output i * stride + t *
// dilation - pad_begin; planes are independent, so threads never share an
// output element.
static void vkp_conv_transpose3d_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi,
                                        int worker) {
  (void)worker;
  const vkp_conv3d_job_t *j = arg;
  const vkp_win3_t *g = j->g;
  ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];
  ptrdiff_t out_plane = g->out[0] * g->out[1] * g->out[2];
  ptrdiff_t taps = g->k[0] * g->k[1] * g->k[2];
  for (ptrdiff_t p = lo; p < hi; ++p) {
    ptrdiff_t b = p / j->m, oc = p % j->m, gi = oc / j->mg, ocg = oc % j->mg;
    float *yp = j->y + p * out_plane;
    float bias = j->b ? j->b[oc] : 0.0f;
    for (ptrdiff_t o = 0; o < out_plane; ++o) yp[o] = bias;
    for (ptrdiff_t ic = 0; ic < j->cg; ++ic) {
      ptrdiff_t ci = gi * j->cg + ic;
      const float *xc = j->x + (b * j->c + ci) * in_plane;
      const float *wc = j->w + (ci * j->mg + ocg) * taps;
      for (ptrdiff_t t0 = 0; t0 < g->k[0]; ++t0)
        for (ptrdiff_t t1 = 0; t1 < g->k[1]; ++t1)
          for (ptrdiff_t t2 = 0; t2 < g->k[2]; ++t2)
            vkp_scatter_tap(yp, xc, wc[(t0 * g->k[1] + t1) * g->k[2] + t2], g, t0, t1, t2);
    }
  }
}

// x [N, C, spatial], w [C, M/G, k...], y [N, M, spatial'].
VKP_FN void vkp_conv_transpose3d(const float *x, const float *w, const float *b,
                                 float *y, ptrdiff_t n, ptrdiff_t c, ptrdiff_t m,
                                 ptrdiff_t groups, const vkp_win3_t *g) {
  vkp_conv3d_job_t j = {x, w, b, y, g, c, m, c / groups, m / groups};
  ptrdiff_t work = g->in[0] * g->in[1] * g->in[2] * j.cg * g->k[0] * g->k[1] * g->k[2];
  vkp_parallel_range(n * m, work >= 4096 ? 1 : 4096 / (work + 1) + 1,
                     vkp_conv_transpose3d_planes, &j);
}

// The same as GEMM + col2im, per image and group: cols[(ocg, tap), i] =
// sum over the group's input channels of w[ci, ocg, tap] * x[ci, i] (one
// GEMM, the weights read transposed in place), then every column entry adds
// into its output position. `cols` holds (M/G) * taps * in_plane floats;
// `gemm_scratch` what vkp_gemm needs for `threads`. The GEMM is split across
// the pool, the col2im over output channels; each output element sums its
// taps in one fixed order whatever the thread count.
typedef struct vkp_col2im_job_t {
  const float *cols, *b;
  float *y;
  const vkp_win3_t *g;
  ptrdiff_t oc0;
} vkp_col2im_job_t;

static void vkp_col2im_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_col2im_job_t *j = arg;
  const vkp_win3_t *g = j->g;
  ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];
  ptrdiff_t out_plane = g->out[0] * g->out[1] * g->out[2];
  ptrdiff_t taps = g->k[0] * g->k[1] * g->k[2];
  for (ptrdiff_t ocg = lo; ocg < hi; ++ocg) {
    float *yp = j->y + (j->oc0 + ocg) * out_plane;
    float bias = j->b ? j->b[j->oc0 + ocg] : 0.0f;
    for (ptrdiff_t o = 0; o < out_plane; ++o) yp[o] = bias;
    for (ptrdiff_t t0 = 0; t0 < g->k[0]; ++t0)
      for (ptrdiff_t t1 = 0; t1 < g->k[1]; ++t1)
        for (ptrdiff_t t2 = 0; t2 < g->k[2]; ++t2) {
          ptrdiff_t t = (t0 * g->k[1] + t1) * g->k[2] + t2;
          vkp_scatter_tap(yp, j->cols + (ocg * taps + t) * in_plane, 1.0f, g, t0, t1, t2);
        }
  }
}

VKP_FN void vkp_conv_transpose3d_gemm(const float *x, const float *w, const float *b,
                                      float *y, ptrdiff_t n, ptrdiff_t c, ptrdiff_t m,
                                      ptrdiff_t groups, const vkp_win3_t *g, float *cols,
                                      float *gemm_scratch, int threads) {
  ptrdiff_t cg = c / groups, mg = m / groups;
  ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];
  ptrdiff_t out_plane = g->out[0] * g->out[1] * g->out[2];
  ptrdiff_t taps = g->k[0] * g->k[1] * g->k[2];
  for (ptrdiff_t bi = 0; bi < n; ++bi)
    for (ptrdiff_t gi = 0; gi < groups; ++gi) {
      const vkp_bsrc_t src = {.b = x + (bi * c + gi * cg) * in_plane, .rsb = in_plane,
                              .csb = 1, .direct = 1};
      vkp_gemm(mg * taps, in_plane, cg, 1.0f, w + gi * cg * mg * taps, 1, mg * taps, NULL,
               &src, cols, in_plane, NULL, NULL, 0, 0, gemm_scratch, threads);
      vkp_col2im_job_t j = {cols, b, y + bi * m * out_plane, g, gi * mg};
      vkp_parallel_range(mg, VKP_GRAIN(taps * in_plane), vkp_col2im_task, &j);
    }
}

// Pooling modes of vkp_pool3d.
enum { VKP_POOL3D_MAX, VKP_POOL3D_AVG, VKP_POOL3D_AVG_PAD, VKP_POOL3D_LP };

typedef struct vkp_pool3d_job_t {
  const float *x;
  float *y;
  int64_t *indices;
  const vkp_win3_t *g;
  int mode, col_major;
  float p;
} vkp_pool3d_job_t;

static void vkp_pool3d_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_pool3d_job_t *j = arg;
  const vkp_win3_t *g = j->g;
  ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];
  ptrdiff_t out_plane = g->out[0] * g->out[1] * g->out[2];
  for (ptrdiff_t pl = lo; pl < hi; ++pl) {
    const float *xp = j->x + pl * in_plane;
    ptrdiff_t at = pl * out_plane;
    for (ptrdiff_t z = 0; z < g->out[0]; ++z)
      for (ptrdiff_t yy = 0; yy < g->out[1]; ++yy)
        for (ptrdiff_t xo = 0; xo < g->out[2]; ++xo, ++at) {
          float best = -INFINITY;
          double sum = 0.0;
          ptrdiff_t real = 0, padded = 0, best_at = -1;
          for (ptrdiff_t t0 = 0; t0 < g->k[0]; ++t0) {
            ptrdiff_t iz = z * g->st[0] - g->pb[0] + t0 * g->dil[0];
            if (iz >= g->in[0] + g->pe[0]) continue;
            for (ptrdiff_t t1 = 0; t1 < g->k[1]; ++t1) {
              ptrdiff_t iy = yy * g->st[1] - g->pb[1] + t1 * g->dil[1];
              if (iy >= g->in[1] + g->pe[1]) continue;
              for (ptrdiff_t t2 = 0; t2 < g->k[2]; ++t2) {
                ptrdiff_t ix = xo * g->st[2] - g->pb[2] + t2 * g->dil[2];
                if (ix >= g->in[2] + g->pe[2]) continue;
                ++padded;
                if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] || ix < 0 ||
                    ix >= g->in[2])
                  continue;
                ++real;
                ptrdiff_t sp = (iz * g->in[1] + iy) * g->in[2] + ix;
                float v = xp[sp];
                if (j->mode == VKP_POOL3D_LP) {
                  sum += pow(fabs((double)v), (double)j->p);
                } else if (j->mode != VKP_POOL3D_MAX) {
                  sum += v;
                } else if (best == best && (v != v || v > best || best_at < 0)) {
                  best = v;  // NaN wins, as in NumPy's max
                  best_at = j->col_major ? iz + (iy + ix * g->in[1]) * g->in[0] : sp;
                }
              }
            }
          }
          float r;
          if (j->mode == VKP_POOL3D_MAX) r = best;
          else if (j->mode == VKP_POOL3D_LP) r = (float)pow(sum, 1.0 / (double)j->p);
          else {
            ptrdiff_t div = j->mode == VKP_POOL3D_AVG_PAD ? padded : real;
            r = div ? (float)(sum / (double)div) : 0.0f;
          }
          j->y[at] = r;
          if (j->indices) j->indices[at] = best_at < 0 ? -1 : pl * in_plane + best_at;
        }
  }
}

// Pools `planes` (batch x channel) planes; indices (may be NULL) get each
// maximum's flat offset in x.
VKP_FN void vkp_pool3d(const float *x, float *y, int64_t *indices, ptrdiff_t planes,
                       const vkp_win3_t *g, int mode, float p, int col_major) {
  vkp_pool3d_job_t j = {x, y, indices, g, mode, col_major, p};
  ptrdiff_t work = g->out[0] * g->out[1] * g->out[2] * g->k[0] * g->k[1] * g->k[2];
  vkp_parallel_range(planes, work >= 4096 ? 1 : 4096 / (work + 1) + 1, vkp_pool3d_planes,
                     &j);
}

// Max pooling without indices, separably: a 1-D maximum along W, then H,
// then D (a box's maximum is the maximum of its rows' maxima; NaN wins at
// every step, and a window with no tap inside the input gives -inf, as in
// vkp_pool3d). A 3x3x3 window is 9 loads per output instead of 27, each
// step a row operation the compiler vectorises (S3D's 3x3x3 stride-1
// pools: 120 ms a call in vkp_pool3d). Per worker, `scratch` holds
// VKP_MAXPOOL_SEP_FLOATS of the window.
#define VKP_MAXPOOL_SEP_FLOATS(g) \
  ((g)->in[0] * (g)->in[1] * (g)->out[2] + (g)->in[0] * (g)->out[1] * (g)->out[2])

static inline void vkp__max_row(float *restrict acc, const float *restrict src, ptrdiff_t n,
                                ptrdiff_t st) {
  for (ptrdiff_t i = 0; i < n; ++i) {
    const float a = acc[i], v = src[i * st];
    acc[i] = a != a ? a : (v != v || v > a) ? v : a;
  }
}

static inline void vkp__fill_ninf(float *p, ptrdiff_t n) {
  for (ptrdiff_t i = 0; i < n; ++i) p[i] = -INFINITY;
}

typedef struct vkp_maxpool_sep_job_t {
  const float *x;
  float *y, *scratch;
  const vkp_win3_t *g;
} vkp_maxpool_sep_job_t;

static void vkp_maxpool_sep_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_maxpool_sep_job_t *j = arg;
  const vkp_win3_t *g = j->g;
  const ptrdiff_t D = g->in[0], H = g->in[1], W = g->in[2];
  const ptrdiff_t OD = g->out[0], OH = g->out[1], OW = g->out[2];
  float *t1 = j->scratch + (ptrdiff_t)worker * VKP_MAXPOOL_SEP_FLOATS(g);  // [D, H, OW]
  float *t2 = t1 + D * H * OW;                                            // [D, OH, OW]
  for (ptrdiff_t pl = lo; pl < hi; ++pl) {
    const float *xp = j->x + pl * D * H * W;
    float *yp = j->y + pl * OD * OH * OW;
    for (ptrdiff_t r = 0; r < D * H; ++r) {
      float *acc = t1 + r * OW;
      vkp__fill_ninf(acc, OW);
      for (ptrdiff_t t = 0; t < g->k[2]; ++t) {
        const ptrdiff_t off = t * g->dil[2] - g->pb[2];
        ptrdiff_t a, b;
        vkp_win_span(OW, g->st[2], off, W, &a, &b);
        if (b > a) vkp__max_row(acc + a, xp + r * W + a * g->st[2] + off, b - a, g->st[2]);
      }
    }
    for (ptrdiff_t d = 0; d < D; ++d)
      for (ptrdiff_t oh = 0; oh < OH; ++oh) {
        float *acc = t2 + (d * OH + oh) * OW;
        vkp__fill_ninf(acc, OW);
        for (ptrdiff_t t = 0; t < g->k[1]; ++t) {
          const ptrdiff_t ih = oh * g->st[1] - g->pb[1] + t * g->dil[1];
          if (ih >= 0 && ih < H) vkp__max_row(acc, t1 + (d * H + ih) * OW, OW, 1);
        }
      }
    for (ptrdiff_t od = 0; od < OD; ++od) {
      float *acc = yp + od * OH * OW;
      vkp__fill_ninf(acc, OH * OW);
      for (ptrdiff_t t = 0; t < g->k[0]; ++t) {
        const ptrdiff_t id = od * g->st[0] - g->pb[0] + t * g->dil[0];
        if (id >= 0 && id < D) vkp__max_row(acc, t2 + id * OH * OW, OH * OW, 1);
      }
    }
  }
}

VKP_FN void vkp_maxpool3d_sep(const float *x, float *y, ptrdiff_t planes, const vkp_win3_t *g,
                              float *scratch) {
  vkp_maxpool_sep_job_t j = {x, y, scratch, g};
  const ptrdiff_t work = g->out[0] * g->out[1] * g->out[2] * (g->k[0] + g->k[1] + g->k[2]);
  vkp_parallel_range(planes, work >= 4096 ? 1 : 4096 / (work + 1) + 1, vkp_maxpool_sep_planes,
                     &j);
}

// Max pooling of int8 / uint8 data, the windows of vkp_pool3d; a window
// with no tap in the input gives the type's minimum (index -1).
#define VKP_MAXPOOL3D_INT(T, LOWEST)                                                   \
  typedef struct vkp_maxpool3d_##T##_job_t {                                         \
    const T *x;                                                                      \
    T *y;                                                                            \
    int64_t *indices;                                                                \
    const vkp_win3_t *g;                                                             \
    int col_major;                                                                   \
  } vkp_maxpool3d_##T##_job_t;                                                       \
  static void vkp_maxpool3d_##T##_planes(void *arg, ptrdiff_t lo, ptrdiff_t hi,      \
                                         int worker) {                               \
    (void)worker;                                                                    \
    const vkp_maxpool3d_##T##_job_t *j = arg;                                        \
    const vkp_win3_t *g = j->g;                                                      \
    ptrdiff_t in_plane = g->in[0] * g->in[1] * g->in[2];                             \
    ptrdiff_t at = lo * g->out[0] * g->out[1] * g->out[2];                           \
    for (ptrdiff_t pl = lo; pl < hi; ++pl)                                           \
      for (ptrdiff_t z = 0; z < g->out[0]; ++z)                                      \
        for (ptrdiff_t yy = 0; yy < g->out[1]; ++yy)                                 \
          for (ptrdiff_t xo = 0; xo < g->out[2]; ++xo, ++at) {                       \
            T best = LOWEST;                                                         \
            ptrdiff_t best_at = -1;                                                  \
            for (ptrdiff_t t0 = 0; t0 < g->k[0]; ++t0) {                             \
              ptrdiff_t iz = z * g->st[0] - g->pb[0] + t0 * g->dil[0];               \
              if (iz < 0 || iz >= g->in[0]) continue;                                \
              for (ptrdiff_t t1 = 0; t1 < g->k[1]; ++t1) {                           \
                ptrdiff_t iy = yy * g->st[1] - g->pb[1] + t1 * g->dil[1];            \
                if (iy < 0 || iy >= g->in[1]) continue;                              \
                for (ptrdiff_t t2 = 0; t2 < g->k[2]; ++t2) {                         \
                  ptrdiff_t ix = xo * g->st[2] - g->pb[2] + t2 * g->dil[2];          \
                  if (ix < 0 || ix >= g->in[2]) continue;                            \
                  ptrdiff_t sp = (iz * g->in[1] + iy) * g->in[2] + ix;               \
                  T v = j->x[pl * in_plane + sp];                                    \
                  if (best_at < 0 || v > best) {                                     \
                    best = v;                                                        \
                    best_at = j->col_major ? iz + (iy + ix * g->in[1]) * g->in[0] : sp; \
                  }                                                                  \
                }                                                                    \
              }                                                                      \
            }                                                                        \
            j->y[at] = best;                                                         \
            if (j->indices) j->indices[at] = best_at < 0 ? -1 : pl * in_plane + best_at; \
          }                                                                          \
  }                                                                                  \
  VKP_FN void vkp_maxpool3d_##T(const T *x, T *y, int64_t *indices, ptrdiff_t planes, \
                                const vkp_win3_t *g, int col_major) {                \
    vkp_maxpool3d_##T##_job_t j = {x, y, indices, g, col_major};                     \
    vkp_parallel_range(planes, 1, vkp_maxpool3d_##T##_planes, &j);                   \
  }
VKP_MAXPOOL3D_INT(int8_t, -128)
VKP_MAXPOOL3D_INT(uint8_t, 0)
