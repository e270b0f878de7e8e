// SPDX-License-Identifier: Apache-2.0
//
// One element of any dtype, read or written through double or int64: the
// conversions every generic kernel (the reference interpreter, constant
// folding, tensor files) shares.
//
//   double x = vkp__scalar_get_f(t->dtype, t->data, i);
//   vkp__scalar_set_f(out->dtype, out->data, i, x * 2.0);
//
// Conversions follow C and NumPy where those agree, and are defined where C
// leaves them undefined: a float to an integer truncates toward zero after
// NaN becomes 0 and out-of-range values saturate to the int64 range; an
// integer to a narrower integer keeps the low bits (two's complement wrap);
// anything to bool is "not zero". float16 and bfloat16 round to nearest even.
// All functions are pure and thread-safe.
#ifndef VKPIPE_BASE_SCALAR_H_
#define VKPIPE_BASE_SCALAR_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/tensor.h"

// IEEE binary16 and bfloat16 from and to float.
float vkp__half_to_float(uint16_t h);
uint16_t vkp__float_to_half(float f);
float vkp__bfloat_to_float(uint16_t b);
uint16_t vkp__float_to_bfloat(float f);

// Element `i` of an array of `dtype` at `base`, as double / int64 (uint64
// values above INT64_MAX come back wrapped: the bits are kept).
double vkp__scalar_get_f(vkp_dtype_t dtype, const void *base, size_t i);
int64_t vkp__scalar_get_i(vkp_dtype_t dtype, const void *base, size_t i);
// uint64 element `i` exactly (other dtypes: get_i's value as uint64).
uint64_t vkp__scalar_get_u(vkp_dtype_t dtype, const void *base, size_t i);

// Stores `v` converted to `dtype` at element `i`.
void vkp__scalar_set_f(vkp_dtype_t dtype, void *base, size_t i, double v);
void vkp__scalar_set_i(vkp_dtype_t dtype, void *base, size_t i, int64_t v);

// The int64 a double truncates to (NaN -> 0, saturating).
int64_t vkp__f64_to_i64(double v);

#endif  // VKPIPE_BASE_SCALAR_H_
