// SPDX-License-Identifier: Apache-2.0
// Quantization (the ONNX operators of the same names): quantize_linear,
// dequantize_linear, dynamic_quantize_linear, and the integer products
// matmul_integer, conv_integer, qlinear_matmul, qlinear_conv. Schemas,
// inference and reference kernels.
//
// Quantized values are int8/uint8 (int16/uint16 for the linear
// (de)quantizers too); integer products accumulate in int64 (the ONNX int32
// accumulator, which cannot overflow for 8-bit operands up to 2^17 terms);
// results are rounded half to even and saturated to the output dtype.
// A scale / zero point pair is per tensor (one element), per axis (1-D, one
// per index of `axis`) or, with block_size > 0, per block of block_size
// consecutive indices of `axis` (same rank as the input, that dim
// ceil(dim / block_size)).
#include <math.h>
#include <string.h>

#include "graph/ops_internal.h"

const vkp__attr_spec_t vkp__attrs_quantize_linear[] = {
    VKP__ATTR_INT("axis", 1), VKP__ATTR_INT("block_size", 0),
    VKP__ATTR("output_dtype", STRING), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_dequantize_linear[] = {
    VKP__ATTR_INT("axis", 1), VKP__ATTR_INT("block_size", 0), VKP__ATTR_END};
const vkp__attr_spec_t vkp__attrs_qconv[] = {
    VKP__ATTR("pads", INTS), VKP__ATTR("strides", INTS),
    VKP__ATTR("dilations", INTS), VKP__ATTR_INT("group", 1), VKP__ATTR_END};

// ---------------------------------------------------------------------------
// Helpers

#define VKP__QUANT_OUT                                                   \
  (VKP_OP_DTYPES_INT8 | VKP_DTYPE_SET(VKP_DTYPE_INT16) |                 \
   VKP_DTYPE_SET(VKP_DTYPE_UINT16))

// The range of a quantized dtype.
static void vkp__q_range(vkp_dtype_t dt, double *lo, double *hi) {
  switch (dt) {
    case VKP_DTYPE_INT8: *lo = -128; *hi = 127; return;
    case VKP_DTYPE_UINT8: *lo = 0; *hi = 255; return;
    case VKP_DTYPE_INT16: *lo = -32768; *hi = 32767; return;
    case VKP_DTYPE_UINT16: *lo = 0; *hi = 65535; return;
    default: *lo = -2147483648.0; *hi = 2147483647.0; return;
  }
}

// round half to even, then clamp to the dtype's range.
static double vkp__q_saturate(vkp_dtype_t dt, double v) {
  double lo, hi;
  vkp__q_range(dt, &lo, &hi);
  v = nearbyint(v);
  return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

// v rounded to the precision of float dtype `dt`: ONNX computes x / scale
// in x's type, and the rounding of a quotient near .5 decides the result.
static double vkp__in_precision(vkp_dtype_t dt, double v) {
  switch (dt) {
    case VKP_DTYPE_FLOAT32: return (float)v;
    case VKP_DTYPE_FLOAT16: return vkp__half_to_float(vkp__float_to_half((float)v));
    case VKP_DTYPE_BFLOAT16:
      return vkp__bfloat_to_float(vkp__float_to_bfloat((float)v));
    default: return v;
  }
}

// How a scale / zero point pair maps onto x, whose element i has index
// a = i / inner % axis_dim along the axis: per tensor, parameter 0 (axis_dim
// 1); per axis, parameter a; per block, parameter
// (outer * blocks + a / block) * inner + i % inner, outer = i / inner / axis_dim.
typedef struct vkp__q_map_t {
  int64_t inner, axis_dim, block, blocks;  // block 0: not blocked
} vkp__q_map_t;

static int64_t vkp__q_param(const vkp__q_map_t *m, int64_t i) {
  int64_t a = i / m->inner % m->axis_dim;
  if (!m->block) return a;
  int64_t outer = i / m->inner / m->axis_dim;
  return (outer * m->blocks + a / m->block) * m->inner + i % m->inner;
}

// The map for x's shape, `axis`, `block` and a scale of `scale_rank` and
// `scale_numel` (checked by inference).
static void vkp__q_map(int32_t rank, const int64_t *shape, int64_t axis,
                       int64_t block, int32_t scale_rank, int64_t scale_numel,
                       vkp__q_map_t *m) {
  *m = (vkp__q_map_t){1, 1, 0, 1};
  if (block == 0 && scale_rank <= 1 && scale_numel == 1) return;  // per tensor
  int64_t dim = shape[axis];
  m->inner = vkp__prod(shape, (int32_t)axis + 1, rank);
  m->axis_dim = dim;
  if (!m->inner || !dim) *m = (vkp__q_map_t){1, 1, 0, 1};  // no elements
  if (block > 0 && dim) {
    m->block = block;
    m->blocks = (dim + block - 1) / block;
  }
}

// Checks a scale (and zero point, may be NULL) against x and writes the
// canonical axis (0 when per tensor) and block size.
static vkp_status_t vkp__q_params(vkp_node_t *n, const vkp_value_t *x,
                                  const vkp_value_t *scale, const vkp_value_t *zp) {
  if (zp) {
    bool same = zp->rank == scale->rank;
    for (int32_t d = 0; same && d < zp->rank; ++d) same = zp->shape[d] == scale->shape[d];
    if (!same) {
      char a[128], b[128];
      return VKP__ERR("zero point '%s' %s and scale '%s' %s differ in shape",
                      zp->name, vkp__fmt(zp, a, sizeof a), scale->name,
                      vkp__fmt(scale, b, sizeof b));
    }
  }
  int64_t numel = vkp__prod(scale->shape, 0, scale->rank);
  int64_t block = vkp_node_int(n, "block_size"), axis = 0;
  if (block < 0) return VKP__ERR("attribute 'block_size' is negative");
  if (block == 0 && scale->rank <= 1 && numel == 1)
    return vkp__set_int(n, "axis", 0);  // per tensor: the axis plays no part
  if (x->rank == 0) return VKP__ERR("a per-axis scale needs an input of rank >= 1");
  VKP_RETURN_IF_ERROR(vkp__norm_axis(vkp_node_int(n, "axis"), x->rank, false,
                                     "axis", &axis));
  VKP_RETURN_IF_ERROR(vkp__set_int(n, "axis", axis));
  char sx[128], ss[128];
  if (block > 0) {
    bool ok = scale->rank == x->rank;
    for (int32_t d = 0; ok && d < x->rank; ++d)
      ok = scale->shape[d] == (d == axis ? (x->shape[d] + block - 1) / block : x->shape[d]);
    if (!ok)
      return VKP__ERR("scale '%s' %s does not fit blocks of %lld along axis %lld "
                      "of '%s' %s",
                      scale->name, vkp__fmt(scale, ss, sizeof ss), (long long)block,
                      (long long)axis, x->name, vkp__fmt(x, sx, sizeof sx));
    return NULL;
  }
  if (scale->rank != 1 || scale->shape[0] != x->shape[axis])
    return VKP__ERR("scale '%s' %s is neither one value nor one per index of "
                    "axis %lld of '%s' %s",
                    scale->name, vkp__fmt(scale, ss, sizeof ss), (long long)axis,
                    x->name, vkp__fmt(x, sx, sizeof sx));
  return NULL;
}

// The map of a validated (de)quantizer node, from its tensors.
static void vkp__q_map_of(const vkp_node_t *n, const vkp_tensor_t *x,
                          const vkp_tensor_t *scale, vkp__q_map_t *m) {
  vkp__q_map(x->rank, x->shape, vkp_node_int(n, "axis"), vkp_node_int(n, "block_size"),
             scale->rank, (int64_t)vkp_tensor_numel(scale), m);
}

// ---------------------------------------------------------------------------
// quantize_linear, dequantize_linear, dynamic_quantize_linear

vkp_status_t vkp__infer_quantize_linear(vkp_graph_t *g, vkp_node_t *n,
                                        vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *scale = vkp__in(g, n, 1),
                    *zp = vkp__in(g, n, 2);
  VKP_RETURN_IF_ERROR(vkp__same_dtype(x, scale));
  const char *named = vkp_node_string(n, "output_dtype");
  vkp_dtype_t dt = VKP_DTYPE_UINT8;
  if (named && !vkp_dtype_parse(named, &dt))
    return VKP__ERR("attribute 'output_dtype' '%s' is not a dtype", named);
  if (zp) {
    if (named && zp->dtype != dt)
      return VKP__ERR("zero point '%s' is %s; output_dtype says %s", zp->name,
                      vkp_dtype_name(zp->dtype), named);
    dt = zp->dtype;
  }
  if (!(VKP_DTYPE_SET(dt) & VKP__QUANT_OUT))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "quantizing to %s (int8, uint8, int16, uint16)",
                           vkp_dtype_name(dt));
  VKP_RETURN_IF_ERROR(vkp__set_string(n, "output_dtype", vkp_dtype_name(dt)));
  VKP_RETURN_IF_ERROR(vkp__q_params(n, x, scale, zp));
  vkp__set_out(out, dt, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__eval_quantize_linear(const vkp_node_t *n,
                                       const vkp_tensor_t *const *in,
                                       vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1],
                     *zp = n->n_inputs > 2 ? in[2] : NULL;
  vkp__q_map_t m;
  vkp__q_map_of(n, x, scale, &m);
  int64_t count = (int64_t)vkp_tensor_numel(x);
  for (int64_t i = 0; i < count; ++i) {
    int64_t p = vkp__q_param(&m, i);
    double q = vkp__in_precision(x->dtype, vkp__get_f(x, i) / vkp__get_f(scale, p));
    double z = zp ? (double)vkp__get_i(zp, p) : 0.0;
    vkp__put_i(out, i, (int64_t)vkp__q_saturate(out->dtype, nearbyint(q) + z));
  }
  return NULL;
}

vkp_status_t vkp__infer_dequantize_linear(vkp_graph_t *g, vkp_node_t *n,
                                          vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *scale = vkp__in(g, n, 1),
                    *zp = vkp__in(g, n, 2);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(scale, "scale", VKP_OP_DTYPES_FLOAT));
  if (zp) VKP_RETURN_IF_ERROR(vkp__same_dtype(x, zp));
  VKP_RETURN_IF_ERROR(vkp__q_params(n, x, scale, zp));
  vkp__set_out(out, scale->dtype, x->rank, x->shape);
  return NULL;
}

vkp_status_t vkp__eval_dequantize_linear(const vkp_node_t *n,
                                         const vkp_tensor_t *const *in,
                                         vkp_tensor_t *out) {
  const vkp_tensor_t *x = in[0], *scale = in[1],
                     *zp = n->n_inputs > 2 ? in[2] : NULL;
  vkp__q_map_t m;
  vkp__q_map_of(n, x, scale, &m);
  int64_t count = (int64_t)vkp_tensor_numel(x);
  for (int64_t i = 0; i < count; ++i) {
    int64_t p = vkp__q_param(&m, i);
    int64_t z = zp ? vkp__get_i(zp, p) : 0;
    vkp__put_f(out, i, (double)(vkp__get_i(x, i) - z) * vkp__get_f(scale, p));
  }
  return NULL;
}

vkp_status_t vkp__infer_dynamic_quantize_linear(vkp_graph_t *g, vkp_node_t *n,
                                                vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0);
  vkp__set_out(out, VKP_DTYPE_UINT8, x->rank, x->shape);
  vkp__set_out(vkp__out(g, n, 1), VKP_DTYPE_FLOAT32, 0, NULL);
  vkp__set_out(vkp__out(g, n, 2), VKP_DTYPE_UINT8, 0, NULL);
  return NULL;
}

