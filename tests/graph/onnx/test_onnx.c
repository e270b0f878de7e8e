// SPDX-License-Identifier: Apache-2.0
// graph/onnx.c: the loader. Refusal lists, names, malformed and mutated
// files, allocation failures, model info, the JSON round trip. The models
// come from gen_models.py (a ctest fixture run first with a fresh seed).
// Every test has the same .timeout: Criterion 2.4.1 leaks in its runner
// process (failing ASan) when timeouts differ in a file.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/onnx.h"
#include "vkpipe/target.h"

Test(onnx, refusal_lists_every_unsupported_node, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "refuse.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_onnx_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s",
            vkp_status_message(st));
  const char *msg = vkp_status_message(st);
  // One error, every problem on its own line: the dtype of input z, the
  // unknown op, the unknown attribute, the foreign domain.
  cr_assert(strstr(msg, "cannot import 4 items"), "%s", msg);
  cr_assert(strstr(msg, "graph input 'z': dtype complex64"), "%s", msg);
  cr_assert(strstr(msg, "node 'no_such_op' (TfIdfVectorizer): unsupported op"), "%s", msg);
  cr_assert(strstr(msg, "node 'odd_attr' (LeakyRelu): attribute 'beta'"), "%s", msg);
  cr_assert(strstr(msg, "node 'custom' (MyOp): domain 'com.example'"), "%s", msg);
  // Nodes downstream of a refused node, with nothing wrong of their own, are
  // counted on one line, not listed as problems.
  cr_assert(strstr(msg, "not imported because an input comes from a node above "
                        "(nothing else wrong with them): 2 nodes (Relu 1, Add 1)"),
            "%s", msg);
  cr_assert_null(strstr(msg, "'join'"), "%s", msg);
  vkp_status_free(st);
}

// 521 problems of four kinds read in a few grouped lines, with every problem
// counted and nothing cut off.
Test(onnx, refusal_groups_hundreds_of_problems, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "many_problems.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_onnx_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "cannot import 521 items") &&
                strstr(msg, "(4 distinct problems)"),
            "%s", msg);
  cr_assert(strstr(msg, "graph input 'x': dimension 0 is symbolic ('batch')"), "%s", msg);
  cr_assert(strstr(msg, "Foo: 300 nodes ('foo0', 'foo1', 'foo2' and 297 more), the "
                        "first: domain 'com.example' is not supported"),
            "%s", msg);
  cr_assert(strstr(msg, "NoSuchOp: 200 nodes ('unknown0', 'unknown1', 'unknown2' "
                        "and 197 more), the first: unsupported op"),
            "%s", msg);
  cr_assert(strstr(msg, "LeakyRelu: 20 nodes ('leaky0', 'leaky1', 'leaky2' and 17 "
                        "more), the first: attribute 'beta' is not supported"),
            "%s", msg);
  cr_assert(strstr(msg, "(Relu 300)"), "%s", msg);
  cr_assert_null(strstr(msg, "..."), "%s", msg);
  int lines = 0;
  for (const char *p = msg; *p; ++p) lines += *p == '\n';
  cr_assert_eq(lines, 5, "%s", msg);
  vkp_status_free(st);
}

Test(onnx, node_names_are_unique_and_deterministic, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("names.onnx");
  cr_assert_eq(g->n_nodes, 4);
  cr_assert_neq(vkp_graph_find_node(g, "Relu_0"), -1);
  cr_assert_neq(vkp_graph_find_node(g, "dup"), -1);
  cr_assert_neq(vkp_graph_find_node(g, "Neg_2"), -1);
  cr_assert_neq(vkp_graph_find_node(g, "Abs_3"), -1);
  vkp_graph_destroy(g);
}

typedef struct bad_case_t {
  const char *file;
  vkp_status_code_t code;
  const char *needle;  // must appear in the message
} bad_case_t;

