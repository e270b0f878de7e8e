// SPDX-License-Identifier: Apache-2.0
// Stage workers with device stages (the "fakedev" target: host threads that
// behave like a device queue with timeline semaphores and check the rules a
// real one imposes): all-device and mixed host/device pipelines in order
// under random delays, ring depth 1, submit failures, host failures feeding
// device stages, device loss, destroy with device work in flight.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

// Stage masks of the diamond (bit i = stage si) placed on fakedev.
#define ALL_STAGES 0xfu

Test(worker, device_stages_in_order, .timeout = 90) {
  harness_config_t cfg = {.target = "fakedev",
                          .device = {.max_delay_us = 100, .delay_percent = 10}};
  run_ordered(&cfg, 3000, 0, false, NULL);
}

Test(worker, host_and_device_stages_alternate, .timeout = 90) {
  // s0, s2 on the device; s1, s3 on the host: every kind of hop.
  harness_config_t cfg = {.alt_target = "fakedev", .alt_mask = 0x5u,
                          .delay_us = 50, .delay_percent = 10,
                          .device = {.max_delay_us = 50, .delay_percent = 10}};
  run_ordered(&cfg, 3000, 0, false, NULL);
  cfg.alt_mask = 0xau;
  run_ordered(&cfg, 3000, 0, false, NULL);
}

Test(worker, device_ring_depth_1, .timeout = 90) {
  harness_config_t cfg = {.alt_target = "fakedev", .alt_mask = 0x9u, .depth = 1,
                          .delay_us = 50, .delay_percent = 10,
                          .device = {.max_delay_us = 50, .delay_percent = 10}};
  run_ordered(&cfg, 1000, 0, false, NULL);
}

Test(worker, device_sequential_mode, .timeout = 90) {
  harness_config_t cfg = {.alt_target = "fakedev", .alt_mask = 0x6u,
                          .sequential = true,
                          .device = {.max_delay_us = 50, .delay_percent = 10}};
  run_ordered(&cfg, 300, 0, false, NULL);
}

Test(worker, submit_failure_then_recovery, .timeout = 90) {
  harness_config_t cfg = {.target = "fakedev",
                          .device = {.max_delay_us = 50, .delay_percent = 10,
                                     .fail_stage = "s1", .fail_every = 5}};
  run_ordered(&cfg, 500, 5, false, "s1");
}

Test(worker, host_failure_feeding_device_stages, .timeout = 90) {
  // s2 on the host fails every 4th frame; the device stage s3 skips it and
  // signals from the host so that nothing waits for ever.
  harness_config_t cfg = {.target = "fakedev", .alt_target = "tmath",
                          .alt_mask = 0x4u,
                          .device = {.max_delay_us = 50, .delay_percent = 10}};
  run_ordered(&cfg, 500, 4, true, "s2");
}

Test(worker, device_lost, .timeout = 90) {
  harness_config_t cfg = {.target = "fakedev",
                          .device = {.max_delay_us = 300, .delay_percent = 30}};
  run_device_lost(&cfg, 10, true);
}

Test(worker, device_lost_in_mixed_pipeline, .timeout = 90) {
  harness_config_t cfg = {.alt_target = "fakedev", .alt_mask = 0x4u,
                          .delay_us = 200, .delay_percent = 30};
  run_device_lost(&cfg, 6, true);
}

Test(worker, failed_host_signal_fails_the_pipeline, .timeout = 90) {
  // s2 on the host cannot signal the semaphore s3 (device) waits on for
  // frame 7: the pipeline fails instead of leaving s3 queued for ever.
  harness_config_t cfg = {.target = "fakedev", .alt_target = "tmath",
                          .alt_mask = 0x4u, .delay_us = 200, .delay_percent = 30,
                          .device = {.fail_host_signal = 7}};
  run_device_lost(&cfg, 7, false);
}

Test(worker, destroy_with_device_work_in_flight, .timeout = 90) {
  vkp_test_counting_alloc_t counter;
  const vkp_allocator_t *allocator = vkp_test_counting_alloc_init(&counter, 0);
  for (uint32_t round = 0; round < 4; ++round) {
    fixture_t f;
    harness_config_t cfg = {
        .alt_target = "fakedev", .alt_mask = round & 1 ? ALL_STAGES : 0x5u,
        .depth = 2, .delay_us = 2000, .delay_percent = 50,
        .device = {.max_delay_us = 2000, .delay_percent = 50}, .allocator = allocator};
    fixture_init(&f, &cfg);
    float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
    for (uint32_t i = 0; i < 6 + round * 3; ++i) {
      fill(&f.rng, x);
      fill(&f.rng, z);
      set_inputs(f.pipe, x, z);
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
    }
    fixture_deinit(&f);
  }
  cr_assert_gt(counter.count, 0);
  cr_assert_eq(counter.live, 0, "%lld allocations leaked",
               (long long)counter.live);
}

Test(worker, device_bindings_use_staging_memory, .timeout = 90) {
  fixture_t f;
  harness_config_t cfg = {.alt_target = "fakedev", .alt_mask = 0x1u};
  fixture_init(&f, &cfg);
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  fill(&f.rng, x);
  fill(&f.rng, z);
  set_inputs(f.pipe, x, z);
  uint64_t seq;
  VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
  vkp_pipeline_result_t res;
  VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
  check_result(&res, x, z);
  vkp_pipeline_result_deinit(&res);
  vkp_pipeline_stats_t stats;
  VKP_TEST_OK(vkp_pipeline_get_stats(f.pipe, &stats));
  // x feeds s0 (device): staging; z feeds only s2 (host): host memory; s0's
  // outputs a and b: staging.
  for (int32_t b = 0; b < stats.n_bindings; ++b) {
    const char *name = stats.bindings[b].name;
    bool want = strcmp(name, "z") != 0 && strcmp(name, "s1.c") != 0 &&
                strcmp(name, "s2.d") != 0;
    cr_assert_eq(stats.bindings[b].device_memory, want, "binding %s", name);
  }
  cr_assert_gt(stats.stages[0].busy_ns, 0);
  vkp_pipeline_stats_deinit(&stats);
  fixture_deinit(&f);
}

Test(worker, allocation_failures_with_device_stages, .timeout = 90) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(tmath_register(reg, 0, 0));
  VKP_TEST_OK(fakedev_register(reg, NULL));
  vkp_plan_t *plan;
  VKP_TEST_OK(diamond_plan("tmath", "fakedev", 0x5u, &plan));
  create_failure_walk(plan, reg, 4000);
  const vkp_target_t *dev = vkp_registry_find(reg, "fakedev");
  cr_assert_eq(fakedev_violations(dev), 0);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}