// ONNX's reference, in float32 arithmetic: the range [min(0, min x),
// max(0, max x)] mapped onto 0..255. An all-zero input (scale 0) gives
// scale 0, zero point 0 and zeros.
vkp_status_t vkp__eval_dynamic_quantize_linear(const vkp_node_t *n,
                                               const vkp_tensor_t *const *in,
                                               vkp_tensor_t *out) {
  (void)n;
  const vkp_tensor_t *x = in[0];
  int64_t count = (int64_t)vkp_tensor_numel(x);
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < count; ++i) {
    float v = (float)vkp__get_f(x, i);
    lo = v < lo ? v : lo;  // NaN is skipped
    hi = v > hi ? v : hi;
  }
  float scale = (hi - lo) / 255.0f;
  double zp = scale > 0 ? vkp__q_saturate(VKP_DTYPE_UINT8, (0.0f - lo) / scale) : 0;
  for (int64_t i = 0; i < count; ++i) {
    double q = scale > 0 ? nearbyint((float)vkp__get_f(x, i) / scale) + zp : 0;
    vkp__put_i(&out[0], i, (int64_t)vkp__q_saturate(VKP_DTYPE_UINT8, q));
  }
  vkp__put_f(&out[1], 0, scale);
  vkp__put_i(&out[2], 0, (int64_t)zp);
  return NULL;
}

