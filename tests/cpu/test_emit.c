// SPDX-License-Identifier: Apache-2.0
// codegen/c/emit.c: the generated source itself — warning-free under
// -Wall -Wextra -Werror for native and baseline -march, named after the
// graph, one comment per node, weights kept out, fusion and workspace reuse,
// and every allocation failure reported as a status without leaks.
#include "codegen/c/emit.h"
#include "cpu/cpu_test_util.h"
#include "runtime/cpu/compile.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

// A small residual convnet with every op kind the fusion handles.
static vkp_graph_t *convnet(vkp_test_rng_t *rng, int64_t channels) {
  vkp_graph_t *g = g_new("convnet");
  g_in(g, "image", VKP_DTYPE_FLOAT32, 4, SH(1, 3, 15, 15));
  g_const(g, rng, "w_stem", 4, SH(channels, 3, 3, 3), -1, 1);
  g_const(g, rng, "b_stem", 1, SH(channels), -1, 1);
  g_const(g, rng, "w_body", 4, SH(channels, channels, 3, 3), -1, 1);
  g_const(g, rng, "bn_s", 1, SH(channels), 0.5f, 1.5f);
  g_const(g, rng, "bn_b", 1, SH(channels), -1, 1);
  g_const(g, rng, "bn_m", 1, SH(channels), -1, 1);
  g_const(g, rng, "bn_v", 1, SH(channels), 0.5f, 1.5f);
  g_const(g, rng, "fc_w", 2, SH(10, channels), -1, 1);
  g_const(g, rng, "fc_b", 1, SH(10), -1, 1);
  vkp_attr_t c3[] = {at_is("pads", 4, SH(1, 1, 1, 1))};
  g_node(g, "stem", VKP_OP_CONV2D, "image,w_stem,b_stem", "s", 1, c3);
  g_node(g, "stem_relu", VKP_OP_RELU, "s", "s_act", 0, NULL);
  g_node(g, "body", VKP_OP_CONV2D, "s_act,w_body", "b", 1, c3);
  g_node(g, "body_bn", VKP_OP_BATCH_NORM, "b,bn_s,bn_b,bn_m,bn_v", "b_bn", 0, NULL);
  g_node(g, "residual", VKP_OP_ADD, "b_bn,s_act", "r", 0, NULL);
  g_node(g, "out_relu", VKP_OP_RELU, "r", "feat", 0, NULL);
  vkp_attr_t mp[] = {at_is("kernel_shape", 2, SH(3, 3)), at_is("strides", 2, SH(2, 2))};
  g_node(g, "pool", VKP_OP_MAX_POOL2D, "feat", "p", 2, mp);
  g_node(g, "gap", VKP_OP_GLOBAL_AVG_POOL, "p", "gp", 0, NULL);
  vkp_attr_t fl[] = {at_i("axis", 1)};
  g_node(g, "flat", VKP_OP_FLATTEN, "gp", "f", 1, fl);
  vkp_attr_t gm[] = {at_i("transB", 1)};
  g_node(g, "fc", VKP_OP_GEMM, "f,fc_w,fc_b", "logits", 1, gm);
  g_node(g, "prob", VKP_OP_SOFTMAX, "logits", "probs", 0, NULL);
  VKP_TEST_OK(vkp_graph_mark_output(g, "probs"));
  VKP_TEST_OK(vkp_graph_validate(g));
  return g;
}

// Builds `g` with -Wall -Wextra -Werror for native and baseline -march, with
// 1 to max_threads threads.
static void compile_warning_free(const vkp_graph_t *g, int32_t max_threads) {
  char *dir = cpu_test_cache_dir();
  static const char *const marches[] = {"native", "x86-64"};
  for (int m = 0; m < 2; ++m) {
    for (int32_t threads = 1; threads <= max_threads; ++threads) {
      vkp_codegen_c_t tc;
      VKP_TEST_OK(vkp_codegen_c_emit(g, threads, &tc));
      vkp_cpu_compile_config_t cfg = {.march = marches[m], .cache_dir = dir,
                                      .extra_flags = "-Wall -Wextra -Werror",
                                      .threads = threads};
      void *so;
      size_t so_size;
      char key[33];
      VKP_TEST_OK(vkp_cpu_compile(tc.source, tc.source_size, &cfg, &so, &so_size, key));
      free(so);
      vkp_codegen_c_deinit(&tc);
    }
  }
  cpu_test_remove_dir(dir);
}

// A batch-1 classifier whose depth is a multiple of every vector step: GCC
// once warned (-Waggressive-loop-optimizations) on the dot-product tail.
Test(codegen_c, classifier_compiles_warning_free, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("classifier");
  g_in(g, "f", VKP_DTYPE_FLOAT32, 2, SH(1, 1280));
  g_const(g, &rng, "w", 2, SH(10, 1280), -1, 1);
  g_const(g, &rng, "b", 1, SH(10), -1, 1);
  vkp_attr_t gm[] = {at_i("transB", 1)};
  g_node(g, "fc", VKP_OP_GEMM, "f,w,b", "logits", 1, gm);
  VKP_TEST_OK(vkp_graph_mark_output(g, "logits"));
  VKP_TEST_OK(vkp_graph_validate(g));
  compile_warning_free(g, 1);
  vkp_graph_destroy(g);
}

