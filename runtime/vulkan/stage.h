// SPDX-License-Identifier: Apache-2.0
//
// The Vulkan stage executor: one GPU stage built from a vkp_spirv_program_t.
// Everything is made once at create: buffers (constants uploaded), pipelines
// (through the device's on-disk VkPipelineCache), descriptor sets and a
// command buffer recorded once and replayed by every run.
//
//   vkp_vk_stage_t *stage;
//   st = vkp_vk_stage_create(dev, graph, program, &stage);
//   st = vkp_vk_stage_run(stage, inputs, outputs);     // synchronous
//   // asynchronous, for the pipeline runtime:
//   st = vkp_vk_stage_bind_slots(stage, 2, in_stagings, out_stagings);
//   st = vkp_vk_stage_submit(stage, &info);            // waits/signals inside
//   vkp_vk_stage_destroy(stage);
//
// Memory: on unified memory (lavapipe, integrated GPUs) a stage binds the
// staging buffers of its inputs and outputs in place; otherwise it copies
// them to and from device-local buffers inside its own command buffer.
// Every recording starts with a barrier against earlier work on the queue
// (so slots may share scratch and device-local buffers), puts a barrier
// between dispatches whose bindings overlap, and ends with a barrier that
// makes results visible to the host.
//
// Thread-safety: one stage is driven by one thread at a time (create, run,
// bind_slots, submit, destroy); different stages may run on different threads.
#ifndef VKPIPE_RUNTIME_VULKAN_STAGE_H_
#define VKPIPE_RUNTIME_VULKAN_STAGE_H_

#include <stdint.h>

#include <vulkan/vulkan.h>

#include "codegen/spirv/program.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

// Opaque Vulkan handles in the uint64_t fields of target.h.
#if VK_USE_64_BIT_PTR_DEFINES == 1
#define VKP_VK_TO_U64(handle) ((uint64_t)(uintptr_t)(handle))
#define VKP_VK_FROM_U64(type, value) ((type)(uintptr_t)(value))
#else
#define VKP_VK_TO_U64(handle) ((uint64_t)(handle))
#define VKP_VK_FROM_U64(type, value) ((type)(value))
#endif

typedef struct vkp_vk_stage_t vkp_vk_stage_t;

// Builds a stage. `device` is borrowed and must outlive the stage; `graph`
// (the stage's subgraph: input/output sizes and constant data) and `program`
// are borrowed for the call only. Errors name the dispatch or buffer at fault
// (a binding wider than maxStorageBufferRange, a misaligned offset, a size
// that does not match the graph, a binding past its buffer).
vkp_status_t vkp_vk_stage_create(vkp_vk_device_t *device, const vkp_graph_t *graph,
                                 const vkp_spirv_program_t *program,
                                 vkp_vk_stage_t **out_stage) VKP_MUST_USE;

// Waits for the stage's work and frees it. NULL is fine.
void vkp_vk_stage_destroy(vkp_vk_stage_t *stage);

// The vkp_stage_t embedded first in the stage (for the target vtable).
vkp_stage_t *vkp_vk_stage_base(vkp_vk_stage_t *stage);

// Runs once: copies `inputs` (graph input order, float32 bytes checked) into
// the stage's own staging, replays its command buffer, waits on a timeline
// semaphore and copies the results into `outputs` (preallocated).
vkp_status_t vkp_vk_stage_run(vkp_vk_stage_t *stage, const vkp_tensor_t *inputs,
                              vkp_tensor_t *outputs) VKP_MUST_USE;

// Records one command buffer per slot (see target.h bind_slots). Stagings are
// borrowed and must outlive the stage; each must be at least as large as its
// tensor. Replaces an earlier binding (waiting for the device first).
vkp_status_t vkp_vk_stage_bind_slots(vkp_vk_stage_t *stage, int32_t n_slots,
                                     const vkp_staging_t *inputs,
                                     const vkp_staging_t *outputs) VKP_MUST_USE;

// Replays slot info->slot: waits for info->waits (timeline values) before any
// command starts and signals info->signals when all are done. A failed call
// submits nothing, so none of the signals will be raised by it.
vkp_status_t vkp_vk_stage_submit(vkp_vk_stage_t *stage,
                                 const vkp_submit_info_t *info) VKP_MUST_USE;

// Dispatches and barriers of one recording (for tests and benchmarks).
typedef struct vkp_vk_stage_stats_t {
  int32_t dispatch_calls;   // vkCmdDispatchBase calls after grid splitting
  int32_t compute_barriers; // barriers between dispatches
} vkp_vk_stage_stats_t;
void vkp_vk_stage_stats(const vkp_vk_stage_t *stage, vkp_vk_stage_stats_t *out);

// ---------------------------------------------------------------------------
// Staging memory and timeline semaphores (the target's device entries).

// Host-visible, coherent memory of its own VkBuffer (offset 0), zero-filled.
vkp_status_t vkp_vk_staging_alloc(vkp_vk_device_t *device, size_t size,
                                  vkp_staging_t *out_staging) VKP_MUST_USE;
// Frees the staging and zeroes it; a zeroed struct is fine.
void vkp_vk_staging_free(vkp_vk_device_t *device, vkp_staging_t *staging);

vkp_status_t vkp_vk_timeline_create(vkp_vk_device_t *device, uint64_t initial,
                                    VkSemaphore *out_semaphore) VKP_MUST_USE;
void vkp_vk_timeline_destroy(vkp_vk_device_t *device, VkSemaphore semaphore);
vkp_status_t vkp_vk_timeline_signal(vkp_vk_device_t *device, VkSemaphore semaphore,
                                    uint64_t value) VKP_MUST_USE;
// TIMEOUT status when `timeout_ns` passes, DEVICE_LOST when the device is gone.
vkp_status_t vkp_vk_timeline_wait(vkp_vk_device_t *device, VkSemaphore semaphore,
                                  uint64_t value, uint64_t timeout_ns) VKP_MUST_USE;
vkp_status_t vkp_vk_timeline_query(vkp_vk_device_t *device, VkSemaphore semaphore,
                                   uint64_t *out_value) VKP_MUST_USE;

#endif  // VKPIPE_RUNTIME_VULKAN_STAGE_H_
