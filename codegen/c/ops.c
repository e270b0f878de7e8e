// SPDX-License-Identifier: Apache-2.0
// The C code generator's op table: for each op it can run, the dtypes of
// input 0 it has a kernel for and, for the elementwise ops the op table lets
// fuse, the C expression (codegen/expr.h templates; `int_expr` when integer
// dtypes need another form). An op without a row has no C kernel yet: the
// partitioner places its nodes elsewhere and says why. Ops with a row but no
// expression have a kernel emitter (`emit`, codegen/c/emit_internal.h) or,
// for the oldest ops, code of their own in emit.c.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"
#include "codegen/expr.h"
#include "graph/bounded.h"

#define F32 VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)
#define INT32_64 (VKP_DTYPE_SET(VKP_DTYPE_INT32) | VKP_DTYPE_SET(VKP_DTYPE_INT64))
#define ANY VKP_DTYPE_SET_ALL
#define INTS VKP_OP_DTYPES_INT
#define UINTS VKP_OP_DTYPES_UNSIGNED_INT
#define BOOL VKP_DTYPE_SET(VKP_DTYPE_BOOL)
// Integers a double holds exactly.
#define INTS_UP_TO_32 (INTS & ~VKP_DTYPE_SET(VKP_DTYPE_INT64) & \
                       ~VKP_DTYPE_SET(VKP_DTYPE_UINT64))
#define INT8 VKP_OP_DTYPES_INT8
#define QUANTIZED VKP_OP_DTYPES_QUANTIZED
// Every dtype the generated code stores in a C type it computes with
// (float16 and bfloat16 are stored as bits only).
#define C_ARITH (VKP_DTYPE_SET_ALL & ~VKP_DTYPE_SET(VKP_DTYPE_FLOAT16) & \
                 ~VKP_DTYPE_SET(VKP_DTYPE_BFLOAT16))
#define C_NUMERIC (C_ARITH & ~BOOL)

typedef struct vkp__c_op_t {
  vkp_dtype_set_t dtypes;  // 0: no C kernel
  const char *expr;        // elementwise: the C expression
  const char *int_expr;    // ... for integer dtypes, when it differs
  vkp__c_emit_fn emit;     // other ops: a kernel emitter (emit_internal.h);
                           // NULL for the ones emit.c writes itself
  bool float32_io;         // every float input and output must be float32
                           // (ops whose other operands' dtypes vary)
  bool all_float32;        // every input and output must be float32
} vkp__c_op_t;

