// SPDX-License-Identifier: Apache-2.0
// vkpipe soak: pipelines created, driven and destroyed over and over with
// random stage costs, random get_output timeouts and pipelines destroyed
// with frames in flight. Checks that every collected frame comes back
// exactly once, in order, with the right values, and that resident memory
// stays flat. Prints frames and RSS over time.
//
//   vkp_soak [--seconds N] [--seed S] [--rss-slack-mib M] [--model FILE.json]
//
// --model adds a real model (a JSON graph with one input), split over the
// ref and cpu targets, to the mix; its outputs must match the ref target's on
// the same inputs. The suite runs this for a few seconds (soak_short);
// scripts/soak.sh runs it for an hour.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/target.h"

static uint64_t vkp__rng;
static uint32_t vkp__rand(uint32_t n) {
  vkp__rng ^= vkp__rng << 13;
  vkp__rng ^= vkp__rng >> 7;
  vkp__rng ^= vkp__rng << 17;
  return n ? (uint32_t)(vkp__rng % n) : 0;
}

static double vkp__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long vkp__rss_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, rss = 0;
  if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
  if (f) fclose(f);
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

#define VKP__CHECK(cond, ...)                                   \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "soak: FAILED: " __VA_ARGS__);            \
      fprintf(stderr, "\n");                                    \
      exit(1);                                                  \
    }                                                           \
  } while (0)

static void vkp__ok(vkp_status_t st, const char *what) {
  if (!st) return;
  fprintf(stderr, "soak: %s: %s\n", what, vkp_status_message(st));
  exit(1);
}

typedef struct vkp__model_t {
  vkp_graph_t *graph;
  vkp_plan_t *plan;        // ref + cpu stages
  vkp_tensor_t inputs[4];  // fixed inputs, cycled
  vkp_tensor_t wants[4];   // the ref target's outputs for them
} vkp__model_t;

// One pipeline's life: frames in, results out (checked), then destroyed,
// sometimes with frames still in flight. Returns frames collected.
static uint64_t vkp__one_life(const vkp_registry_t *reg, vkp__model_t *model) {
  bool use_model = model && vkp__rand(8) == 0;
  int32_t n_stages = 1 + (int32_t)vkp__rand(4);
  int64_t numel = 1 + vkp__rand(256);
  vkp_pipeline_t *pipe = NULL;
  if (use_model) {
    vkp__ok(vkp_pipeline_create(model->plan, reg, NULL, &pipe), "create (model)");
  } else {
    vkp_pipeline_synthetic_stage_t st[4];
    for (int32_t s = 0; s < n_stages; ++s) {
      st[s].kind = vkp__rand(2) ? VKP_PIPELINE_SYNTHETIC_SLEEP : VKP_PIPELINE_SYNTHETIC_BUSY;
      st[s].cost_ns = vkp__rand(200) * 1000ull;
    }
    vkp__ok(vkp_pipeline_create_synthetic(st, n_stages, numel, NULL, &pipe), "create");
  }
  uint32_t frames = 1 + vkp__rand(200);
  bool abandon = vkp__rand(4) == 0;  // destroy with frames in flight
  uint64_t next_expected = 1, collected = 0;
  int64_t shape[1] = {numel};
  vkp_tensor_t x;
  if (!use_model) vkp__ok(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, shape), "tensor");
  for (uint32_t f = 0; f < frames; ++f) {
    uint64_t seq = 0;
    if (use_model) {
      vkp__ok(vkp_pipeline_set_input(pipe, vkp_pipeline_input_name(pipe, 0),
                                     &model->inputs[f % 4]), "set_input");
    } else {
      float *p = x.data;
      for (int64_t i = 0; i < numel; ++i) p[i] = (float)(f * 3 + (uint32_t)i);
      vkp__ok(vkp_pipeline_set_input(pipe, "x", &x), "set_input");
    }
    vkp__ok(vkp_pipeline_run(pipe, &seq), "run");
    VKP__CHECK(seq == f + 1, "run gave seq %" PRIu64 " for frame %u", seq, f + 1);
    // Collect whatever is ready, with a random timeout (0 polls).
    while (!abandon || vkp__rand(2)) {
      vkp_pipeline_result_t r;
      uint64_t timeout = vkp__rand(3) == 0 ? 0 : vkp__rand(1000) * 1000ull;
      vkp_status_t st = vkp_pipeline_get_output(pipe, timeout, &r);
      if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
        vkp_status_free(st);
        break;
      }
      vkp__ok(st, "get_output");
      VKP__CHECK(r.seq == next_expected, "got frame %" PRIu64 ", expected %" PRIu64,
                 r.seq, next_expected);
      vkp__ok(r.status, "frame");
      uint32_t fi = (uint32_t)(r.seq - 1);
      if (use_model) {
        const vkp_tensor_t *want = &model->wants[fi % 4];
        size_t n = vkp_tensor_numel(want);
        VKP__CHECK(vkp_tensor_numel(&r.outputs[0]) == n, "frame %" PRIu64 ": size", r.seq);
        const float *got = r.outputs[0].data, *ref = want->data;
        for (size_t i = 0; i < n; ++i) {
          float d = got[i] - ref[i], tol = 1e-4f + 1e-4f * (ref[i] < 0 ? -ref[i] : ref[i]);
          VKP__CHECK(d <= tol && -d <= tol,
                     "frame %" PRIu64 ": output %zu is %g, the ref target gives %g",
                     r.seq, i, (double)got[i], (double)ref[i]);
        }
      } else {
        const float *y = r.outputs[0].data;
        VKP__CHECK(y[0] == (float)(fi * 3) + (float)n_stages,
                   "frame %" PRIu64 ": y[0] = %g", r.seq, (double)y[0]);
        if (numel > 1) VKP__CHECK(y[numel - 1] == (float)(fi * 3 + (uint32_t)(numel - 1)),
                                  "frame %" PRIu64 ": last element wrong", r.seq);
      }
      vkp_pipeline_result_deinit(&r);
      ++next_expected;
      ++collected;
    }
  }
  if (!abandon) {
    vkp__ok(vkp_pipeline_drain(pipe, UINT64_MAX), "drain");
    while (next_expected <= frames) {
      vkp_pipeline_result_t r;
      vkp__ok(vkp_pipeline_get_output(pipe, UINT64_MAX, &r), "get_output (drain)");
      VKP__CHECK(r.seq == next_expected, "got frame %" PRIu64 ", expected %" PRIu64,
                 r.seq, next_expected);
      vkp__ok(r.status, "frame");
      vkp_pipeline_result_deinit(&r);
      ++next_expected;
      ++collected;
    }
    vkp_pipeline_result_t r;
    vkp_status_t st = vkp_pipeline_get_output(pipe, 0, &r);
    VKP__CHECK(vkp_status_is(st, VKP_STATUS_EMPTY), "a frame came back twice");
    vkp_status_free(st);
  }
  vkp_pipeline_destroy(pipe);
  if (!use_model) vkp_tensor_deinit(&x);
  return collected;
}

