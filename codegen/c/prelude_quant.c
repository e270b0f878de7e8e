// ---------------------------------------------------------------------------
// Quantization (codegen/c/emit_quant.c): the helpers the generated loops of
// quantize_linear, dynamic_quantize_linear, qlinear_matmul and
// qlinear_conv share.

// q (already rounded) clamped to [lo, hi]; NaN becomes 0, as in ref.
static inline float vkp_q_sat(float q, float lo, float hi) {
  return q != q ? 0.0f : q < lo ? lo : q > hi ? hi : q;
}

// Requantization of an int32 accumulator: round(acc * mult) + zp, clamped;
// the product in double as ref computes it.
static inline float vkp_q_requant(int32_t acc, float mult, float zp, float lo, float hi) {
  double y = nearbyint((double)acc * (double)mult) + (double)zp;
  return y != y ? 0.0f : y < lo ? lo : y > hi ? hi : (float)y;
}

// ---------------------------------------------------------------------------
// 8-bit dot products. AVX-512 VNNI's vpdpbusd (u8 x s8 -> s32, four
// products summed into each 32-bit lane) where the CPU running the stage has
// it, asked at run time (__builtin_cpu_supports), so a stage built for a
// baseline -march still uses it and one built with -march=native never
// executes it on a CPU without it; plain C over the same packed layouts
// otherwise. VKPIPE_CPU_NO_VNNI set in the environment forces the plain
// path (tests compare both with ref). Either path computes the exact int32
// sums, so the results are the same bit for bit.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <stdlib.h>
#define VKP_Q_X86 1
#define VKP_Q_VNNI_FN \
  static __attribute__((unused, target("avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

// Runs fn(ctx, lo, hi, worker) over [0, n) split across the pool when there
// is one and the work is worth it, else as a direct call, which the
// compiler can inline into the caller's clone for the call site's constant
// shapes (a call through the pool's function pointer cannot be).
#define VKP_Q_SPLIT(n, grain, fn, ctx)                                   \
  do {                                                                   \
    if (vkp_workers() > 1 && (n) >= 2 * (grain))                         \
      vkp_parallel_range((n), (grain), (fn), (ctx));                     \
    else                                                                 \
      fn((ctx), 0, (n), 0);                                              \
  } while (0)

static inline int vkp_q_use_vnni(void) {
#ifdef VKP_Q_X86
  return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && !getenv("VKPIPE_CPU_NO_VNNI");
#else
  return 0;
#endif
}

// ---------------------------------------------------------------------------
// qlinear_conv of one image, groups of 1, int8 weights, as a GEMM of the
// weights [M, K] by an im2col of the image [K, P] (K = C*KH*KW, P = OH*OW)
// in 8-bit: with xu the activations as uint8 (int8 ones shifted by 128,
// their zero point too) and K padded to a multiple of 4,
//   acc[m, p] = sum_k xu*w - zx*sum_k w[m] - zw[m]*sum_k xu[p] + K*zx*zw[m]
//             + bias[m],
// exactly the int32 sum of (x - zx)(w - zw); the padding holds zx, which
// contributes nothing. The im2col is built row by row (contiguous copies),
// then interleaved 16 columns at a time with 4 k per 32-bit lane: the
// layout of vpdpbusd, which then also requantizes 16 outputs at a time (in
// double, as ref). The im2col, the column sums and the tiles of 16 output
// pixels are each split across the stage's threads (every output computed
// the same way in any split). Scratch: vkp_q_conv_scratch bytes.
#define VKP_Q_TILE_P 16
#define VKP_Q_TILE_M 8

static inline size_t vkp_q_conv_scratch(ptrdiff_t K, ptrdiff_t P, ptrdiff_t M) {
  size_t k4 = (size_t)(K + 3) / 4, pp = (size_t)(P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P;
  return 2 * pp * k4 * 64 + (size_t)M * k4 * 4 + 4 * (size_t)(M + pp * VKP_Q_TILE_P) + 256;
}

typedef struct vkp_q_conv_job_t {
  const uint8_t *x;
  uint8_t flip;
  int32_t zxu, zy, any_zw, y_signed;
  const int8_t *wk, *zw;
  const int32_t *bias, *wsum;
  int32_t *xsum;
  const float *mult;
  ptrdiff_t n_zw, n_mult;
  float lo, hi;
  void *y;
  ptrdiff_t C, H, W, M, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw;
  ptrdiff_t K, K4, P, PT, PP;
  uint8_t *col, *rows;
} vkp_q_conv_job_t;

// im2col rows 4 k4 .. 4 k4 + 3 for k4 in [lo, hi): rows[k * PP + p]; the
// window's columns inside the image are ox in [ox0, ox1). Then (next
// function) their interleave col[(t * K4 + k4) * 64 + q * 4 + e] =
// rows[(4 k4 + e) * PP + 16 t + q], tile by tile.
// (Inlined into vkp_q_conv_gemm's per-call-site clones: with the shapes
// constant its short row loops unroll; through a pointer it ran 3x slower.)
static inline __attribute__((always_inline)) void vkp_q_conv_im2col(void *ctx, ptrdiff_t lo,
                                                                    ptrdiff_t hi,
                                                                    int worker) {
  const vkp_q_conv_job_t *j = ctx;
  const ptrdiff_t PP = j->PP, OW = j->OW, sw = j->sw;
  (void)worker;
  for (ptrdiff_t k4 = lo; k4 < hi; ++k4) {
    for (ptrdiff_t k = 4 * k4; k < 4 * k4 + 4; ++k) {
      uint8_t *rk = j->rows + k * PP;
      if (k >= j->K) {
        for (ptrdiff_t p = 0; p < PP; ++p) rk[p] = 0;
        continue;
      }
      const ptrdiff_t c = k / (j->KH * j->KW), ky = k / j->KW % j->KH, kx = k % j->KW;
      const ptrdiff_t off = kx * j->dw - j->pw;
      ptrdiff_t ox0 = off < 0 ? (-off + sw - 1) / sw : 0;
      ptrdiff_t ox1 = j->W - off <= 0 ? 0 : (j->W - off + sw - 1) / sw;
      if (ox1 > OW) ox1 = OW;
      if (ox0 > ox1) ox0 = ox1;
      for (ptrdiff_t oy = 0; oy < j->OH; ++oy) {
        const ptrdiff_t iy = oy * j->sh - j->ph + ky * j->dh;
        uint8_t *r = rk + oy * OW;
        if (iy < 0 || iy >= j->H) {
          for (ptrdiff_t ox = 0; ox < OW; ++ox) r[ox] = (uint8_t)j->zxu;
          continue;
        }
        const uint8_t *xr = j->x + (c * j->H + iy) * j->W + off;
        for (ptrdiff_t ox = 0; ox < ox0; ++ox) r[ox] = (uint8_t)j->zxu;
        if (sw == 1)
          for (ptrdiff_t ox = ox0; ox < ox1; ++ox) r[ox] = (uint8_t)(xr[ox] ^ j->flip);
        else
          for (ptrdiff_t ox = ox0; ox < ox1; ++ox) r[ox] = (uint8_t)(xr[ox * sw] ^ j->flip);
        for (ptrdiff_t ox = ox1; ox < OW; ++ox) r[ox] = (uint8_t)j->zxu;
      }
      for (ptrdiff_t p = j->P; p < PP; ++p) rk[p] = 0;
    }
  }
}

// The interleave of tiles [lo, hi) (each tile's 64-byte groups written in
// order).
static inline __attribute__((always_inline)) void vkp_q_conv_interleave(void *ctx,
                                                                        ptrdiff_t lo,
                                                                        ptrdiff_t hi,
                                                                        int worker) {
  const vkp_q_conv_job_t *j = ctx;
  const ptrdiff_t PP = j->PP;
  (void)worker;
  for (ptrdiff_t t = lo; t < hi; ++t) {
    for (ptrdiff_t k4 = 0; k4 < j->K4; ++k4) {
      const uint8_t *r0 = j->rows + 4 * k4 * PP + t * VKP_Q_TILE_P;
      uint8_t *ct = j->col + (t * j->K4 + k4) * 64;
#ifdef VKP_Q_X86
      // SSE2, part of every x86-64.
      __m128i a = _mm_loadu_si128((const __m128i *)r0),
              b = _mm_loadu_si128((const __m128i *)(r0 + PP)),
              c2 = _mm_loadu_si128((const __m128i *)(r0 + 2 * PP)),
              d = _mm_loadu_si128((const __m128i *)(r0 + 3 * PP));
      __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
      __m128i cd0 = _mm_unpacklo_epi8(c2, d), cd1 = _mm_unpackhi_epi8(c2, d);
      _mm_storeu_si128((__m128i *)ct, _mm_unpacklo_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(ct + 16), _mm_unpackhi_epi16(ab0, cd0));
      _mm_storeu_si128((__m128i *)(ct + 32), _mm_unpacklo_epi16(ab1, cd1));
      _mm_storeu_si128((__m128i *)(ct + 48), _mm_unpackhi_epi16(ab1, cd1));
#else
      for (int q = 0; q < VKP_Q_TILE_P; ++q)
        for (int e = 0; e < 4; ++e) ct[q * 4 + e] = r0[e * PP + q];
#endif
    }
  }
}

// Column sums of the im2col, for per-channel weight zero points.
static void vkp_q_conv_xsum(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_conv_job_t *j = ctx;
  (void)worker;
  for (ptrdiff_t p = lo; p < hi; ++p) {
    int32_t s = 0;
    for (ptrdiff_t k = 0; k < j->K; ++k) s += j->rows[k * j->PP + p];
    j->xsum[p] = s;
  }
}

// The accumulator's constant part for output channel m.
static inline int32_t vkp_q_conv_base(const vkp_q_conv_job_t *j, ptrdiff_t m, int32_t *z) {
  *z = j->n_zw ? (int32_t)j->zw[j->n_zw == 1 ? 0 : m] : 0;
  return (j->bias ? j->bias[m] : 0) - j->zxu * j->wsum[m] + (int32_t)j->K * j->zxu * *z;
}

#ifdef VKP_Q_X86
// The 16 int32 sums in v requantized as vkp_q_requant does (lanes 0-7 by
// mu0, 8-15 by mu1, in double) and stored as bytes at dst (keep: the lanes
// that exist). The convolution's and the matmul's tiles end here.
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) void
vkp_q_requant16(__m512i v, __m512d mu0, __m512d mu1, int32_t zy, float lo, float hi,
                char *dst, __mmask16 keep) {
  const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi),
                vzy = _mm512_set1_pd((double)zy);
  __m512d d0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(v));
  __m512d d1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1));
  d0 = _mm512_roundscale_pd(_mm512_mul_pd(d0, mu0), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  d1 = _mm512_roundscale_pd(_mm512_mul_pd(d1, mu1), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  d0 = _mm512_min_pd(_mm512_max_pd(_mm512_add_pd(d0, vzy), vlo), vhi);
  d1 = _mm512_min_pd(_mm512_max_pd(_mm512_add_pd(d1, vzy), vlo), vhi);
  __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtpd_epi32(d0)),
                                 _mm512_cvtpd_epi32(d1), 1);
  _mm_mask_storeu_epi8(dst, keep, _mm512_cvtepi32_epi8(q));
}

