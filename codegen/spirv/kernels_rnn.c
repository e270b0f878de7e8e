// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the recurrent ops (lstm, gru, rnn; graph/op_rnn.c has
// their semantics): shaders/rnn.comp, one workgroup per (direction,
// sequence) with the state in shared memory, one dispatch per output
// written. The state is float32 (ref keeps it in double). This file
// writes the node's shapes, layout, weights' accessors and activation
// functions as GLSL.
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/spirv/glsl.h"
#include "codegen/spirv/kernels.h"

// The Vulkan minimum of maxComputeSharedMemorySize: the state (h, c, r (.)
// h and the gates' pre-activations) must fit it on every device.
#define VKP__RNN_SHARED_BYTES 16384u

static int32_t vkp__rnn_gate_count(vkp_op_t op) {
  return op == VKP_OP_LSTM ? 4 : op == VKP_OP_GRU ? 3 : 1;
}

// llvmpipe (lavapipe's compiler) ends a loop nest once all its loops
// together have iterated 65535 times, silently: it guards against shaders
// that never end. The kernel walks every step of a sequence inside one such
// nest, so a long sequence with a wide state would stop part-way and leave
// the later steps zero (found on a 100-step, 128-wide LSTM). This bounds the
// nest's iterations from above, with 64 invocations per workgroup (the
// fewest the generator uses), against the device's budget.

static uint64_t vkp__rnn_loop_iterations(const vkp_graph_t *g, const vkp_node_t *n) {
  const vkp_value_t *x = &g->values[n->inputs[0]];
  bool layout1 = vkp_node_int(n, "layout") != 0;
  uint64_t seq = (uint64_t)x->shape[layout1 ? 1 : 0], in = (uint64_t)x->shape[2];
  uint64_t h = (uint64_t)vkp_node_int(n, "hidden_size");
  uint64_t rows = (uint64_t)vkp__rnn_gate_count(n->op) * h;
  uint64_t per_step = (rows + 63u) / 64u * (in + h + 1u) + 4u * ((h + 63u) / 64u) * (h + 1u);
  return seq * (per_step + 2u);
}

bool vkp__spv_check_rnn(const vkp_graph_t *g, const vkp_node_t *n,
                        uint32_t loop_budget, char *reason, size_t reason_size) {
  int64_t hidden = vkp_node_int(n, "hidden_size");
  uint64_t bytes = (uint64_t)hidden * (uint64_t)(vkp__rnn_gate_count(n->op) + 3) * 4u;
  if (hidden < 1 || bytes > VKP__RNN_SHARED_BYTES) {
    snprintf(reason, reason_size,
             "%s with hidden_size %lld: the Vulkan kernel keeps the state in %u bytes "
             "of shared memory (%llu needed)",
             vkp_op_name(n->op), (long long)hidden, VKP__RNN_SHARED_BYTES,
             (unsigned long long)bytes);
    return false;
  }
  uint64_t iters = vkp__rnn_loop_iterations(g, n);
  if (!loop_budget || iters <= loop_budget) return true;
  snprintf(reason, reason_size,
           "%s over its whole sequence is one loop nest of about %llu iterations in the "
           "Vulkan kernel; lavapipe's compiler cuts any nest at %u (the later steps would "
           "be zero), so sequences this long with this state run elsewhere",
           vkp_op_name(n->op), (unsigned long long)iters, loop_budget);
  return false;
}

// GLSL for activation `name` with alpha a, beta b, applied to x.
static bool vkp__rnn_act_glsl(vkp__sb_t *s, const char *name, size_t len, double a,
                              double b) {
  char as[64], bs[64];
  vkp__glsl_literal(a, as, sizeof as);
  vkp__glsl_literal(b, bs, sizeof bs);
#define VKP__IS(lit) (len == sizeof(lit) - 1 && strncmp(name, lit, len) == 0)
  if (VKP__IS("relu")) vkp__sb_append(s, "max(x, 0.0)");
  else if (VKP__IS("tanh")) vkp__sb_append(s, "vkp_tanh(x)");
  else if (VKP__IS("sigmoid")) vkp__sb_append(s, "vkp_sigmoid(x)");
  else if (VKP__IS("affine")) vkp__sb_printf(s, "%s * x + %s", as, bs);
  else if (VKP__IS("leaky_relu")) vkp__sb_printf(s, "(x >= 0.0 ? x : %s * x)", as);
  else if (VKP__IS("thresholded_relu")) vkp__sb_printf(s, "(x > %s ? x : 0.0)", as);
  else if (VKP__IS("scaled_tanh")) vkp__sb_printf(s, "%s * vkp_tanh(%s * x)", as, bs);
  else if (VKP__IS("hard_sigmoid")) vkp__sb_printf(s, "clamp(%s * x + %s, 0.0, 1.0)", as, bs);
  else if (VKP__IS("elu")) vkp__sb_printf(s, "(x >= 0.0 ? x : %s * vkp_expm1(x))", as);
  else if (VKP__IS("softsign")) vkp__sb_append(s, "x / (1.0 + abs(x))");
  else if (VKP__IS("softplus")) vkp__sb_append(s, "vkp_softplus(x)");
  else return false;
#undef VKP__IS
  return true;
}

