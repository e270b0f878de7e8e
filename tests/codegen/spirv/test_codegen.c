// SPDX-License-Identifier: Apache-2.0
// codegen/spirv/codegen.c and kernels.c, without a Vulkan device: every op
// and fused pattern generates GLSL that compiles and validates for a
// lavapipe-like and a GPU-like device, fusion gives the expected dispatch
// count, bindings stay inside their buffers, and supports() explains refusals.
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/spirv/program.h"
#include "runtime/vulkan/target_vulkan.h"
#include "tests/codegen/spirv/spirv_cases.h"
#include "support/test_graph.h"
#include "support/test_support.h"

// Lavapipe's numbers (DESIGN.md) and a generic discrete GPU's, with a
// subgroup size other than 32 on purpose.
static const vkp_spirv_device_info_t lavapipe_like = {
    .device_type = 4, .vendor_id = 0x10005, .subgroup_size = 8,
    .max_shared_memory = 32768, .max_invocations = 1024,
    .max_group_size = {1024, 1024, 1024}, .max_storage_range = 134217728,
    .min_storage_alignment = 16, .loop_budget = VKP_SPIRV_LAVAPIPE_LOOP_BUDGET};
static const vkp_spirv_device_info_t gpu_like = {
    .device_type = 2, .vendor_id = 0x1002, .subgroup_size = 64,
    .max_shared_memory = 65536, .max_invocations = 1024,
    .max_group_size = {1024, 1024, 64}, .max_storage_range = 4294967295u,
    .min_storage_alignment = 256};

static vkp_graph_t *build_case(const char *name, vkp_test_rng_t *rng);

static void check_program(const vkp_graph_t *g, const vkp_spirv_program_t *p,
                          const vkp_spirv_device_info_t *dev) {
  int inputs = 0, outputs = 0;
  for (int32_t i = 0; i < p->n_buffers; ++i) {
    inputs += p->buffers[i].kind == VKP_SPIRV_BUFFER_INPUT;
    outputs += p->buffers[i].kind == VKP_SPIRV_BUFFER_OUTPUT;
  }
  cr_assert_eq(inputs, g->n_inputs);
  cr_assert_eq(outputs, g->n_outputs);
  for (int32_t d = 0; d < p->n_dispatches; ++d) {
    const vkp_spirv_dispatch_t *ds = &p->dispatches[d];
    cr_assert(ds->code_words > 5 && ds->code[0] == 0x07230203u, "%s", ds->name);
    cr_assert(ds->n_bindings >= 1 && ds->n_bindings <= 8);
    for (int k = 0; k < 3; ++k) cr_assert(ds->groups[k] >= 1 && ds->local_size[k] >= 1);
    cr_assert(ds->local_size[0] * ds->local_size[1] * ds->local_size[2] <=
              dev->max_invocations);
    for (int32_t j = 0; j < ds->n_bindings; ++j) {
      const vkp_spirv_binding_t *b = &ds->bindings[j];
      cr_assert(b->buffer >= 0 && b->buffer < p->n_buffers);
      cr_assert(b->range > 0 && b->offset + b->range <= p->buffers[b->buffer].size,
                "%s binding %d: %llu+%llu of %llu", ds->name, (int)j,
                (unsigned long long)b->offset, (unsigned long long)b->range,
                (unsigned long long)p->buffers[b->buffer].size);
      cr_assert_eq(b->offset % dev->min_storage_alignment, 0);
    }
  }
}

static void run_case(const vkp_spirv_case_t *c, const vkp_spirv_device_info_t *dev,
                     bool check_count) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = c->build(&rng);
  cr_assert_not_null(g, "case %s does not build", c->name);
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, dev, NULL, &p));
  if (check_count)
    cr_assert_eq(p->n_dispatches, c->dispatches, "case %s: %d dispatches, expected %d",
                 c->name, (int)p->n_dispatches, (int)c->dispatches);
  check_program(g, p, dev);
  vkp_spirv_program_destroy(p);
  vkp_graph_destroy(g);
}

ParameterizedTestParameters(spirv_codegen, cases) {
  static int idx[512];
  for (int i = 0; i < vkp_spirv_case_count; ++i) idx[i] = i;
  return cr_make_param_array(int, idx, (size_t)vkp_spirv_case_count);
}

ParameterizedTest(int *i, spirv_codegen, cases, .timeout = 60) {
  // The counts are without the padded copies, which add a dispatch per
  // padded convolution on CPU devices (conv_pad_copy below).
  setenv("VKPIPE_SPIRV_CONV_PAD", "off", 1);
  run_case(&vkp_spirv_cases[*i], &lavapipe_like, true);
  unsetenv("VKPIPE_SPIRV_CONV_PAD");
  run_case(&vkp_spirv_cases[*i], &lavapipe_like, false);
  // Split-K by shape adds a dispatch on GPUs only (split_k_by_shape below).
  run_case(&vkp_spirv_cases[*i], &gpu_like,
           strncmp(vkp_spirv_cases[*i].name, "matmul_skinny", 13) != 0);
}

// Every op the generator has a kernel for appears in at least one case.
Test(spirv_codegen, every_op_covered, .timeout = 60) {
  bool seen[VKP_OP_COUNT] = {false};
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  for (int i = 0; i < vkp_spirv_case_count; ++i) {
    vkp_graph_t *g = vkp_spirv_cases[i].build(&rng);
    cr_assert_not_null(g);
    for (int32_t n = 0; n < g->n_nodes; ++n) seen[g->nodes[n].op] = true;
    vkp_graph_destroy(g);
  }
  char missing[512] = "";
  for (int op = 0; op < VKP_OP_COUNT; ++op)
    if (!seen[op] && vkp_spirv_has_kernel((vkp_op_t)op))
      snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s",
               vkp_op_name((vkp_op_t)op));
  cr_assert(missing[0] == '\0', "ops without a codegen case:%s", missing);
}

