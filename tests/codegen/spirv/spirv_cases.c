// SPDX-License-Identifier: Apache-2.0
#include "tests/codegen/spirv/spirv_cases.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/test_graph.h"
#include "vkpipe/status.h"

// Names for the cases' graphs, built with support/test_graph.h: inputs x0..,
// constants c0.., values v0...
typedef struct vkp__gb_t {
  vkp_graph_t *g;
  vkp_test_rng_t *rng;
  int n;
  char names[96][16];
} vkp__gb_t;

static const char *vkp__gb_name(vkp__gb_t *b, char prefix) {
  char *name = b->names[b->n % 96];
  snprintf(name, 16, "%c%d", prefix, b->n++);
  return name;
}

static const char *IN(vkp__gb_t *b, int32_t rank, const int64_t *shape) {
  const char *name = vkp__gb_name(b, 'x');
  g_in(b->g, name, VKP_DTYPE_FLOAT32, rank, shape);
  return name;
}

static const char *CST_RANGE(vkp__gb_t *b, int32_t rank, const int64_t *shape,
                             float lo, float hi) {
  const char *name = vkp__gb_name(b, 'c');
  g_const(b->g, b->rng, name, rank, shape, lo, hi);
  return name;
}

// Integer indices (int32 or int64) in [-dim, dim), drawn fresh.
static const char *CST_INDICES(vkp__gb_t *b, vkp_dtype_t dt, int32_t rank,
                               const int64_t *shape, int64_t dim) {
  const char *name = vkp__gb_name(b, 'c');
  size_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= (size_t)shape[i];
  int64_t *data = malloc((n ? n : 1) * sizeof(int64_t));
  int32_t *narrow = (int32_t *)data;
  for (size_t i = 0; i < n; ++i) {
    int64_t k = (int64_t)vkp_test_rng_uniform(b->rng, -(float)dim, (float)dim);
    k = k < -dim ? -dim : k >= dim ? dim - 1 : k;
    if (dt == VKP_DTYPE_INT64) data[i] = k;
    else narrow[i] = (int32_t)k;
  }
  g_const_data(b->g, name, dt, rank, shape, data);
  free(data);
  return name;
}

static const char *CST(vkp__gb_t *b, int32_t rank, const int64_t *shape) {
  return CST_RANGE(b, rank, shape, -1.0f, 1.0f);
}

// A graph input of dtype dt (test_kernels fills integer inputs with whole
// numbers in the case's range).
static const char *IN_DT(vkp__gb_t *b, vkp_dtype_t dt, int32_t rank, const int64_t *shape) {
  const char *name = vkp__gb_name(b, 'x');
  g_in(b->g, name, dt, rank, shape);
  return name;
}

// An integer constant (8-, 32- or 64-bit) of whole numbers drawn from
// [lo, hi].
static const char *CST_INT(vkp__gb_t *b, vkp_dtype_t dt, int32_t rank,
                           const int64_t *shape, int64_t lo, int64_t hi) {
  const char *name = vkp__gb_name(b, 'c');
  size_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= (size_t)shape[i];
  int64_t *data = malloc((n ? n : 1) * sizeof(int64_t));
  int32_t *narrow = (int32_t *)data;
  for (size_t i = 0; i < n; ++i) {
    int64_t k = lo + (int64_t)vkp_test_rng_uniform(b->rng, 0.0f, (float)(hi - lo + 1));
    k = k > hi ? hi : k;
    if (vkp_dtype_size(dt) == 8) data[i] = k;
    else if (vkp_dtype_size(dt) == 4) narrow[i] = (int32_t)k;
    else if (vkp_dtype_size(dt) == 2) ((int16_t *)data)[i] = (int16_t)k;
    else ((int8_t *)data)[i] = (int8_t)k;
  }
  g_const_data(b->g, name, dt, rank, shape, data);
  free(data);
  return name;
}

// A node with two outputs (top_k): their names in out[0], out[1].
static void NODE2(vkp__gb_t *b, vkp_op_t op, int32_t n_in, const char *const *in,
                  int32_t n_attrs, const vkp_attr_t *attrs, const char **out) {
  out[0] = vkp__gb_name(b, 'v');
  out[1] = vkp__gb_name(b, 'v');
  char node[16];
  snprintf(node, sizeof node, "n%d", b->n);
  VKP_TEST_OK(vkp_graph_add_node(b->g, node, op, n_in, in, 2, out, n_attrs, attrs, NULL));
}

static const char *NODE(vkp__gb_t *b, vkp_op_t op, int32_t n_in,
                        const char *const *in, int32_t n_attrs,
                        const vkp_attr_t *attrs) {
  const char *out = vkp__gb_name(b, 'v');
  char node[16];
  snprintf(node, sizeof node, "n%d", b->n);
  VKP_TEST_OK(vkp_graph_add_node(b->g, node, op, n_in, in, 1, &out, n_attrs, attrs, NULL));
  return out;
}

static vkp_graph_t *vkp__gb_finish(vkp__gb_t *b, int32_t n_out,
                                   const char *const *outs) {
  for (int32_t i = 0; i < n_out; ++i) g_out(b->g, outs[i]);
  g_validate(b->g);
  return b->g;
}

#define S SH  // shorter still: the cases spell hundreds of shapes
#define L(...) ((const char *const[]){__VA_ARGS__})
#define A(...) ((const vkp_attr_t[]){__VA_ARGS__})
#define AI(n, v) {.name = n, .kind = VKP_ATTR_INT, .i = (v)}
#define AF(n, v) {.name = n, .kind = VKP_ATTR_FLOAT, .f = (v)}
#define AS(n, v) {.name = n, .kind = VKP_ATTR_STRING, .s = (v)}
#define AIS(n, ...) {.name = n, .kind = VKP_ATTR_INTS, .ints = S(__VA_ARGS__), \
                     .count = (int32_t)(sizeof(S(__VA_ARGS__)) / sizeof(int64_t))}
#define AEMPTY(n) {.name = n, .kind = VKP_ATTR_INTS, .ints = NULL, .count = 0}

#define BEGIN(case_name)                                       \
  static vkp_graph_t *build_##case_name(vkp_test_rng_t *rng) { \
    vkp__gb_t bb = {.g = g_new(#case_name), .rng = rng}, *b = &bb;
#define END(...)                                              \
  return vkp__gb_finish(b, (int32_t)(sizeof(L(__VA_ARGS__)) / sizeof(char *)), \
                        L(__VA_ARGS__));                      \
  }

// --- elementwise ------------------------------------------------------------

#define UNARY_CASE(case_name, op, n_attrs, attrs, ...)      \
  BEGIN(case_name)                                          \
  const char *x = IN(b, (int32_t)(sizeof(S(__VA_ARGS__)) / 8), S(__VA_ARGS__)); \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs);     \
  END(y)

UNARY_CASE(sqrt_7x13, VKP_OP_SQRT, 0, NULL, 7, 13)
UNARY_CASE(exp_1, VKP_OP_EXP, 0, NULL, 1)
UNARY_CASE(neg_3x5x17, VKP_OP_NEG, 0, NULL, 3, 5, 17)
UNARY_CASE(abs_31, VKP_OP_ABS, 0, NULL, 31)
UNARY_CASE(relu_2x3x5x7, VKP_OP_RELU, 0, NULL, 2, 3, 5, 7)
UNARY_CASE(leaky_relu_67, VKP_OP_LEAKY_RELU, 1, A(AF("alpha", 0.2)), 67)
UNARY_CASE(clip_5x11, VKP_OP_CLIP, 2, A(AF("min", -0.5), AF("max", 0.25)), 5, 11)
UNARY_CASE(clip_default_13, VKP_OP_CLIP, 0, NULL, 13)
UNARY_CASE(sigmoid_3x37, VKP_OP_SIGMOID, 0, NULL, 3, 37)
UNARY_CASE(tanh_101, VKP_OP_TANH, 0, NULL, 101)
UNARY_CASE(erf_4x29, VKP_OP_ERF, 0, NULL, 4, 29)
UNARY_CASE(gelu_7x7, VKP_OP_GELU, 0, NULL, 7, 7)
UNARY_CASE(gelu_tanh_19, VKP_OP_GELU, 1, A(AS("approximate", "tanh")), 19)
UNARY_CASE(hard_swish_3x41, VKP_OP_HARD_SWISH, 0, NULL, 3, 41)
UNARY_CASE(log_5x9, VKP_OP_LOG, 0, NULL, 5, 9)
UNARY_CASE(floor_37, VKP_OP_FLOOR, 0, NULL, 37)
UNARY_CASE(ceil_3x11, VKP_OP_CEIL, 0, NULL, 3, 11)
UNARY_CASE(round_41, VKP_OP_ROUND, 0, NULL, 41)
UNARY_CASE(sign_2x13, VKP_OP_SIGN, 0, NULL, 2, 13)
UNARY_CASE(reciprocal_17, VKP_OP_RECIPROCAL, 0, NULL, 17)
UNARY_CASE(sin_7x7, VKP_OP_SIN, 0, NULL, 7, 7)
UNARY_CASE(cos_3x9, VKP_OP_COS, 0, NULL, 3, 9)
UNARY_CASE(tan_23, VKP_OP_TAN, 0, NULL, 23)
UNARY_CASE(asin_5x5, VKP_OP_ASIN, 0, NULL, 5, 5)
UNARY_CASE(acos_19, VKP_OP_ACOS, 0, NULL, 19)
UNARY_CASE(atan_29, VKP_OP_ATAN, 0, NULL, 29)
UNARY_CASE(sinh_31, VKP_OP_SINH, 0, NULL, 31)
UNARY_CASE(cosh_11, VKP_OP_COSH, 0, NULL, 11)
UNARY_CASE(asinh_2x7, VKP_OP_ASINH, 0, NULL, 2, 7)
UNARY_CASE(acosh_13, VKP_OP_ACOSH, 0, NULL, 13)
UNARY_CASE(atanh_17, VKP_OP_ATANH, 0, NULL, 17)
UNARY_CASE(softplus_43, VKP_OP_SOFTPLUS, 0, NULL, 43)
UNARY_CASE(softsign_9, VKP_OP_SOFTSIGN, 0, NULL, 9)
UNARY_CASE(mish_3x7, VKP_OP_MISH, 0, NULL, 3, 7)
UNARY_CASE(hard_sigmoid_2x9, VKP_OP_HARD_SIGMOID, 2, A(AF("alpha", 0.3), AF("beta", 0.4)), 2, 9)
UNARY_CASE(elu_27, VKP_OP_ELU, 0, NULL, 27)
UNARY_CASE(selu_4x4, VKP_OP_SELU, 0, NULL, 4, 4)
UNARY_CASE(celu_19, VKP_OP_CELU, 1, A(AF("alpha", 1.5)), 19)
UNARY_CASE(thresholded_relu_21, VKP_OP_THRESHOLDED_RELU, 1, A(AF("alpha", 0.5)), 21)
UNARY_CASE(shrink_33, VKP_OP_SHRINK, 2, A(AF("bias", 0.25), AF("lambd", 0.75)), 33)

#define BINARY_CASE(case_name, op, ra, sa, rb, sb) \
  BEGIN(case_name)                                 \
  const char *x = IN(b, ra, sa);                   \
  const char *z = IN(b, rb, sb);                   \
  const char *y = NODE(b, op, 2, L(x, z), 0, NULL); \
  END(y)

BINARY_CASE(add_same_2x3x5, VKP_OP_ADD, 3, S(2, 3, 5), 3, S(2, 3, 5))
BINARY_CASE(sub_bcast_4x1x5_3x5, VKP_OP_SUB, 3, S(4, 1, 5), 2, S(3, 5))
BINARY_CASE(mul_scalar_1_7, VKP_OP_MUL, 1, S(1), 1, S(7))
BINARY_CASE(div_bcast_13x1_1x11, VKP_OP_DIV, 2, S(13, 1), 2, S(1, 11))
BINARY_CASE(pow_3x7_7, VKP_OP_POW, 2, S(3, 7), 1, S(7))
BINARY_CASE(prelu_channel, VKP_OP_PRELU, 4, S(2, 3, 4, 5), 3, S(3, 1, 1))

#define MOD_CASE(case_name, fmod)                                          \
  BEGIN(case_name)                                                         \
  const char *x = IN(b, 2, S(5, 9));                                       \
  const char *z = IN(b, 1, S(9));                                          \
  const char *y = NODE(b, VKP_OP_MOD, 2, L(x, z), 1, A(AI("fmod", fmod))); \
  END(y)

MOD_CASE(mod_fmod_5x9_9, 1)
MOD_CASE(mod_numpy_5x9_9, 0)

// Three inputs broadcast together.
#define VARIADIC_CASE(case_name, op)                           \
  BEGIN(case_name)                                             \
  const char *x = IN(b, 3, S(2, 1, 7));                        \
  const char *z = IN(b, 2, S(3, 1));                           \
  const char *w = IN(b, 1, S(7));                              \
  const char *y = NODE(b, op, 3, L(x, z, w), 0, NULL);         \
  END(y)

VARIADIC_CASE(min_3_inputs, VKP_OP_MIN)
VARIADIC_CASE(max_3_inputs, VKP_OP_MAX)
VARIADIC_CASE(sum_3_inputs, VKP_OP_SUM)
VARIADIC_CASE(mean_3_inputs, VKP_OP_MEAN)

// Clip with runtime bounds (one omitted: its attribute applies).
BEGIN(clip_tensor_bounds)
const char *x = IN(b, 2, S(6, 5));
const char *lo = IN(b, 0, NULL);
const char *hi = IN(b, 1, S(1));
const char *y = NODE(b, VKP_OP_CLIP, 3, L(x, lo, hi), 0, NULL);
const char *z = NODE(b, VKP_OP_CLIP, 3, L(y, "", hi), 1, A(AF("min", -0.25)));
END(z)

// max -> sum -> mish -> mean with a constant: one dispatch.
BEGIN(fuse_variadic_chain)
const char *x = IN(b, 2, S(4, 6));
const char *z = IN(b, 1, S(6));
const char *c = CST(b, 2, S(4, 1));
const char *m = NODE(b, VKP_OP_MAX, 2, L(x, z), 0, NULL);
const char *s = NODE(b, VKP_OP_SUM, 3, L(m, x, c), 0, NULL);
const char *h = NODE(b, VKP_OP_MISH, 1, L(s), 0, NULL);
const char *y = NODE(b, VKP_OP_MEAN, 2, L(h, c), 0, NULL);
END(y)

