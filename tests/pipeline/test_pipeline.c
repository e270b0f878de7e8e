// SPDX-License-Identifier: Apache-2.0
// Pipeline executor on host stages: order and completeness under random
// delays, ring depth 1, failures and recovery, device loss, destroy with
// frames in flight, API misuse, stats, allocation failures.
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "tmath.h"
#include "vkpipe/pipeline.h"

#define SECOND_NS 1000000000ull

typedef struct fixture_t {
  vkp_registry_t *registry;
  vkp_plan_t *plan;
  vkp_pipeline_t *pipe;
  vkp_test_rng_t rng;
} fixture_t;

static void fixture_init(fixture_t *f, uint32_t max_delay_us,
                         uint32_t delay_percent, int32_t depth,
                         bool sequential) {
  memset(f, 0, sizeof(*f));
  uint64_t seed = vkp_test_rng_init(&f->rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  VKP_TEST_OK(vkp_registry_create(&f->registry));
  VKP_TEST_OK(tmath_register(f->registry, max_delay_us, delay_percent));
  VKP_TEST_OK(diamond_plan("tmath", NULL, 0, &f->plan));
  vkp_pipeline_options_t opts = {.ring_depth = depth, .sequential = sequential};
  VKP_TEST_OK(vkp_pipeline_create(f->plan, f->registry, &opts, &f->pipe));
}

static void fixture_deinit(fixture_t *f) {
  vkp_pipeline_destroy(f->pipe);
  vkp_plan_destroy(f->plan);
  vkp_registry_destroy(f->registry);
}

static void fill(vkp_test_rng_t *rng, float *v) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) v[k] = vkp_test_rng_uniform(rng, -1, 1);
}

static void set_inputs(vkp_pipeline_t *pipe, float *x, float *z) {
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  vkp_tensor_t tx, tz;
  VKP_TEST_OK(vkp_tensor_init_view(&tx, VKP_DTYPE_FLOAT32, 2, shape, x));
  VKP_TEST_OK(vkp_tensor_init_view(&tz, VKP_DTYPE_FLOAT32, 2, shape, z));
  VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &tx));
  VKP_TEST_OK(vkp_pipeline_set_input(pipe, "z", &tz));
}

static bool close_to(const float *got, const float *want) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) {
    float d = got[k] - want[k];
    if (d < 0) d = -d;
    float m = want[k] < 0 ? -want[k] : want[k];
    if (d > 1e-5f + 1e-5f * m) return false;
  }
  return true;
}

// Checks a successful result against the inputs it was run with.
static void check_result(const vkp_pipeline_result_t *res, const float *x,
                         const float *z) {
  float y[DIAMOND_NUMEL], w[DIAMOND_NUMEL], u[DIAMOND_NUMEL];
  diamond_expected(x, z, y, w, u);
  cr_assert_eq(res->n_outputs, 3);
  cr_assert(close_to(res->outputs[0].data, y), "frame %llu: y differs",
            (unsigned long long)res->seq);
  cr_assert(close_to(res->outputs[1].data, w), "frame %llu: w differs",
            (unsigned long long)res->seq);
  cr_assert(close_to(res->outputs[2].data, u), "frame %llu: u differs",
            (unsigned long long)res->seq);
}

// ---------------------------------------------------------------------------
// Order and completeness: a producer thread runs N frames while this thread
// collects them.

typedef struct producer_t {
  vkp_pipeline_t *pipe;
  int32_t n_frames;
  float *xs, *zs;   // n_frames * DIAMOND_NUMEL, written before each run
  uint64_t seed;
  int32_t fail_every;  // every fail_every-th frame gets an injected failure
} producer_t;

static void *produce(void *arg) {
  producer_t *pr = arg;
  vkp_test_rng_t rng = {pr->seed | 1};
  for (int32_t i = 0; i < pr->n_frames; ++i) {
    float *x = pr->xs + (size_t)i * DIAMOND_NUMEL;
    float *z = pr->zs + (size_t)i * DIAMOND_NUMEL;
    fill(&rng, x);
    fill(&rng, z);
    if (pr->fail_every && (i + 1) % pr->fail_every == 0) z[0] = TMATH_FAIL_VALUE;
    set_inputs(pr->pipe, x, z);
    uint64_t seq = 0;
    vkp_status_t st = vkp_pipeline_run(pr->pipe, &seq);
    if (st || seq != (uint64_t)i + 1) {
      vkp_status_free(st);
      return (void *)1;
    }
  }
  return NULL;
}

