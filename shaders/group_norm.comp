// SPDX-License-Identifier: Apache-2.0
// Group normalisation (instance normalisation: one channel per group) of
// N x C x spatial data: each of the ROWS = N * G rows is a contiguous block
// of L = CPG (channels per group) * S (spatial size) elements, normalised by
// its mean and variance, then scaled and shifted per channel. One row per
// invocation. Generator provides: ROWS, L, G, CPG, S, EPSILON, IN0 = x,
// IN1 = scale [C], IN2 = bias [C], STORE(o, v).
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = r * L;
  float mean = 0.0;
  for (uint j = 0u; j < L; ++j) mean += IN0[base + j];
  mean /= float(L);
  float var = 0.0;
  for (uint j = 0u; j < L; ++j) {
    float d = IN0[base + j] - mean;
    var += d * d;
  }
  float rstd = 1.0 / sqrt(var / float(L) + EPSILON);
  for (uint j = 0u; j < L; ++j) {
    uint ch = (r % G) * CPG + j / S;
    STORE(base + j, (IN0[base + j] - mean) * rstd * IN1[ch] + IN2[ch]);
  }
}
