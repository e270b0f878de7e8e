// SPDX-License-Identifier: Apache-2.0
//
// The reference interpreter's kernels: one plain, obviously correct
// implementation per op of VKP_OP_LIST, following the canonical attribute
// forms that graph/ops.c writes during validation (docs/ops.md).
//
//   vkp_ref_kernel_fn fn = vkp__ref_kernel(node->op);
//   const vkp_tensor_t *in[] = {&a, &b};
//   vkp_status_t st = fn(node, in, &out);   // out preallocated, inferred shape
//
// Accumulation (sums, dot products, statistics) is done in double; float32
// results are rounded once at the end. Integer arithmetic wraps around in
// two's complement like NumPy; integer division truncates toward zero like C
// and fails with INVALID_ARGUMENT on a zero divisor.
//
// Kernels keep no state: they may run on several threads at once as long as
// their output tensors differ. Inputs are borrowed; the output tensor is
// borrowed, preallocated with the node's inferred dtype and shape, and must
// not alias any input.
#ifndef VKPIPE_RUNTIME_REF_REF_OPS_H_
#define VKPIPE_RUNTIME_REF_REF_OPS_H_

#include <stdbool.h>
#include <stddef.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

// Runs `node` (of a validated graph). `inputs` has node->n_inputs entries;
// an omitted optional input is NULL.
typedef vkp_status_t (*vkp_ref_kernel_fn)(const vkp_node_t *node,
                                          const vkp_tensor_t *const *inputs,
                                          vkp_tensor_t *output);

// The kernel for `op`; NULL when `op` is out of range.
vkp_ref_kernel_fn vkp__ref_kernel(vkp_op_t op);

// Whether the kernel for `op` handles tensors of `dtype` (every input and the
// output share it, except for the optional parameters of float-only ops).
bool vkp__ref_supports_dtype(vkp_op_t op, vkp_dtype_t dtype);

// The dtypes `op` handles, for messages: "float32", "float32, int32, int64"
// or "any dtype".
const char *vkp__ref_dtypes_text(vkp_op_t op);

#endif  // VKPIPE_RUNTIME_REF_REF_OPS_H_
