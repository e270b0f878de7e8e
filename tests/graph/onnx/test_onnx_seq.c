// SPDX-License-Identifier: Apache-2.0
// graph/onnx_einsum.c, onnx_rnn.c, onnx_quant.c, onnx_loss.c: Einsum lowered
// to IR matmul / reduce_sum / transpose / reshape where it can be (and left
// to the IR's einsum where not), LSTM activations with ONNX's in-order
// alpha/beta and an omitted Y, opset 21 blocked quantization, and
// SoftmaxCrossEntropyLoss's second output; each checked against NumPy
// (models_seq.py) on "ref". The ONNX node tests (onnx_conformance_ref) cover
// the rest of these ops' attributes.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

static const struct {
  const char *name;
  int matmuls, reduces, transposes, einsums;
} einsums[] = {
    {"einsum_bmm", 1, 0, 0, 0},
    {"einsum_attention", 1, 0, 1, 0},
    {"einsum_dot", 1, 0, 0, 0},
    {"einsum_transpose", 0, 0, 1, 0},
    {"einsum_rowsum", 0, 1, 0, 0},
    {"einsum_implicit", 1, 0, 0, 0},
    {"einsum_outer", 1, 0, 0, 0},
    {"einsum_merge", 1, 0, 0, 0},
    {"einsum_swap", 1, 0, 1, 0},
    {"einsum_sum_first", 1, 1, 0, 0},
    {"einsum_kept_diagonal", 0, 0, 0, 1},
    {"einsum_kept_broadcast", 0, 0, 0, 1},
    {"einsum_kept_three", 0, 0, 0, 1},
};

Test(onnx_seq, einsum_lowered_where_it_can_be, .timeout = 60) {
  for (size_t i = 0; i < sizeof einsums / sizeof einsums[0]; ++i) {
    char file[128];
    snprintf(file, sizeof file, "%s.onnx", einsums[i].name);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_MATMUL), einsums[i].matmuls, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_REDUCE_SUM), einsums[i].reduces, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_TRANSPOSE), einsums[i].transposes, "%s", file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_EINSUM), einsums[i].einsums, "%s", file);
    onnx_run_and_compare(g, einsums[i].name, 1e-5, 1e-6);
    vkp_graph_destroy(g);
  }
}

Test(onnx_seq, lstm_activations_and_omitted_y, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("lstm_activations.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_LSTM), 1);
  const vkp_node_t *n = NULL;
  for (int32_t i = 0; i < g->n_nodes; ++i)
    if (g->nodes[i].op == VKP_OP_LSTM) n = &g->nodes[i];
  cr_assert_str_eq(vkp_node_string(n, "activations"), "hard_sigmoid,tanh,scaled_tanh");
  const vkp_attr_t *alpha = vkp_node_attr(n, "activation_alpha"),
                   *beta = vkp_node_attr(n, "activation_beta");
  double want_a[3] = {0.3, 0.0, 0.7}, want_b[3] = {0.4, 0.0, 1.2};
  for (int k = 0; k < 3; ++k) {
    cr_assert_float_eq(alpha->floats[k], want_a[k], 1e-6);
    cr_assert_float_eq(beta->floats[k], want_b[k], 1e-6);
  }
  cr_assert_eq(n->n_outputs, 3);  // Y has an internal name
  onnx_run_and_compare(g, "lstm_activations", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Y_h, Y_c and MaxPool's Indices are named by the model but read by
// nothing: the IR nodes keep only what is read (vkp__graph_trim_outputs).
Test(onnx_seq, unread_trailing_outputs_dropped, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("unused_outputs.onnx");
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (n->op == VKP_OP_LSTM || n->op == VKP_OP_MAX_POOL2D)
      cr_assert_eq(n->n_outputs, 1, "%s kept %d outputs", n->name, (int)n->n_outputs);
  }
  cr_assert_eq(onnx_count_op(g, VKP_OP_LSTM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_MAX_POOL2D), 1);
  onnx_run_and_compare(g, "unused_outputs", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

Test(onnx_seq, blocked_quantization_and_per_axis_dequantization, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("quant_blocked.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_QUANTIZE_LINEAR), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_DEQUANTIZE_LINEAR), 1);
  onnx_run_and_compare(g, "quant_blocked", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

Test(onnx_seq, softmax_cross_entropy_log_prob, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("sce_log_prob.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS), 1);
  onnx_run_and_compare(g, "sce_log_prob", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}
