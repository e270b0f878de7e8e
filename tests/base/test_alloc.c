// SPDX-License-Identifier: Apache-2.0
// base/alloc.c: the allocator hook sees every allocation; overflow checks.
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "support/test_support.h"

Test(alloc, hook_counts_and_fails, .timeout = 5) {
  vkp_test_counting_alloc_t c;
  vkp_test_counting_alloc_install(&c, 3);
  char *a = vkp__strdup("abc");
  char *b = vkp__asprintf("%d-%s", 7, "x");
  char *d = vkp__malloc(10);  // the third allocation fails
  vkp_test_counting_alloc_uninstall();
  cr_assert_str_eq(a, "abc");
  cr_assert_str_eq(b, "7-x");
  cr_assert_null(d);
  cr_assert(c.failed);
  vkp_test_counting_alloc_install(&c, 0);
  vkp__free(a);
  vkp__free(b);
  vkp_test_counting_alloc_uninstall();
  cr_assert_eq(c.live, -2);  // two blocks from the earlier session released
}

Test(alloc, overflow_is_refused, .timeout = 5) {
  cr_assert_null(vkp__calloc(SIZE_MAX / 2, 4));
  cr_assert_null(vkp__reallocarray(NULL, SIZE_MAX / 2, 4));
  void *p = vkp__calloc(3, 4);
  cr_assert_not_null(p);
  cr_assert_eq(memcmp(p, (char[12]){0}, 12), 0);
  vkp__free(p);
  cr_assert_null(vkp__strdup(NULL));
}
