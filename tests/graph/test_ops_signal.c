// SPDX-License-Identifier: Apache-2.0
// graph/op_signal.c (dft, stft), det (op_linalg.c), max_unpool (op_nn.c)
// and resize's scale limits (op_resample.c):
// the canonical forms validation writes and the shapes it infers, and
// errors that name the node and the attribute or input at fault instead of
// aborting. Results are checked against NumPy in tests/runtime/ref
// (cases_signal.py); a run-time index outside max_unpool's output is an
// OUT_OF_RANGE error on ref.
#include <criterion/criterion.h>
#include <string.h>

#include "support/test_support.h"
#include "vkpipe/graph.h"

#define SH(...) ((const int64_t[]){__VA_ARGS__})

static vkp_attr_t int_attr(const char *name, int64_t v) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INT, .i = v};
}

static vkp_attr_t ints_attr(const char *name, const int64_t *v, int32_t n) {
  return (vkp_attr_t){.name = name, .kind = VKP_ATTR_INTS, .ints = v, .count = n};
}

// Node "n" of `op` on input x (`rank`, `shape`) and, when shape1 is not
// NULL, a second input x1 of `dt1`; output y.
static vkp_graph_t *graph2(vkp_op_t op, const int64_t *shape, int32_t rank,
                           vkp_dtype_t dt1, const int64_t *shape1, int32_t rank1,
                           int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g;
  VKP_TEST_OK(vkp_graph_create("signal", &g));
  VKP_TEST_OK(vkp_graph_add_input(g, "x", VKP_DTYPE_FLOAT32, rank, shape, NULL));
  if (shape1) VKP_TEST_OK(vkp_graph_add_input(g, "x1", dt1, rank1, shape1, NULL));
  const char *in[2] = {"x", "x1"}, *out[1] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", op, shape1 ? 2 : 1, in, 1, out, n_attrs, attrs, NULL));
  VKP_TEST_OK(vkp_graph_mark_output(g, "y"));
  return g;
}

static const vkp_value_t *value(const vkp_graph_t *g, const char *name) {
  int32_t v = vkp_graph_find_value(g, name);
  cr_assert_geq(v, 0, "no value '%s'", name);
  return &g->values[v];
}

static void expect_invalid(vkp_graph_t *g, const char *want) {
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s",
            st ? vkp_status_message(st) : "validated");
  const char *msg = vkp_status_message(st);
  cr_assert(strstr(msg, "'n'"), "names the node: %s", msg);
  cr_assert(strstr(msg, want), "'%s' in: %s", want, msg);
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

static void expect_shape(const vkp_value_t *v, int32_t rank, const int64_t *shape) {
  cr_assert_eq(v->rank, rank);
  for (int32_t d = 0; d < rank; ++d)
    cr_assert_eq(v->shape[d], shape[d], "dim %d: %lld", (int)d, (long long)v->shape[d]);
}

Test(ops_signal, dft_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {int_attr("axis", -2), int_attr("onesided", 1)};
  vkp_graph_t *g = graph2(VKP_OP_DFT, SH(2, 3, 10, 1), 4, 0, NULL, 0, 2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  cr_assert_eq(vkp_node_int(&g->nodes[0], "axis"), 2);
  cr_assert_eq(vkp_node_int(&g->nodes[0], "length"), 10);
  expect_shape(value(g, "y"), 4, SH(2, 3, 6, 2));
  vkp_graph_destroy(g);
  vkp_attr_t b[1] = {int_attr("length", 7)};  // axis 1 by default
  g = graph2(VKP_OP_DFT, SH(2, 3, 10, 2), 4, 0, NULL, 0, 1, b);
  VKP_TEST_OK(vkp_graph_validate(g));
  expect_shape(value(g, "y"), 4, SH(2, 7, 10, 2));
  vkp_graph_destroy(g);
}

Test(ops_signal, dft_errors, .timeout = 30) {
  expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 3), 3, 0, NULL, 0, 0, NULL),
                 "must end in a dim of 1 (real) or 2 (complex)");
  vkp_attr_t last = int_attr("axis", 2);
  expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &last),
                 "attribute 'axis' is 2");
  vkp_attr_t neg = int_attr("length", -3);
  expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &neg),
                 "attribute 'length' is -3");
  vkp_attr_t flag = int_attr("inverse", 2);
  expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &flag),
                 "attribute 'inverse' is 2; must be 0 or 1");
}

Test(ops_signal, stft_shapes_and_errors, .timeout = 30) {
  vkp_attr_t step = int_attr("frame_step", 4);
  vkp_graph_t *g = graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 1,
                          &step);
  VKP_TEST_OK(vkp_graph_validate(g));
  cr_assert_eq(vkp_node_int(&g->nodes[0], "frame_length"), 16);
  expect_shape(value(g, "y"), 4, SH(2, 9, 9, 2));
  vkp_graph_destroy(g);
  expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, 0, NULL, 0, 1, &step),
                 "give a window or frame_length");
  vkp_attr_t mismatch[2] = {step, int_attr("frame_length", 12)};
  expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 2,
                        mismatch),
                 "window 'x1' [16] must be 1-D with frame_length entries");
  vkp_attr_t long_frame[2] = {step, int_attr("frame_length", 64)};
  expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, 0, NULL, 0, 2, long_frame),
                 "frame length 64 exceeds the signal's 50 samples");
  vkp_attr_t zero = int_attr("frame_step", 0);
  expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 1,
                        &zero),
                 "attribute 'frame_step' is 0");
}

