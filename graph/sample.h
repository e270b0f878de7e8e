// SPDX-License-Identifier: Apache-2.0
// Coordinate rules of grid_sample and roi_align (graph/op_sample.c), kept
// in one place for the reference kernels and the cpu code generator, which
// checks the attributes through the same parameter readers. The cpu
// prelude (codegen/c/prelude_sample.c) carries the same arithmetic in the
// generated code.
#ifndef VKPIPE_GRAPH_SAMPLE_H_
#define VKPIPE_GRAPH_SAMPLE_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"

enum { VKP__GRID_LINEAR = 0, VKP__GRID_NEAREST = 1, VKP__GRID_CUBIC = 2 };
enum { VKP__GRID_ZEROS = 0, VKP__GRID_BORDER = 1, VKP__GRID_REFLECTION = 2 };

typedef struct vkp__grid_params_t {
  int mode;     // VKP__GRID_LINEAR, _NEAREST, _CUBIC
  int padding;  // VKP__GRID_ZEROS, _BORDER, _REFLECTION
  int align_corners;
} vkp__grid_params_t;

// The node's attributes, checked.
vkp_status_t vkp__grid_sample_params(const vkp_node_t *n, vkp__grid_params_t *p);

// Reflects x into [low2 / 2, high2 / 2] (bounds given doubled), as many
// times as it takes.
static inline double vkp__grid_reflect(double x, double low2, double high2) {
  if (low2 == high2) return 0.0;
  double lo = low2 / 2.0, span = (high2 - low2) / 2.0;
  x = fabs(x - lo);
  double extra = fmod(x, span);
  double flips = floor(x / span);
  return fmod(flips, 2.0) == 0.0 ? extra + lo : span - extra + lo;
}

// Applies border or reflection padding to a source coordinate.
static inline double vkp__grid_pad(const vkp__grid_params_t *p, double x, int64_t len) {
  if (p->padding == VKP__GRID_BORDER) return fmin(fmax(x, 0.0), (double)(len - 1));
  if (p->padding == VKP__GRID_REFLECTION) {
    x = p->align_corners ? vkp__grid_reflect(x, 0.0, 2.0 * (double)(len - 1))
                         : vkp__grid_reflect(x, -1.0, 2.0 * (double)len - 1.0);
    return fmin(fmax(x, 0.0), (double)(len - 1));
  }
  return x;
}

// Index i (a whole number) if it lies in 0..len-1, else -1 (reads zero).
static inline int64_t vkp__grid_index(double i, int64_t len) {
  return i >= 0.0 && i <= (double)(len - 1) ? (int64_t)i : -1;
}

static inline double vkp__cubic1(double x) {  // |x| <= 1, A = -0.75
  const double a = -0.75;
  return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
}
static inline double vkp__cubic2(double x) {  // 1 < |x| < 2
  const double a = -0.75;
  return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
}

// The taps along one spatial dim of length `len` for normalised coordinate
// c: their indices (-1: outside, reads zero) and weights; returns how many.
static inline int vkp__grid_taps(const vkp__grid_params_t *p, double c, int64_t len,
                                 int64_t idx[4], double w[4]) {
  double x = p->align_corners ? (c + 1.0) / 2.0 * (double)(len - 1)
                              : ((c + 1.0) * (double)len - 1.0) / 2.0;
  if (!isfinite(x)) {
    idx[0] = -1, w[0] = 0.0;
    return 1;
  }
  if (p->mode == VKP__GRID_CUBIC) {
    // Taps at floor(x) - 1 .. + 2, each index padded on its own.
    double x0 = floor(x), t = x - x0;
    const double wt[4] = {vkp__cubic2(t + 1.0), vkp__cubic1(t), vkp__cubic1(1.0 - t),
                          vkp__cubic2(2.0 - t)};
    for (int k = 0; k < 4; ++k) {
      double i = x0 - 1.0 + k;
      if (p->padding != VKP__GRID_ZEROS) i = trunc(vkp__grid_pad(p, i, len));
      idx[k] = vkp__grid_index(i, len);
      w[k] = wt[k];
    }
    return 4;
  }
  x = vkp__grid_pad(p, x, len);
  if (p->mode == VKP__GRID_NEAREST) {
    idx[0] = vkp__grid_index(nearbyint(x), len);
    w[0] = 1.0;
    return 1;
  }
  double x0 = floor(x), t = x - x0;
  idx[0] = vkp__grid_index(x0, len), w[0] = 1.0 - t;
  idx[1] = vkp__grid_index(x0 + 1.0, len), w[1] = t;
  return 2;
}

