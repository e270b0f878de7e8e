// SPDX-License-Identifier: Apache-2.0
// Softmax, GPU variant: one workgroup of WG invocations per (outer, inner)
// row, strided loops plus shared-memory reductions (workgroup_reduce.glsl).
// Same generator names as softmax.comp (LOG_SOFTMAX too); dispatched with
// ROWS workgroups.
void main() {
  uint r = gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float mx = uintBitsToFloat(0xff800000u);
  for (uint i = t; i < L; i += WG) mx = max(mx, IN0[base + i * INNER]);
  mx = vkp_wg_max(mx);
  float sum = 0.0;
  for (uint i = t; i < L; i += WG) sum += exp(IN0[base + i * INNER] - mx);
#ifdef LOG_SOFTMAX
  float lse = log(vkp_wg_sum(sum));  // subtracted after the max, as softmax.comp
  for (uint i = t; i < L; i += WG) {
    uint o = base + i * INNER;
    STORE(o, (IN0[o] - mx) - lse);
  }
#else
  float inv = 1.0 / vkp_wg_sum(sum);
  for (uint i = t; i < L; i += WG) {
    uint o = base + i * INNER;
    STORE(o, exp(IN0[o] - mx) * inv);
  }
#endif
}
