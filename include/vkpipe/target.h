// SPDX-License-Identifier: Apache-2.0
//
// vkpipe targets: the "bring your own codegen" plug-in point. A target is a
// static vtable of function pointers plus private state; a registry holds the
// targets a program can use. The built-in ones ("ref", "cpu", "vulkan") are
// registered exactly like one a host program adds:
//
//   static const vkp_target_vtable_t my_npu_vtable = {
//       .api_version = VKP_TARGET_API_VERSION,
//       .name = "npu",
//       .caps = {.dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)},
//       .compiler = {.supports = npu_supports, .compile = npu_compile},
//       .stage = {.load = npu_load, .run = npu_run, .unload = npu_unload},
//   };
//   vkp_registry_t *reg;
//   vkp_status_t st = vkp_registry_create_default(&reg);
//   st = vkp_registry_add(reg, &my_npu_vtable, /*impl=*/npu_state);
//   st = vkp_target_run_graph(vkp_registry_find(reg, "npu"), graph, NULL,
//                             inputs, outputs);
//
// A target has three parts: the compile part (what it supports, what that
// costs, the compiler), the stage part (load, run, unload) and, for a target
// that keeps frames on a device, the device part (asynchronous submit,
// staging memory, timelines). It declares its capabilities (vkp_target_caps_t)
// and an interface version; registration checks each part as a whole and
// refuses an incomplete one, naming the missing entry. docs/targets.md has
// the walk-through and examples/out_of_tree_target/ a complete target.
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

// A kernel class (kernel_class below): the node is computed inside another
// node's kernel and costs nothing of its own.
#define VKP_KERNEL_CLASS_FUSED "fused"

// The interface version this header describes. A vtable sets
// `.api_version = VKP_TARGET_API_VERSION`; registration refuses any other
// value, so a target built against another layout is an error that says so
// rather than a crash. Version 1 was the flat vtable without capabilities;
// version 2's default kernel rates had no memory factor.
#define VKP_TARGET_API_VERSION 3u

// What a target can do, declared once; the partitioner and the pipeline read
// these instead of guessing from which entries are set.
typedef enum vkp_target_flag_t {
  // The device part's submit launches a stage without blocking, waiting for
  // and signalling timeline points on the device.
  VKP_TARGET_ASYNC_SUBMIT = 1u << 0,
  // The device part's staging_alloc gives host-visible memory that the
  // target's stages read and write in place (no copies between stages).
  VKP_TARGET_HOST_VISIBLE_STAGING = 1u << 1,
  // The device part's timelines can be signalled and waited on from the
  // host, so host stages can hand frames to device stages and back.
  VKP_TARGET_TIMELINE_EXPORT = 1u << 2,
  // Placement's default fallback: a node the policy's target refuses goes to
  // the first registered target with this flag, unless the caller names a
  // fallback (vkp_partition_options_t.fallback).
  VKP_TARGET_DEFAULT_FALLBACK = 1u << 3,
} vkp_target_flag_t;

// The flags that make a device target. This version of the runtime drives a
// stage on a device only with all three, so registration requires a device
// part and all three flags together, or none of them.
#define VKP_TARGET_DEVICE_FLAGS                                  \
  (VKP_TARGET_ASYNC_SUBMIT | VKP_TARGET_HOST_VISIBLE_STAGING | \
   VKP_TARGET_TIMELINE_EXPORT)
#define VKP_TARGET_KNOWN_FLAGS \
  (VKP_TARGET_DEVICE_FLAGS | VKP_TARGET_DEFAULT_FALLBACK)

// At most this many kernel rates, with names of at most
// VKP_TARGET_MAX_KERNEL_NAME characters.
#define VKP_TARGET_MAX_KERNEL_RATES 12
#define VKP_TARGET_MAX_KERNEL_NAME 31

// A kernel class's factors relative to the target's rates (see kernel_class
// below and docs/pipeline-config.md, "Kernel classes").
typedef struct vkp_target_kernel_rate_t {
  const char *kernel;     // short static name: "conv_winograd", "gemm", ...
  double compute_scale;   // > 0
  // >= 0. 0: the roofline (the node's compute and memory traffic overlap,
  // the longer counts). > 0: the kernel's activations (the bytes it reads
  // and writes other than constant weights) move at gbps * memory_scale,
  // in addition to its compute time.
  double memory_scale;
} vkp_target_kernel_rate_t;

// The rates the cost model uses for a target when no measured profile lists
// it (docs/pipeline-config.md, "Cost profile"). Static storage.
typedef struct vkp_target_rates_t {
  // The device the target runs on; targets on one device share it. "host"
  // is the host's cores (stages there get threads).
  const char *device;
  double gflops;               // > 0
  double gbps;                 // > 0
  double launch_us;            // >= 0, per node
  double thread_compute_eff;   // 0..1, gain of each added thread in a stage
  double thread_memory_eff;    // 0..1
  double thread_split_us;      // >= 0, splitting one kernel over the threads
  double gemm_half_columns;    // >= 0; 0: no GEMM width term
  int32_t n_kernels;
  const vkp_target_kernel_rate_t *kernels;  // n_kernels entries
} vkp_target_rates_t;

