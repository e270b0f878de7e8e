// SPDX-License-Identifier: Apache-2.0
// gather_elements and gather_nd: output element o reads IN0 element
// vkp_gather_src(o), or 0 where that is -1 (an index out of range: the
// device has no channel to report it; the host targets stop with an error
// instead). IN1 holds the indices as 32-bit words (int64: two, low first),
// read through vkp_index. Generator provides: TOTAL, vkp_gather_src, IN0,
// STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  int src = vkp_gather_src(o);
  STORE(o, src < 0 ? ACC_T(0) : LD0(src));
}
