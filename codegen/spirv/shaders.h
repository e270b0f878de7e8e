// SPDX-License-Identifier: Apache-2.0
//
// The GLSL templates of shaders/, declared once. The build embeds exactly
// the files this list names (codegen/spirv/CMakeLists.txt reads it) and
// fails when one is missing or when shaders/ holds a file it does not name;
// kernels name a template by its enum value, so a template that is not
// declared is a compile error, never a kernel that fails at run time.
//
//   X(name, ext)  shaders/<name>.<ext>: a kernel template (comp) or a piece
//                 pasted into others (glsl)
//   ROW(name)     a row kernel in two variants: shaders/<name>.comp (one
//                 invocation per row) and shaders/<name>_wg.comp (one
//                 workgroup per row); vkp__spv_row_kernel picks one
//
// One row per line, as CMake reads it.
#ifndef VKPIPE_CODEGEN_SPIRV_SHADERS_H_
#define VKPIPE_CODEGEN_SPIRV_SHADERS_H_

#include <stdbool.h>

#define VKP_SPIRV_SHADER_LIST(X, ROW) \
  X(math, glsl)                       \
  X(workgroup_reduce, glsl)           \
  X(coopmat_tile, glsl)               \
  X(arg, comp)                        \
  X(attention, comp)                  \
  X(concat, comp)                     \
  X(conv2d, comp)                     \
  X(conv_depthwise, comp)             \
  X(conv_gemm_coopmat, comp)          \
  X(conv_gemm_blocked, comp)          \
  X(conv_gemm_tiled, comp)            \
  X(conv_pad, comp)                   \
  X(conv_split, comp)                 \
  X(conv_transpose, comp)             \
  X(conv_transpose_gemm, comp)        \
  X(cum_sum, comp)                    \
  X(det, comp)                        \
  X(dft, comp)                        \
  X(element, comp)                    \
  X(elementwise, comp)                \
  X(eye_like, comp)                   \
  X(gather, comp)                     \
  X(gather_elements, comp)            \
  X(gather_index, comp)               \
  X(grid_sample, comp)                \
  X(gemm_blocked, comp)               \
  X(gemm_coopmat, comp)               \
  X(gemm_splitk_reduce, comp)         \
  X(gemm_tiled, comp)                 \
  X(loss, comp)                       \
  X(lrn, comp)                        \
  X(pool, comp)                       \
  X(remap, comp)                      \
  X(resize, comp)                     \
  X(rnn, comp)                        \
  X(top_k, comp)                      \
  X(trilu, comp)                      \
  ROW(group_norm)                     \
  ROW(hardmax)                        \
  ROW(layer_norm)                     \
  ROW(lp_norm)                        \
  ROW(mvn)                            \
  ROW(reduce)                         \
  ROW(softmax)

// Every template file, variants included.
typedef enum vkp__shader_t {
#define VKP__SHADER_X(name, ext) VKP__SHADER_##name,
#define VKP__SHADER_ROW(name) VKP__SHADER_##name, VKP__SHADER_##name##_wg,
  VKP_SPIRV_SHADER_LIST(VKP__SHADER_X, VKP__SHADER_ROW)
#undef VKP__SHADER_X
#undef VKP__SHADER_ROW
  VKP__SHADER_COUNT
} vkp__shader_t;

// The row kernels, each naming its two variants.
typedef enum vkp__row_shader_t {
#define VKP__SHADER_X(name, ext)
#define VKP__SHADER_ROW(name) VKP__ROW_##name,
  VKP_SPIRV_SHADER_LIST(VKP__SHADER_X, VKP__SHADER_ROW)
#undef VKP__SHADER_X
#undef VKP__SHADER_ROW
  VKP__ROW_COUNT
} vkp__row_shader_t;

// The text of a template (embedded at build time; never NULL).
const char *vkp__shader_text(vkp__shader_t shader);
// The per-invocation and per-workgroup variants of a row kernel.
vkp__shader_t vkp__row_shader(vkp__row_shader_t row, bool per_workgroup);

#endif  // VKPIPE_CODEGEN_SPIRV_SHADERS_H_
