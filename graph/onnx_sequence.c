// SPDX-License-Identifier: Apache-2.0
// ONNX sequences and optionals, resolved at import. A sequence whose length
// is known at import (SequenceConstruct, SequenceEmpty, SplitToSequence with
// a static split, SequenceInsert/Erase at constant positions, a Loop that
// unrolls) is a list of ordinary tensor symbols; the ops that read it
// (SequenceAt, SequenceLength, ConcatFromSequence, SequenceMap) turn into
// the elements themselves, a constant, or concat/map nodes. An optional is
// a list of zero or one element. Nothing of either reaches the IR; what
// depends on run-time data is refused naming the node and the input.
// docs/onnx.md, "Sequences, optionals and loops".
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

// ONNX TensorProto data types used here.
enum { VKP__ONNX_FLOAT = 1, VKP__ONNX_INT64 = 7, VKP__ONNX_BOOL = 9 };

bool vkp__onnx_op_takes_lists(const vkp__onnx_op_t *op) {
  return op->map == vkp__map_sequence || op->map == vkp__map_sequence_map ||
         op->map == vkp__map_optional || op->map == vkp__map_loop ||
         op->map == vkp__map_scan || op->map == vkp__map_if_else ||
         op->map == vkp__map_passthrough;
}

// The ONNX element type of tensor symbol `s`.
static int32_t vkp__elem_type(const vkp__onnx_ctx_t *ctx, const vkp__onnx_sym_t *s) {
  if (s->kind != VKP__SYM_TENSOR) return 0;
  if (s->is_const) return s->constant.type;
  return vkp__onnx_type_from_dtype(ctx->graph->values[s->value].dtype);
}

// Input `i` as a symbol of `kind` (required).
static vkp_status_t vkp__list_input(vkp__onnx_ctx_t *ctx, int32_t i,
                                    vkp__onnx_sym_kind_t kind, int32_t *out) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  if (!s) return VKP__ONNX_INVALID("input %d is required", (int)i);
  if (s->kind != kind)
    return VKP__ONNX_INVALID("input %d ('%s') is %s; %s is expected",
                             (int)i, s->name, vkp__onnx_sym_kind_name(s->kind),
                             vkp__onnx_sym_kind_name(kind));
  *out = vkp__onnx_sym_index(ctx, s);
  return NULL;
}

static vkp_status_t vkp__tensor_input(vkp__onnx_ctx_t *ctx, int32_t i,
                                      int32_t *out) {
  return vkp__list_input(ctx, i, VKP__SYM_TENSOR, out);
}

// A position input (`what`), a one-element integer known at import, in
// [-n, n) (or [-n, n] when `inclusive`), normalised to [0, n]. Absent:
// `fallback`.
static vkp_status_t vkp__position(vkp__onnx_ctx_t *ctx, int32_t i,
                                  const char *what, int32_t n, bool inclusive,
                                  int32_t fallback, int32_t *out) {
  *out = fallback;
  const vkp__onnx_tensor_t *t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, i, what, &t));
  if (!t) return NULL;
  if (vkp__onnx_tensor_numel(t) != 1 || vkp__onnx_type_is_float(t->type))
    return VKP__ONNX_INVALID("%s must be one integer", what);
  int64_t p = vkp__onnx_tensor_get_i(t, 0);
  int64_t hi = inclusive ? n : n - 1;
  if (p < -(int64_t)n || p > hi)
    return VKP__ONNX_INVALID("%s %lld is out of range for a sequence of %d", what,
                             (long long)p, (int)n);
  *out = (int32_t)(p < 0 ? p + n : p);
  return NULL;
}

static vkp_status_t vkp__bind_bool(vkp__onnx_ctx_t *ctx, bool v) {
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, VKP__ONNX_BOOL, 0, NULL));
  vkp__onnx_tensor_set_i(&t, 0, v ? 1 : 0);
  return vkp__onnx_bind_const(ctx, vkp__onnx_output(ctx, 0), &t);
}

