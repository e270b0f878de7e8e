// SPDX-License-Identifier: Apache-2.0
//
// The one place where a VkResult becomes a vkp_status_t, with the call's name,
// file and line:
//
//   VKP_VK_RETURN_IF_ERROR(vkCreateBuffer(dev, &info, NULL, &buf));
//   // on failure: "vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY
//   //              (runtime/vulkan/stage.c:120)"
//
// Codes: DEVICE_LOST for VK_ERROR_DEVICE_LOST, OUT_OF_MEMORY for the two
// out-of-memory results, TIMEOUT for VK_TIMEOUT, UNAVAILABLE for a missing
// driver, layer, extension or feature, INTERNAL otherwise. Thread-safe.
#ifndef VKPIPE_RUNTIME_VULKAN_VK_RESULT_H_
#define VKPIPE_RUNTIME_VULKAN_VK_RESULT_H_

#include <vulkan/vulkan.h>

#include "vkpipe/status.h"

// "VK_ERROR_DEVICE_LOST", ...; "VK_RESULT_<n>" style text is not needed:
// unknown values give "unknown VkResult".
const char *vkp_vk_result_name(VkResult result);

// The status code a VkResult maps to (OK for VK_SUCCESS and other
// non-negative results except VK_TIMEOUT and VK_NOT_READY).
vkp_status_code_t vkp_vk_result_code(VkResult result);

// NULL when `result` is VK_SUCCESS (or VK_INCOMPLETE), else a status naming
// `call`, the result and where it happened.
vkp_status_t vkp_vk_result_status(VkResult result, const char *call,
                                  const char *file, int line) VKP_MUST_USE;

// Evaluates a Vulkan call returning VkResult; returns a status from the
// calling function when it failed. The call's name is the text before '('.
#define VKP_VK_RETURN_IF_ERROR(call)                                      \
  do {                                                                    \
    VkResult vkp__vr_ = (call);                                           \
    if (vkp__vr_ != VK_SUCCESS && vkp__vr_ != VK_INCOMPLETE)              \
      return vkp_vk_result_status(vkp__vr_, #call, __FILE__, __LINE__);   \
  } while (0)

// Like VKP_VK_RETURN_IF_ERROR but yields the status as an expression value.
#define VKP_VK_STATUS(call) vkp_vk_result_status((call), #call, __FILE__, __LINE__)

#endif  // VKPIPE_RUNTIME_VULKAN_VK_RESULT_H_
