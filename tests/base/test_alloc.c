// SPDX-License-Identifier: Apache-2.0
// base/alloc.c: blocks go back to the allocator that made them; objects
// allocate with their own allocator; overflow checks.
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

Test(alloc, current_allocator_counts_and_fails, .timeout = 5) {
  vkp_test_counting_alloc_t c;
  vkp_test_counting_alloc_install(&c, 3);
  char *a = vkp__strdup("abc");
  char *b = vkp__asprintf("%d-%s", 7, "x");
  char *d = vkp__malloc(10);  // the third allocation fails
  vkp_test_counting_alloc_uninstall();
  cr_assert_str_eq(a, "abc");
  cr_assert_str_eq(b, "7-x");
  cr_assert_null(d);
  cr_assert(c.failed);
  cr_assert_eq(c.live, 2);
  // Outside the scope the blocks still go back to the allocator that made them.
  vkp__free(a);
  b = vkp__realloc(b, 100);
  cr_assert_str_eq(b, "7-x");
  cr_assert_eq(c.count, 4, "realloc went to the block's allocator");
  vkp__free(b);
  cr_assert_eq(c.live, 0);
}

Test(alloc, blocks_keep_16_byte_alignment, .timeout = 5) {
  for (size_t n = 1; n < 200; n += 7) {
    void *p = vkp__malloc(n);
    cr_assert_eq((uintptr_t)p % 16, 0);
    p = vkp__realloc(p, n * 3);
    cr_assert_eq((uintptr_t)p % 16, 0);
    vkp__free(p);
  }
}

Test(alloc, overflow_is_refused, .timeout = 5) {
  cr_assert_null(vkp__calloc(SIZE_MAX / 2, 4));
  cr_assert_null(vkp__reallocarray(NULL, SIZE_MAX / 2, 4));
  void *p = vkp__calloc(3, 4);
  cr_assert_not_null(p);
  cr_assert_eq(memcmp(p, (char[12]){0}, 12), 0);
  vkp__free(p);
  cr_assert_null(vkp__strdup(NULL));
}

// A small graph built through the public API: relu(x) + x.
static vkp_status_t build_graph(vkp_graph_t *g) {
  int64_t shape[2] = {3, 5};
  vkp_status_t st = vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, shape, NULL);
  if (!st)
    st = vkp_graph_add_node(g, "r", VKP_OP_RELU, 1, (const char *[]){"x"}, 1,
                            (const char *[]){"rx"}, 0, NULL, NULL);
  if (!st)
    st = vkp_graph_add_node(g, "s", VKP_OP_ADD, 2, (const char *[]){"rx", "x"}, 1,
                            (const char *[]){"y"}, 0, NULL, NULL);
  if (!st) st = vkp_graph_mark_output(g, "y");
  if (!st) st = vkp_graph_validate(g);
  return st;
}

Test(alloc, two_objects_two_allocators, .timeout = 10) {
  vkp_test_counting_alloc_t ca, cb;
  vkp_graph_t *a = NULL, *b = NULL;
  VKP_TEST_OK(vkp_graph_create_with_allocator("a", vkp_test_counting_alloc_init(&ca, 0), &a));
  VKP_TEST_OK(vkp_graph_create_with_allocator("b", vkp_test_counting_alloc_init(&cb, 0), &b));
  int64_t b_count = cb.count;
  VKP_TEST_OK(build_graph(a));
  cr_assert_eq(cb.count, b_count, "building graph a allocated from b's allocator");
  int64_t a_count = ca.count;
  cr_assert_gt(a_count, 1);
  VKP_TEST_OK(build_graph(b));
  cr_assert_eq(ca.count, a_count, "building graph b allocated from a's allocator");
  cr_assert_gt(cb.count, b_count);
  // A call's error status comes from the graph's allocator too.
  vkp_status_t st = vkp_graph_mark_output(a, "no_such_value");
  cr_assert_not_null(st);
  int64_t a_live = ca.live;
  vkp_status_free(st);
  cr_assert_lt(ca.live, a_live, "the status went back to a's allocator");
  vkp_graph_destroy(a);
  cr_assert_eq(ca.live, 0, "%lld blocks of a leaked", (long long)ca.live);
  cr_assert_gt(cb.live, 0);
  vkp_graph_destroy(b);
  cr_assert_eq(cb.live, 0, "%lld blocks of b leaked", (long long)cb.live);
}

Test(alloc, missing_function_is_refused, .timeout = 5) {
  vkp_test_counting_alloc_t c;
  vkp_allocator_t broken = *vkp_test_counting_alloc_init(&c, 0);
  broken.realloc = NULL;
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_create_with_allocator("g", &broken, &g);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "realloc"), "%s", vkp_status_message(st));
  cr_assert_null(g);
  vkp_status_free(st);
  cr_assert_eq(c.count, 0);
}

static void *strdup_in_scope(void *arg) {
  vkp_test_counting_alloc_install(arg, 0);
  char *s = vkp__strdup("made on another thread");
  s = vkp__realloc(s, 64);  // stays with the allocator that made it
  vkp_test_counting_alloc_uninstall();
  return s;
}

Test(alloc, block_freed_on_another_thread_returns_to_its_allocator, .timeout = 5) {
  vkp_test_counting_alloc_t c;
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, NULL, strdup_in_scope, &c), 0);
  char *s = NULL;
  pthread_join(thread, (void **)&s);
  cr_assert_str_eq(s, "made on another thread");
  cr_assert_eq(c.live, 1);
  vkp_free(s);  // this thread's current allocator is the system one
  cr_assert_eq(c.live, 0);
}

Test(alloc, failing_nth_allocation_of_an_object, .timeout = 30) {
  bool succeeded = false;
  for (int64_t fail_at = 1; fail_at < 1000 && !succeeded; ++fail_at) {
    vkp_test_counting_alloc_t c;
    const vkp_allocator_t *allocator = vkp_test_counting_alloc_init(&c, fail_at);
    vkp_graph_t *g = NULL;
    vkp_status_t st = vkp_graph_create_with_allocator("g", allocator, &g);
    if (!st) st = build_graph(g);
    if (st) {
      cr_assert(c.failed, "failed without an allocation failure: %s", vkp_status_message(st));
      cr_assert(vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY), "fail_at %lld: %s",
                (long long)fail_at, vkp_status_message(st));
      vkp_status_free(st);
    } else {
      succeeded = !c.failed;
    }
    vkp_graph_destroy(g);
    cr_assert_eq(c.live, 0, "fail_at %lld: %lld blocks leaked", (long long)fail_at,
                 (long long)c.live);
  }
  cr_assert(succeeded);
}
