// SPDX-License-Identifier: Apache-2.0
// A small double-precision reference interpreter for the CPU target tests:
// every op of the IR, written for clarity, not speed. (The "ref" target is
// the project's truth; this one exists so the tests do not depend on it and
// computes in double.)
#ifndef VKPIPE_TESTS_SUPPORT_REF_DOUBLE_H_
#define VKPIPE_TESTS_SUPPORT_REF_DOUBLE_H_

#include "vkpipe/graph.h"
#include "vkpipe/tensor.h"

// Evaluates `graph` (validated) on `inputs`; out[i] (malloc'd, numel of
// output i) receives graph output i. Returns false on an op it lacks.
bool vkp_test_ref_eval(const vkp_graph_t *graph, const vkp_tensor_t *inputs,
                       double **out);

#endif  // VKPIPE_TESTS_SUPPORT_REF_DOUBLE_H_
