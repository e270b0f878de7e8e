// SPDX-License-Identifier: Apache-2.0
// `vkpipe calibrate`: micro-benchmarks run through each target's own
// compile/load/run, timed with clock_gettime, turned into profile rates.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "vkpipe/cost.h"

static double vkp__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// CPU time of the calling thread, seconds. (The process's clock would add
// the pool's threads, but it brings another thread's time up to date only
// at a scheduler tick: over a run of a few milliseconds it gave one variant
// twice a core and the next half of one.)
static double vkp__cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Marks "y" the output and validates `g` (st: how building it went);
// *out gets it, or it is destroyed with the error.
static vkp_status_t vkp__bench_finish(vkp_graph_t *g, vkp_status_t st, vkp_graph_t **out) {
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  if (st) {
    vkp_graph_destroy(g);
    return st;
  }
  *out = g;
  return NULL;
}

// out = a (op) b over two inputs of `shape`; with `length` > 1 a chain of
// that many nodes, each taking the previous result and b.
static vkp_status_t vkp__bench_graph(vkp_op_t op, int32_t rank,
                                     const int64_t *a_shape, const int64_t *b_shape,
                                     int32_t length, vkp_graph_t **out) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create("calibrate", &g));
  vkp_status_t st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, rank, a_shape, NULL);
  if (!st) st = vkp_graph_add_input(g, "b", VKP_DTYPE_FLOAT32, rank, b_shape, NULL);
  char prev[16] = "a", next[16], name[16];
  for (int32_t i = 0; i < length && !st; ++i) {
    snprintf(name, sizeof name, "op%d", (int)i);
    if (i == length - 1) snprintf(next, sizeof next, "y");
    else snprintf(next, sizeof next, "t%d", (int)i);
    const char *ins[] = {prev, "b"}, *outs[] = {next};
    st = vkp_graph_add_node(g, name, op, 2, ins, 1, outs, 0, NULL, NULL);
    memcpy(prev, next, sizeof prev);
  }
  return vkp__bench_finish(g, st, out);
}

// A device's own rates, with the staging copies out of the way: one float
// is staged in and one out, and the work is a chain of `length` ops on
// device-resident tensors of `rows` x `cols` floats. The constant c (uploaded
// once, at load) is broadcast-added to the input a [1,1], then each link is
// op(previous, c) (add: previous + c, through a reshape, an alias that keeps
// any target from fusing the adds; matmul: previous x c), and a slice of its
// first element is the [1,1] output. Against a chain of one, everything but
// `length` - 1 links cancels out.
static vkp_status_t vkp__resident_graph(vkp_op_t op, int64_t rows, int64_t cols,
                                        int32_t length, vkp_graph_t **out) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create("calibrate_device", &g));
  const int64_t one[] = {1, 1}, shape[] = {rows, cols};
  size_t count = (size_t)rows * (size_t)cols;
  float *c = vkp__malloc(count * sizeof(float));
  vkp_status_t st = c ? NULL : VKP_OOM("calibration constant");
  for (size_t k = 0; c && k < count; ++k) c[k] = (0.5f + (float)(k % 7) * 0.125f) / (float)cols;
  if (!st) st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 2, one, NULL);
  if (!st) st = vkp_graph_add_constant(g, "c", VKP_DTYPE_FLOAT32, 2, shape, c, NULL);
  vkp__free(c);
  const char *first[] = {"a", "c"}, *t0[] = {"t0"};
  if (!st) st = vkp_graph_add_node(g, "start", VKP_OP_ADD, 2, first, 1, t0, 0, NULL, NULL);
  const vkp_attr_t rs = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = shape, .count = 2};
  char prev[16] = "t0", next[16], name[16];
  for (int32_t i = 0; i < length && !st; ++i) {
    if (op == VKP_OP_ADD) {
      snprintf(name, sizeof name, "rs%d", (int)i);
      snprintf(next, sizeof next, "r%d", (int)i);
      const char *rin[] = {prev}, *rout[] = {next};
      st = vkp_graph_add_node(g, name, VKP_OP_RESHAPE, 1, rin, 1, rout, 1, &rs, NULL);
      memcpy(prev, next, sizeof prev);
    }
    snprintf(name, sizeof name, "op%d", (int)i);
    snprintf(next, sizeof next, "t%d", (int)i + 1);
    const char *ins[] = {prev, "c"}, *outs[] = {next};
    if (!st) st = vkp_graph_add_node(g, name, op, 2, ins, 1, outs, 0, NULL, NULL);
    memcpy(prev, next, sizeof prev);
  }
  // One element out: a slice. (A reduce_max over everything ran as one
  // workgroup on the H200, tens of ms that buried the chain's span.)
  const int64_t zero[] = {0, 0};
  const vkp_attr_t corner[] = {
      {.name = "starts", .kind = VKP_ATTR_INTS, .ints = zero, .count = 2},
      {.name = "ends", .kind = VKP_ATTR_INTS, .ints = one, .count = 2}};
  const char *rin[] = {prev}, *y[] = {"y"};
  if (!st) st = vkp_graph_add_node(g, "corner", VKP_OP_SLICE, 1, rin, 1, y, 2, corner, NULL);
  return vkp__bench_finish(g, st, out);
}

