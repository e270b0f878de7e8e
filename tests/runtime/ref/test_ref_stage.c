// SPDX-License-Identifier: Apache-2.0
// runtime/ref/ref.c beyond single ops: multi-node graphs through the memory
// plan (intermediates shared, outputs also consumed, inputs and constants
// listed as outputs), stage reuse, no allocation per run, the blob check,
// allocation failures at every step, supports() reasons, and integer
// division edge cases.
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ref/ref.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

enum { M = 4, K = 6, N = 5 };

// The random seed of the running test (each Criterion test is its own
// process), quoted in failure messages: VKPIPE_TEST_SEED=<seed> reproduces.
static uint64_t test_seed;

static const vkp_target_t *ref_target(vkp_registry_t **reg) {
  VKP_TEST_OK(vkp_registry_create(reg));
  VKP_TEST_OK(vkp_target_ref_register(*reg));
  const vkp_target_t *t = NULL;
  VKP_TEST_OK(vkp_registry_lookup(*reg, "ref", &t));
  return t;
}

// x[M,K] @ w[K,N] + b[N] = z; h = relu(z); s = softmax(h); r = sum of
// transpose(z) over its axis 1. Outputs: s, h (also read by softmax), r, x (a
// graph input) and b (a constant).
static vkp_graph_t *make_net(const float *w, const float *b, int64_t rows) {
  vkp_graph_t *g = g_new("net");
  int64_t xs[] = {rows, K}, ws[] = {K, N}, bs[] = {N};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, xs);
  g_const_data(g, "w", VKP_DTYPE_FLOAT32, 2, ws, w);
  g_const_data(g, "b", VKP_DTYPE_FLOAT32, 1, bs, b);
  g_node(g, "fc", VKP_OP_MATMUL, "x,w", "mm", 0, NULL);
  g_node(g, "bias", VKP_OP_ADD, "mm,b", "z", 0, NULL);
  g_node(g, "act", VKP_OP_RELU, "z", "h", 0, NULL);
  g_node(g, "sm", VKP_OP_SOFTMAX, "h", "s", 0, NULL);
  g_node(g, "tr", VKP_OP_TRANSPOSE, "z", "t", 0, NULL);
  int64_t axes[] = {1};
  vkp_attr_t red[] = {{.name = "axes", .kind = VKP_ATTR_INTS, .ints = axes, .count = 1},
                      {.name = "keepdims", .kind = VKP_ATTR_INT, .i = 0}};
  g_node(g, "rs", VKP_OP_REDUCE_SUM, "t", "r", 2, red);
  const char *outs[] = {"s", "h", "r", "x", "b"};
  for (int i = 0; i < 5; ++i) g_out(g, outs[i]);
  g_validate(g);
  return g;
}

// The same network computed directly, in double.
static void expect_net(const float *x, const float *w, const float *b,
                       float s[M][N], float h[M][N], float r[N]) {
  double z[M][N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int p = 0; p < K; ++p) acc += (double)x[i * K + p] * w[p * N + j];
      // Tensors between nodes are float32.
      z[i][j] = (float)((double)(float)acc + b[j]);
      h[i][j] = (float)(z[i][j] > 0 ? z[i][j] : 0);
    }
  for (int i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < N; ++j) mx = h[i][j] > mx ? h[i][j] : mx;
    for (int j = 0; j < N; ++j) sum += exp(h[i][j] - mx);
    for (int j = 0; j < N; ++j) s[i][j] = (float)(exp(h[i][j] - mx) / sum);
  }
  for (int j = 0; j < N; ++j) {
    double acc = 0;
    for (int i = 0; i < M; ++i) acc += z[i][j];
    r[j] = (float)acc;
  }
}

static void check_close(const float *got, const float *want, int n, const char *what) {
  for (int i = 0; i < n; ++i)
    cr_assert(fabsf(got[i] - want[i]) <= 1e-6f + 1e-5f * fabsf(want[i]),
              "%s[%d]: %.9g vs %.9g (VKPIPE_TEST_SEED=%llu)", what, i, got[i],
              want[i], (unsigned long long)test_seed);
}

