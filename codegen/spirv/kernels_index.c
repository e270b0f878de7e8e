// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the indexing family, by runtime int32/int64 indices
// over float32, int32 or int64 data, one invocation per output element,
// with the fused epilogue: gather (shaders/gather_index.comp; a position
// embedding added to a token embedding fuses into it), gather_elements and
// gather_nd (shaders/gather_elements.comp with a generated source index).
// Indices are read as 32-bit words, so int64 indices need no shaderInt64.
#include <string.h>

#include "base/status_macros.h"
#include "codegen/spirv/kernels.h"

vkp_status_t vkp__spv_emit_gather(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *idx = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t inner = 1;
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= (uint64_t)x->shape[d];
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_u(&e->body, "DIM", (uint64_t)x->shape[axis]);
  // (An empty gather runs no invocation; 1 keeps its divisions defined.)
  uint64_t count = vkp__spv_numel(idx);
  vkp__spv_define_u(&e->body, "NIDX", count ? count : 1);
  vkp__spv_define_u(&e->body, "INNER", inner ? inner : 1);
  vkp__spv_define_i(&e->body, "IDX64", idx->dtype == VKP_DTYPE_INT64);
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_gather_index);
  return NULL;
}

// int vkp_index(uint j, uint dim): index number j of IN1 into an axis of
// `dim` elements, made non-negative, or -1 when outside [-dim, dim).
static void vkp__emit_index_reader(vkp__sb_t *h, const vkp_value_t *idx) {
  if (idx->dtype == VKP_DTYPE_INT64)
    vkp__sb_append(h,
                   "int vkp_index(uint j, uint dim) {\n"
                   "  uint lo = IN1[2u * j], hi = IN1[2u * j + 1u];\n"
                   "  if (hi == 0u && lo < dim) return int(lo);\n"
                   "  if (hi == 0xffffffffu && dim > 0u && lo >= 0u - dim) return int(lo + dim);\n"
                   "  return -1;\n}\n");
  else
    vkp__sb_append(h,
                   "int vkp_index(uint j, uint dim) {\n"
                   "  int v = int(IN1[j]);\n"
                   "  if (v < -int(dim) || v >= int(dim)) return -1;\n"
                   "  return v < 0 ? v + int(dim) : v;\n}\n");
}

vkp_status_t vkp__spv_emit_gather_elements(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *idx = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t axis = vkp_node_int(n, "axis");
  int64_t xs[VKP_MAX_RANK];
  vkp__spv_strides(x, xs);
  vkp__sb_t *h = &e->head;
  vkp__emit_index_reader(h, idx);
  vkp__sb_printf(h, "int vkp_gather_src(uint o) {\n  int k = vkp_index(o, %lluu);\n"
                    "  if (k < 0) return -1;\n  uint r = o;\n  int src = 0;\n",
                 (unsigned long long)x->shape[axis]);
  for (int32_t d = y->rank - 1; d >= 0; --d) {
    vkp__sb_printf(h, "  { uint c = r %% %lluu; r /= %lluu; src += %s * %lld; }\n",
                   (unsigned long long)y->shape[d], (unsigned long long)y->shape[d],
                   d == axis ? "k" : "int(c)", (long long)xs[d]);
  }
  vkp__sb_append(h, "  return src;\n}\n");
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_gather_elements);
  return NULL;
}

vkp_status_t vkp__spv_emit_gather_nd(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *idx = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int32_t batch = (int32_t)vkp_node_int(n, "batch_dims");
  int32_t q = (int32_t)idx->shape[idx->rank - 1];
  int64_t xs[VKP_MAX_RANK];
  vkp__spv_strides(x, xs);
  // Output element o = (position among indices.shape[:-1], offset in the
  // slice x.shape[batch + q:]); the position's leading `batch` coordinates
  // pick the batch.
  uint64_t slice = 1, per_batch = 1;
  for (int32_t d = batch + q; d < x->rank; ++d) slice *= (uint64_t)x->shape[d];
  for (int32_t d = batch; d < idx->rank - 1; ++d) per_batch *= (uint64_t)idx->shape[d];
  uint64_t batch_stride = batch > 0 ? (uint64_t)xs[batch - 1] : 0;
  vkp__sb_t *h = &e->head;
  vkp__emit_index_reader(h, idx);
  vkp__sb_printf(h,
                 "int vkp_gather_src(uint o) {\n"
                 "  uint pos = o / %lluu;\n"
                 "  int src = int((pos / %lluu) * %lluu + o %% %lluu), k;\n",
                 (unsigned long long)slice, (unsigned long long)per_batch,
                 (unsigned long long)batch_stride, (unsigned long long)slice);
  for (int32_t j = 0; j < q; ++j)
    vkp__sb_printf(h,
                   "  k = vkp_index(pos * %du + %du, %lluu); if (k < 0) return -1;\n"
                   "  src += k * %lld;\n",
                   (int)q, (int)j, (unsigned long long)x->shape[batch + j],
                   (long long)xs[batch + j]);
  vkp__sb_append(h, "  return src;\n}\n");
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_gather_elements);
  return NULL;
}

