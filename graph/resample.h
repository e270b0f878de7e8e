// SPDX-License-Identifier: Apache-2.0
//
// The index arithmetic of the padding, tiling and resampling ops
// (graph/op_resample.c), shared by their reference kernels and by both code
// generators so that every target reads the same plan:
//
//   vkp__remap_t plan;
//   VKP_RETURN_IF_ERROR(vkp__remap_plan(node, x->rank, x->shape, &plan));
//   // output element (i0, ..., i{r-1}) of plan.shape reads input element
//   // sum_d plan.map[d][i_d] * plan.stride[d] (map NULL: i_d itself), or is
//   // plan.fill when any map entry is -1
//   vkp__remap_deinit(&plan);
//
//   int32_t w = vkp__resize_width(node, axis);
//   int64_t idx[w]; double wt[w]; bool outside;
//   vkp__resize_taps(node, axis, in_len, out_len, o, idx, wt, &outside);
//   // output index o along `axis` is sum_t wt[t] * x[idx[t]] (indices
//   // already clamped into the input), or the extrapolation value when
//   // `outside`
#ifndef VKPIPE_GRAPH_RESAMPLE_H_
#define VKPIPE_GRAPH_RESAMPLE_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"

// The data movement of pad, tile, expand, depth_to_space and
// space_to_depth as one gather: the output seen as `shape` (rank dims; the
// output's own shape except for depth_to_space / space_to_depth, which are
// seen at rank 6), each dim with an index map into the input and the
// input's element stride for it.
typedef struct vkp__remap_t {
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  int64_t stride[VKP_MAX_RANK];
  int32_t *map[VKP_MAX_RANK];  // owned; NULL: identity; -1 entries: fill
  double fill;                 // pad's constant value
} vkp__remap_t;

// The plan of validated node `n` (one of the ops above) for an input of
// `in_rank` / `in_shape`.
vkp_status_t vkp__remap_plan(const vkp_node_t *n, int32_t in_rank,
                             const int64_t *in_shape, vkp__remap_t *plan)
    VKP_MUST_USE;
void vkp__remap_deinit(vkp__remap_t *plan);

// Whether validated resize node `n` leaves `axis` as it is (scale 1 under a
// coordinate mode that maps output index o to input index o): such an axis
// may vary at run time (graph/bounded.h, the batch rule).
bool vkp__resize_keeps_axis(const vkp_node_t *n, int32_t axis);
// Taps per output index of a validated resize node along `axis` (1 for
// axes it does not resample and for nearest).
int32_t vkp__resize_width(const vkp_node_t *n, int32_t axis);
// The taps of output index `o` along `axis` (input length in_len, output
// out_len): vkp__resize_width entries of idx (clamped into [0, in_len)) and
// weights (0 for excluded ones); *outside true when o maps outside the
// input under tf_crop_and_resize (the output is extrapolation_value).
void vkp__resize_taps(const vkp_node_t *n, int32_t axis, int64_t in_len,
                      int64_t out_len, int64_t o, int64_t *idx, double *w,
                      bool *outside);

#endif  // VKPIPE_GRAPH_RESAMPLE_H_
