// SPDX-License-Identifier: Apache-2.0
// Split-K, second pass: output element o of the [BATCH, M, N] product is the
// sum of its KSPLIT partial sums (slice s at LD0(s * TOTAL + o), written by
// gemm_blocked.comp / gemm_tiled.comp), added in slice order so the result
// does not depend on scheduling; then alpha, beta * C and the epilogue. A
// split convolution (conv_split.comp) is the same with N = its output pixels
// per channel and vkp_gemm_finish adding the bias.
// Generator provides: TOTAL, M, N, KSPLIT, LD0, vkp_gemm_finish, STORE.
void main() {
  uint o = gl_GlobalInvocationID.x;
  if (o >= TOTAL) return;
  float acc = 0.0;
  for (uint s = 0u; s < KSPLIT; ++s) acc += LD0(s * TOTAL + o);
  STORE(o, vkp_gemm_finish(acc, (o / N) % M, o % N));
}