static void vkp__model_init(const char *path, const vkp_registry_t *reg, vkp__model_t *m) {
  vkp__ok(vkp_graph_load(path, &m->graph), "loading the model");
  vkp_partition_options_t opt = {.policy = "cpu", .stages = 2};
  vkp_partition_t *part = NULL;
  vkp__ok(vkp_partition_create(m->graph, reg, NULL, &opt, &part), "partition");
  vkp__ok(vkp_partition_to_plan(part, "soak", &m->plan), "plan");
  vkp_partition_destroy(part);
  const vkp_value_t *xv = &m->graph->values[m->graph->inputs[0]];
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  for (int k = 0; k < 4; ++k) {
    vkp__ok(vkp_tensor_init(&m->inputs[k], xv->dtype, xv->rank, xv->shape), "tensor");
    float *p = m->inputs[k].data;
    for (size_t i = 0; i < vkp_tensor_numel(&m->inputs[k]); ++i)
      p[i] = (float)vkp__rand(2000) / 1000.0f - 1.0f;
    vkp__ok(vkp_target_run_graph(ref, m->graph, NULL, &m->inputs[k], &m->wants[k]), "ref");
  }
}

int main(int argc, char **argv) {
  double seconds = 10;
  long slack_mib = 64;
  const char *model_path = NULL;
  vkp__rng = (uint64_t)time(NULL) | 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) vkp__rng = strtoull(argv[++i], NULL, 10) | 1;
    else if (!strcmp(argv[i], "--rss-slack-mib") && i + 1 < argc) slack_mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--model") && i + 1 < argc) model_path = argv[++i];
    else {
      fprintf(stderr, "usage: vkp_soak [--seconds N] [--seed S] [--rss-slack-mib M] "
                      "[--model FILE.json]\n");
      return 2;
    }
  }
  printf("soak: seed %" PRIu64 ", %.0f s\n", vkp__rng, seconds);
  vkp_registry_t *reg = NULL;
  const char *names[] = {"ref", "cpu"};
  vkp__ok(vkp_registry_create_builtin(names, 2, &reg), "registry");
  vkp__model_t model = {0};
  if (model_path) vkp__model_init(model_path, reg, &model);
  double start = vkp__now(), last_print = start, warm_at = start + seconds / 10;
  long rss_base = 0, rss_peak = 0;
  uint64_t frames = 0, lives = 0;
  while (vkp__now() - start < seconds) {
    frames += vkp__one_life(reg, model_path ? &model : NULL);
    ++lives;
    double t = vkp__now();
    long rss = vkp__rss_kib();
    if (!rss_base && t >= warm_at) rss_base = rss;
    if (rss_base && rss > rss_peak) rss_peak = rss;
    if (t - last_print >= (seconds >= 600 ? 60 : 1)) {
      printf("soak: t=%6.0fs frames=%10" PRIu64 " pipelines=%8" PRIu64 " rss=%ld KiB\n",
             t - start, frames, lives, rss);
      fflush(stdout);
      last_print = t;
    }
  }
  long rss_end = vkp__rss_kib();
  printf("soak: done: %" PRIu64 " frames over %" PRIu64 " pipelines; rss after warm-up %ld "
         "KiB, peak %ld KiB, end %ld KiB\n",
         frames, lives, rss_base, rss_peak, rss_end);
  for (int k = 0; model_path && k < 4; ++k) {
    vkp_tensor_deinit(&model.inputs[k]);
    vkp_tensor_deinit(&model.wants[k]);
  }
  vkp_plan_destroy(model.plan);
  vkp_graph_destroy(model.graph);
  vkp_registry_destroy(reg);
  VKP__CHECK(!rss_base || rss_end - rss_base <= slack_mib * 1024,
             "resident memory grew by %ld KiB (allowed %ld MiB)", rss_end - rss_base,
             slack_mib);
  return 0;
}
