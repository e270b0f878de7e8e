// SPDX-License-Identifier: Apache-2.0
// Internal allocation entry points: every library allocation goes through
// these. A new block comes from the calling thread's current allocator (the
// system allocator unless a scope below made an object's allocator current);
// its header records that allocator, so vkp__free and vkp__realloc return it
// to the allocator that made it, on any thread.
#ifndef VKPIPE_BASE_ALLOC_H_
#define VKPIPE_BASE_ALLOC_H_

#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/alloc.h"
#include "vkpipe/status.h"

// ---------------------------------------------------------------------------
// Which allocator new blocks come from

// The C library's allocator (static, never NULL).
const vkp_allocator_t *vkp__allocator_system(void);
// The calling thread's current allocator (never NULL).
const vkp_allocator_t *vkp__allocator_current(void);
// False when a caller's allocator lacks a function (NULL passes).
bool vkp__allocator_valid(const vkp_allocator_t *allocator);
// NULL, or a status naming `what` is being created when the allocator lacks
// a function.
vkp_status_t vkp__allocator_check(const vkp_allocator_t *allocator, const char *what);
// The allocator an object created with `allocator` keeps: a copy of it, or
// of the current one when NULL (for a user's thread, the system allocator;
// inside the library, the allocator of the object being worked on).
vkp_allocator_t vkp__allocator_resolve(const vkp_allocator_t *allocator);

// Makes `allocator` (borrowed: it must outlive the scope; NULL, or one with
// no alloc function, leaves the current one) current on this thread until
// the matching pop, which restores the previous one. Scopes nest; pop in
// reverse order on every path.
typedef struct vkp__allocator_scope_t {
  const vkp_allocator_t *previous;
} vkp__allocator_scope_t;
vkp__allocator_scope_t vkp__allocator_push(const vkp_allocator_t *allocator);
void vkp__allocator_pop(vkp__allocator_scope_t *scope);

// For the rest of the enclosing block, `allocator` is current: a public
// entry point's first line, so every return path restores the previous one.
#define VKP__ALLOCATOR_SCOPE(allocator)                                       \
  __attribute__((cleanup(vkp__allocator_pop))) vkp__allocator_scope_t         \
      VKP__ALLOC_CAT(vkp__alloc_scope_, __LINE__) = vkp__allocator_push(allocator)
#define VKP__ALLOC_CAT(a, b) VKP__ALLOC_CAT2(a, b)
#define VKP__ALLOC_CAT2(a, b) a##b

// ---------------------------------------------------------------------------
// Blocks

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
