// SPDX-License-Identifier: Apache-2.0
// Internal helpers for returning statuses.
#ifndef VKPIPE_BASE_STATUS_MACROS_H_
#define VKPIPE_BASE_STATUS_MACROS_H_

#include "vkpipe/status.h"

// Evaluates `expr` (a vkp_status_t) and returns it from the calling function
// when it is not OK.
#define VKP_RETURN_IF_ERROR(expr)   \
  do {                              \
    vkp_status_t vkp__st_ = (expr); \
    if (vkp__st_) return vkp__st_;  \
  } while (0)

// Shorthand for an out-of-memory status naming what was being allocated.
#define VKP_OOM(what) \
  vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory allocating %s", (what))

#endif  // VKPIPE_BASE_STATUS_MACROS_H_
