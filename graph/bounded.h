// SPDX-License-Identifier: Apache-2.0
//
// How each op takes a bounded value (vkp_value_t.bounded: a static upper
// bound along one axis, the extent known only at run time), shared by
// validation and run-time shapes (graph/op_dynamic.c) and by the code
// generators that compute extents in generated code (codegen/c):
//
//   switch (vkp__bound_rule(node->op)) {
//     case VKP__BOUND_BROADCAST: ...  // the bounded operands' common extent
//     ...
//   }
//
// The rule says where an output's extent comes from; validation has already
// checked that the node's bounded inputs follow it (docs/onnx.md,
// "Data-dependent output shapes").
#ifndef VKPIPE_GRAPH_BOUNDED_H_
#define VKPIPE_GRAPH_BOUNDED_H_

#include "vkpipe/ops.h"

typedef enum vkp__bound_rule_t {
  VKP__BOUND_REFUSE = 0,   // no bounded input (every op not listed)
  VKP__BOUND_OWN,          // the op's inference and kernel handle it
                           // (non_zero, unique: the kernel writes the extent;
                           // shape: a static output)
  VKP__BOUND_BROADCAST,    // elementwise with NumPy broadcasting
  VKP__BOUND_VIEW,         // reshape family, transpose: same elements
  VKP__BOUND_REDUCE,       // reduce_* over `axes`, keepdims
  VKP__BOUND_ARG,          // arg_max / arg_min over `axis`
  VKP__BOUND_CONCAT,
  VKP__BOUND_GATHER,
  VKP__BOUND_GATHER_ELEMENTS,
  VKP__BOUND_GATHER_ND,
  VKP__BOUND_TOP_K,        // K clamped to a bounded axis, or input 1 (K at
                           // run time): extent min(K, axis length)
  VKP__BOUND_SLICE,        // slice forward from a non-negative start along
                           // the bounded axis (keep[:k]), or along another
  VKP__BOUND_SCATTER,      // scatter_elements: the output is bounded like
                           // data; indices and updates loop over their own
                           // run-time extent
  VKP__BOUND_BATCH,        // input 0 varies along an axis the op treats
                           // row by row (gemm's M, matmul's rows and batch,
                           // softmax/layer_norm outside their axis, the
                           // batch of convolution, pooling, batch_norm):
                           // the outputs vary alike; the other inputs static
} vkp__bound_rule_t;

// The rule of `op` (VKP__BOUND_REFUSE for an op that takes no bounded input).
vkp__bound_rule_t vkp__bound_rule(vkp_op_t op);

#endif  // VKPIPE_GRAPH_BOUNDED_H_
