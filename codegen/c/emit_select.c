// SPDX-License-Identifier: Apache-2.0
// C kernels of the selection family: arg_max, arg_min, top_k and cum_sum on
// float32, float64 and every integer dtype, with the reference's semantics
// (graph/op_select.c): NaN counts as larger than every number (arg_max and
// arg_min both pick it), ties go to the lower index unless
// select_last_index, top_k sorts stably, float cum_sum accumulates in
// double and integer cum_sum wraps like fixed-width integers. Each kernel
// is a loop nest over the [outer, n, inner] view of the input around the
// node's axis, written for the one dtype the node has.
#include <stdio.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

// x viewed as [outer, n, inner] around the node's "axis".
static void vkp__select_view(const vkp__c_kernel_t *k, long long *outer, long long *n,
                             long long *inner) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  int64_t axis = vkp_node_int(k->node, "axis");
  *outer = *inner = 1;
  for (int32_t d = 0; d < x->rank; ++d) {
    if (d < axis) *outer *= x->shape[d];
    if (d > axis) *inner *= x->shape[d];
  }
  *n = x->shape[axis];
}

// The same view as C expressions: literals, or run-time sizes where x is
// bounded (emit_bounded.c); `span` is n * inner.
typedef struct vkp__select_dims_t {
  vkp__c_dim_t outer, n, inner, span;
} vkp__select_dims_t;

static vkp__select_dims_t vkp__select_dims(const vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  const char *ext = k->in_ext[0];
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  return (vkp__select_dims_t){.outer = vkp__c_dims(x, ext, 0, axis),
                              .n = vkp__c_dims(x, ext, axis, axis + 1),
                              .inner = vkp__c_dims(x, ext, axis + 1, x->rank),
                              .span = vkp__c_dims(x, ext, axis, x->rank)};
}

vkp_status_t vkp__c_emit_arg(vkp__c_kernel_t *k) {
  vkp__select_dims_t v = vkp__select_dims(k);
  const vkp_value_t *x = vkp__c_in(k, 0);
  bool is_float = vkp_dtype_is_float(x->dtype);
  bool max = k->node->op == VKP_OP_ARG_MAX;
  bool last = vkp_node_int(k->node, "select_last_index") != 0;
  // When a (at k) replaces the pick b: a NaN is picked first (or last) by
  // both ops, and nothing replaces a NaN picked first.
  const char *cond;
  if (is_float)
    cond = last ? (max ? "a != a || (b == b && a >= b)" : "a != a || (b == b && a <= b)")
                : (max ? "b == b && (a != a || a > b)" : "b == b && (a != a || a < b)");
  else
    cond = last ? (max ? "a >= b" : "a <= b") : (max ? "a > b" : "a < b");
  const char *t = vkp__c_type(x->dtype);
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t o = 0; o < %s; ++o)\n"
                 "    for (ptrdiff_t i = 0; i < %s; ++i) {\n"
                 "      const %s *xs = %s + o * %s + i;\n"
                 "      ptrdiff_t best = 0;\n"
                 "      for (ptrdiff_t j = 1; j < %s; ++j) {\n"
                 "        %s a = xs[j * %s], b = xs[best * %s];\n"
                 "        if (%s) best = j;\n"
                 "      }\n"
                 "      %s[o * %s + i] = (int64_t)best;\n"
                 "    }\n",
                 v.outer.s, v.inner.s, t, k->in[0], v.span.s, v.n.s, t, v.inner.s, v.inner.s,
                 cond, k->out, v.inner.s);
  return NULL;
}

