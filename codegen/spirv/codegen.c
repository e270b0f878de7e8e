// SPDX-License-Identifier: Apache-2.0
// vkp_spirv_codegen: fusion, buffer planning and per-dispatch compilation.
//
// 1. Fusion. Walking the nodes backwards, every non-alias node not yet taken
//    starts a group rooted at it. An elementwise node pulls in the producer of
//    each input when that value has exactly one consuming node, is not a graph
//    output, has the node's own output shape, and the producer is elementwise
//    (a chain) or is a heavy op ("anchor": gemm, conv2d, pooling, norms, ...)
//    and the group has none yet (an epilogue: bias, activation, residual add,
//    clip). A group is one dispatch, executed at its root's position: every
//    value it reads from outside was produced earlier, and nothing outside
//    reads the values it keeps in registers.
// 2. Aliases. reshape/flatten/squeeze/unsqueeze/identity share their input's
//    storage (union of storage classes) unless both sides already have fixed
//    storage (a graph input, constant or output): then they become a copy.
// 3. Storage. A class holding a graph input, constant or output lives in that
//    buffer; the rest share one scratch buffer, placed first-fit by liveness
//    over the dispatch order (the runtime orders any two dispatches whose
//    bindings overlap, so reuse is safe).
// 4. Each dispatch's GLSL is compiled, validated and optimised (compile.h).
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "codegen/spirv/compile.h"
#include "codegen/spirv/kernels.h"
#include "codegen/spirv/program.h"

// ---------------------------------------------------------------------------
// Support

__attribute__((format(printf, 3, 4))) static bool vkp__fail(
    char *reason, size_t size, const char *fmt, ...) {
  if (reason && size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, size, fmt, ap);
    va_end(ap);
  }
  return false;
}

// What every device takes; `loop_budget` as in vkp_spirv_device_info_t.
static bool vkp__supports(const vkp_graph_t *graph, const vkp_node_t *node,
                          uint32_t loop_budget, char *reason, size_t reason_size) {
  if (reason && reason_size) reason[0] = '\0';
  if (!graph || !node || (unsigned)node->op >= VKP_OP_COUNT)
    return vkp__fail(reason, reason_size, "unknown op");
  int32_t bounded = vkp_node_bounded_value(graph, node);
  if (bounded >= 0)
    return vkp__fail(reason, reason_size,
                     "value '%s' has a data-dependent shape (its extent is known "
                     "only at run time); the Vulkan kernels are compiled for "
                     "static shapes",
                     graph->values[bounded].name);
  if (node->n_outputs != 1 && !vkp__spv_writes_outputs(node->op))
    return vkp__fail(reason, reason_size,
                     "%s with %d outputs: the Vulkan kernels write one",
                     vkp_op_name(node->op), (int)node->n_outputs);
  if (!vkp_spirv_has_kernel(node->op))
    return vkp__fail(reason, reason_size,
                     "the Vulkan code generator has no %s kernel yet",
                     vkp_op_name(node->op));
  // Then the dtypes its kernel takes.
  for (int32_t i = 0; i < node->n_inputs + node->n_outputs; ++i) {
    int32_t v = i < node->n_inputs ? node->inputs[i]
                                   : node->outputs[i - node->n_inputs];
    if (v < 0) continue;
    const vkp_value_t *value = &graph->values[v];
    vkp_dtype_t dt = value->dtype;
    bool integer = vkp__spv_is_int(dt);
    bool index = i < node->n_inputs && vkp__spv_is_index_input(node->op, i) &&
                 (dt == VKP_DTYPE_INT32 || dt == VKP_DTYPE_INT64);
    bool boolean = dt == VKP_DTYPE_BOOL && vkp__spv_takes_bool(node->op);
    // The int64 indices a kernel writes besides its values (max_pool2d's).
    bool indices_out = i > node->n_inputs && dt == VKP_DTYPE_INT64 &&
                       vkp__spv_writes_outputs(node->op);
    bool half = (dt == VKP_DTYPE_FLOAT16 || dt == VKP_DTYPE_BFLOAT16) &&
                vkp__spv_reads_narrow(node->op);
    bool f64 = dt == VKP_DTYPE_FLOAT64 && vkp__spv_takes_f64(node->op);
    if (dt != VKP_DTYPE_FLOAT32 && !index && !boolean && !indices_out && !half && !f64 &&
        !(integer && vkp__spv_takes_ints(node->op)))
      return vkp__fail(reason, reason_size,
                       "value '%s' is %s; the Vulkan %s kernel takes float32%s%s%s%s data",
                       value->name, vkp_dtype_name(dt), vkp_op_name(node->op),
                       vkp__spv_reads_narrow(node->op) ? ", float16" : "",
                       vkp__spv_takes_f64(node->op) ? ", float64" : "",
                       vkp__spv_takes_ints(node->op) ? ", integer" : "",
                       vkp__spv_takes_bool(node->op) ? ", bool" : "");
    // Narrow integers are widened on load, which only kernels that read
    // through LD<j> do.
    if (integer && !index && vkp__spv_is_narrow(dt) && !vkp__spv_reads_narrow(node->op))
      return vkp__fail(reason, reason_size,
                       "value '%s' is %s; the Vulkan %s kernel takes 32- and "
                       "64-bit integers only",
                       value->name, vkp_dtype_name(dt), vkp_op_name(node->op));
    size_t bytes;
    if (!vkp_shape_numel(value->rank, value->shape, 4, &bytes) ||
        bytes / 4 > (size_t)INT32_MAX)
      return vkp__fail(reason, reason_size,
                       "value '%s' has more than 2^31 elements", value->name);
  }
  vkp__spv_check_fn check = vkp__spv_checker(node->op);
  char ignored[8];
  if (check && !check(graph, node, loop_budget, reason && reason_size ? reason : ignored,
                      reason && reason_size ? reason_size : sizeof ignored))
    return false;
  if (node->op == VKP_OP_CONCAT && node->n_inputs < 1)
    return vkp__fail(reason, reason_size, "concat without inputs");
  if (vkp__op_is_elementwise(node->op) && node->n_inputs >= VKP__MAX_BINDINGS)
    return vkp__fail(reason, reason_size,
                     "%s with %d inputs: a Vulkan dispatch binds at most %d "
                     "inputs",
                     vkp_op_name(node->op), (int)node->n_inputs,
                     VKP__MAX_BINDINGS - 1);
  return true;
}

