// SPDX-License-Identifier: Apache-2.0
// base/npy.c: .npy round trips (versions 1 and 2, every dtype, ranks 0..4),
// interchange with NumPy in both directions (versions 1, 2 and 3), clear
// errors for what is not supported or broken, and an allocation failure walk.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_support.h"
#include "vkpipe/npy.h"

static char scratch[256];

static void make_scratch(void) {
  snprintf(scratch, sizeof scratch, "%s/test_npy_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(scratch));
}

static void remove_scratch(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(npy, .init = make_scratch, .fini = remove_scratch);

// A tensor of `dtype` with a random shape of `rank` dims and random contents.
static void random_tensor(vkp_test_rng_t *rng, vkp_dtype_t dtype, int32_t rank,
                          vkp_tensor_t *t) {
  int64_t shape[VKP_MAX_RANK];
  for (int32_t i = 0; i < rank; ++i) shape[i] = 1 + vkp_test_rng_below(rng, 5);
  if (rank > 0 && vkp_test_rng_below(rng, 8) == 0) shape[0] = 0;  // empty
  VKP_TEST_OK(vkp_tensor_init(t, dtype, rank, shape));
  uint8_t *p = t->data;
  for (size_t i = 0; i < vkp_tensor_nbytes(t); ++i)
    p[i] = (uint8_t)vkp_test_rng_next(rng);
  if (dtype == VKP_DTYPE_FLOAT32) {  // keep NaN payloads out of comparisons
    float *f = t->data;
    for (size_t i = 0; i < vkp_tensor_numel(t); ++i)
      f[i] = vkp_test_rng_uniform(rng, -1e6f, 1e6f);
  }
  if (dtype == VKP_DTYPE_BOOL)  // bools are 0 or 1
    for (size_t i = 0; i < vkp_tensor_numel(t); ++i) p[i] &= 1;
}

static void assert_same_tensor(const vkp_tensor_t *a, const vkp_tensor_t *b) {
  cr_assert_eq(a->dtype, b->dtype);
  cr_assert_eq(a->rank, b->rank);
  for (int32_t i = 0; i < a->rank; ++i) cr_assert_eq(a->shape[i], b->shape[i]);
  cr_assert_eq(vkp_tensor_nbytes(a), vkp_tensor_nbytes(b));
  cr_assert(memcmp(a->data, b->data, vkp_tensor_nbytes(a)) == 0, "data differs");
}

Test(npy, round_trips_every_dtype_rank_and_version, .timeout = 30) {
  vkp_test_rng_t rng;
  cr_log_info("seed %llu", (unsigned long long)vkp_test_rng_init(&rng));
  for (int dtype = 0; dtype < VKP_DTYPE_COUNT; ++dtype) {
    for (int32_t rank = 0; rank <= 4; ++rank) {
      for (int version = 0; version <= 2; ++version) {
        vkp_tensor_t t, back;
        random_tensor(&rng, (vkp_dtype_t)dtype, rank, &t);
        void *buf;
        size_t size;
        if (dtype == VKP_DTYPE_BFLOAT16) {  // NumPy has no bfloat16
          vkp_status_t st = vkp_npy_write_buffer(&t, version, &buf, &size);
          cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED) &&
                        strstr(vkp_status_message(st), "bfloat16"),
                    "%s", vkp_status_message(st));
          vkp_status_free(st);
          vkp_tensor_deinit(&t);
          continue;
        }
        VKP_TEST_OK(vkp_npy_write_buffer(&t, version, &buf, &size));
        const uint8_t *b = buf;
        cr_assert_eq(b[6], version == 2 ? 2 : 1);
        size_t header = size - vkp_tensor_nbytes(&t);
        cr_assert_eq(header % 64, 0, "data not 64-byte aligned");
        cr_assert_eq(((const char *)buf)[header - 1], '\n');
        VKP_TEST_OK(vkp_npy_read_buffer(buf, size, "buffer", &back));
        assert_same_tensor(&t, &back);
        vkp_npy_buffer_free(buf);
        vkp_tensor_deinit(&back);
        vkp_tensor_deinit(&t);
      }
    }
  }
}

