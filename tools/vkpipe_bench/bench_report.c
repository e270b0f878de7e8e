// SPDX-License-Identifier: Apache-2.0
#include "tools/vkpipe_bench/bench_report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sb.h"

static void bench_copy(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src ? src : "");
}

void bench_report_init(bench_report_t *rep, int32_t frames, int32_t warmup,
                       int32_t depth) {
  memset(rep, 0, sizeof(*rep));
  rep->frames = frames;
  rep->warmup = warmup;
  rep->depth = depth;
}

void bench_mode_result_deinit(bench_mode_result_t *res) {
  free(res->stages);
  free(res->events);
  memset(res, 0, sizeof(*res));
}

void bench_report_deinit(bench_report_t *rep) {
  bench_mode_result_deinit(&rep->sequential);
  bench_mode_result_deinit(&rep->pipelined);
  bench_mode_result_deinit(&rep->isolated);
  free(rep->stage_names);
  free(rep->stage_targets);
  free(rep->stage_threads);
  free(rep->stage_copies);
  free(rep->stage_estimated_ms);
  vkp__free(rep->notes);
  memset(rep, 0, sizeof(*rep));
}

static vkp_status_t bench_report_alloc_stages(bench_report_t *rep, int32_t n) {
  rep->n_stages = n;
  rep->stage_names = calloc((size_t)n + 1, sizeof(*rep->stage_names));
  rep->stage_targets = calloc((size_t)n + 1, sizeof(*rep->stage_targets));
  rep->stage_threads = calloc((size_t)n + 1, sizeof(*rep->stage_threads));
  rep->stage_copies = calloc((size_t)n + 1, sizeof(*rep->stage_copies));
  rep->stage_estimated_ms = calloc((size_t)n + 1, sizeof(*rep->stage_estimated_ms));
  if (!rep->stage_names || !rep->stage_targets || !rep->stage_threads ||
      !rep->stage_copies || !rep->stage_estimated_ms)
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "bench report");
  for (int32_t s = 0; s < n; ++s) rep->stage_copies[s] = 1;
  return NULL;
}

vkp_status_t bench_report_init_plan(bench_report_t *rep, const char *model,
                                    const char *policy, const vkp_plan_t *plan) {
  bench_copy(rep->model, sizeof rep->model, model);
  bench_copy(rep->policy, sizeof rep->policy, policy);
  vkp_status_t st = bench_report_alloc_stages(rep, plan->n_stages);
  for (int32_t s = 0; !st && s < plan->n_stages; ++s) {
    bench_copy(rep->stage_names[s], sizeof rep->stage_names[s], plan->stages[s].name);
    bench_copy(rep->stage_targets[s], sizeof rep->stage_targets[s], plan->stages[s].target);
    rep->stage_threads[s] = plan->stages[s].threads;
    rep->stage_copies[s] = plan->stages[s].replicas > 1 ? plan->stages[s].replicas : 1;
    rep->stage_estimated_ms[s] = plan->stages[s].estimated_ms;
  }
  return st;
}

vkp_status_t bench_report_init_synthetic(
    bench_report_t *rep, const char *spec, int32_t n, char labels[][32],
    const vkp_pipeline_synthetic_stage_t *stages) {
  (void)stages;
  rep->synthetic = true;
  snprintf(rep->model, sizeof rep->model, "synthetic %s", spec);
  bench_copy(rep->policy, sizeof rep->policy, "synthetic");
  vkp_status_t st = bench_report_alloc_stages(rep, n);
  for (int32_t s = 0; !st && s < n; ++s) {
    snprintf(rep->stage_names[s], sizeof rep->stage_names[s], "stage%d", (int)s);
    bench_copy(rep->stage_targets[s], sizeof rep->stage_targets[s], labels[s]);
  }
  return st;
}

void bench_report_note(bench_report_t *rep, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  // A note lost to a failed allocation does not fail the benchmark.
  vkp_status_free(vkp__lines_vappendf(&rep->notes, "benchmark notes", fmt, ap));
  va_end(ap);
}

