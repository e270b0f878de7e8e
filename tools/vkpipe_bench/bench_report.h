// SPDX-License-Identifier: Apache-2.0
// vkpipe-bench's results: what one mode measured, the report over all modes,
// and its three renderings (table, JSON, Chrome trace).
#ifndef VKPIPE_TOOLS_BENCH_REPORT_H_
#define VKPIPE_TOOLS_BENCH_REPORT_H_

#include <stdint.h>
#include <stdio.h>

#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"

typedef struct bench_stage_result_t {
  char name[64];
  char target[32];
  uint64_t frames;
  double busy_ms;         // mean busy time per frame
  double cpu_ms;          // mean CPU time of its worker thread per frame
  double busy_share;      // busy time / wall time of the measured window
  double wait_input_ms;   // mean per frame
  double wait_slot_ms;    // mean per frame
} bench_stage_result_t;

typedef struct bench_mode_result_t {
  char label[64];
  uint64_t frames;
  double wall_s;
  double fps;
  double latency_p50_ms, latency_p90_ms, latency_p99_ms, latency_mean_ms;
  int32_t n_stages;
  bench_stage_result_t *stages;       // owned
  int32_t n_events;
  vkp_pipeline_event_t *events;       // owned (trace), or NULL
} bench_mode_result_t;

typedef struct bench_single_t {
  char target[32];
  int32_t threads;        // threads of its one stage (0: target has none)
  double fps;
  double latency_p50_ms;
} bench_single_t;

typedef struct bench_report_t {
  char model[256];
  char policy[32];
  int32_t frames, warmup, depth;
  bool synthetic;
  int32_t n_stages;
  char (*stage_names)[64];
  char (*stage_targets)[32];
  int32_t *stage_threads;             // per stage (0: its target has none)
  int32_t *stage_copies;              // per stage: copies side by side (>= 1)
  double *stage_estimated_ms;         // the partitioner's, 0 if unknown
  int32_t cores;                      // host cores planned for, 0 if unknown
  int32_t threads_option;             // --threads (0: auto)
  double estimated_bottleneck_s;      // the partitioner's estimate, 0 if none
  bench_mode_result_t sequential;
  bench_mode_result_t pipelined;      // rings full: latency under load
  bench_mode_result_t isolated;       // one frame in flight at a time
  int32_t n_singles;
  bench_single_t singles[8];
  // Derived by bench_report_finish:
  double slowest_stage_ms;
  char slowest_stage[64];
  double bound_fps;                   // 1 / slowest stage time
  double efficiency;                  // pipelined fps / bound
  double speedup_vs_sequential;
  double speedup_vs_best_single;      // 0 when no single-target run
  char best_single[32];
  int32_t best_single_threads;        // its stage's threads (0: not on the host)
  // --refine: frames per second each plan tried ran (the estimates' cut
  // first), and which one (0-based) the run kept; refine_plans 0: none.
  int32_t refine_plans;
  double refine_fps[16];
  int32_t refine_kept;
  char *notes;                        // heap, newline-separated, or NULL
} bench_report_t;

void bench_report_init(bench_report_t *rep, int32_t frames, int32_t warmup,
                       int32_t depth);
void bench_report_deinit(bench_report_t *rep);
vkp_status_t bench_report_init_plan(bench_report_t *rep, const char *model,
                                    const char *policy, const vkp_plan_t *plan);
vkp_status_t bench_report_init_synthetic(
    bench_report_t *rep, const char *spec, int32_t n, char labels[][32],
    const vkp_pipeline_synthetic_stage_t *stages);
vkp_status_t bench_report_add_single(bench_report_t *rep, const char *target,
                                     int32_t threads,
                                     const bench_mode_result_t *res);
void bench_report_note(bench_report_t *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void bench_report_finish(bench_report_t *rep);
void bench_report_print_table(const bench_report_t *rep, FILE *out);
void bench_report_print_json(const bench_report_t *rep, FILE *out);

// Fills `out` from `n` per-frame latencies (ns; reordered), the wall time of
// the measured window and the stage counters before and after it.
vkp_status_t bench_mode_result_fill(bench_mode_result_t *out, const char *label,
                                    uint64_t *latencies_ns, int32_t n,
                                    uint64_t wall_ns,
                                    const vkp_pipeline_stats_t *before,
                                    const vkp_pipeline_stats_t *after);
void bench_mode_result_deinit(bench_mode_result_t *res);

// Copies the pipeline's trace events into `res`.
vkp_status_t bench_trace_collect(bench_mode_result_t *res, vkp_pipeline_t *pipe);
// Writes the pipelined run's events as Chrome trace-event JSON.
vkp_status_t bench_trace_write(const bench_report_t *rep, const char *path);

// A one-line progress bar on `out` (a terminal), and its removal.
void bench_progress_draw(FILE *out, const char *label, int32_t done,
                         int32_t total);
void bench_progress_clear(FILE *out);

// The p-th percentile (0..100) of sorted values, linear interpolation.
double bench_percentile(const double *sorted, int32_t n, double p);

// The median of `n` values, sorting them in place.
double bench_median(double *v, int32_t n);

#endif  // VKPIPE_TOOLS_BENCH_REPORT_H_
