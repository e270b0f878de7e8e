// SPDX-License-Identifier: Apache-2.0
// The "vulkan" target: SPIR-V codegen for compile, the stage executor for
// load/run/submit, and the device entries of target.h.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/stage.h"
#include "runtime/vulkan/target_vulkan.h"

// The device is opened when the target is registered (what the partitioner
// and the code generator read: properties, features, limits) and brought up
// (VkDevice, queue, memory) by the first stage, staging buffer or timeline
// that needs it: a registry in which no stage lands on vulkan never starts
// the driver's device (lavapipe's worker threads and their address space).
typedef struct vkp__vulkan_target_t {
  vkp_vk_device_t *device;  // owned
  vkp_spirv_device_info_t info;
  pthread_mutex_t realize_mutex;  // guards bringing the device up
  // The registry's allocator: the device is brought up during some
  // pipeline's call but belongs to the target, so it is not the caller's.
  vkp_allocator_t allocator;
} vkp__vulkan_target_t;

// The device of a target whose device is up (every caller holds a stage,
// staging buffer or timeline made after vkp__ready).
static vkp_vk_device_t *vkp__device(const vkp_target_t *target) {
  return ((vkp__vulkan_target_t *)target->impl)->device;
}

// Brings the device up on first use.
static vkp_status_t vkp__ready(const vkp_target_t *target, vkp_vk_device_t **out_device) {
  vkp__vulkan_target_t *t = target->impl;
  VKP__ALLOCATOR_SCOPE(&t->allocator);
  pthread_mutex_lock(&t->realize_mutex);
  vkp_status_t st = vkp_vk_device_realize(t->device);
  pthread_mutex_unlock(&t->realize_mutex);
  *out_device = st ? NULL : t->device;
  return st;
}

static vkp_vk_stage_t *vkp__stage(vkp_stage_t *stage) {
  // vkp_vk_stage_t embeds its vkp_stage_t first.
  return (vkp_vk_stage_t *)stage;
}

void vkp_vk_device_info(const vkp_vk_device_t *device, vkp_spirv_device_info_t *out) {
  const VkPhysicalDeviceLimits *lim = &device->properties.limits;
  memset(out, 0, sizeof *out);
  out->device_type = (uint32_t)device->properties.deviceType;
  out->vendor_id = device->properties.vendorID;
  out->subgroup_size = device->subgroup.subgroupSize;
  out->max_shared_memory = lim->maxComputeSharedMemorySize;
  out->max_invocations = lim->maxComputeWorkGroupInvocations;
  memcpy(out->max_group_size, lim->maxComputeWorkGroupSize, sizeof out->max_group_size);
  out->max_storage_range = lim->maxStorageBufferRange;
  out->min_storage_alignment = lim->minStorageBufferOffsetAlignment;
  out->storage_8bit = device->storage_8bit;
  out->shader_int64 = device->shader_int64;
  out->storage_16bit = device->storage_16bit;
  out->shader_float16 = device->shader_float16;
  out->shader_float64 = device->shader_float64;
  out->coopmat_f16 = device->coopmat_f16;
  out->subgroup_arith = vkp_vk_subgroup_arith(&device->subgroup);
  // lavapipe's compiler cuts a shader's loops at 65,535 iterations; CPU
  // devices in general are held to it. GPUs run what they are given.
  out->loop_budget = device->driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE ||
                             device->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                         ? VKP_SPIRV_LAVAPIPE_LOOP_BUDGET
                         : 0;
  out->robustness = (uint32_t)device->robustness;
  // VKPIPE_VK_MAX_BINDING=<bytes> lowers (never raises) the binding limit
  // the codegen plans for, so small tests exercise tensors split across
  // bindings (what alexnet's classifier needs on lavapipe's 128 MiB).
  const char *cap = getenv("VKPIPE_VK_MAX_BINDING");
  if (cap && *cap) {
    char *end = NULL;
    unsigned long long v = strtoull(cap, &end, 10);
    if (end && *end == '\0' && v >= out->min_storage_alignment && v < out->max_storage_range)
      out->max_storage_range = v;
  }
}