// ---------------------------------------------------------------------------
// matmul_integer, qlinear_matmul

// The batch-broadcast matmul shape of a [..., M, K] and b [..., K, N], both
// at least 2-D (as the ONNX integer ops need).
static vkp_status_t vkp__qmatmul_shape(const vkp_value_t *a, const vkp_value_t *b,
                                       vkp_value_t *out, vkp_dtype_t dt) {
  if (a->rank < 2 || b->rank < 2)
    return VKP__ERR("inputs need rank >= 2 (got %d and %d)", (int)a->rank,
                    (int)b->rank);
  if (a->shape[a->rank - 1] != b->shape[b->rank - 2]) {
    char sa[128], sb[128];
    return VKP__ERR("inner dimensions differ (%s x %s)", vkp__fmt(a, sa, sizeof sa),
                    vkp__fmt(b, sb, sizeof sb));
  }
  int32_t ba = a->rank - 2, bb = b->rank - 2, batch = ba > bb ? ba : bb;
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < batch; ++i) {
    int32_t ia = i - (batch - ba), ib = i - (batch - bb);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return VKP__ERR("batch dimensions %lld and %lld do not broadcast",
                      (long long)da, (long long)db);
    shape[i] = da == 1 ? db : da;
  }
  if (batch + 2 > VKP_MAX_RANK) return VKP__ERR("result rank exceeds %d", VKP_MAX_RANK);
  shape[batch] = a->shape[a->rank - 2];
  shape[batch + 1] = b->shape[b->rank - 1];
  vkp__set_out(out, dt, batch + 2, shape);
  return NULL;
}

