// SPDX-License-Identifier: Apache-2.0
// tools/cmd_check.c, tools/cmd_run.c and tools/tool_*.c, end to end through
// the built `vkpipe` binary: the check summary, run outputs against NumPy on
// fresh random inputs, usage errors (exit 2, one line) and failures (exit 1
// with a clear message).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/test_cli.h"
#include "support/test_support.h"
#include "vkpipe/npy.h"

TestSuite(tools, .init = vkp_test_scratch_make, .fini = vkp_test_scratch_remove);

#define scratch vkp_test_scratch

static vkp_test_run_t run_tool(const char *args) {
  return vkp_test_run_tool("vkpipe", args);
}

static const char *example(void) {
  static char path[512];
  snprintf(path, sizeof path, "%s/examples/mlp.json", vkp_test_source_dir());
  return path;
}

// ---------------------------------------------------------------------------
// check

Test(tools, check_prints_summary, .timeout = 60) {
  char args[1024];
  snprintf(args, sizeof args, "check '%s'", example());
  vkp_test_run_t r = run_tool(args);
  cr_assert_eq(r.code, 0, "stderr: %s", r.err);
  cr_assert_str_empty(r.err);
  static const char *const expected[] = {
      "graph 'mlp' is valid\n",
      "inputs: 1\n  x        float32 [1, 64]\n",
      "outputs: 1\n  y        float32 [1, 10]\n",
      "nodes: 5\n",
      "  gemm             1\n",
      "  matmul           1\n",
      "  add              1\n",
      "  relu             1\n",
      "  softmax          1\n",
      "parameters: 2410 in 4 constants, 9640 bytes (9.4 KiB)\n",
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i)
    cr_assert(strstr(r.out, expected[i]), "summary lacks '%s':\n%s", expected[i],
              r.out);
  vkp_test_run_free(&r);
}

Test(tools, check_reports_invalid_model, .timeout = 60) {
  vkp_test_write_text("bad.json",
             "{\"format\": \"vkpipe-graph\", \"version\": 1, \"inputs\": "
             "[{\"name\": \"x\", \"dtype\": \"float32\", \"shape\": [2]}], "
             "\"nodes\": [{\"name\": \"n1\", \"op\": \"frobnicate\", \"inputs\": "
             "[\"x\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}");
  vkp_test_run_t r = run_tool("check bad.json");
  cr_assert_eq(r.code, 1);
  cr_assert_str_empty(r.out);
  cr_assert_eq(vkp_test_count_lines(r.err), 1, "stderr: %s", r.err);
  cr_assert(strstr(r.err, "vkpipe check: loading 'bad.json': node 'n1': unknown op "
                          "'frobnicate'"),
            "stderr: %s", r.err);
  vkp_test_run_free(&r);
  r = run_tool("check missing.json");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "cannot open 'missing.json'"), "stderr: %s", r.err);
  vkp_test_run_free(&r);
}

// ---------------------------------------------------------------------------
// run

static void load_npy(const char *rel, vkp_tensor_t *t) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", scratch, rel);
  VKP_TEST_OK(vkp_npy_read_file(path, t));
}

Test(tools, run_matches_numpy, .timeout = 60) {
  vkp_test_rng_t rng;
  cr_log_info("seed %llu", (unsigned long long)vkp_test_rng_init(&rng));
  int64_t shape[] = {1, 64};
  vkp_test_write_random_npy(&rng, "x.npy", 2, shape);
  char args[2048];
  snprintf(args, sizeof args, "run '%s' --input x=x.npy --output-dir out", example());
  vkp_test_run_t r = run_tool(args);
  cr_assert_eq(r.code, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "y: float32 [1, 10] -> out/y.npy"), "stdout: %s", r.out);
  vkp_test_run_free(&r);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && mkdir -p expected && /usr/bin/python3 "
           "'%s/tests/tools/reference.py' '%s' expected x=x.npy",
           scratch, vkp_test_source_dir(), example());
  cr_assert_eq(system(cmd), 0, "%s failed", cmd);
  vkp_tensor_t got, want;
  load_npy("out/y.npy", &got);
  load_npy("expected/y.npy", &want);
  char msg[512];
  cr_assert(vkp_test_allclose(&got, &want, 1e-5, 1e-6, msg, sizeof msg), "%s", msg);
  vkp_tensor_deinit(&got);
  vkp_tensor_deinit(&want);
}

