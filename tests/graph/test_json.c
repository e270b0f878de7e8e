// SPDX-License-Identifier: Apache-2.0
// graph/json.c: the JSON + .bin graph format. Loading the example, exact
// load -> save -> load round trips, every bad-input path (each an error status
// naming the node, field or file, with nothing leaked) and an allocation
// failure walk.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

// A fresh scratch directory per test, removed at the end.
static char scratch[256];

static void make_scratch(void) {
  snprintf(scratch, sizeof scratch, "%s/test_json_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(scratch));
}

static void remove_scratch(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(json, .init = make_scratch, .fini = remove_scratch);

static void write_file(const char *name, const void *data, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot create %s", path);
  cr_assert_eq(fwrite(data, 1, size, f), size);
  cr_assert_eq(fclose(f), 0);
}

static const char *example_path(void) {
  static char path[512];
  snprintf(path, sizeof path, "%s/examples/mlp.json", vkp_test_source_dir());
  return path;
}

// ---------------------------------------------------------------------------
// Structural comparison, by name: the value table's order may differ.

static void assert_attrs_equal(const vkp_node_t *a, const vkp_node_t *b) {
  cr_assert_eq(a->n_attrs, b->n_attrs, "node '%s' attr count", a->name);
  for (int32_t i = 0; i < a->n_attrs; ++i) {
    const vkp_attr_t *x = &a->attrs[i];
    const vkp_attr_t *y = vkp_node_attr(b, x->name);
    cr_assert_not_null(y, "node '%s' lost attribute '%s'", a->name, x->name);
    cr_assert_eq(x->kind, y->kind, "attribute '%s' kind", x->name);
    switch (x->kind) {
      case VKP_ATTR_INT:
        cr_assert_eq(x->i, y->i);
        break;
      case VKP_ATTR_FLOAT:
        cr_assert(memcmp(&x->f, &y->f, sizeof x->f) == 0 ||
                      (isnan(x->f) && isnan(y->f)),
                  "attribute '%s': %.17g vs %.17g", x->name, x->f, y->f);
        break;
      case VKP_ATTR_STRING:
        cr_assert_str_eq(x->s, y->s);
        break;
      case VKP_ATTR_INTS:
        cr_assert_eq(x->count, y->count);
        for (int32_t j = 0; j < x->count; ++j) cr_assert_eq(x->ints[j], y->ints[j]);
        break;
      case VKP_ATTR_FLOATS:
        cr_assert_eq(x->count, y->count);
        for (int32_t j = 0; j < x->count; ++j)
          cr_assert(x->floats[j] == y->floats[j] ||
                    (isnan(x->floats[j]) && isnan(y->floats[j])));
        break;
      default:
        cr_assert_fail("bad kind");
    }
  }
}

static void assert_values_equal(const vkp_value_t *a, const vkp_value_t *b) {
  cr_assert_str_eq(a->name, b->name);
  cr_assert_eq(a->kind, b->kind, "value '%s' kind", a->name);
  cr_assert_eq(a->dtype, b->dtype, "value '%s' dtype", a->name);
  cr_assert_eq(a->rank, b->rank, "value '%s' rank", a->name);
  for (int32_t i = 0; i < a->rank; ++i) cr_assert_eq(a->shape[i], b->shape[i]);
  cr_assert_eq(a->is_output, b->is_output);
  cr_assert_eq(a->nbytes, b->nbytes, "value '%s' bytes", a->name);
  if (a->kind == VKP_VALUE_CONSTANT && a->nbytes)
    cr_assert(memcmp(a->data, b->data, a->nbytes) == 0,
              "constant '%s' bytes differ", a->name);
}

static void assert_graphs_equal(const vkp_graph_t *a, const vkp_graph_t *b) {
  cr_assert_str_eq(a->name, b->name);
  cr_assert_eq(a->n_values, b->n_values);
  cr_assert_eq(a->n_nodes, b->n_nodes);
  cr_assert_eq(a->n_inputs, b->n_inputs);
  cr_assert_eq(a->n_outputs, b->n_outputs);
  for (int32_t i = 0; i < a->n_values; ++i) {
    int32_t j = vkp_graph_find_value(b, a->values[i].name);
    cr_assert_geq(j, 0, "value '%s' missing", a->values[i].name);
    assert_values_equal(&a->values[i], &b->values[j]);
  }
  for (int32_t i = 0; i < a->n_inputs; ++i)
    cr_assert_str_eq(a->values[a->inputs[i]].name, b->values[b->inputs[i]].name);
  for (int32_t i = 0; i < a->n_outputs; ++i)
    cr_assert_str_eq(a->values[a->outputs[i]].name, b->values[b->outputs[i]].name);
  for (int32_t i = 0; i < a->n_nodes; ++i) {
    const vkp_node_t *x = &a->nodes[i], *y = &b->nodes[i];
    cr_assert_str_eq(x->name, y->name, "node order differs at %d", (int)i);
    cr_assert_eq(x->op, y->op);
    cr_assert_eq(x->n_inputs, y->n_inputs);
    for (int32_t k = 0; k < x->n_inputs; ++k) {
      cr_assert_eq(x->inputs[k] < 0, y->inputs[k] < 0);
      if (x->inputs[k] >= 0)
        cr_assert_str_eq(a->values[x->inputs[k]].name, b->values[y->inputs[k]].name);
    }
    cr_assert_eq(x->n_outputs, y->n_outputs);
    for (int32_t k = 0; k < x->n_outputs; ++k)
      cr_assert_str_eq(a->values[x->outputs[k]].name, b->values[y->outputs[k]].name);
    cr_assert_eq(x->target == NULL, y->target == NULL);
    if (x->target) cr_assert_str_eq(x->target, y->target);
    assert_attrs_equal(x, y);
  }
}

// ---------------------------------------------------------------------------
// Good input

Test(json, loads_example, .timeout = 30) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(example_path(), &g));
  cr_assert(g->validated);
  cr_assert_str_eq(g->name, "mlp");
  cr_assert_eq(g->n_inputs, 1);
  cr_assert_eq(g->n_outputs, 1);
  cr_assert_eq(g->n_nodes, 5);
  cr_assert_eq(vkp_graph_constant_bytes(g), (32 * 64 + 32 + 32 * 10 + 10) * 4);
  const vkp_node_t *fc1 = &g->nodes[vkp_graph_find_node(g, "fc1")];
  cr_assert_eq(fc1->op, VKP_OP_GEMM);
  cr_assert_eq(vkp_node_attr_int(fc1, "transB", 0), 1);
  const vkp_node_t *sm = &g->nodes[vkp_graph_find_node(g, "probs")];
  cr_assert_eq(vkp_node_attr_int(sm, "axis", -7), 1, "canonical axis");
  const vkp_value_t *y = &g->values[g->outputs[0]];
  cr_assert_eq(y->rank, 2);
  cr_assert_eq(y->shape[1], 10);
  vkp_graph_destroy(g);
}

