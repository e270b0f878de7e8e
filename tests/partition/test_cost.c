// SPDX-License-Identifier: Apache-2.0
// partition/cost.c: per-op work, roofline, transfers, profiles and JSON.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/partition_fixtures.h"
#include "vkpipe/cost.h"

static const vkp_node_t *node(const vkp_graph_t *g, const char *name) {
  int32_t i = vkp_graph_find_node(g, name);
  cr_assert(i >= 0, "no node %s", name);
  return &g->nodes[i];
}

static vkp_op_cost_t cost_of(const vkp_graph_t *g, const char *name) {
  vkp_op_cost_t c;
  VKP_TEST_OK(vkp_op_cost(g, node(g, name), &c));
  return c;
}

Test(cost, conv_matmul_pool_elementwise, .timeout = 10) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int32_t ch = 4 + (int32_t)vkp_test_rng_below(&rng, 8);
  int32_t hw = 4 + (int32_t)vkp_test_rng_below(&rng, 8);
  vkp_graph_t *g = fx_resnet_like(1, ch, hw);
  double out_n = (double)ch * hw * hw;
  // 3x3 conv ch -> ch, same padding: 2 * out * ch * 9 FLOPs.
  vkp_op_cost_t c = cost_of(g, "b0.conv1");
  cr_assert_float_eq(c.flops, 2.0 * out_n * ch * 9, 1e-6);
  // Bytes: input + weights + output, float32.
  cr_assert_float_eq(c.bytes, 4.0 * (out_n + (double)ch * ch * 9 + out_n), 1e-6);
  // Of which the weights (a constant input).
  cr_assert_float_eq(c.weight_bytes, 4.0 * (double)ch * ch * 9, 1e-6);
  // Stem: 3 input channels.
  cr_assert_float_eq(cost_of(g, "stem").flops, 2.0 * out_n * 3 * 9, 1e-6);
  // Relu: one op per element, read + write.
  c = cost_of(g, "b0.relu1");
  cr_assert_float_eq(c.flops, out_n, 1e-9);
  cr_assert_float_eq(c.bytes, 8.0 * out_n, 1e-9);
  cr_assert_eq(c.weight_bytes, 0.0);
  // Add of two tensors.
  c = cost_of(g, "b0.add");
  cr_assert_float_eq(c.bytes, 12.0 * out_n, 1e-9);
  // Global pool reads everything once.
  cr_assert_float_eq(cost_of(g, "pool").flops, out_n, 1e-9);
  // Flatten is a view.
  c = cost_of(g, "flatten");
  cr_assert_eq(c.flops, 0.0);
  cr_assert_eq(c.bytes, 0.0);
  // Matmul [1, ch] x [ch, 10].
  cr_assert_float_eq(cost_of(g, "fc").flops, 2.0 * 10 * ch, 1e-9);
  vkp_graph_destroy(g);
}

Test(cost, depthwise_conv_counts_group, .timeout = 10) {
  vkp_graph_t *g = fx_mobilenet_like(1, 8, 6);
  double out_n = 8.0 * 36;
  cr_assert_float_eq(cost_of(g, "b0.dw").flops, 2.0 * out_n * 9, 1e-9);
  cr_assert_float_eq(cost_of(g, "b0.pw").flops, 2.0 * out_n * 8, 1e-9);
  // Softmax: a few ops per element.
  cr_assert_float_eq(cost_of(g, "softmax").flops, 5.0 * 10, 1e-9);
  vkp_graph_destroy(g);
}

