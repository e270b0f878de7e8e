// SPDX-License-Identifier: Apache-2.0
// Workgroup-wide sum, max, min and product, for the one-workgroup-per-row
// kernels (*_wg.comp). WG (a power of two, a multiple of the device's
// subgroup size, at most maxComputeWorkGroupInvocations) is set by the
// generator. Every invocation of the workgroup must call these (barriers).
//
// With VKP_SUBGROUP (the device has subgroup arithmetic in compute shaders;
// the generator enables GL_KHR_shader_subgroup_arithmetic), each
// subgroup reduces in registers and one value per subgroup goes through
// shared memory: two barriers, where the tree below takes 2 + log2(WG).
shared float vkp_red[WG];

#ifdef VKP_SUBGROUP
// Subgroup partials in subgroup order, combined by every invocation in the
// same order (so every invocation returns the same value).
#define VKP_WG_PARTIALS(name, SG_OP, OP)                         \
  float name(float v) {                                          \
    float s = SG_OP(v);                                          \
    if (subgroupElect()) vkp_red[gl_SubgroupID] = s;             \
    barrier();                                                   \
    float r = vkp_red[0];                                        \
    for (uint i = 1u; i < gl_NumSubgroups; ++i) r = OP(r, vkp_red[i]); \
    barrier();                                                   \
    return r;                                                    \
  }
#define VKP_WG_ADD(a, b) ((a) + (b))
#define VKP_WG_MUL(a, b) ((a) * (b))
VKP_WG_PARTIALS(vkp_wg_sum, subgroupAdd, VKP_WG_ADD)
VKP_WG_PARTIALS(vkp_wg_max, subgroupMax, max)
VKP_WG_PARTIALS(vkp_wg_prod, subgroupMul, VKP_WG_MUL)
VKP_WG_PARTIALS(vkp_wg_min, subgroupMin, min)
// NaN-propagating min / max (vkp_min / vkp_max of math.glsl): subgroupMin
// and subgroupMax may drop a NaN, so whether any invocation holds one is
// reduced beside them (as a max of 0/1 flags).
float vkp_wg_min_nan(float v) {
  float any_nan = vkp_wg_max(isnan(v) ? 1.0 : 0.0);
  float r = vkp_wg_min(isnan(v) ? uintBitsToFloat(0x7f800000u) : v);
  return any_nan > 0.0 ? uintBitsToFloat(0x7fc00000u) : r;
}
float vkp_wg_max_nan(float v) {
  float any_nan = vkp_wg_max(isnan(v) ? 1.0 : 0.0);
  float r = vkp_wg_max(isnan(v) ? uintBitsToFloat(0xff800000u) : v);
  return any_nan > 0.0 ? uintBitsToFloat(0x7fc00000u) : r;
}
#else
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
#endif