typedef struct vkp__roi_params_t {
  bool max;         // mode max (else avg)
  bool half_pixel;  // coordinate_transformation_mode half_pixel (else output_half_pixel)
  int64_t out_h, out_w, sampling_ratio;
  double spatial_scale;
} vkp__roi_params_t;

// The node's attributes, checked.
vkp_status_t vkp__roi_align_params(const vkp_node_t *n, vkp__roi_params_t *p);

// Samples per bin and dim are capped here: a region's own size sets them
// when sampling_ratio is 0, and a corrupt one must not set a run time.
#define VKP__ROI_MAX_GRID 4096

typedef struct vkp__roi_region_t {
  double x0, y0, bin_w, bin_h;
  int64_t grid_w, grid_h, count;
} vkp__roi_region_t;

static inline int64_t vkp__roi_grid(double extent, int64_t ratio) {
  if (ratio > 0) return ratio;
  if (!(extent > 0.0)) return 0;  // also NaN
  double g = ceil(extent);
  return g > VKP__ROI_MAX_GRID ? VKP__ROI_MAX_GRID : (int64_t)g;
}

// Where region box = (x1, y1, x2, y2) samples.
static inline void vkp__roi_region(const vkp__roi_params_t *p, const double box[4],
                                   vkp__roi_region_t *r) {
  double off = p->half_pixel ? 0.5 : 0.0;
  r->x0 = box[0] * p->spatial_scale - off;
  r->y0 = box[1] * p->spatial_scale - off;
  double rw = box[2] * p->spatial_scale - off - r->x0;
  double rh = box[3] * p->spatial_scale - off - r->y0;
  if (!p->half_pixel) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0);
  r->bin_w = rw / (double)p->out_w;
  r->bin_h = rh / (double)p->out_h;
  r->grid_w = vkp__roi_grid(r->bin_w, p->sampling_ratio);
  r->grid_h = vkp__roi_grid(r->bin_h, p->sampling_ratio);
  r->count = r->grid_w * r->grid_h > 1 ? r->grid_w * r->grid_h : 1;
}

// The four corners of a bilinear sample at (y, x) of an h x w plane:
// offsets and weights; false when the sample lies outside (it counts as 0).
static inline bool vkp__roi_bilinear(double y, double x, int64_t h, int64_t w,
                                     int64_t at[4], double wt[4]) {
  if (!(y >= -1.0 && y <= (double)h && x >= -1.0 && x <= (double)w)) return false;
  y = fmax(y, 0.0), x = fmax(x, 0.0);
  int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
  if (yl >= h - 1) yh = yl = h - 1, y = (double)yl;
  else yh = yl + 1;
  if (xl >= w - 1) xh = xl = w - 1, x = (double)xl;
  else xh = xl + 1;
  double ly = y - (double)yl, lx = x - (double)xl, hy = 1.0 - ly, hx = 1.0 - lx;
  at[0] = yl * w + xl, wt[0] = hy * hx;
  at[1] = yl * w + xh, wt[1] = hy * lx;
  at[2] = yh * w + xl, wt[2] = ly * hx;
  at[3] = yh * w + xh, wt[3] = ly * lx;
  return true;
}

#endif  // VKPIPE_GRAPH_SAMPLE_H_
