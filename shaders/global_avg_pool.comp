// SPDX-License-Identifier: Apache-2.0
// Global average pooling: one (n, c) per invocation, averaging S spatial
// elements. Generator provides: TOTAL (= N*C), S, IN0 = x, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint base = o * S;
  float acc = 0.0;
  for (uint i = 0u; i < S; ++i) acc += IN0[base + i];
  STORE(o, acc / float(S));
}
