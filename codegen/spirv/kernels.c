// SPDX-License-Identifier: Apache-2.0
// GLSL for one dispatch: prelude (bindings, helpers, fused epilogue) plus the
// op's template from shaders/ with its shapes as #define constants.
#include "codegen/spirv/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "codegen/expr.h"
#include "codegen/spirv/glsl.h"

// ---------------------------------------------------------------------------
// Classification

// The op table decides what fuses into a loop over the output and what is a
// view; the kernels below decide what this generator can run at all
// (vkp_spirv_dtypes in codegen.c).
bool vkp__op_is_elementwise(vkp_op_t op) {
  return vkp_op_pattern(op) <= VKP_OP_PATTERN_BROADCAST;
}

bool vkp__op_is_alias(vkp_op_t op) { return vkp_op_is_view(op); }

bool vkp__op_takes_epilogue(vkp_op_t op) { return op != VKP_OP_CONCAT; }

void vkp__kernel_config_init(vkp__kernel_config_t *config,
                             const vkp_spirv_device_info_t *device) {
  enum { VKP__DEVICE_TYPE_CPU = 4 };  // VK_PHYSICAL_DEVICE_TYPE_CPU
  config->gemm_tiled = device->device_type != VKP__DEVICE_TYPE_CPU &&
                       device->max_shared_memory >= 8192 &&
                       device->max_invocations >= 256 &&
                       device->max_group_size[0] >= 16 &&
                       device->max_group_size[1] >= 16;
  const char *force = getenv("VKPIPE_SPIRV_GEMM");
  if (force && strcmp(force, "tiled") == 0) config->gemm_tiled = true;
  if (force && strcmp(force, "blocked") == 0) config->gemm_tiled = false;
  // Cooperative matrices need --precision fp16 (codegen.c turns them on) or
  // this override, and the device (checked there too).
  config->coopmat = false;
  config->coopmat_forced = force && strcmp(force, "coopmat") == 0;
  // Group-1 convolutions run as an implicit GEMM (the variant above picks
  // its blocked or tiled form) when wide enough; see kernels.h.
  const char *conv = getenv("VKPIPE_SPIRV_CONV");
  config->conv_gemm = -1;
  if (conv && strcmp(conv, "gemm") == 0) config->conv_gemm = 1;
  if (conv && strcmp(conv, "direct") == 0) config->conv_gemm = 0;
  uint32_t local = 64;
  if (device->subgroup_size > local && device->subgroup_size <= 1024)
    local = device->subgroup_size;
  if (device->max_invocations && local > device->max_invocations)
    local = device->max_invocations;
  if (device->max_group_size[0] && local > device->max_group_size[0])
    local = device->max_group_size[0];
  config->local_1d = local ? local : 1;
  uint32_t wg = 256;
  while (wg > 1 && ((device->max_invocations && wg > device->max_invocations) ||
                    (device->max_group_size[0] && wg > device->max_group_size[0]) ||
                    wg * 4u > device->max_shared_memory))
    wg /= 2;
  config->row_wg = wg;
  config->rows_workgroup = device->device_type != VKP__DEVICE_TYPE_CPU && wg >= 32 &&
                           wg >= device->subgroup_size;
  config->rows_forced = false;
  const char *rows = getenv("VKPIPE_SPIRV_ROWS");
  if (rows && strcmp(rows, "workgroup") == 0) {
    config->rows_workgroup = wg >= device->subgroup_size;
    config->rows_forced = true;
  }
  if (rows && strcmp(rows, "thread") == 0) config->rows_workgroup = false;
  const char *sg = getenv("VKPIPE_SPIRV_SUBGROUP");
  config->rows_subgroup = device->subgroup_arith && !(sg && strcmp(sg, "off") == 0);
  uint64_t align = device->min_storage_alignment > 16 ? device->min_storage_alignment : 16;
  config->part_bytes = device->max_storage_range / align * align;
  config->half_values = NULL;
  config->split_k = -1;
  const char *split = getenv("VKPIPE_SPIRV_SPLITK");
  if (split && strcmp(split, "on") == 0) config->split_k = 1;
  if (split && strcmp(split, "off") == 0) config->split_k = 0;
  // Never by shape on CPU devices (lavapipe: a thread per core runs whole
  // workgroups): the second pass cost more than it gained even for a
  // single tile (8x4096x64: 4.6 ms split in 2, 3.4 ms unsplit; 8x4096x256:
  // 35 ms vs 25 ms).
  config->split_k_groups = device->device_type == VKP__DEVICE_TYPE_CPU ? 0 : 128;
  const char *dw = getenv("VKPIPE_SPIRV_DEPTHWISE");
  config->depthwise = !(dw && strcmp(dw, "direct") == 0);
  const char *pad = getenv("VKPIPE_SPIRV_CONV_PAD");
  config->conv_pad = !(pad && strcmp(pad, "off") == 0);
}

// The [batch, m, n] product and its depth k of MatMul/Gemm `n`.
static void vkp__gemm_shape(const vkp_graph_t *g, const vkp_node_t *n, int64_t *m,
                            int64_t *nn, int64_t *k, int64_t *batch) {
  const vkp_value_t *a = vkp__spv_input(g, n, 0), *b = vkp__spv_input(g, n, 1);
  const vkp_value_t *y = &g->values[n->outputs[0]];
  *batch = 1;
  if (n->op == VKP_OP_GEMM) {
    bool ta = vkp_node_int(n, "transA") != 0, tb = vkp_node_int(n, "transB") != 0;
    *m = ta ? a->shape[1] : a->shape[0];
    *k = ta ? a->shape[0] : a->shape[1];
    *nn = tb ? b->shape[0] : b->shape[1];
    return;
  }
  *k = a->shape[a->rank - 1];
  *m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
  *nn = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
  int32_t out_batch_rank = y->rank - (a->rank >= 2) - (b->rank >= 2);
  for (int32_t d = 0; d < out_batch_rank; ++d) *batch *= y->shape[d];
}

// A kernel whose reduction would loop past VKP__SPV_LOOP_BUDGET runs it in
// slices of at most VKP__LOOP_CHUNK steps, one back-edge each, which leaves
// room for the kernel's other loops.
#define VKP__LOOP_BUDGET VKP__SPV_LOOP_BUDGET
#define VKP__LOOP_CHUNK 32768u

static uint64_t vkp__conv_loop_iterations(const vkp_graph_t *g, const vkp_node_t *n);
static uint64_t vkp__conv_reduction(const vkp_graph_t *g, const vkp_node_t *n);

// Convolution split-K: slices of the reduction over (input channels of a
// group) x taps, when the unsplit kernels would pass the loop budget, or
// (<= 4 slices, any reduction of 2 or more) under VKPIPE_SPIRV_SPLITK=on.
static uint32_t vkp__conv_split_k(const vkp_graph_t *g, const vkp_node_t *n,
                                  const vkp__kernel_config_t *config, uint64_t *out_kslice,
                                  uint64_t *out_partial_bytes) {
  uint64_t kr = vkp__conv_reduction(g, n), slices;
  if (vkp__conv_loop_iterations(g, n) > VKP__LOOP_BUDGET) {
    // Two at least: the split kernel's one flat loop may fit where the
    // unsplit kernels' nest does not.
    slices = (kr + VKP__LOOP_CHUNK - 1) / VKP__LOOP_CHUNK;
    if (slices < 2) slices = 2;
  } else if (config->split_k > 0 && kr >= 2) {
    slices = kr < 4 ? kr : 4;
  } else {
    return 1;
  }
  uint64_t kslice = (kr + slices - 1) / slices;
  slices = (kr + kslice - 1) / kslice;  // no empty slice
  if (slices < 2 || slices > 65535) return 1;
  if (out_kslice) *out_kslice = kslice;
  if (out_partial_bytes)
    *out_partial_bytes = slices * vkp__spv_numel(&g->values[n->outputs[0]]) * 4u;
  return (uint32_t)slices;
}

uint32_t vkp__spv_split_k(const vkp_graph_t *g, const vkp_node_t *n,
                          const vkp__kernel_config_t *config, uint64_t *out_kslice,
                          uint64_t *out_partial_bytes) {
  int64_t m, nn, k, batch;
  if (out_kslice) *out_kslice = 0;
  if (out_partial_bytes) *out_partial_bytes = 0;
  if (n->op == VKP_OP_CONV2D || n->op == VKP_OP_CONV_TRANSPOSE)
    return vkp__conv_split_k(g, n, config, out_kslice, out_partial_bytes);
  if (n->op != VKP_OP_MATMUL && n->op != VKP_OP_GEMM) return 1;
  vkp__gemm_shape(g, n, &m, &nn, &k, &batch);
  // Past the loop budget the split is not a choice: one invocation of the
  // blocked kernel loops over its whole K slice (the tiled one over a
  // sixteenth of it, with short inner loops), whatever VKPIPE_SPIRV_SPLITK
  // says.
  uint64_t min_slices = ((uint64_t)k + VKP__LOOP_CHUNK - 1) / VKP__LOOP_CHUNK;
  if (config->split_k == 0 && min_slices < 2) return 1;
  uint64_t slices = 1, unit = 64;
  if (config->split_k == 0) {
    slices = min_slices;
  } else if (config->split_k > 0) {
    if (k < 32) return 1;
    slices = (uint64_t)(k + 15) / 16;
    if (slices > 4) slices = 4;
    unit = 16;
  } else {
    uint64_t tiles = (uint64_t)((m + 63) / 64) * (uint64_t)((nn + 63) / 64) * (uint64_t)batch;
    if (k >= 1024 && tiles < config->split_k_groups) {
      slices = config->split_k_groups / tiles;
      if (slices > (uint64_t)k / 256) slices = (uint64_t)k / 256;
      if (slices > 32) slices = 32;
    }
  }
  if (slices < min_slices) slices = min_slices;
  uint64_t total = (uint64_t)(batch * m * nn);
  // By choice, the partial sums must fit one binding and the grid's z
  // dimension; the budget's slices are kept even when the partials take
  // several bindings.
  while (slices > 1 && slices > min_slices &&
         ((config->part_bytes && slices * total * 4 > config->part_bytes) ||
          slices * (uint64_t)batch > 65535))
    --slices;
  if (slices < 2 || slices * (uint64_t)batch > 65535) return 1;
  uint64_t kslice = ((uint64_t)k + slices - 1) / slices;
  kslice = (kslice + unit - 1) / unit * unit;  // tiled: a multiple of BK
  slices = ((uint64_t)k + kslice - 1) / kslice;  // no empty slice
  if (slices < 2) return 1;
  if (out_kslice) *out_kslice = kslice;
  if (out_partial_bytes) *out_partial_bytes = slices * total * 4;
  return (uint32_t)slices;
}

uint32_t vkp__spv_parts(uint64_t bytes, uint64_t part_bytes) {
  if (part_bytes == 0 || bytes <= part_bytes) return 1;
  uint64_t parts = (bytes + part_bytes - 1) / part_bytes;
  return parts > UINT32_MAX ? UINT32_MAX : (uint32_t)parts;
}

