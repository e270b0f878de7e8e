// SPDX-License-Identifier: Apache-2.0
//
// vkpipe artifacts (.vkp): one file holding a pipeline plan, every stage's
// subgraph and weights, every stage's compiled code, and metadata (format and
// vkpipe versions, targets, the device profile used, per-entry checksums).
// An artifact runs without the original model and without a compiler.
//
//   // build
//   vkp_artifact_info_t info = {.model = "cnn.onnx", .policy = "auto"};
//   st = vkp_artifact_build(plan, registry, &info, "cnn.vkp");
//   // load and run
//   vkp_artifact_t *art;
//   st = vkp_artifact_load("cnn.vkp", &art);
//   st = vkp_pipeline_create_from_blobs(vkp_artifact_plan(art), registry,
//                                       vkp_artifact_blobs(art), NULL, &pipe);
//   ...
//   vkp_pipeline_destroy(pipe);
//   vkp_artifact_destroy(art);   // after every pipeline made from it
//
// A corrupt, truncated or wrong-version file is an error naming what is
// wrong. A loaded artifact is read-only and may be shared between threads.
#ifndef VKPIPE_ARTIFACT_H_
#define VKPIPE_ARTIFACT_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// The artifact format this vkpipe writes and reads.
#define VKP_ARTIFACT_FORMAT_VERSION 1

// What vkp_artifact_build records besides the plan; every field borrowed and
// optional.
typedef struct vkp_artifact_info_t {
  const char *model;          // source model path
  const char *policy;         // placement policy used
  const char *profile_json;   // device profile used (JSON text), or NULL
  // Per-stage compile options (plan->n_stages entries) or NULL.
  const vkp_compile_options_t *stage_compile_options;
} vkp_artifact_info_t;

typedef struct vkp_artifact_t vkp_artifact_t;

// Compiles every stage of validated `plan` with its target from `registry`
// and writes the artifact to `path` (atomically: a failure leaves no file).
vkp_status_t vkp_artifact_build(const vkp_plan_t *plan,
                                const vkp_registry_t *registry,
                                const vkp_artifact_info_t *info,
                                const char *path) VKP_MUST_USE;

// True when the file at `path` starts with the artifact magic.
bool vkp_artifact_is_artifact(const char *path);

// Loads and checks an artifact. *out_artifact is owned by the caller.
vkp_status_t vkp_artifact_load(const char *path, vkp_artifact_t **out_artifact)
    VKP_MUST_USE;
void vkp_artifact_destroy(vkp_artifact_t *artifact);

// The plan (validated), its per-stage blobs (plan->n_stages entries) and the
// metadata JSON text. Borrowed; valid until vkp_artifact_destroy.
const vkp_plan_t *vkp_artifact_plan(const vkp_artifact_t *artifact);
const vkp_blob_t *vkp_artifact_blobs(const vkp_artifact_t *artifact);
const char *vkp_artifact_metadata(const vkp_artifact_t *artifact);

// Entries of the file (name and size), for `vkpipe inspect`.
int32_t vkp_artifact_entry_count(const vkp_artifact_t *artifact);
const char *vkp_artifact_entry_name(const vkp_artifact_t *artifact,
                                    int32_t index);
uint64_t vkp_artifact_entry_size(const vkp_artifact_t *artifact,
                                 int32_t index);
// The entry's CRC-32, checked when the artifact was loaded.
uint32_t vkp_artifact_entry_crc(const vkp_artifact_t *artifact, int32_t index);

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_ARTIFACT_H_
