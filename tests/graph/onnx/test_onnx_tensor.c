// SPDX-License-Identifier: Apache-2.0
// graph/onnx_tensor.c: TensorProto storage forms and external data.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"

static double element(const vkp_tensor_t *t, size_t i) {
  switch (t->dtype) {
    case VKP_DTYPE_FLOAT32: return ((const float *)t->data)[i];
    case VKP_DTYPE_INT32: return ((const int32_t *)t->data)[i];
    case VKP_DTYPE_INT64: return (double)((const int64_t *)t->data)[i];
    default: return -1e30;
  }
}

// gen_models.py writes v_i = i * 0.5 - 1 (ints: 2 * v_i) in each form.
Test(onnx_tensor, storage_forms_decode, .timeout = 60) {
  static const struct {
    const char *file;
    vkp_dtype_t dtype;
    double scale;
  } cases[] = {
      {"tensor_float_data.pb", VKP_DTYPE_FLOAT32, 1},
      {"tensor_raw_float.pb", VKP_DTYPE_FLOAT32, 1},
      {"tensor_int64_data.pb", VKP_DTYPE_INT64, 2},
      {"tensor_int32_data.pb", VKP_DTYPE_INT32, 2},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    char path[1024];
    onnx_model_path(path, sizeof path, cases[c].file);
    vkp_tensor_t t;
    char *name = NULL;
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &t, &name));
    cr_assert_str_eq(name, "t");
    vkp_onnx_string_free(name);
    cr_assert_eq(t.dtype, cases[c].dtype, "%s", cases[c].file);
    cr_assert_eq(t.rank, 2);
    cr_assert(t.shape[0] == 2 && t.shape[1] == 3);
    for (size_t i = 0; i < 6; ++i)
      cr_assert_float_eq(element(&t, i), cases[c].scale * (i * 0.5 - 1.0), 1e-9,
                         "%s[%zu]", cases[c].file, i);
    vkp_tensor_deinit(&t);
  }
  // float16 travels as bit patterns in int32_data.
  char path[1024];
  onnx_model_path(path, sizeof path, "tensor_float16_bits.pb");
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &t, NULL));
  cr_assert_eq(t.dtype, VKP_DTYPE_FLOAT16);
  static const uint16_t want[6] = {0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x3e00};
  cr_assert(memcmp(t.data, want, sizeof want) == 0);
  vkp_tensor_deinit(&t);
  onnx_model_path(path, sizeof path, "tensor_scalar.pb");
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &t, NULL));
  cr_assert_eq(t.rank, 0);
  cr_assert_float_eq(((float *)t.data)[0], 2.5f, 0);
  vkp_tensor_deinit(&t);
  onnx_model_path(path, sizeof path, "tensor_double.pb");
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &t, NULL));
  cr_assert_eq(t.dtype, VKP_DTYPE_FLOAT64);
  for (int i = 0; i < 6; ++i) cr_assert_eq(((double *)t.data)[i], i * 0.5 - 1.0);
  vkp_tensor_deinit(&t);
  onnx_model_path(path, sizeof path, "tensor_bool.pb");
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &t, NULL));
  cr_assert_eq(t.dtype, VKP_DTYPE_BOOL);
  for (int i = 0; i < 6; ++i) cr_assert_eq(((uint8_t *)t.data)[i], i * 0.5 - 1.0 > 0);
  vkp_tensor_deinit(&t);
}

Test(onnx_tensor, bad_tensors_are_refused, .timeout = 60) {
  char path[1024];
  vkp_tensor_t t;
  onnx_model_path(path, sizeof path, "tensor_string.pb");
  vkp_status_t st = vkp_onnx_tensor_load(path, &t, NULL);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  vkp_status_free(st);
  onnx_model_path(path, sizeof path, "tensor_short.pb");
  st = vkp_onnx_tensor_load(path, &t, NULL);
  cr_assert(st && strstr(vkp_status_message(st), "float_data has 3 entries"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  onnx_model_path(path, sizeof path, "cnn.onnx");  // a model, not a tensor
  st = vkp_onnx_tensor_load(path, &t, NULL);
  cr_assert_not_null(st);
  vkp_status_free(st);
}

// External data resolves next to the model (the escaping and missing cases
// are in test_onnx.c's malformed models).
Test(onnx_tensor, external_data_loads, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("external_ok.onnx");
  onnx_run_and_compare(g, "external_ok", 0, 0);
  vkp_graph_destroy(g);
}
