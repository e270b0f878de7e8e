// SPDX-License-Identifier: Apache-2.0
//
// vkpipe pipeline plan: stages (each a subgraph on one target) and the
// bindings that connect them, following the Pipeline Executor RFC.
//
//   vkp_plan_t *plan;
//   vkp_status_t st = vkp_plan_create("net", &plan);
//   st = vkp_plan_add_stage(plan, "s0", "cpu", sub0, NULL);  // sub0 consumed
//   st = vkp_plan_add_stage(plan, "s1", "vulkan", sub1, NULL);
//   st = vkp_plan_add_global_input(plan, "x");
//   st = vkp_plan_add_global_output(plan, "y");
//   st = vkp_plan_bind(plan, VKP_PLAN_GLOBAL, "x", 0, "x");   // x -> s0.x
//   st = vkp_plan_bind(plan, 0, "h", 1, "h");                 // s0.h -> s1.h
//   st = vkp_plan_bind(plan, 1, "y", VKP_PLAN_GLOBAL, "y");   // s1.y -> y
//   st = vkp_plan_validate(plan);
//
// A stage's interface is its subgraph's inputs and outputs (by value name).
// Rules (checked by vkp_plan_validate, one error per problem, each naming the
// binding): a global input binds to inputs of any stages; a stage output
// binds to inputs of later stages (one output may feed several inputs) and/or
// to global outputs; no stage binds to itself; the binding graph is acyclic;
// every stage input is bound exactly once; every global output exactly once;
// dtypes and shapes match across every binding.
//
// A plan is not thread-safe to modify; a validated plan may be shared.
#ifndef VKPIPE_PLAN_H_
#define VKPIPE_PLAN_H_

#include <stdint.h>

#include "vkpipe/alloc.h"
#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Stage index meaning "the outside world" in a binding endpoint.
#define VKP_PLAN_GLOBAL (-1)

// A node of a stage that runs there because the target that would have run
// it cannot (the partitioner's fallback): strings owned by the plan.
typedef struct vkp_plan_fallback_t {
  char *node;             // node name in the stage's subgraph
  char *instead_of;       // the target that could not run it
  char *reason;           // why not, in that target's words
} vkp_plan_fallback_t;

typedef struct vkp_plan_stage_t {
  char *name;
  char *target;           // registered target name
  vkp_graph_t *graph;     // owned, validated subgraph
  double estimated_ms;    // the partitioner's estimate (0 when unknown)
  int32_t threads;        // threads inside the stage (0: target default)
  // "replicas": copies of a host stage that run frames side by side, each
  // on its own threads (`threads` each), frame n on copy (n - 1) % replicas;
  // they still hand frames on in order (docs/pipeline-config.md). 0 or 1:
  // one.
  int32_t replicas;
  int32_t rank;           // MPI rank that runs the stage (0: the process
                          // that creates the pipeline; docs/scale-out.md)
  char *graph_file;       // owned; the subgraph file a hand-made plan names
                          // (as written in the plan), or NULL: the stage is
                          // a node list of the plan's source model
  int32_t n_fallbacks;
  vkp_plan_fallback_t *fallbacks;  // owned; the stage's fallen-back nodes
  // "cpu_affinity": the cpus a host stage's threads are pinned to (thread i
  // of the stage, the one that calls it first, on cpu_affinity[i %
  // n_cpu_affinity]); owned; NULL (the default): not pinned.
  int32_t n_cpu_affinity;
  int32_t *cpu_affinity;
  // "precision": the storage precision its target compiles it with
  // (vkp_precision_t; "fp16" keeps a vulkan stage's weights as float16).
  // Written only when not fp32; a compile option other than fp32 wins.
  vkp_precision_t precision;
} vkp_plan_stage_t;

typedef struct vkp_plan_binding_t {
  int32_t src_stage;      // VKP_PLAN_GLOBAL: a global input
  char *src_name;         // global input name, or output name of src_stage
  int32_t dst_stage;      // VKP_PLAN_GLOBAL: a global output
  char *dst_name;         // input name of dst_stage, or global output name
} vkp_plan_binding_t;

typedef struct vkp_plan_t {
  char *name;
  int32_t n_stages;
  vkp_plan_stage_t *stages;
  int32_t n_bindings;
  vkp_plan_binding_t *bindings;
  int32_t n_inputs;
  char **inputs;          // global input names, in order
  int32_t n_outputs;
  char **outputs;         // global output names, in order
  char *source;           // owned; the model automatic stages come from (as
                          // written in the plan), or NULL
  vkp_allocator_t allocator;  // what the plan allocates with (set at creation)
} vkp_plan_t;

// An empty plan, owned by the caller (vkp_plan_destroy).
vkp_status_t vkp_plan_create(const char *name, vkp_plan_t **out_plan)
    VKP_MUST_USE;
// Same, allocating the plan and what is added to it with `allocator`
// (copied; functions and ctx borrowed, see vkpipe/alloc.h; NULL = system).
vkp_status_t vkp_plan_create_with_allocator(const char *name,
                                            const vkp_allocator_t *allocator,
                                            vkp_plan_t **out_plan) VKP_MUST_USE;
