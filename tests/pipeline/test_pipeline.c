// SPDX-License-Identifier: Apache-2.0
// Pipeline executor on host stages: order and completeness under random
// delays, ring depth 1, failures and recovery, device loss, destroy with
// frames in flight, API misuse, stats, allocation failures, and results
// against the reference target frame by frame.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"
#include "harness.h"
#include "runtime/ref/ref.h"

Test(pipeline, order_10000_frames_random_delays, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 100, .delay_percent = 5};
  run_ordered(&cfg, 10000, 0, false, NULL);
}

// Copies (plan "replicas"): every stage as 3 copies side by side, frames
// finishing out of order inside each stage and still handed on in order,
// each exactly once and right (run_ordered checks every value).
Test(pipeline, order_with_copies_random_delays, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 100, .delay_percent = 10, .replicas = 3};
  run_ordered(&cfg, 5000, 0, false, NULL);
}

// Copies on some stages only, a ring shallower than the copies (they then
// wait for slots), and injected failures in a replicated stage.
Test(pipeline, copies_with_few_slots_and_failures, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 50, .delay_percent = 10, .replicas = 4,
                          .replica_mask = 0x6u, .depth = 2};
  run_ordered(&cfg, 2000, 0, false, NULL);
  cfg.depth = 0;
  run_ordered(&cfg, 500, 7, true, "s2");
}

// Host copies feeding a device stage: the timeline values they signal
// still grow one frame at a time (fakedev counts a broken rule).
Test(pipeline, copies_feeding_a_device_stage, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 80, .delay_percent = 20, .replicas = 3,
                          .replica_mask = 0x1u, .alt_target = "fakedev",
                          .alt_mask = 0x6u};
  run_ordered(&cfg, 2000, 0, false, NULL);
}

// Copies run on host targets only: a device stage asked to is refused,
// naming the stage and why.
Test(pipeline, copies_of_a_device_stage_refused, .timeout = 90) {
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(tmath_register(reg, 0, 0));
  fakedev_options_t dev = {0};
  VKP_TEST_OK(fakedev_register(reg, &dev));
  vkp_plan_t *plan = NULL;
  VKP_TEST_OK(diamond_plan("tmath", "fakedev", 0x2u, &plan));
  VKP_TEST_OK(vkp_plan_set_stage_replicas(plan, 1, 2));
  vkp_pipeline_t *pipe = NULL;
  vkp_status_t st = vkp_pipeline_create(plan, reg, NULL, &pipe);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "stage 's1'") && strstr(msg, "host targets"), "%s", msg);
  cr_assert_null(pipe);
  vkp_status_free(st);
  cr_assert(vkp_status_is(st = vkp_plan_set_stage_replicas(plan, 0, 0),
                          VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}

Test(pipeline, ring_depth_1, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 50, .delay_percent = 5, .depth = 1};
  run_ordered(&cfg, 2000, 0, false, NULL);
}

Test(pipeline, sequential_mode, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 50, .delay_percent = 10, .depth = 2,
                          .sequential = true};
  run_ordered(&cfg, 500, 0, false, NULL);
}

Test(pipeline, failure_then_recovery, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 50, .delay_percent = 10};
  run_ordered(&cfg, 500, 7, true, "s2");
}

// ---------------------------------------------------------------------------

Test(pipeline, device_lost_fails_everything_in_flight, .timeout = 90) {
  harness_config_t cfg = {.delay_us = 500, .delay_percent = 30};
  run_device_lost(&cfg, 10, true);
}

Test(pipeline, destroy_with_frames_in_flight, .timeout = 90) {
  vkp_test_counting_alloc_t counter;
  const vkp_allocator_t *allocator = vkp_test_counting_alloc_init(&counter, 0);
  for (int round = 0; round < 4; ++round) {
    fixture_t f;
    // Rounds 2 and 3 with every stage as 3 copies.
    fixture_init(&f, &(harness_config_t){.delay_us = 3000, .delay_percent = 50, .depth = 2,
                                         .sequential = false, .allocator = allocator,
                                         .replicas = (round & 2) ? 3 : 0});
    float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
    for (int32_t i = 0; i < 8 + round * 4; ++i) {
      fill(&f.rng, x);
      fill(&f.rng, z);
      set_inputs(f.pipe, x, z);
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
    }
    if (round & 1) {
      vkp_pipeline_result_t res;
      VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
      vkp_pipeline_result_deinit(&res);
    }
    fixture_deinit(&f);
  }
  cr_assert_gt(counter.count, 0);  // the pipeline and its threads allocated through it
  cr_assert_eq(counter.live, 0, "%lld allocations leaked",
               (long long)counter.live);
}