Test(tools, run_accepts_compile_options, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t shape[] = {1, 64};
  vkp_test_write_random_npy(&rng, "in.npy", 2, shape);
  char args[2048];
  // A bare FILE is fine for a one-input graph; the ref target ignores the
  // options, and the dump directory is created up front.
  snprintf(args, sizeof args,
           "run '%s' --input=in.npy --output-dir=a/b --target ref --threads 2 "
           "--march x86-64 --dump-c dumps --dump-spirv dumps",
           example());
  vkp_test_run_t r = run_tool(args);
  cr_assert_eq(r.code, 0, "stderr: %s", r.err);
  vkp_test_run_free(&r);
  vkp_tensor_t got;
  load_npy("a/b/y.npy", &got);
  cr_assert_eq(got.shape[1], 10);
  vkp_tensor_deinit(&got);
  char path[512];
  snprintf(path, sizeof path, "%s/dumps", scratch);
  cr_assert_eq(access(path, F_OK), 0, "dump dir not created");
}

// $VKPIPE_CPU_NODE_TIMES: the cpu stage is compiled with every kernel call
// timed, and prints the kernels' times at unload, longest first, naming each
// kernel's main node and what fused into it; the results do not change.
Test(tools, cpu_node_times_profile, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t shape[] = {1, 64};
  vkp_test_write_random_npy(&rng, "in.npy", 2, shape);
  char args[2048];
  snprintf(args, sizeof args, "run '%s' --input=in.npy --output-dir=plain --target cpu",
           example());
  vkp_test_run_t plain = run_tool(args);
  cr_assert_eq(plain.code, 0, "stderr: %s", plain.err);
  cr_assert_null(strstr(plain.err, "time per kernel"), "%s", plain.err);
  vkp_test_run_free(&plain);
  snprintf(args, sizeof args, "run '%s' --input=in.npy --output-dir=timed --target cpu",
           example());
  cr_assert_eq(setenv("VKPIPE_CPU_NODE_TIMES", "1", 1), 0);
  vkp_test_run_t r = run_tool(args);
  unsetenv("VKPIPE_CPU_NODE_TIMES");
  cr_assert_eq(r.code, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.err, "cpu stage 'mlp': time per kernel over 1 runs"), "%s", r.err);
  cr_assert(strstr(r.err, "fc1 (gemm +1 fused)"), "%s", r.err);  // the relu
  cr_assert(strstr(r.err, "fc2 (matmul +1 fused)"), "%s", r.err);  // the bias add
  cr_assert(strstr(r.err, "probs (softmax)"), "%s", r.err);  // y
  cr_assert(strstr(r.err, "100.00  total of 3 kernels"), "%s", r.err);
  vkp_test_run_free(&r);
  vkp_tensor_t a, b;
  load_npy("plain/y.npy", &a);
  load_npy("timed/y.npy", &b);
  cr_assert_eq(memcmp(a.data, b.data, vkp_tensor_nbytes(&a)), 0);
  vkp_tensor_deinit(&a);
  vkp_tensor_deinit(&b);
}

// Every subcommand of ours has --help, exiting 0.
Test(tools, help, .timeout = 60) {
  static const char *const cmds[] = {"check --help", "run --help", "run -h", "--help"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; ++i) {
    vkp_test_run_t r = run_tool(cmds[i]);
    cr_assert_eq(r.code, 0, "%s", cmds[i]);
    cr_assert(strstr(r.out, "usage: vkpipe"), "%s: %s", cmds[i], r.out);
    vkp_test_run_free(&r);
  }
}

