// SPDX-License-Identifier: Apache-2.0
// partition/stages.c: the K-stage cut against brute force, balance on larger
// graphs, shared devices, island absorption, cores and threads per stage.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"
#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"

// Enumerates every cut of the units into `k` stages that keeps region
// boundaries as stage boundaries; returns the smallest bottleneck.
static void brute(const vkp_partition_t *part, int32_t k, int32_t *starts,
                  int32_t placed, int32_t next_unit, double *best) {
  if (placed == k) {
    double b;
    vkp_status_t st = vkp_partition_evaluate(part, k, starts, NULL, &b);
    if (!st && b < *best) *best = b;
    vkp_status_free(st);
    return;
  }
  for (int32_t u = next_unit; u < part->n_units; ++u) {
    starts[placed] = u;
    brute(part, k, starts, placed + 1, u + 1, best);
    // A region boundary skipped over can never be cut later.
    int32_t a = part->order[part->unit_start[u - 1]];
    int32_t b = part->order[part->unit_start[u]];
    if (part->node_region[a] != part->node_region[b]) break;
  }
}

static void check_against_brute_force(vkp_graph_t *g, vkp_registry_t *reg,
                                      vkp_profile_t *prof) {
  int32_t tested = 0;
  for (int32_t k = 1; k <= 12; ++k) {
    vkp_partition_options_t opt = {.policy = "auto", .stages = k};
    vkp_partition_t *part;
    VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
    if (part->n_stages != k) {  // fewer regions than k impossible: skip
      vkp_partition_destroy(part);
      continue;
    }
    int32_t starts[16] = {0};
    double best = INFINITY;
    brute(part, k, starts, 1, 1, &best);
    cr_assert(isfinite(best));
    cr_assert(part->bottleneck_s <= best * 1.05,
              "k=%d: cut %g s, brute force %g s", (int)k, part->bottleneck_s, best);
    cr_assert(part->bottleneck_s >= best * (1 - 1e-9));
    double direct;
    int32_t mine[16];
    for (int32_t s = 0; s < k; ++s) {
      // Stage s starts at the unit holding its first node in the order.
      int32_t first = part->stages[s].nodes[0], pos = 0;
      for (int32_t q = 0; q < part->graph->n_nodes; ++q)
        if (part->order[q] == first) pos = q;
      for (int32_t q = 0; q < part->graph->n_nodes; ++q)
        if (part->node_stage[part->order[q]] == s) {
          pos = q;
          break;
        }
      int32_t u = 0;
      while (u + 1 < part->n_units && part->unit_start[u + 1] <= pos) ++u;
      mine[s] = u;
    }
    VKP_TEST_OK(vkp_partition_evaluate(part, k, mine, NULL, &direct));
    cr_assert_float_eq(direct, part->bottleneck_s, 1e-12);
    ++tested;
    vkp_partition_destroy(part);
  }
  cr_assert(tested >= 2, "only %d stage counts were possible", (int)tested);
}

Test(stages, optimal_on_small_resnet_like, .timeout = 60) {
  vkp_graph_t *g = fx_resnet_like(2, 8, 8);
  for (int32_t conc = 1; conc <= 2; ++conc) {
    vkp_profile_t *prof = fx_profile_two_devices(conc);
    vkp_registry_t *reg = fx_registry_ab();
    check_against_brute_force(g, reg, prof);
    vkp_registry_destroy(reg);
    // Mixed placement: convs only on fa, relus only on fb.
    VKP_TEST_OK(vkp_registry_create(&reg));
    fx_add_fake(reg, "fa", FX_OP(VKP_OP_RELU));
    fx_add_fake(reg, "fb", FX_OP(VKP_OP_CONV2D));
    check_against_brute_force(g, reg, prof);
    vkp_registry_destroy(reg);
    vkp_profile_destroy(prof);
  }
  vkp_graph_destroy(g);
}

