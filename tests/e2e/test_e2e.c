// SPDX-License-Identifier: Apache-2.0
// tools/cmd_build.c, tools/cmd_inspect.c, the pipeline paths of
// tools/cmd_run.c and tools/vkpipe_bench/, through the built binaries: what a
// new user types, checked against the reference target on fresh inputs.
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/test_cli.h"
#include "support/test_support.h"
#include "vkpipe/npy.h"

TestSuite(e2e, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

static const char *model(const char *name) {
  static char path[2][512];
  static int k;
  k ^= 1;
  snprintf(path[k], sizeof path[k], "%s/examples/%s", vkp_test_source_dir(), name);
  return path[k];
}

static vkp_test_run_t vkpipe(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static vkp_test_run_t vkpipe(const char *fmt, ...) {
  char args[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return vkp_test_run_tool("vkpipe", args);
}

static void expect_ok(vkp_test_run_t *r, const char *what) {
  cr_assert_eq(r->code, 0, "%s failed (%d):\n%s%s", what, r->code, r->out, r->err);
}

static void load_scratch_npy(const char *rel, vkp_tensor_t *t) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", vkp_test_scratch, rel);
  VKP_TEST_OK(vkp_npy_read_file(path, t));
}

static void expect_same_npy(const char *a, const char *b) {
  vkp_tensor_t x, y;
  load_scratch_npy(a, &x);
  load_scratch_npy(b, &y);
  char msg[256];
  cr_assert(vkp_test_allclose(&x, &y, 1e-4, 1e-6, msg, sizeof msg), "%s vs %s: %s",
            a, b, msg);
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
}

Test(e2e, build_inspect_run_artifact_and_auto, .timeout = 600) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t xs[] = {1, 64};
  vkp_test_write_random_npy(&rng, "x.npy", 2, xs);
  vkp_test_run_t r = vkpipe("build '%s' --policy cpu --stages 2 -o mlp.vkp",
                            model("mlp.json"));
  expect_ok(&r, "build");
  cr_assert(strstr(r.out, "wrote mlp.vkp"), "%s", r.out);
  vkp_test_run_free(&r);

  r = vkpipe("inspect mlp.vkp --dump dump");
  expect_ok(&r, "inspect");
  cr_assert(strstr(r.out, "format version 2"), "%s", r.out);
  cr_assert(strstr(r.out, "stage0") && strstr(r.out, "stage1"), "%s", r.out);
  cr_assert(strstr(r.out, "stages/1/code"), "%s", r.out);
  char path[512];
  struct stat sb;
  static const char *const dumped[] = {"stage0/graph.json", "stage0/stage0.c",
                                       "stage1/stage1.c", "stage1/stage1.so"};
  for (size_t i = 0; i < sizeof dumped / sizeof dumped[0]; ++i) {
    snprintf(path, sizeof path, "%s/dump/%s", vkp_test_scratch, dumped[i]);
    cr_assert_eq(stat(path, &sb), 0, "inspect --dump wrote no %s", path);
  }
  snprintf(path, sizeof path, "%s/dump/stage0/stage0.c", vkp_test_scratch);
  char *source = vkp_test_read_file(path, NULL);
  cr_assert(source && strstr(source, "vkp_stage_run"), "not the generated C");
  free(source);
  vkp_test_run_free(&r);

  r = vkpipe("run '%s' --input x=x.npy --output-dir ref", model("mlp.json"));
  expect_ok(&r, "run on ref");
  vkp_test_run_free(&r);
  r = vkpipe("run mlp.vkp --input x=x.npy --output-dir art");
  expect_ok(&r, "run artifact");
  vkp_test_run_free(&r);
  expect_same_npy("ref/y.npy", "art/y.npy");
  r = vkpipe("run '%s' --target auto --stages 2 --input x=x.npy --output-dir auto",
             model("mlp.json"));
  expect_ok(&r, "run --target auto");
  cr_assert(strstr(r.out, "pipeline:"), "%s", r.out);
  vkp_test_run_free(&r);
  expect_same_npy("ref/y.npy", "auto/y.npy");

  // The ONNX example through an artifact too.
  int64_t fs[] = {1, 256};
  vkp_test_write_random_npy(&rng, "f.npy", 2, fs);
  r = vkpipe("build '%s' --stages 2 -o onnx.vkp", model("mlp.onnx"));
  expect_ok(&r, "build onnx");
  vkp_test_run_free(&r);
  r = vkpipe("run onnx.vkp --input features=f.npy --output-dir o1");
  expect_ok(&r, "run onnx artifact");
  vkp_test_run_free(&r);
  r = vkpipe("run '%s' --input features=f.npy --output-dir o2", model("mlp.onnx"));
  expect_ok(&r, "run onnx on ref");
  vkp_test_run_free(&r);
  expect_same_npy("o1/probs.npy", "o2/probs.npy");

  // --refine: the plan ran here and was cut again on its measured stage
  // times; the artifact built from the plan kept computes what ref does.
  r = vkpipe("build '%s' --policy cpu --stages 2 --threads 1 --refine 1 -o refined.vkp",
             model("mlp.json"));
  expect_ok(&r, "build --refine");
  cr_assert(strstr(r.out, "refine: plan 1 (the estimates' cut) ran"), "%s", r.out);
  cr_assert(strstr(r.out, "wrote refined.vkp"), "%s", r.out);
  vkp_test_run_free(&r);
  r = vkpipe("run refined.vkp --input x=x.npy --output-dir refined");
  expect_ok(&r, "run the refined artifact");
  vkp_test_run_free(&r);
  expect_same_npy("ref/y.npy", "refined/y.npy");
}

Test(e2e, build_and_inspect_errors, .timeout = 600) {
  vkp_test_run_t r = vkpipe("build '%s'", model("mlp.json"));
  cr_assert_eq(r.code, 2, "missing -o: %s", r.err);
  cr_assert_eq(vkp_test_count_lines(r.err), 1, "%s", r.err);
  vkp_test_run_free(&r);
  // --refine measures in this process: not with ranks; at most 8 rounds.
  static const char *const refine_bad[] = {"--refine 1 --ranks 2", "--refine 9",
                                           "--refine x"};
  for (size_t i = 0; i < sizeof refine_bad / sizeof refine_bad[0]; ++i) {
    r = vkpipe("build '%s' -o x.vkp %s", model("mlp.json"), refine_bad[i]);
    cr_assert_eq(r.code, 2, "%s: %s", refine_bad[i], r.err);
    cr_assert_eq(vkp_test_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "--refine"), "%s", r.err);
    vkp_test_run_free(&r);
  }
  r = vkpipe("build missing.json -o x.vkp");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "missing.json"), "%s", r.err);
  vkp_test_run_free(&r);
  vkp_test_write_text("junk.vkp", "VKPIPE\r\n and then nothing useful");
  r = vkpipe("inspect junk.vkp");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "junk.vkp"), "%s", r.err);
  vkp_test_run_free(&r);
  r = vkpipe("run junk.vkp --input x=x.npy --output-dir o");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "junk.vkp"), "%s", r.err);
  vkp_test_run_free(&r);
}

