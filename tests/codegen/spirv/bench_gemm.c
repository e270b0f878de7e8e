// SPDX-License-Identifier: Apache-2.0
// A benchmark, not a test (never run by ctest): GFLOP/s of the generated
// matmul on the "vulkan" target, next to the "cpu" target in the same run,
// for n x n x n, n from the command line (default 256 and 512), or M x K x N
// written MxKxN (skinny products: split-K). --fp16 compiles the vulkan
// target with --precision fp16 (float16 weights) and skips cpu. On vulkan
// it also times the GEMM alone ("on device"): A as a device-resident
// constant, one float staged in and out, less the same graph without the
// matmul.
//
//   build/tests/codegen/spirv/bench_spirv_gemm 256 512
//   VKPIPE_SPIRV_GEMM=tiled build/tests/codegen/spirv/bench_spirv_gemm 512
//   build/tests/codegen/spirv/bench_spirv_gemm --fp16 4096
//   VKPIPE_SPIRV_SPLITK=off build/tests/codegen/spirv/bench_spirv_gemm 8x16384x1024
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

// x and y shaped as `g`'s input and output, and `g` compiled and loaded
// on `t`: 0, or 1 after printing why.
static int load_stage(const vkp_target_t *t, const vkp_graph_t *g,
                      const vkp_compile_options_t *options, vkp_tensor_t *x, vkp_tensor_t *y,
                      vkp_blob_t *blob, vkp_stage_t **stage) {
  const vkp_value_t *in = &g->values[g->inputs[0]], *out = &g->values[g->outputs[0]];
  return check(vkp_tensor_init(x, VKP_DTYPE_FLOAT32, in->rank, in->shape)) ||
         check(vkp_tensor_init(y, VKP_DTYPE_FLOAT32, out->rank, out->shape)) ||
         check(t->vtable->compiler.compile(t, g, options, blob)) ||
         check(t->vtable->stage.load(t, g, blob->data, blob->size, stage));
}

// Median seconds per run of `g` (one-float input, one-float output) on `t`.
static int time_resident(const vkp_target_t *t, vkp_graph_t *g,
                         const vkp_compile_options_t *options, double *out_s) {
  vkp_tensor_t x, y;
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  if (load_stage(t, g, options, &x, &y, &blob, &stage)) return 1;
  ((float *)x.data)[0] = 0.25f;
  enum { RUNS = 15 };
  double s[RUNS];
  for (int r = -1; r < RUNS; ++r) {
    double t0 = now();
    if (check(t->vtable->stage.run(stage, &x, &y))) return 1;
    if (r >= 0) s[r] = now() - t0;
  }
  for (int i = 1; i < RUNS; ++i)  // insertion sort; RUNS is small
    for (int j = i; j > 0 && s[j] < s[j - 1]; --j) {
      double v = s[j];
      s[j] = s[j - 1];
      s[j - 1] = v;
    }
  *out_s = s[RUNS / 2];
  t->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  return 0;
}

// s [1,1] + constant [m,k] (device-resident), optionally times the constant
// w [k,n], then its first element: one float staged in and out.
static vkp_graph_t *resident_graph(int64_t m, int64_t k, int64_t n, int with_matmul) {
  vkp_graph_t *g;
  int64_t one[2] = {1, 1}, xs[2] = {m, k}, ws[2] = {k, n}, zero[2] = {0, 0};
  float *x = malloc((size_t)(m * k) * sizeof(float)), *w = malloc((size_t)(k * n) * sizeof(float));
  for (int64_t i = 0; x && i < m * k; ++i) x[i] = (float)(i % 5) * 0.1f;
  for (int64_t i = 0; w && i < k * n; ++i) w[i] = (float)(i % 7) * 0.1f;
  const vkp_attr_t corner[] = {{.name = "starts", .kind = VKP_ATTR_INTS, .ints = zero, .count = 2},
                               {.name = "ends", .kind = VKP_ATTR_INTS, .ints = one, .count = 2}};
  const char *add_in[] = {"s", "xc"}, *add_out[] = {"x"}, *mm_in[] = {"x", "w"},
             *mm_out[] = {"p"}, *sl_in[] = {with_matmul ? "p" : "x"}, *sl_out[] = {"y"};
  int bad = !x || !w || check(vkp_graph_create("gemm_resident", &g));
  bad = bad || check(vkp_graph_add_input(g, "s", VKP_DTYPE_FLOAT32, 2, one, NULL)) ||
        check(vkp_graph_add_constant(g, "xc", VKP_DTYPE_FLOAT32, 2, xs, x, NULL)) ||
        check(vkp_graph_add_node(g, "add", VKP_OP_ADD, 2, add_in, 1, add_out, 0, NULL, NULL)) ||
        (with_matmul &&
         (check(vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 2, ws, w, NULL)) ||
          check(vkp_graph_add_node(g, "mm", VKP_OP_MATMUL, 2, mm_in, 1, mm_out, 0, NULL,
                                   NULL)))) ||
        check(vkp_graph_add_node(g, "corner", VKP_OP_SLICE, 1, sl_in, 1, sl_out, 2, corner,
                                 NULL)) ||
        check(vkp_graph_mark_output(g, "y")) || check(vkp_graph_validate(g));
  free(x);
  free(w);
  return bad ? NULL : g;
}

