// SPDX-License-Identifier: Apache-2.0
// .vkp artifacts: a base/archive.h container with entries
//   meta.json                 versions, model, policy, profile, targets, plan
//   stages/<i>/graph.json     the stage subgraph (docs/graph-format.md)
//   stages/<i>/graph.bin      its weights
//   stages/<i>/code           the blob the stage's target compiled
//   signature                 optional: Ed25519 over all the others
//                             (pipeline/artifact_sign.h)
#include "vkpipe/artifact.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/archive.h"
#include "base/file.h"
#include "base/json_hooks.h"
#include "base/status_macros.h"
#include "pipeline/artifact_sign.h"
#include "plan/plan_json.h"

#define VKP__VKPIPE_VERSION "0.1.0"

struct vkp_artifact_t {
  vkp_archive_t *archive;
  vkp_plan_t *plan;
  vkp_blob_t *blobs;   // point into the archive image (not owned)
  char *metadata;      // owned copy, NUL-terminated
  char *path;          // owned copy, for messages
  bool code_trusted;   // blobs may be loaded (signed by a trusted key, or
                       // the caller opted in)
  bool is_signed;      // has a signature entry
};

bool vkp_artifact_is_artifact(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char magic[8];
  bool yes = fread(magic, 1, sizeof magic, f) == sizeof magic &&
             memcmp(magic, "VKPIPE\r\n", 8) == 0;
  fclose(f);
  return yes;
}

// --- building ----------------------------------------------------------------

// The stage graphs live in the artifact: stage i names "stages/<i>/graph.json"
// (its weights are "stages/<i>/graph.bin").
static void vkp__stage_graph_name(void *user, const vkp_plan_t *plan, int32_t stage,
                                  char *buf, size_t size) {
  snprintf(buf, size, "stages/%d/graph.json", (int)stage);
}

static vkp_status_t vkp__meta_json(const vkp_plan_t *plan,
                                   const vkp_artifact_info_t *info,
                                   char **out_text) {
  vkp__json_init_hooks();  // the text is freed with vkp__free
  cJSON *m = cJSON_CreateObject();
  cJSON *targets = cJSON_CreateArray();
  cJSON *plan_json = NULL;
  vkp__plan_codec_t codec = {.graph_name = vkp__stage_graph_name};
  vkp_status_t st = vkp__plan_json_write(plan, &codec, &plan_json);
  if (st) {
    cJSON_Delete(m);
    cJSON_Delete(targets);
    return st;
  }
  bool ok = m && targets;
  ok = ok && cJSON_AddNumberToObject(m, "format_version", VKP_ARTIFACT_FORMAT_VERSION) &&
       cJSON_AddStringToObject(m, "vkpipe_version", VKP__VKPIPE_VERSION) &&
       cJSON_AddStringToObject(m, "model", info && info->model ? info->model : "") &&
       cJSON_AddStringToObject(m, "policy", info && info->policy ? info->policy : "");
  for (int32_t s = 0; ok && s < plan->n_stages; ++s) {
    bool seen = false;
    for (int32_t k = 0; k < s; ++k)
      seen = seen || strcmp(plan->stages[k].target, plan->stages[s].target) == 0;
    if (!seen) ok = cJSON_AddItemToArray(targets, cJSON_CreateString(plan->stages[s].target));
  }
  if (ok) {
    ok = cJSON_AddItemToObject(m, "targets", targets);
    targets = NULL;
  }
  if (ok) {
    cJSON *profile = info && info->profile_json ? cJSON_Parse(info->profile_json) : NULL;
    ok = cJSON_AddItemToObject(m, "profile", profile ? profile : cJSON_CreateNull());
  }
  if (ok) {
    ok = cJSON_AddItemToObject(m, "plan", plan_json);
    plan_json = NULL;
  }
  char *text = ok ? cJSON_PrintBuffered(m, 4096, 1) : NULL;
  cJSON_Delete(m);
  cJSON_Delete(targets);
  cJSON_Delete(plan_json);
  if (!text) return VKP_OOM("artifact metadata");
  *out_text = text;
  return NULL;
}

