// SPDX-License-Identifier: Apache-2.0
#include "runtime/vulkan/stage.h"

#include <string.h>

#include "base/alloc.h"
#include "base/scalar.h"
#include "base/status_macros.h"
#include "runtime/vulkan/dispatch.h"
#include "runtime/vulkan/vk_result.h"

// How long run() waits for its own work before calling the device stuck.
#define VKP__RUN_TIMEOUT_NS (UINT64_C(120) * 1000 * 1000 * 1000)

// One recorded command buffer and the descriptor sets it binds.
typedef struct vkp__recording_t {
  VkDescriptorPool pool;
  VkDescriptorSet *sets;  // one per dispatch, owned by `pool`
  VkCommandBuffer cmd;
} vkp__recording_t;

// What the stage keeps of a program's dispatch.
typedef struct vkp__dispatch_t {
  char *name;
  uint32_t groups[3];
  int32_t n_bindings;
  vkp_spirv_binding_t *bindings;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
} vkp__dispatch_t;

struct vkp_vk_stage_t {
  vkp_stage_t base;          // first: the target hands out &base
  vkp_vk_device_t *device;   // borrowed
  int32_t n_inputs, n_outputs;
  size_t *io_bytes;          // n_inputs then n_outputs entries
  int32_t n_buffers;
  vkp_spirv_buffer_t *buffer_desc;
  // Per program buffer: constants and scratch always; inputs and outputs only
  // when the device copies (not unified memory).
  vkp_vk_buffer_t *buffers;
  int32_t n_dispatches;
  vkp__dispatch_t *dispatches;
  VkCommandPool command_pool;
  // run(): private staging and recording.
  vkp_staging_t *run_staging;  // n_inputs then n_outputs
  vkp__recording_t run_recording;
  // Every submit of this stage (run or slot) also signals `timeline` with
  // ++submitted, so run() and destroy wait for this stage's work only.
  VkSemaphore timeline;
  uint64_t submitted;
  // bind_slots()
  int32_t n_slots;
  vkp__recording_t *slots;
  vkp_vk_stage_stats_t stats;
};

static bool vkp__is_io(const vkp_spirv_buffer_t *b) {
  return b->kind == VKP_SPIRV_BUFFER_INPUT || b->kind == VKP_SPIRV_BUFFER_OUTPUT;
}

vkp_stage_t *vkp_vk_stage_base(vkp_vk_stage_t *stage) { return &stage->base; }

void vkp_vk_stage_stats(const vkp_vk_stage_t *stage, vkp_vk_stage_stats_t *out) {
  *out = stage->stats;
}

// ---------------------------------------------------------------------------
// Checks

