// SPDX-License-Identifier: Apache-2.0
//
// vkpipe cost model: per-op work (FLOPs and bytes), per-target device rates
// and transfer links, read from a profile JSON (`vkpipe calibrate` writes one)
// or taken from documented defaults (docs/pipeline-config.md).
//
//   vkp_profile_t *prof;
//   vkp_status_t st = vkp_profile_load("profile.json", &prof);  // or _create_default
//   const vkp_profile_target_t *rates = vkp_profile_target(prof, "cpu");
//   vkp_op_cost_t work;
//   st = vkp_op_cost(graph, &graph->nodes[i], &work);
//   double s = vkp_roofline_seconds(rates, &work);   // max(compute, memory) + launch
//   double t = vkp_profile_transfer_seconds(prof, "host", rates->device, 4096);
//   vkp_profile_destroy(prof);
//
// Roofline: a node takes max(flops / gflops, activation bytes / gbps) +
// weight bytes / gbps + launch overhead on its target: a model's weights are
// read from memory once per frame, while its layers compute, not instead. A transfer of b bytes between two devices takes latency +
// b / bandwidth; between targets on the same device, b / that device's memory
// bandwidth (a copy through a staging slot).
//
// Which targets share a device is data: each profile entry names its device.
// Global inputs and outputs live on the device named `host_device` ("host").
//
// A profile is not thread-safe to modify; once built it may be read from any
// number of threads.
#ifndef VKPIPE_COST_H_
#define VKPIPE_COST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/alloc.h"
#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// The work one node does.
typedef struct vkp_op_cost_t {
  double flops;  // arithmetic operations (a multiply-add counts 2)
  double bytes;  // bytes read and written (inputs, weights, outputs)
  double weight_bytes;  // of `bytes`, those of constant inputs (weights)
} vkp_op_cost_t;

// Work of `node` of validated `graph` (shapes inferred). One formula per op
// family (elementwise, matmul/gemm, conv2d, pooling, normalisation, reduce,
// data movement); views (reshape, flatten, squeeze, unsqueeze, identity) cost
// nothing. Fails only on a node whose shapes are unknown.
vkp_status_t vkp_op_cost(const vkp_graph_t *graph, const vkp_node_t *node,
                         vkp_op_cost_t *out_cost) VKP_MUST_USE;

// A target's rate for one kernel class (vkp_target_vtable_t.kernel_class):
// the class's compute rate is the target's gflops times compute_scale.
#define VKP_PROFILE_MAX_KERNELS 12
// Columns of the calibration matmul (vkp_calibrate_options_t.matmul_size's
// default): the width at which a target's gflops was measured.
#define VKP_PROFILE_GEMM_COLUMNS 128.0
typedef struct vkp_profile_kernel_t {
  char name[32];
  double compute_scale;  // > 0
  // >= 0; 0: roofline. > 0: the activations' bytes move at gbps times this,
  // added to the compute time (vkp_target_kernel_rate_t.memory_scale).
  double memory_scale;
} vkp_profile_kernel_t;

// Rates of one target.
typedef struct vkp_profile_target_t {
  char *target;        // target name (owned)
  char *device;        // device it runs on (owned); same name = shared device
  double gflops;       // GFLOP/s
  double gbps;         // memory GB/s (1e9 bytes/s)
  double launch_us;    // fixed overhead per node, microseconds
  // Threads inside one stage: with T threads the compute rate is multiplied
  // by 1 + (T - 1) * thread_compute_eff and the memory rate by
  // 1 + (T - 1) * thread_memory_eff (each in 0..1). Both 0: more threads do
  // not make the target faster (they still occupy cores).
  double thread_compute_eff;
  double thread_memory_eff;
  // What splitting one kernel over a stage's threads costs (waking them,
  // joining them), microseconds: with T > 1 threads a kernel takes
  // min(its one-thread time, its T-thread time + this). Kernels of a few
  // microseconds (the layers of a small transformer) gain little or nothing
  // from a second thread. 0: splitting is free.
  double thread_split_us;
  // GEMM width term: a kernel whose GEMMs have N columns (the target's
  // kernel_class hook) computes at gflops * w(N) / w(VKP_PROFILE_GEMM_COLUMNS)
  // with w(N) = N / (N + gemm_half_columns): the rate was calibrated on a
  // GEMM that wide, and narrower ones reach less of the peak (Hockney's
  // n-half). 0: no width term.
  double gemm_half_columns;
  // Per kernel class compute factors (vkp_profile_set_kernel; set_target
  // leaves them as they are).
  int32_t n_kernels;
  vkp_profile_kernel_t kernels[VKP_PROFILE_MAX_KERNELS];
} vkp_profile_target_t;

