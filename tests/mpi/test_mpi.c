// SPDX-License-Identifier: Apache-2.0
// Pipelines with stages on several MPI ranks (docs/scale-out.md), run as
// `mpirun -np N test_mpi [frames]`. Every rank walks the same list of cases:
// rank 0 creates each pipeline and checks it, the other ranks serve it.
//   1. synthetic chain, one stage per rank in turn: order, sequence numbers,
//      exactly one result per run, values;
//   2. the diamond plan on "tmath" with random delays, every 7th frame
//      poisoned so that a stage on another rank fails it: the error names
//      the rank, the frame and the stage; every 11th fails s2 on rank 0
//      after s1 sent its value directly to s3; the other frames equal the
//      directly computed truth; later frames go on;
//   3. the diamond plan on "cpu", then on "vulkan" (where a device is; no
//      validation message on any rank): results equal the truth and, bit
//      for bit, the same plan run in one process;
//   4. every dtype through a remote cpu identity stage, byte for byte;
//   5. a stage placed on a rank the world lacks, and a serving rank that
//      cannot load its stage: clear errors, nothing waits;
//   6. destroy with frames in flight: every rank returns;
//   7. a chain rank 1 -> rank 2 -> rank 0: the middle value goes from rank
//      1 to rank 2 directly (bytes moved per rank checked), results exact;
//   8. data-dependent ("bounded") values crossing ranks: a bounded input
//      through a remote identity stage (packed and not), and NonZero's
//      picks made on one rank and read on another, by reply, by command and
//      by a direct route: run-time shapes and values exact.
// Plain C with its own checks (no Criterion: it forks, MPI must not).
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/vulkan/device.h"  // vkp_vk_validation_message_count
#include "tests/pipeline/tmath.h"
#include "vkpipe/mpi.h"
#include "vkpipe/pipeline.h"

static int g_rank, g_size, g_failures;
static uint64_t g_rng = 88172645463325252ull;

static uint64_t rng_next(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static float rng_uniform(float lo, float hi) {
  return lo + (hi - lo) * (float)((rng_next() >> 40) * (1.0 / (1ull << 24)));
}

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", g_rank,       \
              __FILE__, __LINE__, #cond);                                  \
      fprintf(stderr, __VA_ARGS__);                                        \
      fprintf(stderr, "\n");                                               \
      g_failures++;                                                        \
    }                                                                      \
  } while (0)

// Stops the case (returns from the calling function) when `expr` fails.
#define OK(expr)                                                           \
  do {                                                                     \
    vkp_status_t ok_st_ = (expr);                                          \
    if (ok_st_) {                                                          \
      fprintf(stderr, "rank %d: %s:%d: %s: %s\n", g_rank, __FILE__,        \
              __LINE__, #expr, vkp_status_message(ok_st_));                \
      vkp_status_free(ok_st_);                                             \
      g_failures++;                                                        \
      goto done;                                                           \
    }                                                                      \
  } while (0)

// Serves one pipeline lifetime of `plan` on ranks other than 0.
static void serve(const vkp_plan_t *plan, const vkp_registry_t *reg) {
  vkp_status_t st = vkp_mpi_serve(plan, reg, NULL);
  CHECK(!st, "serve: %s", vkp_status_message(st));
  vkp_status_free(st);
}

// ---------------------------------------------------------------------------

static void case_synthetic(int32_t frames) {
  enum { kStages = 4, kNumel = 16 };
  vkp_pipeline_synthetic_stage_t stages[kStages];
  int32_t ranks[kStages];
  for (int32_t i = 0; i < kStages; ++i) {
    stages[i] = (vkp_pipeline_synthetic_stage_t){VKP_PIPELINE_SYNTHETIC_SLEEP,
                                                 (uint64_t)(i % 2) * 20000u};
    ranks[i] = (i + 1) % g_size;
  }
  vkp_pipeline_t *pipe = NULL;
  float *sent = NULL;
  if (g_rank != 0) {
    vkp_status_t st = vkp_mpi_serve_synthetic(stages, ranks, kStages, kNumel);
    CHECK(!st, "serve synthetic: %s", vkp_status_message(st));
    vkp_status_free(st);
    return;
  }
  OK(vkp_pipeline_create_synthetic_ranks(stages, ranks, kStages, kNumel, NULL,
                                         &pipe));
  sent = calloc((size_t)frames * kNumel, sizeof(float));
  int64_t shape[1] = {kNumel};
  uint64_t collected = 0;
  for (int32_t f = 0; f <= frames; ++f) {
    if (f < frames) {
      float *x = sent + (size_t)f * kNumel;
      for (int k = 0; k < kNumel; ++k) x[k] = rng_uniform(-100, 100);
      vkp_tensor_t t;
      OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, shape, x));
      OK(vkp_pipeline_set_input(pipe, "x", &t));
      uint64_t seq = 0;
      OK(vkp_pipeline_run(pipe, &seq));
      CHECK(seq == (uint64_t)f + 1, "seq %llu for run %d", (unsigned long long)seq, f);
    }
    // Keep up to 8 frames in flight; collect everything at the end.
    while (collected < (uint64_t)frames && (f == frames || (uint64_t)f + 1 - collected > 8)) {
      vkp_pipeline_result_t res;
      OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
      collected++;
      CHECK(res.seq == collected, "result seq %llu, expected %llu",
            (unsigned long long)res.seq, (unsigned long long)collected);
      CHECK(!res.status, "frame failed: %s", vkp_status_message(res.status));
      if (!res.status && res.seq == collected) {
        const float *x = sent + (size_t)(res.seq - 1) * kNumel;
        const float *y = res.outputs[0].data;
        bool same = y[0] == x[0] + kStages;
        for (int k = 1; k < kNumel; ++k) same = same && y[k] == x[k];
        CHECK(same, "frame %llu: wrong values", (unsigned long long)res.seq);
      }
      vkp_pipeline_result_deinit(&res);
    }
  }
  vkp_pipeline_result_t extra;
  vkp_status_t st = vkp_pipeline_get_output(pipe, 0, &extra);
  CHECK(vkp_status_is(st, VKP_STATUS_EMPTY), "a result beyond the runs");
  vkp_status_free(st);
  vkp_pipeline_result_deinit(&extra);
done:
  vkp_pipeline_destroy(pipe);
  free(sent);
}

