// SPDX-License-Identifier: Apache-2.0
//
// runtime/cpu compile: C source -> shared object bytes, with a content-hash
// cache, using the system C compiler.
//
//   vkp_cpu_compile_config_t cfg = {.march = "native", .threads = 1};
//   void *so; size_t so_size; char key[33];
//   vkp_status_t st = vkp_cpu_compile(source, strlen(source), &cfg, &so,
//                                     &so_size, key);
//   ...  vkp__free(so);
//
// The compiler is $CC (split on spaces, default "cc"), run with -O3
// -march=<march> -fPIC -shared. The cache key hashes the source, the flags
// and the compiler's `--version` output; objects live in cfg.cache_dir, else
// $XDG_CACHE_HOME/vkpipe, else ~/.cache/vkpipe. A missing compiler fails here
// with UNAVAILABLE; loading a compiled object never needs one.
// Thread-safe: concurrent compiles use private temporary directories and
// publish objects with an atomic rename.
#ifndef VKPIPE_RUNTIME_CPU_COMPILE_H_
#define VKPIPE_RUNTIME_CPU_COMPILE_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/status.h"

typedef struct vkp_cpu_compile_config_t {
  const char *march;        // borrowed; NULL: "native"
  const char *cache_dir;    // borrowed; NULL: the user's cache directory
  const char *extra_flags;  // borrowed; appended (split on spaces), or NULL
  int32_t threads;          // > 1 adds -pthread
} vkp_cpu_compile_config_t;

// Compiles `source` (size bytes, borrowed) into a shared object.
// *out_object (owned by the caller, free with vkp__free) receives its bytes;
// out_key (33 bytes) the cache key in hex.
vkp_status_t vkp_cpu_compile(const char *source, size_t size,
                             const vkp_cpu_compile_config_t *config,
                             void **out_object, size_t *out_size,
                             char *out_key) VKP_MUST_USE;

// Process-wide counts of compiles answered from the cache and compiles that
// ran the compiler.
void vkp_cpu_compile_stats(uint64_t *out_hits, uint64_t *out_misses);

#endif  // VKPIPE_RUNTIME_CPU_COMPILE_H_
