// SPDX-License-Identifier: Apache-2.0
// vkpipe CPU prelude: the kernels every generated stage calls. This file is
// not compiled into libvkpipe; CMake embeds it as a string and codegen/c
// pastes it at the top of every generated translation unit, so it is compiled
// with the stage's -O3 -march flags and the constant shapes the generated
// code passes in can be propagated into it.
//
// Vectors: GCC/Clang generic vector types (vector_size), sized from the
// -march the stage is built for (AVX-512: 16 floats, AVX: 8, else 4). The
// compiler lowers them to the widest instructions -march allows, so the same
// source is fast with -march=native and still correct with a portable
// baseline.
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define VKP_VLEN 16
#define VKP_MR 14
#elif defined(__AVX__)
#define VKP_VLEN 8
#define VKP_MR 6
#else
#define VKP_VLEN 4
#define VKP_MR 4
#endif
#define VKP_NR (2 * VKP_VLEN)
// Rows of A rounded up to whole MR panels.
#define VKP_PAD_MR(m) (((m) + VKP_MR - 1) / VKP_MR * VKP_MR)
#define VKP_MAXZ(a, b) ((a) > (b) ? (a) : (b))
// __builtin_shufflevector: Clang, and GCC from 12.
#ifndef VKP_HAVE_SHUFFLEVECTOR
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define VKP_HAVE_SHUFFLEVECTOR 1
#endif
#endif
#endif
#ifndef VKP_HAVE_SHUFFLEVECTOR
#define VKP_HAVE_SHUFFLEVECTOR 0
#endif
// Window columns max pooling vectorises over; wider windows loop plainly.
#define VKP_MAX_POOL_TAPS 32
// Prelude functions a stage may leave unused.
#define VKP_FN static __attribute__((unused))
// Unrolls the next loop completely (its trip count is a constant once
// inlined); clang reads `#pragma GCC unroll` but does not unroll these.
#if defined(__clang__)
#define VKP_UNROLL _Pragma("unroll")
#else
#define VKP_UNROLL _Pragma("GCC unroll 32")
#endif
// One out-of-line copy of a large kernel (gcc would otherwise clone it per
// constant argument set); clang has no noclone and clones nothing here.
#if defined(__clang__)
#define VKP_ONE_COPY __attribute__((noinline))
#else
#define VKP_ONE_COPY __attribute__((noinline, noclone))
#endif
// Cache blocking: a KC x NR panel of B stays in L1, an MC x KC block of A in
// L2, a KC x NC block of B in L3.
#ifndef VKP_KC
#define VKP_KC 256
#endif
#define VKP_MC (VKP_MR * 24)
#ifndef VKP_NC
#define VKP_NC (VKP_NR * 64)
#endif
// How far ahead (rows of a packed B panel) the register tile prefetches.
#ifndef VKP_PF_ROWS
#define VKP_PF_ROWS 64
#endif
#ifndef VKP_PF_A_ROWS
#define VKP_PF_A_ROWS 64
#endif

// ---------------------------------------------------------------------------
// Threads. The host keeps a persistent pool of the stage's threads
// (runtime/cpu/pool.c) and writes a vkp_pool_ref_t at the start of the
// workspace; vkp_stage_run makes it the calling thread's pool for the run.
// vkp_parallel(n, fn, ctx) runs fn(ctx, i, worker) for every i in [0, n) on
// the pool, the calling thread included, and returns when all are done;
// `worker` (< VKP_STAGE_THREADS) picks per-thread scratch. Without a pool,
// and inside a task (the pool is not re-entered), it runs them in order.
typedef void (*vkp_task_fn)(void *ctx, ptrdiff_t task, int worker);
typedef struct vkp_pool_ref_t {
  void (*run)(void *pool, ptrdiff_t n_tasks, vkp_task_fn fn, void *ctx);
  void *pool;
  int32_t workers, reserved;
} vkp_pool_ref_t;
static __thread const vkp_pool_ref_t *vkp_pool;

// Threads a kernel may split its work across (1 inside a task).
static inline int vkp_workers(void) {
  return vkp_pool && vkp_pool->run ? (int)vkp_pool->workers : 1;
}

VKP_FN void vkp_parallel(ptrdiff_t n, vkp_task_fn fn, void *ctx) {
  const vkp_pool_ref_t *pool = vkp_pool;
  if (n > 1 && pool && pool->run && pool->workers > 1) {
    vkp_pool = NULL;  // tasks run on this thread too: no nested splits
    pool->run(pool->pool, n, fn, ctx);
    vkp_pool = pool;
    return;
  }
  for (ptrdiff_t i = 0; i < n; ++i) fn(ctx, i, 0);
}

// Splits [0, n) into at most `parts` contiguous chunks (a task each); fn
// gets [lo, hi). For row loops of the elementwise and row kernels.
typedef void (*vkp_range_fn)(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker);
typedef struct vkp_range_job_t {
  vkp_range_fn fn;
  void *ctx;
  ptrdiff_t n, parts;
} vkp_range_job_t;

static void vkp_range_task(void *arg, ptrdiff_t t, int worker) {
  const vkp_range_job_t *j = arg;
  j->fn(j->ctx, j->n * t / j->parts, j->n * (t + 1) / j->parts, worker);
}

// Work (about one multiply-add or one element moved) a split must give each
// task before waking the pool pays: a wake-up and the join cost a few
// microseconds, the time of some 10^4 such steps.
#ifndef VKP_PAR_GRAIN
#define VKP_PAR_GRAIN 16384
#endif
// The grain (iterations per task, at least 1) of a loop whose iterations
// each do `work` steps.
#define VKP_GRAIN(work) \
  ((ptrdiff_t)VKP_PAR_GRAIN / VKP_MAXZ((ptrdiff_t)(work), (ptrdiff_t)1) + 1)

// Splits only when each chunk gets at least `grain` iterations. The chunks
// depend on n, grain and the pool's size only, and every kernel that splits
// computes each output element the same way whatever chunk it falls in, so
// results do not depend on the thread count.
VKP_FN void vkp_parallel_range(ptrdiff_t n, ptrdiff_t grain, vkp_range_fn fn, void *ctx) {
  ptrdiff_t parts = vkp_workers();
  if (grain < 1) grain = 1;
  if (parts > n / grain) parts = n / grain;
  if (parts <= 1) {
    if (n > 0) fn(ctx, 0, n, 0);
    return;
  }
  vkp_range_job_t j = {fn, ctx, n, parts};
  vkp_parallel(parts, vkp_range_task, &j);
}

typedef float vkp_vec_t __attribute__((vector_size(VKP_VLEN * 4)));
typedef float vkp_uvec_t
    __attribute__((vector_size(VKP_VLEN * 4), aligned(4), may_alias));
typedef float vkp_v8_t __attribute__((vector_size(32)));
typedef float vkp_uv8_t __attribute__((vector_size(32), aligned(4), may_alias));
typedef float vkp_v4_t __attribute__((vector_size(16)));
typedef float vkp_uv4_t __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t vkp_ivec_t __attribute__((vector_size(VKP_VLEN * 4)));

// The even (odd) lanes of lo then hi: elements 2l (2l + 1) of the two
// vectors read as one of 2 * VKP_VLEN.
static inline vkp_vec_t vkp_vec_even(vkp_vec_t lo, vkp_vec_t hi) {
#if VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 16
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                 28, 30);
#elif VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 8
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
#elif VKP_HAVE_SHUFFLEVECTOR
  return __builtin_shufflevector(lo, hi, 0, 2, 4, 6);
#else
  vkp_vec_t r;
  for (int l = 0; l < VKP_VLEN; ++l) r[l] = 2 * l < VKP_VLEN ? lo[2 * l] : hi[2 * l - VKP_VLEN];
  return r;
#endif
}
static inline vkp_vec_t vkp_vec_odd(vkp_vec_t lo, vkp_vec_t hi) {
#if VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 16
  return __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27,
                                 29, 31);
#elif VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 8
  return __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
#elif VKP_HAVE_SHUFFLEVECTOR
  return __builtin_shufflevector(lo, hi, 1, 3, 5, 7);
#else
  vkp_vec_t r;
  for (int l = 0; l < VKP_VLEN; ++l)
    r[l] = 2 * l + 1 < VKP_VLEN ? lo[2 * l + 1] : hi[2 * l + 1 - VKP_VLEN];
  return r;
#endif
}
// Lanes 1.. of lo, then lane VKP_VLEN - k of hi (k = 1 or 2, a literal): a
// row of taps one column on from lo's, where hi was read VKP_VLEN + 1 (k = 1,
// stride 2) or 2 (k = 2, stride 1) columns on.
#if VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 16
#define vkp_vec_next(lo, hi, k) \
  __builtin_shufflevector((lo), (hi), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32 - (k))
#elif VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 8
#define vkp_vec_next(lo, hi, k) __builtin_shufflevector((lo), (hi), 1, 2, 3, 4, 5, 6, 7, 16 - (k))
#elif VKP_HAVE_SHUFFLEVECTOR
#define vkp_vec_next(lo, hi, k) __builtin_shufflevector((lo), (hi), 1, 2, 3, 8 - (k))
#else
static inline vkp_vec_t vkp_vec_next(vkp_vec_t lo, vkp_vec_t hi, int k) {
  vkp_vec_t r;
  for (int l = 0; l < VKP_VLEN; ++l) r[l] = l + 1 < VKP_VLEN ? lo[l + 1] : hi[VKP_VLEN - k];
  return r;
}
#endif
// Elements 2l of a row of 2 * VKP_VLEN - 1 floats read as lo (the first
// VKP_VLEN) and hi1 (the last VKP_VLEN, starting at element VKP_VLEN - 1):
// the even lanes without reading the element past the last one needed.
static inline vkp_vec_t vkp_vec_even_skew(vkp_vec_t lo, vkp_vec_t hi1) {
#if VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 16
  return __builtin_shufflevector(lo, hi1, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27,
                                 29, 31);
#elif VKP_HAVE_SHUFFLEVECTOR && VKP_VLEN == 8
  return __builtin_shufflevector(lo, hi1, 0, 2, 4, 6, 9, 11, 13, 15);
#elif VKP_HAVE_SHUFFLEVECTOR
  return __builtin_shufflevector(lo, hi1, 0, 2, 5, 7);
#else
  vkp_vec_t r;
  for (int l = 0; l < VKP_VLEN; ++l)
    r[l] = 2 * l < VKP_VLEN ? lo[2 * l] : hi1[2 * l - VKP_VLEN + 1];
  return r;
#endif
}

