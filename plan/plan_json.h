// SPDX-License-Identifier: Apache-2.0
// The one JSON form of a plan (docs/pipeline-config.md), used by plan files,
// `vkpipe partition` and the plan inside a .vkp artifact's meta.json:
//
//   {"version": 1, "name": ..., "source": ..., "inputs": [...],
//    "outputs": [...], "stages": [{"name", "target", "graph" | "nodes",
//    "threads", "estimated_ms", "rank", "cpu_affinity", "fallbacks"}],
//    "bindings": [{"from": {"global": N} | {"stage": S, "output": N},
//                  "to":   {"global": N} | {"stage": S, "input": N}}]}
//
// A stage names its subgraph as "nodes" of the plan's "source" model or as a
// "graph"; what a graph name means belongs to the container: a file relative
// to the plan file (the default), or an entry of an artifact (a codec with
// its own graph_name / load_graph).
#ifndef VKPIPE_PLAN_PLAN_JSON_H_
#define VKPIPE_PLAN_PLAN_JSON_H_

#include <stddef.h>

#include "vkpipe/plan.h"

struct cJSON;

typedef struct vkp__plan_codec_t {
  void *user;
  // Writing: the "graph" stage `stage` names, written into `buf`. NULL: the
  // stage's graph_file, or else its nodes in the plan's source.
  void (*graph_name)(void *user, const vkp_plan_t *plan, int32_t stage, char *buf,
                     size_t size);
  // Reading: loads the subgraph stage `stage_name` names `graph_name` (the
  // caller owns *out_graph). NULL: a graph file relative to the plan's
  // directory, its name kept as the stage's graph_file.
  vkp_status_t (*load_graph)(void *user, const char *stage_name,
                             const char *graph_name, vkp_graph_t **out_graph);
} vkp__plan_codec_t;

// The plan as a cJSON object (owned by the caller); `codec` may be NULL.
vkp_status_t vkp__plan_json_write(const vkp_plan_t *plan, const vkp__plan_codec_t *codec,
                                  struct cJSON **out_root) VKP_MUST_USE;

// Reads and validates a plan from `root` (borrowed). `base_dir` and `model`
// as for vkp_plan_from_json; `codec` may be NULL. *out_plan is owned by the
// caller.
vkp_status_t vkp__plan_json_read(const struct cJSON *root, const char *base_dir,
                                 const vkp_graph_t *model, const vkp__plan_codec_t *codec,
                                 vkp_plan_t **out_plan) VKP_MUST_USE;

#endif  // VKPIPE_PLAN_PLAN_JSON_H_