// --- linear algebra -----------------------------------------------------------

#define MATMUL_CASE(case_name, ra, sa, rb, sb) \
  BEGIN(case_name)                             \
  const char *x = IN(b, ra, sa);               \
  const char *w = CST(b, rb, sb);              \
  const char *y = NODE(b, VKP_OP_MATMUL, 2, L(x, w), 0, NULL); \
  END(y)

MATMUL_CASE(matmul_1x1x1, 2, S(1, 1), 2, S(1, 1))
MATMUL_CASE(matmul_7x13x5, 2, S(7, 13), 2, S(13, 5))
MATMUL_CASE(matmul_65x67x33, 2, S(65, 67), 2, S(67, 33))
MATMUL_CASE(matmul_batch_2x3x17x9_9x11, 4, S(2, 3, 17, 9), 2, S(9, 11))
MATMUL_CASE(matmul_bcast_3x1x4x5_2x5x3, 4, S(3, 1, 4, 5), 3, S(2, 5, 3))
MATMUL_CASE(matmul_vec_13_13x5, 1, S(13), 2, S(13, 5))
MATMUL_CASE(matmul_4x13_vec_13, 2, S(4, 13), 1, S(13))
// Skinny (one 64 x 64 tile, K = 4096): split-K by shape on GPUs (2
// dispatches there), one dispatch on CPU devices;
// positive inputs so that the sum of 4096 terms has no cancellation (the
// relative tolerance then bounds the reordering of float32 additions).
BEGIN(matmul_skinny_2x4096x64)
const char *x = IN(b, 2, S(2, 4096));
const char *w = CST_RANGE(b, 2, S(4096, 64), 0.01f, 1.0f);
const char *y = NODE(b, VKP_OP_MATMUL, 2, L(x, w), 0, NULL);
END(y)

#define GEMM_CASE(case_name, ta, tb, sa, sb, rc, sc)                        \
  BEGIN(case_name)                                                          \
  const char *x = IN(b, 2, sa);                                             \
  const char *w = CST(b, 2, sb);                                            \
  const char *y;                                                            \
  if (rc > 0) {                                                             \
    const char *c = CST(b, rc, sc);                                         \
    y = NODE(b, VKP_OP_GEMM, 3, L(x, w, c), 4,                              \
             A(AI("transA", ta), AI("transB", tb), AF("alpha", 0.75), AF("beta", -1.5))); \
  } else {                                                                  \
    y = NODE(b, VKP_OP_GEMM, 2, L(x, w), 2, A(AI("transA", ta), AI("transB", tb))); \
  }                                                                         \
  END(y)

GEMM_CASE(gemm_plain_5x7x3, 0, 0, S(5, 7), S(7, 3), 0, S(1))
GEMM_CASE(gemm_tA_bias_n, 1, 0, S(7, 5), S(7, 3), 1, S(3))
GEMM_CASE(gemm_tB_bias_m1, 0, 1, S(5, 7), S(3, 7), 2, S(5, 1))
GEMM_CASE(gemm_tAtB_full_c, 1, 1, S(9, 6), S(11, 9), 2, S(6, 11))
GEMM_CASE(gemm_scalar_c, 0, 0, S(1, 17), S(17, 1), 1, S(1))

// --- convolution and pooling --------------------------------------------------

#define CONV_CASE(case_name, xs, ws, bias, n_attrs, attrs)               \
  BEGIN(case_name)                                                       \
  const char *x = IN(b, 4, xs);                                          \
  const char *w = CST(b, 4, ws);                                         \
  const char *y;                                                         \
  if (bias) {                                                            \
    const char *c = CST(b, 1, S((ws)[0]));                               \
    y = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), n_attrs, attrs);           \
  } else {                                                               \
    y = NODE(b, VKP_OP_CONV2D, 2, L(x, w), n_attrs, attrs);              \
  }                                                                      \
  END(y)

CONV_CASE(conv_3x3_pad1, S(1, 3, 7, 7), S(5, 3, 3, 3), 1, 1, A(AIS("pads", 1, 1, 1, 1)))
CONV_CASE(conv_1x1_nobias, S(2, 4, 5, 3), S(6, 4, 1, 1), 0, 0, NULL)
CONV_CASE(conv_stride2_dil2, S(1, 2, 11, 13), S(3, 2, 3, 3), 1, 2,
          A(AIS("strides", 2, 2), AIS("dilations", 2, 2)))
CONV_CASE(conv_grouped_g3, S(1, 6, 9, 9), S(9, 2, 3, 3), 1, 2,
          A(AI("group", 3), AIS("pads", 0, 1, 2, 1)))
CONV_CASE(conv_depthwise, S(2, 4, 8, 7), S(4, 1, 3, 3), 1, 3,
          A(AI("group", 4), AIS("pads", 1, 1, 1, 1), AIS("strides", 1, 2)))
// Depthwise with a channel multiplier of 2, dilation and an output width
// that is no multiple of 4 (conv_depthwise.comp's column blocks).
CONV_CASE(conv_depthwise_m2_dil, S(1, 3, 9, 11), S(6, 1, 3, 3), 1, 3,
          A(AI("group", 3), AIS("pads", 2, 1, 2, 1), AIS("dilations", 2, 2)))
CONV_CASE(conv_5x3_asym, S(1, 1, 17, 5), S(2, 1, 5, 3), 0, 1, A(AIS("pads", 2, 0, 2, 1)))
// Shapes that cross the implicit GEMM's 64 x 64 tiles and its 16-deep K
// slices: > 64 output channels, > 64 pixels, K not a multiple of 16.
CONV_CASE(conv_gemm_7x7_s2, S(2, 3, 19, 17), S(70, 3, 7, 7), 1, 2,
          A(AIS("pads", 3, 3, 3, 3), AIS("strides", 2, 2)))
CONV_CASE(conv_gemm_1x1_s2, S(1, 20, 13, 11), S(9, 20, 1, 1), 1, 1, A(AIS("strides", 2, 2)))
CONV_CASE(conv_gemm_dil_pad, S(1, 5, 12, 14), S(6, 5, 3, 3), 0, 3,
          A(AIS("pads", 0, 2, 3, 1), AIS("dilations", 2, 3), AIS("strides", 1, 2)))

#define POOL_CASE(case_name, op, xs, n_attrs, attrs) \
  BEGIN(case_name)                                   \
  const char *x = IN(b, 4, xs);                      \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs); \
  END(y)

POOL_CASE(maxpool_3s2p1, VKP_OP_MAX_POOL2D, S(1, 3, 9, 9), 3,
          A(AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)))
POOL_CASE(maxpool_ceil_dil, VKP_OP_MAX_POOL2D, S(2, 2, 10, 7), 4,
          A(AIS("kernel_shape", 2, 3), AIS("strides", 2, 2), AIS("dilations", 2, 1),
            AI("ceil_mode", 1)))
// 8-bit data widens to float in the window (exact) and narrows back.
BEGIN(maxpool_uint8)
const char *x = IN_DT(b, VKP_DTYPE_UINT8, 4, S(1, 2, 6, 5));
const char *y = NODE(b, VKP_OP_MAX_POOL2D, 1, L(x), 2,
                     A(AIS("kernel_shape", 2, 2), AIS("pads", 1, 0, 0, 1)));
END(y)

POOL_CASE(avgpool_excl_pad, VKP_OP_AVG_POOL2D, S(1, 2, 7, 7), 3,
          A(AIS("kernel_shape", 3, 3), AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)))
POOL_CASE(avgpool_incl_pad_ceil, VKP_OP_AVG_POOL2D, S(1, 3, 8, 5), 5,
          A(AIS("kernel_shape", 3, 2), AIS("strides", 2, 2), AIS("pads", 1, 0, 1, 1),
            AI("count_include_pad", 1), AI("ceil_mode", 1)))

POOL_CASE(lppool_p2_pad, VKP_OP_LP_POOL, S(1, 3, 8, 7), 3,
          A(AIS("kernel_shape", 3, 2), AIS("strides", 2, 1), AIS("pads", 1, 0, 1, 1)))
POOL_CASE(lppool_p3_ceil_dil, VKP_OP_LP_POOL, S(2, 2, 9, 6), 5,
          A(AIS("kernel_shape", 2, 2), AIS("strides", 2, 2), AIS("dilations", 1, 2),
            AI("ceil_mode", 1), AI("p", 3)))

#define POOL3_CASE(case_name, op, xs, n_attrs, attrs) \
  BEGIN(case_name)                                    \
  const char *x = IN(b, 5, xs);                       \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs); \
  END(y)

// Windows over 3 spatial dims.
POOL3_CASE(maxpool3d_s2p1, VKP_OP_MAX_POOL2D, S(1, 2, 5, 6, 7), 3,
           A(AIS("kernel_shape", 3, 2, 3), AIS("strides", 2, 1, 2), AIS("pads", 1, 0, 1, 1, 1, 0)))
POOL3_CASE(avgpool3d_incl_pad_ceil, VKP_OP_AVG_POOL2D, S(2, 1, 4, 5, 6), 5,
           A(AIS("kernel_shape", 2, 3, 2), AIS("strides", 2, 2, 2), AIS("pads", 0, 1, 1, 1, 0, 1),
             AI("count_include_pad", 1), AI("ceil_mode", 1)))
POOL3_CASE(lppool3d_p2_dil, VKP_OP_LP_POOL, S(1, 3, 5, 5, 4), 3,
           A(AIS("kernel_shape", 2, 2, 2), AIS("dilations", 2, 1, 2), AI("p", 2)))

// max_pool2d's indices: one more dispatch of the same kernel (2-D
// column-major, 3-D row-major).
BEGIN(maxpool_indices_col_major)
const char *x = IN(b, 4, S(2, 3, 7, 6)), *o[2];
NODE2(b, VKP_OP_MAX_POOL2D, 1, L(x), 4,
      A(AIS("kernel_shape", 3, 2), AIS("strides", 2, 2), AIS("pads", 1, 0, 1, 1),
        AI("storage_order", 1)), o);
END(o[0], o[1])

BEGIN(maxpool3d_indices)
const char *x = IN(b, 5, S(1, 2, 4, 5, 5)), *o[2];
NODE2(b, VKP_OP_MAX_POOL2D, 1, L(x), 2,
      A(AIS("kernel_shape", 2, 3, 2), AIS("pads", 1, 1, 0, 0, 1, 1)), o);
END(o[0], o[1])

// Transposed convolution: weights [C, M/G, KH, KW].
#define CONV_T_CASE(case_name, xs, ws, m, n_attrs, attrs)                \
  BEGIN(case_name)                                                       \
  const char *x = IN(b, 4, xs);                                          \
  const char *w = CST(b, 4, ws);                                         \
  const char *c = CST(b, 1, S(m));                                       \
  const char *y = NODE(b, VKP_OP_CONV_TRANSPOSE, 3, L(x, w, c), n_attrs, attrs); \
  END(y)

CONV_T_CASE(conv_transpose_s2, S(1, 3, 5, 4), S(3, 2, 3, 3), 2, 2,
            A(AIS("strides", 2, 2), AIS("pads", 1, 1, 0, 1)))
CONV_T_CASE(conv_transpose_grouped_dil_opad, S(2, 4, 4, 3), S(4, 3, 2, 3), 6, 4,
            A(AI("group", 2), AIS("strides", 3, 2), AIS("dilations", 2, 1),
              AIS("output_padding", 1, 1)))

// Transposed convolutions with >= 8 output channels per group: the implicit
// GEMM per output phase (conv_transpose_gemm.comp). A U-Net's 2x2 stride-2
// upsampling (one tap per phase), and 70 channels over 17x17 outputs (two
// channel tiles, 81 positions in the largest of the 4 phases, 3x3 taps that
// land unevenly across phases).
CONV_T_CASE(conv_transpose_gemm_k2s2, S(1, 9, 5, 6), S(9, 10, 2, 2), 10, 1,
            A(AIS("strides", 2, 2)))
CONV_T_CASE(conv_transpose_gemm_tiles, S(1, 3, 9, 9), S(3, 70, 3, 3), 70, 2,
            A(AIS("strides", 2, 2), AIS("pads", 1, 1, 1, 1)))

// A 1-D convolution as the ONNX importer writes it: 2-D over a unit height.
CONV_CASE(conv_unit_height, S(1, 4, 1, 19), S(6, 2, 1, 5), 1, 3,
          A(AI("group", 2), AIS("pads", 0, 2, 0, 2), AIS("strides", 1, 2)))

// Convolutions over 3 spatial dims: weights [M, C/G, KD, KH, KW], pads
// (front, top, left, back, bottom, right). The same templates as 2-D (a
// 2-D window is a 3-D one of depth 1).
#define CONV3_CASE(case_name, xs, ws, bias, n_attrs, attrs)              \
  BEGIN(case_name)                                                       \
  const char *x = IN(b, 5, xs);                                          \
  const char *w = CST(b, 5, ws);                                         \
  const char *y;                                                         \
  if (bias) {                                                            \
    const char *c = CST(b, 1, S((ws)[0]));                               \
    y = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), n_attrs, attrs);           \
  } else {                                                               \
    y = NODE(b, VKP_OP_CONV2D, 2, L(x, w), n_attrs, attrs);              \
  }                                                                      \
  END(y)

// 210 output pixels: the implicit GEMM by default.
CONV3_CASE(conv3d_3x3x3_pad1, S(1, 3, 5, 6, 7), S(5, 3, 3, 3, 3), 1, 1,
           A(AIS("pads", 1, 1, 1, 1, 1, 1)))
// Strides, dilations and uneven pads per dim, two images; > 64 output
// channels and > 64 pixels (two GEMM tiles each way), K = 2*2*3*2 = 24.
CONV3_CASE(conv3d_gemm_stride_dil, S(2, 2, 7, 8, 11), S(66, 2, 2, 3, 2), 0, 3,
           A(AIS("strides", 2, 1, 2), AIS("dilations", 2, 1, 3), AIS("pads", 1, 0, 2, 0, 1, 1)))
// 8 output pixels: the direct kernel by default.
CONV3_CASE(conv3d_small_direct, S(1, 3, 3, 4, 3), S(4, 3, 2, 2, 2), 1, 1,
           A(AIS("pads", 0, 0, 0, 0, 1, 0)))
CONV3_CASE(conv3d_grouped_g2, S(1, 4, 4, 5, 5), S(6, 2, 3, 1, 3), 1, 3,
           A(AI("group", 2), AIS("pads", 1, 0, 1, 1, 0, 1), AIS("strides", 1, 1, 2)))
