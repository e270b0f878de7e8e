// SPDX-License-Identifier: Apache-2.0
// The cpu stage's thread pool (pool.h). A job is published under the mutex
// with a new generation number; workers wake (after a short spin, since the
// next kernel usually follows within microseconds), take task indices from
// an atomic counter, and the last one to finish signals the caller, which
// has been taking tasks too. Spinning is bounded: on a machine whose cores
// are shared with other pipeline stages a spinning worker steals their time.
#define _GNU_SOURCE  // pthread_setaffinity_np, CPU_SET
#include "runtime/cpu/pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "base/alloc.h"

// Polls of the generation (or of the finish count) before sleeping.
#define VKP__POOL_SPIN 4000

typedef struct vkp__worker_t {
  struct vkp_cpu_pool_t *pool;
  int id;
} vkp__worker_t;

struct vkp_cpu_pool_t {
  int32_t n;  // workers, the caller included
  pthread_t *threads;
  vkp__worker_t *args;
  int32_t started;
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  atomic_uint_fast64_t generation;
  bool stop;  // under mu
  // The current job (written before the generation moves).
  vkp_cpu_task_fn fn;
  void *ctx;
  ptrdiff_t n_tasks;
  atomic_ptrdiff_t next;
  atomic_int busy;  // workers 1..n-1 still in the job
  // Pinning (NULL: none): worker i runs on cpus[i % n_cpus]; the caller,
  // worker 0, is pinned when it first runs a job, and again when another
  // thread becomes the caller.
  int32_t *cpus;
  int32_t n_cpus;
  bool caller_pinned;
  pthread_t caller;
};

static inline void vkp__pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void vkp__take_tasks(vkp_cpu_pool_t *p, int worker) {
  for (;;) {
    ptrdiff_t t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    if (t >= p->n_tasks) return;
    p->fn(p->ctx, t, worker);
  }
}

static void *vkp__worker_main(void *arg) {
  vkp__worker_t *w = arg;
  vkp_cpu_pool_t *p = w->pool;
  uint_fast64_t seen = 0;
  for (;;) {
    uint_fast64_t g = seen;
    for (int i = 0; i < VKP__POOL_SPIN; ++i) {
      g = atomic_load_explicit(&p->generation, memory_order_acquire);
      if (g != seen) break;
      vkp__pause();
    }
    if (g == seen) {
      pthread_mutex_lock(&p->mu);
      while (!p->stop &&
             (g = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen)
        pthread_cond_wait(&p->wake, &p->mu);
      bool stop = p->stop;
      pthread_mutex_unlock(&p->mu);
      if (stop) return NULL;
    }
    seen = g;
    vkp__take_tasks(p, w->id);
    if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

// Pins `thread` to the cpu of worker `id`; an errno value on failure (a
// cpu outside the process's affinity mask is refused by the kernel).
static int vkp__pin(pthread_t thread, const int32_t *cpus, int32_t n_cpus, int id) {
  if (!cpus || n_cpus <= 0) return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  int32_t cpu = cpus[id % n_cpus];
  if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(thread, sizeof set, &set);
}

vkp_status_t vkp_cpu_pool_create(int32_t workers, const int32_t *cpus, int32_t n_cpus,
                                 vkp_cpu_pool_t **out_pool) {
  *out_pool = NULL;
  if (workers < 1) workers = 1;
  vkp_cpu_pool_t *p = vkp__calloc(1, sizeof *p);
  if (!p) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "cpu thread pool");
  p->n = workers;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->next, 0);
  atomic_init(&p->busy, 0);
  if (cpus && n_cpus > 0) {
    p->cpus = vkp__calloc((size_t)n_cpus, sizeof *p->cpus);
    if (!p->cpus) {
      vkp_cpu_pool_destroy(p);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "cpu thread pool");
    }
    memcpy(p->cpus, cpus, (size_t)n_cpus * sizeof *p->cpus);
    p->n_cpus = n_cpus;
  }
  if (workers > 1) {
    p->threads = vkp__calloc((size_t)workers, sizeof *p->threads);
    p->args = vkp__calloc((size_t)workers, sizeof *p->args);
    if (!p->threads || !p->args) {
      vkp_cpu_pool_destroy(p);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "cpu thread pool");
    }
    for (int32_t i = 1; i < workers; ++i) {
      p->args[i] = (vkp__worker_t){p, (int)i};
      int rc = pthread_create(&p->threads[i], NULL, vkp__worker_main, &p->args[i]);
      if (rc != 0) {
        vkp_cpu_pool_destroy(p);
        return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                               "cannot start thread %d of %d for a cpu stage: %s",
                               (int)i, (int)workers, strerror(rc));
      }
      p->started = i;
      rc = vkp__pin(p->threads[i], p->cpus, p->n_cpus, (int)i);
      if (rc != 0) {
        int32_t cpu = p->cpus[i % p->n_cpus];
        vkp_cpu_pool_destroy(p);
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "cannot pin thread %d of a cpu stage to cpu %d: %s", (int)i,
                               (int)cpu, strerror(rc));
      }
    }
  }
  *out_pool = p;
  return NULL;
}

void vkp_cpu_pool_destroy(vkp_cpu_pool_t *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int32_t i = 1; i <= p->started; ++i) pthread_join(p->threads[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  vkp__free(p->threads);
  vkp__free(p->args);
  vkp__free(p->cpus);
  vkp__free(p);
}

int32_t vkp_cpu_pool_workers(const vkp_cpu_pool_t *p) { return p ? p->n : 1; }

void vkp_cpu_pool_bind_caller(vkp_cpu_pool_t *p) {
  if (!p || !p->n_cpus) return;
  pthread_t self = pthread_self();
  if (p->caller_pinned && pthread_equal(p->caller, self)) return;
  // The cpus were checked when the stage loaded; a refusal now (the
  // process's mask shrank since) leaves the caller where it was.
  (void)vkp__pin(self, p->cpus, p->n_cpus, 0);
  p->caller = self;
  p->caller_pinned = true;
}

void vkp_cpu_pool_run(void *pool, ptrdiff_t n_tasks, vkp_cpu_task_fn fn, void *ctx) {
  vkp_cpu_pool_t *p = pool;
  if (n_tasks <= 0) return;
  if (!p || p->n <= 1 || n_tasks == 1) {
    for (ptrdiff_t t = 0; t < n_tasks; ++t) fn(ctx, t, 0);
    return;
  }
  p->fn = fn;
  p->ctx = ctx;
  p->n_tasks = n_tasks;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->busy, p->n - 1, memory_order_relaxed);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  vkp__take_tasks(p, 0);
  for (int i = 0; i < VKP__POOL_SPIN; ++i) {
    if (atomic_load_explicit(&p->busy, memory_order_acquire) == 0) return;
    vkp__pause();
  }
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&p->busy, memory_order_acquire) != 0)
    pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
