// SPDX-License-Identifier: Apache-2.0
//
// The activations of the recurrent ops (graph/op_rnn.c), for the ONNX
// importer (graph/onnx_rnn.c), which turns ONNX's alpha and beta lists
// (consumed in order by the activations that take them) into the IR's one
// value per activation.
//
//   double alpha, beta;
//   int32_t params;
//   if (vkp__rnn_activation("hard_sigmoid", 12, &alpha, &beta, &params))
//     // alpha 0.2, beta 0.5 (ONNX's defaults), params 2
#ifndef VKPIPE_GRAPH_RNN_H_
#define VKPIPE_GRAPH_RNN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Looks up the IR activation name[0..len) ("sigmoid", "leaky_relu", ...):
// false when unknown; else its default alpha and beta and how many of the
// two it takes (0, 1: alpha, 2: alpha and beta).
bool vkp__rnn_activation(const char *name, size_t len, double *alpha,
                         double *beta, int32_t *params);

#endif  // VKPIPE_GRAPH_RNN_H_
