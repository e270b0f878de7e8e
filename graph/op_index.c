// SPDX-License-Identifier: Apache-2.0
// Indexing with indices known only at run time: gather (embeddings, position
// ids), gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot.
// Indices are int32 or int64 (one_hot: any number), negative ones count
// from the end of their axis; an index out of range is an OUT_OF_RANGE
// error naming the node, the index and the range, never a read or write
// out of bounds. Data of any dtype moves as bytes. Schemas, inference and
// reference kernels.
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas

const vkp__attr_spec_t vkp__attrs_gather[] = {VKP__ATTR_INT("axis", 0),
                                              VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_gather_nd[] = {VKP__ATTR_INT("batch_dims", 0),
                                                 VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_scatter_elements[] = {
    VKP__ATTR_INT("axis", 0), VKP__ATTR_STRING("reduction", "none"), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_scatter_nd[] = {
    VKP__ATTR_STRING("reduction", "none"), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_one_hot[] = {
    VKP__ATTR("depth", INT), VKP__ATTR_INT("axis", -1), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_reverse_sequence[] = {
    VKP__ATTR_INT("batch_axis", 1), VKP__ATTR_INT("time_axis", 0), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

static vkp_status_t vkp__need_indices(const vkp_value_t *v, const char *what) {
  if (v->dtype == VKP_DTYPE_INT32 || v->dtype == VKP_DTYPE_INT64) return NULL;
  return VKP__ERR("%s '%s' is %s; int32 or int64", what, v->name,
                  vkp_dtype_name(v->dtype));
}

// gather: data[:axis] + indices.shape + data[axis + 1:].
vkp_status_t vkp__infer_gather(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__need_indices(idx, "indices"));
  if (x->rank < 1) return VKP__ERR("data '%s' is a scalar", x->name);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false,
                                     "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int32_t rank = x->rank - 1 + idx->rank;
  if (rank > VKP_MAX_RANK)
    return VKP__ERR("result rank %d exceeds %d", (int)rank, VKP_MAX_RANK);
  int64_t shape[VKP_MAX_RANK];
  int32_t r = 0;
  for (int32_t d = 0; d < axis; ++d) shape[r++] = x->shape[d];
  for (int32_t d = 0; d < idx->rank; ++d) shape[r++] = idx->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) shape[r++] = x->shape[d];
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

// gather_elements: indices' shape; same rank as data, and no larger than
// data on any axis but `axis` (so every position names an element).
vkp_status_t vkp__infer_gather_elements(vkp_graph_t *g, vkp_node_t *n,
                                        vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__need_indices(idx, "indices"));
  if (x->rank < 1) return VKP__ERR("data '%s' is a scalar", x->name);
  if (idx->rank != x->rank)
    return VKP__ERR("indices '%s' have rank %d; data '%s' rank %d", idx->name,
                    (int)idx->rank, x->name, (int)x->rank);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false,
                                     "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  for (int32_t d = 0; d < x->rank; ++d)
    if (d != axis && idx->shape[d] > x->shape[d])
      return VKP__ERR("indices '%s' have %lld in dim %d; data '%s' only %lld",
                      idx->name, (long long)idx->shape[d], (int)d, x->name,
                      (long long)x->shape[d]);
  vkp__set_out(out, x->dtype, idx->rank, idx->shape);
  return NULL;
}

// Checks gather_nd / scatter_nd operands: indices [b..., q..., k] address
// data [b..., k dims, rest...]; *out_k gets k.
static vkp_status_t vkp__nd_check(const vkp_value_t *x, const vkp_value_t *idx,
                                  int64_t batch, int64_t *out_k) {
  VKP_RETURN_IF_ERROR(vkp__need_indices(idx, "indices"));
  if (idx->rank < 1) return VKP__ERR("indices '%s' are a scalar", idx->name);
  if (batch < 0 || batch >= idx->rank || batch > x->rank)
    return VKP__ERR("batch_dims %lld for indices of rank %d and data of rank %d",
                    (long long)batch, (int)idx->rank, (int)x->rank);
  for (int32_t d = 0; d < batch; ++d)
    if (idx->shape[d] != x->shape[d])
      return VKP__ERR("batch dim %d: indices '%s' have %lld, data '%s' %lld", (int)d,
                      idx->name, (long long)idx->shape[d], x->name,
                      (long long)x->shape[d]);
  int64_t k = idx->shape[idx->rank - 1];
  if (k < 1 || k > x->rank - batch)
    return VKP__ERR("index tuples of %lld entries for data '%s' of rank %d (batch "
                    "dims %lld)",
                    (long long)k, x->name, (int)x->rank, (long long)batch);
  *out_k = k;
  return NULL;
}

// gather_nd: indices.shape[:-1] + data.shape[batch_dims + k:].
vkp_status_t vkp__infer_gather_nd(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1);
  int64_t batch = vkp_node_int(n, "batch_dims"), k = 0;
  VKP_RETURN_IF_ERROR(vkp__nd_check(x, idx, batch, &k));
  int32_t rank = idx->rank - 1 + x->rank - (int32_t)(batch + k);
  if (rank > VKP_MAX_RANK)
    return VKP__ERR("result rank %d exceeds %d", (int)rank, VKP_MAX_RANK);
  int64_t shape[VKP_MAX_RANK];
  int32_t r = 0;
  for (int32_t d = 0; d < idx->rank - 1; ++d) shape[r++] = idx->shape[d];
  for (int32_t d = (int32_t)(batch + k); d < x->rank; ++d) shape[r++] = x->shape[d];
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

static vkp_status_t vkp__check_reduction(const vkp_node_t *n, const vkp_value_t *x) {
  const char *r = vkp_node_string(n, "reduction");
  static const char *const known[] = {"none", "add", "mul", "max", "min"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
    if (strcmp(r, known[i]) == 0) {
      if (i > 0 && x->dtype == VKP_DTYPE_BOOL)
        return VKP__ERR("reduction '%s' on bool data '%s'", r, x->name);
      return NULL;
    }
  return VKP__ERR("attribute 'reduction' is '%s'; expected none, add, mul, max or min",
                  r);
}

// scatter_elements: data's shape; updates shaped like indices, which have
// data's rank and fit inside it on every axis but `axis`.
vkp_status_t vkp__infer_scatter_elements(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1),
                    *upd = vkp__in(g, n, 2);
  VKP_RETURN_IF_ERROR(vkp__infer_gather_elements(g, n, out));
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, upd));
  VKP_RETURN_IF_ERROR(vkp__check_reduction(n, x));
  bool same = upd->rank == idx->rank;
  for (int32_t d = 0; same && d < idx->rank; ++d) same = upd->shape[d] == idx->shape[d];
  if (!same) {
    char a[128], b[128];
    return VKP__ERR("updates '%s' %s differ from indices '%s' %s", upd->name,
                    vkp__fmt(upd, a, sizeof a), idx->name, vkp__fmt(idx, b, sizeof b));
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// scatter_nd: data's shape; updates are indices.shape[:-1] + data.shape[k:].
vkp_status_t vkp__infer_scatter_nd(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *idx = vkp__in(g, n, 1),
                    *upd = vkp__in(g, n, 2);
  int64_t k = 0;
  VKP_RETURN_IF_ERROR(vkp__nd_check(x, idx, 0, &k));
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, upd));
  VKP_RETURN_IF_ERROR(vkp__check_reduction(n, x));
  int32_t rank = idx->rank - 1 + x->rank - (int32_t)k;
  bool same = upd->rank == rank;
  for (int32_t d = 0; same && d < idx->rank - 1; ++d) same = upd->shape[d] == idx->shape[d];
  for (int32_t d = (int32_t)k; same && d < x->rank; ++d)
    same = upd->shape[idx->rank - 1 + d - k] == x->shape[d];
  if (!same) {
    char a[128], b[128], c[128];
    return VKP__ERR("updates '%s' %s do not fit indices '%s' %s into data '%s' %s",
                    upd->name, vkp__fmt(upd, a, sizeof a), idx->name,
                    vkp__fmt(idx, b, sizeof b), x->name, vkp__fmt(x, c, sizeof c));
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// one_hot(indices, values [off, on]): indices' shape with a new axis of
// `depth` entries at `axis`; values' dtype.
vkp_status_t vkp__infer_one_hot(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *idx = vkp__in(g, n, 0), *values = vkp__in(g, n, 1);
  if (!vkp_node_attr(n, "depth")) return VKP__ERR("attribute 'depth' is required");
  int64_t depth = vkp_node_int(n, "depth");
  if (depth < 1) return VKP__ERR("depth is %lld; at least 1", (long long)depth);
  if (values->rank != 1 || values->shape[0] != 2)
    return VKP__ERR("values '%s' must be [off_value, on_value]", values->name);
  int32_t rank = idx->rank + 1;
  if (rank > VKP_MAX_RANK)
    return VKP__ERR("result rank %d exceeds %d", (int)rank, VKP_MAX_RANK);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), rank, false, "axis",
                                     &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0, j = 0; d < rank; ++d)
    shape[d] = d == axis ? depth : idx->shape[j++];
  vkp__set_out(out, values->dtype, rank, shape);
  return NULL;
}

// reverse_sequence: x [time, batch, ...] or [batch, time, ...] (the axes 0
// and 1 in either order), sequence_lens int64 [batch]; the result has x's
// shape.
vkp_status_t vkp__infer_reverse_sequence(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *lens = vkp__in(g, n, 1);
  int64_t b = vkp_node_int(n, "batch_axis"), t = vkp_node_int(n, "time_axis");
  if (x->rank < 2) return VKP__ERR("input '%s' has rank %d; at least 2", x->name, (int)x->rank);
  if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
    return VKP__ERR("batch_axis %lld and time_axis %lld must be 0 and 1, in "
                    "either order",
                    (long long)b, (long long)t);
  if (lens->dtype != VKP_DTYPE_INT64)
    return VKP__ERR("sequence_lens '%s' is %s; int64", lens->name,
                    vkp_dtype_name(lens->dtype));
  if (lens->rank != 1 || lens->shape[0] != x->shape[b])
    return VKP__ERR("sequence_lens '%s' must be [%lld] (the batch axis)", lens->name,
                    (long long)x->shape[b]);
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

// Index i of `idx` made non-negative against `dim`, or an OUT_OF_RANGE
// error naming the node.
static vkp_status_t vkp__index(const vkp_node_t *n, const vkp_tensor_t *idx,
                               int64_t i, int64_t dim, int64_t axis, int64_t *out) {
  int64_t k = vkp__get_i(idx, i);
  if (k < -dim || k >= dim)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "node '%s' (%s): index %lld at position %lld is outside "
                           "[%lld, %lld) (axis %lld)",
                           n->name, vkp_op_name(n->op), (long long)k, (long long)i,
                           (long long)-dim, (long long)dim, (long long)axis);
  *out = k < 0 ? k + dim : k;
  return NULL;
}

vkp_status_t vkp__eval_gather(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  size_t es = vkp_dtype_size(x->dtype);
  int64_t outer = vkp__prod(x->shape, 0, axis), dim = x->shape[axis];
  int64_t inner = vkp__prod(x->shape, axis + 1, x->rank);
  int64_t count = (int64_t)vkp_tensor_numel(idx);
  size_t row = (size_t)inner * es;
  for (int64_t j = 0; j < count; ++j) {
    int64_t k = 0;
    VKP_RETURN_IF_ERROR(vkp__index(n, idx, j, dim, axis, &k));
    for (int64_t o = 0; o < outer && row; ++o)
      memcpy((char *)out->data + (size_t)(o * count + j) * row,
             (const char *)x->data + (size_t)(o * dim + k) * row, row);
  }
  return NULL;
}

vkp_status_t vkp__eval_gather_elements(const vkp_node_t *n,
                                       const vkp_tensor_t *const *in,
                                       vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  int64_t strides[VKP_MAX_RANK], pos[VKP_MAX_RANK] = {0};
  vkp__strides(x, strides);
  int64_t count = (int64_t)vkp_tensor_numel(out);
  for (int64_t i = 0; i < count; ++i) {
    int64_t k = 0;
    VKP_RETURN_IF_ERROR(vkp__index(n, idx, i, x->shape[axis], axis, &k));
    int64_t at = vkp__dot(x->rank, pos, strides) + (k - pos[axis]) * strides[axis];
    vkp__copy_elem(out, i, x, at);
    vkp__next_index(idx->rank, idx->shape, pos);
  }
  return NULL;
}

// The data offset (within one batch) of index tuple `t` of an nd op:
// entries t*k .. t*k+k-1 of idx address data dims first.. first+k-1.
static vkp_status_t vkp__nd_offset(const vkp_node_t *n, const vkp_tensor_t *x,
                                   const vkp_tensor_t *idx, int64_t t, int64_t k,
                                   int32_t first, const int64_t *strides,
                                   int64_t *out) {
  int64_t at = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t c = 0;
    int32_t d = first + (int32_t)j;
    VKP_RETURN_IF_ERROR(vkp__index(n, idx, t * k + j, x->shape[d], d, &c));
    at += c * strides[d];
  }
  *out = at;
  return NULL;
}

vkp_status_t vkp__eval_gather_nd(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                 vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1];
  int32_t batch = (int32_t)vkp_node_int(n, "batch_dims");
  int64_t k = idx->shape[idx->rank - 1];
  int64_t strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  int64_t n_batch = vkp__prod(x->shape, 0, batch);
  int64_t per_batch = vkp__prod(idx->shape, batch, idx->rank - 1);
  int64_t slice = vkp__prod(x->shape, batch + (int32_t)k, x->rank);
  int64_t batch_stride = vkp__prod(x->shape, batch, x->rank);
  size_t es = vkp_dtype_size(x->dtype);
  for (int64_t b = 0; b < n_batch; ++b)
    for (int64_t t = 0; t < per_batch; ++t) {
      int64_t at;
      VKP_RETURN_IF_ERROR(
          vkp__nd_offset(n, x, idx, b * per_batch + t, k, batch, strides, &at));
      if (slice)
        memcpy((char *)out->data + (size_t)((b * per_batch + t) * slice) * es,
               (const char *)x->data + (size_t)(b * batch_stride + at) * es,
               (size_t)slice * es);
    }
  return NULL;
}