bool vkp__spv_splits_input(vkp_op_t op, int32_t i) {
  switch (op) {
    case VKP_OP_MATMUL: case VKP_OP_GEMM: return i <= 1;   // A, B (not C)
    case VKP_OP_CONV2D: return i <= 1;                      // x, weights
    case VKP_OP_GATHER: return i == 0;                      // the table
    default: return vkp__op_is_elementwise(op);
  }
}

static uint64_t vkp__value_size(const vkp_value_t *v) {
  size_t bytes = 0;
  if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes)) return UINT64_MAX;
  return bytes;
}

void vkp__kernel_deinit(vkp__kernel_t *kernel) {
  vkp__free(kernel->glsl);
  memset(kernel, 0, sizeof(*kernel));
}

// ---------------------------------------------------------------------------
// Helpers

const vkp_value_t *vkp__spv_input(const vkp_graph_t *g,
                                       const vkp_node_t *n, int32_t i) {
  if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  return &g->values[n->inputs[i]];
}

// How Vulkan kernels hold each dtype: the element type of its buffer
// bindings, the type a kernel computes in, and the conversion a load wraps
// around a stored element (prefix, suffix). Narrow types (bool, 8- and
// 16-bit integers, float16, bfloat16) widen on load and narrow on store;
// float16 and bfloat16 compute in float32 (bfloat16 is the high half of a
// float32: widened by a shift, narrowed by vkp_bf16, rounding to nearest
// even as base/scalar.c does), bool as 0.0/1.0.
//   X(dtype, storage, value, load prefix, load suffix)
#define VKP__SPV_DTYPE_LIST(X)                      \
  X(FLOAT32, "float", "float", "", "")              \
  X(FLOAT16, "float16_t", "float", "float(", ")")   \
  X(FLOAT64, "double", "double", "", "")            \
  X(INT8, "int8_t", "int", "int(", ")")             \
  X(UINT8, "uint8_t", "uint", "uint(", ")")         \
  X(INT16, "int16_t", "int", "int(", ")")           \
  X(UINT16, "uint16_t", "uint", "uint(", ")")       \
  X(INT32, "int", "int", "", "")                    \
  X(UINT32, "uint", "uint", "", "")                 \
  X(INT64, "int64_t", "int64_t", "", "")            \
  X(UINT64, "uint64_t", "uint64_t", "", "")         \
  X(BFLOAT16, "uint16_t", "float", "uintBitsToFloat(uint(", ") << 16u)") \
  X(BOOL, "uint8_t", "float", "float(uint(", "))")

typedef struct vkp__spv_dtype_t {
  bool carried;
  const char *storage, *value, *load_prefix, *load_suffix;
} vkp__spv_dtype_t;

static const vkp__spv_dtype_t vkp__spv_dtypes[VKP_DTYPE_COUNT] = {
#define VKP__SPV_DTYPE_ROW(dt, st, vt, lp, ls) [VKP_DTYPE_##dt] = {true, st, vt, lp, ls},
    VKP__SPV_DTYPE_LIST(VKP__SPV_DTYPE_ROW)
#undef VKP__SPV_DTYPE_ROW
};

static const vkp__spv_dtype_t *vkp__spv_dtype(vkp_dtype_t dt) {
  return (unsigned)dt < VKP_DTYPE_COUNT && vkp__spv_dtypes[dt].carried
             ? &vkp__spv_dtypes[dt]
             : &vkp__spv_dtypes[VKP_DTYPE_FLOAT32];
}

bool vkp__spv_is_int(vkp_dtype_t dt) {
  vkp_dtype_kind_t kind = vkp_dtype_kind(dt);
  return kind == VKP_DTYPE_KIND_INT || kind == VKP_DTYPE_KIND_UINT;
}

bool vkp__spv_is_64bit(vkp_dtype_t dt) {
  return dt == VKP_DTYPE_INT64 || dt == VKP_DTYPE_UINT64;
}

bool vkp__spv_is_narrow(vkp_dtype_t dt) {
  return vkp__spv_dtype(dt)->load_prefix[0] != '\0';
}

const char *vkp__spv_storage_type(vkp_dtype_t dt) { return vkp__spv_dtype(dt)->storage; }

const char *vkp__spv_value_type(vkp_dtype_t dt) { return vkp__spv_dtype(dt)->value; }

// The anchor's input slot bound at binding 1 + i (omitted inputs are not
// bound, so later ones move up).
int32_t vkp__anchor_input_slot(const vkp_node_t *anchor, int32_t i) {
  for (int32_t j = 0; j < anchor->n_inputs; ++j) {
    if (anchor->inputs[j] < 0) continue;
    if (i-- == 0) return anchor->op == VKP_OP_CONCAT ? 0 : j;
  }
  return -1;
}

uint64_t vkp__spv_numel(const vkp_value_t *v) {
  uint64_t n = 1;
  for (int32_t i = 0; i < v->rank; ++i) n *= (uint64_t)v->shape[i];
  return n;
}

void vkp__spv_strides(const vkp_value_t *v, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = v->rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= v->shape[i];
  }
}

// uint fname(uint o): base + sum_d coord_d(o) * coef_d, where coord_d is the
// d-th coordinate of o in the row-major `shape`.
void vkp__spv_affine(vkp__sb_t *sb, const char *fname, int32_t rank,
                             const int64_t *shape, const int64_t *coefs,
                             int64_t base) {
  vkp__sb_printf(sb, "uint %s(uint o) {\n  int i = %lld;\n", fname,
                 (long long)base);
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    if (coefs[d] != 0 && shape[d] != 1) {
      if (d == 0)
        vkp__sb_printf(sb, "  i += int(o / %lluu) * (%lld);\n",
                       (unsigned long long)stride, (long long)coefs[d]);
      else
        vkp__sb_printf(sb, "  i += int((o / %lluu) %% %lluu) * (%lld);\n",
                       (unsigned long long)stride,
                       (unsigned long long)shape[d], (long long)coefs[d]);
    }
    stride *= shape[d];
  }
  vkp__sb_append(sb, "  return uint(i);\n}\n");
}

// Index into `in` for output element o of shape `out` (numpy broadcasting).
void vkp__spv_broadcast(vkp__sb_t *sb, const char *fname,
                                const vkp_value_t *in, int32_t out_rank,
                                const int64_t *out_shape) {
  int64_t in_strides[VKP_MAX_RANK], coefs[VKP_MAX_RANK];
  vkp__spv_strides(in, in_strides);
  for (int32_t d = 0; d < out_rank; ++d) {
    int32_t id = d - (out_rank - in->rank);
    coefs[d] = (id >= 0 && in->shape[id] == out_shape[d] && in->shape[id] != 1)
                   ? in_strides[id]
                   : 0;
  }
  vkp__spv_affine(sb, fname, out_rank, out_shape, coefs, 0);
}

// Index into a per-channel vector [C] for output element o of shape `out`
// (channel axis 1: batch_norm's parameters).
static void vkp__emit_channel(vkp__sb_t *sb, const char *fname, int32_t out_rank,
                              const int64_t *out_shape) {
  int64_t coefs[VKP_MAX_RANK] = {0};
  coefs[1] = 1;
  vkp__spv_affine(sb, fname, out_rank, out_shape, coefs, 0);
}

// ---------------------------------------------------------------------------
// Prelude and epilogue


static int32_t vkp__bind_input(vkp__kernel_t *k, int32_t value) {
  if (k->n_inputs >= VKP__MAX_BINDINGS) return -1;
  k->inputs[k->n_inputs] = value;
  return ++k->n_inputs;  // binding number
}

static bool vkp__is_member_output(const vkp_graph_t *g,
                                  const vkp__group_t *group, int32_t value,
                                  int32_t *out_node) {
  for (int32_t i = 0; i < group->n_members; ++i) {
    const vkp_node_t *n = &g->nodes[group->members[i]];
    if (n->outputs[0] == value) {
      *out_node = group->members[i];
      return true;
    }
  }
  return false;
}

int32_t vkp__group_epilogue_inputs(const vkp_graph_t *g,
                                   const vkp__group_t *group) {
  int32_t seen[VKP__MAX_BINDINGS * 8], n_seen = 0;
  int32_t anchor_out = group->anchor >= 0 ? g->nodes[group->anchor].outputs[0] : -1;
  for (int32_t i = 0; i < group->n_members; ++i) {
    const vkp_node_t *n = &g->nodes[group->members[i]];
    for (int32_t j = 0; j < n->n_inputs; ++j) {
      int32_t v = n->inputs[j], producer;
      if (v < 0 || v == anchor_out || vkp__is_member_output(g, group, v, &producer))
        continue;
      bool dup = false;
      for (int32_t s = 0; s < n_seen; ++s) dup |= seen[s] == v;
      if (!dup && n_seen < (int32_t)(sizeof seen / sizeof seen[0]))
        seen[n_seen++] = v;
    }
  }
  return n_seen;
}

int32_t vkp__anchor_bindings(const vkp_graph_t *g, int32_t anchor,
                             uint64_t part_bytes) {
  const vkp_node_t *n = &g->nodes[anchor];
  if (n->op == VKP_OP_CONCAT) return 1;
  // The destination's extra parts (binding 0 is counted by the caller).
  int64_t count =
      (int64_t)vkp__spv_parts(vkp__value_size(&g->values[n->outputs[0]]), part_bytes) - 1;
  for (int32_t i = 0; i < n->n_inputs; ++i)
    if (n->inputs[i] >= 0)
      count += vkp__spv_parts(vkp__value_size(&g->values[n->inputs[i]]), part_bytes);
  return count > INT32_MAX ? INT32_MAX : (int32_t)count;
}

// The GLSL expression of elementwise member `n` over its operands `args`
// ("": an omitted input), from the generator's op table
// (codegen/spirv/ops.c).
static vkp_status_t vkp__emit_op_expr(vkp__sb_t *sb, const vkp_graph_t *g,
                                      const vkp_node_t *n, char args[][48],
                                      int32_t n_args) {
  const char *operands[VKP__MAX_BINDINGS];
  for (int32_t i = 0; i < VKP__MAX_BINDINGS; ++i)
    operands[i] = i < n_args && args[i][0] ? args[i] : NULL;
  vkp_dtype_t out_dt = g->values[n->outputs[0]].dtype;
  if (n->op == VKP_OP_CAST) {
    // A bool is 0.0/1.0 inside a kernel: any non-zero value casts to 1.0;
    // everything else converts with GLSL's constructors (float to integer
    // truncates toward zero, as C and ONNX do).
    vkp_dtype_t in_dt = g->values[n->inputs[0]].dtype;
    if (out_dt == VKP_DTYPE_BOOL)
      vkp__sb_printf(sb, "float(%s != %s(0))", args[0], vkp__spv_value_type(in_dt));
    else
      vkp__sb_printf(sb, "%s(%s)", vkp__spv_value_type(out_dt), args[0]);
    return NULL;
  }
  // Integer data takes the row's integer form where it has one.
  bool ints = vkp__spv_is_int(out_dt);
  for (int32_t i = 0; i < n->n_inputs; ++i)
    ints |= n->inputs[i] >= 0 && vkp__spv_is_int(g->values[n->inputs[i]].dtype);
  char text[2048];
  const char *tmpl = ints && vkp__glsl_int_expr(n->op) ? vkp__glsl_int_expr(n->op)
                                                       : vkp__glsl_expr(n->op);
  if (!tmpl || !vkp_codegen_expr_render(tmpl, n, operands, n_args,
                                        vkp__spv_value_type(out_dt),
                                        vkp__glsl_literal, text, sizeof text))
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "node '%s': no GLSL expression for %s", n->name,
                           vkp_op_name(n->op));
  vkp__sb_append(sb, text);
  return NULL;
}

