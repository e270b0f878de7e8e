// SPDX-License-Identifier: Apache-2.0
// Shape vectors computed at run time, read back symbolically at import.
//
// Exporters build the target shapes of ConstantOfShape, Expand and Reshape
// from Shape(v): Concat(Unsqueeze(Gather(Shape(v), k)), constants...), often
// through torch's "-1 means keep" guard Where(Equal(s, -1), 1, s). When v is
// bounded (docs/onnx.md, "Data-dependent output shapes"), one entry of such a
// vector is v's run-time extent and the rest are known at import. The
// importer emits those nodes as IR nodes (they run), and this file walks them
// back: each entry of the vector is either a number or "the extent of bounded
// value v" — enough to give ConstantOfShape and Expand an output bounded like
// v, built from ops that take bounded inputs.
#include <string.h>

#include "base/status_macros.h"
#include "graph/bounded.h"
#include "graph/onnx_internal.h"

// Deep enough for the exporters' chains (Shape → Gather → Unsqueeze →
// Concat → Reshape → Equal → Where is 7), shallow enough to stay cheap.
#define VKP__SHAPE_EXPR_DEPTH 16

// The integer constant `v` (rank 0 or 1, at most VKP_MAX_RANK entries).
static bool vkp__expr_const(const vkp_value_t *v, vkp__shape_expr_t *out) {
  if (v->kind != VKP_VALUE_CONSTANT || v->rank > 1 || !v->data) return false;
  int64_t n = v->rank ? v->shape[0] : 1;
  if (n > VKP_MAX_RANK) return false;
  out->n = (int32_t)n;
  out->scalar = v->rank == 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t x;
    switch (v->dtype) {
      case VKP_DTYPE_INT64: memcpy(&x, (const char *)v->data + i * 8, 8); break;
      case VKP_DTYPE_INT32: {
        int32_t y;
        memcpy(&y, (const char *)v->data + i * 4, 4);
        x = y;
        break;
      }
      case VKP_DTYPE_BOOL: x = ((const uint8_t *)v->data)[i] != 0; break;
      default: return false;
    }
    out->d[i] = (vkp__dim_expr_t){.value = x, .src = -1};
  }
  return true;
}

static bool vkp__expr_eval(const vkp__onnx_ctx_t *ctx, int32_t value,
                           int32_t depth, vkp__shape_expr_t *out);

// Entry i of an operand, broadcasting a one-entry operand.
static const vkp__dim_expr_t *vkp__expr_at(const vkp__shape_expr_t *e, int32_t i) {
  return &e->d[e->n == 1 ? 0 : i];
}

// Elementwise equal / add / sub / mul / where over entries. An entry that
// is an extent is only combined where the result is certain: an extent is
// never negative, equals itself, and is unchanged by + 0, - 0 and * 1.
static bool vkp__expr_elementwise(const vkp__onnx_ctx_t *ctx, const vkp_node_t *node,
                                  int32_t depth, vkp__shape_expr_t *out) {
  vkp__shape_expr_t in[3];
  int32_t n = 1;
  for (int32_t k = 0; k < node->n_inputs; ++k) {
    if (!vkp__expr_eval(ctx, node->inputs[k], depth + 1, &in[k])) return false;
    if (in[k].n != 1 && n != 1 && in[k].n != n) return false;
    if (in[k].n != 1) n = in[k].n;
  }
  out->n = n;
  out->scalar = true;
  for (int32_t k = 0; k < node->n_inputs; ++k) out->scalar &= in[k].scalar;
  for (int32_t i = 0; i < n; ++i) {
    const vkp__dim_expr_t *a = vkp__expr_at(&in[0], i), *b = vkp__expr_at(&in[1], i);
    vkp__dim_expr_t r = {.src = -1};
    switch (node->op) {
      case VKP_OP_EQUAL:
        if (a->src < 0 && b->src < 0) r.value = a->value == b->value;
        else if (a->src >= 0 && b->src >= 0) {
          if (a->src != b->src) return false;
          r.value = 1;
        } else {
          const vkp__dim_expr_t *k = a->src < 0 ? a : b;
          if (k->value >= 0) return false;  // an extent may be any size >= 0
          r.value = 0;
        }
        break;
      case VKP_OP_WHERE: {
        const vkp__dim_expr_t *c = a;
        if (c->src >= 0) return false;
        r = *vkp__expr_at(&in[c->value ? 1 : 2], i);
        break;
      }
      case VKP_OP_ADD:
      case VKP_OP_SUB:
      case VKP_OP_MUL: {
        if (a->src < 0 && b->src < 0) {
          r.value = node->op == VKP_OP_ADD   ? a->value + b->value
                    : node->op == VKP_OP_SUB ? a->value - b->value
                                             : a->value * b->value;
          break;
        }
        int64_t unit = node->op == VKP_OP_MUL ? 1 : 0;
        if (a->src >= 0 && b->src < 0 && b->value == unit) r = *a;
        else if (node->op != VKP_OP_SUB && b->src >= 0 && a->src < 0 && a->value == unit)
          r = *b;
        else return false;
        break;
      }
      default: return false;
    }
    out->d[i] = r;
  }
  return true;
}