// Without a device, lavapipe's loop budget holds (the strictest known).
bool vkp_spirv_supports(const vkp_graph_t *graph, const vkp_node_t *node,
                        char *reason, size_t reason_size) {
  return vkp__supports(graph, node, VKP__SPV_LOOP_BUDGET, reason, reason_size);
}

bool vkp_spirv_supports_on(const vkp_graph_t *graph, const vkp_node_t *node,
                           const vkp_spirv_device_info_t *device, char *reason,
                           size_t reason_size) {
  if (!vkp__supports(graph, node, device->loop_budget, reason, reason_size)) return false;
  vkp__kernel_config_t config;
  vkp__kernel_config_init(&config, device);
  int64_t bindings = 0;
  bool split = false;
  // A kernel writing several outputs binds one per dispatch.
  bool one_output = vkp__spv_writes_outputs(node->op);
  uint32_t output_parts = 0, concat_parts = 0;
  for (int32_t i = 0; i < node->n_inputs + node->n_outputs; ++i) {
    int32_t v = i < node->n_inputs ? node->inputs[i] : node->outputs[i - node->n_inputs];
    if (v < 0) continue;
    const vkp_value_t *val = &graph->values[v];
    if (vkp_dtype_size(val->dtype) == 1 && !device->storage_8bit)
      return vkp__fail(reason, reason_size,
                       "value '%s' is %s; this device lacks "
                       "storageBuffer8BitAccess (%s tensors are bytes)",
                       val->name, vkp_dtype_name(val->dtype), vkp_dtype_name(val->dtype));
    if (vkp_dtype_size(val->dtype) == 2 && !device->storage_16bit)
      return vkp__fail(reason, reason_size,
                       "value '%s' is %s; this device lacks "
                       "storageBuffer16BitAccess (%s tensors are 16-bit words)",
                       val->name, vkp_dtype_name(val->dtype), vkp_dtype_name(val->dtype));
    if (val->dtype == VKP_DTYPE_FLOAT64 && !device->shader_float64)
      return vkp__fail(reason, reason_size,
                       "value '%s' is float64; this device lacks shaderFloat64 "
                       "(the Vulkan kernels compute on it as double)",
                       val->name);
    bool index = i < node->n_inputs && vkp__spv_is_index_input(node->op, i);
    if (vkp__spv_is_64bit(val->dtype) && !index && !device->shader_int64)
      return vkp__fail(reason, reason_size,
                       "value '%s' is %s; this device lacks shaderInt64 "
                       "(the Vulkan kernels compute on it as 64-bit integers)",
                       val->name, vkp_dtype_name(val->dtype));
    size_t bytes = 0;
    if (!vkp_shape_numel(val->rank, val->shape, vkp_dtype_size(val->dtype), &bytes))
      return vkp__fail(reason, reason_size, "value '%s' is too large", val->name);
    uint32_t parts = vkp__spv_parts(bytes, config.part_bytes);
    split |= parts > 1;
    if (one_output && i >= node->n_inputs)
      output_parts = parts > output_parts ? parts : output_parts;
    else if (node->op == VKP_OP_CONCAT && i < node->n_inputs)
      // One dispatch per input (vkp__plan_build), each binding that
      // input and the output: the widest input counts, not their sum.
      concat_parts = parts > concat_parts ? parts : concat_parts;
    else
      bindings += parts;
    if (parts == 1 && bytes <= device->max_storage_range) continue;
    // Past maxStorageBufferRange: split across bindings where the kernel
    // reads (or writes) the tensor through an accessor.
    bool splits = val->dtype != VKP_DTYPE_BOOL && config.part_bytes > 0 &&
                  (i < node->n_inputs ? vkp__spv_splits_input(node->op, i)
                                      : node->op != VKP_OP_CONCAT);
    if (splits) continue;
    return vkp__fail(reason, reason_size,
                     "%s '%s' is %.1f MiB; this device binds at most %.1f MiB "
                     "per buffer (maxStorageBufferRange) and the %s kernel "
                     "cannot split it across bindings",
                     val->kind == VKP_VALUE_CONSTANT ? "weight" : "tensor",
                     val->name, (double)bytes / 1048576.0,
                     (double)device->max_storage_range / 1048576.0,
                     vkp_op_name(node->op));
  }
  bindings += output_parts + concat_parts;
  if (bindings > VKP__MAX_BINDINGS && !split)
    return vkp__fail(reason, reason_size,
                     "%s binds %lld tensors; a Vulkan dispatch has at most %d bindings",
                     vkp_op_name(node->op), (long long)bindings, VKP__MAX_BINDINGS);
  if (bindings > VKP__MAX_BINDINGS)
    return vkp__fail(reason, reason_size,
                     "%s needs %lld bindings once its tensors past "
                     "maxStorageBufferRange (%llu bytes) are split; a dispatch has "
                     "at most %d",
                     vkp_op_name(node->op), (long long)bindings,
                     (unsigned long long)device->max_storage_range, VKP__MAX_BINDINGS);
  return true;
}

