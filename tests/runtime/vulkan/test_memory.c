// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "runtime/vulkan/memory.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

enum {
  DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
  HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
  HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
  CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
  LAZY = VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT,
  PROT = VK_MEMORY_PROPERTY_PROTECTED_BIT,
  AMD_COHERENT = 0x40,
  AMD_UNCACHED = 0x80,
};

typedef struct {
  uint32_t flags, heap;
} type_t;

static VkPhysicalDeviceMemoryProperties table(int n_heaps, const uint32_t *heap_flags,
                                              int n_types, const type_t *types) {
  VkPhysicalDeviceMemoryProperties p;
  memset(&p, 0, sizeof p);
  p.memoryHeapCount = (uint32_t)n_heaps;
  for (int h = 0; h < n_heaps; ++h) {
    p.memoryHeaps[h].size = (VkDeviceSize)1 << 30;
    p.memoryHeaps[h].flags = heap_flags[h];
  }
  p.memoryTypeCount = (uint32_t)n_types;
  for (int t = 0; t < n_types; ++t) {
    p.memoryTypes[t].propertyFlags = types[t].flags;
    p.memoryTypes[t].heapIndex = types[t].heap;
  }
  return p;
}

#define ALL_TYPES 0xffffffffu
#define HEAP_DL VK_MEMORY_HEAP_DEVICE_LOCAL_BIT

Test(memory, discrete_nvidia_like, .timeout = 10) {
  const uint32_t heaps[] = {HEAP_DL, 0, HEAP_DL};
  const type_t types[] = {{0, 1}, {DL, 0}, {HV | HC, 1}, {HV | HC | CA, 1},
                          {DL | HV | HC, 2}};
  VkPhysicalDeviceMemoryProperties p = table(3, heaps, 5, types);
  cr_assert_not(vkp_vk_memory_is_unified(&p));
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_DEVICE), 1);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_UPLOAD), 2);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_READBACK), 3);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_STAGING), 3);
  // The buffer may not live in type 1: the BAR window is the device-local one.
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES & ~2u, VKP_VK_MEMORY_DEVICE), 4);
  // Only host-visible uncached memory allowed: readback still works.
  cr_assert_eq(vkp_vk_memory_choose_type(&p, 1u << 2, VKP_VK_MEMORY_READBACK), 2);
  // Nothing allowed.
  cr_assert_eq(vkp_vk_memory_choose_type(&p, 0, VKP_VK_MEMORY_DEVICE), -1);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, 1u << 1, VKP_VK_MEMORY_UPLOAD), -1);
}

Test(memory, discrete_amd_like_skips_special_types, .timeout = 10) {
  const uint32_t heaps[] = {HEAP_DL, 0, HEAP_DL};
  const type_t types[] = {{DL | AMD_COHERENT | AMD_UNCACHED, 0},
                          {DL, 0},
                          {HV | HC, 1},
                          {DL | HV | HC, 2},
                          {HV | HC | CA, 1},
                          {DL | PROT, 0},
                          {DL | LAZY, 0}};
  VkPhysicalDeviceMemoryProperties p = table(3, heaps, 7, types);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_DEVICE), 1);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_READBACK), 4);
  // Only special types allowed: none fits.
  uint32_t special = (1u << 0) | (1u << 5) | (1u << 6);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, special, VKP_VK_MEMORY_DEVICE), -1);
}

Test(memory, unified_lavapipe_like_uses_one_type, .timeout = 10) {
  const uint32_t heaps[] = {HEAP_DL};
  const type_t types[] = {{DL | HV | HC | CA, 0}};
  VkPhysicalDeviceMemoryProperties p = table(1, heaps, 1, types);
  cr_assert(vkp_vk_memory_is_unified(&p));
  for (int u = 0; u < VKP_VK_MEMORY_USAGE_COUNT; ++u)
    cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, (vkp_vk_memory_usage_t)u), 0,
                 "%s", vkp_vk_memory_usage_name((vkp_vk_memory_usage_t)u));
}

Test(memory, unified_integrated_prefers_host_visible_device_memory, .timeout = 10) {
  const uint32_t heaps[] = {HEAP_DL};
  const type_t types[] = {{DL, 0}, {DL | HV | HC, 0}, {DL | HV | HC | CA, 0}};
  VkPhysicalDeviceMemoryProperties p = table(1, heaps, 3, types);
  cr_assert(vkp_vk_memory_is_unified(&p));
  // Weights go where the host can write them in place: no copies.
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_DEVICE), 2);
  int32_t up = vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_UPLOAD);
  cr_assert(up == 1 || up == 2);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_READBACK), 2);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_STAGING), 2);
}

Test(memory, no_host_visible_memory, .timeout = 10) {
  const uint32_t heaps[] = {HEAP_DL, 0};
  const type_t types[] = {{DL, 0}};
  VkPhysicalDeviceMemoryProperties p = table(2, heaps, 1, types);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_DEVICE), 0);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, VKP_VK_MEMORY_STAGING), -1);
  cr_assert_eq(vkp_vk_memory_choose_type(&p, ALL_TYPES, (vkp_vk_memory_usage_t)99), -1);
}

Test(memory, suballocation_on_the_device, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  enum { N = 40 };
  vkp_vk_buffer_t bufs[N];
  memset(bufs, 0, sizeof bufs);
  const VkDeviceSize align = dev->properties.limits.minStorageBufferOffsetAlignment;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < N; ++i) {
      if (bufs[i].buffer && vkp_test_rng_below(&rng, 2)) vkp_vk_buffer_deinit(&bufs[i], dev);
      if (bufs[i].buffer) continue;
      VkDeviceSize size = 4 + vkp_test_rng_below(&rng, 20000);
      VKP_TEST_OK(vkp_vk_buffer_init(&bufs[i], dev, size, VKP_VK_MEMORY_DEVICE));
      // Unified memory (lavapipe) maps device buffers; a discrete GPU's
      // device-local memory is not host-visible, and only offsets are checked.
      if (dev->unified_memory) cr_assert_not_null(bufs[i].allocation.host);
      cr_assert_eq(bufs[i].allocation.offset % align, 0);
      if (bufs[i].allocation.host) memset(bufs[i].allocation.host, i, (size_t)size);
    }
    // Live allocations never overlap, and each keeps its bytes.
    for (int i = 0; i < N; ++i) {
      const unsigned char *p = bufs[i].allocation.host;
      for (VkDeviceSize k = 0; p && k < bufs[i].size; k += 97)
        cr_assert_eq(p[k], (unsigned char)i);
      for (int j = i + 1; j < N; ++j) {
        if (bufs[i].allocation.memory != bufs[j].allocation.memory) continue;
        const vkp_vk_allocation_t *x = &bufs[i].allocation, *y = &bufs[j].allocation;
        cr_assert(x->offset + x->size <= y->offset || y->offset + y->size <= x->offset);
      }
    }
  }
  cr_assert_eq(vkp_vk_allocator_block_count(dev->allocator), 1,
               "small buffers share one block");
  vkp_vk_buffer_t big;
  VKP_TEST_OK(vkp_vk_buffer_init(&big, dev, (VkDeviceSize)80 << 20, VKP_VK_MEMORY_DEVICE));
  cr_assert_eq(vkp_vk_allocator_block_count(dev->allocator), 2,
               "a buffer bigger than a block gets its own");
  vkp_vk_buffer_deinit(&big, dev);
  for (int i = 0; i < N; ++i) vkp_vk_buffer_deinit(&bufs[i], dev);
  cr_assert_eq(vkp_vk_allocator_block_count(dev->allocator), 0);
  vkp_vk_test_device_done(dev);
}
