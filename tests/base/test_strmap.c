// SPDX-License-Identifier: Apache-2.0
// base/strmap.c: insert, overwrite, growth, lookups of absent keys.
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
