// SPDX-License-Identifier: Apache-2.0
// Direct convolution over 2 or 3 spatial dims, NC[D]HW input, weights
// [M, C/G, KD, KH, KW] (2-D: D = OD = KD = 1, so the depth terms fold away).
// Grouped and depthwise convolutions are the same loop with CG = C/G input
// channels per group (1 for depthwise). Each invocation computes CB (1, 2 or
// 4, dividing the MG output channels of a group) output channels at one
// (n, od, oh, ow): every input element it loads feeds CB accumulators,
// neighbouring invocations read neighbouring input columns, and they share
// the weights.
// Generator provides: BLOCKS (= N * M/CB * OD * OH * OW), CB, C, D, H, W, M,
// OD, OH, OW, KD, KH, KW, SD, SH, SW, DD, DH, DW, PF, PT, PL (ints), CG, MG,
// HAS_BIAS, LD0(i) = x, LD1(i) = weight, IN2 = bias, STORE(o, v).
void main() {
  uint blk = gl_GlobalInvocationID.x;
  if (blk >= BLOCKS) return;
  uint ow = blk % OW;
  uint t = blk / OW;
  uint oh = t % OH;
  t /= OH;
  uint od = t % OD;
  t /= OD;
  uint m0 = (t % (M / CB)) * CB;
  uint n = t / (M / CB);
  uint g = m0 / MG;
  int id0 = int(od * SD) - PF;
  int ih0 = int(oh * SH) - PT;
  int iw0 = int(ow * SW) - PL;
  const uint taps = KD * KH * KW;
  const uint wstride = CG * taps;
  vec4 acc = vec4(0.0);
  for (uint c = 0u; c < CG; ++c) {
    uint xbase = (n * C + g * CG + c) * D * H * W;
    uint wbase = (m0 * CG + c) * taps;
    for (uint kd = 0u; kd < KD; ++kd) {
      int id = id0 + int(kd * DD);
      if (id < 0 || id >= int(D)) continue;
      uint xplane = xbase + uint(id) * H * W;
      uint wplane = wbase + kd * KH * KW;
      for (uint kh = 0u; kh < KH; ++kh) {
        int ih = ih0 + int(kh * DH);
        if (ih < 0 || ih >= int(H)) continue;
        for (uint kw = 0u; kw < KW; ++kw) {
          int iw = iw0 + int(kw * DW);
          if (iw < 0 || iw >= int(W)) continue;
          float x = LD0(xplane + uint(ih) * W + uint(iw));
          uint wi = wplane + kh * KW + kw;
          vec4 w = vec4(LD1(wi), CB > 1u ? LD1(wi + wstride) : 0.0,
                        CB > 2u ? LD1(wi + 2u * wstride) : 0.0,
                        CB > 3u ? LD1(wi + 3u * wstride) : 0.0);
          acc += x * w;
        }
      }
    }
  }
#ifdef HAS_BIAS
  acc += vec4(IN2[m0], CB > 1u ? IN2[m0 + 1u] : 0.0, CB > 2u ? IN2[m0 + 2u] : 0.0,
              CB > 3u ? IN2[m0 + 3u] : 0.0);
#endif
  const uint plane = OD * OH * OW;
  uint o = (n * M + m0) * plane + (od * OH + oh) * OW + ow;
  STORE(o, acc.x);
  if (CB > 1u) STORE(o + plane, acc.y);
  if (CB > 2u) STORE(o + 2u * plane, acc.z);
  if (CB > 3u) STORE(o + 3u * plane, acc.w);
}