vkp_status_t bench_report_add_single(bench_report_t *rep, const char *target,
                                     int32_t threads,
                                     const bench_mode_result_t *res) {
  if (rep->n_singles == (int32_t)(sizeof rep->singles / sizeof rep->singles[0]))
    return vkp_status_make(VKP_STATUS_OUT_OF_RANGE, "too many targets");
  bench_single_t *s = &rep->singles[rep->n_singles++];
  bench_copy(s->target, sizeof s->target, target);
  s->threads = threads;
  s->fps = res->fps;
  s->latency_p50_ms = res->latency_p50_ms;
  return NULL;
}

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_percentile(const double *sorted, int32_t n, double p) {
  if (n <= 0) return 0;
  if (n == 1) return sorted[0];
  double rank = p / 100.0 * (double)(n - 1);
  int32_t lo = (int32_t)floor(rank);
  if (lo >= n - 1) return sorted[n - 1];
  double frac = rank - lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

double bench_median(double *v, int32_t n) {
  qsort(v, (size_t)(n > 0 ? n : 0), sizeof *v, bench_cmp_double);
  return bench_percentile(v, n, 50);
}

vkp_status_t bench_mode_result_fill(bench_mode_result_t *out, const char *label,
                                    uint64_t *latencies_ns, int32_t n,
                                    uint64_t wall_ns,
                                    const vkp_pipeline_stats_t *before,
                                    const vkp_pipeline_stats_t *after) {
  memset(out, 0, sizeof(*out));
  bench_copy(out->label, sizeof out->label, label);
  out->frames = (uint64_t)n;
  out->wall_s = (double)wall_ns / 1e9;
  out->fps = out->wall_s > 0 ? (double)n / out->wall_s : 0;
  double *ms = calloc((size_t)n + 1, sizeof(double));
  out->stages = calloc((size_t)after->n_stages + 1, sizeof(*out->stages));
  if (!ms || !out->stages) {
    free(ms);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "bench results");
  }
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) {
    ms[i] = (double)latencies_ns[i] / 1e6;
    sum += ms[i];
  }
  qsort(ms, (size_t)n, sizeof(double), bench_cmp_double);
  out->latency_p50_ms = bench_percentile(ms, n, 50);
  out->latency_p90_ms = bench_percentile(ms, n, 90);
  out->latency_p99_ms = bench_percentile(ms, n, 99);
  out->latency_mean_ms = n ? sum / n : 0;
  free(ms);
  out->n_stages = after->n_stages;
  for (int32_t s = 0; s < after->n_stages; ++s) {
    const vkp_pipeline_stage_stats_t *a = &after->stages[s];
    const vkp_pipeline_stage_stats_t *b =
        before && s < before->n_stages ? &before->stages[s] : NULL;
    bench_stage_result_t *r = &out->stages[s];
    bench_copy(r->name, sizeof r->name, a->name);
    bench_copy(r->target, sizeof r->target, a->target);
    uint64_t frames = a->frames - (b ? b->frames : 0);
    uint64_t busy = a->busy_ns - (b ? b->busy_ns : 0);
    uint64_t cpu = a->cpu_ns - (b ? b->cpu_ns : 0);
    uint64_t win = a->wait_input_ns - (b ? b->wait_input_ns : 0);
    uint64_t wslot = a->wait_slot_ns - (b ? b->wait_slot_ns : 0);
    r->frames = frames;
    double f = frames ? (double)frames : 1;
    r->busy_ms = (double)busy / 1e6 / f;
    r->cpu_ms = (double)cpu / 1e6 / f;
    r->wait_input_ms = (double)win / 1e6 / f;
    r->wait_slot_ms = (double)wslot / 1e6 / f;
    r->busy_share = wall_ns ? (double)busy / (double)wall_ns : 0;
  }
  return NULL;
}