// The value the dispatch writes: the root's output, or output `part` of an
// anchor that writes several (top_k).
static const vkp_value_t *vkp__written(const vkp__emit_t *e) {
  const vkp_node_t *root = &e->g->nodes[e->group->root];
  if (root->n_outputs > 1 && vkp__spv_writes_outputs(root->op))
    return &e->g->values[root->outputs[e->part]];
  return &e->g->values[root->outputs[0]];
}

// vkp_epilogue(acc, o): the fused members, one local per member, in order.
static vkp_status_t vkp__emit_epilogue(vkp__emit_t *e) {
  const vkp_graph_t *g = e->g;
  const vkp__group_t *group = e->group;
  const vkp_value_t *root = vkp__written(e);
  int32_t anchor_out = group->anchor >= 0 ? g->nodes[group->anchor].outputs[0] : -1;
  int32_t ext_value[VKP__MAX_BINDINGS], ext_binding[VKP__MAX_BINDINGS], n_ext = 0;
  bool ext_channel[VKP__MAX_BINDINGS];  // indexed per channel (batch_norm)
  vkp__sb_t fn;
  vkp__sb_init(&fn);
  vkp__sb_printf(&fn, "%s vkp_epilogue(ACC_T acc, uint o) {\n",
                 vkp__spv_value_type(root->dtype));
  for (int32_t i = 0; i < group->n_members; ++i) {
    const vkp_node_t *n = &g->nodes[group->members[i]];
    // vkp_spirv_supports admits at most VKP__MAX_BINDINGS - 1 inputs.
    char args[VKP__MAX_BINDINGS][48] = {{0}};
    int32_t n_args = n->n_inputs < VKP__MAX_BINDINGS ? n->n_inputs : VKP__MAX_BINDINGS;
    for (int32_t j = 0; j < n_args; ++j) {
      int32_t v = n->inputs[j], producer;
      if (v < 0) {
        continue;  // omitted: the expression falls back to an attribute
      } else if (v == anchor_out) {
        snprintf(args[j], sizeof args[j], "acc");
      } else if (vkp__is_member_output(g, group, v, &producer)) {
        snprintf(args[j], sizeof args[j], "v%d", (int)producer);
      } else {
        int32_t binding = -1;
        bool channel = n->op == VKP_OP_BATCH_NORM && j > 0;
        for (int32_t s = 0; s < n_ext; ++s)
          if (ext_value[s] == v && ext_channel[s] == channel) binding = ext_binding[s];
        if (binding < 0) {
          binding = vkp__bind_input(e->k, v);
          if (binding < 0 || n_ext >= VKP__MAX_BINDINGS) {
            vkp__sb_deinit(&fn);
            return vkp_status_make(VKP_STATUS_INTERNAL,
                                   "fused group '%s' needs more than %d bindings",
                                   g->nodes[group->root].name, VKP__MAX_BINDINGS);
          }
          ext_value[n_ext] = v;
          ext_channel[n_ext] = channel;
          ext_binding[n_ext++] = binding;
          char fname[32];
          snprintf(fname, sizeof fname, "vkp_idx%d", (int)binding);
          if (channel)
            vkp__emit_channel(&e->head, fname, root->rank, root->shape);
          else
            vkp__spv_broadcast(&e->head, fname, &g->values[v], root->rank,
                                root->shape);
        }
        // ld<i> widens narrow values (bool to 0.0/1.0).
        snprintf(args[j], sizeof args[j], "ld%d(vkp_idx%d(o))", (int)binding, (int)binding);
      }
    }
    vkp__sb_printf(&fn, "  %s v%d = ", vkp__spv_value_type(g->values[n->outputs[0]].dtype),
                   (int)group->members[i]);
    vkp_status_t st = vkp__emit_op_expr(&fn, g, n, args, n_args);
    if (st) {
      vkp__sb_deinit(&fn);
      return st;
    }
    vkp__sb_printf(&fn, ";  // %s '%s'\n", vkp_op_name(n->op), n->name);
  }
  if (group->n_members > 0)
    vkp__sb_printf(&fn, "  return v%d;\n}\n", (int)group->root);
  else
    vkp__sb_append(&fn, "  return acc;\n}\n");
  vkp_status_t st = vkp__sb_status(&fn, "epilogue");
  if (!st) vkp__sb_append(&e->head, fn.data);
  vkp__sb_deinit(&fn);
  return st;
}

static bool vkp__is_half(const vkp__emit_t *e, int32_t value) {
  return e->g && e->config->half_values && value >= 0 && e->config->half_values[value];
}

// Declares the destination and the inputs, each as one binding or, when
// larger than config->part_bytes, as consecutive ranges with an accessor
// that picks the range: ld<i>(idx) for input i (b<i> when not split), and
// vkp_put(o, v) for a split destination. Anchor input j is also IN<j> (when
// not split) and LD<j>(idx).
static vkp_status_t vkp__declare_bindings(vkp__emit_t *e, vkp__sb_t *sb,
                                          vkp_dtype_t out_dt, const bool *words) {
  vkp__kernel_t *k = e->k;
  uint64_t part = e->config->part_bytes;
  uint32_t binding = 0;
  k->out_parts = 1;
  if (e->out_bytes)
    k->out_parts = vkp__spv_parts(e->out_bytes, part);
  else if (e->g && e->group->root >= 0)
    k->out_parts = vkp__spv_parts(vkp__value_size(vkp__written(e)), part);
  uint64_t total = k->out_parts;
  for (int32_t i = 0; i < k->n_inputs; ++i) {
    uint64_t bytes = 0;
    if (k->inputs[i] == VKP__KERNEL_TEMP)
      vkp__spv_kernel_temp(e->g, &e->g->nodes[e->group->anchor], e->config, &bytes);
    else if (e->g)
      bytes = vkp__value_size(&e->g->values[k->inputs[i]]);
    if (vkp__is_half(e, k->inputs[i])) bytes /= 2;
    k->parts[i] = vkp__spv_parts(bytes, part);
    total += k->parts[i];
  }
  if (total > VKP__MAX_BINDINGS)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "'%s' needs %llu bindings once its tensors larger than "
                           "%llu bytes (maxStorageBufferRange) are split; a "
                           "dispatch has at most %d",
                           e->g ? e->g->nodes[e->group->root].name : "copy",
                           (unsigned long long)total, (unsigned long long)part,
                           VKP__MAX_BINDINGS);
  const char *out_type = vkp__spv_storage_type(out_dt);
  uint64_t out_elems = part / vkp_dtype_size(out_dt);
  if (k->out_parts == 1) {
    vkp__sb_printf(sb,
                   "layout(std430, set = 0, binding = 0) writeonly buffer B0 { "
                   "%s b0[]; };\n#define OUT b0\n",
                   out_type);
    binding = 1;
  } else {
    for (uint32_t p = 0; p < k->out_parts; ++p)
      vkp__sb_printf(sb,
                     "layout(std430, set = 0, binding = %u) writeonly buffer B0_%u "
                     "{ %s b0_%u[]; };\n",
                     (unsigned)binding++, (unsigned)p, out_type, (unsigned)p);
    vkp__sb_printf(sb, "void vkp_put(uint o, %s v) {\n", out_type);
    for (uint32_t p = 0; p + 1 < k->out_parts; ++p)
      vkp__sb_printf(sb, "  if (o < %lluu) { b0_%u[o - %lluu] = v; return; }\n",
                     (unsigned long long)((p + 1) * out_elems), (unsigned)p,
                     (unsigned long long)(p * out_elems));
    vkp__sb_printf(sb, "  b0_%u[o - %lluu] = v;\n}\n", (unsigned)(k->out_parts - 1),
                   (unsigned long long)((k->out_parts - 1) * out_elems));
  }
  for (int32_t i = 0; i < k->n_inputs; ++i) {
    // Index inputs (words[i]: gather's indices) are read as 32-bit words:
    // an int32 per word, an int64 as two, low word first; other data in
    // its storage type (bool and (u)int8 as bytes, widened by the reader).
    vkp_dtype_t dt = e->g && k->inputs[i] >= 0 ? e->g->values[k->inputs[i]].dtype
                                                 : VKP_DTYPE_FLOAT32;
    bool half = vkp__is_half(e, k->inputs[i]);
    // ld<i> returns the value type: narrow storage (bool, 8/16-bit, float16,
    // a constant kept as float16) widens there, and such an input has no
    // IN<j> (its template must read through LD<j>).
    const vkp__spv_dtype_t *d = vkp__spv_dtype(dt);
    const char *type = words[i] ? "uint" : d->value;
    const char *store = words[i] ? "uint" : half ? "float16_t" : d->storage;
    const char *open = words[i] ? "" : half ? "float(" : d->load_prefix;
    const char *close = words[i] ? "" : half ? ")" : d->load_suffix;
    bool widened = open[0] != '\0';
    int name = (int)i + 1;
    if (k->parts[i] == 1) {
      vkp__sb_printf(sb,
                     "layout(std430, set = 0, binding = %u) readonly buffer B%d "
                     "{ %s b%d[]; };\n#define ld%d(i) %sb%d[i]%s\n",
                     (unsigned)binding++, name, store, name, name, open, name, close);
      if (i < e->n_anchor_inputs && !widened)
        vkp__sb_printf(sb, "#define IN%d b%d\n", (int)i, name);
      // RAW<j>: the stored elements as they are (a copy of any dtype).
      if (i < e->n_anchor_inputs) vkp__sb_printf(sb, "#define RAW%d b%d\n", (int)i, name);
    } else {
      uint64_t elems = part / (half ? 2 : words[i] ? 4 : vkp_dtype_size(dt));
      for (uint32_t p = 0; p < k->parts[i]; ++p)
        vkp__sb_printf(sb,
                       "layout(std430, set = 0, binding = %u) readonly buffer B%d_%u "
                       "{ %s b%d_%u[]; };\n",
                       (unsigned)binding++, name, (unsigned)p, store, name, (unsigned)p);
      vkp__sb_printf(sb, "%s ld%d(uint i) {\n", type, name);
      for (uint32_t p = 0; p + 1 < k->parts[i]; ++p)
        vkp__sb_printf(sb, "  if (i < %lluu) return %sb%d_%u[i - %lluu]%s;\n",
                       (unsigned long long)((p + 1) * elems), open, name, (unsigned)p,
                       (unsigned long long)(p * elems), close);
      vkp__sb_printf(sb, "  return %sb%d_%u[i - %lluu]%s;\n}\n", open, name,
                     (unsigned)(k->parts[i] - 1),
                     (unsigned long long)((k->parts[i] - 1) * elems), close);
    }
    if (i < e->n_anchor_inputs)
      vkp__sb_printf(sb, "#define LD%d(i) ld%d(i)\n", (int)i, name);
  }
  return NULL;
}

