// SPDX-License-Identifier: Apache-2.0
//
// Vulkan memory: which memory type serves which use (a pure function, tested
// on fabricated property tables) and a sub-allocator that carves buffers out
// of large VkDeviceMemory blocks.
//
//   int32_t type = vkp_vk_memory_choose_type(&props, req.memoryTypeBits,
//                                            VKP_VK_MEMORY_READBACK);
//   vkp_vk_buffer_t buf;
//   st = vkp_vk_buffer_init(&buf, dev, 4096, VKP_VK_MEMORY_DEVICE);
//   ... buf.buffer, buf.allocation.host (NULL unless host-visible) ...
//   vkp_vk_buffer_deinit(&buf, dev);
//
// Thread-safety: the chooser is pure; the allocator locks itself, so buffers
// may be created and destroyed from several threads.
#ifndef VKPIPE_RUNTIME_VULKAN_MEMORY_H_
#define VKPIPE_RUNTIME_VULKAN_MEMORY_H_

#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "runtime/vulkan/device.h"
#include "vkpipe/status.h"

// X(ENUM, "name"): what a buffer is for.
#define VKP_VK_MEMORY_USAGE_LIST(X)                                         \
  /* weights, activations, scratch: device-local (host-visible too on    */ \
  /* unified memory, so constants are written in place)                  */ \
  X(DEVICE, "device")                                                       \
  /* host writes, device reads: host-visible and coherent                */ \
  X(UPLOAD, "upload")                                                       \
  /* device writes, host reads: host-visible, coherent, cached preferred */ \
  X(READBACK, "readback")                                                   \
  /* pipeline staging slots, both directions: like READBACK, and          */ \
  /* device-local preferred so unified devices bind them in place        */ \
  X(STAGING, "staging")

typedef enum vkp_vk_memory_usage_t {
#define VKP__VK_MEMORY_USAGE_ENUM(e, s) VKP_VK_MEMORY_##e,
  VKP_VK_MEMORY_USAGE_LIST(VKP__VK_MEMORY_USAGE_ENUM)
#undef VKP__VK_MEMORY_USAGE_ENUM
  VKP_VK_MEMORY_USAGE_COUNT
} vkp_vk_memory_usage_t;

const char *vkp_vk_memory_usage_name(vkp_vk_memory_usage_t usage);

// True when every heap is device-local (lavapipe, integrated GPUs): one
// host-visible allocation serves both sides and no copies are needed.
bool vkp_vk_memory_is_unified(const VkPhysicalDeviceMemoryProperties *props);

// The memory type index for `usage` among the types allowed by `type_bits`
// (VkMemoryRequirements::memoryTypeBits), or -1 when none fits. Pure.
int32_t vkp_vk_memory_choose_type(const VkPhysicalDeviceMemoryProperties *props,
                                  uint32_t type_bits,
                                  vkp_vk_memory_usage_t usage);

// ---------------------------------------------------------------------------
// Sub-allocator

// A piece of a block. `host` is the mapped address of `offset` when the
// memory is host-visible (blocks stay mapped), else NULL.
typedef struct vkp_vk_allocation_t {
  VkDeviceMemory memory;
  VkDeviceSize offset;
  VkDeviceSize size;
  void *host;
  void *block;  // allocator-private
} vkp_vk_allocation_t;

// `block_size`: bytes per block (0: 64 MiB); bigger requests get a block of
// their own. Owned by the caller.
vkp_status_t vkp_vk_allocator_create(VkDevice device,
                                     const VkPhysicalDeviceMemoryProperties *props,
                                     VkDeviceSize block_size,
                                     VkDeviceSize max_allocation_size,
                                     vkp_vk_allocator_t **out_allocator)
    VKP_MUST_USE;
// Frees every block. All allocations must have been freed.
void vkp_vk_allocator_destroy(vkp_vk_allocator_t *allocator);

vkp_status_t vkp_vk_allocator_alloc(vkp_vk_allocator_t *allocator,
                                    const VkMemoryRequirements *requirements,
                                    vkp_vk_memory_usage_t usage,
                                    vkp_vk_allocation_t *out_allocation)
    VKP_MUST_USE;
// Returns the range; an emptied block is given back to the driver. A zeroed
// allocation is fine.
void vkp_vk_allocator_free(vkp_vk_allocator_t *allocator,
                           vkp_vk_allocation_t *allocation);

// Blocks currently held (for tests).
int32_t vkp_vk_allocator_block_count(vkp_vk_allocator_t *allocator);

// ---------------------------------------------------------------------------
// Buffers

typedef struct vkp_vk_buffer_t {
  VkBuffer buffer;
  VkDeviceSize size;
  vkp_vk_allocation_t allocation;
} vkp_vk_buffer_t;

// Initialises caller storage `buffer` as a storage + transfer-src/dst buffer
// of `size` bytes bound to sub-allocated memory for `usage`. On failure the
// struct is left zeroed.
vkp_status_t vkp_vk_buffer_init(vkp_vk_buffer_t *buffer,
                                vkp_vk_device_t *device, VkDeviceSize size,
                                vkp_vk_memory_usage_t usage) VKP_MUST_USE;
// Destroys the buffer, frees its memory and zeroes the struct; a zeroed
// struct is fine.
void vkp_vk_buffer_deinit(vkp_vk_buffer_t *buffer, vkp_vk_device_t *device);

#endif  // VKPIPE_RUNTIME_VULKAN_MEMORY_H_
