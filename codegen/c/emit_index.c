// SPDX-License-Identifier: Apache-2.0
// C kernel emitters of the indexing family: gather, gather_elements and
// gather_nd call the byte-moving loops of prelude_index.c; scatter_elements,
// scatter_nd and one_hot are written out here in the data's C type (their
// reductions compute in it). Every one checks its indices at run time: one
// out of range stops the stage with an error naming the node (can_fail).
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

static int64_t vkp__prod_of(const int64_t *shape, int32_t begin, int32_t end) {
  int64_t p = 1;
  for (int32_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

static bool vkp__wide(const vkp_value_t *idx) { return idx->dtype == VKP_DTYPE_INT64; }

// `static const ptrdiff_t name[] = {v0, v1, ...};` (at least one entry).
static void vkp__emit_dims(vkp__sb_t *sb, const char *name, int32_t n, const int64_t *v) {
  vkp__sb_printf(sb, "  static const ptrdiff_t %s[] = {", name);
  for (int32_t i = 0; i < n; ++i) vkp__sb_printf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
  vkp__sb_append(sb, n ? "};\n" : "0};\n");
}

static void vkp__strides_of(const vkp_value_t *v, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = v->rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= v->shape[d];
  }
}

// The gathers with a bounded data or index tensor (docs/onnx.md,
// "Data-dependent output shapes") call the same loops with run-time sizes:
// the data's compact strides and dims, and the count of indices, from the
// extents (emit_bounded.c). An index is checked against the run-time
// extent of a bounded axis.
static void vkp__bounded_range_message(vkp__c_kernel_t *k, const vkp_value_t *x,
                                       const char *ext, int32_t axis) {
  long long dim = (long long)x->shape[axis];
  k->can_fail = true;
  if (ext && x->bounded && x->bounded_axis == axis)
    snprintf(k->fail_message, sizeof k->fail_message,
             "an index is outside [-n, n) for n the run-time extent (at most %lld) of "
             "axis %d",
             dim, (int)axis);
  else
    snprintf(k->fail_message, sizeof k->fail_message,
             "an index is outside [%lld, %lld) (axis %d)", -dim, dim, (int)axis);
}

static vkp_status_t vkp__emit_gather_bounded(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  const char *xe = k->in_ext[0], *ie = k->in_ext[1];
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  vkp__sb_printf(k->body, "  return vkp_gather(%s, %s, %d, %s, %zu, %s, %s, %s, %s);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 vkp__c_dims(x, xe, 0, axis).s, vkp__c_dims(x, xe, axis, axis + 1).s,
                 vkp__c_dims(x, xe, axis + 1, x->rank).s,
                 vkp__c_dims(idx, ie, 0, idx->rank).s);
  vkp__bounded_range_message(k, x, xe, axis);
  return NULL;
}

static vkp_status_t vkp__emit_gather_elements_bounded(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  const char *xe = k->in_ext[0], *ie = k->in_ext[1];
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  vkp__c_emit_shape(k->body, "ishape", idx, ie, false);
  vkp__c_emit_shape(k->body, "xstrides", x, xe, true);
  vkp__sb_printf(k->body,
                 "  return vkp_gather_elements(%s, %s, %d, %s, %zu, %d, ishape, xstrides, "
                 "%d, %s, %s);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 (int)x->rank, (int)axis, vkp__c_dims(x, xe, axis, axis + 1).s,
                 vkp__c_dims(idx, ie, 0, idx->rank).s);
  vkp__bounded_range_message(k, x, xe, axis);
  return NULL;
}

static vkp_status_t vkp__emit_gather_nd_bounded(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  const char *xe = k->in_ext[0], *ie = k->in_ext[1];
  int32_t batch = (int32_t)vkp_node_int(k->node, "batch_dims");
  int32_t kk = (int32_t)idx->shape[idx->rank - 1];
  // Validation keeps the batch dims and the tuples' length static; x may
  // vary in an indexed dim or past them, the index tuples in number.
  vkp__sb_append(k->body, "  const ptrdiff_t dims[] = {");
  for (int32_t j = 0; j < kk; ++j)
    vkp__sb_printf(k->body, "%s%s", j ? ", " : "",
                   vkp__c_dims(x, xe, batch + j, batch + j + 1).s);
  vkp__sb_append(k->body, kk ? "};\n  const ptrdiff_t strides[] = {" : "0};\n  const ptrdiff_t strides[] = {");
  for (int32_t j = 0; j < kk; ++j)
    vkp__sb_printf(k->body, "%s%s", j ? ", " : "",
                   vkp__c_dims(x, xe, batch + j + 1, x->rank).s);
  vkp__sb_append(k->body, kk ? "};\n" : "0};\n");
  vkp__sb_printf(k->body,
                 "  return vkp_gather_nd(%s, %s, %d, %s, %zu, %s, %s, %d, dims, strides, "
                 "%s, %s);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 vkp__c_dims(x, xe, 0, batch).s,
                 vkp__c_dims(idx, ie, batch, idx->rank - 1).s, (int)kk,
                 vkp__c_dims(x, xe, batch + kk, x->rank).s,
                 vkp__c_dims(x, xe, batch, x->rank).s);
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "an index tuple entry is outside its axis (axes %d..%d of '%s')", (int)batch,
           (int)(batch + kk - 1), x->name);
  return NULL;
}

