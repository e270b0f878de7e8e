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
  ptrdiff_t t0, t1;  // blocks [t0, t1) of batches * ceil(lq / rows)
  ptrdiff_t rows;    // query rows per block
  float *gs, *sc;    // GEMM scratch, scores
} vkp_att_job_t;

VKP_FN void *vkp_att_job_run(void *arg) {
  const vkp_att_job_t *j = arg;
  const vkp_att_t *a = j->a;
  ptrdiff_t per = (a->lq + j->rows - 1) / j->rows;
  for (ptrdiff_t t = j->t0; t < j->t1; ++t) {
    ptrdiff_t b = t / per, i0 = t % per * j->rows;
    ptrdiff_t nr = a->lq - i0 < j->rows ? a->lq - i0 : j->rows;
    vkp_att_block(a, b, i0, nr, j->gs, j->sc);
  }
  return NULL;
}

// Query rows per block: the block's scores stay within about 256 KiB (L2),
// in whole register tiles of the GEMM.
VKP_FN ptrdiff_t vkp_att_rows(ptrdiff_t lk) {
  ptrdiff_t rows = 65536 / (lk > 0 ? lk : 1) / VKP_MR * VKP_MR;
  return rows < VKP_MR ? VKP_MR : rows > 8 * VKP_MR ? 8 * VKP_MR : rows;
}

// scratch: threads GEMM scratches (VKP_GEMM_SCRATCH_FLOATS each), then
// threads * 8 * VKP_MR * lk floats of scores.
VKP_FN void vkp_attention(const vkp_att_t *a, float *scratch, int threads) {
  const ptrdiff_t rows = vkp_att_rows(a->lk);
  ptrdiff_t blocks = a->batches * ((a->lq + rows - 1) / rows);
  float *scores = scratch + (ptrdiff_t)(threads < 1 ? 1 : threads) * VKP_GEMM_SCRATCH_FLOATS;
  int nt = threads < 1 ? 1 : threads;
  if (nt > blocks) nt = (int)(blocks > 0 ? blocks : 1);
#ifdef VKP_THREADS
  double work = (double)a->batches * (double)a->lq * (double)a->lk *
                (double)(a->d + a->dv);
  if (nt > 1 && work > 1e6) {
    enum { VKP_MAX_THREADS = 64 };
    vkp_att_job_t jobs[VKP_MAX_THREADS];
    pthread_t tids[VKP_MAX_THREADS];
    int started[VKP_MAX_THREADS];
    if (nt > VKP_MAX_THREADS) nt = VKP_MAX_THREADS;
    for (int t = 0; t < nt; ++t) {
      jobs[t] = (vkp_att_job_t){a, blocks * t / nt, blocks * (t + 1) / nt, rows,
                                scratch + t * VKP_GEMM_SCRATCH_FLOATS,
                                scores + t * rows * a->lk};
      started[t] = t > 0 &&
                   pthread_create(&tids[t], NULL, vkp_att_job_run, &jobs[t]) == 0;
    }
    vkp_att_job_run(&jobs[0]);
    for (int t = 1; t < nt; ++t) {
      if (started[t]) pthread_join(tids[t], NULL);
      else vkp_att_job_run(&jobs[t]);  // could not start: run it here
    }
    return;
  }
#endif
  (void)nt;
  vkp_att_job_t job = {a, 0, blocks, rows, scratch, scores};
  vkp_att_job_run(&job);
}
