// SPDX-License-Identifier: Apache-2.0
// Linear algebra: matmul (NumPy semantics) and gemm.
#include <string.h>

#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_gemm[] = {
    VKP__ATTR_FLOAT("alpha", 1.0), VKP__ATTR_FLOAT("beta", 1.0),
    VKP__ATTR_INT("transA", 0), VKP__ATTR_INT("transB", 0), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

vkp_status_t vkp__infer_matmul(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  if (a->rank < 1 || b->rank < 1)
    return VKP__ERR("matmul inputs need rank >= 1 (got %d and %d)", (int)a->rank,
                    (int)b->rank);
  int64_t k_a = a->shape[a->rank - 1];
  int64_t k_b = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
  if (k_a != k_b) {
    char sa[128], sb[128];
    return VKP__ERR("inner dimensions %lld and %lld differ (%s x %s)",
                    (long long)k_a, (long long)k_b, vkp__fmt(a, sa, sizeof sa),
                    vkp__fmt(b, sb, sizeof sb));
  }
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch = ba > bb ? ba : bb;
  int64_t shape[VKP_MAX_RANK + 2];
  int32_t rank = 0;
  for (int32_t i = 0; i < batch; ++i) {
    int32_t ia = i - (batch - ba), ib = i - (batch - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return VKP__ERR("batch dimensions %lld and %lld do not broadcast",
                      (long long)da, (long long)db);
    shape[rank++] = da == 1 ? db : da;
  }
  if (a->rank >= 2) shape[rank++] = a->shape[a->rank - 2];
  if (b->rank >= 2) shape[rank++] = b->shape[b->rank - 1];
  if (rank > VKP_MAX_RANK) return VKP__ERR("result rank exceeds %d", VKP_MAX_RANK);
  vkp__set_out(out, a->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_gemm(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1),
                    *c = vkp__in(g, n, 2);
  int64_t ta = vkp_node_int(n, "transA"), tb = vkp_node_int(n, "transB");
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    return VKP__ERR("transA/transB must be 0 or 1");
  VKP_RETURN_IF_ERROR(vkp__same_dtype(a, b));
  if (a->rank != 2 || b->rank != 2)
    return VKP__ERR("gemm inputs A and B must be 2-D (got rank %d and %d)",
                    (int)a->rank, (int)b->rank);
  int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], nn = tb ? b->shape[0] : b->shape[1];
  if (k != kb)
    return VKP__ERR("inner dimensions %lld and %lld differ", (long long)k,
                    (long long)kb);
  if (c) {
    VKP_RETURN_IF_ERROR(vkp__same_dtype(a, c));
    int64_t target[2] = {m, nn};
    if (c->rank > 2) return VKP__ERR("C has rank %d; at most 2", (int)c->rank);
    for (int32_t i = 0; i < c->rank; ++i) {
      int64_t d = c->shape[i], t = target[2 - c->rank + i];
      if (d != 1 && d != t) {
        char sc[128];
        return VKP__ERR("C %s does not broadcast to [%lld, %lld]",
                        vkp__fmt(c, sc, sizeof sc), (long long)m, (long long)nn);
      }
    }
  }
  int64_t shape[2] = {m, nn};
  vkp__set_out(out, a->dtype, 2, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

vkp_status_t vkp__eval_matmul(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *a = in[0], *b = in[1];
  // 1-D promotion: a [K] is [1, K], b [K] is [K, 1]; the unit dim is dropped
  // from the result, which inference already did.
  int64_t m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
  int64_t k = a->shape[a->rank - 1];
  int64_t nn = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch_rank = ba > bb ? ba : bb;
  int64_t batch_shape[VKP_MAX_RANK], sa[VKP_MAX_RANK], sb[VKP_MAX_RANK];
  for (int32_t d = 0; d < batch_rank; ++d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    batch_shape[d] = da == 1 ? db : da;
  }
  // Batch strides in units of whole matrices, 0 where broadcast.
  int64_t stride_a = 1, stride_b = 1;
  for (int32_t d = batch_rank - 1; d >= 0; --d) {
    int32_t ia = d - (batch_rank - ba), ib = d - (batch_rank - bb);
    sa[d] = (ia < 0 || a->shape[ia] == 1) ? 0 : stride_a;
    sb[d] = (ib < 0 || b->shape[ib] == 1) ? 0 : stride_b;
    if (ia >= 0) stride_a *= a->shape[ia];
    if (ib >= 0) stride_b *= b->shape[ib];
  }
  int64_t batches = vkp__prod(batch_shape, 0, batch_rank);
  int64_t idx[VKP_MAX_RANK] = {0};
  bool f32 = a->dtype == VKP_DTYPE_FLOAT32 && b->dtype == VKP_DTYPE_FLOAT32;
#define VKP__MATMUL_LOOP(LOAD)                                           \
  for (int64_t t = 0; t < batches; ++t) {                                \
    int64_t oa = vkp__dot(batch_rank, idx, sa) * m * k;                  \
    int64_t ob = vkp__dot(batch_rank, idx, sb) * k * nn;                 \
    int64_t oy = t * m * nn;                                             \
    for (int64_t i = 0; i < m; ++i)                                      \
      for (int64_t j = 0; j < nn; ++j) {                                 \
        double acc = 0;                                                  \
        for (int64_t p = 0; p < k; ++p)                                  \
          acc += LOAD(a, oa + i * k + p) * LOAD(b, ob + p * nn + j);     \
        vkp__put_f(out, oy + i * nn + j, acc);                           \
      }                                                                  \
    vkp__next_index(batch_rank, batch_shape, idx);                       \
  }
  VKP__F32_OR_ANY(f32, VKP__MATMUL_LOOP);
#undef VKP__MATMUL_LOOP
  return NULL;
}

vkp_status_t vkp__eval_gemm(const vkp_node_t *n, const vkp_tensor_t *const *in,
                            vkp_tensor_t *out) {
  const vkp_tensor_t *a = in[0], *b = in[1], *c = n->n_inputs > 2 ? in[2] : NULL;
  double alpha = vkp_node_float(n, "alpha"), beta = vkp_node_float(n, "beta");
  bool ta = vkp_node_int(n, "transA") != 0, tb = vkp_node_int(n, "transB") != 0;
  int64_t m = out->shape[0], nn = out->shape[1];
  int64_t k = ta ? a->shape[0] : a->shape[1];
  // Element (i, p) of op(A) and (p, j) of op(B), row-major storage.
  int64_t a_row = ta ? 1 : k, a_col = ta ? m : 1;
  int64_t b_row = tb ? 1 : nn, b_col = tb ? k : 1;
  int64_t sc[2] = {0, 0};
  if (c) vkp__broadcast_strides(c, 2, sc);
  bool f32 = a->dtype == VKP_DTYPE_FLOAT32 && b->dtype == VKP_DTYPE_FLOAT32;
#define VKP__GEMM_LOOP(LOAD)                                                   \
  for (int64_t i = 0; i < m; ++i)                                              \
    for (int64_t j = 0; j < nn; ++j) {                                         \
      double acc = 0;                                                          \
      for (int64_t p = 0; p < k; ++p)                                          \
        acc += LOAD(a, i * a_row + p * a_col) * LOAD(b, p * b_row + j * b_col); \
      double y = alpha * acc;                                                  \
      if (c) y += beta * vkp__get_f(c, i * sc[0] + j * sc[1]);                 \
      vkp__put_f(out, i * nn + j, y);                                          \
    }
  VKP__F32_OR_ANY(f32, VKP__GEMM_LOOP);
#undef VKP__GEMM_LOOP
  return NULL;
}
