// SPDX-License-Identifier: Apache-2.0
// A reduction, GPU variant: one workgroup of WG invocations per output
// element, a strided partial result and a shared-memory combination
// (REDUCE_WG: vkp_wg_sum unless given). Same generator names as
// reduce.comp (float32 and float16 data: it combines float partials);
// dispatched with TOTAL workgroups (at least one).
#ifndef REDUCE_STEP
#define REDUCE_INIT 0.0
#define REDUCE_STEP(a, v) ((a) + (v))
#endif
#ifndef REDUCE_FINAL
#define REDUCE_FINAL(a) (a)
#endif
#ifndef REDUCE_WG
#define REDUCE_WG vkp_wg_sum
#endif
void main() {
  uint o = gl_WorkGroupID.x;
  if (o >= TOTAL) return;  // uniform in the workgroup: no barrier skipped
  uint t = gl_LocalInvocationID.x;
  uint base = vkp_reduce_base(o);
  float part = REDUCE_INIT;
  for (uint r = t; r < R; r += WG) part = REDUCE_STEP(part, LD0(base + vkp_reduce_offset(r)));
  float acc = REDUCE_WG(part);
#ifdef REDUCE_LSE
  if (!isinf(acc) && !isnan(acc)) {
    part = 0.0;
    for (uint r = t; r < R; r += WG) part += exp(LD0(base + vkp_reduce_offset(r)) - acc);
    acc += log(vkp_wg_sum(part));
  }
#endif
#ifdef REDUCE_MEAN
  acc /= float(R);
#endif
  if (t == 0u) STORE(o, REDUCE_FINAL(acc));
}