Test(spirv_codegen, gemm_variant_follows_device, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  char dir[] = "/tmp/vkp_spirv_dumpXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  unsetenv("VKPIPE_SPIRV_GEMM");
  const vkp_spirv_device_info_t *devs[2] = {&lavapipe_like, &gpu_like};
  for (int k = 0; k < 2; ++k) {
    vkp_graph_t *g = NULL;
    for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
      if (strcmp(vkp_spirv_cases[i].name, "matmul_65x67x33") == 0)
        g = vkp_spirv_cases[i].build(&rng);
    cr_assert_not_null(g);
    vkp_compile_options_t opts = {.dump_dir = dir};
    vkp_spirv_program_t *p = NULL;
    VKP_TEST_OK(vkp_spirv_codegen(g, devs[k], &opts, &p));
    cr_assert_eq(p->n_dispatches, 1);
    const vkp_spirv_dispatch_t *d = &p->dispatches[0];
    // Codegen is pure: with dump_dir set it keeps the GLSL and writes nothing.
    cr_assert_not_null(d->glsl);
    cr_assert_eq(rmdir(dir), 0, "codegen wrote into %s", dir);
    bool tiled = strstr(d->glsl, "shared float") != NULL;
    cr_assert_eq(tiled, k == 1, "device %d got the %s kernel", k,
                 tiled ? "tiled" : "blocked");
    cr_assert_eq(d->local_size[0] * d->local_size[1], tiled ? 256u : 64u);
    // The target writes the dumps (and makes the directory).
    VKP_TEST_OK(vkp__vulkan_dump_sources(p, dir));
    char path[256];
    snprintf(path, sizeof path, "%s/000_%s.comp", dir, d->name);
    size_t size = 0;
    char *glsl = vkp_test_read_file(path, &size);
    cr_assert_not_null(glsl, "no dump at %s", path);
    cr_assert_str_eq(glsl, d->glsl);
    free(glsl);
    unlink(path);
    for (const char *ext = "spv"; ext; ext = strcmp(ext, "spv") == 0 ? "spvasm" : NULL) {
      snprintf(path, sizeof path, "%s/000_%s.%s", dir, d->name, ext);
      struct stat st;
      cr_assert(stat(path, &st) == 0 && st.st_size > 0, "missing %s", path);
      unlink(path);
    }
    cr_assert_eq(rmdir(dir), 0);
    cr_assert_not_null(mkdtemp(strcpy(dir, "/tmp/vkp_spirv_dumpXXXXXX")));
    vkp_spirv_program_destroy(p);
    vkp_graph_destroy(g);
  }
  rmdir(dir);
}

// Cooperative matrices (an NVIDIA-like device that offers them): with
// VKPIPE_SPIRV_GEMM=coopmat, at either precision, GEMMs and implicit-GEMM
// convolutions get the coopmat kernels (4 subgroups of 32), which compile
// and validate here though no device in CI runs them; without it the tiled
// kernels; never on a device without them.
Test(spirv_codegen, coopmat_kernels_when_asked, .timeout = 60) {
  vkp_spirv_device_info_t nv = gpu_like, plain = gpu_like;
  nv.vendor_id = 0x10de;
  nv.subgroup_size = 32;
  nv.storage_16bit = nv.shader_float16 = nv.coopmat_f16 = true;
  plain.storage_16bit = true;
  const char *names[] = {"matmul_65x67x33", "fuse_matmul_bias_relu", "conv_gemm_7x7_s2",
                         "gemm_tAtB_full_c", "matmul_batch_2x3x17x9_9x11"};
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  for (int force = 0; force < 2; ++force) {
    if (force) setenv("VKPIPE_SPIRV_GEMM", "coopmat", 1);
    else unsetenv("VKPIPE_SPIRV_GEMM");
    for (size_t c = 0; c < sizeof names / sizeof *names; ++c) {
      vkp_graph_t *g = NULL;
      for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
        if (strcmp(vkp_spirv_cases[i].name, names[c]) == 0) g = vkp_spirv_cases[i].build(&rng);
      cr_assert_not_null(g, "no case %s", names[c]);
      for (int prec = 0; prec < 2; ++prec)
        for (int dev = 0; dev < 2; ++dev) {
          vkp_compile_options_t opts = {
              .precision = prec ? VKP_PRECISION_FP16 : VKP_PRECISION_FP32, .dump_dir = "/x"};
          vkp_spirv_program_t *p = NULL;
          VKP_TEST_OK(vkp_spirv_codegen(g, dev ? &plain : &nv, &opts, &p));
          check_program(g, p, dev ? &plain : &nv);
          bool want = dev == 0 && force;
          bool seen = false;
          for (int32_t d = 0; d < p->n_dispatches; ++d)
            seen |= strstr(p->dispatches[d].glsl, "coopMatMulAddNV") != NULL;
          cr_assert_eq(seen, want, "%s, %s, %s device%s: coopmat %s", names[c],
                       prec ? "fp16" : "fp32", dev ? "plain" : "NVIDIA",
                       force ? ", forced" : "", seen ? "used" : "not used");
          for (int32_t d = 0; seen && d < p->n_dispatches; ++d)
            if (strstr(p->dispatches[d].glsl, "coopMatMulAddNV"))
              cr_assert_eq(p->dispatches[d].local_size[0], 128u);
          vkp_spirv_program_destroy(p);
        }
      vkp_graph_destroy(g);
    }
  }
  unsetenv("VKPIPE_SPIRV_GEMM");
}

// The workgroup-per-row kernels reduce through subgroup arithmetic where
// the device has it (and VKPIPE_SPIRV_SUBGROUP is not off), through the
// shared-memory tree elsewhere.
Test(spirv_codegen, row_reductions_follow_subgroup_support, .timeout = 60) {
  vkp_spirv_device_info_t with = gpu_like, without = gpu_like;
  with.subgroup_arith = true;
  const char *names[] = {"softmax_last", "softmax_long_row", "reduce_max_nan_rows",
                         "reduce_min_nan_rows"};
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  setenv("VKPIPE_SPIRV_ROWS", "workgroup", 1);
  for (int off = 0; off < 2; ++off) {
    if (off) setenv("VKPIPE_SPIRV_SUBGROUP", "off", 1);
    for (size_t c = 0; c < sizeof names / sizeof *names; ++c) {
      vkp_graph_t *g = NULL;
      for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
        if (strcmp(vkp_spirv_cases[i].name, names[c]) == 0) g = vkp_spirv_cases[i].build(&rng);
      cr_assert_not_null(g, "no case %s", names[c]);
      for (int dev = 0; dev < 2; ++dev) {
        vkp_compile_options_t opts = {.dump_dir = "/x"};
        vkp_spirv_program_t *p = NULL;
        VKP_TEST_OK(vkp_spirv_codegen(g, dev ? &without : &with, &opts, &p));
        bool seen = false;
        for (int32_t d = 0; d < p->n_dispatches; ++d)
          seen |= strstr(p->dispatches[d].glsl, "#define VKP_SUBGROUP 1") != NULL;
        cr_assert_eq(seen, dev == 0 && !off, "%s: subgroup reduction %s", names[c],
                     seen ? "used" : "not used");
        vkp_spirv_program_destroy(p);
      }
      vkp_graph_destroy(g);
    }
  }
  unsetenv("VKPIPE_SPIRV_SUBGROUP");
  unsetenv("VKPIPE_SPIRV_ROWS");
}

