// SPDX-License-Identifier: Apache-2.0
// The machine's profile: measured once by vkp_profile_calibrate, cached in
// the user's cache directory under a key naming the machine, the vkpipe
// version and the CPU kernels' source, read back on later runs
// (include/vkpipe/cost.h).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/sb.h"
#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "vkpipe/cost.h"

#ifndef VKP__VERSION
#define VKP__VERSION "unknown"
#endif

static uint64_t vkp__fnv1a(uint64_t h, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p) {
    h ^= *p;
    h *= 0x100000001b3ull;
  }
  return h;
}

// The CPU model line of /proc/cpuinfo, or "" where there is none.
static void vkp__cpu_model(char *buf, size_t size) {
  buf[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Processor", 9) != 0)
      continue;
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    snprintf(buf, size, "%s", colon + 1);
    break;
  }
  fclose(f);
}

vkp_status_t vkp_profile_cache_path(const vkp_registry_t *registry,
                                    const char *cache_dir, char **out_path) {
  *out_path = NULL;
  char model[256];
  vkp__cpu_model(model, sizeof model);
  char count[32];
  snprintf(count, sizeof count, "|%ld|", sysconf(_SC_NPROCESSORS_ONLN));
  // The calibration's method is part of the key: a profile measured the old
  // way (launch per whole run, 4 threads at most, device rates from staged
  // inputs, kernel classes without memory factors, attention from one layer
  // with constant keys, no kernel split cost) is measured again.
  uint64_t h = vkp__fnv1a(0xcbf29ce484222325ull, "calibration 8|");
  // So is the built-in CPU kernels' source (the prelude every cpu stage
  // compiles): a faster kernel makes a profile measured with the old one
  // overestimate its layers (MobileNetV2's first stage by 19% after the
  // stride-2 depthwise kernel changed), so a build with other kernels
  // measures again.
  h = vkp__fnv1a(h, vkp_codegen_c_prelude());
  h = vkp__fnv1a(h, "|");
  h = vkp__fnv1a(h, model);
  h = vkp__fnv1a(h, count);
  for (int32_t t = 0; t < vkp_registry_count(registry); ++t) {
    h = vkp__fnv1a(h, vkp_registry_get(registry, t)->vtable->name);
    h = vkp__fnv1a(h, ",");
  }
  char *root = vkp__file_cache_dir(cache_dir);
  if (!root) return VKP_OOM("profile cache path");
  *out_path = vkp__asprintf("%s/profile-%s-%016llx.json", root, VKP__VERSION,
                            (unsigned long long)h);
  vkp__free(root);
  return *out_path ? NULL : VKP_OOM("profile cache path");
}

vkp_status_t vkp_profile_create_for_machine(
    const vkp_registry_t *registry, const vkp_machine_profile_options_t *options,
    vkp_profile_t **out_profile, bool *out_measured, char **out_notes) {
  *out_profile = NULL;
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "machine profile"));
  VKP__ALLOCATOR_SCOPE(allocator);
  if (out_measured) *out_measured = false;
  if (out_notes) *out_notes = NULL;
  vkp_machine_profile_options_t o =
      options ? *options : (vkp_machine_profile_options_t){0};
  if (o.cores < 0 || o.cores > 1024)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "cores must be 0 (detect) or 1..1024, got %d", (int)o.cores);
  char *path = NULL, *notes = NULL;
  VKP_RETURN_IF_ERROR(vkp_profile_cache_path(registry, o.cache_dir, &path));
  vkp_profile_t *profile = NULL;
  vkp_status_t st = NULL;
  if (!o.refresh && access(path, R_OK) == 0) {
    st = vkp_profile_load(path, &profile);
    if (st) {
      // A damaged cache is measured again, and says so.
      vkp_status_t damaged = st;
      st = vkp__lines_appendf(&notes, "profile notes",
                              "cached profile unusable, measuring again: %s",
                              vkp_status_message(damaged));
      vkp_status_free(damaged);
      profile = NULL;
    }
  }
  if (!st && !profile) {
    char *cal_notes = NULL;
    st = vkp_profile_create_default(&profile);
    if (!st) st = vkp_profile_calibrate(profile, registry, &o.calibrate, &cal_notes);
    if (!st && cal_notes) {
      char *joined = vkp__asprintf("%s%s", notes ? notes : "", cal_notes);
      if (!joined) st = VKP_OOM("profile notes");
      vkp__free(notes);
      notes = joined;
    }
    vkp__free(cal_notes);
    if (!st && out_measured) *out_measured = true;
    bool busy = profile && profile->calibration_cpu_share > 0 &&
                profile->calibration_cpu_share < VKP_PROFILE_BUSY_SHARE;
    if (!st && busy && !o.refresh) {
      // Rates measured on a busy machine would hold every later run to them:
      // this run uses them, the next measures again.
      st = vkp__lines_appendf(&notes, "profile notes",
                              "profile not cached: measured while the machine was busy; "
                              "the next run measures again");
    } else if (!st) {
      // The cache is a convenience: a read-only home still gets a profile.
      vkp_status_t saved = vkp__dir_create_parent(path, 0755);
      if (!saved) saved = vkp_profile_save(profile, path);
      st = saved ? vkp__lines_appendf(&notes, "profile notes", "profile not cached: %s",
                                      vkp_status_message(saved))
                 : vkp__lines_appendf(&notes, "profile notes", "profile cached in %s", path);
      vkp_status_free(saved);
    }
  }
  if (!st)
    st = vkp_profile_set_device(profile, profile->host_device,
                                o.cores > 0 ? o.cores : vkp_host_cores());
  vkp__free(path);
  if (st) {
    vkp_profile_destroy(profile);
    vkp__free(notes);
    return st;
  }
  if (out_notes)
    *out_notes = notes;
  else
    vkp__free(notes);
  *out_profile = profile;
  return NULL;
}
