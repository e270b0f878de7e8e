// SPDX-License-Identifier: Apache-2.0
//
// vkpipe graph IR: values (inputs, constants, intermediates), nodes (op,
// inputs, outputs, attributes) and the graph that owns them.
//
//   vkp_graph_t *g;
//   vkp_status_t st = vkp_graph_create("mlp", &g);
//   int64_t xs[] = {1, 784}, ws[] = {784, 10};
//   st = vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, 2, xs, NULL);
//   st = vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 2, ws, weights, NULL);
//   const char *in[] = {"x", "w"}, *out[] = {"y"};
//   st = vkp_graph_add_node(g, "fc", VKP_OP_MATMUL, 2, in, 1, out, 0, NULL, NULL);
//   st = vkp_graph_mark_output(g, "y");
//   st = vkp_graph_validate(g);   // checks, sorts topologically, infers shapes
//   ...
//   vkp_graph_destroy(g);
//
// The structs are public so that targets plugged in from outside the library
// can read them; treat them as read-only and change a graph only through the
// functions below. A graph is not thread-safe to modify; a validated graph may
// be read from any number of threads at once.
#ifndef VKPIPE_GRAPH_H_
#define VKPIPE_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkpipe/ops.h"
#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------
// Attributes

#define VKP_ATTR_KIND_LIST(X) \
  X(INT, "int")               \
  X(FLOAT, "float")           \
  X(INTS, "ints")             \
  X(FLOATS, "floats")         \
  X(STRING, "string")

typedef enum vkp_attr_kind_t {
#define VKP__ATTR_KIND_ENUM(e, s) VKP_ATTR_##e,
  VKP_ATTR_KIND_LIST(VKP__ATTR_KIND_ENUM)
#undef VKP__ATTR_KIND_ENUM
  VKP_ATTR_KIND_COUNT
} vkp_attr_kind_t;

const char *vkp_attr_kind_name(vkp_attr_kind_t kind);

// One attribute. In a graph every pointer is owned by the graph; when passed
// to vkp_graph_add_node it is borrowed and deep-copied.
typedef struct vkp_attr_t {
  const char *name;
  vkp_attr_kind_t kind;
  int64_t i;              // INT
  double f;               // FLOAT
  const char *s;          // STRING
  const int64_t *ints;    // INTS (count entries)
  const double *floats;   // FLOATS (count entries)
  int32_t count;
} vkp_attr_t;

// ---------------------------------------------------------------------------
// Values and nodes

typedef enum vkp_value_kind_t {
  VKP_VALUE_INPUT,         // a graph input, set per run
  VKP_VALUE_CONSTANT,      // weights: data owned by the graph
  VKP_VALUE_INTERMEDIATE,  // produced by a node
} vkp_value_kind_t;

typedef struct vkp_value_t {
  char *name;                  // unique within the graph
  vkp_value_kind_t kind;
  vkp_dtype_t dtype;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  bool shape_known;            // false until validate infers it
  void *data;                  // CONSTANT only: nbytes little-endian bytes
  size_t nbytes;
  int32_t producer;            // index of the producing node, or -1
  bool is_output;              // listed in the graph's outputs
  // A data-dependent ("bounded") value: shape[bounded_axis] is only an upper
  // bound; the run-time extent along that axis (0..bound) travels with the
  // tensor (its shape) and the elements are stored compactly for the
  // run-time shape. Set by validation for outputs of non_zero, unique and
  // the ops downstream of them that accept bounded inputs; on graph inputs
  // by vkp_graph_set_input_bounded. docs/onnx.md, "Data-dependent output
  // shapes".
  bool bounded;
  int32_t bounded_axis;        // when bounded: 0 .. rank-1
} vkp_value_t;

typedef struct vkp_node_t {
  char *name;                  // unique within the graph
  vkp_op_t op;
  int32_t n_inputs;
  int32_t *inputs;             // value indices; -1 = optional input omitted
  int32_t n_outputs;
  int32_t *outputs;            // value indices
  int32_t n_attrs;
  vkp_attr_t *attrs;
  char *target;                // manual placement ("cpu", ...) or NULL
} vkp_node_t;

