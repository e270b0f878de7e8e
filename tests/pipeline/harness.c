// SPDX-License-Identifier: Apache-2.0
#include "harness.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fixture_init(fixture_t *f, const harness_config_t *cfg) {
  memset(f, 0, sizeof(*f));
  f->cfg = *cfg;
  uint64_t seed = vkp_test_rng_init(&f->rng);
  (void)seed;
  if (cfg->registry) {
    f->registry = cfg->registry;
  } else {
    VKP_TEST_OK(vkp_registry_create(&f->registry));
    VKP_TEST_OK(tmath_register(f->registry, cfg->delay_us, cfg->delay_percent));
    VKP_TEST_OK(fakedev_register(f->registry, &cfg->device));
  }
  VKP_TEST_OK(diamond_plan(cfg->target ? cfg->target : "tmath", cfg->alt_target,
                           cfg->alt_mask, &f->plan));
  for (int32_t s = 0; cfg->replicas > 1 && s < f->plan->n_stages; ++s)
    if (!cfg->replica_mask || (cfg->replica_mask >> s & 1u))
      VKP_TEST_OK(vkp_plan_set_stage_replicas(f->plan, s, cfg->replicas));
  vkp_pipeline_options_t opts = {.ring_depth = cfg->depth,
                                 .sequential = cfg->sequential,
                                 .allocator = cfg->allocator};
  VKP_TEST_OK(vkp_pipeline_create(f->plan, f->registry, &opts, &f->pipe));
}

void fixture_deinit(fixture_t *f) {
  vkp_pipeline_destroy(f->pipe);
  const vkp_target_t *dev = vkp_registry_find(f->registry, "fakedev");
  uint64_t violations = dev ? fakedev_violations(dev) : 0;
  vkp_plan_destroy(f->plan);
  if (!f->cfg.registry) vkp_registry_destroy(f->registry);
  cr_assert_eq(violations, 0, "fakedev saw %llu device rules broken",
               (unsigned long long)violations);
}

void fill(vkp_test_rng_t *rng, float *v) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) v[k] = vkp_test_rng_uniform(rng, -1, 1);
}

void set_inputs(vkp_pipeline_t *pipe, float *x, float *z) {
  int64_t shape[2] = {DIAMOND_ROWS, DIAMOND_COLS};
  vkp_tensor_t tx, tz;
  VKP_TEST_OK(vkp_tensor_init_view(&tx, VKP_DTYPE_FLOAT32, 2, shape, x));
  VKP_TEST_OK(vkp_tensor_init_view(&tz, VKP_DTYPE_FLOAT32, 2, shape, z));
  VKP_TEST_OK(vkp_pipeline_set_input(pipe, "x", &tx));
  VKP_TEST_OK(vkp_pipeline_set_input(pipe, "z", &tz));
}

static bool close_to(const float *got, const float *want) {
  for (int k = 0; k < DIAMOND_NUMEL; ++k) {
    float d = got[k] - want[k];
    if (d < 0) d = -d;
    float m = want[k] < 0 ? -want[k] : want[k];
    if (d > 1e-5f + 1e-5f * m) return false;
  }
  return true;
}

void check_result(const vkp_pipeline_result_t *res, const float *x,
                  const float *z) {
  float y[DIAMOND_NUMEL], w[DIAMOND_NUMEL], u[DIAMOND_NUMEL];
  diamond_expected(x, z, y, w, u);
  cr_assert_eq(res->n_outputs, 3);
  cr_assert(close_to(res->outputs[0].data, y), "frame %llu: y differs",
            (unsigned long long)res->seq);
  cr_assert(close_to(res->outputs[1].data, w), "frame %llu: w differs",
            (unsigned long long)res->seq);
  cr_assert(close_to(res->outputs[2].data, u), "frame %llu: u differs",
            (unsigned long long)res->seq);
}

typedef struct producer_t {
  vkp_pipeline_t *pipe;
  int32_t n_frames;
  float *xs, *zs;   // n_frames * DIAMOND_NUMEL, written before each run
  uint64_t seed;
  int32_t z_fail_every;
} producer_t;

static void *produce(void *arg) {
  producer_t *pr = arg;
  vkp_test_rng_t rng = {pr->seed | 1};
  for (int32_t i = 0; i < pr->n_frames; ++i) {
    float *x = pr->xs + (size_t)i * DIAMOND_NUMEL;
    float *z = pr->zs + (size_t)i * DIAMOND_NUMEL;
    fill(&rng, x);
    fill(&rng, z);
    if (pr->z_fail_every && (i + 1) % pr->z_fail_every == 0) z[0] = TMATH_FAIL_VALUE;
    set_inputs(pr->pipe, x, z);
    uint64_t seq = 0;
    vkp_status_t st = vkp_pipeline_run(pr->pipe, &seq);
    if (st || seq != (uint64_t)i + 1) {
      vkp_status_free(st);
      return (void *)1;
    }
  }
  return NULL;
}

