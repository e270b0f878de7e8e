// SPDX-License-Identifier: Apache-2.0
#include "runtime/vulkan/dispatch.h"

static uint32_t vkp__chunks_1d(uint32_t n, uint32_t max) {
  if (max == 0) max = 1;
  return n / max + (n % max != 0);
}

uint64_t vkp_vk_grid_chunk_count(const uint32_t groups[3], const uint32_t max[3]) {
  uint64_t n = 1;
  for (int d = 0; d < 3; ++d) n *= vkp__chunks_1d(groups[d], max[d]);
  return n;
}

void vkp_vk_grid_chunk(const uint32_t groups[3], const uint32_t max[3],
                       uint64_t index, vkp_vk_grid_chunk_t *out_chunk) {
  for (int d = 0; d < 3; ++d) {
    uint32_t m = max[d] ? max[d] : 1;
    uint32_t per = vkp__chunks_1d(groups[d], m);
    uint32_t i = per ? (uint32_t)(index % per) : 0;
    index = per ? index / per : 0;
    out_chunk->base[d] = i * m;
    uint32_t left = groups[d] - out_chunk->base[d];
    out_chunk->count[d] = left < m ? left : m;
  }
}

bool vkp_vk_dispatches_overlap(const vkp_spirv_dispatch_t *a,
                               const vkp_spirv_dispatch_t *b) {
  for (int32_t i = 0; i < a->n_bindings; ++i) {
    const vkp_spirv_binding_t *x = &a->bindings[i];
    for (int32_t j = 0; j < b->n_bindings; ++j) {
      const vkp_spirv_binding_t *y = &b->bindings[j];
      if (x->buffer == y->buffer && x->offset < y->offset + y->range &&
          y->offset < x->offset + x->range)
        return true;
    }
  }
  return false;
}
