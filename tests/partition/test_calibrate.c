// SPDX-License-Identifier: Apache-2.0
// partition/calibrate.c: rates come out positive and finite for every target
// that runs; a target that cannot run a benchmark keeps its rates and is
// named in the notes. No timing is asserted. partition/profile_cache.c: the
// machine's profile is measured once into a temporary cache directory, then
// read back (never the user's cache).
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partition/partition_fixtures.h"
#include "support/test_cli.h"
#include "vkpipe/cost.h"

Test(calibrate, builtin_targets_get_rates, .timeout = 120) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  // A fake that refuses matmul: calibration goes on without it.
  fx_add_fake(reg, "fc", FX_OP(VKP_OP_MATMUL));
  vkp_profile_t *prof;
  VKP_TEST_OK(vkp_profile_create_default(&prof));
  vkp_profile_target_t before = *vkp_profile_target(prof, "fc");
  vkp_calibrate_options_t opt = {.matmul_size = 24, .elementwise = 2048, .repeats = 2};
  char *notes = NULL;
  VKP_TEST_OK(vkp_profile_calibrate(prof, reg, &opt, &notes));
  cr_assert(notes);
  cr_assert(strstr(notes, "fc: kept its previous rates"), "%s", notes);
  const vkp_profile_target_t *after = vkp_profile_target(prof, "fc");
  cr_assert_eq(after->gflops, before.gflops);
  for (int32_t t = 0; t < vkp_registry_count(reg); ++t) {
    const char *name = vkp_registry_get(reg, t)->vtable->name;
    if (!strcmp(name, "fc")) continue;
    char needle[64];
    snprintf(needle, sizeof needle, "%s: ", name);
    cr_assert(strstr(notes, needle), "no note for %s:\n%s", name, notes);
    const vkp_profile_target_t *r = vkp_profile_target(prof, name);
    cr_assert(isfinite(r->gflops) && r->gflops > 0);
    cr_assert(isfinite(r->gbps) && r->gbps > 0);
    cr_assert(isfinite(r->launch_us) && r->launch_us >= 0);
    cr_assert(isfinite(r->thread_split_us) && r->thread_split_us >= 0);
    // A host target measured with several threads says what a kernel's
    // split costs (no more than the small matmul it was measured on).
    if (strcmp(vkp_profile_device_of(prof, name), prof->host_device) == 0 &&
        vkp_host_cores() > 1 && strstr(strstr(notes, needle), "threads: compute"))
      cr_assert(strstr(strstr(notes, needle), "a kernel's split") && r->thread_split_us < 1000,
                "%s: %g us\n%s", name, r->thread_split_us, notes);
    // A device's rates come from its device-resident chains, not from the
    // staged runs (those failing is named in the note instead).
    if (strcmp(vkp_profile_device_of(prof, name), prof->host_device) != 0) {
      const char *note = strstr(notes, needle);
      const char *end = strchr(note, '\n');
      const char *chains = strstr(note, "(inside a stage: chains of");
      cr_assert(chains && (!end || chains < end), "%s", notes);
    }
  }
  // The cpu target names a class per layer: each class gets the factor its
  // calibration layer measured (or keeps its own, saying why).
  const char *classes = strstr(notes, "cpu kernel classes (one thread):");
  cr_assert(classes, "%s", notes);
  static const char *const kernels[] = {"conv_pointwise", "conv_winograd",
                                        "conv_direct",    "conv_winograd4",
                                        "conv_gemm",      "conv_depthwise",
                                        "conv_depthwise_s2", "attention"};
  vkp_profile_t *defaults;
  VKP_TEST_OK(vkp_profile_create_default(&defaults));
  const vkp_profile_target_t *cpu = vkp_profile_target(prof, "cpu");
  const vkp_profile_target_t *cpu0 = vkp_profile_target(defaults, "cpu");
  int32_t measured = 0;
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
    char needle[64];
    snprintf(needle, sizeof needle, " %s ", kernels[k]);
    cr_assert(strstr(classes, needle), "%s missing: %s", kernels[k], classes);
    double f = vkp_profile_kernel_scale(cpu, kernels[k]);
    cr_assert(isfinite(f) && f > 0.01 && f < 100, "%s: %g", kernels[k], f);
    measured += f != vkp_profile_kernel_scale(cpu0, kernels[k]);
  }
  cr_assert_geq(measured, 5, "%s", classes);
  // The classes calibrated by a pair of layers get a memory factor, or say
  // why not; the others have none.
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
    double m = vkp_profile_kernel_memory_scale(cpu, kernels[k]);
    char needle[64];
    snprintf(needle, sizeof needle, " %s ", kernels[k]);
    const char *at = strstr(classes, needle);
    const char *end = strchr(at, ';');
    size_t len = end ? (size_t)(end - at) : strlen(at);
    // conv_pointwise, conv_winograd, conv_direct and attention.
    bool pair = k < 3 || strcmp(kernels[k], "attention") == 0;
    if (!pair) {
      cr_assert_eq(m, 0.0, "%s", kernels[k]);
      continue;
    }
    char item[256];
    snprintf(item, sizeof item, "%.*s", (int)len, at);
    if (m > 0)
      cr_assert(m > 0.01 && m < 100 && strstr(item, ", memory "), "%s: %g", item, m);
    else
      cr_assert(strstr(item, "no memory factor") || strstr(item, "kept"), "%s", item);
  }
  // no_kernel_classes keeps them.
  vkp_profile_t *kept;
  VKP_TEST_OK(vkp_profile_create_default(&kept));
  vkp_calibrate_options_t keep = opt;
  keep.no_kernel_classes = true;
  keep.threads = 1;
  char *keep_notes = NULL;
  VKP_TEST_OK(vkp_profile_calibrate(kept, reg, &keep, &keep_notes));
  cr_assert(!strstr(keep_notes, "kernel classes"), "%s", keep_notes);
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
    cr_assert_eq(vkp_profile_kernel_scale(vkp_profile_target(kept, "cpu"), kernels[k]),
                 vkp_profile_kernel_scale(cpu0, kernels[k]));
    cr_assert_eq(vkp_profile_kernel_memory_scale(vkp_profile_target(kept, "cpu"), kernels[k]),
                 vkp_profile_kernel_memory_scale(cpu0, kernels[k]));
  }
  vkp_free(keep_notes);
  vkp_profile_destroy(kept);
  vkp_profile_destroy(defaults);
  // The result is a loadable profile.
  char *json;
  VKP_TEST_OK(vkp_profile_to_json(prof, &json));
  vkp_profile_t *back;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &back));
  vkp_profile_destroy(back);
  vkp_free(json);
  vkp_free(notes);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
}