// Depthwise (conv_depthwise.comp), channel multiplier 2, output width 5.
CONV3_CASE(conv3d_depthwise_m2, S(1, 3, 4, 5, 9), S(6, 1, 3, 3, 3), 1, 4,
           A(AI("group", 3), AIS("pads", 1, 1, 1, 1, 1, 1), AIS("strides", 1, 1, 2),
             AIS("dilations", 2, 1, 1)))

// An IR graph's 1-D windows (ONNX's arrive as 2-D over a unit height): unit
// depth and height in the same templates. 40 output pixels: the implicit GEMM.
BEGIN(conv1d_gemm_dil)
const char *x = IN(b, 3, S(2, 4, 41));
const char *w = CST(b, 3, S(6, 4, 3));
const char *y = NODE(b, VKP_OP_CONV2D, 2, L(x, w), 2,
                     A(AIS("pads", 2, 1), AIS("dilations", 2)));
END(y)

BEGIN(maxpool1d_ceil)
const char *x = IN(b, 3, S(1, 3, 11));
const char *y = NODE(b, VKP_OP_MAX_POOL2D, 1, L(x), 4,
                     A(AIS("kernel_shape", 3), AIS("strides", 2), AIS("pads", 1, 0),
                       AI("ceil_mode", 1)));
END(y)

// Reductions longer than lavapipe's loop budget (65535 iterations per
// invocation; "lavapipe's loop limit" in codegen/spirv/README.md) run as
// split-K: partial sums over slices of at most 32768 steps, then their
// reduction with the bias and the epilogue (2 dispatches). Positive data, so
// that the sums of ~70,000 terms have no cancellation. A 1-D convolution
// with a 70,000-tap kernel (3 slices):
BEGIN(conv1d_long_kernel)
const char *x = IN(b, 3, S(1, 1, 70010));
const char *w = CST_RANGE(b, 3, S(2, 1, 70000), 0.01f, 1.0f);
const char *c = CST(b, 1, S(2));
const char *y = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), 0, NULL);
END(y)
// 66,000 input channels x 1x2 taps, with a fused epilogue (the compiler
// unrolls short tap loops, so the channel loop alone passes the budget).
BEGIN(conv_long_channels_neg)
const char *x = IN(b, 4, S(1, 66000, 2, 3));
const char *w = CST_RANGE(b, 4, S(2, 66000, 1, 2), 0.01f, 1.0f);
const char *c = CST(b, 1, S(2));
const char *y = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), 1, A(AIS("pads", 0, 1, 0, 0)));
const char *z = NODE(b, VKP_OP_NEG, 1, L(y), 0, NULL);
END(z)
// Depthwise (group = C) with a 70,000-tap kernel over a unit height.
BEGIN(conv_long_depthwise)
const char *x = IN(b, 4, S(1, 2, 1, 70003));
const char *w = CST_RANGE(b, 4, S(4, 1, 1, 70000), 0.01f, 1.0f);
const char *y = NODE(b, VKP_OP_CONV2D, 2, L(x, w), 2,
                     A(AI("group", 2), AIS("strides", 1, 2)));
END(y)
// Transposed, stride 2: 8192 channels x the taps that land (up to 9).
BEGIN(conv_transpose_long_channels)
const char *x = IN(b, 4, S(1, 8192, 2, 2));
const char *w = CST_RANGE(b, 4, S(8192, 2, 3, 3), 0.01f, 1.0f);
const char *c = CST(b, 1, S(2));
const char *y = NODE(b, VKP_OP_CONV_TRANSPOSE, 3, L(x, w, c), 1, A(AIS("strides", 2, 2)));
END(y)
// K = 70,000: the GEMM's K slices are not a choice either.
BEGIN(matmul_long_k_2x70000x3)
const char *x = IN(b, 2, S(2, 70000));
const char *w = CST_RANGE(b, 2, S(70000, 3), 0.01f, 1.0f);
const char *y = NODE(b, VKP_OP_MATMUL, 2, L(x, w), 0, NULL);
END(y)

// Transposed convolution over 3 spatial dims: weights [C, M/G, KD, KH, KW].
#define CONV_T3_CASE(case_name, xs, ws, m, n_attrs, attrs)               \
  BEGIN(case_name)                                                       \
  const char *x = IN(b, 5, xs);                                          \
  const char *w = CST(b, 5, ws);                                         \
  const char *c = CST(b, 1, S(m));                                       \
  const char *y = NODE(b, VKP_OP_CONV_TRANSPOSE, 3, L(x, w, c), n_attrs, attrs); \
  END(y)

CONV_T3_CASE(conv_transpose3d_s2_opad, S(1, 2, 3, 4, 3), S(2, 3, 3, 2, 3), 3, 3,
             A(AIS("strides", 2, 1, 2), AIS("pads", 1, 0, 1, 0, 1, 1),
               AIS("output_padding", 1, 0, 1)))
CONV_T3_CASE(conv_transpose3d_grouped_dil, S(2, 4, 2, 3, 3), S(4, 2, 2, 2, 2), 4, 3,
             A(AI("group", 2), AIS("dilations", 2, 1, 1), AIS("strides", 1, 2, 2)))
// Through the GEMM: 2 groups of 8 output channels, dilation > stride.
CONV_T3_CASE(conv_transpose3d_gemm_grouped, S(1, 4, 3, 4, 3), S(4, 8, 2, 3, 2), 16, 5,
             A(AI("group", 2), AIS("strides", 2, 1, 2), AIS("dilations", 1, 3, 1),
               AIS("pads", 1, 0, 1, 0, 2, 0), AIS("output_padding", 1, 0, 1)))

// conv3d + bias + relu + residual add: one dispatch (the implicit GEMM's
// epilogue).
BEGIN(fuse_conv3d_residual)
const char *x = IN(b, 5, S(1, 4, 3, 5, 6));
const char *w = CST(b, 5, S(4, 4, 3, 3, 3));
const char *c = CST(b, 1, S(4));
const char *conv = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), 1,
                        A(AIS("pads", 1, 1, 1, 1, 1, 1)));
const char *r = NODE(b, VKP_OP_RELU, 1, L(conv), 0, NULL);
const char *y = NODE(b, VKP_OP_ADD, 2, L(r, x), 0, NULL);
END(y)

// GlobalAveragePool and GlobalMaxPool (a reduce_max over the spatial axes)
// over a volume.
BEGIN(global_avg_pool_3d)
const char *x = IN(b, 5, S(2, 3, 3, 4, 5));
const char *y = NODE(b, VKP_OP_GLOBAL_AVG_POOL, 1, L(x), 0, NULL);
END(y)

BEGIN(global_max_pool_3d)
const char *x = IN(b, 5, S(1, 4, 3, 5, 2));
const char *y = NODE(b, VKP_OP_REDUCE_MAX, 1, L(x), 2,
                     A(AIS("axes", 2, 3, 4), AI("keepdims", 1)));
END(y)

BEGIN(global_avg_pool_2x3x5x7)
const char *x = IN(b, 4, S(2, 3, 5, 7));
const char *y = NODE(b, VKP_OP_GLOBAL_AVG_POOL, 1, L(x), 0, NULL);
END(y)

BEGIN(global_avg_pool_16x16)
const char *x = IN(b, 4, S(2, 3, 16, 16));
const char *y = NODE(b, VKP_OP_GLOBAL_AVG_POOL, 1, L(x), 0, NULL);
END(y)

BEGIN(global_avg_pool_rank3)
const char *x = IN(b, 3, S(1, 4, 13));
const char *y = NODE(b, VKP_OP_GLOBAL_AVG_POOL, 1, L(x), 0, NULL);
END(y)

// Convolution -> batch_norm -> relu: batch_norm is a broadcast op, fused
// into the convolution's epilogue with per-channel operands.
BEGIN(fuse_conv_batch_norm_relu)
const char *x = IN(b, 4, S(1, 3, 7, 6));
const char *w = CST(b, 4, S(5, 3, 3, 3));
const char *conv = NODE(b, VKP_OP_CONV2D, 2, L(x, w), 1, A(AIS("pads", 1, 0, 1, 0)));
const char *sc = CST(b, 1, S(5)), *bi = CST(b, 1, S(5)), *mu = CST(b, 1, S(5));
const char *var = CST_RANGE(b, 1, S(5), 0.1f, 2.0f);
const char *bn = NODE(b, VKP_OP_BATCH_NORM, 5, L(conv, sc, bi, mu, var), 0, NULL);
const char *y = NODE(b, VKP_OP_RELU, 1, L(bn), 0, NULL);
END(y)

// --- normalisation ------------------------------------------------------------

#define BN_CASE(case_name, rank, xs, c)                                       \
  BEGIN(case_name)                                                            \
  const char *x = IN(b, rank, xs);                                            \
  const char *sc = CST(b, 1, S(c)), *bi = CST(b, 1, S(c)), *mu = CST(b, 1, S(c)); \
  const char *var = CST_RANGE(b, 1, S(c), 0.1f, 2.0f);                        \
  const char *y = NODE(b, VKP_OP_BATCH_NORM, 5, L(x, sc, bi, mu, var), 1,    \
                       A(AF("epsilon", 1e-3)));                               \
  END(y)

BN_CASE(batch_norm_2x3x4x5, 4, S(2, 3, 4, 5), 3)
BN_CASE(batch_norm_rank2, 2, S(3, 5), 5)

#define SOFTMAX_CASE(case_name, rank, xs, axis) \
  BEGIN(case_name)                              \
  const char *x = IN(b, rank, xs);              \
  const char *y = NODE(b, VKP_OP_SOFTMAX, 1, L(x), 1, A(AI("axis", axis))); \
  END(y)

SOFTMAX_CASE(softmax_last, 2, S(7, 37), -1)
SOFTMAX_CASE(softmax_mid, 3, S(2, 3, 4), 1)
SOFTMAX_CASE(softmax_first, 2, S(5, 3), 0)

SOFTMAX_CASE(softmax_long_row, 2, S(3, 300), -1)

BEGIN(layer_norm_long_row)
const char *x = IN(b, 3, S(2, 1, 257));
const char *sc = CST(b, 1, S(257)), *bi = CST(b, 1, S(1));
const char *y = NODE(b, VKP_OP_LAYER_NORM, 3, L(x, sc, bi), 1, A(AI("axis", 1)));
END(y)

BEGIN(layer_norm_last)
const char *x = IN(b, 2, S(5, 33));
const char *sc = CST(b, 1, S(33)), *bi = CST(b, 1, S(33));
const char *y = NODE(b, VKP_OP_LAYER_NORM, 3, L(x, sc, bi), 1, A(AI("axis", -1)));
END(y)

BEGIN(layer_norm_axis1_bcast_scale)
const char *x = IN(b, 3, S(3, 4, 5));
const char *sc = CST(b, 2, S(1, 5));
const char *y = NODE(b, VKP_OP_LAYER_NORM, 2, L(x, sc), 2,
                     A(AI("axis", 1), AF("epsilon", 1e-3)));
END(y)

// RMSNorm (rms = 1): both the per-invocation and the workgroup kernel.
BEGIN(rms_norm_last)
const char *x = IN(b, 2, S(5, 33));
const char *sc = CST(b, 1, S(33));
const char *y = NODE(b, VKP_OP_LAYER_NORM, 2, L(x, sc), 2,
                     A(AI("axis", -1), AI("rms", 1)));
END(y)

BEGIN(rms_norm_long_row)
const char *x = IN(b, 3, S(2, 1, 257));
const char *sc = CST(b, 1, S(257)), *bi = CST(b, 1, S(1));
const char *y = NODE(b, VKP_OP_LAYER_NORM, 3, L(x, sc, bi), 2,
                     A(AI("axis", 1), AI("rms", 1)));
END(y)

// Attention: heads sharing K and V, an additive mask over the keys and a
// relu epilogue fused after it.
BEGIN(attention_mask_relu)
const char *q = IN(b, 4, S(2, 3, 5, 8)), *kt = IN(b, 4, S(2, 1, 8, 7));
const char *v = IN(b, 4, S(2, 1, 7, 6)), *m = CST(b, 4, S(2, 1, 1, 7));
const char *s = NODE(b, VKP_OP_ATTENTION, 4, L(q, kt, v, m), 1, A(AF("scale", 0.35)));
const char *y = NODE(b, VKP_OP_RELU, 1, L(s), 0, NULL);
END(y)

// A 0/1 condition (filled where zero) and no mask: the condition takes the
// binding after V; long rows of keys, rank-3 operands.
BEGIN(attention_cond_long)
const char *q = IN(b, 3, S(2, 3, 16)), *kt = IN(b, 3, S(2, 16, 300));
const char *v = IN(b, 3, S(2, 300, 5)), *c = CST_RANGE(b, 2, S(3, 300), 0.0f, 1.0f);
const char *r = NODE(b, VKP_OP_ROUND, 1, L(c), 0, NULL);
const char *y = NODE(b, VKP_OP_ATTENTION, 5, L(q, kt, v, "", r), 3,
                     A(AF("scale", 0.25), AF("fill", -1e9), AI("fill_where", 0)));
END(y)

// --- reductions and data movement ---------------------------------------------

#define REDUCE_CASE(case_name, op, rank, xs, n_attrs, attrs) \
  BEGIN(case_name)                                           \
  const char *x = IN(b, rank, xs);                           \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs);      \
  END(y)

REDUCE_CASE(reduce_mean_axis1, VKP_OP_REDUCE_MEAN, 3, S(2, 7, 3), 1, A(AIS("axes", 1)))
REDUCE_CASE(reduce_sum_axes02_nokeep, VKP_OP_REDUCE_SUM, 3, S(3, 5, 4), 2,
            A(AIS("axes", 0, 2), AI("keepdims", 0)))
REDUCE_CASE(reduce_mean_all, VKP_OP_REDUCE_MEAN, 2, S(6, 11), 0, NULL)
REDUCE_CASE(reduce_sum_empty_axis, VKP_OP_REDUCE_SUM, 2, S(3, 0), 1, A(AIS("axes", 1)))
REDUCE_CASE(reduce_sum_long, VKP_OP_REDUCE_SUM, 3, S(3, 40, 5), 1, A(AIS("axes", 0, 1)))
REDUCE_CASE(reduce_sum_neg_axis, VKP_OP_REDUCE_SUM, 4, S(2, 3, 1, 5), 1, A(AIS("axes", -1)))
// Rows of 70,000 (past the budget for one invocation per row, the rule on
// CPU devices): one workgroup per row on every device.
REDUCE_CASE(reduce_sum_long_row_70000, VKP_OP_REDUCE_SUM, 2, S(2, 70000), 1,
            A(AIS("axes", 1)))
