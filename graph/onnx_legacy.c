// SPDX-License-Identifier: Apache-2.0
// Opsets 1 to 6 of the default domain: each node of an op whose schema
// changed before opset 7 (and MeanVarianceNormalization-1, in force to
// opset 8) is upgraded, as it is imported, to the form the mappers know (the
// step ONNX's version converter takes, done here where shapes are known),
// then mapped as usual. Also the experimental ops of opset 1 that opset 10
// removed (vkp__map_experimental, at the end). docs/onnx.md "Legacy opsets"
// lists the forms.
//
// The upgrade works on a copy of the node: its own attribute and input
// arrays, attributes made here, and symbols bound under fresh names for
// inputs that were attributes (Reshape's shape, Tile's repeats) or that
// need reshaping (a B broadcast at `axis`). The model's node is not changed.
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/onnx_internal.h"

typedef vkp_status_t (*vkp__legacy_fn)(vkp__onnx_ctx_t *ctx,
                                       vkp__onnx_legacy_t *up);

static vkp_status_t vkp__up_binary(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_prelu(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_reshape(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_pad(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_concat(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_split(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_cast(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_tile(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_upsample(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_selu(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);
static vkp_status_t vkp__up_mvn(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up);

// X(ONNX op, the opset from which the modern form applies, the legacy
// attributes (removed from the copy; accepted below that opset), the
// upgrader (NULL: removing them is the whole upgrade)). From the operator
// changelog (onnx.defs: every schema with since_version < 7 of an op the
// importer maps). `consumed_inputs` was bookkeeping for in-place buffers
// and means nothing to the result; BatchNormalization's and Dropout's
// `is_test` and the RNNs' `output_sequence` go as the version converter
// drops them (outputs present decide, as from opset 7).
#define VKP__ONNX_LEGACY_LIST(X) \
  X("Abs", 6, "consumed_inputs", NULL) \
  X("Add", 7, "axis,broadcast,consumed_inputs", vkp__up_binary) \
  X("And", 7, "axis,broadcast", vkp__up_binary) \
  X("BatchNormalization", 7, "consumed_inputs,is_test", NULL) \
  X("Cast", 6, "", vkp__up_cast) \
  X("Ceil", 6, "consumed_inputs", NULL) \
  X("Clip", 6, "consumed_inputs", NULL) \
  X("Concat", 4, "", vkp__up_concat) \
  X("Div", 7, "axis,broadcast,consumed_inputs", vkp__up_binary) \
  X("Dropout", 7, "consumed_inputs,is_test", NULL) \
  X("Elu", 6, "consumed_inputs", NULL) \
  X("Equal", 7, "axis,broadcast", vkp__up_binary) \
  X("Exp", 6, "consumed_inputs", NULL) \
  X("Floor", 6, "consumed_inputs", NULL) \
  X("GRU", 7, "output_sequence", NULL) \
  X("Gemm", 7, "broadcast", NULL) \
  X("Greater", 7, "axis,broadcast", vkp__up_binary) \
  X("HardSigmoid", 6, "consumed_inputs", NULL) \
  X("InstanceNormalization", 6, "consumed_inputs", NULL) \
  X("LSTM", 7, "output_sequence", NULL) \
  X("LeakyRelu", 6, "consumed_inputs", NULL) \
  X("Less", 7, "axis,broadcast", vkp__up_binary) \
  X("Log", 6, "consumed_inputs", NULL) \
  X("Max", 6, "consumed_inputs", NULL) \
  X("MeanVarianceNormalization", 9, "across_channels,normalize_variance", vkp__up_mvn) \
  X("Mean", 6, "consumed_inputs", NULL) \
  X("Min", 6, "consumed_inputs", NULL) \
  X("Mul", 7, "axis,broadcast,consumed_inputs", vkp__up_binary) \
  X("Neg", 6, "consumed_inputs", NULL) \
  X("Or", 7, "axis,broadcast", vkp__up_binary) \
  X("PRelu", 7, "consumed_inputs", vkp__up_prelu) \
  X("Pad", 2, "paddings", vkp__up_pad) \
  X("Pow", 7, "axis,broadcast", vkp__up_binary) \
  X("RNN", 7, "output_sequence", NULL) \
  X("Reciprocal", 6, "consumed_inputs", NULL) \
  X("Relu", 6, "consumed_inputs", NULL) \
  X("Reshape", 5, "consumed_inputs,shape", vkp__up_reshape) \
  X("Selu", 6, "consumed_inputs", vkp__up_selu) \
  X("Sigmoid", 6, "consumed_inputs", NULL) \
  X("Split", 2, "", vkp__up_split) \
  X("Sqrt", 6, "consumed_inputs", NULL) \
  X("Sub", 7, "axis,broadcast,consumed_inputs", vkp__up_binary) \
  X("Sum", 6, "consumed_inputs", NULL) \
  X("Tanh", 6, "consumed_inputs", NULL) \
  X("Tile", 6, "", vkp__up_tile) \
  X("Upsample", 7, "height_scale,width_scale", vkp__up_upsample) \
  X("Xor", 7, "axis,broadcast", vkp__up_binary)

typedef struct vkp__legacy_op_t {
  const char *op;
  int64_t until;
  const char *attrs;
  vkp__legacy_fn upgrade;
} vkp__legacy_op_t;

#define VKP__LEGACY_ROW(op, until, attrs, fn) {op, until, attrs, fn},
static const vkp__legacy_op_t vkp__legacy_ops[] = {
    VKP__ONNX_LEGACY_LIST(VKP__LEGACY_ROW)};
#undef VKP__LEGACY_ROW

// The row of `op_type` when `opset` is below the row's modern form.
static const vkp__legacy_op_t *vkp__legacy_find(const char *op_type,
                                                int64_t opset) {
  if (!op_type) return NULL;
  for (size_t i = 0; i < sizeof vkp__legacy_ops / sizeof vkp__legacy_ops[0]; ++i)
    if (strcmp(vkp__legacy_ops[i].op, op_type) == 0)
      return opset < vkp__legacy_ops[i].until ? &vkp__legacy_ops[i] : NULL;
  return NULL;
}

// Whether `name` is in the comma-separated `list`.
static bool vkp__in_list(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (n == len && len > 0 && strncmp(p, name, n) == 0) return true;
    p += n;
    if (*p == ',') ++p;
  }
  return false;
}

bool vkp__onnx_legacy_attr(const char *op_type, const char *name,
                           int64_t opset) {
  const vkp__legacy_op_t *row = vkp__legacy_find(op_type, opset);
  return row && name && vkp__in_list(row->attrs, name);
}

// An attribute of the model's node (legacy attributes are not in the copy).
static const Onnx__AttributeProto *vkp__orig_attr(const vkp__onnx_legacy_t *up,
                                                  const char *name) {
  for (size_t i = 0; i < up->orig->n_attribute; ++i) {
    const Onnx__AttributeProto *a = up->orig->attribute[i];
    if (a && a->name && strcmp(a->name, name) == 0) return a;
  }
  return NULL;
}

static vkp_status_t vkp__orig_int(const vkp__onnx_legacy_t *up, const char *name,
                                  int64_t fallback, int64_t *out) {
  const Onnx__AttributeProto *a = vkp__orig_attr(up, name);
  *out = fallback;
  if (!a) return NULL;
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
    return VKP__ONNX_INVALID("attribute '%s' must be an int (type %d)", name,
                             (int)a->type);
  *out = a->i;
  return NULL;
}

static vkp_status_t vkp__orig_float(const vkp__onnx_legacy_t *up,
                                    const char *name, double *out) {
  const Onnx__AttributeProto *a = vkp__orig_attr(up, name);
  if (!a) return VKP__ONNX_INVALID("attribute '%s' is required", name);
  if (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
    *out = (double)a->i;
  else if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
    return VKP__ONNX_INVALID("attribute '%s' must be a float (type %d)", name,
                             (int)a->type);
  else
    *out = a->f;
  return NULL;
}

// A new attribute on the copy (replacing one of the same name).
static Onnx__AttributeProto *vkp__made(vkp__onnx_legacy_t *up, const char *name,
                                       Onnx__AttributeProto__AttributeType type) {
  for (size_t i = 0; i < up->node.n_attribute; ++i)
    if (strcmp(up->attrs[i]->name, name) == 0) {
      for (size_t j = i + 1; j < up->node.n_attribute; ++j)
        up->attrs[j - 1] = up->attrs[j];
      --up->node.n_attribute;
      break;
    }
  assert(up->n_made < VKP__LEGACY_MAX_MADE);  // no upgrade makes more
  Onnx__AttributeProto *a = &up->made[up->n_made++];
  *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  a->name = (char *)name;
  a->has_type = 1;
  a->type = type;
  up->attrs[up->node.n_attribute++] = a;
  return a;
}

static void vkp__made_int(vkp__onnx_legacy_t *up, const char *name, int64_t v) {
  Onnx__AttributeProto *a =
      vkp__made(up, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

static void vkp__made_float(vkp__onnx_legacy_t *up, const char *name, double v) {
  Onnx__AttributeProto *a =
      vkp__made(up, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = (float)v;
}

// INTS from `v` (n entries, at most VKP__LEGACY_MAX_LIST; copied).
static void vkp__made_ints(vkp__onnx_legacy_t *up, const char *name,
                           const int64_t *v, size_t n) {
  int64_t *store = up->ints[up->n_made];
  Onnx__AttributeProto *a =
      vkp__made(up, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  for (size_t i = 0; i < n; ++i) store[i] = v[i];
  a->ints = store;
  a->n_ints = n;
}

// Input `i` of the copy becomes a symbol under a fresh name: the host
// constant *t (consumed) or, with t NULL, IR value `value`.
static vkp_status_t vkp__set_input(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up,
                                   int32_t i, vkp__onnx_tensor_t *t,
                                   int32_t value) {
  char *name = NULL;
  for (int32_t k = 0; !name; ++k) {
    name = vkp__asprintf("%s:legacy_input%d_%d", ctx->node_name ? ctx->node_name : "",
                         (int)i, (int)k);
    if (!name) break;
    if (vkp__onnx_sym_find(ctx, name)) {
      vkp__free(name);
      name = NULL;
    }
  }
  if (!name) {
    if (t) vkp__onnx_tensor_deinit(t);
    return VKP_OOM("legacy input name");
  }
  assert(up->n_names < (int32_t)(sizeof up->names / sizeof up->names[0]));
  up->names[up->n_names++] = name;
  up->inputs[i] = name;
  if ((size_t)i >= up->node.n_input) up->node.n_input = (size_t)i + 1;
  return t ? vkp__onnx_bind_const(ctx, name, t) : vkp__onnx_bind_value(ctx, name, value);
}

// Input `i` unsqueezed at the end to rank `rank` (an IR unsqueeze; it folds
// when the input is a constant).
static vkp_status_t vkp__pad_rank(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up,
                                  int32_t i, int32_t have, int32_t rank) {
  int64_t axes[VKP_MAX_RANK];
  for (int32_t k = have; k < rank; ++k) axes[k - have] = k;
  int32_t in, out;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, i, &in));
  vkp_attr_t a = vkp__onnx_a_ints("axes", axes, rank - have);
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, VKP_OP_UNSQUEEZE, 1, &in, 1, &a, NULL, &out));
  return vkp__set_input(ctx, up, i, NULL, out);
}

// Binary ops before opset 7: with broadcast=0 A and B have one shape; with
// broadcast=1 B's shape is a contiguous run of A's, at the end or starting
// at `axis`. B unsqueezed at the end to A's rank less `axis` makes NumPy's
// rule (aligned at the end) give the same result.
static vkp_status_t vkp__up_binary(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  int64_t broadcast, axis;
  VKP_RETURN_IF_ERROR(vkp__orig_int(up, "broadcast", 0, &broadcast));
  VKP_RETURN_IF_ERROR(vkp__orig_int(up, "axis", 0, &axis));
  vkp__onnx_sym_t *a = vkp__onnx_input(ctx, 0), *b = vkp__onnx_input(ctx, 1);
  if (!a || !b || a->poisoned || b->poisoned) return NULL;  // the mapper says
  int32_t ra, rb;
  int64_t sa[VKP_MAX_RANK], sb[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, a, &ra, sa);
  vkp__onnx_sym_shape(ctx, b, &rb, sb);
  if (!broadcast) {
    bool same = ra == rb;
    for (int32_t i = 0; same && i < ra; ++i) same = sa[i] == sb[i];
    if (!same)
      return VKP__ONNX_INVALID("broadcast=0 (opset %lld) needs A and B of one "
                               "shape; A has rank %d, B rank %d",
                               (long long)ctx->opset, (int)ra, (int)rb);
    return NULL;
  }
  if (!vkp__orig_attr(up, "axis")) return NULL;  // aligned at the end
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra)
    return VKP__ONNX_INVALID("broadcast axis %lld (opset %lld): B of rank %d "
                             "does not fit in A of rank %d there",
                             (long long)axis, (long long)ctx->opset, (int)rb,
                             (int)ra);
  for (int32_t i = 0; i < rb; ++i)
    if (sb[i] != sa[axis + i] && sb[i] != 1)
      return VKP__ONNX_INVALID("broadcast axis %lld (opset %lld): B's dim %d "
                               "is %lld, A's is %lld",
                               (long long)axis, (long long)ctx->opset, (int)i,
                               (long long)sb[i], (long long)sa[axis + i]);
  if (axis + rb == ra) return NULL;
  return vkp__pad_rank(ctx, up, 1, rb, ra - (int32_t)axis);
}

// PRelu before opset 7 (Caffe2's): a slope of C values is per channel
// (X's dim 1), not aligned at the end.
static vkp_status_t vkp__up_prelu(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0), *slope = vkp__onnx_input(ctx, 1);
  if (!x || !slope || x->poisoned || slope->poisoned) return NULL;
  int32_t rx, rs;
  int64_t sx[VKP_MAX_RANK], ss[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, x, &rx, sx);
  vkp__onnx_sym_shape(ctx, slope, &rs, ss);
  if (rx < 3 || rs != 1 || ss[0] == 1 || ss[0] != sx[1]) return NULL;
  return vkp__pad_rank(ctx, up, 1, 1, rx - 1);
}

// Reshape before opset 5: the new shape is the attribute `shape`.
static vkp_status_t vkp__up_reshape(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  const Onnx__AttributeProto *a = vkp__orig_attr(up, "shape");
  if (!a)
    return VKP__ONNX_INVALID("attribute 'shape' is required before opset 5 "
                             "(the model's opset is %lld)",
                             (long long)ctx->opset);
  if (up->node.n_input != 1)
    return VKP__ONNX_INVALID("takes 1 input before opset 5, has %zu",
                             up->node.n_input);
  if (a->n_ints > VKP_MAX_RANK)
    return VKP__ONNX_UNSUPPORTED("attribute 'shape' has %zu entries; at most %d",
                                 a->n_ints, VKP_MAX_RANK);
  int64_t n = (int64_t)a->n_ints;
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &n));
  for (size_t i = 0; i < a->n_ints; ++i) vkp__onnx_tensor_set_i(&t, i, a->ints[i]);
  return vkp__set_input(ctx, up, 1, &t, -1);
}

// Pad-1 calls pads `paddings` (same layout: all begins, then all ends).
static vkp_status_t vkp__up_pad(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  const Onnx__AttributeProto *a = vkp__orig_attr(up, "paddings");
  if (!a) return NULL;
  if (vkp__onnx_attr(ctx, "pads"))
    return VKP__ONNX_INVALID("both 'paddings' and 'pads' are given");
  if (a->n_ints > VKP__LEGACY_MAX_LIST)
    return VKP__ONNX_UNSUPPORTED("attribute 'paddings' has %zu entries", a->n_ints);
  vkp__made_ints(up, "pads", a->ints, a->n_ints);
  return NULL;
}

// Concat before opset 4: axis is optional, 1 by default.
static vkp_status_t vkp__up_concat(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  if (!vkp__onnx_attr(ctx, "axis")) vkp__made_int(up, "axis", 1);
  return NULL;
}

// Split-1: the sizes may come as input 1 (a constant) instead of the
// attribute.
static vkp_status_t vkp__up_split(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  if (!vkp__onnx_input(ctx, 1)) {
    if (up->node.n_input > 1) up->node.n_input = 1;
    return NULL;
  }
  if (vkp__onnx_attr(ctx, "split"))
    return VKP__ONNX_INVALID("split sizes are given both as input 1 and as the "
                             "attribute");
  const vkp__onnx_tensor_t *t;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "split (input 1)", &t));
  int64_t sizes[VKP__LEGACY_MAX_LIST];
  int32_t n;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_const_ints(t, "split (input 1)", sizes, VKP__LEGACY_MAX_LIST, &n));
  vkp__made_ints(up, "split", sizes, (size_t)n);
  up->node.n_input = 1;
  return NULL;
}

// Cast before opset 6: `to` is the DataType's name ("FLOAT", "INT64", ...).
static vkp_status_t vkp__up_cast(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  const Onnx__AttributeProto *a = vkp__orig_attr(up, "to");
  bool is_string = a && (a->has_type ? a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
                                     : a->has_s && !a->has_i);
  if (!is_string) return NULL;
  char name[32];
  size_t n = a->s.len;
  if (n >= sizeof name)
    return VKP__ONNX_INVALID("attribute 'to' is too long (%zu bytes)", n);
  for (size_t i = 0; i < n; ++i) name[i] = (char)toupper(a->s.data[i]);
  name[n] = '\0';
  const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value_by_name(
      &onnx__tensor_proto__data_type__descriptor, name);
  if (!v || v->value == ONNX__TENSOR_PROTO__DATA_TYPE__UNDEFINED)
    return VKP__ONNX_INVALID("attribute 'to' is '%s': not a TensorProto "
                             "DataType name (opset %lld)",
                             name, (long long)ctx->opset);
  vkp__made_int(up, "to", v->value);
  return NULL;
}

// Tile-1: inputs (input, tiles, axis), two scalars, become Tile-6's
// repeats (tiles at `axis`, 1 elsewhere).
static vkp_status_t vkp__up_tile(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (!x || up->node.n_input != 3)
    return VKP__ONNX_INVALID("Tile before opset 6 takes 3 inputs (input, "
                             "tiles, axis), has %zu",
                             up->node.n_input);
  const vkp__onnx_tensor_t *tt, *at;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 1, "tiles", &tt));
  VKP_RETURN_IF_ERROR(vkp__onnx_input_const(ctx, 2, "axis", &at));
  if (!tt || !at) return VKP__ONNX_INVALID("inputs tiles and axis are required");
  double tiles, axis;
  VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(tt, "tiles", &tiles));
  VKP_RETURN_IF_ERROR(vkp__onnx_const_scalar(at, "axis", &axis));
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, x, &rank, shape);
  int64_t ax = (int64_t)axis;
  if (ax < 0) ax += rank;
  if (ax < 0 || ax >= rank)
    return VKP__ONNX_INVALID("axis %lld out of range for rank %d", (long long)axis,
                             (int)rank);
  if (tiles < 0) return VKP__ONNX_INVALID("tiles is %g", tiles);
  int64_t n = rank;
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, &n));
  for (int32_t i = 0; i < rank; ++i)
    vkp__onnx_tensor_set_i(&t, (size_t)i, i == ax ? (int64_t)tiles : 1);
  up->node.n_input = 2;
  return vkp__set_input(ctx, up, 1, &t, -1);
}