static bool vkp__supports(const vkp_target_t *target, const vkp_graph_t *graph,
                          const vkp_node_t *node, char *reason, size_t reason_size) {
  const vkp__vulkan_target_t *t = target->impl;
  return vkp_spirv_supports_on(graph, node, &t->info, reason, reason_size);
}

static vkp_status_t vkp__compile(const vkp_target_t *target, const vkp_graph_t *graph,
                                 const vkp_compile_options_t *options,
                                 vkp_blob_t *out_blob) {
  memset(out_blob, 0, sizeof *out_blob);
  const vkp__vulkan_target_t *t = target->impl;
  // Asked for cooperative matrices where there are none: say once which
  // kernels run instead (the codegen, which writes nothing, falls back).
  const char *gemm = getenv("VKPIPE_SPIRV_GEMM");
  if (gemm && strcmp(gemm, "coopmat") == 0 && !t->info.coopmat_f16) {
    static atomic_bool told;
    if (!atomic_exchange(&told, true))
      fprintf(stderr,
              "vkpipe: VKPIPE_SPIRV_GEMM=coopmat: the Vulkan device has no cooperative "
              "matrices vkpipe uses ('vkpipe devices', matrix units); GEMMs and "
              "convolutions run on the kernels chosen for it\n");
  }
  vkp_spirv_program_t *program = NULL;
  VKP_RETURN_IF_ERROR(vkp_spirv_codegen(graph, &t->info, options, &program));
  // Codegen writes no files; the dumps asked for are written here.
  vkp_status_t st = options && options->dump_dir
                        ? vkp__vulkan_dump_sources(program, options->dump_dir)
                        : NULL;
  if (!st) st = vkp_spirv_program_serialize(program, out_blob);
  vkp_spirv_program_destroy(program);
  return st;
}

static vkp_status_t vkp__load(const vkp_target_t *target, const vkp_graph_t *graph,
                              const void *blob, size_t blob_size,
                              vkp_stage_t **out_stage) {
  *out_stage = NULL;
  vkp_spirv_program_t *program = NULL;
  VKP_RETURN_IF_ERROR(vkp_spirv_program_deserialize(blob, blob_size, &program));
  vkp_vk_stage_t *stage = NULL;
  vkp_vk_device_t *device = NULL;
  vkp_status_t st = vkp__ready(target, &device);
  if (!st) st = vkp_vk_stage_create(device, graph, program, &stage);
  vkp_spirv_program_destroy(program);
  if (st) return st;
  vkp_vk_stage_base(stage)->target = target;
  *out_stage = vkp_vk_stage_base(stage);
  return NULL;
}

static vkp_status_t vkp__run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                             vkp_tensor_t *outputs) {
  return vkp_vk_stage_run(vkp__stage(stage), inputs, outputs);
}

static vkp_status_t vkp__submit(vkp_stage_t *stage, const vkp_submit_info_t *info) {
  return vkp_vk_stage_submit(vkp__stage(stage), info);
}

static void vkp__unload(vkp_stage_t *stage) {
  if (stage) vkp_vk_stage_destroy(vkp__stage(stage));
}

static vkp_status_t vkp__staging_alloc(const vkp_target_t *target, size_t size,
                                       vkp_staging_t *out_staging) {
  vkp_vk_device_t *device = NULL;
  VKP_RETURN_IF_ERROR(vkp__ready(target, &device));
  return vkp_vk_staging_alloc(device, size, out_staging);
}

static void vkp__staging_free(const vkp_target_t *target, vkp_staging_t *staging) {
  vkp_vk_staging_free(vkp__device(target), staging);
}

static vkp_status_t vkp__bind_slots(vkp_stage_t *stage, int32_t n_slots,
                                    const vkp_staging_t *inputs,
                                    const vkp_staging_t *outputs) {
  return vkp_vk_stage_bind_slots(vkp__stage(stage), n_slots, inputs, outputs);
}

