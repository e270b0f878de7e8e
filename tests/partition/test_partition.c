// SPDX-License-Identifier: Apache-2.0
// partition/partition.c: the plan a partition makes, its JSON round trip, the
// table and the Graphviz picture.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/test_graph.h"
#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"

static vkp_partition_t *mixed_partition(const vkp_graph_t *g, vkp_registry_t **reg,
                                        vkp_profile_t **prof, int32_t stages) {
  VKP_TEST_OK(vkp_registry_create(reg));
  fx_add_fake(*reg, "fa", FX_OP(VKP_OP_GLOBAL_AVG_POOL));
  fx_add_fake(*reg, "fb", FX_NONE);
  *prof = fx_profile_two_devices(2);
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = stages};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, *reg, *prof, &opt, &p));
  return p;
}

Test(partition, plan_connects_stages, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(4, 8, 8);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *part = mixed_partition(g, &reg, &prof, 4);
  cr_assert_eq(part->n_stages, 4);
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, "net", &plan));
  cr_assert_eq(plan->n_stages, 4);
  cr_assert_eq(plan->n_inputs, 1);
  cr_assert_str_eq(plan->inputs[0], "x");
  cr_assert_eq(plan->n_outputs, 1);
  cr_assert_str_eq(plan->outputs[0], "logits");
  int32_t total = 0;
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    total += plan->stages[s].graph->n_nodes;
    cr_assert_str_eq(plan->stages[s].target,
                     vkp_partition_target_name(part, part->stages[s].target));
    cr_assert_float_eq(plan->stages[s].estimated_ms, part->stages[s].seconds * 1e3, 1e-12);
  }
  cr_assert_eq(total, g->n_nodes);
  // The pool went to fb; everything before it on fa, with bindings forward.
  int32_t pool = vkp_graph_find_node(g, "pool");
  cr_assert_str_eq(vkp_partition_target_name(part, part->node_target[pool]), "fb");
  for (int32_t b = 0; b < plan->n_bindings; ++b)
    if (plan->bindings[b].src_stage >= 0 && plan->bindings[b].dst_stage >= 0)
      cr_assert(plan->bindings[b].src_stage < plan->bindings[b].dst_stage);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

static void assert_same_plan(const vkp_plan_t *a, const vkp_plan_t *b) {
  cr_assert_str_eq(a->name, b->name);
  cr_assert_eq(a->n_stages, b->n_stages);
  for (int32_t s = 0; s < a->n_stages; ++s) {
    const vkp_plan_stage_t *x = &a->stages[s], *y = &b->stages[s];
    cr_assert_str_eq(x->name, y->name);
    cr_assert_str_eq(x->target, y->target);
    cr_assert_float_eq(x->estimated_ms, y->estimated_ms, 1e-9 * (1 + x->estimated_ms));
    cr_assert_eq(x->graph->n_nodes, y->graph->n_nodes);
    for (int32_t i = 0; i < x->graph->n_nodes; ++i)
      cr_assert_str_eq(x->graph->nodes[i].name, y->graph->nodes[i].name);
    cr_assert_eq(x->graph->n_inputs, y->graph->n_inputs);
    cr_assert_eq(x->graph->n_outputs, y->graph->n_outputs);
  }
  cr_assert_eq(a->n_bindings, b->n_bindings);
  for (int32_t i = 0; i < a->n_bindings; ++i) {
    cr_assert_eq(a->bindings[i].src_stage, b->bindings[i].src_stage);
    cr_assert_eq(a->bindings[i].dst_stage, b->bindings[i].dst_stage);
    cr_assert_str_eq(a->bindings[i].src_name, b->bindings[i].src_name);
    cr_assert_str_eq(a->bindings[i].dst_name, b->bindings[i].dst_name);
  }
  cr_assert_eq(a->n_inputs, b->n_inputs);
  cr_assert_eq(a->n_outputs, b->n_outputs);
}

