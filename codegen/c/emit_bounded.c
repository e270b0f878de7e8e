// SPDX-License-Identifier: Apache-2.0
// Bounded values in generated C (docs/onnx.md, "Data-dependent output
// shapes"): a bounded value keeps a buffer for its bound (workspace,
// outputs) and its elements compactly for its run-time shape, whose extent
// along the bounded axis is a `ptrdiff_t` of the stage entry
// (cg->ename). The extents of graph inputs come from the host, the ones
// non_zero and unique make come back from their kernels through a pointer,
// every other one is computed before its node runs from its inputs' by the
// op's rule (graph/bounded.h, the same rules vkp_node_bounded_shapes runs
// on ref); the extents of graph outputs go back to the host. Node functions
// take the extents of their bounded operands as parameters and compute
// their loop bounds from them: one object serves every extent.
//
// This file holds the extent computations, the size helpers the kernels'
// bounded paths share, and the kernels of the ops that make bounded values
// (non_zero, unique, non_max_suppression) or read a run-time shape
// (shape).
#include <stdio.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"
#include "codegen/c/plan.h"
#include "graph/bounded.h"

bool vkp__c_bounded(const vkp__c_kernel_t *k) {
  for (int32_t i = 0; i < k->node->n_inputs && i < VKP__C_MAX_INPUTS; ++i)
    if (k->in_ext[i]) return true;
  for (int32_t j = 0; j < k->node->n_outputs && j < VKP__C_MAX_OUTPUTS; ++j)
    if (k->out_ext[j]) return true;
  return false;
}

vkp__c_dim_t vkp__c_dims(const vkp_value_t *v, const char *ext, int32_t begin,
                         int32_t end) {
  vkp__c_dim_t r;
  bool varies = ext && v->bounded && v->bounded_axis >= begin && v->bounded_axis < end;
  long long p = 1;
  for (int32_t d = begin; d < end; ++d)
    if (!varies || d != v->bounded_axis) p *= (long long)v->shape[d];
  if (!varies) snprintf(r.s, sizeof r.s, "%lld", p);
  else if (p == 0) snprintf(r.s, sizeof r.s, "0");
  else if (p == 1) snprintf(r.s, sizeof r.s, "%s", ext);
  else snprintf(r.s, sizeof r.s, "(%lld * %s)", p, ext);
  return r;
}

void vkp__c_emit_shape(vkp__sb_t *sb, const char *name, const vkp_value_t *v,
                       const char *ext, bool strides) {
  vkp__sb_printf(sb, "  const ptrdiff_t %s[] = {", name);
  for (int32_t d = 0; d < v->rank; ++d)
    vkp__sb_printf(sb, "%s%s", d ? ", " : "",
                   strides ? vkp__c_dims(v, ext, d + 1, v->rank).s
                           : vkp__c_dims(v, ext, d, d + 1).s);
  vkp__sb_append(sb, v->rank ? "};\n" : "1};\n");
}

bool vkp__c_makes_extents(const vkp_node_t *n) {
  return n->op == VKP_OP_NON_ZERO || n->op == VKP_OP_UNIQUE ||
         n->op == VKP_OP_NON_MAX_SUPPRESSION;
}

// The run-time size of dim `d` of value `v` in the stage entry.
static vkp__c_dim_t vkp__dim_at(const vkp__cg_t *cg, int32_t v, int32_t d) {
  return vkp__c_dims(&cg->g->values[v], cg->ename[v], d, d + 1);
}

// `const ptrdiff_t <y> = <first bounded operand's extent>;` and a check that
// every other bounded operand (dim `d_of(i)` of input i) agrees.
static void vkp__emit_common(vkp__cg_t *cg, const vkp_node_t *n, const char *y,
                             int32_t a, int32_t yrank, bool same_rank, vkp__sb_t *sb) {
  const vkp_graph_t *g = cg->g;
  int32_t first = -1;
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    int32_t v = n->inputs[i];
    if (v < 0 || !g->values[v].bounded) continue;
    int32_t d = same_rank ? a : a - (yrank - g->values[v].rank);
    if (d != g->values[v].bounded_axis) continue;  // validation: does not happen
    if (first < 0) {
      first = v;
      vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", y, cg->ename[v]);
    } else if (v != first) {
      int32_t code = vkp__c_error_code(cg, n, "data-dependent operands have different "
                                              "extents at run time; they must agree");
      vkp__sb_printf(sb, "  if (%s%s%s != %s) return %d;\n", cg->guard ? cg->guard : "",
                     cg->guard ? " && " : "", cg->ename[v], y, (int)code);
    }
  }
  if (first < 0) vkp__sb_printf(sb, "  const ptrdiff_t %s = 0;\n", y);
}

