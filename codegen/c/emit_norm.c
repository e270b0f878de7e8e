// SPDX-License-Identifier: Apache-2.0
// C kernels of the reduction and normalisation family: every reduce_* op
// (float32, and the integer dtypes for the exact ones: sum, prod, max, min,
// l1, sum_square), log_softmax, hardmax, instance_norm, group_norm,
// lp_norm, mean_variance_norm and lrn (float32). The heavy loops are in
// prelude_norm.c; reductions and mean_variance_norm stream the input once
// per pass in memory order, accumulating into the output (or scratch).
#include <stdio.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

static int64_t vkp__numel(const vkp_value_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->rank; ++d) n *= v->shape[d];
  return n;
}

static void vkp__literal(vkp__sb_t *sb, double f) {
  char lit[64];
  vkp_codegen_c_literal(f, lit, sizeof lit);
  vkp__sb_append(sb, lit);
}

// Marks the axes of a node's "axes" attribute (sorted, non-negative) and
// returns how many elements each output element gathers.
static int64_t vkp__reduced(const vkp_node_t *n, const vkp_value_t *x,
                            bool *reduced) {
  const int64_t *axes;
  int32_t na = vkp_node_attr_ints(n, "axes", &axes);
  int64_t count = 1;
  for (int32_t d = 0; d < x->rank; ++d) reduced[d] = false;
  for (int32_t i = 0; i < na; ++i) {
    reduced[axes[i]] = true;
    count *= x->shape[axes[i]];
  }
  return count;
}

// The index of the kept element that flat input index `var` belongs to:
// sum over kept dims of (var / inner % dim) * stride, "0" when there is
// none.
static void vkp__emit_kept_index(vkp__sb_t *sb, const char *var,
                                 const vkp_value_t *x, const bool *reduced) {
  int64_t inner = 1, stride = 1;
  bool any = false;
  for (int32_t d = x->rank - 1; d >= 0; --d) {
    if (!reduced[d] && x->shape[d] != 1) {
      vkp__sb_printf(sb, "%s(%s / %lld %% %lld) * %lld", any ? " + " : "", var,
                     (long long)inner, (long long)x->shape[d], (long long)stride);
      any = true;
    }
    if (!reduced[d]) stride *= x->shape[d];
    inner *= x->shape[d];
  }
  if (!any) vkp__sb_append(sb, "0");
}

// Slices the reduction can be split into: the kept dims before the first
// reduced one (dims of extent 1 do not count) index disjoint, contiguous
// runs of the input that feed disjoint, contiguous runs of the outputs.
static int64_t vkp__slices(const vkp_value_t *x, const bool *reduced) {
  int64_t slices = 1;
  for (int32_t d = 0; d < x->rank; ++d) {
    if (x->shape[d] == 1) continue;
    if (reduced[d]) break;
    slices *= x->shape[d];
  }
  return slices;
}

// The smallest / largest value of an integer C type, as <stdint.h> names it.
static void vkp__int_limit(vkp__sb_t *sb, vkp_dtype_t dt, bool largest) {
  const char *t = vkp__c_type(dt);  // "int8_t", "uint64_t"...
  bool is_unsigned = t[0] == 'u';
  if (is_unsigned && !largest) {
    vkp__sb_append(sb, "0");
    return;
  }
  char name[16];
  size_t n = strlen(t) - 2;  // without "_t"
  for (size_t i = 0; i < n && i + 1 < sizeof name; ++i)
    name[i] = (char)(t[i] >= 'a' && t[i] <= 'z' ? t[i] - 'a' + 'A' : t[i]);
  name[n < sizeof name ? n : sizeof name - 1] = '\0';
  vkp__sb_printf(sb, "%s_%s", name, largest ? "MAX" : "MIN");
}

