// SPDX-License-Identifier: Apache-2.0
// C code generation for CPU subgraphs: emission from the plan (codegen/c/plan.h).
#include "codegen/c/emit.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "vkpipe/target.h"
#include "codegen/c/emit_internal.h"
#include "codegen/c/plan.h"
#include "codegen/expr.h"
#include "graph/bounded.h"
#include "graph/branch.h"

// The prelude, embedded by CMake from codegen/c/prelude.c.
static const unsigned char vkp__prelude_bytes[] = {
#include "vkpipe_cpu_prelude.inc"
    0};

const char *vkp_codegen_c_prelude(void) {
  return (const char *)vkp__prelude_bytes;
}

const vkp_value_t *vkp__c_in(const vkp__c_kernel_t *k, int32_t i) {
  if (i >= k->node->n_inputs || k->node->inputs[i] < 0) return NULL;
  return &k->graph->values[k->node->inputs[i]];
}

const vkp_value_t *vkp__c_out(const vkp__c_kernel_t *k) {
  return &k->graph->values[k->node->outputs[0]];
}

const vkp_value_t *vkp__c_out_at(const vkp__c_kernel_t *k, int32_t i) {
  return &k->graph->values[k->node->outputs[i]];
}

// The C type a dtype is stored in (float16 and bfloat16 as their bits).
const char *vkp__c_type(vkp_dtype_t dt) {
  switch (dt) {
    case VKP_DTYPE_FLOAT32: return "float";
    case VKP_DTYPE_FLOAT64: return "double";
    case VKP_DTYPE_FLOAT16: case VKP_DTYPE_BFLOAT16: return "uint16_t";
    case VKP_DTYPE_INT64: return "int64_t";
    case VKP_DTYPE_INT32: return "int32_t";
    case VKP_DTYPE_INT16: return "int16_t";
    case VKP_DTYPE_INT8: return "int8_t";
    case VKP_DTYPE_UINT64: return "uint64_t";
    case VKP_DTYPE_UINT32: return "uint32_t";
    case VKP_DTYPE_UINT16: return "uint16_t";
    case VKP_DTYPE_UINT8: case VKP_DTYPE_BOOL: return "uint8_t";
    case VKP_DTYPE_COUNT: break;
  }
  return "uint8_t";
}

// A C identifier from a graph name: [A-Za-z0-9_] kept, the rest '_',
// prefixed; made unique against `taken` (n entries) with a numeric suffix.
static char *vkp__ident(const char *prefix, const char *name, char **taken,
                        int32_t n, int32_t index) {
  size_t len = strlen(name);
  if (len > 48) len = 48;
  char buf[128];
  size_t p = (size_t)snprintf(buf, sizeof buf, "%s", prefix);
  for (size_t i = 0; i < len && p + 1 < sizeof buf; ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_';
    buf[p++] = ok ? c : '_';
  }
  buf[p] = '\0';
  for (int32_t i = 0; i < n; ++i) {
    if (taken[i] && strcmp(taken[i], buf) == 0) {
      return vkp__asprintf("%s_%d", buf, (int)index);
    }
  }
  return vkp__strdup(buf);
}

// ---------------------------------------------------------------------------
// Emission helpers

// Strides of `leaf` viewed over an output of shape `shape` (rank r): NumPy
// right-aligned broadcasting, or aligned at dim 1 (`channel`, batch_norm's
// per-channel parameters and conv bias). Broadcast dims get stride 0.
static void vkp__leaf_strides(const vkp_value_t *leaf, int32_t r,
                              const int64_t *shape, bool channel,
                              int64_t *strides) {
  int64_t own[VKP_MAX_RANK];
  int64_t s = 1;
  for (int32_t d = leaf->rank - 1; d >= 0; --d) {
    own[d] = leaf->shape[d] == 1 ? 0 : s;
    s *= leaf->shape[d];
  }
  for (int32_t d = 0; d < r; ++d) strides[d] = 0;
  if (channel) {
    if (leaf->rank >= 1 && r >= 2) strides[1] = own[0];
    return;
  }
  for (int32_t d = 0; d < leaf->rank; ++d) {
    int32_t od = r - leaf->rank + d;
    if (od >= 0 && shape[od] != 1) strides[od] = own[d];
  }
}

// Writes the offset of a leaf for flat index `var` over dims [d0, d1) of
// `shape`: "var * s" when the strides are compact over that range (or all
// zero), else a sum of (var / P % dim) * stride terms. Writes "0" when the
// leaf does not vary over the range.
static void vkp__emit_part(vkp__sb_t *sb, const char *var, const int64_t *shape,
                           int32_t d0, int32_t d1, const int64_t *strides) {
  int64_t inner = -1;
  bool compact = true, any = false;
  int64_t span = 1;
  for (int32_t d = d1 - 1; d >= d0; --d) {
    if (shape[d] == 1) continue;
    if (strides[d]) any = true;
    if (inner < 0) inner = strides[d];
    if (strides[d] != inner * span) compact = false;
    span *= shape[d];
  }
  if (!any) {
    vkp__sb_append(sb, "0");
    return;
  }
  if (compact) {
    if (inner == 1) vkp__sb_printf(sb, "%s", var);
    else vkp__sb_printf(sb, "%s * %lld", var, (long long)inner);
    return;
  }
  bool first = true;
  int64_t after = 1;
  for (int32_t d = d1 - 1; d >= d0; --d) {
    if (shape[d] != 1 && strides[d]) {
      vkp__sb_printf(sb, "%s(%s / %lld %% %lld) * %lld", first ? "" : " + ", var,
                     (long long)after, (long long)shape[d],
                     (long long)strides[d]);
      first = false;
    }
    after *= shape[d];
  }
}

static bool vkp__part_is_compact(const int64_t *shape, int32_t d0, int32_t d1,
                                 const int64_t *strides) {
  int64_t inner = -1, span = 1;
  for (int32_t d = d1 - 1; d >= d0; --d) {
    if (shape[d] == 1) continue;
    if (inner < 0) inner = strides[d];
    if (strides[d] != inner * span) return false;
    span *= shape[d];
  }
  return true;
}

static void vkp__emit_float(vkp__sb_t *sb, double f) {
  char lit[64];
  vkp_codegen_c_literal(f, lit, sizeof lit);
  vkp__sb_append(sb, lit);
}

// One operand a fused group reads from memory, with its broadcast view.
typedef struct vkp__leaf_t {
  int32_t value;
  bool channel;
  int64_t strides[VKP_MAX_RANK];
} vkp__leaf_t;

typedef struct vkp__group_t {
  int32_t root, anchor;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__leaf_t leaves[64];
  int32_t n_leaves;
  int32_t params[64];  // distinct values the node function takes
  int32_t n_params;
} vkp__group_t;

static void vkp__add_param(vkp__group_t *gr, int32_t v) {
  for (int32_t i = 0; i < gr->n_params; ++i)
    if (gr->params[i] == v) return;
  if (gr->n_params < 64) gr->params[gr->n_params++] = v;
}

static int32_t vkp__leaf(vkp__cg_t *cg, vkp__group_t *gr, int32_t v,
                         bool channel) {
  for (int32_t i = 0; i < gr->n_leaves; ++i)
    if (gr->leaves[i].value == v && gr->leaves[i].channel == channel) return i;
  if (gr->n_leaves >= 64) return -1;
  vkp__leaf_t *l = &gr->leaves[gr->n_leaves];
  l->value = v;
  l->channel = channel;
  vkp__leaf_strides(&cg->g->values[v], gr->rank, gr->shape, channel, l->strides);
  vkp__add_param(gr, v);
  return gr->n_leaves++;
}

// A group's functions are named after its anchor (conv, gemm, matmul) when
// it has one, else after its root.
static const char *vkp__gname(const vkp__cg_t *cg, const vkp__group_t *gr) {
  return cg->nname[gr->anchor >= 0 ? gr->anchor : gr->root];
}

static bool vkp__is_member(const vkp__cg_t *cg, const vkp__group_t *gr,
                           int32_t node) {
  return node >= 0 && cg->group_of[node] == gr->root && node != gr->anchor;
}

// Collects the leaves of a group's elementwise members (and the anchor's
// epilogue operands: conv bias, gemm C).
static vkp_status_t vkp__collect_leaves(vkp__cg_t *cg, vkp__group_t *gr) {
  const vkp_graph_t *g = cg->g;
  if (gr->anchor >= 0) {
    const vkp_node_t *a = &g->nodes[gr->anchor];
    if (a->op == VKP_OP_CONV2D && vkp__val(cg, a, 2))
      if (vkp__leaf(cg, gr, a->inputs[2], true) < 0) goto too_many;
    if (a->op == VKP_OP_GEMM && vkp__val(cg, a, 2))
      if (vkp__leaf(cg, gr, a->inputs[2], false) < 0) goto too_many;
  }
  for (int32_t i = 0; i <= gr->root; ++i) {
    if (!vkp__is_member(cg, gr, i)) continue;
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t k = 0; k < n->n_inputs; ++k) {
      int32_t v = n->inputs[k];
      if (v < 0) continue;
      int32_t p = g->values[v].producer;
      if (p >= 0 && cg->group_of[p] == gr->root) continue;
      bool channel = n->op == VKP_OP_BATCH_NORM && k > 0;
      if (vkp__leaf(cg, gr, v, channel) < 0) goto too_many;
    }
  }
  return NULL;
too_many:
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "node '%s': fused group reads more than 64 tensors",
                         g->nodes[gr->root].name);
}

// The C expression of operand `k` of member `n`.
static void vkp__operand(vkp__cg_t *cg, const vkp__group_t *gr,
                         const vkp_node_t *n, int32_t k, char **access,
                         vkp__sb_t *sb) {
  int32_t v = n->inputs[k];
  int32_t p = cg->g->values[v].producer;
  if (p >= 0 && p == gr->anchor) {
    vkp__sb_append(sb, "acc");
    return;
  }
  if (vkp__is_member(cg, gr, p)) {
    vkp__sb_printf(sb, "t_%s", cg->nname[p]);
    return;
  }
  bool channel = n->op == VKP_OP_BATCH_NORM && k > 0;
  for (int32_t i = 0; i < gr->n_leaves; ++i)
    if (gr->leaves[i].value == v && gr->leaves[i].channel == channel) {
      vkp__sb_printf(sb, "%s", access[i]);
      return;
    }
}

// The C expression of a cast: floats to integers truncate with NaN -> 0 and
// saturation to the int64 range, then wrap to the width (the reference
// semantics); anything to bool is "!= 0".
static void vkp__cast_expr(const vkp_value_t *from, const vkp_value_t *to,
                           const char *x, vkp__sb_t *sb) {
  const char *T = vkp__c_type(to->dtype);
  // float16 / bfloat16 are bits: read through a float, write from one
  // (via double, the reference's path).
  char src[1024];
  if (from->dtype == VKP_DTYPE_FLOAT16)
    snprintf(src, sizeof src, "vkp_half_to_float(%s)", x);
  else if (from->dtype == VKP_DTYPE_BFLOAT16)
    snprintf(src, sizeof src, "vkp_bfloat_to_float(%s)", x);
  else
    snprintf(src, sizeof src, "%s", x);
  if (to->dtype == VKP_DTYPE_FLOAT16)
    vkp__sb_printf(sb, "vkp_float_to_half((float)(double)(%s))", src);
  else if (to->dtype == VKP_DTYPE_BFLOAT16)
    vkp__sb_printf(sb, "vkp_float_to_bfloat((float)(double)(%s))", src);
  else if (to->dtype == VKP_DTYPE_BOOL)
    vkp__sb_printf(sb, "(%s)(%s != 0)", T, src);
  else if (vkp_dtype_is_float(from->dtype) && !vkp_dtype_is_float(to->dtype))
    vkp__sb_printf(sb, "(%s)(uint64_t)vkp_f2i64((double)%s)", T, src);
  else
    vkp__sb_printf(sb, "(%s)%s", T, src);
}

// Emits `const T t_<node> = <expr>;` for every member, in order, at
// indentation `ind`. Leaf i is read as access[i]. The expressions come from
// the generator's op table (codegen/c/ops.c).
static void vkp__emit_members(vkp__cg_t *cg, const vkp__group_t *gr,
                              char **access, const char *ind, vkp__sb_t *sb) {
  const vkp_graph_t *g = cg->g;
  for (int32_t i = 0; i <= gr->root; ++i) {
    if (!vkp__is_member(cg, gr, i)) continue;
    const vkp_node_t *n = &g->nodes[i];
    const vkp_value_t *o = vkp__outv(cg, n);
    const char *T = vkp__c_type(o->dtype);
    vkp__sb_printf(sb, "%sconst %s t_%s = ", ind, T, cg->nname[i]);
    enum { MAX_OPERANDS = VKP__C_MAX_INPUTS };  // supports() refuses more
    vkp__sb_t operand[MAX_OPERANDS] = {{0}};
    const char *args[MAX_OPERANDS] = {NULL};
    int32_t n_args = n->n_inputs < MAX_OPERANDS ? n->n_inputs : MAX_OPERANDS;
    for (int32_t k = 0; k < n_args; ++k) {
      if (n->inputs[k] < 0) continue;
      vkp__operand(cg, gr, n, k, access, &operand[k]);
      args[k] = operand[k].data ? operand[k].data : "0";
      if (operand[k].failed) sb->failed = true;
    }
    const vkp_value_t *e = n->op == VKP_OP_POW && n_args > 1 ? vkp__val(cg, n, 1) : NULL;
    if (n->op == VKP_OP_CAST) {
      vkp__cast_expr(vkp__val(cg, n, 0), o, args[0], sb);
    } else if (e && e->kind == VKP_VALUE_CONSTANT && e->dtype == VKP_DTYPE_FLOAT32 &&
               vkp__numel(e) == 1 && o->dtype == VKP_DTYPE_FLOAT32 &&
               ((const float *)e->data)[0] == 2.0f) {
      // x ** 2 (a variance's square in an exported LayerNorm) as a product,
      // exactly powf's value: powf cost 4 ns an element, most of such a
      // kernel.
      vkp__sb_printf(sb, "(%s) * (%s)", args[0], args[0]);
    } else {
      char text[4096];
      const char *tmpl = vkp_codegen_c_expr(n->op, o->dtype);
      if (!tmpl || !vkp_codegen_expr_render(tmpl, n, args, n_args, T,
                                            vkp_codegen_c_literal, text,
                                            sizeof text))
        sb->failed = true;  // a table bug or an absurd expression: fail loudly
      else
        vkp__sb_append(sb, text);
    }
    vkp__sb_printf(sb, ";  // %s '%s'\n", vkp_op_name(n->op), n->name);
    for (int32_t k = 0; k < n_args; ++k) vkp__free(operand[k].data);
  }
}

// The value the group's loop stores: the root's temp, or the anchor's
// accumulator when the group is an anchor alone.
static void vkp__emit_result(vkp__cg_t *cg, const vkp__group_t *gr,
                             vkp__sb_t *sb) {
  if (gr->root == gr->anchor) vkp__sb_append(sb, "acc");
  else vkp__sb_printf(sb, "t_%s", cg->nname[gr->root]);
}

static void vkp__free_access(char **access, int32_t n) {
  for (int32_t i = 0; i < n; ++i) vkp__free(access[i]);
}

// A loop split across the stage's pool: writes into `pre` the task function
// node_<fn>_part, which unpacks `n_ptrs` pointers (decl[i]: "const float *",
// "float *restrict "; named name[i]) and runs `loop` over [lo, hi), and
// into `body` the call that splits [0, n) in chunks of at least
// VKP_GRAIN(work) iterations.
static void vkp__emit_split_ptrs(vkp__sb_t *pre, vkp__sb_t *body, const char *fn,
                                 int32_t n_ptrs, char *const *decl, const char *const *name,
                                 long long n, long long work, const char *loop) {
  vkp__sb_printf(pre,
                 "static void node_%s_part(void *vkp_ctx, ptrdiff_t lo, ptrdiff_t hi, "
                 "int worker) {\n"
                 "  void *const *vkp_args = vkp_ctx;\n  (void)worker;\n",
                 fn);
  for (int32_t i = 0; i < n_ptrs; ++i) {
    if (!decl[i]) pre->failed = true;
    vkp__sb_printf(pre, "  %s%s = vkp_args[%d];\n  (void)%s;\n", decl[i] ? decl[i] : "",
                   name[i], (int)i, name[i]);
  }
  vkp__sb_append(pre, loop);
  vkp__sb_append(pre, "}\n\n");
  vkp__sb_append(body, "  void *vkp_args[] = {");
  for (int32_t i = 0; i < n_ptrs; ++i)
    vkp__sb_printf(body, "%s(void *)%s", i ? ", " : "", name[i]);
  vkp__sb_printf(body,
                 "};\n  vkp_parallel_range(%lld, VKP_GRAIN(%lld), node_%s_part, vkp_args);\n",
                 n, work, fn);
}

