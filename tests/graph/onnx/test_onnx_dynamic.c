// SPDX-License-Identifier: Apache-2.0
// graph/op_dynamic.c through the importer: NonZero, Compress and Unique on
// run-time data and the ops downstream of their bounded results, against
// NumPy (models_dynamic.py) on "ref", outputs compared at their run-time
// shapes, and on "cpu" (generated C over run-time extents); the consumers
// that refuse a bounded input, and vulkan's refusal with the reason the
// partitioner shows.
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "pipeline/harness.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/onnx.h"
#include "vkpipe/pipeline.h"
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
  // cpu: generated C over the run-time extents, 1 and 3 threads.
  onnx_run_and_compare_on(g, "dynamic_non_zero", "cpu", 1, 1e-6, 1e-7);
  onnx_run_and_compare_on(g, "dynamic_non_zero", "cpu", 3, 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// Compress along an axis (a negative one too) and flattened, its result
// as GatherElements indices, broadcast Add, ArgMax and ReduceMin.
Test(onnx_dynamic, compress_runtime_condition, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_compress.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_NON_ZERO), 3);
  onnx_run_and_compare(g, "dynamic_compress", 1e-6, 1e-7);
  // cpu: generated C over the run-time extents, 1 and 3 threads.
  onnx_run_and_compare_on(g, "dynamic_compress", "cpu", 1, 1e-6, 1e-7);
  onnx_run_and_compare_on(g, "dynamic_compress", "cpu", 3, 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// Unique sorted and by first occurrence, flattened and along an axis,
// every output (two omitted in one node).
Test(onnx_dynamic, unique_all_outputs, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_unique.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_UNIQUE), 4);
  onnx_run_and_compare(g, "dynamic_unique", 0, 0);
  // cpu: generated C over the run-time extents, 1 and 3 threads.
  onnx_run_and_compare_on(g, "dynamic_unique", "cpu", 1, 0, 0);
  onnx_run_and_compare_on(g, "dynamic_unique", "cpu", 3, 0, 0);
  vkp_graph_destroy(g);
}

// TopK with K computed at run time (min of a bounded length and 5): over a
// bounded input and over a static one, outputs at extent min(K, length);
// ConstantOfShape of the run-time shape of its result.
Test(onnx_dynamic, top_k_runtime_k, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_top_k.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_TOP_K), 2);
  onnx_run_and_compare(g, "dynamic_top_k", 0, 0);
  // cpu: generated C over the run-time extents, 1 and 3 threads.
  onnx_run_and_compare_on(g, "dynamic_top_k", "cpu", 1, 0, 0);
  onnx_run_and_compare_on(g, "dynamic_top_k", "cpu", 3, 0, 0);
  vkp_graph_destroy(g);
}