// Assembles the final text: header, bindings, math helpers, the head
// (index helpers, epilogue) and the body (op constants + template).
static vkp_status_t vkp__finish(vkp__emit_t *e, const char *what) {
  vkp__kernel_t *k = e->k;
  vkp__sb_t sb;
  vkp__sb_init(&sb);
  vkp__sb_printf(&sb, "#version 450\n// vkpipe kernel: %s\n", what);
  vkp__sb_printf(&sb,
                 "layout(local_size_x = %u, local_size_y = %u, local_size_z = "
                 "%u) in;\n",
                 (unsigned)k->local_size[0], (unsigned)k->local_size[1],
                 (unsigned)k->local_size[2]);
  // Bool tensors are bytes (GL_EXT_shader_8bit_storage; the device enables
  // storageBuffer8BitAccess, vkp_spirv_supports_on): loaded as 0.0/1.0,
  // stored as 0/1; (u)int8 ones are widened on load and wrapped on store.
  // int64 tensors are int64_t (GL_EXT_shader_explicit_arithmetic_types_
  // int64; the device enables shaderInt64), int32 ones int. A kernel's
  // temporary (split-K's partial sums, a padded copy) is float32.
  const vkp_graph_t *g = e->g;
  const vkp_node_t *anchor = e->group->anchor >= 0 ? &g->nodes[e->group->anchor] : NULL;
  vkp_dtype_t out_dt = e->out_bytes ? VKP_DTYPE_FLOAT32 : vkp__written(e)->dtype;
  vkp_dtype_t acc_dt = !anchor || e->out_bytes ? VKP_DTYPE_FLOAT32
                       : anchor->n_outputs > 1 ? out_dt
                                               : g->values[anchor->outputs[0]].dtype;
  bool bytes = vkp_dtype_size(out_dt) == 1, int64 = false, half = vkp_dtype_size(out_dt) == 2;
  bool f64 = out_dt == VKP_DTYPE_FLOAT64 || acc_dt == VKP_DTYPE_FLOAT64;
  bool words[VKP__MAX_BINDINGS] = {false};
  for (int32_t i = 0; i < k->n_inputs; ++i) {
    half |= vkp__is_half(e, k->inputs[i]);
    if (k->inputs[i] < 0) continue;  // a kernel's temporary: float32
    // Index inputs (gather's indices) are read as 32-bit words: an int32
    // per word, an int64 as two, low word first; no int64 arithmetic needed.
    vkp_dtype_t dt = g->values[k->inputs[i]].dtype;
    words[i] = anchor && i < e->n_anchor_inputs &&
               (dt == VKP_DTYPE_INT32 || dt == VKP_DTYPE_INT64) &&
               vkp__spv_is_index_input(anchor->op, vkp__anchor_input_slot(anchor, i));
    bytes |= vkp_dtype_size(dt) == 1;
    half |= vkp_dtype_size(dt) == 2;
    f64 |= dt == VKP_DTYPE_FLOAT64;
    int64 |= vkp__spv_is_64bit(dt) && !words[i];
  }
  int64 |= vkp__spv_is_64bit(out_dt) || vkp__spv_is_64bit(acc_dt);
  for (int32_t m = 0; m < e->group->n_members; ++m) {
    vkp_dtype_t dt = g->values[g->nodes[e->group->members[m]].outputs[0]].dtype;
    int64 |= vkp__spv_is_64bit(dt);
    f64 |= dt == VKP_DTYPE_FLOAT64;
  }
  for (int32_t o = 1; anchor && o < anchor->n_outputs; ++o)
    int64 |= anchor->outputs[o] >= 0 && vkp__spv_is_64bit(g->values[anchor->outputs[o]].dtype);
  if (bytes) vkp__sb_append(&sb, "#extension GL_EXT_shader_8bit_storage : require\n");
  if (half) vkp__sb_append(&sb, "#extension GL_EXT_shader_16bit_storage : require\n");
  // VKP_INT64 turns on math.glsl's 64-bit helpers.
  if (int64)
    vkp__sb_append(&sb,
                   "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
                   "#define VKP_INT64 1\n");
  // VKP_FLOAT64: math.glsl's double helpers (the device enables
  // shaderFloat64, vkp_spirv_supports_on).
  if (f64) vkp__sb_append(&sb, "#define VKP_FLOAT64 1\n");
  if (e->subgroup)
    vkp__sb_append(&sb,
                   "#extension GL_KHR_shader_subgroup_basic : require\n"
                   "#extension GL_KHR_shader_subgroup_arithmetic : require\n");
  if (e->coopmat)
    vkp__sb_append(&sb,
                   "#extension GL_NV_cooperative_matrix : require\n"
                   "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
                   "#extension GL_KHR_memory_scope_semantics : require\n"
                   "#extension GL_KHR_shader_subgroup_basic : require\n");
  vkp_status_t st = vkp__declare_bindings(e, &sb, out_dt, words);
  if (st) {
    vkp__sb_deinit(&sb);
    return st;
  }
  // ACC_T: the type the anchor hands its epilogue (OUT_T: the one stored).
  vkp__sb_printf(&sb, "#define ACC_T %s\n#define OUT_T %s\n",
                 vkp__spv_value_type(acc_dt), vkp__spv_value_type(out_dt));
  vkp__sb_append(&sb, vkp__shader_text(VKP__SHADER_math));
  vkp__sb_append(&sb, e->head.data ? e->head.data : "");
  // VKP_PUT(o, v): a raw store to the destination (a kernel's temporary,
  // which may take several bindings).
  vkp__sb_printf(&sb, "#define VKP_PUT(o, v) %s\n",
                 k->out_parts > 1 ? "vkp_put((o), (v))" : "OUT[o] = (v)");
  const char *put = k->out_parts > 1 ? "vkp_put((o), " : "OUT[o] = (";
  if (out_dt == VKP_DTYPE_BOOL)
    vkp__sb_printf(&sb, "#define STORE(o, v) %suint8_t(uint(vkp_epilogue((v), (o)) != 0.0)))\n", put);
  else if (out_dt == VKP_DTYPE_BFLOAT16)
    vkp__sb_printf(&sb, "#define STORE(o, v) %suint16_t(vkp_bf16(vkp_epilogue((v), (o)))))\n",
                   put);
  else if (vkp__spv_is_narrow(out_dt))  // 8/16-bit integers keep the low bits
    vkp__sb_printf(&sb, "#define STORE(o, v) %s%s(vkp_epilogue((v), (o))))\n", put,
                   vkp__spv_storage_type(out_dt));
  else
    vkp__sb_printf(&sb, "#define STORE(o, v) %svkp_epilogue((v), (o)))\n", put);
  vkp__sb_append(&sb, e->body.data ? e->body.data : "");
  st = vkp__sb_status(&e->head, "kernel text");
  if (!st) st = vkp__sb_status(&e->body, "kernel text");
  if (!st) st = vkp__sb_status(&sb, "kernel text");
  if (!st) {
    k->glsl = vkp__sb_take(&sb);
    if (!k->glsl) st = VKP_OOM("kernel text");
  }
  vkp__sb_deinit(&sb);
  return st;
}

void vkp__spv_grid_1d(vkp__emit_t *e, uint64_t total) {
  uint32_t local = e->config->local_1d;
  e->k->local_size[0] = local;
  e->k->local_size[1] = e->k->local_size[2] = 1;
  uint64_t groups = (total + local - 1) / local;
  e->k->groups[0] = (uint32_t)(groups ? groups : 1);
  e->k->groups[1] = e->k->groups[2] = 1;
}

// Rows longer than this take a workgroup each on every device, CPU ones
// included and whatever VKPIPE_SPIRV_ROWS says: a row kernel walks its row
// up to 4 times (softmax: max, sum, write), and one invocation walking more
// than 4 x 8192 elements could pass lavapipe's loop budget (VKP__LOOP_CHUNK).
#define VKP__ROW_THREAD_MAX 8192u

// Chooses between the per-invocation and per-workgroup row kernel for rows
// of `len` elements, sets the grid and appends the template.
void vkp__spv_row_kernel(vkp__emit_t *e, vkp__row_shader_t row, uint64_t rows,
                         uint64_t len) {
  const vkp__kernel_config_t *c = e->config;
  bool long_row = len > VKP__ROW_THREAD_MAX && c->row_wg >= 2;
  if ((c->rows_workgroup && (c->rows_forced || len >= 64)) || long_row) {
    e->k->local_size[0] = c->row_wg;
    e->k->local_size[1] = e->k->local_size[2] = 1;
    e->k->groups[0] = (uint32_t)(rows ? rows : 1);
    e->k->groups[1] = e->k->groups[2] = 1;
    vkp__sb_printf(&e->body, "#define WG %uu\n", (unsigned)c->row_wg);
    if (c->rows_subgroup) {
      e->subgroup = true;
      vkp__sb_append(&e->body, "#define VKP_SUBGROUP 1\n");
    }
    vkp__sb_append(&e->body, vkp__shader_text(VKP__SHADER_workgroup_reduce));
    vkp__sb_append(&e->body, vkp__shader_text(vkp__row_shader(row, true)));
    return;
  }
  uint32_t local = c->local_1d;
  e->k->local_size[0] = local;
  e->k->local_size[1] = e->k->local_size[2] = 1;
  uint64_t groups = (rows + local - 1) / local;
  e->k->groups[0] = (uint32_t)(groups ? groups : 1);
  e->k->groups[1] = e->k->groups[2] = 1;
  vkp__sb_append(&e->body, vkp__shader_text(vkp__row_shader(row, false)));
}

void vkp__spv_define_u(vkp__sb_t *sb, const char *name, uint64_t v) {
  vkp__sb_printf(sb, "#define %s %lluu\n", name, (unsigned long long)v);
}

void vkp__spv_define_i(vkp__sb_t *sb, const char *name, int64_t v) {
  vkp__sb_printf(sb, "#define %s %lld\n", name, (long long)v);
}

void vkp__spv_template(vkp__emit_t *e, vkp__shader_t shader) {
  vkp__sb_append(&e->body, vkp__shader_text(shader));
}

// ---------------------------------------------------------------------------
// Anchors