static void check_net_outputs(const vkp_tensor_t *outs, const float *x,
                              const float *w, const float *b) {
  float s[M][N], h[M][N], r[N];
  expect_net(x, w, b, s, h, r);
  check_close(outs[0].data, &s[0][0], M * N, "s");
  check_close(outs[1].data, &h[0][0], M * N, "h");
  check_close(outs[2].data, r, N, "r");
  cr_assert(memcmp(outs[3].data, x, sizeof(float) * M * K) == 0, "x passed through");
  cr_assert(memcmp(outs[4].data, b, sizeof(float) * N) == 0, "b passed through");
}

Test(ref_stage, multi_node_graph, .timeout = 60) {
  vkp_test_rng_t rng;
  test_seed = vkp_test_rng_init(&rng);
  float w[K * N], b[N], x[M * K];
  for (int i = 0; i < K * N; ++i) w[i] = vkp_test_rng_uniform(&rng, -1, 1);
  for (int i = 0; i < N; ++i) b[i] = vkp_test_rng_uniform(&rng, -1, 1);
  for (int i = 0; i < M * K; ++i) x[i] = vkp_test_rng_uniform(&rng, -1, 1);
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M);
  vkp_tensor_t in, outs[5];
  int64_t xs[] = {M, K};
  VKP_TEST_OK(vkp_tensor_init_view(&in, VKP_DTYPE_FLOAT32, 2, xs, x));
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &in, outs));
  check_net_outputs(outs, x, w, b);
  for (int i = 0; i < 5; ++i) vkp_tensor_deinit(&outs[i]);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// One loaded stage run several times with fresh inputs: no state leaks from
// one run into the next, and a run allocates nothing.
Test(ref_stage, reuse_without_allocating, .timeout = 60) {
  vkp_test_rng_t rng;
  test_seed = vkp_test_rng_init(&rng);
  float w[K * N], b[N], x[M * K];
  for (int i = 0; i < K * N; ++i) w[i] = vkp_test_rng_uniform(&rng, -1, 1);
  for (int i = 0; i < N; ++i) b[i] = vkp_test_rng_uniform(&rng, -1, 1);
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M);
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  VKP_TEST_OK(ref->vtable->compiler.compile(ref, g, NULL, &blob));
  VKP_TEST_OK(ref->vtable->stage.load(ref, g, blob.data, blob.size, &stage));
  vkp_tensor_t in, outs[5];
  int64_t xs[] = {M, K};
  VKP_TEST_OK(vkp_tensor_init_view(&in, VKP_DTYPE_FLOAT32, 2, xs, x));
  for (int i = 0; i < 5; ++i) {
    const vkp_value_t *v = &g->values[g->outputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&outs[i], v->dtype, v->rank, v->shape));
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < M * K; ++i) x[i] = vkp_test_rng_uniform(&rng, -2, 2);
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, 0);
    vkp_status_t st = ref->vtable->stage.run(stage, &in, outs);
    vkp_test_counting_alloc_uninstall();
    VKP_TEST_OK(st);
    cr_assert_eq(counter.count, 0, "run allocated %lld times", (long long)counter.count);
    check_net_outputs(outs, x, w, b);
  }
  // Wrong shapes are refused with a message, not run.
  vkp_tensor_t bad;
  int64_t bad_shape[] = {M + 1, K};
  VKP_TEST_OK(vkp_tensor_init(&bad, VKP_DTYPE_FLOAT32, 2, bad_shape));
  vkp_status_t st = ref->vtable->stage.run(stage, &bad, outs);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "input 'x'"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_tensor_deinit(&bad);
  for (int i = 0; i < 5; ++i) vkp_tensor_deinit(&outs[i]);
  ref->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

