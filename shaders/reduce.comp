// SPDX-License-Identifier: Apache-2.0
// A reduction over a set of axes: one output element per invocation, looping
// over the R reduced elements. Generator provides: TOTAL, R,
// vkp_reduce_base(o) (input offset of output o's first element),
// vkp_reduce_offset(r) (offset of the r-th reduced element), LD0,
// STORE(o, v); and the operation: REDUCE_INIT, REDUCE_STEP(a, v),
// REDUCE_FINAL(a) (a sum when not given), REDUCE_MEAN (divide by R),
// REDUCE_LSE (log_sum_exp: a second pass summing exp(v - max) once the
// steps found the max).
#ifndef REDUCE_STEP
#define REDUCE_INIT 0.0
#define REDUCE_STEP(a, v) ((a) + (v))
#endif
#ifndef REDUCE_FINAL
#define REDUCE_FINAL(a) (a)
#endif
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint base = vkp_reduce_base(o);
  // In the data's type (ACC_T: float, or double for float64 data).
  ACC_T acc = ACC_T(REDUCE_INIT);
  for (uint r = 0u; r < R; ++r) acc = REDUCE_STEP(acc, LD0(base + vkp_reduce_offset(r)));
#ifdef REDUCE_LSE
  if (!isinf(acc) && !isnan(acc)) {
    ACC_T sum = ACC_T(0);
    for (uint r = 0u; r < R; ++r) sum += vkp_exp(LD0(base + vkp_reduce_offset(r)) - acc);
    acc += vkp_log(sum);
  }
#endif
#ifdef REDUCE_MEAN
  acc /= ACC_T(R);
#endif
  STORE(o, REDUCE_FINAL(acc));
}