// Requantizes the 16 sums of output channel m at pixels p0.. (keep: the
// pixels that exist) and stores them.
static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl"))) void
vkp_q_conv_store(const vkp_q_conv_job_t *j, __m512i acc, ptrdiff_t m, ptrdiff_t p0,
                 __mmask16 keep, __m512i vxs) {
  int32_t z;
  const int32_t base = vkp_q_conv_base(j, m, &z);
  __m512i v = _mm512_add_epi32(acc, _mm512_set1_epi32(base));
  if (j->any_zw) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vxs, _mm512_set1_epi32(z)));
  const __m512d mu = _mm512_set1_pd((double)j->mult[j->n_mult == 1 ? 0 : m]);
  vkp_q_requant16(v, mu, mu, j->zy, j->lo, j->hi, (char *)j->y + m * j->P + p0, keep);
}

// Four weight bytes as one int32 (any alignment).
static inline int32_t vkp_q_ld32(const int8_t *p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

static inline __mmask16 vkp_q_conv_keep(const vkp_q_conv_job_t *j, ptrdiff_t t) {
  const ptrdiff_t p0 = t * VKP_Q_TILE_P;
  const ptrdiff_t pn = j->P - p0 < VKP_Q_TILE_P ? j->P - p0 : VKP_Q_TILE_P;
  return (__mmask16)((1u << pn) - 1u);
}

// Tiles [lo, hi) of 16 output pixels, two at a time: each broadcast weight
// feeds both tiles' products (8 channels x 32 pixels in 16 accumulators),
// so the loop issues 10 loads per 16 vpdpbusd instead of 9 per 8. A last
// odd tile, and a last block of fewer than 8 channels, go one tile at a
// time.
VKP_Q_VNNI_FN void vkp_q_conv_tiles_vnni(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_conv_job_t *j = ctx;
  const ptrdiff_t K4 = j->K4, M = j->M;
  (void)worker;
  for (ptrdiff_t t = lo; t < hi;) {
    const int pair = t + 1 < hi;
    const uint8_t *c0 = j->col + t * K4 * 64, *c1 = c0 + K4 * 64;
    const __mmask16 keep0 = vkp_q_conv_keep(j, t);
    const __mmask16 keep1 = pair ? vkp_q_conv_keep(j, t + 1) : 0;
    __m512i vxs0 = _mm512_setzero_si512(), vxs1 = _mm512_setzero_si512();
    if (j->any_zw) {
      vxs0 = _mm512_maskz_loadu_epi32(keep0, j->xsum + t * VKP_Q_TILE_P);
      if (pair) vxs1 = _mm512_maskz_loadu_epi32(keep1, j->xsum + (t + 1) * VKP_Q_TILE_P);
    }
    for (ptrdiff_t m0 = 0; m0 < M; m0 += VKP_Q_TILE_M) {
      const ptrdiff_t mt = M - m0 < VKP_Q_TILE_M ? M - m0 : VKP_Q_TILE_M;
      const int8_t *wr = j->wk + m0 * K4 * 4;
      __m512i a[VKP_Q_TILE_M];
      if (pair && mt == VKP_Q_TILE_M) {
        // Named accumulators: with arrays gcc copied (and spilled) them
        // around every vpdpbusd.
        __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0,
                a6 = a0, a7 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0,
                b6 = a0, b7 = a0;
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
          const __m512i x0 = _mm512_loadu_si512((const void *)(c0 + k4 * 64));
          const __m512i x1 = _mm512_loadu_si512((const void *)(c1 + k4 * 64));
          __m512i w;
#define VKP_Q_ROW(r)                                   \
  w = _mm512_set1_epi32(vkp_q_ld32(wr + ((r) * K4 + k4) * 4)); \
  a##r = _mm512_dpbusd_epi32(a##r, x0, w);              \
  b##r = _mm512_dpbusd_epi32(b##r, x1, w);
          VKP_Q_ROW(0) VKP_Q_ROW(1) VKP_Q_ROW(2) VKP_Q_ROW(3)
          VKP_Q_ROW(4) VKP_Q_ROW(5) VKP_Q_ROW(6) VKP_Q_ROW(7)
#undef VKP_Q_ROW
        }
        const __m512i as[VKP_Q_TILE_M] = {a0, a1, a2, a3, a4, a5, a6, a7};
        const __m512i bs[VKP_Q_TILE_M] = {b0, b1, b2, b3, b4, b5, b6, b7};
        for (int r = 0; r < VKP_Q_TILE_M; ++r) {
          vkp_q_conv_store(j, as[r], m0 + r, t * VKP_Q_TILE_P, keep0, vxs0);
          vkp_q_conv_store(j, bs[r], m0 + r, (t + 1) * VKP_Q_TILE_P, keep1, vxs1);
        }
        continue;
      }
      for (int s = 0; s <= pair; ++s) {
        const uint8_t *ct = s ? c1 : c0;
        for (int r = 0; r < VKP_Q_TILE_M; ++r) a[r] = _mm512_setzero_si512();
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
          const __m512i xv = _mm512_loadu_si512((const void *)(ct + k4 * 64));
          for (ptrdiff_t r = 0; r < mt; ++r) {
            int32_t wv;
            __builtin_memcpy(&wv, wr + (r * K4 + k4) * 4, 4);
            a[r] = _mm512_dpbusd_epi32(a[r], xv, _mm512_set1_epi32(wv));
          }
        }
        for (ptrdiff_t r = 0; r < mt; ++r)
          vkp_q_conv_store(j, a[r], m0 + r, (t + s) * VKP_Q_TILE_P, s ? keep1 : keep0,
                           s ? vxs1 : vxs0);
      }
    }
    t += pair ? 2 : 1;
  }
}
#endif

