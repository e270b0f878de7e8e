// SPDX-License-Identifier: Apache-2.0
// A device's measured peaks, for scripts/gpu-bench.sh: float32 FMA rate and
// read bandwidth, each from two runs of the Vulkan stage executor that
// differ only in the work timed (so submits, waits and staging copies
// cancel out). Not a test: run it by hand or from gpu-bench.
//
//   build/tests/runtime/vulkan/bench_vk_peak [invocations] [MiB]
//
// FMA: `invocations` (default 1M) invocations of 8 independent `precise`
// fma chains each, ITERS and 2 * ITERS long, ITERS doubled until the
// difference takes 20 ms (on CPU devices at most 16,384: lavapipe's loop
// limit). Read: a scratch buffer of `MiB` (default 256)
// filled by one dispatch, then read by a second that sums 4 floats per
// invocation per pass, against the fill alone.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/vulkan/stage.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(vkp_status_t st) {
  fprintf(stderr, "bench_vk_peak: %s\n", vkp_status_message(st));
  exit(1);
}

// One dispatch of `glsl` (local size 256) over `groups` workgroups, with
// the given bindings.
static void make_dispatch(vkp_spirv_dispatch_t *d, const char *name, const char *glsl,
                          uint32_t groups, int32_t n_bindings,
                          const vkp_spirv_binding_t *bindings) {
  vkp_vk_test_glsl_dispatch(d, name, glsl, 256, groups, n_bindings);
  memcpy(d->bindings, bindings, (size_t)n_bindings * sizeof *bindings);
}

// Median seconds of a run of `prog` (graph input x and output y, both
// `n` floats).
static double time_program(vkp_vk_device_t *dev, vkp_spirv_program_t *prog, int64_t n) {
  vkp_graph_t *g = NULL;
  const char *in[] = {"x"}, *out[] = {"y"};
  vkp_status_t st = vkp_graph_create("peak", &g);
  if (!st) st = vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, &n, NULL);
  if (!st) st = vkp_graph_add_node(g, "relu", VKP_OP_RELU, 1, in, 1, out, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  vkp_vk_stage_t *stage = NULL;
  if (!st) st = vkp_vk_stage_create(dev, g, prog, &stage);
  if (st) die(st);
  vkp_tensor_t t[2];
  for (int i = 0; i < 2; ++i)
    if ((st = vkp_tensor_init(&t[i], VKP_DTYPE_FLOAT32, 1, &n))) die(st);
  for (int64_t i = 0; i < n; ++i) ((float *)t[0].data)[i] = 0.5f + (float)(i % 13) * 0.01f;
  enum { RUNS = 7 };
  double s[RUNS];
  for (int r = -1; r < RUNS; ++r) {
    double t0 = now_s();
    if ((st = vkp_vk_stage_run(stage, t, &t[1]))) die(st);
    if (r >= 0) s[r] = now_s() - t0;
  }
  for (int i = 1; i < RUNS; ++i)
    for (int j = i; j > 0 && s[j] < s[j - 1]; --j) {
      double v = s[j];
      s[j] = s[j - 1];
      s[j - 1] = v;
    }
  for (int i = 0; i < 2; ++i) vkp_tensor_deinit(&t[i]);
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
  return s[RUNS / 2];
}

static double fma_seconds(vkp_vk_device_t *dev, int64_t n, long iters) {
  char glsl[2048];
  snprintf(glsl, sizeof glsl,
           "#version 450\n"
           "layout(local_size_x = 256) in;\n"
           "layout(set = 0, binding = 0) readonly buffer X { float x[]; };\n"
           "layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };\n"
           "void main() {\n"
           "  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i >= %lluu) return;\n"
           "  precise float v0 = x[i], v1 = v0 + 1.0, v2 = v0 + 2.0, v3 = v0 + 3.0;\n"
           "  precise float v4 = v0 + 4.0, v5 = v0 + 5.0, v6 = v0 + 6.0, v7 = v0 + 7.0;\n"
           "  float m = x[0] * 0.5 + 0.7, c = x[1] * 0.001;\n"
           "  for (uint k = 0u; k < %luu; ++k) {\n"
           "    v0 = fma(v0, m, c); v1 = fma(v1, m, c); v2 = fma(v2, m, c);\n"
           "    v3 = fma(v3, m, c); v4 = fma(v4, m, c); v5 = fma(v5, m, c);\n"
           "    v6 = fma(v6, m, c); v7 = fma(v7, m, c);\n"
           "  }\n"
           "  y[i] = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7));\n"
           "}\n",
           (unsigned long long)n, iters);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, (uint64_t)n * 4}};
  vkp_spirv_binding_t b[] = {{.buffer = 0, .offset = 0, .range = (uint64_t)n * 4},
                             {.buffer = 1, .offset = 0, .range = (uint64_t)n * 4}};
  vkp_spirv_dispatch_t d;
  make_dispatch(&d, "fma", glsl, (uint32_t)((n + 255) / 256), 2, b);
  vkp_spirv_program_t prog = {.n_buffers = 2, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  double s = time_program(dev, &prog, n);
  vkp_vk_test_program_free(&prog);
  return s;
}

