// SPDX-License-Identifier: Apache-2.0
#include "runtime/vulkan/vk_result.h"

#include <string.h>

// X(VkResult, status code): the results a compute runtime can meet.
#define VKP__VK_RESULT_LIST(X)                            \
  X(VK_SUCCESS, OK)                                       \
  X(VK_NOT_READY, TIMEOUT)                                \
  X(VK_TIMEOUT, TIMEOUT)                                  \
  X(VK_EVENT_SET, OK)                                     \
  X(VK_EVENT_RESET, OK)                                   \
  X(VK_INCOMPLETE, OK)                                    \
  X(VK_ERROR_OUT_OF_HOST_MEMORY, OUT_OF_MEMORY)           \
  X(VK_ERROR_OUT_OF_DEVICE_MEMORY, OUT_OF_MEMORY)         \
  X(VK_ERROR_INITIALIZATION_FAILED, UNAVAILABLE)          \
  X(VK_ERROR_DEVICE_LOST, DEVICE_LOST)                    \
  X(VK_ERROR_MEMORY_MAP_FAILED, INTERNAL)                 \
  X(VK_ERROR_LAYER_NOT_PRESENT, UNAVAILABLE)              \
  X(VK_ERROR_EXTENSION_NOT_PRESENT, UNAVAILABLE)          \
  X(VK_ERROR_FEATURE_NOT_PRESENT, UNAVAILABLE)            \
  X(VK_ERROR_INCOMPATIBLE_DRIVER, UNAVAILABLE)            \
  X(VK_ERROR_TOO_MANY_OBJECTS, OUT_OF_MEMORY)             \
  X(VK_ERROR_FORMAT_NOT_SUPPORTED, UNSUPPORTED)           \
  X(VK_ERROR_FRAGMENTED_POOL, OUT_OF_MEMORY)              \
  X(VK_ERROR_UNKNOWN, INTERNAL)                           \
  X(VK_ERROR_OUT_OF_POOL_MEMORY, OUT_OF_MEMORY)           \
  X(VK_ERROR_INVALID_EXTERNAL_HANDLE, INVALID_ARGUMENT)   \
  X(VK_ERROR_FRAGMENTATION, OUT_OF_MEMORY)                \
  X(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS, INTERNAL)    \
  X(VK_PIPELINE_COMPILE_REQUIRED, INTERNAL)               \
  X(VK_ERROR_VALIDATION_FAILED_EXT, INTERNAL)             \
  X(VK_ERROR_INVALID_SHADER_NV, INVALID_ARGUMENT)

const char *vkp_vk_result_name(VkResult result) {
  switch (result) {
#define VKP__VK_RESULT_NAME(r, c) \
  case r:                         \
    return #r;
    VKP__VK_RESULT_LIST(VKP__VK_RESULT_NAME)
#undef VKP__VK_RESULT_NAME
    default:
      return "unknown VkResult";
  }
}

vkp_status_code_t vkp_vk_result_code(VkResult result) {
  switch (result) {
#define VKP__VK_RESULT_CODE(r, c) \
  case r:                         \
    return VKP_STATUS_##c;
    VKP__VK_RESULT_LIST(VKP__VK_RESULT_CODE)
#undef VKP__VK_RESULT_CODE
    default:
      return result < 0 ? VKP_STATUS_INTERNAL : VKP_STATUS_OK;
  }
}

vkp_status_t vkp_vk_result_status(VkResult result, const char *call,
                                  const char *file, int line) {
  vkp_status_code_t code = vkp_vk_result_code(result);
  if (code == VKP_STATUS_OK) return NULL;
  // Name the call, not its whole argument list.
  size_t name_len = strcspn(call ? call : "", "(");
  return vkp_status_make(code, "%.*s failed: %s (%d) at %s:%d", (int)name_len,
                         call ? call : "", vkp_vk_result_name(result),
                         (int)result, file, line);
}
