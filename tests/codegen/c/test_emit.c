// SPDX-License-Identifier: Apache-2.0
// codegen/c/emit.c: the generated source itself — warning-free under
// -Wall -Wextra -Werror for native and baseline -march, named after the
// graph, one comment per node, weights kept out, fusion and workspace reuse,
// and every allocation failure reported as a status without leaks.
#include "codegen/c/emit.h"
#include "support/cpu_check.h"
#include "runtime/cpu/compile.h"

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
  g_out(g, "probs");
  g_validate(g);
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
      vkp_free(so);
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
  g_out(g, "logits");
  g_validate(g);
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
  g_out(g, prev);
  g_validate(g);
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
  g_out(g, "y4");
  g_validate(g);
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert_eq(code.n_kernels, 1);
  cr_assert_eq(code.intermediate_bytes, 0);
  vkp_codegen_c_deinit(&code);
  vkp_graph_destroy(g);
}

// Nodes with several outputs (an lstm's Y, Y_h, Y_c): every output is a
// parameter of the node function with a buffer of its own, also one that
// nothing reads, and outputs consumed by later nodes stay intact; the result
// matches ref.
Test(codegen_c, several_outputs_have_their_own_buffers, .timeout = 120) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("lstm_net");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 3, SH(5, 2, 3));
  g_const(g, &rng, "w", 3, SH(2, 16, 3), -1, 1);
  g_const(g, &rng, "r", 3, SH(2, 16, 4), -1, 1);
  g_const(g, &rng, "bias", 2, SH(2, 32), -1, 1);
  g_const(g, &rng, "w2", 3, SH(1, 16, 8), -1, 1);
  g_const(g, &rng, "r2", 3, SH(1, 16, 4), -1, 1);
  vkp_attr_t bi[] = {at_s("direction", "bidirectional")};
  g_node(g, "lstm1", VKP_OP_LSTM, "x,w,r,bias", "y,y_h,y_c", 1, bi);
  // Y [5, 2, 2, 4] as the next lstm's X [5, 2, 8]; that lstm's Y is read by
  // nothing, its Y_h is.
  vkp_attr_t rs[] = {at_is("shape", 3, SH(5, 2, 8))};
  g_node(g, "flat", VKP_OP_RESHAPE, "y", "y8", 1, rs);
  g_node(g, "lstm2", VKP_OP_LSTM, "y8,w2,r2", "unused_y,h2", 0, NULL);
  g_node(g, "states", VKP_OP_ADD, "y_h,y_c", "hc", 0, NULL);
  g_node(g, "mix", VKP_OP_MUL, "hc,h2", "z", 0, NULL);
  g_node(g, "sm", VKP_OP_SOFTMAX, "y", "y_sm", 0, NULL);
  g_out(g, "z,y_sm");
  g_validate(g);
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert(strstr(code.source, "float *restrict y, float *restrict y_h, "
                                "float *restrict y_c") != NULL);
  cr_assert(strstr(code.source, "float *restrict unused_y, float *restrict h2") != NULL);
  // Y, Y_h and Y_c of lstm1 are all live at once: at least their bytes.
  cr_assert_geq(code.intermediate_bytes, (80 + 16 + 16) * 4);
  // lstm2's unread Y [5, 1, 2, 4] and its Y_h [1, 2, 4] do not overlap.
  long long at_y = -1, at_h = -1;
  const char *p = strstr(code.source, "float *unused_y = (float *)(ws + ");
  const char *q = strstr(code.source, "float *h2 = (float *)(ws + ");
  cr_assert(p && q, "workspace declarations of lstm2's outputs");
  cr_assert_eq(sscanf(strchr(p, '+') + 1, "%lld", &at_y), 1);
  cr_assert_eq(sscanf(strchr(q, '+') + 1, "%lld", &at_h), 1);
  cr_assert(at_y + 40 * 4 <= at_h || at_h + 8 * 4 <= at_y, "Y at %lld, Y_h at %lld", at_y,
            at_h);
  vkp_codegen_c_deinit(&code);
  compile_warning_free(g, 2);
  // cpu against ref on the same input.
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu, *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "cpu", &cpu));
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_tensor_t x, got[2], want[2];
  VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 3, SH(5, 2, 3)));
  for (size_t i = 0; i < vkp_tensor_numel(&x); ++i)
    ((float *)x.data)[i] = vkp_test_rng_uniform(&rng, -1, 1);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir, .threads = 1};
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, &opt, &x, got));
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, want));
  for (int i = 0; i < 2; ++i) {
    char err[512];
    cr_assert(vkp_test_allclose(&got[i], &want[i], 1e-4, 1e-5, err, sizeof err),
              "output %d: %s (seed %llu)", i, err, (unsigned long long)seed);
    vkp_tensor_deinit(&got[i]);
    vkp_tensor_deinit(&want[i]);
  }
  vkp_tensor_deinit(&x);
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
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

