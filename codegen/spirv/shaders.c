// SPDX-License-Identifier: Apache-2.0
// The embedded templates of shaders.h's list: each file's bytes (generated at
// build time, cmake/vkp_embed.cmake) indexed by vkp__shader_t.
#include "codegen/spirv/shaders.h"

#include "vkpipe_spirv_shaders.inc"

static const unsigned char *const vkp__shader_bytes[VKP__SHADER_COUNT] = {
#define VKP__SHADER_X(name, ext) [VKP__SHADER_##name] = vkp__shader_bytes_##name,
#define VKP__SHADER_ROW(name) \
  VKP__SHADER_X(name, comp) VKP__SHADER_X(name##_wg, comp)
    VKP_SPIRV_SHADER_LIST(VKP__SHADER_X, VKP__SHADER_ROW)
#undef VKP__SHADER_X
#undef VKP__SHADER_ROW
};

static const vkp__shader_t vkp__row_variants[VKP__ROW_COUNT][2] = {
#define VKP__SHADER_X(name, ext)
#define VKP__SHADER_ROW(name) \
  [VKP__ROW_##name] = {VKP__SHADER_##name, VKP__SHADER_##name##_wg},
    VKP_SPIRV_SHADER_LIST(VKP__SHADER_X, VKP__SHADER_ROW)
#undef VKP__SHADER_X
#undef VKP__SHADER_ROW
};

const char *vkp__shader_text(vkp__shader_t shader) {
  return (const char *)vkp__shader_bytes[shader];
}

vkp__shader_t vkp__row_shader(vkp__row_shader_t row, bool per_workgroup) {
  return vkp__row_variants[row][per_workgroup ? 1 : 0];
}
