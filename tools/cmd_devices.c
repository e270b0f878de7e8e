// SPDX-License-Identifier: Apache-2.0
// `vkpipe devices`: every Vulkan device with what vkpipe cares about.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/vulkan/device.h"
#include "tools/tool.h"

int vkp_cmd_devices(int argc, char **argv);
extern const char vkp_cmd_devices_summary[];
const char vkp_cmd_devices_summary[] = "list Vulkan devices and their compute limits";

static void vkp__print_size(const char *label, unsigned long long bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 20) == 0)
    printf("%s%.2f GiB", label, (double)bytes / (double)(1ull << 30));
  else if (bytes >= (1ull << 20))
    printf("%s%.1f MiB", label, (double)bytes / (double)(1ull << 20));
  else
    printf("%s%llu KiB", label, bytes >> 10);
}

static void vkp__print_device(int32_t index, const vkp_vk_device_report_t *r,
                              bool chosen) {
  const VkPhysicalDeviceProperties *p = &r->properties;
  const VkPhysicalDeviceLimits *l = &p->limits;
  printf("device %d: %s%s\n", (int)index, p->deviceName, chosen ? "  [selected]" : "");
  printf("  type:            %s\n", vkp_vk_device_type_name(p->deviceType));
  printf("  vendor/device:   0x%04x / 0x%04x\n", p->vendorID, p->deviceID);
  printf("  driver:          %s (%s), version 0x%x\n",
         r->driver.driverName[0] ? r->driver.driverName : "unknown",
         r->driver.driverInfo[0] ? r->driver.driverInfo : "-", p->driverVersion);
  printf("  Vulkan API:      %u.%u.%u\n", VK_API_VERSION_MAJOR(p->apiVersion),
         VK_API_VERSION_MINOR(p->apiVersion), VK_API_VERSION_PATCH(p->apiVersion));
  printf("  timeline sem.:   %s\n", r->candidate.timeline_semaphore ? "yes" : "no");
  printf("  compute queue:   %s\n", r->candidate.has_compute_queue ? "yes" : "no");
  printf("  subgroup size:   %u\n", r->subgroup.subgroupSize);
  const char *sg_off = getenv("VKPIPE_SPIRV_SUBGROUP");
  printf("  subgroup ops:    %s\n",
         !vkp_vk_subgroup_arith(&r->subgroup)
             ? "no arithmetic in compute (row reductions use shared memory)"
         : sg_off && !strcmp(sg_off, "off")
             ? "arithmetic in compute, not used (VKPIPE_SPIRV_SUBGROUP=off)"
             : "arithmetic in compute (row reductions use it)");
  // What vkp_vk_device_open would enable on this device.
  vkp_vk_robustness_t level = VKP_VK_ROBUSTNESS_NONE;
  vkp_status_t st = vkp_vk_robustness_choose(&r->candidate, getenv("VKPIPE_VK_ROBUSTNESS"),
                                             &level);
  char line[256];
  printf("  robust access:   %s\n",
         st ? vkp_status_message(st)
            : vkp_vk_robustness_describe(&r->candidate, level, line, sizeof line));
  vkp_status_free(st);
  vkp_vk_coopmat_describe(&r->candidate, p->vendorID, line, sizeof line);
  printf("  matrix units:    %s\n", line);
  for (uint32_t h = 0; h < r->memory.memoryHeapCount; ++h) {
    printf("  memory heap %u:   ", h);
    vkp__print_size("", (unsigned long long)r->memory.memoryHeaps[h].size);
    printf("%s\n", (r->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
                       ? ", device-local"
                       : ", host");
  }
  for (uint32_t t = 0; t < r->memory.memoryTypeCount; ++t) {
    VkMemoryPropertyFlags f = r->memory.memoryTypes[t].propertyFlags;
    printf("  memory type %u:   heap %u,%s%s%s%s\n", t, r->memory.memoryTypes[t].heapIndex,
           (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? " device-local" : "",
           (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? " host-visible" : "",
           (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) ? " coherent" : "",
           (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? " cached" : "");
  }
  printf("  workgroup count: %u x %u x %u\n", l->maxComputeWorkGroupCount[0],
         l->maxComputeWorkGroupCount[1], l->maxComputeWorkGroupCount[2]);
  printf("  workgroup size:  %u x %u x %u, %u invocations\n",
         l->maxComputeWorkGroupSize[0], l->maxComputeWorkGroupSize[1],
         l->maxComputeWorkGroupSize[2], l->maxComputeWorkGroupInvocations);
  vkp__print_size("  shared memory:   ", l->maxComputeSharedMemorySize);
  printf("\n");
  vkp__print_size("  storage range:   ", l->maxStorageBufferRange);
  printf(" per binding, offset alignment %llu\n",
         (unsigned long long)l->minStorageBufferOffsetAlignment);
  printf("  storage buffers: %u per stage\n", l->maxPerStageDescriptorStorageBuffers);
}

int vkp_cmd_devices(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: vkpipe devices\n\n"
             "Lists every Vulkan device: type, driver, API version, memory heaps,\n"
             "subgroup size, the bounds checking vkpipe enables on shader buffer\n"
             "accesses (robustBufferAccess/robustBufferAccess2; VKPIPE_VK_ROBUSTNESS=\n"
             "0|1|2 caps it), the matrix units it enables (cooperative matrices;\n"
             "VKPIPE_VK_COOPMAT=0 turns them off) and compute limits. The device\n"
             "the \"vulkan\" target "
             "would use is marked; VKPIPE_DEVICE=<index or name substring>\n"
             "overrides the choice.\n");
      return 0;
    }
    fprintf(stderr, "vkpipe devices: unexpected argument '%s'\n", argv[i]);
    return VKP_TOOL_EXIT_USAGE;
  }
  vkp_vk_device_report_t *reports = NULL;
  int32_t n = 0, chosen = -1;
  vkp_status_t st = vkp_vk_device_list(&reports, &n, &chosen);
  if (st) {
    fprintf(stderr, "vkpipe devices: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    return VKP_TOOL_EXIT_FAILURE;
  }
  for (int32_t i = 0; i < n; ++i) {
    if (i) printf("\n");
    vkp__print_device(i, &reports[i], i == chosen);
  }
  if (chosen < 0)
    printf("\nno device is usable by vkpipe (Vulkan 1.2 with timeline semaphores "
           "and a compute queue is required)\n");
  vkp__free(reports);
  return 0;
}
