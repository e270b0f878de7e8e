// SPDX-License-Identifier: Apache-2.0
// The op table: attribute schemas, canonical defaults and shape inference.
// docs/ops.md is the prose version of this file.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"

// ---------------------------------------------------------------------------
// Attribute schemas

typedef struct vkp__attr_spec_t {
  const char *name;  // NULL ends a list
  vkp_attr_kind_t kind;
} vkp__attr_spec_t;

#define VKP__SPEC(name, kind) {name, VKP_ATTR_##kind}
#define VKP__END {NULL, VKP_ATTR_INT}

static const vkp__attr_spec_t vkp__attrs_none[] = {VKP__END};
static const vkp__attr_spec_t vkp__attrs_leaky_relu[] = {
    VKP__SPEC("alpha", FLOAT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_clip[] = {
    VKP__SPEC("min", FLOAT), VKP__SPEC("max", FLOAT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_gelu[] = {
    VKP__SPEC("approximate", STRING), VKP__END};
static const vkp__attr_spec_t vkp__attrs_gemm[] = {
    VKP__SPEC("alpha", FLOAT), VKP__SPEC("beta", FLOAT),
    VKP__SPEC("transA", INT), VKP__SPEC("transB", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_conv2d[] = {
    VKP__SPEC("pads", INTS), VKP__SPEC("strides", INTS),
    VKP__SPEC("dilations", INTS), VKP__SPEC("group", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_max_pool2d[] = {
    VKP__SPEC("kernel_shape", INTS), VKP__SPEC("pads", INTS),
    VKP__SPEC("strides", INTS), VKP__SPEC("dilations", INTS),
    VKP__SPEC("ceil_mode", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_avg_pool2d[] = {
    VKP__SPEC("kernel_shape", INTS), VKP__SPEC("pads", INTS),
    VKP__SPEC("strides", INTS), VKP__SPEC("dilations", INTS),
    VKP__SPEC("ceil_mode", INT), VKP__SPEC("count_include_pad", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_batch_norm[] = {
    VKP__SPEC("epsilon", FLOAT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_softmax[] = {
    VKP__SPEC("axis", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_layer_norm[] = {
    VKP__SPEC("axis", INT), VKP__SPEC("epsilon", FLOAT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_reduce[] = {
    VKP__SPEC("axes", INTS), VKP__SPEC("keepdims", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_reshape[] = {
    VKP__SPEC("shape", INTS), VKP__END};
static const vkp__attr_spec_t vkp__attrs_flatten[] = {
    VKP__SPEC("axis", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_transpose[] = {
    VKP__SPEC("perm", INTS), VKP__END};
static const vkp__attr_spec_t vkp__attrs_concat[] = {
    VKP__SPEC("axis", INT), VKP__END};
static const vkp__attr_spec_t vkp__attrs_slice[] = {
    VKP__SPEC("starts", INTS), VKP__SPEC("ends", INTS), VKP__SPEC("axes", INTS),
    VKP__SPEC("steps", INTS), VKP__END};
static const vkp__attr_spec_t vkp__attrs_squeeze[] = {
    VKP__SPEC("axes", INTS), VKP__END};
static const vkp__attr_spec_t vkp__attrs_unsqueeze[] = {
    VKP__SPEC("axes", INTS), VKP__END};

// ---------------------------------------------------------------------------
// The table

typedef vkp_status_t (*vkp__infer_fn)(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out);

#define VKP__DECLARE_INFER(e, name, min_in, max_in, attrs, infer) \
  static vkp_status_t vkp__infer_##infer(vkp_graph_t *g, vkp_node_t *n, \
                                         vkp_value_t *out);
VKP_OP_LIST(VKP__DECLARE_INFER)
#undef VKP__DECLARE_INFER

typedef struct vkp__op_info_t {
  const char *name;
  int32_t min_inputs;
  int32_t max_inputs;  // -1: variadic
  const vkp__attr_spec_t *attrs;
  vkp__infer_fn infer;
} vkp__op_info_t;

static const vkp__op_info_t vkp__ops[] = {
#define VKP__OP_INFO(e, name, min_in, max_in, attrs, infer) \
  {name, min_in, max_in, vkp__attrs_##attrs, vkp__infer_##infer},
    VKP_OP_LIST(VKP__OP_INFO)
#undef VKP__OP_INFO
};
_Static_assert(sizeof(vkp__ops) / sizeof(vkp__ops[0]) == VKP_OP_COUNT,
               "op table out of sync");

const char *vkp_op_name(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__ops[op].name : "unknown";
}

vkp_op_t vkp_op_parse(const char *name) {
  for (int i = 0; i < VKP_OP_COUNT; ++i)
    if (name && strcmp(name, vkp__ops[i].name) == 0) return (vkp_op_t)i;
  return VKP_OP_COUNT;
}

// ---------------------------------------------------------------------------
// Helpers

#define VKP__ERR(...) vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static const vkp_value_t *vkp__in(const vkp_graph_t *g, const vkp_node_t *n,
                                  int32_t i) {
  if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  return &g->values[n->inputs[i]];
}

static void vkp__set_out(vkp_value_t *out, vkp_dtype_t dtype, int32_t rank,
                         const int64_t *shape) {
  out->dtype = dtype;
  out->rank = rank;
  for (int32_t i = 0; i < VKP_MAX_RANK; ++i) out->shape[i] = i < rank ? shape[i] : 0;
  out->shape_known = true;
}

static const char *vkp__fmt(const vkp_value_t *v, char *buf, size_t size) {
  return vkp_shape_format(v->rank, v->shape, buf, size);
}

static vkp_status_t vkp__need_dtype(const vkp_value_t *v, const char *what,
                                    bool allow_int) {
  if (v->dtype == VKP_DTYPE_FLOAT32) return NULL;
  if (allow_int && (v->dtype == VKP_DTYPE_INT32 || v->dtype == VKP_DTYPE_INT64))
    return NULL;
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "%s '%s' has dtype %s; this op supports float32%s",
                         what, v->name, vkp_dtype_name(v->dtype),
                         allow_int ? ", int32 and int64" : "");
}

static vkp_status_t vkp__set_int(vkp_node_t *n, const char *name, int64_t v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_INT, .i = v};
  return vkp__node_set_attr(n, &a);
}

static vkp_status_t vkp__set_float(vkp_node_t *n, const char *name, double v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_FLOAT, .f = v};
  return vkp__node_set_attr(n, &a);
}

static vkp_status_t vkp__set_ints(vkp_node_t *n, const char *name,
                                  int32_t count, const int64_t *v) {
  vkp_attr_t a = {.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = count};
  return vkp__node_set_attr(n, &a);
}

static vkp_status_t vkp__default_int(vkp_node_t *n, const char *name,
                                     int64_t v) {
  return vkp_node_attr(n, name) ? NULL : vkp__set_int(n, name, v);
}

static vkp_status_t vkp__default_float(vkp_node_t *n, const char *name,
                                       double v) {
  return vkp_node_attr(n, name) ? NULL : vkp__set_float(n, name, v);
}

// Normalises axis `a` against `rank` (allowing -rank..rank-1, or ..rank when
// `inclusive`).
static vkp_status_t vkp__norm_axis(int64_t a, int32_t rank, bool inclusive,
                                   const char *what, int64_t *out) {
  int64_t hi = inclusive ? rank : rank - 1;
  if (a < -(int64_t)rank || a > hi)
    return VKP__ERR("%s %lld out of range for rank %d", what, (long long)a,
                    (int)rank);
  *out = a < 0 ? a + rank : a;
  return NULL;
}

// Reads an INTS attribute that must have `count` entries (or be absent: then
// `defaults` is written in).
static vkp_status_t vkp__ints_exact(vkp_node_t *n, const char *name,
                                    int32_t count, const int64_t *defaults,
                                    const int64_t **out) {
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

// ---------------------------------------------------------------------------
// Elementwise

static vkp_status_t vkp__infer_unary(vkp_graph_t *g, vkp_node_t *n,
                                     vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  bool any_dtype = n->op == VKP_OP_IDENTITY;
  bool allow_int = n->op == VKP_OP_NEG || n->op == VKP_OP_ABS ||
                   n->op == VKP_OP_RELU;
  if (!any_dtype) VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", allow_int));
  switch (n->op) {
    case VKP_OP_LEAKY_RELU:
      VKP_RETURN_IF_ERROR(vkp__default_float(n, "alpha", 0.01));
      break;
    case VKP_OP_CLIP: {
      VKP_RETURN_IF_ERROR(vkp__default_float(n, "min", -FLT_MAX));
      VKP_RETURN_IF_ERROR(vkp__default_float(n, "max", FLT_MAX));
      break;
    }
    case VKP_OP_GELU: {
      const char *ap = vkp_node_attr_string(n, "approximate", NULL);
      if (!ap) {
        vkp_attr_t a = {.name = "approximate", .kind = VKP_ATTR_STRING,
                        .s = "none"};
        VKP_RETURN_IF_ERROR(vkp__node_set_attr(n, &a));
      } else if (strcmp(ap, "none") != 0 && strcmp(ap, "tanh") != 0) {
        return VKP__ERR("attribute 'approximate' is '%s'; expected 'none' or "
                        "'tanh'",
                        ap);
      }
      break;
    }
    default:
      break;
  }
  vkp__set_out(out, x->dtype, x->rank, x->shape);
  return NULL;
}

static vkp_status_t vkp__infer_broadcast(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  bool allow_int = n->op != VKP_OP_POW;
  VKP_RETURN_IF_ERROR(vkp__need_dtype(a, "input", allow_int));
  VKP_RETURN_IF_ERROR(vkp__need_dtype(b, "input", allow_int));
  if (a->dtype != b->dtype)
    return VKP__ERR("inputs '%s' (%s) and '%s' (%s) have different dtypes",
                    a->name, vkp_dtype_name(a->dtype), b->name,
                    vkp_dtype_name(b->dtype));
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char sa[128], sb[128];
      return VKP__ERR("shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                      vkp__fmt(a, sa, sizeof sa), vkp__fmt(b, sb, sizeof sb),
                      (int)i, (long long)da, (long long)db);
    }
    shape[i] = da == 1 ? db : da;
  }
  vkp__set_out(out, a->dtype, rank, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Linear algebra

static vkp_status_t vkp__infer_matmul(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(a, "input", false));
  VKP_RETURN_IF_ERROR(vkp__need_dtype(b, "input", false));
  if (a->rank < 1 || b->rank < 1)
    return VKP__ERR("matmul inputs need rank >= 1 (got %d and %d)", (int)a->rank,
                    (int)b->rank);
  int64_t k_a = a->shape[a->rank - 1];
  int64_t k_b = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
  if (k_a != k_b) {
    char sa[128], sb[128];
    return VKP__ERR("inner dimensions %lld and %lld differ (%s x %s)",
                    (long long)k_a, (long long)k_b, vkp__fmt(a, sa, sizeof sa),
                    vkp__fmt(b, sb, sizeof sb));
  }
  int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int32_t batch = ba > bb ? ba : bb;
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t i = 0; i < batch; ++i) {
    int32_t ia = i - (batch - ba), ib = i - (batch - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return VKP__ERR("batch dimensions %lld and %lld do not broadcast",
                      (long long)da, (long long)db);
    shape[rank++] = da == 1 ? db : da;
  }
  if (a->rank >= 2) shape[rank++] = a->shape[a->rank - 2];
  if (b->rank >= 2) shape[rank++] = b->shape[b->rank - 1];
  if (rank > VKP_MAX_RANK) return VKP__ERR("result rank exceeds %d", VKP_MAX_RANK);
  vkp__set_out(out, VKP_DTYPE_FLOAT32, rank, shape);
  return NULL;
}

static vkp_status_t vkp__infer_gemm(vkp_graph_t *g, vkp_node_t *n,
                                    vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1),
                    *c = vkp__in(g, n, 2);
  VKP_RETURN_IF_ERROR(vkp__default_float(n, "alpha", 1.0));
  VKP_RETURN_IF_ERROR(vkp__default_float(n, "beta", 1.0));
  VKP_RETURN_IF_ERROR(vkp__default_int(n, "transA", 0));
  VKP_RETURN_IF_ERROR(vkp__default_int(n, "transB", 0));
  int64_t ta = vkp_node_attr_int(n, "transA", 0), tb = vkp_node_attr_int(n, "transB", 0);
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    return VKP__ERR("transA/transB must be 0 or 1");
  VKP_RETURN_IF_ERROR(vkp__need_dtype(a, "input", false));
  VKP_RETURN_IF_ERROR(vkp__need_dtype(b, "input", false));
  if (a->rank != 2 || b->rank != 2)
    return VKP__ERR("gemm inputs A and B must be 2-D (got rank %d and %d)",
                    (int)a->rank, (int)b->rank);
  int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  int64_t kb = tb ? b->shape[1] : b->shape[0], nn = tb ? b->shape[0] : b->shape[1];
  if (k != kb)
    return VKP__ERR("inner dimensions %lld and %lld differ", (long long)k,
                    (long long)kb);
  if (c) {
    VKP_RETURN_IF_ERROR(vkp__need_dtype(c, "input C", false));
    int64_t target[2] = {m, nn};
    if (c->rank > 2) return VKP__ERR("C has rank %d; at most 2", (int)c->rank);
    for (int32_t i = 0; i < c->rank; ++i) {
      int64_t d = c->shape[i], t = target[2 - c->rank + i];
      if (d != 1 && d != t) {
        char sc[128];
        return VKP__ERR("C %s does not broadcast to [%lld, %lld]",
                        vkp__fmt(c, sc, sizeof sc), (long long)m, (long long)nn);
      }
    }
  }
  int64_t shape[2] = {m, nn};
  vkp__set_out(out, VKP_DTYPE_FLOAT32, 2, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Convolution and pooling

static const int64_t vkp__zeros4[4] = {0, 0, 0, 0};
static const int64_t vkp__ones2[2] = {1, 1};

static vkp_status_t vkp__window_out(int64_t in, int64_t pad_begin,
                                    int64_t pad_end, int64_t kernel,
                                    int64_t stride, int64_t dilation, bool ceil,
                                    int64_t *out) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = in + pad_begin + pad_end - span;
  if (room < 0)
    return VKP__ERR("window of %lld (kernel %lld, dilation %lld) is larger than "
                    "the padded input %lld",
                    (long long)span, (long long)kernel, (long long)dilation,
                    (long long)(in + pad_begin + pad_end));
  int64_t o = (ceil ? (room + stride - 1) / stride : room / stride) + 1;
  // A last window that would start in the end padding is dropped.
  if (ceil && (o - 1) * stride >= in + pad_begin) --o;
  *out = o;
  return NULL;
}

static vkp_status_t vkp__check_positive(const int64_t *v, int32_t n,
                                        const char *what, bool allow_zero) {
  for (int32_t i = 0; i < n; ++i)
    if (v[i] < (allow_zero ? 0 : 1))
      return VKP__ERR("attribute '%s' entry %d is %lld; must be %s", what, (int)i,
                      (long long)v[i], allow_zero ? ">= 0" : ">= 1");
  return NULL;
}

static vkp_status_t vkp__infer_conv2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1),
                    *b = vkp__in(g, n, 2);
  const int64_t *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 4, vkp__zeros4, &pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", 2, vkp__ones2, &strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", 2, vkp__ones2, &dil));
  VKP_RETURN_IF_ERROR(vkp__default_int(n, "group", 1));
  VKP_RETURN_IF_ERROR(vkp__check_positive(pads, 4, "pads", true));
  VKP_RETURN_IF_ERROR(vkp__check_positive(strides, 2, "strides", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(dil, 2, "dilations", false));
  int64_t group = vkp_node_attr_int(n, "group", 1);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  VKP_RETURN_IF_ERROR(vkp__need_dtype(w, "weight", false));
  if (x->rank != 4) return VKP__ERR("input '%s' must be 4-D NCHW (rank %d)", x->name, (int)x->rank);
  if (w->rank != 4) return VKP__ERR("weight '%s' must be 4-D (rank %d)", w->name, (int)w->rank);
  if (group < 1) return VKP__ERR("attribute 'group' is %lld; must be >= 1", (long long)group);
  int64_t c = x->shape[1], m = w->shape[0];
  if (w->shape[1] * group != c)
    return VKP__ERR("input has %lld channels but weight expects %lld x group %lld",
                    (long long)c, (long long)w->shape[1], (long long)group);
  if (m % group != 0)
    return VKP__ERR("%lld output channels are not divisible by group %lld",
                    (long long)m, (long long)group);
  if (b) {
    VKP_RETURN_IF_ERROR(vkp__need_dtype(b, "bias", false));
    if (b->rank != 1 || b->shape[0] != m)
      return VKP__ERR("bias '%s' must have shape [%lld]", b->name, (long long)m);
  }
  int64_t shape[4] = {x->shape[0], m, 0, 0};
  for (int i = 0; i < 2; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[2 + i],
                                        w->shape[2 + i], strides[i], dil[i],
                                        false, &shape[2 + i]));
  vkp__set_out(out, VKP_DTYPE_FLOAT32, 4, shape);
  return NULL;
}

static vkp_status_t vkp__infer_pool2d(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *k, *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "kernel_shape", 2, NULL, &k));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 4, vkp__zeros4, &pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", 2, vkp__ones2, &strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", 2, vkp__ones2, &dil));
  VKP_RETURN_IF_ERROR(vkp__default_int(n, "ceil_mode", 0));
  if (n->op == VKP_OP_AVG_POOL2D)
    VKP_RETURN_IF_ERROR(vkp__default_int(n, "count_include_pad", 0));
  VKP_RETURN_IF_ERROR(vkp__check_positive(k, 2, "kernel_shape", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(pads, 4, "pads", true));
  VKP_RETURN_IF_ERROR(vkp__check_positive(strides, 2, "strides", false));
  VKP_RETURN_IF_ERROR(vkp__check_positive(dil, 2, "dilations", false));
  for (int i = 0; i < 4; ++i)
    if (pads[i] >= k[i % 2] * dil[i % 2] && pads[i] > 0)
      return VKP__ERR("pad %lld is not smaller than the window %lld",
                      (long long)pads[i], (long long)k[i % 2]);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  if (x->rank != 4) return VKP__ERR("input '%s' must be 4-D NCHW (rank %d)", x->name, (int)x->rank);
  bool ceil = vkp_node_attr_int(n, "ceil_mode", 0) != 0;
  int64_t shape[4] = {x->shape[0], x->shape[1], 0, 0};
  for (int i = 0; i < 2; ++i)
    VKP_RETURN_IF_ERROR(vkp__window_out(x->shape[2 + i], pads[i], pads[2 + i],
                                        k[i], strides[i], dil[i], ceil,
                                        &shape[2 + i]));
  vkp__set_out(out, VKP_DTYPE_FLOAT32, 4, shape);
  return NULL;
}

static vkp_status_t vkp__infer_global_pool(vkp_graph_t *g, vkp_node_t *n,
                                           vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  if (x->rank < 3)
    return VKP__ERR("input '%s' needs rank >= 3 (N, C, spatial...), has %d",
                    x->name, (int)x->rank);
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < x->rank; ++i) shape[i] = i < 2 ? x->shape[i] : 1;
  vkp__set_out(out, VKP_DTYPE_FLOAT32, x->rank, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Normalisation

static vkp_status_t vkp__infer_batch_norm(vkp_graph_t *g, vkp_node_t *n,
                                          vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  static const char *const names[] = {"X", "scale", "B", "mean", "var"};
  VKP_RETURN_IF_ERROR(vkp__default_float(n, "epsilon", 1e-5));
  for (int32_t i = 0; i < 5; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) return VKP__ERR("input %d (%s) is required", (int)i, names[i]);
    VKP_RETURN_IF_ERROR(vkp__need_dtype(v, names[i], false));
  }
  if (x->rank < 2) return VKP__ERR("input '%s' needs rank >= 2", x->name);
  for (int32_t i = 1; i < 5; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (v->rank != 1 || v->shape[0] != x->shape[1])
      return VKP__ERR("%s '%s' must have shape [%lld] (the channel count)",
                      names[i], v->name, (long long)x->shape[1]);
  }
  vkp__set_out(out, VKP_DTYPE_FLOAT32, x->rank, x->shape);
  return NULL;
}

static vkp_status_t vkp__infer_softmax(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  if (x->rank < 1) return VKP__ERR("input '%s' needs rank >= 1", x->name);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_attr_int(n, "axis", -1), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  vkp__set_out(out, VKP_DTYPE_FLOAT32, x->rank, x->shape);
  return NULL;
}

static vkp_status_t vkp__infer_layer_norm(vkp_graph_t *g, vkp_node_t *n,
                                          vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  if (x->rank < 1) return VKP__ERR("input '%s' needs rank >= 1", x->name);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_attr_int(n, "axis", -1), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  VKP_RETURN_IF_ERROR(vkp__default_float(n, "epsilon", 1e-5));
  // scale (and bias) broadcast to x.shape[axis:].
  for (int32_t i = 1; i < 3; ++i) {
    const vkp_value_t *p = vkp__in(g, n, i);
    if (!p) {
      if (i == 1) return VKP__ERR("input 1 (scale) is required");
      continue;
    }
    const char *what = i == 1 ? "scale" : "bias";
    VKP_RETURN_IF_ERROR(vkp__need_dtype(p, what, false));
    int32_t norm_rank = x->rank - (int32_t)axis;
    bool ok = p->rank <= norm_rank;
    for (int32_t d = 0; ok && d < p->rank; ++d) {
      int64_t want = x->shape[x->rank - p->rank + d];
      if (p->shape[d] != want && p->shape[d] != 1) ok = false;
    }
    if (!ok) {
      char sp[128];
      return VKP__ERR("%s '%s' %s does not broadcast to the normalised dims",
                      what, p->name, vkp__fmt(p, sp, sizeof sp));
    }
  }
  vkp__set_out(out, VKP_DTYPE_FLOAT32, x->rank, x->shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Reductions and shape ops

static int vkp__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

// Normalises an axes list against `rank`: positive, sorted, no duplicates.
static vkp_status_t vkp__norm_axes(const int64_t *axes, int32_t count,
                                   int32_t rank, int64_t *out) {
  if (count > VKP_MAX_RANK) return VKP__ERR("too many axes (%d)", (int)count);
  for (int32_t i = 0; i < count; ++i)
    VKP_RETURN_IF_ERROR(vkp__norm_axis(axes[i], rank, false, "axis", &out[i]));
  qsort(out, (size_t)count, sizeof(int64_t), vkp__cmp_i64);
  for (int32_t i = 1; i < count; ++i)
    if (out[i] == out[i - 1])
      return VKP__ERR("axis %lld listed twice", (long long)out[i]);
  return NULL;
}

static vkp_status_t vkp__infer_reduce(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  VKP_RETURN_IF_ERROR(vkp__need_dtype(x, "input", false));
  VKP_RETURN_IF_ERROR(vkp__default_int(n, "keepdims", 1));
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  if (count == 0) {  // empty: reduce over every axis
    count = x->rank;
    for (int32_t i = 0; i < count; ++i) norm[i] = i;
  } else {
    VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  bool keep = vkp_node_attr_int(n, "keepdims", 1) != 0;
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    bool reduced = j < count && norm[j] == d;
    if (reduced) ++j;
    if (!reduced) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  vkp__set_out(out, VKP_DTYPE_FLOAT32, rank, shape);
  return NULL;
}

static vkp_status_t vkp__infer_reshape(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *spec;
  int32_t count = vkp_node_attr_ints(n, "shape", &spec);
  if (!vkp_node_attr(n, "shape")) return VKP__ERR("attribute 'shape' is required");
  if (count > VKP_MAX_RANK) return VKP__ERR("target rank %d exceeds %d", (int)count, VKP_MAX_RANK);
  int64_t shape[VKP_MAX_RANK];
  int32_t infer_at = -1;
  size_t known = 1, total = 1;
  for (int32_t i = 0; i < x->rank; ++i) total *= (size_t)x->shape[i];
  for (int32_t i = 0; i < count; ++i) {
    int64_t d = spec[i];
    if (d == 0) {
      if (i >= x->rank)
        return VKP__ERR("shape entry %d is 0 (copy) but the input has rank %d",
                        (int)i, (int)x->rank);
      d = x->shape[i];
    } else if (d == -1) {
      if (infer_at >= 0) return VKP__ERR("shape has more than one -1");
      infer_at = i;
      shape[i] = -1;
      continue;
    } else if (d < -1) {
      return VKP__ERR("shape entry %d is %lld", (int)i, (long long)d);
    }
    shape[i] = d;
    known *= (size_t)d;
  }
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return VKP__ERR("cannot infer the -1 entry: %zu elements into blocks of %zu",
                      total, known);
    shape[infer_at] = (int64_t)(total / known);
    known = total;
  }
  if (known != total) {
    char sx[128];
    return VKP__ERR("cannot reshape %s (%zu elements) to %zu elements",
                    vkp__fmt(x, sx, sizeof sx), total, known);
  }
  vkp__set_out(out, x->dtype, count, shape);
  return NULL;
}

static vkp_status_t vkp__infer_flatten(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_attr_int(n, "axis", 1), x->rank,
                                     true, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t shape[2] = {1, 1};
  for (int32_t i = 0; i < x->rank; ++i) shape[i < axis ? 0 : 1] *= x->shape[i];
  vkp__set_out(out, x->dtype, 2, shape);
  return NULL;
}

static vkp_status_t vkp__infer_transpose(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *perm;
  int32_t count = vkp_node_attr_ints(n, "perm", &perm);
  int64_t p[VKP_MAX_RANK];
  if (!vkp_node_attr(n, "perm")) {
    count = x->rank;
    for (int32_t i = 0; i < count; ++i) p[i] = x->rank - 1 - i;
    VKP_RETURN_IF_ERROR(vkp__set_ints(n, "perm", count, p));
  } else {
    if (count != x->rank)
      return VKP__ERR("attribute 'perm' has %d entries for rank %d", (int)count,
                      (int)x->rank);
    bool used[VKP_MAX_RANK] = {false};
    for (int32_t i = 0; i < count; ++i) {
      if (perm[i] < 0 || perm[i] >= x->rank || used[perm[i]])
        return VKP__ERR("attribute 'perm' is not a permutation of 0..%d",
                        (int)x->rank - 1);
      used[perm[i]] = true;
      p[i] = perm[i];
    }
  }
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < count; ++i) shape[i] = x->shape[p[i]];
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

static vkp_status_t vkp__infer_concat(vkp_graph_t *g, vkp_node_t *n,
                                      vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  if (!vkp_node_attr(n, "axis")) return VKP__ERR("attribute 'axis' is required");
  int64_t axis = 0;
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_attr_int(n, "axis", 0), x->rank,
                                     false, "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < x->rank; ++i) shape[i] = x->shape[i];
  shape[axis] = 0;
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (!v) return VKP__ERR("input %d is missing", (int)i);
    if (v->dtype != x->dtype || v->rank != x->rank)
      return VKP__ERR("input %d '%s' (%s, rank %d) differs from input 0 (%s, "
                      "rank %d)",
                      (int)i, v->name, vkp_dtype_name(v->dtype), (int)v->rank,
                      vkp_dtype_name(x->dtype), (int)x->rank);
    for (int32_t d = 0; d < x->rank; ++d)
      if (d != axis && v->shape[d] != x->shape[d])
        return VKP__ERR("input %d '%s' has %lld in dim %d, input 0 has %lld",
                        (int)i, v->name, (long long)v->shape[d], (int)d,
                        (long long)x->shape[d]);
    shape[axis] += v->shape[axis];
  }
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

// Canonical form: axes = 0..rank-1, with starts clamped into range and ends
// chosen so that the element count is (ends - starts) / steps rounded up.
static vkp_status_t vkp__infer_slice(vkp_graph_t *g, vkp_node_t *n,
                                     vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *starts, *ends, *axes, *steps;
  int32_t ns = vkp_node_attr_ints(n, "starts", &starts);
  int32_t ne = vkp_node_attr_ints(n, "ends", &ends);
  if (!vkp_node_attr(n, "starts") || !vkp_node_attr(n, "ends"))
    return VKP__ERR("attributes 'starts' and 'ends' are required");
  if (ns != ne) return VKP__ERR("'starts' has %d entries, 'ends' %d", (int)ns, (int)ne);
  int32_t na = vkp_node_attr_ints(n, "axes", &axes);
  int32_t nst = vkp_node_attr_ints(n, "steps", &steps);
  if (vkp_node_attr(n, "axes") && na != ns)
    return VKP__ERR("'axes' has %d entries, 'starts' %d", (int)na, (int)ns);
  if (vkp_node_attr(n, "steps") && nst != ns)
    return VKP__ERR("'steps' has %d entries, 'starts' %d", (int)nst, (int)ns);
  if (ns > x->rank) return VKP__ERR("%d slice entries for rank %d", (int)ns, (int)x->rank);
  int64_t cs[VKP_MAX_RANK], ce[VKP_MAX_RANK], cst[VKP_MAX_RANK], ca[VKP_MAX_RANK];
  bool set[VKP_MAX_RANK] = {false};
  for (int32_t d = 0; d < x->rank; ++d) {
    cs[d] = 0;
    ce[d] = x->shape[d];
    cst[d] = 1;
    ca[d] = d;
  }
  for (int32_t i = 0; i < ns; ++i) {
    int64_t axis = i;
    if (na) VKP_RETURN_IF_ERROR(vkp__norm_axis(axes[i], x->rank, false, "axis", &axis));
    if (set[axis]) return VKP__ERR("axis %lld sliced twice", (long long)axis);
    set[axis] = true;
    int64_t step = nst ? steps[i] : 1;
    if (step == 0) return VKP__ERR("step for axis %lld is 0", (long long)axis);
    int64_t dim = x->shape[axis], s = starts[i], e = ends[i];
    // A step longer than the axis takes at most one element, like a step of
    // exactly its length; clamping keeps the arithmetic below from
    // overflowing on steps near INT64_MIN or INT64_MAX.
    int64_t reach = dim > 0 ? dim : 1;
    if (step > reach) step = reach;
    if (step < -reach) step = -reach;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = s < 0 ? 0 : (s > dim ? dim : s);
      e = e < 0 ? 0 : (e > dim ? dim : e);
    } else {
      s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
      e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
    }
    cs[axis] = s;
    ce[axis] = e;
    cst[axis] = step;
  }
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0; d < x->rank; ++d) {
    int64_t len = cst[d] > 0 ? (ce[d] - cs[d] + cst[d] - 1) / cst[d]
                             : (cs[d] - ce[d] + (-cst[d]) - 1) / (-cst[d]);
    shape[d] = len > 0 ? len : 0;
    if (shape[d] == 0) {  // keep canonical values tidy for empty slices
      cs[d] = 0;
      ce[d] = 0;
      cst[d] = 1;
    }
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "starts", x->rank, cs));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "ends", x->rank, ce));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "steps", x->rank, cst));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", x->rank, ca));
  vkp__set_out(out, x->dtype, x->rank, shape);
  return NULL;
}

static vkp_status_t vkp__infer_squeeze(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  int64_t norm[VKP_MAX_RANK];
  if (count == 0) {
    for (int32_t d = 0; d < x->rank; ++d)
      if (x->shape[d] == 1) norm[count++] = d;
  } else {
    VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, x->rank, norm));
    for (int32_t i = 0; i < count; ++i)
      if (x->shape[norm[i]] != 1)
        return VKP__ERR("cannot squeeze axis %lld of size %lld",
                        (long long)norm[i], (long long)x->shape[norm[i]]);
  }
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  int64_t shape[VKP_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0, j = 0; d < x->rank; ++d) {
    if (j < count && norm[j] == d) {
      ++j;
      continue;
    }
    shape[rank++] = x->shape[d];
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

static vkp_status_t vkp__infer_unsqueeze(vkp_graph_t *g, vkp_node_t *n,
                                         vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  const int64_t *axes;
  int32_t count = vkp_node_attr_ints(n, "axes", &axes);
  if (count == 0) return VKP__ERR("attribute 'axes' is required and non-empty");
  int32_t rank = x->rank + count;
  if (rank > VKP_MAX_RANK) return VKP__ERR("result rank %d exceeds %d", (int)rank, VKP_MAX_RANK);
  int64_t norm[VKP_MAX_RANK];
  VKP_RETURN_IF_ERROR(vkp__norm_axes(axes, count, rank, norm));
  VKP_RETURN_IF_ERROR(vkp__set_ints(n, "axes", count, norm));
  int64_t shape[VKP_MAX_RANK];
  for (int32_t d = 0, j = 0, k = 0; d < rank; ++d) {
    if (j < count && norm[j] == d) {
      shape[d] = 1;
      ++j;
    } else {
      shape[d] = x->shape[k++];
    }
  }
  vkp__set_out(out, x->dtype, rank, shape);
  return NULL;
}

// ---------------------------------------------------------------------------
// Schema check and inference entry points

vkp_status_t vkp__op_check_schema(vkp_graph_t *g, int32_t index) {
  vkp_node_t *n = &g->nodes[index];
  const vkp__op_info_t *info = &vkp__ops[n->op];
  if (n->n_inputs < info->min_inputs ||
      (info->max_inputs >= 0 && n->n_inputs > info->max_inputs)) {
    if (info->max_inputs < 0)
      return VKP__ERR("takes at least %d inputs, got %d", (int)info->min_inputs,
                      (int)n->n_inputs);
    if (info->min_inputs == info->max_inputs)
      return VKP__ERR("takes %d input%s, got %d", (int)info->min_inputs,
                      info->min_inputs == 1 ? "" : "s", (int)n->n_inputs);
    return VKP__ERR("takes %d to %d inputs, got %d", (int)info->min_inputs,
                    (int)info->max_inputs, (int)n->n_inputs);
  }
  for (int32_t i = 0; i < info->min_inputs; ++i)
    if (n->inputs[i] < 0) return VKP__ERR("input %d is required", (int)i);
  if (n->n_outputs != 1)
    return VKP__ERR("has %d outputs; %s has exactly 1", (int)n->n_outputs,
                    info->name);
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

vkp_status_t vkp__op_infer(vkp_graph_t *g, int32_t index) {
  vkp_node_t *n = &g->nodes[index];
  VKP_RETURN_IF_ERROR(vkp__op_check_schema(g, index));
  for (int32_t i = 0; i < n->n_inputs; ++i) {
    const vkp_value_t *v = vkp__in(g, n, i);
    if (v && !v->shape_known)
      return vkp_status_make(VKP_STATUS_INTERNAL, "input %d '%s' has no shape yet",
                             (int)i, v->name);
  }
  vkp_value_t *out = &g->values[n->outputs[0]];
  VKP_RETURN_IF_ERROR(vkp__ops[n->op].infer(g, n, out));
  size_t bytes;
  if (!vkp_shape_numel(out->rank, out->shape, vkp_dtype_size(out->dtype), &bytes)) {
    char so[160];
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "output '%s' shape %s is too large", out->name,
                           vkp__fmt(out, so, sizeof so));
  }
  return NULL;
}
