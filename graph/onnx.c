// SPDX-License-Identifier: Apache-2.0
// The ONNX loader: file -> ModelProto (protobuf-c) -> graph IR. Walks the
// nodes in order, folding what is known at import time and mapping the rest
// through the op table (onnx_ops.c). Every problem is collected and reported
// at once, one line per node.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "graph/bind.h"
#include "graph/graph_internal.h"
#include "graph/onnx_internal.h"
#include "graph/readers.h"
#include "vkpipe/onnx.h"

// ---------------------------------------------------------------------------
// Symbols

vkp__onnx_sym_t *vkp__onnx_sym_find(vkp__onnx_ctx_t *ctx, const char *name) {
  if (!name || !name[0]) return NULL;
  int32_t i = vkp_strmap_get(&ctx->sym_index, name);
  return i >= 0 ? &ctx->syms[i] : NULL;
}

static vkp_status_t vkp__sym_new(vkp__onnx_ctx_t *ctx, const char *name,
                                 vkp__onnx_sym_t **out) {
  if (!name || !name[0]) return VKP__ONNX_INVALID("a value has an empty name");
  if (vkp_strmap_get(&ctx->sym_index, name) >= 0)
    return VKP__ONNX_INVALID("value '%s' is defined twice", name);
  if (ctx->n_syms == ctx->cap_syms) {
    int32_t cap = ctx->cap_syms ? ctx->cap_syms * 2 : 64;
    vkp__onnx_sym_t *syms =
        vkp__reallocarray(ctx->syms, (size_t)cap, sizeof *syms);
    if (!syms) return VKP_OOM("ONNX symbol table");
    // The map keys point into the symbols' own names, which do not move.
    ctx->syms = syms;
    ctx->cap_syms = cap;
  }
  vkp__onnx_sym_t *s = &ctx->syms[ctx->n_syms];
  memset(s, 0, sizeof *s);
  s->value = -1;
  s->name = vkp__strdup(name);
  if (!s->name) return VKP_OOM("ONNX symbol");
  vkp_status_t st = vkp_strmap_put(&ctx->sym_index, s->name, ctx->n_syms);
  if (st) {
    vkp__free(s->name);
    return st;
  }
  ctx->n_syms++;
  *out = s;
  return NULL;
}

vkp_status_t vkp__onnx_bind_const(vkp__onnx_ctx_t *ctx, const char *name,
                                  vkp__onnx_tensor_t *t) {
  vkp__onnx_sym_t *s = NULL;
  vkp_status_t st = vkp__sym_new(ctx, name, &s);
  if (st) {
    vkp__onnx_tensor_deinit(t);
    return st;
  }
  s->is_const = true;
  s->constant = *t;
  memset(t, 0, sizeof *t);
  return NULL;
}

vkp_status_t vkp__onnx_bind_value(vkp__onnx_ctx_t *ctx, const char *name,
                                  int32_t value) {
  vkp__onnx_sym_t *s = NULL;
  VKP_RETURN_IF_ERROR(vkp__sym_new(ctx, name, &s));
  s->value = value;
  // A folded (or any constant) IR value is known at import time: later
  // nodes may read it as a host constant, borrowing the graph's bytes.
  const vkp_value_t *v = &ctx->graph->values[value];
  if (v->kind == VKP_VALUE_CONSTANT) {
    s->is_const = true;
    s->borrowed = true;
    s->constant.type = vkp__onnx_type_from_dtype(v->dtype);
    s->constant.rank = v->rank;
    for (int32_t i = 0; i < v->rank; ++i) s->constant.shape[i] = v->shape[i];
    s->constant.data = v->data;
    s->constant.nbytes = v->nbytes;
  }
  return NULL;
}

int32_t vkp__onnx_sym_index(const vkp__onnx_ctx_t *ctx,
                            const vkp__onnx_sym_t *sym) {
  return (int32_t)(sym - ctx->syms);
}

const char *vkp__onnx_sym_kind_name(vkp__onnx_sym_kind_t kind) {
  switch (kind) {
    case VKP__SYM_SEQUENCE: return "a sequence";
    case VKP__SYM_OPTIONAL: return "an optional";
    case VKP__SYM_TENSOR: break;
  }
  return "a tensor";
}

vkp_status_t vkp__onnx_bind_list(vkp__onnx_ctx_t *ctx, const char *name,
                                 vkp__onnx_sym_kind_t kind,
                                 const int32_t *items, int32_t n,
                                 int32_t elem_type) {
  int32_t *copy = vkp__calloc((size_t)n + 1, sizeof *copy);
  if (!copy) return VKP_OOM("sequence elements");
  if (n) memcpy(copy, items, (size_t)n * sizeof *copy);
  vkp__onnx_sym_t *s = NULL;
  vkp_status_t st = vkp__sym_new(ctx, name, &s);
  if (st) {
    vkp__free(copy);
    return st;
  }
  s->kind = kind;
  s->items = copy;
  s->n_items = n;
  s->elem_type = elem_type;
  return NULL;
}

vkp_status_t vkp__onnx_bind_alias(vkp__onnx_ctx_t *ctx, const char *name,
                                  const vkp__onnx_sym_t *sym) {
  if (sym->kind != VKP__SYM_TENSOR)
    // bind_list copies the items before the symbol table can move.
    return vkp__onnx_bind_list(ctx, name, sym->kind, sym->items, sym->n_items,
                               sym->elem_type);
  if (sym->is_const) {
    vkp__onnx_tensor_t copy;
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
        &copy, sym->constant.type, sym->constant.rank, sym->constant.shape));
    if (copy.nbytes) memcpy(copy.data, sym->constant.data, copy.nbytes);
    return vkp__onnx_bind_const(ctx, name, &copy);
  }
  return vkp__onnx_bind_value(ctx, name, sym->value);
}

static vkp_status_t vkp__bind_poisoned(vkp__onnx_ctx_t *ctx, const char *name) {
  if (!name || !name[0] || vkp__onnx_sym_find(ctx, name)) return NULL;
  vkp__onnx_sym_t *s = NULL;
  VKP_RETURN_IF_ERROR(vkp__sym_new(ctx, name, &s));
  s->poisoned = true;
  return NULL;
}

vkp__onnx_sym_t *vkp__onnx_input(vkp__onnx_ctx_t *ctx, int32_t i) {
  if (i < 0 || (size_t)i >= ctx->node->n_input) return NULL;
  return vkp__onnx_sym_find(ctx, ctx->node->input[i]);
}

const char *vkp__onnx_output(const vkp__onnx_ctx_t *ctx, int32_t i) {
  if (i < 0 || (size_t)i >= ctx->node->n_output) return NULL;
  const char *o = ctx->node->output[i];
  return o && o[0] ? o : NULL;
}

void vkp__onnx_sym_shape(const vkp__onnx_ctx_t *ctx, const vkp__onnx_sym_t *sym,
                         int32_t *out_rank, int64_t *out_shape) {
  if (sym->kind != VKP__SYM_TENSOR || (!sym->is_const && sym->value < 0)) {
    *out_rank = 0;  // a list or a poisoned symbol has no shape
    return;
  }
  if (sym->is_const) {
    *out_rank = sym->constant.rank;
    for (int32_t i = 0; i < sym->constant.rank; ++i)
      out_shape[i] = sym->constant.shape[i];
    return;
  }
  const vkp_value_t *v = &ctx->graph->values[sym->value];
  *out_rank = v->rank;
  for (int32_t i = 0; i < v->rank; ++i) out_shape[i] = v->shape[i];
}

// A fresh name "<base>" or "<base>_<k>" unused by IR values, nodes and
// ONNX symbols.
// Remembers that `key`'s names are taken up to suffix next - 1; false when
// out of memory (reported as such, like every allocation of the import).
static bool vkp__fresh_remember(vkp__onnx_ctx_t *ctx, const char *key, int32_t slot,
                                int32_t next) {
  if (slot >= 0) {
    ctx->fresh_suffix[slot] = next;
    return true;
  }
  if (ctx->n_fresh == ctx->cap_fresh) {
    int32_t cap = ctx->cap_fresh ? ctx->cap_fresh * 2 : 32;
    char **keys = vkp__reallocarray(ctx->fresh_keys, (size_t)cap, sizeof *keys);
    if (!keys) return false;
    ctx->fresh_keys = keys;
    int32_t *suffix = vkp__reallocarray(ctx->fresh_suffix, (size_t)cap, sizeof *suffix);
    if (!suffix) return false;
    ctx->fresh_suffix = suffix;
    ctx->cap_fresh = cap;
  }
  char *copy = vkp__strdup(key);
  if (!copy) return false;
  vkp_status_t st = vkp_strmap_put(&ctx->fresh_slot, copy, ctx->n_fresh);
  if (st) {
    vkp_status_free(st);
    vkp__free(copy);
    return false;
  }
  ctx->fresh_keys[ctx->n_fresh] = copy;
  ctx->fresh_suffix[ctx->n_fresh++] = next;
  return true;
}

char *vkp__fresh_name(vkp__onnx_ctx_t *ctx, const char *base,
                             bool for_node) {
  // Starts after the last suffix handed out for this base: probing from 0
  // each time made n names from one base (a stacked scan output, an
  // unrolled loop) cost O(n^2).
  char *key = vkp__asprintf("%c:%s", for_node ? 'n' : 'v', base);
  if (!key) return NULL;
  // The base itself is tried first: a name folded away or rolled back is
  // free again, and keeps its plain form.
  int32_t slot = vkp_strmap_get(&ctx->fresh_slot, key);
  int32_t from = slot >= 0 ? ctx->fresh_suffix[slot] : 0;
  for (int32_t k = 0;; k = k == 0 && from > 1 ? from : k + 1) {
    char *name = k == 0 ? vkp__strdup(base) : vkp__asprintf("%s_%d", base, (int)k);
    if (!name) break;
    bool taken = for_node ? vkp_graph_find_node(ctx->graph, name) >= 0
                          : vkp_graph_find_value(ctx->graph, name) >= 0 ||
                                vkp__onnx_sym_find(ctx, name) != NULL;
    if (!taken) {
      if (k < from) {  // the plain base, free again: the memo stands
        vkp__free(key);
        return name;
      }
      if (!vkp__fresh_remember(ctx, key, slot, k + 1)) {
        vkp__free(name);
        name = NULL;
      }
      vkp__free(key);
      return name;
    }
    vkp__free(name);
  }
  vkp__free(key);
  return NULL;
}

