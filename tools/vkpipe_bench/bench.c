// SPDX-License-Identifier: Apache-2.0
// `vkpipe-bench`: sequential vs pipelined throughput, latency percentiles,
// per-stage load, bottleneck bound, efficiency, speed-ups; --json, --trace,
// --synthetic. docs/benchmarks.md documents the output.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/status_macros.h"
#include "tools/tool.h"
#include "tools/vkpipe_bench/bench_report.h"
#include "vkpipe/artifact.h"
#include "vkpipe/graph.h"
#include "vkpipe/mpi.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/target.h"

#define BENCH_EXIT_FAILURE 1
#define BENCH_EXIT_USAGE 2
#define BENCH_MAX_ASSIGNS 32
#define BENCH_MAX_SYNTHETIC 16
// Single-target runs estimated this many times slower than the fastest
// target's are skipped.
#define BENCH_SINGLE_SLACK 10.0
// ... unless all its frames are estimated to take less than this (seconds).
#define BENCH_SINGLE_CHEAP_S 3.0

// A measurement gives up when no frame finishes for this long (--timeout).
static int32_t bench_frame_timeout_s = 10;

typedef struct bench_args_t {
  const char *model;
  const char *policy;
  int32_t stages;            // 0: auto
  int32_t threads;           // per threaded stage; 0: auto
  int32_t replicas;          // copies of every stage; 0: one; or auto
  int32_t cores;             // host cores to plan for; 0: detected
  int32_t frames;
  int32_t warmup;
  int32_t depth;
  const char *profile;
  const char *trace_path;
  const char *synthetic;
  int32_t ranks;             // --ranks: synthetic stages over MPI ranks
  int32_t numel;             // --numel: float32 elements of a synthetic tensor
  bool json;
  bool progress;             // resolved: a terminal and not --json
  bool no_single;            // skip the single-target runs
  int32_t refine;            // --refine: re-cuts on measured stage times
  int32_t n_assigns;
  vkp_assign_t assigns[BENCH_MAX_ASSIGNS];
  vkp_tool_load_args_t load;  // --dim, --shape
  vkp_tool_trust_args_t trust;  // --trust KEY.pub, --trust-unsigned (a .vkp)
  vkp_precision_t precision;  // --precision, recorded on every stage
} bench_args_t;

static void bench_usage(FILE *out) {
  fprintf(out,
          "usage: vkpipe-bench MODEL [options]\n"
          "       vkpipe-bench --synthetic 'cpu:1ms,vulkan:2ms,...' [options]\n"
          "\n"
          "Builds (or loads, for a .vkp artifact) a pipeline for MODEL, warms it "
          "up, runs\nframes through it sequentially (one frame at a time) and "
          "pipelined, and reports\nthroughput, latency percentiles, per-stage "
          "load and the bottleneck bound.\n"
          "\n"
          "options:\n"
          "  --policy P         placement policy: auto or a target name "
          "(default auto)\n"
          "  --stages K         pipeline stages, or 'auto' (default auto)\n"
          "  --precision P      fp32 (default) or fp16 weights on every stage\n"
          "                     (a target that cannot keep fp16 refuses)\n"
          "  --assign PAT=TGT   place nodes whose name matches PAT on TGT "
          "(repeatable)\n"
          "  --threads N|auto   threads per CPU stage (default auto: chosen with\n"
          "                     the stage count by estimated throughput)\n"
          "  --replicas N|auto  run every stage as N copies side by side, frames\n"
          "                     alternating between them (host stages only;\n"
          "                     default 1; auto: chosen with the threads and\n"
          "                     stages by estimated throughput)\n"
          VKP_TOOL_PROFILE_HELP
          "  --frames N         measured frames per mode (default 100)\n"
          "  --warmup N         frames run before measuring (default 10)\n"
          "  --timeout S        give up when no frame finishes for S seconds\n"
          "                     (default 10; slow devices such as lavapipe)\n"
          "  --depth D          staging slots per binding (default %d)\n"
          "  --synthetic SPEC   fixed-cost stages, no kernels: "
          "'name:1ms,name:500us,...'\n"
          "  --ranks N          spread the --synthetic stages over N MPI ranks\n"
          "                     (under mpirun -np N; docs/scale-out.md)\n"
          "  --numel N          float32 elements of the tensor between --synthetic\n"
          "                     stages (default 16)\n"
          "  --no-single        skip the single-target comparison runs\n"
          "  --refine N         before measuring, run the plan briefly and cut\n"
          "                     the model again on the stages' measured times,\n"
          "                     up to N times, keeping the plan that ran fastest\n"
          "                     (default %d; 0 or --no-refine: the estimate's cut)\n"
          "  --node-times       compile cpu stages with every kernel timed and\n"
          "                     print each stage's kernels, longest first, as it\n"
          "                     unloads (VKPIPE_CPU_NODE_TIMES=1; docs/cpu-target.md)\n"
          VKP_TOOL_LOAD_HELP
          VKP_TOOL_TRUST_HELP
          "  --json             print one JSON object (schema: "
          "docs/benchmarks.md)\n"
          "  --trace FILE       write a Chrome trace (open in Perfetto), one "
          "track per stage\n"
          "  -h, --help         this text\n",
          VKP_PIPELINE_DEFAULT_RING_DEPTH, VKP_TOOL_DEFAULT_REFINE);
}

static bool bench_parse_int(const char *s, int32_t lo, int32_t hi,
                            int32_t *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = (int32_t)v;
  return true;
}

