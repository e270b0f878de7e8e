// ---------------------------------------------------------------------------
// Recurrent networks (lstm, gru, rnn; codegen/c/emit_rnn.c), float32.
// Per direction, the input projections of every step come first, as one
// GEMM over [seq * batch, input] x W^T (with the biases added); then each
// step multiplies the batch's hidden states by R^T (a second, small GEMM)
// and applies the gates. A batch entry whose sequence has ended keeps its
// state and writes zeros to Y; a reverse direction runs each sequence from
// its own last step. Gate pre-activations are clipped to [-clip, clip]
// when clip > 0.

typedef float (*vkp_act_fn)(float x, float alpha, float beta);

VKP_FN float vkp_act_relu(float x, float a, float b) {
  (void)a, (void)b;
  return x > 0.0f ? x : 0.0f;
}
VKP_FN float vkp_act_tanh(float x, float a, float b) {
  (void)a, (void)b;
  return tanhf(x);
}
VKP_FN float vkp_act_sigmoid(float x, float a, float b) {
  (void)a, (void)b;
  return vkp_sigmoidf(x);
}
VKP_FN float vkp_act_affine(float x, float a, float b) { return a * x + b; }
VKP_FN float vkp_act_leaky_relu(float x, float a, float b) {
  (void)b;
  return x >= 0.0f ? x : a * x;
}
VKP_FN float vkp_act_thresholded_relu(float x, float a, float b) {
  (void)b;
  return x > a ? x : 0.0f;
}
VKP_FN float vkp_act_scaled_tanh(float x, float a, float b) { return a * tanhf(b * x); }
VKP_FN float vkp_act_hard_sigmoid(float x, float a, float b) {
  float y = a * x + b;
  return y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y;
}
VKP_FN float vkp_act_elu(float x, float a, float b) {
  (void)b;
  return x >= 0.0f ? x : a * (expf(x) - 1.0f);
}
VKP_FN float vkp_act_softsign(float x, float a, float b) {
  (void)a, (void)b;
  return x / (1.0f + fabsf(x));
}
VKP_FN float vkp_act_softplus(float x, float a, float b) {
  (void)a, (void)b;
  return x > 30.0f ? x : log1pf(expf(x));
}

enum { VKP_RNN_LSTM, VKP_RNN_GRU, VKP_RNN_RNN };

typedef struct vkp_rnn_t {
  int kind;  // VKP_RNN_*
  ptrdiff_t seq, batch, input, hidden, dirs;
  int reverse0;  // direction 0 runs backwards ("reverse")
  int layout1, input_forget, linear_before_reset;
  float clip;  // 0: none
  // f, g, h (lstm), f, g (gru), f (rnn), per direction.
  vkp_act_fn act[6];
  float alpha[6], beta[6];
} vkp_rnn_t;

// Floats of scratch vkp_rnn needs besides the GEMM's.
#define VKP_RNN_SCRATCH_FLOATS(SEQ, BATCH, GH, H)                                   \
  ((size_t)(SEQ) * (BATCH) * (GH) + (size_t)(BATCH) * (GH) + 4 * (size_t)(BATCH) * (H) + \
   (size_t)(GH) * (H))

static inline float vkp_rnn_clip(const vkp_rnn_t *p, float v) {
  if (p->clip > 0.0f) v = v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
  return v;
}

// The length of batch entry b's sequence, clamped to [0, seq] (ref refuses
// a length outside; generated code must not read past X).
static inline ptrdiff_t vkp_rnn_len(const vkp_rnn_t *p, const int32_t *lens32,
                                    const int64_t *lens64, ptrdiff_t b) {
  ptrdiff_t len = lens32 ? (ptrdiff_t)lens32[b] : lens64 ? (ptrdiff_t)lens64[b] : p->seq;
  return len < 0 ? 0 : len > p->seq ? p->seq : len;
}

// Activation i of the list.
static inline float vkp_rnn_act(const vkp_rnn_t *p, int i, float v) {
  return p->act[i](v, p->alpha[i], p->beta[i]);
}