// Binds IR value `value` as element `k` of the sequence being built for the
// current node's output 0; *out_sym gets the element's symbol index.
static vkp_status_t vkp__bind_element(vkp__onnx_ctx_t *ctx, int32_t k,
                                      int32_t value, int32_t *out_sym) {
  char *name = vkp__asprintf("%s[%d]", vkp__onnx_output(ctx, 0), (int)k);
  if (!name) return VKP_OOM("sequence element name");
  vkp_status_t st = vkp__onnx_bind_value(ctx, name, value);
  if (!st) *out_sym = vkp__onnx_sym_index(ctx, vkp__onnx_sym_find(ctx, name));
  vkp__free(name);
  return st;
}

static vkp_status_t vkp__split_to_sequence(vkp__onnx_ctx_t *ctx) {
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  int32_t rank = xv->rank;
  int64_t axis, keepdims;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "keepdims", 1, &keepdims));
  if (axis < -(int64_t)rank || axis >= rank)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                             (long long)axis, (int)rank);
  if (axis < 0) axis += rank;
  int64_t dim = xv->shape[axis];
  if (xv->bounded && xv->bounded_axis == axis)
    return VKP__ONNX_UNSUPPORTED("the split axis %lld has a run-time extent: "
                                 "the sequence's length is not known at import",
                                 (long long)axis);
  const vkp__onnx_tensor_t *t;
  // The split decides the sequence's length, which vkpipe needs at import.
  vkp_status_t st = vkp__onnx_input_const(ctx, 1, "split", &t);
  if (st) return st;
  // Element sizes: absent -> 1 each (and keepdims applies); a scalar -> equal
  // chunks, the last shorter; a 1-D tensor -> the sizes.
  int64_t n = 0, chunk = 1;
  int64_t *sizes = NULL;
  bool squeeze = !t && keepdims == 0;
  if (t && t->rank == 0) {
    chunk = vkp__onnx_tensor_get_i(t, 0);
    if (chunk <= 0) return VKP__ONNX_INVALID("split %lld is not positive", (long long)chunk);
  }
  if (!t || t->rank == 0) {
    n = dim == 0 ? 0 : (dim + chunk - 1) / chunk;
  } else {
    if (t->rank != 1) return VKP__ONNX_INVALID("split must be a scalar or 1-D");
    n = (int64_t)vkp__onnx_tensor_numel(t);
  }
  if (n > 4096)
    return VKP__ONNX_UNSUPPORTED("a sequence of %lld elements (at most 4096)",
                                 (long long)n);
  sizes = vkp__calloc((size_t)n + 1, sizeof *sizes);
  int32_t *items = vkp__calloc((size_t)n + 1, sizeof *items);
  if (!sizes || !items) st = VKP_OOM("SplitToSequence");
  int64_t sum = 0;
  for (int64_t i = 0; i < n && !st; ++i) {
    sizes[i] = t && t->rank == 1 ? vkp__onnx_tensor_get_i(t, (size_t)i)
               : dim - i * chunk < chunk ? dim - i * chunk
                                         : chunk;
    if (sizes[i] < 0) st = VKP__ONNX_INVALID("negative split size");
    else if (sizes[i] > dim - sum)  // (also keeps the sum from overflowing)
      st = VKP__ONNX_INVALID("split sizes add up to more than the axis's %lld",
                             (long long)dim);
    else sum += sizes[i];
  }
  if (!st && sum != dim)
    st = VKP__ONNX_INVALID("split sizes add up to %lld, the axis has %lld",
                           (long long)sum, (long long)dim);
  int32_t elem_type = vkp__onnx_type_from_dtype(xv->dtype);
  int64_t start = 0;
  for (int64_t i = 0; i < n && !st; ++i) {
    int64_t s = start, e = start + sizes[i], ax = axis, step = 1;
    start = e;
    vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", &s, 1), vkp__onnx_a_ints("ends", &e, 1),
                       vkp__onnx_a_ints("axes", &ax, 1), vkp__onnx_a_ints("steps", &step, 1)};
    int32_t v;
    st = vkp__onnx_emit(ctx, VKP_OP_SLICE, 1, &x, 4, a, NULL, &v);
    if (!st && squeeze) {
      vkp_attr_t sq = vkp__onnx_a_ints("axes", &ax, 1);
      st = vkp__onnx_emit(ctx, VKP_OP_SQUEEZE, 1, &v, 1, &sq, NULL, &v);
    }
    if (!st) st = vkp__bind_element(ctx, (int32_t)i, v, &items[i]);
  }
  if (!st)
    st = vkp__onnx_bind_list(ctx, vkp__onnx_output(ctx, 0), VKP__SYM_SEQUENCE,
                             items, (int32_t)n, elem_type);
  vkp__free(sizes);
  vkp__free(items);
  return st;
}