// vkp__emit_split_ptrs with the pointers of a group's node function: its
// parameters, then the root's outputs.
static void vkp__emit_group_split(vkp__cg_t *cg, const vkp__group_t *gr, vkp__sb_t *pre,
                                  vkp__sb_t *body, long long n, long long work,
                                  const vkp__sb_t *loop) {
  const vkp_graph_t *g = cg->g;
  const vkp_node_t *rn = &g->nodes[gr->root];
  char *decl[64 + VKP__C_MAX_OUTPUTS] = {0};
  const char *name[64 + VKP__C_MAX_OUTPUTS] = {0};
  int32_t np = 0;
  for (int32_t i = 0; i < gr->n_params; ++i, ++np) {
    decl[np] = vkp__asprintf("const %s *", vkp__c_type(g->values[gr->params[i]].dtype));
    name[np] = cg->vname[gr->params[i]];
  }
  for (int32_t j = 0; j < rn->n_outputs && j < VKP__C_MAX_OUTPUTS; ++j, ++np) {
    decl[np] = vkp__asprintf("%s *restrict ", vkp__c_type(g->values[rn->outputs[j]].dtype));
    name[np] = cg->vname[rn->outputs[j]];
  }
  if (loop->failed || !loop->data) pre->failed = true;
  vkp__emit_split_ptrs(pre, body, vkp__gname(cg, gr), np, decl, name, n, work,
                       loop->data ? loop->data : "");
  for (int32_t i = 0; i < np; ++i) vkp__free(decl[i]);
}

void vkp__c_emit_split(vkp__c_kernel_t *k, bool with_scratch, long long n, long long work,
                       const char *loop) {
  const vkp_graph_t *g = k->graph;
  const vkp_node_t *nd = k->node;
  enum { MAX = VKP__C_MAX_INPUTS + VKP__C_MAX_OUTPUTS + 1 };
  char *decl[MAX] = {0};
  const char *name[MAX] = {0};
  int32_t np = 0;
  // The node function's parameters: its distinct inputs, in order.
  for (int32_t i = 0; i < nd->n_inputs && i < VKP__C_MAX_INPUTS; ++i) {
    int32_t v = nd->inputs[i];
    bool seen = v < 0;
    for (int32_t e = 0; e < i && !seen; ++e) seen = nd->inputs[e] == v;
    if (seen) continue;
    decl[np] = vkp__asprintf("const %s *", vkp__c_type(g->values[v].dtype));
    name[np++] = k->in[i];
  }
  for (int32_t j = 0; j < nd->n_outputs && j < VKP__C_MAX_OUTPUTS; ++j) {
    decl[np] = vkp__asprintf("%s *restrict ", vkp__c_type(g->values[nd->outputs[j]].dtype));
    name[np++] = k->outs[j];
  }
  if (with_scratch) {
    decl[np] = vkp__strdup("float *");
    name[np++] = "scratch";
  }
  vkp__emit_split_ptrs(k->pre, k->body, k->fn, np, decl, name, n, work, loop);
  for (int32_t i = 0; i < np; ++i) vkp__free(decl[i]);
}

// Steps per element of a group's members (each about one).
static long long vkp__group_work(const vkp__cg_t *cg, const vkp__group_t *gr) {
  long long members = 0;
  for (int32_t i = 0; i <= gr->root; ++i) members += vkp__is_member(cg, gr, i);
  return members > 0 ? members : 1;
}

// Elements of a flat elementwise loop per task unit: whole cache lines, and
// the same vector/scalar split of the loop in every chunk.
#define VKP__EW_UNIT 64

// A standalone elementwise group: one flat loop when every leaf is compact,
// else an outer loop over all but the last dim and an inner one over it.
// Either is split across the pool (units of VKP__EW_UNIT elements, or outer
// rows); the task function goes into `pre`.
static void vkp__emit_elementwise(vkp__cg_t *cg, const vkp__group_t *gr, vkp__sb_t *pre,
                                  vkp__sb_t *body) {
  vkp__sb_t loop = {0};
  vkp__sb_t *sb = &loop;
  const vkp_value_t *o = vkp__outv(cg, &cg->g->nodes[gr->root]);
  int32_t r = gr->rank;
  int64_t numel = vkp__numel(o);
  bool flat = true;
  for (int32_t i = 0; i < gr->n_leaves; ++i)
    if (!vkp__part_is_compact(gr->shape, 0, r, gr->leaves[i].strides)) flat = false;
  char *access[64] = {0};
  if (flat) {
    for (int32_t i = 0; i < gr->n_leaves; ++i) {
      vkp__sb_t part = {0};
      vkp__emit_part(&part, "i", gr->shape, 0, r, gr->leaves[i].strides);
      access[i] = vkp__asprintf("%s[%s]", cg->vname[gr->leaves[i].value],
                                part.data ? part.data : "0");
      if (part.failed) sb->failed = true;
      vkp__free(part.data);
      if (!access[i]) sb->failed = true;
    }
    vkp__sb_printf(sb,
                   "  const ptrdiff_t i_end = hi * %d < %lld ? hi * %d : %lld;\n"
                   "  for (ptrdiff_t i = lo * %d; i < i_end; ++i) {\n",
                   VKP__EW_UNIT, (long long)numel, VKP__EW_UNIT, (long long)numel,
                   VKP__EW_UNIT);
    vkp__emit_members(cg, gr, access, "    ", sb);
    vkp__sb_printf(sb, "    %s[i] = ", cg->vname[o - cg->g->values]);
    vkp__emit_result(cg, gr, sb);
    vkp__sb_append(sb, ";\n  }\n");
    vkp__emit_group_split(cg, gr, pre, body, (numel + VKP__EW_UNIT - 1) / VKP__EW_UNIT,
                          VKP__EW_UNIT * vkp__group_work(cg, gr), &loop);
  } else {
    int64_t last = gr->shape[r - 1], outer = last ? numel / last : 0;
    vkp__sb_append(sb, "  for (ptrdiff_t o = lo; o < hi; ++o) {\n");
    for (int32_t i = 0; i < gr->n_leaves; ++i) {
      const vkp__leaf_t *l = &gr->leaves[i];
      vkp__sb_printf(sb, "    const ptrdiff_t base%d = ", (int)i);
      vkp__emit_part(sb, "o", gr->shape, 0, r - 1, l->strides);
      vkp__sb_append(sb, ";\n");
      vkp__sb_t part = {0};
      vkp__emit_part(&part, "j", gr->shape, r - 1, r, l->strides);
      access[i] = vkp__asprintf("%s[base%d + %s]", cg->vname[l->value], (int)i,
                                part.data ? part.data : "0");
      if (part.failed) sb->failed = true;
      vkp__free(part.data);
      if (!access[i]) sb->failed = true;
    }
    vkp__sb_printf(sb, "    for (ptrdiff_t j = 0; j < %lld; ++j) {\n",
                   (long long)last);
    vkp__emit_members(cg, gr, access, "      ", sb);
    vkp__sb_printf(sb, "      %s[o * %lld + j] = ", cg->vname[o - cg->g->values],
                   (long long)last);
    vkp__emit_result(cg, gr, sb);
    vkp__sb_append(sb, ";\n    }\n  }\n");
    vkp__emit_group_split(cg, gr, pre, body, (long long)outer,
                          (long long)last * vkp__group_work(cg, gr), &loop);
  }
  vkp__sb_deinit(&loop);
  vkp__free_access(access, gr->n_leaves);
}

// A standalone elementwise group whose result is bounded (its extent
// cg->ename of the root's output): nested loops over the output's run-time
// shape, each leaf read at its run-time strides (its own extent where it is
// bounded, 0 where it broadcasts). One thread: bounded values are the small
// tails of detection and selection graphs.
static void vkp__emit_elementwise_bounded(vkp__cg_t *cg, const vkp__group_t *gr,
                                          vkp__sb_t *sb) {
  const vkp_graph_t *g = cg->g;
  int32_t ov = g->nodes[gr->root].outputs[0];
  const vkp_value_t *o = &g->values[ov];
  int32_t r = gr->rank;
  char *access[64] = {0};
  for (int32_t i = 0; i < gr->n_leaves; ++i) {
    const vkp__leaf_t *l = &gr->leaves[i];
    const vkp_value_t *v = &g->values[l->value];
    vkp__sb_t at = {0};
    for (int32_t d = 0; d < v->rank; ++d) {
      int32_t od = r - v->rank + d;
      // Broadcast (a static 1 against a wider output dim): stride 0.
      if (od < 0 || l->strides[od] == 0) continue;
      vkp__sb_printf(&at, "%si%d * %s", at.len ? " + " : "", (int)od,
                     vkp__c_dims(v, cg->ename[l->value], d + 1, v->rank).s);
    }
    access[i] = vkp__asprintf("%s[%s]", cg->vname[l->value], at.len ? at.data : "0");
    if (at.failed || !access[i]) sb->failed = true;
    vkp__sb_deinit(&at);
  }
  vkp__sb_append(sb, "  ptrdiff_t vkp_at = 0;\n");
  for (int32_t d = 0; d < r; ++d)
    vkp__sb_printf(sb, "%*sfor (ptrdiff_t i%d = 0; i%d < %s; ++i%d)%s\n", 2 + 2 * (int)d, "",
                   (int)d, (int)d, vkp__c_dims(o, cg->ename[ov], d, d + 1).s, (int)d,
                   d == r - 1 ? " {" : "");
  if (r == 0) vkp__sb_append(sb, "  {\n");
  char ind[2 * VKP_MAX_RANK + 8];
  snprintf(ind, sizeof ind, "%*s", 2 + 2 * (int)(r ? r : 1), "");
  vkp__emit_members(cg, gr, access, ind, sb);
  vkp__sb_printf(sb, "%s%s[vkp_at++] = ", ind, cg->vname[ov]);
  vkp__emit_result(cg, gr, sb);
  vkp__sb_printf(sb, ";\n%*s}\n", (int)(r ? 2 * r : 2), "");
  vkp__free_access(access, gr->n_leaves);
}

// Dims of an anchor's output that the epilogue's batch, row and column
// indices run over: [0, rb), [rb, cb), [cb, rank).
static void vkp__anchor_dims(const vkp__cg_t *cg, const vkp_node_t *a,
                             int32_t *rb, int32_t *cb) {
  int32_t r = vkp__outv(cg, a)->rank;
  if (a->op == VKP_OP_CONV2D) {
    *rb = 1;
    *cb = 2;
  } else {
    *rb = r - 2;
    *cb = r - 1;
  }
}

// One step of a clamp chain on x, as the op's C template computes it.
static float vkp__clamp_step(const vkp_node_t *n, float x) {
  if (n->op == VKP_OP_RELU) return x > 0 ? x : 0;
  float lo = (float)vkp_node_attr_float(n, "min", -INFINITY);
  float hi = (float)vkp_node_attr_float(n, "max", INFINITY);
  float y = x < lo ? lo : x;  // vkp_clipf
  return y > hi ? hi : y;
}

// Whether a convolution group's epilogue is its bias (if any) followed by a
// chain of float ReLUs and Clips with constant bounds: then it is one clamp
// (prelude: vkp_row_ep_t), which the GEMM applies in registers. A chain of
// clamps is a clamp to [f(-inf), f(+inf)]; NaN either passes (Clips only)
// or becomes f(NaN), which must then equal f(-inf).
typedef struct vkp__row_ep_t {
  int32_t bias_leaf;  // -1: none
  float lo, hi;
  bool nan_to_lo;
} vkp__row_ep_t;

static bool vkp__row_clamp_ep(const vkp__cg_t *cg, const vkp__group_t *gr,
                              vkp__row_ep_t *out) {
  const vkp_graph_t *g = cg->g;
  if (gr->anchor < 0) return false;
  const vkp_node_t *a = &g->nodes[gr->anchor];
  if (a->op != VKP_OP_CONV2D || vkp__outv(cg, a)->dtype != VKP_DTYPE_FLOAT32) return false;
  out->bias_leaf = -1;
  for (int32_t i = 0; i < gr->n_leaves; ++i) {
    if (a->n_inputs > 2 && gr->leaves[i].value == a->inputs[2] && gr->leaves[i].channel &&
        out->bias_leaf < 0)
      out->bias_leaf = i;
    else
      return false;  // any other operand: the general epilogue
  }
  float lo = -INFINITY, hi = INFINITY, nan = NAN;
  int32_t prev = a->outputs[0];
  for (int32_t i = 0; i <= gr->root; ++i) {
    if (!vkp__is_member(cg, gr, i)) continue;
    const vkp_node_t *n = &g->nodes[i];
    if (n->op != VKP_OP_RELU && n->op != VKP_OP_CLIP) return false;
    if (n->inputs[0] != prev || vkp__outv(cg, n)->dtype != VKP_DTYPE_FLOAT32) return false;
    for (int32_t k = 1; k < n->n_inputs; ++k)
      if (n->inputs[k] >= 0) return false;  // run-time bounds
    lo = vkp__clamp_step(n, lo);
    hi = vkp__clamp_step(n, hi);
    nan = vkp__clamp_step(n, nan);
    prev = n->outputs[0];
  }
  if (!(lo <= hi)) return false;
  if (!isnan(nan) && nan != lo) return false;
  out->lo = lo;
  out->hi = hi;
  out->nan_to_lo = !isnan(nan);
  return true;
}

// The epilogue function of an anchor group and its argument struct.
static void vkp__emit_epilogue(vkp__cg_t *cg, const vkp__group_t *gr,
                               vkp__sb_t *sb) {
  const vkp_graph_t *g = cg->g;
  const vkp_node_t *a = &g->nodes[gr->anchor];
  const char *name = vkp__gname(cg, gr);
  vkp__row_ep_t rep;
  if (vkp__row_clamp_ep(cg, gr, &rep)) {
    vkp__sb_printf(sb,
                   "// The epilogue is a bias and clamp, applied in the GEMM's registers.\n"
                   "static const vkp_epilogue_fn ep_%s = vkp_ep_rows;\n\n",
                   name);
    return;
  }
  int32_t rb, cb, r = gr->rank;
  vkp__anchor_dims(cg, a, &rb, &cb);
  vkp__sb_printf(sb, "typedef struct ep_%s_args_t {\n", name);
  for (int32_t i = 0; i < gr->n_leaves; ++i) {
    const vkp_value_t *v = &g->values[gr->leaves[i].value];
    vkp__sb_printf(sb, "  const %s *%s%s;\n", vkp__c_type(v->dtype),
                   cg->vname[gr->leaves[i].value],
                   gr->leaves[i].channel ? "_c" : "");
  }
  if (gr->n_leaves == 0) vkp__sb_append(sb, "  int unused;\n");
  vkp__sb_printf(sb, "} ep_%s_args_t;\n\n", name);
  vkp__sb_printf(sb,
                 "static void ep_%s(float *c, ptrdiff_t ldc, ptrdiff_t row0, "
                 "ptrdiff_t col0,\n    ptrdiff_t rows, ptrdiff_t cols, "
                 "ptrdiff_t batch, const void *args) {\n",
                 name);
  vkp__sb_printf(sb, "  const ep_%s_args_t *ctx = args;\n  (void)ctx;\n  (void)batch;\n", name);
  vkp__sb_append(sb, "  for (ptrdiff_t r = 0; r < rows; ++r) {\n");
  vkp__sb_append(sb, "    const ptrdiff_t row = row0 + r;\n    (void)row;\n");
  vkp__sb_append(sb, "    float *restrict cr = c + r * ldc;\n");
  char *access[64] = {0};
  for (int32_t i = 0; i < gr->n_leaves; ++i) {
    const vkp__leaf_t *l = &gr->leaves[i];
    const vkp_value_t *v = &g->values[l->value];
    vkp__sb_printf(sb, "    const %s *l%d = ctx->%s%s + ", vkp__c_type(v->dtype),
                   (int)i, cg->vname[l->value], l->channel ? "_c" : "");
    vkp__emit_part(sb, "batch", gr->shape, 0, rb, l->strides);
    vkp__sb_append(sb, " + ");
    vkp__emit_part(sb, "row", gr->shape, rb, cb, l->strides);
    vkp__sb_append(sb, ";\n");
    vkp__sb_t part = {0};
    vkp__emit_part(&part, "col", gr->shape, cb, r, l->strides);
    access[i] = vkp__asprintf("l%d[%s]", (int)i, part.data ? part.data : "0");
    if (part.failed) sb->failed = true;
    vkp__free(part.data);
    if (!access[i]) sb->failed = true;
  }
  vkp__sb_append(sb, "    for (ptrdiff_t j = 0; j < cols; ++j) {\n");
  vkp__sb_append(sb, "      const ptrdiff_t col = col0 + j;\n      (void)col;\n");
  vkp__sb_append(sb, "      float acc = cr[j];\n");
  // The anchor's own terms: conv bias, gemm beta * C.
  for (int32_t i = 0; i < gr->n_leaves; ++i) {
    const vkp__leaf_t *l = &gr->leaves[i];
    if (a->op == VKP_OP_CONV2D && a->n_inputs > 2 && l->value == a->inputs[2] &&
        l->channel) {
      vkp__sb_printf(sb, "      acc += %s;  // bias of '%s'\n", access[i], a->name);
    } else if (a->op == VKP_OP_GEMM && a->n_inputs > 2 &&
               l->value == a->inputs[2] && !l->channel) {
      vkp__sb_append(sb, "      acc += ");
      vkp__emit_float(sb, vkp_node_float(a, "beta"));
      vkp__sb_printf(sb, " * %s;  // beta * C of '%s'\n", access[i], a->name);
    }
  }
  vkp__emit_members(cg, gr, access, "      ", sb);
  vkp__sb_append(sb, "      cr[j] = ");
  vkp__emit_result(cg, gr, sb);
  vkp__sb_append(sb, ";\n    }\n  }\n}\n\n");
  vkp__free_access(access, gr->n_leaves);
}