// ---------------------------------------------------------------------------
// Planning state

typedef struct vkp__dispatch_plan_t {
  int32_t group;        // group index, or -1 for a copy
  int32_t part;         // concat input index
  int32_t dst_value;    // value written (its class decides where)
  int32_t dst_output;   // >= 0: write to OUTPUT buffer #dst_output instead
  int32_t copy_src;     // copy: the value read
} vkp__dispatch_plan_t;

typedef struct vkp__plan_t {
  const vkp_graph_t *g;
  int32_t *group_of;        // per node, -1 for aliases
  vkp__group_t *groups;
  int32_t n_groups;
  int32_t *consumers;       // per value: number of consuming nodes
  bool *alias_copy;         // per node: alias that needs a copy
  int32_t *parent;          // per value: union-find over storage classes
  vkp__dispatch_plan_t *dispatches;
  int32_t n_dispatches;
  int32_t cap_dispatches;
  uint64_t part_bytes;      // config.part_bytes
  bool *half;               // per value: a constant kept as float16, or NULL
  vkp__kernel_config_t config;  // the device's kernel variants
} vkp__plan_t;

static void vkp__plan_deinit(vkp__plan_t *p) {
  vkp__free(p->group_of);
  vkp__free(p->groups);
  vkp__free(p->consumers);
  vkp__free(p->alias_copy);
  vkp__free(p->parent);
  vkp__free(p->dispatches);
  vkp__free(p->half);
}

// --precision fp16: the float32 constants that only matrix products and
// convolutions read as their A/B operand or weights (through LD<i>) are kept
// as float16; everything else (biases, activations, constants another op
// reads) stays float32. Returns NULL with *out_half = NULL for fp32.
static vkp_status_t vkp__plan_precision(vkp__plan_t *p, const vkp_spirv_device_info_t *device,
                                        const vkp_compile_options_t *options) {
  if (!options || options->precision == VKP_PRECISION_FP32) return NULL;
  if (options->precision != VKP_PRECISION_FP16)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "unknown precision %d",
                           (int)options->precision);
  if (!device->storage_16bit)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "precision fp16 keeps weights as float16, which needs "
                           "storageBuffer16BitAccess; this device lacks it");
  const vkp_graph_t *g = p->g;
  p->half = vkp__calloc((size_t)g->n_values + 1, sizeof(bool));
  if (!p->half) return VKP_OOM("precision plan");
  for (int32_t v = 0; v < g->n_values; ++v)
    p->half[v] = g->values[v].kind == VKP_VALUE_CONSTANT &&
                 g->values[v].dtype == VKP_DTYPE_FLOAT32 && !g->values[v].is_output;
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    bool matrix = n->op == VKP_OP_MATMUL || n->op == VKP_OP_GEMM || n->op == VKP_OP_CONV2D;
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      if (v < 0) continue;
      bool operand = matrix && (n->op == VKP_OP_CONV2D ? j == 1 : j <= 1);
      if (!operand) p->half[v] = false;
    }
  }
  return NULL;
}

static uint64_t vkp__stored_bytes(const vkp__plan_t *p, int32_t value) {
  const vkp_value_t *v = &p->g->values[value];
  if (!p->half || !p->half[value]) {
    size_t bytes = 0;
    vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes);
    return bytes;
  }
  size_t bytes = 0;
  vkp_shape_numel(v->rank, v->shape, 2, &bytes);
  return bytes;
}

