// SPDX-License-Identifier: Apache-2.0
// ONNX TensorProto -> host tensor: dtypes, typed fields, raw_data and
// external data files. Everything read from the file is checked: dims,
// element counts against the data actually present, external paths.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/scalar.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// X(ONNX DataType value, name, element size, IR dtype or -1)
#define VKP__ONNX_TYPE_LIST(X)  \
  X(1, "float", 4, VKP_DTYPE_FLOAT32) \
  X(2, "uint8", 1, VKP_DTYPE_UINT8)   \
  X(3, "int8", 1, VKP_DTYPE_INT8)     \
  X(4, "uint16", 2, VKP_DTYPE_UINT16) \
  X(5, "int16", 2, VKP_DTYPE_INT16)   \
  X(6, "int32", 4, VKP_DTYPE_INT32)   \
  X(7, "int64", 8, VKP_DTYPE_INT64)   \
  X(8, "string", 0, -1)               \
  X(9, "bool", 1, VKP_DTYPE_BOOL)     \
  X(10, "float16", 2, VKP_DTYPE_FLOAT16) \
  X(11, "double", 8, VKP_DTYPE_FLOAT64) \
  X(12, "uint32", 4, VKP_DTYPE_UINT32) \
  X(13, "uint64", 8, VKP_DTYPE_UINT64) \
  X(14, "complex64", 8, -1)           \
  X(15, "complex128", 16, -1)         \
  X(16, "bfloat16", 2, VKP_DTYPE_BFLOAT16)

typedef struct vkp__onnx_type_info_t {
  int32_t type;
  const char *name;
  size_t size;
  int dtype;
} vkp__onnx_type_info_t;

static const vkp__onnx_type_info_t vkp__onnx_types[] = {
#define VKP__TYPE_INFO(t, n, s, d) {t, n, s, (int)(d)},
    VKP__ONNX_TYPE_LIST(VKP__TYPE_INFO)
#undef VKP__TYPE_INFO
};
#define VKP__N_TYPES ((int)(sizeof vkp__onnx_types / sizeof vkp__onnx_types[0]))
_Static_assert(sizeof vkp__onnx_types / sizeof vkp__onnx_types[0] == 16,
               "ONNX type table out of sync");

static const vkp__onnx_type_info_t *vkp__type_info(int32_t type) {
  for (int i = 0; i < VKP__N_TYPES; ++i)
    if (vkp__onnx_types[i].type == type) return &vkp__onnx_types[i];
  return NULL;
}

size_t vkp__onnx_type_size(int32_t type) {
  const vkp__onnx_type_info_t *t = vkp__type_info(type);
  return t ? t->size : 0;
}

const char *vkp__onnx_type_name(int32_t type) {
  const vkp__onnx_type_info_t *t = vkp__type_info(type);
  return t ? t->name : "undefined";
}

bool vkp__onnx_type_to_dtype(int32_t type, vkp_dtype_t *out_dtype) {
  const vkp__onnx_type_info_t *t = vkp__type_info(type);
  if (!t || t->dtype < 0) return false;
  *out_dtype = (vkp_dtype_t)t->dtype;
  return true;
}

int32_t vkp__onnx_type_from_dtype(vkp_dtype_t dtype) {
  for (int i = 0; i < VKP__N_TYPES; ++i)
    if (vkp__onnx_types[i].dtype == (int)dtype) return vkp__onnx_types[i].type;
  return 0;
}

bool vkp__onnx_type_is_float(int32_t type) {
  vkp_dtype_t d;
  return vkp__onnx_type_to_dtype(type, &d) && vkp_dtype_is_float(d);
}

size_t vkp__onnx_tensor_numel(const vkp__onnx_tensor_t *t) {
  size_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i) n *= (size_t)t->shape[i];
  return n;
}

vkp_status_t vkp__onnx_tensor_alloc(vkp__onnx_tensor_t *t, int32_t type,
                                    int32_t rank, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  size_t esize = vkp__onnx_type_size(type);
  if (esize == 0)
    return VKP__ONNX_UNSUPPORTED("tensors of type %s are not supported",
                                 vkp__onnx_type_name(type));
  if (rank < 0 || rank > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("rank %d is outside 0..%d", (int)rank,
                                 VKP_MAX_RANK);
  size_t bytes;
  if (!vkp_shape_numel(rank, shape, esize, &bytes)) {
    char s[160];
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "shape %s is negative or too large",
                           vkp_shape_format(rank, shape, s, sizeof s));
  }
  t->data = vkp__calloc(bytes ? bytes : 1, 1);
  if (!t->data) return VKP_OOM("ONNX tensor");
  t->type = type;
  t->rank = rank;
  for (int32_t i = 0; i < rank; ++i) t->shape[i] = shape[i];
  t->nbytes = bytes;
  return NULL;
}

void vkp__onnx_tensor_deinit(vkp__onnx_tensor_t *t) {
  if (!t) return;
  vkp__free(t->data);
  memset(t, 0, sizeof *t);
}

