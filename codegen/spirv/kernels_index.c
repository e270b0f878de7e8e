// SPDX-License-Identifier: Apache-2.0
// Vulkan kernel of the indexing family: gather by runtime int32/int64
// indices over float32 data (shaders/gather_index.comp), one invocation per
// output element, with the fused epilogue (a position embedding added to a
// token embedding fuses into the gather).
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
