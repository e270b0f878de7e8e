// SPDX-License-Identifier: Apache-2.0
// codegen/c/emit_bounded.c: bounded values (a static bound, the extent known
// at run time) in generated C. A graph reading a bounded input through every
// kind of consumer the rules of graph/bounded.h allow, and making bounded
// values of its own (non_zero, unique, top_k), runs on cpu at every extent
// from 0 to its bound with fresh random data and matches ref bit for bit
// (float sums within 1e-5), from one compiled object; the source compiles
// warning-free; a static graph's source is unchanged by the bounded paths;
// run-time errors (extents that disagree) are reported naming the node.
#include "codegen/c/emit.h"
#include "support/cpu_check.h"
#include "runtime/cpu/compile.h"

enum { ROWS = 3, BOUND = 5 };

// x [3, <=5] float32 (bounded along axis 1) through every consumer kind,
// plus the bounded values non_zero, unique and top_k make.
static vkp_graph_t *bounded_graph(void) {
  vkp_graph_t *g = g_new("bounded_ops");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(ROWS, BOUND));
  VKP_TEST_OK(vkp_graph_set_input_bounded(g, "x", 1));
  g_const_data(g, "rows_idx", VKP_DTYPE_INT64, 1, SH(2), SH(2, -3));
  g_const_data(g, "nd_idx", VKP_DTYPE_INT64, 2, SH(2, 1), SH(1, 0));
  float two = 2.0f, zero = 0.0f;
  g_const_data(g, "two", VKP_DTYPE_FLOAT32, 0, NULL, &two);
  g_const_data(g, "zero", VKP_DTYPE_FLOAT32, 0, NULL, &zero);
  vkp_attr_t ax0[] = {at_i("axis", 0)}, ax1[] = {at_i("axis", 1)};
  // Concatenation along the bounded axis and along the other one.
  g_node(g, "cat0", VKP_OP_CONCAT, "x,x", "cat0", 1, ax0);
  g_node(g, "cat1", VKP_OP_CONCAT, "x,x", "cat1", 1, ax1);
  // Gathers: rows of bounded data by static indices; tuples (gather_nd).
  g_node(g, "rows", VKP_OP_GATHER, "x,rows_idx", "rows", 1, ax0);
  g_node(g, "nd", VKP_OP_GATHER_ND, "x,nd_idx", "nd", 0, NULL);
  // Selection over the bounded axis (static result) and beside it.
  vkp_attr_t am[] = {at_i("axis", 1), at_i("keepdims", 0)};
  g_node(g, "am", VKP_OP_ARG_MAX, "x", "am", 2, am);
  vkp_attr_t an[] = {at_i("axis", 0), at_i("keepdims", 1), at_i("select_last_index", 1)};
  g_node(g, "an", VKP_OP_ARG_MIN, "x", "an", 3, an);
  // Reductions over it, beside it, and the scratch-using log_sum_exp.
  vkp_attr_t r1[] = {at_is("axes", 1, SH(1)), at_i("keepdims", 1)};
  g_node(g, "mean", VKP_OP_REDUCE_MEAN, "x", "mean", 2, r1);
  vkp_attr_t r0[] = {at_is("axes", 1, SH(0)), at_i("keepdims", 0)};
  g_node(g, "rmax", VKP_OP_REDUCE_MAX, "x", "rmax", 2, r0);
  vkp_attr_t r0k[] = {at_is("axes", 1, SH(0)), at_i("keepdims", 1)};
  g_node(g, "lse", VKP_OP_REDUCE_LOG_SUM_EXP, "x", "lse", 2, r0k);
  // Layout: transpose, and views (unsqueeze, squeeze, flatten, reshape -1)
  // ending in outputs (copied at their run-time size).
  vkp_attr_t perm[] = {at_is("perm", 2, SH(1, 0))};
  g_node(g, "t", VKP_OP_TRANSPOSE, "x", "t", 1, perm);
  vkp_attr_t axes0[] = {at_is("axes", 1, SH(0))};
  g_node(g, "unsq", VKP_OP_UNSQUEEZE, "x", "x3", 1, axes0);
  g_node(g, "sq", VKP_OP_SQUEEZE, "x3", "back", 1, axes0);
  vkp_attr_t fl[] = {at_i("axis", 0)};
  g_node(g, "flat", VKP_OP_FLATTEN, "x", "flat", 1, fl);
  vkp_attr_t rs[] = {at_is("shape", 1, SH(-1))};
  g_node(g, "rs", VKP_OP_RESHAPE, "t", "tflat", 1, rs);
  // A fused elementwise tree with a broadcast scalar: |x| * 2 via where.
  g_node(g, "pos", VKP_OP_GREATER, "x,zero", "pos", 0, NULL);
  g_node(g, "neg", VKP_OP_NEG, "x", "negx", 0, NULL);
  g_node(g, "absx", VKP_OP_WHERE, "pos,x,negx", "absx", 0, NULL);
  g_node(g, "dbl", VKP_OP_MUL, "absx,two", "dbl", 0, NULL);
  // Producers: non_zero of the positive mask, unique of the truncated
  // values (few distinct), top_k beside the bounded axis.
  g_node(g, "nz", VKP_OP_NON_ZERO, "pos", "nz", 0, NULL);
  vkp_attr_t to[] = {at_s("to", "int32")};
  g_node(g, "scaled", VKP_OP_MUL, "x,two", "x2", 0, NULL);
  g_node(g, "trunc", VKP_OP_CAST, "x2", "xi", 1, to);
  vkp_attr_t us[] = {at_i("sorted", 0)};
  g_node(g, "uniq", VKP_OP_UNIQUE, "xi", "uy,uidx,uinv,ucnt", 1, us);
  vkp_attr_t tk[] = {at_i("k", 2), at_i("axis", 0), at_i("largest", 0)};
  g_node(g, "tk", VKP_OP_TOP_K, "x", "tv,ti", 3, tk);
  g_node(g, "shp", VKP_OP_SHAPE, "x", "shp", 0, NULL);
  g_out(g, "cat0,cat1,rows,nd,am,an,mean,rmax,lse,t,back,flat,tflat,dbl,nz,uy,uidx,uinv,"
           "ucnt,tv,ti,shp,x");
  g_validate(g);
  return g;
}

