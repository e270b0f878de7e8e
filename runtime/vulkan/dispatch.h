// SPDX-License-Identifier: Apache-2.0
//
// Pure helpers for recording a program's dispatches: splitting a grid that
// exceeds maxComputeWorkGroupCount into vkCmdDispatchBase chunks, and
// deciding where a barrier is needed between dispatches.
//
//   uint64_t n = vkp_vk_grid_chunk_count(groups, limits->maxComputeWorkGroupCount);
//   for (uint64_t i = 0; i < n; ++i) {
//     vkp_vk_grid_chunk_t c;
//     vkp_vk_grid_chunk(groups, limits->maxComputeWorkGroupCount, i, &c);
//     vkCmdDispatchBase(cmd, c.base[0], c.base[1], c.base[2],
//                       c.count[0], c.count[1], c.count[2]);
//   }
//
// Thread-safe (no state).
#ifndef VKPIPE_RUNTIME_VULKAN_DISPATCH_H_
#define VKPIPE_RUNTIME_VULKAN_DISPATCH_H_

#include <stdbool.h>
#include <stdint.h>

#include "codegen/spirv/program.h"

typedef struct vkp_vk_grid_chunk_t {
  uint32_t base[3];
  uint32_t count[3];
} vkp_vk_grid_chunk_t;

// Chunks needed to cover `groups` with at most `max[d]` groups per dimension
// (0 when any dimension of `groups` is 0; a `max` of 0 counts as 1).
uint64_t vkp_vk_grid_chunk_count(const uint32_t groups[3], const uint32_t max[3]);

// The i-th chunk (x fastest), 0 <= i < vkp_vk_grid_chunk_count.
void vkp_vk_grid_chunk(const uint32_t groups[3], const uint32_t max[3],
                       uint64_t index, vkp_vk_grid_chunk_t *out_chunk);

// True when dispatches `a` and `b` bind overlapping bytes of some buffer, so
// a later one must wait for the earlier (read/write is not known per
// binding, so every overlap counts).
bool vkp_vk_dispatches_overlap(const vkp_spirv_dispatch_t *a,
                               const vkp_spirv_dispatch_t *b);

#endif  // VKPIPE_RUNTIME_VULKAN_DISPATCH_H_
