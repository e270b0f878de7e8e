// SPDX-License-Identifier: Apache-2.0
// `vkpipe devices` (tools/cmd_devices.c), run as a program.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/test_support.h"

// Runs `env vkpipe devices` and returns its exit status; stdout and stderr
// go to `out`.
static int run_devices(const char *env, char *out, size_t out_size) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s/tools/vkpipe devices 2>&1", env,
           vkp_test_binary_dir());
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, out_size - 1, p);
  out[n] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(cmd_devices, lists_the_device_and_its_limits, .timeout = 60) {
  static char out[16384];
  int rc = run_devices("VKPIPE_VALIDATION=0", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
  const char *want[] = {"device 0:", "[selected]", "type:", "driver:", "Vulkan API:",
                        "memory heap 0:", "subgroup size:", "workgroup count:",
                        "shared memory:", "storage range:", "robust access:"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
    cr_assert(strstr(out, want[i]), "'%s' missing from:\n%s", want[i], out);
  // lavapipe has robustBufferAccess2, which vkpipe enables.
  if (strstr(out, "llvmpipe"))
    cr_assert(strstr(out, "robust access:   robustBufferAccess2 ("), "%s", out);
}

Test(cmd_devices, robustness_follows_the_environment, .timeout = 60) {
  static char out[16384];
  int rc = run_devices("VKPIPE_VALIDATION=0 VKPIPE_VK_ROBUSTNESS=1", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
  if (strstr(out, "llvmpipe"))
    cr_assert(strstr(out, "robust access:   robustBufferAccess (out-of-range"), "%s", out);
  rc = run_devices("VKPIPE_VALIDATION=0 VKPIPE_VK_ROBUSTNESS=bogus", out, sizeof out);
  cr_assert_eq(rc, 0, "%s", out);
  cr_assert(strstr(out, "robust access:   VKPIPE_VK_ROBUSTNESS=bogus: expected 0"), "%s",
            out);
}

Test(cmd_devices, no_driver_is_a_clear_error, .timeout = 60) {
  static char out[4096];
  int rc = run_devices("VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json",
                       out, sizeof out);
  cr_assert_eq(rc, 1, "%s", out);
  cr_assert(strstr(out, "vkpipe devices: no Vulkan driver found"), "%s", out);
}

Test(cmd_devices, bad_usage, .timeout = 60) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s/tools/vkpipe devices --bogus >/dev/null 2>&1",
           vkp_test_binary_dir());
  int status = system(cmd);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}
