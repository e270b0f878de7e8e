// SPDX-License-Identifier: Apache-2.0
// Integration: the pipeline executor driving real "vulkan" stages through the
// device entries (staging slots, per-slot recordings, timeline semaphores
// waited on inside submits), next to a host stage, under validation.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/vulkan/device.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"
#include "tests/runtime/vulkan/vk_test_util.h"

static void run_frames(int32_t ring_depth) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  vkp_graph_t *g = g_new("mlp");
  int64_t xs[] = {3, 16}, ws[] = {16, 16}, bs[] = {16};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_const(g, &rng, "w1", 2, ws, -0.5f, 0.5f);
  g_const(g, &rng, "b1", 1, bs, -0.5f, 0.5f);
  g_const(g, &rng, "w2", 2, ws, -0.5f, 0.5f);
  g_node(g, "mm1", VKP_OP_MATMUL, "x,w1", "h0", 0, NULL);
  g_node(g, "bias1", VKP_OP_ADD, "h0,b1", "h1", 0, NULL);
  g_node(g, "host_relu", VKP_OP_RELU, "h1", "a1", 0, NULL);
  g_node(g, "mm2", VKP_OP_MATMUL, "a1,w2", "h2", 0, NULL);
  g_node(g, "skip", VKP_OP_ADD, "h2,x", "r", 0, NULL);
  g_node(g, "prob", VKP_OP_SOFTMAX, "r", "y", 0, NULL);
  g_out(g, "y,h1");
  g_validate(g);

  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *ref = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  const vkp_target_t *vk = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "vulkan", &vk));
  // vulkan -> ref -> vulkan: device to host, host to device, x from the
  // global input into the last stage too.
  char pattern[] = "host_*=ref";
  vkp_assign_t assign;
  VKP_TEST_OK(vkp_assign_parse(pattern, &assign));
  vkp_partition_options_t opts = {.policy = "vulkan", .fallback = "ref",
                                  .n_assigns = 1, .assigns = &assign,
                                  .keep_islands = true};
  vkp_partition_t *part = NULL;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opts, &part));
  cr_assert_eq(part->n_stages, 3);
  vkp_plan_t *plan = NULL;
  VKP_TEST_OK(vkp_partition_to_plan(part, "mlp", &plan));
  const char *want_targets[] = {"vulkan", "ref", "vulkan"};
  for (int s = 0; s < 3; ++s)
    cr_assert_str_eq(plan->stages[s].target, want_targets[s], "stage %d", s);
  // The pipeline's own allocator: the device it brings up on first use and
  // the memory blocks it grows belong to the registry, so once the pipeline
  // is gone nothing of this allocator is left.
  vkp_test_counting_alloc_t counter;
  vkp_pipeline_options_t popts = {.ring_depth = ring_depth,
                                  .allocator = vkp_test_counting_alloc_init(&counter, 0)};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, &popts, &pipe));

  enum { FRAMES = 24 };
  vkp_tensor_t inputs[FRAMES];
  int32_t sent = 0, taken = 0;
  while (taken < FRAMES) {
    if (sent < FRAMES) {
      VKP_TEST_OK(vkp_tensor_init(&inputs[sent], VKP_DTYPE_FLOAT32, 2, xs));
      vkp_test_fill_uniform(&rng, &inputs[sent], -1, 1);
      VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &inputs[sent]));
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
      cr_assert_eq(seq, (uint64_t)sent + 1);
      ++sent;
    }
    vkp_pipeline_result_t res;
    vkp_status_t st = vkp_pipeline_get_output(
        pipe, sent < FRAMES ? 0 : UINT64_C(30) * 1000 * 1000 * 1000, &res);
    if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
      vkp_status_free(st);
      continue;
    }
    VKP_TEST_OK(st);
    cr_assert_eq(res.seq, (uint64_t)taken + 1);
    cr_assert_null(res.status, "%s", vkp_status_message(res.status));
    vkp_tensor_t want[2];
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &inputs[taken], want));
    char msg[256];
    for (int k = 0; k < 2; ++k) {
      cr_assert(vkp_test_allclose(&res.outputs[k], &want[k], 1e-4, 1e-6, msg, sizeof msg),
                "frame %d output %d: %s", (int)taken + 1, k, msg);
      vkp_tensor_deinit(&want[k]);
    }
    vkp_pipeline_result_deinit(&res);
    vkp_tensor_deinit(&inputs[taken]);
    ++taken;
  }
  vkp_pipeline_destroy(pipe);
  cr_assert_gt(counter.count, 0);
  cr_assert_eq(counter.live, 0, "%lld blocks of the pipeline's allocator outlive it",
               (long long)counter.live);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
  cr_assert_eq(vkp_vk_validation_message_count(), 0);
}

Test(pipeline_vulkan, device_host_device_matches_ref, .timeout = 120) { run_frames(3); }
Test(pipeline_vulkan, ring_depth_1, .timeout = 120) { run_frames(1); }