static int32_t vkp__find(int32_t *parent, int32_t v) {
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

static bool vkp__same_shape(const vkp_value_t *a, const vkp_value_t *b) {
  if (a->rank != b->rank) return false;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static int vkp__cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

static void vkp__fuse(vkp__plan_t *p) {
  const vkp_graph_t *g = p->g;
  for (int32_t i = g->n_nodes - 1; i >= 0; --i) {
    const vkp_node_t *n = &g->nodes[i];
    if (vkp__op_is_alias(n->op)) continue;
    if (p->group_of[i] < 0) {
      vkp__group_t *grp = &p->groups[p->n_groups];
      memset(grp, 0, sizeof(*grp));
      grp->root = i;
      grp->anchor = vkp__op_is_elementwise(n->op) ? -1 : i;
      if (grp->anchor < 0) grp->members[grp->n_members++] = i;
      p->group_of[i] = p->n_groups++;
    }
    if (!vkp__op_is_elementwise(n->op)) continue;
    vkp__group_t *grp = &p->groups[p->group_of[i]];
    const vkp_value_t *out = &g->values[n->outputs[0]];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      if (v < 0) continue;
      const vkp_value_t *in = &g->values[v];
      int32_t producer = in->producer;
      if (producer < 0 || p->group_of[producer] >= 0 || in->is_output ||
          p->consumers[v] != 1 || !vkp__same_shape(in, out))
        continue;
      const vkp_node_t *pn = &g->nodes[producer];
      if (pn->n_outputs > 1) continue;  // its dispatches write every output
      bool elementwise = vkp__op_is_elementwise(pn->op);
      if (!elementwise && (vkp__op_is_alias(pn->op) || grp->anchor >= 0 ||
                           !vkp__op_takes_epilogue(pn->op)))
        continue;
      if (grp->n_members >= (int32_t)(sizeof grp->members / sizeof grp->members[0]))
        continue;
      // Tentatively take it and check the binding budget.
      vkp__group_t trial = *grp;
      if (elementwise) trial.members[trial.n_members++] = producer;
      else trial.anchor = producer;
      int32_t bindings = 1 + vkp__group_epilogue_inputs(g, &trial) +
                         (trial.anchor >= 0 ? vkp__anchor_bindings(g, trial.anchor, p->part_bytes) : 0);
      if (bindings > VKP__MAX_BINDINGS) continue;
      *grp = trial;
      p->group_of[producer] = p->group_of[i];
    }
  }
  for (int32_t k = 0; k < p->n_groups; ++k)
    qsort(p->groups[k].members, (size_t)p->groups[k].n_members, sizeof(int32_t),
          vkp__cmp_i32);
}

static vkp_status_t vkp__add_dispatch(vkp__plan_t *p, vkp__dispatch_plan_t d) {
  if (p->n_dispatches == p->cap_dispatches) {
    int32_t cap = p->cap_dispatches ? p->cap_dispatches * 2 : 16;
    vkp__dispatch_plan_t *grown =
        vkp__reallocarray(p->dispatches, (size_t)cap, sizeof(*grown));
    if (!grown) return VKP_OOM("dispatch plan");
    p->dispatches = grown;
    p->cap_dispatches = cap;
  }
  p->dispatches[p->n_dispatches++] = d;
  return NULL;
}

static bool vkp__fixed(const vkp_graph_t *g, int32_t v) {
  return g->values[v].kind != VKP_VALUE_INTERMEDIATE || g->values[v].is_output;
}

static vkp_status_t vkp__plan_build(vkp__plan_t *p) {
  const vkp_graph_t *g = p->g;
  int32_t nn = g->n_nodes, nv = g->n_values;
  p->group_of = vkp__calloc((size_t)nn + 1, sizeof(int32_t));
  p->groups = vkp__calloc((size_t)nn + 1, sizeof(vkp__group_t));
  p->consumers = vkp__calloc((size_t)nv + 1, sizeof(int32_t));
  p->alias_copy = vkp__calloc((size_t)nn + 1, sizeof(bool));
  p->parent = vkp__calloc((size_t)nv + 1, sizeof(int32_t));
  if (!p->group_of || !p->groups || !p->consumers || !p->alias_copy || !p->parent)
    return VKP_OOM("codegen plan");
  for (int32_t i = 0; i < nn; ++i) p->group_of[i] = -1;
  for (int32_t v = 0; v < nv; ++v) p->parent[v] = v;
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j];
      bool seen = false;
      for (int32_t k = 0; k < j; ++k) seen |= n->inputs[k] == v;
      if (v >= 0 && !seen) ++p->consumers[v];
    }
  }
  vkp__fuse(p);
  // Aliases share storage unless both sides are pinned to a buffer.
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    if (!vkp__op_is_alias(n->op)) continue;
    int32_t a = vkp__find(p->parent, n->inputs[0]);
    int32_t b = vkp__find(p->parent, n->outputs[0]);
    bool fixed_a = false, fixed_b = false;
    for (int32_t v = 0; v < nv; ++v) {
      int32_t c = vkp__find(p->parent, v);
      if (c == a) fixed_a |= vkp__fixed(g, v);
      if (c == b) fixed_b |= vkp__fixed(g, v);
    }
    if (fixed_a && fixed_b) p->alias_copy[i] = true;
    else p->parent[b] = a;
  }
  // Dispatches in topological order of their roots.
  for (int32_t i = 0; i < nn; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    const vkp_value_t *out = &g->values[n->outputs[0]];
    bool empty = false;
    for (int32_t d = 0; d < out->rank; ++d) empty |= out->shape[d] == 0;
    if (empty) continue;
    if (vkp__op_is_alias(n->op)) {
      if (p->alias_copy[i])
        VKP_RETURN_IF_ERROR(vkp__add_dispatch(
            p, (vkp__dispatch_plan_t){.group = -1, .dst_value = n->outputs[0],
                                      .dst_output = -1, .copy_src = n->inputs[0]}));
      continue;
    }
    int32_t k = p->group_of[i];
    if (p->groups[k].root != i) continue;
    // concat: one dispatch per input; an anchor with several outputs
    // (top_k, max_pool's indices): one per output written.
    int32_t parts = n->op == VKP_OP_CONCAT ? n->n_inputs : n->n_outputs;
    // A kernel with a temporary (split-K's partial sums, a convolution's
    // padded input; not a graph value): part 0 writes it, part 1 reads it
    // and writes the group's output.
    const vkp_node_t *anchor = p->groups[k].anchor >= 0 ? &g->nodes[p->groups[k].anchor] : NULL;
    bool temp = anchor && vkp__spv_kernel_temp(g, anchor, &p->config, NULL) != VKP__TEMP_NONE;
    if (temp) {
      parts = 2;
      VKP_RETURN_IF_ERROR(vkp__add_dispatch(
          p, (vkp__dispatch_plan_t){.group = k, .part = 0,
                                    .dst_value = VKP__KERNEL_TEMP, .dst_output = -1,
                                    .copy_src = -1}));
    }
    for (int32_t part = temp ? 1 : 0; part < parts; ++part) {
      int32_t dst = n->op == VKP_OP_CONCAT || temp ? n->outputs[0] : n->outputs[part];
      if (dst < 0) continue;
      if (n->op == VKP_OP_CONCAT) {
        const vkp_value_t *in = &g->values[n->inputs[part]];
        bool in_empty = false;
        for (int32_t d = 0; d < in->rank; ++d) in_empty |= in->shape[d] == 0;
        if (in_empty) continue;
      }
      VKP_RETURN_IF_ERROR(vkp__add_dispatch(
          p, (vkp__dispatch_plan_t){.group = k, .part = part,
                                    .dst_value = dst,
                                    .dst_output = -1,
                                    .copy_src = -1}));
    }
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Storage

typedef struct vkp__class_t {
  int32_t buffer;     // program buffer, or -1 until placed
  uint64_t offset;
  uint64_t bytes;
  int32_t first, last;  // dispatch positions touching it; first = -1: unused
} vkp__class_t;

static uint64_t vkp__value_bytes(const vkp_value_t *v) {
  size_t bytes = 0;
  vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes);
  return bytes;
}