static int bench_parse_args(int argc, char **argv, bench_args_t *a) {
  memset(a, 0, sizeof(*a));
  a->policy = "auto";
  a->frames = 100;
  a->numel = 16;
  a->warmup = 10;
  a->refine = VKP_TOOL_DEFAULT_REFINE;
  for (int i = 1; i < argc; ++i) {
    bool load_option;
    int rc = vkp_tool_load_option("vkpipe-bench", argc, argv, &i, &a->load,
                                  &load_option);
    if (rc) return rc;
    if (load_option) continue;
    rc = vkp_tool_trust_option("vkpipe-bench", argc, argv, &i, &a->trust, &load_option);
    if (rc) return rc;
    if (load_option) continue;
    const char *arg = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define BENCH_NEED_VALUE()                                                  \
  do {                                                                      \
    if (!val) {                                                             \
      fprintf(stderr, "vkpipe-bench: %s needs a value\n", arg);             \
      return BENCH_EXIT_USAGE;                                              \
    }                                                                       \
    ++i;                                                                    \
  } while (0)
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      bench_usage(stdout);
      return -1;
    } else if (!strcmp(arg, "--policy")) {
      BENCH_NEED_VALUE();
      a->policy = val;
    } else if (!strcmp(arg, "--precision")) {
      BENCH_NEED_VALUE();
      if (!vkp_precision_parse(val, &a->precision)) {
        fprintf(stderr, "vkpipe-bench: --precision wants fp32 or fp16, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--stages")) {
      BENCH_NEED_VALUE();
      if (strcmp(val, "auto") != 0 &&
          !bench_parse_int(val, 1, VKP_PARTITION_MAX_STAGES, &a->stages)) {
        fprintf(stderr, "vkpipe-bench: --stages wants 1..%d or 'auto', got '%s'\n",
                VKP_PARTITION_MAX_STAGES, val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--threads")) {
      BENCH_NEED_VALUE();
      if (strcmp(val, "auto") != 0 && !bench_parse_int(val, 1, 1024, &a->threads)) {
        fprintf(stderr, "vkpipe-bench: --threads wants 1..1024 or 'auto', got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--replicas")) {
      BENCH_NEED_VALUE();
      if (!vkp_tool_parse_replicas("vkpipe-bench", val, &a->replicas)) return BENCH_EXIT_USAGE;
    } else if (!strcmp(arg, "--cores")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, 1024, &a->cores)) {
        fprintf(stderr, "vkpipe-bench: --cores wants 1..1024, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--frames")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, 10000000, &a->frames)) {
        fprintf(stderr, "vkpipe-bench: --frames wants a positive count, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--timeout")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, 86400, &bench_frame_timeout_s)) {
        fprintf(stderr, "vkpipe-bench: --timeout wants 1..86400 seconds, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--warmup")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 0, 1000000, &a->warmup)) {
        fprintf(stderr, "vkpipe-bench: --warmup wants a count >= 0, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--depth")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, VKP_PIPELINE_MAX_RING_DEPTH, &a->depth)) {
        fprintf(stderr, "vkpipe-bench: --depth wants 1..%d, got '%s'\n",
                VKP_PIPELINE_MAX_RING_DEPTH, val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--profile")) {
      BENCH_NEED_VALUE();
      a->profile = val;
    } else if (!strcmp(arg, "--trace")) {
      BENCH_NEED_VALUE();
      a->trace_path = val;
    } else if (!strcmp(arg, "--ranks")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, VKP_PLAN_MAX_RANK + 1, &a->ranks)) {
        fprintf(stderr, "vkpipe-bench: --ranks wants a positive count, got '%s'\n", val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--synthetic")) {
      BENCH_NEED_VALUE();
      a->synthetic = val;
    } else if (!strcmp(arg, "--numel")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 1, 1 << 28, &a->numel)) {
        fprintf(stderr, "vkpipe-bench: --numel wants a count from 1 to %d, got '%s'\n",
                1 << 28, val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--assign")) {
      BENCH_NEED_VALUE();
      if (a->n_assigns == BENCH_MAX_ASSIGNS) {
        fprintf(stderr, "vkpipe-bench: at most %d --assign options\n", BENCH_MAX_ASSIGNS);
        return BENCH_EXIT_USAGE;
      }
      vkp_status_t st = vkp_assign_parse(argv[i], &a->assigns[a->n_assigns]);
      if (st) {
        fprintf(stderr, "vkpipe-bench: --assign: %s\n", vkp_status_message(st));
        vkp_status_free(st);
        return BENCH_EXIT_USAGE;
      }
      a->n_assigns++;
    } else if (!strcmp(arg, "--json")) {
      a->json = true;
    } else if (!strcmp(arg, "--no-single")) {
      a->no_single = true;
    } else if (!strcmp(arg, "--refine")) {
      BENCH_NEED_VALUE();
      if (!bench_parse_int(val, 0, VKP_TOOL_MAX_REFINE, &a->refine)) {
        fprintf(stderr, "vkpipe-bench: --refine wants 0..%d rounds, got '%s'\n",
                VKP_TOOL_MAX_REFINE, val);
        return BENCH_EXIT_USAGE;
      }
    } else if (!strcmp(arg, "--no-refine")) {
      a->refine = 0;
    } else if (!strcmp(arg, "--node-times")) {
      // Read by the cpu target when it compiles a stage.
      if (setenv("VKPIPE_CPU_NODE_TIMES", "1", 1) != 0) {
        fprintf(stderr, "vkpipe-bench: --node-times: cannot set the environment\n");
        return BENCH_EXIT_USAGE;
      }
    } else if (arg[0] == '-' && arg[1]) {
      fprintf(stderr, "vkpipe-bench: unknown option '%s' (try --help)\n", arg);
      return BENCH_EXIT_USAGE;
    } else if (!a->model) {
      a->model = arg;
    } else {
      fprintf(stderr, "vkpipe-bench: unexpected argument '%s'\n", arg);
      return BENCH_EXIT_USAGE;
    }
#undef BENCH_NEED_VALUE
  }
  if (!a->model == !a->synthetic) {
    fprintf(stderr, "vkpipe-bench: give a MODEL or --synthetic SPEC (try --help)\n");
    return BENCH_EXIT_USAGE;
  }
  if (a->numel != 16 && !a->synthetic) {
    fprintf(stderr, "vkpipe-bench: --numel goes with --synthetic\n");
    return BENCH_EXIT_USAGE;
  }
  if (a->ranks > 1 && !a->synthetic) {
    fprintf(stderr, "vkpipe-bench: --ranks goes with --synthetic (a model's "
                    "plan names its own ranks)\n");
    return BENCH_EXIT_USAGE;
  }
  int trust_rc = vkp_tool_trust_check("vkpipe-bench", &a->trust, a->model);
  if (trust_rc) return trust_rc;
  a->progress = !a->json && isatty(STDERR_FILENO);
  return 0;
}