vkp_status_t vkp__c_emit_gather(vkp__c_kernel_t *k) {
  if (vkp__c_bounded(k)) return vkp__emit_gather_bounded(k);
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  int64_t dim = x->shape[axis];
  vkp__sb_printf(k->body, "  return vkp_gather(%s, %s, %d, %s, %zu, %lld, %lld, %lld, %lld);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 (long long)vkp__prod_of(x->shape, 0, axis), (long long)dim,
                 (long long)vkp__prod_of(x->shape, axis + 1, x->rank),
                 (long long)vkp__prod_of(idx->shape, 0, idx->rank));
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "an index is outside [%lld, %lld) (axis %d)", (long long)-dim, (long long)dim,
           (int)axis);
  return NULL;
}

vkp_status_t vkp__c_emit_gather_elements(vkp__c_kernel_t *k) {
  if (vkp__c_bounded(k)) return vkp__emit_gather_elements_bounded(k);
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  int64_t strides[VKP_MAX_RANK], dim = x->shape[axis];
  vkp__strides_of(x, strides);
  vkp__emit_dims(k->body, "ishape", idx->rank, idx->shape);
  vkp__emit_dims(k->body, "xstrides", x->rank, strides);
  vkp__sb_printf(k->body,
                 "  return vkp_gather_elements(%s, %s, %d, %s, %zu, %d, ishape, xstrides, "
                 "%d, %lld, %lld);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 (int)x->rank, (int)axis, (long long)dim,
                 (long long)vkp__prod_of(idx->shape, 0, idx->rank));
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "an index is outside [%lld, %lld) (axis %d)", (long long)-dim, (long long)dim,
           (int)axis);
  return NULL;
}

// The dims and strides an nd op's index tuples address: data dims first..
// first+n-1.
static void vkp__emit_nd_dims(vkp__c_kernel_t *k, const vkp_value_t *x, int32_t first,
                              int32_t n) {
  int64_t strides[VKP_MAX_RANK];
  vkp__strides_of(x, strides);
  vkp__emit_dims(k->body, "dims", n, x->shape + first);
  vkp__emit_dims(k->body, "strides", n, strides + first);
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "an index tuple entry is outside its axis (axes %d..%d of '%s')", (int)first,
           (int)(first + n - 1), x->name);
}

