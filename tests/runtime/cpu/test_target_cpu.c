// SPDX-License-Identifier: Apache-2.0
// runtime/cpu/target_cpu.c (with codegen/c): every op and every fused
// pattern on the "cpu" target against a double-precision reference, on fresh
// random inputs and awkward shapes (1, primes, sizes that are not multiples
// of any tile).
#include "codegen/c/emit.h"
#include "support/cpu_check.h"

#define RANK(...) ((int32_t)(sizeof(SH(__VA_ARGS__)) / sizeof(int64_t)))
#define F32 VKP_DTYPE_FLOAT32
static int source_calls(const vkp_graph_t *g, const char *call);

#define SETUP()                              \
  vkp_test_rng_t rng;                        \
  uint64_t seed = vkp_test_rng_init(&rng)

// Every unary elementwise op on a prime-sized 3-D tensor.
Test(cpu_ops, unary, .timeout = 120) {
  SETUP();
  static const vkp_op_t ops[] = {VKP_OP_SQRT, VKP_OP_EXP, VKP_OP_NEG, VKP_OP_ABS,
                                 VKP_OP_RELU, VKP_OP_LEAKY_RELU, VKP_OP_CLIP,
                                 VKP_OP_SIGMOID, VKP_OP_TANH, VKP_OP_ERF, VKP_OP_GELU,
                                 VKP_OP_IDENTITY};
  // One graph, one output per op: one compile.
  vkp_graph_t *ug = g_new("unary");
  g_in(ug, "x", F32, 3, SH(3, 7, 5));
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
    vkp_attr_t clip[] = {at_f("min", -0.3), at_f("max", 0.4)};
    vkp_attr_t leaky[] = {at_f("alpha", 0.2)};
    int32_t na = ops[i] == VKP_OP_CLIP ? 2 : ops[i] == VKP_OP_LEAKY_RELU ? 1 : 0;
    char out[32];
    snprintf(out, sizeof out, "y_%s", vkp_op_name(ops[i]));
    // sqrt reads |x| so that every input is in its domain.
    if (ops[i] == VKP_OP_SQRT) {
      g_node(ug, "abs_for_sqrt", VKP_OP_ABS, "x", "x_abs", 0, NULL);
      g_node(ug, vkp_op_name(ops[i]), ops[i], "x_abs", out, 0, NULL);
    } else {
      g_node(ug, vkp_op_name(ops[i]), ops[i], "x", out, na,
             ops[i] == VKP_OP_CLIP ? clip : leaky);
    }
    g_out(ug, out);
  }
  vkp_attr_t a[] = {at_s("approximate", "tanh")};
  g_node(ug, "gelu_tanh", VKP_OP_GELU, "x", "y_gelu_tanh", 1, a);
  g_out(ug, "y_gelu_tanh");
  cpu_check(ug, &rng, seed, -2.0f, 2.0f, 1);
}

// Binary ops with NumPy broadcasting in several patterns.
Test(cpu_ops, binary_broadcast, .timeout = 120) {
  SETUP();
  static const vkp_op_t ops[] = {VKP_OP_ADD, VKP_OP_SUB, VKP_OP_MUL, VKP_OP_DIV, VKP_OP_POW};
  vkp_graph_t *g = g_new("binary");
  g_in(g, "a", F32, 3, SH(2, 3, 5));
  g_in(g, "b", F32, 2, SH(3, 1));
  g_in(g, "c", F32, 3, SH(2, 1, 5));
  g_in(g, "d", F32, 0, NULL);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
    static const char *const pairs[3] = {"a,b", "c,b", "a,d"};
    for (int p = 0; p < 3; ++p) {
      char name[32], out[32];
      snprintf(name, sizeof name, "%s_%d", vkp_op_name(ops[i]), p);
      snprintf(out, sizeof out, "y_%s_%d", vkp_op_name(ops[i]), p);
      g_node(g, name, ops[i], pairs[p], out, 0, NULL);
      g_out(g, out);
    }
  }
  cpu_check(g, &rng, seed, 0.5f, 2.0f, 1);
  // A constant exponent of 2 is a product (emit.c); other constants keep
  // powf. Negative bases, and NaN in the input.
  vkp_graph_t *sq = g_new("pow_constant");
  g_in(sq, "x", F32, 2, SH(7, 19));
  const float two = 2.0f, three = 3.0f, half = 0.5f;
  g_const_data(sq, "two", F32, 0, NULL, &two);
  g_const_data(sq, "three", F32, 1, SH(1), &three);
  g_const_data(sq, "half", F32, 0, NULL, &half);
  g_node(sq, "sq", VKP_OP_POW, "x,two", "y2", 0, NULL);
  g_node(sq, "cube", VKP_OP_POW, "x,three", "y3", 0, NULL);
  g_node(sq, "abs", VKP_OP_ABS, "x", "ax", 0, NULL);
  g_node(sq, "root", VKP_OP_POW, "ax,half", "yh", 0, NULL);
  g_out(sq, "y2,y3,yh");
  g_validate(sq);
  int pow_calls = source_calls(sq, "powf(");
  // (the prelude has one powf of its own)
  cr_assert_eq(pow_calls, 3, "x ** 2 as a product, the others powf: %d powf", pow_calls);
  cpu_check_nan(sq, &rng, seed, -3.0f, 3.0f, 1, 23);
}

Test(cpu_ops, integer_elementwise, .timeout = 60) {
  SETUP();
  for (int dt = 0; dt < 2; ++dt) {
    vkp_graph_t *g = g_new(dt ? "int64" : "int32");
    vkp_dtype_t t = dt ? VKP_DTYPE_INT64 : VKP_DTYPE_INT32;
    g_in(g, "a", t, 2, SH(4, 7));
    g_in(g, "b", t, 1, SH(7));
    g_node(g, "add", VKP_OP_ADD, "a,b", "s", 0, NULL);
    g_node(g, "mul", VKP_OP_MUL, "s,b", "m", 0, NULL);
    g_node(g, "div", VKP_OP_DIV, "m,a", "q", 0, NULL);
    g_node(g, "neg", VKP_OP_NEG, "q", "n", 0, NULL);
    g_node(g, "abs", VKP_OP_ABS, "a", "p", 0, NULL);
    g_node(g, "relu", VKP_OP_RELU, "n", "r", 0, NULL);
    g_node(g, "sub", VKP_OP_SUB, "r,p", "y", 0, NULL);
    g_out(g, "y");
    cpu_check(g, &rng, seed, 0, 0, 1);
  }
}

// Adds matmul case `id` (inputs a<id>, b<id>, output y<id>) to `g`.
static void matmul_case(vkp_graph_t *g, vkp_test_rng_t *rng, int id, int32_t ra,
                        const int64_t *sa, int32_t rb, const int64_t *sb, bool const_b) {
  char a[16], b[16], y[16], n[16], ins[40];
  snprintf(a, sizeof a, "a%d", id);
  snprintf(b, sizeof b, "b%d", id);
  snprintf(y, sizeof y, "y%d", id);
  snprintf(n, sizeof n, "mm%d", id);
  snprintf(ins, sizeof ins, "%s,%s", a, b);
  g_in(g, a, F32, ra, sa);
  if (const_b) g_const(g, rng, b, rb, sb, -1, 1);
  else g_in(g, b, F32, rb, sb);
  g_node(g, n, VKP_OP_MATMUL, ins, y, 0, NULL);
  g_out(g, y);
}

Test(cpu_ops, matmul_shapes, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("matmul");
  matmul_case(g, &rng, 0, 2, SH(1, 1), 2, SH(1, 1), false);
  matmul_case(g, &rng, 1, 2, SH(17, 13), 2, SH(13, 29), true);
  matmul_case(g, &rng, 2, 2, SH(67, 300), 2, SH(300, 131), true);  // K > KC
  matmul_case(g, &rng, 3, 2, SH(2, 37), 2, SH(37, 11), false);     // small M
  matmul_case(g, &rng, 4, 4, SH(2, 3, 5, 7), 2, SH(7, 4), false);
  matmul_case(g, &rng, 5, 3, SH(3, 5, 7), 4, SH(2, 1, 7, 3), false);
  matmul_case(g, &rng, 6, 1, SH(7), 2, SH(7, 3), false);
  matmul_case(g, &rng, 7, 2, SH(5, 7), 1, SH(7), false);
  matmul_case(g, &rng, 8, 1, SH(7), 1, SH(7), false);
  matmul_case(g, &rng, 9, 2, SH(300, 40), 2, SH(40, 333), false);  // M > MC
  // Edge row tiles (AVX-512, MR = 14): 8 rows past a panel, 2 and 4 rows,
  // each with full, half and narrower last column panels.
  matmul_case(g, &rng, 10, 2, SH(22, 45), 2, SH(45, 40), true);
  matmul_case(g, &rng, 11, 2, SH(16, 270), 2, SH(270, 16), false);
  matmul_case(g, &rng, 12, 2, SH(32, 9), 2, SH(9, 71), false);
  cpu_check(g, &rng, seed, -1, 1, 1);
}