Test(partition, plan_json_round_trip, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = fx_mobilenet_like(3 + (int32_t)vkp_test_rng_below(&rng, 3), 8, 8);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *part = mixed_partition(g, &reg, &prof, 2 + (int32_t)vkp_test_rng_below(&rng, 3));
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, "mnet", &plan));
  // Without a source, node-list stages cannot be written.
  char *json = NULL;
  vkp_status_t st = vkp_plan_to_json(plan, &json);
  cr_assert(vkp_status_is(st, VKP_STATUS_FAILED_PRECONDITION));
  vkp_status_free(st);
  VKP_TEST_OK(vkp_plan_set_source(plan, "model.json"));
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  cr_assert(strstr(json, "\"source\":\t\"model.json\""), "%s", json);
  vkp_plan_t *back;
  VKP_TEST_OK(vkp_plan_from_json(json, strlen(json), NULL, g, &back));
  assert_same_plan(plan, back);
  char *again;
  VKP_TEST_OK(vkp_plan_to_json(back, &again));
  cr_assert_str_eq(json, again);
  vkp_free(again);
  vkp_plan_destroy(back);
  // Through files: the model saved beside the plan and found by "source".
  char dir[512], model_path[600], plan_path[600], bin_path[600];
  snprintf(dir, sizeof dir, "%s", vkp_test_binary_dir());
  snprintf(model_path, sizeof model_path, "%s/rt_model_%d.json", dir, (int)getpid());
  snprintf(bin_path, sizeof bin_path, "%s/rt_model_%d.bin", dir, (int)getpid());
  snprintf(plan_path, sizeof plan_path, "%s/rt_plan_%d.json", dir, (int)getpid());
  VKP_TEST_OK(vkp_graph_save(g, model_path));
  VKP_TEST_OK(vkp_plan_set_source(plan, strrchr(model_path, '/') + 1));
  VKP_TEST_OK(vkp_plan_save(plan, plan_path));
  VKP_TEST_OK(vkp_plan_load(plan_path, NULL, &back));
  assert_same_plan(plan, back);
  vkp_plan_destroy(back);
  remove(model_path);
  remove(bin_path);
  remove(plan_path);
  vkp_free(json);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(partition, table_and_dot, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(2, 8, 8);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *part = mixed_partition(g, &reg, &prof, 3);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  cr_assert(f);
  vkp_partition_print(part, f);
  fclose(f);
  cr_assert(strstr(text, "stage0"), "%s", text);
  cr_assert(strstr(text, "est. ms"));
  cr_assert(strstr(text, "bottleneck:"));
  cr_assert(strstr(text, "pool (global_avg_pool): on fb instead of fa: fa does "
                         "not do global_avg_pool"),
            "%s", text);
  free(text);
  char *dot;
  VKP_TEST_OK(vkp_partition_to_dot(part, &dot));
  cr_assert(strncmp(dot, "digraph \"resnet_like\" {", 23) == 0, "%s", dot);
  cr_assert(strstr(dot, "subgraph cluster_0"));
  cr_assert(strstr(dot, "subgraph cluster_2"));
  cr_assert(strstr(dot, "label=\"stage1: "));
  // Edges crossing stages carry bytes; nodes are coloured by target.
  cr_assert(strstr(dot, "color=red"));
  cr_assert(strstr(dot, "KiB\""), "%s", dot);
  cr_assert(strstr(dot, "fillcolor=\"#a6cee3\""));
  cr_assert(strstr(dot, "fillcolor=\"#b2df8a\""));
  vkp_free(dot);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(partition, with_the_reference_target, .timeout = 30) {
  // Whatever built-in targets exist, a plan comes out and validates.
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  if (vkp_registry_count(reg) == 0) {
    vkp_registry_destroy(reg);
    return;
  }
  vkp_graph_t *g = fx_resnet_like(2, 4, 4);
  vkp_partition_options_t opt = {.policy = "auto", .stages = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, NULL, &plan));
  cr_assert(plan->n_stages >= 1);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(partition, dead_nodes_are_left_out, .timeout = 30) {
  // x -> relu -> y (output); x -> exp -> z -> neg -> w (never read).
  vkp_graph_t *g = g_new("dead");
  int64_t s[] = {1, 8};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  g_node(g, "live", VKP_OP_RELU, "x", "y", 0, NULL);
  g_node(g, "dead1", VKP_OP_EXP, "x", "z", 0, NULL);
  g_node(g, "dead2", VKP_OP_NEG, "z", "w", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_OP(VKP_OP_EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = 3,
                                 .keep_islands = true};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, NULL, &plan));
  int32_t total = 0;
  for (int32_t i = 0; i < plan->n_stages; ++i) {
    total += plan->stages[i].graph->n_nodes;
    cr_assert(vkp_graph_find_node(plan->stages[i].graph, "dead1") < 0);
    char want[16];
    snprintf(want, sizeof want, "stage%d", (int)i);
    cr_assert_str_eq(plan->stages[i].name, want);
  }
  cr_assert_eq(total, 1);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(partition, plan_and_json_oom, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(1, 4, 4);
  vkp_registry_t *reg;
  vkp_profile_t *prof;
  vkp_partition_t *part = mixed_partition(g, &reg, &prof, 3);
  for (int64_t fail = 1; fail < 100000; ++fail) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail);
    vkp_plan_t *plan = NULL, *back = NULL;
    char *json = NULL, *dot = NULL;
    vkp_status_t st = vkp_partition_to_plan(part, "oom", &plan);
    if (!st) st = vkp_plan_set_source(plan, "model.json");
    if (!st) st = vkp_plan_to_json(plan, &json);
    if (!st) st = vkp_plan_from_json(json, strlen(json), NULL, g, &back);
    if (!st) st = vkp_partition_to_dot(part, &dot);
    bool failed = counter.failed;
    bool oom = vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY);
    vkp_status_free(st);
    vkp_plan_destroy(plan);
    vkp_plan_destroy(back);
    vkp_free(json);
    vkp_free(dot);
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(counter.live, 0, "leak at fail_at %lld", (long long)fail);
    if (!failed) break;
    cr_assert(oom, "fail_at %lld: not reported as out of memory", (long long)fail);
  }
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
