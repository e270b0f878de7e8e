// SPDX-License-Identifier: Apache-2.0
//
// vkpipe partitioner: places every node on a registered target by cost,
// groups same-target nodes into convex regions, cuts them into K balanced
// pipeline stages and turns the result into a pipeline plan.
//
//   vkp_partition_options_t opt = {.policy = "auto", .stages = 3};
//   vkp_partition_t *part;
//   vkp_status_t st = vkp_partition_create(graph, registry, profile, &opt, &part);
//   vkp_plan_t *plan;
//   st = vkp_partition_to_plan(part, "net", &plan);
//   st = vkp_plan_set_source(plan, "model.json");  // stages are its node lists
//   st = vkp_plan_save(plan, "plan.json");
//   vkp_plan_destroy(plan);
//   vkp_partition_destroy(part);
//
// Steps (docs/pipeline-config.md has the prose):
//  1. Placement. Policy "auto" starts every node on its cheapest supporting
//     target and then moves single nodes and whole same-target islands while
//     that lowers the total estimated time (compute + transfers). A policy
//     naming a target puts everything there; a node it cannot run goes to the
//     fallback target (option; default: the first registered target that
//     declares VKP_TARGET_DEFAULT_FALLBACK, "cpu" among the built-ins), or,
//     when there is none, it is not registered or it cannot run it either,
//     to the first registered target that can.
//     Manual overrides (a node's "target" in the graph, then --assign globs,
//     the last matching one winning) beat the policy.
//  2. Regions. Nodes are put in a topological order that stays on one target
//     as long as it can; maximal same-target runs of that order are the
//     regions. A run of a topological order is convex, so the region graph is
//     acyclic by construction.
//  3. Stages. The order is cut into K contiguous stages, each inside one
//     region, minimising the bottleneck: the largest of every stage's time
//     and every device's summed load divided by its concurrency. A stage's
//     time is its compute plus the transfers it receives (and the global
//     outputs it sends to the host). The cut is exact (binary search on the
//     bottleneck with a per-device dynamic programme). Regions too small to be
//     worth a transfer are absorbed into a neighbour under "auto"; any policy
//     absorbs the cheapest islands when there are more regions than stages.
//     With stages = 0, every K up to max_auto_stages is tried this way (from
//     1 under "auto", from the region count under a target policy) and the
//     fewest stages within 5% of the best bottleneck are kept.
//  4. Threads. Stages of targets on the host device run with T threads:
//     their nodes' estimates use the threaded roofline (the profile's thread
//     efficiencies) and each stage occupies T of the host's cores (its
//     concurrency), so the host's bound is the sum of T x stage seconds over
//     its stages divided by the cores. With threads = 0, every T from 1 to
//     the cores (powers of two beyond 8) is partitioned and the configuration
//     (T, and K under stages = 0) with the best estimated throughput kept;
//     among those within 5% of it, the one with the lowest estimated latency
//     (sum of stage times), then the fewest threads. The notes list every
//     candidate and why one was chosen.
//  5. Copies (replicas). With replicas = R > 1, every stage runs as R
//     copies side by side, frames alternating between them (plan
//     "replicas", docs/pipeline-config.md): the stages are cut for the
//     host's cores divided by R, and the bottleneck is that cut's over R
//     (latency unchanged). Only plans whose stages all run on the host
//     take copies. With replicas = VKP_PARTITION_REPLICAS_AUTO, R = 1, 2,
//     4, ... up to the cores are candidates next to the threads, judged by
//     the same rule. A copy reads its own weights: copies of a model whose
//     weights do not fit the caches contend for memory bandwidth, which
//     the estimate does not see.
//
// A partition borrows the graph, registry and profile: they must outlive it.
// Not thread-safe; distinct partitions may be built in parallel.
#ifndef VKPIPE_PARTITION_H_
#define VKPIPE_PARTITION_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vkpipe/alloc.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// A manual placement: nodes whose name matches the glob `pattern` (fnmatch)
// go to `target`. Both borrowed.
// Most pipeline stages a partition may ask for; every tool takes --stages
// in 1..VKP_PARTITION_MAX_STAGES (or auto).
#define VKP_PARTITION_MAX_STAGES 1024

typedef struct vkp_assign_t {
  const char *pattern;
  const char *target;
} vkp_assign_t;

