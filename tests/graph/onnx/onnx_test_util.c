// SPDX-License-Identifier: Apache-2.0
#include "tests/graph/onnx/onnx_test_util.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/onnx.h"

const char *onnx_models_dir(void) {
  const char *d = getenv("VKPIPE_ONNX_MODELS");
  cr_assert(d, "VKPIPE_ONNX_MODELS is not set (run through ctest)");
  return d;
}

void onnx_model_path(char *buf, size_t size, const char *file) {
  snprintf(buf, size, "%s/%s", onnx_models_dir(), file);
}

const char *onnx_seed_note(void) {
  static char note[96];
  char path[1024];
  onnx_model_path(path, sizeof path, "seed.txt");
  size_t n = 0;
  char *text = vkp_test_read_file(path, &n);
  snprintf(note, sizeof note, "gen_models.py seed %s",
           text ? strtok(text, "\n") : "?");
  free(text);
  return note;
}

vkp_graph_t *onnx_load_model(const char *file) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load(path, &g));
  return g;
}

int onnx_count_op(const vkp_graph_t *g, vkp_op_t op) {
  int n = 0;
  for (int32_t i = 0; i < g->n_nodes; ++i) n += g->nodes[i].op == op;
  return n;
}

void onnx_run_and_compare(const vkp_graph_t *g, const char *name, double rtol,
                          double atol) {
  onnx_run_and_compare_on(g, name, "ref", 1, rtol, atol);
}

void onnx_run_and_compare_on(const vkp_graph_t *g, const char *name,
                             const char *target, int32_t threads, double rtol,
                             double atol) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *ref = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, target, &ref));
  vkp_tensor_t in[16] = {0}, out[16] = {0}, want[16] = {0};
  cr_assert_leq(g->n_inputs, 16);
  cr_assert_leq(g->n_outputs, 16);
  char path[1024], file[256];
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    snprintf(file, sizeof file, "%s.input_%d.pb", name, (int)i);
    onnx_model_path(path, sizeof path, file);
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &in[i], NULL));
  }
  vkp_compile_options_t opt = {.threads = threads};
  VKP_TEST_OK(vkp_target_run_graph(ref, g, &opt, in, out));
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    snprintf(file, sizeof file, "%s.output_%d.pb", name, (int)i);
    onnx_model_path(path, sizeof path, file);
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &want[i], NULL));
    char msg[512];
    cr_assert(vkp_test_allclose(&out[i], &want[i], rtol, atol, msg, sizeof msg),
              "%s output %d on %s: %s (%s)", name, (int)i, target, msg,
              onnx_seed_note());
  }
  for (int i = 0; i < 16; ++i) {
    vkp_tensor_deinit(&in[i]);
    vkp_tensor_deinit(&out[i]);
    vkp_tensor_deinit(&want[i]);
  }
  vkp_registry_destroy(reg);
}

void onnx_expect_refused(const char *file, vkp_status_code_t code, const char *what,
                         const char *also) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g, "%s imported", file);
  cr_assert_not_null(st, "%s imported", file);
  const char *msg = vkp_status_message(st);
  if (code != VKP_STATUS_OK) cr_assert(vkp_status_is(st, code), "%s: %s", file, msg);
  cr_assert(strstr(msg, what), "%s: %s", file, msg);
  if (also) cr_assert(strstr(msg, also), "%s: %s", file, msg);
  vkp_status_free(st);
}

void onnx_walk_import_allocations(const char *file) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  for (int64_t fail_at = 1;; ++fail_at) {
    vkp_test_counting_alloc_t state;
    vkp_onnx_options_t opts = {.bindings.allocator = vkp_test_counting_alloc_init(&state, fail_at)};
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_onnx_load_with_options(path, &opts, &g);
    bool failed = state.failed;
    vkp_status_free(st);
    vkp_graph_destroy(g);
    int64_t live = state.live;
    cr_assert_eq(live, 0, "%s: allocation %lld failed: %lld blocks leaked", file,
                 (long long)fail_at, (long long)live);
    if (!failed) {
      cr_assert_null(st);
      break;
    }
    cr_assert_not_null(st, "%s: allocation %lld failed silently", file, (long long)fail_at);
    cr_assert_lt(fail_at, 100000);
  }
}