// Upsample-1: height_scale and width_scale of an NCHW input become
// Upsample-7's scales [1, 1, h, w]; mode nearest or bilinear as in 7.
static vkp_status_t vkp__up_upsample(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  if (vkp__onnx_attr(ctx, "scales"))
    return VKP__ONNX_INVALID("attribute 'scales' needs opset 7 (the model's "
                             "opset is %lld: height_scale, width_scale)",
                             (long long)ctx->opset);
  double h = 0.0, w = 0.0;
  VKP_RETURN_IF_ERROR(vkp__orig_float(up, "height_scale", &h));
  VKP_RETURN_IF_ERROR(vkp__orig_float(up, "width_scale", &w));
  Onnx__AttributeProto *a =
      vkp__made(up, "scales", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  up->floats[0] = 1.0f;
  up->floats[1] = 1.0f;
  up->floats[2] = (float)h;
  up->floats[3] = (float)w;
  a->floats = up->floats;
  a->n_floats = 4;
  return NULL;
}

// Selu-1's defaults are alpha 1.6732 and gamma 1.0507 (Selu-6 made them
// exact); the IR schema has Selu-6's.
static vkp_status_t vkp__up_selu(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  if (ctx->opset >= 6) return NULL;
  if (!vkp__onnx_attr(ctx, "alpha")) vkp__made_float(up, "alpha", 1.6732);
  if (!vkp__onnx_attr(ctx, "gamma")) vkp__made_float(up, "gamma", 1.0507);
  return NULL;
}

// MeanVarianceNormalization-1 (experimental): per sample and channel over
// the spatial dims, or with across_channels=1 per sample over C and the
// spatial dims: opset 9's `axes` [2, ...] or [1, 2, ...] (9's default,
// [0, 2, 3], includes the batch). normalize_variance=0 (the mean subtracted
// only) has no opset-9 form.
static vkp_status_t vkp__up_mvn(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  int64_t across, normalize;
  VKP_RETURN_IF_ERROR(vkp__orig_int(up, "across_channels", 0, &across));
  VKP_RETURN_IF_ERROR(vkp__orig_int(up, "normalize_variance", 1, &normalize));
  if (vkp__onnx_attr(ctx, "axes"))
    return VKP__ONNX_INVALID("attribute 'axes' needs opset 9 (the model's "
                             "opset is %lld: across_channels)",
                             (long long)ctx->opset);
  if (!normalize)
    return VKP__ONNX_UNSUPPORTED("normalize_variance=0 (opset %lld: the mean "
                                 "subtracted only) has no opset-9 form",
                                 (long long)ctx->opset);
  vkp__onnx_sym_t *x = vkp__onnx_input(ctx, 0);
  if (!x) return NULL;  // the mapper says
  int32_t rank;
  int64_t shape[VKP_MAX_RANK], axes[VKP_MAX_RANK];
  vkp__onnx_sym_shape(ctx, x, &rank, shape);
  int32_t n = 0;
  for (int32_t d = across ? 1 : 2; d < rank; ++d) axes[n++] = d;
  if (n == 0)
    return VKP__ONNX_INVALID("an input of rank %d has no dims to normalise over",
                             (int)rank);
  vkp__made_ints(up, "axes", axes, (size_t)n);
  return NULL;
}

vkp_status_t vkp__onnx_legacy_upgrade(vkp__onnx_ctx_t *ctx,
                                      vkp__onnx_legacy_t *up) {
  memset(up, 0, sizeof *up);
  const Onnx__NodeProto *node = ctx->node;
  const vkp__legacy_op_t *row = vkp__legacy_find(node->op_type, ctx->opset);
  if (!row) return NULL;
  up->orig = node;
  up->node = *node;
  up->attrs = vkp__calloc(node->n_attribute + VKP__LEGACY_MAX_MADE,
                          sizeof *up->attrs);
  up->inputs = vkp__calloc(node->n_input + 3, sizeof *up->inputs);
  if (!up->attrs || !up->inputs) {
    vkp__onnx_legacy_deinit(ctx, up);
    return VKP_OOM("legacy node copy");
  }
  size_t kept = 0;
  for (size_t i = 0; i < node->n_attribute; ++i) {
    Onnx__AttributeProto *a = node->attribute[i];
    if (a && a->name && vkp__in_list(row->attrs, a->name)) continue;
    if (a && a->name) up->attrs[kept++] = a;
  }
  for (size_t i = 0; i < node->n_input; ++i) up->inputs[i] = node->input[i];
  up->node.attribute = up->attrs;
  up->node.n_attribute = kept;
  up->node.input = up->inputs;
  ctx->node = &up->node;
  up->active = true;
  vkp_status_t st = row->upgrade ? row->upgrade(ctx, up) : NULL;
  if (st) {
    vkp__onnx_legacy_deinit(ctx, up);
    return st;
  }
  return NULL;
}

void vkp__onnx_legacy_deinit(vkp__onnx_ctx_t *ctx, vkp__onnx_legacy_t *up) {
  if (up->active && ctx->node == &up->node) ctx->node = up->orig;
  for (int32_t i = 0; i < up->n_names; ++i) vkp__free(up->names[i]);
  vkp__free(up->attrs);
  vkp__free(up->inputs);
  memset(up, 0, sizeof *up);
}

// ---------------------------------------------------------------------------
// Experimental ops of opset 1, removed in opset 10 (ONNX PR 1909); older
// exporters wrote them (ImageScaler opens many Model Zoo vision models).
// Each is IR elementwise ops (or a slice) on scalar constants:
//   Affine              alpha * x + beta          (alpha 1, beta 0)
//   Scale               scale * x                 (scale 1)
//   ImageScaler         scale * x + bias[c]       (NCHW; scale 1, bias 0)
//   ScaledTanh          alpha * tanh(beta * x)    (both required)
//   ParametricSoftplus  alpha * ln(exp(beta * x) + 1)  (both required)
//   Crop                x[:, :, top:, left:] to (height, width) of `scale`,
//                       else less the right and bottom `border`

// out = x * factor (NULL name: internal), skipped when factor is 1 unless
// it defines the node's output.
static vkp_status_t vkp__times(vkp__onnx_ctx_t *ctx, int32_t x, double factor,
                               bool last, int32_t *out) {
  if (factor == 1.0 && !last) {
    *out = x;
    return NULL;
  }
  int32_t k;
  VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, factor, &k));
  int32_t in[2] = {x, k};
  if (last) return vkp__onnx_emit_out(ctx, VKP_OP_MUL, 2, in, 0, NULL);
  return vkp__onnx_emit(ctx, VKP_OP_MUL, 2, in, 0, NULL, NULL, out);
}