// Parses "name:1ms,name:250us,name:2s" into stage costs and labels.
static int bench_parse_synthetic(const char *spec,
                                 vkp_pipeline_synthetic_stage_t *stages,
                                 char labels[][32], int32_t *out_n) {
  int32_t n = 0;
  const char *p = spec;
  while (*p) {
    if (n == BENCH_MAX_SYNTHETIC) {
      fprintf(stderr, "vkpipe-bench: --synthetic: at most %d stages\n", BENCH_MAX_SYNTHETIC);
      return BENCH_EXIT_USAGE;
    }
    const char *colon = strchr(p, ':');
    const char *comma = strchr(p, ',');
    if (!comma) comma = p + strlen(p);
    if (!colon || colon > comma || colon == p) {
      fprintf(stderr, "vkpipe-bench: --synthetic: stage %d '%.*s' is not NAME:COST\n",
              (int)n, (int)(comma - p), p);
      return BENCH_EXIT_USAGE;
    }
    size_t name_len = (size_t)(colon - p);
    if (name_len >= 32) name_len = 31;
    memcpy(labels[n], p, name_len);
    labels[n][name_len] = '\0';
    char *end;
    double v = strtod(colon + 1, &end);
    double scale = 0;
    if (!strncmp(end, "ms", 2)) scale = 1e6, end += 2;
    else if (!strncmp(end, "us", 2)) scale = 1e3, end += 2;
    else if (!strncmp(end, "ns", 2)) scale = 1, end += 2;
    else if (*end == 's') scale = 1e9, end += 1;
    if (end == colon + 1 || scale == 0 || end != comma || !(v >= 0) || v * scale > 60e9) {
      fprintf(stderr,
              "vkpipe-bench: --synthetic: stage '%s' cost '%.*s' is not a "
              "duration like 1ms, 250us, 0.5s (at most 60 s)\n",
              labels[n], (int)(comma - colon - 1), colon + 1);
      return BENCH_EXIT_USAGE;
    }
    stages[n].kind = VKP_PIPELINE_SYNTHETIC_SLEEP;
    stages[n].cost_ns = (uint64_t)llround(v * scale);
    ++n;
    p = *comma ? comma + 1 : comma;
  }
  if (n == 0) {
    fprintf(stderr, "vkpipe-bench: --synthetic: no stages\n");
    return BENCH_EXIT_USAGE;
  }
  *out_n = n;
  return 0;
}

static uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// What bench_measure has collected so far.
typedef struct bench_collector_t {
  int32_t warmup, frames;
  int32_t collected, measured;
  uint64_t *latencies;  // frames entries
  uint64_t *launch_ns;  // warmup + frames entries: when each frame's run() began
  uint64_t done_ns;     // when the last collected frame finished (launch + latency)
} bench_collector_t;

// Takes the next result within `timeout_ns`: counts it and records its
// latency once past the warm-up. EMPTY when none is ready; a frame's own
// error is returned, annotated with its sequence number.
static vkp_status_t bench_collect(vkp_pipeline_t *pipe, uint64_t timeout_ns,
                                  bench_collector_t *c) {
  vkp_pipeline_result_t res;
  vkp_status_t st = vkp_pipeline_get_output(pipe, timeout_ns, &res);
  if (st) return st;
  if (res.status) {
    st = vkp_status_annotate(res.status, "frame %llu", (unsigned long long)res.seq);
    res.status = NULL;
  } else if (c->collected >= c->warmup && c->measured < c->frames) {
    c->latencies[c->measured++] = res.latency_ns;
  }
  // Results come out in order: this is the collected-th frame launched.
  c->done_ns = c->launch_ns[c->collected] + res.latency_ns;
  vkp_pipeline_result_deinit(&res);
  ++c->collected;
  return st;
}

// Opens the measured window once the warm-up frames are out (see
// bench_measure): the stage statistics from now, the clock from when the
// last warm-up frame finished.
static vkp_status_t bench_window_open(vkp_pipeline_t *pipe, const bench_collector_t *c,
                                      vkp_pipeline_stats_t *before, uint64_t *t_start,
                                      bool *started) {
  if (*started || c->collected < c->warmup) return NULL;
  *started = true;
  *t_start = c->done_ns;
  return vkp_pipeline_get_stats(pipe, before);
}