void vkp__c_emit_extents(vkp__cg_t *cg, const vkp_node_t *n, vkp__sb_t *sb) {
  const vkp_graph_t *g = cg->g;
  vkp__bound_rule_t rule = vkp__bound_rule(n->op);
  int32_t first_out = -1;  // the first bounded output: the others share it
  for (int32_t j = 0; j < n->n_outputs; ++j) {
    int32_t out = n->outputs[j];
    const vkp_value_t *y = &g->values[out];
    if (!y->bounded) continue;
    const char *ey = cg->ename[out];
    int32_t a = y->bounded_axis;
    if (vkp__c_makes_extents(n)) {
      vkp__sb_printf(sb, "  ptrdiff_t %s = 0;  // made by '%s'\n", ey, n->name);
      continue;
    }
    if (first_out >= 0 && g->values[first_out].bounded_axis == a) {
      vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, cg->ename[first_out]);
      continue;
    }
    if (first_out < 0) first_out = out;
    int32_t x = n->inputs[0];
    if (n->op == VKP_OP_ROI_ALIGN) {
      // The regions' count; the batch indices' must agree.
      int32_t r = n->inputs[1], bi = n->inputs[2];
      vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, cg->ename[r]);
      if (cg->ename[bi])
        vkp__sb_printf(sb, "  if (%s%s%s != %s) return %d;\n", cg->guard ? cg->guard : "",
                       cg->guard ? " && " : "", cg->ename[bi], ey,
                       (int)vkp__c_error_code(cg, n, "the regions and the batch indices "
                                                     "differ in count at run time"));
      continue;
    }
    if (n->op == VKP_OP_BRANCH_SELECT) {
      // The chosen operand's extent (a static one's size).
      vkp__sb_printf(sb, "  const ptrdiff_t %s = %s[0] ? ", ey, cg->vname[x]);
      vkp__sb_printf(sb, "%s : ", vkp__dim_at(cg, n->inputs[1], a).s);
      vkp__sb_printf(sb, "%s;\n", vkp__dim_at(cg, n->inputs[2], a).s);
      continue;
    }
    switch (rule) {
      case VKP__BOUND_BROADCAST:
        vkp__emit_common(cg, n, ey, a, y->rank, false, sb);
        break;
      case VKP__BOUND_CONCAT:
        if (a == vkp_node_int(n, "axis")) {
          vkp__sb_printf(sb, "  const ptrdiff_t %s = ", ey);
          for (int32_t i = 0; i < n->n_inputs; ++i)
            vkp__sb_printf(sb, "%s%s", i ? " + " : "", vkp__dim_at(cg, n->inputs[i], a).s);
          vkp__sb_append(sb, ";\n");
        } else {
          vkp__emit_common(cg, n, ey, a, y->rank, true, sb);
        }
        break;
      case VKP__BOUND_VIEW: {
        // Same elements: the extent is what the output's other dims leave.
        long long others = 1;
        for (int32_t d = 0; d < y->rank; ++d)
          if (d != a) others *= (long long)y->shape[d];
        const vkp_value_t *xv = &g->values[x];
        vkp__c_dim_t numel = vkp__c_dims(xv, cg->ename[x], 0, xv->rank);
        if (others == 0) {
          vkp__sb_printf(sb, "  const ptrdiff_t %s = 0;\n", ey);
        } else {
          vkp__sb_printf(sb, "  const ptrdiff_t %s = %s / %lld;\n", ey, numel.s, others);
          if (others != 1) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "the run-time element count does not fill dims of %lld", others);
            vkp__sb_printf(sb, "  if (%s%s%s %% %lld) return %d;\n",
                           cg->guard ? cg->guard : "", cg->guard ? " && " : "", numel.s,
                           others, (int)vkp__c_error_code(cg, n, msg));
          }
        }
        break;
      }
      case VKP__BOUND_REDUCE:
      case VKP__BOUND_ARG:
        vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, cg->ename[x]);
        break;
      case VKP__BOUND_GATHER:
      case VKP__BOUND_GATHER_ELEMENTS:
      case VKP__BOUND_GATHER_ND: {
        int32_t idx = n->inputs[1];
        vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey,
                       g->values[idx].bounded ? cg->ename[idx] : cg->ename[x]);
        break;
      }
      case VKP__BOUND_TOP_K: {
        // min(K, the axis's length) along the top_k axis; the length along
        // another (bounded) one.
        vkp__c_dim_t len = vkp__dim_at(cg, x, a);
        if (a != vkp_node_int(n, "axis")) {
          vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, len.s);
          break;
        }
        int32_t k_in = n->n_inputs > 1 ? n->inputs[1] : -1;
        vkp__sb_printf(sb, "  ptrdiff_t %s;\n  {\n    const int64_t vkp_k = ", ey);
        if (k_in >= 0)
          vkp__sb_printf(sb, "(int64_t)%s[0];\n", cg->vname[k_in]);
        else
          vkp__sb_printf(sb, "%lld;\n", (long long)vkp_node_int(n, "k"));
        vkp__sb_printf(sb, "    if (%s%svkp_k < 0) return %d;\n", cg->guard ? cg->guard : "",
                       cg->guard ? " && " : "",
                       (int)vkp__c_error_code(cg, n, "k is negative at run time"));
        vkp__sb_printf(sb, "    %s = vkp_k < (int64_t)%s ? (ptrdiff_t)vkp_k : %s;\n  }\n", ey,
                       len.s, len.s);
        break;
      }
      case VKP__BOUND_SCATTER:  // data's extent, passed on
        vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, cg->ename[x]);
        break;
      case VKP__BOUND_BATCH: {
        // The rows / batch of the bounded operands (all along the one axis:
        // their extents must agree).
        int32_t first = -1;
        for (int32_t i = 0; i < n->n_inputs; ++i) {
          int32_t v = n->inputs[i];
          if (v < 0 || !cg->ename[v]) continue;
          if (first < 0) {
            first = v;
            vkp__sb_printf(sb, "  const ptrdiff_t %s = %s;\n", ey, cg->ename[v]);
            continue;
          }
          int32_t code = vkp__c_error_code(cg, n, "data-dependent operands have different "
                                                  "extents at run time; they must agree");
          vkp__sb_printf(sb, "  if (%s%s%s != %s) return %d;\n", cg->guard ? cg->guard : "",
                         cg->guard ? " && " : "", cg->ename[v], ey, (int)code);
        }
        if (first < 0) vkp__sb_printf(sb, "  const ptrdiff_t %s = 0;\n", ey);
        break;
      }
      case VKP__BOUND_SLICE: {
        // Forward from the canonical start, both ends clamped to the
        // run-time length (validation refused what counts from the end);
        // along another axis the same formula passes the extent through.
        const int64_t *starts, *ends, *steps;
        vkp_node_attr_ints(n, "starts", &starts);
        vkp_node_attr_ints(n, "ends", &ends);
        vkp_node_attr_ints(n, "steps", &steps);
        vkp__c_dim_t len = vkp__dim_at(cg, x, a);
        vkp__sb_printf(sb,
                       "  ptrdiff_t %s;\n"
                       "  {\n"
                       "    const ptrdiff_t vkp_len = %s;\n"
                       "    const ptrdiff_t vkp_s = %lld < vkp_len ? %lld : vkp_len;\n"
                       "    const ptrdiff_t vkp_t = %lld < vkp_len ? %lld : vkp_len;\n"
                       "    %s = vkp_t > vkp_s ? (vkp_t - vkp_s + %lld) / %lld : 0;\n"
                       "  }\n",
                       ey, len.s, (long long)starts[a], (long long)starts[a],
                       (long long)ends[a], (long long)ends[a], ey,
                       (long long)steps[a] - 1, (long long)steps[a]);
        break;
      }
      default:
        // supports() admits no other op with a bounded output.
        vkp__sb_printf(sb, "  const ptrdiff_t %s = 0;\n", ey);
        sb->failed = true;
        break;
    }
  }
}

