// ---------------------------------------------------------------------------
// Quantization (codegen/c/emit_quant.c): the helpers the generated loops of
// quantize_linear, dynamic_quantize_linear, qlinear_matmul and
// qlinear_conv share.

// q (already rounded) clamped to [lo, hi]; NaN becomes 0, as in ref.
static inline float vkp_q_sat(float q, float lo, float hi) {
  return q != q ? 0.0f : q < lo ? lo : q > hi ? hi : q;
}

// Requantization of an int32 accumulator: round(acc * mult) + zp, clamped;
// the product in double as ref computes it.
static inline float vkp_q_requant(int32_t acc, float mult, float zp, float lo, float hi) {
  double y = nearbyint((double)acc * (double)mult) + (double)zp;
  return y != y ? 0.0f : y < lo ? lo : y > hi ? hi : (float)y;
}