Test(cpu_ops, gemm_variants, .timeout = 120) {
  SETUP();
  for (int t = 0; t < 4; ++t) {
    vkp_graph_t *g = g_new("gemm");
    bool ta = t & 1, tb = t & 2;
    int64_t M = 19, N = 23, K = 31;
    g_in(g, "a", F32, 2, ta ? SH(K, M) : SH(M, K));
    g_const(g, &rng, "b", 2, tb ? SH(N, K) : SH(K, N), -1, 1);
    g_const(g, &rng, "c", 1, SH(N), -1, 1);
    g_in(g, "c2", F32, 2, SH(M, 1));
    vkp_attr_t a[] = {at_i("transA", ta), at_i("transB", tb), at_f("alpha", 0.7),
                      at_f("beta", 1.3)};
    g_node(g, "fc", VKP_OP_GEMM, "a,b,c", "y", 4, a);
    g_node(g, "fc2", VKP_OP_GEMM, "a,b,c2", "y2", 4, a);
    g_node(g, "fc3", VKP_OP_GEMM, "a,b", "y3", 4, a);
    g_out(g, "y,y2,y3");
    cpu_check(g, &rng, seed, -1, 1, 1);
  }
}

// Adds conv case `id` (input x<id>, output y<id>) to `g`.
static void conv_case(vkp_graph_t *g, vkp_test_rng_t *rng, int id, const int64_t *xs,
                      int64_t M, int64_t KH, int64_t KW, const int64_t *pads,
                      const int64_t *strides, const int64_t *dil, int64_t group, bool bias) {
  char x[16], w[16], b[16], y[16], n[16], ins[48];
  snprintf(x, sizeof x, "x%d", id);
  snprintf(w, sizeof w, "w%d", id);
  snprintf(b, sizeof b, "b%d", id);
  snprintf(y, sizeof y, "y%d", id);
  snprintf(n, sizeof n, "conv%d", id);
  snprintf(ins, sizeof ins, bias ? "%s,%s,%s" : "%s,%s", x, w, b);
  g_in(g, x, F32, 4, xs);
  g_const(g, rng, w, 4, SH(M, xs[1] / group, KH, KW), -1, 1);
  if (bias) g_const(g, rng, b, 1, SH(M), -1, 1);
  vkp_attr_t a[] = {at_is("pads", 4, pads), at_is("strides", 2, strides),
                    at_is("dilations", 2, dil), at_i("group", group)};
  g_node(g, n, VKP_OP_CONV2D, ins, y, 4, a);
  g_out(g, y);
}

// Counts the calls `call` (e.g. "vkp_conv_winograd(xn") in the C source
// generated for validated `g`.
static int source_calls(const vkp_graph_t *g, const char *call) {
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  int n = 0;
  for (const char *p = code.source; (p = strstr(p, call)); ++p) ++n;
  vkp_codegen_c_deinit(&code);
  return n;
}

Test(cpu_ops, conv2d_shapes, .timeout = 180) {
  SETUP();
  const int64_t *p0 = SH(0, 0, 0, 0), *p1 = SH(1, 1, 1, 1), *s1 = SH(1, 1), *s2 = SH(2, 2);
  vkp_graph_t *g = g_new("conv");
  conv_case(g, &rng, 0, SH(1, 1, 1, 1), 1, 1, 1, p0, s1, s1, 1, false);
  conv_case(g, &rng, 1, SH(2, 5, 7, 7), 11, 1, 1, p0, s1, s1, 1, true);   // pointwise
  conv_case(g, &rng, 2, SH(1, 3, 13, 11), 7, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 3, SH(1, 3, 17, 17), 5, 7, 7, SH(3, 3, 3, 3), s2, s1, 1, true);
  conv_case(g, &rng, 4, SH(1, 4, 9, 10), 6, 3, 2, SH(0, 1, 2, 0), SH(2, 1), SH(2, 1), 2, true);
  conv_case(g, &rng, 5, SH(2, 6, 11, 9), 6, 3, 3, p1, s1, s1, 6, true);  // depthwise
  conv_case(g, &rng, 6, SH(1, 6, 11, 9), 6, 3, 3, p1, s2, SH(2, 2), 6, false);
  conv_case(g, &rng, 7, SH(1, 5, 20, 37), 5, 5, 3, SH(2, 0, 1, 3), SH(3, 2), s1, 5, true);
  conv_case(g, &rng, 8, SH(1, 37, 23, 19), 41, 3, 3, p1, s1, s1, 1, true);  // K > KC
  // Strides 2 and 1 on rows wide enough for the im2col copy's vector path
  // (16+ columns inside the row; runs of every length, the last vector
  // overlapping, short runs as one vector), with both edges padded or not;
  // over 8 input channels (shallower inputs take vkp_conv_direct).
  conv_case(g, &rng, 9, SH(1, 9, 12, 75), 6, 7, 7, SH(3, 3, 3, 3), s2, s1, 1, true);
  conv_case(g, &rng, 10, SH(1, 10, 9, 70), 5, 3, 3, SH(0, 1, 1, 0), s2, s1, 1, false);
  conv_case(g, &rng, 11, SH(1, 12, 6, 67), 3, 1, 1, p0, s2, s1, 1, true);
  conv_case(g, &rng, 14, SH(1, 9, 5, 45), 7, 3, 3, p1, s1, s1, 1, true);
  // GEMM edges: N = 196 (6 x 32 + 4) and 49 (32 + 16 + 1) through the column
  // tile, M = 30 (28 + 2) through the row tile that writes C directly; K =
  // 300 > KC adds the second depth block onto the first.
  conv_case(g, &rng, 12, SH(1, 20, 14, 14), 30, 1, 1, p0, s1, s1, 1, true);
  conv_case(g, &rng, 13, SH(1, 300, 7, 7), 30, 1, 1, p0, s1, s1, 1, false);
  // Output rows under a vector wide: the im2col by per-tap offsets (stride
  // 2 over two KC slabs and two images, a 5x5 window with asymmetric pads
  // and dilation, 7x7 at stride 2, the last panel partial); over 49 taps
  // the run copy again.
  conv_case(g, &rng, 15, SH(2, 40, 13, 13), 30, 3, 3, p1, s2, s1, 1, true);
  conv_case(g, &rng, 16, SH(1, 12, 10, 12), 10, 5, 5, SH(2, 1, 0, 3), s1, SH(1, 2), 1, true);
  conv_case(g, &rng, 17, SH(1, 9, 15, 15), 8, 7, 7, SH(3, 3, 3, 3), s2, s1, 1, false);
  conv_case(g, &rng, 18, SH(1, 9, 12, 12), 5, 8, 8, SH(1, 1, 1, 1), s1, s1, 1, true);
  cpu_check(g, &rng, seed, -1, 1, 1);
  // Shallow inputs (a CNN's first layer) read by the register tile itself
  // (vkp_conv_direct): strides 1 and 2 (and 1 x 2), 3x3 and 7x7 windows,
  // padded or not (in place), dilation 2, rows of whole tiles, a tile and a
  // half, and a one-vector last tile; output channels in full, 8-row and
  // 4-row panels; several images; one and two threads.
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *dg = g_new("conv_direct");
    conv_case(dg, &rng, 0, SH(1, 3, 70, 70), 20, 3, 3, p1, s2, s1, 1, true);
    conv_case(dg, &rng, 1, SH(2, 3, 45, 80), 16, 7, 7, SH(3, 3, 3, 3), s2, s1, 1, true);
    conv_case(dg, &rng, 2, SH(1, 4, 6, 67), 33, 3, 3, p1, s1, s1, 1, false);
    conv_case(dg, &rng, 3, SH(1, 2, 9, 80), 5, 3, 3, p0, s2, s1, 1, true);
    conv_case(dg, &rng, 4, SH(1, 3, 11, 72), 8, 3, 3, SH(2, 2, 2, 2), s1, SH(2, 2), 1, true);
    conv_case(dg, &rng, 5, SH(1, 1, 7, 66), 3, 3, 2, SH(1, 0, 0, 1), SH(1, 2), s1, 1, true);
    conv_case(dg, &rng, 6, SH(1, 8, 5, 64), 28, 3, 3, p1, s1, s1, 1, true);
    g_validate(dg);
    cr_assert_eq(source_calls(dg, "vkp_conv_direct(xn"), 7);
    cpu_check(dg, &rng, seed, -1, 1, threads);
  }
  // Two threads inside the stage (the GEMM's columns split between them;
  // on small maps with many output channels its rows, the B panels packed
  // once by both threads: an im2col of two KC slabs and a plain matrix).
  vkp_graph_t *t = g_new("conv_threads");
  conv_case(t, &rng, 0, SH(1, 37, 23, 19), 41, 3, 3, p1, s1, s1, 1, true);
  conv_case(t, &rng, 1, SH(1, 16, 40, 40), 24, 1, 1, p0, s1, s1, 1, false);
  conv_case(t, &rng, 2, SH(1, 40, 13, 13), 128, 3, 3, p1, s2, s1, 1, true);
  conv_case(t, &rng, 3, SH(1, 64, 14, 14), 256, 1, 1, p0, s1, s1, 1, false);
  cpu_check(t, &rng, seed, -1, 1, 2);
}


// Counts the Winograd F(2x2, 3x3) calls in the C source generated for `g`.
static int winograd_calls(const vkp_graph_t *g) {
  return source_calls(g, "vkp_conv_winograd(xn");
}