// Emits the argument struct initialiser for the epilogue, or nothing.
static void vkp__emit_ep_args(vkp__cg_t *cg, const vkp__group_t *gr,
                              bool has_ep, vkp__sb_t *sb) {
  if (!has_ep) return;
  const char *name = vkp__gname(cg, gr);
  vkp__row_ep_t rep;
  if (vkp__row_clamp_ep(cg, gr, &rep)) {
    vkp__sb_printf(sb, "  const vkp_row_ep_t ep_args = {%s, ",
                   rep.bias_leaf >= 0 ? cg->vname[gr->leaves[rep.bias_leaf].value] : "NULL");
    vkp__emit_float(sb, rep.lo);
    vkp__sb_append(sb, ", ");
    vkp__emit_float(sb, rep.hi);
    vkp__sb_printf(sb, ", %d};\n", rep.nan_to_lo ? 1 : 0);
    return;
  }
  vkp__sb_printf(sb, "  const ep_%s_args_t ep_args = {", name);
  for (int32_t i = 0; i < gr->n_leaves; ++i)
    vkp__sb_printf(sb, "%s%s", i ? ", " : "", cg->vname[gr->leaves[i].value]);
  if (gr->n_leaves == 0) vkp__sb_append(sb, "0");
  vkp__sb_append(sb, "};\n");
}

