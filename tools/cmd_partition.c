// SPDX-License-Identifier: Apache-2.0
// `vkpipe partition`: place, cut into stages and write the pipeline plan.
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/tool.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/plan.h"
#include "vkpipe/target.h"

int vkp_cmd_partition(int argc, char **argv);
extern const char vkp_cmd_partition_summary[];
const char vkp_cmd_partition_summary[] =
    "place nodes on targets by cost, cut pipeline stages, write the plan";

#define VKP__MAX_ASSIGNS 64

static void vkp__partition_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe partition MODEL [options]\n"
          "\n"
          "  --policy P          auto (default: minimise estimated time) or a\n"
          "                      target name (everything there; what it cannot\n"
          "                      run goes to the fallback)\n"
          "  --stages K|auto     number of pipeline stages (default auto)\n"
          "  --max-stages N      upper bound for --stages auto (default 8)\n"
          "  --assign PAT=TGT    put nodes whose name matches the glob on TGT\n"
          "                      (repeatable; the last match wins)\n"
          "  --fallback TGT      target for nodes the policy target cannot run\n"
          "                      (default: the target that declares itself\n"
          "                      the default fallback, cpu among the built-ins)\n"
          "  --threads N|auto    threads per CPU stage (default auto: chosen\n"
          "                      with the stage count by estimated throughput)\n"
          VKP_TOOL_REPLICAS_HELP
          VKP_TOOL_PROFILE_HELP
          "  --keep-islands      never move small regions to a neighbour\n"
          "  --ranks N           spread the stages over N MPI ranks, each with\n"
          "                      its own devices, bindings between ranks on the\n"
          "                      profile's rank link (docs/scale-out.md); the\n"
          "                      cut sees every rank's cores, and --stages auto\n"
          "                      tries N stages or more\n"
          VKP_TOOL_LOAD_HELP
          "  -o, --output FILE   write the plan JSON\n"
          "  --split             also write each stage's subgraph next to the\n"
          "                      plan (<plan>.<stage>.json) and reference it\n"
          "  --dot FILE          write a Graphviz picture of the plan\n"
          "\n"
          "Prints a table (stage, target, nodes, est. ms, bytes in/out) and why\n"
          "each node not on the policy's first choice went elsewhere.\n"
          "docs/pipeline-config.md describes the plan format.\n");
}

static int vkp__fail(vkp_status_t st, const char *what) {
  fprintf(stderr, "vkpipe partition: %s%s%s\n", what ? what : "",
          what ? ": " : "", vkp_status_message(st));
  vkp_status_free(st);
  return VKP_TOOL_EXIT_FAILURE;
}

static bool vkp__parse_count(const char *text, int32_t *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || !end || *end || v < 1 || v > VKP_PARTITION_MAX_STAGES) return false;
  *out = (int32_t)v;
  return true;
}

// The model's path as the plan should record it: relative to the plan's
// directory when both are in the current one, else absolute.
static char *vkp__source_for(const char *model, const char *plan_path) {
  if (model[0] == '/' || !strchr(plan_path, '/')) return strdup(model);
  char *abs = realpath(model, NULL);
  return abs ? abs : strdup(model);
}

static int vkp__write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "vkpipe partition: cannot write '%s': %s\n", path, strerror(errno));
    return VKP_TOOL_EXIT_FAILURE;
  }
  bool ok = fputs(text, f) >= 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    fprintf(stderr, "vkpipe partition: writing '%s' failed\n", path);
    return VKP_TOOL_EXIT_FAILURE;
  }
  return 0;
}

// --split: each stage's subgraph saved beside the plan.
static vkp_status_t vkp__split(vkp_plan_t *plan, const char *plan_path) {
  size_t len = strlen(plan_path);
  size_t stem = len > 5 && strcmp(plan_path + len - 5, ".json") == 0 ? len - 5 : len;
  const char *slash = strrchr(plan_path, '/');
  size_t dir_len = slash ? (size_t)(slash - plan_path) + 1 : 0;
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%.*s.%s.json", (int)stem, plan_path,
                     plan->stages[s].name);
    if (n < 0 || (size_t)n >= sizeof path)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "path too long");
    vkp_status_t st = vkp_graph_save(plan->stages[s].graph, path);
    if (st) return st;
    st = vkp_plan_set_stage_file(plan, s, path + dir_len);
    if (st) return st;
  }
  return NULL;
}

