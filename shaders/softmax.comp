// SPDX-License-Identifier: Apache-2.0
// Softmax over one axis: the tensor is viewed as [OUTER, L, INNER] and each
// invocation owns one (outer, inner) row of L elements (stride INNER). No
// shared memory or barriers. Generator provides: ROWS (= OUTER*INNER), L,
// INNER, IN0 = x, STORE(o, v); LOG_SOFTMAX: log_softmax instead.
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float mx = uintBitsToFloat(0xff800000u);
  for (uint i = 0u; i < L; ++i) mx = max(mx, IN0[base + i * INNER]);
  float sum = 0.0;
  for (uint i = 0u; i < L; ++i) sum += exp(IN0[base + i * INNER] - mx);
#ifdef LOG_SOFTMAX
  // (x - max) - log(sum): max + log(sum) would round away up to half an
  // ulp of a large max.
  float lse = log(sum);
  for (uint i = 0u; i < L; ++i) {
    uint o = base + i * INNER;
    STORE(o, (IN0[o] - mx) - lse);
  }
#else
  float inv = 1.0 / sum;
  for (uint i = 0u; i < L; ++i) {
    uint o = base + i * INNER;
    STORE(o, exp(IN0[o] - mx) * inv);
  }
#endif
}
