// SPDX-License-Identifier: Apache-2.0
// Sizes for the symbolic dimensions of graph inputs (vkp_graph_load_options_t),
// shared by the JSON and ONNX readers: each reader describes an input's
// declared dims and gets its static shape back, or an error that names the
// input, the axis and how to bind it.
//
//   vkp__binder_t b;
//   st = vkp__binder_init(&b, options);          // options may be NULL
//   st = vkp__binder_shape(&b, "x", 2, declared, names, shape);
//   ...
//   st = vkp__binder_finish(&b);                 // every binding was used?
//   vkp__binder_deinit(&b);
#ifndef VKPIPE_GRAPH_BIND_H_
#define VKPIPE_GRAPH_BIND_H_

#include <stdbool.h>

#include "vkpipe/graph.h"

typedef struct vkp__binder_t {
  vkp_graph_load_options_t opt;  // copy of the caller's (arrays borrowed)
  bool *dim_used;                // per dims[i]
  bool *shape_used;              // per shapes[i]
  char *names;                   // the symbolic names met, ", "-separated
  char *inputs;                  // the input names met, ", "-separated
} vkp__binder_t;

vkp_status_t vkp__binder_init(vkp__binder_t *b,
                              const vkp_graph_load_options_t *options)
    VKP_MUST_USE;
void vkp__binder_deinit(vkp__binder_t *b);

// The shape of graph input `input` (rank dims): declared[d] >= 0 is a
// static size; declared[d] < 0 is symbolic, named names[d] (NULL or "":
// unnamed). Writes out_shape. Errors do not repeat the input's name: the
// caller puts it in front.
// *out_bounded_axis: the axis bound by an `up_to` dimension binding (the
// input then varies along it up to out_shape[axis]), or -1.
vkp_status_t vkp__binder_shape(vkp__binder_t *b, const char *input,
                               int32_t rank, const int64_t *declared,
                               const char *const *names, int64_t *out_shape,
                               int32_t *out_bounded_axis) VKP_MUST_USE;

// Notes an input that needs no shape (an ONNX input frozen to a constant)
// so that a binding for it is not reported as unused.
void vkp__binder_skip_input(vkp__binder_t *b, const char *input);

// INVALID_ARGUMENT naming the first binding nothing used.
vkp_status_t vkp__binder_finish(const vkp__binder_t *b) VKP_MUST_USE;

#endif  // VKPIPE_GRAPH_BIND_H_
