// SPDX-License-Identifier: Apache-2.0
// cJSON allocates through the library allocator (base/alloc.h). Every file
// that uses cJSON calls vkp__json_init_hooks() before its first cJSON call;
// the hooks are process-wide and installed once, so every cJSON document in
// the process is allocated and freed by the same functions.
#ifndef VKPIPE_BASE_JSON_HOOKS_H_
#define VKPIPE_BASE_JSON_HOOKS_H_

#include <stdbool.h>

#include "vkpipe/status.h"

// Installs the hooks (once per process) and clears this thread's
// out-of-memory flag.
void vkp__json_init_hooks(void);

// Whether a cJSON allocation on this thread failed since the last
// vkp__json_init_hooks(): tells an allocation failure inside cJSON_Parse
// apart from malformed input.
bool vkp__json_oom(void);

struct cJSON;
// Prints `root` (when `ok`: every item was added) into *out_text, which the
// caller frees with vkp__free, and deletes `root` either way. A failure is an
// out-of-memory error naming `what`.
vkp_status_t vkp__json_print(struct cJSON *root, bool ok, const char *what,
                             char **out_text) VKP_MUST_USE;

#endif  // VKPIPE_BASE_JSON_HOOKS_H_
