// SPDX-License-Identifier: Apache-2.0
// plan/plan_validate.c and plan/plan_json.c on hand-made plans: the
// Pipeline Executor RFC's mod1/mod2/mod3 example and every error path, each
// error naming its binding.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/plan.h"

static vkp_graph_t *module(const char *name, int32_t n_in, const char *const *ins,
                           vkp_dtype_t dtype, int64_t width, int32_t n_out,
                           const char *const *outs) {
  vkp_graph_t *g = g_new(name);
  int64_t s[] = {1, width};
  for (int32_t i = 0; i < n_in; ++i)
    g_in(g, ins[i], dtype, 2, s);
  // Each output is a sum of all inputs (or a relu of the only one).
  for (int32_t o = 0; o < n_out; ++o) {
    char node[64];
    snprintf(node, sizeof node, "%s_n%d", name, (int)o);
    if (n_in == 1) {
      const char *in[] = {ins[0]}, *out[] = {outs[o]};
      VKP_TEST_OK(vkp_graph_add_node(g, node, o ? VKP_OP_NEG : VKP_OP_RELU, 1, in,
                                     1, out, 0, NULL, NULL));
    } else {
      char acc[64];
      snprintf(acc, sizeof acc, "%s", ins[0]);
      for (int32_t i = 1; i < n_in; ++i) {
        char tmp[64], nn[64];
        snprintf(tmp, sizeof tmp, "%s_t%d_%d", name, (int)o, (int)i);
        snprintf(nn, sizeof nn, "%s_a%d_%d", name, (int)o, (int)i);
        const char *in[] = {acc, ins[i]}, *out[] = {i + 1 == n_in ? outs[o] : tmp};
        VKP_TEST_OK(vkp_graph_add_node(g, nn, VKP_OP_ADD, 2, in, 1, out, 0, NULL, NULL));
        snprintf(acc, sizeof acc, "%s", tmp);
      }
    }
    g_out(g, outs[o]);
  }
  g_validate(g);
  return g;
}

// mod1(data_0) -> out0, out1; mod2(m2_in <- mod1.out0, m2_b <- global data_b)
// -> m2_out; mod3(m3_a <- mod1.out1, m3_b <- mod2.m2_out, m3_c <- mod1.out1)
// -> m3_out -> global "out". mod1.out1 feeds two inputs of mod3.
static vkp_plan_t *rfc_plan(int64_t mod2_width, vkp_dtype_t mod2_dtype) {
  const char *i1[] = {"data_0"}, *o1[] = {"out0", "out1"};
  const char *i2[] = {"m2_in", "m2_b"}, *o2[] = {"m2_out"};
  const char *i3[] = {"m3_a", "m3_b", "m3_c"}, *o3[] = {"m3_out"};
  vkp_plan_t *p;
  VKP_TEST_OK(vkp_plan_create("rfc", &p));
  VKP_TEST_OK(vkp_plan_add_stage(p, "mod1", "cpu",
                                 module("mod1", 1, i1, VKP_DTYPE_FLOAT32, 8, 2, o1), NULL));
  VKP_TEST_OK(vkp_plan_add_stage(p, "mod2", "vulkan",
                                 module("mod2", 2, i2, mod2_dtype, mod2_width, 1, o2), NULL));
  VKP_TEST_OK(vkp_plan_add_stage(p, "mod3", "cpu",
                                 module("mod3", 3, i3, VKP_DTYPE_FLOAT32, 8, 1, o3), NULL));
  VKP_TEST_OK(vkp_plan_add_global_input(p, "data_a"));
  VKP_TEST_OK(vkp_plan_add_global_input(p, "data_b"));
  VKP_TEST_OK(vkp_plan_add_global_output(p, "out"));
  VKP_TEST_OK(vkp_plan_bind(p, VKP_PLAN_GLOBAL, "data_a", 0, "data_0"));
  VKP_TEST_OK(vkp_plan_bind(p, VKP_PLAN_GLOBAL, "data_b", 1, "m2_b"));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out0", 1, "m2_in"));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out1", 2, "m3_a"));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out1", 2, "m3_c"));
  VKP_TEST_OK(vkp_plan_bind(p, 1, "m2_out", 2, "m3_b"));
  VKP_TEST_OK(vkp_plan_bind(p, 2, "m3_out", VKP_PLAN_GLOBAL, "out"));
  return p;
}