vkp_status_t vkp_artifact_build(const vkp_plan_t *plan,
                                const vkp_registry_t *registry,
                                const vkp_artifact_info_t *info,
                                const char *path) {
  VKP_RETURN_IF_ERROR(vkp_plan_validate(plan));
  vkp_archive_writer_t *w = NULL;
  char *meta = NULL;
  vkp_status_t st = vkp_archive_writer_create(&w);
  if (!st) st = vkp__meta_json(plan, info, &meta);
  if (!st) st = vkp_archive_writer_add(w, "meta.json", meta, strlen(meta));
  for (int32_t s = 0; s < plan->n_stages && !st; ++s) {
    const vkp_plan_stage_t *stage = &plan->stages[s];
    const vkp_target_t *target = NULL;
    st = vkp_registry_lookup(registry, stage->target, &target);
    char name[64];
    char *json = NULL;
    void *bin = NULL;
    size_t json_size = 0, bin_size = 0;
    if (!st) st = vkp_graph_save_memory(stage->graph, "graph.bin", &json, &json_size,
                                        &bin, &bin_size);
    if (!st) {
      snprintf(name, sizeof name, "stages/%d/graph.json", (int)s);
      st = vkp_archive_writer_add(w, name, json, json_size);
    }
    if (!st) {
      snprintf(name, sizeof name, "stages/%d/graph.bin", (int)s);
      st = vkp_archive_writer_add(w, name, bin, bin_size);
    }
    vkp_free(json);
    vkp_free(bin);
    vkp_compile_options_t opts = {0};
    if (info && info->stage_compile_options) opts = info->stage_compile_options[s];
    if (opts.threads == 0) opts.threads = stage->threads;
    if (opts.precision == VKP_PRECISION_FP32) opts.precision = stage->precision;
    if (!opts.cpu_affinity) {
      opts.cpu_affinity = stage->cpu_affinity;
      opts.n_cpu_affinity = stage->n_cpu_affinity;
    }
    vkp_blob_t blob = {0};
    if (!st) st = target->vtable->compiler.compile(target, stage->graph, &opts, &blob);
    if (!st) {
      snprintf(name, sizeof name, "stages/%d/code", (int)s);
      st = vkp_archive_writer_add(w, name, blob.data, blob.size);
    }
    vkp_blob_deinit(&blob);
    if (st) st = vkp_status_annotate(st, "stage '%s' (%s)", stage->name, stage->target);
  }
  if (!st && info && info->sign_key)
    st = vkp__artifact_sign(w, VKP_ARTIFACT_FORMAT_VERSION, info->sign_key);
  if (!st) st = vkp_archive_writer_save(w, path, VKP_ARTIFACT_FORMAT_VERSION);
  vkp_archive_writer_destroy(w);
  vkp__free(meta);
  return st ? vkp_status_annotate(st, "building artifact '%s'", path) : NULL;
}

// --- loading -----------------------------------------------------------------

static vkp_status_t vkp__json_err(const char *what) {
  return vkp_status_make(VKP_STATUS_DATA_LOSS, "meta.json: %s", what);
}

// Loads the stage graph an artifact's plan names: the entry `graph_name`
// ("stages/<i>/graph.json") and its weights beside it (".bin").
static vkp_status_t vkp__load_stage_graph(void *user, const char *stage_name,
                                          const char *graph_name, vkp_graph_t **out_graph) {
  const vkp_archive_t *a = user;
  *out_graph = NULL;
  char bin_name[256];
  size_t len = strlen(graph_name);
  const void *json = NULL, *bin = NULL;
  size_t json_size = 0, bin_size = 0;
  if (len < 5 || len >= sizeof bin_name || strcmp(graph_name + len - 5, ".json") != 0)
    return vkp_status_make(VKP_STATUS_DATA_LOSS,
                           "stage '%s': graph '%s' is not a .json entry", stage_name,
                           graph_name);
  snprintf(bin_name, sizeof bin_name, "%.*s.bin", (int)(len - 5), graph_name);
  if (!vkp_archive_find(a, graph_name, &json, &json_size) ||
      !vkp_archive_find(a, bin_name, &bin, &bin_size))
    return vkp_status_make(VKP_STATUS_DATA_LOSS, "stage '%s': missing entry %s",
                           stage_name, json ? bin_name : graph_name);
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load_memory(json, json_size, bin, bin_size, &g);
  // Tools name files after stages and their graphs (inspect --dump).
  if (!st && (!vkp__file_name_is_safe(stage_name) || !vkp__file_name_is_safe(g->name)))
    st = vkp_status_make(VKP_STATUS_DATA_LOSS,
                         "stage and graph names must be file names made of "
                         "A-Z a-z 0-9 _ . - (not starting with '.'); stage is '%s', "
                         "graph is '%s'",
                         stage_name, g->name);
  if (st) {
    vkp_graph_destroy(g);
    return vkp_status_annotate(st, "stage '%s'", stage_name);
  }
  *out_graph = g;
  return NULL;
}

