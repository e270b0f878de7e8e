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

void vkp__sb_printf(vkp__sb_t *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    sb->failed = true;
    return;
  }
  if (!vkp__sb_reserve(sb, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
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