// `p` rounded up to a cache line: per-thread scratch starts on its own line,
// so that threads writing neighbouring scratch never share one.
static inline float *vkp_align64(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

// Scratch floats one thread's GEMM needs for packing.
#define VKP_GEMM_SCRATCH_FLOATS \
  ((ptrdiff_t)VKP_MC * VKP_KC + (ptrdiff_t)VKP_KC * VKP_NC + VKP_MR * VKP_NR + 64)

// A fused elementwise epilogue, applied in place to a finished tile of C:
// rows [row0, row0+rows) and columns [col0, col0+cols) of the output matrix
// of image/batch `batch`; `c` points at element (row0, col0).
typedef void (*vkp_epilogue_fn)(float *c, ptrdiff_t ldc, ptrdiff_t row0,
                                ptrdiff_t col0, ptrdiff_t rows, ptrdiff_t cols,
                                ptrdiff_t batch, const void *ctx);

// The commonest epilogue of a convolution, which the GEMM applies to its
// register tile before storing it (vkp_ukernel) instead of calling an
// epilogue function on the stored tile: y = clamp(x + bias[row]) with
//   nan_to_lo == 0: y = x < lo ? lo : x, then y > hi ? hi : y (NaN passes);
//   nan_to_lo == 1: y = x > lo ? x : lo, then y > hi ? hi : y (NaN gives lo).
// The code generator composes a bias, ReLUs and constant Clips into one such
// clamp (emit.c, vkp__row_clamp_ep) and passes vkp_ep_rows with it; kernels
// that do not fuse it call vkp_ep_rows, which computes the same.
typedef struct vkp_row_ep_t {
  const float *bias;  // one per row (output channel); NULL: none
  float lo, hi;
  int nan_to_lo;
} vkp_row_ep_t;

static inline float vkp_row_ep_one(const vkp_row_ep_t *e, ptrdiff_t row, float x) {
  if (e->bias) x += e->bias[row];
  float y = e->nan_to_lo ? (x > e->lo ? x : e->lo) : (x < e->lo ? e->lo : x);
  return y > e->hi ? e->hi : y;
}

static inline vkp_vec_t vkp_vselect(vkp_ivec_t m, vkp_vec_t a, vkp_vec_t b) {
  return (vkp_vec_t)((m & (vkp_ivec_t)a) | (~m & (vkp_ivec_t)b));
}

// The clamp of a row epilogue on a vector (its bias already added). x86's
// MAXPS / MINPS return their second operand when the two are unordered or
// equal, so max(lo, x) is x < lo ? lo : x, max(x, lo) is x > lo ? x : lo and
// min(hi, y) is y > hi ? hi : y, NaN included, one instruction each; the
// selects through integer masks cost MobileNetV2's depthwise kernels 10%.
static inline vkp_vec_t vkp_row_ep_clamp(const vkp_row_ep_t *e, vkp_vec_t x) {
#if defined(__AVX512F__) && VKP_VLEN == 16
  const __m512 lo = _mm512_set1_ps(e->lo), t = (__m512)x;
  const __m512 y = e->nan_to_lo ? _mm512_max_ps(t, lo) : _mm512_max_ps(lo, t);
  return (vkp_vec_t)_mm512_min_ps(_mm512_set1_ps(e->hi), y);
#elif defined(__AVX__) && VKP_VLEN == 8
  const __m256 lo = _mm256_set1_ps(e->lo), t = (__m256)x;
  const __m256 y = e->nan_to_lo ? _mm256_max_ps(t, lo) : _mm256_max_ps(lo, t);
  return (vkp_vec_t)_mm256_min_ps(_mm256_set1_ps(e->hi), y);
#elif defined(__SSE__) && VKP_VLEN == 4
  const __m128 lo = _mm_set1_ps(e->lo), t = (__m128)x;
  const __m128 y = e->nan_to_lo ? _mm_max_ps(t, lo) : _mm_max_ps(lo, t);
  return (vkp_vec_t)_mm_min_ps(_mm_set1_ps(e->hi), y);
#else
  const vkp_vec_t lo = (vkp_vec_t){0} + e->lo, hi = (vkp_vec_t){0} + e->hi;
  vkp_vec_t y = e->nan_to_lo ? vkp_vselect(x > lo, x, lo) : vkp_vselect(x < lo, lo, x);
  return vkp_vselect(y > hi, hi, y);
#endif
}

static inline vkp_vec_t vkp_row_ep_vec(const vkp_row_ep_t *e, ptrdiff_t row, vkp_vec_t x) {
  if (e->bias) x += e->bias[row];
  return vkp_row_ep_clamp(e, x);
}

static void vkp_ep_rows(float *c, ptrdiff_t ldc, ptrdiff_t row0, ptrdiff_t col0,
                        ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t batch, const void *ctx);

// The row epilogue a kernel may apply in its registers: `ctx` when `ep` is
// vkp_ep_rows, else NULL (the kernel calls `ep` on what it stored).
static inline const vkp_row_ep_t *vkp_row_ep_of(vkp_epilogue_fn ep, const void *ctx) {
  return ep == vkp_ep_rows ? (const vkp_row_ep_t *)ctx : NULL;
}

static void vkp_ep_rows(float *c, ptrdiff_t ldc, ptrdiff_t row0, ptrdiff_t col0,
                        ptrdiff_t rows, ptrdiff_t cols, ptrdiff_t batch, const void *ctx) {
  const vkp_row_ep_t *e = ctx;
  (void)col0;
  (void)batch;
  for (ptrdiff_t r = 0; r < rows; ++r) {
    float *restrict cr = c + r * ldc;
    ptrdiff_t j = 0;
    for (; j + VKP_VLEN <= cols; j += VKP_VLEN) {
      vkp_uvec_t *p = (vkp_uvec_t *)(cr + j);
      *p = vkp_row_ep_vec(e, row0 + r, *p);
    }
    for (; j < cols; ++j) cr[j] = vkp_row_ep_one(e, row0 + r, cr[j]);
  }
}

// Where GEMM reads B from: a strided matrix, or the im2col view of one NCHW
// image (row k = (channel, kh, kw), column j = output pixel).
// With `direct` (a plain matrix, csb == 1) the register tile reads whole
// NR-column panels of B in place instead of packing them; only a last,
// partial panel is packed.
// With `packed` (a constant B packed once at load by vkp_prepack_b; `npad`
// its columns rounded up to NR), the GEMM reads the panels from there and
// packs nothing; `b` still serves the small-M path.
// With `kt` > 0 the image is one output frame's view of a clip (a 3-D
// window, vkp_conv3d_gemm): depth channel ch is channel ch / kt of the clip
// (`cs` floats apart) at frame iz0 + (ch % kt) * dz of its D frames (zeros
// where that frame is padding), so `C` counts channels times frame taps.
typedef struct vkp_bsrc_t {
  const float *b;
  ptrdiff_t rsb, csb;
  int conv, direct;
  ptrdiff_t C, H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW;
  ptrdiff_t kt, cs, D, iz0, dz;
  const float *packed;
  ptrdiff_t npad;
} vkp_bsrc_t;

// The input plane behind im2col depth channel `ch` of a conv source, or
// NULL where it is a padding frame (kt > 0).
static inline const float *vkp__conv_plane(const vkp_bsrc_t *s, ptrdiff_t ch) {
  if (s->kt <= 0) return s->b + ch * s->H * s->W;
  const ptrdiff_t iz = s->iz0 + (ch % s->kt) * s->dz;
  return iz < 0 || iz >= s->D ? NULL : s->b + (ch / s->kt) * s->cs + iz * s->H * s->W;
}

static inline float vkp_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
// e^x without a libm call, so that loops over it vectorise (GELU in a
// GEMM epilogue): 2^n * p(r), n = round(x / ln 2), r = x - n ln 2 (ln 2 in
// two parts), p Cephes' degree-7 polynomial for expf (about 1 ulp); x
// clamped to [-87, 88], where 2^n stays a normal float.
static inline float vkp_exp_poly(float x) {
  x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
  // Round to nearest by the 1.5 * 2^23 trick (no call, vectorises).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = ((int32_t)n + 127) * (1 << 23);
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
// GELU, erf form: 0.5 x erfc(-x / sqrt 2), erfc(z) = t exp(-z^2 + P(t)),
// t = 1 / (1 + |z| / 2) (Numerical Recipes' erfcc: relative error under
// 1.2e-7 for every z, so the negative tail keeps its relative accuracy),
// and 2 - erfc(|z|) for z < 0. Branch-free: the loops vectorise.
static inline float vkp_gelu_none(float x) {
  const float z = x * -0.70710678118654752f, az = z < 0.0f ? -z : z;
  const float t = 1.0f / (1.0f + 0.5f * az);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float c = t * vkp_exp_poly(p - az * az);
  return 0.5f * x * (z < 0.0f ? 2.0f - c : c);
}
// GELU, tanh form: 0.5 x (1 + tanh u) = x / (1 + e^(-2u)) exactly, which
// keeps the negative tail's relative accuracy (1 + tanh u cancels there).
static inline float vkp_gelu_tanh(float x) {
  const float u2 = 1.59576912160573072f * (x + 0.044715f * x * x * x);
  return x / (1.0f + vkp_exp_poly(-u2));
}
// min(max(x, lo), hi): NaN passes through; lo > hi gives hi, as ref does.
static inline float vkp_clipf(float x, float lo, float hi) {
  float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}
// Integer division as the reference defines it: truncation toward zero,
// INT_MIN / -1 wraps (a zero divisor gives 0 here; ref reports it).
static inline int64_t vkp_div_int64_t(int64_t a, int64_t b) {
  return b == 0 ? 0 : b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b;
}
static inline int32_t vkp_div_int32_t(int32_t a, int32_t b) {
  return b == 0 ? 0 : b == -1 ? (int32_t)(0u - (uint32_t)a) : a / b;
}
static inline float vkp_hard_swishf(float x) {
  return x * vkp_clipf(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
}
// A float to int64 as the reference defines it: truncation toward zero, NaN
// to 0, saturation at the int64 range (C leaves the rest undefined).
static inline int64_t vkp_f2i64(double x) {
  if (!(x == x)) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

// ---------------------------------------------------------------------------
// GEMM: C[M][N] (row stride ldc) = alpha * A * B, then the epilogue.

// Packs rows [i0, i0+mc) x depth [p0, p0+kc) of A into MR-row panels,
// zero-padding the last panel; scales by alpha.
VKP_FN void vkp_pack_a(ptrdiff_t mc, ptrdiff_t kc, const float *a,
                       ptrdiff_t rsa, ptrdiff_t csa, float alpha,
                       float *restrict pa) {
  for (ptrdiff_t i = 0; i < mc; i += VKP_MR) {
    ptrdiff_t mr = mc - i < VKP_MR ? mc - i : VKP_MR;
    const float *ai = a + i * rsa;
    if (mr == VKP_MR && csa == 1) {
      for (ptrdiff_t k = 0; k < kc; ++k)
        for (ptrdiff_t r = 0; r < VKP_MR; ++r)
          pa[k * VKP_MR + r] = alpha * ai[r * rsa + k];
#if defined(__AVX512F__) && VKP_VLEN == 16
    } else if (rsa == 1) {
      // Rows contiguous (input planes as A: vkp_conv_pointwise_t): a masked
      // load per step, the padding rows zero.
      const __mmask16 m = (__mmask16)((1u << mr) - 1u);
      const __m512 va = _mm512_set1_ps(alpha);
      for (ptrdiff_t k = 0; k < kc; ++k)
        _mm512_mask_storeu_ps(pa + k * VKP_MR, (__mmask16)((1u << VKP_MR) - 1u),
                              _mm512_mul_ps(va, _mm512_maskz_loadu_ps(m, ai + k * csa)));
#endif
    } else {
      for (ptrdiff_t k = 0; k < kc; ++k)
        for (ptrdiff_t r = 0; r < VKP_MR; ++r)
          pa[k * VKP_MR + r] = r < mr ? alpha * ai[r * rsa + k * csa] : 0.0f;
    }
    pa += kc * VKP_MR;
  }
}

// Packs depth [p0, p0+kc) x columns [j0, j0+nc) of B into NR-column panels.
// VKP_VLEN elements of a row at stride sw (1 or 2) from p: at stride 2 the
// even lanes of the 2 * VKP_VLEN - 1 floats from p, nothing past them read.
static inline vkp_vec_t vkp__pack_vec(const float *p, ptrdiff_t sw) {
  if (sw == 1) return *(const vkp_uvec_t *)p;
  return vkp_vec_even_skew(*(const vkp_uvec_t *)p, *(const vkp_uvec_t *)(p + VKP_VLEN - 1));
}

#define VKP_PACK_TAPS 49  // windows up to 7x7 take vkp_pack_b's small-map path
VKP_FN void vkp_pack_b(ptrdiff_t kc, ptrdiff_t nc, ptrdiff_t p0, ptrdiff_t j0,
                       const vkp_bsrc_t *src, float *restrict pb) {
  for (ptrdiff_t j = 0; j < nc; j += VKP_NR) {
    ptrdiff_t nr = nc - j < VKP_NR ? nc - j : VKP_NR;
    if (!src->conv) {
      const float *bj = src->b + p0 * src->rsb + (j0 + j) * src->csb;
      if (nr == VKP_NR && src->csb == 1) {
        for (ptrdiff_t k = 0; k < kc; ++k)
          memcpy(pb + k * VKP_NR, bj + k * src->rsb, sizeof(float) * VKP_NR);
      } else {
        for (ptrdiff_t k = 0; k < kc; ++k)
          for (ptrdiff_t c = 0; c < VKP_NR; ++c)
            pb[k * VKP_NR + c] =
                c < nr ? bj[k * src->rsb + c * src->csb] : 0.0f;
      }
    } else if (src->OW < VKP_VLEN && src->KH * src->KW <= VKP_PACK_TAPS) {
      // im2col of a small map (a 7x7 or 14x14 layer): a panel's 32 pixels
      // are runs of a few floats, whose set-up cost more than their copy
      // (the packing was 15% of ResNet-18's 7x7 layers). Instead each tap
      // gets each column's offset in the channel's plane (-1: padding, or
      // past nr) once per panel, and a depth step is NR indexed loads.
      int32_t off[VKP_PACK_TAPS][VKP_NR];
      for (ptrdiff_t kh = 0; kh < src->KH; ++kh)
        for (ptrdiff_t kw = 0; kw < src->KW; ++kw)
          for (ptrdiff_t c = 0; c < VKP_NR; ++c) {
            ptrdiff_t col = j0 + j + c, oh = col / src->OW, ow = col % src->OW;
            ptrdiff_t ih = oh * src->SH - src->PT + kh * src->DH;
            ptrdiff_t iw = ow * src->SW - src->PL + kw * src->DW;
            off[kh * src->KW + kw][c] = c < nr && ih >= 0 && ih < src->H && iw >= 0 &&
                                                iw < src->W
                                            ? (int32_t)(ih * src->W + iw)
                                            : -1;
          }
      const ptrdiff_t khw = src->KH * src->KW;
      ptrdiff_t ch = p0 / khw, t = p0 % khw;
      for (ptrdiff_t k = 0; k < kc; ++k) {
        const float *plane = vkp__conv_plane(src, ch);
        const int32_t *o = off[t];
        float *restrict dst = pb + k * VKP_NR;
        if (!plane) {
          for (ptrdiff_t c = 0; c < VKP_NR; ++c) dst[c] = 0.0f;
          if (++t == khw) t = 0, ++ch;
          continue;
        }
#if defined(__AVX512F__) && VKP_VLEN == 16
        VKP_UNROLL
        for (int h = 0; h < VKP_NR; h += 16) {
          const __m512i oi = _mm512_loadu_si512((const void *)(o + h));
          const __mmask16 in = _mm512_cmpge_epi32_mask(oi, _mm512_setzero_si512());
          _mm512_storeu_ps(dst + h,
                           _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in, oi, plane, 4));
        }
#else
        for (ptrdiff_t c = 0; c < VKP_NR; ++c) dst[c] = o[c] >= 0 ? plane[o[c]] : 0.0f;
#endif
        if (++t == khw) t = 0, ++ch;
      }
    } else {
      // im2col on the fly. The panel's columns are output pixels; split
      // them into runs that share an output row, so that for each depth
      // step a run reads one input row: a contiguous (or strided) copy
      // between two zero-filled edges.
      ptrdiff_t run_c0[VKP_NR + 1], run_ih[VKP_NR], run_iw[VKP_NR];
      int runs = 0;
      for (ptrdiff_t c = 0; c < nr;) {
        ptrdiff_t col = j0 + j + c, oh = col / src->OW, ow = col % src->OW;
        ptrdiff_t len = src->OW - ow < nr - c ? src->OW - ow : nr - c;
        run_c0[runs] = c;
        run_ih[runs] = oh * src->SH - src->PT;
        run_iw[runs] = ow * src->SW - src->PL;
        ++runs;
        c += len;
      }
      run_c0[runs] = nr;
      // Depth index p0 + k is (channel, kh, kw); step it instead of dividing.
      ptrdiff_t khw = src->KH * src->KW;
      const float *x_end = src->kt > 0 ? src->b + src->C / src->kt * src->cs
                                       : src->b + src->C * src->H * src->W;
      ptrdiff_t ch = p0 / khw, kh = (p0 % khw) / src->KW, kw = p0 % src->KW;
      for (ptrdiff_t k = 0; k < kc; ++k) {
        ptrdiff_t dh = kh * src->DH, dw = kw * src->DW;
        const float *plane = vkp__conv_plane(src, ch);
        float *restrict dst = pb + k * VKP_NR;
        if (++kw == src->KW) {
          kw = 0;
          if (++kh == src->KH) {
            kh = 0;
            ++ch;
          }
        }
        if (!plane) {
          for (ptrdiff_t c = 0; c < VKP_NR; ++c) dst[c] = 0.0f;
          continue;
        }
        for (int u = 0; u < runs; ++u) {
          ptrdiff_t c0 = run_c0[u], len = run_c0[u + 1] - c0;
          ptrdiff_t ih = run_ih[u] + dh, iw = run_iw[u] + dw;
          if (ih < 0 || ih >= src->H) {
            for (ptrdiff_t c = 0; c < len; ++c) dst[c0 + c] = 0.0f;
            continue;
          }
          // Columns c with 0 <= iw + c * SW < W (no division at strides 1
          // and 2: this runs once per depth step and run, and a division
          // was a visible part of a 7x7/2 layer's packing).
          ptrdiff_t lo, hi;
          if (src->SW == 1) {
            lo = iw < 0 ? -iw : 0;
            hi = src->W - iw;
          } else if (src->SW == 2) {
            lo = iw < 0 ? (1 - iw) >> 1 : 0;
            hi = src->W - iw <= 0 ? 0 : (src->W - iw + 1) >> 1;
          } else {
            lo = iw < 0 ? (-iw + src->SW - 1) / src->SW : 0;
            hi = src->W - iw <= 0 ? 0 : (src->W - iw + src->SW - 1) / src->SW;
          }
          if (lo > len) lo = len;
          if (hi > len) hi = len;
          if (hi < lo) hi = lo;
          const float *row = plane + ih * src->W + iw;
          for (ptrdiff_t c = 0; c < lo; ++c) dst[c0 + c] = 0.0f;
          // Stride 1 and 2: whole vectors (at stride 2 the even elements of
          // the 2 * VLEN - 1 floats they need), the last one overlapping the
          // one before. A run shorter than a vector takes one vector where
          // it stays in the panel row and its reads in x: what it writes
          // past the run is written again after (the next runs, the
          // padding, the zeros past nr).
          if (src->SW == 1 || src->SW == 2) {
            const ptrdiff_t sw = src->SW;
            ptrdiff_t c = lo;
            for (; c + VKP_VLEN <= hi; c += VKP_VLEN)
              *(vkp_uvec_t *)(dst + c0 + c) = vkp__pack_vec(row + sw * c, sw);
            if (c < hi && hi - lo >= VKP_VLEN) {
              *(vkp_uvec_t *)(dst + c0 + hi - VKP_VLEN) =
                  vkp__pack_vec(row + sw * (hi - VKP_VLEN), sw);
            } else if (c < hi && c0 + c + VKP_VLEN <= VKP_NR &&
                       row + sw * c + sw * (VKP_VLEN - 1) < x_end) {
              *(vkp_uvec_t *)(dst + c0 + c) = vkp__pack_vec(row + sw * c, sw);
            } else {
              for (; c < hi; ++c) dst[c0 + c] = row[sw * c];
            }
          } else {
            for (ptrdiff_t c = lo; c < hi; ++c) dst[c0 + c] = row[c * src->SW];
          }
          for (ptrdiff_t c = hi; c < len; ++c) dst[c0 + c] = 0.0f;
        }
        for (ptrdiff_t c = nr; c < VKP_NR; ++c) dst[c] = 0.0f;
      }
    }
    pb += kc * VKP_NR;
  }
}

// Stores the first `mr` of `rows` accumulator rows of a register tile (both
// constants once inlined), two vectors per row (`half`: one, acc1 unused),
// row r at c + r * ldc: with `accumulate` added to what c holds, then
// through the row epilogue `rep` (NULL: none; the tile's first row is
// output row `row`).
static inline __attribute__((always_inline)) void vkp__tile_store(
    const vkp_vec_t *acc0, const vkp_vec_t *acc1, int rows, int half, ptrdiff_t mr,
    float *restrict c, ptrdiff_t ldc, int accumulate, const vkp_row_ep_t *rep,
    ptrdiff_t row) {
  // Unrolled: with `mr` a variable (a panel's last rows) a loop would index
  // the accumulators, and they would live in memory for the whole tile.
  VKP_UNROLL
  for (int r = 0; r < rows; ++r) {
    if (r >= mr) break;
    vkp_uvec_t *c0 = (vkp_uvec_t *)(c + r * ldc), *c1 = (vkp_uvec_t *)(c + r * ldc + VKP_VLEN);
    vkp_vec_t v0 = acc0[r], v1 = half ? v0 : acc1[r];
    if (accumulate) {
      v0 = *c0 + v0;
      if (!half) v1 = *c1 + v1;
    }
    if (rep) {
      v0 = vkp_row_ep_vec(rep, row + r, v0);
      if (!half) v1 = vkp_row_ep_vec(rep, row + r, v1);
    }
    *c0 = v0;
    if (!half) *c1 = v1;
  }
}

// The register tile: MR x NR accumulators (2*MR vectors) over kc >= 1
// steps; row k of the B panel is at pb + k * ldb (NR when packed). Writes
// (or, when `accumulate`, adds) the tile into c. The accumulators start as
// the first step's products: zeroed arrays, with a path where the loop does
// not run, made GCC clear them in memory with two memset calls per tile,
// which cost as much as the few steps of a shallow (pointwise) product.
// `rep` (NULL: none): the row epilogue to apply before storing, row `row`
// of the output being the tile's first.
static inline void vkp_ukernel(ptrdiff_t kc, const float *restrict pa,
                               const float *restrict pb, ptrdiff_t ldb,
                               float *restrict c, ptrdiff_t ldc, int accumulate,
                               const vkp_row_ep_t *rep, ptrdiff_t row) {
  vkp_vec_t acc0[VKP_MR], acc1[VKP_MR];
  // A packed B panel (ldb == NR) is prefetched VKP_PF_ROWS rows ahead, on
  // into the next panel: the first tile of a panel of a weight too large
  // for the caches (BERT's linear layers) otherwise waits on memory. Other
  // B rows are far apart (read in place): the prefetch then touches the
  // row being read, never memory the product does not need.
  const float *pf = pb + (ldb == VKP_NR ? VKP_PF_ROWS * VKP_NR : 0);
  {
    vkp_vec_t b0 = *(const vkp_uvec_t *)pb, b1 = *(const vkp_uvec_t *)(pb + VKP_VLEN);
    for (int r = 0; r < VKP_MR; ++r) {
      acc0[r] = pa[r] * b0;
      acc1[r] = pa[r] * b1;
    }
  }
  for (ptrdiff_t k = 1; k < kc; ++k) {
    vkp_vec_t b0 = *(const vkp_uvec_t *)(pb + k * ldb);
    vkp_vec_t b1 = *(const vkp_uvec_t *)(pb + k * ldb + VKP_VLEN);
    __builtin_prefetch(pf + k * ldb);
    __builtin_prefetch(pf + k * ldb + VKP_VLEN);
    __builtin_prefetch(pa + (k + VKP_PF_A_ROWS) * VKP_MR);
    for (int r = 0; r < VKP_MR; ++r) {
      float av = pa[k * VKP_MR + r];
      acc0[r] += av * b0;
      acc1[r] += av * b1;
    }
  }
  vkp__tile_store(acc0, acc1, VKP_MR, 0, VKP_MR, c, ldc, accumulate, rep, row);
}

// The same for a panel at most VKP_VLEN columns wide (one vector per row):
// the last columns of a narrow product, e.g. 16 Winograd tiles of a 7x7 map.
static inline void vkp_ukernel_half(ptrdiff_t kc, const float *restrict pa,
                                    const float *restrict pb, ptrdiff_t ldb,
                                    float *restrict c, ptrdiff_t ldc,
                                    int accumulate, const vkp_row_ep_t *rep,
                                    ptrdiff_t row) {
  vkp_vec_t acc[VKP_MR];
  {
    vkp_vec_t b0 = *(const vkp_uvec_t *)pb;
    for (int r = 0; r < VKP_MR; ++r) acc[r] = pa[r] * b0;
  }
  for (ptrdiff_t k = 1; k < kc; ++k) {
    vkp_vec_t b0 = *(const vkp_uvec_t *)(pb + k * ldb);
    for (int r = 0; r < VKP_MR; ++r) acc[r] += pa[k * VKP_MR + r] * b0;
  }
  vkp__tile_store(acc, acc, VKP_MR, 1, VKP_MR, c, ldc, accumulate, rep, row);
}

#if VKP_MR <= VKP_VLEN
// A full MR panel times at most `cols` (a constant once inlined, <=
// VKP_NARROW) columns of B: one vector of MR rows per column (the packed A
// step is MR contiguous floats), one broadcast of B per column and step;
// the first `nr` columns are computed. Costs `nr` multiply-adds per step
// where the one-vector tile costs MR: the last 1-8 columns of N = 49 (7x7
// maps: 32 + 16 + 1), 196 (14x14: 6 x 32 + 4) or 56 (32 + 16 + 8). With
// few columns the steps go round `chains` sets of accumulators: one column
// summed in one chain waited the multiply-add's latency at every step, and
// N = 49's last column then took a third of a full tile's time.
#define VKP_NARROW 8
static inline __attribute__((always_inline)) void vkp__ukernel_cols(
    ptrdiff_t kc, const float *restrict pa, const float *restrict pb, ptrdiff_t ldb,
    float *restrict c, ptrdiff_t ldc, ptrdiff_t nr, int accumulate, int cols, int chains) {
  vkp_vec_t acc[4][VKP_NARROW];
  VKP_UNROLL
  for (int u = 0; u < chains; ++u)
    VKP_UNROLL
    for (int j = 0; j < cols; ++j) acc[u][j] = (vkp_vec_t){0};
  // A whole vector from step k reads on into step k + 1 (ignored lanes);
  // the last step's MR floats are copied out, so nothing past A is read.
  ptrdiff_t k = 0;
  for (; k + chains < kc; k += chains)
    VKP_UNROLL
    for (int u = 0; u < chains; ++u) {
      vkp_vec_t av = *(const vkp_uvec_t *)(pa + (k + u) * VKP_MR);
      VKP_UNROLL
      for (int j = 0; j < cols; ++j)
        if (j < nr) acc[u][j] += av * pb[(k + u) * ldb + j];
    }
  for (; k + 1 < kc; ++k) {
    vkp_vec_t av = *(const vkp_uvec_t *)(pa + k * VKP_MR);
    VKP_UNROLL
    for (int j = 0; j < cols; ++j)
      if (j < nr) acc[0][j] += av * pb[k * ldb + j];
  }
  {
    float last[VKP_VLEN] = {0};
    memcpy(last, pa + (kc - 1) * VKP_MR, sizeof(float) * VKP_MR);
    vkp_vec_t av = *(const vkp_uvec_t *)last;
    VKP_UNROLL
    for (int j = 0; j < cols; ++j)
      if (j < nr) acc[0][j] += av * pb[(kc - 1) * ldb + j];
  }
  VKP_UNROLL
  for (int u = 1; u < chains; ++u)
    VKP_UNROLL
    for (int j = 0; j < cols; ++j) acc[0][j] += acc[u][j];
  VKP_UNROLL
  for (int j = 0; j < cols; ++j)
    if (j < nr)
      for (int r = 0; r < VKP_MR; ++r)
        c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.0f) + acc[0][j][r];
}

// The narrow tile for `nr` <= VKP_NARROW columns: 8 chains of sums in all.
static void vkp_ukernel_cols(ptrdiff_t kc, const float *restrict pa,
                             const float *restrict pb, ptrdiff_t ldb, float *restrict c,
                             ptrdiff_t ldc, ptrdiff_t nr, int accumulate) {
  if (nr <= 2) vkp__ukernel_cols(kc, pa, pb, ldb, c, ldc, nr, accumulate, 2, 4);
  else if (nr <= 4) vkp__ukernel_cols(kc, pa, pb, ldb, c, ldc, nr, accumulate, 4, 2);
  else vkp__ukernel_cols(kc, pa, pb, ldb, c, ldc, nr, accumulate, VKP_NARROW, 1);
}
#endif

// An edge tile of `rows` (<= VKP_MR, a constant once inlined) rows of an MR
// panel, one (`half`) or two vectors wide: the last rows of M = 16, 32, 64,
// 144, ... (14 + 2, 28 + 4, 56 + 8, 140 + 4), which the full tile would
// compute at MR rows' cost. Stores (or, when `accumulate`, adds) the first
// `mr` <= rows rows into c, through the row epilogue `rep` (NULL: none; the
// tile's first row is output row `row`).
static inline __attribute__((always_inline)) void vkp_ukernel_rows(
    ptrdiff_t kc, const float *restrict pa, const float *restrict pb, ptrdiff_t ldb,
    float *restrict c, ptrdiff_t ldc, int rows, int half, ptrdiff_t mr, int accumulate,
    const vkp_row_ep_t *rep, ptrdiff_t row) {
  vkp_vec_t acc0[VKP_MR], acc1[VKP_MR];
  for (int r = 0; r < rows; ++r) acc0[r] = acc1[r] = (vkp_vec_t){0};
  for (ptrdiff_t k = 0; k < kc; ++k) {
    vkp_vec_t b0 = *(const vkp_uvec_t *)(pb + k * ldb), b1 = b0;
    if (!half) b1 = *(const vkp_uvec_t *)(pb + k * ldb + VKP_VLEN);
    for (int r = 0; r < rows; ++r) {
      float av = pa[k * VKP_MR + r];
      acc0[r] += av * b0;
      if (!half) acc1[r] += av * b1;
    }
  }
  vkp__tile_store(acc0, acc1, rows, half, mr, c, ldc, accumulate, rep, row);
}

// The last `mr` < VKP_MR rows of a panel whose columns are whole vectors
// (`half`: one, else two), straight into C: through the scratch tile of
// vkp_ukernel_edge, the scalar copy out cost as much as the tile itself
// in a shallow product (MobileNetV2's pointwise layers, M = 24, 96, 320).
static void vkp_ukernel_edge_to(ptrdiff_t kc, const float *restrict pa,
                                const float *restrict pb, ptrdiff_t ldb, float *restrict c,
                                ptrdiff_t ldc, ptrdiff_t mr, int half, int accumulate,
                                const vkp_row_ep_t *rep, ptrdiff_t row) {
#if VKP_MR > 4
  if (mr <= 4) {
    if (half) vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, 4, 1, mr, accumulate, rep, row);
    else vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, 4, 0, mr, accumulate, rep, row);
    return;
  }
#endif
#if VKP_MR > 8
  if (mr <= 8) {
    if (half) vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, 8, 1, mr, accumulate, rep, row);
    else vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, 8, 0, mr, accumulate, rep, row);
    return;
  }
#endif
  if (half) vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, VKP_MR, 1, mr, accumulate, rep, row);
  else vkp_ukernel_rows(kc, pa, pb, ldb, c, ldc, VKP_MR, 0, mr, accumulate, rep, row);
}

// The edge tile for `mr` < VKP_MR rows: the smallest of 4 and 8 rows that
// holds them, else the full tile.
static void vkp_ukernel_edge(ptrdiff_t kc, const float *restrict pa,
                             const float *restrict pb, ptrdiff_t ldb, float *restrict c,
                             ptrdiff_t mr, ptrdiff_t nr);

// A whole constant A operand packed once (at stage load) in the layout
// vkp_gemm_cols reads: for each KC slab, every MR-row panel of that slab.
// Holds VKP_PAD_MR(M) * K floats.
VKP_FN void vkp_prepack_a(ptrdiff_t M, ptrdiff_t K, const float *a, ptrdiff_t rsa,
                          ptrdiff_t csa, float alpha, float *dst) {
  for (ptrdiff_t pc = 0; pc < K; pc += VKP_KC) {
    ptrdiff_t kc = K - pc < VKP_KC ? K - pc : VKP_KC;
    for (ptrdiff_t ic = 0; ic < M; ic += VKP_MC) {
      ptrdiff_t mc = M - ic < VKP_MC ? M - ic : VKP_MC;
      vkp_pack_a(mc, kc, a + ic * rsa + pc * csa, rsa, csa, alpha,
                 dst + pc * VKP_PAD_MR(M) + ic * kc);
    }
  }
}

// A whole constant B operand packed once (at stage load) in the layout
// vkp_gemm_cols reads: for each KC slab, every NR-column panel of that slab
// (panel of column j at dst + pc * npad + j * kc). Holds npad * K floats,
// npad = N rounded up to NR.
// KC slabs [s0, s1) of it (the GEMM's pool packs a B it shares that way).
static void vkp__prepack_b_slabs(ptrdiff_t K, ptrdiff_t N, const vkp_bsrc_t *src, float *dst,
                                 ptrdiff_t s0, ptrdiff_t s1) {
  const ptrdiff_t npad = (N + VKP_NR - 1) / VKP_NR * VKP_NR;
  for (ptrdiff_t pc = s0 * VKP_KC; pc < s1 * VKP_KC && pc < K; pc += VKP_KC) {
    ptrdiff_t kc = K - pc < VKP_KC ? K - pc : VKP_KC;
    vkp_pack_b(kc, N, pc, 0, src, dst + pc * npad);
  }
}

VKP_FN void vkp_prepack_b(ptrdiff_t K, ptrdiff_t N, const vkp_bsrc_t *src, float *dst) {
  vkp__prepack_b_slabs(K, N, src, dst, 0, (K + VKP_KC - 1) / VKP_KC);
}

// Rows with M this small skip packing: each row of C is a sum of scaled rows
// of B (streams B once; the case of a batch-1 fully connected layer).
VKP_FN void vkp_gemm_small_m(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha,
                             const float *a, ptrdiff_t rsa, ptrdiff_t csa,
                             const vkp_bsrc_t *b, float *c, ptrdiff_t ldc) {
  for (ptrdiff_t i = 0; i < M; ++i) {
    float *restrict ci = c + i * ldc;
    if (b->csb == 1) {
      for (ptrdiff_t j = 0; j < N; ++j) ci[j] = 0.0f;
      for (ptrdiff_t k = 0; k < K; ++k) {
        float av = alpha * a[i * rsa + k * csa];
        const float *restrict bk = b->b + k * b->rsb;
        for (ptrdiff_t j = 0; j < N; ++j) ci[j] += av * bk[j];
      }
    } else if (b->rsb == 1 && csa == 1) {
      // B transposed (a Linear layer's weight): dot products along k.
      const float *ai = a + i * rsa;
      for (ptrdiff_t j = 0; j < N; ++j) {
        const float *bj = b->b + j * b->csb;
        vkp_vec_t acc[4] = {{0}, {0}, {0}, {0}};
        // The vector part's length up front: with K a constant multiple of
        // the step, GCC warned of an overflow in a tail loop that ran on
        // from the vector loop's counter (-Waggressive-loop-optimizations).
        const ptrdiff_t kv = K / (4 * VKP_VLEN) * (4 * VKP_VLEN);
        for (ptrdiff_t k = 0; k < kv; k += 4 * VKP_VLEN)
          for (int u = 0; u < 4; ++u)
            acc[u] += *(const vkp_uvec_t *)(ai + k + u * VKP_VLEN) *
                      *(const vkp_uvec_t *)(bj + k + u * VKP_VLEN);
        vkp_vec_t s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        float sum = 0.0f;
        for (int l = 0; l < VKP_VLEN; ++l) sum += s[l];
        for (ptrdiff_t k = kv; k < K; ++k) sum += ai[k] * bj[k];
        ci[j] = alpha * sum;
      }
    } else {
      for (ptrdiff_t j = 0; j < N; ++j) {
        float sum = 0.0f;
        for (ptrdiff_t k = 0; k < K; ++k)
          sum += a[i * rsa + k * csa] * b->b[k * b->rsb + j * b->csb];
        ci[j] = alpha * sum;
      }
    }
  }
}

typedef struct vkp_small_m_job_t {
  ptrdiff_t M, K;
  float alpha;
  const float *a;
  ptrdiff_t rsa, csa;
  const vkp_bsrc_t *b;
  float *c;
  ptrdiff_t ldc;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t ep_row0, batch;
} vkp_small_m_job_t;

// Columns [n0, n1) of vkp_gemm_small_m's product and of the epilogue: each
// column is computed the same way in any range.
static void vkp_small_m_task(void *arg, ptrdiff_t n0, ptrdiff_t n1, int worker) {
  const vkp_small_m_job_t *j = arg;
  vkp_bsrc_t b = *j->b;
  (void)worker;
  b.b += n0 * b.csb;
  vkp_gemm_small_m(j->M, n1 - n0, j->K, j->alpha, j->a, j->rsa, j->csa, &b, j->c + n0,
                   j->ldc);
  if (j->ep) j->ep(j->c + n0, j->ldc, j->ep_row0, n0, j->M, n1 - n0, j->batch, j->ep_ctx);
}

