// SPDX-License-Identifier: Apache-2.0
// Shared-memory tiled GEMM for GPUs: a 16 x 16 workgroup computes a 64 x 64
// block of C, each invocation a 4 x 4 sub-block, staging BK-deep slices of A
// and B in shared memory (8 KiB). Dispatch: (ceil(N/64), ceil(M/64), BATCH).
// Generator provides the same names as gemm_blocked.comp (KSLICE a multiple
// of BK when KSPLIT > 1).
uint vkp_ks = 0u;
#define TM 4u
#define TN 4u
#define BM 64u
#define BN 64u
#define BK 16u
shared float As[BK][BM];
shared float Bs[BK][BN];
void main() {
  uint tx = gl_LocalInvocationID.x;
  uint ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint n_base = gl_WorkGroupID.x * BN;
  uint m_base = gl_WorkGroupID.y * BM;
  uint b = gl_WorkGroupID.z % BATCH;
  uint ks = gl_WorkGroupID.z / BATCH;
  vkp_ks = ks;
  uint k_lo = ks * KSLICE, k_hi = min(K, k_lo + KSLICE);
  uint a_base = vkp_a_batch(b);
  uint b_base = vkp_b_batch(b);
  float acc[TM][TN];
  for (uint i = 0u; i < TM; ++i)
    for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;
  for (uint k0 = k_lo; k0 < k_hi; k0 += BK) {
    // 1024 elements of each tile, 4 per invocation.
    for (uint l = 0u; l < 4u; ++l) {
      uint e = tid + l * 256u;
      uint am = e / BK, ak = e % BK;
      uint gm = m_base + am, gk = k0 + ak;
      As[ak][am] = (gm < M && gk < k_hi) ? LD0(a_base + A_OFF(gm, gk)) : 0.0;
      uint bk = e / BN, bn = e % BN;
      uint gn = n_base + bn, gk2 = k0 + bk;
      Bs[bk][bn] = (gn < N && gk2 < k_hi) ? LD1(b_base + B_OFF(gk2, gn)) : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float a[TM];
      float bv[TN];
      for (uint i = 0u; i < TM; ++i) a[i] = As[kk][ty * TM + i];
      for (uint j = 0u; j < TN; ++j) bv[j] = Bs[kk][tx * TN + j];
      for (uint i = 0u; i < TM; ++i)
        for (uint j = 0u; j < TN; ++j) acc[i][j] += a[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0u; i < TM; ++i) {
    uint m = m_base + ty * TM + i;
    if (m >= M) break;
    for (uint j = 0u; j < TN; ++j) {
      uint n = n_base + tx * TN + j;
      if (n >= N) break;
      STORE((b * M + m) * N + n, vkp_gemm_finish(acc[i][j], m, n));
    }
  }
}