// 3x3 stride-1 convolutions with 16 or more channels take the Winograd
// F(2x2, 3x3) path: odd and even maps, asymmetric and oversized padding,
// a 1x1 map, more input channels than one GEMM depth block (256), several
// blocks of tile rows, a fused residual block, and two threads.
Test(cpu_ops, conv2d_winograd, .timeout = 180) {
  SETUP();
  const int64_t *p1 = SH(1, 1, 1, 1), *s1 = SH(1, 1);
  vkp_graph_t *g = g_new("winograd");
  conv_case(g, &rng, 0, SH(1, 16, 8, 8), 16, 3, 3, p1, s1, s1, 1, false);
  conv_case(g, &rng, 1, SH(2, 19, 11, 7), 23, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 2, SH(1, 17, 9, 13), 16, 3, 3, SH(0, 2, 1, 0), s1, s1, 1, true);
  conv_case(g, &rng, 3, SH(1, 16, 1, 1), 16, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 4, SH(1, 300, 5, 6), 20, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 5, SH(1, 256, 20, 16), 32, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 6, SH(1, 16, 6, 6), 16, 3, 3, SH(0, 0, 0, 0), s1, s1, 1, false);
  conv_case(g, &rng, 7, SH(1, 16, 4, 5), 18, 3, 3, SH(3, 3, 3, 3), s1, s1, 1, true);
  g_validate(g);
  cr_assert_eq(winograd_calls(g), 8);
  cpu_check(g, &rng, seed, -1, 1, 1);

  vkp_graph_t *r = g_new("winograd_resblock");
  g_in(r, "x", F32, 4, SH(1, 32, 13, 10));
  g_const(r, &rng, "w1", 4, SH(32, 32, 3, 3), -0.2f, 0.2f);
  g_const(r, &rng, "b1", 1, SH(32), -1, 1);
  g_const(r, &rng, "sc", 1, SH(32), 0.5f, 1.5f);
  g_const(r, &rng, "bi", 1, SH(32), -1, 1);
  g_const(r, &rng, "mu", 1, SH(32), -1, 1);
  g_const(r, &rng, "var", 1, SH(32), 0.1f, 2);
  vkp_attr_t c3[] = {at_is("pads", 4, p1)};
  g_node(r, "conv1", VKP_OP_CONV2D, "x,w1,b1", "c1", 1, c3);
  g_node(r, "bn1", VKP_OP_BATCH_NORM, "c1,sc,bi,mu,var", "n1", 0, NULL);
  g_node(r, "relu1", VKP_OP_RELU, "n1", "r1", 0, NULL);
  g_node(r, "res", VKP_OP_ADD, "r1,x", "y", 0, NULL);
  g_out(r, "y");
  g_validate(r);
  cr_assert_eq(winograd_calls(r), 1);
  cpu_check(r, &rng, seed, -1, 1, 2);

  // Below 16 channels, and strided or dilated, the im2col GEMM stays.
  vkp_graph_t *d = g_new("not_winograd");
  conv_case(d, &rng, 0, SH(1, 8, 9, 9), 16, 3, 3, p1, s1, s1, 1, false);
  conv_case(d, &rng, 1, SH(1, 16, 9, 9), 16, 3, 3, p1, SH(2, 2), s1, 1, false);
  conv_case(d, &rng, 2, SH(1, 16, 9, 9), 16, 3, 3, p1, s1, SH(2, 2), 1, false);
  g_validate(d);
  cr_assert_eq(winograd_calls(d), 0);
  cpu_check(d, &rng, seed, -1, 1, 1);
}

// 64+ input and output channels on maps of 48+ take Winograd F(4x4, 3x3):
// widths and heights that leave a partial last tile (1, 2 and 3 columns or
// rows of it), odd channel counts, asymmetric and oversized padding, more
// input channels than one GEMM depth block (256), several blocks of tile
// rows, a batch of two, a fused bias + residual + relu epilogue, and two
// threads. Just below the thresholds F(2x2, 3x3) stays; 7x7 maps with large
// weights take the im2col GEMM.
Test(cpu_ops, conv2d_winograd4, .timeout = 300) {
  SETUP();
  const int64_t *p1 = SH(1, 1, 1, 1), *s1 = SH(1, 1);
  vkp_graph_t *g = g_new("winograd4");
  conv_case(g, &rng, 0, SH(1, 64, 48, 48), 64, 3, 3, p1, s1, s1, 1, false);
  conv_case(g, &rng, 1, SH(2, 67, 49, 50), 71, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 2, SH(1, 65, 51, 55), 64, 3, 3, SH(0, 2, 1, 0), s1, s1, 1, true);
  conv_case(g, &rng, 3, SH(1, 260, 48, 49), 64, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 4, SH(1, 64, 61, 48), 66, 3, 3, p1, s1, s1, 1, true);
  conv_case(g, &rng, 5, SH(1, 64, 44, 45), 64, 3, 3, SH(3, 4, 5, 3), s1, s1, 1, false);
  g_validate(g);
  cr_assert_eq(source_calls(g, "vkp_conv_winograd4(xn"), 6);
  cr_assert_eq(winograd_calls(g), 0);
  cpu_check(g, &rng, seed, -1, 1, 1);

  vkp_graph_t *r = g_new("winograd4_resblock");
  g_in(r, "x", F32, 4, SH(1, 64, 50, 48));
  g_const(r, &rng, "w1", 4, SH(64, 64, 3, 3), -0.2f, 0.2f);
  g_const(r, &rng, "b1", 1, SH(64), -1, 1);
  vkp_attr_t c3[] = {at_is("pads", 4, p1)};
  g_node(r, "conv1", VKP_OP_CONV2D, "x,w1,b1", "c1", 1, c3);
  g_node(r, "res", VKP_OP_ADD, "c1,x", "s1", 0, NULL);
  g_node(r, "relu1", VKP_OP_RELU, "s1", "y", 0, NULL);
  g_out(r, "y");
  g_validate(r);
  cr_assert_eq(source_calls(r, "vkp_conv_winograd4(xn"), 1);
  cpu_check(r, &rng, seed, -1, 1, 2);

  vkp_graph_t *d = g_new("winograd4_not");
  conv_case(d, &rng, 0, SH(1, 48, 48, 48), 64, 3, 3, p1, s1, s1, 1, false);
  conv_case(d, &rng, 1, SH(1, 64, 46, 48), 64, 3, 3, p1, s1, s1, 1, false);
  conv_case(d, &rng, 2, SH(1, 176, 7, 7), 176, 3, 3, p1, s1, s1, 1, true);
  g_validate(d);
  cr_assert_eq(source_calls(d, "vkp_conv_winograd4(xn"), 0);
  cr_assert_eq(winograd_calls(d), 2);
  cpu_check(d, &rng, seed, -1, 1, 1);
}

// Depthwise shapes for each path of vkp_conv_depthwise: 3x3 row blocks
// (stride 1 and 2, maps wider and narrower than a vector, several bands),
// the flat correlation (7x7 maps, dilation, strides 3, other windows), and
// windows over 121 taps; with asymmetric pads, windows larger than the
// input, 1x1 maps and several images.
Test(cpu_ops, conv_depthwise, .timeout = 180) {
  SETUP();
  const int64_t *p1 = SH(1, 1, 1, 1), *s1 = SH(1, 1), *s2 = SH(2, 2);
  vkp_graph_t *g = g_new("depthwise");
  conv_case(g, &rng, 0, SH(1, 3, 112, 112), 3, 3, 3, p1, s1, s1, 3, true);
  conv_case(g, &rng, 1, SH(1, 3, 112, 111), 3, 3, 3, p1, s2, s1, 3, false);
  conv_case(g, &rng, 2, SH(2, 5, 56, 56), 5, 3, 3, p1, s1, s1, 5, true);
  conv_case(g, &rng, 3, SH(1, 7, 29, 30), 7, 3, 3, SH(0, 1, 1, 0), s2, s1, 7, false);
  conv_case(g, &rng, 4, SH(1, 16, 14, 14), 16, 3, 3, p1, s1, s1, 16, true);
  conv_case(g, &rng, 5, SH(3, 12, 13, 12), 12, 3, 3, SH(1, 0, 2, 1), s1, s1, 12, false);
  conv_case(g, &rng, 6, SH(1, 20, 7, 7), 20, 3, 3, p1, s1, s1, 20, true);
  conv_case(g, &rng, 7, SH(1, 9, 14, 14), 9, 3, 3, p1, s2, s1, 9, false);
  conv_case(g, &rng, 8, SH(1, 6, 1, 1), 6, 3, 3, p1, s1, s1, 6, true);
  conv_case(g, &rng, 9, SH(1, 4, 30, 27), 4, 3, 3, SH(2, 2, 2, 2), s1, s2, 4, true);
  conv_case(g, &rng, 10, SH(1, 5, 20, 23), 5, 5, 5, SH(2, 1, 0, 3), SH(3, 3), s1, 5, false);
  conv_case(g, &rng, 11, SH(1, 3, 3, 3), 3, 5, 5, SH(2, 2, 2, 2), s1, s1, 3, true);
  conv_case(g, &rng, 12, SH(1, 3, 2, 2), 3, 7, 7, SH(3, 3, 2, 2), s1, s1, 3, false);
  conv_case(g, &rng, 13, SH(1, 4, 19, 33), 4, 3, 5, SH(1, 2, 0, 1), SH(1, 2), SH(1, 3), 4, true);
  conv_case(g, &rng, 14, SH(1, 2, 15, 15), 2, 12, 11, SH(5, 5, 6, 5), s1, s1, 2, false);
  conv_case(g, &rng, 15, SH(2, 3, 40, 41), 3, 3, 3, SH(1, 1, 0, 0), SH(2, 1), s1, 3, true);
  // Column stride 2, both column phases copied in one pass: left pads 0,
  // 1, 2 and 3 (the phases start a column apart either way round, or the
  // pass does not apply), odd and even widths, rows that need exact copies
  // at the end of the input, several bands, a 5x5 (flat) window, channel
  // counts that are no multiple of anything.
  conv_case(g, &rng, 16, SH(1, 19, 57, 57), 19, 3, 3, SH(2, 2, 2, 2), s2, s1, 19, true);
  conv_case(g, &rng, 17, SH(1, 7, 18, 17), 7, 3, 3, SH(0, 0, 1, 1), s2, s1, 7, false);
  conv_case(g, &rng, 18, SH(2, 5, 150, 66), 5, 3, 3, SH(1, 3, 1, 0), s2, s1, 5, true);
  conv_case(g, &rng, 19, SH(1, 6, 23, 40), 6, 5, 5, SH(2, 1, 2, 2), s2, s1, 6, false);
  conv_case(g, &rng, 20, SH(1, 3, 9, 33), 3, 3, 3, SH(1, 1, 1, 1), SH(1, 2), s1, 3, true);
  // Stride 1 on maps narrower than 3/4 of a vector, outputs the input's
  // size (the masked path, whole vectors across row ends): several images
  // and channels (the first and last channels' reads go through scratch), a
  // 5x5 window, dilation 2, asymmetric pads, a map of 16 floats (one
  // vector at AVX-512), a map of 9 (too small: the flat correlation).
  conv_case(g, &rng, 21, SH(2, 17, 7, 7), 17, 3, 3, p1, s1, s1, 17, true);
  conv_case(g, &rng, 22, SH(1, 11, 8, 9), 11, 5, 5, SH(2, 2, 2, 2), s1, s1, 11, false);
  conv_case(g, &rng, 23, SH(1, 6, 6, 11), 6, 3, 3, SH(2, 2, 2, 2), s1, SH(2, 2), 6, true);
  conv_case(g, &rng, 24, SH(1, 5, 9, 6), 5, 3, 3, SH(0, 2, 2, 0), s1, s1, 5, true);
  conv_case(g, &rng, 25, SH(1, 4, 4, 4), 4, 3, 3, p1, s1, s1, 4, false);
  conv_case(g, &rng, 26, SH(1, 3, 3, 3), 3, 3, 3, p1, s1, s1, 3, true);
  // The masked path at stride 2 (the input's four phase planes, each the
  // output's row length): even and odd maps, TensorFlow's "same" pads (0 at
  // the top and left), a 5x5 window, several images; not taken where the
  // planes' columns would not fit the output row (pads 0).
  conv_case(g, &rng, 27, SH(2, 13, 14, 14), 13, 3, 3, p1, s2, s1, 13, true);
  conv_case(g, &rng, 28, SH(1, 6, 15, 15), 6, 3, 3, p1, s2, s1, 6, false);
  conv_case(g, &rng, 29, SH(1, 5, 14, 14), 5, 3, 3, SH(0, 0, 1, 1), s2, s1, 5, true);
  conv_case(g, &rng, 30, SH(1, 7, 14, 14), 7, 5, 5, SH(2, 2, 2, 2), s2, s1, 7, true);
  conv_case(g, &rng, 31, SH(1, 4, 16, 16), 4, 3, 3, SH(0, 0, 0, 0), s2, s1, 4, true);
  cpu_check(g, &rng, seed, -1, 1, 1);
}