Test(cost, roofline_and_transfers, .timeout = 10) {
  vkp_profile_target_t r = {.target = "x", .gflops = 10, .gbps = 5, .launch_us = 3};
  vkp_op_cost_t compute_bound = {.flops = 1e9, .bytes = 1e6};
  cr_assert_float_eq(vkp_roofline_seconds(&r, &compute_bound), 0.1 + 3e-6, 1e-12);
  vkp_op_cost_t memory_bound = {.flops = 1e3, .bytes = 5e9};
  cr_assert_float_eq(vkp_roofline_seconds(&r, &memory_bound), 1.0 + 3e-6, 1e-12);
  // Weights are read while the node computes, not instead: their time adds.
  vkp_op_cost_t with_weights = {.flops = 1e9, .bytes = 1e6 + 5e8, .weight_bytes = 5e8};
  cr_assert_float_eq(vkp_roofline_seconds(&r, &with_weights), 0.1 + 0.1 + 3e-6, 1e-12);
  vkp_profile_t *p = fx_profile_two_devices(1);
  cr_assert_float_eq(vkp_profile_transfer_seconds(p, "d0", "d1", 1e6),
                     20e-6 + 1e6 / 10e9, 1e-15);
  // Unlisted pair: the default link.
  cr_assert_float_eq(vkp_profile_transfer_seconds(p, "d0", "elsewhere", 8e9),
                     p->default_latency_us * 1e-6 + 8e9 / (p->default_link_gbps * 1e9),
                     1e-12);
  // Same device: a copy, no latency.
  double same = vkp_profile_transfer_seconds(p, "d1", "d1", 1e6);
  cr_assert(same > 0 && same < 1e-3);
  cr_assert_eq(vkp_profile_transfer_seconds(p, "d0", "d1", 0), 0.0);
  cr_assert_str_eq(vkp_profile_device_of(p, "fa"), "d0");
  cr_assert_str_eq(vkp_profile_device_of(p, "unknown"), "unknown");
  cr_assert_eq(vkp_profile_target(p, "unknown"), &p->fallback);
  vkp_profile_destroy(p);
}

Test(cost, defaults_are_documented_values, .timeout = 10) {
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_create_default(&p));
  cr_assert_str_eq(p->host_device, "host");
  // The CPU-side targets share the host; the GPU target has its own device.
  cr_assert_str_eq(vkp_profile_device_of(p, "cpu"), "host");
  cr_assert_str_eq(vkp_profile_device_of(p, "ref"), "host");
  cr_assert_str_neq(vkp_profile_device_of(p, "vulkan"), "host");
  cr_assert_eq(vkp_profile_concurrency(p, "host"), 1);
  vkp_profile_destroy(p);
}

Test(cost, profile_json_round_trip, .timeout = 10) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_profile_t *p = fx_profile_two_devices(1 + (int32_t)vkp_test_rng_below(&rng, 4));
  vkp_profile_target_t r = {.target = "npu", .device = "npu0",
                            .gflops = vkp_test_rng_uniform(&rng, 1, 100),
                            .gbps = vkp_test_rng_uniform(&rng, 1, 50),
                            .launch_us = vkp_test_rng_uniform(&rng, 0, 10)};
  VKP_TEST_OK(vkp_profile_set_target(p, &r));
  char *json;
  VKP_TEST_OK(vkp_profile_to_json(p, &json));
  vkp_profile_t *q;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &q));
  cr_assert_str_eq(q->host_device, p->host_device);
  for (int32_t i = 0; i < p->n_targets; ++i) {
    const vkp_profile_target_t *a = &p->targets[i];
    const vkp_profile_target_t *b = vkp_profile_target(q, a->target);
    cr_assert_str_eq(b->target, a->target);
    cr_assert_str_eq(b->device, a->device);
    cr_assert_float_eq(b->gflops, a->gflops, 1e-9 * a->gflops);
    cr_assert_float_eq(b->gbps, a->gbps, 1e-9 * a->gbps);
    cr_assert_float_eq(b->launch_us, a->launch_us, 1e-9 + 1e-9 * a->launch_us);
  }
  cr_assert_eq(vkp_profile_concurrency(q, "d1"), vkp_profile_concurrency(p, "d1"));
  cr_assert_float_eq(vkp_profile_transfer_seconds(q, "d1", "d0", 1234),
                     vkp_profile_transfer_seconds(p, "d1", "d0", 1234), 1e-15);
  // Through a file too.
  char path[512];
  snprintf(path, sizeof path, "%s/test_cost_profile.json", vkp_test_binary_dir());
  VKP_TEST_OK(vkp_profile_save(q, path));
  vkp_profile_t *f;
  VKP_TEST_OK(vkp_profile_load(path, &f));
  cr_assert_eq(f->n_targets, q->n_targets);
  remove(path);
  vkp_free(json);
  vkp_profile_destroy(f);
  vkp_profile_destroy(q);
  vkp_profile_destroy(p);
}

