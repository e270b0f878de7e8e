// SPDX-License-Identifier: Apache-2.0
//
// vkpipe .npy I/O: NumPy's array file format (versions 1.0, 2.0 and 3.0),
// for tensors in and out of the command-line tools.
//
//   vkp_tensor_t t;
//   vkp_status_t st = vkp_npy_read_file("input.npy", &t);   // t owns its data
//   ...
//   st = vkp_npy_write_file("output.npy", &t);
//   vkp_tensor_deinit(&t);
//
// Supported: little-endian float32, float16, int32 and int64 ('<f4', '<f2',
// '<i4', '<i8'), C order, rank 0..VKP_MAX_RANK. Fortran order, big-endian
// data, other dtypes, truncated files and malformed headers are errors that
// say what was found. The functions keep no state and are thread-safe.
#ifndef VKPIPE_NPY_H_
#define VKPIPE_NPY_H_

#include <stddef.h>

#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

// Parses the .npy bytes `data` (borrowed, `size` bytes) into `out`, which is
// initialised as an owning copy (vkp_tensor_deinit it). On failure `out` is
// zeroed. `name` (may be NULL) is used in messages.
vkp_status_t vkp_npy_read_buffer(const void *data, size_t size,
                                 const char *name, vkp_tensor_t *out)
    VKP_MUST_USE;

// Reads the file at `path` into `out` as vkp_npy_read_buffer does.
vkp_status_t vkp_npy_read_file(const char *path, vkp_tensor_t *out)
    VKP_MUST_USE;

// Encodes `tensor` (borrowed) as .npy bytes. `version` is 1 or 2, or 0 to
// pick the smallest that fits the header (version 1 unless the header exceeds
// 65535 bytes). *out_data is owned by the caller: free it with
// vkp_npy_buffer_free.
vkp_status_t vkp_npy_write_buffer(const vkp_tensor_t *tensor, int version,
                                  void **out_data, size_t *out_size)
    VKP_MUST_USE;

// Frees a buffer made by vkp_npy_write_buffer (NULL is fine).
void vkp_npy_buffer_free(void *data);

// Writes `tensor` to the file at `path` (version chosen as for version 0).
vkp_status_t vkp_npy_write_file(const char *path, const vkp_tensor_t *tensor)
    VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_NPY_H_
