// SPDX-License-Identifier: Apache-2.0
// A benchmark, not a test (never run by ctest): GFLOP/s of the generated
// matmul on the "vulkan" target, next to the "cpu" target in the same run,
// for n x n x n, n from the command line (default 256 and 512).
//
//   build/tests/spirv/bench_spirv_gemm 256 512
//   VKPIPE_SPIRV_GEMM=tiled build/tests/spirv/bench_spirv_gemm 512
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vkpipe/graph.h"
#include "vkpipe/target.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int check(vkp_status_t st) {
  if (!st) return 0;
  fprintf(stderr, "bench: %s\n", vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

static int bench(const vkp_target_t *t, int64_t n) {
  vkp_graph_t *g;
  int64_t shape[2] = {n, n};
  float *w = calloc((size_t)(n * n), sizeof(float));
  for (int64_t i = 0; i < n * n; ++i) w[i] = (float)(i % 7) * 0.1f;
  const char *in[] = {"x", "w"}, *out[] = {"y"};
  if (check(vkp_graph_create("gemm", &g)) ||
      check(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, shape, NULL)) ||
      check(vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 2, shape, w, NULL)) ||
      check(vkp_graph_add_node(g, "mm", VKP_OP_MATMUL, 2, in, 1, out, 0, NULL, NULL)) ||
      check(vkp_graph_mark_output(g, "y")) || check(vkp_graph_validate(g)))
    return 1;
  free(w);
  vkp_tensor_t x, y;
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  if (check(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 2, shape)) ||
      check(vkp_tensor_init(&y, VKP_DTYPE_FLOAT32, 2, shape)) ||
      check(t->vtable->compiler.compile(t, g, NULL, &blob)) ||
      check(t->vtable->stage.load(t, g, blob.data, blob.size, &stage)))
    return 1;
  if (check(t->vtable->stage.run(stage, &x, &y))) return 1;  // warm-up
  int reps = 0;
  double start = now(), elapsed = 0;
  while (elapsed < 2.0 || reps < 3) {
    if (check(t->vtable->stage.run(stage, &x, &y))) return 1;
    ++reps;
    elapsed = now() - start;
  }
  double s = elapsed / reps;
  printf("%-7s matmul %lld^3: %.2f ms/run, %.2f GFLOP/s (%d runs)\n",
         t->vtable->name, (long long)n, s * 1e3, 2.0 * (double)n * (double)n * (double)n / s * 1e-9, reps);
  t->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_graph_destroy(g);
  return 0;
}

int main(int argc, char **argv) {
  vkp_registry_t *reg;
  if (check(vkp_registry_create_default(&reg))) return 1;
  static const char *const names[] = {"vulkan", "cpu"};
  int rc = 0;
  for (int k = 0; k < 2; ++k) {
    const vkp_target_t *t = vkp_registry_find(reg, names[k]);
    if (!t) {
      printf("%-7s unavailable\n", names[k]);
      continue;
    }
    for (int i = 1; i < argc; ++i) rc |= bench(t, atoll(argv[i]));
    if (argc < 2) rc |= bench(t, 256) | bench(t, 512);
  }
  vkp_registry_destroy(reg);
  return rc;
}
