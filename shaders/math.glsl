// SPDX-License-Identifier: Apache-2.0
// Helpers every generated kernel gets (unused ones are optimised away).
// GLSL has no erf, and tanh/pow built-ins are imprecise or undefined for the
// inputs an ML graph feeds them, so these are written out.

// tanh without overflow: odd series near 0 (where 1 - exp(-2x) cancels),
// exp(-2|x|) elsewhere.
float vkp_tanh(float x) {
  float a = abs(x);
  if (a < 0.4) {
    float x2 = x * x;
    return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 +
               x2 * (62.0 / 2835.0)))));
  }
  float t = exp(-2.0 * a);
  return sign(x) * (1.0 - t) / (1.0 + t);
}

// erf: Maclaurin series below 0.5, Abramowitz & Stegun 7.1.26 above.
float vkp_erf(float x) {
  float a = abs(x);
  if (a < 0.5) {
    float x2 = x * x;
    return 1.1283791671 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (1.0 / 10.0 +
           x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 + x2 * (-1.0 / 1320.0))))));
  }
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 +
               t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-a * a));
}

float vkp_sigmoid(float x) {
  // exp of a non-positive argument never overflows.
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}

// pow with C semantics for negative bases and integral exponents.
float vkp_pow(float a, float b) {
  if (b == 0.0) return 1.0;
  if (a == 0.0) return b > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  float r = exp2(b * log2(abs(a)));
  if (a > 0.0) return r;
  if (floor(b) != b) return uintBitsToFloat(0x7fc00000u);
  return mod(b, 2.0) == 1.0 ? -r : r;
}

float vkp_gelu_none(float x) { return 0.5 * x * (1.0 + vkp_erf(x * 0.70710678118654752)); }

float vkp_gelu_tanh(float x) {
  return 0.5 * x * (1.0 + vkp_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
}