static const vkp__c_op_t vkp__c_ops[VKP_OP_COUNT] = {
    [VKP_OP_ADD] = {F32 | INT32_64, "%0 + %1", NULL},
    [VKP_OP_SUB] = {F32 | INT32_64, "%0 - %1", NULL},
    [VKP_OP_MUL] = {F32 | INT32_64, "%0 * %1", NULL},
    [VKP_OP_DIV] = {F32 | INT32_64, "%0 / %1", "vkp_div_%T(%0, %1)"},
    [VKP_OP_POW] = {F32, "powf(%0, %1)", NULL},
    [VKP_OP_SQRT] = {F32, "sqrtf(%0)", NULL},
    [VKP_OP_EXP] = {F32, "expf(%0)", NULL},
    [VKP_OP_NEG] = {F32 | INT32_64, "-%0", "(%T)(0u - (u%T)%0)"},
    [VKP_OP_ABS] = {F32 | INT32_64, "fabsf(%0)", "%0 < 0 ? (%T)(0u - (u%T)%0) : %0"},
    [VKP_OP_RELU] = {F32 | INT32_64, "%0 > 0 ? %0 : 0", NULL},
    [VKP_OP_LEAKY_RELU] = {F32, "%0 >= 0.0f ? %0 : %{alpha} * %0", NULL},
    [VKP_OP_CLIP] = {F32 | INTS_UP_TO_32, "vkp_clipf(%0, %1{min}, %2{max})",
                     "vkp_clip_%T(%0, %1{min}, %2{max})"},
    [VKP_OP_SIGMOID] = {F32, "vkp_sigmoidf(%0)", NULL},
    [VKP_OP_TANH] = {F32, "tanhf(%0)", NULL},
    [VKP_OP_ERF] = {F32, "erff(%0)", NULL},
    [VKP_OP_GELU] = {F32, "vkp_gelu_%s{approximate}(%0)", NULL},
    [VKP_OP_HARD_SWISH] = {F32, "vkp_hard_swishf(%0)", NULL},
    // emit.c: depends on both dtypes (float16/bfloat16 converted as bits).
    [VKP_OP_CAST] = {ANY, NULL, NULL},
    [VKP_OP_LOG] = {F32, "logf(%0)", NULL},
    [VKP_OP_FLOOR] = {F32, "floorf(%0)", NULL},
    [VKP_OP_CEIL] = {F32, "ceilf(%0)", NULL},
    [VKP_OP_ROUND] = {F32, "nearbyintf(%0)", NULL},  // ties to even
    [VKP_OP_SIGN] = {F32 | INTS, "vkp_sign_%T(%0)", NULL},
    [VKP_OP_RECIPROCAL] = {F32, "1.0f / %0", NULL},
    [VKP_OP_SIN] = {F32, "sinf(%0)", NULL},
    [VKP_OP_COS] = {F32, "cosf(%0)", NULL},
    [VKP_OP_TAN] = {F32, "tanf(%0)", NULL},
    [VKP_OP_ASIN] = {F32, "asinf(%0)", NULL},
    [VKP_OP_ACOS] = {F32, "acosf(%0)", NULL},
    [VKP_OP_ATAN] = {F32, "atanf(%0)", NULL},
    [VKP_OP_SINH] = {F32, "sinhf(%0)", NULL},
    [VKP_OP_COSH] = {F32, "coshf(%0)", NULL},
    [VKP_OP_ASINH] = {F32, "asinhf(%0)", NULL},
    [VKP_OP_ACOSH] = {F32, "acoshf(%0)", NULL},
    [VKP_OP_ATANH] = {F32, "atanhf(%0)", NULL},
    [VKP_OP_SOFTPLUS] = {F32, "vkp_softplusf(%0)", NULL},
    [VKP_OP_SOFTSIGN] = {F32, "%0 / (1.0f + fabsf(%0))", NULL},
    [VKP_OP_MISH] = {F32, "vkp_mishf(%0)", NULL},
    [VKP_OP_HARD_SIGMOID] = {F32, "vkp_clipf(%{alpha} * %0 + %{beta}, 0.0f, 1.0f)", NULL},
    [VKP_OP_ELU] = {F32, "%0 < 0.0f ? %{alpha} * expm1f(%0) : %0", NULL},
    [VKP_OP_SELU] = {F32, "%{gamma} * (%0 <= 0.0f ? %{alpha} * expm1f(%0) : %0)", NULL},
    [VKP_OP_CELU] = {F32, "%0 > 0.0f ? %0 : %{alpha} * expm1f(%0 / %{alpha})", NULL},
    [VKP_OP_THRESHOLDED_RELU] = {F32, "%0 > %{alpha} ? %0 : 0.0f", NULL},
    [VKP_OP_SHRINK] = {F32, "%0 < -%{lambd} ? %0 + %{bias} : (%0 > %{lambd} ? %0 - %{bias} : 0.0f)", NULL},
    [VKP_OP_PRELU] = {F32 | INT32_64, "%0 < 0 ? %1 * %0 : %0", NULL},
    [VKP_OP_MOD] = {F32 | INTS, "vkp_mod_%T(%0, %1, %{fmod})", NULL},
    [VKP_OP_MIN] = {F32 | INTS, "%[vkp_min_%T(%]%0%[, %@)%]", NULL},
    [VKP_OP_MAX] = {F32 | INTS, "%[vkp_max_%T(%]%0%[, %@)%]", NULL},
    [VKP_OP_SUM] = {F32, "%0%[ + %@%]", NULL},
    [VKP_OP_MEAN] = {F32, "(%0%[ + %@%]) / %n", NULL},
    // Comparisons and logic: bool results are uint8_t 0/1.
    [VKP_OP_EQUAL] = {C_ARITH, "%0 == %1", NULL},
    [VKP_OP_LESS] = {C_NUMERIC, "%0 < %1", NULL},
    [VKP_OP_GREATER] = {C_NUMERIC, "%0 > %1", NULL},
    [VKP_OP_LESS_OR_EQUAL] = {C_NUMERIC, "%0 <= %1", NULL},
    [VKP_OP_GREATER_OR_EQUAL] = {C_NUMERIC, "%0 >= %1", NULL},
    [VKP_OP_AND] = {BOOL, "%0 & %1", NULL},
    [VKP_OP_OR] = {BOOL, "%0 | %1", NULL},
    [VKP_OP_XOR] = {BOOL, "%0 ^ %1", NULL},
    [VKP_OP_NOT] = {BOOL, "!%0", NULL},
    [VKP_OP_BITWISE_AND] = {INTS, "%0 & %1", NULL},
    [VKP_OP_BITWISE_OR] = {INTS, "%0 | %1", NULL},
    [VKP_OP_BITWISE_XOR] = {INTS, "%0 ^ %1", NULL},
    [VKP_OP_BITWISE_NOT] = {INTS, "(%T)~%0", NULL},
    [VKP_OP_BIT_SHIFT] = {UINTS, "vkp_shift_%s{direction}_%T(%0, %1)", NULL},
    [VKP_OP_WHERE] = {BOOL, "%0 ? %1 : %2", NULL},  // X and Y: any dtype's bytes
    [VKP_OP_IS_NAN] = {F32, "isnan(%0)", NULL},
    [VKP_OP_IS_INF] = {F32, "isinf(%0) && (%0 < 0.0f ? %{detect_negative} : %{detect_positive}) != 0.0f", NULL},
    [VKP_OP_MATMUL] = {F32, NULL, NULL},
    [VKP_OP_GEMM] = {F32, NULL, NULL},
    // Window ops: 2-D conv and pooling in emit.c, the rest in emit_window.c.
    [VKP_OP_CONV2D] = {F32, NULL, NULL, vkp__c_emit_window},
    [VKP_OP_CONV_TRANSPOSE] = {F32, NULL, NULL, vkp__c_emit_window},
    [VKP_OP_MAX_POOL2D] = {F32 | INT8, NULL, NULL, vkp__c_emit_window},
    [VKP_OP_AVG_POOL2D] = {F32, NULL, NULL, vkp__c_emit_window},
    [VKP_OP_LP_POOL] = {F32, NULL, NULL, vkp__c_emit_window},
    [VKP_OP_GLOBAL_AVG_POOL] = {F32, NULL, NULL},
    [VKP_OP_BATCH_NORM] = {F32, "(%0 - %3) * (%1 / sqrtf(%4 + %{epsilon})) + %2", NULL},
    [VKP_OP_SOFTMAX] = {F32, NULL, NULL},
    [VKP_OP_LAYER_NORM] = {F32, NULL, NULL},
    // Reductions: integers where the result is exact (emit_norm.c).
    [VKP_OP_REDUCE_MEAN] = {F32, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_SUM] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_MAX] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_MIN] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_PROD] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_L1] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_L2] = {F32, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_LOG_SUM] = {F32, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_LOG_SUM_EXP] = {F32, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_REDUCE_SUM_SQUARE] = {F32 | INTS, NULL, NULL, vkp__c_emit_reduce},
    [VKP_OP_LOG_SOFTMAX] = {F32, NULL, NULL, vkp__c_emit_softmax_family},
    [VKP_OP_HARDMAX] = {F32, NULL, NULL, vkp__c_emit_softmax_family},
    [VKP_OP_INSTANCE_NORM] = {F32, NULL, NULL, vkp__c_emit_group_norm},
    [VKP_OP_GROUP_NORM] = {F32, NULL, NULL, vkp__c_emit_group_norm},
    [VKP_OP_LP_NORM] = {F32, NULL, NULL, vkp__c_emit_lp_norm},
    [VKP_OP_MEAN_VARIANCE_NORM] = {F32, NULL, NULL, vkp__c_emit_mean_variance_norm},
    [VKP_OP_LRN] = {F32, NULL, NULL, vkp__c_emit_lrn},
    [VKP_OP_RESHAPE] = {ANY, NULL, NULL},
    [VKP_OP_FLATTEN] = {ANY, NULL, NULL},
    [VKP_OP_TRANSPOSE] = {ANY, NULL, NULL},
    [VKP_OP_CONCAT] = {ANY, NULL, NULL},
    [VKP_OP_SLICE] = {ANY, NULL, NULL},
    [VKP_OP_SQUEEZE] = {ANY, NULL, NULL},
    [VKP_OP_UNSQUEEZE] = {ANY, NULL, NULL},
    [VKP_OP_IDENTITY] = {ANY, NULL, NULL},
    // Indexing: any dtype's bytes move; scatter reductions compute in the
    // C type (not float16/bfloat16 bits).
    [VKP_OP_GATHER] = {ANY, NULL, NULL, vkp__c_emit_gather},
    [VKP_OP_GATHER_ELEMENTS] = {ANY, NULL, NULL, vkp__c_emit_gather_elements},
    [VKP_OP_GATHER_ND] = {ANY, NULL, NULL, vkp__c_emit_gather_nd},
    [VKP_OP_SCATTER_ELEMENTS] = {C_ARITH, NULL, NULL, vkp__c_emit_scatter},
    [VKP_OP_SCATTER_ND] = {C_ARITH, NULL, NULL, vkp__c_emit_scatter},
    [VKP_OP_ONE_HOT] = {C_NUMERIC, NULL, NULL, vkp__c_emit_one_hot},
    [VKP_OP_REVERSE_SEQUENCE] = {ANY, NULL, NULL, vkp__c_emit_reverse_sequence},
    [VKP_OP_PAD] = {ANY, NULL, NULL, vkp__c_emit_remap},
    [VKP_OP_RESIZE] = {F32, NULL, NULL, vkp__c_emit_resize},
    [VKP_OP_GRID_SAMPLE] = {F32, NULL, NULL, vkp__c_emit_grid_sample, .all_float32 = true},
    [VKP_OP_ROI_ALIGN] = {F32, NULL, NULL, vkp__c_emit_roi_align, .float32_io = true},
    [VKP_OP_DEPTH_TO_SPACE] = {ANY, NULL, NULL, vkp__c_emit_remap},
    [VKP_OP_SPACE_TO_DEPTH] = {ANY, NULL, NULL, vkp__c_emit_remap},
    [VKP_OP_TILE] = {ANY, NULL, NULL, vkp__c_emit_remap},
    [VKP_OP_EXPAND] = {ANY, NULL, NULL, vkp__c_emit_remap},
    [VKP_OP_TRILU] = {ANY, NULL, NULL, vkp__c_emit_trilu},
    [VKP_OP_EYE_LIKE] = {ANY, NULL, NULL, vkp__c_emit_eye_like},
    [VKP_OP_ATTENTION] = {F32, NULL, NULL, vkp__c_emit_attention, false, true},
    [VKP_OP_LSTM] = {F32, NULL, NULL, vkp__c_emit_rnn},
    [VKP_OP_GRU] = {F32, NULL, NULL, vkp__c_emit_rnn},
    [VKP_OP_RNN] = {F32, NULL, NULL, vkp__c_emit_rnn},
    [VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS] = {F32, NULL, NULL, vkp__c_emit_loss, true},
    [VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS] = {F32, NULL, NULL, vkp__c_emit_loss, true},
    [VKP_OP_QUANTIZE_LINEAR] = {F32, NULL, NULL, vkp__c_emit_quantize_linear, true},
    [VKP_OP_DEQUANTIZE_LINEAR] = {QUANTIZED, NULL, NULL, vkp__c_emit_dequantize_linear, true},
    [VKP_OP_DYNAMIC_QUANTIZE_LINEAR] = {F32, NULL, NULL, vkp__c_emit_dynamic_quantize_linear},
    [VKP_OP_MATMUL_INTEGER] = {INT8, NULL, NULL, vkp__c_emit_matmul_integer},
    [VKP_OP_QLINEAR_MATMUL] = {INT8, NULL, NULL, vkp__c_emit_qlinear_matmul},
    [VKP_OP_CONV_INTEGER] = {INT8, NULL, NULL, vkp__c_emit_conv_integer},
    [VKP_OP_QLINEAR_CONV] = {INT8, NULL, NULL, vkp__c_emit_qlinear_conv},
    // Selection (emit_select.c): every dtype C computes with but bool.
    [VKP_OP_ARG_MAX] = {C_NUMERIC, NULL, NULL, vkp__c_emit_arg},
    [VKP_OP_ARG_MIN] = {C_NUMERIC, NULL, NULL, vkp__c_emit_arg},
    [VKP_OP_TOP_K] = {C_NUMERIC, NULL, NULL, vkp__c_emit_top_k},
    [VKP_OP_CUM_SUM] = {C_NUMERIC, NULL, NULL, vkp__c_emit_cum_sum},
    // Data-dependent shapes (emit_bounded.c): every dtype.
    [VKP_OP_NON_ZERO] = {ANY, NULL, NULL, vkp__c_emit_non_zero},
    [VKP_OP_UNIQUE] = {ANY, NULL, NULL, vkp__c_emit_unique},
    [VKP_OP_SHAPE] = {ANY, NULL, NULL, vkp__c_emit_shape_op},
    // Fourier transforms (emit_signal.c), det and max_unpool
    // (emit_linalg.c, emit_window.c): float32.
    [VKP_OP_DFT] = {F32, NULL, NULL, vkp__c_emit_dft, false, true},
    [VKP_OP_STFT] = {F32, NULL, NULL, vkp__c_emit_stft, false, true},
    [VKP_OP_DET] = {F32, NULL, NULL, vkp__c_emit_det, false, true},
    [VKP_OP_MAX_UNPOOL] = {F32, NULL, NULL, vkp__c_emit_max_unpool, true},
    // The table's dtypes are the condition's (input 0); the operands may be any.
    [VKP_OP_BRANCH_SELECT] = {BOOL, NULL, NULL, vkp__c_emit_branch_select},
    [VKP_OP_NON_MAX_SUPPRESSION] = {F32, NULL, NULL, vkp__c_emit_non_max_suppression,
                                    .float32_io = true},
};