// Columns [n0, n1) of the product. `scratch` holds VKP_GEMM_SCRATCH_FLOATS.
// `pa_rows`: the padded row count of the whole packed A (VKP_PAD_MR of its
// M), `pa_row0` the row of it where this call's M rows start (a split over
// rows; a multiple of VKP_MR).
VKP_FN void vkp_gemm_cols(ptrdiff_t M, ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t K,
                          float alpha, const float *a, ptrdiff_t rsa,
                          ptrdiff_t csa, const float *packed_a, ptrdiff_t pa_rows,
                          ptrdiff_t pa_row0, const vkp_bsrc_t *b, float *c, ptrdiff_t ldc,
                          vkp_epilogue_fn ep, const void *ep_ctx,
                          ptrdiff_t ep_row0, ptrdiff_t batch, float *scratch) {
  float *pa = vkp_align64(scratch);
  float *pb = pa + (ptrdiff_t)VKP_MC * VKP_KC;
  float *edge = pb + (ptrdiff_t)VKP_KC * VKP_NC;
  const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
  if (K == 0) {
    for (ptrdiff_t i = 0; i < M; ++i)
      for (ptrdiff_t j = n0; j < n1; ++j) c[i * ldc + j] = 0.0f;
    if (ep && M > 0 && n1 > n0)
      ep(c + n0, ldc, ep_row0, n0, M, n1 - n0, batch, ep_ctx);
    return;
  }
  for (ptrdiff_t jc = n0; jc < n1; jc += VKP_NC) {
    ptrdiff_t nc = n1 - jc < VKP_NC ? n1 - jc : VKP_NC;
    for (ptrdiff_t pc = 0; pc < K; pc += VKP_KC) {
      ptrdiff_t kc = K - pc < VKP_KC ? K - pc : VKP_KC;
      int last = pc + kc == K;
      // Direct B: full panels are read in place, a partial last one packed.
      ptrdiff_t nfull = b->direct ? nc / VKP_NR * VKP_NR : 0;
      if (nfull < nc && !b->packed)
        vkp_pack_b(kc, nc - nfull, pc, jc + nfull, b, pb + nfull * kc);
      for (ptrdiff_t ic = 0; ic < M; ic += VKP_MC) {
        ptrdiff_t mc = M - ic < VKP_MC ? M - ic : VKP_MC;
        const float *pat0 = pa;
        if (packed_a) pat0 = packed_a + pc * pa_rows + (pa_row0 + ic) * kc;
        else vkp_pack_a(mc, kc, a + ic * rsa + pc * csa, rsa, csa, alpha, pa);
        for (ptrdiff_t jr = 0; jr < nc; jr += VKP_NR) {
          ptrdiff_t nr = nc - jr < VKP_NR ? nc - jr : VKP_NR;
          for (ptrdiff_t ir = 0; ir < mc; ir += VKP_MR) {
            ptrdiff_t mr = mc - ir < VKP_MR ? mc - ir : VKP_MR;
            float *ct = c + (ic + ir) * ldc + jc + jr;
            const float *pat = pat0 + ir * kc, *pbt = pb + jr * kc;
            ptrdiff_t ldb = VKP_NR;
            if (b->packed) {
              pbt = b->packed + pc * b->npad + (jc + jr) * kc;
            } else if (jr < nfull) {
              pbt = b->b + pc * b->rsb + jc + jr;
              ldb = b->rsb;
            }
            // The row epilogue goes into the full tiles' stores.
            const ptrdiff_t row = ep_row0 + ic + ir;
            int fused = 0;
            if (mr == VKP_MR && nr == VKP_NR) {
              if (rep && last) {
                vkp_ukernel(kc, pat, pbt, ldb, ct, ldc, pc > 0, rep, row);
                fused = 1;
              } else {
                vkp_ukernel(kc, pat, pbt, ldb, ct, ldc, pc > 0, NULL, 0);
              }
            } else if (mr == VKP_MR && nr == VKP_VLEN) {
              fused = rep && last;
              vkp_ukernel_half(kc, pat, pbt, ldb, ct, ldc, pc > 0, fused ? rep : NULL, row);
#if VKP_MR <= VKP_VLEN
            } else if (mr == VKP_MR && nr <= VKP_NARROW) {
              vkp_ukernel_cols(kc, pat, pbt, ldb, ct, ldc, nr, pc > 0);
            } else if (mr == VKP_MR && nr > VKP_VLEN && nr - VKP_VLEN <= VKP_NARROW) {
              vkp_ukernel_half(kc, pat, pbt, ldb, ct, ldc, pc > 0, NULL, 0);
              vkp_ukernel_cols(kc, pat, pbt + VKP_VLEN, ldb, ct + VKP_VLEN, ldc,
                               nr - VKP_VLEN, pc > 0);
#endif
            } else if (nr == VKP_NR || nr == VKP_VLEN) {
              fused = rep && last;
              vkp_ukernel_edge_to(kc, pat, pbt, ldb, ct, ldc, mr, nr == VKP_VLEN, pc > 0,
                                  fused ? rep : NULL, row);
            } else {
              vkp_ukernel_edge(kc, pat, pbt, ldb, edge, mr, nr);
              for (ptrdiff_t r = 0; r < mr; ++r)
                for (ptrdiff_t q = 0; q < nr; ++q)
                  ct[r * ldc + q] = (pc > 0 ? ct[r * ldc + q] : 0.0f) +
                                    edge[r * VKP_NR + q];
            }
            if (last && ep && !fused) ep(ct, ldc, row, jc + jr, mr, nr, batch, ep_ctx);
          }
        }
      }
    }
  }
}

static void vkp_ukernel_edge(ptrdiff_t kc, const float *restrict pa,
                             const float *restrict pb, ptrdiff_t ldb, float *restrict c,
                             ptrdiff_t mr, ptrdiff_t nr) {
  int half = nr <= VKP_VLEN;
  (void)mr;  // with MR <= 4 (SSE) every edge takes the full tile
#if VKP_MR > 4
  if (mr <= 4) {
    if (half) vkp_ukernel_rows(kc, pa, pb, ldb, c, VKP_NR, 4, 1, 4, 0, NULL, 0);
    else vkp_ukernel_rows(kc, pa, pb, ldb, c, VKP_NR, 4, 0, 4, 0, NULL, 0);
    return;
  }
#endif
#if VKP_MR > 8
  if (mr <= 8) {
    if (half) vkp_ukernel_rows(kc, pa, pb, ldb, c, VKP_NR, 8, 1, 8, 0, NULL, 0);
    else vkp_ukernel_rows(kc, pa, pb, ldb, c, VKP_NR, 8, 0, 8, 0, NULL, 0);
    return;
  }
#endif
  if (half) vkp_ukernel_half(kc, pa, pb, ldb, c, VKP_NR, 0, NULL, 0);
  else vkp_ukernel(kc, pa, pb, ldb, c, VKP_NR, 0, NULL, 0);
}

typedef struct vkp_gemm_job_t {
  ptrdiff_t M, N, K, panels, parts, row_parts;
  float alpha;
  const float *a;
  ptrdiff_t rsa, csa;
  const float *packed_a;
  const vkp_bsrc_t *b;
  float *c;
  ptrdiff_t ldc;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t ep_row0, batch;
  float *scratch;  // VKP_GEMM_SCRATCH_FLOATS per worker
} vkp_gemm_job_t;

// Task t: column chunk t % parts of row chunk t / parts. Row chunks start
// on MR-row panels, so every output tile is the one an unsplit run computes
// (the same kernel, the same sums): results do not depend on the split.
static void vkp_gemm_task(void *arg, ptrdiff_t t, int worker) {
  const vkp_gemm_job_t *j = arg;
  ptrdiff_t tc = t % j->parts, tr = t / j->parts;
  ptrdiff_t p0 = j->panels * tc / j->parts, p1 = j->panels * (tc + 1) / j->parts;
  ptrdiff_t n1 = p1 * VKP_NR < j->N ? p1 * VKP_NR : j->N;
  ptrdiff_t row_panels = (j->M + VKP_MR - 1) / VKP_MR;
  ptrdiff_t m0 = row_panels * tr / j->row_parts * VKP_MR;
  ptrdiff_t m1 = row_panels * (tr + 1) / j->row_parts * VKP_MR;
  if (m1 > j->M) m1 = j->M;
  if (m1 <= m0) return;
  const float *a = j->a ? j->a + m0 * j->rsa : NULL;  // NULL when A is packed
  vkp_gemm_cols(m1 - m0, p0 * VKP_NR, n1, j->K, j->alpha, a, j->rsa, j->csa, j->packed_a,
                VKP_PAD_MR(j->M), m0, j->b, j->c + m0 * j->ldc, j->ldc, j->ep, j->ep_ctx,
                j->ep_row0 + m0, j->batch,
                j->scratch + (ptrdiff_t)worker * VKP_GEMM_SCRATCH_FLOATS);
}

typedef struct vkp_pack_job_t {
  const vkp_bsrc_t *b;
  ptrdiff_t K, N;
  float *dst;  // vkp_prepack_b's layout
} vkp_pack_job_t;

static void vkp_pack_b_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_pack_job_t *j = arg;
  (void)worker;
  vkp__prepack_b_slabs(j->K, j->N, j->b, j->dst, lo, hi);
}

// The GEMM entry. `scratch` holds `threads` * VKP_GEMM_SCRATCH_FLOATS floats.
// `packed_a` (may be NULL) is A already packed by vkp_prepack_a, alpha
// included.
VKP_FN void vkp_gemm(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K, float alpha,
                     const float *a, ptrdiff_t rsa, ptrdiff_t csa,
                     const float *packed_a, const vkp_bsrc_t *b, float *c, ptrdiff_t ldc,
                     vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t ep_row0,
                     ptrdiff_t batch, float *scratch, int threads) {
  if (M <= 0 || N <= 0) return;
  if (M < VKP_MR / 2 && !b->conv && K > 0) {
    // Memory-bound (B streamed once): columns split across the pool.
    vkp_small_m_job_t j = {M, K, alpha, a, rsa, csa, b, c, ldc, ep, ep_ctx, ep_row0, batch};
    vkp_parallel_range(N, VKP_GRAIN(M * K), vkp_small_m_task, &j);
    return;
  }
  // Split the output into cols x rows chunks: columns in NR-aligned chunks,
  // rows in chunks of at least 4 MR-row panels. Each chunk reads all of A's
  // rows in its row chunk and all of B's columns in its column chunk (and
  // packs its own copy of those B panels), so a split moves about
  // K * (cols * M + rows * N) floats: columns when B is the larger operand
  // (activations times weights), rows when A is (a conv's weights against a
  // 7x7 or 14x14 map: split by columns, every thread would stream all the
  // weights). As many threads as the chunk limits allow, then the least
  // traffic, then fewer row chunks.
  ptrdiff_t panels = (N + VKP_NR - 1) / VKP_NR;
  ptrdiff_t row_limit = VKP_MAXZ((M + VKP_MR - 1) / VKP_MR / 4, (ptrdiff_t)1);
  ptrdiff_t nt = threads < vkp_workers() ? threads : vkp_workers();
  ptrdiff_t cols = 1, rows = 1;
  for (ptrdiff_t rc = 1; rc <= nt && rc <= row_limit; ++rc) {
    ptrdiff_t cc = nt / rc < panels ? nt / rc : panels;
    double cost = (double)cc * (double)M + (double)rc * (double)N;
    double best = (double)cols * (double)M + (double)rows * (double)N;
    if (cc * rc > cols * rows || (cc * rc == cols * rows && cost < best)) cols = cc, rows = rc;
  }
  if (cols * rows > 1 && (double)M * N * K > 1e6) {
    // Split by rows, every row chunk would pack the same B panels (the
    // im2col of a convolution on a 7x7 or 14x14 map: 15-20% of the layer on
    // one thread, not divided by the threads). The pool packs them once,
    // slabs split across it, into worker 0's B area, and the chunks read
    // them as a prepacked B.
    vkp_bsrc_t shared;
    const ptrdiff_t npad = panels * VKP_NR;
    if (rows > 1 && !b->packed && !b->direct && K * npad <= (ptrdiff_t)VKP_KC * VKP_NC) {
      vkp_pack_job_t pj = {b, K, N, vkp_align64(scratch) + (ptrdiff_t)VKP_MC * VKP_KC};
      vkp_parallel_range((K + VKP_KC - 1) / VKP_KC, 1, vkp_pack_b_task, &pj);
      shared = (vkp_bsrc_t){.packed = pj.dst, .npad = npad};
      b = &shared;
    }
    vkp_gemm_job_t j = {M, N, K, panels, cols, rows, alpha, a, rsa, csa, packed_a, b, c, ldc,
                        ep, ep_ctx, ep_row0, batch, scratch};
    vkp_parallel(cols * rows, vkp_gemm_task, &j);
    return;
  }

  vkp_gemm_cols(M, 0, N, K, alpha, a, rsa, csa, packed_a, VKP_PAD_MR(M), 0, b, c, ldc,
                ep, ep_ctx, ep_row0, batch, scratch);
}

// ---------------------------------------------------------------------------
// Shallow convolutions (the first layer of a CNN: 3 input channels, a 3x3
// or 7x7 window at stride 2) with no im2col. The depth K = C * KH * KW fits
// one KC slab, so each output tile is one pass over the prepacked weights:
// the register tile of vkp_ukernel (MR output channels x NR output pixels
// of one output row), whose B vectors come straight from the input rows
// (at stride 2, the even lanes of two loads), at a fixed offset per depth
// step. Packing those panels cost a quarter of such a layer's time: for K
// = 27 every panel row is a handful of short runs between two padding
// edges. Where the window reaches into the padding, the input is first
// copied once into a zero-padded plane per channel (VKP_CONV_DIRECT_FLOATS
// of scratch).
#define VKP_CONV_DIRECT_FLOATS(C, KH, KW, SH, SW, DH, DW, OH, OW)                        \
  ((ptrdiff_t)(C) * (((ptrdiff_t)(OH) - 1) * (SH) + ((ptrdiff_t)(KH) - 1) * (DH) + 1) *   \
       (((ptrdiff_t)(OW) - 1) * (SW) + ((ptrdiff_t)(KW) - 1) * (DW) + 1) +                \
   32)

// One tile: `rows` (<= VKP_MR, a constant once inlined) output channels of
// the panel `pa`, NR output pixels from `xb` (the window's first tap of the
// first pixel) at column stride `sw` (1 or 2); depth step k reads the
// input at xb + off[k]. Stores the first `mr` rows, through `rep`.
static inline __attribute__((always_inline)) void vkp__conv_direct_tile(
    ptrdiff_t K, const float *restrict pa, const float *xb, const ptrdiff_t *off, int sw,
    float *restrict c, ptrdiff_t ldc, int rows, int half, ptrdiff_t mr,
    const vkp_row_ep_t *rep, ptrdiff_t row) {
  vkp_vec_t acc0[VKP_MR], acc1[VKP_MR];
  {  // the first step's products start the accumulators (as vkp_ukernel)
    vkp_vec_t b0 = vkp__pack_vec(xb + off[0], sw), b1 = b0;
    if (!half) b1 = vkp__pack_vec(xb + off[0] + sw * VKP_VLEN, sw);
    for (int r = 0; r < rows; ++r) {
      acc0[r] = pa[r] * b0;
      acc1[r] = pa[r] * b1;
    }
  }
  for (ptrdiff_t k = 1; k < K; ++k) {
    const float *p = xb + off[k];
    vkp_vec_t b0 = vkp__pack_vec(p, sw), b1 = b0;
    if (!half) b1 = vkp__pack_vec(p + sw * VKP_VLEN, sw);
    for (int r = 0; r < rows; ++r) {
      float av = pa[k * VKP_MR + r];
      acc0[r] += av * b0;
      if (!half) acc1[r] += av * b1;
    }
  }
  vkp__tile_store(acc0, acc1, rows, half, mr, c, ldc, 0, rep, row);
}

// The tile for `mr` rows (the smallest of 4, 8 and MR that holds them),
// `half`: one vector of pixels, else two.
static VKP_ONE_COPY void vkp__conv_direct_panel(ptrdiff_t K, const float *pa, const float *xb,
                                                const ptrdiff_t *off, int sw, int half, float *c,
                                                ptrdiff_t ldc, ptrdiff_t mr,
                                                const vkp_row_ep_t *rep, ptrdiff_t row) {
#define VKP__CD(rows)                                                                        \
  do {                                                                                       \
    if (sw == 1 && half) vkp__conv_direct_tile(K, pa, xb, off, 1, c, ldc, rows, 1, mr, rep, row); \
    else if (sw == 1) vkp__conv_direct_tile(K, pa, xb, off, 1, c, ldc, rows, 0, mr, rep, row);    \
    else if (half) vkp__conv_direct_tile(K, pa, xb, off, 2, c, ldc, rows, 1, mr, rep, row);       \
    else vkp__conv_direct_tile(K, pa, xb, off, 2, c, ldc, rows, 0, mr, rep, row);                 \
  } while (0)
#if VKP_MR > 4
  if (mr <= 4) {
    VKP__CD(4);
    return;
  }
#endif
#if VKP_MR > 8
  if (mr <= 8) {
    VKP__CD(8);
    return;
  }
#endif
  VKP__CD(VKP_MR);
#undef VKP__CD
}

typedef struct vkp_conv_direct_job_t {
  const float *src;  // the input planes, Hs x Ws each (padded or x itself)
  const float *packed_a;
  float *y;
  ptrdiff_t M, K, Hs, Ws, SH, SW, OH, OW;
  const ptrdiff_t *off;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t ep_row0, batch;
  // The padded copy: rows [lo, hi) of every channel are copied by the task
  // that takes them.
  const float *x;
  ptrdiff_t C, H, W, PT, PL;
} vkp_conv_direct_job_t;

static void vkp_conv_pad_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_conv_direct_job_t *j = arg;
  (void)worker;
  for (ptrdiff_t r = lo; r < hi; ++r) {  // r: channel * Hs + padded row
    ptrdiff_t ch = r / j->Hs, ih = r % j->Hs - j->PT;
    float *dst = (float *)j->src + r * j->Ws;
    if (ih < 0 || ih >= j->H) {
      memset(dst, 0, sizeof(float) * (size_t)j->Ws);
      continue;
    }
    ptrdiff_t n = j->W < j->Ws - j->PL ? j->W : j->Ws - j->PL;
    memset(dst, 0, sizeof(float) * (size_t)j->PL);
    memcpy(dst + j->PL, j->x + (ch * j->H + ih) * j->W, sizeof(float) * (size_t)n);
    if (j->PL + n < j->Ws)
      memset(dst + j->PL + n, 0, sizeof(float) * (size_t)(j->Ws - j->PL - n));
  }
}

// Output rows [oh0, oh1) of every channel into y: channel m's row oh at
// y + m * plane + (oh - rbase) * OW, through the row epilogue `rep`.
static void vkp__conv_direct_rows(const vkp_conv_direct_job_t *j, ptrdiff_t oh0, ptrdiff_t oh1,
                                  float *y, ptrdiff_t plane, ptrdiff_t rbase,
                                  const vkp_row_ep_t *rep) {
  for (ptrdiff_t oh = oh0; oh < oh1; ++oh) {
    for (ptrdiff_t ow0 = 0; ow0 < j->OW;) {
      // Tiles of NR pixels; the last one (NR or, for at most a vector
      // left, one vector wide) ends at the row's end, overlapping the one
      // before (the same values written twice).
      int half = j->OW - ow0 <= VKP_VLEN;
      ptrdiff_t width = half ? VKP_VLEN : VKP_NR;
      ptrdiff_t ow = ow0 + width <= j->OW ? ow0 : j->OW - width;
      const float *xb = j->src + oh * j->SH * j->Ws + ow * j->SW;
      for (ptrdiff_t m = 0; m < j->M; m += VKP_MR) {
        ptrdiff_t mr = j->M - m < VKP_MR ? j->M - m : VKP_MR;
        vkp__conv_direct_panel(j->K, j->packed_a + m * j->K, xb, j->off, (int)j->SW, half,
                               y + m * plane + (oh - rbase) * j->OW + ow, plane, mr, rep,
                               j->ep_row0 + m);
      }
      ow0 = ow + width;
    }
  }
}

static void vkp_conv_direct_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_conv_direct_job_t *j = arg;
  (void)worker;
  const vkp_row_ep_t *rep = vkp_row_ep_of(j->ep, j->ep_ctx);
  const ptrdiff_t plane = j->OH * j->OW;
  for (ptrdiff_t oh = lo; oh < hi; ++oh) {
    vkp__conv_direct_rows(j, oh, oh + 1, j->y, plane, 0, rep);
    if (j->ep && !rep)
      j->ep(j->y + oh * j->OW, plane, j->ep_row0, oh * j->OW, j->M, j->OW, j->batch, j->ep_ctx);
  }
}

// The job of vkp_conv_direct, with the zero-padded copy of the input made
// (at scratch) where the windows reach the padding; `off` (K entries) gets
// each depth step's offset in the planes the windows read.
static vkp_conv_direct_job_t vkp__conv_direct_setup(
    const float *x, const float *packed_a, float *y, ptrdiff_t C, ptrdiff_t H, ptrdiff_t W,
    ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t PT,
    ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW, vkp_epilogue_fn ep,
    const void *ep_ctx, ptrdiff_t ep_row0, ptrdiff_t batch, float *scratch, ptrdiff_t *off) {
  // The planes the windows read: x itself where they stay inside it.
  const ptrdiff_t Hs = (OH - 1) * SH + (KH - 1) * DH + 1, Ws = (OW - 1) * SW + (KW - 1) * DW + 1;
  const int padded = PT > 0 || PL > 0 || Hs > H || Ws > W;
  vkp_conv_direct_job_t j = {.src = padded ? vkp_align64(scratch) : x,
                             .packed_a = packed_a, .y = y, .M = M, .K = C * KH * KW,
                             .Hs = padded ? Hs : H, .Ws = padded ? Ws : W, .SH = SH, .SW = SW,
                             .OH = OH, .OW = OW, .ep = ep, .ep_ctx = ep_ctx,
                             .ep_row0 = ep_row0, .batch = batch, .x = x, .C = C, .H = H,
                             .W = W, .PT = PT, .PL = PL};
  for (ptrdiff_t ch = 0, k = 0; ch < C; ++ch)
    for (ptrdiff_t kh = 0; kh < KH; ++kh)
      for (ptrdiff_t kw = 0; kw < KW; ++kw, ++k)
        off[k] = (ch * j.Hs + kh * DH) * j.Ws + kw * DW;
  j.off = off;
  if (padded) vkp_parallel_range(C * Hs, VKP_GRAIN(Ws), vkp_conv_pad_task, &j);
  return j;
}

// The shallow convolution (see above) of one image; `packed_a` holds the
// weights from vkp_prepack_a. Falls back to vkp_gemm (im2col panels) where
// the tile does not apply: K over VKP_KC, output rows narrower than NR,
// column strides other than 1 and 2. `scratch` holds the GEMM's scratch
// and at least VKP_CONV_DIRECT_FLOATS.
VKP_FN void vkp_conv_direct(const float *x, const float *packed_a, float *y, ptrdiff_t C,
                            ptrdiff_t H, ptrdiff_t W, ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW,
                            ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL,
                            ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW,
                            vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t ep_row0,
                            ptrdiff_t batch, float *scratch, int threads) {
  const ptrdiff_t K = C * KH * KW;
  if (K > VKP_KC || OW < VKP_NR || (SW != 1 && SW != 2)) {
    const vkp_bsrc_t src = {.b = x, .conv = 1, .C = C, .H = H, .W = W, .KH = KH, .KW = KW,
                            .SH = SH, .SW = SW, .PT = PT, .PL = PL, .DH = DH, .DW = DW,
                            .OH = OH, .OW = OW};
    vkp_gemm(M, OH * OW, K, 1.0f, NULL, K, 1, packed_a, &src, y, OH * OW, ep, ep_ctx, ep_row0,
             batch, scratch, threads);
    return;
  }
  ptrdiff_t off[VKP_KC];
  vkp_conv_direct_job_t j = vkp__conv_direct_setup(x, packed_a, y, C, H, W, M, KH, KW, SH, SW,
                                                   PT, PL, DH, DW, OH, OW, ep, ep_ctx, ep_row0,
                                                   batch, scratch, off);
  vkp_parallel_range(OH, VKP_GRAIN(OW * M * K), vkp_conv_direct_task, &j);
}

// ---------------------------------------------------------------------------
// Winograd F(2x2, 3x3): a 3x3, stride-1, undilated, ungrouped convolution as
// 16 GEMMs over 2x2 output tiles (2.25x fewer multiplications than direct).
//   U = G g G^T per (output channel, input channel): packed once at load.
//   V = B^T d B per (input channel, tile): d is the tile's 4x4 input patch.
//   Y = A^T M A per (output channel, tile), M[xi] = U[xi] * V[xi].
// The tiles are processed in blocks of whole tile rows so that V and M stay
// in L2; the emitter picks the rows per block (`rpb`).

// Tile rows per block: about 16 * (C + M) * 4 bytes per tile, so that a
// block of at least 32 tiles takes about 1 MiB. The generated source
// evaluates VKP_WINO_SCRATCH_FLOATS, the floats of scratch one call needs
// besides the GEMM's own, so the emitter never repeats these formulas.
#define VKP_WINO_TW(OW) (((ptrdiff_t)(OW) + 1) / 2)
#define VKP_WINO_TH(OH) (((ptrdiff_t)(OH) + 1) / 2)
#define VKP_WINO_TILES(C, M) VKP_MAXZ((ptrdiff_t)16384 / ((C) + (M)), (ptrdiff_t)32)
#define VKP_WINO_RPB(C, M, OH, OW)                                            \
  VKP_MAXZ((ptrdiff_t)1, VKP_WINO_TILES(C, M) / VKP_WINO_TW(OW) < VKP_WINO_TH(OH) \
                             ? VKP_WINO_TILES(C, M) / VKP_WINO_TW(OW)          \
                             : VKP_WINO_TH(OH))