Test(stages, optimal_on_small_mobilenet_like, .timeout = 60) {
  vkp_graph_t *g = fx_mobilenet_like(2, 8, 8);
  for (int32_t conc = 1; conc <= 2; ++conc) {
    vkp_profile_t *prof = fx_profile_two_devices(conc);
    vkp_registry_t *reg = fx_registry_ab();
    check_against_brute_force(g, reg, prof);
    vkp_registry_destroy(reg);
    VKP_TEST_OK(vkp_registry_create(&reg));
    fx_add_fake(reg, "fa", FX_OP(VKP_OP_CLIP));
    fx_add_fake(reg, "fb", FX_NONE);
    check_against_brute_force(g, reg, prof);
    vkp_registry_destroy(reg);
    vkp_profile_destroy(prof);
  }
  vkp_graph_destroy(g);
}

// With one policy target the graph can always be cut evenly, up to a node.
static void check_balanced(vkp_graph_t *g, const char *policy, int32_t k) {
  vkp_profile_t *prof = fx_profile_two_devices(k);
  vkp_registry_t *reg = fx_registry_ab();
  vkp_partition_options_t opt = {.policy = policy, .stages = k};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->n_stages, k);
  double lo = INFINITY, hi = 0;
  for (int32_t s = 0; s < k; ++s) {
    lo = fmin(lo, part->stages[s].seconds);
    hi = fmax(hi, part->stages[s].seconds);
  }
  cr_assert(hi <= lo * 1.15, "%s, %d stages: stage estimates %g .. %g s",
            g->name, (int)k, lo, hi);
  cr_assert_float_eq(part->bottleneck_s, hi, 1e-12);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_profile_destroy(prof);
}

Test(stages, larger_graphs_are_balanced, .timeout = 60) {
  vkp_graph_t *r = fx_resnet_like(16, 16, 16);
  vkp_graph_t *m = fx_mobilenet_like(16, 16, 16);
  for (int32_t k = 2; k <= 4; ++k) {
    check_balanced(r, "fa", k);
    check_balanced(m, "fa", k);
    check_balanced(r, "fb", k);
    check_balanced(m, "fb", k);
  }
  vkp_graph_destroy(r);
  vkp_graph_destroy(m);
}

Test(stages, shared_device_adds_loads, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 4096);
  vkp_profile_t *prof = fx_profile_two_devices(1);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 3};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->n_stages, 3);
  double sum = 0;
  for (int32_t s = 0; s < 3; ++s) sum += part->stages[s].seconds;
  // Three stages on one host core run one after another, time-sharing it.
  cr_assert_float_eq(part->bottleneck_s, sum * VKP_PARTITION_TIME_SHARING, 1e-12);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_profile_destroy(prof);
  vkp_graph_destroy(g);
}

static vkp_graph_t *chain_with_exp(void) {
  vkp_graph_t *g = g_new("islands");
  int64_t s[] = {1, 64};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  const char *names[] = {"a", "b", "c", "d", "e"};
  const char *prev = "x";
  for (int i = 0; i < 5; ++i) {
    const char *in[] = {prev}, *out[] = {names[i]};
    char node[16];
    snprintf(node, sizeof node, "n_%s", names[i]);
    VKP_TEST_OK(vkp_graph_add_node(g, node, i == 2 ? VKP_OP_EXP : VKP_OP_RELU, 1, in,
                                   1, out, 0, NULL, NULL));
    prev = names[i];
  }
  g_out(g, "e");
  g_validate(g);
  return g;
}

