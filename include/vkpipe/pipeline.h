// SPDX-License-Identifier: Apache-2.0
//
// vkpipe pipeline executor: runs the stages of a plan as a pipeline, a worker
// per stage, every binding a bounded ring of staging slots, frames numbered
// by a sequence number that also drives the stages' timeline semaphores.
//
//   vkp_pipeline_t *pipe;
//   vkp_status_t st = vkp_pipeline_create(plan, registry, NULL, &pipe);
//   st = vkp_pipeline_set_input(pipe, "x", &x);     // copies x into a slot
//   uint64_t seq;
//   st = vkp_pipeline_run(pipe, &seq);              // launches, does not wait
//   ...                                             // more set_input + run
//   vkp_pipeline_result_t res;
//   st = vkp_pipeline_get_output(pipe, /*timeout_ns=*/UINT64_MAX, &res);
//   if (!st && !res.status) use(res.outputs);       // res.seq == oldest frame
//   vkp_pipeline_result_deinit(&res);               // caller owns the outputs
//   vkp_pipeline_destroy(pipe);                     // fine with frames in flight
//
// The contract (docs/pipeline.md):
// - Every accepted run (one that returned OK and a sequence number) yields
//   exactly one result from get_output, in sequence order: its outputs, or the
//   error of the stage that failed it. Nothing is dropped or reordered, and a
//   result's outputs are the caller's: later frames never overwrite them.
// - A stage that fails a frame (error status from run or submit) completes
//   that frame with the error; the stages after it skip the frame. Later
//   frames run normally.
// - DEVICE_LOST from any stage puts the pipeline in a failed state: every
//   frame in flight completes with that error and later runs fail at once.
//
// Thread-safety: set_input, run and infer must be called from one thread at a
// time (the "producer"); get_output, drain and get_stats may be called from
// any thread, concurrently with the producer. destroy must not overlap any
// other call on the same pipeline; it may be called with frames in flight.
#ifndef VKPIPE_PIPELINE_H_
#define VKPIPE_PIPELINE_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"
#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkp_pipeline_t vkp_pipeline_t;

#define VKP_PIPELINE_DEFAULT_RING_DEPTH 3
#define VKP_PIPELINE_MAX_RING_DEPTH 64

// Options for creating a pipeline; zero-initialised (or NULL) means defaults.
typedef struct vkp_pipeline_options_t {
  // Staging slots per binding, 1..VKP_PIPELINE_MAX_RING_DEPTH; 0 means
  // VKP_PIPELINE_DEFAULT_RING_DEPTH, or one more than the most copies a
  // stage of the plan runs ("replicas") when that is more. Depth 1 still
  // pipelines nothing: every stage waits for its consumers to release the
  // single slot.
  int32_t ring_depth;
  // One frame through all stages at a time (like a graph executor), for
  // comparison with the pipelined mode. run() still does not wait.
  bool sequential;
  // Per-stage compile options (plan->n_stages entries, borrowed for the call)
  // or NULL for defaults. A plan stage's `threads` fills in threads == 0.
  const vkp_compile_options_t *stage_compile_options;
  // Keep the first `trace_capacity` stage events (one per stage and frame:
  // when the stage started and finished the frame) for vkp_pipeline_get_trace;
  // 0 records nothing.
  int32_t trace_capacity;
  // What the pipeline allocates with, on every thread it runs (its stages,
  // statuses and outputs included); NULL = the system allocator. Copied;
  // functions and ctx borrowed (vkpipe/alloc.h).
  const vkp_allocator_t *allocator;
} vkp_pipeline_options_t;

// Compiles every stage of `plan` (validated here) with its target from
// `registry` (compile, then load), binds the staging rings and starts the
// workers. `plan` and `registry` are borrowed and must outlive the pipeline.
// *out_pipeline is owned by the caller (vkp_pipeline_destroy).
vkp_status_t vkp_pipeline_create(const vkp_plan_t *plan,
                                 const vkp_registry_t *registry,
                                 const vkp_pipeline_options_t *options,
                                 vkp_pipeline_t **out_pipeline) VKP_MUST_USE;