static vkp_status_t vkp__timeline_create(const vkp_target_t *target,
                                         uint64_t *out_semaphore) {
  VkSemaphore sem = VK_NULL_HANDLE;
  *out_semaphore = 0;
  vkp_vk_device_t *device = NULL;
  VKP_RETURN_IF_ERROR(vkp__ready(target, &device));
  VKP_RETURN_IF_ERROR(vkp_vk_timeline_create(device, 0, &sem));
  *out_semaphore = VKP_VK_TO_U64(sem);
  return NULL;
}

static void vkp__timeline_destroy(const vkp_target_t *target, uint64_t semaphore) {
  vkp_vk_timeline_destroy(vkp__device(target), VKP_VK_FROM_U64(VkSemaphore, semaphore));
}

static vkp_status_t vkp__timeline_signal(const vkp_target_t *target, uint64_t semaphore,
                                         uint64_t value) {
  return vkp_vk_timeline_signal(vkp__device(target),
                                VKP_VK_FROM_U64(VkSemaphore, semaphore), value);
}

static vkp_status_t vkp__timeline_wait(const vkp_target_t *target, uint64_t semaphore,
                                       uint64_t value, uint64_t timeout_ns) {
  return vkp_vk_timeline_wait(vkp__device(target),
                              VKP_VK_FROM_U64(VkSemaphore, semaphore), value, timeout_ns);
}

// This device's dtypes: bool and (u)int8 tensors only where 8-bit storage
// is available, float16, bfloat16 and (u)int16 where 16-bit storage is,
// float64 where
// shaderFloat64 is. No per-tensor byte limit is declared: a tensor past
// maxStorageBufferRange is split across bindings where the kernel can read
// or write it in ranges, and vkp_spirv_supports_on refuses (naming the
// tensor and the limit) where it cannot or where the ranges exceed a
// dispatch's bindings.
static void vkp__query_caps(const vkp_target_t *target, vkp_target_caps_t *caps) {
  const vkp__vulkan_target_t *t = target->impl;
  if (!t->info.storage_8bit)
    caps->dtypes &= ~(VKP_DTYPE_SET(VKP_DTYPE_BOOL) | VKP_DTYPE_SET(VKP_DTYPE_INT8) |
                      VKP_DTYPE_SET(VKP_DTYPE_UINT8));
  if (!t->info.storage_16bit)
    caps->dtypes &= ~(VKP_DTYPE_SET(VKP_DTYPE_FLOAT16) | VKP_DTYPE_SET(VKP_DTYPE_BFLOAT16) |
                      VKP_DTYPE_SET(VKP_DTYPE_INT16) | VKP_DTYPE_SET(VKP_DTYPE_UINT16));
  if (!t->info.shader_float64) caps->dtypes &= ~VKP_DTYPE_SET(VKP_DTYPE_FLOAT64);
}

static void vkp__destroy(vkp_target_t *target) {
  vkp__vulkan_target_t *t = target->impl;
  if (!t) return;
  vkp_vk_device_destroy(t->device);
  pthread_mutex_destroy(&t->realize_mutex);
  vkp__free(t);
  target->impl = NULL;
}

static const vkp_target_device_ops_t vkp__vulkan_device_ops = {
    .submit = vkp__submit,
    .staging_alloc = vkp__staging_alloc,
    .staging_free = vkp__staging_free,
    .bind_slots = vkp__bind_slots,
    .timeline_create = vkp__timeline_create,
    .timeline_destroy = vkp__timeline_destroy,
    .timeline_signal = vkp__timeline_signal,
    .timeline_wait = vkp__timeline_wait,
};

// The documented default rates (docs/pipeline-config.md, "Cost profile").
static const vkp_target_rates_t vkp__vulkan_rates = {
    .device = "gpu0", .gflops = 8.0, .gbps = 10.0, .launch_us = 60.0,
};