static bool vkp__expr_eval(const vkp__onnx_ctx_t *ctx, int32_t value,
                           int32_t depth, vkp__shape_expr_t *out) {
  if (value < 0 || depth > VKP__SHAPE_EXPR_DEPTH) return false;
  const vkp_value_t *v = vkp__onnx_value(ctx, value);
  if (v->bounded) return false;
  if (v->kind == VKP_VALUE_CONSTANT) return vkp__expr_const(v, out);
  if (v->producer < 0 || v->rank > 1) return false;
  const vkp_node_t *node = &ctx->graph->nodes[v->producer];
  switch (node->op) {
    case VKP_OP_SHAPE: {
      const vkp_value_t *x = vkp__onnx_value(ctx, node->inputs[0]);
      int64_t start = vkp_node_attr_int(node, "start", 0);
      int64_t end = vkp_node_attr_int(node, "end", x->rank);
      if (start < 0) start += x->rank;
      if (end < 0) end += x->rank;
      if (start < 0 || end > x->rank || end < start) return false;
      out->n = (int32_t)(end - start);
      out->scalar = false;
      for (int64_t d = start; d < end; ++d) {
        bool ext = x->bounded && d == x->bounded_axis;
        out->d[d - start] = (vkp__dim_expr_t){.value = ext ? 0 : x->shape[d],
                                              .src = ext ? node->inputs[0] : -1};
      }
      return true;
    }
    case VKP_OP_GATHER: {
      vkp__shape_expr_t data, idx;
      if (vkp_node_attr_int(node, "axis", 0) != 0 && vkp_node_attr_int(node, "axis", 0) != -1)
        return false;
      if (!vkp__expr_eval(ctx, node->inputs[0], depth + 1, &data) || data.scalar)
        return false;
      const vkp_value_t *iv = vkp__onnx_value(ctx, node->inputs[1]);
      if (!vkp__expr_const(iv, &idx)) return false;
      out->n = idx.n;
      out->scalar = idx.scalar;
      for (int32_t i = 0; i < idx.n; ++i) {
        int64_t k = idx.d[i].value < 0 ? idx.d[i].value + data.n : idx.d[i].value;
        if (k < 0 || k >= data.n) return false;
        out->d[i] = data.d[k];
      }
      return true;
    }
    case VKP_OP_UNSQUEEZE:
    case VKP_OP_SQUEEZE:
    case VKP_OP_RESHAPE:
    case VKP_OP_FLATTEN:
    case VKP_OP_IDENTITY:
    case VKP_OP_CAST:
      if (node->op == VKP_OP_CAST && v->dtype != VKP_DTYPE_INT64 &&
          v->dtype != VKP_DTYPE_INT32)
        return false;
      if (!vkp__expr_eval(ctx, node->inputs[0], depth + 1, out)) return false;
      out->scalar = v->rank == 0;
      return out->n == (v->rank ? v->shape[0] : 1);
    case VKP_OP_SLICE: {
      // Of a shape vector: canonical starts/ends/steps, one entry (rank 1).
      vkp__shape_expr_t data;
      const int64_t *starts, *ends, *steps;
      if (!vkp__expr_eval(ctx, node->inputs[0], depth + 1, &data) || data.scalar ||
          vkp_node_attr_ints(node, "starts", &starts) != 1 ||
          vkp_node_attr_ints(node, "ends", &ends) != 1 ||
          vkp_node_attr_ints(node, "steps", &steps) != 1 || steps[0] == 0)
        return false;
      out->n = 0;
      out->scalar = false;
      for (int64_t i = starts[0]; steps[0] > 0 ? i < ends[0] : i > ends[0]; i += steps[0]) {
        if (i < 0 || i >= data.n || out->n >= VKP_MAX_RANK) return false;
        out->d[out->n++] = data.d[i];
      }
      return out->n == v->shape[0];
    }
    case VKP_OP_CONCAT: {
      vkp__shape_expr_t part;
      out->n = 0;
      out->scalar = false;
      for (int32_t k = 0; k < node->n_inputs; ++k) {
        if (!vkp__expr_eval(ctx, node->inputs[k], depth + 1, &part)) return false;
        if (out->n + part.n > VKP_MAX_RANK) return false;
        memcpy(&out->d[out->n], part.d, (size_t)part.n * sizeof part.d[0]);
        out->n += part.n;
      }
      return true;
    }
    case VKP_OP_EQUAL:
    case VKP_OP_WHERE:
    case VKP_OP_ADD:
    case VKP_OP_SUB:
    case VKP_OP_MUL:
      return vkp__expr_elementwise(ctx, node, depth, out);
    default:
      return false;
  }
}

