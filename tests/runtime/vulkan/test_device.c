// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/vulkan/device.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

static vkp_vk_device_candidate_t cand(const char *name, VkPhysicalDeviceType type,
                                      uint32_t api, bool timeline) {
  vkp_vk_device_candidate_t c;
  memset(&c, 0, sizeof c);
  strcpy(c.name, name);
  c.type = type;
  c.api_version = api;
  c.timeline_semaphore = timeline;
  c.has_compute_queue = true;
  return c;
}

static int32_t pick(const vkp_vk_device_candidate_t *c, int32_t n, const char *sel,
                    vkp_status_code_t want) {
  int32_t idx = -2;
  vkp_status_t st = vkp_vk_device_pick(c, n, sel, &idx);
  cr_assert_eq(vkp_status_code(st), want, "selector '%s': %s", sel ? sel : "(none)",
               vkp_status_message(st));
  vkp_status_free(st);
  return idx;
}

Test(device, pick_prefers_discrete_then_integrated, .timeout = 10) {
  const uint32_t v12 = VK_API_VERSION_1_2, v11 = VK_API_VERSION_1_1;
  vkp_vk_device_candidate_t c[] = {
      cand("llvmpipe (LLVM 15)", VK_PHYSICAL_DEVICE_TYPE_CPU, v12, true),
      cand("Intel(R) UHD 770", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, v12, true),
      cand("Old Discrete", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, v11, false),
      cand("NVIDIA H100", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_API_VERSION_1_3, true),
      cand("Virtio GPU", VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, v12, true),
  };
  cr_assert_eq(pick(c, 5, NULL, VKP_STATUS_OK), 3);
  cr_assert_eq(pick(c, 3, "", VKP_STATUS_OK), 1);  // the old discrete is unusable
  cr_assert_eq(pick(c, 1, NULL, VKP_STATUS_OK), 0);
  vkp_vk_device_candidate_t v[] = {c[0], c[4]};
  cr_assert_eq(pick(v, 2, NULL, VKP_STATUS_OK), 1);  // virtual before CPU
}

Test(device, pick_honours_selector, .timeout = 10) {
  const uint32_t v12 = VK_API_VERSION_1_2;
  vkp_vk_device_candidate_t c[] = {
      cand("NVIDIA H100", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, v12, true),
      cand("llvmpipe (LLVM 15)", VK_PHYSICAL_DEVICE_TYPE_CPU, v12, true),
      cand("No Timeline", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, v12, false),
  };
  cr_assert_eq(pick(c, 3, "1", VKP_STATUS_OK), 1);
  cr_assert_eq(pick(c, 3, "LLVMPIPE", VKP_STATUS_OK), 1);
  cr_assert_eq(pick(c, 3, "h100", VKP_STATUS_OK), 0);
  cr_assert_eq(pick(c, 3, "7", VKP_STATUS_NOT_FOUND), -1);
  cr_assert_eq(pick(c, 3, "radeon", VKP_STATUS_NOT_FOUND), -1);
  int32_t idx;
  vkp_status_t st = vkp_vk_device_pick(c, 3, "timeline", &idx);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNAVAILABLE);
  cr_assert(strstr(vkp_status_message(st), "timelineSemaphore"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
}

Test(device, pick_reports_why_nothing_fits, .timeout = 10) {
  vkp_vk_device_candidate_t c[] = {
      cand("Old", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, VK_API_VERSION_1_1, true),
  };
  pick(c, 0, NULL, VKP_STATUS_UNAVAILABLE);
  int32_t idx;
  vkp_status_t st = vkp_vk_device_pick(c, 1, NULL, &idx);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNAVAILABLE);
  cr_assert(strstr(vkp_status_message(st), "1.2 is required"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
}

Test(device, create_with_validation, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  cr_assert_geq(dev->properties.apiVersion, VK_API_VERSION_1_2);
  cr_assert_neq(dev->queue, VK_NULL_HANDLE);
  cr_assert_gt(dev->subgroup.subgroupSize, 0);
  cr_assert_not_null(dev->pipeline_cache_path);
  vkp_vk_test_device_done(dev);
}

Test(device, env_selector, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  setenv("VKPIPE_DEVICE", "0", 1);
  vkp_vk_device_t *dev = NULL;
  VKP_TEST_OK(vkp_vk_device_create(NULL, &dev));
  vkp_vk_device_destroy(dev);
  setenv("VKPIPE_DEVICE", "no-such-device-anywhere", 1);
  vkp_status_t st = vkp_vk_device_create(NULL, &dev);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_NOT_FOUND, "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "VKPIPE_DEVICE=no-such-device-anywhere"));
  cr_assert_null(dev);
  vkp_status_free(st);
}

Test(device, no_driver_is_unavailable, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  // Criterion runs each test in its own process: this stays here.
  setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
  vkp_vk_device_t *dev = NULL;
  vkp_vk_device_options_t opts = {.validation = 0};
  vkp_status_t st = vkp_vk_device_create(&opts, &dev);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNAVAILABLE, "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "no Vulkan driver"), "%s",
            vkp_status_message(st));
  cr_assert_null(dev);
  vkp_status_free(st);
  vkp_vk_device_report_t *reports = NULL;
  int32_t n = -1, chosen = -1;
  st = vkp_vk_device_list(&reports, &n, &chosen);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNAVAILABLE);
  cr_assert_eq(n, 0);
  cr_assert_null(reports);
  vkp_status_free(st);
}