vkp_status_t vkp_artifact_load(const char *path, vkp_artifact_t **out_artifact) {
  return vkp_artifact_load_with_options(path, NULL, out_artifact);
}

// Loads from `path`, or from `image` (`image_size` bytes, copied) when it is
// not NULL, `path` then naming it in messages.
static vkp_status_t vkp__artifact_load(const char *path, const void *image,
                                       size_t image_size,
                                       const vkp_artifact_load_options_t *options,
                                       vkp_artifact_t **out_artifact) {
  *out_artifact = NULL;
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "loading an artifact"));
  VKP__ALLOCATOR_SCOPE(allocator);
  if (options && (options->n_trusted_keys < 0 ||
                  (options->n_trusted_keys > 0 && !options->trusted_keys)))
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "loading artifact '%s': n_trusted_keys is %d with "
                           "trusted_keys %s", path, (int)options->n_trusted_keys,
                           options->trusted_keys ? "set" : "NULL");
  vkp_artifact_t *art = vkp__calloc(1, sizeof(*art));
  if (!art) return VKP_OOM("artifact");
  art->path = vkp__strdup(path);
  vkp_status_t st = art->path ? NULL : VKP_OOM("artifact path");
  if (!st)
    st = image ? vkp_archive_open_memory(image, image_size, path,
                                         VKP_ARTIFACT_FORMAT_VERSION, &art->archive)
               : vkp_archive_open(path, VKP_ARTIFACT_FORMAT_VERSION, &art->archive);
  if (!st) {
    const void *sig = NULL;
    size_t sig_size = 0;
    art->is_signed = vkp_archive_find(art->archive, VKP__SIGNATURE_ENTRY, &sig, &sig_size);
    // Signatures are checked before anything in the file is parsed, so a
    // caller that asked for signed files parses only signed bytes.
    if (options && options->n_trusted_keys > 0) {
      st = vkp__artifact_verify(art->archive, path, VKP_ARTIFACT_FORMAT_VERSION,
                                options->trusted_keys, options->n_trusted_keys);
      art->code_trusted = !st;
    } else {
      art->code_trusted = options && options->trust_unsigned_code;
    }
  }
  const void *meta = NULL;
  size_t meta_size = 0;
  cJSON *root = NULL;
  if (!st && !vkp_archive_find(art->archive, "meta.json", &meta, &meta_size))
    st = vkp_status_make(VKP_STATUS_DATA_LOSS, "no meta.json entry");
  if (!st) {
    art->metadata = vkp__strndup(meta, meta_size);
    if (!art->metadata) st = VKP_OOM("artifact metadata");
  }
  if (!st) {
    vkp__json_init_hooks();
    root = cJSON_ParseWithLength(art->metadata, meta_size);
    if (!root) st = vkp__json_oom() ? VKP_OOM("meta.json") : vkp__json_err("not valid JSON");
  }
  if (!st) {
    const cJSON *fv = cJSON_GetObjectItemCaseSensitive(root, "format_version");
    if (!cJSON_IsNumber(fv) || (int)fv->valuedouble != VKP_ARTIFACT_FORMAT_VERSION)
      st = vkp__json_err("format_version missing or not this vkpipe's");
  }
  if (!st) {
    vkp__plan_codec_t codec = {.user = art->archive, .load_graph = vkp__load_stage_graph};
    st = vkp__plan_json_read(cJSON_GetObjectItemCaseSensitive(root, "plan"), NULL, NULL,
                             &codec, &art->plan);
    if (st) st = vkp_status_annotate(st, "meta.json");
  }
  if (!st) {
    art->blobs = vkp__calloc((size_t)art->plan->n_stages + 1, sizeof(vkp_blob_t));
    if (!art->blobs) st = VKP_OOM("artifact blobs");
  }
  for (int32_t s = 0; !st && s < art->plan->n_stages; ++s) {
    char entry[64];
    const void *code = NULL;
    size_t size = 0;
    snprintf(entry, sizeof entry, "stages/%d/code", (int)s);
    if (!vkp_archive_find(art->archive, entry, &code, &size))
      st = vkp_status_make(VKP_STATUS_DATA_LOSS, "stage %d: missing its code", (int)s);
    art->blobs[s].data = (void *)code;
    art->blobs[s].size = size;
  }
  cJSON_Delete(root);
  if (st) {
    vkp_artifact_destroy(art);
    return vkp_status_annotate(st, "loading artifact '%s'", path);
  }
  *out_artifact = art;
  return NULL;
}

