// SPDX-License-Identifier: Apache-2.0
//
// vkpipe ONNX import: ModelProto files into the graph IR, plus the small
// readers the conformance runner needs (TensorProto files, a model's ops).
//
//   vkp_graph_t *g;
//   vkp_status_t st = vkp_onnx_load("resnet.onnx", &g);   // validated graph
//   if (st) {   // one message listing every node that could not be imported
//     fprintf(stderr, "%s\n", vkp_status_message(st));
//     vkp_status_free(st);
//   }
//
// vkp_graph_load (graph.h) calls vkp_onnx_load for any file that is not JSON,
// so most programs never include this header. docs/onnx.md lists the ops,
// opsets (7 to 17 of the default domain) and what import simplifies.
// Every function here is thread-safe (no shared state).
#ifndef VKPIPE_ONNX_H_
#define VKPIPE_ONNX_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

// Imports the ONNX model at `path` into a validated graph (*out_graph owned by
// the caller). External data files resolve relative to the model's folder.
// Errors: PARSE_ERROR for bytes that are not a ModelProto, UNSUPPORTED when
// any op, opset, attribute value or dtype is outside what the IR can express
// (the message lists every such node at once), INVALID_ARGUMENT and friends
// for inconsistent models.
vkp_status_t vkp_onnx_load(const char *path, vkp_graph_t **out_graph)
    VKP_MUST_USE;

// Import options; zero-initialised means defaults.
typedef struct vkp_onnx_options_t {
  // Graph inputs to freeze: input constant_names[i] becomes a constant with
  // the value constants[i] (both borrowed, n_constants entries) instead of a
  // runtime input. This is how shape/axes/starts/min/max tensors that a
  // model takes as inputs reach import-time folding.
  int32_t n_constants;
  const char *const *constant_names;
  const vkp_tensor_t *constants;
  // Sizes for symbolic input dimensions (graph.h).
  vkp_graph_load_options_t bindings;
} vkp_onnx_options_t;

// vkp_onnx_load with options (`options` may be NULL).
vkp_status_t vkp_onnx_load_with_options(const char *path,
                                        const vkp_onnx_options_t *options,
                                        vkp_graph_t **out_graph) VKP_MUST_USE;

// Same, from `size` bytes in memory (borrowed). `base_dir` (may be NULL: the
// current directory) resolves external data; `name` (may be NULL) names the
// model in messages; `options` may be NULL.
vkp_status_t vkp_onnx_load_buffer(const void *data, size_t size,
                                  const char *base_dir, const char *name,
                                  const vkp_onnx_options_t *options,
                                  vkp_graph_t **out_graph) VKP_MUST_USE;

// Reads a serialized TensorProto file (as in ONNX backend test data sets)
// into `out` (initialised here, owned by the caller). *out_name (may be NULL)
// receives the tensor's name, heap-allocated: free it with vkp_onnx_string_free.
// UNSUPPORTED for dtypes the IR has not got.
vkp_status_t vkp_onnx_tensor_load(const char *path, vkp_tensor_t *out,
                                  char **out_name) VKP_MUST_USE;

// What a model uses, read without importing it.
typedef struct vkp_onnx_info_t {
  int64_t opset;         // default-domain opset; 0 when none is declared
  int32_t n_nodes;
  int32_t n_op_types;
  char **op_types;       // distinct "Domain::Op" / "Op", first-use order; owned
  int32_t n_inputs;
  char **inputs;         // graph inputs without an initializer, in order; owned
  vkp_dtype_t *input_dtypes;  // their dtypes (VKP_DTYPE_COUNT: not a tensor
                              // of a vkpipe dtype); owned
} vkp_onnx_info_t;

// Fills `out` (caller-owned storage; release with vkp_onnx_info_deinit).
vkp_status_t vkp_onnx_info_read(const char *path, vkp_onnx_info_t *out)
    VKP_MUST_USE;
// Frees what vkp_onnx_info_read filled in and zeroes `info`; NULL is fine.
void vkp_onnx_info_deinit(vkp_onnx_info_t *info);

// Frees a string this module returned.
void vkp_onnx_string_free(char *s);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_ONNX_H_