// Four softmaxes in a row: the scratch buffer holds at most two live values.
Test(spirv_codegen, scratch_reused_by_liveness, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = NULL;
  for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
    if (strcmp(vkp_spirv_cases[i].name, "scratch_chain") == 0)
      g = vkp_spirv_cases[i].build(&rng);
  cr_assert_not_null(g);
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &lavapipe_like, NULL, &p));
  uint64_t scratch = 0;
  for (int32_t i = 0; i < p->n_buffers; ++i)
    if (p->buffers[i].kind == VKP_SPIRV_BUFFER_SCRATCH) scratch = p->buffers[i].size;
  cr_assert(scratch > 0 && scratch <= 2 * 3 * 8 * 4 + 16, "scratch of %llu bytes",
            (unsigned long long)scratch);
  vkp_spirv_program_destroy(p);
  vkp_graph_destroy(g);
}

// Integer data runs where the op's kernel takes it (int64 only on devices
// with shaderInt64); elsewhere the refusal names the dtype.
Test(spirv_codegen, supports_ints_where_kernels_take_them, .timeout = 30) {
  vkp_graph_t *g = g_new("ints");
  int64_t s[] = {4};
  g_in(g, "x", VKP_DTYPE_INT32, 1, s);
  g_in(g, "w", VKP_DTYPE_INT64, 1, s);
  g_node(g, "p", VKP_OP_PRELU, "x,x", "y", 0, NULL);
  g_node(g, "a", VKP_OP_ADD, "w,w", "z", 0, NULL);
  g_out(g, "y,z");
  g_validate(g);
  char reason[160];
  cr_assert_not(vkp_spirv_supports(g, &g->nodes[0], reason, sizeof reason));
  cr_assert(strstr(reason, "'x' is int32") != NULL, "reason: %s", reason);
  vkp_spirv_program_t *p = NULL;
  vkp_status_t st = vkp_spirv_codegen(g, &lavapipe_like, NULL, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert_null(p);
  vkp_status_free(st);
  vkp_spirv_device_info_t with = lavapipe_like, without = lavapipe_like;
  with.shader_int64 = true;
  without.shader_int64 = false;
  cr_assert(vkp_spirv_supports_on(g, &g->nodes[1], &with, reason, sizeof reason), "%s",
            reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[1], &without, reason, sizeof reason));
  cr_assert(strstr(reason, "'w' is int64") != NULL && strstr(reason, "shaderInt64"),
            "reason: %s", reason);
  vkp_graph_destroy(g);
}

// The recurrent kernel walks a whole sequence in one loop nest, which
// lavapipe's compiler cuts after 65535 iterations: a long, wide LSTM is
// refused with that reason (it used to leave the later steps zero), a short
// one of the same width is taken.
Test(spirv_codegen, rnn_refused_past_the_loop_budget, .timeout = 30) {
  for (int k = 0; k < 2; ++k) {
    int64_t seq = k ? 100 : 20, hid = 128, in_size = 40;
    vkp_graph_t *g = g_new("lstm");
    int64_t xs[] = {seq, 1, in_size}, ws[] = {1, 4 * hid, in_size}, rs[] = {1, 4 * hid, hid};
    g_in(g, "x", VKP_DTYPE_FLOAT32, 3, xs);
    g_in(g, "w", VKP_DTYPE_FLOAT32, 3, ws);
    g_in(g, "r", VKP_DTYPE_FLOAT32, 3, rs);
    vkp_attr_t a = {.name = "hidden_size", .kind = VKP_ATTR_INT, .i = hid};
    g_node(g, "l", VKP_OP_LSTM, "x,w,r", "y", 1, &a);
    g_out(g, "y");
    g_validate(g);
    char reason[320] = "";
    bool ok = vkp_spirv_supports_on(g, &g->nodes[0], &lavapipe_like, reason, sizeof reason);
    if (k) {
      cr_assert_not(ok);
      cr_assert(strstr(reason, "65535") != NULL, "reason: %s", reason);
    } else {
      cr_assert(ok, "%s", reason);
    }
    // A GPU has no such budget: both run there.
    cr_assert(vkp_spirv_supports_on(g, &g->nodes[0], &gpu_like, reason, sizeof reason), "%s",
              reason);
    vkp_graph_destroy(g);
  }
}

