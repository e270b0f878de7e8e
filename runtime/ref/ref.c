// SPDX-License-Identifier: Apache-2.0
// The "ref" target: vtable, blob, memory plan and the run loop. The kernels
// are the op table's reference kernels (vkp_node_eval, graph/op_*.c).
#include "runtime/ref/ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "graph/branch.h"
#include "base/status_macros.h"
#include "base/tensor_check.h"

// ---------------------------------------------------------------------------
// supports

// Every op of a validated graph has a reference kernel for every dtype its
// inference admits, so ref runs whatever validates.
static bool vkp__ref_supports(const vkp_target_t *target, const vkp_graph_t *graph,
                              const vkp_node_t *node, char *reason,
                              size_t reason_size) {
  (void)target;
  (void)graph;
  if ((unsigned)node->op >= VKP_OP_COUNT) {
    snprintf(reason, reason_size, "unknown op %d", (int)node->op);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// The blob: magic[8], u32 version, u32 node count, u32 value count,
// u32 reserved (0), u64 fingerprint; little-endian.

enum { VKP__REF_BLOB_SIZE = 32 };

static void vkp__put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static void vkp__put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t vkp__get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t vkp__get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint64_t vkp__fnv(uint64_t h, int64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (uint64_t)(uint8_t)((uint64_t)v >> (8 * i));
    h *= 0x100000001b3ull;
  }
  return h;
}

// A fingerprint of what the stage depends on: ops, wiring, dtypes, shapes.
static uint64_t vkp__ref_fingerprint(const vkp_graph_t *g) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int32_t i = 0; i < g->n_values; ++i) {
    const vkp_value_t *v = &g->values[i];
    h = vkp__fnv(h, v->kind);
    h = vkp__fnv(h, v->dtype);
    h = vkp__fnv(h, v->rank);
    for (int32_t d = 0; d < v->rank; ++d) h = vkp__fnv(h, v->shape[d]);
  }
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    h = vkp__fnv(h, n->op);
    for (int32_t j = 0; j < n->n_inputs; ++j) h = vkp__fnv(h, n->inputs[j]);
    for (int32_t j = 0; j < n->n_outputs; ++j) h = vkp__fnv(h, n->outputs[j]);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) h = vkp__fnv(h, g->inputs[i]);
  for (int32_t i = 0; i < g->n_outputs; ++i) h = vkp__fnv(h, g->outputs[i]);
  return h;
}

static vkp_status_t vkp__ref_compile(const vkp_target_t *target,
                                     const vkp_graph_t *graph,
                                     const vkp_compile_options_t *options,
                                     vkp_blob_t *out_blob) {
  if (options && options->precision != VKP_PRECISION_FP32)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "ref: computes in float32 only; precision %s is a vulkan "
                           "option", vkp_precision_name(options->precision));
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "ref: graph '%s' is not validated", graph->name);
  VKP_RETURN_IF_ERROR(vkp_blob_alloc(out_blob, VKP__REF_BLOB_SIZE));
  uint8_t *p = out_blob->data;
  memcpy(p, VKP_REF_BLOB_MAGIC, 8);
  vkp__put_u32(p + 8, VKP_REF_BLOB_VERSION);
  vkp__put_u32(p + 12, (uint32_t)graph->n_nodes);
  vkp__put_u32(p + 16, (uint32_t)graph->n_values);
  vkp__put_u32(p + 20, 0);
  vkp__put_u64(p + 24, vkp__ref_fingerprint(graph));
  return NULL;
}