static vkp_status_t vkp__check_program(const vkp_vk_device_t *device,
                                       const vkp_graph_t *graph,
                                       const vkp_spirv_program_t *p) {
  const VkPhysicalDeviceLimits *lim = &device->properties.limits;
  if (p->n_buffers < 0 || p->n_dispatches < 0 || (p->n_buffers && !p->buffers) ||
      (p->n_dispatches && !p->dispatches))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "malformed SPIR-V program");
  for (int32_t i = 0; i < p->n_buffers; ++i) {
    const vkp_spirv_buffer_t *b = &p->buffers[i];
    int32_t value = -1;
    switch (b->kind) {
      case VKP_SPIRV_BUFFER_INPUT:
        if (b->index >= 0 && b->index < graph->n_inputs) value = graph->inputs[b->index];
        break;
      case VKP_SPIRV_BUFFER_OUTPUT:
        if (b->index >= 0 && b->index < graph->n_outputs) value = graph->outputs[b->index];
        break;
      case VKP_SPIRV_BUFFER_CONSTANT:
      case VKP_SPIRV_BUFFER_CONSTANT_F16:
        if (b->index >= 0 && b->index < graph->n_values &&
            graph->values[b->index].kind == VKP_VALUE_CONSTANT)
          value = b->index;
        break;
      case VKP_SPIRV_BUFFER_SCRATCH:
        value = 0;
        break;
      default:
        break;
    }
    if (value < 0)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "buffer %d (%s #%d) refers to nothing in graph '%s'",
                             (int)i, vkp__spirv_buffer_kind_name(b->kind), (int)b->index,
                             graph->name);
    if (b->kind != VKP_SPIRV_BUFFER_SCRATCH) {
      const vkp_value_t *v = &graph->values[value];
      size_t bytes = 0;
      bool half = b->kind == VKP_SPIRV_BUFFER_CONSTANT_F16;
      if (half && v->dtype != VKP_DTYPE_FLOAT32)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "buffer %d keeps '%s' as float16 but it is %s", (int)i,
                               v->name, vkp_dtype_name(v->dtype));
      if (!vkp_shape_numel(v->rank, v->shape, half ? 2 : vkp_dtype_size(v->dtype), &bytes) ||
          (vkp__is_io(b) || half ? b->size != bytes : b->size > bytes))
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "buffer %d (%s '%s') is %llu bytes but the value "
                               "holds %zu",
                               (int)i, vkp__spirv_buffer_kind_name(b->kind), v->name,
                               (unsigned long long)b->size, bytes);
    }
  }
  for (int32_t d = 0; d < p->n_dispatches; ++d) {
    const vkp_spirv_dispatch_t *ds = &p->dispatches[d];
    const char *name = ds->name ? ds->name : "?";
    if (!ds->code || ds->code_words == 0 || ds->n_bindings < 0 ||
        (ds->n_bindings && !ds->bindings))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "dispatch %d '%s' has no code or bindings", (int)d, name);
    if ((uint32_t)ds->n_bindings > lim->maxPerStageDescriptorStorageBuffers)
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "dispatch %d '%s' binds %d buffers; the device allows "
                             "%u per stage",
                             (int)d, name, (int)ds->n_bindings,
                             lim->maxPerStageDescriptorStorageBuffers);
    for (int32_t j = 0; j < ds->n_bindings; ++j) {
      const vkp_spirv_binding_t *bd = &ds->bindings[j];
      if (bd->buffer < 0 || bd->buffer >= p->n_buffers)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "dispatch %d '%s' binding %d: no buffer %d", (int)d,
                               name, (int)j, (int)bd->buffer);
      const vkp_spirv_buffer_t *b = &p->buffers[bd->buffer];
      if (bd->range == 0 || bd->offset > b->size || bd->range > b->size - bd->offset)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "dispatch %d '%s' binding %d: bytes %llu+%llu lie "
                               "outside buffer %d (%s, %llu bytes)",
                               (int)d, name, (int)j, (unsigned long long)bd->offset,
                               (unsigned long long)bd->range, (int)bd->buffer,
                               vkp__spirv_buffer_kind_name(b->kind),
                               (unsigned long long)b->size);
      if (bd->range > lim->maxStorageBufferRange)
        return vkp_status_make(
            VKP_STATUS_OUT_OF_RANGE,
            "dispatch %d '%s' binding %d: buffer %d (%s #%d) binds %llu bytes, "
            "more than the device's maxStorageBufferRange (%u); the codegen must "
            "split it",
            (int)d, name, (int)j, (int)bd->buffer, vkp__spirv_buffer_kind_name(b->kind),
            (int)b->index, (unsigned long long)bd->range, lim->maxStorageBufferRange);
      if (lim->minStorageBufferOffsetAlignment > 1 &&
          bd->offset % lim->minStorageBufferOffsetAlignment != 0)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "dispatch %d '%s' binding %d: offset %llu is not a "
                               "multiple of minStorageBufferOffsetAlignment (%llu)",
                               (int)d, name, (int)j, (unsigned long long)bd->offset,
                               (unsigned long long)lim->minStorageBufferOffsetAlignment);
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Building

static vkp_status_t vkp__one_time_submit(vkp_vk_stage_t *s, VkCommandBuffer cmd) {
  VkSemaphore sem = VK_NULL_HANDLE;
  VKP_RETURN_IF_ERROR(vkp_vk_timeline_create(s->device, 0, &sem));
  const uint64_t one = 1;
  VkTimelineSemaphoreSubmitInfo tl = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .signalSemaphoreValueCount = 1,
      .pSignalSemaphoreValues = &one,
  };
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .pNext = &tl,
      .commandBufferCount = 1,
      .pCommandBuffers = &cmd,
      .signalSemaphoreCount = 1,
      .pSignalSemaphores = &sem,
  };
  vkp_status_t st = vkp_vk_queue_submit(s->device, 1, &submit, VK_NULL_HANDLE);
  if (!st) st = vkp_vk_timeline_wait(s->device, sem, 1, VKP__RUN_TIMEOUT_NS);
  vkp_vk_timeline_destroy(s->device, sem);
  return st;
}

// Copies constant data into the stage's constant buffers: in place when the
// memory is mapped, else through an upload buffer and one copy submit.
static bool vkp__is_constant(const vkp_spirv_buffer_t *b) {
  return b->kind == VKP_SPIRV_BUFFER_CONSTANT || b->kind == VKP_SPIRV_BUFFER_CONSTANT_F16;
}

// Writes constant `v` into `dst` as buffer `b` keeps it: as is, or each
// float32 rounded to float16 (to nearest even).
static void vkp__fill_constant(void *dst, const vkp_spirv_buffer_t *b,
                               const vkp_value_t *v) {
  if (b->kind != VKP_SPIRV_BUFFER_CONSTANT_F16) {
    memcpy(dst, v->data, (size_t)b->size);
    return;
  }
  const float *src = v->data;
  uint16_t *out = dst;
  for (size_t k = 0; k < (size_t)b->size / 2; ++k) out[k] = vkp__float_to_half(src[k]);
}