vkp_status_t vkp__c_emit_gather_nd(vkp__c_kernel_t *k) {
  if (vkp__c_bounded(k)) return vkp__emit_gather_nd_bounded(k);
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1);
  int32_t batch = (int32_t)vkp_node_int(k->node, "batch_dims");
  int32_t kk = (int32_t)idx->shape[idx->rank - 1];
  vkp__emit_nd_dims(k, x, batch, kk);
  vkp__sb_printf(k->body,
                 "  return vkp_gather_nd(%s, %s, %d, %s, %zu, %lld, %lld, %d, dims, strides, "
                 "%lld, %lld);\n",
                 k->in[0], k->in[1], vkp__wide(idx), k->out, vkp_dtype_size(x->dtype),
                 (long long)vkp__prod_of(x->shape, 0, batch),
                 (long long)vkp__prod_of(idx->shape, batch, idx->rank - 1), (int)kk,
                 (long long)vkp__prod_of(x->shape, batch + kk, x->rank),
                 (long long)vkp__prod_of(x->shape, batch, x->rank));
  return NULL;
}

// `a = a <reduction> b` in the C type T of the data (integers wrap).
static void vkp__emit_update(vkp__sb_t *sb, const char *reduction, vkp_dtype_t dt,
                             const char *a, const char *b) {
  const char *T = vkp__c_type(dt);
  bool fl = vkp_dtype_is_float(dt);
  if (strcmp(reduction, "add") == 0 || strcmp(reduction, "mul") == 0) {
    char op = reduction[0] == 'a' ? '+' : '*';
    if (fl)
      vkp__sb_printf(sb, "%s = %s %c %s;\n", a, a, op, b);
    else
      vkp__sb_printf(sb, "%s = (%s)((uint64_t)%s %c (uint64_t)%s);\n", a, T, a, op, b);
  } else if (strcmp(reduction, "max") == 0) {
    vkp__sb_printf(sb, "if (%s > %s) %s = %s;\n", b, a, a, b);
  } else if (strcmp(reduction, "min") == 0) {
    vkp__sb_printf(sb, "if (%s < %s) %s = %s;\n", b, a, a, b);
  } else {
    vkp__sb_printf(sb, "%s = %s;\n", a, b);
  }
}

vkp_status_t vkp__c_emit_scatter(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *idx = vkp__c_in(k, 1), *upd = vkp__c_in(k, 2);
  const char *reduction = vkp_node_string(k->node, "reduction");
  vkp__sb_t *sb = k->body;
  int64_t numel = vkp__prod_of(x->shape, 0, x->rank);
  vkp__sb_printf(sb, "  memcpy(%s, %s, %lld * sizeof *%s);\n", k->out, k->in[0],
                 (long long)numel, k->out);
  if (k->node->op == VKP_OP_SCATTER_ELEMENTS) {
    int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
    int64_t strides[VKP_MAX_RANK], dim = x->shape[axis];
    vkp__strides_of(x, strides);
    vkp__emit_dims(sb, "ishape", idx->rank, idx->shape);
    vkp__emit_dims(sb, "xstrides", x->rank, strides);
    vkp__sb_printf(sb,
                   "  for (ptrdiff_t i = 0; i < %lld; ++i) {\n"
                   "    int64_t k = vkp_index_at(%s, %d, i);\n"
                   "    if (!vkp_index_fix(&k, %lld)) return 1;\n"
                   "    ptrdiff_t at = vkp_elements_offset(i, %d, ishape, xstrides, %d, "
                   "(ptrdiff_t)k);\n    ",
                   (long long)vkp__prod_of(idx->shape, 0, idx->rank), k->in[1],
                   vkp__wide(idx), (long long)dim, (int)x->rank, (int)axis);
    char a[96], b[96];
    snprintf(a, sizeof a, "%s[at]", k->out);
    snprintf(b, sizeof b, "%s[i]", k->in[2]);
    vkp__emit_update(sb, reduction, x->dtype, a, b);
    vkp__sb_append(sb, "  }\n");
    k->can_fail = true;
    snprintf(k->fail_message, sizeof k->fail_message,
             "an index is outside [%lld, %lld) (axis %d)", (long long)-dim, (long long)dim,
             (int)axis);
    return NULL;
  }
  int32_t kk = (int32_t)idx->shape[idx->rank - 1];
  int64_t slice = vkp__prod_of(x->shape, kk, x->rank);
  (void)upd;
  vkp__emit_nd_dims(k, x, 0, kk);
  vkp__sb_printf(sb,
                 "  for (ptrdiff_t t = 0; t < %lld; ++t) {\n"
                 "    ptrdiff_t at;\n"
                 "    if (!vkp_nd_offset(%s, %d, t, %d, dims, strides, &at)) return 1;\n"
                 "    for (ptrdiff_t e = 0; e < %lld; ++e) ",
                 (long long)vkp__prod_of(idx->shape, 0, idx->rank - 1), k->in[1],
                 vkp__wide(idx), (int)kk, (long long)slice);
  char a[96], b[128];
  snprintf(a, sizeof a, "%s[at + e]", k->out);
  snprintf(b, sizeof b, "%s[t * %lld + e]", k->in[2], (long long)slice);
  vkp__sb_append(sb, "{\n      ");
  vkp__emit_update(sb, reduction, x->dtype, a, b);
  vkp__sb_append(sb, "    }\n  }\n");
  return NULL;
}