typedef struct vkp_graph_t {
  char *name;
  int32_t n_values;
  vkp_value_t *values;
  int32_t n_nodes;
  vkp_node_t *nodes;           // topological order once validated
  int32_t n_inputs;
  int32_t *inputs;             // value indices, in declaration order
  int32_t n_outputs;
  int32_t *outputs;            // value indices, in declaration order
  bool validated;
  struct vkp__graph_internal_t *internal;  // name index etc.
} vkp_graph_t;

// ---------------------------------------------------------------------------
// Building

// Creates an empty graph named `name` (copied). *out_graph is owned by the
// caller: destroy it with vkp_graph_destroy.
vkp_status_t vkp_graph_create(const char *name, vkp_graph_t **out_graph)
    VKP_MUST_USE;

// As vkp_graph_create, allocating the graph and everything added to it with
// `allocator` (copied; its functions and ctx borrowed, see vkpipe/alloc.h;
// NULL = the system allocator).
vkp_status_t vkp_graph_create_with_allocator(const char *name,
                                             const vkp_allocator_t *allocator,
                                             vkp_graph_t **out_graph) VKP_MUST_USE;

// Frees the graph and everything it owns. NULL is fine.
void vkp_graph_destroy(vkp_graph_t *graph);

// Deep copy, made with the system allocator (graph_extract's subgraph too):
// inside the library, with the allocator of the object being built.
vkp_status_t vkp_graph_clone(const vkp_graph_t *graph, vkp_graph_t **out_graph)
    VKP_MUST_USE;

// Adds a graph input. `out_value` (may be NULL) receives its index.
vkp_status_t vkp_graph_add_input(vkp_graph_t *graph, const char *name,
                                 vkp_dtype_t dtype, int32_t rank,
                                 const int64_t *shape, int32_t *out_value)
    VKP_MUST_USE;

// Adds a constant; `data` (borrowed) is copied: numel * dtype size bytes.
vkp_status_t vkp_graph_add_constant(vkp_graph_t *graph, const char *name,
                                    vkp_dtype_t dtype, int32_t rank,
                                    const int64_t *shape, const void *data,
                                    int32_t *out_value) VKP_MUST_USE;

// Adds a node. Input names refer to inputs, constants or outputs of other
// nodes, which may be added later (validate resolves them); "" or NULL marks
// an omitted optional input. Output names must be new. `attrs` is deep-copied.
vkp_status_t vkp_graph_add_node(vkp_graph_t *graph, const char *name,
                                vkp_op_t op, int32_t n_inputs,
                                const char *const *inputs, int32_t n_outputs,
                                const char *const *outputs, int32_t n_attrs,
                                const vkp_attr_t *attrs, int32_t *out_node)
    VKP_MUST_USE;

// Sets a node's manual target placement (copied; NULL clears it).
vkp_status_t vkp_graph_set_node_target(vkp_graph_t *graph, int32_t node,
                                       const char *target) VKP_MUST_USE;

// Declares graph input `name` bounded along `axis`: its shape[axis] is an
// upper bound and each run may pass any extent 0..bound along that axis
// (a stage of a pipeline reading a data-dependent value, or a
// variable-length input). The ops that take such a value are listed in
// docs/onnx.md; validation refuses the others.
vkp_status_t vkp_graph_set_input_bounded(vkp_graph_t *graph, const char *name,
                                         int32_t axis) VKP_MUST_USE;

// True when any input or output of `node` is a bounded value.
bool vkp_node_is_bounded(const vkp_graph_t *graph, const vkp_node_t *node);
// The first bounded input or output of `node` (a value index), or -1: for
// a target's supports() reason.
int32_t vkp_node_bounded_value(const vkp_graph_t *graph, const vkp_node_t *node);

// Marks the value `name` as a graph output (in call order).
vkp_status_t vkp_graph_mark_output(vkp_graph_t *graph, const char *name)
    VKP_MUST_USE;

// Checks everything (names, arity, attribute kinds and values, dtypes, shapes,
// dangling references, cycles), puts the nodes in topological order, fills in
// default attributes in canonical form (docs/ops.md) and infers every shape.
// Errors name the node and field. Idempotent.
vkp_status_t vkp_graph_validate(vkp_graph_t *graph) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Reading

// Index of the value named `name`, or -1.
int32_t vkp_graph_find_value(const vkp_graph_t *graph, const char *name);
// Index of the node named `name`, or -1.
int32_t vkp_graph_find_node(const vkp_graph_t *graph, const char *name);
// Position in graph->inputs of the input named `name`, or -1.
int32_t vkp_graph_find_input(const vkp_graph_t *graph, const char *name);
// Position in graph->outputs of the output named `name`, or -1.
int32_t vkp_graph_find_output(const vkp_graph_t *graph, const char *name);

