// SPDX-License-Identifier: Apache-2.0
// partition/calibrate.c: rates come out positive and finite for every target
// that runs; a target that cannot run a benchmark keeps its rates and is
// named in the notes. No timing is asserted.
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "partition/partition_fixtures.h"
#include "vkpipe/cost.h"

Test(calibrate, builtin_targets_get_rates, .timeout = 120) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  // A fake that refuses matmul: calibration goes on without it.
  fx_add_fake(reg, "fc", FX_OP(VKP_OP_MATMUL));
  vkp_profile_t *prof;
  VKP_TEST_OK(vkp_profile_create_default(&prof));
  vkp_profile_target_t before = *vkp_profile_target(prof, "fc");
  vkp_calibrate_options_t opt = {.matmul_size = 24, .elementwise = 2048, .repeats = 2};
  char *notes = NULL;
  VKP_TEST_OK(vkp_profile_calibrate(prof, reg, &opt, &notes));
  cr_assert(notes);
  cr_assert(strstr(notes, "fc: kept its previous rates"), "%s", notes);
  const vkp_profile_target_t *after = vkp_profile_target(prof, "fc");
  cr_assert_eq(after->gflops, before.gflops);
  for (int32_t t = 0; t < vkp_registry_count(reg); ++t) {
    const char *name = vkp_registry_get(reg, t)->vtable->name;
    if (!strcmp(name, "fc")) continue;
    char needle[64];
    snprintf(needle, sizeof needle, "%s: ", name);
    cr_assert(strstr(notes, needle), "no note for %s:\n%s", name, notes);
    const vkp_profile_target_t *r = vkp_profile_target(prof, name);
    cr_assert(isfinite(r->gflops) && r->gflops > 0);
    cr_assert(isfinite(r->gbps) && r->gbps > 0);
    cr_assert(isfinite(r->launch_us) && r->launch_us >= 0);
  }
  // The result is a loadable profile.
  char *json;
  VKP_TEST_OK(vkp_profile_to_json(prof, &json));
  vkp_profile_t *back;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &back));
  vkp_profile_destroy(back);
  vkp_free(json);
  vkp_free(notes);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
}

Test(calibrate, bad_sizes, .timeout = 120) {
  vkp_registry_t *reg = fx_registry_ab();
  vkp_profile_t *prof;
  VKP_TEST_OK(vkp_profile_create_default(&prof));
  vkp_calibrate_options_t opt = {.matmul_size = 100000};
  char *notes = NULL;
  vkp_status_t st = vkp_profile_calibrate(prof, reg, &opt, &notes);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert_null(notes);
  vkp_status_free(st);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
}