vkp_status_t vkp__onnx_add_const(vkp__onnx_ctx_t *ctx,
                                 const vkp__onnx_tensor_t *t,
                                 int32_t *out_value) {
  vkp_dtype_t dtype;
  if (!vkp__onnx_type_to_dtype(t->type, &dtype))
    return VKP__ONNX_UNSUPPORTED("constant of type %s: the IR has no such dtype",
                                 vkp__onnx_type_name(t->type));
  char *base = vkp__asprintf("%s:const", ctx->node_name ? ctx->node_name : "onnx");
  char *name = base ? vkp__fresh_name(ctx, base, false) : NULL;
  vkp__free(base);
  if (!name) return VKP_OOM("constant name");
  vkp_status_t st = vkp_graph_add_constant(ctx->graph, name, dtype, t->rank,
                                           t->shape, t->data, out_value);
  vkp__free(name);
  return st;
}

vkp_status_t vkp__onnx_sym_value(vkp__onnx_ctx_t *ctx, vkp__onnx_sym_t *sym,
                                 int32_t *out_value) {
  if (sym->kind != VKP__SYM_TENSOR)
    return VKP__ONNX_UNSUPPORTED("'%s' is %s (an import-time list of %d "
                                 "tensors), not a tensor",
                                 sym->name, vkp__onnx_sym_kind_name(sym->kind),
                                 (int)sym->n_items);
  if (sym->value >= 0) {
    *out_value = sym->value;
    return NULL;
  }
  // First IR use of a host constant: it becomes an IR constant under its
  // ONNX name when that is free.
  vkp_dtype_t dtype;
  if (!vkp__onnx_type_to_dtype(sym->constant.type, &dtype))
    return VKP__ONNX_UNSUPPORTED("'%s' has type %s, which the IR has not got",
                                 sym->name,
                                 vkp__onnx_type_name(sym->constant.type));
  char *name = vkp__fresh_name(ctx, sym->name, false);
  if (!name) return VKP_OOM("constant name");
  // The symbol itself holds sym->name, so fresh_name never returns it; use
  // the ONNX name when the graph lacks it.
  vkp_status_t st;
  if (vkp_graph_find_value(ctx->graph, sym->name) < 0)
    st = vkp_graph_add_constant(ctx->graph, sym->name, dtype,
                                sym->constant.rank, sym->constant.shape,
                                sym->constant.data, &sym->value);
  else
    st = vkp_graph_add_constant(ctx->graph, name, dtype, sym->constant.rank,
                                sym->constant.shape, sym->constant.data,
                                &sym->value);
  vkp__free(name);
  VKP_RETURN_IF_ERROR(st);
  // The graph now holds the same bytes: borrow them instead of keeping a
  // second copy (peak memory).
  vkp__free(sym->constant.data);
  sym->constant.data = ctx->graph->values[sym->value].data;
  sym->borrowed = true;
  *out_value = sym->value;
  return NULL;
}

vkp_status_t vkp__onnx_input_value(vkp__onnx_ctx_t *ctx, int32_t i,
                                   int32_t *out_value) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s) return VKP__ONNX_INVALID("input %d is required", (int)i);
  return vkp__onnx_sym_value(ctx, s, out_value);
}

vkp_status_t vkp__onnx_input_const(vkp__onnx_ctx_t *ctx, int32_t i,
                                   const char *what,
                                   const vkp__onnx_tensor_t **out) {
  *out = NULL;
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s) return NULL;
  if (!s->is_const)
    return VKP__ONNX_UNSUPPORTED("%s (input %d, '%s') must be known at import "
                                 "time (an initializer or a constant "
                                 "expression)",
                                 what, (int)i, s->name);
  *out = &s->constant;
  return NULL;
}

vkp_status_t vkp__onnx_emit(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t n_in,
                            const int32_t *inputs, int32_t n_attrs,
                            const vkp_attr_t *attrs, const char *out_name,
                            int32_t *out_value) {
  return vkp__onnx_emit_multi(ctx, op, n_in, inputs, n_attrs, attrs, 1,
                              &out_name, out_value);
}

vkp_status_t vkp__onnx_emit2(vkp__onnx_ctx_t *ctx, vkp_op_t op, int32_t a, int32_t b,
                             int32_t *out_value) {
  const int32_t in[2] = {a, b};
  return vkp__onnx_emit(ctx, op, 2, in, 0, NULL, NULL, out_value);
}

vkp_status_t vkp__onnx_emit_multi(vkp__onnx_ctx_t *ctx, vkp_op_t op,
                                  int32_t n_in, const int32_t *inputs,
                                  int32_t n_attrs, const vkp_attr_t *attrs,
                                  int32_t n_out, const char *const *out_names,
                                  int32_t *out_values) {
  const char *in_names[64];
  if (n_in > 64) return VKP__ONNX_UNSUPPORTED("too many inputs (%d)", (int)n_in);
  if (n_out < 1 || n_out > 64)
    return VKP__ONNX_UNSUPPORTED("%d outputs (1 to 64)", (int)n_out);
  for (int32_t i = 0; i < n_in; ++i)
    in_names[i] = inputs[i] >= 0 ? ctx->graph->values[inputs[i]].name : NULL;
  char *node_name = ctx->emitted == 0
                        ? vkp__fresh_name(ctx, ctx->node_name, true)
                        : NULL;
  if (ctx->emitted != 0) {
    char *base = vkp__asprintf("%s/%s", ctx->node_name, vkp_op_name(op));
    node_name = base ? vkp__fresh_name(ctx, base, true) : NULL;
    vkp__free(base);
  }
  // Outputs without an ONNX name get fresh internal ones.
  char *value_names[64] = {NULL};
  const char *outs[64];
  bool oom = !node_name;
  for (int32_t i = 0; i < n_out && !oom; ++i) {
    outs[i] = out_names[i];
    if (outs[i]) continue;
    // Output k of a node with several: "<node>:<op>.<k>", distinct before
    // any of them is in the graph.
    char *base = n_out > 1 ? vkp__asprintf("%s:%s.%d", ctx->node_name,
                                           vkp_op_name(op), (int)i)
                           : vkp__asprintf("%s:%s", ctx->node_name, vkp_op_name(op));
    value_names[i] = base ? vkp__fresh_name(ctx, base, false) : NULL;
    vkp__free(base);
    outs[i] = value_names[i];
    oom = !outs[i];
  }
  vkp_status_t st = NULL;
  if (oom) {
    st = VKP_OOM("node name");
  } else {
    int32_t index;
    st = vkp_graph_add_node(ctx->graph, node_name, op, n_in, in_names, n_out,
                            outs, n_attrs, attrs, &index);
    if (!st) {
      ctx->emitted++;
      st = vkp__op_infer(ctx->graph, index);
      if (st) {
        st = vkp_status_annotate(st, "as IR %s", vkp_op_name(op));
      } else {
        for (int32_t i = 0; i < n_out; ++i)
          out_values[i] = ctx->graph->nodes[index].outputs[i];
        bool folded = false;
        if (!ctx->no_fold) st = vkp__onnx_fold_ir_node(ctx, index, &folded);
      }
    }
  }
  vkp__free(node_name);
  for (int32_t i = 0; i < n_out; ++i) vkp__free(value_names[i]);
  return st;
}

// ---------------------------------------------------------------------------
// Attributes

const Onnx__AttributeProto *vkp__onnx_attr(const vkp__onnx_ctx_t *ctx,
                                           const char *name) {
  for (size_t i = 0; i < ctx->node->n_attribute; ++i) {
    const Onnx__AttributeProto *a = ctx->node->attribute[i];
    if (a && a->name && strcmp(a->name, name) == 0) return a;
  }
  return NULL;
}

static vkp_status_t vkp__attr_kind(const Onnx__AttributeProto *a, int want,
                                   const char *want_name) {
  // Old exporters leave `type` out; then the filled field decides.
  if (!a->has_type) return NULL;
  if ((int)a->type != want)
    return VKP__ONNX_INVALID("attribute '%s' must be %s (type %d)", a->name,
                             want_name, (int)a->type);
  return NULL;
}

vkp_status_t vkp__onnx_attr_int(const vkp__onnx_ctx_t *ctx, const char *name,
                                int64_t fallback, int64_t *out) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, name);
  *out = fallback;
  if (!a) return NULL;
  VKP_RETURN_IF_ERROR(
      vkp__attr_kind(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an int"));
  *out = a->i;
  return NULL;
}

vkp_status_t vkp__onnx_attr_float(const vkp__onnx_ctx_t *ctx,
                                  const char *name, double fallback,
                                  double *out) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, name);
  *out = fallback;
  if (!a) return NULL;
  if (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) {
    *out = (double)a->i;
    return NULL;
  }
  VKP_RETURN_IF_ERROR(vkp__attr_kind(
      a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a float"));
  *out = a->f;
  return NULL;
}

vkp_status_t vkp__onnx_attr_ints(const vkp__onnx_ctx_t *ctx, const char *name,
                                 int64_t *out, int32_t cap,
                                 int32_t *out_count) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, name);
  *out_count = -1;
  if (!a) return NULL;
  VKP_RETURN_IF_ERROR(vkp__attr_kind(
      a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "a list of ints"));
  if (a->n_ints > (size_t)cap)
    return VKP__ONNX_UNSUPPORTED("attribute '%s' has %zu entries; at most %d",
                                 name, a->n_ints, (int)cap);
  for (size_t i = 0; i < a->n_ints; ++i) out[i] = a->ints[i];
  *out_count = (int32_t)a->n_ints;
  return NULL;
}

