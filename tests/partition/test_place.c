// SPDX-License-Identifier: Apache-2.0
// partition/place.c: policies, fallbacks, auto placement, manual overrides.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"
#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"

#define BIT(op) FX_OP(VKP_OP_##op)

static vkp_graph_t *chain_with_exp(void) {
  vkp_graph_t *g = g_new("exp_chain");
  int64_t s[] = {1, 32};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  g_node(g, "first", VKP_OP_RELU, "x", "a", 0, NULL);
  g_node(g, "middle", VKP_OP_EXP, "a", "b", 0, NULL);
  g_node(g, "last", VKP_OP_RELU, "b", "c", 0, NULL);
  g_out(g, "c");
  g_validate(g);
  return g;
}

static const char *placed(const vkp_partition_t *p, const char *node) {
  int32_t i = vkp_graph_find_node(p->graph, node);
  cr_assert(i >= 0);
  return vkp_partition_target_name(p, p->node_target[i]);
}

static const char *reason(const vkp_partition_t *p, const char *node) {
  int32_t i = vkp_graph_find_node(p->graph, node);
  return p->node_reason[i] ? p->node_reason[i] : "";
}

Test(place, policy_falls_back_to_cpu, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", BIT(EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  fx_add_fake(reg, "cpu", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0, .keep_islands = true};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &p));
  cr_assert_str_eq(placed(p, "first"), "fa");
  cr_assert_str_eq(placed(p, "middle"), "cpu");
  cr_assert_str_eq(placed(p, "last"), "fa");
  cr_assert(strstr(reason(p, "middle"), "fell back to 'cpu'"), "%s", reason(p, "middle"));
  cr_assert(strstr(reason(p, "middle"), "fa does not do exp"));
  cr_assert_str_eq(reason(p, "first"), "");
  vkp_partition_destroy(p);
  // A fallback named by the caller.
  opt.fallback = "fb";
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &p));
  cr_assert_str_eq(placed(p, "middle"), "fb");
  vkp_partition_destroy(p);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, fallback_missing_uses_first_capable, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", BIT(EXP));
  fx_add_fake(reg, "fc", BIT(EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .keep_islands = true};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &p));
  cr_assert_str_eq(placed(p, "middle"), "fb");
  cr_assert(strstr(reason(p, "middle"), "no registered target is the default fallback"),
            "%s", reason(p, "middle"));
  cr_assert(strstr(reason(p, "middle"), "first registered target"));
  vkp_partition_destroy(p);
  // A fallback named by the caller that is not registered.
  opt.fallback = "nope";
  cr_assert_not_null(vkp_registry_find(reg, "fb"));
  vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_NOT_FOUND, "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, nobody_can_run_it, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", BIT(EXP));
  vkp_partition_t *p = NULL;
  vkp_partition_options_t opt = {.policy = "fa"};
  vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "'middle'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  opt.policy = "auto";
  st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  vkp_status_free(st);
  cr_assert_null(p);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, unknown_policy_and_empty_registry, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg = fx_registry_ab();
  vkp_partition_options_t opt = {.policy = "tpu"};
  vkp_partition_t *p = NULL;
  vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_NOT_FOUND));
  cr_assert(strstr(vkp_status_message(st), "fa, fb"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  VKP_TEST_OK(vkp_registry_create(&reg));
  st = vkp_partition_create(g, reg, NULL, NULL, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNAVAILABLE));
  vkp_status_free(st);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, auto_picks_cheapest_and_keeps_data_together, .timeout = 30) {
  // Big convs are cheaper on fa (fast compute); a small relu alone would be
  // cheaper on fb (cheap launch), but moving it costs two transfers.
  vkp_graph_t *g = fx_resnet_like(2, 32, 16);
  vkp_profile_t *prof = fx_profile_two_devices(1);
  vkp_registry_t *reg = fx_registry_ab();
  vkp_partition_options_t opt = {.policy = "auto", .stages = 0};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &p));
  cr_assert_str_eq(placed(p, "b0.conv1"), "fa");
  cr_assert_str_eq(reason(p, "b0.conv1"), "");
  cr_assert_str_eq(placed(p, "b0.relu1"), "fa");
  int32_t r = vkp_graph_find_node(g, "b0.relu1");
  cr_assert_str_eq(vkp_partition_target_name(p, p->node_first_choice[r]), "fb");
  cr_assert(strstr(reason(p, "b0.relu1"), "transfers"), "%s", reason(p, "b0.relu1"));
  vkp_partition_destroy(p);
  // A chain of tiny relus: everything on the cheap-launch target.
  vkp_graph_t *c = fx_chain(6, 8);
  VKP_TEST_OK(vkp_partition_create(c, reg, prof, &opt, &p));
  for (int32_t i = 0; i < c->n_nodes; ++i) {
    cr_assert_str_eq(vkp_partition_target_name(p, p->node_target[i]), "fb");
    cr_assert_null(p->node_reason[i]);
  }
  cr_assert_eq(p->n_regions, 1);
  vkp_partition_destroy(p);
  vkp_graph_destroy(c);
  vkp_registry_destroy(reg);
  vkp_profile_destroy(prof);
  vkp_graph_destroy(g);
}

