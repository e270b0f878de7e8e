// SPDX-License-Identifier: Apache-2.0
//
// A growable text buffer for generated source (C, GLSL). Appends never fail
// loudly: the first allocation failure is remembered and reported by
// vkp__sb_status, so emitters append freely and check once at the end. A
// zeroed struct is an empty buffer.
//
//   vkp__sb_t sb = {0};
//   vkp__sb_printf(&sb, "#define M %uu\n", m);
//   VKP_RETURN_IF_ERROR(vkp__sb_status(&sb, "kernel text"));
//   use(sb.data);
//   vkp__sb_deinit(&sb);
//
// Not thread-safe; one builder per thread.
#ifndef VKPIPE_BASE_SB_H_
#define VKPIPE_BASE_SB_H_

#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/status.h"

typedef struct vkp__sb_t {
  char *data;      // owned; NUL-terminated when len > 0
  size_t len;
  size_t cap;
  bool failed;     // an allocation failed: contents are incomplete
} vkp__sb_t;

void vkp__sb_init(vkp__sb_t *sb);
void vkp__sb_deinit(vkp__sb_t *sb);
void vkp__sb_append(vkp__sb_t *sb, const char *text);
void vkp__sb_appendn(vkp__sb_t *sb, const char *text, size_t n);
void vkp__sb_printf(vkp__sb_t *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
// Appends all of `src` to `dst`; a failure in either sticks to `dst`.
void vkp__sb_cat(vkp__sb_t *dst, const vkp__sb_t *src);
// OUT_OF_MEMORY naming `what` when an append failed, else NULL.
vkp_status_t vkp__sb_status(const vkp__sb_t *sb, const char *what)
    VKP_MUST_USE;
// Hands the text over (owned by the caller, free with vkp__free) and resets
// the builder; NULL when an append failed.
char *vkp__sb_take(vkp__sb_t *sb);

#endif  // VKPIPE_BASE_SB_H_