// A chain rank 1 -> rank 2 -> rank 0 (rank 1 -> rank 1 -> rank 0 with two
// ranks): the middle value goes straight from one serving rank to the next.
// Exactly one result per run, in order, with the values of three +1 stages;
// and every rank moved exactly the bytes its edges carry: rank 0 sends x
// and receives the last stage's input, never the middle value.
static void case_direct_chain(int32_t frames) {
  enum { kStages = 3, kNumel = 20000 };  // 80 KB: past MPI's eager limits
  vkp_pipeline_synthetic_stage_t stages[kStages];
  const int32_t ranks[kStages] = {1, g_size > 2 ? 2 : 1, 0};
  for (int32_t i = 0; i < kStages; ++i)
    stages[i] = (vkp_pipeline_synthetic_stage_t){VKP_PIPELINE_SYNTHETIC_SLEEP,
                                                 (uint64_t)(i == 1) * 30000u};
  // Bytes each edge moves per frame: x -> s0 -> s1 -> s2 -> y.
  const uint64_t nbytes = (uint64_t)kNumel * sizeof(float);
  uint64_t want_sent = 0, want_received = 0, want_direct = 0;
  for (int32_t e = 0; e < kStages; ++e) {
    int32_t src = e == 0 ? 0 : ranks[e - 1], dst = ranks[e];
    if (src == 0 && dst == 0) continue;
    if (src == g_rank) want_sent += nbytes;
    if (dst == g_rank) want_received += nbytes;
    if (dst == g_rank && src != 0 && dst != 0) want_direct += nbytes;
  }
  vkp_mpi_traffic_t before, after;
  vkp_mpi_traffic_get(&before);
  vkp_pipeline_t *pipe = NULL;
  float *sent = NULL;
  if (g_rank != 0) {
    vkp_status_t st = vkp_mpi_serve_synthetic(stages, ranks, kStages, kNumel);
    CHECK(!st, "serve chain: %s", vkp_status_message(st));
    vkp_status_free(st);
    goto traffic;
  }
  OK(vkp_pipeline_create_synthetic_ranks(stages, ranks, kStages, kNumel, NULL,
                                         &pipe));
  sent = calloc((size_t)frames, sizeof(float));
  int64_t shape[1] = {kNumel};
  float *x = calloc(kNumel, sizeof(float));
  for (int k = 0; k < kNumel; ++k) x[k] = rng_uniform(-100, 100);
  uint64_t collected = 0;
  for (int32_t f = 0; f <= frames; ++f) {
    if (f < frames) {
      x[0] = sent[f] = rng_uniform(-100, 100);
      vkp_tensor_t t;
      vkp_status_t st = vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, shape, x);
      if (!st) st = vkp_pipeline_set_input(pipe, "x", &t);
      uint64_t seq = 0;
      if (!st) st = vkp_pipeline_run(pipe, &seq);
      CHECK(!st && seq == (uint64_t)f + 1, "run %d: seq %llu: %s", f,
            (unsigned long long)seq, vkp_status_message(st));
      vkp_status_free(st);
    }
    while (collected < (uint64_t)frames &&
           (f == frames || (uint64_t)f + 1 - collected > 5)) {
      vkp_pipeline_result_t res;
      vkp_status_t st = vkp_pipeline_get_output(pipe, UINT64_MAX, &res);
      CHECK(!st, "get_output: %s", vkp_status_message(st));
      vkp_status_free(st);
      if (st) break;
      collected++;
      CHECK(res.seq == collected, "result seq %llu, expected %llu",
            (unsigned long long)res.seq, (unsigned long long)collected);
      CHECK(!res.status, "frame failed: %s", vkp_status_message(res.status));
      if (!res.status && res.seq == collected) {
        const float *y = res.outputs[0].data;
        bool same = y[0] == sent[res.seq - 1] + kStages;
        for (int k = 1; k < kNumel; ++k) same = same && y[k] == x[k];
        CHECK(same, "frame %llu: wrong values", (unsigned long long)res.seq);
      }
      vkp_pipeline_result_deinit(&res);
    }
  }
  free(x);
  vkp_pipeline_result_t extra;
  vkp_status_t st = vkp_pipeline_get_output(pipe, 0, &extra);
  CHECK(vkp_status_is(st, VKP_STATUS_EMPTY), "a result beyond the runs");
  vkp_status_free(st);
  vkp_pipeline_result_deinit(&extra);
  vkp_pipeline_destroy(pipe);
  pipe = NULL;
