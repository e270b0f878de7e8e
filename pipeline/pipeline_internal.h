// SPDX-License-Identifier: Apache-2.0
// Private structures of the pipeline executor, shared by pipeline.c (set-up,
// API) and worker.c (the stage workers).
//
// Locking: one mutex per pipeline (`mu`) guards every counter below that is
// not marked otherwise: ring counters, frame records and their table, stage
// progress and stats. Slot memory is not guarded by the mutex; the counters
// say who owns a slot: the producer of ring r may write slot seq % depth once
// every consumer's `released` >= seq - depth; a consumer may read it once
// `available` >= seq (host producers) or once the producer's timeline
// semaphore reaches seq (device producers), until it raises its `released`.
#ifndef VKPIPE_PIPELINE_PIPELINE_INTERNAL_H_
#define VKPIPE_PIPELINE_PIPELINE_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/target.h"

// A bounded ring of staging slots carrying one value (a global input or a
// stage output) from its producer to its consumer stages.
typedef struct vkp__ring_t {
  char *name;                 // owned: "x" or "stage.output"
  int32_t src_stage;          // VKP_PLAN_GLOBAL: a global input
  int32_t src_index;          // output index in src_stage, or global input
  vkp_dtype_t dtype;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  size_t nbytes;
  void **slots;               // owned array of depth host pointers
  // Per slot, the run-time shape of what it holds: the static shape, except
  // for a bounded value (docs/onnx.md, "Data-dependent output shapes"),
  // whose extent the producer writes here and the consumers read, under
  // the same hand-over as the slot's bytes.
  int64_t (*slot_shapes)[VKP_MAX_RANK];  // owned: depth entries
  vkp_staging_t *staging;     // owned array (depth) when device_target
  const vkp_target_t *device_target;  // staging memory owner, or NULL
  int32_t n_consumers;        // distinct consumer stages
  int32_t *consumers;         // owned: stage indices
  uint64_t *released;         // owned: per consumer, last released seq
  // Last seq a consumer may start on: written (host producer), submitted
  // (device producer; the data is ready when its semaphore reaches seq).
  uint64_t available;
  // A host producer feeding a device consumer signals this timeline
  // semaphore (made by the consumer's target) with seq, failed frames too.
  uint64_t host_semaphore;
  bool has_host_semaphore;
  int32_t peak_occupancy;
} vkp__ring_t;

// Where a stage output goes. Any combination of the three.
typedef struct vkp__stage_output_t {
  int32_t ring;               // ring carrying it to stages, or -1
  int32_t n_globals;
  int32_t *globals;           // owned: global output indices fed by it
  void *scratch;              // owned: a host stage's unbound output, one
                              // scratch_bytes region per copy
  size_t scratch_bytes;
} vkp__stage_output_t;

struct vkp__stage_t;

// One copy of a host stage (plan "replicas"; one copy when not
// replicated): frame seq runs on copy (seq - 1) % n_copies, on the copy's
// own thread and loaded instance.
typedef struct vkp__copy_t {
  struct vkp__stage_t *stage;          // borrowed: the owner
  int32_t index;
  vkp_stage_t *loaded;                 // copy 0: the stage's `loaded`
                                       // (borrowed); others owned
  vkp_tensor_t *frame_outputs;         // owned: n_outputs, per-frame scratch
  pthread_t thread;                    // copy 0: the stage's `worker`
  bool started;
} vkp__copy_t;

typedef struct vkp__stage_input_t {
  int32_t ring;
  int32_t consumer;           // index into the ring's consumers
} vkp__stage_input_t;

typedef struct vkp__stage_t {
  struct vkp_pipeline_t *pipeline;     // borrowed: the owner
  int32_t index;
  const vkp_plan_stage_t *plan_stage;  // borrowed
  const vkp_target_t *target;          // borrowed
  vkp_stage_t *loaded;                 // owned (target unload)
  vkp_blob_t blob;                     // owned; outlives `loaded`
  bool device;                         // driven through submit + semaphores
  // On another MPI rank (a proxy here): a poster sends each frame as soon
  // as its inputs and slots are ready, up to `depth` ahead, and a completer
  // takes the replies in order (docs/scale-out.md).
  bool remote;
  vkp_tensor_t *slot_outputs;          // owned: remote, depth * n_outputs
  vkp_status_t *slot_error;            // owned: remote, depth; the poster's
  bool *slot_skip;                     // owned: remote, depth
  _Atomic uint64_t posted;             // remote: `submitted`, for the completer's spin
  uint64_t semaphore;                  // device: own timeline
  bool has_semaphore;
  int32_t n_inputs;
  vkp__stage_input_t *inputs;          // owned
  int32_t n_outputs;
  vkp__stage_output_t *outputs;        // owned
  vkp_tensor_t *in_views;              // owned: depth * n_inputs views
  vkp_tensor_t *out_views;             // owned: depth * n_outputs views
  // Host stages: the copies that run its frames (n_copies >= 1; more with
  // plan "replicas"). They finish frames out of order and hand them on in
  // order: `handed` is the last frame whose outputs were published and
  // inputs released, and a copy waits on cv_handed for its turn.
  int32_t n_copies;
  vkp__copy_t *copies;                 // owned: n_copies entries
  uint64_t handed;
  pthread_cond_t cv_handed;
  vkp_staging_t *bind_in;              // owned: device, depth * n_inputs
  vkp_staging_t *bind_out;             // owned: device, depth * n_outputs
  vkp_timeline_point_t *waits;         // owned: device, n_inputs wait points
  pthread_t worker;                    // host: runs; device, remote: submits
  pthread_t completer;                 // device, remote: waits and completes
  bool worker_started, completer_started;
  pthread_cond_t cv_ready;    // "not empty": inputs/frames may be ready
  pthread_cond_t cv_space;    // "not full": an output slot may be free
  pthread_cond_t cv_submitted;  // device, remote: a submit for the completer
  uint64_t submitted;         // device, remote: last seq submitted (or host-signalled)
  uint64_t completed;         // last seq finished by this stage
  uint64_t *submit_ns;        // device, remote: depth + 1 submit times, by seq
  uint64_t last_complete_ns;
  vkp_pipeline_stage_stats_t stats;
} vkp__stage_t;

