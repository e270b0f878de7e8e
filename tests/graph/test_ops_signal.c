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

#include "support/test_graph.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"

// Node "n" of `op` on input x (`rank`, `shape`) and, when shape1 is not
// NULL, a second input x1 of `dt1`; output y.
static vkp_graph_t *graph2(vkp_op_t op, const int64_t *shape, int32_t rank,
                           vkp_dtype_t dt1, const int64_t *shape1, int32_t rank1,
                           int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g = g_new("signal");
  g_in(g, "x", VKP_DTYPE_FLOAT32, rank, shape);
  if (shape1) g_in(g, "x1", dt1, rank1, shape1);
  const char *in[2] = {"x", "x1"}, *out[1] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", op, shape1 ? 2 : 1, in, 1, out, n_attrs, attrs, NULL));
  g_out(g, "y");
  return g;
}

static void expect_shape(const vkp_value_t *v, int32_t rank, const int64_t *shape) {
  cr_assert_eq(v->rank, rank);
  for (int32_t d = 0; d < rank; ++d)
    cr_assert_eq(v->shape[d], shape[d], "dim %d: %lld", (int)d, (long long)v->shape[d]);
}

Test(ops_signal, dft_canonical_form, .timeout = 30) {
  vkp_attr_t a[2] = {at_i("axis", -2), at_i("onesided", 1)};
  vkp_graph_t *g = graph2(VKP_OP_DFT, SH(2, 3, 10, 1), 4, 0, NULL, 0, 2, a);
  g_validate(g);
  cr_assert_eq(vkp_node_int(&g->nodes[0], "axis"), 2);
  cr_assert_eq(vkp_node_int(&g->nodes[0], "length"), 10);
  expect_shape(g_value(g, "y"), 4, SH(2, 3, 6, 2));
  vkp_graph_destroy(g);
  vkp_attr_t b[1] = {at_i("length", 7)};  // axis 1 by default
  g = graph2(VKP_OP_DFT, SH(2, 3, 10, 2), 4, 0, NULL, 0, 1, b);
  g_validate(g);
  expect_shape(g_value(g, "y"), 4, SH(2, 7, 10, 2));
  vkp_graph_destroy(g);
}

Test(ops_signal, dft_errors, .timeout = 30) {
  g_expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 3), 3, 0, NULL, 0, 0, NULL), VKP_STATUS_INVALID_ARGUMENT, "n", "must end in a dim of 1 (real) or 2 (complex)", NULL);
  vkp_attr_t last = at_i("axis", 2);
  g_expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &last), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'axis' is 2", NULL);
  vkp_attr_t neg = at_i("length", -3);
  g_expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &neg), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'length' is -3", NULL);
  vkp_attr_t flag = at_i("inverse", 2);
  g_expect_invalid(graph2(VKP_OP_DFT, SH(2, 8, 2), 3, 0, NULL, 0, 1, &flag), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'inverse' is 2; must be 0 or 1", NULL);
}

Test(ops_signal, stft_shapes_and_errors, .timeout = 30) {
  vkp_attr_t step = at_i("frame_step", 4);
  vkp_graph_t *g = graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 1,
                          &step);
  g_validate(g);
  cr_assert_eq(vkp_node_int(&g->nodes[0], "frame_length"), 16);
  expect_shape(g_value(g, "y"), 4, SH(2, 9, 9, 2));
  vkp_graph_destroy(g);
  g_expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, 0, NULL, 0, 1, &step), VKP_STATUS_INVALID_ARGUMENT, "n", "give a window or frame_length", NULL);
  vkp_attr_t mismatch[2] = {step, at_i("frame_length", 12)};
  g_expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 2, mismatch), VKP_STATUS_INVALID_ARGUMENT, "n", "window 'x1' [16] must be 1-D with frame_length entries", NULL);
  vkp_attr_t long_frame[2] = {step, at_i("frame_length", 64)};
  g_expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, 0, NULL, 0, 2, long_frame), VKP_STATUS_INVALID_ARGUMENT, "n", "frame length 64 exceeds the signal's 50 samples", NULL);
  vkp_attr_t zero = at_i("frame_step", 0);
  g_expect_invalid(graph2(VKP_OP_STFT, SH(2, 50, 1), 3, VKP_DTYPE_FLOAT32, SH(16), 1, 1, &zero), VKP_STATUS_INVALID_ARGUMENT, "n", "attribute 'frame_step' is 0", NULL);
}

