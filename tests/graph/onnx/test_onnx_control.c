// SPDX-License-Identifier: Apache-2.0
// graph/onnx_control.c (ONNX If) and non_max_suppression through the
// importer, against NumPy (models_control.py) on "ref": a condition folded
// at import inlines its branch, a run-time one imports both and picks with
// branch_select (nested, reading outer-scope values; ref skips the untaken
// branch's nodes), torchvision's
// batched_nms guard on data that keeps boxes and data that keeps none, the
// refusals, and the targets that refuse branch_select and
// non_max_suppression (cpu, vulkan) with their reasons. Loop and Scan
// unrolled at import (models_loop.py) against PyTorch and NumPy on ref and
// cpu, and their refusals.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"
#include "vkpipe/target.h"

static int32_t find_op(const vkp_graph_t *g, vkp_op_t op) {
  for (int32_t k = 0; k < g->n_nodes; ++k)
    if (g->nodes[k].op == op) return k;
  return -1;
}

// The condition folds to true: the then branch's nodes join the graph under
// "<If>/then/", the else branch (an op of an unknown domain) is never read.
Test(onnx_control, constant_condition_inlines_its_branch, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("if_const.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_BRANCH_SELECT), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_RELU), 1);
  int32_t relu = find_op(g, VKP_OP_RELU);
  cr_assert(strstr(g->nodes[relu].name, "/then/"), "%s", g->nodes[relu].name);
  onnx_run_and_compare(g, "if_const", 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// A run-time condition, with an If nested in the then branch whose branches
// read t (the enclosing branch's) and y (the graph's): every combination
// of the two conditions that selects a different path.
Test(onnx_control, runtime_condition_nested_outer_scope, .timeout = 60) {
  static const char *const runs[] = {"if_runtime_11", "if_runtime_10", "if_runtime_01"};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", runs[i]);
    vkp_graph_t *g = onnx_load_model(file);
    // out and shp of the outer If, out of the nested one.
    cr_assert_eq(onnx_count_op(g, VKP_OP_BRANCH_SELECT), 3);
    onnx_run_and_compare(g, runs[i], 1e-6, 1e-7);
    onnx_run_and_compare_on(g, runs[i], "cpu", 1, 1e-6, 1e-7);
    onnx_run_and_compare_on(g, runs[i], "cpu", 3, 1e-6, 1e-7);
    vkp_graph_destroy(g);
  }
}

// torchvision's guard: an empty keep list beside NonMaxSuppression of the
// boxes Compress selected; the If's result is bounded by the NMS bound and
// sliced (first two) and used as Gather indices. With no box selected the
// else branch still runs (on empty data) and the then branch is chosen.
Test(onnx_control, batched_nms_guard, .timeout = 60) {
  static const char *const runs[] = {"if_guard_some", "if_guard_none"};
  for (size_t i = 0; i < 2; ++i) {
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", runs[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_NON_MAX_SUPPRESSION), 1);
    int32_t sel = find_op(g, VKP_OP_BRANCH_SELECT);
    cr_assert_geq(sel, 0);
    const vkp_value_t *kept = &g->values[g->nodes[sel].outputs[0]];
    cr_assert(kept->bounded && kept->bounded_axis == 0);
    cr_assert_eq(kept->shape[0], 5);  // one batch, one class, max_out 5
    onnx_run_and_compare(g, runs[i], 1e-6, 1e-7);
    onnx_run_and_compare_on(g, runs[i], "cpu", 1, 1e-6, 1e-7);
    onnx_run_and_compare_on(g, runs[i], "cpu", 3, 1e-6, 1e-7);
    vkp_graph_destroy(g);
  }
}

// A Conv output read by a BatchNormalization and by an If branch: the
// BatchNormalization is not folded into the Conv, whose own output the
// branch still reads.
Test(onnx_control, branch_reads_keep_values_unfused, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("if_reads_conv.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_BATCH_NORM), 1);
  onnx_run_and_compare(g, "if_reads_conv", 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "if_reads_conv", "cpu", 1, 1e-4, 1e-5);
  onnx_run_and_compare_on(g, "if_reads_conv", "cpu", 3, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// On ref and cpu only the taken branch runs: an index past x's end, which
// the If guards against, fails nothing when the then branch is taken, and
// the else branch's Gather runs when it is (cpu: the Gather's call is
// guarded by the condition, computed before it).
Test(onnx_control, untaken_branch_does_not_run, .timeout = 60) {
  static const char *const runs[] = {"if_gather_past_end", "if_gather_inside"};
  for (size_t i = 0; i < 2; ++i) {
    char file[64];
    snprintf(file, sizeof file, "%s.onnx", runs[i]);
    vkp_graph_t *g = onnx_load_model(file);
    cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 1);
    onnx_run_and_compare(g, runs[i], 0, 0);
    onnx_run_and_compare_on(g, runs[i], "cpu", 1, 0, 0);
    onnx_run_and_compare_on(g, runs[i], "cpu", 3, 0, 0);
    vkp_graph_destroy(g);
  }
}

// If(Shape(v)[1] == 1, Squeeze(v, 1), Identity(v)) on v [<=6, 1]: dim 1 is
// static, so the Gather of the run-time shape folds, the condition with it,
// and the Squeeze branch is inlined (no branch_select, no equal or gather).
Test(onnx_control, static_dim_of_bounded_shape_folds_the_condition, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("if_squeeze_guard.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_BRANCH_SELECT), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_EQUAL), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 0);
  cr_assert_eq(onnx_count_op(g, VKP_OP_SQUEEZE), 1);
  onnx_run_and_compare(g, "if_squeeze_guard", 0, 0);
  vkp_graph_destroy(g);
}

// Reshape of [<=6, 2] to [Shape(v)[0], 1, 2]: the one run-time entry of the
// target becomes -1, and the result is bounded along axis 0.
Test(onnx_control, reshape_with_one_runtime_entry, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("reshape_runtime_dim.onnx");
  int32_t rs = -1;
  for (int32_t k = 0; k < g->n_nodes; ++k)
    if (g->nodes[k].op == VKP_OP_RESHAPE) rs = k;
  cr_assert_geq(rs, 0);
  const int64_t *spec;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[rs], "shape", &spec), 3);
  cr_assert(spec[0] == -1 && spec[1] == 1 && spec[2] == 2);
  cr_assert(g->values[g->nodes[rs].outputs[0]].bounded);
  onnx_run_and_compare(g, "reshape_runtime_dim", 0, 0);
  onnx_run_and_compare_on(g, "reshape_runtime_dim", "cpu", 1, 0, 0);
  vkp_graph_destroy(g);
}

// Branches giving [3] and [3, 1] on a run-time condition: an error naming
// the If node and both shapes.
Test(onnx_control, branches_of_different_ranks_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "if_refused.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert_not_null(st);
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "If"), "%s", msg);
  cr_assert(strstr(msg, "rank_mismatch"), "%s", msg);
  cr_assert(strstr(msg, "different ranks"), "%s", msg);
  vkp_status_free(st);
}

// vulkan refuses branch_select (even on static shapes) and
// non_max_suppression, with the reason the partitioner shows; cpu runs
// them (above).
Test(onnx_control, device_targets_refuse_with_reason, .timeout = 60) {
  vkp_graph_t *rt = onnx_load_model("if_runtime_11.onnx");
  vkp_graph_t *guard = onnx_load_model("if_guard_some.onnx");
  vkp_registry_t *reg;
  const char *names[] = {"cpu", "vulkan"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  for (int i = 1; i < 2; ++i) {
    const vkp_target_t *t = vkp_registry_find(reg, names[i]);
    if (!t) continue;  // no Vulkan device here
    char reason[512] = "";
    int32_t sel = find_op(rt, VKP_OP_BRANCH_SELECT);
    cr_assert_not(vkp_target_supports(t, rt, &rt->nodes[sel], reason, sizeof reason));
    cr_assert(strstr(reason, "branch_select"), "%s: %s", names[i], reason);
    int32_t nms = find_op(guard, VKP_OP_NON_MAX_SUPPRESSION);
    reason[0] = '\0';
    cr_assert_not(vkp_target_supports(t, guard, &guard->nodes[nms], reason, sizeof reason));
    cr_assert(strstr(reason, "data-dependent") || strstr(reason, "no non_max_suppression kernel"),
              "%s: %s", names[i], reason);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(rt);
  vkp_graph_destroy(guard);
}

// Every allocation of importing the two If forms, and of loading and
// running the guard on ref (its branch plan included), may fail: each
// failure is an error, and nothing leaks.
static void walk_allocations(const char *file, bool run) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  vkp_graph_t *model = NULL;
  VKP_TEST_OK(vkp_onnx_load(path, &model));
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  float boxes[8 * 4] = {0}, scores[8] = {0.9f, 0.1f, 0.8f, 0.7f, 0.2f, 0.6f, 0.3f, 0.95f};
  for (int i = 0; i < 8; ++i) {
    boxes[i * 4 + 2] = (float)(i % 3) + 1.0f;
    boxes[i * 4 + 3] = (float)(i % 2) + 1.0f;
  }
  for (int64_t fail_at = 1;; ++fail_at) {
    vkp_test_counting_alloc_t state;
    vkp_test_counting_alloc_install(&state, fail_at);
    vkp_graph_t *g = NULL;
    vkp_status_t st = run ? NULL : vkp_onnx_load(path, &g);
    vkp_tensor_t in[2], out[3] = {0};
    if (run) {
      int64_t bs[] = {8, 4}, ss[] = {8};
      VKP_TEST_OK(vkp_tensor_init_view(&in[0], VKP_DTYPE_FLOAT32, 2, bs, boxes));
      VKP_TEST_OK(vkp_tensor_init_view(&in[1], VKP_DTYPE_FLOAT32, 1, ss, scores));
      st = vkp_target_run_graph(ref, model, NULL, in, out);
      for (int k = 0; k < 3; ++k) vkp_tensor_deinit(&out[k]);
    }
    bool failed = state.failed;
    vkp_status_free(st);
    vkp_graph_destroy(g);
    int64_t live = state.live;
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(live, 0, "%s: allocation %lld failed: %lld blocks leaked", file,
                 (long long)fail_at, (long long)live);
    if (!failed) {
      cr_assert_null(st);
      break;
    }
    cr_assert_not_null(st, "%s: allocation %lld failed silently", file, (long long)fail_at);
    cr_assert_lt(fail_at, 100000);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(model);
}

Test(onnx_control, allocation_failures_are_reported, .timeout = 120) {
  walk_allocations("if_const.onnx", false);
  walk_allocations("if_runtime_11.onnx", false);
  walk_allocations("if_guard_some.onnx", true);
  walk_allocations("loop_while.onnx", false);
  walk_allocations("scan_reverse.onnx", false);
}

// ---------------------------------------------------------------------------
// Loop and Scan, unrolled at import (models_loop.py)

static bool model_exists(const char *file) {
  char path[1024];
  onnx_model_path(path, sizeof path, file);
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

// torch.jit.script's `for i in range(x.size(0))` with the time dim left
// symbolic: binding T folds the trip count, and the loop becomes three
// matmul/tanh steps, matching PyTorch on ref and cpu.
Test(onnx_control, torch_scripted_loop_unrolls_after_dim_binding, .timeout = 120) {
  if (!model_exists("loop_torch.onnx")) cr_skip_test("PyTorch not installed");
  char path[1024];
  onnx_model_path(path, sizeof path, "loop_torch.onnx");
  vkp_dim_binding_t t = {.name = "T", .value = 3};
  vkp_graph_load_options_t o = {.n_dims = 1, .dims = &t};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &o, &g));
  cr_assert_eq(onnx_count_op(g, VKP_OP_MATMUL), 3);
  cr_assert_eq(onnx_count_op(g, VKP_OP_TANH), 3);
  onnx_run_and_compare(g, "loop_torch", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "loop_torch", "cpu", 1, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// M = 2^63 - 1 and a condition that folds per iteration (i + 1 < 4): four
// iterations, the body reading the graph input x; the scan output stacks
// every iteration's value along a new axis 0.
Test(onnx_control, while_loop_with_scan_output, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("loop_while.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 4);
  cr_assert_eq(onnx_count_op(g, VKP_OP_LESS), 0);  // folded
  onnx_run_and_compare(g, "loop_while", 1e-6, 1e-6);
  onnx_run_and_compare_on(g, "loop_while", "cpu", 1, 1e-6, 1e-6);
  vkp_graph_destroy(g);
}

// A Loop in a Loop's body: the inner body reads the outer iteration number
// and the graph input; scopes nest (<outer>/iter<i>/<inner>/iter<j>/...), and
// both scan outputs stack.
Test(onnx_control, nested_loops, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("loop_nested.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_GATHER), 6);
  int32_t k = find_op(g, VKP_OP_GATHER);
  cr_assert_str_eq(g->nodes[k].name, "Loop_0/iter0/Loop_0/iter0/Gather_0");
  onnx_run_and_compare(g, "loop_nested", 1e-6, 1e-6);
  onnx_run_and_compare_on(g, "loop_nested", "cpu", 1, 1e-6, 1e-6);
  vkp_graph_destroy(g);
}

// Scan over axis 1, last step first, one output stacked forward on axis 0
// and one reversed on the last axis.
Test(onnx_control, scan_axes_and_directions, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("scan_reverse.onnx");
  onnx_run_and_compare(g, "scan_reverse", 1e-6, 1e-6);
  onnx_run_and_compare_on(g, "scan_reverse", "cpu", 1, 1e-6, 1e-6);
  vkp_graph_destroy(g);
}


// What is only known at run time, and a loop past the unrolling limit
// (refused before anything is imported), are refused naming the node.
Test(onnx_control, loops_that_cannot_unroll_are_refused, .timeout = 60) {
  onnx_expect_refused("loop_runtime_trip.onnx", VKP_STATUS_UNSUPPORTED, "runtime_trip",
                      "trip count M ('m') is computed at run time");
  onnx_expect_refused("loop_runtime_cond.onnx", VKP_STATUS_UNSUPPORTED, "runtime_cond",
                      "condition output ('c_out') depends on run-time data at iteration 0");
  onnx_expect_refused("loop_too_long.onnx", VKP_STATUS_UNSUPPORTED, "too_long",
                      "100000 iterations of a 2-node body exceed");
}
