// SPDX-License-Identifier: Apache-2.0
// `vkpipe calibrate`: micro-benchmarks run through each target's own
// compile/load/run, timed with clock_gettime, turned into profile rates.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "vkpipe/cost.h"

static double vkp__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// out = a (op) b over two inputs of `shape`.
static vkp_status_t vkp__bench_graph(vkp_op_t op, int32_t rank,
                                     const int64_t *a_shape,
                                     const int64_t *b_shape, vkp_graph_t **out) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create("calibrate", &g));
  const char *ins[] = {"a", "b"}, *outs[] = {"y"};
  vkp_status_t st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, rank, a_shape, NULL);
  if (!st) st = vkp_graph_add_input(g, "b", VKP_DTYPE_FLOAT32, rank, b_shape, NULL);
  if (!st) st = vkp_graph_add_node(g, "op", op, 2, ins, 1, outs, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  if (st) {
    vkp_graph_destroy(g);
    return st;
  }
  *out = g;
  return NULL;
}

// Best wall time of `repeats` runs of `graph` on `target`, compile and load
// excluded.
static vkp_status_t vkp__time_graph(const vkp_target_t *target,
                                    const vkp_graph_t *graph, int32_t repeats,
                                    double *out_seconds) {
  *out_seconds = INFINITY;
  VKP_RETURN_IF_ERROR(vkp_target_check_graph(target, graph));
  vkp_tensor_t in[2], outs[1];
  memset(in, 0, sizeof in);
  memset(outs, 0, sizeof outs);
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  vkp_compile_options_t options = {0};
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < graph->n_inputs && !st; ++i) {
    const vkp_value_t *v = &graph->values[graph->inputs[i]];
    st = vkp_tensor_init(&in[i], v->dtype, v->rank, v->shape);
    if (!st) {
      float *p = in[i].data;
      size_t n = vkp_tensor_numel(&in[i]);
      for (size_t k = 0; k < n; ++k) p[k] = 0.5f + (float)(k % 7) * 0.125f;
    }
  }
  const vkp_value_t *y = &graph->values[graph->outputs[0]];
  if (!st) st = vkp_tensor_init(&outs[0], y->dtype, y->rank, y->shape);
  if (!st) st = target->vtable->compile(target, graph, &options, &blob);
  if (!st) st = target->vtable->load(target, graph, blob.data, blob.size, &stage);
  // One warm-up run, then the timed ones.
  for (int32_t r = 0; r <= repeats && !st; ++r) {
    double t0 = vkp__now();
    st = target->vtable->run(stage, in, outs);
    double dt = vkp__now() - t0;
    if (!st && r > 0 && dt < *out_seconds) *out_seconds = dt;
  }
  if (stage) target->vtable->unload(stage);
  vkp_blob_deinit(&blob);
  for (int32_t i = 0; i < 2; ++i) vkp_tensor_deinit(&in[i]);
  vkp_tensor_deinit(&outs[0]);
  return st;
}

static vkp_status_t vkp__append_note(char **notes, const char *fmt, ...)
    VKP_PRINTF(2, 3);

static vkp_status_t vkp__append_note(char **notes, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  char *joined = vkp__asprintf("%s%s\n", *notes ? *notes : "", line);
  if (!joined) return VKP_OOM("calibration notes");
  vkp__free(*notes);
  *notes = joined;
  return NULL;
}

// Host memcpy bandwidth in GB/s: what a copy through a staging slot costs.
static double vkp__memcpy_gbps(int32_t repeats) {
  size_t size = (size_t)8 << 20;
  char *a = vkp__malloc(size), *b = vkp__malloc(size);
  double best = INFINITY;
  if (a && b) {
    memset(a, 1, size);
    memset(b, 2, size);
    for (int32_t r = 0; r <= repeats; ++r) {
      double t0 = vkp__now();
      memcpy(b, a, size);
      double dt = vkp__now() - t0;
      // Keep the copy observable.
      a[r % 64] = b[(r * 31) % 64];
      if (r > 0 && dt < best) best = dt;
    }
  }
  vkp__free(a);
  vkp__free(b);
  return isfinite(best) && best > 0 ? (double)size / best / 1e9 : 0.0;
}

