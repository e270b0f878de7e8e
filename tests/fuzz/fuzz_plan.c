// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the plan reader (plan/plan_json.c), against the example
// MLP as the model; graph-file stages resolve in a folder that does not
// exist.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "vkpipe/graph.h"
#include "vkpipe/plan.h"

static vkp_graph_t *vkp__model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!vkp__model) {
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/mlp.json", VKP_FUZZ_SOURCE_DIR);
    vkp_status_t st = vkp_graph_load(path, &vkp__model);
    if (st) {
      fprintf(stderr, "fuzz_plan: %s\n", vkp_status_message(st));
      abort();
    }
  }
  vkp_plan_t *plan = NULL;
  vkp_status_t st = vkp_plan_from_json((const char *)data, size,
                                       "/nonexistent/vkpipe-fuzz", vkp__model, &plan);
  vkp_fuzz_check(st, plan != NULL);
  vkp_plan_destroy(plan);
  return 0;
}