// Writes `y[o] = <step>` for one input element `v` into the accumulator
// `a` (y[o]) of reduce op `op` on C type `t`.
static void vkp__emit_reduce_step(vkp__sb_t *sb, vkp_op_t op, bool is_float,
                                  const char *t) {
  if (is_float) {
    switch (op) {
      case VKP_OP_REDUCE_MAX: case VKP_OP_REDUCE_LOG_SUM_EXP:
        vkp__sb_append(sb, "vkp_max_float(a, v)");
        return;
      case VKP_OP_REDUCE_MIN: vkp__sb_append(sb, "vkp_min_float(a, v)"); return;
      case VKP_OP_REDUCE_PROD: vkp__sb_append(sb, "a * v"); return;
      case VKP_OP_REDUCE_L1: vkp__sb_append(sb, "a + fabsf(v)"); return;
      case VKP_OP_REDUCE_L2: case VKP_OP_REDUCE_SUM_SQUARE:
        vkp__sb_append(sb, "a + v * v");
        return;
      default: vkp__sb_append(sb, "a + v"); return;
    }
  }
  // Integers: exact, wrapping through uint64 like fixed-width integers.
  switch (op) {
    case VKP_OP_REDUCE_MAX: vkp__sb_append(sb, "v > a ? v : a"); return;
    case VKP_OP_REDUCE_MIN: vkp__sb_append(sb, "v < a ? v : a"); return;
    case VKP_OP_REDUCE_PROD: vkp__sb_printf(sb, "(%s)((uint64_t)a * (uint64_t)v)", t); return;
    case VKP_OP_REDUCE_L1: vkp__sb_printf(sb, "(%s)((uint64_t)a + vkp_uabs_%s(v))", t, t); return;
    case VKP_OP_REDUCE_SUM_SQUARE:
      vkp__sb_printf(sb, "(%s)((uint64_t)a + (uint64_t)v * (uint64_t)v)", t);
      return;
    default: vkp__sb_printf(sb, "(%s)((uint64_t)a + (uint64_t)v)", t); return;
  }
}

// The identity a reduction of `op` starts y at.
static void vkp__emit_reduce_init(vkp__sb_t *sb, vkp_op_t op, vkp_dtype_t dt) {
  bool is_float = vkp_dtype_is_float(dt);
  switch (op) {
    case VKP_OP_REDUCE_PROD: vkp__sb_append(sb, is_float ? "1.0f" : "1"); break;
    case VKP_OP_REDUCE_MAX: case VKP_OP_REDUCE_LOG_SUM_EXP:
      if (is_float) vkp__sb_append(sb, "-INFINITY");
      else vkp__int_limit(sb, dt, false);
      break;
    case VKP_OP_REDUCE_MIN:
      if (is_float) vkp__sb_append(sb, "INFINITY");
      else vkp__int_limit(sb, dt, true);
      break;
    default: vkp__sb_append(sb, "0"); break;
  }
}