static vkp_status_t vkp__upload_constants(vkp_vk_stage_t *s, const vkp_graph_t *graph) {
  VkDeviceSize upload_bytes = 0;
  for (int32_t i = 0; i < s->n_buffers; ++i) {
    const vkp_spirv_buffer_t *b = &s->buffer_desc[i];
    if (!vkp__is_constant(b)) continue;
    const vkp_value_t *v = &graph->values[b->index];
    if (s->buffers[i].allocation.host)
      vkp__fill_constant(s->buffers[i].allocation.host, b, v);
    else
      upload_bytes += b->size;
  }
  if (upload_bytes == 0) return NULL;
  vkp_vk_buffer_t upload;
  VKP_RETURN_IF_ERROR(vkp_vk_buffer_init(&upload, s->device, upload_bytes,
                                         VKP_VK_MEMORY_UPLOAD));
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo ai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = s->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  vkp_status_t st = VKP_VK_STATUS(vkAllocateCommandBuffers(s->device->device, &ai, &cmd));
  if (st) cmd = VK_NULL_HANDLE;
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  if (!st) st = VKP_VK_STATUS(vkBeginCommandBuffer(cmd, &bi));
  VkDeviceSize at = 0;
  for (int32_t i = 0; !st && i < s->n_buffers; ++i) {
    const vkp_spirv_buffer_t *b = &s->buffer_desc[i];
    // (An empty constant has nothing to copy; Vulkan forbids a 0-byte copy.)
    if (!vkp__is_constant(b) || s->buffers[i].allocation.host || b->size == 0) continue;
    vkp__fill_constant((char *)upload.allocation.host + at, b, &graph->values[b->index]);
    VkBufferCopy region = {.srcOffset = at, .dstOffset = 0, .size = b->size};
    vkCmdCopyBuffer(cmd, upload.buffer, s->buffers[i].buffer, 1, &region);
    at += b->size;
  }
  if (!st) {
    // The recordings' leading barrier orders these copies before any dispatch.
    st = VKP_VK_STATUS(vkEndCommandBuffer(cmd));
  }
  if (!st) st = vkp__one_time_submit(s, cmd);
  if (cmd) vkFreeCommandBuffers(s->device->device, s->command_pool, 1, &cmd);
  vkp_vk_buffer_deinit(&upload, s->device);
  return st;
}

