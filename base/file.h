// SPDX-License-Identifier: Apache-2.0
// The library's file helpers: the one whole-file reader every loader uses
// (regular files only, a size limit checked before allocating, errors that
// name the path), the writers, and mkdir -p.
#ifndef VKPIPE_BASE_FILE_H_
#define VKPIPE_BASE_FILE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/status.h"

// Writes `size` bytes of `data` to `path` (created or truncated); the error
// names the file and the reason.
vkp_status_t vkp__write_file(const char *path, const void *data, size_t size)
    VKP_MUST_USE;

// Writes `text` and a final newline to `path`, as vkp__write_file.
vkp_status_t vkp__write_text_line(const char *path, const char *text) VKP_MUST_USE;

// Reads the whole regular file at `path` into a fresh buffer (one NUL byte
// past the end, so text can be parsed in place; owned by the caller, free
// with vkp__free). Refuses, by name, a directory or any other non-regular
// file, and a file larger than `max_size` bytes before allocating anything.
// `what` says what the file should be, with its article ("an ONNX model",
// "a .npy file"), in messages. An
// allocation failure is OUT_OF_MEMORY naming the size, never a parse error.
vkp_status_t vkp__file_read(const char *path, size_t max_size, const char *what,
                            void **out_data, size_t *out_size) VKP_MUST_USE;

// Checks that `path` names a regular file (or something that resolves to
// one) before a reader opens it another way; the error names it.
vkp_status_t vkp__file_check_regular(const char *path, const char *what) VKP_MUST_USE;

// Creates the directory `path` and any missing parents (mkdir -p) with
// `mode` (before the umask); an existing directory is fine, an existing file
// of another kind is an error. The error names the directory that could not
// be made and why.
vkp_status_t vkp__dir_create(const char *path, unsigned mode) VKP_MUST_USE;
// The same for the directory holding `file_path` (all before its last '/';
// nothing to do for a bare file name).
vkp_status_t vkp__dir_create_parent(const char *file_path, unsigned mode) VKP_MUST_USE;

// The cache directory vkpipe's caches live under (owned, free with
// vkp__free; NULL when out of memory): `configured` when set, else
// $XDG_CACHE_HOME/vkpipe, ~/.cache/vkpipe, or /tmp/vkpipe-cache-<uid>.
// Not created here.
char *vkp__file_cache_dir(const char *configured);

// True when `name` can be used as one path component as it is: 1 to 255
// characters from [A-Za-z0-9_.-], not starting with '.' (so no "..", no
// hidden files, no separators).
bool vkp__file_name_is_safe(const char *name);

// The cores this process may run on (sched_getaffinity: less what taskset
// or a cgroup took away), else the online ones, at least 1. Here, beside
// the other questions asked of the machine, so that the deployment library
// (no cost model) has it too.
int32_t vkp__host_cores(void);

#endif  // VKPIPE_BASE_FILE_H_
