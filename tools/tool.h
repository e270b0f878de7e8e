// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the command-line tools (tools/tool_*.c).
#ifndef VKPIPE_TOOLS_TOOL_H_
#define VKPIPE_TOOLS_TOOL_H_

#include "vkpipe/status.h"

#define VKP_TOOL_VERSION "0.1.0"

// Exit codes: 0 success, 1 the work failed, 2 bad usage.
#define VKP_TOOL_EXIT_FAILURE 1
#define VKP_TOOL_EXIT_USAGE 2

#endif  // VKPIPE_TOOLS_TOOL_H_