vkp_status_t vkp_artifact_load_with_options(const char *path,
                                            const vkp_artifact_load_options_t *options,
                                            vkp_artifact_t **out_artifact) {
  return vkp__artifact_load(path, NULL, 0, options, out_artifact);
}

vkp_status_t vkp_artifact_load_memory(const void *data, size_t size, const char *name,
                                      const vkp_artifact_load_options_t *options,
                                      vkp_artifact_t **out_artifact) {
  return vkp__artifact_load(name ? name : "(memory)", data ? data : "", size, options,
                            out_artifact);
}

void vkp_artifact_destroy(vkp_artifact_t *artifact) {
  if (!artifact) return;
  vkp_plan_destroy(artifact->plan);
  vkp__free(artifact->blobs);
  vkp__free(artifact->metadata);
  vkp__free(artifact->path);
  vkp_archive_close(artifact->archive);
  vkp__free(artifact);
}

const vkp_plan_t *vkp_artifact_plan(const vkp_artifact_t *artifact) {
  return artifact->plan;
}

const vkp_blob_t *vkp_artifact_blobs(const vkp_artifact_t *artifact) {
  return artifact->code_trusted ? artifact->blobs : NULL;
}

const vkp_blob_t *vkp_artifact_shipped_blobs(const vkp_artifact_t *artifact) {
  return artifact->blobs;
}

bool vkp_artifact_code_is_trusted(const vkp_artifact_t *artifact) {
  return artifact->code_trusted;
}

bool vkp_artifact_is_signed(const vkp_artifact_t *artifact) {
  return artifact->is_signed;
}

vkp_status_t vkp_artifact_pipeline_create(const vkp_artifact_t *artifact,
                                          const vkp_registry_t *registry,
                                          const vkp_pipeline_options_t *options,
                                          vkp_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  if (artifact->code_trusted)
    return vkp_pipeline_create_from_blobs(artifact->plan, registry, artifact->blobs,
                                          options, out_pipeline);
  // The shipped code is not trusted: every stage is compiled again from the
  // subgraph the loader parsed and validated. Only data from the file
  // reaches the code generators, never code.
  vkp_status_t st = vkp_pipeline_create(artifact->plan, registry, options, out_pipeline);
  if (!st) return NULL;
  return vkp_status_annotate(
      st,
      "artifact '%s' is %s, so its compiled code is not run and its stages are "
      "compiled again from their graphs, which failed. To run the shipped code, "
      "sign it ('vkpipe build --sign KEY') and trust the key ('vkpipe run "
      "--trust KEY.pub'), or vouch for the file with --trust-unsigned",
      artifact->path, artifact->is_signed ? "signed but no trusted key was given"
                                          : "not signed");
}

const char *vkp_artifact_metadata(const vkp_artifact_t *artifact) {
  return artifact->metadata;
}

int32_t vkp_artifact_entry_count(const vkp_artifact_t *artifact) {
  return vkp_archive_count(artifact->archive);
}

const char *vkp_artifact_entry_name(const vkp_artifact_t *artifact, int32_t index) {
  return vkp_archive_name(artifact->archive, index);
}

uint64_t vkp_artifact_entry_size(const vkp_artifact_t *artifact, int32_t index) {
  return vkp_archive_size(artifact->archive, index);
}

uint32_t vkp_artifact_entry_crc(const vkp_artifact_t *artifact, int32_t index) {
  return vkp_archive_crc(artifact->archive, index);
}
