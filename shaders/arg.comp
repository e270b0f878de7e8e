// SPDX-License-Identifier: Apache-2.0
// arg_max (WANT 1) / arg_min (WANT -1) along one axis viewed as
// [OUTER, L, INNER]: one invocation per output element walks its L values
// and keeps the first pick (the last one on ties with LAST). NaN is picked
// by both ops, as in "ref" (NumPy). Generator provides: TOTAL, L, INNER,
// WANT, LAST, IN_T (the data's type), VKP_ISNAN(x), IN0 = x, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint base = (o / INNER) * L * INNER + o % INNER;
  uint best = 0u;
  IN_T bv = IN0[base];
  for (uint k = 1u; k < L; ++k) {
    IN_T v = IN0[base + k * INNER];
    bool vn = VKP_ISNAN(v), bn = VKP_ISNAN(bv);
    int c = (vn || bn) ? (vn == bn ? 0 : (vn ? WANT : -WANT))
                       : (v > bv ? 1 : (v < bv ? -1 : 0));
    if (c == WANT || (c == 0 && LAST != 0)) {
      best = k;
      bv = v;
    }
  }
  STORE(o, ACC_T(best));
}