static vkp_status_t vkp__build_pipelines(vkp_vk_stage_t *s,
                                         const vkp_spirv_program_t *p) {
  VkDevice dev = s->device->device;
  VkDescriptorSetLayoutBinding *lb = NULL;
  for (int32_t d = 0; d < p->n_dispatches; ++d) {
    const vkp_spirv_dispatch_t *src = &p->dispatches[d];
    vkp__dispatch_t *dst = &s->dispatches[d];
    dst->name = vkp__strdup(src->name ? src->name : "dispatch");
    dst->bindings = vkp__calloc((size_t)src->n_bindings + 1, sizeof *dst->bindings);
    lb = vkp__calloc((size_t)src->n_bindings + 1, sizeof *lb);
    if (!dst->name || !dst->bindings || !lb) {
      vkp__free(lb);
      return VKP_OOM("Vulkan dispatch");
    }
    memcpy(dst->groups, src->groups, sizeof dst->groups);
    dst->n_bindings = src->n_bindings;
    if (src->n_bindings)
      memcpy(dst->bindings, src->bindings, (size_t)src->n_bindings * sizeof *dst->bindings);
    for (int32_t j = 0; j < src->n_bindings; ++j)
      lb[j] = (VkDescriptorSetLayoutBinding){
          .binding = (uint32_t)j,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .descriptorCount = 1,
          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
      };
    VkDescriptorSetLayoutCreateInfo sli = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = (uint32_t)src->n_bindings,
        .pBindings = lb,
    };
    VkResult vr = vkCreateDescriptorSetLayout(dev, &sli, NULL, &dst->set_layout);
    vkp__free(lb);
    lb = NULL;
    if (vr != VK_SUCCESS) {
      dst->set_layout = VK_NULL_HANDLE;
      return vkp_vk_result_status(vr, "vkCreateDescriptorSetLayout", __FILE__, __LINE__);
    }
    VkPipelineLayoutCreateInfo pli = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &dst->set_layout,
    };
    vr = vkCreatePipelineLayout(dev, &pli, NULL, &dst->layout);
    if (vr != VK_SUCCESS) {
      dst->layout = VK_NULL_HANDLE;
      return vkp_vk_result_status(vr, "vkCreatePipelineLayout", __FILE__, __LINE__);
    }
  }
  // One vkCreateComputePipelines call for all dispatches, through the cache.
  VkShaderModule *modules = vkp__calloc((size_t)p->n_dispatches + 1, sizeof *modules);
  VkComputePipelineCreateInfo *infos =
      vkp__calloc((size_t)p->n_dispatches + 1, sizeof *infos);
  vkp_status_t st = modules && infos ? NULL : VKP_OOM("Vulkan pipelines");
  for (int32_t d = 0; !st && d < p->n_dispatches; ++d) {
    VkShaderModuleCreateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = p->dispatches[d].code_words * sizeof(uint32_t),
        .pCode = p->dispatches[d].code,
    };
    st = VKP_VK_STATUS(vkCreateShaderModule(dev, &mi, NULL, &modules[d]));
    if (st) {
      modules[d] = VK_NULL_HANDLE;
      st = vkp_status_annotate(st, "dispatch %d '%s'", (int)d, s->dispatches[d].name);
      break;
    }
    infos[d] = (VkComputePipelineCreateInfo){
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        // Grids past maxComputeWorkGroupCount are split with vkCmdDispatchBase
        // (VUID-vkCmdDispatchBase-baseGroupX-00427 needs this flag).
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = modules[d],
                .pName = "main",
            },
        .layout = s->dispatches[d].layout,
    };
  }
  VkPipeline *pipelines = vkp__calloc((size_t)p->n_dispatches + 1, sizeof *pipelines);
  if (!st && !pipelines) st = VKP_OOM("Vulkan pipelines");
  if (!st && p->n_dispatches)
    st = vkp_vk_device_check_compile_room(s->device, "the stage's compute pipelines");
  if (!st && p->n_dispatches) {
    st = VKP_VK_STATUS(vkCreateComputePipelines(dev, s->device->pipeline_cache,
                                                (uint32_t)p->n_dispatches, infos,
                                                NULL, pipelines));
    for (int32_t d = 0; d < p->n_dispatches; ++d)
      s->dispatches[d].pipeline = st ? VK_NULL_HANDLE : pipelines[d];
    if (st) {
      // A failed batch may still have created some pipelines.
      for (int32_t d = 0; d < p->n_dispatches; ++d)
        if (pipelines[d]) vkDestroyPipeline(dev, pipelines[d], NULL);
    }
  }
  for (int32_t d = 0; modules && d < p->n_dispatches; ++d)
    if (modules[d]) vkDestroyShaderModule(dev, modules[d], NULL);
  vkp__free(pipelines);
  vkp__free(modules);
  vkp__free(infos);
  return st;
}

// ---------------------------------------------------------------------------
// Recording

static void vkp__recording_release(vkp_vk_stage_t *s, vkp__recording_t *r) {
  VkDevice dev = s->device->device;
  if (r->cmd) vkFreeCommandBuffers(dev, s->command_pool, 1, &r->cmd);
  if (r->pool) vkDestroyDescriptorPool(dev, r->pool, NULL);
  vkp__free(r->sets);
  memset(r, 0, sizeof *r);
}

static void vkp__memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                                VkAccessFlags src_access,
                                VkPipelineStageFlags dst_stage,
                                VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = src_access,
      .dstAccessMask = dst_access,
  };
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, /*dependencyFlags=*/0, 1, &mb, 0,
                       NULL, 0, NULL);
}

// The VkBuffer and offset a binding of program buffer `b` reads, given the
// slot's stagings.
static void vkp__resolve(const vkp_vk_stage_t *s, int32_t b,
                         const vkp_staging_t *inputs, const vkp_staging_t *outputs,
                         VkBuffer *out_buffer, VkDeviceSize *out_offset) {
  const vkp_spirv_buffer_t *desc = &s->buffer_desc[b];
  if (s->device->unified_memory && vkp__is_io(desc)) {
    const vkp_staging_t *st = desc->kind == VKP_SPIRV_BUFFER_INPUT
                                  ? &inputs[desc->index]
                                  : &outputs[desc->index];
    *out_buffer = VKP_VK_FROM_U64(VkBuffer, st->buffer);
    *out_offset = st->offset;
    return;
  }
  *out_buffer = s->buffers[b].buffer;
  *out_offset = 0;
}