// A row / column parameter (zero point or scale) of a matmul operand with
// `m` rows (a) or columns (b): one value, or one per row / column.
static vkp_status_t vkp__qmatmul_param(const vkp_value_t *p, const char *what,
                                       int64_t m, vkp_dtype_set_t dtypes) {
  if (!p) return NULL;
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(p, what, dtypes));
  int64_t numel = 1;
  for (int32_t d = 0; d < p->rank; ++d) numel *= p->shape[d];
  if (p->rank <= 1 && (numel == 1 || numel == m)) return NULL;
  char s[128];
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "%s '%s' %s: one value or %lld (one per row of A / "
                         "column of B) are supported",
                         what, p->name, vkp__fmt(p, s, sizeof s), (long long)m);
}

vkp_status_t vkp__infer_matmul_integer(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 1),
                    *az = vkp__in(g, n, 2), *bz = vkp__in(g, n, 3);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(b, "B", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_shape(a, b, out, VKP_DTYPE_INT32));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(az, "a_zero_point", a->shape[a->rank - 2],
                                         VKP_DTYPE_SET(a->dtype)));
  return vkp__qmatmul_param(bz, "b_zero_point", b->shape[b->rank - 1],
                            VKP_DTYPE_SET(b->dtype));
}

vkp_status_t vkp__infer_qlinear_matmul(vkp_graph_t *g, vkp_node_t *n,
                                       vkp_value_t *out) {
  const vkp_value_t *a = vkp__in(g, n, 0), *b = vkp__in(g, n, 3),
                    *yz = vkp__in(g, n, 7);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(b, "b", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(yz, "y_zero_point", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_shape(a, b, out, yz->dtype));
  int64_t m = a->shape[a->rank - 2], nn = b->shape[b->rank - 1];
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(vkp__in(g, n, 1), "a_scale", m,
                                         VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(vkp__in(g, n, 2), "a_zero_point", m,
                                         VKP_DTYPE_SET(a->dtype)));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(vkp__in(g, n, 4), "b_scale", nn,
                                         VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(vkp__in(g, n, 5), "b_zero_point", nn,
                                         VKP_DTYPE_SET(b->dtype)));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(vkp__in(g, n, 6), "y_scale", 1,
                                         VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)));
  VKP_RETURN_IF_ERROR(vkp__qmatmul_param(yz, "y_zero_point", 1, VKP_OP_DTYPES_INT8));
  // A vkpipe extension (what QDQ folding of Gemm and MatMul + Add makes): an
  // int32 bias per column, added to the accumulator before requantizing.
  const vkp_value_t *bias = vkp__in(g, n, 8);
  if (bias) {
    VKP_RETURN_IF_ERROR(vkp__need_dtypes(bias, "bias", VKP_DTYPE_SET(VKP_DTYPE_INT32)));
    if (bias->rank != 1 || bias->shape[0] != nn)
      return VKP__ERR("bias '%s' must have shape [%lld]", bias->name, (long long)nn);
  }
  return NULL;
}