vkp_status_t vkp__onnx_attr_string(const vkp__onnx_ctx_t *ctx,
                                   const char *name, const char *fallback,
                                   char *buf, size_t buf_size) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, name);
  snprintf(buf, buf_size, "%s", fallback);
  if (!a) return NULL;
  VKP_RETURN_IF_ERROR(vkp__attr_kind(
      a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "a string"));
  size_t n = a->has_s ? a->s.len : 0;
  if (n >= buf_size)
    return VKP__ONNX_INVALID("attribute '%s' is too long (%zu bytes)", name, n);
  if (n) memcpy(buf, a->s.data, n);
  buf[n] = '\0';
  return NULL;
}

// ---------------------------------------------------------------------------
// Loader

static void vkp__ctx_deinit(vkp__onnx_ctx_t *ctx) {
  for (int32_t i = 0; i < ctx->n_syms; ++i) {
    if (ctx->syms[i].borrowed) ctx->syms[i].constant.data = NULL;
    vkp__onnx_tensor_deinit(&ctx->syms[i].constant);
    vkp__free(ctx->syms[i].items);
    vkp__free(ctx->syms[i].name);
  }
  vkp__free(ctx->syms);
  vkp_strmap_deinit(&ctx->sym_index);
  vkp_strmap_deinit(&ctx->fresh_slot);
  for (int32_t i = 0; i < ctx->n_fresh; ++i) vkp__free(ctx->fresh_keys[i]);
  vkp__free(ctx->fresh_keys);
  vkp__free(ctx->fresh_suffix);
  vkp__free(ctx->fold_bn);
  vkp__free(ctx->skip);
  vkp__free(ctx->fusion_at);
  for (int32_t i = 0; i < ctx->n_fusions; ++i) vkp__free(ctx->fusions[i].nodes);
  vkp__free(ctx->fusions);
  vkp__binder_deinit(&ctx->binder);
  vkp_graph_destroy(ctx->graph);
}

static bool vkp__is_default_domain(const char *domain) {
  return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

static bool vkp__is_ms_domain(const char *domain) {
  return domain && strcmp(domain, "com.microsoft") == 0;
}

void vkp_onnx_list_element_name(const char *name, int32_t k, char *buf,
                                size_t size) {
  snprintf(buf, size, "%s[%d]", name, (int)k);
}

// The tensor element type a sequence type declares (0: none given); false
// when its elements are not tensors.
static bool vkp__sequence_elem(const Onnx__TypeProto *seq, int32_t *out_type) {
  const Onnx__TypeProto *e =
      seq && seq->sequence_type ? seq->sequence_type->elem_type : NULL;
  *out_type = 0;
  if (!e) return true;
  if (e->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return false;
  if (e->tensor_type && e->tensor_type->has_elem_type)
    *out_type = e->tensor_type->elem_type;
  return true;
}

// A sequence or optional graph input `name` of declared type `tp`, given
// by the options as `l`: one graph input "<name>[k]" per tensor, and the
// list symbol over them.
static vkp_status_t vkp__add_list_input(vkp__onnx_ctx_t *ctx, const char *name,
                                        const Onnx__TypeProto *tp,
                                        const vkp_onnx_list_t *l) {
  bool is_seq = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  const Onnx__TypeProto *elem =
      is_seq ? NULL : tp->optional_type ? tp->optional_type->elem_type : NULL;
  bool of_seq = elem && elem->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  int32_t elem_type = 0;
  if ((is_seq && l->kind != VKP_ONNX_SEQUENCE) || (!is_seq && l->kind != VKP_ONNX_OPTIONAL))
    return VKP__ONNX_INVALID("the model declares %s; the options give %s",
                             is_seq ? "a sequence" : "an optional",
                             l->kind == VKP_ONNX_SEQUENCE ? "a sequence" : "an optional");
  if (!is_seq && l->present && l->of_sequence != of_seq)
    return VKP__ONNX_INVALID("the model declares an optional of %s; the options "
                             "give one of %s",
                             of_seq ? "a sequence" : "a tensor",
                             l->of_sequence ? "a sequence" : "a tensor");
  if (!vkp__sequence_elem(is_seq ? tp : of_seq ? elem : NULL, &elem_type))
    return VKP__ONNX_UNSUPPORTED("a sequence whose elements are not tensors");
  if (!is_seq && !of_seq && elem && elem->tensor_type && elem->tensor_type->has_elem_type)
    elem_type = elem->tensor_type->elem_type;
  if (!is_seq && elem && elem->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && !of_seq)
    return VKP__ONNX_UNSUPPORTED("an optional of neither a tensor nor a sequence");
  if (l->n < 0 || l->n > 4096 || (!is_seq && !of_seq && l->present && l->n != 1))
    return VKP__ONNX_INVALID("the options give %d tensors for it", (int)l->n);
  int32_t n = is_seq || l->present ? l->n : 0;
  int32_t *items = vkp__calloc((size_t)n + 1, sizeof *items);
  if (!items) return VKP_OOM("list input");
  vkp_status_t st = NULL;
  for (int32_t k = 0; k < n && !st; ++k) {
    const vkp_tensor_t *t = &l->tensors[k];
    char element[512];
    vkp_onnx_list_element_name(name, k, element, sizeof element);
    if (elem_type && vkp__onnx_type_from_dtype(t->dtype) != elem_type) {
      st = VKP__ONNX_INVALID("element %d is %s; the model declares %s", (int)k,
                             vkp_dtype_name(t->dtype), vkp__onnx_type_name(elem_type));
      break;
    }
    int32_t value;
    st = vkp_graph_add_input(ctx->graph, element, t->dtype, t->rank, t->shape, &value);
    if (!st) st = vkp__onnx_bind_value(ctx, element, value);
    if (!st) items[k] = vkp__onnx_sym_index(ctx, vkp__onnx_sym_find(ctx, element));
  }
  if (!st && is_seq) {
    st = vkp__onnx_bind_list(ctx, name, VKP__SYM_SEQUENCE, items, n, elem_type);
  } else if (!st && of_seq && l->present) {
    // The optional's sequence gets a symbol of its own: "<name>#sequence".
    char inner[512];
    snprintf(inner, sizeof inner, "%s#sequence", name);
    st = vkp__onnx_bind_list(ctx, inner, VKP__SYM_SEQUENCE, items, n, elem_type);
    int32_t seq = st ? -1 : vkp__onnx_sym_index(ctx, vkp__onnx_sym_find(ctx, inner));
    if (!st) st = vkp__onnx_bind_list(ctx, name, VKP__SYM_OPTIONAL, &seq, 1, 0);
  } else if (!st) {
    st = vkp__onnx_bind_list(ctx, name, VKP__SYM_OPTIONAL, items, n, 0);
  }
  vkp__free(items);
  return st;
}

static vkp_status_t vkp__add_graph_input(vkp__onnx_ctx_t *ctx,
                                         const Onnx__ValueInfoProto *vi) {
  const char *name = vi->name;
  // onnx.proto is proto2: an unset name is NULL, not "".
  if (!name || !name[0]) return VKP__ONNX_INVALID("a graph input has no name");
  const Onnx__TypeProto *tp = vi->type;
  const vkp_onnx_options_t *o = ctx->options;
  for (int32_t i = 0; tp && i < o->n_lists; ++i)
    if (o->list_names[i] && strcmp(o->list_names[i], name) == 0 &&
        (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
         tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE))
      return vkp__add_list_input(ctx, name, tp, &o->lists[i]);
  if (tp && (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
             tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE))
    return VKP__ONNX_UNSUPPORTED(
        "%s graph input: vkpipe resolves sequences and optionals at "
        "import, so their length and presence must be known there (built "
        "inside the model, or given by the load options)",
        tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? "a sequence"
                                                                : "an optional");
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type)
    return VKP__ONNX_UNSUPPORTED("only tensor inputs are supported");
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int32_t elem = tt->has_elem_type ? tt->elem_type : 0;
  vkp_dtype_t dtype;
  if (!vkp__onnx_type_to_dtype(elem, &dtype))
    return VKP__ONNX_UNSUPPORTED("dtype %s is not supported",
                                 vkp__onnx_type_name(elem));
  if (!tt->shape)
    return VKP__ONNX_UNSUPPORTED("the rank is not given; vkpipe needs it (and "
                                 "static sizes, which --shape can give)");
  if (tt->shape->n_dim > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("rank %zu exceeds %d", tt->shape->n_dim,
                                 VKP_MAX_RANK);
  int64_t declared[VKP_MAX_RANK], shape[VKP_MAX_RANK];
  const char *names[VKP_MAX_RANK];
  int32_t rank = (int32_t)tt->shape->n_dim;
  for (int32_t i = 0; i < rank; ++i) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    bool is_value = d && d->value_case ==
                             ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    bool is_param = d && d->value_case ==
                             ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    if (is_value && d->dim_value < 0)
      return VKP__ONNX_INVALID("dimension %d is %lld", (int)i,
                               (long long)d->dim_value);
    declared[i] = is_value ? d->dim_value : -1;
    names[i] = is_param ? d->dim_param : NULL;
  }
  int32_t bounded_axis;
  VKP_RETURN_IF_ERROR(vkp__binder_shape(&ctx->binder, name, rank, declared, names,
                                        shape, &bounded_axis));
  int32_t value;
  VKP_RETURN_IF_ERROR(
      vkp_graph_add_input(ctx->graph, name, dtype, rank, shape, &value));
  if (bounded_axis >= 0)
    VKP_RETURN_IF_ERROR(vkp_graph_set_input_bounded(ctx->graph, name, bounded_axis));
  return vkp__onnx_bind_value(ctx, name, value);
}

// Binds graph input `name` to the constant the options give for it, if any.
static vkp_status_t vkp__freeze_input(vkp__onnx_ctx_t *ctx, const char *name,
                                      bool *out_frozen) {
  *out_frozen = false;
  const vkp_onnx_options_t *o = ctx->options;
  for (int32_t i = 0; i < o->n_constants; ++i) {
    if (!o->constant_names[i] || strcmp(o->constant_names[i], name) != 0)
      continue;
    const vkp_tensor_t *t = &o->constants[i];
    vkp__binder_skip_input(&ctx->binder, name);
    vkp__onnx_tensor_t c;
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(
        &c, vkp__onnx_type_from_dtype(t->dtype), t->rank, t->shape));
    if (c.nbytes) memcpy(c.data, t->data, c.nbytes);
    *out_frozen = true;
    return vkp__onnx_bind_const(ctx, name, &c);
  }
  return NULL;
}

