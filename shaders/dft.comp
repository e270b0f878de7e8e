// SPDX-License-Identifier: Apache-2.0
// dft and stft: one invocation per output bin (line t, bin k) sums its line
// directly in float, as "ref" does in double. Line t has a = t / INNER,
// b = t % INNER; its input starts at a * XA + b * XB, samples XS apart, CH
// floats each (1: real, 2: [re, im]), HAVE of them read (times the window
// LD1 with WINDOW), zeros up to N; bin k of the line is written at
// a * YA + b * YB + k * YS (re, then im). The root w^(jk) comes from the
// exact integer e = jk mod N: an octant reduction r = (pi / 2)(4e - qN) / N,
// |r| <= pi / 4, then short polynomials, so every device gets float
// accuracy whatever the precision of its sin and cos.
// Generator provides: TOTAL (lines * N_OUT), N, N_OUT, HAVE, INNER, XA, XB,
// XS, CH, YA, YB, YS, SIGN (-1.0 forward, 1.0 inverse), SCALE, WINDOW when
// set, LD0 = x, LD1 = window, STORE(o, v).

// cos and sin of 2 pi e / N for 0 <= e < N.
vec2 vkp_root(uint e) {
  uint q = (8u * e + N) / (2u * N);  // nearest quarter turn, 0..4
  float r = 1.5707963267948966 * (float(int(4u * e) - int(q * N)) / float(N));
  float r2 = r * r;
  float c = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24.0 + r2 * (-1.0 / 720.0 + r2 * (1.0 / 40320.0))));
  float s = r * (1.0 + r2 * (-1.0 / 6.0 + r2 * (1.0 / 120.0 + r2 * (-1.0 / 5040.0 + r2 * (1.0 / 362880.0)))));
  q &= 3u;
  return q == 0u ? vec2(c, s) : q == 1u ? vec2(-s, c) : q == 2u ? vec2(-c, -s) : vec2(s, -c);
}

void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint t = o / N_OUT, k = o % N_OUT;
  uint a = t / INNER, b = t % INNER;
  uint x0 = a * XA + b * XB;
  float re = 0.0, im = 0.0;
  uint e = 0u;  // j * k mod N
  for (uint j = 0u; j < HAVE; ++j) {
    vec2 w = vkp_root(e);
    w.y *= SIGN;
#ifdef WINDOW
    float win = float(LD1(j));
#else
    float win = 1.0;
#endif
    float xr = float(LD0(x0 + j * XS)) * win;
    float xi = CH == 2u ? float(LD0(x0 + j * XS + 1u)) * win : 0.0;
    re += xr * w.x - xi * w.y;
    im += xr * w.y + xi * w.x;
    e += k;
    if (e >= N) e -= N;
  }
  uint y0 = a * YA + b * YB + k * YS;
  STORE(y0, ACC_T(re * SCALE));
  STORE(y0 + 1u, ACC_T(im * SCALE));
}
