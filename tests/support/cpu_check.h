// SPDX-License-Identifier: Apache-2.0
// The check the cpu tests (tests/codegen/c, tests/runtime/cpu) share: a
// private compile cache directory, and a graph (built with test_graph.h) run
// on "cpu" against the double-precision reference (ref_double.h).
#ifndef VKPIPE_TESTS_SUPPORT_CPU_CHECK_H_
#define VKPIPE_TESTS_SUPPORT_CPU_CHECK_H_

#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/ref_double.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

static inline char *cpu_test_cache_dir(void) {
  char *dir = strdup("/tmp/vkpipe-cpu-test-XXXXXX");
  cr_assert(mkdtemp(dir) != NULL);
  return dir;
}

static inline void cpu_test_remove_dir(char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
  free(dir);
}

// Validates `g`, runs it on "cpu" with fresh random inputs in [lo, hi) and
// checks every output against the double reference: |got - want| <= 1e-4 *
// max(|want|, rms(want)) (+1e-6 for exact zeros), NaN where the reference
// has NaN. With `nan_every` > 0, about one float input element in that many
// is NaN. Consumes `g`.
static inline void cpu_check_nan(vkp_graph_t *g, vkp_test_rng_t *rng, uint64_t seed, float lo,
                                 float hi, int32_t threads, uint32_t nan_every) {
  g_validate(g);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu;
  VKP_TEST_OK(vkp_registry_lookup(reg, "cpu", &cpu));
  vkp_tensor_t ins[32], outs[32];
  cr_assert(g->n_inputs <= 32 && g->n_outputs <= 32);
  g_random_inputs(g, rng, lo, hi, ins);
  for (int32_t i = 0; nan_every && i < g->n_inputs; ++i) {
    if (ins[i].dtype != VKP_DTYPE_FLOAT32) continue;
    size_t n = vkp_tensor_numel(&ins[i]);
    for (size_t k = 0; k < n; ++k)
      if (vkp_test_rng_below(rng, nan_every) == 0) ((float *)ins[i].data)[k] = NAN;
  }
  char *dir = cpu_test_cache_dir();
  // VKPIPE_TEST_MARCH: the stages' -march (default native), to run the
  // kernels' AVX2 (x86-64-v3) and baseline (x86-64) paths on this CPU.
  vkp_compile_options_t opt = {.cache_dir = dir, .threads = threads,
                               .march = getenv("VKPIPE_TEST_MARCH")};
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, &opt, ins, outs));
  double *want[32];
  cr_assert(vkp_test_ref_eval(g, ins, want), "reference lacks an op");
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    size_t n = vkp_tensor_numel(&outs[i]);
    double rms = 0;
    for (size_t k = 0; k < n; ++k)
      if (!isnan(want[i][k])) rms += want[i][k] * want[i][k];
    rms = n ? sqrt(rms / (double)n) : 0;
    size_t bad = n;
    double bad_got = 0, bad_want = 0;
    for (size_t k = 0; k < n && bad == n; ++k) {
      double got;
      switch (outs[i].dtype) {
        case VKP_DTYPE_FLOAT32: got = ((float *)outs[i].data)[k]; break;
        case VKP_DTYPE_INT32: got = ((int32_t *)outs[i].data)[k]; break;
        default: got = (double)((int64_t *)outs[i].data)[k]; break;
      }
      double w = want[i][k], scale = fabs(w) > rms ? fabs(w) : rms;
      if (isnan(w) ? !isnan(got) : !(fabs(got - w) <= 1e-4 * scale + 1e-6)) {
        bad = k;
        bad_got = got;
        bad_want = w;
      }
    }
    cr_assert(bad == n, "graph '%s' output %d element %zu: got %.9g, want %.9g (seed %llu)",
              g->name, (int)i, bad, bad_got, bad_want, (unsigned long long)seed);
    free(want[i]);
    vkp_tensor_deinit(&outs[i]);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) vkp_tensor_deinit(&ins[i]);
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

static inline void cpu_check(vkp_graph_t *g, vkp_test_rng_t *rng, uint64_t seed, float lo,
                             float hi, int32_t threads) {
  cpu_check_nan(g, rng, seed, lo, hi, threads, 0);
}

#endif  // VKPIPE_TESTS_SUPPORT_CPU_CHECK_H_