bool vkp__onnx_shape_expr(const vkp__onnx_ctx_t *ctx, int32_t value,
                          vkp__shape_expr_t *out) {
  memset(out, 0, sizeof *out);
  return vkp__expr_eval(ctx, value, 0, out);
}

// The one run-time entry of `e`: its position and bounded source. False
// when every entry is known, or more than one is an extent.
static bool vkp__expr_one_extent(const vkp__shape_expr_t *e, int32_t *out_pos) {
  int32_t pos = -1;
  for (int32_t i = 0; i < e->n; ++i) {
    if (e->d[i].src < 0) {
      if (e->d[i].value < 0) return false;
      continue;
    }
    if (pos >= 0) return false;
    pos = i;
  }
  *out_pos = pos;
  return pos >= 0;
}

// A bool tensor of rank e->n, true everywhere, whose dims are e's known
// entries and, at the extent's position, the extent of its bounded source
// (so ops broadcasting against it take that extent): cast the source to
// bool, or it with its negation, reduce it to the bounded axis (as uint8),
// reshape it into place, then widen it with a constant of the known dims.
static vkp_status_t vkp__extent_mask(vkp__onnx_ctx_t *ctx, const vkp__shape_expr_t *e,
                                     int32_t pos, int32_t *out_mask) {
  int32_t src = e->d[pos].src;
  const vkp_value_t *sv = vkp__onnx_value(ctx, src);
  int32_t bounded_axis = sv->bounded_axis, src_rank = sv->rank;
  int32_t t, nt;
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "bool"};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_CAST, 1, &src, 1, &to, NULL, &t));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_NOT, 1, &t, 0, NULL, NULL, &nt));
  int32_t both[2] = {t, nt};
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_OR, 2, both, 0, NULL, NULL, &t));
  if (src_rank > 1) {
    // Reduced as uint8 (which every target's reduce_max takes), back to bool
    // after the reshape.
    vkp_attr_t u8 = {.name = "to", .kind = VKP_ATTR_STRING, .s = "uint8"};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_CAST, 1, &t, 1, &u8, NULL, &t));
    int64_t axes[VKP_MAX_RANK];
    int32_t n_axes = 0;
    for (int32_t d = 0; d < src_rank; ++d)
      if (d != bounded_axis) axes[n_axes++] = d;
    vkp_attr_t a[2] = {vkp__onnx_a_ints("axes", axes, n_axes),
                       vkp__onnx_a_int("keepdims", 0)};
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_REDUCE_MAX, 1, &t, 2, a, NULL, &t));
  }
  int64_t shape[VKP_MAX_RANK];
  bool widen = false;
  for (int32_t d = 0; d < e->n; ++d) {
    shape[d] = d == pos ? -1 : 1;
    widen |= d != pos && e->d[d].value != 1;
  }
  vkp_attr_t s = vkp__onnx_a_ints("shape", shape, e->n);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &t, 1, &s, NULL, &t));
  if (src_rank > 1)
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_CAST, 1, &t, 1, &to, NULL, &t));
  if (widen) {
    vkp__onnx_tensor_t ones = {0};
    for (int32_t d = 0; d < e->n; ++d) shape[d] = d == pos ? 1 : e->d[d].value;
    size_t bytes = 0;
    if (!vkp_shape_numel(e->n, shape, 1, &bytes) || bytes > VKP__ONNX_MADE_MAX_BYTES) {
      char s_buf[160];
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "a shape with one run-time entry, %s around it, is larger than "
                             "the %zu MiB a constant made at import may hold",
                             vkp_shape_format(e->n, shape, s_buf, sizeof s_buf),
                             VKP__ONNX_MADE_MAX_BYTES >> 20);
    }
    VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&ones, ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
                                               e->n, shape));
    memset(ones.data, 1, ones.nbytes);
    int32_t in[2] = {t, -1};
    vkp_status_t st = vkp__onnx_add_const(ctx, &ones, &in[1]);
    vkp__onnx_tensor_deinit(&ones);
    VKP_RETURN_IF_ERROR(st);
    VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_AND, 2, in, 0, NULL, NULL, &t));
  }
  *out_mask = t;
  return NULL;
}

vkp_status_t vkp__onnx_broadcast_to_expr(vkp__onnx_ctx_t *ctx, int32_t x,
                                         const vkp__shape_expr_t *e, bool *out_done) {
  *out_done = false;
  int32_t pos;
  if (!vkp__expr_one_extent(e, &pos)) return NULL;
  int32_t mask;
  VKP_RETURN_IF_ERROR(vkp__extent_mask(ctx, e, pos, &mask));
  int32_t in[3] = {mask, x, x};
  *out_done = true;
  return vkp__onnx_emit_out(ctx, VKP_OP_WHERE, 3, in, 0, NULL);
}