// Every elementwise expression of the C op table, for every dtype both that
// table and the op table give its input 0 (where: every dtype of X and Y),
// compiles warning-free for native and baseline -march.
Test(codegen_c, every_expression_compiles_warning_free_per_dtype, .timeout = 240) {
  vkp_graph_t *g = g_new("expressions");
  char in_name[VKP_DTYPE_COUNT][32], one_name[VKP_DTYPE_COUNT][32];
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    snprintf(in_name[d], sizeof in_name[d], "x_%s", vkp_dtype_name((vkp_dtype_t)d));
    snprintf(one_name[d], sizeof one_name[d], "s_%s", vkp_dtype_name((vkp_dtype_t)d));
    g_in(g, in_name[d], (vkp_dtype_t)d, 2, SH(3, 5));
    g_in(g, one_name[d], (vkp_dtype_t)d, 0, NULL);  // a clip bound
  }
  int nodes = 0;
  for (int op = 0; op < VKP_OP_COUNT; ++op) {
    // (batch_norm's parameters are per-channel vectors: the convnet has it.)
    if (vkp_op_pattern((vkp_op_t)op) > VKP_OP_PATTERN_BROADCAST ||
        op == VKP_OP_BATCH_NORM)
      continue;
    for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
      vkp_dtype_set_t set = VKP_DTYPE_SET(d);
      bool where = op == VKP_OP_WHERE;
      if (!vkp_codegen_c_expr((vkp_op_t)op, (vkp_dtype_t)d)) continue;
      if (!where && !(vkp_codegen_c_dtypes((vkp_op_t)op) & vkp_op_dtypes((vkp_op_t)op) & set))
        continue;
      int32_t lo;
      vkp_op_arity((vkp_op_t)op, &lo, NULL, NULL, NULL);
      const char *x = in_name[d], *s = one_name[d], *b = in_name[VKP_DTYPE_BOOL];
      char ins[128];
      if (where) snprintf(ins, sizeof ins, "%.31s,%.31s,%.31s", b, x, x);
      else if (op == VKP_OP_CLIP) snprintf(ins, sizeof ins, "%.31s,%.31s,%.31s", x, s, s);
      else if (lo == 1 && op >= VKP_OP_MIN && op <= VKP_OP_MEAN)
        snprintf(ins, sizeof ins, "%.31s,%.31s,%.31s", x, x, x);  // variadic: three
      else snprintf(ins, sizeof ins, "%.31s%s%.31s", x, lo > 1 ? "," : "", lo > 1 ? x : "");
      cr_assert(lo <= 3 && (lo <= 2 || where || op == VKP_OP_CLIP), "%s: %d inputs",
                vkp_op_name((vkp_op_t)op), (int)lo);
      char name[128], out[160];
      snprintf(name, sizeof name, "%s_%s", vkp_op_name((vkp_op_t)op),
               vkp_dtype_name((vkp_dtype_t)d));
      snprintf(out, sizeof out, "y_%s", name);
      vkp_attr_t dir[1] = {at_s("direction", d % 2 ? "LEFT" : "RIGHT")};
      g_node(g, name, (vkp_op_t)op, ins, out, op == VKP_OP_BIT_SHIFT, dir);
      g_out(g, out);
      ++nodes;
    }
  }
  g_validate(g);
  cr_assert_gt(nodes, 150, "only %d nodes", nodes);
  compile_warning_free(g, 1);
  vkp_graph_destroy(g);
}