void bench_report_finish(bench_report_t *rep) {
  // The bound comes from the pipelined run's stage times; with one stage per
  // device working alone it is what a perfect pipeline would reach.
  // A stage of several copies gets through a frame every busy / copies.
  const bench_mode_result_t *p = &rep->pipelined;
  rep->slowest_stage_ms = 0;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    int32_t copies = s < rep->n_stages && rep->stage_copies ? rep->stage_copies[s] : 1;
    if (p->stages[s].busy_ms / copies > rep->slowest_stage_ms) {
      rep->slowest_stage_ms = p->stages[s].busy_ms / copies;
      bench_copy(rep->slowest_stage, sizeof rep->slowest_stage, p->stages[s].name);
    }
  }
  rep->bound_fps = rep->slowest_stage_ms > 0 ? 1000.0 / rep->slowest_stage_ms : 0;
  rep->efficiency = rep->bound_fps > 0 ? p->fps / rep->bound_fps : 0;
  rep->speedup_vs_sequential = rep->sequential.fps > 0 ? p->fps / rep->sequential.fps : 0;
  double best = 0;
  for (int32_t i = 0; i < rep->n_singles; ++i) {
    if (rep->singles[i].fps > best) {
      best = rep->singles[i].fps;
      rep->best_single_threads = rep->singles[i].threads;
      bench_copy(rep->best_single, sizeof rep->best_single, rep->singles[i].target);
    }
  }
  rep->speedup_vs_best_single = best > 0 ? p->fps / best : 0;
  // A plan the partitioner chose that loses to running the whole model on
  // one target was chosen on estimates this machine does not bear out: say
  // so, and which stages were off, rather than leave a bare ratio.
  if (best > 0 && p->fps < 0.9 * best && strcmp(rep->policy, "auto") == 0) {
    bench_report_note(rep,
                      "this plan runs at %.2fx the frame rate of '%s' alone: the "
                      "estimates it was chosen on are off on this machine (below); "
                      "`vkpipe calibrate` measures the profile again, and --policy %s "
                      "--stages 1 runs the whole model there",
                      p->fps / best, rep->best_single, rep->best_single);
    for (int32_t s = 0; s < p->n_stages && s < rep->n_stages; ++s) {
      double est = rep->stage_estimated_ms ? rep->stage_estimated_ms[s] : 0;
      double busy = p->stages[s].busy_ms;
      if (est > 0 && busy > 0 && (busy > 1.5 * est || busy < est / 1.5))
        bench_report_note(rep, "stage %s on %s took %.3f ms per frame where %.3f ms was "
                               "estimated (%.2fx)",
                          p->stages[s].name, p->stages[s].target, busy, est, busy / est);
    }
  }
}

static void bench_print_mode(const bench_mode_result_t *m, FILE *out) {
  fprintf(out, "  %-12s %9.1f frames/s   latency under load p50 %8.3f ms  p90 %8.3f ms  "
               "p99 %8.3f ms\n",
          m->label, m->fps, m->latency_p50_ms, m->latency_p90_ms, m->latency_p99_ms);
}