static void expect_profile_error(const char *json, const char *needle) {
  vkp_profile_t *p = NULL;
  vkp_status_t st = vkp_profile_load_json(json, strlen(json), &p);
  cr_assert(st, "expected an error for %s", json);
  cr_assert(strstr(vkp_status_message(st), needle), "'%s' lacks '%s'",
            vkp_status_message(st), needle);
  cr_assert_null(p);
  vkp_status_free(st);
}

Test(cost, profile_errors, .timeout = 10) {
  expect_profile_error("{", "not valid JSON");
  expect_profile_error("[]", "not a JSON object");
  expect_profile_error("{\"version\": 2}", "version");
  expect_profile_error("{\"targets\": {\"cpu\": {\"gflops\": -1}}}", "positive");
  expect_profile_error("{\"targets\": {\"cpu\": 3}}", "must be an object");
  expect_profile_error("{\"devices\": {\"host\": {\"concurrency\": 0}}}", "concurrency");
  expect_profile_error("{\"links\": [{\"from\": \"a\"}]}", "links[0]");
  expect_profile_error("{\"links\": [{\"from\": \"a\", \"to\": \"b\", \"gbps\": 0}]}",
                       "positive");
  vkp_profile_t *p = NULL;
  vkp_status_t st = vkp_profile_load("/nonexistent/profile.json", &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_IO_ERROR));
  vkp_status_free(st);
}

Test(cost, profile_oom_is_reported, .timeout = 10) {
  const char *json = "{\"targets\": {\"npu\": {\"device\": \"n\", \"gflops\": 3, "
                     "\"gbps\": 2, \"launch_us\": 1}}, \"links\": [{\"from\": \"n\", "
                     "\"to\": \"host\"}]}";
  for (int64_t fail = 1; fail < 200; ++fail) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail);
    vkp_profile_t *p = NULL;
    vkp_status_t st = vkp_profile_load_json(json, strlen(json), &p);
    bool failed = counter.failed, oom = vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY);
    bool got = p != NULL;
    vkp_status_free(st);
    vkp_profile_destroy(p);
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(counter.live, 0, "leak at fail_at %lld", (long long)fail);
    if (!failed) {
      cr_assert(got);
      return;
    }
    cr_assert(oom && !got, "fail_at %lld: not reported as out of memory",
              (long long)fail);
  }
}

// Seconds by the documented formula with the compute rate scaled by `scale`.
static double roofline_scaled(const vkp_profile_target_t *r, const vkp_op_cost_t *w,
                              double scale) {
  vkp_profile_target_t s = *r;
  s.gflops *= scale;
  return vkp_roofline_seconds(&s, w);
}

// w(N) / w(128) with w(N) = N / (N + h): the GEMM width term.
static double width(double n, double h) { return (n / (n + h)) / (128.0 / (128.0 + h)); }

