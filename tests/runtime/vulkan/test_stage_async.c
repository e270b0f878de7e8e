// SPDX-License-Identifier: Apache-2.0
// Staging memory, timeline semaphores and per-slot submits: what the pipeline
// runtime drives.
#include <criterion/criterion.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "runtime/vulkan/stage.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

Test(stage_async, staging_is_host_visible_and_zeroed, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  vkp_staging_t s[3];
  for (int i = 0; i < 3; ++i) {
    VKP_TEST_OK(vkp_vk_staging_alloc(dev, 1000 + 13 * (size_t)i, &s[i]));
    cr_assert_not_null(s[i].host);
    cr_assert_neq(s[i].buffer, 0);
    for (size_t k = 0; k < s[i].size; ++k) cr_assert_eq(((unsigned char *)s[i].host)[k], 0);
    memset(s[i].host, 0xab, s[i].size);
  }
  for (int i = 0; i < 3; ++i) vkp_vk_staging_free(dev, &s[i]);
  cr_assert_null(s[0].host);
  vkp_vk_staging_free(dev, &s[0]);  // twice is fine: zeroed
  vkp_vk_test_device_done(dev);
}

Test(stage_async, timeline_signal_wait_query_timeout, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  VkSemaphore sem;
  VKP_TEST_OK(vkp_vk_timeline_create(dev, 0, &sem));
  uint64_t v = 99;
  VKP_TEST_OK(vkp_vk_timeline_query(dev, sem, &v));
  cr_assert_eq(v, 0);
  vkp_status_t st = vkp_vk_timeline_wait(dev, sem, 1, 1000 * 1000);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_TIMEOUT, "%s", vkp_status_message(st));
  vkp_status_free(st);
  VKP_TEST_OK(vkp_vk_timeline_signal(dev, sem, 5));
  VKP_TEST_OK(vkp_vk_timeline_wait(dev, sem, 3, 0));
  VKP_TEST_OK(vkp_vk_timeline_query(dev, sem, &v));
  cr_assert_eq(v, 5);
  vkp_vk_timeline_destroy(dev, sem);
  vkp_vk_test_device_done(dev);
}

typedef struct {
  vkp_vk_device_t *dev;
  VkSemaphore sem;
  uint64_t value;
} signaller_t;

static void *signal_later(void *arg) {
  signaller_t *s = arg;
  struct timespec ts = {0, 2 * 1000 * 1000};
  nanosleep(&ts, NULL);
  vkp_status_t st = vkp_vk_timeline_signal(s->dev, s->sem, s->value);
  vkp_status_free(st);
  return NULL;
}

