// SPDX-License-Identifier: Apache-2.0
// Transposed convolution over 1 to 3 spatial dims as an implicit GEMM,
// register-blocked like conv_gemm_blocked.comp. Output positions are split by
// phase (od % SD, oh % SH, ow % SW): within one phase the taps that reach an
// output are the same for every position (tap kd reaches od when
// od + PF - kd * DD is a multiple of SD) and they read the input at
// id = ud + (phd + PF - kd * DD) / SD for od = phd + SD * ud. So each phase is
// a plain convolution over the phase's taps, and per (image, phase, group)
//   Y[m, u] = sum_{c, tap of the phase} Wt[c, m, tap] * X(c, u + offset(tap)),
// with no multiply by a tap that cannot land (the gather kernel,
// conv_transpose.comp, skips those per output instead). Whether a tap belongs
// to the phase is uniform over a workgroup. An 8 x 8 workgroup covers 64
// output channels of a group x 64 positions of a phase; each invocation owns
// 8 channels and 8 positions strided by 8.
// Dispatch: (ceil(UP / 64), G * MT, BATCH * SD * SH * SW), UP = UD * UH * UW
// positions per phase (UD = ceil(OD / SD), ...; the positions past the output
// in the shorter phases are masked), MT = ceil(MG / 64).
// Generator provides: C, D, H, W, M, OD, OH, OW, KD, KH, KW, SD, SH, SW, DD,
// DH, DW, PF, PT, PL (ints), CG (= C/G), MG (= M/G), MT, UD, UH, UW, UP,
// HAS_BIAS, LD0(i) = x, LD1(i) = weight [C, MG, KD, KH, KW], IN2 = bias,
// STORE(o, v).
#define TAPS (KD * KH * KW)
#define NOWHERE 0xffffffffu

// One input element, or 0 outside the input; the load itself stays in bounds.
float x_at(uint plane, int id, int ih, int iw) {
  bool ok = uint(id) < D && uint(ih) < H && uint(iw) < W;
  float v = LD0(ok ? plane + (uint(id) * H + uint(ih)) * W + uint(iw) : 0u);
  return ok ? v : 0.0;
}

// The input offset along one dim of tap k in phase ph, when the tap lands
// there (t = ph + pad - k * dil a multiple of the stride): t / stride. The
// shift by stride * span (span = kernel * dilation > k * dil) keeps the
// operands of % and / non-negative (GLSL leaves them undefined for negative
// ones).
bool tap_offset(uint ph, int pad, uint k, uint dil, uint st, uint span, out int off) {
  uint t = uint(int(ph) + pad - int(k * dil) + int(st * span));
  off = int(t / st) - int(span);
  return t % st == 0u;
}

#define ROW_PTR(i) (min(ml0 + i, MG - 1u) * TAPS)
#define COL_SETUP(j)                                                            \
  uint q##j = p0 + 8u * uint(j);                                                \
  uint qc##j = min(q##j, UP - 1u);                                              \
  int uw##j = int(qc##j % UW);                                                  \
  int uh##j = int((qc##j / UW) % UH);                                           \
  int ud##j = int(qc##j / (UW * UH));                                           \
  uint od##j = phd + SD * uint(ud##j), oh##j = phh + SH * uint(uh##j);          \
  uint ow##j = phw + SW * uint(uw##j);                                          \
  uint at##j = q##j < UP && od##j < OD && oh##j < OH && ow##j < OW              \
                   ? (od##j * OH + oh##j) * OW + ow##j                          \
                   : NOWHERE;
#define XL(j) x_at(plane, ud##j + offd, uh##j + offh, uw##j + offw)
#define ROW_STEP(i, lo, hi)              \
  {                                      \
    float a = LD1(cbase + ma##i + tap);  \
    lo += a * b_lo;                      \
    hi += a * b_hi;                      \
  }

float conv_finish(float acc, uint m) {
#ifdef HAS_BIAS
  return acc + IN2[m];
#else
  return acc;
#endif
}

void store_one(uint row, uint m, uint at, float v) {
  if (at != NOWHERE) STORE(row + at, conv_finish(v, m));
}

void store_row(uint b, uint g, uint ml, vec4 lo, vec4 hi, uint at0, uint at1, uint at2,
               uint at3, uint at4, uint at5, uint at6, uint at7) {
  if (ml >= MG) return;
  uint m = g * MG + ml;
  uint row = (b * M + m) * OD * OH * OW;
  store_one(row, m, at0, lo.x);
  store_one(row, m, at1, lo.y);
  store_one(row, m, at2, lo.z);
  store_one(row, m, at3, lo.w);
  store_one(row, m, at4, hi.x);
  store_one(row, m, at5, hi.y);
  store_one(row, m, at6, hi.z);
  store_one(row, m, at7, hi.w);
}

#define STORE_ROW(i, lo, hi) \
  store_row(b, g, ml0 + i, lo, hi, at0, at1, at2, at3, at4, at5, at6, at7);

void main() {
  uint p0 = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  uint g = gl_WorkGroupID.y / MT;
  uint ml0 = (gl_WorkGroupID.y % MT) * 64u + gl_LocalInvocationID.y * 8u;
  uint z = gl_WorkGroupID.z;
  uint phw = z % SW;
  z /= SW;
  uint phh = z % SH;
  z /= SH;
  uint phd = z % SD;
  uint b = z / SD;
  if (ml0 >= MG || p0 >= UP) return;
  uint ma0 = ROW_PTR(0u), ma1 = ROW_PTR(1u), ma2 = ROW_PTR(2u), ma3 = ROW_PTR(3u);
  uint ma4 = ROW_PTR(4u), ma5 = ROW_PTR(5u), ma6 = ROW_PTR(6u), ma7 = ROW_PTR(7u);
  COL_SETUP(0) COL_SETUP(1) COL_SETUP(2) COL_SETUP(3)
  COL_SETUP(4) COL_SETUP(5) COL_SETUP(6) COL_SETUP(7)
  vec4 l0 = vec4(0.0), l1 = vec4(0.0), l2 = vec4(0.0), l3 = vec4(0.0);
  vec4 l4 = vec4(0.0), l5 = vec4(0.0), l6 = vec4(0.0), l7 = vec4(0.0);
  vec4 h0 = vec4(0.0), h1 = vec4(0.0), h2 = vec4(0.0), h3 = vec4(0.0);
  vec4 h4 = vec4(0.0), h5 = vec4(0.0), h6 = vec4(0.0), h7 = vec4(0.0);
  for (uint c = 0u; c < CG; ++c) {
    uint plane = (b * C + g * CG + c) * D * H * W;
    uint cbase = (g * CG + c) * MG * TAPS;
    for (uint kd = 0u; kd < KD; ++kd) {
      int offd;
      if (!tap_offset(phd, PF, kd, DD, SD, KD * DD, offd)) continue;
      for (uint kh = 0u; kh < KH; ++kh) {
        int offh;
        if (!tap_offset(phh, PT, kh, DH, SH, KH * DH, offh)) continue;
        for (uint kw = 0u; kw < KW; ++kw) {
          int offw;
          if (!tap_offset(phw, PL, kw, DW, SW, KW * DW, offw)) continue;
          uint tap = (kd * KH + kh) * KW + kw;
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
  STORE_ROW(0u, l0, h0)
  STORE_ROW(1u, l1, h1)
  STORE_ROW(2u, l2, h2)
  STORE_ROW(3u, l3, h3)
  STORE_ROW(4u, l4, h4)
  STORE_ROW(5u, l5, h5)
  STORE_ROW(6u, l6, h6)
  STORE_ROW(7u, l7, h7)
}