// out[at] = out[at] <reduction> upd[from]: integers wrap, floats in double;
// max/min keep the current value unless the update is strictly larger /
// smaller (so a NaN update changes nothing).
static void vkp__scatter_one(vkp_tensor_t *out, int64_t at, const vkp_tensor_t *upd,
                             int64_t from, const char *reduction) {
  if (strcmp(reduction, "none") == 0) {
    vkp__copy_elem(out, at, upd, from);
    return;
  }
  if (strcmp(reduction, "max") == 0 || strcmp(reduction, "min") == 0) {
    int c = vkp__compare_elems(upd, from, out, at);
    if (c == (reduction[1] == 'a' ? 1 : -1)) vkp__copy_elem(out, at, upd, from);
    return;
  }
  bool add = strcmp(reduction, "add") == 0;
  if (vkp_dtype_is_float(out->dtype)) {
    double a = vkp__get_f(out, at), b = vkp__get_f(upd, from);
    vkp__put_f(out, at, add ? a + b : a * b);
  } else {
    uint64_t a = (uint64_t)vkp__get_i(out, at), b = (uint64_t)vkp__get_i(upd, from);
    vkp__put_i(out, at, (int64_t)(add ? a + b : a * b));
  }
}

vkp_status_t vkp__eval_scatter_elements(const vkp_node_t *n,
                                        const vkp_tensor_t *const *in,
                                        vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1], *upd = in[2];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  const char *reduction = vkp_node_string(n, "reduction");
  if (vkp_tensor_nbytes(out)) memcpy(out->data, x->data, vkp_tensor_nbytes(out));
  int64_t strides[VKP_MAX_RANK], pos[VKP_MAX_RANK] = {0};
  vkp__strides(x, strides);
  int64_t count = (int64_t)vkp_tensor_numel(idx);
  for (int64_t i = 0; i < count; ++i) {
    int64_t k = 0;
    VKP_RETURN_IF_ERROR(vkp__index(n, idx, i, x->shape[axis], axis, &k));
    int64_t at = vkp__dot(x->rank, pos, strides) + (k - pos[axis]) * strides[axis];
    vkp__scatter_one(out, at, upd, i, reduction);
    vkp__next_index(idx->rank, idx->shape, pos);
  }
  return NULL;
}

