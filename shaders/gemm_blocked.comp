// SPDX-License-Identifier: Apache-2.0
// Register-blocked GEMM, no shared memory and no barriers: the variant for
// CPU-like devices (lavapipe), where barrier() is expensive and invocations
// run as SIMD lanes. An 8 x 8 workgroup covers a 32 x 32 block of C; each
// invocation owns 4 rows (m0 .. m0+3) and 4 columns strided by 8
// (n0, n0+8, n0+16, n0+24), so the 8 lanes of a row read one A element
// (a broadcast) and 8 consecutive B elements (one vector load). Accumulators
// are plain vec4s: arrays indexed in loops would live in memory on lavapipe.
// Generator provides: M, N, K, BATCH, vkp_a_batch(b), vkp_b_batch(b),
// A_OFF(m, k), B_OFF(k, n), vkp_gemm_finish(acc, m, n), STORE(o, v),
// IN0 = A, IN1 = B.
void store_row(uint b, uint m, uint n0, vec4 acc) {
  if (m >= M) return;
  uint row = (b * M + m) * N;
  if (n0 < N) STORE(row + n0, vkp_gemm_finish(acc.x, m, n0));
  if (n0 + 8u < N) STORE(row + n0 + 8u, vkp_gemm_finish(acc.y, m, n0 + 8u));
  if (n0 + 16u < N) STORE(row + n0 + 16u, vkp_gemm_finish(acc.z, m, n0 + 16u));
  if (n0 + 24u < N) STORE(row + n0 + 24u, vkp_gemm_finish(acc.w, m, n0 + 24u));
}

void main() {
  uint n0 = gl_WorkGroupID.x * 32u + gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.y * 32u + gl_LocalInvocationID.y * 4u;
  uint b = gl_WorkGroupID.z;
  if (m0 >= M || n0 >= N || b >= BATCH) return;
  uint a_base = vkp_a_batch(b);
  uint b_base = vkp_b_batch(b);
  // Clamped rows and columns keep every load in bounds; stores are checked.
  uint ma0 = a_base + A_OFF(m0, 0u);
  uint ma1 = a_base + A_OFF(min(m0 + 1u, M - 1u), 0u);
  uint ma2 = a_base + A_OFF(min(m0 + 2u, M - 1u), 0u);
  uint ma3 = a_base + A_OFF(min(m0 + 3u, M - 1u), 0u);
  uint nb0 = b_base + B_OFF(0u, n0);
  uint nb1 = b_base + B_OFF(0u, min(n0 + 8u, N - 1u));
  uint nb2 = b_base + B_OFF(0u, min(n0 + 16u, N - 1u));
  uint nb3 = b_base + B_OFF(0u, min(n0 + 24u, N - 1u));
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  for (uint k = 0u; k < K; ++k) {
    uint ak = A_OFF(0u, k), bk = B_OFF(k, 0u);
    vec4 bv = vec4(IN1[nb0 + bk], IN1[nb1 + bk], IN1[nb2 + bk], IN1[nb3 + bk]);
    acc0 += IN0[ma0 + ak] * bv;
    acc1 += IN0[ma1 + ak] * bv;
    acc2 += IN0[ma2 + ak] * bv;
    acc3 += IN0[ma3 + ak] * bv;
  }
  store_row(b, m0, n0, acc0);
  store_row(b, m0 + 1u, n0, acc1);
  store_row(b, m0 + 2u, n0, acc2);
  store_row(b, m0 + 3u, n0, acc3);
}
