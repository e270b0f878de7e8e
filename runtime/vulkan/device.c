// SPDX-License-Identifier: Apache-2.0
#include "runtime/vulkan/device.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/sanitizer.h"
#include "base/status_macros.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/vk_result.h"

static const char vkp__validation_layer[] = "VK_LAYER_KHRONOS_validation";

// ---------------------------------------------------------------------------
// Validation messages

static atomic_uint_fast64_t vkp__validation_messages;

uint64_t vkp_vk_validation_message_count(void) {
  return atomic_load(&vkp__validation_messages);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL vkp__debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity,
    VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  const char *id = data && data->pMessageIdName ? data->pMessageIdName : "";
  // Debian 12's layer (1.3.239) reports this when one thread signals a
  // timeline semaphore from the host while another waits on it from the host;
  // its own text calls it "most likely a validation bug" (see DESIGN.md). Any
  // other message counts.
  if (strcmp(id, "UNASSIGNED-VkSemaphore-state-timeout") == 0) return VK_FALSE;
  atomic_fetch_add(&vkp__validation_messages, 1);
  fprintf(stderr, "vkpipe: Vulkan validation %s: %s\n",
          severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error"
                                                                     : "warning",
          data && data->pMessage ? data->pMessage : id);
  return VK_FALSE;  // never abort the call (VUID-PFN_vkDebugUtilsMessengerCallbackEXT)
}

// ---------------------------------------------------------------------------
// Device choice

int32_t vkp_vk_device_type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

const char *vkp_vk_device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Why candidate `c` cannot be used, or NULL when it can.
static const char *vkp__candidate_problem(const vkp_vk_device_candidate_t *c) {
  if (c->api_version < VK_API_VERSION_1_2) return "it supports only Vulkan 1.0/1.1 (1.2 is required)";
  if (!c->timeline_semaphore) return "it lacks the timelineSemaphore feature";
  if (!c->has_compute_queue) return "it has no compute queue";
  return NULL;
}

static bool vkp__contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; ++hay) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n) return true;
  }
  return n == 0;
}

vkp_status_t vkp_vk_device_pick(const vkp_vk_device_candidate_t *candidates,
                                int32_t n, const char *selector,
                                int32_t *out_index) {
  *out_index = -1;
  if (n <= 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "the Vulkan driver reports no physical device");
  if (selector && selector[0]) {
    bool digits = true;
    for (const char *p = selector; *p; ++p)
      digits = digits && isdigit((unsigned char)*p);
    int32_t chosen = -1;
    if (digits) {
      long idx = strtol(selector, NULL, 10);
      if (idx >= n || strlen(selector) > 6)
        return vkp_status_make(VKP_STATUS_NOT_FOUND,
                               "VKPIPE_DEVICE=%s: there are only %d Vulkan "
                               "device(s) (indices 0..%d)",
                               selector, (int)n, (int)n - 1);
      chosen = (int32_t)idx;
    } else {
      for (int32_t i = 0; i < n && chosen < 0; ++i)
        if (vkp__contains_nocase(candidates[i].name, selector)) chosen = i;
      if (chosen < 0)
        return vkp_status_make(VKP_STATUS_NOT_FOUND,
                               "VKPIPE_DEVICE=%s matches no Vulkan device name "
                               "(see 'vkpipe devices')",
                               selector);
    }
    const char *why = vkp__candidate_problem(&candidates[chosen]);
    if (why)
      return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                             "VKPIPE_DEVICE=%s selects device %d '%s', but %s",
                             selector, (int)chosen, candidates[chosen].name, why);
    *out_index = chosen;
    return NULL;
  }
  int32_t best = -1;
  for (int32_t i = 0; i < n; ++i) {
    if (vkp__candidate_problem(&candidates[i])) continue;
    if (best < 0 || vkp_vk_device_type_rank(candidates[i].type) <
                        vkp_vk_device_type_rank(candidates[best].type))
      best = i;
  }
  if (best < 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "no Vulkan device is usable: device 0 '%s': %s%s",
                           candidates[0].name, vkp__candidate_problem(&candidates[0]),
                           n > 1 ? " (and likewise for the others)" : "");
  *out_index = best;
  return NULL;
}

// ---------------------------------------------------------------------------
// Instance

static bool vkp__env_flag(const char *name) {
  const char *v = getenv(name);
  return v && v[0] && strcmp(v, "0") != 0;
}

// Sets *out_found to whether instance layer `layer` is installed.
static vkp_status_t vkp__layer_present(const char *layer, bool *out_found) {
  *out_found = false;
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0) return NULL;
  VkLayerProperties *props = vkp__calloc(n, sizeof *props);
  if (!props) return VKP_OOM("Vulkan layer list");
  if (vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !*out_found; ++i)
      *out_found = strcmp(props[i].layerName, layer) == 0;
  vkp__free(props);
  return NULL;
}

