// SPDX-License-Identifier: Apache-2.0
// Plans as JSON, the one codec (plan/plan_json.h; docs/pipeline-config.md).
#include "plan/plan_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/json_hooks.h"
#include "base/status_macros.h"
#include "vkpipe/plan.h"

#define VKP__PLAN_VERSION 1

// ---------------------------------------------------------------------------
// Writing

static cJSON *vkp__endpoint(const vkp_plan_t *plan, int32_t stage,
                            const char *name, bool source) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  bool ok;
  if (stage == VKP_PLAN_GLOBAL) {
    ok = cJSON_AddStringToObject(o, "global", name) != NULL;
  } else {
    const char *sname =
        stage >= 0 && stage < plan->n_stages ? plan->stages[stage].name : "?";
    ok = cJSON_AddStringToObject(o, "stage", sname) &&
         cJSON_AddStringToObject(o, source ? "output" : "input", name);
  }
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static bool vkp__add_names(cJSON *root, const char *key, char *const *names,
                           int32_t n) {
  cJSON *arr = cJSON_AddArrayToObject(root, key);
  if (!arr) return false;
  for (int32_t i = 0; i < n; ++i) {
    cJSON *s = cJSON_CreateString(names[i]);
    if (!s || !cJSON_AddItemToArray(arr, s)) {
      cJSON_Delete(s);
      return false;
    }
  }
  return true;
}

vkp_status_t vkp__plan_json_write(const vkp_plan_t *plan, const vkp__plan_codec_t *codec,
                                  cJSON **out_root) {
  *out_root = NULL;
  bool named_graphs = codec && codec->graph_name;
  for (int32_t s = 0; s < plan->n_stages && !named_graphs; ++s)
    if (!plan->stages[s].graph_file && !plan->source)
      return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                             "stage '%s' has neither a subgraph file nor a "
                             "source model to name its nodes in",
                             plan->stages[s].name);
  vkp__json_init_hooks();
  cJSON *root = cJSON_CreateObject();
  bool ok = root && cJSON_AddNumberToObject(root, "version", VKP__PLAN_VERSION) &&
            cJSON_AddStringToObject(root, "name", plan->name);
  if (ok && plan->source) ok = cJSON_AddStringToObject(root, "source", plan->source);
  ok = ok && vkp__add_names(root, "inputs", plan->inputs, plan->n_inputs) &&
       vkp__add_names(root, "outputs", plan->outputs, plan->n_outputs);
  cJSON *stages = ok ? cJSON_AddArrayToObject(root, "stages") : NULL;
  ok = ok && stages;
  for (int32_t s = 0; ok && s < plan->n_stages; ++s) {
    const vkp_plan_stage_t *st = &plan->stages[s];
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(stages, o);
    if (!ok) {
      cJSON_Delete(o);
      break;
    }
    ok = cJSON_AddStringToObject(o, "name", st->name) &&
         cJSON_AddStringToObject(o, "target", st->target) &&
         cJSON_AddNumberToObject(o, "estimated_ms", st->estimated_ms) &&
         cJSON_AddNumberToObject(o, "threads", st->threads);
    if (ok && st->n_cpu_affinity) {
      cJSON *cpus = cJSON_AddArrayToObject(o, "cpu_affinity");
      ok = cpus != NULL;
      for (int32_t c = 0; ok && c < st->n_cpu_affinity; ++c) {
        cJSON *e = cJSON_CreateNumber(st->cpu_affinity[c]);
        ok = e && cJSON_AddItemToArray(cpus, e);
        if (!ok) cJSON_Delete(e);
      }
    }
    // Written only when set, so plans without ranks read as they always did.
    if (ok && st->rank) ok = cJSON_AddNumberToObject(o, "rank", st->rank) != NULL;
    if (ok && st->replicas > 1)
      ok = cJSON_AddNumberToObject(o, "replicas", st->replicas) != NULL;
    if (ok && st->precision != VKP_PRECISION_FP32)
      ok = cJSON_AddStringToObject(o, "precision", vkp_precision_name(st->precision)) != NULL;
    if (ok && st->n_fallbacks) {
      cJSON *fb = cJSON_AddArrayToObject(o, "fallbacks");
      ok = fb != NULL;
      for (int32_t f = 0; ok && f < st->n_fallbacks; ++f) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(fb, e);
        if (!ok) {
          cJSON_Delete(e);
          break;
        }
        ok = cJSON_AddStringToObject(e, "node", st->fallbacks[f].node) &&
             cJSON_AddStringToObject(e, "instead_of", st->fallbacks[f].instead_of) &&
             cJSON_AddStringToObject(e, "reason", st->fallbacks[f].reason);
      }
    }
    if (ok && named_graphs) {
      char graph[256];
      codec->graph_name(codec->user, plan, s, graph, sizeof graph);
      ok = cJSON_AddStringToObject(o, "graph", graph) != NULL;
    } else if (ok && st->graph_file) {
      ok = cJSON_AddStringToObject(o, "graph", st->graph_file) != NULL;
    } else if (ok) {
      cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
      ok = nodes != NULL;
      for (int32_t i = 0; ok && i < st->graph->n_nodes; ++i) {
        cJSON *n = cJSON_CreateString(st->graph->nodes[i].name);
        ok = n && cJSON_AddItemToArray(nodes, n);
        if (!ok) cJSON_Delete(n);
      }
    }
  }
  cJSON *bindings = ok ? cJSON_AddArrayToObject(root, "bindings") : NULL;
  ok = ok && bindings;
  for (int32_t i = 0; ok && i < plan->n_bindings; ++i) {
    const vkp_plan_binding_t *b = &plan->bindings[i];
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(bindings, o);
    if (!ok) {
      cJSON_Delete(o);
      break;
    }
    cJSON *from = vkp__endpoint(plan, b->src_stage, b->src_name, true);
    ok = from && cJSON_AddItemToObject(o, "from", from);
    if (!ok) {
      cJSON_Delete(from);
      break;
    }
    cJSON *to = vkp__endpoint(plan, b->dst_stage, b->dst_name, false);
    ok = to && cJSON_AddItemToObject(o, "to", to);
    if (!ok) cJSON_Delete(to);
  }
  if (!ok) {
    cJSON_Delete(root);
    return VKP_OOM("plan JSON");
  }
  *out_root = root;
  return NULL;
}