#define VKP_WINO_LDV(OW, RPB) ((((RPB) * VKP_WINO_TW(OW) + 31) / 32 * 32) + 16)
// Even/odd plane width: the last tile row's vectors read up to 32 + 16
// columns past its end (see vkp_conv_winograd).
#define VKP_WINO_TWE(OW) ((VKP_WINO_TW(OW) + 1 + 32 + 16 + 15) / 16 * 16)
// The 16 planes of V (and of M) are VKP_WINO_PLANE apart: were they a whole
// number of 4 KiB pages apart (C * ldv often is), the stores of one tile
// vector to all 16 would fall in one L1 set; a cache line more per plane
// spreads them.
#define VKP_WINO_PLANE(C, LDV) ((ptrdiff_t)(C) * (LDV) + 16)
#define VKP_WINO_SCRATCH_RPB(C, M, OW, RPB)                                  \
  ((ptrdiff_t)16 * (VKP_WINO_PLANE(C, VKP_WINO_LDV(OW, RPB)) +              \
                    VKP_WINO_PLANE(M, VKP_WINO_LDV(OW, RPB))) +             \
   (ptrdiff_t)2 * (2 * (RPB) + 2) * VKP_WINO_TWE(OW) +   \
   (ptrdiff_t)2 * (2 * VKP_WINO_TW(OW) + 32) + 64)
#define VKP_WINO_SCRATCH_FLOATS(C, M, OH, OW) \
  VKP_WINO_SCRATCH_RPB(C, M, OW, VKP_WINO_RPB(C, M, OH, OW))

// U[xi] (M x C) for each of the 16 transform positions, each in the layout
// vkp_prepack_a writes (so vkp_gemm reads it as a packed A). Holds
// 16 * VKP_PAD_MR(M) * C floats.
VKP_FN void vkp_winograd_prepack(ptrdiff_t M, ptrdiff_t C, const float *w,
                                 float *dst) {
  ptrdiff_t pm = VKP_PAD_MR(M);
  memset(dst, 0, sizeof(float) * (size_t)(16 * pm * C));
  for (ptrdiff_t m = 0; m < M; ++m)
    for (ptrdiff_t c = 0; c < C; ++c) {
      const float *g = w + (m * C + c) * 9;
      float gg[4][3], u[4][4];
      for (int j = 0; j < 3; ++j) {  // G g: rows of G times the columns of g
        gg[0][j] = g[j];
        gg[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        gg[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        gg[3][j] = g[6 + j];
      }
      for (int i = 0; i < 4; ++i) {  // (G g) G^T
        u[i][0] = gg[i][0];
        u[i][1] = 0.5f * (gg[i][0] + gg[i][1] + gg[i][2]);
        u[i][2] = 0.5f * (gg[i][0] - gg[i][1] + gg[i][2]);
        u[i][3] = gg[i][2];
      }
      // Where (m, c) lands in vkp_prepack_a's layout: KC slab, MR panel,
      // depth step, row in panel.
      ptrdiff_t pc = c / VKP_KC * VKP_KC;
      ptrdiff_t kc = C - pc < VKP_KC ? C - pc : VKP_KC, r = m % VKP_MR;
      ptrdiff_t at = pc * pm + (m - r) * kc + (c - pc) * VKP_MR + r;
      for (int xi = 0; xi < 16; ++xi) dst[xi * pm * C + at] = u[xi / 4][xi % 4];
    }
}

// Tile rows [r0, r1) of vkp_conv_winograd in blocks of at most `rpb` rows
// (as even as they divide), in this thread's scratch; the GEMMs get `threads`.
static void vkp__winograd_blocks(const float *x, float *y, const float *u,
                                 ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t M,
                                 ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t OH, ptrdiff_t OW,
                                 vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch,
                                 ptrdiff_t rpb, ptrdiff_t r0, ptrdiff_t r1,
                                 float *wscratch, float *gemm_scratch, int threads) {
  _Static_assert(VKP_VLEN <= 16, "Winograd padding assumes vectors of <= 16");
  const ptrdiff_t TH = VKP_WINO_TH(OH), TW = VKP_WINO_TW(OW);
  const ptrdiff_t ldv = VKP_WINO_LDV(OW, rpb), twe = VKP_WINO_TWE(OW);
  const ptrdiff_t pm = VKP_PAD_MR(M);
  float *base = vkp_align64(wscratch);
  const ptrdiff_t vst = VKP_WINO_PLANE(C, ldv), mst = VKP_WINO_PLANE(M, ldv);
  float *v = base;                        // [16][C][ldv], planes vst apart
  float *mo = v + 16 * vst;               // [16][M][ldv], planes mst apart
  float *ev = mo + 16 * mst;              // [2 * rpb + 2][twe]: even columns
  float *od = ev + (2 * rpb + 2) * twe;   // odd columns
  float *ob = od + (2 * rpb + 2) * twe;   // two output rows, 2 * TW + 32 each
  const ptrdiff_t obw = 2 * TW + 32;
  // Columns of the even/odd planes: [lo, hi) hold input on both, [zero,
  // twe) only padding. The planes are zeroed once; later rows write [0, zero).
  ptrdiff_t lo = (PL + 1) / 2, hi = (W + PL) / 2, zero = (W + PL + 1) / 2;
  if (lo > twe) lo = twe;
  if (hi > twe) hi = twe;
  if (hi < lo) hi = lo;
  if (zero > twe) zero = twe;
  if (zero < hi) zero = hi;
  memset(ev, 0, sizeof(float) * (size_t)(2 * (2 * rpb + 2) * twe));
  (void)TH;
  // Tile rows [r0, r1) in blocks of at most rpb rows, as even as can be.
  const ptrdiff_t nb = (r1 - r0 + rpb - 1) / rpb;
  for (ptrdiff_t blk = 0; blk < nb; ++blk) {
    const ptrdiff_t th0 = r0 + (r1 - r0) * blk / nb;
    const ptrdiff_t nr = r0 + (r1 - r0) * (blk + 1) / nb - th0, nt = nr * TW;
    const ptrdiff_t np = (nt + VKP_VLEN - 1) / VKP_VLEN * VKP_VLEN;
    // Input transform: split each padded input row into even and odd
    // columns, so the 4 columns of tile t are ev[t], od[t], ev[t+1], od[t+1].
    for (ptrdiff_t c = 0; c < C; ++c) {
      const float *xc = x + c * H * W;
      for (ptrdiff_t i = 0; i < 2 * nr + 2; ++i) {
        ptrdiff_t ih = 2 * th0 + i - PT;
        float *restrict e = ev + i * twe, *restrict o = od + i * twe;
        if (ih < 0 || ih >= H) {  // the columns from `zero` on stay zero
          memset(e, 0, sizeof(float) * (size_t)zero);
          memset(o, 0, sizeof(float) * (size_t)zero);
          continue;
        }
        // Padded column 2t is input column 2t - PL. Tiles [lo, hi) have
        // both columns inside the row: a branch-free deinterleave.
        const float *row = xc + ih * W, *src = row - PL;
        for (ptrdiff_t t = 0; t < zero; ++t) {
          if (t == lo) t = hi;  // the middle part follows
          if (t >= zero) break;
          ptrdiff_t iw = 2 * t - PL;
          e[t] = iw >= 0 && iw < W ? row[iw] : 0.0f;
          o[t] = iw + 1 >= 0 && iw + 1 < W ? row[iw + 1] : 0.0f;
        }
        for (ptrdiff_t t = lo; t < hi; ++t) {
          e[t] = src[2 * t];
          o[t] = src[2 * t + 1];
        }
      }
      // The last tile row runs on to column np, so that every column the
      // GEMM reads is written (with transforms of zero padding).
      for (ptrdiff_t r = 0; r < nr; ++r)
        for (ptrdiff_t tw = 0; tw < (r + 1 < nr ? TW : np - r * TW); tw += VKP_VLEN) {
          vkp_vec_t d[4][4], t[4][4];
          for (int i = 0; i < 4; ++i) {
            const float *e = ev + (2 * r + i) * twe + tw;
            const float *o = od + (2 * r + i) * twe + tw;
            d[i][0] = *(const vkp_uvec_t *)e;
            d[i][1] = *(const vkp_uvec_t *)o;
            d[i][2] = *(const vkp_uvec_t *)(e + 1);
            d[i][3] = *(const vkp_uvec_t *)(o + 1);
          }
          for (int j = 0; j < 4; ++j) {  // B^T d
            t[0][j] = d[0][j] - d[2][j];
            t[1][j] = d[1][j] + d[2][j];
            t[2][j] = d[2][j] - d[1][j];
            t[3][j] = d[1][j] - d[3][j];
          }
          float *vt = v + c * ldv + r * TW + tw;
          for (int i = 0; i < 4; ++i) {  // (B^T d) B
            *(vkp_uvec_t *)(vt + (4 * i + 0) * vst) = t[i][0] - t[i][2];
            *(vkp_uvec_t *)(vt + (4 * i + 1) * vst) = t[i][1] + t[i][2];
            *(vkp_uvec_t *)(vt + (4 * i + 2) * vst) = t[i][2] - t[i][1];
            *(vkp_uvec_t *)(vt + (4 * i + 3) * vst) = t[i][1] - t[i][3];
          }
        }
    }
    for (int xi = 0; xi < 16; ++xi) {
      const vkp_bsrc_t src = {.b = v + xi * vst, .rsb = ldv, .csb = 1,
                              .direct = 1};
      vkp_gemm(M, np, C, 1.0f, NULL, 0, 0, u + xi * pm * C, &src,
               mo + xi * mst, ldv, NULL, NULL, 0, batch, gemm_scratch,
               threads);
    }
    // Output transform, two output rows per tile row; a row epilogue is
    // applied to the transformed vectors.
    const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
    const ptrdiff_t oh0 = 2 * th0, oh1 = 2 * (th0 + nr) < OH ? 2 * (th0 + nr) : OH;
    for (ptrdiff_t m = 0; m < M; ++m) {
      float *ym = y + m * OH * OW;
      for (ptrdiff_t r = 0; r < nr; ++r) {
        for (ptrdiff_t tw = 0; tw < TW; tw += VKP_VLEN) {
          const float *mt = mo + m * ldv + r * TW + tw;
          vkp_vec_t s[2][4];
          for (int j = 0; j < 4; ++j) {  // A^T M
            vkp_vec_t m0 = *(const vkp_uvec_t *)(mt + (0 + j) * mst);
            vkp_vec_t m1 = *(const vkp_uvec_t *)(mt + (4 + j) * mst);
            vkp_vec_t m2 = *(const vkp_uvec_t *)(mt + (8 + j) * mst);
            vkp_vec_t m3 = *(const vkp_uvec_t *)(mt + (12 + j) * mst);
            s[0][j] = m0 + m1 + m2;
            s[1][j] = m1 - m2 - m3;
          }
          for (int i = 0; i < 2; ++i) {  // (A^T M) A, interleaved into a row
            vkp_vec_t y0 = s[i][0] + s[i][1] + s[i][2];
            vkp_vec_t y1 = s[i][1] - s[i][2] - s[i][3];
            if (rep) {
              y0 = vkp_row_ep_vec(rep, m, y0);
              y1 = vkp_row_ep_vec(rep, m, y1);
            }
            float *restrict o = ob + i * obw + 2 * tw;
            for (int l = 0; l < VKP_VLEN; ++l) {
              o[2 * l] = y0[l];
              o[2 * l + 1] = y1[l];
            }
          }
        }
        ptrdiff_t oh = 2 * (th0 + r);
        memcpy(ym + oh * OW, ob, sizeof(float) * (size_t)OW);
        if (oh + 1 < OH) memcpy(ym + (oh + 1) * OW, ob + obw, sizeof(float) * (size_t)OW);
      }
      if (ep && !rep)
        ep(ym + oh0 * OW, OH * OW, m, oh0 * OW, 1, (oh1 - oh0) * OW, batch, ep_ctx);
    }
  }
}

typedef struct vkp_wino_job_t {
  const float *x, *u;
  float *y;
  ptrdiff_t C, H, W, M, PT, PL, OH, OW;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t batch, rpb, step, TH;  // step: tasks; task t takes tile rows
                                    // [TH * t / step, TH * (t + 1) / step)
  float *wscratch, *gemm_scratch;  // per worker
} vkp_wino_job_t;

static void vkp_wino_task(void *arg, ptrdiff_t t, int worker) {
  const vkp_wino_job_t *j = arg;
  vkp__winograd_blocks(j->x, j->y, j->u, j->C, j->H, j->W, j->M, j->PT, j->PL, j->OH,
                       j->OW, j->ep, j->ep_ctx, j->batch, j->rpb, j->TH * t / j->step,
                       j->TH * (t + 1) / j->step,
                       j->wscratch + worker * VKP_WINO_SCRATCH_FLOATS(j->C, j->M, j->OH, j->OW),
                       j->gemm_scratch + (ptrdiff_t)worker * VKP_GEMM_SCRATCH_FLOATS, 1);
}

// Y = conv(x) for one image: x is C x H x W, y is M x OH x OW, pads PT/PL
// (the bottom/right padding follows from OH/OW). `u` is the output of
// vkp_winograd_prepack. `wscratch` holds `threads` *
// VKP_WINO_SCRATCH_FLOATS(C, M, OH, OW) floats, `gemm_scratch` what vkp_gemm
// needs for `threads`. The epilogue sees row = output channel, columns =
// output pixels, once per channel and block of output rows. With threads,
// each task takes an even share of the tile rows, contiguous, in blocks
// (transforms and GEMMs), so that one wake-up of the pool serves the whole
// convolution and no task waits on another's extra block.
VKP_FN void vkp_conv_winograd(const float *x, float *y, const float *u,
                              ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t M,
                              ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t OH,
                              ptrdiff_t OW, vkp_epilogue_fn ep,
                              const void *ep_ctx, ptrdiff_t batch,
                              float *wscratch, float *gemm_scratch, int threads) {
  ptrdiff_t rpb = VKP_WINO_RPB(C, M, OH, OW);
  const ptrdiff_t TH = VKP_WINO_TH(OH);
  ptrdiff_t nt = threads < vkp_workers() ? threads : vkp_workers();
  if (nt > TH) nt = TH;
  if (nt > 1 && (TH + nt - 1) / nt < rpb) rpb = (TH + nt - 1) / nt;  // a block each
  if (nt > 1) {
    vkp_wino_job_t j = {x, u, y, C, H, W, M, PT, PL, OH, OW, ep, ep_ctx, batch,
                        rpb, nt, TH, wscratch, gemm_scratch};
    vkp_parallel(nt, vkp_wino_task, &j);
    return;
  }
  vkp__winograd_blocks(x, y, u, C, H, W, M, PT, PL, OH, OW, ep, ep_ctx, batch, rpb, 0, TH,
                       wscratch, gemm_scratch, threads);
}

// ---------------------------------------------------------------------------
// Direct loops: depthwise convolution and pooling (NCHW, one image).

// Depthwise for what vkp_conv_depthwise does not take: plain direct loops.
// Channels [c0, c1).
static void vkp_conv_depthwise_large(const float *x, const float *w, float *y,
                                     ptrdiff_t H, ptrdiff_t W,
                                     ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                                     ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL,
                                     ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH,
                                     ptrdiff_t OW, vkp_epilogue_fn ep,
                                     const void *ep_ctx, ptrdiff_t batch,
                                     ptrdiff_t c0, ptrdiff_t c1) {
  for (ptrdiff_t c = c0; c < c1; ++c) {
    float *yc = y + c * OH * OW;
    for (ptrdiff_t oh = 0; oh < OH; ++oh)
      for (ptrdiff_t ow = 0; ow < OW; ++ow) {
        float acc = 0.0f;
        for (ptrdiff_t kh = 0; kh < KH; ++kh)
          for (ptrdiff_t kw = 0; kw < KW; ++kw) {
            ptrdiff_t ih = oh * SH - PT + kh * DH, iw = ow * SW - PL + kw * DW;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
              acc += w[(c * KH + kh) * KW + kw] * x[(c * H + ih) * W + iw];
          }
        yc[oh * OW + ow] = acc;
      }
    if (ep) ep(yc, OH * OW, c, 0, 1, OH * OW, batch, ep_ctx);
  }
}

// Depthwise limits: windows over VKP_DW_MAX_TAPS taps, or strides with more
// than VKP_DW_MAX_PHASES phase planes, go to vkp_conv_depthwise_large.
#define VKP_DW_MAX_TAPS 121
#define VKP_DW_MAX_PHASES 16
// Floats of planes and outputs a band of output rows aims to keep in L1.
#ifndef VKP_DW_BAND_FLOATS
#define VKP_DW_BAND_FLOATS 4096
#endif
// Output vectors accumulated side by side: enough independent FMA chains to
// cover the FMA latency on two ports, few enough to stay in registers with
// the 9 weights of a 3x3 window.
#if VKP_VLEN == 16
#define VKP_DW_ACC 8
#else
#define VKP_DW_ACC 4
#endif

// The channels-last path for small maps (vkp__dw_t16, AVX-512): 16
// channels of the padded input, Hp x Wp pixels (the extent the windows
// read), and the window's weights per tap, 16 channels each.
#define VKP_DW_T16_EXTENT(K, S, D, O) \
  (((ptrdiff_t)(O) - 1) * (S) + ((ptrdiff_t)(K) - 1) * (D) + 1)
#if defined(__AVX512F__) && VKP_VLEN == 16
#define VKP_DW_T16_FITS(KH, KW, SH, SW, DH, DW, OH, OW)                                   \
  ((ptrdiff_t)(KH) * (KW) <= VKP_DW_MAX_TAPS && (ptrdiff_t)(OH) * (OW) >= 16 &&           \
   (ptrdiff_t)(OH) * (OW) <= VKP_DW_T16_MAX_OUT &&                                        \
   VKP_DW_T16_EXTENT(KH, SH, DH, OH) * VKP_DW_T16_EXTENT(KW, SW, DW, OW) <= VKP_DW_T16_MAX_IN)
#else
#define VKP_DW_T16_FITS(KH, KW, SH, SW, DH, DW, OH, OW) 0
#endif
#define VKP_DW_T16_MAX_OUT 256
#define VKP_DW_T16_MAX_IN 1024
#define VKP_DW_T16_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW)                           \
  (VKP_DW_T16_FITS(KH, KW, SH, SW, DH, DW, OH, OW)                                  \
       ? (VKP_DW_T16_EXTENT(KH, SH, DH, OH) * VKP_DW_T16_EXTENT(KW, SW, DW, OW) +   \
          (ptrdiff_t)(KH) * (KW)) * 16 + 32                                         \
       : (ptrdiff_t)0)

// Scratch floats vkp_conv_depthwise needs, at most (the generated source
// evaluates it): SH * SW phase planes of Hq = OH + (KH-1)*DH/SH rows of Ws
// floats (Ws: Wq = OW + (KW-1)*DW/SW rounded up to 16), each followed by
// Ws - OW + 16 spare floats for vector overruns and rounded up to 16
// floats; then OH * Ws floats of output rows rounded up to 16, plus 16; plus
// 16 to align the planes to 64 bytes. 16 is the widest VKP_VLEN.
#define VKP_DW_WS(KW, SW, DW, OW) \
  (((ptrdiff_t)(OW) + ((ptrdiff_t)(KW) - 1) * (DW) / (SW) + 15) / 16 * 16)
#define VKP_DW_SCRATCH_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW)                     \
  ((KH) * (KW) > VKP_DW_MAX_TAPS || (SH) * (SW) > VKP_DW_MAX_PHASES               \
       ? (ptrdiff_t)0                                                             \
       : (ptrdiff_t)(SH) * (SW) *                                                 \
                 ((((ptrdiff_t)(OH) + ((ptrdiff_t)(KH) - 1) * (DH) / (SH)) *      \
                       VKP_DW_WS(KW, SW, DW, OW) +                                \
                   VKP_DW_WS(KW, SW, DW, OW) - (OW) + 16 + 15) / 16 * 16) +       \
             ((ptrdiff_t)(OH) * VKP_DW_WS(KW, SW, DW, OW) + 15) / 16 * 16 + 32 +     \
             VKP_MAXZ(VKP_DW_MASKED_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW),             \
                      VKP_DW_T16_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW)))
// What vkp__dw_masked needs beyond that (stride 1 only): VKP_DW_MASKS
// vectors of lane masks (16 floats each at most) and a channel with its
// margins, (KH-1)*DH rows and (KW-1)*DW + 16 floats on each side.
#define VKP_DW_MASKS 256
// At stride 2: the masks and four phase planes of VKP_DW_PLANE2 floats.
#define VKP_DW_PLANE2(OH, OW) (((ptrdiff_t)(OH) + 3) * (OW) + 48)
#define VKP_DW_MASKED_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW)                           \
  ((SH) == 1 && (SW) == 1                                                             \
       ? (ptrdiff_t)VKP_DW_MASKS * 16 + (ptrdiff_t)(OH) * (OW) +                      \
             2 * (((ptrdiff_t)(KH) - 1) * (DH) * (OW) + ((ptrdiff_t)(KW) - 1) * (DW) + 16) + 32 \
   : (SH) == 2 && (SW) == 2                                                           \
       ? (ptrdiff_t)VKP_DW_MASKS * 16 + 4 * VKP_DW_PLANE2(OH, OW) + 64                \
       : (ptrdiff_t)0)

// dst[j] = src[j * SW] for j < n, exactly.
static inline void vkp__dw_gather(float *restrict dst, const float *restrict src,
                                  ptrdiff_t n, ptrdiff_t SW) {
  ptrdiff_t j = 0;
  if (SW == 1) {
    for (; j + VKP_VLEN <= n; j += VKP_VLEN)
      *(vkp_uvec_t *)(dst + j) = *(const vkp_uvec_t *)(src + j);
#if VKP_VLEN > 8
    if (j + 8 <= n) {
      *(vkp_uv8_t *)(dst + j) = *(const vkp_uv8_t *)(src + j);
      j += 8;
    }
#endif
#if VKP_VLEN > 4
    if (j + 4 <= n) {
      *(vkp_uv4_t *)(dst + j) = *(const vkp_uv4_t *)(src + j);
      j += 4;
    }
#endif
  }
  // Counted down: on `j < n` GCC's loop analysis warns of an overflow it
  // cannot rule out (-Waggressive-loop-optimizations).
  for (ptrdiff_t left = n - j; left > 0; --left, ++j) dst[j] = src[j * SW];
}

// Copies `rows` rows of n >= 0 floats: dst[i * ldd + j] = src[i * lds + j *
// SW]. With SW <= 2 the first `whole` rows go in whole vectors, which read up
// to SW vectors and write up to a vector past a row's end, and with
// `rezero` are followed by a vector of zeros; the other rows go exactly.
// With SW == 1 each vector is stored one iteration after it is loaded,
// which keeps GCC from turning the loop into a call to memmove: for the
// short rows copied here, the call costs more than the copy.
static inline void vkp__dw_copy_rows(float *dst, ptrdiff_t ldd, const float *src,
                                     ptrdiff_t lds, ptrdiff_t rows, ptrdiff_t n,
                                     ptrdiff_t SW, ptrdiff_t whole, int rezero) {
  ptrdiff_t nv = (n + VKP_VLEN - 1) / VKP_VLEN, i = 0;
  if (n <= 0) return;
  if (SW > 2) whole = 0;
  for (; i < whole && i < rows; ++i) {
    float *restrict d = dst + i * ldd;
    const float *restrict s = src + i * lds;
    if (SW == 1) {
      vkp_vec_t v = *(const vkp_uvec_t *)s;
      for (ptrdiff_t k = 1; k < nv; ++k) {
        vkp_vec_t next = *(const vkp_uvec_t *)(s + k * VKP_VLEN);
        *(vkp_uvec_t *)(d + (k - 1) * VKP_VLEN) = v;
        v = next;
      }
      *(vkp_uvec_t *)(d + (nv - 1) * VKP_VLEN) = v;
    } else {  // the even lanes of two vectors
      for (ptrdiff_t k = 0; k < nv; ++k) {
#if VKP_HAVE_SHUFFLEVECTOR
        vkp_vec_t lo = *(const vkp_uvec_t *)(s + 2 * k * VKP_VLEN);
        vkp_vec_t hi = *(const vkp_uvec_t *)(s + (2 * k + 1) * VKP_VLEN);
        *(vkp_uvec_t *)(d + k * VKP_VLEN) = vkp_vec_even(lo, hi);
#else  // GCC before 12: a loop the vectoriser handles
        for (int l = 0; l < VKP_VLEN; ++l) d[k * VKP_VLEN + l] = s[2 * (k * VKP_VLEN + l)];
#endif
      }
    }
    if (rezero) *(vkp_uvec_t *)(d + n) = (vkp_vec_t){0};
  }
  for (; i < rows; ++i) vkp__dw_gather(dst + i * ldd, src + i * lds, n, SW);
}