static void vkp__messenger_info(VkDebugUtilsMessengerCreateInfoEXT *info) {
  *info = (VkDebugUtilsMessengerCreateInfoEXT){
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = vkp__debug_callback,
  };
}

static vkp_status_t vkp__instance_create(bool validation, VkInstance *out_instance,
                                         VkDebugUtilsMessengerEXT *out_messenger) {
  *out_instance = VK_NULL_HANDLE;
  *out_messenger = VK_NULL_HANDLE;
  uint32_t version = VK_API_VERSION_1_0;
  VkResult vr = vkEnumerateInstanceVersion(&version);
  if (vr != VK_SUCCESS || version < VK_API_VERSION_1_2)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "the Vulkan loader supports only %u.%u (1.2 is required)",
                           VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
  bool layer_found = false;
  if (validation) VKP_RETURN_IF_ERROR(vkp__layer_present(vkp__validation_layer, &layer_found));
  if (validation && !layer_found)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "VKPIPE_VALIDATION is set but %s is not installed "
                           "(Debian: vulkan-validationlayers)",
                           vkp__validation_layer);
  VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "vkpipe",
      .pEngineName = "vkpipe",
      .apiVersion = VK_API_VERSION_1_2,
  };
  static const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
  };
  VkDebugUtilsMessengerCreateInfoEXT messenger_info;
  vkp__messenger_info(&messenger_info);
  VkValidationFeaturesEXT features = {
      .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
      .pNext = &messenger_info,  // also reports instance creation itself
      .enabledValidationFeatureCount = 1,
      .pEnabledValidationFeatures = enables,
  };
  const char *layers[] = {vkp__validation_layer};
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                              VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkInstanceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = validation ? &features : NULL,
      .pApplicationInfo = &app,
      .enabledLayerCount = validation ? 1 : 0,
      .ppEnabledLayerNames = layers,
      .enabledExtensionCount = validation ? 2 : 0,
      .ppEnabledExtensionNames = extensions,
  };
  vr = vkCreateInstance(&info, /*pAllocator=*/NULL, out_instance);
  if (vr == VK_ERROR_INCOMPATIBLE_DRIVER || vr == VK_ERROR_INITIALIZATION_FAILED) {
    *out_instance = VK_NULL_HANDLE;
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "no Vulkan driver found (vkCreateInstance: %s); "
                           "install one (Debian: mesa-vulkan-drivers) or check "
                           "VK_ICD_FILENAMES",
                           vkp_vk_result_name(vr));
  }
  if (vr != VK_SUCCESS) {
    *out_instance = VK_NULL_HANDLE;
    return vkp_vk_result_status(vr, "vkCreateInstance", __FILE__, __LINE__);
  }
  // The loader unloads the driver with the last instance (base/sanitizer.h).
  vkp__keep_libraries_mapped();
  if (validation) {
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            *out_instance, "vkCreateDebugUtilsMessengerEXT");
    vkp_status_t st =
        create_messenger
            ? VKP_VK_STATUS(create_messenger(*out_instance, &messenger_info,
                                             /*pAllocator=*/NULL, out_messenger))
            : vkp_status_make(VKP_STATUS_UNAVAILABLE,
                              "vkCreateDebugUtilsMessengerEXT is missing");
    if (st) {
      vkDestroyInstance(*out_instance, /*pAllocator=*/NULL);
      *out_instance = VK_NULL_HANDLE;
      return st;
    }
  }
  return NULL;
}

static void vkp__instance_destroy(VkInstance instance,
                                  VkDebugUtilsMessengerEXT messenger) {
  if (!instance) return;
  if (messenger) {
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
            instance, "vkDestroyDebugUtilsMessengerEXT");
    if (destroy_messenger) destroy_messenger(instance, messenger, /*pAllocator=*/NULL);
  }
  vkDestroyInstance(instance, /*pAllocator=*/NULL);
}

// Address space that must be free, under a `ulimit -v`, before vkCreateDevice.
// lavapipe does not check every allocation and thread it makes while creating
// a device: on Mesa 22.3 with 2 CPUs, vkCreateDevice grows the address space
// by up to 510 MiB and crashes (SIGSEGV, or LLVM's "out of memory" abort) at
// scattered limits anywhere below that, not only at the smallest ones. Its
// need grows with the worker threads it starts (LP_NUM_THREADS, else one per
// CPU): 214 MiB with none, about 1.27 GiB with 16. The bound below covers
// those measurements; other drivers get the plain 256 MiB.
static size_t vkp__device_headroom_mib(const VkPhysicalDeviceDriverProperties *driver) {
  if (driver->driverID != VK_DRIVER_ID_MESA_LLVMPIPE) return 256;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  const char *env = getenv("LP_NUM_THREADS");
  if (env && *env) threads = strtol(env, NULL, 10);
  if (threads < 0) threads = 0;
  if (threads > 32) threads = 32;  // llvmpipe's own cap
  return 320 + 96 * (size_t)threads;
}