// Element i of a row / column parameter (one value or one per index).
static double vkp__qp_f(const vkp_tensor_t *p, int64_t i) {
  return vkp__get_f(p, vkp_tensor_numel(p) == 1 ? 0 : i);
}
static int64_t vkp__qp_i(const vkp_tensor_t *p, int64_t i) {
  return p ? vkp__get_i(p, vkp_tensor_numel(p) == 1 ? 0 : i) : 0;
}

// The integer product of (a - a_zp) and (b - b_zp) for every output
// element, handed to `store` with its row and column.
typedef void (*vkp__qstore_fn)(vkp_tensor_t *out, int64_t at, int64_t row,
                               int64_t col, int64_t acc, const void *ctx);

static void vkp__qmatmul(const vkp_tensor_t *a, const vkp_tensor_t *az,
                         const vkp_tensor_t *b, const vkp_tensor_t *bz,
                         vkp_tensor_t *out, vkp__qstore_fn store, const void *ctx) {
  int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1],
          nn = b->shape[b->rank - 1];
  int32_t br = out->rank - 2, ba = a->rank - 2, bb = b->rank - 2;
  int64_t sa[VKP_MAX_RANK], sb[VKP_MAX_RANK], stride_a = 1, stride_b = 1;
  for (int32_t d = br - 1; d >= 0; --d) {
    int32_t ia = d - (br - ba), ib = d - (br - bb);
    sa[d] = (ia < 0 || a->shape[ia] == 1) ? 0 : stride_a;
    sb[d] = (ib < 0 || b->shape[ib] == 1) ? 0 : stride_b;
    if (ia >= 0) stride_a *= a->shape[ia];
    if (ib >= 0) stride_b *= b->shape[ib];
  }
  int64_t batches = vkp__prod(out->shape, 0, br), idx[VKP_MAX_RANK] = {0};
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = vkp__dot(br, idx, sa) * m * k, ob = vkp__dot(br, idx, sb) * k * nn;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        int64_t acc = 0, za = vkp__qp_i(az, i), zb = vkp__qp_i(bz, j);
        for (int64_t p = 0; p < k; ++p)
          acc += (vkp__get_i(a, oa + i * k + p) - za) *
                 (vkp__get_i(b, ob + p * nn + j) - zb);
        store(out, (t * m + i) * nn + j, i, j, acc, ctx);
      }
    vkp__next_index(br, out->shape, idx);
  }
}

static void vkp__store_int32(vkp_tensor_t *out, int64_t at, int64_t row,
                             int64_t col, int64_t acc, const void *ctx) {
  (void)row;
  (void)col;
  (void)ctx;
  vkp__put_i(out, at, acc);
}

vkp_status_t vkp__eval_matmul_integer(const vkp_node_t *n,
                                      const vkp_tensor_t *const *in,
                                      vkp_tensor_t *out) {
  vkp__qmatmul(in[0], n->n_inputs > 2 ? in[2] : NULL, in[1],
               n->n_inputs > 3 ? in[3] : NULL, out, vkp__store_int32, NULL);
  return NULL;
}

// Requantization: y = saturate(round(acc * (s_a * s_b / s_y)) + z_y), the
// multiplier in float32 as ONNX's reference computes it.
typedef struct vkp__requant_t {
  const vkp_tensor_t *a_scale;  // per row (matmul), one value (conv)
  const vkp_tensor_t *b_scale;  // per column (matmul), per output channel (conv)
  const vkp_tensor_t *y_scale, *y_zp;
  const vkp_tensor_t *bias;     // qlinear_matmul's per column, or NULL
} vkp__requant_t;

