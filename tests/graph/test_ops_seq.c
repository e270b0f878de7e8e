// SPDX-License-Identifier: Apache-2.0
// graph/op_rnn.c, op_loss.c, op_quant.c and einsum in op_linalg.c: the
// canonical forms validation writes, and errors that name the node and the
// attribute or input at fault (at validation, or at run time on "ref" for
// data-dependent ones) instead of aborting. Their results are checked
// against NumPy in tests/runtime/ref (cases_seq.py).
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

// Adds node "n" of `op` over the comma-separated inputs ("" for an omitted
// one) with outputs y0, y1, ... and marks them as outputs.
static void node(vkp_graph_t *g, vkp_op_t op, const char *ins, int32_t n_out,
                 int32_t n_attrs, const vkp_attr_t *attrs) {
  static const char *const outs[] = {"y0", "y0,y1", "y0,y1,y2", "y0,y1,y2,y3"};
  g_node(g, "n", op, ins, outs[n_out - 1], n_attrs, attrs);
  g_out(g, outs[n_out - 1]);
}

static vkp_graph_t *lstm_graph(int64_t dirs, int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 3, SH(4, 2, 3));
  g_in(g, "w", VKP_DTYPE_FLOAT32, 3, SH(dirs, 20, 3));
  g_in(g, "r", VKP_DTYPE_FLOAT32, 3, SH(dirs, 20, 5));
  g_in(g, "lens", VKP_DTYPE_INT32, 1, SH(2));
  node(g, VKP_OP_LSTM, "x,w,r,,lens", 3, n_attrs, attrs);
  return g;
}

Test(ops_seq, rnn_canonical_form, .timeout = 30) {
  vkp_attr_t bi = at_s("direction", "bidirectional");
  vkp_graph_t *g = lstm_graph(2, 1, &bi);
  g_validate(g);
  const vkp_node_t *n = &g->nodes[0];
  cr_assert_eq(vkp_node_int(n, "hidden_size"), 5);
  cr_assert_str_eq(vkp_node_string(n, "activations"), "sigmoid,tanh,tanh,sigmoid,tanh,tanh");
  cr_assert_eq(vkp_node_attr(n, "activation_alpha")->count, 6);
  const vkp_value_t *y = &g->values[n->outputs[0]], *yc = &g->values[n->outputs[2]];
  cr_assert(y->rank == 4 && y->shape[0] == 4 && y->shape[1] == 2 && y->shape[2] == 2 &&
            y->shape[3] == 5);
  cr_assert(yc->rank == 3 && yc->shape[0] == 2 && yc->shape[1] == 2 && yc->shape[2] == 5);
  vkp_graph_destroy(g);
}

Test(ops_seq, rnn_errors_name_what_is_wrong, .timeout = 30) {
  vkp_attr_t a = at_s("direction", "sideways");
  g_expect_invalid(lstm_graph(1, 1, &a), VKP_STATUS_INVALID_ARGUMENT, "n", "direction", "sideways");
  // One direction's weights for a bidirectional node.
  a = at_s("direction", "bidirectional");
  g_expect_invalid(lstm_graph(1, 1, &a), VKP_STATUS_INVALID_ARGUMENT, "n", "W 'w'", "[2, 20, 3]");
  a = at_s("activations", "sigmoid,swish,tanh");
  g_expect_invalid(lstm_graph(1, 1, &a), VKP_STATUS_INVALID_ARGUMENT, "n", "swish", NULL);
  a = at_s("activations", "sigmoid,tanh");
  g_expect_invalid(lstm_graph(1, 1, &a), VKP_STATUS_INVALID_ARGUMENT, "n", "activations", "3 per direction");
  a = at_i("hidden_size", 4);
  g_expect_invalid(lstm_graph(1, 1, &a), VKP_STATUS_INVALID_ARGUMENT, "n", "hidden_size", "R 'r'");
}

// A sequence length past the sequence is a run-time error on ref.
Test(ops_seq, rnn_sequence_length_out_of_range, .timeout = 30) {
  vkp_graph_t *g = lstm_graph(1, 0, NULL);
  g_validate(g);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_tensor_t in[4], out[3];
  for (int32_t i = 0; i < 4; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&in[i], v->dtype, v->rank, v->shape));
    memset(in[i].data, 0, vkp_tensor_nbytes(&in[i]));
  }
  ((int32_t *)in[3].data)[1] = 9;
  vkp_status_t st = vkp_target_run_graph(ref, g, NULL, in, out);
  cr_assert(st && strstr(vkp_status_message(st), "sequence_lens[1] is 9"), "%s",
            st ? vkp_status_message(st) : "ran");
  vkp_status_free(st);
  for (int32_t i = 0; i < 4; ++i) vkp_tensor_deinit(&in[i]);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

static vkp_graph_t *einsum_graph(const char *eq, int64_t k2) {
  vkp_graph_t *g = g_new("seq");
  g_in(g, "a", VKP_DTYPE_FLOAT32, 2, SH(2, 3));
  g_in(g, "b", VKP_DTYPE_FLOAT32, 2, SH(k2, 4));
  vkp_attr_t a = at_s("equation", eq);
  node(g, VKP_OP_EINSUM, "a,b", 1, 1, &a);
  return g;
}

