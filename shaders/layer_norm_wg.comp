// SPDX-License-Identifier: Apache-2.0
// Layer normalisation, GPU variant: one workgroup of WG invocations per row,
// shared-memory reductions for the mean and the variance. Same generator
// names as layer_norm.comp; dispatched with ROWS workgroups.
void main() {
  uint r = gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  uint base = r * L;
  float part = 0.0;
#ifdef RMS
  float mean = 0.0;
#else
  for (uint j = t; j < L; j += WG) part += IN0[base + j];
  float mean = vkp_wg_sum(part) / float(L);
  part = 0.0;
#endif
  for (uint j = t; j < L; j += WG) {
    float d = IN0[base + j] - mean;
    part += d * d;
  }
  float rstd = 1.0 / sqrt(vkp_wg_sum(part) / float(L) + EPSILON);
  for (uint j = t; j < L; j += WG) {
    float y = (IN0[base + j] - mean) * rstd * IN1[vkp_scale_index(j)];
#ifdef HAS_BIAS
    y += IN2[vkp_bias_index(j)];
#endif
    STORE(base + j, y);
  }
}