// Sets *out_found to whether `phys` lists device extension `name`.
static vkp_status_t vkp__has_device_extension(VkPhysicalDevice phys, const char *name,
                                              bool *out_found) {
  *out_found = false;
  uint32_t n = 0;
  VKP_VK_RETURN_IF_ERROR(
      vkEnumerateDeviceExtensionProperties(phys, /*pLayerName=*/NULL, &n, NULL));
  if (n == 0) return NULL;
  VkExtensionProperties *props = vkp__calloc(n, sizeof *props);
  if (!props) return VKP_OOM("Vulkan device extension list");
  VkResult vr = vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props);
  if (vr == VK_SUCCESS || vr == VK_INCOMPLETE)
    for (uint32_t i = 0; i < n && !*out_found; ++i)
      *out_found = strcmp(props[i].extensionName, name) == 0;
  vkp__free(props);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
    return vkp_vk_result_status(vr, "vkEnumerateDeviceExtensionProperties", __FILE__,
                                __LINE__);
  return NULL;
}

// ---------------------------------------------------------------------------
// Robust buffer access

vkp_status_t vkp_vk_robustness_choose(const vkp_vk_device_candidate_t *c,
                                      const char *setting,
                                      vkp_vk_robustness_t *out_level) {
  vkp_vk_robustness_t cap = VKP_VK_ROBUSTNESS_BINDING;
  if (setting && setting[0]) {
    if (strcmp(setting, "0") == 0) cap = VKP_VK_ROBUSTNESS_NONE;
    else if (strcmp(setting, "1") == 0) cap = VKP_VK_ROBUSTNESS_BUFFER;
    else if (strcmp(setting, "2") == 0) cap = VKP_VK_ROBUSTNESS_BINDING;
    else {
      *out_level = VKP_VK_ROBUSTNESS_NONE;
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "VKPIPE_VK_ROBUSTNESS=%s: expected 0 (no bounds checks), "
                             "1 (robustBufferAccess) or 2 (robustBufferAccess2 as well, "
                             "the default)",
                             setting);
    }
  }
  // robustBufferAccess2 requires robustBufferAccess
  // (VUID-VkPhysicalDeviceRobustness2FeaturesEXT-robustBufferAccess2-04000).
  vkp_vk_robustness_t have = !c->robust_buffer_access ? VKP_VK_ROBUSTNESS_NONE
                             : c->robust_buffer_access2 ? VKP_VK_ROBUSTNESS_BINDING
                                                        : VKP_VK_ROBUSTNESS_BUFFER;
  *out_level = have < cap ? have : cap;
  return NULL;
}

const char *vkp_vk_robustness_describe(const vkp_vk_device_candidate_t *c,
                                       vkp_vk_robustness_t level, char *buf,
                                       size_t buf_size) {
  switch (level) {
    case VKP_VK_ROBUSTNESS_BINDING:
      snprintf(buf, buf_size, "robustBufferAccess2 (out-of-range shader reads give 0, "
                              "writes are dropped, per binding)");
      break;
    case VKP_VK_ROBUSTNESS_BUFFER:
      snprintf(buf, buf_size, "robustBufferAccess (out-of-range shader accesses stay "
                              "inside the bound VkBuffer)%s",
               c->robust_buffer_access2 ? "" : "; robustBufferAccess2 not supported");
      break;
    default:
      if (c->robust_buffer_access)
        snprintf(buf, buf_size, "off (VKPIPE_VK_ROBUSTNESS=0): shader buffer accesses "
                                "are not bounds-checked");
      else
        snprintf(buf, buf_size, "'%s' lacks robustBufferAccess: an out-of-range buffer "
                                "access by a shader is not bounds-checked",
                 c->name);
      break;
  }
  return buf;
}

// Fills everything `report` holds about `phys`; `queue_family` gets the
// compute queue family (one without graphics preferred), or UINT32_MAX.
// Does `phys` run the codegen's coopmat kernels (the candidate's
// coopmat_f16)? Queried only where the extension is listed.
// glslang declares the Vulkan memory model in every shader that uses
// cooperative matrices, so vulkanMemoryModel is needed as well (the H200
// run without it: VUID-VkShaderModuleCreateInfo-pCode-01091).
static vkp_status_t vkp__coopmat_f16(VkInstance instance, VkPhysicalDevice phys,
                                     uint32_t subgroup_size, bool float16,
                                     bool memory_model, bool *out) {
  *out = false;
  bool listed = false;
  VKP_RETURN_IF_ERROR(
      vkp__has_device_extension(phys, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME, &listed));
  if (!listed || !float16 || !memory_model || subgroup_size != 32) return NULL;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV feat = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
  };
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                  .pNext = &feat};
  vkGetPhysicalDeviceFeatures2(phys, &f2);
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV props_fn =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
          instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  if (!feat.cooperativeMatrix || !props_fn) return NULL;
  uint32_t n = 0;
  VKP_VK_RETURN_IF_ERROR(props_fn(phys, &n, NULL));
  if (n == 0) return NULL;
  VkCooperativeMatrixPropertiesNV *p = vkp__calloc(n, sizeof *p);
  if (!p) return VKP_OOM("cooperative matrix properties");
  for (uint32_t i = 0; i < n; ++i) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  VkResult vr = props_fn(phys, &n, p);
  for (uint32_t i = 0; (vr == VK_SUCCESS || vr == VK_INCOMPLETE) && i < n && !*out; ++i)
    *out = p[i].MSize == 16 && p[i].NSize == 16 && p[i].KSize == 16 &&
           p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
           p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
           p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
           p[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].scope == VK_SCOPE_SUBGROUP_NV;
  vkp__free(p);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
    return vkp_vk_result_status(vr, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
                                __FILE__, __LINE__);
  return NULL;
}

