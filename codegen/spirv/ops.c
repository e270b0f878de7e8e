// SPDX-License-Identifier: Apache-2.0
// The Vulkan code generator's op table: the ops it has a kernel for (all on
// float32 data unless the row says more) and, for the elementwise ops the
// op table lets fuse, the GLSL expression (codegen/expr.h templates; math
// helpers in shaders/math.glsl). Vulkan buffers hold float32, except the
// index inputs a row names (gather's int32/int64 indices), the bool values
// of the rows that take them (comparisons, logic, where, cast) and the
// int32/int64 values of the rows marked `ints` (integer arithmetic,
// comparisons, cast, data movement, arg_max/top_k indices). An op without a row has no Vulkan kernel yet: the
// partitioner places its nodes elsewhere and says why. Ops with a row but
// no expression have an emitter (`emit`, kernels.h) or, for the oldest
// ops, a case of their own in kernels.c.
#include "codegen/expr.h"
#include "codegen/spirv/kernels.h"
#include "codegen/spirv/program.h"

typedef struct vkp__glsl_op_t {
  bool kernel;            // the generator can run it
  const char *expr;       // elementwise: the GLSL expression
  vkp__spv_emit_fn emit;  // other ops: a kernel emitter (kernels.h); NULL
                          // for the ones kernels.c dispatches itself
  vkp__spv_check_fn check;  // limits of that kernel (kernels.h), or NULL
  uint32_t index_inputs;    // inputs (bit i: input i) read as int32/int64
                            // indices; every other value is float32 ...
  bool bool_values;         // ... or bool, for the comparisons, logic and
                            // where (bytes; 0.0/1.0 inside a kernel) ...
  bool ints;                // ... or int32/int64 (int / int64_t inside a
                            // kernel; int64 needs shaderInt64)
  const char *int_expr;     // elementwise on integer data, when `expr`
                            // does not serve (float literals)
  bool all_outputs;         // writes every output of a node with several,
                            // one dispatch each (vkp__spv_writes_outputs)
  bool narrow;              // reads its data through LD<j> and computes in
                            // ACC_T, so it takes data stored narrower than
                            // it computes (bool, 8/16-bit integers as the
                            // row admits, float16); elementwise rows always do
  bool f64;                 // ... and float64 data, computing in double
                            // (needs shaderFloat64)
} vkp__glsl_op_t;

