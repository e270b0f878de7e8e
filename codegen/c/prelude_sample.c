// SPDX-License-Identifier: Apache-2.0
// Loops of the sampling family (codegen/c/emit_sample.c), pasted into every
// generated unit after prelude.c: grid_sample and roi_align on float32, with
// the coordinate rules of graph/sample.h (the reference's) computed in
// double, so the cpu target and ref choose the same taps.

static inline double vkp_gs_reflect(double x, double low2, double high2) {
  if (low2 == high2) return 0.0;
  double lo = low2 / 2.0, span = (high2 - low2) / 2.0;
  x = fabs(x - lo);
  double extra = fmod(x, span);
  return fmod(floor(x / span), 2.0) == 0.0 ? extra + lo : span - extra + lo;
}

static inline double vkp_gs_pad(int padding, int align, double x, ptrdiff_t len) {
  if (padding == 1) return fmin(fmax(x, 0.0), (double)(len - 1));
  if (padding == 2) {
    x = align ? vkp_gs_reflect(x, 0.0, 2.0 * (double)(len - 1))
              : vkp_gs_reflect(x, -1.0, 2.0 * (double)len - 1.0);
    return fmin(fmax(x, 0.0), (double)(len - 1));
  }
  return x;
}

static inline ptrdiff_t vkp_gs_index(double i, ptrdiff_t len) {
  return i >= 0.0 && i <= (double)(len - 1) ? (ptrdiff_t)i : -1;
}

// Taps of one dim (mode 0 linear, 1 nearest, 2 cubic; padding 0 zeros,
// 1 border, 2 reflection): indices (-1 reads zero) and weights.
static inline int vkp_gs_taps(int mode, int padding, int align, double c, ptrdiff_t len,
                              ptrdiff_t idx[4], double w[4]) {
  double x = align ? (c + 1.0) / 2.0 * (double)(len - 1) : ((c + 1.0) * (double)len - 1.0) / 2.0;
  if (!isfinite(x)) {
    idx[0] = -1, w[0] = 0.0;
    return 1;
  }
  if (mode == 2) {
    const double a = -0.75;
    double x0 = floor(x), t = x - x0;
    double d[4] = {t + 1.0, t, 1.0 - t, 2.0 - t};
    for (int k = 0; k < 4; ++k) {
      double e = d[k];
      w[k] = k == 1 || k == 2 ? ((a + 2.0) * e - (a + 3.0)) * e * e + 1.0
                              : ((a * e - 5.0 * a) * e + 8.0 * a) * e - 4.0 * a;
      double i = x0 - 1.0 + k;
      if (padding) i = trunc(vkp_gs_pad(padding, align, i, len));
      idx[k] = vkp_gs_index(i, len);
    }
    return 4;
  }
  x = vkp_gs_pad(padding, align, x, len);
  if (mode == 1) {
    idx[0] = vkp_gs_index(nearbyint(x), len), w[0] = 1.0;
    return 1;
  }
  double x0 = floor(x), t = x - x0;
  idx[0] = vkp_gs_index(x0, len), w[0] = 1.0 - t;
  idx[1] = vkp_gs_index(x0 + 1.0, len), w[1] = t;
  return 2;
}

typedef struct vkp_grid_sample_t {
  const float *x, *grid;
  float *y;
  int r, mode, padding, align;
  ptrdiff_t chans, in_plane, out_plane;
  const ptrdiff_t *in_shape;  // r spatial dims
} vkp_grid_sample_t;