static void round_trip(const vkp_graph_t *g) {
  char path[512], path2[512];
  snprintf(path, sizeof path, "%s/first.json", scratch);
  snprintf(path2, sizeof path2, "%s/second.json", scratch);
  VKP_TEST_OK(vkp_graph_save(g, path));
  vkp_graph_t *h;
  VKP_TEST_OK(vkp_graph_load(path, &h));
  assert_graphs_equal(g, h);
  // Saving the reloaded graph gives the same bytes again.
  VKP_TEST_OK(vkp_graph_save(h, path2));
  vkp_graph_destroy(h);
  size_t n1, n2;
  char *j1 = vkp_test_read_file(path, &n1);
  char *j2 = vkp_test_read_file(path2, &n2);
  cr_assert(j1 && j2);
  // Only the weights file name differs.
  char *p = strstr(j1, "first.bin");
  cr_assert_not_null(p);
  memcpy(p, "second", 6);
  cr_assert_eq(n1 + 1, n2);
  cr_assert(memcmp(j1, j2, (size_t)(p - j1)) == 0);
  free(j1);
  free(j2);
}

Test(json, example_round_trips_exactly, .timeout = 30) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(example_path(), &g));
  round_trip(g);
  vkp_graph_destroy(g);
}

// The in-memory form (used by .vkp artifacts) round-trips like the files.
Test(json, memory_round_trip, .timeout = 30) {
  vkp_graph_t *g, *h;
  VKP_TEST_OK(vkp_graph_load(example_path(), &g));
  char *json;
  void *bin;
  size_t json_size, bin_size;
  VKP_TEST_OK(vkp_graph_save_memory(g, "w.bin", &json, &json_size, &bin, &bin_size));
  cr_assert_eq(strlen(json), json_size);
  cr_assert(strstr(json, "\"w.bin\""), "the JSON names its weights");
  cr_assert_geq(bin_size, vkp_graph_constant_bytes(g));
  VKP_TEST_OK(vkp_graph_load_memory(json, json_size, bin, bin_size, &h));
  assert_graphs_equal(g, h);
  vkp_graph_destroy(h);
  // Weights shorter than the JSON says are an error naming the constant.
  vkp_status_t st = vkp_graph_load_memory(json, json_size, bin, bin_size / 2, &h);
  cr_assert_not_null(st);
  cr_assert(strstr(vkp_status_message(st), "past end"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_free(json);
  vkp_free(bin);
  vkp_graph_destroy(g);
}

// A graph built in memory with random weights and every attribute kind,
// including values JSON numbers cannot hold (huge ints, NaN, infinities).
Test(json, built_graph_round_trips_exactly, .timeout = 30) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  vkp_graph_t *g = g_new("built");
  int64_t xs[] = {1, 3, 8, 8}, ws[] = {4, 3, 3, 3}, bs[] = {4}, ids[] = {2};
  float w[4 * 27], b[4];
  for (int i = 0; i < 4 * 27; ++i) w[i] = vkp_test_rng_uniform(&rng, -1, 1);
  for (int i = 0; i < 4; ++i) b[i] = vkp_test_rng_uniform(&rng, -1, 1);
  int64_t idx[2] = {(int64_t)vkp_test_rng_next(&rng), INT64_MIN};
  g_in(g, "image", VKP_DTYPE_FLOAT32, 4, xs);
  g_const_data(g, "w", VKP_DTYPE_FLOAT32, 4, ws, w);
  g_const_data(g, "b", VKP_DTYPE_FLOAT32, 1, bs, b);
  g_const_data(g, "ids", VKP_DTYPE_INT64, 1, ids, idx);
  int64_t pads[] = {1, 1, 1, 1};
  vkp_attr_t conv_attrs[] = {
      {.name = "pads", .kind = VKP_ATTR_INTS, .ints = pads, .count = 4},
  };
  g_node(g, "conv", VKP_OP_CONV2D, "image,w,b", "c", 1, conv_attrs);
  vkp_attr_t clip_attrs[] = {
      {.name = "min", .kind = VKP_ATTR_FLOAT, .f = -INFINITY},
      {.name = "max", .kind = VKP_ATTR_FLOAT,
       .f = (double)vkp_test_rng_uniform(&rng, 0, 1) / 3.0},
  };
  const char *clip_in[] = {"c"}, *clip_out[] = {"clipped"};
  int32_t clip_node;
  VKP_TEST_OK(vkp_graph_add_node(g, "clip", VKP_OP_CLIP, 1, clip_in, 1,
                                 clip_out, 2, clip_attrs, &clip_node));
  VKP_TEST_OK(vkp_graph_set_node_target(g, clip_node, "cpu"));
  // Slices with int64 extremes, as ONNX exporters write them.
  int64_t starts[] = {0}, ends[] = {INT64_MAX}, axes[] = {3};
  vkp_attr_t slice_attrs[] = {
      {.name = "starts", .kind = VKP_ATTR_INTS, .ints = starts, .count = 1},
      {.name = "ends", .kind = VKP_ATTR_INTS, .ints = ends, .count = 1},
      {.name = "axes", .kind = VKP_ATTR_INTS, .ints = axes, .count = 1},
  };
  g_node(g, "slice", VKP_OP_SLICE, "clipped", "sliced", 3, slice_attrs);
  vkp_attr_t gelu_attrs[] = {
      {.name = "approximate", .kind = VKP_ATTR_STRING, .s = "tanh"}};
  g_node(g, "gelu", VKP_OP_GELU, "sliced", "out", 1, gelu_attrs);
  // An omitted optional input ("" in the file).
  int64_t ms[] = {2, 3}, ks[] = {3, 4};
  float k[12];
  for (int i = 0; i < 12; ++i) k[i] = vkp_test_rng_uniform(&rng, -1, 1);
  g_in(g, "m", VKP_DTYPE_FLOAT32, 2, ms);
  g_const_data(g, "k", VKP_DTYPE_FLOAT32, 2, ks, k);
  g_node(g, "gemm", VKP_OP_GEMM, "m,k,", "gm", 0, NULL);
  g_out(g, "out,c,gm");
  g_validate(g);
  round_trip(g);
  vkp_graph_destroy(g);
}

Test(json, load_json_string_with_base_dir, .timeout = 30) {
  float w[6] = {1, 2, 3, 4, 5, 6};
  write_file("w.bin", w, sizeof w);
  const char *text =
      "{\"format\": \"vkpipe-graph\", \"version\": 1, \"weights\": \"w.bin\","
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2, 3]}],"
      " \"constants\": [{\"name\": \"w\", \"dtype\": \"float32\", \"shape\": [3, 2],"
      "  \"offset\": 0, \"length\": 24}],"
      " \"nodes\": [{\"name\": \"mm\", \"op\": \"matmul\", \"inputs\": [\"x\", \"w\"],"
      "  \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}";
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load_json(text, strlen(text), scratch, &g));
  cr_assert_str_eq(g->name, "graph");
  const vkp_value_t *wv = &g->values[vkp_graph_find_value(g, "w")];
  cr_assert(memcmp(wv->data, w, sizeof w) == 0);
  vkp_graph_destroy(g);
  // The same through a file that starts with a byte order mark.
  char bom[2048];
  snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", text);
  write_file("bom.json", bom, strlen(bom));
  char path[512];
  snprintf(path, sizeof path, "%s/bom.json", scratch);
  VKP_TEST_OK(vkp_graph_load(path, &g));
  vkp_graph_destroy(g);
}