typedef struct vkp__global_output_t {
  int32_t src_stage;
  int32_t src_output;
  vkp_dtype_t dtype;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
} vkp__global_output_t;

typedef struct vkp__frame_t {
  uint64_t seq;
  vkp_status_t status;        // first error of the frame, owned
  uint64_t run_ns;            // when run() accepted it
  uint64_t done_ns;
  int32_t stages_left;
  vkp_tensor_t *outputs;      // owned: the global outputs
} vkp__frame_t;

struct vkp_pipeline_t {
  // What the pipeline allocates with (options->allocator, or the creator's
  // current one); current during each call on it and on its stage threads.
  vkp_allocator_t allocator;
  const vkp_plan_t *plan;     // borrowed, or owned_plan
  vkp_plan_t *owned_plan;
  int32_t depth;
  bool sequential;
  int32_t n_stages;
  vkp__stage_t *stages;
  int32_t n_rings;
  vkp__ring_t *rings;
  int32_t n_inputs;
  int32_t *input_ring;        // per global input: ring or -1 (unbound)
  bool *input_set;            // per global input, for the next frame
  int32_t n_outputs;
  vkp__global_output_t *outputs;

  pthread_mutex_t mu;
  pthread_cond_t cv_input_space;  // "not full": run() waiting for a slot
  pthread_cond_t cv_result;       // "not empty": a frame finished
  atomic_bool shutdown;           // written under mu, read anywhere
  atomic_bool failed;             // DEVICE_LOST seen (written under mu)
  // Moves (under mu) whenever a frame is launched, published or completed:
  // a waiter about to sleep polls it for up to spin_ns first (vkp__spin).
  atomic_uint_fast64_t events;
  uint64_t spin_ns;               // waiters' poll before sleeping (0: none)
  char *failed_message;           // owned
  uint64_t launched;              // last accepted seq
  uint64_t finished;              // frames <= finished have all finished
  uint64_t taken;                 // last seq handed out by get_output
  vkp__frame_t **frames;          // ring of frame records, by seq & mask
  uint64_t frames_mask;           // capacity - 1 (a power of two)
  uint64_t frames_failed;
  uint64_t latency_min_ns, latency_max_ns, latency_sum_ns;
  vkp_pipeline_event_t *trace;    // owned; trace_capacity entries or NULL
  int32_t trace_capacity;
  int32_t trace_count;            // guarded by mu
};

// Records one stage event when tracing is on; call with mu held.
void vkp__trace_record(vkp_pipeline_t *p, int32_t stage, uint64_t seq,
                       uint64_t start_ns, uint64_t end_ns, bool failed);

// Monotonic clock in nanoseconds.
uint64_t vkp__now_ns(void);

// One pause of a polling loop (a hint to the core, and to its SMT sibling).
static inline void vkp__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Tells spinning waiters that the pipeline's state moved; call with mu held.
static inline void vkp__events_bump(vkp_pipeline_t *p) {
  atomic_fetch_add_explicit(&p->events, 1, memory_order_release);
}

// Called with mu held by a waiter whose condition is false: while the time
// since `*spin_from` (0: now) is under `spin_ns`, drops mu and polls
// p->events until it moves or that time is up, then takes mu again and
// returns true (test the condition again). False once the spin is spent:
// then sleep on the condition variable. A thread that wakes a sleeping
// waiter waits for the scheduler to give it a core, which on a virtual
// machine can take tens of microseconds per hand-off; a short poll keeps
// the hand-offs between stages of small models off that path.
bool vkp__spin(vkp_pipeline_t *p, uint64_t spin_ns, uint64_t *spin_from);

