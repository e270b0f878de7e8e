// SPDX-License-Identifier: Apache-2.0
#include "base/sb.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

void vkp__sb_init(vkp__sb_t *sb) { memset(sb, 0, sizeof(*sb)); }

void vkp__sb_deinit(vkp__sb_t *sb) {
  vkp__free(sb->data);
  memset(sb, 0, sizeof(*sb));
}

static bool vkp__sb_reserve(vkp__sb_t *sb, size_t extra) {
  if (sb->failed) return false;
  if (sb->len + extra + 1 <= sb->cap) return true;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      sb->failed = true;
      return false;
    }
    cap *= 2;
  }
  char *data = vkp__realloc(sb->data, cap);
  if (!data) {
    sb->failed = true;
    return false;
  }
  sb->data = data;
  sb->cap = cap;
  return true;
}

void vkp__sb_appendn(vkp__sb_t *sb, const char *text, size_t n) {
  if (!vkp__sb_reserve(sb, n)) return;
  memcpy(sb->data + sb->len, text, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void vkp__sb_append(vkp__sb_t *sb, const char *text) {
  vkp__sb_appendn(sb, text, strlen(text));
}

void vkp__sb_cat(vkp__sb_t *dst, const vkp__sb_t *src) {
  if (src->data) vkp__sb_appendn(dst, src->data, src->len);
  if (src->failed) dst->failed = true;
}

void vkp__sb_vprintf(vkp__sb_t *sb, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n < 0) {
    sb->failed = true;
  } else if (vkp__sb_reserve(sb, (size_t)n)) {
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, again);
    sb->len += (size_t)n;
  }
  va_end(again);
}

void vkp__sb_printf(vkp__sb_t *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkp__sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

void vkp__sb_indent(vkp__sb_t *sb, int level) {
  static const char spaces[] = "                ";
  size_t n = level > 0 ? (size_t)level * VKP__SB_INDENT_WIDTH : 0;
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    vkp__sb_appendn(sb, spaces, k);
    n -= k;
  }
}

void vkp__sb_linef(vkp__sb_t *sb, int level, const char *fmt, ...) {
  vkp__sb_indent(sb, level);
  va_list ap;
  va_start(ap, fmt);
  vkp__sb_vprintf(sb, fmt, ap);
  va_end(ap);
  vkp__sb_appendn(sb, "\n", 1);
}

void vkp__sb_append_quoted(vkp__sb_t *sb, const char *text) {
  const char *run = text;
  for (const char *c = text;; ++c) {
    if (*c != '"' && *c != '\\' && *c != '\0') continue;
    vkp__sb_appendn(sb, run, (size_t)(c - run));
    if (*c == '\0') break;
    vkp__sb_appendn(sb, "\\", 1);
    vkp__sb_appendn(sb, c, 1);
    run = c + 1;
  }
}

vkp_status_t vkp__sb_status(const vkp__sb_t *sb, const char *what) {
  return sb->failed ? VKP_OOM(what) : NULL;
}

char *vkp__sb_take(vkp__sb_t *sb) {
  if (sb->failed) {
    vkp__sb_deinit(sb);
    return NULL;
  }
  char *text = sb->data;
  if (!text) text = vkp__strdup("");
  memset(sb, 0, sizeof(*sb));
  return text;
}

vkp_status_t vkp__lines_vappendf(char **lines, const char *what, const char *fmt,
                                 va_list ap) {
  vkp__sb_t sb = {0};
  if (*lines) vkp__sb_append(&sb, *lines);
  vkp__sb_vprintf(&sb, fmt, ap);
  vkp__sb_appendn(&sb, "\n", 1);
  char *joined = vkp__sb_take(&sb);
  if (!joined) return VKP_OOM(what);
  vkp__free(*lines);
  *lines = joined;
  return NULL;
}

vkp_status_t vkp__lines_appendf(char **lines, const char *what, const char *fmt,
                                ...) {
  va_list ap;
  va_start(ap, fmt);
  vkp_status_t st = vkp__lines_vappendf(lines, what, fmt, ap);
  va_end(ap);
  return st;
}
