// SPDX-License-Identifier: Apache-2.0
//
// GLSL -> SPIR-V: compile with libshaderc (optimised for performance),
// validate with SPIRV-Tools, and disassemble on request.
//
//   vkp__spirv_compiler_t *c;
//   st = vkp__spirv_compiler_create(&c);
//   st = vkp__spirv_compile(c, glsl, "conv1", &words, &n_words);
//   st = vkp__spirv_disassemble(c, words, n_words, &text);   // for dumps
//   vkp__spirv_compiler_destroy(c);
//
// Optimisation: Debian 12's SPIRV-Tools (2023.1) has no C entry points for
// its optimizer (spvOptimizerCreate/Run arrived later), and its C++ API is not
// usable from C. shaderc's "performance" optimisation level runs the same
// SPIRV-Tools performance passes, so that is how the optimizer is applied; the
// validator then checks the optimised binary that gets stored.
//
// A compiler is used by one thread at a time; make one per codegen call.
#ifndef VKPIPE_CODEGEN_SPIRV_COMPILE_H_
#define VKPIPE_CODEGEN_SPIRV_COMPILE_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/status.h"

typedef struct vkp__spirv_compiler_t vkp__spirv_compiler_t;

vkp_status_t vkp__spirv_compiler_create(vkp__spirv_compiler_t **out_compiler)
    VKP_MUST_USE;
void vkp__spirv_compiler_destroy(vkp__spirv_compiler_t *compiler);

// Compiles compute-shader `glsl` (borrowed) named `name` (for messages) to
// optimised, validated SPIR-V for Vulkan 1.2. *out_words is owned by the
// caller (vkp__free). Compile and validation errors are INTERNAL statuses
// carrying the compiler's message.
vkp_status_t vkp__spirv_compile(vkp__spirv_compiler_t *compiler,
                                const char *glsl, const char *name,
                                uint32_t **out_words, size_t *out_n_words)
    VKP_MUST_USE;

// Validates SPIR-V words against the Vulkan 1.2 environment.
vkp_status_t vkp__spirv_validate(vkp__spirv_compiler_t *compiler,
                                 const uint32_t *words, size_t n_words)
    VKP_MUST_USE;

// Disassembles SPIR-V; *out_text owned by the caller (vkp__free).
vkp_status_t vkp__spirv_disassemble(vkp__spirv_compiler_t *compiler,
                                    const uint32_t *words, size_t n_words,
                                    char **out_text) VKP_MUST_USE;

#endif  // VKPIPE_CODEGEN_SPIRV_COMPILE_H_