// A convolution y = conv(a, w) of `c` channels in, `m` out (`group`
// groups), k x k at `stride` with pads k / 2, on a `hw` x `hw` map; the
// weights are a constant.
static vkp_status_t vkp__conv_graph(int64_t c, int64_t m, int64_t hw, int64_t k,
                                    int64_t stride, int64_t group, vkp_graph_t **out) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create("calibrate_conv", &g));
  const int64_t xs[] = {1, c, hw, hw}, ws[] = {m, c / group, k, k};
  size_t count = (size_t)(m * (c / group) * k * k);
  float *w = vkp__malloc(count * sizeof(float));
  vkp_status_t st = w ? NULL : VKP_OOM("calibration weights");
  for (size_t i = 0; w && i < count; ++i) w[i] = (float)(i % 5) * 0.125f - 0.25f;
  if (!st) st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 4, xs, NULL);
  if (!st) st = vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 4, ws, w, NULL);
  vkp__free(w);
  const int64_t p = k / 2, pads[] = {p, p, p, p}, strides[] = {stride, stride};
  const vkp_attr_t attrs[] = {
      {.name = "pads", .kind = VKP_ATTR_INTS, .ints = pads, .count = 4},
      {.name = "strides", .kind = VKP_ATTR_INTS, .ints = strides, .count = 2},
      {.name = "group", .kind = VKP_ATTR_INT, .i = group}};
  const char *ins[] = {"a", "w"}, *outs[] = {"y"};
  if (!st) st = vkp_graph_add_node(g, "conv", VKP_OP_CONV2D, 2, ins, 1, outs, 3, attrs, NULL);
  return vkp__bench_finish(g, st, out);
}

// y = attention(a, kt, v) (docs/ops.md): `heads` heads of `len` queries
// and keys of `dim` floats; the keys and values are inputs, as they are in
// a transformer (computed from the activations, not weights).
static vkp_status_t vkp__attention_graph(int64_t heads, int64_t len, int64_t dim,
                                         vkp_graph_t **out) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create("calibrate_attention", &g));
  const int64_t q[] = {1, heads, len, dim}, kt[] = {1, heads, dim, len};
  vkp_status_t st = vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 4, q, NULL);
  if (!st) st = vkp_graph_add_input(g, "kt", VKP_DTYPE_FLOAT32, 4, kt, NULL);
  if (!st) st = vkp_graph_add_input(g, "v", VKP_DTYPE_FLOAT32, 4, q, NULL);
  const vkp_attr_t scale = {.name = "scale", .kind = VKP_ATTR_FLOAT, .f = 0.125};
  const char *ins[] = {"a", "kt", "v"}, *outs[] = {"y"};
  if (!st)
    st = vkp_graph_add_node(g, "attention", VKP_OP_ATTENTION, 3, ins, 1, outs, 1, &scale, NULL);
  return vkp__bench_finish(g, st, out);
}

// The layers that calibrate a target's kernel classes (its kernel_class
// hook names each one's class): convolutions of ResNet-18's, MobileNetV2's
// and SqueezeNet's shapes and a transformer's attention (a long sequence
// and a short one, whose softmax and per-row work weigh more against its
// FLOPs), a millisecond or so each on one core (the depthwise and attention
// ones less). A class
// listed twice gets a memory factor: its second layer moves many more bytes
// of activations per FLOP than its first, and the two times give the
// compute and the memory factor.
static const struct {
  const char *kernel;
  int64_t c, m, hw, k, stride, group;  // attention: c heads, hw tokens, k dims
} vkp__class_layers[] = {
    {"conv_pointwise", 128, 128, 56, 1, 1, 1},   {"conv_pointwise", 16, 32, 112, 1, 1, 1},
    {"conv_winograd", 128, 128, 28, 3, 1, 1},    {"conv_winograd", 16, 64, 56, 3, 1, 1},
    {"conv_direct", 3, 64, 224, 7, 2, 1},        {"conv_direct", 3, 32, 224, 3, 2, 1},
    {"conv_winograd4", 64, 64, 56, 3, 1, 1},     {"conv_gemm", 64, 128, 56, 3, 2, 1},
    {"conv_depthwise", 144, 144, 56, 3, 1, 144}, {"conv_depthwise_s2", 96, 96, 112, 3, 2, 96},
    {"attention", 8, 0, 128, 64, 0, 0},          {"attention", 4, 0, 32, 32, 0, 0},
};
#define VKP__CLASS_LAYERS ((int)(sizeof vkp__class_layers / sizeof vkp__class_layers[0]))