#if VKP_HAVE_SHUFFLEVECTOR
// Column stride 2: the two column phases of `rows` input rows in one pass,
// de[i * ldd + j] = src[i * lds + 2 * j] (j < ne) and do_[i * ldd + j] =
// src[i * lds + 2 * j + 1] (j < no), de and do_ in different planes. The
// first `whole` rows go in nv whole vectors per phase (nv vectors hold both
// ne and no; 2 * nv vectors are read from each row), each phase followed by
// a vector of zeros; the rest exactly. Reading each row once instead of
// once per phase halves the loads and the per-row work of the copy, which
// is most of a stride-2 depthwise layer's time (MobileNetV2).
static inline void vkp__dw_copy_pair(float *de, ptrdiff_t ne, float *do_, ptrdiff_t no,
                                     ptrdiff_t ldd, const float *src, ptrdiff_t lds,
                                     ptrdiff_t rows, ptrdiff_t nv, ptrdiff_t whole) {
  ptrdiff_t i = 0;
  for (; i < whole && i < rows; ++i) {
    float *restrict e = de + i * ldd, *restrict o = do_ + i * ldd;
    const float *restrict s = src + i * lds;
    for (ptrdiff_t k = 0; k < nv; ++k) {
      vkp_vec_t lo = *(const vkp_uvec_t *)(s + 2 * k * VKP_VLEN);
      vkp_vec_t hi = *(const vkp_uvec_t *)(s + (2 * k + 1) * VKP_VLEN);
      *(vkp_uvec_t *)(e + k * VKP_VLEN) = vkp_vec_even(lo, hi);
      *(vkp_uvec_t *)(o + k * VKP_VLEN) = vkp_vec_odd(lo, hi);
    }
    *(vkp_uvec_t *)(e + ne) = (vkp_vec_t){0};
    *(vkp_uvec_t *)(o + no) = (vkp_vec_t){0};
  }
  for (; i < rows; ++i) {
    vkp__dw_gather(de + i * ldd, src + i * lds, ne, 2);
    vkp__dw_gather(do_ + i * ldd, src + i * lds + 1, no, 2);
  }
}
#endif

// z[i] = sum_t w[t] * p[off[t] + i] for i < nvec * VKP_VLEN, VKP_DW_ACC
// output vectors at a time so that their FMA chains interleave.
static inline __attribute__((always_inline)) void vkp__dw_taps(
    const float *p, const ptrdiff_t *off, const float *w, ptrdiff_t taps,
    float *z, ptrdiff_t nvec) {
  ptrdiff_t v = 0;
  for (; v + VKP_DW_ACC <= nvec; v += VKP_DW_ACC) {
    const float *q = p + v * VKP_VLEN;
    vkp_vec_t acc[VKP_DW_ACC];
    for (int u = 0; u < VKP_DW_ACC; ++u) acc[u] = (vkp_vec_t){0};
    for (ptrdiff_t t = 0; t < taps; ++t) {
      const float *qt = q + off[t];
      float wt = w[t];
      for (int u = 0; u < VKP_DW_ACC; ++u)
        acc[u] += wt * *(const vkp_uvec_t *)(qt + u * VKP_VLEN);
    }
    for (int u = 0; u < VKP_DW_ACC; ++u)
      *(vkp_uvec_t *)(z + (v + u) * VKP_VLEN) = acc[u];
  }
  for (; v < nvec; ++v) {
    const float *q = p + v * VKP_VLEN;
    vkp_vec_t acc = {0};
    for (ptrdiff_t t = 0; t < taps; ++t)
      acc += w[t] * *(const vkp_uvec_t *)(q + off[t]);
    *(vkp_uvec_t *)(z + v * VKP_VLEN) = acc;
  }
}

// 3x3 window, dilation 1, row stride SH (1 or 2; a constant once inlined):
// G consecutive output rows from `y` on (row stride ldy), every column in
// whole vectors. Rows under a vector wide are stored a whole vector wide,
// spilling into the next row; else the rows' last vector overlaps the one
// before. `p` is phase plane row 0 of the rows' window, `ws` the plane row
// stride, `phase_row` the distance between row phases; window column kw
// starts at 0, k1, k2 in the planes; wv holds the 9 weights broadcast. Each
// loaded vector is a padded input row, used by every output row whose
// window holds it. `rep` (NULL: none): the row epilogue of channel `ch`,
// applied before the stores.
static inline __attribute__((always_inline)) void vkp__dw_rows3x3(
    const float *p, ptrdiff_t ws, ptrdiff_t phase_row, ptrdiff_t k1, ptrdiff_t k2,
    const vkp_vec_t *wv, int SH, int G, float *y, ptrdiff_t ldy, ptrdiff_t OW,
    const vkp_row_ep_t *rep, ptrdiff_t ch) {
  ptrdiff_t last = OW > VKP_VLEN ? OW - VKP_VLEN : 0;
  for (ptrdiff_t ow = 0;; ow += VKP_VLEN) {
    if (ow > last) ow = last;
    vkp_vec_t acc[VKP_DW_ACC];
    for (int g = 0; g < G; ++g) acc[g] = (vkp_vec_t){0};
    const float *row[2] = {p + ow, p + phase_row + ow};  // next row per phase
VKP_UNROLL
    for (int r = 0; r < (G - 1) * SH + 3; ++r) {  // padded row of the window
      const float *q = row[r % SH];
      vkp_vec_t in[3] = {*(const vkp_uvec_t *)q, *(const vkp_uvec_t *)(q + k1),
                         *(const vkp_uvec_t *)(q + k2)};
      row[r % SH] += ws;
VKP_UNROLL
      for (int kh = 0; kh < 3; ++kh)
        if (r >= kh && (r - kh) % SH == 0 && (r - kh) / SH < G)
VKP_UNROLL
          for (int kw = 0; kw < 3; ++kw) acc[(r - kh) / SH] += wv[kh * 3 + kw] * in[kw];
    }
    for (int g = 0; g < G; ++g)
      *(vkp_uvec_t *)(y + g * ldy + ow) = rep ? vkp_row_ep_vec(rep, ch, acc[g]) : acc[g];
    if (ow == last) break;
  }
}

// vkp__dw_rows3x3 over `n` output rows, VKP_DW_ACC at a time, then the rest.
// Rows from `direct` on would spill out of the channel: they go through
// `bounce` (a vector of scratch) instead.
static inline __attribute__((always_inline)) void vkp__dw_band3x3(
    const float *p, ptrdiff_t ws, ptrdiff_t phase_row, ptrdiff_t k1, ptrdiff_t k2,
    const float *w, int SH, ptrdiff_t n, ptrdiff_t direct, float *y,
    ptrdiff_t OW, float *bounce, const vkp_row_ep_t *rep, ptrdiff_t ch) {
  vkp_vec_t wv[9];
  for (int t = 0; t < 9; ++t) wv[t] = (vkp_vec_t){0} + w[t];
  ptrdiff_t g = 0;
  for (; g + VKP_DW_ACC <= direct; g += VKP_DW_ACC)
    vkp__dw_rows3x3(p + g * ws, ws, phase_row, k1, k2, wv, SH, VKP_DW_ACC,
                    y + g * OW, OW, OW, rep, ch);
#if VKP_DW_ACC > 4
  if (g + 4 <= direct) {
    vkp__dw_rows3x3(p + g * ws, ws, phase_row, k1, k2, wv, SH, 4, y + g * OW,
                    OW, OW, rep, ch);
    g += 4;
  }
#endif
  for (; g < direct; ++g)
    vkp__dw_rows3x3(p + g * ws, ws, phase_row, k1, k2, wv, SH, 1, y + g * OW,
                    OW, OW, rep, ch);
  for (; g < n; ++g) {
    vkp__dw_rows3x3(p + g * ws, ws, phase_row, k1, k2, wv, SH, 1, bounce,
                    VKP_VLEN, OW, rep, ch);
    vkp__dw_gather(y + g * OW, bounce, OW, 1);
  }
}

// Whether vkp__dw_masked takes a depthwise layer: stride 1, the output the
// input's size, the map at least a vector but narrower than 3/4 of one (the
// 3x3 row kernels take wider maps), and at most VKP_DW_MASKS tap x vector
// masks.
// At stride 2 (undilated), the same over the input's four phase planes
// (even and odd rows x even and odd columns), each with the output's row
// length, which the planes' columns must fit in.
static inline int vkp__dw_masked_fits(ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW,
                                      ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t DH, ptrdiff_t DW,
                                      ptrdiff_t OH, ptrdiff_t OW) {
  ptrdiff_t nvec = (OH * OW + VKP_VLEN - 1) / VKP_VLEN;
  int shape = (SH == 1 && SW == 1 && OH == H && OW == W) ||
              (SH == 2 && SW == 2 && DH == 1 && DW == 1 && (W + 1) / 2 <= OW &&
               (H + 1) / 2 <= OH + 1);
  return shape && OH * OW >= VKP_VLEN && 4 * OW < 3 * VKP_VLEN && KH * KW <= VKP_DW_MAX_TAPS &&
         KH * KW * nvec <= VKP_DW_MASKS;
}

// Vectors [v0, v0 + U) of one channel (see vkp__dw_masked), taps in order.
static inline __attribute__((always_inline)) void vkp__dw_masked_vecs(
    const float *src, const float *wc, const ptrdiff_t *off, ptrdiff_t taps,
    const vkp_ivec_t *mask, const ptrdiff_t *pos, ptrdiff_t nvec, ptrdiff_t v0, int U,
    float *yc, const vkp_row_ep_t *rep, ptrdiff_t ch) {
  vkp_vec_t acc[4];
  for (int u = 0; u < U; ++u) acc[u] = (vkp_vec_t){0};
  for (ptrdiff_t t = 0; t < taps; ++t) {
    const float wt = wc[t];
    for (int u = 0; u < U; ++u) {
      vkp_ivec_t in = (vkp_ivec_t) * (const vkp_uvec_t *)(src + pos[v0 + u] + off[t]);
      acc[u] += wt * (vkp_vec_t)(in & mask[t * nvec + v0 + u]);
    }
  }
  for (int u = 0; u < U; ++u)
    *(vkp_uvec_t *)(yc + pos[v0 + u]) = rep ? vkp_row_ep_vec(rep, ch, acc[u]) : acc[u];
}

static inline __attribute__((always_inline)) void vkp__dw_masked_channel(
    const float *src, const float *wc, const ptrdiff_t *off, ptrdiff_t taps,
    const vkp_ivec_t *mask, const ptrdiff_t *pos, ptrdiff_t nvec, float *yc,
    const vkp_row_ep_t *rep, ptrdiff_t ch) {
  ptrdiff_t v = 0;
  for (; v + 4 <= nvec; v += 4)
    vkp__dw_masked_vecs(src, wc, off, taps, mask, pos, nvec, v, 4, yc, rep, ch);
  for (; v < nvec; ++v)
    vkp__dw_masked_vecs(src, wc, off, taps, mask, pos, nvec, v, 1, yc, rep, ch);
}

// The masked paths' vectors and masks: vector v of the OH x OW outputs
// starts at pos[v] (the last one ends at the end, overlapping the one
// before); mask[t * nvec + v] keeps the lanes whose tap t (kh, kw) reads
// input (S * oh + kh * DH - PT, S * ow + kw * DW - PL) inside H x W.
static void vkp__dw_masks(vkp_ivec_t *mask, ptrdiff_t *pos, ptrdiff_t nvec, ptrdiff_t OH,
                          ptrdiff_t OW, ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW,
                          ptrdiff_t S, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW) {
  for (ptrdiff_t v = 0; v < nvec; ++v) {
    pos[v] = v + 1 < nvec ? v * VKP_VLEN : OH * OW - VKP_VLEN;
    vkp_ivec_t oh, ow;
    for (int l = 0; l < VKP_VLEN; ++l) {
      oh[l] = (int32_t)((pos[v] + l) / OW);
      ow[l] = (int32_t)((pos[v] + l) % OW);
    }
    for (ptrdiff_t kh = 0; kh < KH; ++kh) {
      vkp_ivec_t ih = (int32_t)S * oh + (int32_t)(kh * DH - PT);
      vkp_ivec_t rows = (ih >= 0) & (ih < (int32_t)H);
      for (ptrdiff_t kw = 0; kw < KW; ++kw) {
        vkp_ivec_t iw = (int32_t)S * ow + (int32_t)(kw * DW - PL);
        mask[(kh * KW + kw) * nvec + v] = rows & (iw >= 0) & (iw < (int32_t)W);
      }
    }
  }
}

// Depthwise at stride 1 on small maps (MobileNetV2's 7x7, EfficientNet's
// 7x7 and 14x14 5x5 layers), straight from the input: each channel is one
// run of H * W floats, so tap (kh, kw) of every output is the input at a
// fixed offset from it, and whole vectors run across row ends; a lane
// mask per tap and vector (made once per call, kept in scratch) zeroes
// what lies in the padding. The last vector ends at the channel's end,
// overlapping the one before. Channels whose reads would leave x are copied
// into scratch between zeros first. Channels [c0, c1); the row epilogue in
// registers, another epilogue on each finished channel.
static void vkp__dw_masked2(const float *x, const float *w, float *y, ptrdiff_t C, ptrdiff_t H,
                            ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t PT, ptrdiff_t PL,
                            ptrdiff_t OH, ptrdiff_t OW, vkp_epilogue_fn ep, const void *ep_ctx,
                            ptrdiff_t batch, float *scratch, ptrdiff_t c0, ptrdiff_t c1);

static VKP_ONE_COPY void vkp__dw_masked(const float *x, const float *w, float *y,
                                        ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH,
                                        ptrdiff_t KW, ptrdiff_t SH, ptrdiff_t PT, ptrdiff_t PL,
                                        ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW,
                                        vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch,
                                        float *scratch, ptrdiff_t c0, ptrdiff_t c1) {
  if (SH == 2) {
    vkp__dw_masked2(x, w, y, C, H, W, KH, KW, PT, PL, OH, OW, ep, ep_ctx, batch, scratch, c0,
                    c1);
    return;
  }
  const ptrdiff_t HW = H * W, taps = KH * KW, nvec = (HW + VKP_VLEN - 1) / VKP_VLEN;
  vkp_ivec_t *mask = (vkp_ivec_t *)vkp_align64(scratch);
  ptrdiff_t off[VKP_DW_MAX_TAPS], pos[VKP_DW_MASKS], lo_off = 0, hi_off = 0;
  for (ptrdiff_t kh = 0; kh < KH; ++kh)
    for (ptrdiff_t kw = 0; kw < KW; ++kw) {
      ptrdiff_t o = (kh * DH - PT) * W + kw * DW - PL;
      off[kh * KW + kw] = o;
      lo_off = o < lo_off ? o : lo_off;
      hi_off = o > hi_off ? o : hi_off;
    }
  vkp__dw_masks(mask, pos, nvec, H, W, H, W, KH, KW, 1, PT, PL, DH, DW);
  // A channel between -lo_off zeros before and hi_off after.
  float *bounce = (float *)(mask + taps * nvec) - lo_off;
  for (ptrdiff_t i = lo_off; i < 0; ++i) bounce[i] = 0.0f;
  for (ptrdiff_t i = HW; i < HW + hi_off; ++i) bounce[i] = 0.0f;
  const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
  for (ptrdiff_t c = c0; c < c1; ++c) {
    const float *src = x + c * HW;
    if (c * HW + lo_off < 0 || (c + 1) * HW + hi_off > C * HW) {
      memcpy(bounce, src, sizeof(float) * (size_t)HW);
      src = bounce;
    }
    float *yc = y + c * HW;
    if (taps == 9)
      vkp__dw_masked_channel(src, w + c * 9, off, 9, mask, pos, nvec, yc, rep, c);
    else
      vkp__dw_masked_channel(src, w + c * taps, off, taps, mask, pos, nvec, yc, rep, c);
    if (ep && !rep) ep(yc, HW, c, 0, 1, HW, batch, ep_ctx);
  }
}

// vkp__dw_masked at stride 2 (undilated): each channel is split into its
// four phase planes (input rows of one parity, columns of one parity), each
// with the output's row length, so that tap (kh, kw) of every output lies
// in one plane at a fixed offset from the output's position; the masks
// zero what falls outside the input (the planes' margins and spare columns
// hold whatever the channel before left there). MobileNetV2's 14x14 -> 7x7
// layer (576 channels) alone: 0.038 -> 0.029 ms.
static void vkp__dw_masked2(const float *x, const float *w, float *y, ptrdiff_t C, ptrdiff_t H,
                            ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t PT, ptrdiff_t PL,
                            ptrdiff_t OH, ptrdiff_t OW, vkp_epilogue_fn ep, const void *ep_ctx,
                            ptrdiff_t batch, float *scratch, ptrdiff_t c0, ptrdiff_t c1) {
  const ptrdiff_t HW = H * W, OHW = OH * OW, taps = KH * KW;
  const ptrdiff_t nvec = (OHW + VKP_VLEN - 1) / VKP_VLEN, ps = VKP_DW_PLANE2(OH, OW);
  vkp_ivec_t *mask = (vkp_ivec_t *)vkp_align64(scratch);
  // Plane (a, b) = 2a + b: rows i = input rows 2i + a, from `base` + p * ps,
  // a row and a vector of margin before.
  float *base = (float *)(mask + taps * nvec) + OW + 16;
  ptrdiff_t off[VKP_DW_MAX_TAPS], pos[VKP_DW_MASKS];
  for (ptrdiff_t kh = 0; kh < KH; ++kh)
    for (ptrdiff_t kw = 0; kw < KW; ++kw) {
      ptrdiff_t dr = kh - PT, dc = kw - PL, a = dr & 1, b = dc & 1;
      off[kh * KW + kw] = (2 * a + b) * ps + (dr - a) / 2 * OW + (dc - b) / 2;
    }
  vkp__dw_masks(mask, pos, nvec, OH, OW, H, W, KH, KW, 2, PT, PL, 1, 1);
  const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
  const float *x_end = x + C * HW;
  for (ptrdiff_t c = c0; c < c1; ++c) {
    const float *xc = x + c * HW;
    // Rows in order: a row's vector stores run on into the plane's next
    // row (written after) or its margin.
    for (ptrdiff_t r = 0; r < H; ++r) {
      const float *row = xc + r * W;
      float *de = base + (2 * (r & 1)) * ps + (r >> 1) * OW, *dd = de + ps;
      ptrdiff_t j = 0;
      for (; 2 * j < W && row + 2 * j + 2 * VKP_VLEN <= x_end; j += VKP_VLEN) {
        vkp_vec_t lo = *(const vkp_uvec_t *)(row + 2 * j);
        vkp_vec_t hi = *(const vkp_uvec_t *)(row + 2 * j + VKP_VLEN);
        *(vkp_uvec_t *)(de + j) = vkp_vec_even(lo, hi);
        *(vkp_uvec_t *)(dd + j) = vkp_vec_odd(lo, hi);
      }
      for (; 2 * j < W; ++j) {
        de[j] = row[2 * j];
        if (2 * j + 1 < W) dd[j] = row[2 * j + 1];
      }
    }
    float *yc = y + c * OHW;
    if (taps == 9)
      vkp__dw_masked_channel(base, w + c * 9, off, 9, mask, pos, nvec, yc, rep, c);
    else
      vkp__dw_masked_channel(base, w + c * taps, off, taps, mask, pos, nvec, yc, rep, c);
    if (ep && !rep) ep(yc, OHW, c, 0, 1, OHW, batch, ep_ctx);
  }
}

#if defined(__AVX512F__) && VKP_VLEN == 16
// r[i] lane j -> r[j] lane i: pairs of rows interleaved by floats, then by
// float pairs (4x4 blocks in each 128-bit lane), then the 128-bit lanes
// gathered across the four groups of four rows.
static inline __attribute__((always_inline)) void vkp__tr16(__m512 *r) {
  __m512 t[16];
  VKP_UNROLL
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  VKP_UNROLL
  for (int g = 0; g < 16; g += 4) {  // rows g..g+3: columns j, j+4, j+8, j+12 in r[g + j]
    r[g] = (__m512)_mm512_unpacklo_pd((__m512d)t[g], (__m512d)t[g + 2]);
    r[g + 1] = (__m512)_mm512_unpackhi_pd((__m512d)t[g], (__m512d)t[g + 2]);
    r[g + 2] = (__m512)_mm512_unpacklo_pd((__m512d)t[g + 1], (__m512d)t[g + 3]);
    r[g + 3] = (__m512)_mm512_unpackhi_pd((__m512d)t[g + 1], (__m512d)t[g + 3]);
  }
  VKP_UNROLL
  for (int j = 0; j < 4; ++j) {
    __m512 s0 = _mm512_shuffle_f32x4(r[j], r[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
    __m512 s1 = _mm512_shuffle_f32x4(r[j], r[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
    __m512 s2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], _MM_SHUFFLE(1, 0, 1, 0));
    __m512 s3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], _MM_SHUFFLE(3, 2, 3, 2));
    t[j] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(2, 0, 2, 0));
    t[j + 4] = _mm512_shuffle_f32x4(s0, s2, _MM_SHUFFLE(3, 1, 3, 1));
    t[j + 8] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(2, 0, 2, 0));
    t[j + 12] = _mm512_shuffle_f32x4(s1, s3, _MM_SHUFFLE(3, 1, 3, 1));
  }
  VKP_UNROLL
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// 16 output pixels from q on, channels-last (lane c: channel c0 + c):
// acc[k] = sum over taps t of wv[t] * in[base(q + k) + toff[t]], taps in
// order, then the row epilogue per lane, transposed and stored as 16
// floats of each channel's output.
static inline __attribute__((always_inline)) void vkp__dw_t16_out(
    const float *in, const float *wv, const ptrdiff_t *toff, ptrdiff_t taps, ptrdiff_t q,
    ptrdiff_t OW, ptrdiff_t OHW, ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t Wp,
    const vkp_row_ep_t *rep, ptrdiff_t c0, float *y) {
  ptrdiff_t base[16], oh = q / OW, ow = q % OW;
  for (int k = 0; k < 16; ++k) {
    base[k] = (oh * SH * Wp + ow * SW) * 16;
    if (++ow == OW) ow = 0, ++oh;
  }
  __m512 acc[16];
  VKP_UNROLL
  for (int k = 0; k < 16; ++k) acc[k] = _mm512_setzero_ps();
  for (ptrdiff_t t = 0; t < taps; ++t) {
    const __m512 wt = _mm512_load_ps(wv + t * 16);
    const float *it = in + toff[t];
    VKP_UNROLL
    for (int k = 0; k < 16; ++k) acc[k] = _mm512_fmadd_ps(wt, _mm512_load_ps(it + base[k]), acc[k]);
  }
  if (rep) {
    vkp_vec_t b = {0};  // lane c: channel c0 + c's bias
    if (rep->bias) b = *(const vkp_uvec_t *)(rep->bias + c0);
    VKP_UNROLL
    for (int k = 0; k < 16; ++k) acc[k] = (__m512)vkp_row_ep_clamp(rep, (vkp_vec_t)acc[k] + b);
  }
  vkp__tr16(acc);
  VKP_UNROLL
  for (int c = 0; c < 16; ++c) _mm512_storeu_ps(y + (c0 + c) * OHW + q, acc[c]);
}

// Depthwise on small maps, 16 channels at a time, channels-last (AVX-512;
// VKP_DW_T16_FITS): the group's input is transposed, 16 pixels by 16
// channels at a time, into a zero-padded Hp x Wp buffer of 16-channel
// pixels, so that every tap of every output is one aligned vector load and
// an FMA, with no lane masks and no loads across cache lines; 16 outputs'
// sums are transposed back into the channels' rows. The planar paths read
// each tap as an unaligned load of a row segment (most of them across two
// cache lines) and a lane mask, and those cost more than the arithmetic on
// maps of 7 to 16 columns (MobileNetV2's 384-channel 14x14 layer alone:
// 0.025 -> 0.019 ms; its 576-channel 14x14 -> 7x7 one 0.031 -> 0.014). The
// last 16 pixels of a channel overlap the ones before. Channels [c0, c0 +
// 16 * groups); the row epilogue per lane in registers, another epilogue on
// each finished channel.
static void vkp__dw_t16(const float *x, const float *w, float *y, ptrdiff_t H, ptrdiff_t W,
                        ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t PT,
                        ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW,
                        vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch,
                        float *scratch, ptrdiff_t c0, ptrdiff_t groups) {
  const ptrdiff_t HW = H * W, OHW = OH * OW, taps = KH * KW;
  const ptrdiff_t Hp = VKP_DW_T16_EXTENT(KH, SH, DH, OH), Wp = VKP_DW_T16_EXTENT(KW, SW, DW, OW);
  float *in = vkp_align64(scratch), *wv = in + Hp * Wp * 16;
  // The padding: pixels of the extent outside the input stay zero for
  // every group (the transposes write the inside only).
  for (ptrdiff_t a = 0; a < Hp; ++a)
    for (ptrdiff_t b = 0; b < Wp; ++b)
      if (a - PT < 0 || a - PT >= H || b - PL < 0 || b - PL >= W)
        _mm512_store_ps(in + (a * Wp + b) * 16, _mm512_setzero_ps());
  ptrdiff_t toff[VKP_DW_MAX_TAPS];
  for (ptrdiff_t kh = 0; kh < KH; ++kh)
    for (ptrdiff_t kw = 0; kw < KW; ++kw) toff[kh * KW + kw] = (kh * DH * Wp + kw * DW) * 16;
  const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
  for (ptrdiff_t g = 0; g < groups; ++g) {
    const ptrdiff_t cg = c0 + 16 * g;
    for (ptrdiff_t t = 0; t < taps; ++t)
      for (int c = 0; c < 16; ++c) wv[t * 16 + c] = w[(cg + c) * taps + t];
    for (ptrdiff_t p0 = 0; p0 < HW; p0 += 16) {
      const ptrdiff_t p = p0 + 16 <= HW ? p0 : HW - 16;
      __m512 r[16];
      VKP_UNROLL
      for (int c = 0; c < 16; ++c) r[c] = _mm512_loadu_ps(x + (cg + c) * HW + p);
      vkp__tr16(r);
      ptrdiff_t a = p / W + PT, b = p % W + PL;
      for (int k = 0; k < 16; ++k) {
        if (a < Hp && b < Wp) _mm512_store_ps(in + (a * Wp + b) * 16, r[k]);
        if (++b == W + PL) b = PL, ++a;
      }
    }
    for (ptrdiff_t q0 = 0; q0 < OHW; q0 += 16) {
      const ptrdiff_t q = q0 + 16 <= OHW ? q0 : OHW - 16;
      if (taps == 9)
        vkp__dw_t16_out(in, wv, toff, 9, q, OW, OHW, SH, SW, Wp, rep, cg, y);
      else
        vkp__dw_t16_out(in, wv, toff, taps, q, OW, OHW, SH, SW, Wp, rep, cg, y);
    }
    if (ep && !rep)
      for (int c = 0; c < 16; ++c)
        ep(y + (cg + c) * OHW, OHW, cg + c, 0, 1, OHW, batch, ep_ctx);
  }
}
#endif