Test(tools, bad_usage_exits_2_with_one_line, .timeout = 60) {
  static const struct {
    const char *args, *needle;
  } cases[] = {
      {"check", "vkpipe check: missing MODEL (try 'vkpipe check --help')"},
      {"check a.json b.json", "unexpected argument 'b.json'"},
      {"check --verbose a.json", "unknown option '--verbose'"},
      {"run", "vkpipe run: missing MODEL"},
      {"run m.json --input x=x.npy", "missing --output-dir DIR"},
      {"run m.json --output-dir o --input", "--input needs a value"},
      {"run m.json --output-dir o --input =x.npy", "has an empty NAME"},
      {"run m.json --output-dir o --threads two", "--threads 'two' is not a number"},
      {"run m.json --output-dir o --threads 0", "--threads '0' is not a number"},
      {"run m.json --output-dir o --dump-c a --dump-spirv b", "same directory"},
      {"run m.json n.json --output-dir o", "unexpected argument 'n.json'"},
      {"run m.json --output-dir o --fast", "unknown option '--fast'"},
      {"frobnicate", "unknown command 'frobnicate'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    vkp_test_run_t r = run_tool(cases[i].args);
    cr_assert_eq(r.code, 2, "'%s' exited %d", cases[i].args, r.code);
    cr_assert_str_empty(r.out, "'%s' wrote to stdout", cases[i].args);
    cr_assert_eq(vkp_test_count_lines(r.err), 1, "'%s': stderr: %s", cases[i].args, r.err);
    cr_assert(strstr(r.err, cases[i].needle), "'%s': stderr '%s' lacks '%s'",
              cases[i].args, r.err, cases[i].needle);
    vkp_test_run_free(&r);
  }
}

Test(tools, run_failures_exit_1_with_clear_messages, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t good[] = {1, 64}, wrong[] = {1, 63};
  vkp_test_write_random_npy(&rng, "x.npy", 2, good);
  vkp_test_write_random_npy(&rng, "wrong.npy", 2, wrong);
  vkp_test_write_text("junk.npy", "this is not numpy");
  static const struct {
    const char *args, *needle;
  } cases[] = {
      {"run missing.json --input x=x.npy --output-dir o", "cannot open 'missing.json'"},
      {"run MODEL --input x=nothere.npy --output-dir o",
       "input 'x': cannot open 'nothere.npy'"},
      {"run MODEL --input x=wrong.npy --output-dir o",
       "input 'x': 'wrong.npy' holds float32 [1, 63]; the graph expects float32 [1, 64]"},
      {"run MODEL --input x=junk.npy --output-dir o",
       "input 'x': 'junk.npy': not a .npy file"},
      {"run MODEL --output-dir o", "input 'x' is not given (--input x=FILE.npy)"},
      {"run MODEL --input z=x.npy --output-dir o",
       "the graph has no input 'z' (its inputs: 'x')"},
      {"run MODEL --input x=x.npy --input x=x.npy --output-dir o", "input 'x' is given twice"},
      {"run MODEL --input x=x.npy --output-dir o --target nosuch", "unknown target 'nosuch'"},
      {"run MODEL --input x=x.npy --output-dir x.npy", "'x.npy' is not a directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char args[2048];
    const char *m = strstr(cases[i].args, "MODEL");
    if (m)
      snprintf(args, sizeof args, "%.*s'%s'%s", (int)(m - cases[i].args),
               cases[i].args, example(), m + 5);
    else
      snprintf(args, sizeof args, "%s", cases[i].args);
    vkp_test_run_t r = run_tool(args);
    cr_assert_eq(r.code, 1, "'%s' exited %d: %s", args, r.code, r.err);
    cr_assert(strstr(r.err, "vkpipe run: "), "'%s': %s", args, r.err);
    cr_assert(strstr(r.err, cases[i].needle), "'%s': stderr '%s' lacks '%s'", args,
              r.err, cases[i].needle);
    vkp_test_run_free(&r);
  }
}

// ---------------------------------------------------------------------------
// run --plan: inputs and outputs go by the pipeline's own (global) names,
// which here differ from the names of the stage values behind them.

Test(tools, run_plan_uses_the_pipeline_names, .timeout = 60) {
  vkp_test_write_text("front.json",
      "{\"format\": \"vkpipe-graph\", \"version\": 1, \"name\": \"front\",\n"
      " \"inputs\": [{\"name\": \"a\", \"dtype\": \"float32\", \"shape\": [1, 4]}],\n"
      " \"nodes\": [{\"name\": \"r\", \"op\": \"relu\", \"inputs\": [\"a\"], \"outputs\": [\"h\"]},\n"
      "           {\"name\": \"n\", \"op\": \"neg\", \"inputs\": [\"h\"], \"outputs\": [\"z\"]}],\n"
      " \"outputs\": [\"z\"]}\n");
  vkp_test_write_text("back.json",
      "{\"format\": \"vkpipe-graph\", \"version\": 1, \"name\": \"back\",\n"
      " \"inputs\": [{\"name\": \"zin\", \"dtype\": \"float32\", \"shape\": [1, 4]},\n"
      "            {\"name\": \"b\", \"dtype\": \"float32\", \"shape\": [1, 4]}],\n"
      " \"nodes\": [{\"name\": \"s\", \"op\": \"add\", \"inputs\": [\"zin\", \"b\"], \"outputs\": [\"y\"]}],\n"
      " \"outputs\": [\"y\"]}\n");
  vkp_test_write_text("plan.json",
      "{\"version\": 1, \"name\": \"renamed\", \"inputs\": [\"x_a\", \"x_b\"],\n"
      " \"outputs\": [\"out_y\", \"out_z\"],\n"
      " \"stages\": [{\"name\": \"front\", \"target\": \"ref\", \"graph\": \"front.json\"},\n"
      "            {\"name\": \"back\", \"target\": \"ref\", \"graph\": \"back.json\"}],\n"
      " \"bindings\": [\n"
      "  {\"from\": {\"global\": \"x_a\"}, \"to\": {\"stage\": \"front\", \"input\": \"a\"}},\n"
      "  {\"from\": {\"global\": \"x_b\"}, \"to\": {\"stage\": \"back\", \"input\": \"b\"}},\n"
      "  {\"from\": {\"stage\": \"front\", \"output\": \"z\"}, \"to\": {\"stage\": \"back\", \"input\": \"zin\"}},\n"
      "  {\"from\": {\"stage\": \"front\", \"output\": \"z\"}, \"to\": {\"global\": \"out_z\"}},\n"
      "  {\"from\": {\"stage\": \"back\", \"output\": \"y\"}, \"to\": {\"global\": \"out_y\"}}]}\n");
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  int64_t shape[] = {1, 4};
  vkp_test_write_random_npy(&rng, "a.npy", 2, shape);
  vkp_test_write_random_npy(&rng, "b.npy", 2, shape);
  vkp_test_run_t r = run_tool("run --plan plan.json --input x_a=a.npy --input x_b=b.npy "
                              "--output-dir out");
  cr_assert_eq(r.code, 0, "stderr: %s", r.err);
  cr_assert(strstr(r.out, "out_y: float32 [1, 4]"), "%s", r.out);
  vkp_test_run_free(&r);
  char path[600];
  vkp_tensor_t a, b, y, z;
  snprintf(path, sizeof path, "%s/a.npy", scratch);
  VKP_TEST_OK(vkp_npy_read_file(path, &a));
  snprintf(path, sizeof path, "%s/b.npy", scratch);
  VKP_TEST_OK(vkp_npy_read_file(path, &b));
  snprintf(path, sizeof path, "%s/out/out_y.npy", scratch);
  VKP_TEST_OK(vkp_npy_read_file(path, &y));
  snprintf(path, sizeof path, "%s/out/out_z.npy", scratch);
  VKP_TEST_OK(vkp_npy_read_file(path, &z));
  const float *fa = a.data, *fb = b.data, *fy = y.data, *fz = z.data;
  for (int i = 0; i < 4; ++i) {
    float want_z = -(fa[i] > 0 ? fa[i] : 0.0f);
    cr_assert_eq(fz[i], want_z, "z[%d] = %g, want %g", i, fz[i], want_z);
    cr_assert_eq(fy[i], want_z + fb[i], "y[%d] = %g, want %g", i, fy[i], want_z + fb[i]);
  }
  // The stage value's name is not the pipeline's.
  r = run_tool("run --plan plan.json --input a=a.npy --input x_b=b.npy --output-dir out");
  cr_assert_eq(r.code, 1);
  cr_assert(strstr(r.err, "no input 'a'") && strstr(r.err, "'x_a'"), "%s", r.err);
  vkp_test_run_free(&r);
  vkp_tensor_deinit(&a);
  vkp_tensor_deinit(&b);
  vkp_tensor_deinit(&y);
  vkp_tensor_deinit(&z);
}