static vkp_status_t vkp__time_graph(const vkp_target_t *target,
                                    const vkp_graph_t *graph, int32_t n_variants,
                                    const int32_t *threads, int32_t repeats,
                                    double *out_seconds, double *out_share);

// One calibration layer of class `kernel` (vkp__class_layers[i]) timed on
// `target`, one thread: its work, its GEMM width term and its time less the
// run's overhead, the launch and the weights' reads at rates `r`.
typedef struct vkp__class_time_t {
  double flops, activations, width, seconds;
} vkp__class_time_t;

static vkp_status_t vkp__time_class_layer(const vkp_target_t *target,
                                          const vkp_profile_target_t *r, double t_one,
                                          int32_t repeats, int i, vkp__class_time_t *out) {
  const int32_t one_thread[1] = {1};
  const char *kernel = vkp__class_layers[i].kernel;
  vkp_graph_t *g = NULL;
  if (strcmp(kernel, "attention") == 0)
    VKP_RETURN_IF_ERROR(vkp__attention_graph(vkp__class_layers[i].c, vkp__class_layers[i].hw,
                                             vkp__class_layers[i].k, &g));
  else
    VKP_RETURN_IF_ERROR(vkp__conv_graph(vkp__class_layers[i].c, vkp__class_layers[i].m,
                                        vkp__class_layers[i].hw, vkp__class_layers[i].k,
                                        vkp__class_layers[i].stride,
                                        vkp__class_layers[i].group, &g));
  double columns = 0.0, t = 0.0;
  const char *got = target->vtable->compiler.kernel_class(target, g, &g->nodes[0], &columns);
  vkp_op_cost_t work;
  vkp_status_t st = vkp_op_cost(g, &g->nodes[0], &work);
  if (!st && (!got || strcmp(got, kernel)))
    st = vkp_status_make(VKP_STATUS_UNSUPPORTED, "its calibration layer runs as '%s'",
                         got ? got : "no class");
  // Five times the usual runs: a layer takes a millisecond or less, and a
  // pair of them is solved for two factors, which amplifies their noise.
  if (!st) st = vkp__time_graph(target, g, 1, one_thread, 5 * repeats, &t, NULL);
  vkp_graph_destroy(g);
  if (st) return st;
  double h = r->gemm_half_columns;
  out->width = 1.0;
  if (columns > 0 && h > 0)
    out->width = (columns / (columns + h)) /
                 (VKP_PROFILE_GEMM_COLUMNS / (VKP_PROFILE_GEMM_COLUMNS + h));
  out->flops = work.flops;
  out->activations = work.bytes - work.weight_bytes;
  out->seconds = t - t_one - work.weight_bytes / (r->gbps * 1e9) - r->launch_us * 1e-6;
  return NULL;
}

// The compute factor that makes the roofline (vkp_node_estimate) give
// layer `a`'s time; a kernel bound by memory at these rates gets the one
// that makes its compute take as long as its memory traffic.
static double vkp__roofline_factor(const vkp_profile_target_t *r, const vkp__class_time_t *a) {
  double compute = a->seconds, memory = a->activations / (r->gbps * 1e9);
  if (compute < memory) compute = memory;
  return compute > 0 ? a->flops / (r->gflops * 1e9 * a->width * compute) : 0.0;
}

// Compute and memory factors from two layers (seconds = flops / compute
// rate + activations / memory rate for both); false when the two times do
// not give positive rates in range, as noise can on a busy machine.
static bool vkp__two_layer_factors(const vkp_profile_target_t *r, const vkp__class_time_t *a,
                                   const vkp__class_time_t *b, double *out_compute,
                                   double *out_memory) {
  double fa = a->flops / a->width, fb = b->flops / b->width;
  double det = fa * b->activations - fb * a->activations;
  if (!(fabs(det) > 0)) return false;
  double per_flop = (a->seconds * b->activations - b->seconds * a->activations) / det;
  double per_byte = (fa * b->seconds - fb * a->seconds) / det;
  if (!(per_flop > 0) || !(per_byte > 0)) return false;
  *out_compute = 1.0 / (per_flop * r->gflops * 1e9);
  *out_memory = 1.0 / (per_byte * r->gbps * 1e9);
  return *out_compute > 0.01 && *out_compute < 100 && *out_memory > 0.01 && *out_memory < 100;
}

