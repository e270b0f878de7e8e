// SPDX-License-Identifier: Apache-2.0
// A deploy-only program: it builds an artifact from a hand-made plan, loads
// it and runs it, linked against the library without partition/ (the
// vkpipe_deploy archive in tests/plan/CMakeLists.txt), so that loading and
// running an artifact needs no partitioner. Exit status 0 when the outputs
// match the plain-C expectation on random inputs.
//
// usage: plan_deploy SCRATCH_DIR
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan/tiny_plan.h"
#include "vkpipe/artifact.h"
#include "vkpipe/pipeline.h"

static int fail(const char *what, vkp_status_t st) {
  fprintf(stderr, "plan_deploy: %s: %s\n", what, st ? vkp_status_message(st) : "mismatch");
  vkp_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: plan_deploy SCRATCH_DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/deploy.vkp", argv[1]);
  const char *env_seed = getenv("VKPIPE_TEST_SEED");
  unsigned seed = env_seed ? (unsigned)strtoul(env_seed, NULL, 10) : (unsigned)time(NULL);
  printf("seed %u (VKPIPE_TEST_SEED reproduces it)\n", seed);
  srand(seed);

  const char *ref[] = {"ref"};
  vkp_registry_t *registry = NULL;
  vkp_plan_t *plan = NULL;
  vkp_status_t st = vkp_registry_create_builtin(ref, 1, &registry);
  if (!st) st = tiny_plan_create(0, &plan);
  vkp_artifact_info_t info = {.model = "tiny (by hand)", .policy = "ref"};
  if (!st) st = vkp_artifact_build(plan, registry, &info, path);
  vkp_plan_destroy(plan);
  if (st) return fail("building the artifact", st);

  vkp_artifact_t *art = NULL;
  vkp_pipeline_t *pipe = NULL;
  st = vkp_artifact_load(path, &art);
  if (!st) st = vkp_artifact_pipeline_create(art, registry, NULL, &pipe);
  if (st) return fail("loading the artifact", st);
  int rc = 0;
  for (int frame = 0; frame < 3 && !rc; ++frame) {
    float a[TINY_WIDTH], b[TINY_WIDTH], y[TINY_WIDTH], z[TINY_WIDTH];
    for (int i = 0; i < TINY_WIDTH; ++i) {
      a[i] = (float)rand() / (float)RAND_MAX * 6.0f - 3.0f;
      b[i] = (float)rand() / (float)RAND_MAX * 6.0f - 3.0f;
    }
    tiny_plan_expect(a, b, y, z);
    int64_t shape[] = {1, TINY_WIDTH};
    vkp_tensor_t ta, tb;
    st = vkp_tensor_init_view(&ta, VKP_DTYPE_FLOAT32, 2, shape, a);
    if (!st) st = vkp_tensor_init_view(&tb, VKP_DTYPE_FLOAT32, 2, shape, b);
    // By the pipeline's own names.
    for (int32_t i = 0; !st && i < vkp_pipeline_input_count(pipe); ++i) {
      const char *name = vkp_pipeline_input_name(pipe, i);
      st = vkp_pipeline_set_input(pipe, name, strcmp(name, "x_a") == 0 ? &ta : &tb);
    }
    if (!st) st = vkp_pipeline_run(pipe, NULL);
    vkp_pipeline_result_t res = {0};
    if (!st) st = vkp_pipeline_get_output(pipe, UINT64_MAX, &res);
    if (!st && res.status) {
      st = res.status;
      res.status = NULL;
    }
    if (st) {
      rc = fail("running a frame", st);
      break;
    }
    for (int32_t o = 0; o < res.n_outputs && !rc; ++o) {
      const char *name = vkp_pipeline_output_name(pipe, o);
      const float *want = strcmp(name, "y") == 0 ? y : z;
      const float *got = res.outputs[o].data;
      for (int i = 0; i < TINY_WIDTH; ++i)
        if (got[i] != want[i]) {
          fprintf(stderr, "output %s[%d]: %g, want %g\n", name, i, got[i], want[i]);
          rc = 1;
        }
    }
    vkp_pipeline_result_deinit(&res);
  }
  vkp_pipeline_destroy(pipe);
  vkp_artifact_destroy(art);
  vkp_registry_destroy(registry);
  if (!rc) printf("deploy-only artifact load and run: ok\n");
  return rc;
}