// The channels-last path for small maps (vkp__dw_t16 with AVX-512: 16
// channels transposed at a time, the rest through the planar paths):
// stride 1 and 2, even and odd maps, a 5x5 window, dilation 2, asymmetric
// pads, windows reaching past the input's end, channel counts with a
// remainder (and, at 2 threads, channel ranges that start off a multiple of
// 16), several images; bias and no bias; then the clamp epilogue in its
// registers, NaN included, and one it does not fuse.
static void clamp_branch(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name, const char *x,
                         int64_t c, int64_t m, int64_t group, int64_t k, int64_t stride,
                         bool bias, const char *chain);

Test(cpu_ops, conv_depthwise_channels_last, .timeout = 180) {
  SETUP();
  const int64_t *p1 = SH(1, 1, 1, 1), *s1 = SH(1, 1), *s2 = SH(2, 2);
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("depthwise_t16");
    conv_case(g, &rng, 0, SH(1, 32, 14, 14), 32, 3, 3, p1, s2, s1, 32, true);
    conv_case(g, &rng, 1, SH(2, 35, 9, 10), 35, 3, 3, SH(0, 1, 1, 0), s1, s1, 35, false);
    conv_case(g, &rng, 2, SH(1, 48, 13, 14), 48, 3, 3, p1, s2, s1, 48, true);
    conv_case(g, &rng, 3, SH(1, 17, 8, 8), 17, 5, 5, SH(2, 2, 2, 2), s1, s1, 17, false);
    conv_case(g, &rng, 4, SH(1, 16, 10, 11), 16, 3, 3, SH(2, 2, 2, 2), s1, SH(2, 2), 16, true);
    conv_case(g, &rng, 5, SH(1, 33, 9, 7), 33, 5, 5, SH(3, 1, 2, 4), s2, s1, 33, true);
    conv_case(g, &rng, 6, SH(1, 64, 16, 16), 64, 3, 3, p1, s1, s1, 64, true);
    cpu_check(g, &rng, seed, -1, 1, threads);
    vkp_graph_t *c = g_new("depthwise_t16_clamp");
    g_in(c, "x", F32, 4, SH(1, 40, 9, 10));
    clamp_branch(c, &rng, "relu6", "x", 40, 40, 40, 3, 1, true, "6");
    clamp_branch(c, &rng, "relu2", "x", 40, 40, 40, 3, 2, true, "r");
    clamp_branch(c, &rng, "nobias", "x", 40, 40, 40, 3, 1, false, "6");
    clamp_branch(c, &rng, "general", "x", 40, 40, 40, 3, 1, true, "cr");
    cpu_check_nan(c, &rng, seed, -3, 3, threads, 97);
  }
}

// 3x3 stride-2 depthwise straight from the input rows (vkp__dw3s2 with
// AVX-512: left padding 0 or 1, at least 16 outputs a row): even and odd
// widths, rows of one chunk and a part, top padding 0, 1 and 2, bottom
// padding past the input, odd output row counts (a last single row),
// several images; at two threads the rows split (and, for few rows, the
// channels); the clamp in registers with NaN, and an epilogue it does not
// fuse.
Test(cpu_ops, conv_depthwise_stride2_rows, .timeout = 180) {
  SETUP();
  const int64_t *s1 = SH(1, 1), *s2 = SH(2, 2), *p1 = SH(1, 1, 1, 1);
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("depthwise_s2_rows");
    conv_case(g, &rng, 0, SH(1, 5, 112, 112), 5, 3, 3, p1, s2, s1, 5, true);
    conv_case(g, &rng, 1, SH(2, 3, 35, 37), 3, 3, 3, p1, s2, s1, 3, false);
    conv_case(g, &rng, 2, SH(1, 4, 40, 64), 4, 3, 3, SH(0, 0, 1, 1), s2, s1, 4, true);
    conv_case(g, &rng, 3, SH(1, 3, 21, 33), 3, 3, 3, SH(2, 0, 1, 0), s2, s1, 3, true);
    conv_case(g, &rng, 4, SH(1, 6, 9, 71), 6, 3, 3, SH(0, 1, 2, 1), s2, s1, 6, false);
    conv_case(g, &rng, 5, SH(1, 2, 30, 34), 2, 3, 3, SH(1, 0, 0, 0), s2, s1, 2, true);
    cpu_check(g, &rng, seed, -1, 1, threads);
    vkp_graph_t *c = g_new("depthwise_s2_rows_clamp");
    g_in(c, "x", F32, 4, SH(1, 7, 28, 45));
    clamp_branch(c, &rng, "relu6", "x", 7, 7, 7, 3, 2, true, "6");
    clamp_branch(c, &rng, "relu", "x", 7, 7, 7, 3, 2, false, "r");
    clamp_branch(c, &rng, "general", "x", 7, 7, 7, 3, 2, true, "cr");
    cpu_check_nan(c, &rng, seed, -3, 3, threads, 97);
  }
}

// Pointwise convolutions on maps of 16 to 64 pixels that are not whole
// 32-pixel tiles take the output channels across the vector lanes
// (vkp_conv_pointwise_t: the transposed product, then a transpose into the
// planes): 7x7 with a K of several KC blocks, 4x4 (16 pixels: one row
// panel and a 2-row edge), 5x9, 7x9 (63); channel counts of whole and half
// panels (32, 48, 80, 112); several images; no bias; a residual add that
// the transpose cannot fuse; the clamp epilogue in the transposed rows,
// NaN included. One and two threads (the product split by channels).
Test(cpu_ops, conv_pointwise_channels_across, .timeout = 180) {
  SETUP();
  const int64_t *p0 = SH(0, 0, 0, 0), *s1 = SH(1, 1);
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("pointwise_t");
    conv_case(g, &rng, 0, SH(1, 40, 7, 7), 32, 1, 1, p0, s1, s1, 1, true);
    conv_case(g, &rng, 1, SH(2, 300, 7, 7), 48, 1, 1, p0, s1, s1, 1, false);
    conv_case(g, &rng, 2, SH(1, 24, 4, 4), 80, 1, 1, p0, s1, s1, 1, true);
    conv_case(g, &rng, 3, SH(1, 17, 5, 9), 112, 1, 1, p0, s1, s1, 1, true);
    conv_case(g, &rng, 4, SH(3, 64, 7, 9), 64, 1, 1, p0, s1, s1, 1, true);
    g_validate(g);
    cr_assert_eq(source_calls(g, "vkp_conv_pointwise_t(xn"), 5);
    cpu_check(g, &rng, seed, -1, 1, threads);
    vkp_graph_t *r = g_new("pointwise_t_residual");
    g_in(r, "x", F32, 4, SH(2, 32, 7, 7));
    g_const(r, &rng, "w", 4, SH(32, 32, 1, 1), -0.5f, 0.5f);
    g_const(r, &rng, "b", 1, SH(32), -1, 1);
    g_node(r, "conv", VKP_OP_CONV2D, "x,w,b", "c", 0, NULL);
    g_node(r, "res", VKP_OP_ADD, "c,x", "s", 0, NULL);
    g_node(r, "relu", VKP_OP_RELU, "s", "y", 0, NULL);
    g_out(r, "y");
    g_validate(r);
    cr_assert_eq(source_calls(r, "vkp_conv_pointwise_t(xn"), 1);
    cpu_check(r, &rng, seed, -1, 1, threads);
    vkp_graph_t *c = g_new("pointwise_t_clamp");
    g_in(c, "x", F32, 4, SH(1, 40, 7, 7));
    clamp_branch(c, &rng, "relu6", "x", 40, 48, 1, 1, 1, true, "6");
    clamp_branch(c, &rng, "relu", "x", 40, 32, 1, 1, 1, false, "r");
    clamp_branch(c, &rng, "general", "x", 40, 32, 1, 1, 1, true, "cr");
    cpu_check_nan(c, &rng, seed, -3, 3, threads, 97);
  }
  // Not taken: whole 32-pixel tiles (8x8), channels off a multiple of 16,
  // groups, maps over 64 pixels.
  vkp_graph_t *n = g_new("pointwise_t_not");
  conv_case(n, &rng, 0, SH(1, 16, 8, 8), 32, 1, 1, p0, s1, s1, 1, true);
  conv_case(n, &rng, 1, SH(1, 16, 7, 7), 40, 1, 1, p0, s1, s1, 1, true);
  conv_case(n, &rng, 2, SH(1, 64, 7, 7), 64, 1, 1, p0, s1, s1, 2, true);
  conv_case(n, &rng, 3, SH(1, 16, 9, 9), 32, 1, 1, p0, s1, s1, 1, true);
  g_validate(n);
  cr_assert_eq(source_calls(n, "vkp_conv_pointwise_t(xn"), 0);
  cpu_check(n, &rng, seed, -1, 1, 1);
}

