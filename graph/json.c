// SPDX-License-Identifier: Apache-2.0
// Placeholder until the JSON reader lands (issue 2).
#include "base/status_macros.h"
#include "graph/readers.h"

vkp_status_t vkp__graph_load_json_file(const char *path,
                                       vkp_graph_t **out_graph) {
  *out_graph = NULL;
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "'%s': the JSON graph reader is not built yet", path);
}