Test(onnx, malformed_models_are_refused_with_a_reason, .timeout = 60) {
  static const bad_case_t cases[] = {
      {"bad_negative_dims.onnx", VKP_STATUS_OUT_OF_RANGE, "initializer 'w'"},
      {"bad_huge_dims.onnx", VKP_STATUS_OUT_OF_RANGE, "too large"},
      {"bad_raw_length.onnx", VKP_STATUS_INVALID_ARGUMENT, "raw_data has 10 bytes"},
      {"bad_missing_initializer.onnx", VKP_STATUS_INVALID_ARGUMENT, "input 'w' is not defined"},
      {"bad_cycle.onnx", VKP_STATUS_INVALID_ARGUMENT, "node 'r1' (Relu): input 'b'"},
      {"bad_type_mismatch.onnx", VKP_STATUS_INVALID_ARGUMENT, "different dtypes"},
      {"bad_shape_mismatch.onnx", VKP_STATUS_INVALID_ARGUMENT, "do not broadcast"},
      {"bad_opset.onnx", VKP_STATUS_UNSUPPORTED, "opset 23"},
      {"bad_external_escape.onnx", VKP_STATUS_INVALID_ARGUMENT, "leaves the model's folder"},
      {"bad_external_missing.onnx", VKP_STATUS_NOT_FOUND, "no_such_file.bin"},
      {"bad_not_protobuf.onnx", VKP_STATUS_PARSE_ERROR, "not a valid ONNX model"},
      {"bad_huge_input.onnx", VKP_STATUS_OUT_OF_RANGE, "graph input 'x'"},
      {"bad_huge_kernel.onnx", VKP_STATUS_INVALID_ARGUMENT, "'kernel_shape' entry 0"},
      {"bad_huge_constant.onnx", VKP_STATUS_UNSUPPORTED, "too large"},
      {"bad_huge_range.onnx", VKP_STATUS_UNSUPPORTED, "too large"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[1024];
    onnx_model_path(path, sizeof path, cases[i].file);
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_graph_load(path, &g);
    cr_assert_null(g, "%s loaded", cases[i].file);
    cr_assert_not_null(st, "%s loaded", cases[i].file);
    const char *msg = vkp_status_message(st);
    cr_expect(strstr(msg, cases[i].needle), "%s: '%s' not in: %s",
              cases[i].file, cases[i].needle, msg);
    cr_expect(vkp_status_is(st, cases[i].code), "%s: code %s: %s", cases[i].file,
              vkp_status_code_name(vkp_status_code(st)), msg);
    vkp_status_free(st);
  }
  // Extreme but legal values import (under UBSan: without overflow).
  vkp_graph_t *g = onnx_load_model("extreme_slice.onnx");
  vkp_graph_destroy(g);
}

// Loads a buffer and requires an error or a valid graph.
static void load_mutant(const unsigned char *data, size_t size, int *ok,
                        int *err) {
  vkp_graph_t *g = NULL;
  vkp_status_t st =
      vkp_onnx_load_buffer(data, size, onnx_models_dir(), "mutant", NULL, &g);
  if (st) {
    cr_assert_null(g);
    cr_assert(vkp_status_message(st)[0]);
    vkp_status_free(st);
    ++*err;
  } else {
    cr_assert(g->validated);
    vkp_graph_destroy(g);
    ++*ok;
  }
}

Test(onnx, truncated_models_fail_cleanly, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "cnn.onnx");
  size_t size = 0;
  unsigned char *data = (unsigned char *)vkp_test_read_file(path, &size);
  cr_assert(data && size > 100);
  int ok = 0, err = 0;
  // Every offset near the ends, a spread in between.
  size_t step = size / 400 + 1;
  for (size_t cut = 0; cut < size; cut += (cut < 64 || size - cut < 64) ? 1 : step)
    load_mutant(data, cut, &ok, &err);
  cr_assert_gt(err, 0);
  free(data);
}

Test(onnx, byte_flips_fail_cleanly, .timeout = 60) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  const char *files[] = {"cnn.onnx", "transformer.onnx"};
  for (int f = 0; f < 2; ++f) {
    char path[1024];
    onnx_model_path(path, sizeof path, files[f]);
    size_t size = 0;
    unsigned char *data = (unsigned char *)vkp_test_read_file(path, &size);
    cr_assert(data && size > 100);
    unsigned char *copy = malloc(size);
    int ok = 0, err = 0;
    for (int trial = 0; trial < 300; ++trial) {
      memcpy(copy, data, size);
      int flips = 1 + (int)vkp_test_rng_below(&rng, 4);
      for (int k = 0; k < flips; ++k)
        copy[vkp_test_rng_below(&rng, (uint32_t)size)] ^=
            (unsigned char)(1 + vkp_test_rng_below(&rng, 255));
      load_mutant(copy, size, &ok, &err);
    }
    cr_assert_eq(ok + err, 300, "seed %llu", (unsigned long long)seed);
    free(copy);
    free(data);
  }
}

