// SPDX-License-Identifier: Apache-2.0
// runtime/cpu/pool.c: every task of every job runs exactly once, on a worker
// id below the pool's size, and jobs follow each other without losing a
// wake-up (many small jobs back to back, as the kernels of a stage issue
// them).
#define _GNU_SOURCE  // sched_getaffinity, CPU_ISSET
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cpu/pool.h"
#include "support/test_support.h"

typedef struct job_t {
  atomic_int *hits;
  int workers;
  atomic_int bad_worker;
} job_t;

static void count_task(void *ctx, ptrdiff_t task, int worker) {
  job_t *j = ctx;
  atomic_fetch_add(&j->hits[task], 1);
  if (worker < 0 || worker >= j->workers) atomic_store(&j->bad_worker, 1);
}

static void run_jobs(int32_t workers, int jobs, ptrdiff_t max_tasks) {
  vkp_cpu_pool_t *pool = NULL;
  VKP_TEST_OK(vkp_cpu_pool_create(workers, NULL, 0, &pool));
  cr_assert_eq(vkp_cpu_pool_workers(pool), workers);
  atomic_int *hits = calloc((size_t)max_tasks, sizeof *hits);
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  for (int k = 0; k < jobs; ++k) {
    ptrdiff_t n = 1 + (ptrdiff_t)vkp_test_rng_below(&rng, (uint64_t)max_tasks);
    for (ptrdiff_t t = 0; t < n; ++t) atomic_store(&hits[t], 0);
    job_t j = {.hits = hits, .workers = workers};
    vkp_cpu_pool_run(pool, n, count_task, &j);
    for (ptrdiff_t t = 0; t < n; ++t)
      cr_assert_eq(atomic_load(&hits[t]), 1, "job %d: task %td ran %d times", k, t,
                   atomic_load(&hits[t]));
    cr_assert_eq(atomic_load(&j.bad_worker), 0, "job %d: worker id out of range", k);
  }
  free(hits);
  vkp_cpu_pool_destroy(pool);
}

Test(cpu_pool, one_worker_runs_in_order, .timeout = 30) { run_jobs(1, 200, 64); }

Test(cpu_pool, every_task_once, .timeout = 60) {
  run_jobs(2, 2000, 7);
  run_jobs(4, 2000, 300);
}

// Created and destroyed without a job: the workers are joined, nothing leaks.
Test(cpu_pool, idle_pool_shuts_down, .timeout = 30) {
  for (int i = 0; i < 20; ++i) {
    vkp_cpu_pool_t *pool = NULL;
    VKP_TEST_OK(vkp_cpu_pool_create(3, NULL, 0, &pool));
    vkp_cpu_pool_destroy(pool);
  }
  vkp_cpu_pool_destroy(NULL);
}

// A task that records whether the thread running it may run on cpu 0 only.
static void affinity_task(void *ctx, ptrdiff_t task, int worker) {
  atomic_int *only_cpu0 = ctx;
  cpu_set_t set;
  CPU_ZERO(&set);
  bool pinned = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 &&
                CPU_ISSET(0, &set);
  atomic_store(&only_cpu0[task], pinned ? 1 : 2);
  (void)worker;
}

// Pinned to cpu 0 (every machine has it): the work still gets done, every
// worker runs on cpu 0 only, the caller once it is bound.
Test(cpu_pool, pinned, .timeout = 30) {
  const int32_t cpus[] = {0};
  vkp_cpu_pool_t *pool = NULL;
  VKP_TEST_OK(vkp_cpu_pool_create(2, cpus, 1, &pool));
  atomic_int hits[16] = {0};
  job_t j = {.hits = hits, .workers = 2};
  vkp_cpu_pool_run(pool, 16, count_task, &j);
  for (int t = 0; t < 16; ++t) cr_assert_eq(atomic_load(&hits[t]), 1);
  // This thread becomes the pinned caller; its mask is restored after (the
  // TSan build runs every test in one process).
  cpu_set_t before;
  CPU_ZERO(&before);
  cr_assert_eq(sched_getaffinity(0, sizeof before, &before), 0);
  vkp_cpu_pool_bind_caller(pool);
  atomic_int only_cpu0[64] = {0};
  for (int rep = 0; rep < 20; ++rep) {
    vkp_cpu_pool_run(pool, 64, affinity_task, only_cpu0);
    for (int t = 0; t < 64; ++t) cr_assert_eq(atomic_load(&only_cpu0[t]), 1, "task %d", t);
  }
  vkp_cpu_pool_destroy(pool);
  cr_assert_eq(sched_setaffinity(0, sizeof before, &before), 0);
}

// A cpu the process may not use (no machine here has 1024 of them): the
// pool is refused, naming the cpu.
Test(cpu_pool, pin_refused, .timeout = 30) {
  cpu_set_t set;
  CPU_ZERO(&set);
  cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
  if (CPU_ISSET(1023, &set)) cr_skip_test("this process may run on cpu 1023");
  const int32_t cpus[] = {0, 1023};
  vkp_cpu_pool_t *pool = NULL;
  vkp_status_t st = vkp_cpu_pool_create(2, cpus, 2, &pool);
  cr_assert(st != NULL);
  cr_assert_null(pool);
  cr_assert(strstr(vkp_status_message(st), "cpu 1023") != NULL, "%s", vkp_status_message(st));
  vkp_status_free(st);
}