// A reduction with a bounded input (docs/onnx.md, "Data-dependent output
// shapes"): the same steps over run-time sizes, in one thread. Input
// element i folds into the output element at its kept coordinates times
// the output's run-time strides (0 for the reduced dims).
static vkp_status_t vkp__emit_reduce_bounded(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  const char *xe = k->in_ext[0];
  vkp_op_t op = n->op;
  bool reduced[VKP_MAX_RANK];
  vkp__reduced(n, x, reduced);
  bool is_float = vkp_dtype_is_float(x->dtype);
  const char *t = vkp__c_type(x->dtype);
  vkp__sb_t *sb = k->body;
  // Element count of the reduced dims, and the kept dims' strides.
  long long count = 1;
  bool count_varies = false;
  for (int32_t d = 0; d < x->rank; ++d) {
    if (!reduced[d]) continue;
    if (xe && x->bounded && d == x->bounded_axis) count_varies = true;
    else count *= (long long)x->shape[d];
  }
  vkp__c_emit_shape(sb, "vkp_xs", x, xe, false);
  vkp__sb_append(sb, "  const ptrdiff_t vkp_os[] = {");
  for (int32_t d = 0; d < x->rank; ++d) {
    long long p = 1;
    bool varies = false;
    for (int32_t e = d + 1; e < x->rank; ++e) {
      if (reduced[e]) continue;
      if (xe && x->bounded && e == x->bounded_axis) varies = true;
      else p *= (long long)x->shape[e];
    }
    if (reduced[d]) vkp__sb_printf(sb, "%s0", d ? ", " : "");
    else if (varies) vkp__sb_printf(sb, "%s%lld * %s", d ? ", " : "", p, xe);
    else vkp__sb_printf(sb, "%s%lld", d ? ", " : "", p);
  }
  vkp__sb_printf(sb, "%s};\n", x->rank ? "" : "0");
  vkp__sb_printf(sb, "  const ptrdiff_t vkp_nin = %s, vkp_nout = %s;\n",
                 vkp__c_dims(x, xe, 0, x->rank).s, vkp__c_dims(y, k->out_ext[0], 0, y->rank).s);
  vkp__sb_printf(sb, "  for (ptrdiff_t o = 0; o < vkp_nout; ++o) %s[o] = ", k->out);
  vkp__emit_reduce_init(sb, op, x->dtype);
  vkp__sb_printf(sb,
                 ";\n  for (ptrdiff_t vkp_i = 0; vkp_i < vkp_nin; ++vkp_i) {\n"
                 "    %s *at = &%s[vkp_elements_offset(vkp_i, %d, vkp_xs, vkp_os, -1, 0)];\n"
                 "    %s a = *at, v = %s[vkp_i];\n    *at = ",
                 t, k->out, (int)x->rank, t, k->in[0]);
  vkp__emit_reduce_step(sb, op, is_float, t);
  vkp__sb_append(sb, ";\n  }\n");
  switch (op) {
    case VKP_OP_REDUCE_MEAN:  // 0 / 0 is NaN for an empty mean
      vkp__sb_printf(sb, "  for (ptrdiff_t o = 0; o < vkp_nout; ++o) %s[o] /= (float)(%lld",
                     k->out, count);
      if (count_varies) vkp__sb_printf(sb, " * %s", xe);
      vkp__sb_append(sb, ");\n");
      break;
    case VKP_OP_REDUCE_L2:
      vkp__sb_printf(sb, "  for (ptrdiff_t o = 0; o < vkp_nout; ++o) %s[o] = sqrtf(%s[o]);\n",
                     k->out, k->out);
      break;
    case VKP_OP_REDUCE_LOG_SUM:
      vkp__sb_printf(sb, "  for (ptrdiff_t o = 0; o < vkp_nout; ++o) %s[o] = logf(%s[o]);\n",
                     k->out, k->out);
      break;
    case VKP_OP_REDUCE_LOG_SUM_EXP: {
      int64_t bound = vkp__numel(y);
      k->scratch_floats = (size_t)(bound > 0 ? bound : 1);
      vkp__sb_printf(sb,
                     "  for (ptrdiff_t o = 0; o < vkp_nout; ++o) scratch[o] = 0.0f;\n"
                     "  for (ptrdiff_t vkp_i = 0; vkp_i < vkp_nin; ++vkp_i) {\n"
                     "    const ptrdiff_t o = vkp_elements_offset(vkp_i, %d, vkp_xs, vkp_os, "
                     "-1, 0);\n"
                     "    scratch[o] += expf(%s[vkp_i] - %s[o]);\n  }\n"
                     "  for (ptrdiff_t o = 0; o < vkp_nout; ++o)\n"
                     "    if (isfinite(%s[o])) %s[o] += logf(scratch[o]);\n",
                     (int)x->rank, k->in[0], k->out, k->out, k->out);
      break;
    }
    default: break;
  }
  return NULL;
}