// Limits that hold for every node a target accepts (0: no limit).
typedef struct vkp_target_limits_t {
  // Largest tensor, in bytes, a node may read or write.
  uint64_t max_tensor_bytes;
} vkp_target_limits_t;

typedef struct vkp_target_caps_t {
  uint32_t flags;              // vkp_target_flag_t bits
  vkp_dtype_set_t dtypes;      // every dtype a node's tensors may have; not 0
  vkp_target_limits_t limits;
  // Optional (NULL: the profile's fallback rates); static storage.
  const vkp_target_rates_t *default_rates;
} vkp_target_caps_t;

// The compile part (required): what can run here, at what cost, and the
// compiler. Every entry may be called from several threads at once.
typedef struct vkp_target_compile_ops_t {
  // Required. Can this target run `node` of `graph` (validated)? When not,
  // writes a one-line reason into `reason` (reason_size bytes,
  // NUL-terminated). Saying yes is a promise: compile must then succeed for
  // a subgraph of such nodes (placement relies on it to fall back visibly).
  bool (*supports)(const vkp_target_t *target, const vkp_graph_t *graph,
                   const vkp_node_t *node, char *reason, size_t reason_size);

  // Optional: estimated seconds for `node`. NULL: the partitioner's roofline
  // model with this target's rates is used.
  vkp_status_t (*estimate)(const vkp_target_t *target, const vkp_graph_t *graph,
                           const vkp_node_t *node, double *out_seconds);

  // Optional: the kernel class this target runs `node` with, a short static
  // name ("conv_winograd", "gemm", ...), or NULL for none in particular; and
  // in *out_columns (set to 0 before the call) the smaller output dimension
  // of the GEMMs that kernel runs, 0 for no width term. The roofline scales
  // the target's compute rate by the profile's factor for the class and by
  // the GEMM width term, and adds the activations' time when the class has
  // a memory factor (docs/pipeline-config.md, "Kernel classes"). The
  // class VKP_KERNEL_CLASS_FUSED says the node runs inside another node's
  // kernel (an epilogue in its registers): it is estimated at no time.
  const char *(*kernel_class)(const vkp_target_t *target, const vkp_graph_t *graph,
                              const vkp_node_t *node, double *out_columns);

  // Required. Compiles a validated subgraph into an opaque blob. Weights
  // stay in the subgraph; the blob holds code only.
  vkp_status_t (*compile)(const vkp_target_t *target, const vkp_graph_t *graph,
                          const vkp_compile_options_t *options,
                          vkp_blob_t *out_blob);

  // Optional: writes human-readable forms of a blob this target compiled for
  // `graph` into the existing directory `dir` (generated source, shader
  // disassembly, ...), for `vkpipe inspect --dump`.
  vkp_status_t (*dump)(const vkp_target_t *target, const vkp_graph_t *graph,
                       const void *blob, size_t blob_size, const char *dir);
} vkp_target_compile_ops_t;

// The stage part (required, all three entries): loading a blob and running it
// synchronously. One loaded stage is driven by one thread at a time.
typedef struct vkp_target_stage_ops_t {
  // Loads a blob made by compile for the same subgraph (borrowed: it must
  // outlive the stage) into a stage executor. *out_stage is owned by the
  // caller and freed with unload.
  vkp_status_t (*load)(const vkp_target_t *target, const vkp_graph_t *graph,
                       const void *blob, size_t blob_size,
                       vkp_stage_t **out_stage);

  // Runs the stage synchronously. `inputs` follow graph->inputs, `outputs`
  // graph->outputs and are preallocated by the caller with the inferred
  // shapes. Must not keep pointers to them after returning.
  vkp_status_t (*run)(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                      vkp_tensor_t *outputs);

  // Frees a loaded stage (NULL is fine).
  void (*unload)(vkp_stage_t *stage);
} vkp_target_stage_ops_t;

