// SPDX-License-Identifier: Apache-2.0
//
// vkpipe operator table: one X-macro list that is the one place that knows
// an op. Everything else (validation, the reference semantics, the cost
// model, every code generator) reads its properties through the functions
// below instead of keeping its own list.
//
//   #define NAME_OF(e, name, ...) case VKP_OP_##e: return name;
//   switch (op) { VKP_OP_LIST(NAME_OF) default: return "?"; }
//
//   if (vkp_op_pattern(node->op) <= VKP_OP_PATTERN_BROADCAST) fuse(node);
//
// One list per op family (VKP_OP_LIST_<FAMILY> below, each next to its
// graph/op_<family>.c), joined into VKP_OP_LIST. Each row:
//
// X(ENUM, "name",
//   inputs min, max (-1: variadic), outputs min, max (-1: variadic),
//   attribute schema, shape inference, reference kernel,   (graph/op_*.c)
//   PATTERN, DTYPES accepted by input 0, VIEW (1: output is input 0's bytes
//   under another shape), COST class, cost factor)
//
// PATTERN is TVM's fusion pattern (vkp_op_pattern_t); DTYPES one of the
// VKP_OP_DTYPES_* sets; COST a vkp_op_cost_class_t and its factor (flops per
// element for ELEMWISE and NORM, per input element for REDUCE).
// docs/ops.md documents every op's semantics; docs/adding-an-op.md says what
// else a new op needs.
#ifndef VKPIPE_OPS_H_
#define VKPIPE_OPS_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKP_OP_LIST(X) \
  VKP_OP_LIST_ELEMENTWISE(X) \
  VKP_OP_LIST_LOGIC(X) \
  VKP_OP_LIST_LINALG(X) \
  VKP_OP_LIST_NN(X) \
  VKP_OP_LIST_REDUCE(X) \
  VKP_OP_LIST_SHAPE(X) \
  VKP_OP_LIST_INDEX(X) \
  VKP_OP_LIST_RNN(X) \
  VKP_OP_LIST_LOSS(X) \
  VKP_OP_LIST_QUANT(X) \
  VKP_OP_LIST_ATTENTION(X) \
  VKP_OP_LIST_NORM(X) \
  VKP_OP_LIST_SELECT(X) \
  VKP_OP_LIST_RESAMPLE(X) \
  VKP_OP_LIST_SAMPLE(X) \
  VKP_OP_LIST_DYNAMIC(X)

