// SPDX-License-Identifier: Apache-2.0
// `vkpipe run MODEL --target auto`: the model partitioned across every
// available target and run through the pipeline executor gives what "ref"
// gives on the whole graph, on fresh random inputs.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "support/test_support.h"
#include "vkpipe/npy.h"

static void run_cli(const char *dir, const char *model, const char *input,
                    const char *target) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s/tools/vkpipe' run '%s/examples/%s' --input '%s' "
           "--output-dir '%s' --target %s > '%s.log' 2>&1",
           dir, vkp_test_binary_dir(), vkp_test_source_dir(), model, input,
           target, target, target);
  int rc = system(cmd);
  if (rc != 0) {
    char log[4096];
    snprintf(log, sizeof log, "%s/%s.log", dir, target);
    size_t size = 0;
    char *text = vkp_test_read_file(log, &size);
    cr_assert_fail("vkpipe run --target %s failed (%d): %s", target, rc,
                   text ? text : "(no log)");
  }
}

static void check_model(const char *model, const char *input_name,
                        const char *output_name, int32_t rank,
                        const int64_t *shape) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  char dir[1024], path[1200];
  snprintf(dir, sizeof dir, "%s/tests/tools/cli_auto_%d", vkp_test_binary_dir(),
           (int)getpid());
  char mk[1100];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
  cr_assert_eq(system(mk), 0);
  vkp_tensor_t x;
  VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, rank, shape));
  vkp_test_fill_uniform(&rng, &x, -1, 1);
  snprintf(path, sizeof path, "%s/in.npy", dir);
  VKP_TEST_OK(vkp_npy_write_file(path, &x));
  vkp_tensor_deinit(&x);
  char input[256];
  snprintf(input, sizeof input, "%s=in.npy", input_name);
  run_cli(dir, model, input, "auto");
  run_cli(dir, model, input, "ref");
  vkp_tensor_t got, want;
  snprintf(path, sizeof path, "%s/auto/%s.npy", dir, output_name);
  VKP_TEST_OK(vkp_npy_read_file(path, &got));
  snprintf(path, sizeof path, "%s/ref/%s.npy", dir, output_name);
  VKP_TEST_OK(vkp_npy_read_file(path, &want));
  char msg[256];
  cr_assert(vkp_test_allclose(&got, &want, 1e-4, 1e-5, msg, sizeof msg), "%s: %s",
            model, msg);
  vkp_tensor_deinit(&got);
  vkp_tensor_deinit(&want);
  snprintf(mk, sizeof mk, "rm -rf '%s'", dir);
  cr_assert_eq(system(mk), 0);
}

Test(cli_auto, mlp_json_matches_ref, .timeout = 120) {
  const int64_t shape[] = {1, 64};
  check_model("mlp.json", "x", "y", 2, shape);
}

Test(cli_auto, small_cnn_onnx_matches_ref, .timeout = 120) {
  const int64_t shape[] = {1, 3, 32, 32};
  check_model("small_cnn.onnx", "image", "probs", 4, shape);
}
