// SPDX-License-Identifier: Apache-2.0
// ONNX If, and Loop and Scan unrolled at import (below). If: a condition
// known at import time (a constant, or folded from constants) takes its
// branch inline: the branch's nodes join the graph
// under scoped names and the other branch is never read. A condition known
// only at run time imports both branches and picks each output with the
// IR's branch_select, whose result is bounded when the branches' shapes
// differ along one axis (torchvision's `if boxes.numel() == 0: return
// empty`). docs/onnx.md, "If", says why the branches join the flat graph
// (and how "ref" still runs only the taken one).
#include <stdio.h>
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
      if (!st && (a->kind != VKP__SYM_TENSOR || b->kind != VKP__SYM_TENSOR))
        st = VKP__ONNX_UNSUPPORTED(
            "output %zu is %s and the condition '%s' is only known at run "
            "time; vkpipe resolves sequences and optionals at import, so it "
            "needs the condition known there",
            i, vkp__onnx_sym_kind_name(a->kind != VKP__SYM_TENSOR ? a->kind : b->kind),
            ctx->node->input[0]);
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

// ---------------------------------------------------------------------------
// Loop and Scan, unrolled at import: the body is imported once per
// iteration (under "<node>/iter<k>/", "<node>/t<k>/"), its inputs bound to
// the symbols of that iteration, so the loop-carried values thread through
// as ordinary values and the scan outputs are concatenated at the end. The
// trip count and every iteration's condition must be known at import;
// unrolling stops past VKP__ONNX_MAX_UNROLL body nodes. docs/onnx.md,
// "Sequences, optionals and loops".

// ONNX TensorProto data types used here.
enum { VKP__ONNX_INT64 = 7, VKP__ONNX_BOOL = 9 };

// A new symbol "<node>#<tag>" for a host scalar of `type`; *out_sym gets its
// index.
static vkp_status_t vkp__scalar_sym(vkp__onnx_ctx_t *ctx, const char *tag,
                                    int32_t type, int64_t v, int32_t *out_sym) {
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(vkp__onnx_tensor_alloc(&t, type, 0, NULL));
  vkp__onnx_tensor_set_i(&t, 0, v);
  char *name = vkp__asprintf("%s#%s", ctx->node_name, tag);
  if (!name) {
    vkp__onnx_tensor_deinit(&t);
    return VKP_OOM("loop symbol");
  }
  vkp_status_t st = vkp__onnx_bind_const(ctx, name, &t);
  if (!st) *out_sym = vkp__onnx_sym_index(ctx, vkp__onnx_sym_find(ctx, name));
  vkp__free(name);
  return st;
}

// A new symbol "<node>#<tag>" for IR value `value`.
static vkp_status_t vkp__value_sym(vkp__onnx_ctx_t *ctx, const char *tag,
                                   int32_t value, int32_t *out_sym) {
  char *name = vkp__asprintf("%s#%s", ctx->node_name, tag);
  if (!name) return VKP_OOM("loop symbol");
  vkp_status_t st = vkp__onnx_bind_value(ctx, name, value);
  if (!st) *out_sym = vkp__onnx_sym_index(ctx, vkp__onnx_sym_find(ctx, name));
  vkp__free(name);
  return st;
}

// Element `index` of `value` along `axis`, the axis removed.
static vkp_status_t vkp__take(vkp__onnx_ctx_t *ctx, int32_t value, int64_t axis,
                              int64_t index, int32_t *out_value) {
  int64_t s = index, e = index + 1, step = 1;
  vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", &s, 1), vkp__onnx_a_ints("ends", &e, 1),
                     vkp__onnx_a_ints("axes", &axis, 1),
                     vkp__onnx_a_ints("steps", &step, 1)};
  int32_t v;
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_SLICE, 1, &value, 4, a, NULL, &v));
  vkp_attr_t sq = vkp__onnx_a_ints("axes", &axis, 1);
  return vkp__onnx_emit(ctx, VKP_OP_SQUEEZE, 1, &v, 1, &sq, NULL, out_value);
}

