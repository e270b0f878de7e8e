// SPDX-License-Identifier: Apache-2.0
// --refine: a plan run briefly, the model cut again on its stages' measured
// times, the fastest plan kept (tools/tool.h; docs/pipeline-config.md,
// "Re-cutting on measured stage times"). Used by `vkpipe build` and
// `vkpipe-bench`.
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/sb.h"
#include "tools/tool.h"
#include "vkpipe/pipeline.h"

// Each plan runs for about this long by its estimate, within these frames.
#define VKP__REFINE_RUN_S 0.5
#define VKP__REFINE_FRAMES_MIN 8
#define VKP__REFINE_FRAMES_MAX 400
// A measuring run gives up when no frame finishes for this long.
#define VKP__REFINE_FRAME_TIMEOUT_NS (60ull * 1000000000ull)

void vkp_tool_inputs_free(vkp_tensor_t *inputs, int32_t n) {
  for (int32_t i = 0; inputs && i < n; ++i) vkp_tensor_deinit(&inputs[i]);
  free(inputs);
}

vkp_status_t vkp_tool_random_inputs(const vkp_plan_t *plan, vkp_tensor_t **out_inputs) {
  *out_inputs = NULL;
  vkp_tensor_t *inputs = calloc((size_t)plan->n_inputs + 1, sizeof(*inputs));
  if (!inputs) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "random inputs");
  uint64_t state = 0x2545F4914F6CDD1Dull;  // xorshift64: the same inputs every run
  for (int32_t i = 0; i < plan->n_inputs; ++i) {
    const vkp_value_t *v = vkp_plan_input_value(plan, i);
    vkp_status_t st = v ? vkp_tensor_init(&inputs[i], v->dtype, v->rank, v->shape)
                        : vkp_status_make(VKP_STATUS_INTERNAL,
                                          "global input '%s' is unbound", plan->inputs[i]);
    if (st) {
      vkp_tool_inputs_free(inputs, i);
      return st;
    }
    size_t n = vkp_tensor_numel(&inputs[i]);
    for (size_t e = 0; e < n; ++e) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      double u = (double)(state >> 11) * (1.0 / 9007199254740992.0);
      if (v->dtype == VKP_DTYPE_FLOAT32) ((float *)inputs[i].data)[e] = (float)(u * 2 - 1);
      else if (v->dtype == VKP_DTYPE_INT64) ((int64_t *)inputs[i].data)[e] = (int64_t)(u * 8);
      else if (v->dtype == VKP_DTYPE_INT32) ((int32_t *)inputs[i].data)[e] = (int32_t)(u * 8);
    }
  }
  *out_inputs = inputs;
  return NULL;
}

static uint64_t vkp__tool_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

// Takes the oldest result; a frame's own error is returned, naming it.
static vkp_status_t vkp__tool_collect(vkp_pipeline_t *pipe) {
  vkp_pipeline_result_t res;
  vkp_status_t st = vkp_pipeline_get_output(pipe, VKP__REFINE_FRAME_TIMEOUT_NS, &res);
  if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
    vkp_status_free(st);
    return vkp_status_make(VKP_STATUS_TIMEOUT, "no frame finished within %llu s",
                           VKP__REFINE_FRAME_TIMEOUT_NS / 1000000000ull);
  }
  if (st) return st;
  if (res.status) {
    st = vkp_status_annotate(res.status, "frame %llu", (unsigned long long)res.seq);
    res.status = NULL;
  }
  vkp_pipeline_result_deinit(&res);
  return st;
}

