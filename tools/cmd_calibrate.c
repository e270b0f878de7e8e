// SPDX-License-Identifier: Apache-2.0
// `vkpipe calibrate`: measure each registered target's rates into a profile.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/cost.h"
#include "vkpipe/target.h"

int vkp_cmd_calibrate(int argc, char **argv);
extern const char vkp_cmd_calibrate_summary[];
const char vkp_cmd_calibrate_summary[] =
    "measure each target's GFLOP/s, GB/s and launch cost into a profile";

static void vkp__calibrate_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe calibrate [-o profile.json] [options]\n"
          "\n"
          "  -o, --output FILE  also write the profile JSON here\n"
          "  --print            also print the profile JSON on stdout\n"
          "  --profile FILE     start from this profile (device names, links);\n"
          "                     the machine's cache is then left alone, as it\n"
          "                     is when VKPIPE_PROFILE is set\n"
          "  --threads N        threads of the thread-efficiency runs\n"
          "                     (default: min(cores, 4); 1 skips them)\n"
          "  --size N           matmul (6N x 4.5N) by (4.5N x N) (default 128)\n"
          "  --elements N       elements of the add benchmark (default 1048576)\n"
          "  --repeats N        timed runs per benchmark, median kept (default 5)\n"
          "\n"
          "Runs a matmul, a large add and a one-element add through every\n"
          "registered target's compile/load/run and records GFLOP/s, GB/s and\n"
          "the launch overhead, then the matmul and the add again with several\n"
          "threads for the thread efficiencies; the host device's concurrency is\n"
          "the cores this process may use. The result refreshes the machine's\n"
          "cached profile, which every command uses when given no --profile.\n");
}

static bool vkp__parse_long(const char *text, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || !end || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int vkp_cmd_calibrate(int argc, char **argv) {
  const char *output = NULL, *base = NULL;
  bool print = false;
  vkp_calibrate_options_t opt = {0};
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    long v = 0;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      vkp__calibrate_usage(stdout);
      return 0;
    } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
      output = argv[++i];
    } else if (!strcmp(a, "--profile") && has_value) {
      base = argv[++i];
    } else if (!strcmp(a, "--size") && has_value && vkp__parse_long(argv[i + 1], 1, 4096, &v)) {
      opt.matmul_size = (int32_t)v;
      ++i;
    } else if (!strcmp(a, "--elements") && has_value &&
               vkp__parse_long(argv[i + 1], 1, 1L << 28, &v)) {
      opt.elementwise = v;
      ++i;
    } else if (!strcmp(a, "--print")) {
      print = true;
    } else if (!strcmp(a, "--threads") && has_value &&
               vkp__parse_long(argv[i + 1], 1, 1024, &v)) {
      opt.threads = (int32_t)v;
      ++i;
    } else if (!strcmp(a, "--repeats") && has_value &&
               vkp__parse_long(argv[i + 1], 1, 1000, &v)) {
      opt.repeats = (int32_t)v;
      ++i;
    } else {
      fprintf(stderr, "vkpipe calibrate: bad argument '%s'\n", a);
      vkp__calibrate_usage(stderr);
      return VKP_TOOL_EXIT_USAGE;
    }
  }
  vkp_registry_t *registry = NULL;
  vkp_profile_t *profile = NULL;
  char *notes = NULL, *json = NULL;
  vkp_status_t st = vkp_registry_create_default(&registry);
  // VKPIPE_PROFILE set (a file, or 'default'): the machine's cache is not
  // in use, so it is left alone (the test suite relies on this).
  const char *env = getenv("VKPIPE_PROFILE");
  bool leave_cache = base || (env && env[0]);
  if (!st && leave_cache) {
    if (!base) st = vkp_profile_create_default(&profile);
    if (!st && base) st = vkp_profile_load(base, &profile);
    if (!st) st = vkp_profile_calibrate(profile, registry, &opt, &notes);
    if (!st) st = vkp_profile_set_device(profile, profile->host_device, vkp_host_cores());
  } else if (!st) {
    // The machine's cached profile, measured afresh.
    vkp_machine_profile_options_t mo = {.refresh = true, .calibrate = opt};
    st = vkp_profile_create_for_machine(registry, &mo, &profile, NULL, &notes);
  }
  if (!st && notes) fprintf(stderr, "%s", notes);
  if (!st)
    fprintf(stderr, "host device '%s': %d cores\n", profile->host_device,
            (int)vkp_profile_concurrency(profile, profile->host_device));
  if (!st && output) st = vkp_profile_save(profile, output);
  if (!st && output) printf("profile written to %s\n", output);
  if (!st && (print || (leave_cache && !output))) {
    st = vkp_profile_to_json(profile, &json);
    if (!st) printf("%s\n", json);
  }
  int rc = 0;
  if (st) {
    fprintf(stderr, "vkpipe calibrate: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    rc = VKP_TOOL_EXIT_FAILURE;
  }
  vkp_free(json);
  vkp_free(notes);
  vkp_profile_destroy(profile);
  vkp_registry_destroy(registry);
  return rc;
}