// log_softmax: its outputs (about -11) test the sum tightly, where
// softmax's (about 1/70,000) would fall under the absolute tolerance.
BEGIN(log_softmax_long_row_70000)
const char *x = IN(b, 2, S(2, 70000));
const char *y = NODE(b, VKP_OP_LOG_SOFTMAX, 1, L(x), 1, A(AI("axis", 1)));
END(y)

REDUCE_CASE(reduce_max_axis1, VKP_OP_REDUCE_MAX, 3, S(2, 7, 3), 1, A(AIS("axes", 1)))
REDUCE_CASE(reduce_max_empty_axis, VKP_OP_REDUCE_MAX, 2, S(3, 0), 1, A(AIS("axes", 1)))
REDUCE_CASE(reduce_min_all, VKP_OP_REDUCE_MIN, 2, S(6, 11), 0, NULL)
REDUCE_CASE(reduce_min_long, VKP_OP_REDUCE_MIN, 2, S(3, 200), 1, A(AIS("axes", -1)))
// NaN in about half the rows (where x > 0.99): max and min keep it, in the
// per-invocation and the workgroup (tree or subgroup) reductions alike.
#define REDUCE_NAN_CASE(case_name, op)                                           \
  BEGIN(case_name)                                                               \
  const char *x = IN(b, 2, S(6, 150));                                           \
  float consts[2] = {0.99f, NAN};                                                \
  const char *c[2];                                                              \
  for (int i = 0; i < 2; ++i) {                                                  \
    c[i] = vkp__gb_name(b, 'c');                                                 \
    g_const_data(b->g, c[i], VKP_DTYPE_FLOAT32, 1, S(1), &consts[i]);            \
  }                                                                              \
  const char *gt = NODE(b, VKP_OP_GREATER, 2, L(x, c[0]), 0, NULL);              \
  const char *w = NODE(b, VKP_OP_WHERE, 3, L(gt, c[1], x), 0, NULL);             \
  const char *y = NODE(b, op, 1, L(w), 1, A(AIS("axes", 1)));                    \
  END(y)
REDUCE_NAN_CASE(reduce_max_nan_rows, VKP_OP_REDUCE_MAX)
REDUCE_NAN_CASE(reduce_min_nan_rows, VKP_OP_REDUCE_MIN)
REDUCE_CASE(reduce_prod_axes02, VKP_OP_REDUCE_PROD, 3, S(3, 5, 4), 2,
            A(AIS("axes", 0, 2), AI("keepdims", 0)))
REDUCE_CASE(reduce_prod_long, VKP_OP_REDUCE_PROD, 2, S(2, 70), 1, A(AIS("axes", 1)))
REDUCE_CASE(reduce_l1_long, VKP_OP_REDUCE_L1, 3, S(3, 40, 5), 1, A(AIS("axes", 0, 1)))
REDUCE_CASE(reduce_l2_neg_axis, VKP_OP_REDUCE_L2, 4, S(2, 3, 1, 5), 1, A(AIS("axes", -1)))
REDUCE_CASE(reduce_log_sum_axis0, VKP_OP_REDUCE_LOG_SUM, 2, S(5, 7), 1, A(AIS("axes", 0)))
REDUCE_CASE(reduce_log_sum_exp_long, VKP_OP_REDUCE_LOG_SUM_EXP, 2, S(2, 300), 1,
            A(AIS("axes", 1)))
REDUCE_CASE(reduce_log_sum_exp_mid, VKP_OP_REDUCE_LOG_SUM_EXP, 3, S(3, 4, 5), 1,
            A(AIS("axes", 1)))
REDUCE_CASE(reduce_sum_square_all, VKP_OP_REDUCE_SUM_SQUARE, 2, S(4, 9), 0, NULL)

// --- softmax relatives and normalisations (graph/op_norm.c) --------------------

#define AXIS_CASE(case_name, op, rank, xs, n_attrs, attrs) \
  BEGIN(case_name)                                         \
  const char *x = IN(b, rank, xs);                         \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs);    \
  END(y)

AXIS_CASE(log_softmax_mid, VKP_OP_LOG_SOFTMAX, 3, S(2, 3, 4), 1, A(AI("axis", 1)))
AXIS_CASE(log_softmax_long_row, VKP_OP_LOG_SOFTMAX, 2, S(3, 300), 0, NULL)
AXIS_CASE(hardmax_last, VKP_OP_HARDMAX, 2, S(7, 37), 0, NULL)
AXIS_CASE(hardmax_first, VKP_OP_HARDMAX, 2, S(5, 3), 1, A(AI("axis", 0)))
AXIS_CASE(hardmax_long_row, VKP_OP_HARDMAX, 3, S(2, 300, 2), 1, A(AI("axis", 1)))
AXIS_CASE(lp_norm_p1_axis0, VKP_OP_LP_NORM, 2, S(5, 3), 2, A(AI("axis", 0), AI("p", 1)))
AXIS_CASE(lp_norm_p2_long_row, VKP_OP_LP_NORM, 2, S(2, 300), 0, NULL)
AXIS_CASE(mvn_default_axes, VKP_OP_MEAN_VARIANCE_NORM, 4, S(2, 3, 4, 5), 0, NULL)
AXIS_CASE(mvn_axis1_long, VKP_OP_MEAN_VARIANCE_NORM, 3, S(2, 100, 3), 1, A(AIS("axes", 1)))
AXIS_CASE(lrn_size3, VKP_OP_LRN, 4, S(2, 5, 3, 3), 1, A(AI("size", 3)))
AXIS_CASE(lrn_even_size, VKP_OP_LRN, 3, S(1, 4, 7), 4,
          A(AI("size", 2), AF("alpha", 0.1), AF("beta", 0.9), AF("bias", 1.5)))

// --- selection (graph/op_select.c) --------------------------------------------

AXIS_CASE(cum_sum_mid, VKP_OP_CUM_SUM, 3, S(2, 5, 3), 1, A(AI("axis", 1)))
AXIS_CASE(cum_sum_exclusive_reverse_first, VKP_OP_CUM_SUM, 2, S(6, 4), 3,
          A(AI("axis", 0), AI("exclusive", 1), AI("reverse", 1)))
AXIS_CASE(cum_sum_long_row, VKP_OP_CUM_SUM, 2, S(3, 300), 2,
          A(AI("axis", 1), AI("reverse", 1)))

// Padding and resampling: every pad mode (a relu epilogue fused into one),
// resize modes in 2-D and 3-D, crop with extrapolation, block moves, tile,
// expand and trilu.
#define AFS(n, ...) {.name = n, .kind = VKP_ATTR_FLOATS, .floats = (const double[]){__VA_ARGS__}, \
                     .count = (int32_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))}
BEGIN(pad_constant_relu)
const char *x = IN(b, 4, S(1, 2, 5, 3));
const char *p = NODE(b, VKP_OP_PAD, 1, L(x), 2, A(AIS("pads", 0, 1, 2, -1, 0, 0, 3, 2), AF("value", -0.5)));
const char *y = NODE(b, VKP_OP_RELU, 1, L(p), 0, NULL);
END(y)
AXIS_CASE(pad_reflect, VKP_OP_PAD, 3, S(2, 4, 5), 2, A(AIS("pads", 0, 3, 2, 1, 2, 6), AS("mode", "reflect")))
AXIS_CASE(pad_edge, VKP_OP_PAD, 2, S(3, 4), 2, A(AIS("pads", 2, -1, 1, 3), AS("mode", "edge")))
AXIS_CASE(pad_wrap, VKP_OP_PAD, 2, S(3, 4), 2, A(AIS("pads", 4, 5, 1, 9), AS("mode", "wrap")))
AXIS_CASE(resize_nearest, VKP_OP_RESIZE, 4, S(1, 2, 3, 5), 2,
          A(AFS("scales", 1, 1, 2.5, 0.6), AS("nearest_mode", "round_prefer_ceil")))
AXIS_CASE(resize_linear_3d, VKP_OP_RESIZE, 5, S(1, 2, 3, 4, 5), 3,
          A(AS("mode", "linear"), AFS("scales", 1, 1, 2, 0.5, 1.4),
            AS("coordinate_transformation_mode", "align_corners")))
AXIS_CASE(resize_cubic_antialias, VKP_OP_RESIZE, 4, S(1, 1, 9, 8), 4,
          A(AS("mode", "cubic"), AFS("scales", 1, 1, 0.4, 1.5), AI("antialias", 1),
            AI("exclude_outside", 1)))
AXIS_CASE(resize_crop, VKP_OP_RESIZE, 4, S(1, 1, 5, 6), 5,
          A(AS("mode", "linear"), AFS("scales", 1, 1, 0.8, 0.5), AIS("sizes", 1, 1, 4, 3),
            AS("coordinate_transformation_mode", "tf_crop_and_resize"),
            AFS("roi", 0, 0, -0.2, 0.1, 1, 1, 1.3, 0.9)))
AXIS_CASE(depth_to_space_crd, VKP_OP_DEPTH_TO_SPACE, 4, S(2, 8, 3, 2), 2,
          A(AI("blocksize", 2), AS("mode", "CRD")))
AXIS_CASE(depth_to_space_dcr, VKP_OP_DEPTH_TO_SPACE, 4, S(1, 9, 2, 3), 1, A(AI("blocksize", 3)))
AXIS_CASE(space_to_depth_2, VKP_OP_SPACE_TO_DEPTH, 4, S(2, 3, 4, 6), 1, A(AI("blocksize", 2)))
AXIS_CASE(tile_3d, VKP_OP_TILE, 3, S(2, 1, 3), 1, A(AIS("repeats", 2, 5, 3)))
AXIS_CASE(expand_rank_up, VKP_OP_EXPAND, 2, S(3, 1), 1, A(AIS("shape", 2, 1, 4)))
AXIS_CASE(trilu_lower_k, VKP_OP_TRILU, 3, S(2, 5, 4), 2, A(AI("upper", 0), AI("k", -1)))
AXIS_CASE(trilu_upper, VKP_OP_TRILU, 2, S(4, 7), 1, A(AI("k", 2)))

// grid_sample on 2-D images, grids in [-1.3, 1.3] (some positions outside):
// every mode and padding, both align_corners.
#define GRID_CASE(case_name, n_attrs, attrs)                                \
  BEGIN(case_name)                                                         \
  const char *x = IN(b, 4, S(2, 3, 5, 6));                                 \
  const char *grid = IN(b, 4, S(2, 4, 7, 2));                              \
  const char *y = NODE(b, VKP_OP_GRID_SAMPLE, 2, L(x, grid), n_attrs, attrs); \
  END(y)

GRID_CASE(grid_sample_linear_zeros, 0, NULL)
GRID_CASE(grid_sample_nearest_border_align, 3,
          A(AS("mode", "nearest"), AS("padding_mode", "border"), AI("align_corners", 1)))
GRID_CASE(grid_sample_cubic_reflection, 2,
          A(AS("mode", "cubic"), AS("padding_mode", "reflection")))
GRID_CASE(grid_sample_linear_reflection_align, 2,
          A(AS("padding_mode", "reflection"), AI("align_corners", 1)))

BEGIN(instance_norm_2x3x5x7)
const char *x = IN(b, 4, S(2, 3, 5, 7));
const char *sc = CST(b, 1, S(3)), *bi = CST(b, 1, S(3));
const char *y = NODE(b, VKP_OP_INSTANCE_NORM, 3, L(x, sc, bi), 0, NULL);
END(y)

BEGIN(group_norm_g2)
const char *x = IN(b, 4, S(2, 4, 3, 5));
const char *sc = CST(b, 1, S(4)), *bi = CST(b, 1, S(4));
const char *y = NODE(b, VKP_OP_GROUP_NORM, 3, L(x, sc, bi), 2,
                     A(AI("num_groups", 2), AF("epsilon", 1e-3)));
END(y)

BEGIN(group_norm_long_row)
const char *x = IN(b, 3, S(1, 4, 40));
const char *sc = CST(b, 1, S(4)), *bi = CST(b, 1, S(4));
const char *y = NODE(b, VKP_OP_GROUP_NORM, 3, L(x, sc, bi), 1, A(AI("num_groups", 1)));
END(y)

#define MOVE_CASE(case_name, op, rank, xs, n_attrs, attrs) \
  BEGIN(case_name)                                         \
  const char *x = IN(b, rank, xs);                         \
  const char *y = NODE(b, op, 1, L(x), n_attrs, attrs);    \
  END(y)

MOVE_CASE(transpose_default, VKP_OP_TRANSPOSE, 3, S(2, 3, 5), 0, NULL)
MOVE_CASE(transpose_3102, VKP_OP_TRANSPOSE, 4, S(2, 3, 4, 5), 1, A(AIS("perm", 3, 1, 0, 2)))
MOVE_CASE(slice_steps, VKP_OP_SLICE, 3, S(5, 7, 9), 4,
          A(AIS("starts", 1, -1, 0), AIS("ends", 4, 0, 100), AIS("axes", 0, 1, 2),
            AIS("steps", 2, -2, 3)))
MOVE_CASE(slice_axis, VKP_OP_SLICE, 2, S(4, 11), 3,
          A(AIS("starts", 3), AIS("ends", 8), AIS("axes", -1)))
MOVE_CASE(reshape_io, VKP_OP_RESHAPE, 3, S(2, 3, 4), 1, A(AIS("shape", 6, -1)))
MOVE_CASE(flatten_io, VKP_OP_FLATTEN, 4, S(2, 3, 2, 2), 1, A(AI("axis", 2)))
MOVE_CASE(squeeze_io, VKP_OP_SQUEEZE, 3, S(3, 1, 5), 0, NULL)
MOVE_CASE(unsqueeze_io, VKP_OP_UNSQUEEZE, 2, S(3, 5), 1, A(AIS("axes", 0, 3)))
MOVE_CASE(identity_io, VKP_OP_IDENTITY, 1, S(9), 0, NULL)

BEGIN(concat_axis1_three)
const char *x = IN(b, 3, S(2, 3, 4));
const char *z = IN(b, 3, S(2, 1, 4));
const char *c = CST(b, 3, S(2, 5, 4));
const char *y = NODE(b, VKP_OP_CONCAT, 3, L(x, z, c), 1, A(AI("axis", 1)));
END(y)

