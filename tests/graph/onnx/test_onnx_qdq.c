// SPDX-License-Identifier: Apache-2.0
// QDQ folding (graph/onnx_fuse.c plans it, graph/onnx_quant.c checks and
// emits it): ONNX Runtime's Q/DQ layout around Conv, Gemm and MatMul (with a
// bias Add) becomes
// qlinear_conv / qlinear_matmul, bit-exact against gen_models.py's NumPy
// integer implementation (models_qdq.py) on ref and cpu, and within the
// quantization error of the float model; a Relu that the output quantizer
// cannot absorb keeps the float path.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

typedef struct qdq_case_t {
  const char *name;
  vkp_op_t op;
  double float_atol;  // vs the float model: a few output quanta
} qdq_case_t;

static const qdq_case_t qdq_cases[] = {
    {"qdq_conv_u8_per_channel", VKP_OP_QLINEAR_CONV, 0.1},
    {"qdq_conv_s8_per_tensor", VKP_OP_QLINEAR_CONV, 0.05},
    {"qdq_conv_s8_weight_zero_point", VKP_OP_QLINEAR_CONV, 0.05},
    {"qdq_matmul_u8_per_column", VKP_OP_QLINEAR_MATMUL, 0.05},
    {"qdq_matmul_s8_per_tensor", VKP_OP_QLINEAR_MATMUL, 0.05},
    {"qdq_matmul_add_u8_zero_point", VKP_OP_QLINEAR_MATMUL, 0.1},
    {"qdq_gemm_t_u8_per_channel", VKP_OP_QLINEAR_MATMUL, 0.1},
    {"qdq_gemm_s8_relu", VKP_OP_QLINEAR_MATMUL, 0.1},
    {"qdq_conv_u8_split", VKP_OP_QLINEAR_CONV, 0.1},
    {"qdq_conv_depthwise_u8", VKP_OP_QLINEAR_CONV, 0.1},
    {"qdq_conv_depthwise_s8_5x5", VKP_OP_QLINEAR_CONV, 0.05},
};

// Cases [from, to) of qdq_cases.
static void qdq_check_cases(size_t from, size_t to) {
  char file[128];
  for (size_t i = from; i < to; ++i) {
    const qdq_case_t *c = &qdq_cases[i];
    snprintf(file, sizeof file, "%s.onnx", c->name);
    vkp_graph_t *g = onnx_load_model(file);
    // x is quantized, the product folded, the result dequantized; no float
    // Conv / MatMul and no dequantized weight left.
    cr_assert_eq(onnx_count_op(g, c->op), 1, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_QUANTIZE_LINEAR), 1, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_DEQUANTIZE_LINEAR), 1, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 0, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_MATMUL), 0, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_GEMM), 0, "%s", c->name);
    cr_assert_eq(onnx_count_op(g, VKP_OP_ADD), 0, "%s", c->name);
    onnx_run_and_compare(g, c->name, 0, 0);
    onnx_run_and_compare_on(g, c->name, "cpu", 1, 0, 0);
    onnx_run_and_compare_on(g, c->name, "cpu", 3, 0, 0);
    // The portable 8-bit path (the stage asks the CPU for VNNI at run time;
    // this makes it answer no): the same integers.
    setenv("VKPIPE_CPU_NO_VNNI", "1", 1);
    onnx_run_and_compare_on(g, c->name, "cpu", 3, 0, 0);
    unsetenv("VKPIPE_CPU_NO_VNNI");
    char name[128];
    snprintf(name, sizeof name, "%s_float", c->name);
    onnx_run_and_compare(g, name, 0, c->float_atol);
    vkp_graph_destroy(g);
  }
}

// The convolutions and first products; then the rest (each Test its own
// timeout: every case compiles two stages).
Test(onnx_qdq, folded_into_integer_ops_bit_exact, .timeout = 240) { qdq_check_cases(0, 5); }

Test(onnx_qdq, gemm_and_bias_add_folded_bit_exact, .timeout = 240) {
  qdq_check_cases(5, 9);
}

// Depthwise (group = channels): the cpu target sums the taps with its float
// depthwise kernel on the exact integer values (vkp_q_conv_depthwise), so
// the results must still be the integers' to the bit.
Test(onnx_qdq, depthwise_folded_bit_exact, .timeout = 240) {
  qdq_check_cases(9, sizeof qdq_cases / sizeof *qdq_cases);
}

// zy above the dtype's lowest value: Relu clamps at a real 0 the
// saturation would not; the float Conv stays, within one output quantum of
// the NumPy float path.
Test(onnx_qdq, relu_not_absorbed_stays_float, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("qdq_conv_relu_unfused.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_QLINEAR_CONV), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 1);
  onnx_run_and_compare(g, "qdq_conv_relu_unfused", 0, 0.02);
  onnx_run_and_compare_on(g, "qdq_conv_relu_unfused", "cpu", 1, 0, 0.02);
  vkp_graph_destroy(g);
}

// --no-fuse (vkp_graph_load_options_t.no_fusion) keeps the float Conv
// between the quantizers: within one output quantum of the integer result.
Test(onnx_qdq, no_fusion_keeps_the_float_conv, .timeout = 120) {
  char path[1024];
  onnx_model_path(path, sizeof path, "qdq_conv_u8_per_channel.onnx");
  vkp_graph_load_options_t opt = {.no_fusion = true};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  cr_assert_eq(onnx_count_op(g, VKP_OP_QLINEAR_CONV), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 1);
  onnx_run_and_compare(g, "qdq_conv_u8_per_channel", 0, 0.06);
  vkp_graph_destroy(g);
}
