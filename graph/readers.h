// SPDX-License-Identifier: Apache-2.0
// The model file readers vkp_graph_load chooses between.
#ifndef VKPIPE_GRAPH_READERS_H_
#define VKPIPE_GRAPH_READERS_H_

#include "vkpipe/graph.h"

// graph/json.c: the JSON + .bin format (docs/graph-format.md).
vkp_status_t vkp__graph_load_json_file(const char *path,
                                       const vkp_graph_load_options_t *options,
                                       vkp_graph_t **out_graph) VKP_MUST_USE;
// graph/onnx.c: an ONNX ModelProto.
vkp_status_t vkp__graph_load_onnx_file(const char *path,
                                       const vkp_graph_load_options_t *options,
                                       vkp_graph_t **out_graph) VKP_MUST_USE;

#endif  // VKPIPE_GRAPH_READERS_H_
