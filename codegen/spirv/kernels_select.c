// SPDX-License-Identifier: Apache-2.0
// Vulkan kernels of the selection family: cum_sum (one invocation per row
// along the axis, float32). arg_max, arg_min and top_k write int64 indices,
// which the Vulkan kernels' float32 buffers do not carry: they have no row
// in codegen/spirv/ops.c, and the partitioner places them on a host target.
#include "codegen/spirv/kernels.h"

vkp_status_t vkp__spv_emit_cum_sum(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)x->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= (uint64_t)x->shape[d];
  vkp__spv_define_u(&e->body, "ROWS", outer * inner);
  vkp__spv_define_u(&e->body, "L", (uint64_t)x->shape[axis]);
  vkp__spv_define_u(&e->body, "INNER", inner);
  if (vkp_node_int(n, "reverse")) vkp__sb_append(&e->body, "#define REVERSE 1\n");
  if (vkp_node_int(n, "exclusive")) vkp__sb_append(&e->body, "#define EXCLUSIVE 1\n");
  vkp__spv_grid_1d(e, outer * inner);
  vkp__spv_template(e, VKP__SHADER_cum_sum);
  return NULL;
}