// Off values everywhere, then the on value at each index in range (ONNX:
// one outside [-depth, depth) leaves its row off); no run-time error.
vkp_status_t vkp__c_emit_one_hot(vkp__c_kernel_t *k) {
  const vkp_value_t *idx = vkp__c_in(k, 0);
  const vkp_value_t *y = vkp__c_out(k);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  int64_t depth = vkp_node_int(k->node, "depth");
  int64_t outer = vkp__prod_of(y->shape, 0, axis);
  int64_t inner = vkp__prod_of(y->shape, axis + 1, y->rank);
  bool fl = vkp_dtype_is_float(idx->dtype);
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t i = 0; i < %lld; ++i) %s[i] = %s[0];\n"
                 "  for (ptrdiff_t o = 0; o < %lld; ++o)\n"
                 "    for (ptrdiff_t i = 0; i < %lld; ++i) {\n"
                 "      int64_t k = %s%s[o * %lld + i]%s;\n"
                 "      if (k < 0) k += %lld;\n"
                 "      if (k >= 0 && k < %lld) %s[(o * %lld + k) * %lld + i] = %s[1];\n"
                 "    }\n",
                 (long long)(outer * depth * inner), k->out, k->in[1], (long long)outer,
                 (long long)inner, fl ? "vkp_index_from_f((double)" : "(int64_t)", k->in[0],
                 (long long)inner, fl ? ")" : "", (long long)depth, (long long)depth, k->out,
                 (long long)depth, (long long)inner, k->in[1]);
  return NULL;
}

// reverse_sequence: per batch entry, a copy of each time step's inner block
// from its mirrored step within the entry's length; a length outside
// [0, time] stops the stage.
vkp_status_t vkp__c_emit_reverse_sequence(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  int64_t baxis = vkp_node_int(k->node, "batch_axis"), taxis = vkp_node_int(k->node, "time_axis");
  long long batch = (long long)x->shape[baxis], time = (long long)x->shape[taxis];
  long long inner = (long long)vkp__prod_of(x->shape, 2, x->rank);
  long long bs = baxis == 0 ? time * inner : inner, ts = taxis == 0 ? batch * inner : inner;
  vkp__sb_printf(k->body,
                 "  for (ptrdiff_t b = 0; b < %lld; ++b) {\n"
                 "    int64_t len = %s[b];\n"
                 "    if (len < 0 || len > %lld) return 1;\n"
                 "    for (ptrdiff_t t = 0; t < %lld; ++t) {\n"
                 "      ptrdiff_t src = t < len ? (ptrdiff_t)len - 1 - t : t;\n"
                 "      memcpy(%s + b * %lld + t * %lld, %s + b * %lld + src * %lld, "
                 "%lld * sizeof *%s);\n"
                 "    }\n"
                 "  }\n",
                 batch, k->in[1], time, time, k->out, bs, ts, k->in[0], bs, ts, inner,
                 k->out);
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "a sequence length is outside [0, %lld] (the time axis %d)", time, (int)taxis);
  return NULL;
}
