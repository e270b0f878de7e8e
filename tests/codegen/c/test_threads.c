// SPDX-License-Identifier: Apache-2.0
// Kernels split across a cpu stage's thread pool (codegen/c/prelude*.c,
// runtime/cpu/pool.c): every kernel family, on shapes large enough that it
// does split, gives bit-identical results with 1 and 3 threads, and both
// match the "ref" target on fresh random inputs.
#include "support/cpu_check.h"

#define F32 VKP_DTYPE_FLOAT32

typedef struct runs_t {
  vkp_registry_t *reg;
  const vkp_target_t *cpu, *ref;
  char *cache;
} runs_t;

static void runs_init(runs_t *r) {
  VKP_TEST_OK(vkp_registry_create_default(&r->reg));
  VKP_TEST_OK(vkp_registry_lookup(r->reg, "cpu", &r->cpu));
  VKP_TEST_OK(vkp_registry_lookup(r->reg, "ref", &r->ref));
  r->cache = cpu_test_cache_dir();
}

static void runs_deinit(runs_t *r) {
  cpu_test_remove_dir(r->cache);
  vkp_registry_destroy(r->reg);
}

// Validates and runs `g` (consumed) on "cpu" with 1 and 3 threads and on
// "ref", inputs uniform in [lo, hi); every output must be the same bits for
// both thread counts and within 1e-4 * max(|want|, rms(want)) of ref.
static void check_threads(vkp_graph_t *g, vkp_test_rng_t *rng, uint64_t seed, float lo,
                          float hi) {
  g_validate(g);
  runs_t r;
  runs_init(&r);
  vkp_tensor_t ins[16], one[16], three[16], want[16];
  cr_assert(g->n_inputs <= 16 && g->n_outputs <= 16);
  g_random_inputs(g, rng, lo, hi, ins);
  vkp_compile_options_t o1 = {.cache_dir = r.cache, .threads = 1};
  vkp_compile_options_t o3 = {.cache_dir = r.cache, .threads = 3};
  VKP_TEST_OK(vkp_target_run_graph(r.cpu, g, &o1, ins, one));
  VKP_TEST_OK(vkp_target_run_graph(r.cpu, g, &o3, ins, three));
  VKP_TEST_OK(vkp_target_run_graph(r.ref, g, NULL, ins, want));
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    const char *name = g->values[g->outputs[i]].name;
    size_t bytes = vkp_tensor_nbytes(&one[i]), n = vkp_tensor_numel(&one[i]);
    cr_assert_eq(bytes, vkp_tensor_nbytes(&three[i]));
    cr_assert(memcmp(one[i].data, three[i].data, bytes) == 0,
              "graph '%s' output '%s': 1 and 3 threads differ (seed %llu)", g->name, name,
              (unsigned long long)seed);
    double rms = 0;
    for (size_t k = 0; k < n; ++k) {
      double w = want[i].dtype == VKP_DTYPE_FLOAT32 ? ((float *)want[i].data)[k]
                                                    : ((int32_t *)want[i].data)[k];
      rms += w * w;
    }
    rms = n ? sqrt(rms / (double)n) : 0;
    for (size_t k = 0; k < n; ++k) {
      double got, w;
      if (one[i].dtype == VKP_DTYPE_FLOAT32) {
        got = ((float *)one[i].data)[k];
        w = ((float *)want[i].data)[k];
      } else {
        got = ((int32_t *)one[i].data)[k];
        w = ((int32_t *)want[i].data)[k];
      }
      double scale = fabs(w) > rms ? fabs(w) : rms;
      cr_assert(fabs(got - w) <= 1e-4 * scale + 1e-6,
                "graph '%s' output '%s' element %zu: got %.9g, want %.9g (seed %llu)", g->name,
                name, k, got, w, (unsigned long long)seed);
    }
    vkp_tensor_deinit(&one[i]);
    vkp_tensor_deinit(&three[i]);
    vkp_tensor_deinit(&want[i]);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) vkp_tensor_deinit(&ins[i]);
  runs_deinit(&r);
  vkp_graph_destroy(g);
}

static void conv(vkp_graph_t *g, vkp_test_rng_t *rng, const char *x, const char *y,
                 int64_t C, int64_t M, int64_t K, int64_t stride, int64_t pad, int64_t group,
                 bool relu) {
  char w[32], b[32], n[32], ins[96], c[32];
  snprintf(w, sizeof w, "%s_w", y);
  snprintf(b, sizeof b, "%s_b", y);
  snprintf(n, sizeof n, "%s_conv", y);
  snprintf(c, sizeof c, "%s_c", y);
  snprintf(ins, sizeof ins, "%s,%s,%s", x, w, b);
  g_const(g, rng, w, 4, SH(M, C / group, K, K), -0.5f, 0.5f);
  g_const(g, rng, b, 1, SH(M), -1, 1);
  vkp_attr_t a[] = {at_is("pads", 4, SH(pad, pad, pad, pad)),
                    at_is("strides", 2, SH(stride, stride)), at_i("group", group)};
  g_node(g, n, VKP_OP_CONV2D, ins, relu ? c : y, 3, a);
  if (relu) {
    snprintf(n, sizeof n, "%s_relu", y);
    g_node(g, n, VKP_OP_RELU, c, y, 0, NULL);
  }
  g_out(g, y);
}

