// SPDX-License-Identifier: Apache-2.0
// Graph construction, lookup, copying, liveness and subgraph extraction.
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "graph/graph_internal.h"

static const char *const vkp__attr_kind_names[] = {
#define VKP__ATTR_KIND_NAME(e, s) s,
    VKP_ATTR_KIND_LIST(VKP__ATTR_KIND_NAME)
#undef VKP__ATTR_KIND_NAME
};
_Static_assert(sizeof(vkp__attr_kind_names) / sizeof(vkp__attr_kind_names[0]) ==
                   VKP_ATTR_KIND_COUNT,
               "attribute kind table out of sync");

const char *vkp_attr_kind_name(vkp_attr_kind_t kind) {
  return (unsigned)kind < VKP_ATTR_KIND_COUNT ? vkp__attr_kind_names[kind]
                                              : "unknown";
}

// ---------------------------------------------------------------------------
// Attributes

void vkp__attr_deinit(vkp_attr_t *attr) {
  vkp__free((void *)attr->name);
  vkp__free((void *)attr->s);
  vkp__free((void *)attr->ints);
  vkp__free((void *)attr->floats);
  memset(attr, 0, sizeof(*attr));
}

vkp_status_t vkp__attr_copy(vkp_attr_t *dst, const vkp_attr_t *src) {
  memset(dst, 0, sizeof(*dst));
  if (!src->name || !src->name[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "attribute without a name");
  if ((unsigned)src->kind >= VKP_ATTR_KIND_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "attribute '%s' has unknown kind %d", src->name,
                           (int)src->kind);
  if (src->count < 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "attribute '%s' has negative count", src->name);
  dst->kind = src->kind;
  dst->i = src->i;
  dst->f = src->f;
  dst->name = vkp__strdup(src->name);
  if (!dst->name) return VKP_OOM("attribute name");
  if (src->kind == VKP_ATTR_STRING) {
    dst->s = vkp__strdup(src->s ? src->s : "");
    if (!dst->s) goto oom;
  } else if (src->kind == VKP_ATTR_INTS) {
    dst->count = src->count;
    int64_t *ints = vkp__calloc((size_t)src->count + 1, sizeof(int64_t));
    if (!ints) goto oom;
    if (src->count) memcpy(ints, src->ints, (size_t)src->count * sizeof(int64_t));
    dst->ints = ints;
  } else if (src->kind == VKP_ATTR_FLOATS) {
    dst->count = src->count;
    double *floats = vkp__calloc((size_t)src->count + 1, sizeof(double));
    if (!floats) goto oom;
    if (src->count)
      memcpy(floats, src->floats, (size_t)src->count * sizeof(double));
    dst->floats = floats;
  }
  return NULL;
oom:
  vkp__attr_deinit(dst);
  return VKP_OOM("attribute");
}

vkp_status_t vkp__node_set_attr(vkp_node_t *node, const vkp_attr_t *attr) {
  vkp_attr_t copy;
  VKP_RETURN_IF_ERROR(vkp__attr_copy(&copy, attr));
  for (int32_t i = 0; i < node->n_attrs; ++i) {
    if (strcmp(node->attrs[i].name, attr->name) == 0) {
      vkp__attr_deinit(&node->attrs[i]);
      node->attrs[i] = copy;
      return NULL;
    }
  }
  vkp_attr_t *attrs = vkp__reallocarray(node->attrs, (size_t)node->n_attrs + 1,
                                        sizeof(*attrs));
  if (!attrs) {
    vkp__attr_deinit(&copy);
    return VKP_OOM("attribute list");
  }
  node->attrs = attrs;
  node->attrs[node->n_attrs++] = copy;
  return NULL;
}

const vkp_attr_t *vkp_node_attr(const vkp_node_t *node, const char *name) {
  for (int32_t i = 0; i < node->n_attrs; ++i)
    if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
  return NULL;
}

int64_t vkp_node_attr_int(const vkp_node_t *node, const char *name,
                          int64_t fallback) {
  const vkp_attr_t *a = vkp_node_attr(node, name);
  return a && a->kind == VKP_ATTR_INT ? a->i : fallback;
}

double vkp_node_attr_float(const vkp_node_t *node, const char *name,
                           double fallback) {
  const vkp_attr_t *a = vkp_node_attr(node, name);
  if (!a) return fallback;
  if (a->kind == VKP_ATTR_FLOAT) return a->f;
  if (a->kind == VKP_ATTR_INT) return (double)a->i;
  return fallback;
}

const char *vkp_node_attr_string(const vkp_node_t *node, const char *name,
                                 const char *fallback) {
  const vkp_attr_t *a = vkp_node_attr(node, name);
  return a && a->kind == VKP_ATTR_STRING ? a->s : fallback;
}

int64_t vkp_node_int(const vkp_node_t *node, const char *name) {
  return vkp_node_attr_int(node, name, 0);
}

double vkp_node_float(const vkp_node_t *node, const char *name) {
  return vkp_node_attr_float(node, name, 0.0);
}

const char *vkp_node_string(const vkp_node_t *node, const char *name) {
  return vkp_node_attr_string(node, name, NULL);
}

int32_t vkp_node_attr_ints(const vkp_node_t *node, const char *name,
                           const int64_t **out_ints) {
  const vkp_attr_t *a = vkp_node_attr(node, name);
  if (!a || a->kind != VKP_ATTR_INTS) {
    *out_ints = NULL;
    return 0;
  }
  *out_ints = a->ints;
  return a->count;
}

// ---------------------------------------------------------------------------
// Create and destroy

vkp_status_t vkp_graph_create(const char *name, vkp_graph_t **out_graph) {
  return vkp_graph_create_with_allocator(name, NULL, out_graph);
}

vkp_status_t vkp_graph_create_with_allocator(const char *name,
                                             const vkp_allocator_t *allocator,
                                             vkp_graph_t **out_graph) {
  *out_graph = NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "graph"));
  const vkp_allocator_t chosen = vkp__allocator_resolve(allocator);
  VKP__ALLOCATOR_SCOPE(&chosen);
  vkp_graph_t *g = vkp__calloc(1, sizeof(*g));
  if (!g) return VKP_OOM("graph");
  g->internal = vkp__calloc(1, sizeof(*g->internal));
  g->name = vkp__strdup(name ? name : "graph");
  if (!g->internal || !g->name) {
    vkp__free(g->internal);
    vkp__free(g->name);
    vkp__free(g);
    return VKP_OOM("graph");
  }
  vkp_strmap_init(&g->internal->value_index);
  vkp_strmap_init(&g->internal->node_index);
  g->internal->allocator = chosen;
  *out_graph = g;
  return NULL;
}

