// SPDX-License-Identifier: Apache-2.0
// ONNX LSTM, GRU and RNN -> the IR's lstm, gru, rnn (graph/op_rnn.c): the
// same inputs and outputs (omitted ones stay omitted; an omitted Y gets an
// internal name, the IR always has it), activations as IR names with one
// alpha and beta per activation.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "graph/onnx_internal.h"
#include "graph/rnn.h"

// "HardSigmoid" -> "hard_sigmoid" (ONNX's names in CamelCase; lower case
// ones as ONNX Runtime accepts them stay as they are).
static void vkp__snake(const char *name, size_t len, char *out, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < len && o + 2 < size; ++i) {
    char c = name[i];
    if (isupper((unsigned char)c) && i > 0) out[o++] = '_';
    out[o++] = (char)tolower((unsigned char)c);
  }
  out[o] = '\0';
}

// Reads `activations`, `activation_alpha` and `activation_beta` into the
// IR's form: names joined by commas, alpha and beta one per activation
// (ONNX's lists are consumed in order by the activations that take
// parameters; the rest get their defaults).
static vkp_status_t vkp__rnn_activations(vkp__onnx_ctx_t *ctx, char *list,
                                         size_t list_size, double *alpha,
                                         double *beta, int32_t *count) {
  *count = 0;
  list[0] = '\0';
  const Onnx__AttributeProto *acts = vkp__onnx_attr(ctx, "activations");
  const Onnx__AttributeProto *aa = vkp__onnx_attr(ctx, "activation_alpha");
  const Onnx__AttributeProto *ab = vkp__onnx_attr(ctx, "activation_beta");
  if (!acts) {
    if ((aa && aa->n_floats) || (ab && ab->n_floats))
      return VKP__ONNX_INVALID("activation_alpha/beta without activations");
    return NULL;
  }
  if (acts->n_strings < 1 || acts->n_strings > 6)
    return VKP__ONNX_INVALID("activations lists %zu names (1 to 6)",
                             acts->n_strings);
  size_t next_alpha = 0, next_beta = 0, used = 0;
  for (size_t i = 0; i < acts->n_strings; ++i) {
    char name[64];
    vkp__snake((const char *)acts->strings[i].data, acts->strings[i].len, name,
               sizeof name);
    int32_t params;
    if (!vkp__rnn_activation(name, strlen(name), &alpha[i], &beta[i], &params))
      return VKP__ONNX_UNSUPPORTED("activation '%.*s' is not supported",
                                   (int)acts->strings[i].len,
                                   (const char *)acts->strings[i].data);
    if (params >= 1 && aa && next_alpha < aa->n_floats) alpha[i] = aa->floats[next_alpha++];
    if (params >= 2 && ab && next_beta < ab->n_floats) beta[i] = ab->floats[next_beta++];
    used += (size_t)snprintf(list + used, list_size - used, "%s%s", i ? "," : "", name);
    if (used >= list_size) return VKP__ONNX_INVALID("activations are too long");
  }
  if ((aa && next_alpha != aa->n_floats) || (ab && next_beta != ab->n_floats))
    return VKP__ONNX_INVALID("activation_alpha/beta have more values than the "
                             "activations take");
  *count = (int32_t)acts->n_strings;
  return NULL;
}

vkp_status_t vkp__map_rnn(vkp__onnx_ctx_t *ctx) {
  const char *type = ctx->node->op_type;
  vkp_op_t op = strcmp(type, "LSTM") == 0  ? VKP_OP_LSTM
                : strcmp(type, "GRU") == 0 ? VKP_OP_GRU
                                           : VKP_OP_RNN;
  int32_t max_in = op == VKP_OP_LSTM ? 8 : 6, max_out = op == VKP_OP_LSTM ? 3 : 2;
  size_t n_in = ctx->node->n_input;
  if (n_in < 3 || n_in > (size_t)max_in)
    return VKP__ONNX_INVALID("has %zu inputs; %s takes 3 to %d", n_in, type,
                             (int)max_in);
  for (size_t i = (size_t)max_out; i < ctx->node->n_output; ++i)
    if (vkp__onnx_output(ctx, (int32_t)i))
      return VKP__ONNX_INVALID("has output %zu; %s has %d", i, type, (int)max_out);
  int32_t in[8];
  for (int32_t i = 0; i < (int32_t)n_in; ++i) {
    in[i] = -1;
    if (i < 3 || vkp__onnx_input(ctx, i))
      VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in[i]));
  }
  char direction[32], acts[160];
  VKP_RETURN_IF_ERROR(
      vkp__onnx_attr_string(ctx, "direction", "forward", direction, sizeof direction));
  int64_t layout = 0, hidden = -1, flag = 0;
  double clip = 0, alpha[6], beta[6];
  int32_t n_acts;
  if (ctx->opset >= 14) VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "layout", 0, &layout));
  else if (vkp__onnx_attr(ctx, "layout"))
    return VKP__ONNX_INVALID("attribute 'layout' needs opset 14");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "hidden_size", -1, &hidden));
  if (vkp__onnx_attr(ctx, "clip")) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "clip", 0, &clip));
    if (!(clip > 0))
      return VKP__ONNX_INVALID("attribute 'clip' is %g; a positive threshold", clip);
  }
  VKP_RETURN_IF_ERROR(vkp__rnn_activations(ctx, acts, sizeof acts, alpha, beta, &n_acts));
  vkp_attr_t a[8];
  int32_t n_attrs = 0;
  a[n_attrs++] = (vkp_attr_t){.name = "direction", .kind = VKP_ATTR_STRING, .s = direction};
  a[n_attrs++] = vkp__onnx_a_int("layout", layout);
  a[n_attrs++] = vkp__onnx_a_float("clip", clip);
  if (hidden >= 0) a[n_attrs++] = vkp__onnx_a_int("hidden_size", hidden);
  if (n_acts) {
    a[n_attrs++] = (vkp_attr_t){.name = "activations", .kind = VKP_ATTR_STRING, .s = acts};
    a[n_attrs++] = (vkp_attr_t){.name = "activation_alpha", .kind = VKP_ATTR_FLOATS,
                                .floats = alpha, .count = n_acts};
    a[n_attrs++] = (vkp_attr_t){.name = "activation_beta", .kind = VKP_ATTR_FLOATS,
                                .floats = beta, .count = n_acts};
  }
  if (op == VKP_OP_LSTM) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "input_forget", 0, &flag));
    a[n_attrs++] = vkp__onnx_a_int("input_forget", flag != 0);
  } else if (op == VKP_OP_GRU) {
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "linear_before_reset", 0, &flag));
    a[n_attrs++] = vkp__onnx_a_int("linear_before_reset", flag != 0);
  }
  // The IR node has the outputs up to the last one used.
  const char *outs[3] = {NULL, NULL, NULL};
  int32_t n_out = 1, values[3];
  for (int32_t i = 0; i < max_out; ++i) {
    outs[i] = vkp__onnx_output(ctx, i);
    if (outs[i]) n_out = i + 1;
  }
  VKP_RETURN_IF_ERROR(vkp__onnx_emit_multi(ctx, op, (int32_t)n_in, in, n_attrs, a,
                                           n_out, outs, values));
  for (int32_t i = 0; i < n_out; ++i)
    if (outs[i]) VKP_RETURN_IF_ERROR(vkp__onnx_bind_value(ctx, outs[i], values[i]));
  return NULL;
}
