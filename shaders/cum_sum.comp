// SPDX-License-Identifier: Apache-2.0
// Running sums along one axis, viewed as [OUTER, L, INNER] like
// softmax.comp: one invocation per row walks its L elements in order
// (backwards with REVERSE), writing the sum before (EXCLUSIVE) or after
// adding each element, in the data's type (ACC_T). Generator provides: ROWS, L, INNER, LD0 = x,
// STORE(o, v), and REVERSE / EXCLUSIVE when set.
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = (r / INNER) * L * INNER + r % INNER;
  ACC_T acc = ACC_T(0);
  for (uint j = 0u; j < L; ++j) {
#ifdef REVERSE
    uint at = base + (L - 1u - j) * INNER;
#else
    uint at = base + j * INNER;
#endif
    ACC_T v = LD0(at);
#ifdef EXCLUSIVE
    STORE(at, acc);
    acc += v;
#else
    acc += v;
    STORE(at, acc);
#endif
  }
}