static vkp_status_t vkp__ref_check_blob(const vkp_graph_t *graph,
                                        const void *blob, size_t blob_size) {
  const uint8_t *p = blob;
  if (!p || blob_size != VKP__REF_BLOB_SIZE || memcmp(p, VKP_REF_BLOB_MAGIC, 8) != 0)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "ref: not a ref blob (%zu bytes, expected %d starting "
                           "with \"VKPREF\")",
                           blob_size, (int)VKP__REF_BLOB_SIZE);
  uint32_t version = vkp__get_u32(p + 8);
  if (version != VKP_REF_BLOB_VERSION)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "ref: blob version %u; this build reads version %u",
                           (unsigned)version, (unsigned)VKP_REF_BLOB_VERSION);
  uint32_t nodes = vkp__get_u32(p + 12), values = vkp__get_u32(p + 16);
  if (nodes != (uint32_t)graph->n_nodes || values != (uint32_t)graph->n_values)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "ref: blob was compiled for %u nodes and %u tensors; "
                           "graph '%s' has %d and %d",
                           (unsigned)nodes, (unsigned)values, graph->name,
                           (int)graph->n_nodes, (int)graph->n_values);
  if (vkp__get_u64(p + 24) != vkp__ref_fingerprint(graph))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "ref: blob was compiled for a different graph than "
                           "'%s' (fingerprint mismatch)",
                           graph->name);
  return NULL;
}

// ---------------------------------------------------------------------------
// The loaded stage

typedef struct vkp__ref_stage_t {
  vkp_stage_t base;
  const vkp_graph_t *graph;    // borrowed
  uint8_t *arena;              // owned: every planned intermediate
  size_t arena_size;
  // Per value: where its bytes live during a run.
  size_t *arena_offset;        // owned; SIZE_MAX when not in the arena
  int32_t *input_slot;         // owned; index into run's inputs, or -1
  int32_t *output_slot;        // owned; output written in place by its node, or -1
  vkp_tensor_t *views;         // owned array, refreshed by every run
  const vkp_tensor_t **args;   // owned; room for the widest node's inputs
  vkp_tensor_t *results;       // owned; room for the widest node's outputs
  // Branches (branch_select, ONNX If on a run-time condition): per node, the
  // branch_select whose one side alone reads its results (-1: none) and
  // that side (1: then, 2: else); per run, whether the node was skipped.
  int32_t *excl_select;        // owned
  uint8_t *excl_side;          // owned
  int8_t *skip;                // owned; -1 undecided, 0 runs, 1 skipped
  int32_t *producer_pos;       // owned; per value, its producer's position or -1
} vkp__ref_stage_t;

static void vkp__ref_unload(vkp_stage_t *stage) {
  vkp__ref_stage_t *s = (vkp__ref_stage_t *)stage;
  if (!s) return;
  vkp__free(s->arena);
  vkp__free(s->arena_offset);
  vkp__free(s->input_slot);
  vkp__free(s->output_slot);
  vkp__free(s->views);
  vkp__free(s->args);
  vkp__free(s->results);
  vkp__free(s->excl_select);
  vkp__free(s->excl_side);
  vkp__free(s->skip);
  vkp__free(s->producer_pos);
  vkp__free(s);
}

// Which nodes only one side of a branch_select reads, walking back from the
// end: a node is exclusive to side k of select S when every reader of every
// output is S at input k, or a node exclusive to that same side (a nested
// select included), and no output is a graph output. At run time such a node
// is skipped once S's condition is known to pick the other side (or S itself
// is skipped): ONNX runs only the taken branch of an If, and an untaken
// branch must not fail on data it was not meant for (docs/onnx.md, "If").
static vkp_status_t vkp__ref_plan_branches(vkp__ref_stage_t *s) {
  const vkp_graph_t *g = s->graph;
  int32_t nn = g->n_nodes;
  s->excl_select = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  s->excl_side = vkp__calloc((size_t)nn + 1, 1);
  s->skip = vkp__calloc((size_t)nn + 1, 1);
  s->producer_pos = vkp__calloc((size_t)g->n_values + 1, sizeof(int32_t));
  if (!s->excl_select || !s->excl_side || !s->skip || !s->producer_pos)
    return VKP_OOM("ref branch plan");
  for (int32_t v = 0; v < g->n_values; ++v) s->producer_pos[v] = -1;
  for (int32_t i = 0; i < nn; ++i)
    for (int32_t j = 0; j < g->nodes[i].n_outputs; ++j)
      s->producer_pos[g->nodes[i].outputs[j]] = i;
  return vkp__graph_branch_sides(g, s->excl_select, s->excl_side);
}