static void vkp_q_conv_tiles_c(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_conv_job_t *j = ctx;
  const ptrdiff_t K4 = j->K4, M = j->M, P = j->P;
  (void)worker;
  for (ptrdiff_t t = lo; t < hi; ++t) {
    const uint8_t *ct = j->col + t * K4 * 64;
    const ptrdiff_t p0 = t * VKP_Q_TILE_P;
    const ptrdiff_t pn = P - p0 < VKP_Q_TILE_P ? P - p0 : VKP_Q_TILE_P;
    for (ptrdiff_t m = 0; m < M; ++m) {
      const int8_t *wr = j->wk + m * K4 * 4;
      int32_t acc[VKP_Q_TILE_P] = {0};
      for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
        for (int q = 0; q < VKP_Q_TILE_P; ++q)
          for (int e = 0; e < 4; ++e)
            acc[q] += (int32_t)ct[k4 * 64 + q * 4 + e] * (int32_t)wr[k4 * 4 + e];
      int32_t z;
      const int32_t base = vkp_q_conv_base(j, m, &z);
      const float mu = j->mult[j->n_mult == 1 ? 0 : m];
      for (ptrdiff_t q = 0; q < pn; ++q) {
        int32_t v = acc[q] + base - (j->any_zw ? z * j->xsum[p0 + q] : 0);
        float r = vkp_q_requant(v, mu, (float)j->zy, j->lo, j->hi);
        if (j->y_signed) ((int8_t *)j->y)[m * P + p0 + q] = (int8_t)r;
        else ((uint8_t *)j->y)[m * P + p0 + q] = (uint8_t)r;
      }
    }
  }
}

