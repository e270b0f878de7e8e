// SPDX-License-Identifier: Apache-2.0
// The pipeline suite's shared harness: a registry with "tmath" (host) and
// "fakedev" (device), the diamond plan placed on them, input helpers, result
// checks, and an ordered run of many frames with a producer thread.
#ifndef VKPIPE_TESTS_PIPELINE_HARNESS_H_
#define VKPIPE_TESTS_PIPELINE_HARNESS_H_

#include <stdbool.h>
#include <stdint.h>

#include "fakedev.h"
#include "support/test_support.h"
#include "tmath.h"
#include "vkpipe/pipeline.h"

#define SECOND_NS 1000000000ull

typedef struct harness_config_t {
  uint32_t delay_us, delay_percent;  // tmath random delays
  fakedev_options_t device;          // fakedev delays and submit failures
  const char *target;                // NULL: "tmath"
  const char *alt_target;            // for the stages in alt_mask
  uint32_t alt_mask;
  int32_t depth;
  bool sequential;
  // When set, used (borrowed) instead of a fresh tmath + fakedev registry.
  vkp_registry_t *registry;
  const vkp_allocator_t *allocator;  // the pipeline's (NULL: the system one)
  int32_t replicas;                  // copies of the stages in replica_mask
  uint32_t replica_mask;             // (bit s: stage s; 0 with replicas: all)
} harness_config_t;

typedef struct fixture_t {
  harness_config_t cfg;
  vkp_registry_t *registry;
  vkp_plan_t *plan;
  vkp_pipeline_t *pipe;
  vkp_test_rng_t rng;
} fixture_t;

void fixture_init(fixture_t *f, const harness_config_t *cfg);
// Destroys the pipeline, then checks that fakedev saw no rule broken.
void fixture_deinit(fixture_t *f);

void fill(vkp_test_rng_t *rng, float *v);
void set_inputs(vkp_pipeline_t *pipe, float *x, float *z);
// Checks a successful diamond result against its inputs.
void check_result(const vkp_pipeline_result_t *res, const float *x,
                  const float *z);

// Runs n_frames frames from a producer thread while this thread collects and
// checks them in order. Every fail_every-th frame (0: none) fails: with the
// injected tmath failure in z (z_failure) or whatever the configuration
// injects; its error must name `fail_stage`. Then checks the stats.
void run_ordered(const harness_config_t *cfg, int32_t n_frames,
                 int32_t fail_every, bool z_failure, const char *fail_stage);

// Creates a pipeline for `plan` with allocation number 1, 2, ... failing in
// turn (below `max_fail_at`) until one creates without a failure: each
// failure must be clean (an error, no pipeline, nothing leaked).
void create_failure_walk(const vkp_plan_t *plan, vkp_registry_t *reg,
                         int64_t max_fail_at);

// Runs frames until one is refused, frame `lost_frame` carrying the injected
// device loss in z (when z_injection; else the configuration injects it);
// checks that every frame from it on (and any earlier one
// not finished in time) completes with DEVICE_LOST and that later runs fail.
void run_device_lost(const harness_config_t *cfg, int32_t lost_frame,
                     bool z_injection);

// Cuts validated `graph` into stages: stage i holds nodes groups[i][0..n) (a
// -1-terminated list of node indices) on targets[i]; bindings follow the
// value names (global inputs and outputs keep the graph's names).
vkp_status_t plan_from_groups(const vkp_graph_t *graph, int32_t n_stages,
                              const int32_t *const *groups,
                              const char *const *targets,
                              vkp_plan_t **out_plan) VKP_MUST_USE;

#endif  // VKPIPE_TESTS_PIPELINE_HARNESS_H_
