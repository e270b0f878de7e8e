// SPDX-License-Identifier: Apache-2.0
// partition/ranks.c: stages spread over MPI ranks (docs/scale-out.md).
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"

static vkp_partition_t *ranked(const vkp_graph_t *g, vkp_registry_t **reg,
                               vkp_profile_t **prof, int32_t stages, int32_t ranks) {
  VKP_TEST_OK(vkp_registry_create(reg));
  fx_add_fake(*reg, "fa", FX_OP(VKP_OP_GLOBAL_AVG_POOL));
  fx_add_fake(*reg, "fb", FX_NONE);
  *prof = fx_profile_two_devices(2);
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = stages,
                                 .ranks = ranks};
  vkp_partition_t *p = NULL;
  VKP_TEST_OK(vkp_partition_create(g, *reg, *prof, &opt, &p));
  return p;
}

// Every rank gets a contiguous, non-empty block of stages in order, the
// plan carries them, and the link time is that of the profile's rank link.
Test(ranks, contiguous_blocks_in_the_plan, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(4, 8, 8);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *part = ranked(g, &reg, &prof, 4, 3);
  cr_assert_eq(part->n_ranks, 3);
  cr_assert_eq(part->stages[0].rank, 0);
  cr_assert_eq(part->stages[part->n_stages - 1].rank, 2);
  for (int32_t s = 1; s < part->n_stages; ++s) {
    int32_t step = part->stages[s].rank - part->stages[s - 1].rank;
    cr_assert(step == 0 || step == 1, "stage %d jumps ranks", (int)s);
    if (step == 1)
      cr_assert_gt(part->stages[s].link_s, 0, "stage %d receives across ranks", (int)s);
  }
  cr_assert_eq(part->stages[0].link_s, 0);  // rank 0 reads x locally
  cr_assert(strstr(part->notes, "ranks: 3"));
  cr_assert(strstr(part->notes, "default, not calibrated"));
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, "net", &plan));
  for (int32_t s = 0; s < plan->n_stages; ++s)
    cr_assert_eq(plan->stages[s].rank, part->stages[s].rank);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// A calibrated link is used: with 1 MB/s every split pays for the values it
// crosses, and the bottleneck reported covers every stage with its link
// time (it may be below the one-process one: each rank has its own devices).
Test(ranks, calibrated_link_prices_the_split, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(4, 8, 8);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *one = ranked(g, &reg, &prof, 4, 0);
  cr_assert_eq(one->n_ranks, 1);
  vkp_partition_destroy(one);
  VKP_TEST_OK(vkp_profile_set_link(prof, VKP_PROFILE_RANK_LINK, VKP_PROFILE_RANK_LINK,
                                   /*latency_us=*/100, /*gbps=*/0.001));
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = 4,
                                 .ranks = 2};
  vkp_partition_t *part = NULL;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert(strstr(part->notes, "(profile)"));
  double worst_link = 0;
  for (int32_t s = 0; s < part->n_stages; ++s)
    worst_link = fmax(worst_link, part->stages[s].seconds + part->stages[s].link_s);
  cr_assert_gt(worst_link, 100e-6);  // some stage receives across the link
  cr_assert_geq(part->bottleneck_s, worst_link * (1 - 1e-9));
  bool calibrated = false;
  double t = vkp_profile_rank_link_seconds(prof, 1e6, &calibrated);
  cr_assert(calibrated);
  cr_assert_float_eq(t, 100e-6 + 1e6 / 1e6, 1e-9);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(ranks, more_ranks_than_stages_is_refused, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(2, 8, 8);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 2, .ranks = 3};
  vkp_partition_t *part = NULL;
  vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &part);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "3 ranks need at least 3 stages"),
            "%s", vkp_status_message(st));
  cr_assert_null(part);
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Stages and ranks are chosen together: with "auto" stages over 2 ranks of
// 2 cores each, a chain of equal nodes is cut for 4 cores (4 one-thread
// stages, 2 on each rank), where cutting for one process first gave 2
// stages and left a core of each rank idle.
Test(ranks, auto_stages_use_every_rank_s_cores, .timeout = 30) {
  vkp_graph_t *g = fx_chain(12, 1 << 20);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  vkp_profile_t *prof = fx_profile_two_devices(2);
  VKP_TEST_OK(vkp_profile_set_link(prof, VKP_PROFILE_RANK_LINK, VKP_PROFILE_RANK_LINK,
                                   /*latency_us=*/1, /*gbps=*/1000));
  vkp_partition_options_t one = {.policy = "fa", .threads = 1};
  vkp_partition_t *single = NULL;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &one, &single));
  double total = 0;
  for (int32_t s = 0; s < single->n_stages; ++s) total += single->stages[s].seconds;
  vkp_partition_options_t opt = {.policy = "fa", .threads = 1, .ranks = 2};
  vkp_partition_t *part = NULL;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->n_ranks, 2);
  cr_assert_geq(part->n_stages, 4, "%d stages", (int)part->n_stages);
  int32_t per_rank[2] = {0, 0};
  for (int32_t s = 0; s < part->n_stages; ++s) per_rank[part->stages[s].rank]++;
  cr_assert(per_rank[0] >= 2 && per_rank[1] >= 2, "%d + %d stages", (int)per_rank[0],
            (int)per_rank[1]);
  // A quarter of the work per core, not half.
  cr_assert_lt(part->bottleneck_s, 0.3 * total, "%g of %g", part->bottleneck_s, total);
  vkp_partition_destroy(part);
  // With the threads left to choose, the notes compare the candidates as
  // placed over the ranks.
  opt.threads = 0;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert(strstr(part->notes, "on each of 2 ranks"), "%s", part->notes);
  cr_assert_lt(part->bottleneck_s, 0.3 * total, "%g of %g", part->bottleneck_s, total);
  vkp_partition_destroy(part);
  vkp_partition_destroy(single);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