// Streams warmup + frames through `pipe` with at most `window` frames in
// flight (64 keeps the rings full: latency under load; 1 gives the latency of
// a frame alone), and fills `out` with throughput, latency percentiles and
// stage statistics. The clock runs from the moment the last warm-up frame
// finished (its launch time plus its latency; the rings are full by then) to
// the moment the last frame finished: `frames` results in steady state,
// neither the warm-up frames' work nor the pipeline's filling counted (timed
// from the first measured launch instead, the 5 warm-up frames still in the
// stages were counted against the 60 measured: the demo read 94-95% of its
// bound where 200 frames read 98%). The stage statistics start when that
// last warm-up result is collected; they are per frame each stage ran.
static vkp_status_t bench_measure(vkp_pipeline_t *pipe, const vkp_plan_t *plan,
                                  const vkp_tensor_t *inputs, int32_t warmup,
                                  int32_t frames, int32_t window, const char *label,
                                  bool progress, bench_mode_result_t *out) {
  vkp_status_t st = NULL;
  int32_t total = warmup + frames;
  bench_collector_t c = {.warmup = warmup, .frames = frames};
  c.latencies = calloc((size_t)frames + 1, sizeof(uint64_t));
  c.launch_ns = calloc((size_t)total + 1, sizeof(uint64_t));
  if (!c.latencies || !c.launch_ns) {
    free(c.latencies);
    free(c.launch_ns);
    return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "latencies");
  }
  int32_t launched = 0;
  uint64_t t_start = 0, t_end = 0, t_begin = bench_now_ns(), last_draw = 0;
  vkp_pipeline_stats_t before = {0};
  bool started = false;
  if (warmup == 0) {
    st = vkp_pipeline_get_stats(pipe, &before);
    t_start = bench_now_ns();
    started = true;
  }
  while (c.collected < total && !st) {
    // Launch while there is room: run() blocks only when the rings are full,
    // so keep at most a bounded number of frames outstanding, polling results
    // so the window keeps moving.
    while (launched < total && launched - c.collected < window && !st) {
      for (int32_t i = 0; i < plan->n_inputs && !st; ++i)
        st = vkp_pipeline_set_input(pipe, vkp_pipeline_input_name(pipe, i), &inputs[i]);
      c.launch_ns[launched] = bench_now_ns();
      if (!st) st = vkp_pipeline_run(pipe, NULL);
      if (!st) ++launched;
      if (!st) st = bench_collect(pipe, 0, &c);
      if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
        vkp_status_free(st);
        st = NULL;
      }
      if (!st) st = bench_window_open(pipe, &c, &before, &t_start, &started);
    }
    if (st || c.collected >= total) break;
    st = bench_collect(pipe, (uint64_t)bench_frame_timeout_s * 1000000000ull, &c);
    if (!st) st = bench_window_open(pipe, &c, &before, &t_start, &started);
    if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
      vkp_status_free(st);
      st = vkp_status_make(VKP_STATUS_TIMEOUT,
                           "%s: no frame finished within %d s (--timeout)", label,
                           bench_frame_timeout_s);
    }
    uint64_t now = bench_now_ns();
    if (!st && progress && now - t_begin > 1000000000ull && now - last_draw > 100000000ull) {
      bench_progress_draw(stderr, label, c.collected, total);
      last_draw = now;
    }
  }
  // The last frame's finish (with warmup 0, the clock began at the first
  // launch, filling included).
  t_end = c.collected > 0 ? c.done_ns : bench_now_ns();
  if (progress && last_draw) bench_progress_clear(stderr);
  if (!st) {
    vkp_pipeline_stats_t after;
    st = vkp_pipeline_get_stats(pipe, &after);
    if (!st) {
      st = bench_mode_result_fill(out, label, c.latencies, c.measured,
                                  t_end - t_start, &before, &after);
      vkp_pipeline_stats_deinit(&after);
    }
  }
  vkp_pipeline_stats_deinit(&before);
  free(c.latencies);
  free(c.launch_ns);
  return st;
}

// Runs `plan` once keeping the rings full and fills `out`; with `isolated`
// (may be NULL) the same pipeline then runs one frame at a time into it.
static vkp_status_t bench_run_mode(const vkp_plan_t *plan,
                                   const vkp_registry_t *registry,
                                   const vkp_blob_t *blobs, const bench_args_t *a,
                                   const vkp_tensor_t *inputs, bool sequential,
                                   bool trace, const char *label,
                                   bench_mode_result_t *out,
                                   bench_mode_result_t *isolated) {
  vkp_pipeline_options_t opt = {
      .ring_depth = a->depth,
      .sequential = sequential,
      .trace_capacity = trace ? (a->frames + a->warmup) * plan->n_stages + 16 : 0,
  };
  vkp_pipeline_t *pipe = NULL;
  vkp_status_t st = blobs ? vkp_pipeline_create_from_blobs(plan, registry, blobs, &opt, &pipe)
                          : vkp_pipeline_create(plan, registry, &opt, &pipe);
  if (st) return vkp_status_annotate(st, "%s", label);
  st = bench_measure(pipe, plan, inputs, a->warmup, a->frames, 64, label, a->progress, out);
  if (!st && trace) st = bench_trace_collect(out, pipe);
  if (!st && isolated)
    st = bench_measure(pipe, plan, inputs, a->warmup > 2 ? 2 : a->warmup, a->frames, 1,
                       "isolated", a->progress, isolated);
  vkp_pipeline_destroy(pipe);
  return st;
}