// Frame record for `seq` (launched, not yet taken); call with mu held.
vkp__frame_t *vkp__frame_get(vkp_pipeline_t *p, uint64_t seq);

// Records `status` (consumed) as the error of frame `seq` unless it already
// has one; DEVICE_LOST also fails the pipeline. Call with mu held.
void vkp__frame_fail(vkp_pipeline_t *p, uint64_t seq, vkp_status_t status);

// Starts the threads of every stage (worker.c).
vkp_status_t vkp__pipeline_start_workers(vkp_pipeline_t *p) VKP_MUST_USE;

// Loads-time construction shared by every create variant (pipeline.c): `p`
// has plan, depth, sequential and each stage's target/loaded set.
vkp_status_t vkp__pipeline_build(vkp_pipeline_t *p) VKP_MUST_USE;

// Allocates a pipeline for `plan` (borrowed) with stages unloaded.
vkp_status_t vkp__pipeline_alloc(const vkp_plan_t *plan,
                                 const vkp_pipeline_options_t *options,
                                 vkp_pipeline_t **out_pipeline) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Scale-out (mpi.c, or mpi_stub.c without MPI; docs/scale-out.md)

// True when some stage of `plan` is placed on a rank other than 0.
bool vkp__plan_has_ranks(const vkp_plan_t *plan);

// A proxy for stage `stage` of `plan`, placed on another rank: a host stage
// whose run sends the inputs to that rank and receives its outputs. Waits
// for the rank to report that it loaded the stage; when the rank reports a
// load error, that error is returned with *out_stage set all the same (the
// caller unloads it).
// It keeps `depth` frames in flight at most, one per ring slot.
vkp_status_t vkp__mpi_proxy_load(const vkp_plan_t *plan, int32_t stage, int32_t depth,
                                 const vkp_target_t **out_target,
                                 vkp_stage_t **out_stage) VKP_MUST_USE;

// Called by the poster of a proxy stage before each frame `seq`, in order:
// `run` false when the frame is skipped there (nothing is then posted).
void vkp__mpi_proxy_frame(vkp_stage_t *stage, uint64_t seq, bool run);

// Posts frame `seq` of a proxy stage in ring slot `slot` (0..depth-1): the
// receives of its reply into `outputs`, the sends of `inputs`. Both stay
// the frame's until vkp__mpi_proxy_finish of the slot returns.
vkp_status_t vkp__mpi_proxy_post(vkp_stage_t *stage, uint64_t seq, int32_t slot,
                                 const vkp_tensor_t *inputs,
                                 vkp_tensor_t *outputs) VKP_MUST_USE;

// How long the completer of the remote stage `stage` (its proxy) keeps
// testing before it sleeps (VKPIPE_MPI_SPIN_US, or the longer spin of
// vkp__mpi_proxy_set_spin; 0 without MPI).
uint64_t vkp__mpi_spin_ns(const vkp_stage_t *stage);

// The executor's word on rank 0's cores: `own_cores` when its stages'
// threads (a remote stage's proxy: one) fit in vkp__mpi_rank_cores and no
// stage is a device's; the proxy's waits then spin longer.
void vkp__mpi_proxy_set_spin(vkp_stage_t *stage, bool own_cores);

// The cores this rank may count on: its affinity mask's when it was bound
// to fewer than the host has, else the host's shared evenly between the
// MPI ranks on this node (without MPI: vkp__host_cores).
int32_t vkp__mpi_rank_cores(void);

// Waits for the reply of the frame posted in `slot` (frames finish in the
// order they were posted): the stage's error on its rank, DEVICE_LOST for a
// lost rank, or NULL. `outputs` (as posted) get the run-time extents of
// their bounded values.
vkp_status_t vkp__mpi_proxy_finish(vkp_stage_t *stage, int32_t slot,
                                   vkp_tensor_t *outputs) VKP_MUST_USE;

// Tells every rank serving a stage of `p` that the pipeline is gone; called
// by destroy once the workers have stopped, before the stages are unloaded.
void vkp__mpi_stop(vkp_pipeline_t *p);

// Loads stage `stage` of `plan` on a serving rank (mpi.c).
typedef vkp_status_t (*vkp__stage_loader_t)(void *ctx, const vkp_plan_t *plan,
                                            int32_t stage,
                                            const vkp_target_t **out_target,
                                            vkp_stage_t **out_stage);

// Synthetic stages (synthetic.c), shared with the MPI worker side.
vkp_status_t vkp__synthetic_plan(int32_t n_stages, int64_t numel,
                                 vkp_plan_t *plan) VKP_MUST_USE;
vkp_status_t vkp__synthetic_stage_new(const vkp_pipeline_synthetic_stage_t *cost,
                                      const vkp_target_t **out_target,
                                      vkp_stage_t **out_stage) VKP_MUST_USE;

#endif  // VKPIPE_PIPELINE_PIPELINE_INTERNAL_H_
