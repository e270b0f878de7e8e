// SPDX-License-Identifier: Apache-2.0
// The generated kernels on the "vulkan" target (lavapipe in CI) against the
// "ref" target: every op and fused pattern of spirv_cases.c on fresh random
// inputs, relative error below 1e-4, with the validation layer and
// synchronization validation on (VKPIPE_VALIDATION=1 from ctest): any
// validation message fails the test. Both GEMM variants are exercised.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/scalar.h"
#include "runtime/vulkan/device.h"
#include "tests/codegen/spirv/spirv_cases.h"
#include "support/test_support.h"
#include "vkpipe/target.h"

#define RTOL 1e-4
#define ATOL 1e-5

// float inputs uniform in [lo, hi) (float16 rounded to it); integer and
// bool ones whole numbers in [lo, hi] (bool: non-zero is true).
static void fill_input(vkp_test_rng_t *rng, vkp_tensor_t *t, float lo, float hi) {
  if (t->dtype == VKP_DTYPE_FLOAT32) {
    vkp_test_fill_uniform(rng, t, lo, hi);
    return;
  }
  if (vkp_dtype_is_float(t->dtype)) {
    for (size_t i = 0; i < vkp_tensor_numel(t); ++i)
      vkp__scalar_set_f(t->dtype, t->data, i, vkp_test_rng_uniform(rng, lo, hi));
    return;
  }
  size_t n = vkp_tensor_numel(t);
  for (size_t i = 0; i < n; ++i) {
    double v = floor(vkp_test_rng_uniform(rng, lo, hi + 1.0f));
    v = v > hi ? hi : v;
    switch (t->dtype) {
      case VKP_DTYPE_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
      case VKP_DTYPE_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)v; break;
      case VKP_DTYPE_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
      case VKP_DTYPE_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)v; break;
      case VKP_DTYPE_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
      case VKP_DTYPE_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
      case VKP_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
      case VKP_DTYPE_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
      case VKP_DTYPE_BOOL: ((uint8_t *)t->data)[i] = v != 0.0; break;
      default: break;
    }
  }
}

// One registry (one Vulkan device) per test process while the device knobs
// the cases set stay the same: a device per case took the H200's driver
// longer than the cases themselves.
static vkp_registry_t *cached_reg;
static char cached_knobs[256];

static void drop_registry(void) {
  vkp_registry_destroy(cached_reg);
  cached_reg = NULL;
}

// Dropped after each test, inside the test's process: at exit (atexit) the
// NVIDIA driver's own teardown had already run, and every test crashed there.
TestSuite(spirv_kernels, .fini = drop_registry);

static vkp_registry_t *test_registry(void) {
  static const char *const knobs[] = {"VKPIPE_VK_FORCE_COPIES", "VKPIPE_VK_MAX_BINDING",
                                      "VKPIPE_VK_COOPMAT", "VKPIPE_DEVICE"};
  char now[256] = "";
  for (size_t i = 0; i < sizeof knobs / sizeof *knobs; ++i) {
    const char *v = getenv(knobs[i]);
    snprintf(now + strlen(now), sizeof now - strlen(now), "%s=%s;", knobs[i], v ? v : "");
  }
  if (cached_reg && strcmp(now, cached_knobs) == 0) return cached_reg;
  drop_registry();
  VKP_TEST_OK(vkp_registry_create_default(&cached_reg));
  snprintf(cached_knobs, sizeof cached_knobs, "%s", now);
  return cached_reg;
}

static void compare_case_with(const vkp_spirv_case_t *c,
                              const vkp_compile_options_t *options, double rtol,
                              double atol) {
  vkp_registry_t *reg = test_registry();
  const vkp_target_t *vulkan = vkp_registry_find(reg, "vulkan");
  if (!vulkan) {
    const char *why = vkp_registry_unavailable_reason(reg, "vulkan");
    char reason[256];
    snprintf(reason, sizeof reason, "%s", why ? why : "not registered");
    cr_skip_test("target 'vulkan' unavailable: %s", reason);
  }
  const vkp_target_t *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_test_rng_t rng;
  unsigned long long seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = c->build(&rng);
  cr_assert_not_null(g, "case %s does not build", c->name);
  vkp_tensor_t inputs[8] = {{0}}, want[4] = {{0}}, got[4] = {{0}};
  cr_assert(g->n_inputs <= 8 && g->n_outputs <= 4);
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&inputs[i], v->dtype, v->rank, v->shape));
    fill_input(&rng, &inputs[i], c->lo, c->hi);
  }
  uint64_t messages = vkp_vk_validation_message_count();
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, inputs, want));
  VKP_TEST_OK(vkp_target_run_graph(vulkan, g, options, inputs, got));
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    char msg[512];
    cr_assert(vkp_test_allclose(&got[i], &want[i], rtol, atol, msg, sizeof msg),
              "case %s output %d: %s (VKPIPE_TEST_SEED=%llu reproduces)", c->name,
              (int)i, msg, seed);
  }
  cr_assert_eq(vkp_vk_validation_message_count(), messages,
               "case %s: validation messages", c->name);
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    vkp_tensor_deinit(&want[i]);
    vkp_tensor_deinit(&got[i]);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) vkp_tensor_deinit(&inputs[i]);
  vkp_graph_destroy(g);
}

