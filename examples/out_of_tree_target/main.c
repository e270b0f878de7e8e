// SPDX-License-Identifier: Apache-2.0
// Uses the out-of-tree target "tiny" next to the built-in ones: everything
// is placed on "tiny" (policy), what it refuses falls back visibly, the plan
// runs as a pipeline and its result is checked against the reference target.
//
//   tiny_target_example MODEL
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <vkpipe/graph.h>
#include <vkpipe/partition.h>
#include <vkpipe/pipeline.h>
#include <vkpipe/target.h>

#include "tiny_target.h"

static int fail(const char *what, vkp_status_t st) {
  fprintf(stderr, "%s: %s\n", what, vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  const char *builtins[] = {"ref", "cpu"};
  vkp_registry_t *registry;
  vkp_graph_t *graph;
  vkp_status_t st = vkp_registry_create_builtin(builtins, 2, &registry);
  if (st) return fail("registry", st);
  if ((st = tiny_target_register(registry))) return fail("registering tiny", st);
  if ((st = vkp_graph_load(argv[1], &graph))) return fail("loading the model", st);
  if (graph->n_inputs != 1 || graph->n_outputs != 1) {
    fprintf(stderr, "this example wants a model with one input and one output\n");
    return 1;
  }

  vkp_partition_options_t popt = {.policy = "tiny"};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  if ((st = vkp_partition_create(graph, registry, NULL, &popt, &part)))
    return fail("partitioning", st);
  vkp_partition_print(part, stdout);
  int on_tiny = 0;
  for (int32_t i = 0; i < graph->n_nodes; ++i)
    on_tiny += part->targets[part->node_target[i]] == vkp_registry_find(registry, "tiny");
  printf("%d of %d nodes run on tiny\n", on_tiny, (int)graph->n_nodes);
  if ((st = vkp_partition_to_plan(part, "tiny_example", &plan))) return fail("plan", st);

  vkp_pipeline_t *pipe;
  if ((st = vkp_pipeline_create(plan, registry, NULL, &pipe))) return fail("pipeline", st);
  const vkp_value_t *in = &graph->values[graph->inputs[0]];
  vkp_tensor_t x;
  if ((st = vkp_tensor_init(&x, in->dtype, in->rank, in->shape))) return fail("input", st);
  srand(7);
  for (size_t i = 0; i < vkp_tensor_numel(&x); ++i)
    ((float *)x.data)[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  if ((st = vkp_pipeline_set_input(pipe, in->name, &x))) return fail("set_input", st);
  if ((st = vkp_pipeline_run(pipe, NULL))) return fail("run", st);
  vkp_pipeline_result_t res;
  if ((st = vkp_pipeline_get_output(pipe, UINT64_MAX, &res))) return fail("get_output", st);
  if (res.status) return fail("frame", res.status);

  vkp_tensor_t expect;
  if ((st = vkp_target_run_graph(vkp_registry_find(registry, "ref"), graph, NULL, &x,
                                 &expect)))
    return fail("reference run", st);
  double worst = 0;
  const float *a = res.outputs[0].data, *b = expect.data;
  for (size_t i = 0; i < vkp_tensor_numel(&expect); ++i) {
    double err = fabs((double)a[i] - (double)b[i]) / (fabs((double)b[i]) + 1e-6);
    if (err > worst) worst = err;
  }
  printf("max relative difference from the reference target: %.3g\n", worst);

  vkp_tensor_deinit(&expect);
  vkp_pipeline_result_deinit(&res);
  vkp_tensor_deinit(&x);
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_graph_destroy(graph);
  vkp_registry_destroy(registry);
  return worst < 1e-3 && on_tiny > 0 ? 0 : 1;
}