// A convolution's invocation loops over its input channels and taps, and
// lavapipe's compiler cuts a shader's loops at 65535 iterations: past that
// bound the convolution runs as split-K (partial sums over slices of at most
// 32768 steps of the reduction, then their reduction: 2 dispatches) on every
// device, whatever VKPIPE_SPIRV_SPLITK says; below it, as one dispatch. A
// 3-D convolution over 2048 channels at 3x3x3 (55,296 per output, its loop
// nest past the budget) splits in 2, r3d_18's widest (512 channels) and a
// 2-D one over 2048 channels at 3x3 do not; a transposed 3-D one over 4096
// channels splits in 4.
Test(spirv_codegen, conv_split_past_the_loop_budget, .timeout = 60) {
  struct {
    vkp_op_t op;
    int32_t rank;
    int64_t c;
    uint32_t slices;  // 1: not split
  } cases[] = {{VKP_OP_CONV2D, 5, 2048, 2},
               {VKP_OP_CONV2D, 5, 512, 1},
               {VKP_OP_CONV2D, 4, 2048, 1},
               {VKP_OP_CONV_TRANSPOSE, 5, 512, 1},
               {VKP_OP_CONV_TRANSPOSE, 5, 4096, 4}};
  for (int off = 0; off < 2; ++off) {
    if (off) setenv("VKPIPE_SPIRV_SPLITK", "off", 1);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
      vkp_graph_t *g = g_new("conv");
      int64_t xs[] = {1, cases[k].c, 4, 4, 4}, ws[] = {8, 8, 3, 3, 3};
      ws[cases[k].op == VKP_OP_CONV2D ? 1 : 0] = cases[k].c;
      int32_t rank = cases[k].rank;
      if (rank == 4) {  // drop the depth
        xs[2] = xs[3], xs[3] = xs[4];
        ws[2] = ws[3], ws[3] = ws[4];
      }
      g_in(g, "x", VKP_DTYPE_FLOAT32, rank, xs);
      g_in(g, "w", VKP_DTYPE_FLOAT32, rank, ws);
      g_node(g, "c", cases[k].op, "x,w", "y", 0, NULL);
      g_out(g, "y");
      g_validate(g);
      char reason[320] = "";
      cr_assert(vkp_spirv_supports_on(g, &g->nodes[0], &lavapipe_like, reason, sizeof reason),
                "case %d: %s", (int)k, reason);
      const vkp_spirv_device_info_t *devices[] = {&lavapipe_like, &gpu_like};
      for (int d = 0; d < 2; ++d) {
        vkp_spirv_program_t *p = NULL;
        VKP_TEST_OK(vkp_spirv_codegen(g, devices[d], NULL, &p));
        check_program(g, p, devices[d]);
        uint32_t slices = cases[k].slices;
        cr_assert_eq(p->n_dispatches, slices > 1 ? 2 : 1, "case %d", (int)k);
        if (slices > 1) {
          const vkp_spirv_dispatch_t *partial = &p->dispatches[0];
          const vkp_value_t *y = &g->values[g->outputs[0]];
          uint64_t out_bytes = 4;
          for (int32_t i = 0; i < y->rank; ++i) out_bytes *= (uint64_t)y->shape[i];
          cr_assert_eq(partial->groups[1], slices, "case %d", (int)k);
          cr_assert_eq(partial->bindings[0].range, slices * out_bytes);
          cr_assert_eq(p->buffers[partial->bindings[0].buffer].kind,
                       VKP_SPIRV_BUFFER_SCRATCH);
          const vkp_spirv_dispatch_t *reduce = &p->dispatches[1];
          cr_assert_eq(reduce->bindings[1].offset, partial->bindings[0].offset);
        }
        vkp_spirv_program_destroy(p);
      }
      vkp_graph_destroy(g);
    }
  }
  unsetenv("VKPIPE_SPIRV_SPLITK");
  // VKPIPE_SPIRV_SPLITK=on (tests) splits every convolution in <= 4 slices.
  setenv("VKPIPE_SPIRV_SPLITK", "on", 1);
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  const char *names[] = {"conv_3x3_pad1", "conv_grouped_g3", "conv_transpose_s2",
                         "conv3d_depthwise_m2"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
    vkp_graph_t *g = build_case(names[k], &rng);
    vkp_spirv_program_t *p = NULL;
    VKP_TEST_OK(vkp_spirv_codegen(g, &lavapipe_like, NULL, &p));
    check_program(g, p, &lavapipe_like);
    cr_assert_eq(p->n_dispatches, 2, "%s", names[k]);
    cr_assert_eq(p->dispatches[0].groups[1], 4, "%s", names[k]);
    vkp_spirv_program_destroy(p);
    vkp_graph_destroy(g);
  }
  unsetenv("VKPIPE_SPIRV_SPLITK");
}

// On CPU devices an implicit-GEMM convolution whose windows reach the
// padding first copies its input into zero-padded planes (a float32
// temporary at the scratch's end, one binding), then reads that copy
// unchecked: two dispatches, the second reading what the first wrote.
// Windows that stay inside the input or are wider than 3, GPUs (the tiled
// kernel), grouped convolutions and VKPIPE_SPIRV_CONV_PAD=off keep one
// dispatch.
Test(spirv_codegen, conv_pad_copy, .timeout = 60) {
  struct {
    const char *name;
    const vkp_spirv_device_info_t *dev;
    bool pad_off;
    uint64_t copy_floats;  // 0: one dispatch
  } cases[] = {
      {"conv_3x3_pad1", &lavapipe_like, false, 1 * 3 * 9 * 9},
      {"conv_5x3_asym", &lavapipe_like, false, 1 * 1 * 21 * 6},  // 5x3, pads 2/0 and 2/1
      {"conv_gemm_dil_pad", &lavapipe_like, false, 1 * 5 * 15 * 17},
      {"conv3d_3x3x3_pad1", &lavapipe_like, false, 0},  // set below
      {"conv_3x3_pad1", &gpu_like, false, 0},
      {"conv_3x3_pad1", &lavapipe_like, true, 0},
      {"conv_1x1_nobias", &lavapipe_like, false, 0},
      {"conv_gemm_1x1_s2", &lavapipe_like, false, 0},
      {"conv_grouped_g3", &lavapipe_like, false, 0},
      {"conv_gemm_7x7_s2", &lavapipe_like, false, 0},  // 7 wide: checked in place
  };
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    if (cases[k].pad_off) setenv("VKPIPE_SPIRV_CONV_PAD", "off", 1);
    setenv("VKPIPE_SPIRV_CONV", "gemm", 1);
    vkp_graph_t *g = build_case(cases[k].name, &rng);
    const vkp_value_t *x = &g->values[g->nodes[0].inputs[0]];
    uint64_t floats = cases[k].copy_floats;
    if (strcmp(cases[k].name, "conv3d_3x3x3_pad1") == 0) {
      floats = (uint64_t)x->shape[0] * (uint64_t)x->shape[1];
      for (int32_t d = 2; d < 5; ++d) floats *= (uint64_t)x->shape[d] + 2;
    }
    vkp_spirv_program_t *p = NULL;
    VKP_TEST_OK(vkp_spirv_codegen(g, cases[k].dev, NULL, &p));
    check_program(g, p, cases[k].dev);
    int expect = floats ? 2 : 1;
    cr_assert_eq(p->n_dispatches, expect, "%s (%zu): %d dispatches", cases[k].name, k,
                 (int)p->n_dispatches);
    if (floats) {
      const vkp_spirv_dispatch_t *copy = &p->dispatches[0], *conv = &p->dispatches[1];
      cr_assert_eq(copy->n_bindings, 2, "%s", cases[k].name);
      cr_assert_eq(copy->bindings[0].range, floats * 4, "%s: %llu bytes", cases[k].name,
                   (unsigned long long)copy->bindings[0].range);
      cr_assert_eq(p->buffers[copy->bindings[0].buffer].kind, VKP_SPIRV_BUFFER_SCRATCH);
      cr_assert_eq(p->buffers[copy->bindings[1].buffer].kind, VKP_SPIRV_BUFFER_INPUT);
      cr_assert_eq(conv->bindings[1].buffer, copy->bindings[0].buffer);
      cr_assert_eq(conv->bindings[1].offset, copy->bindings[0].offset);
      cr_assert_eq(conv->bindings[1].range, copy->bindings[0].range);
    }
    vkp_spirv_program_destroy(p);
    vkp_graph_destroy(g);
    unsetenv("VKPIPE_SPIRV_CONV");
    unsetenv("VKPIPE_SPIRV_CONV_PAD");
  }
}

