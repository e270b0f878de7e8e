// SPDX-License-Identifier: Apache-2.0
//
// vkpipe targets: the "bring your own codegen" plug-in point. A target is a
// static vtable of function pointers plus private state; a registry holds the
// targets a program can use. The built-in ones ("ref", "cpu", "vulkan") are
// registered exactly like one a host program adds:
//
//   static const vkp_target_vtable_t my_npu_vtable = {
//       .name = "npu", .supports = npu_supports, .compile = npu_compile,
//       .load = npu_load, .run = npu_run, .unload = npu_unload,
//   };
//   vkp_registry_t *reg;
//   vkp_status_t st = vkp_registry_create_default(&reg);
//   st = vkp_registry_add(reg, &my_npu_vtable, /*impl=*/npu_state);
//   st = vkp_target_run_graph(vkp_registry_find(reg, "npu"), graph, NULL,
//                             inputs, outputs);
//
// Thread-safety: a registry is read-only after set-up and may then be shared.
// A target's supports/estimate/compile must be callable from several threads;
// one loaded stage is only ever driven by one thread at a time.
#ifndef VKPIPE_TARGET_H_
#define VKPIPE_TARGET_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkp_target_t vkp_target_t;
typedef struct vkp_target_vtable_t vkp_target_vtable_t;

// An opaque compiled subgraph: bytes a target makes and later loads.
typedef struct vkp_blob_t {
  void *data;   // owned; allocate with vkp_blob_alloc
  size_t size;
} vkp_blob_t;

// Allocates `size` bytes into `blob` (through the library allocator).
vkp_status_t vkp_blob_alloc(vkp_blob_t *blob, size_t size) VKP_MUST_USE;
// Frees the blob's bytes and zeroes it.
void vkp_blob_deinit(vkp_blob_t *blob);

// The storage precision a stage's weights are kept in (`--precision`).
// float32 is the default and every target's; a target that cannot honour
// another precision refuses the compile with a reason (never falls back).
typedef enum vkp_precision_t {
  VKP_PRECISION_FP32 = 0,  // float32 storage and arithmetic
  VKP_PRECISION_FP16,      // float16 storage of matrix/convolution weights,
                           // float32 arithmetic (vulkan, with
                           // storageBuffer16BitAccess)
} vkp_precision_t;

// "fp32" / "fp16".
const char *vkp_precision_name(vkp_precision_t precision);
// Parses "fp32" or "fp16"; false for anything else.
bool vkp_precision_parse(const char *text, vkp_precision_t *out_precision);

// Options a compile honours where it applies; zero-initialised means defaults.
typedef struct vkp_compile_options_t {
  int32_t threads;        // threads inside a stage (0 or 1: single-threaded)
  const char *march;      // CPU codegen -march value; NULL: "native"
  const char *dump_dir;   // when set, write generated sources here
  const char *cache_dir;  // compile cache; NULL: the user's cache directory
  // Cpus a host stage's threads are pinned to (thread i, the caller of run
  // included, on cpu_affinity[i % n_cpu_affinity]); borrowed; NULL: not
  // pinned. The cpu target records them in its blob and checks at load
  // that the process may use them.
  const int32_t *cpu_affinity;
  int32_t n_cpu_affinity;
  vkp_precision_t precision;  // see vkp_precision_t; 0: float32
} vkp_compile_options_t;

// A point on a timeline semaphore: wait for or signal `value`. `semaphore` is
// a VkSemaphore for GPU targets (kept opaque here so this header does not need
// Vulkan).
typedef struct vkp_timeline_point_t {
  uint64_t semaphore;
  uint64_t value;
} vkp_timeline_point_t;

// An asynchronous launch of a loaded stage (see submit below).
typedef struct vkp_submit_info_t {
  const vkp_tensor_t *inputs;   // borrowed; in the subgraph's input order
  vkp_tensor_t *outputs;        // borrowed, preallocated; subgraph output order
  int32_t slot;                 // staging slot index the tensors live in
  int32_t n_waits;
  const vkp_timeline_point_t *waits;
  int32_t n_signals;
  const vkp_timeline_point_t *signals;
} vkp_submit_info_t;

// The base of every loaded stage; a target's own stage struct embeds it first.
typedef struct vkp_stage_t {
  const vkp_target_t *target;  // borrowed
} vkp_stage_t;