static void vkp__node_deinit(vkp_node_t *node) {
  vkp__free(node->name);
  vkp__free(node->inputs);
  vkp__free(node->outputs);
  for (int32_t i = 0; i < node->n_attrs; ++i) vkp__attr_deinit(&node->attrs[i]);
  vkp__free(node->attrs);
  vkp__free(node->target);
  memset(node, 0, sizeof(*node));
}

void vkp_graph_destroy(vkp_graph_t *graph) {
  if (!graph) return;
  for (int32_t i = 0; i < graph->n_values; ++i) {
    vkp__free(graph->values[i].name);
    vkp__free(graph->values[i].data);
  }
  vkp__free(graph->values);
  for (int32_t i = 0; i < graph->n_nodes; ++i) vkp__node_deinit(&graph->nodes[i]);
  vkp__free(graph->nodes);
  vkp__free(graph->inputs);
  vkp__free(graph->outputs);
  if (graph->internal) {
    vkp_strmap_deinit(&graph->internal->value_index);
    vkp_strmap_deinit(&graph->internal->node_index);
    vkp__free(graph->internal);
  }
  vkp__free(graph->name);
  vkp__free(graph);
}

// ---------------------------------------------------------------------------
// Building

static vkp_status_t vkp__check_name(const char *what, const char *name) {
  if (!name || !name[0])
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "%s has an empty name",
                           what);
  return NULL;
}

// Appends a fresh value named `name`; *out_index receives its index.
static vkp_status_t vkp__graph_new_value(vkp_graph_t *g, const char *name,
                                         int32_t *out_index) {
  struct vkp__graph_internal_t *in = g->internal;
  if (g->n_values == in->cap_values) {
    int32_t cap = in->cap_values ? in->cap_values * 2 : 16;
    vkp_value_t *values = vkp__reallocarray(g->values, (size_t)cap,
                                            sizeof(*values));
    if (!values) return VKP_OOM("value table");
    g->values = values;
    in->cap_values = cap;
  }
  vkp_value_t *v = &g->values[g->n_values];
  memset(v, 0, sizeof(*v));
  v->name = vkp__strdup(name);
  if (!v->name) return VKP_OOM("value name");
  v->producer = -1;
  v->kind = VKP_VALUE_INTERMEDIATE;
  vkp_status_t st = vkp_strmap_put(&in->value_index, v->name, g->n_values);
  if (st) {
    vkp__free(v->name);
    return st;
  }
  *out_index = g->n_values++;
  g->validated = false;
  return NULL;
}