// Every reduce_* op: y starts at the operation's identity, each input
// element (in memory order) is folded into its output element, a last pass
// finishes (mean, l2, log_sum); log_sum_exp makes a second pass summing
// exp(x - max) into scratch. The slices (vkp__slices) are split across the
// pool, each folded in the same order whatever task it falls in.
vkp_status_t vkp__c_emit_reduce(vkp__c_kernel_t *k) {
  if (vkp__c_bounded(k)) return vkp__emit_reduce_bounded(k);
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  vkp_op_t op = n->op;
  bool reduced[VKP_MAX_RANK];
  long long count = (long long)vkp__reduced(n, x, reduced);
  long long n_out = (long long)vkp__numel(y), n_in = (long long)vkp__numel(x);
  long long slices = (long long)vkp__slices(x, reduced);
  if (n_out == 0 || n_in == 0) slices = 1;  // one task fills y (or nothing)
  long long out_per = n_out / slices, in_per = n_in / slices;
  bool is_float = vkp_dtype_is_float(x->dtype);
  const char *t = vkp__c_type(x->dtype);
  vkp__sb_t loop = {0}, *sb = &loop;
  // Output elements [l_o0, l_o1) and input elements [i0, i1) of slices [lo, hi).
  vkp__sb_printf(sb,
                 "  const ptrdiff_t l_o0 = lo * %lld, l_o1 = hi * %lld, i0 = lo * %lld, "
                 "i1 = hi * %lld;\n  (void)i0;\n  (void)i1;\n",
                 out_per, out_per, in_per, in_per);
  vkp__sb_printf(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) %s[o] = ", k->out);
  switch (op) {
    case VKP_OP_REDUCE_PROD: vkp__sb_append(sb, is_float ? "1.0f" : "1"); break;
    case VKP_OP_REDUCE_MAX: case VKP_OP_REDUCE_LOG_SUM_EXP:
      if (is_float) vkp__sb_append(sb, "-INFINITY");
      else vkp__int_limit(sb, x->dtype, false);
      break;
    case VKP_OP_REDUCE_MIN:
      if (is_float) vkp__sb_append(sb, "INFINITY");
      else vkp__int_limit(sb, x->dtype, true);
      break;
    default: vkp__sb_append(sb, "0"); break;
  }
  vkp__sb_printf(sb, ";\n  for (ptrdiff_t i = i0; i < i1; ++i) {\n    %s *at = &%s[", t,
                 k->out);
  vkp__emit_kept_index(sb, "i", x, reduced);
  vkp__sb_printf(sb, "];\n    %s a = *at, v = %s[i];\n    *at = ", t, k->in[0]);
  vkp__emit_reduce_step(sb, op, is_float, t);
  vkp__sb_append(sb, ";\n  }\n");
  switch (op) {
    case VKP_OP_REDUCE_MEAN:  // 0 / 0 is NaN for an empty mean
      vkp__sb_printf(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) %s[o] /= %lld.0f;\n", k->out,
                     count);
      break;
    case VKP_OP_REDUCE_L2:
      vkp__sb_printf(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) %s[o] = sqrtf(%s[o]);\n",
                     k->out, k->out);
      break;
    case VKP_OP_REDUCE_LOG_SUM:
      vkp__sb_printf(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) %s[o] = logf(%s[o]);\n",
                     k->out, k->out);
      break;
    case VKP_OP_REDUCE_LOG_SUM_EXP:
      k->scratch_floats = (size_t)(n_out > 0 ? n_out : 1);
      vkp__sb_append(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) scratch[o] = 0.0f;\n");
      vkp__sb_append(sb, "  for (ptrdiff_t i = i0; i < i1; ++i) {\n    ptrdiff_t o = ");
      vkp__emit_kept_index(sb, "i", x, reduced);
      vkp__sb_printf(sb, ";\n    scratch[o] += expf(%s[i] - %s[o]);\n  }\n", k->in[0], k->out);
      // An infinite or NaN maximum is the result itself.
      vkp__sb_printf(sb,
                     "  for (ptrdiff_t o = l_o0; o < l_o1; ++o)\n"
                     "    if (isfinite(%s[o])) %s[o] += logf(scratch[o]);\n",
                     k->out, k->out);
      break;
    default: break;
  }
  if (loop.failed || !loop.data) k->body->failed = true;
  else
    vkp__c_emit_split(k, k->scratch_floats > 0, slices,
                      in_per * (op == VKP_OP_REDUCE_LOG_SUM_EXP ? 10 : 1), loop.data);
  vkp__sb_deinit(&loop);
  return NULL;
}

