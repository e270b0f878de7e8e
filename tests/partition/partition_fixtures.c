// SPDX-License-Identifier: Apache-2.0
#include "partition/partition_fixtures.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_graph.h"

static bool fx_supports(const vkp_target_t *t, const vkp_graph_t *g,
                        const vkp_node_t *n, char *reason, size_t size) {
  const fx_fake_t *f = t->impl;
  if (f->refuse_ops.op[n->op]) {
    snprintf(reason, size, "%s does not do %s", t->vtable->name, vkp_op_name(n->op));
    return false;
  }
  return true;
}

static vkp_status_t fx_compile(const vkp_target_t *t, const vkp_graph_t *g,
                               const vkp_compile_options_t *o, vkp_blob_t *blob) {
  return vkp_blob_alloc(blob, 1);
}

typedef struct fx_stage_t {
  vkp_stage_t base;
} fx_stage_t;

static vkp_status_t fx_load(const vkp_target_t *t, const vkp_graph_t *g,
                            const void *blob, size_t size, vkp_stage_t **out) {
  fx_stage_t *s = calloc(1, sizeof(*s));
  if (!s) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "fake stage");
  s->base.target = t;
  *out = &s->base;
  return NULL;
}

static vkp_status_t fx_run(vkp_stage_t *s, const vkp_tensor_t *in,
                           vkp_tensor_t *out) {
  return NULL;
}

static void fx_unload(vkp_stage_t *s) { free(s); }
static void fx_destroy(vkp_target_t *t) { free(t->impl); }

#define FX_VTABLE(id, str, fx_flags)                                         \
  static const vkp_target_vtable_t fx_vtable_##id = {                       \
      .api_version = VKP_TARGET_API_VERSION,                                 \
      .name = str,                                                           \
      .caps = {.flags = fx_flags, .dtypes = VKP_DTYPE_SET_ALL},              \
      .compiler = {.supports = fx_supports, .compile = fx_compile},          \
      .stage = {.load = fx_load, .run = fx_run, .unload = fx_unload},        \
      .destroy = fx_destroy};
FX_VTABLE(fa, "fa", 0)
FX_VTABLE(fb, "fb", 0)
FX_VTABLE(fc, "fc", 0)
// The fake host target stands in for the built-in one: the default fallback.
FX_VTABLE(cpu, "cpu", VKP_TARGET_DEFAULT_FALLBACK)
FX_VTABLE(gpu, "gpu", 0)

void fx_add_fake(vkp_registry_t *reg, const char *name, fx_ops_t refuse_ops) {
  const vkp_target_vtable_t *vt = !strcmp(name, "fa")    ? &fx_vtable_fa
                                  : !strcmp(name, "fb")  ? &fx_vtable_fb
                                  : !strcmp(name, "fc")  ? &fx_vtable_fc
                                  : !strcmp(name, "cpu") ? &fx_vtable_cpu
                                                         : &fx_vtable_gpu;
  fx_fake_t *f = calloc(1, sizeof(*f));
  cr_assert(f);
  f->refuse_ops = refuse_ops;
  VKP_TEST_OK(vkp_registry_add(reg, vt, f));
}

vkp_registry_t *fx_registry_ab(void) {
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create(&reg));
  fx_add_fake(reg, "fa", FX_NONE);
  fx_add_fake(reg, "fb", FX_NONE);
  return reg;
}

vkp_profile_t *fx_profile_two_devices(int32_t concurrency) {
  char json[1024];
  snprintf(json, sizeof json,
           "{\"version\": 1, \"host_device\": \"d0\","
           " \"targets\": {"
           "  \"fa\": {\"device\": \"d0\", \"gflops\": 50, \"gbps\": 20, \"launch_us\": 30},"
           "  \"fb\": {\"device\": \"d1\", \"gflops\": 10, \"gbps\": 10, \"launch_us\": 2}},"
           " \"devices\": {\"d0\": {\"concurrency\": %d}, \"d1\": {\"concurrency\": %d}},"
           " \"links\": [{\"from\": \"d0\", \"to\": \"d1\", \"latency_us\": 20, \"gbps\": 10},"
           "            {\"from\": \"d1\", \"to\": \"d0\", \"latency_us\": 20, \"gbps\": 10}]}",
           (int)concurrency, (int)concurrency);
  vkp_profile_t *p;
  VKP_TEST_OK(vkp_profile_load_json(json, strlen(json), &p));
  return p;
}

