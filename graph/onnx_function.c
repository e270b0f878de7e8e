// SPDX-License-Identifier: Apache-2.0
// Model-local functions (ModelProto.functions): a node whose domain and op
// type name a function of the model is replaced by the function's body,
// imported in place like an If branch (onnx.c): each value the body defines
// is renamed "<call node>/<name>", its formal inputs and outputs stand for
// the call's, and attributes that refer to the call's (ref_attr_name) take
// their values. Exporters that build models from functions (torch's dynamo
// exporter, onnxscript) write every module as one.
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// Functions call functions at most this deep (a function calling itself,
// which ONNX forbids, stops here).
#define VKP__ONNX_MAX_FUNCTION_DEPTH 16

static bool vkp__same(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

const Onnx__FunctionProto *vkp__onnx_function_find(const vkp__onnx_ctx_t *ctx,
                                                   const char *domain,
                                                   const char *op_type) {
  const Onnx__ModelProto *m = ctx->model;
  for (size_t i = 0; m && i < m->n_functions; ++i) {
    const Onnx__FunctionProto *f = m->functions[i];
    if (f && vkp__same(f->domain, domain) && vkp__same(f->name, op_type)) return f;
  }
  return NULL;
}

// Maps `name` to `target` in the function's scope (formal inputs and
// outputs); `target` is copied.
static vkp_status_t vkp__scope_alias(vkp__onnx_scope_t *sc, const char *name,
                                     const char *target) {
  if (vkp_strmap_get(&sc->names, name) >= 0)
    return VKP__ONNX_INVALID("'%s' names two of the function's inputs and "
                             "outputs",
                             name);
  if (sc->n == sc->cap) {
    int32_t cap = sc->cap ? sc->cap * 2 : 16;
    char **r = vkp__reallocarray(sc->renamed, (size_t)cap, sizeof *r);
    if (!r) return VKP_OOM("function scope");
    sc->renamed = r;
    sc->cap = cap;
  }
  char *copy = vkp__strdup(target);
  if (!copy) return VKP_OOM("function scope");
  vkp_status_t st = vkp_strmap_put(&sc->names, name, sc->n);
  if (st) {
    vkp__free(copy);
    return st;
  }
  sc->renamed[sc->n++] = copy;
  return NULL;
}

// The attributes of body node `node` as the call gives them: one that
// refers to a function attribute (ref_attr_name) takes the call's
// attribute of that name under its own name, or is left out (the op's
// default) when the call does not set it. *out_attrs: an array of n
// pointers into *out_storage (both owned by the caller, vkp__free).
vkp_status_t vkp__onnx_call_attrs(const Onnx__NodeProto *call, const Onnx__NodeProto *node,
                                  Onnx__AttributeProto ***out_attrs,
                                  Onnx__AttributeProto **out_storage, size_t *out_n) {
  size_t n = node->n_attribute;
  Onnx__AttributeProto **attrs = vkp__calloc(n + 1, sizeof *attrs);
  Onnx__AttributeProto *storage = vkp__calloc(n + 1, sizeof *storage);
  if (!attrs || !storage) {
    vkp__free(attrs);
    vkp__free(storage);
    return VKP_OOM("function attributes");
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    const Onnx__AttributeProto *a = node->attribute[i];
    if (!a) continue;
    if (!a->ref_attr_name || !a->ref_attr_name[0]) {
      attrs[kept++] = (Onnx__AttributeProto *)a;
      continue;
    }
    for (size_t j = 0; j < call->n_attribute; ++j) {
      const Onnx__AttributeProto *c = call->attribute[j];
      if (!c || !vkp__same(c->name, a->ref_attr_name)) continue;
      storage[kept] = *c;
      storage[kept].name = a->name;
      attrs[kept] = &storage[kept];
      kept++;
      break;
    }
  }
  *out_attrs = attrs;
  *out_storage = storage;
  *out_n = kept;
  return NULL;
}

vkp_status_t vkp__onnx_inline_function(vkp__onnx_ctx_t *ctx,
                                       const Onnx__FunctionProto *fn) {
  const Onnx__NodeProto *call = ctx->node;
  if (ctx->function_depth >= VKP__ONNX_MAX_FUNCTION_DEPTH)
    return VKP__ONNX_UNSUPPORTED("model-local functions nested more than %d "
                                 "deep (or calling themselves)",
                                 (int)VKP__ONNX_MAX_FUNCTION_DEPTH);
  if (call->n_input > fn->n_input || call->n_output > fn->n_output)
    return VKP__ONNX_INVALID("the call has %zu inputs and %zu outputs; function "
                             "'%s' takes %zu and gives %zu",
                             call->n_input, call->n_output, fn->name,
                             fn->n_input, fn->n_output);
  // The function body's default-domain opset (it may differ from the
  // model's); the model's when the function does not name one.
  int64_t opset = ctx->opset;
  for (size_t i = 0; i < fn->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *o = fn->opset_import[i];
    if (o && o->has_version && (!o->domain || !o->domain[0] ||
                                strcmp(o->domain, "ai.onnx") == 0))
      opset = o->version;
  }
  if (opset < VKP_ONNX_MIN_OPSET || opset > VKP_ONNX_MAX_OPSET)
    return VKP__ONNX_UNSUPPORTED("function '%s' uses opset %lld of the default "
                                 "domain; vkpipe imports opsets %d to %d",
                                 fn->name, (long long)opset, VKP_ONNX_MIN_OPSET,
                                 VKP_ONNX_MAX_OPSET);
  const char *node_name = ctx->node_name;
  int32_t emitted = ctx->emitted, node_index = ctx->node_index;
  int64_t outer_opset = ctx->opset;
  vkp__onnx_scope_t sc = {.outer = ctx->scope};
  vkp_strmap_init(&sc.names);
  sc.prefix = vkp__asprintf("%s/", node_name);
  vkp_status_t st = sc.prefix ? NULL : VKP_OOM("function scope");
  // Formal inputs stand for the call's inputs (an omitted one for ""),
  // formal outputs for the call's outputs (an unused one for a name of
  // the function's own).
  for (size_t i = 0; i < fn->n_input && !st; ++i) {
    const char *actual = i < call->n_input && call->input[i] ? call->input[i] : "";
    st = vkp__scope_alias(&sc, fn->input[i] ? fn->input[i] : "", actual);
  }
  for (size_t i = 0; i < fn->n_output && !st; ++i) {
    const char *formal = fn->output[i] ? fn->output[i] : "";
    if (i < call->n_output && call->output[i] && call->output[i][0]) {
      st = vkp__scope_alias(&sc, formal, call->output[i]);
    } else {
      char *own = vkp__asprintf("%s%s", sc.prefix, formal);
      st = own ? vkp__scope_alias(&sc, formal, own) : VKP_OOM("function output");
      vkp__free(own);
    }
  }
  ctx->scope = &sc;
  ctx->opset = opset;
  ctx->function_depth++;
  for (size_t k = 0; k < fn->n_node && !st; ++k)
    st = vkp__import_scoped_node(ctx, &sc, fn->node[k], k, call);
  ctx->function_depth--;
  ctx->opset = outer_opset;
  ctx->scope = sc.outer;
  vkp__scope_deinit(&sc);
  ctx->node = call;
  ctx->node_name = node_name;
  ctx->emitted = emitted;
  ctx->node_index = node_index;
  return st;
}
