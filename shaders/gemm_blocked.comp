// SPDX-License-Identifier: Apache-2.0
// Register-blocked GEMM, no shared memory and no barriers: the variant for
// CPU-like devices (lavapipe), where barrier() is expensive and invocations
// run as SIMD lanes. An 8 x 8 workgroup covers a 64 x 64 block of C; each
// invocation owns 8 rows (m0 .. m0+7) and 8 columns strided by 8
// (n0, n0+8, ..., n0+56), so the 8 lanes of a row read one A element (a
// broadcast) and 8 consecutive B elements per column step, and every load
// feeds 8 multiply-adds. Accumulators are plain vec4s: arrays indexed in loops
// would live in memory on lavapipe.
// Generator provides: M, N, K, BATCH, vkp_a_batch(b), vkp_b_batch(b),
// A_OFF(m, k), B_OFF(k, n), vkp_gemm_finish(acc, m, n), STORE(o, v),
// LD0(i) = A, LD1(i) = B, and for split-K (vkp__spv_split_k) KSPLIT slices
// of KSLICE along K, slice ks = gl_WorkGroupID.z / BATCH (vkp_ks, which the
// partial-sum STORE reads); KSPLIT 1u / KSLICE K otherwise.
uint vkp_ks = 0u;
void store_half(uint row, uint m, uint n, vec4 acc) {
  if (n < N) STORE(row + n, vkp_gemm_finish(acc.x, m, n));
  if (n + 8u < N) STORE(row + n + 8u, vkp_gemm_finish(acc.y, m, n + 8u));
  if (n + 16u < N) STORE(row + n + 16u, vkp_gemm_finish(acc.z, m, n + 16u));
  if (n + 24u < N) STORE(row + n + 24u, vkp_gemm_finish(acc.w, m, n + 24u));
}

void store_row(uint b, uint m, uint n0, vec4 lo, vec4 hi) {
  if (m >= M) return;
  uint row = (b * M + m) * N;
  store_half(row, m, n0, lo);
  store_half(row, m, n0 + 32u, hi);
}

#define ROW_PTR(i) (a_base + A_OFF(min(m0 + i, M - 1u), 0u))
#define COL_PTR(j) (b_base + B_OFF(0u, min(n0 + 8u * j, N - 1u)))
#define ROW_STEP(i, lo, hi)      \
  {                              \
    float a = LD0(ma##i + ak);   \
    lo += a * b_lo;              \
    hi += a * b_hi;              \
  }

void main() {
  uint n0 = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.y * 64u + gl_LocalInvocationID.y * 8u;
  uint b = gl_WorkGroupID.z % BATCH;
  uint ks = gl_WorkGroupID.z / BATCH;
  if (m0 >= M || n0 >= N || ks >= KSPLIT) return;
  vkp_ks = ks;
  uint k_lo = ks * KSLICE, k_hi = min(K, k_lo + KSLICE);
  uint a_base = vkp_a_batch(b);
  uint b_base = vkp_b_batch(b);
  // Clamped rows and columns keep every load in bounds; stores are checked.
  uint ma0 = ROW_PTR(0u), ma1 = ROW_PTR(1u), ma2 = ROW_PTR(2u), ma3 = ROW_PTR(3u);
  uint ma4 = ROW_PTR(4u), ma5 = ROW_PTR(5u), ma6 = ROW_PTR(6u), ma7 = ROW_PTR(7u);
  uint nb0 = COL_PTR(0u), nb1 = COL_PTR(1u), nb2 = COL_PTR(2u), nb3 = COL_PTR(3u);
  uint nb4 = COL_PTR(4u), nb5 = COL_PTR(5u), nb6 = COL_PTR(6u), nb7 = COL_PTR(7u);
  vec4 l0 = vec4(0.0), l1 = vec4(0.0), l2 = vec4(0.0), l3 = vec4(0.0);
  vec4 l4 = vec4(0.0), l5 = vec4(0.0), l6 = vec4(0.0), l7 = vec4(0.0);
  vec4 h0 = vec4(0.0), h1 = vec4(0.0), h2 = vec4(0.0), h3 = vec4(0.0);
  vec4 h4 = vec4(0.0), h5 = vec4(0.0), h6 = vec4(0.0), h7 = vec4(0.0);
  for (uint k = k_lo; k < k_hi; ++k) {
    uint ak = A_OFF(0u, k), bk = B_OFF(k, 0u);
    vec4 b_lo = vec4(LD1(nb0 + bk), LD1(nb1 + bk), LD1(nb2 + bk), LD1(nb3 + bk));
    vec4 b_hi = vec4(LD1(nb4 + bk), LD1(nb5 + bk), LD1(nb6 + bk), LD1(nb7 + bk));
    ROW_STEP(0, l0, h0)
    ROW_STEP(1, l1, h1)
    ROW_STEP(2, l2, h2)
    ROW_STEP(3, l3, h3)
    ROW_STEP(4, l4, h4)
    ROW_STEP(5, l5, h5)
    ROW_STEP(6, l6, h6)
    ROW_STEP(7, l7, h7)
  }
  store_row(b, m0, n0, l0, h0);
  store_row(b, m0 + 1u, n0, l1, h1);
  store_row(b, m0 + 2u, n0, l2, h2);
  store_row(b, m0 + 3u, n0, l3, h3);
  store_row(b, m0 + 4u, n0, l4, h4);
  store_row(b, m0 + 5u, n0, l5, h5);
  store_row(b, m0 + 6u, n0, l6, h6);
  store_row(b, m0 + 7u, n0, l7, h7);
}
