// SPDX-License-Identifier: Apache-2.0
#include "codegen/spirv/compile.h"

#include <shaderc/shaderc.h>
#include <spirv-tools/libspirv.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

struct vkp__spirv_compiler_t {
  shaderc_compiler_t shaderc;
  shaderc_compile_options_t options;
  spv_context context;
};

vkp_status_t vkp__spirv_compiler_create(vkp__spirv_compiler_t **out_compiler) {
  *out_compiler = NULL;
  vkp__spirv_compiler_t *c = vkp__calloc(1, sizeof(*c));
  if (!c) return VKP_OOM("SPIR-V compiler");
  c->shaderc = shaderc_compiler_initialize();
  c->options = shaderc_compile_options_initialize();
  c->context = spvContextCreate(SPV_ENV_VULKAN_1_2);
  if (!c->shaderc || !c->options || !c->context) {
    vkp__spirv_compiler_destroy(c);
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "cannot initialise shaderc / SPIRV-Tools");
  }
  shaderc_compile_options_set_target_env(c->options, shaderc_target_env_vulkan,
                                         shaderc_env_version_vulkan_1_2);
  shaderc_compile_options_set_source_language(c->options,
                                              shaderc_source_language_glsl);
  shaderc_compile_options_set_optimization_level(
      c->options, shaderc_optimization_level_performance);
  *out_compiler = c;
  return NULL;
}

void vkp__spirv_compiler_destroy(vkp__spirv_compiler_t *compiler) {
  if (!compiler) return;
  if (compiler->context) spvContextDestroy(compiler->context);
  if (compiler->options) shaderc_compile_options_release(compiler->options);
  if (compiler->shaderc) shaderc_compiler_release(compiler->shaderc);
  vkp__free(compiler);
}

vkp_status_t vkp__spirv_validate(vkp__spirv_compiler_t *compiler,
                                 const uint32_t *words, size_t n_words) {
  spv_diagnostic diag = NULL;
  spv_result_t res =
      spvValidateBinary(compiler->context, words, n_words, &diag);
  if (res == SPV_SUCCESS) {
    spvDiagnosticDestroy(diag);
    return NULL;
  }
  vkp_status_t st = vkp_status_make(
      VKP_STATUS_INTERNAL, "SPIR-V validation failed (%d): %s", (int)res,
      diag && diag->error ? diag->error : "no message");
  spvDiagnosticDestroy(diag);
  return st;
}

vkp_status_t vkp__spirv_compile(vkp__spirv_compiler_t *compiler,
                                const char *glsl, const char *name,
                                uint32_t **out_words, size_t *out_n_words) {
  *out_words = NULL;
  *out_n_words = 0;
  shaderc_compilation_result_t res = shaderc_compile_into_spv(
      compiler->shaderc, glsl, strlen(glsl), shaderc_glsl_compute_shader, name,
      "main", compiler->options);
  if (!res) return VKP_OOM("shaderc result");
  shaderc_compilation_status status = shaderc_result_get_compilation_status(res);
  if (status != shaderc_compilation_status_success) {
    const char *why = shaderc_result_get_error_message(res);
    vkp_status_t st;
    if (status == shaderc_compilation_status_compilation_error && why && why[0]) {
      st = vkp_status_make(VKP_STATUS_INTERNAL, "GLSL of '%s' does not compile: %s",
                           name, why);
    } else if (vkp__memory_is_short(VKP__MEMORY_PROBE_MIB)) {
      // glslang reports an allocation failure as an internal error with no
      // text; a probe that fails too says what it was.
      st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                           "out of memory while compiling kernel '%s' to SPIR-V "
                           "(the GLSL compiler failed%s%s, and a %d MiB allocation "
                           "fails now too)",
                           name, why && why[0] ? ": " : " without a message",
                           why && why[0] ? why : "", VKP__MEMORY_PROBE_MIB);
    } else {
      st = vkp_status_make(VKP_STATUS_INTERNAL,
                           "the GLSL compiler failed on kernel '%s' (shaderc status "
                           "%d): %s",
                           name, (int)status, why && why[0] ? why : "no message");
    }
    shaderc_result_release(res);
    return st;
  }
  size_t bytes = shaderc_result_get_length(res);
  if (bytes == 0 || bytes % 4 != 0) {
    shaderc_result_release(res);
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "shaderc returned %zu bytes for '%s'", bytes, name);
  }
  uint32_t *words = vkp__malloc(bytes);
  if (!words) {
    shaderc_result_release(res);
    return VKP_OOM("SPIR-V words");
  }
  memcpy(words, shaderc_result_get_bytes(res), bytes);
  shaderc_result_release(res);
  vkp_status_t st = vkp__spirv_validate(compiler, words, bytes / 4);
  if (st) {
    vkp__free(words);
    return vkp_status_annotate(st, "kernel '%s'", name);
  }
  *out_words = words;
  *out_n_words = bytes / 4;
  return NULL;
}

vkp_status_t vkp__spirv_disassemble(vkp__spirv_compiler_t *compiler,
                                    const uint32_t *words, size_t n_words,
                                    char **out_text) {
  *out_text = NULL;
  spv_text text = NULL;
  spv_diagnostic diag = NULL;
  spv_result_t res = spvBinaryToText(
      compiler->context, words, n_words,
      SPV_BINARY_TO_TEXT_OPTION_INDENT | SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES,
      &text, &diag);
  if (res != SPV_SUCCESS) {
    vkp_status_t st = vkp_status_make(
        VKP_STATUS_INTERNAL, "SPIR-V disassembly failed: %s",
        diag && diag->error ? diag->error : "no message");
    spvDiagnosticDestroy(diag);
    spvTextDestroy(text);
    return st;
  }
  spvDiagnosticDestroy(diag);
  *out_text = vkp__strndup(text->str, text->length);
  spvTextDestroy(text);
  return *out_text ? NULL : VKP_OOM("disassembly");
}
