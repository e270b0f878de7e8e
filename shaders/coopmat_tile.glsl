// SPDX-License-Identifier: Apache-2.0
// The cooperative-matrix part the coopmat kernels share (gemm_coopmat.comp,
// conv_gemm_coopmat.comp): a workgroup of 4 subgroups computes a BM x BN
// block of C, subgroup (sy, sx) a 32 x 32 quarter as 2 x 2 accumulators of
// 16 x 16, from BK-deep float16 slices of A (As, m x k) and B (Bs, k x n)
// that the kernel stages in shared memory; C passes through shared memory
// (Cs) to the kernel's epilogue.
#define BM 64u
#define BN 64u
#define BK 32u
// Shared rows padded by 16 bytes, so that the 16 rows a cooperative load or
// store touches do not start in the same memory bank (unpadded, Cs rows are
// 256 bytes apart: every row in one bank).
#define AS_LD (BK + 8u)
#define BS_LD (BN + 8u)
#define CS_LD (BN + 4u)
#define VKP_CM_IN fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define VKP_CM_ACC fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
shared float16_t As[BM * AS_LD];  // row-major, m x k
shared float16_t Bs[BK * BS_LD];  // row-major, k x n
shared float Cs[BM * CS_LD];

// Adds this subgroup's share of As x Bs (one BK slice) to its accumulators.
void vkp_cm_multiply(uint sy, uint sx, inout VKP_CM_ACC c00, inout VKP_CM_ACC c01,
                     inout VKP_CM_ACC c10, inout VKP_CM_ACC c11) {
  for (uint kk = 0u; kk < BK; kk += 16u) {
    VKP_CM_IN a0, a1, b0, b1;
    coopMatLoadNV(a0, As, (sy * 32u) * AS_LD + kk, AS_LD, false);
    coopMatLoadNV(a1, As, (sy * 32u + 16u) * AS_LD + kk, AS_LD, false);
    coopMatLoadNV(b0, Bs, kk * BS_LD + sx * 32u, BS_LD, false);
    coopMatLoadNV(b1, Bs, kk * BS_LD + sx * 32u + 16u, BS_LD, false);
    c00 = coopMatMulAddNV(a0, b0, c00);
    c01 = coopMatMulAddNV(a0, b1, c01);
    c10 = coopMatMulAddNV(a1, b0, c10);
    c11 = coopMatMulAddNV(a1, b1, c11);
  }
}

// The accumulators into Cs; every invocation of the workgroup calls it
// (barrier), then reads element e of the block with vkp_cm_result(e).
void vkp_cm_store(uint sy, uint sx, VKP_CM_ACC c00, VKP_CM_ACC c01, VKP_CM_ACC c10,
                  VKP_CM_ACC c11) {
  uint cb = (sy * 32u) * CS_LD + sx * 32u;
  coopMatStoreNV(c00, Cs, cb, CS_LD, false);
  coopMatStoreNV(c01, Cs, cb + 16u, CS_LD, false);
  coopMatStoreNV(c10, Cs, cb + 16u * CS_LD, CS_LD, false);
  coopMatStoreNV(c11, Cs, cb + 16u * CS_LD + 16u, CS_LD, false);
  barrier();
}

// Element e (row-major, e < BM * BN) of the stored block.
float vkp_cm_result(uint e) { return Cs[(e / BN) * CS_LD + e % BN]; }
