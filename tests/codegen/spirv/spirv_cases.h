// SPDX-License-Identifier: Apache-2.0
// Graphs for the SPIR-V codegen tests: every op in several shapes (awkward
// ones included: 1, primes, broadcasts) and the fused patterns, each with the
// number of dispatches the codegen must produce. Constants are drawn fresh
// from the test's generator.
#ifndef VKPIPE_TESTS_SPIRV_CASES_H_
#define VKPIPE_TESTS_SPIRV_CASES_H_

#include <stdint.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"

typedef struct vkp_spirv_case_t {
  const char *name;
  // Builds and validates the graph (a failure fails the test there).
  vkp_graph_t *(*build)(vkp_test_rng_t *rng);
  float lo, hi;               // range of the random inputs
  int32_t dispatches;         // expected dispatch count
} vkp_spirv_case_t;

extern const vkp_spirv_case_t vkp_spirv_cases[];
extern const int32_t vkp_spirv_case_count;

#endif  // VKPIPE_TESTS_SPIRV_CASES_H_