// Validates and checks the error holds every needle and `count` problems.
static void expect_problems(vkp_plan_t *p, int count, const char *const *needles,
                            int n_needles) {
  vkp_status_t st = vkp_plan_validate(p);
  cr_assert(st, "plan validated but should not");
  const char *m = vkp_status_message(st);
  char want[32];
  snprintf(want, sizeof want, "has %d problem%s", count, count == 1 ? "" : "s");
  cr_assert(strstr(m, want), "expected '%s' in:\n%s", want, m);
  for (int i = 0; i < n_needles; ++i)
    cr_assert(strstr(m, needles[i]), "expected '%s' in:\n%s", needles[i], m);
  vkp_status_free(st);
  vkp_plan_destroy(p);
}

#define EXPECT(p, count, ...)                                              \
  do {                                                                     \
    const char *const needles_[] = {__VA_ARGS__};                          \
    expect_problems(p, count, needles_, sizeof needles_ / sizeof needles_[0]); \
  } while (0)

Test(plan_validate, rfc_example_is_valid, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  VKP_TEST_OK(vkp_plan_validate(p));
  vkp_plan_destroy(p);
}

Test(plan_validate, self_binding, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  VKP_TEST_OK(vkp_plan_bind(p, 1, "m2_out", 1, "m2_in"));
  EXPECT(p, 1, "binding mod2.m2_out -> mod2.m2_in: a stage cannot bind to itself");
}

Test(plan_validate, cycle, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  // mod3 -> mod1 closes mod1 -> mod3 -> mod1 (and binds data_0 twice).
  VKP_TEST_OK(vkp_plan_bind(p, 2, "m3_out", 0, "data_0"));
  EXPECT(p, 2, "binding mod3.m3_out -> mod1.data_0: makes a cycle (mod1 -> ",
         "stage 'mod1' input 'data_0' is bound more than once");
}

Test(plan_validate, output_bound_to_global_input, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  VKP_TEST_OK(vkp_plan_bind(p, 2, "m3_out", VKP_PLAN_GLOBAL, "data_a"));
  EXPECT(p, 1, "binding mod3.m3_out -> global.data_a: output bound to global input 'data_a'");
}

Test(plan_validate, global_output_as_source, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  VKP_TEST_OK(vkp_plan_bind(p, VKP_PLAN_GLOBAL, "out", 1, "m2_b"));
  EXPECT(p, 2, "binding global.out -> mod2.m2_b: global output 'out' used as a source",
         "stage 'mod2' input 'm2_b' is bound more than once");
}

Test(plan_validate, input_unbound_and_bound_twice, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  // Rebind data_b's binding onto m2_in, which is then bound twice; m2_b is
  // left unbound.
  vkp__free(p->bindings[1].dst_name);
  p->bindings[1].dst_name = vkp__strdup("m2_in");
  cr_assert(p->bindings[1].dst_name);
  EXPECT(p, 2, "stage 'mod2' input 'm2_b' is not bound",
         "stage 'mod2' input 'm2_in' is bound more than once");
}

Test(plan_validate, unknown_names, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  VKP_TEST_OK(vkp_plan_bind(p, 0, "nope", 1, "m2_in"));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out0", 1, "missing"));
  VKP_TEST_OK(vkp_plan_bind(p, VKP_PLAN_GLOBAL, "ghost", 2, "m3_a"));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out0", 7, "x"));
  VKP_TEST_OK(vkp_plan_bind(p, 2, "m3_out", VKP_PLAN_GLOBAL, "nowhere"));
  EXPECT(p, 7, "binding mod1.nope -> mod2.m2_in: stage 'mod1' has no output 'nope'",
         "binding mod1.out0 -> mod2.missing: stage 'mod2' has no input 'missing'",
         "binding global.ghost -> mod3.m3_a: unknown global input 'ghost'",
         "unknown destination stage 7",
         "unknown global output 'nowhere'",
         "stage 'mod3' input 'm3_a' is bound more than once",
         "stage 'mod2' input 'm2_in' is bound more than once");
}