// Marks `out` of `g` (consumed), validates, and checks that the lavapipe-like
// device takes node 0 exactly when `ok`; a refusal names the budget.
static void expect_budget(vkp_graph_t *g, const char *out, bool ok, int case_no) {
  g_out(g, out);
  g_validate(g);
  char reason[320] = "";
  bool got = vkp_spirv_supports_on(g, &g->nodes[0], &lavapipe_like, reason, sizeof reason);
  cr_assert_eq(got, ok, "case %d: %s", case_no, reason);
  if (!got) cr_assert(strstr(reason, "65535") != NULL, "reason: %s", reason);
  vkp_graph_destroy(g);
}

// Kernels without a split yet refuse what would loop past lavapipe's budget
// (where they gave wrong results, silently): a pooling window of 300 x 300
// (90,000 taps) or 70,000 along one dim, and cum_sum along an axis of
// 70,000; 255 x 255 windows and an axis of 65,000 are taken.
Test(spirv_codegen, pool_and_cum_sum_refused_past_the_loop_budget, .timeout = 30) {
  struct {
    vkp_op_t op;
    int32_t rank;
    int64_t a, b;  // window (pools) or axis length (cum_sum: a)
    bool ok;
  } cases[] = {{VKP_OP_AVG_POOL2D, 4, 300, 300, false}, {VKP_OP_MAX_POOL2D, 4, 255, 255, true},
               {VKP_OP_LP_POOL, 3, 70000, 0, false},     {VKP_OP_MAX_POOL2D, 3, 60000, 0, true},
               {VKP_OP_CUM_SUM, 2, 70000, 0, false},     {VKP_OP_CUM_SUM, 2, 65000, 0, true}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    vkp_graph_t *g = g_new("long");
    bool pool = cases[k].op != VKP_OP_CUM_SUM;
    int64_t xs[4] = {1, 2, cases[k].a, cases[k].b};
    if (!pool) xs[0] = 2, xs[1] = cases[k].a;
    if (pool && cases[k].rank == 3) xs[2] = cases[k].a;
    g_in(g, "x", VKP_DTYPE_FLOAT32, cases[k].rank, xs);
    int64_t window[2] = {cases[k].a, cases[k].b};
    vkp_attr_t attrs[2] = {{.name = "kernel_shape", .kind = VKP_ATTR_INTS, .ints = window,
                            .count = cases[k].rank - 2},
                           {.name = "axis", .kind = VKP_ATTR_INT, .i = 1}};
    g_node(g, "n", cases[k].op, "x", "y", 1, pool ? &attrs[0] : &attrs[1]);
    expect_budget(g, "y", cases[k].ok, (int)k);
  }
}

// A reduced loss sums every position in one invocation, and dft / stft sum
// a whole line per bin: on lavapipe a 70,000-position NLL came out 10% off
// and softmax cross-entropy 6% (the positions past 65535 left out), and
// softmax cross-entropy over 200 positions of 1000 classes 80% (class
// loops past 32 count too), so these are refused past the budget;
// reduction "none", 60,000 positions of 3 classes and a 60,000-sample line
// are taken.
Test(spirv_codegen, loss_and_dft_refused_past_the_loop_budget, .timeout = 30) {
  struct {
    vkp_op_t op;
    int64_t len;            // positions or line length (negative: positions of 1000 classes)
    const char *reduction;  // losses
    bool ok;
  } cases[] = {{VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, 70000, "mean", false},
               {VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, 70000, "none", true},
               {VKP_OP_NEGATIVE_LOG_LIKELIHOOD_LOSS, 60000, "sum", true},
               {VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, 70000, "sum", false},
               {VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, 60000, "mean", true},
               {VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, -200, "sum", false},  // 1000 classes
               {VKP_OP_DFT, 70000, NULL, false},
               {VKP_OP_DFT, 60000, NULL, true}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    vkp_graph_t *g = g_new("long");
    bool dft = cases[k].op == VKP_OP_DFT;
    int64_t len = cases[k].len < 0 ? -cases[k].len : cases[k].len;
    int64_t xs[3] = {1, len, 1}, ls[1] = {len};
    if (!dft) xs[0] = len, xs[1] = cases[k].len < 0 ? 1000 : 3;
    g_in(g, "x", VKP_DTYPE_FLOAT32, dft ? 3 : 2, xs);
    if (!dft) g_in(g, "l", VKP_DTYPE_INT64, 1, ls);
    const char *in[] = {"x", "l"}, *out[] = {"y"};
    vkp_attr_t attrs[1] = {{.name = "reduction", .kind = VKP_ATTR_STRING,
                            .s = cases[k].reduction}};
    VKP_TEST_OK(vkp_graph_add_node(g, "n", cases[k].op, dft ? 1 : 2, in, 1, out, dft ? 0 : 1,
                                   attrs, NULL));
    expect_budget(g, "y", cases[k].ok, (int)k);
  }
}

// Attention walks every key per invocation (and per key D + 2 DV steps):
// 512 keys at D = DV = 64 (BERT's longest sequences) gave wrong rows on
// lavapipe and are refused with the reason; 330 keys (63,818 iterations,
// checked against ref on lavapipe) are taken.
Test(spirv_codegen, attention_refused_past_the_loop_budget, .timeout = 30) {
  const int64_t keys[] = {512, 330};
  for (int k = 0; k < 2; ++k) {
    vkp_graph_t *g = g_new("att");
    int64_t qs[] = {1, 2, 64}, ks[] = {1, 64, keys[k]}, vs[] = {1, keys[k], 64};
    g_in(g, "q", VKP_DTYPE_FLOAT32, 3, qs);
    g_in(g, "kt", VKP_DTYPE_FLOAT32, 3, ks);
    g_in(g, "v", VKP_DTYPE_FLOAT32, 3, vs);
    vkp_attr_t a = {.name = "scale", .kind = VKP_ATTR_FLOAT, .f = 0.125};
    g_node(g, "a", VKP_OP_ATTENTION, "q,kt,v", "y", 1, &a);
    g_out(g, "y");
    g_validate(g);
    char reason[320] = "";
    bool ok = vkp_spirv_supports_on(g, &g->nodes[0], &lavapipe_like, reason, sizeof reason);
    cr_assert_eq(ok, k == 1, "%lld keys: %s", (long long)keys[k], reason);
    if (!ok)
      cr_assert(strstr(reason, "512 keys") && strstr(reason, "65535"), "reason: %s", reason);
    // BERT's 512 keys stay on a GPU, which has no loop budget.
    cr_assert(vkp_spirv_supports_on(g, &g->nodes[0], &gpu_like, reason, sizeof reason),
              "%lld keys on a GPU: %s", (long long)keys[k], reason);
    vkp_graph_destroy(g);
  }
}

