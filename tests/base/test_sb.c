// SPDX-License-Identifier: Apache-2.0
// base/sb.c: the one text buffer: appends and formatted appends against
// snprintf, growth past many doublings, indentation, quoting, a sticky
// allocation failure, hand-over, and line-at-a-time heap strings.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"
#include "support/test_support.h"

// Random printable text of `n` characters (no '%', so it can be a format).
static void random_text(vkp_test_rng_t *rng, char *out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char c = (char)(' ' + vkp_test_rng_below(rng, 95));
    out[i] = c == '%' ? '#' : c;
  }
  out[n] = '\0';
}

Test(sb, appends_match_snprintf_across_growth, .timeout = 10) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp__sb_t sb = {0};
  size_t cap = 1 << 16, len = 0;
  char *want = malloc(cap);
  char piece[200];
  while (len < 40000) {
    size_t n = vkp_test_rng_below(&rng, 150);
    random_text(&rng, piece, n);
    int k = (int)vkp_test_rng_below(&rng, 100000) - 50000;
    switch (vkp_test_rng_below(&rng, 3)) {
      case 0:
        vkp__sb_append(&sb, piece);
        len += (size_t)snprintf(want + len, cap - len, "%s", piece);
        break;
      case 1:
        vkp__sb_appendn(&sb, piece, n / 2);
        len += (size_t)snprintf(want + len, cap - len, "%.*s", (int)(n / 2), piece);
        break;
      default:
        vkp__sb_printf(&sb, "[%d|%s|%.3f]", k, piece, k / 7.0);
        len += (size_t)snprintf(want + len, cap - len, "[%d|%s|%.3f]", k, piece,
                                k / 7.0);
        break;
    }
  }
  VKP_TEST_OK(vkp__sb_status(&sb, "text"));
  cr_assert_eq(sb.len, len, "seed %llu", (unsigned long long)seed);
  cr_assert_eq(strlen(sb.data), len);
  cr_assert_eq(memcmp(sb.data, want, len), 0, "seed %llu", (unsigned long long)seed);
  vkp__sb_deinit(&sb);
  cr_assert_null(sb.data);
  cr_assert_eq(sb.len, 0);
  free(want);
}

Test(sb, indent_and_lines, .timeout = 10) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int level = 1 + (int)vkp_test_rng_below(&rng, 20);  // past the 16-space chunk
  int value = (int)vkp_test_rng_below(&rng, 1000);
  vkp__sb_t sb = {0};
  vkp__sb_linef(&sb, 0, "void f(void) {");
  vkp__sb_linef(&sb, level, "x = %d;", value);
  vkp__sb_indent(&sb, -3);  // nothing
  vkp__sb_indent(&sb, 0);   // nothing
  vkp__sb_linef(&sb, 0, "}");
  char want[256];
  snprintf(want, sizeof want, "void f(void) {\n%*sx = %d;\n}\n",
           level * VKP__SB_INDENT_WIDTH, "", value);
  cr_assert_str_eq(sb.data, want);
  vkp__sb_deinit(&sb);
}

Test(sb, quoted_escapes_quotes_and_backslashes, .timeout = 10) {
  vkp__sb_t sb = {0};
  vkp__sb_append(&sb, "\"");
  vkp__sb_append_quoted(&sb, "a \"b\" \\c\\ d");
  vkp__sb_append_quoted(&sb, "");
  vkp__sb_append(&sb, "\"");
  cr_assert_str_eq(sb.data, "\"a \\\"b\\\" \\\\c\\\\ d\"");
  vkp__sb_deinit(&sb);
}

Test(sb, cat_and_take, .timeout = 10) {
  vkp__sb_t a = {0}, b = {0};
  vkp__sb_printf(&a, "head %d;", 1);
  vkp__sb_printf(&b, "tail %d;", 2);
  vkp__sb_cat(&a, &b);
  char *text = vkp__sb_take(&a);
  cr_assert_str_eq(text, "head 1;tail 2;");
  cr_assert_null(a.data);
  vkp__free(text);
  // An empty builder hands over an empty string, not NULL.
  text = vkp__sb_take(&a);
  cr_assert_not_null(text);
  cr_assert_str_eq(text, "");
  vkp__free(text);
  vkp__sb_deinit(&b);
}

Test(sb, an_allocation_failure_sticks_and_is_reported, .timeout = 10) {
  vkp_test_counting_alloc_t c;
  vkp_test_counting_alloc_install(&c, 1);
  vkp__sb_t sb = {0};
  vkp__sb_append(&sb, "lost");
  cr_assert(sb.failed);
  vkp__sb_printf(&sb, "%s", "also lost");  // the builder stays failed
  vkp__sb_linef(&sb, 2, "and %s", "this");
  cr_assert_eq(sb.len, 0);
  vkp_status_t st = vkp__sb_status(&sb, "kernel text");
  cr_assert_not_null(st);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_MEMORY);
  cr_assert_not_null(strstr(vkp_status_message(st), "kernel text"),
                     "message: %s", vkp_status_message(st));
  vkp_status_free(st);
  vkp__sb_t other = {.failed = true};
  vkp__sb_t dst = {0};
  vkp_test_counting_alloc_uninstall();
  vkp__sb_cat(&dst, &other);  // a failure in the source sticks to the target
  cr_assert(dst.failed);
  cr_assert_null(vkp__sb_take(&sb));
  cr_assert_null(vkp__sb_take(&dst));
  cr_assert_eq(c.live, 0);
}

Test(sb, lines_append_one_line_at_a_time, .timeout = 10) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  char *lines = NULL;
  char want[4096] = "";
  size_t len = 0;
  for (int i = 0; i < 20; ++i) {
    int k = (int)vkp_test_rng_below(&rng, 1000000);
    VKP_TEST_OK(vkp__lines_appendf(&lines, "notes", "note %d: %d", i, k));
    len += (size_t)snprintf(want + len, sizeof want - len, "note %d: %d\n", i, k);
  }
  cr_assert_str_eq(lines, want);
  // A failed append leaves the text as it was and names what it was for.
  vkp_test_counting_alloc_t c;
  vkp_test_counting_alloc_install(&c, 1);
  vkp_status_t st = vkp__lines_appendf(&lines, "partition notes", "x");
  vkp_test_counting_alloc_uninstall();
  cr_assert_not_null(st);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_MEMORY);
  cr_assert_not_null(strstr(vkp_status_message(st), "partition notes"));
  vkp_status_free(st);
  cr_assert_str_eq(lines, want);
  vkp__free(lines);
}
