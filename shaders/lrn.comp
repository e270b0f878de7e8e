// SPDX-License-Identifier: Apache-2.0
// Local response normalisation across channels of N x C x S data, one
// output element per invocation: x / (BIAS + ALPHA / SIZE * sum of x^2 over
// the channels [c - BEFORE, c + AFTER] clipped to [0, C)) ^ BETA.
// Generator provides: TOTAL, C, S, SIZE, BEFORE, AFTER, ALPHA, BETA, BIAS,
// IN0 = x, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint c = (o / S) % C;
  uint plane = o - c * S;  // (n, s) with c = 0
  uint lo = c >= BEFORE ? c - BEFORE : 0u;
  uint hi = min(c + AFTER, C - 1u);
  float sq = 0.0;
  for (uint k = lo; k <= hi; ++k) {
    float v = IN0[plane + k * S];
    sq += v * v;
  }
  STORE(o, IN0[o] / pow(BIAS + ALPHA / float(SIZE) * sq, BETA));
}
