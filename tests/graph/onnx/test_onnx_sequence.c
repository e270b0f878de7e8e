// SPDX-License-Identifier: Apache-2.0
// graph/onnx_sequence.c: sequences and optionals resolved at import
// (models_sequence.py). PyTorch's split-into-a-list + cat exports (scripted:
// SplitToSequence, a Loop of SequenceAt/SequenceInsert, ConcatFromSequence;
// traced: Split, Concat) against PyTorch on ref, cpu and vulkan (validation
// on), every sequence and optional op against NumPy, sequence graph inputs
// (given by the load options) and outputs as one tensor each per element,
// and the refusals naming the node.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"
#include "vkpipe/target.h"

static bool model_exists(const char *file) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

static bool have_target(const char *name) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *t = NULL;
  vkp_status_t st = vkp_registry_lookup(reg, name, &t);
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  return st == NULL;
}

Test(onnx_sequence, torch_split_list_and_cat, .timeout = 120) {
  if (!model_exists("seq_torch_script.onnx")) cr_skip_test("PyTorch not installed");
  static const char *const runs[] = {"seq_torch_script", "seq_torch_traced"};
  bool vulkan = have_target("vulkan");
  for (size_t i = 0; i < 2; ++i) {
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", runs[i]);
    vkp_graph_t *g = onnx_load_model(file);
    // Three chunks, whatever the export: three slices and one concat.
    cr_assert_eq(onnx_count_op(g, VKP_OP_SLICE), 3, "%s", runs[i]);
    cr_assert_eq(onnx_count_op(g, VKP_OP_CONCAT), 1, "%s", runs[i]);
    onnx_run_and_compare(g, runs[i], 1e-5, 1e-6);
    onnx_run_and_compare_on(g, runs[i], "cpu", 1, 1e-5, 1e-6);
    if (vulkan) onnx_run_and_compare_on(g, runs[i], "vulkan", 1, 1e-4, 1e-5);
    vkp_graph_destroy(g);
  }
}

// The loop of the scripted export also runs on vulkan: the PyTorch loop
// model (models_loop.py) unrolls into matmul/tanh nodes vulkan runs.
Test(onnx_sequence, torch_loop_on_vulkan, .timeout = 120) {
  if (!model_exists("loop_torch.onnx")) cr_skip_test("PyTorch not installed");
  if (!have_target("vulkan")) cr_skip_test("no Vulkan device");
  char path[1024];
  onnx_model_path(path, sizeof path, "loop_torch.onnx");
  vkp_dim_binding_t t = {.name = "T", .value = 3};
  vkp_graph_load_options_t o = {.n_dims = 1, .dims = &t};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &o, &g));
  onnx_run_and_compare_on(g, "loop_torch", "vulkan", 1, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Construct, Insert, Erase, At (negative positions), Length (a constant
// output), ConcatFromSequence with new_axis, SplitToSequence with sizes and
// without (keepdims 0), SequenceMap with a tensor input, optionals with and
// without an element, an If on a folded condition returning a sequence.
Test(onnx_sequence, every_op_against_numpy, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("seq_ops.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RELU), 3);  // SequenceMap: once per element
  onnx_run_and_compare(g, "seq_ops", 1e-6, 1e-7);
  onnx_run_and_compare_on(g, "seq_ops", "cpu", 1, 1e-6, 1e-7);
  vkp_graph_destroy(g);
}


Test(onnx_sequence, runtime_sequences_are_refused, .timeout = 60) {
  onnx_expect_refused("seq_runtime_position.onnx", VKP_STATUS_UNSUPPORTED,
                      "runtime_position",
                      "the sequence position (input 1, 'p') must be known at import");
  onnx_expect_refused("seq_graph_input.onnx", VKP_STATUS_UNSUPPORTED, "graph input 'xs'",
                      "a sequence graph input: vkpipe resolves sequences");
}

// A sequence graph output of two elements: graph outputs "s[0]" and "s[1]".
Test(onnx_sequence, sequence_output_is_one_output_per_element, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("seq_graph_output.onnx");
  cr_assert_eq(g->n_outputs, 2);
  cr_assert_str_eq(g->values[g->outputs[0]].name, "s[0]");
  cr_assert_str_eq(g->values[g->outputs[1]].name, "s[1]");
  onnx_run_and_compare(g, "seq_graph_output", 0, 0);
  vkp_graph_destroy(g);
}

// A sequence graph input whose length and element shapes the options give
// (elements of different lengths): graph inputs "xs[0]".."xs[2]", the
// length a constant output, the concatenation run on ref and cpu.
Test(onnx_sequence, sequence_input_from_options, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "seq_graph_input.onnx");
  vkp_onnx_list_t xs = {.kind = VKP_ONNX_SEQUENCE, .n = 3};
  vkp_tensor_t elems[3];
  int64_t lens[3] = {2, 3, 1};
  for (int i = 0; i < 3; ++i)
    VKP_TEST_OK(vkp_tensor_init(&elems[i], VKP_DTYPE_FLOAT32, 1, &lens[i]));
  xs.tensors = elems;
  const char *names[] = {"xs"};
  vkp_onnx_options_t o = {.n_lists = 1, .list_names = names, .lists = &xs};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_onnx_load_with_options(path, &o, &g));
  cr_assert_eq(g->n_inputs, 3);
  for (int i = 0; i < 3; ++i) {
    char want[16];
    snprintf(want, sizeof want, "xs[%d]", i);
    cr_assert_str_eq(g->values[g->inputs[i]].name, want);
    vkp_tensor_deinit(&elems[i]);
  }
  onnx_run_and_compare(g, "seq_graph_input", 0, 0);
  onnx_run_and_compare_on(g, "seq_graph_input", "cpu", 1, 0, 0);
  vkp_graph_destroy(g);
}

// Every allocation of importing the sequence model may fail: each failure
// is an error, and nothing leaks.
Test(onnx_sequence, allocation_failures_are_reported, .timeout = 120) {
  onnx_walk_import_allocations("seq_ops.onnx");
}
