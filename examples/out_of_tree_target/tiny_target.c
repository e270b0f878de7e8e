// SPDX-License-Identifier: Apache-2.0
// The whole of an out-of-tree target: the compile part (supports, compile),
// the stage part (load, run, unload), no device part, and its declared
// capabilities. docs/targets.md walks through it.
#include "tiny_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The blob: this magic and the node count. The subgraph itself travels with
// the blob (vkpipe hands it to load again), so the code is the loop below.
#define TINY_MAGIC "TINY1"

typedef struct tiny_stage_t {
  vkp_stage_t base;           // first: vkpipe sees a vkp_stage_t
  const vkp_graph_t *graph;   // borrowed; outlives the stage
  float **buffers;            // per value: intermediates owned, the rest borrowed
} tiny_stage_t;

static bool tiny_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                          const vkp_node_t *node, char *reason, size_t reason_size) {
  (void)target;
  if (node->op != VKP_OP_RELU && node->op != VKP_OP_ADD) {
    snprintf(reason, reason_size, "tiny runs relu and add only, not %s",
             vkp_op_name(node->op));
    return false;
  }
  const vkp_value_t *y = &graph->values[node->outputs[0]];
  for (int32_t i = 0; i < node->n_inputs; ++i) {
    const vkp_value_t *x = &graph->values[node->inputs[i]];
    bool same = x->rank == y->rank;
    for (int32_t d = 0; same && d < x->rank; ++d) same = x->shape[d] == y->shape[d];
    if (!same) {
      snprintf(reason, reason_size, "tiny does not broadcast ('%s')", x->name);
      return false;
    }
  }
  // float32 only: the declared dtypes hold that for every tensor already.
  return true;
}

static vkp_status_t tiny_compile(const vkp_target_t *target, const vkp_graph_t *graph,
                                 const vkp_compile_options_t *options,
                                 vkp_blob_t *out_blob) {
  (void)target;
  (void)options;
  vkp_status_t st = vkp_blob_alloc(out_blob, sizeof TINY_MAGIC + sizeof(int32_t));
  if (st) return st;
  memcpy(out_blob->data, TINY_MAGIC, sizeof TINY_MAGIC);
  memcpy((char *)out_blob->data + sizeof TINY_MAGIC, &graph->n_nodes, sizeof(int32_t));
  return NULL;
}

static void tiny_unload(vkp_stage_t *stage) {
  tiny_stage_t *s = (tiny_stage_t *)stage;
  if (!s) return;
  for (int32_t v = 0; s->buffers && v < s->graph->n_values; ++v)
    if (s->graph->values[v].kind == VKP_VALUE_INTERMEDIATE && !s->graph->values[v].is_output)
      free(s->buffers[v]);
  free(s->buffers);
  free(s);
}

static vkp_status_t tiny_load(const vkp_target_t *target, const vkp_graph_t *graph,
                              const void *blob, size_t blob_size, vkp_stage_t **out_stage) {
  *out_stage = NULL;
  int32_t n_nodes = -1;
  if (blob_size == sizeof TINY_MAGIC + sizeof(int32_t) &&
      memcmp(blob, TINY_MAGIC, sizeof TINY_MAGIC) == 0)
    memcpy(&n_nodes, (const char *)blob + sizeof TINY_MAGIC, sizeof n_nodes);
  if (n_nodes != graph->n_nodes)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "tiny: the blob was not compiled for graph '%s'", graph->name);
  tiny_stage_t *s = calloc(1, sizeof *s);
  if (!s) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tiny: stage");
  s->base.target = target;
  s->graph = graph;
  s->buffers = calloc((size_t)graph->n_values + 1, sizeof(float *));
  for (int32_t v = 0; s->buffers && v < graph->n_values; ++v) {
    const vkp_value_t *val = &graph->values[v];
    if (val->kind == VKP_VALUE_CONSTANT) s->buffers[v] = val->data;
    if (val->kind != VKP_VALUE_INTERMEDIATE || val->is_output) continue;
    size_t bytes = 0;
    if (!vkp_shape_numel(val->rank, val->shape, sizeof(float), &bytes) ||
        !(s->buffers[v] = malloc(bytes ? bytes : 1))) {
      tiny_unload(&s->base);
      return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tiny: value '%s'", val->name);
    }
  }
  if (!s->buffers) {
    free(s);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "tiny: buffers");
  }
  *out_stage = &s->base;
  return NULL;
}

static vkp_status_t tiny_run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                             vkp_tensor_t *outputs) {
  tiny_stage_t *s = (tiny_stage_t *)stage;
  const vkp_graph_t *g = s->graph;
  for (int32_t i = 0; i < g->n_inputs; ++i) s->buffers[g->inputs[i]] = inputs[i].data;
  for (int32_t i = 0; i < g->n_outputs; ++i) s->buffers[g->outputs[i]] = outputs[i].data;
  for (int32_t i = 0; i < g->n_nodes; ++i) {  // validated: topological order
    const vkp_node_t *n = &g->nodes[i];
    const vkp_value_t *out = &g->values[n->outputs[0]];
    size_t count = 1;
    for (int32_t d = 0; d < out->rank; ++d) count *= (size_t)out->shape[d];
    float *y = s->buffers[n->outputs[0]];
    const float *a = s->buffers[n->inputs[0]];
    if (n->op == VKP_OP_RELU) {
      for (size_t k = 0; k < count; ++k) y[k] = a[k] > 0.0f ? a[k] : 0.0f;
    } else {
      const float *b = s->buffers[n->inputs[1]];
      for (size_t k = 0; k < count; ++k) y[k] = a[k] + b[k];
    }
  }
  return NULL;
}

// What the cost model assumes until `vkpipe calibrate` measures "tiny": a
// plain loop on one host core.
static const vkp_target_rates_t tiny_rates = {
    .device = "host", .gflops = 1.0, .gbps = 6.0, .launch_us = 1.0,
};

static const vkp_target_vtable_t tiny_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "tiny",
    .caps = {.flags = 0,  // a host target: no device part, not the fallback
             .dtypes = VKP_DTYPE_SET(VKP_DTYPE_FLOAT32),
             .default_rates = &tiny_rates},
    .compiler = {.supports = tiny_supports, .compile = tiny_compile},
    .stage = {.load = tiny_load, .run = tiny_run, .unload = tiny_unload},
    .device = NULL,
};

vkp_status_t tiny_target_register(vkp_registry_t *registry) {
  return vkp_registry_add(registry, &tiny_vtable, /*impl=*/NULL);
}