void run_ordered(const harness_config_t *cfg, int32_t n_frames,
                 int32_t fail_every, bool z_failure, const char *fail_stage) {
  fixture_t f;
  fixture_init(&f, cfg);
  producer_t pr = {.pipe = f.pipe, .n_frames = n_frames,
                   .seed = vkp_test_rng_next(&f.rng),
                   .z_fail_every = z_failure ? fail_every : 0};
  pr.xs = calloc((size_t)n_frames * DIAMOND_NUMEL, sizeof(float));
  pr.zs = calloc((size_t)n_frames * DIAMOND_NUMEL, sizeof(float));
  cr_assert(pr.xs && pr.zs);
  pthread_t thread;
  cr_assert_eq(pthread_create(&thread, NULL, produce, &pr), 0);
  int32_t failures = 0;
  char want_stage[64];
  snprintf(want_stage, sizeof want_stage, "stage '%s'", fail_stage ? fail_stage : "");
  for (int32_t i = 0; i < n_frames; ++i) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
    cr_assert_eq(res.seq, (uint64_t)i + 1, "got frame %llu, expected %d",
                 (unsigned long long)res.seq, (int)i + 1);
    bool injected = fail_every && (i + 1) % fail_every == 0;
    if (injected) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_INTERNAL),
                "frame %d: expected the injected failure, got %s", (int)i + 1,
                vkp_status_message(res.status));
      cr_assert(strstr(vkp_status_message(res.status), want_stage),
                "%s", vkp_status_message(res.status));
      ++failures;
    } else {
      cr_assert_null(res.status, "frame %d failed: %s", (int)i + 1,
                     vkp_status_message(res.status));
      check_result(&res, pr.xs + (size_t)i * DIAMOND_NUMEL,
                   pr.zs + (size_t)i * DIAMOND_NUMEL);
    }
    vkp_pipeline_result_deinit(&res);
  }
  void *ret = NULL;
  pthread_join(thread, &ret);
  cr_assert_null(ret, "the producer failed");
  vkp_pipeline_result_t extra;
  vkp_status_t st = vkp_pipeline_get_output(f.pipe, 0, &extra);
  cr_assert(vkp_status_is(st, VKP_STATUS_EMPTY), "a result too many");
  vkp_status_free(st);

  vkp_pipeline_stats_t stats;
  VKP_TEST_OK(vkp_pipeline_get_stats(f.pipe, &stats));
  cr_assert_eq(stats.frames_run, (uint64_t)n_frames);
  cr_assert_eq(stats.frames_finished, (uint64_t)n_frames);
  cr_assert_eq(stats.frames_failed, (uint64_t)failures);
  cr_assert_eq(stats.n_stages, 4);
  for (int32_t s = 0; s < stats.n_stages; ++s)
    cr_assert_eq(stats.stages[s].frames, (uint64_t)n_frames);
  for (int32_t b = 0; b < stats.n_bindings; ++b) {
    cr_assert_leq(stats.bindings[b].peak_occupancy, stats.bindings[b].depth,
                  "binding %s", stats.bindings[b].name);
    cr_assert_geq(stats.bindings[b].peak_occupancy, 1);
  }
  cr_assert_leq(stats.latency_min_ns, stats.latency_max_ns);
  vkp_pipeline_stats_deinit(&stats);
  free(pr.xs);
  free(pr.zs);
  fixture_deinit(&f);
}

