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
    cr_assert_not(t->vtable->supports(t, g, &g->nodes[nz], reason, sizeof reason));
    cr_assert(strstr(reason, "has a data-dependent shape"), "%s: %s", names[i], reason);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