static vkp_status_t vkp__concat_from_sequence(vkp__onnx_ctx_t *ctx) {
  int32_t seq = -1;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  VKP_RETURN_IF_ERROR(vkp__list_input(ctx, 0, VKP__SYM_SEQUENCE, &seq));
  if (!vkp__onnx_attr(ctx, "axis"))
    return VKP__ONNX_INVALID("attribute 'axis' is required");
  int64_t axis, new_axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "axis", 0, &axis));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "new_axis", 0, &new_axis));
  int32_t n = ctx->syms[seq].n_items;
  if (n == 0)
    return VKP__ONNX_INVALID("'%s' is empty at import: nothing to concatenate",
                             ctx->syms[seq].name);
  int32_t *in = vkp__calloc((size_t)n, sizeof *in);
  if (!in) return VKP_OOM("ConcatFromSequence");
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < n && !st; ++i) {
    // Re-read: nothing here adds symbols, but keep the index discipline.
    vkp__onnx_sym_t *e = &ctx->syms[ctx->syms[seq].items[i]];
    st = vkp__onnx_sym_value(ctx, e, &in[i]);
    if (st) break;
    int32_t rank = vkp__onnx_value(ctx, in[i])->rank;
    int32_t out_rank = rank + (new_axis ? 1 : 0);
    if (axis < -(int64_t)out_rank || axis >= out_rank) {
      st = VKP__ONNX_INVALID("axis %lld out of range for rank %d",
                             (long long)axis, (int)out_rank);
      break;
    }
    if (new_axis) {
      int64_t ax = axis < 0 ? axis + out_rank : axis;
      vkp_attr_t a = vkp__onnx_a_ints("axes", &ax, 1);
      st = vkp__onnx_emit(ctx, VKP_OP_UNSQUEEZE, 1, &in[i], 1, &a, NULL, &in[i]);
    }
  }
  int32_t y;
  if (!st)
    st = vkp__onnx_concat_values(ctx, n, in, axis, vkp__onnx_output(ctx, 0), &y);
  vkp__free(in);
  return st;
}

