// SPDX-License-Identifier: Apache-2.0
// runtime/cpu/compile.c: the compile cache, the missing-compiler error, and
// running a built stage with no compiler at all.
#include <sys/stat.h>

#include "support/cpu_check.h"
#include "runtime/cpu/compile.h"
#include "runtime/cpu/target_cpu.h"

static vkp_graph_t *small_graph(vkp_test_rng_t *rng) {
  vkp_graph_t *g = g_new("small");
  int64_t xs[] = {3, 8}, ws[] = {8, 5};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_const(g, rng, "w", 2, ws, -1, 1);
  g_node(g, "fc", VKP_OP_MATMUL, "x,w", "h", 0, NULL);
  g_node(g, "act", VKP_OP_TANH, "h", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  return g;
}

static const vkp_target_t *cpu_target(vkp_registry_t **reg) {
  VKP_TEST_OK(vkp_registry_create_default(reg));
  const vkp_target_t *cpu;
  VKP_TEST_OK(vkp_registry_lookup(*reg, "cpu", &cpu));
  return cpu;
}

Test(cpu_compile, cache_hit_on_second_build, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = small_graph(&rng);
  vkp_registry_t *reg;
  const vkp_target_t *cpu = cpu_target(&reg);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir};
  uint64_t h0, m0, h1, m1, h2, m2;
  vkp_cpu_compile_stats(&h0, &m0);
  vkp_blob_t a = {0}, b = {0}, c = {0};
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &opt, &a));
  vkp_cpu_compile_stats(&h1, &m1);
  cr_assert_eq(m1, m0 + 1, "first build runs the compiler");
  cr_assert_eq(h1, h0);
  const vkp_cpu_blob_header_t *ha = a.data;
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.so", dir, ha->key);
  struct stat st1, st2;
  cr_assert_eq(stat(path, &st1), 0, "cache file %s exists", path);
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &opt, &b));
  vkp_cpu_compile_stats(&h2, &m2);
  cr_assert_eq(h2, h1 + 1, "second build is a cache hit");
  cr_assert_eq(m2, m1, "second build does not run the compiler");
  cr_assert_eq(stat(path, &st2), 0);
  cr_assert_eq(st1.st_mtim.tv_sec, st2.st_mtim.tv_sec);
  cr_assert_eq(st1.st_mtim.tv_nsec, st2.st_mtim.tv_nsec);
  cr_assert_eq(a.size, b.size);
  cr_assert(memcmp(a.data, b.data, a.size) == 0);
  // Another -march is another object.
  vkp_compile_options_t other = {.cache_dir = dir, .march = "x86-64"};
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &other, &c));
  cr_assert_str_neq(((const vkp_cpu_blob_header_t *)c.data)->key, ha->key);
  vkp_blob_deinit(&a);
  vkp_blob_deinit(&b);
  vkp_blob_deinit(&c);
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(cpu_compile, missing_compiler_is_a_clear_error, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = small_graph(&rng);
  vkp_registry_t *reg;
  const vkp_target_t *cpu = cpu_target(&reg);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir};
  setenv("CC", "/nonexistent/cc", 1);
  vkp_blob_t blob = {0};
  vkp_status_t st = cpu->vtable->compiler.compile(cpu, g, &opt, &blob);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNAVAILABLE), "got: %s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "needs a C compiler") != NULL, "%s",
            vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "/nonexistent/cc") != NULL);
  vkp_status_free(st);
  unsetenv("CC");
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

// A blob built earlier runs where no compiler exists.
Test(cpu_compile, load_and_run_need_no_compiler, .timeout = 60) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = small_graph(&rng);
  vkp_registry_t *reg;
  const vkp_target_t *cpu = cpu_target(&reg);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir};
  vkp_blob_t blob = {0};
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &opt, &blob));
  cpu_test_remove_dir(dir);  // no cache either
  setenv("CC", "/nonexistent/cc", 1);
  setenv("PATH", "/nonexistent", 1);
  vkp_stage_t *stage;
  VKP_TEST_OK(cpu->vtable->stage.load(cpu, g, blob.data, blob.size, &stage));
  vkp_tensor_t in, out;
  int64_t xs[] = {3, 8}, ys[] = {3, 5};
  VKP_TEST_OK(vkp_tensor_init(&in, VKP_DTYPE_FLOAT32, 2, xs));
  VKP_TEST_OK(vkp_tensor_init(&out, VKP_DTYPE_FLOAT32, 2, ys));
  vkp_test_fill_uniform(&rng, &in, -1, 1);
  for (int rep = 0; rep < 2; ++rep) VKP_TEST_OK(cpu->vtable->stage.run(stage, &in, &out));
  double *want[1];
  cr_assert(vkp_test_ref_eval(g, &in, want));
  for (int i = 0; i < 15; ++i)
    cr_assert(fabs(((float *)out.data)[i] - want[0][i]) < 1e-5, "seed %llu",
              (unsigned long long)seed);
  free(want[0]);
  // A wrong-size tensor is refused, not written.
  vkp_tensor_t small;
  VKP_TEST_OK(vkp_tensor_init(&small, VKP_DTYPE_FLOAT32, 2, (const int64_t[]){3, 4}));
  vkp_status_t st = cpu->vtable->stage.run(stage, &in, &small);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  vkp_status_free(st);
  vkp_tensor_deinit(&small);
  cpu->vtable->stage.unload(stage);
  vkp_tensor_deinit(&in);
  vkp_tensor_deinit(&out);
  vkp_blob_deinit(&blob);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

Test(cpu_compile, damaged_blobs_are_refused, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = small_graph(&rng);
  vkp_registry_t *reg;
  const vkp_target_t *cpu = cpu_target(&reg);
  char *dir = cpu_test_cache_dir();
  vkp_compile_options_t opt = {.cache_dir = dir, .dump_dir = dir};
  vkp_blob_t blob = {0};
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &opt, &blob));
  char path[1024];
  snprintf(path, sizeof path, "%s/small.c", dir);
  size_t dumped = 0;
  char *src = vkp_test_read_file(path, &dumped);
  cr_assert(src && dumped > 0, "--dump-c wrote %s", path);
  cr_assert(strstr(src, "node_fc") != NULL);
  free(src);
  size_t cuts[] = {0, 10, sizeof(vkp_cpu_blob_header_t), blob.size - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
    vkp_stage_t *stage = NULL;
    vkp_status_t st = cpu->vtable->stage.load(cpu, g, blob.data, cuts[i], &stage);
    cr_assert(st != NULL && stage == NULL, "blob cut at %zu must be refused", cuts[i]);
    vkp_status_free(st);
  }
  ((unsigned char *)blob.data)[0] ^= 0xff;
  vkp_stage_t *stage = NULL;
  vkp_status_t st = cpu->vtable->stage.load(cpu, g, blob.data, blob.size, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_DATA_LOSS));
  vkp_status_free(st);
  vkp_blob_deinit(&blob);
  cpu_test_remove_dir(dir);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