// ---------------------------------------------------------------------------
// non_zero: count, then the coordinates of each non-zero element in
// row-major order, one row per input dim, rows nnz long.

// `x[i] != 0` for dtype dt (float16 and bfloat16 bits: either zero).
static void vkp__nonzero_test(vkp__sb_t *sb, vkp_dtype_t dt, const char *x,
                              const char *i) {
  if (dt == VKP_DTYPE_FLOAT16 || dt == VKP_DTYPE_BFLOAT16)
    vkp__sb_printf(sb, "(%s[%s] & 0x7fff) != 0", x, i);
  else
    vkp__sb_printf(sb, "%s[%s] != 0", x, i);
}

vkp_status_t vkp__c_emit_non_zero(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  vkp__sb_t *sb = k->body;
  vkp__c_emit_shape(sb, "vkp_xs", x, k->in_ext[0], false);
  vkp__sb_printf(sb,
                 "  const ptrdiff_t vkp_n = %s;\n"
                 "  ptrdiff_t vkp_nnz = 0;\n"
                 "  for (ptrdiff_t vkp_i = 0; vkp_i < vkp_n; ++vkp_i) vkp_nnz += ",
                 vkp__c_dims(x, k->in_ext[0], 0, x->rank).s);
  vkp__nonzero_test(sb, x->dtype, k->in[0], "vkp_i");
  vkp__sb_printf(sb,
                 ";\n"
                 "  *%s = vkp_nnz;\n"
                 "  ptrdiff_t vkp_col = 0;\n"
                 "  for (ptrdiff_t vkp_i = 0; vkp_i < vkp_n; ++vkp_i) {\n"
                 "    if (!(",
                 k->out_ext[0]);
  vkp__nonzero_test(sb, x->dtype, k->in[0], "vkp_i");
  vkp__sb_printf(sb,
                 ")) continue;\n"
                 "    ptrdiff_t vkp_rest = vkp_i;\n"
                 "    for (int vkp_d = %d; vkp_d >= 0; --vkp_d) {\n"
                 "      %s[vkp_d * vkp_nnz + vkp_col] = (int64_t)(vkp_rest %% vkp_xs[vkp_d]);\n"
                 "      vkp_rest /= vkp_xs[vkp_d];\n"
                 "    }\n"
                 "    ++vkp_col;\n"
                 "  }\n",
                 (int)(x->rank ? x->rank - 1 : 0), k->out);
  return NULL;
}