enum { COLS = 8 };

// x [<=5, 8] float32 bounded along its rows (axis 0) through the ops that
// take a varying row / batch count (VKP__BOUND_BATCH), slices along and
// beside the bounded axis, non_max_suppression of boxes made from it, a
// bounded scatter_elements and roi_align over regions made from it.
static vkp_graph_t *rows_graph(void) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = g_new("bounded_rows");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, SH(BOUND, COLS));
  VKP_TEST_OK(vkp_graph_set_input_bounded(g, "x", 0));
  // gemm with a bias, plain and with B transposed.
  g_const(g, &rng, "w", 2, SH(COLS, 6), -1.0f, 1.0f);
  g_const(g, &rng, "wt", 2, SH(6, COLS), -1.0f, 1.0f);
  g_const(g, &rng, "c", 1, SH(6), -1.0f, 1.0f);
  vkp_attr_t gm[] = {at_f("alpha", 0.5), at_f("beta", 2.0)};
  g_node(g, "gm", VKP_OP_GEMM, "x,w,c", "gm", 2, gm);
  vkp_attr_t gmt[] = {at_i("transB", 1)};
  g_node(g, "gmt", VKP_OP_GEMM, "x,wt", "gmt", 1, gmt);
  // matmul: 2-D, batched over the varying axis (B shared), and the rows of
  // a broadcast batch against B's two.
  g_const(g, &rng, "b2", 2, SH(COLS, 3), -1.0f, 1.0f);
  g_node(g, "mm", VKP_OP_MATMUL, "x,b2", "mm", 0, NULL);
  vkp_attr_t r3[] = {at_is("shape", 3, SH(-1, 2, 4))};
  g_node(g, "x3", VKP_OP_RESHAPE, "x", "x3", 1, r3);
  g_const(g, &rng, "b3", 3, SH(1, 4, 3), -1.0f, 1.0f);
  g_node(g, "mm3", VKP_OP_MATMUL, "x3,b3", "mm3", 0, NULL);
  vkp_attr_t u0[] = {at_is("axes", 1, SH(0))};
  g_node(g, "xu", VKP_OP_UNSQUEEZE, "x", "xu", 1, u0);
  g_const(g, &rng, "bb", 3, SH(2, COLS, 3), -1.0f, 1.0f);
  g_node(g, "mmb", VKP_OP_MATMUL, "xu,bb", "mmb", 0, NULL);
  // matmul with both operands, and with only B, bounded along the batch.
  vkp_attr_t p021[] = {at_is("perm", 3, SH(0, 2, 1))};
  g_node(g, "x3t", VKP_OP_TRANSPOSE, "x3", "x3t", 1, p021);
  g_node(g, "mmq", VKP_OP_MATMUL, "x3,x3t", "mmq", 0, NULL);
  g_const(g, &rng, "a2", 2, SH(3, 2), -1.0f, 1.0f);
  g_node(g, "mms", VKP_OP_MATMUL, "a2,x3", "mms", 0, NULL);
  // Row-wise normalisations.
  vkp_attr_t ax1[] = {at_i("axis", 1)};
  g_node(g, "sm", VKP_OP_SOFTMAX, "x", "sm", 1, ax1);
  g_node(g, "lsm", VKP_OP_LOG_SOFTMAX, "x", "lsm", 1, ax1);
  g_node(g, "hm", VKP_OP_HARDMAX, "x", "hm", 1, ax1);
  g_const(g, &rng, "lns", 1, SH(COLS), 0.5f, 1.5f);
  g_const(g, &rng, "lnb", 1, SH(COLS), -1.0f, 1.0f);
  vkp_attr_t ln[] = {at_i("axis", 1), at_f("epsilon", 1e-5)};
  g_node(g, "ln", VKP_OP_LAYER_NORM, "x,lns,lnb", "ln", 2, ln);
  // Slices: along the bounded axis (a step, an end past the bound) and
  // beside it.
  vkp_attr_t s0[] = {at_is("starts", 1, SH(1)), at_is("ends", 1, SH(4)),
                     at_is("axes", 1, SH(0)), at_is("steps", 1, SH(2))};
  g_node(g, "sl0", VKP_OP_SLICE, "x", "sl0", 4, s0);
  vkp_attr_t s2[] = {at_is("starts", 1, SH(2)), at_is("ends", 1, SH(100)),
                     at_is("axes", 1, SH(0))};
  g_node(g, "sl2", VKP_OP_SLICE, "x", "sl2", 3, s2);
  vkp_attr_t s1[] = {at_is("starts", 1, SH(2)), at_is("ends", 1, SH(7)),
                     at_is("axes", 1, SH(1)), at_is("steps", 1, SH(2))};
  g_node(g, "sl1", VKP_OP_SLICE, "x", "sl1", 4, s1);
  // Images [<=5, 2, 2, 2]: convolution, pooling, instance_norm.
  vkp_attr_t r4[] = {at_is("shape", 4, SH(-1, 2, 2, 2))};
  g_node(g, "img", VKP_OP_RESHAPE, "x", "img", 1, r4);
  g_const(g, &rng, "cw", 4, SH(3, 2, 2, 2), -1.0f, 1.0f);
  g_const(g, &rng, "cb", 1, SH(3), -1.0f, 1.0f);
  vkp_attr_t cv[] = {at_is("pads", 4, SH(1, 1, 1, 1))};
  g_node(g, "cv", VKP_OP_CONV2D, "img,cw,cb", "cv", 1, cv);
  vkp_attr_t pl[] = {at_is("kernel_shape", 2, SH(2, 2)), at_is("pads", 4, SH(1, 0, 0, 1))};
  g_node(g, "mp", VKP_OP_MAX_POOL2D, "img", "mp", 2, pl);
  g_node(g, "ap", VKP_OP_AVG_POOL2D, "img", "ap", 2, pl);
  g_node(g, "gap", VKP_OP_GLOBAL_AVG_POOL, "img", "gap", 0, NULL);
  g_const(g, &rng, "ins", 1, SH(2), 0.5f, 1.5f);
  g_const(g, &rng, "inb", 1, SH(2), -1.0f, 1.0f);
  g_node(g, "in", VKP_OP_INSTANCE_NORM, "img,ins,inb", "in", 0, NULL);
  // non_max_suppression: boxes [1, <=10, 4] (random corners), scores their
  // last coordinates [1, 1, <=10]; at most 4 kept, IoU above 0.3, scores
  // above 0.
  vkp_attr_t rb[] = {at_is("shape", 3, SH(1, -1, 4))};
  g_node(g, "boxes", VKP_OP_RESHAPE, "x", "boxes", 1, rb);
  vkp_attr_t s3[] = {at_is("starts", 1, SH(3)), at_is("ends", 1, SH(4)),
                     at_is("axes", 1, SH(2))};
  g_node(g, "bsum", VKP_OP_SLICE, "boxes", "bsum", 3, s3);
  vkp_attr_t pt[] = {at_is("perm", 3, SH(0, 2, 1))};
  g_node(g, "scores", VKP_OP_TRANSPOSE, "bsum", "scores", 1, pt);
  g_const_data(g, "max_out", VKP_DTYPE_INT64, 1, SH(1), SH(4));
  float iou = 0.3f, thr = 0.0f;
  g_const_data(g, "iou", VKP_DTYPE_FLOAT32, 1, SH(1), &iou);
  g_const_data(g, "thr", VKP_DTYPE_FLOAT32, 1, SH(1), &thr);
  g_node(g, "nms", VKP_OP_NON_MAX_SUPPRESSION, "boxes,scores,max_out,iou,thr", "nms", 0,
         NULL);
  // scatter_elements of x into itself along axis 1 (adding), at indices
  // made from it: everything bounded alike.
  float three = 3.0f;
  g_const_data(g, "three", VKP_DTYPE_FLOAT32, 0, NULL, &three);
  g_node(g, "xa", VKP_OP_ABS, "x", "xa", 0, NULL);
  g_node(g, "x3f", VKP_OP_MUL, "xa,three", "x3f", 0, NULL);
  vkp_attr_t ci[] = {at_s("to", "int64")};
  g_node(g, "sidx", VKP_OP_CAST, "x3f", "sidx", 1, ci);
  vkp_attr_t se[] = {at_i("axis", 1), at_s("reduction", "add")};
  g_node(g, "sc", VKP_OP_SCATTER_ELEMENTS, "x,sidx,x", "sc", 2, se);
  // roi_align of a static feature map over regions [<=10, 4] made from x
  // (batch indices 0, bounded alike).
  g_const(g, &rng, "fmap", 4, SH(1, 2, 4, 4), -1.0f, 1.0f);
  vkp_attr_t rr[] = {at_is("shape", 2, SH(-1, 4))};
  g_node(g, "rois", VKP_OP_RESHAPE, "x", "rois", 1, rr);
  float zf = 0.0f;
  g_const_data(g, "zf", VKP_DTYPE_FLOAT32, 0, NULL, &zf);
  g_node(g, "rz", VKP_OP_MUL, "rois,zf", "rz", 0, NULL);
  vkp_attr_t rmin[] = {at_is("axes", 1, SH(1)), at_i("keepdims", 0)};
  g_node(g, "rmin", VKP_OP_REDUCE_MIN, "rz", "rmin", 2, rmin);
  g_node(g, "bi", VKP_OP_CAST, "rmin", "bi", 1, ci);
  vkp_attr_t ra[] = {at_i("output_height", 2), at_i("output_width", 2),
                     at_i("sampling_ratio", 2), at_f("spatial_scale", 1.5)};
  g_node(g, "ra", VKP_OP_ROI_ALIGN, "fmap,rois,bi", "ra", 4, ra);
  static const char *const outs[] = {"gm",  "gmt", "mm",  "mm3", "mmb", "mmq", "mms",
                                     "sm",  "lsm", "hm",  "ln",  "sl0", "sl2", "sl1",
                                     "cv",  "mp",  "ap",  "gap", "in",  "nms", "sc",
                                     "ra"};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; ++i)
    g_out(g, outs[i]);
  g_validate(g);
  return g;
}

