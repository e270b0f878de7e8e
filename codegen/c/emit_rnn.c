// SPDX-License-Identifier: Apache-2.0
// C kernel emitter for the recurrent ops lstm, gru, rnn (float32): a
// descriptor of the node's constants and a call of vkp_rnn
// (codegen/c/prelude_rnn.c), which batches the input projections of all
// steps into one GEMM and runs the recurrence step by step.
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

// The activations prelude_rnn.c has (vkp_act_<name>).
static const char *const vkp__c_acts[] = {
    "relu", "tanh", "sigmoid", "affine", "leaky_relu", "thresholded_relu",
    "scaled_tanh", "hard_sigmoid", "elu", "softsign", "softplus"};

static void vkp__lit(vkp__sb_t *sb, double v) {
  char buf[64];
  vkp_codegen_c_literal(v, buf, sizeof buf);
  vkp__sb_append(sb, buf);
}

// Writes "vkp_act_a, vkp_act_b, ..." for the canonical activation list.
static vkp_status_t vkp__emit_acts(vkp__sb_t *sb, const char *list, int32_t *count) {
  *count = 0;
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    bool known = false;
    for (size_t a = 0; a < sizeof vkp__c_acts / sizeof vkp__c_acts[0]; ++a)
      known |= strlen(vkp__c_acts[a]) == len && strncmp(vkp__c_acts[a], p, len) == 0;
    if (!known || *count >= 6)
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "activation '%.*s' has no C kernel", (int)len, p);
    vkp__sb_printf(sb, "%svkp_act_%.*s", *count ? ", " : "", (int)len, p);
    ++*count;
    p = end ? end + 1 : p + len;
  }
  return NULL;
}

static void vkp__emit_floats(vkp__sb_t *sb, const vkp_attr_t *a) {
  vkp__sb_append(sb, "{");
  for (int32_t i = 0; a && i < a->count; ++i) {
    if (i) vkp__sb_append(sb, ", ");
    vkp__lit(sb, a->floats[i]);
  }
  vkp__sb_append(sb, "}");
}

vkp_status_t vkp__c_emit_rnn(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *lens = vkp__c_in(k, 4);
  int64_t layout1 = vkp_node_int(n, "layout") != 0;
  int64_t seq = x->shape[layout1 ? 1 : 0], batch = x->shape[layout1 ? 0 : 1],
          input = x->shape[2], hidden = vkp_node_int(n, "hidden_size");
  const char *direction = vkp_node_string(n, "direction");
  int64_t dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  int64_t gates = n->op == VKP_OP_LSTM ? 4 : n->op == VKP_OP_GRU ? 3 : 1;
  const char *kind = n->op == VKP_OP_LSTM  ? "VKP_RNN_LSTM"
                     : n->op == VKP_OP_GRU ? "VKP_RNN_GRU"
                                           : "VKP_RNN_RNN";
  vkp__sb_t *sb = k->body;
  vkp__sb_printf(sb,
                 "  static const vkp_rnn_t lp = {%s, %lld, %lld, %lld, %lld, %lld, %d, "
                 "%d, %d, %d, ",
                 kind, (long long)seq, (long long)batch, (long long)input,
                 (long long)hidden, (long long)dirs, strcmp(direction, "reverse") == 0,
                 (int)layout1, vkp_node_int(n, "input_forget") != 0,
                 vkp_node_int(n, "linear_before_reset") != 0);
  vkp__lit(sb, vkp_node_float(n, "clip"));
  vkp__sb_append(sb, ",\n      {");
  int32_t count;
  VKP_RETURN_IF_ERROR(vkp__emit_acts(sb, vkp_node_string(n, "activations"), &count));
  vkp__sb_append(sb, "},\n      ");
  vkp__emit_floats(sb, vkp_node_attr(n, "activation_alpha"));
  vkp__sb_append(sb, ", ");
  vkp__emit_floats(sb, vkp_node_attr(n, "activation_beta"));
  vkp__sb_append(sb, "};\n");
  // Inputs past the node's count, and omitted ones, are NULL.
  const char *in[8];
  for (int32_t i = 0; i < 8; ++i) in[i] = i < n->n_inputs && k->in[i] ? k->in[i] : "NULL";
  bool l32 = lens && lens->dtype == VKP_DTYPE_INT32, l64 = lens && !l32;
  vkp__sb_printf(sb,
                 "  vkp_rnn(&lp, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,\n"
                 "          scratch + (size_t)VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS, "
                 "scratch,\n          VKP_STAGE_THREADS);\n",
                 in[0], in[1], in[2], in[3], l32 ? in[4] : "NULL", l64 ? in[4] : "NULL",
                 in[5], n->op == VKP_OP_LSTM ? in[6] : "NULL",
                 n->op == VKP_OP_LSTM ? in[7] : "NULL", k->outs[0],
                 n->n_outputs > 1 ? k->outs[1] : "NULL",
                 n->n_outputs > 2 ? k->outs[2] : "NULL");
  k->scratch_floats = (size_t)(seq * batch * gates * hidden + batch * gates * hidden +
                               4 * batch * hidden + gates * hidden * hidden) +
                      1;  // never 0: the body uses scratch (VKP_RNN_SCRATCH_FLOATS)
  k->after_gemm_scratch = true;
  return NULL;
}