bool vkp_vk_subgroup_arith(const VkPhysicalDeviceSubgroupProperties *p) {
  const VkSubgroupFeatureFlags need = VK_SUBGROUP_FEATURE_BASIC_BIT |
                                      VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  return (p->supportedOperations & need) == need &&
         (p->supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
}

bool vkp_vk_coopmat_describe(const vkp_vk_device_candidate_t *c, uint32_t vendor_id,
                             char *buf, size_t buf_size) {
  const char *coopmat = getenv("VKPIPE_VK_COOPMAT");
  bool off = coopmat && strcmp(coopmat, "0") == 0;
  bool allowed = vendor_id == 0x10de;  // NVIDIA: where the kernels were tested
  if (buf && buf_size)
    snprintf(buf, buf_size, "%s",
             !c->coopmat_f16 ? "no (16x16x16 float16 -> float32 per subgroup of 32 not offered)"
             : !allowed      ? "offered, not used (vendor not on the allowlist)"
             : off           ? "offered, off (VKPIPE_VK_COOPMAT=0)"
                             : "16x16x16 float16 -> float32 (VK_NV_cooperative_matrix), "
                               "enabled; kernels use them with VKPIPE_SPIRV_GEMM=coopmat");
  return c->coopmat_f16 && allowed && !off;
}

static vkp_status_t vkp__describe(VkInstance instance, VkPhysicalDevice phys,
                                  vkp_vk_device_report_t *report, uint32_t *queue_family) {
  memset(report, 0, sizeof *report);
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(phys, &base);
  report->properties = base;
  report->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  report->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  vkp_vk_device_candidate_t *c = &report->candidate;
  snprintf(c->name, sizeof c->name, "%s", base.deviceName);
  c->type = base.deviceType;
  c->api_version = base.apiVersion;
  if (base.apiVersion >= VK_API_VERSION_1_2) {
    // Chained structs are only valid on a 1.2 device.
    report->subgroup.pNext = &report->driver;
    VkPhysicalDeviceProperties2 props2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &report->subgroup,
    };
    vkGetPhysicalDeviceProperties2(phys, &props2);
    report->subgroup.pNext = NULL;
    report->driver.pNext = NULL;
    // VkPhysicalDeviceRobustness2FeaturesEXT is chained only when the
    // device lists the extension (VUID-VkPhysicalDeviceFeatures2-pNext-pNext).
    VkPhysicalDeviceRobustness2FeaturesEXT robust2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT,
    };
    bool has_robust2 = false;
    VKP_RETURN_IF_ERROR(
        vkp__has_device_extension(phys, VK_EXT_ROBUSTNESS_2_EXTENSION_NAME, &has_robust2));
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = has_robust2 ? &robust2 : NULL,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &f11,
    };
    VkPhysicalDeviceFeatures2 f2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f12,
    };
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    c->robust_buffer_access = f2.features.robustBufferAccess == VK_TRUE;
    c->robust_buffer_access2 = robust2.robustBufferAccess2 == VK_TRUE;
    c->timeline_semaphore = f12.timelineSemaphore == VK_TRUE;
    c->storage_8bit = f12.storageBuffer8BitAccess == VK_TRUE;
    c->shader_int64 = f2.features.shaderInt64 == VK_TRUE;
    c->storage_16bit = f11.storageBuffer16BitAccess == VK_TRUE;
    c->shader_float16 = f12.shaderFloat16 == VK_TRUE;
    c->shader_float64 = f2.features.shaderFloat64 == VK_TRUE;
    VKP_RETURN_IF_ERROR(vkp__coopmat_f16(instance, phys, report->subgroup.subgroupSize,
                                         c->shader_float16, f12.vulkanMemoryModel == VK_TRUE,
                                         &c->coopmat_f16));
  }
  vkGetPhysicalDeviceMemoryProperties(phys, &report->memory);
  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
  VkQueueFamilyProperties qf[16];
  if (nq > 16) nq = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
  uint32_t chosen = UINT32_MAX;
  for (uint32_t i = 0; i < nq; ++i) {
    if (!(qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || qf[i].queueCount == 0) continue;
    bool compute_only = !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (chosen == UINT32_MAX || (compute_only && (qf[chosen].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
      chosen = i;
  }
  c->has_compute_queue = chosen != UINT32_MAX;
  if (queue_family) *queue_family = chosen;
  return NULL;
}

static vkp_status_t vkp__enumerate(VkInstance instance, VkPhysicalDevice **out_phys,
                                   uint32_t *out_n) {
  *out_phys = NULL;
  *out_n = 0;
  uint32_t n = 0;
  VKP_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance, &n, NULL));
  if (n == 0)
    return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                           "the Vulkan driver reports no physical device");
  VkPhysicalDevice *phys = vkp__calloc(n, sizeof *phys);
  if (!phys) return VKP_OOM("Vulkan physical device list");
  VkResult vr = vkEnumeratePhysicalDevices(instance, &n, phys);
  if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) {
    vkp__free(phys);
    return vkp_vk_result_status(vr, "vkEnumeratePhysicalDevices", __FILE__, __LINE__);
  }
  *out_phys = phys;
  *out_n = n;
  return NULL;
}