Test(plan_validate, shape_and_dtype_mismatch, .timeout = 10) {
  vkp_plan_t *p = rfc_plan(4, VKP_DTYPE_FLOAT32);
  EXPECT(p, 2, "binding mod1.out0 -> mod2.m2_in: type mismatch: float32 [1, 8] vs float32 [1, 4]",
         "binding mod2.m2_out -> mod3.m3_b: type mismatch");
  p = rfc_plan(8, VKP_DTYPE_INT32);
  EXPECT(p, 2, "binding mod1.out0 -> mod2.m2_in: type mismatch: float32 [1, 8] vs int32 [1, 8]");
}

// ---------------------------------------------------------------------------
// The same example as files: mod1/mod2/mod3 subgraph files and a plan.

static char dir[512];

static void write_text(const char *name, const char *text) {
  char path[700];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static void write_modules(void) {
  snprintf(dir, sizeof dir, "%s/plan_rfc_%d", vkp_test_binary_dir(), (int)getpid());
  mkdir(dir, 0755);
  vkp_plan_t *p = rfc_plan(8, VKP_DTYPE_FLOAT32);
  for (int32_t s = 0; s < p->n_stages; ++s) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s.json", dir, p->stages[s].name);
    VKP_TEST_OK(vkp_graph_save(p->stages[s].graph, path));
  }
  vkp_plan_destroy(p);
}

static const char rfc_json_head[] =
    "{\"version\": 1, \"name\": \"rfc\", \"inputs\": [\"data_a\", \"data_b\"],"
    " \"outputs\": [\"out\"], \"stages\": ["
    "  {\"name\": \"mod1\", \"target\": \"cpu\", \"graph\": \"mod1.json\"},"
    "  {\"name\": \"mod2\", \"target\": \"vulkan\", \"graph\": \"mod2.json\"},"
    "  {\"name\": \"mod3\", \"target\": \"cpu\", \"graph\": \"mod3.json\"}],"
    " \"bindings\": ["
    "  {\"from\": {\"global\": \"data_a\"}, \"to\": {\"stage\": \"mod1\", \"input\": \"data_0\"}},"
    "  {\"from\": {\"global\": \"data_b\"}, \"to\": {\"stage\": \"mod2\", \"input\": \"m2_b\"}},"
    "  {\"from\": {\"stage\": \"mod1\", \"output\": \"out0\"}, \"to\": {\"stage\": \"mod2\", \"input\": \"m2_in\"}},"
    "  {\"from\": {\"stage\": \"mod1\", \"output\": \"out1\"}, \"to\": {\"stage\": \"mod3\", \"input\": \"m3_a\"}},"
    "  {\"from\": {\"stage\": \"mod1\", \"output\": \"out1\"}, \"to\": {\"stage\": \"mod3\", \"input\": \"m3_c\"}},"
    "  {\"from\": {\"stage\": \"mod2\", \"output\": \"m2_out\"}, \"to\": {\"stage\": \"mod3\", \"input\": \"m3_b\"}}";

static void remove_dir(void) {
  const char *names[] = {"mod1.json", "mod1.bin", "mod2.json", "mod2.bin",
                         "mod3.json", "mod3.bin", "plan.json", "again.json"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    remove(path);
  }
  rmdir(dir);
}

Test(plan_files, rfc_modules_from_files, .timeout = 10) {
  write_modules();
  char json[4096];
  snprintf(json, sizeof json, "%s,"
           "  {\"from\": {\"stage\": \"mod3\", \"output\": \"m3_out\"}, \"to\": {\"global\": \"out\"}}]}",
           rfc_json_head);
  write_text("plan.json", json);
  char path[700];
  snprintf(path, sizeof path, "%s/plan.json", dir);
  vkp_plan_t *p;
  VKP_TEST_OK(vkp_plan_load(path, NULL, &p));
  cr_assert_eq(p->n_stages, 3);
  cr_assert_str_eq(p->stages[1].target, "vulkan");
  cr_assert_str_eq(p->stages[1].graph_file, "mod2.json");
  cr_assert_eq(p->n_bindings, 7);
  // Saved and loaded again, the plan is the same text.
  char *first, *second;
  VKP_TEST_OK(vkp_plan_to_json(p, &first));
  snprintf(path, sizeof path, "%s/again.json", dir);
  VKP_TEST_OK(vkp_plan_save(p, path));
  vkp_plan_t *q;
  VKP_TEST_OK(vkp_plan_load(path, NULL, &q));
  VKP_TEST_OK(vkp_plan_to_json(q, &second));
  cr_assert_str_eq(first, second);
  vkp_free(first);
  vkp_free(second);
  vkp_plan_destroy(q);
  vkp_plan_destroy(p);
  remove_dir();
}