Test(ref_stage, blob_is_checked, .timeout = 60) {
  float w[K * N] = {0}, b[N] = {0};
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M), *other = make_net(w, b, M + 1);
  vkp_blob_t blob = {0};
  vkp_stage_t *stage = NULL;
  VKP_TEST_OK(ref->vtable->compiler.compile(ref, g, NULL, &blob));
  cr_assert_eq(memcmp(blob.data, VKP_REF_BLOB_MAGIC, 8), 0);

  vkp_status_t st = ref->vtable->stage.load(ref, other, blob.data, blob.size, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  cr_assert_null(stage);
  vkp_status_free(st);

  st = ref->vtable->stage.load(ref, g, blob.data, 3, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_DATA_LOSS), "%s", vkp_status_message(st));
  vkp_status_free(st);
  st = ref->vtable->stage.load(ref, g, NULL, 0, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_DATA_LOSS), "%s", vkp_status_message(st));
  vkp_status_free(st);

  unsigned char *bytes = blob.data;
  bytes[8] ^= 0x7f;  // version
  st = ref->vtable->stage.load(ref, g, blob.data, blob.size, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  vkp_status_free(st);
  bytes[8] ^= 0x7f;
  bytes[0] = 'X';  // magic
  st = ref->vtable->stage.load(ref, g, blob.data, blob.size, &stage);
  cr_assert(vkp_status_is(st, VKP_STATUS_DATA_LOSS), "%s", vkp_status_message(st));
  vkp_status_free(st);
  cr_assert_null(stage);

  vkp_blob_deinit(&blob);
  vkp_graph_destroy(other);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// Fails every allocation of compile + load + run in turn: each failure is a
// clean OUT_OF_MEMORY status with nothing leaked.
Test(ref_stage, allocation_failures, .timeout = 60) {
  float w[K * N] = {0}, b[N] = {0}, x[M * K] = {0};
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M);
  vkp_tensor_t in;
  int64_t xs[] = {M, K};
  VKP_TEST_OK(vkp_tensor_init_view(&in, VKP_DTYPE_FLOAT32, 2, xs, x));
  bool done = false;
  for (int64_t fail_at = 1; !done && fail_at < 1000; ++fail_at) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail_at);
    vkp_tensor_t outs[5];
    vkp_status_t st = vkp_target_run_graph(ref, g, NULL, &in, outs);
    if (!st)
      for (int i = 0; i < 5; ++i) vkp_tensor_deinit(&outs[i]);
    bool oom = vkp_status_is(st, VKP_STATUS_OUT_OF_MEMORY);
    vkp_status_free(st);
    vkp_test_counting_alloc_uninstall();
    cr_assert(!st || oom, "allocation %lld failed with a non-OOM status",
              (long long)fail_at);
    cr_assert_eq(counter.live, 0, "allocation %lld failing leaked %lld blocks",
                 (long long)fail_at, (long long)counter.live);
    done = !counter.failed;
  }
  cr_assert(done);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// ref runs every op on every dtype the op table admits; only an op outside
// the table is refused, with a reason.
Test(ref_stage, supports_reasons, .timeout = 60) {
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_value_t values[3] = {
      {.name = "a", .dtype = VKP_DTYPE_FLOAT16, .rank = 1, .shape = {4}},
      {.name = "b", .dtype = VKP_DTYPE_FLOAT16, .rank = 1, .shape = {4}},
      {.name = "c", .dtype = VKP_DTYPE_FLOAT16, .rank = 1, .shape = {4}}};
  int32_t ins[] = {0, 1}, outs[] = {2};
  vkp_node_t node = {.name = "n", .op = VKP_OP_ADD, .n_inputs = 2, .inputs = ins,
                     .n_outputs = 1, .outputs = outs};
  vkp_graph_t g = {.name = "g", .n_values = 3, .values = values, .n_nodes = 1,
                   .nodes = &node};
  char reason[256] = "";
  cr_assert(ref->vtable->compiler.supports(ref, &g, &node, reason, sizeof reason));
  node.op = VKP_OP_COUNT;
  cr_assert_not(ref->vtable->compiler.supports(ref, &g, &node, reason, sizeof reason));
  cr_assert(strstr(reason, "unknown op"), "%s", reason);
  vkp_registry_destroy(reg);
}

