// SPDX-License-Identifier: Apache-2.0
// Inference batch normalisation, one element per invocation, channel axis 1.
// Generator provides: TOTAL, C, INNER (product of dims after the channel),
// EPSILON, IN0 = x, IN1 = scale, IN2 = B, IN3 = mean, IN4 = var, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint c = (o / INNER) % C;
  float y = (IN0[o] - IN3[c]) / sqrt(IN4[c] + EPSILON) * IN1[c] + IN2[c];
  STORE(o, y);
}