// The device part (optional as a whole; when present every entry is
// required, and the target declares VKP_TARGET_DEVICE_FLAGS). The pipeline
// runtime uses it to keep frames on the device between stages: staging slots
// in host-visible memory, per-slot command buffers recorded once, and
// timeline semaphores (opaque uint64_t handles) waited on inside submits.
// A host target has none: the runtime calls run from a worker thread.
typedef struct vkp_target_device_ops_t {
  // Launches the stage asynchronously, waiting for `waits` before the work
  // starts and signalling `signals` when it is done. On failure no signal is
  // ever raised by this call.
  vkp_status_t (*submit)(vkp_stage_t *stage, const vkp_submit_info_t *info);

  // Allocates `size` bytes of host-visible memory usable by this target's
  // stages; freed with staging_free.
  vkp_status_t (*staging_alloc)(const vkp_target_t *target, size_t size,
                                vkp_staging_t *out_staging);
  void (*staging_free)(const vkp_target_t *target, vkp_staging_t *staging);

  // Records the stage's per-slot command buffers. `inputs` holds
  // n_slots * graph->n_inputs entries (slot-major), `outputs` likewise; each
  // entry is borrowed and outlives the stage. After this, submit's
  // info->slot picks which recording to replay.
  vkp_status_t (*bind_slots)(vkp_stage_t *stage, int32_t n_slots,
                             const vkp_staging_t *inputs,
                             const vkp_staging_t *outputs);

  // Timeline semaphores: create (initial value 0), destroy, signal and wait
  // from the host. wait returns a TIMEOUT status when `timeout_ns` passes and
  // DEVICE_LOST when the device is gone.
  vkp_status_t (*timeline_create)(const vkp_target_t *target,
                                  uint64_t *out_semaphore);
  void (*timeline_destroy)(const vkp_target_t *target, uint64_t semaphore);
  vkp_status_t (*timeline_signal)(const vkp_target_t *target,
                                  uint64_t semaphore, uint64_t value);
  vkp_status_t (*timeline_wait)(const vkp_target_t *target, uint64_t semaphore,
                                uint64_t value, uint64_t timeout_ns);
} vkp_target_device_ops_t;

// What a target fills in: a `static const` value with designated
// initializers. docs/targets.md walks through one.
struct vkp_target_vtable_t {
  uint32_t api_version;  // VKP_TARGET_API_VERSION
  // Unique, short, lower-case: "ref", "cpu", "vulkan".
  const char *name;
  // The declared capabilities, copied into the registered target.
  vkp_target_caps_t caps;
  // Optional: adjusts the copied capabilities to this instance once, at
  // registration (a device's limits, say).
  void (*query_caps)(const vkp_target_t *target, vkp_target_caps_t *caps);
  vkp_target_compile_ops_t compiler;     // required
  vkp_target_stage_ops_t stage;          // required
  const vkp_target_device_ops_t *device; // optional; NULL: a host target
  // Optional: frees `target->impl` when the registry is destroyed.
  void (*destroy)(vkp_target_t *target);
};

struct vkp_target_t {
  const vkp_target_vtable_t *vtable;  // borrowed; static storage
  void *impl;                          // owned by the target
  // The vtable's caps as query_caps adjusted them (set by registration;
  // a target never registered has zero caps: a host target).
  vkp_target_caps_t caps;
};

// Whether `target` runs its stages on a device (declares the device flags).
bool vkp_target_is_device(const vkp_target_t *target);

// Asks `target` whether it can run `node`, then holds the answer to the
// declared capabilities (dtypes and limits of every tensor the node reads
// or writes). The reason is written as for supports. The partitioner and
// vkp_target_check_graph ask through this.
bool vkp_target_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                         const vkp_node_t *node, char *reason,
                         size_t reason_size);

// ---------------------------------------------------------------------------
// Registry

typedef struct vkp_registry_t vkp_registry_t;

// An empty registry, owned by the caller.
vkp_status_t vkp_registry_create(vkp_registry_t **out_registry) VKP_MUST_USE;
// Same, allocating the registry and its targets' state (what they allocate
// while added) with `allocator` (copied; functions and ctx borrowed,
// vkpipe/alloc.h; NULL = the system allocator).
vkp_status_t vkp_registry_create_with_allocator(const vkp_allocator_t *allocator,
                                                vkp_registry_t **out_registry)
    VKP_MUST_USE;

// A registry with every built-in target that could be brought up. A built-in
// that cannot (no Vulkan device, say) is recorded as unavailable with its
// reason; that is not an error.
vkp_status_t vkp_registry_create_default(vkp_registry_t **out_registry)
    VKP_MUST_USE;
// Same, with `allocator` as in vkp_registry_create_with_allocator.
vkp_status_t vkp_registry_create_default_with_allocator(const vkp_allocator_t *allocator,
                                                        vkp_registry_t **out_registry)
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
// called on it). Copies the vtable's caps into the target, lets query_caps
// adjust them, and checks the whole: the interface version, each part
// complete (the error names the first missing entry), flags that agree with
// the parts, declared dtypes and default rates. A vtable of another
// interface version is refused without reading more of it (its impl is then
// not destroyed: the caller still owns it). Fails with
// INVALID_ARGUMENT on any of these and ALREADY_EXISTS on a duplicate name.
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

// Every registered name, unavailable targets included, in registration
// order: how many, and the name of entry `index` (borrowed; NULL past the
// end). Lists what a program could use here and what it cannot, and why
// (vkp_registry_unavailable_reason), without naming any target.
int32_t vkp_registry_count_all(const vkp_registry_t *registry);
const char *vkp_registry_name(const vkp_registry_t *registry, int32_t index);

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