// Measures the factors of each kernel class in vkp__class_layers on host
// `target` (with a kernel_class hook), whose rates `r` were just measured,
// `t_one` being its per-run overhead: a class with one layer gets the
// roofline's compute factor, one with two a compute and a memory factor
// (the roofline's from its first layer when the pair does not resolve).
// Sets them on the profile; notes what it found.
static vkp_status_t vkp__calibrate_kernels(vkp_profile_t *profile, const vkp_target_t *target,
                                           const vkp_profile_target_t *r, double t_one,
                                           int32_t repeats, char **notes) {
  const char *name = target->vtable->name;
  char line[1536];
  size_t len = (size_t)snprintf(line, sizeof line, "%s kernel classes (one thread):", name);
  vkp_status_t st = NULL;
  for (int i = 0; i < VKP__CLASS_LAYERS && !st; ++i) {
    const char *kernel = vkp__class_layers[i].kernel;
    bool pair = i + 1 < VKP__CLASS_LAYERS && strcmp(vkp__class_layers[i + 1].kernel, kernel) == 0;
    vkp__class_time_t a = {0}, b = {0};
    vkp_status_t bench = vkp__time_class_layer(target, r, t_one, repeats, i, &a);
    if (!bench && pair) bench = vkp__time_class_layer(target, r, t_one, repeats, i + 1, &b);
    if (pair) ++i;
    double compute = 0.0, memory = 0.0;
    bool resolved = !bench && pair && vkp__two_layer_factors(r, &a, &b, &compute, &memory);
    if (!bench && !resolved) {
      compute = vkp__roofline_factor(r, &a);
      memory = 0.0;
      if (!(compute > 0.01 && compute < 100))
        bench = vkp_status_make(VKP_STATUS_UNAVAILABLE, "factor %g out of range", compute);
    }
    if (bench) {
      if (len < sizeof line)
        len += (size_t)snprintf(line + len, sizeof line - len, " %s kept (%s);", kernel,
                                vkp_status_message(bench));
      vkp_status_free(bench);
      continue;
    }
    st = vkp_profile_set_kernel_rates(profile, name, kernel, compute, memory);
    if (len >= sizeof line) continue;
    if (resolved)
      len += (size_t)snprintf(line + len, sizeof line - len,
                              " %s %.2f, memory %.2f (%.3f and %.3f ms);", kernel, compute,
                              memory, a.seconds * 1e3, b.seconds * 1e3);
    else
      len += (size_t)snprintf(line + len, sizeof line - len, " %s %.2f (%.3f ms%s);", kernel,
                              compute, a.seconds * 1e3,
                              pair ? "; no memory factor: its two layers did not resolve one"
                                   : "");
  }
  if (!st && len > 0 && len < sizeof line && line[len - 1] == ';') line[len - 1] = 0;
  if (!st) st = vkp__lines_appendf(notes, "calibration notes", "%s", line);
  return st;
}

