// SPDX-License-Identifier: Apache-2.0
// Workgroup-wide sum and max through shared memory, for the one-workgroup-
// per-row kernels (*_wg.comp). WG (a power of two, a multiple of the device's
// subgroup size, at most maxComputeWorkGroupInvocations) is set by the
// generator. Every invocation of the workgroup must call these (barriers).
shared float vkp_red[WG];

float vkp_wg_sum(float v) {
  uint t = gl_LocalInvocationID.x;
  vkp_red[t] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) vkp_red[t] += vkp_red[t + s];
    barrier();
  }
  float r = vkp_red[0];
  barrier();
  return r;
}

float vkp_wg_max(float v) {
  uint t = gl_LocalInvocationID.x;
  vkp_red[t] = v;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) vkp_red[t] = max(vkp_red[t], vkp_red[t + s]);
    barrier();
  }
  float r = vkp_red[0];
  barrier();
  return r;
}