vkp_status_t vkp__onnx_mark_branch_uses(const Onnx__NodeProto *node,
                                        vkp_strmap_t *uses, int32_t count) {
  for (size_t a = 0; a < node->n_attribute; ++a) {
    const Onnx__AttributeProto *attr = node->attribute[a];
    const Onnx__GraphProto *sub = attr ? attr->g : NULL;
    for (size_t k = 0; sub && k < sub->n_node; ++k) {
      const Onnx__NodeProto *inner = sub->node[k];
      for (size_t i = 0; i < inner->n_input; ++i)
        if (inner->input[i] && inner->input[i][0])
          VKP_RETURN_IF_ERROR(vkp_strmap_put(uses, inner->input[i], count));
      VKP_RETURN_IF_ERROR(vkp__onnx_mark_branch_uses(inner, uses, count));
    }
    for (size_t o = 0; sub && o < sub->n_output; ++o)
      if (sub->output[o] && sub->output[o]->name && sub->output[o]->name[0])
        VKP_RETURN_IF_ERROR(vkp_strmap_put(uses, sub->output[o]->name, count));
  }
  return NULL;
}

// Finds Conv -> BatchNormalization pairs where the Conv's output feeds only
// that BatchNormalization (and is no graph output).
static vkp_status_t vkp__plan_bn_folds(vkp__onnx_ctx_t *ctx) {
  const Onnx__GraphProto *g = ctx->onnx_graph;
  size_t n = g->n_node;
  ctx->fold_bn = vkp__calloc(n + 1, sizeof(int32_t));
  ctx->skip = vkp__calloc(n + 1, sizeof(bool));
  if (!ctx->fold_bn || !ctx->skip) return VKP_OOM("fusion plan");
  vkp_strmap_t uses;  // value name -> consumer count (node index + 1 of last)
  vkp_strmap_init(&uses);
  vkp_status_t st = NULL;
  for (size_t i = 0; i < n; ++i) ctx->fold_bn[i] = -1;
  for (size_t i = 0; i < n && !st; ++i) {
    const Onnx__NodeProto *node = g->node[i];
    for (size_t j = 0; j < node->n_input && !st; ++j) {
      const char *in = node->input[j];
      if (!in || !in[0]) continue;
      int32_t c = vkp_strmap_get(&uses, in);
      st = vkp_strmap_put(&uses, in, c < 0 ? 1 : c + 1);
    }
  }
  // Values an If branch reads are used elsewhere (after the counting above,
  // so that nothing overwrites the mark).
  for (size_t i = 0; i < n && !st; ++i)
    st = vkp__onnx_mark_branch_uses(g->node[i], &uses, 1000);
  for (size_t i = 0; i < g->n_output && !st; ++i) {
    const char *o = g->output[i] ? g->output[i]->name : NULL;
    if (o && o[0]) st = vkp_strmap_put(&uses, o, 1000);
  }
  for (size_t i = 0; i < n && !st; ++i) {
    const Onnx__NodeProto *conv = g->node[i];
    if (!conv->op_type || strcmp(conv->op_type, "Conv") != 0 ||
        !vkp__is_default_domain(conv->domain) || conv->n_output != 1 ||
        !conv->output[0] || !conv->output[0][0])
      continue;
    if (vkp_strmap_get(&uses, conv->output[0]) != 1) continue;
    for (size_t j = i + 1; j < n; ++j) {
      const Onnx__NodeProto *bn = g->node[j];
      if (bn->n_input < 1 || !bn->input[0] ||
          strcmp(bn->input[0], conv->output[0]) != 0)
        continue;
      if (bn->op_type && strcmp(bn->op_type, "BatchNormalization") == 0 &&
          vkp__is_default_domain(bn->domain) && bn->n_input == 5)
        ctx->fold_bn[i] = (int32_t)j;
      break;
    }
  }
  vkp_strmap_deinit(&uses);
  return st;
}

// Checks the node's attributes against the op's list.
static vkp_status_t vkp__check_attrs(const vkp__onnx_ctx_t *ctx,
                                     const vkp__onnx_op_t *op) {
  for (size_t i = 0; i < ctx->node->n_attribute; ++i) {
    const Onnx__AttributeProto *a = ctx->node->attribute[i];
    const char *name = a && a->name ? a->name : "";
    if (a && a->ref_attr_name && a->ref_attr_name[0])
      return VKP__ONNX_UNSUPPORTED("attribute '%s' refers to a function "
                                   "attribute",
                                   name);
    size_t len = strlen(name);
    bool known = false;
    for (const char *p = op->attrs; *p && !known;) {
      const char *comma = strchr(p, ',');
      size_t n = comma ? (size_t)(comma - p) : strlen(p);
      known = n == len && len > 0 && strncmp(p, name, n) == 0;
      p += n;
      if (*p == ',') ++p;
    }
    if (!known && vkp__onnx_legacy_attr(ctx->node->op_type, name, ctx->opset))
      known = true;  // consumed by the upgrade (onnx_legacy.c)
    if (!known)
      return VKP__ONNX_UNSUPPORTED("attribute '%s' is not supported", name);
  }
  return NULL;
}

static vkp_status_t vkp__import_node(vkp__onnx_ctx_t *ctx,
                                     const vkp__onnx_op_t *op) {
  if (ctx->opset == 0)
    return VKP__ONNX_INVALID("the model imports no opset of the default "
                             "domain (its opset_import lists other domains "
                             "only)");
  VKP_RETURN_IF_ERROR(vkp__check_attrs(ctx, op));
  // Below opset 7 the node may first need upgrading to its modern form.
  vkp__onnx_legacy_t up;
  VKP_RETURN_IF_ERROR(vkp__onnx_legacy_upgrade(ctx, &up));
  bool all_const = ctx->node->n_input > 0;
  for (size_t i = 0; i < ctx->node->n_input; ++i) {
    const char *in = ctx->node->input[i];
    if (!in || !in[0]) continue;
    vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, in);
    if (!s->is_const) all_const = false;
  }
  vkp_status_t st = all_const && op->fold ? op->fold(ctx) : op->map(ctx);
  vkp__onnx_legacy_deinit(ctx, &up);
  return st;
}

static vkp_status_t vkp__check_opset(vkp__onnx_ctx_t *ctx,
                                     const Onnx__ModelProto *model) {
  ctx->opset = 0;
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *o = model->opset_import[i];
    if (o && vkp__is_default_domain(o->domain) && o->has_version)
      ctx->opset = o->version;
  }
  // The ONNX checker's rules: a model without opset_import (IR version < 3)
  // uses opset 1; one whose opset_import names only other domains imports
  // no opset of the default domain (opset 0 here), and a node of the
  // default domain in it is refused (vkp__import_node).
  bool listed = false;
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *o = model->opset_import[i];
    if (o && vkp__is_default_domain(o->domain)) listed = true;
  }
  if (model->n_opset_import == 0) ctx->opset = 1;
  if (!listed && model->n_opset_import > 0) return NULL;
  if (ctx->opset < VKP_ONNX_MIN_OPSET || ctx->opset > VKP_ONNX_MAX_OPSET)
    return VKP__ONNX_UNSUPPORTED("the model uses opset %lld of the default "
                                 "domain; vkpipe imports opsets %d to %d",
                                 (long long)ctx->opset, VKP_ONNX_MIN_OPSET,
                                 VKP_ONNX_MAX_OPSET);
  return NULL;
}

// Graph output `name` is tensor symbol `sym` (an index; nothing here adds
// symbols).
static void vkp__import_output(vkp__onnx_ctx_t *ctx, vkp__problems_t *problems,
                               const char *name, int32_t sym) {
  vkp__onnx_sym_t *s = &ctx->syms[sym];
  ctx->node_name = name;
  ctx->emitted = 0;
  int32_t value = -1;
  // A constant output gets a constant under another name and an identity
  // node that produces the output name.
  vkp_status_t st = s->is_const && s->value < 0
                        ? vkp__onnx_add_const(ctx, &s->constant, &s->value)
                        : NULL;
  if (!st) st = vkp__onnx_sym_value(ctx, s, &value);
  const vkp_value_t *v = st ? NULL : &ctx->graph->values[value];
  if (!st && (v->kind != VKP_VALUE_INTERMEDIATE || strcmp(v->name, name) != 0 ||
              v->is_output)) {
    // An alias (Identity, Dropout), a constant, an input or a value listed
    // twice: give the output its own name with an identity node.
    if (vkp_graph_find_value(ctx->graph, name) >= 0 &&
        strcmp(v->name, name) == 0 && v->kind == VKP_VALUE_CONSTANT) {
      // An initializer, or a value folded at import, under the output's
      // name: the constant takes another name, the identity this one.
      char *base = vkp__asprintf("%s:const", name);
      char *fresh = base ? vkp__fresh_name(ctx, base, false) : NULL;
      vkp__free(base);
      if (!fresh) {
        st = VKP_OOM("constant name");
      } else {
        vkp__free(ctx->graph->values[value].name);
        ctx->graph->values[value].name = fresh;
        st = vkp__graph_reindex_values(ctx->graph);
      }
    }
    if (st) {
    } else if (vkp_graph_find_value(ctx->graph, name) >= 0 &&
               strcmp(v->name, name) == 0 && v->kind != VKP_VALUE_INTERMEDIATE) {
      st = VKP__ONNX_UNSUPPORTED("a graph output that is itself a graph "
                                 "input");
    } else {
      char *node_name = vkp__asprintf("output:%s", name);
      if (!node_name) {
        st = VKP_OOM("node name");
      } else {
        ctx->node_name = node_name;
        const char *out = vkp_graph_find_value(ctx->graph, name) < 0 ? name : NULL;
        if (!out)
          st = VKP__ONNX_INVALID("the name is taken by another value");
        else
          st = vkp__onnx_emit(ctx, VKP_OP_IDENTITY, 1, &value, 0, NULL, out,
                              &value);
        vkp__free(node_name);
      }
    }
  }
  if (!st) st = vkp_graph_mark_output(ctx->graph, name);
  if (st) vkp__problem_add(problems, st, "graph output", name);
}