static vkp_status_t run_int_div(vkp_dtype_t dt, const void *a, const void *b,
                                int64_t n, vkp_tensor_t *out) {
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = g_new("div");
  int64_t shape[] = {n};
  g_in(g, "a", dt, 1, shape);
  g_in(g, "b", dt, 1, shape);
  g_node(g, "d", VKP_OP_DIV, "a,b", "q", 0, NULL);
  g_out(g, "q");
  g_validate(g);
  vkp_tensor_t ta, tb;
  VKP_TEST_OK(vkp_tensor_init_view(&ta, dt, 1, shape, (void *)a));
  VKP_TEST_OK(vkp_tensor_init_view(&tb, dt, 1, shape, (void *)b));
  vkp_tensor_t feeds[] = {ta, tb};
  vkp_status_t st = vkp_target_run_graph(ref, g, NULL, feeds, out);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
  return st;
}

Test(ref_stage, integer_division, .timeout = 60) {
  int32_t a[] = {7, -7, 7, -7, INT32_MIN, 0};
  int32_t b[] = {2, 2, -2, -2, -1, 5};
  int32_t want[] = {3, -3, -3, 3, INT32_MIN, 0};  // truncation, INT_MIN/-1 wraps
  vkp_tensor_t q;
  VKP_TEST_OK(run_int_div(VKP_DTYPE_INT32, a, b, 6, &q));
  cr_assert_arr_eq(q.data, want, sizeof want);
  vkp_tensor_deinit(&q);

  int64_t a64[] = {INT64_MIN, 9}, b64[] = {-1, -4}, want64[] = {INT64_MIN, -2};
  VKP_TEST_OK(run_int_div(VKP_DTYPE_INT64, a64, b64, 2, &q));
  cr_assert_arr_eq(q.data, want64, sizeof want64);
  vkp_tensor_deinit(&q);

  int64_t z[] = {1, 0};
  vkp_status_t st = run_int_div(VKP_DTYPE_INT64, a64, z, 2, &q);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT));
  cr_assert(strstr(vkp_status_message(st), "division by zero"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
}

Test(ref_stage, registered_by_default, .timeout = 60) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_default(&reg));
  const vkp_target_t *t = NULL;
  VKP_TEST_OK(vkp_registry_lookup(reg, "ref", &t));
  cr_assert_str_eq(t->vtable->name, "ref");
  // A second registration is refused.
  vkp_status_t st = vkp_target_ref_register(reg);
  cr_assert(vkp_status_is(st, VKP_STATUS_ALREADY_EXISTS));
  vkp_status_free(st);
  vkp_registry_destroy(reg);
}

