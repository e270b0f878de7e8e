// SPDX-License-Identifier: Apache-2.0
// bench_cpu_model: whole-model latency on the "cpu" target (one stage).
//
//   bench_cpu_model MODEL.onnx|MODEL.json [--threads N] [--runs N] [--cpus LIST]
//                   [--node-times] [--march ARCH]
//
// Compiles (or takes from the cache) the whole graph as one stage, loads it,
// runs it once to warm up and then --runs times on the same random inputs,
// and prints compile time, best and median latency: wall time, and the
// process CPU time per run (what a busy, shared machine cannot inflate by
// scheduling other work in between).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cpu/compile.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

static double vkp_bench_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double vkp_bench_now(void) { return vkp_bench_clock(CLOCK_MONOTONIC); }

static int vkp_bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int vkp_bench_fail(vkp_status_t st) {
  fprintf(stderr, "bench_cpu_model: %s\n", vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  const char *model = NULL, *march = NULL;
  int threads = 1, runs = 20;
  int32_t cpus[64];
  int32_t n_cpus = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--march") == 0 && i + 1 < argc) march = argv[++i];
    else if (strcmp(argv[i], "--node-times") == 0)
      setenv("VKPIPE_CPU_NODE_TIMES", "1", 1);  // read when the stage compiles
    else if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc) {
      for (char *c = argv[++i]; *c; c += *c == ',') {
        char *end = NULL;
        long v = strtol(c, &end, 10);
        if (end == c || v < 0 || (*end && *end != ',') || n_cpus == 64) {
          fprintf(stderr, "%s: --cpus takes a list of at most 64 cpu numbers, like 0,1\n", argv[0]);
          return 2;
        }
        cpus[n_cpus++] = (int32_t)v;
        c = end;
      }
    } else if (argv[i][0] != '-' && !model) model = argv[i];
    else {
      fprintf(stderr, "usage: %s MODEL [--threads N] [--runs N] [--march ARCH] [--cpus LIST] [--node-times]\n", argv[0]);
      return 2;
    }
  }
  if (!model || runs < 1) {
    fprintf(stderr, "usage: %s MODEL [--threads N] [--runs N] [--march ARCH] [--cpus LIST] [--node-times]\n", argv[0]);
    return 2;
  }
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(model, &g);
  if (st) return vkp_bench_fail(st);
  vkp_registry_t *reg = NULL;
  const vkp_target_t *cpu = NULL;
  st = vkp_registry_create_default(&reg);
  if (!st) st = vkp_registry_lookup(reg, "cpu", &cpu);
  if (st) return vkp_bench_fail(st);
  vkp_compile_options_t opt = {.threads = threads, .march = march,
                               .cpu_affinity = n_cpus ? cpus : NULL,
                               .n_cpu_affinity = n_cpus};
  vkp_blob_t blob = {0};
  uint64_t hits0, hits1;
  vkp_cpu_compile_stats(&hits0, NULL);
  double t0 = vkp_bench_now();
  st = cpu->vtable->compiler.compile(cpu, g, &opt, &blob);
  double compile_s = vkp_bench_now() - t0;
  vkp_cpu_compile_stats(&hits1, NULL);
  vkp_stage_t *stage = NULL;
  if (!st) st = cpu->vtable->stage.load(cpu, g, blob.data, blob.size, &stage);
  if (st) return vkp_bench_fail(st);
  vkp_tensor_t in[16] = {{0}}, out[16] = {{0}};
  if (g->n_inputs > 16 || g->n_outputs > 16) {
    fprintf(stderr, "bench_cpu_model: more than 16 inputs or outputs\n");
    return 1;
  }
  for (int32_t i = 0; i < g->n_inputs && !st; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    st = vkp_tensor_init(&in[i], v->dtype, v->rank, v->shape);
    if (!st && v->dtype == VKP_DTYPE_FLOAT32) {
      float *p = in[i].data;
      for (size_t k = 0; k < vkp_tensor_numel(&in[i]); ++k)
        p[k] = (float)((k * 2654435761u) % 2001) / 1000.0f - 1.0f;
    }
  }
  for (int32_t i = 0; i < g->n_outputs && !st; ++i) {
    const vkp_value_t *v = &g->values[g->outputs[i]];
    st = vkp_tensor_init(&out[i], v->dtype, v->rank, v->shape);
  }
  if (!st) st = cpu->vtable->stage.run(stage, in, out);  // warm-up
  double *times = calloc((size_t)runs * 2, sizeof(double));
  double *cpu_times = times ? times + runs : NULL;
  for (int r = 0; r < runs && !st && times; ++r) {
    double s = vkp_bench_now(), c = vkp_bench_clock(CLOCK_PROCESS_CPUTIME_ID);
    st = cpu->vtable->stage.run(stage, in, out);
    times[r] = vkp_bench_now() - s;
    cpu_times[r] = vkp_bench_clock(CLOCK_PROCESS_CPUTIME_ID) - c;
  }
  if (st) return vkp_bench_fail(st);
  qsort(times, (size_t)runs, sizeof(double), vkp_bench_cmp);
  qsort(cpu_times, (size_t)runs, sizeof(double), vkp_bench_cmp);
  printf("%s: cpu target, threads %d, compile %.2f s%s; wall best %.2f ms, median "
         "%.2f ms; cpu time best %.2f ms, median %.2f ms (%d runs)\n",
         model, threads, compile_s, hits1 > hits0 ? " (cache hit)" : "", times[0] * 1e3,
         times[runs / 2] * 1e3, cpu_times[0] * 1e3, cpu_times[runs / 2] * 1e3, runs);
  free(times);
  for (int32_t i = 0; i < g->n_inputs; ++i) vkp_tensor_deinit(&in[i]);
  for (int32_t i = 0; i < g->n_outputs; ++i) vkp_tensor_deinit(&out[i]);
  cpu->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
  return 0;
}