// --ranks N: MPI is started, stage i goes to rank i * N / n (contiguous
// blocks). Ranks other than 0 serve both modes and the hop measurement here
// and print nothing.
static int32_t bench_mpi_rank;
static bool bench_mpi_used;  // MPI initialised: finalise (or abort) at exit

static vkp_status_t bench_serve_hop(void);

static vkp_status_t bench_synthetic_ranks(const bench_args_t *a, int32_t n,
                                          int32_t *ranks) {
  if (a->ranks <= 1) return NULL;
  int32_t size = 0;
  bench_mpi_used = true;
  VKP_RETURN_IF_ERROR(vkp_mpi_init(NULL, NULL, &bench_mpi_rank, &size));
  if (size < a->ranks)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "--ranks %d needs mpirun -np %d or more (the MPI "
                           "world has %d)", (int)a->ranks, (int)a->ranks, (int)size);
  vkp_pipeline_synthetic_stage_t stages[BENCH_MAX_SYNTHETIC];
  char labels[BENCH_MAX_SYNTHETIC][32];
  int32_t n_parsed = 0;
  for (int32_t i = 0; i < n; ++i) ranks[i] = (int32_t)((int64_t)i * a->ranks / n);
  if (bench_mpi_rank == 0) return NULL;
  if (bench_parse_synthetic(a->synthetic, stages, labels, &n_parsed) != 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "bad --synthetic");
  for (int mode = 0; mode < 2; ++mode)
    VKP_RETURN_IF_ERROR(vkp_mpi_serve_synthetic(stages, ranks, n, a->numel));
  return bench_serve_hop();
}

// The hop measurements: a one-stage, zero-cost pipeline on rank 1 against
// the same on rank 0, next to plain MPI ping-pong of the same payload: 64
// bytes for the latency, 4 MiB for the bandwidth (the payload goes to rank
// 1 and back, so a frame moves it twice). Each is measured in
// BENCH_HOP_ROUNDS rounds that alternate ping-pong, local and remote, and
// the medians are reported: on a shared host one pass of each moves by
// more than the hop itself.
static const vkp_pipeline_synthetic_stage_t bench_hop_stage = {
    VKP_PIPELINE_SYNTHETIC_SLEEP, 0};
#define BENCH_HOP_SMALL 16             // floats: 64 B
#define BENCH_HOP_LARGE (1 << 20)      // floats: 4 MiB
#define BENCH_HOP_ROUNDS 5

static vkp_status_t bench_serve_hop(void) {
  int32_t one = 1;
  for (int r = 0; r < BENCH_HOP_ROUNDS; ++r) {
    VKP_RETURN_IF_ERROR(vkp_mpi_pingpong(1, 4 * BENCH_HOP_SMALL, 1000, NULL));
    VKP_RETURN_IF_ERROR(vkp_mpi_serve_synthetic(&bench_hop_stage, &one, 1, BENCH_HOP_SMALL));
  }
  for (int r = 0; r < BENCH_HOP_ROUNDS; ++r) {
    VKP_RETURN_IF_ERROR(vkp_mpi_pingpong(1, 4 * BENCH_HOP_LARGE, 20, NULL));
    VKP_RETURN_IF_ERROR(vkp_mpi_serve_synthetic(&bench_hop_stage, &one, 1, BENCH_HOP_LARGE));
  }
  return NULL;
}

static vkp_status_t bench_hop_latency(int32_t rank, int32_t numel, int32_t frames,
                                      double *out_s) {
  vkp_pipeline_t *pipe = NULL;
  VKP_RETURN_IF_ERROR(vkp_pipeline_create_synthetic_ranks(&bench_hop_stage, &rank,
                                                          1, numel, NULL, &pipe));
  int64_t shape[1] = {numel};
  vkp_tensor_t x, y;
  vkp_status_t st = vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, shape);
  uint64_t t0 = 0;
  for (int32_t f = 0; !st && f < frames + 10; ++f) {
    if (f == 10) t0 = bench_now_ns();
    st = vkp_pipeline_infer(pipe, &x, &y);
    if (!st) vkp_tensor_deinit(&y);
  }
  *out_s = (double)(bench_now_ns() - t0) * 1e-9 / frames;
  if (!st) vkp_tensor_deinit(&x);
  vkp_pipeline_destroy(pipe);
  return st;
}

// Medians over BENCH_HOP_ROUNDS alternating rounds of ping-pong, local and
// remote frames of `numel` floats (ranks other than 0 serve the same
// sequence in bench_serve_hop).
static vkp_status_t bench_hop_rounds(int32_t numel, int32_t pings, int32_t frames,
                                     double *pingpong, double *local, double *remote,
                                     double *added) {
  double pp[BENCH_HOP_ROUNDS], lo[BENCH_HOP_ROUNDS], re[BENCH_HOP_ROUNDS],
      ad[BENCH_HOP_ROUNDS];
  for (int r = 0; r < BENCH_HOP_ROUNDS; ++r) {
    VKP_RETURN_IF_ERROR(vkp_mpi_pingpong(1, 4 * (size_t)numel, pings, &pp[r]));
    VKP_RETURN_IF_ERROR(bench_hop_latency(0, numel, frames, &lo[r]));
    VKP_RETURN_IF_ERROR(bench_hop_latency(1, numel, frames, &re[r]));
    ad[r] = re[r] - lo[r];
  }
  *pingpong = bench_median(pp, BENCH_HOP_ROUNDS);
  *local = bench_median(lo, BENCH_HOP_ROUNDS);
  *remote = bench_median(re, BENCH_HOP_ROUNDS);
  *added = bench_median(ad, BENCH_HOP_ROUNDS);
  return NULL;
}