// Stacks the tensor symbols syms[0..n) along a new axis `axis` (negative:
// from the end of the result's rank) into ONNX value `out` (NULL: internal).
static vkp_status_t vkp__stack(vkp__onnx_ctx_t *ctx, const int32_t *syms,
                               int32_t n, int64_t axis, const char *out,
                               int32_t *out_value) {
  int32_t *in = vkp__calloc((size_t)n + 1, sizeof *in);
  if (!in) return VKP_OOM("stacked scan output");
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < n && !st; ++i) {
    st = vkp__onnx_sym_value(ctx, &ctx->syms[syms[i]], &in[i]);
    int32_t rank = st ? 0 : vkp__onnx_value(ctx, in[i])->rank + 1;
    if (!st && (axis < -(int64_t)rank || axis >= rank))
      st = VKP__ONNX_INVALID("scan output axis %lld out of range for rank %d",
                             (long long)axis, (int)rank);
    int64_t ax = axis < 0 ? axis + rank : axis;
    vkp_attr_t a = vkp__onnx_a_ints("axes", &ax, 1);
    if (!st) st = vkp__onnx_emit(ctx, VKP_OP_UNSQUEEZE, 1, &in[i], 1, &a, NULL, &in[i]);
    if (!st && i == n - 1) axis = ax;
  }
  if (!st) st = vkp__onnx_concat_values(ctx, n, in, axis, out, out_value);
  vkp__free(in);
  return st;
}

static const Onnx__GraphProto *vkp__body(const vkp__onnx_ctx_t *ctx) {
  const Onnx__AttributeProto *a = vkp__onnx_attr(ctx, "body");
  return a ? a->g : NULL;
}

// Runs one iteration's body (`label`) with inputs bind[0..n_bind); out_syms
// gets the symbol index of each body output (tensors, sequences, optionals).
static vkp_status_t vkp__run_body(vkp__onnx_ctx_t *ctx, const Onnx__GraphProto *body,
                                  const char *label, int32_t n_bind,
                                  const int32_t *bind, int32_t *out_syms) {
  size_t n_out = body->n_output;
  char **names = vkp__calloc(n_out + 1, sizeof *names);
  if (!names) return VKP_OOM("loop body outputs");
  int32_t problems = ctx->problems ? ctx->problems->count : 0;
  vkp_status_t st = vkp__onnx_import_subgraph(ctx, body, label, n_bind, bind, names);
  // A body node that cannot be imported is listed once, not per iteration.
  if (!st && ctx->problems && ctx->problems->count != problems)
    st = VKP__ONNX_UNSUPPORTED("the body could not be imported at %s (its "
                               "problems are listed)",
                               label);
  for (size_t o = 0; o < n_out && !st; ++o) {
    vkp__onnx_sym_t *s = vkp__onnx_sym_find(ctx, names[o]);
    if (!s)
      st = VKP__ONNX_INVALID("body output '%s' is not defined", names[o]);
    else if (s->poisoned)
      st = VKP__ONNX_UNSUPPORTED("body output '%s' comes from a node that could "
                                 "not be imported",
                                 names[o]);
    else
      out_syms[o] = vkp__onnx_sym_index(ctx, s);
  }
  for (size_t o = 0; o < n_out; ++o) vkp__free(names[o]);
  vkp__free(names);
  return st;
}

// The unrolling budget: `iterations` iterations of `body`.
static vkp_status_t vkp__check_unroll(const Onnx__GraphProto *body, int64_t iterations) {
  int64_t per = body->n_node > 0 ? (int64_t)body->n_node : 1;
  if (iterations > VKP__ONNX_MAX_UNROLL / per)
    return VKP__ONNX_UNSUPPORTED("%lld iterations of a %lld-node body exceed the "
                                 "unrolling limit: vkpipe unrolls at most %d "
                                 "body nodes per loop",
                                 (long long)iterations, (long long)per,
                                 (int)VKP__ONNX_MAX_UNROLL);
  return NULL;
}