// Adds a scratch requirement (in floats; a C expression over the prelude's
// size macros, which the generated source evaluates) to `var` in
// vkp_scratch_floats: "loop" for the direct loops, which use scratch from
// its start, "wino" for Winograd, whose buffers follow the GEMM scratch.
// (A statement per term: a macro chain of maxima would expand each earlier
// term twice per level.)
static void vkp__emit_scratch_term(vkp__cg_t *cg, const char *var, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void vkp__emit_scratch_term(vkp__cg_t *cg, const char *var, const char *fmt, ...) {
  char term[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(term, sizeof term, fmt, ap);
  va_end(ap);
  vkp__sb_printf(&cg->scratch_terms, "  %s = VKP_MAXZ(%s, (size_t)%s);\n", var, var, term);
}

// A 1x1 window at stride 1 without padding (weights `w`): the convolution
// is a plain GEMM over the input planes.
static bool vkp__conv_pointwise(const vkp_value_t *w, const int64_t *st, const int64_t *pads) {
  return w->shape[2] == 1 && w->shape[3] == 1 && st[0] == 1 && st[1] == 1 && pads[0] == 0 &&
         pads[1] == 0 && pads[2] == 0 && pads[3] == 0;
}

// Whether a conv of these shapes (constant weights) runs as vkp_conv_direct:
// a shallow input (a CNN's first layer), its depth within one KC slab.
static bool vkp__conv_direct_shape(const vkp_value_t *x, const vkp_value_t *w,
                                   const int64_t *st, const int64_t *pads, long long G) {
  long long C = x->shape[1], KH = w->shape[2], KW = w->shape[3];
  return G == 1 && C <= 8 && C * KH * KW <= 256 && !vkp__conv_pointwise(w, st, pads) &&
         (st[1] == 1 || st[1] == 2);
}

// Winograd pays off for 3x3, stride-1, undilated, ungrouped convolutions
// with constant weights once both channel counts are large enough for its
// GEMMs to dominate the input and output transforms, and the map has enough
// tiles to reuse the transformed weights. Returns the output tile (0: not
// Winograd): F(4x4, 3x3) on maps of 48x48 or more with 64+ channels both
// ways (with warm caches 1.15-1.3x F(2x2) on ResNet-18's 56x56 and 28x28
// layers; with cold ones, and in the whole model, no faster: the 28x28
// layers stay on F(2x2), docs/benchmarks.md); F(2x2, 3x3) for the rest.
static int vkp__winograd_tile(const vkp_node_t *a, const vkp_value_t *x,
                              const vkp_value_t *w, const vkp_value_t *y,
                              const int64_t *st, const int64_t *dil, long long G) {
  (void)a;
  if (!(G == 1 && w->shape[2] == 3 && w->shape[3] == 3 && st[0] == 1 && st[1] == 1 &&
        dil[0] == 1 && dil[1] == 1 && x->shape[1] >= 16 && w->shape[0] >= 16))
    return 0;
  // Few tiles and large weights: the transformed weights (16/9 of the
  // direct form's) are streamed from memory for a handful of GEMM columns,
  // and the im2col GEMM, which reads the direct form's, is faster.
  long long tiles = ((y->shape[2] + 1) / 2) * ((y->shape[3] + 1) / 2);
  if (tiles < 32 && x->shape[1] * w->shape[0] * 36 > (1 << 20)) return 0;
  if (x->shape[1] >= 64 && w->shape[0] >= 64 && y->shape[2] >= 48 && y->shape[3] >= 48)
    return 4;
  return 2;
}

static double vkp__min2(double a, double b) { return a < b ? a : b; }

// Whether elementwise `n` joins the epilogue of a conv/gemm/matmul, as
// vkp__plan_groups decides: an input of the same shape and bounds, used
// only here and not a graph output, comes from such an anchor or from a
// node that joins one itself (up to `depth` links back).
static bool vkp__joins_epilogue(const vkp_graph_t *g, const vkp_node_t *n, int depth) {
  if (depth == 0 || !vkp__is_elementwise(n->op) || n->n_outputs != 1) return false;
  const vkp__cg_t cg = {.g = g};  // what vkp__is_anchor reads
  const vkp_value_t *out = &g->values[n->outputs[0]];
  if (out->dtype != VKP_DTYPE_FLOAT32) return false;
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    int32_t v = n->inputs[i];
    if (v < 0) continue;
    const vkp_value_t *val = &g->values[v];
    if (val->producer < 0 || val->is_output || !vkp__same_shape(val, out) ||
        !vkp__same_bounds(val, out))
      continue;
    int32_t uses = 0;
    for (int32_t k = 0; k < g->n_nodes && uses < 2; ++k)
      for (int32_t q = 0; q < g->nodes[k].n_inputs; ++q) uses += g->nodes[k].inputs[q] == v;
    if (uses != 1) continue;
    const vkp_node_t *pn = &g->nodes[val->producer];
    if ((vkp__is_anchor(&cg, pn) && val->dtype == VKP_DTYPE_FLOAT32) ||
        vkp__joins_epilogue(g, pn, depth - 1))
      return true;
  }
  return false;
}

// Whether concat `n` copies nothing, as vkp__plan_buffers decides: along
// an axis with only size-1 dims before it, every input is made by a node of
// its own (not a concat), read only here and not a graph output, and so is
// written straight into its run of the output.
static bool vkp__concat_in_place(const vkp_graph_t *g, const vkp_node_t *n) {
  if (n->op != VKP_OP_CONCAT || vkp_node_is_bounded(g, n)) return false;
  const vkp_value_t *y = &g->values[n->outputs[0]];
  if (!y->shape_known) return false;
  int64_t axis = vkp_node_int(n, "axis"), outer = 1;
  for (int64_t d = 0; d < axis && d < y->rank; ++d) outer *= y->shape[d];
  if (outer != 1) return false;
  for (int32_t k = 0; k < n->n_inputs; ++k) {
    int32_t v = n->inputs[k];
    if (v < 0) return false;
    const vkp_value_t *val = &g->values[v];
    if (val->producer < 0 || val->is_output || g->nodes[val->producer].n_outputs != 1 ||
        g->nodes[val->producer].op == VKP_OP_CONCAT)
      return false;
    int32_t uses = 0;
    for (int32_t i = 0; i < g->n_nodes && uses < 2; ++i)
      for (int32_t q = 0; q < g->nodes[i].n_inputs; ++q) uses += g->nodes[i].inputs[q] == v;
    if (uses != 1) return false;
  }
  return true;
}

const char *vkp_codegen_c_kernel_class(const vkp_graph_t *graph,
                                       const vkp_node_t *node, double *out_columns) {
  *out_columns = 0.0;
  // Computed in the registers of the kernel it joins, or written in place by
  // its inputs' kernels: no pass of its own.
  if (vkp__joins_epilogue(graph, node, 8) || vkp__concat_in_place(graph, node))
    return VKP_KERNEL_CLASS_FUSED;
  const vkp_value_t *y = &graph->values[node->outputs[0]];
  if (node->op == VKP_OP_ATTENTION) return "attention";
  if (node->op == VKP_OP_MATMUL || node->op == VKP_OP_GEMM) {
    // The smaller of the output matrix's rows and columns; a single row (a
    // matrix-vector product, bound by its weights' bytes) gets no width term.
    // Against a 2-D B every leading dimension of A is rows of one product
    // (a [32, 1, 128] activation is 32 rows, not 32 products of one row).
    const vkp_value_t *b = node->n_inputs > 1 && node->inputs[1] >= 0
                               ? &graph->values[node->inputs[1]]
                               : NULL;
    double rows = 0.0;
    if (y->shape_known && y->rank >= 2) {
      rows = (double)y->shape[y->rank - 2];
      if (b && b->shape_known && b->rank == 2)
        for (int32_t d = 0; d + 2 < y->rank; ++d) rows *= (double)y->shape[d];
    }
    if (rows > 1) *out_columns = vkp__min2(rows, (double)y->shape[y->rank - 1]);
    return "gemm";
  }
  if (node->op != VKP_OP_CONV2D || node->n_inputs < 2 || node->inputs[1] < 0)
    return NULL;
  const vkp_value_t *x = &graph->values[node->inputs[0]];
  const vkp_value_t *w = &graph->values[node->inputs[1]];
  if (!x->shape_known || !w->shape_known || !y->shape_known || x->rank != 4 ||
      w->rank != 4 || y->rank != 4)
    return NULL;
  const int64_t *pads, *st, *dil;
  if (vkp_node_attr_ints(node, "pads", &pads) < 4 ||
      vkp_node_attr_ints(node, "strides", &st) < 2 ||
      vkp_node_attr_ints(node, "dilations", &dil) < 2)
    return NULL;
  long long G = vkp_node_int(node, "group");
  // Depthwise kernels run along output rows a vector at a time: the width
  // term, over the output width, prices the part-empty vectors of small
  // maps; the stride-2 paths (phase planes, shuffled taps) are a class of
  // their own.
  if (G == x->shape[1] && G == w->shape[0] && G > 1) {
    *out_columns = (double)y->shape[3];
    return st[0] == 1 && st[1] == 1 ? "conv_depthwise" : "conv_depthwise_s2";
  }
  // As vkp__emit_conv: Winograd and the direct kernel need constant
  // weights. No width term: measured per layer, these run as fast on a 7x7
  // map as on a 56x56 one (docs/benchmarks.md, "Estimates with a memory
  // term"); what slows them is how many bytes of activations they move per
  // FLOP, which the classes with a memory factor price.
  bool constant = w->kind == VKP_VALUE_CONSTANT;
  int tile = constant ? vkp__winograd_tile(node, x, w, y, st, dil, G) : 0;
  if (tile) return tile == 4 ? "conv_winograd4" : "conv_winograd";
  if (vkp__conv_pointwise(w, st, pads)) return "conv_pointwise";
  if (constant && vkp__conv_direct_shape(x, w, st, pads, G)) return "conv_direct";
  return "conv_gemm";
}

// Emits the Winograd call for conv `a` with output tiles `tile` x `tile`
// (2: vkp_conv_winograd, 4: vkp_conv_winograd4; weights packed as prepack
// region `id`, whose _AT is already defined). The prelude sizes its blocks
// and scratch (VKP_WINO_SCRATCH_FLOATS, VKP_WINO4_SCRATCH_FLOATS).
static void vkp__emit_winograd(vkp__cg_t *cg, const vkp_node_t *a, int32_t id, int tile,
                               const char *ep, vkp__sb_t *sb) {
  const vkp_value_t *x = vkp__val(cg, a, 0), *w = vkp__val(cg, a, 1);
  const vkp_value_t *y = vkp__outv(cg, a);
  const int64_t *pads;
  vkp_node_attr_ints(a, "pads", &pads);
  long long C = x->shape[1], H = x->shape[2], W = x->shape[3], M = w->shape[0];
  long long OH = y->shape[2], OW = y->shape[3];
  const char *sfx = tile == 4 ? "4" : "";
  vkp__sb_printf(&cg->out,
                 "#define VKP_PACKED_%d_END (VKP_PACKED_%d_AT + (size_t)%d * "
                 "VKP_PAD_MR(%lld) * %lld)\n",
                 (int)id, (int)id, (tile + 2) * (tile + 2), M, C);
  vkp__emit_scratch_term(cg, "wino",
                         "VKP_STAGE_THREADS * VKP_WINO%s_SCRATCH_FLOATS(%lld, %lld, %lld, %lld)",
                         sfx, C, M, OH, OW);
  vkp__sb_printf(&cg->prepack,
                 "  // weights of '%s', Winograd-transformed (F(%dx%d, 3x3))\n"
                 "  vkp_winograd%s_prepack(%lld, %lld, (const float *)constants[%d],\n"
                 "                       packed + VKP_PACKED_%d_AT);\n",
                 a->name, tile, tile, sfx, M, C, (int)cg->io_index[a->inputs[1]], (int)id);
  // The weights were transformed at load: the raw pointer goes unused.
  vkp__sb_printf(sb, "    (void)%s;\n", cg->vname[a->inputs[1]]);
  vkp__sb_printf(sb,
                 "    vkp_conv_winograd%s(xn, yn, packed + VKP_PACKED_%d_AT, %lld, %lld, "
                 "%lld, %lld,\n"
                 "                      %lld, %lld, %lld, %lld, %s, n,\n"
                 "                      scratch + (size_t)VKP_STAGE_THREADS * "
                 "VKP_GEMM_SCRATCH_FLOATS,\n"
                 "                      scratch, VKP_STAGE_THREADS);\n  }\n",
                 sfx, (int)id, C, H, W, M, (long long)pads[0], (long long)pads[1], OH, OW,
                 ep);
}

// Whether conv `a` (constant weights) runs as vkp_conv_direct.
static bool vkp__conv_direct_ok(const vkp__cg_t *cg, const vkp_node_t *a) {
  const int64_t *pads, *st;
  vkp_node_attr_ints(a, "pads", &pads);
  vkp_node_attr_ints(a, "strides", &st);
  return cg->storage[a->inputs[1]] == VKP__ST_CONSTANT &&
         vkp__conv_direct_shape(vkp__val(cg, a, 0), vkp__val(cg, a, 1), st, pads,
                                vkp_node_int(a, "group"));
}

// Workspace bytes of values a and b overlap (else false, and false for
// anything not in the workspace but inputs, outputs and constants).
static bool vkp__ws_overlap(const vkp__cg_t *cg, int32_t a, int32_t b) {
  const vkp__storage_t sa = cg->storage[a], sb = cg->storage[b];
  if (sa == VKP__ST_ALIAS || sb == VKP__ST_ALIAS || sa == VKP__ST_NONE || sb == VKP__ST_NONE)
    return true;
  if (sa != VKP__ST_WORKSPACE || sb != VKP__ST_WORKSPACE) return a == b;
  const vkp_value_t *va = &cg->g->values[a], *vb = &cg->g->values[b];
  int64_t ea = cg->offset[a] + vkp__numel(va) * (int64_t)vkp_dtype_size(va->dtype);
  int64_t eb = cg->offset[b] + vkp__numel(vb) * (int64_t)vkp_dtype_size(vb->dtype);
  return cg->offset[a] < eb && cg->offset[b] < ea;
}

// The max pooling that alone reads the result of the direct convolution
// group `gr` and runs right after it (the next group), which the
// convolution's kernel can compute too (vkp_conv_direct_pool): its node, or
// -1. Its output is written when the convolution runs, so it must not
// share bytes with anything the group reads.
static int32_t vkp__pool_after_conv(const vkp__cg_t *cg, const vkp__group_t *gr) {
  const vkp_graph_t *g = cg->g;
  int32_t cv = g->nodes[gr->root].outputs[0];
  const vkp_value_t *val = &g->values[cv];
  if (cg->uses[cv] != 1 || val->is_output || cg->storage[cv] != VKP__ST_WORKSPACE ||
      cg->excl_select[gr->root] >= 0)
    return -1;
  int32_t pool = -1;
  for (int32_t i = gr->root + 1; i < g->n_nodes && pool < 0; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (n->n_inputs > 0 && n->inputs[0] == cv) pool = i;
    else if (cg->group_of[i] == i) return -1;  // another group runs in between
  }
  if (pool < 0) return -1;
  const vkp_node_t *pn = &g->nodes[pool];
  if (pn->op != VKP_OP_MAX_POOL2D || cg->group_of[pool] != pool || cg->anchor_of[pool] >= 0 ||
      !vkp__window_2d(cg, pn) || cg->excl_select[pool] >= 0 || pn->n_inputs != 1)
    return -1;
  int32_t pv = pn->outputs[0];
  if (cg->storage[pv] != VKP__ST_WORKSPACE && cg->storage[pv] != VKP__ST_OUTPUT) return -1;
  for (int32_t i = 0; i < gr->n_params; ++i)
    if (vkp__ws_overlap(cg, gr->params[i], pv)) return -1;
  return pool;
}

// Whether a pointwise convolution's input planes (`plane` floats each, Cg
// per group, Mg output channels per group) are read in place by the GEMM
// (no packing): unless their stride is a multiple of 1 KiB and the panels
// are deep, where a panel's rows would crowd a few L1 sets, or many output
// channels read every panel (packed once into aligned rows, it serves them
// all).
static int vkp__pointwise_direct(long long plane, long long Cg, long long Mg) {
  return (plane % 256 != 0 || Cg <= 64) && Mg < 256;
}

// Whether a pointwise convolution (constant weights, `G` groups, `M` output
// channels, `P` pixels per plane) runs with its channels across the vector
// lanes (vkp_conv_pointwise_t): a map of 16 to 64 pixels that is not whole
// 32-pixel tiles (7x7), channels in whole vectors.
static bool vkp__pointwise_t_shape(long long G, long long M, long long P) {
  return G == 1 && M >= 32 && M % 16 == 0 && P >= 16 && P <= 64 && P % 32 != 0;
}

// The pointwise convolution of node `a` (id: its packed weights' region)
// as vkp_conv_pointwise_t where the prelude has it (VKP_PW_T_OK: AVX-512),
// else as the plain GEMM; the weights are packed for the one compiled.
static void vkp__emit_pointwise_t(vkp__cg_t *cg, const vkp_node_t *a, int32_t id,
                                  const char *ep, vkp__sb_t *sb) {
  const vkp_value_t *x = vkp__val(cg, a, 0), *w = vkp__val(cg, a, 1);
  long long C = x->shape[1], P = x->shape[2] * x->shape[3], M = w->shape[0], K = C;
  vkp__sb_printf(&cg->out,
                 "#define VKP_PACKED_%d_END (VKP_PACKED_%d_AT + (size_t)(VKP_PW_T_OK ? %lld * "
                 "((%lld + VKP_NR - 1) / VKP_NR * VKP_NR) : VKP_PAD_MR(%lld) * %lld))\n",
                 (int)id, (int)id, K, M, M, K);
  int wi = (int)cg->io_index[a->inputs[1]];
  vkp__sb_printf(&cg->prepack,
                 "  if (VKP_PW_T_OK) {  // weights of '%s', transposed\n"
                 "    const vkp_bsrc_t src = {.b = (const float *)constants[%d], .rsb = 1, "
                 ".csb = %lld};\n"
                 "    vkp_prepack_b(%lld, %lld, &src, packed + VKP_PACKED_%d_AT);\n"
                 "  } else {\n"
                 "    vkp_prepack_a(%lld, %lld, (const float *)constants[%d], %lld, 1, 1.0f,\n"
                 "                  packed + VKP_PACKED_%d_AT);\n  }\n",
                 a->name, wi, K, K, M, (int)id, M, K, wi, K, (int)id);
  vkp__emit_scratch_term(cg, "loop",
                         "VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS + VKP_PW_T_FLOATS(%lld, %lld)",
                         M, P);
  vkp__sb_printf(sb,
                 "    if (VKP_PW_T_OK) {\n"
                 "      vkp_conv_pointwise_t(xn, packed + VKP_PACKED_%d_AT, yn, %lld, %lld, %lld, "
                 "%s, 0, n,\n"
                 "          scratch + VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS, scratch,\n"
                 "          VKP_STAGE_THREADS);\n"
                 "    } else {\n"
                 "      const vkp_bsrc_t src = {.b = xn, .rsb = %lld, .csb = 1, .direct = %d};\n"
                 "      vkp_gemm(%lld, %lld, %lld, 1.0f, %s, %lld, 1, packed + VKP_PACKED_%d_AT, "
                 "&src,\n               yn, %lld, %s, 0, n, scratch, VKP_STAGE_THREADS);\n"
                 "    }\n  }\n",
                 (int)id, M, K, P, ep, P, vkp__pointwise_direct(P, K, M), M, P, K,
                 cg->vname[a->inputs[1]], K, (int)id, P, ep);
}

// `pool`: the max pooling computed with it (vkp__pool_after_conv), or -1.
static void vkp__emit_conv(vkp__cg_t *cg, const vkp__group_t *gr, bool has_ep, int32_t pool,
                           vkp__sb_t *sb) {
  const vkp_node_t *a = &cg->g->nodes[gr->anchor];
  const vkp_value_t *x = vkp__val(cg, a, 0), *w = vkp__val(cg, a, 1);
  const vkp_value_t *y = vkp__outv(cg, a);
  const int64_t *pads, *st, *dil;
  vkp_node_attr_ints(a, "pads", &pads);
  vkp_node_attr_ints(a, "strides", &st);
  vkp_node_attr_ints(a, "dilations", &dil);
  long long N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  long long M = w->shape[0], KH = w->shape[2], KW = w->shape[3];
  long long OH = y->shape[2], OW = y->shape[3];
  long long G = vkp_node_int(a, "group"), Cg = C / G, Mg = M / G;
  long long K = Cg * KH * KW;
  const char *xn = cg->vname[a->inputs[0]], *wn = cg->vname[a->inputs[1]];
  const char *yn = cg->vname[gr->root == gr->anchor ? a->outputs[0]
                                                    : cg->g->nodes[gr->root].outputs[0]];
  char ep[160];
  if (has_ep) snprintf(ep, sizeof ep, "ep_%s, &ep_args", vkp__gname(cg, gr));
  else snprintf(ep, sizeof ep, "NULL, NULL");
  vkp__emit_ep_args(cg, gr, has_ep, sb);
  vkp__sb_printf(sb, "  for (ptrdiff_t n = 0; n < %lld; ++n) {\n", N);
  vkp__sb_printf(sb, "    const float *xn = %s + n * %lld;\n", xn, C * H * W);
  vkp__sb_printf(sb, "    float *yn = %s + n * %lld;\n", yn, M * OH * OW);
  if (G == C && G == M && G > 1) {
    vkp__emit_scratch_term(cg, "loop",
                           "VKP_STAGE_THREADS * "
                           "VKP_DW_SCRATCH_FLOATS(%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld)",
                           KH, KW, (long long)st[0], (long long)st[1], (long long)dil[0],
                           (long long)dil[1], OH, OW);
    vkp__sb_printf(sb,
                   "    vkp_conv_depthwise(xn, %s, yn, %lld, %lld, %lld, %lld, "
                   "%lld, %lld, %lld,\n        %lld, %lld, %lld, %lld, %lld, "
                   "%lld, %s, n, scratch);\n  }\n",
                   wn, C, H, W, KH, KW, (long long)st[0], (long long)st[1],
                   (long long)pads[0], (long long)pads[1], (long long)dil[0],
                   (long long)dil[1], OH, OW, ep);
    return;
  }
  // Constant weights are packed once at load (vkp_stage_prepack) into the
  // workspace's last region; VKP_PACKED_<id>_AT is where this node's are.
  char packed_expr[160] = "NULL";
  bool constant_w = cg->storage[a->inputs[1]] == VKP__ST_CONSTANT;
  int32_t id = constant_w ? cg->n_prepack++ : -1;
  if (constant_w) {
    if (id) vkp__sb_printf(&cg->out, "#define VKP_PACKED_%d_AT VKP_PACKED_%d_END\n", (int)id,
                           (int)id - 1);
    else vkp__sb_append(&cg->out, "#define VKP_PACKED_0_AT ((size_t)0)\n");
  }
  int tile = constant_w ? vkp__winograd_tile(a, x, w, y, st, dil, G) : 0;
  if (tile) {
    vkp__emit_winograd(cg, a, id, tile, ep, sb);
    return;
  }
  bool pointwise = vkp__conv_pointwise(w, st, pads);
  if (constant_w && pointwise && vkp__pointwise_t_shape(G, M, OH * OW)) {
    vkp__emit_pointwise_t(cg, a, id, ep, sb);
    return;
  }
  if (constant_w) {
    vkp__sb_printf(&cg->out,
                   "#define VKP_PACKED_%d_END (VKP_PACKED_%d_AT + (size_t)%lld * "
                   "VKP_PAD_MR(%lld) * %lld)\n",
                   (int)id, (int)id, G, Mg, K);
    snprintf(packed_expr, sizeof packed_expr,
             "packed + VKP_PACKED_%d_AT + g * VKP_PAD_MR(%lld) * %lld", (int)id, Mg, K);
    vkp__sb_printf(&cg->prepack,
                   "  for (ptrdiff_t g = 0; g < %lld; ++g)  // weights of '%s'\n"
                   "    vkp_prepack_a(%lld, %lld, (const float *)constants[%d] + g * %lld, "
                   "%lld, 1, 1.0f,\n                  packed + VKP_PACKED_%d_AT + g * "
                   "VKP_PAD_MR(%lld) * %lld);\n",
                   G, a->name, Mg, K, (int)cg->io_index[a->inputs[1]], Mg * K, K,
                   (int)id, Mg, K);
  }
  // A shallow input (a CNN's first layer): the register tile reads the
  // input rows itself (vkp_conv_direct), no im2col panels; with the max
  // pooling after it, both at once (vkp_conv_direct_pool).
  if (constant_w && vkp__conv_direct_ok(cg, a)) {
    char shape[320];  // the convolution's arguments, as both kernels take them
    snprintf(shape, sizeof shape,
             "%lld, %lld, %lld, %lld, %lld, %lld,\n        %lld, %lld, %lld, %lld, %lld, %lld, "
             "%lld, %lld, %s, 0, n",
             C, H, W, M, KH, KW, (long long)st[0], (long long)st[1], (long long)pads[0],
             (long long)pads[1], (long long)dil[0], (long long)dil[1], OH, OW, ep);
    vkp__sb_printf(sb, "    (void)%s;\n", wn);
    if (pool < 0) {
      vkp__emit_scratch_term(cg, "loop",
                             "VKP_CONV_DIRECT_FLOATS(%lld, %lld, %lld, %lld, %lld, %lld, %lld, "
                             "%lld, %lld)",
                             C, KH, KW, (long long)st[0], (long long)st[1], (long long)dil[0],
                             (long long)dil[1], OH, OW);
      vkp__sb_printf(sb,
                     "    vkp_conv_direct(xn, packed + VKP_PACKED_%d_AT, yn, %s, scratch,\n"
                     "        VKP_STAGE_THREADS);\n  }\n",
                     (int)id, shape);
      return;
    }
    const vkp_node_t *pn = &cg->g->nodes[pool];
    const vkp_value_t *pv = vkp__outv(cg, pn);
    const int64_t *pk, *pp, *ps, *pd;
    vkp_node_attr_ints(pn, "kernel_shape", &pk);
    vkp_node_attr_ints(pn, "pads", &pp);
    vkp_node_attr_ints(pn, "strides", &ps);
    vkp_node_attr_ints(pn, "dilations", &pd);
    long long POH = pv->shape[2], POW = pv->shape[3];
    vkp__emit_scratch_term(cg, "loop",
                           "VKP_CONV_POOL_FLOATS(%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, "
                           "%lld, %lld, %lld, %lld, %lld, %lld)",
                           C, KH, KW, (long long)st[0], (long long)st[1], (long long)dil[0],
                           (long long)dil[1], OH, OW, (long long)pk[1], (long long)ps[1],
                           (long long)pp[1], (long long)pd[1], POW);
    vkp__sb_printf(sb,
                   "    vkp_conv_direct_pool(xn, packed + VKP_PACKED_%d_AT, yn, %s + n * %lld, %s,\n"
                   "        %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, scratch,\n"
                   "        VKP_STAGE_THREADS);\n  }\n",
                   (int)id, cg->vname[pn->outputs[0]], M * POH * POW, shape, (long long)pk[0],
                   (long long)pk[1], (long long)ps[0], (long long)ps[1], (long long)pp[0],
                   (long long)pp[1], (long long)pd[0], (long long)pd[1], POH, POW);
    return;
  }
  vkp__sb_printf(sb, "    for (ptrdiff_t g = 0; g < %lld; ++g) {\n", G);
  if (pointwise) {
    vkp__sb_printf(sb,
                   "      const vkp_bsrc_t src = {.b = xn + g * %lld, .rsb = "
                   "%lld, .csb = 1, .direct = %d};\n",
                   Cg * H * W, H * W, vkp__pointwise_direct(H * W, Cg, Mg));
  } else {
    vkp__sb_printf(sb,
                   "      const vkp_bsrc_t src = {.b = xn + g * %lld, .conv = 1, "
                   ".C = %lld, .H = %lld, .W = %lld,\n          .KH = %lld, .KW = "
                   "%lld, .SH = %lld, .SW = %lld, .PT = %lld, .PL = %lld,\n"
                   "          .DH = %lld, .DW = %lld, .OH = %lld, .OW = %lld};\n",
                   Cg * H * W, Cg, H, W, KH, KW, (long long)st[0],
                   (long long)st[1], (long long)pads[0], (long long)pads[1],
                   (long long)dil[0], (long long)dil[1], OH, OW);
  }
  vkp__sb_printf(sb,
                 "      vkp_gemm(%lld, %lld, %lld, 1.0f, %s + g * %lld, %lld, 1,\n"
                 "               %s,\n"
                 "               &src, yn + g * %lld, %lld, %s, g * %lld, n, "
                 "scratch, VKP_STAGE_THREADS);\n    }\n  }\n",
                 Mg, OH * OW, K, wn, Mg * K, K, packed_expr, Mg * OH * OW, OH * OW, ep,
                 Mg);
}

// Per-dim strides of operand `v` over the batch dims [0, nb) of `out`
// (right-aligned broadcasting over v's own batch dims, `tail` trailing dims
// excluded from v).
static void vkp__batch_strides(const vkp_value_t *v, int32_t tail,
                               const int64_t *out_shape, int32_t nb,
                               int64_t *strides) {
  int32_t vb = v->rank - tail;
  int64_t s = 1;
  for (int32_t d = vb; d < v->rank; ++d) s *= v->shape[d];
  for (int32_t d = 0; d < nb; ++d) strides[d] = 0;
  for (int32_t d = vb - 1; d >= 0; --d) {
    int32_t od = nb - vb + d;
    if (od >= 0 && v->shape[d] != 1 && out_shape[od] != 1) strides[od] = s;
    s *= v->shape[d];
  }
}

int32_t vkp__c_emit_prepack(vkp__c_kernel_t *k, int32_t input, long long floats,
                            const char *code) {
  vkp__cg_t *cg = k->cg;
  int32_t v = input < k->node->n_inputs ? k->node->inputs[input] : -1;
  if (v < 0 || cg->storage[v] != VKP__ST_CONSTANT) return -1;
  int32_t id = cg->n_prepack++;
  if (id) vkp__sb_printf(k->pre, "#define VKP_PACKED_%d_AT VKP_PACKED_%d_END\n", (int)id,
                         (int)id - 1);
  else vkp__sb_append(k->pre, "#define VKP_PACKED_0_AT ((size_t)0)\n");
  vkp__sb_printf(k->pre, "#define VKP_PACKED_%d_END (VKP_PACKED_%d_AT + (size_t)%lld)\n",
                 (int)id, (int)id, floats);
  vkp__sb_printf(&cg->prepack,
                 "  {  // input %d of '%s'\n"
                 "    const void *src = constants[%d];\n"
                 "    float *dst = packed + VKP_PACKED_%d_AT;\n"
                 "    %s\n  }\n",
                 (int)input, k->node->name, (int)cg->io_index[v], (int)id, code);
  return id;
}

// A constant B of matmul/gemm node `a` (K x N, strides rsb/csb) is packed
// once at load (vkp_stage_prepack, vkp_prepack_b) when the product has the
// rows to use the packed path (M >= VKP_MR / 2, vkp_gemm): `fields` gets
// the vkp_bsrc_t initializers that point the GEMM at the panels, else "".
static void vkp__emit_prepack_b(vkp__cg_t *cg, const vkp_node_t *a, long long K,
                                long long N, long long rsb, long long csb, long long M,
                                char *fields, size_t size) {
  fields[0] = 0;
  if (cg->storage[a->inputs[1]] != VKP__ST_CONSTANT || M < 7 || K <= 0) return;
  int32_t id = cg->n_prepack++;
  if (id) vkp__sb_printf(&cg->out, "#define VKP_PACKED_%d_AT VKP_PACKED_%d_END\n", (int)id,
                         (int)id - 1);
  else vkp__sb_append(&cg->out, "#define VKP_PACKED_0_AT ((size_t)0)\n");
  vkp__sb_printf(&cg->out,
                 "#define VKP_PACKED_%d_END (VKP_PACKED_%d_AT + (size_t)%lld * "
                 "((%lld + VKP_NR - 1) / VKP_NR * VKP_NR))\n",
                 (int)id, (int)id, K, N);
  vkp__sb_printf(&cg->prepack,
                 "  {  // B of '%s', in GEMM panels\n"
                 "    const vkp_bsrc_t src = {.b = (const float *)constants[%d], .rsb = %lld, "
                 ".csb = %lld};\n"
                 "    vkp_prepack_b(%lld, %lld, &src, packed + VKP_PACKED_%d_AT);\n  }\n",
                 a->name, (int)cg->io_index[a->inputs[1]], rsb, csb, K, N, (int)id);
  // M >= 7 >= VKP_MR / 2 for every vector width: the packed path.
  snprintf(fields, size,
           ", .packed = packed + VKP_PACKED_%d_AT, .npad = (%lld + VKP_NR - 1) / VKP_NR * "
           "VKP_NR",
           (int)id, N);
}

static void vkp__emit_matmul(vkp__cg_t *cg, const vkp__group_t *gr, bool has_ep,
                             vkp__sb_t *sb) {
  const vkp_node_t *a = &cg->g->nodes[gr->anchor >= 0 ? gr->anchor : gr->root];
  const vkp_value_t *A = vkp__val(cg, a, 0), *B = vkp__val(cg, a, 1);
  const vkp_value_t *Y = vkp__outv(cg, a);
  const char *an = cg->vname[a->inputs[0]], *bn = cg->vname[a->inputs[1]];
  const char *yn = cg->vname[cg->g->nodes[gr->root].outputs[0]];
  char ep[160];
  if (has_ep) snprintf(ep, sizeof ep, "ep_%s, &ep_args", vkp__gname(cg, gr));
  else snprintf(ep, sizeof ep, "NULL, NULL");
  vkp__emit_ep_args(cg, gr, has_ep, sb);
  if (a->op == VKP_OP_GEMM) {
    bool ta = vkp_node_int(a, "transA") != 0;
    bool tb = vkp_node_int(a, "transB") != 0;
    long long M = Y->shape[0], N = Y->shape[1];
    long long K = ta ? A->shape[0] : A->shape[1];
    char packed[96];
    vkp__emit_prepack_b(cg, a, K, N, tb ? 1LL : N, tb ? K : 1LL, M, packed, sizeof packed);
    vkp__sb_printf(sb,
                   "  const vkp_bsrc_t src = {.b = %s, .rsb = %lld, .csb = %lld%s};\n",
                   bn, tb ? 1LL : N, tb ? K : 1LL, packed);
    vkp__sb_printf(sb, "  vkp_gemm(%lld, %lld, %lld, ", M, N, K);
    vkp__emit_float(sb, vkp_node_float(a, "alpha"));
    vkp__sb_printf(sb, ", %s, %lld, %lld, NULL, &src, %s, %lld,\n           %s, 0, 0, "
                   "scratch, VKP_STAGE_THREADS);\n",
                   an, ta ? 1LL : K, ta ? M : 1LL, yn, N, ep);
    return;
  }
  // matmul: NumPy semantics; a 1-D operand is a single row / column.
  long long K = A->shape[A->rank - 1];
  long long M = A->rank >= 2 ? A->shape[A->rank - 2] : 1;
  long long N = B->rank >= 2 ? B->shape[B->rank - 1] : 1;
  int32_t nb = Y->rank - (A->rank >= 2) - (B->rank >= 2);
  int64_t as[VKP_MAX_RANK], bs[VKP_MAX_RANK], batch = 1;
  vkp__batch_strides(A, A->rank >= 2 ? 2 : 1, Y->shape, nb, as);
  vkp__batch_strides(B, B->rank >= 2 ? 2 : 1, Y->shape, nb, bs);
  for (int32_t d = 0; d < nb; ++d) batch *= Y->shape[d];
  bool b_shared = true;
  for (int32_t d = 0; d < nb; ++d) b_shared &= bs[d] == 0;
  // One GEMM of batch * M rows when B is shared, A's batches are stacked
  // rows (compact) and no epilogue operand varies over batches or rows (a
  // bias): e.g. a sequence-first [L, 1, E] input, M = 1 per batch, would
  // otherwise stream B once per batch.
  bool flat = b_shared && batch > 1 && A->rank >= 2;
  int64_t span = M * K;
  for (int32_t d = nb - 1; d >= 0 && flat; --d) {
    if (Y->shape[d] == 1) continue;
    flat = as[d] == span;
    span *= Y->shape[d];
  }
  for (int32_t i = 0; has_ep && flat && i < gr->n_leaves; ++i)
    for (int32_t d = 0; d < gr->rank - 1; ++d)
      if (gr->shape[d] != 1 && gr->leaves[i].strides[d] != 0) flat = false;
  if (flat) {
    char packed[96];
    vkp__emit_prepack_b(cg, a, K, N, N, 1, M * batch, packed, sizeof packed);
    vkp__sb_printf(sb, "  const vkp_bsrc_t src = {.b = %s, .rsb = %lld, .csb = 1%s};\n",
                   bn, N, packed);
    vkp__sb_printf(sb,
                   "  vkp_gemm(%lld, %lld, %lld, 1.0f, %s, %lld, 1, NULL, &src, %s, %lld,\n"
                   "           %s, 0, 0, scratch, VKP_STAGE_THREADS);\n",
                   M * (long long)batch, N, K, an, K, yn, N, ep);
    return;
  }
  char packed[96] = "";
  if (b_shared) vkp__emit_prepack_b(cg, a, K, N, N, 1, M, packed, sizeof packed);
  vkp__sb_printf(sb, "  for (ptrdiff_t b = 0; b < %lld; ++b) {\n", (long long)batch);
  vkp__sb_printf(sb, "    const vkp_bsrc_t src = {.b = %s + ", bn);
  vkp__emit_part(sb, "b", Y->shape, 0, nb, bs);
  vkp__sb_printf(sb, ", .rsb = %lld, .csb = 1%s};\n", N, packed);
  vkp__sb_printf(sb, "    vkp_gemm(%lld, %lld, %lld, 1.0f, %s + ", M, N, K, an);
  vkp__emit_part(sb, "b", Y->shape, 0, nb, as);
  vkp__sb_printf(sb, ", %lld, 1, NULL, &src, %s + b * %lld, %lld,\n             %s, 0, b, "
                 "scratch, VKP_STAGE_THREADS);\n  }\n",
                 K, yn, M * N, N, ep);
}

// Nested loops over `shape` (rank r) with loop variables i0.., writing
// dst[k++] = src[offset], offset = sum_d (base_d + i_d * step_d) * stride_d.
static void vkp__emit_gather(vkp__sb_t *sb, const char *dst, const char *src,
                             int32_t r, const int64_t *shape,
                             const int64_t *base, const int64_t *step,
                             const int64_t *stride) {
  vkp__sb_append(sb, "  ptrdiff_t k = 0;\n");
  for (int32_t d = 0; d < r; ++d)
    vkp__sb_printf(sb, "%*sfor (ptrdiff_t i%d = 0; i%d < %lld; ++i%d)\n",
                   2 + 2 * (int)d, "", (int)d, (int)d, (long long)shape[d], (int)d);
  vkp__sb_printf(sb, "%*s%s[k++] = %s[0", 2 + 2 * (int)r, "", dst, src);
  for (int32_t d = 0; d < r; ++d) {
    if (!stride[d]) continue;
    vkp__sb_printf(sb, " + (%lld + i%d * %lld) * %lld", (long long)base[d], (int)d,
                   (long long)step[d], (long long)stride[d]);
  }
  vkp__sb_append(sb, "];\n");
}

static void vkp__compact_strides(const vkp_value_t *v, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = v->rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= v->shape[d];
  }
}