// Equal shapes and elements: exact, or within rtol for float32.
static void check_same(const vkp_tensor_t *got, const vkp_tensor_t *want, const char *name,
                       int64_t extent, uint64_t seed) {
  cr_assert_eq(got->dtype, want->dtype, "'%s'", name);
  cr_assert_eq(got->rank, want->rank, "'%s'", name);
  for (int32_t d = 0; d < got->rank; ++d)
    cr_assert_eq(got->shape[d], want->shape[d],
                 "'%s' at extent %lld: dim %d is %lld on cpu, %lld on ref (seed %llu)", name,
                 (long long)extent, (int)d, (long long)got->shape[d],
                 (long long)want->shape[d], (unsigned long long)seed);
  if (got->dtype == VKP_DTYPE_FLOAT32) {
    char msg[512];
    cr_assert(vkp_test_allclose(got, want, 1e-5, 1e-6, msg, sizeof msg),
              "'%s' at extent %lld: %s (seed %llu)", name, (long long)extent, msg,
              (unsigned long long)seed);
  } else {
    cr_assert(memcmp(got->data, want->data, vkp_tensor_nbytes(want)) == 0,
              "'%s' at extent %lld differs from ref (seed %llu)", name, (long long)extent,
              (unsigned long long)seed);
  }
}