VKP_FN void vkp_q_conv_gemm(const uint8_t *x, int x_signed, int32_t zx, const int8_t *w,
                            const int8_t *zw, ptrdiff_t n_zw, const int32_t *bias,
                            const float *mult, ptrdiff_t n_mult, int32_t zy, float lo,
                            float hi, void *y, int y_signed, ptrdiff_t C, ptrdiff_t H,
                            ptrdiff_t W, ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW,
                            ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t sh, ptrdiff_t sw,
                            ptrdiff_t ph, ptrdiff_t pw, ptrdiff_t dh, ptrdiff_t dw,
                            uint8_t *scratch) {
  vkp_q_conv_job_t j = {.x = x, .flip = x_signed ? 0x80 : 0, .zxu = x_signed ? zx + 128 : zx,
                        .zy = zy, .y_signed = y_signed, .zw = zw, .bias = bias,
                        .mult = mult, .n_zw = n_zw, .n_mult = n_mult, .lo = lo, .hi = hi,
                        .y = y, .C = C, .H = H, .W = W, .M = M, .KH = KH, .KW = KW,
                        .OH = OH, .OW = OW, .sh = sh, .sw = sw, .ph = ph, .pw = pw,
                        .dh = dh, .dw = dw};
  const ptrdiff_t K = C * KH * KW, K4 = (K + 3) / 4, P = OH * OW;
  const ptrdiff_t PT = (P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P, PP = PT * VKP_Q_TILE_P;
  j.K = K, j.K4 = K4, j.P = P, j.PT = PT, j.PP = PP;
  j.col = scratch;
  j.rows = j.col + (size_t)PT * K4 * 64;
  int8_t *wp = (int8_t *)(j.rows + (size_t)PT * K4 * 64);
  int32_t *wsum = (int32_t *)(((uintptr_t)(wp + M * K4 * 4) + 63) & ~(uintptr_t)63);
  j.wsum = wsum;
  j.xsum = wsum + M;
  j.wk = wp;
  for (ptrdiff_t m = 0; m < n_zw; ++m) j.any_zw |= zw[m] != 0;
  // Weights with K padded with zeros (copied only when K is not a multiple
  // of 4), and their row sums.
  if (K % 4 == 0) {
    j.wk = w;
    for (ptrdiff_t m = 0; m < M; ++m) {
      int32_t s = 0;
      for (ptrdiff_t k = 0; k < K; ++k) s += w[m * K + k];
      wsum[m] = s;
    }
  } else {
    for (ptrdiff_t m = 0; m < M; ++m) {
      int32_t s = 0;
      for (ptrdiff_t k = 0; k < K4 * 4; ++k) {
        int8_t v = k < K ? w[m * K + k] : 0;
        wp[m * K4 * 4 + k] = v;
        s += v;
      }
      wsum[m] = s;
    }
  }
  VKP_Q_SPLIT(K4, VKP_GRAIN(4 * PP), vkp_q_conv_im2col, &j);
  VKP_Q_SPLIT(PT, VKP_GRAIN(K4 * 64), vkp_q_conv_interleave, &j);
  if (j.any_zw) VKP_Q_SPLIT(P, VKP_GRAIN(K), vkp_q_conv_xsum, &j);
  // A tile's work in multiply-adds: M * K * 16, about a quarter of them
  // steps (one vpdpbusd does 64).
#ifdef VKP_Q_X86
  if (vkp_q_use_vnni()) {
    VKP_Q_SPLIT(PT, VKP_GRAIN(M * K4 * 4), vkp_q_conv_tiles_vnni, &j);
    return;
  }
#endif
  VKP_Q_SPLIT(PT, VKP_GRAIN(M * K4 * 4), vkp_q_conv_tiles_c, &j);
}

// ---------------------------------------------------------------------------
// qlinear_matmul with one scale and zero point for A: y[M, N] =
// requant(sum_k (a - za)(b[k, n] - zb[n]) + bias[n]) in 8-bit, A's rows
// broadcast 4 k at a time against B packed 16 columns x 4 k per 64 bytes
// (vpdpbusd's layout, A unsigned, B signed): with a' = a as uint8 (int8
// shifted by 128), b' = b as int8 (uint8 shifted by -128) and their zero
// points shifted alike,
//   acc = sum a'b' - za' sum_k b'[n] - zb'[n] sum_k a'[m] + K za' zb'[n]
//       + bias[n]
// exactly. Requantized with sa * sb[n] / sy in float, the product in double,
// as ref. Blocks of VKP_QM_MR rows x 32 columns are split across the
// stage's threads. Scratch: vkp_q_matmul_scratch(M, N, K) bytes.
#define VKP_QM_MR 6

static inline size_t vkp_q_matmul_scratch(ptrdiff_t M, ptrdiff_t N, ptrdiff_t K) {
  size_t k4 = (size_t)(K + 3) / 4, nt = (size_t)(N + 15) / 16;
  return (size_t)M * k4 * 4 + nt * k4 * 64 + 4 * (size_t)(5 * nt * 16 + M) + 256;
}

typedef struct vkp_q_mm_job_t {
  const uint8_t *a;
  const uint8_t *b;
  uint8_t aflip, bflip;
  int32_t zau, zy, any_zb, y_signed;
  const uint8_t *zb;
  ptrdiff_t n_zb, n_sb;
  const int32_t *bias;
  float sa, sy, lo, hi;
  const float *sb;
  void *y;
  ptrdiff_t M, N, K, K4, NT, MT, NB;
  uint8_t *ap;
  int8_t *bp;       // packed B (scratch, or the prepacked constant)
  int32_t *bsum;    // its column sums, NT * 16
  int32_t *colbase, *zbv, *asum;
  float *mult;
} vkp_q_mm_job_t;

// Packs B's 16-column tiles [lo, hi) and their column terms. Whole groups
// of 4 k x 16 columns go through the same byte interleave as the
// convolution's im2col (SSE2); the ragged edges byte by byte.
static void vkp_q_mm_pack_b(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_mm_job_t *j = ctx;
  const ptrdiff_t K = j->K, K4 = j->K4, N = j->N;
  (void)worker;
  for (ptrdiff_t t = lo; t < hi; ++t) {
    int8_t *bt = j->bp + t * K4 * 64;
    const ptrdiff_t n0 = t * 16;
    const int full_cols = n0 + 16 <= N;
    for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
      int8_t *dst = bt + k4 * 64;
#ifdef VKP_Q_X86
      if (full_cols && 4 * k4 + 4 <= K) {
        const uint8_t *r0 = j->b + 4 * k4 * N + n0;
        const __m128i fl = _mm_set1_epi8((char)j->bflip);
        __m128i a = _mm_xor_si128(_mm_loadu_si128((const __m128i *)r0), fl),
                b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r0 + N)), fl),
                c2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r0 + 2 * N)), fl),
                d = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r0 + 3 * N)), fl);
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i cd0 = _mm_unpacklo_epi8(c2, d), cd1 = _mm_unpackhi_epi8(c2, d);
        _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(ab0, cd0));
        _mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(ab0, cd0));
        _mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(ab1, cd1));
        _mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(ab1, cd1));
        continue;
      }
