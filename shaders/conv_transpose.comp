// SPDX-License-Identifier: Apache-2.0
// Transposed 2-D convolution, NCHW input, weights [C, M/G, KH, KW], one
// output element per invocation as a gather: output (oh, ow) takes input
// (ih, iw) through tap (kh, kw) when ih * SH + kh * DH == oh + PT (and
// likewise along W), so no two invocations write the same element.
// Generator provides: TOTAL, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT,
// PL (ints), CG (= C/G), MG (= M/G), HAS_BIAS, IN0 = x, IN1 = weight,
// IN2 = bias, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint ow = o % OW;
  uint t = o / OW;
  uint oh = t % OH;
  t /= OH;
  uint m = t % M;
  uint n = t / M;
  uint g = m / MG;
  uint mo = m % MG;
  float acc = 0.0;
  for (uint kh = 0u; kh < KH; ++kh) {
    int ty = int(oh) + PT - int(kh * DH);
    if (ty < 0 || uint(ty) % SH != 0u) continue;
    uint ih = uint(ty) / SH;
    if (ih >= H) continue;
    for (uint kw = 0u; kw < KW; ++kw) {
      int tx = int(ow) + PL - int(kw * DW);
      if (tx < 0 || uint(tx) % SW != 0u) continue;
      uint iw = uint(tx) / SW;
      if (iw >= W) continue;
      for (uint c = 0u; c < CG; ++c) {
        uint ci = g * CG + c;
        acc += IN0[((n * C + ci) * H + ih) * W + iw] *
               IN1[((ci * MG + mo) * KH + kh) * KW + kw];
      }
    }
  }
#ifdef HAS_BIAS
  acc += IN2[m];
#endif
  STORE(o, acc);
}
