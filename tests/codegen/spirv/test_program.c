// SPDX-License-Identifier: Apache-2.0
// codegen/spirv/program.c: the blob round-trips exactly, and truncations,
// byte flips, a wrong magic or version are errors, never crashes.
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/spirv/program.h"
#include "tests/codegen/spirv/spirv_cases.h"
#include "support/test_support.h"

static const vkp_spirv_device_info_t device = {
    .device_type = 4, .subgroup_size = 8, .max_shared_memory = 32768,
    .max_invocations = 1024, .max_group_size = {1024, 1024, 1024},
    .max_storage_range = 134217728, .min_storage_alignment = 16,
    .loop_budget = VKP_SPIRV_LAVAPIPE_LOOP_BUDGET};

static vkp_spirv_program_t *make_program(const char *case_name) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = NULL;
  for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
    if (strcmp(vkp_spirv_cases[i].name, case_name) == 0)
      g = vkp_spirv_cases[i].build(&rng);
  cr_assert_not_null(g);
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &device, NULL, &p));
  vkp_graph_destroy(g);
  return p;
}

static void assert_same(const vkp_spirv_program_t *a, const vkp_spirv_program_t *b) {
  cr_assert_eq(a->n_buffers, b->n_buffers);
  for (int32_t i = 0; i < a->n_buffers; ++i) {
    cr_assert_eq(a->buffers[i].kind, b->buffers[i].kind);
    cr_assert_eq(a->buffers[i].index, b->buffers[i].index);
    cr_assert_eq(a->buffers[i].size, b->buffers[i].size);
  }
  cr_assert_eq(a->n_dispatches, b->n_dispatches);
  for (int32_t i = 0; i < a->n_dispatches; ++i) {
    const vkp_spirv_dispatch_t *x = &a->dispatches[i], *y = &b->dispatches[i];
    cr_assert_str_eq(x->name, y->name);
    cr_assert_eq(x->code_words, y->code_words);
    cr_assert(memcmp(x->code, y->code, x->code_words * 4) == 0);
    cr_assert(memcmp(x->local_size, y->local_size, sizeof x->local_size) == 0);
    cr_assert(memcmp(x->groups, y->groups, sizeof x->groups) == 0);
    cr_assert_eq(x->n_bindings, y->n_bindings);
    for (int32_t j = 0; j < x->n_bindings; ++j) {
      cr_assert_eq(x->bindings[j].buffer, y->bindings[j].buffer);
      cr_assert_eq(x->bindings[j].offset, y->bindings[j].offset);
      cr_assert_eq(x->bindings[j].range, y->bindings[j].range);
    }
  }
}

Test(spirv_program, round_trip, .timeout = 60) {
  const char *names[] = {"fuse_conv_residual", "concat_axis1_three", "scratch_chain",
                         "reshape_io"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    vkp_spirv_program_t *p = make_program(names[i]);
    vkp_blob_t blob;
    VKP_TEST_OK(vkp_spirv_program_serialize(p, &blob));
    vkp_spirv_program_t *q = NULL;
    VKP_TEST_OK(vkp_spirv_program_deserialize(blob.data, blob.size, &q));
    assert_same(p, q);
    vkp_blob_t again;
    VKP_TEST_OK(vkp_spirv_program_serialize(q, &again));
    cr_assert_eq(again.size, blob.size);
    cr_assert(memcmp(again.data, blob.data, blob.size) == 0);
    vkp_blob_deinit(&again);
    vkp_blob_deinit(&blob);
    vkp_spirv_program_destroy(q);
    vkp_spirv_program_destroy(p);
  }
}

static void expect_rejected(const void *data, size_t size, const char *what) {
  vkp_spirv_program_t *q = (vkp_spirv_program_t *)1;
  vkp_status_t st = vkp_spirv_program_deserialize(data, size, &q);
  cr_assert_not_null(st, "%s accepted", what);
  cr_assert_null(q);
  vkp_status_free(st);
}

Test(spirv_program, rejects_corruption, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_spirv_program_t *p = make_program("fuse_gemm_gelu_softmax");
  vkp_blob_t blob;
  VKP_TEST_OK(vkp_spirv_program_serialize(p, &blob));
  uint8_t *copy = malloc(blob.size);
  // Every truncation, including to zero bytes.
  for (size_t n = 0; n < blob.size; n += 1 + n / 64) {
    memcpy(copy, blob.data, n);
    expect_rejected(copy, n, "truncated blob");
  }
  expect_rejected(NULL, 0, "NULL");
  // Random byte flips anywhere.
  for (int i = 0; i < 300; ++i) {
    memcpy(copy, blob.data, blob.size);
    size_t at = vkp_test_rng_below(&rng, (uint32_t)blob.size);
    copy[at] ^= (uint8_t)(1 + vkp_test_rng_below(&rng, 255));
    expect_rejected(copy, blob.size, "flipped blob");
  }
  // Wrong magic and version.
  memcpy(copy, blob.data, blob.size);
  copy[0] = 'X';
  expect_rejected(copy, blob.size, "bad magic");
  memcpy(copy, blob.data, blob.size);
  copy[8] = 99;
  vkp_spirv_program_t *q = NULL;
  vkp_status_t st = vkp_spirv_program_deserialize(copy, blob.size, &q);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  vkp_status_free(st);
  free(copy);
  vkp_blob_deinit(&blob);
  vkp_spirv_program_destroy(p);
}

// Blobs whose checksum is right but whose content lies (huge counts, indices
// out of range) are rejected by the structural checks.
Test(spirv_program, rejects_consistent_lies, .timeout = 60) {
  vkp_spirv_program_t *p = make_program("fuse_matmul_bias_relu");
  // Point a binding past its buffer, then at a missing buffer.
  p->dispatches[0].bindings[0].offset = p->buffers[p->dispatches[0].bindings[0].buffer].size;
  vkp_blob_t blob;
  VKP_TEST_OK(vkp_spirv_program_serialize(p, &blob));
  expect_rejected(blob.data, blob.size, "binding past its buffer");
  vkp_blob_deinit(&blob);
  p->dispatches[0].bindings[0].offset = 0;
  p->dispatches[0].bindings[0].buffer = p->n_buffers;
  VKP_TEST_OK(vkp_spirv_program_serialize(p, &blob));
  expect_rejected(blob.data, blob.size, "binding to a missing buffer");
  vkp_blob_deinit(&blob);
  p->dispatches[0].bindings[0].buffer = 0;
  p->dispatches[0].code[0] = 0xdeadbeef;
  VKP_TEST_OK(vkp_spirv_program_serialize(p, &blob));
  expect_rejected(blob.data, blob.size, "code without the SPIR-V magic");
  vkp_blob_deinit(&blob);
  vkp_spirv_program_destroy(p);
}