// The tensors of list symbol `sym` in output order: a sequence's elements,
// an optional's tensor or its sequence's elements (none when empty).
static int32_t vkp__list_tensors(const vkp__onnx_ctx_t *ctx, int32_t sym,
                                 const int32_t **out) {
  const vkp__onnx_sym_t *s = &ctx->syms[sym];
  if (s->kind == VKP__SYM_OPTIONAL && s->n_items == 1 &&
      ctx->syms[s->items[0]].kind != VKP__SYM_TENSOR)
    s = &ctx->syms[s->items[0]];
  *out = s->items;
  return s->n_items;
}

static vkp_status_t vkp__import_outputs(vkp__onnx_ctx_t *ctx,
                                        vkp__problems_t *problems) {
  const Onnx__GraphProto *g = ctx->onnx_graph;
  for (size_t i = 0; i < g->n_output; ++i) {
    const char *name = g->output[i] ? g->output[i]->name : NULL;
    vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, name);
    if (!s) {
      vkp__problem_add(problems,
                       VKP__ONNX_INVALID("no node, initializer or input "
                                         "defines it"),
                       "graph output", name ? name : "");
      continue;
    }
    if (s->poisoned) continue;
    int32_t sym = vkp__onnx_sym_index(ctx, s);
    if (s->kind == VKP__SYM_TENSOR) {
      vkp__import_output(ctx, problems, name, sym);
      continue;
    }
    // A sequence or optional: one graph output per tensor it holds, named
    // "<name>[k]" (vkp_onnx_list_element_name).
    const int32_t *items;
    int32_t n = vkp__list_tensors(ctx, sym, &items);
    for (int32_t k = 0; k < n; ++k) {
      char element[512];
      vkp_onnx_list_element_name(name, k, element, sizeof element);
      if (ctx->syms[items[k]].kind != VKP__SYM_TENSOR)
        vkp__problem_add(problems,
                         VKP__ONNX_UNSUPPORTED("element %d is itself %s", (int)k,
                                               vkp__onnx_sym_kind_name(ctx->syms[items[k]].kind)),
                         "graph output", name);
      else
        vkp__import_output(ctx, problems, element, items[k]);
    }
  }
  if (g->n_output == 0)
    vkp__problem_add(problems, VKP__ONNX_INVALID("the graph has no outputs"),
                     "graph", ctx->graph->name);
  return NULL;
}

// Imports `node` under IR name `name` (k: its index in the model's graph, or
// -1 for a node of an If branch): on a problem it is recorded and the node's
// outputs are poisoned; only out-of-memory comes back as an error.
vkp_status_t vkp__import_proto(vkp__onnx_ctx_t *ctx, const Onnx__NodeProto *node,
                               const char *name, int32_t k,
                               vkp__problems_t *problems) {
  const char *op_type = node->op_type ? node->op_type : "";
  ctx->node_index = k;
  ctx->node = node;
  ctx->node_name = name;
  ctx->emitted = 0;
  vkp_status_t nst = NULL, st = NULL;
  bool poisoned = false;
  const vkp__onnx_op_t *op = vkp__onnx_op_find(op_type);
  const Onnx__FunctionProto *fn =
      !vkp__is_default_domain(node->domain) || !op
          ? vkp__onnx_function_find(ctx, node->domain, op_type)
          : NULL;
  const vkp__onnx_op_t *ms =
      !fn && vkp__is_ms_domain(node->domain) ? vkp__onnx_ms_op_find(op_type) : NULL;
  bool known = fn || ms || (vkp__is_default_domain(node->domain) && op);
  for (size_t i = 0; known && i < node->n_input && !nst; ++i) {
    const char *in = node->input[i];
    if (!in || !in[0]) continue;
    const vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, in);
    if (!s)
      nst = VKP__ONNX_INVALID("input '%s' is not defined by an earlier "
                              "node, an initializer or a graph input "
                              "(missing initializer, or a cycle)",
                              in);
    else if (s->poisoned)
      poisoned = true;
    else if (!fn && s->kind != VKP__SYM_TENSOR && (ms || !vkp__onnx_op_takes_lists(op)))
      nst = VKP__ONNX_UNSUPPORTED("input '%s' is %s; %s takes tensors", in,
                                  vkp__onnx_sym_kind_name(s->kind), op_type);
  }
  if (nst) {
  } else if (fn) {
    // A model-local function: its body in place of the node (onnx_function.c).
    // Only structural problems of the call come back: the body's nodes
    // record their own and poison their outputs.
    if (!poisoned) nst = vkp__onnx_inline_function(ctx, fn);
  } else if (ms) {
    // ONNX Runtime's contrib ops (onnx_contrib.c).
    nst = vkp__check_attrs(ctx, ms);
    if (!nst && !poisoned) nst = ms->map(ctx);
  } else if (vkp__is_ms_domain(node->domain)) {
    nst = VKP__ONNX_UNSUPPORTED("com.microsoft::%s is not supported", op_type);
  } else if (!vkp__is_default_domain(node->domain)) {
    nst = VKP__ONNX_UNSUPPORTED("domain '%s' is not supported (and the model "
                                "has no local function of that name)",
                                node->domain);
  } else if (!op) {
    nst = VKP__ONNX_UNSUPPORTED("unsupported op");
  } else {
    nst = poisoned ? vkp__check_attrs(ctx, op) : vkp__import_node(ctx, op);
  }
  if (nst) {
    if (vkp_status_code(nst) == VKP_STATUS_OUT_OF_MEMORY)
      st = nst;
    else
      vkp__problem_add(problems, nst, op_type, ctx->node_name);
  } else if (poisoned) {
    vkp__problem_blocked(problems, op_type);
  }
  if (nst || poisoned)
    for (size_t i = 0; i < node->n_output && !st; ++i)
      st = vkp__bind_poisoned(ctx, node->output[i]);
  return st;
}

static vkp_status_t vkp__import_one(vkp__onnx_ctx_t *ctx, int32_t k,
                                    vkp__problems_t *problems) {
  return vkp__import_proto(ctx, ctx->onnx_graph->node[k], ctx->node_names[k], k,
                           problems);
}

// ---------------------------------------------------------------------------
// If branches: a branch's nodes are imported into the graph being built,
// each value it defines renamed "<If node>/<branch>/<name>" (so two branches,
// or two If nodes, may use the same names), and names it does not define
// resolved in the enclosing scopes: the outer branch's, then the model's.

const char *vkp__onnx_scoped_name(const vkp__onnx_ctx_t *ctx, const char *name) {
  for (const vkp__onnx_scope_t *sc = ctx->scope; sc && name; sc = sc->outer) {
    int32_t i = vkp_strmap_get(&sc->names, name);
    if (i >= 0) return sc->renamed[i];
  }
  return name;
}

void vkp__scope_deinit(vkp__onnx_scope_t *sc) {
  for (int32_t i = 0; i < sc->n; ++i) vkp__free(sc->renamed[i]);
  vkp__free(sc->renamed);
  vkp__free(sc->prefix);
  vkp_strmap_deinit(&sc->names);
}

// Defines `name` in the innermost scope; *out is its new name (owned by the
// scope).
vkp_status_t vkp__scope_define(vkp__onnx_scope_t *sc, const char *name,
                               const char **out) {
  if (vkp_strmap_get(&sc->names, name) >= 0)
    return VKP__ONNX_INVALID("value '%s' is defined twice in the branch", name);
  if (sc->n == sc->cap) {
    int32_t cap = sc->cap ? sc->cap * 2 : 16;
    char **r = vkp__reallocarray(sc->renamed, (size_t)cap, sizeof *r);
    if (!r) return VKP_OOM("branch scope");
    sc->renamed = r;
    sc->cap = cap;
  }
  char *renamed = vkp__asprintf("%s%s", sc->prefix, name);
  if (!renamed) return VKP_OOM("branch value name");
  vkp_status_t st = vkp_strmap_put(&sc->names, name, sc->n);
  if (st) {
    vkp__free(renamed);
    return st;
  }
  sc->renamed[sc->n++] = renamed;
  *out = renamed;
  return NULL;
}

vkp_status_t vkp__import_scoped_node(vkp__onnx_ctx_t *ctx, vkp__onnx_scope_t *sc,
                                     const Onnx__NodeProto *node, size_t k,
                                     const Onnx__NodeProto *call) {
  Onnx__NodeProto copy = *node;
  const char **ins = vkp__calloc(node->n_input + 1, sizeof *ins);
  const char **outs = vkp__calloc(node->n_output + 1, sizeof *outs);
  const char *op_type = node->op_type && node->op_type[0] ? node->op_type : "node";
  char *name = node->name && node->name[0]
                   ? vkp__asprintf("%s%s", sc->prefix, node->name)
                   : vkp__asprintf("%s%s_%zu", sc->prefix, op_type, k);
  Onnx__AttributeProto **attrs = NULL, *storage = NULL;
  size_t n_attrs = 0;
  vkp_status_t st = !ins || !outs || !name ? VKP_OOM("scoped node") : NULL;
  if (!st && call) st = vkp__onnx_call_attrs(call, node, &attrs, &storage, &n_attrs);
  for (size_t i = 0; i < node->n_input && !st; ++i)
    ins[i] = node->input[i] && node->input[i][0]
                 ? vkp__onnx_scoped_name(ctx, node->input[i])
                 : node->input[i];
  for (size_t i = 0; i < node->n_output && !st; ++i) {
    outs[i] = node->output[i];
    if (!node->output[i] || !node->output[i][0]) continue;
    // In a function body a formal output already stands for the call's.
    int32_t formal = call ? vkp_strmap_get(&sc->names, node->output[i]) : -1;
    if (formal >= 0) outs[i] = sc->renamed[formal];
    else st = vkp__scope_define(sc, node->output[i], &outs[i]);
  }
  if (!st) {
    copy.input = (char **)ins;
    copy.output = (char **)outs;
    if (call) {
      copy.attribute = attrs;
      copy.n_attribute = n_attrs;
    }
    // The copy is what the mappers see; names stay valid until it goes.
    char *unique = vkp__fresh_name(ctx, name, true);
    if (!unique) st = VKP_OOM("scoped node name");
    else st = vkp__import_proto(ctx, &copy, unique, -1, ctx->problems);
    vkp__free(unique);
  }
  vkp__free(attrs);
  vkp__free(storage);
  vkp__free(ins);
  vkp__free(outs);
  vkp__free(name);
  return st;
}