#endif
      for (int q = 0; q < 16; ++q) {
        const ptrdiff_t n = n0 + q;
        for (int e = 0; e < 4; ++e) {
          const ptrdiff_t k = 4 * k4 + e;
          dst[q * 4 + e] = k < K && n < N ? (int8_t)(j->b[k * N + n] ^ j->bflip) : 0;
        }
      }
    }
    // Column sums over k, 16 lanes at a time.
    int32_t *sum = j->bsum + n0;
    for (int q = 0; q < 16; ++q) sum[q] = 0;
    for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
      for (int q = 0; q < 16; ++q)
        sum[q] += (int32_t)bt[k4 * 64 + q * 4] + bt[k4 * 64 + q * 4 + 1] +
                  bt[k4 * 64 + q * 4 + 2] + bt[k4 * 64 + q * 4 + 3];
  }
}

// The per-column terms of columns [0, NT * 16): zero point, the
// accumulator's constant part, the requantization multiplier.
static void vkp_q_mm_columns(const vkp_q_mm_job_t *j) {
  for (ptrdiff_t n = 0; n < j->NT * 16; ++n) {
    int32_t z = 0;
    if (n < j->N) {
      const uint8_t zr = j->zb ? j->zb[j->n_zb == 1 ? 0 : n] : 0;
      z = j->bflip ? (int32_t)zr - 128 : (int32_t)(int8_t)zr;
    }
    j->zbv[n] = z;
    j->colbase[n] = (j->bias && n < j->N ? j->bias[n] : 0) - j->zau * j->bsum[n] +
                    (int32_t)j->K * j->zau * z;
    j->mult[n] = n < j->N ? j->sa * j->sb[j->n_sb == 1 ? 0 : n] / j->sy : 0.0f;
  }
}

// Floats of a constant B packed at load by vkp_q_matmul_prepack_b.
#define VKP_Q_MM_PACKED_FLOATS(K, N) \
  ((((ptrdiff_t)(N) + 15) / 16) * ((((ptrdiff_t)(K) + 3) / 4) * 16 + 16))