traffic:
  vkp_mpi_traffic_get(&after);
  {
    uint64_t s_ = after.bytes_sent - before.bytes_sent;
    uint64_t r_ = after.bytes_received - before.bytes_received;
    uint64_t d_ = after.bytes_received_direct - before.bytes_received_direct;
    uint64_t n = (uint64_t)frames;
    CHECK(s_ == n * want_sent && r_ == n * want_received && d_ == n * want_direct,
          "chain traffic: sent %llu, received %llu (direct %llu); expected %llu, "
          "%llu (%llu)",
          (unsigned long long)s_, (unsigned long long)r_, (unsigned long long)d_,
          (unsigned long long)(n * want_sent), (unsigned long long)(n * want_received),
          (unsigned long long)(n * want_direct));
  }
done:
  vkp_pipeline_destroy(pipe);
  free(sent);
}

// The diamond's stages spread over the ranks: s0 and s3 away from rank 0.
static void place_diamond(vkp_plan_t *plan) {
  const int32_t where[4] = {1, 2, 0, 1};
  for (int32_t s = 0; s < plan->n_stages && s < 4; ++s)
    vkp_status_free(vkp_plan_set_stage_rank(plan, s, where[s] % g_size));
}

static void fill_inputs(float *x, float *z) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) {
    x[k] = rng_uniform(-2, 2);
    z[k] = rng_uniform(-2, 2);
  }
}

static vkp_status_t set_xz(vkp_pipeline_t *pipe, float *x, float *z) {
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  vkp_tensor_t tx, tz;
  vkp_status_t st = vkp_tensor_init_view(&tx, VKP_DTYPE_FLOAT32, 2, shape, x);
  if (!st) st = vkp_tensor_init_view(&tz, VKP_DTYPE_FLOAT32, 2, shape, z);
  if (!st) st = vkp_pipeline_set_input(pipe, "x", &tx);
  if (!st) st = vkp_pipeline_set_input(pipe, "z", &tz);
  return st;
}

static bool close_to(const float *a, const float *b, int n) {
  for (int k = 0; k < n; ++k) {
    float d = a[k] - b[k], m = b[k] < 0 ? -b[k] : b[k];
    if (d < 0) d = -d;
    if (d > 1e-5f + 1e-5f * m) return false;
  }
  return true;
}

static void case_diamond_tmath(int32_t frames) {
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  float *xs = NULL, *zs = NULL;
  OK(vkp_registry_create(&reg));
  OK(tmath_register(reg, /*max_delay_us=*/300, /*delay_percent=*/30));
  OK(diamond_plan("tmath", NULL, 0, &plan));
  place_diamond(plan);
  if (g_rank != 0) {
    serve(plan, reg);
    goto done;
  }
  OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  xs = calloc((size_t)frames * DIAMOND_NUMEL, sizeof(float));
  zs = calloc((size_t)frames * DIAMOND_NUMEL, sizeof(float));
  uint64_t collected = 0;
  int32_t failed = 0, failed_s2 = 0;
  for (int32_t f = 0; f <= frames; ++f) {
    if (f < frames) {
      float *x = xs + (size_t)f * DIAMOND_NUMEL, *z = zs + (size_t)f * DIAMOND_NUMEL;
      fill_inputs(x, z);
      // s0 (on rank 1) reads x: the poisoned value fails it there.
      if ((f + 1) % 7 == 0) x[0] = TMATH_FAIL_VALUE;
      // s2 (on rank 0) reads z: s1 has already sent c straight to s3,
      // which skips the frame and must drop that value.
      else if ((f + 1) % 11 == 0) z[0] = TMATH_FAIL_VALUE;
      OK(set_xz(pipe, x, z));
      OK(vkp_pipeline_run(pipe, NULL));
    }
    while (collected < (uint64_t)frames &&
           (f == frames || (uint64_t)f + 1 - collected > 6)) {
      vkp_pipeline_result_t res;
      OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
      collected++;
      CHECK(res.seq == collected, "result seq %llu, expected %llu",
            (unsigned long long)res.seq, (unsigned long long)collected);
      if (res.seq % 7 == 0) {
        failed++;
        const char *m = res.status ? vkp_status_message(res.status) : "";
        char want[64];
        snprintf(want, sizeof want, "frame %llu", (unsigned long long)res.seq);
        CHECK(res.status && strstr(m, "'s0'") && strstr(m, want) &&
                  (g_size < 2 || strstr(m, "on rank 1")),
              "frame %llu: expected the error of s0 on rank 1, got '%s'",
              (unsigned long long)res.seq, m);
      } else if (res.seq % 11 == 0) {
        failed_s2++;
        const char *m = res.status ? vkp_status_message(res.status) : "";
        CHECK(res.status && strstr(m, "'s2'"),
              "frame %llu: expected the error of s2, got '%s'",
              (unsigned long long)res.seq, m);
      } else {
        CHECK(!res.status, "frame %llu failed: %s", (unsigned long long)res.seq,
              vkp_status_message(res.status));
        if (!res.status) {
          float y[DIAMOND_NUMEL], w[DIAMOND_NUMEL], u[DIAMOND_NUMEL];
          const float *x = xs + (res.seq - 1) * DIAMOND_NUMEL;
          const float *z = zs + (res.seq - 1) * DIAMOND_NUMEL;
          diamond_expected(x, z, y, w, u);
          CHECK(close_to(res.outputs[0].data, y, DIAMOND_NUMEL) &&
                    close_to(res.outputs[1].data, w, DIAMOND_NUMEL) &&
                    close_to(res.outputs[2].data, u, DIAMOND_NUMEL),
                "frame %llu: outputs differ from the truth",
                (unsigned long long)res.seq);
        }
      }
      vkp_pipeline_result_deinit(&res);
    }
  }
  CHECK(failed == frames / 7, "%d failed frames, expected %d", failed, frames / 7);
  CHECK(failed_s2 == frames / 11 - frames / 77, "%d frames failed in s2, expected %d",
        failed_s2, frames / 11 - frames / 77);
done:
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
  free(xs);
  free(zs);
}

