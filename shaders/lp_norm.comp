// SPDX-License-Identifier: Apache-2.0
// Lp normalisation (P 1 or 2) over one axis, viewed as [OUTER, L, INNER]
// like softmax.comp, one row per invocation: x / ||x||_p, zeros where the
// norm is 0. Generator provides: ROWS, L, INNER, P, IN0 = x, STORE(o, v).
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float norm = 0.0;
  for (uint i = 0u; i < L; ++i) {
    float v = IN0[base + i * INNER];
    norm += P == 1u ? abs(v) : v * v;
  }
  if (P != 1u) norm = sqrt(norm);
  float inv = norm == 0.0 ? 0.0 : 1.0 / norm;
  for (uint i = 0u; i < L; ++i) {
    uint o = base + i * INNER;
    STORE(o, IN0[o] * inv);
  }
}
