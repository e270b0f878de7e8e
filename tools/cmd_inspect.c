// SPDX-License-Identifier: Apache-2.0
// `vkpipe inspect`: what a .vkp artifact holds; --dump writes its stages'
// sources and shader disassembly.
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/file.h"
#include "tools/tool.h"
#include "vkpipe/alloc.h"
#include "vkpipe/artifact.h"
#include "vkpipe/target.h"

int vkp_cmd_inspect(int argc, char **argv);
extern const char vkp_cmd_inspect_summary[];
const char vkp_cmd_inspect_summary[] =
    "show what a .vkp artifact holds; --dump its sources";

static void inspect_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe inspect MODEL.vkp [--metadata] [--dump DIR]\n"
          "\n"
          "Prints an artifact's metadata, its stages (target, nodes, inputs and "
          "outputs,\nweight and code sizes) and its entries. --dump DIR writes, "
          "per stage, the\nsubgraph JSON and what the stage's target can show of "
          "its compiled code\n(generated C source, GLSL and SPIR-V "
          "disassembly).\n--metadata prints the whole metadata JSON (versions, "
          "plan, device profile).\n");
}

// The metadata's headline fields; all of it with --metadata.
static void inspect_print_metadata(const char *path, const char *json, bool all) {
  printf("%s\n", path);
  cJSON *m = cJSON_Parse(json);
  const cJSON *fv = cJSON_GetObjectItemCaseSensitive(m, "format_version");
  const cJSON *vv = cJSON_GetObjectItemCaseSensitive(m, "vkpipe_version");
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(m, "model");
  const cJSON *policy = cJSON_GetObjectItemCaseSensitive(m, "policy");
  const cJSON *targets = cJSON_GetObjectItemCaseSensitive(m, "targets");
  const cJSON *profile = cJSON_GetObjectItemCaseSensitive(m, "profile");
  printf("  format version %d, built by vkpipe %s\n",
         cJSON_IsNumber(fv) ? (int)fv->valuedouble : -1,
         cJSON_IsString(vv) ? vv->valuestring : "?");
  printf("  model:   %s\n", cJSON_IsString(model) ? model->valuestring : "?");
  printf("  policy:  %s\n", cJSON_IsString(policy) ? policy->valuestring : "?");
  printf("  targets:");
  const cJSON *t;
  cJSON_ArrayForEach(t, targets) {
    if (cJSON_IsString(t)) printf(" %s", t->valuestring);
  }
  printf("\n  profile: %s\n", cJSON_IsObject(profile) ? "embedded (see --metadata)" : "none");
  if (all) printf("\nmetadata:\n%s\n", json);
  printf("\n");
  cJSON_Delete(m);
}

static vkp_status_t inspect_dump(const vkp_artifact_t *art, const char *dir) {
  const vkp_plan_t *plan = vkp_artifact_plan(art);
  // Decoded and written out, never loaded: no trust needed.
  const vkp_blob_t *blobs = vkp_artifact_shipped_blobs(art);
  vkp_registry_t *registry = NULL;
  vkp_status_t st = vkp__dir_create(dir, 0755);
  if (!st) st = vkp_registry_create_default(&registry);
  for (int32_t s = 0; !st && s < plan->n_stages; ++s) {
    const vkp_plan_stage_t *stage = &plan->stages[s];
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, stage->name);
    st = vkp__dir_create(path, 0755);
    if (st) break;
    char graph_path[4200];
    snprintf(graph_path, sizeof graph_path, "%s/graph.json", path);
    st = vkp_graph_save(stage->graph, graph_path);
    if (st) break;
    const vkp_target_t *target = vkp_registry_find(registry, stage->target);
    if (target && target->vtable->compiler.dump) {
      st = target->vtable->compiler.dump(target, stage->graph, blobs[s].data, blobs[s].size, path);
    } else {
      // No way to decode it here: keep the raw bytes and say why.
      char code_path[4200];
      snprintf(code_path, sizeof code_path, "%s/code.bin", path);
      st = vkp__write_file(code_path, blobs[s].data, blobs[s].size);
      const char *why = vkp_registry_unavailable_reason(registry, stage->target);
      printf("  %s: target '%s' %s; wrote its raw code to %s\n", stage->name,
             stage->target, why ? why : "has no dump support", code_path);
    }
    if (!st) printf("  %s (%s) -> %s/\n", stage->name, stage->target, path);
  }
  vkp_registry_destroy(registry);
  return st;
}

