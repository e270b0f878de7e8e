// SPDX-License-Identifier: Apache-2.0
// base/strmap.c: insert, overwrite, growth, removal, lookups of absent keys.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/strmap.h"
#include "support/test_support.h"

Test(strmap, grows_and_finds_everything, .timeout = 10) {
  enum { N = 5000 };
  static char names[N][16];
  vkp_strmap_t m;
  vkp_strmap_init(&m);
  cr_assert_eq(vkp_strmap_get(&m, "x"), -1);
  for (int i = 0; i < N; ++i) {
    snprintf(names[i], sizeof names[i], "node_%d", i);
    VKP_TEST_OK(vkp_strmap_put(&m, names[i], i));
  }
  cr_assert_eq(m.count, N);
  for (int i = 0; i < N; ++i) cr_assert_eq(vkp_strmap_get(&m, names[i]), i);
  cr_assert_eq(vkp_strmap_get(&m, "node_5000"), -1);
  cr_assert_eq(vkp_strmap_get(&m, NULL), -1);
  VKP_TEST_OK(vkp_strmap_put(&m, names[7], 42));
  cr_assert_eq(m.count, N);
  cr_assert_eq(vkp_strmap_get(&m, "node_7"), 42);
  vkp_strmap_deinit(&m);
}

// Removal in random order keeps every other key findable (the backward
// shift of the probe run), against a plain array as the truth.
Test(strmap, remove_keeps_the_rest_findable, .timeout = 10) {
  enum { N = 3000 };
  static char names[N][16];
  static bool live[N];
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_strmap_t m;
  vkp_strmap_init(&m);
  cr_assert_not(vkp_strmap_remove(&m, "x"));
  for (int i = 0; i < N; ++i) {
    snprintf(names[i], sizeof names[i], "v%d", i);
    VKP_TEST_OK(vkp_strmap_put(&m, names[i], i));
    live[i] = true;
  }
  uint32_t count = N;
  for (int round = 0; round < 2 * N; ++round) {
    int i = (int)vkp_test_rng_below(&rng, N);
    bool was = live[i];
    cr_assert_eq(vkp_strmap_remove(&m, names[i]), was, "seed %llu", (unsigned long long)seed);
    if (was) --count;
    live[i] = false;
    if (round % 97 == 0) {  // and some come back
      int j = (int)vkp_test_rng_below(&rng, N);
      if (!live[j]) ++count;
      VKP_TEST_OK(vkp_strmap_put(&m, names[j], j));
      live[j] = true;
    }
  }
  cr_assert_eq(m.count, count);
  for (int i = 0; i < N; ++i)
    cr_assert_eq(vkp_strmap_get(&m, names[i]), live[i] ? i : -1, "key %s (seed %llu)",
                 names[i], (unsigned long long)seed);
  vkp_strmap_deinit(&m);
}
