// SPDX-License-Identifier: Apache-2.0
// eye_like: 1 where column - row == K, 0 elsewhere, in the output's type.
// Generator provides: TOTAL, COLS, K, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  int c = int(o % COLS), r = int(o / COLS);
  STORE(o, ACC_T(c - r == K ? 1 : 0));
}
