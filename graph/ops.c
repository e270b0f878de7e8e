// SPDX-License-Identifier: Apache-2.0
// The op table: every op's properties in one array built from VKP_OP_LIST,
// the generic checks validation runs before an op's own inference (arity,
// attribute kinds, defaults, input dtype), the reference evaluation entry
// point and the helpers the per-family files (graph/op_*.c) share.
// docs/ops.md is the prose version of the table.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/ops_internal.h"

// ---------------------------------------------------------------------------
// The table

typedef vkp_status_t (*vkp__eval_fn)(const vkp_node_t *n,
                                     const vkp_tensor_t *const *in,
                                     vkp_tensor_t *out);

typedef struct vkp__op_info_t {
  const char *name;
  int32_t min_inputs, max_inputs;    // max -1: variadic
  int32_t min_outputs, max_outputs;  // max -1: variadic
  const vkp__attr_spec_t *attrs;
  vkp__infer_fn infer;
  vkp__eval_fn eval;
  vkp_op_pattern_t pattern;
  vkp_dtype_set_t dtypes;
  bool view;
  vkp_op_cost_class_t cost;
  double cost_factor;
} vkp__op_info_t;

static const vkp__op_info_t vkp__ops[] = {
#define VKP__OP_INFO(e, name, imin, imax, omin, omax, attrs, infer, eval,   \
                     pattern, dtypes, view, cost, factor)                   \
  {name,          imin,                     imax,                           \
   omin,          omax,                     vkp__attrs_##attrs,             \
   vkp__infer_##infer, vkp__eval_##eval,    VKP_OP_PATTERN_##pattern,       \
   VKP_OP_DTYPES_##dtypes, (view) != 0,     VKP_OP_COST_##cost,             \
   (factor)},
    VKP_OP_LIST(VKP__OP_INFO)
#undef VKP__OP_INFO
};
_Static_assert(sizeof(vkp__ops) / sizeof(vkp__ops[0]) == VKP_OP_COUNT,
               "op table out of sync");

static const char *const vkp__pattern_names[] = {
#define VKP__PATTERN_NAME(e, s) s,
    VKP_OP_PATTERN_LIST(VKP__PATTERN_NAME)
#undef VKP__PATTERN_NAME
};
_Static_assert(sizeof(vkp__pattern_names) / sizeof(vkp__pattern_names[0]) ==
                   VKP_OP_PATTERN_COUNT,
               "pattern names out of sync");

// Names graphs written before an op was renamed may still use.
static const struct {
  const char *alias;
  vkp_op_t op;
} vkp__op_aliases[] = {{"hardswish", VKP_OP_HARD_SWISH}};

const char *vkp_op_name(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].name : "unknown";
}

vkp_op_t vkp_op_parse(const char *name) {
  if (!name) return VKP_OP_COUNT;
  for (int i = 0; i < VKP_OP_COUNT; ++i)
    if (strcmp(name, vkp__ops[i].name) == 0) return (vkp_op_t)i;
  for (size_t i = 0; i < sizeof vkp__op_aliases / sizeof vkp__op_aliases[0]; ++i)
    if (strcmp(name, vkp__op_aliases[i].alias) == 0) return vkp__op_aliases[i].op;
  return VKP_OP_COUNT;
}

vkp_op_pattern_t vkp_op_pattern(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].pattern : VKP_OP_PATTERN_OPAQUE;
}

const char *vkp_op_pattern_name(vkp_op_pattern_t pattern) {
  return (unsigned)pattern < VKP_OP_PATTERN_COUNT ? vkp__pattern_names[pattern]
                                                  : "unknown";
}

bool vkp_op_is_view(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__ops[op].view;
}

vkp_dtype_set_t vkp_op_dtypes(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].dtypes : 0;
}

vkp_op_cost_class_t vkp_op_cost_class(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].cost : VKP_OP_COST_MOVE;
}

double vkp_op_cost_factor(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].cost_factor : 0.0;
}

void vkp_op_arity(vkp_op_t op, int32_t *min_inputs, int32_t *max_inputs,
                  int32_t *min_outputs, int32_t *max_outputs) {
  const vkp__op_info_t *info = (unsigned)op < VKP_OP_COUNT ? &vkp__ops[op] : NULL;
  if (min_inputs) *min_inputs = info ? info->min_inputs : 0;
  if (max_inputs) *max_inputs = info ? info->max_inputs : 0;
  if (min_outputs) *min_outputs = info ? info->min_outputs : 0;
  if (max_outputs) *max_outputs = info ? info->max_outputs : 0;
}

