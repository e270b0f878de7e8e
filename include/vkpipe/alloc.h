// SPDX-License-Identifier: Apache-2.0
//
// vkpipe allocator hook: every heap allocation the library makes (its own, and
// cJSON's while parsing) goes through one process-wide allocator.
//
//   static void *my_alloc(void *ctx, size_t n) { ... }
//   vkp_allocator_t a = {.alloc = my_alloc, .realloc = my_realloc,
//                        .free = my_free, .ctx = &state};
//   vkp_allocator_set(&a);   // before any other vkpipe call
//
// Tests use it to fail the Nth allocation and check that every error path
// returns a status and leaks nothing.
#ifndef VKPIPE_ALLOC_H_
#define VKPIPE_ALLOC_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkp_allocator_t {
  void *(*alloc)(void *ctx, size_t size);             // may return NULL
  void *(*realloc)(void *ctx, void *ptr, size_t size);  // may return NULL
  void (*free)(void *ctx, void *ptr);
  void *ctx;  // borrowed; handed back to every call
} vkp_allocator_t;

// Installs `allocator` (copied), or the C library's when NULL. Not thread-safe:
// call it while no other thread is inside vkpipe, and never with memory still
// held by the library from the previous allocator.
void vkp_allocator_set(const vkp_allocator_t *allocator);

// Frees a buffer the library allocated and handed to the caller (the docs of
// each function say when to use this). NULL is fine.
void vkp_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_ALLOC_H_
