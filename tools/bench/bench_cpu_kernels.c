// SPDX-License-Identifier: Apache-2.0
// bench_cpu_kernels: GFLOP/s of the CPU target's GEMM and convolution kernels
// next to OpenBLAS sgemm at the same thread count, measured in the same run.
//
// The kernels are the prelude that codegen/c pastes into every generated
// stage, included here verbatim and built with the flags stages use
// (-O3 -march=native), so the numbers are those of generated code.
//
//   bench_cpu_kernels [--threads N] [--min-time SECONDS] [--quick]
//                     [--filter SUBSTRING] [--cpu-time]
//
// Convolutions are timed through the stage's real paths (weights packed once
// as at stage load, im2col packed on the fly, the depthwise loop, and for
// 3x3 stride-1 layers Winograd, reported at the direct FLOP count); OpenBLAS
// gets the equivalent GEMM (Cout x OH*OW x C*KH*KW) with its im2col left out,
// which flatters it.
//
// --threads N runs our kernels on the cpu target's own thread pool
// (runtime/cpu/pool.c, N workers, the calling thread included), the pool a
// stage built for N threads runs them on, and OpenBLAS on N threads.
#include "codegen/c/prelude.c"
#include "codegen/c/prelude_winograd4.c"
#include "runtime/cpu/pool.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

// OpenBLAS 0.3.21's DYNAMIC_ARCH does not know every recent CPU and falls
// back to its slowest x86-64 kernels ("Prescott"). Compare against the best
// kernels this CPU runs: re-execute with OPENBLAS_CORETYPE set (the variable
// is read when the library loads). An explicit OPENBLAS_CORETYPE wins.
static void vkp_bench_fix_openblas_core(char **argv) {
  if (getenv("OPENBLAS_CORETYPE")) return;
  if (strcmp(openblas_get_corename(), "Prescott") != 0) return;
  const char *core = NULL;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2")) core = "Haswell";
  if (!core) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv("/proc/self/exe", argv);  // on failure, go on with what we have
}

// --cpu-time: time with the process's CPU clock instead of the wall clock
// (on a machine shared with other work, a run that was preempted then
// counts only the time it ran).
static clockid_t vkp_bench_clock = CLOCK_MONOTONIC;