// Fill `big` floats of scratch, then sum them into y: with `read` all of
// them, without it one vec4 per invocation (the baseline the read is timed
// against: the same two dispatches, the fill and a read of n vec4s).
static double read_seconds(vkp_vk_device_t *dev, int64_t n, uint64_t big, int read) {
  char fill[1024], sum[1024];
  uint64_t vec4s = big / 4, end = read ? vec4s : ((uint64_t)n < vec4s ? (uint64_t)n : vec4s);
  snprintf(fill, sizeof fill,
           "#version 450\n"
           "layout(local_size_x = 256) in;\n"
           "layout(set = 0, binding = 0) readonly buffer X { float x[]; };\n"
           "layout(set = 0, binding = 1) writeonly buffer B { vec4 b[]; };\n"
           "void main() {\n"
           "  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i < %lluu) b[i] = vec4(x[i %% %lluu]);\n"
           "}\n",
           (unsigned long long)vec4s, (unsigned long long)n);
  // Invocation i reads b[i], b[i + n], ... below `end`: a workgroup's reads
  // are contiguous.
  snprintf(sum, sizeof sum,
           "#version 450\n"
           "layout(local_size_x = 256) in;\n"
           "layout(set = 0, binding = 0) readonly buffer B { vec4 b[]; };\n"
           "layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };\n"
           "void main() {\n"
           "  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i >= %lluu) return;\n"
           "  vec4 acc = vec4(0.0);\n"
           "  for (uint k = i; k < %lluu; k += %lluu) acc += b[k];\n"
           "  y[i] = (acc.x + acc.y) + (acc.z + acc.w);\n"
           "}\n",
           (unsigned long long)n, (unsigned long long)end, (unsigned long long)n);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_SCRATCH, -1, big * 4}};
  vkp_spirv_binding_t fb[] = {{.buffer = 0, .offset = 0, .range = (uint64_t)n * 4},
                              {.buffer = 2, .offset = 0, .range = big * 4}};
  vkp_spirv_binding_t sb[] = {{.buffer = 2, .offset = 0, .range = big * 4},
                              {.buffer = 1, .offset = 0, .range = (uint64_t)n * 4}};
  vkp_spirv_dispatch_t d[2];
  make_dispatch(&d[0], "fill", fill, (uint32_t)((vec4s + 255) / 256), 2, fb);
  make_dispatch(&d[1], "sum", sum, (uint32_t)((n + 255) / 256), 2, sb);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 2,
                              .dispatches = d};
  double s = time_program(dev, &prog, n);
  vkp_vk_test_program_free(&prog);
  return s;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 20;
  uint64_t mib = argc > 2 ? (uint64_t)atoll(argv[2]) : 256;
  if (n < 256 || n > ((int64_t)1 << 26) || mib < 1 || mib > 4096) {
    fprintf(stderr, "usage: bench_vk_peak [invocations 256..2^26] [MiB 1..4096]\n");
    return 2;
  }
  vkp_vk_device_options_t opts = {.validation = 0};
  vkp_vk_device_t *dev = NULL;
  vkp_status_t st = vkp_vk_device_create(&opts, &dev);
  if (st) die(st);
  // lavapipe cuts a loop at 65,535 iterations: 2 * iters stays below it on
  // CPU devices.
  long max_iters =
      dev->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 16384 : (1L << 20);
  long iters = 16;
  double t1 = 0, t2 = 0;
  for (;;) {
    t1 = fma_seconds(dev, n, iters);
    t2 = fma_seconds(dev, n, 2 * iters);
    if (t2 - t1 >= 0.02 || iters >= max_iters) break;
    iters *= 2;
  }
  double flops = 16.0 * (double)n * (double)iters;
  if (t2 > t1)
    printf("%s peak fp32: %.1f GFLOP/s (%lld invocations x 8 fma chains, %ld more "
           "steps: %.2f ms)\n",
           dev->properties.deviceName, flops / (t2 - t1) * 1e-9, (long long)n, iters,
           (t2 - t1) * 1e3);
  else
    printf("%s peak fp32: not measurable (%.3f ms, %.3f ms)\n", dev->properties.deviceName,
           t1 * 1e3, t2 * 1e3);
  uint64_t big = mib << 18;  // floats
  double t_fill = read_seconds(dev, n, big, 0), t_read = read_seconds(dev, n, big, 1);
  // The baseline read min(n, big / 4) of the vec4s already.
  uint64_t base_vec4s = (uint64_t)n < big / 4 ? (uint64_t)n : big / 4;
  double bytes = (double)(big / 4 - base_vec4s) * 16.0;
  if (t_read > t_fill && bytes > 0)
    printf("%s peak read: %.1f GB/s (%llu MiB read once: %.2f ms)\n",
           dev->properties.deviceName, bytes / (t_read - t_fill) * 1e-9,
           (unsigned long long)mib, (t_read - t_fill) * 1e3);
  else
    printf("%s peak read: not measurable (%.3f ms, %.3f ms)\n", dev->properties.deviceName,
           t_fill * 1e3, t_read * 1e3);
  vkp_vk_device_destroy(dev);
  return 0;
}