void vkp_plan_destroy(vkp_plan_t *plan);

// Appends a stage. `graph` is consumed (owned by the plan, also on failure).
vkp_status_t vkp_plan_add_stage(vkp_plan_t *plan, const char *name,
                                const char *target, vkp_graph_t *graph,
                                int32_t *out_stage) VKP_MUST_USE;

// Declares a global input / output name (copied).
vkp_status_t vkp_plan_add_global_input(vkp_plan_t *plan, const char *name)
    VKP_MUST_USE;
vkp_status_t vkp_plan_add_global_output(vkp_plan_t *plan, const char *name)
    VKP_MUST_USE;

// Adds a binding (names copied). Checked by vkp_plan_validate, not here.
vkp_status_t vkp_plan_bind(vkp_plan_t *plan, int32_t src_stage,
                           const char *src_name, int32_t dst_stage,
                           const char *dst_name) VKP_MUST_USE;

// Records that `node` of stage `stage` fell back from target `instead_of`
// for `reason` (all copied).
vkp_status_t vkp_plan_add_fallback(vkp_plan_t *plan, int32_t stage,
                                   const char *node, const char *instead_of,
                                   const char *reason) VKP_MUST_USE;

// Pins stage `stage`'s threads to the `n` cpus in `cpus` (copied; each
// 0..VKP_PLAN_MAX_CPU, no repeats; n <= VKP_PLAN_MAX_AFFINITY); n == 0
// clears it. Whether the process may use those cpus is checked when the
// stage loads.
#define VKP_PLAN_MAX_CPU 1023
#define VKP_PLAN_MAX_AFFINITY 64
vkp_status_t vkp_plan_set_stage_cpu_affinity(vkp_plan_t *plan, int32_t stage, int32_t n,
                                             const int32_t *cpus) VKP_MUST_USE;
// Places stage `stage` on MPI rank `rank` (0..VKP_PLAN_MAX_RANK).
vkp_status_t vkp_plan_set_stage_rank(vkp_plan_t *plan, int32_t stage,
                                     int32_t rank) VKP_MUST_USE;
#define VKP_PLAN_MAX_RANK 4095
// Runs `replicas` copies of stage `stage` side by side (1..VKP_PLAN_MAX_REPLICAS).
vkp_status_t vkp_plan_set_stage_replicas(vkp_plan_t *plan, int32_t stage,
                                         int32_t replicas) VKP_MUST_USE;
#define VKP_PLAN_MAX_REPLICAS 64

// Index of the stage named `name`, or -1.
int32_t vkp_plan_find_stage(const vkp_plan_t *plan, const char *name);

// Checks every rule above; the error lists every problem found, one per line.
vkp_status_t vkp_plan_validate(const vkp_plan_t *plan) VKP_MUST_USE;

// The stage value (dtype and shape; its name is the stage's) that global
// input `index` feeds, or that global output `index` comes from, in a
// validated plan; borrowed from the plan. NULL when `index` is out of range.
const vkp_value_t *vkp_plan_input_value(const vkp_plan_t *plan, int32_t index);
const vkp_value_t *vkp_plan_output_value(const vkp_plan_t *plan, int32_t index);

// Sets the plan's source model path (copied; NULL clears it).
vkp_status_t vkp_plan_set_source(vkp_plan_t *plan, const char *source)
    VKP_MUST_USE;
// Sets stage `stage`'s subgraph file (copied; NULL clears it).
vkp_status_t vkp_plan_set_stage_file(vkp_plan_t *plan, int32_t stage,
                                     const char *graph_file) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Plan files (docs/pipeline-config.md)
//
// A stage is written either as the node names it takes from the plan's
// "source" model (automatic plans) or as a "graph" file of its own
// (hand-made plans: the RFC's mod1/mod2/mod3). Paths inside a plan are
// relative to the plan file. A .vkp artifact holds the same JSON, its
// stages naming their graphs as entries of the artifact.

// Writes `plan` as JSON into *out_json (heap string; free with
// vkp_free). A stage without a graph_file needs plan->source.
vkp_status_t vkp_plan_to_json(const vkp_plan_t *plan, char **out_json)
    VKP_MUST_USE;
vkp_status_t vkp_plan_save(const vkp_plan_t *plan, const char *path)
    VKP_MUST_USE;

// Reads a plan. Node-list stages are extracted from `model` (borrowed; may be
// NULL: the plan's "source" is loaded, relative to `base_dir`), graph-file
// stages loaded relative to `base_dir` (NULL: the current directory). The
// plan is validated: the error lists every problem, each naming its binding
// or stage. *out_plan is owned by the caller and uses the system allocator
// (vkp_plan_create_with_allocator and vkpipe/alloc.h).
vkp_status_t vkp_plan_from_json(const char *json, size_t size,
                                const char *base_dir, const vkp_graph_t *model,
                                vkp_plan_t **out_plan) VKP_MUST_USE;
vkp_status_t vkp_plan_load(const char *path, const vkp_graph_t *model,
                           vkp_plan_t **out_plan) VKP_MUST_USE;


#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_PLAN_H_
