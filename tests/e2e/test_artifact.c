// SPDX-License-Identifier: Apache-2.0
// pipeline/artifact.c: build an artifact from a partitioned model, load it
// back without the model, run it through the pipeline and compare with the
// reference target on fresh random inputs; corrupt, truncated and
// wrong-version files are clear errors.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/archive.h"
#include "support/test_cli.h"
#include "support/test_support.h"
#include "vkpipe/artifact.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"

TestSuite(artifact, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

// Builds examples/mlp.json into scratch/mlp.vkp over `stages` stages on
// `policy`; returns the loaded graph (owned by the caller).
static vkp_graph_t *build_example(vkp_registry_t *registry, const char *policy,
                                  int32_t stages, char *path, size_t size) {
  char model[512];
  snprintf(model, sizeof model, "%s/examples/mlp.json", vkp_test_source_dir());
  snprintf(path, size, "%s/mlp.vkp", vkp_test_scratch);
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(model, &g));
  vkp_partition_options_t opt = {.policy = policy, .stages = stages};
  vkp_partition_t *part;
  vkp_plan_t *plan;
  VKP_TEST_OK(vkp_partition_create(g, registry, NULL, &opt, &part));
  VKP_TEST_OK(vkp_partition_to_plan(part, "mlp", &plan));
  vkp_artifact_info_t info = {.model = model, .policy = policy};
  VKP_TEST_OK(vkp_artifact_build(plan, registry, &info, path));
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  return g;
}

static void check_runs_like_ref(const char *policy, int32_t stages) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_registry_t *registry;
  VKP_TEST_OK(vkp_registry_create_default(&registry));
  if (!vkp_registry_find(registry, policy)) {
    cr_log_warn("target '%s' unavailable here; skipping", policy);
    vkp_registry_destroy(registry);
    return;
  }
  char path[512];
  vkp_graph_t *g = build_example(registry, policy, stages, path, sizeof path);
  vkp_artifact_t *art;
  VKP_TEST_OK(vkp_artifact_load(path, &art));
  const vkp_plan_t *plan = vkp_artifact_plan(art);
  cr_assert_eq(plan->n_stages, stages);
  for (int32_t s = 0; s < plan->n_stages; ++s)
    cr_assert_str_eq(plan->stages[s].target, policy);
  cr_assert(strstr(vkp_artifact_metadata(art), "\"format_version\""));
  vkp_pipeline_t *pipe;
  VKP_TEST_OK(vkp_artifact_pipeline_create(art, registry, NULL, &pipe));
  const vkp_target_t *ref = vkp_registry_find(registry, "ref");
  const vkp_value_t *xv = &g->values[g->inputs[0]];
  for (int frame = 0; frame < 4; ++frame) {
    vkp_tensor_t x, y, want;
    VKP_TEST_OK(vkp_tensor_init(&x, xv->dtype, xv->rank, xv->shape));
    vkp_test_fill_uniform(&rng, &x, -3, 3);
    VKP_TEST_OK(vkp_pipeline_infer(pipe, &x, &y));
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, &want));
    char msg[256];
    cr_assert(vkp_test_allclose(&y, &want, 1e-4, 1e-6, msg, sizeof msg), "%s", msg);
    vkp_tensor_deinit(&x);
    vkp_tensor_deinit(&y);
    vkp_tensor_deinit(&want);
  }
  vkp_pipeline_destroy(pipe);
  vkp_artifact_destroy(art);
  vkp_graph_destroy(g);
  vkp_registry_destroy(registry);
}

Test(artifact, ref_stages_run_without_the_model, .timeout = 300) {
  check_runs_like_ref("ref", 2);
}

Test(artifact, cpu_stages_run_without_the_model, .timeout = 300) {
  check_runs_like_ref("cpu", 2);
}

Test(artifact, vulkan_stage_runs_without_the_model, .timeout = 300) {
  check_runs_like_ref("vulkan", 1);
}

static char *expect_load_error(const char *path) {
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load(path, &art);
  cr_assert_not_null(st, "'%s' loaded", path);
  cr_assert_null(art);
  char *msg = strdup(vkp_status_message(st));
  vkp_status_free(st);
  return msg;
}

Test(artifact, damaged_files_are_clear_errors, .timeout = 300) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_registry_t *registry;
  VKP_TEST_OK(vkp_registry_create_default(&registry));
  char path[512], bad[600];
  vkp_graph_destroy(build_example(registry, "ref", 1, path, sizeof path));
  size_t size;
  char *image = vkp_test_read_file(path, &size);
  char *pristine = vkp_test_read_file(path, NULL);
  cr_assert(image && pristine);
  snprintf(bad, sizeof bad, "%s/bad.vkp", vkp_test_scratch);
  // Truncations at many offsets.
  for (int k = 0; k < 40; ++k) {
    size_t cut = vkp_test_rng_below(&rng, (uint32_t)size);
    FILE *f = fopen(bad, "wb");
    fwrite(image, 1, cut, f);
    fclose(f);
    free(expect_load_error(bad));
  }
  // Byte flips anywhere.
  for (int k = 0; k < 40; ++k) {
    size_t at = vkp_test_rng_below(&rng, (uint32_t)size);
    image[at] ^= (char)(1u << vkp_test_rng_below(&rng, 8));
    FILE *f = fopen(bad, "wb");
    fwrite(image, 1, size, f);
    fclose(f);
    char *msg = expect_load_error(bad);
    cr_assert(strstr(msg, "bad.vkp"), "message names the file: %s", msg);
    free(msg);
    image[at] = pristine[at];
  }
  free(image);
  free(pristine);
  // A file of another version: rewrite the archive with version 99.
  vkp_archive_t *a;
  VKP_TEST_OK(vkp_archive_open(path, VKP_ARTIFACT_FORMAT_VERSION, &a));
  vkp_archive_writer_t *w;
  VKP_TEST_OK(vkp_archive_writer_create(&w));
  for (int32_t i = 0; i < vkp_archive_count(a); ++i) {
    const void *d;
    size_t n;
    cr_assert(vkp_archive_find(a, vkp_archive_name(a, i), &d, &n));
    VKP_TEST_OK(vkp_archive_writer_add(w, vkp_archive_name(a, i), d, n));
  }
  VKP_TEST_OK(vkp_archive_writer_save(w, bad, 99));
  vkp_archive_writer_destroy(w);
  vkp_archive_close(a);
  char *msg = expect_load_error(bad);
  cr_assert(strstr(msg, "version 99"), "%s", msg);
  free(msg);
  // Not an artifact at all.
  vkp_test_write_text("plain.vkp", "{\"not\": \"an artifact\"}");
  snprintf(bad, sizeof bad, "%s/plain.vkp", vkp_test_scratch);
  msg = expect_load_error(bad);
  cr_assert(strstr(msg, "not a vkpipe artifact"), "%s", msg);
  free(msg);
  cr_assert_not(vkp_artifact_is_artifact(bad));
  cr_assert(vkp_artifact_is_artifact(path));
  vkp_registry_destroy(registry);
}