Test(device, list_marks_the_chosen_device, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_vk_device_report_t *reports = NULL;
  int32_t n = 0, chosen = -1;
  VKP_TEST_OK(vkp_vk_device_list(&reports, &n, &chosen));
  cr_assert_gt(n, 0);
  cr_assert(chosen >= 0 && chosen < n);
  cr_assert(reports[chosen].candidate.timeline_semaphore);
  cr_assert_gt(reports[chosen].properties.limits.maxComputeWorkGroupCount[0], 0);
  vkp__free(reports);
}

// Device bring-up with each of its own allocations failing in turn (1, 2, ...
// until one run succeeds): every failure is OUT_OF_MEMORY, never another
// error, and leaves nothing allocated. Allocations that are best effort (the
// on-disk pipeline cache) may fail without failing the bring-up; then the
// device must still work and be destroyed without leaks.
Test(device, every_allocation_failure_in_bring_up_is_named_and_leaks_nothing,
     .timeout = 300) {
  vkp_vk_device_t *probe = NULL;
  vkp_status_t st0 = vkp_vk_device_create(NULL, &probe);
  if (st0) {
    cr_log_warn("no Vulkan device: %s", vkp_status_message(st0));
    vkp_status_free(st0);
    cr_skip_test("no Vulkan device");
  }
  vkp_vk_device_destroy(probe);
  int64_t n = 1, tolerated = 0;
  for (;; ++n) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, n);
    vkp_vk_device_t *dev = NULL;
    vkp_status_t st = vkp_vk_device_create(NULL, &dev);
    bool failed = counter.failed;
    if (!st) {
      cr_assert_not_null(dev);
      vkp_vk_device_destroy(dev);
      int64_t live = counter.live;
      vkp_test_counting_alloc_uninstall();
      cr_assert_eq(live, 0, "allocation %lld: %lld blocks leaked", (long long)n,
                   (long long)live);
      if (!failed) break;
      ++tolerated;  // a best-effort allocation failed; the device came up
      cr_assert_lt(n, 10000, "no end to the walk");
      continue;
    }
    cr_assert_null(dev);
    vkp_status_code_t code = vkp_status_code(st);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", vkp_status_message(st));
    vkp_status_free(st);
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert(failed, "bring-up failed without an allocation failure: %s", msg);
    cr_assert_eq(code, VKP_STATUS_OUT_OF_MEMORY, "allocation %lld failed and was "
                 "reported as: %s", (long long)n, msg);
    cr_assert_eq(live, 0, "allocation %lld: %lld blocks leaked", (long long)n,
                 (long long)live);
  }
  cr_log_info("walked %lld allocation failures (%lld best effort)", (long long)n - 1,
              (long long)tolerated);
  cr_assert_gt(n, 3, "too few allocations to be a walk");
}

// ---------------------------------------------------------------------------
// Robust buffer access