Test(stages, islands_absorbed_to_fit_k, .timeout = 60) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_OP(VKP_OP_EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = 1};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  cr_assert_eq(part->n_regions, 1);
  cr_assert_eq(part->n_stages, 1);
  cr_assert_str_eq(vkp_partition_target_name(part, part->stages[0].target), "fb");
  int32_t a = vkp_graph_find_node(g, "n_a");
  cr_assert(part->node_reason[a] && strstr(part->node_reason[a], "absorbed"));
  int32_t c = vkp_graph_find_node(g, "n_c");
  cr_assert(part->node_reason[c] && strstr(part->node_reason[c], "fell back"));
  vkp_partition_destroy(part);
  // Keeping islands: three regions, so three stages and a note.
  opt.keep_islands = true;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  cr_assert_eq(part->n_regions, 3);
  cr_assert_eq(part->n_stages, 3);
  cr_assert(part->notes && strstr(part->notes, "at least 3"));
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(stages, auto_stage_count, .timeout = 60) {
  vkp_graph_t *g = fx_resnet_like(6, 8, 8);
  vkp_profile_t *prof = fx_profile_two_devices(8);
  vkp_registry_t *reg = fx_registry_ab();
  vkp_partition_options_t opt = {.policy = "auto", .stages = 0, .max_auto_stages = 4};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert(part->n_stages >= 1 && part->n_stages <= 4);
  // The pick is within 5% of the best over 1..4 stages.
  for (int32_t k = part->n_regions; k <= 4; ++k) {
    vkp_partition_options_t fixed = {.policy = "auto", .stages = k};
    vkp_partition_t *other;
    VKP_TEST_OK(vkp_partition_create(g, reg, prof, &fixed, &other));
    cr_assert(part->bottleneck_s <= other->bottleneck_s * 1.05 + 1e-15);
    vkp_partition_destroy(other);
  }
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_profile_destroy(prof);
  vkp_graph_destroy(g);
}

Test(stages, auto_count_keeps_a_policy_targets_regions, .timeout = 60) {
  vkp_graph_t *g = chain_with_exp();
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_OP(VKP_OP_EXP));
  fx_add_fake(reg, "fb", FX_NONE);
  // Only the unsupported node leaves "fa", even though one stage on "fb"
  // would be cheaper: a policy target is what the user asked for.
  vkp_partition_options_t opt = {.policy = "fa", .fallback = "fb", .stages = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, NULL, &opt, &part));
  cr_assert_eq(part->n_regions, 3);
  cr_assert(part->n_stages >= 3);
  for (int32_t i = 0; i < g->n_nodes; ++i)
    cr_assert(!part->node_reason[i] || !strstr(part->node_reason[i], "absorbed"),
              "%s", part->node_reason[i]);
  vkp_partition_destroy(part);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// ---------------------------------------------------------------------------
// Cores and threads (partition.h, step 4): a fixed profile, so the choices
// are deterministic.

// One host device "d0" with `cores` cores and target "fa" on it, no launch
// cost (so threads speed up whole nodes), thread efficiencies `eff`.
static vkp_profile_t *host_profile(int32_t cores, double eff) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"version\": 1, \"host_device\": \"d0\","
           " \"targets\": {\"fa\": {\"device\": \"d0\", \"gflops\": 50, \"gbps\": 20,"
           "  \"launch_us\": 0, \"thread_compute_eff\": %g, \"thread_memory_eff\": %g}},"
           " \"devices\": {\"d0\": {\"concurrency\": %d}}}",
           eff, eff, (int)cores);
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &p));
  return p;
}

static vkp_registry_t *registry_fa(void) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  return reg;
}

