// SPDX-License-Identifier: Apache-2.0
// cpu stages with thread pools in a pipeline (runtime/cpu/pool.c through
// runtime/cpu/target_cpu.c): two stages of two threads each, one pinned
// with the plan's cpu_affinity, run frames side by side and give what the
// ref target gives; cpu_affinity is read in both of its JSON forms and
// bad values are refused with a message naming the stage or the cpu. Built
// under ThreadSanitizer too (vkp_pipeline_test).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/pipeline.h"

#define FRAMES 6

// x [1, 32, 24, 24] -> depthwise 3x3 + relu -> pointwise 32 -> 48 ->
// global average pool -> softmax: big enough that each kernel splits.
static vkp_graph_t *model(vkp_test_rng_t *rng) {
  vkp_graph_t *g = g_new("pooled");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 4, SH(1, 32, 24, 24));
  g_const(g, rng, "dw_w", 4, SH(32, 1, 3, 3), -0.5f, 0.5f);
  g_const(g, rng, "pw_w", 4, SH(48, 32, 1, 1), -0.5f, 0.5f);
  vkp_attr_t dw[] = {at_i("group", 32), at_is("pads", 4, SH(1, 1, 1, 1))};
  g_node(g, "dw", VKP_OP_CONV2D, "x,dw_w", "d", 2, dw);
  g_node(g, "relu", VKP_OP_RELU, "d", "r", 0, NULL);
  g_node(g, "pw", VKP_OP_CONV2D, "r,pw_w", "p", 0, NULL);
  g_node(g, "gap", VKP_OP_GLOBAL_AVG_POOL, "p", "q", 0, NULL);
  vkp_attr_t axis[] = {at_i("axis", 1)};
  g_node(g, "softmax", VKP_OP_SOFTMAX, "q", "y", 1, axis);
  g_out(g, "y");
  g_validate(g);
  return g;
}

// A two-stage plan of `g` with `affinity0` spliced in as stage0's
// "cpu_affinity" value (NULL: none) and `more0`, `more1` into the stages'
// objects (NULL: nothing).
static vkp_status_t plan_with3(const vkp_graph_t *g, const char *affinity0, const char *more0,
                               const char *more1, vkp_plan_t **out_plan) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"version\": 1, \"name\": \"pooled\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
           " \"stages\": ["
           "  {\"name\": \"s0\", \"target\": \"cpu\", \"threads\": 2, \"nodes\": [\"dw\", "
           "\"relu\"]%s%s%s},"
           "  {\"name\": \"s1\", \"target\": \"cpu\", \"threads\": 2,"
           "   \"nodes\": [\"pw\", \"gap\", \"softmax\"]%s}],"
           " \"bindings\": ["
           "  {\"from\": {\"global\": \"x\"}, \"to\": {\"stage\": \"s0\", \"input\": \"x\"}},"
           "  {\"from\": {\"stage\": \"s0\", \"output\": \"r\"}, \"to\": {\"stage\": \"s1\","
           " \"input\": \"r\"}},"
           "  {\"from\": {\"stage\": \"s1\", \"output\": \"y\"}, \"to\": {\"global\": \"y\"}}]}",
           affinity0 ? ", \"cpu_affinity\": " : "", affinity0 ? affinity0 : "",
           more0 ? more0 : "", more1 ? more1 : "");
  return vkp_plan_from_json(json, strlen(json), NULL, g, out_plan);
}

static vkp_status_t plan_with(const vkp_graph_t *g, const char *affinity0,
                              vkp_plan_t **out_plan) {
  return plan_with3(g, affinity0, NULL, NULL, out_plan);
}

static char *cache_dir(void) {
  char *dir = strdup("/tmp/vkpipe-cpu-stages-XXXXXX");
  cr_assert(mkdtemp(dir) != NULL);
  return dir;
}

// Removes the compile cache directory and the objects in it.
static void remove_cache(char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
  free(dir);
}

// Runs `frames` random frames through `plan` (of `g`), all in flight at
// once, and checks each result against the ref target.
static void run_against_ref(const vkp_plan_t *plan, const vkp_graph_t *g, int frames,
                            vkp_test_rng_t *rng) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  char *dir = cache_dir();
  vkp_compile_options_t copts[2] = {{.cache_dir = dir}, {.cache_dir = dir}};
  vkp_pipeline_options_t popts = {.stage_compile_options = copts};
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, &popts, &pipe));
  vkp_tensor_t *x = calloc((size_t)frames, sizeof(vkp_tensor_t));
  cr_assert_not_null(x);
  for (int f = 0; f < frames; ++f) {
    VKP_TEST_OK(vkp_tensor_init(&x[f], VKP_DTYPE_FLOAT32, 4, (const int64_t[]){1, 32, 24, 24}));
    vkp_test_fill_uniform(rng, &x[f], -1.0f, 1.0f);
  }
  // Frames in flight in both stages at once, their pools working side by side.
  for (int f = 0; f < frames; ++f) {
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &x[f]));
    VKP_TEST_OK(vkp_pipeline_run(pipe, NULL));
  }
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  for (int f = 0; f < frames; ++f) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
    cr_assert_eq(res.seq, (uint64_t)f + 1);
    VKP_TEST_OK(res.status);
    res.status = NULL;
    vkp_tensor_t want[1];
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x[f], want));
    char msg[256];
    cr_assert(vkp_test_allclose(&res.outputs[0], &want[0], 1e-4, 1e-6, msg, sizeof msg),
              "frame %d: %s", f, msg);
    vkp_tensor_deinit(&want[0]);
    vkp_pipeline_result_deinit(&res);
  }
  for (int f = 0; f < frames; ++f) vkp_tensor_deinit(&x[f]);
  free(x);
  vkp_pipeline_destroy(pipe);
  remove_cache(dir);
  vkp_registry_destroy(reg);
}