vkp_status_t vkp__map_sequence(vkp__onnx_ctx_t *ctx) {
  const char *op = ctx->node->op_type;
  if (strcmp(op, "SplitToSequence") == 0) return vkp__split_to_sequence(ctx);
  if (strcmp(op, "ConcatFromSequence") == 0) return vkp__concat_from_sequence(ctx);
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  const char *out = vkp__onnx_output(ctx, 0);
  if (strcmp(op, "SequenceEmpty") == 0) {
    int64_t dtype;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "dtype", VKP__ONNX_FLOAT, &dtype));
    return vkp__onnx_bind_list(ctx, out, VKP__SYM_SEQUENCE, NULL, 0, (int32_t)dtype);
  }
  if (strcmp(op, "SequenceConstruct") == 0) {
    size_t n = ctx->node->n_input;
    if (n < 1) return VKP__ONNX_INVALID("SequenceConstruct needs an input");
    int32_t *items = vkp__calloc(n, sizeof *items);
    if (!items) return VKP_OOM("SequenceConstruct");
    vkp_status_t st = NULL;
    for (size_t i = 0; i < n && !st; ++i) st = vkp__tensor_input(ctx, (int32_t)i, &items[i]);
    int32_t elem = st ? 0 : vkp__elem_type(ctx, &ctx->syms[items[0]]);
    for (size_t i = 1; i < n && !st; ++i)
      if (vkp__elem_type(ctx, &ctx->syms[items[i]]) != elem)
        st = VKP__ONNX_INVALID("element %zu is %s, element 0 %s", i,
                               vkp__onnx_type_name(vkp__elem_type(ctx, &ctx->syms[items[i]])),
                               vkp__onnx_type_name(elem));
    if (!st) st = vkp__onnx_bind_list(ctx, out, VKP__SYM_SEQUENCE, items, (int32_t)n, elem);
    vkp__free(items);
    return st;
  }
  int32_t seq = -1;
  VKP_RETURN_IF_ERROR(vkp__list_input(ctx, 0, VKP__SYM_SEQUENCE, &seq));
  int32_t n = ctx->syms[seq].n_items;
  if (strcmp(op, "SequenceLength") == 0) {
    vkp__onnx_tensor_t t;
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, VKP__ONNX_INT64, 0, NULL));
    vkp__onnx_tensor_set_i(&t, 0, n);
    return vkp__onnx_bind_const(ctx, out, &t);
  }
  if (strcmp(op, "SequenceAt") == 0) {
    int32_t p;
    if (!vkp__onnx_input(ctx, 1)) return VKP__ONNX_INVALID("input 1 (position) is required");
    VKP_RETURN_IF_ERROR(vkp__position(ctx, 1, "the sequence position", n, false, 0, &p));
    return vkp__onnx_bind_alias(ctx, out, &ctx->syms[ctx->syms[seq].items[p]]);
  }
  bool insert = strcmp(op, "SequenceInsert") == 0;
  if (!insert && strcmp(op, "SequenceErase") != 0)
    return VKP__ONNX_UNSUPPORTED("unsupported op");
  if (!insert && n == 0)
    return VKP__ONNX_INVALID("'%s' is empty: nothing to erase", ctx->syms[seq].name);
  int32_t p, elem = -1;
  if (insert) VKP_RETURN_IF_ERROR(vkp__tensor_input(ctx, 1, &elem));
  VKP_RETURN_IF_ERROR(vkp__position(ctx, insert ? 2 : 1, "the sequence position", n, insert,
                                    insert ? n : n - 1, &p));
  int32_t elem_type = ctx->syms[seq].elem_type;
  if (insert) {
    int32_t t = vkp__elem_type(ctx, &ctx->syms[elem]);
    if (elem_type && t != elem_type)
      return VKP__ONNX_INVALID("inserting %s into a sequence of %s",
                               vkp__onnx_type_name(t), vkp__onnx_type_name(elem_type));
    elem_type = t;
  }
  int32_t *items = vkp__calloc((size_t)n + 2, sizeof *items);
  if (!items) return VKP_OOM("sequence");
  int32_t m = 0;
  for (int32_t i = 0; i <= n; ++i) {
    if (insert && i == p) items[m++] = elem;
    if (i < n && (insert || i != p)) items[m++] = ctx->syms[seq].items[i];
  }
  vkp_status_t st = vkp__onnx_bind_list(ctx, out, VKP__SYM_SEQUENCE, items, m, elem_type);
  vkp__free(items);
  return st;
}

vkp_status_t vkp__map_optional(vkp__onnx_ctx_t *ctx) {
  const char *op = ctx->node->op_type;
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  const char *out = vkp__onnx_output(ctx, 0);
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (strcmp(op, "Optional") == 0) {
    if (!x) return vkp__onnx_bind_list(ctx, out, VKP__SYM_OPTIONAL, NULL, 0, 0);
    if (x->kind == VKP__SYM_OPTIONAL)
      return VKP__ONNX_UNSUPPORTED("an optional of an optional");
    int32_t item = vkp__onnx_sym_index(ctx, x);
    return vkp__onnx_bind_list(ctx, out, VKP__SYM_OPTIONAL, &item, 1, 0);
  }
  if (strcmp(op, "OptionalHasElement") == 0)
    return vkp__bind_bool(ctx, x && (x->kind != VKP__SYM_OPTIONAL || x->n_items > 0));
  if (strcmp(op, "OptionalGetElement") != 0)
    return VKP__ONNX_UNSUPPORTED("unsupported op");
  if (!x) return VKP__ONNX_INVALID("input 0 is required");
  if (x->kind != VKP__SYM_OPTIONAL) return vkp__onnx_bind_alias(ctx, out, x);
  if (x->n_items == 0)
    return VKP__ONNX_INVALID("'%s' is an empty optional (known at import): it "
                             "has no element to get",
                             x->name);
  return vkp__onnx_bind_alias(ctx, out, &ctx->syms[x->items[0]]);
}

