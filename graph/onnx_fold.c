// SPDX-License-Identifier: Apache-2.0
// Import-time constant folding: when every input of a node is known while
// importing (initializers, Constant, Shape of a static shape, and whatever
// was folded from those), the node is evaluated here and its outputs become
// constants. This is what turns exporters' shape arithmetic (Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape) into plain IR attributes.
//
// Every IR node the importer emits folds through the op table's reference
// kernel (vkp__onnx_fold_ir_node), whatever the op. The per-op folders
// further down are for ONNX ops the IR has no op for yet; they go as the IR
// gains those ops.
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"
#include "graph/onnx_internal.h"

// Folded tensors beyond this many bytes are refused rather than allocated.
#define VKP__FOLD_MAX_BYTES VKP__ONNX_MADE_MAX_BYTES

vkp_status_t vkp__onnx_fold_ir_node(vkp__onnx_ctx_t *ctx, int32_t index,
                                    bool *out_folded) {
  *out_folded = false;
  vkp_graph_t *g = ctx->graph;
  const vkp_node_t *n = &g->nodes[index];
  if (index != g->n_nodes - 1 || n->n_inputs == 0) return NULL;
  for (int32_t i = 0; i < n->n_inputs; ++i)
    if (n->inputs[i] >= 0 && g->values[n->inputs[i]].kind != VKP_VALUE_CONSTANT)
      return NULL;
  size_t total = 0;
  for (int32_t i = 0; i < n->n_outputs; ++i) {
    const vkp_value_t *v = &g->values[n->outputs[i]];
    size_t bytes;
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes))
      return NULL;
    total += bytes;
  }
  // A large result stays a node: computing it at run time costs less than
  // carrying it in the model.
  if (total > VKP__FOLD_MAX_BYTES) return NULL;
  enum { MAX_IO = 64 };
  if (n->n_inputs > MAX_IO || n->n_outputs > MAX_IO) return NULL;
  vkp_tensor_t ins[MAX_IO], outs[MAX_IO];
  const vkp_tensor_t *args[MAX_IO];
  void *data[MAX_IO] = {NULL};
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < n->n_inputs && !st; ++i) {
    args[i] = NULL;
    if (n->inputs[i] < 0) continue;
    const vkp_value_t *v = &g->values[n->inputs[i]];
    st = vkp_tensor_init_view(&ins[i], v->dtype, v->rank, v->shape, v->data);
    args[i] = &ins[i];
  }
  for (int32_t i = 0; i < n->n_outputs && !st; ++i) {
    const vkp_value_t *v = &g->values[n->outputs[i]];
    st = vkp_tensor_init(&outs[i], v->dtype, v->rank, v->shape);
    if (st) {
      for (int32_t j = 0; j < i; ++j) vkp_tensor_deinit(&outs[j]);
      break;
    }
  }
  if (st) return st;
  st = vkp_node_eval(n, args, outs);
  for (int32_t i = 0; i < n->n_outputs; ++i) {
    data[i] = outs[i].data;  // taken over by the graph below
    outs[i].owns_data = false;
  }
  if (st) {
    for (int32_t i = 0; i < n->n_outputs; ++i) vkp__free(data[i]);
    return vkp_status_annotate(st, "folding constant inputs");
  }
  // A data-dependent output (non_zero, unique of constants) becomes a
  // constant of the shape the kernel found.
  for (int32_t i = 0; i < n->n_outputs; ++i) {
    vkp_value_t *v = &g->values[n->outputs[i]];
    if (!v->bounded) continue;
    memcpy(v->shape, outs[i].shape, sizeof v->shape);
    v->bounded = false;
  }
  VKP_RETURN_IF_ERROR(vkp__graph_fold_last_node(g, data));
  *out_folded = true;
  return NULL;
}

