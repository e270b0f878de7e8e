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

// Elementwise family helpers. GLSL leaves log(x <= 0) undefined and has no
// log1p/expm1: near 0 those are their Taylor series (log(1 + x) and
// exp(x) - 1 cancel there, and drivers' log is accurate in absolute, not
// relative, terms near 1); past |x| = 0.05 the plain forms lose nothing.
float vkp_log(float x) {
  if (x > 0.0) return log(x);
  return x == 0.0 ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7fc00000u);
}

float vkp_log1p(float x) {
  if (abs(x) < 0.05)
    return x * (1.0 + x * (-1.0 / 2.0 + x * (1.0 / 3.0 + x * (-1.0 / 4.0 +
               x * (1.0 / 5.0 + x * (-1.0 / 6.0))))));
  return log(1.0 + x);
}

float vkp_expm1(float x) {
  if (abs(x) < 0.05)
    return x * (1.0 + x * (1.0 / 2.0 + x * (1.0 / 6.0 + x * (1.0 / 24.0 +
               x * (1.0 / 120.0 + x * (1.0 / 720.0))))));
  return exp(x) - 1.0;
}

float vkp_softplus(float x) { return max(x, 0.0) + vkp_log1p(exp(-abs(x))); }

float vkp_sinh(float x) {
  float a = abs(x);
  if (a < 0.5) {
    float x2 = x * x;
    return x * (1.0 + x2 * (1.0 / 6.0 + x2 * (1.0 / 120.0 + x2 * (1.0 / 5040.0 +
               x2 * (1.0 / 362880.0)))));
  }
  float e = exp(a);
  return sign(x) * 0.5 * (e - 1.0 / e);
}

float vkp_asinh(float x) {
  float a = abs(x);
  if (a > 1e18) return sign(x) * (log(a) + 0.69314718055994531);
  return sign(x) * vkp_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
}

float vkp_acosh(float x) {
  if (!(x >= 1.0)) return uintBitsToFloat(0x7fc00000u);
  if (x > 1e18) return log(x) + 0.69314718055994531;
  float t = x - 1.0;
  return vkp_log1p(t + sqrt(t * (x + 1.0)));
}

float vkp_atanh(float x) {
  float a = abs(x);
  if (a >= 1.0) return a == 1.0 ? sign(x) * uintBitsToFloat(0x7f800000u)
                                : uintBitsToFloat(0x7fc00000u);
  return sign(x) * 0.5 * vkp_log1p(2.0 * a / (1.0 - a));
}

// asin and acos through atan: drivers may implement the built-ins with a
// short polynomial (Mesa's, within 2e-4); atan of a ratio is as good as atan.
float vkp_asin(float x) { return atan(x, sqrt((1.0 - x) * (1.0 + x))); }
float vkp_acos(float x) { return atan(sqrt((1.0 - x) * (1.0 + x)), x); }

// min/max propagating NaN from either side (GLSL's leave it undefined).
float vkp_min(float a, float b) { return isnan(a) || a < b ? a : b; }
float vkp_max(float a, float b) { return isnan(a) || a > b ? a : b; }

// fmod = 1: C's fmod (the sign of a); 0: NumPy's mod (the sign of b). The
// quotient a / b may round one off; the checks bring r back into range.
float vkp_mod(float a, float b, float fmod) {
  float m = abs(b), s = a < 0.0 ? -m : m;
  float r = a - b * trunc(a / b);
  if (r != 0.0 && (r < 0.0) != (a < 0.0)) r += s;
  if (abs(r) >= m) r -= s;
  if (fmod != 0.0 || r == 0.0 || (r < 0.0) == (b < 0.0)) return r;
  return r + b;
}

// Integer mod: C's remainder with fmod (the sign of a), Python's otherwise
// (the sign of b); unsigned: plain remainder. 64-bit forms with VKP_INT64.
int vkp_imod(int a, int b, float fmod_) {
  int r = a - (a / b) * b;
  return (fmod_ != 0.0 || r == 0 || (r < 0) == (b < 0)) ? r : r + b;
}
uint vkp_imod(uint a, uint b, float fmod_) { return a % b; }
#ifdef VKP_INT64
int64_t vkp_imod(int64_t a, int64_t b, float fmod_) {
  int64_t r = a - (a / b) * b;
  return (fmod_ != 0.0 || r == 0l || (r < 0l) == (b < 0l)) ? r : r + b;
}
uint64_t vkp_imod(uint64_t a, uint64_t b, float fmod_) { return a % b; }
#endif