// A value referenced before being defined: kind INTERMEDIATE, no producer.
static bool vkp__value_is_placeholder(const vkp_value_t *v) {
  return v->kind == VKP_VALUE_INTERMEDIATE && v->producer < 0;
}

static vkp_status_t vkp__graph_define_value(vkp_graph_t *g, const char *what,
                                            const char *name,
                                            vkp_value_kind_t kind,
                                            vkp_dtype_t dtype, int32_t rank,
                                            const int64_t *shape,
                                            size_t *out_bytes,
                                            int32_t *out_index) {
  VKP_RETURN_IF_ERROR(vkp__check_name(what, name));
  if ((unsigned)dtype >= VKP_DTYPE_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "%s '%s': unknown dtype %d", what, name, (int)dtype);
  if (rank < 0 || rank > VKP_MAX_RANK)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "%s '%s': rank %d outside 0..%d", what, name,
                           (int)rank, VKP_MAX_RANK);
  if (!vkp_shape_numel(rank, shape, vkp_dtype_size(dtype), out_bytes)) {
    char buf[160];
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "%s '%s': shape %s has a negative dim or its size "
                           "overflows",
                           what, name, vkp_shape_format(rank, shape, buf, sizeof buf));
  }
  int32_t idx = vkp_strmap_get(&g->internal->value_index, name);
  if (idx >= 0 && !vkp__value_is_placeholder(&g->values[idx]))
    return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                           "%s '%s': a tensor with that name already exists",
                           what, name);
  if (idx < 0) VKP_RETURN_IF_ERROR(vkp__graph_new_value(g, name, &idx));
  vkp_value_t *v = &g->values[idx];
  v->kind = kind;
  v->dtype = dtype;
  v->rank = rank;
  for (int32_t i = 0; i < VKP_MAX_RANK; ++i) v->shape[i] = i < rank ? shape[i] : 0;
  v->shape_known = true;
  *out_index = idx;
  g->validated = false;
  return NULL;
}

vkp_status_t vkp_graph_add_input(vkp_graph_t *graph, const char *name,
                                 vkp_dtype_t dtype, int32_t rank,
                                 const int64_t *shape, int32_t *out_value) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  int32_t *inputs = vkp__reallocarray(graph->inputs, (size_t)graph->n_inputs + 1,
                                      sizeof(*inputs));
  if (!inputs) return VKP_OOM("graph input list");
  graph->inputs = inputs;
  size_t bytes = 0;
  int32_t idx = -1;
  VKP_RETURN_IF_ERROR(vkp__graph_define_value(graph, "input", name,
                                              VKP_VALUE_INPUT, dtype, rank,
                                              shape, &bytes, &idx));
  graph->inputs[graph->n_inputs++] = idx;
  if (out_value) *out_value = idx;
  return NULL;
}

vkp_status_t vkp_graph_add_constant(vkp_graph_t *graph, const char *name,
                                    vkp_dtype_t dtype, int32_t rank,
                                    const int64_t *shape, const void *data,
                                    int32_t *out_value) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  size_t bytes = 0;
  int32_t idx = -1;
  if (!data)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "constant '%s': data is NULL", name ? name : "");
  // Validate the name and shape before allocating the copy.
  VKP_RETURN_IF_ERROR(vkp__check_name("constant", name));
  if ((unsigned)dtype >= VKP_DTYPE_COUNT ||
      !vkp_shape_numel(rank < 0 || rank > VKP_MAX_RANK ? 0 : rank, shape,
                       vkp_dtype_size(dtype), &bytes))
    bytes = 0;
  void *copy = vkp__malloc(bytes ? bytes : 1);
  if (!copy) return VKP_OOM("constant data");
  vkp_status_t st = vkp__graph_define_value(graph, "constant", name,
                                            VKP_VALUE_CONSTANT, dtype, rank,
                                            shape, &bytes, &idx);
  if (st) {
    vkp__free(copy);
    return st;
  }
  if (bytes) memcpy(copy, data, bytes);
  graph->values[idx].data = copy;
  graph->values[idx].nbytes = bytes;
  if (out_value) *out_value = idx;
  return NULL;
}