static void *fx_zeros(int32_t rank, const int64_t *shape) {
  size_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= (size_t)shape[i];
  void *p = calloc(n, sizeof(float));
  cr_assert(p);
  return p;
}

static void fx_const(vkp_graph_t *g, const char *name, int32_t rank,
                     const int64_t *shape) {
  void *z = fx_zeros(rank, shape);
  g_const_data(g, name, VKP_DTYPE_FLOAT32, rank, shape, z);
  free(z);
}

// conv2d 3x3 (or 1x1) with padding keeping the size; `group` > 1 depthwise.
static void fx_conv(vkp_graph_t *g, const char *name, const char *in,
                    const char *out, int64_t cin, int64_t cout, int64_t k,
                    int64_t group) {
  char w[96];
  snprintf(w, sizeof w, "%s.w", name);
  int64_t ws[] = {cout, cin / group, k, k};
  fx_const(g, w, 4, ws);
  int64_t pads[] = {k / 2, k / 2, k / 2, k / 2};
  vkp_attr_t attrs[] = {at_is("pads", 4, pads), at_i("group", group)};
  char ins[256];
  snprintf(ins, sizeof ins, "%s,%s", in, w);
  g_node(g, name, VKP_OP_CONV2D, ins, out, 2, attrs);
}

static void fx_binary(vkp_graph_t *g, vkp_op_t op, const char *name,
                      const char *a, const char *b, const char *out) {
  char ins[256];
  snprintf(ins, sizeof ins, "%s,%s", a, b);
  g_node(g, name, op, ins, out, 0, NULL);
}

vkp_graph_t *fx_resnet_like(int32_t blocks, int32_t channels, int32_t hw) {
  vkp_graph_t *g = g_new("resnet_like");
  int64_t xs[] = {1, 3, hw, hw};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 4, xs);
  fx_conv(g, "stem", "x", "stem.y", 3, channels, 3, 1);
  g_node(g, "stem.relu", VKP_OP_RELU, "stem.y", "h0", 0, NULL);
  char prev[64] = "h0";
  for (int32_t b = 0; b < blocks; ++b) {
    char n1[64], y1[64], r1[64], a1[64], n2[64], y2[64], add[64], s[64], relu[64], h[64];
    snprintf(n1, sizeof n1, "b%d.conv1", (int)b);
    snprintf(y1, sizeof y1, "b%d.y1", (int)b);
    snprintf(r1, sizeof r1, "b%d.relu1", (int)b);
    snprintf(a1, sizeof a1, "b%d.a1", (int)b);
    snprintf(n2, sizeof n2, "b%d.conv2", (int)b);
    snprintf(y2, sizeof y2, "b%d.y2", (int)b);
    snprintf(add, sizeof add, "b%d.add", (int)b);
    snprintf(s, sizeof s, "b%d.sum", (int)b);
    snprintf(relu, sizeof relu, "b%d.relu2", (int)b);
    snprintf(h, sizeof h, "h%d", (int)b + 1);
    fx_conv(g, n1, prev, y1, channels, channels, 3, 1);
    g_node(g, r1, VKP_OP_RELU, y1, a1, 0, NULL);
    fx_conv(g, n2, a1, y2, channels, channels, 3, 1);
    fx_binary(g, VKP_OP_ADD, add, y2, prev, s);  // the skip connection
    g_node(g, relu, VKP_OP_RELU, s, h, 0, NULL);
    snprintf(prev, sizeof prev, "%s", h);
  }
  g_node(g, "pool", VKP_OP_GLOBAL_AVG_POOL, prev, "pooled", 0, NULL);
  g_node(g, "flatten", VKP_OP_FLATTEN, "pooled", "flat", 0, NULL);
  int64_t fcs[] = {channels, 10};
  fx_const(g, "fc.w", 2, fcs);
  fx_binary(g, VKP_OP_MATMUL, "fc", "flat", "fc.w", "logits");
  g_out(g, "logits");
  g_validate(g);
  return g;
}

