// SPDX-License-Identifier: Apache-2.0
// `vkpipe keygen -o NAME`: an Ed25519 key pair for signing artifacts
// (NAME.key, secret, mode 0600; NAME.pub, to hand to whoever runs them).
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "tools/tool.h"
#include "vkpipe/artifact.h"

int vkp_cmd_keygen(int argc, char **argv);
extern const char vkp_cmd_keygen_summary[];
const char vkp_cmd_keygen_summary[] = "make a key pair for signing artifacts";

static void vkp__keygen_help(void) {
  printf("usage: vkpipe keygen -o NAME\n"
         "\n"
         "Writes an Ed25519 key pair: NAME.key (secret; created with mode 0600,\n"
         "never overwritten) and NAME.pub. Sign with 'vkpipe build --sign\n"
         "NAME.key'; run the signed artifact's compiled code as shipped with\n"
         "'vkpipe run --trust NAME.pub' (or the C API's trusted_keys).\n"
         "\n"
         "options:\n"
         "  -o, --output NAME   where the two files go (required)\n"
         "  -h, --help          this text\n");
}

int vkp_cmd_keygen(int argc, char **argv) {
  const char *name = NULL;
  for (int i = 1; i < argc; ++i) {
    const char *value = NULL;
    if (vkp_tool_is_help(argv[i])) {
      vkp__keygen_help();
      return 0;
    }
    vkp_tool_option_result_t r = vkp_tool_option(argc, argv, &i, "--output", &value);
    if (r == VKP_TOOL_OPTION_NO_MATCH) r = vkp_tool_option(argc, argv, &i, "-o", &value);
    if (r == VKP_TOOL_OPTION_MISSING_VALUE)
      return vkp_tool_usage_error("keygen", "%s needs a value", argv[i]);
    if (r == VKP_TOOL_OPTION_MATCHED) {
      name = value;
      continue;
    }
    return vkp_tool_usage_error("keygen", "unexpected argument '%s'", argv[i]);
  }
  if (!name || !name[0]) return vkp_tool_usage_error("keygen", "missing -o NAME");
  char *secret = vkp__asprintf("%s.key", name), *public = vkp__asprintf("%s.pub", name);
  vkp_status_t st = secret && public ? vkp_artifact_keys_generate(secret, public)
                                     : vkp_status_make(VKP_STATUS_OUT_OF_MEMORY,
                                                       "out of memory");
  if (!st) printf("wrote %s (secret) and %s (public)\n", secret, public);
  vkp__free(secret);
  vkp__free(public);
  return st ? vkp_tool_fail("keygen", st) : 0;
}