// Median wall times of `repeats` runs of `graph` on `target` compiled with
// threads[0] and, when n_variants is 2, threads[1] threads, compile and load
// excluded. The median, not the best: the rates should predict the stages'
// times on this machine as it is, and a shared machine's best run is an
// exception. The variants' runs alternate, so that a busy machine slows both
// alike rather than whichever ran second. `out_share` (may be NULL) gets, per
// variant, the share of a core the calling thread got during the timed runs:
// its CPU time over their wall time (about 1 on an idle machine for a target
// that computes on the calling thread, its pool's caller included; less when
// other processes took the cores, or for a device the host only waits on);
// 1 when the runs took under a millisecond in all, too short to tell.
static int vkp__cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static vkp_status_t vkp__time_graph(const vkp_target_t *target,
                                    const vkp_graph_t *graph, int32_t n_variants,
                                    const int32_t *threads, int32_t repeats,
                                    double *out_seconds, double *out_share) {
  for (int32_t k = 0; k < n_variants; ++k) out_seconds[k] = INFINITY;
  VKP_RETURN_IF_ERROR(vkp_target_check_graph(target, graph));
  double *samples = vkp__calloc((size_t)repeats * 2 + 2, sizeof(double));
  if (!samples) return VKP_OOM("calibration samples");
  double wall_sum[2] = {0, 0}, cpu_sum[2] = {0, 0};
  // The calibration graphs have at most three inputs (attention's).
  vkp_tensor_t in[3], outs[1];
  memset(in, 0, sizeof in);
  memset(outs, 0, sizeof outs);
  vkp_blob_t blob[2] = {{0}, {0}};
  vkp_stage_t *stage[2] = {NULL, NULL};
  vkp_status_t st = NULL;
  if (graph->n_inputs > 3)
    st = vkp_status_make(VKP_STATUS_INTERNAL, "calibration graph with %d inputs",
                         (int)graph->n_inputs);
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
  for (int32_t k = 0; k < n_variants && !st; ++k) {
    vkp_compile_options_t options = {.threads = threads[k]};
    st = target->vtable->compiler.compile(target, graph, &options, &blob[k]);
    if (!st) st = target->vtable->stage.load(target, graph, blob[k].data, blob[k].size, &stage[k]);
  }
  // One warm-up run each, then the timed ones. A threaded variant runs once
  // untimed right before each timed run: its pool's threads, asleep while
  // the other variant ran, are then awake, as they are between the kernels
  // of a stage. (Timed straight after the other variant, the first task's
  // thread was still waking when the caller had finished both halves
  // itself: a 256^3 matmul measured no gain from a second thread where it
  // runs 1.6x faster in a model.)
  for (int32_t r = 0; r <= repeats && !st; ++r) {
    for (int32_t k = 0; k < n_variants && !st; ++k) {
      if (threads[k] > 1 && r > 0) st = target->vtable->stage.run(stage[k], in, outs);
      if (st) break;
      double t0 = vkp__now(), c0 = vkp__cpu_now();
      st = target->vtable->stage.run(stage[k], in, outs);
      double dt = vkp__now() - t0, dc = vkp__cpu_now() - c0;
      if (!st && r > 0) {
        samples[(size_t)k * (size_t)repeats + (size_t)(r - 1)] = dt;
        wall_sum[k] += dt;
        cpu_sum[k] += dc;
      }
    }
  }
  for (int32_t k = 0; k < n_variants && !st; ++k) {
    double *v = samples + (size_t)k * (size_t)repeats;
    qsort(v, (size_t)repeats, sizeof(double), vkp__cmp_double);
    out_seconds[k] = repeats % 2 ? v[repeats / 2] : 0.5 * (v[repeats / 2 - 1] + v[repeats / 2]);
    if (out_share) out_share[k] = wall_sum[k] >= 1e-3 ? cpu_sum[k] / wall_sum[k] : 1.0;
  }
  vkp__free(samples);
  for (int32_t k = 0; k < 2; ++k) {
    if (stage[k]) target->vtable->stage.unload(stage[k]);
    vkp_blob_deinit(&blob[k]);
  }
  for (int32_t i = 0; i < 3; ++i) vkp_tensor_deinit(&in[i]);
  vkp_tensor_deinit(&outs[0]);
  return st;
}