// bit_shift's directions: a shift by the width or more gives 0 (GLSL leaves
// it undefined); the shifted-out bits of a narrower type (uint8 widened to
// uint) are dropped when it is stored.
uint vkp_shift_LEFT(uint a, uint b) { return b >= 32u ? 0u : a << b; }
uint vkp_shift_RIGHT(uint a, uint b) { return b >= 32u ? 0u : a >> b; }
#ifdef VKP_INT64
uint64_t vkp_shift_LEFT(uint64_t a, uint64_t b) { return b >= 64ul ? 0ul : a << b; }
uint64_t vkp_shift_RIGHT(uint64_t a, uint64_t b) { return b >= 64ul ? 0ul : a >> b; }
#endif

float vkp_exp(float x) { return exp(x); }

// float32 to bfloat16 bits, rounding to nearest even; a NaN stays a
// (quiet) NaN.
uint vkp_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

// x / y correctly rounded on every device. Vulkan allows 2.5 ulp for a
// float division and NVIDIA's driver multiplies by a reciprocal, which moves
// quotients that round to a tie (QuantizeLinear's x / scale) by one. The
// residual a - q * b is exact in one fma; one step with it lands on the
// nearest float. Infinite, NaN and zero quotients, and divisors whose
// reciprocal overflows, keep the plain quotient.
float vkp_div(float a, float b) {
  float q = a / b;
  float rb = 1.0 / b;
  if (q == 0.0 || isinf(q) || isnan(q) || isinf(rb)) return q;
  precise float r = fma(-q, b, a);
  precise float c = fma(r, rb, q);
  return c;
}

#ifdef VKP_FLOAT64
// float64 data computes in double; GLSL's exp and log take float only, so
// the double forms are written out: exp by k * ln2 + r reduction (ln2 split
// in two for an exact k * ln2_hi) and a degree-13 Taylor polynomial on
// |r| <= ln2 / 2; log by x = m * 2^e, m in [sqrt(1/2), sqrt(2)), and the
// atanh series of s = (m - 1) / (m + 1), |s| < 0.172. Both within a few
// ulp of double.
double vkp_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.8lf) return double(uintBitsToFloat(0x7f800000u));
  if (x < -745.2lf) return 0.0lf;
  double k = floor(x * 1.4426950408889634lf + 0.5lf);
  double r = (x - k * 6.93147180369123816490e-01lf) - k * 1.90821492927058770002e-10lf;
  double p = 1.0lf / 6227020800.0lf;
  p = p * r + 1.0lf / 479001600.0lf;
  p = p * r + 1.0lf / 39916800.0lf;
  p = p * r + 1.0lf / 3628800.0lf;
  p = p * r + 1.0lf / 362880.0lf;
  p = p * r + 1.0lf / 40320.0lf;
  p = p * r + 1.0lf / 5040.0lf;
  p = p * r + 1.0lf / 720.0lf;
  p = p * r + 1.0lf / 120.0lf;
  p = p * r + 1.0lf / 24.0lf;
  p = p * r + 1.0lf / 6.0lf;
  p = p * r + 0.5lf;
  p = p * r + 1.0lf;
  p = p * r + 1.0lf;
  return ldexp(p, int(k));
}

double vkp_log(double x) {
  if (isnan(x) || isinf(x) && x > 0.0lf) return x;
  if (!(x > 0.0lf))
    return double(x == 0.0lf ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7fc00000u));
  int e;
  double m = frexp(x, e);
  if (m < 0.70710678118654752lf) {
    m *= 2.0lf;
    e -= 1;
  }
  double s = (m - 1.0lf) / (m + 1.0lf), s2 = s * s;
  double q = 1.0lf / 23.0lf;
  q = q * s2 + 1.0lf / 21.0lf;
  q = q * s2 + 1.0lf / 19.0lf;
  q = q * s2 + 1.0lf / 17.0lf;
  q = q * s2 + 1.0lf / 15.0lf;
  q = q * s2 + 1.0lf / 13.0lf;
  q = q * s2 + 1.0lf / 11.0lf;
  q = q * s2 + 1.0lf / 9.0lf;
  q = q * s2 + 1.0lf / 7.0lf;
  q = q * s2 + 1.0lf / 5.0lf;
  q = q * s2 + 1.0lf / 3.0lf;
  q = q * s2 + 1.0lf;
  double de = double(e);
  return de * 6.93147180369123816490e-01lf + (2.0lf * s * q + de * 1.90821492927058770002e-10lf);
}

double vkp_div(double a, double b) { return a / b; }
double vkp_min(double a, double b) { return isnan(a) || a < b ? a : b; }
double vkp_max(double a, double b) { return isnan(a) || a > b ? a : b; }

