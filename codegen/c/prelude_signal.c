// SPDX-License-Identifier: Apache-2.0
// Discrete Fourier transforms (codegen/c/emit_signal.c), pasted into every
// generated unit after prelude.c: dft and stft on float32 data, computed in
// double. Each line is a mixed-radix FFT: decimation in time by the
// smallest prime factor p of n, p sub-transforms of n / p combined with
// twiddles, so a power of two costs O(n log n) and a prime n is a direct
// sum. The reference (graph/op_signal.c) sums directly instead. Lines are
// split across the stage's pool.

// One batch of lines. Line t has a = t / inner, b = t % inner; its input
// starts at x + a * xa + b * xb, samples xs floats apart, ch (1: real, 2:
// [re, im]) floats each, `have` of them read (times win[s] when win), zeros
// up to n; bins 0..n_out-1 go to y + a * ya + b * yb, ys floats apart.
typedef struct vkp_dft_job_t {
  const float *x, *win;
  float *y;
  ptrdiff_t inner, xa, xb, xs, ch, have, ya, yb, ys, n, n_out;
  int inverse;
  const double *tw;  // cos, sin of 2 pi k / n, k < n
  double *work;      // per worker: 6 n doubles
} vkp_dft_job_t;

// Scratch floats vkp_dft needs for length n on `threads` workers.
#define VKP_DFT_SCRATCH_FLOATS(n, threads) (2 * ((n) * 2 + (threads) * (n) * 6))

static ptrdiff_t vkp_fft_factor(ptrdiff_t n) {
  for (ptrdiff_t f = 2; f * f <= n; ++f)
    if (n % f == 0) return f;
  return n;
}

// out[k] (complex, k < n) = sum_j in[j * is] w^(jk), w = e^(sign 2 pi i / n):
// the roots are tw[tstep * e mod big] of the table for length `big`. tmp
// holds n complex values (levels use it one after another).
static void vkp_fft_rec(const double *in, ptrdiff_t is, double *out, ptrdiff_t n,
                        ptrdiff_t tstep, const double *tw, ptrdiff_t big, double sign,
                        double *tmp) {
  if (n == 1) {
    out[0] = in[0];
    out[1] = in[1];
    return;
  }
  ptrdiff_t p = vkp_fft_factor(n), m = n / p;
  for (ptrdiff_t r = 0; r < p; ++r)
    vkp_fft_rec(in + 2 * r * is, is * p, out + 2 * r * m, m, tstep * p, tw, big, sign, tmp);
  if (p == 2) {
    for (ptrdiff_t k = 0; k < m; ++k) {
      const double *w = tw + 2 * (k * tstep);
      double *a = out + 2 * k, *b = out + 2 * (k + m);
      double c = w[0], s = sign * w[1];
      double br = b[0] * c - b[1] * s, bi = b[0] * s + b[1] * c;
      b[0] = a[0] - br;
      b[1] = a[1] - bi;
      a[0] += br;
      a[1] += bi;
    }
    return;
  }
  for (ptrdiff_t k = 0; k < m; ++k) {
    for (ptrdiff_t r = 0; r < p; ++r) {
      tmp[2 * r] = out[2 * (r * m + k)];
      tmp[2 * r + 1] = out[2 * (r * m + k) + 1];
    }
    for (ptrdiff_t q = 0; q < p; ++q) {
      ptrdiff_t f = k + q * m, e = 0;  // e = r * f mod n
      double re = 0.0, im = 0.0;
      for (ptrdiff_t r = 0; r < p; ++r, e = (e + f) % n) {
        const double *w = tw + 2 * ((e * tstep) % big);
        double c = w[0], s = sign * w[1];
        re += tmp[2 * r] * c - tmp[2 * r + 1] * s;
        im += tmp[2 * r] * s + tmp[2 * r + 1] * c;
      }
      out[2 * f] = re;
      out[2 * f + 1] = im;
    }
  }
}

static void vkp_dft_task(void *ctx, ptrdiff_t lo, ptrdiff_t hi, int worker) {
  const vkp_dft_job_t *j = ctx;
  ptrdiff_t n = j->n;
  double *z = j->work + (ptrdiff_t)worker * 6 * n, *f = z + 2 * n, *tmp = f + 2 * n;
  double sign = j->inverse ? 1.0 : -1.0, scale = j->inverse ? 1.0 / (double)n : 1.0;
  for (ptrdiff_t t = lo; t < hi; ++t) {
    ptrdiff_t a = t / j->inner, b = t % j->inner;
    const float *xp = j->x + a * j->xa + b * j->xb;
    for (ptrdiff_t s = 0; s < j->have; ++s) {
      double w = j->win ? (double)j->win[s] : 1.0;
      z[2 * s] = (double)xp[s * j->xs] * w;
      z[2 * s + 1] = j->ch == 2 ? (double)xp[s * j->xs + 1] * w : 0.0;
    }
    for (ptrdiff_t s = j->have; s < n; ++s) z[2 * s] = z[2 * s + 1] = 0.0;
    vkp_fft_rec(z, 1, f, n, 1, j->tw, n, sign, tmp);
    float *yp = j->y + a * j->ya + b * j->yb;
    for (ptrdiff_t k = 0; k < j->n_out; ++k) {
      yp[k * j->ys] = (float)(f[2 * k] * scale);
      yp[k * j->ys + 1] = (float)(f[2 * k + 1] * scale);
    }
  }
}

// Runs `lines` lines of *j (its tw and work set here from `scratch`, which
// holds VKP_DFT_SCRATCH_FLOATS(j->n, VKP_STAGE_THREADS) floats).
VKP_FN void vkp_dft(vkp_dft_job_t *j, ptrdiff_t lines, float *scratch) {
  double *tw = (double *)scratch;
  for (ptrdiff_t k = 0; k < j->n; ++k) {
    double angle = 6.283185307179586476925 * (double)k / (double)j->n;
    tw[2 * k] = cos(angle);
    tw[2 * k + 1] = sin(angle);
  }
  j->tw = tw;
  j->work = tw + 2 * j->n;
  ptrdiff_t steps = j->n * 8;
  for (ptrdiff_t n = j->n; n > 1; n /= vkp_fft_factor(n)) steps += j->n * vkp_fft_factor(n);
  vkp_parallel_range(lines, VKP_GRAIN(steps), vkp_dft_task, j);
}
