// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the indexing family, by runtime int32/int64 indices
// over float32, int32 or int64 data, one invocation per output element,
// with the fused epilogue: gather (shaders/gather_index.comp; a position
// embedding added to a token embedding fuses into it), gather_elements and
// gather_nd (shaders/gather_elements.comp with a generated source index).
// Indices are read as 32-bit words, so int64 indices need no shaderInt64.
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