// Whether node i, about to run at position `at`, is skipped: it is exclusive
// to a side of a select that is skipped itself or whose condition, already
// computed, picks the other side. Decided once per run (a node that ran
// stays run: its readers come later and decide alike or run too).
static bool vkp__ref_skips(vkp__ref_stage_t *s, int32_t i, int32_t at) {
  if (s->skip[i] >= 0) return s->skip[i] != 0;
  int32_t sel = s->excl_select[i];
  bool skip = false;
  if (sel >= 0) {
    // The select comes later than i; its own decision is made as if it ran
    // now (a nesting's outer condition is known then, or it is not).
    skip = vkp__ref_skips(s, sel, at);
    if (!skip) {
      int32_t cond = s->graph->nodes[sel].inputs[0];
      int32_t p = s->producer_pos[cond];
      if (p < 0 || p < at) {
        bool taken = ((const uint8_t *)s->views[cond].data)[0] != 0;
        skip = taken != (s->excl_side[i] == 1);
      } else {
        return false;  // the condition is not known yet: run it, undecided
      }
    }
  }
  s->skip[i] = skip ? 1 : 0;
  return skip;
}

typedef struct vkp__ref_block_t {
  int32_t value;
  size_t size;
  int32_t first, last;  // live over node positions [first, last]
} vkp__ref_block_t;

static int vkp__ref_block_by_size(const void *a, const void *b) {
  const vkp__ref_block_t *x = a, *y = b;
  if (x->size != y->size) return x->size < y->size ? 1 : -1;
  return (x->value > y->value) - (x->value < y->value);
}

enum { VKP__REF_ALIGN = 64 };

typedef struct vkp__ref_span_t {
  size_t begin, end;  // bytes [begin, end) of the arena
} vkp__ref_span_t;