// The seconds `length` - 1 links of a device-resident chain take (launches
// excluded) at the first size, growing by `growth` up to `max_size`, where
// they take at least 2 ms: on a fast GPU a small chain is over within the
// noise of one run. *out_work is 0 when the chain is not measurably longer.
static vkp_status_t vkp__time_links(const vkp_target_t *target, vkp_op_t op,
                                    int64_t size, int64_t max_size, int64_t growth,
                                    int32_t length, int32_t repeats, double launch,
                                    double *out_work, int64_t *out_size) {
  const int32_t one_thread[1] = {1};
  for (;;) {
    int64_t rows = op == VKP_OP_MATMUL ? size : 1;
    vkp_graph_t *g1 = NULL, *gl = NULL;
    double t1 = 0, tl = 0;
    vkp_status_t st = vkp__resident_graph(op, rows, size, 1, &g1);
    if (!st) st = vkp__resident_graph(op, rows, size, length, &gl);
    if (!st) st = vkp__time_graph(target, g1, 1, one_thread, repeats, &t1, NULL);
    if (!st) st = vkp__time_graph(target, gl, 1, one_thread, repeats, &tl, NULL);
    vkp_graph_destroy(g1);
    vkp_graph_destroy(gl);
    if (st) return st;
    double span = tl - t1, work = span - (length - 1) * launch;
    if (span >= 2e-3 || size * growth > max_size) {
      *out_work = work > 0.05 * span && work > 1e-9 ? work : 0.0;
      *out_size = size;
      return NULL;
    }
    size *= growth;
  }
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

// Efficiency of `threads` threads: the speed-up of `t_many` over `t_one`
// minus one, per extra thread, in 0..1. A total speed-up under 1.2x is taken
// for noise on a busy machine: 0. (A bar per thread would hide the 3x that
// 16 threads gave a ResNet-18 stage on a 16-core host.)
static double vkp__efficiency(double t_one, double t_many, int32_t threads) {
  if (!(t_many > 1e-9) || !(t_one > 1e-9) || threads < 2) return 0.0;
  if (!(t_one / t_many >= 1.2)) return 0.0;
  double eff = (t_one / t_many - 1.0) / (double)(threads - 1);
  return eff > 1.0 ? 1.0 : eff;
}

vkp_status_t vkp_profile_calibrate(vkp_profile_t *profile,
                                   const vkp_registry_t *registry,
                                   const vkp_calibrate_options_t *options,
                                   char **out_notes) {
  VKP__ALLOCATOR_SCOPE(&profile->allocator);
  *out_notes = NULL;
  vkp_calibrate_options_t o = options ? *options : (vkp_calibrate_options_t){0};
  if (o.matmul_size <= 0) o.matmul_size = 128;
  if (o.elementwise <= 0) o.elementwise = (int64_t)1 << 20;  // 12 MB moved: past L2
  if (o.repeats <= 0) o.repeats = 5;
  // Stages run with every core they are given: measure at that count (a
  // small count extrapolated linearly overstates what 16 cores give).
  if (o.threads <= 0) o.threads = vkp_host_cores() < 64 ? vkp_host_cores() : 64;
  if (o.matmul_size > 4096 || o.elementwise > ((int64_t)1 << 28) || o.repeats > 1000)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "calibration sizes out of range (matmul <= 4096, "
                           "elementwise <= 2^28, repeats <= 1000)");
  if (o.threads > 1024)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "calibration threads out of range (<= 1024)");
  // The matmul is shaped like a convolution's GEMM (rows = output pixels,
  // inner = input channels x taps, columns = output channels): a square one
  // that fits in cache runs faster than any layer of a real model.
  int64_t n = o.matmul_size, mm_rows = 6 * n, mm_inner = 9 * n / 2;
  int64_t mm_a[] = {mm_rows, mm_inner}, mm_b[] = {mm_inner, n};
  int64_t ew[] = {1, o.elementwise}, one[] = {1, 1};
  // The threaded matmul gives every thread about a 256^3 product's work
  // (side 256 * cbrt(threads), rounded up to 64): with one size for every
  // thread count, 16 threads finished 512^3 in a fraction of a millisecond
  // and the efficiency came out 0.24 in one calibration and 0.50 in the
  // next on the same 16-core host.
  int64_t nb = (int64_t)ceil(256.0 * cbrt((double)(o.threads > 1 ? o.threads : 1)) / 64.0) * 64;
  if (nb > 4096) nb = 4096;
  if (nb < n) nb = n;
  int64_t mm_big[] = {nb, nb};
  // The cost of splitting a kernel over the threads: a matmul of a small
  // transformer's layer (32 tokens, 128 -> 256 features, about 10 us on one
  // Zen 5 core) on one thread and on all of them.
  int64_t mm_small_a[] = {32, 128}, mm_small_b[] = {128, 256};
  vkp_graph_t *g_mm = NULL, *g_ew = NULL, *g_one = NULL, *g_mm_big = NULL, *g_mm_small = NULL;
  vkp_status_t st = vkp__bench_graph(VKP_OP_MATMUL, 2, mm_a, mm_b, 1, &g_mm);
  if (!st && o.threads > 1) st = vkp__bench_graph(VKP_OP_MATMUL, 2, mm_big, mm_big, 1, &g_mm_big);
  if (!st && o.threads > 1)
    st = vkp__bench_graph(VKP_OP_MATMUL, 2, mm_small_a, mm_small_b, 1, &g_mm_small);
  if (!st) st = vkp__bench_graph(VKP_OP_ADD, 2, ew, ew, 1, &g_ew);
  if (!st) st = vkp__bench_graph(VKP_OP_ADD, 2, one, one, 1, &g_one);
  // A node's own overhead inside a stage: a chain of one-element matmuls
  // (no target fuses them) against one. The one-node run's time is a whole
  // stage launch (a submit and its wait on a device): the links' latency.
  enum { CHAIN = 16 };
  vkp_graph_t *g_node = NULL, *g_chain = NULL;
  if (!st) st = vkp__bench_graph(VKP_OP_MATMUL, 2, one, one, 1, &g_node);
  if (!st) st = vkp__bench_graph(VKP_OP_MATMUL, 2, one, one, CHAIN, &g_chain);
  double copy_gbps = st ? 0.0 : vkp__memcpy_gbps(o.repeats);
  int32_t n_targets = vkp_registry_count(registry);
  double busy_share = 1.0;  // the least share of its cores a host run got
  bool any_host = false;
  for (int32_t t = 0; t < n_targets && !st; ++t) {
    const vkp_target_t *target = vkp_registry_get(registry, t);
    const char *name = target->vtable->name;
    if (o.progress) o.progress(o.progress_user, name, t, n_targets);
    double t_one = 0, t_mm = 0, t_ew = 0;
    const int32_t one_thread[1] = {1};
    double t_node = 0, t_chain = 0;
    double share_mm = 1.0, share_mm2[2] = {1.0, 1.0};
    vkp_status_t bench =
        vkp__time_graph(target, g_one, 1, one_thread, o.repeats, &t_one, NULL);
    if (!bench)
      bench = vkp__time_graph(target, g_node, 1, one_thread, o.repeats, &t_node, NULL);
    if (!bench)
      bench = vkp__time_graph(target, g_chain, 1, one_thread, o.repeats, &t_chain, NULL);
    if (!bench) bench = vkp__time_graph(target, g_mm, 1, one_thread, o.repeats, &t_mm, &share_mm);
    if (!bench) bench = vkp__time_graph(target, g_ew, 1, one_thread, o.repeats, &t_ew, NULL);
    if (bench) {
      st = vkp__lines_appendf(out_notes, "calibration notes",
                              "%s: kept its previous rates: %s", name,
                              vkp_status_message(bench));
      vkp_status_free(bench);
      continue;
    }
    // The launch overhead is the one-element run; the rest is the work.
    double flops = 2.0 * (double)mm_rows * (double)mm_inner * (double)n;
    double bytes = 3.0 * 4.0 * (double)o.elementwise;
    double mm_work = t_mm - t_one > t_mm * 0.05 ? t_mm - t_one : t_mm;
    double ew_work = t_ew - t_one > t_ew * 0.05 ? t_ew - t_one : t_ew;
    if (!(mm_work > 1e-9) || !(ew_work > 1e-9)) {
      st = vkp__lines_appendf(out_notes, "calibration notes",
                              "%s: kept its previous rates: runs too short to "
                              "time (%.3g s, %.3g s)",
                              name, t_mm, t_ew);
      continue;
    }
    const vkp_profile_target_t *old = vkp_profile_target(profile, name);
    vkp_profile_target_t r = {.target = (char *)name,
                              .device = (char *)vkp_profile_device_of(profile, name),
                              .gflops = flops / mm_work / 1e9,
                              .gbps = bytes / ew_work / 1e9,
                              .launch_us = t_chain > t_node
                                               ? (t_chain - t_node) / (CHAIN - 1) * 1e6
                                               : 0.0,
                              .thread_compute_eff = old->thread_compute_eff,
                              .thread_memory_eff = old->thread_memory_eff,
                              .thread_split_us = old->thread_split_us,
                              .gemm_half_columns = old->gemm_half_columns};
    // The same work split across o.threads threads: how much of each extra
    // thread the target turns into speed (0 for targets that ignore it).
    // (A larger matmul: a small one is over before a second thread helps.)
    double t_mm2[2] = {0, 0}, t_ew2[2] = {0, 0};
    vkp_status_t threaded = NULL;
    // Only targets running on the host share its cores; a device's own
    // parallelism is in its rates already.
    bool on_host = strcmp(vkp_profile_device_of(profile, name), profile->host_device) == 0;
    // A device's rates above include copying the inputs in and the output
    // out through staging memory, which inside a stage only its own inputs
    // and outputs pay (the links' cost): on an NVIDIA H200 the staged runs
    // gave 291 GFLOP/s and 7 GB/s where its 4096^3 GEMM ran at 4.6 TFLOP/s.
    // Chains measure the rates inside a stage.
    char device_note[512] = "";
    if (!on_host) {
      // Chains on device-resident tensors (see vkp__resident_graph): adds
      // from the calibration's element count, growing 4x up to 2^26;
      // matmuls from 4N^3, growing 2x up to 4096^3.
      enum { BW_CHAIN = 8, MM_CHAIN = 4 };
      double launch = r.launch_us * 1e-6, staged_gflops = r.gflops, staged_gbps = r.gbps;
      double bw_work = 0, mm_work_dev = 0;
      int64_t bw_n = 0, sq = 0;
      vkp_status_t dev = vkp__time_links(target, VKP_OP_ADD, o.elementwise,
                                         (int64_t)1 << 26, 4, BW_CHAIN, o.repeats,
                                         launch, &bw_work, &bw_n);
      if (!dev)
        dev = vkp__time_links(target, VKP_OP_MATMUL, 4 * n, 4096, 2, MM_CHAIN, o.repeats,
                              launch, &mm_work_dev, &sq);
      if (dev) {
        snprintf(device_note, sizeof device_note,
                 "; rates with staging copies kept, the chained runs failed: %s",
                 vkp_status_message(dev));
        vkp_status_free(dev);
      } else {
        if (bw_work > 0) r.gbps = (BW_CHAIN - 1) * 12.0 * (double)bw_n / bw_work / 1e9;
        if (mm_work_dev > 0)
          r.gflops = (MM_CHAIN - 1) * 2.0 * (double)sq * (double)sq * (double)sq / mm_work_dev / 1e9;
        // A chain no longer than its single link keeps the staged rate: say so.
        snprintf(device_note, sizeof device_note,
                 " (inside a stage: chains of %lld^3 matmuls and of adds of %lld; one run "
                 "with its staging copies gave %.2f GFLOP/s, %.2f GB/s%s%s)",
                 (long long)sq, (long long)bw_n, staged_gflops, staged_gbps,
                 mm_work_dev > 0 ? "" : "; the matmul chain was not measurably longer, "
                                        "so that GFLOP/s is kept",
                 bw_work > 0 ? "" : "; the add chain was not measurably longer, so that "
                                    "GB/s is kept");
      }
    }
    any_host = any_host || on_host;
    if (on_host && share_mm < busy_share) busy_share = share_mm;
    if (o.threads > 1 && on_host) {
      const int32_t pair[2] = {1, o.threads};
      threaded =
          vkp__time_graph(target, g_mm_big, 2, pair, o.repeats * 2, t_mm2, share_mm2);
      if (!threaded)
        threaded = vkp__time_graph(target, g_ew, 2, pair, o.repeats * 2, t_ew2, NULL);
      // A few microseconds a run: many more runs than the others.
      double t_small[2] = {0, 0};
      if (!threaded)
        threaded = vkp__time_graph(target, g_mm_small, 2, pair, o.repeats * 40, t_small, NULL);
      if (!threaded) {
        for (int k = 0; k < 2; ++k)
          if (share_mm2[k] < busy_share) busy_share = share_mm2[k];
        r.thread_compute_eff =
            vkp__efficiency(t_mm2[0] - t_one, t_mm2[1] - t_one, o.threads);
        r.thread_memory_eff =
            vkp__efficiency(t_ew2[0] - t_one, t_ew2[1] - t_one, o.threads);
        // What the threaded run took beyond its share of the one-thread
        // run's work; no less than nothing, no more than that work.
        double t1 = t_small[0] - t_one, split = t_small[1] - t_one;
        double s = split - t1 / (1.0 + (o.threads - 1) * r.thread_compute_eff);
        r.thread_split_us =
            s > 0 && r.thread_compute_eff > 0 ? (s < t1 ? s : t1) * 1e6 : 0.0;
      }
    }
    st = vkp_profile_set_target(profile, &r);
    if (st) {
      vkp_status_free(threaded);
      break;
    }
    char thread_note[512] = "";
    if (threaded)
      snprintf(thread_note, sizeof thread_note,
               "; thread efficiencies kept, the threaded runs failed: %s",
               vkp_status_message(threaded));
    else if (o.threads > 1 && on_host)
      snprintf(thread_note, sizeof thread_note,
               "; %d threads: compute efficiency %.2f, memory %.2f, a kernel's split "
               "%.1f us",
               (int)o.threads, r.thread_compute_eff, r.thread_memory_eff, r.thread_split_us);
    st = vkp__lines_appendf(out_notes, "calibration notes",
                            "%s: %.2f GFLOP/s (matmul %lldx%lld by %lldx%lld), "
                            "%.2f GB/s (add of %lld), %.1f us per node, "
                            "%.1f us per run%s",
                            name, r.gflops, (long long)mm_rows, (long long)mm_inner,
                            (long long)mm_inner, (long long)n, r.gbps,
                            (long long)o.elementwise, r.launch_us, t_one * 1e6,
                            device_note[0] ? device_note : thread_note);
    vkp_status_free(threaded);
    if (!st && on_host && target->vtable->compiler.kernel_class && !o.no_kernel_classes)
      st = vkp__calibrate_kernels(profile, target, vkp_profile_target(profile, name), t_one,
                                  o.repeats, out_notes);
    // Moving data to and from a device other than the host: a staging copy
    // plus about one launch.
    // (r.device pointed into the entry set_target just replaced.)
    const char *device = vkp_profile_device_of(profile, name);
    if (!st && copy_gbps > 0 && strcmp(device, profile->host_device) != 0) {
      st = vkp_profile_set_link(profile, profile->host_device, device, t_one * 1e6,
                                copy_gbps);
      if (!st)
        st = vkp_profile_set_link(profile, device, profile->host_device, t_one * 1e6,
                                  copy_gbps);
    }
  }
  if (!st && any_host) {
    profile->calibration_cpu_share = busy_share;
    if (busy_share < VKP_PROFILE_BUSY_SHARE)
      st = vkp__lines_appendf(
          out_notes, "calibration notes",
          "the machine was busy: the calibrating thread got %.0f%% of a core in the "
          "host targets' timed runs, so these rates read low; measure again with "
          "'vkpipe calibrate' when it is quiet",
          100.0 * busy_share);
  }
  if (!st && o.progress) o.progress(o.progress_user, NULL, n_targets, n_targets);
  vkp_graph_destroy(g_mm);
  vkp_graph_destroy(g_mm_big);
  vkp_graph_destroy(g_mm_small);
  vkp_graph_destroy(g_ew);
  vkp_graph_destroy(g_one);
  vkp_graph_destroy(g_node);
  vkp_graph_destroy(g_chain);
  if (st) {
    vkp__free(*out_notes);
    *out_notes = NULL;
  }
  return st;
}
