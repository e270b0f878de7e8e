// SPDX-License-Identifier: Apache-2.0
// One input of a concatenation: input element i goes to output element
// vkp_concat_dst(i), copied as stored (any dtype). A concat is one such
// dispatch per input. Generator provides: TOTAL (the input's element
// count), vkp_concat_dst, RAW0, OUT.
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= TOTAL) return;
  OUT[vkp_concat_dst(i)] = RAW0[i];
}