// The ops of vkp__emit_single with a bounded input or output: copies and
// loops over run-time sizes (the extents are parameters of the node
// function, cg->ename).

// The body of one layer_norm row over `inner` elements (xr, yr in scope):
// its statistics, then (x - mean) * rstd times the scale and plus the bias
// (broadcast over the normalised dims ns[0..nr)), closing the row loop.
static void vkp__emit_layer_norm_row(const vkp__cg_t *cg, const vkp_node_t *n, vkp__sb_t *sb,
                                     long long inner, int32_t nr, const int64_t *ns) {
  vkp__sb_printf(sb, "    float mean, rstd;\n    vkp_row_stats%s(xr, %lld, ",
                 vkp_node_int(n, "rms") ? "_rms" : "", inner);
  vkp__emit_float(sb, vkp_node_float(n, "epsilon"));
  vkp__sb_printf(sb,
                 ", &mean, &rstd);\n"
                 "    for (ptrdiff_t j = 0; j < %lld; ++j)\n"
                 "      yr[j] = (xr[j] - mean) * rstd",
                 inner);
  for (int32_t k = 1; k < 3; ++k) {
    const vkp_value_t *p = vkp__val(cg, n, k);
    if (!p) continue;
    int64_t st[VKP_MAX_RANK];
    vkp__leaf_strides(p, nr, ns, false, st);
    vkp__sb_printf(sb, " %s %s[", k == 1 ? "*" : "+", cg->vname[n->inputs[k]]);
    vkp__emit_part(sb, "j", ns, 0, nr, st);
    vkp__sb_append(sb, "]");
  }
  vkp__sb_append(sb, ";\n  }\n");
}
static vkp_status_t vkp__emit_single_bounded(vkp__cg_t *cg, const vkp_node_t *n,
                                             vkp__sb_t *sb) {
  int32_t xv = n->inputs[0], yv = n->outputs[0];
  const vkp_value_t *x = &cg->g->values[xv], *y = &cg->g->values[yv];
  const char *xn = cg->vname[xv], *yn = cg->vname[yv];
  const char *xe = cg->ename[xv], *ye = cg->ename[yv];
  switch (n->op) {
    case VKP_OP_RESHAPE: case VKP_OP_FLATTEN: case VKP_OP_SQUEEZE:
    case VKP_OP_UNSQUEEZE: case VKP_OP_IDENTITY:  // views written to an output
      vkp__sb_printf(sb, "  memcpy(%s, %s, (size_t)%s * %zu);\n", yn, xn,
                     vkp__c_dims(x, xe, 0, x->rank).s, vkp_dtype_size(x->dtype));
      return NULL;
    case VKP_OP_TRANSPOSE: {
      // Output dim d walks input dim perm[d], at the input's run-time stride.
      const int64_t *perm;
      vkp_node_attr_ints(n, "perm", &perm);
      vkp__sb_append(sb, "  ptrdiff_t vkp_at = 0;\n");
      for (int32_t d = 0; d < y->rank; ++d)
        vkp__sb_printf(sb, "%*sfor (ptrdiff_t i%d = 0; i%d < %s; ++i%d)\n", 2 + 2 * (int)d, "",
                       (int)d, (int)d, vkp__c_dims(y, ye, d, d + 1).s, (int)d);
      vkp__sb_printf(sb, "%*s%s[vkp_at++] = %s[0", 2 + 2 * (int)y->rank, "", yn, xn);
      for (int32_t d = 0; d < y->rank; ++d)
        vkp__sb_printf(sb, " + i%d * %s", (int)d,
                       vkp__c_dims(x, xe, (int32_t)perm[d] + 1, x->rank).s);
      vkp__sb_append(sb, "];\n");
      return NULL;
    }
    case VKP_OP_CONCAT: {
      // Per outer index, each input's run of its dims from the axis on.
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      size_t esz = vkp_dtype_size(y->dtype);
      vkp__sb_printf(sb,
                     "  unsigned char *vkp_dst = (unsigned char *)%s;\n"
                     "  for (ptrdiff_t o = 0; o < %s; ++o) {\n",
                     yn, vkp__c_dims(y, ye, 0, axis).s);
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        int32_t v = n->inputs[i];
        vkp__c_dim_t run = vkp__c_dims(&cg->g->values[v], cg->ename[v], axis,
                                       cg->g->values[v].rank);
        vkp__sb_printf(sb,
                       "    memcpy(vkp_dst, (const unsigned char *)%s + (size_t)(o * %s) * %zu, "
                       "(size_t)%s * %zu);  // from '%s'\n"
                       "    vkp_dst += (size_t)%s * %zu;\n",
                       cg->vname[v], run.s, esz, run.s, esz, cg->g->values[v].name, run.s,
                       esz);
      }
      vkp__sb_append(sb, "  }\n");
      return NULL;
    }
    case VKP_OP_SLICE: {
      // Output dim d walks input dim d from its start by its step, at the
      // input's run-time stride (the bounded axis forward from a start
      // clamped to its extent: vkp__c_emit_extents).
      const int64_t *starts, *steps;
      vkp_node_attr_ints(n, "starts", &starts);
      vkp_node_attr_ints(n, "steps", &steps);
      vkp__sb_append(sb, "  ptrdiff_t vkp_at = 0;\n");
      for (int32_t d = 0; d < y->rank; ++d)
        vkp__sb_printf(sb, "%*sfor (ptrdiff_t i%d = 0; i%d < %s; ++i%d)\n", 2 + 2 * (int)d, "",
                       (int)d, (int)d, vkp__c_dims(y, ye, d, d + 1).s, (int)d);
      vkp__sb_printf(sb, "%*s%s[vkp_at++] = %s[0", 2 + 2 * (int)y->rank, "", yn, xn);
      for (int32_t d = 0; d < y->rank; ++d)
        vkp__sb_printf(sb, " + (%lld + i%d * %lld) * %s", (long long)starts[d], (int)d,
                       (long long)steps[d], vkp__c_dims(x, xe, d + 1, x->rank).s);
      vkp__sb_append(sb, "];\n");
      return NULL;
    }
    case VKP_OP_GEMM: {
      // A's rows vary (transA 0); B and C static, C not spanning the rows.
      const vkp_value_t *B = vkp__val(cg, n, 1), *C = vkp__val(cg, n, 2);
      bool tb = vkp_node_int(n, "transB") != 0;
      long long K = x->shape[1], N = y->shape[1];
      vkp__sb_printf(sb,
                     "  const ptrdiff_t vkp_m = %s;\n"
                     "  const vkp_bsrc_t src = {.b = %s, .rsb = %lld, .csb = %lld};\n"
                     "  vkp_gemm(vkp_m, %lld, %lld, ",
                     vkp__c_dims(x, xe, 0, 1).s, cg->vname[n->inputs[1]], tb ? 1LL : N,
                     tb ? K : 1LL, N, K);
      (void)B;
      vkp__emit_float(sb, vkp_node_float(n, "alpha"));
      vkp__sb_printf(sb, ", %s, %lld, 1, NULL, &src, %s, %lld, NULL, NULL, 0, 0, scratch, "
                     "VKP_STAGE_THREADS);\n", xn, K, yn, N);
      if (C) {
        // C broadcasts along the rows: [N], [1, N], [1] or a scalar.
        bool per_col = C->rank >= 1 && C->shape[C->rank - 1] != 1;
        vkp__sb_printf(sb,
                       "  for (ptrdiff_t r = 0; r < vkp_m; ++r)\n"
                       "    for (ptrdiff_t j = 0; j < %lld; ++j) %s[r * %lld + j] += ",
                       N, yn, N);
        vkp__emit_float(sb, vkp_node_float(n, "beta"));
        vkp__sb_printf(sb, " * %s[%s];\n", cg->vname[n->inputs[2]], per_col ? "j" : "0");
      }
      return NULL;
    }
    case VKP_OP_MATMUL: {
      // A varies along its rows (B static), or A and / or B along a batch
      // axis they share (graph/bounded.h): one GEMM per run-time batch of
      // the output, over A's run-time rows, at run-time strides.
      const vkp_value_t *B = vkp__val(cg, n, 1);
      const char *be = cg->ename[n->inputs[1]];
      long long K = x->shape[x->rank - 1];
      long long N = B->rank >= 2 ? B->shape[B->rank - 1] : 1;
      int32_t nb = y->rank - 1 - (B->rank >= 2);  // batch dims of the output
      int32_t ab = x->rank - 2, bb = B->rank >= 2 ? B->rank - 2 : 0;
      vkp__sb_printf(sb,
                     "  const ptrdiff_t vkp_m = %s;\n"
                     "  ptrdiff_t vkp_yo = 0;\n",
                     vkp__c_dims(x, xe, x->rank - 2, x->rank - 1).s);
      for (int32_t d = 0; d < nb; ++d)
        vkp__sb_printf(sb, "%*sfor (ptrdiff_t i%d = 0; i%d < %s; ++i%d)\n", 2 + 2 * (int)d, "",
                       (int)d, (int)d, vkp__c_dims(y, ye, d, d + 1).s, (int)d);
      int ind = 2 + 2 * nb;
      vkp__sb_printf(sb, "%*s{\n%*sconst float *vkp_a = %s", ind, "", ind + 2, "", xn);
      for (int32_t d = 0; d < nb; ++d) {
        int32_t da = d - (nb - ab);
        if (da >= 0 && x->shape[da] != 1)
          vkp__sb_printf(sb, " + i%d * %s", (int)d, vkp__c_dims(x, xe, da + 1, x->rank).s);
      }
      vkp__sb_printf(sb, ";\n%*sconst vkp_bsrc_t src = {.b = %s", ind + 2, "",
                     cg->vname[n->inputs[1]]);
      for (int32_t d = 0; d < nb; ++d) {
        int32_t db = d - (nb - bb);
        if (db >= 0 && B->shape[db] != 1)
          vkp__sb_printf(sb, " + i%d * %s", (int)d, vkp__c_dims(B, be, db + 1, B->rank).s);
      }
      vkp__sb_printf(sb,
                     ", .rsb = %lld, .csb = 1};\n"
                     "%*svkp_gemm(vkp_m, %lld, %lld, 1.0f, vkp_a, %lld, 1, NULL, &src, "
                     "%s + vkp_yo, %lld, NULL, NULL, 0, 0, scratch, VKP_STAGE_THREADS);\n"
                     "%*svkp_yo += vkp_m * %lld;\n%*s}\n",
                     N, ind + 2, "", N, K, K, yn, N, ind + 2, "", N, ind, "");
      return NULL;
    }
    case VKP_OP_SOFTMAX: {
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      vkp__sb_printf(sb, "  vkp_softmax(%s, %s, %s, ", xn, yn,
                     vkp__c_dims(x, xe, 0, axis).s);
      vkp__sb_printf(sb, "%s, ", vkp__c_dims(x, xe, axis, axis + 1).s);
      vkp__sb_printf(sb, "%s);\n", vkp__c_dims(x, xe, axis + 1, x->rank).s);
      return NULL;
    }
    case VKP_OP_GLOBAL_AVG_POOL: {
      long long inner = 1;
      for (int32_t d = 2; d < x->rank; ++d) inner *= (long long)x->shape[d];
      vkp__sb_printf(sb,
                     "  for (ptrdiff_t r = 0; r < %s; ++r) {\n"
                     "    const float *row = %s + r * %lld;\n"
                     "    float sum = 0.0f;\n"
                     "    for (ptrdiff_t k = 0; k < %lld; ++k) sum += row[k];\n"
                     "    %s[r] = sum / %lld.0f;\n  }\n",
                     vkp__c_dims(x, xe, 0, 2).s, xn, inner, inner, yn, inner ? inner : 1);
      return NULL;
    }
    case VKP_OP_LAYER_NORM: {
      // The rows before 'axis' vary; each normalises a static run.
      int32_t axis = (int32_t)vkp_node_int(n, "axis");
      long long inner = 1;
      for (int32_t d = axis; d < x->rank; ++d) inner *= (long long)x->shape[d];
      int32_t nr = x->rank - axis;
      const int64_t *ns = x->shape + axis;
      vkp__sb_printf(sb,
                     "  for (ptrdiff_t o = 0; o < %s; ++o) {\n"
                     "    const float *xr = %s + o * %lld;\n"
                     "    float *yr = %s + o * %lld;\n",
                     vkp__c_dims(x, xe, 0, axis).s, xn, inner, yn, inner);
      vkp__emit_layer_norm_row(cg, n, sb, inner, nr, ns);
      return NULL;
    }
    default:
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "node '%s': the C codegen has no kernel for %s on a "
                             "data-dependent shape",
                             n->name, vkp_op_name(n->op));
  }
}

