// SPDX-License-Identifier: Apache-2.0
// graph/onnx_contrib.c: ONNX Runtime's com.microsoft contrib ops against
// NumPy written from the contrib spec (models_contrib.py), on "ref" and
// "cpu", and on "vulkan" (validation on) for the models whose IR ops all
// run there; and an op of the domain that is not mapped, refused naming it.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

static void check(const char *name) {
  char file[256];
  snprintf(file, sizeof file, "%s.onnx", name);
  vkp_graph_t *g = onnx_load_model(file);
  onnx_run_and_compare(g, name, 1e-5, 1e-5);
  onnx_run_and_compare_on(g, name, "cpu", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_contrib, gelu_family_and_bias_add, .timeout = 120) {
  check("ms_gelu");
  check("ms_bias_gelu");
  check("ms_fast_gelu");
  check("ms_fast_gelu_bias");
  check("ms_quick_gelu");
  check("ms_quick_gelu_alpha");
  check("ms_bias_add");
}

Test(onnx_contrib, fused_matmul, .timeout = 120) {
  check("ms_fused_matmul");
  check("ms_fused_matmul_ta");
  check("ms_fused_matmul_tb");
  check("ms_fused_matmul_batch");
  check("ms_fused_matmul_batch_ta");
}

Test(onnx_contrib, fused_conv, .timeout = 120) {
  check("ms_fused_conv_relu");
  check("ms_fused_conv_leaky");
  check("ms_fused_conv_clip");
  check("ms_fused_conv_hsig");
  check("ms_fused_conv_sigmoid_z");
  check("ms_fused_conv_tanh");
  check("ms_fused_conv_none_z");
}

// Skip(Simplified)LayerNormalization with every output, the RMSNorm of
// either domain, and com.microsoft's LayerNormalization.
Test(onnx_contrib, layer_norm_family, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("ms_skip_layer_norm.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 1);
  vkp_graph_destroy(g);
  check("ms_skip_layer_norm");
  check("ms_skip_layer_norm_plain");
  check("ms_skip_simplified_layer_norm");
  check("ms_simplified_layer_norm");
  check("simplified_layer_norm");
  check("ms_layer_norm");
}

// Attention with every mask_index form (none, [B] lengths, [2B] end and
// start, [B, T] and [B, S, T] 0/1, [B, 1, M, M]), unidirectional,
// qkv_hidden_sizes, scale, attention_bias; MultiHeadAttention with bias,
// key padding masks and attention_bias; GroupQueryAttention on a prompt
// (separate and packed QKV, present outputs). Each is one IR attention node.
Test(onnx_contrib, attention, .timeout = 120) {
  static const char *const names[] = {
      "ms_attention", "ms_attention_causal", "ms_attention_lens", "ms_attention_start_end",
      "ms_attention_raw2d_causal", "ms_attention_raw3d", "ms_attention_raw4d",
      "ms_attention_sizes_bias", "ms_mha", "ms_mha_bias_pad", "ms_mha_lens", "ms_gqa",
      "ms_gqa_packed"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char file[256];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 1, "%s", names[i]);
    vkp_graph_destroy(g);
    check(names[i]);
  }
}

// EmbedLayerNormalization with segments, mask (mask_index) and
// embedding_sum, and with position_ids and no mask; RotaryEmbedding on 4-D
// and 3-D inputs, halves or interleaved, a partial rotary dim, position ids
// [B, S] or an offset.
Test(onnx_contrib, embeddings, .timeout = 120) {
  check("ms_embed_layer_norm");
  check("ms_embed_layer_norm_pids");
  check("ms_rotary");
  check("ms_rotary_interleaved");
  check("ms_rotary_3d_partial");
  check("ms_rotary_3d_interleaved");
}

// QOperator ops, uint8 and int8: ref equals NumPy's float32 dequantize ->
// op -> quantize; one unit in the last place is allowed (a float32 op
// result on a rounding tie).
Test(onnx_contrib, qoperator, .timeout = 120) {
  static const char *const ops[] = {"add", "mul", "sigmoid", "leaky", "concat", "gap",
                                    "avgpool"};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; ++i)
    for (int s = 0; s < 2; ++s) {
      char name[64], file[80];
      snprintf(name, sizeof name, "ms_%s_%s", ops[i], s ? "s8" : "u8");
      snprintf(file, sizeof file, "%s.onnx", name);
      vkp_graph_t *g = onnx_load_model(file);
      onnx_run_and_compare(g, name, 0, 1.0);
      onnx_run_and_compare_on(g, name, "cpu", 1, 0, 1.0);
      vkp_graph_destroy(g);
    }
}

