// SPDX-License-Identifier: Apache-2.0
// Loops of the indexing family (codegen/c/emit_index.c), pasted into every
// generated unit after prelude.c: data of any dtype moved as bytes, int32
// or int64 indices, the reference's semantics (graph/op_index.c). A
// function that returns int returns 1 at the first index out of range,
// having read and written nothing out of bounds.

// Element i of an int32 (wide 0) or int64 (wide 1) index tensor.
static inline int64_t vkp_index_at(const void *idx, int wide, ptrdiff_t i) {
  return wide ? ((const int64_t *)idx)[i] : (int64_t)((const int32_t *)idx)[i];
}

// *k made non-negative against dim; 0 when it is outside [-dim, dim).
static inline int vkp_index_fix(int64_t *k, int64_t dim) {
  if (*k < -dim || *k >= dim) return 0;
  if (*k < 0) *k += dim;
  return 1;
}

// A float index as the reference reads it: truncated, saturated, NaN 0.
static inline int64_t vkp_index_from_f(double v) {
  if (!(v == v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

// gather along the middle axis of x [outer, dim, inner] by n indices:
// y [outer, n, inner], es bytes per element.
VKP_FN int vkp_gather(const void *x, const void *idx, int wide, void *y, size_t es,
                      ptrdiff_t outer, ptrdiff_t dim, ptrdiff_t inner, ptrdiff_t n) {
  size_t row = (size_t)inner * es;
  for (ptrdiff_t j = 0; j < n; ++j) {
    int64_t k = vkp_index_at(idx, wide, j);
    if (!vkp_index_fix(&k, dim)) return 1;
    for (ptrdiff_t o = 0; o < outer; ++o)
      memcpy((unsigned char *)y + (size_t)(o * n + j) * row,
             (const unsigned char *)x + (size_t)(o * dim + (ptrdiff_t)k) * row, row);
  }
  return 0;
}

// The element offset, in a tensor with `strides`, of flat position i of a
// tensor shaped `shape` (both of `rank` dims), coordinate `axis` replaced
// by k.
static inline ptrdiff_t vkp_elements_offset(ptrdiff_t i, int rank, const ptrdiff_t *shape,
                                            const ptrdiff_t *strides, int axis,
                                            ptrdiff_t k) {
  ptrdiff_t at = 0;
  for (int d = rank - 1; d >= 0; --d) {
    ptrdiff_t c = i % shape[d];
    i /= shape[d];
    at += (d == axis ? k : c) * strides[d];
  }
  return at;
}

// gather_elements: y (shaped like the n indices, `ishape`) from x
// (`xstrides`), whose axis `axis` has dim entries.
VKP_FN int vkp_gather_elements(const void *x, const void *idx, int wide, void *y,
                               size_t es, int rank, const ptrdiff_t *ishape,
                               const ptrdiff_t *xstrides, int axis, ptrdiff_t dim,
                               ptrdiff_t n) {
  for (ptrdiff_t i = 0; i < n; ++i) {
    int64_t k = vkp_index_at(idx, wide, i);
    if (!vkp_index_fix(&k, dim)) return 1;
    ptrdiff_t at = vkp_elements_offset(i, rank, ishape, xstrides, axis, (ptrdiff_t)k);
    memcpy((unsigned char *)y + (size_t)i * es, (const unsigned char *)x + (size_t)at * es, es);
  }
  return 0;
}

// The element offset of index tuple t (idx[t*k .. t*k+k-1]) into dims
// `dims` with `strides`; 0 when an entry is out of range.
static inline int vkp_nd_offset(const void *idx, int wide, ptrdiff_t t, int k,
                                const ptrdiff_t *dims, const ptrdiff_t *strides,
                                ptrdiff_t *at) {
  ptrdiff_t off = 0;
  for (int j = 0; j < k; ++j) {
    int64_t c = vkp_index_at(idx, wide, t * k + j);
    if (!vkp_index_fix(&c, dims[j])) return 0;
    off += (ptrdiff_t)c * strides[j];
  }
  *at = off;
  return 1;
}

// gather_nd: per batch (batch_stride elements of x apart), per_batch index
// tuples of k entries, each copying a slice of `slice` elements.
VKP_FN int vkp_gather_nd(const void *x, const void *idx, int wide, void *y, size_t es,
                         ptrdiff_t batches, ptrdiff_t per_batch, int k,
                         const ptrdiff_t *dims, const ptrdiff_t *strides, ptrdiff_t slice,
                         ptrdiff_t batch_stride) {
  for (ptrdiff_t b = 0; b < batches; ++b)
    for (ptrdiff_t t = 0; t < per_batch; ++t) {
      ptrdiff_t at, tuple = b * per_batch + t;
      if (!vkp_nd_offset(idx, wide, tuple, k, dims, strides, &at)) return 1;
      memcpy((unsigned char *)y + (size_t)(tuple * slice) * es,
             (const unsigned char *)x + (size_t)(b * batch_stride + at) * es,
             (size_t)slice * es);
    }
  return 0;
}
