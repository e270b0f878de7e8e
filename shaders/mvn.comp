// SPDX-License-Identifier: Apache-2.0
// Mean-variance normalisation over a set of axes: (x - mean) / (std + 1e-9),
// one row (the R elements sharing the kept coordinates) per invocation.
// Generator provides: TOTAL (rows), R, vkp_reduce_base(o),
// vkp_reduce_offset(r) (as reduce.comp), IN0 = x, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint base = vkp_reduce_base(o);
  float mean = 0.0;
  for (uint r = 0u; r < R; ++r) mean += IN0[base + vkp_reduce_offset(r)];
  mean /= float(R);
  float var = 0.0;
  for (uint r = 0u; r < R; ++r) {
    float d = IN0[base + vkp_reduce_offset(r)] - mean;
    var += d * d;
  }
  float inv = 1.0 / (sqrt(var / float(R)) + 1e-9);
  for (uint r = 0u; r < R; ++r) {
    uint at = base + vkp_reduce_offset(r);
    STORE(at, (IN0[at] - mean) * inv);
  }
}
