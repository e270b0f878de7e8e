// SPDX-License-Identifier: Apache-2.0
#include "runtime/vulkan/memory.h"

#include <assert.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "runtime/vulkan/vk_result.h"

static const char *const vkp__memory_usage_names[] = {
#define VKP__VK_MEMORY_USAGE_NAME(e, s) s,
    VKP_VK_MEMORY_USAGE_LIST(VKP__VK_MEMORY_USAGE_NAME)
#undef VKP__VK_MEMORY_USAGE_NAME
};
static_assert(sizeof vkp__memory_usage_names / sizeof vkp__memory_usage_names[0] ==
                  VKP_VK_MEMORY_USAGE_COUNT,
              "one name per memory usage");

const char *vkp_vk_memory_usage_name(vkp_vk_memory_usage_t usage) {
  return (unsigned)usage < VKP_VK_MEMORY_USAGE_COUNT
             ? vkp__memory_usage_names[usage]
             : "unknown";
}

bool vkp_vk_memory_is_unified(const VkPhysicalDeviceMemoryProperties *props) {
  if (props->memoryHeapCount == 0) return false;
  for (uint32_t h = 0; h < props->memoryHeapCount; ++h)
    if (!(props->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
      return false;
  // ...and some type is both device-local and host-visible+coherent.
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t t = 0; t < props->memoryTypeCount; ++t)
    if ((props->memoryTypes[t].propertyFlags & want) == want) return true;
  return false;
}

// What a usage requires, prefers (each bit +1, `strong` bits +2) and avoids
// (each bit -1).
typedef struct vkp__memory_rule_t {
  VkMemoryPropertyFlags required, strong, preferred, avoided;
} vkp__memory_rule_t;

static vkp__memory_rule_t vkp__memory_rule(vkp_vk_memory_usage_t usage,
                                           bool unified) {
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  const VkMemoryPropertyFlags visible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags cached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  vkp__memory_rule_t r = {0};
  switch (usage) {
    case VKP_VK_MEMORY_DEVICE:
      if (unified) {
        r.required = local | visible;
        r.preferred = cached;
      } else {
        // Keep weights out of the small host-visible BAR window.
        r.required = local;
        r.avoided = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      }
      break;
    case VKP_VK_MEMORY_UPLOAD:
      r.required = visible;
      if (unified) r.strong = local;
      break;
    case VKP_VK_MEMORY_READBACK:
      r.required = visible;
      r.strong = cached;
      if (unified) r.preferred = local;
      break;
    case VKP_VK_MEMORY_STAGING:
      r.required = visible;
      r.strong = unified ? local : 0;
      r.preferred = cached;
      break;
    default:
      r.required = ~(VkMemoryPropertyFlags)0;  // nothing fits
      break;
  }
  return r;
}

static int vkp__popcount(uint32_t x) {
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}

int32_t vkp_vk_memory_choose_type(const VkPhysicalDeviceMemoryProperties *props,
                                  uint32_t type_bits,
                                  vkp_vk_memory_usage_t usage) {
  const bool unified = vkp_vk_memory_is_unified(props);
  const vkp__memory_rule_t r = vkp__memory_rule(usage, unified);
  // Never protected or lazily allocated memory, nor AMD's uncached
  // device-coherent types, for ordinary buffers.
  const VkMemoryPropertyFlags never = VK_MEMORY_PROPERTY_PROTECTED_BIT |
                                      VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT |
                                      0x40 /* DEVICE_COHERENT_BIT_AMD */;
  int32_t best = -1;
  int best_score = 0;
  for (uint32_t t = 0; t < props->memoryTypeCount && t < 32; ++t) {
    if (!(type_bits & (1u << t))) continue;
    VkMemoryPropertyFlags f = props->memoryTypes[t].propertyFlags;
    if ((f & r.required) != r.required || (f & never)) continue;
    int score = 2 * vkp__popcount(f & r.strong) +
                vkp__popcount(f & r.preferred) - vkp__popcount(f & r.avoided);
    if (best < 0 || score > best_score) {
      best = (int32_t)t;
      best_score = score;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------
// Sub-allocator: per memory type, a list of blocks; each block keeps its free
// ranges sorted by offset and merges neighbours on free (first fit).

typedef struct vkp__range_t {
  VkDeviceSize offset, size;
} vkp__range_t;

typedef struct vkp__block_t {
  struct vkp__block_t *next;
  VkDeviceMemory memory;
  uint32_t type;
  VkDeviceSize size;
  void *mapped;  // whole block, or NULL
  vkp__range_t *free;
  int32_t n_free, cap_free;
} vkp__block_t;

struct vkp_vk_allocator_t {
  VkDevice device;
  VkPhysicalDeviceMemoryProperties props;
  VkDeviceSize block_size;
  VkDeviceSize max_allocation_size;
  pthread_mutex_t mutex;  // guards every block list
  vkp__block_t *blocks[VK_MAX_MEMORY_TYPES];
  // The device's host allocator: the block lists outlive the pipeline whose
  // stage grows them, so they are kept with the device's, not the caller's.
  vkp_allocator_t host;
};

vkp_status_t vkp_vk_allocator_create(VkDevice device,
                                     const VkPhysicalDeviceMemoryProperties *props,
                                     VkDeviceSize block_size,
                                     VkDeviceSize max_allocation_size,
                                     vkp_vk_allocator_t **out_allocator) {
  vkp_vk_allocator_t *a = vkp__calloc(1, sizeof *a);
  if (!a) return VKP_OOM("Vulkan memory allocator");
  a->host = vkp__allocator_resolve(NULL);
  a->device = device;
  a->props = *props;
  a->block_size = block_size ? block_size : (VkDeviceSize)64 << 20;
  a->max_allocation_size = max_allocation_size;
  if (pthread_mutex_init(&a->mutex, NULL) != 0) {
    vkp__free(a);
    return vkp_status_make(VKP_STATUS_INTERNAL, "pthread_mutex_init failed");
  }
  *out_allocator = a;
  return NULL;
}

static void vkp__block_release(vkp_vk_allocator_t *a, vkp__block_t *b) {
  if (b->mapped) vkUnmapMemory(a->device, b->memory);
  vkFreeMemory(a->device, b->memory, /*pAllocator=*/NULL);
  vkp__free(b->free);
  vkp__free(b);
}

void vkp_vk_allocator_destroy(vkp_vk_allocator_t *allocator) {
  if (!allocator) return;
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t) {
    vkp__block_t *b = allocator->blocks[t];
    while (b) {
      vkp__block_t *next = b->next;
      vkp__block_release(allocator, b);
      b = next;
    }
  }
  pthread_mutex_destroy(&allocator->mutex);
  vkp__free(allocator);
}

int32_t vkp_vk_allocator_block_count(vkp_vk_allocator_t *allocator) {
  int32_t n = 0;
  pthread_mutex_lock(&allocator->mutex);
  for (uint32_t t = 0; t < VK_MAX_MEMORY_TYPES; ++t)
    for (vkp__block_t *b = allocator->blocks[t]; b; b = b->next) ++n;
  pthread_mutex_unlock(&allocator->mutex);
  return n;
}

static VkDeviceSize vkp__align_up(VkDeviceSize x, VkDeviceSize a) {
  return a > 1 ? (x + a - 1) / a * a : x;
}

// Carves `size` bytes aligned to `alignment` out of block `b`; false when no
// free range is big enough.
static bool vkp__block_take(vkp__block_t *b, VkDeviceSize size,
                            VkDeviceSize alignment, VkDeviceSize *out_offset) {
  for (int32_t i = 0; i < b->n_free; ++i) {
    vkp__range_t *r = &b->free[i];
    VkDeviceSize start = vkp__align_up(r->offset, alignment);
    if (start < r->offset || start - r->offset + size > r->size) continue;
    VkDeviceSize head = start - r->offset;
    VkDeviceSize tail = r->size - head - size;
    if (head && tail && b->n_free == b->cap_free) {
      vkp__range_t *grown =
          vkp__reallocarray(b->free, (size_t)b->cap_free * 2, sizeof(*grown));
      if (grown) {
        b->free = grown;
        b->cap_free *= 2;
        r = &b->free[i];
      }
    }
    // Both pieces stay free when the list has room; otherwise (out of memory)
    // the smaller one is lost until the block is destroyed.
    if (head && tail && b->n_free < b->cap_free) {
      memmove(&b->free[i + 1], &b->free[i],
              (size_t)(b->n_free - i) * sizeof(*r));
      ++b->n_free;
      b->free[i].size = head;
      b->free[i + 1].offset = start + size;
      b->free[i + 1].size = tail;
    } else if (head) {
      r->size = head;
      if (tail) {
        // No room for a second entry: keep the larger piece.
        if (tail > head) {
          r->offset = start + size;
          r->size = tail;
        }
      }
    } else if (tail) {
      r->offset = start + size;
      r->size = tail;
    } else {
      memmove(&b->free[i], &b->free[i + 1],
              (size_t)(b->n_free - i - 1) * sizeof(*r));
      --b->n_free;
    }
    *out_offset = start;
    return true;
  }
  return false;
}

static bool vkp__block_is_empty(const vkp__block_t *b) {
  return b->n_free == 1 && b->free[0].offset == 0 && b->free[0].size == b->size;
}

// Returns [offset, offset+size) to `b`, merging with neighbours. False only
// when the free list cannot grow (the range is then lost until destroy).
static bool vkp__block_give(vkp__block_t *b, VkDeviceSize offset,
                            VkDeviceSize size) {
  int32_t i = 0;
  while (i < b->n_free && b->free[i].offset < offset) ++i;
  bool merge_prev = i > 0 && b->free[i - 1].offset + b->free[i - 1].size == offset;
  bool merge_next = i < b->n_free && offset + size == b->free[i].offset;
  if (merge_prev && merge_next) {
    b->free[i - 1].size += size + b->free[i].size;
    memmove(&b->free[i], &b->free[i + 1],
            (size_t)(b->n_free - i - 1) * sizeof(b->free[0]));
    --b->n_free;
  } else if (merge_prev) {
    b->free[i - 1].size += size;
  } else if (merge_next) {
    b->free[i].offset = offset;
    b->free[i].size += size;
  } else {
    if (b->n_free == b->cap_free) {
      int32_t cap = b->cap_free * 2;
      vkp__range_t *grown = vkp__reallocarray(b->free, (size_t)cap, sizeof(*grown));
      if (!grown) return false;
      b->free = grown;
      b->cap_free = cap;
    }
    memmove(&b->free[i + 1], &b->free[i],
            (size_t)(b->n_free - i) * sizeof(b->free[0]));
    b->free[i].offset = offset;
    b->free[i].size = size;
    ++b->n_free;
  }
  return true;
}

static vkp_status_t vkp__block_create(vkp_vk_allocator_t *a, uint32_t type,
                                      VkDeviceSize size, vkp__block_t **out) {
  vkp__block_t *b = vkp__calloc(1, sizeof *b);
  if (!b) return VKP_OOM("Vulkan memory block");
  b->cap_free = 16;
  b->free = vkp__calloc((size_t)b->cap_free, sizeof(*b->free));
  if (!b->free) {
    vkp__free(b);
    return VKP_OOM("Vulkan memory block");
  }
  b->type = type;
  b->size = size;
  b->n_free = 1;
  b->free[0].size = size;
  VkMemoryAllocateInfo info = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .allocationSize = size,
      .memoryTypeIndex = type,
  };
  vkp_status_t st = VKP_VK_STATUS(
      vkAllocateMemory(a->device, &info, /*pAllocator=*/NULL, &b->memory));
  if (!st && (a->props.memoryTypes[type].propertyFlags &
              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) {
    st = VKP_VK_STATUS(vkMapMemory(a->device, b->memory, /*offset=*/0,
                                   VK_WHOLE_SIZE, /*flags=*/0, &b->mapped));
    if (st) vkFreeMemory(a->device, b->memory, /*pAllocator=*/NULL);
  }
  if (st) {
    vkp__free(b->free);
    vkp__free(b);
    return vkp_status_annotate(st, "allocating a %llu-byte block of memory type %u",
                               (unsigned long long)size, type);
  }
  *out = b;
  return NULL;
}

vkp_status_t vkp_vk_allocator_alloc(vkp_vk_allocator_t *allocator,
                                    const VkMemoryRequirements *requirements,
                                    vkp_vk_memory_usage_t usage,
                                    vkp_vk_allocation_t *out_allocation) {
  VKP__ALLOCATOR_SCOPE(&allocator->host);
  memset(out_allocation, 0, sizeof *out_allocation);
  int32_t type = vkp_vk_memory_choose_type(
      &allocator->props, requirements->memoryTypeBits, usage);
  if (type < 0)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "no memory type fits %s buffers (allowed types 0x%x)",
                           vkp_vk_memory_usage_name(usage),
                           requirements->memoryTypeBits);
  VkDeviceSize size = requirements->size ? requirements->size : 1;
  if (allocator->max_allocation_size && size > allocator->max_allocation_size)
    return vkp_status_make(
        VKP_STATUS_OUT_OF_RANGE,
        "a %llu-byte buffer exceeds the device's maxMemoryAllocationSize (%llu)",
        (unsigned long long)size,
        (unsigned long long)allocator->max_allocation_size);
  VkDeviceSize alignment = requirements->alignment ? requirements->alignment : 1;
  pthread_mutex_lock(&allocator->mutex);
  vkp__block_t *b = allocator->blocks[type];
  VkDeviceSize offset = 0;
  while (b && !vkp__block_take(b, size, alignment, &offset)) b = b->next;
  vkp_status_t st = NULL;
  if (!b) {
    VkDeviceSize block_size = allocator->block_size;
    if (size > block_size) block_size = size;
    if (allocator->max_allocation_size && block_size > allocator->max_allocation_size)
      block_size = size;
    st = vkp__block_create(allocator, (uint32_t)type, block_size, &b);
    if (st && block_size > size && vkp_status_code(st) == VKP_STATUS_OUT_OF_MEMORY) {
      // No room for a whole shared block: a block of just this buffer's
      // size may still fit (the error, if any, is then about the buffer).
      vkp_status_free(st);
      st = vkp__block_create(allocator, (uint32_t)type, size, &b);
    }
    if (!st) {
      b->next = allocator->blocks[type];
      allocator->blocks[type] = b;
      bool ok = vkp__block_take(b, size, alignment, &offset);
      assert(ok);
      (void)ok;
    }
  }
  pthread_mutex_unlock(&allocator->mutex);
  if (st) return st;
  out_allocation->memory = b->memory;
  out_allocation->offset = offset;
  out_allocation->size = size;
  out_allocation->host = b->mapped ? (char *)b->mapped + offset : NULL;
  out_allocation->block = b;
  return NULL;
}

void vkp_vk_allocator_free(vkp_vk_allocator_t *allocator,
                           vkp_vk_allocation_t *allocation) {
  VKP__ALLOCATOR_SCOPE(&allocator->host);
  vkp__block_t *b = allocation->block;
  if (!b) return;
  pthread_mutex_lock(&allocator->mutex);
  (void)vkp__block_give(b, allocation->offset, allocation->size);
  if (vkp__block_is_empty(b)) {
    vkp__block_t **link = &allocator->blocks[b->type];
    while (*link != b) link = &(*link)->next;
    *link = b->next;
    vkp__block_release(allocator, b);
  }
  pthread_mutex_unlock(&allocator->mutex);
  memset(allocation, 0, sizeof *allocation);
}

// ---------------------------------------------------------------------------

vkp_status_t vkp_vk_buffer_init(vkp_vk_buffer_t *buffer,
                                vkp_vk_device_t *device, VkDeviceSize size,
                                vkp_vk_memory_usage_t usage) {
  memset(buffer, 0, sizeof *buffer);
  VkBufferCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size ? size : 4,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  VkBuffer vb = VK_NULL_HANDLE;
  VKP_VK_RETURN_IF_ERROR(
      vkCreateBuffer(device->device, &info, /*pAllocator=*/NULL, &vb));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device->device, vb, &req);
  vkp_vk_allocation_t alloc;
  vkp_status_t st = vkp_vk_allocator_alloc(device->allocator, &req, usage, &alloc);
  if (!st)
    st = VKP_VK_STATUS(
        vkBindBufferMemory(device->device, vb, alloc.memory, alloc.offset));
  if (st) {
    vkp_vk_allocator_free(device->allocator, &alloc);
    vkDestroyBuffer(device->device, vb, /*pAllocator=*/NULL);
    return vkp_status_annotate(st, "creating a %llu-byte %s buffer",
                               (unsigned long long)size,
                               vkp_vk_memory_usage_name(usage));
  }
  buffer->buffer = vb;
  buffer->size = info.size;
  buffer->allocation = alloc;
  return NULL;
}

void vkp_vk_buffer_deinit(vkp_vk_buffer_t *buffer, vkp_vk_device_t *device) {
  if (!buffer) return;
  if (buffer->buffer)
    vkDestroyBuffer(device->device, buffer->buffer, /*pAllocator=*/NULL);
  vkp_vk_allocator_free(device->allocator, &buffer->allocation);
  memset(buffer, 0, sizeof *buffer);
}