static cJSON *bench_json(const char *args) {
  vkp_test_run_t r = vkp_test_run_tool("vkpipe-bench", args);
  cr_assert_eq(r.code, 0, "vkpipe-bench %s failed:\n%s", args, r.err);
  cJSON *j = cJSON_Parse(r.out);
  cr_assert_not_null(j, "not JSON:\n%s", r.out);
  vkp_test_run_free(&r);
  return j;
}

static double num(const cJSON *o, const char *path) {
  char buf[128];
  snprintf(buf, sizeof buf, "%s", path);
  const cJSON *cur = o;
  for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, "."))
    cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
  cr_assert(cJSON_IsNumber(cur), "'%s' missing or not a number", path);
  return cur->valuedouble;
}

Test(e2e, bench_synthetic_json_and_trace, .timeout = 600) {
  cJSON *j = bench_json("--synthetic 'cpu:2ms,gpu:1ms,cpu2:1ms' --frames 20 "
                        "--warmup 2 --json --trace t.json");
  cr_assert_eq(num(j, "frames"), 20);
  cr_assert_eq(num(j, "pipelined.frames"), 20);
  cr_assert_gt(num(j, "pipelined.throughput_fps"), 0);
  cr_assert_gt(num(j, "sequential.throughput_fps"), 0);
  cr_assert_geq(num(j, "pipelined.latency_ms.p99"), num(j, "pipelined.latency_ms.p50"));
  cr_assert_gt(num(j, "bottleneck.bound_fps"), 0);
  cr_assert_gt(num(j, "efficiency"), 0);
  cr_assert_gt(num(j, "speedup_vs_sequential"), 0);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(j, "stages");
  cr_assert_eq(cJSON_GetArraySize(stages), 3);
  // The slowest synthetic stage is the 2 ms one: each stage's busy time is at
  // least its sleep.
  cr_assert_geq(num(cJSON_GetArrayItem(stages, 0), "busy_ms"), 2.0);
  // One frame alone goes through every stage: at least the sum of the sleeps.
  cr_assert_eq(num(j, "isolated.frames"), 20);
  cr_assert_geq(num(j, "isolated.latency_ms.p50"), 4.0);
  cr_assert_geq(num(j, "isolated.latency_ms.p99"), num(j, "isolated.latency_ms.p50"));
  cJSON_Delete(j);
  // The trace: one complete event per stage and frame (warm-up included),
  // one named track per stage.
  char path[512];
  snprintf(path, sizeof path, "%s/t.json", vkp_test_scratch);
  char *text = vkp_test_read_file(path, NULL);
  cr_assert_not_null(text);
  cJSON *t = cJSON_Parse(text);
  cr_assert_not_null(t, "trace is not JSON");
  const cJSON *ev, *events = cJSON_GetObjectItemCaseSensitive(t, "traceEvents");
  int complete = 0, tracks = 0;
  cJSON_ArrayForEach(ev, events) {
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    if (cJSON_IsString(ph) && !strcmp(ph->valuestring, "X")) ++complete;
    if (cJSON_IsString(name) && !strcmp(name->valuestring, "thread_name")) ++tracks;
  }
  cr_assert_eq(complete, 3 * 22);
  cr_assert_eq(tracks, 3);
  cJSON_Delete(t);
  free(text);
}

