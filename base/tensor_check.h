// SPDX-License-Identifier: Apache-2.0
// The one check that a caller's tensor is what a graph value expects, shared
// by everything that takes tensors from a caller (a target's run, the
// pipeline's set_input, vkp_target_run_graph), so the messages read alike.
#ifndef VKPIPE_BASE_TENSOR_CHECK_H_
#define VKPIPE_BASE_TENSOR_CHECK_H_

#include <stdint.h>

#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

// INVALID_ARGUMENT "<what> '<name>': expected <dtype> <shape>, got <dtype>
// <shape>" when `t` differs in dtype, rank or shape, "<what> '<name>' has no
// data" when it has bytes to hold but no data pointer; NULL otherwise.
// `what` is "input" or "output"; `name` the value's name (borrowed).
vkp_status_t vkp__tensor_check_matches(const vkp_tensor_t *t, const char *what,
                                       const char *name, vkp_dtype_t dtype,
                                       int32_t rank, const int64_t *shape) VKP_MUST_USE;

#endif  // VKPIPE_BASE_TENSOR_CHECK_H_