// Per row: where K is small next to the row (K * 16 <= n), one pass that
// keeps the K best indices in order, each new element inserted after the
// ones it does not beat (so ties keep the lower index first) and most
// rejected by one comparison with the K-th best; otherwise a stable merge
// sort of the row's indices. Scratch: two buffers of n ptrdiff_t. Then the
// first K gathered into both outputs. (DGCNN's k-nearest-neighbour TopK,
// 8 of 512 per row over 512 rows, took 5 ms a call as a sort.)
//
// Bounded (a bounded x, or K at run time: input 1): the row length, the
// outer and inner sizes and K are the run-time ones (K's extent is the
// outputs', computed before the call as min(K, length)).
vkp_status_t vkp__c_emit_top_k(vkp__c_kernel_t *k) {
  long long outer, n, inner, kk = (long long)vkp_node_int(k->node, "k");
  vkp__select_view(k, &outer, &n, &inner);
  bool bounded = vkp__c_bounded(k);
  if (!bounded && (n == 0 || kk == 0 || outer * inner == 0)) return NULL;
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  vkp__select_dims_t v = vkp__select_dims(k);
  // K, and the output's span from the axis on (K * inner).
  vkp__c_dim_t kd = vkp__c_dims(y, k->out_ext[0], axis, axis + 1);
  vkp__c_dim_t kspan = vkp__c_dims(y, k->out_ext[0], axis, y->rank);
  bool largest = vkp_node_int(k->node, "largest") != 0;
  // Whether value va goes before value vb: NaN is the largest value.
  const char *before;
  if (vkp_dtype_is_float(x->dtype))
    before = largest ? "va > vb || (va != va && vb == vb)"
                     : "va < vb || (vb != vb && va == va)";
  else
    before = largest ? "va > vb" : "va < vb";
  k->scratch_floats = (size_t)(4 * n);  // 2 n ptrdiff_t
  if (!k->scratch_floats) k->scratch_floats = 4;  // a bounded x of bound 0
  const char *t = vkp__c_type(x->dtype);
  vkp__sb_printf(
      k->body,
      "  ptrdiff_t *ord = (ptrdiff_t *)(void *)scratch, *tmp = ord + %lld;\n"
      "  for (ptrdiff_t o = 0; o < %s; ++o)\n"
      "    for (ptrdiff_t i = 0; i < %s; ++i) {\n"
      "      const %s *xs = %s + o * %s + i;\n"
      "      ptrdiff_t *src = ord, *dst = tmp;\n"
      "      if (%s > 0 && %s * 16 <= %s) {\n"
      "        ptrdiff_t cnt = 0, kk = %s;\n"
      "        for (ptrdiff_t j = 0; j < %s; ++j) {\n"
      "          %s va = xs[j * %s], vb = va;\n"
      "          if (cnt == kk) {\n"
      "            vb = xs[src[kk - 1] * %s];\n"
      "            if (!(%s)) continue;\n"
      "          }\n"
      "          ptrdiff_t p = cnt < kk ? cnt++ : kk - 1;\n"
      "          for (; p > 0; --p) {\n"
      "            vb = xs[src[p - 1] * %s];\n"
      "            if (!(%s)) break;\n"
      "            src[p] = src[p - 1];\n"
      "          }\n"
      "          src[p] = j;\n"
      "        }\n"
      "      } else {\n"
      "      for (ptrdiff_t j = 0; j < %s; ++j) src[j] = j;\n"
      "      for (ptrdiff_t w = 1; w < %s; w *= 2) {\n"
      "        for (ptrdiff_t lo = 0; lo < %s; lo += 2 * w) {\n"
      "          ptrdiff_t mid = lo + w < %s ? lo + w : %s;\n"
      "          ptrdiff_t hi = lo + 2 * w < %s ? lo + 2 * w : %s;\n"
      "          ptrdiff_t a = lo, b = mid, at = lo;\n"
      "          while (a < mid && b < hi) {\n"
      "            %s va = xs[src[b] * %s], vb = xs[src[a] * %s];\n"
      "            dst[at++] = (%s) ? src[b++] : src[a++];\n"
      "          }\n"
      "          while (a < mid) dst[at++] = src[a++];\n"
      "          while (b < hi) dst[at++] = src[b++];\n"
      "        }\n"
      "        ptrdiff_t *swap = src;\n"
      "        src = dst;\n"
      "        dst = swap;\n"
      "      }\n"
      "      }\n"
      "      for (ptrdiff_t j = 0; j < %s; ++j) {\n"
      "        ptrdiff_t at = o * %s + j * %s + i;\n"
      "        %s[at] = xs[src[j] * %s];\n"
      "        %s[at] = (int64_t)src[j];\n"
      "      }\n"
      "    }\n",
      n, v.outer.s, v.inner.s, t, k->in[0], v.span.s, kd.s, kd.s, v.n.s, kd.s, v.n.s, t, v.inner.s,
      v.inner.s, before, v.inner.s, before, v.n.s, v.n.s, v.n.s, v.n.s, v.n.s,
      v.n.s, v.n.s, t, v.inner.s, v.inner.s, before, kd.s, kspan.s, v.inner.s, k->outs[0],
      v.inner.s, k->outs[1]);
  return NULL;
}

vkp_status_t vkp__c_emit_cum_sum(vkp__c_kernel_t *k) {
  long long outer, n, inner;
  vkp__select_view(k, &outer, &n, &inner);
  const vkp_value_t *x = vkp__c_in(k, 0);
  bool is_float = vkp_dtype_is_float(x->dtype);
  bool exclusive = vkp_node_int(k->node, "exclusive") != 0;
  bool reverse = vkp_node_int(k->node, "reverse") != 0;
  const char *t = vkp__c_type(x->dtype);
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t o = 0; o < %lld; ++o)\n"
                 "    for (ptrdiff_t i = 0; i < %lld; ++i) {\n"
                 "      %s acc = 0;\n"
                 "      for (ptrdiff_t j = 0; j < %lld; ++j) {\n"
                 "        ptrdiff_t at = o * %lld + ",
                 outer, inner, is_float ? "double" : "uint64_t", n, n * inner);
  if (reverse) vkp__sb_printf(k->body, "(%lld - j)", n - 1);
  else vkp__sb_append(k->body, "j");
  vkp__sb_printf(k->body, " * %lld + i;\n        %s v = %s[at];\n", inner, t, k->in[0]);
  const char *add = is_float ? "        acc += (double)v;\n" : "        acc += (uint64_t)v;\n";
  if (!exclusive) vkp__sb_append(k->body, add);
  vkp__sb_printf(k->body, "        %s[at] = (%s)acc;\n", k->out, t);
  if (exclusive) vkp__sb_append(k->body, add);
  vkp__sb_append(k->body, "      }\n    }\n");
  return NULL;
}
