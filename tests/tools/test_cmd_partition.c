// SPDX-License-Identifier: Apache-2.0
// tools/cmd_partition.c and tools/cmd_calibrate.c, run as the built binary.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/partition_fixtures.h"
#include "support/test_cli.h"
#include "vkpipe/cost.h"
#include "vkpipe/plan.h"

TestSuite(cmd_partition, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

static vkp_test_run_t run_tool(const char *args) { return vkp_test_run_tool("vkpipe", args); }

static void path_in(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", vkp_test_scratch, name);
}

Test(cmd_partition, plan_table_and_dot, .timeout = 60) {
  vkp_graph_t *g = fx_resnet_like(3, 4, 6);
  char model[512];
  path_in(model, sizeof model, "resnet.json");
  VKP_TEST_OK(vkp_graph_save(g, model));
  vkp_graph_destroy(g);
  vkp_test_run_t r = run_tool("partition resnet.json --stages 2 -o plan.json --dot plan.dot");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "stage    target"), "%s", r.out);
  cr_assert(strstr(r.out, "stage1"), "%s", r.out);
  cr_assert(strstr(r.out, "bottleneck:"));
  cr_assert(strstr(r.out, "plan written to plan.json"));
  vkp_test_run_free(&r);
  char plan_path[512], dot_path[512];
  path_in(plan_path, sizeof plan_path, "plan.json");
  path_in(dot_path, sizeof dot_path, "plan.dot");
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_plan_load(plan_path, NULL, &plan));
  cr_assert_eq(plan->n_stages, 2);
  cr_assert_str_eq(plan->source, "resnet.json");
  vkp_plan_destroy(plan);
  char *dot = vkp_test_read_file(dot_path, NULL);
  cr_assert(dot && strncmp(dot, "digraph", 7) == 0);
  cr_assert(strstr(dot, "cluster_1"));
  free(dot);
  // --split: the stages as their own files.
  r = run_tool("partition resnet.json --stages 2 -o split.json --split");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  vkp_test_run_free(&r);
  path_in(plan_path, sizeof plan_path, "split.json");
  VKP_TEST_OK(vkp_plan_load(plan_path, NULL, &plan));
  cr_assert_str_eq(plan->stages[0].graph_file, "split.stage0.json");
  vkp_plan_destroy(plan);
}

Test(cmd_partition, usage_and_errors, .timeout = 60) {
  vkp_test_run_t r = run_tool("partition --help");
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "--assign"));
  vkp_test_run_free(&r);
  r = run_tool("partition");
  cr_assert_eq(r.code, 2);
  vkp_test_run_free(&r);
  char args[1024];
  snprintf(args, sizeof args, "partition '%s/examples/mlp.json' --stages zero",
           vkp_test_source_dir());
  r = run_tool(args);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--stages"), "%s", r.err);
  vkp_test_run_free(&r);
  snprintf(args, sizeof args, "partition '%s/examples/mlp.json' --assign 'fc*=npu'",
           vkp_test_source_dir());
  r = run_tool(args);
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "--assign 'fc*=npu'"), "%s", r.err);
  cr_assert(strstr(r.err, "unknown target 'npu'"), "%s", r.err);
  vkp_test_run_free(&r);
  r = run_tool("partition missing.json");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "missing.json"), "%s", r.err);
  vkp_test_run_free(&r);
}

Test(cmd_partition, calibrate_then_partition, .timeout = 60) {
  vkp_test_run_t r = run_tool("calibrate -o prof.json --size 16 --elements 1024 --repeats 1");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "profile written to prof.json"), "%s", r.out);
  vkp_test_run_free(&r);
  char prof_path[512];
  path_in(prof_path, sizeof prof_path, "prof.json");
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_load(prof_path, &p));
  vkp_profile_destroy(p);
  char args[1024];
  snprintf(args, sizeof args, "partition '%s/examples/mlp.json' --profile prof.json",
           vkp_test_source_dir());
  r = run_tool(args);
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  vkp_test_run_free(&r);
  r = run_tool("calibrate --size 0");
  cr_assert_eq(r.code, 2);
  vkp_test_run_free(&r);
}