vkp_status_t vkp__onnx_import_branch(vkp__onnx_ctx_t *ctx,
                                     const Onnx__GraphProto *branch,
                                     const char *label, char **out_names) {
  for (size_t i = 0; i < branch->n_output; ++i) out_names[i] = NULL;
  if (branch->n_input)
    return VKP__ONNX_INVALID("%s has %zu inputs; an If branch has none",
                             label, branch->n_input);
  return vkp__onnx_import_subgraph(ctx, branch, label, 0, NULL, out_names);
}

vkp_status_t vkp__onnx_import_subgraph(vkp__onnx_ctx_t *ctx,
                                       const Onnx__GraphProto *branch,
                                       const char *label, int32_t n_bind,
                                       const int32_t *bind, char **out_names) {
  size_t n_out = branch->n_output;
  for (size_t i = 0; i < n_out; ++i) out_names[i] = NULL;
  if (branch->n_input != (size_t)n_bind)
    return VKP__ONNX_INVALID("%s has %zu inputs; %d are given to it", label,
                             branch->n_input, (int)n_bind);
  if (branch->n_sparse_initializer)
    return VKP__ONNX_UNSUPPORTED("%s has sparse initializers", label);
  int32_t depth = 0;
  for (const vkp__onnx_scope_t *o = ctx->scope; o; o = o->outer) ++depth;
  if (depth >= VKP__ONNX_MAX_BRANCH_DEPTH)
    return VKP__ONNX_UNSUPPORTED("If nested more than %d deep",
                                 (int)VKP__ONNX_MAX_BRANCH_DEPTH);
  // The If node's state, restored after its branch's nodes.
  const Onnx__NodeProto *node = ctx->node;
  const char *node_name = ctx->node_name;
  int32_t emitted = ctx->emitted, node_index = ctx->node_index;
  vkp__onnx_scope_t sc = {.outer = ctx->scope};
  vkp_strmap_init(&sc.names);
  sc.prefix = vkp__asprintf("%s/%s/", node_name, label);
  vkp_status_t st = sc.prefix ? NULL : VKP_OOM("branch scope");
  // Initializers of the branch: constants in its scope.
  for (size_t i = 0; i < branch->n_initializer && !st; ++i) {
    const Onnx__TensorProto *tp = branch->initializer[i];
    const char *scoped = NULL;
    vkp__onnx_tensor_t t;
    st = vkp__scope_define(&sc, tp->name ? tp->name : "", &scoped);
    if (!st) st = vkp__onnx_tensor_decode(tp, ctx->base_dir, &t);
    if (!st) st = vkp__onnx_bind_const(ctx, scoped, &t);
  }
  // The subgraph's inputs (a Loop body's iteration number, condition and
  // carried values; a Scan body's state and slices): names in its scope for
  // the symbols given.
  for (int32_t i = 0; i < n_bind && !st; ++i) {
    const Onnx__ValueInfoProto *vi = branch->input[i];
    const char *scoped = NULL;
    st = vkp__scope_define(&sc, vi && vi->name ? vi->name : "", &scoped);
    if (!st) st = vkp__onnx_bind_alias(ctx, scoped, &ctx->syms[bind[i]]);
  }
  ctx->scope = &sc;
  for (size_t k = 0; k < branch->n_node && !st; ++k)
    st = vkp__import_scoped_node(ctx, &sc, branch->node[k], k, NULL);
  for (size_t i = 0; i < n_out && !st; ++i) {
    const char *o = branch->output[i] ? branch->output[i]->name : NULL;
    if (!o || !o[0]) {
      st = VKP__ONNX_INVALID("%s output %zu has no name", label, i);
      break;
    }
    out_names[i] = vkp__strdup(vkp__onnx_scoped_name(ctx, o));
    if (!out_names[i]) st = VKP_OOM("branch output name");
  }
  ctx->scope = sc.outer;
  vkp__scope_deinit(&sc);
  ctx->node = node;
  ctx->node_name = node_name;
  ctx->emitted = emitted;
  ctx->node_index = node_index;
  if (st)
    for (size_t i = 0; i < n_out; ++i) {
      vkp__free(out_names[i]);
      out_names[i] = NULL;
    }
  return st;
}

// `model` is read, and the initializers' raw bytes are released as they are
// decoded.
static vkp_status_t vkp__import_model(vkp__onnx_ctx_t *ctx,
                                      Onnx__ModelProto *model,
                                      const char *what) {
  Onnx__GraphProto *g = model->graph;
  if (!g) return VKP__ONNX_INVALID("the model has no graph");
  ctx->onnx_graph = g;
  ctx->model = model;
  VKP_RETURN_IF_ERROR(vkp_graph_create(g->name && g->name[0] ? g->name : "onnx",
                                       &ctx->graph));
  vkp_strmap_init(&ctx->sym_index);
  vkp_strmap_init(&ctx->fresh_slot);
  vkp__problems_t problems = {0};
  ctx->problems = &problems;
  vkp_status_t st = vkp__check_opset(ctx, model);
  if (st) return st;
  VKP_RETURN_IF_ERROR(vkp__binder_init(&ctx->binder, &ctx->options->bindings));
  if (g->n_sparse_initializer)
    vkp__problem_add(&problems,
                     VKP__ONNX_UNSUPPORTED("sparse initializers are not "
                                           "supported"),
                     "graph", ctx->graph->name);
  for (size_t i = 0; i < g->n_initializer; ++i) {
    Onnx__TensorProto *tp = g->initializer[i];
    const char *name = tp->name ? tp->name : "";
    vkp__onnx_tensor_t t;
    st = vkp__onnx_tensor_decode(tp, ctx->base_dir, &t);
    // The decoded copy is all that is needed from now on (peak memory).
    if (tp->has_raw_data && tp->raw_data.data) {
      vkp__free(tp->raw_data.data);
      tp->raw_data.data = NULL;
      tp->raw_data.len = 0;
      tp->has_raw_data = 0;
    }
    if (!st) st = vkp__onnx_bind_const(ctx, name, &t);
    else if (name[0] && !vkp__onnx_sym_find(ctx, name)) {
      vkp_status_t st2 = vkp__bind_poisoned(ctx, name);
      if (st2) vkp__problem_add(&problems, st2, "initializer", name);
    }
    if (st) vkp__problem_add(&problems, st, "initializer", name);
  }
  for (size_t i = 0; i < g->n_input; ++i) {
    bool frozen = false;
    const Onnx__ValueInfoProto *vi = g->input[i];
    const char *name = vi && vi->name ? vi->name : "";
    // Inputs with an initializer are constants here (IR >= 4 allows
    // overriding them; vkpipe does not).
    if (vkp__onnx_sym_find(ctx, name)) continue;
    st = vkp__freeze_input(ctx, name, &frozen);
    if (!st && frozen) continue;
    if (!st) st = vkp__add_graph_input(ctx, vi);
    if (st) {
      vkp__problem_add(&problems, st, "graph input", name);
      st = vkp__bind_poisoned(ctx, name);
      if (st) vkp__problem_add(&problems, st, "graph input", name);
    }
  }
  st = vkp__binder_finish(&ctx->binder);
  if (st) vkp__problem_add(&problems, st, "load options", NULL);
  st = vkp__plan_bn_folds(ctx);
  if (st) goto done;
  vkp_strmap_t node_names;  // borrows the strings in `names`
  vkp_strmap_init(&node_names);
  char **names = vkp__calloc(g->n_node + 1, sizeof(char *));
  if (!names) st = VKP_OOM("node names");
  for (size_t k = 0; k < g->n_node && !st; ++k) {
    const Onnx__NodeProto *node = g->node[k];
    const char *op_type = node->op_type ? node->op_type : "";
    // A unique, deterministic IR-side name: the ONNX name when it is free,
    // else "<op>_<k>" (with a further suffix in the unlikely case that is
    // taken too).
    char *node_name = NULL;
    if (node->name && node->name[0] &&
        vkp_strmap_get(&node_names, node->name) < 0) {
      node_name = vkp__strdup(node->name);
      if (!node_name) {
        st = VKP_OOM("node name");
        break;
      }
    }
    for (int32_t extra = 0; !node_name || vkp_strmap_get(&node_names, node_name) >= 0;
         ++extra) {
      vkp__free(node_name);
      node_name = extra == 0 ? vkp__asprintf("%s_%zu", op_type[0] ? op_type : "node", k)
                             : vkp__asprintf("%s_%zu_%d", op_type[0] ? op_type : "node",
                                             k, (int)extra);
      if (!node_name) break;
    }
    if (!node_name) {
      st = VKP_OOM("node name");
      break;
    }
    names[k] = node_name;
    st = vkp_strmap_put(&node_names, node_name, (int32_t)k);
  }
  ctx->node_names = names;
  // The patterns are modern exporters'; below opset 7 a node of one may
  // carry legacy semantics (broadcast at an axis) the planner does not read.
  if (!st && !ctx->options->bindings.no_fusion &&
      ctx->opset >= VKP_ONNX_MODERN_OPSET)
    st = vkp__onnx_plan_fusions(ctx);
  for (size_t k = 0; k < g->n_node && !st; ++k) {
    if (ctx->skip[k]) continue;  // folded into another node
    int32_t group = ctx->fusion_at ? ctx->fusion_at[k] : -1;
    if (group >= 0) {
      bool fused = false;
      st = vkp__onnx_try_fusion(ctx, group, &fused);
      if (st && vkp_status_code(st) != VKP_STATUS_OUT_OF_MEMORY) {
        vkp__problem_add(&problems, st, ctx->node->op_type, ctx->node_name);
        st = vkp__bind_poisoned(ctx, ctx->node->output[0]);
        continue;
      }
      if (st || fused) continue;
      // The pattern did not qualify: import its nodes one by one.
      for (int32_t m = 0; m < ctx->fusions[group].n_nodes && !st; ++m)
        st = vkp__import_one(ctx, ctx->fusions[group].nodes[m], &problems);
      continue;
    }
    st = vkp__import_one(ctx, (int32_t)k, &problems);
  }
  for (size_t k = 0; names && k < g->n_node; ++k) vkp__free(names[k]);
  vkp__free(names);
  vkp_strmap_deinit(&node_names);
  ctx->node = NULL;
  ctx->node_name = NULL;
  ctx->node_names = NULL;
  ctx->no_fold = true;  // an output's identity node is the output's name
  if (!st) st = vkp__import_outputs(ctx, &problems);
done:
  if (!st) st = vkp__problems_status(&problems, what);
  vkp__problems_deinit(&problems);
  ctx->problems = NULL;
  // Folding leaves constants only other constants were made from.
  if (!st) st = vkp__graph_prune_constants(ctx->graph);
  if (!st) st = vkp__graph_trim_outputs(ctx->graph);
  if (!st) st = vkp_graph_validate(ctx->graph);
  return st;
}