// The diamond on a real target ("cpu", or "vulkan" with the validation
// layer on under ctest), its stages spread over the ranks, against the
// truth and, bit for bit, the same plan in one process. Skipped (every rank
// alike: they share the machine) where the target is unavailable.
static void case_diamond_real(const char *target, int32_t frames) {
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL, *local = NULL;
  vkp_pipeline_t *pipe = NULL, *one = NULL;
  uint64_t messages = vkp_vk_validation_message_count();
  OK(vkp_registry_create_default(&reg));
  if (!vkp_registry_find(reg, target)) {
    if (g_rank == 0) printf("diamond on %s: skipped, the target is unavailable\n", target);
    goto done;
  }
  OK(diamond_plan(target, NULL, 0, &plan));
  place_diamond(plan);
  if (g_rank != 0) {
    serve(plan, reg);
    goto done;
  }
  OK(diamond_plan(target, NULL, 0, &local));
  OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  OK(vkp_pipeline_create(local, reg, NULL, &one));
  for (int32_t f = 0; f < frames; ++f) {
    float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
    fill_inputs(x, z);
    OK(set_xz(pipe, x, z));
    OK(vkp_pipeline_run(pipe, NULL));
    OK(set_xz(one, x, z));
    OK(vkp_pipeline_run(one, NULL));
    vkp_pipeline_result_t a, b;
    OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &a));
    OK(vkp_pipeline_get_output(one, UINT64_MAX, &b));
    float y[DIAMOND_NUMEL], w[DIAMOND_NUMEL], u[DIAMOND_NUMEL];
    diamond_expected(x, z, y, w, u);
    CHECK(!a.status && !b.status, "frame failed: %s",
          vkp_status_message(a.status ? a.status : b.status));
    if (!a.status && !b.status) {
      CHECK(close_to(a.outputs[0].data, y, DIAMOND_NUMEL) &&
                close_to(a.outputs[1].data, w, DIAMOND_NUMEL) &&
                close_to(a.outputs[2].data, u, DIAMOND_NUMEL),
            "%s over ranks differs from the truth", target);
      for (int32_t o = 0; o < a.n_outputs; ++o)
        CHECK(memcmp(a.outputs[o].data, b.outputs[o].data,
                     vkp_tensor_nbytes(&a.outputs[o])) == 0,
              "output %d differs from the single-process pipeline", (int)o);
    }
    vkp_pipeline_result_deinit(&a);
    vkp_pipeline_result_deinit(&b);
  }
  if (g_rank == 0) printf("diamond on %s over %d ranks: %d frames\n", target, g_size, (int)frames);
done:
  vkp_pipeline_destroy(pipe);
  vkp_pipeline_destroy(one);
  vkp_plan_destroy(plan);
  vkp_plan_destroy(local);
  vkp_registry_destroy(reg);
  // Every rank's own device: no validation message in this case.
  CHECK(vkp_vk_validation_message_count() == messages, "%llu validation messages on %s",
        (unsigned long long)(vkp_vk_validation_message_count() - messages), target);
}

