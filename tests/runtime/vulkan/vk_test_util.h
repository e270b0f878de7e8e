// SPDX-License-Identifier: Apache-2.0
// Helpers of the Vulkan runtime tests: a validated device, GLSL compiled with
// glslc, and small hand-built programs (a local stand-in for the SPIR-V
// codegen, which lives elsewhere).
#ifndef VKPIPE_TESTS_RUNTIME_VULKAN_VK_TEST_UTIL_H_
#define VKPIPE_TESTS_RUNTIME_VULKAN_VK_TEST_UTIL_H_

#include <stdint.h>

#include "codegen/spirv/program.h"
#include "runtime/vulkan/device.h"
#include "vkpipe/graph.h"

// Keeps the Vulkan driver and validation layer loaded until exit (so leak
// reports can name them). vkp_vk_test_device calls it.
void vkp_vk_test_pin_vulkan_libraries(void);

// A device with validation and synchronization validation on (fails the test
// when none can be made). `force_copies` takes the discrete-GPU path.
vkp_vk_device_t *vkp_vk_test_device(bool force_copies);
// Destroys the device and asserts that no validation message was counted.
void vkp_vk_test_device_done(vkp_vk_device_t *device);

// Compiles a compute shader with glslc; the words are malloc'd (free()).
uint32_t *vkp_vk_test_compile(const char *glsl, size_t *out_words);

// A GLSL compute shader: y[i] = EXPR for i < n, with a, b, y bound at 0, 1, 2
// (float arrays) and i the global x index (gl_WorkGroupID-based, so grids
// split with a base work). `expr` is GLSL over a[i], b[i], i.
char *vkp_vk_test_binary_glsl(const char *expr, uint32_t n, uint32_t local_size);

// Fills a dispatch of `glsl` (name copied, code owned): `local` invocations
// per workgroup along x, `groups` workgroups, `n_bindings` zeroed bindings
// for the caller to fill.
void vkp_vk_test_glsl_dispatch(vkp_spirv_dispatch_t *d, const char *name, const char *glsl,
                               uint32_t local, uint32_t groups, int32_t n_bindings);
// Fills a dispatch (name and bindings copied, code owned): three bindings of
// whole buffers `a`, `b`, `y` of `n` floats each, `local` invocations per
// workgroup along x.
void vkp_vk_test_dispatch(vkp_spirv_dispatch_t *d, const char *name,
                          const char *expr, uint32_t n, uint32_t local, int32_t a,
                          int32_t b, int32_t y);
// Frees what vkp_vk_test_dispatch and a test's program arrays hold (the
// program struct itself is the test's).
void vkp_vk_test_program_free(vkp_spirv_program_t *p);

#endif  // VKPIPE_TESTS_RUNTIME_VULKAN_VK_TEST_UTIL_H_