Test(ops_seq, einsum_canonical_form_and_errors, .timeout = 30) {
  vkp_graph_t *g = einsum_graph(" ij , jk ", 3);
  g_validate(g);
  cr_assert_str_eq(vkp_node_string(&g->nodes[0], "equation"), "ij,jk->ik");
  vkp_graph_destroy(g);
  g_expect_invalid(einsum_graph("ij,jk->ik", 5), VKP_STATUS_INVALID_ARGUMENT, "n", "subscript 'j'", NULL);
  g_expect_invalid(einsum_graph("ij,j2->i", 3), VKP_STATUS_INVALID_ARGUMENT, "n", "'2'", NULL);
  g_expect_invalid(einsum_graph("ij,jk->iz", 3), VKP_STATUS_INVALID_ARGUMENT, "n", "'z'", NULL);
  g_expect_invalid(einsum_graph("ij->i", 3), VKP_STATUS_INVALID_ARGUMENT, "n", "1 terms", NULL);
  g_expect_invalid(einsum_graph("i,jk->k", 3), VKP_STATUS_INVALID_ARGUMENT, "n", "rank 2", NULL);
}

Test(ops_seq, quantize_canonical_form_and_errors, .timeout = 30) {
  vkp_graph_t *g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(3, 4));
  g_in(g, "s", VKP_DTYPE_FLOAT32, 0, NULL);
  node(g, VKP_OP_QUANTIZE_LINEAR, "x,s", 1, 0, NULL);
  g_validate(g);
  cr_assert_str_eq(vkp_node_string(&g->nodes[0], "output_dtype"), "uint8");
  cr_assert_eq(vkp_node_int(&g->nodes[0], "axis"), 0);  // per tensor
  cr_assert_eq(g->values[g->nodes[0].outputs[0]].dtype, VKP_DTYPE_UINT8);
  vkp_graph_destroy(g);
  // Per axis (axis 1 by default): 3 scales for 4 columns.
  g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(3, 4));
  g_in(g, "s", VKP_DTYPE_FLOAT32, 1, SH(3));
  node(g, VKP_OP_QUANTIZE_LINEAR, "x,s", 1, 0, NULL);
  g_expect_invalid(g, VKP_STATUS_INVALID_ARGUMENT, "n", "scale 's' [3]", "axis 1");
  g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(3, 4));
  g_in(g, "s", VKP_DTYPE_FLOAT32, 0, NULL);
  g_in(g, "z", VKP_DTYPE_INT32, 0, NULL);
  node(g, VKP_OP_QUANTIZE_LINEAR, "x,s,z", 1, 0, NULL);
  g_expect_invalid(g, VKP_STATUS_UNSUPPORTED, "n", "int32", NULL);
  g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(3, 8));
  g_in(g, "s", VKP_DTYPE_FLOAT32, 2, SH(3, 3));
  vkp_attr_t b = at_i("block_size", 4);
  node(g, VKP_OP_QUANTIZE_LINEAR, "x,s", 1, 1, &b);
  g_expect_invalid(g, VKP_STATUS_INVALID_ARGUMENT, "n", "blocks of 4", NULL);
  g = g_new("seq");
  g_in(g, "a", VKP_DTYPE_UINT8, 2, SH(3, 4));
  g_in(g, "b", VKP_DTYPE_INT8, 2, SH(4, 5));
  g_in(g, "za", VKP_DTYPE_UINT8, 1, SH(2));
  node(g, VKP_OP_MATMUL_INTEGER, "a,b,za", 1, 0, NULL);
  g_expect_invalid(g, VKP_STATUS_UNSUPPORTED, "n", "a_zero_point 'za'", NULL);
}

static vkp_graph_t *loss_graph(vkp_op_t op, const char *reduction) {
  vkp_graph_t *g = g_new("seq");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 3, SH(2, 4, 3));
  g_in(g, "l", VKP_DTYPE_INT64, 2, SH(2, 3));
  vkp_attr_t a = at_s("reduction", reduction);
  node(g, op, "x,l", 1, 1, &a);
  return g;
}

Test(ops_seq, loss_errors_name_what_is_wrong, .timeout = 30) {
  g_expect_invalid(loss_graph(VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, "average"), VKP_STATUS_INVALID_ARGUMENT, "n", "reduction", "average");
  // A label outside [0, C) fails the run on ref, naming the node.
  vkp_graph_t *g = loss_graph(VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, "mean");
  g_validate(g);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_tensor_t in[2], out[1];
  VKP_TEST_OK(vkp_tensor_init(&in[0], VKP_DTYPE_FLOAT32, 3, SH(2, 4, 3)));
  VKP_TEST_OK(vkp_tensor_init(&in[1], VKP_DTYPE_INT64, 2, SH(2, 3)));
  memset(in[0].data, 0, vkp_tensor_nbytes(&in[0]));
  memset(in[1].data, 0, vkp_tensor_nbytes(&in[1]));
  ((int64_t *)in[1].data)[4] = 4;
  vkp_status_t st = vkp_target_run_graph(ref, g, NULL, in, out);
  cr_assert(st && strstr(vkp_status_message(st), "node 'n'") &&
                strstr(vkp_status_message(st), "label 4"),
            "%s", st ? vkp_status_message(st) : "ran");
  vkp_status_free(st);
  vkp_tensor_deinit(&in[0]);
  vkp_tensor_deinit(&in[1]);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
