// SPDX-License-Identifier: Apache-2.0
#include "support/test_support.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/scalar.h"

uint64_t vkp_test_rng_init(vkp_test_rng_t *rng) {
  const char *env = getenv("VKPIPE_TEST_SEED");
  uint64_t seed;
  if (env && env[0]) {
    seed = strtoull(env, NULL, 0);
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
  }
  rng->state = seed ? seed : 0x9e3779b97f4a7c15ull;
  return seed;
}

uint64_t vkp_test_rng_next(vkp_test_rng_t *rng) {
  uint64_t x = rng->state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  rng->state = x;
  return x * 0x2545f4914f6cdd1dull;
}

float vkp_test_rng_uniform(vkp_test_rng_t *rng, float lo, float hi) {
  double u = (double)(vkp_test_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
  return (float)(lo + (hi - lo) * u);
}

uint32_t vkp_test_rng_below(vkp_test_rng_t *rng, uint32_t n) {
  return n ? (uint32_t)(vkp_test_rng_next(rng) % n) : 0;
}

void vkp_test_fill_uniform(vkp_test_rng_t *rng, vkp_tensor_t *t, float lo,
                           float hi) {
  float *p = t->data;
  size_t n = vkp_tensor_numel(t);
  for (size_t i = 0; i < n; ++i) p[i] = vkp_test_rng_uniform(rng, lo, hi);
}

bool vkp_test_allclose(const vkp_tensor_t *a, const vkp_tensor_t *b, double rtol,
                       double atol, char *msg, size_t msg_size) {
  if (a->dtype != b->dtype || a->rank != b->rank) {
    snprintf(msg, msg_size, "dtype/rank differ: %s rank %d vs %s rank %d",
             vkp_dtype_name(a->dtype), (int)a->rank, vkp_dtype_name(b->dtype),
             (int)b->rank);
    return false;
  }
  for (int32_t i = 0; i < a->rank; ++i) {
    if (a->shape[i] != b->shape[i]) {
      snprintf(msg, msg_size, "dim %d differs: %lld vs %lld", (int)i,
               (long long)a->shape[i], (long long)b->shape[i]);
      return false;
    }
  }
  size_t n = vkp_tensor_numel(a);
  size_t bad = 0, first_bad = 0;
  double max_err = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = vkp__scalar_get_f(a->dtype, a->data, i);
    double y = vkp__scalar_get_f(b->dtype, b->data, i);
    double err = fabs(x - y);
    bool ok = err <= atol + rtol * fabs(y) || (isnan(x) && isnan(y)) ||
              (isinf(x) && isinf(y) && (x > 0) == (y > 0));
    if (!ok) {
      if (!bad) first_bad = i;
      ++bad;
    }
    if (!isnan(err) && err > max_err) max_err = err;
  }
  if (bad) {
    double x = a->dtype == VKP_DTYPE_FLOAT32 ? ((const float *)a->data)[first_bad] : 0;
    double y = b->dtype == VKP_DTYPE_FLOAT32 ? ((const float *)b->data)[first_bad] : 0;
    snprintf(msg, msg_size,
             "%zu of %zu elements differ; first at flat index %zu: %.9g vs "
             "%.9g; max abs error %.3g",
             bad, n, first_bad, x, y, max_err);
    return false;
  }
  return true;
}

// Counts an allocation; false when it is the one to fail. Atomic: a pipeline
// allocates with its allocator on its stage threads too.
static bool vkp__count_take(vkp_test_counting_alloc_t *s) {
  bool fail = atomic_fetch_add(&s->count, 1) + 1 == s->fail_at;
  if (fail) s->failed = true;
  return !fail;
}

static void *vkp__count_alloc(void *ctx, size_t size) {
  vkp_test_counting_alloc_t *s = ctx;
  if (!vkp__count_take(s)) return NULL;
  void *p = malloc(size);
  if (p) atomic_fetch_add(&s->live, 1);
  return p;
}

static void *vkp__count_realloc(void *ctx, void *ptr, size_t size) {
  vkp_test_counting_alloc_t *s = ctx;
  if (!vkp__count_take(s)) return NULL;
  void *p = realloc(ptr, size);
  if (p && !ptr) atomic_fetch_add(&s->live, 1);
  return p;
}

static void vkp__count_free(void *ctx, void *ptr) {
  vkp_test_counting_alloc_t *s = ctx;
  if (ptr) atomic_fetch_sub(&s->live, 1);
  free(ptr);
}

const vkp_allocator_t *vkp_test_counting_alloc_init(vkp_test_counting_alloc_t *state,
                                                    int64_t fail_at) {
  memset(state, 0, sizeof(*state));
  state->fail_at = fail_at;
  state->allocator = (vkp_allocator_t){.alloc = vkp__count_alloc,
                                       .realloc = vkp__count_realloc,
                                       .free = vkp__count_free,
                                       .ctx = state};
  return &state->allocator;
}

// The scope install opened on this thread (one at a time).
static _Thread_local vkp__allocator_scope_t vkp__installed;

void vkp_test_counting_alloc_install(vkp_test_counting_alloc_t *state,
                                     int64_t fail_at) {
  vkp__installed = vkp__allocator_push(vkp_test_counting_alloc_init(state, fail_at));
}

void vkp_test_counting_alloc_uninstall(void) { vkp__allocator_pop(&vkp__installed); }

const char *vkp_test_source_dir(void) {
  const char *d = getenv("VKPIPE_SOURCE_DIR");
  return d ? d : ".";
}

const char *vkp_test_binary_dir(void) {
  const char *d = getenv("VKPIPE_BINARY_DIR");
  return d ? d : ".";
}

char *vkp_test_read_file(const char *path, size_t *out_size) {
  void *data = NULL;
  size_t n = 0;
  vkp_status_t st = vkp__file_read(path, (size_t)1 << 30, "a test file", &data, &n);
  if (st) {
    vkp_status_free(st);
    return NULL;
  }
  // Callers free with free(): copy out of the library's allocator.
  char *buf = malloc(n + 1);
  if (buf) {
    memcpy(buf, data, n + 1);
    if (out_size) *out_size = n;
  }
  vkp__free(data);
  return buf;
}