Test(ops_signal, det_shapes_and_errors, .timeout = 30) {
  vkp_graph_t *g = graph2(VKP_OP_DET, SH(3, 2, 4, 4), 4, 0, NULL, 0, 0, NULL);
  g_validate(g);
  expect_shape(g_value(g, "y"), 2, SH(3, 2));
  vkp_graph_destroy(g);
  g_expect_invalid(graph2(VKP_OP_DET, SH(3, 4, 5), 3, 0, NULL, 0, 0, NULL), VKP_STATUS_INVALID_ARGUMENT, "n", "must end in a square matrix", NULL);
}

Test(ops_signal, max_unpool_canonical_form_and_errors, .timeout = 30) {
  vkp_attr_t a[3] = {at_is("kernel_shape", 2, SH(2, 2)), at_is("strides", 2, SH(2, 2)),
                     at_is("pads", 4, SH(1, 0, 0, 1))};
  vkp_graph_t *g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64,
                          SH(1, 2, 3, 3), 4, 3, a);
  g_validate(g);
  expect_shape(g_value(g, "y"), 4, SH(1, 2, 5, 5));
  const int64_t *shape;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[0], "output_shape", &shape), 4);
  cr_assert(shape[2] == 5 && shape[3] == 5);
  vkp_graph_destroy(g);
  // output_shape: pads ignored (written back as zeros).
  vkp_attr_t b[4] = {a[0], a[1], a[2], at_is("output_shape", 4, SH(1, 2, 7, 6))};
  g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64, SH(1, 2, 3, 3), 4, 4, b);
  g_validate(g);
  expect_shape(g_value(g, "y"), 4, SH(1, 2, 7, 6));
  const int64_t *pads;
  cr_assert_eq(vkp_node_attr_ints(&g->nodes[0], "pads", &pads), 4);
  cr_assert(pads[0] == 0 && pads[3] == 0);
  vkp_graph_destroy(g);
  vkp_attr_t small[3] = {a[0], a[1], at_is("output_shape", 4, SH(1, 2, 5, 6))};
  g_expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64, SH(1, 2, 3, 3), 4, 3, small), VKP_STATUS_INVALID_ARGUMENT, "n", "output_shape entry 2 is 5; the unpooled shape needs at least 6", NULL);
  g_expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64, SH(1, 2, 3, 2), 4, 2, a), VKP_STATUS_INVALID_ARGUMENT, "n", "indices 'x1' [1, 2, 3, 2] must have the shape of 'x' [1, 2, 3, 3]", NULL);
  g_expect_invalid(graph2(VKP_OP_MAX_UNPOOL, SH(1, 2, 3, 3), 4, VKP_DTYPE_INT64, SH(1, 2, 3, 3), 4, 1, &a[1]), VKP_STATUS_INVALID_ARGUMENT, "n", "kernel_shape", NULL);
}

// An index past the unpooled elements is a run-time OUT_OF_RANGE on ref.
Test(ops_signal, max_unpool_index_out_of_range, .timeout = 30) {
  vkp_attr_t a[2] = {at_is("kernel_shape", 1, SH(2)), at_is("strides", 1, SH(2))};
  vkp_graph_t *g = graph2(VKP_OP_MAX_UNPOOL, SH(1, 1, 2), 3, VKP_DTYPE_INT64, SH(1, 1, 2), 3,
                          2, a);
  g_validate(g);
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
                     at_i("antialias", 1)};
  g_expect_invalid(graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 2, a), VKP_STATUS_INVALID_ARGUMENT, "n", "dim 2 resizes to", NULL);
  a[0].floats = tiny;
  g_expect_invalid(graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 3, a), VKP_STATUS_INVALID_ARGUMENT, "n", "antialiased downsampling of dim 2", NULL);
  // The same scale without antialiasing is an ordinary (empty) resize.
  vkp_graph_t *g = graph2(VKP_OP_RESIZE, SH(1, 2, 8, 8), 4, 0, NULL, 0, 2, a);
  g_validate(g);
  vkp_graph_destroy(g);
}