// The GEMM alone on a device: the resident graph with the matmul less the
// one without it (the add, the slice, the submit and the one-float copies).
// The staged figure of bench() also moves A and C through staging memory,
// which on a discrete GPU can take longer than the GEMM.
static int bench_on_device(const vkp_target_t *t, int64_t m, int64_t k, int64_t n,
                           const vkp_compile_options_t *options, const char *shape_text) {
  vkp_graph_t *with = resident_graph(m, k, n, 1), *without = resident_graph(m, k, n, 0);
  double t_with = 0, t_without = 0;
  int rc = !with || !without || time_resident(t, with, options, &t_with) ||
           time_resident(t, without, options, &t_without);
  vkp_graph_destroy(with);
  vkp_graph_destroy(without);
  if (rc) return 1;
  double s = t_with - t_without;
  if (!(s > 0)) {
    printf("%-7s matmul %s%s on device: not measurable (%.3f ms with, %.3f ms without)\n",
           t->vtable->name, shape_text, options && options->precision ? " fp16" : "",
           t_with * 1e3, t_without * 1e3);
    return 0;
  }
  printf("%-7s matmul %s%s on device: %.2f ms/run, %.2f GFLOP/s\n", t->vtable->name,
         shape_text, options && options->precision ? " fp16" : "", s * 1e3,
         2.0 * (double)m * (double)k * (double)n / s * 1e-9);
  return 0;
}

static int bench(const vkp_target_t *t, int64_t m, int64_t k, int64_t n,
                 const vkp_compile_options_t *options) {
  vkp_graph_t *g;
  int64_t shape[2] = {m, k}, w_shape[2] = {k, n};
  float *w = calloc((size_t)(k * n), sizeof(float));
  for (int64_t i = 0; i < k * n; ++i) w[i] = (float)(i % 7) * 0.1f;
  const char *in[] = {"x", "w"}, *out[] = {"y"};
  if (check(vkp_graph_create("gemm", &g)) ||
      check(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, shape, NULL)) ||
      check(vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 2, w_shape, w, NULL)) ||
      check(vkp_graph_add_node(g, "mm", VKP_OP_MATMUL, 2, in, 1, out, 0, NULL, NULL)) ||
      check(vkp_graph_mark_output(g, "y")) || check(vkp_graph_validate(g)))
    return 1;
  free(w);
  vkp_tensor_t x, y;
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  if (load_stage(t, g, options, &x, &y, &blob, &stage)) return 1;
  if (check(t->vtable->stage.run(stage, &x, &y))) return 1;  // warm-up
  int reps = 0;
  double start = now(), elapsed = 0;
  while (elapsed < 2.0 || reps < 3) {
    if (check(t->vtable->stage.run(stage, &x, &y))) return 1;
    ++reps;
    elapsed = now() - start;
  }
  double s = elapsed / reps;
  char shape_text[64];
  if (m == k && k == n)
    snprintf(shape_text, sizeof shape_text, "%lld^3", (long long)n);
  else
    snprintf(shape_text, sizeof shape_text, "%lldx%lldx%lld", (long long)m, (long long)k,
             (long long)n);
  printf("%-7s matmul %s%s: %.2f ms/run, %.2f GFLOP/s (%d runs)\n", t->vtable->name,
         shape_text, options && options->precision ? " fp16" : "", s * 1e3,
         2.0 * (double)m * (double)k * (double)n / s * 1e-9, reps);
  t->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_graph_destroy(g);
  if (strcmp(t->vtable->name, "cpu") == 0) return 0;  // the host: nothing staged
  return bench_on_device(t, m, k, n, options, shape_text);
}

int main(int argc, char **argv) {
  vkp_registry_t *reg;
  if (check(vkp_registry_create_default(&reg))) return 1;
  static const char *const names[] = {"vulkan", "cpu"};
  vkp_compile_options_t fp16 = {.precision = VKP_PRECISION_FP16};
  const vkp_compile_options_t *options = NULL;
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--fp16") == 0) {
    options = &fp16;
    first = 2;
  }
  int rc = 0;
  for (int t_index = 0; t_index < (options ? 1 : 2); ++t_index) {
    const vkp_target_t *t = vkp_registry_find(reg, names[t_index]);
    if (!t) {
      printf("%-7s unavailable\n", names[t_index]);
      continue;
    }
    for (int i = first; i < argc; ++i) {
      long long m = 0, k = 0, n = 0;
      if (sscanf(argv[i], "%lldx%lldx%lld", &m, &k, &n) != 3) m = k = n = atoll(argv[i]);
      if (m <= 0 || k <= 0 || n <= 0) {
        fprintf(stderr, "bench: '%s' is not N or MxKxN\n", argv[i]);
        return 2;
      }
      rc |= bench(t, m, k, n, options);
    }
    if (argc <= first) rc |= bench(t, 256, 256, 256, options) | bench(t, 512, 512, 512, options);
  }
  vkp_registry_destroy(reg);
  return rc;
}