// A transfer link between two devices (directional).
typedef struct vkp_profile_link_t {
  char *from;          // device names (owned)
  char *to;
  double latency_us;
  double gbps;
} vkp_profile_link_t;

// A device's capacity: how many stages it runs at once (a multi-core host may
// run several CPU stages side by side; a GPU queue runs one). On the host it
// counts cores: a stage with T threads occupies T of them.
typedef struct vkp_profile_device_t {
  char *name;          // owned
  int32_t concurrency; // >= 1
} vkp_profile_device_t;

typedef struct vkp_profile_t {
  char *host_device;               // where global inputs/outputs live (owned)
  int32_t n_targets;
  vkp_profile_target_t *targets;   // owned
  int32_t n_links;
  vkp_profile_link_t *links;       // owned
  int32_t n_devices;
  vkp_profile_device_t *devices;   // owned
  vkp_profile_target_t fallback;   // rates for targets not listed (device
                                   // NULL: the target's own name)
  double default_latency_us;       // links not listed
  double default_link_gbps;
  vkp_allocator_t allocator;       // what it allocates with (set at creation)
  // Set by vkp_profile_calibrate: the smallest share of a core the calling
  // thread got in the host targets' timed runs (its CPU time over wall time;
  // 0: not measured). Under VKP_PROFILE_BUSY_SHARE the machine was busy and
  // the rates read low: vkp_profile_create_for_machine then does not cache
  // them (unless asked to refresh), and the calibration notes say so.
  double calibration_cpu_share;
} vkp_profile_t;

#define VKP_PROFILE_BUSY_SHARE 0.85

// The documented defaults (docs/pipeline-config.md). Owned by the caller.
vkp_status_t vkp_profile_create_default(vkp_profile_t **out_profile)
    VKP_MUST_USE;
// Same, allocating the profile and what is set on it with `allocator`
// (copied; functions and ctx borrowed, vkpipe/alloc.h; NULL = system). The
// loaders and vkp_profile_create_for_machine use the system allocator unless
// options say otherwise.
vkp_status_t vkp_profile_create_default_with_allocator(const vkp_allocator_t *allocator,
                                                       vkp_profile_t **out_profile)
    VKP_MUST_USE;

// Loads a profile JSON; entries it does not mention keep their defaults.
vkp_status_t vkp_profile_load(const char *path, vkp_profile_t **out_profile)
    VKP_MUST_USE;
vkp_status_t vkp_profile_load_json(const char *json, size_t size,
                                   vkp_profile_t **out_profile) VKP_MUST_USE;

// Writes `profile` as JSON: *out_json is a NUL-terminated heap string, free
// with vkp_free.
vkp_status_t vkp_profile_to_json(const vkp_profile_t *profile, char **out_json)
    VKP_MUST_USE;
vkp_status_t vkp_profile_save(const vkp_profile_t *profile, const char *path)
    VKP_MUST_USE;

void vkp_profile_destroy(vkp_profile_t *profile);

// Sets (adds or replaces) the rates of `rates->target` (strings copied).
vkp_status_t vkp_profile_set_target(vkp_profile_t *profile,
                                    const vkp_profile_target_t *rates)
    VKP_MUST_USE;
// Sets (adds or replaces) the compute factor of kernel class `kernel` on
// `target`, which must already be listed; its memory factor becomes 0 (the
// roofline).
vkp_status_t vkp_profile_set_kernel(vkp_profile_t *profile, const char *target,
                                    const char *kernel, double compute_scale)
    VKP_MUST_USE;