// ---------------------------------------------------------------------------
// Bad input: every case fails with a status whose message contains `needle`,
// and leaves no allocation behind.

#define HEADER "{\"format\": \"vkpipe-graph\", \"version\": 1, "
#define X_INPUT "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2, 4]}], "
#define W_CONST(off, len)                                                      \
  "\"weights\": \"w.bin\", \"constants\": [{\"name\": \"w3\", \"dtype\": "     \
  "\"float32\", \"shape\": [4, 2], \"offset\": " off ", \"length\": " len "}], "
#define FC1(op, ins) \
  "\"nodes\": [{\"name\": \"fc1\", \"op\": \"" op "\", \"inputs\": " ins ", \"outputs\": [\"y\"]}], "
#define OUT_Y "\"outputs\": [\"y\"]}"

static void expect_error(const char *json, vkp_status_code_t code,
                         const char *needle) {
  float w[8] = {0};
  write_file("w.bin", w, sizeof w);
  write_file("model.json", json, strlen(json));
  char path[512];
  snprintf(path, sizeof path, "%s/model.json", scratch);
  vkp_test_counting_alloc_t counter;
  vkp_test_counting_alloc_install(&counter, 0);
  vkp_graph_t *g = (vkp_graph_t *)1;
  vkp_status_t st = vkp_graph_load(path, &g);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", vkp_status_message(st));
  vkp_status_code_t got = vkp_status_code(st);
  vkp_status_free(st);
  int64_t live = counter.live;
  vkp_test_counting_alloc_uninstall();
  cr_assert_not_null(st, "loading succeeded; expected an error with '%s'", needle);
  cr_assert_null(g, "graph not cleared on failure");
  cr_assert_eq(live, 0, "%lld allocations leaked (error was: %s)",
               (long long)live, msg);
  cr_assert(strstr(msg, needle), "message '%s' lacks '%s'", msg, needle);
  cr_assert(strstr(msg, "model.json"), "message '%s' does not name the file", msg);
  cr_assert_eq(got, code, "code %s, expected %s: %s", vkp_status_code_name(got),
               vkp_status_code_name(code), msg);
}