Test(stages, two_cores_balance_two_stages, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  for (int32_t cores = 1; cores <= 2; ++cores) {
    vkp_profile_t *prof = host_profile(cores, 0.0);
    vkp_partition_options_t opt = {.policy = "fa", .stages = 2, .threads = 1};
    vkp_partition_t *part;
    VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
    cr_assert_eq(part->n_stages, 2);
    double a = part->stages[0].seconds, b = part->stages[1].seconds;
    // Twelve equal nodes: six and six (the second stage also sends the
    // output, so only the compute is equal).
    cr_assert_eq(part->stages[0].n_nodes, 6);
    cr_assert_float_eq(part->stages[0].compute_s, part->stages[1].compute_s,
                       1e-9 * (a + b));
    cr_assert_eq(part->stages[0].threads, 1);
    if (cores == 1)  // one core runs both stages in turn, time-sharing it
      cr_assert_float_eq(part->bottleneck_s, (a + b) * VKP_PARTITION_TIME_SHARING, 1e-12);
    else  // two cores run them side by side
      cr_assert_float_eq(part->bottleneck_s, a > b ? a : b, 1e-12);
    vkp_partition_destroy(part);
    vkp_profile_destroy(prof);
  }
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(stages, a_stage_occupies_its_threads, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 0.5);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 2, .threads = 2};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->threads, 2);
  cr_assert_eq(part->stages[0].threads, 2);
  cr_assert_eq(part->stages[1].threads, 2);
  // 1 + (2 - 1) * 0.5 = 1.5 times faster per node...
  vkp_partition_options_t one = {.policy = "fa", .stages = 2, .threads = 1};
  vkp_partition_t *single;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &one, &single));
  cr_assert_float_eq(part->stages[0].compute_s * 1.5, single->stages[0].compute_s, 1e-12);
  // ...but two stages of two threads need four cores: on two, the load is
  // 2 x (a + b) / 2, time-shared.
  double sum = part->stages[0].seconds + part->stages[1].seconds;
  cr_assert_float_eq(part->bottleneck_s, sum * VKP_PARTITION_TIME_SHARING, 1e-12);
  // The plan carries the threads to the stages.
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, "chain", &plan));
  cr_assert_eq(plan->stages[0].threads, 2);
  cr_assert_eq(plan->stages[1].threads, 2);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(single);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(stages, auto_threads_prefer_stages_when_threads_scale_poorly, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 0.5);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0, .threads = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  // Two stages of one thread: t / 2 per frame; one stage of two threads at
  // 1.5x: t / 1.5.
  cr_assert_eq(part->threads, 1);
  cr_assert_eq(part->n_stages, 2);
  cr_assert(part->notes && strstr(part->notes, "1 thread  x 2 stages"), "%s", part->notes);
  cr_assert(strstr(part->notes, "2 threads x 1 stage"), "%s", part->notes);
  cr_assert(strstr(part->notes, "<- chosen: best throughput"), "%s", part->notes);
  // Chosen for its throughput: no other configuration for refine to try.
  cr_assert_eq(part->alt_threads, 0);
  cr_assert_eq(part->alt_replicas, 0);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(stages, auto_threads_prefer_threads_when_they_scale_well, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 1.0);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0, .threads = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  // Same throughput either way (t / 2); one stage of two threads halves the
  // latency as well.
  cr_assert_eq(part->threads, 2);
  cr_assert_eq(part->n_stages, 1);
  cr_assert_float_eq(part->latency_s, part->bottleneck_s, 1e-12);
  cr_assert(part->notes && strstr(part->notes, "lower latency"), "%s", part->notes);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Two threads at 1.95x against two one-thread stages at 2x: within 5%, so
// the latency rule takes the one stage, and names the faster configuration
// for a refinement to measure; with the threads fixed there is no choice.
Test(stages, latency_rule_names_the_faster_configuration, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 0.95);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0, .threads = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->threads, 2);
  cr_assert_eq(part->n_stages, 1);
  cr_assert(part->notes && strstr(part->notes, "lower latency"), "%s", part->notes);
  cr_assert_eq(part->alt_threads, 1);
  cr_assert_eq(part->alt_replicas, 1);
  vkp_partition_destroy(part);
  opt.threads = 2;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->alt_threads, 0);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(stages, one_core_means_one_thread_and_no_choice, .timeout = 60) {
  vkp_graph_t *g = fx_chain(6, 1 << 12);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(1, 1.0);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 0};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->threads, 1);
  cr_assert(!part->notes || !strstr(part->notes, "threads per stage"), "%s", part->notes);
  vkp_partition_destroy(part);
  opt.threads = -1;
  vkp_status_t st = vkp_partition_create(g, reg, prof, &opt, &part);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "threads"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Measured stage times (vkp_partition_measure_t) scale the estimates of the