vkp_status_t vkp__eval_scatter_nd(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                  vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *idx = in[1], *upd = in[2];
  const char *reduction = vkp_node_string(n, "reduction");
  if (vkp_tensor_nbytes(out)) memcpy(out->data, x->data, vkp_tensor_nbytes(out));
  int64_t k = idx->shape[idx->rank - 1];
  int64_t strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  int64_t tuples = vkp__prod(idx->shape, 0, idx->rank - 1);
  int64_t slice = vkp__prod(x->shape, (int32_t)k, x->rank);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at;
    VKP_RETURN_IF_ERROR(vkp__nd_offset(n, x, idx, t, k, 0, strides, &at));
    for (int64_t e = 0; e < slice; ++e)
      vkp__scatter_one(out, at + e, upd, t * slice + e, reduction);
  }
  return NULL;
}

// An index outside [-depth, depth) gives a row of off values (ONNX).
vkp_status_t vkp__eval_one_hot(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *idx = in[0], *values = in[1];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  int64_t depth = vkp_node_int(n, "depth");
  int64_t outer = vkp__prod(out->shape, 0, axis);
  int64_t inner = vkp__prod(out->shape, axis + 1, out->rank);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t k = vkp__get_i(idx, o * inner + i);
      if (k < 0) k += depth;
      for (int64_t d = 0; d < depth; ++d)
        vkp__copy_elem(out, (o * depth + d) * inner + i, values, d == k ? 1 : 0);
    }
  return NULL;
}

