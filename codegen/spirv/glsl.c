// SPDX-License-Identifier: Apache-2.0
#include "codegen/spirv/glsl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

void vkp__sb_append(vkp__sb_t *sb, const char *text) {
  size_t n = strlen(text);
  if (!vkp__sb_reserve(sb, n)) return;
  memcpy(sb->data + sb->len, text, n + 1);
  sb->len += n;
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

void vkp__glsl_literal(double value, char *buf, size_t size) {
  float f = (float)value;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  // A decimal literal reads better in dumps; the bit pattern covers what has
  // no exact GLSL literal (infinities, NaN, values near FLT_MAX).
  char text[48];
  snprintf(text, sizeof text, "%.9g", (double)f);
  bool finite = f == f && f > -1e30f && f < 1e30f;
  if (!finite || strtof(text, NULL) != f)
    snprintf(buf, size, "uintBitsToFloat(0x%08xu)", (unsigned)bits);
  else
    snprintf(buf, size, "%s%s", text, strpbrk(text, ".e") ? "" : ".0");
}

void vkp__sb_float(vkp__sb_t *sb, double value) {
  char lit[64];
  vkp__glsl_literal(value, lit, sizeof lit);
  vkp__sb_append(sb, lit);
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