#define GOOD HEADER X_INPUT W_CONST("0", "32") FC1("matmul", "[\"x\", \"w3\"]") OUT_Y

Test(json, bad_input_baseline_is_good, .timeout = 30) {
  write_file("model.json", GOOD, strlen(GOOD));
  float w[8] = {0};
  write_file("w.bin", w, sizeof w);
  char path[512];
  snprintf(path, sizeof path, "%s/model.json", scratch);
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(path, &g));
  vkp_graph_destroy(g);
}

Test(json, malformed_json_gives_line_and_column, .timeout = 30) {
  expect_error("{\n  \"format\": \"vkpipe-graph\",\n  \"version\": 1,,\n}",
               VKP_STATUS_PARSE_ERROR, "malformed JSON at line 3, column");
  expect_error(GOOD " extra", VKP_STATUS_PARSE_ERROR, "trailing characters");
  vkp_graph_t *g;
  vkp_status_t st = vkp_graph_load_json("[1, 2]", 6, NULL, &g);
  cr_assert(strstr(vkp_status_message(st), "top level must be an object"));
  vkp_status_free(st);
}

Test(json, missing_and_mistyped_fields, .timeout = 30) {
  expect_error("{\"version\": 1}", VKP_STATUS_INVALID_ARGUMENT,
               "missing field 'format'");
  expect_error("{\"format\": \"other\", \"version\": 1}",
               VKP_STATUS_INVALID_ARGUMENT, "a vkpipe graph has 'vkpipe-graph'");
  expect_error(HEADER "\"oops\": 1, " X_INPUT FC1("relu", "[\"x\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "unknown field 'oops'");
  expect_error("{\"format\": \"vkpipe-graph\", \"version\": 2}",
               VKP_STATUS_UNSUPPORTED, "format version 2 is not supported");
  expect_error("{\"format\": \"vkpipe-graph\", \"version\": \"1\"}",
               VKP_STATUS_INVALID_ARGUMENT, "missing field 'inputs'");  // "1" is fine
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"shape\": [2]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "input 'x': missing field 'dtype'");
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", "
                      "\"shape\": [2, -1]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "input 'x': shape[1] must be a non-negative");
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", "
                      "\"shape\": [2.5]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "shape[0]");
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"dtype\": \"bfloat7\", "
                      "\"shape\": [2]}], " OUT_Y,
               VKP_STATUS_UNSUPPORTED, "input 'x': unknown dtype 'bfloat7'");
  // An empty input name beside another input (the fuzzer's heap overflow in
  // the binder's name list, graph/bind.c).
  expect_error(HEADER "\"inputs\": [{\"name\": \"\", \"dtype\": \"float32\", "
                      "\"shape\": [2]}, {\"name\": \"x\", \"dtype\": \"float32\", "
                      "\"shape\": [2]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "input has an empty name");
  expect_error(HEADER "\"inputs\": {}, " OUT_Y, VKP_STATUS_INVALID_ARGUMENT,
               "field 'inputs' must be an array, got an object");
  expect_error(HEADER "\"inputs\": [7], " OUT_Y, VKP_STATUS_INVALID_ARGUMENT,
               "inputs[0] must be an object");
  expect_error(HEADER X_INPUT "\"nodes\": [{\"name\": \"fc1\", \"op\": \"relu\", "
                              "\"outputs\": [\"y\"]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT,
               "node 'fc1' (relu): missing field 'inputs'");
  expect_error(HEADER X_INPUT "\"nodes\": [{\"name\": \"fc1\", \"op\": \"relu\", "
                              "\"inputs\": [3], \"outputs\": [\"y\"]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (relu): inputs[0]");
  expect_error(HEADER X_INPUT "\"nodes\": [{\"name\": \"fc1\", \"op\": \"relu\", "
                              "\"inputs\": [\"x\"], \"outputs\": []}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (relu): 'outputs' is empty");
  expect_error(HEADER X_INPUT FC1("relu", "[\"x\"]") "\"outputs\": [4]}",
               VKP_STATUS_INVALID_ARGUMENT, "outputs[0] must be a tensor name");
  expect_error(HEADER X_INPUT FC1("relu", "[\"x\"]") "\"outputs\": []}",
               VKP_STATUS_INVALID_ARGUMENT, "has no outputs");
  expect_error(HEADER X_INPUT "\"nodes\": [{\"name\": \"fc1\", \"op\": \"relu\", "
                              "\"inputs\": [\"x\"], \"outputs\": [\"y\"], "
                              "\"target\": 5}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "field 'target' must be a string");
}

Test(json, unknown_op_names_op_and_node, .timeout = 30) {
  expect_error(HEADER X_INPUT FC1("matmull", "[\"x\", \"x\"]") OUT_Y,
               VKP_STATUS_UNSUPPORTED, "node 'fc1': unknown op 'matmull'");
}

Test(json, wrong_arity, .timeout = 30) {
  expect_error(HEADER X_INPUT W_CONST("0", "32") FC1("matmul", "[\"x\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (matmul): takes 2 inputs, got 1");
  expect_error(HEADER X_INPUT FC1("relu", "[\"x\", \"x\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (relu): takes 1 input, got 2");
}

Test(json, bad_attributes, .timeout = 30) {
#define NODE_WITH_ATTRS(op, attrs)                                       \
  HEADER X_INPUT "\"nodes\": [{\"name\": \"fc1\", \"op\": \"" op "\", " \
                 "\"inputs\": [\"x\"], \"outputs\": [\"y\"], \"attrs\": " attrs "}], " OUT_Y
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": 1}"),
               VKP_STATUS_INVALID_ARGUMENT,
               "node 'fc1' (softmax): attribute 'axis' must be an object");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": {\"integer\": 1}}"),
               VKP_STATUS_INVALID_ARGUMENT, "attribute 'axis' has unknown type 'integer'");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": {\"int\": 1.5}}"),
               VKP_STATUS_INVALID_ARGUMENT, "attribute 'axis' must be an integer");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": {\"string\": \"1\"}}"),
               VKP_STATUS_INVALID_ARGUMENT,
               "node 'fc1' (softmax): attribute 'axis' must be int, got string");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": {\"int\": 5}}"),
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (softmax): axis 5 out of range");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axs\": {\"int\": 1}}"),
               VKP_STATUS_INVALID_ARGUMENT, "unknown attribute 'axs'");
  expect_error(NODE_WITH_ATTRS("softmax", "{\"axis\": {\"int\": 1}, \"axis\": {\"int\": 0}}"),
               VKP_STATUS_ALREADY_EXISTS, "attribute 'axis' given twice");
  expect_error(NODE_WITH_ATTRS("transpose", "{\"perm\": {\"ints\": [1, \"x\"]}}"),
               VKP_STATUS_INVALID_ARGUMENT, "attribute 'perm'[1] must be an integer");
  expect_error(NODE_WITH_ATTRS("transpose", "{\"perm\": {\"ints\": 3}}"),
               VKP_STATUS_INVALID_ARGUMENT, "attribute 'perm' must be an array");
  expect_error(NODE_WITH_ATTRS("clip", "{\"min\": {\"float\": \"lots\"}}"),
               VKP_STATUS_INVALID_ARGUMENT, "attribute 'min' must be a number");
  expect_error(NODE_WITH_ATTRS("relu", "[]"), VKP_STATUS_INVALID_ARGUMENT,
               "field 'attrs' must be an object");