Test(place, manual_overrides, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(2, 4, 4);
  VKP_TEST_OK(vkp_graph_set_node_target(g, vkp_graph_find_node(g, "fc"), "fb"));
  vkp_registry_t *reg = fx_registry_ab();
  char text[] = "b0.*=fb";
  vkp_assign_t assign;
  VKP_TEST_OK(vkp_assign_parse(text, &assign));
  cr_assert_str_eq(assign.pattern, "b0.*");
  cr_assert_str_eq(assign.target, "fb");
  vkp_partition_options_t opt = {.policy = "fa", .n_assigns = 1, .assigns = &assign};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &p));
  cr_assert_str_eq(placed(p, "b0.conv1"), "fb");
  cr_assert_str_eq(placed(p, "b0.add"), "fb");
  cr_assert(strstr(reason(p, "b0.add"), "--assign 'b0.*=fb'"), "%s", reason(p, "b0.add"));
  cr_assert_str_eq(placed(p, "b1.conv1"), "fa");
  cr_assert_str_eq(placed(p, "fc"), "fb");
  cr_assert(strstr(reason(p, "fc"), "\"target\" in the graph"), "%s", reason(p, "fc"));
  // Manual placements are never absorbed.
  for (int32_t s = 0; s < p->n_stages; ++s)
    cr_assert(p->stages[s].n_nodes > 0);
  vkp_partition_destroy(p);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, manual_errors, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", BIT(EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  vkp_assign_t bad_target = {.pattern = "*", .target = "npu"};
  vkp_partition_options_t opt = {.policy = "fb", .n_assigns = 1, .assigns = &bad_target};
  vkp_partition_t *p = NULL;
  vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_NOT_FOUND));
  cr_assert(strstr(vkp_status_message(st), "--assign '*=npu'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_assign_t cannot = {.pattern = "mid*", .target = "fa"};
  opt.assigns = &cannot;
  st = vkp_partition_create(g, reg, NULL, &opt, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "'middle'"), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "cannot run"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  char no_eq[] = "middle";
  vkp_assign_t a;
  st = vkp_assign_parse(no_eq, &a);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  cr_assert_null(p);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(place, oom_is_reported_without_leaks, .timeout = 30) {
  vkp_graph_t *g = fx_resnet_like(1, 4, 4);
  vkp_registry_t *reg = fx_registry_ab();
  vkp_partition_options_t opt = {.policy = "auto", .stages = 2};
  for (int64_t fail = 1; fail < 100000; ++fail) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail);
    vkp_partition_t *p = NULL;
    vkp_status_t st = vkp_partition_create(g, reg, NULL, &opt, &p);
    bool failed = counter.failed;
    bool oom = vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY);
    vkp_status_free(st);
    vkp_partition_destroy(p);
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(counter.live, 0, "leak at fail_at %lld", (long long)fail);
    if (!failed) break;
    cr_assert(oom, "fail_at %lld: not reported as out of memory", (long long)fail);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// A node its policy target cannot run falls back visibly: in the partition
// table, in the plan JSON (per stage, and read back), and in the Graphviz
// picture, each with the refusing target and its reason.
Test(place, fallback_is_shown_in_table_plan_and_picture, .timeout = 30) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", BIT(EXP));
  fx_add_fake(reg, "cpu", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0, .keep_islands = true};
  vkp_partition_t *p;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &p));
  int32_t mid = vkp_graph_find_node(g, "middle");
  cr_assert_str_eq(vkp_partition_target_name(p, p->node_fallback_from[mid]), "fa");
  cr_assert_str_eq(p->node_refusal[mid], "fa does not do exp");
  cr_assert_eq(p->node_fallback_from[vkp_graph_find_node(g, "first")], -1);

  char *table = NULL;
  size_t table_size = 0;
  FILE *f = open_memstream(&table, &table_size);
  cr_assert_not_null(f);
  vkp_partition_print(p, f);
  fclose(f);
  cr_assert(strstr(table, "fell back (1 node"), "%s", table);
  cr_assert(strstr(table, "middle (exp): on cpu instead of fa: fa does not do exp"),
            "%s", table);
  free(table);

  char *dot = NULL;
  VKP_TEST_OK(vkp_partition_to_dot(p, &dot));
  cr_assert(strstr(dot, "fell back from fa: fa does not do exp"), "%s", dot);
  cr_assert(strstr(dot, "dashed"), "%s", dot);
  vkp_free(dot);

  vkp_plan_t *plan = NULL;
  VKP_TEST_OK(vkp_partition_to_plan(p, "fb_plan", &plan));
  int32_t found = 0;
  for (int32_t s = 0; s < plan->n_stages; ++s)
    for (int32_t k = 0; k < plan->stages[s].n_fallbacks; ++k) {
      const vkp_plan_fallback_t *fb = &plan->stages[s].fallbacks[k];
      cr_assert_str_eq(fb->node, "middle");
      cr_assert_str_eq(fb->instead_of, "fa");
      cr_assert_str_eq(fb->reason, "fa does not do exp");
      cr_assert_str_eq(plan->stages[s].target, "cpu");
      ++found;
    }
  cr_assert_eq(found, 1);
  VKP_TEST_OK(vkp_plan_set_source(plan, "model.json"));
  char *json = NULL;
  VKP_TEST_OK(vkp_plan_to_json(plan, &json));
  cr_assert(strstr(json, "\"fallbacks\"") && strstr(json, "fa does not do exp"), "%s",
            json);
  vkp_plan_t *back = NULL;
  VKP_TEST_OK(vkp_plan_from_json(json, strlen(json), NULL, g, &back));
  found = 0;
  for (int32_t s = 0; s < back->n_stages; ++s) found += back->stages[s].n_fallbacks;
  cr_assert_eq(found, 1);
  vkp_plan_destroy(back);
  vkp_free(json);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(p);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
