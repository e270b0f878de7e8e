// SPDX-License-Identifier: Apache-2.0
// `vkpipe build`: partition a model and compile every stage into a .vkp
// artifact that runs without the model and without a compiler.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/tool.h"
#include "vkpipe/alloc.h"
#include "vkpipe/artifact.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/target.h"

int vkp_cmd_build(int argc, char **argv);
extern const char vkp_cmd_build_summary[];
const char vkp_cmd_build_summary[] =
    "partition and compile a model into a .vkp artifact";

#define BUILD_MAX_ASSIGNS 32

static void build_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe build MODEL -o OUT.vkp [options]\n"
          "\n"
          "Partitions MODEL (JSON graph or ONNX) across the registered targets, "
          "compiles\nevery stage, and writes one artifact file holding the plan, "
          "the compiled code,\nthe weights and metadata. 'vkpipe run', 'vkpipe "
          "inspect', 'vkpipe-bench' and\nthe C API load it without the model.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE   artifact to write (required)\n"
          "  --policy P          auto (default) or a target name\n"
          "  --stages K          pipeline stages, or 'auto' (default)\n"
          VKP_TOOL_PROFILE_HELP
          "  --assign PAT=TGT    place nodes matching PAT on TGT (repeatable)\n"
          "  --ranks N           spread the stages over N MPI ranks by cost\n"
          "                      (as 'vkpipe partition --ranks N'; run it under\n"
          "                      'mpirun -np N')\n"
          "  --rank STAGE=R      run stage STAGE (a name like stage1) on MPI\n"
          "                      rank R (repeatable, after --ranks too;\n"
          "                      docs/scale-out.md)\n"
          "  --threads N|auto    threads inside each CPU stage (default auto:\n"
          "                      chosen with the stage count by estimated\n"
          "                      throughput)\n"
          VKP_TOOL_REPLICAS_HELP
          "  --refine N          run the plan here for about half a second,\n"
          "                      cut the model again on its stages' measured\n"
          "                      times, up to N times (1..%d), and build the\n"
          "                      plan that ran fastest (default 0: the\n"
          "                      estimates' cut; not with ranks; CPU stages are\n"
          "                      measured compiled for this machine)\n"
          "  --march ARCH        -march for CPU stages (default native)\n"
          "  --sign KEY          sign the artifact with the secret key file KEY\n"
          "                      (from 'vkpipe keygen'); 'vkpipe run --trust\n"
          "                      KEY.pub' then runs its compiled code as shipped\n"
          VKP_TOOL_LOAD_HELP
          "  -h, --help          this text\n",
          VKP_TOOL_MAX_REFINE);
}