// Depthwise (3x3 row blocks at stride 1 and 2, the flat correlation, windows
// over 121 taps), pointwise and im2col GEMMs, Winograd F(2x2) and F(4x4).
Test(cpu_threads, convolutions, .timeout = 240) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("conv_threads");
  g_in(g, "x", F32, 4, SH(1, 48, 20, 20));
  conv(g, &rng, "x", "dw1", 48, 48, 3, 1, 1, 48, true);
  conv(g, &rng, "x", "dw2", 48, 48, 3, 2, 1, 48, false);
  conv(g, &rng, "x", "dw5", 48, 48, 5, 1, 2, 48, true);
  g_in(g, "xl", F32, 4, SH(1, 8, 16, 16));
  conv(g, &rng, "xl", "dwl", 8, 8, 12, 1, 6, 8, false);
  g_in(g, "xp", F32, 4, SH(1, 64, 20, 20));
  conv(g, &rng, "xp", "pw", 64, 64, 1, 1, 0, 1, true);
  g_in(g, "xs", F32, 4, SH(1, 16, 33, 33));
  conv(g, &rng, "xs", "im2col", 16, 32, 3, 2, 1, 1, true);
  conv(g, &rng, "x", "wino", 48, 16, 3, 1, 1, 1, true);
  // Winograd F(4x4, 3x3): 64+ channels, a map of 48+ (several tile rows a
  // thread).
  g_in(g, "x4", F32, 4, SH(1, 64, 50, 49));
  conv(g, &rng, "x4", "wino4", 64, 64, 3, 1, 1, 1, true);
  // A deep layer on a small map (ResNet's 7x7x512, scaled down): 4x4 = 16
  // output pixels are one column panel, so the packed weights' rows are
  // split across the threads instead.
  g_in(g, "xd", F32, 4, SH(1, 64, 7, 7));
  conv(g, &rng, "xd", "deep", 64, 192, 3, 2, 1, 1, true);
  // Two column panels (7x7 = 49 pixels) under weights of 256 rows: the
  // weights are the larger operand, so the rows are split (three ways)
  // rather than the two panels.
  g_in(g, "xm", F32, 4, SH(1, 32, 14, 14));
  conv(g, &rng, "xm", "rows", 32, 256, 3, 2, 1, 1, false);
  // A transposed convolution as GEMM + col2im (DCGAN's 4x4, stride 2).
  g_in(g, "xt", F32, 4, SH(1, 32, 8, 8));
  g_const(g, &rng, "wt", 4, SH(32, 16, 4, 4), -0.5f, 0.5f);
  g_const(g, &rng, "bt", 1, SH(16), -1, 1);
  vkp_attr_t ta[] = {at_is("pads", 4, SH(1, 1, 1, 1)), at_is("strides", 2, SH(2, 2))};
  g_node(g, "convt", VKP_OP_CONV_TRANSPOSE, "xt,wt,bt", "y_convt", 2, ta);
  g_out(g, "y_convt");
  // SqueezeNet's fire module: two convolutions written in place into their
  // channel concatenation; a concat along a later axis copies.
  g_in(g, "xf", F32, 4, SH(1, 16, 13, 13));
  g_const(g, &rng, "e1_w", 4, SH(32, 16, 1, 1), -0.5f, 0.5f);
  g_const(g, &rng, "e3_w", 4, SH(32, 16, 3, 3), -0.5f, 0.5f);
  vkp_attr_t pad1[] = {at_is("pads", 4, SH(1, 1, 1, 1))};
  g_node(g, "e1", VKP_OP_CONV2D, "xf,e1_w", "e1c", 0, NULL);
  g_node(g, "e1relu", VKP_OP_RELU, "e1c", "e1r", 0, NULL);
  g_node(g, "e3", VKP_OP_CONV2D, "xf,e3_w", "e3c", 1, pad1);
  g_node(g, "e3relu", VKP_OP_RELU, "e3c", "e3r", 0, NULL);
  vkp_attr_t c1[] = {at_i("axis", 1)}, c3[] = {at_i("axis", 3)};
  g_node(g, "fire", VKP_OP_CONCAT, "e1r,xf,e3r", "y_fire", 1, c1);
  g_node(g, "cat3", VKP_OP_CONCAT, "xf,xf", "y_cat3", 1, c3);
  g_out(g, "y_fire,y_cat3");
  check_threads(g, &rng, seed, -1, 1);
}