// The GEMM-shaped kernels' grid and template: 64 x 64 blocks of a
// rows x cols output per workgroup, `depth` of them, on every variant (4
// subgroups of 32 on cooperative matrices, 16 x 16 invocations tiled, 8 x 8
// register-blocked; see the variant rule in kernels.h).
static void vkp__spv_gemm_variant(vkp__emit_t *e, uint64_t cols, uint64_t rows,
                                  uint64_t depth, vkp__shader_t coopmat_shader,
                                  vkp__shader_t tiled_shader, vkp__shader_t blocked_shader) {
  bool coopmat = e->config->coopmat, tiled = e->config->gemm_tiled;
  e->coopmat = coopmat;
  e->k->local_size[0] = coopmat ? 128 : tiled ? 16 : 8;
  e->k->local_size[1] = coopmat ? 1 : tiled ? 16 : 8;
  e->k->local_size[2] = 1;
  e->k->groups[0] = (uint32_t)((cols + 63) / 64);
  e->k->groups[1] = (uint32_t)((rows + 63) / 64);
  e->k->groups[2] = (uint32_t)depth;
  if (coopmat) vkp__spv_template(e, VKP__SHADER_coopmat_tile);
  vkp__spv_template(e, coopmat ? coopmat_shader : tiled ? tiled_shader : blocked_shader);
}

static void vkp__emit_matmul_like(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_graph_t *g = e->g;
  const vkp_value_t *a = vkp__spv_input(g, n, 0), *b = vkp__spv_input(g, n, 1);
  const vkp_value_t *y = &g->values[n->outputs[0]];
  int64_t m, nn, k, a_sm, a_sk, b_sk, b_sn;
  int64_t batch = 1;
  int32_t out_batch_rank = 0;
  if (n->op == VKP_OP_GEMM) {
    bool ta = vkp_node_int(n, "transA") != 0;
    bool tb = vkp_node_int(n, "transB") != 0;
    m = ta ? a->shape[1] : a->shape[0];
    k = ta ? a->shape[0] : a->shape[1];
    nn = tb ? b->shape[0] : b->shape[1];
    a_sm = ta ? 1 : k;
    a_sk = ta ? m : 1;
    b_sk = tb ? 1 : nn;
    b_sn = tb ? k : 1;
    vkp__sb_append(&e->head, "uint vkp_a_batch(uint b) { return 0u; }\n"
                             "uint vkp_b_batch(uint b) { return 0u; }\n");
  } else {
    k = a->shape[a->rank - 1];
    m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
    nn = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
    a_sm = a->rank >= 2 ? k : 0;
    a_sk = 1;
    b_sk = b->rank >= 2 ? nn : 1;
    b_sn = b->rank >= 2 ? 1 : 0;
    out_batch_rank = y->rank - (a->rank >= 2) - (b->rank >= 2);
    int64_t coef_a[VKP_MAX_RANK], coef_b[VKP_MAX_RANK];
    int64_t sa = m * k, sb = k * nn;
    int32_t ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
    for (int32_t d = out_batch_rank - 1; d >= 0; --d) {
      int32_t ia = d - (out_batch_rank - ba), ib = d - (out_batch_rank - bb);
      coef_a[d] = (ia >= 0 && a->shape[ia] != 1) ? sa : 0;
      coef_b[d] = (ib >= 0 && b->shape[ib] != 1) ? sb : 0;
      if (ia >= 0) sa *= a->shape[ia];
      if (ib >= 0) sb *= b->shape[ib];
      batch *= y->shape[d];
    }
    vkp__spv_affine(&e->head, "vkp_a_batch", out_batch_rank, y->shape, coef_a, 0);
    vkp__spv_affine(&e->head, "vkp_b_batch", out_batch_rank, y->shape, coef_b, 0);
  }
  vkp__sb_t *s = &e->body;
  vkp__spv_define_u(s, "M", (uint64_t)m);
  vkp__spv_define_u(s, "N", (uint64_t)nn);
  vkp__spv_define_u(s, "K", (uint64_t)k);
  vkp__spv_define_u(s, "BATCH", (uint64_t)batch);
  vkp__sb_printf(s, "#define A_OFF(m, k) ((m) * %lldu + (k) * %lldu)\n",
                 (long long)a_sm, (long long)a_sk);
  vkp__sb_printf(s, "#define B_OFF(k, n) ((k) * %lldu + (n) * %lldu)\n",
                 (long long)b_sk, (long long)b_sn);
  vkp__sb_append(s, "float vkp_gemm_finish(float acc, uint m, uint n) {\n  return ");
  uint64_t kslice = 0;
  uint32_t ksplit = vkp__spv_split_k(g, n, e->config, &kslice, NULL);
  if (e->splitk_phase == 1) {
    // Partial sums: the raw dot product of one K slice, stored at slice
    // vkp_ks of the [KSPLIT, BATCH, M, N] partials.
    vkp__sb_append(s, "acc;\n}\n");
    vkp__spv_define_u(s, "KSPLIT", ksplit);
    vkp__spv_define_u(s, "KSLICE", kslice);
    vkp__sb_printf(s, "#undef STORE\n#define STORE(o, v) VKP_PUT((o) + vkp_ks * %lluu, (v))\n",
                   (unsigned long long)(batch * m * nn));
  } else if (n->op == VKP_OP_GEMM) {
    vkp__sb_float(s, vkp_node_float(n, "alpha"));
    vkp__sb_append(s, " * acc");
    const vkp_value_t *c = vkp__spv_input(g, n, 2);
    if (c) {
      int64_t c_sm = 0, c_sn = 0;
      if (c->rank == 2) {
        c_sm = c->shape[0] == m && m != 1 ? c->shape[1] : 0;
        c_sn = c->shape[1] == nn && nn != 1 ? 1 : 0;
      } else if (c->rank == 1) {
        c_sn = c->shape[0] == nn && nn != 1 ? 1 : 0;
      }
      vkp__sb_append(s, " + ");
      vkp__sb_float(s, vkp_node_float(n, "beta"));
      vkp__sb_printf(s, " * IN%d[m * %lldu + n * %lldu]", e->splitk_phase == 2 ? 1 : 2,
                     (long long)c_sm, (long long)c_sn);
    }
  } else {
    vkp__sb_append(s, "acc");
  }
  if (e->splitk_phase != 1) vkp__sb_append(s, ";\n}\n");
  if (e->splitk_phase == 2) {
    vkp__spv_define_u(s, "TOTAL", (uint64_t)(batch * m * nn));
    vkp__spv_define_u(s, "KSPLIT", ksplit);
    vkp__spv_grid_1d(e, (uint64_t)(batch * m * nn));
    vkp__spv_template(e, VKP__SHADER_gemm_splitk_reduce);
    return;
  }
  if (e->splitk_phase == 0) {
    vkp__spv_define_u(s, "KSPLIT", 1);
    vkp__spv_define_u(s, "KSLICE", (uint64_t)k);
    ksplit = 1;
  }
  vkp__spv_gemm_variant(e, (uint64_t)nn, (uint64_t)m, (uint64_t)(batch * ksplit),
                        VKP__SHADER_gemm_coopmat, VKP__SHADER_gemm_tiled,
                        VKP__SHADER_gemm_blocked);
}

// A convolution's window over 1 to 3 spatial dims as the conv templates take
// it: input C x D x H x W, output M x OD x OH x OW, kernel KD x KH x KW,
// strides SD/SH/SW, dilations DD/DH/DW, begin pads PF/PT/PL (front, top,
// left; the end pads are implied by the output size). A 2-D window is a
// 3-D one of depth 1 (D = OD = KD = SD = DD = 1, PF = 0), as in "ref"'s
// reference kernels, so the templates' depth terms fold away at compile
// time; a 1-D one (an IR graph's; ONNX's arrive as 2-D over a unit height)
// has unit depth and height.
typedef struct vkp__conv_window_t {
  int64_t in[3], out[3], k[3], st[3], dil[3], pb[3];
} vkp__conv_window_t;

static void vkp__conv_window(const vkp_node_t *n, const vkp_value_t *x,
                             const vkp_value_t *w, const vkp_value_t *y,
                             vkp__conv_window_t *win) {
  const int64_t *pads, *strides, *dil;
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int32_t s = x->rank - 2, lead = 3 - s;
  for (int32_t d = 0; d < 3; ++d) {
    int32_t i = d - lead;
    bool real = i >= 0;
    win->in[d] = real ? x->shape[2 + i] : 1;
    win->out[d] = real ? y->shape[2 + i] : 1;
    win->k[d] = real ? w->shape[2 + i] : 1;
    win->st[d] = real ? strides[i] : 1;
    win->dil[d] = real ? dil[i] : 1;
    win->pb[d] = real ? pads[i] : 0;
  }
}

static uint64_t vkp__conv_pixels(const vkp__conv_window_t *win) {
  return (uint64_t)(win->out[0] * win->out[1] * win->out[2]);
}

static uint64_t vkp__conv_taps(const vkp__conv_window_t *win) {
  return (uint64_t)(win->k[0] * win->k[1] * win->k[2]);
}

static void vkp__spv_define_conv_geometry(vkp__sb_t *s, const vkp_node_t *n,
                                          const vkp_value_t *x, const vkp_value_t *w,
                                          const vkp_value_t *y) {
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  static const char *const names[6][3] = {{"D", "H", "W"},    {"OD", "OH", "OW"},
                                          {"KD", "KH", "KW"}, {"SD", "SH", "SW"},
                                          {"DD", "DH", "DW"}, {"PF", "PT", "PL"}};
  const int64_t *vals[6] = {win.in, win.out, win.k, win.st, win.dil, win.pb};
  vkp__spv_define_u(s, "C", (uint64_t)x->shape[1]);
  vkp__spv_define_u(s, "M", (uint64_t)y->shape[1]);
  for (int32_t a = 0; a < 6; ++a)
    for (int32_t d = 0; d < 3; ++d)
      if (a == 5) vkp__spv_define_i(s, names[a][d], vals[a][d]);
      else vkp__spv_define_u(s, names[a][d], (uint64_t)vals[a][d]);
}

// Whether group-1 convolution `n` runs as an implicit GEMM (the variant
// rule in kernels.h).
static bool vkp__conv_as_gemm(const vkp__kernel_config_t *config, const vkp_node_t *n,
                              const vkp__conv_window_t *win) {
  int use_gemm = config->conv_gemm;
  return vkp_node_int(n, "group") == 1 &&
         (use_gemm > 0 || (use_gemm < 0 && vkp__conv_pixels(win) >= 32));
}

// The extent along each dim of what the windows of `win` read, from the
// first window's start (in the padding when the begin pad is positive).
static void vkp__conv_span(const vkp__conv_window_t *win, int64_t span[3]) {
  for (int32_t d = 0; d < 3; ++d)
    span[d] = (win->out[d] - 1) * win->st[d] + (win->k[d] - 1) * win->dil[d] + 1;
}

// Whether some window of `win` reaches past the input (into the padding).
static bool vkp__conv_reaches_padding(const vkp__conv_window_t *win) {
  int64_t span[3];
  vkp__conv_span(win, span);
  bool reaches = false;
  for (int32_t d = 0; d < 3; ++d) reaches |= win->pb[d] > 0 || win->pb[d] + win->in[d] < span[d];
  return reaches;
}