#undef NODE_WITH_ATTRS
}

Test(json, dtype_and_shape_mismatches, .timeout = 30) {
  // matmul of [2,4] by [4,2] is fine; by a [2,4] input is not.
  expect_error(HEADER X_INPUT FC1("matmul", "[\"x\", \"x\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "node 'fc1' (matmul)");
  expect_error(HEADER X_INPUT W_CONST("0", "32") FC1("matmul", "[\"x\", \"w3\"]")
               "\"outputs\": [{\"name\": \"y\", \"shape\": [2, 3]}]}",
               VKP_STATUS_INVALID_ARGUMENT,
               "output 'y': declared shape [2, 3] but the graph computes [2, 2]");
  expect_error(HEADER X_INPUT W_CONST("0", "32") FC1("matmul", "[\"x\", \"w3\"]")
               "\"outputs\": [{\"name\": \"y\", \"dtype\": \"int32\"}]}",
               VKP_STATUS_INVALID_ARGUMENT,
               "output 'y': declared dtype int32 but the graph computes float32");
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"dtype\": \"int32\", "
                      "\"shape\": [2, 4]}], " FC1("softmax", "[\"x\"]") OUT_Y,
               VKP_STATUS_UNSUPPORTED, "node 'fc1' (softmax): input 'x' has dtype int32");
}

Test(json, dangling_duplicate_and_cyclic, .timeout = 30) {
  expect_error(HEADER X_INPUT FC1("relu", "[\"nowhere\"]") OUT_Y,
               VKP_STATUS_NOT_FOUND,
               "node 'fc1' (relu): input 0 refers to unknown tensor 'nowhere'");
  expect_error(HEADER X_INPUT FC1("relu", "[\"x\"]") "\"outputs\": [\"z\"]}",
               VKP_STATUS_NOT_FOUND, "graph output 'z' is not a known tensor");
  expect_error(HEADER "\"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", "
                      "\"shape\": [2]}, {\"name\": \"x\", \"dtype\": \"float32\", "
                      "\"shape\": [2]}], " FC1("relu", "[\"x\"]") OUT_Y,
               VKP_STATUS_ALREADY_EXISTS, "input 'x': a tensor with that name already exists");
  expect_error(HEADER X_INPUT W_CONST("0", "32")
               "\"nodes\": [{\"name\": \"fc1\", \"op\": \"relu\", \"inputs\": [\"x\"], "
               "\"outputs\": [\"w3\"]}], " OUT_Y,
               VKP_STATUS_ALREADY_EXISTS, "output 'w3' is already a constant");
  expect_error(HEADER X_INPUT
               "\"nodes\": [{\"name\": \"a\", \"op\": \"relu\", \"inputs\": [\"x\"], "
               "\"outputs\": [\"y\"]}, {\"name\": \"a\", \"op\": \"relu\", "
               "\"inputs\": [\"y\"], \"outputs\": [\"z\"]}], " OUT_Y,
               VKP_STATUS_ALREADY_EXISTS, "node 'a': a node with that name already exists");
  expect_error(HEADER X_INPUT
               "\"nodes\": [{\"name\": \"a\", \"op\": \"add\", \"inputs\": [\"x\", \"q\"], "
               "\"outputs\": [\"p\"]}, {\"name\": \"b\", \"op\": \"relu\", "
               "\"inputs\": [\"p\"], \"outputs\": [\"q\"]}, {\"name\": \"c\", "
               "\"op\": \"relu\", \"inputs\": [\"q\"], \"outputs\": [\"y\"]}], " OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "has a cycle through nodes 'a', 'b', 'c'");
}

Test(json, weights_file_problems, .timeout = 30) {
  expect_error(HEADER X_INPUT
               "\"weights\": \"missing.bin\", \"constants\": [{\"name\": \"w3\", "
               "\"dtype\": \"float32\", \"shape\": [4, 2], \"offset\": 0, "
               "\"length\": 32}], " FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_IO_ERROR, "cannot open weights file");
  expect_error(HEADER X_INPUT
               "\"constants\": [{\"name\": \"w3\", \"dtype\": \"float32\", "
               "\"shape\": [4, 2], \"offset\": 0, \"length\": 32}], "
               FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "has constants but no 'weights' file");
  expect_error(HEADER X_INPUT W_CONST("16", "32") FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_OUT_OF_RANGE,
               "constant 'w3': offset 16+32 past end of w.bin (size 32)");
  expect_error(HEADER X_INPUT W_CONST("9007199254740991", "32")
               FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_OUT_OF_RANGE, "offset 9007199254740991+32 past end");
  expect_error(HEADER X_INPUT W_CONST("\"9223372036854775807\"", "32")
               FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_OUT_OF_RANGE, "past end of w.bin");
  expect_error(HEADER X_INPUT W_CONST("-4", "32") FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "must not be negative");
  expect_error(HEADER X_INPUT W_CONST("0", "28") FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT,
               "constant 'w3': length 28 does not match float32 [4, 2] (32 bytes)");
  expect_error(HEADER X_INPUT W_CONST("0", "9007199254740992")
               FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "field 'length' must be an integer");
  expect_error(HEADER X_INPUT W_CONST("0", "1e300") FC1("matmul", "[\"x\", \"w3\"]") OUT_Y,
               VKP_STATUS_INVALID_ARGUMENT, "field 'length' must be an integer");
  // A shape whose byte size overflows is refused before anything is allocated.
  expect_error(HEADER X_INPUT
               "\"weights\": \"w.bin\", \"constants\": [{\"name\": \"huge\", "
               "\"dtype\": \"float32\", \"shape\": [4294967296, 4294967296, 4], "
               "\"offset\": 0, \"length\": 32}], " FC1("relu", "[\"x\"]") OUT_Y,
               VKP_STATUS_OUT_OF_RANGE, "constant 'huge': float32 [4294967296, "
                                        "4294967296, 4] is too large");
}

Test(json, missing_model_file, .timeout = 30) {
  vkp_graph_t *g;
  vkp_status_t st = vkp_graph_load("/nonexistent/model.json", &g);
  cr_assert_not_null(st);
  cr_assert(strstr(vkp_status_message(st), "/nonexistent/model.json"));
  vkp_status_free(st);
}

// ---------------------------------------------------------------------------
// Allocation failures: fail allocation N for N = 1, 2, ... until the load
// succeeds. Every failure must be a status, with nothing left allocated.

Test(json, allocation_failure_walk, .timeout = 30) {
  int64_t n = 1;
  for (;; ++n) {
    vkp_test_counting_alloc_t counter;
    vkp_graph_load_options_t opts = {.allocator = vkp_test_counting_alloc_init(&counter, n)};
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_graph_load_with_options(example_path(), &opts, &g);
    bool failed = counter.failed;
    if (!st) {
      vkp_graph_destroy(g);
      int64_t live = counter.live;
      cr_assert_not(failed, "allocation %lld failed but the load succeeded",
                    (long long)n);
      cr_assert_eq(live, 0);
      break;
    }
    cr_assert_null(g);
    vkp_status_free(st);
    int64_t live = counter.live;
    cr_assert(failed, "load failed without an allocation failure");
    cr_assert_eq(live, 0, "failing allocation %lld leaked %lld blocks",
                 (long long)n, (long long)live);
  }
  cr_log_info("walked %lld allocation failures", (long long)n - 1);
  cr_assert_gt(n, 20);
}

Test(json, save_allocation_failure_walk, .timeout = 30) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(example_path(), &g));
  char path[512];
  snprintf(path, sizeof path, "%s/saved.json", scratch);
  for (int64_t n = 1;; ++n) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, n);
    vkp_status_t st = vkp_graph_save(g, path);
    vkp_status_free(st);
    bool failed = counter.failed;
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(live, 0, "failing allocation %lld of save leaked", (long long)n);
    if (!st) break;
    cr_assert(failed);
  }
  vkp_graph_destroy(g);
}

