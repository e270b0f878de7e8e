// SPDX-License-Identifier: Apache-2.0
// Winograd F(4x4, 3x3): a 3x3, stride-1, undilated, ungrouped convolution as
// 36 GEMMs over 4x4 output tiles (4x fewer multiplications than direct, 1.78x
// fewer than F(2x2, 3x3)), with the interpolation points 0, +-1, +-2, inf:
//   U = G g G^T per (output channel, input channel), 6x6: packed once at load.
//   V = B^T d B per (input channel, tile): d is the tile's 6x6 input patch.
//   Y = A^T M A per (output channel, tile), M[xi] = U[xi] * V[xi].
// Same structure as vkp_conv_winograd (prelude.c): blocks of whole tile rows
// whose V and M stay in L2, vectors across the tiles of a tile row. The
// transforms vectorise across a tile row, so the emitter takes this path only
// for maps wide enough to fill the vectors (codegen/c/emit.c).
//
//   B^T = [4  0 -5  0 1 0]   G = [ 1/4     0     0]   A^T = [1 1  1 1  1 0]
//         [0 -4 -4  1 1 0]       [-1/6  -1/6  -1/6]         [0 1 -1 2 -2 0]
//         [0  4 -4 -1 1 0]       [-1/6   1/6  -1/6]         [0 1  1 4  4 0]
//         [0 -2 -1  2 1 0]       [1/24  1/12   1/6]         [0 1 -1 8 -8 1]
//         [0  2 -1 -2 1 0]       [1/24 -1/12   1/6]
//         [0  4  0 -5 0 1]       [   0     0     1]

#define VKP_WINO4_TW(OW) (((ptrdiff_t)(OW) + 3) / 4)
#define VKP_WINO4_TH(OH) (((ptrdiff_t)(OH) + 3) / 4)
// Tiles per block: 36 * (C + M) * 4 bytes each, about 1 MiB a block.
#ifndef VKP_WINO4_BLOCK
#define VKP_WINO4_BLOCK 8192
#endif
#define VKP_WINO4_TILES(C, M) VKP_MAXZ((ptrdiff_t)VKP_WINO4_BLOCK / ((C) + (M)), (ptrdiff_t)32)
#define VKP_WINO4_RPB(C, M, OH, OW)                                                 \
  VKP_MAXZ((ptrdiff_t)1, VKP_WINO4_TILES(C, M) / VKP_WINO4_TW(OW) < VKP_WINO4_TH(OH) \
                             ? VKP_WINO4_TILES(C, M) / VKP_WINO4_TW(OW)             \
                             : VKP_WINO4_TH(OH))
#define VKP_WINO4_LDV(OW, RPB) ((((RPB) * VKP_WINO4_TW(OW) + 31) / 32 * 32) + 16)
// Phase plane width: the last tile row's vectors read up to 32 + 16 columns
// past its end, as in vkp_conv_winograd.
#define VKP_WINO4_TWE(OW) ((VKP_WINO4_TW(OW) + 1 + 32 + 16 + 15) / 16 * 16)
// The 36 planes of V (and of M) are VKP_WINO4_PLANE apart: a whole number
// of 4 KiB pages apart (C * ldv often is), the stores of one tile vector to
// all 36 would fall in one L1 set; a cache line more per plane spreads them.
#define VKP_WINO4_PLANE(C, LDV) ((ptrdiff_t)(C) * (LDV) + 16)
#define VKP_WINO4_SCRATCH_RPB(C, M, OW, RPB)                                \
  ((ptrdiff_t)36 * (VKP_WINO4_PLANE(C, VKP_WINO4_LDV(OW, RPB)) +           \
                    VKP_WINO4_PLANE(M, VKP_WINO4_LDV(OW, RPB))) +          \
   (ptrdiff_t)4 * (4 * (RPB) + 2) * VKP_WINO4_TWE(OW) +   \
   (ptrdiff_t)4 * (4 * VKP_WINO4_TW(OW) + 64) + 64)
// Scratch floats one call needs besides the GEMM's own (per thread).
#define VKP_WINO4_SCRATCH_FLOATS(C, M, OH, OW) \
  VKP_WINO4_SCRATCH_RPB(C, M, OW, VKP_WINO4_RPB(C, M, OH, OW))

