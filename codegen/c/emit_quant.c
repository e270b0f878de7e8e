// SPDX-License-Identifier: Apache-2.0
// C kernel emitters for the quantization ops: quantize_linear,
// dequantize_linear, dynamic_quantize_linear (loops over the elements, the
// scale and zero point of each found per tensor, per axis or per block),
// matmul_integer (int32 rows accumulated over k, the inner loop over a
// row of B), qlinear_matmul (the packed 8-bit GEMM of prelude_quant.c; that
// loop when A's scale or zero point is per row), conv_integer and qlinear_conv (direct
// convolution, one int32 output plane at a time). Float data is float32
// (the generator's op table refuses other float dtypes for these ops).
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

static int64_t vkp__numel(const vkp_value_t *v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v->rank; ++d) n *= v->shape[d];
  return n;
}

static int64_t vkp__prod(const int64_t *s, int32_t from, int32_t to) {
  int64_t p = 1;
  for (int32_t d = from; d < to; ++d) p *= s[d];
  return p;
}

// The range of a quantized dtype as C float literals.
static void vkp__range(vkp_dtype_t dt, const char **lo, const char **hi) {
  switch (dt) {
    case VKP_DTYPE_INT8: *lo = "-128.0f"; *hi = "127.0f"; return;
    case VKP_DTYPE_INT16: *lo = "-32768.0f"; *hi = "32767.0f"; return;
    case VKP_DTYPE_UINT16: *lo = "0.0f"; *hi = "65535.0f"; return;
    default: *lo = "0.0f"; *hi = "255.0f"; return;
  }
}

// ---------------------------------------------------------------------------
// quantize_linear, dequantize_linear

// Generated code names its locals so that no value's C name can clash with
// them (value names starting with 'i' or 'l', and "o", "j", "acc", are
// always prefixed; codegen/c/emit.c).

// Loops over x as [outer, dim, inner] with `ip` the parameter index of the
// element `i`, per the node's axis and block_size and the scale's shape
// (as graph/op_quant.c maps them); the statement goes in the innermost loop.
static void vkp__emit_q_loops(vkp__c_kernel_t *k, const char *stmt) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *s = vkp__c_in(k, 1);
  int64_t axis = vkp_node_int(n, "axis"), block = vkp_node_int(n, "block_size");
  int64_t count = vkp__numel(x), outer = 1, dim = 1, inner = count;
  bool per_tensor = block == 0 && s->rank <= 1 && vkp__numel(s) == 1;
  if (!per_tensor) {
    outer = vkp__prod(x->shape, 0, (int32_t)axis);
    dim = x->shape[axis];
    inner = vkp__prod(x->shape, (int32_t)axis + 1, x->rank);
  }
  vkp__sb_t *sb = k->body;
  vkp__sb_printf(sb,
                 "  for (ptrdiff_t o = 0; o < %lld; ++o)\n"
                 "    for (ptrdiff_t ia = 0; ia < %lld; ++ia) {\n",
                 (long long)outer, (long long)dim);
  if (per_tensor) vkp__sb_append(sb, "      const ptrdiff_t ip0 = 0, ips = 0;\n");
  else if (block == 0) vkp__sb_append(sb, "      const ptrdiff_t ip0 = ia, ips = 0;\n");
  else
    vkp__sb_printf(sb, "      const ptrdiff_t ip0 = (o * %lld + ia / %lld) * %lld, ips = 1;\n",
                   (long long)((dim + block - 1) / block), (long long)block,
                   (long long)inner);
  vkp__sb_printf(sb,
                 "      (void)o;\n      (void)ips;\n"
                 "      for (ptrdiff_t j = 0; j < %lld; ++j) {\n"
                 "        const ptrdiff_t i = (o * %lld + ia) * %lld + j, ip = ip0 + j * ips;\n"
                 "        %s\n      }\n    }\n",
                 (long long)inner, (long long)dim, (long long)inner, stmt);
}

