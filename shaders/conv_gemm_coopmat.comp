// SPDX-License-Identifier: Apache-2.0
// Convolution (group 1) over 2 or 3 spatial dims as an implicit GEMM on
// cooperative matrices, as gemm_coopmat.comp: a workgroup of 4 subgroups
// computes 64 output channels x 64 output pixels of one image, staging
// BK-deep slices of the weights and of the input gathered on the fly (zero
// in the padding; no im2col buffer) in shared memory as float16; sums in
// float32. Dispatch and names as conv_gemm_tiled.comp.
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
shared float16_t As[BM * AS_LD];  // weights, row-major m x k
shared float16_t Bs[BK * BS_LD];  // gathered input, row-major k x pixel
shared float Cs[BM * CS_LD];
void main() {
  uint tid = gl_LocalInvocationID.x;
  uint threads = gl_WorkGroupSize.x;
  uint sy = gl_SubgroupID / 2u, sx = gl_SubgroupID % 2u;
  uint p_base = gl_WorkGroupID.x * BN;
  uint m_base = gl_WorkGroupID.y * BM;
  uint b = gl_WorkGroupID.z;
  uint x_base = b * C * D * H * W;
  VKP_CM_ACC c00 = VKP_CM_ACC(0.0), c01 = VKP_CM_ACC(0.0);
  VKP_CM_ACC c10 = VKP_CM_ACC(0.0), c11 = VKP_CM_ACC(0.0);
  for (uint k0 = 0u; k0 < KT; k0 += BK) {
    for (uint e = tid; e < BM * BK; e += threads) {
      uint am = e / BK, ak = e % BK;
      uint gm = m_base + am, gk = k0 + ak;
      As[am * AS_LD + ak] = float16_t((gm < M && gk < KT) ? LD1(gm * KT + gk) : 0.0);
      uint bk = e / BN, bp = e % BN;
      uint gp = p_base + bp, gk2 = k0 + bk;
      float v = 0.0;
      if (gp < NP && gk2 < KT) {
        uint kw = gk2 % KW, t = gk2 / KW;
        uint kh = t % KH;
        t /= KH;
        uint kd = t % KD, c = t / KD;
        uint r = gp / OW;
        int id = int((OD == 1u ? 0u : r / OH) * SD + kd * DD) - PF;
        int ih = int((OD == 1u ? r : r % OH) * SH + kh * DH) - PT;
        int iw = int((gp % OW) * SW + kw * DW) - PL;
        if (uint(id) < D && uint(ih) < H && uint(iw) < W)
          v = LD0(x_base + ((c * D + uint(id)) * H + uint(ih)) * W + uint(iw));
      }
      Bs[bk * BS_LD + bp] = float16_t(v);
    }
    barrier();
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
    barrier();
  }
  uint cb = (sy * 32u) * CS_LD + sx * 32u;
  coopMatStoreNV(c00, Cs, cb, CS_LD, false);
  coopMatStoreNV(c01, Cs, cb + 16u, CS_LD, false);
  coopMatStoreNV(c10, Cs, cb + 16u * CS_LD, CS_LD, false);
  coopMatStoreNV(c11, Cs, cb + 16u * CS_LD + 16u, CS_LD, false);
  barrier();
  for (uint e = tid; e < BM * BN; e += threads) {
    uint m = m_base + e / BN, p = p_base + e % BN;
    if (m >= M || p >= NP) continue;
#ifdef HAS_BIAS
    float bias = IN2[m];
#else
    float bias = 0.0;
#endif
    STORE((b * M + m) * NP + p, Cs[(e / BN) * CS_LD + e % BN] + bias);
  }
}
