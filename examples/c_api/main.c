// SPDX-License-Identifier: Apache-2.0
// The public C API end to end: load a model, partition it across the
// available targets, run frames through the pipeline asynchronously, and
// check the pipelined results against a synchronous run on the reference
// target.
//
//   vkpipe_c_api_example MODEL [FRAMES]
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <vkpipe/graph.h>
#include <vkpipe/partition.h>
#include <vkpipe/pipeline.h>
#include <vkpipe/target.h>

static int fail(const char *what, vkp_status_t st) {
  fprintf(stderr, "%s: %s\n", what, vkp_status_message(st));
  vkp_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [FRAMES]\n", argv[0]);
    return 2;
  }
  int frames = argc > 2 ? atoi(argv[2]) : 8;
  if (frames < 1) frames = 1;
  vkp_registry_t *registry;
  vkp_graph_t *graph;
  vkp_status_t st = vkp_registry_create_default(&registry);
  if (st) return fail("registry", st);
  if ((st = vkp_graph_load(argv[1], &graph))) return fail("loading the model", st);
  if (graph->n_inputs != 1 || graph->n_outputs != 1) {
    fprintf(stderr, "this example wants a model with one input and one output\n");
    return 1;
  }

  // Partition: every node placed by cost, two pipeline stages.
  vkp_partition_options_t popt = {.policy = "auto", .stages = 2};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  if ((st = vkp_partition_create(graph, registry, NULL, &popt, &part)))
    return fail("partitioning", st);
  if ((st = vkp_partition_to_plan(part, "example", &plan))) return fail("plan", st);
  vkp_partition_print(part, stdout);

  vkp_pipeline_t *pipe;
  if ((st = vkp_pipeline_create(plan, registry, NULL, &pipe))) return fail("pipeline", st);

  // Frame inputs: fresh random values each frame.
  const vkp_value_t *in = &graph->values[graph->inputs[0]];
  vkp_tensor_t *inputs = calloc((size_t)frames, sizeof(*inputs));
  srand(12345);
  for (int f = 0; f < frames; ++f) {
    if ((st = vkp_tensor_init(&inputs[f], in->dtype, in->rank, in->shape)))
      return fail("input", st);
    float *x = inputs[f].data;
    for (size_t i = 0; i < vkp_tensor_numel(&inputs[f]); ++i)
      x[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  }

  // Launch every frame without waiting, then collect the results in order.
  for (int f = 0; f < frames; ++f) {
    if ((st = vkp_pipeline_set_input(pipe, in->name, &inputs[f]))) return fail("set_input", st);
    if ((st = vkp_pipeline_run(pipe, NULL))) return fail("run", st);
  }
  const vkp_target_t *ref = vkp_registry_find(registry, "ref");
  double worst = 0;
  for (int f = 0; f < frames; ++f) {
    vkp_pipeline_result_t res;
    if ((st = vkp_pipeline_get_output(pipe, UINT64_MAX, &res))) return fail("get_output", st);
    if (res.status) return fail("frame", res.status);
    vkp_tensor_t expect;
    if ((st = vkp_target_run_graph(ref, graph, NULL, &inputs[f], &expect)))
      return fail("reference run", st);
    const float *a = res.outputs[0].data, *b = expect.data;
    for (size_t i = 0; i < vkp_tensor_numel(&expect); ++i) {
      double err = fabs((double)a[i] - (double)b[i]) / (fabs((double)b[i]) + 1e-6);
      if (err > worst) worst = err;
    }
    printf("frame %llu: latency %.3f ms\n", (unsigned long long)res.seq,
           (double)res.latency_ns / 1e6);
    vkp_tensor_deinit(&expect);
    vkp_pipeline_result_deinit(&res);
  }
  printf("max relative difference from the reference target: %.3g\n", worst);

  for (int f = 0; f < frames; ++f) vkp_tensor_deinit(&inputs[f]);
  free(inputs);
  vkp_pipeline_destroy(pipe);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_graph_destroy(graph);
  vkp_registry_destroy(registry);
  return worst < 1e-3 ? 0 : 1;
}
