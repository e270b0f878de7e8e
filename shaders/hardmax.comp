// SPDX-License-Identifier: Apache-2.0
// Hardmax over one axis, viewed as [OUTER, L, INNER] like softmax.comp: one
// invocation per row writes 1 at the first maximum (NaN counts as the
// maximum) and 0 elsewhere. Generator provides: ROWS, L, INNER, IN0 = x,
// STORE(o, v).
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = (r / INNER) * L * INNER + r % INNER;
  uint best = 0u;
  float bv = IN0[base];
  for (uint i = 1u; i < L && !isnan(bv); ++i) {
    float v = IN0[base + i * INNER];
    if (isnan(v) || v > bv) {
      bv = v;
      best = i;
    }
  }
  for (uint i = 0u; i < L; ++i) STORE(base + i * INNER, i == best ? 1.0 : 0.0);
}
