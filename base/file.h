// SPDX-License-Identifier: Apache-2.0
// Small file helpers shared by the library.
#ifndef VKPIPE_BASE_FILE_H_
#define VKPIPE_BASE_FILE_H_

#include <stddef.h>

#include "vkpipe/status.h"

// Writes `size` bytes of `data` to `path` (created or truncated); the error
// names the file and the reason.
vkp_status_t vkp__write_file(const char *path, const void *data, size_t size)
    VKP_MUST_USE;

// Writes `text` and a final newline to `path`, as vkp__write_file.
vkp_status_t vkp__write_text_line(const char *path, const char *text) VKP_MUST_USE;

#endif  // VKPIPE_BASE_FILE_H_