static void run_ordered(int32_t n_frames, uint32_t delay_us, uint32_t percent,
                        int32_t depth, bool sequential, int32_t fail_every) {
  fixture_t f;
  fixture_init(&f, delay_us, percent, depth, sequential);
  producer_t pr = {.pipe = f.pipe, .n_frames = n_frames,
                   .seed = vkp_test_rng_next(&f.rng), .fail_every = fail_every};
  pr.xs = calloc((size_t)n_frames * DIAMOND_NUMEL, sizeof(float));
  pr.zs = calloc((size_t)n_frames * DIAMOND_NUMEL, sizeof(float));
  cr_assert(pr.xs && pr.zs);
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, NULL, produce, &pr), 0);
  int32_t failures = 0;
  for (int32_t i = 0; i < n_frames; ++i) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
    cr_assert_eq(res.seq, (uint64_t)i + 1, "got frame %llu, expected %d",
                 (unsigned long long)res.seq, (int)i + 1);
    bool injected = fail_every && (i + 1) % fail_every == 0;
    if (injected) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_INTERNAL),
                "frame %d: expected the injected failure, got %s", (int)i + 1,
                vkp_status_message(res.status));
      cr_assert(strstr(vkp_status_message(res.status), "stage 's2'"),
                "%s", vkp_status_message(res.status));
      ++failures;
    } else {
      cr_assert_null(res.status, "frame %d failed: %s", (int)i + 1,
                     vkp_status_message(res.status));
      check_result(&res, pr.xs + (size_t)i * DIAMOND_NUMEL,
                   pr.zs + (size_t)i * DIAMOND_NUMEL);
    }
    vkp_pipeline_result_deinit(&res);
  }
  void *ret = NULL;
  pthread_join(thread, &ret);
  cr_assert_null(ret, "the producer failed");
  vkp_pipeline_result_t extra;
  vkp_status_t st = vkp_pipeline_get_output(f.pipe, 0, &extra);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY), "a result too many");
  vkp_status_free(st);

  vkp_pipeline_stats_t stats;
  VKP_TEST_OK(vkp_pipeline_get_stats(f.pipe, &stats));
  cr_assert_eq(stats.frames_run, (uint64_t)n_frames);
  cr_assert_eq(stats.frames_finished, (uint64_t)n_frames);
  cr_assert_eq(stats.frames_failed, (uint64_t)failures);
  cr_assert_eq(stats.n_stages, 4);
  for (int32_t s = 0; s < stats.n_stages; ++s)
    cr_assert_eq(stats.stages[s].frames, (uint64_t)n_frames);
  for (int32_t b = 0; b < stats.n_bindings; ++b) {
    cr_assert_leq(stats.bindings[b].peak_occupancy, stats.bindings[b].depth,
                  "binding %s", stats.bindings[b].name);
    cr_assert_geq(stats.bindings[b].peak_occupancy, 1);
  }
  cr_assert_leq(stats.latency_min_ns, stats.latency_max_ns);
  vkp_pipeline_stats_deinit(&stats);
  free(pr.xs);
  free(pr.zs);
  fixture_deinit(&f);
}

Test(pipeline, order_10000_frames_random_delays, .timeout = 90) {
  run_ordered(10000, 100, 5, 0, false, 0);
}

Test(pipeline, ring_depth_1, .timeout = 60) {
  run_ordered(2000, 50, 5, 1, false, 0);
}

Test(pipeline, sequential_mode, .timeout = 60) {
  run_ordered(500, 50, 10, 2, true, 0);
}

Test(pipeline, failure_then_recovery, .timeout = 60) {
  run_ordered(500, 50, 10, 3, false, 7);
}

// ---------------------------------------------------------------------------

