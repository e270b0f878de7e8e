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

#include <stdbool.h>
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

// What an ONNX value is: a tensor, a sequence of tensors, or an optional
// (holding a tensor or a sequence, or nothing).
typedef enum vkp_onnx_kind_t {
  VKP_ONNX_TENSOR,
  VKP_ONNX_SEQUENCE,
  VKP_ONNX_OPTIONAL,
} vkp_onnx_kind_t;

// A sequence or optional value, as ONNX backend test data stores one
// (SequenceProto, OptionalProto): the tensors it holds.
typedef struct vkp_onnx_list_t {
  vkp_onnx_kind_t kind;   // VKP_ONNX_SEQUENCE or VKP_ONNX_OPTIONAL
  bool present;           // an optional: it holds an element
  bool of_sequence;       // an optional: its element is a sequence
  int32_t n;              // tensors: a sequence's elements, an optional's
                          // tensor (1) or its sequence's elements
  vkp_tensor_t *tensors;  // owned (n entries)
} vkp_onnx_list_t;

// vkpipe graphs take and return tensors only: a sequence or optional graph
// input given by the options (below) becomes one graph input per tensor it
// holds, and a sequence or optional graph output one graph output per
// tensor, each named "<name>[k]" (k = 0, 1, ...; an empty optional has
// none). This is the name of tensor k of list value `name` (into buf).
void vkp_onnx_list_element_name(const char *name, int32_t k, char *buf,
                                size_t size);

// Import options; zero-initialised means defaults.
typedef struct vkp_onnx_options_t {
  // Graph inputs to freeze: input constant_names[i] becomes a constant with
  // the value constants[i] (both borrowed, n_constants entries) instead of a
  // runtime input. This is how shape/axes/starts/min/max tensors that a
  // model takes as inputs reach import-time folding.
  int32_t n_constants;
  const char *const *constant_names;
  const vkp_tensor_t *constants;
  // Sizes for symbolic input dimensions (graph.h), and the graph's
  // allocator (bindings.allocator; NULL = the system allocator).
  vkp_graph_load_options_t bindings;
  // Sequence and optional graph inputs: input list_names[i] has the
  // length, presence and element dtypes and shapes of lists[i] (both
  // borrowed, n_lists entries; the tensors' data is not read). Without an
  // entry such an input is refused: vkpipe resolves sequences at import.
  int32_t n_lists;
  const char *const *list_names;
  const vkp_onnx_list_t *lists;
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

// Reads a serialized SequenceProto (`kind` VKP_ONNX_SEQUENCE) or
// OptionalProto (VKP_ONNX_OPTIONAL) file into `out` (release with
// vkp_onnx_list_deinit). Sequences of tensors only; UNSUPPORTED otherwise.
vkp_status_t vkp_onnx_list_load(const char *path, vkp_onnx_kind_t kind,
                                vkp_onnx_list_t *out) VKP_MUST_USE;
// Frees what vkp_onnx_list_load filled in and zeroes `list`; NULL is fine.
void vkp_onnx_list_deinit(vkp_onnx_list_t *list);

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
  vkp_onnx_kind_t *input_kinds;  // tensor, sequence or optional; owned
  int32_t n_outputs;
  char **outputs;                // graph outputs, in order; owned
  vkp_onnx_kind_t *output_kinds; // owned
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