vkp_status_t vkp__c_emit_quantize_linear(vkp__c_kernel_t *k) {
  const char *x = k->in[0], *s = k->in[1], *z = k->node->n_inputs > 2 ? k->in[2] : NULL;
  const vkp_value_t *y = vkp__c_out(k);
  const char *lo, *hi;
  vkp__range(y->dtype, &lo, &hi);
  char stmt[512];
  snprintf(stmt, sizeof stmt,
           "%s[i] = (%s)vkp_q_sat(nearbyintf(%s[i] / %s[ip])%s%s%s, %s, %s);", k->out,
           vkp__c_type(y->dtype), x, s, z ? " + (float)" : "", z ? z : "", z ? "[ip]" : "",
           lo, hi);
  vkp__emit_q_loops(k, stmt);
  return NULL;
}

vkp_status_t vkp__c_emit_dequantize_linear(vkp__c_kernel_t *k) {
  const char *x = k->in[0], *s = k->in[1], *z = k->node->n_inputs > 2 ? k->in[2] : NULL;
  char stmt[512];
  snprintf(stmt, sizeof stmt,
           "%s[i] = (float)((double)((int64_t)%s[i]%s%s%s) * (double)%s[ip]);", k->out, x,
           z ? " - (int64_t)" : "", z ? z : "", z ? "[ip]" : "", s);
  vkp__emit_q_loops(k, stmt);
  return NULL;
}

vkp_status_t vkp__c_emit_dynamic_quantize_linear(vkp__c_kernel_t *k) {
  int64_t count = vkp__numel(vkp__c_in(k, 0));
  const char *x = k->in[0], *y = k->outs[0], *s = k->outs[1], *z = k->outs[2];
  vkp__sb_printf(k->body,
                 "  float lmin = 0.0f, lmax = 0.0f;\n"
                 "  for (ptrdiff_t i = 0; i < %lld; ++i) {\n"
                 "    lmin = %s[i] < lmin ? %s[i] : lmin;\n"
                 "    lmax = %s[i] > lmax ? %s[i] : lmax;\n  }\n"
                 "  const float ls = (lmax - lmin) / 255.0f;\n"
                 "  const float lz = ls > 0.0f ? vkp_q_sat(nearbyintf((0.0f - lmin) / ls), "
                 "0.0f, 255.0f) : 0.0f;\n"
                 "  for (ptrdiff_t i = 0; i < %lld; ++i)\n"
                 "    %s[i] = ls > 0.0f ? (uint8_t)vkp_q_sat(nearbyintf(%s[i] / ls) + lz, "
                 "0.0f, 255.0f) : 0;\n"
                 "  %s[0] = ls;\n  %s[0] = (uint8_t)lz;\n",
                 (long long)count, x, x, x, x, (long long)count, y, x, s, z);
  return NULL;
}

// ---------------------------------------------------------------------------
// matmul_integer, qlinear_matmul

// The element offset of batch `t`'s matrix in operand v (broadcast dims
// stay put) as a C expression over the output's batch dims.
static void vkp__batch_offset(vkp__sb_t *sb, const vkp_value_t *y, const vkp_value_t *v) {
  int32_t br = y->rank - 2, vb = v->rank - 2;
  int64_t stride = v->shape[v->rank - 1] * v->shape[v->rank - 2], after = 1;
  bool any = false;
  for (int32_t d = br - 1; d >= 0; --d) {
    int32_t vd = d - (br - vb);
    if (vd >= 0 && v->shape[vd] != 1) {
      vkp__sb_printf(sb, "%s(it / %lld %% %lld) * %lld", any ? " + " : "", (long long)after,
                     (long long)y->shape[d], (long long)stride);
      any = true;
    }
    if (vd >= 0) stride *= v->shape[vd];
    after *= y->shape[d];
  }
  if (!any) vkp__sb_append(sb, "0");
}

