// SPDX-License-Identifier: Apache-2.0
// Per-dispatch overhead of the Vulkan stage executor: a run() of a one-
// dispatch program on 64 floats (submit + timeline wait + two tiny copies),
// and a program of 64 dependent dispatches. Not a test: run it by hand.
//   build/tests/runtime/vulkan/bench_vk_dispatch [iterations]
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/vulkan/stage.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench(vkp_vk_device_t *dev, int n_dispatches, int iters) {
  const int64_t n = 64;
  vkp_graph_t *g = NULL;
  if (vkp_graph_create("bench", &g)) abort();
  if (vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, &n, NULL)) abort();
  if (vkp_graph_add_input(g, "y", VKP_DTYPE_FLOAT32, 1, &n, NULL)) abort();
  const char *in[] = {"x", "y"}, *out[] = {"out"};
  if (vkp_graph_add_node(g, "add", VKP_OP_ADD, 2, in, 1, out, 0, NULL, NULL)) abort();
  if (vkp_graph_mark_output(g, "out") || vkp_graph_validate(g)) abort();
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, n * 4}};
  vkp_spirv_dispatch_t *d = calloc((size_t)n_dispatches, sizeof *d);
  // out = x + y, then out = out + y ... (each depends on the previous).
  for (int i = 0; i < n_dispatches; ++i)
    vkp_vk_test_dispatch(&d[i], "add", "a[i] + b[i]", n, 64, i ? 2 : 0, 1, 2);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs,
                              .n_dispatches = n_dispatches, .dispatches = d};
  vkp_vk_stage_t *stage = NULL;
  vkp_status_t st = vkp_vk_stage_create(dev, g, &prog, &stage);
  if (st) {
    fprintf(stderr, "%s\n", vkp_status_message(st));
    exit(1);
  }
  vkp_vk_test_program_free(&prog);
  free(d);
  vkp_tensor_t t[3];
  for (int i = 0; i < 3; ++i)
    if (vkp_tensor_init(&t[i], VKP_DTYPE_FLOAT32, 1, &n)) abort();
  for (int i = 0; i < 10; ++i) vkp_status_free(vkp_vk_stage_run(stage, t, &t[2]));
  double t0 = now_s();
  for (int i = 0; i < iters; ++i) vkp_status_free(vkp_vk_stage_run(stage, t, &t[2]));
  double per_run = (now_s() - t0) / iters;
  printf("%-28s %3d dispatches: %8.1f us per run, %6.1f us per dispatch\n",
         dev->properties.deviceName, n_dispatches, per_run * 1e6,
         per_run * 1e6 / n_dispatches);
  for (int i = 0; i < 3; ++i) vkp_tensor_deinit(&t[i]);
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 500;
  vkp_vk_device_options_t opts = {.validation = 0};
  vkp_vk_device_t *dev = NULL;
  // What every vkp_registry_create_default pays for the "vulkan" target.
  double t0 = now_s();
  for (int i = 0; i < 5; ++i) {
    vkp_status_t st = vkp_vk_device_create(&opts, &dev);
    if (st) {
      fprintf(stderr, "%s\n", vkp_status_message(st));
      return 1;
    }
    vkp_vk_device_destroy(dev);
  }
  printf("device create + destroy: %.1f ms\n", (now_s() - t0) / 5 * 1e3);
  vkp_status_t st = vkp_vk_device_create(&opts, &dev);
  if (st) {
    fprintf(stderr, "%s\n", vkp_status_message(st));
    return 1;
  }
  bench(dev, 1, iters);
  bench(dev, 64, iters / 10 > 0 ? iters / 10 : 1);
  vkp_vk_device_destroy(dev);
  return 0;
}