// Packs a constant B [K, N] (int8, or uint8 shifted by -128) once, at
// stage load, for vkp_q_matmul: the tiles, then the column sums.
VKP_FN void vkp_q_matmul_prepack_b(const void *b, int b_signed, ptrdiff_t K, ptrdiff_t N,
                                   float *dst) {
  const ptrdiff_t K4 = (K + 3) / 4, NT = (N + 15) / 16;
  vkp_q_mm_job_t j = {.b = b, .bflip = b_signed ? 0 : 0x80, .N = N, .K = K, .K4 = K4,
                      .NT = NT};
  j.bp = (int8_t *)dst;
  j.bsum = (int32_t *)(j.bp + NT * K4 * 64);
  vkp_q_mm_pack_b(&j, 0, NT, 0);
}

// Packs A's rows [lo, hi) (K padded with zeros) and their sums.
static void vkp_q_mm_pack_a(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_mm_job_t *j = ctx;
  const ptrdiff_t K = j->K, K4 = j->K4;
  (void)worker;
  for (ptrdiff_t m = lo; m < hi; ++m) {
    uint8_t *ar = j->ap + m * K4 * 4;
    const uint8_t *src = j->a + m * K;
    int32_t s = 0;
    for (ptrdiff_t k = 0; k < K; ++k) {
      ar[k] = (uint8_t)(src[k] ^ j->aflip);
      s += ar[k];
    }
    for (ptrdiff_t k = K; k < K4 * 4; ++k) ar[k] = 0;
    j->asum[m] = s;
  }
}

// The requantized output of row m, columns [n0, n0 + nn), from the raw
// dot products `acc`.
static inline void vkp_q_mm_store_c(const vkp_q_mm_job_t *j, ptrdiff_t m, ptrdiff_t n0,
                                    ptrdiff_t nn, const int32_t *acc) {
  for (ptrdiff_t q = 0; q < nn; ++q) {
    const ptrdiff_t n = n0 + q;
    int32_t v = acc[q] + j->colbase[n] - (j->any_zb ? j->asum[m] * j->zbv[n] : 0);
    float r = vkp_q_requant(v, j->mult[n], (float)j->zy, j->lo, j->hi);
    if (j->y_signed) ((int8_t *)j->y)[m * j->N + n] = (int8_t)r;
    else ((uint8_t *)j->y)[m * j->N + n] = (uint8_t)r;
  }
}

static void vkp_q_mm_blocks_c(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_mm_job_t *j = ctx;
  const ptrdiff_t K4 = j->K4;
  (void)worker;
  for (ptrdiff_t i = lo; i < hi; ++i) {
    const ptrdiff_t t = i / j->MT, m0 = i % j->MT * VKP_QM_MR;
    const ptrdiff_t mr = j->M - m0 < VKP_QM_MR ? j->M - m0 : VKP_QM_MR;
    const int8_t *bt = j->bp + t * K4 * 64;
    for (ptrdiff_t r = 0; r < mr; ++r) {
      const uint8_t *ar = j->ap + (m0 + r) * K4 * 4;
      int32_t acc[16] = {0};
      for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
        for (int q = 0; q < 16; ++q)
          for (int e = 0; e < 4; ++e)
            acc[q] += (int32_t)ar[k4 * 4 + e] * (int32_t)bt[k4 * 64 + q * 4 + e];
      const ptrdiff_t n0 = t * 16;
      vkp_q_mm_store_c(j, m0 + r, n0, j->N - n0 < 16 ? j->N - n0 : 16, acc);
    }
  }
}

#ifdef VKP_Q_X86
// Requantizes and stores 16 lanes of row m from column n0 (the first `nn`).
VKP_Q_VNNI_FN void vkp_q_mm_store_vnni(const vkp_q_mm_job_t *j, ptrdiff_t m, ptrdiff_t n0,
                                       ptrdiff_t nn, __m512i v) {
  const __mmask16 keep = (__mmask16)((1u << nn) - 1u);
  v = _mm512_add_epi32(v, _mm512_loadu_si512((const void *)(j->colbase + n0)));
  if (j->any_zb)
    v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(j->asum[m]),
                                               _mm512_loadu_si512((const void *)(j->zbv + n0))));
  const __m512 mu = _mm512_loadu_ps(j->mult + n0);
  const __m512d mu0 = _mm512_cvtps_pd(_mm512_castps512_ps256(mu));
  const __m512d mu1 = _mm512_cvtps_pd(
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mu), 1)));
  vkp_q_requant16(v, mu0, mu1, j->zy, j->lo, j->hi, (char *)j->y + m * j->N + n0, keep);
}