void bench_report_print_table(const bench_report_t *rep, FILE *out) {
  fprintf(out, "vkpipe-bench: %s\n", rep->model);
  fprintf(out, "  policy %s, %d stage%s, ring depth %d, %d frames after %d warm-up\n\n",
          rep->policy, (int)rep->n_stages, rep->n_stages == 1 ? "" : "s",
          (int)rep->depth, (int)rep->frames, (int)rep->warmup);
  if (rep->cores > 0) {
    char threads[32] = "auto";
    if (rep->threads_option > 0) snprintf(threads, sizeof threads, "%d", (int)rep->threads_option);
    fprintf(out, "  %d host core%s planned for, threads per stage: %s\n\n", (int)rep->cores,
            rep->cores == 1 ? "" : "s", threads);
  }
  for (int32_t s = 0; s < rep->n_stages; ++s)
    if (rep->stage_copies[s] > 1) {
      fprintf(out, "  threads x copies: a stage of several copies runs them side by side, "
                   "frames alternating;\n  its busy ms is per frame, its busy %% the share "
                   "of its copies' time\n\n");
      break;
    }
  fprintf(out, "  %-10s %-10s %7s %10s %10s %10s %8s %12s %12s\n", "stage", "target",
          "threads", "est. ms", "busy ms", "cpu ms", "busy %", "wait in ms", "wait slot ms");
  const bench_mode_result_t *p = &rep->pipelined;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    const bench_stage_result_t *r = &p->stages[s];
    bool known = s < rep->n_stages;
    const char *target = known ? rep->stage_targets[s] : r->target;
    char threads[24] = "-", est[32] = "-";
    if (known && rep->stage_threads[s] > 0 && rep->stage_copies[s] > 1)
      snprintf(threads, sizeof threads, "%dx%d", (int)rep->stage_threads[s],
               (int)rep->stage_copies[s]);
    else if (known && rep->stage_threads[s] > 0)
      snprintf(threads, sizeof threads, "%d", (int)rep->stage_threads[s]);
    if (known && rep->stage_estimated_ms[s] > 0)
      snprintf(est, sizeof est, "%.3f", rep->stage_estimated_ms[s]);
    fprintf(out, "  %-10s %-10s %7s %10s %10.3f %10.3f %7.1f%% %12.3f %12.3f\n", r->name,
            target, threads, est, r->busy_ms, r->cpu_ms,
            100.0 * r->busy_share / (known ? rep->stage_copies[s] : 1),
            r->wait_input_ms, r->wait_slot_ms);
  }
  fprintf(out, "\n");
  bench_print_mode(&rep->sequential, out);
  bench_print_mode(&rep->pipelined, out);
  const bench_mode_result_t *iso = &rep->isolated;
  if (iso->frames)
    fprintf(out, "  %-12s %9s            isolated latency   p50 %8.3f ms  p90 %8.3f ms  "
                 "p99 %8.3f ms  (one frame in flight)\n",
            "pipelined", "", iso->latency_p50_ms, iso->latency_p90_ms, iso->latency_p99_ms);
  for (int32_t i = 0; i < rep->n_singles; ++i) {
    char label[48];
    if (rep->singles[i].threads > 1)
      snprintf(label, sizeof label, "%s x%d thr", rep->singles[i].target,
               (int)rep->singles[i].threads);
    else
      snprintf(label, sizeof label, "%s", rep->singles[i].target);
    fprintf(out, "  single %-14s %9.1f frames/s   latency under load p50 %8.3f ms "
                 "(the whole model as one stage)\n",
            label, rep->singles[i].fps, rep->singles[i].latency_p50_ms);
  }
  fprintf(out, "\n  bottleneck bound  %9.1f frames/s (slowest stage %s: %.3f ms)\n",
          rep->bound_fps, rep->slowest_stage, rep->slowest_stage_ms);
  fprintf(out, "  efficiency        %9.1f %%   (pipelined / bound)\n", 100.0 * rep->efficiency);
  fprintf(out, "  speed-up          %9.2fx  over sequential (this plan, one frame at a time)\n",
          rep->speedup_vs_sequential);
  if (rep->speedup_vs_best_single > 0)
    fprintf(out, "                    %9.2fx  over the best single-target single-stage run "
                 "(%s, %d thread%s)\n",
            rep->speedup_vs_best_single, rep->best_single,
            rep->best_single_threads > 1 ? (int)rep->best_single_threads : 1,
            rep->best_single_threads > 1 ? "s" : "");
  if (rep->estimated_bottleneck_s > 0)
    fprintf(out, "  partitioner estimate %.3f ms per frame at the bottleneck\n",
            rep->estimated_bottleneck_s * 1e3);
  if (rep->notes) fprintf(out, "\nnotes:\n%s", rep->notes);
}

static void bench_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c < 0x20) fprintf(out, "\\u%04x", c);
    else fputc(c, out);
  }
  fputc('"', out);
}

static void bench_json_number(FILE *out, double v) {
  if (isfinite(v)) fprintf(out, "%.6g", v);
  else fprintf(out, "null");
}

// Writes `prefix` (punctuation and a key) and then the number.
static void bench_json_field(FILE *out, const char *prefix, double v) {
  fputs(prefix, out);
  bench_json_number(out, v);
}

static void bench_json_mode(FILE *out, const bench_mode_result_t *m) {
  fprintf(out, "{\"frames\": %llu, \"wall_s\": ", (unsigned long long)m->frames);
  bench_json_number(out, m->wall_s);
  bench_json_field(out, ", \"throughput_fps\": ", m->fps);
  bench_json_field(out, ", \"latency_ms\": {\"p50\": ", m->latency_p50_ms);
  bench_json_field(out, ", \"p90\": ", m->latency_p90_ms);
  bench_json_field(out, ", \"p99\": ", m->latency_p99_ms);
  bench_json_field(out, ", \"mean\": ", m->latency_mean_ms);
  fprintf(out, "}}");
}

