// SPDX-License-Identifier: Apache-2.0
// ONNX If. A condition known at import time (a constant, or folded from
// constants) takes its branch inline: the branch's nodes join the graph
// under scoped names and the other branch is never read. A condition known
// only at run time imports both branches and picks each output with the
// IR's branch_select, whose result is bounded when the branches' shapes
// differ along one axis (torchvision's `if boxes.numel() == 0: return
// empty`). docs/onnx.md, "If", says why the branches join the flat graph
// (and how "ref" still runs only the taken one).
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

static vkp_status_t vkp__branch(const vkp__onnx_ctx_t *ctx, const char *name,
                                const Onnx__GraphProto **out) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, name);
  *out = a ? a->g : NULL;
  if (!*out) return VKP__ONNX_INVALID("attribute '%s' (a graph) is required", name);
  if ((*out)->n_output != ctx->node->n_output)
    return VKP__ONNX_INVALID("%s has %zu outputs; the node has %zu", name,
                             (*out)->n_output, ctx->node->n_output);
  return NULL;
}

// The symbol a branch output is; an error when the node producing it could
// not be imported (that problem is listed on its own).
static vkp_status_t vkp__branch_output(vkp__onnx_ctx_t *ctx, const char *label,
                                       const char *name, vkp__onnx_sym_t **out) {
  *out = vkp__onnx_sym_find(ctx, name);
  if (!*out)
    return VKP__ONNX_INVALID("%s_branch output '%s' is not defined in the "
                             "branch or an enclosing graph",
                             label, name);
  if ((*out)->poisoned)
    return VKP__ONNX_UNSUPPORTED("%s_branch output '%s' comes from a node that "
                                 "could not be imported (listed with it)",
                                 label, name);
  return NULL;
}

static void vkp__free_names(char **names, size_t n) {
  for (size_t i = 0; names && i < n; ++i) vkp__free(names[i]);
  vkp__free(names);
}

vkp_status_t vkp__map_if_else(vkp__onnx_ctx_t *ctx) {
  const Onnx__GraphProto *then_g, *else_g;
  VKP_RETURN_IF_ERROR(vkp__branch(ctx, "then_branch", &then_g));
  VKP_RETURN_IF_ERROR(vkp__branch(ctx, "else_branch", &else_g));
  vkp__onnx_sym_t *cond = vkp__onnx_input(ctx, 0);
  if (!cond) return VKP__ONNX_INVALID("input 0 (cond) is required");
  size_t n_out = ctx->node->n_output;
  char **then_names = vkp__calloc(n_out + 1, sizeof(char *));
  char **else_names = vkp__calloc(n_out + 1, sizeof(char *));
  vkp_status_t st = !then_names || !else_names ? VKP_OOM("If outputs") : NULL;
  if (!st && cond->is_const) {
    if (vkp__onnx_tensor_numel(&cond->constant) != 1)
      st = VKP__ONNX_INVALID("cond '%s' has %zu elements; one", cond->name,
                             vkp__onnx_tensor_numel(&cond->constant));
    bool taken = !st && vkp__onnx_tensor_get_i(&cond->constant, 0) != 0;
    const char *label = taken ? "then" : "else";
    if (!st)
      st = vkp__onnx_import_branch(ctx, taken ? then_g : else_g, label, then_names);
    for (size_t i = 0; i < n_out && !st; ++i) {
      const char *out = vkp__onnx_output(ctx, (int32_t)i);
      vkp__onnx_sym_t *s;
      st = vkp__branch_output(ctx, label, then_names[i], &s);
      if (!st && out) st = vkp__onnx_bind_alias(ctx, out, s);
    }
  } else if (!st) {
    int32_t c = -1;
    st = vkp__onnx_sym_value(ctx, cond, &c);
    if (!st) st = vkp__onnx_import_branch(ctx, then_g, "then", then_names);
    if (!st) st = vkp__onnx_import_branch(ctx, else_g, "else", else_names);
    for (size_t i = 0; i < n_out && !st; ++i) {
      const char *out = vkp__onnx_output(ctx, (int32_t)i);
      if (!out) continue;
      vkp__onnx_sym_t *a, *b;
      int32_t in[3] = {c, -1, -1}, y;
      st = vkp__branch_output(ctx, "then", then_names[i], &a);
      if (!st) st = vkp__branch_output(ctx, "else", else_names[i], &b);
      // sym_value adds IR constants, no symbols: a and b stay valid.
      if (!st) st = vkp__onnx_sym_value(ctx, a, &in[1]);
      if (!st) st = vkp__onnx_sym_value(ctx, b, &in[2]);
      if (!st) st = vkp__onnx_emit_bind(ctx, VKP_OP_BRANCH_SELECT, 3, in, 0, NULL, out, &y);
    }
  }
  vkp__free_names(then_names, n_out);
  vkp__free_names(else_names, n_out);
  return st;
}
