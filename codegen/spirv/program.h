// SPDX-License-Identifier: Apache-2.0
//
// The SPIR-V codegen's output and the Vulkan runtime's input: a GPU stage as
// a list of buffers and a list of compute dispatches over them.
//
//   vkp_spirv_program_t *prog;
//   st = vkp_spirv_codegen(graph, &device_info, &options, &prog);
//   st = vkp_spirv_program_serialize(prog, &blob);      // what compile stores
//   st = vkp_spirv_program_deserialize(blob.data, blob.size, &prog2);  // load
//   vkp_spirv_program_destroy(prog);
//
// Buffers: every graph input, graph output, constant and intermediate the
// stage touches is one storage buffer (float32 unless said otherwise);
// intermediates may share a scratch buffer at different offsets. Dispatches
// run in order; the runtime puts a compute->compute memory barrier between a
// dispatch and any later one that reads what it wrote (or simply between
// consecutive dispatches). Workgroup counts may exceed the device's
// maxComputeWorkGroupCount: the runtime then splits the grid with
// vkCmdDispatchBase, so shaders must use gl_WorkGroupID (which includes the
// base) and bounds-check their global index. Shapes are baked into the SPIR-V
// as constants; there are no push constants and no specialization constants.
// Every shader uses descriptor set 0, binding i = the dispatch's i-th buffer.
// Programs are immutable once built and may be read from several threads.
#ifndef VKPIPE_CODEGEN_SPIRV_PROGRAM_H_
#define VKPIPE_CODEGEN_SPIRV_PROGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "vkpipe/graph.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

typedef enum vkp_spirv_buffer_kind_t {
  VKP_SPIRV_BUFFER_INPUT,     // graph input #index (graph->inputs order)
  VKP_SPIRV_BUFFER_OUTPUT,    // graph output #index (graph->outputs order)
  VKP_SPIRV_BUFFER_CONSTANT,  // constant: value #index of the graph
  VKP_SPIRV_BUFFER_SCRATCH,   // device-local scratch of `size` bytes
  VKP_SPIRV_BUFFER_CONSTANT_F16,  // constant #index kept as float16 (2 bytes
                                  // an element; the runtime converts it at
                                  // upload): --precision fp16 weights
} vkp_spirv_buffer_kind_t;

// "input", "output", "constant", "scratch", or "unknown" for a value outside
// the enum (a blob read from a file).
const char *vkp__spirv_buffer_kind_name(vkp_spirv_buffer_kind_t kind);

typedef struct vkp_spirv_buffer_t {
  vkp_spirv_buffer_kind_t kind;
  int32_t index;      // see kind; -1 for SCRATCH
  uint64_t size;      // bytes
} vkp_spirv_buffer_t;

// A view of a buffer bound to one binding slot of a dispatch.
typedef struct vkp_spirv_binding_t {
  int32_t buffer;     // index into program->buffers
  uint64_t offset;    // bytes; a multiple of minStorageBufferOffsetAlignment
  uint64_t range;     // bytes
} vkp_spirv_binding_t;

typedef struct vkp_spirv_dispatch_t {
  char *name;                 // for traces and dumps: the node name(s)
  uint32_t *code;             // SPIR-V words, owned
  size_t code_words;
  uint32_t local_size[3];     // as declared in the shader (informational)
  uint32_t groups[3];         // workgroup counts
  int32_t n_bindings;
  vkp_spirv_binding_t *bindings;  // set 0, binding i
  char *glsl;                 // owned; the GLSL source, kept only when the
                              // options ask for dumps; never serialized
} vkp_spirv_dispatch_t;

typedef struct vkp_spirv_program_t {
  int32_t n_buffers;
  vkp_spirv_buffer_t *buffers;
  int32_t n_dispatches;
  vkp_spirv_dispatch_t *dispatches;
} vkp_spirv_program_t;

// What the codegen needs to know about the device to pick kernel variants.
// lavapipe's compiler cuts a shader's loops at this many iterations per
// invocation (codegen/spirv/README.md, "lavapipe's loop limit").
#define VKP_SPIRV_LAVAPIPE_LOOP_BUDGET 65535u