// A two-stage detector's RoI head on a varying number of rows (ref):
// Gemm, Softmax, LayerNormalization, MatMul and Conv over the varying axis,
// ConstantOfShape and Expand to shapes with one run-time entry, a bounded
// ScatterElements, Reshape to [n, -1, 2] and a Slice to the rows' own count.
// cpu runs every node too (1 and 3 threads).
Test(onnx_dynamic, roi_head_shapes_with_a_run_time_entry, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("dynamic_roi_head.onnx");
  cr_assert(has_bounded(g));
  cr_assert_eq(onnx_count_op(g, VKP_OP_EXPAND), 0);
  onnx_run_and_compare(g, "dynamic_roi_head", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_roi_head", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_roi_head", "cpu", 3, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Keypoint R-CNN's predictor on a varying number of detections: a
// ConvTranspose, two Resizes (linear, nearest) and two Pads (constant, edge)
// that keep the varying axis, against NumPy on ref and on cpu (1 and 3
// threads).
Test(onnx_dynamic, resize_and_pad_keep_a_varying_batch, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_keypoint_upsample.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_RESIZE), 2);
  cr_assert_eq(onnx_count_op(g, VKP_OP_PAD), 2);
  cr_assert(has_bounded(g));
  onnx_run_and_compare(g, "dynamic_keypoint_upsample", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_keypoint_upsample", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_keypoint_upsample", "cpu", 3, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Range(0, n, 1) with n the run-time count of kept rows (torch.arange(n)
// in Mask R-CNN's mask head): 0..n-1 as a bounded value, then GatherND
// indices with each row's ArgMax, against NumPy on ref and cpu.
Test(onnx_dynamic, range_to_a_run_time_count, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_arange_count.onnx");
  cr_assert(has_bounded(g));
  onnx_run_and_compare(g, "dynamic_arange_count", 0, 0);
  onnx_run_and_compare_on(g, "dynamic_arange_count", "cpu", 1, 0, 0);
  onnx_run_and_compare_on(g, "dynamic_arange_count", "cpu", 3, 0, 0);
  vkp_graph_destroy(g);
}

// A Resize that scales the varying axis, or gives constant sizes (which fix
// its length), is refused, naming the node and why.
Test(onnx_dynamic, resize_along_the_varying_axis_refused, .timeout = 60) {
  static const struct {
    const char *model, *why;
  } cases[] = {
      {"dynamic_resize_refused_scaled.onnx", "resize resamples along it"},
      {"dynamic_resize_refused_sizes.onnx", "sizes (input 3) fix that axis's length to 6"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char path[1024];
    onnx_model_path(path, sizeof path, cases[i].model);
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_graph_load(path, &g);
    cr_assert_null(g);
    cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
    const char *msg = vkp_status_message(st);
    cr_assert(strstr(msg, "Resize"), "%s", msg);
    cr_assert(strstr(msg, cases[i].why), "%s", msg);
    vkp_status_free(st);
  }
}

// A transformer block with a symbolic batch, loaded with the batch varying
// up to 3 and run with 2 (ref): the head split and merge reshapes built
// from Shape, the fused attention and LayerNormalization along the batch.
Test(onnx_dynamic, varying_batch_transformer_block, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "dynamic_varying_batch.onnx");
  vkp_dim_binding_t dims[] = {{.name = "batch", .value = 3, .up_to = true}};
  vkp_graph_load_options_t opt = {.n_dims = 1, .dims = dims};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  cr_assert_eq(onnx_count_op(g, VKP_OP_ATTENTION), 1);
  cr_assert(g->values[g->outputs[0]].bounded);
  onnx_run_and_compare(g, "dynamic_varying_batch", 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Softmax does not take a bounded input along its own axis: the import
// fails naming the node, the value and its bound.
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
  cr_assert(strstr(msg, "softmax normalises along it"), "%s", msg);
  vkp_status_free(st);
}

// cpu runs every node of the graph (bounded values in generated C); vulkan
// refuses the ones touching a bounded value, with the reason that `vkpipe
// partition` lists under "fell back".
Test(onnx_dynamic, targets_on_bounded_values, .timeout = 60) {
  vkp_graph_t *g = onnx_load_model("dynamic_non_zero.onnx");
  vkp_registry_t *reg;
  const char *names[] = {"cpu", "vulkan"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  cr_assert_not_null(cpu);
  for (int32_t k = 0; k < g->n_nodes; ++k) {
    char reason[512] = "";
    cr_assert(vkp_target_supports(cpu, g, &g->nodes[k], reason, sizeof reason),
              "cpu refuses node '%s': %s", g->nodes[k].name, reason);
  }
  const vkp_target_t *vk = vkp_registry_find(reg, "vulkan");
  if (vk) {  // a Vulkan device here
    int32_t nz = -1;
    for (int32_t k = 0; k < g->n_nodes; ++k)
      if (g->nodes[k].op == VKP_OP_NON_ZERO) nz = k;
    char reason[512] = "";
    cr_assert_not(vkp_target_supports(vk, g, &g->nodes[nz], reason, sizeof reason));
    cr_assert(strstr(reason, "has a data-dependent shape"), "vulkan: %s", reason);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// IR graphs: x [6] float -> non_zero -> cast to float "f" [1, <=6], then one
// consumer built by `add_consumer`; returns validate's status.
typedef void (*consumer_fn)(vkp_graph_t *g);

static vkp_status_t build_with(consumer_fn add_consumer, vkp_graph_t **out) {
  vkp_graph_t *g = g_new("refuse");
  int64_t shape[] = {6};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, shape);
  g_node(g, "nz", VKP_OP_NON_ZERO, "x", "nz", 0, NULL);
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"};
  g_node(g, "cast", VKP_OP_CAST, "nz", "f", 1, &to);
  add_consumer(g);
  g_out(g, "y");
  *out = g;
  return vkp_graph_validate(g);
}

static void reshape_without_minus_one(vkp_graph_t *g) {
  int64_t target[] = {6};
  vkp_attr_t a = {.name = "shape", .kind = VKP_ATTR_INTS, .ints = target, .count = 1};
  g_node(g, "rs", VKP_OP_RESHAPE, "f", "y", 1, &a);
}

static void add_static_row(vkp_graph_t *g) {
  int64_t shape[] = {6};
  float w[6] = {1, 2, 3, 4, 5, 6};
  g_const_data(g, "w", VKP_DTYPE_FLOAT32, 1, shape, w);
  g_node(g, "add", VKP_OP_ADD, "f,w", "y", 0, NULL);
}

// A forward slice of the bounded axis is taken (models_dynamic.py); one
// counting from the run-time end is not.
static void slice_from_end(vkp_graph_t *g) {
  int64_t s = -2, e = 6, ax = 1, st = 1;
  vkp_attr_t a[4] = {{.name = "starts", .kind = VKP_ATTR_INTS, .ints = &s, .count = 1},
                     {.name = "ends", .kind = VKP_ATTR_INTS, .ints = &e, .count = 1},
                     {.name = "axes", .kind = VKP_ATTR_INTS, .ints = &ax, .count = 1},
                     {.name = "steps", .kind = VKP_ATTR_INTS, .ints = &st, .count = 1}};
  g_node(g, "sl", VKP_OP_SLICE, "f", "y", 4, a);
}

static void squeeze_bounded_axis(vkp_graph_t *g) {
  int64_t axes[] = {1};
  vkp_attr_t a = {.name = "axes", .kind = VKP_ATTR_INTS, .ints = axes, .count = 1};
  // [1, <=6] squeezed at its bounded axis: refused even where the bound
  // happens to be 1, since the run-time extent may be 0.
  g_node(g, "sq", VKP_OP_SQUEEZE, "f", "y", 1, &a);
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
  vkp_graph_t *g = g_new("mismatch");
  int64_t shape[] = {6};
  g_in(g, "a", VKP_DTYPE_FLOAT32, 1, shape);
  g_in(g, "b", VKP_DTYPE_FLOAT32, 1, shape);
  g_node(g, "nza", VKP_OP_NON_ZERO, "a", "na", 0, NULL);
  g_node(g, "nzb", VKP_OP_NON_ZERO, "b", "nb", 0, NULL);
  g_node(g, "sub", VKP_OP_SUB, "na,nb", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
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

// NonZero -> Gather -> ReduceSum and Compress -> Mul/Sub/Relu/Add ->
// ReduceSum (models_dynamic.py, fresh random data each run): cpu with 1 and
// 3 threads against NumPy, as ref.
Test(onnx_dynamic, chain_on_cpu, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("dynamic_chain.onnx");
  cr_assert_eq(onnx_count_op(g, VKP_OP_NON_ZERO), 2);
  onnx_run_and_compare(g, "dynamic_chain", 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_chain", "cpu", 1, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, "dynamic_chain", "cpu", 3, 1e-5, 1e-6);
  vkp_graph_destroy(g);
}

// Random inputs for the chain: x [4, 6] in [-1, 1) (all negative in
// `none`), cond [4] of random bools (all false in `none`).
static void chain_inputs(vkp_test_rng_t *rng, bool none, float *x, uint8_t *cond) {
  for (int i = 0; i < 24; ++i)
    x[i] = none ? -0.5f - vkp_test_rng_uniform(rng, 0.0f, 1.0f)
                : vkp_test_rng_uniform(rng, -1.0f, 1.0f);
  for (int i = 0; i < 4; ++i) cond[i] = none ? 0 : (uint8_t)vkp_test_rng_below(rng, 2);
}

// The chain cut into two stages across its bounded values: stage 0 makes
// them (NonZero, the gathers of Compress and Gather), stage 1 reads them
// (the reductions and the elementwise ops), their extents travelling in
// the ring slots. On cpu | cpu, cpu | ref and ref | cpu: frame 0 is the
// model's NumPy case, the others fresh random inputs (one selecting
// nothing) checked against the whole graph run on ref.
Test(onnx_dynamic, chain_pipeline_across_bounded_values, .timeout = 240) {
  vkp_graph_t *g = onnx_load_model("dynamic_chain.onnx");
  int32_t s0[64], s1[64], n0 = 0, n1 = 0;
  cr_assert_lt(g->n_nodes, 64);
  for (int32_t k = 0; k < g->n_nodes; ++k) {
    vkp_op_t op = g->nodes[k].op;
    bool reads = op == VKP_OP_REDUCE_SUM || op == VKP_OP_MUL || op == VKP_OP_SUB ||
                 op == VKP_OP_RELU || op == VKP_OP_ADD;
    if (reads) s1[n1++] = k;
    else s0[n0++] = k;
  }
  s0[n0] = -1;
  s1[n1] = -1;
  const int32_t *groups[] = {s0, s1};
  vkp_registry_t *reg;
  const char *names[] = {"cpu", "ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  vkp_tensor_t numpy_in[2], numpy_out[4];
  char path[1024], file[128];
  for (int i = 0; i < 2; ++i) {
    snprintf(file, sizeof file, "dynamic_chain.input_%d.pb", i);
    onnx_model_path(path, sizeof path, file);
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &numpy_in[i], NULL));
  }
  for (int i = 0; i < 4; ++i) {
    snprintf(file, sizeof file, "dynamic_chain.output_%d.pb", i);
    onnx_model_path(path, sizeof path, file);
    VKP_TEST_OK(vkp_onnx_tensor_load(path, &numpy_out[i], NULL));
  }
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  enum { FRAMES = 6 };
  static const char *const combos[][2] = {{"cpu", "cpu"}, {"cpu", "ref"}, {"ref", "cpu"}};
  for (size_t c = 0; c < sizeof combos / sizeof combos[0]; ++c) {
    vkp_plan_t *plan = NULL;
    VKP_TEST_OK(plan_from_groups(g, 2, groups, combos[c], &plan));
    const vkp_graph_t *st1 = plan->stages[1].graph;
    int32_t bounded_in = 0;
    for (int32_t i = 0; i < st1->n_inputs; ++i)
      bounded_in += st1->values[st1->inputs[i]].bounded;
    cr_assert_eq(bounded_in, 2, "stage 1 reads 'picked' and 'rows' as bounded inputs");
    vkp_pipeline_t *pipe = NULL;
    VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
    float xs[FRAMES][24];
    uint8_t conds[FRAMES][4];
    for (int f = 0; f < FRAMES; ++f) {
      if (f == 0) {
        memcpy(xs[0], numpy_in[0].data, sizeof xs[0]);
        memcpy(conds[0], numpy_in[1].data, sizeof conds[0]);
      } else {
        chain_inputs(&rng, f == 2, xs[f], conds[f]);
      }
      int64_t xshape[] = {4, 6}, cshape[] = {4};
      vkp_tensor_t x, cond;
      VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 2, xshape, xs[f]));
      VKP_TEST_OK(vkp_tensor_init_view(&cond, VKP_DTYPE_BOOL, 1, cshape, conds[f]));
      VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &x));
      VKP_TEST_OK(vkp_pipeline_set_input(pipe, "cond", &cond));
      VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
    }
    for (int f = 0; f < FRAMES; ++f) {
      vkp_pipeline_result_t res;
      VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
      cr_assert_null(res.status, "%s | %s frame %d: %s", combos[c][0], combos[c][1], f,
                     vkp_status_message(res.status));
      vkp_tensor_t in[2], want[4];
      const vkp_tensor_t *expect = numpy_out;
      if (f > 0) {
        int64_t xshape[] = {4, 6}, cshape[] = {4};
        VKP_TEST_OK(vkp_tensor_init_view(&in[0], VKP_DTYPE_FLOAT32, 2, xshape, xs[f]));
        VKP_TEST_OK(vkp_tensor_init_view(&in[1], VKP_DTYPE_BOOL, 1, cshape, conds[f]));
        VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, in, want));
        expect = want;
      }
      for (int o = 0; o < 4; ++o) {
        char msg[512];
        cr_assert(vkp_test_allclose(&res.outputs[o], &expect[o], 1e-5, 1e-6, msg, sizeof msg),
                  "%s | %s frame %d output %d: %s (seed %llu, %s)", combos[c][0],
                  combos[c][1], f, o, msg, (unsigned long long)seed, onnx_seed_note());
      }
      if (f == 2) cr_assert_eq(res.outputs[0].shape[0], 0, "nothing picked");
      if (f > 0)
        for (int o = 0; o < 4; ++o) vkp_tensor_deinit(&want[o]);
      vkp_pipeline_result_deinit(&res);
    }
    vkp_pipeline_destroy(pipe);
    vkp_plan_destroy(plan);
  }
  for (int i = 0; i < 2; ++i) vkp_tensor_deinit(&numpy_in[i]);
  for (int i = 0; i < 4; ++i) vkp_tensor_deinit(&numpy_out[i]);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// The varying-batch transformer block as a two-stage ref | ref pipeline:
// the global input takes each frame's own batch (2 from NumPy, then 3, 1
// and 3 again, random), the extent travelling in the ring slots; every
// result equals the whole graph run on ref with that batch.
Test(onnx_dynamic, varying_batch_pipeline, .timeout = 120) {
  char path[1024];
  onnx_model_path(path, sizeof path, "dynamic_varying_batch.onnx");
  vkp_dim_binding_t dims[] = {{.name = "batch", .value = 3, .up_to = true}};
  vkp_graph_load_options_t opt = {.n_dims = 1, .dims = dims};
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_load_with_options(path, &opt, &g));
  int32_t s0[64], s1[64], n0 = 0, n1 = 0;
  cr_assert_lt(g->n_nodes, 64);
  for (int32_t k = 0; k < g->n_nodes; ++k) {
    if (k < g->n_nodes / 2) s0[n0++] = k;
    else s1[n1++] = k;
  }
  s0[n0] = -1;
  s1[n1] = -1;
  const int32_t *groups[] = {s0, s1};
  static const char *const targets[] = {"ref", "ref"};
  vkp_registry_t *reg;
  const char *names[] = {"ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  vkp_plan_t *plan = NULL;
  VKP_TEST_OK(plan_from_groups(g, 2, groups, targets, &plan));
  vkp_pipeline_t *pipe = NULL;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  vkp_tensor_t numpy_in;
  onnx_model_path(path, sizeof path, "dynamic_varying_batch.input_0.pb");
  VKP_TEST_OK(vkp_onnx_tensor_load(path, &numpy_in, NULL));
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  enum { FRAMES = 4 };
  static const int64_t batch[FRAMES] = {2, 3, 1, 3};
  float xs[FRAMES][3 * 5 * 8];
  for (int f = 0; f < FRAMES; ++f) {
    int64_t shape[] = {batch[f], 5, 8};
    if (f == 0) memcpy(xs[0], numpy_in.data, vkp_tensor_nbytes(&numpy_in));
    else
      for (int i = 0; i < batch[f] * 40; ++i) xs[f][i] = vkp_test_rng_uniform(&rng, -1.0f, 1.0f);
    vkp_tensor_t x;
    VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 3, shape, xs[f]));
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &x));
    VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
  }
  for (int f = 0; f < FRAMES; ++f) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
    cr_assert_null(res.status, "frame %d: %s", f, vkp_status_message(res.status));
    cr_assert_eq(res.outputs[0].shape[0], batch[f], "frame %d", f);
    int64_t shape[] = {batch[f], 5, 8};
    vkp_tensor_t x, want;
    VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 3, shape, xs[f]));
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, &want));
    char msg[512];
    cr_assert(vkp_test_allclose(&res.outputs[0], &want, 1e-6, 1e-7, msg, sizeof msg),
              "frame %d: %s (seed %llu)", f, msg, (unsigned long long)seed);
    vkp_tensor_deinit(&want);
    vkp_pipeline_result_deinit(&res);
  }
  // A batch past the bound is refused naming the input.
  int64_t big[] = {4, 5, 8};
  float data[4 * 40] = {0};
  vkp_tensor_t x;
  VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 3, big, data));
  vkp_status_t st = vkp_pipeline_set_input(pipe, "x", &x);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "'x'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_tensor_deinit(&numpy_in);
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Slice with run-time starts and ends (negative, clamped and empty ranges
// across seeds; steps 1 and 2; int64 and int32 bounds) and torch's
// EmbeddingBag export (a Loop whose body slices the ids between two run-time
// offsets), against NumPy on "ref" and "cpu".
Test(onnx_dynamic, slice_runtime_starts_and_ends, .timeout = 120) {
  vkp_graph_t *g = onnx_load_model("dynamic_slice_runtime.onnx");
  // Two top-level slices and one per bag of the unrolled Loop.
  cr_assert_eq(onnx_count_op(g, VKP_OP_NON_ZERO), 2 + 4);
  cr_assert(has_bounded(g));
  onnx_run_and_compare(g, "dynamic_slice_runtime", 1e-6, 1e-7);
  onnx_run_and_compare_on(g, "dynamic_slice_runtime", "cpu", 1, 1e-6, 1e-7);
  vkp_graph_destroy(g);
}

// Run-time starts and ends over two axes: refused at import, naming the
// node and why.
Test(onnx_dynamic, slice_runtime_two_axes_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "dynamic_slice_two_axes.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "two_axes"), "%s", msg);
  cr_assert(strstr(msg, "starts has 2 entries"), "%s", msg);
  cr_assert(strstr(msg, "exactly one axis"), "%s", msg);
  vkp_status_free(st);
}