vkp_status_t vkp_graph_add_node(vkp_graph_t *graph, const char *name,
                                vkp_op_t op, int32_t n_inputs,
                                const char *const *inputs, int32_t n_outputs,
                                const char *const *outputs, int32_t n_attrs,
                                const vkp_attr_t *attrs, int32_t *out_node) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  struct vkp__graph_internal_t *in = graph->internal;
  VKP_RETURN_IF_ERROR(vkp__check_name("node", name));
  if ((unsigned)op >= VKP_OP_COUNT)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "node '%s': unknown op %d", name, (int)op);
  if (vkp_strmap_get(&in->node_index, name) >= 0)
    return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                           "node '%s': a node with that name already exists",
                           name);
  if (n_inputs < 0 || n_outputs < 1 || n_attrs < 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "node '%s' (%s): needs at least one output and "
                           "non-negative counts",
                           name, vkp_op_name(op));
  for (int32_t i = 0; i < n_outputs; ++i) {
    const char *o = outputs[i];
    if (!o || !o[0])
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "node '%s' (%s): output %d has an empty name",
                             name, vkp_op_name(op), (int)i);
    int32_t idx = vkp_strmap_get(&in->value_index, o);
    if (idx >= 0 && !vkp__value_is_placeholder(&graph->values[idx])) {
      const vkp_value_t *v = &graph->values[idx];
      return vkp_status_make(
          VKP_STATUS_ALREADY_EXISTS,
          "node '%s' (%s): output '%s' is already %s", name, vkp_op_name(op), o,
          v->kind == VKP_VALUE_INPUT      ? "a graph input"
          : v->kind == VKP_VALUE_CONSTANT ? "a constant"
                                          : "produced by another node");
    }
    for (int32_t j = 0; j < i; ++j)
      if (strcmp(outputs[j], o) == 0)
        return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                               "node '%s' (%s): output '%s' listed twice", name,
                               vkp_op_name(op), o);
  }
  if (graph->n_nodes == in->cap_nodes) {
    int32_t cap = in->cap_nodes ? in->cap_nodes * 2 : 16;
    vkp_node_t *nodes = vkp__reallocarray(graph->nodes, (size_t)cap,
                                          sizeof(*nodes));
    if (!nodes) return VKP_OOM("node table");
    graph->nodes = nodes;
    in->cap_nodes = cap;
  }
  int32_t node_index = graph->n_nodes;
  vkp_node_t *node = &graph->nodes[node_index];
  memset(node, 0, sizeof(*node));
  vkp_status_t st = NULL;
  node->op = op;
  node->name = vkp__strdup(name);
  node->inputs = vkp__calloc((size_t)n_inputs + 1, sizeof(int32_t));
  node->outputs = vkp__calloc((size_t)n_outputs, sizeof(int32_t));
  node->attrs = vkp__calloc((size_t)n_attrs + 1, sizeof(vkp_attr_t));
  if (!node->name || !node->inputs || !node->outputs || !node->attrs) {
    st = VKP_OOM("node");
    goto fail;
  }
  for (int32_t i = 0; i < n_attrs; ++i) {
    for (int32_t j = 0; j < i; ++j)
      if (attrs[j].name && attrs[i].name &&
          strcmp(attrs[j].name, attrs[i].name) == 0) {
        st = vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                             "node '%s' (%s): attribute '%s' given twice", name,
                             vkp_op_name(op), attrs[i].name);
        goto fail;
      }
    st = vkp__attr_copy(&node->attrs[i], &attrs[i]);
    if (st) goto fail;
    node->n_attrs = i + 1;
  }
  // Inputs: resolve or create placeholders. Placeholders created here stay in
  // the value table even if a later step fails; validate reports them.
  for (int32_t i = 0; i < n_inputs; ++i) {
    const char *nm = inputs ? inputs[i] : NULL;
    if (!nm || !nm[0]) {
      node->inputs[i] = -1;
      continue;
    }
    int32_t idx = vkp_strmap_get(&in->value_index, nm);
    if (idx < 0) {
      st = vkp__graph_new_value(graph, nm, &idx);
      if (st) goto fail;
    }
    node->inputs[i] = idx;
  }
  node->n_inputs = n_inputs;
  for (int32_t i = 0; i < n_outputs; ++i) {
    int32_t idx = vkp_strmap_get(&in->value_index, outputs[i]);
    if (idx < 0) {
      st = vkp__graph_new_value(graph, outputs[i], &idx);
      if (st) goto fail;
    }
    node->outputs[i] = idx;
    node->n_outputs = i + 1;
  }
  st = vkp_strmap_put(&in->node_index, node->name, node_index);
  if (st) goto fail;
  for (int32_t i = 0; i < n_outputs; ++i) {
    graph->values[node->outputs[i]].producer = node_index;
    graph->values[node->outputs[i]].shape_known = false;
  }
  graph->n_nodes++;
  graph->validated = false;
  if (out_node) *out_node = node_index;
  return NULL;