static void compare_case(const vkp_spirv_case_t *c) {
  compare_case_with(c, NULL, RTOL, ATOL);
}

ParameterizedTestParameters(spirv_kernels, vs_ref) {
  static int idx[512];
  for (int i = 0; i < vkp_spirv_case_count; ++i) idx[i] = i;
  return cr_make_param_array(int, idx, (size_t)vkp_spirv_case_count);
}

ParameterizedTest(int *i, spirv_kernels, vs_ref, .timeout = 120) {
  compare_case(&vkp_spirv_cases[*i]);
}

// The staging copies a discrete GPU records around every run (inputs in,
// outputs out, constants once), on lavapipe's unified memory too: the cases
// with empty tensors (Vulkan forbids a zero-byte copy; first seen on an
// NVIDIA H200) and every eighth other case.
Test(spirv_kernels, discrete_gpu_copies, .timeout = 300) {
  setenv("VKPIPE_VK_FORCE_COPIES", "1", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strstr(vkp_spirv_cases[i].name, "empty") || i % 8 == 0)
      compare_case(&vkp_spirv_cases[i]);
}

// The shared-memory GEMM (the variant real GPUs get) on lavapipe too.
Test(spirv_kernels, gemm_tiled_variant, .timeout = 120) {
  setenv("VKPIPE_SPIRV_GEMM", "tiled", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i) {
    const char *n = vkp_spirv_cases[i].name;
    if (strncmp(n, "matmul", 6) == 0 || strncmp(n, "gemm", 4) == 0 ||
        strcmp(n, "fuse_matmul_bias_relu") == 0)
      compare_case(&vkp_spirv_cases[i]);
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
}

static bool is_conv_case(const char *n) {
  return (strncmp(n, "conv_", 5) == 0 || strncmp(n, "conv3d_", 7) == 0 ||
          strncmp(n, "conv1d_", 7) == 0) &&
         strncmp(n, "conv_transpose", 14) != 0;
}

// Every group-1 convolution case through the implicit GEMM, both tilings
// (the tiled one is what GPUs get), whatever its width; every transposed
// one through its implicit GEMM (one tiling) or, with "direct", the gather.
static void conv_cases_with(const char *gemm, const char *conv) {
  setenv("VKPIPE_SPIRV_GEMM", gemm, 1);
  setenv("VKPIPE_SPIRV_CONV", conv, 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i) {
    const char *n = vkp_spirv_cases[i].name;
    if (is_conv_case(n) || strncmp(n, "fuse_conv", 9) == 0 ||
        strncmp(n, "conv_transpose", 14) == 0)
      compare_case(&vkp_spirv_cases[i]);
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
  unsetenv("VKPIPE_SPIRV_CONV");
}

Test(spirv_kernels, conv_gemm_tiled_variant, .timeout = 120) {
  conv_cases_with("tiled", "gemm");
}

Test(spirv_kernels, conv_gemm_blocked_variant, .timeout = 120) {
  conv_cases_with("blocked", "gemm");
}

// The register-blocked implicit GEMM checking every tap against the padding
// (no zero-padded copy first), the path a copy too large for one binding
// takes; conv_gemm_blocked_variant above runs the copies.
Test(spirv_kernels, conv_gemm_blocked_checked, .timeout = 120) {
  setenv("VKPIPE_SPIRV_CONV_PAD", "off", 1);
  conv_cases_with("blocked", "gemm");
  unsetenv("VKPIPE_SPIRV_CONV_PAD");
}

// Group-1 convolutions through the direct kernel (the pre-GEMM path).
Test(spirv_kernels, conv_direct_variant, .timeout = 120) {
  conv_cases_with("blocked", "direct");
}

// The workgroup-per-row kernels (what GPUs get for long rows) on lavapipe
// too, reducing through subgroup arithmetic (lavapipe has it) and through
// the shared-memory tree (VKPIPE_SPIRV_SUBGROUP=off).
Test(spirv_kernels, row_workgroup_variant, .timeout = 120) {
  setenv("VKPIPE_SPIRV_ROWS", "workgroup", 1);
  for (int tree = 0; tree < 2; ++tree) {
    if (tree) setenv("VKPIPE_SPIRV_SUBGROUP", "off", 1);
    for (int i = 0; i < vkp_spirv_case_count; ++i) {
      const char *n = vkp_spirv_cases[i].name;
      if (strncmp(n, "softmax", 7) == 0 || strncmp(n, "layer_norm", 10) == 0 ||
          strncmp(n, "reduce", 6) == 0 || strncmp(n, "global_avg_pool", 15) == 0 ||
          strncmp(n, "log_softmax", 11) == 0 || strncmp(n, "hardmax", 7) == 0 ||
          strncmp(n, "lp_norm", 7) == 0 || strncmp(n, "mvn", 3) == 0 ||
          strstr(n, "group_norm") || strncmp(n, "instance_norm", 13) == 0 ||
          strcmp(n, "scratch_chain") == 0)
        compare_case(&vkp_spirv_cases[i]);
    }
  }
  unsetenv("VKPIPE_SPIRV_SUBGROUP");
  unsetenv("VKPIPE_SPIRV_ROWS");
}

// Tensors larger than maxStorageBufferRange are split across bindings: the
// limit is lowered (VKPIPE_VK_MAX_BINDING, read when the target comes up) so
// that these small cases split their weights, activations and outputs into
// 2-4 ranges each; results must still match ref. test_codegen.c checks the
// split itself (binding counts and ranges).
static void split_case(const char *name, const char *limit) {
  setenv("VKPIPE_VK_MAX_BINDING", limit, 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strcmp(vkp_spirv_cases[i].name, name) == 0) compare_case(&vkp_spirv_cases[i]);
  unsetenv("VKPIPE_VK_MAX_BINDING");
}

Test(spirv_kernels, split_bindings, .timeout = 300) {
  const char *gemm_variants[] = {"blocked", "tiled"};
  for (int v = 0; v < 2; ++v) {
    setenv("VKPIPE_SPIRV_GEMM", gemm_variants[v], 1);
    split_case("matmul_65x67x33", "8192");
    split_case("gemm_tAtB_full_c", "272");
    split_case("fuse_matmul_bias_relu", "400");
    setenv("VKPIPE_SPIRV_CONV", "gemm", 1);
    split_case("conv_gemm_7x7_s2", "24576");
    unsetenv("VKPIPE_SPIRV_CONV");
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
  setenv("VKPIPE_SPIRV_CONV", "direct", 1);
  split_case("conv_gemm_7x7_s2", "24576");
  unsetenv("VKPIPE_SPIRV_CONV");
  split_case("gather_embedding_add_pos", "160");
  split_case("relu_2x3x5x7", "448");
}

// --precision fp16: matrix and convolution weights kept as float16 (rounded
// to nearest even, relative error <= 2^-11 each), float32 arithmetic. The
// stated tolerance for these cases (inputs in [-1, 1], K <= 147): |vulkan -
// ref| <= 1e-2 + 1e-2 * |ref|. Every GEMM variant, both conv kernels, and
// split bindings on float16 weights.
#define FP16_RTOL 1e-2
#define FP16_ATOL 1e-2

// The matrix-product and convolution cases, under `options`.
static void matrix_cases(const vkp_compile_options_t *options) {
  for (int i = 0; i < vkp_spirv_case_count; ++i) {
    const char *n = vkp_spirv_cases[i].name;
    if (strncmp(n, "matmul", 6) == 0 || strncmp(n, "gemm", 4) == 0 ||
        strncmp(n, "fuse_matmul", 11) == 0 || is_conv_case(n) ||
        strncmp(n, "fuse_conv", 9) == 0 || strncmp(n, "fuse_gemm", 9) == 0)
      compare_case_with(&vkp_spirv_cases[i], options, FP16_RTOL, FP16_ATOL);
  }
}

static void fp16_cases(void) {
  vkp_compile_options_t fp16 = {.precision = VKP_PRECISION_FP16};
  matrix_cases(&fp16);
}

Test(spirv_kernels, fp16_weights, .timeout = 300) {
  const char *gemm_variants[] = {"blocked", "tiled"};
  const char *conv_variants[] = {"gemm", "direct"};
  for (int v = 0; v < 2; ++v) {
    setenv("VKPIPE_SPIRV_GEMM", gemm_variants[v], 1);
    setenv("VKPIPE_SPIRV_CONV", conv_variants[v], 1);
    fp16_cases();
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
  unsetenv("VKPIPE_SPIRV_CONV");
  vkp_compile_options_t fp16 = {.precision = VKP_PRECISION_FP16};
  setenv("VKPIPE_VK_MAX_BINDING", "20480", 1);  // fp16 weights in 2 parts
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strcmp(vkp_spirv_cases[i].name, "conv_gemm_7x7_s2") == 0)
      compare_case_with(&vkp_spirv_cases[i], &fp16, FP16_RTOL, FP16_ATOL);
  unsetenv("VKPIPE_VK_MAX_BINDING");
}

// Cooperative matrices (VKPIPE_SPIRV_GEMM=coopmat: gemm_coopmat.comp,
// conv_gemm_coopmat.comp), where the device offers them (not lavapipe:
// skipped there; compiled and validated for an NVIDIA-like device by
// test_spirv_codegen): both operands rounded to float16, sums in float32, so
// the fp16 tolerance holds; at both precisions, with split-K and with split
// bindings too.
Test(spirv_kernels, coopmat_variant, .timeout = 300) {
  vkp_vk_device_t *dev = NULL;
  vkp_status_t st = vkp_vk_device_open(NULL, &dev);
  bool has = !st && dev->coopmat_f16;
  vkp_status_free(st);
  vkp_vk_device_destroy(dev);
  if (!has) cr_skip_test("the Vulkan device has no cooperative matrices vkpipe uses");
  setenv("VKPIPE_SPIRV_GEMM", "coopmat", 1);
  fp16_cases();
  vkp_compile_options_t fp32 = {.precision = VKP_PRECISION_FP32};
  matrix_cases(&fp32);
  setenv("VKPIPE_SPIRV_SPLITK", "on", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strncmp(vkp_spirv_cases[i].name, "matmul", 6) == 0)
      compare_case_with(&vkp_spirv_cases[i], &fp32, FP16_RTOL, FP16_ATOL);
  unsetenv("VKPIPE_SPIRV_SPLITK");
  setenv("VKPIPE_VK_MAX_BINDING", "20480", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strcmp(vkp_spirv_cases[i].name, "conv_gemm_7x7_s2") == 0)
      compare_case_with(&vkp_spirv_cases[i], &fp32, FP16_RTOL, FP16_ATOL);
  unsetenv("VKPIPE_VK_MAX_BINDING");
  unsetenv("VKPIPE_SPIRV_GEMM");
}

// Split-K (VKPIPE_SPIRV_SPLITK=on: every GEMM with K >= 32 in <= 4 slices of
// partial sums, then the reduction with alpha, beta * C and the epilogue),
// both GEMM tilings, with float32 and float16 weights and split bindings;
// and every convolution and transposed one (a reduction of >= 2: <= 4 slices)
// (conv_split.comp, the kernel convolutions past lavapipe's loop budget
// get) over every window shape of the cases.
Test(spirv_kernels, split_k_variant, .timeout = 300) {
  setenv("VKPIPE_SPIRV_SPLITK", "on", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i) {
    const char *n = vkp_spirv_cases[i].name;
    if (is_conv_case(n) || strncmp(n, "fuse_conv", 9) == 0 ||
        strncmp(n, "conv_transpose", 14) == 0)
      compare_case(&vkp_spirv_cases[i]);
  }
  const char *gemm_variants[] = {"blocked", "tiled"};
  for (int v = 0; v < 2; ++v) {
    setenv("VKPIPE_SPIRV_GEMM", gemm_variants[v], 1);
    for (int i = 0; i < vkp_spirv_case_count; ++i) {
      const char *n = vkp_spirv_cases[i].name;
      if (strncmp(n, "matmul", 6) == 0 || strncmp(n, "gemm", 4) == 0 ||
          strncmp(n, "fuse_matmul", 11) == 0 || strncmp(n, "fuse_gemm", 9) == 0)
        compare_case(&vkp_spirv_cases[i]);
    }
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
  vkp_compile_options_t fp16 = {.precision = VKP_PRECISION_FP16};
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strcmp(vkp_spirv_cases[i].name, "fuse_matmul_bias_relu") == 0)
      compare_case_with(&vkp_spirv_cases[i], &fp16, FP16_RTOL, FP16_ATOL);
  split_case("matmul_65x67x33", "8192");
  unsetenv("VKPIPE_SPIRV_SPLITK");
}

// Depthwise convolutions through the generic direct kernel too (the default,
// conv_depthwise.comp, runs in vs_ref and fp16_weights).
Test(spirv_kernels, depthwise_direct_variant, .timeout = 120) {
  setenv("VKPIPE_SPIRV_DEPTHWISE", "direct", 1);
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strncmp(vkp_spirv_cases[i].name, "conv_depthwise", 14) == 0)
      compare_case(&vkp_spirv_cases[i]);
  unsetenv("VKPIPE_SPIRV_DEPTHWISE");
}
