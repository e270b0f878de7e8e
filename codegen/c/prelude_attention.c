// ---------------------------------------------------------------------------
// Fused attention (codegen/c/emit_attention.c), float32:
// Y = softmax(scale * Q @ Kt [where C: fill] [+ M]) @ V, one block of query
// rows at a time: the block's scores by the GEMM (Kt [D, Lk] read in place),
// masked and softmaxed in place, then multiplied by V with the GEMM. The
// scores of a block (vkp_att_rows(Lk) rows, about 256 KiB) are the only
// intermediate: the [Lq, Lk] matrix of a head is never stored whole. Blocks of every batch are shared out over the stage's
// threads.

typedef struct vkp_att_t {
  const float *q, *kt, *v, *mask, *cond;  // mask, cond: NULL when absent
  float *out;
  // Element offsets of each batch's matrices (broadcast batch dims repeat).
  const int64_t *oq, *okt, *ov, *om, *oc;
  ptrdiff_t batches, lq, lk, d, dv;
  // Row and column strides of the mask and condition over [Lq, Lk].
  ptrdiff_t mrs, mcs, crs, ccs;
  float scale, fill;
  int fill_where;
} vkp_att_t;

// Query rows [i0, i0 + nr) of batch b. gs: VKP_GEMM_SCRATCH_FLOATS; sc:
// nr * lk floats of scores.
VKP_FN void vkp_att_block(const vkp_att_t *a, ptrdiff_t b, ptrdiff_t i0,
                          ptrdiff_t nr, float *gs, float *sc) {
  const ptrdiff_t lk = a->lk, d = a->d, dv = a->dv;
  float *y = a->out + (b * a->lq + i0) * dv;
  const vkp_bsrc_t kt = {.b = a->kt + a->okt[b], .rsb = lk, .csb = 1, .direct = 1};
  vkp_gemm(nr, lk, d, a->scale, a->q + a->oq[b] + i0 * d, d, 1, NULL, &kt, sc,
           lk, NULL, NULL, 0, 0, gs, 1);
  for (ptrdiff_t r = 0; r < nr; ++r) {
    float *restrict row = sc + r * lk;
    ptrdiff_t i = i0 + r;
    if (a->cond) {
      const float *c = a->cond + a->oc[b] + i * a->crs;
      for (ptrdiff_t j = 0; j < lk; ++j)
        if ((c[j * a->ccs] != 0.0f) == a->fill_where) row[j] = a->fill;
    }
    if (a->mask) {
      const float *m = a->mask + a->om[b] + i * a->mrs;
      for (ptrdiff_t j = 0; j < lk; ++j) row[j] += m[j * a->mcs];
    }
    vkp_softmax_row(row, lk);
  }
  const vkp_bsrc_t vs = {.b = a->v + a->ov[b], .rsb = dv, .csb = 1, .direct = 1};
  vkp_gemm(nr, dv, lk, 1.0f, sc, lk, 1, NULL, &vs, y, dv, NULL, NULL, 0, 0, gs, 1);
}

typedef struct vkp_att_job_t {
  const vkp_att_t *a;
  ptrdiff_t rows;  // query rows per block
  float *gs, *sc;  // GEMM scratch, scores: per worker
} vkp_att_job_t;

static void vkp_att_task(void *arg, ptrdiff_t t, int worker) {
  const vkp_att_job_t *j = arg;
  const vkp_att_t *a = j->a;
  ptrdiff_t per = (a->lq + j->rows - 1) / j->rows;
  ptrdiff_t b = t / per, i0 = t % per * j->rows;
  ptrdiff_t nr = a->lq - i0 < j->rows ? a->lq - i0 : j->rows;
  vkp_att_block(a, b, i0, nr, j->gs + (ptrdiff_t)worker * VKP_GEMM_SCRATCH_FLOATS,
                j->sc + (ptrdiff_t)worker * j->rows * a->lk);
}

// Query rows per block: the block's scores stay within about 256 KiB (L2),
// in whole register tiles of the GEMM.
VKP_FN ptrdiff_t vkp_att_rows(ptrdiff_t lk) {
  ptrdiff_t rows = 65536 / (lk > 0 ? lk : 1) / VKP_MR * VKP_MR;
  return rows < VKP_MR ? VKP_MR : rows > 8 * VKP_MR ? 8 * VKP_MR : rows;
}

// scratch: threads GEMM scratches (VKP_GEMM_SCRATCH_FLOATS each), then
// threads * 8 * VKP_MR * lk floats of scores. Blocks of query rows are the
// tasks.
VKP_FN void vkp_attention(const vkp_att_t *a, float *scratch, int threads) {
  const ptrdiff_t rows = vkp_att_rows(a->lk);
  ptrdiff_t blocks = a->batches * ((a->lq + rows - 1) / rows);
  ptrdiff_t nt = threads < 1 ? 1 : threads;
  vkp_att_job_t j = {a, rows, scratch, scratch + nt * VKP_GEMM_SCRATCH_FLOATS};
  vkp_parallel(blocks, vkp_att_task, &j);
}