// Parses "PATTERN=TARGET" (the last '=' splits) into `out`, pointing into
// `text` (which must outlive it; the '=' is overwritten with NUL).
vkp_status_t vkp_assign_parse(char *text, vkp_assign_t *out) VKP_MUST_USE;

// A stage of an earlier plan of the same graph and the time it took per
// frame when that plan ran: the partitioner multiplies the estimates of the
// stage's nodes (matched by name) on the stage's target by measured /
// estimated, so that a cut made again balances what was measured
// (docs/pipeline-config.md, "Re-cutting on measured stage times"). The
// factors of several entries naming one node multiply: a plan cut with
// earlier measurements carries their factors in its estimates already.
typedef struct vkp_partition_measure_t {
  const vkp_plan_stage_t *stage;  // borrowed; estimated_ms > 0 (a plan the
                                  // partitioner made)
  double seconds;                 // measured busy time per frame, > 0
} vkp_partition_measure_t;

// Host stages whose threads (times their copies) outnumber the cores
// time-share them: the host's load counts this factor more in the cut and
// in the copies' bound (docs/pipeline-config.md, "Cores and threads").
#define VKP_PARTITION_TIME_SHARING 1.25

// Threads chosen (options->threads 0): among the configurations within this
// factor of the best estimated throughput, the lowest latency wins (and
// alt_threads names the best); refinement keeps that best only when it
// measures this much faster.
#define VKP_PARTITION_THREADS_SLACK 1.05

// vkp_partition_options_t.replicas: choose the copies (step 5 above).
#define VKP_PARTITION_REPLICAS_AUTO (-1)

typedef struct vkp_partition_options_t {
  const char *policy;         // "auto" or a target name; NULL: "auto"
  const char *fallback;       // for unsupported nodes; NULL: the first
                              // target declaring VKP_TARGET_DEFAULT_FALLBACK
  int32_t n_assigns;
  const vkp_assign_t *assigns;  // borrowed
  int32_t stages;             // K; 0: choose automatically (1..max_auto_stages)
  int32_t max_auto_stages;    // upper bound when choosing; 0: 8
  bool keep_islands;          // true: never absorb islands (K may grow)
  int32_t threads;            // threads per stage of host targets; 0:
                              // choose 1..cores (step 4 above)
  int32_t replicas;           // copies of every stage, side by side (step 5
                              // above); 0 or 1: one; VKP_PARTITION_REPLICAS_AUTO:
                              // choose
  int32_t ranks;              // MPI ranks to spread the stages over
                              // (docs/scale-out.md); 0 or 1: one process.
                              // With ranks > 1 the cut sees every rank's
                              // devices, stages = 0 tries K >= ranks, and
                              // every (threads, K) candidate is judged
                              // placed over the ranks.
  int32_t n_measured;
  const vkp_partition_measure_t *measured;  // borrowed; see above
  const vkp_allocator_t *allocator;  // what the partition is allocated with;
                              // NULL: the system allocator (vkpipe/alloc.h)
} vkp_partition_options_t;

typedef struct vkp_partition_stage_t {
  int32_t target;             // index into vkp_partition_t.targets
  int32_t n_nodes;
  int32_t *nodes;             // node indices, in graph (topological) order
  double compute_s;           // sum of its nodes' estimates
  double transfer_s;          // transfers it receives and global outputs
  double seconds;             // compute_s + transfer_s
  double bytes_in;            // bytes it receives (global inputs included)
  double bytes_out;           // bytes it sends (global outputs included)
  int32_t threads;            // threads it runs with (cores it occupies);
                              // 0: its target is not on the host
  int32_t rank;               // MPI rank that runs it (0 without ranks)
  int32_t replicas;           // copies of it that run side by side (>= 1)
  double link_s;              // seconds on the rank link per frame (what it
                              // receives from and sends to other ranks)
} vkp_partition_stage_t;