// ---------------------------------------------------------------------------
// shape: dims [start, end) of the input's run-time shape.

vkp_status_t vkp__c_emit_shape_op(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  int64_t start = vkp_node_int(k->node, "start"), end = vkp_node_int(k->node, "end");
  vkp__sb_printf(k->body, "  (void)%s;\n", k->in[0]);
  for (int64_t d = start; d < end; ++d)
    vkp__sb_printf(k->body, "  %s[%lld] = (int64_t)%s;\n", k->out, (long long)(d - start),
                   vkp__c_dims(x, k->in_ext[0], (int32_t)d, (int32_t)d + 1).s);
  return NULL;
}

// ---------------------------------------------------------------------------
// unique: the slices of x along `axis` (or its elements, flattened) sorted
// stably by a comparison written for the node's dtype (NaN last, equal to
// another NaN; -0 equals 0), grouped, and renumbered by first occurrence
// when not sorted: the reference's algorithm (graph/op_dynamic.c).

// `c = <va vs vb>` in C type t: -1, 0 or 1.
static void vkp__emit_compare(vkp__sb_t *sb, vkp_dtype_t dt) {
  if (dt == VKP_DTYPE_FLOAT16 || dt == VKP_DTYPE_BFLOAT16) {
    const char *conv = dt == VKP_DTYPE_FLOAT16 ? "vkp_half_to_float" : "vkp_bfloat_to_float";
    vkp__sb_printf(sb, "      const float fa = %s(va), fb = %s(vb);\n", conv, conv);
  } else if (vkp_dtype_is_float(dt)) {
    vkp__sb_append(sb, "      const double fa = va, fb = vb;\n");
  } else {
    vkp__sb_append(sb,
                   "      const int c = va < vb ? -1 : va > vb ? 1 : 0;\n"
                   "      if (c) return c;\n");
    return;
  }
  vkp__sb_append(sb,
                 "      const int an = fa != fa, bn = fb != fb;\n"
                 "      const int c = an || bn ? an - bn : fa < fb ? -1 : fa > fb ? 1 : 0;\n"
                 "      if (c) return c;\n");
}

