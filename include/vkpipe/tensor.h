// SPDX-License-Identifier: Apache-2.0
//
// vkpipe tensors: a dense, row-major, host-memory array with a dtype and shape.
//
//   int64_t shape[] = {1, 3, 224, 224};
//   vkp_tensor_t t;
//   vkp_status_t st = vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, 4, shape);
//   float *px = t.data;                         // owned by t
//   ...
//   DLTensor dl;                                 // hand it to a framework
//   vkp_tensor_to_dlpack(&t, &dl);               // no copy; dl borrows t
//   vkp_tensor_deinit(&t);
//
// vkp_tensor_t is a plain struct owned by the caller (_init/_deinit). It is not
// thread-safe; distinct tensors may be used from distinct threads.
#ifndef VKPIPE_TENSOR_H_
#define VKPIPE_TENSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "vkpipe/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKP_MAX_RANK 8

// X(ENUM, "name", element size in bytes, kind, DLPack type code, DLPack
// bits): every dtype, in one list (DLPack codes: 0 int, 1 uint, 2 float,
// 4 bfloat, 6 bool, as in DLPack 0.8; Debian's dlpack.h predates kDLBool).
// New dtypes go at the end: the enum values are stable (blobs store them).
#define VKP_DTYPE_LIST(X)                    \
  X(FLOAT32, "float32", 4, FLOAT, 2, 32)     \
  X(FLOAT16, "float16", 2, FLOAT, 2, 16)     \
  X(INT64, "int64", 8, INT, 0, 64)           \
  X(INT32, "int32", 4, INT, 0, 32)           \
  X(FLOAT64, "float64", 8, FLOAT, 2, 64)     \
  X(BFLOAT16, "bfloat16", 2, FLOAT, 4, 16)   \
  X(INT16, "int16", 2, INT, 0, 16)           \
  X(INT8, "int8", 1, INT, 0, 8)              \
  X(UINT64, "uint64", 8, UINT, 1, 64)        \
  X(UINT32, "uint32", 4, UINT, 1, 32)        \
  X(UINT16, "uint16", 2, UINT, 1, 16)        \
  X(UINT8, "uint8", 1, UINT, 1, 8)           \
  X(BOOL, "bool", 1, BOOL, 6, 8)

// What kind of number a dtype holds.
typedef enum vkp_dtype_kind_t {
  VKP_DTYPE_KIND_FLOAT,  // IEEE binary16/32/64 and bfloat16
  VKP_DTYPE_KIND_INT,    // signed two's complement
  VKP_DTYPE_KIND_UINT,   // unsigned
  VKP_DTYPE_KIND_BOOL,   // one byte, 0 or 1
} vkp_dtype_kind_t;

typedef enum vkp_dtype_t {
#define VKP__DTYPE_ENUM(e, s, n, k, dc, db) VKP_DTYPE_##e,
  VKP_DTYPE_LIST(VKP__DTYPE_ENUM)
#undef VKP__DTYPE_ENUM
  VKP_DTYPE_COUNT
} vkp_dtype_t;

// "float32", ...; "unknown" when out of range.
const char *vkp_dtype_name(vkp_dtype_t dtype);
// Element size in bytes; 0 when out of range.
size_t vkp_dtype_size(vkp_dtype_t dtype);
// Parses a dtype name; false when unknown.
bool vkp_dtype_parse(const char *name, vkp_dtype_t *out_dtype);
// The kind of a dtype (VKP_DTYPE_KIND_FLOAT when out of range).
vkp_dtype_kind_t vkp_dtype_kind(vkp_dtype_t dtype);
// Shorthands: float kinds; signed or unsigned integers.
bool vkp_dtype_is_float(vkp_dtype_t dtype);
bool vkp_dtype_is_integer(vkp_dtype_t dtype);

// A set of dtypes as a bit mask (bit d for dtype d), used by the op table to
// say which dtypes an op accepts.
typedef uint32_t vkp_dtype_set_t;
#define VKP_DTYPE_SET(d) ((vkp_dtype_set_t)1u << (d))
// Every float dtype / every integer dtype / bool / all of them.
vkp_dtype_set_t vkp_dtype_set_of_kind(vkp_dtype_kind_t kind);
#define VKP_DTYPE_SET_ALL ((vkp_dtype_set_t)((1u << VKP_DTYPE_COUNT) - 1u))
// Writes "float32, float16, ..." (the set's names, in list order) into buf.
const char *vkp_dtype_set_format(vkp_dtype_set_t set, char *buf, size_t size);

typedef struct vkp_tensor_t {
  vkp_dtype_t dtype;
  int32_t rank;                  // 0 (scalar) .. VKP_MAX_RANK
  int64_t shape[VKP_MAX_RANK];   // entries past rank are 0
  void *data;                    // owned when owns_data, else borrowed
  bool owns_data;
} vkp_tensor_t;

// Initialises `tensor` with a zero-filled buffer it owns. Fails on a bad dtype,
// rank, negative dim or a byte size that overflows.
vkp_status_t vkp_tensor_init(vkp_tensor_t *tensor, vkp_dtype_t dtype,
                             int32_t rank, const int64_t *shape) VKP_MUST_USE;

// Initialises `tensor` as a view of `data` (borrowed: it must outlive the
// tensor). Checks the same things as vkp_tensor_init.
vkp_status_t vkp_tensor_init_view(vkp_tensor_t *tensor, vkp_dtype_t dtype,
                                  int32_t rank, const int64_t *shape,
                                  void *data) VKP_MUST_USE;

// Initialises `dst` as an owning deep copy of `src`.
vkp_status_t vkp_tensor_init_copy(vkp_tensor_t *dst, const vkp_tensor_t *src)
    VKP_MUST_USE;

// Frees the buffer when owned and zeroes the struct. Safe on a zeroed struct.
void vkp_tensor_deinit(vkp_tensor_t *tensor);

// Number of elements (1 for a scalar).
size_t vkp_tensor_numel(const vkp_tensor_t *tensor);
// Size of the data in bytes.
size_t vkp_tensor_nbytes(const vkp_tensor_t *tensor);

// Element count of a shape, with overflow checking: false when any dim is
// negative or the product (times elem_size) overflows size_t.
bool vkp_shape_numel(int32_t rank, const int64_t *shape, size_t elem_size,
                     size_t *out_bytes);

// Formats a shape as "[1, 3, 224, 224]" into buf (always NUL-terminated).
const char *vkp_shape_format(int32_t rank, const int64_t *shape, char *buf,
                             size_t buf_size);

// ---------------------------------------------------------------------------
// DLPack interop. Only dense, row-major (compact strides or NULL strides),
// byte_offset-aware CPU tensors of the dtypes above convert.

// Makes `out` a borrowed view of `dl`'s memory (no copy). Fails with
// UNSUPPORTED for non-CPU devices, non-compact strides or unknown dtypes.
vkp_status_t vkp_tensor_from_dlpack(const DLTensor *dl,
                                    vkp_tensor_t *out) VKP_MUST_USE;

// Fills `out` as a view of `tensor` (no copy): out->data points at
// tensor->data and out->shape at tensor->shape, so `tensor` must outlive and
// not move while `out` is used.
vkp_status_t vkp_tensor_to_dlpack(vkp_tensor_t *tensor, DLTensor *out)
    VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_TENSOR_H_
