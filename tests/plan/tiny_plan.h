// SPDX-License-Identifier: Apache-2.0
// A two-stage plan made by hand on the "ref" target, for plan and artifact
// tests that need no partitioner:
//   front(a) -> z = -relu(a)      back(zin, b) -> y = zin + b
//   global "x_a" -> front.a, front.z -> back.zin, global "x_b" -> back.b,
//   back.y -> global "y", front.z -> global "z".
// Global names differ from the stage values' names on purpose.
#ifndef VKPIPE_TESTS_PLAN_TINY_PLAN_H_
#define VKPIPE_TESTS_PLAN_TINY_PLAN_H_

#include "vkpipe/plan.h"

#define TINY_WIDTH 4

// *out_plan is validated and owned by the caller. Stage "back" runs on MPI
// rank `back_rank`.
vkp_status_t tiny_plan_create(int32_t back_rank, vkp_plan_t **out_plan);

// The expected outputs, computed here in plain C.
void tiny_plan_expect(const float *a, const float *b, float *y, float *z);

#endif  // VKPIPE_TESTS_PLAN_TINY_PLAN_H_
