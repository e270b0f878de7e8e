// SPDX-License-Identifier: Apache-2.0
// Fused attention, one invocation per query row (batch b, row i), softmax
// online (running maximum and sum; the weighted sum of V rescaled whenever
// the maximum grows), so the scores are never stored. Generator provides:
// ROWS (= batches * LQ), LQ, LK, D, DV, SCALE, IN0 = Q [.., LQ, D],
// IN1 = Kt [.., D, LK], IN2 = V [.., LK, DV], vkp_q_batch / vkp_k_batch /
// vkp_v_batch (element offset of batch b's matrix); with a mask: MASK (its
// binding), vkp_m_batch, M_RS, M_CS (row and column strides over
// [LQ, LK]); with a condition: COND, vkp_c_batch, C_RS, C_CS, FILL,
// FILL_WHERE (bool); STORE(o, v).
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  uint b = r / LQ, i = r % LQ;
  uint qo = vkp_q_batch(b) + i * D, ko = vkp_k_batch(b), vo = vkp_v_batch(b);
  float acc[DV];
  for (uint c = 0u; c < DV; ++c) acc[c] = 0.0;
  // The lowest finite float, not -inf: a score of -inf then weighs 0 rather
  // than making exp(-inf - -inf) a NaN; a row of equal lowest scores still
  // averages V, as softmax does.
  float mx = -3.40282347e38, sum = 0.0;
  for (uint j = 0u; j < LK; ++j) {
    float s = 0.0;
    for (uint k = 0u; k < D; ++k) s += IN0[qo + k] * IN1[ko + k * LK + j];
    s *= SCALE;
#ifdef COND
    if ((COND[vkp_c_batch(b) + i * C_RS + j * C_CS] != 0.0) == FILL_WHERE) s = FILL;
#endif
#ifdef MASK
    s += MASK[vkp_m_batch(b) + i * M_RS + j * M_CS];
#endif
    if (s > mx) {
      float f = exp(mx - s);
      sum *= f;
      for (uint c = 0u; c < DV; ++c) acc[c] *= f;
      mx = s;
    }
    float p = exp(s - mx);
    sum += p;
    for (uint c = 0u; c < DV; ++c) acc[c] += p * IN2[vo + j * DV + c];
  }
  float inv = 1.0 / sum;
  for (uint c = 0u; c < DV; ++c) STORE(r * DV + c, acc[c] * inv);
}