Test(cpu_ops, pooling, .timeout = 120) {
  SETUP();
  vkp_graph_t *pg = g_new("pool");
  g_in(pg, "x", F32, 4, SH(2, 3, 11, 13));
  for (int avg = 0; avg < 2; ++avg)
    for (int variant = 0; variant < 3; ++variant) {
      vkp_attr_t a[] = {at_is("kernel_shape", 2, variant == 2 ? SH(2, 3) : SH(3, 3)),
                        at_is("pads", 4, variant ? SH(1, 1, 1, 1) : SH(0, 0, 0, 0)),
                        at_is("strides", 2, SH(2, 2)), at_i("ceil_mode", variant == 2),
                        at_i("count_include_pad", variant == 1)};
      char n[16], y[16];
      snprintf(n, sizeof n, "pool%d%d", avg, variant);
      snprintf(y, sizeof y, "y%d%d", avg, variant);
      g_node(pg, n, avg ? VKP_OP_AVG_POOL2D : VKP_OP_MAX_POOL2D, "x", y, avg ? 5 : 4, a);
      g_out(pg, y);
    }
  // Average pooling row by row (prelude.c): dilation, stride 1 and 3,
  // asymmetric pads, with and without the padding counted.
  for (int variant = 0; variant < 2; ++variant) {
    vkp_attr_t a[] = {at_is("kernel_shape", 2, SH(3, 2)),
                      at_is("pads", 4, SH(2, 1, 0, 2)),
                      at_is("strides", 2, variant ? SH(1, 3) : SH(2, 1)),
                      at_is("dilations", 2, SH(2, 3)), at_i("count_include_pad", variant)};
    char n[16], y[16];
    snprintf(n, sizeof n, "avgd%d", variant);
    snprintf(y, sizeof y, "yd%d", variant);
    g_node(pg, n, VKP_OP_AVG_POOL2D, "x", y, 5, a);
    g_out(pg, y);
  }
  cpu_check(pg, &rng, seed, -1, 1, 1);
  vkp_graph_t *g = g_new("gap");
  g_in(g, "x", F32, 4, SH(2, 5, 7, 3));
  g_node(g, "gap", VKP_OP_GLOBAL_AVG_POOL, "x", "y", 0, NULL);
  g_out(g, "y");
  cpu_check(g, &rng, seed, -1, 1, 1);
}

// Max pooling's two paths (vectors straight from the input rows, and the
// padded row for the edges, other strides and small maps) and the split of
// output rows across threads: random windows (kernel, stride 1 to 3,
// dilation, asymmetric pads, ceil mode) over rows of widths on both sides of
// the vector width, and the common 3x3 stride-2 window on each, with NaN in
// the input, at 1 and 2 threads.
Test(cpu_ops, max_pool_rows_and_edges, .timeout = 180) {
  SETUP();
  static const int64_t widths[] = {5, 13, 17, 27, 37, 55, 70};
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("max_pool_sweep");
    for (int wi = 0; wi < 7; ++wi) {
      char x[8];
      snprintf(x, sizeof x, "x%d", wi);
      const int64_t H = 5 + vkp_test_rng_below(&rng, 5), W = widths[wi];
      g_in(g, x, F32, 4, SH(1, 3, H, W));
      for (int k = 0; k < 4; ++k) {
        int64_t kh = 1 + vkp_test_rng_below(&rng, 3), kw = 1 + vkp_test_rng_below(&rng, 5);
        int64_t sh = 1 + vkp_test_rng_below(&rng, 2), sw = k < 2 ? 2 : 1 + vkp_test_rng_below(&rng, 3);
        int64_t dh = 1, dw = 1 + (vkp_test_rng_below(&rng, 4) == 0);
        int64_t pt = vkp_test_rng_below(&rng, (uint32_t)kh), pb = vkp_test_rng_below(&rng, (uint32_t)kh);
        int64_t pl = vkp_test_rng_below(&rng, (uint32_t)kw), pr = vkp_test_rng_below(&rng, (uint32_t)kw);
        if (W + pl + pr < (kw - 1) * dw + 1) dw = 1;
        vkp_attr_t a[] = {at_is("kernel_shape", 2, SH(kh, kw)),
                          at_is("pads", 4, SH(pt, pl, pb, pr)),
                          at_is("strides", 2, SH(sh, sw)), at_is("dilations", 2, SH(dh, dw)),
                          at_i("ceil_mode", (int64_t)vkp_test_rng_below(&rng, 2))};
        char n[16], y[16];
        snprintf(n, sizeof n, "mp%d_%d", wi, k);
        snprintf(y, sizeof y, "y%d_%d", wi, k);
        g_node(g, n, VKP_OP_MAX_POOL2D, x, y, 5, a);
        g_out(g, y);
      }
    }
    cpu_check_nan(g, &rng, seed, -1, 1, threads, 97);
    // The 3x3 stride-2 window without padding, every row inside (the
    // straight-line path, ResNet's and SqueezeNet's), on every width, and
    // on widths whose output rows are whole vectors (33, 65: the last
    // chunk's next column comes from one more masked load).
    static const int64_t widths3[] = {5, 13, 17, 27, 33, 37, 55, 65, 70};
    vkp_graph_t *g3 = g_new("max_pool_3s2");
    for (int wi = 0; wi < 9; ++wi) {
      char x[8], n3[16], y3[16];
      snprintf(x, sizeof x, "x%d", wi);
      snprintf(n3, sizeof n3, "mp3s2_%d", wi);
      snprintf(y3, sizeof y3, "y3s2_%d", wi);
      g_in(g3, x, F32, 4, SH(1, 3, 7 + vkp_test_rng_below(&rng, 6), widths3[wi]));
      vkp_attr_t a3[] = {at_is("kernel_shape", 2, SH(3, 3)), at_is("strides", 2, SH(2, 2)),
                         at_i("ceil_mode", wi & 1)};
      g_node(g3, n3, VKP_OP_MAX_POOL2D, x, y3, 3, a3);
      g_out(g3, y3);
    }
    cpu_check_nan(g3, &rng, seed, -1, 1, threads, 97);
  }
}

// Convolutions over 3 and 1 spatial dims. Those whose groups fill a GEMM
// run as one GEMM per output frame over the clip's im2col view
// (vkp_conv3d_gemm): frame taps in the padding at both ends, strides,
// dilations and asymmetric pads in every dim, groups, bias or none, two
// clips, K over one depth block, one and two threads; depthwise and thin
// ones keep the direct loops. Max pooling without indices over 3 and 1
// dims (vkp_maxpool3d_sep: W, then H, then D), NaN in the input, ceil
// mode, dilation; with indices the direct loops.
static void conv_nd_case(vkp_graph_t *g, vkp_test_rng_t *rng, int id, int32_t rank,
                         const int64_t *xs, int64_t M, const int64_t *k, const int64_t *pads,
                         const int64_t *strides, const int64_t *dil, int64_t group, bool bias) {
  char x[16], w[16], b[16], y[16], n[16], ins[48];
  snprintf(x, sizeof x, "x%d", id);
  snprintf(w, sizeof w, "w%d", id);
  snprintf(b, sizeof b, "b%d", id);
  snprintf(y, sizeof y, "y%d", id);
  snprintf(n, sizeof n, "conv%d", id);
  snprintf(ins, sizeof ins, bias ? "%s,%s,%s" : "%s,%s", x, w, b);
  int32_t s = rank - 2;
  int64_t ws[5] = {M, xs[1] / group};
  for (int32_t i = 0; i < s; ++i) ws[2 + i] = k[i];
  g_in(g, x, F32, rank, xs);
  g_const(g, rng, w, rank, ws, -1, 1);
  if (bias) g_const(g, rng, b, 1, SH(M), -1, 1);
  vkp_attr_t a[] = {at_is("pads", 2 * s, pads), at_is("strides", s, strides),
                    at_is("dilations", s, dil), at_i("group", group)};
  g_node(g, n, VKP_OP_CONV2D, ins, y, 4, a);
  g_out(g, y);
}

