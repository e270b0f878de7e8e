// SPDX-License-Identifier: Apache-2.0
// Option parsing and error reporting shared by the subcommands.
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool.h"

bool vkp_tool_is_help(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int vkp_tool_usage_error(const char *command, const char *fmt, ...) {
  // A subcommand of vkpipe, or a program of its own ("vkpipe-bench").
  const char *prefix = strncmp(command, "vkpipe", 6) == 0 ? "" : "vkpipe ";
  fprintf(stderr, "%s%s: ", prefix, command);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, " (try '%s%s --help')\n", prefix, command);
  return VKP_TOOL_EXIT_USAGE;
}

int vkp_tool_fail(const char *command, vkp_status_t status) {
  fprintf(stderr, "vkpipe %s: %s\n", command, vkp_status_message(status));
  vkp_status_free(status);
  return VKP_TOOL_EXIT_FAILURE;
}

vkp_tool_option_result_t vkp_tool_option(int argc, char **argv, int *i,
                                         const char *name,
                                         const char **out_value) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return VKP_TOOL_OPTION_NO_MATCH;
  if (arg[n] == '=') {
    *out_value = arg + n + 1;
    if (!**out_value) return VKP_TOOL_OPTION_MISSING_VALUE;
    return VKP_TOOL_OPTION_MATCHED;
  }
  if (arg[n] != '\0') return VKP_TOOL_OPTION_NO_MATCH;
  if (*i + 1 >= argc || !argv[*i + 1][0]) return VKP_TOOL_OPTION_MISSING_VALUE;
  *out_value = argv[++*i];
  return VKP_TOOL_OPTION_MATCHED;
}

bool vkp_tool_parse_replicas(const char *tool, const char *text, int32_t *out_value) {
  int64_t v;
  if (text && strcmp(text, "auto") == 0) {
    *out_value = VKP_PARTITION_REPLICAS_AUTO;
    return true;
  }
  if (!vkp_tool_parse_int(text, 1, VKP_PLAN_MAX_REPLICAS, &v)) {
    fprintf(stderr, "%s: --replicas wants 1..%d or 'auto', got '%s'\n", tool,
            VKP_PLAN_MAX_REPLICAS, text ? text : "");
    return false;
  }
  *out_value = (int32_t)v;
  return true;
}

bool vkp_tool_parse_int(const char *text, int64_t lo, int64_t hi,
                        int64_t *out_value) {
  if (!text || !text[0]) return false;
  errno = 0;
  char *end = NULL;
  long long v = strtoll(text, &end, 10);
  if (errno || *end || v < lo || v > hi) return false;
  *out_value = (int64_t)v;
  return true;
}
