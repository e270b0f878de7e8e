// SPDX-License-Identifier: Apache-2.0
// Sum / mean over a set of axes: one output element per invocation, looping
// over the R reduced elements. Generator provides: TOTAL, R, REDUCE_MEAN,
// vkp_reduce_base(o) (input offset of output o's first element),
// vkp_reduce_offset(r) (offset of the r-th reduced element), IN0, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint base = vkp_reduce_base(o);
  float acc = 0.0;
  for (uint r = 0u; r < R; ++r) acc += IN0[base + vkp_reduce_offset(r)];
#ifdef REDUCE_MEAN
  acc /= float(R);
#endif
  STORE(o, acc);
}
