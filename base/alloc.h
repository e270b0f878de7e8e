// SPDX-License-Identifier: Apache-2.0
// Internal allocation entry points: every library allocation goes through
// these so that vkp_allocator_set (include/vkpipe/alloc.h) sees it.
#ifndef VKPIPE_BASE_ALLOC_H_
#define VKPIPE_BASE_ALLOC_H_

#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/alloc.h"

void *vkp__malloc(size_t size);
// Zero-filled; NULL on overflow of n * size.
void *vkp__calloc(size_t n, size_t size);
void *vkp__realloc(void *ptr, size_t size);
// realloc for arrays: NULL on overflow of n * size.
void *vkp__reallocarray(void *ptr, size_t n, size_t size);
void vkp__free(void *ptr);
// Copy of `s` (NULL gives NULL).
char *vkp__strdup(const char *s);
char *vkp__strndup(const char *s, size_t n);
// printf into a fresh heap string; NULL on allocation failure.
char *vkp__asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// The probe size callers use to ask "is memory short now?", in MiB.
#define VKP__MEMORY_PROBE_MIB 64
// True when allocating `mib` MiB fails right now: the process is at an
// address-space limit or the heap is exhausted. Used to name a failure inside
// a third-party library that reports none (glslang, a Vulkan driver) for
// what it most likely was.
bool vkp__memory_is_short(size_t mib);
// The process's address-space limit (RLIMIT_AS, `ulimit -v`) in bytes, or 0
// when there is none.
size_t vkp__memory_limit(void);

#endif  // VKPIPE_BASE_ALLOC_H_
