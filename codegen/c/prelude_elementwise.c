// SPDX-License-Identifier: Apache-2.0
// Elementwise helpers the expressions of codegen/c/ops.c call, pasted into
// every generated unit after prelude.c. Each has the reference's semantics
// (graph/op_elementwise.c, graph/op_logic.c) where C's own operators differ
// or are undefined. Helpers for every C type are named vkp_<op>_<type>, so
// one expression serves all dtypes ("vkp_max_%T(%0, %1)").

static inline float vkp_softplusf(float x) {
  return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));  // no overflow, no loss
}
static inline float vkp_mishf(float x) { return x * tanhf(vkp_softplusf(x)); }

// min/max propagate NaN from either side (NumPy's minimum/maximum).
static inline float vkp_min_float(float a, float b) { return a != a || a < b ? a : b; }
static inline float vkp_max_float(float a, float b) { return a != a || a > b ? a : b; }
static inline float vkp_sign_float(float x) {
  return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x;  // 0 and NaN stay
}
// fmod: C's fmod, the sign of a; otherwise NumPy's mod, the sign of b.
static inline float vkp_mod_float(float a, float b, float fmod) {
  float r = fmodf(a, b);
  if (fmod != 0.0f) return r;
  if (r != 0.0f) return (r < 0.0f) != (b < 0.0f) ? r + b : r;
  return copysignf(0.0f, b);
}

// Integer helpers. A zero divisor gives 0 here (ref reports it); MIN % -1
// is 0 (C leaves it undefined); shifts by the width or more give 0.
#define VKP_INT_COMMON(T)                                                  \
  static inline T vkp_min_##T(T a, T b) { return a < b ? a : b; }          \
  static inline T vkp_max_##T(T a, T b) { return a > b ? a : b; }
#define VKP_INT_SIGNED(T)                                                  \
  VKP_INT_COMMON(T)                                                        \
  static inline T vkp_sign_##T(T x) { return (T)((x > 0) - (x < 0)); }     \
  static inline T vkp_mod_##T(T a, T b, float fmod) {                      \
    if (b == 0 || b == -1) return 0;                                       \
    T r = (T)(a % b);                                                      \
    if (fmod != 0.0f || r == 0 || (r < 0) == (b < 0)) return r;            \
    return (T)(r + b);                                                     \
  }
#define VKP_INT_UNSIGNED(T)                                                \
  VKP_INT_COMMON(T)                                                        \
  static inline T vkp_sign_##T(T x) { return (T)(x != 0); }                \
  static inline T vkp_mod_##T(T a, T b, float fmod) {                      \
    (void)fmod;                                                            \
    return b == 0 ? 0 : (T)(a % b);                                        \
  }                                                                        \
  static inline T vkp_shift_LEFT_##T(T x, T by) {                          \
    return (uint64_t)by >= sizeof(T) * 8 ? 0 : (T)((uint64_t)x << by);               \
  }                                                                        \
  static inline T vkp_shift_RIGHT_##T(T x, T by) {                         \
    return (uint64_t)by >= sizeof(T) * 8 ? 0 : (T)(x >> by);                       \
  }
VKP_INT_SIGNED(int8_t)
VKP_INT_SIGNED(int16_t)
VKP_INT_SIGNED(int32_t)
VKP_INT_SIGNED(int64_t)
VKP_INT_UNSIGNED(uint8_t)
VKP_INT_UNSIGNED(uint16_t)
VKP_INT_UNSIGNED(uint32_t)
VKP_INT_UNSIGNED(uint64_t)

// Integer clip of the types a double holds exactly: bounds (a tensor's
// element, or a float attribute) rounded inward and saturated to T's range
// (a NaN bound is no bound: fmin/fmax drop it).
#define VKP_INT_CLIP(T, LO, HI)                                            \
  static inline T vkp_clip_##T(T x, double lo, double hi) {                \
    lo = fmin(fmax(ceil(lo), (double)(LO)), (double)(HI));                 \
    hi = fmax(fmin(floor(hi), (double)(HI)), (double)(LO));                \
    double y = (double)x < lo ? lo : (double)x;                            \
    return (T)(y > hi ? hi : y);                                           \
  }
VKP_INT_CLIP(int8_t, INT8_MIN, INT8_MAX)
VKP_INT_CLIP(int16_t, INT16_MIN, INT16_MAX)
VKP_INT_CLIP(int32_t, INT32_MIN, INT32_MAX)
VKP_INT_CLIP(uint8_t, 0, UINT8_MAX)
VKP_INT_CLIP(uint16_t, 0, UINT16_MAX)
VKP_INT_CLIP(uint32_t, 0, UINT32_MAX)
