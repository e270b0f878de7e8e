// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "runtime/vulkan/vk_result.h"

static vkp_status_t fails_with(VkResult r) {
  VKP_VK_RETURN_IF_ERROR(r);
  return NULL;
}

Test(vk_result, success_is_ok, .timeout = 10) {
  cr_assert_null(vkp_vk_result_status(VK_SUCCESS, "vkFoo", __FILE__, __LINE__));
  cr_assert_null(fails_with(VK_SUCCESS));
  cr_assert_null(fails_with(VK_INCOMPLETE));
}

Test(vk_result, maps_codes_and_names_the_call, .timeout = 10) {
  static const struct {
    VkResult result;
    vkp_status_code_t code;
  } cases[] = {
      {VK_ERROR_DEVICE_LOST, VKP_STATUS_DEVICE_LOST},
      {VK_ERROR_OUT_OF_DEVICE_MEMORY, VKP_STATUS_OUT_OF_MEMORY},
      {VK_ERROR_OUT_OF_HOST_MEMORY, VKP_STATUS_OUT_OF_MEMORY},
      {VK_TIMEOUT, VKP_STATUS_TIMEOUT},
      {VK_ERROR_INCOMPATIBLE_DRIVER, VKP_STATUS_UNAVAILABLE},
      {VK_ERROR_UNKNOWN, VKP_STATUS_INTERNAL},
      {(VkResult)-123456, VKP_STATUS_INTERNAL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    vkp_status_t st = fails_with(cases[i].result);
    cr_assert_eq(vkp_status_code(st), cases[i].code, "case %zu: %s", i,
                 vkp_status_message(st));
    // "VKP_VK_RETURN_IF_ERROR(r)" expands with the call's text: "r".
    cr_assert(strstr(vkp_status_message(st), "test_vk_result.c:"), "%s",
              vkp_status_message(st));
    vkp_status_free(st);
  }
  vkp_status_t st = vkp_vk_result_status(VK_ERROR_DEVICE_LOST,
                                         "vkQueueSubmit(q, 1, &s, f)", "x.c", 7);
  cr_assert_str_eq(vkp_status_message(st),
                   "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST (-4) at x.c:7");
  vkp_status_free(st);
  cr_assert_str_eq(vkp_vk_result_name((VkResult)-999), "unknown VkResult");
}