// U[xi] (M x C) for each of the 36 transform positions, each in the layout
// vkp_prepack_a writes. Holds 36 * VKP_PAD_MR(M) * C floats.
VKP_FN void vkp_winograd4_prepack(ptrdiff_t M, ptrdiff_t C, const float *w, float *dst) {
  static const float G[6][3] = {{1.0f / 4, 0, 0},
                                {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                {0, 0, 1}};
  ptrdiff_t pm = VKP_PAD_MR(M);
  memset(dst, 0, sizeof(float) * (size_t)(36 * pm * C));
  for (ptrdiff_t m = 0; m < M; ++m)
    for (ptrdiff_t c = 0; c < C; ++c) {
      const float *g = w + (m * C + c) * 9;
      double gg[6][3];
      for (int i = 0; i < 6; ++i)  // G g
        for (int j = 0; j < 3; ++j)
          gg[i][j] = (double)G[i][0] * g[j] + (double)G[i][1] * g[3 + j] +
                     (double)G[i][2] * g[6 + j];
      ptrdiff_t pc = c / VKP_KC * VKP_KC;
      ptrdiff_t kc = C - pc < VKP_KC ? C - pc : VKP_KC, r = m % VKP_MR;
      ptrdiff_t at = pc * pm + (m - r) * kc + (c - pc) * VKP_MR + r;
      for (int i = 0; i < 6; ++i)  // (G g) G^T
        for (int j = 0; j < 6; ++j)
          dst[(i * 6 + j) * pm * C + at] =
              (float)(gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
    }
}

// B^T applied to six vectors (rows or columns of a patch), in place.
static inline __attribute__((always_inline)) void vkp__wino4_bt(vkp_vec_t *d0, vkp_vec_t *d1,
                                                               vkp_vec_t *d2, vkp_vec_t *d3,
                                                               vkp_vec_t *d4, vkp_vec_t *d5) {
  vkp_vec_t a = *d4 - 4.0f * *d2, b = *d3 - 4.0f * *d1;  // rows 1, 2
  vkp_vec_t c = *d4 - *d2, e = 2.0f * (*d3 - *d1);        // rows 3, 4
  vkp_vec_t r0 = 4.0f * *d0 - 5.0f * *d2 + *d4;
  vkp_vec_t r5 = 4.0f * *d1 - 5.0f * *d3 + *d5;
  *d0 = r0;
  *d1 = a + b;
  *d2 = a - b;
  *d3 = c + e;
  *d4 = c - e;
  *d5 = r5;
}

// Tile rows [r0, r1) of vkp_conv_winograd4 in blocks of at most `rpb` rows
// (as even as they divide), in this thread's scratch; the GEMMs get `threads`.
static void vkp__winograd4_blocks(const float *x, float *y, const float *u, ptrdiff_t C,
                                  ptrdiff_t H, ptrdiff_t W, ptrdiff_t M, ptrdiff_t PT,
                                  ptrdiff_t PL, ptrdiff_t OH, ptrdiff_t OW,
                                  vkp_epilogue_fn ep, const void *ep_ctx, ptrdiff_t batch,
                                  ptrdiff_t rpb, ptrdiff_t r0, ptrdiff_t r1,
                                  float *wscratch, float *gemm_scratch, int threads) {
  _Static_assert(VKP_VLEN <= 16, "Winograd padding assumes vectors of <= 16");
  const ptrdiff_t TH = VKP_WINO4_TH(OH), TW = VKP_WINO4_TW(OW);
  const ptrdiff_t ldv = VKP_WINO4_LDV(OW, rpb), twe = VKP_WINO4_TWE(OW);
  const ptrdiff_t pm = VKP_PAD_MR(M), prows = 4 * rpb + 2;
  float *base = vkp_align64(wscratch);
  const ptrdiff_t vst = VKP_WINO4_PLANE(C, ldv), mst = VKP_WINO4_PLANE(M, ldv);
  float *v = base;                  // [36][C][ldv], planes vst apart
  float *mo = v + 36 * vst;         // [36][M][ldv], planes mst apart
  float *ph = mo + 36 * mst;        // [4][prows][twe]: padded columns 4t + q
  float *ob = ph + 4 * prows * twe;  // four output rows, 4 * TW + 64 each
  const ptrdiff_t obw = 4 * TW + 64;
  // Tiles [lo, hi) have all four phase columns inside the input row; from
  // `zero` on, all four are padding (zeroed once, never written).
  ptrdiff_t lo = (PL + 3) / 4, hi = (W + PL) / 4, zero = (W + PL + 3) / 4;
  if (lo > twe) lo = twe;
  if (hi > twe) hi = twe;
  if (hi < lo) hi = lo;
  if (zero > twe) zero = twe;
  if (zero < hi) zero = hi;
  memset(ph, 0, sizeof(float) * (size_t)(4 * prows * twe));
  (void)TH;
  // Tile rows [r0, r1) in blocks of at most rpb rows, as even as can be.
  const ptrdiff_t nb = (r1 - r0 + rpb - 1) / rpb;
  for (ptrdiff_t blk = 0; blk < nb; ++blk) {
    const ptrdiff_t th0 = r0 + (r1 - r0) * blk / nb;
    const ptrdiff_t nr = r0 + (r1 - r0) * (blk + 1) / nb - th0, nt = nr * TW;
    const ptrdiff_t np = (nt + VKP_VLEN - 1) / VKP_VLEN * VKP_VLEN;
    for (ptrdiff_t c = 0; c < C; ++c) {
      const float *xc = x + c * H * W;
      for (ptrdiff_t i = 0; i < 4 * nr + 2; ++i) {
        ptrdiff_t ih = 4 * th0 + i - PT;
        float *restrict p0 = ph + i * twe, *restrict p1 = p0 + prows * twe;
        float *restrict p2 = p1 + prows * twe, *restrict p3 = p2 + prows * twe;
        if (ih < 0 || ih >= H) {
          memset(p0, 0, sizeof(float) * (size_t)zero);
          memset(p1, 0, sizeof(float) * (size_t)zero);
          memset(p2, 0, sizeof(float) * (size_t)zero);
          memset(p3, 0, sizeof(float) * (size_t)zero);
          continue;
        }
        const float *row = xc + ih * W, *src = row - PL;
        for (ptrdiff_t t = 0; t < zero; ++t) {
          if (t == lo) t = hi;  // the middle part follows
          if (t >= zero) break;
          ptrdiff_t iw = 4 * t - PL;
          p0[t] = iw >= 0 && iw < W ? row[iw] : 0.0f;
          p1[t] = iw + 1 >= 0 && iw + 1 < W ? row[iw + 1] : 0.0f;
          p2[t] = iw + 2 >= 0 && iw + 2 < W ? row[iw + 2] : 0.0f;
          p3[t] = iw + 3 >= 0 && iw + 3 < W ? row[iw + 3] : 0.0f;
        }
        for (ptrdiff_t t = lo; t < hi; ++t) {
          p0[t] = src[4 * t];
          p1[t] = src[4 * t + 1];
          p2[t] = src[4 * t + 2];
          p3[t] = src[4 * t + 3];
        }
      }
      // The last tile row runs on to column np, so that every column the
      // GEMM reads is written (with transforms of zero padding).
      for (ptrdiff_t r = 0; r < nr; ++r)
        for (ptrdiff_t tw = 0; tw < (r + 1 < nr ? TW : np - r * TW); tw += VKP_VLEN) {
          vkp_vec_t d[6][6];
          for (int i = 0; i < 6; ++i) {
            const float *q0 = ph + (4 * r + i) * twe + tw;
            d[i][0] = *(const vkp_uvec_t *)q0;
            d[i][1] = *(const vkp_uvec_t *)(q0 + prows * twe);
            d[i][2] = *(const vkp_uvec_t *)(q0 + 2 * prows * twe);
            d[i][3] = *(const vkp_uvec_t *)(q0 + 3 * prows * twe);
            d[i][4] = *(const vkp_uvec_t *)(q0 + 1);
            d[i][5] = *(const vkp_uvec_t *)(q0 + prows * twe + 1);
            // d B: B^T along the row.
            vkp__wino4_bt(&d[i][0], &d[i][1], &d[i][2], &d[i][3], &d[i][4], &d[i][5]);
          }
          float *vt = v + c * ldv + r * TW + tw;
          for (int j = 0; j < 6; ++j) {  // B^T (d B): down the columns
            vkp__wino4_bt(&d[0][j], &d[1][j], &d[2][j], &d[3][j], &d[4][j], &d[5][j]);
            for (int i = 0; i < 6; ++i)
              *(vkp_uvec_t *)(vt + (6 * i + j) * vst) = d[i][j];
          }
        }
    }
    for (int xi = 0; xi < 36; ++xi) {
      const vkp_bsrc_t src = {.b = v + xi * vst, .rsb = ldv, .csb = 1, .direct = 1};
      vkp_gemm(M, np, C, 1.0f, NULL, 0, 0, u + xi * pm * C, &src, mo + xi * mst, ldv,
               NULL, NULL, 0, batch, gemm_scratch, threads);
    }
    // Output transform, four output rows per tile row; a row epilogue is
    // applied to the transformed vectors.
    const vkp_row_ep_t *rep = vkp_row_ep_of(ep, ep_ctx);
    const ptrdiff_t oh0 = 4 * th0, oh1 = 4 * (th0 + nr) < OH ? 4 * (th0 + nr) : OH;
    for (ptrdiff_t m = 0; m < M; ++m) {
      float *ym = y + m * OH * OW;
      for (ptrdiff_t r = 0; r < nr; ++r) {
        for (ptrdiff_t tw = 0; tw < TW; tw += VKP_VLEN) {
          const float *mt = mo + m * ldv + r * TW + tw;
          vkp_vec_t s[4][6];
          for (int j = 0; j < 6; ++j) {  // A^T M: down the columns
            vkp_vec_t m0 = *(const vkp_uvec_t *)(mt + (0 + j) * mst);
            vkp_vec_t m1 = *(const vkp_uvec_t *)(mt + (6 + j) * mst);
            vkp_vec_t m2 = *(const vkp_uvec_t *)(mt + (12 + j) * mst);
            vkp_vec_t m3 = *(const vkp_uvec_t *)(mt + (18 + j) * mst);
            vkp_vec_t m4 = *(const vkp_uvec_t *)(mt + (24 + j) * mst);
            vkp_vec_t m5 = *(const vkp_uvec_t *)(mt + (30 + j) * mst);
            vkp_vec_t a = m1 + m2, b = m1 - m2, c2 = m3 + m4, d2 = m3 - m4;
            s[0][j] = m0 + a + c2;
            s[1][j] = b + 2.0f * d2;
            s[2][j] = a + 4.0f * c2;
            s[3][j] = b + 8.0f * d2 + m5;
          }
          for (int i = 0; i < 4; ++i) {  // (A^T M) A, interleaved into a row
            vkp_vec_t a = s[i][1] + s[i][2], b = s[i][1] - s[i][2];
            vkp_vec_t c2 = s[i][3] + s[i][4], d2 = s[i][3] - s[i][4];
            vkp_vec_t y0 = s[i][0] + a + c2, y1 = b + 2.0f * d2;
            vkp_vec_t y2 = a + 4.0f * c2, y3 = b + 8.0f * d2 + s[i][5];
            if (rep) {
              y0 = vkp_row_ep_vec(rep, m, y0);
              y1 = vkp_row_ep_vec(rep, m, y1);
              y2 = vkp_row_ep_vec(rep, m, y2);
              y3 = vkp_row_ep_vec(rep, m, y3);
            }
            float *restrict o = ob + i * obw + 4 * tw;
            for (int l = 0; l < VKP_VLEN; ++l) {
              o[4 * l] = y0[l];
              o[4 * l + 1] = y1[l];
              o[4 * l + 2] = y2[l];
              o[4 * l + 3] = y3[l];
            }
          }
        }
        for (ptrdiff_t i = 0; i < 4; ++i) {
          ptrdiff_t oh = 4 * (th0 + r) + i;
          if (oh < OH) memcpy(ym + oh * OW, ob + i * obw, sizeof(float) * (size_t)OW);
        }
      }
      if (ep && !rep)
        ep(ym + oh0 * OW, OH * OW, m, oh0 * OW, 1, (oh1 - oh0) * OW, batch, ep_ctx);
    }
  }
}

static void vkp_wino4_task(void *arg, ptrdiff_t t, int worker) {
  const vkp_wino_job_t *j = arg;
  vkp__winograd4_blocks(
      j->x, j->y, j->u, j->C, j->H, j->W, j->M, j->PT, j->PL, j->OH, j->OW, j->ep, j->ep_ctx,
      j->batch, j->rpb, j->TH * t / j->step, j->TH * (t + 1) / j->step,
      j->wscratch + worker * VKP_WINO4_SCRATCH_FLOATS(j->C, j->M, j->OH, j->OW),
      j->gemm_scratch + (ptrdiff_t)worker * VKP_GEMM_SCRATCH_FLOATS, 1);
}

// Y = conv(x) for one image, as vkp_conv_winograd but with 4x4 output tiles:
// `u` is the output of vkp_winograd4_prepack, `wscratch` holds `threads` *
// VKP_WINO4_SCRATCH_FLOATS(C, M, OH, OW) floats. Each task takes whole
// blocks of tile rows; every output is computed the same way whatever the
// thread count.
VKP_FN void vkp_conv_winograd4(const float *x, float *y, const float *u, ptrdiff_t C,
                               ptrdiff_t H, ptrdiff_t W, ptrdiff_t M, ptrdiff_t PT,
                               ptrdiff_t PL, ptrdiff_t OH, ptrdiff_t OW, vkp_epilogue_fn ep,
                               const void *ep_ctx, ptrdiff_t batch, float *wscratch,
                               float *gemm_scratch, int threads) {
  ptrdiff_t rpb = VKP_WINO4_RPB(C, M, OH, OW);
  const ptrdiff_t TH = VKP_WINO4_TH(OH);
  ptrdiff_t nt = threads < vkp_workers() ? threads : vkp_workers();
  if (nt > TH) nt = TH;
  if (nt > 1 && (TH + nt - 1) / nt < rpb) rpb = (TH + nt - 1) / nt;  // a block each
  if (nt > 1) {
    vkp_wino_job_t j = {x, u, y, C, H, W, M, PT, PL, OH, OW, ep, ep_ctx, batch,
                        rpb, nt, TH, wscratch, gemm_scratch};
    vkp_parallel(nt, vkp_wino4_task, &j);
    return;
  }
  vkp__winograd4_blocks(x, y, u, C, H, W, M, PT, PL, OH, OW, ep, ep_ctx, batch, rpb, 0, TH,
                        wscratch, gemm_scratch, threads);
}
