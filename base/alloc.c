// SPDX-License-Identifier: Apache-2.0
#include "base/alloc.h"

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

static vkp_allocator_t vkp__allocator = {
    .alloc = vkp__libc_alloc,
    .realloc = vkp__libc_realloc,
    .free = vkp__libc_free,
    .ctx = NULL,
};

void vkp_allocator_set(const vkp_allocator_t *allocator) {
  if (allocator) {
    vkp__allocator = *allocator;
  } else {
    vkp__allocator.alloc = vkp__libc_alloc;
    vkp__allocator.realloc = vkp__libc_realloc;
    vkp__allocator.free = vkp__libc_free;
    vkp__allocator.ctx = NULL;
  }
}

void *vkp__malloc(size_t size) {
  return vkp__allocator.alloc(vkp__allocator.ctx, size ? size : 1);
}

void *vkp__calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = vkp__malloc(n * size);
  if (p) memset(p, 0, (n * size) != 0 ? n * size : 1);
  return p;
}

void *vkp__realloc(void *ptr, size_t size) {
  if (!ptr) return vkp__malloc(size);
  return vkp__allocator.realloc(vkp__allocator.ctx, ptr, size ? size : 1);
}

void *vkp__reallocarray(void *ptr, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return vkp__realloc(ptr, n * size);
}

void vkp__free(void *ptr) {
  if (ptr) vkp__allocator.free(vkp__allocator.ctx, ptr);
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
  // The system allocator, not the hook: the question is about the process.
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
