// SPDX-License-Identifier: Apache-2.0
// Convolution (group 1) over 2 or 3 spatial dims as an implicit GEMM on
// cooperative matrices, as gemm_coopmat.comp: a workgroup of 4 subgroups
// computes 64 output channels x 64 output pixels of one image, staging
// BK-deep slices of the weights and of the input gathered on the fly (zero
// in the padding; no im2col buffer) in shared memory as float16; sums in
// float32 (coopmat_tile.glsl). Dispatch and names as conv_gemm_tiled.comp.
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
    vkp_cm_multiply(sy, sx, c00, c01, c10, c11);
    barrier();
  }
  vkp_cm_store(sy, sx, c00, c01, c10, c11);
  for (uint e = tid; e < BM * BN; e += threads) {
    uint m = m_base + e / BN, p = p_base + e % BN;
    if (m >= M || p >= NP) continue;
#ifdef HAS_BIAS
    float bias = IN2[m];
#else
    float bias = 0.0;
#endif
    STORE((b * M + m) * NP + p, vkp_cm_result(e) + bias);
  }
}
