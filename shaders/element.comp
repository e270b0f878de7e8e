// SPDX-License-Identifier: Apache-2.0
// One invocation per output element, whose value a generated function
// computes: vkp_element(o). scatter_elements / scatter_nd (the data, then
// the updates landing on o folded in the reference's order), one_hot (off
// or on value), quantize_linear / dequantize_linear (per tensor, axis or
// block). Generator provides: TOTAL, vkp_element, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  STORE(o, vkp_element(o));
}
