// SPDX-License-Identifier: Apache-2.0
// Sampling at computed positions: grid_sample (ONNX GridSample, N-d) and
// roi_align (ONNX RoiAlign). Schemas, inference and reference kernels; the
// coordinate rules (vkp__grid_source, vkp__grid_tap) are what the cpu
// target's prelude implements too (codegen/c/prelude_sample.c), so the two
// agree on every edge case.
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"
#include "graph/sample.h"

// ---------------------------------------------------------------------------
// grid_sample: y[n, c, o...] interpolates x[n, c, ...] at the position
// grid[n, o..., :] gives in [-1, 1] per spatial dim (the last grid entry is
// the first spatial dim's: x, y, z order as in PyTorch). mode: linear,
// nearest or cubic (2-D only); padding_mode: zeros, border or reflection.

const vkp__attr_spec_t vkp__attrs_grid_sample[] = {
    VKP__ATTR_STRING("mode", "linear"), VKP__ATTR_STRING("padding_mode", "zeros"),
    VKP__ATTR_INT("align_corners", 0), VKP__ATTR_END};

static int vkp__pick(const char *s, const char *const *set, int n) {
  for (int i = 0; s && i < n; ++i)
    if (strcmp(s, set[i]) == 0) return i;
  return -1;
}

vkp_status_t vkp__grid_sample_params(const vkp_node_t *n, vkp__grid_params_t *p) {
  static const char *const modes[] = {"linear", "nearest", "cubic"};
  static const char *const pads[] = {"zeros", "border", "reflection"};
  int m = vkp__pick(vkp_node_string(n, "mode"), modes, 3);
  int pm = vkp__pick(vkp_node_string(n, "padding_mode"), pads, 3);
  if (m < 0)
    return VKP__ERR("attribute 'mode' is '%s'; expected linear, nearest or cubic",
                    vkp_node_string(n, "mode"));
  if (pm < 0)
    return VKP__ERR("attribute 'padding_mode' is '%s'; expected zeros, border or "
                    "reflection",
                    vkp_node_string(n, "padding_mode"));
  int64_t ac = vkp_node_int(n, "align_corners");
  if (ac != 0 && ac != 1)
    return VKP__ERR("attribute 'align_corners' is %lld; 0 or 1", (long long)ac);
  p->mode = m;
  p->padding = pm;
  p->align_corners = (int)ac;
  return NULL;
}

