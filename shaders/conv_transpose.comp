// SPDX-License-Identifier: Apache-2.0
// Transposed convolution over 2 or 3 spatial dims, NC[D]HW input, weights
// [C, M/G, KD, KH, KW] (2-D: D = OD = KD = 1), one output element per
// invocation as a gather: output (od, oh, ow) takes input (id, ih, iw)
// through tap (kd, kh, kw) when id * SD + kd * DD == od + PF (and likewise
// along H and W), so no two invocations write the same element.
// Generator provides: TOTAL, C, D, H, W, M, OD, OH, OW, KD, KH, KW, SD, SH,
// SW, DD, DH, DW, PF, PT, PL (ints), CG (= C/G), MG (= M/G), HAS_BIAS,
// IN0 = x, IN1 = weight, IN2 = bias, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint ow = o % OW;
  uint t = o / OW;
  uint oh = t % OH;
  t /= OH;
  uint od = t % OD;
  t /= OD;
  uint m = t % M;
  uint n = t / M;
  uint g = m / MG;
  uint mo = m % MG;
  float acc = 0.0;
  for (uint kd = 0u; kd < KD; ++kd) {
    int tz = int(od) + PF - int(kd * DD);
    if (tz < 0 || uint(tz) % SD != 0u) continue;
    uint id = uint(tz) / SD;
    if (id >= D) continue;
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
        uint tap = (kd * KH + kh) * KW + kw;
        for (uint c = 0u; c < CG; ++c) {
          uint ci = g * CG + c;
          acc += IN0[(((n * C + ci) * D + id) * H + ih) * W + iw] *
                 IN1[(ci * MG + mo) * KD * KH * KW + tap];
        }
      }
    }
  }
#ifdef HAS_BIAS
  acc += IN2[m];
#endif
  STORE(o, acc);
}