// A frame's status and outputs are allocated on the stage threads, with the
// pipeline's allocator; the user frees them on this thread (whose current
// allocator is the system one) and they go back to the pipeline's.
Test(pipeline, results_made_on_stage_threads_return_to_the_pipeline_allocator,
     .timeout = 90) {
  vkp_test_counting_alloc_t counter;
  const vkp_allocator_t *allocator = vkp_test_counting_alloc_init(&counter, 0);
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 0, .delay_percent = 0,
                                       .allocator = allocator});
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  for (int i = 0; i < 2; ++i) {
    fill(&f.rng, x);
    fill(&f.rng, z);
    if (i == 0) z[0] = TMATH_FAIL_VALUE;  // stage s2 fails frame 1
    set_inputs(f.pipe, x, z);
    uint64_t seq;
    VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
  }
  vkp_pipeline_result_t failed, good;
  VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &failed));
  VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &good));
  cr_assert(vkp_status_is(failed.status, VKP_STATUS_INTERNAL), "%s",
            vkp_status_message(failed.status));
  check_result(&good, x, z);
  int64_t live = counter.live;
  vkp_status_t status = failed.status;
  failed.status = NULL;
  vkp_status_free(status);
  cr_assert_lt(counter.live, live, "the stage thread's status went elsewhere");
  live = counter.live;
  vkp_pipeline_result_deinit(&failed);
  vkp_pipeline_result_deinit(&good);
  cr_assert_lt(counter.live, live, "the outputs went elsewhere");
  fixture_deinit(&f);
  cr_assert_eq(counter.live, 0, "%lld blocks leaked", (long long)counter.live);
}

Test(pipeline, missing_input_at_run, .timeout = 90) {
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 0, .delay_percent = 0, .depth = 0, .sequential = false});
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  fill(&f.rng, x);
  fill(&f.rng, z);
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  vkp_tensor_t tx;
  VKP_TEST_OK(vkp_tensor_init_view(&tx, VKP_DTYPE_FLOAT32, 2, shape, x));
  VKP_TEST_OK(vkp_pipeline_set_input(f.pipe, "x", &tx));
  uint64_t seq = 5;
  vkp_status_t st = vkp_pipeline_run(f.pipe, &seq);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  cr_assert(strstr(vkp_status_message(st), "'z'"), "%s", vkp_status_message(st));
  cr_assert_eq(seq, 0);
  vkp_status_free(st);
  vkp_pipeline_result_t res;
  st = vkp_pipeline_get_output(f.pipe, 0, &res);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY));
  vkp_status_free(st);
  // The x set before the refused run still counts.
  vkp_tensor_t tz;
  VKP_TEST_OK(vkp_tensor_init_view(&tz, VKP_DTYPE_FLOAT32, 2, shape, z));
  VKP_TEST_OK(vkp_pipeline_set_input(f.pipe, "z", &tz));
  VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
  cr_assert_eq(seq, 1);
  VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
  cr_assert_null(res.status);
  check_result(&res, x, z);
  vkp_pipeline_result_deinit(&res);
  // Each run consumes the inputs.
  st = vkp_pipeline_run(f.pipe, &seq);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  vkp_status_free(st);
  fixture_deinit(&f);
}

Test(pipeline, bad_inputs_are_refused, .timeout = 90) {
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 0, .delay_percent = 0, .depth = 0, .sequential = false});
  int64_t shape[2] = {DIAMOND_COLS, DIAMOND_ROWS};
  float x[DIAMOND_NUMEL] = {0};
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 2, shape, x));
  vkp_status_t st = vkp_pipeline_set_input(f.pipe, "x", &t);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "[8, 4]"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  st = vkp_pipeline_set_input(f.pipe, "nope", &t);
  cr_assert(vkp_status_is(st, VKP_STATUS_NOT_FOUND));
  vkp_status_free(st);
  cr_assert_eq(vkp_pipeline_input_count(f.pipe), 2);
  cr_assert_str_eq(vkp_pipeline_input_name(f.pipe, 1), "z");
  cr_assert_eq(vkp_pipeline_output_count(f.pipe), 3);
  cr_assert_str_eq(vkp_pipeline_output_name(f.pipe, 2), "u");
  cr_assert_null(vkp_pipeline_output_name(f.pipe, 3));
  fixture_deinit(&f);
}

