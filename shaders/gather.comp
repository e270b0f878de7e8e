// SPDX-License-Identifier: Apache-2.0
// Data movement (transpose, slice, copies): output element o reads input
// element vkp_gather_index(o). Generator provides: TOTAL, vkp_gather_index,
// LD0, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  STORE(o, LD0(vkp_gather_index(o)));
}
