// SPDX-License-Identifier: Apache-2.0
// tools/cmd_partition.c and tools/cmd_calibrate.c, run as the built binary.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "partition/partition_fixtures.h"
#include "vkpipe/cost.h"
#include "vkpipe/plan.h"

static char scratch[256];

static void make_scratch(void) {
  snprintf(scratch, sizeof scratch, "%s/test_cmd_partition_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(scratch));
}

static void remove_scratch(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(cmd_partition, .init = make_scratch, .fini = remove_scratch);

typedef struct run_result_t {
  int code;
  char *out, *err;
} run_result_t;

static run_result_t run_tool(const char *args) {
  char cmd[4096], out_path[512], err_path[512];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", scratch);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", scratch);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/vkpipe' %s >'%s' 2>'%s'", scratch,
           vkp_test_binary_dir(), args, out_path, err_path);
  int status = system(cmd);
  cr_assert(WIFEXITED(status), "%s did not exit", cmd);
  run_result_t r = {WEXITSTATUS(status), vkp_test_read_file(out_path, NULL),
                    vkp_test_read_file(err_path, NULL)};
  cr_assert(r.out && r.err);
  return r;
}

static void free_result(run_result_t *r) {
  free(r->out);
  free(r->err);
}

static void path_in(char *buf, size_t size, const char *name) {
  snprintf(buf, size, "%s/%s", scratch, name);
}

Test(cmd_partition, plan_table_and_dot, .timeout = 60) {
  vkp_graph_t *g = fx_resnet_like(3, 4, 6);
  char model[512];
  path_in(model, sizeof model, "resnet.json");
  VKP_TEST_OK(vkp_graph_save(g, model));
  vkp_graph_destroy(g);
  run_result_t r = run_tool("partition resnet.json --stages 2 -o plan.json --dot plan.dot");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "stage    target"), "%s", r.out);
  cr_assert(strstr(r.out, "stage1"), "%s", r.out);
  cr_assert(strstr(r.out, "bottleneck:"));
  cr_assert(strstr(r.out, "plan written to plan.json"));
  free_result(&r);
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
  free_result(&r);
  path_in(plan_path, sizeof plan_path, "split.json");
  VKP_TEST_OK(vkp_plan_load(plan_path, NULL, &plan));
  cr_assert_str_eq(plan->stages[0].graph_file, "split.stage0.json");
  vkp_plan_destroy(plan);
}

Test(cmd_partition, usage_and_errors, .timeout = 60) {
  run_result_t r = run_tool("partition --help");
  cr_assert_eq(r.code, 0);
  cr_assert(strstr(r.out, "--assign"));
  free_result(&r);
  r = run_tool("partition");
  cr_assert_eq(r.code, 2);
  free_result(&r);
  char args[1024];
  snprintf(args, sizeof args, "partition '%s/examples/mlp.json' --stages zero",
           vkp_test_source_dir());
  r = run_tool(args);
  cr_assert_eq(r.code, 2);
  cr_assert(strstr(r.err, "--stages"), "%s", r.err);
  free_result(&r);
  snprintf(args, sizeof args, "partition '%s/examples/mlp.json' --assign 'fc*=npu'",
           vkp_test_source_dir());
  r = run_tool(args);
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "--assign 'fc*=npu'"), "%s", r.err);
  cr_assert(strstr(r.err, "unknown target 'npu'"), "%s", r.err);
  free_result(&r);
  r = run_tool("partition missing.json");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "missing.json"), "%s", r.err);
  free_result(&r);
}

Test(cmd_partition, calibrate_then_partition, .timeout = 60) {
  run_result_t r = run_tool("calibrate -o prof.json --size 16 --elements 1024 --repeats 1");
  cr_assert_eq(r.code, 0, "%s%s", r.out, r.err);
  cr_assert(strstr(r.out, "profile written to prof.json"), "%s", r.out);
  free_result(&r);
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
  free_result(&r);
  r = run_tool("calibrate --size 0");
  cr_assert_eq(r.code, 2);
  free_result(&r);
}