// Like vkp_pipeline_create with stages already compiled: `blobs` has
// plan->n_stages entries, each made by the stage target's compile for that
// stage's subgraph. The blobs are borrowed for this call only (copied).
vkp_status_t vkp_pipeline_create_from_blobs(
    const vkp_plan_t *plan, const vkp_registry_t *registry,
    const vkp_blob_t *blobs, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) VKP_MUST_USE;

// Stops the workers (frames in flight are abandoned, their results freed),
// waits for device work already submitted (bounded), unloads the stages and
// frees everything. Returns promptly. NULL is fine.
void vkp_pipeline_destroy(vkp_pipeline_t *pipeline);

// Number and names (borrowed, valid while the pipeline lives) of the global
// inputs and outputs, in the plan's order.
int32_t vkp_pipeline_input_count(const vkp_pipeline_t *pipeline);
const char *vkp_pipeline_input_name(const vkp_pipeline_t *pipeline,
                                    int32_t index);
int32_t vkp_pipeline_output_count(const vkp_pipeline_t *pipeline);
const char *vkp_pipeline_output_name(const vkp_pipeline_t *pipeline,
                                     int32_t index);

// Copies `tensor` (borrowed; dtype and shape must match the binding) into the
// input slot of the next frame. Setting the same input twice before run
// overwrites it. Never blocks: run() keeps the next slot free.
vkp_status_t vkp_pipeline_set_input(vkp_pipeline_t *pipeline, const char *name,
                                    const vkp_tensor_t *tensor) VKP_MUST_USE;

// Launches a frame from the inputs set since the last run and stores its
// sequence number (1, 2, ...) in *out_seq (may be NULL). Does not wait for the
// work; blocks only while the input rings are full. Fails, accepting no
// frame, when a global input was not set (FAILED_PRECONDITION naming it), or
// when the pipeline has failed (DEVICE_LOST) or is shutting down (CANCELLED).
vkp_status_t vkp_pipeline_run(vkp_pipeline_t *pipeline,
                              uint64_t *out_seq) VKP_MUST_USE;

// The result of one frame. Everything in it is owned by the caller.
typedef struct vkp_pipeline_result_t {
  uint64_t seq;             // the frame's sequence number
  vkp_status_t status;      // owned: NULL, or why the frame failed
  int32_t n_outputs;        // the pipeline's global outputs, in order
  vkp_tensor_t *outputs;    // owned; zeroed tensors when status is set
  uint64_t latency_ns;      // from run() to the frame's last stage finishing
} vkp_pipeline_result_t;

// Frees the result's status and outputs and zeroes it. NULL and zeroed
// results are fine.
void vkp_pipeline_result_deinit(vkp_pipeline_result_t *result);

// Takes the oldest finished frame's result into *out_result (initialised by
// this call). Returns EMPTY, leaving *out_result zeroed, when no finished
// frame is ready within `timeout_ns` (0 polls; UINT64_MAX waits for ever; the
// wait sleeps, it never spins).
vkp_status_t vkp_pipeline_get_output(vkp_pipeline_t *pipeline,
                                     uint64_t timeout_ns,
                                     vkp_pipeline_result_t *out_result)
    VKP_MUST_USE;

// Synchronous convenience: sets every global input from `inputs` (plan
// order, borrowed), runs one frame and waits for it; `outputs` (plan order)
// are initialised by this call and owned by the caller. Fails with
// FAILED_PRECONDITION when frames are already in flight or not collected.
// The frame's own error, if any, is returned.
vkp_status_t vkp_pipeline_infer(vkp_pipeline_t *pipeline,
                                const vkp_tensor_t *inputs,
                                vkp_tensor_t *outputs) VKP_MUST_USE;

// Waits until every accepted frame has finished (its result is ready for
// get_output). Returns TIMEOUT after `timeout_ns` (UINT64_MAX: for ever).
vkp_status_t vkp_pipeline_drain(vkp_pipeline_t *pipeline,
                                uint64_t timeout_ns) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Statistics