Test(npy, file_round_trip, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_tensor_t t, back;
  random_tensor(&rng, VKP_DTYPE_FLOAT32, 3, &t);
  char path[512];
  snprintf(path, sizeof path, "%s/t.npy", scratch);
  VKP_TEST_OK(vkp_npy_write_file(path, &t));
  VKP_TEST_OK(vkp_npy_read_file(path, &back));
  assert_same_tensor(&t, &back);
  vkp_tensor_deinit(&back);
  vkp_tensor_deinit(&t);
}

// vkpipe writes random tensors; NumPy reads them and writes them back as
// versions 1, 2 and 3, which vkpipe must read bit for bit.
Test(npy, interchange_with_numpy, .timeout = 30) {
  vkp_test_rng_t rng;
  cr_log_info("seed %llu", (unsigned long long)vkp_test_rng_init(&rng));
  vkp_tensor_t sent[VKP_DTYPE_COUNT][3];
  const char *names[VKP_DTYPE_COUNT];
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    names[d] = vkp_dtype_name((vkp_dtype_t)d);
    if (d == VKP_DTYPE_BFLOAT16) continue;  // NumPy has no bfloat16
    for (int32_t r = 0; r < 3; ++r) {
      random_tensor(&rng, (vkp_dtype_t)d, r * 2, &sent[d][r]);
      char path[512];
      snprintf(path, sizeof path, "%s/c_%s_r%d.npy", scratch, names[d], (int)r * 2);
      VKP_TEST_OK(vkp_npy_write_file(path, &sent[d][r]));
    }
  }
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/tests/base/npy_fixtures.py' '%s'",
           vkp_test_source_dir(), scratch);
  cr_assert_eq(system(cmd), 0, "%s failed", cmd);
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    if (d == VKP_DTYPE_BFLOAT16) continue;
    for (int32_t r = 0; r < 3; ++r) {
      for (int v = 1; v <= 3; ++v) {
        char path[512];
        snprintf(path, sizeof path, "%s/np_%s_r%d_v%d.npy", scratch, names[d],
                 (int)r * 2, v);
        vkp_tensor_t got;
        VKP_TEST_OK(vkp_npy_read_file(path, &got));
        assert_same_tensor(&sent[d][r], &got);
        vkp_tensor_deinit(&got);
      }
      vkp_tensor_deinit(&sent[d][r]);
    }
  }
  struct {
    const char *file, *needle;
    vkp_status_code_t code;
  } bad[] = {
      {"bad_bigendian.npy", "big-endian data ('>f4')", VKP_STATUS_UNSUPPORTED},
      {"bad_fortran.npy", "Fortran-order arrays are not supported",
       VKP_STATUS_UNSUPPORTED},
      {"bad_complex.npy", "dtype '<c8' is not supported", VKP_STATUS_UNSUPPORTED},
      {"bad_text.npy", "dtype '<U2' is not supported", VKP_STATUS_UNSUPPORTED},
      {"bad_structured.npy", "structured arrays are not supported",
       VKP_STATUS_UNSUPPORTED},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch, bad[i].file);
    vkp_tensor_t got;
    vkp_status_t st = vkp_npy_read_file(path, &got);
    cr_assert_not_null(st, "%s was accepted", bad[i].file);
    cr_assert(strstr(vkp_status_message(st), bad[i].needle), "%s: '%s'",
              bad[i].file, vkp_status_message(st));
    cr_assert(strstr(vkp_status_message(st), bad[i].file), "file not named");
    cr_assert_eq(vkp_status_code(st), bad[i].code);
    cr_assert_null(got.data);
    vkp_status_free(st);
  }
}

