// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the linear quantizers, one invocation per element
// through shaders/element.comp: quantize_linear (x / scale in x's
// precision, rounded half to even, plus the zero point, saturated to the
// output's range; NaN gives 0) and dequantize_linear ((x - zero point) *
// scale). The scale / zero point pair is per tensor, per axis or per block,
// as in the reference (graph/op_quant.c); vkp_q_param(o) picks it. And
// matmul_integer, a direct exact integer product.
#include <math.h>
#include <stdio.h>

#include "base/status_macros.h"
#include "codegen/spirv/kernels.h"

// uint vkp_q_param(uint o): the index of element o's scale / zero point.
static void vkp__emit_q_param(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *scale = vkp__spv_input(e->g, n, 1);
  int64_t block = vkp_node_int(n, "block_size"), axis = vkp_node_int(n, "axis");
  uint64_t numel = vkp__spv_numel(scale);
  vkp__sb_t *h = &e->head;
  if (block == 0 && scale->rank <= 1 && numel == 1) {
    vkp__sb_append(h, "uint vkp_q_param(uint o) { return 0u; }\n");
    return;
  }
  uint64_t inner = 1, dim = (uint64_t)x->shape[axis];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= (uint64_t)x->shape[d];
  if (!inner || !dim) {
    vkp__sb_append(h, "uint vkp_q_param(uint o) { return 0u; }\n");
    return;
  }
  if (block == 0) {
    vkp__sb_printf(h, "uint vkp_q_param(uint o) { return (o / %lluu) %% %lluu; }\n",
                   (unsigned long long)inner, (unsigned long long)dim);
    return;
  }
  uint64_t blocks = (dim + (uint64_t)block - 1) / (uint64_t)block;
  vkp__sb_printf(h,
                 "uint vkp_q_param(uint o) {\n"
                 "  uint a = (o / %lluu) %% %lluu, outer = o / %lluu / %lluu;\n"
                 "  return (outer * %lluu + a / %lluu) * %lluu + o %% %lluu;\n}\n",
                 (unsigned long long)inner, (unsigned long long)dim,
                 (unsigned long long)inner, (unsigned long long)dim,
                 (unsigned long long)blocks, (unsigned long long)block,
                 (unsigned long long)inner, (unsigned long long)inner);
}

vkp_status_t vkp__spv_emit_quantize_linear(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  bool zp = vkp__spv_input(e->g, n, 2) != NULL;
  double lo = 0, hi = 0;
  switch (y->dtype) {
    case VKP_DTYPE_INT8: lo = -128; hi = 127; break;
    case VKP_DTYPE_UINT8: lo = 0; hi = 255; break;
    case VKP_DTYPE_INT16: lo = -32768; hi = 32767; break;
    case VKP_DTYPE_UINT16: lo = 0; hi = 65535; break;
    default:
      return vkp_status_make(VKP_STATUS_UNSUPPORTED, "node '%s': quantizing to %s",
                             n->name, vkp_dtype_name(y->dtype));
  }
  vkp__emit_q_param(e, n);
  // x / scale rounds to x's precision first (a float16 quotient through
  // packHalf2x16), as ONNX computes it in x's type.
  const char *t = vkp__spv_value_type(x->dtype);
  const char *q = x->dtype == VKP_DTYPE_FLOAT16
                      ? "unpackHalf2x16(packHalf2x16(vec2(vkp_div(LD0(o), LD1(p)), 0.0))).x"
                      : "vkp_div(LD0(o), LD1(p))";
  vkp__sb_printf(&e->head,
                 "ACC_T vkp_element(uint o) {\n"
                 "  uint p = vkp_q_param(o);\n"
                 "  %s q = roundEven(%s(%s)) + %s(%s);\n"
                 "  if (isnan(q)) return ACC_T(0);\n"
                 "  return ACC_T(clamp(q, %s(%.1f), %s(%.1f)));\n}\n",
                 t, t, q, t, zp ? "LD2(p)" : "0", t, lo, t, hi);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}

vkp_status_t vkp__spv_emit_dequantize_linear(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  bool zp = vkp__spv_input(e->g, n, 2) != NULL;
  vkp__emit_q_param(e, n);
  // (x - zero point) in int (exact for 8- and 16-bit data, signed even
  // for unsigned ones), then times the scale.
  vkp__sb_printf(&e->head,
                 "ACC_T vkp_element(uint o) {\n"
                 "  uint p = vkp_q_param(o);\n"
                 "  return ACC_T(int(LD0(o))%s) * LD1(p);\n}\n",
                 zp ? " - int(LD2(p))" : "");
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}

// matmul_integer: one output element per invocation, (a - a_zp) . (b -
// b_zp) accumulated exactly in int over K (int32 as ONNX's accumulator; 8-bit
// operands cannot overflow it below 2^17 terms); batch dims broadcast as
// matmul's. Zero points are one value or one per row of A / column of B.
vkp_status_t vkp__spv_emit_matmul_integer(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *a = vkp__spv_input(e->g, n, 0), *b = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t m = a->shape[a->rank - 2], k = a->shape[a->rank - 1], nn = b->shape[b->rank - 1];
  int32_t br = y->rank - 2, ba = a->rank - 2, bb = b->rank - 2;
  int64_t coef_a[VKP_MAX_RANK], coef_b[VKP_MAX_RANK], sa = m * k, sb = k * nn;
  for (int32_t d = br - 1; d >= 0; --d) {
    int32_t ia = d - (br - ba), ib = d - (br - bb);
    coef_a[d] = (ia >= 0 && a->shape[ia] != 1) ? sa : 0;
    coef_b[d] = (ib >= 0 && b->shape[ib] != 1) ? sb : 0;
    if (ia >= 0) sa *= a->shape[ia];
    if (ib >= 0) sb *= b->shape[ib];
  }
  vkp__sb_t *h = &e->head;
  vkp__spv_affine(h, "vkp_a_batch", br, y->shape, coef_a, 0);
  vkp__spv_affine(h, "vkp_b_batch", br, y->shape, coef_b, 0);
  // Zero points: binding j of each present one, per row / column or one.
  int32_t at[4];
  for (int32_t i = 0, j = 0; i < 4; ++i) at[i] = i < n->n_inputs && n->inputs[i] >= 0 ? j++ : -1;
  char za[64] = "0", zb[64] = "0";
  if (at[2] >= 0)
    snprintf(za, sizeof za, "int(LD%d(%s))", (int)at[2],
             vkp__spv_numel(vkp__spv_input(e->g, n, 2)) == 1 ? "0u" : "i");
  if (at[3] >= 0)
    snprintf(zb, sizeof zb, "int(LD%d(%s))", (int)at[3],
             vkp__spv_numel(vkp__spv_input(e->g, n, 3)) == 1 ? "0u" : "j");
  vkp__sb_printf(h,
                 "ACC_T vkp_element(uint o) {\n"
                 "  uint j = o %% %lluu, i = (o / %lluu) %% %lluu, t = o / %lluu;\n"
                 "  uint oa = vkp_a_batch(t) + i * %lluu, ob = vkp_b_batch(t) + j;\n"
                 "  int za = %s, zb = %s, acc = 0;\n"
                 "  for (uint p = 0u; p < %lluu; ++p)\n"
                 "    acc += (int(LD0(oa + p)) - za) * (int(LD1(ob + p * %lluu)) - zb);\n"
                 "  return ACC_T(acc);\n}\n",
                 (unsigned long long)nn, (unsigned long long)nn, (unsigned long long)m,
                 (unsigned long long)(m * nn), (unsigned long long)k, za, zb,
                 (unsigned long long)k, (unsigned long long)nn);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}
