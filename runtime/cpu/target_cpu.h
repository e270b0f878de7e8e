// SPDX-License-Identifier: Apache-2.0
//
// The "cpu" target: generated C (codegen/c), compiled by the system C
// compiler into a shared object (runtime/cpu/compile.h) and run through
// dlopen. Registered as a built-in:
//
//   vkp_registry_t *reg;
//   vkp_status_t st = vkp_registry_create_default(&reg);
//   const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
//
// Blob layout (native endianness; made and read on the same host kind):
// vkp_cpu_blob_header_t, then n_constants int32 value indices, the C source
// and the shared object bytes. Loading writes the object to a memfd (or a
// private temporary file) and dlopens it: no compiler is needed.
// A loaded stage owns a copy of the constants and one workspace; it is
// driven by one thread at a time.
#ifndef VKPIPE_RUNTIME_CPU_TARGET_CPU_H_
#define VKPIPE_RUNTIME_CPU_TARGET_CPU_H_

#include <stdint.h>

#include "vkpipe/target.h"

#define VKP_CPU_BLOB_MAGIC "VKPCPU02"
// Cpus a blob may pin its stage's threads to.
#define VKP_CPU_BLOB_MAX_AFFINITY 64

typedef struct vkp_cpu_blob_header_t {
  char magic[8];          // VKP_CPU_BLOB_MAGIC
  uint32_t header_size;   // sizeof(vkp_cpu_blob_header_t)
  int32_t threads;
  int32_t n_inputs, n_outputs, n_constants, n_kernels;
  uint64_t source_size, object_size;
  char key[40];           // compile cache key, NUL-terminated hex
  int32_t n_cpus;         // 0: the stage's threads are not pinned
  int32_t cpus[VKP_CPU_BLOB_MAX_AFFINITY];  // compile options' cpu_affinity
} vkp_cpu_blob_header_t;

// The vtable's dump entry (runtime/cpu/dump.c): writes <graph>.c and
// <graph>.so from a blob into `dir`.
vkp_status_t vkp__cpu_dump(const vkp_target_t *target, const vkp_graph_t *graph,
                           const void *blob, size_t blob_size, const char *dir)
    VKP_MUST_USE;

// Registers "cpu" into `registry` (the built-in registration entry).
vkp_status_t vkp_target_cpu_register(vkp_registry_t *registry) VKP_MUST_USE;

#endif  // VKPIPE_RUNTIME_CPU_TARGET_CPU_H_