static int vkp__ref_span_by_start(const void *a, const void *b) {
  const vkp__ref_span_t *x = a, *y = b;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

// Places the blocks in one arena, biggest first, each at the lowest aligned
// offset that overlaps no already placed block alive at the same time. Two
// blocks alive at the same node (an input and the output of one node
// included) never share bytes. O(n² log n) for n blocks.
static vkp_status_t vkp__ref_plan(vkp__ref_stage_t *s, vkp__ref_block_t *blocks,
                                  int32_t n) {
  qsort(blocks, (size_t)n, sizeof(*blocks), vkp__ref_block_by_size);
  size_t *placed_at = vkp__calloc((size_t)n + 1, sizeof(size_t));
  vkp__ref_span_t *busy = vkp__calloc((size_t)n + 1, sizeof(vkp__ref_span_t));
  if (!placed_at || !busy) {
    vkp__free(placed_at);
    vkp__free(busy);
    return VKP_OOM("ref memory plan");
  }
  size_t total = 0;
  for (int32_t i = 0; i < n; ++i) {
    // The byte ranges of placed blocks alive together with block i, by offset.
    int32_t n_busy = 0;
    for (int32_t j = 0; j < i; ++j) {
      if (blocks[j].last < blocks[i].first || blocks[i].last < blocks[j].first)
        continue;
      busy[n_busy++] = (vkp__ref_span_t){placed_at[j], placed_at[j] + blocks[j].size};
    }
    qsort(busy, (size_t)n_busy, sizeof(*busy), vkp__ref_span_by_start);
    // First gap that fits.
    size_t off = 0;
    for (int32_t j = 0; j < n_busy; ++j) {
      if (off + blocks[i].size <= busy[j].begin) break;
      if (busy[j].end > off)
        off = (busy[j].end + VKP__REF_ALIGN - 1) / VKP__REF_ALIGN * VKP__REF_ALIGN;
    }
    placed_at[i] = off;
    s->arena_offset[blocks[i].value] = off;
    if (off + blocks[i].size > total) total = off + blocks[i].size;
  }
  vkp__free(placed_at);
  vkp__free(busy);
  s->arena_size = total;
  // At least one byte so that empty tensors still get a non-NULL pointer.
  s->arena = vkp__calloc(total ? total : 1, 1);
  return s->arena ? NULL : VKP_OOM("ref tensor arena");
}

static vkp_status_t vkp__ref_load(const vkp_target_t *target,
                                  const vkp_graph_t *graph, const void *blob,
                                  size_t blob_size, vkp_stage_t **out_stage) {
  *out_stage = NULL;
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "ref: graph '%s' is not validated", graph->name);
  VKP_RETURN_IF_ERROR(vkp__ref_check_blob(graph, blob, blob_size));
  size_t nv = (size_t)graph->n_values + 1;
  int32_t widest = 1;
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    const vkp_node_t *n = &graph->nodes[i];
    if ((unsigned)n->op >= VKP_OP_COUNT)
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "ref: node '%s' has unknown op %d", n->name, (int)n->op);
    if (n->n_inputs > widest) widest = n->n_inputs;
    if (n->n_outputs > widest) widest = n->n_outputs;
  }
  vkp__ref_stage_t *s = vkp__calloc(1, sizeof(*s));
  int32_t *first_def = vkp__calloc(nv, sizeof(int32_t));
  int32_t *last_use = vkp__calloc(nv, sizeof(int32_t));
  vkp__ref_block_t *blocks = vkp__calloc(nv, sizeof(vkp__ref_block_t));
  vkp_status_t st = NULL;
  if (s) {
    s->base.target = target;
    s->graph = graph;
    s->arena_offset = vkp__calloc(nv, sizeof(size_t));
    s->input_slot = vkp__calloc(nv, sizeof(int32_t));
    s->output_slot = vkp__calloc(nv, sizeof(int32_t));
    s->views = vkp__calloc(nv, sizeof(vkp_tensor_t));
    s->args = vkp__calloc((size_t)widest, sizeof(vkp_tensor_t *));
    s->results = vkp__calloc((size_t)widest, sizeof(vkp_tensor_t));
  }
  if (!s || !first_def || !last_use || !blocks || !s->arena_offset ||
      !s->input_slot || !s->output_slot || !s->views || !s->args || !s->results)
    st = VKP_OOM("ref stage");
  if (!st) st = vkp_graph_liveness(graph, first_def, last_use);
  int32_t n_blocks = 0;
  for (int32_t v = 0; !st && v < graph->n_values; ++v) {
    s->arena_offset[v] = SIZE_MAX;
    s->input_slot[v] = -1;
    s->output_slot[v] = -1;
  }
  for (int32_t i = 0; !st && i < graph->n_inputs; ++i)
    s->input_slot[graph->inputs[i]] = i;
  for (int32_t i = 0; !st && i < graph->n_outputs; ++i) {
    const vkp_value_t *v = &graph->values[graph->outputs[i]];
    if (v->kind == VKP_VALUE_INTERMEDIATE) s->output_slot[graph->outputs[i]] = i;
  }
  for (int32_t v = 0; !st && v < graph->n_values; ++v) {
    const vkp_value_t *val = &graph->values[v];
    if (val->kind != VKP_VALUE_INTERMEDIATE || s->output_slot[v] >= 0) continue;
    size_t bytes;
    if (!vkp_shape_numel(val->rank, val->shape, vkp_dtype_size(val->dtype), &bytes)) {
      st = vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "ref: tensor '%s' is too large",
                           val->name);
      break;
    }
    int32_t last = last_use[v] < first_def[v] ? first_def[v] : last_use[v];
    blocks[n_blocks++] = (vkp__ref_block_t){
        .value = v, .size = bytes, .first = first_def[v], .last = last};
  }
  if (!st) st = vkp__ref_plan(s, blocks, n_blocks);
  if (!st) st = vkp__ref_plan_branches(s);
  vkp__free(first_def);
  vkp__free(last_use);
  vkp__free(blocks);
  if (st) {
    vkp__ref_unload(s ? &s->base : NULL);
    return vkp_status_annotate(st, "loading graph '%s' on ref", graph->name);
  }
  *out_stage = &s->base;
  return NULL;
}