double vkp_mod(double a, double b, float fmod) {
  double m = abs(b), s = a < 0.0lf ? -m : m;
  double r = a - b * trunc(a / b);
  if (r != 0.0lf && (r < 0.0lf) != (a < 0.0lf)) r += s;
  if (abs(r) >= m) r -= s;
  if (fmod != 0.0 || r == 0.0lf || (r < 0.0lf) == (b < 0.0lf)) return r;
  return r + b;
}
#endif

// pow on integer data (the row's integer form, any operand an integer):
// an integer base to an integer power by repeated squaring, wrapping like
// the integer product (a negative power truncates 1 / a^-e: 1, +-1 for a
// base of -1, else 0; ref refuses 0 to a negative power, a kernel cannot,
// so it gives 0); an integer base to a float power is pow in float,
// truncated; a float base to an integer power is vkp_pow.
#define VKP_IPOW(TB, TE, SIGNED)                                              \
  TB vkp_ipow(TB a, TE e) {                                                   \
    if (e < TE(0))                                                            \
      return a == TB(1) ? TB(1)                                               \
             : (SIGNED && a == TB(-1)) ? ((e & TE(1)) != TE(0) ? TB(-1) : TB(1)) \
                                       : TB(0);                               \
    TB r = TB(1);                                                             \
    for (TE k = e; k != TE(0); k >>= 1) {                                     \
      if ((k & TE(1)) != TE(0)) r *= a;                                       \
      a *= a;                                                                 \
    }                                                                         \
    return r;                                                                 \
  }
int vkp_ipow(int a, float e) { return int(vkp_pow(float(a), e)); }
uint vkp_ipow(uint a, float e) { return uint(vkp_pow(float(a), e)); }
VKP_IPOW(int, int, true)
VKP_IPOW(int, uint, true)
VKP_IPOW(uint, uint, false)
VKP_IPOW(uint, int, false)
float vkp_ipow(float a, int e) { return vkp_pow(a, float(e)); }
float vkp_ipow(float a, uint e) { return vkp_pow(a, float(e)); }
#ifdef VKP_INT64
VKP_IPOW(int64_t, int64_t, true)
VKP_IPOW(uint64_t, uint64_t, false)
int64_t vkp_ipow(int64_t a, float e) { return int64_t(vkp_pow(float(a), e)); }
uint64_t vkp_ipow(uint64_t a, float e) { return uint64_t(vkp_pow(float(a), e)); }
int64_t vkp_ipow(int64_t a, int e) { return vkp_ipow(a, int64_t(e)); }
int64_t vkp_ipow(int64_t a, uint e) { return vkp_ipow(a, int64_t(e)); }
int64_t vkp_ipow(int64_t a, uint64_t e) { return vkp_ipow(a, int64_t(e)); }
uint64_t vkp_ipow(uint64_t a, int e) { return vkp_ipow(a, uint64_t(e)); }
uint64_t vkp_ipow(uint64_t a, uint e) { return vkp_ipow(a, uint64_t(e)); }
uint64_t vkp_ipow(uint64_t a, int64_t e) {
  return e < 0l ? (a == 1ul ? 1ul : 0ul) : vkp_ipow(a, uint64_t(e));
}
int vkp_ipow(int a, int64_t e) { return int(vkp_ipow(int64_t(a), e)); }
int vkp_ipow(int a, uint64_t e) { return int(vkp_ipow(int64_t(a), e)); }
uint vkp_ipow(uint a, int64_t e) { return uint(vkp_ipow(uint64_t(a), e)); }
uint vkp_ipow(uint a, uint64_t e) { return uint(vkp_ipow(uint64_t(a), e)); }
float vkp_ipow(float a, int64_t e) { return vkp_pow(a, float(e)); }
float vkp_ipow(float a, uint64_t e) { return vkp_pow(a, float(e)); }
#endif

// clip on integer data: bounds that are operands compare exactly; an
// omitted bound is the attribute's float (+-FLT_MAX by default), compared
// in float.
#define VKP_ICLIP(T)                                                          \
  T vkp_iclip(T x, T lo, T hi) { return min(max(x, lo), hi); }                \
  T vkp_iclip(T x, float lo, T hi) { return min(float(x) < lo ? T(lo) : x, hi); } \
  T vkp_iclip(T x, T lo, float hi) { x = max(x, lo); return float(x) > hi ? T(hi) : x; } \
  T vkp_iclip(T x, float lo, float hi) {                                      \
    x = float(x) < lo ? T(lo) : x;                                            \
    return float(x) > hi ? T(hi) : x;                                         \
  }
VKP_ICLIP(int)
VKP_ICLIP(uint)
#ifdef VKP_INT64
VKP_ICLIP(int64_t)
VKP_ICLIP(uint64_t)
#endif