static vkp_status_t vkp__required_float(vkp__onnx_ctx_t *ctx, const char *name,
                                        double *out) {
  if (!vkp__onnx_attr(ctx, name))
    return VKP__ONNX_INVALID("attribute '%s' is required", name);
  return vkp__onnx_attr_float(ctx, name, 0.0, out);
}

static vkp_status_t vkp__map_crop(vkp__onnx_ctx_t *ctx, int32_t x) {
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  if (xv->rank != 4)
    return VKP__ONNX_INVALID("Crop takes an NCHW input; it has rank %d", (int)xv->rank);
  int64_t border[4] = {0, 0, 0, 0}, scale[2];
  int32_t nb, ns;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "border", border, 4, &nb));
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_ints(ctx, "scale", scale, 2, &ns));
  if (nb != 4) return VKP__ONNX_INVALID("attribute 'border' needs 4 entries (left, top, right, bottom)");
  if (ns >= 0 && ns != 2)
    return VKP__ONNX_INVALID("attribute 'scale' needs 2 entries (height, width)");
  int64_t h = xv->shape[2], w = xv->shape[3];
  int64_t top = border[1], left = border[0];
  int64_t oh = ns == 2 ? scale[0] : h - border[1] - border[3];
  int64_t ow = ns == 2 ? scale[1] : w - border[0] - border[2];
  for (int i = 0; i < 4; ++i)
    if (border[i] < 0) return VKP__ONNX_INVALID("negative border");
  if (oh <= 0 || ow <= 0 || top + oh > h || left + ow > w)
    return VKP__ONNX_INVALID("the crop [%lld:%lld, %lld:%lld] does not fit the "
                             "input's %lld x %lld",
                             (long long)top, (long long)(top + oh), (long long)left,
                             (long long)(left + ow), (long long)h, (long long)w);
  int64_t starts[2] = {top, left}, ends[2] = {top + oh, left + ow}, axes[2] = {2, 3},
          steps[2] = {1, 1};
  vkp_attr_t a[4] = {vkp__onnx_a_ints("starts", starts, 2),
                     vkp__onnx_a_ints("ends", ends, 2), vkp__onnx_a_ints("axes", axes, 2),
                     vkp__onnx_a_ints("steps", steps, 2)};
  return vkp__onnx_emit_out(ctx, VKP_OP_SLICE, 1, &x, 4, a);
}