static void vkp__touch(vkp__class_t *c, int32_t pos) {
  if (c->first < 0 || pos < c->first) c->first = pos;
  if (pos > c->last) c->last = pos;
}

typedef struct vkp__layout_t {
  vkp_spirv_buffer_t *buffers;
  int32_t n_buffers;
  vkp__class_t *classes;   // indexed by class root value
  int32_t *output_buffer;  // per graph output index
  int32_t scratch_buffer;  // -1 when there is none
  uint64_t temp_offset;  // kernel temporaries, at the scratch's end
} vkp__layout_t;

static void vkp__layout_deinit(vkp__layout_t *l) {
  vkp__free(l->buffers);
  vkp__free(l->classes);
  vkp__free(l->output_buffer);
}

static vkp_status_t vkp__layout_build(vkp__plan_t *p,
                                      const vkp_spirv_device_info_t *device,
                                      vkp__layout_t *l) {
  const vkp_graph_t *g = p->g;
  int32_t nv = g->n_values;
  l->buffers = vkp__calloc((size_t)nv + (size_t)g->n_inputs + (size_t)g->n_outputs + 2,
                           sizeof(vkp_spirv_buffer_t));
  l->classes = vkp__calloc((size_t)nv + 1, sizeof(vkp__class_t));
  l->output_buffer = vkp__calloc((size_t)g->n_outputs + 1, sizeof(int32_t));
  if (!l->buffers || !l->classes || !l->output_buffer)
    return VKP_OOM("buffer layout");
  for (int32_t v = 0; v < nv; ++v) {
    l->classes[v].buffer = -1;
    l->classes[v].first = -1;
    l->classes[v].last = -1;
    l->classes[v].bytes = vkp__value_bytes(&g->values[v]);
  }
  // I/O buffers exist for every graph input and output, in order.
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    int32_t v = g->inputs[i], c = vkp__find(p->parent, v);
    l->buffers[l->n_buffers] = (vkp_spirv_buffer_t){
        VKP_SPIRV_BUFFER_INPUT, i, vkp__value_bytes(&g->values[v])};
    if (l->classes[c].buffer < 0) l->classes[c].buffer = l->n_buffers;
    ++l->n_buffers;
  }
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    int32_t v = g->outputs[i], c = vkp__find(p->parent, v);
    l->buffers[l->n_buffers] = (vkp_spirv_buffer_t){
        VKP_SPIRV_BUFFER_OUTPUT, i, vkp__value_bytes(&g->values[v])};
    l->output_buffer[i] = l->n_buffers;
    if (l->classes[c].buffer < 0) l->classes[c].buffer = l->n_buffers;
    ++l->n_buffers;
  }
  // Outputs whose class lives elsewhere (an input, a constant, an output
  // listed twice) get a copy at the end.
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    int32_t v = g->outputs[i], c = vkp__find(p->parent, v);
    bool constant_class = false;
    for (int32_t u = 0; u < nv; ++u)
      constant_class |= vkp__find(p->parent, u) == c &&
                        g->values[u].kind == VKP_VALUE_CONSTANT;
    if ((l->classes[c].buffer != l->output_buffer[i] || constant_class) &&
        l->classes[c].bytes > 0)
      VKP_RETURN_IF_ERROR(vkp__add_dispatch(
          p, (vkp__dispatch_plan_t){.group = -1, .dst_value = v,
                                    .dst_output = i, .copy_src = v}));
  }
  // Constant classes that are not pinned yet.
  for (int32_t v = 0; v < nv; ++v) {
    if (g->values[v].kind != VKP_VALUE_CONSTANT) continue;
    int32_t c = vkp__find(p->parent, v);
    if (l->classes[c].buffer >= 0 && l->buffers[l->classes[c].buffer].kind ==
                                         VKP_SPIRV_BUFFER_OUTPUT)
      l->classes[c].buffer = -1;  // the output gets a copy; read the constant
    if (l->classes[c].buffer >= 0) continue;
    bool half = p->half && p->half[v];
    l->buffers[l->n_buffers] = (vkp_spirv_buffer_t){
        half ? VKP_SPIRV_BUFFER_CONSTANT_F16 : VKP_SPIRV_BUFFER_CONSTANT, v,
        vkp__stored_bytes(p, v)};
    l->classes[c].buffer = l->n_buffers++;
  }
  // Liveness of every class over the dispatch order.
  uint64_t temps = 0;  // the largest kernel temporary
  for (int32_t d = 0; d < p->n_dispatches; ++d) {
    const vkp__dispatch_plan_t *dp = &p->dispatches[d];
    if (dp->dst_value == VKP__KERNEL_TEMP) {
      uint64_t bytes = 0;
      vkp__spv_kernel_temp(g, &g->nodes[p->groups[dp->group].anchor], &p->config, &bytes);
      if (bytes > temps) temps = bytes;
    } else {
      vkp__touch(&l->classes[vkp__find(p->parent, dp->dst_value)], d);
    }
    if (dp->group < 0) {
      vkp__touch(&l->classes[vkp__find(p->parent, dp->copy_src)], d);
      continue;
    }
    const vkp__group_t *grp = &p->groups[dp->group];
    int32_t ids[2] = {grp->anchor, -1};
    for (int32_t m = -1; m < grp->n_members; ++m) {
      int32_t node = m < 0 ? ids[0] : grp->members[m];
      if (node < 0) continue;
      const vkp_node_t *n = &g->nodes[node];
      for (int32_t j = 0; j < n->n_inputs; ++j)
        if (n->inputs[j] >= 0)
          vkp__touch(&l->classes[vkp__find(p->parent, n->inputs[j])], d);
    }
  }
  // Scratch: first fit among classes whose lifetimes overlap.
  uint64_t align = device->min_storage_alignment > 16 ? device->min_storage_alignment : 16;
  uint64_t scratch_size = 0;
  int32_t *placed = vkp__calloc((size_t)nv + 1, sizeof(int32_t));
  if (!placed) return VKP_OOM("scratch placement");
  int32_t n_placed = 0;
  int32_t scratch_buffer = l->n_buffers;
  for (int32_t v = 0; v < nv; ++v) {
    vkp__class_t *c = &l->classes[v];
    if (vkp__find(p->parent, v) != v || c->buffer >= 0 || c->first < 0) continue;
    uint64_t size = c->bytes < 4 ? 4 : c->bytes;
    uint64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int32_t k = 0; k < n_placed; ++k) {
        const vkp__class_t *o = &l->classes[placed[k]];
        bool live_together = o->first <= c->last && c->first <= o->last;
        uint64_t osize = o->bytes < 4 ? 4 : o->bytes;
        if (live_together && offset < o->offset + osize && o->offset < offset + size) {
          offset = (o->offset + osize + align - 1) / align * align;
          moved = true;
        }
      }
    }
    c->buffer = scratch_buffer;
    c->offset = offset;
    placed[n_placed++] = v;
    if (offset + size > scratch_size) scratch_size = offset + size;
  }
  vkp__free(placed);
  // An empty tensor read by a kernel (a reduction over a zero-sized axis)
  // still needs a non-empty binding (VUID-VkDescriptorBufferInfo-range-00341):
  // it gets 4 dummy scratch bytes the kernel never reads.
  bool empty_read = false;
  for (int32_t v = 0; v < nv; ++v)
    empty_read |= l->classes[v].first >= 0 && l->classes[v].bytes == 0;
  if (empty_read && scratch_size < 4) scratch_size = 4;
  // Kernel temporaries live past every placed class, so they overlap no
  // value; consecutive two-dispatch kernels share them (the runtime orders
  // dispatches whose bindings overlap).
  l->temp_offset = (scratch_size + align - 1) / align * align;
  if (temps) scratch_size = l->temp_offset + temps;
  l->scratch_buffer = -1;
  if (n_placed || empty_read || temps) {
    l->scratch_buffer = l->n_buffers;
    l->buffers[l->n_buffers++] =
        (vkp_spirv_buffer_t){VKP_SPIRV_BUFFER_SCRATCH, -1, scratch_size};
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Dispatch assembly

// The binding of `value` (the destination when output_index >= 0), or of
// its range `part` when the kernel split it into `parts` ranges of
// part_bytes each.
static vkp_status_t vkp__binding_for(const vkp__plan_t *p, const vkp__layout_t *l,
                                     const vkp_spirv_device_info_t *device,
                                     int32_t group, int32_t value, int32_t output_index,
                                     uint32_t part, uint32_t parts,
                                     vkp_spirv_binding_t *out) {
  // Split-K's partial sums may take several ranges too (a convolution's
  // slices are not a choice: see vkp__spv_split_k); a padded copy never
  // does (vkp__spv_kernel_temp).
  const char *name = "split-K partial sums";
  if (value == VKP__KERNEL_TEMP) {
    *out = (vkp_spirv_binding_t){l->scratch_buffer, l->temp_offset, 0};
    if (vkp__spv_kernel_temp(p->g, &p->g->nodes[p->groups[group].anchor], &p->config,
                             &out->range) == VKP__TEMP_CONV_PAD)
      name = "padded convolution input";
  } else {
    name = p->g->values[value].name;
    uint64_t bytes = vkp__stored_bytes(p, value);
    if (output_index >= 0) {
      *out = (vkp_spirv_binding_t){l->output_buffer[output_index], 0, bytes};
    } else if (bytes == 0) {
      *out = (vkp_spirv_binding_t){l->scratch_buffer, 0, 4};
    } else {
      const vkp__class_t *c = &l->classes[vkp__find(p->parent, value)];
      *out = (vkp_spirv_binding_t){c->buffer, c->offset, bytes};
    }
  }
  if (parts > 1) {
    uint64_t skip = (uint64_t)part * p->part_bytes;
    out->offset += skip;
    out->range = out->range - skip < p->part_bytes ? out->range - skip : p->part_bytes;
  }
  if (device->max_storage_range && out->range > device->max_storage_range)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "value '%s' needs %llu bytes in one binding; the "
                           "device's maxStorageBufferRange is %llu",
                           name, (unsigned long long)out->range,
                           (unsigned long long)device->max_storage_range);
  return NULL;
}