int vkp_cmd_build(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *policy = "auto", *profile_path = NULL;
  const char *march = NULL, *sign_path = NULL;
  int32_t stages = 0, threads = 0, cores = 0, n_assigns = 0, n_ranks = 0, ranks = 0;
  int32_t replicas = 0;
  int32_t refine = 0;
  const char *rank_args[BUILD_MAX_ASSIGNS];
  vkp_assign_t assigns[BUILD_MAX_ASSIGNS];
  vkp_tool_load_args_t load = {0};
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int load_rc = vkp_tool_load_option("build", argc, argv, &i, &load, &load_option);
    if (load_rc) return load_rc;
    if (load_option) continue;
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      build_usage(stdout);
      return 0;
    }
    bool takes_value = !strcmp(a, "-o") || !strcmp(a, "--output") ||
                       !strcmp(a, "--policy") || !strcmp(a, "--stages") ||
                       !strcmp(a, "--profile") || !strcmp(a, "--assign") ||
                       !strcmp(a, "--threads") || !strcmp(a, "--march") ||
                       !strcmp(a, "--cores") || !strcmp(a, "--sign") ||
                       !strcmp(a, "--rank") || !strcmp(a, "--ranks") ||
                       !strcmp(a, "--refine") || !strcmp(a, "--replicas");
    if (takes_value && !has_value) {
      fprintf(stderr, "vkpipe build: %s needs a value\n", a);
      return VKP_TOOL_EXIT_USAGE;
    }
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      out = argv[++i];
    } else if (!strcmp(a, "--policy")) {
      policy = argv[++i];
    } else if (!strcmp(a, "--profile")) {
      profile_path = argv[++i];
    } else if (!strcmp(a, "--march")) {
      march = argv[++i];
    } else if (!strcmp(a, "--sign")) {
      sign_path = argv[++i];
    } else if (!strcmp(a, "--stages")) {
      const char *v = argv[++i];
      char *end;
      long k = strtol(v, &end, 10);
      if (strcmp(v, "auto") == 0) {
        stages = 0;
      } else if (*end || end == v || k < 1 || k > VKP_PARTITION_MAX_STAGES) {
        fprintf(stderr, "vkpipe build: --stages wants 1..%d or 'auto', got '%s'\n",
                VKP_PARTITION_MAX_STAGES, v);
        return VKP_TOOL_EXIT_USAGE;
      } else {
        stages = (int32_t)k;
      }
    } else if (!strcmp(a, "--threads") || !strcmp(a, "--cores")) {
      bool is_threads = a[2] == 't';
      const char *v = argv[++i];
      char *end;
      long k = strtol(v, &end, 10);
      if (is_threads && !strcmp(v, "auto")) {
        k = 0;
      } else if (*end || end == v || k < 1 || k > 256) {
        fprintf(stderr, "vkpipe build: %s wants 1..256%s, got '%s'\n", a,
                is_threads ? " or 'auto'" : "", v);
        return VKP_TOOL_EXIT_USAGE;
      }
      if (is_threads)
        threads = (int32_t)k;
      else
        cores = (int32_t)k;
    } else if (!strcmp(a, "--replicas")) {
      if (!vkp_tool_parse_replicas("vkpipe build", argv[++i], &replicas))
        return VKP_TOOL_EXIT_USAGE;
    } else if (!strcmp(a, "--refine")) {
      int64_t k;
      if (!vkp_tool_parse_int(argv[++i], 0, VKP_TOOL_MAX_REFINE, &k)) {
        fprintf(stderr, "vkpipe build: --refine wants 0..%d rounds, got '%s'\n",
                VKP_TOOL_MAX_REFINE, argv[i]);
        return VKP_TOOL_EXIT_USAGE;
      }
      refine = (int32_t)k;
    } else if (!strcmp(a, "--ranks")) {
      const char *v = argv[++i];
      char *end;
      long k = strtol(v, &end, 10);
      if (*end || end == v || k < 1 || k > 1024) {
        fprintf(stderr, "vkpipe build: --ranks wants a count 1..1024, got '%s'\n", v);
        return VKP_TOOL_EXIT_USAGE;
      }
      ranks = (int32_t)k;
    } else if (!strcmp(a, "--rank")) {
      const char *v = argv[++i], *eq = strrchr(v, '=');
      char *end = NULL;
      long r = eq ? strtol(eq + 1, &end, 10) : -1;
      if (!eq || eq == v || end == eq + 1 || *end || r < 0 || r > VKP_PLAN_MAX_RANK) {
        fprintf(stderr, "vkpipe build: --rank '%s' is not STAGE=R with R in 0..%d\n", v,
                VKP_PLAN_MAX_RANK);
        return VKP_TOOL_EXIT_USAGE;
      }
      if (n_ranks == BUILD_MAX_ASSIGNS) {
        fprintf(stderr, "vkpipe build: at most %d --rank options\n", BUILD_MAX_ASSIGNS);
        return VKP_TOOL_EXIT_USAGE;
      }
      rank_args[n_ranks++] = v;
    } else if (!strcmp(a, "--assign")) {
      if (n_assigns == BUILD_MAX_ASSIGNS) {
        fprintf(stderr, "vkpipe build: at most %d --assign options\n", BUILD_MAX_ASSIGNS);
        return VKP_TOOL_EXIT_USAGE;
      }
      vkp_status_t st = vkp_assign_parse(argv[++i], &assigns[n_assigns]);
      if (st) {
        fprintf(stderr, "vkpipe build: --assign: %s\n", vkp_status_message(st));
        vkp_status_free(st);
        return VKP_TOOL_EXIT_USAGE;
      }
      ++n_assigns;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "vkpipe build: unknown option '%s' (try --help)\n", a);
      return VKP_TOOL_EXIT_USAGE;
    } else if (!model) {
      model = a;
    } else {
      fprintf(stderr, "vkpipe build: unexpected argument '%s'\n", a);
      return VKP_TOOL_EXIT_USAGE;
    }
  }
  if (!model || !out) {
    fprintf(stderr, "vkpipe build: need MODEL and -o OUT.vkp (try --help)\n");
    return VKP_TOOL_EXIT_USAGE;
  }
  if (refine > 0 && (ranks > 1 || n_ranks > 0)) {
    fprintf(stderr, "vkpipe build: --refine measures the plan in this process; it does "
                    "not go with --ranks or --rank\n");
    return VKP_TOOL_EXIT_USAGE;
  }

  vkp_registry_t *registry = NULL;
  vkp_profile_t *profile = NULL;
  vkp_graph_t *graph = NULL;
  vkp_tool_refined_t refined = {0};
  char *profile_json = NULL;
  vkp_compile_options_t *copts = NULL;
  vkp_artifact_secret_key_t sign_key;
  vkp_status_t st = sign_path ? vkp_artifact_secret_key_load(sign_path, &sign_key) : NULL;
  if (!st) st = vkp_registry_create_default(&registry);
  if (!st) st = vkp_tool_profile("build", profile_path, cores, registry, &profile);
  if (!st) st = vkp_profile_to_json(profile, &profile_json);
  if (!st) st = vkp_tool_load_graph(model, &load, &graph);
  if (!st) {
    vkp_partition_options_t opt = {.policy = policy, .stages = stages,
                                   .threads = threads, .ranks = ranks,
                                   .replicas = replicas,
                                   .n_assigns = n_assigns, .assigns = assigns};
    st = vkp_tool_refine(graph, registry, profile, &opt, VKP_PRECISION_FP32, refine, 3, 0,
                         NULL, &refined);
  }
  vkp_plan_t *plan = refined.plan;
  for (int32_t k = 0; !st && k < n_ranks; ++k) {
    const char *eq = strrchr(rank_args[k], '=');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - rank_args[k]), rank_args[k]);
    int32_t s = vkp_plan_find_stage(plan, name);
    st = s >= 0 ? vkp_plan_set_stage_rank(plan, s, (int32_t)strtol(eq + 1, NULL, 10))
                : vkp_status_make(VKP_STATUS_NOT_FOUND,
                                  "--rank: the plan has no stage '%s' (it has %d "
                                  "stages, stage0..stage%d)",
                                  name, (int)plan->n_stages, (int)plan->n_stages - 1);
  }
  if (!st) {
    copts = calloc((size_t)plan->n_stages + 1, sizeof(*copts));
    if (!copts) st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "compile options");
    for (int32_t s = 0; copts && s < plan->n_stages; ++s) {
      copts[s].threads = 0;  // the plan's, from the partitioner
      copts[s].march = march;
    }
  }
  if (!st) {
    vkp_artifact_info_t info = {.model = model, .policy = policy,
                                .profile_json = profile_json,
                                .stage_compile_options = copts,
                                .sign_key = sign_path ? &sign_key : NULL};
    st = vkp_artifact_build(plan, registry, &info, out);
  }
  int rc = 0;
  if (st) {
    fprintf(stderr, "vkpipe build: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    rc = VKP_TOOL_EXIT_FAILURE;
  } else {
    if (refined.notes) printf("%s\n", refined.notes);
    vkp_partition_print(refined.part, stdout);
    struct stat written;
    long size = stat(out, &written) == 0 ? (long)written.st_size : -1L;
    printf("\nwrote %s (%ld bytes, %d stage%s)\n", out, size, (int)plan->n_stages,
           plan->n_stages == 1 ? "" : "s");
  }
  memset(&sign_key, 0, sizeof sign_key);
  free(copts);
  vkp_free(profile_json);
  vkp_tool_refined_deinit(&refined);
  vkp_graph_destroy(graph);
  vkp_profile_destroy(profile);
  vkp_registry_destroy(registry);
  return rc;
}
