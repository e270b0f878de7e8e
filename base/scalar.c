// SPDX-License-Identifier: Apache-2.0
#include "base/scalar.h"

#include <math.h>
#include <string.h>

float vkp__half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  float f;
  if (exp == 0)
    f = ldexpf((float)mant, -24);
  else if (exp == 31)
    f = mant ? NAN : INFINITY;
  else
    f = ldexpf((float)(mant | 0x400), (int)exp - 25);
  uint32_t bits;
  memcpy(&bits, &f, 4);
  bits |= sign;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t vkp__float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return (uint16_t)(sign | half);
}

float vkp__bfloat_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t vkp__float_to_bfloat(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);  // round to nearest even
  return (uint16_t)(x >> 16);
}

int64_t vkp__f64_to_i64(double v) {
  if (!(v == v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)v;
}

#define VKP__LOAD(T)                                        \
  T v;                                                      \
  memcpy(&v, (const unsigned char *)base + i * sizeof(T), sizeof v)

#define VKP__STORE(T, x)                                  \
  do {                                                    \
    T w = (T)(x);                                         \
    memcpy((unsigned char *)base + i * sizeof(T), &w, sizeof w); \
  } while (0)

double vkp__scalar_get_f(vkp_dtype_t dtype, const void *base, size_t i) {
  switch (dtype) {
    case VKP_DTYPE_FLOAT32: { VKP__LOAD(float); return v; }
    case VKP_DTYPE_FLOAT64: { VKP__LOAD(double); return v; }
    case VKP_DTYPE_FLOAT16: { VKP__LOAD(uint16_t); return vkp__half_to_float(v); }
    case VKP_DTYPE_BFLOAT16: { VKP__LOAD(uint16_t); return vkp__bfloat_to_float(v); }
    case VKP_DTYPE_UINT64: { VKP__LOAD(uint64_t); return (double)v; }
    default: return (double)vkp__scalar_get_i(dtype, base, i);
  }
}

int64_t vkp__scalar_get_i(vkp_dtype_t dtype, const void *base, size_t i) {
  switch (dtype) {
    case VKP_DTYPE_INT64: { VKP__LOAD(int64_t); return v; }
    case VKP_DTYPE_INT32: { VKP__LOAD(int32_t); return v; }
    case VKP_DTYPE_INT16: { VKP__LOAD(int16_t); return v; }
    case VKP_DTYPE_INT8: { VKP__LOAD(int8_t); return v; }
    case VKP_DTYPE_UINT64: { VKP__LOAD(uint64_t); return (int64_t)v; }
    case VKP_DTYPE_UINT32: { VKP__LOAD(uint32_t); return v; }
    case VKP_DTYPE_UINT16: { VKP__LOAD(uint16_t); return v; }
    case VKP_DTYPE_UINT8: { VKP__LOAD(uint8_t); return v; }
    case VKP_DTYPE_BOOL: { VKP__LOAD(uint8_t); return v != 0; }
    case VKP_DTYPE_FLOAT32: case VKP_DTYPE_FLOAT64: case VKP_DTYPE_FLOAT16:
    case VKP_DTYPE_BFLOAT16:
      return vkp__f64_to_i64(vkp__scalar_get_f(dtype, base, i));
    case VKP_DTYPE_COUNT: break;
  }
  return 0;
}

uint64_t vkp__scalar_get_u(vkp_dtype_t dtype, const void *base, size_t i) {
  if (dtype == VKP_DTYPE_UINT64) {
    VKP__LOAD(uint64_t);
    return v;
  }
  if (vkp_dtype_is_float(dtype)) {
    double d = vkp__scalar_get_f(dtype, base, i);
    if (d >= 18446744073709551615.0) return UINT64_MAX;
    if (d >= 9223372036854775808.0) return (uint64_t)d;
  }
  return (uint64_t)vkp__scalar_get_i(dtype, base, i);
}

void vkp__scalar_set_i(vkp_dtype_t dtype, void *base, size_t i, int64_t x) {
  uint64_t u = (uint64_t)x;
  switch (dtype) {
    case VKP_DTYPE_INT64: case VKP_DTYPE_UINT64: VKP__STORE(uint64_t, u); break;
    case VKP_DTYPE_INT32: case VKP_DTYPE_UINT32: VKP__STORE(uint32_t, u); break;
    case VKP_DTYPE_INT16: case VKP_DTYPE_UINT16: VKP__STORE(uint16_t, u); break;
    case VKP_DTYPE_INT8: case VKP_DTYPE_UINT8: VKP__STORE(uint8_t, u); break;
    case VKP_DTYPE_BOOL: VKP__STORE(uint8_t, x != 0); break;
    case VKP_DTYPE_FLOAT32: VKP__STORE(float, x); break;
    case VKP_DTYPE_FLOAT64: VKP__STORE(double, x); break;
    case VKP_DTYPE_FLOAT16: VKP__STORE(uint16_t, vkp__float_to_half((float)x)); break;
    case VKP_DTYPE_BFLOAT16: VKP__STORE(uint16_t, vkp__float_to_bfloat((float)x)); break;
    case VKP_DTYPE_COUNT: break;
  }
}

void vkp__scalar_set_f(vkp_dtype_t dtype, void *base, size_t i, double x) {
  switch (dtype) {
    case VKP_DTYPE_FLOAT32: VKP__STORE(float, x); break;
    case VKP_DTYPE_FLOAT64: VKP__STORE(double, x); break;
    case VKP_DTYPE_FLOAT16: VKP__STORE(uint16_t, vkp__float_to_half((float)x)); break;
    case VKP_DTYPE_BFLOAT16: VKP__STORE(uint16_t, vkp__float_to_bfloat((float)x)); break;
    case VKP_DTYPE_BOOL: VKP__STORE(uint8_t, x != 0); break;
    case VKP_DTYPE_UINT64:
      if (x >= 9223372036854775808.0 && x < 18446744073709551616.0) {
        VKP__STORE(uint64_t, (uint64_t)x);
        break;
      }
      vkp__scalar_set_i(dtype, base, i, vkp__f64_to_i64(x));
      break;
    default: vkp__scalar_set_i(dtype, base, i, vkp__f64_to_i64(x)); break;
  }
}