// Split-K's partial sums take several bindings when they pass the binding
// limit (a convolution's slices are not a choice), as its input and weights
// do: a 1-D convolution with a 70,000-tap kernel over 30,001 outputs (3
// slices, 360,012 bytes of partials) under a 256 KiB binding limit.
Test(spirv_codegen, conv_split_partials_across_bindings, .timeout = 60) {
  vkp_graph_t *g = g_new("conv");
  int64_t xs[] = {1, 1, 100000}, ws[] = {1, 1, 70000};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 3, xs);
  g_in(g, "w", VKP_DTYPE_FLOAT32, 3, ws);
  g_node(g, "c", VKP_OP_CONV2D, "x,w", "y", 0, NULL);
  g_out(g, "y");
  g_validate(g);
  vkp_spirv_device_info_t small = lavapipe_like;
  small.max_storage_range = 262144;
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &small, NULL, &p));
  check_program(g, p, &small);
  cr_assert_eq(p->n_dispatches, 2);
  const vkp_spirv_dispatch_t *partial = &p->dispatches[0], *reduce = &p->dispatches[1];
  cr_assert_eq(partial->groups[1], 3);
  cr_assert_eq(partial->n_bindings, 6);  // partials, x and w in 2 ranges each
  cr_assert_eq(partial->bindings[0].range + partial->bindings[1].range, 3u * 30001u * 4u);
  cr_assert_eq(partial->bindings[1].offset,
               partial->bindings[0].offset + partial->bindings[0].range);
  cr_assert_eq(reduce->n_bindings, 3);  // y, the partials' 2 ranges
  cr_assert_eq(reduce->bindings[1].offset, partial->bindings[0].offset);
  cr_assert_eq(reduce->bindings[2].offset, partial->bindings[1].offset);
  vkp_spirv_program_destroy(p);
  vkp_graph_destroy(g);
}

// float64 computes in double where the device has shaderFloat64, float16
// and (u)int16 are 16-bit words that need storageBuffer16BitAccess;
// without them the refusal names the feature. float64 data only runs where
// the kernel computes in ACC_T (not the GEMM).
Test(spirv_codegen, supports_f64_f16_by_device_feature, .timeout = 30) {
  vkp_graph_t *g = g_new("wide");
  int64_t s[] = {4, 4};
  g_in(g, "d", VKP_DTYPE_FLOAT64, 2, s);
  g_in(g, "h", VKP_DTYPE_FLOAT16, 2, s);
  g_in(g, "i", VKP_DTYPE_INT16, 2, s);
  g_node(g, "sum", VKP_OP_ADD, "d,d", "y", 0, NULL);
  g_node(g, "mul", VKP_OP_MUL, "h,h", "z", 0, NULL);
  g_node(g, "mm", VKP_OP_MATMUL, "d,d", "m", 0, NULL);
  g_node(g, "max", VKP_OP_MAX, "i,i", "k", 0, NULL);
  for (int k = 0; k < 4; ++k)
    g_out(g, (const char *[]){"y", "z", "m", "k"}[k]);
  g_validate(g);
  char reason[200];
  vkp_spirv_device_info_t with = lavapipe_like, without = lavapipe_like;
  with.shader_float64 = with.storage_16bit = true;
  for (int n = 0; n < 4; n += n == 1 ? 2 : 1)
    cr_assert(vkp_spirv_supports_on(g, &g->nodes[n], &with, reason, sizeof reason), "%s",
              reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[0], &without, reason, sizeof reason));
  cr_assert(strstr(reason, "'d' is float64") && strstr(reason, "shaderFloat64"),
            "reason: %s", reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[1], &without, reason, sizeof reason));
  cr_assert(strstr(reason, "'h' is float16") && strstr(reason, "storageBuffer16BitAccess"),
            "reason: %s", reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[3], &without, reason, sizeof reason));
  cr_assert(strstr(reason, "'i' is int16"), "reason: %s", reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[2], &with, reason, sizeof reason));
  cr_assert(strstr(reason, "'d' is float64") && strstr(reason, "matmul"), "reason: %s",
            reason);
  vkp_graph_destroy(g);
}

// Comparisons and where work on bools: refused for the dtype, the real
// reason. A sum of 8 inputs needs 9 bindings: refused before codegen.
Test(spirv_codegen, supports_bools_on_8bit_devices_refuses_wide_sums, .timeout = 30) {
  vkp_graph_t *g = g_new("logic");
  int64_t s[] = {4};
  const char *names[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  for (int i = 0; i < 8; ++i)
    g_in(g, names[i], VKP_DTYPE_FLOAT32, 1, s);
  g_in(g, "i", VKP_DTYPE_INT32, 1, s);
  const char *lt_out[] = {"lt"};
  VKP_TEST_OK(vkp_graph_add_node(g, "less", VKP_OP_LESS, 2, names, 1, lt_out, 0,
                                 NULL, NULL));
  g_node(g, "sum8", VKP_OP_SUM, "a,b,c,d,e,f,g,h", "sum", 0, NULL);
  g_node(g, "where", VKP_OP_WHERE, "lt,sum,a", "w", 0, NULL);
  g_node(g, "bits", VKP_OP_PRELU, "i,i", "bits", 0, NULL);
  g_out(g, "w,bits");
  g_validate(g);
  char reason[160];
  // Bool values are bytes: fine where the device binds 8-bit storage.
  vkp_spirv_device_info_t with = lavapipe_like, without = lavapipe_like;
  with.storage_8bit = true;
  without.storage_8bit = false;
  cr_assert(vkp_spirv_supports(g, &g->nodes[0], reason, sizeof reason), "%s", reason);
  cr_assert(vkp_spirv_supports_on(g, &g->nodes[2], &with, reason, sizeof reason), "%s",
            reason);
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[0], &without, reason, sizeof reason));
  cr_assert(strstr(reason, "'lt' is bool") != NULL, "reason: %s", reason);
  cr_assert(strstr(reason, "storageBuffer8BitAccess") != NULL, "reason: %s", reason);
  // prelu has no Vulkan kernel on integer data.
  cr_assert_not(vkp_spirv_supports(g, &g->nodes[3], reason, sizeof reason));
  cr_assert(strstr(reason, "'i' is int32") != NULL, "reason: %s", reason);
  cr_assert_not(vkp_spirv_supports(g, &g->nodes[1], reason, sizeof reason));
  cr_assert(strstr(reason, "sum with 8 inputs") != NULL, "reason: %s", reason);
  vkp_graph_destroy(g);
}

