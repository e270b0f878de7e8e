// SPDX-License-Identifier: Apache-2.0
// What the C code generator can run: for each op, the dtypes of input 0 it
// has a kernel for. An op absent here has no C kernel yet; the partitioner
// then places its nodes on another target and says why.
#include <stdio.h>

#include "codegen/c/emit.h"

#define F32 VKP_DTYPE_SET(VKP_DTYPE_FLOAT32)
#define INT32_64 (VKP_DTYPE_SET(VKP_DTYPE_INT32) | VKP_DTYPE_SET(VKP_DTYPE_INT64))
// Every dtype the generated code stores in a C type it computes with
// (float16 and bfloat16 are stored as bits only).
#define C_ARITH (VKP_DTYPE_SET_ALL & ~VKP_DTYPE_SET(VKP_DTYPE_FLOAT16) & \
                 ~VKP_DTYPE_SET(VKP_DTYPE_BFLOAT16))

static const vkp_dtype_set_t vkp__c_dtypes[VKP_OP_COUNT] = {
    [VKP_OP_ADD] = F32 | INT32_64,
    [VKP_OP_SUB] = F32 | INT32_64,
    [VKP_OP_MUL] = F32 | INT32_64,
    [VKP_OP_DIV] = F32 | INT32_64,
    [VKP_OP_POW] = F32,
    [VKP_OP_SQRT] = F32,
    [VKP_OP_EXP] = F32,
    [VKP_OP_NEG] = F32 | INT32_64,
    [VKP_OP_ABS] = F32 | INT32_64,
    [VKP_OP_RELU] = F32 | INT32_64,
    [VKP_OP_LEAKY_RELU] = F32,
    [VKP_OP_CLIP] = F32,
    [VKP_OP_SIGMOID] = F32,
    [VKP_OP_TANH] = F32,
    [VKP_OP_ERF] = F32,
    [VKP_OP_GELU] = F32,
    [VKP_OP_HARD_SWISH] = F32,
    [VKP_OP_CAST] = C_ARITH,
    [VKP_OP_MATMUL] = F32,
    [VKP_OP_GEMM] = F32,
    [VKP_OP_CONV2D] = F32,
    [VKP_OP_MAX_POOL2D] = F32,
    [VKP_OP_AVG_POOL2D] = F32,
    [VKP_OP_GLOBAL_AVG_POOL] = F32,
    [VKP_OP_BATCH_NORM] = F32,
    [VKP_OP_SOFTMAX] = F32,
    [VKP_OP_LAYER_NORM] = F32,
    [VKP_OP_REDUCE_MEAN] = F32,
    [VKP_OP_REDUCE_SUM] = F32,
    [VKP_OP_RESHAPE] = VKP_DTYPE_SET_ALL,
    [VKP_OP_FLATTEN] = VKP_DTYPE_SET_ALL,
    [VKP_OP_TRANSPOSE] = VKP_DTYPE_SET_ALL,
    [VKP_OP_CONCAT] = VKP_DTYPE_SET_ALL,
    [VKP_OP_SLICE] = VKP_DTYPE_SET_ALL,
    [VKP_OP_SQUEEZE] = VKP_DTYPE_SET_ALL,
    [VKP_OP_UNSQUEEZE] = VKP_DTYPE_SET_ALL,
    [VKP_OP_IDENTITY] = VKP_DTYPE_SET_ALL,
};

vkp_dtype_set_t vkp_codegen_c_dtypes(vkp_op_t op) {
  return (unsigned)op < VKP_OP_COUNT ? vkp__c_dtypes[op] : 0;
}

bool vkp_codegen_c_supports(const vkp_graph_t *graph, const vkp_node_t *node,
                            char *reason, size_t reason_size) {
  if ((unsigned)node->op >= VKP_OP_COUNT) {
    snprintf(reason, reason_size, "unknown op %d", (int)node->op);
    return false;
  }
  vkp_dtype_set_t set = vkp__c_dtypes[node->op];
  if (!set) {
    snprintf(reason, reason_size, "the C code generator has no %s kernel yet",
             vkp_op_name(node->op));
    return false;
  }
  if (node->n_outputs != 1) {
    snprintf(reason, reason_size, "%s with %d outputs: the C code generator "
             "writes one", vkp_op_name(node->op), (int)node->n_outputs);
    return false;
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