// Whether a Loop body's condition output is its condition input (directly
// or through Identity): then nothing ends the loop before M.
static bool vkp__cond_passes_through(const Onnx__GraphProto *body) {
  const char *in = body->input[1] ? body->input[1]->name : NULL;
  const char *out = body->output[0] ? body->output[0]->name : NULL;
  if (!in || !out) return false;
  if (strcmp(in, out) == 0) return true;
  for (size_t k = 0; k < body->n_node; ++k) {
    const Onnx__NodeProto *nd = body->node[k];
    if (nd->n_output == 1 && nd->output[0] && strcmp(nd->output[0], out) == 0)
      return nd->op_type && strcmp(nd->op_type, "Identity") == 0 && nd->n_input == 1 &&
             nd->input[0] && strcmp(nd->input[0], in) == 0;
  }
  return false;
}

vkp_status_t vkp__map_loop(vkp__onnx_ctx_t *ctx) {
  const Onnx__GraphProto *body = vkp__body(ctx);
  if (!body) return VKP__ONNX_INVALID("attribute 'body' (a graph) is required");
  size_t n_in = ctx->node->n_input, n_out = ctx->node->n_output;
  if (n_in < 2) return VKP__ONNX_INVALID("Loop has %zu inputs; at least 2 (M, cond)", n_in);
  int32_t n_carried = (int32_t)(n_in - 2);
  if (n_carried > 64 || n_out > 128)
    return VKP__ONNX_UNSUPPORTED("%d loop-carried values and %zu outputs (64 "
                                 "and 128 at most)",
                                 (int)n_carried, n_out);
  if (body->n_input != n_in || body->n_output < 1 + (size_t)n_carried ||
      n_out != body->n_output - 1)
    return VKP__ONNX_INVALID("the body has %zu inputs and %zu outputs for %d "
                             "loop-carried values and %zu node outputs",
                             body->n_input, body->n_output, (int)n_carried, n_out);
  int32_t n_scan = (int32_t)(n_out - (size_t)n_carried);
  vkp__onnx_sym_t *m = vkp__onnx_input(ctx, 0), *c = vkp__onnx_input(ctx, 1);
  if (m && (m->kind != VKP__SYM_TENSOR || !m->is_const))
    return VKP__ONNX_UNSUPPORTED(
        "the trip count M ('%s') is computed at run time; vkpipe unrolls Loop "
        "at import and needs it known there (a constant, a shape folded after "
        "--dim binds the symbolic dims, or a frozen input)",
        m->name);
  if (c && (c->kind != VKP__SYM_TENSOR || !c->is_const))
    return VKP__ONNX_UNSUPPORTED(
        "the loop condition ('%s') is computed at run time; vkpipe unrolls "
        "Loop at import and needs it known there",
        c->name);
  if ((m && vkp__onnx_tensor_numel(&m->constant) != 1) ||
      (c && vkp__onnx_tensor_numel(&c->constant) != 1))
    return VKP__ONNX_INVALID("M and cond must have one element each");
  int64_t trip = m ? vkp__onnx_tensor_get_i(&m->constant, 0) : INT64_MAX;
  bool cond = c ? vkp__onnx_tensor_get_i(&c->constant, 0) != 0 : true;
  int32_t carried[64], bind[66], outs[129];
  for (int32_t i = 0; i < n_carried; ++i) {
    vkp__onnx_sym_t *s = vkp__onnx_input(ctx, 2 + i);
    if (!s) return VKP__ONNX_INVALID("loop-carried input %d is required", (int)i);
    carried[i] = vkp__onnx_sym_index(ctx, s);
  }
  // A count that only M decides is checked before anything is imported.
  if (cond && trip > 0 && vkp__cond_passes_through(body))
    VKP_RETURN_IF_ERROR(vkp__check_unroll(body, trip));
  int32_t *scans = NULL;  // scans[k * cap + i]: scan output k, iteration i
  int64_t cap = 0, done = 0;
  vkp_status_t st = NULL;
  for (; done < trip && cond && !st; ++done) {
    st = vkp__check_unroll(body, done + 1);
    if (st) break;
    if (n_scan && done == cap) {
      int64_t grown = cap ? cap * 2 : 16;
      int32_t *more = vkp__calloc((size_t)(grown * n_scan), sizeof *more);
      if (!more) {
        st = VKP_OOM("scan outputs");
        break;
      }
      for (int32_t k = 0; k < n_scan; ++k)
        for (int64_t i = 0; i < done; ++i) more[k * grown + i] = scans[k * cap + i];
      vkp__free(scans);
      scans = more;
      cap = grown;
    }
    char tag[48], label[32];
    snprintf(tag, sizeof tag, "iter%lld", (long long)done);
    snprintf(label, sizeof label, "iter%lld", (long long)done);
    st = vkp__scalar_sym(ctx, tag, VKP__ONNX_INT64, done, &bind[0]);
    snprintf(tag, sizeof tag, "cond%lld", (long long)done);
    if (!st) st = vkp__scalar_sym(ctx, tag, VKP__ONNX_BOOL, 1, &bind[1]);
    for (int32_t i = 0; i < n_carried; ++i) bind[2 + i] = carried[i];
    if (!st) st = vkp__run_body(ctx, body, label, (int32_t)n_in, bind, outs);
    if (st) break;
    const vkp__onnx_sym_t *co = &ctx->syms[outs[0]];
    if (co->kind != VKP__SYM_TENSOR || !co->is_const) {
      st = VKP__ONNX_UNSUPPORTED("the body's condition output ('%s') depends "
                                 "on run-time data at iteration %lld; vkpipe "
                                 "unrolls Loop at import and needs it known "
                                 "there",
                                 body->output[0]->name, (long long)done);
      break;
    }
    cond = vkp__onnx_tensor_get_i(&co->constant, 0) != 0;
    for (int32_t i = 0; i < n_carried; ++i) carried[i] = outs[1 + i];
    for (int32_t k = 0; k < n_scan && !st; ++k) {
      if (ctx->syms[outs[1 + n_carried + k]].kind != VKP__SYM_TENSOR)
        st = VKP__ONNX_INVALID("scan output %d is not a tensor", (int)k);
      else
        scans[k * cap + done] = outs[1 + n_carried + k];
    }
  }
  for (int32_t i = 0; i < n_carried && !st; ++i) {
    const char *out = vkp__onnx_output(ctx, i);
    if (out) st = vkp__onnx_bind_alias(ctx, out, &ctx->syms[carried[i]]);
  }
  for (int32_t k = 0; k < n_scan && !st; ++k) {
    const char *out = vkp__onnx_output(ctx, n_carried + k);
    int32_t y;
    if (!out) continue;
    if (done == 0)
      st = VKP__ONNX_UNSUPPORTED("the loop runs zero times: scan output '%s' "
                                 "has no element to take its shape from",
                                 out);
    else
      st = vkp__stack(ctx, scans + k * cap, (int32_t)done, 0, out, &y);
  }
  vkp__free(scans);
  return st;
}

