// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the CPU target tests: compact graph building, a private
// compile cache directory, and the check against the double reference.
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
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

static inline vkp_attr_t at_i(const char *name, int64_t v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INT, .i = v};
}
static inline vkp_attr_t at_f(const char *name, double v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_FLOAT, .f = v};
}
static inline vkp_attr_t at_s(const char *name, const char *v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_STRING, .s = v};
}
static inline vkp_attr_t at_is(const char *name, int32_t n, const int64_t *v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = n};
}

static inline vkp_graph_t *g_new(const char *name) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create(name, &g));
  return g;
}

static inline void g_in(vkp_graph_t *g, const char *name, vkp_dtype_t dt, int32_t rank,
                        const int64_t *shape) {
  VKP_TEST_OK(vkp_graph_add_input(g, name, dt, rank, shape, NULL));
}

// A float32 constant of uniform random values in [lo, hi).
static inline void g_const(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name, int32_t rank,
                           const int64_t *shape, float lo, float hi) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= (size_t)shape[d];
  float *data = malloc(sizeof(float) * (n + 1));
  for (size_t i = 0; i < n; ++i) data[i] = vkp_test_rng_uniform(rng, lo, hi);
  VKP_TEST_OK(vkp_graph_add_constant(g, name, VKP_DTYPE_FLOAT32, rank, shape, data, NULL));
  free(data);
}

// Adds node `name` reading the comma-separated `ins` and writing `out`.
static inline void g_node(vkp_graph_t *g, const char *name, vkp_op_t op, const char *ins,
                          const char *out, int32_t n_attrs, const vkp_attr_t *attrs) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", ins);
  const char *names[16];
  int32_t n = 0;
  for (char *t = strtok(buf, ","); t && n < 16; t = strtok(NULL, ",")) names[n++] = t;
  const char *outs[1] = {out};
  VKP_TEST_OK(vkp_graph_add_node(g, name, op, n, names, 1, outs, n_attrs, attrs, NULL));
}

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
// max(|want|, rms(want)) (+1e-6 for exact zeros). Consumes `g`.
static inline void cpu_check(vkp_graph_t *g, vkp_test_rng_t *rng, uint64_t seed, float lo,
                             float hi, int32_t threads) {
  VKP_TEST_OK(vkp_graph_validate(g));
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu;
  VKP_TEST_OK(vkp_registry_lookup(reg, "cpu", &cpu));
  vkp_tensor_t ins[32], outs[32];
  cr_assert(g->n_inputs <= 32 && g->n_outputs <= 32);
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&ins[i], v->dtype, v->rank, v->shape));
    size_t n = vkp_tensor_numel(&ins[i]);
    for (size_t k = 0; k < n; ++k) {
      if (v->dtype == VKP_DTYPE_FLOAT32)
        ((float *)ins[i].data)[k] = vkp_test_rng_uniform(rng, lo, hi);
      else if (v->dtype == VKP_DTYPE_INT32)
        ((int32_t *)ins[i].data)[k] = (int32_t)vkp_test_rng_below(rng, 41) - 20;
      else if (v->dtype == VKP_DTYPE_INT64)
        ((int64_t *)ins[i].data)[k] = (int64_t)vkp_test_rng_below(rng, 41) - 20;
    }
  }
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir, .threads = threads};
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, &opt, ins, outs));
  double *want[32];
  cr_assert(vkp_test_ref_eval(g, ins, want), "reference lacks an op");
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    size_t n = vkp_tensor_numel(&outs[i]);
    double rms = 0;
    for (size_t k = 0; k < n; ++k) rms += want[i][k] * want[i][k];
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
      if (!(fabs(got - w) <= 1e-4 * scale + 1e-6)) {
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

#endif  // VKPIPE_TESTS_SUPPORT_CPU_CHECK_H_