// x [d0, d1] with dim `axis` the bounded one (d0 or d1 its bound): every
// extent from 0 to the bound on cpu against ref.
static void run_extents_of(vkp_graph_t *(*build)(void), int64_t d0, int64_t d1, int axis,
                           int32_t threads) {
  vkp_test_rng_t rng;
  uint64_t seed = vkp_test_rng_init(&rng);
  vkp_graph_t *g = build();
  int64_t bound = axis ? d1 : d0, other = axis ? d0 : d1;
  vkp_registry_t *reg;
  const char *names[] = {"cpu", "ref"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 2, &reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu"), *ref = vkp_registry_find(reg, "ref");
  for (int32_t k = 0; k < g->n_nodes; ++k) {
    char reason[512] = "";
    cr_assert(vkp_target_supports(cpu, g, &g->nodes[k], reason, sizeof reason),
              "cpu refuses '%s': %s", g->nodes[k].name, reason);
  }
  // One compiled object serves every extent.
  vkp_compile_options_t opt = {.threads = threads};
  vkp_blob_t blob = {0};
  VKP_TEST_OK(cpu->vtable->compiler.compile(cpu, g, &opt, &blob));
  vkp_stage_t *stage = NULL;
  VKP_TEST_OK(cpu->vtable->stage.load(cpu, g, blob.data, blob.size, &stage));
  float data[64];
  cr_assert_leq(d0 * d1, 64);
  for (int64_t e = 0; e <= bound; ++e) {
    for (int i = 0; i < d0 * d1; ++i) {
      // Some exact zeros (non_zero), repeated truncated values (unique).
      float v = vkp_test_rng_uniform(&rng, -2.0f, 2.0f);
      data[i] = vkp_test_rng_below(&rng, 4) == 0 ? 0.0f : v;
    }
    vkp_tensor_t x;
    VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 2,
                                     axis ? SH(other, e) : SH(e, other), data));
    vkp_tensor_t want[32], got[32];
    cr_assert_leq(g->n_outputs, 32);
    VKP_TEST_OK(vkp_target_run_graph(ref, g, NULL, &x, want));
    for (int32_t i = 0; i < g->n_outputs; ++i) {
      const vkp_value_t *v = &g->values[g->outputs[i]];
      VKP_TEST_OK(vkp_tensor_init(&got[i], v->dtype, v->rank, v->shape));
    }
    VKP_TEST_OK(cpu->vtable->stage.run(stage, &x, got));
    for (int32_t i = 0; i < g->n_outputs; ++i) {
      check_same(&got[i], &want[i], g->values[g->outputs[i]].name, e, seed);
      // Back at its bound for the next run's room.
      vkp_tensor_deinit(&got[i]);
      vkp_tensor_deinit(&want[i]);
    }
  }
  // Past the bound: refused before any code runs.
  vkp_tensor_t x, out[32];
  float big[80] = {0};
  VKP_TEST_OK(vkp_tensor_init_view(&x, VKP_DTYPE_FLOAT32, 2,
                                   axis ? SH(other, bound + 1) : SH(bound + 1, other), big));
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    const vkp_value_t *v = &g->values[g->outputs[i]];
    VKP_TEST_OK(vkp_tensor_init(&out[i], v->dtype, v->rank, v->shape));
  }
  vkp_status_t st = cpu->vtable->stage.run(stage, &x, out);
  cr_assert(vkp_status_is(st, VKP_STATUS_INVALID_ARGUMENT), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), axis ? "[3, <=5]" : "[<=5, 8]"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  for (int32_t i = 0; i < g->n_outputs; ++i) vkp_tensor_deinit(&out[i]);
  cpu->vtable->stage.unload(stage);
  vkp_blob_deinit(&blob);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}

