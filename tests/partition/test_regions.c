// SPDX-License-Identifier: Apache-2.0
// partition/regions.c: regions are single-target, cover every node once and
// never form a cycle.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"
#include "partition/partition_fixtures.h"
#include "vkpipe/partition.h"

// Checks the region invariants; returns the number of regions.
static int32_t check_regions(const vkp_graph_t *g, const int32_t *labels) {
  int32_t n = g->n_nodes, nr = -1;
  int32_t *order = malloc(sizeof(int32_t) * (size_t)n);
  int32_t *region = malloc(sizeof(int32_t) * (size_t)n);
  int32_t *seen = calloc((size_t)n, sizeof(int32_t));
  cr_assert(order && region && seen);
  VKP_TEST_OK(vkp_partition_regions(g, labels, order, region, &nr));
  cr_assert(nr >= 1 && nr <= n);
  // `order` is a permutation: every node lands exactly once.
  for (int32_t k = 0; k < n; ++k) {
    cr_assert(order[k] >= 0 && order[k] < n);
    cr_assert_eq(seen[order[k]]++, 0, "node %d listed twice", (int)order[k]);
  }
  // Regions are contiguous in the order, numbered increasingly, one label.
  for (int32_t k = 1; k < n; ++k) {
    int32_t a = region[order[k - 1]], b = region[order[k]];
    cr_assert(b == a || b == a + 1);
    if (b == a) cr_assert_eq(labels[order[k]], labels[order[k - 1]]);
  }
  // Region graph acyclic: Kahn over region edges from node edges.
  int32_t *indeg = calloc((size_t)nr, sizeof(int32_t));
  uint8_t *edge = calloc((size_t)nr * (size_t)nr, 1);
  cr_assert(indeg && edge);
  for (int32_t i = 0; i < n; ++i)
    for (int32_t k = 0; k < g->nodes[i].n_inputs; ++k) {
      int32_t v = g->nodes[i].inputs[k];
      int32_t p = v >= 0 ? g->values[v].producer : -1;
      if (p < 0 || region[p] == region[i]) continue;
      size_t e = (size_t)region[p] * (size_t)nr + (size_t)region[i];
      if (!edge[e]) {
        edge[e] = 1;
        indeg[region[i]]++;
      }
    }
  int32_t *queue = malloc(sizeof(int32_t) * (size_t)nr);
  int32_t head = 0, tail = 0;
  for (int32_t r = 0; r < nr; ++r)
    if (!indeg[r]) queue[tail++] = r;
  while (head < tail) {
    int32_t r = queue[head++];
    for (int32_t s = 0; s < nr; ++s)
      if (edge[(size_t)r * (size_t)nr + (size_t)s] && --indeg[s] == 0) queue[tail++] = s;
  }
  cr_assert_eq(tail, nr, "region graph has a cycle");
  free(queue);
  free(indeg);
  free(edge);
  free(order);
  free(region);
  free(seen);
  return nr;
}

static vkp_graph_t *diamond(void) {
  // A -> B -> C and A -> C.
  vkp_graph_t *g = g_new("diamond");
  int64_t s[] = {1, 4};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  g_node(g, "A", VKP_OP_RELU, "x", "a", 0, NULL);
  g_node(g, "B", VKP_OP_EXP, "a", "b", 0, NULL);
  g_node(g, "C", VKP_OP_ADD, "a,b", "c", 0, NULL);
  g_out(g, "c");
  g_validate(g);
  return g;
}

Test(regions, diamond_tut_is_three_regions, .timeout = 60) {
  vkp_graph_t *g = diamond();
  int32_t labels[3];
  labels[vkp_graph_find_node(g, "A")] = 0;
  labels[vkp_graph_find_node(g, "B")] = 1;
  labels[vkp_graph_find_node(g, "C")] = 0;
  // Merging A and C would make {A,C} -> B -> {A,C}: a cycle.
  cr_assert_eq(check_regions(g, labels), 3);
  labels[vkp_graph_find_node(g, "B")] = 0;
  cr_assert_eq(check_regions(g, labels), 1);
  vkp_graph_destroy(g);
}