// out = x + y on n floats, driven through bind_slots and submit: slot 0 waits
// for a value the host signals after the submit; slot 1 waits for slot 0.
static void run_slots(bool force_copies) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu", (unsigned long long)seed);
  vkp_vk_device_t *dev = vkp_vk_test_device(force_copies);
  const int64_t n = 1 + vkp_test_rng_below(&rng, 2000);
  vkp_graph_t *g = g_new("slots");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, &n);
  g_in(g, "y", VKP_DTYPE_FLOAT32, 1, &n);
  g_node(g, "add", VKP_OP_ADD, "x,y", "out", 0, NULL);
  g_out(g, "out");
  g_validate(g);
  const uint64_t bytes = (uint64_t)n * 4;
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, bytes},
                               {VKP_SPIRV_BUFFER_INPUT, 1, bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, bytes}};
  vkp_spirv_dispatch_t d;
  vkp_vk_test_dispatch(&d, "add", "a[i] + b[i]", (uint32_t)n, 64, 0, 1, 2);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  vkp_vk_test_program_free(&prog);

  enum { SLOTS = 2 };
  vkp_staging_t ins[SLOTS * 2], outs[SLOTS];
  for (int i = 0; i < SLOTS * 2; ++i) VKP_TEST_OK(vkp_vk_staging_alloc(dev, bytes, &ins[i]));
  for (int i = 0; i < SLOTS; ++i) VKP_TEST_OK(vkp_vk_staging_alloc(dev, bytes, &outs[i]));
  // Too small a staging is refused.
  vkp_staging_t small;
  VKP_TEST_OK(vkp_vk_staging_alloc(dev, bytes - 4 > 0 ? bytes - 4 : 1, &small));
  vkp_staging_t bad_ins[2] = {small, ins[1]};
  vkp_status_t st = vkp_vk_stage_bind_slots(stage, 1, bad_ins, outs);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT, "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_vk_staging_free(dev, &small);
  VKP_TEST_OK(vkp_vk_stage_bind_slots(stage, SLOTS, ins, outs));
  for (int i = 0; i < SLOTS * 2; ++i)
    for (int64_t k = 0; k < n; ++k)
      ((float *)ins[i].host)[k] = vkp_test_rng_uniform(&rng, -1.0f, 1.0f);

  VkSemaphore host_sem, done_sem;
  VKP_TEST_OK(vkp_vk_timeline_create(dev, 0, &host_sem));
  VKP_TEST_OK(vkp_vk_timeline_create(dev, 0, &done_sem));
  // Slot 0 waits for host_sem = 1 (not yet signalled) and signals done = 1;
  // slot 1 waits for done = 1 and signals done = 2.
  vkp_timeline_point_t w0 = {VKP_VK_TO_U64(host_sem), 1};
  vkp_timeline_point_t s0 = {VKP_VK_TO_U64(done_sem), 1};
  vkp_timeline_point_t w1 = {VKP_VK_TO_U64(done_sem), 1};
  vkp_timeline_point_t s1 = {VKP_VK_TO_U64(done_sem), 2};
  vkp_submit_info_t i0 = {.slot = 0, .n_waits = 1, .waits = &w0, .n_signals = 1,
                          .signals = &s0};
  vkp_submit_info_t i1 = {.slot = 1, .n_waits = 1, .waits = &w1, .n_signals = 1,
                          .signals = &s1};
  VKP_TEST_OK(vkp_vk_stage_submit(stage, &i0));
  VKP_TEST_OK(vkp_vk_stage_submit(stage, &i1));
  uint64_t v = 0;
  VKP_TEST_OK(vkp_vk_timeline_query(dev, done_sem, &v));
  cr_assert_eq(v, 0, "work ran before its wait was signalled");
  // The host signals from another thread while this one waits on the device.
  signaller_t sig = {dev, host_sem, 1};
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, signal_later, &sig), 0);
  VKP_TEST_OK(vkp_vk_timeline_wait(dev, done_sem, 2, UINT64_C(60) * 1000 * 1000 * 1000));
  pthread_join(th, NULL);
  for (int s = 0; s < SLOTS; ++s) {
    const float *x = ins[2 * s].host, *y = ins[2 * s + 1].host, *o = outs[s].host;
    for (int64_t k = 0; k < n; ++k)
      cr_assert_float_eq(o[k], x[k] + y[k], 1e-6, "slot %d element %lld", s, (long long)k);
  }
  // A slot that was never bound is refused, and nothing is signalled.
  vkp_submit_info_t bad = {.slot = SLOTS, .n_signals = 1, .signals = &s1};
  st = vkp_vk_stage_submit(stage, &bad);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_FAILED_PRECONDITION);
  vkp_status_free(st);

  vkp_vk_stage_destroy(stage);
  vkp_vk_timeline_destroy(dev, host_sem);
  vkp_vk_timeline_destroy(dev, done_sem);
  for (int i = 0; i < SLOTS * 2; ++i) vkp_vk_staging_free(dev, &ins[i]);
  for (int i = 0; i < SLOTS; ++i) vkp_vk_staging_free(dev, &outs[i]);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}

Test(stage_async, slots_in_place, .timeout = 60) { run_slots(false); }
Test(stage_async, slots_with_copies, .timeout = 60) { run_slots(true); }
