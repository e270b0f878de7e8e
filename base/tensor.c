// SPDX-License-Identifier: Apache-2.0
#include "vkpipe/tensor.h"

#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/tensor_check.h"
#include "base/status_macros.h"

typedef struct vkp__dtype_info_t {
  const char *name;
  size_t size;
  vkp_dtype_kind_t kind;
  uint8_t dl_code, dl_bits;
} vkp__dtype_info_t;

static const vkp__dtype_info_t vkp__dtypes[] = {
#define VKP__DTYPE_INFO(e, s, n, k, dc, db) {s, n, VKP_DTYPE_KIND_##k, dc, db},
    VKP_DTYPE_LIST(VKP__DTYPE_INFO)
#undef VKP__DTYPE_INFO
};
_Static_assert(sizeof(vkp__dtypes) / sizeof(vkp__dtypes[0]) == VKP_DTYPE_COUNT,
               "dtype table out of sync");

const char *vkp_dtype_name(vkp_dtype_t dtype) {
  return (unsigned)dtype < VKP_DTYPE_COUNT ? vkp__dtypes[dtype].name : "unknown";
}

size_t vkp_dtype_size(vkp_dtype_t dtype) {
  return (unsigned)dtype < VKP_DTYPE_COUNT ? vkp__dtypes[dtype].size : 0;
}

bool vkp_dtype_parse(const char *name, vkp_dtype_t *out_dtype) {
  for (int i = 0; i < VKP_DTYPE_COUNT; ++i) {
    if (name && strcmp(name, vkp__dtypes[i].name) == 0) {
      *out_dtype = (vkp_dtype_t)i;
      return true;
    }
  }
  return false;
}

vkp_dtype_kind_t vkp_dtype_kind(vkp_dtype_t dtype) {
  return (unsigned)dtype < VKP_DTYPE_COUNT ? vkp__dtypes[dtype].kind
                                           : VKP_DTYPE_KIND_FLOAT;
}

bool vkp_dtype_is_float(vkp_dtype_t dtype) {
  return (unsigned)dtype < VKP_DTYPE_COUNT &&
         vkp__dtypes[dtype].kind == VKP_DTYPE_KIND_FLOAT;
}

bool vkp_dtype_is_integer(vkp_dtype_t dtype) {
  return (unsigned)dtype < VKP_DTYPE_COUNT &&
         (vkp__dtypes[dtype].kind == VKP_DTYPE_KIND_INT ||
          vkp__dtypes[dtype].kind == VKP_DTYPE_KIND_UINT);
}

vkp_dtype_set_t vkp_dtype_set_of_kind(vkp_dtype_kind_t kind) {
  vkp_dtype_set_t set = 0;
  for (int i = 0; i < VKP_DTYPE_COUNT; ++i)
    if (vkp__dtypes[i].kind == kind) set |= VKP_DTYPE_SET(i);
  return set;
}

const char *vkp_dtype_set_format(vkp_dtype_set_t set, char *buf, size_t size) {
  if (!size) return buf;
  buf[0] = '\0';
  size_t used = 0;
  for (int i = 0; i < VKP_DTYPE_COUNT; ++i) {
    if (!(set & VKP_DTYPE_SET(i))) continue;
    int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                     vkp__dtypes[i].name);
    if (w < 0 || (size_t)w >= size - used) break;
    used += (size_t)w;
  }
  if (!used) snprintf(buf, size, "none");
  return buf;
}

bool vkp_shape_numel(int32_t rank, const int64_t *shape, size_t elem_size,
                     size_t *out_bytes) {
  if (rank < 0 || rank > VKP_MAX_RANK) return false;
  size_t total = elem_size;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) return false;
    uint64_t d = (uint64_t)shape[i];
    if (d != 0 && total > SIZE_MAX / d) return false;
    total *= (size_t)d;
  }
  // Keep byte sizes representable as int64 too (file offsets, strides).
  if (total > (size_t)INT64_MAX) return false;
  *out_bytes = total;
  return true;
}

const char *vkp_shape_format(int32_t rank, const int64_t *shape, char *buf,
                             size_t buf_size) {
  if (!buf || buf_size == 0) return "";
  size_t used = 0;
  buf[0] = '\0';
  int n = snprintf(buf, buf_size, "[");
  used = n > 0 ? (size_t)n : 0;
  for (int32_t i = 0; i < rank && used < buf_size; ++i) {
    n = snprintf(buf + used, buf_size - used, "%s%lld", i ? ", " : "",
                 (long long)shape[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used < buf_size) snprintf(buf + used, buf_size - used, "]");
  return buf;
}

static vkp_status_t vkp__tensor_check(vkp_dtype_t dtype, int32_t rank,
                                      const int64_t *shape, size_t *out_bytes) {
  if ((unsigned)dtype >= VKP_DTYPE_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "unknown dtype %d",
                           (int)dtype);
  if (rank < 0 || rank > VKP_MAX_RANK)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "rank %d outside 0..%d", (int)rank, VKP_MAX_RANK);
  if (rank > 0 && !shape)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "shape is NULL");
  if (!vkp_shape_numel(rank, shape, vkp_dtype_size(dtype), out_bytes)) {
    char buf[160];
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "shape %s has a negative dim or its byte size "
                           "overflows",
                           vkp_shape_format(rank, shape, buf, sizeof buf));
  }
  return NULL;
}

static void vkp__tensor_set_shape(vkp_tensor_t *t, vkp_dtype_t dtype,
                                  int32_t rank, const int64_t *shape) {
  memset(t, 0, sizeof(*t));
  t->dtype = dtype;
  t->rank = rank;
  for (int32_t i = 0; i < rank; ++i) t->shape[i] = shape[i];
}