static void run_extents(int32_t threads) {
  run_extents_of(bounded_graph, ROWS, BOUND, 1, threads);
}

Test(emit_bounded, every_extent_matches_ref, .timeout = 240) { run_extents(1); }

Test(emit_bounded, every_extent_matches_ref_threads, .timeout = 240) { run_extents(3); }

// Rows / batches that vary (gemm, matmul, softmax family, layer_norm,
// convolution, pooling, instance_norm), slices and non_max_suppression.
Test(emit_bounded, rows_match_ref, .timeout = 240) {
  run_extents_of(rows_graph, BOUND, COLS, 0, 1);
}

Test(emit_bounded, rows_match_ref_threads, .timeout = 240) {
  run_extents_of(rows_graph, BOUND, COLS, 0, 3);
}

// The bounded paths compile without a warning (-Wall -Wextra -Werror), and
// read their extents instead of literals for the bounded dims.
static void source_warning_free(vkp_graph_t *(*build)(void)) {
  vkp_graph_t *g = build();
  vkp_codegen_c_t code;
  VKP_TEST_OK(vkp_codegen_c_emit(g, 1, &code));
  cr_assert(strstr(code.source, "int vkp_stage_run_bounded("), "the bounded entry");
  cr_assert_null(strstr(code.source, "int vkp_stage_run("), "no static entry");
  cr_assert(strstr(code.source, "const ptrdiff_t vkp_e_x = (ptrdiff_t)extents[0];"));
  if (build == bounded_graph)
    cr_assert(strstr(code.source, "// node 'nz': non_zero [3, <=5] -> [2, <=15]"), "%s",
              code.source);
  if (getenv("VKP_TEST_DUMP")) fputs(code.source, stderr);
  char *dir = cpu_test_cache_dir();
  vkp_cpu_compile_config_t cfg = {.march = "native", .cache_dir = dir,
                                  .extra_flags = "-Wall -Wextra -Werror", .threads = 1};
  void *so = NULL;
  size_t so_size = 0;
  char key[33];
  VKP_TEST_OK(vkp_cpu_compile(code.source, code.source_size, &cfg, &so, &so_size, key));
  vkp_free(so);
  cpu_test_remove_dir(dir);
  vkp_codegen_c_deinit(&code);
  vkp_graph_destroy(g);
}

