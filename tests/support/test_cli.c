// SPDX-License-Identifier: Apache-2.0
#include "support/test_cli.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/test_support.h"
#include "vkpipe/npy.h"

char vkp_test_scratch[256];

void vkp_test_scratch_make(void) {
  snprintf(vkp_test_scratch, sizeof vkp_test_scratch, "%s/vkpipe_test_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(vkp_test_scratch));
}

void vkp_test_scratch_remove(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", vkp_test_scratch);
  cr_assert_eq(system(cmd), 0);
}

vkp_test_run_t vkp_test_run_tool(const char *tool, const char *args) {
  char cmd[8192], out_path[512], err_path[512];
  snprintf(out_path, sizeof out_path, "%s/stdout.txt", vkp_test_scratch);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", vkp_test_scratch);
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s/tools/%s' %s >'%s' 2>'%s'",
           vkp_test_scratch, vkp_test_binary_dir(), tool, args, out_path,
           err_path);
  int status = system(cmd);
  cr_assert(WIFEXITED(status), "%s did not exit", cmd);
  vkp_test_run_t r = {WEXITSTATUS(status), vkp_test_read_file(out_path, NULL),
                      vkp_test_read_file(err_path, NULL)};
  cr_assert(r.out && r.err);
  return r;
}

void vkp_test_run_free(vkp_test_run_t *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

int vkp_test_count_lines(const char *s) {
  int n = 0;
  for (; *s; ++s) n += *s == '\n';
  return n;
}

void vkp_test_write_text(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", vkp_test_scratch, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

void vkp_test_write_random_npy(vkp_test_rng_t *rng, const char *name,
                               int32_t rank, const int64_t *shape) {
  vkp_tensor_t t;
  VKP_TEST_OK(vkp_tensor_init(&t, VKP_DTYPE_FLOAT32, rank, shape));
  vkp_test_fill_uniform(rng, &t, -2.0f, 2.0f);
  char path[512];
  snprintf(path, sizeof path, "%s/%s", vkp_test_scratch, name);
  VKP_TEST_OK(vkp_npy_write_file(path, &t));
  vkp_tensor_deinit(&t);
}