static vkp_status_t vkp__alloc_out(vkp__onnx_tensor_t *t, int32_t type,
                                   int32_t rank, const int64_t *shape) {
  size_t bytes;
  size_t esize = vkp__onnx_type_size(type);
  if (rank > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("result rank %d exceeds %d", (int)rank,
                                 VKP_MAX_RANK);
  if (esize && vkp_shape_numel(rank, shape, esize, &bytes) &&
      bytes > VKP__FOLD_MAX_BYTES)
    return VKP__ONNX_UNSUPPORTED("folded constant of %zu bytes is too large",
                                 bytes);
  return vkp__onnx_tensor_alloc(t, type, rank, shape);
}

static const vkp__onnx_tensor_t *vkp__in(vkp__onnx_ctx_t *ctx, int32_t i) {
  vkp__onnx_sym_t *s = vkp__onnx_input(ctx, i);
  return s && s->is_const ? &s->constant : NULL;
}

static vkp_status_t vkp__bind_out(vkp__onnx_ctx_t *ctx, vkp__onnx_tensor_t *t) {
  for (size_t i = 1; i < ctx->node->n_output; ++i)
    if (vkp__onnx_output(ctx, (int32_t)i)) {
      vkp__onnx_tensor_deinit(t);
      return VKP__ONNX_UNSUPPORTED("output %zu is not supported", i);
    }
  const char *out = vkp__onnx_output(ctx, 0);
  if (!out) {
    vkp__onnx_tensor_deinit(t);
    return VKP__ONNX_INVALID("output 0 has no name");
  }
  return vkp__onnx_bind_const(ctx, out, t);
}

static void vkp__unravel(size_t i, int32_t rank, const int64_t *shape,
                         int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    size_t n = (size_t)shape[d];
    idx[d] = n ? (int64_t)(i % n) : 0;
    i = n ? i / n : 0;
  }
}

// ---------------------------------------------------------------------------
// Broadcasting

// Multidirectional broadcast of `n` shapes (numpy rules).
static vkp_status_t vkp__broadcast(int32_t n, const vkp__onnx_tensor_t *const *t,
                                   int32_t *out_rank, int64_t *out_shape) {
  int32_t rank = 0;
  for (int32_t k = 0; k < n; ++k) rank = t[k]->rank > rank ? t[k]->rank : rank;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t dim = 1;
    for (int32_t k = 0; k < n; ++k) {
      int32_t i = d - (rank - t[k]->rank);
      int64_t v = i >= 0 ? t[k]->shape[i] : 1;
      if (v != 1 && dim != 1 && v != dim)
        return VKP__ONNX_INVALID("shapes do not broadcast (dim %d: %lld vs %lld)",
                                 (int)d, (long long)dim, (long long)v);
      if (v != 1) dim = v;
    }
    out_shape[d] = dim;
  }
  *out_rank = rank;
  return NULL;
}

// Element offset in `t` of the broadcast result's multi-index `idx`.
static size_t vkp__bcast_offset(const vkp__onnx_tensor_t *t, int32_t rank,
                                const int64_t *idx) {
  size_t off = 0, stride = 1;
  for (int32_t i = t->rank - 1; i >= 0; --i) {
    int32_t d = i + (rank - t->rank);
    if (t->shape[i] != 1) off += (size_t)idx[d] * stride;
    stride *= (size_t)t->shape[i];
  }
  return off;
}

// Expand: broadcast the input to (the broadcast of) a given shape.
vkp_status_t vkp__onnx_fold_expand(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_tensor_t *x = vkp__in(ctx, 0), *s = vkp__in(ctx, 1);
  if (!x || !s) return VKP__ONNX_INVALID("takes two inputs");
  if (s->type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || s->rank != 1 ||
      vkp__onnx_tensor_numel(s) > VKP_MAX_RANK)
    return VKP__ONNX_INVALID("shape must be a short 1-D int64 tensor");
  vkp__onnx_tensor_t target = {.type = x->type, .rank = (int32_t)s->shape[0]};
  for (int32_t d = 0; d < target.rank; ++d) {
    target.shape[d] = vkp__onnx_tensor_get_i(s, (size_t)d);
    if (target.shape[d] < 0) return VKP__ONNX_INVALID("negative dim");
  }
  const vkp__onnx_tensor_t *both[2] = {x, &target};
  int32_t rank = 0;
  int64_t shape[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__broadcast(2, both, &rank, shape));
  vkp__onnx_tensor_t out;
  VKP_RETURN_IF_ERROR(vkp__alloc_out(&out, x->type, rank, shape));
  size_t count = vkp__onnx_tensor_numel(&out), esize = vkp__onnx_type_size(x->type);
  for (size_t i = 0; i < count; ++i) {
    int64_t idx[VKP_MAX_RANK];
    vkp__unravel(i, rank, shape, idx);
    memcpy((char *)out.data + i * esize,
           (const char *)x->data + vkp__bcast_offset(x, rank, idx) * esize, esize);
  }
  return vkp__bind_out(ctx, &out);
}