vkp__c_emit_fn vkp__c_emitter(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__c_ops[op].emit : NULL;
}

vkp_dtype_set_t vkp_codegen_c_dtypes(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__c_ops[op].dtypes : 0;
}

const char *vkp_codegen_c_expr(vkp_op_t op, vkp_dtype_t dtype) {
  if ((unsigned)op >= VKP_OP_COUNT) return NULL;
  const vkp__c_op_t *row = &vkp__c_ops[op];
  return !vkp_dtype_is_float(dtype) && row->int_expr ? row->int_expr : row->expr;
}

void vkp_codegen_c_literal(double f, char *buf, size_t size) {
  if (isnan(f)) {
    snprintf(buf, size, "NAN");
  } else if (isinf(f)) {
    snprintf(buf, size, "%sINFINITY", f < 0 ? "-" : "");
  } else if (fabs(f) > (double)FLT_MAX) {
    snprintf(buf, size, "%sFLT_MAX", f < 0 ? "-" : "");
  } else {
    char num[48];
    snprintf(num, sizeof num, "%.9g", f);
    snprintf(buf, size, "%s%sf", num, strpbrk(num, ".e") ? "" : ".0");
  }
}

bool vkp_codegen_c_supports(const vkp_graph_t *graph, const vkp_node_t *node,
                            char *reason, size_t reason_size) {
  if ((unsigned)node->op >= VKP_OP_COUNT) {
    snprintf(reason, reason_size, "unknown op %d", (int)node->op);
    return false;
  }
  vkp_dtype_set_t set = vkp__c_ops[node->op].dtypes;
  // Bounded values (emit_bounded.c): the rules of graph/bounded.h with a
  // path over run-time extents; the elementwise one goes through the fused
  // loops (so an op there needs an expression), and of the ops that handle
  // a bounded value themselves only those whose kernel here does.
  int32_t bounded = vkp_node_bounded_value(graph, node);
  if (bounded >= 0 && set) {
    vkp__bound_rule_t rule = vkp__bound_rule(node->op);
    bool path = false;
    switch (rule) {
      case VKP__BOUND_BROADCAST:
        path = node->op == VKP_OP_CAST || vkp__c_ops[node->op].expr;
        break;
      case VKP__BOUND_OWN:
        path = node->op == VKP_OP_NON_ZERO || node->op == VKP_OP_UNIQUE ||
               node->op == VKP_OP_SHAPE || node->op == VKP_OP_NON_MAX_SUPPRESSION ||
               node->op == VKP_OP_BRANCH_SELECT || node->op == VKP_OP_ROI_ALIGN;
        break;
      case VKP__BOUND_VIEW: case VKP__BOUND_REDUCE: case VKP__BOUND_ARG:
      case VKP__BOUND_CONCAT: case VKP__BOUND_GATHER: case VKP__BOUND_GATHER_ELEMENTS:
      case VKP__BOUND_GATHER_ND: case VKP__BOUND_TOP_K:
        path = true;
        break;
      case VKP__BOUND_SLICE:
        path = true;
        break;
      case VKP__BOUND_BATCH:  // loops over the run-time rows / batch
        switch (node->op) {
          case VKP_OP_MATMUL:  // A with rows (not a vector)
            path = graph->values[node->inputs[0]].rank >= 2;
            break;
          case VKP_OP_GEMM: case VKP_OP_SOFTMAX:
          case VKP_OP_LOG_SOFTMAX: case VKP_OP_HARDMAX: case VKP_OP_LAYER_NORM:
          case VKP_OP_INSTANCE_NORM: case VKP_OP_CONV2D: case VKP_OP_CONV_TRANSPOSE:
          case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: case VKP_OP_LP_POOL:
          case VKP_OP_GLOBAL_AVG_POOL: case VKP_OP_RESIZE: case VKP_OP_PAD:
            path = true;
            break;
          default:  // batch_norm, attention: not yet (ref runs them)
            break;
        }
        break;
      case VKP__BOUND_SCATTER:
        path = node->op == VKP_OP_SCATTER_ELEMENTS;
        break;
      case VKP__BOUND_REFUSE:
        break;
    }
    if (!path) {
      snprintf(reason, reason_size,
               "value '%s' has a data-dependent shape (its extent is known only "
               "at run time); the C %s kernel takes static shapes only",
               graph->values[bounded].name, vkp_op_name(node->op));
      return false;
    }
  }
  if (!set) {
    snprintf(reason, reason_size, "the C code generator has no %s kernel yet",
             vkp_op_name(node->op));
    return false;
  }
  // Several outputs: only through an emitter (the fused loops write one).
  if (node->n_outputs != 1 &&
      (!vkp__c_ops[node->op].emit || node->n_outputs > VKP__C_MAX_OUTPUTS)) {
    snprintf(reason, reason_size, "%s with %d outputs: the C code generator "
             "writes one", vkp_op_name(node->op), (int)node->n_outputs);
    return false;
  }
  if (node->n_inputs > VKP__C_MAX_INPUTS) {
    snprintf(reason, reason_size, "%s with %d inputs: the C code generator "
             "takes at most %d", vkp_op_name(node->op), (int)node->n_inputs,
             VKP__C_MAX_INPUTS);
    return false;
  }
  if (vkp__c_ops[node->op].float32_io || vkp__c_ops[node->op].all_float32) {
    for (int32_t i = 0; i < node->n_inputs + node->n_outputs; ++i) {
      int32_t v = i < node->n_inputs ? node->inputs[i] : node->outputs[i - node->n_inputs];
      if (v < 0) continue;
      const vkp_value_t *val = &graph->values[v];
      if (val->dtype == VKP_DTYPE_FLOAT32 ||
          (!vkp__c_ops[node->op].all_float32 && !vkp_dtype_is_float(val->dtype)))
        continue;
      snprintf(reason, reason_size, "'%s' is %s; the C %s kernel takes float32 data",
               val->name, vkp_dtype_name(val->dtype), vkp_op_name(node->op));
      return false;
    }
  }
  // Input 0 decides (the op table checks the rest); a cast's output dtype
  // must be one the generated code computes with too.
  const vkp_value_t *checked[2] = {
      node->n_inputs > 0 && node->inputs[0] >= 0 ? &graph->values[node->inputs[0]]
                                                 : NULL,
      node->op == VKP_OP_CAST ? &graph->values[node->outputs[0]] : NULL};
  for (int i = 0; i < 2; ++i) {
    const vkp_value_t *v = checked[i];
    if (!v || (set & VKP_DTYPE_SET(v->dtype))) continue;
    char names[256];
    snprintf(reason, reason_size, "%s '%s' is %s; the C %s kernel takes %s",
             i ? "output" : "input", v->name, vkp_dtype_name(v->dtype),
             vkp_op_name(node->op), vkp_dtype_set_format(set, names, sizeof names));
    return false;
  }
  return true;
}
