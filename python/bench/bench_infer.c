// SPDX-License-Identifier: Apache-2.0
// The C side of python/bench/bench_infer.py: the same tiny-model measurements
// made through the C API, so that the Python binding's added cost can be
// read off as a difference.
//
//   vkpipe-bench-infer MODEL POLICY STAGES CALLS FRAMES
//
// Prints "infer_us <microseconds per vkp_pipeline_infer>" (the best of 20
// batches), then "stream_fps <frames per second>" and "stream_cpu_us <process
// CPU time per frame, every thread>" for FRAMES frames run by this thread and
// collected by a second one.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(vkp_status_t st) {
  fprintf(stderr, "vkpipe-bench-infer: %s\n", vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

typedef struct consumer_t {
  vkp_pipeline_t *pipe;
  long frames;
  long bad;
} consumer_t;

static void *consume(void *arg) {
  consumer_t *c = arg;
  uint64_t last = 0;
  for (long i = 0; i < c->frames; ++i) {
    vkp_pipeline_result_t res;
    vkp_status_t st = vkp_pipeline_get_output(c->pipe, UINT64_MAX, &res);
    if (st || res.status || (last && res.seq != last + 1)) ++c->bad;
    last = res.seq;
    vkp_status_free(st);
    vkp_pipeline_result_deinit(&res);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: vkpipe-bench-infer MODEL POLICY STAGES CALLS FRAMES\n");
    return 2;
  }
  long calls = atol(argv[4]), frames = atol(argv[5]);
  vkp_graph_t *graph = NULL;
  vkp_registry_t *reg = NULL;
  vkp_partition_t *part = NULL;
  vkp_plan_t *plan = NULL;
  vkp_pipeline_t *pipe = NULL;
  vkp_tensor_t *inputs = NULL, *outputs = NULL;
  vkp_status_t st = vkp_graph_load(argv[1], &graph);
  if (!st) st = vkp_registry_create_default(&reg);
  vkp_partition_options_t opt = {.policy = argv[2], .stages = atoi(argv[3])};
  if (!st) st = vkp_partition_create(graph, reg, NULL, &opt, &part);
  if (!st) st = vkp_partition_to_plan(part, "bench", &plan);
  if (!st) st = vkp_pipeline_create(plan, reg, NULL, &pipe);
  if (st) return fail(st);
  inputs = calloc((size_t)graph->n_inputs, sizeof *inputs);
  outputs = calloc((size_t)graph->n_outputs, sizeof *outputs);
  if (!inputs || !outputs) return 1;
  for (int32_t i = 0; i < graph->n_inputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->inputs[i]];
    st = vkp_tensor_init(&inputs[i], v->dtype, v->rank, v->shape);
  }
  if (st) return fail(st);

  // The best of 20 batches: the machine is shared, and the least disturbed
  // batch is the closest to the cost itself.
  double best = 1e30;
  long batch = calls / 20 > 0 ? calls / 20 : 1;
  for (int rep = 0; rep < 20; ++rep) {
    double t0 = now_s();
    for (long c = 0; c < batch; ++c) {
      st = vkp_pipeline_infer(pipe, inputs, outputs);
      if (st) return fail(st);
      for (int32_t o = 0; o < graph->n_outputs; ++o) vkp_tensor_deinit(&outputs[o]);
    }
    double per = (now_s() - t0) / (double)batch;
    if (per < best) best = per;
  }
  printf("infer_us %.3f\n", best * 1e6);

  // Inputs in order, the way the pipeline takes them.
  consumer_t c = {.pipe = pipe, .frames = frames};
  pthread_t thread;
  double t0 = now_s(), c0 = cpu_s();
  pthread_create(&thread, NULL, consume, &c);
  for (long f = 0; f < frames && !st; ++f) {
    for (int32_t i = 0; i < graph->n_inputs && !st; ++i)
      st = vkp_pipeline_set_input(pipe, graph->values[graph->inputs[i]].name,
                                  &inputs[i]);
    if (!st) st = vkp_pipeline_run(pipe, NULL);
  }
  pthread_join(thread, NULL);
  double dt = now_s() - t0, dc = cpu_s() - c0;
  if (st) return fail(st);
  printf("stream_fps %.1f\n", (double)frames / dt);
  printf("stream_cpu_us %.3f\n", dc / (double)frames * 1e6);
  if (c.bad) fprintf(stderr, "vkpipe-bench-infer: %ld bad frames\n", c.bad);

  for (int32_t i = 0; i < graph->n_inputs; ++i) vkp_tensor_deinit(&inputs[i]);
  free(inputs);
  free(outputs);
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(graph);
  return c.bad ? 1 : 0;
}