Test(codegen_c, compiles_warning_free_and_reads_like_the_graph, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  // 16 channels: the body convolution takes the Winograd path.
  vkp_graph_t *g = convnet(&rng, 16);
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert(strstr(code.source, "vkp_conv_winograd(xn") != NULL);
  // One comment per source node; functions named after the graph.
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    char want[128];
    snprintf(want, sizeof want, "// node '%s': %s", g->nodes[i].name,
             vkp_op_name(g->nodes[i].op));
    if (!strstr(code.source, want)) cr_assert_fail("missing comment: %s", want);
  }
  cr_assert(strstr(code.source, "static void node_stem(") != NULL);
  cr_assert(strstr(code.source, "static void ep_body(") != NULL);
  // stem+relu, body+bn+add+relu, pool, gap, fc, softmax; flatten is a view.
  cr_assert_eq(code.n_kernels, 6, "kernels after fusion: %d", (int)code.n_kernels);
  compile_warning_free(g, 2);
  vkp_codegen_c_deinit(&code);
  vkp_graph_destroy(g);
}

Test(codegen_c, weights_stay_out_of_the_source, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *small = convnet(&rng, 4), *big = convnet(&rng, 256);
  vkp_codegen_c_t a, b;
  VKP_TEST_OK(vkp_codegen_c_emit(small, 1, &a));
  VKP_TEST_OK(vkp_codegen_c_emit(big, 1, &b));
  cr_assert_gt(vkp_graph_constant_bytes(big), 2000000);
  // 600 KiB more weights, a few characters more source (longer numbers).
  cr_assert_lt(b.source_size, a.source_size + 200, "%zu vs %zu", b.source_size,
               a.source_size);
  cr_assert_eq(a.n_constants, 9);
  vkp_codegen_c_deinit(&a);
  vkp_codegen_c_deinit(&b);
  vkp_graph_destroy(small);
  vkp_graph_destroy(big);
}

// Eight unfusable steps of the same size: liveness lets two buffers serve.
Test(codegen_c, workspace_is_reused, .timeout = 60) {
  vkp_graph_t *g = g_new("chain");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(64, 64));
  char prev[16] = "x", cur[16], name[16];
  for (int i = 0; i < 8; ++i) {
    snprintf(cur, sizeof cur, "t%d", i);
    snprintf(name, sizeof name, "sm%d", i);
    g_node(g, name, VKP_OP_SOFTMAX, prev, cur, 0, NULL);
    snprintf(prev, sizeof prev, "%s", cur);
  }
  VKP_TEST_OK(vkp_graph_mark_output(g, prev));
  VKP_TEST_OK(vkp_graph_validate(g));
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert_eq(code.intermediate_bytes, 2 * 64 * 64 * 4, "workspace %lld",
               (long long)code.intermediate_bytes);
  vkp_codegen_c_deinit(&code);
  vkp_graph_destroy(g);
}

Test(codegen_c, elementwise_chain_is_one_loop, .timeout = 60) {
  vkp_graph_t *g = g_new("chain");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 3, SH(2, 3, 5));
  g_in(g, "b", VKP_DTYPE_FLOAT32, 1, SH(5));
  g_node(g, "a1", VKP_OP_ADD, "x,b", "y1", 0, NULL);
  g_node(g, "a2", VKP_OP_SIGMOID, "y1", "y2", 0, NULL);
  g_node(g, "a3", VKP_OP_MUL, "y2,x", "y3", 0, NULL);
  g_node(g, "a4", VKP_OP_EXP, "y3", "y4", 0, NULL);
  VKP_TEST_OK(vkp_graph_mark_output(g, "y4"));
  VKP_TEST_OK(vkp_graph_validate(g));
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert_eq(code.n_kernels, 1);
  cr_assert_eq(code.intermediate_bytes, 0);
  vkp_codegen_c_deinit(&code);
  vkp_graph_destroy(g);
}

Test(codegen_c, allocation_failures_are_statuses, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = convnet(&rng, 4);
  for (int64_t fail_at = 1;; ++fail_at) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail_at);
    vkp_codegen_c_t code;
    vkp_status_t st = vkp_codegen_c_emit(g, 1, &code);
    if (!st) vkp_codegen_c_deinit(&code);
    bool failed = counter.failed;
    bool oom = vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY);
    bool ok = st == NULL;
    vkp_status_free(st);
    int64_t live = counter.live;
    vkp_test_counting_alloc_uninstall();
    if (!failed) {
      cr_assert(ok);
      break;
    }
    if (!oom || live != 0)
      cr_assert_fail("fail_at %lld: %s, %lld blocks leaked", (long long)fail_at,
                     oom ? "out of memory" : "not an out-of-memory status", (long long)live);
  }
  vkp_graph_destroy(g);
}
