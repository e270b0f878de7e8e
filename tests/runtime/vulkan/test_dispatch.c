// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>
#include <stdio.h>

#include "runtime/vulkan/dispatch.h"
#include "support/test_support.h"

// Every workgroup of the grid is covered by exactly one chunk, no chunk
// exceeds the limit, and chunks are in range.
static void check_cover(const uint32_t groups[3], const uint32_t max[3]) {
  uint64_t total = (uint64_t)groups[0] * groups[1] * groups[2];
  uint64_t n = vkp_vk_grid_chunk_count(groups, max);
  uint64_t covered = 0;
  for (uint64_t i = 0; i < n; ++i) {
    vkp_vk_grid_chunk_t c;
    vkp_vk_grid_chunk(groups, max, i, &c);
    for (int d = 0; d < 3; ++d) {
      cr_assert(c.count[d] >= 1 && c.count[d] <= max[d]);
      cr_assert(c.base[d] + c.count[d] <= groups[d]);
      cr_assert(c.base[d] % max[d] == 0);
    }
    covered += (uint64_t)c.count[0] * c.count[1] * c.count[2];
  }
  cr_assert_eq(covered, total, "grid %u,%u,%u max %u,%u,%u", groups[0], groups[1],
               groups[2], max[0], max[1], max[2]);
}

Test(dispatch, split_at_limits, .timeout = 10) {
  const uint32_t lavapipe[3] = {65535, 65535, 65535};
  uint32_t small[3] = {100, 1, 1};
  cr_assert_eq(vkp_vk_grid_chunk_count(small, lavapipe), 1);
  uint32_t wide[3] = {65536, 1, 1};
  cr_assert_eq(vkp_vk_grid_chunk_count(wide, lavapipe), 2);
  vkp_vk_grid_chunk_t c;
  vkp_vk_grid_chunk(wide, lavapipe, 1, &c);
  cr_assert_eq(c.base[0], 65535);
  cr_assert_eq(c.count[0], 1);
  uint32_t empty[3] = {0, 4, 4};
  cr_assert_eq(vkp_vk_grid_chunk_count(empty, lavapipe), 0);
  check_cover(wide, lavapipe);
  uint32_t big[3] = {200000, 70000, 3};
  cr_assert_eq(vkp_vk_grid_chunk_count(big, lavapipe), 4 * 2 * 1);
  check_cover(big, lavapipe);
}

Test(dispatch, split_random_grids, .timeout = 10) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  for (int t = 0; t < 200; ++t) {
    uint32_t groups[3], max[3];
    for (int d = 0; d < 3; ++d) {
      groups[d] = 1 + vkp_test_rng_below(&rng, 40);
      max[d] = 1 + vkp_test_rng_below(&rng, 12);
    }
    cr_log_info("seed %llu", (unsigned long long)seed);
    check_cover(groups, max);
  }
}

Test(dispatch, overlap_by_buffer_range, .timeout = 10) {
  vkp_spirv_binding_t a_b[] = {{.buffer = 0, .offset = 0, .range = 64},
                               {.buffer = 1, .offset = 128, .range = 64}};
  vkp_spirv_binding_t b_b[] = {{.buffer = 1, .offset = 0, .range = 128}};
  vkp_spirv_binding_t c_b[] = {{.buffer = 1, .offset = 190, .range = 4}};
  vkp_spirv_dispatch_t a = {.n_bindings = 2, .bindings = a_b};
  vkp_spirv_dispatch_t b = {.n_bindings = 1, .bindings = b_b};
  vkp_spirv_dispatch_t c = {.n_bindings = 1, .bindings = c_b};
  cr_assert_not(vkp_vk_dispatches_overlap(&a, &b));  // adjacent, not overlapping
  cr_assert(vkp_vk_dispatches_overlap(&a, &c));
  cr_assert(vkp_vk_dispatches_overlap(&c, &a));
  cr_assert_not(vkp_vk_dispatches_overlap(&b, &c));
}