// Attribute `name` of `node`, or NULL when absent (after validate every
// schema attribute is present).
const vkp_attr_t *vkp_node_attr(const vkp_node_t *node, const char *name);
// Typed getters for validated graphs: the value, or `fallback` when absent.
int64_t vkp_node_attr_int(const vkp_node_t *node, const char *name,
                          int64_t fallback);
double vkp_node_attr_float(const vkp_node_t *node, const char *name,
                           double fallback);
const char *vkp_node_attr_string(const vkp_node_t *node, const char *name,
                                 const char *fallback);
// The same without a fallback, for validated graphs: validation writes every
// attribute of the op's schema that has a default (docs/ops.md) and every
// canonical form, so the values are there; an absent one reads as 0, 0.0 or
// NULL. Use these rather than repeating an op's default at the call.
int64_t vkp_node_int(const vkp_node_t *node, const char *name);
double vkp_node_float(const vkp_node_t *node, const char *name);
const char *vkp_node_string(const vkp_node_t *node, const char *name);
// Number of entries of an INTS attribute, *out_ints pointing at them (borrowed
// from the graph); 0 and NULL when absent.
int32_t vkp_node_attr_ints(const vkp_node_t *node, const char *name,
                           const int64_t **out_ints);

// Evaluates `node` of a validated graph with the reference semantics of its
// op (docs/ops.md): the kernels the "ref" target runs and constant folding
// uses. `inputs` has node->n_inputs entries (NULL for an omitted optional
// input), borrowed; `outputs` has node->n_outputs tensors, preallocated with
// the inferred dtypes and shapes, aliasing no input. Thread-safe for
// distinct outputs. Errors (an integer division by zero, an index out of
// range) name the node.
vkp_status_t vkp_node_eval(const vkp_node_t *node,
                           const vkp_tensor_t *const *inputs,
                           vkp_tensor_t *outputs) VKP_MUST_USE;

// For a node of a validated graph that reads bounded values: writes into
// outputs[j].shape the run-time shape of each bounded output that follows
// from the inputs' run-time shapes (elementwise broadcast, gather, reshape,
// concat...). `inputs` carry their run-time shapes. Producers whose extent
// depends on the data (non_zero, unique) leave theirs to vkp_node_eval,
// which writes it. Call it before vkp_node_eval; a no-op for a node without
// bounded values. Errors (two bounded operands whose extents differ, a
// reshape that does not divide) name the node.
vkp_status_t vkp_node_bounded_shapes(const vkp_graph_t *graph,
                                     const vkp_node_t *node,
                                     const vkp_tensor_t *const *inputs,
                                     vkp_tensor_t *outputs) VKP_MUST_USE;

// Checks a run-time tensor against value `v`: dtype, rank and shape, where a
// bounded value's extent may be anything from 0 to its bound. `what`
// ("input", "output") names v in the error.
vkp_status_t vkp_value_check_tensor(const vkp_value_t *v, const vkp_tensor_t *t,
                                    const char *what) VKP_MUST_USE;

// Total bytes of constants.
size_t vkp_graph_constant_bytes(const vkp_graph_t *graph);

// Liveness over the (validated) topological order: for value v,
// first_def[v] is the position of its producer (-1 for inputs and constants)
// and last_use[v] the position of its last consumer (n_nodes for graph
// outputs, -1 when never used). Arrays of n_values entries, owned by caller.
vkp_status_t vkp_graph_liveness(const vkp_graph_t *graph, int32_t *first_def,
                                int32_t *last_use) VKP_MUST_USE;

// Builds a standalone, validated graph from `n` nodes of a validated graph
// (indices). Its inputs are the non-constant values those nodes read but do
// not produce (in order of first use); constants they read are copied in; its
// outputs are values they produce that are graph outputs or are read by other
// nodes (in node order). Node and value names are kept.
vkp_status_t vkp_graph_extract(const vkp_graph_t *graph, int32_t n,
                               const int32_t *nodes, const char *name,
                               vkp_graph_t **out_graph) VKP_MUST_USE;

