// SPDX-License-Identifier: Apache-2.0
// End to end: plans the partitioner makes (and their JSON round trip) run
// through the pipeline executor and give what the whole graph gives on the
// reference target, for fresh random inputs.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"

#define FRAMES 3

static void run_and_compare(const vkp_graph_t *g, const vkp_plan_t *plan,
                            const vkp_registry_t *reg, vkp_test_rng_t *rng) {
  const vkp_target_t *ref = vkp_registry_find(reg, "ref");
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_pipeline_create(plan, reg, NULL, &pipe));
  vkp_tensor_t x[FRAMES];
  const vkp_value_t *xv = &g->values[g->inputs[0]];
  for (int f = 0; f < FRAMES; ++f) {
    VKP_TEST_OK(vkp_tensor_init(&x[f], xv->dtype, xv->rank, xv->shape));
    vkp_test_fill_uniform(rng, &x[f], -1.0f, 1.0f);
    VKP_TEST_OK(vkp_pipeline_set_input(pipe, xv->name, &x[f]));
    uint64_t seq;
    VKP_TEST_OK(vkp_pipeline_run(pipe, &seq));
  }
  for (int f = 0; f < FRAMES; ++f) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(pipe, UINT64_MAX, &res));
    VKP_TEST_OK(res.status);
    res.status = NULL;
    cr_assert_eq(res.n_outputs, g->n_outputs);
    vkp_tensor_t want[1];
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x[f], want));
    char msg[256];
    cr_assert(vkp_test_allclose(&res.outputs[0], &want[0], 1e-5, 1e-6, msg, sizeof msg),
              "%s, %d stages, frame %d: %s", g->name, (int)plan->n_stages, f, msg);
    vkp_tensor_deinit(&want[0]);
    vkp_pipeline_result_deinit(&res);
  }
  for (int f = 0; f < FRAMES; ++f) vkp_tensor_deinit(&x[f]);
  vkp_pipeline_destroy(pipe);
}

static void check_graph(const vkp_graph_t *g, vkp_registry_t *reg,
                        vkp_test_rng_t *rng) {
  for (int32_t k = 1; k <= 4; ++k) {
    vkp_partition_options_t opt = {.policy = "ref", .stages = k};
    vkp_partition_t *part;
    VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
    vkp_plan_t *plan;
    VKP_TEST_OK(vkp_partition_to_plan(part, NULL, &plan));
    cr_assert_eq(plan->n_stages, k);
    run_and_compare(g, plan, reg, rng);
    // The same plan after a trip through JSON.
    char *json;
    VKP_TEST_OK(vkp_plan_set_source(plan, "model.json"));
    VKP_TEST_OK(vkp_plan_to_json(plan, &json));
    vkp_plan_t *back;
    VKP_TEST_OK(vkp_plan_from_json(json, strlen(json), NULL, g, &back));
    run_and_compare(g, back, reg, rng);
    vkp_plan_destroy(back);
    vkp_free(json);
    vkp_plan_destroy(plan);
    vkp_partition_destroy(part);
  }
}

Test(plan_pipeline, partitioned_plans_match_the_whole_graph, .timeout = 120) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  if (!vkp_registry_find(reg, "ref")) {
    vkp_registry_destroy(reg);
    cr_skip_test("no reference target registered");
  }
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  vkp_graph_t *r = fx_resnet_like(2, 4, 6);
  vkp_graph_t *m = fx_mobilenet_like(2, 4, 6);
  check_graph(r, reg, &rng);
  check_graph(m, reg, &rng);
  vkp_graph_destroy(r);
  vkp_graph_destroy(m);
  vkp_registry_destroy(reg);
}