Test(cost, cpu_kernel_classes_scale_the_roofline, .timeout = 30) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  cr_assert_not_null(cpu);
  cr_assert_not_null(cpu->vtable->compiler.kernel_class);
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  double h = vkp_test_rng_uniform(&rng, 4, 64);
  double wino = vkp_test_rng_uniform(&rng, 0.3, 2.0);
  double dw = vkp_test_rng_uniform(&rng, 0.1, 1.0);
  double pw = vkp_test_rng_uniform(&rng, 0.5, 2.0), pw_mem = vkp_test_rng_uniform(&rng, 0.1, 1.0);
  double mm = vkp_test_rng_uniform(&rng, 0.5, 2.0);
  char json[640];
  snprintf(json, sizeof json,
           "{\"targets\": {\"cpu\": {\"gflops\": 50, \"gbps\": 20, \"launch_us\": 0,"
           " \"thread_compute_eff\": 0.75, \"thread_memory_eff\": 0.25,"
           " \"thread_split_us\": 0,"
           " \"gemm_half_columns\": %.17g, \"kernels\": {\"conv_winograd\": %.17g,"
           " \"conv_depthwise\": %.17g, \"conv_gemm\": 1, \"conv_direct\": 1,"
           " \"conv_pointwise\": {\"compute\": %.17g, \"memory\": %.17g},"
           " \"gemm\": %.17g}}}}",
           h, wino, dw, pw, pw_mem, mm);
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &p));
  const vkp_profile_target_t *r = vkp_profile_target(p, "cpu");
  cr_assert_float_eq(vkp_profile_kernel_scale(r, "conv_winograd"), wino, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(r, "conv_winograd"), 0.0, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(r, "conv_pointwise"), pw, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(r, "conv_pointwise"), pw_mem, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(r, "unlisted"), 1.0, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(r, NULL), 1.0, 1e-12);

  // 32 channels, 8x8: the blocks' 3x3 convs are Winograd, the 3-channel
  // stem the direct kernel; convolutions get no width term.
  vkp_graph_t *g = fx_resnet_like(1, 32, 8);
  double cols = -1;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "b0.conv1"), &cols),
                   "conv_winograd");
  cr_assert_eq(cols, 0.0);
  cols = -1;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "stem"), &cols),
                   "conv_direct");
  cr_assert_eq(cols, 0.0);
  // A ReLU on a convolution's single-use result runs in its epilogue: free.
  cols = 0;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "b0.relu1"), &cols),
                   VKP_KERNEL_CLASS_FUSED);
  cr_assert_eq(cols, 0.0);
  double free_s = -1;
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "b0.relu1"), &free_s));
  cr_assert_eq(free_s, 0.0);
  VKP_TEST_OK(vkp_node_estimate_threads(p, cpu, g, node(g, "b0.relu1"), 2, &free_s));
  cr_assert_eq(free_s, 0.0);
  // ReLUs of a graph input, and of another ReLU, have no kernel to join.
  vkp_graph_t *chain = fx_chain(3, 64);
  for (int32_t i = 0; i < chain->n_nodes; ++i)
    cr_assert_null(cpu->vtable->compiler.kernel_class(cpu, chain, &chain->nodes[i], &cols));
  vkp_graph_destroy(chain);
  // A single-row matmul (matrix-vector): no width term.
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "fc"), &cols), "gemm");
  cr_assert_eq(cols, 0.0);
  double s;
  vkp_op_cost_t w = cost_of(g, "b0.conv1");
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "b0.conv1"), &s));
  cr_assert_float_eq(s, roofline_scaled(r, &w, wino), 1e-15);
  w = cost_of(g, "stem");
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "stem"), &s));
  cr_assert_float_eq(s, roofline_scaled(r, &w, 1.0), 1e-15);
  w = cost_of(g, "fc");
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "fc"), &s));
  cr_assert_float_eq(s, roofline_scaled(r, &w, mm), 1e-15);
  vkp_graph_destroy(g);

  // Depthwise (the width term over the output width) and pointwise
  // convolutions, the latter with a memory factor: its compute time plus
  // its activations at gbps * factor, not the longer of the two.
  g = fx_mobilenet_like(1, 24, 6);
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "b0.dw"), &cols),
                   "conv_depthwise");
  cr_assert_eq(cols, 6.0);
  cols = -1;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "b0.pw"), &cols),
                   "conv_pointwise");
  cr_assert_eq(cols, 0.0);
  w = cost_of(g, "b0.dw");
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "b0.dw"), &s));
  cr_assert_float_eq(s, roofline_scaled(r, &w, dw * width(6, h)), 1e-15);
  w = cost_of(g, "b0.pw");
  double act = w.bytes - w.weight_bytes;
  cr_assert_gt(act, 0.0);
  double want = w.flops / (50e9 * pw) + act / (20e9 * pw_mem) + w.weight_bytes / 20e9;
  VKP_TEST_OK(vkp_node_estimate(p, cpu, g, node(g, "b0.pw"), &s));
  cr_assert_float_eq(s, want, 1e-15);
  cr_assert_gt(s, roofline_scaled(r, &w, pw));
  // Two threads: each part at its own speed-up (1.75x compute, 1.25x memory).
  double s2 = -1;
  VKP_TEST_OK(vkp_node_estimate_threads(p, cpu, g, node(g, "b0.pw"), 2, &s2));
  cr_assert_float_eq(s2,
                     w.flops / (50e9 * pw * 1.75) + act / (20e9 * 1.25 * pw_mem) +
                         w.weight_bytes / (20e9 * 1.25),
                     1e-15);
  // The profile's JSON keeps the classes, the memory factor and the width
  // term.
  char *out;
  VKP_TEST_OK(vkp_profile_to_json(p, &out));
  vkp_profile_t *q;
  VKP_TEST_OK(vkp_profile_load_json(out, strlen(out), &q));
  const vkp_profile_target_t *rq = vkp_profile_target(q, "cpu");
  cr_assert_float_eq(rq->gemm_half_columns, h, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(rq, "conv_depthwise"), dw, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(rq, "conv_pointwise"), pw, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(rq, "conv_pointwise"), pw_mem, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(rq, "conv_depthwise"), 0.0, 1e-12);
  vkp_free(out);
  vkp_profile_destroy(q);
  vkp_graph_destroy(g);
  vkp_profile_destroy(p);
  vkp_registry_destroy(reg);
}