// SequenceMap: the body once per element, its inputs the i-th elements of
// the sequence inputs and the tensor inputs as they are.
vkp_status_t vkp__map_sequence_map(vkp__onnx_ctx_t *ctx) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, "body");
  const Onnx__GraphProto *body = a ? a->g : NULL;
  if (!body) return VKP__ONNX_INVALID("attribute 'body' (a graph) is required");
  size_t n_in = ctx->node->n_input, n_out = ctx->node->n_output;
  if (n_in < 1 || n_in > 64 || n_out < 1 || n_out > 64)
    return VKP__ONNX_UNSUPPORTED("%zu inputs and %zu outputs (1 to 64 each)", n_in, n_out);
  if (body->n_input != n_in || body->n_output != n_out)
    return VKP__ONNX_INVALID("the body has %zu inputs and %zu outputs; the node "
                             "%zu and %zu",
                             body->n_input, body->n_output, n_in, n_out);
  int32_t seq = -1;
  VKP_RETURN_IF_ERROR(vkp__list_input(ctx, 0, VKP__SYM_SEQUENCE, &seq));
  int32_t n = ctx->syms[seq].n_items;
  int32_t in[64];
  for (size_t i = 0; i < n_in; ++i) {
    vkp__onnx_sym_t *s = vkp__onnx_input(ctx, (int32_t)i);
    if (!s) return VKP__ONNX_INVALID("input %zu is required", i);
    if (s->kind == VKP__SYM_OPTIONAL)
      return VKP__ONNX_UNSUPPORTED("input %zu ('%s') is an optional", i, s->name);
    if (s->kind == VKP__SYM_SEQUENCE && s->n_items != n)
      return VKP__ONNX_INVALID("input %zu ('%s') has %d elements, input 0 %d", i,
                               s->name, (int)s->n_items, (int)n);
    in[i] = vkp__onnx_sym_index(ctx, s);
  }
  int32_t *items = vkp__calloc((size_t)n * n_out + 1, sizeof *items);
  char **names = vkp__calloc(n_out + 1, sizeof *names);
  vkp_status_t st = !items || !names ? VKP_OOM("SequenceMap") : NULL;
  int32_t problems = ctx->problems ? ctx->problems->count : 0;
  for (int32_t k = 0; k < n && !st; ++k) {
    int32_t bind[64];
    for (size_t i = 0; i < n_in; ++i)
      bind[i] = ctx->syms[in[i]].kind == VKP__SYM_SEQUENCE ? ctx->syms[in[i]].items[k]
                                                           : in[i];
    char label[32];
    snprintf(label, sizeof label, "map%d", (int)k);
    st = vkp__onnx_import_subgraph(ctx, body, label, (int32_t)n_in, bind, names);
    if (!st && ctx->problems && ctx->problems->count != problems)
      st = VKP__ONNX_UNSUPPORTED("the body could not be imported for element "
                                 "%d (its problems are listed)",
                                 (int)k);
    for (size_t o = 0; o < n_out && !st; ++o) {
      vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, names[o]);
      if (!s || s->poisoned || s->kind != VKP__SYM_TENSOR)
        st = VKP__ONNX_INVALID("body output '%s' is not a tensor defined in the body",
                               names[o]);
      else
        items[o * (size_t)n + (size_t)k] = vkp__onnx_sym_index(ctx, s);
    }
    for (size_t o = 0; o < n_out; ++o) {
      vkp__free(names[o]);
      names[o] = NULL;
    }
  }
  for (size_t o = 0; o < n_out && !st; ++o) {
    const char *out = vkp__onnx_output(ctx, (int32_t)o);
    int32_t elem = n ? vkp__elem_type(ctx, &ctx->syms[items[o * (size_t)n]]) : 0;
    if (out) st = vkp__onnx_bind_list(ctx, out, VKP__SYM_SEQUENCE, items + o * (size_t)n, n, elem);
  }
  vkp__free(items);
  vkp__free(names);
  return st;
}