Test(e2e, bench_model_and_artifact, .timeout = 600) {
  char args[1024];
  snprintf(args, sizeof args,
           "'%s' --policy cpu --stages 2 --threads 1 --cores 2 --frames 10 --warmup 2 --json",
           model("mlp.json"));
  cJSON *j = bench_json(args);
  const cJSON *singles = cJSON_GetObjectItemCaseSensitive(j, "single_target");
  cr_assert_geq(cJSON_GetArraySize(singles), 1, "no single-target runs");
  cr_assert_eq(num(cJSON_GetArrayItem(singles, 0), "threads") >= 0, 1);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(j, "stages");
  cr_assert_eq(cJSON_GetArraySize(stages), 2);
  // --cores and --threads as asked, and in every cpu stage.
  cr_assert_eq(num(j, "cores"), 2);
  cr_assert_eq(num(j, "threads"), 1);
  for (int s = 0; s < 2; ++s) {
    cr_assert_eq(num(cJSON_GetArrayItem(stages, s), "threads"), 1);
    cr_assert_gt(num(cJSON_GetArrayItem(stages, s), "estimated_ms"), 0);
  }
  cr_assert_eq(num(j, "isolated.frames"), 10);
  cr_assert_gt(num(j, "isolated.latency_ms.p50"), 0);
  // --refine (on by default): the estimates' cut ran first, and the plan
  // kept is one of those that ran.
  const cJSON *refine = cJSON_GetObjectItemCaseSensitive(j, "refine");
  const cJSON *tried = cJSON_GetObjectItemCaseSensitive(refine, "plans_fps");
  cr_assert(cJSON_IsArray(tried) && cJSON_GetArraySize(tried) >= 1);
  cr_assert_gt(cJSON_GetArrayItem(tried, 0)->valuedouble, 0);
  cr_assert_lt(num(j, "refine.kept"), cJSON_GetArraySize(tried));
  cJSON_Delete(j);
  // Threads chosen automatically on two cores: the table says why.
  snprintf(args, sizeof args,
           "'%s' --policy cpu --stages auto --threads auto --cores 2 --frames 4 --warmup 1 "
           "--no-single",
           model("mlp.json"));
  vkp_test_run_t t = vkp_test_run_tool("vkpipe-bench", args);
  cr_assert_eq(t.code, 0, "%s", t.err);
  cr_assert(strstr(t.out, "threads per stage"), "%s", t.out);
  cr_assert(strstr(t.out, "<- chosen"), "%s", t.out);
  cr_assert(strstr(t.out, "isolated latency"), "%s", t.out);
  cr_assert(strstr(t.out, "latency under load"), "%s", t.out);
  vkp_test_run_free(&t);
  // --node-times: each cpu stage's kernels on stderr as it unloads.
  snprintf(args, sizeof args,
           "'%s' --policy cpu --stages 2 --threads 1 --frames 4 --warmup 1 --no-single "
           "--node-times",
           model("mlp.json"));
  t = vkp_test_run_tool("vkpipe-bench", args);
  cr_assert_eq(t.code, 0, "%s", t.err);
  cr_assert(strstr(t.err, "cpu stage 'stage0': time per kernel over"), "%s", t.err);
  cr_assert(strstr(t.err, "cpu stage 'stage1': time per kernel over"), "%s", t.err);
  vkp_test_run_free(&t);
  t = vkp_test_run_tool("vkpipe-bench", "x.onnx --threads 0");
  cr_assert_eq(t.code, 2, "%s", t.err);
  cr_assert(strstr(t.err, "--threads"), "%s", t.err);
  vkp_test_run_free(&t);
  vkp_test_run_t r = vkpipe("build '%s' --policy ref --stages 2 -o m.vkp",
                            model("mlp.json"));
  expect_ok(&r, "build");
  vkp_test_run_free(&r);
  j = bench_json("m.vkp --frames 5 --warmup 1 --json");
  cr_assert_eq(num(j, "pipelined.frames"), 5);
  cJSON_Delete(j);
  // The human table names every stage and the bound.
  r = vkp_test_run_tool("vkpipe-bench", "m.vkp --frames 5 --warmup 1");
  expect_ok(&r, "bench table");
  cr_assert(strstr(r.out, "bottleneck bound") && strstr(r.out, "stage1"), "%s", r.out);
  vkp_test_run_free(&r);
}

