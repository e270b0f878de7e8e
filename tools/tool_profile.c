// SPDX-License-Identifier: Apache-2.0
// The cost profile of a command: a file, the defaults, or the machine's own,
// measured once and cached (tools/tool.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/tool.h"

static double vkp__tool_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct vkp__tool_progress_t {
  const char *command;
  double started;
} vkp__tool_progress_t;

// One line on stderr, growing with each target measured.
static void vkp__tool_progress(void *user, const char *target, int32_t done,
                               int32_t total) {
  vkp__tool_progress_t *p = user;
  if (done == 0)
    fprintf(stderr, "%s%s: first run on this machine: measuring its profile "
                    "(once, a few seconds; VKPIPE_PROFILE=default skips it):",
            strncmp(p->command, "vkpipe", 6) ? "vkpipe " : "", p->command);
  if (target)
    fprintf(stderr, " %s", target);
  else
    fprintf(stderr, ", done in %.1f s\n", vkp__tool_now() - p->started);
  fflush(stderr);
}

vkp_status_t vkp_tool_profile(const char *command, const char *path, int32_t cores,
                              const vkp_registry_t *registry,
                              vkp_profile_t **out_profile) {
  *out_profile = NULL;
  if (!path) {
    const char *env = getenv("VKPIPE_PROFILE");
    if (env && env[0]) path = env;
  }
  vkp_profile_t *profile = NULL;
  vkp_status_t st = NULL;
  if (path && strcmp(path, "default") == 0) {
    st = vkp_profile_create_default(&profile);
  } else if (path) {
    st = vkp_profile_load(path, &profile);
  } else {
    vkp__tool_progress_t progress = {.command = command, .started = vkp__tool_now()};
    vkp_machine_profile_options_t o = {
        .cores = cores,
        .calibrate = {.progress = vkp__tool_progress, .progress_user = &progress},
    };
    bool measured = false;
    st = vkp_profile_create_for_machine(registry, &o, &profile, &measured, NULL);
    // A measurement taken on a busy machine is used for this run only:
    // say so, since every estimate of the run follows it.
    if (!st && measured && profile->calibration_cpu_share > 0 &&
        profile->calibration_cpu_share < VKP_PROFILE_BUSY_SHARE)
      fprintf(stderr,
              "%s: the machine was busy while measuring (the calibrating thread got %.0f%% "
              "of a core): the profile is used for this run only and not cached; run "
              "'vkpipe calibrate' when it is quiet\n",
              command, 100.0 * profile->calibration_cpu_share);
  }
  if (!st && cores > 0) st = vkp_profile_set_device(profile, profile->host_device, cores);
  if (st) {
    vkp_profile_destroy(profile);
    return st;
  }
  *out_profile = profile;
  return NULL;
}
