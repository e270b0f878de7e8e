// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the ONNX importer (graph/onnx*.c), from a protobuf in memory.
// External data resolves against a folder that does not exist.
#include <stdint.h>

#include "tests/fuzz/fuzz.h"
#include "vkpipe/graph.h"
#include "vkpipe/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkp_graph_t *g = NULL;
  vkp_status_t st =
      vkp_onnx_load_buffer(data, size, "/nonexistent/vkpipe-fuzz", "fuzz.onnx", NULL, &g);
  vkp_fuzz_check(st, g != NULL);
  vkp_graph_destroy(g);
  return 0;
}