vkp_status_t vkp_vk_device_list(vkp_vk_device_report_t **out_reports,
                                int32_t *out_count, int32_t *out_chosen) {
  *out_reports = NULL;
  *out_count = 0;
  *out_chosen = -1;
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VKP_RETURN_IF_ERROR(vkp__instance_create(/*validation=*/false, &instance, &messenger));
  VkPhysicalDevice *phys = NULL;
  uint32_t n = 0;
  vkp_status_t st = vkp__enumerate(instance, &phys, &n);
  vkp_vk_device_report_t *reports = NULL;
  vkp_vk_device_candidate_t *cands = NULL;
  if (!st) {
    reports = vkp__calloc(n, sizeof *reports);
    cands = vkp__calloc(n, sizeof *cands);
    if (!reports || !cands) st = VKP_OOM("Vulkan device list");
  }
  for (uint32_t i = 0; !st && i < n; ++i) {
    st = vkp__describe(instance, phys[i], &reports[i], NULL);
    cands[i] = reports[i].candidate;
  }
  if (!st) {
    int32_t chosen = -1;
    vkp_status_free(vkp_vk_device_pick(cands, (int32_t)n, getenv("VKPIPE_DEVICE"), &chosen));
    *out_chosen = chosen;
    *out_reports = reports;
    *out_count = (int32_t)n;
    reports = NULL;
  }
  vkp__free(reports);
  vkp__free(cands);
  vkp__free(phys);
  vkp__instance_destroy(instance, messenger);
  return st;
}

// ---------------------------------------------------------------------------
// Pipeline cache on disk: $XDG_CACHE_HOME/vkpipe or ~/.cache/vkpipe, one file
// per driver build (vendor, device, pipelineCacheUUID).

static char *vkp__cache_dir(void) {
  const char *xdg = getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return vkp__asprintf("%s/vkpipe", xdg);
  const char *home = getenv("HOME");
  if (home && home[0] == '/') return vkp__asprintf("%s/.cache/vkpipe", home);
  return NULL;
}

// Reads the cache file when its header matches this device (a stale or
// foreign file is ignored: VkPipelineCacheHeaderVersionOne layout).
static void *vkp__cache_read(const char *path, const VkPhysicalDeviceProperties *p,
                             size_t *out_size) {
  *out_size = 0;
  void *data = NULL;
  size_t size = 0;
  // Absent, unreadable or oversized: start with an empty cache.
  vkp_status_t st = vkp__file_read(path, (size_t)1 << 30, "a pipeline cache", &data, &size);
  if (st || size < 32) {
    vkp_status_free(st);
    vkp__free(data);
    return NULL;
  }
  const unsigned char *b = data;
  uint32_t header_len, version, vendor, device;
  memcpy(&header_len, b, 4);
  memcpy(&version, b + 4, 4);
  memcpy(&vendor, b + 8, 4);
  memcpy(&device, b + 12, 4);
  if (header_len < 32 || version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE ||
      vendor != p->vendorID || device != p->deviceID ||
      memcmp(b + 16, p->pipelineCacheUUID, VK_UUID_SIZE) != 0) {
    vkp__free(data);
    return NULL;
  }
  *out_size = (size_t)size;
  return data;
}