Test(plan_files, problems_name_bindings, .timeout = 10) {
  write_modules();
  char json[4096];
  // mod3's output goes to an unknown stage and to a global input; the global
  // output is never bound.
  snprintf(json, sizeof json, "%s,"
           "  {\"from\": {\"stage\": \"mod3\", \"output\": \"m3_out\"}, \"to\": {\"stage\": \"mod9\", \"input\": \"z\"}},"
           "  {\"from\": {\"stage\": \"mod3\", \"output\": \"m3_out\"}, \"to\": {\"global\": \"data_b\"}}]}",
           rfc_json_head);
  write_text("plan.json", json);
  char path[700];
  snprintf(path, sizeof path, "%s/plan.json", dir);
  vkp_plan_t *p = NULL;
  vkp_status_t st = vkp_plan_load(path, NULL, &p);
  cr_assert(st);
  const char *m = vkp_status_message(st);
  cr_assert(strstr(m, "binding mod3.m3_out -> mod9.z: unknown stage 'mod9'"), "%s", m);
  cr_assert(strstr(m, "binding mod3.m3_out -> global.data_b: output bound to global input 'data_b'"), "%s", m);
  cr_assert(strstr(m, "global output 'out' is not bound"), "%s", m);
  vkp_status_free(st);
  cr_assert_null(p);
  // Structural errors.
  const char *bad[][2] = {
      {"{\"version\": 1, \"stages\": [{\"name\": \"a\", \"target\": \"cpu\"}], \"bindings\": []}",
       "exactly one of"},
      {"{\"version\": 2}", "version"},
      {"{\"version\": 1, \"stages\": [{\"name\": \"a\", \"target\": \"cpu\", \"graph\": \"nope.json\"}], \"bindings\": []}",
       "stage 'a': loading its graph"},
      {"{\"version\": 1, \"stages\": [{\"name\": \"a\", \"target\": \"cpu\", \"nodes\": [\"n\"]}], \"bindings\": []}",
       "no \"source\" model"},
      {"{\"version\": 1, \"stages\": [], \"bindings\": [{\"from\": {\"stage\": \"a\"}, \"to\": {\"global\": \"y\"}}]}",
       "bindings[0].from: missing \"output\""},
      {"not json", "not valid JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    st = vkp_plan_from_json(bad[i][0], strlen(bad[i][0]), dir, NULL, &p);
    cr_assert(st, "case %zu passed", i);
    cr_assert(strstr(vkp_status_message(st), bad[i][1]), "case %zu: %s", i,
              vkp_status_message(st));
    vkp_status_free(st);
    cr_assert_null(p);
  }
  remove_dir();
}

Test(plan_validate, one_problem_per_cycle, .timeout = 10) {
  vkp_plan_t *p;
  VKP_TEST_OK(vkp_plan_create("cycles", &p));
  const char *names[] = {"a", "b", "c", "d"};
  const char *in[] = {"in"}, *out[] = {"out"};
  for (int i = 0; i < 4; ++i)
    VKP_TEST_OK(vkp_plan_add_stage(p, names[i], "cpu",
                                   module(names[i], 1, in, VKP_DTYPE_FLOAT32, 4, 1, out),
                                   NULL));
  VKP_TEST_OK(vkp_plan_bind(p, 0, "out", 1, "in"));
  VKP_TEST_OK(vkp_plan_bind(p, 1, "out", 0, "in"));
  VKP_TEST_OK(vkp_plan_bind(p, 2, "out", 3, "in"));
  VKP_TEST_OK(vkp_plan_bind(p, 3, "out", 2, "in"));
  EXPECT(p, 2, "binding b.out -> a.in: makes a cycle (a -> b -> a)",
         "binding d.out -> c.in: makes a cycle (c -> d -> c)");
}
