// SPDX-License-Identifier: Apache-2.0
// Staging memory and timeline semaphores: what the pipeline runtime needs to
// keep frames on the device between stages (see stage.h).
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "runtime/vulkan/stage.h"
#include "runtime/vulkan/vk_result.h"

vkp_status_t vkp_vk_staging_alloc(vkp_vk_device_t *device, size_t size,
                                  vkp_staging_t *out_staging) {
  memset(out_staging, 0, sizeof *out_staging);
  vkp_vk_buffer_t *buf = vkp__calloc(1, sizeof *buf);
  if (!buf) return VKP_OOM("staging buffer");
  vkp_status_t st = vkp_vk_buffer_init(buf, device, size, VKP_VK_MEMORY_STAGING);
  if (!st && !buf->allocation.host) {
    vkp_vk_buffer_deinit(buf, device);
    st = vkp_status_make(VKP_STATUS_INTERNAL, "staging memory is not host-visible");
  }
  if (st) {
    vkp__free(buf);
    return vkp_status_annotate(st, "allocating %zu bytes of staging", size);
  }
  memset(buf->allocation.host, 0, size);
  out_staging->host = buf->allocation.host;
  out_staging->size = size;
  out_staging->buffer = VKP_VK_TO_U64(buf->buffer);
  out_staging->offset = 0;
  out_staging->allocation = buf;
  return NULL;
}

void vkp_vk_staging_free(vkp_vk_device_t *device, vkp_staging_t *staging) {
  if (!staging || !staging->allocation) return;
  vkp_vk_buffer_deinit(staging->allocation, device);
  vkp__free(staging->allocation);
  memset(staging, 0, sizeof *staging);
}

vkp_status_t vkp_vk_timeline_create(vkp_vk_device_t *device, uint64_t initial,
                                    VkSemaphore *out_semaphore) {
  VkSemaphoreTypeCreateInfo type = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
      .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
      .initialValue = initial,
  };
  VkSemaphoreCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
      .pNext = &type,
  };
  *out_semaphore = VK_NULL_HANDLE;
  vkp_status_t st = VKP_VK_STATUS(
      vkCreateSemaphore(device->device, &info, /*pAllocator=*/NULL, out_semaphore));
  if (st) *out_semaphore = VK_NULL_HANDLE;
  return st;
}

void vkp_vk_timeline_destroy(vkp_vk_device_t *device, VkSemaphore semaphore) {
  if (semaphore) vkDestroySemaphore(device->device, semaphore, /*pAllocator=*/NULL);
}

vkp_status_t vkp_vk_timeline_signal(vkp_vk_device_t *device, VkSemaphore semaphore,
                                    uint64_t value) {
  VkSemaphoreSignalInfo info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
      .semaphore = semaphore,
      .value = value,
  };
  return VKP_VK_STATUS(vkSignalSemaphore(device->device, &info));
}

vkp_status_t vkp_vk_timeline_wait(vkp_vk_device_t *device, VkSemaphore semaphore,
                                  uint64_t value, uint64_t timeout_ns) {
  VkSemaphoreWaitInfo info = {
      .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
      .semaphoreCount = 1,
      .pSemaphores = &semaphore,
      .pValues = &value,
  };
  VkResult vr = vkWaitSemaphores(device->device, &info, timeout_ns);
  if (vr == VK_TIMEOUT)
    return vkp_status_make(VKP_STATUS_TIMEOUT,
                           "timeline semaphore did not reach %llu within %llu ns",
                           (unsigned long long)value, (unsigned long long)timeout_ns);
  return vkp_vk_result_status(vr, "vkWaitSemaphores", __FILE__, __LINE__);
}

vkp_status_t vkp_vk_timeline_query(vkp_vk_device_t *device, VkSemaphore semaphore,
                                   uint64_t *out_value) {
  *out_value = 0;
  return VKP_VK_STATUS(vkGetSemaphoreCounterValue(device->device, semaphore, out_value));
}