// elementwise arithmetic (NumPy broadcasting), functions, activations, cast: graph/op_elementwise.c
#define VKP_OP_LIST_ELEMENTWISE(X) \
  X(ADD, "add", 2, 2, 1, 1, none, broadcast, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(SUB, "sub", 2, 2, 1, 1, none, broadcast, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(MUL, "mul", 2, 2, 1, 1, none, broadcast, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(DIV, "div", 2, 2, 1, 1, none, broadcast, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 4) \
  X(POW, "pow", 2, 2, 1, 1, none, pow, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 8) \
  X(SQRT, "sqrt", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 4) \
  X(EXP, "exp", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(NEG, "neg", 1, 1, 1, 1, none, unary, unary, ELEMWISE, SIGNED, 0, ELEMWISE, 1) \
  X(ABS, "abs", 1, 1, 1, 1, none, unary, unary, ELEMWISE, NUMERIC, 0, ELEMWISE, 1) \
  X(RELU, "relu", 1, 1, 1, 1, none, unary, unary, ELEMWISE, SIGNED, 0, ELEMWISE, 1) \
  X(LEAKY_RELU, "leaky_relu", 1, 1, 1, 1, leaky_relu, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(CLIP, "clip", 1, 3, 1, 1, clip, clip, clip, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(SIGMOID, "sigmoid", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(TANH, "tanh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ERF, "erf", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(GELU, "gelu", 1, 1, 1, 1, gelu, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(HARD_SWISH, "hard_swish", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 3) \
  X(CAST, "cast", 1, 1, 1, 1, cast, cast, cast, ELEMWISE, ALL, 0, ELEMWISE, 1) \
  X(LOG, "log", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(FLOOR, "floor", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(CEIL, "ceil", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(ROUND, "round", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(SIGN, "sign", 1, 1, 1, 1, none, unary, unary, ELEMWISE, NUMERIC, 0, ELEMWISE, 1) \
  X(RECIPROCAL, "reciprocal", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 4) \
  X(SIN, "sin", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(COS, "cos", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(TAN, "tan", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ASIN, "asin", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ACOS, "acos", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ATAN, "atan", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(SINH, "sinh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(COSH, "cosh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ASINH, "asinh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ACOSH, "acosh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(ATANH, "atanh", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(SOFTPLUS, "softplus", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(SOFTSIGN, "softsign", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 4) \
  X(MISH, "mish", 1, 1, 1, 1, none, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 16) \
  X(HARD_SIGMOID, "hard_sigmoid", 1, 1, 1, 1, hard_sigmoid, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 3) \
  X(ELU, "elu", 1, 1, 1, 1, alpha_one, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(SELU, "selu", 1, 1, 1, 1, selu, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(CELU, "celu", 1, 1, 1, 1, alpha_one, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 8) \
  X(THRESHOLDED_RELU, "thresholded_relu", 1, 1, 1, 1, alpha_one, unary, unary, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(SHRINK, "shrink", 1, 1, 1, 1, shrink, unary, unary, ELEMWISE, NUMERIC, 0, ELEMWISE, 2) \
  X(PRELU, "prelu", 2, 2, 1, 1, none, prelu, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(MOD, "mod", 2, 2, 1, 1, mod, mod, binary, BROADCAST, NUMERIC, 0, ELEMWISE, 4) \
  X(MIN, "min", 1, -1, 1, 1, none, variadic, variadic, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(MAX, "max", 1, -1, 1, 1, none, variadic, variadic, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(SUM, "sum", 1, -1, 1, 1, none, variadic, variadic, BROADCAST, FLOAT, 0, ELEMWISE, 1) \
  X(MEAN, "mean", 1, -1, 1, 1, none, variadic, variadic, BROADCAST, FLOAT, 0, ELEMWISE, 1)

// comparisons, boolean logic, selection, bitwise ops, float classes (bool
// results are 0/1 bytes): graph/op_logic.c
#define VKP_OP_LIST_LOGIC(X) \
  X(EQUAL, "equal", 2, 2, 1, 1, none, compare, compare, BROADCAST, ALL, 0, ELEMWISE, 1) \
  X(LESS, "less", 2, 2, 1, 1, none, compare, compare, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(GREATER, "greater", 2, 2, 1, 1, none, compare, compare, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(LESS_OR_EQUAL, "less_or_equal", 2, 2, 1, 1, none, compare, compare, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(GREATER_OR_EQUAL, "greater_or_equal", 2, 2, 1, 1, none, compare, compare, BROADCAST, NUMERIC, 0, ELEMWISE, 1) \
  X(AND, "and", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, BOOL, 0, ELEMWISE, 1) \
  X(OR, "or", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, BOOL, 0, ELEMWISE, 1) \
  X(XOR, "xor", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, BOOL, 0, ELEMWISE, 1) \
  X(NOT, "not", 1, 1, 1, 1, none, unary, invert, ELEMWISE, BOOL, 0, ELEMWISE, 1) \
  X(BITWISE_AND, "bitwise_and", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, INT, 0, ELEMWISE, 1) \
  X(BITWISE_OR, "bitwise_or", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, INT, 0, ELEMWISE, 1) \
  X(BITWISE_XOR, "bitwise_xor", 2, 2, 1, 1, none, broadcast, bitwise, BROADCAST, INT, 0, ELEMWISE, 1) \
  X(BITWISE_NOT, "bitwise_not", 1, 1, 1, 1, none, unary, invert, ELEMWISE, INT, 0, ELEMWISE, 1) \
  X(BIT_SHIFT, "bit_shift", 2, 2, 1, 1, bit_shift, bit_shift, bitwise, BROADCAST, UNSIGNED_INT, 0, ELEMWISE, 1) \
  X(WHERE, "where", 3, 3, 1, 1, none, where, where, BROADCAST, BOOL, 0, ELEMWISE, 1) \
  X(IS_NAN, "is_nan", 1, 1, 1, 1, none, classify, classify, ELEMWISE, FLOAT, 0, ELEMWISE, 1) \
  X(IS_INF, "is_inf", 1, 1, 1, 1, is_inf, classify, classify, ELEMWISE, FLOAT, 0, ELEMWISE, 1)

// linear algebra: graph/op_linalg.c
#define VKP_OP_LIST_LINALG(X) \
  X(MATMUL, "matmul", 2, 2, 1, 1, none, matmul, matmul, OUT_EWISE_FUSABLE, FLOAT, 0, MATMUL, 2) \
  X(GEMM, "gemm", 2, 3, 1, 1, gemm, gemm, gemm, OUT_EWISE_FUSABLE, FLOAT, 0, GEMM, 2) \
  X(EINSUM, "einsum", 1, -1, 1, 1, einsum, einsum, einsum, OPAQUE, NUMERIC, 0, MATMUL, 2)

// convolution, pooling, normalisation: graph/op_nn.c
#define VKP_OP_LIST_NN(X) \
  X(CONV2D, "conv2d", 2, 3, 1, 1, conv2d, conv2d, conv2d, OUT_EWISE_FUSABLE, FLOAT, 0, CONV, 2) \
  X(CONV_TRANSPOSE, "conv_transpose", 2, 3, 1, 1, conv_transpose, conv_transpose, conv_transpose, OUT_EWISE_FUSABLE, FLOAT, 0, CONV_TRANSPOSE, 2) \
  X(MAX_POOL2D, "max_pool2d", 1, 1, 1, 2, max_pool2d, pool2d, pool2d, OUT_EWISE_FUSABLE, FLOAT_INT8, 0, WINDOW, 1) \
  X(AVG_POOL2D, "avg_pool2d", 1, 1, 1, 1, avg_pool2d, pool2d, pool2d, OUT_EWISE_FUSABLE, FLOAT, 0, WINDOW, 1) \
  X(LP_POOL, "lp_pool", 1, 1, 1, 1, lp_pool, pool2d, pool2d, OUT_EWISE_FUSABLE, FLOAT, 0, WINDOW, 3) \
  X(GLOBAL_AVG_POOL, "global_avg_pool", 1, 1, 1, 1, none, global_pool, global_avg_pool, REDUCTION, FLOAT, 0, REDUCE, 1) \
  X(BATCH_NORM, "batch_norm", 5, 5, 1, 1, batch_norm, batch_norm, batch_norm, BROADCAST, FLOAT, 0, ELEMWISE, 2) \
  X(SOFTMAX, "softmax", 1, 1, 1, 1, softmax, softmax, softmax, OPAQUE, FLOAT, 0, NORM, 5) \
  X(LAYER_NORM, "layer_norm", 2, 3, 1, 1, layer_norm, layer_norm, layer_norm, OPAQUE, FLOAT, 0, NORM, 8)

// reductions over a set of axes: graph/op_reduce.c
#define VKP_OP_LIST_REDUCE(X) \
  X(REDUCE_MEAN, "reduce_mean", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(REDUCE_SUM, "reduce_sum", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(REDUCE_MAX, "reduce_max", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, ALL, 0, REDUCE, 1) \
  X(REDUCE_MIN, "reduce_min", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, ALL, 0, REDUCE, 1) \
  X(REDUCE_PROD, "reduce_prod", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(REDUCE_L1, "reduce_l1", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 2) \
  X(REDUCE_L2, "reduce_l2", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 2) \
  X(REDUCE_LOG_SUM, "reduce_log_sum", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(REDUCE_LOG_SUM_EXP, "reduce_log_sum_exp", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 10) \
  X(REDUCE_SUM_SQUARE, "reduce_sum_square", 1, 1, 1, 1, reduce, reduce, reduce, REDUCTION, NUMERIC, 0, REDUCE, 2)

// softmax relatives and normalisations: graph/op_norm.c (softmax,
// layer_norm and batch_norm are in VKP_OP_LIST_NN)
#define VKP_OP_LIST_NORM(X) \
  X(LOG_SOFTMAX, "log_softmax", 1, 1, 1, 1, softmax, softmax, log_softmax, OPAQUE, FLOAT, 0, NORM, 6) \
  X(HARDMAX, "hardmax", 1, 1, 1, 1, softmax, softmax, hardmax, OPAQUE, FLOAT, 0, NORM, 2) \
  X(INSTANCE_NORM, "instance_norm", 3, 3, 1, 1, instance_norm, group_norm, group_norm, OPAQUE, FLOAT, 0, NORM, 8) \
  X(GROUP_NORM, "group_norm", 3, 3, 1, 1, group_norm, group_norm, group_norm, OPAQUE, FLOAT, 0, NORM, 8) \
  X(LP_NORM, "lp_norm", 1, 1, 1, 1, lp_norm, lp_norm, lp_norm, OPAQUE, FLOAT, 0, NORM, 4) \
  X(MEAN_VARIANCE_NORM, "mean_variance_norm", 1, 1, 1, 1, mean_variance_norm, mean_variance_norm, mean_variance_norm, OPAQUE, FLOAT, 0, NORM, 8) \
  X(LRN, "lrn", 1, 1, 1, 1, lrn, lrn, lrn, OPAQUE, FLOAT, 0, ELEMWISE, 16)

// selection along one axis (indices are int64): graph/op_select.c
#define VKP_OP_LIST_SELECT(X) \
  X(ARG_MAX, "arg_max", 1, 1, 1, 1, arg, arg, arg, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(ARG_MIN, "arg_min", 1, 1, 1, 1, arg, arg, arg, REDUCTION, NUMERIC, 0, REDUCE, 1) \
  X(TOP_K, "top_k", 1, 2, 2, 2, top_k, top_k, top_k, OPAQUE, NUMERIC, 0, REDUCE, 4) \
  X(CUM_SUM, "cum_sum", 1, 1, 1, 1, cum_sum, cum_sum, cum_sum, OPAQUE, NUMERIC, 0, REDUCE, 1)

// data movement: graph/op_shape.c
#define VKP_OP_LIST_SHAPE(X) \
  X(RESHAPE, "reshape", 1, 1, 1, 1, reshape, reshape, copy, INJECTIVE, ALL, 1, VIEW, 0) \
  X(FLATTEN, "flatten", 1, 1, 1, 1, flatten, flatten, copy, INJECTIVE, ALL, 1, VIEW, 0) \
  X(TRANSPOSE, "transpose", 1, 1, 1, 1, transpose, transpose, transpose, INJECTIVE, ALL, 0, MOVE, 0) \
  X(CONCAT, "concat", 1, -1, 1, 1, concat, concat, concat, INJECTIVE, ALL, 0, MOVE, 0) \
  X(SLICE, "slice", 1, 1, 1, 1, slice, slice, slice, INJECTIVE, ALL, 0, SLICE, 0) \
  X(SQUEEZE, "squeeze", 1, 1, 1, 1, squeeze, squeeze, copy, INJECTIVE, ALL, 1, VIEW, 0) \
  X(UNSQUEEZE, "unsqueeze", 1, 1, 1, 1, unsqueeze, unsqueeze, copy, INJECTIVE, ALL, 1, VIEW, 0) \
  X(IDENTITY, "identity", 1, 1, 1, 1, none, unary, copy, INJECTIVE, ALL, 1, VIEW, 0)

// indexing with indices known only at run time (int32 or int64, negative
// ones counting from the end; one out of range is a run-time error naming
// the node): graph/op_index.c
#define VKP_OP_LIST_INDEX(X) \
  X(GATHER, "gather", 2, 2, 1, 1, gather, gather, gather, INJECTIVE, ALL, 0, MOVE, 0) \
  X(GATHER_ELEMENTS, "gather_elements", 2, 2, 1, 1, gather, gather_elements, gather_elements, INJECTIVE, ALL, 0, MOVE, 0) \
  X(GATHER_ND, "gather_nd", 2, 2, 1, 1, gather_nd, gather_nd, gather_nd, INJECTIVE, ALL, 0, MOVE, 0) \
  X(SCATTER_ELEMENTS, "scatter_elements", 3, 3, 1, 1, scatter_elements, scatter_elements, scatter_elements, OPAQUE, ALL, 0, MOVE, 0) \
  X(SCATTER_ND, "scatter_nd", 3, 3, 1, 1, scatter_nd, scatter_nd, scatter_nd, OPAQUE, ALL, 0, MOVE, 0) \
  X(ONE_HOT, "one_hot", 2, 2, 1, 1, one_hot, one_hot, one_hot, OPAQUE, NUMERIC, 0, MOVE, 0) \
  X(REVERSE_SEQUENCE, "reverse_sequence", 2, 2, 1, 1, reverse_sequence, reverse_sequence, reverse_sequence, OPAQUE, ALL, 0, MOVE, 0)
// padding, resampling, block rearrangement, tiling, broadcasting, triangles:
// graph/op_resample.c (the data movers share one index plan, graph/resample.h)
#define VKP_OP_LIST_RESAMPLE(X) \
  X(PAD, "pad", 1, 1, 1, 1, pad, pad, remap, INJECTIVE, ALL, 0, MOVE, 0) \
  X(RESIZE, "resize", 1, 1, 1, 1, resize, resize, resize, OPAQUE, FLOAT, 0, ELEMWISE, 8) \
  X(DEPTH_TO_SPACE, "depth_to_space", 1, 1, 1, 1, depth_to_space, depth_to_space, remap, INJECTIVE, ALL, 0, MOVE, 0) \
  X(SPACE_TO_DEPTH, "space_to_depth", 1, 1, 1, 1, space_to_depth, depth_to_space, remap, INJECTIVE, ALL, 0, MOVE, 0) \
  X(TILE, "tile", 1, 1, 1, 1, tile, tile, remap, INJECTIVE, ALL, 0, MOVE, 0) \
  X(EXPAND, "expand", 1, 1, 1, 1, expand, expand, remap, INJECTIVE, ALL, 0, MOVE, 0) \
  X(TRILU, "trilu", 1, 1, 1, 1, trilu, trilu, trilu, INJECTIVE, ALL, 0, MOVE, 0) \
  X(EYE_LIKE, "eye_like", 1, 1, 1, 1, eye_like, eye_like, eye_like, OPAQUE, ALL, 0, MOVE, 0)

// sampling at computed positions (ONNX GridSample, RoiAlign): graph/op_sample.c
#define VKP_OP_LIST_SAMPLE(X) \
  X(GRID_SAMPLE, "grid_sample", 2, 2, 1, 1, grid_sample, grid_sample, grid_sample, OPAQUE, FLOAT, 0, ELEMWISE, 12) \
  X(ROI_ALIGN, "roi_align", 3, 3, 1, 1, roi_align, roi_align, roi_align, OPAQUE, FLOAT, 0, ELEMWISE, 16)

// data-dependent shapes: outputs whose extent along one axis depends on the
// input's values (bounded values, vkp_value_t.bounded), the run-time shape
// of a value, and the choice between the results of two branches (ONNX If
// on a run-time condition): graph/op_dynamic.c
#define VKP_OP_LIST_DYNAMIC(X) \
  X(NON_ZERO, "non_zero", 1, 1, 1, 1, none, non_zero, non_zero, OPAQUE, ALL, 0, REDUCE, 1) \
  X(UNIQUE, "unique", 1, 1, 1, 4, unique, unique, unique, OPAQUE, ALL, 0, REDUCE, 8) \
  X(SHAPE, "shape", 1, 1, 1, 1, shape, shape, shape, OPAQUE, ALL, 0, MOVE, 0) \
  X(NON_MAX_SUPPRESSION, "non_max_suppression", 2, 5, 1, 1, non_max_suppression, non_max_suppression, non_max_suppression, OPAQUE, FLOAT, 0, REDUCE, 16) \
  X(BRANCH_SELECT, "branch_select", 3, 3, 1, 1, none, branch_select, branch_select, OPAQUE, BOOL, 0, MOVE, 0)

// recurrent networks (ONNX LSTM, GRU, RNN; outputs Y, Y_h[, Y_c]): graph/op_rnn.c
#define VKP_OP_LIST_RNN(X) \
  X(LSTM, "lstm", 3, 8, 1, 3, lstm, rnn, rnn, OPAQUE, FLOAT, 0, MATMUL, 8) \
  X(GRU, "gru", 3, 6, 1, 2, gru, rnn, rnn, OPAQUE, FLOAT, 0, MATMUL, 6) \
  X(RNN, "rnn", 3, 6, 1, 2, rnn, rnn, rnn, OPAQUE, FLOAT, 0, MATMUL, 2)

// losses (ONNX SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss): graph/op_loss.c
#define VKP_OP_LIST_LOSS(X) \
  X(SOFTMAX_CROSS_ENTROPY_LOSS, "softmax_cross_entropy_loss", 2, 3, 1, 2, loss, loss, loss, OPAQUE, FLOAT, 0, REDUCE, 6) \
  X(NEGATIVE_LOG_LIKELIHOOD_LOSS, "negative_log_likelihood_loss", 2, 3, 1, 1, loss, loss, loss, OPAQUE, FLOAT, 0, REDUCE, 1)

// quantization: linear (de)quantization and integer matmul/conv: graph/op_quant.c
#define VKP_OP_LIST_QUANT(X) \
  X(QUANTIZE_LINEAR, "quantize_linear", 2, 3, 1, 1, quantize_linear, quantize_linear, quantize_linear, OPAQUE, FLOAT, 0, ELEMWISE, 4) \
  X(DEQUANTIZE_LINEAR, "dequantize_linear", 2, 3, 1, 1, dequantize_linear, dequantize_linear, dequantize_linear, OPAQUE, QUANTIZED, 0, ELEMWISE, 2) \
  X(DYNAMIC_QUANTIZE_LINEAR, "dynamic_quantize_linear", 1, 1, 3, 3, none, dynamic_quantize_linear, dynamic_quantize_linear, OPAQUE, FLOAT32, 0, REDUCE, 6) \
  X(MATMUL_INTEGER, "matmul_integer", 2, 4, 1, 1, none, matmul_integer, matmul_integer, OPAQUE, INT8, 0, MATMUL, 2) \
  X(CONV_INTEGER, "conv_integer", 2, 4, 1, 1, qconv, conv_integer, conv_integer, OPAQUE, INT8, 0, CONV, 2) \
  X(QLINEAR_MATMUL, "qlinear_matmul", 8, 9, 1, 1, none, qlinear_matmul, qlinear_matmul, OPAQUE, INT8, 0, MATMUL, 2) \
  X(QLINEAR_CONV, "qlinear_conv", 8, 9, 1, 1, qconv, qlinear_conv, qlinear_conv, OPAQUE, INT8, 0, CONV, 2)

// fused attention: graph/op_attention.c
#define VKP_OP_LIST_ATTENTION(X) \
  X(ATTENTION, "attention", 3, 5, 1, 1, attention, attention, attention, OPAQUE, FLOAT, 0, ATTENTION, 2)

typedef enum vkp_op_t {
#define VKP__OP_ENUM(e, name, ...) VKP_OP_##e,
  VKP_OP_LIST(VKP__OP_ENUM)
#undef VKP__OP_ENUM
  VKP_OP_COUNT
} vkp_op_t;

// "conv2d", ...; "unknown" when out of range.
const char *vkp_op_name(vkp_op_t op);
// Parses an op name; returns VKP_OP_COUNT when unknown.
vkp_op_t vkp_op_parse(const char *name);

// TVM's operator patterns, from the most to the least fusable: an op of a
// pattern up to BROADCAST computes each output element from the elements at
// the same (broadcast) index of its inputs, so it fuses into any loop over
// its output; OUT_EWISE_FUSABLE ops (matmul, conv) take such ops as an
// epilogue; REDUCTION ops fold axes; INJECTIVE ops move data (each output
// element is one input element); OPAQUE ops do none of these.
#define VKP_OP_PATTERN_LIST(X)                      \
  X(ELEMWISE, "elementwise")                        \
  X(BROADCAST, "broadcast")                         \
  X(INJECTIVE, "injective")                         \
  X(REDUCTION, "reduction")                         \
  X(OUT_EWISE_FUSABLE, "out-elementwise-fusable")   \
  X(OPAQUE, "opaque")

typedef enum vkp_op_pattern_t {
#define VKP__OP_PATTERN_ENUM(e, s) VKP_OP_PATTERN_##e,
  VKP_OP_PATTERN_LIST(VKP__OP_PATTERN_ENUM)
#undef VKP__OP_PATTERN_ENUM
  VKP_OP_PATTERN_COUNT
} vkp_op_pattern_t;

// How the cost model counts an op's work (partition/cost.c).
#define VKP_OP_COST_LIST(X)                                         \
  X(VIEW, "view")          /* no work: a new shape on the same bytes */ \
  X(MOVE, "move")          /* reads its inputs, writes its output */    \
  X(SLICE, "slice")        /* reads what it keeps, writes it */         \
  X(ELEMWISE, "elementwise") /* factor flops per output element */      \
  X(NORM, "norm")          /* factor flops per output element, 2 passes */ \
  X(REDUCE, "reduce")      /* factor flops per input element */         \
  X(MATMUL, "matmul")      /* 2 * M * N * K */                          \
  X(GEMM, "gemm")          /* 2 * M * N * K plus the bias */            \
  X(CONV, "conv")          /* 2 * output * taps per output */           \
  X(CONV_TRANSPOSE, "conv_transpose") /* 2 * input * taps per input */ \
  X(WINDOW, "window")      /* output * window size */                    \
  X(ATTENTION, "attention") /* 2 * Lq * Lk * (D + Dv) per batch, + softmax */

typedef enum vkp_op_cost_class_t {
#define VKP__OP_COST_ENUM(e, s) VKP_OP_COST_##e,
  VKP_OP_COST_LIST(VKP__OP_COST_ENUM)
#undef VKP__OP_COST_ENUM
  VKP_OP_COST_COUNT
} vkp_op_cost_class_t;

// The dtype sets of the table's DTYPES column.
#define VKP_OP_DTYPES_FLOAT                                             \
  (VKP_DTYPE_SET(VKP_DTYPE_FLOAT32) | VKP_DTYPE_SET(VKP_DTYPE_FLOAT16) | \
   VKP_DTYPE_SET(VKP_DTYPE_FLOAT64) | VKP_DTYPE_SET(VKP_DTYPE_BFLOAT16))
#define VKP_OP_DTYPES_SIGNED_INT                                      \
  (VKP_DTYPE_SET(VKP_DTYPE_INT64) | VKP_DTYPE_SET(VKP_DTYPE_INT32) |  \
   VKP_DTYPE_SET(VKP_DTYPE_INT16) | VKP_DTYPE_SET(VKP_DTYPE_INT8))
#define VKP_OP_DTYPES_UNSIGNED_INT                                      \
  (VKP_DTYPE_SET(VKP_DTYPE_UINT64) | VKP_DTYPE_SET(VKP_DTYPE_UINT32) |  \
   VKP_DTYPE_SET(VKP_DTYPE_UINT16) | VKP_DTYPE_SET(VKP_DTYPE_UINT8))
#define VKP_OP_DTYPES_INT (VKP_OP_DTYPES_SIGNED_INT | VKP_OP_DTYPES_UNSIGNED_INT)
#define VKP_OP_DTYPES_SIGNED (VKP_OP_DTYPES_FLOAT | VKP_OP_DTYPES_SIGNED_INT)
#define VKP_OP_DTYPES_NUMERIC (VKP_OP_DTYPES_FLOAT | VKP_OP_DTYPES_INT)
#define VKP_OP_DTYPES_BOOL VKP_DTYPE_SET(VKP_DTYPE_BOOL)
#define VKP_OP_DTYPES_ALL VKP_DTYPE_SET_ALL
#define VKP_OP_DTYPES_FLOAT32 VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)
// 8-bit quantized integers (MatMulInteger, QLinearConv, ...).
#define VKP_OP_DTYPES_INT8 (VKP_DTYPE_SET(VKP_DTYPE_INT8) | VKP_DTYPE_SET(VKP_DTYPE_UINT8))
#define VKP_OP_DTYPES_FLOAT_INT8 (VKP_OP_DTYPES_FLOAT | VKP_OP_DTYPES_INT8)
// What DequantizeLinear reads: 8- and 16-bit quantized integers and int32.
#define VKP_OP_DTYPES_QUANTIZED                                          \
  (VKP_OP_DTYPES_INT8 | VKP_DTYPE_SET(VKP_DTYPE_INT16) |                 \
   VKP_DTYPE_SET(VKP_DTYPE_UINT16) | VKP_DTYPE_SET(VKP_DTYPE_INT32))

// The op's fusion pattern; VKP_OP_PATTERN_OPAQUE when out of range.
vkp_op_pattern_t vkp_op_pattern(vkp_op_t op);
// "elementwise", "broadcast", ...
const char *vkp_op_pattern_name(vkp_op_pattern_t pattern);
// True for ops whose output is input 0's bytes under another shape
// (reshape, flatten, squeeze, unsqueeze, identity): a code generator may
// alias the two buffers.
bool vkp_op_is_view(vkp_op_t op);
// The dtypes input 0 of `op` may have (other inputs: docs/ops.md).
vkp_dtype_set_t vkp_op_dtypes(vkp_op_t op);
// Cost class and factor (see VKP_OP_COST_LIST).
vkp_op_cost_class_t vkp_op_cost_class(vkp_op_t op);
double vkp_op_cost_factor(vkp_op_t op);
// Arity: *min and *max inputs / outputs (max -1: variadic).
void vkp_op_arity(vkp_op_t op, int32_t *min_inputs, int32_t *max_inputs,
                  int32_t *min_outputs, int32_t *max_outputs);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_OPS_H_
