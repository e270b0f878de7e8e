// SPDX-License-Identifier: Apache-2.0
// base/status.c: codes, messages, context, joining, and out-of-memory.
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/status.h"

Test(status, ok_is_null, .timeout = 5) {
  cr_assert_eq(vkp_status_code(NULL), VKP_STATUS_OK);
  cr_assert_str_eq(vkp_status_message(NULL), "ok");
  vkp_status_free(NULL);
}

Test(status, message_and_annotation, .timeout = 5) {
  vkp_status_t st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                                    "weight '%s' offset %d past end", "w3", 4096);
  st = vkp_status_annotate(st, "loading node '%s'", "conv3");
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_RANGE);
  cr_assert_str_eq(vkp_status_message(st),
                   "loading node 'conv3': weight 'w3' offset 4096 past end");
  cr_assert(vkp_status_is(st, VKP_STATUS_OUT_OF_RANGE));
  vkp_status_free(st);
  cr_assert_null(vkp_status_annotate(NULL, "context"));
}

Test(status, join_keeps_first_code, .timeout = 5) {
  vkp_status_t a = vkp_status_make(VKP_STATUS_IO_ERROR, "write failed");
  vkp_status_t b = vkp_status_make(VKP_STATUS_INTERNAL, "cleanup failed");
  vkp_status_t j = vkp_status_join(a, b);
  cr_assert_eq(vkp_status_code(j), VKP_STATUS_IO_ERROR);
  cr_assert(strstr(vkp_status_message(j), "write failed"));
  cr_assert(strstr(vkp_status_message(j), "cleanup failed"));
  vkp_status_free(j);
  vkp_status_t c = vkp_status_make(VKP_STATUS_EMPTY, "x");
  cr_assert_eq(vkp_status_join(NULL, c), c);
  cr_assert_eq(vkp_status_join(c, NULL), c);
  vkp_status_free(c);
}

Test(status, every_code_has_a_name, .timeout = 5) {
  for (int c = 0; c < VKP_STATUS_CODE_COUNT; ++c)
    cr_assert_str_neq(vkp_status_code_name((vkp_status_code_t)c), "unknown");
  cr_assert_str_eq(vkp_status_code_name(VKP_STATUS_CODE_COUNT), "unknown");
  // OK is not a failure code: making one yields an internal error.
  vkp_status_t st = vkp_status_make(VKP_STATUS_OK, "odd");
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INTERNAL);
  vkp_status_free(st);
}

Test(status, out_of_memory_still_reports, .timeout = 5) {
  vkp_test_counting_alloc_t counter;
  vkp_test_counting_alloc_install(&counter, 1);
  vkp_status_t st = vkp_status_make(VKP_STATUS_PARSE_ERROR, "bad");
  vkp_status_t st2 = vkp_status_annotate(st, "more");
  vkp_test_counting_alloc_uninstall();
  cr_assert(counter.failed);
  cr_assert_eq(st, st2);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_MEMORY);
  vkp_status_free(st);  // the static out-of-memory status: a no-op
  cr_assert_eq(counter.live, 0);
}