// A one-stage plan: x -> identity (on `rank`) -> y, of `dtype`.
static vkp_status_t identity_plan(vkp_dtype_t dtype, int32_t rank, bool bounded,
                                  int64_t cols, vkp_plan_t **out) {
  int64_t shape[2] = {3, cols};
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_create("id", &g);
  const char *ins[] = {"x"}, *outs[] = {"y"};
  if (!st) st = vkp_graph_add_input(g, "x", dtype, 2, shape, NULL);
  if (!st && bounded) st = vkp_graph_set_input_bounded(g, "x", 0);
  if (!st) st = vkp_graph_add_node(g, "copy", VKP_OP_IDENTITY, 1, ins, 1, outs, 0,
                                   NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  if (st) {
    vkp_graph_destroy(g);
    return st;
  }
  vkp_plan_t *plan = NULL;
  st = vkp_plan_create("identity", &plan);
  if (!st) st = vkp_plan_add_stage(plan, "id", "cpu", g, NULL);
  else vkp_graph_destroy(g);
  if (!st) st = vkp_plan_add_global_input(plan, "x");
  if (!st) st = vkp_plan_add_global_output(plan, "y");
  if (!st) st = vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x");
  if (!st) st = vkp_plan_bind(plan, 0, "y", VKP_PLAN_GLOBAL, "y");
  if (!st) st = vkp_plan_set_stage_rank(plan, 0, rank);
  if (!st) st = vkp_plan_validate(plan);
  if (st) {
    vkp_plan_destroy(plan);
    return st;
  }
  *out = plan;
  return NULL;
}

static void case_dtypes(void) {
  vkp_registry_t *reg = NULL;
  OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  int32_t tested = 0;
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    vkp_plan_t *plan = NULL;
    vkp_pipeline_t *pipe = NULL;
    vkp_tensor_t x = {0}, y = {0};
    vkp_status_t st = identity_plan((vkp_dtype_t)d, 1 % g_size, false, 5, &plan);
    // Every rank skips the same dtypes: those the cpu target cannot copy.
    if (!st) st = vkp_target_check_graph(cpu, plan->stages[0].graph);
    if (st) {
      vkp_status_free(st);
      vkp_plan_destroy(plan);
      continue;
    }
    if (g_rank != 0) {
      serve(plan, reg);
      vkp_plan_destroy(plan);
      continue;
    }
    int64_t shape[2] = {3, 5};
    st = vkp_tensor_init(&x, (vkp_dtype_t)d, 2, shape);
    if (!st) {
      size_t size = vkp_dtype_size((vkp_dtype_t)d);
      uint8_t *b = x.data;
      for (size_t k = 0; k < vkp_tensor_nbytes(&x); ++k) b[k] = (uint8_t)rng_next();
      for (size_t e = 0; e < 15; ++e) {
        uint8_t *top = b + e * size + size - 1;
        if (vkp_dtype_kind((vkp_dtype_t)d) == VKP_DTYPE_KIND_BOOL) *top &= 1;
        if (vkp_dtype_kind((vkp_dtype_t)d) == VKP_DTYPE_KIND_FLOAT) *top &= 0xbf;
      }
    }
    if (!st) st = vkp_pipeline_create(plan, reg, NULL, &pipe);
    if (!st) st = vkp_pipeline_infer(pipe, &x, &y);
    CHECK(!st, "dtype %s: %s", vkp_dtype_name((vkp_dtype_t)d),
          vkp_status_message(st));
    if (!st)
      CHECK(memcmp(x.data, y.data, vkp_tensor_nbytes(&x)) == 0,
            "dtype %s: bytes changed on the way", vkp_dtype_name((vkp_dtype_t)d));
    vkp_status_free(st);
    tested++;
    vkp_tensor_deinit(&x);
    vkp_tensor_deinit(&y);
    vkp_pipeline_destroy(pipe);
    vkp_plan_destroy(plan);
  }
  if (g_rank == 0) {
    CHECK(tested >= 8, "only %d dtypes tested", (int)tested);
    printf("dtypes through a remote stage: %d\n", (int)tested);
  }
done:
  vkp_registry_destroy(reg);
}

// A bounded graph input (any extent along axis 0 up to 3) through a remote
// cpu identity stage, `cols` columns: its run-time extent goes with the
// command and comes back with the reply; shapes and bytes as sent, extents
// from 0 to the bound. 5 columns go as one packed message each way, 1000
// as separate ones (past VKP__PACK_MAX_BYTES).
static void case_bounded_identity(int64_t cols) {
  enum { kFrames = 60 };
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  float *xs = NULL;
  int64_t *rows = NULL;
  OK(vkp_registry_create_default(&reg));
  OK(identity_plan(VKP_DTYPE_FLOAT32, 1 % g_size, true, cols, &plan));
  if (g_rank != 0) {
    serve(plan, reg);
    goto done;
  }
  OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  xs = calloc((size_t)kFrames * 3 * (size_t)cols, sizeof(float));
  rows = calloc(kFrames, sizeof(int64_t));
  uint64_t collected = 0;
  for (int f = 0; f <= kFrames; ++f) {
    if (f < kFrames) {
      rows[f] = f < 4 ? f : (int64_t)(rng_next() % 4);  // 0..3, each at least once
      float *x = xs + (size_t)f * 3 * (size_t)cols;
      for (int64_t k = 0; k < rows[f] * cols; ++k) x[k] = rng_uniform(-10, 10);
      int64_t shape[2] = {rows[f], cols};
      vkp_tensor_t t;
      OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 2, shape, x));
      OK(vkp_pipeline_set_input(pipe, "x", &t));
      OK(vkp_pipeline_run(pipe, NULL));
    }
    while (collected < kFrames && (f == kFrames || (uint64_t)f + 1 - collected > 3)) {
      vkp_pipeline_result_t res;
      OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
      collected++;
      int64_t r = rows[res.seq - 1];
      const vkp_tensor_t *y = &res.outputs[0];
      CHECK(!res.status, "bounded frame %llu failed: %s", (unsigned long long)res.seq,
            vkp_status_message(res.status));
      if (!res.status) {
        CHECK(y->rank == 2 && y->shape[0] == r && y->shape[1] == cols,
              "frame %llu: y is [%lld, %lld], want [%lld, %lld]",
              (unsigned long long)res.seq, (long long)y->shape[0], (long long)y->shape[1],
              (long long)r, (long long)cols);
        CHECK(y->shape[0] != r ||
                  memcmp(y->data, xs + (size_t)(res.seq - 1) * 3 * (size_t)cols,
                         (size_t)(r * cols) * sizeof(float)) == 0,
              "frame %llu: values changed on the way", (unsigned long long)res.seq);
      }
      vkp_pipeline_result_deinit(&res);
    }
  }