// Everything that is not fused: one node, its own loops or a prelude call.
// Loops split across the pool put their task function into `pre`.
static vkp_status_t vkp__emit_single(vkp__cg_t *cg, const vkp__group_t *gr,
                                     const vkp_node_t *n, vkp__sb_t *pre, vkp__sb_t *sb) {
  if (vkp_node_is_bounded(cg->g, n)) return vkp__emit_single_bounded(cg, n, sb);
  const vkp_value_t *x = vkp__val(cg, n, 0), *y = vkp__outv(cg, n);
  const char *xn = cg->vname[n->inputs[0]], *yn = cg->vname[n->outputs[0]];
  switch (n->op) {
    case VKP_OP_RESHAPE: case VKP_OP_FLATTEN: case VKP_OP_SQUEEZE:
    case VKP_OP_UNSQUEEZE: case VKP_OP_IDENTITY:  // views written to an output
      vkp__sb_printf(sb, "  memcpy(%s, %s, %lld);\n", yn, xn,
                     (long long)(vkp__numel(y) * (int64_t)vkp_dtype_size(y->dtype)));
      return NULL;
    case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: {
      const int64_t *k, *p, *s, *d;
      vkp_node_attr_ints(n, "kernel_shape", &k);
      vkp_node_attr_ints(n, "pads", &p);
      vkp_node_attr_ints(n, "strides", &s);
      vkp_node_attr_ints(n, "dilations", &d);
      long long C = x->shape[1], H = x->shape[2], W = x->shape[3];
      long long OH = y->shape[2], OW = y->shape[3];
      vkp__sb_printf(sb, "  for (ptrdiff_t n = 0; n < %lld; ++n)\n", (long long)x->shape[0]);
      // Both kernels take (x, y, C, H, W, KH, KW, SH, SW, PT, PL, ...).
      vkp__sb_printf(sb,
                     "    %s(%s + n * %lld, %s + n * %lld, %lld, %lld, %lld, %lld, %lld, "
                     "%lld, %lld,\n        %lld, %lld, ",
                     n->op == VKP_OP_MAX_POOL2D ? "vkp_maxpool2d" : "vkp_pool2d", xn,
                     C * H * W, yn, C * OH * OW, C, H, W, (long long)k[0],
                     (long long)k[1], (long long)s[0], (long long)s[1], (long long)p[0],
                     (long long)p[1]);
      if (n->op == VKP_OP_MAX_POOL2D) {
        vkp__emit_scratch_term(cg, "loop",
                               "VKP_STAGE_THREADS * "
                               "VKP_MAXPOOL_SCRATCH_FLOATS(%lld, %lld, %lld, %lld, %lld, %lld)",
                               W, (long long)k[1], (long long)s[1], (long long)p[1],
                               (long long)d[1], OW);
        vkp__sb_printf(sb, "%lld, %lld, %lld, %lld, scratch);\n", (long long)d[0],
                       (long long)d[1], OH, OW);
        return NULL;
      }
      vkp__sb_printf(sb, "%lld, %lld, %lld, %lld, %lld, %lld, 0, %d);\n", (long long)p[2],
                     (long long)p[3], (long long)d[0], (long long)d[1], OH, OW,
                     (int)vkp_node_int(n, "count_include_pad"));
      return NULL;
    }
    case VKP_OP_GLOBAL_AVG_POOL: {  // rows split across the pool
      long long rows = x->shape[0] * x->shape[1], inner = vkp__numel(x) / (rows ? rows : 1);
      vkp__sb_t loop = {0};
      vkp__sb_append(&loop, "  for (ptrdiff_t r = lo; r < hi; ++r) {\n");
      vkp__sb_printf(&loop, "    const float *row = %s + r * %lld;\n", xn, inner);
      vkp__sb_printf(&loop, "    %s[r] = vkp_row_sum(row, %lld) / %lld.0f;\n  }\n", yn, inner,
                     inner ? inner : 1);
      vkp__emit_group_split(cg, gr, pre, sb, rows, inner, &loop);
      vkp__sb_deinit(&loop);
      return NULL;
    }
    case VKP_OP_SOFTMAX: {
      int64_t axis = vkp_node_int(n, "axis");
      long long outer = 1, inner = 1;
      for (int32_t d = 0; d < axis; ++d) outer *= x->shape[d];
      for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= x->shape[d];
      vkp__sb_printf(sb, "  vkp_softmax(%s, %s, %lld, %lld, %lld);\n", xn, yn, outer,
                     (long long)x->shape[axis], inner);
      return NULL;
    }
    case VKP_OP_LAYER_NORM: {
      int64_t axis = vkp_node_int(n, "axis");
      long long outer = 1, inner = 1;
      for (int32_t d = 0; d < axis; ++d) outer *= x->shape[d];
      for (int32_t d = (int32_t)axis; d < x->rank; ++d) inner *= x->shape[d];
      int32_t nr = x->rank - (int32_t)axis;
      const int64_t *ns = x->shape + axis;
      vkp__sb_t rows = {0}, *body = sb;  // rows split across the pool
      sb = &rows;
      vkp__sb_append(sb, "  for (ptrdiff_t o = lo; o < hi; ++o) {\n");
      vkp__sb_printf(sb, "    const float *xr = %s + o * %lld;\n", xn, inner);
      vkp__sb_printf(sb, "    float *yr = %s + o * %lld;\n", yn, inner);
      vkp__emit_layer_norm_row(cg, n, sb, inner, nr, ns);
      vkp__emit_group_split(cg, gr, pre, body, outer, 4 * inner, &rows);
      vkp__sb_deinit(&rows);
      return NULL;
    }
    case VKP_OP_TRANSPOSE: {
      const int64_t *perm;
      vkp_node_attr_ints(n, "perm", &perm);
      int64_t xs[VKP_MAX_RANK], base[VKP_MAX_RANK] = {0}, step[VKP_MAX_RANK],
          stride[VKP_MAX_RANK];
      vkp__compact_strides(x, xs);
      for (int32_t d = 0; d < y->rank; ++d) {
        step[d] = 1;
        stride[d] = y->shape[d] == 1 ? 0 : xs[perm[d]];
      }
      vkp__emit_gather(sb, yn, xn, y->rank, y->shape, base, step, stride);
      return NULL;
    }
    case VKP_OP_SLICE: {
      const int64_t *starts, *steps;
      vkp_node_attr_ints(n, "starts", &starts);
      vkp_node_attr_ints(n, "steps", &steps);
      int64_t xs[VKP_MAX_RANK];
      vkp__compact_strides(x, xs);
      if (vkp__numel(y) == 0) return NULL;
      vkp__emit_gather(sb, yn, xn, y->rank, y->shape, starts, steps, xs);
      return NULL;
    }
    case VKP_OP_CONCAT: {
      int64_t axis = vkp_node_int(n, "axis");
      long long outer = 1, esz = (long long)vkp_dtype_size(y->dtype);
      for (int32_t d = 0; d < axis; ++d) outer *= y->shape[d];
      long long out_chunk = vkp__numel(y) / (outer ? outer : 1) * esz, at = 0;
      if (outer == 0 || out_chunk == 0) return NULL;
      for (int32_t i = 0; i < n->n_inputs; ++i) {
        const vkp_value_t *v = vkp__val(cg, n, i);
        long long chunk = vkp__numel(v) / outer * esz;
        if (cg->in_place[n->inputs[i]]) {  // written in place by its producer
          vkp__sb_printf(sb, "  (void)%s;  // '%s' is written in place\n",
                         cg->vname[n->inputs[i]], v->name);
          at += chunk;
          continue;
        }
        if (chunk)
          vkp__sb_printf(sb,
                         "  for (ptrdiff_t o = 0; o < %lld; ++o)  // from '%s'\n"
                         "    memcpy((unsigned char *)%s + o * %lld + %lld, "
                         "(const unsigned char *)%s + o * %lld, %lld);\n",
                         outer, v->name, yn, out_chunk, at,
                         cg->vname[n->inputs[i]], chunk, chunk);
        at += chunk;
      }
      return NULL;
    }
    default:
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "node '%s': the C codegen has no kernel for %s",
                             n->name, vkp_op_name(n->op));
  }
}

// A value's shape for a comment: "[2, 3]", a bounded one "[2, <=15]".
static const char *vkp__comment_shape(const vkp_value_t *v, char *buf, size_t size) {
  if (!v->bounded) return vkp_shape_format(v->rank, v->shape, buf, size);
  size_t at = 0;
  for (int32_t d = 0; d < v->rank && at < size; ++d) {
    int w = snprintf(buf + at, size - at, "%s%s%lld", d ? ", " : "[",
                     d == v->bounded_axis ? "<=" : "", (long long)v->shape[d]);
    if (w < 0) break;
    at += (size_t)w;
  }
  if (at < size) snprintf(buf + at, size - at, "]");
  return buf;
}

static void vkp__emit_node_comment(vkp__cg_t *cg, const vkp_node_t *n,
                                   const char *role, vkp__sb_t *sb) {
  char shape[160];
  const vkp_value_t *o = vkp__outv(cg, n);
  vkp__sb_printf(sb, "// node '%s': %s", n->name, vkp_op_name(n->op));
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__val(cg, n, i);
    if (v)
      vkp__sb_printf(sb, "%s%s", i ? ", " : " ", vkp__comment_shape(v, shape, sizeof shape));
  }
  vkp__sb_printf(sb, " -> %s", vkp__comment_shape(o, shape, sizeof shape));
  for (int32_t j = 1; j < n->n_outputs; ++j) {
    const vkp_value_t *oj = &cg->g->values[n->outputs[j]];
    vkp__sb_printf(sb, ", %s", vkp__comment_shape(oj, shape, sizeof shape));
  }
  vkp__sb_printf(sb, "%s\n", role);
}

// Appends `text` to the body of a C string literal: quotes, backslashes and
// anything outside printable ASCII escaped as octal.
static void vkp__c_string_body(vkp__sb_t *sb, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    if (*p == '"' || *p == '\\' || *p < 0x20 || *p > 0x7e || *p == '?')
      vkp__sb_printf(sb, "\\%03o", (unsigned)*p);
    else
      vkp__sb_appendn(sb, (const char *)p, 1);
  }
}

int32_t vkp__c_error_code(vkp__cg_t *cg, const vkp_node_t *n, const char *message) {
  int32_t code = ++cg->n_errors;
  vkp__sb_printf(&cg->errors, "    case %d: return \"", (int)code);
  vkp__c_string_body(&cg->errors, "node '");
  vkp__c_string_body(&cg->errors, n->name);
  vkp__c_string_body(&cg->errors, "' (");
  vkp__c_string_body(&cg->errors, vkp_op_name(n->op));
  vkp__c_string_body(&cg->errors, "): ");
  vkp__c_string_body(&cg->errors, message);
  vkp__sb_append(&cg->errors, "\";\n");
  return code;
}

// The run-time extents a group's node function takes, after its pointers:
// each bounded parameter's, then each bounded output's (by address when
// the kernel makes it). `decl`: the parameter list, else the call's.
static void vkp__emit_extent_params(const vkp__cg_t *cg, const vkp__group_t *gr,
                                    vkp__sb_t *sb, bool decl) {
  const vkp_node_t *rn = &cg->g->nodes[gr->root];
  bool first = gr->n_params == 0 && rn->n_outputs == 0;
  for (int32_t i = 0; i < gr->n_params; ++i) {
    const char *e = cg->ename[gr->params[i]];
    if (!e) continue;
    vkp__sb_printf(sb, "%s%s%s", first ? "" : ", ", decl ? "const ptrdiff_t " : "", e);
    first = false;
  }
  bool by_address = vkp__c_makes_extents(rn);
  for (int32_t j = 0; j < rn->n_outputs; ++j) {
    const char *e = cg->ename[rn->outputs[j]];
    if (!e) continue;
    vkp__sb_printf(sb, "%s%s%s", first ? "" : ", ",
                   decl ? (by_address ? "ptrdiff_t *restrict " : "const ptrdiff_t ")
                        : (by_address ? "&" : ""),
                   e);
    first = false;
  }
}

// `(void)e;` for each extent a group's node function takes (a kernel may
// need only some of them).
static void vkp__emit_extents_used(const vkp__cg_t *cg, const vkp__group_t *gr,
                                   vkp__sb_t *sb) {
  const vkp_node_t *rn = &cg->g->nodes[gr->root];
  for (int32_t i = 0; i < gr->n_params; ++i)
    if (cg->ename[gr->params[i]])
      vkp__sb_printf(sb, "  (void)%s;\n", cg->ename[gr->params[i]]);
  for (int32_t j = 0; j < rn->n_outputs; ++j)
    if (cg->ename[rn->outputs[j]])
      vkp__sb_printf(sb, "  (void)%s;\n", cg->ename[rn->outputs[j]]);
}