Test(pipeline, device_lost_fails_everything_in_flight, .timeout = 60) {
  fixture_t f;
  fixture_init(&f, 500, 30, 3, false);
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  float xs[40][DIAMOND_NUMEL], zs[40][DIAMOND_NUMEL];
  int32_t accepted = 0;
  vkp_status_t refused = NULL;
  for (int32_t i = 0; i < 40; ++i) {
    fill(&f.rng, x);
    fill(&f.rng, z);
    if (i + 1 == 10) z[0] = TMATH_LOST_VALUE;
    memcpy(xs[i], x, sizeof x);
    memcpy(zs[i], z, sizeof z);
    set_inputs(f.pipe, x, z);
    uint64_t seq = 0;
    refused = vkp_pipeline_run(f.pipe, &seq);
    if (refused) break;
    cr_assert_eq(seq, (uint64_t)i + 1);
    ++accepted;
  }
  cr_assert_geq(accepted, 10);
  if (refused) {
    cr_assert(vkp_status_is(refused, VKP_STATUS_DEVICE_LOST), "%s",
              vkp_status_message(refused));
    vkp_status_free(refused);
  }
  for (int32_t i = 0; i < accepted; ++i) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
    cr_assert_eq(res.seq, (uint64_t)i + 1);
    if (i + 1 >= 10) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_DEVICE_LOST),
                "frame %d: %s", (int)i + 1, vkp_status_message(res.status));
    } else if (res.status) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_DEVICE_LOST), "%s",
                vkp_status_message(res.status));
    } else {
      check_result(&res, xs[i], zs[i]);
    }
    vkp_pipeline_result_deinit(&res);
  }
  set_inputs(f.pipe, x, z);
  uint64_t seq = 99;
  vkp_status_t st = vkp_pipeline_run(f.pipe, &seq);
  cr_assert(vkp_status_is(st, VKP_STATUS_DEVICE_LOST), "%s",
            vkp_status_message(st));
  cr_assert_eq(seq, 0);
  vkp_status_free(st);
  fixture_deinit(&f);
}

Test(pipeline, destroy_with_frames_in_flight, .timeout = 30) {
  vkp_test_counting_alloc_t counter;
  vkp_test_counting_alloc_install(&counter, 0);
  for (int round = 0; round < 4; ++round) {
    fixture_t f;
    fixture_init(&f, 3000, 50, 2, false);
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
  vkp_test_counting_alloc_uninstall();
  cr_assert_eq(counter.live, 0, "%lld allocations leaked",
               (long long)counter.live);
}

Test(pipeline, missing_input_at_run, .timeout = 30) {
  fixture_t f;
  fixture_init(&f, 0, 0, 0, false);
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

Test(pipeline, bad_inputs_are_refused, .timeout = 30) {
  fixture_t f;
  fixture_init(&f, 0, 0, 0, false);
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

Test(pipeline, get_output_empty_and_timeout, .timeout = 30) {
  fixture_t f;
  fixture_init(&f, 0, 0, 0, false);
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

Test(pipeline, infer_and_drain, .timeout = 30) {
  fixture_t f;
  fixture_init(&f, 20, 20, 0, false);
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

Test(pipeline, create_from_blobs, .timeout = 30) {
  fixture_t f;
  fixture_init(&f, 0, 0, 0, false);
  const vkp_target_t *t = vkp_registry_find(f.registry, "tmath");
  vkp_blob_t blobs[4];
  for (int s = 0; s < 4; ++s)
    VKP_TEST_OK(t->vtable->compile(t, f.plan->stages[s].graph, NULL, &blobs[s]));
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

Test(pipeline, unknown_target_and_bad_depth, .timeout = 30) {
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

Test(pipeline, allocation_failures_are_reported, .timeout = 60) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(tmath_register(reg, 0, 0));
  vkp_plan_t *plan;
  VKP_TEST_OK(diamond_plan("tmath", NULL, 0, &plan));
  bool succeeded = false;
  for (int64_t fail_at = 1; fail_at < 2000 && !succeeded; ++fail_at) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail_at);
    vkp_pipeline_t *pipe = NULL;
    vkp_status_t st = vkp_pipeline_create(plan, reg, NULL, &pipe);
    if (!st) {
      succeeded = !counter.failed;
      vkp_pipeline_destroy(pipe);
    } else {
      cr_assert(counter.failed, "failed without an allocation failure: %s",
                vkp_status_message(st));
      cr_assert_null(pipe);
      vkp_status_free(st);
    }
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(counter.live, 0, "fail_at %lld: %lld allocations leaked",
                 (long long)fail_at, (long long)counter.live);
  }
  cr_assert(succeeded);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}