Test(regions, fan_out_and_skip, .timeout = 60) {
  // x -> r0 -> r1 -> ... chain with skip adds: resnet-like blocks where the
  // convs go to one label and everything else to another.
  vkp_graph_t *g = fx_resnet_like(3, 4, 6);
  int32_t *labels = calloc((size_t)g->n_nodes, sizeof(int32_t));
  for (int32_t i = 0; i < g->n_nodes; ++i)
    labels[i] = g->nodes[i].op == VKP_OP_CONV2D ? 1 : 0;
  int32_t nr = check_regions(g, labels);
  cr_assert(nr > 2);
  // A branch that fans out to two same-label consumers stays one region.
  for (int32_t i = 0; i < g->n_nodes; ++i) labels[i] = 0;
  cr_assert_eq(check_regions(g, labels), 1);
  free(labels);
  vkp_graph_destroy(g);
}

Test(regions, parallel_branches_group_by_target, .timeout = 60) {
  // x -> p0..p3 (label 0) and x -> q0..q3 (label 1), joined at the end by
  // label 0: the affinity order keeps all p's together.
  vkp_graph_t *g = g_new("branches");
  int64_t s[] = {1, 4};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  const char *prev_p = "x", *prev_q = "x";
  char names[16][16];
  for (int i = 0; i < 4; ++i) {
    snprintf(names[2 * i], 16, "p%d", i);
    snprintf(names[2 * i + 1], 16, "q%d", i);
    const char *pi[] = {prev_p}, *po[] = {names[2 * i]};
    VKP_TEST_OK(vkp_graph_add_node(g, names[2 * i], VKP_OP_RELU, 1, pi, 1, po, 0, NULL, NULL));
    const char *qi[] = {prev_q}, *qo[] = {names[2 * i + 1]};
    VKP_TEST_OK(vkp_graph_add_node(g, names[2 * i + 1], VKP_OP_EXP, 1, qi, 1, qo, 0, NULL, NULL));
    prev_p = names[2 * i];
    prev_q = names[2 * i + 1];
  }
  const char *ji[] = {prev_p, prev_q}, *jo[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "join", VKP_OP_ADD, 2, ji, 1, jo, 0, NULL, NULL));
  g_out(g, "y");
  g_validate(g);
  int32_t labels[9];
  for (int32_t i = 0; i < g->n_nodes; ++i) labels[i] = g->nodes[i].op == VKP_OP_EXP;
  // q-chain then p-chain + join: two regions.
  cr_assert_eq(check_regions(g, labels), 2);
  vkp_graph_destroy(g);
}

Test(regions, random_dags_are_acyclic_and_exact, .timeout = 60) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  for (int trial = 0; trial < 2000; ++trial) {
    int32_t n = 2 + (int32_t)vkp_test_rng_below(&rng, 40);
    vkp_graph_t *g = fx_random_dag(&rng, n);
    int32_t labels[64];
    int32_t n_labels = 1 + (int32_t)vkp_test_rng_below(&rng, 3);
    for (int32_t i = 0; i < g->n_nodes; ++i)
      labels[i] = (int32_t)vkp_test_rng_below(&rng, (uint32_t)n_labels);
    int32_t nr = check_regions(g, labels);
    if (n_labels == 1) cr_assert_eq(nr, 1, "seed %llu", (unsigned long long)seed);
    vkp_graph_destroy(g);
  }
}

Test(regions, bad_labels, .timeout = 60) {
  vkp_graph_t *g = diamond();
  int32_t labels[3] = {0, -1, 0}, order[3], region[3], nr;
  vkp_status_t st = vkp_partition_regions(g, labels, order, region, &nr);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  labels[1] = 5000;
  st = vkp_partition_regions(g, labels, order, region, &nr);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  vkp_graph_destroy(g);
}