// The planes a convolution kernel reads and where its windows start in them:
// XD x XH x XW with the windows XPF/XPT/XPL before the output position times
// the strides; the input itself, or (`padded`) its zero-padded copy, whose
// planes are the windows' span and whose windows start at 0.
static void vkp__spv_define_read_planes(vkp__sb_t *s, const vkp__conv_window_t *win,
                                        bool padded) {
  static const char *const xs[3] = {"XD", "XH", "XW"}, *const xp[3] = {"XPF", "XPT", "XPL"};
  int64_t span[3];
  vkp__conv_span(win, span);
  for (int32_t d = 0; d < 3; ++d) {
    vkp__spv_define_u(s, xs[d], (uint64_t)(padded ? span[d] : win->in[d]));
    vkp__spv_define_i(s, xp[d], padded ? 0 : win->pb[d]);
  }
}

// A padded copy larger than this (and than twice the input) is not made:
// the checked kernel reads the input in place instead.
#define VKP__CONV_PAD_MAX_BYTES ((uint64_t)64 << 20)

// Unchecked taps pay on lavapipe for windows up to 3 wide only, where the
// compiler unrolls the tap loop either way (3x3, stride 1 and 2, 3 to 256
// channels: 1.2-1.6x faster); 5 and 7 wide ones measured 5-40% slower
// unchecked (ResNet's 7x7 stride-2 first layer: 26 ms against 24), so
// those keep their checks.
static bool vkp__conv_unchecked_pays(const vkp__conv_window_t *win) {
  return win->k[2] <= 3;
}

// Whether convolution `n` runs on a zero-padded copy of its input: a
// register-blocked implicit GEMM (the variant whose taps the checks slow
// down; lavapipe) whose windows reach past the input and are at most 3
// wide, not split, with a copy that fits one binding. Sets the copy's
// bytes.
static bool vkp__conv_padded(const vkp_graph_t *g, const vkp_node_t *n,
                             const vkp__kernel_config_t *config, uint64_t *out_bytes) {
  if (n->op != VKP_OP_CONV2D || !config->conv_pad || config->gemm_tiled || config->coopmat)
    return false;
  const vkp_value_t *x = vkp__spv_input(g, n, 0), *w = vkp__spv_input(g, n, 1);
  const vkp_value_t *y = &g->values[n->outputs[0]];
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  if (!vkp__conv_as_gemm(config, n, &win) || !vkp__conv_unchecked_pays(&win) ||
      vkp__conv_split_k(g, n, config, NULL, NULL) > 1)
    return false;
  int64_t span[3];
  vkp__conv_span(&win, span);
  uint64_t elems = (uint64_t)x->shape[0] * (uint64_t)x->shape[1];
  for (int32_t d = 0; d < 3; ++d) elems *= (uint64_t)span[d];
  uint64_t bytes = elems * 4u, input = vkp__spv_numel(x) * 4u;
  if (!vkp__conv_reaches_padding(&win) || elems > (uint64_t)INT32_MAX ||
      (config->part_bytes && bytes > config->part_bytes) ||
      (bytes > VKP__CONV_PAD_MAX_BYTES && bytes > 2 * input))
    return false;
  *out_bytes = bytes;
  return true;
}

vkp__temp_kind_t vkp__spv_kernel_temp(const vkp_graph_t *g, const vkp_node_t *n,
                                      const vkp__kernel_config_t *config,
                                      uint64_t *out_bytes) {
  uint64_t bytes = 0;
  vkp__temp_kind_t kind = VKP__TEMP_NONE;
  if (vkp__spv_split_k(g, n, config, NULL, &bytes) > 1) kind = VKP__TEMP_SPLIT_K;
  else if (vkp__conv_padded(g, n, config, &bytes)) kind = VKP__TEMP_CONV_PAD;
  if (out_bytes) *out_bytes = kind == VKP__TEMP_NONE ? 0 : bytes;
  return kind;
}

// Part 0 of a padded convolution (conv_pad.comp): the input into planes of
// the windows' span, zero where they reach past it.
static void vkp__emit_conv_pad(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__sb_t *s = &e->body;
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  uint64_t total = e->out_bytes / 4u;
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  vkp__spv_define_read_planes(s, &win, true);
  vkp__spv_define_u(s, "TOTAL", total);
  vkp__spv_grid_1d(e, total);
  vkp__spv_template(e, VKP__SHADER_conv_pad);
}

// Group-1 convolution as an implicit GEMM (conv_gemm_*.comp): M output
// channels x OD*OH*OW pixels per image, K = C*KD*KH*KW gathered from the
// input, or (pad_phase 2) from its padded copy. The register-blocked
// kernel's taps go unchecked where no window reaches past what it reads.
static void vkp__emit_conv2d_gemm(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__sb_t *s = &e->body;
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  uint64_t np = vkp__conv_pixels(&win);
  uint64_t m = (uint64_t)y->shape[1];
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  bool padded = e->pad_phase == 2;
  vkp__spv_define_read_planes(s, &win, padded);
  if (padded || (!vkp__conv_reaches_padding(&win) && vkp__conv_unchecked_pays(&win)))
    vkp__sb_append(s, "#define UNCHECKED 1\n");
  vkp__spv_define_u(s, "NP", np);
  vkp__spv_define_u(s, "KT", (uint64_t)w->shape[1] * vkp__conv_taps(&win));
  vkp__spv_define_u(s, "BATCH", (uint64_t)y->shape[0]);
  if (vkp__spv_input(e->g, n, 2)) vkp__sb_append(s, "#define HAS_BIAS 1\n");
  vkp__spv_gemm_variant(e, np, m, (uint64_t)y->shape[0], VKP__SHADER_conv_gemm_coopmat,
                        VKP__SHADER_conv_gemm_tiled, VKP__SHADER_conv_gemm_blocked);
}

// A convolution or transposed one as split-K (vkp__conv_split_k): part 0
// (conv_split.comp) writes each slice's partial sums, part 1
// (gemm_splitk_reduce.comp) adds them in slice order, then the bias and the
// fused epilogue.
static void vkp__emit_conv_split(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__sb_t *s = &e->body;
  uint64_t kslice = 0, total = vkp__spv_numel(y);
  uint32_t ksplit = vkp__spv_split_k(e->g, n, e->config, &kslice, NULL);
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  vkp__spv_define_u(s, "TOTAL", total);
  vkp__spv_define_u(s, "KSPLIT", ksplit);
  if (e->splitk_phase == 2) {
    // The bias, when there is one, is the reduction's input 1.
    vkp__sb_printf(s, "float vkp_gemm_finish(float acc, uint m, uint p) {\n  return acc%s;\n}\n",
                   vkp__spv_input(e->g, n, 2) ? " + LD1(m)" : "");
    vkp__spv_define_u(s, "M", (uint64_t)y->shape[1]);
    vkp__spv_define_u(s, "N", vkp__conv_pixels(&win));
    vkp__spv_grid_1d(e, total);
    vkp__spv_template(e, VKP__SHADER_gemm_splitk_reduce);
    return;
  }
  uint64_t group = (uint64_t)vkp_node_int(n, "group");
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  vkp__spv_define_u(s, "CG", (uint64_t)x->shape[1] / group);
  vkp__spv_define_u(s, "MG", (uint64_t)y->shape[1] / group);
  vkp__spv_define_u(s, "KR", vkp__conv_reduction(e->g, n));
  vkp__spv_define_u(s, "KSLICE", kslice);
  if (n->op == VKP_OP_CONV_TRANSPOSE) vkp__sb_append(s, "#define TRANSPOSED 1\n");
  vkp__spv_grid_1d(e, total);
  e->k->groups[1] = ksplit;
  vkp__spv_template(e, VKP__SHADER_conv_split);
}

// Convolution over 1 to 3 spatial dims: the implicit GEMM, the depthwise
// kernel or the direct one (see the variant rule in kernels.h), or split-K.
static void vkp__emit_conv2d(vkp__emit_t *e, const vkp_node_t *n) {
  if (e->splitk_phase) {
    vkp__emit_conv_split(e, n);
    return;
  }
  if (e->pad_phase == 1) {
    vkp__emit_conv_pad(e, n);
    return;
  }
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t group = vkp_node_int(n, "group");
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  if (vkp__conv_as_gemm(e->config, n, &win)) {
    vkp__emit_conv2d_gemm(e, n);
    return;
  }
  vkp__sb_t *s = &e->body;
  uint64_t mg = (uint64_t)(y->shape[1] / group);
  if (group > 1 && group == x->shape[1] && e->config->depthwise) {
    // Depthwise: 4 output columns per invocation (conv_depthwise.comp).
    uint64_t blocks = (uint64_t)(y->shape[0] * y->shape[1] * win.out[0] * win.out[1]) *
                      (uint64_t)((win.out[2] + 3) / 4);
    vkp__spv_define_u(s, "BLOCKS", blocks);
    vkp__spv_define_conv_geometry(s, n, x, w, y);
    vkp__spv_define_u(s, "MG", mg);
    if (vkp__spv_input(e->g, n, 2)) vkp__sb_append(s, "#define HAS_BIAS 1\n");
    vkp__spv_grid_1d(e, blocks);
    vkp__spv_template(e, VKP__SHADER_conv_depthwise);
    return;
  }
  uint64_t cb = mg % 4 == 0 ? 4 : mg % 2 == 0 ? 2 : 1;
  uint64_t blocks = vkp__spv_numel(y) / cb;
  vkp__spv_define_u(s, "BLOCKS", blocks);
  vkp__spv_define_u(s, "CB", cb);
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  vkp__spv_define_u(s, "CG", (uint64_t)(x->shape[1] / group));
  vkp__spv_define_u(s, "MG", (uint64_t)(y->shape[1] / group));
  if (vkp__spv_input(e->g, n, 2)) vkp__sb_append(s, "#define HAS_BIAS 1\n");
  vkp__spv_grid_1d(e, blocks);
  vkp__spv_template(e, VKP__SHADER_conv2d);
}