// The same with a memory factor (>= 0; vkp_profile_kernel_t.memory_scale).
vkp_status_t vkp_profile_set_kernel_rates(vkp_profile_t *profile, const char *target,
                                          const char *kernel, double compute_scale,
                                          double memory_scale) VKP_MUST_USE;
// The compute factor of kernel class `kernel` on `rates` (1 when `kernel` is
// NULL or not listed).
double vkp_profile_kernel_scale(const vkp_profile_target_t *rates,
                                const char *kernel);
// Its memory factor (0 when `kernel` is NULL, not listed, or a roofline).
double vkp_profile_kernel_memory_scale(const vkp_profile_target_t *rates,
                                       const char *kernel);
// Sets (adds or replaces) the link from -> to.
vkp_status_t vkp_profile_set_link(vkp_profile_t *profile, const char *from,
                                  const char *to, double latency_us,
                                  double gbps) VKP_MUST_USE;
// Sets (adds or replaces) a device's concurrency.
vkp_status_t vkp_profile_set_device(vkp_profile_t *profile, const char *name,
                                    int32_t concurrency) VKP_MUST_USE;

// Rates of `target`: its entry, or the fallback (whose device is then NULL:
// use vkp_profile_device_of). Borrowed from the profile.
const vkp_profile_target_t *vkp_profile_target(const vkp_profile_t *profile,
                                               const char *target);
// Rates of registered `target`: the profile's entry for it, else the rates
// the target declares (caps.default_rates, written into *scratch), else the
// profile's fallback. Borrowed from the profile, the target or scratch.
const vkp_profile_target_t *vkp_profile_target_rates(const vkp_profile_t *profile,
                                                     const vkp_target_t *target,
                                                     vkp_profile_target_t *scratch);
// Device of `target` (its entry's device, else the target name). Borrowed.
const char *vkp_profile_device_of(const vkp_profile_t *profile,
                                  const char *target);
// Concurrency of `device` (1 when not listed).
int32_t vkp_profile_concurrency(const vkp_profile_t *profile,
                                const char *device);
// The link between two MPI ranks (docs/scale-out.md) is the profile link
// from VKP_PROFILE_RANK_LINK to itself (`vkpipe calibrate` under mpirun
// measures it); without one, VKP_PROFILE_RANK_LATENCY_US and
// VKP_PROFILE_RANK_GBPS (a 10 Gb/s Ethernet between hosts).
#define VKP_PROFILE_RANK_LINK "mpi"
#define VKP_PROFILE_RANK_LATENCY_US 25.0
#define VKP_PROFILE_RANK_GBPS 1.1

// Seconds to move `bytes` from one MPI rank to another (0 for no bytes).
// *out_calibrated (may be NULL) says whether the profile has the link.
double vkp_profile_rank_link_seconds(const vkp_profile_t *profile, double bytes,
                                     bool *out_calibrated);

// Seconds to move `bytes` from device `from` to device `to`.
double vkp_profile_transfer_seconds(const vkp_profile_t *profile,
                                    const char *from, const char *to,
                                    double bytes);

// Roofline seconds of `work` with `rates`.
double vkp_roofline_seconds(const vkp_profile_target_t *rates,
                            const vkp_op_cost_t *work);

// The same with `threads` threads inside the stage (thread_*_eff above);
// threads <= 1 is vkp_roofline_seconds.
double vkp_roofline_seconds_threads(const vkp_profile_target_t *rates,
                                    const vkp_op_cost_t *work, int32_t threads);

// Cores this process may run on (sched_getaffinity), at least 1.
int32_t vkp_host_cores(void);

// Estimated seconds of `node` on `target`: the target's own estimate() when it
// has one, else the roofline with the profile's rates for it, its compute
// rate scaled by the factor of the node's kernel class (the target's
// kernel_class hook) when the profile lists one.
vkp_status_t vkp_node_estimate(const vkp_profile_t *profile,
                               const vkp_target_t *target,
                               const vkp_graph_t *graph, const vkp_node_t *node,
                               double *out_seconds) VKP_MUST_USE;