// protobuf-c returns NULL both for a corrupt message and for a failed
// allocation; this allocator records the second so that it is reported as
// what it is.
static void *vkp__pb_alloc_noting_oom(void *data, size_t size) {
  void *p = vkp__malloc(size ? size : 1);
  if (!p) *(bool *)data = true;
  return p;
}
static void vkp__pb_free_plain(void *data, void *ptr) {
  (void)data;
  vkp__free(ptr);
}

static vkp_status_t vkp__unpack(const void *data, size_t size,
                                const char *what, Onnx__ModelProto **out) {
  bool oom = false;
  ProtobufCAllocator alloc = {.alloc = vkp__pb_alloc_noting_oom,
                              .free = vkp__pb_free_plain,
                              .allocator_data = &oom};
  *out = onnx__model_proto__unpack(&alloc, size, (const uint8_t *)data);
  if (!*out && oom)
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                           "out of memory decoding %s (%zu bytes of protobuf)",
                           what, size);
  if (!*out)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "%s is not a valid ONNX model (the protobuf "
                           "message does not parse: truncated or corrupt)",
                           what);
  return NULL;
}

// Imports an unpacked model (consumed: freed here).
static vkp_status_t vkp__import_unpacked(Onnx__ModelProto *model,
                                         const char *base_dir, const char *what,
                                         const vkp_onnx_options_t *options,
                                         vkp_graph_t **out_graph) {
  static const vkp_onnx_options_t defaults = {0};
  vkp__onnx_ctx_t ctx = {.base_dir = base_dir,
                         .options = options ? options : &defaults};
  vkp_status_t st = vkp__import_model(&ctx, model, what);
  onnx__model_proto__free_unpacked(model, &vkp__onnx_protobuf_allocator);
  if (!st) {
    *out_graph = ctx.graph;
    ctx.graph = NULL;
  } else if (!strstr(vkp_status_message(st), "cannot import")) {
    st = vkp_status_annotate(st, "importing %s", what);
  }
  vkp__ctx_deinit(&ctx);
  return st;
}

vkp_status_t vkp_onnx_load_buffer(const void *data, size_t size,
                                  const char *base_dir, const char *name,
                                  const vkp_onnx_options_t *options,
                                  vkp_graph_t **out_graph) {
  const vkp_allocator_t *allocator = options ? options->bindings.allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "loading an ONNX model"));
  VKP__ALLOCATOR_SCOPE(allocator);
  *out_graph = NULL;
  char what[512];
  snprintf(what, sizeof what, "'%s'", name ? name : "ONNX model");
  Onnx__ModelProto *model;
  VKP_RETURN_IF_ERROR(vkp__unpack(data, size, what, &model));
  return vkp__import_unpacked(model, base_dir, what, options, out_graph);
}

// Reads a whole file (size-checked) into a heap buffer. protobuf messages
// are limited to 2 GiB; larger models keep weights as external data.
static vkp_status_t vkp__read_file(const char *path, void **out_data,
                                   size_t *out_size) {
  return vkp__file_read(path, (size_t)INT32_MAX, "an ONNX model", out_data, out_size);
}

static char *vkp__dirname(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return vkp__strdup(".");
  if (slash == path) return vkp__strdup("/");
  return vkp__strndup(path, (size_t)(slash - path));
}

vkp_status_t vkp_onnx_load(const char *path, vkp_graph_t **out_graph) {
  return vkp_onnx_load_with_options(path, NULL, out_graph);
}

vkp_status_t vkp_onnx_load_with_options(const char *path,
                                        const vkp_onnx_options_t *options,
                                        vkp_graph_t **out_graph) {
  const vkp_allocator_t *allocator = options ? options->bindings.allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "loading an ONNX model"));
  VKP__ALLOCATOR_SCOPE(allocator);
  *out_graph = NULL;
  void *data;
  size_t size;
  VKP_RETURN_IF_ERROR(vkp__read_file(path, &data, &size));
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  Onnx__ModelProto *model;
  vkp_status_t st = vkp__unpack(data, size, what, &model);
  // protobuf-c copied what it needs: the file's bytes can go before the
  // weights are decoded (peak memory).
  vkp__free(data);
  if (st) return st;
  char *dir = vkp__dirname(path);
  if (!dir) {
    onnx__model_proto__free_unpacked(model, &vkp__onnx_protobuf_allocator);
    return VKP_OOM("path");
  }
  st = vkp__import_unpacked(model, dir, what, options, out_graph);
  vkp__free(dir);
  return st;
}

vkp_status_t vkp__graph_load_onnx_file(const char *path,
                                       const vkp_graph_load_options_t *options,
                                       vkp_graph_t **out_graph) {
  vkp_onnx_options_t o = {0};
  if (options) o.bindings = *options;
  return vkp_onnx_load_with_options(path, &o, out_graph);
}

// ---------------------------------------------------------------------------
// Tensor files and model info

vkp_status_t vkp_onnx_tensor_load(const char *path, vkp_tensor_t *out,
                                  char **out_name) {
  memset(out, 0, sizeof *out);
  if (out_name) *out_name = NULL;
  void *data;
  size_t size;
  VKP_RETURN_IF_ERROR(vkp__read_file(path, &data, &size));
  bool oom = false;
  ProtobufCAllocator alloc = {.alloc = vkp__pb_alloc_noting_oom,
                              .free = vkp__pb_free_plain,
                              .allocator_data = &oom};
  Onnx__TensorProto *proto =
      onnx__tensor_proto__unpack(&alloc, size, (const uint8_t *)data);
  vkp__free(data);
  if (!proto && oom)
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                           "out of memory decoding TensorProto '%s'", path);
  if (!proto)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "'%s' is not a valid TensorProto", path);
  char *dir = vkp__dirname(path);
  vkp__onnx_tensor_t t = {0};
  vkp_status_t st = dir ? vkp__onnx_tensor_decode(proto, dir, &t)
                        : VKP_OOM("path");
  vkp__free(dir);
  vkp_dtype_t dtype;
  if (!st && !vkp__onnx_type_to_dtype(t.type, &dtype))
    st = VKP__ONNX_UNSUPPORTED("dtype %s is not supported",
                               vkp__onnx_type_name(t.type));
  if (!st) st = vkp_tensor_init(out, dtype, t.rank, t.shape);
  if (!st && t.nbytes) memcpy(out->data, t.data, t.nbytes);
  if (!st && out_name) {
    *out_name = vkp__strdup(proto->name ? proto->name : "");
    if (!*out_name) st = VKP_OOM("tensor name");
  }
  if (st) vkp_tensor_deinit(out);
  vkp__onnx_tensor_deinit(&t);
  onnx__tensor_proto__free_unpacked(proto, &vkp__onnx_protobuf_allocator);
  return st ? vkp_status_annotate(st, "reading tensor '%s'", path) : NULL;
}

// ---------------------------------------------------------------------------
// SequenceProto and OptionalProto (onnx-data.proto, which the generated
// bindings do not cover): read field by field from the wire format, each
// TensorProto inside decoded by protobuf-c.

typedef struct vkp__wire_t {
  const uint8_t *p, *end;
} vkp__wire_t;