fail:
  vkp__node_deinit(node);
  return vkp_status_annotate(st, "adding node '%s'", name);
}

vkp_status_t vkp_graph_set_node_target(vkp_graph_t *graph, int32_t node,
                                       const char *target) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  if (node < 0 || node >= graph->n_nodes)
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "node index %d", (int)node);
  char *copy = NULL;
  if (target) {
    copy = vkp__strdup(target);
    if (!copy) return VKP_OOM("node target");
  }
  vkp__free(graph->nodes[node].target);
  graph->nodes[node].target = copy;
  return NULL;
}

vkp_status_t vkp_graph_mark_output(vkp_graph_t *graph, const char *name) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  int32_t idx = vkp_graph_find_value(graph, name);
  if (idx < 0)
    return vkp_status_make(VKP_STATUS_NOT_FOUND,
                           "graph output '%s' is not a known tensor",
                           name ? name : "");
  if (graph->values[idx].is_output)
    return vkp_status_make(VKP_STATUS_ALREADY_EXISTS,
                           "graph output '%s' listed twice", name);
  int32_t *outputs = vkp__reallocarray(graph->outputs,
                                       (size_t)graph->n_outputs + 1,
                                       sizeof(*outputs));
  if (!outputs) return VKP_OOM("graph output list");
  graph->outputs = outputs;
  graph->outputs[graph->n_outputs++] = idx;
  graph->values[idx].is_output = true;
  graph->validated = false;
  return NULL;
}

vkp_status_t vkp_graph_set_input_bounded(vkp_graph_t *graph, const char *name,
                                         int32_t axis) {
  VKP__ALLOCATOR_SCOPE(vkp__graph_allocator(graph));
  int32_t idx = vkp_graph_find_value(graph, name);
  if (idx < 0 || graph->values[idx].kind != VKP_VALUE_INPUT)
    return vkp_status_make(VKP_STATUS_NOT_FOUND, "'%s' is not a graph input",
                           name ? name : "");
  vkp_value_t *v = &graph->values[idx];
  if (axis < 0 || axis >= v->rank)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "input '%s': bounded axis %d outside 0..%d", name,
                           (int)axis, (int)v->rank - 1);
  v->bounded = true;
  v->bounded_axis = axis;
  graph->validated = false;
  return NULL;
}

int32_t vkp_graph_find_value(const vkp_graph_t *graph, const char *name) {
  return vkp_strmap_get(&graph->internal->value_index, name);
}

int32_t vkp_graph_find_node(const vkp_graph_t *graph, const char *name) {
  return vkp_strmap_get(&graph->internal->node_index, name);
}

int32_t vkp_graph_find_input(const vkp_graph_t *graph, const char *name) {
  for (int32_t i = 0; i < graph->n_inputs; ++i)
    if (strcmp(graph->values[graph->inputs[i]].name, name) == 0) return i;
  return -1;
}

int32_t vkp_graph_find_output(const vkp_graph_t *graph, const char *name) {
  for (int32_t i = 0; i < graph->n_outputs; ++i)
    if (strcmp(graph->values[graph->outputs[i]].name, name) == 0) return i;
  return -1;
}

