// SPDX-License-Identifier: Apache-2.0
// graph/onnx_fuse.c: exporter-expanded LayerNorm, GELU, attention and
// GroupNorm recognised.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// A transformer encoder layer as PyTorch exports it (MatMul, Add, Softmax,
// Transpose, Reshape, ReduceMean, Sub, Pow, Sqrt, Div, Erf, Mul), against
// NumPy.
Test(onnx_fuse, transformer_layer_norm_and_gelu, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("transformer.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GELU), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MEAN), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ERF), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_POW), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SOFTMAX), 0);
  onnx_run_and_compare(g, "transformer", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// The same pattern over a middle axis: not what layer_norm computes, so the
// nodes import one by one and still match.
Test(onnx_fuse, normalisation_over_a_middle_axis_is_not_fused, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("ln_middle_axis.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MEAN), 2);
  onnx_run_and_compare(g, "ln_middle_axis", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Attention as BERT, GPT-2, scaled_dot_product_attention,
// nn.MultiheadAttention and timm's ViT (a scale computed in the graph) export
// it: one attention node (no Softmax left, the
// scalings folded into its scale), right against NumPy on ref and on the
// generated C.
static const struct {
  const char *name;
  int matmuls;  // left after fusion
} fused[] = {
    {"att_bert", 0},
    {"att_gpt2", 0},
    {"att_runtime_cond", 0},  // a run-time bool condition, cast to float32
    {"att_sdpa", 0},
    {"att_mha", 0},
    {"att_pow_scale", 0},
    {"att_shape_scale", 0},
};

Test(onnx_fuse, attention_as_exporters_write_it, .timeout = 120) {
  for (size_t i = 0; i < sizeof fused / sizeof fused[0]; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", fused[i].name);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 1, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_SOFTMAX), 0, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_MATMUL), fused[i].matmuls, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_MUL) + onnx_count_op(g, VKP_OP_DIV), 0,
                 "%s: a scaling was left", file);
    onnx_run_and_compare(g, fused[i].name, 1e-5, 1e-6);
    onnx_run_and_compare_on(g, fused[i].name, "cpu", 1, 1e-4, 1e-5);
    // Blocks of query rows split across the stage's thread pool.
    onnx_run_and_compare_on(g, fused[i].name, "cpu", 3, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
}

// RMSNorm as torch writes it (Div(1, rms)), with Reciprocal, as a Div by the
// RMS (no gamma), with Mul(x, x) and opset 18's axes input: one layer_norm
// with rms = 1, right against NumPy on ref and cpu (1 and 3 threads).
Test(onnx_fuse, rms_norm_spellings, .timeout = 120) {
  const char *names[] = {"rms_torch", "rms_reciprocal", "rms_div", "rms_opset18"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(g->n_nodes, 1, "%s: %d nodes", file, (int)g->n_nodes);
    cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 1, "%s", file);
    cr_assert_eq(vkp_node_int(&g->nodes[0], "rms"), 1, "%s", file);
    onnx_run_and_compare(g, names[i], 1e-5, 1e-6);
    onnx_run_and_compare_on(g, names[i], "cpu", 1, 1e-4, 1e-5);
    onnx_run_and_compare_on(g, names[i], "cpu", 3, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
}

// The mean of squares over a middle axis: not RMSNorm, imported node by node.
Test(onnx_fuse, rms_over_middle_axis_is_not_fused, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("rms_middle_axis.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_MEAN), 1);
  onnx_run_and_compare(g, "rms_middle_axis", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// tanh GELU as torch's exporter and Hugging Face's NewGELU write it: one
// gelu node with approximate = "tanh".
Test(onnx_fuse, gelu_tanh_spellings, .timeout = 120) {
  const char *names[] = {"gelu_tanh_torch", "gelu_tanh_hf"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(g->n_nodes, 1, "%s: %d nodes", file, (int)g->n_nodes);
    cr_assert_eq(onnx_count_op(g, VKP_OP_GELU), 1, "%s", file);
    cr_assert_str_eq(vkp_node_string(&g->nodes[0], "approximate"), "tanh", "%s", file);
    onnx_run_and_compare(g, names[i], 1e-5, 1e-6);
    onnx_run_and_compare_on(g, names[i], "cpu", 1, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
}

// Probabilities that are also a graph output, and an opset-11 Softmax over
// a leading axis: imported node by node, still right.
Test(onnx_fuse, attention_that_is_not_what_attention_computes, .timeout = 60) {
  const char *names[] = {"att_probs_out", "att_old_softmax"};
  for (int i = 0; i < 2; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 0, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_MATMUL), 2, "%s", file);
    onnx_run_and_compare(g, names[i], 1e-5, 1e-6);
    vkp_graph_destroy(g);
  }
}

// --no-fuse (vkp_graph_load_options_t.no_fusion): the same model node by
// node, with the same result.
Test(onnx_fuse, no_fusion_option_imports_node_by_node, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "att_bert.onnx");
  vkp_graph_load_options_t opt = {.no_fusion = true};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SOFTMAX), 1);
  onnx_run_and_compare(g, "att_bert", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// nn.GroupNorm exactly as torch.onnx.export writes it (Reshape, unit-scale
// InstanceNormalization, Reshape back through Shape, Mul, Add): one
// group_norm node, nothing else, against NumPy.
Test(onnx_fuse, torch_group_norm, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("group_norm_torch.onnx");
  cr_assert_eq(g->n_nodes, 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GROUP_NORM), 1);
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "num_groups"), 4);
  onnx_run_and_compare(g, "group_norm_torch", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Gamma and beta as graph inputs [C, 1] (Mul and Add operands swapped):
// reshaped to [C] and fused.
Test(onnx_fuse, group_norm_with_runtime_parameters, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("group_norm_inputs.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GROUP_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_INSTANCE_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_MUL), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ADD), 0);
  onnx_run_and_compare(g, "group_norm_inputs", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// An InstanceNormalization with a scale other than 1 between the reshapes is
// not a GroupNorm: imported node by node, still right.
Test(onnx_fuse, scaled_instance_norm_is_not_fused, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("group_norm_scaled.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GROUP_NORM), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_INSTANCE_NORM), 1);
  onnx_run_and_compare(g, "group_norm_scaled", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Linear layers with constant weights: the cpu target packs B at load and
// runs a sequence-first input's batches as one GEMM (bias-only epilogue),
// a residual epilogue per batch, and a transposed Gemm weight; 1 and 3
// threads, against NumPy.
Test(onnx_fuse, linear_layers_with_packed_weights, .timeout = 120) {
  const char *names[] = {"linear_seq_first", "linear_residual", "linear_gemm_trans_b"};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", names[i]);
    vkp_graph_t *g = onnx_load_model(file);
    onnx_run_and_compare(g, names[i], 1e-5, 1e-6);
    onnx_run_and_compare_on(g, names[i], "cpu", 1, 1e-4, 1e-5);
    onnx_run_and_compare_on(g, names[i], "cpu", 3, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
}