static void vkp__pipeline_cache_create(vkp_vk_device_t *d) {
  char *dir = vkp__cache_dir();
  if (dir) {
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; ++i)
      snprintf(uuid + 2 * i, 3, "%02x", d->properties.pipelineCacheUUID[i]);
    d->pipeline_cache_path = vkp__asprintf("%s/pipelines-%04x-%04x-%s.bin", dir,
                                           d->properties.vendorID,
                                           d->properties.deviceID, uuid);
    vkp__free(dir);
  }
  size_t size = 0;
  void *data = d->pipeline_cache_path
                   ? vkp__cache_read(d->pipeline_cache_path, &d->properties, &size)
                   : NULL;
  VkPipelineCacheCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
      .initialDataSize = size,
      .pInitialData = data,
  };
  if (vkCreatePipelineCache(d->device, &info, /*pAllocator=*/NULL,
                            &d->pipeline_cache) != VK_SUCCESS) {
    // A cache the driver refuses is not an error: start empty.
    info.initialDataSize = 0;
    info.pInitialData = NULL;
    if (vkCreatePipelineCache(d->device, &info, NULL, &d->pipeline_cache) != VK_SUCCESS)
      d->pipeline_cache = VK_NULL_HANDLE;
  }
  vkp__free(data);
}

void vkp_vk_device_save_pipeline_cache(vkp_vk_device_t *device) {
  if (!device || !device->pipeline_cache || !device->pipeline_cache_path) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, NULL) !=
          VK_SUCCESS ||
      size == 0)
    return;
  void *data = vkp__malloc(size);
  if (!data) return;
  char *tmp = vkp__asprintf("%s.%ld.tmp", device->pipeline_cache_path, (long)getpid());
  if (tmp &&
      vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, data) ==
          VK_SUCCESS) {
    vkp_status_free(vkp__dir_create_parent(device->pipeline_cache_path, 0755));
    // Write then rename, so a concurrent reader never sees half a file.
    FILE *f = fopen(tmp, "wb");
    if (f) {
      bool ok = fwrite(data, 1, size, f) == size;
      ok = fclose(f) == 0 && ok;
      if (!ok || rename(tmp, device->pipeline_cache_path) != 0) (void)remove(tmp);
    }
  }
  vkp__free(tmp);
  vkp__free(data);
}

// ---------------------------------------------------------------------------
// Device

// What a failed bring-up says: a driver reports a failed allocation as
// whatever call it happened in, so when memory is short the error says that;
// under an address-space limit the limit is named.
static vkp_status_t vkp__bringup_failure(vkp_status_t st) {
  if (vkp_status_code(st) != VKP_STATUS_OUT_OF_MEMORY && vkp__memory_is_short(VKP__MEMORY_PROBE_MIB)) {
    // Drivers report a failed allocation during bring-up as whatever call
    // it happened in (lavapipe: VK_ERROR_INITIALIZATION_FAILED).
    vkp_status_t oom = vkp_status_make(
        VKP_STATUS_OUT_OF_MEMORY,
        "out of memory bringing up Vulkan (a %d MiB allocation fails too; "
        "the driver said: %s)",
        VKP__MEMORY_PROBE_MIB, vkp_status_message(st));
    vkp_status_free(st);
    return oom;
  }
  size_t limit = vkp__memory_limit();
  if (limit && vkp_status_code(st) != VKP_STATUS_OUT_OF_MEMORY)
    return vkp_status_annotate(st, "bringing up Vulkan under an address-space limit "
                                   "of %zu MiB (ulimit -v), which the driver may "
                                   "have run into",
                               limit >> 20);
  return vkp_status_annotate(st, "bringing up Vulkan");
}