// One Scan unrolled: state[0..n_state) and the scan inputs xs[0..n_x) (IR
// values) through `body`; final states into out_state (symbol indices),
// scan output k stacked into ONNX value out_names[k] (NULL: internal) and
// its IR value into out_scan[k]. `tag` prefixes the iteration labels.
typedef struct vkp__scan_spec_t {
  int32_t n_state, n_x, n_scan;
  int64_t in_axes[64], in_dirs[64], out_axes[64], out_dirs[64];
} vkp__scan_spec_t;

static vkp_status_t vkp__scan_unroll(vkp__onnx_ctx_t *ctx, const Onnx__GraphProto *body,
                                     const vkp__scan_spec_t *sp, const char *tag,
                                     const int32_t *state, const int32_t *xs,
                                     int32_t *out_state,
                                     const char *const *out_names, int32_t *out_scan) {
  int64_t len = -1;
  int64_t axes[64];
  for (int32_t j = 0; j < sp->n_x; ++j) {
    const vkp_value_t *v = vkp__onnx_value(ctx, xs[j]);
    int64_t ax = sp->in_axes[j] < 0 ? sp->in_axes[j] + v->rank : sp->in_axes[j];
    if (ax < 0 || ax >= v->rank)
      return VKP__ONNX_INVALID("scan input axis %lld out of range for rank %d",
                               (long long)sp->in_axes[j], (int)v->rank);
    if (v->bounded && v->bounded_axis == ax)
      return VKP__ONNX_UNSUPPORTED("scan input %d has a run-time length; vkpipe "
                                   "unrolls Scan at import",
                                   (int)j);
    if (len >= 0 && v->shape[ax] != len)
      return VKP__ONNX_INVALID("scan inputs have lengths %lld and %lld",
                               (long long)len, (long long)v->shape[ax]);
    len = v->shape[ax];
    axes[j] = ax;
  }
  if (len <= 0)
    return VKP__ONNX_UNSUPPORTED("the scan runs zero times: its outputs have no "
                                 "element to take their shape from");
  VKP_RETURN_IF_ERROR(vkp__check_unroll(body, len));
  int32_t n_bind = sp->n_state + sp->n_x;
  int32_t bind[128], outs[128];
  int32_t *scans = vkp__calloc((size_t)(len * sp->n_scan) + 1, sizeof *scans);
  if (!scans) return VKP_OOM("scan outputs");
  for (int32_t i = 0; i < sp->n_state; ++i) bind[i] = state[i];
  vkp_status_t st = NULL;
  for (int64_t t = 0; t < len && !st; ++t) {
    char label[48], name[64];
    snprintf(label, sizeof label, "%st%lld", tag, (long long)t);
    for (int32_t j = 0; j < sp->n_x && !st; ++j) {
      int32_t v;
      st = vkp__take(ctx, xs[j], axes[j], sp->in_dirs[j] ? len - 1 - t : t, &v);
      snprintf(name, sizeof name, "%sx%d.t%lld", tag, (int)j, (long long)t);
      if (!st) st = vkp__value_sym(ctx, name, v, &bind[sp->n_state + j]);
    }
    if (!st) st = vkp__run_body(ctx, body, label, n_bind, bind, outs);
    for (int32_t i = 0; i < sp->n_state && !st; ++i) bind[i] = outs[i];
    for (int32_t k = 0; k < sp->n_scan && !st; ++k) {
      if (ctx->syms[outs[sp->n_state + k]].kind != VKP__SYM_TENSOR)
        st = VKP__ONNX_INVALID("scan output %d is not a tensor", (int)k);
      // Reversed outputs are stacked last iteration first.
      int64_t at = sp->out_dirs[k] ? len - 1 - t : t;
      if (!st) scans[k * len + at] = outs[sp->n_state + k];
    }
  }
  for (int32_t i = 0; i < sp->n_state && !st; ++i) out_state[i] = bind[i];
  for (int32_t k = 0; k < sp->n_scan && !st; ++k)
    st = vkp__stack(ctx, scans + k * len, (int32_t)len, sp->out_axes[k],
                    out_names ? out_names[k] : NULL, &out_scan[k]);
  vkp__free(scans);
  return st;
}