Test(cpu_stages, pooled_stages_match_ref, .timeout = 180) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = model(&rng);
  vkp_plan_t *plan;
  VKP_TEST_OK(plan_with(g, "[0]", &plan));
  cr_assert_eq(plan->stages[0].n_cpu_affinity, 1);
  cr_assert_eq(plan->stages[1].n_cpu_affinity, 0);
  run_against_ref(plan, g, FRAMES, &rng);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

// Copies of cpu stages (plan "replicas"): each copy its own compiled
// instance, pool and workspace, frames alternating between them, results
// in order and equal to ref's.
Test(cpu_stages, copies_match_ref, .timeout = 180) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = model(&rng);
  vkp_plan_t *plan;
  VKP_TEST_OK(plan_with3(g, NULL, ", \"replicas\": 2", ", \"replicas\": 3", &plan));
  cr_assert_eq(plan->stages[0].replicas, 2);
  cr_assert_eq(plan->stages[1].replicas, 3);
  run_against_ref(plan, g, 3 * FRAMES, &rng);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

// Both spellings, and the JSON round trip keeps the list.
Test(cpu_stages, affinity_forms, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = model(&rng);
  vkp_plan_t *plan;
  VKP_TEST_OK(plan_with(g, "\"0,2-4,7\"", &plan));
  const int32_t want[] = {0, 2, 3, 4, 7};
  cr_assert_eq(plan->stages[0].n_cpu_affinity, 5);
  for (int i = 0; i < 5; ++i) cr_assert_eq(plan->stages[0].cpu_affinity[i], want[i]);
  VKP_TEST_OK(vkp_plan_set_source(plan, "model.json"));
  char *json;
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  cr_assert(strstr(json, "\"cpu_affinity\"") != NULL, "%s", json);
  vkp_plan_t *back;
  VKP_TEST_OK(vkp_plan_from_json(json, strlen(json), NULL, g, &back));
  cr_assert_eq(back->stages[0].n_cpu_affinity, 5);
  for (int i = 0; i < 5; ++i) cr_assert_eq(back->stages[0].cpu_affinity[i], want[i]);
  cr_assert_eq(back->stages[1].n_cpu_affinity, 0);
  vkp_free(json);
  vkp_plan_destroy(back);
  vkp_plan_destroy(plan);
  VKP_TEST_OK(plan_with(g, "[1, 0]", &plan));
  cr_assert_eq(plan->stages[0].n_cpu_affinity, 2);
  cr_assert_eq(plan->stages[0].cpu_affinity[0], 1);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

static void expect_error(vkp_status_t st, const char *needle) {
  cr_assert(st != NULL, "expected an error mentioning '%s'", needle);
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, needle) != NULL, "'%s' does not mention '%s'", msg, needle);
  vkp_status_free(st);
}

Test(cpu_stages, bad_affinity, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = model(&rng);
  vkp_plan_t *plan = NULL;
  static const char *const bad[][2] = {
      {"[-1]", "entry 0 is -1, not a cpu number"},
      {"[0, 5000]", "entry 1 is 5000, not a cpu number"},
      {"[1, 1]", "lists cpu 1 twice"},
      {"[0.5]", "\"cpu_affinity\" must list cpu numbers"},
      {"\"0,x\"", "\"cpu_affinity\" must list cpu numbers"},
      {"\"3-1\"", "\"cpu_affinity\" must list cpu numbers"},
      {"\"\"", "\"cpu_affinity\" must list cpu numbers"},
      {"{}", "stage 's0'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    expect_error(plan_with(g, bad[i][0], &plan), bad[i][1]);
    cr_assert_null(plan);
  }
  // Well-formed, but not a cpu this process may use: refused at load,
  // naming the stage and the cpu.
  VKP_TEST_OK(plan_with(g, "[1023]", &plan));
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  char *dir = cache_dir();
  vkp_compile_options_t copts[2] = {{.cache_dir = dir}, {.cache_dir = dir}};
  vkp_pipeline_options_t popts = {.stage_compile_options = copts};
  vkp_pipeline_t *pipe = NULL;
  vkp_status_t st = vkp_pipeline_create(plan, reg, &popts, &pipe);
  cr_assert_null(pipe);
  cr_assert(st != NULL);
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "stage 's0'") && strstr(msg, "cpu 1023") &&
                strstr(msg, "may not run on"),
            "%s", msg);
  vkp_status_free(st);
  remove_cache(dir);
  vkp_registry_destroy(reg);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}
