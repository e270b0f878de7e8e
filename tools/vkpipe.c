// SPDX-License-Identifier: Apache-2.0
// `vkpipe`: the command-line tool. Each subcommand lives in tools/cmd_*.c.
#include <stdio.h>
#include <string.h>

#include "tools/tool.h"

#define VKP_TOOL_COMMAND(name)                  \
  int vkp_cmd_##name(int argc, char **argv);    \
  extern const char vkp_cmd_##name##_summary[];
#include "vkpipe_tool_commands.inc"
#undef VKP_TOOL_COMMAND

typedef struct vkp__command_t {
  const char *name;
  int (*main)(int argc, char **argv);
  const char *summary;
} vkp__command_t;

static const vkp__command_t vkp__commands[] = {
#define VKP_TOOL_COMMAND(name) {#name, vkp_cmd_##name, vkp_cmd_##name##_summary},
#include "vkpipe_tool_commands.inc"
#undef VKP_TOOL_COMMAND
    {NULL, NULL, NULL},
};

static void vkp__usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe <command> [options]\n"
          "\n"
          "Partition an ML graph across CPU and GPU targets and run it as a "
          "pipeline.\n"
          "\n"
          "commands:\n");
  for (const vkp__command_t *c = vkp__commands; c->name; ++c)
    fprintf(out, "  %-11s %s\n", c->name, c->summary);
  fprintf(out, "\nRun 'vkpipe <command> --help' for a command's options.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    vkp__usage(stderr);
    return VKP_TOOL_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    vkp__usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("vkpipe %s\n", VKP_TOOL_VERSION);
    return 0;
  }
  for (const vkp__command_t *c = vkp__commands; c->name; ++c)
    if (strcmp(argv[1], c->name) == 0) return c->main(argc - 1, argv + 1);
  fprintf(stderr, "vkpipe: unknown command '%s' (try 'vkpipe --help')\n",
          argv[1]);
  return VKP_TOOL_EXIT_USAGE;
}