// reverse_sequence: for each batch entry b, the first sequence_lens[b] time
// steps reversed, the rest copied; a length outside [0, time] is an
// OUT_OF_RANGE error naming the node.
vkp_status_t vkp__eval_reverse_sequence(const vkp_node_t *n,
                                        const vkp_tensor_t *const *in,
                                        vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *lens = in[1];
  int64_t baxis = vkp_node_int(n, "batch_axis"), taxis = vkp_node_int(n, "time_axis");
  int64_t batch = x->shape[baxis], time = x->shape[taxis];
  int64_t inner = vkp__prod(x->shape, 2, x->rank);
  // Strides (in elements) of the batch and time axes.
  int64_t bs = baxis == 0 ? time * inner : inner, ts = taxis == 0 ? batch * inner : inner;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = vkp__get_i(lens, b);
    if (len < 0 || len > time)
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "node '%s' (%s): sequence_lens[%lld] is %lld; outside "
                             "[0, %lld]",
                             n->name, vkp_op_name(n->op), (long long)b, (long long)len,
                             (long long)time);
    for (int64_t t = 0; t < time; ++t) {
      int64_t src = t < len ? len - 1 - t : t;
      for (int64_t i = 0; i < inner; ++i)
        vkp__copy_elem(out, b * bs + t * ts + i, x, b * bs + src * ts + i);
    }
  }
  return NULL;
}