static char *vkp__dispatch_name(const vkp_graph_t *g, const vkp__group_t *grp) {
  char name[256] = "";
  size_t used = 0;
  for (int32_t m = -1; m < grp->n_members; ++m) {
    int32_t node = m < 0 ? grp->anchor : grp->members[m];
    if (node < 0) continue;
    int w = snprintf(name + used, sizeof name - used, "%s%s", used ? "+" : "",
                     g->nodes[node].name);
    if (w < 0 || (size_t)w >= sizeof name - used) break;
    used += (size_t)w;
  }
  return vkp__strdup(name);
}

static vkp_status_t vkp__emit_dispatches(vkp__plan_t *p, vkp__layout_t *l,
                                         const vkp_spirv_device_info_t *device,
                                         const vkp_compile_options_t *options,
                                         vkp_spirv_program_t *prog) {
  const vkp_graph_t *g = p->g;
  const vkp__kernel_config_t config = p->config;
  vkp__spirv_compiler_t *compiler = NULL;
  VKP_RETURN_IF_ERROR(vkp__spirv_compiler_create(&compiler));
  prog->dispatches = vkp__calloc((size_t)p->n_dispatches + 1, sizeof(vkp_spirv_dispatch_t));
  vkp_status_t st = prog->dispatches ? NULL : VKP_OOM("dispatches");
  for (int32_t i = 0; i < p->n_dispatches && !st; ++i) {
    const vkp__dispatch_plan_t *dp = &p->dispatches[i];
    vkp_spirv_dispatch_t *d = &prog->dispatches[i];
    prog->n_dispatches = i + 1;
    vkp__kernel_t kernel;
    if (dp->group >= 0) {
      const vkp__group_t *grp = &p->groups[dp->group];
      st = vkp__kernel_emit(g, grp, dp->part, &config, &kernel);
      d->name = vkp__dispatch_name(g, grp);
    } else {
      st = vkp__kernel_emit_copy(vkp__value_bytes(&g->values[dp->copy_src]),
                                 dp->copy_src, &config, &kernel);
      d->name = vkp__asprintf("copy_%s", g->values[dp->dst_value].name);
    }
    if (st) break;
    if (!d->name) st = VKP_OOM("dispatch name");
    memcpy(d->local_size, kernel.local_size, sizeof d->local_size);
    memcpy(d->groups, kernel.groups, sizeof d->groups);
    d->n_bindings = (int32_t)kernel.out_parts;
    for (int32_t j = 0; j < kernel.n_inputs; ++j) d->n_bindings += (int32_t)kernel.parts[j];
    d->bindings = vkp__calloc((size_t)d->n_bindings, sizeof(vkp_spirv_binding_t));
    if (!st && !d->bindings) st = VKP_OOM("bindings");
    int32_t slot = 0;
    for (uint32_t q = 0; q < kernel.out_parts && !st; ++q)
      st = vkp__binding_for(p, l, device, dp->group, dp->dst_value, dp->dst_output, q,
                            kernel.out_parts, &d->bindings[slot++]);
    for (int32_t j = 0; j < kernel.n_inputs && !st; ++j)
      for (uint32_t q = 0; q < kernel.parts[j] && !st; ++q)
        st = vkp__binding_for(p, l, device, dp->group, kernel.inputs[j], -1, q,
                              kernel.parts[j],
                              &d->bindings[slot++]);
    if (!st)
      st = vkp__spirv_compile(compiler, kernel.glsl, d->name, &d->code,
                              &d->code_words);
    if (!st && options && options->dump_dir && !(d->glsl = vkp__strdup(kernel.glsl)))
      st = VKP_OOM("dispatch source");
    if (st) st = vkp_status_annotate(st, "dispatch %d '%s'", (int)i, d->name ? d->name : "?");
    vkp__kernel_deinit(&kernel);
  }
  vkp__spirv_compiler_destroy(compiler);
  return st;
}