// measured stage's nodes, and the cut made again balances the scaled costs.
Test(stages, measured_stage_times_move_the_cut, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 0.0);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 2, .threads = 1};
  vkp_partition_t *first;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &first));
  cr_assert_eq(first->stages[0].n_nodes, 6);
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(first, "chain", &plan));
  // Stage 0 measured three times its estimate, stage 1 as estimated.
  vkp_partition_measure_t m[2] = {
      {&plan->stages[0], 3e-3 * plan->stages[0].estimated_ms},
      {&plan->stages[1], 1e-3 * plan->stages[1].estimated_ms},
  };
  vkp_partition_options_t again = opt;
  again.n_measured = 2;
  again.measured = m;
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &again, &part));
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    double factor = first->node_stage[i] == 0 ? 3.0 : 1.0;
    cr_assert_float_eq(part->node_seconds[i], factor * first->node_seconds[i],
                       1e-9 * first->node_seconds[i], "node %d", (int)i);
  }
  // The dearer first nodes: fewer of them in stage 0, and the two stages'
  // compute within one node's cost of each other.
  cr_assert_lt(part->stages[0].n_nodes, 6);
  double largest = 3.0 * first->node_seconds[0];
  cr_assert_leq(fabs(part->stages[0].compute_s - part->stages[1].compute_s), largest);
  cr_assert_lt(part->bottleneck_s, 3e-3 * plan->stages[0].estimated_ms);
  cr_assert(part->notes && strstr(part->notes, "measured: stage0 (fa, 6 nodes)"),
            "%s", part->notes ? part->notes : "(no notes)");
  vkp_partition_destroy(part);

  // A measurement equal to the estimate changes nothing.
  m[0].seconds = 1e-3 * plan->stages[0].estimated_ms;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &again, &part));
  cr_assert_eq(part->stages[0].n_nodes, 6);
  cr_assert_float_eq(part->bottleneck_s, first->bottleneck_s, 1e-9 * first->bottleneck_s);
  vkp_partition_destroy(part);

  // Bad measurements are refused, naming the stage.
  struct {
    double seconds, estimated_ms;
    const char *target;
    const char *expect;
  } bad[] = {
      {-1.0, -1, NULL, "is not a positive number"},
      {NAN, -1, NULL, "is not a positive number"},
      {1e-3, 0.0, NULL, "has no estimate to correct"},
      {1e-3, -1, "nope", "target 'nope', which is not registered"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
    vkp_plan_stage_t copy = plan->stages[0];
    if (bad[k].estimated_ms >= 0) copy.estimated_ms = bad[k].estimated_ms;
    if (bad[k].target) copy.target = (char *)bad[k].target;
    vkp_partition_measure_t one = {&copy, bad[k].seconds};
    vkp_partition_options_t o = opt;
    o.n_measured = 1;
    o.measured = &one;
    vkp_status_t st = vkp_partition_create(g, reg, prof, &o, &part);
    cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "case %zu", k);
    cr_assert(strstr(vkp_status_message(st), bad[k].expect) &&
                  strstr(vkp_status_message(st), "stage0"),
              "case %zu: %s", k, vkp_status_message(st));
    vkp_status_free(st);
  }
  // A stage of another model: none of its nodes is here.
  vkp_graph_t *other = fx_resnet_like(1, 4, 4);
  vkp_partition_t *op;
  VKP_TEST_OK(vkp_partition_create(other, reg, prof, &opt, &op));
  vkp_plan_t *oplan;
  VKP_TEST_OK(vkp_partition_to_plan(op, "other", &oplan));
  vkp_partition_measure_t foreign = {&oplan->stages[0], 1e-3};
  vkp_partition_options_t o = opt;
  o.n_measured = 1;
  o.measured = &foreign;
  vkp_status_t st = vkp_partition_create(g, reg, prof, &o, &part);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "a plan of another model"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  vkp_plan_destroy(oplan);
  vkp_partition_destroy(op);
  vkp_graph_destroy(other);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(first);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Copies (replicas): every stage runs as R copies, the cut made for the