// A per-input INTS attribute of Scan: `n` entries, or `n` zeros when absent.
static vkp_status_t vkp__scan_ints(vkp__onnx_ctx_t *ctx, const char *name, int32_t n,
                                   int64_t *out) {
  int32_t got;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, name, out, 64, &got));
  if (got < 0) {
    for (int32_t i = 0; i < n; ++i) out[i] = 0;
    return NULL;
  }
  if (got != n)
    return VKP__ONNX_INVALID("attribute '%s' has %d entries; %d expected", name,
                             (int)got, (int)n);
  return NULL;
}

vkp_status_t vkp__map_scan(vkp__onnx_ctx_t *ctx) {
  const Onnx__GraphProto *body = vkp__body(ctx);
  if (!body) return VKP__ONNX_INVALID("attribute 'body' (a graph) is required");
  int64_t n_x;
  if (!vkp__onnx_attr(ctx, "num_scan_inputs"))
    return VKP__ONNX_INVALID("attribute 'num_scan_inputs' is required");
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_int(ctx, "num_scan_inputs", 0, &n_x));
  // Opset 8 puts an optional sequence_lens first and a batch axis 0 on every
  // input and output.
  bool batched = ctx->opset < 9;
  int32_t first = batched ? 1 : 0;
  size_t n_in = ctx->node->n_input, n_out = ctx->node->n_output;
  if (n_x < 1 || (size_t)n_x + (size_t)first > n_in)
    return VKP__ONNX_INVALID("num_scan_inputs %lld for %zu inputs", (long long)n_x, n_in);
  vkp__scan_spec_t sp;
  memset(&sp, 0, sizeof sp);
  sp.n_x = (int32_t)n_x;
  sp.n_state = (int32_t)(n_in - (size_t)first) - sp.n_x;
  sp.n_scan = (int32_t)n_out - sp.n_state;
  if (sp.n_x > 64 || sp.n_state > 64 || sp.n_scan < 0 || sp.n_scan > 64)
    return VKP__ONNX_UNSUPPORTED("%d state values, %d scan inputs and %zu "
                                 "outputs (64 each at most)",
                                 (int)sp.n_state, (int)sp.n_x, n_out);
  if (body->n_input != (size_t)(sp.n_state + sp.n_x) ||
      body->n_output != (size_t)(sp.n_state + sp.n_scan))
    return VKP__ONNX_INVALID("the body has %zu inputs and %zu outputs; the node "
                             "gives %d and takes %zu",
                             body->n_input, body->n_output, (int)(sp.n_state + sp.n_x),
                             n_out);
  if (batched) {
    if (vkp__onnx_input(ctx, 0))
      return VKP__ONNX_UNSUPPORTED("sequence_lens (input 0) is given: per-batch "
                                   "lengths are not supported, only full-length "
                                   "scans");
    VKP_RETURN_IF_ERROR(vkp__scan_ints(ctx, "directions", sp.n_x, sp.in_dirs));
    if (vkp__onnx_attr(ctx, "scan_input_axes") || vkp__onnx_attr(ctx, "scan_output_axes"))
      return VKP__ONNX_INVALID("opset 8 Scan has no axes attributes");
  } else {
    if (vkp__onnx_attr(ctx, "directions"))
      return VKP__ONNX_INVALID("from opset 9 Scan takes scan_input_directions");
    VKP_RETURN_IF_ERROR(vkp__scan_ints(ctx, "scan_input_axes", sp.n_x, sp.in_axes));
    VKP_RETURN_IF_ERROR(vkp__scan_ints(ctx, "scan_input_directions", sp.n_x, sp.in_dirs));
    VKP_RETURN_IF_ERROR(vkp__scan_ints(ctx, "scan_output_axes", sp.n_scan, sp.out_axes));
    VKP_RETURN_IF_ERROR(
        vkp__scan_ints(ctx, "scan_output_directions", sp.n_scan, sp.out_dirs));
  }
  int32_t state[64], xs[64], out_state[64], out_scan[64];
  const char *names[64];
  for (int32_t i = 0; i < sp.n_state + sp.n_x; ++i) {
    vkp__onnx_sym_t *s = vkp__onnx_input(ctx, first + i);
    if (!s) return VKP__ONNX_INVALID("input %d is required", (int)(first + i));
    if (s->kind != VKP__SYM_TENSOR)
      return VKP__ONNX_INVALID("input %d ('%s') is %s; Scan takes tensors",
                               (int)(first + i), s->name, vkp__onnx_sym_kind_name(s->kind));
    if (i < sp.n_state) state[i] = vkp__onnx_sym_index(ctx, s);
    else VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, s, &xs[i - sp.n_state]));
  }
  for (int32_t k = 0; k < sp.n_scan; ++k) names[k] = vkp__onnx_output(ctx, sp.n_state + k);
  if (!batched) {
    VKP_RETURN_IF_ERROR(vkp__scan_unroll(ctx, body, &sp, "", state, xs, out_state,
                                         names, out_scan));
    for (int32_t i = 0; i < sp.n_state; ++i) {
      const char *out = vkp__onnx_output(ctx, i);
      if (out) VKP_RETURN_IF_ERROR(vkp__onnx_bind_alias(ctx, out, &ctx->syms[out_state[i]]));
    }
    return NULL;
  }
  // Opset 8: each batch entry scanned on its own (scan axis 0 once the batch
  // axis is taken), the results stacked back along axis 0.
  int64_t batch = -1;
  for (int32_t i = 0; i < sp.n_state + sp.n_x; ++i) {
    int32_t v;
    vkp__onnx_sym_t *s = vkp__onnx_input(ctx, first + i);
    VKP_RETURN_IF_ERROR(vkp__onnx_sym_value(ctx, s, &v));
    const vkp_value_t *vv = vkp__onnx_value(ctx, v);
    if (vv->rank < 1 || (batch >= 0 && vv->shape[0] != batch))
      return VKP__ONNX_INVALID("opset 8 Scan inputs need the same batch axis 0");
    batch = vv->shape[0];
  }
  VKP_RETURN_IF_ERROR(vkp__check_unroll(body, batch));
  int32_t *per = vkp__calloc((size_t)(batch * (sp.n_state + sp.n_scan)) + 1, sizeof *per);
  if (!per) return VKP_OOM("batched Scan");
  vkp_status_t st = NULL;
  for (int64_t b = 0; b < batch && !st; ++b) {
    int32_t bstate[64], bxs[64];
    char tag[48];
    for (int32_t i = 0; i < sp.n_state + sp.n_x && !st; ++i) {
      int32_t v;
      st = vkp__onnx_sym_value(ctx, vkp__onnx_input(ctx, first + i), &v);
      if (!st) st = vkp__take(ctx, v, 0, b, i < sp.n_state ? &v : &bxs[i - sp.n_state]);
      snprintf(tag, sizeof tag, "b%lld.s%d", (long long)b, (int)i);
      if (!st && i < sp.n_state) st = vkp__value_sym(ctx, tag, v, &bstate[i]);
    }
    snprintf(tag, sizeof tag, "b%lld.", (long long)b);
    if (!st)
      st = vkp__scan_unroll(ctx, body, &sp, tag, bstate, bxs, out_state, NULL, out_scan);
    for (int32_t i = 0; i < sp.n_state && !st; ++i)
      per[i * batch + b] = out_state[i];
    for (int32_t k = 0; k < sp.n_scan && !st; ++k) {
      snprintf(tag, sizeof tag, "b%lld.y%d", (long long)b, (int)k);
      st = vkp__value_sym(ctx, tag, out_scan[k], &per[(sp.n_state + k) * batch + b]);
    }
  }
  for (int32_t i = 0; i < sp.n_state + sp.n_scan && !st; ++i) {
    const char *out = vkp__onnx_output(ctx, i);
    int32_t y;
    if (out) st = vkp__stack(ctx, per + i * batch, (int32_t)batch, 0, out, &y);
  }
  vkp__free(per);
  return st;
}