static double vkp_bench_now(void) {
  struct timespec ts;
  clock_gettime(vkp_bench_clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *vkp_bench_alloc(size_t n) {
  float *p = aligned_alloc(64, ((n * sizeof(float)) + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "bench_cpu_kernels: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i) p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return p;
}

typedef void (*vkp_bench_fn)(void *ctx);

// Best-of time per call: repeats until min_time has passed (at least 3 runs).
static double vkp_bench_time(vkp_bench_fn fn, void *ctx, double min_time) {
  fn(ctx);  // warm-up
  double best = 1e30, start = vkp_bench_now();
  int runs = 0;
  while (runs < 3 || vkp_bench_now() - start < min_time) {
    double t0 = vkp_bench_now();
    fn(ctx);
    double t = vkp_bench_now() - t0;
    if (t < best) best = t;
    ++runs;
  }
  return best;
}

typedef struct vkp_bench_gemm_t {
  int M, N, K, threads;
  float *a, *b, *c, *scratch, *bpacked;
} vkp_bench_gemm_t;

static void vkp_bench_ours_gemm(void *p) {
  vkp_bench_gemm_t *g = p;
  vkp_bsrc_t bs = {.b = g->b, .rsb = g->N, .csb = 1};
  vkp_gemm(g->M, g->N, g->K, 1.0f, g->a, g->K, 1, NULL, &bs, g->c, g->N, NULL, NULL,
           0, 0, g->scratch, g->threads);
}

// A MatMul with a constant weight, as a stage runs it: B packed at load.
static void vkp_bench_ours_gemm_packed(void *p) {
  vkp_bench_gemm_t *g = p;
  vkp_bsrc_t bs = {.b = g->b, .rsb = g->N, .csb = 1, .packed = g->bpacked,
                   .npad = (g->N + VKP_NR - 1) / VKP_NR * VKP_NR};
  vkp_gemm(g->M, g->N, g->K, 1.0f, g->a, g->K, 1, NULL, &bs, g->c, g->N, NULL, NULL,
           0, 0, g->scratch, g->threads);
}

// A model's linear layers one after the other, each with its own weight:
// the weights come from memory (not cache) as in a whole model's run.
typedef struct vkp_bench_stack_t {
  int n;                       // products
  vkp_bench_gemm_t *g;         // n products (A and C may be shared)
} vkp_bench_stack_t;

static void vkp_bench_ours_stack(void *p) {
  vkp_bench_stack_t *s = p;
  for (int i = 0; i < s->n; ++i) vkp_bench_ours_gemm_packed(&s->g[i]);
}

static void vkp_bench_blas_gemm(void *p);

static void vkp_bench_blas_stack(void *p) {
  vkp_bench_stack_t *s = p;
  for (int i = 0; i < s->n; ++i) vkp_bench_blas_gemm(&s->g[i]);
}

static void vkp_bench_blas_gemm(void *p) {
  vkp_bench_gemm_t *g = p;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->M, g->N, g->K, 1.0f,
              g->a, g->K, g->b, g->N, 0.0f, g->c, g->N);
}

// A benchmarked layer: one image, square stride and padding.
typedef struct vkp_bench_layer_t {
  const char *name;
  int C, H, W, M, KH, KW, S, P, group;
} vkp_bench_layer_t;

typedef struct vkp_bench_conv_t {
  const char *name;
  int C, H, W, M, KH, KW, S, P, group;
  int OH, OW, threads;
  float *x, *w, *y, *col, *scratch, *packed, *wscratch;
} vkp_bench_conv_t;

static void vkp_bench_ours_conv(void *p) {
  vkp_bench_conv_t *c = p;
  if (c->group == c->C && c->group == c->M) {
    vkp_conv_depthwise(c->x, c->w, c->y, c->C, c->H, c->W, c->KH, c->KW, c->S,
                       c->S, c->P, c->P, 1, 1, c->OH, c->OW, NULL, NULL, 0,
                       c->scratch);
    return;
  }
  vkp_bsrc_t bs;
  if (c->KH == 1 && c->KW == 1 && c->S == 1 && c->P == 0) {
    bs = (vkp_bsrc_t){.b = c->x, .rsb = (ptrdiff_t)c->H * c->W, .csb = 1,
                      .direct = (c->H * c->W) % 256 != 0 || c->C <= 64};  // as the stage
  } else {
    bs = (vkp_bsrc_t){.b = c->x, .conv = 1, .C = c->C, .H = c->H, .W = c->W,
                      .KH = c->KH, .KW = c->KW, .SH = c->S, .SW = c->S,
                      .PT = c->P, .PL = c->P, .DH = 1, .DW = 1, .OH = c->OH,
                      .OW = c->OW};
  }
  ptrdiff_t K = (ptrdiff_t)c->C * c->KH * c->KW;
  vkp_gemm(c->M, (ptrdiff_t)c->OH * c->OW, K, 1.0f, c->w, K, 1, c->packed, &bs, c->y,
           (ptrdiff_t)c->OH * c->OW, NULL, NULL, 0, 0, c->scratch, c->threads);
}

// The stage's path for 3x3 stride-1 convolutions (Winograd F(2x2, 3x3)).
static void vkp_bench_wino_conv(void *p) {
  vkp_bench_conv_t *c = p;
  vkp_conv_winograd(c->x, c->y, c->packed, c->C, c->H, c->W, c->M, c->P, c->P, c->OH,
                    c->OW, NULL, NULL, 0, c->wscratch, c->scratch, c->threads);
}

// The same with 4x4 output tiles (Winograd F(4x4, 3x3)).
static void vkp_bench_wino4_conv(void *p) {
  vkp_bench_conv_t *c = p;
  vkp_conv_winograd4(c->x, c->y, c->packed, c->C, c->H, c->W, c->M, c->P, c->P, c->OH,
                     c->OW, NULL, NULL, 0, c->wscratch, c->scratch, c->threads);
}

static void vkp_bench_blas_conv(void *p) {
  vkp_bench_conv_t *c = p;
  int K = c->C / c->group * c->KH * c->KW, N = c->OH * c->OW;
  int Mg = c->M / c->group;
  for (int g = 0; g < c->group; ++g)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Mg, N, K, 1.0f,
                c->w + (size_t)g * Mg * K, K, c->col, N, 0.0f,
                c->y + (size_t)g * Mg * N, N);
}

int main(int argc, char **argv) {
  int threads = 1, quick = 0;
  const char *filter = NULL;
  double min_time = 0.3;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) min_time = atof(argv[++i]);
    else if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else if (strcmp(argv[i], "--cpu-time") == 0) vkp_bench_clock = CLOCK_PROCESS_CPUTIME_ID;
    else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) filter = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--threads N] [--min-time SECONDS] [--quick] "
              "[--filter SUBSTRING] [--cpu-time]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1) threads = 1;
  vkp_bench_fix_openblas_core(argv);
  openblas_set_num_threads(threads);
  vkp_cpu_pool_t *cpu_pool = NULL;
  vkp_status_t pool_st = vkp_cpu_pool_create(threads, NULL, 0, &cpu_pool);
  if (pool_st) {
    fprintf(stderr, "bench_cpu_kernels: %s\n", vkp_status_message(pool_st));
    vkp_status_free(pool_st);
    return 1;
  }
  static vkp_pool_ref_t pool_ref;
  pool_ref = (vkp_pool_ref_t){vkp_cpu_pool_run, cpu_pool, threads, 0};
  vkp_pool = &pool_ref;
  float *scratch = vkp_bench_alloc((size_t)threads * VKP_GEMM_SCRATCH_FLOATS);
  printf("# ours: vector width %d floats, MR %d, NR %d; OpenBLAS core %s; "
         "threads %d\n",
         VKP_VLEN, VKP_MR, VKP_NR, openblas_get_corename(), threads);
  printf("%-34s %10s %10s %7s\n", "kernel", "ours GF/s", "BLAS GF/s", "ratio");
  static const int sizes[] = {256, 512, 1024};
  for (int s = 0; s < 3; ++s) {
    int n = sizes[s];
    char gname[64];
    snprintf(gname, sizeof gname, "gemm %dx%dx%d", n, n, n);
    if (filter && !strstr(gname, filter)) continue;
    vkp_bench_gemm_t g = {n, n, n, threads, vkp_bench_alloc((size_t)n * n),
                          vkp_bench_alloc((size_t)n * n),
                          vkp_bench_alloc((size_t)n * n), scratch, NULL};
    double flops = 2.0 * n * n * n;
    double ours = flops / vkp_bench_time(vkp_bench_ours_gemm, &g, min_time) * 1e-9;
    double blas = flops / vkp_bench_time(vkp_bench_blas_gemm, &g, min_time) * 1e-9;
    char name[64];
    snprintf(name, sizeof name, "gemm %dx%dx%d", n, n, n);
    printf("%-34s %10.1f %10.1f %7.2f\n", name, ours, blas, ours / blas);
    fflush(stdout);
    free(g.a);
    free(g.b);
    free(g.c);
  }
  // BERT-base's linear layers at 128 tokens (M x N x K): Q/K/V/output
  // projections, FFN up, FFN down; the weight (B) packed once as at load.
  static const int bert[][3] = {{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}};
  for (int s = 0; s < (quick ? 0 : 3); ++s) {
    int M = bert[s][0], N = bert[s][1], K = bert[s][2];
    char name[64];
    snprintf(name, sizeof name, "bert gemm %dx%dx%d", M, N, K);
    if (filter && !strstr(name, filter)) continue;
    vkp_bench_gemm_t g = {M, N, K, threads, vkp_bench_alloc((size_t)M * K),
                          vkp_bench_alloc((size_t)K * N),
                          vkp_bench_alloc((size_t)M * N), scratch, NULL};
    ptrdiff_t npad = (N + VKP_NR - 1) / VKP_NR * VKP_NR;
    g.bpacked = vkp_bench_alloc((size_t)npad * K);
    vkp_bsrc_t bs = {.b = g.b, .rsb = N, .csb = 1};
    vkp_prepack_b(K, N, &bs, g.bpacked);
    double flops = 2.0 * M * (double)N * K;
    double ours = flops / vkp_bench_time(vkp_bench_ours_gemm_packed, &g, min_time) * 1e-9;
    double blas = flops / vkp_bench_time(vkp_bench_blas_gemm, &g, min_time) * 1e-9;
    printf("%-34s %10.1f %10.1f %7.2f\n", name, ours, blas, ours / blas);
    fflush(stdout);
    free(g.a);
    free(g.b);
    free(g.c);
    free(g.bpacked);
  }
  // BERT-base's 12 layers of the six products above, each layer with its own
  // weights (340 MB packed): the rate a whole model's run sees.
  if (!quick && (!filter || strstr("bert 12 layers", filter))) {
    enum { LAYERS = 12, PER = 6 };
    static const int shape[PER] = {0, 0, 0, 0, 1, 2};  // Q, K, V, out, up, down
    vkp_bench_gemm_t *gs = calloc(LAYERS * PER, sizeof *gs);
    float *a = vkp_bench_alloc((size_t)128 * 3072), *c = vkp_bench_alloc((size_t)128 * 3072);
    double flops = 0.0;
    for (int i = 0; i < LAYERS * PER; ++i) {
      int M = bert[shape[i % PER]][0], N = bert[shape[i % PER]][1], K = bert[shape[i % PER]][2];
      gs[i] = (vkp_bench_gemm_t){M, N, K, threads, a, vkp_bench_alloc((size_t)K * N), c,
                                 scratch, NULL};
      gs[i].bpacked = vkp_bench_alloc((size_t)(N + VKP_NR - 1) / VKP_NR * VKP_NR * K);
      vkp_bsrc_t bs = {.b = gs[i].b, .rsb = N, .csb = 1};
      vkp_prepack_b(K, N, &bs, gs[i].bpacked);
      flops += 2.0 * M * (double)N * K;
    }
    vkp_bench_stack_t st = {LAYERS * PER, gs};
    double ours = flops / vkp_bench_time(vkp_bench_ours_stack, &st, min_time) * 1e-9;
    double blas = flops / vkp_bench_time(vkp_bench_blas_stack, &st, min_time) * 1e-9;
    printf("%-34s %10.1f %10.1f %7.2f\n", "bert 12 layers (weights cold)", ours, blas,
           ours / blas);
    fflush(stdout);
    for (int i = 0; i < LAYERS * PER; ++i) {
      free(gs[i].b);
      free(gs[i].bpacked);
    }
    free(gs);
    free(a);
    free(c);
  }
  // name, C, H, W, M, KH, KW, stride, pad, group
  static const vkp_bench_layer_t convs[] = {
      {"resnet18 conv1 7x7/2", 3, 224, 224, 64, 7, 7, 2, 3, 1},
      {"resnet18 layer1 3x3 64", 64, 56, 56, 64, 3, 3, 1, 1, 1},
      {"resnet18 layer2 3x3/2 128", 64, 56, 56, 128, 3, 3, 2, 1, 1},
      {"resnet18 layer2 3x3 128", 128, 28, 28, 128, 3, 3, 1, 1, 1},
      {"resnet18 layer3 3x3 256", 256, 14, 14, 256, 3, 3, 1, 1, 1},
      {"resnet18 layer4 3x3 512", 512, 7, 7, 512, 3, 3, 1, 1, 1},
      {"resnet18 layer2 1x1/2 down", 64, 56, 56, 128, 1, 1, 2, 0, 1},
      {"mobilenetv2 1x1 expand 24->144", 24, 56, 56, 144, 1, 1, 1, 0, 1},
      {"mobilenetv2 dw 3x3 144", 144, 56, 56, 144, 3, 3, 1, 1, 144},
      {"mobilenetv2 dw 3x3/2 144", 144, 56, 56, 144, 3, 3, 2, 1, 144},
      {"mobilenetv2 1x1 project 144->24", 144, 56, 56, 24, 1, 1, 1, 0, 1},
      {"mobilenetv2 1x1 expand 96->576", 96, 14, 14, 576, 1, 1, 1, 0, 1},
      {"mobilenetv2 dw 3x3 576", 576, 14, 14, 576, 3, 3, 1, 1, 576},
      {"mobilenetv2 1x1 320->1280", 320, 7, 7, 1280, 1, 1, 1, 0, 1},
      {"squeezenet 3x3 16->64 @55", 16, 55, 55, 64, 3, 3, 1, 1, 1},
      {"squeezenet 3x3 32->128 @27", 32, 27, 27, 128, 3, 3, 1, 1, 1},
      {"squeezenet 3x3 64->256 @13", 64, 13, 13, 256, 3, 3, 1, 1, 1},
  };
  int n_convs = (int)(sizeof convs / sizeof convs[0]);
  for (int i = 0; i < (quick ? 0 : n_convs); ++i) {
    const vkp_bench_layer_t *l = &convs[i];
    vkp_bench_conv_t c = {.name = l->name, .C = l->C, .H = l->H, .W = l->W, .M = l->M,
                          .KH = l->KH, .KW = l->KW, .S = l->S, .P = l->P,
                          .group = l->group};
    if (filter && !strstr(c.name, filter)) continue;
    c.threads = threads;
    c.scratch = scratch;
    c.OH = (c.H + 2 * c.P - c.KH) / c.S + 1;
    c.OW = (c.W + 2 * c.P - c.KW) / c.S + 1;
    size_t K = (size_t)c.C / c.group * c.KH * c.KW, N = (size_t)c.OH * c.OW;
    c.x = vkp_bench_alloc((size_t)c.C * c.H * c.W);
    c.w = vkp_bench_alloc((size_t)c.M * K);
    c.y = vkp_bench_alloc((size_t)c.M * N);
    c.col = vkp_bench_alloc(K * N * (size_t)c.group);
    // Stages pack constant weights once at load; so does the benchmark.
    c.packed = vkp_bench_alloc((size_t)VKP_PAD_MR(c.M) * K);
    if (c.group == 1) vkp_prepack_a(c.M, (ptrdiff_t)K, c.w, (ptrdiff_t)K, 1, 1.0f, c.packed);
    // The depthwise loop's scratch, as the stage sizes it.
    int depthwise = c.group == c.C && c.group == c.M;
    if (depthwise)
      c.scratch = vkp_bench_alloc(
          (size_t)VKP_DW_SCRATCH_FLOATS(c.KH, c.KW, c.S, c.S, 1, 1, c.OH, c.OW));
    double flops = 2.0 * c.M * (double)K * (double)N;
    double ours = flops / vkp_bench_time(vkp_bench_ours_conv, &c, min_time) * 1e-9;
    double blas = flops / vkp_bench_time(vkp_bench_blas_conv, &c, min_time) * 1e-9;
    printf("%-34s %10.1f %10.1f %7.2f\n", c.name, ours, blas, ours / blas);
    fflush(stdout);
    // Where the stage would use Winograd: that path too, at the same
    // (direct-convolution) FLOP count.
    if (c.group == 1 && c.KH == 3 && c.KW == 3 && c.S == 1 && c.C >= 16 && c.M >= 16) {
      free(c.packed);
      c.packed = vkp_bench_alloc((size_t)16 * VKP_PAD_MR(c.M) * c.C);
      vkp_winograd_prepack(c.M, c.C, c.w, c.packed);
      c.wscratch = vkp_bench_alloc((size_t)threads *
                                   (size_t)VKP_WINO_SCRATCH_FLOATS(c.C, c.M, c.OH, c.OW));
      double wino = flops / vkp_bench_time(vkp_bench_wino_conv, &c, min_time) * 1e-9;
      char name[64];
      snprintf(name, sizeof name, "%s winograd", c.name);
      printf("%-34s %10.1f %10.1f %7.2f\n", name, wino, blas, wino / blas);
      fflush(stdout);
      free(c.wscratch);
      free(c.packed);
      c.packed = vkp_bench_alloc((size_t)36 * VKP_PAD_MR(c.M) * c.C);
      vkp_winograd4_prepack(c.M, c.C, c.w, c.packed);
      c.wscratch = vkp_bench_alloc((size_t)threads *
                                   (size_t)VKP_WINO4_SCRATCH_FLOATS(c.C, c.M, c.OH, c.OW));
      double wino4 = flops / vkp_bench_time(vkp_bench_wino4_conv, &c, min_time) * 1e-9;
      snprintf(name, sizeof name, "%s winograd4", c.name);
      printf("%-34s %10.1f %10.1f %7.2f\n", name, wino4, blas, wino4 / blas);
      fflush(stdout);
      free(c.wscratch);
    }
    if (depthwise) free(c.scratch);
    free(c.x);
    free(c.w);
    free(c.y);
    free(c.col);
    free(c.packed);
  }
  free(scratch);
  vkp_pool = NULL;
  vkp_cpu_pool_destroy(cpu_pool);
  return 0;
}
