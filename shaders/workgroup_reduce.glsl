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

// The combination of every invocation's `v` by OP (a macro of two floats).
#define VKP_WG_COMBINE(name, OP)                             \
  float name(float v) {                                      \
    uint t = gl_LocalInvocationID.x;                         \
    vkp_red[t] = v;                                          \
    barrier();                                               \
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {               \
      if (t < s) vkp_red[t] = OP(vkp_red[t], vkp_red[t + s]); \
      barrier();                                             \
    }                                                        \
    float r = vkp_red[0];                                    \
    barrier();                                               \
    return r;                                                \
  }
#define VKP_WG_MUL(a, b) ((a) * (b))
// NaN-propagating (vkp_min / vkp_max of math.glsl), and products.
VKP_WG_COMBINE(vkp_wg_min_nan, vkp_min)
VKP_WG_COMBINE(vkp_wg_max_nan, vkp_max)
VKP_WG_COMBINE(vkp_wg_prod, VKP_WG_MUL)

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
