// SPDX-License-Identifier: Apache-2.0
// Direct 2-D convolution, NCHW input, weights [M, C/G, KH, KW]: one output
// element per invocation. Grouped and depthwise convolutions are the same
// loop with CG = C/G input channels per group (1 for depthwise).
// Generator provides: TOTAL, C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, PT,
// PL (ints), CG, MG (output channels per group), HAS_BIAS, IN0 = x,
// IN1 = weight, IN2 = bias, STORE(o, v).
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
  int ih0 = int(oh * SH) - PT;
  int iw0 = int(ow * SW) - PL;
  float acc = 0.0;
  for (uint c = 0u; c < CG; ++c) {
    uint xbase = (n * C + g * CG + c) * H * W;
    uint wbase = (m * CG + c) * KH * KW;
    for (uint kh = 0u; kh < KH; ++kh) {
      int ih = ih0 + int(kh * DH);
      if (ih < 0 || ih >= int(H)) continue;
      for (uint kw = 0u; kw < KW; ++kw) {
        int iw = iw0 + int(kw * DW);
        if (iw < 0 || iw >= int(W)) continue;
        acc += IN0[xbase + uint(ih) * W + uint(iw)] * IN1[wbase + kh * KW + kw];
      }
    }
  }
#ifdef HAS_BIAS
  acc += IN2[m];
#endif
  STORE(o, acc);
}