// ---------------------------------------------------------------------------
// Sequences and fills

vkp_status_t vkp__onnx_fold_range(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_tensor_t *s = vkp__in(ctx, 0), *l = vkp__in(ctx, 1),
                           *d = vkp__in(ctx, 2);
  if (!s || !l || !d) return VKP__ONNX_INVALID("takes three inputs");
  if (vkp__onnx_tensor_numel(s) != 1 || vkp__onnx_tensor_numel(l) != 1 ||
      vkp__onnx_tensor_numel(d) != 1)
    return VKP__ONNX_INVALID("start, limit and delta must be scalars");
  double start = vkp__onnx_tensor_get_f(s, 0), limit = vkp__onnx_tensor_get_f(l, 0),
         delta = vkp__onnx_tensor_get_f(d, 0);
  if (delta == 0 || !(start == start) || !(limit == limit))
    return VKP__ONNX_INVALID("delta is 0 or a bound is not a number");
  double count = ceil((limit - start) / delta);
  if (!(count >= 0)) count = 0;
  if (count > (double)(VKP__FOLD_MAX_BYTES / 8))
    return VKP__ONNX_UNSUPPORTED("Range of %.0f elements is too large", count);
  int64_t n = (int64_t)count;
  vkp__onnx_tensor_t out;
  VKP_RETURN_IF_ERROR(vkp__alloc_out(&out, s->type, 1, &n));
  bool fl = vkp__onnx_type_is_float(s->type);
  int64_t is = vkp__onnx_tensor_get_i(s, 0), id = vkp__onnx_tensor_get_i(d, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (fl) vkp__onnx_tensor_set_f(&out, (size_t)i, start + (double)i * delta);
    else vkp__onnx_tensor_set_i(&out, (size_t)i,
                                (int64_t)((uint64_t)is + (uint64_t)i * (uint64_t)id));
  }
  return vkp__bind_out(ctx, &out);
}

vkp_status_t vkp__onnx_fill_value(vkp__onnx_ctx_t *ctx, vkp__onnx_tensor_t *out_value) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, "value");
  if (!a)
    return vkp__onnx_tensor_alloc(out_value, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL);
  if (!a->t) return VKP__ONNX_INVALID("attribute 'value' holds no tensor");
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_decode(a->t, ctx->base_dir, out_value));
  if (vkp__onnx_tensor_numel(out_value) != 1) {
    vkp__onnx_tensor_deinit(out_value);
    return VKP__ONNX_INVALID("attribute 'value' must have one element");
  }
  return NULL;
}

vkp_status_t vkp__onnx_fold_constant_of_shape(vkp__onnx_ctx_t *ctx) {
  const vkp__onnx_tensor_t *s = vkp__in(ctx, 0);
  if (!s) return VKP__ONNX_INVALID("input 0 (shape) is required");
  if (s->type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || s->rank != 1)
    return VKP__ONNX_INVALID("shape must be a 1-D int64 tensor");
  size_t rank = vkp__onnx_tensor_numel(s);
  if (rank > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("rank %zu exceeds %d", rank, VKP_MAX_RANK);
  int64_t shape[VKP_MAX_RANK];
  for (size_t i = 0; i < rank; ++i) {
    shape[i] = vkp__onnx_tensor_get_i(s, i);
    if (shape[i] < 0) return VKP__ONNX_INVALID("dim %zu is negative", i);
  }
  vkp__onnx_tensor_t value = {0};
  VKP_RETURN_IF_ERROR(vkp__onnx_fill_value(ctx, &value));
  vkp__onnx_tensor_t out;
  vkp_status_t st = vkp__alloc_out(&out, value.type, (int32_t)rank, shape);
  if (!st) {
    size_t n = vkp__onnx_tensor_numel(&out), esize = vkp__onnx_type_size(value.type);
    for (size_t i = 0; i < n; ++i)
      memcpy((char *)out.data + i * esize, value.data, esize);
  }
  vkp__onnx_tensor_deinit(&value);
  VKP_RETURN_IF_ERROR(st);
  return vkp__bind_out(ctx, &out);
}
