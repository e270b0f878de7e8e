// SPDX-License-Identifier: Apache-2.0
// plan/plan_json.c as the one codec: a plan file and the plan inside an
// artifact are the same JSON (stage names in bindings, "output"/"input"),
// ranks and cpu affinity survive both; plan/plan.c's global input and output
// values; artifacts of the previous format are refused with a version
// message.
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/archive.h"
#include "plan/tiny_plan.h"
#include "support/test_support.h"
#include "vkpipe/artifact.h"

static char scratch[256];

static void scratch_make(void) {
  snprintf(scratch, sizeof scratch, "/tmp/vkp_plan_json_XXXXXX");
  cr_assert_not_null(mkdtemp(scratch));
}

static void scratch_remove(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(plan_json, .init = scratch_make, .fini = scratch_remove);

static const cJSON *item(const cJSON *o, const char *key) {
  const cJSON *i = cJSON_GetObjectItemCaseSensitive(o, key);
  cr_assert_not_null(i, "no \"%s\"", key);
  return i;
}

// Every binding endpoint names its stage by name with "output" (from) or
// "input" (to), or is {"global": name}: the plan file's form.
static void check_plan_file_form(const cJSON *plan) {
  cr_assert_eq(item(plan, "version")->valuedouble, 1);
  const cJSON *b;
  int n = 0;
  cJSON_ArrayForEach(b, item(plan, "bindings")) {
    for (int side = 0; side < 2; ++side) {
      const cJSON *e = item(b, side ? "to" : "from");
      const cJSON *stage = cJSON_GetObjectItemCaseSensitive(e, "stage");
      if (!stage) {
        cr_assert(cJSON_IsString(item(e, "global")));
        continue;
      }
      cr_assert(cJSON_IsString(stage), "a stage endpoint names its stage");
      cr_assert(cJSON_IsString(item(e, side ? "input" : "output")));
      cr_assert_null(cJSON_GetObjectItemCaseSensitive(e, "name"));
    }
    ++n;
  }
  cr_assert_eq(n, 5);
}

static void check_tiny(const vkp_plan_t *p, int32_t back_rank) {
  cr_assert_eq(p->n_stages, 2);
  cr_assert_str_eq(p->stages[0].name, "front");
  cr_assert_str_eq(p->stages[1].name, "back");
  cr_assert_eq(p->stages[1].rank, back_rank);
  cr_assert_eq(p->stages[0].n_cpu_affinity, 2);
  cr_assert_eq(p->stages[0].cpu_affinity[1], 0);
  cr_assert_eq(p->n_bindings, 5);
  cr_assert_str_eq(p->inputs[0], "x_a");
  cr_assert_str_eq(p->outputs[1], "z");
  // The stage values behind the global names.
  cr_assert_str_eq(vkp_plan_input_value(p, 0)->name, "a");
  cr_assert_str_eq(vkp_plan_input_value(p, 1)->name, "b");
  cr_assert_str_eq(vkp_plan_output_value(p, 0)->name, "y");
  cr_assert_str_eq(vkp_plan_output_value(p, 1)->name, "z");
  cr_assert_eq(vkp_plan_output_value(p, 1)->shape[1], TINY_WIDTH);
  cr_assert_null(vkp_plan_input_value(p, 2));
  cr_assert_null(vkp_plan_output_value(p, -1));
}

static vkp_plan_t *tiny(int32_t back_rank) {
  vkp_plan_t *p;
  VKP_TEST_OK(tiny_plan_create(back_rank, &p));
  const int32_t cpus[] = {1, 0};
  VKP_TEST_OK(vkp_plan_set_stage_cpu_affinity(p, 0, 2, cpus));
  return p;
}

Test(plan_json, artifact_holds_the_plan_file_json, .timeout = 60) {
  vkp_plan_t *p = tiny(3);
  check_tiny(p, 3);
  const char *ref[] = {"ref"};
  vkp_registry_t *registry;
  VKP_TEST_OK(vkp_registry_create_builtin(ref, 1, &registry));
  char path[512];
  snprintf(path, sizeof path, "%s/tiny.vkp", scratch);
  VKP_TEST_OK(vkp_artifact_build(p, registry, NULL, path));
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load(path, &art));
  check_tiny(vkp_artifact_plan(art), 3);
  cJSON *meta = cJSON_Parse(vkp_artifact_metadata(art));
  cr_assert_not_null(meta);
  cr_assert_eq(item(meta, "format_version")->valuedouble, VKP_ARTIFACT_FORMAT_VERSION);
  cJSON *plan = cJSON_GetObjectItemCaseSensitive(meta, "plan");
  cr_assert_not_null(plan);
  check_plan_file_form(plan);
  // Stages name their graphs as entries of the artifact.
  const cJSON *stage = cJSON_GetArrayItem(item(plan, "stages"), 1);
  cr_assert_str_eq(item(stage, "graph")->valuestring, "stages/1/graph.json");
  cr_assert_eq(item(stage, "rank")->valuedouble, 3);
  // The same JSON as a plan file, whose stages name their own graph files.
  char *text;
  VKP_TEST_OK(vkp_plan_set_stage_file(p, 0, "front.json"));
  VKP_TEST_OK(vkp_plan_set_stage_file(p, 1, "back.json"));
  VKP_TEST_OK(vkp_plan_to_json(p, &text));
  cJSON *file_plan = cJSON_Parse(text);
  check_plan_file_form(file_plan);
  // Only the graph names differ between the two.
  cJSON *stages_a = cJSON_GetObjectItemCaseSensitive(plan, "stages");
  cJSON *stages_b = cJSON_GetObjectItemCaseSensitive(file_plan, "stages");
  for (int s = 0; s < 2; ++s) {
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(stages_a, s), "graph");
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(stages_b, s), "graph");
  }
  cr_assert(cJSON_Compare(plan, file_plan, 1), "artifact plan and plan file differ:\n%s\n%s",
            cJSON_Print(plan), text);
  cJSON_Delete(file_plan);
  vkp_free(text);
  cJSON_Delete(meta);
  vkp_artifact_destroy(art);
  vkp_registry_destroy(registry);
  vkp_plan_destroy(p);
}