vkp_status_t vkp__spv_emit_rnn(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int32_t gates = vkp__rnn_gate_count(n->op);
  bool layout1 = vkp_node_int(n, "layout") != 0;
  const char *direction = vkp_node_string(n, "direction");
  uint64_t dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  uint64_t hidden = (uint64_t)vkp_node_int(n, "hidden_size");
  uint64_t seq = (uint64_t)x->shape[layout1 ? 1 : 0], batch = (uint64_t)x->shape[layout1 ? 0 : 1];
  uint64_t input = (uint64_t)x->shape[2];
  // Binding j of each present input slot (omitted inputs are not bound).
  int32_t at[8];
  for (int32_t i = 0, j = 0; i < 8; ++i)
    at[i] = i < n->n_inputs && n->inputs[i] >= 0 ? j++ : -1;
  vkp__sb_t *h = &e->head, *s = &e->body;
  vkp__sb_printf(h, "float vkp_x(uint i) { return LD%d(i); }\n", (int)at[0]);
  vkp__sb_printf(h, "float vkp_w(uint i) { return LD%d(i); }\n", (int)at[1]);
  vkp__sb_printf(h, "float vkp_r(uint i) { return LD%d(i); }\n", (int)at[2]);
  uint64_t gh = (uint64_t)gates * hidden;
  if (at[3] >= 0)
    vkp__sb_printf(h,
                   "float vkp_bias(uint d, uint which, uint g) { return LD%d((d * 2u + "
                   "which) * %lluu + g); }\n",
                   (int)at[3], (unsigned long long)gh);
  else
    vkp__sb_append(h, "float vkp_bias(uint d, uint which, uint g) { return 0.0; }\n");
  // sequence_lens: 32-bit words (an int64 as two, low first), clamped to
  // [0, SEQ] (ref refuses a length outside it).
  if (at[4] >= 0) {
    bool wide = vkp__spv_input(e->g, n, 4)->dtype == VKP_DTYPE_INT64;
    vkp__sb_printf(h,
                   "uint vkp_len(uint b) {\n  int v = int(IN%d[%sb]);\n"
                   "  return uint(clamp(v, 0, %d));\n}\n",
                   (int)at[4], wide ? "2u * " : "", (int)seq);
  } else {
    vkp__sb_printf(h, "uint vkp_len(uint b) { return %lluu; }\n", (unsigned long long)seq);
  }
  // Offsets of X[t, b, :], Y[t, d, b, :] and Y_h[d, b, :] (initial_h,
  // initial_c, Y_c) under the layout.
  unsigned long long S = seq, B = batch, D = dirs;
  if (layout1)
    vkp__sb_printf(h,
                   "uint vkp_x_at(uint t, uint b) { return (b * %lluu + t) * %lluu; }\n"
                   "uint vkp_y_at(uint t, uint d, uint b) { return ((b * %lluu + t) * %lluu "
                   "+ d) * %lluu; }\n"
                   "uint vkp_h_at(uint d, uint b) { return (b * %lluu + d) * %lluu; }\n",
                   S, (unsigned long long)input, S, D, (unsigned long long)hidden, D,
                   (unsigned long long)hidden);
  else
    vkp__sb_printf(h,
                   "uint vkp_x_at(uint t, uint b) { return (t * %lluu + b) * %lluu; }\n"
                   "uint vkp_y_at(uint t, uint d, uint b) { return ((t * %lluu + d) * %lluu "
                   "+ b) * %lluu; }\n"
                   "uint vkp_h_at(uint d, uint b) { return (d * %lluu + b) * %lluu; }\n",
                   B, (unsigned long long)input, D, B, (unsigned long long)hidden, B,
                   (unsigned long long)hidden);
  int32_t c0_slot = n->op == VKP_OP_LSTM ? 6 : -1, peep_slot = n->op == VKP_OP_LSTM ? 7 : -1;
  if (at[5] >= 0)
    vkp__sb_printf(h, "float vkp_h0(uint d, uint b, uint j) { return LD%d(vkp_h_at(d, b) + j); }\n",
                   (int)at[5]);
  else
    vkp__sb_append(h, "float vkp_h0(uint d, uint b, uint j) { return 0.0; }\n");
  if (c0_slot >= 0 && at[c0_slot] >= 0)
    vkp__sb_printf(h, "float vkp_c0(uint d, uint b, uint j) { return LD%d(vkp_h_at(d, b) + j); }\n",
                   (int)at[c0_slot]);
  else
    vkp__sb_append(h, "float vkp_c0(uint d, uint b, uint j) { return 0.0; }\n");
  if (peep_slot >= 0 && at[peep_slot] >= 0)
    vkp__sb_printf(h, "float vkp_peep(uint d, uint k) { return LD%d(d * %lluu + k); }\n",
                   (int)at[peep_slot], (unsigned long long)(3 * hidden));
  else
    vkp__sb_append(h, "float vkp_peep(uint d, uint k) { return 0.0; }\n");
  double clip = vkp_node_float(n, "clip");
  if (clip > 0) {
    char lit[64];
    vkp__glsl_literal(clip, lit, sizeof lit);
    vkp__sb_printf(h, "float vkp_clip(float v) { return clamp(v, -%s, %s); }\n", lit, lit);
  } else {
    vkp__sb_append(h, "float vkp_clip(float v) { return v; }\n");
  }
  // Activations: the canonical list names n_acts per direction, with one
  // alpha and beta each (graph/op_rnn.c).
  int32_t n_acts = n->op == VKP_OP_LSTM ? 3 : n->op == VKP_OP_GRU ? 2 : 1;
  const char *list = vkp_node_string(n, "activations");
  const vkp_attr_t *alpha = vkp_node_attr(n, "activation_alpha");
  const vkp_attr_t *beta = vkp_node_attr(n, "activation_beta");
  vkp__sb_append(h, "float vkp_act(uint d, uint slot, float x) {\n");
  const char *p = list ? list : "";
  for (int32_t i = 0; i < n_acts * (int32_t)dirs; ++i) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    double a = alpha && i < alpha->count ? alpha->floats[i] : 0.0;
    double b = beta && i < beta->count ? beta->floats[i] : 0.0;
    vkp__sb_printf(h, "  if (d == %du && slot == %du) return ", (int)(i / n_acts),
                   (int)(i % n_acts));
    if (!vkp__rnn_act_glsl(h, p, len, a, b))
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "node '%s': activation '%.*s' has no Vulkan form", n->name,
                             (int)len, p);
    vkp__sb_append(h, ";\n");
    p = end ? end + 1 : p + len;
  }
  vkp__sb_append(h, "  return x;\n}\n");
  uint32_t wg = e->config->local_1d;
  vkp__spv_define_u(s, "H", hidden);
  vkp__spv_define_u(s, "I", input);
  vkp__spv_define_u(s, "SEQ", seq);
  vkp__spv_define_u(s, "BATCH", batch);
  vkp__spv_define_u(s, "DIRS", dirs);
  vkp__spv_define_u(s, "GATES", (uint64_t)gates);
  vkp__spv_define_u(s, "WG", wg);
  vkp__spv_define_i(s, "PART", e->part);
  vkp__spv_define_i(s, "REVERSE", strcmp(direction, "reverse") == 0);
  vkp__spv_define_i(s, "LBR", vkp_node_int(n, "linear_before_reset") != 0);
  vkp__spv_define_i(s, "INPUT_FORGET", vkp_node_int(n, "input_forget") != 0);
  vkp__sb_append(s, n->op == VKP_OP_LSTM  ? "#define OP_LSTM 1\n"
                    : n->op == VKP_OP_GRU ? "#define OP_GRU 1\n"
                                          : "#define OP_RNN 1\n");
  e->k->local_size[0] = wg;
  e->k->local_size[1] = e->k->local_size[2] = 1;
  uint64_t sequences = dirs * batch;
  e->k->groups[0] = (uint32_t)(sequences ? sequences : 1);
  e->k->groups[1] = e->k->groups[2] = 1;
  vkp__spv_template(e, VKP__SHADER_rnn);
  return NULL;
}
