// SPDX-License-Identifier: Apache-2.0
//
// The Vulkan device layer: instance (with the Khronos validation layer and
// synchronization validation when VKPIPE_VALIDATION=1), physical-device choice,
// one logical device with one compute queue, the memory allocator and the
// on-disk pipeline cache.
//
//   vkp_vk_device_t *dev;
//   vkp_status_t st = vkp_vk_device_create(NULL, &dev);  // honours env vars
//   if (vkp_status_is(st, VKP_STATUS_UNAVAILABLE)) ...   // no usable driver
//   ... vkp_vk_queue_submit(dev, 1, &submit, VK_NULL_HANDLE) ...
//   vkp_vk_device_destroy(dev);
//
// Requirements: Vulkan 1.2 with the timelineSemaphore feature and a queue
// family with compute. Device preference: discrete GPU, integrated GPU,
// virtual GPU, CPU, other; VKPIPE_DEVICE=<index or name substring> overrides.
//
// Thread-safety: a created device is immutable except for the queue (every
// submit goes through vkp_vk_queue_submit, which holds a mutex) and the
// allocator (which locks itself); it may be shared by any number of threads.
#ifndef VKPIPE_RUNTIME_VULKAN_DEVICE_H_
#define VKPIPE_RUNTIME_VULKAN_DEVICE_H_

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "vkpipe/status.h"

typedef struct vkp_vk_allocator_t vkp_vk_allocator_t;

// What is known about one physical device, for choosing and for listing.
typedef struct vkp_vk_device_candidate_t {
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  VkPhysicalDeviceType type;
  uint32_t api_version;
  bool timeline_semaphore;  // feature present
  bool storage_8bit;        // storageBuffer8BitAccess present (bool tensors)
  bool shader_int64;        // shaderInt64 present (int64 tensors)
  bool storage_16bit;       // storageBuffer16BitAccess present (fp16 weights)
  bool shader_float16;      // shaderFloat16 present (reported, not enabled)
  bool shader_float64;      // shaderFloat64 present (float64 tensors)
  bool robust_buffer_access;   // robustBufferAccess present
  bool robust_buffer_access2;  // VK_EXT_robustness2's robustBufferAccess2
  bool has_compute_queue;
  // VK_NV_cooperative_matrix with its cooperativeMatrix feature, shaderFloat16,
  // vulkanMemoryModel and a subgroup-scope 16x16x16 product of float16 into float32 on a
  // subgroup of 32: what the codegen's coopmat kernels need (present; whether
  // it is used is vkp_vk_device_t.coopmat_f16).
  bool coopmat_f16;
} vkp_vk_device_candidate_t;

// Chooses among `n` candidates: the usable one (API >= 1.2, timeline
// semaphores, a compute queue) of the most preferred type, the first one on
// ties. `selector` (may be NULL or empty) overrides: all digits is an index,
// anything else a case-insensitive substring of the name. A pure function:
// the error says why nothing fits (no devices, selector matches none, the
// selected one lacks a requirement).
vkp_status_t vkp_vk_device_pick(const vkp_vk_device_candidate_t *candidates,
                                int32_t n, const char *selector,
                                int32_t *out_index) VKP_MUST_USE;

// How far vkpipe bounds-checks shader buffer accesses on a device
// (docs/robustness.md, "SPIR-V and the GPU"):
//   NONE:    no robustness feature: an out-of-range access is undefined.
//   BUFFER:  robustBufferAccess: accesses are checked against the binding's
//            range, but an out-of-range write may land anywhere in the same
//            VkBuffer and an out-of-range read may return any of its bytes.
//   BINDING: robustBufferAccess2 as well: out-of-range reads return zero and
//            out-of-range writes are dropped, against the binding's own
//            range (rounded up to robustStorageBufferAccessSizeAlignment).
typedef enum vkp_vk_robustness_t {
  VKP_VK_ROBUSTNESS_NONE = 0,
  VKP_VK_ROBUSTNESS_BUFFER = 1,
  VKP_VK_ROBUSTNESS_BINDING = 2,
} vkp_vk_robustness_t;

// The level vkpipe enables on candidate `c`: the highest it supports, capped
// by `setting` (NULL or empty: no cap; "0", "1" or "2": at most that level;
// $VKPIPE_VK_ROBUSTNESS is what the device layer passes). A pure function;
// INVALID_ARGUMENT names a setting it does not know.
vkp_status_t vkp_vk_robustness_choose(const vkp_vk_device_candidate_t *c,
                                      const char *setting,
                                      vkp_vk_robustness_t *out_level) VKP_MUST_USE;
// A line saying what `level` on candidate `c` gives ("robustBufferAccess2
// (...)"), or why it is NONE: "<device> lacks robustBufferAccess: ..." when
// the device does not support it. Static text copied into `buf`.
const char *vkp_vk_robustness_describe(const vkp_vk_device_candidate_t *c,
                                       vkp_vk_robustness_t level, char *buf,
                                       size_t buf_size);

// Preference rank of a device type: 0 (discrete) .. 4 (other).
int32_t vkp_vk_device_type_rank(VkPhysicalDeviceType type);
// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
const char *vkp_vk_device_type_name(VkPhysicalDeviceType type);

typedef struct vkp_vk_device_options_t {
  const char *selector;  // NULL: $VKPIPE_DEVICE
  int32_t validation;    // -1: $VKPIPE_VALIDATION; 0 off; 1 on
  // Test hook: behave as a discrete GPU (copy between staging and
  // device-local buffers) even on unified memory.
  bool force_copies;
} vkp_vk_device_options_t;