BEGIN(concat_axis0)
const char *x = IN(b, 2, S(3, 7));
const char *z = IN(b, 2, S(1, 7));
const char *y = NODE(b, VKP_OP_CONCAT, 2, L(x, z), 1, A(AI("axis", 0)));
END(y)

// Twelve inputs: one dispatch each, binding that input and the output, so
// more inputs than a dispatch has bindings (RWKV's stack of 16 time steps).
BEGIN(concat_twelve_inputs)
const char *in[12];
for (int i = 0; i < 12; ++i)
  in[i] = i % 3 == 2 ? CST(b, 3, S(2, 1 + i % 4, 3)) : IN(b, 3, S(2, 1 + i % 4, 3));
const char *y = NODE(b, VKP_OP_CONCAT, 12, in, 1, A(AI("axis", 1)));
END(y)

// Aliases between kernels share storage: no dispatch of their own.
BEGIN(alias_between_kernels)
const char *x = IN(b, 3, S(2, 3, 4));
const char *r = NODE(b, VKP_OP_EXP, 1, L(x), 0, NULL);
const char *f = NODE(b, VKP_OP_RESHAPE, 1, L(r), 1, A(AIS("shape", 4, 6)));
const char *t = NODE(b, VKP_OP_TRANSPOSE, 1, L(f), 0, NULL);
END(t)

// --- fused patterns -----------------------------------------------------------

// matmul + bias + relu: one dispatch.
BEGIN(fuse_matmul_bias_relu)
const char *x = IN(b, 2, S(9, 20));
const char *w = CST(b, 2, S(20, 13));
const char *bias = CST(b, 1, S(13));
const char *m = NODE(b, VKP_OP_MATMUL, 2, L(x, w), 0, NULL);
const char *a = NODE(b, VKP_OP_ADD, 2, L(m, bias), 0, NULL);
const char *y = NODE(b, VKP_OP_RELU, 1, L(a), 0, NULL);
END(y)

// conv + bias + relu + residual add + clip (relu6-like): one dispatch.
BEGIN(fuse_conv_residual)
const char *x = IN(b, 4, S(1, 4, 6, 6));
const char *w = CST(b, 4, S(4, 4, 3, 3));
const char *c = CST(b, 1, S(4));
const char *conv = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), 1, A(AIS("pads", 1, 1, 1, 1)));
const char *r = NODE(b, VKP_OP_RELU, 1, L(conv), 0, NULL);
const char *s = NODE(b, VKP_OP_ADD, 2, L(r, x), 0, NULL);
const char *y = NODE(b, VKP_OP_CLIP, 1, L(s), 2, A(AF("min", 0.0), AF("max", 6.0)));
END(y)

// Bias + relu + residual add over a convolution that spans two implicit-GEMM
// channel tiles (72 channels, stride 2); the residual is a second input.
BEGIN(fuse_conv_gemm_residual)
const char *x = IN(b, 4, S(1, 6, 17, 18));
const char *w = CST(b, 4, S(72, 6, 3, 3));
const char *c = CST(b, 1, S(72));
const char *res = IN(b, 4, S(1, 72, 9, 9));
const char *conv = NODE(b, VKP_OP_CONV2D, 3, L(x, w, c), 2,
                        A(AIS("pads", 1, 1, 1, 0), AIS("strides", 2, 2)));
const char *r = NODE(b, VKP_OP_RELU, 1, L(conv), 0, NULL);
const char *y = NODE(b, VKP_OP_ADD, 2, L(r, res), 0, NULL);
END(y)

// An elementwise chain with two external operands: one dispatch.
BEGIN(fuse_elementwise_chain)
const char *x = IN(b, 2, S(5, 7));
const char *z = IN(b, 1, S(7));
const char *two = CST(b, 1, S(1));
const char *m = NODE(b, VKP_OP_MUL, 2, L(x, two), 0, NULL);
const char *s = NODE(b, VKP_OP_SIGMOID, 1, L(m), 0, NULL);
const char *a = NODE(b, VKP_OP_ADD, 2, L(s, z), 0, NULL);
const char *t = NODE(b, VKP_OP_TANH, 1, L(a), 0, NULL);
const char *q = NODE(b, VKP_OP_MUL, 2, L(t, t), 0, NULL);
END(q)

// A value read by two nodes is materialised: exp, then two consumers.
BEGIN(fuse_shared_value)
const char *x = IN(b, 2, S(3, 4));
const char *e = NODE(b, VKP_OP_EXP, 1, L(x), 0, NULL);
const char *p = NODE(b, VKP_OP_ADD, 2, L(e, x), 0, NULL);
const char *q = NODE(b, VKP_OP_NEG, 1, L(e), 0, NULL);
END(p, q)

// softmax + gemm epilogue chain (gemm -> add -> gelu), then softmax.
BEGIN(fuse_gemm_gelu_softmax)
const char *x = IN(b, 2, S(4, 10));
const char *w = CST(b, 2, S(10, 6));
const char *c = CST(b, 1, S(6));
const char *g = NODE(b, VKP_OP_GEMM, 3, L(x, w, c), 0, NULL);
const char *h = NODE(b, VKP_OP_GELU, 1, L(g), 0, NULL);
const char *y = NODE(b, VKP_OP_SOFTMAX, 1, L(h), 0, NULL);
END(y)

// A broadcast that grows the shape is not fused (the add's output is larger
// than the matmul's): two dispatches.
BEGIN(no_fuse_growing_broadcast)
const char *x = IN(b, 2, S(1, 5));
const char *w = CST(b, 2, S(5, 3));
const char *z = IN(b, 2, S(4, 3));
const char *m = NODE(b, VKP_OP_MATMUL, 2, L(x, w), 0, NULL);
const char *y = NODE(b, VKP_OP_ADD, 2, L(m, z), 0, NULL);
END(y)

// An intermediate that is also a graph output is written, not fused.
BEGIN(output_and_intermediate)
const char *x = IN(b, 1, S(10));
const char *r = NODE(b, VKP_OP_RELU, 1, L(x), 0, NULL);
const char *y = NODE(b, VKP_OP_EXP, 1, L(r), 0, NULL);
END(r, y)

// Liveness reuse: a chain of non-fusable ops (softmax) over scratch.
BEGIN(scratch_chain)
const char *x = IN(b, 2, S(3, 8));
const char *s1 = NODE(b, VKP_OP_SOFTMAX, 1, L(x), 0, NULL);
const char *s2 = NODE(b, VKP_OP_SOFTMAX, 1, L(s1), 1, A(AI("axis", 0)));
const char *s3 = NODE(b, VKP_OP_SOFTMAX, 1, L(s2), 0, NULL);
const char *s4 = NODE(b, VKP_OP_SOFTMAX, 1, L(s3), 1, A(AI("axis", 0)));
END(s4)

// 65536 * 64 + 3 elements: a 1-D grid past 65535 workgroups.
BEGIN(big_grid)
const char *x = IN(b, 1, S(4194307));
const char *y = NODE(b, VKP_OP_NEG, 1, L(x), 0, NULL);
END(y)

// --- comparisons, logic, where ---------------------------------------------------

// Every comparison and logic op feeding where, fused into one dispatch (the
// bool values stay 0.0/1.0 inside the kernel); equal on bool operands.
BEGIN(logic_where_fused)
const char *x = IN(b, 2, S(3, 5)), *y = IN(b, 2, S(3, 5)), *z = IN(b, 1, S(5));
const char *lt = NODE(b, VKP_OP_LESS, 2, L(x, y), 0, NULL);
const char *gt = NODE(b, VKP_OP_GREATER, 2, L(x, z), 0, NULL);
const char *ng = NODE(b, VKP_OP_NOT, 1, L(gt), 0, NULL);
const char *a = NODE(b, VKP_OP_AND, 2, L(lt, ng), 0, NULL);
const char *le = NODE(b, VKP_OP_LESS_OR_EQUAL, 2, L(y, z), 0, NULL);
const char *xo = NODE(b, VKP_OP_XOR, 2, L(a, le), 0, NULL);
const char *ge = NODE(b, VKP_OP_GREATER_OR_EQUAL, 2, L(z, x), 0, NULL);
const char *o = NODE(b, VKP_OP_OR, 2, L(xo, ge), 0, NULL);
const char *l2 = NODE(b, VKP_OP_LESS, 2, L(y, x), 0, NULL);
const char *eq = NODE(b, VKP_OP_EQUAL, 2, L(o, l2), 0, NULL);
const char *w = NODE(b, VKP_OP_WHERE, 3, L(eq, x, y), 0, NULL);
END(w)

// A bool value read by two nodes is materialised as bytes and read back
// (three dispatches).
BEGIN(logic_bool_buffer)
const char *x = IN(b, 2, S(7, 3)), *y = IN(b, 2, S(1, 3));
const char *c = NODE(b, VKP_OP_LESS, 2, L(x, y), 0, NULL);
const char *p = NODE(b, VKP_OP_WHERE, 3, L(c, x, y), 0, NULL);
const char *nc = NODE(b, VKP_OP_NOT, 1, L(c), 0, NULL);
const char *q = NODE(b, VKP_OP_WHERE, 3, L(nc, y, x), 0, NULL);
END(p, q)

// --- indexing ------------------------------------------------------------------

// Token embeddings by int64 ids plus position embeddings: the add fuses
// into the gather (one dispatch).
BEGIN(gather_embedding_add_pos)
const char *table = CST(b, 2, S(13, 8)), *pos = CST(b, 2, S(5, 8));
const char *ids = CST_INDICES(b, VKP_DTYPE_INT64, 2, S(2, 5), 13);
const char *e = NODE(b, VKP_OP_GATHER, 2, L(table, ids), 0, NULL);
const char *y = NODE(b, VKP_OP_ADD, 2, L(e, pos), 0, NULL);
END(y)

// int32 indices (negative ones included) along a middle axis of an input.
BEGIN(gather_axis1_int32)
const char *x = IN(b, 3, S(3, 7, 5));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT32, 1, S(4), 7);
const char *y = NODE(b, VKP_OP_GATHER, 2, L(x, idx), 1, A(AI("axis", 1)));
END(y)

// --- integer data (int32 / int64; int64 needs shaderInt64) ----------------

// int64 arithmetic, min/max/abs/neg/relu and a broadcast, fused (abs feeds
// two nodes: two dispatches); the divisor is a constant in [1, 7].
BEGIN(int64_arith_fused)
const char *x = IN_DT(b, VKP_DTYPE_INT64, 2, S(3, 5)), *z = IN_DT(b, VKP_DTYPE_INT64, 1, S(5));
const char *d = CST_INT(b, VKP_DTYPE_INT64, 1, S(5), 1, 7);
const char *a = NODE(b, VKP_OP_ADD, 2, L(x, z), 0, NULL);
const char *m = NODE(b, VKP_OP_MUL, 2, L(a, x), 0, NULL);
const char *q = NODE(b, VKP_OP_DIV, 2, L(m, d), 0, NULL);
const char *n = NODE(b, VKP_OP_NEG, 1, L(q), 0, NULL);
const char *r = NODE(b, VKP_OP_RELU, 1, L(n), 0, NULL);
const char *ab = NODE(b, VKP_OP_ABS, 1, L(x), 0, NULL);
const char *sg = NODE(b, VKP_OP_SIGN, 1, L(ab), 0, NULL);
const char *mn = NODE(b, VKP_OP_MIN, 3, L(r, ab, z), 0, NULL);
const char *mx = NODE(b, VKP_OP_MAX, 2, L(mn, sg), 0, NULL);
const char *y = NODE(b, VKP_OP_SUB, 2, L(mx, x), 0, NULL);
END(y)

// BERT's attention mask: int64 ones/zeros cast to float, (1 - m) * -10000,
// and the same mask through equal/where; one dispatch.
BEGIN(int64_mask_where)
const char *mask = IN_DT(b, VKP_DTYPE_INT64, 2, S(2, 7));
const char *zero = CST_INT(b, VKP_DTYPE_INT64, 1, S(1), 0, 0);
const char *one = CST_RANGE(b, 1, S(1), 1.0f, 1.0f);
const char *big = CST_RANGE(b, 1, S(1), -10000.0f, -10000.0f);
const char *s = CST(b, 2, S(2, 7));
const char *f = NODE(b, VKP_OP_CAST, 1, L(mask), 1, A(AS("to", "float32")));
const char *inv = NODE(b, VKP_OP_SUB, 2, L(one, f), 0, NULL);
const char *bias = NODE(b, VKP_OP_MUL, 2, L(inv, big), 0, NULL);
const char *eq = NODE(b, VKP_OP_EQUAL, 2, L(mask, zero), 0, NULL);
const char *w = NODE(b, VKP_OP_WHERE, 3, L(eq, bias, s), 0, NULL);
END(w)

// Casts float -> int32 -> int64 -> bool -> float and int32 comparisons
// (the int32 value feeds two nodes: two dispatches).
BEGIN(cast_chain_int32)
const char *x = IN(b, 2, S(4, 9));
const char *i = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "int32")));
const char *c = CST_INT(b, VKP_DTYPE_INT32, 1, S(9), -2, 2);
const char *lt = NODE(b, VKP_OP_LESS, 2, L(i, c), 0, NULL);
const char *j = NODE(b, VKP_OP_CAST, 1, L(i), 1, A(AS("to", "int64")));
const char *t = NODE(b, VKP_OP_CAST, 1, L(j), 1, A(AS("to", "bool")));
const char *o = NODE(b, VKP_OP_OR, 2, L(t, lt), 0, NULL);
const char *y = NODE(b, VKP_OP_CAST, 1, L(o), 1, A(AS("to", "float32")));
END(y)

// int64 data through transpose, slice, concat and gather: data movement
// keeps every bit (two values past 2^32 included via the multiply).
BEGIN(int64_movement)
const char *x = IN_DT(b, VKP_DTYPE_INT64, 2, S(4, 6));
const char *big = CST_INT(b, VKP_DTYPE_INT64, 1, S(1), 3000000, 3000000);
const char *w = NODE(b, VKP_OP_MUL, 2, L(x, big), 0, NULL);
const char *wide = NODE(b, VKP_OP_MUL, 2, L(w, big), 0, NULL);
const char *t = NODE(b, VKP_OP_TRANSPOSE, 1, L(wide), 1, A(AIS("perm", 1, 0)));
const char *sl = NODE(b, VKP_OP_SLICE, 1, L(t), 3, A(AIS("starts", 1, 0), AIS("ends", 5, 4), AIS("steps", 2, 1)));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT64, 1, S(3), 6);
const char *g = NODE(b, VKP_OP_GATHER, 2, L(t, idx), 0, NULL);
const char *y = NODE(b, VKP_OP_CONCAT, 2, L(sl, g), 1, A(AI("axis", 0)));
END(y)