done:
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
  free(xs);
  free(rows);
}

// The positive elements of x (greater, non_zero, reshape, gather: bounded
// along axis 0) in stage 0, squared in stage 1; both bounded values are
// global outputs. Placed {1, 0} (the extent comes back in the reply and
// reaches rank 0's stage through its ring slot), {0, 1} (it goes out with
// the command), and {1, 2} ({1, 1} at two ranks: a direct route between
// serving ranks, the extent in the route's header). Frames where nothing
// is picked included; against the directly computed truth.
enum { kPickN = 300 };  // 1200 bytes of x; `vals` bounded at 300

static vkp_status_t pick_plan(const int32_t ranks[2], vkp_plan_t **out) {
  *out = NULL;
  vkp_graph_t *g = NULL;
  int64_t shape[1] = {kPickN}, one = 1, minus_one = -1;
  float zero = 0.0f;
  vkp_attr_t flat = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = &minus_one, .count = 1};
  const char *gt_in[] = {"x", "zero"}, *gt_out[] = {"mask"}, *nz_in[] = {"mask"},
             *nz_out[] = {"nz"}, *fl_out[] = {"idx"}, *pk_in[] = {"x", "idx"},
             *pk_out[] = {"vals"}, *sq_in[] = {"vals", "vals"}, *sq_out[] = {"sq"};
  vkp_status_t st = vkp_graph_create("pick", &g);
  if (!st) st = vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, shape, NULL);
  if (!st) st = vkp_graph_add_constant(g, "zero", VKP_DTYPE_FLOAT32, 1, &one, &zero, NULL);
  if (!st) st = vkp_graph_add_node(g, "gt", VKP_OP_GREATER, 2, gt_in, 1, gt_out, 0, NULL, NULL);
  if (!st) st = vkp_graph_add_node(g, "nz", VKP_OP_NON_ZERO, 1, nz_in, 1, nz_out, 0, NULL, NULL);
  if (!st) st = vkp_graph_add_node(g, "flat", VKP_OP_RESHAPE, 1, nz_out, 1, fl_out, 1, &flat, NULL);
  if (!st) st = vkp_graph_add_node(g, "pick", VKP_OP_GATHER, 2, pk_in, 1, pk_out, 0, NULL, NULL);
  if (!st) st = vkp_graph_add_node(g, "square", VKP_OP_MUL, 2, sq_in, 1, sq_out, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "idx");
  if (!st) st = vkp_graph_mark_output(g, "sq");
  if (!st) st = vkp_graph_validate(g);
  vkp_plan_t *plan = NULL;
  if (!st) st = vkp_plan_create("pick", &plan);
  const int32_t s0[] = {0, 1, 2, 3}, s1[] = {4};
  vkp_graph_t *g0 = NULL, *g1 = NULL;
  if (!st) st = vkp_graph_extract(g, 4, s0, "pick", &g0);
  if (!st) st = vkp_graph_extract(g, 1, s1, "square", &g1);
  if (!st) st = vkp_plan_add_stage(plan, "pick", "cpu", g0, NULL);
  else vkp_graph_destroy(g0);
  g0 = NULL;
  if (!st) st = vkp_plan_add_stage(plan, "square", "cpu", g1, NULL);
  else vkp_graph_destroy(g1);
  if (!st) st = vkp_plan_add_global_input(plan, "x");
  if (!st) st = vkp_plan_add_global_output(plan, "idx");
  if (!st) st = vkp_plan_add_global_output(plan, "sq");
  if (!st) st = vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x");
  if (!st) st = vkp_plan_bind(plan, 0, "vals", 1, "vals");
  if (!st) st = vkp_plan_bind(plan, 0, "idx", VKP_PLAN_GLOBAL, "idx");
  if (!st) st = vkp_plan_bind(plan, 1, "sq", VKP_PLAN_GLOBAL, "sq");
  for (int32_t s = 0; s < 2 && !st; ++s) st = vkp_plan_set_stage_rank(plan, s, ranks[s]);
  if (!st) st = vkp_plan_validate(plan);
  vkp_graph_destroy(g);
  if (st) {
    vkp_plan_destroy(plan);
    return st;
  }
  *out = plan;
  return NULL;
}

