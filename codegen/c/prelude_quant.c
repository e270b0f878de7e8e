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

// qlinear_conv of one image, groups of 1, int8 weights, as a GEMM of the
// weights [M, K] by an im2col of the image [K, P] (K = C*KH*KW, P = OH*OW)
// in 8-bit: with xu the activations as uint8 (int8 ones shifted by 128,
// their zero point too) and K padded to a multiple of 4,
//   acc[m, p] = sum_k xu*w - zx*sum_k w[m] - zw[m]*sum_k xu[p] + K*zx*zw[m]
//             + bias[m],
// exactly the int32 sum of (x - zx)(w - zw); the padding holds zx, which
// contributes nothing. The columns are packed 16 at a time, 4 k per 32-bit
// lane (the layout of AVX-512 VNNI's vpdpbusd, u8 x s8 -> s32; the plain C
// loop is the portable path). Scratch: vkp_q_conv_scratch bytes.
#define VKP_Q_TILE_P 16
#define VKP_Q_TILE_M 8
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#endif

static inline size_t vkp_q_conv_scratch(ptrdiff_t K, ptrdiff_t P, ptrdiff_t M) {
  size_t k4 = (size_t)(K + 3) / 4, pp = (size_t)(P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P;
  return pp * k4 * 64 + (size_t)M * k4 * 4 + 4 * (size_t)(M + pp * VKP_Q_TILE_P) + 256;
}

static void vkp_q_conv_gemm(const uint8_t *x, int x_signed, int32_t zx, const int8_t *w,
                            const int8_t *zw, ptrdiff_t n_zw, const int32_t *bias,
                            const float *mult, ptrdiff_t n_mult, int32_t zy, float lo,
                            float hi, void *y, int y_signed, ptrdiff_t C, ptrdiff_t H,
                            ptrdiff_t W, ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW,
                            ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t sh, ptrdiff_t sw,
                            ptrdiff_t ph, ptrdiff_t pw, ptrdiff_t dh, ptrdiff_t dw,
                            uint8_t *scratch) {
  const ptrdiff_t K = C * KH * KW, K4 = (K + 3) / 4, P = OH * OW;
  const ptrdiff_t PT = (P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P;
  const uint8_t flip = x_signed ? 0x80 : 0;
  const int32_t zxu = x_signed ? zx + 128 : zx;
  uint8_t *col = scratch;
  int8_t *wp = (int8_t *)(col + (size_t)PT * K4 * 64);
  int32_t *wsum = (int32_t *)(((uintptr_t)(wp + M * K4 * 4) + 63) & ~(uintptr_t)63);
  int32_t *xsum = wsum + M;
  int any_zw = 0;
  for (ptrdiff_t m = 0; m < n_zw; ++m) any_zw |= zw[m] != 0;
  // Weights, K padded with zeros, and their row sums.
  for (ptrdiff_t m = 0; m < M; ++m) {
    int32_t s = 0;
    for (ptrdiff_t k = 0; k < K4 * 4; ++k) {
      int8_t v = k < K ? w[m * K + k] : 0;
      wp[m * K4 * 4 + k] = v;
      s += v;
    }
    wsum[m] = s;
  }
  // im2col: col[((p / 16) * K4 + k / 4) * 64 + (p % 16) * 4 + k % 4].
  for (ptrdiff_t k = 0; k < K4 * 4; ++k) {
    const ptrdiff_t c = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    uint8_t *ck = col + (k / 4) * 64 + k % 4;
    for (ptrdiff_t oy = 0; oy < OH; ++oy) {
      const ptrdiff_t iy = oy * sh - ph + ky * dh;
      const int row_in = k < K && iy >= 0 && iy < H;
      const uint8_t *xr = x + (c * H + (row_in ? iy : 0)) * W;
      for (ptrdiff_t ox = 0; ox < OW; ++ox) {
        const ptrdiff_t p = oy * OW + ox, ix = ox * sw - pw + kx * dw;
        uint8_t v = k >= K ? 0
                    : row_in && ix >= 0 && ix < W ? (uint8_t)(xr[ix] ^ flip)
                                                   : (uint8_t)zxu;
        ck[(p / VKP_Q_TILE_P) * K4 * 64 + (p % VKP_Q_TILE_P) * 4] = v;
      }
    }
    for (ptrdiff_t p = P; p < PT * VKP_Q_TILE_P; ++p)
      ck[(p / VKP_Q_TILE_P) * K4 * 64 + (p % VKP_Q_TILE_P) * 4] = 0;
  }
  if (any_zw)
    for (ptrdiff_t p = 0; p < P; ++p) {
      int32_t s = 0;
      const uint8_t *cp = col + (p / VKP_Q_TILE_P) * K4 * 64 + (p % VKP_Q_TILE_P) * 4;
      for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
        s += cp[k4 * 64] + cp[k4 * 64 + 1] + cp[k4 * 64 + 2] + cp[k4 * 64 + 3];
      xsum[p] = s;
    }
  for (ptrdiff_t t = 0; t < PT; ++t) {
    const uint8_t *ct = col + t * K4 * 64;
    for (ptrdiff_t m0 = 0; m0 < M; m0 += VKP_Q_TILE_M) {
      const ptrdiff_t mt = M - m0 < VKP_Q_TILE_M ? M - m0 : VKP_Q_TILE_M;
      int32_t acc[VKP_Q_TILE_M][VKP_Q_TILE_P] __attribute__((aligned(64)));
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
      __m512i a[VKP_Q_TILE_M];
      for (int j = 0; j < VKP_Q_TILE_M; ++j) a[j] = _mm512_setzero_si512();
      const int8_t *wr = wp + m0 * K4 * 4;
      if (mt == VKP_Q_TILE_M) {
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
          const __m512i xv = _mm512_loadu_si512((const void *)(ct + k4 * 64));
          for (int j = 0; j < VKP_Q_TILE_M; ++j) {
            int32_t wv;
            __builtin_memcpy(&wv, wr + (j * K4 + k4) * 4, 4);
            a[j] = _mm512_dpbusd_epi32(a[j], xv, _mm512_set1_epi32(wv));
          }
        }
      } else {
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
          const __m512i xv = _mm512_loadu_si512((const void *)(ct + k4 * 64));
          for (ptrdiff_t j = 0; j < mt; ++j) {
            int32_t wv;
            __builtin_memcpy(&wv, wr + (j * K4 + k4) * 4, 4);
            a[j] = _mm512_dpbusd_epi32(a[j], xv, _mm512_set1_epi32(wv));
          }
        }
      }
      for (int j = 0; j < VKP_Q_TILE_M; ++j) _mm512_store_si512((void *)acc[j], a[j]);
#else
      for (ptrdiff_t j = 0; j < mt; ++j) {
        const int8_t *wr = wp + (m0 + j) * K4 * 4;
        for (int q = 0; q < VKP_Q_TILE_P; ++q) acc[j][q] = 0;
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
          for (int q = 0; q < VKP_Q_TILE_P; ++q)
            for (int e = 0; e < 4; ++e)
              acc[j][q] += (int32_t)ct[k4 * 64 + q * 4 + e] * (int32_t)wr[k4 * 4 + e];
      }
#endif
      for (ptrdiff_t j = 0; j < mt; ++j) {
        const ptrdiff_t m = m0 + j;
        const int32_t z = n_zw ? (int32_t)zw[n_zw == 1 ? 0 : m] : 0;
        const int32_t base = (bias ? bias[m] : 0) - zxu * wsum[m] + (int32_t)K * zxu * z;
        const float mu = mult[n_mult == 1 ? 0 : m];
        const ptrdiff_t p0 = t * VKP_Q_TILE_P;
        const ptrdiff_t pn = P - p0 < VKP_Q_TILE_P ? P - p0 : VKP_Q_TILE_P;
        for (ptrdiff_t q = 0; q < pn; ++q) {
          int32_t v = acc[j][q] + base - (any_zw ? z * xsum[p0 + q] : 0);
          float r = vkp_q_requant(v, mu, (float)zy, lo, hi);
          if (y_signed) ((int8_t *)y)[m * P + p0 + q] = (int8_t)r;
          else ((uint8_t *)y)[m * P + p0 + q] = (uint8_t)r;
        }
      }
    }
  }
}