int vkp_cmd_partition(int argc, char **argv) {
  const char *model = NULL, *output = NULL, *dot_path = NULL, *profile_path = NULL;
  vkp_partition_options_t opt = {.policy = "auto"};
  vkp_assign_t assigns[VKP__MAX_ASSIGNS];
  int32_t n_assigns = 0, cores = 0;
  bool split = false;
  vkp_tool_load_args_t load = {0};
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int load_rc = vkp_tool_load_option("partition", argc, argv, &i, &load, &load_option);
    if (load_rc) return load_rc;
    if (load_option) continue;
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      vkp__partition_usage(stdout);
      return 0;
    } else if (!strcmp(a, "--policy") && has_value) {
      opt.policy = argv[++i];
    } else if (!strcmp(a, "--stages") && has_value) {
      const char *v = argv[++i];
      if (strcmp(v, "auto") == 0) {
        opt.stages = 0;
      } else if (!vkp__parse_count(v, &opt.stages)) {
        fprintf(stderr, "vkpipe partition: --stages wants a count 1..1024 or 'auto', got '%s'\n", v);
        return VKP_TOOL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--max-stages") && has_value) {
      if (!vkp__parse_count(argv[++i], &opt.max_auto_stages)) {
        fprintf(stderr, "vkpipe partition: --max-stages wants a count 1..1024\n");
        return VKP_TOOL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--assign") && has_value) {
      if (n_assigns == VKP__MAX_ASSIGNS) {
        fprintf(stderr, "vkpipe partition: at most %d --assign\n", VKP__MAX_ASSIGNS);
        return VKP_TOOL_EXIT_USAGE;
      }
      vkp_status_t st = vkp_assign_parse(argv[++i], &assigns[n_assigns]);
      if (st) {
        vkp__fail(st, NULL);
        return VKP_TOOL_EXIT_USAGE;
      }
      ++n_assigns;
    } else if (!strcmp(a, "--fallback") && has_value) {
      opt.fallback = argv[++i];
    } else if (!strcmp(a, "--profile") && has_value) {
      profile_path = argv[++i];
    } else if (!strcmp(a, "--cores") && has_value) {
      if (!vkp__parse_count(argv[++i], &cores)) {
        fprintf(stderr, "vkpipe partition: --cores wants a count 1..1024\n");
        return VKP_TOOL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--threads") && has_value) {
      const char *v = argv[++i];
      if (strcmp(v, "auto") == 0) {
        opt.threads = 0;
      } else if (!vkp__parse_count(v, &opt.threads)) {
        fprintf(stderr, "vkpipe partition: --threads wants a count 1..1024 or 'auto', got '%s'\n", v);
        return VKP_TOOL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--replicas") && has_value) {
      if (!vkp_tool_parse_replicas("vkpipe partition", argv[++i], &opt.replicas))
        return VKP_TOOL_EXIT_USAGE;
    } else if (!strcmp(a, "--ranks") && has_value) {
      if (!vkp__parse_count(argv[++i], &opt.ranks)) {
        fprintf(stderr, "vkpipe partition: --ranks wants a count 1..1024\n");
        return VKP_TOOL_EXIT_USAGE;
      }
    } else if (!strcmp(a, "--keep-islands")) {
      opt.keep_islands = true;
    } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
      output = argv[++i];
    } else if (!strcmp(a, "--dot") && has_value) {
      dot_path = argv[++i];
    } else if (!strcmp(a, "--split")) {
      split = true;
    } else if (a[0] == '-' || model) {
      fprintf(stderr, "vkpipe partition: unexpected argument '%s'\n", a);
      vkp__partition_usage(stderr);
      return VKP_TOOL_EXIT_USAGE;
    } else {
      model = a;
    }
  }
  if (!model) {
    vkp__partition_usage(stderr);
    return VKP_TOOL_EXIT_USAGE;
  }
  if (split && !output) {
    fprintf(stderr, "vkpipe partition: --split needs -o\n");
    return VKP_TOOL_EXIT_USAGE;
  }
  opt.n_assigns = n_assigns;
  opt.assigns = assigns;
  vkp_graph_t *graph = NULL;
  vkp_registry_t *registry = NULL;
  vkp_profile_t *profile = NULL;
  vkp_partition_t *part = NULL;
  vkp_plan_t *plan = NULL;
  char *source = NULL, *dot = NULL;
  int rc = 0;
  vkp_status_t st = vkp_tool_load_graph(model, &load, &graph);
  if (st) {
    rc = vkp__fail(st, NULL);
    goto done;
  }
  st = vkp_registry_create_default(&registry);
  if (!st) st = vkp_tool_profile("partition", profile_path, cores, registry, &profile);
  if (!st) st = vkp_partition_create(graph, registry, profile, &opt, &part);
  if (st) {
    rc = vkp__fail(st, NULL);
    goto done;
  }
  vkp_partition_print(part, stdout);
  st = vkp_partition_to_plan(part, graph->name, &plan);
  if (st) {
    rc = vkp__fail(st, NULL);
    goto done;
  }
  if (output) {
    source = vkp__source_for(model, output);
    if (!source) {
      fprintf(stderr, "vkpipe partition: out of memory\n");
      rc = VKP_TOOL_EXIT_FAILURE;
      goto done;
    }
    st = vkp_plan_set_source(plan, source);
    if (!st && split) st = vkp__split(plan, output);
    if (!st) st = vkp_plan_save(plan, output);
    if (st) {
      rc = vkp__fail(st, "writing the plan");
      goto done;
    }
    printf("plan written to %s\n", output);
  }
  if (dot_path) {
    st = vkp_partition_to_dot(part, &dot);
    if (st) {
      rc = vkp__fail(st, "drawing the plan");
      goto done;
    }
    rc = vkp__write_text(dot_path, dot);
    if (!rc) printf("picture written to %s\n", dot_path);
  }
done:
  vkp_free(dot);
  free(source);
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_profile_destroy(profile);
  vkp_registry_destroy(registry);
  vkp_graph_destroy(graph);
  return rc;
}