vkp_status_t vkp__graph_fold_last_node(vkp_graph_t *graph, void **data) {
  vkp_node_t *node = &graph->nodes[graph->n_nodes - 1];
  // Its name leaves the index before it is freed (rebuilding the index per
  // fold made importing an unrolled loop quadratic: a fuzzer's timeout).
  (void)vkp_strmap_remove(&graph->internal->node_index, node->name);
  for (int32_t i = 0; i < node->n_outputs; ++i) {
    vkp_value_t *v = &graph->values[node->outputs[i]];
    size_t bytes = 0;
    (void)vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes);
    v->kind = VKP_VALUE_CONSTANT;
    v->producer = -1;
    v->data = data[i];
    v->nbytes = bytes;
  }
  vkp__node_deinit(node);
  graph->n_nodes--;
  graph->validated = false;
  return NULL;
}

// Removes the values flagged in drop[] (nothing may refer to them any
// more) and renumbers every reference to the others.
static vkp_status_t vkp__graph_drop_values(vkp_graph_t *graph, const bool *drop) {
  int32_t n = graph->n_values;
  int32_t *renum = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  if (!renum) return VKP_OOM("value renumbering");
  int32_t k = 0;
  for (int32_t v = 0; v < n; ++v) {
    vkp_value_t *val = &graph->values[v];
    if (drop[v]) {
      vkp__free(val->name);
      vkp__free(val->data);
      renum[v] = -1;
      continue;
    }
    renum[v] = k;
    graph->values[k++] = *val;
  }
  graph->n_values = k;
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    vkp_node_t *node = &graph->nodes[i];
    for (int32_t j = 0; j < node->n_inputs; ++j)
      if (node->inputs[j] >= 0) node->inputs[j] = renum[node->inputs[j]];
    for (int32_t j = 0; j < node->n_outputs; ++j) node->outputs[j] = renum[node->outputs[j]];
  }
  for (int32_t i = 0; i < graph->n_inputs; ++i) graph->inputs[i] = renum[graph->inputs[i]];
  for (int32_t i = 0; i < graph->n_outputs; ++i) graph->outputs[i] = renum[graph->outputs[i]];
  graph->validated = false;
  vkp__free(renum);
  return vkp__graph_reindex_values(graph);
}

// drop[v] for every value no node reads and no graph output names
// (calloc'd, n_values + 1 entries, caller frees), or NULL.
static bool *vkp__unread_values(const vkp_graph_t *graph) {
  bool *unread = vkp__calloc((size_t)graph->n_values + 1, sizeof(bool));
  if (!unread) return NULL;
  for (int32_t v = 0; v < graph->n_values; ++v) unread[v] = true;
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    const vkp_node_t *node = &graph->nodes[i];
    for (int32_t j = 0; j < node->n_inputs; ++j)
      if (node->inputs[j] >= 0) unread[node->inputs[j]] = false;
  }
  for (int32_t i = 0; i < graph->n_outputs; ++i) unread[graph->outputs[i]] = false;
  return unread;
}

vkp_status_t vkp__graph_prune_constants(vkp_graph_t *graph) {
  bool *drop = vkp__unread_values(graph);
  if (!drop) return VKP_OOM("constant pruning");
  bool any = false;
  for (int32_t v = 0; v < graph->n_values; ++v) {
    drop[v] = drop[v] && graph->values[v].kind == VKP_VALUE_CONSTANT;
    any |= drop[v];
  }
  vkp_status_t st = any ? vkp__graph_drop_values(graph, drop) : NULL;
  vkp__free(drop);
  return st;
}

vkp_status_t vkp__graph_trim_outputs(vkp_graph_t *graph) {
  bool *unread = vkp__unread_values(graph);
  bool *drop = vkp__calloc((size_t)graph->n_values + 1, sizeof(bool));
  if (!unread || !drop) {
    vkp__free(unread);
    vkp__free(drop);
    return VKP_OOM("output trimming");
  }
  bool any = false;
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    vkp_node_t *node = &graph->nodes[i];
    int32_t imin, imax, omin, omax;
    vkp_op_arity(node->op, &imin, &imax, &omin, &omax);
    if (omax < 0) continue;
    while (node->n_outputs > omin && node->n_outputs > 1 &&
           unread[node->outputs[node->n_outputs - 1]]) {
      drop[node->outputs[--node->n_outputs]] = true;
      any = true;
    }
  }
  vkp_status_t st = any ? vkp__graph_drop_values(graph, drop) : NULL;
  vkp__free(unread);
  vkp__free(drop);
  return st;
}