const vkp_target_vtable_t vkp__target_vulkan_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "vulkan",
    // Buffers hold float32, (u)int8, int32/uint32, int64/uint64 and bool
    // data (codegen/spirv/kernels.c); query_caps takes off what the device
    // cannot store (bool and 8-bit without 8-bit storage) and adds its
    // limits. Computing on 64-bit data also needs shaderInt64, which
    // supports() checks per kernel (it says so when missing).
    .caps = {.flags = VKP_TARGET_DEVICE_FLAGS,
             .dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32) | VKP_DTYPE_SET(VKP_DTYPE_FLOAT16) |
                       VKP_DTYPE_SET(VKP_DTYPE_BFLOAT16) |
                       VKP_DTYPE_SET(VKP_DTYPE_FLOAT64) | VKP_DTYPE_SET(VKP_DTYPE_INT16) |
                       VKP_DTYPE_SET(VKP_DTYPE_UINT16) | VKP_DTYPE_SET(VKP_DTYPE_INT8) |
                       VKP_DTYPE_SET(VKP_DTYPE_UINT8) | VKP_DTYPE_SET(VKP_DTYPE_INT32) |
                       VKP_DTYPE_SET(VKP_DTYPE_UINT32) | VKP_DTYPE_SET(VKP_DTYPE_INT64) |
                       VKP_DTYPE_SET(VKP_DTYPE_UINT64) | VKP_DTYPE_SET(VKP_DTYPE_BOOL),
             .default_rates = &vkp__vulkan_rates},
    .query_caps = vkp__query_caps,
    .compiler =
        {
            .supports = vkp__supports,
            .estimate = NULL,  // the partitioner's roofline model
            .compile = vkp__compile,
            .dump = vkp__vulkan_dump,
        },
    .stage = {.load = vkp__load, .run = vkp__run, .unload = vkp__unload},
    .device = &vkp__vulkan_device_ops,
    .destroy = vkp__destroy,
};

vkp_status_t vkp_target_vulkan_add(vkp_registry_t *registry,
                                   const vkp_vk_device_options_t *options) {
  vkp_vk_device_t *device = NULL;
  vkp_status_t st = vkp_vk_device_open(options, &device);
  if (!st && !vkp_vk_device_has_room(device, &st)) {
    vkp_vk_device_destroy(device);
    device = NULL;
  }
  if (st) {
    // No driver, no usable device, a refused device: the target is
    // unavailable and everything else keeps working.
    vkp_status_t added =
        vkp_registry_add_unavailable(registry, "vulkan", vkp_status_message(st));
    vkp_status_free(st);
    return added;
  }
  vkp__vulkan_target_t *t = vkp__calloc(1, sizeof *t);
  if (!t) {
    vkp_vk_device_destroy(device);
    return VKP_OOM("vulkan target");
  }
  t->allocator = vkp__allocator_resolve(NULL);
  if (pthread_mutex_init(&t->realize_mutex, NULL) != 0) {
    vkp__free(t);
    vkp_vk_device_destroy(device);
    return vkp_status_make(VKP_STATUS_INTERNAL, "pthread_mutex_init failed");
  }
  t->device = device;
  vkp_vk_device_info(device, &t->info);
  return vkp_registry_add(registry, &vkp__target_vulkan_vtable, t);
}

vkp_status_t vkp_target_vulkan_register(vkp_registry_t *registry) {
  return vkp_target_vulkan_add(registry, NULL);
}

vkp_vk_device_t *vkp_target_vulkan_device(const vkp_target_t *target) {
  if (!target || target->vtable != &vkp__target_vulkan_vtable) return NULL;
  vkp_vk_device_t *device = NULL;
  vkp_status_t st = vkp__ready(target, &device);
  vkp_status_free(st);
  return device;
}

bool vkp_target_vulkan_is_up(const vkp_target_t *target) {
  if (!target || target->vtable != &vkp__target_vulkan_vtable) return false;
  vkp__vulkan_target_t *t = target->impl;
  pthread_mutex_lock(&t->realize_mutex);
  bool up = t->device->device != VK_NULL_HANDLE;
  pthread_mutex_unlock(&t->realize_mutex);
  return up;
}
