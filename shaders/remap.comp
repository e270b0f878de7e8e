// SPDX-License-Identifier: Apache-2.0
// Pad, tile, expand, depth_to_space, space_to_depth: output element o reads
// input element vkp_remap_src(o), or is FILL where that is -1 (pad's
// constant). Generator provides: TOTAL, FILL, vkp_remap_src, LD0,
// STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  int src = vkp_remap_src(o);
  STORE(o, src < 0 ? ACC_T(FILL) : LD0(src));
}