// The same with `threads` threads in the node's stage: the roofline with
// vkp_roofline_seconds_threads, or a target's own estimate (one thread)
// divided by the profile's compute speed-up for `threads`.
vkp_status_t vkp_node_estimate_threads(const vkp_profile_t *profile,
                                       const vkp_target_t *target,
                                       const vkp_graph_t *graph,
                                       const vkp_node_t *node, int32_t threads,
                                       double *out_seconds) VKP_MUST_USE;

// Called before each target is measured (`done` targets of `total` so far)
// and once at the end with target NULL and done == total.
typedef void (*vkp_calibrate_progress_fn)(void *user, const char *target,
                                          int32_t done, int32_t total);

// Options of vkp_profile_calibrate; zero-initialised means defaults.
typedef struct vkp_calibrate_options_t {
  int32_t matmul_size;   // n of the matmul (6n x 4.5n) by (4.5n x n), shaped
                         // like a convolution's GEMM (default 128)
  int64_t elementwise;   // elements of the add benchmark (default 1 << 20)
  int32_t repeats;       // timed runs, the median taken (default 5)
  // Threads for the thread-efficiency runs (the matmul and the add again,
  // compiled with this many threads); 0: min(vkp_host_cores(), 64); 1: skip
  // them (efficiencies keep their previous values).
  int32_t threads;
  // true: keep the kernel class factors; false (default): a host target
  // with a kernel_class hook also times one convolution per class and sets
  // each class's factor to what it measured (docs/pipeline-config.md).
  bool no_kernel_classes;
  vkp_calibrate_progress_fn progress;  // optional
  void *progress_user;
} vkp_calibrate_options_t;

// Measures every target of `registry` with micro-benchmarks run through its
// compile/load/run (a conv-shaped matmul for GFLOP/s, an elementwise add for GB/s, a
// one-element add for the launch overhead), timing with clock_gettime, and
// records them in `profile` (device names kept from the profile's existing
// entries or defaults). A target that fails a benchmark keeps its previous
// rates; its error is appended to *out_notes (heap string or NULL, free with
// vkp_free) rather than failing the whole calibration.
vkp_status_t vkp_profile_calibrate(vkp_profile_t *profile,
                                   const vkp_registry_t *registry,
                                   const vkp_calibrate_options_t *options,
                                   char **out_notes) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// The machine's profile, calibrated once and cached
//
// The tools call this when no --profile is given: the first run on a machine
// measures the registry's targets (vkp_profile_calibrate, a few seconds) and
// writes the result to <cache>/profile-<version>-<machine key>.json, where
// <cache> is $XDG_CACHE_HOME/vkpipe, else ~/.cache/vkpipe; later runs read it.
// The machine key hashes the CPU model, the online CPU count and the
// registered target names, so a new machine, a new vkpipe version or another
// set of targets measures afresh. The host device's concurrency is then set
// to the cores this process may use (or `cores`), never cached.

typedef struct vkp_machine_profile_options_t {
  const char *cache_dir;   // NULL: $XDG_CACHE_HOME/vkpipe or ~/.cache/vkpipe
  bool refresh;            // measure even when a cached profile exists
  int32_t cores;           // host concurrency; 0: vkp_host_cores()
  vkp_calibrate_options_t calibrate;  // for the measurement
  const vkp_allocator_t *allocator;  // the profile's; NULL: the system one
} vkp_machine_profile_options_t;

// Path of the cache file for `registry` on this machine (*out_path: heap
// string, vkp_free).
vkp_status_t vkp_profile_cache_path(const vkp_registry_t *registry,
                                    const char *cache_dir, char **out_path)
    VKP_MUST_USE;

// The machine's profile (owned by the caller). *out_measured (may be NULL)
// says whether it was measured now; *out_notes (may be NULL; heap string or
// NULL, vkp_free) gets the calibration notes and a line when the cache could
// not be written (the profile is still returned).
vkp_status_t vkp_profile_create_for_machine(
    const vkp_registry_t *registry, const vkp_machine_profile_options_t *options,
    vkp_profile_t **out_profile, bool *out_measured, char **out_notes)
    VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_COST_H_