Test(ops_signal, det_shapes_and_errors, .timeout = 30) {
  vkp_graph_t *g = graph2(VKP_OP_DET, SH(3, 2, 4, 4), 4, 0, NULL, 0, 0, NULL);
  VKP_TEST_OK(vkp_graph_validate(g));
  expect_shape(value(g, "y"), 2, SH(3, 2));
  vkp_graph_destroy(g);
  expect_invalid(graph2(VKP_OP_DET, SH(3, 4, 5), 3, 0, NULL, 0, 0, NULL),
                 "must end in a square matrix");
}

Test(ops_signal, max_unpool_canonical_form_and_errors, .timeout = 30) {
  vkp_attr_t a[3] = {ints_attr("kernel_shape", SH(2, 2), 2), ints_attr("strides", SH(2, 2), 2),
                     ints_attr("pads", SH(1, 0, 0, 1), 4)};
  vkp_graph_t *g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64,
                          SH(1, 2, 3, 3), 4, 3, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  expect_shape(value(g, "y"), 4, SH(1, 2, 5, 5));
  const int64_t *shape;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[0], "output_shape", &shape), 4);
  cr_assert(shape[2] == 5 && shape[3] == 5);
  vkp_graph_destroy(g);
  // output_shape: pads ignored (written back as zeros).
  vkp_attr_t b[4] = {a[0], a[1], a[2], ints_attr("output_shape", SH(1, 2, 7, 6), 4)};
  g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64, SH(1, 2, 3, 3), 4, 4, b);
  VKP_TEST_OK(vkp_graph_validate(g));
  expect_shape(value(g, "y"), 4, SH(1, 2, 7, 6));
  const int64_t *pads;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[0], "pads", &pads), 4);
  cr_assert(pads[0] == 0 && pads[3] == 0);
  vkp_graph_destroy(g);
  vkp_attr_t small[3] = {a[0], a[1], ints_attr("output_shape", SH(1, 2, 5, 6), 4)};
  expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64,
                        SH(1, 2, 3, 3), 4, 3, small),
                 "output_shape entry 2 is 5; the unpooled shape needs at least 6");
  expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64,
                        SH(1, 2, 3, 2), 4, 2, a),
                 "indices 'x1' [1, 2, 3, 2] must have the shape of 'x' [1, 2, 3, 3]");
  expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64,
                        SH(1, 2, 3, 3), 4, 1, &a[1]),
                 "kernel_shape");
}

// An index past the unpooled elements is a run-time OUT_OF_RANGE on ref.
Test(ops_signal, max_unpool_index_out_of_range, .timeout = 30) {
  vkp_attr_t a[2] = {ints_attr("kernel_shape", SH(2), 1), ints_attr("strides", SH(2), 1)};
  vkp_graph_t *g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 1, 2), 3, VKP_DTYPE_INT64, SH(1, 1, 2), 3,
                          2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  float xs[2] = {1.5f, -2.0f};
  int64_t is[2] = {1, 4};
  vkp_tensor_t x, idx, y;
  VKP_TEST_OK(vkp_tensor_init(&y, VKP_DTYPE_FLOAT32, 3, SH(1, 1, 4)));
  VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 3, SH(1, 1, 2), xs));
  VKP_TEST_OK(vkp_tensor_init_view(&idx, VKP_DTYPE_INT64, 3, SH(1, 1, 2), is));
  const vkp_tensor_t *in[2] = {&x, &idx};
  vkp_status_t st = vkp_node_eval(&g->nodes[0], in, &y);
  cr_assert(vkp_status_is(st, VKP_STATUS_OUT_OF_RANGE), "%s",
            st ? vkp_status_message(st) : "ran");
  cr_assert(strstr(vkp_status_message(st), "index 4"), "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_tensor_deinit(&y);
  vkp_graph_destroy(g);
}

// Scales whose output lengths or antialiasing windows do not fit are
// refused naming the dim (found by fuzzing: a scale of 1e300 reached a
// double-to-int64 conversion past its range).
Test(ops_signal, resize_scale_limits, .timeout = 30) {
  const double huge[4] = {1, 1, 1e300, 1}, tiny[4] = {1, 1, 1e-7, 1};
  vkp_attr_t a[3] = {{.name = "scales", .kind = VKP_ATTR_FLOATS, .floats = huge, .count = 4},
                     {.name = "mode", .kind = VKP_ATTR_STRING, .s = "linear"},
                     int_attr("antialias", 1)};
  expect_invalid(graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 2, a),
                 "dim 2 resizes to");
  a[0].floats = tiny;
  expect_invalid(graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 3, a),
                 "antialiased downsampling of dim 2");
  // The same scale without antialiasing is an ordinary (empty) resize.
  vkp_graph_t *g = graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 2, a);
  VKP_TEST_OK(vkp_graph_validate(g));
  vkp_graph_destroy(g);
}