static vkp_status_t vkp__map_image_scaler(vkp__onnx_ctx_t *ctx, int32_t x) {
  double scale;
  VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "scale", 1.0, &scale));
  const Onnx__AttributeProto *bias = vkp__onnx_attr(ctx, "bias");
  const vkp_value_t *xv = vkp__onnx_value(ctx, x);
  if (!bias) return vkp__times(ctx, x, scale, true, &x);
  if (xv->rank != 4)
    return VKP__ONNX_INVALID("ImageScaler takes an NCHW input; it has rank %d",
                             (int)xv->rank);
  if ((int64_t)bias->n_floats != xv->shape[1])
    return VKP__ONNX_INVALID("attribute 'bias' has %zu entries for %lld channels",
                             bias->n_floats, (long long)xv->shape[1]);
  int32_t scaled, b;
  VKP_RETURN_IF_ERROR(vkp__times(ctx, x, scale, false, &scaled));
  int64_t shape[3] = {xv->shape[1], 1, 1};
  vkp__onnx_tensor_t t;
  VKP_RETURN_IF_ERROR(
      vkp__onnx_tensor_alloc(&t, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 3, shape));
  for (size_t i = 0; i < bias->n_floats; ++i) vkp__onnx_tensor_set_f(&t, i, bias->floats[i]);
  vkp_status_t st = vkp__onnx_add_const(ctx, &t, &b);
  vkp__onnx_tensor_deinit(&t);
  VKP_RETURN_IF_ERROR(st);
  int32_t in[2] = {scaled, b};
  return vkp__onnx_emit_out(ctx, VKP_OP_ADD, 2, in, 0, NULL);
}

