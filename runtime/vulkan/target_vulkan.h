// SPDX-License-Identifier: Apache-2.0
//
// Registration of the "vulkan" target (internal; the registry finds it
// through the CMake-generated built-in list).
//
//   vkp_registry_t *reg;
//   st = vkp_registry_create(&reg);
//   st = vkp_target_vulkan_add(reg, &(vkp_vk_device_options_t){.validation = 1});
//   const vkp_target_t *vk = vkp_registry_find(reg, "vulkan");  // NULL when
//   // unavailable; vkp_registry_unavailable_reason says why
//
// Thread-safety: as target.h.
#ifndef VKPIPE_RUNTIME_VULKAN_TARGET_VULKAN_H_
#define VKPIPE_RUNTIME_VULKAN_TARGET_VULKAN_H_

#include "codegen/spirv/program.h"
#include "runtime/vulkan/device.h"
#include "vkpipe/target.h"

// Brings up a device with `options` (NULL: defaults and env vars) and adds
// the target; when that fails, records "vulkan" as unavailable with the
// reason and returns OK. Errors only for registry failures (duplicate name,
// out of memory).
vkp_status_t vkp_target_vulkan_add(vkp_registry_t *registry,
                                   const vkp_vk_device_options_t *options)
    VKP_MUST_USE;

// The built-in registration hook (vkp_target_vulkan_add with NULL options).
vkp_status_t vkp_target_vulkan_register(vkp_registry_t *registry) VKP_MUST_USE;

// The device behind a "vulkan" target (borrowed), brought up if it is not
// yet; NULL for other targets or when it cannot be brought up.
vkp_vk_device_t *vkp_target_vulkan_device(const vkp_target_t *target);
// Whether the target's device has been brought up (a stage, staging buffer
// or timeline needed it, or vkp_target_vulkan_device was called).
bool vkp_target_vulkan_is_up(const vkp_target_t *target);

// What the codegen needs to know about `device`.
void vkp_vk_device_info(const vkp_vk_device_t *device, vkp_spirv_device_info_t *out);

// The vtable's dump entry (runtime/vulkan/dump.c): per dispatch, its SPIR-V
// (NNN.spv) and disassembly (NNN.spvasm), plus program.txt (buffers, grids).
vkp_status_t vkp__vulkan_dump(const vkp_target_t *target, const vkp_graph_t *graph,
                              const void *blob, size_t blob_size, const char *dir)
    VKP_MUST_USE;

// What compile writes when options->dump_dir is set (codegen itself writes
// nothing): per dispatch <dir>/<NNN>_<name>.comp (the GLSL), .spv and .spvasm.
// Creates `dir` when missing.
vkp_status_t vkp__vulkan_dump_sources(const vkp_spirv_program_t *program,
                                      const char *dir) VKP_MUST_USE;

#endif  // VKPIPE_RUNTIME_VULKAN_TARGET_VULKAN_H_