Test(pipeline, get_output_empty_and_timeout, .timeout = 90) {
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 0, .delay_percent = 0, .depth = 0, .sequential = false});
  vkp_pipeline_result_t res;
  vkp_status_t st = vkp_pipeline_get_output(f.pipe, 0, &res);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY));
  vkp_status_free(st);
  st = vkp_pipeline_get_output(f.pipe, 2000000, &res);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY));
  vkp_status_free(st);
  cr_assert_null(res.outputs);
  VKP_TEST_OK(vkp_pipeline_drain(f.pipe, 0));
  fixture_deinit(&f);
}

Test(pipeline, infer_and_drain, .timeout = 90) {
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 20, .delay_percent = 20, .depth = 0, .sequential = false});
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  for (int i = 0; i < 50; ++i) {
    fill(&f.rng, x);
    fill(&f.rng, z);
    vkp_tensor_t in[2], out[3];
    VKP_TEST_OK(vkp_tensor_init_view(&in[0], VKP_DTYPE_FLOAT32, 2, shape, x));
    VKP_TEST_OK(vkp_tensor_init_view(&in[1], VKP_DTYPE_FLOAT32, 2, shape, z));
    VKP_TEST_OK(vkp_pipeline_infer(f.pipe, in, out));
    vkp_pipeline_result_t res = {.n_outputs = 3, .outputs = out};
    check_result(&res, x, z);
    for (int k = 0; k < 3; ++k) vkp_tensor_deinit(&out[k]);
  }
  // infer refuses while frames are in flight; drain waits for them.
  set_inputs(f.pipe, x, z);
  uint64_t seq;
  VKP_TEST_OK(vkp_pipeline_run(f.pipe, &seq));
  cr_assert_eq(seq, 51);
  vkp_tensor_t in[2], out[3];
  VKP_TEST_OK(vkp_tensor_init_view(&in[0], VKP_DTYPE_FLOAT32, 2, shape, x));
  VKP_TEST_OK(vkp_tensor_init_view(&in[1], VKP_DTYPE_FLOAT32, 2, shape, z));
  vkp_status_t st = vkp_pipeline_infer(f.pipe, in, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  vkp_status_free(st);
  VKP_TEST_OK(vkp_pipeline_drain(f.pipe, UINT64_MAX));
  vkp_pipeline_result_t res;
  VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 0, &res));
  cr_assert_eq(res.seq, 51);
  check_result(&res, x, z);
  vkp_pipeline_result_deinit(&res);
  fixture_deinit(&f);
}

Test(pipeline, create_from_blobs, .timeout = 90) {
  fixture_t f;
  fixture_init(&f, &(harness_config_t){.delay_us = 0, .delay_percent = 0, .depth = 0, .sequential = false});
  const vkp_target_t *t = vkp_registry_find(f.registry, "tmath");
  vkp_blob_t blobs[4];
  for (int s = 0; s < 4; ++s)
    VKP_TEST_OK(t->vtable->compiler.compile(t, f.plan->stages[s].graph, NULL, &blobs[s]));
  vkp_pipeline_t *pipe = NULL;
  VKP_TEST_OK(vkp_pipeline_create_from_blobs(f.plan, f.registry, blobs, NULL, &pipe));
  for (int s = 0; s < 4; ++s) vkp_blob_deinit(&blobs[s]);
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  fill(&f.rng, x);
  fill(&f.rng, z);
  set_inputs(pipe, x, z);
  uint64_t seq;
  VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
  vkp_pipeline_result_t res;
  VKP_TEST_OK(vkp_pipeline_get_output(pipe, 20 * SECOND_NS, &res));
  check_result(&res, x, z);
  vkp_pipeline_result_deinit(&res);
  vkp_pipeline_destroy(pipe);
  fixture_deinit(&f);
}