void bench_report_print_json(const bench_report_t *rep, FILE *out) {
  fprintf(out, "{\n  \"schema\": \"vkpipe-bench/1\",\n  \"model\": ");
  bench_json_string(out, rep->model);
  fprintf(out, ",\n  \"policy\": ");
  bench_json_string(out, rep->policy);
  fprintf(out, ",\n  \"frames\": %d,\n  \"warmup\": %d,\n  \"ring_depth\": %d,\n",
          (int)rep->frames, (int)rep->warmup, (int)rep->depth);
  fprintf(out, "  \"sequential\": ");
  bench_json_mode(out, &rep->sequential);
  fprintf(out, ",\n  \"pipelined\": ");
  bench_json_mode(out, &rep->pipelined);
  fprintf(out, ",\n  \"isolated\": ");
  if (rep->isolated.frames)
    bench_json_mode(out, &rep->isolated);
  else
    fprintf(out, "null");
  fprintf(out, ",\n  \"cores\": ");
  if (rep->cores > 0) fprintf(out, "%d", (int)rep->cores);
  else fprintf(out, "null");
  fprintf(out, ",\n  \"threads\": ");
  if (rep->threads_option > 0) fprintf(out, "%d", (int)rep->threads_option);
  else bench_json_string(out, "auto");
  fprintf(out, ",\n  \"stages\": [");
  const bench_mode_result_t *p = &rep->pipelined;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    const bench_stage_result_t *r = &p->stages[s];
    fprintf(out, "%s\n    {\"name\": ", s ? "," : "");
    bench_json_string(out, r->name);
    fprintf(out, ", \"target\": ");
    bench_json_string(out, s < rep->n_stages ? rep->stage_targets[s] : r->target);
    fprintf(out, ", \"threads\": %d", s < rep->n_stages ? (int)rep->stage_threads[s] : 0);
    fprintf(out, ", \"replicas\": %d", s < rep->n_stages ? (int)rep->stage_copies[s] : 1);
    fprintf(out, ", \"estimated_ms\": ");
    if (s < rep->n_stages && rep->stage_estimated_ms[s] > 0)
      bench_json_number(out, rep->stage_estimated_ms[s]);
    else
      fprintf(out, "null");
    bench_json_field(out, ", \"busy_ms\": ", r->busy_ms);
    bench_json_field(out, ", \"cpu_ms\": ", r->cpu_ms);
    bench_json_field(out, ", \"busy_share\": ", r->busy_share);
    bench_json_field(out, ", \"wait_input_ms\": ", r->wait_input_ms);
    bench_json_field(out, ", \"wait_slot_ms\": ", r->wait_slot_ms);
    fprintf(out, "}");
  }
  fprintf(out, "\n  ],\n  \"single_target\": [");
  for (int32_t i = 0; i < rep->n_singles; ++i) {
    fprintf(out, "%s\n    {\"target\": ", i ? "," : "");
    bench_json_string(out, rep->singles[i].target);
    fprintf(out, ", \"threads\": %d", (int)rep->singles[i].threads);
    bench_json_field(out, ", \"throughput_fps\": ", rep->singles[i].fps);
    bench_json_field(out, ", \"latency_p50_ms\": ", rep->singles[i].latency_p50_ms);
    fprintf(out, "}");
  }
  fprintf(out, "%s],\n  \"bottleneck\": {\"stage\": ", rep->n_singles ? "\n  " : "");
  bench_json_string(out, rep->slowest_stage);
  bench_json_field(out, ", \"stage_ms\": ", rep->slowest_stage_ms);
  bench_json_field(out, ", \"bound_fps\": ", rep->bound_fps);
  bench_json_field(out, "},\n  \"efficiency\": ", rep->efficiency);
  bench_json_field(out, ",\n  \"speedup_vs_sequential\": ", rep->speedup_vs_sequential);
  fprintf(out, ",\n  \"speedup_vs_best_single\": ");
  if (rep->speedup_vs_best_single > 0) bench_json_number(out, rep->speedup_vs_best_single);
  else fprintf(out, "null");
  fprintf(out, ",\n  \"best_single_target\": ");
  if (rep->best_single[0]) bench_json_string(out, rep->best_single);
  else fprintf(out, "null");
  fprintf(out, ",\n  \"best_single_threads\": %d", (int)rep->best_single_threads);
  fprintf(out, ",\n  \"refine\": ");
  if (rep->refine_plans > 0) {
    fprintf(out, "{\"plans_fps\": [");
    for (int32_t k = 0; k < rep->refine_plans; ++k) {
      if (k) fprintf(out, ", ");
      bench_json_number(out, rep->refine_fps[k]);
    }
    fprintf(out, "], \"kept\": %d}", (int)rep->refine_kept);
  } else {
    fprintf(out, "null");
  }
  fprintf(out, ",\n  \"estimated_bottleneck_ms\": ");
  if (rep->estimated_bottleneck_s > 0) bench_json_number(out, rep->estimated_bottleneck_s * 1e3);
  else fprintf(out, "null");
  fprintf(out, "\n}\n");
}