vkp_status_t vkp_spirv_codegen(const vkp_graph_t *graph,
                               const vkp_spirv_device_info_t *device,
                               const vkp_compile_options_t *options,
                               vkp_spirv_program_t **out_program) {
  *out_program = NULL;
  if (!graph || !device)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "graph or device is NULL");
  if (!graph->validated)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "graph '%s' is not validated", graph->name);
  for (int32_t i = 0; i < graph->n_nodes; ++i) {
    char reason[256];
    if (!vkp_spirv_supports(graph, &graph->nodes[i], reason, sizeof reason))
      return vkp_status_make(VKP_STATUS_UNSUPPORTED, "node '%s' (%s): %s",
                             graph->nodes[i].name,
                             vkp_op_name(graph->nodes[i].op), reason);
  }
  vkp__plan_t plan = {.g = graph};
  vkp__kernel_config_init(&plan.config, device);
  plan.part_bytes = plan.config.part_bytes;
  vkp__layout_t layout = {0};
  vkp_spirv_program_t *prog = vkp__calloc(1, sizeof(*prog));
  vkp_status_t st = prog ? NULL : VKP_OOM("program");
  if (!st) st = vkp__plan_precision(&plan, device, options);
  plan.config.half_values = plan.half;
  // Matrix units only when asked for (kernels.h: not yet faster).
  plan.config.coopmat = device->coopmat_f16 && plan.config.coopmat_forced;
  if (!st) st = vkp__plan_build(&plan);
  if (!st) st = vkp__layout_build(&plan, device, &layout);
  if (!st) {
    prog->buffers = layout.buffers;
    prog->n_buffers = layout.n_buffers;
    layout.buffers = NULL;
    st = vkp__emit_dispatches(&plan, &layout, device, options, prog);
  }
  vkp__layout_deinit(&layout);
  vkp__plan_deinit(&plan);
  if (st) {
    vkp_spirv_program_destroy(prog);
    return vkp_status_annotate(st, "generating SPIR-V for graph '%s'", graph->name);
  }
  *out_program = prog;
  return NULL;
}
