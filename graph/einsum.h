// SPDX-License-Identifier: Apache-2.0
//
// Einsum equations ("bij,bjk->bik", "...ii->...i", "i,i"): the parse that
// both the einsum op (graph/op_linalg.c: inference and reference kernel)
// and the ONNX importer (graph/onnx_einsum.c: lowering to matmul, reduce
// and transpose) read.
//
//   vkp__einsum_t e;
//   int32_t ranks[2] = {3, 3};
//   const int64_t *shapes[2] = {a_shape, b_shape};
//   st = vkp__einsum_parse("bij,bjk->bik", 2, ranks, shapes, &e);
//   // e.label[0] = {0, 1, 3}: b i j with b, i, k the output's labels 0..2
//   // and j, summed, label 3; e.dim[3] is j's size.
//
// Every subscript letter and every dim the ellipses stand for is a label.
// Labels are numbered output first (in the output's order), then the summed
// ones in order of first appearance. Ellipsis dims broadcast NumPy-style
// (right-aligned, size 1 stretches); letters must agree exactly.
#ifndef VKPIPE_GRAPH_EINSUM_H_
#define VKPIPE_GRAPH_EINSUM_H_

#include <stdint.h>

#include "vkpipe/status.h"
#include "vkpipe/tensor.h"

#define VKP__EINSUM_MAX_INPUTS 8
#define VKP__EINSUM_MAX_LABELS 64

typedef struct vkp__einsum_t {
  int32_t n_inputs;
  int32_t rank[VKP__EINSUM_MAX_INPUTS];
  // Label of each dim of each input.
  int32_t label[VKP__EINSUM_MAX_INPUTS][VKP_MAX_RANK];
  int32_t out_rank;   // the output's labels are 0..out_rank-1
  int32_t n_labels;
  int64_t dim[VKP__EINSUM_MAX_LABELS];
  // The equation with spaces removed and the output written out (the
  // implicit output of "ij,jk" is "ik": the ellipsis, then the letters used
  // once, in ASCII order).
  char canonical[256];
} vkp__einsum_t;

// Parses `equation` for `n` inputs of the given ranks and shapes. Errors
// (INVALID_ARGUMENT) say what is wrong with the equation or which input
// does not fit it.
vkp_status_t vkp__einsum_parse(const char *equation, int32_t n,
                               const int32_t *ranks,
                               const int64_t *const *shapes,
                               vkp__einsum_t *out) VKP_MUST_USE;

#endif  // VKPIPE_GRAPH_EINSUM_H_