vkp_status_t bench_trace_collect(bench_mode_result_t *res, vkp_pipeline_t *pipe) {
  vkp_pipeline_event_t *events = NULL;
  int32_t n = 0;
  vkp_status_t st = vkp_pipeline_get_trace(pipe, &events, &n);
  if (st) return st;
  res->events = malloc(((size_t)n + 1) * sizeof(*events));
  if (!res->events) {
    vkp_pipeline_trace_free(events);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "trace events");
  }
  if (n) memcpy(res->events, events, (size_t)n * sizeof(*events));
  res->n_events = n;
  vkp_pipeline_trace_free(events);
  return NULL;
}

vkp_status_t bench_trace_write(const bench_report_t *rep, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "cannot write trace '%s': %s", path,
                           strerror(errno));
  const bench_mode_result_t *p = &rep->pipelined;
  uint64_t t0 = UINT64_MAX;
  for (int32_t i = 0; i < p->n_events; ++i)
    if (p->events[i].start_ns < t0) t0 = p->events[i].start_ns;
  fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  fprintf(f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, "
             "\"args\": {\"name\": ");
  bench_json_string(f, rep->model);
  fprintf(f, "}}");
  for (int32_t s = 0; s < rep->n_stages; ++s) {
    char track[128];
    snprintf(track, sizeof track, "%s (%s)", rep->stage_names[s], rep->stage_targets[s]);
    fprintf(f, ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
               "\"args\": {\"name\": ", (int)s + 1);
    bench_json_string(f, track);
    fprintf(f, "}},\n  {\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 1, "
               "\"tid\": %d, \"args\": {\"sort_index\": %d}}", (int)s + 1, (int)s);
  }
  for (int32_t i = 0; i < p->n_events; ++i) {
    const vkp_pipeline_event_t *e = &p->events[i];
    double ts = (double)(e->start_ns - t0) / 1e3;
    double dur = (double)(e->end_ns - e->start_ns) / 1e3;
    fprintf(f, ",\n  {\"name\": \"frame %llu\", \"cat\": \"%s\", \"ph\": \"X\", "
               "\"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
               "\"args\": {\"seq\": %llu}}",
            (unsigned long long)e->seq, e->failed ? "failed" : "frame",
            (int)e->stage + 1, ts, dur, (unsigned long long)e->seq);
  }
  fprintf(f, "\n]}\n");
  if (fclose(f) != 0)
    return vkp_status_make(VKP_STATUS_IO_ERROR, "writing trace '%s': %s", path,
                           strerror(errno));
  return NULL;
}

void bench_progress_draw(FILE *out, const char *label, int32_t done, int32_t total) {
  int width = 30, filled = total ? (int)((int64_t)done * width / total) : width;
  char bar[64];
  for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  fprintf(out, "\r  %-12s [%s] %d/%d", label, bar, (int)done, (int)total);
  fflush(out);
}

void bench_progress_clear(FILE *out) {
  fprintf(out, "\r%70s\r", "");
  fflush(out);
}