vkp_status_t vkp__graph_reindex(vkp_graph_t *graph) {
  vkp_strmap_t *idx = &graph->internal->node_index;
  vkp_strmap_deinit(idx);
  vkp_strmap_init(idx);
  for (int32_t i = 0; i < graph->n_nodes; ++i)
    VKP_RETURN_IF_ERROR(vkp_strmap_put(idx, graph->nodes[i].name, i));
  return NULL;
}

vkp_status_t vkp__graph_reindex_values(vkp_graph_t *graph) {
  vkp_strmap_t *idx = &graph->internal->value_index;
  vkp_strmap_deinit(idx);
  vkp_strmap_init(idx);
  for (int32_t i = 0; i < graph->n_values; ++i)
    VKP_RETURN_IF_ERROR(vkp_strmap_put(idx, graph->values[i].name, i));
  return NULL;
}

size_t vkp_graph_constant_bytes(const vkp_graph_t *graph) {
  size_t total = 0;
  for (int32_t i = 0; i < graph->n_values; ++i)
    if (graph->values[i].kind == VKP_VALUE_CONSTANT)
      total += graph->values[i].nbytes;
  return total;
}

// ---------------------------------------------------------------------------
// Liveness

vkp_status_t vkp_graph_liveness(const vkp_graph_t *graph, int32_t *first_def,
                                int32_t *last_use) {
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "liveness needs a validated graph");
  for (int32_t v = 0; v < graph->n_values; ++v) {
    first_def[v] = -1;
    last_use[v] = -1;
  }
  for (int32_t n = 0; n < graph->n_nodes; ++n) {
    const vkp_node_t *node = &graph->nodes[n];
    for (int32_t i = 0; i < node->n_inputs; ++i)
      if (node->inputs[i] >= 0) last_use[node->inputs[i]] = n;
    for (int32_t i = 0; i < node->n_outputs; ++i) first_def[node->outputs[i]] = n;
  }
  for (int32_t i = 0; i < graph->n_outputs; ++i)
    last_use[graph->outputs[i]] = graph->n_nodes;
  return NULL;
}

// ---------------------------------------------------------------------------
// Copying

// Copies value `v` of `src` into `dst` as an input (when as_input) or as what
// it is (constants keep their data).
static vkp_status_t vkp__copy_value(vkp_graph_t *dst, const vkp_value_t *v,
                                    bool as_input) {
  if (v->kind == VKP_VALUE_CONSTANT && !as_input)
    return vkp_graph_add_constant(dst, v->name, v->dtype, v->rank, v->shape,
                                  v->data, NULL);
  VKP_RETURN_IF_ERROR(
      vkp_graph_add_input(dst, v->name, v->dtype, v->rank, v->shape, NULL));
  if (!v->bounded) return NULL;
  return vkp_graph_set_input_bounded(dst, v->name, v->bounded_axis);
}

static vkp_status_t vkp__copy_node(vkp_graph_t *dst, const vkp_graph_t *src,
                                   const vkp_node_t *node) {
  const char *in_names[64];
  const char *out_names[8];
  const char **ins = in_names;
  if (node->n_inputs > 64) {
    ins = vkp__calloc((size_t)node->n_inputs, sizeof(*ins));
    if (!ins) return VKP_OOM("node inputs");
  }
  if (node->n_outputs > 8) {
    if (ins != in_names) vkp__free(ins);
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "node '%s' has more than 8 outputs", node->name);
  }
  for (int32_t i = 0; i < node->n_inputs; ++i)
    ins[i] = node->inputs[i] >= 0 ? src->values[node->inputs[i]].name : NULL;
  for (int32_t i = 0; i < node->n_outputs; ++i)
    out_names[i] = src->values[node->outputs[i]].name;
  int32_t idx = -1;
  vkp_status_t st = vkp_graph_add_node(dst, node->name, node->op,
                                       node->n_inputs, ins, node->n_outputs,
                                       out_names, node->n_attrs, node->attrs,
                                       &idx);
  if (ins != in_names) vkp__free(ins);
  if (!st && node->target) st = vkp_graph_set_node_target(dst, idx, node->target);
  return st;
}

