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
// contributes nothing. The im2col is built row by row (contiguous copies),
// then interleaved 16 columns at a time with 4 k per 32-bit lane: the
// layout of AVX-512 VNNI's vpdpbusd (u8 x s8 -> s32), which then also
// requantizes 16 outputs at a time (in double, as ref). Without VNNI the
// same layout goes through plain C. Scratch: vkp_q_conv_scratch bytes.
#define VKP_Q_TILE_P 16
#define VKP_Q_TILE_M 8
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define VKP_Q_VNNI 1
#endif

static inline size_t vkp_q_conv_scratch(ptrdiff_t K, ptrdiff_t P, ptrdiff_t M) {
  size_t k4 = (size_t)(K + 3) / 4, pp = (size_t)(P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P;
  return 2 * pp * k4 * 64 + (size_t)M * k4 * 4 + 4 * (size_t)(M + pp * VKP_Q_TILE_P) + 256;
}

VKP_FN void vkp_q_conv_gemm(const uint8_t *x, int x_signed, int32_t zx, const int8_t *w,
                            const int8_t *zw, ptrdiff_t n_zw, const int32_t *bias,
                            const float *mult, ptrdiff_t n_mult, int32_t zy, float lo,
                            float hi, void *y, int y_signed, ptrdiff_t C, ptrdiff_t H,
                            ptrdiff_t W, ptrdiff_t M, ptrdiff_t KH, ptrdiff_t KW,
                            ptrdiff_t OH, ptrdiff_t OW, ptrdiff_t sh, ptrdiff_t sw,
                            ptrdiff_t ph, ptrdiff_t pw, ptrdiff_t dh, ptrdiff_t dw,
                            uint8_t *scratch) {
  const ptrdiff_t K = C * KH * KW, K4 = (K + 3) / 4, P = OH * OW;
  const ptrdiff_t PT = (P + VKP_Q_TILE_P - 1) / VKP_Q_TILE_P, PP = PT * VKP_Q_TILE_P;
  const uint8_t flip = x_signed ? 0x80 : 0;
  const int32_t zxu = x_signed ? zx + 128 : zx;
  uint8_t *col = scratch, *rows = col + (size_t)PT * K4 * 64;
  int8_t *wp = (int8_t *)(rows + (size_t)PT * K4 * 64);
  int32_t *wsum = (int32_t *)(((uintptr_t)(wp + M * K4 * 4) + 63) & ~(uintptr_t)63);
  const int8_t *wk = wp;
  int32_t *xsum = wsum + M;
  int any_zw = 0;
  for (ptrdiff_t m = 0; m < n_zw; ++m) any_zw |= zw[m] != 0;
  // Weights with K padded with zeros (copied only when K is not a multiple
  // of 4), and their row sums.
  if (K % 4 == 0) {
    wk = w;
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
  // im2col rows: rows[k * PP + p]; the window's columns inside the image
  // are ox in [ox0, ox1).
  for (ptrdiff_t k = 0; k < K4 * 4; ++k) {
    uint8_t *rk = rows + k * PP;
    if (k >= K) {
      for (ptrdiff_t p = 0; p < PP; ++p) rk[p] = 0;
      continue;
    }
    const ptrdiff_t c = k / (KH * KW), ky = k / KW % KH, kx = k % KW;
    const ptrdiff_t off = kx * dw - pw;
    ptrdiff_t ox0 = off < 0 ? (-off + sw - 1) / sw : 0;
    ptrdiff_t ox1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
    if (ox1 > OW) ox1 = OW;
    if (ox0 > ox1) ox0 = ox1;
    for (ptrdiff_t oy = 0; oy < OH; ++oy) {
      const ptrdiff_t iy = oy * sh - ph + ky * dh;
      uint8_t *r = rk + oy * OW;
      if (iy < 0 || iy >= H) {
        for (ptrdiff_t ox = 0; ox < OW; ++ox) r[ox] = (uint8_t)zxu;
        continue;
      }
      const uint8_t *xr = x + (c * H + iy) * W + off;
      for (ptrdiff_t ox = 0; ox < ox0; ++ox) r[ox] = (uint8_t)zxu;
      if (sw == 1)
        for (ptrdiff_t ox = ox0; ox < ox1; ++ox) r[ox] = (uint8_t)(xr[ox] ^ flip);
      else
        for (ptrdiff_t ox = ox0; ox < ox1; ++ox) r[ox] = (uint8_t)(xr[ox * sw] ^ flip);
      for (ptrdiff_t ox = ox1; ox < OW; ++ox) r[ox] = (uint8_t)zxu;
    }
    for (ptrdiff_t p = P; p < PP; ++p) rk[p] = 0;
  }
  // Interleave: col[(t * K4 + k4) * 64 + q * 4 + e] = rows[(4 k4 + e) * PP + 16 t + q].
  for (ptrdiff_t t = 0; t < PT; ++t)
    for (ptrdiff_t k4 = 0; k4 < K4; ++k4) {
      const uint8_t *r0 = rows + 4 * k4 * PP + t * VKP_Q_TILE_P;
      uint8_t *ct = col + (t * K4 + k4) * 64;
#ifdef VKP_Q_VNNI
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
  if (any_zw)
    for (ptrdiff_t p = 0; p < P; ++p) {
      int32_t s = 0;
      for (ptrdiff_t k = 0; k < K; ++k) s += rows[k * PP + p];
      xsum[p] = s;
    }
  for (ptrdiff_t t = 0; t < PT; ++t) {
    const uint8_t *ct = col + t * K4 * 64;
    const ptrdiff_t p0 = t * VKP_Q_TILE_P;
    const ptrdiff_t pn = P - p0 < VKP_Q_TILE_P ? P - p0 : VKP_Q_TILE_P;
    for (ptrdiff_t m0 = 0; m0 < M; m0 += VKP_Q_TILE_M) {
      const ptrdiff_t mt = M - m0 < VKP_Q_TILE_M ? M - m0 : VKP_Q_TILE_M;
#ifdef VKP_Q_VNNI
      __m512i a[VKP_Q_TILE_M];
      for (int j = 0; j < VKP_Q_TILE_M; ++j) a[j] = _mm512_setzero_si512();
      const int8_t *wr = wk + m0 * K4 * 4;
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
      const __mmask16 keep = (__mmask16)((1u << pn) - 1u);
      const __m512d vlo = _mm512_set1_pd(lo), vhi = _mm512_set1_pd(hi),
                    vzy = _mm512_set1_pd((double)zy);
      __m512i vxs = _mm512_setzero_si512();
      if (any_zw) vxs = _mm512_maskz_loadu_epi32(keep, xsum + p0);
      for (ptrdiff_t j = 0; j < mt; ++j) {
        const ptrdiff_t m = m0 + j;
        const int32_t z = n_zw ? (int32_t)zw[n_zw == 1 ? 0 : m] : 0;
        const int32_t base = (bias ? bias[m] : 0) - zxu * wsum[m] + (int32_t)K * zxu * z;
        __m512i v = _mm512_add_epi32(a[j], _mm512_set1_epi32(base));
        if (any_zw) v = _mm512_sub_epi32(v, _mm512_mullo_epi32(vxs, _mm512_set1_epi32(z)));
        const __m512d mu = _mm512_set1_pd((double)mult[n_mult == 1 ? 0 : m]);
        __m512d d0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(v));
        __m512d d1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1));
        d0 = _mm512_roundscale_pd(_mm512_mul_pd(d0, mu), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        d1 = _mm512_roundscale_pd(_mm512_mul_pd(d1, mu), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        d0 = _mm512_min_pd(_mm512_max_pd(_mm512_add_pd(d0, vzy), vlo), vhi);
        d1 = _mm512_min_pd(_mm512_max_pd(_mm512_add_pd(d1, vzy), vlo), vhi);
        __m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtpd_epi32(d0)),
                                       _mm512_cvtpd_epi32(d1), 1);
        _mm_mask_storeu_epi8((char *)y + m * P + p0, keep, _mm512_cvtepi32_epi8(r));
      }
      (void)y_signed;
#else
      int32_t acc[VKP_Q_TILE_M][VKP_Q_TILE_P];
      for (ptrdiff_t j = 0; j < mt; ++j) {
        const int8_t *wr = wk + (m0 + j) * K4 * 4;
        for (int q = 0; q < VKP_Q_TILE_P; ++q) acc[j][q] = 0;
        for (ptrdiff_t k4 = 0; k4 < K4; ++k4)
          for (int q = 0; q < VKP_Q_TILE_P; ++q)
            for (int e = 0; e < 4; ++e)
              acc[j][q] += (int32_t)ct[k4 * 64 + q * 4 + e] * (int32_t)wr[k4 * 4 + e];
      }
      for (ptrdiff_t j = 0; j < mt; ++j) {
        const ptrdiff_t m = m0 + j;
        const int32_t z = n_zw ? (int32_t)zw[n_zw == 1 ? 0 : m] : 0;
        const int32_t base = (bias ? bias[m] : 0) - zxu * wsum[m] + (int32_t)K * zxu * z;
        const float mu = mult[n_mult == 1 ? 0 : m];
        for (ptrdiff_t q = 0; q < pn; ++q) {
          int32_t v = acc[j][q] + base - (any_zw ? z * xsum[p0 + q] : 0);
          float r = vkp_q_requant(v, mu, (float)zy, lo, hi);
          if (y_signed) ((int8_t *)y)[m * P + p0 + q] = (int8_t)r;
          else ((uint8_t *)y)[m * P + p0 + q] = (uint8_t)r;
        }
      }
#endif
    }
  }
}
