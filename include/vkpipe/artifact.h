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
//   st = vkp_artifact_pipeline_create(art, registry, NULL, &pipe);
//   ...
//   vkp_pipeline_destroy(pipe);
//   vkp_artifact_destroy(art);   // after every pipeline made from it
//
// Trust: the compiled code in an artifact is native code (a shared object
// for "cpu") or shader code, and loading it runs it. By default that code is
// never used: vkp_artifact_pipeline_create regenerates every stage from the
// artifact's own validated subgraph (the cpu target's compile cache, keyed by
// a hash of the generated source, makes this a one-time cost per machine).
// The shipped code is used only when the artifact is signed (Ed25519) by a
// key the caller trusts, or when the caller opts in explicitly:
//
//   vkp_artifact_public_key_t key;
//   st = vkp_artifact_public_key_load("team.pub", &key);
//   vkp_artifact_load_options_t lo = {.trusted_keys = &key, .n_trusted_keys = 1};
//   st = vkp_artifact_load_with_options("cnn.vkp", &lo, &art);  // refused
//   // unless signed by `key` and unchanged since
//
// A corrupt, truncated or wrong-version file is an error naming what is
// wrong. A loaded artifact is read-only and may be shared between threads.
#ifndef VKPIPE_ARTIFACT_H_
#define VKPIPE_ARTIFACT_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// The artifact format this vkpipe writes and reads. 2: meta.json's "plan"
// is a plan file's JSON (docs/pipeline-config.md), each stage naming its
// graph entry. Files of another version are refused, naming both versions.
#define VKP_ARTIFACT_FORMAT_VERSION 2

// What vkp_artifact_build records besides the plan; every field borrowed and
// optional.
// Ed25519 keys (libsodium's formats: a 32-byte public key; a 64-byte secret
// key that holds the seed and the public key).
#define VKP_ARTIFACT_PUBLIC_KEY_BYTES 32
#define VKP_ARTIFACT_SECRET_KEY_BYTES 64
typedef struct vkp_artifact_public_key_t {
  uint8_t bytes[VKP_ARTIFACT_PUBLIC_KEY_BYTES];
} vkp_artifact_public_key_t;
typedef struct vkp_artifact_secret_key_t {
  uint8_t bytes[VKP_ARTIFACT_SECRET_KEY_BYTES];
} vkp_artifact_secret_key_t;

// Makes a fresh key pair and writes it as two one-line text files: the
// secret key to `secret_path` (created, mode 0600; an existing file is an
// error) and the public key to `public_path`.
vkp_status_t vkp_artifact_keys_generate(const char *secret_path,
                                        const char *public_path) VKP_MUST_USE;
// Reads a key file written by vkp_artifact_keys_generate.
vkp_status_t vkp_artifact_public_key_load(const char *path,
                                          vkp_artifact_public_key_t *out_key)
    VKP_MUST_USE;
vkp_status_t vkp_artifact_secret_key_load(const char *path,
                                          vkp_artifact_secret_key_t *out_key)
    VKP_MUST_USE;

typedef struct vkp_artifact_info_t {
  const char *model;          // source model path
  const char *policy;         // placement policy used
  const char *profile_json;   // device profile used (JSON text), or NULL
  // Per-stage compile options (plan->n_stages entries) or NULL.
  const vkp_compile_options_t *stage_compile_options;
  // When set, the artifact is signed with this key: a "signature" entry over
  // every other entry (names, sizes and bytes).
  const vkp_artifact_secret_key_t *sign_key;
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

// How far the compiled code inside an artifact is trusted; every field
// optional (zeroed: nothing is trusted and every stage is regenerated).
typedef struct vkp_artifact_load_options_t {
  // Keys whose signature makes the shipped code trusted (borrowed). When
  // n_trusted_keys > 0 the artifact must be signed by one of them: an
  // unsigned artifact, one signed by another key, or one changed after
  // signing is refused (FAILED_PRECONDITION, or DATA_LOSS for a signature
  // that does not verify).
  const vkp_artifact_public_key_t *trusted_keys;
  int32_t n_trusted_keys;
  // Explicit opt-in: trust the shipped code without a signature. The caller
  // vouches for the file; native code in it will run in this process.
  bool trust_unsigned_code;
  // What the artifact (its plan and graphs included) is allocated with;
  // NULL = the system allocator. Borrowed for the call (vkpipe/alloc.h).
  const vkp_allocator_t *allocator;
} vkp_artifact_load_options_t;

// Loads and checks an artifact, trusting none of its compiled code.
// *out_artifact is owned by the caller.
vkp_status_t vkp_artifact_load(const char *path, vkp_artifact_t **out_artifact)
    VKP_MUST_USE;
// Same, with `options` (borrowed; NULL is vkp_artifact_load).
vkp_status_t vkp_artifact_load_with_options(
    const char *path, const vkp_artifact_load_options_t *options,
    vkp_artifact_t **out_artifact) VKP_MUST_USE;
// Same, from `size` bytes in memory (borrowed for the call; copied). `name`
// (may be NULL) names the artifact in messages.
vkp_status_t vkp_artifact_load_memory(const void *data, size_t size,
                                      const char *name,
                                      const vkp_artifact_load_options_t *options,
                                      vkp_artifact_t **out_artifact) VKP_MUST_USE;
void vkp_artifact_destroy(vkp_artifact_t *artifact);

// True when the shipped code may be loaded: a trusted key signed the file, or
// the caller opted in with trust_unsigned_code.
bool vkp_artifact_code_is_trusted(const vkp_artifact_t *artifact);
// True when the file carries a signature entry (checked only when keys were
// given).
bool vkp_artifact_is_signed(const vkp_artifact_t *artifact);

// A pipeline for the artifact's plan: from the shipped code when it is
// trusted, else by compiling every stage again from its validated subgraph
// (a target that needs a compiler, like "cpu", then needs one; the error
// says so and how to opt in). `options` as for vkp_pipeline_create; the
// artifact must outlive the pipeline.
vkp_status_t vkp_artifact_pipeline_create(const vkp_artifact_t *artifact,
                                          const vkp_registry_t *registry,
                                          const vkp_pipeline_options_t *options,
                                          vkp_pipeline_t **out_pipeline)
    VKP_MUST_USE;

// The plan (validated) and the metadata JSON text. Borrowed; valid until
// vkp_artifact_destroy.
const vkp_plan_t *vkp_artifact_plan(const vkp_artifact_t *artifact);
const char *vkp_artifact_metadata(const vkp_artifact_t *artifact);
// The per-stage compiled code (plan->n_stages entries) for
// vkp_pipeline_create_from_blobs, or NULL when the code is not trusted.
const vkp_blob_t *vkp_artifact_blobs(const vkp_artifact_t *artifact);
// The same bytes whether trusted or not, for inspection (dumping, hashing):
// never hand these to a target's load unless the code is trusted.
const vkp_blob_t *vkp_artifact_shipped_blobs(const vkp_artifact_t *artifact);

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
