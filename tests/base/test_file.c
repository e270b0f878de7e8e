// SPDX-License-Identifier: Apache-2.0
// base/file.c: the one whole-file reader (contents byte for byte, a NUL past
// the end, refusals that name the path: missing, directory, pipe, too large
// before anything is allocated) and the writers.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "support/test_cli.h"
#include "support/test_support.h"

// Each test gets a scratch directory, vkp_test_scratch (support/test_cli.h).
TestSuite(file, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove,
          .timeout = 10);

static void expect_error(vkp_status_t st, vkp_status_code_t code, const char *a,
                         const char *b) {
  cr_assert_not_null(st);
  const char *msg = vkp_status_message(st);
  cr_assert_eq(vkp_status_code(st), code, "message: %s", msg);
  cr_assert_not_null(strstr(msg, a), "'%s' not in: %s", a, msg);
  if (b) cr_assert_not_null(strstr(msg, b), "'%s' not in: %s", b, msg);
  vkp_status_free(st);
}

Test(file, reads_back_what_was_written) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  size_t n = 1 + vkp_test_rng_below(&rng, 100000);
  unsigned char *bytes = malloc(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = (unsigned char)vkp_test_rng_next(&rng);
  char path[384];
  snprintf(path, sizeof path, "%s/data.bin", vkp_test_scratch);
  VKP_TEST_OK(vkp__write_file(path, bytes, n));
  void *data = NULL;
  size_t size = 0;
  VKP_TEST_OK(vkp__file_read(path, n, "test data", &data, &size));
  cr_assert_eq(size, n, "seed %llu", (unsigned long long)seed);
  cr_assert_eq(memcmp(data, bytes, n), 0, "seed %llu", (unsigned long long)seed);
  cr_assert_eq(((char *)data)[n], '\0');
  vkp__free(data);
  free(bytes);
}

Test(file, empty_file_and_text_line) {
  char path[384];
  snprintf(path, sizeof path, "%s/line.txt", vkp_test_scratch);
  VKP_TEST_OK(vkp__write_text_line(path, "hello"));
  char *text = NULL;
  size_t size = 0;
  VKP_TEST_OK(vkp__file_read(path, 64, "a text file", (void **)&text, &size));
  cr_assert_eq(size, 6);
  cr_assert_str_eq(text, "hello\n");
  vkp__free(text);
  VKP_TEST_OK(vkp__write_file(path, NULL, 0));
  VKP_TEST_OK(vkp__file_read(path, 0, "a text file", (void **)&text, &size));
  cr_assert_eq(size, 0);
  cr_assert_str_eq(text, "");
  vkp__free(text);
}

Test(file, too_large_is_refused_before_allocating) {
  char path[384];
  snprintf(path, sizeof path, "%s/big.bin", vkp_test_scratch);
  char bytes[100] = {1};
  VKP_TEST_OK(vkp__write_file(path, bytes, sizeof bytes));
  void *data = (void *)1;
  size_t size = 1;
  vkp_test_counting_alloc_t c;
  vkp_test_counting_alloc_install(&c, 0);
  vkp_status_t st = vkp__file_read(path, 99, "a plan", &data, &size);
  int64_t before_message = c.count;
  vkp_test_counting_alloc_uninstall();
  cr_assert_null(data);
  cr_assert_eq(size, 0);
  // Only the status itself was allocated.
  cr_assert_leq(before_message, 2);
  cr_assert_not_null(st);
  cr_assert_not_null(strstr(vkp_status_message(st), "100 bytes"));
  cr_assert_not_null(strstr(vkp_status_message(st), "99 bytes"));
  expect_error(st, VKP_STATUS_OUT_OF_RANGE, path, "a plan");
}

Test(file, missing_directory_and_pipe_are_named) {
  char path[384];
  void *data = NULL;
  size_t size = 0;
  snprintf(path, sizeof path, "%s/absent.json", vkp_test_scratch);
  expect_error(vkp__file_read(path, 1024, "a JSON graph", &data, &size),
               VKP_STATUS_IO_ERROR, path, "No such file");
  cr_assert_null(data);
  expect_error(vkp__file_read(vkp_test_scratch, 1024, "a JSON graph", &data,
                              &size),
               VKP_STATUS_INVALID_ARGUMENT, "is a directory", "a JSON graph");
  expect_error(vkp__file_check_regular(vkp_test_scratch, "an ONNX model"),
               VKP_STATUS_INVALID_ARGUMENT, vkp_test_scratch, "an ONNX model");
  snprintf(path, sizeof path, "%s/fifo", vkp_test_scratch);
  cr_assert_eq(mkfifo(path, 0600), 0);
  expect_error(vkp__file_read(path, 1024, "a .npy file", &data, &size),
               VKP_STATUS_INVALID_ARGUMENT, "is a pipe", path);
  snprintf(path, sizeof path, "%s/no/such/dir/out.bin", vkp_test_scratch);
  expect_error(vkp__write_file(path, "x", 1), VKP_STATUS_IO_ERROR, path, NULL);
}

Test(file, safe_names) {
  cr_assert(vkp__file_name_is_safe("stage0.bin"));
  cr_assert(vkp__file_name_is_safe("A-b_c.9"));
  cr_assert_not(vkp__file_name_is_safe(NULL));
  cr_assert_not(vkp__file_name_is_safe(""));
  cr_assert_not(vkp__file_name_is_safe(".hidden"));
  cr_assert_not(vkp__file_name_is_safe(".."));
  cr_assert_not(vkp__file_name_is_safe("a/b"));
  cr_assert_not(vkp__file_name_is_safe("a b"));
  char long_name[300];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[255] = '\0';
  cr_assert(vkp__file_name_is_safe(long_name));
  long_name[255] = 'a';
  long_name[256] = '\0';
  cr_assert_not(vkp__file_name_is_safe(long_name));
}

Test(file, dir_create_makes_parents_and_names_failures) {
  char path[384];
  snprintf(path, sizeof path, "%s/a/b/c", vkp_test_scratch);
  VKP_TEST_OK(vkp__dir_create(path, 0755));
  VKP_TEST_OK(vkp__dir_create(path, 0755));  // existing is fine
  struct stat sb;
  cr_assert(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
  snprintf(path, sizeof path, "%s/p/q/file.bin", vkp_test_scratch);
  VKP_TEST_OK(vkp__dir_create_parent(path, 0755));
  VKP_TEST_OK(vkp__write_file(path, "x", 1));
  VKP_TEST_OK(vkp__dir_create_parent("bare-name.bin", 0755));  // nothing to make
  // A regular file where the directory should be, or above it: named.
  snprintf(path, sizeof path, "%s/p/q/file.bin", vkp_test_scratch);
  expect_error(vkp__dir_create(path, 0755), VKP_STATUS_IO_ERROR, path,
               "is not a directory");
  snprintf(path, sizeof path, "%s/p/q/file.bin/sub", vkp_test_scratch);
  expect_error(vkp__dir_create(path, 0755), VKP_STATUS_IO_ERROR, path,
               "cannot create directory");
}