vkp_status_t vkp_plan_to_json(const vkp_plan_t *plan, char **out_json) {
  *out_json = NULL;
  cJSON *root = NULL;
  VKP_RETURN_IF_ERROR(vkp__plan_json_write(plan, NULL, &root));
  return vkp__json_print(root, true, "plan JSON", out_json);
}

vkp_status_t vkp_plan_save(const vkp_plan_t *plan, const char *path) {
  char *text = NULL;
  VKP_RETURN_IF_ERROR(vkp_plan_to_json(plan, &text));
  vkp_status_t st = vkp__write_text_line(path, text);
  vkp__free(text);
  return st;
}

// ---------------------------------------------------------------------------
// Reading

typedef struct vkp__plan_reader_t {
  const vkp__plan_codec_t *codec;  // may be NULL
  const char *base_dir;
  const vkp_graph_t *model;   // borrowed or loaded
  vkp_graph_t *loaded_model;  // owned
  char *problems;             // unknown-stage lines, joined with validation
  int32_t n_problems;
} vkp__plan_reader_t;

static char *vkp__join_path(const char *base_dir, const char *path) {
  if (!base_dir || !base_dir[0] || path[0] == '/') return vkp__strdup(path);
  return vkp__asprintf("%s/%s", base_dir, path);
}

static vkp_status_t vkp__string_item(const cJSON *obj, const char *key,
                                     bool required, const char *what,
                                     const char **out) {
  *out = NULL;
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!item) {
    if (!required) return NULL;
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "%s: missing \"%s\"", what, key);
  }
  if (!cJSON_IsString(item) || !item->valuestring[0])
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "%s: \"%s\" must be a non-empty string", what, key);
  *out = item->valuestring;
  return NULL;
}

