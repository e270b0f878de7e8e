// SPDX-License-Identifier: Apache-2.0
// det: one invocation per [M, M] matrix, LU factorisation with partial
// pivoting in float in a private copy (M is at most 16: the generator
// refuses larger matrices); a zero pivot column gives 0, as "ref".
// Generator provides: TOTAL (matrices), M, LD0 = x, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  float a[M * M];
  for (uint i = 0u; i < M * M; ++i) a[i] = float(LD0(o * M * M + i));
  float det = 1.0;
  for (uint c = 0u; c < M; ++c) {
    uint p = c;
    for (uint r = c + 1u; r < M; ++r)
      if (abs(a[r * M + c]) > abs(a[p * M + c])) p = r;
    if (a[p * M + c] == 0.0) {
      det = 0.0;
      break;
    }
    if (p != c) {
      for (uint j = 0u; j < M; ++j) {
        float t = a[c * M + j];
        a[c * M + j] = a[p * M + j];
        a[p * M + j] = t;
      }
      det = -det;
    }
    det *= a[c * M + c];
    for (uint r = c + 1u; r < M; ++r) {
      float f = a[r * M + c] / a[c * M + c];
      for (uint j = c + 1u; j < M; ++j) a[r * M + j] -= f * a[c * M + j];
    }
  }
  STORE(o, ACC_T(det));
}