vkp_status_t vkp_graph_clone(const vkp_graph_t *graph, vkp_graph_t **out_graph) {
  vkp_graph_t *g = NULL;
  VKP_RETURN_IF_ERROR(vkp_graph_create(graph->name, &g));
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < graph->n_inputs && !st; ++i)
    st = vkp__copy_value(g, &graph->values[graph->inputs[i]], true);
  for (int32_t i = 0; i < graph->n_values && !st; ++i)
    if (graph->values[i].kind == VKP_VALUE_CONSTANT)
      st = vkp__copy_value(g, &graph->values[i], false);
  for (int32_t i = 0; i < graph->n_nodes && !st; ++i)
    st = vkp__copy_node(g, graph, &graph->nodes[i]);
  for (int32_t i = 0; i < graph->n_outputs && !st; ++i)
    st = vkp_graph_mark_output(g, graph->values[graph->outputs[i]].name);
  if (!st && graph->validated) st = vkp_graph_validate(g);
  if (st) {
    vkp_graph_destroy(g);
    return st;
  }
  *out_graph = g;
  return NULL;
}

vkp_status_t vkp_graph_extract(const vkp_graph_t *graph, int32_t n,
                               const int32_t *nodes, const char *name,
                               vkp_graph_t **out_graph) {
  *out_graph = NULL;
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "extracting a subgraph needs a validated graph");
  vkp_status_t st = NULL;
  vkp_graph_t *g = NULL;
  // in_set[node] marks membership; seen[value]: 1 = produced inside,
  // 2 = already added as input/constant.
  uint8_t *in_set = vkp__calloc((size_t)graph->n_nodes + 1, 1);
  uint8_t *seen = vkp__calloc((size_t)graph->n_values + 1, 1);
  int32_t *order = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  if (!in_set || !seen || !order) {
    st = VKP_OOM("subgraph bookkeeping");
    goto done;
  }
  for (int32_t i = 0; i < n; ++i) {
    if (nodes[i] < 0 || nodes[i] >= graph->n_nodes) {
      st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                           "subgraph node index %d outside 0..%d",
                           (int)nodes[i], (int)graph->n_nodes - 1);
      goto done;
    }
    if (in_set[nodes[i]]) {
      st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "subgraph lists node '%s' twice",
                           graph->nodes[nodes[i]].name);
      goto done;
    }
    in_set[nodes[i]] = 1;
  }
  // Keep the parent's topological order.
  int32_t k = 0;
  for (int32_t i = 0; i < graph->n_nodes; ++i)
    if (in_set[i]) order[k++] = i;
  for (int32_t i = 0; i < k; ++i) {
    const vkp_node_t *node = &graph->nodes[order[i]];
    for (int32_t j = 0; j < node->n_outputs; ++j) seen[node->outputs[j]] = 1;
  }
  st = vkp_graph_create(name ? name : graph->name, &g);
  if (st) goto done;
  for (int32_t i = 0; i < k && !st; ++i) {
    const vkp_node_t *node = &graph->nodes[order[i]];
    for (int32_t j = 0; j < node->n_inputs && !st; ++j) {
      int32_t v = node->inputs[j];
      if (v < 0 || seen[v]) continue;
      seen[v] = 2;
      const vkp_value_t *val = &graph->values[v];
      st = vkp__copy_value(g, val, val->kind != VKP_VALUE_CONSTANT);
    }
  }
  for (int32_t i = 0; i < k && !st; ++i)
    st = vkp__copy_node(g, graph, &graph->nodes[order[i]]);
  // Outputs: produced inside, and a graph output or read outside.
  for (int32_t i = 0; i < k && !st; ++i) {
    const vkp_node_t *node = &graph->nodes[order[i]];
    for (int32_t j = 0; j < node->n_outputs && !st; ++j) {
      int32_t v = node->outputs[j];
      bool escapes = graph->values[v].is_output;
      for (int32_t m = 0; m < graph->n_nodes && !escapes; ++m) {
        if (in_set[m]) continue;
        for (int32_t q = 0; q < graph->nodes[m].n_inputs; ++q)
          if (graph->nodes[m].inputs[q] == v) escapes = true;
      }
      if (escapes) st = vkp_graph_mark_output(g, graph->values[v].name);
    }
  }
  if (!st && g->n_outputs == 0)
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                         "subgraph '%s' has no outputs", g->name);
  if (!st) st = vkp_graph_validate(g);
done:
  vkp__free(in_set);
  vkp__free(seen);
  vkp__free(order);
  if (st) {
    vkp_graph_destroy(g);
    return vkp_status_annotate(st, "extracting subgraph '%s'",
                               name ? name : graph->name);
  }
  *out_graph = g;
  return NULL;
}