static vkp_status_t vkp__record(vkp_vk_stage_t *s, const vkp_staging_t *inputs,
                                const vkp_staging_t *outputs, vkp__recording_t *r) {
  VkDevice dev = s->device->device;
  memset(r, 0, sizeof *r);
  for (int32_t i = 0; i < s->n_inputs + s->n_outputs; ++i) {
    const vkp_staging_t *st = i < s->n_inputs ? &inputs[i] : &outputs[i - s->n_inputs];
    if (!st->buffer || st->size < s->io_bytes[i] ||
        (s->device->unified_memory &&
         st->offset % s->device->properties.limits.minStorageBufferOffsetAlignment))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "%s %d: staging of %zu bytes cannot hold %zu bytes",
                             i < s->n_inputs ? "input" : "output",
                             (int)(i < s->n_inputs ? i : i - s->n_inputs),
                             st->size, s->io_bytes[i]);
  }
  uint32_t n_descriptors = 0;
  for (int32_t d = 0; d < s->n_dispatches; ++d)
    n_descriptors += (uint32_t)s->dispatches[d].n_bindings;
  VkDescriptorPoolSize ps = {
      .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
      .descriptorCount = n_descriptors ? n_descriptors : 1,
  };
  VkDescriptorPoolCreateInfo pi = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = s->n_dispatches ? (uint32_t)s->n_dispatches : 1,
      .poolSizeCount = 1,
      .pPoolSizes = &ps,
  };
  VKP_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(dev, &pi, NULL, &r->pool));
  vkp_status_t st = NULL;
  r->sets = vkp__calloc((size_t)s->n_dispatches + 1, sizeof *r->sets);
  if (!r->sets) st = VKP_OOM("descriptor sets");
  for (int32_t d = 0; !st && d < s->n_dispatches; ++d) {
    const vkp__dispatch_t *ds = &s->dispatches[d];
    VkDescriptorSetAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = r->pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &ds->set_layout,
    };
    st = VKP_VK_STATUS(vkAllocateDescriptorSets(dev, &ai, &r->sets[d]));
    VkDescriptorBufferInfo bi[64];
    VkWriteDescriptorSet wr[64];
    for (int32_t j = 0; !st && j < ds->n_bindings; ++j) {
      // Checked against maxPerStageDescriptorStorageBuffers; 64 is plenty.
      if (j >= 64) {
        st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "more than 64 bindings");
        break;
      }
      VkBuffer buf;
      VkDeviceSize base;
      vkp__resolve(s, ds->bindings[j].buffer, inputs, outputs, &buf, &base);
      bi[j] = (VkDescriptorBufferInfo){.buffer = buf,
                                       .offset = base + ds->bindings[j].offset,
                                       .range = ds->bindings[j].range};
      wr[j] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = r->sets[d],
          .dstBinding = (uint32_t)j,
          .descriptorCount = 1,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = &bi[j],
      };
    }
    if (!st && ds->n_bindings)
      vkUpdateDescriptorSets(dev, (uint32_t)ds->n_bindings, wr, 0, NULL);
  }
  VkCommandBufferAllocateInfo cai = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = s->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  if (!st) {
    st = VKP_VK_STATUS(vkAllocateCommandBuffers(dev, &cai, &r->cmd));
    if (st) r->cmd = VK_NULL_HANDLE;
  }
  VkCommandBufferBeginInfo begin = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      // Replayed many times; a slot may be resubmitted while still pending.
      .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
  };
  if (!st) st = VKP_VK_STATUS(vkBeginCommandBuffer(r->cmd, &begin));
  if (st) {
    vkp__recording_release(s, r);
    return st;
  }
  VkCommandBuffer cmd = r->cmd;
  const VkPipelineStageFlags work =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  const VkAccessFlags writes = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkAccessFlags all = writes | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  // Earlier submissions on this queue (another slot, the constant upload) may
  // still write or read the buffers this one uses: wait for them.
  vkp__memory_barrier(cmd, work, writes, work, all);
  const bool copies = !s->device->unified_memory;
  int32_t copied_in = 0;
  for (int32_t b = 0; copies && b < s->n_buffers; ++b) {
    const vkp_spirv_buffer_t *desc = &s->buffer_desc[b];
    if (desc->kind != VKP_SPIRV_BUFFER_INPUT || desc->size == 0) continue;
    const vkp_staging_t *in = &inputs[desc->index];
    VkBufferCopy region = {.srcOffset = in->offset, .dstOffset = 0, .size = desc->size};
    vkCmdCopyBuffer(cmd, VKP_VK_FROM_U64(VkBuffer, in->buffer), s->buffers[b].buffer, 1,
                    &region);
    ++copied_in;
  }
  if (copied_in)
    vkp__memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  s->stats = (vkp_vk_stage_stats_t){0};
  int32_t since_barrier = 0;  // dispatches [d - since_barrier, d) unordered
  const uint32_t *max = s->device->properties.limits.maxComputeWorkGroupCount;
  for (int32_t d = 0; d < s->n_dispatches; ++d) {
    const vkp__dispatch_t *ds = &s->dispatches[d];
    bool depends = false;
    for (int32_t e = d - since_barrier; e < d && !depends; ++e) {
      vkp_spirv_dispatch_t a = {.n_bindings = s->dispatches[e].n_bindings,
                                .bindings = s->dispatches[e].bindings};
      vkp_spirv_dispatch_t b = {.n_bindings = ds->n_bindings, .bindings = ds->bindings};
      depends = vkp_vk_dispatches_overlap(&a, &b);
    }
    if (depends) {
      vkp__memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      ++s->stats.compute_barriers;
      since_barrier = 0;
    }
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ds->pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, ds->layout, 0, 1,
                            &r->sets[d], 0, NULL);
    uint64_t chunks = vkp_vk_grid_chunk_count(ds->groups, max);
    for (uint64_t c = 0; c < chunks; ++c) {
      vkp_vk_grid_chunk_t ch;
      vkp_vk_grid_chunk(ds->groups, max, c, &ch);
      // Plain vkCmdDispatch when no base is needed: Debian 12's
      // synchronization validation (1.3.239) only checks vkCmdDispatch.
      if (chunks == 1)
        vkCmdDispatch(cmd, ch.count[0], ch.count[1], ch.count[2]);
      else
        vkCmdDispatchBase(cmd, ch.base[0], ch.base[1], ch.base[2], ch.count[0],
                          ch.count[1], ch.count[2]);
      ++s->stats.dispatch_calls;
    }
    ++since_barrier;
  }
  if (copies) {
    vkp__memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT);
    for (int32_t b = 0; b < s->n_buffers; ++b) {
      const vkp_spirv_buffer_t *desc = &s->buffer_desc[b];
      if (desc->kind != VKP_SPIRV_BUFFER_OUTPUT || desc->size == 0) continue;
      const vkp_staging_t *out = &outputs[desc->index];
      VkBufferCopy region = {.srcOffset = 0, .dstOffset = out->offset, .size = desc->size};
      vkCmdCopyBuffer(cmd, s->buffers[b].buffer, VKP_VK_FROM_U64(VkBuffer, out->buffer),
                      1, &region);
    }
  }
  // Results must reach the host domain before a host read (the semaphore
  // signal alone does not make device writes visible to the host).
  vkp__memory_barrier(cmd, work, writes, VK_PIPELINE_STAGE_HOST_BIT,
                      VK_ACCESS_HOST_READ_BIT);
  st = VKP_VK_STATUS(vkEndCommandBuffer(cmd));
  if (st) vkp__recording_release(s, r);
  return st;
}

