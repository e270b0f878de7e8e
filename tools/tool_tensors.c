// SPDX-License-Identifier: Apache-2.0
// Tensors in and out of the command-line tools, as .npy files.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "base/file.h"
#include "tools/tool.h"
#include "vkpipe/npy.h"

void vkp_tool_input_arg_parse(const char *text, vkp_tool_input_arg_t *out) {
  const char *eq = strchr(text, '=');
  if (eq) {
    out->name = text;
    out->name_len = (size_t)(eq - text);
    out->path = eq + 1;
  } else {
    out->name = NULL;
    out->name_len = 0;
    out->path = text;
  }
}

// The value's shape; along a bounded axis (--max-dim) any extent up to the
// bound.
static bool vkp__same_shape(const vkp_tensor_t *t, const vkp_value_t *v) {
  if (t->rank != v->rank) return false;
  for (int32_t i = 0; i < t->rank; ++i) {
    if (v->bounded && i == v->bounded_axis ? t->shape[i] > v->shape[i]
                                           : t->shape[i] != v->shape[i])
      return false;
  }
  return true;
}


vkp_status_t vkp_tool_read_values(int32_t n_values,
                                  const vkp_value_t *const *values,
                                  int32_t n_args,
                                  const vkp_tool_input_arg_t *args,
                                  vkp_tensor_t *tensors) {
  for (int32_t i = 0; i < n_values; ++i)
    memset(&tensors[i], 0, sizeof(tensors[i]));
  // Match each argument to a graph input first, so that naming mistakes are
  // reported before any file is read.
  int32_t *slot = vkp__calloc((size_t)n_args + 1, sizeof(int32_t));
  if (!slot) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  vkp_status_t st = NULL;
  for (int32_t a = 0; a < n_args && !st; ++a) {
    slot[a] = -1;
    if (!args[a].name) {
      if (n_values != 1)
        st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "--input '%s' has no NAME= and the graph has %d "
                             "inputs; use --input NAME=FILE.npy",
                             args[a].path, (int)n_values);
      else
        slot[a] = 0;
      continue;
    }
    for (int32_t i = 0; i < n_values; ++i) {
      const char *name = values[i]->name;
      if (strlen(name) == args[a].name_len &&
          strncmp(name, args[a].name, args[a].name_len) == 0)
        slot[a] = i;
    }
    if (slot[a] < 0) {
      char known[512] = "";
      size_t used = 0;
      for (int32_t i = 0; i < n_values && used < sizeof known; ++i) {
        int w = snprintf(known + used, sizeof known - used, "%s'%s'",
                         i ? ", " : "", values[i]->name);
        if (w > 0) used += (size_t)w;
      }
      st = vkp_status_make(VKP_STATUS_NOT_FOUND,
                           "the graph has no input '%.*s' (its inputs: %s)",
                           (int)args[a].name_len, args[a].name,
                           n_values ? known : "none");
    }
    for (int32_t b = 0; b < a && !st; ++b)
      if (slot[b] == slot[a])
        st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "input '%s' is given twice",
                             values[slot[a]]->name);
  }
  for (int32_t i = 0; i < n_values && !st; ++i) {
    bool given = false;
    for (int32_t a = 0; a < n_args; ++a) given |= slot[a] == i;
    if (!given)
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "input '%s' is not given (--input %s=FILE.npy)",
                           values[i]->name,
                           values[i]->name);
  }
  for (int32_t a = 0; a < n_args && !st; ++a) {
    const vkp_value_t *v = values[slot[a]];
    vkp_tensor_t *t = &tensors[slot[a]];
    st = vkp_npy_read_file(args[a].path, t);
    if (st) {
      st = vkp_status_annotate(st, "input '%s'", v->name);
      break;
    }
    if (t->dtype != v->dtype || !vkp__same_shape(t, v)) {
      char want[160], got[160];
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "input '%s': '%s' holds %s %s; the graph expects %s %s",
                           v->name, args[a].path, vkp_dtype_name(t->dtype),
                           vkp_shape_format(t->rank, t->shape, got, sizeof got),
                           vkp_dtype_name(v->dtype),
                           vkp_tool_value_shape(v, want, sizeof want));
    }
  }
  vkp__free(slot);
  return st;
}

vkp_status_t vkp_tool_read_inputs(const vkp_graph_t *graph, int32_t n_args,
                                  const vkp_tool_input_arg_t *args,
                                  vkp_tensor_t *tensors) {
  const vkp_value_t **values =
      calloc((size_t)graph->n_inputs + 1, sizeof(*values));
  if (!values) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; i < graph->n_inputs; ++i)
    values[i] = &graph->values[graph->inputs[i]];
  vkp_status_t st = vkp_tool_read_values(graph->n_inputs, values, n_args, args,
                                         tensors);
  free(values);
  return st;
}

const char *vkp_tool_tensor_file_name(const char *name, char *buf, size_t size) {
  size_t n = 0;
  for (const char *p = name; *p && n + 5 < size; ++p) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    buf[n++] = ok ? c : '_';
  }
  // "." and ".." alone would name directories.
  if (n == 0 || (n == 1 && buf[0] == '.') || (n == 2 && buf[0] == '.' && buf[1] == '.'))
    for (size_t i = 0; i < n; ++i) buf[i] = '_';
  snprintf(buf + n, size - n, "%s%s", n ? "" : "_", ".npy");
  return buf;
}

vkp_status_t vkp_tool_make_dir(const char *dir) { return vkp__dir_create(dir, 0777); }

vkp_status_t vkp_tool_write_values(int32_t n_values,
                                   const vkp_value_t *const *values,
                                   const vkp_tensor_t *outputs, const char *dir,
                                   FILE *log) {
  for (int32_t i = 0; i < n_values; ++i) {
    char fi[512], fj[512];
    vkp_tool_tensor_file_name(values[i]->name, fi, sizeof fi);
    for (int32_t j = 0; j < i; ++j)
      if (strcmp(fi, vkp_tool_tensor_file_name(values[j]->name,
                                               fj, sizeof fj)) == 0)
        return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                               "outputs '%s' and '%s' would both be written to '%s'",
                               values[j]->name,
                               values[i]->name, fi);
  }
  vkp_status_t mk = vkp_tool_make_dir(dir);
  if (mk) return mk;
  for (int32_t i = 0; i < n_values; ++i) {
    const char *name = values[i]->name;
    char file[512], path[4096 + 512];
    vkp_tool_tensor_file_name(name, file, sizeof file);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    vkp_status_t st = vkp_npy_write_file(path, &outputs[i]);
    if (st) return vkp_status_annotate(st, "output '%s'", name);
    if (log) {
      char shape[160];
      fprintf(log, "%s: %s %s -> %s\n", name, vkp_dtype_name(outputs[i].dtype),
              vkp_shape_format(outputs[i].rank, outputs[i].shape, shape, sizeof shape),
              path);
    }
  }
  return NULL;
}

vkp_status_t vkp_tool_write_outputs(const vkp_graph_t *graph,
                                    const vkp_tensor_t *outputs,
                                    const char *dir, FILE *log) {
  const vkp_value_t **values =
      calloc((size_t)graph->n_outputs + 1, sizeof(*values));
  if (!values) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int32_t i = 0; i < graph->n_outputs; ++i)
    values[i] = &graph->values[graph->outputs[i]];
  vkp_status_t st = vkp_tool_write_values(graph->n_outputs, values, outputs,
                                          dir, log);
  free(values);
  return st;
}