static vkp_status_t bench_hop(bench_report_t *rep, int32_t frames) {
  double pingpong = 0, local = 0, remote = 0, added = 0;
  int32_t small_frames = frames > 200 ? frames : 200;
  VKP_RETURN_IF_ERROR(bench_hop_rounds(BENCH_HOP_SMALL, 1000, small_frames, &pingpong, &local,
                                       &remote, &added));
  bench_report_note(rep,
                    "hop (64 B, rank 0 -> 1 -> 0; medians of %d rounds): one-stage "
                    "frame on rank 1 %.1f us vs on rank 0 %.1f us: %.1f us added per "
                    "round trip; plain MPI ping-pong round trip %.1f us (%.1fx)",
                    BENCH_HOP_ROUNDS, remote * 1e6, local * 1e6, added * 1e6,
                    pingpong * 1e6, pingpong > 0 ? added / pingpong : 0.0);
  int32_t big_frames = frames < 20 ? frames : 20;
  VKP_RETURN_IF_ERROR(bench_hop_rounds(BENCH_HOP_LARGE, 20, big_frames, &pingpong, &local,
                                       &remote, &added));
  double bytes = 2.0 * 4.0 * BENCH_HOP_LARGE;  // there and back
  bench_report_note(rep,
                    "bandwidth (4 MiB, rank 0 -> 1 -> 0; medians of %d rounds): "
                    "one-stage frame on rank 1 %.2f ms vs on rank 0 %.2f ms: %.2f GB/s "
                    "over the two hops; plain MPI ping-pong round trip %.2f ms: %.2f GB/s "
                    "(ours %.0f%% of MPI's)",
                    BENCH_HOP_ROUNDS, remote * 1e3, local * 1e3, bytes / added * 1e-9,
                    pingpong * 1e3, bytes / pingpong * 1e-9, 100.0 * pingpong / added);
  return NULL;
}

static vkp_status_t bench_run_synthetic(const bench_args_t *a, bench_report_t *rep) {
  vkp_pipeline_synthetic_stage_t stages[BENCH_MAX_SYNTHETIC];
  char labels[BENCH_MAX_SYNTHETIC][32];
  int32_t n = 0;
  if (bench_parse_synthetic(a->synthetic, stages, labels, &n) != 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "bad --synthetic");
  int32_t ranks[BENCH_MAX_SYNTHETIC];
  vkp_status_t st = bench_synthetic_ranks(a, n, ranks);
  if (st || bench_mpi_rank != 0) return st;
  if (!st) st = bench_report_init_synthetic(rep, a->synthetic, n, labels, stages);
  for (int mode = 0; mode < 2 && !st; ++mode) {
    bool sequential = mode == 0;
    vkp_pipeline_options_t opt = {
        .ring_depth = a->depth,
        .sequential = sequential,
        .trace_capacity = !sequential && a->trace_path ? (a->frames + a->warmup) * n + 16 : 0,
    };
    vkp_pipeline_t *pipe = NULL;
    st = a->ranks > 1 ? vkp_pipeline_create_synthetic_ranks(stages, ranks, n, a->numel,
                                                            &opt, &pipe)
                      : vkp_pipeline_create_synthetic(stages, n, a->numel, &opt, &pipe);
    if (st) break;
    int64_t shape[1] = {a->numel};
    vkp_tensor_t x;
    st = vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, shape);
    if (!st) {
      // A synthetic pipeline has one global input "x": fake a plan view.
      char *in_names[1] = {"x"};
      vkp_plan_t view = {.n_inputs = 1, .inputs = in_names};
      bench_mode_result_t *res = sequential ? &rep->sequential : &rep->pipelined;
      st = bench_measure(pipe, &view, &x, a->warmup, a->frames, 64,
                         sequential ? "sequential" : "pipelined", a->progress, res);
      if (!st && opt.trace_capacity) st = bench_trace_collect(res, pipe);
      if (!st && !sequential)
        st = bench_measure(pipe, &view, &x, a->warmup > 2 ? 2 : a->warmup, a->frames, 1,
                           "isolated", a->progress, &rep->isolated);
      vkp_tensor_deinit(&x);
    }
    vkp_pipeline_destroy(pipe);
  }
  if (!st && a->ranks > 1) st = bench_hop(rep, a->frames);
  return st;
}

// Partitions `graph` into a plan. `a` (may be NULL: no manual placement)
// supplies the --assign overrides.
static vkp_status_t bench_build_plan(const bench_args_t *a, const vkp_graph_t *graph,
                                     const vkp_registry_t *registry,
                                     const vkp_profile_t *profile,
                                     const char *policy, int32_t stages,
                                     int32_t threads, vkp_plan_t **out_plan,
                                     double *out_estimate, char **out_notes) {
  vkp_partition_options_t opt = {
      .policy = policy,
      .stages = stages,
      .threads = threads,
      .n_assigns = a ? a->n_assigns : 0,
      .assigns = a ? a->assigns : NULL,
  };
  vkp_partition_t *part = NULL;
  vkp_status_t st = vkp_partition_create(graph, registry, profile, &opt, &part);
  if (!st) {
    st = vkp_partition_to_plan(part, graph->name, out_plan);
    for (int32_t s = 0; !st && a && s < (*out_plan)->n_stages; ++s)
      (*out_plan)->stages[s].precision = a->precision;
    if (out_estimate) *out_estimate = part->bottleneck_s;
    if (!st && out_notes && part->notes) {
      *out_notes = strdup(part->notes);
      if (!*out_notes) st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "notes");
    }
  }
  vkp_partition_destroy(part);
  return st;
}

