// SPDX-License-Identifier: Apache-2.0
// Register-blocked GEMM, no shared memory and no barriers: each invocation
// computes a TM x TN block of C = op(A) op(B) for batch gl_GlobalInvocationID.z.
// The variant for CPU-like devices (lavapipe), where barrier() is expensive.
// Generator provides: M, N, K, BATCH, A_INDEX(b, m, k), B_INDEX(b, k, n),
// vkp_gemm_finish(acc, m, n) (alpha, beta*C), STORE(o, v), IN0 = A, IN1 = B.
#define TM 4u
#define TN 4u
void main() {
  uint n0 = gl_GlobalInvocationID.x * TN;
  uint m0 = gl_GlobalInvocationID.y * TM;
  uint b = gl_GlobalInvocationID.z;
  if (n0 >= N || m0 >= M || b >= BATCH) return;
  float acc[TM][TN];
  uint mi[TM];
  uint nj[TN];
  for (uint i = 0u; i < TM; ++i) {
    mi[i] = min(m0 + i, M - 1u);  // clamped loads; stores are bounds-checked
    for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;
  }
  for (uint j = 0u; j < TN; ++j) nj[j] = min(n0 + j, N - 1u);
  for (uint k = 0u; k < K; ++k) {
    float a[TM];
    float bv[TN];
    for (uint i = 0u; i < TM; ++i) a[i] = IN0[A_INDEX(b, mi[i], k)];
    for (uint j = 0u; j < TN; ++j) bv[j] = IN1[B_INDEX(b, k, nj[j])];
    for (uint i = 0u; i < TM; ++i)
      for (uint j = 0u; j < TN; ++j) acc[i][j] += a[i] * bv[j];
  }
  for (uint i = 0u; i < TM; ++i) {
    uint m = m0 + i;
    if (m >= M) break;
    for (uint j = 0u; j < TN; ++j) {
      uint n = n0 + j;
      if (n >= N) break;
      STORE((b * M + m) * N + n, vkp_gemm_finish(acc[i][j], m, n));
    }
  }
}