// h * m^T for the batch's states h [batch, k] and rows [0, n) of m [*, k]
// into out [batch, ldo]. A small batch reads `mt`, m transposed ([k, ldt]:
// column g of m^T at mt + g), so each state element scales a contiguous
// row of it into registers of outputs: no horizontal sums (a dot product
// per gate row, each ending in a 16-lane reduction, was most of a GRU
// step at batch 1). A large batch takes the GEMM on m, whose packing is
// then amortised.
static void vkp_rnn_rec(const vkp_rnn_t *p, const float *h, ptrdiff_t k,
                        const float *m, const float *mt, ptrdiff_t ldt, ptrdiff_t n,
                        float *out, ptrdiff_t ldo, float *gemm_scratch, int threads) {
  if (p->batch > 16) {
    vkp_bsrc_t b = {.b = m, .rsb = 1, .csb = k};
    vkp_gemm(p->batch, n, k, 1.0f, h, k, 1, NULL, &b, out, ldo, NULL, NULL, 0, 0,
             gemm_scratch, threads);
    return;
  }
  const ptrdiff_t nv = n / (4 * VKP_VLEN) * (4 * VKP_VLEN);
  for (ptrdiff_t b = 0; b < p->batch; ++b) {
    const float *hb = h + b * k;
    float *ob = out + b * ldo;
    for (ptrdiff_t g = 0; g < nv; g += 4 * VKP_VLEN) {
      vkp_vec_t acc[4] = {{0}, {0}, {0}, {0}};
      for (ptrdiff_t i = 0; i < k; ++i) {
        const vkp_vec_t hv = (vkp_vec_t){0} + hb[i];
        const float *row = mt + i * ldt + g;
        for (int u = 0; u < 4; ++u) acc[u] += hv * *(const vkp_uvec_t *)(row + u * VKP_VLEN);
      }
      for (int u = 0; u < 4; ++u) *(vkp_uvec_t *)(ob + g + u * VKP_VLEN) = acc[u];
    }
    for (ptrdiff_t g = nv; g < n; ++g) {
      float sum = 0.0f;
      for (ptrdiff_t i = 0; i < k; ++i) sum += hb[i] * mt[i * ldt + g];
      ob[g] = sum;
    }
  }
}

