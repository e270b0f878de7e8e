// SPDX-License-Identifier: Apache-2.0
// Pipeline executor benchmark (not a test): synthetic stages with fixed
// costs. Measures
//   - steady-state throughput of K stages of C µs each against
//     1 / max(measured stage busy time), pipelined and sequential;
//   - the latency one CPU -> CPU hop adds (median over frames, chains of 1
//     and H+1 zero-cost stages).
//   - with --vulkan: a frame through one "vulkan" stage (host -> GPU -> host
//     through staging slots, semaphores and the completer) against a bare
//     synchronous run of the same loaded stage (submit and wait), median of
//     each, measured in the same run.
// Usage: bench_pipeline [--stages K] [--cost-us C] [--frames N] [--busy]
//                       [--hops H] [--vulkan] [--json]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkpipe/graph.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/target.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int check(vkp_status_t st, const char *what) {
  if (!st) return 0;
  fprintf(stderr, "bench_pipeline: %s: %s\n", what, vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

typedef struct throughput_t {
  double fps, ideal_fps, max_stage_ms, median_latency_ms;
} throughput_t;

// Runs `frames` frames, keeping the pipeline full; steady-state rate over
// the frames after a warm-up of a tenth.
static int measure_throughput(int32_t stages, uint64_t cost_ns, bool busy,
                              bool sequential, int32_t frames,
                              throughput_t *out) {
  vkp_pipeline_synthetic_stage_t *spec = calloc((size_t)stages, sizeof(*spec));
  uint64_t *lat = calloc((size_t)frames, sizeof(uint64_t));
  if (!spec || !lat) return 1;
  for (int32_t i = 0; i < stages; ++i)
    spec[i] = (vkp_pipeline_synthetic_stage_t){
        busy ? VKP_PIPELINE_SYNTHETIC_BUSY : VKP_PIPELINE_SYNTHETIC_SLEEP, cost_ns};
  vkp_pipeline_options_t opts = {.sequential = sequential};
  vkp_pipeline_t *pipe = NULL;
  int rc = check(vkp_pipeline_create_synthetic(spec, stages, 256, &opts, &pipe),
                 "create");
  float x[256] = {0};
  int64_t n = 256;
  vkp_tensor_t t;
  rc = rc || check(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, &n, x), "tensor");
  int32_t warm = frames / 10, taken = 0;
  uint64_t t_warm = 0, t_end = 0;
  for (int32_t i = 0; !rc && (i < frames || taken < frames);) {
    if (i < frames) {
      rc = check(vkp_pipeline_set_input(pipe, "x", &t), "set_input");
      rc = rc || check(vkp_pipeline_run(pipe, NULL), "run");
      ++i;
    }
    vkp_pipeline_result_t res;
    vkp_status_t st = vkp_pipeline_get_output(pipe, i < frames ? 0 : UINT64_MAX, &res);
    if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
      vkp_status_free(st);
      continue;
    }
    if (rc || check(st, "get_output") || res.status) {
      rc = 1;
      vkp_pipeline_result_deinit(&res);
      break;
    }
    lat[taken++] = res.latency_ns;
    if (taken == warm) t_warm = now_ns();
    if (taken == frames) t_end = now_ns();
    vkp_pipeline_result_deinit(&res);
  }
  if (!rc) {
    vkp_pipeline_stats_t stats;
    rc = check(vkp_pipeline_get_stats(pipe, &stats), "stats");
    double max_ms = 0, sum_ms = 0;
    for (int32_t s = 0; !rc && s < stats.n_stages; ++s) {
      double ms = (double)stats.stages[s].busy_ns / (double)stats.stages[s].frames / 1e6;
      if (ms > max_ms) max_ms = ms;
      sum_ms += ms;
    }
    vkp_pipeline_stats_deinit(&stats);
    qsort(lat, (size_t)frames, sizeof(uint64_t), cmp_u64);
    out->fps = (double)(frames - warm) / ((double)(t_end - t_warm) / 1e9);
    out->max_stage_ms = max_ms;
    out->ideal_fps = sequential ? 1e3 / sum_ms : 1e3 / max_ms;
    out->median_latency_ms = (double)lat[frames / 2] / 1e6;
  }
  vkp_pipeline_destroy(pipe);
  free(spec);
  free(lat);
  return rc;
}

