// SPDX-License-Identifier: Apache-2.0
// Sum / mean, GPU variant: one workgroup of WG invocations per output
// element, a strided partial sum and a shared-memory reduction. Same
// generator names as reduce.comp; dispatched with TOTAL workgroups.
void main() {
  uint o = gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  uint base = vkp_reduce_base(o);
  float part = 0.0;
  for (uint r = t; r < R; r += WG) part += IN0[base + vkp_reduce_offset(r)];
  float acc = vkp_wg_sum(part);
#ifdef REDUCE_MEAN
  acc /= float(R);
#endif
  if (t == 0u) STORE(o, acc);
}
