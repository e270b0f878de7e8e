// SPDX-License-Identifier: Apache-2.0
//
// The library's one growable text buffer: generated source (C, GLSL),
// Graphviz pictures, and messages built a line at a time. Appends never fail
// loudly: the first allocation failure is remembered and reported by
// vkp__sb_status, so emitters append freely and check once at the end. A
// zeroed struct is an empty buffer.
//
//   vkp__sb_t sb = {0};
//   vkp__sb_printf(&sb, "#define M %uu\n", m);
//   vkp__sb_linef(&sb, 1, "x[i] = %s;", expr);   // "  x[i] = ...;\n"
//   VKP_RETURN_IF_ERROR(vkp__sb_status(&sb, "kernel text"));
//   use(sb.data);
//   vkp__sb_deinit(&sb);
//
// Not thread-safe; one builder per thread.
#ifndef VKPIPE_BASE_SB_H_
#define VKPIPE_BASE_SB_H_

#include <stdarg.h>
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
void vkp__sb_vprintf(vkp__sb_t *sb, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

// Indentation for generated code: one level is VKP__SB_INDENT_WIDTH spaces.
#define VKP__SB_INDENT_WIDTH 2
// Appends `level` levels of indentation (nothing for level <= 0).
void vkp__sb_indent(vkp__sb_t *sb, int level);
// Appends one line: `level` levels of indentation, the formatted text, '\n'.
void vkp__sb_linef(vkp__sb_t *sb, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Appends `text` with '"' and '\\' escaped by a backslash, as the inside of a
// double-quoted string in C, GLSL or Graphviz.
void vkp__sb_append_quoted(vkp__sb_t *sb, const char *text);

// Appends all of `src` to `dst`; a failure in either sticks to `dst`.
void vkp__sb_cat(vkp__sb_t *dst, const vkp__sb_t *src);
// OUT_OF_MEMORY naming `what` when an append failed, else NULL.
vkp_status_t vkp__sb_status(const vkp__sb_t *sb, const char *what)
    VKP_MUST_USE;
// Hands the text over (owned by the caller, free with vkp__free) and resets
// the builder; NULL when an append failed.
char *vkp__sb_take(vkp__sb_t *sb);

// Appends the formatted text and a newline to the heap string `*lines`
// (NULL is empty; owned by the caller, free with vkp__free): for notes and
// messages built a line at a time. On failure OUT_OF_MEMORY naming `what`,
// with `*lines` unchanged.
vkp_status_t vkp__lines_appendf(char **lines, const char *what, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4))) VKP_MUST_USE;
vkp_status_t vkp__lines_vappendf(char **lines, const char *what, const char *fmt,
                                 va_list ap) __attribute__((format(printf, 3, 0)))
    VKP_MUST_USE;

#endif  // VKPIPE_BASE_SB_H_