// "name[i]" for a parameter with one value per index, "name[0]" for one
// value.
static void vkp__param(char *buf, size_t size, const vkp__c_kernel_t *k, int32_t i,
                       const char *idx) {
  const vkp_value_t *v = vkp__c_in(k, i);
  if (!v) snprintf(buf, size, "0");
  else snprintf(buf, size, "%s[%s]", k->in[i], vkp__numel(v) == 1 ? "0" : idx);
}

static vkp_status_t vkp__emit_qmatmul(vkp__c_kernel_t *k, bool qlinear) {
  // Inputs: matmul_integer (A, B, a_zp, b_zp); qlinear_matmul (a, a_scale,
  // a_zp, b, b_scale, b_zp, y_scale, y_zp).
  int32_t ia = 0, ib = qlinear ? 3 : 1, izb = qlinear ? 5 : 3;
  const vkp_value_t *a = vkp__c_in(k, ia), *b = vkp__c_in(k, ib), *y = vkp__c_out(k);
  int64_t m = a->shape[a->rank - 2], kk = a->shape[a->rank - 1], nn = b->shape[b->rank - 1];
  int64_t batches = vkp__prod(y->shape, 0, y->rank - 2);
  char za[128], zb[128], row[256];
  vkp__param(za, sizeof za, k, 2, "i");
  vkp__param(zb, sizeof zb, k, izb, "j");
  // matmul_integer accumulates straight into its int32 output row,
  // qlinear_matmul into a scratch row it then requantizes.
  if (qlinear) snprintf(row, sizeof row, "(int32_t *)scratch");
  else snprintf(row, sizeof row, "%s + (it * %lld + i) * %lld", k->out, (long long)m,
                (long long)nn);
  vkp__sb_t *sb = k->body;
  const vkp_value_t *sav = qlinear ? vkp__c_in(k, 1) : NULL, *zav = vkp__c_in(k, 2);
  bool bias = qlinear && k->node->n_inputs > 8 && k->in[8];
  if (qlinear && vkp__numel(sav) == 1 && (!zav || vkp__numel(zav) == 1)) {
    // The packed 8-bit GEMM (vkp_q_matmul, prelude_quant.c); a 2-D B serves
    // every row of A's batches in one call.
    bool flat = b->rank == 2;
    long long rows = flat ? batches * m : m, calls = flat ? 1 : batches;
    long long k4 = (kk + 3) / 4, nt = (nn + 15) / 16;
    long long bytes = rows * k4 * 4 + nt * k4 * 64 + 4 * (5 * nt * 16 + rows) + 256;
    // A constant 2-D B is packed once, at load.
    int32_t packed_id = -1;
    if (flat) {
      char code[256];
      snprintf(code, sizeof code, "vkp_q_matmul_prepack_b(src, %d, %lld, %lld, dst);",
               b->dtype == VKP_DTYPE_INT8, (long long)kk, (long long)nn);
      packed_id = vkp__c_emit_prepack(k, ib, nt * (k4 * 16 + 16), code);
    }
    char bpacked[64] = "NULL";
    if (packed_id >= 0) snprintf(bpacked, sizeof bpacked, "packed + VKP_PACKED_%d_AT", (int)packed_id);
    const vkp_value_t *zbv = vkp__c_in(k, izb), *sbv = vkp__c_in(k, 4);
    const char *lo, *hi;
    vkp__range(y->dtype, &lo, &hi);
    vkp__sb_printf(sb, "  for (ptrdiff_t it = 0; it < %lld; ++it) {\n    const %s *la = %s + ",
                   calls, vkp__c_type(a->dtype), k->in[ia]);
    if (flat) vkp__sb_append(sb, "0");
    else vkp__batch_offset(sb, y, a);
    vkp__sb_printf(sb, ";\n    const %s *lb = %s + ", vkp__c_type(b->dtype), k->in[ib]);
    if (flat) vkp__sb_append(sb, "0");
    else vkp__batch_offset(sb, y, b);
    vkp__sb_printf(sb,
                   ";\n    vkp_q_matmul(la, %d, (int32_t)%s%s, lb, %d, %s%s, %lld, %s, %s[0], %s, "
                   "%lld, %s[0], (int32_t)%s[0], %s, %s,\n                 %s + it * %lld, "
                   "%d, %lld, %lld, %lld, %s, (uint8_t *)scratch);\n  }\n",
                   a->dtype == VKP_DTYPE_INT8, zav ? k->in[2] : "0", zav ? "[0]" : "",
                   b->dtype == VKP_DTYPE_INT8, zbv ? "(const void *)" : "NULL",
                   zbv ? k->in[izb] : "", (long long)(zbv ? vkp__numel(zbv) : 0),
                   bias ? k->in[8] : "NULL", k->in[1], k->in[4], (long long)vkp__numel(sbv),
                   k->in[6], k->in[7], lo, hi, k->out, rows * nn,
                   y->dtype == VKP_DTYPE_INT8, rows, (long long)nn, (long long)kk, bpacked);
    k->scratch_floats = (size_t)(bytes / 4 + 16);
    return NULL;
  }
  vkp__sb_printf(sb, "  for (ptrdiff_t it = 0; it < %lld; ++it) {\n    const %s *la = %s + ",
                 (long long)batches, vkp__c_type(a->dtype), k->in[ia]);
  vkp__batch_offset(sb, y, a);
  vkp__sb_printf(sb, ";\n    const %s *lb = %s + ", vkp__c_type(b->dtype), k->in[ib]);
  vkp__batch_offset(sb, y, b);
  vkp__sb_printf(sb,
                 ";\n    (void)it;\n"
                 "    for (ptrdiff_t i = 0; i < %lld; ++i) {\n"
                 "      int32_t *lyr = %s;\n"
                 "      const int32_t lza = (int32_t)%s;\n"
                 "      for (ptrdiff_t j = 0; j < %lld; ++j) lyr[j] = %s%s;\n"
                 "      for (ptrdiff_t ip = 0; ip < %lld; ++ip) {\n"
                 "        const int32_t lav = (int32_t)la[i * %lld + ip] - lza;\n"
                 "        const %s *lbr = lb + ip * %lld;\n"
                 "        for (ptrdiff_t j = 0; j < %lld; ++j)\n"
                 "          lyr[j] += lav * ((int32_t)lbr[j] - (int32_t)%s);\n      }\n",
                 (long long)m, row, za, (long long)nn, bias ? k->in[8] : "0",
                 bias ? "[j]" : "", (long long)kk, (long long)kk,
                 vkp__c_type(b->dtype), (long long)nn, (long long)nn, zb);
  if (qlinear) {
    const char *lo, *hi;
    vkp__range(y->dtype, &lo, &hi);
    char sa[128], sbv[128];
    vkp__param(sa, sizeof sa, k, 1, "i");
    vkp__param(sbv, sizeof sbv, k, 4, "j");
    vkp__sb_printf(sb,
                   "      %s *lyq = %s + (it * %lld + i) * %lld;\n"
                   "      for (ptrdiff_t j = 0; j < %lld; ++j) {\n"
                   "        const float lmult = %s * %s / %s[0];\n"
                   "        lyq[j] = (%s)vkp_q_requant(lyr[j], lmult, (float)%s[0], %s, %s);\n"
                   "      }\n",
                   vkp__c_type(y->dtype), k->out, (long long)m, (long long)nn,
                   (long long)nn, sa, sbv, k->in[6], vkp__c_type(y->dtype), k->in[7], lo, hi);
    k->scratch_floats = (size_t)nn + 1;
  }
  vkp__sb_append(sb, "    }\n  }\n");
  return NULL;
}