// Members of different dtypes fuse into one loop (each keeps a temporary of
// its own C type): float math, comparisons, not, where, a cast of a bool to
// float. The result matches ref.
Test(codegen_c, mixed_dtype_chain_is_one_loop, .timeout = 120) {
  vkp_graph_t *g = g_new("mixed");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(4, 7));
  g_in(g, "z", VKP_DTYPE_FLOAT32, 1, SH(7));
  g_node(g, "s", VKP_OP_SIN, "x", "s", 0, NULL);
  g_node(g, "lt", VKP_OP_LESS, "s,z", "lt", 0, NULL);
  g_node(g, "nt", VKP_OP_NOT, "lt", "nt", 0, NULL);
  g_node(g, "w", VKP_OP_WHERE, "nt,x,z", "w", 0, NULL);
  g_node(g, "ge", VKP_OP_GREATER_OR_EQUAL, "x,z", "ge", 0, NULL);
  vkp_attr_t to[1] = {at_s("to", "float32")};
  g_node(g, "c", VKP_OP_CAST, "ge", "c", 1, to);
  g_node(g, "y", VKP_OP_ADD, "w,c", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert_eq(code.n_kernels, 1, "kernels: %d", (int)code.n_kernels);
  cr_assert_eq(code.intermediate_bytes, 0);
  vkp_codegen_c_deinit(&code);
  compile_warning_free(g, 1);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu, *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "cpu", &cpu));
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_test_rng_t rng;
  unsigned long long seed = vkp_test_rng_init(&rng);
  vkp_tensor_t in[2], got, want;
  for (int i = 0; i < 2; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&in[i], v->dtype, v->rank, v->shape));
    vkp_test_fill_uniform(&rng, &in[i], -1.0f, 1.0f);
  }
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir, .threads = 1};
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, &opt, in, &got));
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, in, &want));
  char msg[256];
  cr_assert(vkp_test_allclose(&got, &want, 1e-5, 1e-6, msg, sizeof msg), "%s (seed %llu)",
            msg, seed);
  cpu_test_remove_dir(dir);
  for (int i = 0; i < 2; ++i) vkp_tensor_deinit(&in[i]);
  vkp_tensor_deinit(&got);
  vkp_tensor_deinit(&want);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// The reduction and normalisation kernels (codegen/c/emit_norm.c), every
// reduce_* op on every dtype the C table gives it, compile warning-free.
Test(codegen_c, norm_family_compiles_warning_free, .timeout = 240) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("norms");
  char in_name[VKP_DTYPE_COUNT][32];
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    snprintf(in_name[d], sizeof in_name[d], "x_%s", vkp_dtype_name((vkp_dtype_t)d));
    g_in(g, in_name[d], (vkp_dtype_t)d, 3, SH(2, 3, 4));
  }
  int nodes = 0;
  vkp_attr_t ax[2] = {at_is("axes", 2, SH(0, 2)), at_i("keepdims", 0)};
  for (int op = VKP_OP_REDUCE_MEAN; op <= VKP_OP_REDUCE_SUM_SQUARE; ++op)
    for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
      if (!(vkp_codegen_c_dtypes((vkp_op_t)op) & vkp_op_dtypes((vkp_op_t)op) &
            VKP_DTYPE_SET(d)))
        continue;
      char name[96], out[128];
      snprintf(name, sizeof name, "%s_%s", vkp_op_name((vkp_op_t)op),
               vkp_dtype_name((vkp_dtype_t)d));
      snprintf(out, sizeof out, "y_%s", name);
      g_node(g, name, (vkp_op_t)op, in_name[d], out, 2, ax);
      g_out(g, out);
      ++nodes;
    }
  cr_assert_geq(nodes, 10 + 6 * 8, "only %d reductions", nodes);
  g_const(g, &rng, "s", 1, SH(3), 0.5f, 1.5f);
  g_const(g, &rng, "b", 1, SH(3), -1.0f, 1.0f);
  vkp_attr_t axis[1] = {at_i("axis", 1)}, groups[1] = {at_i("num_groups", 3)},
             size[1] = {at_i("size", 3)}, mvn[1] = {at_is("axes", 2, SH(0, 2))};
  g_node(g, "ls", VKP_OP_LOG_SOFTMAX, "x_float32", "ls", 1, axis);
  g_node(g, "hm", VKP_OP_HARDMAX, "x_float32", "hm", 1, axis);
  g_node(g, "in", VKP_OP_INSTANCE_NORM, "x_float32,s,b", "in", 0, NULL);
  g_node(g, "gn", VKP_OP_GROUP_NORM, "x_float32,s,b", "gn", 1, groups);
  g_node(g, "lp", VKP_OP_LP_NORM, "x_float32", "lp", 1, axis);
  g_node(g, "mvn", VKP_OP_MEAN_VARIANCE_NORM, "x_float32", "mvn", 1, mvn);
  g_node(g, "lrn", VKP_OP_LRN, "x_float32", "lrn", 1, size);
  static const char *const outs[] = {"ls", "hm", "in", "gn", "lp", "mvn", "lrn"};
  for (int i = 0; i < 7; ++i) g_out(g, outs[i]);
  g_validate(g);
  compile_warning_free(g, 1);
  vkp_graph_destroy(g);
}