vkp_status_t vkp__map_experimental(vkp__onnx_ctx_t *ctx) {
  const char *op = ctx->node->op_type;
  if (ctx->opset >= 10)
    return VKP__ONNX_INVALID("%s is an experimental op of opsets 1 to 9 "
                             "(removed in opset 10; the model's is %lld)",
                             op, (long long)ctx->opset);
  int32_t x;
  VKP_RETURN_IF_ERROR(vkp__onnx_input_value(ctx, 0, &x));
  VKP_RETURN_IF_ERROR(vkp__onnx_only_outputs(ctx, 1));
  if (strcmp(op, "Crop") == 0) return vkp__map_crop(ctx, x);
  if (strcmp(op, "ImageScaler") == 0) return vkp__map_image_scaler(ctx, x);
  if (strcmp(op, "Scale") == 0) {
    double scale;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "scale", 1.0, &scale));
    return vkp__times(ctx, x, scale, true, &x);
  }
  if (strcmp(op, "Affine") == 0) {
    double alpha, beta;
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "alpha", 1.0, &alpha));
    VKP_RETURN_IF_ERROR(vkp__onnx_attr_float(ctx, "beta", 0.0, &beta));
    int32_t ax, b;
    VKP_RETURN_IF_ERROR(vkp__times(ctx, x, alpha, false, &ax));
    VKP_RETURN_IF_ERROR(vkp__onnx_scalar_const(ctx, beta, &b));
    int32_t in[2] = {ax, b};
    return vkp__onnx_emit_out(ctx, VKP_OP_ADD, 2, in, 0, NULL);
  }
  // ScaledTanh, ParametricSoftplus: alpha * f(beta * x).
  vkp_op_t f = strcmp(op, "ScaledTanh") == 0 ? VKP_OP_TANH : VKP_OP_SOFTPLUS;
  double alpha, beta;
  VKP_RETURN_IF_ERROR(vkp__required_float(ctx, "alpha", &alpha));
  VKP_RETURN_IF_ERROR(vkp__required_float(ctx, "beta", &beta));
  int32_t bx, fx;
  VKP_RETURN_IF_ERROR(vkp__times(ctx, x, beta, false, &bx));
  VKP_RETURN_IF_ERROR(vkp__onnx_emit(ctx, f, 1, &bx, 0, NULL, NULL, &fx));
  return vkp__times(ctx, fx, alpha, true, &fx);
}