// Blocks [lo, hi): block i is rows m0 .. m0 + VKP_QM_MR of 32 columns
// (two packed tiles; one at the right edge).
VKP_Q_VNNI_FN void vkp_q_mm_blocks_vnni(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_q_mm_job_t *j = ctx;
  const ptrdiff_t K4 = j->K4;
  (void)worker;
  for (ptrdiff_t i = lo; i < hi; ++i) {
    const ptrdiff_t t = i / j->MT * 2, m0 = i % j->MT * VKP_QM_MR;
    const ptrdiff_t mr = j->M - m0 < VKP_QM_MR ? j->M - m0 : VKP_QM_MR;
    const int two = t + 1 < j->NT;
    const int8_t *b0 = j->bp + t * K4 * 64, *b1 = two ? b0 + K4 * 64 : b0;
    const uint8_t *ar = j->ap + m0 * K4 * 4;
    __m512i c0[VKP_QM_MR], c1[VKP_QM_MR];
    for (int r = 0; r < VKP_QM_MR; ++r) c0[r] = c1[r] = _mm512_setzero_si512();
    if (mr == VKP_QM_MR) {
      for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
        const __m512i v0 = _mm512_loadu_si512((const void *)(b0 + k4 * 64));
        const __m512i v1 = _mm512_loadu_si512((const void *)(b1 + k4 * 64));
        for (int r = 0; r < VKP_QM_MR; ++r) {
          int32_t av;
          __builtin_memcpy(&av, ar + (r * K4 + k4) * 4, 4);
          const __m512i bc = _mm512_set1_epi32(av);
          c0[r] = _mm512_dpbusd_epi32(c0[r], bc, v0);
          c1[r] = _mm512_dpbusd_epi32(c1[r], bc, v1);
        }
      }
    } else {
      for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
        const __m512i v0 = _mm512_loadu_si512((const void *)(b0 + k4 * 64));
        const __m512i v1 = _mm512_loadu_si512((const void *)(b1 + k4 * 64));
        for (ptrdiff_t r = 0; r < mr; ++r) {
          int32_t av;
          __builtin_memcpy(&av, ar + (r * K4 + k4) * 4, 4);
          const __m512i bc = _mm512_set1_epi32(av);
          c0[r] = _mm512_dpbusd_epi32(c0[r], bc, v0);
          c1[r] = _mm512_dpbusd_epi32(c1[r], bc, v1);
        }
      }
    }
    const ptrdiff_t n0 = t * 16, n1 = n0 + 16;
    for (ptrdiff_t r = 0; r < mr; ++r) {
      vkp_q_mm_store_vnni(j, m0 + r, n0, j->N - n0 < 16 ? j->N - n0 : 16, c0[r]);
      if (two) vkp_q_mm_store_vnni(j, m0 + r, n1, j->N - n1 < 16 ? j->N - n1 : 16, c1[r]);
    }
  }
}
#endif

// `bpacked`: B packed at load by vkp_q_matmul_prepack_b, or NULL (packed
// here, into scratch).
VKP_FN void vkp_q_matmul(const void *a, int a_signed, int32_t za, const void *b,
                         int b_signed, const void *zb, ptrdiff_t n_zb, const int32_t *bias,
                         float sa, const float *sb, ptrdiff_t n_sb, float sy, int32_t zy,
                         float lo, float hi, void *y, int y_signed, ptrdiff_t M, ptrdiff_t N,
                         ptrdiff_t K, const float *bpacked, uint8_t *scratch) {
  const ptrdiff_t K4 = (K + 3) / 4, NT = (N + 15) / 16;
  vkp_q_mm_job_t j = {.a = a, .b = b, .aflip = a_signed ? 0x80 : 0,
                      .bflip = b_signed ? 0 : 0x80, .zau = a_signed ? za + 128 : za,
                      .zy = zy, .y_signed = y_signed, .zb = zb, .n_zb = n_zb, .n_sb = n_sb,
                      .bias = bias, .sa = sa, .sy = sy, .lo = lo, .hi = hi, .sb = sb, .y = y,
                      .M = M, .N = N, .K = K, .K4 = K4, .NT = NT,
                      .MT = (M + VKP_QM_MR - 1) / VKP_QM_MR};
  j.ap = scratch;
  j.bp = (int8_t *)(scratch + (((size_t)M * K4 * 4 + 63) & ~(size_t)63));
  j.colbase = (int32_t *)(j.bp + NT * K4 * 64);
  j.zbv = j.colbase + NT * 16;
  j.asum = j.zbv + NT * 16;
  j.mult = (float *)(j.asum + M);
  j.bsum = (int32_t *)(j.mult + NT * 16);
  // uint8 B is stored shifted by -128, and so is its zero point.
  j.any_zb = !b_signed && !zb;
  for (ptrdiff_t n = 0; zb && n < n_zb; ++n)
    j.any_zb |= (b_signed ? (int32_t)((const int8_t *)zb)[n]
                          : (int32_t)((const uint8_t *)zb)[n] - 128) != 0;
  if (bpacked) {
    j.bp = (int8_t *)(uintptr_t)bpacked;
    j.bsum = (int32_t *)(j.bp + NT * K4 * 64);
  } else {
    VKP_Q_SPLIT(NT, VKP_GRAIN(K * 16), vkp_q_mm_pack_b, &j);
  }
  vkp_q_mm_columns(&j);
  VKP_Q_SPLIT(M, VKP_GRAIN(K), vkp_q_mm_pack_a, &j);
#ifdef VKP_Q_X86
  if (vkp_q_use_vnni()) {
    VKP_Q_SPLIT((NT + 1) / 2 * j.MT, VKP_GRAIN(VKP_QM_MR * 32 * K4), vkp_q_mm_blocks_vnni,
                &j);
    return;
  }
#endif
  VKP_Q_SPLIT(NT * j.MT, VKP_GRAIN(VKP_QM_MR * 16 * K4), vkp_q_mm_blocks_c, &j);
}

// ---------------------------------------------------------------------------
// Depthwise qlinear_conv of one image (group = C = M) through the float
// depthwise kernel: per channel, the input plane becomes floats x - x_zp and
// the weights w - w_zp (`wf`, C * KH * KW floats made by the caller), the
// float kernel sums the taps, and the sum plus the bias is requantized.
// Every product is an integer of at most 255 * 255 in magnitude and every
// partial sum of at most KH * KW of them stays below 2^24 when the window
// has at most 258 taps (the caller checks), so float arithmetic gives the
// exact int32 sums in any order: the results are those of the integer loop,
// bit for bit, at the float kernel's speed.
// Scratch per worker: VKP_Q_DW_WORKER_FLOATS(...).
#define VKP_Q_DW_WORKER_FLOATS(H, W, KH, KW, SH, SW, DH, DW, OH, OW)                    \
  ((((ptrdiff_t)(H) * (W) + 15) / 16 * 16) + (((ptrdiff_t)(OH) * (OW) + 15) / 16 * 16) + \
   VKP_DW_SCRATCH_FLOATS(KH, KW, SH, SW, DH, DW, OH, OW) + 16)
