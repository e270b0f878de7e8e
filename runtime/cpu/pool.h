// SPDX-License-Identifier: Apache-2.0
// A persistent thread pool for one cpu stage: started when the stage loads,
// joined when it unloads, so a kernel that splits its work pays a wake-up,
// not a thread creation. The generated code reaches it through
// vkp_cpu_pool_ref_t, which the stage's workspace starts with (the ABI is in
// codegen/c/prelude.c, "Threads").
//
// One caller at a time (a stage runs one frame at a time). The caller runs
// tasks too, as worker 0; workers 1..n-1 are the pool's threads. Each task
// index in [0, n_tasks) runs exactly once; worker ids let tasks use
// per-worker scratch.
#ifndef VKPIPE_RUNTIME_CPU_POOL_H_
#define VKPIPE_RUNTIME_CPU_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/status.h"

typedef void (*vkp_cpu_task_fn)(void *ctx, ptrdiff_t task, int worker);

// What the generated code sees: must match the prelude's vkp_pool_ref_t.
typedef struct vkp_cpu_pool_ref_t {
  void (*run)(void *pool, ptrdiff_t n_tasks, vkp_cpu_task_fn fn, void *ctx);
  void *pool;
  int32_t workers;  // the caller included; 1: run serially
  int32_t reserved;
} vkp_cpu_pool_ref_t;

typedef struct vkp_cpu_pool_t vkp_cpu_pool_t;

// A pool of `workers` (>= 1; 1 starts no thread). `cpus` (n_cpus entries,
// copied; may be NULL) pins worker i to cpus[i % n_cpus]: the pool's
// threads now (a cpu the kernel refuses is an error), the caller when it
// calls vkp_cpu_pool_bind_caller.
vkp_status_t vkp_cpu_pool_create(int32_t workers, const int32_t *cpus,
                                 int32_t n_cpus, vkp_cpu_pool_t **out_pool)
    VKP_MUST_USE;
// Joins the threads. NULL is fine.
void vkp_cpu_pool_destroy(vkp_cpu_pool_t *pool);
// Runs fn(ctx, task, worker) for every task, returning when all are done.
void vkp_cpu_pool_run(void *pool, ptrdiff_t n_tasks, vkp_cpu_task_fn fn, void *ctx);
int32_t vkp_cpu_pool_workers(const vkp_cpu_pool_t *pool);
// With pinning, pins the calling thread (worker 0) to cpus[0], once per
// thread that becomes the caller; otherwise nothing. The cpu stage calls it
// at the start of every run. NULL is fine.
void vkp_cpu_pool_bind_caller(vkp_cpu_pool_t *pool);

#endif  // VKPIPE_RUNTIME_CPU_POOL_H_
