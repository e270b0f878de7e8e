// SPDX-License-Identifier: Apache-2.0
// Fused scaled-dot-product attention, as exporters spell it out and the
// ONNX importer recognises (graph/onnx_fuse.c):
//
//   S = scale * Q @ Kt                     Q [..., Lq, D], Kt [..., D, Lk]
//   cond given:  S = (C != 0) == fill_where ? fill : S
//   mask given:  S = S + M
//   Y = softmax(S, last axis) @ V          V [..., Lk, Dv] -> Y [..., Lq, Dv]
//
// Inputs q, kt, v, [mask], [cond]: the mask (Q's dtype) and the condition
// (any dtype) broadcast to [batch..., Lq, Lk]; the batch dims of Q, Kt and V
// broadcast like matmul's.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_attention[] = {
    VKP__ATTR_FLOAT("scale", 1.0), VKP__ATTR_FLOAT("fill", 0.0),
    VKP__ATTR_INT("fill_where", 1), VKP__ATTR_END};

// Batch shape of q, kt and v broadcast together (right-aligned).
static vkp_status_t vkp__batch_shape(const vkp_value_t *const *v, int32_t n,
                                     int32_t *rank, int64_t *shape) {
  *rank = 0;
  for (int32_t i = 0; i < n; ++i)
    if (v[i]->rank - 2 > *rank) *rank = v[i]->rank - 2;
  for (int32_t d = 0; d < *rank; ++d) {
    shape[d] = 1;
    for (int32_t i = 0; i < n; ++i) {
      int32_t k = d - (*rank - (v[i]->rank - 2));
      int64_t dim = k >= 0 ? v[i]->shape[k] : 1;
      if (dim != 1 && shape[d] != 1 && dim != shape[d])
        return VKP__ERR("batch dims of '%s' do not broadcast (dim %d: %lld vs "
                        "%lld)",
                        v[i]->name, (int)d, (long long)dim, (long long)shape[d]);
      if (dim != 1) shape[d] = dim;
    }
  }
  return NULL;
}

vkp_status_t vkp__infer_attention(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *q = vkp__in(g, n, 0), *kt = vkp__in(g, n, 1),
                    *v = vkp__in(g, n, 2), *m = vkp__in(g, n, 3);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(q, kt));
  VKP_RETURN_IF_ERROR(vkp__same_dtype(q, v));
  const vkp_value_t *qkv[3] = {q, kt, v};
  for (int i = 0; i < 3; ++i)
    if (qkv[i]->rank < 2)
      return VKP__ERR("'%s' has rank %d; attention operands are [..., rows, cols]",
                      qkv[i]->name, (int)qkv[i]->rank);
  int64_t lq = q->shape[q->rank - 2], d = q->shape[q->rank - 1];
  int64_t lk = kt->shape[kt->rank - 1], dv = v->shape[v->rank - 1];
  if (kt->shape[kt->rank - 2] != d)
    return VKP__ERR("Q has %lld columns, Kt %lld rows", (long long)d,
                    (long long)kt->shape[kt->rank - 2]);
  if (v->shape[v->rank - 2] != lk)
    return VKP__ERR("Kt has %lld keys, V %lld rows", (long long)lk,
                    (long long)v->shape[v->rank - 2]);
  int32_t brank;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__batch_shape(qkv, 3, &brank, shape));
  if (m) VKP_RETURN_IF_ERROR(vkp__same_dtype(q, m));
  const vkp_value_t *masks[2] = {m, vkp__in(g, n, 4)};
  for (int k = 0; k < 2; ++k) {
    const vkp_value_t *mk = masks[k];
    if (!mk) continue;
    // Broadcasts (right-aligned) to the scores [batch..., Lq, Lk].
    if (mk->rank > brank + 2)
      return VKP__ERR("%s '%s' has rank %d, more than the scores' %d",
                      k ? "condition" : "mask", mk->name, (int)mk->rank,
                      (int)brank + 2);
    int64_t scores[VKP_MAX_RANK + 2];
    for (int32_t i = 0; i < brank; ++i) scores[i] = shape[i];
    scores[brank] = lq;
    scores[brank + 1] = lk;
    for (int32_t i = 0; i < mk->rank; ++i) {
      int64_t want = scores[brank + 2 - mk->rank + i];
      if (mk->shape[i] != 1 && mk->shape[i] != want)
        return VKP__ERR("%s '%s' does not broadcast to the scores [..., %lld, "
                        "%lld] (its dim %d is %lld)",
                        k ? "condition" : "mask", mk->name, (long long)lq,
                        (long long)lk, (int)i, (long long)mk->shape[i]);
    }
  }
  if (brank + 2 > VKP_MAX_RANK) return VKP__ERR("result rank exceeds %d", VKP_MAX_RANK);
  shape[brank] = lq;
  shape[brank + 1] = dv;
  vkp__set_out(out, q->dtype, brank + 2, shape);
  return NULL;
}

