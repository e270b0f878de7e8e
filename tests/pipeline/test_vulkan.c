// SPDX-License-Identifier: Apache-2.0
// The executor with real "vulkan" stages (lavapipe here) next to "ref"
// stages, under the validation layer with synchronization validation: every
// kind of hop (host->device with a host-signalled semaphore, device->device
// with the wait inside the submit, device->host with a host wait), in order
// and exact, with the unified-memory path and the discrete-GPU copy path.
// Skips when the Vulkan target or its SPIR-V codegen is not available.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "runtime/ref/ref.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/target_vulkan.h"

// A registry with "ref" and "vulkan", or NULL (with the reason) when the
// vulkan target cannot run the diamond here.
static vkp_registry_t *vulkan_registry(bool force_copies, char *why, size_t size) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_target_ref_register(reg));
  vkp_vk_device_options_t opts = {.validation = 1, .force_copies = force_copies};
  VKP_TEST_OK(vkp_target_vulkan_add(reg, &opts));
  const vkp_target_t *vk = vkp_registry_find(reg, "vulkan");
  vkp_plan_t *plan = NULL;
  vkp_status_t st = NULL;
  if (!vk) {
    snprintf(why, size, "vulkan unavailable: %s",
             vkp_registry_unavailable_reason(reg, "vulkan"));
  } else {
    VKP_TEST_OK(diamond_plan("vulkan", NULL, 0, &plan));
    for (int32_t s = 0; s < plan->n_stages && !st; ++s)
      st = vkp_target_check_graph(vk, plan->stages[s].graph);
    vkp_blob_t blob = {0};
    if (!st) st = vk->vtable->compiler.compile(vk, plan->stages[0].graph, NULL, &blob);
    vkp_blob_deinit(&blob);
    if (st) snprintf(why, size, "%s", vkp_status_message(st));
    vkp_status_free(st);
    vkp_plan_destroy(plan);
  }
  if (vk && !st) {
    cr_assert(vkp_target_vulkan_device(vk)->validation,
              "the validation layer did not come up");
    return reg;
  }
  vkp_registry_destroy(reg);
  return NULL;
}

static void run_mixed(bool force_copies) {
  char why[512] = "";
  vkp_registry_t *reg = vulkan_registry(force_copies, why, sizeof why);
  if (!reg) cr_skip_test("%s", why);
  uint64_t messages = vkp_vk_validation_message_count();
  // s0, s2 on the device: device->device (b), device->host (a), globals
  // into staging. s1, s3 on the device: host->device with host semaphores,
  // device->device (c). All on the device. Depth 1 with a mix.
  const uint32_t masks[] = {0x5u, 0xau, 0xfu, 0x6u};
  for (int m = 0; m < 4; ++m) {
    harness_config_t cfg = {.registry = reg, .target = "ref",
                            .alt_target = "vulkan", .alt_mask = masks[m],
                            .depth = m == 3 ? 1 : 0};
    run_ordered(&cfg, m == 3 ? 40 : 100, 0, false, NULL);
  }
  cr_assert_eq(vkp_vk_validation_message_count(), messages,
               "the validation layer reported %llu messages",
               (unsigned long long)(vkp_vk_validation_message_count() - messages));
  vkp_registry_destroy(reg);
}

Test(vulkan, mixed_stages_unified_memory, .timeout = 120) { run_mixed(false); }

Test(vulkan, mixed_stages_discrete_copies, .timeout = 120) { run_mixed(true); }

Test(vulkan, destroy_with_device_frames_in_flight, .timeout = 120) {
  char why[512] = "";
  vkp_registry_t *reg = vulkan_registry(false, why, sizeof why);
  if (!reg) cr_skip_test("%s", why);
  uint64_t messages = vkp_vk_validation_message_count();
  for (int round = 0; round < 3; ++round) {
    fixture_t f;
    harness_config_t cfg = {.registry = reg, .target = "ref",
                            .alt_target = "vulkan", .alt_mask = 0xbu, .depth = 2};
    fixture_init(&f, &cfg);
    float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
    for (int i = 0; i < 4 + 4 * round; ++i) {
      fill(&f.rng, x);
      fill(&f.rng, z);
      set_inputs(f.pipe, x, z);
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
    }
    fixture_deinit(&f);
  }
  cr_assert_eq(vkp_vk_validation_message_count(), messages);
  vkp_registry_destroy(reg);
}