vkp_status_t vkp_tool_measure_plan(const vkp_plan_t *plan, const vkp_registry_t *registry,
                                   const vkp_tensor_t *inputs, int32_t warmup,
                                   int32_t frames, double *out_fps, double *out_stage_s) {
  vkp_pipeline_t *pipe = NULL;
  vkp_status_t st = vkp_pipeline_create(plan, registry, NULL, &pipe);
  if (st) return st;
  vkp_pipeline_stats_t before = {0}, after = {0};
  int32_t total = warmup + frames, launched = 0, collected = 0;
  // Frames in flight: enough to keep every ring full.
  int32_t window = 2 * (plan->n_stages + VKP_PIPELINE_DEFAULT_RING_DEPTH);
  uint64_t t0 = 0;
  if (warmup == 0) {
    st = vkp_pipeline_get_stats(pipe, &before);
    t0 = vkp__tool_now_ns();
  }
  while (!st && collected < total) {
    while (!st && launched < total && launched - collected < window) {
      for (int32_t i = 0; i < plan->n_inputs && !st; ++i)
        st = vkp_pipeline_set_input(pipe, vkp_pipeline_input_name(pipe, i), &inputs[i]);
      if (!st) st = vkp_pipeline_run(pipe, NULL);
      if (!st) ++launched;
    }
    if (!st) st = vkp__tool_collect(pipe);
    if (!st && ++collected == warmup) {
      st = vkp_pipeline_get_stats(pipe, &before);
      t0 = vkp__tool_now_ns();
    }
  }
  uint64_t t1 = vkp__tool_now_ns();
  if (!st) st = vkp_pipeline_get_stats(pipe, &after);
  if (!st) {
    *out_fps = t1 > t0 ? (double)frames / ((double)(t1 - t0) * 1e-9) : 0.0;
    for (int32_t s = 0; s < plan->n_stages; ++s) {
      const vkp_pipeline_stage_stats_t *a = &after.stages[s], *b = &before.stages[s];
      uint64_t n = a->frames - b->frames;
      out_stage_s[s] = n ? (double)(a->busy_ns - b->busy_ns) * 1e-9 / (double)n : 0.0;
    }
  }
  vkp_pipeline_stats_deinit(&before);
  vkp_pipeline_stats_deinit(&after);
  vkp_pipeline_destroy(pipe);
  return st;
}

void vkp_tool_refined_deinit(vkp_tool_refined_t *r) {
  vkp_partition_destroy(r->part);
  vkp_plan_destroy(r->plan);
  vkp_free(r->notes);
  memset(r, 0, sizeof(*r));
}

// Whether two plans cut the graph alike: the same stages in order, on the
// same targets with the same threads, holding the same nodes.
static bool vkp__tool_same_cut(const vkp_plan_t *x, const vkp_plan_t *y) {
  if (x->n_stages != y->n_stages) return false;
  for (int32_t s = 0; s < x->n_stages; ++s) {
    const vkp_plan_stage_t *p = &x->stages[s], *q = &y->stages[s];
    if (strcmp(p->target, q->target) || p->threads != q->threads ||
        p->graph->n_nodes != q->graph->n_nodes)
      return false;
    for (int32_t j = 0; j < p->graph->n_nodes; ++j)
      if (strcmp(p->graph->nodes[j].name, q->graph->nodes[j].name)) return false;
  }
  return true;
}

// One partition and its plan, every stage at `precision`.
static vkp_status_t vkp__tool_cut(const vkp_graph_t *graph, const vkp_registry_t *registry,
                                  const vkp_profile_t *profile,
                                  const vkp_partition_options_t *options,
                                  vkp_precision_t precision, vkp_partition_t **out_part,
                                  vkp_plan_t **out_plan) {
  *out_plan = NULL;
  vkp_status_t st = vkp_partition_create(graph, registry, profile, options, out_part);
  if (!st) st = vkp_partition_to_plan(*out_part, graph->name, out_plan);
  for (int32_t s = 0; !st && s < (*out_plan)->n_stages; ++s)
    (*out_plan)->stages[s].precision = precision;
  if (st) {
    vkp_partition_destroy(*out_part);
    *out_part = NULL;
  }
  return st;
}

// The round's line: what the plan ran and each stage's busy time next to
// its estimate.
static vkp_status_t vkp__tool_round_note(char **notes, int32_t r, const vkp_plan_t *plan,
                                         double fps, int32_t frames, const double *busy_s) {
  char line[1024];
  size_t len = (size_t)snprintf(line, sizeof line,
                                "refine: plan %d (%s) ran %.1f frames/s over %d frames; "
                                "busy ms per frame (estimated):",
                                (int)r + 1, r == 0 ? "the estimates' cut" : "re-cut", fps,
                                (int)frames);
  for (int32_t s = 0; s < plan->n_stages && len < sizeof line; ++s)
    len += (size_t)snprintf(line + len, sizeof line - len, " %s %.3f (%.3f)",
                            plan->stages[s].name, busy_s[s] * 1e3,
                            plan->stages[s].estimated_ms);
  return vkp__lines_appendf(notes, "refine notes", "%s", line);
}

// Frames for a refinement run of `part`: about VKP__REFINE_RUN_S by its
// estimate, within the bounds and `max_frames` (> 0).
static int32_t vkp__tool_refine_frames(const vkp_partition_t *part, int32_t max_frames) {
  double per_frame = part->bottleneck_s > 1e-6 ? part->bottleneck_s : 1e-3;
  double want = VKP__REFINE_RUN_S / per_frame;
  int32_t frames = want < VKP__REFINE_FRAMES_MIN   ? VKP__REFINE_FRAMES_MIN
                   : want > VKP__REFINE_FRAMES_MAX ? VKP__REFINE_FRAMES_MAX
                                                   : (int32_t)want;
  return max_frames > 0 && frames > max_frames ? max_frames : frames;
}