static vkp_vk_robustness_t robustness_of(bool rba, bool rba2, const char *setting) {
  vkp_vk_device_candidate_t c = cand("GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                     VK_API_VERSION_1_2, true);
  c.robust_buffer_access = rba;
  c.robust_buffer_access2 = rba2;
  vkp_vk_robustness_t level = VKP_VK_ROBUSTNESS_BINDING;
  VKP_TEST_OK(vkp_vk_robustness_choose(&c, setting, &level));
  return level;
}

Test(device, robustness_is_the_best_the_device_has, .timeout = 10) {
  cr_assert_eq(robustness_of(true, true, NULL), VKP_VK_ROBUSTNESS_BINDING);
  cr_assert_eq(robustness_of(true, true, ""), VKP_VK_ROBUSTNESS_BINDING);
  cr_assert_eq(robustness_of(true, false, NULL), VKP_VK_ROBUSTNESS_BUFFER);
  cr_assert_eq(robustness_of(false, false, NULL), VKP_VK_ROBUSTNESS_NONE);
  // robustBufferAccess2 cannot be enabled without robustBufferAccess.
  cr_assert_eq(robustness_of(false, true, NULL), VKP_VK_ROBUSTNESS_NONE);
  // VKPIPE_VK_ROBUSTNESS caps it, never raises it.
  cr_assert_eq(robustness_of(true, true, "1"), VKP_VK_ROBUSTNESS_BUFFER);
  cr_assert_eq(robustness_of(true, true, "0"), VKP_VK_ROBUSTNESS_NONE);
  cr_assert_eq(robustness_of(true, false, "2"), VKP_VK_ROBUSTNESS_BUFFER);
  cr_assert_eq(robustness_of(false, false, "2"), VKP_VK_ROBUSTNESS_NONE);
}

Test(device, robustness_setting_must_be_known, .timeout = 10) {
  vkp_vk_device_candidate_t c = cand("GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                     VK_API_VERSION_1_2, true);
  vkp_vk_robustness_t level;
  vkp_status_t st = vkp_vk_robustness_choose(&c, "on", &level);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT);
  cr_assert(strstr(vkp_status_message(st), "VKPIPE_VK_ROBUSTNESS=on: expected 0"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
}

Test(device, robustness_lines_say_what_is_checked, .timeout = 10) {
  vkp_vk_device_candidate_t c = cand("Old GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                     VK_API_VERSION_1_2, true);
  char buf[256];
  // A device without the feature: one line naming it, not an error.
  const char *line = vkp_vk_robustness_describe(&c, VKP_VK_ROBUSTNESS_NONE, buf, sizeof buf);
  cr_assert_str_eq(line, "'Old GPU' lacks robustBufferAccess: an out-of-range buffer "
                         "access by a shader is not bounds-checked");
  c.robust_buffer_access = true;
  line = vkp_vk_robustness_describe(&c, VKP_VK_ROBUSTNESS_NONE, buf, sizeof buf);
  cr_assert(strstr(line, "VKPIPE_VK_ROBUSTNESS=0"), "%s", line);
  line = vkp_vk_robustness_describe(&c, VKP_VK_ROBUSTNESS_BUFFER, buf, sizeof buf);
  cr_assert(strstr(line, "robustBufferAccess (") && strstr(line, "robustBufferAccess2 not "
                                                                  "supported"),
            "%s", line);
  c.robust_buffer_access2 = true;
  line = vkp_vk_robustness_describe(&c, VKP_VK_ROBUSTNESS_BINDING, buf, sizeof buf);
  cr_assert(strstr(line, "robustBufferAccess2 ("), "%s", line);
}

// The device enables what its candidate supports; lavapipe supports both
// features, so there the bounds are per binding.
Test(device, robust_buffer_access_is_enabled, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  vkp_vk_device_report_t *reports = NULL;
  int32_t n = 0, chosen = -1;
  VKP_TEST_OK(vkp_vk_device_list(&reports, &n, &chosen));
  cr_assert(chosen >= 0);
  vkp_vk_robustness_t want;
  VKP_TEST_OK(vkp_vk_robustness_choose(&reports[chosen].candidate, NULL, &want));
  cr_assert_eq(dev->robustness, want);
  if (dev->driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) {
    cr_assert(reports[chosen].candidate.robust_buffer_access);
    cr_assert(reports[chosen].candidate.robust_buffer_access2);
    cr_assert_eq(dev->robustness, VKP_VK_ROBUSTNESS_BINDING);
  }
  vkp__free(reports);
  vkp_vk_test_device_done(dev);
}

Test(device, robustness_capped_by_the_environment, .timeout = 60) {
  setenv("VKPIPE_VK_ROBUSTNESS", "1", 1);
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  cr_assert_leq(dev->robustness, VKP_VK_ROBUSTNESS_BUFFER);
  vkp_vk_test_device_done(dev);
  setenv("VKPIPE_VK_ROBUSTNESS", "0", 1);
  dev = vkp_vk_test_device(false);
  cr_assert_eq(dev->robustness, VKP_VK_ROBUSTNESS_NONE);
  vkp_vk_test_device_done(dev);
  setenv("VKPIPE_VK_ROBUSTNESS", "yes", 1);
  vkp_vk_device_options_t opts = {.validation = 1};
  vkp_status_t st = vkp_vk_device_create(&opts, &dev);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT, "%s",
               vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "VKPIPE_VK_ROBUSTNESS=yes"), "%s",
            vkp_status_message(st));
  cr_assert_null(dev);
  vkp_status_free(st);
}