vkp_status_t vkp__onnx_extent_iota(vkp__onnx_ctx_t *ctx, const vkp__shape_expr_t *e,
                                   int32_t *out_value, bool *out_done) {
  *out_done = false;
  int32_t pos;
  if (e->n != 1 || !vkp__expr_one_extent(e, &pos)) return NULL;
  vkp__shape_expr_t vec = *e;
  vec.scalar = false;
  int32_t mask, nz;
  VKP_RETURN_IF_ERROR(vkp__extent_mask(ctx, &vec, pos, &mask));  // [<=N], all true
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_NON_ZERO, 1, &mask, 0, NULL, NULL, &nz));
  int64_t flat = -1;
  vkp_attr_t s = vkp__onnx_a_ints("shape", &flat, 1);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_RESHAPE, 1, &nz, 1, &s, NULL, out_value));
  *out_done = true;
  return NULL;
}

// Whether node n's output takes its extent unchanged from its input `i`.
static int32_t vkp__extent_from(const vkp__onnx_ctx_t *ctx, const vkp_node_t *n,
                                const vkp_value_t *y) {
  const vkp_value_t *x = n->n_inputs ? vkp__onnx_value(ctx, n->inputs[0]) : NULL;
  switch (vkp__bound_rule(n->op)) {
    case VKP__BOUND_BROADCAST:
      for (int32_t i = 0; i < n->n_inputs; ++i)
        if (n->inputs[i] >= 0 && vkp__onnx_value(ctx, n->inputs[i])->bounded) return i;
      return -1;
    case VKP__BOUND_BATCH:
    case VKP__BOUND_REDUCE:
    case VKP__BOUND_ARG:
    case VKP__BOUND_SCATTER:
      return x && x->bounded ? 0 : -1;
    case VKP__BOUND_VIEW: {
      // Same elements: the extent carries over when the other dims hold as
      // many elements on both sides.
      if (!x || !x->bounded) return -1;
      int64_t in = 1, out = 1;
      for (int32_t d = 0; d < x->rank; ++d)
        if (d != x->bounded_axis) in *= x->shape[d];
      for (int32_t d = 0; d < y->rank; ++d)
        if (d != y->bounded_axis) out *= y->shape[d];
      return in == out ? 0 : -1;
    }
    case VKP__BOUND_GATHER:
    case VKP__BOUND_GATHER_ELEMENTS:
    case VKP__BOUND_GATHER_ND:
      if (vkp__onnx_value(ctx, n->inputs[1])->bounded) return 1;
      return x && x->bounded ? 0 : -1;
    case VKP__BOUND_TOP_K:
      return x && x->bounded && x->bounded_axis != vkp_node_attr_int(n, "axis", -1) ? 0 : -1;
    case VKP__BOUND_CONCAT: {
      // Along another axis every input varies alike (checked at run time);
      // along the axis, one bounded input joined by empty ones only.
      bool along = y->bounded_axis == vkp_node_attr_int(n, "axis", 0);
      int32_t found = -1;
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *u = vkp__onnx_value(ctx, n->inputs[i]);
        if (u->bounded && found < 0) found = i;
        else if (along && (u->bounded || u->shape[y->bounded_axis] != 0)) return -1;
      }
      return found;
    }
    case VKP__BOUND_SLICE: {
      // A slice that keeps the whole bounded axis.
      const int64_t *starts, *ends, *steps;
      int32_t b = x->bounded_axis;
      if (vkp_node_attr_ints(n, "starts", &starts) <= b ||
          vkp_node_attr_ints(n, "ends", &ends) <= b ||
          vkp_node_attr_ints(n, "steps", &steps) <= b)
        return -1;
      return starts[b] == 0 && steps[b] == 1 && ends[b] >= x->shape[b] ? 0 : -1;
    }
    case VKP__BOUND_OWN:
      if (n->op == VKP_OP_ROI_ALIGN && vkp__onnx_value(ctx, n->inputs[1])->bounded) return 1;
      return -1;
    default:
      return -1;
  }
}

int32_t vkp__onnx_extent_origin(const vkp__onnx_ctx_t *ctx, int32_t value) {
  for (int32_t step = 0; step < 4096; ++step) {
    const vkp_value_t *v = vkp__onnx_value(ctx, value);
    if (!v->bounded || v->producer < 0) return value;
    const vkp_node_t *n = &ctx->graph->nodes[v->producer];
    int32_t i = vkp__extent_from(ctx, n, v);
    if (i < 0) return value;
    value = n->inputs[i];
  }
  return value;
}