// A profile for the cpu target: 50 GFLOP/s, 20 GB/s, no launch cost,
// thread efficiencies 0.75 and 0.25, `split_us` per kernel split.
static vkp_profile_t *split_profile(double split_us) {
  char json[256];
  snprintf(json, sizeof json,
           "{\"targets\": {\"cpu\": {\"gflops\": 50, \"gbps\": 20, \"launch_us\": 0,"
           " \"thread_compute_eff\": 0.75, \"thread_memory_eff\": 0.25,"
           " \"thread_split_us\": %.17g}}}",
           split_us);
  vkp_profile_t *p = NULL;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &p));
  return p;
}

Test(cost, threads_pay_for_splitting_a_kernel, .timeout = 30) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  double split_us = vkp_test_rng_uniform(&rng, 1, 5);
  vkp_profile_t *free_split = split_profile(0.0), *p = split_profile(split_us);
  cr_assert_float_eq(vkp_profile_target(p, "cpu")->thread_split_us, split_us, 1e-12);
  // A layer of tens of microseconds gains from a second thread, less the
  // split; a ReLU of 64 floats would lose, and stays on one thread.
  vkp_graph_t *g = fx_mobilenet_like(1, 24, 32);
  vkp_graph_t *tiny = fx_chain(1, 64);
  struct {
    const vkp_graph_t *g;
    const vkp_node_t *n;
    bool splits;
  } cases[] = {{g, node(g, "b0.pw"), true}, {tiny, &tiny->nodes[0], false}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    double one = 0, two_free = 0, two = 0, one_again = 0;
    VKP_TEST_OK(vkp_node_estimate_threads(p, cpu, cases[c].g, cases[c].n, 1, &one));
    VKP_TEST_OK(vkp_node_estimate(p, cpu, cases[c].g, cases[c].n, &one_again));
    cr_assert_float_eq(one, one_again, 1e-15);
    VKP_TEST_OK(vkp_node_estimate_threads(free_split, cpu, cases[c].g, cases[c].n, 2, &two_free));
    VKP_TEST_OK(vkp_node_estimate_threads(p, cpu, cases[c].g, cases[c].n, 2, &two));
    cr_assert_lt(two_free, one, "%s", cases[c].n->name);
    if (cases[c].splits) {
      cr_assert_float_eq(two, two_free + split_us * 1e-6, 1e-15, "%s", cases[c].n->name);
      cr_assert_lt(two, one, "%s", cases[c].n->name);
    } else {
      cr_assert_gt(two_free + split_us * 1e-6, one, "%s", cases[c].n->name);
      cr_assert_float_eq(two, one, 1e-15, "%s", cases[c].n->name);
    }
  }
  // The JSON keeps it; a negative or non-finite one is refused.
  char *text = NULL;
  VKP_TEST_OK(vkp_profile_to_json(p, &text));
  vkp_profile_t *back = NULL;
  VKP_TEST_OK(vkp_profile_load_json(text, strlen(text), &back));
  cr_assert_float_eq(vkp_profile_target(back, "cpu")->thread_split_us, split_us, 1e-12);
  expect_profile_error("{\"targets\": {\"cpu\": {\"thread_split_us\": -1}}}",
                       "thread_split_us");
  vkp_free(text);
  vkp_profile_destroy(back);
  vkp_graph_destroy(tiny);
  vkp_graph_destroy(g);
  vkp_profile_destroy(p);
  vkp_profile_destroy(free_split);
  vkp_registry_destroy(reg);
}