#if defined(__AVX512F__) && VKP_VLEN == 16
// 3x3 stride-2 depthwise, left padding 0 or 1, straight from the input rows:
// for each 16 outputs of a row, the even and odd lanes of 32 input columns
// of each window row (the windows' middle and right taps at left padding
// 1, else left and middle) and those lanes one on (the odd ones shifted
// right, the previous chunk's last entering; or the even ones shifted left,
// the next column entering), 9 multiply-adds per row. Two output rows share
// the input row between them. No copy into phase planes: on MobileNetV2's
// 112 -> 56 layer the planes did not fit L1 and their copy and reloads
// cost 20% of the layer. Masked loads read columns below W only, masked
// stores write OW outputs. `rows`: the 2 * NR + 1 input rows (NULL: a
// padding row); NR (1 or 2) output rows at y, row stride OW.
static inline __attribute__((always_inline)) void vkp__dw3s2_rows(
    const float *const *rows, const vkp_vec_t *wv, float *y, ptrdiff_t OW, ptrdiff_t W,
    ptrdiff_t PL, const vkp_row_ep_t *rep, float bias, int NR) {
  vkp_vec_t carry[5] = {{0}, {0}, {0}, {0}, {0}};  // the previous chunk's odd lanes
  for (ptrdiff_t ow = 0; ow < OW; ow += 16) {
    const ptrdiff_t c = 2 * ow;
    vkp_vec_t acc[2] = {{0}, {0}};
    VKP_UNROLL
    for (int i = 0; i < 2 * NR + 1; ++i) {
      const float *r = rows[i];
      if (!r) continue;
      const ptrdiff_t k0 = W - c, k1 = W - c - 16;
      const __mmask16 m0 = k0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k0) - 1u);
      const __mmask16 m1 = k1 >= 16   ? (__mmask16)0xffff
                           : k1 <= 0 ? (__mmask16)0
                                     : (__mmask16)((1u << k1) - 1u);
      const vkp_vec_t lo = (vkp_vec_t)_mm512_maskz_loadu_ps(m0, r + c);
      const vkp_vec_t hi = (vkp_vec_t)_mm512_maskz_loadu_ps(m1, r + c + 16);
      const vkp_vec_t e = vkp_vec_even(lo, hi), o = vkp_vec_odd(lo, hi);
      vkp_vec_t t0, t1, t2;
      if (PL) {
        t0 = (vkp_vec_t)_mm512_alignr_epi32((__m512i)o, (__m512i)carry[i], 15);
        t1 = e;
        t2 = o;
        carry[i] = o;
      } else {
        const __m512 next =
            _mm512_maskz_loadu_ps(c + 32 < W ? (__mmask16)1 : (__mmask16)0, r + c + 32);
        t0 = e;
        t1 = o;
        t2 = (vkp_vec_t)_mm512_alignr_epi32((__m512i)next, (__m512i)e, 1);
      }
      VKP_UNROLL
      for (int q = 0; q < NR; ++q) {
        const int kh = i - 2 * q;
        if (kh < 0 || kh > 2) continue;
        acc[q] += wv[3 * kh] * t0 + wv[3 * kh + 1] * t1 + wv[3 * kh + 2] * t2;
      }
    }
    const ptrdiff_t k = OW - ow;
    const __mmask16 m = k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k) - 1u);
    VKP_UNROLL
    for (int q = 0; q < NR; ++q) {
      vkp_vec_t v = acc[q];
      if (rep) v = vkp_row_ep_clamp(rep, v + bias);
      _mm512_mask_storeu_ps(y + q * OW + ow, m, (__m512)v);
    }
  }
}

// Channels [c0, c1), output rows [r0, r1) of vkp__dw3s2_rows's shapes.
static void vkp__dw3s2(const float *x, const float *w, float *y, ptrdiff_t H, ptrdiff_t W,
                       ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t OH, ptrdiff_t OW,
                       vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch, ptrdiff_t c0,
                       ptrdiff_t c1, ptrdiff_t r0, ptrdiff_t r1) {
  const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
  vkp_row_ep_t clamp;  // the epilogue's clamp, in a local: stores to y cannot change it
  if (rep) clamp = *rep, clamp.bias = NULL;
  for (ptrdiff_t ch = c0; ch < c1; ++ch) {
    const float *xc = x + ch * H * W;
    float *yc = y + ch * OH * OW;
    vkp_vec_t wv[9];
    for (int t = 0; t < 9; ++t) wv[t] = (vkp_vec_t){0} + w[ch * 9 + t];
    const float bias = rep && rep->bias ? rep->bias[ch] : 0.0f;
    const float *rows[5];
    ptrdiff_t oh = r0;
    for (; oh + 2 <= r1; oh += 2) {
      for (int i = 0; i < 5; ++i) {
        const ptrdiff_t ih = 2 * oh - PT + i;
        rows[i] = ih >= 0 && ih < H ? xc + ih * W : NULL;
      }
      {
        // The next pair's four new rows, ahead: in MobileNetV2 the 112 ->
        // 56 layer's input comes from L3, and the hardware's prefetch left
        // the layer at 0.16 ms against 0.10 alone (0.10 with this).
        const ptrdiff_t ih = 2 * oh - PT + 5;
        const float *pf = xc + (ih < 0 ? 0 : ih) * W, *pe = xc + H * W;
        const float *pl = pf + 4 * W < pe ? pf + 4 * W : pe;
        for (; pf < pl; pf += 16) __builtin_prefetch(pf);
      }
      if (PL) vkp__dw3s2_rows(rows, wv, yc + oh * OW, OW, W, 1, rep ? &clamp : NULL, bias, 2);
      else vkp__dw3s2_rows(rows, wv, yc + oh * OW, OW, W, 0, rep ? &clamp : NULL, bias, 2);
    }
    if (oh < r1) {
      for (int i = 0; i < 3; ++i) {
        const ptrdiff_t ih = 2 * oh - PT + i;
        rows[i] = ih >= 0 && ih < H ? xc + ih * W : NULL;
      }
      if (PL) vkp__dw3s2_rows(rows, wv, yc + oh * OW, OW, W, 1, rep ? &clamp : NULL, bias, 1);
      else vkp__dw3s2_rows(rows, wv, yc + oh * OW, OW, W, 0, rep ? &clamp : NULL, bias, 1);
    }
    if (ep && !rep && r1 > r0)
      ep(yc + r0 * OW, OH * OW, ch, r0 * OW, 1, (r1 - r0) * OW, batch, ep_ctx);
  }
}
#endif

// Depthwise: channel c of the output reads channel c of the input only.
// Each channel is copied, zero-padded, into SH x SW phase planes in
// `scratch` (plane (a, b) holds padded rows a, a+SH, ... and columns b,
// b+SW, ...), each Hq x Wq, so that tap (kh, kw) reads one plane at a fixed
// offset and every output vector loads contiguous floats.
//  - 3x3 windows (dilation 1, row stride 1 or 2) on maps at least 3/4 of a
//    vector wide compute VKP_DW_ACC output rows at once, so that each loaded
//    input row serves every output row whose window holds it.
//  - Otherwise the outputs, laid out with row stride Wq, are a 1-D
//    correlation over contiguous memory: whole vectors run straight across
//    row ends (the Wq - OW columns past each row's end are computed and
//    dropped), then the rows are copied out.
// Large maps go in bands of output rows whose planes stay in L1. Needs
// VKP_DW_SCRATCH_FLOATS() floats of scratch. The epilogue sees
// row = channel, columns = output pixels, one channel at a time.
// Channels [c0, c1) of C, output rows [r0, r1) of each; every output is
// computed the same way whatever range it is in (vkp_conv_depthwise splits
// the rows or the channels across the pool).
// Compiled once per stage, not cloned per call site: its unrolled bodies
// are large, and constant shapes gain it nothing measurable.
static VKP_ONE_COPY void vkp__dw_channels(
    const float *x, const float *w, float *y,
    ptrdiff_t C, ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
    ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH,
    ptrdiff_t OW, vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch, float *scratch,
    ptrdiff_t c0, ptrdiff_t c1, ptrdiff_t r0, ptrdiff_t r1) {
  ptrdiff_t taps = KH * KW, phases = SH * SW;
#if defined(__AVX512F__) && VKP_VLEN == 16
  if (r0 == 0 && r1 == OH && c1 - c0 >= 16 && H * W >= 16 &&
      VKP_DW_T16_FITS(KH, KW, SH, SW, DH, DW, OH, OW)) {
    const ptrdiff_t groups = (c1 - c0) / 16;
    vkp__dw_t16(x, w, y, H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW, ep, ep_ctx, batch,
                scratch, c0, groups);
    if (c0 + 16 * groups < c1)
      vkp__dw_channels(x, w, y, C, H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW, ep, ep_ctx,
                       batch, scratch, c0 + 16 * groups, c1, r0, r1);
    return;
  }
#endif
#if defined(__AVX512F__) && VKP_VLEN == 16
  if (KH == 3 && KW == 3 && SH == 2 && SW == 2 && DH == 1 && DW == 1 && (PL == 0 || PL == 1) &&
      OW >= 16) {
    vkp__dw3s2(x, w, y, H, W, PT, PL, OH, OW, ep, ep_ctx, batch, c0, c1, r0, r1);
    return;
  }
#endif
  if (r0 == 0 && r1 == OH && vkp__dw_masked_fits(H, W, KH, KW, SH, SW, DH, DW, OH, OW)) {
    vkp__dw_masked(x, w, y, C, H, W, KH, KW, SH, PT, PL, DH, DW, OH, OW, ep, ep_ctx, batch,
                   scratch, c0, c1);
    return;
  }
  if (taps > VKP_DW_MAX_TAPS || phases > VKP_DW_MAX_PHASES) {  // always every row
    vkp_conv_depthwise_large(x, w, y, H, W, KH, KW, SH, SW, PT, PL, DH, DW,
                             OH, OW, ep, ep_ctx, batch, c0, c1);
    return;
  }
  ptrdiff_t Hq = OH + (KH - 1) * DH / SH, Wq = OW + (KW - 1) * DW / SW;
  int by_rows = KH == 3 && KW == 3 && DH == 1 && SH <= 2 && 4 * OW >= 3 * VKP_VLEN;
  // The 3x3 row kernels apply a row epilogue in registers.
  const vkp_row_ep_t *rep = by_rows ? vkp_row_ep_of(ep, ep_ctx) : NULL;
  // Plane row stride: whole vectors keep the rows' first vectors aligned.
  ptrdiff_t ws = by_rows ? (Wq + VKP_VLEN - 1) / VKP_VLEN * VKP_VLEN : Wq;
  // Output rows per band: the band's planes (R + Hq - OH rows each), and in
  // flat mode its outputs (R rows), in VKP_DW_BAND_FLOATS.
  ptrdiff_t R = (VKP_DW_BAND_FLOATS / ws - phases * (Hq - OH)) /
                (phases + !by_rows);
  if (R < 1) R = 1;
  if (R >= OH) R = OH;
  else if (by_rows && R > VKP_DW_ACC) R = R / VKP_DW_ACC * VKP_DW_ACC;
  else R = (OH + (OH + R - 1) / R - 1) / ((OH + R - 1) / R);  // even bands
  ptrdiff_t stride = ((R + Hq - OH) * ws + ws - OW + 16 + 15) / 16 * 16;
  float *planes = vkp_align64(scratch);
  float *z = planes + phases * stride;
  // The padding stays zero: every row copy rewrites its in-input span only.
  memset(planes, 0, sizeof(float) * (size_t)(phases * stride +
                                             (by_rows ? VKP_VLEN : (R * ws + 15) / 16 * 16 + 16)));
  ptrdiff_t off[VKP_DW_MAX_TAPS];  // tap -> where it starts in the planes
  for (ptrdiff_t kh = 0; kh < KH; ++kh)
    for (ptrdiff_t kw = 0; kw < KW; ++kw) {
      ptrdiff_t r = kh * DH, s = kw * DW;
      off[kh * KW + kw] = ((r % SH) * SW + s % SW) * stride + r / SH * ws + s / SW;
    }
  // Rows [i0, i1) and columns [j0, j1) of plane p = a * SW + b lie inside
  // the input.
  ptrdiff_t i0[VKP_DW_MAX_PHASES], i1[VKP_DW_MAX_PHASES];
  ptrdiff_t j0[VKP_DW_MAX_PHASES], j1[VKP_DW_MAX_PHASES];
  for (ptrdiff_t a = 0; a < SH; ++a)
    for (ptrdiff_t b = 0; b < SW; ++b) {
      ptrdiff_t p = a * SW + b;
      i0[p] = PT > a ? (PT - a + SH - 1) / SH : 0;
      i1[p] = H + PT > a ? (H + PT - a + SH - 1) / SH : 0;
      j0[p] = PL > b ? (PL - b + SW - 1) / SW : 0;
      j1[p] = W + PL > b ? (W + PL - b + SW - 1) / SW : 0;
      if (i0[p] > Hq) i0[p] = Hq;
      if (i1[p] > Hq) i1[p] = Hq;
      if (j0[p] > Wq) j0[p] = Wq;
      if (j1[p] > Wq) j1[p] = Wq;
      if (i1[p] < i0[p]) i1[p] = i0[p];
      if (j1[p] < j0[p]) j1[p] = j0[p];
    }
  ptrdiff_t x_len = C * H * W, ow_v = (OW + VKP_VLEN - 1) / VKP_VLEN * VKP_VLEN;
  for (ptrdiff_t c = c0; c < c1; ++c) {
    const float *wc = w + c * taps;
    float *yc = y + c * OH * OW;
    for (ptrdiff_t oh0 = r0; oh0 < r1; oh0 += R) {
      ptrdiff_t band = r1 - oh0 < R ? r1 - oh0 : R;
      for (ptrdiff_t p = 0; p < phases; ++p) {
        // Plane rows [oh0, end) of the band, rows [lo, hi) of them inside x.
        ptrdiff_t end = oh0 + band + Hq - OH;
        ptrdiff_t lo = i0[p] > oh0 ? i0[p] : oh0, hi = i1[p] < end ? i1[p] : end;
        float *plane = planes + p * stride;
        if (hi < lo) hi = lo = end;
        // Another band may have left input in the rest.
        if (R < OH && lo > oh0) memset(plane, 0, sizeof(float) * (size_t)((lo - oh0) * ws));
        if (R < OH && hi < end)
          memset(plane + (hi - oh0) * ws, 0, sizeof(float) * (size_t)((end - hi) * ws));
        if (hi == lo) continue;
        // Whole-vector rows stay inside x; the spare floats after the plane
        // take the last row's overrun, and the zeros after each row restore
        // the padding (what they clear of the next rows is written after).
        ptrdiff_t n = j1[p] - j0[p], reach = (n + VKP_VLEN - 1) / VKP_VLEN * VKP_VLEN * SW;
        ptrdiff_t at = c * H * W + (p / SW + lo * SH - PT) * W + p % SW + j0[p] * SW - PL;
        ptrdiff_t whole = at + reach <= x_len ? (x_len - reach - at) / (SH * W) + 1 : 0;
#if VKP_HAVE_SHUFFLEVECTOR
        // Column stride 2: planes (a, 0) and (a, 1) share their input rows;
        // when one starts a column after the other and both take the same
        // number of vectors, copy them in one pass.
        if (SW == 2 && p % 2 == 0) {
          ptrdiff_t q = p + 1, nq = j1[q] - j0[q], nv = (n + VKP_VLEN - 1) / VKP_VLEN;
          ptrdiff_t atq = c * H * W + (p / SW + lo * SH - PT) * W + 1 + j0[q] * SW - PL;
          if (n > 0 && nq > 0 && nv == (nq + VKP_VLEN - 1) / VKP_VLEN &&
              (atq == at + 1 || at == atq + 1)) {
            float *planeq = planes + q * stride;
            if (R < OH && lo > oh0) memset(planeq, 0, sizeof(float) * (size_t)((lo - oh0) * ws));
            if (R < OH && hi < end)
              memset(planeq + (hi - oh0) * ws, 0, sizeof(float) * (size_t)((end - hi) * ws));
            ptrdiff_t first = at < atq ? at : atq, reach2 = 2 * nv * VKP_VLEN;
            ptrdiff_t whole2 =
                first + reach2 <= x_len ? (x_len - reach2 - first) / (SH * W) + 1 : 0;
            float *dp = plane + (lo - oh0) * ws + j0[p], *dq = planeq + (lo - oh0) * ws + j0[q];
            if (at == first)
              vkp__dw_copy_pair(dp, n, dq, nq, ws, x + first, SH * W, hi - lo, nv, whole2);
            else
              vkp__dw_copy_pair(dq, nq, dp, n, ws, x + first, SH * W, hi - lo, nv, whole2);
            ++p;
            continue;
          }
        }
#endif
        vkp__dw_copy_rows(plane + (lo - oh0) * ws + j0[p], ws, x + at, SH * W, hi - lo,
                          n, SW, whole, 1);
      }
      if (by_rows) {
        ptrdiff_t direct = band;  // rows whose stores stay in the channel
        if (OW < VKP_VLEN) {
          direct = OH * OW >= VKP_VLEN ? (OH * OW - VKP_VLEN) / OW + 1 - oh0 : 0;
          direct = direct < 0 ? 0 : direct > band ? band : direct;
        }
        float *yb = yc + oh0 * OW;
        // The common strides with the window's columns as constants.
        if (SH == 1 && SW == 1 && DW == 1)
          vkp__dw_band3x3(planes, ws, 0, 1, 2, wc, 1, band, direct, yb, OW, z, rep, c);
        else if (SH == 2 && SW == 2 && DW == 1)
          vkp__dw_band3x3(planes, ws, 2 * stride, stride, 1, wc, 2, band, direct, yb, OW, z,
                          rep, c);
        else if (SH == 1)
          vkp__dw_band3x3(planes, ws, 0, off[1], off[2], wc, 1, band, direct, yb, OW, z,
                          rep, c);
        else
          vkp__dw_band3x3(planes, ws, SW * stride, off[1], off[2], wc, 2, band, direct, yb,
                          OW, z, rep, c);
        continue;
      }
      // With Wq == OW the output rows are contiguous in y: no copy out.
      ptrdiff_t zlen = band * Wq;
      float *out = Wq == OW ? yc + oh0 * OW : z;
      ptrdiff_t whole = Wq == OW ? zlen / VKP_VLEN : (zlen + VKP_VLEN - 1) / VKP_VLEN;
      if (taps == 9)  // 3x3: a tap loop of constant length
        vkp__dw_taps(planes, off, wc, 9, out, whole);
      else
        vkp__dw_taps(planes, off, wc, taps, out, whole);
      if (Wq == OW) {
        ptrdiff_t done = whole * VKP_VLEN;
        if (done < zlen) {
          vkp__dw_taps(planes + done, off, wc, taps, z, 1);
          vkp__dw_gather(out + done, z, zlen - done, 1);
        }
      } else {
        // Whole vectors spill into the next row, which is written after;
        // the last rows, whose spill would leave the channel, go exactly.
        ptrdiff_t whole_rows =
            OH * OW >= ow_v ? (OH * OW - ow_v) / OW + 1 - oh0 : 0;
        vkp__dw_copy_rows(yc + oh0 * OW, OW, z, Wq, band, OW, 1, whole_rows, 0);
      }
    }
    if (ep && !rep && r1 > r0)
      ep(yc + r0 * OW, OH * OW, c, r0 * OW, 1, (r1 - r0) * OW, batch, ep_ctx);
  }
}

typedef struct vkp_dw_job_t {
  const float *x, *w;
  float *y;
  ptrdiff_t C, H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t batch;
  float *scratch;  // VKP_DW_SCRATCH_FLOATS per worker
  int by_rows;     // tasks take output rows of every channel, else channels
} vkp_dw_job_t;

static void vkp_dw_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_dw_job_t *j = arg;
  vkp__dw_channels(j->x, j->w, j->y, j->C, j->H, j->W, j->KH, j->KW, j->SH, j->SW, j->PT,
                   j->PL, j->DH, j->DW, j->OH, j->OW, j->ep, j->ep_ctx, j->batch,
                   j->scratch + worker * VKP_DW_SCRATCH_FLOATS(j->KH, j->KW, j->SH, j->SW,
                                                               j->DH, j->DW, j->OH, j->OW),
                   j->by_rows ? 0 : lo, j->by_rows ? j->C : hi, j->by_rows ? lo : 0,
                   j->by_rows ? hi : j->OH);
}

// Whether `rows` output rows split across the pool's threads within 10% of
// evenly. A kernel whose producer split its output by rows (a GEMM by
// columns, Winograd by tile rows) then splits by rows too, so each thread
// reads what it wrote, from its own cache; maps of few rows (7 over 2
// threads: 4 and 3) split their channels instead.
static inline int vkp_rows_split_evenly(ptrdiff_t rows) {
  ptrdiff_t p = vkp_workers();
  return p > 1 && rows >= p && 10 * ((rows + p - 1) / p) * p <= 11 * rows;
}

// The depthwise entry (see vkp__dw_channels): `scratch` holds
// VKP_STAGE_THREADS * VKP_DW_SCRATCH_FLOATS(...) floats; the output rows
// (or, on maps of few rows, the channels) are split across the pool when
// there is enough work.
VKP_FN void vkp_conv_depthwise(const float *x, const float *w, float *y, ptrdiff_t C,
                               ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW,
                               ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL,
                               ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW,
                               vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch,
                               float *scratch) {
  // By rows only where each thread's band is long next to the window's
  // overlap: a band copies (KH - 1) * DH input rows more than it outputs,
  // and every channel's planes are set up once per band (MobileNetV2 on 2
  // threads: its 14x14 depthwise layers took 0.041 ms by rows, 0.022 by
  // channels; its 56x56 ones and the 1x1 convolutions after them gained).
  int rows = KH * KW <= VKP_DW_MAX_TAPS && SH * SW <= VKP_DW_MAX_PHASES &&
             vkp_rows_split_evenly(OH) &&
             8 * (KH - 1) * DH * vkp_workers() <= SH * OH;
  vkp_dw_job_t j = {x, w, y, C, H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW,
                    ep, ep_ctx, batch, scratch, rows};
  if (rows)
    vkp_parallel_range(OH, VKP_GRAIN(C * OW * KH * KW), vkp_dw_task, &j);
  else
    vkp_parallel_range(C, VKP_GRAIN(OH * OW * KH * KW), vkp_dw_task, &j);
}

// ---------------------------------------------------------------------------
// Pointwise convolutions on 7x7 maps, channels across the vector lanes.
// With the output pixels across the lanes, P = 49 pixels are a 32-column
// tile, a 16-column one and a last column of their own, and those tails
// cost 10-15% of the layer; with the output channels across the lanes
// (multiples of 16 in such networks) the tiles are whole but for the last
// pixel rows. The product C' = X^T W^T (P x M: pixels by channels) goes
// into scratch through the GEMM, the input planes its A operand (packed per
// call) and the weights prepacked at load as its B operand (W^T by
// vkp_prepack_b); it is then transposed into the planar output 16 channels
// at a time, the row epilogue applied on the way. On 14x14 maps the
// transposed product was faster too, but not by the transpose's cost.