// Random corruptions of the example (bytes changed, truncated): whatever the
// loader decides, it must not crash and must not leak.
Test(json, corrupted_example_never_crashes_or_leaks, .timeout = 30) {
  vkp_test_rng_t rng;
  cr_log_info("seed %llu", (unsigned long long)vkp_test_rng_init(&rng));
  size_t size = 0;
  char *orig = vkp_test_read_file(example_path(), &size);
  cr_assert_not_null(orig);
  char *text = malloc(size + 1);
  char dir[512];
  snprintf(dir, sizeof dir, "%s/examples", vkp_test_source_dir());
  static const char alphabet[] = "{}[]\":,0123456789-.e \nabc\\";
  for (int iter = 0; iter < 300; ++iter) {
    memcpy(text, orig, size + 1);
    size_t n = size;
    int edits = 1 + (int)vkp_test_rng_below(&rng, 4);
    for (int e = 0; e < edits; ++e)
      text[vkp_test_rng_below(&rng, (uint32_t)n)] =
          alphabet[vkp_test_rng_below(&rng, sizeof alphabet - 1)];
    if (vkp_test_rng_below(&rng, 4) == 0) n = vkp_test_rng_below(&rng, (uint32_t)n);
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, 0);
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_graph_load_json(text, n, dir, &g);
    vkp_status_free(st);
    vkp_graph_destroy(g);
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(live, 0, "iteration %d leaked", iter);
  }
  free(text);
  free(orig);
}