// Against a 2-D B (weights) every leading dimension of A is rows of one
// product: the width term sees them all.
Test(cost, batched_rows_against_2d_weights_are_one_gemm, .timeout = 10) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t rows = 2 + (int64_t)vkp_test_rng_below(&rng, 30);
  int64_t k = 4 + (int64_t)vkp_test_rng_below(&rng, 60);
  int64_t n = 40 + (int64_t)vkp_test_rng_below(&rng, 60);
  const int64_t a_shape[] = {rows, 1, k}, b_shape[] = {k, n};
  const int64_t a3_shape[] = {rows, 1, k}, b3_shape[] = {rows, k, n};
  float *w = calloc((size_t)(rows * k * n), sizeof(float));
  cr_assert_not_null(w);
  vkp_graph_t *g = NULL;
  VKP_TEST_OK(vkp_graph_create("mm", &g));
  VKP_TEST_OK(vkp_graph_add_input(g, "a", VKP_DTYPE_FLOAT32, 3, a_shape, NULL));
  VKP_TEST_OK(vkp_graph_add_constant(g, "b", VKP_DTYPE_FLOAT32, 2, b_shape, w, NULL));
  VKP_TEST_OK(vkp_graph_add_input(g, "a3", VKP_DTYPE_FLOAT32, 3, a3_shape, NULL));
  VKP_TEST_OK(vkp_graph_add_constant(g, "b3", VKP_DTYPE_FLOAT32, 3, b3_shape, w, NULL));
  const char *ins[] = {"a", "b"}, *outs[] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "mm", VKP_OP_MATMUL, 2, ins, 1, outs, 0, NULL, NULL));
  const char *ins3[] = {"a3", "b3"}, *outs3[] = {"y3"};
  VKP_TEST_OK(vkp_graph_add_node(g, "bmm", VKP_OP_MATMUL, 2, ins3, 1, outs3, 0, NULL, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y3"));
  VKP_TEST_OK(vkp_graph_validate(g));
  double cols = -1;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "mm"), &cols), "gemm");
  cr_assert_eq(cols, (double)rows, "%lld rows", (long long)rows);
  // A batch of products, each of one row: matrix-vector, no width term.
  cols = -1;
  cr_assert_str_eq(cpu->vtable->compiler.kernel_class(cpu, g, node(g, "bmm"), &cols), "gemm");
  cr_assert_eq(cols, 0.0);
  vkp_graph_destroy(g);
  free(w);
  vkp_registry_destroy(reg);
}

Test(cost, kernel_profile_errors, .timeout = 10) {
  expect_profile_error("{\"targets\": {\"cpu\": {\"kernels\": 3}}}", "'kernels'");
  expect_profile_error("{\"targets\": {\"cpu\": {\"kernels\": {\"gemm\": 0}}}}",
                       "positive");
  expect_profile_error("{\"targets\": {\"cpu\": {\"kernels\": {\"gemm\": \"x\"}}}}",
                       "must be a number");
  expect_profile_error(
      "{\"targets\": {\"cpu\": {\"kernels\": {\"gemm\": {\"compute\": 1, \"memory\": -1}}}}}",
      "memory factor");
  expect_profile_error("{\"targets\": {\"cpu\": {\"kernels\": {\"gemm\": {\"memory\": 1}}}}}",
                       "\"compute\": number");
  expect_profile_error(
      "{\"targets\": {\"cpu\": {\"kernels\": {\"gemm\": {\"compute\": 1, \"memory\": \"x\"}}}}}",
      "must be a number or");
  expect_profile_error("{\"targets\": {\"cpu\": {\"gemm_half_columns\": -1}}}",
                       "gemm_half_columns");
}

