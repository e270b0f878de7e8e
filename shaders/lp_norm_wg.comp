// SPDX-License-Identifier: Apache-2.0
// Lp normalisation, GPU variant: one workgroup of WG invocations per row and
// a shared-memory sum. Same generator names as lp_norm.comp; dispatched
// with ROWS workgroups.
void main() {
  uint r = gl_WorkGroupID.x;
  if (r >= ROWS) return;  // uniform in the workgroup: no barrier skipped
  uint t = gl_LocalInvocationID.x;
  uint base = (r / INNER) * L * INNER + r % INNER;
  float part = 0.0;
  for (uint i = t; i < L; i += WG) {
    float v = IN0[base + i * INNER];
    part += P == 1u ? abs(v) : v * v;
  }
  float norm = vkp_wg_sum(part);
  if (P != 1u) norm = sqrt(norm);
  float inv = norm == 0.0 ? 0.0 : 1.0 / norm;
  for (uint i = t; i < L; i += WG) {
    uint o = base + i * INNER;
    STORE(o, IN0[o] * inv);
  }
}