static void vkp__store_requant(vkp_tensor_t *out, int64_t at, int64_t row,
                               int64_t col, int64_t acc, const void *ctx) {
  const vkp__requant_t *r = ctx;
  if (r->bias) acc += vkp__get_i(r->bias, col);
  float sa = (float)vkp__qp_f(r->a_scale, row), sb = (float)vkp__qp_f(r->b_scale, col);
  float mult = sa * sb / (float)vkp__get_f(r->y_scale, 0);
  double y = nearbyint((double)acc * mult) + (double)vkp__get_i(r->y_zp, 0);
  vkp__put_i(out, at, (int64_t)vkp__q_saturate(out->dtype, y));
}

vkp_status_t vkp__eval_qlinear_matmul(const vkp_node_t *n,
                                      const vkp_tensor_t *const *in,
                                      vkp_tensor_t *out) {
  vkp__requant_t r = {in[1], in[4], in[6], in[7], n->n_inputs > 8 ? in[8] : NULL};
  vkp__qmatmul(in[0], in[2], in[3], in[5], out, vkp__store_requant, &r);
  return NULL;
}

// ---------------------------------------------------------------------------
// conv_integer, qlinear_conv (2-D, NCHW)

static const int64_t vkp__zeros4[4] = {0, 0, 0, 0};
static const int64_t vkp__ones2[2] = {1, 1};

// The output shape of a 2-D integer convolution of x by w; canonical pads,
// strides and dilations written.
static vkp_status_t vkp__qconv_shape(vkp_node_t *n, const vkp_value_t *x,
                                     const vkp_value_t *w, vkp_value_t *out,
                                     vkp_dtype_t dt) {
  const int64_t *pads, *strides, *dil;
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "pads", 4, vkp__zeros4, &pads));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "strides", 2, vkp__ones2, &strides));
  VKP_RETURN_IF_ERROR(vkp__ints_exact(n, "dilations", 2, vkp__ones2, &dil));
  for (int i = 0; i < 4; ++i)
    if (pads[i] < 0 || (i < 2 && (strides[i] < 1 || dil[i] < 1)))
      return VKP__ERR("pads must be >= 0, strides and dilations >= 1");
  int64_t group = vkp_node_int(n, "group");
  if (x->rank != 4) return VKP__ERR("input '%s' must be 4-D NCHW (rank %d)", x->name, (int)x->rank);
  if (w->rank != 4) return VKP__ERR("weight '%s' must be 4-D (rank %d)", w->name, (int)w->rank);
  if (group < 1 || w->shape[1] * group != x->shape[1] || w->shape[0] % group)
    return VKP__ERR("group %lld does not fit %lld input channels and weight "
                    "[%lld, %lld, ...]",
                    (long long)group, (long long)x->shape[1], (long long)w->shape[0],
                    (long long)w->shape[1]);
  int64_t shape[4] = {x->shape[0], w->shape[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t span = dil[i] * (w->shape[2 + i] - 1) + 1;
    int64_t room = x->shape[2 + i] + pads[i] + pads[2 + i] - span;
    if (room < 0) return VKP__ERR("the kernel is larger than the padded input");
    shape[2 + i] = room / strides[i] + 1;
  }
  vkp__set_out(out, dt, 4, shape);
  return NULL;
}

// A per-tensor parameter, or one per output channel when `m` > 0.
static vkp_status_t vkp__qconv_param(const vkp_value_t *p, const char *what,
                                     int64_t m, vkp_dtype_set_t dtypes) {
  if (!p) return NULL;
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(p, what, dtypes));
  int64_t numel = 1;
  for (int32_t d = 0; d < p->rank; ++d) numel *= p->shape[d];
  if (p->rank <= 1 && (numel == 1 || (m > 0 && numel == m))) return NULL;
  char s[128];
  return VKP__ERR("%s '%s' %s must be one value%s", what, p->name,
                  vkp__fmt(p, s, sizeof s), m > 0 ? " or one per output channel" : "");
}

