// SPDX-License-Identifier: Apache-2.0
// base/archive.c: round trip, and every truncation and many byte flips of a
// real archive are errors (never crashes, never leaks).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/archive.h"
#include "support/test_support.h"

static char *write_sample(vkp_test_rng_t *rng, uint8_t *payload, size_t n) {
  for (size_t i = 0; i < n; ++i) payload[i] = (uint8_t)vkp_test_rng_next(rng);
  vkp_archive_writer_t *w;
  VKP_TEST_OK(vkp_archive_writer_create(&w));
  VKP_TEST_OK(vkp_archive_writer_add(w, "plan.json", "{\"a\":1}", 7));
  VKP_TEST_OK(vkp_archive_writer_add(w, "stage0/blob", payload, n));
  VKP_TEST_OK(vkp_archive_writer_add(w, "empty", NULL, 0));
  vkp_status_t st = vkp_archive_writer_add(w, "empty", "x", 1);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_ALREADY_EXISTS);
  vkp_status_free(st);
  char *path = malloc(256);
  snprintf(path, 256, "%s/test_archive_%llu.vkp", vkp_test_binary_dir(),
           (unsigned long long)vkp_test_rng_next(rng));
  VKP_TEST_OK(vkp_archive_writer_save(w, path, 3));
  vkp_archive_writer_destroy(w);
  return path;
}

Test(archive, round_trip, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  uint8_t payload[1000];
  char *path = write_sample(&rng, payload, sizeof payload);
  vkp_archive_t *a;
  VKP_TEST_OK(vkp_archive_open(path, 3, &a));
  cr_assert_eq(vkp_archive_count(a), 3);
  const void *d;
  size_t n;
  cr_assert(vkp_archive_find(a, "stage0/blob", &d, &n));
  cr_assert_eq(n, sizeof payload);
  cr_assert_eq(memcmp(d, payload, n), 0);
  cr_assert(vkp_archive_find(a, "empty", &d, &n));
  cr_assert_eq(n, 0);
  cr_assert_not(vkp_archive_find(a, "missing", &d, &n));
  cr_assert_str_eq(vkp_archive_name(a, 0), "plan.json");
  vkp_archive_close(a);
  vkp_status_t st = vkp_archive_open(path, 4, &a);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNSUPPORTED);
  cr_assert(strstr(vkp_status_message(st), "version 3"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  remove(path);
  free(path);
}

Test(archive, truncation_and_corruption_are_errors, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  uint8_t payload[300];
  char *path = write_sample(&rng, payload, sizeof payload);
  size_t size;
  char *image = vkp_test_read_file(path, &size);
  cr_assert_not_null(image);
  remove(path);
  free(path);
  vkp_archive_t *a;
  for (size_t cut = 0; cut < size; ++cut) {
    vkp_status_t st = vkp_archive_open_memory(image, cut, "cut", 3, &a);
    cr_assert_not_null(st, "truncation at %zu accepted", cut);
    cr_assert_null(a);
    vkp_status_free(st);
  }
  for (int trial = 0; trial < 2000; ++trial) {
    char *copy = malloc(size);
    memcpy(copy, image, size);
    size_t at = vkp_test_rng_below(&rng, (uint32_t)size);
    uint8_t flip = (uint8_t)(1u << vkp_test_rng_below(&rng, 8));
    copy[at] ^= (char)flip;
    vkp_status_t st = vkp_archive_open_memory(copy, size, "flip", 3, &a);
    cr_assert_not_null(st, "flip of bit %u at %zu accepted", flip, at);
    vkp_status_free(st);
    free(copy);
  }
  free(image);
}
