// SPDX-License-Identifier: Apache-2.0
// graph/onnx_ops.c: ONNX ops to IR ops with each opset's attribute
// semantics, checked against NumPy (gen_models.py) on "ref". The ONNX node
// tests (ctest onnx_conformance_ref) cover every op's attributes further.
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

// Conv, BatchNormalization, Relu, MaxPool, Add, GlobalAveragePool, Flatten,
// Gemm, as PyTorch exports a small CNN (plus Dropout and Identity).
Test(onnx_ops, cnn_matches_numpy, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("cnn.onnx");
  // Both Conv -> BatchNormalization pairs fold; the third BatchNormalization
  // follows an Add and stays. Dropout and Identity disappear.
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONV2D), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 1);
  cr_assert_eq(onnx_count_op(g, VKP_OP_IDENTITY), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GLOBAL_AVG_POOL), 1);
  onnx_run_and_compare(g, "cnn", 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

Test(onnx_ops, softmax_axis_before_and_after_opset13, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("softmax_opset11.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 2);  // coerced to 2-D
  onnx_run_and_compare(g, "softmax_opset11", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  g = onnx_load_model("softmax_opset13.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESHAPE), 0);
  onnx_run_and_compare(g, "softmax_opset13", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Slice, Clip, Squeeze, Unsqueeze, Split and ReduceSum with attributes.
Test(onnx_ops, opset9_parameters_are_attributes, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("opset9.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_SLICE), 3);  // one, and two from Split
  onnx_run_and_compare(g, "opset9", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Opset 21 forms (Split by num_outputs, axes as inputs, Cast's saturate) on a
// model with a symbolic batch axis: refused with the flag to use, then bound
// through the load options.
Test(onnx_ops, opset21_with_dynamic_batch, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "opset21.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(st && strstr(vkp_status_message(st),
                         "graph input 'x': dimension 0 is symbolic ('batch')") &&
                strstr(vkp_status_message(st), "--dim batch=N"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_dim_binding_t dims[] = {{.name = "batch", .value = 2}};
  vkp_graph_load_options_t opt = {.n_dims = 1, .dims = dims};
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  onnx_run_and_compare(g, "opset21", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  // The same through a whole shape.
  vkp_shape_binding_t shapes[] = {{.input = "x", .rank = 3, .shape = {2, 7, 4}}};
  vkp_graph_load_options_t by_shape = {.n_shapes = 1, .shapes = shapes};
  VKP_TEST_OK(vkp_graph_load_with_options(path, &by_shape, &g));
  onnx_run_and_compare(g, "opset21", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  // The batch varying at run time up to 4 (up_to): one graph, bounded
  // along axis 0, runs the batch of 2 (ref: Split, LayerNormalization,
  // Unsqueeze/Squeeze, Cast on a varying batch).
  vkp_dim_binding_t up_to[] = {{.name = "batch", .value = 4, .up_to = true}};
  vkp_graph_load_options_t varying = {.n_dims = 1, .dims = up_to};
  VKP_TEST_OK(vkp_graph_load_with_options(path, &varying, &g));
  cr_assert(g->values[g->inputs[0]].bounded);
  cr_assert_eq(g->values[g->inputs[0]].shape[0], 4);
  onnx_run_and_compare(g, "opset21", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  // Opset 22 (bfloat16 added to many ops' types, nothing else): the same.
  onnx_model_path(path, sizeof path, "opset22.onnx");
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  onnx_run_and_compare(g, "opset22", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Elementwise and logic ops on runtime tensors: a runtime Clip bound stays
// an input, a constant one becomes the attribute; Selu's attribute and
// Mod's fmod come through; Max and Sum take three inputs; Dropout's mask
// is all true. Then the integer ops (bitwise, shift, Pow of an integer).
Test(onnx_ops, elementwise_and_logic_on_runtime_tensors, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("elementwise.onnx");
  int clips = 0;
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (n->op == VKP_OP_CLIP) {
      ++clips;
      bool runtime_min = n->n_inputs == 2;
      cr_assert(runtime_min || (n->n_inputs == 1 && vkp_node_float(n, "max") == 0.5),
                "clip '%s': %d inputs", n->name, (int)n->n_inputs);
    }
    if (n->op == VKP_OP_SELU) cr_assert_eq(vkp_node_float(n, "alpha"), 1.5);
    if (n->op == VKP_OP_MOD) cr_assert_eq(vkp_node_int(n, "fmod"), 1);
    if (n->op == VKP_OP_MAX || n->op == VKP_OP_SUM) cr_assert_eq(n->n_inputs, 3);
  }
  cr_assert_eq(clips, 2);
  onnx_run_and_compare(g, "elementwise", 1e-5, 1e-6);
  vkp_graph_destroy(g);
  g = onnx_load_model("bitwise.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_BIT_SHIFT), 1);
  onnx_run_and_compare(g, "bitwise", 0, 0);
  vkp_graph_destroy(g);
}

// Dropout is refused only when it could drop: a runtime ratio in training
// mode. With a constant ratio of 0 it is an identity whatever training_mode.
Test(onnx_ops, dropout_refused_only_when_it_drops, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dropout_ratio0.onnx");
  cr_assert_eq(g->n_nodes, 2);  // identities naming the two graph outputs
  onnx_run_and_compare(g, "dropout_ratio0", 0, 0);
  vkp_graph_destroy(g);
  char path[1024];
  onnx_model_path(path, sizeof path, "dropout_training.onnx");
  g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "the result would be random"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  cr_assert_null(g);
}

// A Concat of 100 inputs imports as concats of at most 32 inputs and one of
// their results (the same tensor), right on ref and cpu.
Test(onnx_ops, concat_of_any_number_of_inputs, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("concat_100.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_CONCAT), 5);
  for (int32_t i = 0; i < g->n_nodes; ++i)
    cr_assert_leq(g->nodes[i].n_inputs, 32, "node %d has %d inputs", (int)i,
                  (int)g->nodes[i].n_inputs);
  onnx_run_and_compare(g, "concat_100", 1e-6, 1e-7);
  onnx_run_and_compare_on(g, "concat_100", "cpu", 1, 1e-6, 1e-7);
  vkp_graph_destroy(g);
}
