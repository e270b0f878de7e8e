// SPDX-License-Identifier: Apache-2.0
// Max / average / Lp 2-D pooling, NCHW, one output element per invocation.
// Generator provides: TOTAL, H, W, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, PB,
// PR (ints), POOL_MAX, POOL_AVG or POOL_LP (with P, the integer exponent),
// COUNT_INCLUDE_PAD, IN0 = x, STORE(o, v).
// Average divisor: window positions inside the input, or with
// COUNT_INCLUDE_PAD inside the padded input (positions a ceil_mode window
// adds past the end padding never count). Lp: (sum of |x|^P over the
// positions inside the input)^(1/P).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint ow = o % OW;
  uint t = o / OW;
  uint oh = t % OH;
  uint nc = t / OH;
  int ih0 = int(oh * SH) - PT;
  int iw0 = int(ow * SW) - PL;
  uint base = nc * H * W;
#ifdef POOL_MAX
  float acc = uintBitsToFloat(0xff800000u);
#else
  float acc = 0.0;
  uint count = 0u;
#endif
  for (uint kh = 0u; kh < KH; ++kh) {
    int ih = ih0 + int(kh * DH);
    for (uint kw = 0u; kw < KW; ++kw) {
      int iw = iw0 + int(kw * DW);
      bool inside = ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W);
#if defined(POOL_MAX)
      if (inside) acc = max(acc, IN0[base + uint(ih) * W + uint(iw)]);
#elif defined(POOL_LP)
      if (inside) {
        float a = abs(IN0[base + uint(ih) * W + uint(iw)]);
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
      if (ih >= -PT && ih < int(H) + PB && iw >= -PL && iw < int(W) + PR) ++count;
#else
      if (inside) ++count;
#endif
      if (inside) acc += IN0[base + uint(ih) * W + uint(iw)];
#endif
    }
  }
#if defined(POOL_AVG)
  acc = count > 0u ? acc / float(count) : 0.0;
#elif defined(POOL_LP) && P == 2
  acc = sqrt(acc);
#elif defined(POOL_LP) && P != 1
  acc = pow(acc, 1.0 / float(P));
#endif
  STORE(o, acc);
}