vkp_status_t vkp__infer_conv_integer(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 1);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(w, "w", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__qconv_shape(n, x, w, out, VKP_DTYPE_INT32));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 2), "x_zero_point", 0,
                                       VKP_DTYPE_SET(x->dtype)));
  return vkp__qconv_param(vkp__in(g, n, 3), "w_zero_point", w->shape[0],
                          VKP_DTYPE_SET(w->dtype));
}

vkp_status_t vkp__infer_qlinear_conv(vkp_graph_t *g, vkp_node_t *n, vkp_value_t *out) {
  const vkp_value_t *x = vkp__in(g, n, 0), *w = vkp__in(g, n, 3),
                    *yz = vkp__in(g, n, 7), *bias = vkp__in(g, n, 8);
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(w, "w", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__need_dtypes(yz, "y_zero_point", VKP_OP_DTYPES_INT8));
  VKP_RETURN_IF_ERROR(vkp__qconv_shape(n, x, w, out, yz->dtype));
  vkp_dtype_set_t f32 = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32);
  int64_t m = w->shape[0];
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 1), "x_scale", 0, f32));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 2), "x_zero_point", 0,
                                       VKP_DTYPE_SET(x->dtype)));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 4), "w_scale", m, f32));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 5), "w_zero_point", m,
                                       VKP_DTYPE_SET(w->dtype)));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(vkp__in(g, n, 6), "y_scale", 0, f32));
  VKP_RETURN_IF_ERROR(vkp__qconv_param(yz, "y_zero_point", 0, VKP_OP_DTYPES_INT8));
  if (bias) {
    VKP_RETURN_IF_ERROR(vkp__need_dtypes(bias, "B", VKP_DTYPE_SET(VKP_DTYPE_INT32)));
    if (bias->rank != 1 || bias->shape[0] != m)
      return VKP__ERR("bias '%s' must have shape [%lld]", bias->name, (long long)m);
  }
  return NULL;
}

// sum over the window of (x - x_zp) * (w - w_zp) (+ bias) for every output
// element; the padding contributes nothing (it is x_zp in x's terms).
static void vkp__qconv(const vkp_node_t *n, const vkp_tensor_t *x,
                       const vkp_tensor_t *xz, const vkp_tensor_t *w,
                       const vkp_tensor_t *wz, const vkp_tensor_t *bias,
                       vkp_tensor_t *out, vkp__qstore_fn store, const void *ctx) {
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int64_t group = vkp_node_int(n, "group");
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t M = w->shape[0], CG = w->shape[1], KH = w->shape[2], KW = w->shape[3];
  int64_t OH = out->shape[2], OW = out->shape[3], MG = M / group;
  int64_t zx = vkp__qp_i(xz, 0);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t m = 0; m < M; ++m) {
      int64_t zw = vkp__qp_i(wz, m), c0 = m / MG * CG;
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          int64_t acc = bias ? vkp__get_i(bias, m) : 0;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t ky = 0; ky < KH; ++ky) {
              int64_t iy = oy * strides[0] - pads[0] + ky * dil[0];
              if (iy < 0 || iy >= H) continue;
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t ix = ox * strides[1] - pads[1] + kx * dil[1];
                if (ix < 0 || ix >= W) continue;
                acc += (vkp__get_i(x, ((b * C + c0 + c) * H + iy) * W + ix) - zx) *
                       (vkp__get_i(w, ((m * CG + c) * KH + ky) * KW + kx) - zw);
              }
            }
          store(out, ((b * M + m) * OH + oy) * OW + ox, 0, m, acc, ctx);
        }
    }
}

vkp_status_t vkp__eval_conv_integer(const vkp_node_t *n,
                                    const vkp_tensor_t *const *in,
                                    vkp_tensor_t *out) {
  vkp__qconv(n, in[0], n->n_inputs > 2 ? in[2] : NULL, in[1],
             n->n_inputs > 3 ? in[3] : NULL, NULL, out, vkp__store_int32, NULL);
  return NULL;
}

vkp_status_t vkp__eval_qlinear_conv(const vkp_node_t *n,
                                    const vkp_tensor_t *const *in,
                                    vkp_tensor_t *out) {
  vkp__requant_t r = {in[1], in[4], in[6], in[7], NULL};
  vkp__qconv(n, in[0], in[2], in[3], in[5], n->n_inputs > 8 ? in[8] : NULL, out,
             vkp__store_requant, &r);
  return NULL;
}
