// SPDX-License-Identifier: Apache-2.0
// GEMM on cooperative matrices (GL_NV_cooperative_matrix): float16 products,
// float32 sums, for devices that report 16 x 16 x 16 such products per
// subgroup. A workgroup of 4 subgroups computes a 64 x 64 block of C, each
// subgroup a 32 x 32 quarter as 2 x 2 accumulators; BK-deep slices of A and
// B are staged in shared memory as float16 (rounded from whatever LD<i>
// returns, zero past the edges), and C passes through shared memory to the
// epilogue. Shared memory: about 27 KiB. Dispatch, names and split-K as
// gemm_tiled.comp (KSLICE a multiple of BK when KSPLIT > 1); the generator
// declares the extensions and a local size of 4 subgroups, and puts
// coopmat_tile.glsl (the tile sizes, shared arrays and matrix steps) first.
uint vkp_ks = 0u;
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint threads = gl_WorkGroupSize.x;
  uint sy = gl_SubgroupID / 2u, sx = gl_SubgroupID % 2u;
  uint n_base = gl_WorkGroupID.x * BN;
  uint m_base = gl_WorkGroupID.y * BM;
  uint b = gl_WorkGroupID.z % BATCH;
  uint ks = gl_WorkGroupID.z / BATCH;
  vkp_ks = ks;
  uint k_lo = ks * KSLICE, k_hi = min(K, k_lo + KSLICE);
  uint a_base = vkp_a_batch(b);
  uint b_base = vkp_b_batch(b);
  VKP_CM_ACC c00 = VKP_CM_ACC(0.0), c01 = VKP_CM_ACC(0.0);
  VKP_CM_ACC c10 = VKP_CM_ACC(0.0), c11 = VKP_CM_ACC(0.0);
  for (uint k0 = k_lo; k0 < k_hi; k0 += BK) {
    for (uint e = tid; e < BM * BK; e += threads) {
      uint am = e / BK, ak = e % BK;
      uint gm = m_base + am, gk = k0 + ak;
      As[am * AS_LD + ak] = float16_t((gm < M && gk < k_hi) ? LD0(a_base + A_OFF(gm, gk)) : 0.0);
      uint bk = e / BN, bn = e % BN;
      uint gn = n_base + bn, gk2 = k0 + bk;
      Bs[bk * BS_LD + bn] = float16_t((gn < N && gk2 < k_hi) ? LD1(b_base + B_OFF(gk2, gn)) : 0.0);
    }
    barrier();
    vkp_cm_multiply(sy, sx, c00, c01, c10, c11);
    barrier();
  }
  vkp_cm_store(sy, sx, c00, c01, c10, c11);
  for (uint e = tid; e < BM * BN; e += threads) {
    uint m = m_base + e / BN, n = n_base + e % BN;
    if (m < M && n < N) STORE((b * M + m) * N + n, vkp_gemm_finish(vkp_cm_result(e), m, n));
  }
}
