// SPDX-License-Identifier: Apache-2.0
#include "graph/bind.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"

#define VKP__BIND_ERR(...) vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

vkp_status_t vkp__binder_init(vkp__binder_t *b,
                              const vkp_graph_load_options_t *options) {
  memset(b, 0, sizeof *b);
  if (options) b->opt = *options;
  for (int32_t i = 0; i < b->opt.n_dims; ++i) {
    const vkp_dim_binding_t *d = &b->opt.dims[i];
    if (!d->name || !d->name[0])
      return VKP__BIND_ERR("dimension binding %d has no name", (int)i);
    if (d->value < 0)
      return VKP__BIND_ERR("dimension '%s' bound to %lld; sizes are >= 0",
                           d->name, (long long)d->value);
  }
  for (int32_t i = 0; i < b->opt.n_shapes; ++i) {
    const vkp_shape_binding_t *s = &b->opt.shapes[i];
    if (!s->input || !s->input[0])
      return VKP__BIND_ERR("shape binding %d names no input", (int)i);
    if (s->rank < 0 || s->rank > VKP_MAX_RANK)
      return VKP__BIND_ERR("shape for input '%s' has rank %d; 0 to %d", s->input,
                           (int)s->rank, VKP_MAX_RANK);
    for (int32_t d = 0; d < s->rank; ++d)
      if (s->shape[d] < 0)
        return VKP__BIND_ERR("shape for input '%s': dimension %d is %lld; "
                             "sizes are >= 0",
                             s->input, (int)d, (long long)s->shape[d]);
  }
  b->dim_used = vkp__calloc((size_t)b->opt.n_dims + 1, sizeof(bool));
  b->shape_used = vkp__calloc((size_t)b->opt.n_shapes + 1, sizeof(bool));
  if (!b->dim_used || !b->shape_used) return VKP_OOM("load options");
  return NULL;
}

void vkp__binder_deinit(vkp__binder_t *b) {
  vkp__free(b->dim_used);
  vkp__free(b->shape_used);
  vkp__free(b->names);
  vkp__free(b->inputs);
  memset(b, 0, sizeof *b);
}

// Appends `name` to a ", "-separated list (for messages) unless it is
// there already.
static vkp_status_t vkp__note(char **list, const char *name) {
  // (An empty name matched everywhere and walked strstr past the end; the
  // graph's own checks name an empty input.)
  if (!name[0]) return NULL;
  if (*list) {
    for (const char *p = strstr(*list, name); p; p = strstr(p + 1, name)) {
      size_t n = strlen(name);
      bool start = p == *list || (p >= *list + 2 && p[-2] == ',');
      if (start && (p[n] == '\0' || p[n] == ',')) return NULL;
    }
  }
  char *grown = *list ? vkp__asprintf("%s, %s", *list, name) : vkp__strdup(name);
  if (!grown) return VKP_OOM("input names");
  vkp__free(*list);
  *list = grown;
  return NULL;
}

// "Nx3x224x224" with symbolic dims as their name or "N".
static void vkp__format_example(int32_t rank, const int64_t *declared,
                                char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int32_t d = 0; d < rank && used < size; ++d) {
    int w = declared[d] >= 0
                ? snprintf(buf + used, size - used, "%s%lld", d ? "x" : "",
                           (long long)declared[d])
                : snprintf(buf + used, size - used, "%sN", d ? "x" : "");
    if (w < 0) break;
    used += (size_t)w;
  }
}