// Iterations: (batch, output position) pairs; each does every channel.
static void vkp_grid_sample_rows(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_grid_sample_t *j = arg;
  const int r = j->r;
  ptrdiff_t stride[8];
  stride[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * j->in_shape[d + 1];
  for (ptrdiff_t it = lo; it < hi; ++it) {
    ptrdiff_t b = it / j->out_plane, o = it % j->out_plane;
    ptrdiff_t idx[8][4];
    double w[8][4];
    int n[8];
    for (int d = 0; d < r; ++d)
      n[d] = vkp_gs_taps(j->mode, j->padding, j->align, (double)j->grid[it * r + (r - 1 - d)],
                         j->in_shape[d], idx[d], w[d]);
    for (ptrdiff_t c = 0; c < j->chans; ++c) {
      const float *src = j->x + (b * j->chans + c) * j->in_plane;
      double acc = 0.0;
      int t[8] = {0};
      for (;;) {
        double wt = 1.0;
        ptrdiff_t off = 0;
        int inside = 1;
        for (int d = 0; d < r && inside; ++d) {
          if (idx[d][t[d]] < 0) inside = 0;
          wt *= w[d][t[d]];
          off += idx[d][t[d]] * stride[d];
        }
        if (inside && wt != 0.0) acc += wt * (double)src[off];
        int d = r - 1;
        while (d >= 0 && ++t[d] == n[d]) t[d--] = 0;
        if (d < 0) break;
      }
      j->y[(b * j->chans + c) * j->out_plane + o] = (float)acc;
    }
  }
}

VKP_FN void vkp_grid_sample_f32(const vkp_grid_sample_t *j, ptrdiff_t batch) {
  ptrdiff_t n = batch * j->out_plane;
  if (n == 0 || j->chans == 0) return;
  vkp_parallel_range(n, VKP_GRAIN(j->chans * 16), vkp_grid_sample_rows, (void *)j);
}

typedef struct vkp_roi_align_t {
  const float *x, *rois;
  const void *bidx;
  int bidx64, max, half_pixel;
  float *y;
  ptrdiff_t batch, chans, h, w, oh, ow, ratio;
  double scale;
} vkp_roi_align_t;

static inline ptrdiff_t vkp_roi_grid(double extent, ptrdiff_t ratio) {
  if (ratio > 0) return ratio;
  if (!(extent > 0.0)) return 0;
  double g = ceil(extent);
  return g > 4096.0 ? 4096 : (ptrdiff_t)g;
}

// Iterations: (region, channel) pairs.
static void vkp_roi_align_rows(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  (void)worker;
  const vkp_roi_align_t *j = arg;
  const ptrdiff_t h = j->h, w = j->w;
  for (ptrdiff_t it = lo; it < hi; ++it) {
    ptrdiff_t k = it / j->chans, c = it % j->chans;
    int64_t b = j->bidx64 ? ((const int64_t *)j->bidx)[k] : ((const int32_t *)j->bidx)[k];
    const float *plane = j->x + ((ptrdiff_t)b * j->chans + c) * h * w;
    double off = j->half_pixel ? 0.5 : 0.0;
    const float *box = j->rois + k * 4;
    double x0 = box[0] * j->scale - off, y0 = box[1] * j->scale - off;
    double rw = box[2] * j->scale - off - x0, rh = box[3] * j->scale - off - y0;
    if (!j->half_pixel) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0);
    double bw = rw / (double)j->ow, bh = rh / (double)j->oh;
    ptrdiff_t gw = vkp_roi_grid(bw, j->ratio), gh = vkp_roi_grid(bh, j->ratio);
    double count = gw * gh > 1 ? (double)(gw * gh) : 1.0;
    for (ptrdiff_t ph = 0; ph < j->oh; ++ph) {
      for (ptrdiff_t pw = 0; pw < j->ow; ++pw) {
        double acc = 0.0;
        int first = 1;
        for (ptrdiff_t iy = 0; iy < gh; ++iy) {
          double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
          for (ptrdiff_t ix = 0; ix < gw; ++ix) {
            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
            double v[4] = {0.0, 0.0, 0.0, 0.0};
            if (yy >= -1.0 && yy <= (double)h && xx >= -1.0 && xx <= (double)w) {
              double y = fmax(yy, 0.0), x = fmax(xx, 0.0);
              ptrdiff_t yl = (ptrdiff_t)y, xl = (ptrdiff_t)x, yh, xh;
              if (yl >= h - 1) yh = yl = h - 1, y = (double)yl;
              else yh = yl + 1;
              if (xl >= w - 1) xh = xl = w - 1, x = (double)xl;
              else xh = xl + 1;
              double ly = y - (double)yl, lx = x - (double)xl;
              v[0] = (1.0 - ly) * (1.0 - lx) * plane[yl * w + xl];
              v[1] = (1.0 - ly) * lx * plane[yl * w + xh];
              v[2] = ly * (1.0 - lx) * plane[yh * w + xl];
              v[3] = ly * lx * plane[yh * w + xh];
            }
            if (!j->max) {
              acc += v[0] + v[1] + v[2] + v[3];
            } else {
              double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
              acc = first ? m : fmax(acc, m);
              first = 0;
            }
          }
        }
        if (!j->max) acc /= count;
        j->y[((k * j->chans + c) * j->oh + ph) * j->ow + pw] = (float)acc;
      }
    }
  }
}

// 1 when a batch index is outside 0..batch-1 (nothing is read or written).
VKP_FN int vkp_roi_align_f32(const vkp_roi_align_t *j, ptrdiff_t regions) {
  for (ptrdiff_t k = 0; k < regions; ++k) {
    int64_t b = j->bidx64 ? ((const int64_t *)j->bidx)[k] : ((const int32_t *)j->bidx)[k];
    if (b < 0 || b >= j->batch) return 1;
  }
  if (regions * j->chans == 0) return 0;
  vkp_parallel_range(regions * j->chans, VKP_GRAIN(j->oh * j->ow * 16), vkp_roi_align_rows,
                     (void *)j);
  return 0;
}
