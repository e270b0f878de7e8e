// SPDX-License-Identifier: Apache-2.0
// `vkpipe calibrate`: measure each registered target's rates into a profile.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/cost.h"
#include "vkpipe/mpi.h"
#include "vkpipe/target.h"

// The numeric options and their ranges.
typedef struct vkp__calibrate_number_t {
  const char *name;
  long min, max;
} vkp__calibrate_number_t;

static const vkp__calibrate_number_t *vkp__calibrate_number(const char *arg) {
  static const vkp__calibrate_number_t numbers[] = {
      {"--size", 1, 4096}, {"--elements", 1, 1L << 28}, {"--threads", 1, 1024},
      {"--repeats", 1, 1000}};
  for (size_t k = 0; k < sizeof numbers / sizeof *numbers; ++k)
    if (!strcmp(arg, numbers[k].name)) return &numbers[k];
  return NULL;
}

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
          "                     (default: the cores, up to 64; 1 skips them)\n"
          "  --size N           matmul (6N x 4.5N) by (4.5N x N) (default 128)\n"
          "  --elements N       elements of the add benchmark (default 1048576)\n"
          "  --repeats N        timed runs per benchmark, median kept (default 5)\n"
          "\n"
          "Runs a matmul, a large add and a one-element add through every\n"
          "registered target's compile/load/run and records GFLOP/s, GB/s and\n"
          "the launch overhead, then the matmul and the add again with several\n"
          "threads for the thread efficiencies; the host device's concurrency is\n"
          "the cores this process may use. The result refreshes the machine's\n"
          "cached profile, which every command uses when given no --profile.\n"
          "When other processes held the cores while it measured, the output\n"
          "says so (the rates then read low): measure again when it is quiet.\n"
          "(A command that measures the profile itself on such a machine uses\n"
          "it for that run only and does not cache it.)\n"
          "\n"
          "Under mpirun (2 or more ranks) rank 0 also measures the link to rank\n"
          "1 by MPI ping-pong (8 B for the latency, 1 and 4 MiB for the\n"
          "bandwidth) into the profile's rank link (\"" VKP_PROFILE_RANK_LINK "\" ->\n"
          "\"" VKP_PROFILE_RANK_LINK "\"), which 'vkpipe partition --ranks' uses; the\n"
          "other ranks only answer the ping-pong. Give -o to keep it.\n");
}

// Under mpirun: ping-pong between rank 0 and rank 1 for the rank link.
// *out_measured on rank 0 (with 2 or more ranks); *out_done on the other
// ranks, which then have nothing more to do.
static vkp_status_t vkp__measure_rank_link(int *argc, char ***argv,
                                           bool *out_measured, double *out_latency_us,
                                           double *out_gbps, bool *out_done) {
  *out_measured = *out_done = false;
  int32_t rank = 0, size = 1;
  vkp_status_t st = vkp_mpi_init(argc, argv, &rank, &size);
  if (st || size < 2) return st;
  static const size_t sizes[3] = {8, 1u << 20, 4u << 20};
  static const int32_t iters[3] = {1000, 50, 20};
  double rtt[3] = {0};
  for (int k = 0; k < 3 && !st; ++k)
    st = vkp_mpi_pingpong(1, sizes[k], iters[k], &rtt[k]);
  if (st || rank != 0) {
    *out_done = !st;
    return st;
  }
  double dt = (rtt[2] - rtt[1]) / 2;
  *out_latency_us = rtt[0] / 2 * 1e6;
  *out_gbps = dt > 0 ? (double)(sizes[2] - sizes[1]) / dt / 1e9
                     : (double)sizes[2] / (rtt[2] / 2) / 1e9;
  *out_measured = true;
  fprintf(stderr, "rank link (MPI ping-pong, rank 0 <-> 1): %.2f us latency, "
                  "%.2f GB/s (round trips: 8 B %.2f us, 1 MiB %.1f us, 4 MiB %.1f us)\n",
          *out_latency_us, *out_gbps, rtt[0] * 1e6, rtt[1] * 1e6, rtt[2] * 1e6);
  return NULL;
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
    const vkp__calibrate_number_t *num = NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      vkp__calibrate_usage(stdout);
      return 0;
    } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
      output = argv[++i];
    } else if (!strcmp(a, "--profile") && has_value) {
      base = argv[++i];
    } else if (!strcmp(a, "--print")) {
      print = true;
    } else if ((num = vkp__calibrate_number(a))) {
      if (!has_value || !vkp__parse_long(argv[i + 1], num->min, num->max, &v)) {
        fprintf(stderr, "vkpipe calibrate: %s takes a whole number from %ld to %ld, not '%s'\n",
                a, num->min, num->max, has_value ? argv[i + 1] : "(nothing)");
        return VKP_TOOL_EXIT_USAGE;
      }
      ++i;
      if (!strcmp(a, "--size")) opt.matmul_size = (int32_t)v;
      else if (!strcmp(a, "--elements")) opt.elementwise = v;
      else if (!strcmp(a, "--threads")) opt.threads = (int32_t)v;
      else opt.repeats = (int32_t)v;
    } else {
      fprintf(stderr, "vkpipe calibrate: bad argument '%s'\n", a);
      vkp__calibrate_usage(stderr);
      return VKP_TOOL_EXIT_USAGE;
    }
  }
  // Under mpirun the link is measured first: the other ranks are then done.
  bool mpi = vkp_mpi_launched() && vkp_mpi_available();
  bool link_measured = false, done = false;
  double link_latency_us = 0, link_gbps = 0;
  vkp_status_t st = NULL;
  if (mpi)
    st = vkp__measure_rank_link(&argc, &argv, &link_measured, &link_latency_us,
                                &link_gbps, &done);
  if (done) {
    vkp_mpi_finalize();
    return 0;
  }
  vkp_registry_t *registry = NULL;
  vkp_profile_t *profile = NULL;
  char *notes = NULL, *json = NULL;
  if (!st) st = vkp_registry_create_default(&registry);
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
  if (!st && link_measured)
    st = vkp_profile_set_link(profile, VKP_PROFILE_RANK_LINK, VKP_PROFILE_RANK_LINK,
                              link_latency_us, link_gbps);
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
  if (mpi) {
    if (rc) vkp_mpi_abort(rc);
    vkp_mpi_finalize();
  }
  return rc;
}
