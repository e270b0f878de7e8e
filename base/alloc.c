// SPDX-License-Identifier: Apache-2.0
#include "base/alloc.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void *vkp__libc_alloc(void *ctx, size_t size) {
  (void)ctx;
  return malloc(size);
}
static void *vkp__libc_realloc(void *ctx, void *ptr, size_t size) {
  (void)ctx;
  return realloc(ptr, size);
}
static void vkp__libc_free(void *ctx, void *ptr) {
  (void)ctx;
  free(ptr);
}

static const vkp_allocator_t vkp__system_allocator = {
    .alloc = vkp__libc_alloc,
    .realloc = vkp__libc_realloc,
    .free = vkp__libc_free,
    .ctx = NULL,
};

// The allocator new blocks come from on this thread; NULL = the system one.
// Set only by scopes (vkp__allocator_push/pop), so it always points at an
// allocator that outlives the scope: an object's own copy, or a caller's.
static _Thread_local const vkp_allocator_t *vkp__current;

// Every block starts with this header, which records how to give it back:
// blocks are freed and resized by the allocator that made them, whichever
// thread or call frees them. 32 bytes keeps the returned pointer 16-byte
// aligned (max_align_t on x86-64 and aarch64) when the allocator's is.
typedef struct vkp__block_t {
  void *(*realloc)(void *ctx, void *ptr, size_t size);
  void (*free)(void *ctx, void *ptr);
  void *ctx;
  uintptr_t check;  // VKP__BLOCK_CHECK ^ ctx: catches a pointer not from here
} vkp__block_t;
_Static_assert(sizeof(vkp__block_t) == 32, "block header keeps 16-byte alignment");
#define VKP__BLOCK_CHECK ((uintptr_t)0x766b70616c6c6f63u)  // "vkpalloc"

const vkp_allocator_t *vkp__allocator_system(void) { return &vkp__system_allocator; }

const vkp_allocator_t *vkp__allocator_current(void) {
  return vkp__current ? vkp__current : &vkp__system_allocator;
}

bool vkp__allocator_valid(const vkp_allocator_t *allocator) {
  return !allocator || (allocator->alloc && allocator->realloc && allocator->free);
}

vkp_status_t vkp__allocator_check(const vkp_allocator_t *allocator, const char *what) {
  if (vkp__allocator_valid(allocator)) return NULL;
  return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "%s: the allocator given lacks its %s function", what,
                         !allocator->alloc ? "alloc" : !allocator->realloc ? "realloc" : "free");
}

vkp_allocator_t vkp__allocator_resolve(const vkp_allocator_t *allocator) {
  return allocator ? *allocator : *vkp__allocator_current();
}

vkp__allocator_scope_t vkp__allocator_push(const vkp_allocator_t *allocator) {
  vkp__allocator_scope_t scope = {.previous = vkp__current};
  // A zeroed record (an object set up without its creator) leaves it too.
  if (allocator && allocator->alloc) vkp__current = allocator;
  return scope;
}

void vkp__allocator_pop(vkp__allocator_scope_t *scope) { vkp__current = scope->previous; }

static vkp__block_t *vkp__block_of(void *ptr) {
  vkp__block_t *b = (vkp__block_t *)ptr - 1;
  assert(b->check == (VKP__BLOCK_CHECK ^ (uintptr_t)b->ctx) &&
         "pointer not allocated by vkpipe (or freed twice)");
  return b;
}

void *vkp__malloc(size_t size) {
  if (size > SIZE_MAX - sizeof(vkp__block_t)) return NULL;
  const vkp_allocator_t *a = vkp__allocator_current();
  vkp__block_t *b = a->alloc(a->ctx, sizeof(vkp__block_t) + (size ? size : 1));
  if (!b) return NULL;
  b->realloc = a->realloc;
  b->free = a->free;
  b->ctx = a->ctx;
  b->check = VKP__BLOCK_CHECK ^ (uintptr_t)a->ctx;
  return b + 1;
}

void *vkp__calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = vkp__malloc(n * size);
  if (p) memset(p, 0, (n * size) != 0 ? n * size : 1);
  return p;
}

void *vkp__realloc(void *ptr, size_t size) {
  if (!ptr) return vkp__malloc(size);
  if (size > SIZE_MAX - sizeof(vkp__block_t)) return NULL;
  vkp__block_t *b = vkp__block_of(ptr);
  vkp__block_t *nb = b->realloc(b->ctx, b, sizeof(vkp__block_t) + (size ? size : 1));
  return nb ? nb + 1 : NULL;  // the header moved with the contents
}

void *vkp__reallocarray(void *ptr, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return vkp__realloc(ptr, n * size);
}

void vkp__free(void *ptr) {
  if (!ptr) return;
  vkp__block_t *b = vkp__block_of(ptr);
  void (*free_fn)(void *, void *) = b->free;
  void *ctx = b->ctx;
  b->check = 0;  // a second free of the same block trips the assert
  free_fn(ctx, b);
}

char *vkp__strndup(const char *s, size_t n) {
  if (!s) return NULL;
  char *d = vkp__malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *vkp__strdup(const char *s) { return s ? vkp__strndup(s, strlen(s)) : NULL; }

char *vkp__asprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = vkp__malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

void vkp_free(void *ptr) { vkp__free(ptr); }

bool vkp__memory_is_short(size_t mib) {
  // The C library, not an object's allocator: the question is about the process.
  void *probe = malloc(mib << 20);
  bool is_short = probe == NULL;
  free(probe);
  return is_short;
}

size_t vkp__memory_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
  return (size_t)limit.rlim_cur;
}
