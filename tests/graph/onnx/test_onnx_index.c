// SPDX-License-Identifier: Apache-2.0
// graph/onnx_index.c and the indexing family's simple mappings: a
// transformer's embedding block (token ids a graph input) and GatherElements,
// GatherND, ScatterND, OneHot and Compress on runtime data, against NumPy
// (models_index.py) on every target that runs them; an out-of-range token id
// is a run-time error naming the node on ref and cpu.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"
#include "vkpipe/target.h"

// Token ids gather the token table at run time; the position ids fold
// (Shape -> Gather -> Range -> Unsqueeze on static shapes) and so does their
// gather: one gather node is left, ahead of add and layer_norm.
Test(onnx_index, embedding_block_on_every_target, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("embed_ln.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_LAYER_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SLICE), 0);
  onnx_run_and_compare(g, "embed_ln", 1e-5, 1e-5);
  onnx_run_and_compare_on(g, "embed_ln", "cpu", 1, 1e-4, 1e-5);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *vk = NULL;
  vkp_status_t st = vkp_registry_lookup(reg, "vulkan", &vk);
  bool have_vulkan = st == NULL;
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  if (have_vulkan) onnx_run_and_compare_on(g, "embed_ln", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_index, gather_scatter_one_hot_compress, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("index_ops.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER_ELEMENTS), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER_ND), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SCATTER_ND), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_ONE_HOT), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 1);  // Compress
  onnx_run_and_compare(g, "index_ops", 1e-6, 1e-6);
  onnx_run_and_compare_on(g, "index_ops", "cpu", 1, 1e-6, 1e-6);
  vkp_graph_destroy(g);
}

// A token id one past the table: OUT_OF_RANGE naming the gather node (the
// ONNX node's name), on ref and on cpu, and nothing crashes.
Test(onnx_index, token_id_out_of_range_names_the_node, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("embed_ln.onnx");
  char path[1024];
  onnx_model_path(path, sizeof path, "embed_ln.input_0.pb");
  vkp_tensor_t ids;
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &ids, NULL));
  cr_assert_eq(ids.dtype, VKP_DTYPE_INT64);
  ((int64_t *)ids.data)[3] = 17;  // the table has 17 rows
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  static const char *const targets[] = {"ref", "cpu"};
  for (int t = 0; t < 2; ++t) {
    const vkp_target_t *target;
    VKP_TEST_OK(vkp_registry_lookup(reg, targets[t], &target));
    vkp_tensor_t out = {0};
    vkp_status_t st = vkp_target_run_graph(target, g, NULL, &ids, &out);
    cr_assert(vkp_status_is(st, VKP_STATUS_OUT_OF_RANGE), "%s: %s", targets[t],
              st ? vkp_status_message(st) : "no error");
    cr_assert(strstr(vkp_status_message(st), "tok_embed"), "%s: %s", targets[t],
              vkp_status_message(st));
    vkp_status_free(st);
    vkp_tensor_deinit(&out);
  }
  vkp_tensor_deinit(&ids);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