// A profile that makes the reference interpreter look fastest: --policy
// auto puts the model there, the single-target runs (cheap, so measured
// despite their estimates) show cpu far faster, and the notes say that the
// plan lost and which stage's estimate was off.
Test(e2e, bench_names_a_plan_that_loses, .timeout = 600) {
  vkp_test_write_text("fast_ref.json",
                      "{\"version\": 1, \"host_device\": \"host\", \"targets\": {"
                      "\"ref\": {\"device\": \"host\", \"gflops\": 1e6, \"gbps\": 1e6,"
                      " \"launch_us\": 0.01},"
                      "\"cpu\": {\"device\": \"host\", \"gflops\": 1, \"gbps\": 1,"
                      " \"launch_us\": 100}},"
                      "\"devices\": {\"host\": {\"concurrency\": 2}}}");
  char args[1024];
  snprintf(args, sizeof args,
           "'%s' --policy auto --stages 1 --frames 10 --warmup 2 --profile fast_ref.json "
           "--no-refine",
           model("small_cnn.onnx"));
  vkp_test_run_t r = vkp_test_run_tool("vkpipe-bench", args);
  expect_ok(&r, "bench with a wrong profile");
  cr_assert(strstr(r.out, "stage0     ref"), "%s", r.out);
  cr_assert(strstr(r.out, "single cpu"), "the cheap cpu run was skipped:\n%s", r.out);
  cr_assert(strstr(r.out, "the frame rate of 'cpu' alone"), "%s", r.out);
  cr_assert(strstr(r.out, "stage stage0 on ref took"), "%s", r.out);
  vkp_test_run_free(&r);
  // --refine (the default) on a profile that prices convolutions a thousand
  // times too high: the estimates' cut runs first, every stage's measured
  // time goes back to the partitioner, and the plan kept is the one that
  // ran fastest of those tried.
  vkp_test_write_text("skewed.json",
                      "{\"version\": 1, \"host_device\": \"host\", \"targets\": {"
                      "\"cpu\": {\"device\": \"host\", \"gflops\": 16, \"gbps\": 8,"
                      " \"launch_us\": 0.5, \"kernels\": {\"conv_gemm\": 0.001,"
                      " \"conv_winograd\": 0.001, \"conv_pointwise\": 0.001,"
                      " \"conv_depthwise\": 0.001}}},"
                      "\"devices\": {\"host\": {\"concurrency\": 2}}}");
  snprintf(args, sizeof args,
           "'%s' --policy cpu --stages 2 --threads 1 --frames 20 --warmup 2 "
           "--profile skewed.json --no-single",
           model("small_cnn.onnx"));
  r = vkp_test_run_tool("vkpipe-bench", args);
  expect_ok(&r, "bench --refine");
  cr_assert(strstr(r.out, "refine: plan 1 (the estimates' cut) ran"), "%s", r.out);
  vkp_test_run_free(&r);
  strcat(args, " --json");
  cJSON *j = bench_json(args);
  const cJSON *tried = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(j, "refine"), "plans_fps");
  int32_t n = cJSON_GetArraySize(tried), kept = (int32_t)num(j, "refine.kept");
  cr_assert(n >= 1 && n <= 3 && kept >= 0 && kept < n, "%d plans, kept %d", n, kept);
  for (int32_t k = 0; k < n; ++k)
    cr_assert_geq(cJSON_GetArrayItem(tried, kept)->valuedouble,
                  cJSON_GetArrayItem(tried, k)->valuedouble);
  // The stage estimates of the plan kept: the profile's (over 100 ms), or
  // after a re-cut the measured ones (well under).
  double est = num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "stages"), 0),
                   "estimated_ms");
  cr_assert(kept == 0 ? est > 100.0 : est < 100.0, "kept %d, estimate %g ms", kept, est);
  cJSON_Delete(j);
  // Threads chosen by the latency rule over a configuration estimated
  // faster (one stage of two threads scaling 1.77x within 5% of two
  // one-thread stages): refine runs that one too and says which it kept.
  vkp_test_write_text("close.json",
                      "{\"version\": 1, \"host_device\": \"host\", \"targets\": {"
                      "\"cpu\": {\"device\": \"host\", \"gflops\": 16, \"gbps\": 8,"
                      " \"launch_us\": 0, \"thread_compute_eff\": 0.77,"
                      " \"thread_memory_eff\": 0.77, \"thread_split_us\": 0}},"
                      "\"devices\": {\"host\": {\"concurrency\": 2}}}");
  char close_args[1024];
  snprintf(close_args, sizeof close_args,
           "'%s' --policy cpu --cores 2 --frames 10 --warmup 2 --profile close.json "
           "--no-single",
           model("small_cnn.onnx"));
  r = vkp_test_run_tool("vkpipe-bench", close_args);
  expect_ok(&r, "bench with close configurations");
  cr_assert(strstr(r.out, "2 threads x 1 stage : ") &&
                strstr(r.out, "within 5% of the best throughput, lower latency"),
            "%s", r.out);
  const char *tried_alt =
      strstr(r.out, "refine: the estimates' fastest configuration (1 thread x 2 stages) ran ");
  cr_assert(tried_alt, "%s", r.out);
  bool replaced = strstr(tried_alt, "it replaces it (over 5% faster)") != NULL;
  cr_assert(replaced || strstr(tried_alt, "the chosen one stays (not 5% faster)"), "%s", r.out);
  // The plan run is the one kept.
  cr_assert(strstr(r.out, replaced ? "policy cpu, 2 stages" : "policy cpu, 1 stage"), "%s",
            r.out);
  vkp_test_run_free(&r);
  // --no-refine: none.
  strcat(args, " --no-refine");
  j = bench_json(args);
  cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "refine")));
  cJSON_Delete(j);
}

Test(e2e, bench_usage_errors, .timeout = 600) {
  static const char *const bad[] = {
      "", "--frames 0 --synthetic 'a:1ms'", "--synthetic 'a'", "--synthetic 'a:fast'",
      "--synthetic 'a:1ms' --depth 0", "--bogus", "x.json y.json",
      "--synthetic 'a:1ms' --stages -3", "m.onnx --refine 9", "m.onnx --refine x",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    vkp_test_run_t r = vkp_test_run_tool("vkpipe-bench", bad[i]);
    cr_assert_eq(r.code, 2, "'%s' exited %d: %s", bad[i], r.code, r.err);
    cr_assert_eq(vkp_test_count_lines(r.err), 1, "'%s': %s", bad[i], r.err);
    vkp_test_run_free(&r);
  }
  vkp_test_run_t r = vkp_test_run_tool("vkpipe-bench", "missing.onnx --frames 2");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "missing.onnx"), "%s", r.err);
  vkp_test_run_free(&r);
}
