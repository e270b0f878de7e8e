// SPDX-License-Identifier: Apache-2.0
// --dim and --shape: sizes for the symbolic dimensions of a model's inputs,
// and --no-fuse, for every command that loads a model.
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/npy.h"

int vkp_tool_load_option(const char *command, int argc, char **argv, int *i,
                         vkp_tool_load_args_t *args, bool *matched) {
  const char *value = NULL;
  *matched = false;
  if (strcmp(argv[*i], "--no-fuse") == 0) {
    *matched = true;
    args->no_fusion = true;
    return 0;
  }
  bool is_dim = true, up_to = false;
  vkp_tool_option_result_t r = vkp_tool_option(argc, argv, i, "--dim", &value);
  if (r == VKP_TOOL_OPTION_NO_MATCH) {
    r = vkp_tool_option(argc, argv, i, "--max-dim", &value);
    up_to = r != VKP_TOOL_OPTION_NO_MATCH;
  }
  if (r == VKP_TOOL_OPTION_NO_MATCH) {
    is_dim = false;
    r = vkp_tool_option(argc, argv, i, "--shape", &value);
  }
  if (r == VKP_TOOL_OPTION_NO_MATCH) return 0;
  *matched = true;
  const char *flag = up_to ? "--max-dim" : is_dim ? "--dim" : "--shape";
  if (r == VKP_TOOL_OPTION_MISSING_VALUE)
    return vkp_tool_usage_error(command, "%s needs a value (%s)", flag,
                                is_dim ? "NAME=SIZE" : "INPUT=DIMxDIMx...");
  char *eq = strchr((char *)value, '=');
  if (!eq || eq == value)
    return vkp_tool_usage_error(command, "%s expects %s, got '%s'", flag,
                                is_dim ? "NAME=SIZE" : "INPUT=DIMxDIMx...", value);
  if (args->n_dims >= VKP_TOOL_MAX_BINDINGS || args->n_shapes >= VKP_TOOL_MAX_BINDINGS)
    return vkp_tool_usage_error(command, "more than %d %s options",
                                VKP_TOOL_MAX_BINDINGS, flag);
  // The C standard lets a program modify its argv strings: the name ends
  // where the '=' was, and stays borrowed from argv like every other value.
  *eq = '\0';
  const char *name = value;
  if (is_dim) {
    int64_t size;
    if (!vkp_tool_parse_int(eq + 1, 0, INT64_MAX / 2, &size))
      return vkp_tool_usage_error(command, "--dim %s: '%s' is not a size", name,
                                  eq + 1);
    for (int32_t k = 0; k < args->n_dims; ++k)
      if (strcmp(args->dims[k].name, name) == 0)
        return vkp_tool_usage_error(command, "%s %s: dimension '%s' is given a "
                                    "size twice",
                                    flag, name, name);
    args->dims[args->n_dims++] =
        (vkp_dim_binding_t){.name = name, .value = size, .up_to = up_to};
    return 0;
  }
  vkp_shape_binding_t *s = &args->shapes[args->n_shapes];
  memset(s, 0, sizeof *s);
  s->input = name;
  // "1x3x224x224" (or with commas); "" is a scalar.
  const char *p = eq + 1;
  while (*p) {
    char dim[32];
    size_t n = strcspn(p, "x,");
    if (n == 0 || n >= sizeof dim || s->rank >= VKP_MAX_RANK)
      return vkp_tool_usage_error(command, "--shape %s: '%s' is not a shape "
                                  "like 1x3x224x224 (at most %d dims)",
                                  name, eq + 1, VKP_MAX_RANK);
    memcpy(dim, p, n);
    dim[n] = '\0';
    if (!vkp_tool_parse_int(dim, 0, INT64_MAX / 2, &s->shape[s->rank]))
      return vkp_tool_usage_error(command, "--shape %s: '%s' is not a size",
                                  name, dim);
    s->rank++;
    p += n;
    if (*p && !p[1])
      return vkp_tool_usage_error(command, "--shape %s: '%s' ends in '%c'", name,
                                  eq + 1, *p);
    if (*p) ++p;
  }
  args->n_shapes++;
  return 0;
}

vkp_status_t vkp_tool_load_graph(const char *path,
                                 const vkp_tool_load_args_t *args,
                                 vkp_graph_t **out_graph) {
  vkp_graph_load_options_t opt = {.n_dims = args->n_dims,
                                  .dims = args->dims,
                                  .n_shapes = args->n_shapes,
                                  .shapes = args->shapes,
                                  .no_fusion = args->no_fusion};
  return vkp_graph_load_with_options(path, &opt, out_graph);
}

vkp_status_t vkp_tool_bind_input_files(int32_t n_inputs,
                                       const vkp_tool_input_arg_t *inputs,
                                       vkp_tool_load_args_t *args,
                                       int32_t *out_added) {
  int32_t added = 0;
  *out_added = 0;
  // With --max-dim the files' shapes are run-time extents, not sizes.
  for (int32_t k = 0; k < args->n_dims; ++k)
    if (args->dims[k].up_to) return NULL;
  for (int32_t a = 0; a < n_inputs && args->n_shapes < VKP_TOOL_MAX_BINDINGS; ++a) {
    if (!inputs[a].name) continue;
    bool given = false;
    for (int32_t s = 0; s < args->n_shapes && !given; ++s)
      given = strcmp(args->shapes[s].input, inputs[a].name) == 0;
    if (given) continue;
    vkp_tensor_t t = {0};
    vkp_status_t st = vkp_npy_read_file(inputs[a].path, &t);
    if (st) return vkp_status_annotate(st, "input '%s'", inputs[a].name);
    vkp_shape_binding_t *b = &args->shapes[args->n_shapes++];
    memset(b, 0, sizeof *b);
    b->input = inputs[a].name;
    b->rank = t.rank;
    for (int32_t d = 0; d < t.rank; ++d) b->shape[d] = t.shape[d];
    vkp_tensor_deinit(&t);
    *out_added = ++added;
  }
  return NULL;
}
