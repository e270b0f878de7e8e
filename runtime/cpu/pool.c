// SPDX-License-Identifier: Apache-2.0
// The cpu stage's thread pool (pool.h). A job is published with a new
// generation number (the mutex and a broadcast only when a worker sleeps);
// workers wake (after a short spin, since the next kernel usually follows
// within microseconds) and claim tasks. Each thread owns a contiguous share
// of the job's tasks and takes them first, from the front, so that task t of
// one kernel runs on the same thread as task t of the next: a thread reads
// the rows of a feature map it wrote itself, from its own cache, where
// taking whichever task is next made that a coin toss per kernel. A thread
// with nothing left of its own steals from the back of the others' shares.
// The caller runs tasks too, and then waits only for the tasks a worker has
// claimed and not finished. It never waits for a worker that has not woken:
// on a loaded machine a worker may not get a core for milliseconds (the
// caller steals its share), and a small stage runs hundreds of jobs a frame.
// Spinning is bounded: on a machine whose cores are shared with other
// pipeline stages a spinning worker steals their time.
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

// One cache line per thread's share, so that claims on two shares never
// contend for a line.
typedef struct vkp__share_t {
  _Alignas(64) atomic_uint_fast64_t word;
} vkp__share_t;

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
  atomic_int sleepers;  // workers waiting on `wake` (changed under mu)
  // The current job (written before the generation moves).
  vkp_cpu_task_fn fn;
  void *ctx;
  ptrdiff_t n_tasks;
  // Per thread (shares[i].word): (end << 32) | next, the not yet claimed
  // part [next, end) of thread i's share of the job's tasks. The owner
  // claims `next`, others `end - 1`, each with a CAS on the whole word, so a
  // task is claimed once. A successful claim takes a task of the job
  // published now, whose fn and ctx stay put until it finishes: the caller
  // publishes the next job only once `finished` reaches n_tasks. A stale
  // word that happens to equal the current one claims a task of the current
  // job, which is as good.
  struct vkp__share_t *shares;  // n of them, in shares_mem
  void *shares_mem;
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

// Claims one task of share `i`: its first (own) or its last (stealing).
// -1 when the share is empty.
static ptrdiff_t vkp__claim(vkp_cpu_pool_t *p, int32_t i, bool own) {
  atomic_uint_fast64_t *w = &p->shares[i].word;
  uint_fast64_t v = atomic_load_explicit(w, memory_order_acquire);
  for (;;) {
    uint_fast64_t next = v & 0xffffffffu, end = v >> 32;
    if (next >= end) return -1;
    uint_fast64_t to = own ? v + 1 : v - ((uint_fast64_t)1 << 32);
    if (atomic_compare_exchange_weak_explicit(w, &v, to, memory_order_acquire,
                                              memory_order_acquire))
      return (ptrdiff_t)(own ? next : end - 1);
  }
}

// Claims and runs tasks of the current job until none is left: this
// thread's share first, then the others'. Returns whether this thread
// finished the job's last task.
static bool vkp__take_tasks(vkp_cpu_pool_t *p, int worker) {
  bool last = false;
  for (int32_t k = 0; k < p->n; ++k) {
    int32_t i = (worker + k) % p->n;
    ptrdiff_t t;
    while ((t = vkp__claim(p, i, k == 0)) >= 0) {
      // The claim's acquire pairs with the release that published the
      // share: fn, ctx and n_tasks are this job's, and stay so until this
      // task counts as finished (read n_tasks before: once the count is
      // full the caller may publish the next job).
      const ptrdiff_t n = p->n_tasks;
      p->fn(p->ctx, t, worker);
      last = atomic_fetch_add_explicit(&p->finished, 1, memory_order_acq_rel) + 1 == n;
    }
  }
  return last;
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
      // Counted as a sleeper before the generation is read again (both
      // sequentially consistent): a caller that moves the generation then
      // either finds the count and wakes it, or this read sees the move.
      pthread_mutex_lock(&p->mu);
      atomic_fetch_add(&p->sleepers, 1);
      while (!p->stop && (g = atomic_load(&p->generation)) == seen)
        pthread_cond_wait(&p->wake, &p->mu);
      atomic_fetch_sub(&p->sleepers, 1);
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
  atomic_init(&p->finished, 0);
  atomic_init(&p->sleepers, 0);
  p->shares_mem = vkp__calloc((size_t)workers + 1, sizeof *p->shares);
  p->shares = (vkp__share_t *)(((uintptr_t)p->shares_mem + 63) & ~(uintptr_t)63);
  if (!p->shares_mem) {
    vkp_cpu_pool_destroy(p);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "cpu thread pool");
  }
  for (int32_t i = 0; i < workers; ++i) atomic_init(&p->shares[i].word, 0);
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
  vkp__free(p->shares_mem);
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
  // (Counts past a share word's 32 bits run serially; no kernel asks for
  // that many tasks.)
  if (!p || p->n <= 1 || n_tasks == 1 || n_tasks > (ptrdiff_t)0x7fffffff) {
    for (ptrdiff_t t = 0; t < n_tasks; ++t) fn(ctx, t, 0);
    return;
  }
  // Every task of the previous job has finished, so no worker reads these
  // now; a worker's claim (acquire) sees them through the releases below.
  p->fn = fn;
  p->ctx = ctx;
  p->n_tasks = n_tasks;
  atomic_store_explicit(&p->finished, 0, memory_order_relaxed);
  for (int32_t i = 0; i < p->n; ++i) {
    uint_fast64_t lo = (uint_fast64_t)(n_tasks * i / p->n);
    uint_fast64_t hi = (uint_fast64_t)(n_tasks * (i + 1) / p->n);
    atomic_store_explicit(&p->shares[i].word, hi << 32 | lo, memory_order_release);
  }
  atomic_fetch_add(&p->generation, 1);
  if (atomic_load(&p->sleepers) > 0) {
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
  }
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