// scatter_elements and scatter_nd as gathers (shaders/element.comp): each
// output element starts from the data and folds in, in the order the
// reference applies them, the updates that land on it, so duplicate
// indices reduce deterministically with no atomics. vkp_element(o) scans
// only the candidates: for scatter_elements the updates sharing o's
// coordinates off `axis` (indices.shape[axis] of them), for scatter_nd
// every index tuple (one compare each). An index out of range matches
// nothing (the host targets stop with an error).
// Sums and products of 16-bit floats round to the data's type after every
// step, as the reference folds them (in float32 the last ulp could differ).
static void vkp__emit_scatter_reduce(vkp__sb_t *s, const vkp_node_t *n, vkp_dtype_t dt) {
  const char *r = vkp_node_string(n, "reduction");
  bool arith = strcmp(r, "add") == 0 || strcmp(r, "mul") == 0;
  const char *expr = strcmp(r, "add") == 0   ? "((v) + (u))"
                     : strcmp(r, "mul") == 0 ? "((v) * (u))"
                     : strcmp(r, "max") == 0 ? "((u) > (v) ? (u) : (v))"
                     : strcmp(r, "min") == 0 ? "((u) < (v) ? (u) : (v))"
                                             : "(u)";
  if (arith && dt == VKP_DTYPE_FLOAT16)
    vkp__sb_printf(s, "#define SCATTER_REDUCE(v, u) unpackHalf2x16(packHalf2x16(vec2(%s, 0.0))).x\n",
                   expr);
  else if (arith && dt == VKP_DTYPE_BFLOAT16)
    vkp__sb_printf(s, "#define SCATTER_REDUCE(v, u) uintBitsToFloat(vkp_bf16(%s) << 16)\n", expr);
  else
    vkp__sb_printf(s, "#define SCATTER_REDUCE(v, u) %s\n", expr);
}

vkp_status_t vkp__spv_emit_scatter_elements(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *idx = vkp__spv_input(e->g, n, 1);
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  int64_t is[VKP_MAX_RANK];
  vkp__spv_strides(idx, is);
  vkp__sb_t *h = &e->head;
  vkp__emit_index_reader(h, idx);
  vkp__emit_scatter_reduce(h, n, x->dtype);
  vkp__sb_append(h, "ACC_T vkp_element(uint o) {\n  ACC_T v = LD0(o);\n"
                    "  uint r = o, base = 0u, at = 0u;\n");
  for (int32_t d = x->rank - 1; d >= 0; --d) {
    vkp__sb_printf(h, "  { uint c = r %% %lluu; r /= %lluu; ",
                   (unsigned long long)x->shape[d], (unsigned long long)x->shape[d]);
    if (d == axis)
      vkp__sb_append(h, "at = c; }\n");
    else
      vkp__sb_printf(h, "if (c >= %lluu) return v; base += c * %lluu; }\n",
                     (unsigned long long)idx->shape[d], (unsigned long long)is[d]);
  }
  vkp__sb_printf(h,
                 "  for (uint j = 0u; j < %lluu; ++j) {\n"
                 "    uint u = base + j * %lluu;\n"
                 "    if (vkp_index(u, %lluu) == int(at)) v = SCATTER_REDUCE(v, LD2(u));\n"
                 "  }\n  return v;\n}\n",
                 (unsigned long long)idx->shape[axis], (unsigned long long)is[axis],
                 (unsigned long long)x->shape[axis]);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}

