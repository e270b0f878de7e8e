// SPDX-License-Identifier: Apache-2.0
// Running sums along one axis, viewed as [OUTER, L, INNER] like
// softmax.comp: one invocation per row walks its L elements in order
// (backwards with REVERSE), writing the sum before (EXCLUSIVE) or after
// adding each element. Generator provides: ROWS, L, INNER, IN0 = x,
// STORE(o, v), and REVERSE / EXCLUSIVE when set.
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float acc = 0.0;
  for (uint j = 0u; j < L; ++j) {
#ifdef REVERSE
    uint at = base + (L - 1u - j) * INNER;
#else
    uint at = base + j * INNER;
#endif
    float v = IN0[at];
#ifdef EXCLUSIVE
    STORE(at, acc);
    acc += v;
#else
    acc += v;
    STORE(at, acc);
#endif
  }
}
