// SPDX-License-Identifier: Apache-2.0
// Private state shared by the partitioner's steps (place.c, regions.c,
// stages.c, partition.c).
#ifndef VKPIPE_PARTITION_PARTITION_INTERNAL_H_
#define VKPIPE_PARTITION_PARTITION_INTERNAL_H_

#include "vkpipe/partition.h"

// Target indices fit a bitmask of consumer targets.
#define VKP__MAX_TARGETS 32

typedef struct vkp__pctx_t {
  const vkp_graph_t *graph;          // borrowed
  const vkp_profile_t *profile;      // borrowed (or owned_profile)
  vkp_profile_t *owned_profile;      // the defaults when none was given
  vkp_partition_t *part;
  vkp_partition_options_t options_copy;             // the result being filled in
  const vkp_partition_options_t *options;
  int32_t n_targets;
  const char **device;               // per target: its device (borrowed)
  // Per node x target: estimated seconds, or a negative value when the
  // target cannot run the node (then reason[] says why; owned).
  double *est;
  char **reason;
  // Per node x target: the estimate even where the target refused the node
  // (what it would cost if it could run it), for fallback notes.
  double *would_cost;
  bool *fixed;                       // manual placement: never moved
  bool *assign_matched;              // per --assign: matched some node
  // Consumers of each value (distinct nodes), CSR.
  int32_t *cons_start;               // n_values + 1
  int32_t *cons;
  double *value_bytes;               // n_values
  // The stage sequence (stages.c).
  int32_t *pos;                      // position of each node in part->order
  int32_t *unit_region;              // n_units
  int32_t n_devices;
  int32_t *target_device;            // per target: index into device names
  int32_t *device_concurrency;       // per device (cores on the host), x hosts
  // Ranks the stages will be spread over (1: one process): the cut sees
  // every device with `hosts` times its concurrency (each rank has them
  // all), and "auto" tries at least `hosts` stages.
  int32_t hosts;
  int32_t *target_threads;           // per target: threads of its stages
  int32_t host_dev;                  // index of the host device, -1: none
  int32_t host_threads;              // threads of each host stage
  uint32_t *stamp;                   // per value, for segment costs
  uint32_t stamp_id;
  double *seg;                       // n_units x (n_units + 1) segment costs
  double *unit_compute;              // n_units + 1 prefix sums of compute
  int32_t *seg_labels;               // the placement seg was computed for
} vkp__pctx_t;

// Cost of the stage covering order positions [a, b) (one target).
typedef struct vkp__segment_t {
  double compute_s, transfer_s, bytes_in, bytes_out;
} vkp__segment_t;
void vkp__segment(vkp__pctx_t *c, int32_t a, int32_t b, vkp__segment_t *out);

// The host load's factor when `threads` host threads share `cores` cores
// (VKP_PARTITION_TIME_SHARING). Measured on the 2-core Zen 5 VM: SqueezeNet
// cut into 3 or 4 one-thread stages ran 0.78x of its 2-stage throughput
// where the load term priced them alike, a small encoder block's 3 stages
// 0.66x of its 2 (each switch between stages evicts the other's weights
// from the core's caches, and the executor's waiters sleep instead of
// polling: pipeline/worker.c).
static inline double vkp__sharing(int64_t threads, int64_t cores) {
  return threads > cores ? VKP_PARTITION_TIME_SHARING : 1.0;
}

static inline double vkp__est(const vkp__pctx_t *c, int32_t node, int32_t t) {
  return c->est[(size_t)node * (size_t)c->n_targets + (size_t)t];
}

// Seconds of the transfers value `v` causes under `labels` (its producer's
// target, or the host for a global input, to every other target consuming
// it, and to the host when it is a global output). Constants cost nothing.
double vkp__value_transfer(const vkp__pctx_t *c, const int32_t *labels,
                           int32_t v);

// Placement (place.c): fills part->node_target, node_first_choice,
// node_reason, node_seconds.
vkp_status_t vkp__place(vkp__pctx_t *c, const vkp_registry_t *registry)
    VKP_MUST_USE;

// Sum over nodes of the estimate plus the transfers of every value.
double vkp__placement_objective(const vkp__pctx_t *c, const int32_t *labels);

// Appends a line to part->notes.
vkp_status_t vkp__note(vkp_partition_t *part, const char *fmt, ...)
    VKP_PRINTF(2, 3) VKP_MUST_USE;

// Sets node's reason (replacing any), formatted.
vkp_status_t vkp__set_reason(vkp_partition_t *part, int32_t node,
                             const char *fmt, ...) VKP_PRINTF(3, 4) VKP_MUST_USE;

// Stages (stages.c): island absorption, units, the cut; fills order,
// node_region, units, stages, node_stage, bottleneck.
vkp_status_t vkp__cut_stages(vkp__pctx_t *c) VKP_MUST_USE;

// Spreads the stages of `part` over `n_ranks` (> 1) MPI ranks (ranks.c):
// sets every stage's rank and link_s, the bottleneck and a note.
vkp_status_t vkp__place_ranks(vkp_partition_t *part, int32_t n_ranks) VKP_MUST_USE;

#endif  // VKPIPE_PARTITION_PARTITION_INTERNAL_H_