vkp_status_t vkp_vk_device_open(const vkp_vk_device_options_t *options,
                                vkp_vk_device_t **out_device) {
  *out_device = NULL;
  vkp_vk_device_options_t defaults = {.validation = -1};
  if (!options) options = &defaults;
  bool validation = options->validation < 0 ? vkp__env_flag("VKPIPE_VALIDATION")
                                            : options->validation != 0;
  const char *selector = options->selector ? options->selector : getenv("VKPIPE_DEVICE");

  vkp_vk_device_t *d = vkp__calloc(1, sizeof *d);
  if (!d) return VKP_OOM("Vulkan device");
  if (pthread_mutex_init(&d->queue_mutex, NULL) != 0) {
    vkp__free(d);
    return vkp_status_make(VKP_STATUS_INTERNAL, "pthread_mutex_init failed");
  }
  d->validation = validation;
  vkp_status_t st = vkp__instance_create(validation, &d->instance, &d->messenger);
  VkPhysicalDevice *phys = NULL;
  uint32_t n = 0;
  vkp_vk_device_report_t *reports = NULL;
  vkp_vk_device_candidate_t *cands = NULL;
  uint32_t *families = NULL;
  if (!st) st = vkp__enumerate(d->instance, &phys, &n);
  if (!st) {
    reports = vkp__calloc(n, sizeof *reports);
    cands = vkp__calloc(n, sizeof *cands);
    families = vkp__calloc(n, sizeof *families);
    if (!reports || !cands || !families) st = VKP_OOM("Vulkan device list");
  }
  for (uint32_t i = 0; !st && i < n; ++i) {
    st = vkp__describe(d->instance, phys[i], &reports[i], &families[i]);
    cands[i] = reports[i].candidate;
  }
  int32_t chosen = -1;
  if (!st) st = vkp_vk_device_pick(cands, (int32_t)n, selector, &chosen);
  if (!st) {
    d->physical = phys[chosen];
    d->properties = reports[chosen].properties;
    d->driver = reports[chosen].driver;
    d->subgroup = reports[chosen].subgroup;
    d->memory = reports[chosen].memory;
    d->queue_family = families[chosen];
    // VKPIPE_VK_FORCE_COPIES=1 (a test knob, like force_copies) takes the
    // discrete-GPU path on unified memory: lavapipe then checks the staging
    // copies a real GPU records.
    d->unified_memory = vkp_vk_memory_is_unified(&d->memory) && !options->force_copies &&
                        !vkp__env_flag("VKPIPE_VK_FORCE_COPIES");
    d->storage_8bit = reports[chosen].candidate.storage_8bit;
    d->shader_int64 = reports[chosen].candidate.shader_int64;
    d->storage_16bit = reports[chosen].candidate.storage_16bit;
    d->shader_float16 = reports[chosen].candidate.shader_float16;
    d->shader_float64 = reports[chosen].candidate.shader_float64;
    d->coopmat_f16 = vkp_vk_coopmat_describe(&reports[chosen].candidate,
                                             d->properties.vendorID, NULL, 0);
    st = vkp_vk_robustness_choose(&reports[chosen].candidate,
                                  getenv("VKPIPE_VK_ROBUSTNESS"), &d->robustness);
    if (!st && !reports[chosen].candidate.robust_buffer_access) {
      // Not an error: vkpipe's own kernels stay in range; say it once.
      static atomic_bool told;
      char line[256];
      if (!atomic_exchange(&told, true))
        fprintf(stderr, "vkpipe: %s\n",
                vkp_vk_robustness_describe(&reports[chosen].candidate, d->robustness,
                                           line, sizeof line));
    }
  }
  vkp__free(reports);
  vkp__free(cands);
  vkp__free(families);
  vkp__free(phys);

  if (st) {
    vkp_vk_device_destroy(d);
    return vkp__bringup_failure(st);
  }
  *out_device = d;
  return NULL;
}

bool vkp_vk_device_has_room(const vkp_vk_device_t *d, vkp_status_t *out_why) {
  *out_why = NULL;
  // lavapipe ends the process when an allocation fails inside
  // vkCreateDevice; under an address-space limit, make sure there is room
  // first and otherwise say so instead.
  size_t limit = vkp__memory_limit();
  size_t headroom = vkp__device_headroom_mib(&d->driver);
  if (!limit || !vkp__memory_is_short(headroom)) return true;
  *out_why = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                             "out of memory: less than %zu MiB of address space is left "
                             "under this process's limit of %zu MiB (ulimit -v), too "
                             "little to create a device on '%s' safely (the driver may end "
                             "the process when it runs out inside vkCreateDevice)",
                             headroom, limit >> 20, d->properties.deviceName);
  return false;
}