// ---------------------------------------------------------------------------
// Inference helpers

const vkp_value_t *vkp__in(const vkp_graph_t *g, const vkp_node_t *n, int32_t i) {
  if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  return &g->values[n->inputs[i]];
}

vkp_value_t *vkp__out(vkp_graph_t *g, const vkp_node_t *n, int32_t i) {
  return &g->values[n->outputs[i]];
}

void vkp__set_out(vkp_value_t *out, vkp_dtype_t dtype, int32_t rank,
                  const int64_t *shape) {
  out->dtype = dtype;
  out->rank = rank;
  for (int32_t i = 0; i < VKP_MAX_RANK; ++i) out->shape[i] = i < rank ? shape[i] : 0;
  out->shape_known = true;
}

const char *vkp__fmt(const vkp_value_t *v, char *buf, size_t size) {
  return vkp_shape_format(v->rank, v->shape, buf, size);
}

vkp_status_t vkp__need_dtypes(const vkp_value_t *v, const char *what,
                              vkp_dtype_set_t set) {
  if (set & VKP_DTYPE_SET(v->dtype)) return NULL;
  char names[256];
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "%s '%s' has dtype %s; this op takes %s", what,
                         v->name, vkp_dtype_name(v->dtype),
                         vkp_dtype_set_format(set, names, sizeof names));
}

vkp_status_t vkp__same_dtype(const vkp_value_t *a, const vkp_value_t *b) {
  if (a->dtype == b->dtype) return NULL;
  return VKP__ERR("inputs '%s' (%s) and '%s' (%s) have different dtypes",
                  a->name, vkp_dtype_name(a->dtype), b->name,
                  vkp_dtype_name(b->dtype));
}

vkp_status_t vkp__set_int(vkp_node_t *n, const char *name, int64_t v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_INT, .i = v};
  return vkp__node_set_attr(n, &a);
}

vkp_status_t vkp__set_float(vkp_node_t *n, const char *name, double v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_FLOAT, .f = v};
  return vkp__node_set_attr(n, &a);
}

vkp_status_t vkp__set_ints(vkp_node_t *n, const char *name, int32_t count,
                           const int64_t *v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = count};
  return vkp__node_set_attr(n, &a);
}

vkp_status_t vkp__set_string(vkp_node_t *n, const char *name, const char *v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_STRING, .s = v};
  return vkp__node_set_attr(n, &a);
}

vkp_status_t vkp__norm_axis(int64_t a, int32_t rank, bool inclusive,
                            const char *what, int64_t *out) {
  int64_t hi = inclusive ? rank : rank - 1;
  if (a < -(int64_t)rank || a > hi)
    return VKP__ERR("%s %lld out of range for rank %d", what, (long long)a,
                    (int)rank);
  *out = a < 0 ? a + rank : a;
  return NULL;
}

static int vkp__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

vkp_status_t vkp__norm_axes(const int64_t *axes, int32_t count, int32_t rank,
                            int64_t *out) {
  if (count > VKP_MAX_RANK) return VKP__ERR("too many axes (%d)", (int)count);
  for (int32_t i = 0; i < count; ++i)
    VKP_RETURN_IF_ERROR(vkp__norm_axis(axes[i], rank, false, "axis", &out[i]));
  qsort(out, (size_t)count, sizeof(int64_t), vkp__cmp_i64);
  for (int32_t i = 1; i < count; ++i)
    if (out[i] == out[i - 1])
      return VKP__ERR("axis %lld listed twice", (long long)out[i]);
  return NULL;
}

vkp_status_t vkp__ints_exact(vkp_node_t *n, const char *name, int32_t count,
                             const int64_t *defaults, const int64_t **out) {
  int32_t c = vkp_node_attr_ints(n, name, out);
  if (!vkp_node_attr(n, name)) {
    if (!defaults) return VKP__ERR("attribute '%s' is required", name);
    VKP_RETURN_IF_ERROR(vkp__set_ints(n, name, count, defaults));
    c = vkp_node_attr_ints(n, name, out);
  }
  if (c != count)
    return VKP__ERR("attribute '%s' needs %d entries, has %d", name, (int)count,
                    (int)c);
  return NULL;
}

