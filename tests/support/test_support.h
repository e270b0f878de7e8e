// SPDX-License-Identifier: Apache-2.0
// Shared test helpers: random data, tensor comparison, a counting allocator
// that fails the Nth allocation, and paths to the source and build trees.
#ifndef VKPIPE_TESTS_TEST_SUPPORT_H_
#define VKPIPE_TESTS_TEST_SUPPORT_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vkpipe/alloc.h"
#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

// A seeded xorshift generator. Tests seed it from the clock (fresh inputs
// every run) and print the seed on failure via vkp_test_seed().
typedef struct vkp_test_rng_t {
  uint64_t state;
} vkp_test_rng_t;

// Seed from $VKPIPE_TEST_SEED when set, else from the clock; returns the seed.
uint64_t vkp_test_rng_init(vkp_test_rng_t *rng);
uint64_t vkp_test_rng_next(vkp_test_rng_t *rng);
// Uniform in [lo, hi).
float vkp_test_rng_uniform(vkp_test_rng_t *rng, float lo, float hi);
// Uniform integer in [0, n).
uint32_t vkp_test_rng_below(vkp_test_rng_t *rng, uint32_t n);
// Fills a float32 tensor with uniform values in [lo, hi).
void vkp_test_fill_uniform(vkp_test_rng_t *rng, vkp_tensor_t *t, float lo,
                           float hi);

// Compares two float32 tensors elementwise: |a-b| <= atol + rtol*|b|. On
// mismatch writes a description (first bad index, values, max error) into
// `msg` and returns false. Shapes and dtypes must match.
bool vkp_test_allclose(const vkp_tensor_t *a, const vkp_tensor_t *b, double rtol,
                       double atol, char *msg, size_t msg_size);

// Aborts the test (Criterion cr_fatal) when `st` is not OK, printing its
// message; frees it.
#define VKP_TEST_OK(expr)                                                   \
  do {                                                                      \
    vkp_status_t vkp__t_st = (expr);                                        \
    if (vkp__t_st) {                                                        \
      char vkp__t_msg[2048];                                                \
      snprintf(vkp__t_msg, sizeof vkp__t_msg, "%s", vkp_status_message(vkp__t_st)); \
      vkp_status_free(vkp__t_st);                                           \
      cr_assert_fail("%s failed: %s", #expr, vkp__t_msg);                       \
    }                                                                       \
  } while (0)

// Counting allocator: fails allocation number `fail_at` (1-based; 0 = never)
// and tracks live blocks so leaks can be asserted. Thread-safe (atomic
// counters), so a pipeline's stage threads may use it.
typedef struct vkp_test_counting_alloc_t {
  _Atomic int64_t count;  // allocations so far
  int64_t fail_at;
  _Atomic int64_t live;   // currently allocated blocks
  _Atomic bool failed;    // whether the failure was triggered
  vkp_allocator_t allocator;  // counts into this struct
} vkp_test_counting_alloc_t;

// Resets `state` and returns its allocator, to pass to the objects under
// test (options' `allocator`, the `_with_allocator` creators).
const vkp_allocator_t *vkp_test_counting_alloc_init(vkp_test_counting_alloc_t *state,
                                                    int64_t fail_at);
// For tests of internal functions: makes the counting allocator current on
// the calling thread (vkp__allocator_push), so what the library allocates
// there, and the objects it creates without an allocator of their own, use
// it. Other threads and objects keep their own allocators.
void vkp_test_counting_alloc_install(vkp_test_counting_alloc_t *state,
                                     int64_t fail_at);
// Restores the allocator that was current before install.
void vkp_test_counting_alloc_uninstall(void);

// Source tree root ($VKPIPE_SOURCE_DIR, set by ctest) and build tree root.
const char *vkp_test_source_dir(void);
const char *vkp_test_binary_dir(void);

// Reads a whole file into a heap buffer (free with free()); NULL on failure.
char *vkp_test_read_file(const char *path, size_t *out_size);

#endif  // VKPIPE_TESTS_TEST_SUPPORT_H_