// Inputs X, W, R, B (NULL: none), sequence lengths (int32 or int64, or
// neither: all full), initial states and peepholes (NULL: zeros); Y, Y_h,
// Y_c (the last two may be NULL). `scratch` holds VKP_RNN_SCRATCH_FLOATS,
// `gemm_scratch` the GEMM's.
VKP_FN void vkp_rnn(const vkp_rnn_t *p, const float *x, const float *w, const float *r,
                    const float *bias, const int32_t *lens32, const int64_t *lens64,
                    const float *h0, const float *c0, const float *peep, float *y,
                    float *yh, float *yc, float *scratch, float *gemm_scratch,
                    int threads) {
  const ptrdiff_t S = p->seq, N = p->batch, H = p->hidden, I = p->input;
  const ptrdiff_t G = p->kind == VKP_RNN_LSTM ? 4 : p->kind == VKP_RNN_GRU ? 3 : 1;
  const ptrdiff_t GH = G * H, D = p->dirs, per = p->kind == VKP_RNN_LSTM ? 3
                                                 : p->kind == VKP_RNN_GRU ? 2 : 1;
  const int gru_lbr = p->kind == VKP_RNN_GRU && p->linear_before_reset;
  float *xw = scratch, *gates = xw + S * N * GH, *h = gates + N * GH, *c = h + N * H;
  float *rh = c + N * H, *hr = rh + N * H, *rt = hr + N * H;
  for (ptrdiff_t d = 0; d < D; ++d) {
    const int rev = d == 1 || p->reverse0;
    const float *wd = w + d * GH * I, *rd = r + d * GH * H;
    // R^T [H, GH] for vkp_rnn_rec's small batches.
    if (N <= 16)
      for (ptrdiff_t g = 0; g < GH; ++g)
        for (ptrdiff_t i = 0; i < H; ++i) rt[i * GH + g] = rd[g * H + i];
    const float *wb = bias ? bias + d * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;
    const float *pd = peep ? peep + d * 3 * H : NULL;
    const int a0 = (int)(d * per);
    // Input projections of every step, rows in X's order, plus the biases
    // (GRU's recurrent h-gate bias goes inside the reset with
    // linear_before_reset).
    vkp_bsrc_t wsrc = {.b = wd, .rsb = 1, .csb = I};
    vkp_gemm(S * N, GH, I, 1.0f, x, I, 1, NULL, &wsrc, xw, GH, NULL, NULL, 0, 0,
             gemm_scratch, threads);
    if (wb)
      for (ptrdiff_t row = 0; row < S * N; ++row)
        for (ptrdiff_t g = 0; g < GH; ++g)
          xw[row * GH + g] += wb[g] + (gru_lbr && g >= 2 * H ? 0.0f : rb[g]);
    for (ptrdiff_t b = 0; b < N; ++b)
      for (ptrdiff_t j = 0; j < H; ++j) {
        ptrdiff_t at = (p->layout1 ? b * D + d : d * N + b) * H + j;
        h[b * H + j] = h0 ? h0[at] : 0.0f;
        c[b * H + j] = c0 ? c0[at] : 0.0f;
      }
    for (ptrdiff_t s = 0; s < S; ++s) {
      // R h for the whole batch (rows of ended sequences are not used).
      ptrdiff_t nrec = p->kind == VKP_RNN_GRU && !gru_lbr ? 2 * H : GH;
      vkp_rnn_rec(p, h, H, rd, rt, GH, nrec, gates, GH, gemm_scratch, threads);
      if (p->kind == VKP_RNN_GRU && !gru_lbr) {
        // The h gate reads r (.) h: z and r first, then Rh (r (.) h).
        for (ptrdiff_t b = 0; b < N; ++b) {
          ptrdiff_t len = vkp_rnn_len(p, lens32, lens64, b);
          if (s >= len) continue;
          ptrdiff_t t = rev ? len - 1 - s : s;
          const float *xr = xw + (p->layout1 ? b * S + t : t * N + b) * GH;
          float *gr = gates + b * GH;
          for (ptrdiff_t j = 0; j < 2 * H; ++j)
            gr[j] = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[j] + gr[j]));
          for (ptrdiff_t j = 0; j < H; ++j) rh[b * H + j] = gr[H + j] * h[b * H + j];
        }
        vkp_rnn_rec(p, rh, H, rd + 2 * H * H, rt + 2 * H, GH, H, hr, H, gemm_scratch, threads);
      }
      for (ptrdiff_t b = 0; b < N; ++b) {
        ptrdiff_t len = vkp_rnn_len(p, lens32, lens64, b);
        if (s >= len) continue;
        ptrdiff_t t = rev ? len - 1 - s : s;
        const float *xr = xw + (p->layout1 ? b * S + t : t * N + b) * GH;
        float *gr = gates + b * GH, *hb = h + b * H, *cb = c + b * H;
        if (p->kind == VKP_RNN_LSTM) {
          for (ptrdiff_t j = 0; j < H; ++j) {
            float pi = pd ? pd[j] : 0.0f, po = pd ? pd[H + j] : 0.0f,
                  pf = pd ? pd[2 * H + j] : 0.0f;
            float ig = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[j] + gr[j] + pi * cb[j]));
            float fg = p->input_forget
                           ? 1.0f - ig
                           : vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[2 * H + j] +
                                                                     gr[2 * H + j] +
                                                                     pf * cb[j]));
            float cg = vkp_rnn_act(p, a0 + 1, vkp_rnn_clip(p, xr[3 * H + j] + gr[3 * H + j]));
            float cn = fg * cb[j] + ig * cg;
            float og = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[H + j] + gr[H + j] + po * cn));
            cb[j] = cn;
            hb[j] = og * vkp_rnn_act(p, a0 + 2, cn);
          }
        } else if (p->kind == VKP_RNN_GRU) {
          for (ptrdiff_t j = 0; j < H; ++j) {
            float z, pre;
            if (gru_lbr) {
              z = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[j] + gr[j]));
              float rg = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[H + j] + gr[H + j]));
              pre = xr[2 * H + j] + rg * (gr[2 * H + j] + (rb ? rb[2 * H + j] : 0.0f));
            } else {
              z = gr[j];
              pre = xr[2 * H + j] + hr[b * H + j];
            }
            float cand = vkp_rnn_act(p, a0 + 1, vkp_rnn_clip(p, pre));
            hb[j] = (1.0f - z) * cand + z * hb[j];
          }
        } else {
          for (ptrdiff_t j = 0; j < H; ++j)
            hb[j] = vkp_rnn_act(p, a0, vkp_rnn_clip(p, xr[j] + gr[j]));
        }
        float *yr = y + (p->layout1 ? (b * S + t) * D + d : (t * D + d) * N + b) * H;
        for (ptrdiff_t j = 0; j < H; ++j) yr[j] = hb[j];
      }
    }
    for (ptrdiff_t b = 0; b < N; ++b) {
      ptrdiff_t len = vkp_rnn_len(p, lens32, lens64, b);
      for (ptrdiff_t t = len; t < S; ++t) {
        float *yr = y + (p->layout1 ? (b * S + t) * D + d : (t * D + d) * N + b) * H;
        for (ptrdiff_t j = 0; j < H; ++j) yr[j] = 0.0f;
      }
      ptrdiff_t at = (p->layout1 ? b * D + d : d * N + b) * H;
      for (ptrdiff_t j = 0; j < H; ++j) {
        if (yh) yh[at + j] = h[b * H + j];
        if (yc) yc[at + j] = c[b * H + j];
      }
    }
  }
}