Test(emit_bounded, source_warning_free, .timeout = 240) {
  source_warning_free(bounded_graph);
  source_warning_free(rows_graph);
}

// Two bounded operands whose extents differ at run time: the stage stops
// and the error names the node.
Test(emit_bounded, extents_must_agree, .timeout = 120) {
  vkp_graph_t *g = g_new("mismatch");
  g_in(g, "a", VKP_DTYPE_FLOAT32, 1, SH(6));
  g_in(g, "b", VKP_DTYPE_FLOAT32, 1, SH(6));
  g_node(g, "nza", VKP_OP_NON_ZERO, "a", "na", 0, NULL);
  g_node(g, "nzb", VKP_OP_NON_ZERO, "b", "nb", 0, NULL);
  g_node(g, "sub", VKP_OP_SUB, "na,nb", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_registry_t *reg;
  const char *names[] = {"cpu"};
  VKP_TEST_OK(vkp_registry_create_builtin(names, 1, &reg));
  const vkp_target_t *cpu = vkp_registry_find(reg, "cpu");
  float a[6] = {1, 0, 2, 0, 3, 0}, b[6] = {0, 0, 5, 0, 0, 7};
  vkp_tensor_t x[2], y[1];
  VKP_TEST_OK(vkp_tensor_init_view(&x[0], VKP_DTYPE_FLOAT32, 1, SH(6), a));
  VKP_TEST_OK(vkp_tensor_init_view(&x[1], VKP_DTYPE_FLOAT32, 1, SH(6), b));
  vkp_status_t st = vkp_target_run_graph(cpu, g, NULL, x, y);
  cr_assert(vkp_status_is(st, VKP_STATUS_OUT_OF_RANGE), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st),
                   "node 'sub' (sub): data-dependent operands have different extents"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  b[0] = 4;  // now both pick 3
  VKP_TEST_OK(vkp_target_run_graph(cpu, g, NULL, x, y));
  cr_assert_eq(y[0].shape[1], 3);
  int64_t want[3] = {0 - 0, 2 - 2, 4 - 5};
  for (int i = 0; i < 3; ++i) cr_assert_eq(((int64_t *)y[0].data)[i], want[i]);
  vkp_tensor_deinit(&y[0]);
  vkp_registry_destroy(reg);
  vkp_graph_destroy(g);
}
