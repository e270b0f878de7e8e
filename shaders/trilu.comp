// SPDX-License-Identifier: Apache-2.0
// The upper (UPPER 1) or lower triangle of the last two dims (ROWS x COLS)
// on and above / below diagonal K; the rest 0. Generator provides: TOTAL,
// ROWS, COLS, UPPER, K, IN0, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  int c = int(o % COLS), r = int((o / COLS) % ROWS);
  bool keep = UPPER != 0 ? c - r >= K : c - r <= K;
  STORE(o, keep ? LD0(o) : ACC_T(0));
}