// The plan for a model: the partitioner's cut, re-cut on measured stage
// times with --refine (tools/tool_refine.c). The rounds, the partitioner's
// notes and its estimate go into the report.
static vkp_status_t bench_model_plan(const bench_args_t *a, const vkp_graph_t *graph,
                                     const vkp_registry_t *registry,
                                     const vkp_profile_t *profile, bench_report_t *rep,
                                     vkp_plan_t **out_plan, char **out_notes) {
  vkp_partition_options_t opt = {
      .policy = a->policy,
      .stages = a->stages,
      .threads = a->threads,
      .replicas = a->replicas,
      .n_assigns = a->n_assigns,
      .assigns = a->assigns,
  };
  vkp_tool_refined_t r;
  vkp_status_t st = vkp_tool_refine(graph, registry, profile, &opt, a->precision, a->refine,
                                    a->warmup < 3 ? a->warmup : 3, a->frames, NULL, &r);
  if (st)
    return a->refine ? vkp_status_annotate(st, "--refine (--no-refine measures the "
                                               "estimates' cut)")
                     : st;
  for (char *line = r.notes ? strtok(r.notes, "\n") : NULL; line; line = strtok(NULL, "\n"))
    bench_report_note(rep, "%s", line);
  rep->refine_plans = r.n_plans;
  memcpy(rep->refine_fps, r.fps, sizeof(double) * (size_t)r.n_plans);
  rep->refine_kept = r.kept;
  rep->estimated_bottleneck_s = r.part->bottleneck_s;
  if (r.part->notes && !(*out_notes = strdup(r.part->notes)))
    st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "notes");
  *out_plan = r.plan;
  r.plan = NULL;
  vkp_tool_refined_deinit(&r);
  return st;
}

static vkp_status_t bench_run_model(const bench_args_t *a, bench_report_t *rep) {
  vkp_registry_t *registry = NULL;
  vkp_profile_t *profile = NULL;
  vkp_graph_t *graph = NULL;
  vkp_artifact_t *artifact = NULL;
  vkp_plan_t *plan = NULL;
  vkp_tensor_t *inputs = NULL;
  const vkp_plan_t *active = NULL;
  const vkp_blob_t *blobs = NULL;
  char *part_notes = NULL;
  vkp_status_t st = vkp_registry_create_default(&registry);
  bool artifact_model = vkp_artifact_is_artifact(a->model);
  if (!st && !artifact_model)
    st = vkp_tool_profile("vkpipe-bench", a->profile, a->cores, registry, &profile);
  if (!st && profile) {
    rep->cores = vkp_profile_concurrency(profile, profile->host_device);
    rep->threads_option = a->threads;
  }
  if (!st && artifact_model) {
    st = vkp_tool_artifact_load(a->model, &a->trust, &artifact);
    if (!st) {
      active = vkp_artifact_plan(artifact);
      blobs = vkp_artifact_blobs(artifact);
    }
  } else if (!st) {
    st = vkp_tool_load_graph(a->model, &a->load, &graph);
    if (!st) st = bench_model_plan(a, graph, registry, profile, rep, &plan, &part_notes);
    active = plan;
    if (!st && part_notes) {
      // The partitioner's choice of threads and stages, line by line.
      for (char *line = strtok(part_notes, "\n"); line; line = strtok(NULL, "\n"))
        bench_report_note(rep, "partitioner: %s", line);
    }
  }
  // An artifact whose plan places stages on other MPI ranks (under mpirun;
  // docs/scale-out.md): ranks other than 0 serve both modes.
  bool ranked = false;
  for (int32_t s = 0; !st && s < active->n_stages; ++s) ranked |= active->stages[s].rank != 0;
  if (!st && ranked) {
    st = vkp_mpi_init(NULL, NULL, &bench_mpi_rank, NULL);
    bench_mpi_used = true;
    for (int mode = 0; !st && bench_mpi_rank != 0 && mode < 2; ++mode)
      st = vkp_mpi_serve(active, registry, blobs);
    if (bench_mpi_rank != 0) goto done;
  }
  if (!st) st = bench_report_init_plan(rep, a->model, a->policy, active);
  if (!st) st = vkp_tool_random_inputs(active, &inputs);
  if (!st)
    st = bench_run_mode(active, registry, blobs, a, inputs, true, false,
                        "sequential", &rep->sequential, NULL);
  if (!st)
    st = bench_run_mode(active, registry, blobs, a, inputs, false, a->trace_path != NULL,
                        "pipelined", &rep->pipelined, &rep->isolated);
  // The whole model on each single target that can run all of it, except
  // those the partitioner expects to be over BENCH_SINGLE_SLACK times slower
  // than the best (a reference interpreter, a software rasteriser) and to
  // take more than BENCH_SINGLE_CHEAP_S: they would dominate the run's time
  // and cannot be the best.
  if (!st && graph && !a->no_single) {
    int32_t n_targets = vkp_registry_count(registry);
    double *estimate = calloc((size_t)n_targets + 1, sizeof(double));
    if (!estimate) st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "single runs");
    double best_estimate = INFINITY;
    for (int32_t t = 0; t < n_targets && !st; ++t) {
      const vkp_target_t *target = vkp_registry_get(registry, t);
      estimate[t] = INFINITY;
      vkp_status_t check = vkp_target_check_graph(target, graph);
      vkp_plan_t *single = NULL;
      if (!check)
        check = bench_build_plan(NULL, graph, registry, profile, target->vtable->name, 1,
                                 a->threads, &single, &estimate[t], NULL);
      if (!check && single->n_stages != 1) estimate[t] = INFINITY;
      vkp_status_free(check);
      vkp_plan_destroy(single);
      if (estimate[t] < best_estimate) best_estimate = estimate[t];
    }
    for (int32_t t = 0; t < n_targets && !st; ++t) {
      const vkp_target_t *target = vkp_registry_get(registry, t);
      if (!isfinite(estimate[t])) {
        vkp_status_t check = vkp_target_check_graph(target, graph);
        if (check)
          bench_report_note(rep, "no single-target run on '%s': %s", target->vtable->name,
                            vkp_status_message(check));
        vkp_status_free(check);
        continue;
      }
      // Cheap runs are measured whatever the estimate says: it may be the
      // estimate that is wrong (on an H200, a miscalibrated profile put
      // MobileNetV2 on vulkan at 12x its cpu time, so the run that would
      // have shown vulkan 2.7x faster than the chosen plan was skipped).
      double est_total = estimate[t] * (double)(a->frames + 2 * a->warmup);
      if (estimate[t] > best_estimate * BENCH_SINGLE_SLACK && est_total > BENCH_SINGLE_CHEAP_S) {
        bench_report_note(rep,
                          "no single-target run on '%s': estimated %.1f ms per frame, "
                          "%.0fx the fastest target's %.1f ms",
                          target->vtable->name, estimate[t] * 1e3,
                          estimate[t] / best_estimate, best_estimate * 1e3);
        continue;
      }
      // The whole model on this one target: no --assign overrides here. Its
      // threads are chosen as for the pipeline (--threads, or auto); when
      // auto gives it several, one thread is measured too.
      int32_t threads = a->threads;
      for (int pass = 0; pass < 2 && !st; ++pass) {
        vkp_plan_t *single = NULL;
        vkp_status_t one = bench_build_plan(NULL, graph, registry, profile,
                                            target->vtable->name, 1, threads, &single,
                                            NULL, NULL);
        bench_mode_result_t res;
        memset(&res, 0, sizeof res);
        char label[64];
        snprintf(label, sizeof label, "single %s", target->vtable->name);
        int32_t used = !one && single->n_stages == 1 ? single->stages[0].threads : 0;
        if (!one && single->n_stages == 1)
          one = bench_run_mode(single, registry, NULL, a, inputs, true, false, label, &res,
                               NULL);
        if (!one) one = bench_report_add_single(rep, target->vtable->name, used, &res);
        if (one) {
          // A target that cannot run the model alone is skipped, with a note.
          bench_report_note(rep, "single-target run on '%s' skipped: %s",
                            target->vtable->name, vkp_status_message(one));
          vkp_status_free(one);
          used = 0;
        }
        bench_mode_result_deinit(&res);
        vkp_plan_destroy(single);
        if (a->threads != 0 || used <= 1) break;
        threads = 1;
      }
    }
    free(estimate);
  }