vkp_status_t vkp__infer_grid_sample(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *grid = vkp__in(g, n, 1);
  vkp__grid_params_t p;
  VKP_RETURN_IF_ERROR(vkp__grid_sample_params(n, &p));
  if (x->rank < 3)
    return VKP__ERR("input 'X' has rank %d; expected [N, C, spatial...] (rank 3 or more)",
                    (int)x->rank);
  int32_t r = x->rank - 2;
  char b1[96], b2[96];
  if (grid->rank != r + 2 || grid->shape[r + 1] != r || grid->shape[0] != x->shape[0])
    return VKP__ERR("input 'grid' is %s for X %s; expected [%lld, out..., %d] (one "
                    "position of %d coordinates per output point)",
                    vkp__fmt(grid, b1, sizeof b1), vkp__fmt(x, b2, sizeof b2),
                    (long long)x->shape[0], (int)r, (int)r);
  if (grid->dtype != x->dtype)
    return VKP__ERR("input 'grid' is %s and X %s; they must have the same dtype",
                    vkp_dtype_name(grid->dtype), vkp_dtype_name(x->dtype));
  if (p.mode == VKP__GRID_CUBIC && r != 2)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "mode 'cubic' is defined for 2-D inputs only (X has %d "
                           "spatial dims)",
                           (int)r);
  int64_t shape[VKP_MAX_RANK];
  shape[0] = x->shape[0];
  shape[1] = x->shape[1];
  for (int32_t d = 0; d < r; ++d) shape[2 + d] = grid->shape[1 + d];
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__eval_grid_sample(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                   vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *grid = in[1];
  vkp__grid_params_t p;
  VKP_RETURN_IF_ERROR(vkp__grid_sample_params(n, &p));
  int32_t r = x->rank - 2;
  int64_t batch = x->shape[0], chans = x->shape[1];
  int64_t in_plane = vkp__prod(x->shape, 2, x->rank);
  int64_t out_plane = vkp__prod(out->shape, 2, out->rank);
  int64_t xstride[VKP_MAX_RANK];
  xstride[r - 1] = 1;
  for (int32_t d = r - 2; d >= 0; --d) xstride[d] = xstride[d + 1] * x->shape[3 + d];
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < out_plane; ++o) {
      // Per spatial dim: its taps (index, weight; index -1 reads zero).
      int64_t idx[VKP_MAX_RANK][4];
      double w[VKP_MAX_RANK][4];
      int ntap[VKP_MAX_RANK];
      for (int32_t d = 0; d < r; ++d) {
        double c = vkp__get_f(grid, (b * out_plane + o) * r + (r - 1 - d));
        ntap[d] = vkp__grid_taps(&p, c, x->shape[2 + d], idx[d], w[d]);
      }
      for (int64_t ch = 0; ch < chans; ++ch) {
        const int64_t base = (b * chans + ch) * in_plane;
        double acc = 0.0;
        int t[VKP_MAX_RANK] = {0};
        for (;;) {
          double wt = 1.0;
          int64_t off = 0;
          bool inside = true;
          for (int32_t d = 0; d < r && inside; ++d) {
            if (idx[d][t[d]] < 0) inside = false;
            wt *= w[d][t[d]];
            off += idx[d][t[d]] * xstride[d];
          }
          if (inside && wt != 0.0) acc += wt * vkp__get_f(x, base + off);
          int32_t d = r - 1;
          while (d >= 0 && ++t[d] == ntap[d]) t[d--] = 0;
          if (d < 0) break;
        }
        vkp__put_f(out, (b * chans + ch) * out_plane + o, acc);
      }
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// roi_align: y[k, c, ph, pw] averages (or takes the largest of) a regular
// grid of bilinear samples of x[batch_indices[k], c] inside bin (ph, pw) of
// region rois[k] = (x1, y1, x2, y2), scaled by spatial_scale.

const vkp__attr_spec_t vkp__attrs_roi_align[] = {
    VKP__ATTR_STRING("mode", "avg"),
    VKP__ATTR_STRING("coordinate_transformation_mode", "half_pixel"),
    VKP__ATTR_INT("output_height", 1), VKP__ATTR_INT("output_width", 1),
    VKP__ATTR_INT("sampling_ratio", 0), VKP__ATTR_FLOAT("spatial_scale", 1.0),
    VKP__ATTR_END};

vkp_status_t vkp__roi_align_params(const vkp_node_t *n, vkp__roi_params_t *p) {
  static const char *const modes[] = {"avg", "max"};
  static const char *const ctms[] = {"output_half_pixel", "half_pixel"};
  int m = vkp__pick(vkp_node_string(n, "mode"), modes, 2);
  int c = vkp__pick(vkp_node_string(n, "coordinate_transformation_mode"), ctms, 2);
  if (m < 0)
    return VKP__ERR("attribute 'mode' is '%s'; expected avg or max",
                    vkp_node_string(n, "mode"));
  if (c < 0)
    return VKP__ERR("attribute 'coordinate_transformation_mode' is '%s'; expected "
                    "half_pixel or output_half_pixel",
                    vkp_node_string(n, "coordinate_transformation_mode"));
  p->max = m == 1;
  p->half_pixel = c == 1;
  p->out_h = vkp_node_int(n, "output_height");
  p->out_w = vkp_node_int(n, "output_width");
  p->sampling_ratio = vkp_node_int(n, "sampling_ratio");
  p->spatial_scale = vkp_node_float(n, "spatial_scale");
  if (p->out_h < 1 || p->out_w < 1 || p->out_h > (1 << 16) || p->out_w > (1 << 16))
    return VKP__ERR("output_height %lld and output_width %lld must be 1..65536",
                    (long long)p->out_h, (long long)p->out_w);
  if (p->sampling_ratio < 0 || p->sampling_ratio > (1 << 16))
    return VKP__ERR("attribute 'sampling_ratio' is %lld; 0 (adaptive) to 65536",
                    (long long)p->sampling_ratio);
  if (!isfinite(p->spatial_scale))
    return VKP__ERR("attribute 'spatial_scale' is not finite");
  return NULL;
}

vkp_status_t vkp__infer_roi_align(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *rois = vkp__in(g, n, 1),
                    *bi = vkp__in(g, n, 2);
  vkp__roi_params_t p;
  VKP_RETURN_IF_ERROR(vkp__roi_align_params(n, &p));
  char b1[96], b2[96];
  if (x->rank != 4)
    return VKP__ERR("input 'X' is %s; expected [N, C, H, W]", vkp__fmt(x, b1, sizeof b1));
  if (rois->rank != 2 || rois->shape[1] != 4)
    return VKP__ERR("input 'rois' is %s; expected [num_rois, 4]",
                    vkp__fmt(rois, b1, sizeof b1));
  if (rois->dtype != x->dtype)
    return VKP__ERR("input 'rois' is %s and X %s; they must have the same dtype",
                    vkp_dtype_name(rois->dtype), vkp_dtype_name(x->dtype));
  if (bi->rank != 1 || bi->shape[0] != rois->shape[0])
    return VKP__ERR("input 'batch_indices' is %s for rois %s; expected [%lld]",
                    vkp__fmt(bi, b1, sizeof b1), vkp__fmt(rois, b2, sizeof b2),
                    (long long)rois->shape[0]);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(bi, "batch_indices", VKP_OP_DTYPES_INT));
  if (x->bounded)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "input 'X' has a data-dependent shape; roi_align takes one "
                           "only in rois and batch_indices (along the region axis)");
  if (rois->bounded != bi->bounded ||
      (rois->bounded && (rois->bounded_axis != 0 || bi->bounded_axis != 0)))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "inputs 'rois' and 'batch_indices' must both have a static "
                           "region count or both a data-dependent one along axis 0");
  int64_t shape[4] = {rois->shape[0], x->shape[1], p.out_h, p.out_w};
  vkp__set_out(out, x->dtype, 4, shape);
  if (rois->bounded) {
    out->bounded = true;
    out->bounded_axis = 0;
  }
  return NULL;
}