// The partitioner chose plan 0's threads by the latency rule over a
// configuration it estimated faster (alt_threads): runs that one too and
// makes it plan 0 (its threads and copies then fixed in `opt` for the
// re-cuts) when it ran over VKP_PARTITION_THREADS_SLACK times faster. Estimates
// within a few percent of each other are a coin toss on a noisy machine
// (ResNet-18's 1 thread x 2 stages against 2 threads x 1 stage on two
// cores: 4% apart by the estimates, 7% by the clock).
static vkp_status_t vkp__tool_try_alt(const vkp_graph_t *graph, const vkp_registry_t *registry,
                                      const vkp_profile_t *profile,
                                      vkp_partition_options_t *opt, vkp_precision_t precision,
                                      int32_t warmup, int32_t max_frames,
                                      const vkp_tensor_t *inputs, vkp_partition_t **part,
                                      vkp_plan_t **plan, double *fps, double *busy,
                                      char **notes) {
  vkp_partition_options_t alt_opt = *opt;
  alt_opt.threads = (*part)->alt_threads;
  alt_opt.replicas = (*part)->alt_replicas;
  vkp_partition_t *alt_part = NULL;
  vkp_plan_t *alt_plan = NULL;
  double alt_fps = 0.0;
  double *alt_busy = malloc(sizeof(double) * VKP_PARTITION_MAX_STAGES);
  vkp_status_t st = alt_busy ? NULL : vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "busy times");
  if (!st)
    st = vkp__tool_cut(graph, registry, profile, &alt_opt, precision, &alt_part, &alt_plan);
  if (!st)
    st = vkp_status_annotate(
        vkp_tool_measure_plan(alt_plan, registry, inputs, warmup,
                              vkp__tool_refine_frames(alt_part, max_frames), &alt_fps, alt_busy),
        "refine: running the estimates' fastest configuration");
  bool keep = !st && alt_fps > *fps * VKP_PARTITION_THREADS_SLACK;
  if (!st)
    st = vkp__lines_appendf(
        notes, "refine notes",
        "refine: the estimates' fastest configuration (%d thread%s x %d stage%s%s) ran %.1f "
        "frames/s against the chosen one's %.1f: %s",
        (int)alt_part->threads, alt_part->threads == 1 ? "" : "s", (int)alt_part->n_stages,
        alt_part->n_stages == 1 ? "" : "s", alt_part->replicas > 1 ? " with copies" : "",
        alt_fps, *fps,
        keep ? "it replaces it (over 5% faster)" : "the chosen one stays (not 5% faster)");
  if (!st && keep) {
    // The chosen partition's notes (its table of configurations) stay, the
    // fastest one's own follow.
    // (Each is whole lines: lines_appendf adds back the last one's newline.)
    char *merged = NULL;
    const char *both[2] = {(*part)->notes, alt_part->notes};
    for (int k = 0; k < 2 && !st; ++k) {
      size_t n = both[k] ? strlen(both[k]) : 0;
      if (n > 0 && both[k][n - 1] == '\n') --n;
      if (n > 0) st = vkp__lines_appendf(&merged, "refine notes", "%.*s", (int)n, both[k]);
    }
    if (st) {
      vkp_free(merged);
      keep = false;
    } else {
      vkp_free(alt_part->notes);
      alt_part->notes = merged;
    }
  }
  if (!st && keep) {
    vkp_partition_destroy(*part);
    vkp_plan_destroy(*plan);
    *part = alt_part;
    *plan = alt_plan;
    *fps = alt_fps;
    memcpy(busy, alt_busy, sizeof(double) * (size_t)alt_plan->n_stages);
    opt->threads = alt_opt.threads;
    opt->replicas = alt_opt.replicas;
    alt_part = NULL;
    alt_plan = NULL;
  }
  vkp_partition_destroy(alt_part);
  vkp_plan_destroy(alt_plan);
  free(alt_busy);
  return st;
}