Test(pipeline, unknown_target_and_bad_depth, .timeout = 90) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(tmath_register(reg, 0, 0));
  vkp_plan_t *plan;
  VKP_TEST_OK(diamond_plan("tmath", "nosuch", 4, &plan));
  vkp_pipeline_t *pipe = (vkp_pipeline_t *)1;
  vkp_status_t st = vkp_pipeline_create(plan, reg, NULL, &pipe);
  cr_assert(vkp_status_is(st, VKP_STATUS_NOT_FOUND), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "stage 's2'"), "%s", vkp_status_message(st));
  cr_assert_null(pipe);
  vkp_status_free(st);
  vkp_plan_destroy(plan);
  VKP_TEST_OK(diamond_plan("tmath", NULL, 0, &plan));
  vkp_pipeline_options_t opts = {.ring_depth = -1};
  st = vkp_pipeline_create(plan, reg, &opts, &pipe);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}

Test(pipeline, allocation_failures_are_reported, .timeout = 90) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(tmath_register(reg, 0, 0));
  vkp_plan_t *plan;
  VKP_TEST_OK(diamond_plan("tmath", NULL, 0, &plan));
  create_failure_walk(plan, reg, 2000);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}

// ---------------------------------------------------------------------------
// Against the reference target: a small MLP with a skip edge, cut into three
// "ref" stages, gives for every frame what "ref" gives running the whole
// graph on that frame alone.

Test(pipeline, matches_ref_frame_by_frame, .timeout = 90) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("mlp");
  int64_t xs[] = {4, 16}, ws[] = {16, 16}, bs[] = {16};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_const(g, &rng, "w1", 2, ws, -0.5f, 0.5f);
  g_const(g, &rng, "b1", 1, bs, -0.5f, 0.5f);
  g_const(g, &rng, "w2", 2, ws, -0.5f, 0.5f);
  g_node(g, "mm1", VKP_OP_MATMUL, "x,w1", "h0", 0, NULL);
  g_node(g, "bias1", VKP_OP_ADD, "h0,b1", "h1", 0, NULL);
  g_node(g, "act1", VKP_OP_RELU, "h1", "a1", 0, NULL);
  g_node(g, "mm2", VKP_OP_MATMUL, "a1,w2", "h2", 0, NULL);
  g_node(g, "skip", VKP_OP_ADD, "h2,x", "r", 0, NULL);
  g_node(g, "prob", VKP_OP_SOFTMAX, "r", "y", 0, NULL);
  g_node(g, "act2", VKP_OP_TANH, "h2", "t", 0, NULL);
  g_out(g, "y,t");
  g_validate(g);
  int32_t idx[7];
  const char *names[] = {"mm1", "bias1", "act1", "mm2", "skip", "prob", "act2"};
  for (int i = 0; i < 7; ++i) idx[i] = vkp_graph_find_node(g, names[i]);
  const int32_t g0[] = {idx[0], idx[1], idx[2], -1};
  const int32_t g1[] = {idx[3], -1};
  const int32_t g2[] = {idx[4], idx[5], idx[6], -1};
  const int32_t *groups[] = {g0, g1, g2};
  const char *targets[] = {"ref", "ref", "ref"};
  vkp_plan_t *plan;
  VKP_TEST_OK(plan_from_groups(g, 3, groups, targets, &plan));

  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_target_ref_register(reg));
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));

  enum { FRAMES = 200 };
  vkp_tensor_t *inputs = calloc(FRAMES, sizeof(vkp_tensor_t));
  cr_assert(inputs);
  int32_t taken = 0;
  for (int32_t i = 0; i < FRAMES || taken < FRAMES;) {
    if (i < FRAMES) {
      VKP_TEST_OK(vkp_tensor_init(&inputs[i], VKP_DTYPE_FLOAT32, 2, xs));
      vkp_test_fill_uniform(&rng, &inputs[i], -1, 1);
      VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &inputs[i]));
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
      cr_assert_eq(seq, (uint64_t)i + 1);
      ++i;
    }
    vkp_pipeline_result_t res;
    vkp_status_t st = vkp_pipeline_get_output(pipe, i < FRAMES ? 0 : 20 * SECOND_NS,
                                              &res);
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
      cr_assert(vkp_test_allclose(&res.outputs[k], &want[k], 1e-6, 1e-7, msg,
                                  sizeof msg),
                "frame %d output %d: %s", (int)taken + 1, k, msg);
      vkp_tensor_deinit(&want[k]);
    }
    vkp_pipeline_result_deinit(&res);
    vkp_tensor_deinit(&inputs[taken]);
    ++taken;
  }
  free(inputs);
  vkp_pipeline_destroy(pipe);
  vkp_registry_destroy(reg);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}