// Pooling over 1 to 3 spatial dims (pool.comp; a 2-D window is a 3-D one
// of depth 1). A max_pool2d with its indices output runs twice: part 0
// writes the values, part 1 the int64 indices.
static void vkp__emit_pool(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  const int64_t *ks, *pads, *strides, *dil;
  vkp_node_attr_ints(n, "kernel_shape", &ks);
  vkp_node_attr_ints(n, "pads", &pads);
  vkp_node_attr_ints(n, "strides", &strides);
  vkp_node_attr_ints(n, "dilations", &dil);
  int32_t s = x->rank - 2, off = 3 - s;  // spatial dims, and depth's absence
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1},
          dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
  for (int32_t d = 0; d < s; ++d) {
    in[off + d] = x->shape[2 + d];
    out[off + d] = y->shape[2 + d];
    k[off + d] = ks[d];
    st[off + d] = strides[d];
    dl[off + d] = dil[d];
    pb[off + d] = pads[d];
    pe[off + d] = pads[s + d];
  }
  static const char *const names[7][3] = {
      {"D", "H", "W"},    {"OD", "OH", "OW"}, {"KD", "KH", "KW"}, {"SD", "SH", "SW"},
      {"DD", "DH", "DW"}, {"PF", "PT", "PL"}, {"PK", "PB", "PR"}};
  const int64_t *vals[7] = {in, out, k, st, dl, pb, pe};
  vkp__sb_t *sb = &e->body;
  vkp__spv_define_u(sb, "TOTAL", vkp__spv_numel(y));
  for (int32_t a = 0; a < 7; ++a)
    for (int32_t d = 0; d < 3; ++d)
      if (a >= 5) vkp__spv_define_i(sb, names[a][d], vals[a][d]);
      else vkp__spv_define_u(sb, names[a][d], (uint64_t)vals[a][d]);
  if (n->op == VKP_OP_MAX_POOL2D) {
    vkp__sb_append(sb, "#define POOL_MAX 1\n");
    // A window over padding only gives the data type's lowest value (as in
    // "ref"): -inf for floats; converting -inf to an 8-bit integer is
    // undefined in GLSL.
    const char *lowest = x->dtype == VKP_DTYPE_INT8    ? "(-128.0)"
                         : x->dtype == VKP_DTYPE_UINT8 ? "0.0"
                                                       : "uintBitsToFloat(0xff800000u)";
    vkp__sb_printf(sb, "#define EMPTY_MAX %s\n", lowest);
    vkp__spv_define_i(sb, "INDICES", e->part == 1);
    vkp__spv_define_i(sb, "COL_MAJOR", vkp_node_int(n, "storage_order") != 0);
  } else if (n->op == VKP_OP_LP_POOL) {
    vkp__sb_append(sb, "#define POOL_LP 1\n");
    vkp__spv_define_i(sb, "P", vkp_node_int(n, "p"));
  } else {
    vkp__sb_append(sb, "#define POOL_AVG 1\n");
    if (vkp_node_int(n, "count_include_pad"))
      vkp__sb_append(sb, "#define COUNT_INCLUDE_PAD 1\n");
  }
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_pool);
}

// A transposed convolution as an implicit GEMM per output phase
// (conv_transpose_gemm.comp): M/G output channels x the phase's positions per
// (image, phase, group), K = C/G x the taps that land in the phase.
static void vkp__emit_conv_transpose_gemm(vkp__emit_t *e, const vkp_node_t *n,
                                          const vkp__conv_window_t *win) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  vkp__sb_t *s = &e->body;
  uint64_t group = (uint64_t)vkp_node_int(n, "group");
  uint64_t mg = (uint64_t)w->shape[1], mt = (mg + 63) / 64;
  uint64_t u[3], phases = 1, up = 1;
  for (int32_t d = 0; d < 3; ++d) {
    u[d] = (uint64_t)((win->out[d] + win->st[d] - 1) / win->st[d]);
    phases *= (uint64_t)win->st[d];
    up *= u[d];
  }
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  vkp__spv_define_u(s, "CG", (uint64_t)x->shape[1] / group);
  vkp__spv_define_u(s, "MG", mg);
  vkp__spv_define_u(s, "MT", mt);
  vkp__spv_define_u(s, "UD", u[0]);
  vkp__spv_define_u(s, "UH", u[1]);
  vkp__spv_define_u(s, "UW", u[2]);
  vkp__spv_define_u(s, "UP", up);
  if (vkp__spv_input(e->g, n, 2)) vkp__sb_append(s, "#define HAS_BIAS 1\n");
  e->k->local_size[0] = 8;
  e->k->local_size[1] = 8;
  e->k->local_size[2] = 1;
  e->k->groups[0] = (uint32_t)((up + 63) / 64);
  e->k->groups[1] = (uint32_t)(group * mt);
  e->k->groups[2] = (uint32_t)((uint64_t)y->shape[0] * phases);
  vkp__spv_template(e, VKP__SHADER_conv_transpose_gemm);
}

// Transposed convolution: the implicit GEMM when a group has >= 8 output
// channels (an invocation row computes 8), else the gather kernel
// (conv_transpose.comp, one output per invocation); VKPIPE_SPIRV_CONV=gemm|
// direct forces either, as for convolutions.
vkp_status_t vkp__spv_emit_conv_transpose(vkp__emit_t *e, const vkp_node_t *n) {
  if (e->splitk_phase) {
    vkp__emit_conv_split(e, n);
    return NULL;
  }
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0), *w = vkp__spv_input(e->g, n, 1);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t group = vkp_node_int(n, "group");
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  int use_gemm = e->config->conv_gemm;
  if (use_gemm > 0 || (use_gemm < 0 && w->shape[1] >= 8)) {
    vkp__emit_conv_transpose_gemm(e, n, &win);
    return NULL;
  }
  vkp__sb_t *s = &e->body;
  vkp__spv_define_u(s, "TOTAL", vkp__spv_numel(y));
  vkp__spv_define_conv_geometry(s, n, x, w, y);
  vkp__spv_define_u(s, "CG", (uint64_t)(x->shape[1] / group));
  vkp__spv_define_u(s, "MG", (uint64_t)w->shape[1]);
  if (vkp__spv_input(e->g, n, 2)) vkp__sb_append(s, "#define HAS_BIAS 1\n");
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_conv_transpose);
  return NULL;
}

// An upper bound on the loop iterations one invocation of `n`'s unsplit
// kernel runs (VKP__LOOP_BUDGET), over every kernel the variant rule may
// pick for it: the implicit GEMMs and the direct kernel
// walk (input channels) x KD x KH x KW, the transposed gather KD x KH x KW x
// (input channels of a group).
static uint64_t vkp__conv_loop_iterations(const vkp_graph_t *g, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0), *w = vkp__spv_input(g, n, 1);
  const vkp_value_t *y = &g->values[n->outputs[0]];
  vkp__conv_window_t win;
  vkp__conv_window(n, x, w, y, &win);
  uint64_t kd = (uint64_t)win.k[0], kh = (uint64_t)win.k[1], kw = (uint64_t)win.k[2];
  uint64_t c = (uint64_t)x->shape[1];
  uint64_t group = (uint64_t)vkp_node_int(n, "group");
  if (n->op == VKP_OP_CONV_TRANSPOSE) {
    uint64_t cg = c / group;
    uint64_t gather = kd * (1u + kh * (1u + kw * (1u + cg)));
    uint64_t gemm = cg * (1u + kd * (1u + kh * (1u + kw)));
    return gather > gemm ? gather : gemm;
  }
  // Group 1 may run as the implicit GEMM over all C channels; grouped
  // convolutions run the direct kernel over C / group.
  uint64_t cg = group == 1 ? c : (uint64_t)w->shape[1];
  return cg * (1u + kd * (1u + kh * (1u + kw)));
}

// The reduction length of one output element: the input channels of its
// group times the taps.
static uint64_t vkp__conv_reduction(const vkp_graph_t *g, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0), *w = vkp__spv_input(g, n, 1);
  uint64_t taps = 1;
  for (int32_t d = 2; d < w->rank; ++d) taps *= (uint64_t)w->shape[d];
  return (uint64_t)x->shape[1] / (uint64_t)vkp_node_int(n, "group") * taps;
}

// The taps of a pooling window.
static uint64_t vkp__window_taps(const vkp_node_t *n) {
  const int64_t *ks;
  int32_t nk = vkp_node_attr_ints(n, "kernel_shape", &ks);
  uint64_t taps = 1;
  for (int32_t d = 0; d < nk; ++d) taps *= (uint64_t)ks[d];
  return taps;
}

bool vkp__spv_within_loop_budget(uint64_t iters, uint32_t loop_budget, const char *what,
                                 const char *lost, char *reason, size_t reason_size) {
  if (!loop_budget || iters <= loop_budget) return true;
  snprintf(reason, reason_size,
           "%s: one invocation of the Vulkan kernel loops about %llu times, and lavapipe's "
           "compiler cuts a shader's loops at %u iterations (%s)",
           what, (unsigned long long)iters, loop_budget, lost);
  return false;
}

bool vkp__spv_check_window(const vkp_graph_t *g, const vkp_node_t *n,
                           uint32_t loop_budget, char *reason, size_t reason_size) {
  const vkp_value_t *x = vkp__spv_input(g, n, 0);
  if (x->rank < 3 || x->rank > 5) {
    snprintf(reason, reason_size, "%s over %d spatial dims: the Vulkan kernels take 1 to 3",
             vkp_op_name(n->op), (int)x->rank - 2);
    return false;
  }
  // Convolutions past lavapipe's loop budget run split (vkp__conv_split_k);
  // pooling has no split yet, so a window whose loops would pass it is
  // refused (found on 1-D windows of 70,000 and a 300 x 300 average pool,
  // which gave wrong results on lavapipe, silently).
  if (n->op == VKP_OP_CONV2D || n->op == VKP_OP_CONV_TRANSPOSE) return true;
  const int64_t *ks;
  int32_t nk = vkp_node_attr_ints(n, "kernel_shape", &ks);
  uint64_t iters = 1;
  for (int32_t d = nk - 1; d >= 0; --d) iters = 1u + (uint64_t)ks[d] * iters;
  char what[96];
  snprintf(what, sizeof what, "%s over a window of %llu taps", vkp_op_name(n->op),
           (unsigned long long)vkp__window_taps(n));
  return vkp__spv_within_loop_budget(iters, loop_budget, what,
                                     "the rest of the window would be lost", reason,
                                     reason_size);
}

// Global average pooling is a mean over the contiguous spatial block.
static void vkp__emit_global_pool(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  uint64_t nc = (uint64_t)(x->shape[0] * x->shape[1]);
  uint64_t s = nc ? vkp__spv_numel(x) / nc : 0;
  int64_t shape[1] = {(int64_t)nc}, coef[1] = {(int64_t)s};
  int64_t red_shape[1] = {(int64_t)s}, red_coef[1] = {1};
  vkp__spv_affine(&e->head, "vkp_reduce_base", 1, shape, coef, 0);
  vkp__spv_affine(&e->head, "vkp_reduce_offset", 1, red_shape, red_coef, 0);
  vkp__spv_define_u(&e->body, "TOTAL", nc);
  vkp__spv_define_u(&e->body, "R", s);
  vkp__sb_append(&e->body, "#define REDUCE_MEAN 1\n");
  vkp__spv_row_kernel(e, VKP__ROW_reduce, nc, s);
}

static void vkp__emit_softmax(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)x->shape[d];
  for (int32_t d = (int32_t)axis + 1; d < x->rank; ++d) inner *= (uint64_t)x->shape[d];
  vkp__spv_define_u(&e->body, "ROWS", outer * inner);
  vkp__spv_define_u(&e->body, "L", (uint64_t)x->shape[axis]);
  vkp__spv_define_u(&e->body, "INNER", inner);
  vkp__spv_row_kernel(e, VKP__ROW_softmax, outer * inner, (uint64_t)x->shape[axis]);
}