// Scratch for C', next to the GEMM's.
#define VKP_PW_T_FLOATS(M, P) ((ptrdiff_t)(M) * (P) + 16)
// Whether stages use it (the transpose's fast path is AVX-512's).
#if defined(__AVX512F__) && VKP_VLEN == 16
#define VKP_PW_T_OK 1
#else
#define VKP_PW_T_OK 0
#endif

typedef struct vkp_pw_t_job_t {
  const float *ct;
  float *y;
  ptrdiff_t M, P;
  vkp_epilogue_fn ep;
  const void *ep_ctx;
  ptrdiff_t row0, batch;
} vkp_pw_t_job_t;

// Output channels [16 * lo, 16 * hi) from C''s columns.
static void vkp_pw_t_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_pw_t_job_t *j = arg;
  const ptrdiff_t M = j->M, P = j->P;
  const vkp_row_ep_t *rep = vkp_row_ep_of(j->ep, j->ep_ctx);
  (void)worker;
  (void)rep;  // applied in the transpose with AVX-512
  for (ptrdiff_t b = lo; b < hi; ++b) {
    const ptrdiff_t c0 = 16 * b, cn = M - c0 < 16 ? M - c0 : 16;
    float *yb = j->y + c0 * P;
    int fused = 0;  // the row epilogue applied to the transposed rows
#if defined(__AVX512F__) && VKP_VLEN == 16
    if (cn == 16) {
      fused = rep != NULL;
      for (ptrdiff_t p0 = 0; p0 < P; p0 += 16) {
        const ptrdiff_t pn = P - p0 < 16 ? P - p0 : 16;
        const __mmask16 m = (__mmask16)((1u << pn) - 1u);
        __m512 r[16];
        VKP_UNROLL
        for (int i = 0; i < 16; ++i)
          r[i] = i < pn ? _mm512_loadu_ps(j->ct + (p0 + i) * M + c0) : _mm512_setzero_ps();
        vkp__tr16(r);
        VKP_UNROLL
        for (int i = 0; i < 16; ++i) {
          if (rep) r[i] = (__m512)vkp_row_ep_vec(rep, j->row0 + c0 + i, (vkp_vec_t)r[i]);
          _mm512_mask_storeu_ps(yb + i * P + p0, m, r[i]);
        }
      }
    } else
#endif
    {
      for (ptrdiff_t c = 0; c < cn; ++c)
        for (ptrdiff_t p = 0; p < P; ++p) yb[c * P + p] = j->ct[p * M + c0 + c];
    }
    if (j->ep && !fused) j->ep(yb, P, j->row0 + c0, 0, cn, P, j->batch, j->ep_ctx);
  }
}

// y (M x P, planar) = W x (K x P, planar), then the epilogue (rows: output
// channels from `row0`). `packed_w`: W^T prepacked by vkp_prepack_b (K rows
// of M columns). `ct`: VKP_PW_T_FLOATS(M, P) floats; `scratch`: the GEMM's
// for `threads`. P >= VKP_MR / 2.
VKP_FN void vkp_conv_pointwise_t(const float *x, const float *packed_w, float *y, ptrdiff_t M,
                                 ptrdiff_t K, ptrdiff_t P, vkp_epilogue_fn ep,
                                 const void *ep_ctx, ptrdiff_t row0, ptrdiff_t batch,
                                 float *ct, float *scratch, int threads) {
  const vkp_bsrc_t w = {.packed = packed_w, .npad = (M + VKP_NR - 1) / VKP_NR * VKP_NR};
  vkp_gemm(P, M, K, 1.0f, x, 1, P, NULL, &w, ct, M, NULL, NULL, 0, 0, scratch, threads);
  vkp_pw_t_job_t j = {ct, y, M, P, ep, ep_ctx, row0, batch};
  vkp_parallel_range((M + 15) / 16, VKP_GRAIN(16 * P), vkp_pw_t_task, &j);
}

// The taps k of a pooling window starting at `start` (step `dil`, `k_n`
// taps) that land inside [0, n) -> [*in0, *in1), and inside the padded
// extent [-pad0, n + pad1) -> [*pad_lo, *pad_hi).
static inline void vkp_pool_taps(ptrdiff_t start, ptrdiff_t dil, ptrdiff_t k_n,
                                 ptrdiff_t n, ptrdiff_t pad0, ptrdiff_t pad1,
                                 ptrdiff_t *in0, ptrdiff_t *in1,
                                 ptrdiff_t *pad_lo, ptrdiff_t *pad_hi) {
  ptrdiff_t a = 0, b = k_n, c = 0, d = k_n;
  while (a < k_n && start + a * dil < 0) ++a;
  while (b > a && start + (b - 1) * dil >= n) --b;
  while (c < k_n && start + c * dil < -pad0) ++c;
  while (d > c && start + (d - 1) * dil >= n + pad1) --d;
  *in0 = a;
  *in1 = b > a ? b : a;
  *pad_lo = c;
  *pad_hi = d > c ? d : c;
}

// max(a, b) that returns b when b is NaN: the reference's
// `acc = v > acc || v != v ? v : acc`, on vectors. MAXPS(v, acc) is
// `v > acc ? v : acc` exactly (acc where either is NaN), then v where v is
// NaN. With AVX-512 the max runs under the mask of v's ordered lanes and
// keeps v in the others: two instructions, not three with a separate
// blend; with AVX three, not the four of two compares, their union and a
// blend.
static inline vkp_vec_t vkp_vmax_nan(vkp_vec_t acc, vkp_vec_t v) {
#if defined(__AVX512F__) && VKP_VLEN == 16
  __mmask16 ordered = _mm512_cmp_ps_mask((__m512)v, (__m512)v, _CMP_ORD_Q);
  return (vkp_vec_t)_mm512_mask_max_ps((__m512)v, ordered, (__m512)v, (__m512)acc);
#elif defined(__AVX__) && VKP_VLEN == 8
  __m256 r = _mm256_max_ps((__m256)v, (__m256)acc);
  __m256 nan = _mm256_cmp_ps((__m256)v, (__m256)v, _CMP_UNORD_Q);
  return (vkp_vec_t)_mm256_blendv_ps(r, (__m256)v, nan);
#else
  vkp_ivec_t m = (v > acc) | (v != v);
  return (vkp_vec_t)((m & (vkp_ivec_t)v) | (~m & (vkp_ivec_t)acc));
#endif
}

// The sum of x[0..n): two vector accumulators, their lanes, then the
// remainder (not the sequential order: within float32 rounding of it).
VKP_FN float vkp_row_sum(const float *x, ptrdiff_t n) {
  vkp_vec_t a0 = {0}, a1 = {0};
  ptrdiff_t i = 0;
  for (; i + 2 * VKP_VLEN <= n; i += 2 * VKP_VLEN) {
    a0 += *(const vkp_uvec_t *)(x + i);
    a1 += *(const vkp_uvec_t *)(x + i + VKP_VLEN);
  }
  if (i + VKP_VLEN <= n) {
    a0 += *(const vkp_uvec_t *)(x + i);
    i += VKP_VLEN;
  }
  a0 += a1;
  float s = 0.0f;
  for (int l = 0; l < VKP_VLEN; ++l) s += a0[l];
  for (; i < n; ++i) s += x[i];
  return s;
}

static inline float vkp_max_nan(float acc, float v) {
  return v > acc || v != v ? v : acc;
}

// Padded row width vkp_maxpool2d works on; it needs 2 * that + 64 floats of
// scratch per thread (VKP_MAXPOOL_SCRATCH_FLOATS, evaluated by the generated
// source): the padded row and room for the vectors read past its end.
#define VKP_MAXPOOL_WB(W, KW, SW, PL, DW, OW)                                     \
  VKP_MAXZ(((ptrdiff_t)(OW) - 1) * (SW) + ((ptrdiff_t)(KW) - 1) * (DW) + 1, \
           (ptrdiff_t)(PL) + (W))
#define VKP_MAXPOOL_SCRATCH_FLOATS(W, KW, SW, PL, DW, OW) \
  ((2 * VKP_MAXPOOL_WB(W, KW, SW, PL, DW, OW) + 64 + 15) / 16 * 16 + 16)

// A vector of max-pooled outputs of one row at stride SW (1 or 2): lane l
// is the max over rows[0..nr) and taps kw of row[b + l * SW + kw * DW], the
// rows first, then the taps in order (as the reference, NaN included). At
// stride 2 a tap loads the 2 * VKP_VLEN - 1 floats it needs as two vectors
// and keeps the even elements. Reads columns [b, b + (VKP_VLEN - 1) * SW +
// (KW - 1) * DW], nothing past the last it needs.
// The max over rows[0..nr) of the vector at column o.
// (Three rows, a 3-high window inside the map, and two as straight-line
// code, so that the columns' maxima interleave instead of each waiting on
// a loop's chain.)
static inline vkp_vec_t vkp__maxpool_rows(const float *const *rows, ptrdiff_t nr, ptrdiff_t o) {
  vkp_vec_t t = *(const vkp_uvec_t *)(rows[0] + o);
  if (nr == 3)
    return vkp_vmax_nan(vkp_vmax_nan(t, *(const vkp_uvec_t *)(rows[1] + o)),
                        *(const vkp_uvec_t *)(rows[2] + o));
  if (nr == 2) return vkp_vmax_nan(t, *(const vkp_uvec_t *)(rows[1] + o));
  for (ptrdiff_t r = 1; r < nr; ++r) t = vkp_vmax_nan(t, *(const vkp_uvec_t *)(rows[r] + o));
  return t;
}

static inline vkp_vec_t vkp__maxpool_vec(const float *const *rows, ptrdiff_t nr, ptrdiff_t b,
                                         ptrdiff_t KW, ptrdiff_t SW, ptrdiff_t DW) {
  // The usual windows (3 wide at stride 1 or 2, 2 wide at stride 2) take
  // the rows' max once per column, in two or three vectors, and shuffle the
  // taps out of them (reading the same columns as the loop below): half the
  // loads and maxima of a max per tap.
  if (DW == 1 && SW == 2 && (KW == 2 || KW == 3)) {
    vkp_vec_t lo = vkp__maxpool_rows(rows, nr, b), hi = vkp__maxpool_rows(rows, nr, b + VKP_VLEN);
    vkp_vec_t t0 = vkp_vec_even(lo, hi), acc = vkp_vmax_nan(t0, vkp_vec_odd(lo, hi));
    if (KW == 3)
      acc = vkp_vmax_nan(
          acc, vkp_vec_next(t0, vkp__maxpool_rows(rows, nr, b + VKP_VLEN + 1), 1));
    return acc;
  }
  if (DW == 1 && SW == 1 && KW == 3) {
    vkp_vec_t t0 = vkp__maxpool_rows(rows, nr, b), t2 = vkp__maxpool_rows(rows, nr, b + 2);
    return vkp_vmax_nan(vkp_vmax_nan(t0, vkp_vec_next(t0, t2, 2)), t2);
  }
  vkp_vec_t acc = {0};
  for (ptrdiff_t kw = 0; kw < KW; ++kw) {
    const ptrdiff_t o = b + kw * DW;
    vkp_vec_t t;
    if (SW == 1) {
      t = *(const vkp_uvec_t *)(rows[0] + o);
      for (ptrdiff_t r = 1; r < nr; ++r) t = vkp_vmax_nan(t, *(const vkp_uvec_t *)(rows[r] + o));
    } else {
      vkp_vec_t lo = *(const vkp_uvec_t *)(rows[0] + o);
      vkp_vec_t hi = *(const vkp_uvec_t *)(rows[0] + o + VKP_VLEN - 1);
      for (ptrdiff_t r = 1; r < nr; ++r) {
        lo = vkp_vmax_nan(lo, *(const vkp_uvec_t *)(rows[r] + o));
        hi = vkp_vmax_nan(hi, *(const vkp_uvec_t *)(rows[r] + o + VKP_VLEN - 1));
      }
      t = vkp_vec_even_skew(lo, hi);
    }
    acc = kw == 0 ? t : vkp_vmax_nan(acc, t);
  }
  return acc;
}

#if defined(__AVX512F__) && VKP_VLEN == 16
// The max over rows r0, r1, r2 of input columns [at, at + 16) of a row read
// up to column n (exclusive) under a mask; lanes past n are 0.
static inline vkp_vec_t vkp__max3_cols(const float *r0, const float *r1, const float *r2,
                                       ptrdiff_t at, ptrdiff_t n) {
  if (at >= n) return (vkp_vec_t){0};
  const __mmask16 m = n - at >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - at)) - 1);
  vkp_vec_t t = (vkp_vec_t)_mm512_maskz_loadu_ps(m, r0 + at);
  t = vkp_vmax_nan(t, (vkp_vec_t)_mm512_maskz_loadu_ps(m, r1 + at));
  return vkp_vmax_nan(t, (vkp_vec_t)_mm512_maskz_loadu_ps(m, r2 + at));
}

// One output row of a 3x3 stride-2 max pooling whose windows lie inside the
// input row from its first column (no left padding): 16 outputs per chunk
// from the rows' max over 32 columns, its even and odd lanes, and the column
// after each even one (the next chunk's first even lane supplies the last).
// Masked loads read input columns [0, 2 * OW] and nothing past them, masked
// stores write the last chunk's lanes: no overlapping vectors, no scalar
// remainder, any OW (the 13 of a 27-wide map and the 27 of a 55-wide one).
static inline void vkp__maxpool3s2_row(const float *r0, const float *r1, const float *r2,
                                       float *y, ptrdiff_t OW) {
  const ptrdiff_t n = 2 * OW + 1;
  vkp_vec_t lo = vkp__max3_cols(r0, r1, r2, 0, n), hi = vkp__max3_cols(r0, r1, r2, 16, n);
  vkp_vec_t e = vkp_vec_even(lo, hi), o = vkp_vec_odd(lo, hi);
  for (ptrdiff_t ow = 0; ow < OW; ow += 16) {
    const ptrdiff_t c = 2 * ow + 32;
    lo = vkp__max3_cols(r0, r1, r2, c, n);
    hi = vkp__max3_cols(r0, r1, r2, c + 16, n);
    const vkp_vec_t e2 = vkp_vec_even(lo, hi);
    // Third tap: lanes 1.. of e, then lane 0 of e2.
    const vkp_vec_t v = vkp_vmax_nan(vkp_vmax_nan(e, o), vkp_vec_next(e, e2, 16));
    const ptrdiff_t k = OW - ow;
    _mm512_mask_storeu_ps(y + ow, k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k) - 1),
                          (__m512)v);
    e = e2;
    o = vkp_vec_odd(lo, hi);
  }
}

// Two rows of vkp__maxpool3s2_row: output rows from input rows r .. r + 4
// (row stride W; the middle one is in both windows), into y and y + OW.
// Chunks whose 32 columns lie inside the rows load without masks.
static inline __attribute__((always_inline)) void vkp__max3s2_load(
    const float *r, ptrdiff_t W, ptrdiff_t c, ptrdiff_t n, int masked, vkp_vec_t *e,
    vkp_vec_t *o) {
  vkp_vec_t x[2][5];
  VKP_UNROLL
  for (int h = 0; h < 2; ++h) {
    __mmask16 m = (__mmask16)0xffff;
    if (masked) {
      const ptrdiff_t k = n - c - 16 * h;
      m = k >= 16 ? (__mmask16)0xffff : k <= 0 ? (__mmask16)0 : (__mmask16)((1u << k) - 1u);
    }
    VKP_UNROLL
    for (int i = 0; i < 5; ++i)
      x[h][i] = masked ? (vkp_vec_t)_mm512_maskz_loadu_ps(m, r + i * W + c + 16 * h)
                       : (vkp_vec_t)_mm512_loadu_ps(r + i * W + c + 16 * h);
  }
  vkp_vec_t v[2][2];
  VKP_UNROLL
  for (int h = 0; h < 2; ++h) {
    v[0][h] = vkp_vmax_nan(vkp_vmax_nan(x[h][0], x[h][1]), x[h][2]);
    v[1][h] = vkp_vmax_nan(vkp_vmax_nan(x[h][3], x[h][4]), x[h][2]);
  }
  VKP_UNROLL
  for (int q = 0; q < 2; ++q) {
    e[q] = vkp_vec_even(v[q][0], v[q][1]);
    o[q] = vkp_vec_odd(v[q][0], v[q][1]);
  }
}

static inline void vkp__maxpool3s2_rows2(const float *r, ptrdiff_t W, float *y, ptrdiff_t OW) {
  const ptrdiff_t n = 2 * OW + 1;  // the columns the windows read
  vkp_vec_t e[2], o[2];
  vkp__max3s2_load(r, W, 0, n, n < 32, e, o);
  for (ptrdiff_t ow = 0; ow < OW; ow += 16) {
    const ptrdiff_t c = 2 * ow + 32, k = OW - ow;
    vkp_vec_t e2[2] = {{0}, {0}}, o2[2] = {{0}, {0}};  // past the columns: unused lanes
    if (c + 32 <= n) vkp__max3s2_load(r, W, c, n, 0, e2, o2);
    else if (c < n) vkp__max3s2_load(r, W, c, n, 1, e2, o2);
    const __mmask16 m = k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k) - 1u);
    VKP_UNROLL
    for (int q = 0; q < 2; ++q) {
      const vkp_vec_t v = vkp_vmax_nan(vkp_vmax_nan(e[q], o[q]), vkp_vec_next(e[q], e2[q], 16));
      _mm512_mask_storeu_ps(y + q * OW + ow, m, (__m512)v);
      e[q] = e2[q];
      o[q] = o2[q];
    }
  }
}
#endif

// Max pooling. The output columns whose windows lie inside the row, [d0,
// e), come in vectors straight from the input rows (vkp__maxpool_vec; the
// last vector overlaps the one before rather than leave a remainder; fewer
// columns than a vector take one, reading on into the next rows): no
// store and reload in between, whose addresses could alias the input's in
// the store buffer (4 KiB apart), which made one thread's share take twice
// the other's. The columns at the edges (all of them at other strides, with
// more window rows than VKP_MAX_POOL_TAPS, or in the last rows of x when
// [d0, e) is narrower than a vector) come from the max over the window's
// rows of the input columns they need, written into a row of scratch padded
// with -inf on both sides.
// NaN propagates as in the reference; a window wholly in the padding gives
// -inf. Channels [c0, c1), output rows [oh0, oh1) of each.
//
// Channel c of x starts at x + c * xcs and holds input rows from `rb` on
// (the band of a fused convolution, vkp_conv_direct_pool; else xcs = H * W,
// rb = 0); channel c of y starts at y + c * ycs; nothing at or past x_end
// is read.
static void vkp__maxpool_band(const float *x, ptrdiff_t xcs, ptrdiff_t rb, const float *x_end,
                              float *y, ptrdiff_t ycs, ptrdiff_t H, ptrdiff_t W, ptrdiff_t KH,
                              ptrdiff_t KW, ptrdiff_t SH, ptrdiff_t SW, ptrdiff_t PT,
                              ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OW,
                              float *scratch, ptrdiff_t c0, ptrdiff_t c1, ptrdiff_t oh0,
                              ptrdiff_t oh1) {
  const ptrdiff_t wb = VKP_MAXPOOL_WB(W, KW, SW, PL, DW, OW);
  const int vec = (SW == 1 || SW == 2) && KH <= VKP_MAX_POOL_TAPS;
  float *vp = scratch;  // padded column j is input column j - PL
  for (ptrdiff_t i = 0; i < wb + 2 * VKP_VLEN; ++i) vp[i] = -INFINITY;
  // [d0, e): the columns whose windows lie inside the row.
  ptrdiff_t d0 = (PL + SW - 1) / SW, e = 0;
  if (W - 1 + PL - (KW - 1) * DW >= 0) e = (W - 1 + PL - (KW - 1) * DW) / SW + 1;
  if (e > OW) e = OW;
  if (!vec || e <= d0) d0 = e = 0;  // every column from the padded row
  // Narrower than a vector (small maps): one vector per row whose lanes past
  // e are dropped and whose reads run on into the next rows, where those
  // stay inside x (else the row goes through the padded row).
  const int narrow = e - d0 > 0 && e - d0 < VKP_VLEN;
  const ptrdiff_t reads = (d0 * SW - PL) + (VKP_VLEN - 1) * SW + (KW - 1) * DW + 1;
  // Input columns the edge columns [0, d0) and [e, OW) need.
  ptrdiff_t l1 = d0 > 0 ? (d0 - 1) * SW - PL + (KW - 1) * DW + 1 : 0;
  if (l1 > W) l1 = W;
  const ptrdiff_t r0 = VKP_MAXZ(e * SW - PL, (ptrdiff_t)0);
  // The common 3x3 stride-2 window (ResNet's and SqueezeNet's poolings)
  // over rows whose windows all lie inside them: straight-line code per row
  // (the general path's per-row set-up cost more than a 55-wide row's four
  // vectors); with AVX-512 masked chunks of 16 outputs for any width
  // (vkp__maxpool3s2_row), else whole vectors, its shapes constants.
#if defined(__AVX512F__) && VKP_VLEN == 16
  const int fast3 = KH == 3 && KW == 3 && SH == 2 && SW == 2 && DH == 1 && DW == 1 &&
                    PL == 0 && e == OW;
#else
  const int fast3 = KH == 3 && KW == 3 && SH == 2 && SW == 2 && DH == 1 && DW == 1 &&
                    d0 == 0 && e == OW && !narrow;
#endif
  const float *rows[VKP_MAX_POOL_TAPS];
  for (ptrdiff_t c = c0; c < c1; ++c) {
    const float *xc = x + c * xcs;
    float *yc = y + c * ycs;
    for (ptrdiff_t oh = oh0; oh < oh1; ++oh) {
      const ptrdiff_t h0 = oh * SH - PT;
#if defined(__AVX512F__) && VKP_VLEN == 16
      if (fast3 && h0 >= 0 && h0 + 4 < H && oh + 1 < oh1) {
        // Two rows at once (they share their middle input row); the next
        // pair's rows are prefetched: the input comes from L3 (SqueezeNet's
        // first pooling) and the hardware's prefetch alone left it waiting.
        const float *r = xc + (h0 - rb) * W;
        const float *pf = r + 5 * W, *pl = r + 9 * W < x_end ? r + 9 * W : x_end;
        for (; pf < pl; pf += 16) __builtin_prefetch(pf);
        vkp__maxpool3s2_rows2(r, W, yc + oh * OW, OW);
        ++oh;
        continue;
      }
#endif
      if (fast3 && h0 >= 0 && h0 + 2 < H) {
        const float *const three[3] = {xc + (h0 - rb) * W, xc + (h0 + 1 - rb) * W,
                                       xc + (h0 + 2 - rb) * W};
        float *restrict yr = yc + oh * OW;
#if defined(__AVX512F__) && VKP_VLEN == 16
        vkp__maxpool3s2_row(three[0], three[1], three[2], yr, OW);
#else
        for (ptrdiff_t ow = 0; ow < OW; ow += VKP_VLEN) {
          ptrdiff_t at = ow + VKP_VLEN <= OW ? ow : OW - VKP_VLEN;
          *(vkp_uvec_t *)(yr + at) = vkp__maxpool_vec(three, 3, at * 2 - PL, 3, 2, 1);
        }
#endif
        continue;
      }
      ptrdiff_t nr = 0, first = -1, last = -1;
      for (ptrdiff_t kh = 0; kh < KH; ++kh) {
        ptrdiff_t ih = h0 + kh * DH;
        if (ih < 0 || ih >= H) continue;
        if (first < 0) first = ih;
        last = ih;
        if (nr < VKP_MAX_POOL_TAPS) rows[nr] = xc + (ih - rb) * W;
        ++nr;
      }
      float *restrict yr = yc + oh * OW;
      if (nr == 0) {
        for (ptrdiff_t ow = 0; ow < OW; ++ow) yr[ow] = -INFINITY;
        continue;
      }
      // This row's vector columns [rd0, re) and the input columns its edges
      // need, [0, rl1) and [rr0, W): none and all of them at the end of x,
      // where a narrow row's vector would read past it.
      const int tail = narrow && xc + (last - rb) * W + reads > x_end;
      const ptrdiff_t rd0 = tail ? 0 : d0, re = tail ? 0 : e;
      const ptrdiff_t rl1 = tail ? 0 : l1, rr0 = tail ? 0 : r0;
      if (narrow && !tail) {
        vkp_vec_t v = vkp__maxpool_vec(rows, nr, rd0 * SW - PL, KW, SW, DW);
        for (ptrdiff_t l = 0; l < re - rd0; ++l) yr[rd0 + l] = v[l];
      } else if (!narrow) {
        for (ptrdiff_t ow = rd0; ow < re; ow += VKP_VLEN) {
          ptrdiff_t at = ow + VKP_VLEN <= re ? ow : re - VKP_VLEN;
          *(vkp_uvec_t *)(yr + at) = vkp__maxpool_vec(rows, nr, at * SW - PL, KW, SW, DW);
        }
      }
      if (rd0 == 0 && re == OW) continue;
      // The edges: the rows' max over input columns [0, l1) and [r0, W)
      // (one range [0, W) where they meet), in vectors where the row has
      // one (the last one overlapping).
      float *vr = vp + PL;
      for (int part = rr0 <= rl1; part < 2; ++part) {
        const ptrdiff_t i0 = part ? (rr0 <= rl1 ? 0 : rr0) : 0, i1 = part ? W : rl1;
        ptrdiff_t i = i0;
        for (; i < i1 && W >= VKP_VLEN; i += VKP_VLEN) {
          ptrdiff_t at = i + VKP_VLEN <= W ? i : W - VKP_VLEN;
          vkp_vec_t m = *(const vkp_uvec_t *)(xc + (first - rb) * W + at);
          for (ptrdiff_t ih = first + DH; ih <= last; ih += DH)
            m = vkp_vmax_nan(m, *(const vkp_uvec_t *)(xc + (ih - rb) * W + at));
          *(vkp_uvec_t *)(vr + at) = m;
        }
        for (; i < i1; ++i) {
          float m = xc[(first - rb) * W + i];
          for (ptrdiff_t ih = first + DH; ih <= last; ih += DH)
            m = vkp_max_nan(m, xc[(ih - rb) * W + i]);
          vr[i] = m;
        }
      }
      const float *pad = vp;
      for (int part = 0; part < 2; ++part) {
        ptrdiff_t ow = part ? re : 0;
        const ptrdiff_t end = part ? OW : rd0;
        if (vec) {
          for (; ow < end; ow += VKP_VLEN) {
            vkp_vec_t acc = vkp__maxpool_vec(&pad, 1, ow * SW, KW, SW, DW);
            ptrdiff_t n = end - ow < VKP_VLEN ? end - ow : VKP_VLEN;
            for (ptrdiff_t l = 0; l < n; ++l) yr[ow + l] = acc[l];
          }
          continue;
        }
        for (; ow < end; ++ow) {  // any stride, any width
          float acc = vp[ow * SW];
          for (ptrdiff_t kw = 1; kw < KW; ++kw) acc = vkp_max_nan(acc, vp[ow * SW + kw * DW]);
          yr[ow] = acc;
        }
      }
    }
  }
}

