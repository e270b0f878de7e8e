// SPDX-License-Identifier: Apache-2.0
// Max / average / Lp pooling over 1 to 3 spatial dims (2-D: D = OD = KD =
// 1; 1-D: also H = OH = KH = 1), NC[D]HW, one output element per invocation.
// Generator provides: TOTAL, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW,
// DD, DH, DW, PF, PT, PL, PK, PB, PR (ints: front/top/left and back/
// bottom/right pads), POOL_MAX (with EMPTY_MAX, the value of a window with
// no tap in the input), POOL_AVG or POOL_LP (with P, the integer
// exponent), COUNT_INCLUDE_PAD, INDICES and COL_MAJOR (max: write the flat
// index of each maximum into x instead of the value, spatial dims
// row-major, or column-major with COL_MAJOR), LD0 = x (widened: int8/uint8 and float16 data
// compute in float, exact for 8-bit values), STORE(o, v).
// Max: the first maximum, NaN winning (as in "ref"); EMPTY_MAX (-inf, or an
// 8-bit type's lowest value) and index -1 for a window over padding only. Average divisor: window positions inside the
// input, or with COUNT_INCLUDE_PAD inside the padded input (positions a
// ceil_mode window adds past the end padding never count). Lp: (sum of
// |x|^P over the positions inside the input)^(1/P).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint ow = o % OW;
  uint t = o / OW;
  uint oh = t % OH;
  t /= OH;
  uint od = t % OD;
  uint nc = t / OD;
  int id0 = int(od * SD) - PF;
  int ih0 = int(oh * SH) - PT;
  int iw0 = int(ow * SW) - PL;
  uint base = nc * D * H * W;
#ifdef POOL_MAX
  float acc = uintBitsToFloat(0xff800000u);
  int best = -1;
#else
  float acc = 0.0;
  uint count = 0u;
#endif
  for (uint kd = 0u; kd < KD; ++kd) {
    int id = id0 + int(kd * DD);
    for (uint kh = 0u; kh < KH; ++kh) {
      int ih = ih0 + int(kh * DH);
      for (uint kw = 0u; kw < KW; ++kw) {
        int iw = iw0 + int(kw * DW);
        bool inside = id >= 0 && id < int(D) && ih >= 0 && ih < int(H) && iw >= 0 &&
                      iw < int(W);
        uint sp = (uint(id) * H + uint(ih)) * W + uint(iw);
#if defined(POOL_MAX)
        if (inside) {
          float v = float(LD0(base + sp));
          if (best < 0 || (!isnan(acc) && (isnan(v) || v > acc))) {
            acc = v;
#if COL_MAJOR
            best = id + (ih + iw * int(H)) * int(D);
#else
            best = int(sp);
#endif
          }
        }
#elif defined(POOL_LP)
        if (inside) {
          float a = abs(float(LD0(base + sp)));
#if P == 1
          acc += a;
#elif P == 2
          acc += a * a;
#else
          acc += pow(a, float(P));
#endif
        }
#else
#ifdef COUNT_INCLUDE_PAD
        if (id >= -PF && id < int(D) + PK && ih >= -PT && ih < int(H) + PB && iw >= -PL &&
            iw < int(W) + PR)
          ++count;
#else
        if (inside) ++count;
#endif
        if (inside) acc += float(LD0(base + sp));
#endif
      }
    }
  }
#if defined(POOL_AVG)
  acc = count > 0u ? acc / float(count) : 0.0;
#elif defined(POOL_LP) && P == 2
  acc = sqrt(acc);
#elif defined(POOL_LP) && P != 1
  acc = pow(acc, 1.0 / float(P));
#endif
#if defined(POOL_MAX) && INDICES
  STORE(o, best < 0 ? ACC_T(-1) : ACC_T(base) + ACC_T(best));
#elif defined(POOL_MAX)
  STORE(o, ACC_T(best < 0 ? EMPTY_MAX : acc));
#else
  STORE(o, ACC_T(acc));
#endif
}