// Median latency of one frame at a time through `stages` zero-cost stages.
static int measure_latency(int32_t stages, int32_t frames, double *out_us) {
  vkp_pipeline_synthetic_stage_t *spec = calloc((size_t)stages, sizeof(*spec));
  uint64_t *lat = calloc((size_t)frames, sizeof(uint64_t));
  if (!spec || !lat) return 1;
  vkp_pipeline_t *pipe = NULL;
  int rc = check(vkp_pipeline_create_synthetic(spec, stages, 16, NULL, &pipe),
                 "create");
  float x[16] = {0};
  int64_t n = 16;
  vkp_tensor_t t;
  rc = rc || check(vkp_tensor_init_view(&t, VKP_DTYPE_FLOAT32, 1, &n, x), "tensor");
  for (int32_t i = 0; !rc && i < frames; ++i) {
    rc = check(vkp_pipeline_set_input(pipe, "x", &t), "set_input");
    rc = rc || check(vkp_pipeline_run(pipe, NULL), "run");
    vkp_pipeline_result_t res;
    rc = rc || check(vkp_pipeline_get_output(pipe, UINT64_MAX, &res), "get_output");
    if (!rc) lat[i] = res.latency_ns;
    vkp_pipeline_result_deinit(&res);
  }
  qsort(lat, (size_t)frames, sizeof(uint64_t), cmp_u64);
  *out_us = (double)lat[frames / 2] / 1e3;
  vkp_pipeline_destroy(pipe);
  free(spec);
  free(lat);
  return rc;
}

// One "vulkan" stage y = x * x + x on 4096 floats: the executor's
// round-trip latency (set_input to get_output) against bare run() calls on
// a stage loaded from the same blob. Returns 1 on error, 3 when Vulkan (or
// its codegen) is not available here.
static int measure_vulkan(int32_t frames, double *out_pipe_us, double *out_bare_us) {
  vkp_registry_t *reg = NULL;
  if (check(vkp_registry_create_default(&reg), "registry")) return 1;
  const vkp_target_t *vk = vkp_registry_find(reg, "vulkan");
  vkp_graph_t *g = NULL;
  int64_t n = 4096;
  const char *mul_in[] = {"x", "x"}, *mul_out[] = {"xx"};
  const char *add_in[] = {"xx", "x"}, *add_out[] = {"y"};
  int rc = check(vkp_graph_create("vk", &g), "graph");
  rc = rc || check(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, &n, NULL), "graph");
  rc = rc || check(vkp_graph_add_node(g, "mul", VKP_OP_MUL, 2, mul_in, 1, mul_out, 0,
                                      NULL, NULL), "graph");
  rc = rc || check(vkp_graph_add_node(g, "add", VKP_OP_ADD, 2, add_in, 1, add_out, 0,
                                      NULL, NULL), "graph");
  rc = rc || check(vkp_graph_mark_output(g, "y"), "graph");
  rc = rc || check(vkp_graph_validate(g), "graph");
  vkp_blob_t blob = {0};
  if (!rc && (!vk || vk->vtable->compiler.compile(vk, g, NULL, &blob) != NULL)) {
    fprintf(stderr, "bench_pipeline: vulkan stages are not available here\n");
    vkp_graph_destroy(g);
    vkp_registry_destroy(reg);
    return 3;
  }
  vkp_plan_t *plan = NULL;
  vkp_graph_t *sub = NULL;
  rc = rc || check(vkp_graph_clone(g, &sub), "clone");
  rc = rc || check(vkp_plan_create("vk", &plan), "plan");
  rc = rc || check(vkp_plan_add_stage(plan, "gpu", "vulkan", sub, NULL), "plan");
  rc = rc || check(vkp_plan_add_global_input(plan, "x"), "plan");
  rc = rc || check(vkp_plan_add_global_output(plan, "y"), "plan");
  rc = rc || check(vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x"), "plan");
  rc = rc || check(vkp_plan_bind(plan, 0, "y", VKP_PLAN_GLOBAL, "y"), "plan");
  vkp_pipeline_t *pipe = NULL;
  rc = rc || check(vkp_pipeline_create(plan, reg, NULL, &pipe), "pipeline");
  vkp_stage_t *stage = NULL;
  rc = rc || check(vk->vtable->stage.load(vk, g, blob.data, blob.size, &stage), "load");
  vkp_tensor_t x = {0}, y = {0};
  rc = rc || check(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, &n), "tensor");
  rc = rc || check(vkp_tensor_init(&y, VKP_DTYPE_FLOAT32, 1, &n), "tensor");
  uint64_t *pipe_ns = calloc((size_t)frames, sizeof(uint64_t));
  uint64_t *bare_ns = calloc((size_t)frames, sizeof(uint64_t));
  if (!pipe_ns || !bare_ns) rc = 1;
  // Interleaved so both see the same machine load.
  for (int32_t i = 0; !rc && i < frames; ++i) {
    uint64_t t0 = now_ns();
    rc = check(vkp_pipeline_set_input(pipe, "x", &x), "set_input");
    rc = rc || check(vkp_pipeline_run(pipe, NULL), "run");
    vkp_pipeline_result_t res = {0};
    rc = rc || check(vkp_pipeline_get_output(pipe, UINT64_MAX, &res), "get_output");
    if (!rc && res.status) rc = check(res.status, "frame"), res.status = NULL;
    vkp_pipeline_result_deinit(&res);
    uint64_t t1 = now_ns();
    rc = rc || check(vk->vtable->stage.run(stage, &x, &y), "bare run");
    uint64_t t2 = now_ns();
    if (!rc) {
      pipe_ns[i] = t1 - t0;
      bare_ns[i] = t2 - t1;
    }
  }
  if (!rc) {
    qsort(pipe_ns, (size_t)frames, sizeof(uint64_t), cmp_u64);
    qsort(bare_ns, (size_t)frames, sizeof(uint64_t), cmp_u64);
    *out_pipe_us = (double)pipe_ns[frames / 2] / 1e3;
    *out_bare_us = (double)bare_ns[frames / 2] / 1e3;
  }
  free(pipe_ns);
  free(bare_ns);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  if (stage) vk->vtable->stage.unload(stage);
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_blob_deinit(&blob);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
  return rc;
}