typedef struct vkp_vk_device_t {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;  // VK_NULL_HANDLE without validation
  VkPhysicalDevice physical;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family;
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceDriverProperties driver;
  VkPhysicalDeviceSubgroupProperties subgroup;
  VkPhysicalDeviceMemoryProperties memory;
  // Every memory type the device exposes is host-visible and device-local
  // (lavapipe, most integrated GPUs): stages bind staging memory in place.
  bool unified_memory;
  // storageBuffer8BitAccess is enabled: kernels may read and write bool
  // tensors as bytes (comparisons, logic, where).
  bool storage_8bit;
  // shaderInt64 is enabled: kernels may compute on int64 tensors.
  bool shader_int64;
  // storageBuffer16BitAccess is enabled: kernels may keep weights as
  // float16 (--precision fp16); shaderFloat16 as the device reports it.
  bool storage_16bit;
  bool shader_float16;
  // shaderFloat64 is enabled: kernels may compute on float64 tensors.
  bool shader_float64;
  // VK_NV_cooperative_matrix and shaderFloat16 are enabled for the codegen's
  // coopmat kernels: the candidate has them, the vendor is on the allowlist
  // (NVIDIA, where they were tested) and VKPIPE_VK_COOPMAT is not 0.
  bool coopmat_f16;
  // The bounds checking enabled on shader buffer accesses (robustBufferAccess,
  // and robustBufferAccess2 with VK_EXT_robustness2), chosen by
  // vkp_vk_robustness_choose. When the device lacks it, open prints one
  // line saying so to stderr (once per process); it is not an error.
  vkp_vk_robustness_t robustness;
  bool validation;
  VkPipelineCache pipeline_cache;
  char *pipeline_cache_path;  // owned; NULL when there is no cache directory
  vkp_vk_allocator_t *allocator;  // owned
  pthread_mutex_t queue_mutex;    // guards `queue`
} vkp_vk_device_t;

// Creates the instance and device. `options` may be NULL (defaults, env
// vars). *out_device is owned by the caller. No driver or no usable device
// gives UNAVAILABLE with the reason.
vkp_status_t vkp_vk_device_create(const vkp_vk_device_options_t *options,
                                  vkp_vk_device_t **out_device) VKP_MUST_USE;

// The two halves of create, for a target that brings the device up only
// when a stage needs it: open makes the instance and picks and describes
// the physical device (properties, features, limits: everything but
// `device`, `queue`, `allocator` and `pipeline_cache`, which stay null);
// realize creates those (nothing when they exist; on failure the device is
// left opened, and realize may be tried again). has_room says whether an
// address-space limit (ulimit -v) leaves the driver enough to create the
// device (false with *out_why saying why; the caller owns it).
vkp_status_t vkp_vk_device_open(const vkp_vk_device_options_t *options,
                                vkp_vk_device_t **out_device) VKP_MUST_USE;
vkp_status_t vkp_vk_device_realize(vkp_vk_device_t *device) VKP_MUST_USE;
bool vkp_vk_device_has_room(const vkp_vk_device_t *device, vkp_status_t *out_why);

// Waits for the device to go idle, saves the pipeline cache (failures are
// ignored: the cache is an optimisation) and frees everything. NULL is fine.
void vkp_vk_device_destroy(vkp_vk_device_t *device);

// Writes the pipeline cache to disk now; failures are not errors.
void vkp_vk_device_save_pipeline_cache(vkp_vk_device_t *device);

// Under an address-space limit (ulimit -v) on a driver that compiles shaders
// with LLVM in-process (lavapipe), which ends the process when an allocation
// fails: OUT_OF_MEMORY naming `what` unless enough address space is free to
// create pipelines. NULL otherwise, and always without a limit.
vkp_status_t vkp_vk_device_check_compile_room(const vkp_vk_device_t *device, const char *what);

// vkQueueSubmit under the queue mutex.
vkp_status_t vkp_vk_queue_submit(vkp_vk_device_t *device, uint32_t n_submits,
                                 const VkSubmitInfo *submits, VkFence fence)
    VKP_MUST_USE;

// Lists every physical device of a fresh instance (no validation):
// candidates plus full properties for printing. Arrays owned by the caller
// (vkp__free). UNAVAILABLE when there is no driver.
typedef struct vkp_vk_device_report_t {
  vkp_vk_device_candidate_t candidate;
  VkPhysicalDeviceProperties properties;
  VkPhysicalDeviceDriverProperties driver;
  VkPhysicalDeviceSubgroupProperties subgroup;
  VkPhysicalDeviceMemoryProperties memory;
} vkp_vk_device_report_t;
vkp_status_t vkp_vk_device_list(vkp_vk_device_report_t **out_reports,
                                int32_t *out_count, int32_t *out_chosen)
    VKP_MUST_USE;

// Whether `p` offers subgroup arithmetic in compute shaders (the
// codegen's row reductions then use them).
bool vkp_vk_subgroup_arith(const VkPhysicalDeviceSubgroupProperties *p);

// Whether vkpipe enables cooperative matrices on candidate `c` of vendor
// `vendor_id` (it offers them, the vendor is on the allowlist, and
// VKPIPE_VK_COOPMAT is not 0), with a line saying so in `buf` (may be NULL).
bool vkp_vk_coopmat_describe(const vkp_vk_device_candidate_t *c, uint32_t vendor_id,
                             char *buf, size_t buf_size);

// Validation messages (warning or error severity) seen by any device's debug
// messenger in this process, minus the ignored layer bug. Tests assert that
// it does not move.
uint64_t vkp_vk_validation_message_count(void);

#endif  // VKPIPE_RUNTIME_VULKAN_DEVICE_H_