static const vkp__glsl_op_t vkp__glsl_ops[VKP_OP_COUNT] = {
    [VKP_OP_ADD] = {true, "%0 + %1", .ints = true, .f64 = true},
    [VKP_OP_SUB] = {true, "%0 - %1", .ints = true, .f64 = true},
    [VKP_OP_MUL] = {true, "%0 * %1", .ints = true, .f64 = true},
    [VKP_OP_DIV] = {true, "vkp_div(%0, %1)", .ints = true, .int_expr = "%0 / %1", .f64 = true},
    [VKP_OP_POW] = {true, "vkp_pow(%0, %1)", .ints = true, .int_expr = "vkp_ipow(%0, %1)"},
    [VKP_OP_SQRT] = {true, "sqrt(%0)", .f64 = true},
    [VKP_OP_EXP] = {true, "exp(%0)"},
    [VKP_OP_NEG] = {true, "-%0", .ints = true, .f64 = true},
    [VKP_OP_ABS] = {true, "abs(%0)", .ints = true, .int_expr = "(%0 < %T(0) ? -%0 : %0)", .f64 = true},
    [VKP_OP_RELU] = {true, "(%0 < 0.0 ? 0.0 : %0)", .ints = true, .int_expr = "max(%0, %T(0))", .f64 = true},
    [VKP_OP_LEAKY_RELU] = {true, "(%0 < 0.0 ? %0 * %{alpha} : %0)"},
    [VKP_OP_CLIP] = {true, "min(max(%0, %1{min}), %2{max})", .ints = true,
                     .int_expr = "vkp_iclip(%0, %1{min}, %2{max})", .f64 = true},
    [VKP_OP_SIGMOID] = {true, "vkp_sigmoid(%0)"},
    [VKP_OP_TANH] = {true, "vkp_tanh(%0)"},
    [VKP_OP_ERF] = {true, "vkp_erf(%0)"},
    [VKP_OP_GELU] = {true, "vkp_gelu_%s{approximate}(%0)"},
    [VKP_OP_HARD_SWISH] = {true, "%0 * clamp(%0 * (1.0 / 6.0) + 0.5, 0.0, 1.0)"},
    [VKP_OP_LOG] = {true, "vkp_log(%0)"},
    [VKP_OP_FLOOR] = {true, "floor(%0)", .f64 = true},
    [VKP_OP_CEIL] = {true, "ceil(%0)", .f64 = true},
    [VKP_OP_ROUND] = {true, "roundEven(%0)", .f64 = true},
    [VKP_OP_SIGN] = {true, "sign(%0)", .ints = true,
                     .int_expr = "(%T(%0 > %T(0)) - %T(%0 < %T(0)))", .f64 = true},
    [VKP_OP_RECIPROCAL] = {true, "vkp_div(1.0, %0)", .f64 = true},
    [VKP_OP_SIN] = {true, "sin(%0)"},
    [VKP_OP_COS] = {true, "cos(%0)"},
    [VKP_OP_TAN] = {true, "tan(%0)"},
    [VKP_OP_ASIN] = {true, "vkp_asin(%0)"},
    [VKP_OP_ACOS] = {true, "vkp_acos(%0)"},
    [VKP_OP_ATAN] = {true, "atan(%0)"},
    [VKP_OP_SINH] = {true, "vkp_sinh(%0)"},
    [VKP_OP_COSH] = {true, "cosh(%0)"},
    [VKP_OP_ASINH] = {true, "vkp_asinh(%0)"},
    [VKP_OP_ACOSH] = {true, "vkp_acosh(%0)"},
    [VKP_OP_ATANH] = {true, "vkp_atanh(%0)"},
    [VKP_OP_SOFTPLUS] = {true, "vkp_softplus(%0)"},
    [VKP_OP_SOFTSIGN] = {true, "%0 / (1.0 + abs(%0))"},
    [VKP_OP_MISH] = {true, "%0 * vkp_tanh(vkp_softplus(%0))"},
    [VKP_OP_HARD_SIGMOID] = {true, "clamp(%{alpha} * %0 + %{beta}, 0.0, 1.0)"},
    [VKP_OP_ELU] = {true, "(%0 < 0.0 ? %{alpha} * vkp_expm1(%0) : %0)"},
    [VKP_OP_SELU] = {true, "%{gamma} * (%0 <= 0.0 ? %{alpha} * vkp_expm1(%0) : %0)"},
    [VKP_OP_CELU] = {true, "(%0 > 0.0 ? %0 : %{alpha} * vkp_expm1(%0 / %{alpha}))"},
    [VKP_OP_THRESHOLDED_RELU] = {true, "(%0 > %{alpha} ? %0 : 0.0)"},
    [VKP_OP_SHRINK] = {true, "(%0 < -%{lambd} ? %0 + %{bias} : (%0 > %{lambd} ? %0 - %{bias} : 0.0))"},
    [VKP_OP_PRELU] = {true, "(%0 < 0.0 ? %1 * %0 : %0)"},
    [VKP_OP_MOD] = {true, "vkp_mod(%0, %1, %{fmod})", .ints = true,
                    .int_expr = "vkp_imod(%0, %1, %{fmod})", .f64 = true},
    [VKP_OP_MIN] = {true, "%[vkp_min(%]%0%[, %@)%]", .ints = true, .int_expr = "%[min(%]%0%[, %@)%]", .f64 = true},
    [VKP_OP_MAX] = {true, "%[vkp_max(%]%0%[, %@)%]", .ints = true, .int_expr = "%[max(%]%0%[, %@)%]", .f64 = true},
    [VKP_OP_SUM] = {true, "%0%[ + %@%]", .f64 = true},
    [VKP_OP_MEAN] = {true, "(%0%[ + %@%]) / %n", .f64 = true},
    // Comparisons, logic and where on float32 and bool data: a bool is
    // 0.0 or 1.0 inside a kernel and one byte in a buffer (storage_8bit).
    [VKP_OP_EQUAL] = {true, "float(%0 == %1)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_LESS] = {true, "float(%0 < %1)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_GREATER] = {true, "float(%0 > %1)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_LESS_OR_EQUAL] = {true, "float(%0 <= %1)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_GREATER_OR_EQUAL] = {true, "float(%0 >= %1)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_AND] = {true, "float(%0 != 0.0 && %1 != 0.0)", .bool_values = true},
    [VKP_OP_OR] = {true, "float(%0 != 0.0 || %1 != 0.0)", .bool_values = true},
    [VKP_OP_XOR] = {true, "float((%0 != 0.0) != (%1 != 0.0))", .bool_values = true},
    [VKP_OP_NOT] = {true, "float(%0 == 0.0)", .bool_values = true},
    [VKP_OP_WHERE] = {true, "(%0 != 0.0 ? %1 : %2)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_IS_NAN] = {true, "float(isnan(%0))", .bool_values = true, .f64 = true},
    [VKP_OP_IS_INF] = {true,
                       "float(isinf(%0) && (%0 < 0.0 ? %{detect_negative} : "
                       "%{detect_positive}) != 0.0)",
                       .bool_values = true, .f64 = true},
    // Integer-only: shifts and bit operations on (u)int8/32/64.
    [VKP_OP_BITWISE_AND] = {true, "%0 & %1", .ints = true},
    [VKP_OP_BITWISE_OR] = {true, "%0 | %1", .ints = true},
    [VKP_OP_BITWISE_XOR] = {true, "%0 ^ %1", .ints = true},
    [VKP_OP_BITWISE_NOT] = {true, "~%0", .ints = true},
    [VKP_OP_BIT_SHIFT] = {true, "vkp_shift_%s{direction}(%0, %1)", .ints = true},
    // Between float32, bool, int32 and int64 (kernels.c writes the
    // conversion; a bool is 0.0/1.0 inside a kernel).
    [VKP_OP_CAST] = {true, "%T(%0)", .bool_values = true, .ints = true, .f64 = true},
    [VKP_OP_MATMUL] = {true, NULL},
    [VKP_OP_GEMM] = {true, NULL},
    [VKP_OP_CONV2D] = {true, NULL, NULL, vkp__spv_check_window},
    [VKP_OP_CONV_TRANSPOSE] = {true, NULL, vkp__spv_emit_conv_transpose, vkp__spv_check_window},
    // max_pool2d's optional second output, the int64 indices, is a second
    // dispatch of the same kernel.
    // (The op table gives max_pool2d float, int8 and uint8 data: 8-bit
    // values are exact in the kernel's float.)
    [VKP_OP_MAX_POOL2D] = {true, NULL, NULL, vkp__spv_check_window, .all_outputs = true,
                           .ints = true, .narrow = true},
    [VKP_OP_AVG_POOL2D] = {true, NULL, NULL, vkp__spv_check_window},
    [VKP_OP_LP_POOL] = {true, NULL, NULL, vkp__spv_check_window},
    [VKP_OP_GLOBAL_AVG_POOL] = {true, NULL},
    // (x - mean) / sqrt(var + eps) * scale + B; operands 1-4 per channel.
    [VKP_OP_BATCH_NORM] = {true, "(%0 - %3) / sqrt(%4 + %{epsilon}) * %1 + %2"},
    [VKP_OP_SOFTMAX] = {true, NULL},
    [VKP_OP_LAYER_NORM] = {true, NULL},
    [VKP_OP_REDUCE_MEAN] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_SUM] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_MAX] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_MIN] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_PROD] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_L1] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_L2] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_LOG_SUM] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_LOG_SUM_EXP] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_REDUCE_SUM_SQUARE] = {true, NULL, vkp__spv_emit_reduce, .narrow = true, .f64 = true},
    [VKP_OP_LOG_SOFTMAX] = {true, NULL, vkp__spv_emit_softmax_family},
    [VKP_OP_HARDMAX] = {true, NULL, vkp__spv_emit_softmax_family},
    [VKP_OP_CUM_SUM] = {true, NULL, vkp__spv_emit_cum_sum, vkp__spv_check_cum_sum, .ints = true,
                        .narrow = true, .f64 = true},
    [VKP_OP_INSTANCE_NORM] = {true, NULL, vkp__spv_emit_group_norm},
    [VKP_OP_GROUP_NORM] = {true, NULL, vkp__spv_emit_group_norm},
    [VKP_OP_LP_NORM] = {true, NULL, vkp__spv_emit_lp_norm},
    [VKP_OP_MEAN_VARIANCE_NORM] = {true, NULL, vkp__spv_emit_mean_variance_norm},
    [VKP_OP_LRN] = {true, NULL, vkp__spv_emit_lrn},
    [VKP_OP_RESHAPE] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_FLATTEN] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_TRANSPOSE] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_CONCAT] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_SLICE] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_SQUEEZE] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_UNSQUEEZE] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_IDENTITY] = {true, NULL, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_PAD] = {true, NULL, vkp__spv_emit_remap, vkp__spv_check_remap, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_RESIZE] = {true, NULL, vkp__spv_emit_resize, vkp__spv_check_resize},
    [VKP_OP_DEPTH_TO_SPACE] = {true, NULL, vkp__spv_emit_remap, vkp__spv_check_remap, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_SPACE_TO_DEPTH] = {true, NULL, vkp__spv_emit_remap, vkp__spv_check_remap, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_TILE] = {true, NULL, vkp__spv_emit_remap, vkp__spv_check_remap, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_EXPAND] = {true, NULL, vkp__spv_emit_remap, vkp__spv_check_remap, .ints = true, .bool_values = true, .narrow = true, .f64 = true},
    [VKP_OP_TRILU] = {true, NULL, vkp__spv_emit_trilu, .narrow = true, .f64 = true, .ints = true},
    [VKP_OP_GRID_SAMPLE] = {true, NULL, vkp__spv_emit_grid_sample, vkp__spv_check_grid_sample},
    [VKP_OP_DFT] = {true, NULL, vkp__spv_emit_dft, vkp__spv_check_signal},
    [VKP_OP_STFT] = {true, NULL, vkp__spv_emit_stft, vkp__spv_check_signal},
    [VKP_OP_DET] = {true, NULL, vkp__spv_emit_det, vkp__spv_check_det},
    [VKP_OP_EYE_LIKE] = {true, NULL, vkp__spv_emit_eye_like, .bool_values = true,
                         .ints = true},
    [VKP_OP_ATTENTION] = {true, NULL, vkp__spv_emit_attention, vkp__spv_check_attention},
    [VKP_OP_GATHER] = {true, NULL, vkp__spv_emit_gather, NULL, 1u << 1, .ints = true},
    [VKP_OP_GATHER_ELEMENTS] = {true, NULL, vkp__spv_emit_gather_elements, NULL, 1u << 1,
                                .narrow = true, .f64 = true, .ints = true},
    // Scatter as a gather per output element (kernels_index.c).
    [VKP_OP_SCATTER_ELEMENTS] = {true, NULL, vkp__spv_emit_scatter_elements, NULL, 1u << 1,
                                 .ints = true, .narrow = true, .f64 = true, .bool_values = true},
    [VKP_OP_SCATTER_ND] = {true, NULL, vkp__spv_emit_scatter_nd, NULL, 1u << 1, .ints = true,
                           .narrow = true, .f64 = true, .bool_values = true},
    [VKP_OP_ONE_HOT] = {true, NULL, vkp__spv_emit_one_hot, .ints = true, .narrow = true,
                        .f64 = true, .bool_values = true},
    [VKP_OP_REVERSE_SEQUENCE] = {true, NULL, vkp__spv_emit_reverse_sequence, NULL, 1u << 1,
                                 .ints = true, .narrow = true, .f64 = true,
                                 .bool_values = true},
    // Linear quantizers: float data in, (u)int8/16 out and back
    // (kernels_quant.c).
    [VKP_OP_QUANTIZE_LINEAR] = {true, NULL, vkp__spv_emit_quantize_linear, .ints = true,
                                .narrow = true, .f64 = true},
    [VKP_OP_DEQUANTIZE_LINEAR] = {true, NULL, vkp__spv_emit_dequantize_linear, .ints = true,
                                  .narrow = true, .f64 = true},
    // Recurrent ops, one workgroup per sequence and direction, one dispatch
    // per output (Y, Y_h, Y_c); sequence_lens (input 4) as indices
    // (kernels_rnn.c).
    [VKP_OP_LSTM] = {true, NULL, vkp__spv_emit_rnn, vkp__spv_check_rnn, 1u << 4,
                     .all_outputs = true, .narrow = true},
    [VKP_OP_GRU] = {true, NULL, vkp__spv_emit_rnn, vkp__spv_check_rnn, 1u << 4,
                    .all_outputs = true, .narrow = true},
    [VKP_OP_RNN] = {true, NULL, vkp__spv_emit_rnn, vkp__spv_check_rnn, 1u << 4,
                    .all_outputs = true, .narrow = true},
    [VKP_OP_MATMUL_INTEGER] = {true, NULL, vkp__spv_emit_matmul_integer, .ints = true,
                               .narrow = true},
    [VKP_OP_GATHER_ND] = {true, NULL, vkp__spv_emit_gather_nd, NULL, 1u << 1, .ints = true,
                          .narrow = true, .f64 = true},
    // Selection: int64 indices out (kernels_select.c).
    [VKP_OP_ARG_MAX] = {true, NULL, vkp__spv_emit_arg, .ints = true},
    [VKP_OP_ARG_MIN] = {true, NULL, vkp__spv_emit_arg, .ints = true},
    [VKP_OP_TOP_K] = {true, NULL, vkp__spv_emit_top_k, .ints = true, .all_outputs = true},
    // Labels (input 1) are indices; softmax's log_prob output a second dispatch.
    [VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS] = {true, NULL, vkp__spv_emit_loss, vkp__spv_check_loss, 1u << 1},
    [VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS] = {true, NULL, vkp__spv_emit_loss, vkp__spv_check_loss, 1u << 1,
                                           .all_outputs = true},
};

vkp__spv_emit_fn vkp__spv_emitter(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__glsl_ops[op].emit : NULL;
}

vkp__spv_check_fn vkp__spv_checker(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__glsl_ops[op].check : NULL;
}

bool vkp__spv_is_index_input(vkp_op_t op, int32_t i) {
  return (unsigned)op < VKP_OP_COUNT && i >= 0 && i < 32 &&
         (vkp__glsl_ops[op].index_inputs >> i & 1u);
}

bool vkp__spv_writes_outputs(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__glsl_ops[op].all_outputs;
}

bool vkp__spv_takes_ints(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__glsl_ops[op].ints;
}

const char *vkp__glsl_int_expr(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__glsl_ops[op].int_expr : NULL;
}

bool vkp__spv_reads_narrow(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT &&
         (vkp__glsl_ops[op].narrow || vkp__op_is_elementwise(op));
}

bool vkp__spv_takes_f64(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__glsl_ops[op].f64;
}

bool vkp__spv_takes_bool(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__glsl_ops[op].bool_values;
}

bool vkp_spirv_has_kernel(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT && vkp__glsl_ops[op].kernel;
}

const char *vkp__glsl_expr(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__glsl_ops[op].expr : NULL;
}