Test(cpu_threads, pooling, .timeout = 120) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("pool_threads");
  g_in(g, "x", F32, 4, SH(1, 48, 33, 33));
  vkp_attr_t mp[] = {at_is("kernel_shape", 2, SH(3, 3)), at_is("strides", 2, SH(2, 2)),
                     at_is("pads", 4, SH(0, 0, 1, 1))};
  g_node(g, "mp", VKP_OP_MAX_POOL2D, "x", "y_maxpool", 3, mp);
  vkp_attr_t ap[] = {at_is("kernel_shape", 2, SH(3, 3)), at_is("pads", 4, SH(1, 1, 1, 1)),
                     at_i("count_include_pad", 0)};
  g_node(g, "ap", VKP_OP_AVG_POOL2D, "x", "y_avg", 3, ap);
  g_in(g, "xg", F32, 4, SH(1, 256, 16, 16));
  g_node(g, "gap", VKP_OP_GLOBAL_AVG_POOL, "xg", "y_gap", 0, NULL);
  g_out(g, "y_maxpool,y_avg,y_gap");
  check_threads(g, &rng, seed, -1, 1);
}

// softmax, log_softmax, hardmax and lp_norm along the last and a middle
// axis; layer, group, instance norm; lrn.
Test(cpu_threads, normalisation, .timeout = 180) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("norm_threads");
  g_in(g, "rows", F32, 2, SH(64, 300));
  g_in(g, "mid", F32, 3, SH(16, 50, 40));
  vkp_attr_t last[] = {at_i("axis", -1)}, middle[] = {at_i("axis", 1)};
  static const struct {
    vkp_op_t op;
    const char *name;
  } lines[] = {{VKP_OP_SOFTMAX, "softmax"},
               {VKP_OP_LOG_SOFTMAX, "log_softmax"},
               {VKP_OP_HARDMAX, "hardmax"},
               {VKP_OP_LP_NORM, "lp_norm"}};
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i) {
    char n[32], y[32];
    snprintf(n, sizeof n, "%s_last", lines[i].name);
    snprintf(y, sizeof y, "y_%s_last", lines[i].name);
    g_node(g, n, lines[i].op, "rows", y, 1, last);
    g_out(g, y);
    snprintf(n, sizeof n, "%s_mid", lines[i].name);
    snprintf(y, sizeof y, "y_%s_mid", lines[i].name);
    g_node(g, n, lines[i].op, "mid", y, 1, middle);
    g_out(g, y);
  }
  g_in(g, "ln_x", F32, 2, SH(128, 256));
  g_const(g, &rng, "ln_s", 1, SH(256), 0.5f, 1.5f);
  g_const(g, &rng, "ln_b", 1, SH(256), -1, 1);
  vkp_attr_t ln[] = {at_i("axis", -1), at_f("epsilon", 1e-5)};
  g_node(g, "ln", VKP_OP_LAYER_NORM, "ln_x,ln_s,ln_b", "y_ln", 2, ln);
  g_in(g, "gn_x", F32, 4, SH(2, 32, 16, 16));
  g_const(g, &rng, "gn_s", 1, SH(32), 0.5f, 1.5f);
  g_const(g, &rng, "gn_b", 1, SH(32), -1, 1);
  vkp_attr_t gn[] = {at_i("num_groups", 4)};
  g_node(g, "gn", VKP_OP_GROUP_NORM, "gn_x,gn_s,gn_b", "y_gn", 1, gn);
  g_node(g, "in", VKP_OP_INSTANCE_NORM, "gn_x,gn_s,gn_b", "y_in", 0, NULL);
  vkp_attr_t lrn[] = {at_i("size", 5)};
  g_node(g, "lrn", VKP_OP_LRN, "gn_x", "y_lrn", 1, lrn);
  g_out(g, "y_ln,y_gn,y_in,y_lrn");
  check_threads(g, &rng, seed, -2, 2);
}