// The selection kernels (codegen/c/emit_select.c): arg_max and arg_min
// (first and last index), top_k (largest and smallest) and cum_sum
// (exclusive and reverse), each on every dtype the C table gives it,
// compile warning-free.
Test(codegen_c, select_family_compiles_warning_free, .timeout = 240) {
  vkp_graph_t *g = g_new("select");
  int nodes = 0;
  for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
    if (!(vkp_codegen_c_dtypes(VKP_OP_TOP_K) & vkp_op_dtypes(VKP_OP_TOP_K) &
          VKP_DTYPE_SET(d)))
      continue;
    const char *dt = vkp_dtype_name((vkp_dtype_t)d);
    char x[48], name[96], out[112];
    snprintf(x, sizeof x, "x_%s", dt);
    g_in(g, x, (vkp_dtype_t)d, 3, SH(2, 5, 3));
    for (int variant = 0; variant < 2; ++variant) {
      vkp_attr_t arg[2] = {at_i("axis", 1), at_i("select_last_index", variant)};
      vkp_attr_t cum[3] = {at_i("axis", 1), at_i("exclusive", variant),
                           at_i("reverse", variant)};
      static const vkp_op_t ops[] = {VKP_OP_ARG_MAX, VKP_OP_ARG_MIN, VKP_OP_CUM_SUM};
      for (int o = 0; o < 3; ++o) {
        snprintf(name, sizeof name, "%s_%s_%d", vkp_op_name(ops[o]), dt, variant);
        snprintf(out, sizeof out, "y_%s", name);
        g_node(g, name, ops[o], x, out, o < 2 ? 2 : 3, o < 2 ? arg : cum);
        g_out(g, out);
        ++nodes;
      }
      // top_k has two outputs (g_node makes one).
      vkp_attr_t tk[3] = {at_i("k", 3), at_i("axis", 1), at_i("largest", variant)};
      char vals[112], idx[112];
      snprintf(name, sizeof name, "top_k_%s_%d", dt, variant);
      snprintf(vals, sizeof vals, "v_%s", name);
      snprintf(idx, sizeof idx, "i_%s", name);
      const char *in[1] = {x}, *outs[2] = {vals, idx};
      VKP_TEST_OK(vkp_graph_add_node(g, name, VKP_OP_TOP_K, 1, in, 2, outs, 3, tk, NULL));
      g_out(g, vals);
      g_out(g, idx);
      ++nodes;
    }
  }
  cr_assert_geq(nodes, 8 * 10, "only %d selection nodes", nodes);
  g_validate(g);
  compile_warning_free(g, 1);
  vkp_graph_destroy(g);
}