// Writes the tiny plan's two stage graphs into `dir` and names them in it.
static void save_stage_files(vkp_plan_t *p, const char *dir) {
  const char *files[] = {"front.json", "back.json"};
  char path[600];
  for (int s = 0; s < 2; ++s) {
    snprintf(path, sizeof path, "%s/%s", dir, files[s]);
    VKP_TEST_OK(vkp_graph_save(p->stages[s].graph, path));
    VKP_TEST_OK(vkp_plan_set_stage_file(p, s, files[s]));
  }
}

Test(plan_json, plan_file_round_trip_keeps_ranks, .timeout = 30) {
  vkp_plan_t *p = tiny(2);
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s", scratch);
  save_stage_files(p, dir);
  snprintf(path, sizeof path, "%s/plan.json", dir);
  VKP_TEST_OK(vkp_plan_save(p, path));
  vkp_plan_t *back;
  VKP_TEST_OK(vkp_plan_load(path, NULL, &back));
  check_tiny(back, 2);
  cr_assert_str_eq(back->stages[1].graph_file, "back.json");
  vkp_plan_destroy(back);
  vkp_plan_destroy(p);
}

// tests/plan/data/artifact_format1.vkp was written by `vkpipe build` before
// the plan codec was shared (format 1: bindings as {"stage": <index>,
// "name"}), from a 3-node model (relu, neg, add) over two ref stages.
Test(plan_json, format_1_artifact_is_refused_with_its_version, .timeout = 30) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/plan/data/artifact_format1.vkp",
           vkp_test_source_dir());
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load(path, &art);
  cr_assert_not_null(st);
  cr_assert_null(art);
  const char *m = vkp_status_message(st);
  cr_assert(strstr(m, "artifact format version 1"), "%s", m);
  cr_assert(strstr(m, "reads version 2"), "%s", m);
  cr_assert(strstr(m, "rebuild it with 'vkpipe build'"), "%s", m);
  vkp_status_free(st);
}

// Rewrites artifact `from` into `to` with meta.json's plan stage 0 naming
// `nodes` of `source` instead of its graph entry (CRCs recomputed).
static void rewrite_stage0_as_nodes(const char *from, const char *to, const char *source) {
  vkp_archive_t *a;
  VKP_TEST_OK(vkp_archive_open(from, VKP_ARTIFACT_FORMAT_VERSION, &a));
  vkp_archive_writer_t *w;
  VKP_TEST_OK(vkp_archive_writer_create(&w));
  for (int32_t i = 0; i < vkp_archive_count(a); ++i) {
    const char *name = vkp_archive_name(a, i);
    if (strcmp(name, "meta.json") != 0) {
      VKP_TEST_OK(vkp_archive_writer_add(w, name, vkp_archive_data(a, i),
                                         vkp_archive_size(a, i)));
      continue;
    }
    cJSON *meta = cJSON_ParseWithLength(vkp_archive_data(a, i), vkp_archive_size(a, i));
    cJSON *plan = cJSON_GetObjectItemCaseSensitive(meta, "plan");
    cJSON *stage = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(plan, "stages"), 0);
    cJSON_DeleteItemFromObject(stage, "graph");
    const char *nodes[] = {"relu", "neg"};
    cJSON_AddItemToObject(stage, "nodes", cJSON_CreateStringArray(nodes, 2));
    cJSON_AddStringToObject(plan, "source", source);
    char *text = cJSON_PrintUnformatted(meta);
    VKP_TEST_OK(vkp_archive_writer_add(w, name, text, strlen(text)));
    cJSON_free(text);
    cJSON_Delete(meta);
  }
  VKP_TEST_OK(vkp_archive_writer_save(w, to, VKP_ARTIFACT_FORMAT_VERSION));
  vkp_archive_writer_destroy(w);
  vkp_archive_close(a);
}