void run_device_lost(const harness_config_t *cfg, int32_t lost_frame,
                     bool z_injection) {
  fixture_t f;
  fixture_init(&f, cfg);
  float x[DIAMOND_NUMEL], z[DIAMOND_NUMEL];
  float xs[40][DIAMOND_NUMEL], zs[40][DIAMOND_NUMEL];
  int32_t accepted = 0;
  vkp_status_t refused = NULL;
  for (int32_t i = 0; i < 40; ++i) {
    fill(&f.rng, x);
    fill(&f.rng, z);
    if (z_injection && i + 1 == lost_frame) z[0] = TMATH_LOST_VALUE;
    memcpy(xs[i], x, sizeof x);
    memcpy(zs[i], z, sizeof z);
    set_inputs(f.pipe, x, z);
    uint64_t seq = 0;
    refused = vkp_pipeline_run(f.pipe, &seq);
    if (refused) break;
    cr_assert_eq(seq, (uint64_t)i + 1);
    ++accepted;
  }
  cr_assert_geq(accepted, lost_frame);
  if (refused) {
    cr_assert(vkp_status_is(refused, VKP_STATUS_DEVICE_LOST), "%s",
              vkp_status_message(refused));
    vkp_status_free(refused);
  }
  for (int32_t i = 0; i < accepted; ++i) {
    vkp_pipeline_result_t res;
    VKP_TEST_OK(vkp_pipeline_get_output(f.pipe, 20 * SECOND_NS, &res));
    cr_assert_eq(res.seq, (uint64_t)i + 1);
    if (i + 1 >= lost_frame) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_DEVICE_LOST),
                "frame %d: %s", (int)i + 1, vkp_status_message(res.status));
    } else if (res.status) {
      cr_assert(vkp_status_is(res.status, VKP_STATUS_DEVICE_LOST), "%s",
                vkp_status_message(res.status));
    } else {
      check_result(&res, xs[i], zs[i]);
    }
    vkp_pipeline_result_deinit(&res);
  }
  set_inputs(f.pipe, x, z);
  uint64_t seq = 99;
  vkp_status_t st = vkp_pipeline_run(f.pipe, &seq);
  cr_assert(vkp_status_is(st, VKP_STATUS_DEVICE_LOST), "%s",
            vkp_status_message(st));
  cr_assert_eq(seq, 0);
  vkp_status_free(st);
  fixture_deinit(&f);
}


static int32_t io_index(const vkp_graph_t *g, bool outputs, const char *name) {
  int32_t n = outputs ? g->n_outputs : g->n_inputs;
  const int32_t *ids = outputs ? g->outputs : g->inputs;
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(g->values[ids[i]].name, name) == 0) return i;
  return -1;
}

vkp_status_t plan_from_groups(const vkp_graph_t *graph, int32_t n_stages,
                              const int32_t *const *groups,
                              const char *const *targets,
                              vkp_plan_t **out_plan) {
  *out_plan = NULL;
  vkp_plan_t *plan = NULL;
  vkp_status_t st = vkp_plan_create(graph->name, &plan);
  for (int32_t i = 0; i < graph->n_inputs && !st; ++i)
    st = vkp_plan_add_global_input(plan, graph->values[graph->inputs[i]].name);
  for (int32_t i = 0; i < graph->n_outputs && !st; ++i)
    st = vkp_plan_add_global_output(plan, graph->values[graph->outputs[i]].name);
  for (int32_t s = 0; s < n_stages && !st; ++s) {
    int32_t n = 0;
    while (groups[s][n] >= 0) ++n;
    char name[16];
    snprintf(name, sizeof name, "st%d", (int)s);
    vkp_graph_t *sub = NULL;
    st = vkp_graph_extract(graph, n, groups[s], name, &sub);
    if (!st) st = vkp_plan_add_stage(plan, name, targets[s], sub, NULL);
  }
  for (int32_t s = 0; s < n_stages && !st; ++s) {
    const vkp_graph_t *sub = plan->stages[s].graph;
    for (int32_t i = 0; i < sub->n_inputs && !st; ++i) {
      const char *v = sub->values[sub->inputs[i]].name;
      int32_t src = VKP_PLAN_GLOBAL;
      for (int32_t p = 0; p < s; ++p)
        if (io_index(plan->stages[p].graph, true, v) >= 0) src = p;
      st = vkp_plan_bind(plan, src, v, s, v);
    }
    for (int32_t o = 0; o < sub->n_outputs && !st; ++o) {
      const char *v = sub->values[sub->outputs[o]].name;
      if (io_index(graph, true, v) >= 0)
        st = vkp_plan_bind(plan, s, v, VKP_PLAN_GLOBAL, v);
    }
  }
  if (!st) st = vkp_plan_validate(plan);
  if (st) {
    vkp_plan_destroy(plan);
    return st;
  }
  *out_plan = plan;
  return NULL;
}

void create_failure_walk(const vkp_plan_t *plan, vkp_registry_t *reg,
                         int64_t max_fail_at) {
  bool succeeded = false;
  for (int64_t fail_at = 1; fail_at < max_fail_at && !succeeded; ++fail_at) {
    vkp_test_counting_alloc_t counter;
    vkp_pipeline_options_t opts = {.allocator = vkp_test_counting_alloc_init(&counter, fail_at)};
    vkp_pipeline_t *pipe = NULL;
    vkp_status_t st = vkp_pipeline_create(plan, reg, &opts, &pipe);
    if (!st) {
      succeeded = !counter.failed;
      vkp_pipeline_destroy(pipe);
    } else {
      cr_assert(counter.failed, "failed without an allocation failure: %s",
                vkp_status_message(st));
      cr_assert_null(pipe);
      vkp_status_free(st);
    }
    cr_assert_eq(counter.live, 0, "fail_at %lld: %lld allocations leaked",
                 (long long)fail_at, (long long)counter.live);
  }
  cr_assert(succeeded);
}