vkp_status_t vkp__spv_emit_scatter_nd(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *idx = vkp__spv_input(e->g, n, 1);
  int32_t k = (int32_t)idx->shape[idx->rank - 1];
  int64_t xs[VKP_MAX_RANK];
  vkp__spv_strides(x, xs);
  uint64_t slice = 1, tuples = 1;
  for (int32_t d = k; d < x->rank; ++d) slice *= (uint64_t)x->shape[d];
  for (int32_t d = 0; d < idx->rank - 1; ++d) tuples *= (uint64_t)idx->shape[d];
  vkp__sb_t *h = &e->head;
  vkp__emit_index_reader(h, idx);
  vkp__emit_scatter_reduce(h, n, x->dtype);
  vkp__sb_printf(h,
                 "ACC_T vkp_element(uint o) {\n  ACC_T v = LD0(o);\n"
                 "  uint e = o %% %lluu;\n  int want = int(o - e);\n"
                 "  for (uint t = 0u; t < %lluu; ++t) {\n    int at = 0, c;\n",
                 (unsigned long long)slice, (unsigned long long)tuples);
  for (int32_t j = 0; j < k; ++j)
    vkp__sb_printf(h,
                   "    c = vkp_index(t * %du + %du, %lluu); if (c < 0) continue;\n"
                   "    at += c * %lld;\n",
                   (int)k, (int)j, (unsigned long long)x->shape[j], (long long)xs[j]);
  vkp__sb_printf(h,
                 "    if (at == want) v = SCATTER_REDUCE(v, LD2(t * %lluu + e));\n"
                 "  }\n  return v;\n}\n",
                 (unsigned long long)slice);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}

// one_hot (shaders/element.comp's shape: one invocation per output
// element): element (outer, d, inner) is on_value (LD1(1)) where index
// (outer, inner) of input 0, truncated toward zero and made non-negative
// against depth, equals d, else off_value (LD1(0)). Input 0 is data of any
// numeric dtype, read in its own type.
vkp_status_t vkp__spv_emit_one_hot(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *idx = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int32_t axis = (int32_t)vkp_node_int(n, "axis");
  uint64_t depth = (uint64_t)vkp_node_int(n, "depth"), inner = 1;
  for (int32_t d = axis + 1; d < y->rank; ++d) inner *= (uint64_t)y->shape[d];
  const char *t = vkp__spv_value_type(idx->dtype);
  bool is_float = vkp_dtype_is_float(idx->dtype);
  vkp__sb_printf(&e->head,
                 "ACC_T vkp_element(uint o) {\n"
                 "  uint i = o %% %lluu, d = (o / %lluu) %% %lluu, outer = o / %lluu;\n"
                 "  %s k = %sLD0(outer * %lluu + i)%s;\n"
                 "  if (k < %s(0)) k += %s(%lluu);\n"
                 "  return k == %s(d) ? LD1(1u) : LD1(0u);\n}\n",
                 (unsigned long long)inner, (unsigned long long)inner,
                 (unsigned long long)depth, (unsigned long long)(inner * depth), t,
                 is_float ? "trunc(" : "", (unsigned long long)inner, is_float ? ")" : "",
                 t, t, (unsigned long long)depth, t);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}

// reverse_sequence (shaders/element.comp's shape: one invocation per output
// element): element (b, t, i) reads step len[b] - 1 - t of its batch entry
// when t < len[b], else step t. The lengths are int64 words (input 1); a
// length outside [0, time] leaves the entry as it is (a kernel has no
// channel to report it; ref and cpu stop with an error naming the node).
vkp_status_t vkp__spv_emit_reverse_sequence(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t baxis = vkp_node_int(n, "batch_axis"), taxis = vkp_node_int(n, "time_axis");
  unsigned long long batch = (unsigned long long)x->shape[baxis];
  unsigned long long time = (unsigned long long)x->shape[taxis], inner = 1;
  for (int32_t d = 2; d < x->rank; ++d) inner *= (unsigned long long)x->shape[d];
  unsigned long long bs = baxis == 0 ? time * inner : inner;
  unsigned long long ts = taxis == 0 ? batch * inner : inner;
  vkp__sb_printf(&e->head,
                 "uint vkp_len(uint b) {\n"
                 "  uint lo = IN1[2u * b], hi = IN1[2u * b + 1u];\n"
                 "  return hi == 0u && lo <= %lluu ? lo : 0u;\n}\n"
                 "ACC_T vkp_element(uint o) {\n"
                 "  uint i = o %% %lluu, r = o / %lluu;\n",
                 time, inner, inner);
  if (taxis == 0)
    vkp__sb_printf(&e->head, "  uint t = r / %lluu, b = r %% %lluu;\n", batch, batch);
  else
    vkp__sb_printf(&e->head, "  uint b = r / %lluu, t = r %% %lluu;\n", time, time);
  vkp__sb_printf(&e->head,
                 "  uint len = vkp_len(b);\n"
                 "  uint s = t < len ? len - 1u - t : t;\n"
                 "  return LD0(b * %lluu + s * %lluu + i);\n}\n",
                 bs, ts);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_element);
  return NULL;
}