// A symbolic input dimension in a JSON graph: refused without a size, with
// the flags to use; bound by name or by the whole shape; a binding that
// matches nothing is an error too.
Test(json, symbolic_dims_need_a_size, .timeout = 30) {
  static const char text[] =
      "{\"format\": \"vkpipe-graph\", \"version\": 1, \"name\": \"sym\",\n"
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [\"batch\", 4]}],\n"
      " \"nodes\": [{\"name\": \"r\", \"op\": \"relu\", \"inputs\": [\"x\"],"
      " \"outputs\": [\"y\"]}],\n"
      " \"outputs\": [\"y\"]}\n";
  write_file("sym.json", text, sizeof text - 1);
  char path[512];
  snprintf(path, sizeof path, "%s/sym.json", scratch);
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(st && strstr(vkp_status_message(st), "input 'x'") &&
                strstr(vkp_status_message(st), "dimension 0 is symbolic ('batch')") &&
                strstr(vkp_status_message(st), "--dim batch=N") &&
                strstr(vkp_status_message(st), "--shape x=Nx4"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_dim_binding_t dims[] = {{.name = "batch", .value = 3}};
  vkp_graph_load_options_t opt = {.n_dims = 1, .dims = dims};
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  const vkp_value_t *y = &g->values[vkp_graph_find_value(g, "y")];
  cr_assert(y->rank == 2 && y->shape[0] == 3 && y->shape[1] == 4);
  vkp_graph_destroy(g);
  vkp_shape_binding_t shapes[] = {{.input = "x", .rank = 2, .shape = {5, 4}}};
  vkp_graph_load_options_t by_shape = {.n_shapes = 1, .shapes = shapes};
  VKP_TEST_OK(vkp_graph_load_with_options(path, &by_shape, &g));
  cr_assert_eq(g->values[vkp_graph_find_value(g, "y")].shape[0], 5);
  vkp_graph_destroy(g);
  shapes[0].shape[1] = 5;  // contradicts the static dim
  st = vkp_graph_load_with_options(path, &by_shape, &g);
  cr_assert(st && strstr(vkp_status_message(st), "dimension 1 is 4 in the model; "
                                                 "the shape given for it says 5"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_dim_binding_t extra[] = {{.name = "batch", .value = 3}, {.name = "seq", .value = 7}};
  vkp_graph_load_options_t unused = {.n_dims = 2, .dims = extra};
  st = vkp_graph_load_with_options(path, &unused, &g);
  cr_assert(st && strstr(vkp_status_message(st), "dimension 'seq' was given a size, "
                                                 "but no graph input has a symbolic "
                                                 "dimension of that name"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
}