// Host-visible memory that a device target's stages read and write in place
// (the pipeline's staging slots). Made by a target's staging_alloc.
typedef struct vkp_staging_t {
  void *host;           // mapped pointer, valid until staging_free
  size_t size;
  uint64_t buffer;      // target-defined handle (a VkBuffer for "vulkan")
  uint64_t offset;      // byte offset of `host` inside `buffer`
  void *allocation;     // target-private bookkeeping
} vkp_staging_t;

// What a target fills in. Entries marked optional may be NULL.
struct vkp_target_vtable_t {
  // Unique, short, lower-case: "ref", "cpu", "vulkan".
  const char *name;

  // Can this target run `node` of `graph` (validated)? When not, writes a
  // one-line reason into `reason` (reason_size bytes, NUL-terminated).
  bool (*supports)(const vkp_target_t *target, const vkp_graph_t *graph,
                   const vkp_node_t *node, char *reason, size_t reason_size);

  // Optional: estimated seconds for `node`. NULL: the partitioner's roofline
  // model with this target's device rates is used.
  vkp_status_t (*estimate)(const vkp_target_t *target, const vkp_graph_t *graph,
                           const vkp_node_t *node, double *out_seconds);

  // Optional: the kernel class this target runs `node` with, a short static
  // name ("conv_winograd", "gemm", ...), or NULL for none in particular; and
  // in *out_columns (set to 0 before the call) the smaller output dimension
  // of the GEMMs that kernel runs, 0 when it runs none. The roofline scales
  // the target's compute rate by the profile's factor for the class and by
  // the GEMM width term (docs/pipeline-config.md, "Kernel classes").
  const char *(*kernel_class)(const vkp_target_t *target, const vkp_graph_t *graph,
                              const vkp_node_t *node, double *out_columns);

  // Compiles a validated subgraph into an opaque blob. Weights stay in the
  // subgraph; the blob holds code only.
  vkp_status_t (*compile)(const vkp_target_t *target, const vkp_graph_t *graph,
                          const vkp_compile_options_t *options,
                          vkp_blob_t *out_blob);

  // Loads a blob made by compile for the same subgraph (borrowed: it must
  // outlive the stage) into a stage executor. *out_stage is owned by the caller
  // and freed with unload.
  vkp_status_t (*load)(const vkp_target_t *target, const vkp_graph_t *graph,
                       const void *blob, size_t blob_size,
                       vkp_stage_t **out_stage);

  // Runs the stage synchronously. `inputs` follow graph->inputs, `outputs`
  // graph->outputs and are preallocated by the caller with the inferred
  // shapes. Must not keep pointers to them after returning.
  vkp_status_t (*run)(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                      vkp_tensor_t *outputs);

  // Optional: launches the stage asynchronously, waiting for `waits` before
  // the work starts and signalling `signals` when it is done. On failure no
  // signal is ever raised by this call. NULL: the runtime calls run from a
  // worker thread and signals from the host.
  vkp_status_t (*submit)(vkp_stage_t *stage, const vkp_submit_info_t *info);

  // Frees a loaded stage (NULL is fine).
  void (*unload)(vkp_stage_t *stage);

  // --- Device entries (optional; a target that runs asynchronously on a
  // device fills in all of them, a host target none). The pipeline runtime
  // uses them to keep frames on the device between stages: staging slots in
  // host-visible memory, per-slot command buffers recorded once, and timeline
  // semaphores (opaque uint64_t handles) waited on inside submits.

  // Allocates `size` bytes of host-visible memory usable by this target's
  // stages; freed with staging_free.
  vkp_status_t (*staging_alloc)(const vkp_target_t *target, size_t size,
                                vkp_staging_t *out_staging);
  void (*staging_free)(const vkp_target_t *target, vkp_staging_t *staging);

  // Records the stage's per-slot command buffers. `inputs` holds
  // n_slots * graph->n_inputs entries (slot-major), `outputs` likewise; each
  // entry is borrowed and outlives the stage. After this, submit's info->slot
  // picks which recording to replay.
  vkp_status_t (*bind_slots)(vkp_stage_t *stage, int32_t n_slots,
                             const vkp_staging_t *inputs,
                             const vkp_staging_t *outputs);

