// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution over 2 or 3 spatial dims (group = C: one input
// channel per group, MG output channels per input channel), NC[D]HW (2-D:
// D = OD = KD = 1). Each invocation computes 4 neighbouring output columns
// (ow0 .. ow0+3) of one output channel: every weight is loaded once and
// feeds 4 accumulators, and with stride 1 the four input windows overlap,
// so loads are shared through the cache. The generic direct kernel
// (conv2d.comp) computes one output per invocation here.
// Generator provides: BLOCKS (= N * M * OD * OH * ceil(OW / 4)), C, D, H, W,
// M, OD, OH, OW, KD, KH, KW, SD, SH, SW, DD, DH, DW, PF, PT, PL (ints), MG,
// HAS_BIAS, LD0(i) = x, LD1(i) = weight, IN2 = bias, STORE(o, v).
#define OWB ((OW + 3u) / 4u)

// Input element (row start + column iw), or 0 in the padding; the load
// itself stays in bounds.
float x_at(uint row, int iw) {
  bool ok = uint(iw) < W;
  float v = LD0(ok ? row + uint(iw) : row);
  return ok ? v : 0.0;
}

void main() {
  uint blk = gl_GlobalInvocationID.x;
  if (blk >= BLOCKS) return;
  uint owb = blk % OWB;
  uint t = blk / OWB;
  uint oh = t % OH;
  t /= OH;
  uint od = t % OD;
  t /= OD;
  uint m = t % M;
  uint n = t / M;
  uint ow0 = owb * 4u;
  int id0 = int(od * SD) - PF;
  int ih0 = int(oh * SH) - PT;
  int iw0 = int(ow0 * SW) - PL;
  uint xbase = (n * C + m / MG) * D * H * W;
  uint wbase = m * KD * KH * KW;
  vec4 acc = vec4(0.0);
  for (uint kd = 0u; kd < KD; ++kd) {
    int id = id0 + int(kd * DD);
    if (id < 0 || id >= int(D)) continue;
    uint xplane = xbase + uint(id) * H * W;
    uint wplane = wbase + kd * KH * KW;
    for (uint kh = 0u; kh < KH; ++kh) {
      int ih = ih0 + int(kh * DH);
      if (ih < 0 || ih >= int(H)) continue;
      uint row = xplane + uint(ih) * W;
      for (uint kw = 0u; kw < KW; ++kw) {
        float w = LD1(wplane + kh * KW + kw);
        int iw = iw0 + int(kw * DW);
        acc += w * vec4(x_at(row, iw), x_at(row, iw + int(SW)), x_at(row, iw + 2 * int(SW)),
                        x_at(row, iw + 3 * int(SW)));
      }
    }
  }
#ifdef HAS_BIAS
  acc += IN2[m];
#endif
  uint o = ((n * M + m) * OD * OH + od * OH + oh) * OW + ow0;
  STORE(o, acc.x);
  if (ow0 + 1u < OW) STORE(o + 1u, acc.y);
  if (ow0 + 2u < OW) STORE(o + 2u, acc.z);
  if (ow0 + 3u < OW) STORE(o + 3u, acc.w);
}