vkp_status_t vkp__broadcast_shapes(const vkp_value_t *a, const vkp_value_t *b,
                                   int32_t *out_rank, int64_t *out_shape) {
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[128], sb[128];
      return VKP__ERR("shapes %s ('%s') and %s ('%s') do not broadcast (dim "
                      "%d: %lld vs %lld)",
                      vkp__fmt(a, sa, sizeof sa), a->name,
                      vkp__fmt(b, sb, sizeof sb), b->name, (int)i,
                      (long long)da, (long long)db);
    }
    out_shape[i] = da == 1 ? db : da;
  }
  *out_rank = rank;
  return NULL;
}

// ---------------------------------------------------------------------------
// Kernel helpers

void vkp__strides(const vkp_tensor_t *t, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= t->shape[d];
  }
}

void vkp__broadcast_strides(const vkp_tensor_t *t, int32_t out_rank,
                            int64_t *strides) {
  int64_t own[VKP_MAX_RANK];
  vkp__strides(t, own);
  for (int32_t d = 0; d < out_rank; ++d) {
    int32_t td = d - (out_rank - t->rank);
    strides[d] = (td < 0 || t->shape[td] == 1) ? 0 : own[td];
  }
}

bool vkp__next_index(int32_t rank, const int64_t *shape, int64_t *idx) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

int64_t vkp__dot(int32_t rank, const int64_t *idx, const int64_t *strides) {
  int64_t off = 0;
  for (int32_t d = 0; d < rank; ++d) off += idx[d] * strides[d];
  return off;
}

int64_t vkp__prod(const int64_t *shape, int32_t begin, int32_t end) {
  int64_t p = 1;
  for (int32_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

void vkp__split_axes(const vkp_tensor_t *x, const int64_t *axes, int32_t n_axes,
                     vkp__axis_split_t *out) {
  int64_t strides[VKP_MAX_RANK];
  vkp__strides(x, strides);
  out->n_kept = out->n_red = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    if (j < n_axes && axes[j] == d) {
      ++j;
      out->red_shape[out->n_red] = x->shape[d];
      out->red_strides[out->n_red++] = strides[d];
    } else {
      out->kept_shape[out->n_kept] = x->shape[d];
      out->kept_strides[out->n_kept++] = strides[d];
    }
  }
}

// ---------------------------------------------------------------------------
// Schema check, defaults and inference entry points

// "takes 1 input, got 2", "takes 2 to 3 inputs, got 1", "has 2 outputs; ...".
static vkp_status_t vkp__arity_error(const char *what, int32_t lo, int32_t hi,
                                     int32_t got) {
  const char *plural = lo == 1 && (hi == 1) ? "" : "s";
  if (hi < 0)
    return VKP__ERR("takes at least %d %ss, got %d", (int)lo, what, (int)got);
  if (lo == hi)
    return VKP__ERR("takes %d %s%s, got %d", (int)lo, what, plural, (int)got);
  return VKP__ERR("takes %d to %d %ss, got %d", (int)lo, (int)hi, what, (int)got);
}

vkp_status_t vkp__op_check_schema(vkp_graph_t *g, int32_t index) {
  vkp_node_t *n = &g->nodes[index];
  const vkp__op_info_t *info = &vkp__ops[n->op];
  if (n->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && n->n_inputs > info->max_inputs))
    return vkp__arity_error("input", info->min_inputs, info->max_inputs,
                            n->n_inputs);
  for (int32_t i = 0; i < info->min_inputs; ++i)
    if (n->inputs[i] < 0) return VKP__ERR("input %d is required", (int)i);
  if (n->n_outputs < info->min_outputs ||
      (info->max_outputs >= 0 && n->n_outputs > info->max_outputs))
    return vkp__arity_error("output", info->min_outputs, info->max_outputs,
                            n->n_outputs);
  for (int32_t i = 0; i < n->n_attrs; ++i) {
    vkp_attr_t *a = &n->attrs[i];
    const vkp__attr_spec_t *spec = info->attrs;
    while (spec->name && strcmp(spec->name, a->name) != 0) ++spec;
    if (!spec->name) {
      char known[256] = "";
      size_t used = 0;
      for (const vkp__attr_spec_t *s = info->attrs; s->name; ++s) {
        int w = snprintf(known + used, sizeof known - used, "%s%s",
                         used ? ", " : "", s->name);
        if (w < 0 || (size_t)w >= sizeof known - used) break;
        used += (size_t)w;
      }
      return VKP__ERR("unknown attribute '%s' (known: %s)", a->name,
                      used ? known : "none");
    }
    if (a->kind == spec->kind) continue;
    // Integers are accepted where floats are expected.
    if (a->kind == VKP_ATTR_INT && spec->kind == VKP_ATTR_FLOAT) {
      a->f = (double)a->i;
      a->kind = VKP_ATTR_FLOAT;
      continue;
    }
    if (a->kind == VKP_ATTR_INTS && spec->kind == VKP_ATTR_FLOATS) {
      double *f = vkp__calloc((size_t)a->count + 1, sizeof(double));
      if (!f) return VKP_OOM("attribute");
      for (int32_t j = 0; j < a->count; ++j) f[j] = (double)a->ints[j];
      vkp__free((void *)a->ints);
      a->ints = NULL;
      a->floats = f;
      a->kind = VKP_ATTR_FLOATS;
      continue;
    }
    return VKP__ERR("attribute '%s' must be %s, got %s", a->name,
                    vkp_attr_kind_name(spec->kind), vkp_attr_kind_name(a->kind));
  }
  return NULL;
}

