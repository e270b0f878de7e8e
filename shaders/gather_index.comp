// SPDX-License-Identifier: Apache-2.0
// gather by runtime indices: output element o = (outer, j, inner) reads
// IN0 element (outer, index j, inner) of [OUTER, DIM, INNER]. IN1 holds the
// NIDX indices as 32-bit words: int32 one each, int64 two each (IDX64, low
// word first). An index outside [-DIM, DIM) reads 0: the device has no
// channel to report it (the host targets stop with an error instead).
// Generator provides: TOTAL, DIM, NIDX, INNER, IDX64, IN0, IN1, STORE(o, v).
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  uint inner = o % INNER;
  uint j = (o / INNER) % NIDX;
  uint outer = o / (INNER * NIDX);
#if IDX64
  uint lo = IN1[2u * j], hi = IN1[2u * j + 1u];
  bool ok = (hi == 0u && lo < DIM) || (hi == 0xffffffffu && DIM > 0u && lo >= 0u - DIM);
#else
  uint lo = IN1[j];
  bool ok = int(lo) >= -int(DIM) && int(lo) < int(DIM);
#endif
  uint k = int(lo) < 0 ? lo + DIM : lo;
  STORE(o, ok ? LD0((outer * DIM + k) * INNER + inner) : ACC_T(0));
}
