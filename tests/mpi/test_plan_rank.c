// SPDX-License-Identifier: Apache-2.0
// The plan's "rank" field (docs/pipeline-config.md, docs/scale-out.md), with
// or without MPI: written only when set, read back, refused out of range,
// and a plan placing a stage on another rank refused clearly by a process
// that has not initialised MPI (or a libvkpipe built without it).
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/artifact.h"
#include "vkpipe/mpi.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"

// Model x -> n0 (identity) -> h -> n1 (identity) -> y, and a two-stage plan
// of it (one node each) with stage 1 on `rank`.
static void make(int32_t rank, vkp_graph_t **out_model, vkp_plan_t **out_plan) {
  int64_t shape[1] = {6};
  vkp_graph_t *g = g_new("m");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, shape);
  g_node(g, "n0", VKP_OP_IDENTITY, "x", "h", 0, NULL);
  g_node(g, "n1", VKP_OP_IDENTITY, "h", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_plan_create("p", &plan));
  for (int32_t s = 0; s < 2; ++s) {
    vkp_graph_t *sub;
    VKP_TEST_OK(vkp_graph_extract(g, 1, &s, s ? "s1" : "s0", &sub));
    VKP_TEST_OK(vkp_plan_add_stage(plan, s ? "s1" : "s0", "cpu", sub, NULL));
  }
  VKP_TEST_OK(vkp_plan_add_global_input(plan, "x"));
  VKP_TEST_OK(vkp_plan_add_global_output(plan, "y"));
  VKP_TEST_OK(vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x"));
  VKP_TEST_OK(vkp_plan_bind(plan, 0, "h", 1, "h"));
  VKP_TEST_OK(vkp_plan_bind(plan, 1, "y", VKP_PLAN_GLOBAL, "y"));
  VKP_TEST_OK(vkp_plan_set_stage_rank(plan, 1, rank));
  VKP_TEST_OK(vkp_plan_validate(plan));
  VKP_TEST_OK(vkp_plan_set_source(plan, "m.json"));
  *out_model = g;
  *out_plan = plan;
}

Test(plan_rank, written_only_when_set_and_read_back, .timeout = 20) {
  vkp_graph_t *g;
  vkp_plan_t *plan;
  make(0, &g, &plan);
  char *json;
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  cr_assert(!strstr(json, "\"rank\""), "a plan without ranks names none: %s", json);
  vkp_free(json);
  VKP_TEST_OK(vkp_plan_set_stage_rank(plan, 1, 3));
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  cr_assert(strstr(json, "\"rank\":\t3"), "%s", json);
  vkp_plan_t *back;
  VKP_TEST_OK(vkp_plan_from_json(json, strlen(json), NULL, g, &back));
  cr_assert_eq(back->stages[0].rank, 0);
  cr_assert_eq(back->stages[1].rank, 3);
  vkp_plan_destroy(back);
  vkp_free(json);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

Test(plan_rank, out_of_range_is_refused, .timeout = 20) {
  vkp_graph_t *g;
  vkp_plan_t *plan;
  make(2, &g, &plan);
  vkp_status_t st = vkp_plan_set_stage_rank(plan, 1, -1);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "'s1'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  char *json;
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  const char *bad[] = {"-1", "1.5", "\"two\"", "99999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    char *at = strstr(json, "\"rank\":\t2");
    cr_assert(at);
    size_t head = (size_t)(at - json) + strlen("\"rank\":\t");
    char edited[8192];
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)head, json, bad[i], at + strlen("\"rank\":\t2"));
    vkp_plan_t *back = NULL;
    st = vkp_plan_from_json(edited, strlen(edited), NULL, g, &back);
    cr_assert(st, "rank %s accepted", bad[i]);
    cr_assert(strstr(vkp_status_message(st), "stage 's1'") &&
                  strstr(vkp_status_message(st), "\"rank\""),
              "rank %s: %s", bad[i], vkp_status_message(st));
    vkp_status_free(st);
    cr_assert_null(back);
  }
  vkp_free(json);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}

Test(plan_rank, another_rank_without_mpi_is_refused, .timeout = 20) {
  vkp_pipeline_synthetic_stage_t stages[2] = {{VKP_PIPELINE_SYNTHETIC_SLEEP, 0},
                                              {VKP_PIPELINE_SYNTHETIC_SLEEP, 0}};
  int32_t ranks[2] = {0, 1};
  vkp_pipeline_t *pipe = NULL;
  vkp_status_t st =
      vkp_pipeline_create_synthetic_ranks(stages, ranks, 2, 4, NULL, &pipe);
  cr_assert_null(pipe);
  cr_assert(vkp_status_is(st, vkp_mpi_available() ? VKP_STATUS_FAILED_PRECONDITION
                                                  : VKP_STATUS_UNSUPPORTED),
            "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "stage1") &&
                strstr(vkp_status_message(st), "rank 1"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  // The same pipeline with every rank 0 is an ordinary one.
  ranks[1] = 0;
  VKP_TEST_OK(vkp_pipeline_create_synthetic_ranks(stages, ranks, 2, 4, NULL, &pipe));
  vkp_pipeline_destroy(pipe);
}

Test(plan_rank, an_artifact_keeps_the_ranks, .timeout = 60) {
  vkp_graph_t *g;
  vkp_plan_t *plan;
  make(2, &g, &plan);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  char path[] = "/tmp/vkpipe_plan_rank_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  vkp_artifact_info_t info = {.model = "m.json", .policy = "cpu"};
  VKP_TEST_OK(vkp_artifact_build(plan, reg, &info, path));
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load(path, &art));
  const vkp_plan_t *back = vkp_artifact_plan(art);
  cr_assert_eq(back->n_stages, 2);
  cr_assert_eq(back->stages[0].rank, 0);
  cr_assert_eq(back->stages[1].rank, 2);
  vkp_artifact_destroy(art);
  unlink(path);
  vkp_registry_destroy(reg);
  vkp_plan_destroy(plan);
  vkp_graph_destroy(g);
}