// ---------------------------------------------------------------------------
// Load options: sizes for the symbolic dimensions of graph inputs
//
//   vkp_dim_binding_t dims[] = {{.name = "batch", .value = 8}};
//   vkp_graph_load_options_t opt = {.n_dims = 1, .dims = dims};
//   st = vkp_graph_load_with_options("model.onnx", &opt, &g);
//
// Models often leave input dimensions symbolic: ONNX exports with a dynamic
// batch axis name it ("batch"), some leave it unnamed, and a JSON graph may
// write a name instead of a size. vkpipe compiles static shapes, so each
// such dimension needs a size at load time: by its name (dims), or through
// the whole shape of the input (shapes, which may also restate static
// dimensions but not change them). Without one, loading fails with a message
// naming the input, the axis and both ways to bind it. Every binding must
// match something: a name no input uses, or an input that does not exist, is
// an error too.

// A symbolic dimension `name` (borrowed) of any graph input has size `value`;
// with `up_to`, it varies at run time from 0 to `value`: the inputs are
// declared bounded along it (vkp_graph_set_input_bounded, docs/onnx.md
// "Data-dependent output shapes"), so one loaded graph runs any batch up to
// the bound (on the ops and targets that take a varying extent; the others
// refuse naming the node).
typedef struct vkp_dim_binding_t {
  const char *name;
  int64_t value;
  bool up_to;
} vkp_dim_binding_t;

// Graph input `input` (borrowed) has shape `shape` (rank entries).
typedef struct vkp_shape_binding_t {
  const char *input;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
} vkp_shape_binding_t;

// Zero-initialised means no bindings. Arrays borrowed.
typedef struct vkp_graph_load_options_t {
  int32_t n_dims;
  const vkp_dim_binding_t *dims;
  int32_t n_shapes;
  const vkp_shape_binding_t *shapes;
  // ONNX: import exporter-expanded subgraphs (LayerNorm, GELU, attention;
  // docs/onnx.md, "Fusion") node by node instead of as one fused op. For
  // comparing the two; the fused ops are faster and use less memory.
  bool no_fusion;
  // JSON graphs: allow a 'weights' file given by an absolute path or one
  // that leaves the model's folder through "..". Off by default: a model
  // file names data beside it and nothing else (ONNX external data is
  // always held to this).
  bool allow_outside_paths;
  // What the graph (and the statuses of the load) is allocated with; NULL =
  // the system allocator. Borrowed for the call; see vkpipe/alloc.h.
  const vkp_allocator_t *allocator;
} vkp_graph_load_options_t;

// ---------------------------------------------------------------------------
// Files (docs/graph-format.md)

// Loads a graph from its JSON file; weights come from the .bin named inside it,
// resolved relative to the JSON file. The result is validated.
vkp_status_t vkp_graph_load(const char *path, vkp_graph_t **out_graph)
    VKP_MUST_USE;

// vkp_graph_load with options (NULL: none), for JSON and ONNX models alike.
vkp_status_t vkp_graph_load_with_options(const char *path,
                                         const vkp_graph_load_options_t *options,
                                         vkp_graph_t **out_graph) VKP_MUST_USE;

// Loads from a JSON string; `base_dir` (may be NULL: current directory)
// resolves the .bin.
vkp_status_t vkp_graph_load_json(const char *json, size_t json_size,
                                 const char *base_dir, vkp_graph_t **out_graph)
    VKP_MUST_USE;

// Saves `graph` as `path` (JSON) plus a sidecar .bin holding the constants
// (named after `path` with ".bin" replacing ".json", or appended).
vkp_status_t vkp_graph_save(const vkp_graph_t *graph, const char *path)
    VKP_MUST_USE;

// The same format in memory: the JSON text (`json_size` bytes, no NUL
// needed) and the weights its "weights" field names (`bin`, `bin_size`
// bytes; may be NULL when there are no constants). Both borrowed.
vkp_status_t vkp_graph_load_memory(const void *json, size_t json_size,
                                   const void *bin, size_t bin_size,
                                   vkp_graph_t **out_graph) VKP_MUST_USE;

// Serialises `graph` into a NUL-terminated JSON text naming `bin_name` as its
// weights, and the weights themselves. Both outputs are owned by the caller
// (vkp_free).
vkp_status_t vkp_graph_save_memory(const vkp_graph_t *graph,
                                   const char *bin_name, char **out_json,
                                   size_t *out_json_size, void **out_bin,
                                   size_t *out_bin_size) VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_GRAPH_H_