int main(int argc, char **argv) {
  int32_t stages = 4, frames = 1000, hops = 4;
  uint64_t cost_us = 1000;
  bool busy = false, json = false, vulkan = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--stages") && i + 1 < argc) stages = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cost-us") && i + 1 < argc) cost_us = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--frames") && i + 1 < argc) frames = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--hops") && i + 1 < argc) hops = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--busy")) busy = true;
    else if (!strcmp(argv[i], "--json")) json = true;
    else if (!strcmp(argv[i], "--vulkan")) vulkan = true;
    else {
      fprintf(stderr, "usage: %s [--stages K] [--cost-us C] [--frames N] [--busy] "
                      "[--hops H] [--vulkan] [--json]\n", argv[0]);
      return 2;
    }
  }
  if (stages < 1 || frames < 20 || hops < 1) {
    fprintf(stderr, "bench_pipeline: need stages >= 1, frames >= 20, hops >= 1\n");
    return 2;
  }
  throughput_t piped, seq;
  double lat1, latn;
  if (measure_throughput(stages, cost_us * 1000, busy, false, frames, &piped) ||
      measure_throughput(stages, cost_us * 1000, busy, true, frames / 4 + 20, &seq) ||
      measure_latency(1, 4 * frames, &lat1) ||
      measure_latency(hops + 1, 4 * frames, &latn))
    return 1;
  double hop_us = (latn - lat1) / hops;
  double vk_pipe_us = 0, vk_bare_us = 0;
  int vk_rc = vulkan ? measure_vulkan(frames, &vk_pipe_us, &vk_bare_us) : 3;
  if (vk_rc == 1) return 1;
  if (json) {
    printf("{\"stages\": %d, \"cost_us\": %llu, \"kind\": \"%s\", \"frames\": %d,\n"
           " \"pipelined\": {\"fps\": %.1f, \"ideal_fps\": %.1f, \"ratio\": %.4f, "
           "\"max_stage_ms\": %.4f, \"median_latency_ms\": %.3f},\n"
           " \"sequential\": {\"fps\": %.1f, \"ideal_fps\": %.1f, \"ratio\": %.4f},\n"
           " \"latency_us\": {\"stages_1\": %.2f, \"stages_%d\": %.2f, "
           "\"per_cpu_hop\": %.2f}",
           stages, (unsigned long long)cost_us, busy ? "busy" : "sleep", frames,
           piped.fps, piped.ideal_fps, piped.fps / piped.ideal_fps,
           piped.max_stage_ms, piped.median_latency_ms, seq.fps, seq.ideal_fps,
           seq.fps / seq.ideal_fps, lat1, hops + 1, latn, hop_us);
    if (vk_rc == 0)
      printf(",\n \"vulkan_us\": {\"pipeline\": %.1f, \"bare_submit_wait\": %.1f, "
             "\"ratio\": %.3f}", vk_pipe_us, vk_bare_us, vk_pipe_us / vk_bare_us);
    printf("}\n");
    return 0;
  }
  printf("%d %s stages of %llu us, %d frames\n", stages, busy ? "busy" : "sleeping",
         (unsigned long long)cost_us, frames);
  printf("  pipelined : %8.1f frames/s  ideal 1/max(stage) %8.1f  ratio %.2f%%  "
         "(max stage %.3f ms, median latency %.3f ms)\n",
         piped.fps, piped.ideal_fps, 100 * piped.fps / piped.ideal_fps,
         piped.max_stage_ms, piped.median_latency_ms);
  printf("  sequential: %8.1f frames/s  ideal 1/sum(stages)  %8.1f  ratio %.2f%%\n",
         seq.fps, seq.ideal_fps, 100 * seq.fps / seq.ideal_fps);
  printf("latency, one frame at a time, zero-cost stages (median):\n");
  printf("  1 stage %.2f us, %d stages %.2f us: %.2f us per CPU->CPU hop\n", lat1,
         hops + 1, latn, hop_us);
  if (vk_rc == 0)
    printf("CPU->GPU->CPU, one vulkan stage (median): pipeline %.1f us, bare "
           "submit+wait %.1f us, ratio %.2f\n",
           vk_pipe_us, vk_bare_us, vk_pipe_us / vk_bare_us);
  return 0;
}