BEGIN(cum_sum_int64)
const char *x = IN_DT(b, VKP_DTYPE_INT64, 2, S(3, 11));
const char *y = NODE(b, VKP_OP_CUM_SUM, 1, L(x), 2, A(AI("axis", 1), AI("exclusive", 1)));
END(y)

// --- selection ---------------------------------------------------------------

BEGIN(arg_max_axis1_keep)
const char *x = IN(b, 3, S(2, 9, 5));
const char *y = NODE(b, VKP_OP_ARG_MAX, 1, L(x), 1, A(AI("axis", 1)));
END(y)

// Whole numbers in [-2, 2] tie often: the last index of the minimum.
BEGIN(arg_min_int64_last)
const char *x = IN_DT(b, VKP_DTYPE_INT64, 2, S(6, 13));
const char *y = NODE(b, VKP_OP_ARG_MIN, 1, L(x), 3,
                     A(AI("axis", -1), AI("keepdims", 0), AI("select_last_index", 1)));
END(y)

// Values and indices: one dispatch each.
BEGIN(top_k_largest)
const char *x = IN(b, 3, S(2, 11, 3)), *o[2];
NODE2(b, VKP_OP_TOP_K, 1, L(x), 2, A(AI("k", 4), AI("axis", 1)), o);
END(o[0], o[1])

// Smallest on int32 data with ties (kept in index order).
BEGIN(top_k_smallest_int32)
const char *x = IN_DT(b, VKP_DTYPE_INT32, 2, S(3, 17)), *o[2];
NODE2(b, VKP_OP_TOP_K, 1, L(x), 2, A(AI("k", 5), AI("largest", 0)), o);
END(o[0], o[1])

// --- gather_elements, gather_nd ------------------------------------------------

BEGIN(gather_elements_axis1_int64)
const char *x = IN(b, 3, S(2, 7, 3));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT64, 3, S(2, 4, 3), 7);
const char *y = NODE(b, VKP_OP_GATHER_ELEMENTS, 2, L(x, idx), 1, A(AI("axis", 1)));
END(y)

BEGIN(gather_elements_int32_data)
const char *x = IN_DT(b, VKP_DTYPE_INT32, 2, S(5, 4));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT32, 2, S(5, 6), 4);
const char *y = NODE(b, VKP_OP_GATHER_ELEMENTS, 2, L(x, idx), 1, A(AI("axis", 1)));
END(y)

// Pairs of coordinates into the last two dims of each batch.
BEGIN(gather_nd_batch1)
const char *x = IN(b, 4, S(2, 5, 4, 3));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT64, 3, S(2, 3, 2), 4);
const char *y = NODE(b, VKP_OP_GATHER_ND, 2, L(x, idx), 1, A(AI("batch_dims", 1)));
END(y)

BEGIN(gather_nd_int32_rows)
const char *x = IN(b, 3, S(6, 5, 2));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT32, 2, S(4, 1), 6);
const char *y = NODE(b, VKP_OP_GATHER_ND, 2, L(x, idx), 0, NULL);
END(y)

// 8-bit integers widen on load and wrap on store: uint8 subtraction,
// Python-style and C-style mod on int8, shifts and bit operations.
BEGIN(uint8_wrap_shift_bits)
const char *x = IN_DT(b, VKP_DTYPE_UINT8, 2, S(3, 7)), *z = IN_DT(b, VKP_DTYPE_UINT8, 1, S(7));
const char *d = NODE(b, VKP_OP_SUB, 2, L(x, z), 0, NULL);
const char *sh = CST_INT(b, VKP_DTYPE_UINT8, 1, S(7), 0, 7);
const char *l = NODE(b, VKP_OP_BIT_SHIFT, 2, L(d, sh), 1, A(AS("direction", "LEFT")));
const char *r = NODE(b, VKP_OP_BIT_SHIFT, 2, L(x, sh), 1, A(AS("direction", "RIGHT")));
const char *o = NODE(b, VKP_OP_BITWISE_XOR, 2, L(l, r), 0, NULL);
const char *a = NODE(b, VKP_OP_BITWISE_AND, 2, L(o, x), 0, NULL);
const char *n = NODE(b, VKP_OP_BITWISE_NOT, 1, L(a), 0, NULL);
const char *y = NODE(b, VKP_OP_BITWISE_OR, 2, L(n, z), 0, NULL);
END(y)

// float16 data widens to float on load and narrows on store: max,
// transpose and reduce_max keep its values exact; cast to float32 and on.
BEGIN(float16_movement_max)
const char *x = IN_DT(b, VKP_DTYPE_FLOAT16, 2, S(3, 5)), *z = IN_DT(b, VKP_DTYPE_FLOAT16, 1, S(5));
const char *m = NODE(b, VKP_OP_MAX, 2, L(x, z), 0, NULL);
const char *t = NODE(b, VKP_OP_TRANSPOSE, 1, L(x), 1, A(AIS("perm", 1, 0)));
const char *r = NODE(b, VKP_OP_REDUCE_MAX, 1, L(t), 1, A(AIS("axes", 1)));
const char *c = NODE(b, VKP_OP_CAST, 1, L(r), 1, A(AS("to", "float32")));
const char *y = NODE(b, VKP_OP_MUL, 2, L(c, c), 0, NULL);
END(m, y)

// bfloat16 widens by a shift and narrows rounding to nearest even: a
// square (exact in float32) cast back, then moved.
BEGIN(bfloat16_square_transpose)
const char *x = IN_DT(b, VKP_DTYPE_BFLOAT16, 2, S(3, 5));
const char *c = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "float32")));
const char *m = NODE(b, VKP_OP_MUL, 2, L(c, c), 0, NULL);
const char *h = NODE(b, VKP_OP_CAST, 1, L(m), 1, A(AS("to", "bfloat16")));
const char *y = NODE(b, VKP_OP_TRANSPOSE, 1, L(h), 1, A(AIS("perm", 1, 0)));
END(y)

// float64 computes in double: a running sum, log-sum-exp (math.glsl's
// double exp/log), NumPy mod and min, cast both ways.
BEGIN(float64_cum_sum_lse_mod)
const char *x = IN_DT(b, VKP_DTYPE_FLOAT64, 2, S(4, 6));
const char *cs = NODE(b, VKP_OP_CUM_SUM, 1, L(x), 2, A(AI("axis", 1), AI("exclusive", 1)));
const char *l = NODE(b, VKP_OP_REDUCE_LOG_SUM_EXP, 1, L(cs), 1, A(AIS("axes", 1)));
const char *f = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "float32")));
const char *d = NODE(b, VKP_OP_CAST, 1, L(f), 1, A(AS("to", "float64")));
const char *md = NODE(b, VKP_OP_MOD, 2, L(x, d), 0, NULL);
const char *k = NODE(b, VKP_OP_MIN, 2, L(md, cs), 0, NULL);
END(l, k)

// (u)int16 widen to int/uint: Python-style mod, max, shifts; pow on
// integers (int32 base and exponent, float base with an int64 exponent)
// and clip of int8 by operand and by default bounds.
BEGIN(int16_mod_pow_clip)
const char *x = IN_DT(b, VKP_DTYPE_INT16, 2, S(3, 4)), *u = IN_DT(b, VKP_DTYPE_UINT16, 1, S(4));
const char *dv = CST_INT(b, VKP_DTYPE_INT16, 1, S(4), 1, 7);
const char *md = NODE(b, VKP_OP_MOD, 2, L(x, dv), 0, NULL);
const char *mx = NODE(b, VKP_OP_MAX, 2, L(md, x), 0, NULL);
const char *sh = CST_INT(b, VKP_DTYPE_UINT16, 1, S(4), 0, 15);
const char *su = NODE(b, VKP_OP_BIT_SHIFT, 2, L(u, sh), 1, A(AS("direction", "LEFT")));
const char *xi = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "int32")));
const char *e = CST_INT(b, VKP_DTYPE_INT32, 1, S(4), 0, 3);
const char *p = NODE(b, VKP_OP_POW, 2, L(xi, e), 0, NULL);
const char *xf = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "float32")));
const char *e64 = CST_INT(b, VKP_DTYPE_INT64, 1, S(4), -2, 3);
const char *pf = NODE(b, VKP_OP_POW, 2, L(xf, e64), 0, NULL);
const char *pc = NODE(b, VKP_OP_CAST, 1, L(p), 1, A(AS("to", "float32")));
const char *ps = NODE(b, VKP_OP_ADD, 2, L(pc, pf), 0, NULL);
const char *x8 = NODE(b, VKP_OP_CAST, 1, L(x), 1, A(AS("to", "int8")));
const char *lo = CST_INT(b, VKP_DTYPE_INT8, 0, NULL, -5, -5);
const char *c1 = NODE(b, VKP_OP_CLIP, 2, L(x8, lo), 0, NULL);
const char *c2 = NODE(b, VKP_OP_CLIP, 1, L(x8), 0, NULL);
const char *c = NODE(b, VKP_OP_ADD, 2, L(c1, c2), 0, NULL);
END(mx, su, ps, c)

// Bool data through the movement kernels: transpose, pad, identity.
BEGIN(bool_movement)
const char *x = IN_DT(b, VKP_DTYPE_BOOL, 2, S(3, 5));
const char *t = NODE(b, VKP_OP_TRANSPOSE, 1, L(x), 1, A(AIS("perm", 1, 0)));
const char *p = NODE(b, VKP_OP_TILE, 1, L(t), 1, A(AIS("repeats", 2, 1)));
END(p)

// Scatter as a gather per output: random indices repeat, so the add and
// max reductions fold several updates in the reference's order; scatter_nd
// over row slices multiplies; one_hot from int64 indices; a per-axis
// quantize to int8 with a zero point and a blocked dequantize back.
BEGIN(scatter_elements_add_max)
const char *x = IN(b, 3, S(3, 4, 5)), *u = IN(b, 3, S(3, 6, 2));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT64, 3, S(3, 6, 2), 4);
const char *a = NODE(b, VKP_OP_SCATTER_ELEMENTS, 3, L(x, idx, u), 2,
                     A(AI("axis", 1), AS("reduction", "add")));
const char *i32 = CST_INDICES(b, VKP_DTYPE_INT32, 3, S(2, 4, 3), 5);
const char *u2 = CST(b, 3, S(2, 4, 3));
const char *m = NODE(b, VKP_OP_SCATTER_ELEMENTS, 3, L(a, i32, u2), 2,
                     A(AI("axis", 2), AS("reduction", "max")));
END(m)

BEGIN(scatter_nd_mul_one_hot)
const char *x = IN(b, 3, S(5, 3, 4)), *u = IN(b, 3, S(4, 3, 4));
const char *idx = CST_INDICES(b, VKP_DTYPE_INT64, 2, S(4, 1), 5);
const char *y = NODE(b, VKP_OP_SCATTER_ND, 3, L(x, idx, u), 1, A(AS("reduction", "mul")));
const char *k = CST_INDICES(b, VKP_DTYPE_INT64, 2, S(3, 4), 6);
const char *onoff = CST(b, 1, S(2));
const char *h = NODE(b, VKP_OP_ONE_HOT, 2, L(k, onoff), 2, A(AI("depth", 6), AI("axis", 1)));
END(y, h)

// reverse_sequence both ways round: [time, batch, 3] with lengths 0..4
// reversed per batch entry, then [batch, time] of the result.
BEGIN(reverse_sequence_both_layouts)
const char *x = IN(b, 3, S(4, 5, 3));
const char *lens = CST_INT(b, VKP_DTYPE_INT64, 1, S(5), 0, 4);
const char *y = NODE(b, VKP_OP_REVERSE_SEQUENCE, 2, L(x, lens), 2,
                     A(AI("batch_axis", 1), AI("time_axis", 0)));
const char *lens2 = CST_INT(b, VKP_DTYPE_INT64, 1, S(4), 0, 5);
const char *z = NODE(b, VKP_OP_REVERSE_SEQUENCE, 2, L(y, lens2), 2,
                     A(AI("batch_axis", 0), AI("time_axis", 1)));
END(z)

BEGIN(quantize_axis_dequantize_block)
const char *x = IN(b, 3, S(2, 3, 4));
const char *sc = CST_RANGE(b, 1, S(3), 0.01f, 0.05f);
const char *zp = CST_INT(b, VKP_DTYPE_INT8, 1, S(3), -20, 20);
const char *q = NODE(b, VKP_OP_QUANTIZE_LINEAR, 3, L(x, sc, zp), 1, A(AI("axis", 1)));
const char *bs = CST_RANGE(b, 3, S(2, 3, 2), 0.01f, 0.05f);
const char *bz = CST_INT(b, VKP_DTYPE_INT8, 3, S(2, 3, 2), -20, 20);
const char *y = NODE(b, VKP_OP_DEQUANTIZE_LINEAR, 3, L(q, bs, bz), 2,
                     A(AI("axis", 2), AI("block_size", 2)));
END(q, y)

// An exact integer product with a zero point per row of A and one for B,
// batch broadcast.
BEGIN(matmul_integer_uint8_zp)
const char *a = IN_DT(b, VKP_DTYPE_UINT8, 3, S(2, 3, 7));
const char *bm = CST_INT(b, VKP_DTYPE_UINT8, 2, S(7, 5), 0, 255);
const char *az = CST_INT(b, VKP_DTYPE_UINT8, 1, S(3), 0, 255);
const char *bz = CST_INT(b, VKP_DTYPE_UINT8, 0, NULL, 0, 255);
const char *y = NODE(b, VKP_OP_MATMUL_INTEGER, 4, L(a, bm, az, bz), 0, NULL);
END(y)

