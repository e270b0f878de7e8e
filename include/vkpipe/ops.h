// SPDX-License-Identifier: Apache-2.0
//
// vkpipe operator table: one X-macro list that every module expands.
//
//   #define NAME_OF(e, name, ...) case VKP_OP_##e: return name;
//   switch (op) { VKP_OP_LIST(NAME_OF) default: return "?"; }
//
// X(ENUM, "name", min inputs, max inputs (-1 = variadic), attribute schema,
//   shape inference). The last two name internal tables in graph/ops.c; other
//   expansions ignore them. docs/ops.md documents every op's semantics.
#ifndef VKPIPE_OPS_H_
#define VKPIPE_OPS_H_

#ifdef __cplusplus
extern "C" {
#endif

#define VKP_OP_LIST(X)                                                        \
  X(ADD, "add", 2, 2, none, broadcast)                                        \
  X(SUB, "sub", 2, 2, none, broadcast)                                        \
  X(MUL, "mul", 2, 2, none, broadcast)                                        \
  X(DIV, "div", 2, 2, none, broadcast)                                        \
  X(POW, "pow", 2, 2, none, broadcast)                                        \
  X(SQRT, "sqrt", 1, 1, none, unary)                                          \
  X(EXP, "exp", 1, 1, none, unary)                                            \
  X(NEG, "neg", 1, 1, none, unary)                                            \
  X(ABS, "abs", 1, 1, none, unary)                                            \
  X(RELU, "relu", 1, 1, none, unary)                                          \
  X(LEAKY_RELU, "leaky_relu", 1, 1, leaky_relu, unary)                        \
  X(CLIP, "clip", 1, 1, clip, unary)                                          \
  X(SIGMOID, "sigmoid", 1, 1, none, unary)                                    \
  X(TANH, "tanh", 1, 1, none, unary)                                          \
  X(ERF, "erf", 1, 1, none, unary)                                            \
  X(GELU, "gelu", 1, 1, gelu, unary)                                          \
  X(MATMUL, "matmul", 2, 2, none, matmul)                                     \
  X(GEMM, "gemm", 2, 3, gemm, gemm)                                           \
  X(CONV2D, "conv2d", 2, 3, conv2d, conv2d)                                   \
  X(MAX_POOL2D, "max_pool2d", 1, 1, max_pool2d, pool2d)                       \
  X(AVG_POOL2D, "avg_pool2d", 1, 1, avg_pool2d, pool2d)                       \
  X(GLOBAL_AVG_POOL, "global_avg_pool", 1, 1, none, global_pool)              \
  X(BATCH_NORM, "batch_norm", 5, 5, batch_norm, batch_norm)                   \
  X(SOFTMAX, "softmax", 1, 1, softmax, softmax)                               \
  X(LAYER_NORM, "layer_norm", 2, 3, layer_norm, layer_norm)                   \
  X(REDUCE_MEAN, "reduce_mean", 1, 1, reduce, reduce)                         \
  X(REDUCE_SUM, "reduce_sum", 1, 1, reduce, reduce)                           \
  X(RESHAPE, "reshape", 1, 1, reshape, reshape)                               \
  X(FLATTEN, "flatten", 1, 1, flatten, flatten)                               \
  X(TRANSPOSE, "transpose", 1, 1, transpose, transpose)                       \
  X(CONCAT, "concat", 1, -1, concat, concat)                                  \
  X(SLICE, "slice", 1, 1, slice, slice)                                       \
  X(SQUEEZE, "squeeze", 1, 1, squeeze, squeeze)                               \
  X(UNSQUEEZE, "unsqueeze", 1, 1, unsqueeze, unsqueeze)                       \
  X(IDENTITY, "identity", 1, 1, none, unary)

typedef enum vkp_op_t {
#define VKP__OP_ENUM(e, name, min_in, max_in, attrs, infer) VKP_OP_##e,
  VKP_OP_LIST(VKP__OP_ENUM)
#undef VKP__OP_ENUM
  VKP_OP_COUNT
} vkp_op_t;

// "conv2d", ...; "unknown" when out of range.
const char *vkp_op_name(vkp_op_t op);
// Parses an op name; returns VKP_OP_COUNT when unknown.
vkp_op_t vkp_op_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_OPS_H_