static void case_bounded_pick(const int32_t ranks[2]) {
  enum { kFrames = 200 };
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  float *xs = NULL;
  OK(vkp_registry_create_default(&reg));
  OK(pick_plan(ranks, &plan));
  if (g_rank != 0) {
    if (ranks[0] == g_rank || ranks[1] == g_rank) serve(plan, reg);
    goto done;
  }
  OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  xs = calloc((size_t)kFrames * kPickN, sizeof(float));
  uint64_t collected = 0;
  int64_t shape[1] = {kPickN};
  for (int f = 0; f <= kFrames; ++f) {
    if (f < kFrames) {
      float *x = xs + (size_t)f * kPickN;
      // A share of positives that varies by frame; none in frame 5.
      float lo = f == 5 ? -10.0f : rng_uniform(-10, 0), hi = f == 5 ? -1.0f : rng_uniform(0, 10);
      for (int k = 0; k < kPickN; ++k) x[k] = rng_uniform(lo, hi);
      vkp_tensor_t t;
      OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, shape, x));
      OK(vkp_pipeline_set_input(pipe, "x", &t));
      OK(vkp_pipeline_run(pipe, NULL));
    }
    while (collected < kFrames && (f == kFrames || (uint64_t)f + 1 - collected > 4)) {
      vkp_pipeline_result_t res;
      OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
      collected++;
      CHECK(res.seq == collected, "pick: result seq %llu, expected %llu",
            (unsigned long long)res.seq, (unsigned long long)collected);
      CHECK(!res.status, "pick {%d, %d}: frame %llu failed: %s", (int)ranks[0],
            (int)ranks[1], (unsigned long long)res.seq, vkp_status_message(res.status));
      if (!res.status) {
        const float *x = xs + (size_t)(res.seq - 1) * kPickN;
        int64_t want = 0;
        bool same = true;
        const vkp_tensor_t *idx = &res.outputs[0], *sq = &res.outputs[1];
        for (int k = 0; k < kPickN; ++k) {
          if (!(x[k] > 0.0f)) continue;
          same = same && want < idx->shape[0] && want < sq->shape[0] &&
                 ((const int64_t *)idx->data)[want] == k &&
                 ((const float *)sq->data)[want] == x[k] * x[k];
          want++;
        }
        CHECK(idx->shape[0] == want && sq->shape[0] == want && same,
              "pick {%d, %d}: frame %llu: %lld indices and %lld squares, want %lld%s",
              (int)ranks[0], (int)ranks[1], (unsigned long long)res.seq,
              (long long)idx->shape[0], (long long)sq->shape[0], (long long)want,
              same ? "" : " (values differ)");
      }
      vkp_pipeline_result_deinit(&res);
    }
  }
done:
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
  free(xs);
}


// The serving rank lacks the stage's target ("tmath" is registered on rank 0
// only): rank 0's create fails with that rank's error, and nothing waits.
static void case_remote_load_error(void) {
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  OK(vkp_registry_create(&reg));
  if (g_rank == 0) OK(tmath_register(reg, 0, 0));
  OK(diamond_plan("tmath", NULL, 0, &plan));
  place_diamond(plan);
  if (g_rank != 0) {
    serve(plan, reg);  // reports the load error, then serves until stopped
    goto done;
  }
  vkp_status_t st = vkp_pipeline_create(plan, reg, NULL, &pipe);
  CHECK(st && strstr(vkp_status_message(st), "rank 1 could not load the stage") &&
            strstr(vkp_status_message(st), "tmath"),
        "expected rank 1's load error, got '%s'", st ? vkp_status_message(st) : "OK");
  CHECK(!pipe, "a pipeline was made");
  if (st) printf("remote load error: %s\n", vkp_status_message(st));
  vkp_status_free(st);
done:
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}

static void case_missing_rank(void) {
  vkp_registry_t *reg = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  OK(vkp_registry_create_default(&reg));
  OK(identity_plan(VKP_DTYPE_FLOAT32, g_size, false, 5, &plan));
  if (g_rank == 0) {
    vkp_status_t st = vkp_pipeline_create(plan, reg, NULL, &pipe);
    char want[64];
    snprintf(want, sizeof want, "MPI world has %d ranks", g_size);
    CHECK(st && strstr(vkp_status_message(st), want) &&
              strstr(vkp_status_message(st), "'id'"),
          "expected a clear error, got '%s'", st ? vkp_status_message(st) : "OK");
    CHECK(!pipe, "a pipeline was made");
    vkp_status_free(st);
  } else {
    serve(plan, reg);  // no stage here: returns at once
  }
done:
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
}

static void case_destroy_in_flight(void) {
  enum { kStages = 3 };
  vkp_pipeline_synthetic_stage_t stages[kStages];
  int32_t ranks[kStages];
  for (int32_t i = 0; i < kStages; ++i) {
    stages[i] = (vkp_pipeline_synthetic_stage_t){VKP_PIPELINE_SYNTHETIC_SLEEP,
                                                 2000000u};
    ranks[i] = (i + 1) % g_size;
  }
  vkp_pipeline_t *pipe = NULL;
  if (g_rank != 0) {
    vkp_status_t st = vkp_mpi_serve_synthetic(stages, ranks, kStages, 4);
    CHECK(!st, "serve: %s", vkp_status_message(st));
    vkp_status_free(st);
    return;
  }
  OK(vkp_pipeline_create_synthetic_ranks(stages, ranks, kStages, 4, NULL, &pipe));
  float x[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  for (int f = 0; f < 6; ++f) {
    vkp_tensor_t t;
    OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, shape, x));
    OK(vkp_pipeline_set_input(pipe, "x", &t));
    OK(vkp_pipeline_run(pipe, NULL));
  }
done:
  vkp_pipeline_destroy(pipe);  // frames in flight: every rank must return
}

// `test_mpi dead` (mpirun --enable-recovery, VKPIPE_MPI_TIMEOUT_S small):
// rank 1 serves a stage and kills itself mid-run. Every frame is still
// answered once, in order: the first ones with results, then DEVICE_LOST
// naming rank 1; later runs are refused naming it. Prints "dead rank: ok"
// (ctest matches it: the job's exit status is MPI's business once a rank
// died).
// Rank 1 ends (SIGKILL) or hangs whole (SIGSTOP: its heartbeats stop too)
// after 0.3 s.
static int g_signal = SIGKILL;