// x viewed as [outer, n, inner] around the node's "axis".
static void vkp__axis_view(const vkp__c_kernel_t *k, long long *outer, long long *n,
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

vkp_status_t vkp__c_emit_softmax_family(vkp__c_kernel_t *k) {
  // Run-time sizes: a bounded input varies outside the axis.
  const vkp_value_t *x = vkp__c_in(k, 0);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  vkp__sb_printf(k->body, "  %s(%s, %s, %s, ",
                 k->node->op == VKP_OP_HARDMAX ? "vkp_hardmax" : "vkp_log_softmax",
                 k->in[0], k->out, vkp__c_dims(x, k->in_ext[0], 0, axis).s);
  vkp__sb_printf(k->body, "%s, ", vkp__c_dims(x, k->in_ext[0], axis, axis + 1).s);
  vkp__sb_printf(k->body, "%s);\n", vkp__c_dims(x, k->in_ext[0], axis + 1, x->rank).s);
  return NULL;
}

vkp_status_t vkp__c_emit_lp_norm(vkp__c_kernel_t *k) {
  long long outer, n, inner;
  vkp__axis_view(k, &outer, &n, &inner);
  vkp__sb_printf(k->body, "  vkp_lp_norm(%s, %s, %lld, %lld, %lld, %d);\n", k->in[0],
                 k->out, outer, n, inner, (int)vkp_node_int(k->node, "p"));
  return NULL;
}

vkp_status_t vkp__c_emit_group_norm(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long c = x->shape[1], spatial = 1;
  for (int32_t d = 2; d < x->rank; ++d) spatial *= x->shape[d];
  long long groups = k->node->op == VKP_OP_GROUP_NORM
                         ? (long long)vkp_node_int(k->node, "num_groups")
                         : c;
  // instance_norm of a bounded batch: the run-time batch.
  vkp__sb_printf(k->body, "  vkp_group_norm(%s, %s, %s, %s, %s, %lld, %lld, %lld, ",
                 k->in[0], k->in[1], k->in[2], k->out,
                 vkp__c_dims(x, k->in_ext[0], 0, 1).s, groups, c / groups,
                 spatial);
  vkp__literal(k->body, vkp_node_float(k->node, "epsilon"));
  vkp__sb_append(k->body, ");\n");
  return NULL;
}

vkp_status_t vkp__c_emit_lrn(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long spatial = 1;
  for (int32_t d = 2; d < x->rank; ++d) spatial *= x->shape[d];
  vkp__sb_printf(k->body, "  vkp_lrn(%s, %s, %lld, %lld, %lld, %lld, ", k->in[0], k->out,
                 (long long)x->shape[0], (long long)x->shape[1], spatial,
                 (long long)vkp_node_int(k->node, "size"));
  static const char *const names[] = {"alpha", "beta", "bias"};
  for (int i = 0; i < 3; ++i) {
    vkp__literal(k->body, vkp_node_float(k->node, names[i]));
    vkp__sb_append(k->body, i < 2 ? ", " : ");\n");
  }
  return NULL;
}

// Three streaming passes over x with per-row sums in double scratch: the
// mean, the variance, then y = (x - mean) / (std + 1e-9).
// The slices of vkp__slices split across the pool, as for the reductions.
vkp_status_t vkp__c_emit_mean_variance_norm(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  bool reduced[VKP_MAX_RANK];
  long long count = (long long)vkp__reduced(k->node, x, reduced);
  long long n_in = (long long)vkp__numel(x), rows = count ? n_in / count : 0;
  if (n_in == 0) return NULL;
  long long slices = (long long)vkp__slices(x, reduced);
  long long rows_per = rows / slices, in_per = n_in / slices;
  k->scratch_floats = (size_t)(4 * rows);  // two doubles per row
  vkp__sb_t loop = {0}, *sb = &loop;
  vkp__sb_printf(sb, "  double *sum = (double *)scratch, *dev = sum + %lld;\n", rows);
  vkp__sb_printf(sb,
                 "  const ptrdiff_t l_o0 = lo * %lld, l_o1 = hi * %lld, i0 = lo * %lld, "
                 "i1 = hi * %lld;\n",
                 rows_per, rows_per, in_per, in_per);
  vkp__sb_append(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) sum[o] = dev[o] = 0.0;\n");
  for (int pass = 0; pass < 3; ++pass) {
    vkp__sb_append(sb, "  for (ptrdiff_t i = i0; i < i1; ++i) {\n    ptrdiff_t o = ");
    vkp__emit_kept_index(sb, "i", x, reduced);
    vkp__sb_append(sb, ";\n");
    if (pass == 0) {
      vkp__sb_printf(sb, "    sum[o] += %s[i];\n  }\n", k->in[0]);
      vkp__sb_printf(sb, "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) sum[o] /= %lld.0;\n", count);
    } else if (pass == 1) {
      vkp__sb_printf(sb, "    double d = %s[i] - sum[o];\n    dev[o] += d * d;\n  }\n",
                     k->in[0]);
      vkp__sb_printf(sb,
                     "  for (ptrdiff_t o = l_o0; o < l_o1; ++o) dev[o] = 1.0 / "
                     "(sqrt(dev[o] / %lld.0) + 1e-9);\n",
                     count);
    } else {
      vkp__sb_printf(sb, "    %s[i] = (float)((%s[i] - sum[o]) * dev[o]);\n  }\n", k->out,
                     k->in[0]);
    }
  }
  if (loop.failed || !loop.data) k->body->failed = true;
  else vkp__c_emit_split(k, true, slices, 3 * in_per, loop.data);
  vkp__sb_deinit(&loop);
  return NULL;
}