Test(ref_stage, dump_writes_the_plan, .timeout = 60) {
  float w[K * N] = {0}, b[N] = {0};
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M);
  vkp_blob_t blob = {0};
  VKP_TEST_OK(ref->vtable->compiler.compile(ref, g, NULL, &blob));
  char dir[] = "/tmp/vkp_ref_dump_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  VKP_TEST_OK(ref->vtable->compiler.dump(ref, g, blob.data, blob.size, dir));
  char path[64];
  snprintf(path, sizeof path, "%s/ref_plan.txt", dir);
  char *text = vkp_test_read_file(path, NULL);
  cr_assert_not_null(text);
  cr_assert(strstr(text, "fc (matmul): x, w -> mm"), "%s", text);
  cr_assert(strstr(text, "mm float32 [4, 5]: arena offset"), "%s", text);
  cr_assert(strstr(text, "h float32 [4, 5]: written in place into graph output 1"),
            "%s", text);
  free(text);
  remove(path);
  rmdir(dir);
  // A directory that does not exist is an I/O error, not a crash.
  vkp_status_t st = ref->vtable->compiler.dump(ref, g, blob.data, blob.size, "/nonexistent/dir");
  cr_assert(vkp_status_is(st, VKP_STATUS_IO_ERROR), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_blob_deinit(&blob);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// Two stages of one graph driven from two threads at once: the target keeps
// no shared state, so each thread gets its own exact results.
typedef struct worker_t {
  const vkp_target_t *ref;
  const vkp_graph_t *graph;
  const void *blob;
  size_t blob_size;
  const float *w, *b;
  uint64_t seed;
  bool ok;
} worker_t;

static void *worker_main(void *arg) {
  worker_t *wk = arg;
  vkp_test_rng_t rng = {.state = wk->seed};
  vkp_stage_t *stage = NULL;
  vkp_status_t st = wk->ref->vtable->stage.load(wk->ref, wk->graph, wk->blob, wk->blob_size, &stage);
  vkp_tensor_t in, outs[5] = {{0}};
  float x[M * K];
  int64_t xs[] = {M, K};
  if (!st) st = vkp_tensor_init_view(&in, VKP_DTYPE_FLOAT32, 2, xs, x);
  for (int i = 0; i < 5 && !st; ++i) {
    const vkp_value_t *v = &wk->graph->values[wk->graph->outputs[i]];
    st = vkp_tensor_init(&outs[i], v->dtype, v->rank, v->shape);
  }
  wk->ok = !st;
  for (int round = 0; round < 50 && wk->ok; ++round) {
    for (int i = 0; i < M * K; ++i) x[i] = vkp_test_rng_uniform(&rng, -2, 2);
    st = wk->ref->vtable->stage.run(stage, &in, outs);
    if (st) break;
    float s[M][N], h[M][N], r[N];
    expect_net(x, wk->w, wk->b, s, h, r);
    for (int i = 0; i < M * N; ++i) {
      float got = ((const float *)outs[0].data)[i], want = (&s[0][0])[i];
      if (fabsf(got - want) > 1e-6f + 1e-5f * fabsf(want)) wk->ok = false;
    }
  }
  if (st) wk->ok = false;
  vkp_status_free(st);
  for (int i = 0; i < 5; ++i) vkp_tensor_deinit(&outs[i]);
  if (stage) wk->ref->vtable->stage.unload(stage);
  return NULL;
}

Test(ref_stage, stages_on_two_threads, .timeout = 60) {
  vkp_test_rng_t rng;
  test_seed = vkp_test_rng_init(&rng);
  float w[K * N], b[N];
  for (int i = 0; i < K * N; ++i) w[i] = vkp_test_rng_uniform(&rng, -1, 1);
  for (int i = 0; i < N; ++i) b[i] = vkp_test_rng_uniform(&rng, -1, 1);
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = make_net(w, b, M);
  vkp_blob_t blob = {0};
  VKP_TEST_OK(ref->vtable->compiler.compile(ref, g, NULL, &blob));
  worker_t wk[2];
  pthread_t th[2];
  for (int i = 0; i < 2; ++i) {
    wk[i] = (worker_t){.ref = ref, .graph = g, .blob = blob.data,
                       .blob_size = blob.size, .w = w, .b = b,
                       .seed = vkp_test_rng_next(&rng) | 1};
    cr_assert_eq(pthread_create(&th[i], NULL, worker_main, &wk[i]), 0);
  }
  for (int i = 0; i < 2; ++i) pthread_join(th[i], NULL);
  cr_assert(wk[0].ok && wk[1].ok, "VKPIPE_TEST_SEED=%llu",
            (unsigned long long)test_seed);
  vkp_blob_deinit(&blob);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// A chain of six nodes needs only two intermediate buffers at a time: the
// plan reuses dead tensors' bytes (the dump reports the arena size).
Test(ref_stage, plan_reuses_dead_tensors, .timeout = 60) {
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  vkp_graph_t *g = g_new("chain");
  int64_t shape[] = {16, 16};  // 1 KiB per tensor
  g_in(g, "t0", VKP_DTYPE_FLOAT32, 2, shape);
  for (int i = 0; i < 6; ++i) {
    char in[8], out[8], name[8];
    snprintf(in, sizeof in, "t%d", i);
    snprintf(out, sizeof out, "t%d", i + 1);
    snprintf(name, sizeof name, "n%d", i);
    const char *ins[] = {in}, *outs[] = {out};
    VKP_TEST_OK(vkp_graph_add_node(g, name, i % 2 ? VKP_OP_NEG : VKP_OP_RELU, 1,
                                   ins, 1, outs, 0, NULL, NULL));
  }
  g_out(g, "t6");
  g_validate(g);
  vkp_blob_t blob = {0};
  VKP_TEST_OK(ref->vtable->compiler.compile(ref, g, NULL, &blob));
  char dir[] = "/tmp/vkp_ref_plan_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  VKP_TEST_OK(ref->vtable->compiler.dump(ref, g, blob.data, blob.size, dir));
  char path[64];
  snprintf(path, sizeof path, "%s/ref_plan.txt", dir);
  char *text = vkp_test_read_file(path, NULL);
  cr_assert_not_null(text);
  cr_assert(strstr(text, "arena 2048 bytes"), "%s", text);
  free(text);
  remove(path);
  rmdir(dir);

  // And the numbers: relu and neg alternate, y = -relu(-relu(-relu(x))).
  vkp_test_rng_t rng;
  test_seed = vkp_test_rng_init(&rng);
  vkp_tensor_t x, y;
  VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 2, shape));
  vkp_test_fill_uniform(&rng, &x, -1, 1);
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, &y));
  for (int i = 0; i < 256; ++i) {
    float v = ((float *)x.data)[i];
    float want = -fmaxf(0.0f, -fmaxf(0.0f, -fmaxf(0.0f, v)));
    cr_assert_eq(((float *)y.data)[i], want, "element %d of %g (VKPIPE_TEST_SEED=%llu)",
                 i, v, (unsigned long long)test_seed);
  }
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_blob_deinit(&blob);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}