// Element access goes through the IR dtype of the ONNX type (every type
// with a fixed size but complex has one); base/scalar.c defines the
// conversions.
static vkp_dtype_t vkp__elem_dtype(int32_t type) {
  vkp_dtype_t d = VKP_DTYPE_COUNT;
  return vkp__onnx_type_to_dtype(type, &d) ? d : VKP_DTYPE_COUNT;
}

double vkp__onnx_tensor_get_f(const vkp__onnx_tensor_t *t, size_t i) {
  return vkp__scalar_get_f(vkp__elem_dtype(t->type), t->data, i);
}

int64_t vkp__onnx_tensor_get_i(const vkp__onnx_tensor_t *t, size_t i) {
  return vkp__scalar_get_i(vkp__elem_dtype(t->type), t->data, i);
}

void vkp__onnx_tensor_set_i(vkp__onnx_tensor_t *t, size_t i, int64_t x) {
  vkp__scalar_set_i(vkp__elem_dtype(t->type), t->data, i, x);
}

void vkp__onnx_tensor_set_f(vkp__onnx_tensor_t *t, size_t i, double x) {
  vkp__scalar_set_f(vkp__elem_dtype(t->type), t->data, i, x);
}

// ---------------------------------------------------------------------------
// protobuf-c allocations go through the library allocator.

static void *vkp__pb_alloc(void *data, size_t size) {
  (void)data;
  return vkp__malloc(size ? size : 1);
}
static void vkp__pb_free(void *data, void *ptr) {
  (void)data;
  vkp__free(ptr);
}
ProtobufCAllocator vkp__onnx_protobuf_allocator = {
    .alloc = vkp__pb_alloc, .free = vkp__pb_free, .allocator_data = NULL};

// ---------------------------------------------------------------------------
// Decoding

// Reads `nbytes` of external data into `dst`; with dst NULL only checks
// that the file holds them.
static vkp_status_t vkp__read_external(const Onnx__TensorProto *proto,
                                       const char *base_dir, void *dst,
                                       size_t nbytes) {
  const char *location = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < proto->n_external_data; ++i) {
    const Onnx__StringStringEntryProto *e = proto->external_data[i];
    if (!e || !e->key || !e->value) continue;
    char *end = NULL;
    if (strcmp(e->key, "location") == 0) {
      location = e->value;
    } else if (strcmp(e->key, "offset") == 0 || strcmp(e->key, "length") == 0) {
      errno = 0;
      long long v = strtoll(e->value, &end, 10);
      if (errno || !end || *end || v < 0)
        return VKP__ONNX_INVALID("external data %s '%s' is not a byte count",
                                 e->key, e->value);
      if (e->key[0] == 'o') offset = v;
      else length = v;
    }
  }
  if (!location || !location[0])
    return VKP__ONNX_INVALID("external data has no location");
  // The file must stay inside the model's folder: no absolute paths, no "..".
  if (location[0] == '/')
    return VKP__ONNX_INVALID("external data location '%s' is absolute",
                             location);
  for (const char *p = location; *p;) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return VKP__ONNX_INVALID("external data location '%s' leaves the model's "
                               "folder",
                               location);
    p += len;
    while (*p == '/') ++p;
  }
  if (length >= 0 && (uint64_t)length != nbytes)
    return VKP__ONNX_INVALID("external data length %lld differs from the %zu "
                             "bytes the dims need",
                             (long long)length, nbytes);
  char *path = vkp__asprintf("%s/%s", base_dir && base_dir[0] ? base_dir : ".",
                             location);
  if (!path) return VKP_OOM("path");
  vkp_status_t st = NULL;
  FILE *f = fopen(path, "rb");
  struct stat sb;
  if (!f) {
    st = vkp_status_make(VKP_STATUS_NOT_FOUND,
                         "cannot open external data '%s': %s", path,
                         strerror(errno));
  } else if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = VKP__ONNX_INVALID("external data '%s' is not a regular file", path);
  } else if ((uint64_t)offset > (uint64_t)sb.st_size ||
             nbytes > (uint64_t)sb.st_size - (uint64_t)offset) {
    st = VKP__ONNX_INVALID("external data '%s': %lld+%zu bytes past its end "
                           "(size %lld)",
                           path, (long long)offset, nbytes,
                           (long long)sb.st_size);
  } else if (dst && (fseeko(f, (off_t)offset, SEEK_SET) != 0 ||
                     fread(dst, 1, nbytes, f) != nbytes)) {
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "reading external data '%s'",
                         path);
  }
  if (f) fclose(f);
  vkp__free(path);
  return st;
}

static vkp_status_t vkp__count_mismatch(const char *field, size_t have,
                                        size_t need) {
  return VKP__ONNX_INVALID("%s has %zu entries; the dims need %zu", field, have,
                           need);
}

