// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the JSON graph loader (graph/json.c). The input is the JSON
// text, a NUL byte, then the bytes of its weights file.
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "vkpipe/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t json_size = nul ? (size_t)(nul - data) : size;
  const uint8_t *bin = nul ? nul + 1 : NULL;
  size_t bin_size = nul ? size - json_size - 1 : 0;
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load_memory(data, json_size, bin, bin_size, &g);
  vkp_fuzz_check(st, g != NULL);
  vkp_graph_destroy(g);
  return 0;
}
