// SPDX-License-Identifier: Apache-2.0
// A fused chain of elementwise ops: the generated epilogue computes the whole
// expression for output element o (the accumulator argument is unused).
// Generator provides: TOTAL, STORE(o, v), vkp_epilogue.
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  STORE(o, 0.0);
}