static void *die_soon(void *arg) {
  struct timespec ts = {0, 300000000};
  nanosleep(&ts, NULL);
  raise(g_signal);
  return NULL;
}

static int case_dead_rank(int sig) {
  g_signal = sig;
  vkp_pipeline_synthetic_stage_t stages[2] = {
      {VKP_PIPELINE_SYNTHETIC_SLEEP, 1000000u}, {VKP_PIPELINE_SYNTHETIC_SLEEP, 1000000u}};
  int32_t ranks[2] = {0, 1};
  if (g_rank != 0) {
    pthread_t t;
    if (g_rank == 1) pthread_create(&t, NULL, die_soon, NULL);
    vkp_status_free(vkp_mpi_serve_synthetic(stages, ranks, 2, 4));
    return 0;
  }
  vkp_pipeline_t *pipe = NULL;
  uint64_t ok = 0, lost = 0, taken = 0, runs = 0;
  OK(vkp_pipeline_create_synthetic_ranks(stages, ranks, 2, 4, NULL, &pipe));
  float x[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  vkp_status_t refused = NULL;
  for (int f = 0; f < 100000 && !refused; ++f) {
    vkp_tensor_t t;
    OK(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, shape, x));
    OK(vkp_pipeline_set_input(pipe, "x", &t));
    refused = vkp_pipeline_run(pipe, NULL);
    if (!refused) runs++;
    vkp_pipeline_result_t res;
    while (!vkp_pipeline_get_output(pipe, 0, &res)) {
      taken++;
      CHECK(res.seq == taken, "result %llu out of order", (unsigned long long)res.seq);
      if (!res.status) ok++;
      else if (vkp_status_is(res.status, VKP_STATUS_DEVICE_LOST) &&
               strstr(vkp_status_message(res.status), "rank 1"))
        lost++;
      else
        CHECK(false, "unexpected error: %s", vkp_status_message(res.status));
      vkp_pipeline_result_deinit(&res);
    }
  }
  CHECK(refused && vkp_status_is(refused, VKP_STATUS_DEVICE_LOST) &&
            strstr(vkp_status_message(refused), "rank 1 is lost"),
        "later runs: '%s'", refused ? vkp_status_message(refused) : "accepted");
  printf("dead rank: later run refused with: %s\n",
         refused ? vkp_status_message(refused) : "(accepted)");
  vkp_status_free(refused);
  OK(vkp_pipeline_drain(pipe, UINT64_MAX));
  vkp_pipeline_result_t res;
  while (!vkp_pipeline_get_output(pipe, 0, &res)) {
    taken++;
    CHECK(res.seq == taken, "result %llu out of order", (unsigned long long)res.seq);
    if (!res.status) ok++;
    else lost++;
    vkp_pipeline_result_deinit(&res);
  }
  CHECK(taken == runs && lost >= 1 && ok >= 1,
        "%llu runs, %llu results (%llu ok, %llu lost)", (unsigned long long)runs,
        (unsigned long long)taken, (unsigned long long)ok, (unsigned long long)lost);
  printf("dead rank: %llu runs, %llu ok, %llu failed naming rank 1\n",
         (unsigned long long)runs, (unsigned long long)ok, (unsigned long long)lost);
done:
  vkp_pipeline_destroy(pipe);
  if (!g_failures) printf("dead rank: ok\n");
  fflush(stdout);
  vkp_mpi_finalize();  // aborts the job: a rank is gone
  return g_failures ? 1 : 0;
}

int main(int argc, char **argv) {
  int32_t rank = 0, size = 0;
  vkp_status_t st = vkp_mpi_init(&argc, &argv, &rank, &size);
  if (st) {
    fprintf(stderr, "test_mpi: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    return 1;
  }
  g_rank = rank;
  g_size = size;
  if (argc > 1 && !strcmp(argv[1], "dead")) return case_dead_rank(SIGKILL);
  if (argc > 1 && !strcmp(argv[1], "hung")) return case_dead_rank(SIGSTOP);
  int32_t frames = argc > 1 ? atoi(argv[1]) : 2000;
  const char *seed = getenv("VKPIPE_TEST_SEED");
  g_rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
  if (!g_rng) g_rng = 1;
  // Every rank draws the same numbers only on rank 0; share the seed.
  if (rank == 0) printf("test_mpi: %d ranks, %d frames, seed %llu\n", size,
                        frames, (unsigned long long)g_rng);
  case_synthetic(frames);
  case_direct_chain(frames / 4);
  case_diamond_tmath(frames);
  case_diamond_real("cpu", 20);
  case_diamond_real("vulkan", 20);
  case_dtypes();
  case_missing_rank();
  case_remote_load_error();
  case_bounded_identity(5);
  case_bounded_identity(1000);
  {
    const int32_t back[2] = {1 % g_size, 0}, out[2] = {0, 1 % g_size},
                  direct[2] = {1 % g_size, g_size > 2 ? 2 : 1 % g_size};
    case_bounded_pick(back);
    case_bounded_pick(out);
    case_bounded_pick(direct);
  }
  case_destroy_in_flight();
  if (g_failures) fprintf(stderr, "rank %d: %d failures\n", rank, g_failures);
  else if (rank == 0) printf("test_mpi: all cases passed\n");
  vkp_mpi_finalize();
  return g_failures ? 1 : 0;
}