static vkp_graph_t *build_case(const char *name, vkp_test_rng_t *rng) {
  for (int i = 0; i < vkp_spirv_case_count; ++i)
    if (strcmp(vkp_spirv_cases[i].name, name) == 0) return vkp_spirv_cases[i].build(rng);
  cr_assert_fail("no case %s", name);
  return NULL;
}

// A value larger than maxStorageBufferRange that the kernel cannot split
// (softmax reads its rows directly) is refused with a clear status.
Test(spirv_codegen, storage_range_limit, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = build_case("softmax_last", &rng);
  vkp_spirv_device_info_t tiny = lavapipe_like;
  tiny.max_storage_range = 64;
  vkp_spirv_program_t *p = NULL;
  vkp_status_t st = vkp_spirv_codegen(g, &tiny, NULL, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED), "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), "maxStorageBufferRange") != NULL);
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// A matmul whose operands and result are past the limit binds each as
// consecutive ranges of at most the limit (rounded down to the offset
// alignment) that together cover the tensor: A [65, 67] (17420 bytes) in 3,
// B [67, 33] (8844) in 2, the result [65, 33] (8580) in 2.
Test(spirv_codegen, storage_range_split, .timeout = 30) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = build_case("matmul_65x67x33", &rng);
  vkp_spirv_device_info_t small = lavapipe_like;
  small.max_storage_range = 8200;  // parts of 8192 bytes (16-byte aligned)
  char reason[256] = "";
  cr_assert(vkp_spirv_supports_on(g, &g->nodes[0], &small, reason, sizeof reason), "%s",
            reason);
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &small, NULL, &p));
  cr_assert_eq(p->n_dispatches, 1);
  const vkp_spirv_dispatch_t *d = &p->dispatches[0];
  cr_assert_eq(d->n_bindings, 7);
  const uint64_t sizes[3] = {8580, 17420, 8844};
  const int parts[3] = {2, 3, 2};
  int slot = 0;
  for (int t = 0; t < 3; ++t) {
    uint64_t covered = 0;
    for (int q = 0; q < parts[t]; ++q, ++slot) {
      const vkp_spirv_binding_t *b = &d->bindings[slot];
      cr_assert_eq(b->buffer, d->bindings[slot - q].buffer, "tensor %d part %d", t, q);
      cr_assert_eq(b->offset, d->bindings[slot - q].offset + covered);
      cr_assert_leq(b->range, 8192u);
      cr_assert_eq(b->offset % 16, 0u);
      covered += b->range;
    }
    cr_assert_eq(covered, sizes[t], "tensor %d", t);
  }
  vkp_spirv_program_destroy(p);
  // Too many parts for one dispatch's bindings: refused, naming the limit.
  small.max_storage_range = 1024;
  cr_assert_not(vkp_spirv_supports_on(g, &g->nodes[0], &small, reason, sizeof reason));
  cr_assert(strstr(reason, "bindings") && strstr(reason, "maxStorageBufferRange"), "%s",
            reason);
  vkp_graph_destroy(g);
}

// Allocation failures anywhere in codegen come back as statuses, leak-free.
Test(spirv_codegen, allocation_failures, .timeout = 120) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = NULL;
  for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
    if (strcmp(vkp_spirv_cases[i].name, "fuse_shared_value") == 0)
      g = vkp_spirv_cases[i].build(&rng);
  cr_assert_not_null(g);
  for (int64_t fail_at = 1;; fail_at += 7) {
    vkp_test_counting_alloc_t state;
    vkp_test_counting_alloc_install(&state, fail_at);
    vkp_spirv_program_t *p = NULL;
    vkp_status_t st = vkp_spirv_codegen(g, &lavapipe_like, NULL, &p);
    bool failed = state.failed, ok = st == NULL;
    vkp_spirv_program_destroy(p);
    vkp_status_free(st);
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(state.live, 0, "fail_at %lld leaks %lld blocks", (long long)fail_at,
                 (long long)state.live);
    if (!failed) {
      cr_assert(ok);
      break;
    }
    cr_assert_not(ok, "fail_at %lld: failure swallowed", (long long)fail_at);
  }
  vkp_graph_destroy(g);
}

// Long rows get a workgroup per row on GPUs, an invocation per row on CPUs.
Test(spirv_codegen, row_variant_follows_device, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  unsetenv("VKPIPE_SPIRV_ROWS");
  const char *names[] = {"softmax_long_row", "layer_norm_long_row", "reduce_sum_long",
                         "global_avg_pool_16x16", "softmax_last"};
  const uint32_t rows[] = {3, 2, 5, 6, 7};
  for (size_t c = 0; c < sizeof names / sizeof names[0]; ++c) {
    vkp_graph_t *g = NULL;
    for (int i = 0; i < vkp_spirv_case_count && !g; ++i)
      if (strcmp(vkp_spirv_cases[i].name, names[c]) == 0) g = vkp_spirv_cases[i].build(&rng);
    cr_assert_not_null(g, "%s", names[c]);
    vkp_spirv_program_t *p = NULL;
    VKP_TEST_OK(vkp_spirv_codegen(g, &gpu_like, NULL, &p));
    bool long_row = c < 4;
    cr_assert_eq(p->dispatches[0].local_size[0], long_row ? 256u : 64u, "%s", names[c]);
    if (long_row) cr_assert_eq(p->dispatches[0].groups[0], rows[c], "%s", names[c]);
    vkp_spirv_program_destroy(p);
    VKP_TEST_OK(vkp_spirv_codegen(g, &lavapipe_like, NULL, &p));
    cr_assert_eq(p->dispatches[0].local_size[0], 64u, "%s", names[c]);
    vkp_spirv_program_destroy(p);
    vkp_graph_destroy(g);
  }
}