// A stage's "cpu_affinity": an array of cpu numbers ([0, 1]) or a string of
// numbers and ranges ("0,2-3", the form TVM's pipeline config uses).
static vkp_status_t vkp__read_cpu_affinity(vkp_plan_t *plan, int32_t stage,
                                           const cJSON *item) {
  const char *name = plan->stages[stage].name;
  int32_t cpus[VKP_PLAN_MAX_AFFINITY], n = 0;
  bool ok = true, too_many = false;
  if (cJSON_IsArray(item)) {
    const cJSON *e;
    cJSON_ArrayForEach(e, item) {
      if (!cJSON_IsNumber(e) || e->valuedouble != (double)(int64_t)e->valuedouble ||
          e->valuedouble < -1e9 || e->valuedouble > 1e9) {
        ok = false;
        break;
      }
      if (n == VKP_PLAN_MAX_AFFINITY) {
        too_many = true;
        break;
      }
      cpus[n++] = (int32_t)e->valuedouble;
    }
  } else if (cJSON_IsString(item)) {
    const char *p = item->valuestring;
    while (ok && *p && !too_many) {
      char *end;
      errno = 0;
      long lo = strtol(p, &end, 10), hi = lo;
      if (end == p || errno || lo < 0 || lo > VKP_PLAN_MAX_CPU) ok = false;
      p = end;
      if (ok && *p == '-') {
        const char *q = p + 1;
        hi = strtol(q, &end, 10);
        if (end == q || errno || hi < lo || hi > VKP_PLAN_MAX_CPU) ok = false;
        p = end;
      }
      for (long c = lo; ok && c <= hi; ++c) {
        if (n == VKP_PLAN_MAX_AFFINITY) {
          too_many = true;
          break;
        }
        cpus[n++] = (int32_t)c;
      }
      if (ok && *p == ',') ++p;
      else if (ok && *p) ok = false;
    }
    if (n == 0) ok = false;
  } else {
    ok = false;
  }
  if (too_many)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': \"cpu_affinity\" lists more than %d cpus", name,
                           VKP_PLAN_MAX_AFFINITY);
  if (!ok)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': \"cpu_affinity\" must list cpu numbers 0..%d, as an "
                           "array ([0, 1]) or a string (\"0,2-3\")",
                           name, VKP_PLAN_MAX_CPU);
  return vkp_plan_set_stage_cpu_affinity(plan, stage, n, cpus);
}

static vkp_status_t vkp__model(vkp__plan_reader_t *r, const vkp_plan_t *plan,
                               const char *stage) {
  if (r->model) return NULL;
  if (!plan->source)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "stage '%s' lists nodes, but the plan has no "
                           "\"source\" model and none was given",
                           stage);
  char *path = vkp__join_path(r->base_dir, plan->source);
  if (!path) return VKP_OOM("model path");
  vkp_status_t st = vkp_graph_load(path, &r->loaded_model);
  st = vkp_status_annotate(st, "loading the plan's source model '%s'", path);
  vkp__free(path);
  r->model = r->loaded_model;
  return st;
}

// A stage's optional integer field `key` in [lo, hi] into *out (left as it
// is when absent); the error names the stage and says what the field means.
static vkp_status_t vkp__stage_int(const cJSON *o, const char *key, int32_t lo, int32_t hi,
                                   const char *meaning, const char *name, int32_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) return NULL;
  if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
      v->valuedouble != (double)(int32_t)v->valuedouble)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': \"%s\" must be an integer %d..%d (%s)", name, key,
                           (int)lo, (int)hi, meaning);
  *out = (int32_t)v->valuedouble;
  return NULL;
}

