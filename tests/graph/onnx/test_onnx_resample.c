// SPDX-License-Identifier: Apache-2.0
// graph/onnx_resample.c: the Pad, Resize, Upsample, Tile, Expand, Trilu,
// EyeLike, DepthToSpace and SpaceToDepth mappers in the forms the node tests
// leave out (attribute forms before opset 11, opset 18's axes, antialias and
// keep_aspect_ratio_policy), against NumPy (gen_models.py models_resample)
// on "ref" and "cpu".
// One .timeout for every test in the file (Criterion 2.4.1, see test_onnx.c).
#include <criterion/criterion.h>
#include <string.h>

#include "tests/graph/onnx/onnx_test_util.h"
#include "support/test_support.h"

static void vkp__check(const char *name, vkp_op_t op, int count) {
  char file[128];
  snprintf(file, sizeof file, "%s.onnx", name);
  vkp_graph_t *g = onnx_load_model(file);
  cr_assert_eq(onnx_count_op(g, op), count, "%s: %d %s nodes", name, onnx_count_op(g, op),
               vkp_op_name(op));
  onnx_run_and_compare(g, name, 1e-5, 1e-6);
  onnx_run_and_compare_on(g, name, "cpu", 2, 1e-4, 1e-5);
  vkp_graph_destroy(g);
}

// Opset 7: Pad's attributes (reflect), Upsample's scales attribute.
Test(onnx_resample, opset7_attributes, .timeout = 120) {
  vkp__check("resample_opset7", VKP_OP_PAD, 1);
  vkp__check("resample_opset7", VKP_OP_RESIZE, 1);
}

// Upsample-9 (linear) and Resize-10 (nearest) with scales initializers.
Test(onnx_resample, opset9_upsample_and_opset10_resize, .timeout = 120) {
  vkp__check("resample_opset9", VKP_OP_RESIZE, 1);
  vkp__check("resample_opset10", VKP_OP_RESIZE, 1);
}

// Opset 18: Pad's axes input, Resize's axes, keep_aspect_ratio_policy and
// antialias.
Test(onnx_resample, opset18_axes_policy_antialias, .timeout = 120) {
  vkp__check("resample_opset18", VKP_OP_RESIZE, 2);
}

// Trilu with a k input, Tile, Expand, EyeLike with a dtype, DepthToSpace
// CRD, SpaceToDepth: constant parameters become attributes.
Test(onnx_resample, layout_ops, .timeout = 120) {
  vkp__check("resample_layout", VKP_OP_TRILU, 1);
  vkp__check("resample_layout", VKP_OP_EYE_LIKE, 1);
  vkp__check("resample_blocks", VKP_OP_DEPTH_TO_SPACE, 1);
  vkp__check("resample_blocks", VKP_OP_SPACE_TO_DEPTH, 1);
}

// Sizes from a graph input decide the output shape: refused, saying so.
Test(onnx_resample, runtime_sizes_are_refused, .timeout = 60) {
  char path[1024];
  onnx_model_path(path, sizeof path, "resize_runtime_sizes.onnx");
  vkp_graph_t *g = NULL;
  vkp_status_t st = vkp_graph_load(path, &g);
  cr_assert_null(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "sizes (input 3, 'sizes') must be known at "
                                           "import time"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
}
