// SPDX-License-Identifier: Apache-2.0
// graph/op_dynamic.c through the importer: NonZero, Compress and Unique on
// run-time data and the ops downstream of their bounded results, against
// NumPy (models_dynamic.py) on "ref", outputs compared at their run-time
// shapes; the consumers that refuse a bounded input, and the targets that
// refuse one (cpu, vulkan) with the reason the partitioner shows.
#include <criterion/criterion.h>
#include <string.h>

#include "onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/target.h"

static bool has_bounded(const vkp_graph_t *g) {
  for (int32_t v = 0; v < g->n_values; ++v)
    if (g->values[v].bounded) return true;
  return false;
}

// NonZero of x > 0, then GatherND, elementwise with a static operand,
// Cast, reductions over and beside the varying axis, Shape, TopK with K
// clamped, Concat, Reshape(-1), Unsqueeze/Squeeze and two bounded operands.
Test(onnx_dynamic, non_zero_and_consumers, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_non_zero.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_NON_ZERO), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SHAPE), 1);
  cr_assert(has_bounded(g));
  onnx_run_and_compare(g, "dynamic_non_zero", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// Compress along an axis (a negative one too) and flattened, its result
// as GatherElements indices, broadcast Add, ArgMax and ReduceMin.
Test(onnx_dynamic, compress_runtime_condition, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_compress.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_NON_ZERO), 3);
  onnx_run_and_compare(g, "dynamic_compress", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// Unique sorted and by first occurrence, flattened and along an axis,
// every output (two omitted in one node).
Test(onnx_dynamic, unique_all_outputs, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_unique.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_UNIQUE), 4);
  onnx_run_and_compare(g, "dynamic_unique", 0, 0);
  vkp_graph_destroy(g);
}

// TopK with K computed at run time (min of a bounded length and 5): over a
// bounded input and over a static one, outputs at extent min(K, length);
// ConstantOfShape of the run-time shape of its result.
Test(onnx_dynamic, top_k_runtime_k, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_top_k.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_TOP_K), 2);
  onnx_run_and_compare(g, "dynamic_top_k", 0, 0);
  vkp_graph_destroy(g);
}

// Softmax does not take a bounded input: the import fails naming the node,
// the value and its bound.
Test(onnx_dynamic, refused_consumer_names_node_and_value, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "dynamic_refused.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "Softmax"), "%s", msg);
  cr_assert(strstr(msg, "input 0 'nzf' has a data-dependent shape [2, <=6]"), "%s", msg);
  cr_assert(strstr(msg, "softmax does not take one"), "%s", msg);
  vkp_status_free(st);
}

// cpu and vulkan refuse nodes touching a bounded value, with the reason
// that `vkpipe partition` lists under "fell back".
Test(onnx_dynamic, device_targets_refuse_with_reason, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_non_zero.onnx");
  vkp_registry_t *reg;
  const char *names[] = {"cpu", "vulkan"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  for (int i = 0; i < 2; ++i) {
    const vkp_target_t *t = vkp_registry_find(reg, names[i]);
    if (!t) continue;  // no Vulkan device here
    int32_t nz = -1;
    for (int32_t k = 0; k < g->n_nodes; ++k)
      if (g->nodes[k].op == VKP_OP_NON_ZERO) nz = k;
    char reason[512] = "";
    cr_assert_not(vkp_target_supports(t, g, &g->nodes[nz], reason, sizeof reason));
    cr_assert(strstr(reason, "has a data-dependent shape"), "%s: %s", names[i], reason);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// IR graphs: x [6] float -> non_zero -> cast to float "f" [1, <=6], then one
// consumer built by `add_consumer`; returns validate's status.
typedef void (*consumer_fn)(vkp_graph_t *g);

static vkp_status_t build_with(consumer_fn add_consumer, vkp_graph_t **out) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("refuse", &g));
  int64_t shape[] = {6};
  VKP_TEST_OK(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 1, shape, NULL));
  const char *nz_in[] = {"x"}, *nz_out[] = {"nz"};
  VKP_TEST_OK(vkp_graph_add_node(g, "nz", VKP_OP_NON_ZERO, 1, nz_in, 1, nz_out, 0, NULL, NULL));
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"};
  const char *c_in[] = {"nz"}, *c_out[] = {"f"};
  VKP_TEST_OK(vkp_graph_add_node(g, "cast", VKP_OP_CAST, 1, c_in, 1, c_out, 1, &to, NULL));
  add_consumer(g);
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  *out = g;
  return vkp_graph_validate(g);
}

static void reshape_without_minus_one(vkp_graph_t *g) {
  int64_t target[] = {6};
  vkp_attr_t a = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = target, .count = 1};
  const char *in[] = {"f"}, *out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "rs", VKP_OP_RESHAPE, 1, in, 1, out, 1, &a, NULL));
}

static void add_static_row(vkp_graph_t *g) {
  int64_t shape[] = {6};
  float w[6] = {1, 2, 3, 4, 5, 6};
  VKP_TEST_OK(vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 1, shape, w, NULL));
  const char *in[] = {"f", "w"}, *out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "add", VKP_OP_ADD, 2, in, 1, out, 0, NULL, NULL));
}