static vkp_status_t vkp__read_stage(vkp__plan_reader_t *r, vkp_plan_t *plan,
                                    const cJSON *o, int32_t index) {
  char what[64];
  snprintf(what, sizeof what, "stages[%d]", (int)index);
  if (!cJSON_IsObject(o))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "%s is not an object", what);
  const char *name, *target, *file;
  VKP_RETURN_IF_ERROR(vkp__string_item(o, "name", true, what, &name));
  VKP_RETURN_IF_ERROR(vkp__string_item(o, "target", true, what, &target));
  VKP_RETURN_IF_ERROR(vkp__string_item(o, "graph", false, what, &file));
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
  if (!!file == !!nodes)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': give exactly one of \"graph\" (a "
                           "subgraph file) and \"nodes\" (names in the source "
                           "model)",
                           name);
  vkp_graph_t *sub = NULL;
  // A container that holds the graphs (an artifact) reads nothing else: no
  // model from the file system.
  if (!file && r->codec && r->codec->load_graph)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': give \"graph\" (\"nodes\" of a source model "
                           "are for plan files)",
                           name);
  if (file && r->codec && r->codec->load_graph) {
    VKP_RETURN_IF_ERROR(r->codec->load_graph(r->codec->user, name, file, &sub));
    file = NULL;  // the container's name, not a file to write back
  } else if (file) {
    char *path = vkp__join_path(r->base_dir, file);
    if (!path) return VKP_OOM("subgraph path");
    vkp_status_t st = vkp_graph_load(path, &sub);
    st = vkp_status_annotate(st, "stage '%s': loading its graph '%s'", name, path);
    vkp__free(path);
    VKP_RETURN_IF_ERROR(st);
  } else {
    if (!cJSON_IsArray(nodes) || cJSON_GetArraySize(nodes) == 0)
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "stage '%s': \"nodes\" must be a non-empty array "
                             "of node names",
                             name);
    VKP_RETURN_IF_ERROR(vkp__model(r, plan, name));
    int32_t n = cJSON_GetArraySize(nodes), k = 0;
    int32_t *ids = vkp__calloc((size_t)n, sizeof(int32_t));
    if (!ids) return VKP_OOM("stage nodes");
    const cJSON *item;
    cJSON_ArrayForEach(item, nodes) {
      int32_t id = cJSON_IsString(item) ? vkp_graph_find_node(r->model, item->valuestring)
                                        : -1;
      if (id < 0) {
        vkp_status_t st = vkp_status_make(
            VKP_STATUS_NOT_FOUND, "stage '%s': model '%s' has no node %s%s%s", name,
            r->model->name, cJSON_IsString(item) ? "'" : "",
            cJSON_IsString(item) ? item->valuestring : "(not a string)",
            cJSON_IsString(item) ? "'" : "");
        vkp__free(ids);
        return st;
      }
      ids[k++] = id;
    }
    vkp_status_t st = vkp_graph_extract(r->model, n, ids, name, &sub);
    vkp__free(ids);
    VKP_RETURN_IF_ERROR(vkp_status_annotate(st, "stage '%s'", name));
  }
  int32_t idx = -1;
  VKP_RETURN_IF_ERROR(vkp_plan_add_stage(plan, name, target, sub, &idx));
  vkp_plan_stage_t *s = &plan->stages[idx];
  const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "estimated_ms");
  if (cJSON_IsNumber(ms)) s->estimated_ms = ms->valuedouble;
  // What the partitioner noted about fallbacks: information, kept as read.
  const cJSON *fb = cJSON_GetObjectItemCaseSensitive(o, "fallbacks"), *e;
  if (fb && !cJSON_IsArray(fb))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': \"fallbacks\" must be an array", name);
  cJSON_ArrayForEach(e, fb) {
    const char *node, *instead_of, *reason;
    VKP_RETURN_IF_ERROR(vkp__string_item(e, "node", true, "a fallback", &node));
    VKP_RETURN_IF_ERROR(
        vkp__string_item(e, "instead_of", true, "a fallback", &instead_of));
    VKP_RETURN_IF_ERROR(vkp__string_item(e, "reason", true, "a fallback", &reason));
    VKP_RETURN_IF_ERROR(vkp_plan_add_fallback(plan, idx, node, instead_of, reason));
  }
  const cJSON *precision = cJSON_GetObjectItemCaseSensitive(o, "precision");
  if (precision && (!cJSON_IsString(precision) ||
                    !vkp_precision_parse(precision->valuestring, &s->precision)))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "stage '%s': \"precision\" must be \"fp32\" or \"fp16\"", name);
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(o, "threads");
  if (threads) {
    if (!cJSON_IsNumber(threads) || threads->valuedouble < 0 ||
        threads->valuedouble > 1024)
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "stage '%s': \"threads\" must be 0..1024", name);
    s->threads = (int32_t)threads->valuedouble;
  }
  VKP_RETURN_IF_ERROR(vkp__stage_int(o, "replicas", 1, VKP_PLAN_MAX_REPLICAS,
                                      "copies of the stage that run frames side by side",
                                      name, &s->replicas));
  const cJSON *affinity = cJSON_GetObjectItemCaseSensitive(o, "cpu_affinity");
  if (affinity) VKP_RETURN_IF_ERROR(vkp__read_cpu_affinity(plan, idx, affinity));
  VKP_RETURN_IF_ERROR(vkp__stage_int(o, "rank", 0, VKP_PLAN_MAX_RANK,
                                      "the MPI rank that runs the stage", name, &s->rank));
  if (file) VKP_RETURN_IF_ERROR(vkp_plan_set_stage_file(plan, idx, file));
  return NULL;
}

