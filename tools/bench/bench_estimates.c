// SPDX-License-Identifier: Apache-2.0
// A benchmark aid, not a test: the cost model's estimate of every node of a
// model on one target, with the kernel class the target names for it, then
// the totals per op. Put next to a measured stage time (vkpipe-bench's busy
// ms, or perf per generated function), it shows which nodes an estimate is
// off on.
//
//   build/tools/bench/bench_estimates model.onnx [--target cpu] [--threads N]
//                                    [--profile FILE]
//
// Without --profile it uses the machine's cached profile (measured on first
// use, as every command does).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

static int fail(vkp_status_t st, const char *what) {
  fprintf(stderr, "bench_estimates: %s: %s\n", what, vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

typedef struct op_total_t {
  const char *op;
  int count;
  double seconds;
} op_total_t;

static int by_seconds(const void *a, const void *b) {
  double x = ((const op_total_t *)a)->seconds, y = ((const op_total_t *)b)->seconds;
  return (x < y) - (x > y);
}

int main(int argc, char **argv) {
  const char *model = NULL, *target_name = "cpu", *profile_path = NULL;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--target") && i + 1 < argc) target_name = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--profile") && i + 1 < argc) profile_path = argv[++i];
    else if (argv[i][0] != '-' && !model) model = argv[i];
    else {
      fprintf(stderr, "usage: bench_estimates MODEL [--target T] [--threads N] "
                      "[--profile FILE]\n");
      return 2;
    }
  }
  if (!model || threads < 1 || threads > 1024) {
    fprintf(stderr, "usage: bench_estimates MODEL [--target T] [--threads N (1..1024)] "
                    "[--profile FILE]\n");
    return 2;
  }
  vkp_graph_t *g = NULL;
  vkp_registry_t *reg = NULL;
  vkp_profile_t *prof = NULL;
  vkp_status_t st = vkp_graph_load(model, &g);
  if (st) return fail(st, model);
  if ((st = vkp_registry_create_default(&reg))) return fail(st, "targets");
  const vkp_target_t *target = NULL;
  if ((st = vkp_registry_lookup(reg, target_name, &target))) return fail(st, target_name);
  if (profile_path) st = vkp_profile_load(profile_path, &prof);
  else st = vkp_profile_create_for_machine(reg, NULL, &prof, NULL, NULL);
  if (st) return fail(st, "profile");
  op_total_t *totals = calloc((size_t)g->n_nodes + 1, sizeof *totals);
  int n_totals = 0;
  double sum = 0;
  printf("%-44s %-22s %-16s %12s\n", "node", "op", "kernel class", "estimate us");
  for (int32_t i = 0; i < g->n_nodes && totals; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    double s = 0, columns = 0;
    st = vkp_node_estimate_threads(prof, target, g, n, threads, &s);
    if (st) {
      printf("%-44s %-22s %s\n", n->name, vkp_op_name(n->op), vkp_status_message(st));
      vkp_status_free(st);
      continue;
    }
    const char *cls = target->vtable->compiler.kernel_class
                          ? target->vtable->compiler.kernel_class(target, g, n, &columns)
                          : NULL;
    printf("%-44s %-22s %-16s %12.2f\n", n->name, vkp_op_name(n->op), cls ? cls : "-", s * 1e6);
    sum += s;
    int k = 0;
    while (k < n_totals && strcmp(totals[k].op, vkp_op_name(n->op))) ++k;
    if (k == n_totals) totals[n_totals++] = (op_total_t){vkp_op_name(n->op), 0, 0};
    totals[k].count++;
    totals[k].seconds += s;
  }
  qsort(totals, (size_t)n_totals, sizeof *totals, by_seconds);
  printf("\nper op (%s, %d thread%s):\n", target_name, threads, threads > 1 ? "s" : "");
  for (int k = 0; k < n_totals; ++k)
    printf("  %-22s %5d nodes %12.2f us  %5.1f%%\n", totals[k].op, totals[k].count,
           totals[k].seconds * 1e6, sum > 0 ? 100.0 * totals[k].seconds / sum : 0.0);
  printf("  %-22s %5d nodes %12.2f us\n", "total", (int)g->n_nodes, sum * 1e6);
  free(totals);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
  return 0;
}