// The window sizes this path takes (the others run the integer loop).
#define VKP_Q_DW_MAX_TAPS 121

// y[q] = requant(sum[q] + b) for exact integer sums held as floats, as
// vkp_q_requant computes it (the sum and the product in double), in a loop
// the compiler vectorises; a multiplier that is not finite (a zero output
// scale) takes vkp_q_requant itself, for its NaN rule.
// vkp_q_requant's arithmetic on an exact sum, without its NaN rule (the
// caller has a finite multiplier): a form loops vectorise.
static inline double vkp_q_requant_d(double sum, double m, double z, double l, double h) {
  double v = nearbyint(sum * m) + z;
  v = v < l ? l : v;
  return v > h ? h : v;
}

static void vkp_q_requant_sums(const float *restrict sum, int32_t b, float mult, float zp,
                               float lo, float hi, void *restrict y, int y_int8,
                               ptrdiff_t n) {
  const double m = (double)mult, z = (double)zp, l = (double)lo, h = (double)hi;
  if (!(m - m == 0.0)) {
    for (ptrdiff_t q = 0; q < n; ++q) {
      float r = vkp_q_requant((int32_t)sum[q] + b, mult, zp, lo, hi);
      if (y_int8) ((int8_t *)y)[q] = (int8_t)r;
      else ((uint8_t *)y)[q] = (uint8_t)r;
    }
    return;
  }
  if (y_int8) {
    int8_t *restrict yo = y;
    for (ptrdiff_t q = 0; q < n; ++q)
      yo[q] = (int8_t)(int32_t)vkp_q_requant_d((double)sum[q] + (double)b, m, z, l, h);
  } else {
    uint8_t *restrict yo = y;
    for (ptrdiff_t q = 0; q < n; ++q)
      yo[q] = (uint8_t)(int32_t)vkp_q_requant_d((double)sum[q] + (double)b, m, z, l, h);
  }
}

typedef struct vkp_q_dw_job_t {
  const void *x;
  int x_int8;
  int32_t zx;
  const float *wf, *mult;  // C * KH * KW weights; C multipliers
  const int32_t *bias;     // C, or NULL
  float zy, lo, hi;
  void *y;
  int y_int8;
  ptrdiff_t H, W, KH, KW, SH, SW, PT, PL, DH, DW, OH, OW;
  float *scratch;  // VKP_Q_DW_WORKER_FLOATS per worker
} vkp_q_dw_job_t;

static void vkp_q_dw_task(void *ctx, ptrdiff_t c0, ptrdiff_t c1, int worker) {
  const vkp_q_dw_job_t *j = ctx;
  const ptrdiff_t HW = j->H * j->W, P = j->OH * j->OW;
  float *xf = (float *)(((uintptr_t)(j->scratch + worker * VKP_Q_DW_WORKER_FLOATS(
                                         j->H, j->W, j->KH, j->KW, j->SH, j->SW, j->DH,
                                         j->DW, j->OH, j->OW)) + 63) & ~(uintptr_t)63);
  float *yf = xf + (HW + 15) / 16 * 16, *dws = yf + (P + 15) / 16 * 16;
  for (ptrdiff_t c = c0; c < c1; ++c) {
    if (j->x_int8) {
      const int8_t *xc = (const int8_t *)j->x + c * HW;
      for (ptrdiff_t i = 0; i < HW; ++i) xf[i] = (float)((int32_t)xc[i] - j->zx);
    } else {
      const uint8_t *xc = (const uint8_t *)j->x + c * HW;
      for (ptrdiff_t i = 0; i < HW; ++i) xf[i] = (float)((int32_t)xc[i] - j->zx);
    }
    vkp__dw_channels(xf, j->wf + c * j->KH * j->KW, yf, 1, j->H, j->W, j->KH, j->KW, j->SH,
                     j->SW, j->PT, j->PL, j->DH, j->DW, j->OH, j->OW, NULL, NULL, 0, dws, 0,
                     1, 0, j->OH);
    vkp_q_requant_sums(yf, j->bias ? j->bias[c] : 0, j->mult[c], j->zy, j->lo, j->hi,
                       (char *)j->y + c * P, j->y_int8, P);
  }
}

VKP_FN void vkp_q_conv_depthwise(const void *x, int x_int8, int32_t zx, const float *wf,
                                 const int32_t *bias, const float *mult, float zy, float lo,
                                 float hi, void *y, int y_int8, ptrdiff_t C, ptrdiff_t H,
                                 ptrdiff_t W, ptrdiff_t KH, ptrdiff_t KW, ptrdiff_t SH,
                                 ptrdiff_t SW, ptrdiff_t PT, ptrdiff_t PL, ptrdiff_t DH,
                                 ptrdiff_t DW, ptrdiff_t OH, ptrdiff_t OW, float *scratch) {
  vkp_q_dw_job_t j = {x,  x_int8, zx, wf, mult, bias, zy, lo, hi, y,  y_int8, H,
                      W,  KH,     KW, SH, SW,   PT,   PL, DH, DW, OH, OW,     scratch};
  VKP_Q_SPLIT(C, VKP_GRAIN(OH * OW * KH * KW + H * W), vkp_q_dw_task, &j);
}