// ---------------------------------------------------------------------------
// run

static vkp_status_t vkp__ref_run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                                 vkp_tensor_t *outputs) {
  vkp__ref_stage_t *s = (vkp__ref_stage_t *)stage;
  const vkp_graph_t *g = s->graph;
  for (int32_t i = 0; i < g->n_inputs; ++i)
    VKP_RETURN_IF_ERROR(
        vkp_value_check_tensor(&g->values[g->inputs[i]], &inputs[i], "input"));
  for (int32_t i = 0; i < g->n_outputs; ++i)
    VKP_RETURN_IF_ERROR(
        vkp_value_check_tensor(&g->values[g->outputs[i]], &outputs[i], "output"));
  for (int32_t v = 0; v < g->n_values; ++v) {
    const vkp_value_t *val = &g->values[v];
    vkp_tensor_t *view = &s->views[v];
    memset(view, 0, sizeof(*view));
    view->dtype = val->dtype;
    view->rank = val->rank;
    memcpy(view->shape, val->shape, sizeof(view->shape));
    if (s->input_slot[v] >= 0) {
      view->data = inputs[s->input_slot[v]].data;
      // A bounded input's run-time extent.
      memcpy(view->shape, inputs[s->input_slot[v]].shape, sizeof(view->shape));
    }
    else if (val->kind == VKP_VALUE_CONSTANT)
      view->data = val->data;
    else if (s->output_slot[v] >= 0)
      view->data = outputs[s->output_slot[v]].data;
    else if (s->arena_offset[v] != SIZE_MAX)
      view->data = s->arena + s->arena_offset[v];
  }
  memset(s->skip, 0xff, (size_t)g->n_nodes);
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (s->excl_select[i] >= 0 && vkp__ref_skips(s, i, i)) continue;
    for (int32_t j = 0; j < n->n_inputs; ++j)
      s->args[j] = n->inputs[j] >= 0 ? &s->views[n->inputs[j]] : NULL;
    for (int32_t j = 0; j < n->n_outputs; ++j) s->results[j] = s->views[n->outputs[j]];
    // Bounded values: the outputs' run-time shapes, from the inputs' (or,
    // for non_zero and unique, from the kernel), travel on in the views.
    bool bounded = vkp_node_is_bounded(g, n);
    vkp_status_t st = bounded ? vkp_node_bounded_shapes(g, n, s->args, s->results) : NULL;
    if (!st) st = vkp_node_eval(n, s->args, s->results);
    if (st) return st;
    for (int32_t j = 0; bounded && j < n->n_outputs; ++j)
      memcpy(s->views[n->outputs[j]].shape, s->results[j].shape,
             sizeof(s->results[j].shape));
  }
  // Outputs that no node writes in place (a graph input or constant listed
  // as an output) are copied.
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    int32_t v = g->outputs[i];
    // A bounded output comes back at its run-time shape.
    if (g->values[v].bounded)
      memcpy(outputs[i].shape, s->views[v].shape, sizeof(outputs[i].shape));
    size_t bytes = vkp_tensor_nbytes(&outputs[i]);
    if (s->output_slot[v] == i || !bytes) continue;
    memcpy(outputs[i].data, s->views[v].data, bytes);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// dump: the run order and the memory plan, as text