vkp_status_t vkp__eval_roi_align(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                 vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *rois = in[1], *bi = in[2];
  vkp__roi_params_t p;
  VKP_RETURN_IF_ERROR(vkp__roi_align_params(n, &p));
  int64_t count = rois->shape[0];  // the run-time region count
  if (bi->shape[0] != count)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "node '%s' (roi_align): %lld regions but %lld batch indices "
                           "at run time",
                           n->name, (long long)count, (long long)bi->shape[0]);
  out->shape[0] = count;
  int64_t batch = x->shape[0], chans = x->shape[1], h = x->shape[2], w = x->shape[3];
  for (int64_t k = 0; k < count; ++k) {
    int64_t b = vkp__get_i(bi, k);
    if (b < 0 || b >= batch)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "node '%s' (roi_align): batch index %lld of region %lld is "
                             "outside 0..%lld",
                             n->name, (long long)b, (long long)k, (long long)batch - 1);
    double box[4];
    for (int i = 0; i < 4; ++i) box[i] = vkp__get_f(rois, k * 4 + i);
    vkp__roi_region_t reg;
    vkp__roi_region(&p, box, &reg);
    for (int64_t c = 0; c < chans; ++c) {
      const int64_t plane = (b * chans + c) * h * w;
      for (int64_t ph = 0; ph < p.out_h; ++ph) {
        for (int64_t pw = 0; pw < p.out_w; ++pw) {
          double acc = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < reg.grid_h; ++iy) {
            double yy = reg.y0 + (double)ph * reg.bin_h +
                        ((double)iy + 0.5) * reg.bin_h / (double)reg.grid_h;
            for (int64_t ix = 0; ix < reg.grid_w; ++ix) {
              double xx = reg.x0 + (double)pw * reg.bin_w +
                          ((double)ix + 0.5) * reg.bin_w / (double)reg.grid_w;
              int64_t at[4];
              double wt[4];
              double v[4] = {0.0, 0.0, 0.0, 0.0};  // a sample outside counts as 0
              if (vkp__roi_bilinear(yy, xx, h, w, at, wt))
                for (int q = 0; q < 4; ++q) v[q] = wt[q] * vkp__get_f(x, plane + at[q]);
              if (!p.max) {
                acc += v[0] + v[1] + v[2] + v[3];
              } else {
                // As ONNX Runtime computes it: the largest weighted corner.
                double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                acc = first ? m : fmax(acc, m);
                first = false;
              }
            }
          }
          if (!p.max) acc /= (double)reg.count;
          vkp__put_f(out, ((k * chans + c) * p.out_h + ph) * p.out_w + pw, acc);
        }
      }
    }
  }
  return NULL;
}