vkp_status_t vkp__binder_shape(vkp__binder_t *b, const char *input,
                               int32_t rank, const int64_t *declared,
                               const char *const *names, int64_t *out_shape,
                               int32_t *out_bounded_axis) {
  *out_bounded_axis = -1;
  VKP_RETURN_IF_ERROR(vkp__note(&b->inputs, input));
  for (int32_t d = 0; d < rank; ++d)
    if (declared[d] < 0 && names && names[d] && names[d][0])
      VKP_RETURN_IF_ERROR(vkp__note(&b->names, names[d]));
  const vkp_shape_binding_t *whole = NULL;
  for (int32_t i = 0; i < b->opt.n_shapes; ++i) {
    if (strcmp(b->opt.shapes[i].input, input) != 0) continue;
    whole = &b->opt.shapes[i];
    b->shape_used[i] = true;
  }
  if (whole) {
    if (whole->rank != rank)
      return VKP__BIND_ERR("its rank is %d; the shape given for it has rank %d",
                           (int)rank, (int)whole->rank);
    for (int32_t d = 0; d < rank; ++d) {
      if (declared[d] >= 0 && declared[d] != whole->shape[d])
        return VKP__BIND_ERR("dimension %d is %lld in the model; the shape "
                             "given for it says %lld",
                             (int)d, (long long)declared[d],
                             (long long)whole->shape[d]);
      out_shape[d] = whole->shape[d];
    }
  }
  for (int32_t d = 0; d < rank; ++d) {
    const char *name = names && names[d] && names[d][0] ? names[d] : NULL;
    if (declared[d] >= 0) {
      if (!whole) out_shape[d] = declared[d];
      continue;
    }
    int64_t bound = -1;
    bool up_to = false;
    for (int32_t i = 0; name && i < b->opt.n_dims; ++i) {
      if (strcmp(b->opt.dims[i].name, name) != 0) continue;
      b->dim_used[i] = true;
      bound = b->opt.dims[i].value;
      up_to = b->opt.dims[i].up_to;
    }
    if (up_to && bound >= 0) {
      if (*out_bounded_axis >= 0)
        return VKP__BIND_ERR("dimensions %d and %d both vary at run time "
                             "('%s' is bound with up_to); an input varies "
                             "along one axis at most",
                             (int)*out_bounded_axis, (int)d, name);
      *out_bounded_axis = d;
    }
    if (whole) {
      if (bound >= 0 && bound != whole->shape[d])
        return VKP__BIND_ERR("dimension %d ('%s') is bound to %lld, but the "
                             "shape given for the input says %lld",
                             (int)d, name, (long long)bound,
                             (long long)whole->shape[d]);
      continue;
    }
    if (bound >= 0) {
      out_shape[d] = bound;
      continue;
    }
    char example[160];
    vkp__format_example(rank, declared, example, sizeof example);
    if (name)
      return vkp_status_make(
          VKP_STATUS_INVALID_ARGUMENT,
          "dimension %d is symbolic ('%s'); vkpipe compiles static shapes, "
          "so give it a size: --dim %s=N, or the whole shape: --shape %s=%s "
          "(C API: vkp_graph_load_options_t)",
          (int)d, name, name, input, example);
    return vkp_status_make(
        VKP_STATUS_INVALID_ARGUMENT,
        "dimension %d has no size and no name; give the whole shape: "
        "--shape %s=%s (C API: vkp_graph_load_options_t)",
        (int)d, input, example);
  }
  return NULL;
}

void vkp__binder_skip_input(vkp__binder_t *b, const char *input) {
  for (int32_t i = 0; i < b->opt.n_shapes; ++i)
    if (strcmp(b->opt.shapes[i].input, input) == 0) b->shape_used[i] = true;
}

vkp_status_t vkp__binder_finish(const vkp__binder_t *b) {
  for (int32_t i = 0; i < b->opt.n_dims; ++i)
    if (!b->dim_used[i])
      return VKP__BIND_ERR("dimension '%s' was given a size, but no graph "
                           "input has a symbolic dimension of that name (%s%s)",
                           b->opt.dims[i].name,
                           b->names ? "they have: " : "the model has none",
                           b->names ? b->names : "");
  for (int32_t i = 0; i < b->opt.n_shapes; ++i)
    if (!b->shape_used[i])
      return VKP__BIND_ERR("a shape was given for '%s', which is not a graph "
                           "input (inputs: %s)",
                           b->opt.shapes[i].input, b->inputs ? b->inputs : "none");
  return NULL;
}
