// SPDX-License-Identifier: Apache-2.0
//
// GLSL literals on top of the text buffer (base/sb.h) the generator uses.
#ifndef VKPIPE_CODEGEN_SPIRV_GLSL_H_
#define VKPIPE_CODEGEN_SPIRV_GLSL_H_

#include <stdbool.h>
#include <stddef.h>

#include "base/sb.h"
#include "vkpipe/status.h"

// Appends a float32 constant as a GLSL expression that is exact (bit
// pattern) for every value, NaN and infinities included.
void vkp__sb_float(vkp__sb_t *sb, double value);
// The same literal into a buffer.
void vkp__glsl_literal(double value, char *buf, size_t size);

#endif  // VKPIPE_CODEGEN_SPIRV_GLSL_H_