vkp_status_t vkp_tool_refine(const vkp_graph_t *graph, const vkp_registry_t *registry,
                             const vkp_profile_t *profile,
                             const vkp_partition_options_t *options,
                             vkp_precision_t precision, int32_t rounds, int32_t warmup,
                             int32_t max_frames, const vkp_tensor_t *inputs,
                             vkp_tool_refined_t *out) {
  memset(out, 0, sizeof(*out));
  if (rounds < 0 || rounds > VKP_TOOL_MAX_REFINE)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "refine rounds must be 0..%d, got %d",
                           VKP_TOOL_MAX_REFINE, (int)rounds);
  if (rounds > 0 && options->ranks > 1)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "a plan over %d MPI ranks is not measured in one process: "
                           "refine it without ranks, or leave refinement off",
                           (int)options->ranks);
  vkp_partition_options_t opt = *options;
  opt.n_measured = 0;
  opt.measured = NULL;
  vkp_partition_t *parts[VKP_TOOL_MAX_REFINE + 1] = {0};
  vkp_plan_t *plans[VKP_TOOL_MAX_REFINE + 1] = {0};
  vkp_status_t st = vkp__tool_cut(graph, registry, profile, &opt, precision, &parts[0],
                                  &plans[0]);
  int32_t n_plans = st ? 0 : 1;
  // Nothing to re-cut: one stage asked for, with its threads fixed or on a
  // device (no threads).
  if (!st && options->stages == 1 && plans[0]->n_stages == 1 &&
      (options->threads != 0 || plans[0]->stages[0].threads == 0))
    rounds = 0;
  vkp_tensor_t *random = NULL;
  int32_t n_random = 0;
  if (!st && rounds > 0 && !inputs) {
    st = vkp_tool_random_inputs(plans[0], &random);
    if (!st) n_random = plans[0]->n_inputs;
    inputs = random;
  }
  vkp_partition_measure_t *measured = NULL;
  int32_t n_measured = 0;
  double busy[VKP_PARTITION_MAX_STAGES];
  for (int32_t r = 0; !st && rounds > 0 && r < n_plans; ++r) {
    int32_t frames = vkp__tool_refine_frames(parts[r], max_frames);
    st = vkp_status_annotate(vkp_tool_measure_plan(plans[r], registry, inputs, warmup, frames,
                                                   &out->fps[r], busy),
                             "refine: running plan %d", (int)r + 1);
    if (!st && r == 0 && options->threads == 0 && parts[0]->alt_threads > 0) {
      st = vkp__tool_try_alt(graph, registry, profile, &opt, precision, warmup, max_frames,
                             inputs, &parts[0], &plans[0], &out->fps[0], busy, &out->notes);
      frames = vkp__tool_refine_frames(parts[0], max_frames);  // what plan 1 ran
    }
    const vkp_plan_t *plan = plans[r];
    vkp_partition_measure_t *grown =
        st ? NULL
           : realloc(measured, sizeof(*measured) * (size_t)(n_measured + plan->n_stages));
    if (!st && !grown) st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "measured stages");
    if (st) break;
    measured = grown;
    for (int32_t s = 0; s < plan->n_stages; ++s)
      if (busy[s] > 0 && plan->stages[s].estimated_ms > 0)
        measured[n_measured++] = (vkp_partition_measure_t){&plan->stages[s], busy[s]};
    st = vkp__tool_round_note(&out->notes, r, plan, out->fps[r], frames, busy);
    if (st || r >= rounds) break;
    opt.n_measured = n_measured;
    opt.measured = measured;
    st = vkp__tool_cut(graph, registry, profile, &opt, precision, &parts[n_plans],
                       &plans[n_plans]);
    if (st) break;
    int32_t same = -1;
    for (int32_t k = 0; k < n_plans && same < 0; ++k)
      if (vkp__tool_same_cut(plans[k], plans[n_plans])) same = k;
    if (same < 0) {
      ++n_plans;
      continue;
    }
    st = vkp__lines_appendf(&out->notes, "refine notes",
                            "refine: cut again on these times, the model gives plan %d's "
                            "stages: nothing more to try",
                            (int)same + 1);
    vkp_partition_destroy(parts[n_plans]);
    vkp_plan_destroy(plans[n_plans]);
    parts[n_plans] = NULL;
    plans[n_plans] = NULL;
    break;
  }
  int32_t best = 0;
  for (int32_t k = 1; k < n_plans; ++k)
    if (out->fps[k] > out->fps[best]) best = k;
  if (!st && n_plans > 1)
    st = vkp__lines_appendf(&out->notes, "refine notes",
                            "refine: kept plan %d, %.1f frames/s (the estimates' cut: "
                            "%.1f, %.2fx)",
                            (int)best + 1, out->fps[best], out->fps[0],
                            out->fps[0] > 0 ? out->fps[best] / out->fps[0] : 0.0);
  for (int32_t k = 0; k < n_plans; ++k) {
    if (k == best && !st) continue;
    vkp_partition_destroy(parts[k]);
    vkp_plan_destroy(plans[k]);
  }
  free(measured);
  vkp_tool_inputs_free(random, n_random);
  if (st) {
    vkp_tool_refined_deinit(out);
    return st;
  }
  out->part = parts[best];
  out->plan = plans[best];
  out->n_plans = rounds > 0 ? n_plans : 0;
  out->kept = best;
  return NULL;
}