vkp_graph_t *fx_mobilenet_like(int32_t blocks, int32_t channels, int32_t hw) {
  vkp_graph_t *g = g_new("mobilenet_like");
  int64_t xs[] = {1, 3, hw, hw};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 4, xs);
  fx_conv(g, "stem", "x", "stem.y", 3, channels, 3, 1);
  g_node(g, "stem.relu", VKP_OP_RELU, "stem.y", "h0", 0, NULL);
  char prev[64] = "h0";
  for (int32_t b = 0; b < blocks; ++b) {
    char dw[64], dwy[64], r1[64], a1[64], pw[64], pwy[64], r2[64], h[64];
    snprintf(dw, sizeof dw, "b%d.dw", (int)b);
    snprintf(dwy, sizeof dwy, "b%d.dwy", (int)b);
    snprintf(r1, sizeof r1, "b%d.relu1", (int)b);
    snprintf(a1, sizeof a1, "b%d.a1", (int)b);
    snprintf(pw, sizeof pw, "b%d.pw", (int)b);
    snprintf(pwy, sizeof pwy, "b%d.pwy", (int)b);
    snprintf(r2, sizeof r2, "b%d.relu2", (int)b);
    snprintf(h, sizeof h, "h%d", (int)b + 1);
    fx_conv(g, dw, prev, dwy, channels, channels, 3, channels);
    g_node(g, r1, VKP_OP_CLIP, dwy, a1, 0, NULL);
    fx_conv(g, pw, a1, pwy, channels, channels, 1, 1);
    g_node(g, r2, VKP_OP_RELU, pwy, h, 0, NULL);
    snprintf(prev, sizeof prev, "%s", h);
  }
  g_node(g, "pool", VKP_OP_GLOBAL_AVG_POOL, prev, "pooled", 0, NULL);
  g_node(g, "flatten", VKP_OP_FLATTEN, "pooled", "flat", 0, NULL);
  int64_t fcs[] = {channels, 10};
  fx_const(g, "fc.w", 2, fcs);
  fx_binary(g, VKP_OP_MATMUL, "fc", "flat", "fc.w", "logits");
  g_node(g, "softmax", VKP_OP_SOFTMAX, "logits", "probs", 0, NULL);
  g_out(g, "probs");
  g_validate(g);
  return g;
}

vkp_graph_t *fx_random_dag(vkp_test_rng_t *rng, int32_t n) {
  vkp_graph_t *g = g_new("random");
  int64_t s[] = {1, 16};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  // values[0] = "x", then "v<i>" for node i.
  char name[32], a[32], b[32];
  int32_t *used = calloc((size_t)n + 1, sizeof(int32_t));
  cr_assert(used);
  for (int32_t i = 0; i < n; ++i) {
    // Mostly recent inputs (long chains), sometimes far ones (skips).
    int32_t pa = i - (int32_t)vkp_test_rng_below(rng, i < 3 ? (uint32_t)i + 1 : 3);
    int32_t pb = (int32_t)vkp_test_rng_below(rng, (uint32_t)i + 1);
    if (pa == 0) snprintf(a, sizeof a, "x"); else snprintf(a, sizeof a, "v%d", (int)pa - 1);
    if (pb == 0) snprintf(b, sizeof b, "x"); else snprintf(b, sizeof b, "v%d", (int)pb - 1);
    used[pa] = 1;
    snprintf(name, sizeof name, "v%d", (int)i);
    char node[32];
    snprintf(node, sizeof node, "n%d", (int)i);
    if (vkp_test_rng_below(rng, 2))
      g_node(g, node, VKP_OP_RELU, a, name, 0, NULL);
    else {
      used[pb] = 1;
      fx_binary(g, VKP_OP_ADD, node, a, b, name);
    }
  }
  for (int32_t i = 0; i < n; ++i) {
    if (used[i + 1]) continue;
    snprintf(name, sizeof name, "v%d", (int)i);
    g_out(g, name);
  }
  free(used);
  g_validate(g);
  return g;
}

vkp_graph_t *fx_chain(int32_t n, int64_t width) {
  vkp_graph_t *g = g_new("chain");
  int64_t s[] = {1, width};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  char prev[32] = "x", out[32], node[32];
  for (int32_t i = 0; i < n; ++i) {
    snprintf(out, sizeof out, "c%d", (int)i);
    snprintf(node, sizeof node, "r%d", (int)i);
    g_node(g, node, VKP_OP_RELU, prev, out, 0, NULL);
    snprintf(prev, sizeof prev, "%s", out);
  }
  g_out(g, prev);
  g_validate(g);
  return g;
}