static bool vkp__wire_varint(vkp__wire_t *w, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && w->p < w->end; shift += 7) {
    uint8_t b = *w->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

// The next field: its number, and its bytes (length-delimited) or value
// (varint). False at the end; *bad on a malformed message.
static bool vkp__wire_next(vkp__wire_t *w, uint32_t *field, const uint8_t **bytes,
                           size_t *len, uint64_t *value, bool *bad) {
  *bad = false;
  if (w->p >= w->end) return false;
  uint64_t key;
  if (!vkp__wire_varint(w, &key)) return !(*bad = true);
  *field = (uint32_t)(key >> 3);
  *bytes = NULL;
  *len = 0;
  switch (key & 7) {
    case 0:
      if (!vkp__wire_varint(w, value)) return !(*bad = true);
      return true;
    case 1:
      if (w->end - w->p < 8) return !(*bad = true);
      w->p += 8;
      return true;
    case 5:
      if (w->end - w->p < 4) return !(*bad = true);
      w->p += 4;
      return true;
    case 2: {
      uint64_t n;
      if (!vkp__wire_varint(w, &n) || n > (uint64_t)(w->end - w->p)) return !(*bad = true);
      *bytes = w->p;
      *len = (size_t)n;
      w->p += n;
      return true;
    }
    default:
      return !(*bad = true);
  }
}

// One TensorProto's bytes appended to l->tensors.
static vkp_status_t vkp__list_add_tensor(vkp_onnx_list_t *l, const uint8_t *bytes,
                                         size_t len, const char *dir) {
  vkp_tensor_t *grown = vkp__reallocarray(l->tensors, (size_t)l->n + 1, sizeof *grown);
  if (!grown) return VKP_OOM("list tensors");
  l->tensors = grown;
  vkp_tensor_t *out = &l->tensors[l->n];
  memset(out, 0, sizeof *out);
  bool oom = false;
  ProtobufCAllocator alloc = {.alloc = vkp__pb_alloc_noting_oom,
                              .free = vkp__pb_free_plain,
                              .allocator_data = &oom};
  Onnx__TensorProto *proto = onnx__tensor_proto__unpack(&alloc, len, bytes);
  if (!proto)
    return oom ? VKP_OOM("TensorProto")
               : vkp_status_make(VKP_STATUS_PARSE_ERROR, "element %d is not a valid "
                                 "TensorProto", (int)l->n);
  vkp__onnx_tensor_t t = {0};
  vkp_status_t st = vkp__onnx_tensor_decode(proto, dir, &t);
  vkp_dtype_t dtype;
  if (!st && !vkp__onnx_type_to_dtype(t.type, &dtype))
    st = VKP__ONNX_UNSUPPORTED("dtype %s is not supported", vkp__onnx_type_name(t.type));
  if (!st) st = vkp_tensor_init(out, dtype, t.rank, t.shape);
  if (!st && t.nbytes) memcpy(out->data, t.data, t.nbytes);
  if (!st) l->n++;
  vkp__onnx_tensor_deinit(&t);
  onnx__tensor_proto__free_unpacked(proto, &vkp__onnx_protobuf_allocator);
  return st;
}

// SequenceProto: elem_type (2) and tensor_values (3); other element kinds
// are refused.
static vkp_status_t vkp__read_sequence(vkp_onnx_list_t *l, const uint8_t *data,
                                       size_t size, const char *dir) {
  vkp__wire_t w = {data, data + size};
  uint32_t field;
  const uint8_t *bytes;
  size_t len;
  uint64_t value = 0;
  bool bad;
  while (vkp__wire_next(&w, &field, &bytes, &len, &value, &bad)) {
    if (field == 2 && !bytes && value != 0 && value != 1)
      return VKP__ONNX_UNSUPPORTED("a sequence of element kind %llu; tensors only",
                                   (unsigned long long)value);
    if (field >= 4 && field <= 7 && bytes)
      return VKP__ONNX_UNSUPPORTED("a sequence of non-tensor elements");
    if (field == 3 && bytes) VKP_RETURN_IF_ERROR(vkp__list_add_tensor(l, bytes, len, dir));
  }
  if (bad) return vkp_status_make(VKP_STATUS_PARSE_ERROR, "not a valid SequenceProto");
  return NULL;
}

// OptionalProto: tensor_value (3) or sequence_value (5), or nothing.
static vkp_status_t vkp__read_optional(vkp_onnx_list_t *l, const uint8_t *data,
                                       size_t size, const char *dir) {
  vkp__wire_t w = {data, data + size};
  uint32_t field;
  const uint8_t *bytes;
  size_t len;
  uint64_t value = 0;
  bool bad;
  while (vkp__wire_next(&w, &field, &bytes, &len, &value, &bad)) {
    if (field == 3 && bytes) {
      l->present = true;
      VKP_RETURN_IF_ERROR(vkp__list_add_tensor(l, bytes, len, dir));
    } else if (field == 5 && bytes) {
      l->present = l->of_sequence = true;
      VKP_RETURN_IF_ERROR(vkp__read_sequence(l, bytes, len, dir));
    } else if ((field == 4 || field == 6 || field == 7) && bytes) {
      return VKP__ONNX_UNSUPPORTED("an optional of neither a tensor nor a sequence");
    }
  }
  if (bad) return vkp_status_make(VKP_STATUS_PARSE_ERROR, "not a valid OptionalProto");
  return NULL;
}

vkp_status_t vkp_onnx_list_load(const char *path, vkp_onnx_kind_t kind,
                                vkp_onnx_list_t *out) {
  memset(out, 0, sizeof *out);
  out->kind = kind;
  if (kind != VKP_ONNX_SEQUENCE && kind != VKP_ONNX_OPTIONAL)
    return VKP__ONNX_INVALID("'%s': a list is a sequence or an optional", path);
  void *data;
  size_t size;
  VKP_RETURN_IF_ERROR(vkp__read_file(path, &data, &size));
  char *dir = vkp__dirname(path);
  vkp_status_t st = !dir ? VKP_OOM("path")
                    : kind == VKP_ONNX_SEQUENCE ? vkp__read_sequence(out, data, size, dir)
                                                : vkp__read_optional(out, data, size, dir);
  vkp__free(dir);
  vkp__free(data);
  if (st) {
    vkp_onnx_list_deinit(out);
    return vkp_status_annotate(st, "reading %s '%s'",
                               kind == VKP_ONNX_SEQUENCE ? "SequenceProto" : "OptionalProto",
                               path);
  }
  return NULL;
}

void vkp_onnx_list_deinit(vkp_onnx_list_t *list) {
  if (!list) return;
  for (int32_t i = 0; i < list->n; ++i) vkp_tensor_deinit(&list->tensors[i]);
  vkp__free(list->tensors);
  memset(list, 0, sizeof *list);
}

static vkp_onnx_kind_t vkp__kind_of(const Onnx__TypeProto *tp) {
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) return VKP_ONNX_SEQUENCE;
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE) return VKP_ONNX_OPTIONAL;
  return VKP_ONNX_TENSOR;
}

vkp_status_t vkp_onnx_info_read(const char *path, vkp_onnx_info_t *out) {
  memset(out, 0, sizeof *out);
  void *data;
  size_t size;
  VKP_RETURN_IF_ERROR(vkp__read_file(path, &data, &size));
  Onnx__ModelProto *model;
  char what[512];
  snprintf(what, sizeof what, "'%s'", path);
  vkp_status_t st = vkp__unpack(data, size, what, &model);
  vkp__free(data);
  if (st) return st;
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto *o = model->opset_import[i];
    if (o && vkp__is_default_domain(o->domain) && o->has_version)
      out->opset = o->version;
  }
  const Onnx__GraphProto *g = model->graph;
  size_t n = g ? g->n_node : 0;
  out->op_types = vkp__calloc(n + 1, sizeof(char *));
  if (!out->op_types) st = VKP_OOM("op list");
  for (size_t i = 0; i < n && !st; ++i) {
    const Onnx__NodeProto *node = g->node[i];
    const char *op = node->op_type ? node->op_type : "";
    char *key = vkp__is_default_domain(node->domain)
                    ? vkp__strdup(op)
                    : vkp__asprintf("%s::%s", node->domain, op);
    if (!key) {
      st = VKP_OOM("op name");
      break;
    }
    bool seen = false;
    for (int32_t j = 0; j < out->n_op_types && !seen; ++j)
      seen = strcmp(out->op_types[j], key) == 0;
    if (seen) vkp__free(key);
    else out->op_types[out->n_op_types++] = key;
  }
  out->n_nodes = (int32_t)n;
  size_t n_in = g ? g->n_input : 0;
  out->inputs = st ? NULL : vkp__calloc(n_in + 1, sizeof(char *));
  out->input_dtypes = st ? NULL : vkp__calloc(n_in + 1, sizeof(vkp_dtype_t));
  out->input_kinds = st ? NULL : vkp__calloc(n_in + 1, sizeof(vkp_onnx_kind_t));
  if (!st && (!out->inputs || !out->input_dtypes || !out->input_kinds))
    st = VKP_OOM("input list");
  for (size_t i = 0; i < n_in && !st; ++i) {
    const char *name = g->input[i] && g->input[i]->name ? g->input[i]->name : "";
    bool init = false;
    for (size_t j = 0; j < g->n_initializer && !init; ++j)
      init = g->initializer[j]->name && strcmp(g->initializer[j]->name, name) == 0;
    if (init) continue;
    const Onnx__TypeProto *tp = g->input[i]->type;
    vkp_dtype_t dt = VKP_DTYPE_COUNT;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !tp->tensor_type ||
        !vkp__onnx_type_to_dtype(tp->tensor_type->elem_type, &dt))
      dt = VKP_DTYPE_COUNT;
    out->input_dtypes[out->n_inputs] = dt;
    out->input_kinds[out->n_inputs] = vkp__kind_of(tp);
    out->inputs[out->n_inputs] = vkp__strdup(name);
    if (!out->inputs[out->n_inputs]) st = VKP_OOM("input name");
    else out->n_inputs++;
  }
  size_t n_out = g ? g->n_output : 0;
  out->outputs = st ? NULL : vkp__calloc(n_out + 1, sizeof(char *));
  out->output_kinds = st ? NULL : vkp__calloc(n_out + 1, sizeof(vkp_onnx_kind_t));
  if (!st && (!out->outputs || !out->output_kinds)) st = VKP_OOM("output list");
  for (size_t i = 0; i < n_out && !st; ++i) {
    const Onnx__ValueInfoProto *vi = g->output[i];
    out->outputs[i] = vkp__strdup(vi && vi->name ? vi->name : "");
    if (!out->outputs[i]) {
      st = VKP_OOM("output name");
      break;
    }
    out->output_kinds[i] = vkp__kind_of(vi ? vi->type : NULL);
    out->n_outputs++;
  }
  onnx__model_proto__free_unpacked(model, &vkp__onnx_protobuf_allocator);
  if (st) vkp_onnx_info_deinit(out);
  return st;
}

void vkp_onnx_info_deinit(vkp_onnx_info_t *info) {
  if (!info) return;
  for (int32_t i = 0; i < info->n_op_types; ++i) vkp__free(info->op_types[i]);
  vkp__free(info->op_types);
  for (int32_t i = 0; i < info->n_inputs; ++i) vkp__free(info->inputs[i]);
  vkp__free(info->inputs);
  vkp__free(info->input_dtypes);
  vkp__free(info->input_kinds);
  for (int32_t i = 0; i < info->n_outputs; ++i) vkp__free(info->outputs[i]);
  vkp__free(info->outputs);
  vkp__free(info->output_kinds);
  memset(info, 0, sizeof *info);
}

void vkp_onnx_string_free(char *s) { vkp__free(s); }