// An artifact holds its graphs: a plan in it that names nodes of a model on
// disk is refused, and that model is never read.
Test(plan_json, artifact_stage_naming_nodes_is_refused, .timeout = 60) {
  vkp_plan_t *p = tiny(0);
  const char *ref[] = {"ref"};
  vkp_registry_t *registry;
  VKP_TEST_OK(vkp_registry_create_builtin(ref, 1, &registry));
  char path[512], bad[512], model[512];
  snprintf(path, sizeof path, "%s/tiny.vkp", scratch);
  snprintf(bad, sizeof bad, "%s/nodes.vkp", scratch);
  snprintf(model, sizeof model, "%s/front.json", scratch);
  VKP_TEST_OK(vkp_artifact_build(p, registry, NULL, path));
  VKP_TEST_OK(vkp_graph_save(p->stages[0].graph, model));
  rewrite_stage0_as_nodes(path, bad, model);
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load(bad, &art);
  cr_assert_not_null(st);
  cr_assert_null(art);
  const char *m = vkp_status_message(st);
  cr_assert(strstr(m, "stage 'front': give \"graph\""), "%s", m);
  vkp_status_free(st);
  vkp_registry_destroy(registry);
  vkp_plan_destroy(p);
}

// "replicas" (copies of a stage side by side) survives a plan file, is
// written only when more than one, and a bad count or one next to a rank
// or a cpu_affinity is refused naming the stage.
Test(plan_json, replicas_round_trip_and_bad_counts, .timeout = 30) {
  vkp_plan_t *p = tiny(0);
  VKP_TEST_OK(vkp_plan_set_stage_cpu_affinity(p, 0, 0, NULL));
  VKP_TEST_OK(vkp_plan_set_stage_replicas(p, 0, 3));
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s", scratch);
  save_stage_files(p, dir);
  char *text;
  VKP_TEST_OK(vkp_plan_to_json(p, &text));
  cJSON *j = cJSON_Parse(text);
  const cJSON *stages = item(j, "stages");
  cr_assert_eq(item(cJSON_GetArrayItem(stages, 0), "replicas")->valuedouble, 3);
  cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(stages, 1), "replicas"));
  snprintf(path, sizeof path, "%s/plan.json", dir);
  VKP_TEST_OK(vkp_plan_save(p, path));
  vkp_plan_t *back;
  VKP_TEST_OK(vkp_plan_load(path, NULL, &back));
  cr_assert_eq(back->stages[0].replicas, 3);
  cr_assert_leq(back->stages[1].replicas, 1);
  vkp_plan_destroy(back);
  // Bad counts in the file.
  const char *bad[] = {"0", "65", "1.5", "\"two\""};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    cJSON *copy = cJSON_Duplicate(j, 1);
    cJSON *st0 = cJSON_GetArrayItem(item(copy, "stages"), 0);
    cJSON_ReplaceItemInObjectCaseSensitive(st0, "replicas", cJSON_Parse(bad[k]));
    char *bad_text = cJSON_PrintUnformatted(copy);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(bad_text, f);
    fclose(f);
    vkp_status_t st = vkp_plan_load(path, NULL, &back);
    cr_assert_not_null(st, "replicas %s was taken", bad[k]);
    const char *m = vkp_status_message(st);
    cr_assert(strstr(m, "stage 'front'") && strstr(m, "\"replicas\" must be an integer 1..64"),
              "%s", m);
    vkp_status_free(st);
    cJSON_free(bad_text);
    cJSON_Delete(copy);
  }
  // Copies stay in the process that creates the pipeline, unpinned.
  VKP_TEST_OK(vkp_plan_set_stage_rank(p, 0, 1));
  vkp_status_t st = vkp_plan_validate(p);
  cr_assert(st && strstr(vkp_status_message(st), "replicas on another MPI rank"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  VKP_TEST_OK(vkp_plan_set_stage_rank(p, 0, 0));
  const int32_t cpus[] = {0};
  VKP_TEST_OK(vkp_plan_set_stage_cpu_affinity(p, 0, 1, cpus));
  st = vkp_plan_validate(p);
  cr_assert(st && strstr(vkp_status_message(st), "replicas and cpu_affinity"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  cJSON_Delete(j);
  vkp_free(text);
  vkp_plan_destroy(p);
}