static vkp_status_t vkp__add_problem(vkp__plan_reader_t *r, const char *fmt, ...)
    VKP_PRINTF(2, 3);

static vkp_status_t vkp__add_problem(vkp__plan_reader_t *r, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  char *joined = vkp__asprintf("%s\n  %s", r->problems ? r->problems : "", line);
  if (!joined) return VKP_OOM("plan problems");
  vkp__free(r->problems);
  r->problems = joined;
  r->n_problems++;
  return NULL;
}

// Parses one endpoint: {"global": NAME} or {"stage": S, "output"|"input": N}.
// *out_stage is VKP_PLAN_GLOBAL, a stage index, or -2 for an unknown stage.
static vkp_status_t vkp__read_endpoint(const vkp_plan_t *plan, const cJSON *o,
                                       bool source, int32_t index,
                                       int32_t *out_stage, const char **out_name,
                                       const char **out_stage_name) {
  const char *side = source ? "from" : "to";
  const char *key = source ? "output" : "input";
  char what[64];
  snprintf(what, sizeof what, "bindings[%d].%s", (int)index, side);
  *out_stage_name = NULL;
  if (!cJSON_IsObject(o))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "%s must be an object", what);
  const char *global, *stage, *name;
  VKP_RETURN_IF_ERROR(vkp__string_item(o, "global", false, what, &global));
  VKP_RETURN_IF_ERROR(vkp__string_item(o, "stage", false, what, &stage));
  if (!!global == !!stage)
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "%s: give either \"global\" or \"stage\" with \"%s\"",
                           what, key);
  if (global) {
    *out_stage = VKP_PLAN_GLOBAL;
    *out_name = global;
    return NULL;
  }
  VKP_RETURN_IF_ERROR(vkp__string_item(o, key, true, what, &name));
  *out_stage = vkp_plan_find_stage(plan, stage);
  if (*out_stage < 0) *out_stage = -2;
  *out_stage_name = stage;
  *out_name = name;
  return NULL;
}

static vkp_status_t vkp__read_names(const cJSON *root, const char *key,
                                    vkp_plan_t *plan, bool inputs) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, key);
  if (!arr) return NULL;
  if (!cJSON_IsArray(arr))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "\"%s\" must be an array of names", key);
  const cJSON *item;
  cJSON_ArrayForEach(item, arr) {
    if (!cJSON_IsString(item))
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "\"%s\" must be an array of names", key);
    VKP_RETURN_IF_ERROR(inputs ? vkp_plan_add_global_input(plan, item->valuestring)
                               : vkp_plan_add_global_output(plan, item->valuestring));
  }
  return NULL;
}