static void vkp__emit_layer_norm(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t rows = 1, len = 1;
  for (int32_t d = 0; d < axis; ++d) rows *= (uint64_t)x->shape[d];
  for (int32_t d = (int32_t)axis; d < x->rank; ++d) len *= (uint64_t)x->shape[d];
  int32_t norm_rank = x->rank - (int32_t)axis;
  const int64_t *norm_shape = &x->shape[axis];
  vkp__spv_broadcast(&e->head, "vkp_scale_index", vkp__spv_input(e->g, n, 1),
                      norm_rank, norm_shape);
  const vkp_value_t *bias = vkp__spv_input(e->g, n, 2);
  if (bias) {
    vkp__spv_broadcast(&e->head, "vkp_bias_index", bias, norm_rank, norm_shape);
    vkp__sb_append(&e->body, "#define HAS_BIAS 1\n");
  }
  if (vkp_node_int(n, "rms")) vkp__sb_append(&e->body, "#define RMS 1\n");
  vkp__spv_define_u(&e->body, "ROWS", rows);
  vkp__spv_define_u(&e->body, "L", len);
  vkp__sb_append(&e->body, "#define EPSILON ");
  vkp__sb_float(&e->body, vkp_node_float(n, "epsilon"));
  vkp__sb_append(&e->body, "\n");
  vkp__spv_row_kernel(e, VKP__ROW_layer_norm, rows, len);
}

static void vkp__emit_transpose(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  const int64_t *perm;
  vkp_node_attr_ints(n, "perm", &perm);
  int64_t strides[VKP_MAX_RANK], coefs[VKP_MAX_RANK];
  vkp__spv_strides(x, strides);
  for (int32_t d = 0; d < y->rank; ++d) coefs[d] = strides[perm[d]];
  vkp__spv_affine(&e->head, "vkp_gather_index", y->rank, y->shape, coefs, 0);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_gather);
}

static void vkp__emit_slice(vkp__emit_t *e, const vkp_node_t *n) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, 0);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  const int64_t *starts, *steps;
  vkp_node_attr_ints(n, "starts", &starts);
  vkp_node_attr_ints(n, "steps", &steps);
  int64_t strides[VKP_MAX_RANK], coefs[VKP_MAX_RANK], base = 0;
  vkp__spv_strides(x, strides);
  for (int32_t d = 0; d < y->rank; ++d) {
    base += starts[d] * strides[d];
    coefs[d] = steps[d] * strides[d];
  }
  vkp__spv_affine(&e->head, "vkp_gather_index", y->rank, y->shape, coefs, base);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(y));
  vkp__spv_grid_1d(e, vkp__spv_numel(y));
  vkp__spv_template(e, VKP__SHADER_gather);
}

static void vkp__emit_concat(vkp__emit_t *e, const vkp_node_t *n, int32_t part) {
  const vkp_value_t *x = vkp__spv_input(e->g, n, part);
  const vkp_value_t *y = &e->g->values[n->outputs[0]];
  int64_t axis = vkp_node_int(n, "axis");
  uint64_t inner = 1, offset = 0;
  for (int32_t d = (int32_t)axis + 1; d < y->rank; ++d) inner *= (uint64_t)y->shape[d];
  for (int32_t i = 0; i < part; ++i)
    offset += (uint64_t)vkp__spv_input(e->g, n, i)->shape[axis];
  uint64_t in_axis = (uint64_t)x->shape[axis], out_axis = (uint64_t)y->shape[axis];
  vkp__sb_printf(&e->head,
                 "uint vkp_concat_dst(uint i) {\n"
                 "  return (i / %lluu) * %lluu + (%lluu + (i / %lluu) %% %lluu) * "
                 "%lluu + i %% %lluu;\n}\n",
                 (unsigned long long)(in_axis * inner),
                 (unsigned long long)(out_axis * inner),
                 (unsigned long long)offset, (unsigned long long)inner,
                 (unsigned long long)in_axis, (unsigned long long)inner,
                 (unsigned long long)inner);
  vkp__spv_define_u(&e->body, "TOTAL", vkp__spv_numel(x));
  vkp__spv_grid_1d(e, vkp__spv_numel(x));
  vkp__spv_template(e, VKP__SHADER_concat);
}

// ---------------------------------------------------------------------------
// Entry points

vkp_status_t vkp__kernel_emit(const vkp_graph_t *g, const vkp__group_t *group,
                              int32_t part, const vkp__kernel_config_t *config,
                              vkp__kernel_t *out_kernel) {
  memset(out_kernel, 0, sizeof(*out_kernel));
  vkp__emit_t e = {.g = g, .group = group, .config = config, .k = out_kernel,
                   .part = part};
  vkp__sb_init(&e.head);
  vkp__sb_init(&e.body);
  const vkp_node_t *anchor = group->anchor >= 0 ? &g->nodes[group->anchor] : NULL;
  vkp_status_t st = NULL;
  vkp__group_t bare;  // a kernel's temporary: the anchor without its epilogue
  vkp__temp_kind_t temp = anchor ? vkp__spv_kernel_temp(g, anchor, config, NULL)
                                 : VKP__TEMP_NONE;
  if (temp != VKP__TEMP_NONE) {
    int phase = part == 0 ? 1 : 2;
    if (temp == VKP__TEMP_SPLIT_K) e.splitk_phase = phase;
    else e.pad_phase = phase;
    if (part == 0) {
      bare = *group;
      bare.n_members = 0;
      e.group = &bare;
      vkp__spv_kernel_temp(g, anchor, config, &e.out_bytes);
    }
  }
  // The anchor's own inputs come first (IN0, IN1, ...).
  if (anchor && anchor->op == VKP_OP_CONCAT) {
    vkp__bind_input(out_kernel, anchor->inputs[part]);
  } else if (e.splitk_phase == 1) {
    vkp__bind_input(out_kernel, anchor->inputs[0]);
    vkp__bind_input(out_kernel, anchor->inputs[1]);
  } else if (e.splitk_phase == 2) {
    vkp__bind_input(out_kernel, VKP__KERNEL_TEMP);
    if (anchor->n_inputs > 2 && anchor->inputs[2] >= 0)
      vkp__bind_input(out_kernel, anchor->inputs[2]);
  } else if (e.pad_phase == 1) {
    vkp__bind_input(out_kernel, anchor->inputs[0]);
  } else if (e.pad_phase == 2) {
    // The padded copy in place of the input: IN0 stays the data.
    vkp__bind_input(out_kernel, VKP__KERNEL_TEMP);
    for (int32_t i = 1; i < anchor->n_inputs; ++i)
      if (anchor->inputs[i] >= 0) vkp__bind_input(out_kernel, anchor->inputs[i]);
  } else if (anchor) {
    for (int32_t i = 0; i < anchor->n_inputs; ++i)
      if (anchor->inputs[i] >= 0) vkp__bind_input(out_kernel, anchor->inputs[i]);
  }
  e.n_anchor_inputs = out_kernel->n_inputs;
  st = vkp__emit_epilogue(&e);
  if (!st) {
    const vkp_value_t *root = &g->values[g->nodes[group->root].outputs[0]];
    switch (anchor ? anchor->op : VKP_OP_COUNT) {
      case VKP_OP_COUNT:  // pure elementwise group
        vkp__spv_define_u(&e.body, "TOTAL", vkp__spv_numel(root));
        vkp__spv_grid_1d(&e, vkp__spv_numel(root));
        vkp__spv_template(&e, VKP__SHADER_elementwise);
        break;
      case VKP_OP_MATMUL: case VKP_OP_GEMM: vkp__emit_matmul_like(&e, anchor); break;
      case VKP_OP_CONV2D: vkp__emit_conv2d(&e, anchor); break;
      case VKP_OP_MAX_POOL2D: case VKP_OP_AVG_POOL2D: case VKP_OP_LP_POOL:
        vkp__emit_pool(&e, anchor);
        break;
      case VKP_OP_GLOBAL_AVG_POOL: vkp__emit_global_pool(&e, anchor); break;
      case VKP_OP_SOFTMAX: vkp__emit_softmax(&e, anchor); break;
      case VKP_OP_LAYER_NORM: vkp__emit_layer_norm(&e, anchor); break;
      case VKP_OP_TRANSPOSE: vkp__emit_transpose(&e, anchor); break;
      case VKP_OP_SLICE: vkp__emit_slice(&e, anchor); break;
      case VKP_OP_CONCAT: vkp__emit_concat(&e, anchor, part); break;
      default: {
        vkp__spv_emit_fn emit = vkp__spv_emitter(anchor->op);
        if (emit)
          st = emit(&e, anchor);
        else
          st = vkp_status_make(VKP_STATUS_UNSUPPORTED, "no kernel for op '%s'",
                               vkp_op_name(anchor->op));
        break;
      }
    }
  }
  if (!st) st = vkp__finish(&e, g->nodes[group->root].name);
  vkp__sb_deinit(&e.head);
  vkp__sb_deinit(&e.body);
  if (st) vkp__kernel_deinit(out_kernel);
  return st;
}

vkp_status_t vkp__kernel_emit_copy(uint64_t bytes, int32_t src_value,
                                   const vkp__kernel_config_t *config,
                                   vkp__kernel_t *out_kernel) {
  memset(out_kernel, 0, sizeof(*out_kernel));
  vkp__bind_input(out_kernel, src_value);
  // Whole 32-bit words where the size allows (every 4- and 8-byte dtype),
  // bytes otherwise: a copy moves bits and computes nothing.
  bool by_words = bytes % 4 == 0;
  uint64_t n = by_words ? bytes / 4 : bytes;
  const char *type = by_words ? "uint" : "uint8_t";
  out_kernel->out_parts = 1;  // one binding each (no split copies)
  out_kernel->parts[0] = 1;
  uint32_t local = config->local_1d;
  out_kernel->local_size[0] = local;
  out_kernel->local_size[1] = out_kernel->local_size[2] = 1;
  uint64_t groups = (n + local - 1) / local;
  out_kernel->groups[0] = (uint32_t)(groups ? groups : 1);
  out_kernel->groups[1] = out_kernel->groups[2] = 1;
  vkp__sb_t sb;
  vkp__sb_init(&sb);
  vkp__sb_printf(&sb, "#version 450\n// vkpipe kernel: copy\n%s",
                 by_words ? "" : "#extension GL_EXT_shader_8bit_storage : require\n");
  vkp__sb_printf(&sb,
                 "layout(local_size_x = %u) in;\n"
                 "layout(std430, set = 0, binding = 0) writeonly buffer B0 { %s b0[]; };\n"
                 "layout(std430, set = 0, binding = 1) readonly buffer B1 { %s b1[]; };\n"
                 "void main() {\n  uint o = gl_GlobalInvocationID.x;\n"
                 "  if (o < %lluu) b0[o] = b1[o];\n}\n",
                 (unsigned)local, type, type, (unsigned long long)n);
  vkp_status_t st = vkp__sb_status(&sb, "copy kernel");
  if (!st) {
    out_kernel->glsl = vkp__sb_take(&sb);
    if (!out_kernel->glsl) st = VKP_OOM("copy kernel");
  }
  vkp__sb_deinit(&sb);
  if (st) vkp__kernel_deinit(out_kernel);
  return st;
}