// Broken bytes: each is refused with a message containing `needle`.
static void expect_bad(const void *data, size_t size, const char *needle) {
  vkp_tensor_t t;
  vkp_test_counting_alloc_t counter;
  vkp_test_counting_alloc_install(&counter, 0);
  vkp_status_t st = vkp_npy_read_buffer(data, size, "x.npy", &t);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", vkp_status_message(st));
  vkp_status_free(st);
  int64_t live = counter.live;
  vkp_test_counting_alloc_uninstall();
  cr_assert_not_null(st, "accepted; expected '%s'", needle);
  cr_assert(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  cr_assert(strstr(msg, "x.npy"), "message '%s' does not name the file", msg);
  cr_assert_eq(live, 0, "leaked");
  cr_assert_null(t.data);
}

// A version 1 file with `dict` as its header followed by `data_bytes` zeros.
static void expect_bad_header(const char *dict, size_t data_bytes,
                              const char *needle) {
  uint8_t buf[512] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  size_t n = strlen(dict);
  buf[8] = (uint8_t)n;
  buf[9] = 0;
  memcpy(buf + 10, dict, n);
  expect_bad(buf, 10 + n + data_bytes, needle);
}

Test(npy, broken_files, .timeout = 30) {
  vkp_tensor_t t;
  int64_t shape[] = {2, 3};
  VKP_TEST_OK(vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, 2, shape));
  void *buf;
  size_t size;
  VKP_TEST_OK(vkp_npy_write_buffer(&t, 1, &buf, &size));
  expect_bad(buf, size - 1, "needs 24 data bytes, the file has 23 (truncated)");
  expect_bad(buf, 40, "truncated header");
  expect_bad(buf, 9, "truncated header");
  expect_bad(buf, 0, "not a .npy file");
  uint8_t *copy = malloc(size + 1);
  memcpy(copy, buf, size);
  copy[size] = 7;
  expect_bad(copy, size + 1, "(trailing bytes)");
  copy[6] = 4;
  expect_bad(copy, size, ".npy format version 4.0 is not supported");
  copy[6] = 1;
  copy[0] = 'P';
  expect_bad(copy, size, "no \\x93NUMPY magic");
  free(copy);
  vkp_npy_buffer_free(buf);
  vkp_tensor_deinit(&t);

  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n",
                    4, "needs 8 data bytes, the file has 4");
  expect_bad_header("garbage", 0, "header is not a Python dict");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False}", 0,
                    "header lacks 'shape'");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                    "'extra': 1}", 8, "unknown key 'extra'");
  expect_bad_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8,
                    "'fortran_order' is not True or False");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
                    8, "'shape' has a bad dimension");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", 8,
                    "'shape' is not a tuple");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(1,1,1,1,1,1,1,1,1)}", 4, "more than 8 dimensions");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(4294967296, 4294967296, 4294967296)}", 0, "too large");
  expect_bad_header("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8,
                    "malformed header");
  expect_bad_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
                    8, "garbage after the header dict");
  expect_bad_header("{'descr': 'O', 'fortran_order': False, 'shape': (2,)}", 8,
                    "dtype 'O' is not supported");
}

Test(npy, missing_file, .timeout = 30) {
  vkp_tensor_t t;
  vkp_status_t st = vkp_npy_read_file("/nonexistent/in.npy", &t);
  cr_assert(strstr(vkp_status_message(st), "cannot open '/nonexistent/in.npy'"));
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_IO_ERROR);
  vkp_status_free(st);
}

Test(npy, allocation_failure_walk, .timeout = 30) {
  int64_t shape[] = {3, 4};
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_tensor_init(&t, VKP_DTYPE_INT64, 2, shape));
  char path[512];
  snprintf(path, sizeof path, "%s/w.npy", scratch);
  for (int64_t n = 1;; ++n) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, n);
    vkp_tensor_t back;
    vkp_status_t st = vkp_npy_write_file(path, &t);
    if (!st) st = vkp_npy_read_file(path, &back);
    if (!st) vkp_tensor_deinit(&back);
    bool failed = counter.failed;
    vkp_status_free(st);
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(live, 0, "failing allocation %lld leaked", (long long)n);
    // The file-name label for messages falls back to the bare path when it
    // cannot be allocated, so a failed allocation may still succeed.
    if (!st) break;
    cr_assert(failed);
  }
  vkp_tensor_deinit(&t);
}