typedef struct vkp_spirv_device_info_t {
  uint32_t device_type;            // VkPhysicalDeviceType value
  uint32_t vendor_id;
  uint32_t subgroup_size;          // never assume 32
  uint32_t max_shared_memory;      // maxComputeSharedMemorySize, bytes
  uint32_t max_invocations;        // maxComputeWorkGroupInvocations
  uint32_t max_group_size[3];      // maxComputeWorkGroupSize
  uint64_t max_storage_range;      // maxStorageBufferRange, bytes
  uint64_t min_storage_alignment;  // minStorageBufferOffsetAlignment, bytes
  bool storage_8bit;               // storageBuffer8BitAccess enabled: bool
                                   // tensors (one byte each) can be bound
  bool shader_int64;               // shaderInt64 enabled: int64 tensors
                                   // can be computed on
  bool storage_16bit;              // storageBuffer16BitAccess enabled:
                                   // float16 weights (--precision fp16)
  bool shader_float16;             // shaderFloat16 (reported; the kernels
                                   // compute in float32)
  bool shader_float64;             // shaderFloat64 enabled: float64 tensors
                                   // can be computed on (as double)
  bool subgroup_arith;             // subgroup arithmetic in compute
                                   // shaders (VkPhysicalDeviceSubgroupProperties)
  bool coopmat_f16;                // cooperative matrices enabled, with
                                   // 16x16x16 float16 products and float32
                                   // sums per subgroup of 32 (kernels.h)
  uint32_t loop_budget;            // loop iterations one invocation may run
                                   // (65,535 on lavapipe, whose compiler cuts
                                   // longer loops: kernels past it are refused
                                   // there), 0 for no limit (GPUs)
  uint32_t robustness;             // bounds checks on shader buffer accesses
                                   // (runtime/vulkan/device.h's levels: 0
                                   // none, 1 robustBufferAccess, 2 also
                                   // robustBufferAccess2); reported: the
                                   // kernels index in range either way
} vkp_spirv_device_info_t;

// Does the codegen have a kernel for `op` (on float32 data)?
bool vkp_spirv_has_kernel(vkp_op_t op);
// Can the codegen produce `node`? (Used by the target's supports().)
bool vkp_spirv_supports(const vkp_graph_t *graph, const vkp_node_t *node,
                        char *reason, size_t reason_size);

// vkp_spirv_supports, then the limits of `device`: every tensor a node
// touches is bound as one storage-buffer range, so none may exceed
// maxStorageBufferRange (lavapipe: 128 MiB; alexnet's and vgg's classifier
// weights do). The reason names the tensor, its size and the limit, so the
// partitioner places such a node elsewhere instead of failing at run time.
bool vkp_spirv_supports_on(const vkp_graph_t *graph, const vkp_node_t *node,
                           const vkp_spirv_device_info_t *device, char *reason,
                           size_t reason_size);

// Generates GLSL for each dispatch, compiles it with shaderc, validates it
// with SPIRV-Tools and optimises it. Pure: it reads and writes no file. When
// options->dump_dir is set each dispatch keeps its GLSL (dispatch->glsl) for
// the target to write (runtime/vulkan/dump.c).
vkp_status_t vkp_spirv_codegen(const vkp_graph_t *graph,
                               const vkp_spirv_device_info_t *device,
                               const vkp_compile_options_t *options,
                               vkp_spirv_program_t **out_program) VKP_MUST_USE;

void vkp_spirv_program_destroy(vkp_spirv_program_t *program);

// A self-contained, versioned byte form of the program (the target's blob).
vkp_status_t vkp_spirv_program_serialize(const vkp_spirv_program_t *program,
                                         vkp_blob_t *out_blob) VKP_MUST_USE;
// Parses and checks a blob (bad magic, version, truncation, out-of-range
// indices are errors, never crashes).
vkp_status_t vkp_spirv_program_deserialize(const void *data, size_t size,
                                           vkp_spirv_program_t **out_program)
    VKP_MUST_USE;

#endif  // VKPIPE_CODEGEN_SPIRV_PROGRAM_H_
