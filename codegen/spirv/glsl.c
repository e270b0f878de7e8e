// SPDX-License-Identifier: Apache-2.0
#include "codegen/spirv/glsl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

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