typedef struct vkp_partition_t {
  const vkp_graph_t *graph;           // borrowed
  const vkp_profile_t *profile;       // borrowed
  int32_t n_targets;
  const vkp_target_t **targets;       // borrowed from the registry (owned array)
  int32_t policy_target;              // index, or -1 for "auto"
  // Per node (graph order):
  int32_t *node_target;               // index into targets
  int32_t *node_first_choice;         // the policy's first choice, or -1
  char **node_reason;                 // why not on the first choice, or NULL
  // The target the node would have run on had it supported the node: the
  // policy target, or under "auto" a target estimated faster than the one
  // chosen. -1 when no target that wanted it refused it. node_refusal says
  // why that target could not (owned), NULL otherwise.
  int32_t *node_fallback_from;
  char **node_refusal;
  double *node_seconds;               // estimate on its target
  int32_t *node_region;               // region index (regions in order)
  int32_t *node_stage;
  // The stage sequence: every node once, in a topological order that keeps
  // regions contiguous; units are the cut granularity (one node each for
  // graphs up to 256 nodes, contiguous same-region chunks beyond).
  int32_t *order;                     // n_nodes entries
  int32_t n_regions;
  int32_t n_units;
  int32_t *unit_start;                // n_units + 1 positions into order
  int32_t n_stages;
  vkp_partition_stage_t *stages;
  double bottleneck_s;                // estimated seconds per frame, steady state
  double latency_s;                   // estimated seconds of one frame alone
                                      // (the sum of the stage times)
  int32_t threads;                    // threads per stage of host targets
  int32_t replicas;                   // copies of every stage (>= 1)
  // When threads were chosen (options->threads 0) by the latency rule over
  // a configuration the estimates gave more throughput: that one's threads
  // and copies (0: none), for a refinement to measure the two.
  int32_t alt_threads;
  int32_t alt_replicas;
  int32_t n_ranks;                    // ranks the stages are spread over
                                      // (1: one process)
  char *notes;                        // lines worth telling the user, or NULL
  struct vkp__pctx_t *internal;       // private to partition/
} vkp_partition_t;

// Partitions validated `graph`. Every argument is borrowed; `profile` NULL
// uses the defaults (then owned internally); `options` NULL means auto/auto.
// *out_part is owned by the caller.
vkp_status_t vkp_partition_create(const vkp_graph_t *graph,
                                  const vkp_registry_t *registry,
                                  const vkp_profile_t *profile,
                                  const vkp_partition_options_t *options,
                                  vkp_partition_t **out_part) VKP_MUST_USE;
void vkp_partition_destroy(vkp_partition_t *part);

// The region step on its own: `labels` gives each node of validated `graph`
// a target index (integers 0..1023). Fills `order` (n_nodes
// entries: a topological order that keeps each region contiguous),
// `node_region` (n_nodes entries; regions numbered in that order) and
// *out_n_regions. Every region holds nodes of one label and the region graph
// is acyclic.
vkp_status_t vkp_partition_regions(const vkp_graph_t *graph,
                                   const int32_t *labels, int32_t *order,
                                   int32_t *node_region, int32_t *out_n_regions)
    VKP_MUST_USE;

// Name of target index `t` of the partition.
const char *vkp_partition_target_name(const vkp_partition_t *part, int32_t t);

// Evaluates a cut of the stage sequence: stage s covers units
// [starts[s], starts[s+1]) (starts[0] == 0, increasing, each stage inside
// one region). Fills *out_bottleneck (seconds); stage_seconds (may be NULL)
// gets n_stages entries. Used by the cutter and by tests.
vkp_status_t vkp_partition_evaluate(const vkp_partition_t *part,
                                    int32_t n_stages, const int32_t *starts,
                                    double *stage_seconds,
                                    double *out_bottleneck) VKP_MUST_USE;

// Builds the pipeline plan: one stage per partition stage ("stage0", ...),
// subgraphs extracted from the graph, global inputs and outputs named like
// the graph's, and a binding for every value crossing a stage boundary. The
// plan is validated. *out_plan is owned by the caller.
vkp_status_t vkp_partition_to_plan(const vkp_partition_t *part,
                                   const char *name, vkp_plan_t **out_plan)
    VKP_MUST_USE;

// Writes the human table (stage, target, nodes, est. ms, bytes in/out), one
// line per node not on its policy's first choice saying why, and every node
// that fell back from a target that could not run it, with that target's
// reason.
void vkp_partition_print(const vkp_partition_t *part, FILE *out);

// Graphviz: nodes coloured by target, stages as clusters, edges crossing
// stages labelled with their bytes; nodes that fell back drawn dashed red
// with the target they fell back from and why. *out_dot is a heap string
// (vkp_free).
vkp_status_t vkp_partition_to_dot(const vkp_partition_t *part, char **out_dot)
    VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_PARTITION_H_
