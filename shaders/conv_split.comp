// SPDX-License-Identifier: Apache-2.0
// Split-K convolution, first pass: the partial sums of one slice of the
// reduction, for a convolution (or, with TRANSPOSED, a transposed one) over
// 1 to 3 spatial dims whose unsplit kernels would loop past lavapipe's
// budget (vkp__spv_split_k; "lavapipe's loop limit" in README.md). The
// reduction of output element o runs over k = (c, tap) in [0, KR), KR = CG *
// KD * KH * KW, c an input channel of o's group; slice ks = gl_WorkGroupID.y
// takes k in [ks * KSLICE, (ks + 1) * KSLICE) in one flat loop, one
// back-edge per step, and stores its sum at ks * TOTAL + o of the
// [KSPLIT, TOTAL] partial sums. gemm_splitk_reduce.comp then adds the slices
// in order, the bias and the epilogue. One output element per invocation:
// correct for any shape, not the fast path.
// Generator provides: TOTAL, KR, KSLICE, KSPLIT, C, D, H, W, M, OD, OH, OW,
// KD, KH, KW, SD, SH, SW, DD, DH, DW, PF, PT, PL (ints), CG (= C/G), MG (=
// M/G), TRANSPOSED (weights [C, MG, KD, KH, KW]; else [M, CG, KD, KH, KW]),
// LD0(i) = x, LD1(i) = weight, VKP_PUT(i, v).
#define TAPS (KD * KH * KW)

// The input position along one dim that tap k reaches output position
// `at` from (begin pad `pad`): a convolution reads at * st - pad + k * dil; a
// transposed one reads (at + pad - k * dil) / st when that divides evenly.
// False outside the input.
bool in_pos(uint at, int pad, uint k, uint dil, uint st, uint size, out uint pos) {
#ifdef TRANSPOSED
  int t = int(at) + pad - int(k * dil);
  if (t < 0 || uint(t) % st != 0u) return false;
  pos = uint(t) / st;
#else
  int t = int(at * st) - pad + int(k * dil);
  if (t < 0) return false;
  pos = uint(t);
#endif
  return pos < size;
}

void main() {
  uint o = gl_GlobalInvocationID.x;
  uint ks = gl_WorkGroupID.y;
  if (o >= TOTAL || ks >= KSPLIT) return;
  uint ow = o % OW;
  uint t = o / OW;
  uint oh = t % OH;
  t /= OH;
  uint od = t % OD;
  t /= OD;
  uint m = t % M;
  uint n = t / M;
  uint g = m / MG;
  uint k_lo = ks * KSLICE, k_hi = min(KR, k_lo + KSLICE);
  float acc = 0.0;
  for (uint k = k_lo; k < k_hi; ++k) {
    uint c = k / TAPS, tap = k % TAPS;
    uint kw = tap % KW, kh = (tap / KW) % KH, kd = tap / (KW * KH);
    uint id, ih, iw;
    if (!in_pos(od, PF, kd, DD, SD, D, id) || !in_pos(oh, PT, kh, DH, SH, H, ih) ||
        !in_pos(ow, PL, kw, DW, SW, W, iw))
      continue;
    uint ci = g * CG + c;
    float x = LD0(((n * C + ci) * D + id) * H * W + ih * W + iw);
#ifdef TRANSPOSED
    acc += x * LD1((ci * MG + m % MG) * TAPS + tap);
#else
    acc += x * LD1(m * KR + k);
#endif
  }
  VKP_PUT(ks * TOTAL + o, acc);
}