// Reductions over trailing, middle and leading axes (the last is one slice,
// not split), and mean_variance_norm.
Test(cpu_threads, reductions, .timeout = 120) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("reduce_threads");
  g_in(g, "x", F32, 3, SH(96, 16, 40));
  g_in(g, "xm", F32, 3, SH(48, 64, 20));
  vkp_attr_t tail[] = {at_is("axes", 1, SH(2)), at_i("keepdims", 0)};
  vkp_attr_t mid[] = {at_is("axes", 1, SH(1)), at_i("keepdims", 1)};
  vkp_attr_t lead[] = {at_is("axes", 1, SH(0)), at_i("keepdims", 0)};
  g_node(g, "sum", VKP_OP_REDUCE_SUM, "x", "y_sum", 2, tail);
  g_node(g, "lse", VKP_OP_REDUCE_LOG_SUM_EXP, "x", "y_lse", 2, tail);
  g_node(g, "l2", VKP_OP_REDUCE_L2, "x", "y_l2", 2, tail);
  g_node(g, "mean", VKP_OP_REDUCE_MEAN, "xm", "y_mean", 2, mid);
  g_node(g, "max", VKP_OP_REDUCE_MAX, "xm", "y_max", 2, mid);
  g_node(g, "lead", VKP_OP_REDUCE_SUM, "xm", "y_lead", 2, lead);
  g_in(g, "xv", F32, 4, SH(2, 24, 24, 24));
  vkp_attr_t mv[] = {at_is("axes", 2, SH(2, 3))};
  g_node(g, "mvn", VKP_OP_MEAN_VARIANCE_NORM, "xv", "y_mvn", 1, mv);
  const char *outs[] = {"y_sum", "y_lse", "y_l2", "y_mean", "y_max", "y_lead", "y_mvn"};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; ++i)
    g_out(g, outs[i]);
  check_threads(g, &rng, seed, -1, 1);
}

// Fused elementwise chains: a flat loop (every operand compact), a
// broadcasting one (rows), an integer chain, a batch_norm, and a GEMM
// whose epilogue carries a chain.
Test(cpu_threads, elementwise_and_gemm, .timeout = 120) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("ew_threads");
  g_in(g, "a", F32, 2, SH(64, 1000));
  g_in(g, "b", F32, 2, SH(64, 1000));
  g_node(g, "add", VKP_OP_ADD, "a,b", "s", 0, NULL);
  g_node(g, "sig", VKP_OP_SIGMOID, "s", "t", 0, NULL);
  g_node(g, "mul", VKP_OP_MUL, "t,a", "y_flat", 0, NULL);
  g_in(g, "r", F32, 2, SH(200, 300));
  g_in(g, "c", F32, 1, SH(300));
  g_node(g, "badd", VKP_OP_ADD, "r,c", "u", 0, NULL);
  g_node(g, "tanh", VKP_OP_TANH, "u", "y_bcast", 0, NULL);
  g_in(g, "i", VKP_DTYPE_INT32, 2, SH(64, 1000));
  g_in(g, "j", VKP_DTYPE_INT32, 1, SH(1000));
  g_node(g, "imul", VKP_OP_MUL, "i,j", "im", 0, NULL);
  g_node(g, "iadd", VKP_OP_ADD, "im,i", "y_int", 0, NULL);
  g_in(g, "bn_x", F32, 4, SH(1, 32, 40, 40));
  g_const(g, &rng, "sc", 1, SH(32), 0.5f, 1.5f);
  g_const(g, &rng, "bi", 1, SH(32), -1, 1);
  g_const(g, &rng, "mu", 1, SH(32), -1, 1);
  g_const(g, &rng, "var", 1, SH(32), 0.1f, 2);
  g_node(g, "bn", VKP_OP_BATCH_NORM, "bn_x,sc,bi,mu,var", "y_bn", 0, NULL);
  g_in(g, "ma", F32, 2, SH(96, 128));
  g_const(g, &rng, "mb", 2, SH(128, 128), -1, 1);
  g_node(g, "mm", VKP_OP_MATMUL, "ma,mb", "mmo", 0, NULL);
  g_node(g, "mrelu", VKP_OP_RELU, "mmo", "y_mm", 0, NULL);
  // Narrow: 20 columns (one panel), 200 rows split across the threads.
  g_in(g, "na", F32, 2, SH(200, 300));
  g_const(g, &rng, "nb", 2, SH(300, 20), -1, 1);
  g_node(g, "nmm", VKP_OP_MATMUL, "na,nb", "y_narrow", 0, NULL);
  // Batch-1 fully connected layers (rows of C as sums of rows of B, and
  // dot products with a transposed weight), columns split.
  g_in(g, "fx", F32, 2, SH(1, 512));
  g_const(g, &rng, "fw", 2, SH(512, 1000), -1, 1);
  g_const(g, &rng, "fwt", 2, SH(1000, 512), -1, 1);
  g_const(g, &rng, "fb", 1, SH(1000), -1, 1);
  g_node(g, "fc", VKP_OP_MATMUL, "fx,fw", "fco", 0, NULL);
  g_node(g, "fcrelu", VKP_OP_RELU, "fco", "y_fc", 0, NULL);
  vkp_attr_t tb[] = {at_i("transB", 1)};
  g_node(g, "linear", VKP_OP_GEMM, "fx,fwt,fb", "y_linear", 1, tb);
  const char *outs[] = {"y_flat", "y_bcast", "y_int", "y_bn", "y_mm", "y_fc", "y_linear",
                        "y_narrow"};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; ++i)
    g_out(g, outs[i]);
  check_threads(g, &rng, seed, -1, 1);
}
