// SPDX-License-Identifier: Apache-2.0
// Group normalisation, GPU variant: one workgroup of WG invocations per row,
// shared-memory reductions for the mean and the variance. Same generator
// names as group_norm.comp; dispatched with ROWS workgroups.
void main() {
  uint r = gl_WorkGroupID.x;
  if (r >= ROWS) return;  // uniform in the workgroup: no barrier skipped
  uint t = gl_LocalInvocationID.x;
  uint base = r * L;
  float part = 0.0;
  for (uint j = t; j < L; j += WG) part += IN0[base + j];
  float mean = vkp_wg_sum(part) / float(L);
  part = 0.0;
  for (uint j = t; j < L; j += WG) {
    float d = IN0[base + j] - mean;
    part += d * d;
  }
  float rstd = 1.0 / sqrt(vkp_wg_sum(part) / float(L) + EPSILON);
  for (uint j = t; j < L; j += WG) {
    uint ch = (r % G) * CPG + j / S;
    STORE(base + j, (IN0[base + j] - mean) * rstd * IN1[ch] + IN2[ch]);
  }
}