// ---------------------------------------------------------------------------

vkp_status_t vkp_vk_stage_create(vkp_vk_device_t *device, const vkp_graph_t *graph,
                                 const vkp_spirv_program_t *program,
                                 vkp_vk_stage_t **out_stage) {
  *out_stage = NULL;
  VKP_RETURN_IF_ERROR(vkp_status_annotate(vkp__check_program(device, graph, program),
                                          "loading a Vulkan stage for graph '%s'",
                                          graph->name));
  vkp_vk_stage_t *s = vkp__calloc(1, sizeof *s);
  if (!s) return VKP_OOM("Vulkan stage");
  s->device = device;
  s->n_inputs = graph->n_inputs;
  s->n_outputs = graph->n_outputs;
  s->n_buffers = program->n_buffers;
  s->n_dispatches = program->n_dispatches;
  int32_t n_io = s->n_inputs + s->n_outputs;
  s->io_bytes = vkp__calloc((size_t)n_io + 1, sizeof *s->io_bytes);
  s->buffer_desc = vkp__calloc((size_t)s->n_buffers + 1, sizeof *s->buffer_desc);
  s->buffers = vkp__calloc((size_t)s->n_buffers + 1, sizeof *s->buffers);
  s->dispatches = vkp__calloc((size_t)s->n_dispatches + 1, sizeof *s->dispatches);
  s->run_staging = vkp__calloc((size_t)n_io + 1, sizeof *s->run_staging);
  vkp_status_t st = NULL;
  if (!s->io_bytes || !s->buffer_desc || !s->buffers || !s->dispatches || !s->run_staging)
    st = VKP_OOM("Vulkan stage");
  for (int32_t i = 0; !st && i < n_io; ++i) {
    const vkp_value_t *v = &graph->values[i < s->n_inputs ? graph->inputs[i]
                                                          : graph->outputs[i - s->n_inputs]];
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &s->io_bytes[i]))
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "value '%s' has a bad shape",
                           v->name);
  }
  if (!st && s->n_buffers)
    memcpy(s->buffer_desc, program->buffers, (size_t)s->n_buffers * sizeof *s->buffer_desc);
  for (int32_t b = 0; !st && b < s->n_buffers; ++b) {
    const vkp_spirv_buffer_t *desc = &s->buffer_desc[b];
    if (vkp__is_io(desc) && device->unified_memory) continue;
    st = vkp_vk_buffer_init(&s->buffers[b], device, desc->size, VKP_VK_MEMORY_DEVICE);
    if (st)
      st = vkp_status_annotate(st, "buffer %d (%s #%d)", (int)b,
                               vkp__spirv_buffer_kind_name(desc->kind), (int)desc->index);
  }
  if (!st) {
    VkCommandPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = device->queue_family,
    };
    st = VKP_VK_STATUS(vkCreateCommandPool(device->device, &ci, NULL, &s->command_pool));
    if (st) s->command_pool = VK_NULL_HANDLE;
  }
  if (!st) st = vkp__upload_constants(s, graph);
  if (!st) st = vkp__build_pipelines(s, program);
  for (int32_t i = 0; !st && i < n_io; ++i)
    st = vkp_vk_staging_alloc(device, s->io_bytes[i], &s->run_staging[i]);
  if (!st)
    st = vkp__record(s, s->run_staging, s->run_staging + s->n_inputs, &s->run_recording);
  if (!st) st = vkp_vk_timeline_create(device, 0, &s->timeline);
  if (st) {
    vkp_vk_stage_destroy(s);
    return vkp_status_annotate(st, "loading a Vulkan stage for graph '%s'", graph->name);
  }
  // Keep what this load compiled for the next process.
  vkp_vk_device_save_pipeline_cache(device);
  *out_stage = s;
  return NULL;
}

