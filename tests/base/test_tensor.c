// SPDX-License-Identifier: Apache-2.0
// base/tensor.c: init/view/copy, sizes with overflow checks, DLPack views.
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/tensor.h"

Test(tensor, init_owns_zeroed_data, .timeout = 5) {
  int64_t shape[] = {2, 3, 5};
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, 3, shape));
  cr_assert(t.owns_data);
  cr_assert_eq(vkp_tensor_numel(&t), 30);
  cr_assert_eq(vkp_tensor_nbytes(&t), 120);
  for (int i = 0; i < 30; ++i) cr_assert_eq(((float *)t.data)[i], 0.0f);
  vkp_tensor_deinit(&t);
  cr_assert_null(t.data);
}

Test(tensor, copy_is_deep, .timeout = 5) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t shape[] = {7};
  vkp_tensor_t a, b;
  VKP_TEST_OK(vkp_tensor_init(&a, VKP_DTYPE_FLOAT32, 1, shape));
  vkp_test_fill_uniform(&rng, &a, -1, 1);
  VKP_TEST_OK(vkp_tensor_init_copy(&b, &a));
  cr_assert_neq(a.data, b.data);
  cr_assert_eq(memcmp(a.data, b.data, 28), 0);
  vkp_tensor_deinit(&a);
  vkp_tensor_deinit(&b);
}

Test(tensor, bad_shapes_are_errors, .timeout = 5) {
  vkp_tensor_t t;
  int64_t neg[] = {3, -1};
  vkp_status_t st = vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, 2, neg);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_RANGE);
  cr_assert(strstr(vkp_status_message(st), "[3, -1]"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  int64_t huge[] = {INT64_MAX / 2, 16};
  st = vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, 2, huge);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_RANGE);
  vkp_status_free(st);
  int64_t ok[] = {1};
  st = vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, VKP_MAX_RANK + 1, ok);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT);
  vkp_status_free(st);
  st = vkp_tensor_init(&t, (vkp_dtype_t)99, 1, ok);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT);
  vkp_status_free(st);
  size_t bytes;
  int64_t over[] = {INT64_MAX, INT64_MAX};
  cr_assert_not(vkp_shape_numel(2, over, 4, &bytes));
}

Test(tensor, dtype_table, .timeout = 5) {
  vkp_dtype_t d;
  for (int i = 0; i < VKP_DTYPE_COUNT; ++i) {
    cr_assert(vkp_dtype_parse(vkp_dtype_name((vkp_dtype_t)i), &d));
    cr_assert_eq(d, (vkp_dtype_t)i);
    cr_assert_gt(vkp_dtype_size(d), 0);
  }
  cr_assert_not(vkp_dtype_parse("complex64", &d));
  cr_assert_eq(vkp_dtype_size(VKP_DTYPE_COUNT), 0);
}

Test(tensor, dlpack_views_share_memory, .timeout = 5) {
  int64_t shape[] = {4, 3};
  vkp_tensor_t t, back;
  VKP_TEST_OK(vkp_tensor_init(&t, VKP_DTYPE_INT64, 2, shape));
  DLTensor dl;
  VKP_TEST_OK(vkp_tensor_to_dlpack(&t, &dl));
  cr_assert_eq(dl.data, t.data);
  cr_assert_eq(dl.ndim, 2);
  cr_assert_eq(dl.dtype.code, kDLInt);
  cr_assert_eq(dl.dtype.bits, 64);
  VKP_TEST_OK(vkp_tensor_from_dlpack(&dl, &back));
  cr_assert_eq(back.data, t.data);
  cr_assert_not(back.owns_data);
  cr_assert_eq(back.shape[1], 3);
  vkp_tensor_deinit(&back);
  vkp_tensor_deinit(&t);
}

Test(tensor, dlpack_refuses_what_it_cannot_view, .timeout = 5) {
  float data[12];
  int64_t shape[] = {3, 4}, strides[] = {1, 3};  // column-major
  DLTensor dl = {.data = data, .device = {kDLCPU, 0}, .ndim = 2,
                 .dtype = {kDLFloat, 32, 1}, .shape = shape, .strides = strides};
  vkp_tensor_t t;
  vkp_status_t st = vkp_tensor_from_dlpack(&dl, &t);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNSUPPORTED);
  cr_assert(strstr(vkp_status_message(st), "row-major"));
  vkp_status_free(st);
  int64_t compact[] = {4, 1};
  dl.strides = compact;
  dl.byte_offset = 4;
  VKP_TEST_OK(vkp_tensor_from_dlpack(&dl, &t));
  cr_assert_eq(t.data, (char *)data + 4);
  vkp_tensor_deinit(&t);
  dl.device.device_type = kDLCUDA;
  st = vkp_tensor_from_dlpack(&dl, &t);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNSUPPORTED);
  vkp_status_free(st);
  dl.device.device_type = kDLCPU;
  dl.dtype.code = kDLComplex;
  dl.dtype.bits = 64;
  st = vkp_tensor_from_dlpack(&dl, &t);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNSUPPORTED);
  vkp_status_free(st);
}