// A target the default profile does not list, with rates of its own.
static bool decl_supports(const vkp_target_t *t, const vkp_graph_t *g, const vkp_node_t *n,
                          char *reason, size_t size) {
  return true;
}
static vkp_status_t decl_compile(const vkp_target_t *t, const vkp_graph_t *g,
                                 const vkp_compile_options_t *o, vkp_blob_t *blob) {
  return vkp_blob_alloc(blob, 1);
}
static vkp_status_t decl_load(const vkp_target_t *t, const vkp_graph_t *g, const void *blob,
                              size_t size, vkp_stage_t **out) {
  return vkp_status_make(VKP_STATUS_UNSUPPORTED, "not run here");
}
static vkp_status_t decl_run(vkp_stage_t *s, const vkp_tensor_t *in, vkp_tensor_t *out) {
  return NULL;
}
static void decl_unload(vkp_stage_t *s) {}
static const vkp_target_kernel_rate_t decl_kernels[] = {{"gemm", 0.5, 0.0},
                                                        {"conv_pointwise", 0.75, 0.25}};
static const vkp_target_rates_t decl_rates = {
    .device = "accel0", .gflops = 123.0, .gbps = 45.0, .launch_us = 7.0,
    .n_kernels = 2, .kernels = decl_kernels,
};
static const vkp_target_vtable_t decl_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "decl",
    .caps = {.dtypes = VKP_DTYPE_SET_ALL, .default_rates = &decl_rates},
    .compiler = {.supports = decl_supports, .compile = decl_compile},
    .stage = {.load = decl_load, .run = decl_run, .unload = decl_unload},
};

Test(cost, unlisted_target_uses_its_declared_rates, .timeout = 10) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  VKP_TEST_OK(vkp_registry_add(reg, &decl_vtable, NULL));
  const vkp_target_t *t = vkp_registry_find(reg, "decl");
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_create_default(&p));
  cr_assert_eq(vkp_profile_target(p, "decl"), &p->fallback, "not listed");
  vkp_profile_target_t scratch;
  const vkp_profile_target_t *r = vkp_profile_target_rates(p, t, &scratch);
  cr_assert_str_eq(r->device, "accel0");
  cr_assert_float_eq(r->gflops, 123.0, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(r, "gemm"), 0.5, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(r, "gemm"), 0.0, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_scale(r, "conv_pointwise"), 0.75, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(r, "conv_pointwise"), 0.25, 1e-12);
  cr_assert_float_eq(vkp_profile_kernel_memory_scale(r, "unlisted"), 0.0, 1e-12);

  vkp_graph_t *g = fx_chain(4, 64);
  const vkp_node_t *n = &g->nodes[0];
  vkp_op_cost_t work;
  VKP_TEST_OK(vkp_op_cost(g, n, &work));
  double s = 0;
  VKP_TEST_OK(vkp_node_estimate(p, t, g, n, &s));
  cr_assert_float_eq(s, vkp_roofline_seconds(r, &work), 1e-15);
  // A profile entry wins over the declaration.
  vkp_profile_target_t listed = {.target = "decl", .device = "elsewhere",
                                 .gflops = 1.0, .gbps = 1.0, .launch_us = 1.0};
  VKP_TEST_OK(vkp_profile_set_target(p, &listed));
  cr_assert_str_eq(vkp_profile_target_rates(p, t, &scratch)->device, "elsewhere");
  vkp_graph_destroy(g);
  vkp_profile_destroy(p);
  vkp_registry_destroy(reg);
}