vkp_status_t vkp_tensor_init(vkp_tensor_t *tensor, vkp_dtype_t dtype,
                             int32_t rank, const int64_t *shape) {
  size_t bytes = 0;
  memset(tensor, 0, sizeof(*tensor));
  VKP_RETURN_IF_ERROR(vkp__tensor_check(dtype, rank, shape, &bytes));
  void *data = vkp__calloc(1, bytes ? bytes : 1);
  if (!data) return VKP_OOM("tensor data");
  vkp__tensor_set_shape(tensor, dtype, rank, shape);
  tensor->data = data;
  tensor->owns_data = true;
  return NULL;
}

vkp_status_t vkp_tensor_init_view(vkp_tensor_t *tensor, vkp_dtype_t dtype,
                                  int32_t rank, const int64_t *shape,
                                  void *data) {
  size_t bytes = 0;
  memset(tensor, 0, sizeof(*tensor));
  VKP_RETURN_IF_ERROR(vkp__tensor_check(dtype, rank, shape, &bytes));
  if (!data && bytes)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "tensor data is NULL");
  vkp__tensor_set_shape(tensor, dtype, rank, shape);
  tensor->data = data;
  tensor->owns_data = false;
  return NULL;
}

vkp_status_t vkp_tensor_init_copy(vkp_tensor_t *dst, const vkp_tensor_t *src) {
  VKP_RETURN_IF_ERROR(vkp_tensor_init(dst, src->dtype, src->rank, src->shape));
  size_t n = vkp_tensor_nbytes(src);
  if (n) memcpy(dst->data, src->data, n);
  return NULL;
}

void vkp_tensor_deinit(vkp_tensor_t *tensor) {
  if (!tensor) return;
  if (tensor->owns_data) vkp__free(tensor->data);
  memset(tensor, 0, sizeof(*tensor));
}

size_t vkp_tensor_numel(const vkp_tensor_t *tensor) {
  size_t n = 1;
  for (int32_t i = 0; i < tensor->rank; ++i) n *= (size_t)tensor->shape[i];
  return n;
}

size_t vkp_tensor_nbytes(const vkp_tensor_t *tensor) {
  return vkp_tensor_numel(tensor) * vkp_dtype_size(tensor->dtype);
}

// ---------------------------------------------------------------------------
// DLPack

static bool vkp__dtype_from_dl(DLDataType t, vkp_dtype_t *out) {
  if (t.lanes != 1) return false;
  for (int i = 0; i < VKP_DTYPE_COUNT; ++i) {
    if (vkp__dtypes[i].dl_code == t.code && vkp__dtypes[i].dl_bits == t.bits) {
      *out = (vkp_dtype_t)i;
      return true;
    }
  }
  return false;
}

vkp_status_t vkp_tensor_from_dlpack(const DLTensor *dl,
                                    vkp_tensor_t *out) {
  memset(out, 0, sizeof(*out));
  if (!dl) return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "DLTensor is NULL");
  if (dl->device.device_type != kDLCPU)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "DLTensor on device type %d; only CPU memory "
                           "(kDLCPU) converts without a copy",
                           (int)dl->device.device_type);
  vkp_dtype_t dtype;
  if (!vkp__dtype_from_dl(dl->dtype, &dtype))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "DLTensor dtype code %u bits %u lanes %u has no "
                           "vkpipe dtype",
                           (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
                           (unsigned)dl->dtype.lanes);
  if (dl->ndim < 0 || dl->ndim > VKP_MAX_RANK)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "DLTensor rank %d outside 0..%d", (int)dl->ndim,
                           VKP_MAX_RANK);
  if (dl->strides) {
    int64_t expect = 1;
    for (int i = dl->ndim - 1; i >= 0; --i) {
      if (dl->shape[i] != 1 && dl->strides[i] != expect)
        return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                               "DLTensor is not compact row-major (dim %d has "
                               "stride %lld, expected %lld)",
                               i, (long long)dl->strides[i], (long long)expect);
      expect *= dl->shape[i];
    }
  }
  return vkp_tensor_init_view(out, dtype, dl->ndim, dl->shape,
                              (char *)dl->data + dl->byte_offset);
}

vkp_status_t vkp_tensor_to_dlpack(vkp_tensor_t *tensor, DLTensor *out) {
  memset(out, 0, sizeof(*out));
  if ((unsigned)tensor->dtype >= VKP_DTYPE_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "unknown dtype %d",
                           (int)tensor->dtype);
  DLDataType t = {.code = vkp__dtypes[tensor->dtype].dl_code,
                  .bits = vkp__dtypes[tensor->dtype].dl_bits,
                  .lanes = 1};
  out->data = tensor->data;
  out->device.device_type = kDLCPU;
  out->device.device_id = 0;
  out->ndim = tensor->rank;
  out->dtype = t;
  out->shape = tensor->shape;
  out->strides = NULL;
  out->byte_offset = 0;
  return NULL;
}

vkp_status_t vkp__tensor_check_matches(const vkp_tensor_t *t, const char *what,
                                       const char *name, vkp_dtype_t dtype,
                                       int32_t rank, const int64_t *shape) {
  bool same = t->dtype == dtype && t->rank == rank;
  for (int32_t d = 0; same && d < rank; ++d) same = t->shape[d] == shape[d];
  if (!same) {
    char want[128], got[128];
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "%s '%s': expected %s %s, got %s %s", what, name,
                           vkp_dtype_name(dtype),
                           vkp_shape_format(rank, shape, want, sizeof want),
                           vkp_dtype_name(t->dtype),
                           vkp_shape_format(t->rank, t->shape, got, sizeof got));
  }
  if (!t->data && vkp_tensor_nbytes(t))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "%s '%s' has no data",
                           what, name);
  return NULL;
}