// Branches (branch_select, ONNX If on a run-time condition): which nodes
// only one side reads, by the rule the ref target skips them by
// (graph/branch.h).
static vkp_status_t vkp__plan_branches(vkp__cg_t *cg) {
  int32_t nn = cg->g->n_nodes;
  cg->excl_select = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  cg->excl_side = vkp__calloc((size_t)nn + 1, 1);
  if (!cg->excl_select || !cg->excl_side) return VKP_OOM("codegen branch plan");
  return vkp__graph_branch_sides(cg->g, cg->excl_select, cg->excl_side);
}

// The condition under which the group rooted at `root` runs, into `buf`
// (empty: always): for each select whose side alone reads it (and each
// select that side of an enclosing one alone reads), that its condition,
// computed before the group, picks that side. A condition computed later
// is not known yet: the group then runs (as on ref).
static void vkp__branch_guard(vkp__cg_t *cg, int32_t root, bool *needed, char *buf,
                              size_t size) {
  const vkp_graph_t *g = cg->g;
  size_t at = 0;
  buf[0] = 0;
  for (int32_t sel = cg->excl_select[root], side = cg->excl_side[root]; sel >= 0;
       side = cg->excl_side[sel], sel = cg->excl_select[sel]) {
    int32_t cond = g->nodes[sel].inputs[0];
    int32_t p = g->values[cond].producer;
    if (p >= 0 && cg->group_of[p] >= root) continue;
    needed[cond] = true;
    int w = snprintf(buf + at, size - at, "%s%s%s[0]", at ? " && " : "",
                     side == 1 ? "" : "!", cg->vname[cond]);
    if (w < 0 || (size_t)w >= size - at) {  // too deep to say: it runs
      buf[0] = 0;
      return;
    }
    at += (size_t)w;
  }
}

// Emits the function of the group rooted at `root` into cg->out and its call
// into `calls`; marks the values it touches in `needed`.
static vkp_status_t vkp__emit_group(vkp__cg_t *cg, int32_t root, vkp__sb_t *calls,
                                    bool *needed) {
  const vkp_graph_t *g = cg->g;
  const vkp_node_t *rn = &g->nodes[root];
  int32_t out_v = rn->outputs[0];
  if (cg->pool_done == root + 1) {  // computed with the convolution before it
    cg->pool_done = 0;
    vkp__emit_node_comment(cg, rn, " (computed with the convolution before it)", &cg->out);
    vkp__sb_append(&cg->out, "\n");
    return NULL;
  }
  // The untaken side of a branch does not run (vkp__plan_branches); its
  // extents' checks do not fail.
  char guard[512];
  vkp__branch_guard(cg, root, needed, guard, sizeof guard);
  cg->guard = guard[0] ? guard : NULL;
  // Run-time extents of the group's bounded results, before it runs.
  for (int32_t i = 0; i <= root; ++i)
    if (cg->group_of[i] == root) vkp__c_emit_extents(cg, &g->nodes[i], calls);
  cg->guard = NULL;
  if (cg->storage[out_v] == VKP__ST_ALIAS && !cg->in_place[out_v]) {  // a view: no code
    vkp__emit_node_comment(cg, rn, " (a view, no code)", &cg->out);
    vkp__sb_append(&cg->out, "\n");
    return NULL;
  }
  vkp__group_t *gr = vkp__calloc(1, sizeof(*gr));
  if (!gr) return VKP_OOM("fused group");
  gr->root = root;
  gr->anchor = cg->anchor_of[root];
  const vkp_value_t *ov = &g->values[out_v];
  gr->rank = ov->rank;
  for (int32_t d = 0; d < ov->rank; ++d) gr->shape[d] = ov->shape[d];
  vkp_status_t st = NULL;
  bool elementwise = vkp__is_elementwise(rn->op);
  if (gr->anchor >= 0) {
    const vkp_node_t *a = &g->nodes[gr->anchor];
    for (int32_t i = 0; i < a->n_inputs && i < 2; ++i) vkp__add_param(gr, a->inputs[i]);
  }
  if (gr->anchor >= 0 || elementwise) {
    st = vkp__collect_leaves(cg, gr);
  } else {
    for (int32_t i = 0; i < rn->n_inputs; ++i)
      if (rn->inputs[i] >= 0) vkp__add_param(gr, rn->inputs[i]);
  }
  if (st) {
    vkp__free(gr);
    return st;
  }
  // Comments: every source node of the group.
  for (int32_t i = 0; i <= root; ++i) {
    if (cg->group_of[i] != root) continue;
    const char *role = i == gr->anchor && i != root ? " (epilogue below fused in)"
                       : i != root                  ? " (fused)"
                                                    : "";
    vkp__emit_node_comment(cg, &g->nodes[i], role, &cg->out);
  }
  bool has_ep = false;
  if (gr->anchor >= 0) {
    has_ep = gr->anchor != root || gr->n_leaves > 0;
    if (has_ep) vkp__emit_epilogue(cg, gr, &cg->out);
  }
  // An emitter from the generator's op table writes its body first: the
  // header depends on whether it asked for scratch.
  vkp__c_emit_fn family = gr->anchor < 0 && !elementwise && rn->op != VKP_OP_MATMUL &&
                                  !vkp__window_2d(cg, rn)
                              ? vkp__c_emitter(rn->op)
                              : NULL;
  // Task functions of loops split across the pool go before the node
  // function (`pre`); its body is written first too.
  vkp__sb_t family_body = {0}, pre = {0}, body = {0};
  size_t family_scratch = 0;
  bool after_gemm = false, can_fail = false;
  char fail_message[sizeof ((vkp__c_kernel_t *)0)->fail_message] = "";
  char scratch_expr[sizeof ((vkp__c_kernel_t *)0)->scratch_expr] = "";
  if (family) {
    vkp__c_kernel_t k = {.graph = g, .node = rn, .out = cg->vname[out_v],
                         .threads = cg->threads, .body = &family_body, .pre = &pre,
                         .fn = vkp__gname(cg, gr), .cg = cg};
    for (int32_t i = 0; i < rn->n_inputs && i < VKP__C_MAX_INPUTS; ++i)
      k.in[i] = rn->inputs[i] >= 0 ? cg->vname[rn->inputs[i]] : NULL;
    for (int32_t i = 0; i < rn->n_outputs && i < VKP__C_MAX_OUTPUTS; ++i)
      k.outs[i] = cg->vname[rn->outputs[i]];
    for (int32_t i = 0; i < rn->n_inputs && i < VKP__C_MAX_INPUTS; ++i)
      k.in_ext[i] = rn->inputs[i] >= 0 ? cg->ename[rn->inputs[i]] : NULL;
    for (int32_t i = 0; i < rn->n_outputs && i < VKP__C_MAX_OUTPUTS; ++i)
      k.out_ext[i] = cg->ename[rn->outputs[i]];
    st = family(&k);
    family_scratch = k.scratch_floats;
    memcpy(scratch_expr, k.scratch_expr, sizeof scratch_expr);
    after_gemm = k.after_gemm_scratch;
    can_fail = k.can_fail;
    memcpy(fail_message, k.fail_message, sizeof fail_message);
    if (!st) st = vkp__sb_status(&family_body, "generated C source");
    if (!st) st = vkp__sb_status(&pre, "generated C source");
    if (st) {
      vkp__sb_deinit(&family_body);
      vkp__sb_deinit(&pre);
      vkp__free(gr);
      return vkp_status_annotate(st, "node '%s' (%s)", rn->name,
                                 vkp_op_name(rn->op));
    }
    if (scratch_expr[0])
      vkp__emit_scratch_term(cg, after_gemm ? "wino" : "loop", "%zu + (size_t)(%s)",
                             family_scratch, scratch_expr);
    else if (family_scratch)
      vkp__emit_scratch_term(cg, after_gemm ? "wino" : "loop", "%zu", family_scratch);
  }
  // A max pooling after a direct convolution is computed with it.
  int32_t pool = -1;
  if (gr->anchor >= 0 && g->nodes[gr->anchor].op == VKP_OP_CONV2D &&
      vkp__conv_direct_ok(cg, &g->nodes[gr->anchor]))
    pool = vkp__pool_after_conv(cg, gr);
  if (gr->anchor >= 0) {
    if (g->nodes[gr->anchor].op == VKP_OP_CONV2D) vkp__emit_conv(cg, gr, has_ep, pool, &body);
    else vkp__emit_matmul(cg, gr, has_ep, &body);
  } else if (rn->op == VKP_OP_MATMUL && !vkp_node_is_bounded(g, rn)) {  // 1-D operands
    vkp__emit_matmul(cg, gr, false, &body);
  } else if (elementwise && g->values[out_v].bounded) {
    vkp__emit_elementwise_bounded(cg, gr, &body);
  } else if (elementwise) {
    vkp__emit_elementwise(cg, gr, &pre, &body);
  } else if (family) {
    vkp__sb_cat(&body, &family_body);
    vkp__sb_deinit(&family_body);
    if (can_fail) vkp__sb_append(&body, "  return 0;\n");
  } else {
    st = vkp__emit_single(cg, gr, rn, &pre, &body);
  }
  vkp__sb_cat(&cg->out, &pre);
  vkp__sb_deinit(&pre);
  // Function header.
  const char *name = vkp__gname(cg, gr);
  vkp__sb_printf(&cg->out, "static %s node_%s(", can_fail ? "int" : "void", name);
  for (int32_t i = 0; i < gr->n_params; ++i) {
    const vkp_value_t *v = &g->values[gr->params[i]];
    vkp__sb_printf(&cg->out, "const %s *%s, ", vkp__c_type(v->dtype),
                   cg->vname[gr->params[i]]);
  }
  for (int32_t j = 0; j < rn->n_outputs; ++j) {
    const vkp_value_t *oj = &g->values[rn->outputs[j]];
    vkp__sb_printf(&cg->out, "%s%s *restrict %s", j ? ", " : "", vkp__c_type(oj->dtype),
                   cg->vname[rn->outputs[j]]);
  }
  if (pool >= 0)
    vkp__sb_printf(&cg->out, ", float *restrict %s", cg->vname[g->nodes[pool].outputs[0]]);
  bool scratch = gr->anchor >= 0 || rn->op == VKP_OP_MATMUL || rn->op == VKP_OP_GEMM ||
                 rn->op == VKP_OP_MAX_POOL2D || family_scratch > 0;
  if (scratch) vkp__sb_append(&cg->out, ", float *scratch, const float *packed");
  vkp__emit_extent_params(cg, gr, &cg->out, true);
  vkp__sb_append(&cg->out, ") {\n");
  if (scratch) vkp__sb_append(&cg->out, "  (void)packed;\n");
  // (A bounded max_pool2d runs the window emitter, which takes none.)
  if (scratch && vkp_node_is_bounded(g, rn)) vkp__sb_append(&cg->out, "  (void)scratch;\n");
  vkp__emit_extents_used(cg, gr, &cg->out);
  vkp__sb_cat(&cg->out, &body);
  if (body.failed) cg->out.failed = true;
  vkp__sb_deinit(&body);
  vkp__sb_append(&cg->out, "}\n\n");
  // The call; a kernel that can fail returns nonzero, and the stage then
  // returns the code vkp_stage_error explains.
  int32_t code = can_fail ? vkp__c_error_code(cg, rn, fail_message) : 0;
  // Timed per kernel when compiled with VKP_NODE_TIMES (empty otherwise).
  vkp__sb_append(calls, "  VKP_NODE_BEGIN();\n");
  if (guard[0]) vkp__sb_printf(calls, "  if (%s)  // its side of the branch is taken\n  ", guard);
  vkp__sb_printf(calls, can_fail ? "  if (node_%s(" : "  node_%s(", name);
  for (int32_t i = 0; i < gr->n_params; ++i) {
    vkp__sb_printf(calls, "%s, ", cg->vname[gr->params[i]]);
    needed[gr->params[i]] = true;
  }
  for (int32_t j = 0; j < rn->n_outputs; ++j) {
    vkp__sb_printf(calls, "%s%s", j ? ", " : "", cg->vname[rn->outputs[j]]);
    needed[rn->outputs[j]] = true;
  }
  if (pool >= 0) {
    vkp__sb_printf(calls, ", %s", cg->vname[g->nodes[pool].outputs[0]]);
    needed[g->nodes[pool].outputs[0]] = true;
    cg->pool_done = pool + 1;
  }
  if (scratch) vkp__sb_append(calls, ", scratch, packed");
  vkp__emit_extent_params(cg, gr, calls, false);
  if (can_fail) vkp__sb_printf(calls, ")) return %d;\n", (int)code);
  else vkp__sb_append(calls, ");\n");
  vkp__sb_printf(calls, "  VKP_NODE_END(%d);\n", (int)cg->n_kernels);
  // The kernel's name in a profile: its conv/gemm/matmul node (else the
  // group's root), its op, and how many more nodes fused in.
  const vkp_node_t *kn = gr->anchor >= 0 ? &g->nodes[gr->anchor] : rn;
  int32_t fused = pool >= 0;
  for (int32_t i = 0; i < g->n_nodes; ++i) fused += cg->group_of[i] == root;
  vkp__sb_append(&cg->kernel_names, "  \"");
  vkp__c_string_body(&cg->kernel_names, kn->name);
  vkp__sb_printf(&cg->kernel_names, " (%s", vkp_op_name(kn->op));
  if (fused > 1) vkp__sb_printf(&cg->kernel_names, " +%d fused", (int)(fused - 1));
  vkp__sb_append(&cg->kernel_names, ")\",\n");
  cg->n_kernels++;
  vkp__free(gr);
  return st;
}

// Declares the entry's pointer for value v.
static void vkp__emit_decl(vkp__cg_t *cg, int32_t v, vkp__sb_t *sb) {
  const vkp_value_t *val = &cg->g->values[v];
  const char *T = vkp__c_type(val->dtype), *name = cg->vname[v];
  switch (cg->storage[v]) {
    case VKP__ST_INPUT:
      vkp__sb_printf(sb, "  const %s *%s = inputs[%d];\n", T, name, (int)cg->io_index[v]);
      break;
    case VKP__ST_CONSTANT:
      vkp__sb_printf(sb, "  const %s *%s = constants[%d];\n", T, name, (int)cg->io_index[v]);
      break;
    case VKP__ST_OUTPUT:
      vkp__sb_printf(sb, "  %s *%s = outputs[%d];\n", T, name, (int)cg->io_index[v]);
      break;
    case VKP__ST_WORKSPACE:
      vkp__sb_printf(sb, "  %s *%s = (%s *)(ws + %lld);\n", T, name, T,
                     (long long)cg->offset[v]);
      break;
    case VKP__ST_ALIAS: {
      int32_t b = cg->alias_of[v];
      bool ro = cg->storage[b] == VKP__ST_INPUT || cg->storage[b] == VKP__ST_CONSTANT;
      if (cg->alias_off[v])
        vkp__sb_printf(sb,
                       "  %s *%s = (%s *)((unsigned char *)%s + %lld);  // in '%s', "
                       "concatenated in place\n",
                       T, name, T, cg->vname[b], (long long)cg->alias_off[v],
                       cg->g->values[b].name);
      else
        vkp__sb_printf(sb, "  %s%s *%s = %s;  // view of '%s'\n", ro ? "const " : "", T,
                       name, cg->vname[b], cg->g->values[b].name);
      break;
    }
    default:
      break;
  }
}