Test(onnx, allocation_failures_are_reported, .timeout = 60) {
  // Walk every allocation of a small import: each failure is an error, and
  // nothing leaks.
  onnx_walk_import_allocations("softmax_opset11.onnx");
}

Test(onnx, info_lists_ops_and_inputs, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "cnn.onnx");
  vkp_onnx_info_t info;
  VKP_TEST_OK(vkp_onnx_info_read(path, &info));
  cr_assert_eq(info.opset, 13);
  cr_assert_eq(info.n_nodes, 14);
  cr_assert_eq(info.n_inputs, 1);
  cr_assert_str_eq(info.inputs[0], "x");
  cr_assert_str_eq(info.op_types[0], "Conv");
  cr_assert_str_eq(info.op_types[info.n_op_types - 1], "Gemm");
  vkp_onnx_info_deinit(&info);
}

// `vkpipe import` writes the graph with vkp_graph_save: the JSON + .bin form
// loads back and gives bit-identical results.
Test(onnx, json_round_trip_is_identical, .timeout = 60) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *ref = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  const char *names[] = {"cnn", "transformer"};
  for (int m = 0; m < 2; ++m) {
    char file[256], path[1024], json[1024];
    snprintf(file, sizeof file, "%s.onnx", names[m]);
    vkp_graph_t *g = onnx_load_model(file);
    snprintf(file, sizeof file, "%s.roundtrip.json", names[m]);
    onnx_model_path(json, sizeof json, file);
    VKP_TEST_OK(vkp_graph_save(g, json));
    vkp_graph_t *back = NULL;
    VKP_TEST_OK(vkp_graph_load(json, &back));
    cr_assert_eq(back->n_nodes, g->n_nodes);
    vkp_tensor_t in = {0}, a = {0}, b = {0};
    snprintf(file, sizeof file, "%s.input_0.pb", names[m]);
    onnx_model_path(path, sizeof path, file);
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &in, NULL));
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &in, &a));
    VKP_TEST_OK(vkp_target_run_graph(ref, back, NULL, &in, &b));
    cr_assert_eq(vkp_tensor_nbytes(&a), vkp_tensor_nbytes(&b));
    cr_assert(memcmp(a.data, b.data, vkp_tensor_nbytes(&a)) == 0,
              "%s: results differ after the JSON round trip", names[m]);
    vkp_tensor_deinit(&in);
    vkp_tensor_deinit(&a);
    vkp_tensor_deinit(&b);
    vkp_graph_destroy(back);
    vkp_graph_destroy(g);
  }
  vkp_registry_destroy(reg);
}

// Options: a graph input frozen to a constant reaches import-time folding.
Test(onnx, frozen_inputs_become_constants, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path,
                  "conformance/test_reshape_shape_input/model.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_onnx_load(path, &g);  // shape unknown at import
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "must be known at import time"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  int64_t shape_value[2] = {4, 3}, dims[1] = {2};
  vkp_tensor_t shape;
  VKP_TEST_OK(vkp_tensor_init_view(&shape, VKP_DTYPE_INT64, 1, dims, shape_value));
  const char *names[1] = {"s"};
  vkp_onnx_options_t options = {.n_constants = 1, .constant_names = names,
                                .constants = &shape};
  VKP_TEST_OK(vkp_onnx_load_with_options(path, &options, &g));
  cr_assert_eq(g->n_inputs, 1);
  cr_assert_str_eq(g->values[g->inputs[0]].name, "x");
  const vkp_value_t *y = &g->values[g->outputs[0]];
  cr_assert(y->rank == 2 && y->shape[0] == 4 && y->shape[1] == 3);
  vkp_graph_destroy(g);
}
