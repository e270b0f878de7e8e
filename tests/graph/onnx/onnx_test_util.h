// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tests/graph/onnx programs: where gen_models.py wrote the
// models, loading them, and running them on "ref" against NumPy's outputs.
#ifndef VKPIPE_TESTS_ONNX_TEST_UTIL_H_
#define VKPIPE_TESTS_ONNX_TEST_UTIL_H_

#include <stddef.h>

#include "vkpipe/graph.h"
#include "vkpipe/target.h"

// $VKPIPE_ONNX_MODELS (set by ctest); fails the test when unset.
const char *onnx_models_dir(void);
// onnx_models_dir()/file into buf.
void onnx_model_path(char *buf, size_t size, const char *file);
// "gen_models.py seed N", for failure messages.
const char *onnx_seed_note(void);
// Loads models/<file> with vkp_graph_load (format by content); fails the test
// on error. Destroy with vkp_graph_destroy.
vkp_graph_t *onnx_load_model(const char *file);
// Loads models/<file> expecting a refusal: no graph, an error of `code`
// (VKP_STATUS_OK: any) whose message holds `what` and, unless NULL, `also`.
void onnx_expect_refused(const char *file, vkp_status_code_t code, const char *what,
                         const char *also);
// Fails every allocation of importing models/<file> in turn: each failure
// must be reported as an error, and nothing may leak.
void onnx_walk_import_allocations(const char *file);
// Number of nodes with op `op`.
int onnx_count_op(const vkp_graph_t *graph, vkp_op_t op);
// Runs `graph` on "ref" with models/NAME.input_<k>.pb and compares with
// models/NAME.output_<k>.pb (rtol/atol as vkp_test_allclose).
void onnx_run_and_compare(const vkp_graph_t *graph, const char *name,
                          double rtol, double atol);
// The same on the whole graph placed on `target` ("cpu", ...), compiled for
// `threads` threads.
void onnx_run_and_compare_on(const vkp_graph_t *graph, const char *name,
                             const char *target, int32_t threads, double rtol,
                             double atol);

#endif  // VKPIPE_TESTS_ONNX_TEST_UTIL_H_