static vkp_status_t vkp__emit_all(vkp__cg_t *cg) {
  const vkp_graph_t *g = cg->g;
  int32_t nv = g->n_values;
  for (int32_t v = 0; v < nv; ++v) {
    char *s = vkp__ident("", g->values[v].name, NULL, 0, v);
    if (!s) return VKP_OOM("value names");
    // Keep a prefix when a graph name is not a plain lower-case identifier
    // or could clash with a C keyword or a name the generated code uses.
    bool plain = s[0] >= 'a' && s[0] <= 'z' && strncmp(s, "vkp", 3) != 0 &&
                 strncmp(s, "node_", 5) != 0 && strncmp(s, "ep_", 3) != 0 &&
                 strncmp(s, "t_", 2) != 0 && s[0] != 'l' && s[0] != 'i' &&
                 strncmp(s, "base", 4) != 0 && strncmp(s, "v_", 2) != 0;
    static const char *const reserved[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do",
        "double", "else", "enum", "extern", "float", "for", "goto",
        "register", "restrict", "return", "short", "signed", "sizeof",
        "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "outputs", "constants", "workspace", "ws",
        "scratch", "src", "acc", "ctx", "args", "xn", "yn", "row", "col",
        "batch", "rows", "cols", "ldc", "c", "cr", "r", "j", "k", "o", "n",
        "g", "b", "mean", "rstd", "xr", "yr", "sum", "row0", "col0",
        "size_t", "ptrdiff_t", "hi", "worker"};
    for (size_t i = 0; plain && i < sizeof reserved / sizeof reserved[0]; ++i)
      if (strcmp(s, reserved[i]) == 0) plain = false;
    cg->vname[v] = vkp__ident(plain ? "" : "v_", s, cg->vname, v, v);
    vkp__free(s);
    if (!cg->vname[v]) return VKP_OOM("value names");
  }
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    cg->nname[i] = vkp__ident("", g->nodes[i].name, cg->nname, i, i);
    if (!cg->nname[i]) return VKP_OOM("node names");
  }
  // Bounded values' run-time extents: "vkp_e_" + the value's (unique) name.
  bool bounded = false;
  for (int32_t v = 0; v < nv; ++v) {
    if (!g->values[v].bounded) continue;
    bounded = true;
    cg->ename[v] = vkp__asprintf("vkp_e_%s", cg->vname[v]);
    if (!cg->ename[v]) return VKP_OOM("extent names");
  }
  vkp__sb_t *out = &cg->out;
  vkp__sb_printf(out,
                 "// Generated by vkpipe codegen/c from graph '%s': %d nodes.\n"
                 "// Shapes are constants; weights arrive through `constants`.\n",
                 g->name, (int)g->n_nodes);
  vkp__sb_printf(out, "#define VKP_STAGE_THREADS %d\n", cg->threads > 1 ? (int)cg->threads : 1);
  vkp__sb_printf(out, "%s\n", vkp_codegen_c_prelude());
  vkp__sb_append(out,
              "// ---------------------------------------------------------------"
              "------------\n// The stage.\n\n");
  vkp__sb_t calls = {0};
  bool *needed = vkp__calloc((size_t)nv + 1, sizeof(bool));
  if (!needed) return VKP_OOM("codegen");
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < g->n_nodes && !st; ++i)
    if (cg->group_of[i] == i) st = vkp__emit_group(cg, i, &calls, needed);
  // Outputs that are not written by a node: copies at the end.
  vkp__sb_t tail = {0};
  for (int32_t i = 0; i < g->n_outputs && !st; ++i) {
    int32_t v = g->outputs[i];
    if (cg->storage[v] == VKP__ST_OUTPUT && cg->io_index[v] == i) continue;
    const vkp_value_t *val = &g->values[v];
    if (val->bounded)
      vkp__sb_printf(&tail, "  memcpy(outputs[%d], %s, (size_t)%s * %zu);  // output '%s'\n",
                     (int)i, cg->vname[v], vkp__c_dims(val, cg->ename[v], 0, val->rank).s,
                     vkp_dtype_size(val->dtype), val->name);
    else
      vkp__sb_printf(&tail, "  memcpy(outputs[%d], %s, %lld);  // output '%s'\n", (int)i,
                     cg->vname[v],
                     (long long)(vkp__numel(val) * (int64_t)vkp_dtype_size(val->dtype)),
                     val->name);
    needed[v] = true;
  }
  // Bounded outputs' run-time extents go back to the host.
  for (int32_t i = 0; i < g->n_outputs && !st; ++i) {
    int32_t v = g->outputs[i];
    if (g->values[v].bounded)
      vkp__sb_printf(&tail, "  extents[%d] = (int64_t)%s;  // output '%s'\n",
                     (int)(g->n_inputs + i), cg->ename[v], g->values[v].name);
  }
  // Views whose base must be declared.
  for (int32_t v = 0; v < nv; ++v)
    if (needed[v] && cg->storage[v] == VKP__ST_ALIAS) needed[cg->alias_of[v]] = true;
  int64_t ws = (cg->ws_bytes + 63) / 64 * 64;
  vkp__sb_append(out,
               "// Scratch floats: the per-thread GEMM scratch plus the Winograd\n"
               "// buffers, or what the direct loops need, whichever is more.\n"
               "static size_t vkp_scratch_floats(void) {\n"
               "  size_t loop = 0, wino = 0;\n");
  vkp__sb_cat(out, &cg->scratch_terms);
  vkp__sb_append(out,
               "  return VKP_MAXZ((size_t)VKP_STAGE_THREADS * VKP_GEMM_SCRATCH_FLOATS + wino,\n"
               "                  loop);\n}\n\n");
  vkp__sb_printf(out,
                 "// Workspace: a header the host writes (the thread pool, at offset\n"
                 "// 0), then intermediates, per-thread GEMM scratch and the Winograd\n"
                 "// buffers (or the depthwise plane), then the weights packed at load.\n"
                 "#define VKP_WS_HEADER %du\n"
                 "#define VKP_PACKED_FLOATS ", VKP_CODEGEN_C_WS_HEADER);
  if (cg->n_prepack) vkp__sb_printf(out, "VKP_PACKED_%d_END\n", (int)cg->n_prepack - 1);
  else vkp__sb_append(out, "((size_t)0)\n");
  vkp__sb_printf(out,
                 "#define VKP_PACKED_OFFSET \\\n"
                 "  (%lldu + (vkp_scratch_floats() * sizeof(float) + 63u) / 64u * 64u)\n\n"
                 "size_t vkp_stage_workspace_size(void);\n"
                 "size_t vkp_stage_workspace_size(void) {\n"
                 "  return VKP_WS_HEADER + VKP_PACKED_OFFSET + VKP_PACKED_FLOATS * sizeof(float) + "
                 "64u;\n"
                 "}\n\n"
                 "// The workspace layout and run signature this object expects.\n"
                 "int vkp_stage_abi(void);\n"
                 "int vkp_stage_abi(void) { return %d; }\n\n",
                 (long long)ws, VKP_CODEGEN_C_ABI);
  vkp__sb_append(out,
               "// Packs constant convolution weights into GEMM panels, once.\n"
               "void vkp_stage_prepack(const void *const *constants, void *workspace);\n"
               "void vkp_stage_prepack(const void *const *constants, void *workspace) {\n"
               "  float *packed = (float *)((unsigned char *)workspace + VKP_WS_HEADER + "
               "VKP_PACKED_OFFSET);\n"
               "  (void)constants;\n  (void)packed;\n");
  vkp__sb_cat(out, &cg->prepack);
  vkp__sb_append(out, "}\n\n");
  // Compiled with -DVKP_NODE_TIMES (the cpu target does under
  // $VKPIPE_CPU_NODE_TIMES), every kernel call is timed: wall seconds summed
  // over the runs, read through vkp_stage_node_times.
  vkp__sb_printf(out,
                 "#define VKP_N_KERNELS %d\n"
                 "#ifdef VKP_NODE_TIMES\n"
                 "#include <time.h>\n"
                 "static double vkp__node_s[VKP_N_KERNELS + 1];\n"
                 "static uint64_t vkp__node_runs;\n"
                 "static const char *const vkp__node_names[VKP_N_KERNELS + 1] = {\n",
                 (int)cg->n_kernels);
  vkp__sb_cat(out, &cg->kernel_names);
  if (cg->kernel_names.failed) out->failed = true;
  vkp__sb_append(out,
                 "  NULL};\n"
                 "static inline double vkp__node_now(void) {\n"
                 "  struct timespec t;\n"
                 "  clock_gettime(CLOCK_MONOTONIC, &t);\n"
                 "  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;\n"
                 "}\n"
                 "#define VKP_NODE_BEGIN() vkp__node_t0 = vkp__node_now()\n"
                 "#define VKP_NODE_END(k) vkp__node_s[k] += vkp__node_now() - vkp__node_t0\n"
                 "// The kernels' names and seconds summed over `*runs` finished runs.\n"
                 "int vkp_stage_node_times(const char *const **names, const double **seconds,\n"
                 "                         uint64_t *runs);\n"
                 "int vkp_stage_node_times(const char *const **names, const double **seconds,\n"
                 "                         uint64_t *runs) {\n"
                 "  *names = vkp__node_names;\n"
                 "  *seconds = vkp__node_s;\n"
                 "  *runs = vkp__node_runs;\n"
                 "  return VKP_N_KERNELS;\n"
                 "}\n"
                 "#else\n"
                 "#define VKP_NODE_BEGIN() (void)0\n"
                 "#define VKP_NODE_END(k) (void)0\n"
                 "#endif\n\n");
  if (bounded)
    vkp__sb_append(out,
                   "// extents[i]: the run-time extent of bounded input i (read), of\n"
                   "// bounded output j at n_inputs + j (written).\n"
                   "int vkp_stage_run_bounded(const void *const *inputs, void *const *outputs,\n"
                   "                          const void *const *constants, void *workspace,\n"
                   "                          int64_t *extents);\n"
                   "int vkp_stage_run_bounded(const void *const *inputs, void *const *outputs,\n"
                   "                          const void *const *constants, void *workspace,\n"
                   "                          int64_t *extents) {\n");
  else
    vkp__sb_append(out,
                   "int vkp_stage_run(const void *const *inputs, void *const *outputs,\n"
                   "                  const void *const *constants, void *workspace);\n"
                   "int vkp_stage_run(const void *const *inputs, void *const *outputs,\n"
                   "                  const void *const *constants, void *workspace) {\n");
  vkp__sb_printf(out,
                 "  unsigned char *ws = (unsigned char *)workspace + VKP_WS_HEADER;\n"
                 "  float *scratch = (float *)(ws + %lld);\n"
                 "  // The host's thread pool for this run (none when it has more\n"
                 "  // workers than the scratch was sized for).\n"
                 "  const vkp_pool_ref_t *pool_ref = (const vkp_pool_ref_t *)workspace;\n"
                 "  vkp_pool = pool_ref->run && pool_ref->workers <= VKP_STAGE_THREADS ? "
                 "pool_ref : NULL;\n"
                 "  const float *packed = (const float *)(ws + VKP_PACKED_OFFSET);\n"
                 "  (void)inputs;\n  (void)outputs;\n  (void)constants;\n"
                 "  (void)ws;\n  (void)scratch;\n  (void)packed;\n",
                 (long long)ws);
  // Declare in value order, bases before views.
  for (int32_t pass = 0; pass < 2; ++pass)
    for (int32_t v = 0; v < nv; ++v)
      if (needed[v] && (cg->storage[v] == VKP__ST_ALIAS) == (pass == 1))
        vkp__emit_decl(cg, v, out);
  if (bounded) vkp__sb_append(out, "  (void)extents;\n");
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    int32_t v = g->inputs[i];
    if (g->values[v].bounded)
      vkp__sb_printf(out, "  const ptrdiff_t %s = (ptrdiff_t)extents[%d];  // input '%s'\n",
                     cg->ename[v], (int)i, g->values[v].name);
  }
  vkp__sb_append(out, "#ifdef VKP_NODE_TIMES\n  double vkp__node_t0 = 0;\n#endif\n");
  vkp__sb_cat(out, &calls);
  vkp__sb_cat(out, &tail);
  vkp__sb_append(out, "#ifdef VKP_NODE_TIMES\n  ++vkp__node_runs;\n#endif\n");
  vkp__sb_append(out, "  return 0;\n}\n\n");
  vkp__sb_append(out,
                 "// What a nonzero result of vkp_stage_run means (NULL: unknown).\n"
                 "const char *vkp_stage_error(int code);\n"
                 "const char *vkp_stage_error(int code) {\n"
                 "  switch (code) {\n");
  vkp__sb_cat(out, &cg->errors);
  vkp__sb_append(out, "    default: return NULL;\n  }\n}\n");
  vkp__free(calls.data);
  vkp__free(tail.data);
  vkp__free(needed);
  return st;
}

// Names appear in the generated source inside // comments (always followed
// by a quote on the same line), and graphs may come from untrusted files: a
// control character (a newline above all) could end the comment and turn
// the rest of a name into code. Such a name is refused, never escaped.
static const char *vkp__name_breaks_comment(const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; p && *p; ++p)
    if (*p < 0x20 || *p == 0x7f) return name;
  return NULL;
}

static vkp_status_t vkp__check_names(const vkp_graph_t *g) {
  const char *kind = "graph";
  bool bad = vkp__name_breaks_comment(g->name) != NULL;
  for (int32_t i = 0; !bad && i < g->n_nodes; ++i) {
    kind = "node";
    bad = vkp__name_breaks_comment(g->nodes[i].name) != NULL;
  }
  for (int32_t i = 0; !bad && i < g->n_values; ++i) {
    kind = "value";
    bad = vkp__name_breaks_comment(g->values[i].name) != NULL;
  }
  if (!bad) return NULL;
  return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "codegen/c: a %s name contains a control character "
                         "(byte < 0x20 or 0x7f), which generated source cannot "
                         "carry safely",
                         kind);
}

vkp_status_t vkp_codegen_c_emit(const vkp_graph_t *graph, int32_t threads,
                                vkp_codegen_c_t *out) {
  memset(out, 0, sizeof(*out));
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "codegen/c: graph '%s' is not validated", graph->name);
  VKP_RETURN_IF_ERROR(vkp__check_names(graph));
  vkp__cg_t cg = {.g = graph, .threads = threads};
  size_t nv = (size_t)graph->n_values + 1, nn = (size_t)graph->n_nodes + 1;
  cg.group_of = vkp__calloc(nn, sizeof(int32_t));
  cg.anchor_of = vkp__calloc(nn, sizeof(int32_t));
  cg.uses = vkp__calloc(nv, sizeof(int32_t));
  cg.io_index = vkp__calloc(nv, sizeof(int32_t));
  cg.storage = vkp__calloc(nv, sizeof(vkp__storage_t));
  cg.alias_of = vkp__calloc(nv, sizeof(int32_t));
  cg.alias_off = vkp__calloc(nv, sizeof(int64_t));
  cg.in_place = vkp__calloc(nv, sizeof(bool));
  cg.offset = vkp__calloc(nv, sizeof(int64_t));
  cg.vname = vkp__calloc(nv, sizeof(char *));
  cg.ename = vkp__calloc(nv, sizeof(char *));
  cg.nname = vkp__calloc(nn, sizeof(char *));
  cg.constants = vkp__calloc(nv, sizeof(int32_t));
  vkp_status_t st = NULL;
  if (!cg.group_of || !cg.anchor_of || !cg.uses || !cg.io_index || !cg.storage ||
      !cg.alias_of || !cg.alias_off || !cg.in_place || !cg.offset || !cg.vname ||
      !cg.ename || !cg.nname || !cg.constants) {
    st = VKP_OOM("codegen plan");
  }
  if (!st) {
    for (int32_t i = 0; i < graph->n_nodes; ++i) {
      cg.group_of[i] = -1;
      cg.anchor_of[i] = -1;
      const vkp_node_t *n = &graph->nodes[i];
      char reason[256];
      if (!vkp_codegen_c_supports(graph, n, reason, sizeof reason)) {
        st = vkp_status_make(VKP_STATUS_UNSUPPORTED, "node '%s' (%s): %s",
                             n->name, vkp_op_name(n->op), reason);
        break;
      }
      for (int32_t k = 0; k < n->n_inputs; ++k)
        if (n->inputs[k] >= 0) cg.uses[n->inputs[k]]++;
    }
  }
  if (!st) {
    vkp__plan_groups(&cg);
    st = vkp__plan_buffers(&cg);
  }
  if (!st) st = vkp__plan_branches(&cg);
  if (!st) st = vkp__emit_all(&cg);
  if (!st && cg.out.failed) st = VKP_OOM("generated C source");
  if (!st) {
    out->source = cg.out.data;
    out->source_size = cg.out.len;
    out->n_constants = cg.n_constants;
    out->constants = cg.constants;
    out->n_kernels = cg.n_kernels;
    out->intermediate_bytes = cg.ws_bytes;
    cg.out.data = NULL;
    cg.constants = NULL;
  }
  for (int32_t v = 0; cg.vname && v < graph->n_values; ++v) vkp__free(cg.vname[v]);
  for (int32_t v = 0; cg.ename && v < graph->n_values; ++v) vkp__free(cg.ename[v]);
  for (int32_t i = 0; cg.nname && i < graph->n_nodes; ++i) vkp__free(cg.nname[i]);
  vkp__free(cg.out.data);
  vkp__free(cg.prepack.data);
  vkp__free(cg.scratch_terms.data);
  vkp__free(cg.errors.data);
  vkp__free(cg.kernel_names.data);
  vkp__free(cg.group_of);
  vkp__free(cg.anchor_of);
  vkp__free(cg.uses);
  vkp__free(cg.io_index);
  vkp__free(cg.storage);
  vkp__free(cg.alias_of);
  vkp__free(cg.alias_off);
  vkp__free(cg.in_place);
  vkp__free(cg.offset);
  vkp__free(cg.vname);
  vkp__free(cg.ename);
  vkp__free(cg.excl_select);
  vkp__free(cg.excl_side);
  vkp__free(cg.nname);
  vkp__free(cg.constants);
  return st;
}

void vkp_codegen_c_deinit(vkp_codegen_c_t *code) {
  if (!code) return;
  vkp__free(code->source);
  vkp__free(code->constants);
  memset(code, 0, sizeof(*code));
}
