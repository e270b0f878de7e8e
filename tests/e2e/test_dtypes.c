// SPDX-License-Identifier: Apache-2.0
// Every dtype crosses stage boundaries: a value of each dtype is produced in
// one stage and consumed in another (cpu -> cpu, and ref -> cpu -> ref for
// float16 and bfloat16, which the C generator stores but does not convert),
// both through a pipeline built from the plan and through an artifact built
// and loaded back; float32 also crosses cpu -> vulkan -> cpu. Results match
// the reference target bit for bit (casts and transposes are exact).
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "support/test_cli.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/artifact.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"

TestSuite(dtypes, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

// x float32 [3, 5] -> cast to `dt` ("to") -> transpose ("tr") -> cast back
// to float32 ("back"); outputs: the transposed `dt` value and the float32.
static vkp_graph_t *cast_chain(vkp_dtype_t dt, const char *to_target,
                               const char *tr_target, const char *back_target) {
  vkp_graph_t *g = g_new("dtypes");
  int64_t shape[] = {3, 5}, perm[] = {1, 0};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, shape);
  vkp_attr_t to = {.name = "to", .kind = VKP_ATTR_STRING, .s = vkp_dtype_name(dt)};
  vkp_attr_t back = {.name = "to", .kind = VKP_ATTR_STRING, .s = "float32"};
  vkp_attr_t p = {.name = "perm", .kind = VKP_ATTR_INTS, .ints = perm, .count = 2};
  const char *x[] = {"x"}, *c[] = {"c"}, *t[] = {"t"}, *y[] = {"y"};
  int32_t n0, n1, n2;
  VKP_TEST_OK(vkp_graph_add_node(g, "to", VKP_OP_CAST, 1, x, 1, c, 1, &to, &n0));
  VKP_TEST_OK(vkp_graph_add_node(g, "tr", VKP_OP_TRANSPOSE, 1, c, 1, t, 1, &p, &n1));
  VKP_TEST_OK(vkp_graph_add_node(g, "back", VKP_OP_CAST, 1, t, 1, y, 1, &back, &n2));
  VKP_TEST_OK(vkp_graph_set_node_target(g, n0, to_target));
  VKP_TEST_OK(vkp_graph_set_node_target(g, n1, tr_target));
  VKP_TEST_OK(vkp_graph_set_node_target(g, n2, back_target));
  g_out(g, "t,y");
  g_validate(g);
  return g;
}

static void expect_same_bits(const vkp_tensor_t *got, const vkp_tensor_t *want,
                             const char *what) {
  cr_assert_eq(got->dtype, want->dtype, "%s: dtype %s vs %s", what,
               vkp_dtype_name(got->dtype), vkp_dtype_name(want->dtype));
  cr_assert_eq(vkp_tensor_nbytes(got), vkp_tensor_nbytes(want), "%s", what);
  cr_assert(memcmp(got->data, want->data, vkp_tensor_nbytes(want)) == 0,
            "%s: data differs", what);
}