vkp_status_t vkp__onnx_tensor_decode(const Onnx__TensorProto *proto,
                                     const char *base_dir,
                                     vkp__onnx_tensor_t *out) {
  memset(out, 0, sizeof *out);
  int32_t type = proto->has_data_type ? proto->data_type : 0;
  if (proto->n_dims > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("rank %zu exceeds %d", proto->n_dims,
                                 VKP_MAX_RANK);
  if (proto->segment)
    return VKP__ONNX_UNSUPPORTED("segmented tensors are not supported");
  if (type == ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED)
    return VKP__ONNX_INVALID("tensor has no data type");
  if (vkp__onnx_type_size(type) == 0 ||
      type == ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64 ||
      type == ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128)
    return VKP__ONNX_UNSUPPORTED("tensors of type %s (%d) are not supported",
                                 vkp__onnx_type_name(type), (int)type);
  int64_t shape[VKP_MAX_RANK];
  for (size_t i = 0; i < proto->n_dims; ++i) shape[i] = proto->dims[i];
  // Check the data present against the dims before allocating anything, so
  // absurd dims cost nothing.
  size_t esize = vkp__onnx_type_size(type), need_bytes;
  if (!vkp_shape_numel((int32_t)proto->n_dims, shape, esize, &need_bytes)) {
    char s[160];
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "dims %s are negative or too large",
                           vkp_shape_format((int32_t)proto->n_dims, shape, s,
                                            sizeof s));
  }
  size_t need = need_bytes / esize;
  bool is_external = proto->has_data_location &&
                     proto->data_location ==
                         ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  size_t have = 0;
  const char *field = "raw_data";
  if (is_external) {
    vkp_status_t st = vkp__read_external(proto, base_dir, NULL, need_bytes);
    if (st) return st;
    have = need;
  } else if (proto->has_raw_data) {
    have = proto->raw_data.len / esize;
    if (proto->raw_data.len != need_bytes)
      return VKP__ONNX_INVALID("raw_data has %zu bytes; the dims need %zu",
                               proto->raw_data.len, need_bytes);
  } else {
    switch (type) {
      case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        have = proto->n_float_data, field = "float_data"; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        have = proto->n_double_data, field = "double_data"; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        have = proto->n_int64_data, field = "int64_data"; break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
      case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
        have = proto->n_uint64_data, field = "uint64_data"; break;
      default:
        have = proto->n_int32_data, field = "int32_data"; break;
    }
  }
  if (have != need) return vkp__count_mismatch(field, have, need);
  vkp_status_t st =
      vkp__onnx_tensor_alloc(out, type, (int32_t)proto->n_dims, shape);
  if (st) return st;
  size_t numel = vkp__onnx_tensor_numel(out), nbytes = out->nbytes;
  bool external = proto->has_data_location &&
                  proto->data_location ==
                      ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (external) {
    st = vkp__read_external(proto, base_dir, out->data, nbytes);
  } else if (proto->has_raw_data) {
    if (proto->raw_data.len != nbytes)
      st = VKP__ONNX_INVALID("raw_data has %zu bytes; the dims need %zu",
                             proto->raw_data.len, nbytes);
    else if (nbytes)
      memcpy(out->data, proto->raw_data.data, nbytes);
  } else {
    switch (type) {
      case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        if (proto->n_float_data != numel)
          st = vkp__count_mismatch("float_data", proto->n_float_data, numel);
        else if (numel)
          memcpy(out->data, proto->float_data, nbytes);
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        if (proto->n_double_data != numel)
          st = vkp__count_mismatch("double_data", proto->n_double_data, numel);
        else if (numel)
          memcpy(out->data, proto->double_data, nbytes);
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        if (proto->n_int64_data != numel)
          st = vkp__count_mismatch("int64_data", proto->n_int64_data, numel);
        else if (numel)
          memcpy(out->data, proto->int64_data, nbytes);
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
      case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
        if (proto->n_uint64_data != numel)
          st = vkp__count_mismatch("uint64_data", proto->n_uint64_data, numel);
        else
          for (size_t i = 0; i < numel; ++i)
            vkp__onnx_tensor_set_i(out, i, (int64_t)proto->uint64_data[i]);
        break;
      case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
      case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
        // Bit patterns, one per int32 entry.
        if (proto->n_int32_data != numel)
          st = vkp__count_mismatch("int32_data", proto->n_int32_data, numel);
        else
          for (size_t i = 0; i < numel; ++i) {
            uint16_t bits = (uint16_t)proto->int32_data[i];
            memcpy((unsigned char *)out->data + 2 * i, &bits, 2);
          }
        break;
      default:  // int32 and the narrower integer types and bool
        if (proto->n_int32_data != numel)
          st = vkp__count_mismatch("int32_data", proto->n_int32_data, numel);
        else
          for (size_t i = 0; i < numel; ++i)
            vkp__onnx_tensor_set_i(out, i, proto->int32_data[i]);
        break;
    }
  }
  if (st) vkp__onnx_tensor_deinit(out);
  return st;
}