Test(calibrate, bad_sizes, .timeout = 120) {
  vkp_registry_t *reg = fx_registry_ab();
  vkp_profile_t *prof;
  VKP_TEST_OK(vkp_profile_create_default(&prof));
  vkp_calibrate_options_t opt = {.matmul_size = 100000};
  char *notes = NULL;
  vkp_status_t st = vkp_profile_calibrate(prof, reg, &opt, &notes);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert_null(notes);
  vkp_status_free(st);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
}

// Fakes only (no compiler, no device): the cache logic, fast.
static vkp_machine_profile_options_t quick(const char *dir, int32_t cores) {
  vkp_machine_profile_options_t o = {
      .cache_dir = dir,
      .cores = cores,
      .calibrate = {.matmul_size = 8, .elementwise = 64, .repeats = 1, .threads = 1},
  };
  return o;
}

Test(profile_cache, measured_once_then_read_back, .init = vkp_test_scratch_make,
     .fini = vkp_test_scratch_remove, .timeout = 60) {
  vkp_registry_t *reg = fx_registry_ab();
  char dir[512];
  snprintf(dir, sizeof dir, "%s/cache/nested", vkp_test_scratch);
  char *path = NULL;
  VKP_TEST_OK(vkp_profile_cache_path(reg, dir, &path));
  cr_assert(strncmp(path, dir, strlen(dir)) == 0, "%s", path);
  cr_assert(strstr(path, "/profile-"), "%s", path);
  cr_assert(access(path, F_OK) != 0);
  vkp_machine_profile_options_t o = quick(dir, 3);
  vkp_profile_t *first = NULL;
  bool measured = false;
  char *notes = NULL;
  // A calibration whose timed runs got under VKP_PROFILE_BUSY_SHARE of a
  // core (the suite's other tests compiling beside it) is rightly not
  // cached (busy_machine_is_not_cached): measure again, a few times.
  for (int tries = 1;; ++tries) {
    VKP_TEST_OK(vkp_profile_create_for_machine(reg, &o, &first, &measured, &notes));
    if (!notes || !strstr(notes, "the machine was busy") || tries == 10) break;
    vkp_profile_destroy(first);
    vkp_free(notes);
    first = NULL;
    notes = NULL;
  }
  cr_assert(measured);
  cr_assert(notes && strstr(notes, "profile cached in"), "%s", notes);
  cr_assert_eq(access(path, R_OK), 0, "no cache file at %s", path);
  cr_assert_eq(vkp_profile_concurrency(first, first->host_device), 3);
  vkp_free(notes);
  // The second run reads the file: nothing measured, same rates; the cores
  // are this run's.
  struct stat before;
  cr_assert_eq(stat(path, &before), 0);
  o.cores = 0;
  vkp_profile_t *second = NULL;
  VKP_TEST_OK(vkp_profile_create_for_machine(reg, &o, &second, &measured, NULL));
  cr_assert(!measured);
  cr_assert_eq(vkp_profile_concurrency(second, second->host_device), vkp_host_cores());
  cr_assert_eq(first->n_targets, second->n_targets);
  for (int32_t t = 0; t < first->n_targets; ++t) {
    const vkp_profile_target_t *x = &first->targets[t];
    const vkp_profile_target_t *y = vkp_profile_target(second, x->target);
    cr_assert_float_eq(x->gflops, y->gflops, 1e-9 * x->gflops);
    cr_assert_float_eq(x->gbps, y->gbps, 1e-9 * x->gbps);
  }
  struct stat after;
  cr_assert_eq(stat(path, &after), 0);
  cr_assert_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  cr_assert_eq(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  // refresh measures again.
  o.refresh = true;
  vkp_profile_t *third = NULL;
  VKP_TEST_OK(vkp_profile_create_for_machine(reg, &o, &third, &measured, NULL));
  cr_assert(measured);
  // A damaged cache is measured again, with a note.
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs("{not json", f);
  fclose(f);
  o.refresh = false;
  vkp_profile_t *fourth = NULL;
  VKP_TEST_OK(vkp_profile_create_for_machine(reg, &o, &fourth, &measured, &notes));
  cr_assert(measured);
  cr_assert(notes && strstr(notes, "unusable"), "%s", notes);
  vkp_free(notes);
  vkp_free(path);
  vkp_profile_destroy(first);
  vkp_profile_destroy(second);
  vkp_profile_destroy(third);
  vkp_profile_destroy(fourth);
  vkp_registry_destroy(reg);
}

Test(profile_cache, keyed_by_targets_and_version, .timeout = 60) {
  vkp_registry_t *ab = fx_registry_ab();
  vkp_registry_t *abc = fx_registry_ab();
  fx_add_fake(abc, "fc", FX_NONE);
  char *p1 = NULL, *p2 = NULL;
  VKP_TEST_OK(vkp_profile_cache_path(ab, "/nowhere", &p1));
  VKP_TEST_OK(vkp_profile_cache_path(abc, "/nowhere", &p2));
  cr_assert_str_neq(p1, p2);
  cr_assert(strstr(p1, "/nowhere/profile-0."), "%s", p1);
  vkp_free(p1);
  vkp_free(p2);
  vkp_registry_destroy(ab);
  vkp_registry_destroy(abc);
}

Test(profile_cache, unwritable_cache_still_gives_a_profile, .init = vkp_test_scratch_make,
     .fini = vkp_test_scratch_remove, .timeout = 60) {
  vkp_registry_t *reg = fx_registry_ab();
  // A file where the directory should be.
  vkp_test_write_text("blocker", "");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/blocker/sub", vkp_test_scratch);
  vkp_machine_profile_options_t o = quick(dir, 2);
  vkp_profile_t *prof = NULL;
  char *notes = NULL;
  VKP_TEST_OK(vkp_profile_create_for_machine(reg, &o, &prof, NULL, &notes));
  cr_assert(notes && strstr(notes, "profile not cached"), "%s", notes);
  cr_assert_eq(vkp_profile_concurrency(prof, prof->host_device), 2);
  o.cores = -1;
  vkp_profile_t *bad = NULL;
  vkp_status_t st = vkp_profile_create_for_machine(reg, &o, &bad, NULL, NULL);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert_null(bad);
  vkp_status_free(st);
  vkp_free(notes);
  vkp_profile_destroy(prof);
  vkp_registry_destroy(reg);
}

Test(profile_cache, thread_efficiencies_round_trip, .timeout = 30) {
  const char *json =
      "{\"targets\": {\"cpu\": {\"thread_compute_eff\": 0.75, \"thread_memory_eff\": 0.25}}}";
  vkp_profile_t *p = NULL;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &p));
  const vkp_profile_target_t *cpu = vkp_profile_target(p, "cpu");
  cr_assert_float_eq(cpu->thread_compute_eff, 0.75, 1e-12);
  cr_assert_float_eq(cpu->thread_memory_eff, 0.25, 1e-12);
  // Threads scale the roofline's two terms separately.
  vkp_op_cost_t work = {.flops = 1e9, .bytes = 0};
  double one = vkp_roofline_seconds_threads(cpu, &work, 1);
  double three = vkp_roofline_seconds_threads(cpu, &work, 3);
  double launch = cpu->launch_us * 1e-6;
  cr_assert_float_eq((one - launch) / (three - launch), 2.5, 1e-9);
  char *text = NULL;
  VKP_TEST_OK(vkp_profile_to_json(p, &text));
  vkp_profile_t *back = NULL;
  VKP_TEST_OK(vkp_profile_load_json(text, strlen(text), &back));
  cr_assert_float_eq(vkp_profile_target(back, "cpu")->thread_compute_eff, 0.75, 1e-12);
  vkp_free(text);
  vkp_profile_destroy(back);
  vkp_profile_destroy(p);
  const char *bad = "{\"targets\": {\"cpu\": {\"thread_compute_eff\": 1.5}}}";
  vkp_status_t st = vkp_profile_load_json(bad, strlen(bad), &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "thread"), "%s", vkp_status_message(st));
  vkp_status_free(st);
}

