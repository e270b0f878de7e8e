// SPDX-License-Identifier: Apache-2.0
// Hardmax, GPU variant: one workgroup of WG invocations per row; each finds
// the first maximum of its strided elements, a shared-memory tree keeps the
// first of those (NaN counts as the maximum). Same generator names as
// hardmax.comp; dispatched with ROWS workgroups.
shared float vkp_hm_value[WG];
shared uint vkp_hm_index[WG];

// Whether (v, i) comes before (bv, bi) as the hardmax's pick.
bool vkp_hm_before(float v, uint i, float bv, uint bi) {
  if (isnan(v) != isnan(bv)) return isnan(v);
  if (!isnan(v) && v != bv) return v > bv;
  return i < bi;
}

void main() {
  uint r = gl_WorkGroupID.x;
  if (r >= ROWS) return;  // uniform in the workgroup: no barrier skipped
  uint t = gl_LocalInvocationID.x;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float bv = uintBitsToFloat(0xff800000u);
  uint best = 0xffffffffu;
  for (uint i = t; i < L; i += WG) {
    float v = IN0[base + i * INNER];
    if (vkp_hm_before(v, i, bv, best)) {
      bv = v;
      best = i;
    }
  }
  vkp_hm_value[t] = bv;
  vkp_hm_index[t] = best;
  barrier();
  for (uint s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s && vkp_hm_before(vkp_hm_value[t + s], vkp_hm_index[t + s], vkp_hm_value[t],
                               vkp_hm_index[t])) {
      vkp_hm_value[t] = vkp_hm_value[t + s];
      vkp_hm_index[t] = vkp_hm_index[t + s];
    }
    barrier();
  }
  best = vkp_hm_index[0];
  for (uint i = t; i < L; i += WG) STORE(base + i * INNER, i == best ? 1.0 : 0.0);
}