// Writes the schema's defaults for absent attributes: the one place an op's
// default lives.
static vkp_status_t vkp__fill_defaults(vkp_node_t *n) {
  for (const vkp__attr_spec_t *s = vkp__ops[n->op].attrs; s->name; ++s) {
    if (!s->has_default || vkp_node_attr(n, s->name)) continue;
    switch (s->kind) {
      case VKP_ATTR_INT: VKP_RETURN_IF_ERROR(vkp__set_int(n, s->name, s->i)); break;
      case VKP_ATTR_FLOAT: VKP_RETURN_IF_ERROR(vkp__set_float(n, s->name, s->f)); break;
      case VKP_ATTR_STRING: VKP_RETURN_IF_ERROR(vkp__set_string(n, s->name, s->s)); break;
      default: break;  // list defaults depend on ranks: inference writes them
    }
  }
  return NULL;
}

vkp_status_t vkp__op_infer(vkp_graph_t *g, int32_t index) {
  vkp_node_t *n = &g->nodes[index];
  VKP_RETURN_IF_ERROR(vkp__op_check_schema(g, index));
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (v && !v->shape_known)
      return vkp_status_make(VKP_STATUS_INTERNAL, "input %d '%s' has no shape yet",
                             (int)i, v->name);
  }
  VKP_RETURN_IF_ERROR(vkp__fill_defaults(n));
  for (int32_t i = 0; i < n->n_outputs; ++i) vkp__out(g, n, i)->bounded = false;
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (x) VKP_RETURN_IF_ERROR(vkp__need_dtypes(x, "input", vkp__ops[n->op].dtypes));
  VKP_RETURN_IF_ERROR(vkp__ops[n->op].infer(g, n, vkp__out(g, n, 0)));
  for (int32_t i = 0; i < n->n_outputs; ++i) {
    const vkp_value_t *out = vkp__out(g, n, i);
    size_t bytes;
    if (!out->shape_known)
      return vkp_status_make(VKP_STATUS_INTERNAL, "output %d '%s' got no shape",
                             (int)i, out->name);
    if (!vkp_shape_numel(out->rank, out->shape, vkp_dtype_size(out->dtype), &bytes)) {
      char so[160];
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "output '%s' shape %s is too large", out->name,
                             vkp__fmt(out, so, sizeof so));
    }
  }
  return vkp__bounded_infer(g, n);
}

// ---------------------------------------------------------------------------
// Reference evaluation

vkp_status_t vkp_node_eval(const vkp_node_t *node,
                           const vkp_tensor_t *const *inputs,
                           vkp_tensor_t *outputs) {
  if ((unsigned)node->op >= VKP_OP_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "node '%s': unknown op %d",
                           node->name, (int)node->op);
  return vkp__ops[node->op].eval(node, inputs, outputs);
}