done:
  if (inputs) vkp_tool_inputs_free(inputs, active->n_inputs);
  free(part_notes);
  vkp_plan_destroy(plan);
  vkp_artifact_destroy(artifact);
  vkp_graph_destroy(graph);
  vkp_profile_destroy(profile);
  vkp_registry_destroy(registry);
  return st;
}

int main(int argc, char **argv) {
  bench_args_t a;
  int rc = bench_parse_args(argc, argv, &a);
  if (rc < 0) return 0;
  if (rc > 0) return rc;
  bench_report_t rep;
  bench_report_init(&rep, a.frames, a.warmup, a.depth ? a.depth : VKP_PIPELINE_DEFAULT_RING_DEPTH);
  vkp_status_t st = a.synthetic ? bench_run_synthetic(&a, &rep) : bench_run_model(&a, &rep);
  if (st && bench_mpi_used) {
    fprintf(stderr, "vkpipe-bench (rank %d): %s\n", (int)bench_mpi_rank,
            vkp_status_message(st));
    vkp_mpi_abort(BENCH_EXIT_FAILURE);  // the other ranks would wait
  }
  if (bench_mpi_used) vkp_mpi_finalize();
  if (bench_mpi_rank != 0) {
    // A serving rank: rank 0 prints the report.
    if (st) fprintf(stderr, "vkpipe-bench (rank %d): %s\n", (int)bench_mpi_rank,
                    vkp_status_message(st));
    vkp_status_free(st);
    bench_report_deinit(&rep);
    return st ? BENCH_EXIT_FAILURE : 0;
  }
  if (vkp_status_code(st) == VKP_STATUS_INVALID_ARGUMENT && a.synthetic) {
    vkp_status_free(st);
    bench_report_deinit(&rep);
    return BENCH_EXIT_USAGE;
  }
  if (!st) bench_report_finish(&rep);
  if (!st && a.trace_path) st = bench_trace_write(&rep, a.trace_path);
  if (st) {
    fprintf(stderr, "vkpipe-bench: %s\n", vkp_status_message(st));
    vkp_status_free(st);
    bench_report_deinit(&rep);
    return BENCH_EXIT_FAILURE;
  }
  if (a.json) bench_report_print_json(&rep, stdout);
  else bench_report_print_table(&rep, stdout);
  if (a.trace_path && !a.json) printf("trace written to %s (open it in Perfetto or chrome://tracing)\n", a.trace_path);
  bench_report_deinit(&rep);
  return 0;
}