Test(cpu_ops, conv_and_pool_nd, .timeout = 240) {
  SETUP();
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("conv_nd");
    // S3D's separable pair: 1 x 3 x 3 spatial, then 3 x 1 x 1 temporal
    // with padding frames at both ends and stride 2 in time.
    conv_nd_case(g, &rng, 0, 5, SH(2, 5, 6, 9, 11), 8, SH(1, 3, 3), SH(0, 1, 1, 0, 1, 1),
                 SH(1, 2, 2), SH(1, 1, 1), 1, true);
    conv_nd_case(g, &rng, 1, 5, SH(1, 8, 7, 6, 5), 12, SH(3, 1, 1), SH(1, 0, 0, 1, 0, 0),
                 SH(2, 1, 1), SH(1, 1, 1), 1, false);
    // A full 3 x 3 x 3 window: asymmetric pads, dilation 2 in time, groups.
    conv_nd_case(g, &rng, 2, 5, SH(1, 8, 9, 7, 8), 8, SH(3, 3, 3), SH(2, 0, 1, 1, 1, 2),
                 SH(1, 1, 2), SH(2, 1, 1), 2, true);
    // K = 40 * 27 over one GEMM depth block; a 1 x 7 x 7 stride-2 stem.
    conv_nd_case(g, &rng, 3, 5, SH(1, 40, 3, 6, 6), 6, SH(3, 3, 3), SH(1, 1, 1, 1, 1, 1),
                 SH(1, 1, 1), SH(1, 1, 1), 1, true);
    conv_nd_case(g, &rng, 4, 5, SH(1, 3, 4, 21, 19), 16, SH(1, 7, 7), SH(0, 3, 3, 0, 3, 3),
                 SH(1, 2, 2), SH(1, 1, 1), 1, true);
    // Depthwise and thin 3-D ones: the direct loops.
    conv_nd_case(g, &rng, 5, 5, SH(1, 6, 5, 6, 7), 6, SH(3, 3, 3), SH(1, 1, 1, 1, 1, 1),
                 SH(1, 1, 1), SH(1, 1, 1), 6, true);
    conv_nd_case(g, &rng, 6, 5, SH(1, 2, 4, 5, 6), 2, SH(1, 1, 2), SH(0, 0, 0, 0, 0, 1),
                 SH(1, 1, 1), SH(1, 1, 1), 1, false);
    // 1-D: audio front ends (stride 4, dilation 3, groups).
    conv_nd_case(g, &rng, 7, 3, SH(2, 4, 97), 16, SH(9), SH(4, 3), SH(4), SH(1), 1, true);
    conv_nd_case(g, &rng, 8, 3, SH(1, 16, 50), 16, SH(3), SH(3, 3), SH(1), SH(3), 4, true);
    g_validate(g);
    cr_assert_eq(source_calls(g, "vkp_conv3d_gemm(x"), 7, "the GEMM path takes 7 of 9");
    cpu_check(g, &rng, seed, -1, 1, threads);

    vkp_graph_t *pg = g_new("max_pool_nd");
    g_in(pg, "x3", F32, 5, SH(2, 3, 7, 9, 10));
    g_in(pg, "x1", F32, 3, SH(2, 5, 23));
    struct {
      const char *x;
      int32_t s;
      const int64_t *k, *pads, *st, *dil;
      int64_t ceil;
    } cases[] = {
        {"x3", 3, SH(3, 3, 3), SH(1, 1, 1, 1, 1, 1), SH(1, 1, 1), SH(1, 1, 1), 0},
        {"x3", 3, SH(2, 3, 2), SH(0, 1, 0, 1, 0, 1), SH(2, 2, 3), SH(1, 2, 1), 1},
        {"x3", 3, SH(1, 3, 3), SH(0, 0, 0, 0, 2, 1), SH(1, 2, 2), SH(1, 1, 1), 0},
        {"x1", 1, SH(4), SH(1, 2), SH(3), SH(2), 1},
        {"x1", 1, SH(3), SH(1, 1), SH(1), SH(1), 0},
    };
    for (int c = 0; c < 5; ++c) {
      vkp_attr_t a[] = {at_is("kernel_shape", cases[c].s, cases[c].k),
                        at_is("pads", 2 * cases[c].s, cases[c].pads),
                        at_is("strides", cases[c].s, cases[c].st),
                        at_is("dilations", cases[c].s, cases[c].dil),
                        at_i("ceil_mode", cases[c].ceil)};
      char n[16], y[16];
      snprintf(n, sizeof n, "mp%d", c);
      snprintf(y, sizeof y, "y%d", c);
      g_node(pg, n, VKP_OP_MAX_POOL2D, cases[c].x, y, 5, a);
      g_out(pg, y);
    }
    g_validate(pg);
    cr_assert_eq(source_calls(pg, "vkp_maxpool3d_sep(x"), 5);
    cpu_check_nan(pg, &rng, seed, -1, 1, threads, 97);
  }
}

// Recurrent layers against the "ref" target: gate counts times hidden
// sizes past one register block of vkp_rnn_rec's transposed-R path (GRU 3 x
// 24, LSTM 4 x 20, RNN 70: whole blocks of 64 and a scalar tail), GRU with
// and without linear_before_reset (the second reads R^T's h-gate columns),
// both directions, batches of 1 to 3, biases, and a batch over 16 (the
// GEMM path).
Test(cpu_ops, recurrent_layers_against_ref, .timeout = 240) {
  SETUP();
  (void)seed;
  vkp_graph_t *g = g_new("rnn_ref");
  struct {
    vkp_op_t op;
    int64_t gates, hidden, batch, dirs, lbr;
  } cases[] = {{VKP_OP_GRU, 3, 24, 1, 2, 0}, {VKP_OP_GRU, 3, 24, 3, 1, 1},
               {VKP_OP_LSTM, 4, 20, 2, 2, 0}, {VKP_OP_RNN, 1, 70, 1, 1, 0},
               {VKP_OP_GRU, 3, 24, 17, 1, 0}};
  for (int c = 0; c < 5; ++c) {
    const int64_t S = 6, I = 10, H = cases[c].hidden, D = cases[c].dirs, GH = cases[c].gates * H;
    char x[8], w[8], r[8], b[8], ins[40], outs[24], n[8], y[8], yh[8];
    snprintf(x, sizeof x, "x%d", c);
    snprintf(w, sizeof w, "w%d", c);
    snprintf(r, sizeof r, "r%d", c);
    snprintf(b, sizeof b, "b%d", c);
    snprintf(n, sizeof n, "rnn%d", c);
    snprintf(y, sizeof y, "y%d", c);
    snprintf(yh, sizeof yh, "h%d", c);
    snprintf(ins, sizeof ins, "%s,%s,%s,%s", x, w, r, b);
    snprintf(outs, sizeof outs, "%s,%s", y, yh);
    g_in(g, x, F32, 3, SH(S, cases[c].batch, I));
    g_const(g, &rng, w, 3, SH(D, GH, I), -0.5, 0.5);
    g_const(g, &rng, r, 3, SH(D, GH, H), -0.5, 0.5);
    g_const(g, &rng, b, 2, SH(D, 2 * GH), -0.5, 0.5);
    vkp_attr_t a[] = {at_i("hidden_size", H),
                      at_s("direction", D == 2 ? "bidirectional" : "forward"),
                      at_i("linear_before_reset", cases[c].lbr)};
    g_node(g, n, cases[c].op, ins, outs, cases[c].op == VKP_OP_GRU ? 3 : 2, a);
    g_out(g, outs);
  }
  g_validate(g);
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *cpu, *ref;
  VKP_TEST_OK(vkp_registry_lookup(reg, "cpu", &cpu));
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &ref));
  vkp_tensor_t in[8], got[16], want[16];
  g_random_inputs(g, &rng, -1, 1, in);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir, .threads = 1,
                               .march = getenv("VKPIPE_TEST_MARCH")};
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, &opt, in, got));
  VKP_TEST_OK(vkp_target_run_graph(ref, g, &(vkp_compile_options_t){0}, in, want));
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    char msg[256] = "";
    cr_assert(vkp_test_allclose(&got[i], &want[i], 1e-4, 1e-5, msg, sizeof msg),
              "output %s differs from ref: %s", g->values[g->outputs[i]].name, msg);
    vkp_tensor_deinit(&got[i]);
    vkp_tensor_deinit(&want[i]);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) vkp_tensor_deinit(&in[i]);
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(cpu_ops, normalisation, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("norms");
  g_in(g, "x", F32, 4, SH(2, 5, 3, 7));
  g_const(g, &rng, "sc", 1, SH(5), 0.5f, 1.5f);
  g_const(g, &rng, "bi", 1, SH(5), -1, 1);
  g_const(g, &rng, "mu", 1, SH(5), -1, 1);
  g_const(g, &rng, "var", 1, SH(5), 0.1f, 2);
  g_const(g, &rng, "ls", 2, SH(3, 7), 0.5f, 1.5f);
  g_const(g, &rng, "lb", 1, SH(7), -1, 1);
  g_node(g, "bn", VKP_OP_BATCH_NORM, "x,sc,bi,mu,var", "y_bn", 0, NULL);
  vkp_attr_t sm1[] = {at_i("axis", 1)}, sm3[] = {at_i("axis", -1)};
  g_node(g, "sm1", VKP_OP_SOFTMAX, "x", "y_sm1", 1, sm1);
  g_node(g, "sm3", VKP_OP_SOFTMAX, "x", "y_sm3", 1, sm3);
  vkp_attr_t ln[] = {at_i("axis", 2), at_f("epsilon", 1e-3)};
  g_node(g, "ln", VKP_OP_LAYER_NORM, "x,ls,lb", "y_ln", 2, ln);
  vkp_attr_t ln2[] = {at_i("axis", -1)};
  g_node(g, "ln2", VKP_OP_LAYER_NORM, "x,lb", "y_ln2", 1, ln2);
  const char *outs[] = {"y_bn", "y_sm1", "y_sm3", "y_ln", "y_ln2"};
  for (int i = 0; i < 5; ++i) g_out(g, outs[i]);
  cpu_check(g, &rng, seed, -2, 2, 1);
}

