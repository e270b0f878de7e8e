// SPDX-License-Identifier: Apache-2.0
// Convolution (group 1) over 2 or 3 spatial dims as an implicit GEMM,
// shared-memory tiled like gemm_tiled.comp (the GPU variant): a 16 x 16
// workgroup computes 64 output channels x 64 output pixels of one image,
// staging BK-deep slices of the weight matrix and of the input gathered on
// the fly (zero in the padding; no im2col buffer) in shared memory. 2-D:
// D = OD = KD = 1, PF = 0, and the depth terms fold away. Dispatch: (ceil(NP/64), ceil(M/64),
// BATCH). Generator provides the same names as conv_gemm_blocked.comp.
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
  uint p_base = gl_WorkGroupID.x * BN;
  uint m_base = gl_WorkGroupID.y * BM;
  uint b = gl_WorkGroupID.z;
  uint x_base = b * C * D * H * W;
  float acc[TM][TN];
  for (uint i = 0u; i < TM; ++i)
    for (uint j = 0u; j < TN; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < KT; k0 += BK) {
    for (uint l = 0u; l < 4u; ++l) {
      uint e = tid + l * 256u;
      uint am = e / BK, ak = e % BK;
      uint gm = m_base + am, gk = k0 + ak;
      As[ak][am] = (gm < M && gk < KT) ? LD1(gm * KT + gk) : 0.0;
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
      Bs[bk][bp] = v;
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
#ifdef HAS_BIAS
    float bias = IN2[m];
#else
    float bias = 0.0;
#endif
    for (uint j = 0u; j < TN; ++j) {
      uint p = p_base + tx * TN + j;
      if (p >= NP) break;
      STORE((b * M + m) * NP + p, acc[i][j] + bias);
    }
  }
}