  // Timeline semaphores: create (initial value 0), destroy, signal and wait
  // from the host, read the current value. wait returns a TIMEOUT status when
  // `timeout_ns` passes and DEVICE_LOST when the device is gone.
  vkp_status_t (*timeline_create)(const vkp_target_t *target,
                                  uint64_t *out_semaphore);
  void (*timeline_destroy)(const vkp_target_t *target, uint64_t semaphore);
  vkp_status_t (*timeline_signal)(const vkp_target_t *target,
                                  uint64_t semaphore, uint64_t value);
  vkp_status_t (*timeline_wait)(const vkp_target_t *target, uint64_t semaphore,
                                uint64_t value, uint64_t timeout_ns);
  vkp_status_t (*timeline_query)(const vkp_target_t *target,
                                 uint64_t semaphore, uint64_t *out_value);

  // Optional: writes human-readable forms of a blob this target compiled for
  // `graph` into the existing directory `dir` (generated source, shader
  // disassembly, ...), for `vkpipe inspect --dump`.
  vkp_status_t (*dump)(const vkp_target_t *target, const vkp_graph_t *graph,
                       const void *blob, size_t blob_size, const char *dir);

  // Optional: frees `target->impl` when the registry is destroyed.
  void (*destroy)(vkp_target_t *target);
};

struct vkp_target_t {
  const vkp_target_vtable_t *vtable;  // borrowed; static storage
  void *impl;                          // owned by the target
};

// ---------------------------------------------------------------------------
// Registry

typedef struct vkp_registry_t vkp_registry_t;

// An empty registry, owned by the caller.
vkp_status_t vkp_registry_create(vkp_registry_t **out_registry) VKP_MUST_USE;

// A registry with every built-in target that could be brought up. A built-in
// that cannot (no Vulkan device, say) is recorded as unavailable with its
// reason; that is not an error.
vkp_status_t vkp_registry_create_default(vkp_registry_t **out_registry)
    VKP_MUST_USE;

// A registry with only the built-in targets named in `names` (n_names
// entries, borrowed), in the usual order: a program that knows which
// targets it needs brings up no others (no Vulkan instance for a cpu-only
// run). An unknown name is NOT_FOUND listing the built-ins; one that cannot
// be brought up is recorded as unavailable, as in create_default.
vkp_status_t vkp_registry_create_builtin(const char *const *names,
                                         int32_t n_names,
                                         vkp_registry_t **out_registry)
    VKP_MUST_USE;

// Destroys the registry and every registered target (calling their destroy).
void vkp_registry_destroy(vkp_registry_t *registry);

// Registers a target. `vtable` is borrowed (static storage); `impl` is owned
// by the registry from now on, also when this call fails (then destroy is
// called on it). Fails on a duplicate name or a vtable missing a required
// entry.
vkp_status_t vkp_registry_add(vkp_registry_t *registry,
                              const vkp_target_vtable_t *vtable, void *impl)
    VKP_MUST_USE;

// Records that target `name` exists but cannot be used, and why (copied).
vkp_status_t vkp_registry_add_unavailable(vkp_registry_t *registry,
                                          const char *name, const char *reason)
    VKP_MUST_USE;

// The target named `name`, or NULL (unknown or unavailable). Borrowed.
const vkp_target_t *vkp_registry_find(const vkp_registry_t *registry,
                                      const char *name);

// Why target `name` is unavailable, or NULL when it is available or unknown.
const char *vkp_registry_unavailable_reason(const vkp_registry_t *registry,
                                            const char *name);

// Available targets, in registration order.
int32_t vkp_registry_count(const vkp_registry_t *registry);
const vkp_target_t *vkp_registry_get(const vkp_registry_t *registry,
                                     int32_t index);

// Looks up `name`, with an error naming the known targets when it is unknown
// or the reason when it is unavailable.
vkp_status_t vkp_registry_lookup(const vkp_registry_t *registry,
                                 const char *name,
                                 const vkp_target_t **out_target) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Running a whole graph on one target

// Checks every node with supports() and reports all unsupported ones at once.
vkp_status_t vkp_target_check_graph(const vkp_target_t *target,
                                    const vkp_graph_t *graph) VKP_MUST_USE;

// Compiles, loads and runs a validated graph once. `inputs` are borrowed and
// follow graph->inputs (dtype and shape checked); `outputs` are initialised by
// this call (owned by the caller, vkp_tensor_deinit each) and follow
// graph->outputs. `options` may be NULL.
vkp_status_t vkp_target_run_graph(const vkp_target_t *target,
                                  const vkp_graph_t *graph,
                                  const vkp_compile_options_t *options,
                                  const vkp_tensor_t *inputs,
                                  vkp_tensor_t *outputs) VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_TARGET_H_