vkp_status_t vkp_vk_device_realize(vkp_vk_device_t *d) {
  if (d->device) return NULL;
  vkp_status_t st = NULL;
  if (!st) {
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    // robustBufferAccess2 tightens the bounds from the VkBuffer to the
    // binding: vkpipe binds views of shared buffers (scratch intermediates,
    // staging slots holding several tensors), so only it keeps a stray
    // write off the neighbouring tensors (docs/robustness.md).
    VkPhysicalDeviceRobustness2FeaturesEXT robust2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT,
        .robustBufferAccess2 = VK_TRUE,
    };
    bool binding = d->robustness == VKP_VK_ROBUSTNESS_BINDING;
    const char *extensions[2];
    uint32_t n_extensions = 0;
    if (binding) extensions[n_extensions++] = VK_EXT_ROBUSTNESS_2_EXTENSION_NAME;
    if (d->coopmat_f16) extensions[n_extensions++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
        .pNext = binding ? &robust2 : NULL,
        .cooperativeMatrix = VK_TRUE,
    };
    VkPhysicalDeviceVulkan11Features f11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .pNext = d->coopmat_f16 ? (void *)&coopmat : binding ? (void *)&robust2 : NULL,
        .storageBuffer16BitAccess = d->storage_16bit ? VK_TRUE : VK_FALSE,
    };
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .pNext = &f11,
        .timelineSemaphore = VK_TRUE,
        .storageBuffer8BitAccess = d->storage_8bit ? VK_TRUE : VK_FALSE,
        .shaderFloat16 = d->coopmat_f16 ? VK_TRUE : VK_FALSE,
        .vulkanMemoryModel = d->coopmat_f16 ? VK_TRUE : VK_FALSE,
    };
    VkPhysicalDeviceFeatures features = {
        .robustBufferAccess = d->robustness >= VKP_VK_ROBUSTNESS_BUFFER ? VK_TRUE : VK_FALSE,
        .shaderInt64 = d->shader_int64 ? VK_TRUE : VK_FALSE,
        .shaderFloat64 = d->shader_float64 ? VK_TRUE : VK_FALSE,
    };
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f12,
        .pEnabledFeatures = &features,
        .enabledExtensionCount = n_extensions,
        .ppEnabledExtensionNames = extensions,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue_info,
    };
    vkp_vk_device_has_room(d, &st);
    if (!st)
      st = VKP_VK_STATUS(vkCreateDevice(d->physical, &info, /*pAllocator=*/NULL, &d->device));
    if (st) d->device = VK_NULL_HANDLE;
  }
  if (!st) {
    vkGetDeviceQueue(d->device, d->queue_family, /*queueIndex=*/0, &d->queue);
    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 props2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &m3,
    };
    vkGetPhysicalDeviceProperties2(d->physical, &props2);
    // Blocks of 64 MiB, or an eighth of the smallest heap on tiny devices.
    VkDeviceSize block = (VkDeviceSize)64 << 20;
    for (uint32_t h = 0; h < d->memory.memoryHeapCount; ++h)
      if (d->memory.memoryHeaps[h].size / 8 < block)
        block = d->memory.memoryHeaps[h].size / 8;
    st = vkp_vk_allocator_create(d->device, &d->memory, block,
                                 m3.maxMemoryAllocationSize, &d->allocator);
  }
  if (!st) vkp__pipeline_cache_create(d);
  if (st) {
    // Back to an opened device: nothing of the failed bring-up is kept.
    if (d->pipeline_cache) vkDestroyPipelineCache(d->device, d->pipeline_cache, NULL);
    d->pipeline_cache = VK_NULL_HANDLE;
    vkp_vk_allocator_destroy(d->allocator);
    d->allocator = NULL;
    if (d->device) vkDestroyDevice(d->device, /*pAllocator=*/NULL);
    d->device = VK_NULL_HANDLE;
    d->queue = VK_NULL_HANDLE;
    return vkp__bringup_failure(st);
  }
  return NULL;
}

vkp_status_t vkp_vk_device_create(const vkp_vk_device_options_t *options,
                                  vkp_vk_device_t **out_device) {
  *out_device = NULL;
  vkp_vk_device_t *d = NULL;
  VKP_RETURN_IF_ERROR(vkp_vk_device_open(options, &d));
  vkp_status_t st = vkp_vk_device_realize(d);
  if (st) {
    vkp_vk_device_destroy(d);
    return st;
  }
  *out_device = d;
  return NULL;
}

// A margin for lavapipe's LLVM compiling one stage's pipelines: below it,
// vkpipe says "out of memory" rather than let LLVM abort the process.
#define VKP__COMPILE_HEADROOM_MIB 128

vkp_status_t vkp_vk_device_check_compile_room(const vkp_vk_device_t *device, const char *what) {
  size_t limit = vkp__memory_limit();
  if (!limit || device->driver.driverID != VK_DRIVER_ID_MESA_LLVMPIPE) return NULL;
  if (!vkp__memory_is_short(VKP__COMPILE_HEADROOM_MIB)) return NULL;
  return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                         "out of memory: less than %d MiB of address space is left under "
                         "this process's limit of %zu MiB (ulimit -v) to create %s on '%s' "
                         "(its shader compiler ends the process when it runs out)",
                         VKP__COMPILE_HEADROOM_MIB, limit >> 20, what,
                         device->properties.deviceName);
}

void vkp_vk_device_destroy(vkp_vk_device_t *device) {
  if (!device) return;
  if (device->device) {
    (void)vkDeviceWaitIdle(device->device);
    vkp_vk_device_save_pipeline_cache(device);
    if (device->pipeline_cache)
      vkDestroyPipelineCache(device->device, device->pipeline_cache, /*pAllocator=*/NULL);
    vkp_vk_allocator_destroy(device->allocator);
    vkDestroyDevice(device->device, /*pAllocator=*/NULL);
  }
  vkp__instance_destroy(device->instance, device->messenger);
  vkp__free(device->pipeline_cache_path);
  pthread_mutex_destroy(&device->queue_mutex);
  vkp__free(device);
}

vkp_status_t vkp_vk_queue_submit(vkp_vk_device_t *device, uint32_t n_submits,
                                 const VkSubmitInfo *submits, VkFence fence) {
  pthread_mutex_lock(&device->queue_mutex);
  VkResult vr = vkQueueSubmit(device->queue, n_submits, submits, fence);
  pthread_mutex_unlock(&device->queue_mutex);
  return vkp_vk_result_status(vr, "vkQueueSubmit", __FILE__, __LINE__);
}