Test(cpu_ops, reductions, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("reduce");
  g_in(g, "x", F32, 4, SH(2, 3, 5, 7));
  vkp_attr_t r1[] = {at_is("axes", 2, SH(1, 3)), at_i("keepdims", 0)};
  vkp_attr_t r2[] = {at_is("axes", 2, SH(-1, -2)), at_i("keepdims", 1)};
  vkp_attr_t r3[] = {at_i("keepdims", 0)};
  g_node(g, "m1", VKP_OP_REDUCE_MEAN, "x", "y1", 2, r1);
  g_node(g, "s2", VKP_OP_REDUCE_SUM, "x", "y2", 2, r2);
  g_node(g, "s3", VKP_OP_REDUCE_SUM, "x", "y3", 1, r3);
  g_out(g, "y1,y2,y3");
  cpu_check(g, &rng, seed, -1, 1, 1);
}

Test(cpu_ops, data_movement, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("moves");
  g_in(g, "x", F32, 4, SH(2, 3, 5, 7));
  g_in(g, "z", F32, 4, SH(2, 4, 5, 7));
  vkp_attr_t tp[] = {at_is("perm", 4, SH(3, 1, 0, 2))};
  g_node(g, "tp", VKP_OP_TRANSPOSE, "x", "y_tp", 1, tp);
  vkp_attr_t sl[] = {at_is("starts", 3, SH(1, -1, 0)), at_is("ends", 3, SH(3, 0, 100)),
                     at_is("axes", 3, SH(1, 3, 2)), at_is("steps", 3, SH(1, -2, 2))};
  g_node(g, "sl", VKP_OP_SLICE, "x", "y_sl", 4, sl);
  vkp_attr_t cc[] = {at_i("axis", 1)};
  g_node(g, "cc", VKP_OP_CONCAT, "x,z,x", "y_cc", 1, cc);
  vkp_attr_t rs[] = {at_is("shape", 3, SH(6, -1, 7))};
  g_node(g, "rs", VKP_OP_RESHAPE, "x", "r", 1, rs);
  vkp_attr_t us[] = {at_is("axes", 1, SH(0))};
  g_node(g, "us", VKP_OP_UNSQUEEZE, "r", "u", 1, us);
  g_node(g, "sq", VKP_OP_SQUEEZE, "u", "s", 0, NULL);
  vkp_attr_t fl[] = {at_i("axis", 2)};
  g_node(g, "fl", VKP_OP_FLATTEN, "s", "y_fl", 1, fl);
  g_node(g, "id", VKP_OP_IDENTITY, "z", "y_id", 0, NULL);
  const char *outs[] = {"y_tp", "y_sl", "y_cc", "y_fl", "y_id", "x"};
  for (int i = 0; i < 6; ++i) g_out(g, outs[i]);
  cpu_check(g, &rng, seed, -1, 1, 1);
}

// The fused patterns: conv + bias + batch_norm + relu + residual add;
// pointwise conv + clip (ReLU6); gemm + add + relu; an elementwise chain;
// matmul + gelu; depthwise + bias + relu6.
Test(cpu_fusion, conv_epilogues, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("resblock");
  g_in(g, "x", F32, 4, SH(1, 8, 9, 7));
  g_const(g, &rng, "w1", 4, SH(8, 8, 3, 3), -0.5f, 0.5f);
  g_const(g, &rng, "b1", 1, SH(8), -1, 1);
  g_const(g, &rng, "sc", 1, SH(8), 0.5f, 1.5f);
  g_const(g, &rng, "bi", 1, SH(8), -1, 1);
  g_const(g, &rng, "mu", 1, SH(8), -1, 1);
  g_const(g, &rng, "var", 1, SH(8), 0.1f, 2);
  g_const(g, &rng, "w2", 4, SH(16, 8, 1, 1), -0.5f, 0.5f);
  g_const(g, &rng, "wd", 4, SH(16, 1, 3, 3), -0.5f, 0.5f);
  g_const(g, &rng, "bd", 1, SH(16), -1, 1);
  vkp_attr_t c3[] = {at_is("pads", 4, SH(1, 1, 1, 1))};
  g_node(g, "conv1", VKP_OP_CONV2D, "x,w1,b1", "c1", 1, c3);
  g_node(g, "bn1", VKP_OP_BATCH_NORM, "c1,sc,bi,mu,var", "n1", 0, NULL);
  g_node(g, "relu1", VKP_OP_RELU, "n1", "r1", 0, NULL);
  g_node(g, "res", VKP_OP_ADD, "r1,x", "y1", 0, NULL);
  g_node(g, "conv2", VKP_OP_CONV2D, "y1,w2", "c2", 0, NULL);
  vkp_attr_t six[] = {at_f("min", 0), at_f("max", 6)};
  g_node(g, "relu6", VKP_OP_CLIP, "c2", "y2", 2, six);
  vkp_attr_t dw[] = {at_is("pads", 4, SH(1, 1, 1, 1)), at_i("group", 16)};
  g_node(g, "dw", VKP_OP_CONV2D, "y2,wd,bd", "d", 2, dw);
  g_node(g, "dwrelu", VKP_OP_CLIP, "d", "y3", 2, six);
  g_out(g, "y3");
  cpu_check(g, &rng, seed, -1, 1, 1);
  // Depthwise 3x3/2 on a map wider than a vector, several images.
  vkp_graph_t *d = g_new("dwblock");
  g_in(d, "x", F32, 4, SH(3, 24, 30, 33));
  g_const(d, &rng, "wd", 4, SH(24, 1, 3, 3), -0.5f, 0.5f);
  g_const(d, &rng, "bd", 1, SH(24), -1, 1);
  vkp_attr_t dw2[] = {at_is("pads", 4, SH(1, 1, 1, 1)), at_is("strides", 2, SH(2, 2)),
                      at_i("group", 24)};
  g_node(d, "dw", VKP_OP_CONV2D, "x,wd,bd", "c", 3, dw2);
  g_node(d, "dwrelu", VKP_OP_CLIP, "c", "y", 2, six);
  g_out(d, "y");
  cpu_check(d, &rng, seed, -1, 1, 1);
}

// Conv `name` of input `x` (c channels) to `y` (m channels, `group`
// groups), k x k at `stride`, pads `pad` on every side, random weights and,
// with `bias`, a random bias in [-bias_range, bias_range].
static void conv_node(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name, const char *x,
                      const char *y, int64_t c, int64_t m, int64_t group, int64_t k,
                      int64_t stride, int64_t pad, bool bias, float bias_range) {
  char w[32], b[32], ins[96];
  snprintf(w, sizeof w, "%s_w", name);
  snprintf(b, sizeof b, "%s_b", name);
  g_const(g, rng, w, 4, SH(m, c / group, k, k), -0.5f, 0.5f);
  if (bias) g_const(g, rng, b, 1, SH(m), -bias_range, bias_range);
  snprintf(ins, sizeof ins, bias ? "%s,%s,%s" : "%s,%s", x, w, b);
  vkp_attr_t ca[] = {at_i("group", group), at_is("pads", 4, SH(pad, pad, pad, pad)),
                     at_is("strides", 2, SH(stride, stride))};
  g_node(g, name, VKP_OP_CONV2D, ins, y, 3, ca);
}

// One convolution branch of clamp_epilogues_in_registers: conv `name` of
// input `x` (c channels) to m channels, k x k, then the chain (r: relu,
// 6: clip(0, 6), a: clip(-1, 4), b: clip(-2, 3), c: clip(2, 5), h: clip with
// only max 1.5), marked as an output.
static void clamp_branch(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name, const char *x,
                         int64_t c, int64_t m, int64_t group, int64_t k, int64_t stride,
                         bool bias, const char *chain) {
  vkp_attr_t six[] = {at_f("min", 0), at_f("max", 6)};
  vkp_attr_t m1_4[] = {at_f("min", -1), at_f("max", 4)};
  vkp_attr_t m2_3[] = {at_f("min", -2), at_f("max", 3)};
  vkp_attr_t two_5[] = {at_f("min", 2), at_f("max", 5)};
  vkp_attr_t hi_only[] = {at_f("max", 1.5)};
  char prev[32], next[32];
  snprintf(prev, sizeof prev, "%s_y", name);
  conv_node(g, rng, name, x, prev, c, m, group, k, stride, k / 2, bias, 2);
  for (const char *op = chain; *op; ++op) {
    char node[40];
    snprintf(node, sizeof node, "%s_%d", name, (int)(op - chain));
    snprintf(next, sizeof next, "%s_y%d", name, (int)(op - chain));
    const vkp_attr_t *at = *op == '6' ? six : *op == 'a' ? m1_4 : *op == 'b' ? m2_3 : two_5;
    if (*op == 'r') g_node(g, node, VKP_OP_RELU, prev, next, 0, NULL);
    else if (*op == 'h') g_node(g, node, VKP_OP_CLIP, prev, next, 1, hi_only);
    else g_node(g, node, VKP_OP_CLIP, prev, next, 2, at);
    snprintf(prev, sizeof prev, "%s", next);
  }
  VKP_TEST_OK(vkp_graph_mark_output(g, prev));
}

