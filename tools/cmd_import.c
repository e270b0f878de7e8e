// SPDX-License-Identifier: Apache-2.0
// `vkpipe import`: an ONNX model (or any graph vkpipe reads) into the JSON +
// .bin graph format (docs/graph-format.md). The written graph loads and runs
// with identical results: weights are copied bit for bit.
#include <stdio.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/graph.h"

int vkp_cmd_import(int argc, char **argv);
extern const char vkp_cmd_import_summary[];
const char vkp_cmd_import_summary[] =
    "convert an ONNX model into the JSON + .bin graph format";

static void vkp__import_help(FILE *out) {
  fprintf(out,
          "usage: vkpipe import MODEL -o GRAPH.json [--quiet]\n"
          "\n"
          "Imports MODEL (ONNX, recognised by content; a JSON graph works too)\n"
          "and writes GRAPH.json plus GRAPH.bin with the weights. Import folds\n"
          "shape computations, drops Identity and inference Dropout and folds\n"
          "BatchNormalization into a preceding Conv (docs/onnx.md). When the\n"
          "model cannot be imported, one error lists every unsupported node.\n"
          "\n"
          "  -o, --output FILE  the JSON file to write (required)\n"
          "  --quiet            do not print the graph summary\n"
          VKP_TOOL_LOAD_HELP);
}

int vkp_cmd_import(int argc, char **argv) {
  const char *model = NULL, *output = NULL;
  bool quiet = false;
  vkp_tool_load_args_t load = {0};
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int load_rc = vkp_tool_load_option("import", argc, argv, &i, &load, &load_option);
    if (load_rc) return load_rc;
    if (load_option) continue;
    const char *value = NULL;
    if (vkp_tool_is_help(argv[i])) {
      vkp__import_help(stdout);
      return 0;
    }
    vkp_tool_option_result_t r = vkp_tool_option(argc, argv, &i, "--output", &value);
    if (r == VKP_TOOL_OPTION_NO_MATCH)
      r = vkp_tool_option(argc, argv, &i, "-o", &value);
    if (r == VKP_TOOL_OPTION_MISSING_VALUE)
      return vkp_tool_usage_error("import", "%s needs a file name", argv[i]);
    if (r == VKP_TOOL_OPTION_MATCHED) {
      output = value;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return vkp_tool_usage_error("import", "unknown option '%s'", argv[i]);
    } else if (!model) {
      model = argv[i];
    } else {
      return vkp_tool_usage_error("import", "one model at a time ('%s')", argv[i]);
    }
  }
  if (!model) return vkp_tool_usage_error("import", "no model given");
  if (!output) return vkp_tool_usage_error("import", "-o GRAPH.json is required");
  vkp_graph_t *graph = NULL;
  vkp_status_t st = vkp_tool_load_graph(model, &load, &graph);
  if (st) return vkp_tool_fail("import", st);
  st = vkp_graph_save(graph, output);
  if (st) {
    vkp_graph_destroy(graph);
    return vkp_tool_fail("import", st);
  }
  if (!quiet) {
    vkp_tool_print_graph_summary(stdout, model, graph);
    printf("wrote %s\n", output);
  }
  vkp_graph_destroy(graph);
  return 0;
}