typedef struct vkp_pipeline_stage_stats_t {
  const char *name;          // borrowed from the plan
  const char *target;        // borrowed from the plan
  uint64_t frames;           // frames this stage has finished (skipped too)
  uint64_t failed_frames;    // frames it failed or skipped for an error
  uint64_t busy_ns;          // running (host) or on the device (device)
  uint64_t wait_input_ns;    // waiting for input slots to be filled
  uint64_t wait_slot_ns;     // waiting for a free output slot
  uint64_t cpu_ns;           // CPU time of the stage's worker thread while
                             // running (host stages; the threads of its pool
                             // and device time not counted)
} vkp_pipeline_stage_stats_t;

typedef struct vkp_pipeline_binding_stats_t {
  const char *name;          // borrowed: "x" (global) or "stage.output"
  int32_t depth;             // slots in the ring
  int32_t peak_occupancy;    // most slots holding unreleased frames at once
  bool device_memory;        // slots live in a device target's staging memory
} vkp_pipeline_binding_stats_t;

typedef struct vkp_pipeline_stats_t {
  int32_t n_stages;
  vkp_pipeline_stage_stats_t *stages;      // owned
  int32_t n_bindings;
  vkp_pipeline_binding_stats_t *bindings;  // owned
  uint64_t frames_run;       // accepted runs
  uint64_t frames_finished;  // finished (results ready or already taken)
  uint64_t frames_failed;    // finished with an error
  uint64_t latency_min_ns, latency_max_ns, latency_sum_ns;  // finished frames
} vkp_pipeline_stats_t;

// A snapshot of the counters since creation; *out_stats is initialised by
// this call and freed with vkp_pipeline_stats_deinit.
vkp_status_t vkp_pipeline_get_stats(vkp_pipeline_t *pipeline,
                                    vkp_pipeline_stats_t *out_stats)
    VKP_MUST_USE;
void vkp_pipeline_stats_deinit(vkp_pipeline_stats_t *stats);

// ---------------------------------------------------------------------------
// Trace

// One stage working on one frame (monotonic clock, nanoseconds). For a device
// stage, start is when its work could begin on the device (submitted and the
// previous frame done) and end when the host saw it finish.
typedef struct vkp_pipeline_event_t {
  int32_t stage;
  uint64_t seq;
  uint64_t start_ns;
  uint64_t end_ns;
  bool failed;               // the stage failed or skipped the frame
} vkp_pipeline_event_t;

// Copies the events recorded so far (at most options.trace_capacity, in the
// order stages finished them) into *out_events, owned by the caller
// (vkp_pipeline_trace_free); *out_count receives their number.
vkp_status_t vkp_pipeline_get_trace(vkp_pipeline_t *pipeline,
                                    vkp_pipeline_event_t **out_events,
                                    int32_t *out_count) VKP_MUST_USE;
void vkp_pipeline_trace_free(vkp_pipeline_event_t *events);

// ---------------------------------------------------------------------------
// Synthetic pipelines (benchmarks and tests): a chain of host stages with
// fixed costs, each copying a float32 vector of `numel` elements from its
// input to its output and adding 1 to element 0. Global input "x", global
// output "y". The synthetic stages use a private target that is not in any
// registry.

typedef enum vkp_pipeline_synthetic_kind_t {
  VKP_PIPELINE_SYNTHETIC_SLEEP,  // nanosleep for the cost
  VKP_PIPELINE_SYNTHETIC_BUSY,   // spin on the clock for the cost
} vkp_pipeline_synthetic_kind_t;

typedef struct vkp_pipeline_synthetic_stage_t {
  vkp_pipeline_synthetic_kind_t kind;
  uint64_t cost_ns;
} vkp_pipeline_synthetic_stage_t;

// Builds and starts a synthetic pipeline of `n_stages` (>= 1) stages
// (`stages` borrowed). numel >= 1.
vkp_status_t vkp_pipeline_create_synthetic(
    const vkp_pipeline_synthetic_stage_t *stages, int32_t n_stages,
    int64_t numel, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_PIPELINE_H_