static vkp_status_t vkp__read_plan(vkp__plan_reader_t *r, const cJSON *root,
                                   vkp_plan_t **out_plan) {
  *out_plan = NULL;
  if (!cJSON_IsObject(root))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "a plan is a JSON object");
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(version) || version->valuedouble != VKP__PLAN_VERSION)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "plan \"version\" must be %d", VKP__PLAN_VERSION);
  const char *name, *source;
  VKP_RETURN_IF_ERROR(vkp__string_item(root, "name", false, "plan", &name));
  VKP_RETURN_IF_ERROR(vkp__string_item(root, "source", false, "plan", &source));
  vkp_plan_t *plan = NULL;
  VKP_RETURN_IF_ERROR(vkp_plan_create(name ? name : "plan", &plan));
  *out_plan = plan;  // the caller destroys it on failure
  VKP_RETURN_IF_ERROR(vkp_plan_set_source(plan, source));
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(root, "stages");
  if (!cJSON_IsArray(stages))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR, "plan needs a \"stages\" array");
  const cJSON *o;
  int32_t i = 0;
  cJSON_ArrayForEach(o, stages) VKP_RETURN_IF_ERROR(vkp__read_stage(r, plan, o, i++));
  VKP_RETURN_IF_ERROR(vkp__read_names(root, "inputs", plan, true));
  VKP_RETURN_IF_ERROR(vkp__read_names(root, "outputs", plan, false));
  const cJSON *bindings = cJSON_GetObjectItemCaseSensitive(root, "bindings");
  if (!cJSON_IsArray(bindings))
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "plan needs a \"bindings\" array");
  i = 0;
  cJSON_ArrayForEach(o, bindings) {
    if (!cJSON_IsObject(o))
      return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                             "bindings[%d] must be an object", (int)i);
    int32_t src, dst;
    const char *src_name, *dst_name, *src_stage, *dst_stage;
    VKP_RETURN_IF_ERROR(vkp__read_endpoint(plan, cJSON_GetObjectItemCaseSensitive(o, "from"),
                                           true, i, &src, &src_name, &src_stage));
    VKP_RETURN_IF_ERROR(vkp__read_endpoint(plan, cJSON_GetObjectItemCaseSensitive(o, "to"),
                                           false, i, &dst, &dst_name, &dst_stage));
    if (src == -2 || dst == -2) {
      VKP_RETURN_IF_ERROR(vkp__add_problem(
          r, "binding %s.%s -> %s.%s: unknown stage '%s'",
          src_stage ? src_stage : "global", src_name,
          dst_stage ? dst_stage : "global", dst_name,
          src == -2 ? src_stage : dst_stage));
    } else {
      VKP_RETURN_IF_ERROR(vkp_plan_bind(plan, src, src_name, dst, dst_name));
    }
    ++i;
  }
  vkp_status_t st = vkp_plan_validate(plan);
  if (!r->n_problems) return st;
  // Unknown stages first, then what validation found, as one list.
  const char *rest = "";
  if (st) {
    const char *m = vkp_status_message(st);
    const char *colon = strstr(m, ":\n");
    rest = colon ? colon + 1 : m;
  }
  vkp_status_t all = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                                     "plan '%s' has problems:%s%s", plan->name,
                                     r->problems, rest);
  vkp_status_free(st);
  return all;
}

vkp_status_t vkp_plan_from_json(const char *json, size_t size,
                                const char *base_dir, const vkp_graph_t *model,
                                vkp_plan_t **out_plan) {
  *out_plan = NULL;
  vkp__json_init_hooks();
  cJSON *root = cJSON_ParseWithLength(json, size);
  if (!root && vkp__json_oom()) return VKP_OOM("plan JSON");
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    return vkp_status_make(VKP_STATUS_PARSE_ERROR,
                           "plan is not valid JSON (near byte %ld)",
                           at && at >= json ? (long)(at - json) : -1L);
  }
  vkp_status_t st = vkp__plan_json_read(root, base_dir, model, NULL, out_plan);
  cJSON_Delete(root);
  return st;
}

vkp_status_t vkp__plan_json_read(const cJSON *root, const char *base_dir,
                                 const vkp_graph_t *model, const vkp__plan_codec_t *codec,
                                 vkp_plan_t **out_plan) {
  *out_plan = NULL;
  vkp__plan_reader_t r = {.codec = codec, .base_dir = base_dir, .model = model};
  vkp_plan_t *plan = NULL;
  vkp_status_t st = vkp__read_plan(&r, root, &plan);
  vkp_graph_destroy(r.loaded_model);
  vkp__free(r.problems);
  if (st) {
    vkp_plan_destroy(plan);
    return st;
  }
  *out_plan = plan;
  return NULL;
}

vkp_status_t vkp_plan_load(const char *path, const vkp_graph_t *model,
                           vkp_plan_t **out_plan) {
  *out_plan = NULL;
  char *buf = NULL;
  size_t len = 0;
  VKP_RETURN_IF_ERROR(vkp__file_read(path, (size_t)1 << 30, "a plan", (void **)&buf, &len));
  // Paths inside the plan are relative to its directory.
  char *dir = vkp__strdup(path);
  if (!dir) {
    vkp__free(buf);
    return VKP_OOM("plan path");
  }
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    dir[0] = '\0';
  vkp_status_t st = vkp_plan_from_json(buf, len, slash ? dir : NULL, model, out_plan);
  vkp__free(dir);
  vkp__free(buf);
  return vkp_status_annotate(st, "loading plan '%s'", path);
}