// The shipped example model (examples/mlp.json: gemm with transB, relu,
// matmul, add, softmax) on ref, against the same network written out here.
Test(ref_stage, shipped_mlp_example, .timeout = 60) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/mlp.json", vkp_test_source_dir());
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_load(path, &g));
  vkp_registry_t *reg;
  const vkp_target_t *ref = ref_target(&reg);
  const float *w1 = g->values[vkp_graph_find_value(g, "fc1.weight")].data;  // [32, 64]
  const float *b1 = g->values[vkp_graph_find_value(g, "fc1.bias")].data;
  const float *w2 = g->values[vkp_graph_find_value(g, "fc2.weight")].data;  // [32, 10]
  const float *b2 = g->values[vkp_graph_find_value(g, "fc2.bias")].data;
  cr_assert(w1 && b1 && w2 && b2);
  vkp_test_rng_t rng;
  test_seed = vkp_test_rng_init(&rng);
  int64_t xs[] = {1, 64};
  vkp_tensor_t x, y;
  VKP_TEST_OK(vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 2, xs));
  vkp_test_fill_uniform(&rng, &x, -1, 1);
  VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, &y));
  const float *px = x.data;
  float h[32], logits[10];
  for (int j = 0; j < 32; ++j) {
    double acc = 0;
    for (int p = 0; p < 64; ++p) acc += (double)px[p] * w1[j * 64 + p];
    float v = (float)(acc + b1[j]);
    h[j] = v > 0 ? v : 0;
  }
  double mx = -INFINITY, sum = 0;
  for (int j = 0; j < 10; ++j) {
    double acc = 0;
    for (int p = 0; p < 32; ++p) acc += (double)h[p] * w2[p * 10 + j];
    logits[j] = (float)((double)(float)acc + b2[j]);
    mx = logits[j] > mx ? logits[j] : mx;
  }
  for (int j = 0; j < 10; ++j) sum += exp(logits[j] - mx);
  cr_assert_eq(y.rank, 2);
  cr_assert_eq(y.shape[1], 10);
  for (int j = 0; j < 10; ++j) {
    float want = (float)(exp(logits[j] - mx) / sum), got = ((float *)y.data)[j];
    cr_assert(fabsf(got - want) <= 1e-6f + 1e-5f * want,
              "probs[%d]: %g vs %g (VKPIPE_TEST_SEED=%llu)", j, got, want,
              (unsigned long long)test_seed);
  }
  vkp_tensor_deinit(&x);
  vkp_tensor_deinit(&y);
  vkp_graph_destroy(g);
  vkp_registry_destroy(reg);
}
