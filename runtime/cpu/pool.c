// SPDX-License-Identifier: Apache-2.0
// The cpu stage's thread pool (pool.h). A job is published under the mutex
// with a new generation number; workers wake (after a short spin, since the
// next kernel usually follows within microseconds) and claim task indices
// from one atomic word holding the job's task count and its next index; the
// caller claims tasks too, and then waits only for the tasks a worker has
// claimed and not finished. It never waits for a worker that has not woken:
// on a loaded machine a worker may not get a core for milliseconds, and a
// small stage runs hundreds of jobs a frame. Spinning is bounded: on a
// machine whose cores are shared with other pipeline stages a spinning
// worker steals their time.
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
  vkp_allocator_t allocator;  // the creator's current one, current on workers
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
  // (n_tasks << 32) | next task index. A successful claim (a CAS on this
  // word with index < count) takes a task of the job published now, whose
  // fn and ctx stay put until it finishes: the caller publishes the next job
  // only once `finished` reaches n_tasks. A stale word that happens to equal
  // the current one (same count and index) claims a task of the current job,
  // which is as good.
  atomic_uint_fast64_t claim;
  atomic_ptrdiff_t finished;  // tasks of the current job done
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

// Claims and runs tasks of the current job until none is left. Returns
// whether this thread finished the job's last task.
static bool vkp__take_tasks(vkp_cpu_pool_t *p, int worker) {
  bool last = false;
  uint_fast64_t v = atomic_load_explicit(&p->claim, memory_order_acquire);
  for (;;) {
    uint_fast64_t n = v >> 32, t = v & 0xffffffffu;
    if (t >= n) return last;
    if (!atomic_compare_exchange_weak_explicit(&p->claim, &v, v + 1, memory_order_acquire,
                                               memory_order_acquire))
      continue;
    p->fn(p->ctx, (ptrdiff_t)t, worker);
    last = atomic_fetch_add_explicit(&p->finished, 1, memory_order_acq_rel) + 1 ==
           (ptrdiff_t)n;
    v = atomic_load_explicit(&p->claim, memory_order_acquire);
  }
}

static void *vkp__worker_main(void *arg) {
  vkp__worker_t *w = arg;
  vkp_cpu_pool_t *p = w->pool;
  VKP__ALLOCATOR_SCOPE(&p->allocator);
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
    if (vkp__take_tasks(p, w->id)) {  // the job's last task: wake the caller
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
  p->allocator = vkp__allocator_resolve(NULL);
  p->n = workers;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->generation, 0);
  atomic_init(&p->claim, 0);
  atomic_init(&p->finished, 0);
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
  // (Counts past the claim word's 32 bits run serially; no kernel asks for
  // that many tasks.)
  if (!p || p->n <= 1 || n_tasks == 1 || n_tasks > (ptrdiff_t)0x7fffffff) {
    for (ptrdiff_t t = 0; t < n_tasks; ++t) fn(ctx, t, 0);
    return;
  }
  // Every task of the previous job has finished, so no worker reads these
  // now; a worker's claim (acquire) sees them through the release below.
  p->fn = fn;
  p->ctx = ctx;
  p->n_tasks = n_tasks;
  atomic_store_explicit(&p->finished, 0, memory_order_relaxed);
  atomic_store_explicit(&p->claim, (uint_fast64_t)n_tasks << 32, memory_order_release);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  if (vkp__take_tasks(p, 0)) return;
  for (int i = 0; i < VKP__POOL_SPIN; ++i) {
    if (atomic_load_explicit(&p->finished, memory_order_acquire) == n_tasks) return;
    vkp__pause();
  }
  pthread_mutex_lock(&p->mu);
  while (atomic_load_explicit(&p->finished, memory_order_acquire) != n_tasks)
    pthread_cond_wait(&p->done, &p->mu);
  pthread_mutex_unlock(&p->mu);
}