// Waits until every submit of this stage has finished; false when that does
// not happen within the timeout (work blocked on a wait nobody signals).
static bool vkp__stage_idle(vkp_vk_stage_t *stage) {
  if (!stage->timeline || stage->submitted == 0) return true;
  vkp_status_t st = vkp_vk_timeline_wait(stage->device, stage->timeline,
                                         stage->submitted, VKP__RUN_TIMEOUT_NS);
  bool ok = st == NULL || vkp_status_is(st, VKP_STATUS_DEVICE_LOST);
  vkp_status_free(st);
  return ok;
}

void vkp_vk_stage_destroy(vkp_vk_stage_t *stage) {
  if (!stage) return;
  vkp_vk_device_t *dev = stage->device;
  // Pending command buffers must not be freed (VUID-vkFreeCommandBuffers-
  // pCommandBuffers-00047): when this stage's work never finishes, its Vulkan
  // objects are left to vkDestroyDevice rather than freed under the GPU.
  if (!vkp__stage_idle(stage)) return;
  for (int32_t i = 0; i < stage->n_slots; ++i) vkp__recording_release(stage, &stage->slots[i]);
  vkp__free(stage->slots);
  if (stage->command_pool) vkp__recording_release(stage, &stage->run_recording);
  if (stage->timeline) vkp_vk_timeline_destroy(dev, stage->timeline);
  for (int32_t i = 0; stage->run_staging && i < stage->n_inputs + stage->n_outputs; ++i)
    vkp_vk_staging_free(dev, &stage->run_staging[i]);
  for (int32_t d = 0; stage->dispatches && d < stage->n_dispatches; ++d) {
    vkp__dispatch_t *ds = &stage->dispatches[d];
    if (ds->pipeline) vkDestroyPipeline(dev->device, ds->pipeline, NULL);
    if (ds->layout) vkDestroyPipelineLayout(dev->device, ds->layout, NULL);
    if (ds->set_layout) vkDestroyDescriptorSetLayout(dev->device, ds->set_layout, NULL);
    vkp__free(ds->name);
    vkp__free(ds->bindings);
  }
  if (stage->command_pool) vkDestroyCommandPool(dev->device, stage->command_pool, NULL);
  for (int32_t b = 0; stage->buffers && b < stage->n_buffers; ++b)
    vkp_vk_buffer_deinit(&stage->buffers[b], dev);
  vkp__free(stage->run_staging);
  vkp__free(stage->dispatches);
  vkp__free(stage->buffers);
  vkp__free(stage->buffer_desc);
  vkp__free(stage->io_bytes);
  vkp__free(stage);
}

vkp_status_t vkp_vk_stage_run(vkp_vk_stage_t *stage, const vkp_tensor_t *inputs,
                              vkp_tensor_t *outputs) {
  int32_t n_in = stage->n_inputs;
  for (int32_t i = 0; i < n_in + stage->n_outputs; ++i) {
    const vkp_tensor_t *t = i < n_in ? &inputs[i] : &outputs[i - n_in];
    if (vkp_tensor_nbytes(t) != stage->io_bytes[i] || (stage->io_bytes[i] && !t->data))
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "%s %d: expected %zu bytes, got %zu",
                             i < n_in ? "input" : "output",
                             (int)(i < n_in ? i : i - n_in), stage->io_bytes[i],
                             vkp_tensor_nbytes(t));
  }
  for (int32_t i = 0; i < n_in; ++i)
    memcpy(stage->run_staging[i].host, inputs[i].data, stage->io_bytes[i]);
  uint64_t value = stage->submitted + 1;
  VkTimelineSemaphoreSubmitInfo tl = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .signalSemaphoreValueCount = 1,
      .pSignalSemaphoreValues = &value,
  };
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .pNext = &tl,
      .commandBufferCount = 1,
      .pCommandBuffers = &stage->run_recording.cmd,
      .signalSemaphoreCount = 1,
      .pSignalSemaphores = &stage->timeline,
  };
  VKP_RETURN_IF_ERROR(vkp_vk_queue_submit(stage->device, 1, &submit, VK_NULL_HANDLE));
  stage->submitted = value;
  VKP_RETURN_IF_ERROR(vkp_vk_timeline_wait(stage->device, stage->timeline, value,
                                           VKP__RUN_TIMEOUT_NS));
  for (int32_t i = 0; i < stage->n_outputs; ++i)
    memcpy(outputs[i].data, stage->run_staging[n_in + i].host, stage->io_bytes[n_in + i]);
  return NULL;
}