static void vkp__ref_write_plan(FILE *f, const vkp__ref_stage_t *s) {
  const vkp_graph_t *g = s->graph;
  fprintf(f, "ref stage for graph '%s': %d nodes, %d tensors, arena %zu bytes\n",
          g->name, (int)g->n_nodes, (int)g->n_values, s->arena_size);
  fprintf(f, "\nnodes, in run order:\n");
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    fprintf(f, "  %3d %s (%s):", (int)i, n->name, vkp_op_name(n->op));
    for (int32_t j = 0; j < n->n_inputs; ++j)
      fprintf(f, "%s %s", j ? "," : "",
              n->inputs[j] >= 0 ? g->values[n->inputs[j]].name : "(omitted)");
    fprintf(f, " ->");
    for (int32_t j = 0; j < n->n_outputs; ++j)
      fprintf(f, "%s %s", j ? "," : "", g->values[n->outputs[j]].name);
    fprintf(f, "\n");
  }
  fprintf(f, "\ntensors:\n");
  for (int32_t v = 0; v < g->n_values; ++v) {
    const vkp_value_t *val = &g->values[v];
    char shape[160];
    fprintf(f, "  %s %s %s: ", val->name, vkp_dtype_name(val->dtype),
            vkp_shape_format(val->rank, val->shape, shape, sizeof shape));
    if (s->input_slot[v] >= 0)
      fprintf(f, "graph input %d\n", (int)s->input_slot[v]);
    else if (val->kind == VKP_VALUE_CONSTANT)
      fprintf(f, "constant (%zu bytes)\n", val->nbytes);
    else if (s->output_slot[v] >= 0)
      fprintf(f, "written in place into graph output %d\n", (int)s->output_slot[v]);
    else
      fprintf(f, "arena offset %zu\n", s->arena_offset[v]);
  }
}

static vkp_status_t vkp__ref_dump(const vkp_target_t *target,
                                  const vkp_graph_t *graph, const void *blob,
                                  size_t blob_size, const char *dir) {
  vkp_stage_t *stage = NULL;
  VKP_RETURN_IF_ERROR(vkp__ref_load(target, graph, blob, blob_size, &stage));
  char *path = vkp__asprintf("%s/ref_plan.txt", dir);
  vkp_status_t st = NULL;
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!path) {
    st = VKP_OOM("dump path");
  } else if (!f) {
    st = vkp_status_make(VKP_STATUS_IO_ERROR, "ref: cannot write %s", path);
  } else {
    vkp__ref_write_plan(f, (const vkp__ref_stage_t *)stage);
    if (ferror(f) | (fclose(f) != 0))
      st = vkp_status_make(VKP_STATUS_IO_ERROR, "ref: error writing %s", path);
  }
  vkp__free(path);
  vkp__ref_unload(stage);
  return st;
}

// ---------------------------------------------------------------------------

// The documented default rates (docs/pipeline-config.md, "Cost profile"):
// an interpreter computing in double, slow on purpose.
static const vkp_target_rates_t vkp__ref_rates = {
    .device = "host", .gflops = 0.5, .gbps = 4.0, .launch_us = 5.0,
};

const vkp_target_vtable_t vkp__target_ref_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "ref",
    // Every dtype the op table admits; a host target (no device part).
    .caps = {.dtypes = VKP_DTYPE_SET_ALL, .default_rates = &vkp__ref_rates},
    .compiler =
        {
            .supports = vkp__ref_supports,
            .estimate = NULL,  // the partitioner's roofline model is good enough
            .compile = vkp__ref_compile,
            .dump = vkp__ref_dump,  // ref_plan.txt: run order and memory plan
        },
    .stage = {.load = vkp__ref_load, .run = vkp__ref_run, .unload = vkp__ref_unload},
    .device = NULL,   // the runtime calls run from a worker thread
    .destroy = NULL,  // no state
};

vkp_status_t vkp_target_ref_register(vkp_registry_t *registry) {
  return vkp_registry_add(registry, &vkp__target_ref_vtable, /*impl=*/NULL);
}
