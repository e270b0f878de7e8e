// SPDX-License-Identifier: Apache-2.0
//
// vkpipe allocators: an object uses the allocator it was created with, for
// everything it allocates, on every thread it runs (IREE's way; there is no
// process-wide hook).
//
//   static void *my_alloc(void *ctx, size_t n) { ... }
//   vkp_allocator_t a = {.alloc = my_alloc, .realloc = my_realloc,
//                        .free = my_free, .ctx = &state};
//   vkp_graph_load_options_t opts = {.allocator = &a};
//   vkp_graph_load_with_options("model.json", &opts, &graph);
//   ... vkp_graph_destroy(graph);   // every block back to my_free
//
// Where: the options of the create/load functions have an `allocator` field
// (graph and ONNX load options, partition, pipeline, artifact load and
// machine profile options), and the creators without options have a
// `_with_allocator` variant (vkp_graph_create, vkp_plan_create,
// vkp_registry_create(_default), vkp_profile_create_default). NULL (a
// zero-initialised options struct) means the system allocator
// (malloc/realloc/free).
//
// Which blocks use an object's allocator:
//   - everything made while it is created: the object, and the objects it
//     makes for itself (a pipeline's stages and compiled code, an artifact's
//     plan and graphs, a partition's subgraphs);
//   - everything made by a call that changes or runs it (graph and plan
//     building, profile setters and calibration, registry_add, every
//     pipeline call), the statuses those calls return included;
//   - everything its threads allocate (pipeline stage workers and
//     completers, the cpu target's thread pool), such as a frame's status
//     and outputs.
// Calls that only read an object (vkp_plan_to_json, vkp_graph_save_memory,
// vkp_partition_to_plan, ...) and creators without an allocator parameter
// (vkp_graph_clone, vkp_graph_extract, vkp_plan_load, vkp_profile_load, ...)
// use the system allocator. A target keeps its own state (the Vulkan device,
// brought up on first use) with its registry's allocator. Each block records
// the allocator that made it: vkp_free, vkp_status_free and the destroy and
// deinit functions give it back there, on any thread.
//
// Lifetime: the struct itself is copied at creation; its functions and `ctx`
// are borrowed and must stay valid until the last block made through them is
// freed (the object, and every status or buffer it handed out). `alloc` must
// return memory aligned for max_align_t (as malloc does); the library adds a
// 32-byte header to each block. The functions may be called from any thread
// the object runs on, so they must be thread-safe when the object is used
// from several threads or runs a pipeline.
//
// cJSON, which the library parses with, has process-global hooks: the library
// sets them once (at its first JSON use) to its own allocation functions, so
// cJSON's blocks also come from the allocator of the object being worked on.
// A program that uses the same cJSON itself frees cJSON's strings with
// cJSON_free (not free), and deletes the cJSON values it made before vkpipe's
// first JSON use before that use.
#ifndef VKPIPE_ALLOC_H_
#define VKPIPE_ALLOC_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkp_allocator_t {
  void *(*alloc)(void *ctx, size_t size);             // may return NULL
  void *(*realloc)(void *ctx, void *ptr, size_t size);  // may return NULL
  void (*free)(void *ctx, void *ptr);
  void *ctx;  // borrowed; handed back to every call
} vkp_allocator_t;

// Frees a buffer the library allocated and handed to the caller (the docs of
// each function say when to use this), through the allocator that made it,
// from any thread. NULL is fine.
void vkp_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_ALLOC_H_
