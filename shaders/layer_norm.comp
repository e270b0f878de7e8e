// SPDX-License-Identifier: Apache-2.0
// Layer normalisation over the trailing L elements of each of ROWS rows, one
// row per invocation (two passes: mean, then variance). Generator provides:
// ROWS, L, EPSILON, HAS_BIAS, RMS (RMSNorm: no mean subtracted), vkp_scale_index(j), vkp_bias_index(j) (the
// broadcast of scale/bias over the normalised dims), IN0 = x, IN1 = scale,
// IN2 = bias, STORE(o, v).
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint base = r * L;
  float mean = 0.0;
#ifndef RMS
  for (uint j = 0u; j < L; ++j) mean += IN0[base + j];
  mean /= float(L);
#endif
  float var = 0.0;
  for (uint j = 0u; j < L; ++j) {
    float d = IN0[base + j] - mean;
    var += d * d;
  }
  float rstd = 1.0 / sqrt(var / float(L) + EPSILON);
  for (uint j = 0u; j < L; ++j) {
    float y = (IN0[base + j] - mean) * rstd * IN1[vkp_scale_index(j)];
#ifdef HAS_BIAS
    y += IN2[vkp_bias_index(j)];
#endif
    STORE(base + j, y);
  }
}