// Recurrent ops: a bidirectional LSTM with bias, sequence lengths and an
// initial state writing Y, Y_h and Y_c (a dispatch each); a reverse GRU
// with linear_before_reset in the batch-first layout; an RNN with relu and
// clip.
BEGIN(lstm_bidirectional_lens)
const char *x = IN(b, 3, S(4, 2, 3));
const char *w = CST(b, 3, S(2, 20, 3)), *r = CST(b, 3, S(2, 20, 5));
const char *bias = CST(b, 2, S(2, 40));
const char *lens = CST_INT(b, VKP_DTYPE_INT32, 1, S(2), 1, 4);
const char *h0 = CST(b, 3, S(2, 2, 5));
const char *outs[3] = {vkp__gb_name(b, 'v'), vkp__gb_name(b, 'v'), vkp__gb_name(b, 'v')};
VKP_TEST_OK(vkp_graph_add_node(b->g, "lstm", VKP_OP_LSTM, 6, L(x, w, r, bias, lens, h0), 3, outs,
                               1, A(AS("direction", "bidirectional")), NULL));
END(outs[0], outs[1], outs[2])

BEGIN(gru_reverse_batch_first_rnn_clip)
const char *x = IN(b, 3, S(2, 5, 3));
const char *w = CST(b, 3, S(1, 12, 3)), *r = CST(b, 3, S(1, 12, 4));
const char *bias = CST(b, 2, S(1, 24));
const char *go[2] = {vkp__gb_name(b, 'v'), vkp__gb_name(b, 'v')};
VKP_TEST_OK(vkp_graph_add_node(b->g, "gru", VKP_OP_GRU, 4, L(x, w, r, bias), 2, go, 3,
                               A(AS("direction", "reverse"), AI("layout", 1),
                                 AI("linear_before_reset", 1)),
                               NULL));
const char *xr = IN(b, 3, S(3, 2, 4));
const char *wr = CST(b, 3, S(1, 6, 4)), *rr = CST(b, 3, S(1, 6, 6));
const char *ro[2] = {vkp__gb_name(b, 'v'), vkp__gb_name(b, 'v')};
VKP_TEST_OK(vkp_graph_add_node(b->g, "rnn", VKP_OP_RNN, 3, L(xr, wr, rr), 2, ro, 2,
                               A(AS("activations", "relu"), AF("clip", 0.75)), NULL));
END(go[0], go[1], ro[0], ro[1])

BEGIN(int8_mod_both)
const char *x = IN_DT(b, VKP_DTYPE_INT8, 2, S(4, 5));
const char *m = CST_INT(b, VKP_DTYPE_INT32, 1, S(5), 1, 9);
const char *c = NODE(b, VKP_OP_CAST, 1, L(m), 1, A(AS("to", "int8")));
const char *nc = NODE(b, VKP_OP_NEG, 1, L(c), 0, NULL);
const char *p = NODE(b, VKP_OP_MOD, 2, L(x, nc), 0, NULL);
const char *f = NODE(b, VKP_OP_MOD, 2, L(x, c), 1, A(AI("fmod", 1)));
const char *y = NODE(b, VKP_OP_ADD, 2, L(p, f), 0, NULL);
END(y)

// Unsigned 32- and 64-bit data: mod, min, abs and sign forms without
// negative values, and a uint64 product past 2^32.
BEGIN(uint64_uint32_mod_min)
const char *x = IN_DT(b, VKP_DTYPE_UINT64, 2, S(3, 5)), *z = IN_DT(b, VKP_DTYPE_UINT32, 1, S(5));
const char *c1 = CST_INT(b, VKP_DTYPE_UINT64, 1, S(1), 1, 1);
const char *w = NODE(b, VKP_OP_CAST, 1, L(z), 1, A(AS("to", "uint64")));
const char *d = NODE(b, VKP_OP_ADD, 2, L(w, c1), 0, NULL);
const char *big = NODE(b, VKP_OP_MUL, 2, L(x, x), 0, NULL);
const char *big2 = NODE(b, VKP_OP_MUL, 2, L(big, big), 0, NULL);
const char *q = NODE(b, VKP_OP_MOD, 2, L(big2, d), 0, NULL);
const char *s = NODE(b, VKP_OP_SIGN, 1, L(q), 0, NULL);
const char *ab = NODE(b, VKP_OP_ABS, 1, L(big2), 0, NULL);
const char *y = NODE(b, VKP_OP_MIN, 3, L(ab, s, x), 0, NULL);
END(y)

// NaN and infinities picked by where (kernels may not keep NaN through
// arithmetic: drivers assume IEEE specials away unless told otherwise).
BEGIN(is_nan_is_inf)
const char *x = IN(b, 2, S(3, 7)), *z = IN(b, 1, S(7));
float specials[3] = {-INFINITY, INFINITY, NAN};
const char *sp[3];
for (int i = 0; i < 3; ++i) {
  sp[i] = vkp__gb_name(b, 'c');
  g_const_data(b->g, sp[i], VKP_DTYPE_FLOAT32, 1, S(1), &specials[i]);
}
const char *lt = NODE(b, VKP_OP_LESS, 2, L(x, z), 0, NULL);
const char *gt = NODE(b, VKP_OP_GREATER, 2, L(x, z), 0, NULL);
const char *inf = NODE(b, VKP_OP_WHERE, 3, L(lt, sp[0], sp[1]), 0, NULL);
const char *w = NODE(b, VKP_OP_WHERE, 3, L(gt, inf, sp[2]), 0, NULL);
const char *a = NODE(b, VKP_OP_IS_NAN, 1, L(w), 0, NULL);
const char *i = NODE(b, VKP_OP_IS_INF, 1, L(w), 2, A(AI("detect_positive", 0), AI("detect_negative", 1)));
const char *y = NODE(b, VKP_OP_OR, 2, L(a, i), 0, NULL);
END(y)

// --- Fourier transforms ------------------------------------------------------

BEGIN(dft_real_onesided_pad)
const char *x = IN(b, 3, S(3, 12, 1));
const char *y = NODE(b, VKP_OP_DFT, 1, L(x), 3, A(AI("axis", 1), AI("length", 16), AI("onesided", 1)));
END(y)

BEGIN(dft_complex_inverse_inner)
const char *x = IN(b, 4, S(2, 7, 3, 2));
const char *y = NODE(b, VKP_OP_DFT, 1, L(x), 2, A(AI("axis", 1), AI("inverse", 1)));
const char *z = NODE(b, VKP_OP_RELU, 1, L(y), 0, NULL);
END(z)

BEGIN(dft_long_97)
const char *x = IN(b, 3, S(2, 97, 2));
const char *y = NODE(b, VKP_OP_DFT, 1, L(x), 1, A(AI("axis", 1)));
END(y)

BEGIN(stft_window)
const char *x = IN(b, 3, S(2, 45, 1));
const char *w = IN(b, 1, S(12));
const char *y = NODE(b, VKP_OP_STFT, 2, L(x, w), 1, A(AI("frame_step", 5)));
END(y)

BEGIN(stft_complex_no_window)
const char *x = IN(b, 3, S(1, 30, 2));
const char *y = NODE(b, VKP_OP_STFT, 1, L(x), 3,
                     A(AI("frame_step", 4), AI("frame_length", 9), AI("onesided", 0)));
END(y)

BEGIN(det_batched_4x4)
const char *x = IN(b, 4, S(2, 3, 4, 4));
const char *y = NODE(b, VKP_OP_DET, 1, L(x), 0, NULL);
END(y)

BEGIN(det_scalar_1x1)
const char *x = IN(b, 2, S(1, 1));
const char *y = NODE(b, VKP_OP_DET, 1, L(x), 0, NULL);
END(y)

BEGIN(eye_like_int32_to_float)
const char *x = IN_DT(b, VKP_DTYPE_INT32, 2, S(4, 6));
const char *y = NODE(b, VKP_OP_EYE_LIKE, 1, L(x), 2, A(AS("dtype", "float32"), AI("k", 2)));
END(y)

BEGIN(eye_like_int64_neg)
const char *x = IN(b, 2, S(5, 3));
const char *y = NODE(b, VKP_OP_EYE_LIKE, 1, L(x), 2, A(AS("dtype", "int64"), AI("k", -1)));
END(y)

// --- losses --------------------------------------------------------------------

BEGIN(nll_mean_weight_ignore)
const char *x = IN(b, 3, S(3, 4, 5));
const char *t = CST_INT(b, VKP_DTYPE_INT64, 2, S(3, 5), 0, 3);
const char *w = CST_RANGE(b, 1, S(4), 0.5f, 2.0f);
const char *y = NODE(b, VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, 3, L(x, t, w), 2,
                     A(AS("reduction", "mean"), AI("ignore_index", 2)));
END(y)

BEGIN(nll_sum_int32)
const char *x = IN(b, 2, S(6, 7));
const char *t = CST_INT(b, VKP_DTYPE_INT32, 1, S(6), 0, 6);
const char *y = NODE(b, VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, 2, L(x, t), 1,
                     A(AS("reduction", "sum")));
END(y)

// The loss per position and log_softmax(X): one dispatch each.
BEGIN(sce_none_log_prob)
const char *x = IN(b, 3, S(2, 5, 3)), *o[2];
const char *t = CST_INT(b, VKP_DTYPE_INT32, 2, S(2, 3), 0, 4);
NODE2(b, VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, 2, L(x, t), 1, A(AS("reduction", "none")), o);
END(o[0], o[1])