// A convolution's bias followed by ReLUs and constant Clips is one clamp,
// which the GEMM, the 3x3 depthwise and the Winograd kernels apply to their
// registers before storing them (codegen/c/emit.c, vkp__row_clamp_ep); the
// kernels that do not fuse it (edge tiles, other depthwise shapes) call the
// same clamp. NaN inputs must come out as the unfused ops give them:
// through a Clip NaN stays NaN, a ReLU makes it 0. 9x8 and 10x8 maps give
// full, half and narrow register tiles; 30 output channels a partial row
// panel; 300 input channels two K blocks; 3x3 depthwise on a 13x14 map at
// strides 1 and 2, 3x3 and 5x5 depthwise on a 7x7 map, a 3-channel 3x3/2
// first layer. Winograd F(2x2) and
// F(4x4) run without NaN: their transforms spread a NaN over the whole
// output tile, fused or not. The
// "cr" chain (a Clip above 0, then a ReLU: NaN -> 0 but -inf -> 2) is not
// one clamp and keeps the general epilogue. One and two threads.
Test(cpu_fusion, clamp_epilogues_in_registers, .timeout = 240) {
  SETUP();
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("clamp");
    g_in(g, "x", F32, 4, SH(1, 24, 10, 8));
    g_in(g, "x9", F32, 4, SH(1, 24, 9, 8));
    g_in(g, "xk", F32, 4, SH(1, 300, 9, 8));
    g_in(g, "xd", F32, 4, SH(1, 5, 13, 14));
    clamp_branch(g, &rng, "relu", "x9", 24, 30, 1, 1, 1, true, "r");
    clamp_branch(g, &rng, "relu6", "x", 24, 30, 1, 1, 1, true, "6");
    clamp_branch(g, &rng, "nobias", "x", 24, 30, 1, 1, 1, false, "ra");
    clamp_branch(g, &rng, "kblocks", "xk", 300, 30, 1, 1, 1, true, "br");
    clamp_branch(g, &rng, "maxonly", "x", 24, 16, 1, 1, 1, true, "h");
    clamp_branch(g, &rng, "groups", "x", 24, 32, 2, 1, 1, true, "6");
    clamp_branch(g, &rng, "biasonly", "x9", 24, 30, 1, 1, 1, true, "");
    clamp_branch(g, &rng, "general", "x", 24, 30, 1, 1, 1, true, "cr");
    clamp_branch(g, &rng, "dw1", "xd", 5, 5, 5, 3, 1, true, "6");
    clamp_branch(g, &rng, "dw2", "xd", 5, 5, 5, 3, 2, true, "r");
    clamp_branch(g, &rng, "dwgeneral", "xd", 5, 5, 5, 3, 1, true, "cr");
    g_in(g, "xs", F32, 4, SH(1, 6, 7, 7));  // the masked depthwise path
    clamp_branch(g, &rng, "dwsmall", "xs", 6, 6, 6, 3, 1, true, "6");
    clamp_branch(g, &rng, "dwsmall5", "xs", 6, 6, 6, 5, 1, false, "r");
    clamp_branch(g, &rng, "dwsmallgeneral", "xs", 6, 6, 6, 3, 1, true, "cr");
    g_in(g, "xs2", F32, 4, SH(1, 6, 14, 14));  // the masked path at stride 2
    clamp_branch(g, &rng, "dwsmall2", "xs2", 6, 6, 6, 3, 2, true, "6");
    clamp_branch(g, &rng, "dwsmall2general", "xs2", 6, 6, 6, 3, 2, true, "cr");
    g_in(g, "xf", F32, 4, SH(1, 3, 8, 70));  // a first layer (vkp_conv_direct)
    clamp_branch(g, &rng, "first", "xf", 3, 18, 1, 3, 2, true, "6");
    clamp_branch(g, &rng, "firstgeneral", "xf", 3, 18, 1, 3, 2, true, "cr");
    cpu_check_nan(g, &rng, seed, -3, 3, threads, 97);
    vkp_graph_t *w = g_new("clamp_winograd");
    g_in(w, "x2", F32, 4, SH(1, 16, 9, 8));
    g_in(w, "x4", F32, 4, SH(1, 64, 48, 48));
    clamp_branch(w, &rng, "wino2", "x2", 16, 20, 1, 3, 1, true, "r");
    clamp_branch(w, &rng, "wino4", "x4", 64, 64, 1, 3, 1, true, "r");
    cpu_check(w, &rng, seed, -1, 1, threads);
  }
}

// One branch of conv_then_max_pool: conv `name` (m output channels, k x k,
// stride 2, pads k / 2 or none, bias and ReLU) of `x` (c channels), then a
// max pooling (pk x pk, stride 2, pads pp, ceil mode or not).
static void conv_pool_branch(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name,
                             const char *x, int64_t c, int64_t m, int64_t k, bool pad,
                             int64_t pk, int64_t pp, int64_t ceil) {
  char cy[32], ry[32], node[40], y[32];
  snprintf(cy, sizeof cy, "%s_c", name);
  snprintf(ry, sizeof ry, "%s_r", name);
  snprintf(y, sizeof y, "%s_y", name);
  conv_node(g, rng, name, x, cy, c, m, 1, k, 2, pad ? k / 2 : 0, true, 1);
  snprintf(node, sizeof node, "%s_relu", name);
  g_node(g, node, VKP_OP_RELU, cy, ry, 0, NULL);
  vkp_attr_t pa[] = {at_is("kernel_shape", 2, SH(pk, pk)), at_is("pads", 4, SH(pp, pp, pp, pp)),
                     at_is("strides", 2, SH(2, 2)), at_i("ceil_mode", ceil)};
  snprintf(node, sizeof node, "%s_pool", name);
  g_node(g, node, VKP_OP_MAX_POOL2D, ry, y, 4, pa);
  VKP_TEST_OK(vkp_graph_mark_output(g, y));
}

// A shallow convolution and the max pooling that alone reads it run as one
// kernel (vkp_conv_direct_pool): SqueezeNet's (3x3/2, pool 3x3/2 ceil) and
// ResNet's (7x7/2 pad 3, pool 3x3/2 pad 1) first layers, a 2x2 pooling,
// and 64 x 65 maps whose rows take several bands per thread (rows two bands
// share are moved). Not fused: a convolution whose result is also an
// output. One and two threads, NaN in the input.
Test(cpu_fusion, conv_then_max_pool, .timeout = 240) {
  SETUP();
  for (int32_t threads = 1; threads <= 2; ++threads) {
    vkp_graph_t *g = g_new("conv_pool");
    g_in(g, "xa", F32, 4, SH(1, 3, 37, 70));
    g_in(g, "xb", F32, 4, SH(2, 3, 200, 130));
    conv_pool_branch(g, &rng, "squeeze", "xa", 3, 20, 3, false, 3, 0, 1);
    conv_pool_branch(g, &rng, "resnet", "xa", 3, 16, 7, true, 3, 1, 0);
    conv_pool_branch(g, &rng, "two", "xa", 3, 5, 3, true, 2, 0, 0);
    conv_pool_branch(g, &rng, "bands", "xb", 3, 64, 3, true, 3, 0, 1);
    conv_pool_branch(g, &rng, "shared", "xa", 3, 8, 3, true, 3, 1, 0);
    VKP_TEST_OK(vkp_graph_mark_output(g, "shared_r"));
    g_validate(g);
    cr_assert_eq(source_calls(g, "vkp_conv_direct_pool(xn"), 4);
    cr_assert_eq(source_calls(g, "vkp_conv_direct(xn"), 1);
    cpu_check_nan(g, &rng, seed, -1, 1, threads, 97);
  }
}

Test(cpu_fusion, gemm_and_chains, .timeout = 120) {
  SETUP();
  vkp_graph_t *g = g_new("mlp");
  g_in(g, "x", F32, 2, SH(5, 33));
  g_const(g, &rng, "w", 2, SH(33, 17), -0.5f, 0.5f);
  g_const(g, &rng, "b", 1, SH(17), -1, 1);
  g_in(g, "skip", F32, 2, SH(5, 17));
  g_node(g, "fc", VKP_OP_MATMUL, "x,w", "h", 0, NULL);
  g_node(g, "bias", VKP_OP_ADD, "h,b", "hb", 0, NULL);
  g_node(g, "act", VKP_OP_RELU, "hb", "ha", 0, NULL);
  g_node(g, "skip_add", VKP_OP_ADD, "ha,skip", "y", 0, NULL);
  g_node(g, "e1", VKP_OP_MUL, "y,y", "e1", 0, NULL);
  g_node(g, "e2", VKP_OP_SIGMOID, "e1", "e2", 0, NULL);
  g_node(g, "e3", VKP_OP_SUB, "e2,b", "e3", 0, NULL);
  g_node(g, "e4", VKP_OP_TANH, "e3", "out", 0, NULL);
  vkp_attr_t tp[] = {at_is("perm", 2, SH(1, 0))};
  g_node(g, "tr", VKP_OP_TRANSPOSE, "x", "xt", 1, tp);
  g_node(g, "mm2", VKP_OP_MATMUL, "xt,x", "p", 0, NULL);
  g_node(g, "gelu", VKP_OP_GELU, "p", "out2", 0, NULL);
  g_out(g, "out,out2,y");
  cpu_check(g, &rng, seed, -1, 1, 1);
}