vkp_status_t vkp_vk_stage_bind_slots(vkp_vk_stage_t *stage, int32_t n_slots,
                                     const vkp_staging_t *inputs,
                                     const vkp_staging_t *outputs) {
  if (n_slots <= 0 || (stage->n_inputs && !inputs) || (stage->n_outputs && !outputs))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "bind_slots: %d slots with no stagings", (int)n_slots);
  vkp__recording_t *slots = vkp__calloc((size_t)n_slots, sizeof *slots);
  if (!slots) return VKP_OOM("slot recordings");
  vkp_status_t st = NULL;
  int32_t done = 0;
  for (; done < n_slots && !st; ++done) {
    st = vkp__record(stage, inputs + (size_t)done * (size_t)stage->n_inputs,
                     outputs + (size_t)done * (size_t)stage->n_outputs, &slots[done]);
    if (st) st = vkp_status_annotate(st, "recording slot %d", (int)done);
  }
  if (st) {
    for (int32_t i = 0; i < done; ++i) vkp__recording_release(stage, &slots[i]);
    vkp__free(slots);
    return st;
  }
  if (stage->n_slots) {
    if (!vkp__stage_idle(stage)) {
      for (int32_t i = 0; i < n_slots; ++i) vkp__recording_release(stage, &slots[i]);
      vkp__free(slots);
      return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                             "bind_slots: earlier submits of this stage did not "
                             "finish");
    }
    for (int32_t i = 0; i < stage->n_slots; ++i) vkp__recording_release(stage, &stage->slots[i]);
    vkp__free(stage->slots);
  }
  stage->slots = slots;
  stage->n_slots = n_slots;
  return NULL;
}

vkp_status_t vkp_vk_stage_submit(vkp_vk_stage_t *stage, const vkp_submit_info_t *info) {
  if (info->slot < 0 || info->slot >= stage->n_slots)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "submit: slot %d not bound (bind_slots recorded %d)",
                           (int)info->slot, (int)stage->n_slots);
  if (info->n_waits < 0 || info->n_signals < 0 || info->n_waits > 32 ||
      info->n_signals > 32)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "submit: %d waits and %d signals (at most 32 each)",
                           (int)info->n_waits, (int)info->n_signals);
  VkSemaphore wait_sems[32], signal_sems[33];
  uint64_t wait_values[32], signal_values[33];
  VkPipelineStageFlags wait_stages[32];
  for (int32_t i = 0; i < info->n_waits; ++i) {
    wait_sems[i] = VKP_VK_FROM_U64(VkSemaphore, info->waits[i].semaphore);
    wait_values[i] = info->waits[i].value;
    // The leading barrier and the copies both come after the wait.
    wait_stages[i] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  }
  for (int32_t i = 0; i < info->n_signals; ++i) {
    signal_sems[i] = VKP_VK_FROM_U64(VkSemaphore, info->signals[i].semaphore);
    signal_values[i] = info->signals[i].value;
  }
  signal_sems[info->n_signals] = stage->timeline;
  signal_values[info->n_signals] = stage->submitted + 1;
  VkTimelineSemaphoreSubmitInfo tl = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .waitSemaphoreValueCount = (uint32_t)info->n_waits,
      .pWaitSemaphoreValues = wait_values,
      .signalSemaphoreValueCount = (uint32_t)info->n_signals + 1,
      .pSignalSemaphoreValues = signal_values,
  };
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .pNext = &tl,
      .waitSemaphoreCount = (uint32_t)info->n_waits,
      .pWaitSemaphores = wait_sems,
      .pWaitDstStageMask = wait_stages,
      .commandBufferCount = 1,
      .pCommandBuffers = &stage->slots[info->slot].cmd,
      .signalSemaphoreCount = (uint32_t)info->n_signals + 1,
      .pSignalSemaphores = signal_sems,
  };
  VKP_RETURN_IF_ERROR(vkp_vk_queue_submit(stage->device, 1, &submit, VK_NULL_HANDLE));
  ++stage->submitted;
  return NULL;
}
