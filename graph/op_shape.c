// SPDX-License-Identifier: Apache-2.0
// Data movement: the reshape family (views), transpose, concat, slice. Any
// dtype: elements are moved as bytes.
#include <string.h>

#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// Schemas

const vkp__attr_spec_t vkp__attrs_reshape[] = {VKP__ATTR("shape", INTS),
                                               VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_flatten[] = {VKP__ATTR_INT("axis", 1),
                                               VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_transpose[] = {VKP__ATTR("perm", INTS),
                                                 VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_concat[] = {VKP__ATTR("axis", INT),
                                              VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_slice[] = {
    VKP__ATTR("starts", INTS), VKP__ATTR("ends", INTS), VKP__ATTR("axes", INTS),
    VKP__ATTR("steps", INTS), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_squeeze[] = {VKP__ATTR("axes", INTS),
                                               VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_unsqueeze[] = {VKP__ATTR("axes", INTS),
                                                 VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Inference

vkp_status_t vkp__infer_reshape(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *spec;
  int32_t count = vkp_node_attr_ints(n, "shape", &spec);
  if (!vkp_node_attr(n, "shape")) return VKP__ERR("attribute 'shape' is required");
  if (count > VKP_MAX_RANK) return VKP__ERR("target rank %d exceeds %d", (int)count, VKP_MAX_RANK);
  int64_t shape[VKP_MAX_RANK];
  int32_t infer_at = -1;
  size_t known = 1, total = 1;
  for (int32_t i = 0; i < x->rank; ++i) total *= (size_t)x->shape[i];
  for (int32_t i = 0; i < count; ++i) {
    int64_t d = spec[i];
    if (d == 0) {
      if (i >= x->rank)
        return VKP__ERR("shape entry %d is 0 (copy) but the input has rank %d",
                        (int)i, (int)x->rank);
      d = x->shape[i];
    } else if (d == -1) {
      if (infer_at >= 0) return VKP__ERR("shape has more than one -1");
      infer_at = i;
      shape[i] = -1;
      continue;
    } else if (d < -1) {
      return VKP__ERR("shape entry %d is %lld", (int)i, (long long)d);
    }
    shape[i] = d;
    known *= (size_t)d;
  }
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return VKP__ERR("cannot infer the -1 entry: %zu elements into blocks of %zu",
                      total, known);
    shape[infer_at] = (int64_t)(total / known);
    known = total;
  }
  if (known != total) {
    char sx[128];
    return VKP__ERR("cannot reshape %s (%zu elements) to %zu elements",
                    vkp__fmt(x, sx, sizeof sx), total, known);
  }
  vkp__set_out(out, x->dtype, count, shape);
  return NULL;
}

vkp_status_t vkp__infer_flatten(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank,
                                     true, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t shape[2] = {1, 1};
  for (int32_t i = 0; i < x->rank; ++i) shape[i < axis ? 0 : 1] *= x->shape[i];
  vkp__set_out(out, x->dtype, 2, shape);
  return NULL;
}

vkp_status_t vkp__infer_transpose(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *perm;
  int32_t count = vkp_node_attr_ints(n, "perm", &perm);
  int64_t p[VKP_MAX_RANK];
  if (!vkp_node_attr(n, "perm")) {
    count = x->rank;
    for (int32_t i = 0; i < count; ++i) p[i] = x->rank - 1 - i;
    VKP_RETURN_IF_ERROR(vkp__set_ints(n, "perm", count, p));
  } else {
    if (count != x->rank)
      return VKP__ERR("attribute 'perm' has %d entries for rank %d", (int)count,
                      (int)x->rank);
    bool used[VKP_MAX_RANK] = {false};
    for (int32_t i = 0; i < count; ++i) {
      if (perm[i] < 0 || perm[i] >= x->rank || used[perm[i]])
        return VKP__ERR("attribute 'perm' is not a permutation of 0..%d",
                        (int)x->rank - 1);
      used[perm[i]] = true;
      p[i] = perm[i];
    }
  }
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < count; ++i) shape[i] = x->shape[p[i]];
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_concat(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (!vkp_node_attr(n, "axis")) return VKP__ERR("attribute 'axis' is required");
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < x->rank; ++i) shape[i] = x->shape[i];
  shape[axis] = 0;
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) return VKP__ERR("input %d is missing", (int)i);
    if (v->dtype != x->dtype || v->rank != x->rank)
      return VKP__ERR("input %d '%s' (%s, rank %d) differs from input 0 (%s, "
                      "rank %d)",
                      (int)i, v->name, vkp_dtype_name(v->dtype), (int)v->rank,
                      vkp_dtype_name(x->dtype), (int)x->rank);
    for (int32_t d = 0; d < x->rank; ++d)
      if (d != axis && v->shape[d] != x->shape[d])
        return VKP__ERR("input %d '%s' has %lld in dim %d, input 0 has %lld",
                        (int)i, v->name, (long long)v->shape[d], (int)d,
                        (long long)x->shape[d]);
    shape[axis] += v->shape[axis];
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// Canonical form: axes = 0..rank-1, with starts clamped into range and ends
// chosen so that the element count is (ends - starts) / steps rounded up.
vkp_status_t vkp__infer_slice(vkp_graph_t *g, vkp_node_t *n,
                                     vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *starts, *ends, *axes, *steps;
  int32_t ns = vkp_node_attr_ints(n, "starts", &starts);
  int32_t ne = vkp_node_attr_ints(n, "ends", &ends);
  if (!vkp_node_attr(n, "starts") || !vkp_node_attr(n, "ends"))
    return VKP__ERR("attributes 'starts' and 'ends' are required");
  if (ns != ne) return VKP__ERR("'starts' has %d entries, 'ends' %d", (int)ns, (int)ne);
  int32_t na = vkp_node_attr_ints(n, "axes", &axes);
  int32_t nst = vkp_node_attr_ints(n, "steps", &steps);
  if (vkp_node_attr(n, "axes") && na != ns)
    return VKP__ERR("'axes' has %d entries, 'starts' %d", (int)na, (int)ns);
  if (vkp_node_attr(n, "steps") && nst != ns)
    return VKP__ERR("'steps' has %d entries, 'starts' %d", (int)nst, (int)ns);
  if (ns > x->rank) return VKP__ERR("%d slice entries for rank %d", (int)ns, (int)x->rank);
  int64_t cs[VKP_MAX_RANK], ce[VKP_MAX_RANK], cst[VKP_MAX_RANK], ca[VKP_MAX_RANK];
  bool set[VKP_MAX_RANK] = {false};
  for (int32_t d = 0; d < x->rank; ++d) {
    cs[d] = 0;
    ce[d] = x->shape[d];
    cst[d] = 1;
    ca[d] = d;
  }
  for (int32_t i = 0; i < ns; ++i) {
    int64_t axis = i;
    if (na) VKP_RETURN_IF_ERROR(vkp__norm_axis(axes[i], x->rank, false, "axis", &axis));
    if (set[axis]) return VKP__ERR("axis %lld sliced twice", (long long)axis);
    set[axis] = true;
    int64_t step = nst ? steps[i] : 1;
    if (step == 0) return VKP__ERR("step for axis %lld is 0", (long long)axis);
    int64_t dim = x->shape[axis], s = starts[i], e = ends[i];
    // Along a data-dependent axis dim is only a bound: what counts from the
    // end, or backwards, would need the run-time extent.
    if (x->bounded && axis == x->bounded_axis && (s < 0 || e < 0 || step < 0)) {
      char sx[160];
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "input 0 '%s' has a data-dependent shape %s (its "
                             "extent along axis %lld is known only at run "
                             "time); slice with start %lld, end %lld, step %lld "
                             "counts from its end or backwards there (only "
                             "forward slices with non-negative start and end "
                             "take one)",
                             x->name, vkp__fmt_bounded(x, sx, sizeof sx),
                             (long long)axis, (long long)s, (long long)e,
                             (long long)step);
    }
    int64_t reach = dim > 0 ? dim : 1;
    if (step > reach) step = reach;
    if (step < -reach) step = -reach;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = s < 0 ? 0 : (s > dim ? dim : s);
      e = e < 0 ? 0 : (e > dim ? dim : e);
    } else {
      s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
      e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
    }
    cs[axis] = s;
    ce[axis] = e;
    cst[axis] = step;
  }
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0; d < x->rank; ++d) {
    int64_t len = cst[d] > 0 ? (ce[d] - cs[d] + cst[d] - 1) / cst[d]
                             : (cs[d] - ce[d] + (-cst[d]) - 1) / (-cst[d]);
    shape[d] = len > 0 ? len : 0;
    if (shape[d] == 0) {  // keep canonical values tidy for empty slices
      cs[d] = 0;
      ce[d] = 0;
      cst[d] = 1;
    }
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "starts", x->rank, cs));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "ends", x->rank, ce));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "steps", x->rank, cst));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", x->rank, ca));
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_squeeze(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  if (count == 0) {
    for (int32_t d = 0; d < x->rank; ++d)
      if (x->shape[d] == 1) norm[count++] = d;
  } else {
    VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
    for (int32_t i = 0; i < count; ++i)
      if (x->shape[norm[i]] != 1)
        return VKP__ERR("cannot squeeze axis %lld of size %lld",
                        (long long)norm[i], (long long)x->shape[norm[i]]);
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    if (j < count && norm[j] == d) {
      ++j;
      continue;
    }
    shape[rank++] = x->shape[d];
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

vkp_status_t vkp__infer_unsqueeze(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  if (count == 0) return VKP__ERR("attribute 'axes' is required and non-empty");
  int32_t rank = x->rank + count;
  if (rank > VKP_MAX_RANK) return VKP__ERR("result rank %d exceeds %d", (int)rank, VKP_MAX_RANK);
  int64_t norm[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, rank, norm));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0, j = 0, k = 0; d < rank; ++d) {
    if (j < count && norm[j] == d) {
      shape[d] = 1;
      ++j;
    } else {
      shape[d] = x->shape[k++];
    }
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernels

vkp_status_t vkp__eval_copy(const vkp_node_t *n, const vkp_tensor_t *const *in,
                              vkp_tensor_t *out) {
  // identity, reshape, flatten, squeeze, unsqueeze: same bytes, new shape.
  size_t bytes = vkp_tensor_nbytes(out);
  if (bytes != vkp_tensor_nbytes(in[0]))
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "node '%s' (%s): output has %zu bytes, input %zu",
                           n->name, vkp_op_name(n->op), bytes,
                           vkp_tensor_nbytes(in[0]));
  if (bytes) memcpy(out->data, in[0]->data, bytes);
  return NULL;
}

vkp_status_t vkp__eval_transpose(const vkp_node_t *n,
                                   const vkp_tensor_t *const *in,
                                   vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *perm;
  vkp_node_attr_ints(n, "perm", &perm);
  int64_t in_strides[VKP_MAX_RANK], src_strides[VKP_MAX_RANK];
  vkp__strides(x, in_strides);
  for (int32_t d = 0; d < out->rank; ++d) src_strides[d] = in_strides[perm[d]];
  size_t es = vkp_dtype_size(x->dtype);
  int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
  const char *src = x->data;
  char *dst = out->data;
  for (int64_t i = 0; i < count; ++i) {
    memcpy(dst + (size_t)i * es,
           src + (size_t)vkp__dot(out->rank, idx, src_strides) * es, es);
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

vkp_status_t vkp__eval_concat(const vkp_node_t *n, const vkp_tensor_t *const *in,
                                vkp_tensor_t *out) {
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  size_t es = vkp_dtype_size(out->dtype);
  int64_t outer = vkp__prod(out->shape, 0, axis);
  int64_t inner = vkp__prod(out->shape, axis + 1, out->rank);
  size_t out_row = (size_t)(out->shape[axis] * inner) * es;
  size_t at = 0;  // byte offset of the current input's block inside a row
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_tensor_t *x = in[i];
    size_t row = (size_t)(x->shape[axis] * inner) * es;
    for (int64_t o = 0; o < outer && row; ++o)
      memcpy((char *)out->data + (size_t)o * out_row + at,
             (const char *)x->data + (size_t)o * row, row);
    at += row;
  }
  return NULL;
}

vkp_status_t vkp__eval_slice(const vkp_node_t *n, const vkp_tensor_t *const *in,
                               vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0];
  const int64_t *starts, *steps;  // canonical: one entry per dim
  vkp_node_attr_ints(n, "starts", &starts);
  vkp_node_attr_ints(n, "steps", &steps);
  int64_t strides[VKP_MAX_RANK], src_strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  int64_t base = 0;
  for (int32_t d = 0; d < x->rank; ++d) {
    base += starts[d] * strides[d];
    src_strides[d] = steps[d] * strides[d];
  }
  size_t es = vkp_dtype_size(x->dtype);
  int64_t count = (int64_t)vkp_tensor_numel(out), idx[VKP_MAX_RANK] = {0};
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = base + vkp__dot(out->rank, idx, src_strides);
    memcpy((char *)out->data + (size_t)i * es,
           (const char *)x->data + (size_t)src * es, es);
    vkp__next_index(out->rank, out->shape, idx);
  }
  return NULL;
}

