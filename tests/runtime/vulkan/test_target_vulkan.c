// SPDX-License-Identifier: Apache-2.0
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/vulkan/stage.h"
#include "runtime/vulkan/target_vulkan.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

Test(target_vulkan, registered_with_device_entries, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *t = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "vulkan", &t));
  cr_assert_str_eq(t->vtable->name, "vulkan");
  cr_assert_eq(t->vtable->api_version, VKP_TARGET_API_VERSION);
  // Declared: a device target whose limits come from the device.
  cr_assert(vkp_target_is_device(t));
  cr_assert_eq(t->caps.flags & VKP_TARGET_DEVICE_FLAGS, VKP_TARGET_DEVICE_FLAGS);
  cr_assert(t->caps.dtypes & VKP_DTYPE_SET(VKP_DTYPE_FLOAT32));
  // Registered, described, not brought up: the first user does that.
  cr_assert(!vkp_target_vulkan_is_up(t));
  // float16 and float64 as the device's features allow (16-bit storage,
  // shaderFloat64).
  const vkp_vk_device_t *dev = vkp_target_vulkan_device(t);
  cr_assert(vkp_target_vulkan_is_up(t));
  cr_assert_eq(!!(t->caps.dtypes & VKP_DTYPE_SET(VKP_DTYPE_FLOAT16)), dev->storage_16bit);
  cr_assert_eq(!!(t->caps.dtypes & VKP_DTYPE_SET(VKP_DTYPE_FLOAT64)), dev->shader_float64);
  const vkp_target_device_ops_t *v = t->vtable->device;
  cr_assert_not_null(v);
  cr_assert_not_null(dev);
  cr_assert(dev->validation);  // VKPIPE_VALIDATION=1

  // Device entries through the vtable.
  uint64_t sem = 0, value = 7;
  VKP_TEST_OK(v->timeline_create(t, &sem));
  VKP_TEST_OK(v->timeline_signal(t, sem, 3));
  VKP_TEST_OK(v->timeline_wait(t, sem, 3, 0));
  VKP_TEST_OK(vkp_vk_timeline_query(vkp_target_vulkan_device(t),
                                     VKP_VK_FROM_U64(VkSemaphore, sem), &value));
  cr_assert_eq(value, 3);
  vkp_status_t st = v->timeline_wait(t, sem, 4, 1000);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_TIMEOUT);
  vkp_status_free(st);
  v->timeline_destroy(t, sem);
  vkp_staging_t s;
  VKP_TEST_OK(v->staging_alloc(t, 256, &s));
  memset(s.host, 1, 256);
  v->staging_free(t, &s);

  vkp_spirv_device_info_t info;
  vkp_vk_device_info(vkp_target_vulkan_device(t), &info);
  cr_assert_gt(info.subgroup_size, 0);
  cr_assert_gt(info.max_storage_range, 0);
  // No per-tensor byte limit: tensors past maxStorageBufferRange split
  // across bindings, and the codegen's supports() refuses what cannot.
  cr_assert_eq(t->caps.limits.max_tensor_bytes, 0);
  cr_assert_gt(info.max_invocations, 0);
  vkp_registry_destroy(reg);
  cr_assert_eq(vkp_vk_validation_message_count(), 0);
}

// A pipeline whose stages all land elsewhere never brings the device up;
// the first vulkan stage does.
Test(target_vulkan, device_up_only_for_a_stage, .timeout = 120) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *vk = NULL, *cpu = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "vulkan", &vk));
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &cpu));
  vkp_graph_t *g = g_new("relu");
  int64_t shape[2] = {2, 3};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, shape);
  g_node(g, "r", VKP_OP_RELU, "x", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  float xs[6] = {-1.5f, 2.0f, -0.25f, 3.5f, 0.75f, -4.0f};
  vkp_tensor_t x, y;  // y: initialised by each run
  VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 2, shape, xs));
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, NULL, &x, &y));
  vkp_tensor_deinit(&y);
  cr_assert(!vkp_target_vulkan_is_up(vk));
  VKP_TEST_OK(vkp_target_run_graph(vk, g, NULL, &x, &y));
  cr_assert(vkp_target_vulkan_is_up(vk));
  for (int i = 0; i < 6; ++i)
    cr_assert_float_eq(((const float *)y.data)[i], xs[i] > 0 ? xs[i] : 0.0f, 0.0f,
                       "element %d", i);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
  cr_assert_eq(vkp_vk_validation_message_count(), 0);
}

Test(target_vulkan, no_driver_makes_it_unavailable, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
  setenv("VKPIPE_VALIDATION", "0", 1);
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create_default(&reg));  // the rest still works
  cr_assert_null(vkp_registry_find(reg, "vulkan"));
  const char *why = vkp_registry_unavailable_reason(reg, "vulkan");
  cr_assert_not_null(why);
  cr_assert(strstr(why, "no Vulkan driver"), "%s", why);
  const vkp_target_t *t = NULL;
  vkp_status_t st = vkp_registry_lookup(reg, "vulkan", &t);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_UNAVAILABLE);
  cr_assert(strstr(vkp_status_message(st), "no Vulkan driver"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  // Every other built-in target is there.
  for (int32_t i = 0; i < vkp_registry_count(reg); ++i)
    cr_assert_str_neq(vkp_registry_get(reg, i)->vtable->name, "vulkan");
  vkp_registry_destroy(reg);
}

Test(target_vulkan, explicit_options, .timeout = 60) {
  vkp_vk_test_pin_vulkan_libraries();
  vkp_registry_t *reg = NULL;
  VKP_TEST_OK(vkp_registry_create(&reg));
  vkp_vk_device_options_t opts = {.validation = 1, .selector = "no-such-gpu"};
  VKP_TEST_OK(vkp_target_vulkan_add(reg, &opts));
  const char *why = vkp_registry_unavailable_reason(reg, "vulkan");
  cr_assert_not_null(why);
  cr_assert(strstr(why, "no-such-gpu"), "%s", why);
  vkp_registry_destroy(reg);
}
