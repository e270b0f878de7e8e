// SPDX-License-Identifier: Apache-2.0
// pipeline/trace.c: one event per stage and frame, in dependency order, and
// a bounded record.
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "support/test_support.h"
#include "vkpipe/pipeline.h"

enum { STAGES = 3, FRAMES = 24 };

static void run_frames(vkp_pipeline_t *pipe, int frames, int64_t numel) {
  int64_t shape[1] = {numel};
  vkp_tensor_t x;
  VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, shape));
  for (int f = 0; f < frames; ++f) {
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &x));
    VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
  }
  for (int f = 0; f < frames; ++f) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
    cr_assert_null(res.status);
    vkp_pipeline_result_deinit(&res);
  }
  vkp_tensor_deinit(&x);
}

Test(trace, one_event_per_stage_and_frame_in_order, .timeout = 60) {
  vkp_pipeline_synthetic_stage_t stages[STAGES];
  for (int s = 0; s < STAGES; ++s)
    stages[s] = (vkp_pipeline_synthetic_stage_t){VKP_PIPELINE_SYNTHETIC_SLEEP,
                                                 100000u * (uint64_t)(s + 1)};
  vkp_pipeline_options_t opt = {.trace_capacity = STAGES * FRAMES};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create_synthetic(stages, STAGES, 16, &opt, &pipe));
  run_frames(pipe, FRAMES, 16);
  vkp_pipeline_event_t *ev;
  int32_t n;
  VKP_TEST_OK(vkp_pipeline_get_trace(pipe, &ev, &n));
  cr_assert_eq(n, STAGES * FRAMES);
  // Index the events by (stage, seq): each must appear exactly once.
  vkp_pipeline_event_t *by[STAGES][FRAMES + 1] = {{NULL}};
  for (int32_t i = 0; i < n; ++i) {
    cr_assert(ev[i].stage >= 0 && ev[i].stage < STAGES);
    cr_assert(ev[i].seq >= 1 && ev[i].seq <= FRAMES);
    cr_assert_null(by[ev[i].stage][ev[i].seq], "duplicate event");
    cr_assert_not(ev[i].failed);
    cr_assert_leq(ev[i].start_ns, ev[i].end_ns);
    by[ev[i].stage][ev[i].seq] = &ev[i];
  }
  // A stage starts a frame only after the stage before it finished it, and
  // each stage handles frames in sequence order.
  for (int s = 0; s < STAGES; ++s)
    for (int f = 1; f <= FRAMES; ++f) {
      if (s > 0) cr_assert_geq(by[s][f]->start_ns, by[s - 1][f]->end_ns);
      if (f > 1) cr_assert_geq(by[s][f]->start_ns, by[s][f - 1]->end_ns);
    }
  vkp_pipeline_trace_free(ev);
  vkp_pipeline_destroy(pipe);
}

Test(trace, bounded_and_off_by_default, .timeout = 60) {
  vkp_pipeline_synthetic_stage_t stage = {VKP_PIPELINE_SYNTHETIC_BUSY, 10000};
  vkp_pipeline_options_t opt = {.trace_capacity = 5};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create_synthetic(&stage, 1, 4, &opt, &pipe));
  run_frames(pipe, 12, 4);
  vkp_pipeline_event_t *ev;
  int32_t n;
  VKP_TEST_OK(vkp_pipeline_get_trace(pipe, &ev, &n));
  cr_assert_eq(n, 5);
  for (int32_t i = 0; i < n; ++i) cr_assert_eq(ev[i].seq, (uint64_t)i + 1);
  vkp_pipeline_trace_free(ev);
  vkp_pipeline_destroy(pipe);

  VKP_TEST_OK(vkp_pipeline_create_synthetic(&stage, 1, 4, NULL, &pipe));
  run_frames(pipe, 3, 4);
  VKP_TEST_OK(vkp_pipeline_get_trace(pipe, &ev, &n));
  cr_assert_eq(n, 0);
  vkp_pipeline_trace_free(ev);
  vkp_pipeline_destroy(pipe);

  opt.trace_capacity = -1;
  vkp_status_t st = vkp_pipeline_create_synthetic(&stage, 1, 4, &opt, &pipe);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT);
  vkp_status_free(st);
}
