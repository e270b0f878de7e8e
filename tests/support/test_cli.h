// SPDX-License-Identifier: Apache-2.0
// Running the built command-line tools from tests: a scratch directory per
// test and a runner that captures exit code, stdout and stderr.
#ifndef VKPIPE_TESTS_TEST_CLI_H_
#define VKPIPE_TESTS_TEST_CLI_H_

#include <stdint.h>

#include "support/test_support.h"
#include "vkpipe/tensor.h"

// The current test's scratch directory (made by vkp_test_scratch_make).
extern char vkp_test_scratch[256];
// Criterion .init / .fini of suites that use the scratch directory.
void vkp_test_scratch_make(void);
void vkp_test_scratch_remove(void);

typedef struct vkp_test_run_t {
  int code;
  char *out;  // stdout (malloc'd)
  char *err;  // stderr (malloc'd)
} vkp_test_run_t;

// Runs `$VKPIPE_BINARY_DIR/tools/<tool> <args>` (args already shell-quoted)
// in the scratch directory. Fails the test if it does not exit normally.
vkp_test_run_t vkp_test_run_tool(const char *tool, const char *args);
void vkp_test_run_free(vkp_test_run_t *r);

// Number of newline characters in `s`.
int vkp_test_count_lines(const char *s);

// Writes `text` to scratch/<name>.
void vkp_test_write_text(const char *name, const char *text);

// A random float32 .npy of `shape` at scratch/<name>.
void vkp_test_write_random_npy(vkp_test_rng_t *rng, const char *name,
                               int32_t rank, const int64_t *shape);

#endif  // VKPIPE_TESTS_TEST_CLI_H_