vkp_status_t vkp__c_emit_matmul_integer(vkp__c_kernel_t *k) {
  return vkp__emit_qmatmul(k, false);
}

vkp_status_t vkp__c_emit_qlinear_matmul(vkp__c_kernel_t *k) {
  return vkp__emit_qmatmul(k, true);
}

// ---------------------------------------------------------------------------
// conv_integer, qlinear_conv

// Per image and output channel: an int32 plane (the output itself for
// conv_integer, scratch for qlinear_conv) starts at the bias, gathers every
// tap (x - x_zp) * (w - w_zp) over the output columns whose input column is
// inside the image (no test in the inner loop), and qlinear_conv then
// requantizes it.
static vkp_status_t vkp__emit_qconv(vkp__c_kernel_t *k, bool qlinear) {
  const vkp_node_t *n = k->node;
  int32_t iw = qlinear ? 3 : 1, izx = 2, izw = qlinear ? 5 : 3;
  const vkp_value_t *x = vkp__c_in(k, 0), *w = vkp__c_in(k, iw), *y = vkp__c_out(k);
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int64_t group = vkp_node_int(n, "group");
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t M = w->shape[0], CG = w->shape[1], KH = w->shape[2], KW = w->shape[3];
  int64_t OH = y->shape[2], OW = y->shape[3];
  if (qlinear && group == 1 && w->dtype == VKP_DTYPE_INT8) {
    // The 8-bit GEMM over an im2col (vkp_q_conv_gemm, prelude_quant.c).
    const vkp_value_t *zwv = vkp__c_in(k, izw), *swv = vkp__c_in(k, 4);
    const char *lo, *hi;
    vkp__range(y->dtype, &lo, &hi);
    int64_t KK = CG * KH * KW, P = OH * OW, k4 = (KK + 3) / 4, pt = (P + 15) / 16;
    int64_t bytes = 2 * pt * k4 * 64 + M * k4 * 4 + 4 * (M + pt * 16) + 256;
    int64_t m_pad = (M + 15) / 16 * 16;
    bool bias = n->n_inputs > 8 && k->in[8];
    char sw[128];
    vkp__param(sw, sizeof sw, k, 4, "im");
    vkp__sb_printf(
        k->body,
        "  float *lmu = scratch;\n"
        "  for (ptrdiff_t im = 0; im < %lld; ++im) lmu[im] = %s[0] * %s / %s[0];\n"
        "  for (ptrdiff_t ib = 0; ib < %lld; ++ib)\n"
        "    vkp_q_conv_gemm((const uint8_t *)%s + ib * %lld, %d, (int32_t)%s[0], "
        "(const int8_t *)%s, %s%s, %lld, %s, lmu, %lld, (int32_t)%s[0], %s, %s, "
        "(char *)%s + ib * %lld, %d, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, "
        "%lld, %lld, %lld, %lld, %lld, %lld, (uint8_t *)(scratch + %lld));\n",
        (long long)M, k->in[1], sw, k->in[6], (long long)N, k->in[0], (long long)(C * H * W),
        x->dtype == VKP_DTYPE_INT8, k->in[2], k->in[iw], zwv ? "(const int8_t *)" : "NULL",
        zwv ? k->in[izw] : "", (long long)(zwv ? vkp__numel(zwv) : 0),
        bias ? k->in[8] : "NULL", (long long)vkp__numel(swv), k->in[7], lo, hi, k->out,
        (long long)(M * P), y->dtype == VKP_DTYPE_INT8, (long long)C, (long long)H,
        (long long)W, (long long)M, (long long)KH, (long long)KW, (long long)OH,
        (long long)OW, (long long)strides[0], (long long)strides[1], (long long)pads[0],
        (long long)pads[1], (long long)dil[0], (long long)dil[1], (long long)m_pad);
    k->scratch_floats = (size_t)(m_pad + bytes / 4 + 16);
    return NULL;
  }
  char zx[128], zw[128], plane[256];
  vkp__param(zx, sizeof zx, k, izx, "0");
  vkp__param(zw, sizeof zw, k, izw, "im");
  if (qlinear && group == C && M == C && CG == 1 && KH * KW <= 121 &&
      strides[0] * strides[1] <= 16 &&
      (y->dtype == VKP_DTYPE_INT8 || y->dtype == VKP_DTYPE_UINT8)) {
    // Depthwise: the float depthwise kernel on exact integer values
    // (vkp_q_conv_depthwise, prelude_quant.c); windows of at most 121 taps,
    // so every partial sum stays exact in float.
    const char *lo, *hi;
    vkp__range(y->dtype, &lo, &hi);
    char sw[128];
    vkp__param(sw, sizeof sw, k, 4, "im");
    int64_t KK = KH * KW, wf_floats = (C * KK + 15) / 16 * 16;
    bool bias = n->n_inputs > 8 && k->in[8];
    vkp__sb_printf(k->body,
                   "  float *lwf = scratch, *lmu = scratch + %lld;\n"
                   "  for (ptrdiff_t im = 0; im < %lld; ++im) {\n"
                   "    const int32_t lzw = (int32_t)%s;\n"
                   "    for (ptrdiff_t it = 0; it < %lld; ++it)\n"
                   "      lwf[im * %lld + it] = (float)((int32_t)%s[im * %lld + it] - lzw);\n"
                   "    lmu[im] = %s[0] * %s / %s[0];\n"
                   "  }\n",
                   (long long)wf_floats, (long long)C, zw, (long long)KK, (long long)KK,
                   k->in[iw], (long long)KK, k->in[1], sw, k->in[6]);
    vkp__sb_printf(
        k->body,
        "  for (ptrdiff_t ib = 0; ib < %lld; ++ib)\n"
        "    vkp_q_conv_depthwise((const char *)%s + ib * %lld, %d, (int32_t)%s, lwf, %s, lmu,\n"
        "                         (float)%s[0], %s, %s, (char *)%s + ib * %lld, %d, %lld, %lld,\n"
        "                         %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,\n"
        "                         %lld, scratch + %lld);\n",
        (long long)N, k->in[0], (long long)(C * H * W), x->dtype == VKP_DTYPE_INT8, zx,
        bias ? k->in[8] : "NULL", k->in[7], lo, hi, k->out, (long long)(C * OH * OW),
        y->dtype == VKP_DTYPE_INT8, (long long)C, (long long)H, (long long)W, (long long)KH,
        (long long)KW, (long long)strides[0], (long long)strides[1], (long long)pads[0],
        (long long)pads[1], (long long)dil[0], (long long)dil[1], (long long)OH,
        (long long)OW, (long long)(wf_floats + (C + 15) / 16 * 16));
    k->scratch_floats = (size_t)(wf_floats + (C + 15) / 16 * 16);
    snprintf(k->scratch_expr, sizeof k->scratch_expr,
             "VKP_STAGE_THREADS * VKP_Q_DW_WORKER_FLOATS(%lld, %lld, %lld, %lld, %lld, %lld, "
             "%lld, %lld, %lld, %lld)",
             (long long)H, (long long)W, (long long)KH, (long long)KW, (long long)strides[0],
             (long long)strides[1], (long long)dil[0], (long long)dil[1], (long long)OH,
             (long long)OW);
    return NULL;
  }
  if (qlinear) snprintf(plane, sizeof plane, "(int32_t *)scratch");
  else snprintf(plane, sizeof plane, "%s + (ib * %lld + im) * %lld", k->out, (long long)M,
                (long long)(OH * OW));
  bool bias = qlinear && n->n_inputs > 8 && k->in[8];
  vkp__sb_printf(
      k->body,
      "  for (ptrdiff_t ib = 0; ib < %lld; ++ib)\n"
      "    for (ptrdiff_t im = 0; im < %lld; ++im) {\n"
      "      int32_t *acc = %s;\n"
      "      const int32_t lzx = (int32_t)%s, lzw = (int32_t)%s;\n"
      "      const ptrdiff_t ic0 = im / %lld * %lld;\n"
      "      for (ptrdiff_t iq = 0; iq < %lld; ++iq) acc[iq] = %s%s;\n"
      "      for (ptrdiff_t ic = 0; ic < %lld; ++ic)\n"
      "        for (ptrdiff_t iky = 0; iky < %lld; ++iky)\n"
      "          for (ptrdiff_t ikx = 0; ikx < %lld; ++ikx) {\n"
      "            const int32_t lwv = (int32_t)%s[((im * %lld + ic) * %lld + iky) * %lld + ikx] - lzw;\n"
      "            const ptrdiff_t idx = ikx * %lld - %lld;\n"
      "            ptrdiff_t iox0 = idx < 0 ? (-idx + %lld - 1) / %lld : 0;\n"
      "            ptrdiff_t iox1 = %lld - idx <= 0 ? 0 : (%lld - idx + %lld - 1) / %lld;\n"
      "            if (iox1 > %lld) iox1 = %lld;\n"
      "            for (ptrdiff_t ioy = 0; ioy < %lld; ++ioy) {\n"
      "              const ptrdiff_t iy = ioy * %lld - %lld + iky * %lld;\n"
      "              if (iy < 0 || iy >= %lld) continue;\n"
      "              const %s *lxr = %s + ((ib * %lld + ic0 + ic) * %lld + iy) * %lld;\n"
      "              int32_t *lar = acc + ioy * %lld;\n"
      "              for (ptrdiff_t iox = iox0; iox < iox1; ++iox)\n"
      "                lar[iox] += lwv * ((int32_t)lxr[iox * %lld + idx] - lzx);\n"
      "            }\n          }\n",
      (long long)N, (long long)M, plane, zx, zw, (long long)(M / group), (long long)CG,
      (long long)(OH * OW), bias ? k->in[8] : "0", bias ? "[im]" : "", (long long)CG,
      (long long)KH, (long long)KW, k->in[iw], (long long)CG, (long long)KH, (long long)KW,
      (long long)dil[1], (long long)pads[1], (long long)strides[1], (long long)strides[1],
      (long long)W, (long long)W, (long long)strides[1], (long long)strides[1],
      (long long)OW, (long long)OW, (long long)OH, (long long)strides[0], (long long)pads[0],
      (long long)dil[0], (long long)H, vkp__c_type(x->dtype), k->in[0], (long long)C,
      (long long)H, (long long)W, (long long)OW, (long long)strides[1]);
  if (qlinear) {
    const char *lo, *hi;
    vkp__range(y->dtype, &lo, &hi);
    char sw[128];
    vkp__param(sw, sizeof sw, k, 4, "im");
    vkp__sb_printf(k->body,
                   "      const float lmult = %s[0] * %s / %s[0];\n"
                   "      %s *lyq = %s + (ib * %lld + im) * %lld;\n"
                   "      for (ptrdiff_t iq = 0; iq < %lld; ++iq)\n"
                   "        lyq[iq] = (%s)vkp_q_requant(acc[iq], lmult, (float)%s[0], %s, %s);\n",
                   k->in[1], sw, k->in[6], vkp__c_type(y->dtype), k->out, (long long)M,
                   (long long)(OH * OW), (long long)(OH * OW), vkp__c_type(y->dtype),
                   k->in[7], lo, hi);
    k->scratch_floats = (size_t)(OH * OW) + 1;
  }
  vkp__sb_append(k->body, "    }\n");
  return NULL;
}

vkp_status_t vkp__c_emit_conv_integer(vkp__c_kernel_t *k) { return vkp__emit_qconv(k, false); }

vkp_status_t vkp__c_emit_qlinear_conv(vkp__c_kernel_t *k) { return vkp__emit_qconv(k, true); }
