// SPDX-License-Identifier: Apache-2.0
// Building graphs in tests: one call per input, constant, node or output, each
// failing the test on error, so a test reads as the graph it builds.
//
//   vkp_test_rng_t rng;
//   vkp_test_rng_init(&rng);
//   vkp_graph_t *g = g_new("mlp");
//   g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(4, 8));
//   g_const(g, &rng, "w", 2, SH(8, 16), -0.5f, 0.5f);   // fresh random values
//   g_node(g, "fc", VKP_OP_MATMUL, "x,w", "h", 0, NULL);
//   vkp_attr_t ax[] = {at_i("axis", 1)};
//   g_node(g, "top", VKP_OP_TOP_K, "h,k", "v,i", 1, ax);  // several outputs
//   g_out(g, "v,i");
//   g_validate(g);
//   ...
//   vkp_graph_destroy(g);
//
// Every function is static inline on purpose: the failures go through the
// Criterion of the including test, which under ThreadSanitizer is the
// stand-in of tests/pipeline/tsan, not the library.
#ifndef VKPIPE_TESTS_SUPPORT_TEST_GRAPH_H_
#define VKPIPE_TESTS_SUPPORT_TEST_GRAPH_H_

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/tensor.h"

// A literal list of int64: a shape, an attribute's ints, int64 constant data.
#define SH(...) ((const int64_t[]){__VA_ARGS__})

// Attributes, by kind.
static inline vkp_attr_t at_i(const char *name, int64_t v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INT, .i = v};
}
static inline vkp_attr_t at_f(const char *name, double v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_FLOAT, .f = v};
}
static inline vkp_attr_t at_s(const char *name, const char *v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_STRING, .s = v};
}
// `n` ints at `v` (borrowed until the node is added, which copies them).
static inline vkp_attr_t at_is(const char *name, int32_t n, const int64_t *v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = n};
}

// An empty graph named `name`; destroy with vkp_graph_destroy.
static inline vkp_graph_t *g_new(const char *name) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create(name, &g));
  return g;
}

// Graph input `name` of `dt` and `shape` (rank 0: a scalar, shape NULL).
static inline void g_in(vkp_graph_t *g, const char *name, vkp_dtype_t dt, int32_t rank,
                        const int64_t *shape) {
  VKP_TEST_OK(vkp_graph_add_input(g, name, dt, rank, shape, NULL));
}

// Constant `name` of `dt` holding `data` (copied).
static inline void g_const_data(vkp_graph_t *g, const char *name, vkp_dtype_t dt,
                                int32_t rank, const int64_t *shape, const void *data) {
  VKP_TEST_OK(vkp_graph_add_constant(g, name, dt, rank, shape, data, NULL));
}

// A float32 constant of uniform random values in [lo, hi), drawn from `rng`
// in element order.
static inline void g_const(vkp_graph_t *g, vkp_test_rng_t *rng, const char *name,
                           int32_t rank, const int64_t *shape, float lo, float hi) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= (size_t)shape[d];
  float *data = malloc(sizeof(float) * (n + 1));
  cr_assert(data != NULL);
  for (size_t i = 0; i < n; ++i) data[i] = vkp_test_rng_uniform(rng, lo, hi);
  g_const_data(g, name, VKP_DTYPE_FLOAT32, rank, shape, data);
  free(data);
}

// Splits the comma-separated `list` (copied into `buf`) into `names`: ""
// gives none, "a,,b" an omitted (empty) middle input. Returns the count.
static inline int32_t g__split(const char *list, char *buf, size_t buf_size,
                               const char **names, int32_t max) {
  int32_t n = 0;
  if (!list[0]) return 0;
  cr_assert(strlen(list) < buf_size, "name list too long: %s", list);
  snprintf(buf, buf_size, "%s", list);
  for (char *p = buf, *c; n < max; p = c + 1) {
    c = strchr(p, ',');
    if (c) *c = '\0';
    names[n++] = p;
    if (!c) break;
  }
  return n;
}

// Node `name` of `op` reading the comma-separated values `ins` ("" for no
// input, an empty field for an omitted optional one) and writing the
// comma-separated `outs`, with `n_attrs` attributes.
static inline void g_node(vkp_graph_t *g, const char *name, vkp_op_t op, const char *ins,
                          const char *outs, int32_t n_attrs, const vkp_attr_t *attrs) {
  char in_buf[512], out_buf[256];
  const char *in_names[16], *out_names[8];
  int32_t n_in = g__split(ins, in_buf, sizeof in_buf, in_names, 16);
  int32_t n_out = g__split(outs, out_buf, sizeof out_buf, out_names, 8);
  VKP_TEST_OK(vkp_graph_add_node(g, name, op, n_in, in_names, n_out, out_names, n_attrs,
                                 attrs, NULL));
}

// Marks each of the comma-separated values `names` as a graph output.
static inline void g_out(vkp_graph_t *g, const char *names) {
  char buf[256];
  const char *list[16];
  int32_t n = g__split(names, buf, sizeof buf, list, 16);
  for (int32_t i = 0; i < n; ++i) VKP_TEST_OK(vkp_graph_mark_output(g, list[i]));
}

// Validates `g` (sorts it and infers shapes); fails the test on error.
static inline void g_validate(vkp_graph_t *g) { VKP_TEST_OK(vkp_graph_validate(g)); }

// Validating `g` (consumed) fails with `code` and a message that names node
// `node` (quoted) and holds `want` and, unless NULL, `also`.
static inline void g_expect_invalid(vkp_graph_t *g, vkp_status_code_t code, const char *node,
                                    const char *want, const char *also) {
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert(vkp_status_is(st, code), "%s", st ? vkp_status_message(st) : "validated");
  const char *msg = vkp_status_message(st);
  char quoted[128];
  snprintf(quoted, sizeof quoted, "'%s'", node);
  cr_assert(strstr(msg, quoted), "names the node: %s", msg);
  cr_assert(strstr(msg, want), "'%s' in: %s", want, msg);
  cr_assert(!also || strstr(msg, also), "'%s' in: %s", also, msg);
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// Tensors for the inputs of validated `g`, in graph order, into ins[0..n_inputs),
// filled with fresh random data: float32 uniform in [lo, hi), int32 and int64
// whole numbers in [-20, 20], other dtypes zero. Deinit each with
// vkp_tensor_deinit.
static inline void g_random_inputs(const vkp_graph_t *g, vkp_test_rng_t *rng, float lo, float hi,
                                   vkp_tensor_t *ins) {
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&ins[i], v->dtype, v->rank, v->shape));
    size_t n = vkp_tensor_numel(&ins[i]);
    for (size_t k = 0; k < n; ++k) {
      if (v->dtype == VKP_DTYPE_FLOAT32)
        ((float *)ins[i].data)[k] = vkp_test_rng_uniform(rng, lo, hi);
      else if (v->dtype == VKP_DTYPE_INT32)
        ((int32_t *)ins[i].data)[k] = (int32_t)vkp_test_rng_below(rng, 41) - 20;
      else if (v->dtype == VKP_DTYPE_INT64)
        ((int64_t *)ins[i].data)[k] = (int64_t)vkp_test_rng_below(rng, 41) - 20;
    }
  }
}

// The value named `name` in `g`; fails the test when there is none.
static inline const vkp_value_t *g_value(const vkp_graph_t *g, const char *name) {
  int32_t v = vkp_graph_find_value(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  return &g->values[v];
}

#endif  // VKPIPE_TESTS_SUPPORT_TEST_GRAPH_H_