int vkp_cmd_inspect(int argc, char **argv) {
  const char *path = NULL, *dump = NULL;
  bool show_metadata = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      inspect_usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--metadata")) {
      show_metadata = true;
    } else if (!strcmp(argv[i], "--dump")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "vkpipe inspect: --dump needs a directory\n");
        return VKP_TOOL_EXIT_USAGE;
      }
      dump = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "vkpipe inspect: unknown option '%s' (try --help)\n", argv[i]);
      return VKP_TOOL_EXIT_USAGE;
    } else if (!path) {
      path = argv[i];
    } else {
      fprintf(stderr, "vkpipe inspect: unexpected argument '%s'\n", argv[i]);
      return VKP_TOOL_EXIT_USAGE;
    }
  }
  if (!path) {
    fprintf(stderr, "vkpipe inspect: need an artifact (try --help)\n");
    return VKP_TOOL_EXIT_USAGE;
  }
  vkp_artifact_t *art = NULL;
  vkp_status_t st = vkp_artifact_load(path, &art);
  if (!st) {
    const vkp_plan_t *plan = vkp_artifact_plan(art);
    const vkp_blob_t *blobs = vkp_artifact_shipped_blobs(art);
    inspect_print_metadata(path, vkp_artifact_metadata(art), show_metadata);
    printf("signed: %s\n", vkp_artifact_is_signed(art)
                               ? "yes (checked by 'vkpipe run --trust KEY.pub')"
                               : "no (its stages are compiled again when run)");
    printf("%-10s %-8s %6s %-24s %-24s %12s %12s\n", "stage", "target", "nodes",
           "inputs", "outputs", "weights B", "code B");
    for (int32_t s = 0; s < plan->n_stages; ++s) {
      const vkp_plan_stage_t *stage = &plan->stages[s];
      const vkp_graph_t *g = stage->graph;
      char ins[128] = "", outs[128] = "";
      size_t u = 0;
      for (int32_t i = 0; i < g->n_inputs && u < sizeof ins; ++i) {
        int w = snprintf(ins + u, sizeof ins - u, "%s%s", i ? "," : "",
                         g->values[g->inputs[i]].name);
        if (w < 0) break;
        u += (size_t)w;
      }
      u = 0;
      for (int32_t i = 0; i < g->n_outputs && u < sizeof outs; ++i) {
        int w = snprintf(outs + u, sizeof outs - u, "%s%s", i ? "," : "",
                         g->values[g->outputs[i]].name);
        if (w < 0) break;
        u += (size_t)w;
      }
      printf("%-10s %-8s %6d %-24.24s %-24.24s %12zu %12zu\n", stage->name,
             stage->target, (int)g->n_nodes, ins, outs, vkp_graph_constant_bytes(g),
             blobs[s].size);
    }
    // A plan placed over MPI ranks (build --rank / --ranks) says where.
    bool ranked = false;
    for (int32_t s = 0; s < plan->n_stages; ++s) ranked |= plan->stages[s].rank != 0;
    if (ranked) {
      printf("ranks:");
      for (int32_t s = 0; s < plan->n_stages; ++s)
        printf("%s %s on rank %d", s ? "," : "", plan->stages[s].name,
               (int)plan->stages[s].rank);
      printf(" (run under 'mpirun -np N', N above the highest)\n");
    }
    // And stages that run as copies side by side (build --replicas).
    for (int32_t s = 0; s < plan->n_stages; ++s)
      if (plan->stages[s].replicas > 1)
        printf("copies: %s runs as %d copies side by side, frames alternating\n",
               plan->stages[s].name, (int)plan->stages[s].replicas);
    printf("\nentries:\n");
    for (int32_t i = 0; i < vkp_artifact_entry_count(art); ++i)
      printf("  %-28s %12llu bytes  crc32 %08x\n", vkp_artifact_entry_name(art, i),
             (unsigned long long)vkp_artifact_entry_size(art, i),
             (unsigned)vkp_artifact_entry_crc(art, i));
    if (dump) st = inspect_dump(art, dump);
  }
  vkp_artifact_destroy(art);
  if (st) {
    fprintf(stderr, "vkpipe inspect: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    return VKP_TOOL_EXIT_FAILURE;
  }
  return 0;
}