#define CASE(n, lo, hi, d) {#n, build_##n, lo, hi, d}
const vkp_spirv_case_t vkp_spirv_cases[] = {
    CASE(sqrt_7x13, 0.01f, 4.0f, 1),
    CASE(exp_1, -3.0f, 3.0f, 1),
    CASE(neg_3x5x17, -1.0f, 1.0f, 1),
    CASE(abs_31, -1.0f, 1.0f, 1),
    CASE(relu_2x3x5x7, -1.0f, 1.0f, 1),
    CASE(leaky_relu_67, -1.0f, 1.0f, 1),
    CASE(clip_5x11, -1.0f, 1.0f, 1),
    CASE(clip_default_13, -1.0f, 1.0f, 1),
    CASE(sigmoid_3x37, -8.0f, 8.0f, 1),
    CASE(tanh_101, -4.0f, 4.0f, 1),
    CASE(erf_4x29, -3.0f, 3.0f, 1),
    CASE(gelu_7x7, -3.0f, 3.0f, 1),
    CASE(gelu_tanh_19, -3.0f, 3.0f, 1),
    CASE(hard_swish_3x41, -5.0f, 5.0f, 1),
    CASE(log_5x9, 0.01f, 8.0f, 1),
    CASE(floor_37, -4.0f, 4.0f, 1),
    CASE(ceil_3x11, -4.0f, 4.0f, 1),
    CASE(round_41, -4.0f, 4.0f, 1),
    CASE(sign_2x13, -1.0f, 1.0f, 1),
    CASE(reciprocal_17, 0.25f, 4.0f, 1),
    CASE(sin_7x7, -4.0f, 4.0f, 1),
    CASE(cos_3x9, -4.0f, 4.0f, 1),
    CASE(tan_23, -1.3f, 1.3f, 1),
    CASE(asin_5x5, -0.99f, 0.99f, 1),
    CASE(acos_19, -0.99f, 0.99f, 1),
    CASE(atan_29, -6.0f, 6.0f, 1),
    CASE(sinh_31, -4.0f, 4.0f, 1),
    CASE(cosh_11, -4.0f, 4.0f, 1),
    CASE(asinh_2x7, -6.0f, 6.0f, 1),
    CASE(acosh_13, 1.0f, 6.0f, 1),
    CASE(atanh_17, -0.95f, 0.95f, 1),
    CASE(softplus_43, -12.0f, 12.0f, 1),
    CASE(softsign_9, -5.0f, 5.0f, 1),
    CASE(mish_3x7, -6.0f, 6.0f, 1),
    CASE(hard_sigmoid_2x9, -4.0f, 4.0f, 1),
    CASE(elu_27, -3.0f, 3.0f, 1),
    CASE(selu_4x4, -3.0f, 3.0f, 1),
    CASE(celu_19, -3.0f, 3.0f, 1),
    CASE(thresholded_relu_21, -1.0f, 1.0f, 1),
    CASE(shrink_33, -2.0f, 2.0f, 1),
    CASE(add_same_2x3x5, -1.0f, 1.0f, 1),
    CASE(sub_bcast_4x1x5_3x5, -1.0f, 1.0f, 1),
    CASE(mul_scalar_1_7, -1.0f, 1.0f, 1),
    CASE(div_bcast_13x1_1x11, 0.5f, 2.0f, 1),
    CASE(pow_3x7_7, 0.5f, 2.0f, 1),
    CASE(prelu_channel, -1.0f, 1.0f, 1),
    CASE(mod_fmod_5x9_9, -3.0f, 3.0f, 1),
    CASE(mod_numpy_5x9_9, -3.0f, 3.0f, 1),
    CASE(min_3_inputs, -1.0f, 1.0f, 1),
    CASE(max_3_inputs, -1.0f, 1.0f, 1),
    CASE(sum_3_inputs, -1.0f, 1.0f, 1),
    CASE(mean_3_inputs, -1.0f, 1.0f, 1),
    CASE(clip_tensor_bounds, -1.0f, 1.0f, 1),
    CASE(fuse_variadic_chain, -1.0f, 1.0f, 1),
    CASE(matmul_1x1x1, -1.0f, 1.0f, 1),
    CASE(matmul_7x13x5, -1.0f, 1.0f, 1),
    CASE(matmul_65x67x33, -1.0f, 1.0f, 1),
    CASE(matmul_batch_2x3x17x9_9x11, -1.0f, 1.0f, 1),
    CASE(matmul_bcast_3x1x4x5_2x5x3, -1.0f, 1.0f, 1),
    CASE(matmul_vec_13_13x5, -1.0f, 1.0f, 1),
    CASE(matmul_4x13_vec_13, -1.0f, 1.0f, 1),
    CASE(matmul_skinny_2x4096x64, 0.01f, 1.0f, 1),  // no cancellation over K
    CASE(gemm_plain_5x7x3, -1.0f, 1.0f, 1),
    CASE(gemm_tA_bias_n, -1.0f, 1.0f, 1),
    CASE(gemm_tB_bias_m1, -1.0f, 1.0f, 1),
    CASE(gemm_tAtB_full_c, -1.0f, 1.0f, 1),
    CASE(gemm_scalar_c, -1.0f, 1.0f, 1),
    CASE(conv_3x3_pad1, -1.0f, 1.0f, 1),
    CASE(conv_1x1_nobias, -1.0f, 1.0f, 1),
    CASE(conv_stride2_dil2, -1.0f, 1.0f, 1),
    CASE(conv_grouped_g3, -1.0f, 1.0f, 1),
    CASE(conv_depthwise, -1.0f, 1.0f, 1),
    CASE(conv_depthwise_m2_dil, -1.0f, 1.0f, 1),
    CASE(conv_5x3_asym, -1.0f, 1.0f, 1),
    CASE(conv_gemm_7x7_s2, -1.0f, 1.0f, 1),
    CASE(conv_gemm_1x1_s2, -1.0f, 1.0f, 1),
    CASE(conv_gemm_dil_pad, -1.0f, 1.0f, 1),
    CASE(maxpool_3s2p1, -1.0f, 1.0f, 1),
    CASE(maxpool_ceil_dil, -1.0f, 1.0f, 1),
    CASE(avgpool_excl_pad, -1.0f, 1.0f, 1),
    CASE(avgpool_incl_pad_ceil, -1.0f, 1.0f, 1),
    CASE(lppool_p2_pad, -1.0f, 1.0f, 1),
    CASE(lppool_p3_ceil_dil, -1.0f, 1.0f, 1),
    CASE(conv_transpose_s2, -1.0f, 1.0f, 1),
    CASE(conv_transpose_grouped_dil_opad, -1.0f, 1.0f, 1),
    CASE(conv_transpose_gemm_k2s2, -1.0f, 1.0f, 1),
    CASE(conv_transpose_gemm_tiles, -1.0f, 1.0f, 1),
    CASE(conv_unit_height, -1.0f, 1.0f, 1),
    CASE(conv3d_3x3x3_pad1, -1.0f, 1.0f, 1),
    CASE(conv3d_gemm_stride_dil, -1.0f, 1.0f, 1),
    CASE(conv3d_small_direct, -1.0f, 1.0f, 1),
    CASE(conv3d_grouped_g2, -1.0f, 1.0f, 1),
    CASE(conv3d_depthwise_m2, -1.0f, 1.0f, 1),
    CASE(conv1d_gemm_dil, -1.0f, 1.0f, 1),
    CASE(maxpool1d_ceil, -1.0f, 1.0f, 1),
    CASE(conv_transpose3d_s2_opad, -1.0f, 1.0f, 1),
    CASE(conv_transpose3d_gemm_grouped, -1.0f, 1.0f, 1),
    CASE(conv_transpose3d_grouped_dil, -1.0f, 1.0f, 1),
    CASE(fuse_conv3d_residual, -1.0f, 1.0f, 1),
    CASE(global_avg_pool_3d, -1.0f, 1.0f, 1),
    CASE(global_max_pool_3d, -1.0f, 1.0f, 1),
    CASE(global_avg_pool_2x3x5x7, -1.0f, 1.0f, 1),
    CASE(global_avg_pool_rank3, -1.0f, 1.0f, 1),
    CASE(global_avg_pool_16x16, -1.0f, 1.0f, 1),
    CASE(batch_norm_2x3x4x5, -1.0f, 1.0f, 1),
    CASE(fuse_conv_batch_norm_relu, -1.0f, 1.0f, 1),
    CASE(batch_norm_rank2, -1.0f, 1.0f, 1),
    CASE(softmax_last, -4.0f, 4.0f, 1),
    CASE(softmax_mid, -4.0f, 4.0f, 1),
    CASE(softmax_first, -4.0f, 4.0f, 1),
    CASE(softmax_long_row, -4.0f, 4.0f, 1),
    CASE(layer_norm_long_row, -1.0f, 1.0f, 1),
    CASE(layer_norm_last, -1.0f, 1.0f, 1),
    CASE(layer_norm_axis1_bcast_scale, -1.0f, 1.0f, 1),
    CASE(rms_norm_last, -1.0f, 1.0f, 1),
    CASE(rms_norm_long_row, -1.0f, 1.0f, 1),
    CASE(attention_mask_relu, -1.0f, 1.0f, 1),
    CASE(attention_cond_long, -1.0f, 1.0f, 2),
    CASE(reduce_mean_axis1, -1.0f, 1.0f, 1),
    CASE(reduce_sum_axes02_nokeep, -1.0f, 1.0f, 1),
    CASE(reduce_mean_all, -1.0f, 1.0f, 1),
    CASE(reduce_sum_neg_axis, -1.0f, 1.0f, 1),
    CASE(reduce_sum_long, -1.0f, 1.0f, 1),
    CASE(reduce_sum_empty_axis, -1.0f, 1.0f, 1),
    CASE(reduce_max_axis1, -1.0f, 1.0f, 1),
    CASE(reduce_max_empty_axis, -1.0f, 1.0f, 1),
    CASE(reduce_min_all, -1.0f, 1.0f, 1),
    CASE(reduce_min_long, -1.0f, 1.0f, 1),
    CASE(reduce_max_nan_rows, -1.0f, 1.0f, 2),
    CASE(reduce_min_nan_rows, -1.0f, 1.0f, 2),
    CASE(reduce_prod_axes02, 0.5f, 1.5f, 1),
    CASE(reduce_prod_long, 0.8f, 1.2f, 1),
    CASE(reduce_l1_long, -1.0f, 1.0f, 1),
    CASE(reduce_l2_neg_axis, -1.0f, 1.0f, 1),
    CASE(reduce_log_sum_axis0, 0.1f, 2.0f, 1),
    CASE(reduce_log_sum_exp_long, -4.0f, 4.0f, 1),
    CASE(reduce_log_sum_exp_mid, -4.0f, 4.0f, 1),
    CASE(reduce_sum_square_all, -1.0f, 1.0f, 1),
    CASE(log_softmax_mid, -4.0f, 4.0f, 1),
    CASE(log_softmax_long_row, -4.0f, 4.0f, 1),
    CASE(hardmax_last, -1.0f, 1.0f, 1),
    CASE(hardmax_first, -1.0f, 1.0f, 1),
    CASE(hardmax_long_row, -1.0f, 1.0f, 1),
    CASE(lp_norm_p1_axis0, -1.0f, 1.0f, 1),
    CASE(lp_norm_p2_long_row, -1.0f, 1.0f, 1),
    CASE(mvn_default_axes, -1.0f, 1.0f, 1),
    CASE(mvn_axis1_long, -1.0f, 1.0f, 1),
    CASE(lrn_size3, -1.0f, 1.0f, 1),
    CASE(lrn_even_size, -1.0f, 1.0f, 1),
    CASE(cum_sum_mid, -1.0f, 1.0f, 1),
    CASE(cum_sum_exclusive_reverse_first, -1.0f, 1.0f, 1),
    CASE(cum_sum_long_row, -1.0f, 1.0f, 1),
    CASE(pad_constant_relu, -1.0f, 1.0f, 1),
    CASE(pad_reflect, -1.0f, 1.0f, 1),
    CASE(pad_edge, -1.0f, 1.0f, 1),
    CASE(pad_wrap, -1.0f, 1.0f, 1),
    CASE(resize_nearest, -1.0f, 1.0f, 1),
    CASE(resize_linear_3d, -1.0f, 1.0f, 1),
    CASE(resize_cubic_antialias, -1.0f, 1.0f, 1),
    CASE(resize_crop, -1.0f, 1.0f, 1),
    CASE(grid_sample_linear_zeros, -1.3f, 1.3f, 1),
    CASE(grid_sample_nearest_border_align, -1.3f, 1.3f, 1),
    CASE(grid_sample_cubic_reflection, -1.3f, 1.3f, 1),
    CASE(grid_sample_linear_reflection_align, -1.3f, 1.3f, 1),
    CASE(depth_to_space_crd, -1.0f, 1.0f, 1),
    CASE(depth_to_space_dcr, -1.0f, 1.0f, 1),
    CASE(space_to_depth_2, -1.0f, 1.0f, 1),
    CASE(tile_3d, -1.0f, 1.0f, 1),
    CASE(expand_rank_up, -1.0f, 1.0f, 1),
    CASE(trilu_lower_k, -1.0f, 1.0f, 1),
    CASE(trilu_upper, -1.0f, 1.0f, 1),
    CASE(instance_norm_2x3x5x7, -1.0f, 1.0f, 1),
    CASE(group_norm_g2, -1.0f, 1.0f, 1),
    CASE(group_norm_long_row, -1.0f, 1.0f, 1),
    CASE(transpose_default, -1.0f, 1.0f, 1),
    CASE(transpose_3102, -1.0f, 1.0f, 1),
    CASE(slice_steps, -1.0f, 1.0f, 1),
    CASE(slice_axis, -1.0f, 1.0f, 1),
    CASE(reshape_io, -1.0f, 1.0f, 1),
    CASE(logic_where_fused, -1.0f, 1.0f, 1),
    CASE(logic_bool_buffer, -1.0f, 1.0f, 3),
    CASE(gather_embedding_add_pos, -1.0f, 1.0f, 1),
    CASE(gather_axis1_int32, -1.0f, 1.0f, 1),
    CASE(int64_arith_fused, -40.0f, 40.0f, 2),
    CASE(int64_mask_where, 0.0f, 1.0f, 1),
    CASE(cast_chain_int32, -3.0f, 3.0f, 2),
    CASE(int64_movement, -50.0f, 50.0f, 6),
    CASE(cum_sum_int64, -100.0f, 100.0f, 1),
    CASE(arg_max_axis1_keep, -1.0f, 1.0f, 1),
    CASE(arg_min_int64_last, -2.0f, 2.0f, 1),
    CASE(top_k_largest, -1.0f, 1.0f, 2),
    CASE(top_k_smallest_int32, -3.0f, 3.0f, 2),
    CASE(gather_elements_axis1_int64, -1.0f, 1.0f, 1),
    CASE(gather_elements_int32_data, -9.0f, 9.0f, 1),
    CASE(gather_nd_batch1, -1.0f, 1.0f, 1),
    CASE(gather_nd_int32_rows, -1.0f, 1.0f, 1),
    CASE(nll_mean_weight_ignore, -3.0f, 0.0f, 1),
    CASE(nll_sum_int32, -3.0f, 0.0f, 1),
    CASE(sce_none_log_prob, -2.0f, 2.0f, 2),
    CASE(maxpool3d_s2p1, -1.0f, 1.0f, 1),
    CASE(maxpool_uint8, 0.0f, 255.0f, 1),
    CASE(avgpool3d_incl_pad_ceil, -1.0f, 1.0f, 1),
    CASE(lppool3d_p2_dil, -1.0f, 1.0f, 1),
    CASE(maxpool_indices_col_major, -1.0f, 1.0f, 2),
    CASE(maxpool3d_indices, -1.0f, 1.0f, 2),
    CASE(uint8_wrap_shift_bits, 0.0f, 255.0f, 1),
    CASE(int8_mod_both, -100.0f, 100.0f, 3),
    CASE(matmul_integer_uint8_zp, 0.0f, 255.0f, 1),
    CASE(lstm_bidirectional_lens, -1.0f, 1.0f, 3),
    CASE(gru_reverse_batch_first_rnn_clip, -1.0f, 1.0f, 4),
    CASE(scatter_elements_add_max, -1.0f, 1.0f, 2),
    CASE(scatter_nd_mul_one_hot, -1.0f, 1.0f, 2),
    CASE(reverse_sequence_both_layouts, -1.0f, 1.0f, 2),
    CASE(quantize_axis_dequantize_block, -3.0f, 3.0f, 2),
    CASE(float16_movement_max, -4.0f, 4.0f, 3),
    CASE(bfloat16_square_transpose, -4.0f, 4.0f, 2),
    CASE(float64_cum_sum_lse_mod, -3.0f, 3.0f, 3),
    CASE(int16_mod_pow_clip, -9.0f, 9.0f, 5),
    CASE(bool_movement, 0.0f, 1.0f, 2),
    CASE(uint64_uint32_mod_min, 0.0f, 5000.0f, 3),
    CASE(is_nan_is_inf, -1.0f, 1.0f, 2),
    CASE(dft_real_onesided_pad, -1.0f, 1.0f, 1),
    CASE(dft_complex_inverse_inner, -1.0f, 1.0f, 1),
    CASE(dft_long_97, -1.0f, 1.0f, 1),
    CASE(stft_window, -1.0f, 1.0f, 1),
    CASE(stft_complex_no_window, -1.0f, 1.0f, 1),
    CASE(det_batched_4x4, -1.0f, 1.0f, 1),
    CASE(det_scalar_1x1, -1.0f, 1.0f, 1),
    CASE(eye_like_int32_to_float, -5.0f, 5.0f, 1),
    CASE(eye_like_int64_neg, -1.0f, 1.0f, 1),
    CASE(flatten_io, -1.0f, 1.0f, 1),
    CASE(squeeze_io, -1.0f, 1.0f, 1),
    CASE(unsqueeze_io, -1.0f, 1.0f, 1),
    CASE(identity_io, -1.0f, 1.0f, 1),
    CASE(concat_axis1_three, -1.0f, 1.0f, 3),
    CASE(concat_axis0, -1.0f, 1.0f, 2),
    CASE(concat_twelve_inputs, -1.0f, 1.0f, 12),
    CASE(alias_between_kernels, -1.0f, 1.0f, 2),
    CASE(fuse_matmul_bias_relu, -1.0f, 1.0f, 1),
    CASE(fuse_conv_residual, -1.0f, 1.0f, 1),
    CASE(fuse_conv_gemm_residual, -1.0f, 1.0f, 1),
    CASE(fuse_elementwise_chain, -1.0f, 1.0f, 1),
    CASE(fuse_shared_value, -1.0f, 1.0f, 3),
    CASE(fuse_gemm_gelu_softmax, -1.0f, 1.0f, 2),
    CASE(no_fuse_growing_broadcast, -1.0f, 1.0f, 2),
    CASE(output_and_intermediate, -1.0f, 1.0f, 2),
    CASE(scratch_chain, -1.0f, 1.0f, 4),
    CASE(big_grid, -1.0f, 1.0f, 1),
    CASE(conv1d_long_kernel, 0.01f, 1.0f, 2),
    CASE(conv_long_channels_neg, 0.01f, 1.0f, 2),
    CASE(conv_long_depthwise, 0.01f, 1.0f, 2),
    CASE(conv_transpose_long_channels, 0.01f, 1.0f, 2),
    CASE(matmul_long_k_2x70000x3, 0.01f, 1.0f, 2),
    CASE(reduce_sum_long_row_70000, 0.01f, 1.0f, 1),
    CASE(log_softmax_long_row_70000, -4.0f, 4.0f, 1),
};
const int32_t vkp_spirv_case_count =
    (int32_t)(sizeof(vkp_spirv_cases) / sizeof(vkp_spirv_cases[0]));