// DynamicQuantizeMatMul, MatMulIntegerToFloat (integer products rescaled to
// float), MatMulNBits (4-bit and 8-bit blocks, packed zero points or the
// default one, bias) dequantized at import.
Test(onnx_contrib, integer_and_nbits_matmuls, .timeout = 120) {
  check("ms_dynamic_quantize_matmul");
  check("ms_matmul_integer_to_float");
  check("ms_matmul_nbits");
  check("ms_matmul_nbits_zp");
  check("ms_matmul_nbits_8bit");
  vkp_graph_t *g = onnx_load_model("ms_quantize_linear.onnx");
  onnx_run_and_compare(g, "ms_quantize_linear", 0, 1e-6);
  onnx_run_and_compare_on(g, "ms_quantize_linear", "cpu", 1, 0, 1e-6);
  vkp_graph_destroy(g);
}

// The same models on vulkan (lavapipe), the whole graph on the target:
// every contrib op but DynamicQuantizeMatMul (no Vulkan
// dynamic_quantize_linear kernel).
Test(onnx_contrib, on_vulkan, .timeout = 300) {
  static const char *const names[] = {
      "ms_gelu", "ms_bias_gelu", "ms_fast_gelu_bias", "ms_quick_gelu_alpha", "ms_bias_add",
      "ms_fused_matmul_batch_ta", "ms_fused_matmul_tb", "ms_fused_conv_clip",
      "ms_fused_conv_sigmoid_z", "ms_skip_layer_norm", "ms_skip_simplified_layer_norm",
      "simplified_layer_norm", "ms_layer_norm", "ms_attention_start_end",
      "ms_attention_raw2d_causal", "ms_attention_raw4d", "ms_attention_sizes_bias",
      "ms_mha_bias_pad", "ms_gqa_packed", "ms_embed_layer_norm", "ms_rotary_3d_partial",
      "ms_rotary_interleaved", "ms_matmul_integer_to_float", "ms_matmul_nbits_zp"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char file[256];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    onnx_run_and_compare_on(g, names[i], "vulkan", 1, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
  static const char *const quantized[] = {"ms_add_u8", "ms_mul_s8", "ms_sigmoid_u8",
                                          "ms_leaky_s8", "ms_concat_u8", "ms_gap_s8",
                                          "ms_avgpool_u8", "ms_quantize_linear"};
  for (size_t i = 0; i < sizeof quantized / sizeof *quantized; ++i) {
    char file[256];
    snprintf(file, sizeof file, "%s.onnx", quantized[i]);
    vkp_graph_t *g = onnx_load_model(file);
    onnx_run_and_compare_on(g, quantized[i], "vulkan", 1, 0, 1.0);
    vkp_graph_destroy(g);
  }
}

static void expect_refused(const char *file, const char *what) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g, "%s imported", file);
  cr_assert_not_null(st);
  cr_assert(strstr(vkp_status_message(st), what), "%s", vkp_status_message(st));
  vkp_status_free(st);
}

Test(onnx_contrib, unmapped_op_is_refused_by_name, .timeout = 60) {
  expect_refused("ms_refused.onnx", "(CDist): com.microsoft::CDist is not supported");
}

Test(onnx_contrib, unsupported_forms_are_refused_with_the_reason, .timeout = 60) {
  expect_refused("ms_refused_attention_past.onnx", "past state (inputs 4 and 6");
  expect_refused("ms_refused_fused_conv.onnx", "activation 'Gelu' is not supported");
  expect_refused("ms_refused_attention_heads.onnx", "attribute 'num_heads' is required");
}
