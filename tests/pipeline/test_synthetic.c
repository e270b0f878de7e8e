// SPDX-License-Identifier: Apache-2.0
// Synthetic pipelines: fixed-cost stages chained from "x" to "y".
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/test_support.h"
#include "vkpipe/pipeline.h"

Test(synthetic, chain_adds_one_per_stage, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_pipeline_synthetic_stage_t stages[] = {
      {VKP_PIPELINE_SYNTHETIC_SLEEP, 20000},
      {VKP_PIPELINE_SYNTHETIC_BUSY, 20000},
      {VKP_PIPELINE_SYNTHETIC_SLEEP, 0},
  };
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create_synthetic(stages, 3, 16, NULL, &pipe));
  int64_t n = 16;
  enum { FRAMES = 40 };
  float xs[FRAMES][16];
  for (int i = 0; i < FRAMES; ++i) {
    vkp_tensor_t t;
    for (int k = 0; k < 16; ++k) xs[i][k] = vkp_test_rng_uniform(&rng, -1, 1);
    VKP_TEST_OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, &n, xs[i]));
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &t));
    uint64_t seq;
    VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
    cr_assert_eq(seq, (uint64_t)i + 1);
  }
  for (int i = 0; i < FRAMES; ++i) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, 10000000000ull, &res));
    cr_assert_eq(res.seq, (uint64_t)i + 1);
    cr_assert_null(res.status);
    const float *y = res.outputs[0].data;
    cr_assert_float_eq(y[0], xs[i][0] + 3.0f, 1e-5);
    cr_assert(memcmp(y + 1, xs[i] + 1, 15 * sizeof(float)) == 0);
    cr_assert_geq(res.latency_ns, 40000u);
    vkp_pipeline_result_deinit(&res);
  }
  vkp_pipeline_stats_t stats;
  VKP_TEST_OK(vkp_pipeline_get_stats(pipe, &stats));
  cr_assert_eq(stats.n_stages, 3);
  cr_assert_str_eq(stats.stages[0].target, "synthetic");
  cr_assert_geq(stats.stages[0].busy_ns, (uint64_t)FRAMES * 20000u);
  vkp_pipeline_stats_deinit(&stats);
  vkp_pipeline_destroy(pipe);
}

Test(synthetic, bad_arguments, .timeout = 30) {
  vkp_pipeline_synthetic_stage_t stage = {VKP_PIPELINE_SYNTHETIC_SLEEP, 0};
  vkp_pipeline_t *pipe;
  vkp_status_t st = vkp_pipeline_create_synthetic(&stage, 0, 16, NULL, &pipe);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  st = vkp_pipeline_create_synthetic(&stage, 1, 0, NULL, &pipe);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
}

// Runs FRAMES random frames through `n_stages` zero-cost stages, a few in
// flight at a time, and checks every result, in order.
static void run_zero_cost_chain(vkp_test_rng_t *rng, int32_t n_stages) {
  vkp_pipeline_synthetic_stage_t stages[4];
  for (int32_t s = 0; s < n_stages; ++s)
    stages[s] = (vkp_pipeline_synthetic_stage_t){
        s % 2 ? VKP_PIPELINE_SYNTHETIC_BUSY : VKP_PIPELINE_SYNTHETIC_SLEEP, 0};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create_synthetic(stages, n_stages, 8, NULL, &pipe));
  enum { FRAMES = 300 };
  int64_t n = 8;
  static float xs[FRAMES][8];
  int taken = 0;
  for (int i = 0; i < FRAMES || taken < FRAMES;) {
    // Up to three frames ahead, then take one: waiters find their frame
    // both already there and still to come.
    if (i < FRAMES && i - taken < 3) {
      vkp_tensor_t t;
      for (int k = 0; k < 8; ++k) xs[i][k] = vkp_test_rng_uniform(rng, -1, 1);
      VKP_TEST_OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, &n, xs[i]));
      VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &t));
      uint64_t seq;
      VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
      cr_assert_eq(seq, (uint64_t)++i);
      continue;
    }
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, 10000000000ull, &res));
    cr_assert_eq(res.seq, (uint64_t)++taken);
    cr_assert_null(res.status);
    const float *y = res.outputs[0].data;
    cr_assert_float_eq(y[0], xs[taken - 1][0] + (float)n_stages, 1e-5);
    cr_assert(memcmp(y + 1, xs[taken - 1] + 1, 7 * sizeof(float)) == 0);
    vkp_pipeline_result_deinit(&res);
  }
  vkp_pipeline_destroy(pipe);
}

// Waiters poll before they sleep (VKPIPE_PIPELINE_SPIN_US, default by the
// cores): never polling, polling for up to a second, and the default all
// give every frame once, in order; a destroy ends a long poll.
Test(synthetic, polling_and_sleeping_waiters_agree, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  const char *spins[] = {"0", "1000000", NULL};
  for (size_t k = 0; k < sizeof spins / sizeof spins[0]; ++k) {
    if (spins[k]) setenv("VKPIPE_PIPELINE_SPIN_US", spins[k], 1);
    else unsetenv("VKPIPE_PIPELINE_SPIN_US");
    for (int32_t stages = 1; stages <= 4; stages += 3) run_zero_cost_chain(&rng, stages);
  }
  // A second's poll still honours get_output's timeout: a frame that takes
  // 300 ms is not there after 5 ms, and the call says so long before the
  // poll would have ended.
  setenv("VKPIPE_PIPELINE_SPIN_US", "1000000", 1);
  vkp_pipeline_synthetic_stage_t slow = {VKP_PIPELINE_SYNTHETIC_SLEEP, 300000000u};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create_synthetic(&slow, 1, 8, NULL, &pipe));
  int64_t n = 8;
  float x[8];
  for (int k = 0; k < 8; ++k) x[k] = vkp_test_rng_uniform(&rng, -1, 1);
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, &n, x));
  VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &t));
  VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  vkp_pipeline_result_t res;
  vkp_status_t st = vkp_pipeline_get_output(pipe, 5000000u, &res);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY), "%s", vkp_status_message(st));
  vkp_status_free(st);
  double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  cr_assert_lt(waited, 0.25, "a 5 ms get_output took %.3f s", waited);
  VKP_TEST_OK(vkp_pipeline_get_output(pipe, 10000000000ull, &res));
  cr_assert_float_eq(((const float *)res.outputs[0].data)[0], x[0] + 1.0f, 1e-5);
  vkp_pipeline_result_deinit(&res);
  vkp_pipeline_destroy(pipe);
  unsetenv("VKPIPE_PIPELINE_SPIN_US");
}

Test(synthetic, bad_spin_setting_is_named, .timeout = 30) {
  vkp_pipeline_synthetic_stage_t stage = {VKP_PIPELINE_SYNTHETIC_SLEEP, 0};
  const char *bad[] = {"", "12x", "-5", "2000000", "99999999999999999999999"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    setenv("VKPIPE_PIPELINE_SPIN_US", bad[k], 1);
    vkp_pipeline_t *pipe = NULL;
    vkp_status_t st = vkp_pipeline_create_synthetic(&stage, 1, 16, NULL, &pipe);
    cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "'%s'", bad[k]);
    cr_assert(strstr(vkp_status_message(st), "VKPIPE_PIPELINE_SPIN_US"), "%s",
              vkp_status_message(st));
    cr_assert_null(pipe);
    vkp_status_free(st);
  }
  unsetenv("VKPIPE_PIPELINE_SPIN_US");
}