// Offset of batch index `idx` (over the output batch shape, rank `brank`) in
// a tensor of rank `rank` whose last `tail` dims are not batch dims, with
// `rows * cols` elements per matrix (broadcast dims contribute 0).
static int64_t vkp__batch_offset(const vkp_tensor_t *t, int32_t brank,
                                 const int64_t *idx, int32_t tail) {
  int64_t off = 0, stride = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    int32_t b = d - (t->rank - tail);  // position among t's batch dims
    if (b >= 0) {
      stride *= t->shape[d];
      continue;
    }
    int32_t od = brank - (t->rank - tail) + d;
    if (t->shape[d] != 1) off += idx[od] * stride;
    stride *= t->shape[d];
  }
  return off;
}

vkp_status_t vkp__eval_attention(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                 vkp_tensor_t *out) {
  const vkp_tensor_t *q = in[0], *kt = in[1], *v = in[2];
  const vkp_tensor_t *m = n->n_inputs > 3 && n->inputs[3] >= 0 ? in[3] : NULL;
  const vkp_tensor_t *c = n->n_inputs > 4 && n->inputs[4] >= 0 ? in[4] : NULL;
  double scale = vkp_node_float(n, "scale"), fill = vkp_node_float(n, "fill");
  bool fill_where = vkp_node_int(n, "fill_where") != 0;
  int32_t brank = out->rank - 2;
  int64_t lq = out->shape[brank], dv = out->shape[brank + 1];
  int64_t d = q->shape[q->rank - 1], lk = kt->shape[kt->rank - 1];
  int64_t batches = vkp__prod(out->shape, 0, brank);
  // The mask's and condition's strides over [batch..., Lq, Lk] (0 where
  // they broadcast).
  int64_t ms[VKP_MAX_RANK + 2] = {0}, cs[VKP_MAX_RANK + 2] = {0};
  const vkp_tensor_t *mc[2] = {m, c};
  int64_t *st[2] = {ms, cs};
  for (int k = 0; k < 2; ++k) {
    if (!mc[k]) continue;
    int64_t own[VKP_MAX_RANK];
    vkp__strides(mc[k], own);
    for (int32_t i = 0; i < mc[k]->rank; ++i)
      st[k][brank + 2 - mc[k]->rank + i] = mc[k]->shape[i] == 1 ? 0 : own[i];
  }
  // One row of scores, allocated once per call.
  double *s = vkp__malloc((size_t)(lk ? lk : 1) * sizeof(double));
  if (!s) return VKP__ERR("out of memory for %lld attention scores", (long long)lk);
  int64_t idx[VKP_MAX_RANK] = {0};
  for (int64_t b = 0; b < batches; ++b) {
    int64_t oq = vkp__batch_offset(q, brank, idx, 2);
    int64_t ok = vkp__batch_offset(kt, brank, idx, 2);
    int64_t ov = vkp__batch_offset(v, brank, idx, 2);
    int64_t om = 0, oc = 0;
    for (int32_t i = 0; i < brank; ++i) om += idx[i] * ms[i], oc += idx[i] * cs[i];
    for (int64_t i = 0; i < lq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < lk; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < d; ++k)
          acc += vkp__get_f(q, oq + i * d + k) * vkp__get_f(kt, ok + k * lk + j);
        acc *= scale;
        if (c && (vkp__get_f(c, oc + i * cs[brank] + j * cs[brank + 1]) != 0) ==
                     fill_where)
          acc = fill;
        if (m) acc += vkp__get_f(m, om + i * ms[brank] + j * ms[brank + 1]);
        s[j] = acc;
        if (acc > mx) mx = acc;
      }
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) {
        s[j] = exp(s[j] - mx);
        sum += s[j];
      }
      for (int64_t e = 0; e < dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j) acc += s[j] * vkp__get_f(v, ov + j * dv + e);
        vkp__put_f(out, (b * lq + i) * dv + e, acc / sum);
      }
    }
    vkp__next_index(brank, out->shape, idx);
  }
  vkp__free(s);
  return NULL;
}
