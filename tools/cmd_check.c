// SPDX-License-Identifier: Apache-2.0
// `vkpipe check MODEL`: load and validate a model, print what it is.
#include <stdio.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/graph.h"

int vkp_cmd_check(int argc, char **argv);
extern const char vkp_cmd_check_summary[];
const char vkp_cmd_check_summary[] = "validate a model and print a summary";

static void vkp__check_help(void) {
  printf("usage: vkpipe check MODEL [--dim NAME=SIZE] [--shape INPUT=DIMS]\n"
         "\n"
         "Loads MODEL (a vkpipe JSON graph, docs/graph-format.md, or an ONNX\n"
         "model), validates it (references, cycles, arity, attributes, dtypes,\n"
         "shapes) and prints its inputs and outputs with dtype and shape, the\n"
         "node count, how often each op occurs and the parameter count and\n"
         "bytes.\n"
         "\n"
         VKP_TOOL_LOAD_HELP
         "\n"
         "Exit status: 0 valid, 1 invalid or unreadable (the reason on stderr),\n"
         "2 bad usage.\n");
}

int vkp_cmd_check(int argc, char **argv) {
  const char *model = NULL;
  vkp_tool_load_args_t load = {0};
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int load_rc = vkp_tool_load_option("check", argc, argv, &i, &load, &load_option);
    if (load_rc) return load_rc;
    if (load_option) continue;
    if (vkp_tool_is_help(argv[i])) {
      vkp__check_help();
      return 0;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return vkp_tool_usage_error("check", "unknown option '%s'", argv[i]);
    if (model)
      return vkp_tool_usage_error("check", "unexpected argument '%s'", argv[i]);
    model = argv[i];
  }
  if (!model) return vkp_tool_usage_error("check", "missing MODEL");
  vkp_graph_t *graph = NULL;
  vkp_status_t st = vkp_tool_load_graph(model, &load, &graph);
  if (st) return vkp_tool_fail("check", st);
  vkp_tool_print_graph_summary(stdout, model, graph);
  vkp_graph_destroy(graph);
  return 0;
}
