// SPDX-License-Identifier: Apache-2.0
// Mean-variance normalisation, GPU variant: one workgroup of WG invocations
// per row, shared-memory sums. Same generator names as mvn.comp; dispatched
// with TOTAL workgroups.
void main() {
  uint o = gl_WorkGroupID.x;
  if (o >= TOTAL) return;  // uniform in the workgroup: no barrier skipped
  uint t = gl_LocalInvocationID.x;
  uint base = vkp_reduce_base(o);
  float part = 0.0;
  for (uint r = t; r < R; r += WG) part += IN0[base + vkp_reduce_offset(r)];
  float mean = vkp_wg_sum(part) / float(R);
  part = 0.0;
  for (uint r = t; r < R; r += WG) {
    float d = IN0[base + vkp_reduce_offset(r)] - mean;
    part += d * d;
  }
  float inv = 1.0 / (sqrt(vkp_wg_sum(part) / float(R)) + 1e-9);
  for (uint r = t; r < R; r += WG) {
    uint at = base + vkp_reduce_offset(r);
    STORE(at, (IN0[at] - mean) * inv);
  }
}