vkp_status_t vkp_profile_calibrate(vkp_profile_t *profile,
                                   const vkp_registry_t *registry,
                                   const vkp_calibrate_options_t *options,
                                   char **out_notes) {
  *out_notes = NULL;
  vkp_calibrate_options_t o = options ? *options : (vkp_calibrate_options_t){0};
  if (o.matmul_size <= 0) o.matmul_size = 128;
  if (o.elementwise <= 0) o.elementwise = (int64_t)1 << 18;
  if (o.repeats <= 0) o.repeats = 5;
  if (o.matmul_size > 4096 || o.elementwise > ((int64_t)1 << 28) || o.repeats > 1000)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "calibration sizes out of range (matmul <= 4096, "
                           "elementwise <= 2^28, repeats <= 1000)");
  int64_t n = o.matmul_size, mm[] = {n, n}, ew[] = {1, o.elementwise}, one[] = {1, 1};
  vkp_graph_t *g_mm = NULL, *g_ew = NULL, *g_one = NULL;
  vkp_status_t st = vkp__bench_graph(VKP_OP_MATMUL, 2, mm, mm, &g_mm);
  if (!st) st = vkp__bench_graph(VKP_OP_ADD, 2, ew, ew, &g_ew);
  if (!st) st = vkp__bench_graph(VKP_OP_ADD, 2, one, one, &g_one);
  double copy_gbps = st ? 0.0 : vkp__memcpy_gbps(o.repeats);
  for (int32_t t = 0; t < vkp_registry_count(registry) && !st; ++t) {
    const vkp_target_t *target = vkp_registry_get(registry, t);
    const char *name = target->vtable->name;
    double t_one = 0, t_mm = 0, t_ew = 0;
    vkp_status_t bench = vkp__time_graph(target, g_one, o.repeats, &t_one);
    if (!bench) bench = vkp__time_graph(target, g_mm, o.repeats, &t_mm);
    if (!bench) bench = vkp__time_graph(target, g_ew, o.repeats, &t_ew);
    if (bench) {
      st = vkp__append_note(out_notes, "%s: kept its previous rates: %s", name,
                            vkp_status_message(bench));
      vkp_status_free(bench);
      continue;
    }
    // The launch overhead is the one-element run; the rest is the work.
    double flops = 2.0 * (double)n * (double)n * (double)n;
    double bytes = 3.0 * 4.0 * (double)o.elementwise;
    double mm_work = t_mm - t_one > t_mm * 0.05 ? t_mm - t_one : t_mm;
    double ew_work = t_ew - t_one > t_ew * 0.05 ? t_ew - t_one : t_ew;
    if (!(mm_work > 1e-9) || !(ew_work > 1e-9)) {
      st = vkp__append_note(out_notes,
                            "%s: kept its previous rates: runs too short to "
                            "time (%.3g s, %.3g s)",
                            name, t_mm, t_ew);
      continue;
    }
    vkp_profile_target_t r = {.target = (char *)name,
                              .device = (char *)vkp_profile_device_of(profile, name),
                              .gflops = flops / mm_work / 1e9,
                              .gbps = bytes / ew_work / 1e9,
                              .launch_us = t_one * 1e6};
    st = vkp_profile_set_target(profile, &r);
    if (st) break;
    st = vkp__append_note(out_notes,
                          "%s: %.2f GFLOP/s (matmul %lld^3), %.2f GB/s (add of "
                          "%lld), launch %.1f us",
                          name, r.gflops, (long long)n, r.gbps,
                          (long long)o.elementwise, r.launch_us);
    // Moving data to and from a device other than the host: a staging copy
    // plus about one launch.
    // (r.device pointed into the entry set_target just replaced.)
    const char *device = vkp_profile_device_of(profile, name);
    if (!st && copy_gbps > 0 && strcmp(device, profile->host_device) != 0) {
      st = vkp_profile_set_link(profile, profile->host_device, device,
                                r.launch_us, copy_gbps);
      if (!st)
        st = vkp_profile_set_link(profile, device, profile->host_device,
                                  r.launch_us, copy_gbps);
    }
  }
  vkp_graph_destroy(g_mm);
  vkp_graph_destroy(g_ew);
  vkp_graph_destroy(g_one);
  if (st) {
    vkp__free(*out_notes);
    *out_notes = NULL;
  }
  return st;
}
