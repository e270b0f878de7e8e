// SPDX-License-Identifier: Apache-2.0
// Convolution (group 1) over 2 or 3 spatial dims as an implicit GEMM,
// register-blocked like gemm_blocked.comp (the CPU-like-device variant): per
// image b,
//   Y[m, p] = sum_k Wt[m, k] * X(k, p),  k = (c, kd, kh, kw), p = (od, oh, ow),
// where Wt is the weight tensor read as an [M, C*KD*KH*KW] matrix and X(k, p)
// is gathered from the input on the fly (zero in the padding): no im2col
// buffer. A 2-D convolution is a 3-D one of depth 1 (D = OD = KD = 1, PF = 0):
// its depth terms are constants the compiler folds away. An 8 x 8 workgroup
// covers 64 output channels x 64 output pixels; each invocation owns 8
// channels and 8 pixels strided by 8.
//
// The planes read are XD x XH x XW, and a window starts XPF/XPT/XPL before
// its output position times the strides: the input itself (the pads), or
// with UNCHECKED defined either the input where no window reaches past it
// or its zero-padded copy (conv_pad.comp; pads 0): then every tap is an
// input element and the loads go unchecked, a third faster on lavapipe
// than checking each one against the padding.
// Generator provides: C, D, H, W, M, OD, OH, OW, KD, KH, KW, SD, SH, SW, DD,
// DH, DW, XD, XH, XW, XPF, XPT, XPL, UNCHECKED, NP (= OD * OH * OW), KT (=
// C * KD * KH * KW), BATCH, HAS_BIAS, LD0(i) = x (or its padded copy),
// LD1(i) = weight, IN2 = bias, STORE(o, v).
float conv_finish(float acc, uint m) {
#ifdef HAS_BIAS
  return acc + IN2[m];
#else
  return acc;
#endif
}

void store_half(uint row, uint m, uint p, vec4 acc) {
  if (p < NP) STORE(row + p, conv_finish(acc.x, m));
  if (p + 8u < NP) STORE(row + p + 8u, conv_finish(acc.y, m));
  if (p + 16u < NP) STORE(row + p + 16u, conv_finish(acc.z, m));
  if (p + 24u < NP) STORE(row + p + 24u, conv_finish(acc.w, m));
}

void store_row(uint b, uint m, uint p0, vec4 lo, vec4 hi) {
  if (m >= M) return;
  uint row = (b * M + m) * NP;
  store_half(row, m, p0, lo);
  store_half(row, m, p0 + 32u, hi);
}

// One input element, or 0 in the padding, at `at` (an element index into the
// input, valid when `ok`); the load itself stays in bounds.
float x_at(bool ok, int at) {
  float v = LD0(ok ? uint(at) : 0u);
  return ok ? v : 0.0;
}

#define ROW_PTR(i) (min(m0 + i, M - 1u) * KT)
// Per output pixel (column j): where its window starts in the input (id, ih,
// iw: negative in the padding) and that start as an element offset, xb.
#define COL_SETUP(j)                                        \
  uint q##j = min(p0 + 8u * uint(j), NP - 1u);              \
  uint r##j = q##j / OW;                                    \
  int id##j = int((OD == 1u ? 0u : r##j / OH) * SD) - XPF;  \
  int ih##j = int((OD == 1u ? r##j : r##j % OH) * SH) - XPT; \
  int iw##j = int((q##j % OW) * SW) - XPL;                   \
  int xb##j = (id##j * int(XH) + ih##j) * int(XW) + iw##j;
// Per window row (c, kd, kh): whether column j's row lies inside the input
// and where it starts; per tap kw only the column is checked.
#ifdef UNCHECKED
#define ROW_SETUP(j) int rb##j = xb##j + row;
#define XL(j) LD0(uint(rb##j + dw))
#else
#define ROW_SETUP(j)                                         \
  bool rk##j = uint(id##j + dd) < D && uint(ih##j + dh) < H; \
  int rb##j = xb##j + row;
#define XL(j) x_at(rk##j && uint(iw##j + dw) < W, rb##j + dw)
#endif
#define ROW_STEP(i, lo, hi)      \
  {                              \
    float a = LD1(ma##i + ak);   \
    lo += a * b_lo;              \
    hi += a * b_hi;              \
  }

void main() {
  uint p0 = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.y * 64u + gl_LocalInvocationID.y * 8u;
  uint b = gl_WorkGroupID.z;
  if (m0 >= M || p0 >= NP || b >= BATCH) return;
  uint ma0 = ROW_PTR(0u), ma1 = ROW_PTR(1u), ma2 = ROW_PTR(2u), ma3 = ROW_PTR(3u);
  uint ma4 = ROW_PTR(4u), ma5 = ROW_PTR(5u), ma6 = ROW_PTR(6u), ma7 = ROW_PTR(7u);
  COL_SETUP(0) COL_SETUP(1) COL_SETUP(2) COL_SETUP(3)
  COL_SETUP(4) COL_SETUP(5) COL_SETUP(6) COL_SETUP(7)
  vec4 l0 = vec4(0.0), l1 = vec4(0.0), l2 = vec4(0.0), l3 = vec4(0.0);
  vec4 l4 = vec4(0.0), l5 = vec4(0.0), l6 = vec4(0.0), l7 = vec4(0.0);
  vec4 h0 = vec4(0.0), h1 = vec4(0.0), h2 = vec4(0.0), h3 = vec4(0.0);
  vec4 h4 = vec4(0.0), h5 = vec4(0.0), h6 = vec4(0.0), h7 = vec4(0.0);
  uint ak = 0u;
  for (uint c = 0u; c < C; ++c) {
    uint plane = (b * C + c) * XD * XH * XW;
    for (uint kd = 0u; kd < KD; ++kd) {
      int dd = int(kd * DD);
      for (uint kh = 0u; kh < KH; ++kh) {
        int dh = int(kh * DH);
        int row = int(plane) + (dd * int(XH) + dh) * int(XW);
        ROW_SETUP(0) ROW_SETUP(1) ROW_SETUP(2) ROW_SETUP(3)
        ROW_SETUP(4) ROW_SETUP(5) ROW_SETUP(6) ROW_SETUP(7)
        for (uint kw = 0u; kw < KW; ++kw, ++ak) {
          int dw = int(kw * DW);
          vec4 b_lo = vec4(XL(0), XL(1), XL(2), XL(3));
          vec4 b_hi = vec4(XL(4), XL(5), XL(6), XL(7));
          ROW_STEP(0, l0, h0)
          ROW_STEP(1, l1, h1)
          ROW_STEP(2, l2, h2)
          ROW_STEP(3, l3, h3)
          ROW_STEP(4, l4, h4)
          ROW_STEP(5, l5, h5)
          ROW_STEP(6, l6, h6)
          ROW_STEP(7, l7, h7)
        }
      }
    }
  }
  store_row(b, m0, p0, l0, h0);
  store_row(b, m0 + 1u, p0, l1, h1);
  store_row(b, m0 + 2u, p0, l2, h2);
  store_row(b, m0 + 3u, p0, l3, h3);
  store_row(b, m0 + 4u, p0, l4, h4);
  store_row(b, m0 + 5u, p0, l5, h5);
  store_row(b, m0 + 6u, p0, l6, h6);
  store_row(b, m0 + 7u, p0, l7, h7);
}