// Busy loops on every core, so that a calibration on this machine gets a
// fraction of one.
typedef struct hogs_t {
  pthread_t threads[64];
  int32_t n;
  atomic_bool stop;
} hogs_t;

static void *hog_main(void *arg) {
  hogs_t *h = arg;
  volatile uint64_t x = 0;
  while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) x = x + 1;
  return NULL;
}

static void hogs_start(hogs_t *h) {
  atomic_init(&h->stop, false);
  h->n = 3 * vkp_host_cores();
  if (h->n > 64) h->n = 64;
  for (int32_t i = 0; i < h->n; ++i)
    cr_assert_eq(pthread_create(&h->threads[i], NULL, hog_main, h), 0);
}

static void hogs_stop(hogs_t *h) {
  atomic_store(&h->stop, true);
  for (int32_t i = 0; i < h->n; ++i) pthread_join(h->threads[i], NULL);
}

// A calibration whose timed runs got a fraction of a core says the machine
// was busy, records the share, and its profile is not cached (the next run
// measures again); asked to refresh (vkpipe calibrate), it is cached anyway.
Test(profile_cache, busy_machine_is_not_cached, .init = vkp_test_scratch_make,
     .fini = vkp_test_scratch_remove, .timeout = 120) {
  const char *names[] = {"ref"};
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  char dir[512];
  snprintf(dir, sizeof dir, "%s/cache", vkp_test_scratch);
  char *path = NULL;
  VKP_TEST_OK(vkp_profile_cache_path(reg, dir, &path));
  vkp_machine_profile_options_t o = {
      .cache_dir = dir,
      .calibrate = {.matmul_size = 64, .elementwise = 4096, .repeats = 5, .threads = 1},
  };
  hogs_t hogs;
  hogs_start(&hogs);
  vkp_profile_t *prof = NULL;
  bool measured = false;
  char *notes = NULL;
  vkp_status_t st = vkp_profile_create_for_machine(reg, &o, &prof, &measured, &notes);
  // The scheduler may still hand a short calibration whole slices (it did
  // once in about ten runs beside the suite's other tests): measure again
  // while the hogs have not taken their share yet.
  for (int tries = 1; !st && tries < 4 && prof->calibration_cpu_share >= VKP_PROFILE_BUSY_SHARE;
       ++tries) {
    vkp_profile_destroy(prof);
    vkp_free(notes);
    prof = NULL;
    notes = NULL;
    st = vkp_profile_create_for_machine(reg, &o, &prof, &measured, &notes);
  }
  vkp_profile_t *refreshed = NULL;
  char *notes2 = NULL;
  o.refresh = true;
  if (!st) st = vkp_profile_create_for_machine(reg, &o, &refreshed, &measured, &notes2);
  hogs_stop(&hogs);
  VKP_TEST_OK(st);
  cr_assert(prof->calibration_cpu_share > 0 &&
                prof->calibration_cpu_share < VKP_PROFILE_BUSY_SHARE,
            "share %g with %d busy threads", prof->calibration_cpu_share, (int)hogs.n);
  cr_assert(notes && strstr(notes, "the machine was busy"), "%s", notes ? notes : "");
  cr_assert(strstr(notes, "profile not cached"), "%s", notes);
  cr_assert(strstr(notes2, "profile cached in"), "%s", notes2);
  cr_assert_eq(access(path, R_OK), 0);
  vkp_free(notes);
  vkp_free(notes2);
  vkp_free(path);
  vkp_profile_destroy(prof);
  vkp_profile_destroy(refreshed);
  vkp_registry_destroy(reg);
}
