// SPDX-License-Identifier: Apache-2.0
// Reductions over a set of axes.
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_reduce[] = {
    VKP__ATTR("axes", INTS), VKP__ATTR_INT("keepdims", 1), VKP__ATTR_END};

vkp_status_t vkp__infer_reduce(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  if (count == 0) {  // empty: reduce over every axis
    count = x->rank;
    for (int32_t i = 0; i < count; ++i) norm[i] = i;
  } else {
    VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  bool keep = vkp_node_int(n, "keepdims") != 0;
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    bool reduced = j < count && norm[j] == d;
    if (reduced) ++j;
    if (!reduced) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__eval_reduce(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *axes;
  int32_t n_axes = vkp_node_attr_ints(n, "axes", &axes);  // sorted, positive
  int64_t strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  // Split the input dims into kept ones (walked by the output) and reduced
  // ones (walked for every output element).
  int32_t n_kept = 0, n_red = 0;
  int64_t kept_shape[VKP_MAX_RANK], kept_strides[VKP_MAX_RANK];
  int64_t red_shape[VKP_MAX_RANK], red_strides[VKP_MAX_RANK];
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    if (j < n_axes && axes[j] == d) {
      ++j;
      red_shape[n_red] = x->shape[d];
      red_strides[n_red++] = strides[d];
    } else {
      kept_shape[n_kept] = x->shape[d];
      kept_strides[n_kept++] = strides[d];
    }
  }
  int64_t n_out = vkp__prod(kept_shape, 0, n_kept);
  int64_t n_in = vkp__prod(red_shape, 0, n_red);
  bool mean = n->op == VKP_OP_REDUCE_MEAN;
  int64_t kidx[VKP_MAX_RANK] = {0};
  for (int64_t o = 0; o < n_out; ++o) {
    int64_t base = vkp__dot(n_kept, kidx, kept_strides);
    int64_t ridx[VKP_MAX_RANK] = {0};
    double sum = 0;
    for (int64_t r = 0; r < n_in; ++r) {
      sum += vkp__get_f(x, base + vkp__dot(n_red, ridx, red_strides));
      vkp__next_index(n_red, red_shape, ridx);
    }
    // The mean of nothing is NaN, as in NumPy.
    vkp__put_f(out, o, mean ? (n_in ? sum / (double)n_in : NAN) : sum);
    vkp__next_index(n_kept, kept_shape, kidx);
  }
  return NULL;
}

