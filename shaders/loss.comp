// SPDX-License-Identifier: Apache-2.0
// negative_log_likelihood_loss and softmax_cross_entropy_loss (SOFTMAX):
// X is [N, C, D] (D: the positions after the class axis), the labels IN1
// one per position as 32-bit words (int64: two, LABEL64), the optional
// class weights IN2 (HAS_WEIGHT). Per position: -weight[label] *
// (X[n, label, d] - shift), where shift is 0, or log(sum(exp(X[n, :, d])))
// with SOFTMAX; a label equal to IGNORE_INDEX (when defined) contributes 0
// with weight 0. A label outside [0, C) gives NaN: the device has no
// channel to report it (the host targets stop with an error).
// Dispatches: LOG_PROB (softmax's second output, log_softmax(X): one
// invocation per element of X); REDUCE_NONE (one invocation per position);
// otherwise one invocation sums every position (REDUCE_MEAN: over the sum
// of the weights). Generator provides: C, D, POSITIONS, XTOTAL, LABEL64,
// SOFTMAX, HAS_WEIGHT, IGNORE_INDEX, LOG_PROB, REDUCE_NONE, REDUCE_MEAN,
// IN0..IN2, STORE(o, v).
int vkp_label(uint j) {
#if LABEL64
  uint lo = IN1[2u * j], hi = IN1[2u * j + 1u];
  bool fits = (hi == 0u && lo < 0x80000000u) || (hi == 0xffffffffu && lo >= 0x80000000u);
  return fits ? int(lo) : (-2147483647 - 1);
#else
  return int(IN1[j]);
#endif
}

// X[o] - shift for the position whose class 0 is at `base`, as
// (X[o] - max) - log(sum(exp(X - max))): max + log(sum) would round away up
// to half an ulp of a large max.
float vkp_shifted(uint base, uint o) {
#if SOFTMAX
  float mx = uintBitsToFloat(0xff800000u);
  for (uint c = 0u; c < C; ++c) mx = max(mx, IN0[base + c * D]);
  float s = 0.0;
  for (uint c = 0u; c < C; ++c) s += exp(IN0[base + c * D] - mx);
  return (IN0[o] - mx) - log(s);
#else
  return IN0[o];
#endif
}

void vkp_loss(uint p, out float loss, out float weight) {
  uint base = (p / D) * C * D + p % D;
  int label = vkp_label(p);
  loss = 0.0;
  weight = 0.0;
#ifdef IGNORE_INDEX
  if (label == IGNORE_INDEX) return;
#endif
  if (label < 0 || label >= int(C)) {
    loss = uintBitsToFloat(0x7fc00000u);
    weight = 1.0;
    return;
  }
#if HAS_WEIGHT
  weight = IN2[label];
#else
  weight = 1.0;
#endif
  loss = -weight * vkp_shifted(base, base + uint(label) * D);
}

void main() {
  uint o = gl_GlobalInvocationID.x;
#if LOG_PROB
  if (o >= XTOTAL) return;
  STORE(o, vkp_shifted((o / (C * D)) * C * D + o % D, o));
#elif REDUCE_NONE
  if (o >= POSITIONS) return;
  float loss, weight;
  vkp_loss(o, loss, weight);
  STORE(o, loss);
#else
  if (o > 0u) return;
  float total = 0.0, weights = 0.0;
  for (uint p = 0u; p < POSITIONS; ++p) {
    float loss, weight;
    vkp_loss(p, loss, weight);
    total += loss;
    weights += weight;
  }
#if REDUCE_MEAN
  STORE(0u, total / weights);
#else
  STORE(0u, total);
#endif
#endif
}