// A 132 MiB weight is split across two bindings on a device that binds at
// most 128 MiB (alexnet's and vgg's classifiers on lavapipe); a softmax over
// a tensor that large is refused at placement, naming the tensor, its size
// and the limit, and fits a device with a larger range. (The tensors are
// described, never allocated: supports() reads shapes only.)
Test(spirv_codegen, storage_range_limit_refuses_at_placement, .timeout = 60) {
  vkp_value_t values[3] = {
      {.name = "x", .kind = VKP_VALUE_INPUT, .dtype = VKP_DTYPE_FLOAT32,
       .rank = 2, .shape = {1, 8448}},
      {.name = "fc_w", .kind = VKP_VALUE_CONSTANT, .dtype = VKP_DTYPE_FLOAT32,
       .rank = 2, .shape = {8448, 4096}},
      {.name = "y", .kind = VKP_VALUE_INTERMEDIATE, .dtype = VKP_DTYPE_FLOAT32,
       .rank = 2, .shape = {1, 4096}}};
  int32_t ins[] = {0, 1}, outs[] = {2};
  vkp_node_t node = {.name = "fc", .op = VKP_OP_MATMUL, .n_inputs = 2,
                     .inputs = ins, .n_outputs = 1, .outputs = outs};
  vkp_graph_t g = {.name = "g", .n_values = 3, .values = values, .n_nodes = 1,
                   .nodes = &node};
  char reason[256] = "";
  cr_assert(vkp_spirv_supports(&g, &node, reason, sizeof reason));
  cr_assert(vkp_spirv_supports_on(&g, &node, &lavapipe_like, reason, sizeof reason), "%s",
            reason);
  int32_t sm_ins[] = {1}, sm_outs[] = {1};
  vkp_attr_t axis = {.name = "axis", .kind = VKP_ATTR_INT, .i = -1};
  vkp_node_t softmax = {.name = "sm", .op = VKP_OP_SOFTMAX, .n_inputs = 1,
                        .inputs = sm_ins, .n_outputs = 1, .outputs = sm_outs,
                        .n_attrs = 1, .attrs = &axis};
  cr_assert_not(vkp_spirv_supports_on(&g, &softmax, &lavapipe_like, reason, sizeof reason));
  cr_assert(strstr(reason, "weight 'fc_w' is 132.0 MiB") &&
                strstr(reason, "at most 128.0 MiB") &&
                strstr(reason, "maxStorageBufferRange"),
            "%s", reason);
  cr_assert(vkp_spirv_supports_on(&g, &softmax, &gpu_like, reason, sizeof reason), "%s",
            reason);
}

// --precision fp16 keeps the weights of matrix products and convolutions as
// float16 constant buffers (2 bytes an element, declared float16_t), leaves
// biases float32, and is refused on a device without
// storageBuffer16BitAccess.
Test(spirv_codegen, fp16_weights, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  vkp_graph_t *g = build_case("fuse_matmul_bias_relu", &rng);
  vkp_compile_options_t fp16 = {.precision = VKP_PRECISION_FP16};
  vkp_spirv_device_info_t dev = lavapipe_like;
  dev.storage_16bit = true;
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &dev, &fp16, &p));
  int half = 0, full_constants = 0;
  for (int32_t b = 0; b < p->n_buffers; ++b) {
    const vkp_spirv_buffer_t *buf = &p->buffers[b];
    if (buf->kind == VKP_SPIRV_BUFFER_CONSTANT_F16) {
      ++half;
      cr_assert_eq(buf->size, 20u * 13u * 2u);  // w [20, 13]
    }
    full_constants += buf->kind == VKP_SPIRV_BUFFER_CONSTANT;
  }
  cr_assert_eq(half, 1);
  cr_assert_eq(full_constants, 1);  // the bias
  vkp_spirv_program_destroy(p);
  dev.storage_16bit = false;
  vkp_status_t st = vkp_spirv_codegen(g, &dev, &fp16, &p);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "storageBuffer16BitAccess"), "%s",
            vkp_status_message(st));
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// Split-K by shape: a skinny product (M = 2, N = 64, K = 4096: one 64 x 64
// tile) runs as partial sums over K slices plus a reduction (two dispatches,
// the partials in scratch past every value): 16 slices of 256 on a GPU
// (128 workgroups wanted); one dispatch on a CPU device (never by shape),
// with VKPIPE_SPIRV_SPLITK=off, or for a product with K < 1024.
Test(spirv_codegen, split_k_by_shape, .timeout = 60) {
  vkp_test_rng_t rng;
  vkp_test_rng_init(&rng);
  unsetenv("VKPIPE_SPIRV_SPLITK");
  vkp_graph_t *g = build_case("matmul_skinny_2x4096x64", &rng);
  const vkp_spirv_device_info_t *devices[1] = {&gpu_like};
  const uint32_t slices[1] = {16};
  for (int d = 0; d < 1; ++d) {
    vkp_spirv_program_t *p = NULL;
    VKP_TEST_OK(vkp_spirv_codegen(g, devices[d], NULL, &p));
    cr_assert_eq(p->n_dispatches, 2);
    const vkp_spirv_dispatch_t *partial = &p->dispatches[0], *reduce = &p->dispatches[1];
    cr_assert_eq(partial->groups[2], slices[d]);
    cr_assert_eq(partial->bindings[0].range, slices[d] * 2u * 64u * 4u);
    cr_assert_eq(reduce->n_bindings, 2);
    cr_assert_eq(reduce->bindings[1].buffer, partial->bindings[0].buffer);
    cr_assert_eq(reduce->bindings[1].offset, partial->bindings[0].offset);
    cr_assert_eq(p->buffers[partial->bindings[0].buffer].kind, VKP_SPIRV_BUFFER_SCRATCH);
    vkp_spirv_program_destroy(p);
  }
  vkp_spirv_program_t *p = NULL;
  VKP_TEST_OK(vkp_spirv_codegen(g, &lavapipe_like, NULL, &p));
  cr_assert_eq(p->n_dispatches, 1);
  vkp_spirv_program_destroy(p);
  setenv("VKPIPE_SPIRV_SPLITK", "off", 1);
  VKP_TEST_OK(vkp_spirv_codegen(g, &gpu_like, NULL, &p));
  cr_assert_eq(p->n_dispatches, 1);
  vkp_spirv_program_destroy(p);
  unsetenv("VKPIPE_SPIRV_SPLITK");
  vkp_graph_destroy(g);
  g = build_case("matmul_65x67x33", &rng);  // K = 67: never split by shape
  VKP_TEST_OK(vkp_spirv_codegen(g, &gpu_like, NULL, &p));
  cr_assert_eq(p->n_dispatches, 1);
  vkp_spirv_program_destroy(p);
  vkp_graph_destroy(g);
}
