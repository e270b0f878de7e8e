// SPDX-License-Identifier: Apache-2.0
// Test helpers for the pipeline suite: "tmath", a host target with known math
// (elementwise add/mul/relu/identity on float32), random per-run delays and
// injected failures; the "diamond" plan that exercises fan-out, skip edges,
// a global input into a middle stage and one output feeding two inputs of one
// stage; and its expected results computed directly.
#ifndef VKPIPE_TESTS_PIPELINE_TMATH_H_
#define VKPIPE_TESTS_PIPELINE_TMATH_H_

#include <stdint.h>

#include "vkpipe/plan.h"
#include "vkpipe/target.h"

// An input whose element 0 equals one of these makes the stage reading it
// fail: with INTERNAL, or with DEVICE_LOST.
#define TMATH_FAIL_VALUE 4242.0f
#define TMATH_LOST_VALUE 7777.0f

// Adds "tmath" to `registry`. Every run sleeps a random 0..max_delay_us
// microseconds with probability delay_percent/100 (0: never).
vkp_status_t tmath_register(vkp_registry_t *registry, uint32_t max_delay_us,
                            uint32_t delay_percent) VKP_MUST_USE;

// Evaluates a graph of tmath ops: inputs and outputs follow graph order.
vkp_status_t tmath_eval(const vkp_graph_t *graph, const vkp_tensor_t *inputs,
                        vkp_tensor_t *outputs) VKP_MUST_USE;

// Shape of every diamond tensor.
#define DIAMOND_ROWS 4
#define DIAMOND_COLS 8
#define DIAMOND_NUMEL (DIAMOND_ROWS * DIAMOND_COLS)

// The diamond plan (validated), every stage on `target`, except the stages
// whose bit is set in `alt_mask`, which go on `alt_target`:
//   s0(x):        a = x + x; b = x * x
//   s1(p<-a, q<-a): c = p * q
//   s2(b, z):     d = b + z                    (z: global input)
//   s3(c, d, x, a): y = c + d; w = y * a + x   (x, a: skip edges)
// Global inputs x, z; global outputs y, w, u (= s0.b).
vkp_status_t diamond_plan(const char *target, const char *alt_target,
                          uint32_t alt_mask, vkp_plan_t **out_plan) VKP_MUST_USE;

// Expected y, w, u for inputs x, z (DIAMOND_NUMEL floats each).
void diamond_expected(const float *x, const float *z, float *y, float *w,
                      float *u);

#endif  // VKPIPE_TESTS_PIPELINE_TMATH_H_