static void vkp__maxpool_block(const float *x, float *y, ptrdiff_t C, ptrdiff_t H,
                               ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                               ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH,
                               ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW, float *scratch,
                               ptrdiff_t c0, ptrdiff_t c1, ptrdiff_t oh0, ptrdiff_t oh1) {
  vkp__maxpool_band(x, H * W, 0, x + C * H * W, y, OH * OW, H, W, KH, KW, SH, SW, PT, PL, DH,
                    DW, OW, scratch, c0, c1, oh0, oh1);
}

typedef struct vkp_pool_job_t {
  const float *x;
  float *y;
  ptrdiff_t C, H, W, KH, KW, SH, SW, PT, PL, PB, PR, DH, DW, OH, OW;
  int is_max, count_include_pad;
  float *scratch;  // max pooling: VKP_MAXPOOL_SCRATCH_FLOATS per worker
  int by_rows;     // max pooling: tasks take output rows of every channel
} vkp_pool_job_t;

static void vkp_maxpool_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_pool_job_t *j = arg;
  vkp__maxpool_block(
      j->x, j->y, j->C, j->H, j->W, j->KH, j->KW, j->SH, j->SW, j->PT, j->PL, j->DH, j->DW, j->OH,
      j->OW,
      vkp_align64(j->scratch +
                  worker * VKP_MAXPOOL_SCRATCH_FLOATS(j->W, j->KW, j->SW, j->PL, j->DW, j->OW)),
      j->by_rows ? 0 : lo, j->by_rows ? j->C : hi, j->by_rows ? lo : 0, j->by_rows ? hi : j->OH);
}

// Max pooling of C planes (vkp__maxpool_block), the output rows (or, on
// maps of few rows, the channels) split across the pool; `scratch` holds
// VKP_STAGE_THREADS * VKP_MAXPOOL_SCRATCH_FLOATS.
VKP_FN void vkp_maxpool2d(const float *x, float *y, ptrdiff_t C, ptrdiff_t H,
                          ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                          ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH,
                          ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW, float *scratch) {
  vkp_pool_job_t j = {.x = x, .y = y, .C = C, .H = H, .W = W, .KH = KH, .KW = KW, .SH = SH,
                      .SW = SW, .PT = PT, .PL = PL, .DH = DH, .DW = DW, .OH = OH,
                      .OW = OW, .scratch = scratch};
  j.by_rows = vkp_rows_split_evenly(OH);
  if (j.by_rows)
    vkp_parallel_range(OH, VKP_GRAIN(C * OW * (KH + KW)), vkp_maxpool_task, &j);
  else
    vkp_parallel_range(C, VKP_GRAIN(OH * OW * (KH + KW)), vkp_maxpool_task, &j);
}

// ---------------------------------------------------------------------------
// A shallow convolution (vkp_conv_direct) whose only reader is a max pooling
// (SqueezeNet's and ResNet's first layers): the pooled rows are split
// across the pool, and each thread computes the convolution's rows in bands
// of up to VKP_CONV_POOL_BAND_FLOATS (every channel's rows of the band, in
// its own scratch, kept in L2), pools them and moves on; rows two bands
// share are moved, not recomputed. The convolution's output (3.2 MB for
// 64 x 111 x 111) is never written: alone it took the layer 0.25 ms, in the
// model 0.38, the rest having evicted its cache lines between frames.
// Falls back to the two kernels (through y_conv) where the band does not
// apply: a general epilogue, rows the tile does not take, a band too small
// for one pooled row. Scratch: VKP_CONV_POOL_FLOATS.
#ifndef VKP_CONV_POOL_BAND_FLOATS
#define VKP_CONV_POOL_BAND_FLOATS 131072
#endif
#define VKP_CONV_POOL_THREAD_FLOATS(OW, PKW, PSW, PPL, PDW, POW) \
  ((ptrdiff_t)VKP_CONV_POOL_BAND_FLOATS + VKP_MAXPOOL_SCRATCH_FLOATS(OW, PKW, PSW, PPL, PDW, POW) + 32)
#define VKP_CONV_POOL_FLOATS(C, KH, KW, SH, SW, DH, DW, OH, OW, PKW, PSW, PPL, PDW, POW) \
  (VKP_CONV_DIRECT_FLOATS(C, KH, KW, SH, SW, DH, DW, OH, OW) +                          \
   (ptrdiff_t)VKP_STAGE_THREADS * VKP_CONV_POOL_THREAD_FLOATS(OW, PKW, PSW, PPL, PDW, POW))

typedef struct vkp_conv_pool_job_t {
  vkp_conv_direct_job_t conv;
  float *y;  // the pooled output
  ptrdiff_t PKH, PKW, PSH, PSW, PPT, PPL, PDH, PDW, POH, POW, R;
  float *scratch;  // per worker: VKP_CONV_POOL_THREAD_FLOATS
  ptrdiff_t thread_floats;
} vkp_conv_pool_job_t;

// The convolution rows pooled row p reads end before this one.
static inline ptrdiff_t vkp__conv_pool_end(const vkp_conv_pool_job_t *j, ptrdiff_t p) {
  ptrdiff_t e = p * j->PSH - j->PPT + (j->PKH - 1) * j->PDH + 1;
  return e < j->conv.OH ? (e > 0 ? e : 0) : j->conv.OH;
}

static void vkp_conv_pool_task(void *arg, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_conv_pool_job_t *j = arg;
  const vkp_conv_direct_job_t *cj = &j->conv;
  const vkp_row_ep_t *rep = vkp_row_ep_of(cj->ep, cj->ep_ctx);
  const ptrdiff_t OW = cj->OW, plane = j->R * OW;
  float *band = vkp_align64(j->scratch + worker * j->thread_floats);
  float *pscratch = vkp_align64(band + VKP_CONV_POOL_BAND_FLOATS);
  ptrdiff_t have0 = 0, have1 = 0;  // the band holds convolution rows [have0, have1)
  for (ptrdiff_t q = lo, q1; q < hi; q = q1) {
    ptrdiff_t cr0 = q * j->PSH - j->PPT;
    cr0 = cr0 < 0 ? 0 : cr0 > cj->OH ? cj->OH : cr0;
    for (q1 = q + 1; q1 < hi && vkp__conv_pool_end(j, q1) - cr0 <= j->R; ++q1) {
    }
    ptrdiff_t cr1 = vkp__conv_pool_end(j, q1 - 1), start = cr0;
    if (cr1 < cr0) cr1 = cr0;
    if (have0 <= cr0 && cr0 < have1) {  // move the rows this band shares
      if (cr0 > have0)
        for (ptrdiff_t m = 0; m < cj->M; ++m)
          memmove(band + m * plane, band + m * plane + (cr0 - have0) * OW,
                  sizeof(float) * (size_t)((have1 - cr0) * OW));
      start = have1 < cr1 ? have1 : cr1;
    }
    vkp__conv_direct_rows(cj, start, cr1, band, plane, cr0, rep);
    have0 = cr0;
    have1 = cr1;
    vkp__maxpool_band(band, plane, cr0, band + (cj->M - 1) * plane + (cr1 - cr0) * OW, j->y,
                      j->POH * j->POW, cj->OH, OW, j->PKH, j->PKW, j->PSH, j->PSW, j->PPT,
                      j->PPL, j->PDH, j->PDW, j->POW, pscratch, 0, cj->M, q, q1);
  }
}

VKP_FN void vkp_conv_direct_pool(
    const float *x, const float *packed_a, float *y_conv, float *y, ptrdiff_t C, ptrdiff_t H,
    ptrdiff_t W, ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH, ptrdiff_t SW,
    ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW,
    vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t ep_row0, ptrdiff_t batch, ptrdiff_t PKH,
    ptrdiff_t PKW, ptrdiff_t PSH, ptrdiff_t PSW, ptrdiff_t PPT, ptrdiff_t PPL, ptrdiff_t PDH,
    ptrdiff_t PDW, ptrdiff_t POH, ptrdiff_t POW, float *scratch, int threads) {
  const ptrdiff_t K = C * KH * KW, R = VKP_CONV_POOL_BAND_FLOATS / (M * OW);
  if (K > VKP_KC || OW < VKP_NR || (SW != 1 && SW != 2) || (ep && !vkp_row_ep_of(ep, ep_ctx)) ||
      R < (PKH - 1) * PDH + 1) {
    vkp_conv_direct(x, packed_a, y_conv, C, H, W, M, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW, ep,
                    ep_ctx, ep_row0, batch, scratch, threads);
    vkp_maxpool2d(y_conv, y, M, OH, OW, PKH, PKW, PSH, PSW, PPT, PPL, PDH, PDW, POH, POW,
                  scratch);
    return;
  }
  ptrdiff_t off[VKP_KC];
  vkp_conv_pool_job_t j = {
      .conv = vkp__conv_direct_setup(x, packed_a, y_conv, C, H, W, M, KH, KW, SH, SW, PT, PL,
                                     DH, DW, OH, OW, ep, ep_ctx, ep_row0, batch, scratch, off),
      .y = y, .PKH = PKH, .PKW = PKW, .PSH = PSH, .PSW = PSW, .PPT = PPT, .PPL = PPL,
      .PDH = PDH, .PDW = PDW, .POH = POH, .POW = POW, .R = R,
      .scratch = scratch + VKP_CONV_DIRECT_FLOATS(C, KH, KW, SH, SW, DH, DW, OH, OW),
      .thread_floats = VKP_CONV_POOL_THREAD_FLOATS(OW, PKW, PSW, PPL, PDW, POW)};
  vkp_parallel_range(POH, VKP_GRAIN(OW * M * K * PSH), vkp_conv_pool_task, &j);
}

// Max (is_max) or average pooling of channels [c0, c1). Windows are clipped
// to the input; average divides by the in-input count, or with
// count_include_pad by the count inside the padded input.
static void vkp__pool_channels(const float *x, float *y, ptrdiff_t H,
                               ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                               ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t PB,
                               ptrdiff_t PR, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH,
                               ptrdiff_t OW, int is_max, int count_include_pad,
                               ptrdiff_t c0, ptrdiff_t c1) {
  // Average pooling's column counts (taps inside the input, and inside the
  // padded input), once for every row and channel.
  enum { VKP_POOL_COLS = 512 };
  int32_t in_cols[VKP_POOL_COLS], pad_cols[VKP_POOL_COLS];
  const int rows_at_once = !is_max && OW <= VKP_POOL_COLS;
  for (ptrdiff_t ow = 0; rows_at_once && ow < OW; ++ow) {
    ptrdiff_t kw0, kw1, pw0, pw1;
    vkp_pool_taps(ow * SW - PL, DW, KW, W, PL, PR, &kw0, &kw1, &pw0, &pw1);
    in_cols[ow] = (int32_t)(kw1 - kw0);
    pad_cols[ow] = (int32_t)(pw1 - pw0);
  }
  for (ptrdiff_t c = c0; c < c1; ++c) {
    const float *xc = x + c * H * W;
    float *yc = y + c * OH * OW;
    for (ptrdiff_t oh = 0; oh < OH; ++oh) {
      ptrdiff_t h0 = oh * SH - PT;
      ptrdiff_t kh0, kh1, ph0, ph1;  // taps inside the input / the padding
      vkp_pool_taps(h0, DH, KH, H, PT, PB, &kh0, &kh1, &ph0, &ph1);
      if (rows_at_once) {
        // Average: the output row accumulates each tap's input row over
        // the columns that tap keeps inside the input (a loop that
        // vectorises), in the same order as the window by window sum
        // (rows, then taps within a row), then divides by each column's
        // count. (PoolFormer's 3x3 stride-1 pools: 0.23 ms a call window by
        // window.)
        float *yr = yc + oh * OW;
        for (ptrdiff_t ow = 0; ow < OW; ++ow) yr[ow] = 0.0f;
        for (ptrdiff_t kh = kh0; kh < kh1; ++kh) {
          const float *xr = xc + (h0 + kh * DH) * W;
          for (ptrdiff_t kw = 0; kw < KW; ++kw) {
            const ptrdiff_t off = kw * DW - PL;
            ptrdiff_t a = off >= 0 ? 0 : (-off + SW - 1) / SW;
            ptrdiff_t b = W - 1 - off < 0 ? 0 : (W - 1 - off) / SW + 1;
            if (b > OW) b = OW;
            if (SW == 1)
              for (ptrdiff_t ow = a; ow < b; ++ow) yr[ow] += xr[ow + off];
            else
              for (ptrdiff_t ow = a; ow < b; ++ow) yr[ow] += xr[ow * SW + off];
          }
        }
        const int32_t *cols = count_include_pad ? pad_cols : in_cols;
        const ptrdiff_t rows = count_include_pad ? ph1 - ph0 : kh1 - kh0;
        for (ptrdiff_t ow = 0; ow < OW; ++ow) {
          const ptrdiff_t d = rows * cols[ow];
          yr[ow] = d > 0 ? yr[ow] / (float)d : 0.0f;
        }
        continue;
      }
      for (ptrdiff_t ow = 0; ow < OW; ++ow) {
        ptrdiff_t w0 = ow * SW - PL;
        ptrdiff_t kw0, kw1, pw0, pw1;
        vkp_pool_taps(w0, DW, KW, W, PL, PR, &kw0, &kw1, &pw0, &pw1);
        float acc = is_max ? -INFINITY : 0.0f;
        for (ptrdiff_t kh = kh0; kh < kh1; ++kh) {
          const float *xr = xc + (h0 + kh * DH) * W + w0;
          if (is_max) {
            for (ptrdiff_t kw = kw0; kw < kw1; ++kw) {
              float v = xr[kw * DW];
              acc = v > acc || v != v ? v : acc;
            }
          } else {
            for (ptrdiff_t kw = kw0; kw < kw1; ++kw) acc += xr[kw * DW];
          }
        }
        if (!is_max) {
          ptrdiff_t d = count_include_pad ? (ph1 - ph0) * (pw1 - pw0)
                                          : (kh1 - kh0) * (kw1 - kw0);
          acc = d > 0 ? acc / (float)d : 0.0f;
        }
        yc[oh * OW + ow] = acc;
      }
    }
  }
}

static void vkp_pool_task(void *arg, ptrdiff_t c0, ptrdiff_t c1, int worker) {
  const vkp_pool_job_t *j = arg;
  (void)worker;
  vkp__pool_channels(j->x, j->y, j->H, j->W, j->KH, j->KW, j->SH, j->SW, j->PT, j->PL,
                     j->PB, j->PR, j->DH, j->DW, j->OH, j->OW, j->is_max,
                     j->count_include_pad, c0, c1);
}

// Pooling of C planes (vkp__pool_channels), the channels split across the
// pool.
VKP_FN void vkp_pool2d(const float *x, float *y, ptrdiff_t C, ptrdiff_t H,
                       ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                       ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t PB,
                       ptrdiff_t PR, ptrdiff_t DH, ptrdiff_t DW, ptrdiff_t OH,
                       ptrdiff_t OW, int is_max, int count_include_pad) {
  vkp_pool_job_t j = {x, y, C, H, W, KH, KW, SH, SW, PT, PL, PB, PR, DH, DW, OH, OW,
                      is_max, count_include_pad, NULL, 0};
  vkp_parallel_range(C, VKP_GRAIN(OH * OW * KH * KW), vkp_pool_task, &j);
}

// ---------------------------------------------------------------------------
// Row-wise kernels: [outer][n][inner] layouts.

// exp on vectors, within about 2 ulp of expf: x = n ln2 + r with
// |r| <= ln2 / 2 (ln2 in two parts, so r is exact), exp(r) by a degree-7
// polynomial (Cephes' minimax coefficients), times 2^n built in the
// exponent bits. Underflow gives 0, overflow inf, NaN NaN.
static inline vkp_vec_t vkp_vexpf(vkp_vec_t x) {
  const vkp_ivec_t under = x < -87.33654f, over = x > 88.72283f, nan = x != x;
  const vkp_vec_t xc = (vkp_vec_t)(~(under | over | nan) & (vkp_ivec_t)x);
  const vkp_vec_t t = xc * 1.44269504088896341f + 0.5f;
  vkp_ivec_t n = __builtin_convertvector(t, vkp_ivec_t);
  n += (vkp_ivec_t)(__builtin_convertvector(n, vkp_vec_t) > t);  // floor
  const vkp_vec_t nf = __builtin_convertvector(n, vkp_vec_t);
  const vkp_vec_t r = xc - nf * 0.693359375f + nf * 2.12194440e-4f;
  vkp_vec_t p = 1.9875691500e-4f * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  vkp_vec_t y = p * r * r + r + 1.0f;
  // 2^n as 2^(n-1) * 2: n reaches 128 just below the overflow bound.
  y = y * (vkp_vec_t)((n + 126) << 23) * 2.0f;
  const vkp_vec_t inf = (vkp_vec_t){0} + INFINITY;
  vkp_ivec_t yi = ~(under | over | nan) & (vkp_ivec_t)y;
  yi |= (over & (vkp_ivec_t)inf) | (nan & (vkp_ivec_t)x);
  return (vkp_vec_t)yi;
}

// Softmax of a contiguous row, in place.
VKP_FN void vkp_softmax_row(float *row, ptrdiff_t n) {
  ptrdiff_t j = 0;
  float mx = -INFINITY, sum = 0.0f;
  if (n >= VKP_VLEN) {
    vkp_vec_t m = *(const vkp_uvec_t *)row;
    for (j = VKP_VLEN; j + VKP_VLEN <= n; j += VKP_VLEN) {
      vkp_vec_t v = *(const vkp_uvec_t *)(row + j);
      vkp_ivec_t gt = v > m;
      m = (vkp_vec_t)((gt & (vkp_ivec_t)v) | (~gt & (vkp_ivec_t)m));
    }
    for (int l = 0; l < VKP_VLEN; ++l) mx = m[l] > mx ? m[l] : mx;
  }
  for (; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
  vkp_vec_t acc = {0};
  for (j = 0; j + VKP_VLEN <= n; j += VKP_VLEN) {
    vkp_vec_t e = vkp_vexpf(*(const vkp_uvec_t *)(row + j) - mx);
    *(vkp_uvec_t *)(row + j) = e;
    acc += e;
  }
  for (int l = 0; l < VKP_VLEN; ++l) sum += acc[l];
  for (; j < n; ++j) {
    row[j] = expf(row[j] - mx);
    sum += row[j];
  }
  const float inv = 1.0f / sum;
  for (j = 0; j < n; ++j) row[j] *= inv;
}

// Kernels along the middle axis of [outer][n][inner]: a line function
// handles one of the outer * inner lines (n elements `stride` apart), and
// vkp_lines splits the lines across the pool. `arg` is the kernel's own
// parameter (lp_norm's p); `work` its steps per element.
typedef void (*vkp_line_fn)(const float *xs, float *ys, ptrdiff_t n, ptrdiff_t stride,
                            int arg);
typedef struct vkp_lines_job_t {
  const float *x;
  float *y;
  ptrdiff_t n, inner;
  vkp_line_fn fn;
  int arg;
} vkp_lines_job_t;

static void vkp_lines_task(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_lines_job_t *j = ctx;
  (void)worker;
  for (ptrdiff_t t = lo; t < hi; ++t) {
    ptrdiff_t at = t / j->inner * j->n * j->inner + t % j->inner;
    j->fn(j->x + at, j->y + at, j->n, j->inner, j->arg);
  }
}

VKP_FN void vkp_lines(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                      ptrdiff_t inner, vkp_line_fn fn, int arg, ptrdiff_t work) {
  vkp_lines_job_t j = {x, y, n, inner, fn, arg};
  vkp_parallel_range(outer * inner, VKP_GRAIN(n * work), vkp_lines_task, &j);
}

static void vkp_softmax_line(const float *xs, float *ys, ptrdiff_t n, ptrdiff_t inner,
                             int arg) {
  (void)arg;
  if (inner == 1) {
    if (ys != xs) memcpy(ys, xs, (size_t)n * sizeof(float));
    vkp_softmax_row(ys, n);
    return;
  }
  float mx = -INFINITY;
  for (ptrdiff_t k = 0; k < n; ++k) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
  float sum = 0.0f;
  for (ptrdiff_t k = 0; k < n; ++k) {
    float e = expf(xs[k * inner] - mx);
    ys[k * inner] = e;
    sum += e;
  }
  float inv = 1.0f / sum;
  for (ptrdiff_t k = 0; k < n; ++k) ys[k * inner] *= inv;
}

VKP_FN void vkp_softmax(const float *x, float *y, ptrdiff_t outer, ptrdiff_t n,
                        ptrdiff_t inner) {
  vkp_lines(x, y, outer, n, inner, vkp_softmax_line, 0, 8);
}

// Mean and 1/sqrt(var + eps) of a contiguous row (two passes, in double).
// Sums in double over 8 interleaved partial sums (one vector of doubles at
// AVX-512), then pairwise: a sequential double sum was a chain of dependent
// adds, 4 cycles per element, twice per LayerNorm row.
#define VKP_ROW_SUM(n, term, out)                                         \
  do {                                                                    \
    double part_[8] = {0, 0, 0, 0, 0, 0, 0, 0};                           \
    /* the vector part's length up front (see vkp_gemm_small_m) */        \
    const ptrdiff_t kv_ = (n) / 8 * 8;                                    \
    ptrdiff_t k = 0;                                                      \
    for (; k < kv_; k += 8)                                               \
      for (int l_ = 0; l_ < 8; ++l_) {                                    \
        const double t_ = (double)x[k + l_];                              \
        part_[l_] += (term);                                              \
      }                                                                   \
    double s_ = ((part_[0] + part_[1]) + (part_[2] + part_[3])) +         \
                ((part_[4] + part_[5]) + (part_[6] + part_[7]));          \
    for (k = kv_; k < (n); ++k) {                                         \
      const double t_ = (double)x[k];                                     \
      s_ += (term);                                                       \
    }                                                                     \
    (out) = s_;                                                           \
  } while (0)

VKP_FN void vkp_row_stats(const float *x, ptrdiff_t n, float eps, float *mean,
                          float *rstd) {
  double s, v;
  VKP_ROW_SUM(n, t_, s);
  const double m = n > 0 ? s / (double)n : 0.0;
  VKP_ROW_SUM(n, (t_ - m) * (t_ - m), v);
  v = n > 0 ? v / (double)n : 0.0;
  *mean = (float)m;
  *rstd = (float)(1.0 / sqrt(v + (double)eps));
}

// RMSNorm's statistics: mean 0, rstd = 1 / sqrt(mean(x^2) + eps).
VKP_FN void vkp_row_stats_rms(const float *x, ptrdiff_t n, float eps,
                              float *mean, float *rstd) {
  double v;
  VKP_ROW_SUM(n, t_ * t_, v);
  v = n > 0 ? v / (double)n : 0.0;
  *mean = 0.0f;
  *rstd = (float)(1.0 / sqrt(v + (double)eps));
}
