// SPDX-License-Identifier: Apache-2.0
// --trust KEY.pub / --trust-unsigned: how the commands that load a .vkp
// (run, serve, vkpipe-bench) decide whether its shipped native code may run.
#include <string.h>

#include "base/status_macros.h"
#include "tools/tool.h"
#include "vkpipe/artifact.h"

int vkp_tool_trust_option(const char *command, int argc, char **argv, int *i,
                          vkp_tool_trust_args_t *args, bool *matched) {
  *matched = false;
  if (strcmp(argv[*i], "--trust-unsigned") == 0) {
    args->unsigned_code = true;
    *matched = true;
    return 0;
  }
  const char *value = NULL;
  switch (vkp_tool_option(argc, argv, i, "--trust", &value)) {
    case VKP_TOOL_OPTION_NO_MATCH:
      return 0;
    case VKP_TOOL_OPTION_MISSING_VALUE:
      return vkp_tool_usage_error(command, "--trust needs a value (a public key "
                                           "file from 'vkpipe keygen')");
    case VKP_TOOL_OPTION_MATCHED:
      break;
  }
  *matched = true;
  if (args->n_keys == VKP_TOOL_MAX_TRUSTED_KEYS)
    return vkp_tool_usage_error(command, "at most %d --trust keys",
                                VKP_TOOL_MAX_TRUSTED_KEYS);
  args->key_paths[args->n_keys++] = value;
  return 0;
}

int vkp_tool_trust_check(const char *command, const vkp_tool_trust_args_t *args,
                         const char *model) {
  if (!args->n_keys && !args->unsigned_code) return 0;
  if (!model || !vkp_artifact_is_artifact(model))
    return vkp_tool_usage_error(command, "--trust and --trust-unsigned apply to .vkp "
                                         "artifacts; '%s' is not one",
                                model ? model : "(no model)");
  if (args->n_keys && args->unsigned_code)
    return vkp_tool_usage_error(command, "--trust and --trust-unsigned exclude each "
                                         "other (one asks for a signature, the other "
                                         "waives it)");
  return 0;
}

vkp_status_t vkp_tool_artifact_load(const char *path, const vkp_tool_trust_args_t *args,
                                    vkp_artifact_t **out_artifact) {
  *out_artifact = NULL;
  vkp_artifact_public_key_t keys[VKP_TOOL_MAX_TRUSTED_KEYS];
  for (int32_t k = 0; k < args->n_keys; ++k)
    VKP_RETURN_IF_ERROR(vkp_artifact_public_key_load(args->key_paths[k], &keys[k]));
  vkp_artifact_load_options_t options = {.trusted_keys = keys,
                                         .n_trusted_keys = args->n_keys,
                                         .trust_unsigned_code = args->unsigned_code};
  return vkp_artifact_load_with_options(path, &options, out_artifact);
}