// Runs `plan` (fresh, or from an artifact written to scratch) on random
// inputs and compares both outputs with ref on the whole graph.
static void run_and_compare(vkp_registry_t *reg, const vkp_graph_t *g,
                            const vkp_plan_t *plan, bool unsigned_data,
                            bool via_artifact, vkp_test_rng_t *rng,
                            const char *what) {
  vkp_pipeline_t *pipe = NULL;
  vkp_artifact_t *art = NULL;
  if (via_artifact) {
    char path[512];
    snprintf(path, sizeof path, "%s/dtypes.vkp", vkp_test_scratch);
    vkp_artifact_info_t info = {.model = "dtypes", .policy = "manual"};
    VKP_TEST_OK(vkp_artifact_build(plan, reg, &info, path));
    // The shipped code itself (the test built the file, so it vouches).
    vkp_artifact_load_options_t lo = {.trust_unsigned_code = true};
    VKP_TEST_OK(vkp_artifact_load_with_options(path, &lo, &art));
    cr_assert_not_null(vkp_artifact_blobs(art));
    VKP_TEST_OK(vkp_pipeline_create_from_blobs(vkp_artifact_plan(art), reg,
                                               vkp_artifact_blobs(art), NULL, &pipe));
  } else {
    VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  }
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  for (int frame = 0; frame < 3; ++frame) {
    vkp_tensor_t x, got[2], want[2];
    int64_t shape[] = {3, 5};
    VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 2, shape));
    // Unsigned and bool targets get non-negative data: a negative float to
    // an unsigned integer is undefined in ONNX.
    vkp_test_fill_uniform(rng, &x, unsigned_data ? 0.0f : -100.0f, 100.0f);
    VKP_TEST_OK(vkp_pipeline_infer(pipe, &x, got));
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, want));
    expect_same_bits(&got[0], &want[0], what);
    expect_same_bits(&got[1], &want[1], what);
    for (int i = 0; i < 2; ++i) {
      vkp_tensor_deinit(&got[i]);
      vkp_tensor_deinit(&want[i]);
    }
    vkp_tensor_deinit(&x);
  }
  vkp_pipeline_destroy(pipe);
  vkp_artifact_destroy(art);
}

// Partitions the chain into stages as its manual targets and the stage
// count say, checks that a value of `dt` crosses a stage boundary, runs it.
static void check_chain(vkp_registry_t *reg, vkp_dtype_t dt, const char *to,
                        const char *tr, const char *back, int32_t stages,
                        vkp_test_rng_t *rng) {
  vkp_graph_t *g = cast_chain(dt, to, tr, back);
  vkp_partition_options_t opt = {.policy = "auto", .stages = stages};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  VKP_TEST_OK(vkp_partition_to_plan(part, "dtypes", &plan));
  cr_assert_eq(plan->n_stages, stages, "%s", vkp_dtype_name(dt));
  bool crossed = false;
  for (int32_t b = 0; b < plan->n_bindings; ++b) {
    const vkp_plan_binding_t *bd = &plan->bindings[b];
    crossed |= bd->src_stage >= 0 && bd->dst_stage >= 0 &&
               (strcmp(bd->src_name, "c") == 0 || strcmp(bd->src_name, "t") == 0);
  }
  cr_assert(crossed, "%s: no %s value crosses a stage boundary",
            vkp_dtype_name(dt), vkp_dtype_name(dt));
  vkp_dtype_kind_t kind = vkp_dtype_kind(dt);
  bool non_negative = kind == VKP_DTYPE_KIND_UINT || kind == VKP_DTYPE_KIND_BOOL;
  char what[128];
  snprintf(what, sizeof what, "%s %s->%s->%s", vkp_dtype_name(dt), to, tr, back);
  run_and_compare(reg, g, plan, non_negative, false, rng, what);
  run_and_compare(reg, g, plan, non_negative, true, rng, what);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_graph_destroy(g);
}

Test(dtypes, every_dtype_crosses_stages_and_artifacts, .timeout = 300) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    vkp_dtype_t dt = (vkp_dtype_t)d;
    if (dt == VKP_DTYPE_FLOAT16 || dt == VKP_DTYPE_BFLOAT16)
      check_chain(reg, dt, "ref", "cpu", "ref", 3, &rng);
    else
      check_chain(reg, dt, "cpu", "cpu", "cpu", 2, &rng);
  }
  vkp_registry_destroy(reg);
}

Test(dtypes, float32_crosses_cpu_vulkan_cpu, .timeout = 300) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  if (!vkp_registry_find(reg, "vulkan")) {
    vkp_registry_destroy(reg);
    cr_skip_test("no Vulkan device");
  }
  check_chain(reg, VKP_DTYPE_FLOAT32, "cpu", "vulkan", "cpu", 3, &rng);
  vkp_registry_destroy(reg);
}