// A forward slice of the bounded axis is taken (models_dynamic.py); one
// counting from the run-time end is not.
static void slice_from_end(vkp_graph_t *g) {
  int64_t s = -2, e = 6, ax = 1, st = 1;
  vkp_attr_t a[4] = {{.name = "starts", .kind = VKP_ATTR_INTS, .ints = &s, .count = 1},
                     {.name = "ends", .kind = VKP_ATTR_INTS, .ints = &e, .count = 1},
                     {.name = "axes", .kind = VKP_ATTR_INTS, .ints = &ax, .count = 1},
                     {.name = "steps", .kind = VKP_ATTR_INTS, .ints = &st, .count = 1}};
  const char *in[] = {"f"}, *out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "sl", VKP_OP_SLICE, 1, in, 1, out, 4, a, NULL));
}

static void squeeze_bounded_axis(vkp_graph_t *g) {
  int64_t axes[] = {1};
  vkp_attr_t a = {.name = "axes", .kind = VKP_ATTR_INTS, .ints = axes, .count = 1};
  const char *in[] = {"f"}, *out[] = {"y"};
  // [1, <=6] squeezed at its bounded axis: refused even where the bound
  // happens to be 1, since the run-time extent may be 0.
  VKP_TEST_OK(vkp_graph_add_node(g, "sq", VKP_OP_SQUEEZE, 1, in, 1, out, 1, &a, NULL));
}

Test(onnx_dynamic, ir_consumers_refused, .timeout = 60) {
  static const struct {
    consumer_fn fn;
    const char *node, *why;
  } cases[] = {
      {reshape_without_minus_one, "node 'rs' (reshape)", "needs -1 in its target shape"},
      {add_static_row, "node 'add' (add)",
       "cannot broadcast it against input 1 'w' of size 6"},
      {slice_from_end, "node 'sl' (slice)", "counts from its end or backwards"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    vkp_graph_t *g = NULL;
    vkp_status_t st = build_with(cases[i].fn, &g);
    cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
    const char *msg = vkp_status_message(st);
    cr_assert(strstr(msg, cases[i].node), "%s", msg);
    cr_assert(strstr(msg, "input 0 'f' has a data-dependent shape [1, <=6]"), "%s", msg);
    cr_assert(strstr(msg, cases[i].why), "%s", msg);
    vkp_status_free(st);
    vkp_graph_destroy(g);
  }
  // Squeezing [1, <=6] at axis 1 fails in squeeze's own inference (the bound
  // 6 is not 1) before the bounded rule: still an error naming the node.
  vkp_graph_t *g = NULL;
  vkp_status_t st = build_with(squeeze_bounded_axis, &g);
  cr_assert_not_null(st);
  cr_assert(strstr(vkp_status_message(st), "node 'sq' (squeeze)"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// Two bounded operands with the same bound but different extents at run
// time: a run-time error naming the node.
Test(onnx_dynamic, extents_must_agree_at_run_time, .timeout = 60) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("mismatch", &g));
  int64_t shape[] = {6};
  VKP_TEST_OK(vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 1, shape, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "b", VKP_DTYPE_FLOAT32, 1, shape, NULL));
  const char *na[] = {"a"}, *oa[] = {"na"}, *nb[] = {"b"}, *ob[] = {"nb"};
  VKP_TEST_OK(vkp_graph_add_node(g, "nza", VKP_OP_NON_ZERO, 1, na, 1, oa, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_add_node(g, "nzb", VKP_OP_NON_ZERO, 1, nb, 1, ob, 0, NULL, NULL));
  const char *in[] = {"na", "nb"}, *out[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "sub", VKP_OP_SUB, 2, in, 1, out, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  VKP_TEST_OK(vkp_graph_validate(g));
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  float a[6] = {1, 0, 2, 0, 3, 0}, b[6] = {0, 0, 5, 0, 0, 7};
  vkp_tensor_t x[2], y[1];
  VKP_TEST_OK(vkp_tensor_init_view(&x[0], VKP_DTYPE_FLOAT32, 1, shape, a));
  VKP_TEST_OK(vkp_tensor_init_view(&x[1], VKP_DTYPE_FLOAT32, 1, shape, b));
  vkp_status_t st = vkp_target_run_graph(vkp_registry_find(reg, "ref"), g, NULL, x, y);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "node 'sub' (sub): data-dependent operands "
                                           "have extents 3 and 2"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  b[0] = 4;  // now both pick 3
  VKP_TEST_OK(vkp_target_run_graph(vkp_registry_find(reg, "ref"), g, NULL, x, y));
  cr_assert_eq(y[0].shape[1], 3);
  int64_t want[3] = {0 - 0, 2 - 2, 4 - 5};
  for (int i = 0; i < 3; ++i) cr_assert_eq(((int64_t *)y[0].data)[i], want[i]);
  vkp_tensor_deinit(&y[0]);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