// host's cores over R, the bottleneck that cut's over R, the latency that of
// one frame through the stages; the plan carries the count.
Test(stages, copies_share_the_cores_and_divide_the_bottleneck, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(4, 0.0);
  vkp_partition_options_t opt = {.policy = "fa", .stages = 1, .threads = 1, .replicas = 4};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->replicas, 4);
  cr_assert_eq(part->n_stages, 1);
  cr_assert_eq(part->stages[0].replicas, 4);
  cr_assert_float_eq(part->bottleneck_s, part->stages[0].seconds / 4, 1e-12);
  cr_assert_float_eq(part->latency_s, part->stages[0].seconds, 1e-12);
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_to_plan(part, "chain", &plan));
  cr_assert_eq(plan->stages[0].replicas, 4);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  // Two stages of two copies on four cores: each pair of stages gets two.
  opt = (vkp_partition_options_t){.policy = "fa", .stages = 2, .threads = 1, .replicas = 2};
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->n_stages, 2);
  double slowest = fmax(part->stages[0].seconds, part->stages[1].seconds);
  cr_assert_float_eq(part->bottleneck_s, slowest / 2, 1e-12);
  vkp_partition_destroy(part);
  // More copies than cores: they take turns, the cores bound the frame rate.
  opt = (vkp_partition_options_t){.policy = "fa", .stages = 1, .threads = 1, .replicas = 6};
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->replicas, 6);
  cr_assert_float_eq(part->bottleneck_s,
                     part->stages[0].seconds / 4 * VKP_PARTITION_TIME_SHARING, 1e-12);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// replicas = auto: copies are candidates next to threads and stages; on two
// cores whose threads scale poorly, two copies of the whole chain beat two
// stages (no imbalance, no hand-off) and are chosen, the table saying so.
Test(stages, auto_copies_are_candidates_with_threads, .timeout = 60) {
  vkp_graph_t *g = fx_chain(12, 1 << 14);
  vkp_registry_t *reg = registry_fa();
  vkp_profile_t *prof = host_profile(2, 0.5);
  vkp_partition_options_t opt = {.policy = "fa", .replicas = VKP_PARTITION_REPLICAS_AUTO};
  vkp_partition_t *part;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->replicas, 2, "%s", part->notes);
  cr_assert_eq(part->n_stages, 1);
  cr_assert(part->notes && strstr(part->notes, "1 thread  x 2 stages x 1 copy  :"), "%s",
            part->notes);
  cr_assert(strstr(part->notes, "1 thread  x 1 stage  x 2 copies:"), "%s", part->notes);
  cr_assert(strstr(part->notes, "<- chosen"), "%s", part->notes);
  vkp_partition_destroy(part);
  // Without asking, no copies.
  opt.replicas = 0;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->replicas, 1);
  cr_assert(!strstr(part->notes, "cop"), "%s", part->notes);
  vkp_partition_destroy(part);
  opt.replicas = 65;
  vkp_status_t st = vkp_partition_create(g, reg, prof, &opt, &part);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// Copies are host stages: a stage on another device cannot take them.
Test(stages, copies_refused_off_the_host, .timeout = 60) {
  vkp_graph_t *g = fx_chain(6, 1 << 12);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  fx_add_fake(reg, "fb", FX_NONE);
  const char *json =
      "{\"version\": 1, \"host_device\": \"d0\","
      " \"targets\": {\"fa\": {\"device\": \"d0\", \"gflops\": 50, \"gbps\": 20},"
      "  \"fb\": {\"device\": \"d1\", \"gflops\": 500, \"gbps\": 200}},"
      " \"devices\": {\"d0\": {\"concurrency\": 2}}}";
  vkp_profile_t *prof;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &prof));
  vkp_partition_options_t opt = {.policy = "fb", .stages = 1, .replicas = 2};
  vkp_partition_t *part = NULL;
  vkp_status_t st = vkp_partition_create(g, reg, prof, &opt, &part);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "runs on 'fb'") &&
                strstr(vkp_status_message(st), "only stages on the host run as copies"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  cr_assert_null(part);
  // Under auto such candidates are listed as not candidates.
  opt.replicas = VKP_PARTITION_REPLICAS_AUTO;
  VKP_TEST_OK(vkp_partition_create(g, reg, prof, &opt, &part));
  cr_assert_eq(part->replicas, 1);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