vkp_status_t vkp__c_emit_unique(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0);
  const char *ext = k->in_ext[0];
  bool has_axis = vkp_node_attr(n, "axis") != NULL;
  int32_t axis = has_axis ? (int32_t)vkp_node_int(n, "axis") : 0;
  vkp__c_dim_t outer, len, inner;
  long long bound;
  if (has_axis) {
    outer = vkp__c_dims(x, ext, 0, axis);
    len = vkp__c_dims(x, ext, axis, axis + 1);
    inner = vkp__c_dims(x, ext, axis + 1, x->rank);
    bound = (long long)x->shape[axis];
  } else {
    outer = vkp__c_dims(x, NULL, 0, 0);
    len = vkp__c_dims(x, ext, 0, x->rank);
    inner = outer;
    bound = 1;
    for (int32_t d = 0; d < x->rank; ++d) bound *= (long long)x->shape[d];
  }
  const char *t = vkp__c_type(x->dtype);
  // The slice comparison, before the node function.
  vkp__sb_printf(k->pre,
                 "static int node_%s_cmp(const %s *x, ptrdiff_t outer, ptrdiff_t n, "
                 "ptrdiff_t inner,\n"
                 "                       ptrdiff_t a, ptrdiff_t b) {\n"
                 "  for (ptrdiff_t o = 0; o < outer; ++o)\n"
                 "    for (ptrdiff_t i = 0; i < inner; ++i) {\n"
                 "      const ptrdiff_t base = o * n * inner + i;\n"
                 "      const %s va = x[base + a * inner], vb = x[base + b * inner];\n",
                 k->fn, t, t);
  vkp__emit_compare(k->pre, x->dtype);
  vkp__sb_append(k->pre, "    }\n  return 0;\n}\n\n");
  // Seven arrays of `bound` ptrdiff_t in scratch (two floats each).
  k->scratch_floats = (size_t)(14 * (bound > 0 ? bound : 1));
  vkp__sb_t *sb = k->body;
  vkp__sb_printf(sb,
                 "  const ptrdiff_t vkp_outer = %s, vkp_n = %s, vkp_inner = %s;\n"
                 "  ptrdiff_t *vkp_order = (ptrdiff_t *)(void *)scratch;\n"
                 "  ptrdiff_t *vkp_tmp = vkp_order + %lld, *vkp_group = vkp_tmp + %lld;\n"
                 "  ptrdiff_t *vkp_first = vkp_group + %lld, *vkp_count = vkp_first + %lld;\n"
                 "  ptrdiff_t *vkp_renum = vkp_count + %lld, *vkp_moved = vkp_renum + %lld;\n"
                 "  for (ptrdiff_t j = 0; j < vkp_n; ++j) vkp_order[j] = j;\n"
                 "  ptrdiff_t *vkp_src = vkp_order, *vkp_dst = vkp_tmp;\n"
                 "  for (ptrdiff_t w = 1; w < vkp_n; w *= 2) {\n"
                 "    for (ptrdiff_t lo = 0; lo < vkp_n; lo += 2 * w) {\n"
                 "      const ptrdiff_t mid = lo + w < vkp_n ? lo + w : vkp_n;\n"
                 "      const ptrdiff_t hi = lo + 2 * w < vkp_n ? lo + 2 * w : vkp_n;\n"
                 "      ptrdiff_t a = lo, b = mid, at = lo;\n"
                 "      while (a < mid && b < hi)\n"
                 "        vkp_dst[at++] = node_%s_cmp(%s, vkp_outer, vkp_n, vkp_inner, "
                 "vkp_src[b], vkp_src[a]) < 0\n"
                 "                            ? vkp_src[b++] : vkp_src[a++];\n"
                 "      while (a < mid) vkp_dst[at++] = vkp_src[a++];\n"
                 "      while (b < hi) vkp_dst[at++] = vkp_src[b++];\n"
                 "    }\n"
                 "    ptrdiff_t *swap = vkp_src;\n"
                 "    vkp_src = vkp_dst;\n"
                 "    vkp_dst = swap;\n"
                 "  }\n"
                 "  if (vkp_src != vkp_order) memcpy(vkp_order, vkp_src, (size_t)vkp_n * "
                 "sizeof *vkp_order);\n"
                 "  ptrdiff_t vkp_m = 0;\n"
                 "  for (ptrdiff_t r = 0; r < vkp_n; ++r) {\n"
                 "    const ptrdiff_t j = vkp_order[r];\n"
                 "    if (r == 0 || node_%s_cmp(%s, vkp_outer, vkp_n, vkp_inner, "
                 "vkp_order[r - 1], j) != 0) {\n"
                 "      vkp_first[vkp_m] = j;\n"
                 "      vkp_count[vkp_m++] = 0;\n"
                 "    }\n"
                 "    vkp_group[j] = vkp_m - 1;\n"
                 "    ++vkp_count[vkp_m - 1];\n"
                 "  }\n",
                 outer.s, len.s, inner.s, bound, bound, bound, bound, bound, bound, k->fn,
                 k->in[0], k->fn, k->in[0]);
  if (vkp_node_int(n, "sorted") == 0)
    vkp__sb_append(sb,
                   "  // By first occurrence: vkp_renum[g] is sorted group g's position.\n"
                   "  for (ptrdiff_t g = 0; g < vkp_m; ++g) vkp_renum[g] = -1;\n"
                   "  ptrdiff_t vkp_next = 0;\n"
                   "  for (ptrdiff_t j = 0; j < vkp_n; ++j)\n"
                   "    if (vkp_renum[vkp_group[j]] < 0) vkp_renum[vkp_group[j]] = vkp_next++;\n"
                   "  for (ptrdiff_t j = 0; j < vkp_n; ++j) vkp_group[j] = "
                   "vkp_renum[vkp_group[j]];\n"
                   "  for (ptrdiff_t g = 0; g < vkp_m; ++g) vkp_moved[vkp_renum[g]] = "
                   "vkp_first[g];\n"
                   "  memcpy(vkp_first, vkp_moved, (size_t)vkp_m * sizeof *vkp_first);\n"
                   "  for (ptrdiff_t g = 0; g < vkp_m; ++g) vkp_moved[vkp_renum[g]] = "
                   "vkp_count[g];\n"
                   "  memcpy(vkp_count, vkp_moved, (size_t)vkp_m * sizeof *vkp_count);\n");
  else
    vkp__sb_append(sb, "  (void)vkp_renum;\n  (void)vkp_moved;\n");
  // Y: the distinct slices; indices, inverse, counts.
  vkp__sb_printf(sb,
                 "  *%s = vkp_m;\n"
                 "  for (ptrdiff_t g = 0; g < vkp_m; ++g)\n"
                 "    for (ptrdiff_t o = 0; o < vkp_outer; ++o)\n"
                 "      memcpy(%s + (o * vkp_m + g) * vkp_inner,\n"
                 "             %s + (o * vkp_n + vkp_first[g]) * vkp_inner,\n"
                 "             (size_t)vkp_inner * sizeof(%s));\n",
                 k->out_ext[0], k->outs[0], k->in[0], t);
  for (int32_t j = 1; j < n->n_outputs && j < 4; ++j) {
    bool inverse = j == 2;
    if (k->out_ext[j])
      vkp__sb_printf(sb, "  *%s = %s;\n", k->out_ext[j], inverse ? "vkp_n" : "vkp_m");
    vkp__sb_printf(sb, "  for (ptrdiff_t g = 0; g < %s; ++g) %s[g] = (int64_t)%s[g];\n",
                   inverse ? "vkp_n" : "vkp_m", k->outs[j],
                   j == 1 ? "vkp_first" : inverse ? "vkp_group" : "vkp_count");
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// non_max_suppression: the reference's algorithm (graph/op_dynamic.c) per
// batch and class: the candidates above the score threshold sorted by
// descending score (a stable merge sort over ascending box indices, so ties
// keep the lower index first), then greedy suppression by IoU, in double.
// The kept rows' count is the output's extent.

vkp_status_t vkp__c_emit_non_max_suppression(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *boxes = vkp__c_in(k, 0), *scores = vkp__c_in(k, 1);
  const vkp_value_t *y = vkp__c_out(k);
  long long bound = (long long)boxes->shape[1];
  if ((long long)scores->shape[2] > bound) bound = (long long)scores->shape[2];
  long long cap = bound > 0 ? bound : 1;
  // Per box: 5 doubles of geometry, a score, and three index arrays.
  k->scratch_floats = (size_t)(16 * cap);
  vkp__sb_printf(k->pre,
                 "// IoU of boxes a and b (y1, x1, y2, x2, area) above t; boxes of no\n"
                 "// area suppress nothing.\n"
                 "static int node_%s_supp(const double *g, ptrdiff_t a, ptrdiff_t b, "
                 "double t) {\n"
                 "  const double *p = g + 5 * a, *q = g + 5 * b;\n"
                 "  if (p[4] <= 0 || q[4] <= 0) return 0;\n"
                 "  const double h = fmin(p[2], q[2]) - fmax(p[0], q[0]);\n"
                 "  const double w = fmin(p[3], q[3]) - fmax(p[1], q[1]);\n"
                 "  const double inter = (h > 0 ? h : 0) * (w > 0 ? w : 0);\n"
                 "  const double uni = p[4] + q[4] - inter;\n"
                 "  if (inter <= 0 || uni <= 0) return 0;\n"
                 "  return inter / uni > t;\n"
                 "}\n\n",
                 k->fn);
  vkp__sb_t *sb = k->body;
  vkp__c_dim_t count = vkp__c_dims(boxes, k->in_ext[0], 1, 2);
  vkp__c_dim_t scount = vkp__c_dims(scores, k->in_ext[1], 2, 3);
  vkp__sb_printf(sb,
                 "  const ptrdiff_t vkp_cnt = %s, vkp_cls = %lld, vkp_bound = %lld;\n",
                 count.s, (long long)scores->shape[1], (long long)y->shape[0]);
  if (k->in_ext[0] || k->in_ext[1]) {
    k->can_fail = true;
    snprintf(k->fail_message, sizeof k->fail_message,
             "the boxes and the scores hold different numbers of boxes at run time");
    vkp__sb_printf(sb, "  if (%s != vkp_cnt) return 1;\n", scount.s);
  }
  const char *mo = n->n_inputs > 2 ? k->in[2] : NULL;
  const char *iou = n->n_inputs > 3 ? k->in[3] : NULL;
  const char *ms = n->n_inputs > 4 ? k->in[4] : NULL;
  vkp__sb_printf(sb, "  const int64_t vkp_max = %s%s;\n", mo ? mo : "0", mo ? "[0]" : "");
  vkp__sb_printf(sb, "  const double vkp_iou = %s%s;\n", iou ? iou : "0.0", iou ? "[0]" : "");
  vkp__sb_printf(sb, "  const double vkp_min = %s%s;\n", ms ? ms : "0.0", ms ? "[0]" : "");
  vkp__sb_printf(sb,
                 "  double *vkp_geo = (double *)(void *)scratch, *vkp_sc = vkp_geo + %lld;\n"
                 "  ptrdiff_t *vkp_ord = (ptrdiff_t *)(void *)(vkp_sc + %lld);\n"
                 "  ptrdiff_t *vkp_tmp = vkp_ord + %lld, *vkp_kept = vkp_tmp + %lld;\n"
                 "  ptrdiff_t vkp_rows = 0;\n"
                 "  for (ptrdiff_t b = 0; b < %lld && vkp_max > 0; ++b) {\n"
                 "    for (ptrdiff_t i = 0; i < vkp_cnt; ++i) {\n"
                 "      const float *c = %s + (b * vkp_cnt + i) * 4;\n"
                 "      double *g = vkp_geo + 5 * i;\n",
                 5 * cap, cap, cap, cap, (long long)boxes->shape[0], k->in[0]);
  if (vkp_node_int(n, "center_point_box"))
    vkp__sb_append(sb,
                   "      g[0] = (double)c[1] - (double)c[3] / 2;\n"
                   "      g[1] = (double)c[0] - (double)c[2] / 2;\n"
                   "      g[2] = (double)c[1] + (double)c[3] / 2;\n"
                   "      g[3] = (double)c[0] + (double)c[2] / 2;\n");
  else
    vkp__sb_append(sb,
                   "      g[0] = fmin(c[0], c[2]);\n"
                   "      g[1] = fmin(c[1], c[3]);\n"
                   "      g[2] = fmax(c[0], c[2]);\n"
                   "      g[3] = fmax(c[1], c[3]);\n");
  vkp__sb_printf(sb,
                 "      g[4] = (g[2] - g[0]) * (g[3] - g[1]);\n"
                 "    }\n"
                 "    for (ptrdiff_t cl = 0; cl < vkp_cls; ++cl) {\n"
                 "      const float *s = %s + (b * vkp_cls + cl) * vkp_cnt;\n"
                 "      ptrdiff_t m = 0;\n"
                 "      for (ptrdiff_t i = 0; i < vkp_cnt; ++i) {\n"
                 "        vkp_sc[i] = s[i];\n"
                 "        if (%s || vkp_sc[i] > vkp_min) vkp_ord[m++] = i;\n"
                 "      }\n"
                 "      ptrdiff_t *src = vkp_ord, *dst = vkp_tmp;\n"
                 "      for (ptrdiff_t w = 1; w < m; w *= 2) {\n"
                 "        for (ptrdiff_t lo = 0; lo < m; lo += 2 * w) {\n"
                 "          const ptrdiff_t mid = lo + w < m ? lo + w : m;\n"
                 "          const ptrdiff_t hi = lo + 2 * w < m ? lo + 2 * w : m;\n"
                 "          ptrdiff_t a = lo, r = mid, at = lo;\n"
                 "          while (a < mid && r < hi)\n"
                 "            dst[at++] = vkp_sc[src[r]] > vkp_sc[src[a]] ? src[r++] : src[a++];\n"
                 "          while (a < mid) dst[at++] = src[a++];\n"
                 "          while (r < hi) dst[at++] = src[r++];\n"
                 "        }\n"
                 "        ptrdiff_t *swap = src;\n"
                 "        src = dst;\n"
                 "        dst = swap;\n"
                 "      }\n"
                 "      ptrdiff_t kept = 0;\n"
                 "      for (ptrdiff_t j = 0; j < m && kept < vkp_max; ++j) {\n"
                 "        const ptrdiff_t box = src[j];\n"
                 "        int keep = 1;\n"
                 "        for (ptrdiff_t q = 0; q < kept && keep; ++q)\n"
                 "          keep = !node_%s_supp(vkp_geo, vkp_kept[q], box, vkp_iou);\n"
                 "        if (!keep) continue;\n"
                 "        vkp_kept[kept++] = box;\n"
                 "        if (vkp_rows >= vkp_bound) break;  // the bound counts every row\n"
                 "        %s[vkp_rows * 3] = (int64_t)b;\n"
                 "        %s[vkp_rows * 3 + 1] = (int64_t)cl;\n"
                 "        %s[vkp_rows * 3 + 2] = (int64_t)box;\n"
                 "        ++vkp_rows;\n"
                 "      }\n"
                 "    }\n"
                 "  }\n"
                 "  *%s = vkp_rows;\n",
                 k->in[1], ms ? "0" : "1", k->fn, k->out, k->out, k->out, k->out_ext[0]);
  return NULL;
}

// ---------------------------------------------------------------------------
// branch_select: the chosen operand's elements (its extent is the output's:
// vkp__c_emit_extents). The nodes only the other side reads do not run
// (emit.c, vkp__plan_branches).

vkp_status_t vkp__c_emit_branch_select(vkp__c_kernel_t *k) {
  const vkp_value_t *a = vkp__c_in(k, 1), *b = vkp__c_in(k, 2);
  size_t esz = vkp_dtype_size(a->dtype);
  vkp__sb_printf(k->body, "  if (%s[0])\n    memcpy(%s, %s, (size_t)%s * %zu);\n", k->in[0],
                 k->out, k->in[1], vkp__c_dims(a, k->in_ext[1], 0, a->rank).s, esz);
  vkp__sb_printf(k->body, "  else\n    memcpy(%s, %s, (size_t)%s * %zu);\n", k->out, k->in[2],
                 vkp__c_dims(b, k->in_ext[2], 0, b->rank).s, esz);
  return NULL;
}
