// SPDX-License-Identifier: Apache-2.0
// The stage executor on hand-built programs (shaders compiled here with
// shaderc), checked against host arithmetic on fresh random inputs.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/vulkan/stage.h"
#include "support/test_graph.h"
#include "support/test_support.h"
#include "tests/runtime/vulkan/vk_test_util.h"

static vkp_test_rng_t rng;

static void seed(void) {
  uint64_t s = vkp_test_rng_init(&rng);
  cr_log_info("seed %llu (VKPIPE_TEST_SEED)", (unsigned long long)s);
}

// x, y inputs of n floats; out = x + y (the op only documents the graph: the
// program is what runs).
static vkp_graph_t *binary_graph(int64_t n) {
  vkp_graph_t *g = g_new("binary");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, &n);
  g_in(g, "y", VKP_DTYPE_FLOAT32, 1, &n);
  g_node(g, "add", VKP_OP_ADD, "x,y", "out", 0, NULL);
  g_out(g, "out");
  g_validate(g);
  return g;
}

static void tensors(int64_t n, int count, vkp_tensor_t *t) {
  for (int i = 0; i < count; ++i) {
    VKP_TEST_OK(vkp_tensor_init(&t[i], VKP_DTYPE_FLOAT32, 1, &n));
    vkp_test_fill_uniform(&rng, &t[i], -2.0f, 2.0f);
  }
}

static void deinit_all(vkp_tensor_t *t, int count) {
  for (int i = 0; i < count; ++i) vkp_tensor_deinit(&t[i]);
}

static void run_binary(vkp_vk_device_t *dev, int64_t n, uint32_t local) {
  vkp_graph_t *g = binary_graph(n);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, (uint64_t)n * 4}};
  vkp_spirv_dispatch_t d;
  vkp_vk_test_dispatch(&d, "add", "a[i] + b[i]", (uint32_t)n, local, 0, 1, 2);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  vkp_vk_test_program_free(&prog);
  for (int rep = 0; rep < 2; ++rep) {
    vkp_tensor_t in[2], out, want;
    tensors(n, 2, in);
    tensors(n, 1, &out);
    VKP_TEST_OK(vkp_tensor_init(&want, VKP_DTYPE_FLOAT32, 1, &n));
    for (int64_t i = 0; i < n; ++i)
      ((float *)want.data)[i] = ((float *)in[0].data)[i] + ((float *)in[1].data)[i];
    VKP_TEST_OK(vkp_vk_stage_run(stage, in, &out));
    char msg[256];
    cr_assert(vkp_test_allclose(&out, &want, 1e-6, 0, msg, sizeof msg), "%s", msg);
    deinit_all(in, 2);
    vkp_tensor_deinit(&out);
    vkp_tensor_deinit(&want);
  }
  vkp_vk_stage_stats_t stats;
  vkp_vk_stage_stats(stage, &stats);
  uint32_t groups = (uint32_t)((n + local - 1) / local);
  uint32_t max = dev->properties.limits.maxComputeWorkGroupCount[0];
  cr_assert_eq(stats.dispatch_calls, (int32_t)((groups + max - 1) / max));
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
}

Test(stage, add_awkward_size, .timeout = 60) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  run_binary(dev, 1 + vkp_test_rng_below(&rng, 3000), 64);
  run_binary(dev, 1, 64);
  vkp_vk_test_device_done(dev);
}

Test(stage, add_with_copies_like_a_discrete_gpu, .timeout = 60) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(true);
  cr_assert_not(dev->unified_memory);
  run_binary(dev, 1 + vkp_test_rng_below(&rng, 3000), 64);
  vkp_vk_test_device_done(dev);
}

Test(stage, grid_larger_than_max_workgroup_count, .timeout = 120) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  uint32_t max = dev->properties.limits.maxComputeWorkGroupCount[0];
  if (max > (1u << 20)) {  // GPUs allow 2^31 - 1 groups: too many to run here
    vkp_vk_test_device_done(dev);
    cr_skip_test("maxComputeWorkGroupCount[0] = %u: too large to test cheaply", max);
  }
  // One invocation per workgroup, so the grid is the element count.
  run_binary(dev, (int64_t)max + 1 + vkp_test_rng_below(&rng, 5000), 1);
  vkp_vk_test_device_done(dev);
}

Test(stage, grid_split_in_two_dimensions, .timeout = 120) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  const uint32_t max = dev->properties.limits.maxComputeWorkGroupCount[0];
  if (max > (1u << 20)) {  // GPUs allow 2^31 - 1 groups: too many to run here
    vkp_vk_test_device_done(dev);
    cr_skip_test("maxComputeWorkGroupCount[0] = %u: too large to test cheaply", max);
  }
  const uint32_t w = max + 3, h = 2;
  const int64_t n = (int64_t)w * h;
  vkp_graph_t *g = binary_graph(n);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, (uint64_t)n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, (uint64_t)n * 4}};
  char glsl[1024];
  snprintf(glsl, sizeof glsl,
           "#version 450\n"
           "layout(local_size_x = 1) in;\n"
           "layout(binding = 0) readonly buffer A { float a[]; };\n"
           "layout(binding = 1) readonly buffer B { float b[]; };\n"
           "layout(binding = 2) writeonly buffer Y { float y[]; };\n"
           "void main() {\n"
           "  uint i = gl_WorkGroupID.y * %uu + gl_WorkGroupID.x;\n"
           "  y[i] = a[i] * b[i] + float(gl_WorkGroupID.y);\n"
           "}\n",
           w);
  vkp_spirv_binding_t bind[3];
  for (int j = 0; j < 3; ++j)
    bind[j] = (vkp_spirv_binding_t){.buffer = j, .offset = 0, .range = (uint64_t)n * 4};
  vkp_spirv_dispatch_t d = {.name = "mad2d", .groups = {w, h, 1}, .n_bindings = 3,
                            .bindings = bind, .local_size = {1, 1, 1}};
  d.code = vkp_vk_test_compile(glsl, &d.code_words);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  free(d.code);
  vkp_tensor_t in[2], out, want;
  tensors(n, 2, in);
  tensors(n, 1, &out);
  VKP_TEST_OK(vkp_tensor_init(&want, VKP_DTYPE_FLOAT32, 1, &n));
  for (int64_t i = 0; i < n; ++i)
    ((float *)want.data)[i] =
        ((float *)in[0].data)[i] * ((float *)in[1].data)[i] + (float)(i / w);
  VKP_TEST_OK(vkp_vk_stage_run(stage, in, &out));
  char msg[256];
  cr_assert(vkp_test_allclose(&out, &want, 1e-6, 1e-6, msg, sizeof msg), "%s", msg);
  vkp_vk_stage_stats_t stats;
  vkp_vk_stage_stats(stage, &stats);
  cr_assert_eq(stats.dispatch_calls, 2);
  deinit_all(in, 2);
  vkp_tensor_deinit(&out);
  vkp_tensor_deinit(&want);
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}

// x input, w constant; t = x * w (scratch), out = t + x, and an independent
// out2 = w + w. Dependent dispatches get a barrier, independent ones none.
static void run_chain(bool force_copies) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(force_copies);
  int64_t n = 1 + vkp_test_rng_below(&rng, 4000);
  vkp_tensor_t w;
  tensors(n, 1, &w);
  vkp_graph_t *g = g_new("chain");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, &n);
  int32_t wv = -1;
  VKP_TEST_OK(vkp_graph_add_constant(g, "w", VKP_DTYPE_FLOAT32, 1, &n, w.data, &wv));
  g_node(g, "mul", VKP_OP_MUL, "x,w", "t", 0, NULL);
  g_node(g, "add", VKP_OP_ADD, "t,x", "out", 0, NULL);
  g_node(g, "add2", VKP_OP_ADD, "w,w", "out2", 0, NULL);
  g_out(g, "out,out2");
  g_validate(g);
  wv = vkp_graph_find_value(g, "w");
  const uint64_t bytes = (uint64_t)n * 4;
  // Scratch holds t at an aligned offset, to test offsets.
  const uint64_t off = 256;
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, bytes},
                               {VKP_SPIRV_BUFFER_CONSTANT, wv, bytes},
                               {VKP_SPIRV_BUFFER_SCRATCH, -1, off + bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 1, bytes}};
  vkp_spirv_dispatch_t d[3];
  vkp_vk_test_dispatch(&d[0], "add2", "a[i] + b[i]", (uint32_t)n, 64, 1, 1, 4);
  vkp_vk_test_dispatch(&d[1], "mul", "a[i] * b[i]", (uint32_t)n, 64, 0, 1, 2);
  d[1].bindings[2].offset = off;
  vkp_vk_test_dispatch(&d[2], "add", "a[i] + b[i]", (uint32_t)n, 64, 2, 0, 3);
  d[2].bindings[0].offset = off;
  vkp_spirv_program_t prog = {.n_buffers = 5, .buffers = bufs, .n_dispatches = 3,
                              .dispatches = d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  vkp_vk_test_program_free(&prog);
  vkp_vk_stage_stats_t stats;
  vkp_vk_stage_stats(stage, &stats);
  // add2 and mul both read the constant: without read/write information per
  // binding that counts as an overlap. mul -> add is a true dependency.
  cr_assert_eq(stats.compute_barriers, 2);
  for (int rep = 0; rep < 2; ++rep) {
    vkp_tensor_t x, out[2], want[2];
    tensors(n, 1, &x);
    tensors(n, 2, out);
    tensors(n, 2, want);
    const float *xp = x.data, *wp = w.data;
    for (int64_t i = 0; i < n; ++i) {
      ((float *)want[0].data)[i] = xp[i] * wp[i] + xp[i];
      ((float *)want[1].data)[i] = wp[i] + wp[i];
    }
    VKP_TEST_OK(vkp_vk_stage_run(stage, &x, out));
    char msg[256];
    for (int k = 0; k < 2; ++k)
      cr_assert(vkp_test_allclose(&out[k], &want[k], 1e-6, 1e-6, msg, sizeof msg),
                "output %d: %s", k, msg);
    vkp_tensor_deinit(&x);
    deinit_all(out, 2);
    deinit_all(want, 2);
  }
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
  vkp_tensor_deinit(&w);
  vkp_vk_test_device_done(dev);
}

Test(stage, constants_scratch_and_barriers, .timeout = 60) { run_chain(false); }
Test(stage, constants_scratch_and_barriers_with_copies, .timeout = 60) { run_chain(true); }

Test(stage, independent_dispatches_need_no_barrier, .timeout = 60) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  const int64_t n = 100;
  vkp_graph_t *g = NULL;
  // Two inputs, two outputs: out0 = x + x, out1 = y + y.
  g = g_new("two");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, &n);
  g_in(g, "y", VKP_DTYPE_FLOAT32, 1, &n);
  g_node(g, "a", VKP_OP_ADD, "x,x", "o0", 0, NULL);
  g_node(g, "b", VKP_OP_ADD, "y,y", "o1", 0, NULL);
  g_out(g, "o0,o1");
  g_validate(g);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 1, n * 4}};
  vkp_spirv_dispatch_t d[2];
  vkp_vk_test_dispatch(&d[0], "a", "a[i] + b[i]", n, 64, 0, 0, 2);
  vkp_vk_test_dispatch(&d[1], "b", "a[i] + b[i]", n, 64, 1, 1, 3);
  vkp_spirv_program_t prog = {.n_buffers = 4, .buffers = bufs, .n_dispatches = 2,
                              .dispatches = d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  vkp_vk_test_program_free(&prog);
  vkp_vk_stage_stats_t stats;
  vkp_vk_stage_stats(stage, &stats);
  cr_assert_eq(stats.compute_barriers, 0);
  vkp_tensor_t in[2], out[2];
  tensors(n, 2, in);
  tensors(n, 2, out);
  VKP_TEST_OK(vkp_vk_stage_run(stage, in, out));
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < n; ++i)
      cr_assert_float_eq(((float *)out[k].data)[i], 2 * ((float *)in[k].data)[i], 1e-6);
  deinit_all(in, 2);
  deinit_all(out, 2);
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}

// A dispatch of `glsl` (local size 64 along x, `n` invocations) over
// `n_bindings` bindings of n floats: buffer bufs[j] at offsets[j].
static void raw_dispatch(vkp_spirv_dispatch_t *d, const char *name, const char *glsl,
                         uint32_t n, int32_t n_bindings, const int32_t *bufs,
                         const uint64_t *offsets) {
  vkp_vk_test_glsl_dispatch(d, name, glsl, 64, (n + 63) / 64, n_bindings);
  for (int32_t j = 0; j < n_bindings; ++j)
    d->bindings[j] = (vkp_spirv_binding_t){.buffer = bufs[j], .offset = offsets[j],
                                           .range = (uint64_t)n * 4};
}

// A hostile (or buggy) shader, as a tampered artifact could carry: it reads
// its input past the end of the binding and writes its scratch tensor both
// past its end and before its start, where the neighbouring tensors of the
// same scratch buffer lie, and writes an output binding out of range too.
// With robustBufferAccess2 (lavapipe has it) the reads give 0 and the stray
// writes are dropped: the neighbours keep their bytes exactly, and the
// validation layer stays silent.
static void run_out_of_range(bool force_copies) {
  seed();
  vkp_vk_device_t *dev = vkp_vk_test_device(force_copies);
  if (dev->robustness < VKP_VK_ROBUSTNESS_BINDING) {
    vkp_vk_test_device_done(dev);
    cr_skip_test("the device lacks robustBufferAccess2: out-of-range writes may land "
                 "anywhere in the same VkBuffer");
  }
  // 256 floats: 1 KiB, a multiple of every minStorageBufferOffsetAlignment,
  // so the three scratch tensors are packed end to end.
  const int64_t n = 256;
  const uint64_t bytes = (uint64_t)n * 4;
  cr_assert_eq(bytes % dev->properties.limits.minStorageBufferOffsetAlignment, 0);
  vkp_graph_t *g = g_new("hostile");
  g_in(g, "x", VKP_DTYPE_FLOAT32, 1, &n);
  g_node(g, "a", VKP_OP_ADD, "x,x", "out", 0, NULL);
  g_node(g, "m", VKP_OP_MUL, "x,x", "lo", 0, NULL);
  g_node(g, "b", VKP_OP_ADD, "out,x", "hi", 0, NULL);
  g_out(g, "out,lo,hi");
  g_validate(g);
  // Buffers: x, scratch [lo | victim | hi], outputs out, lo, hi.
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, bytes},
                               {VKP_SPIRV_BUFFER_SCRATCH, -1, 3 * bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 1, bytes},
                               {VKP_SPIRV_BUFFER_OUTPUT, 2, bytes}};
  char glsl[2048];
  vkp_spirv_dispatch_t d[4];
  // 0: the neighbours, lo = x + 1 and hi = 2x.
  snprintf(glsl, sizeof glsl,
           "#version 450\nlayout(local_size_x = 64) in;\n"
           "layout(binding = 0) readonly buffer X { float x[]; };\n"
           "layout(binding = 1) writeonly buffer L { float lo[]; };\n"
           "layout(binding = 2) writeonly buffer H { float hi[]; };\n"
           "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i < %uu) { lo[i] = x[i] + 1.0; hi[i] = 2.0 * x[i]; }\n}\n",
           (unsigned)n);
  raw_dispatch(&d[0], "neighbours", glsl, (uint32_t)n, 3, (int32_t[]){0, 1, 1},
               (uint64_t[]){0, 0, 2 * bytes});
  // 1: the hostile kernel on the victim between them.
  snprintf(glsl, sizeof glsl,
           "#version 450\nlayout(local_size_x = 64) in;\n"
           "layout(binding = 0) readonly buffer X { float x[]; };\n"
           "layout(binding = 1) buffer V { float v[]; };\n"
           "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i >= %uu) return;\n"
           "  const uint n = %uu;\n"
           "  v[i] = x[i] + x[i + n] + x[i + 4096u * n];\n"  // reads past the end
           "  v[i + n] = -1.0e30;\n"                        // the next tensor
           "  v[int(i) - int(n)] = -2.0e30;\n"              // the previous one
           "  v[i + 1048576u] = -3.0e30;\n"                 // far past the buffer
           "}\n",
           (unsigned)n, (unsigned)n);
  raw_dispatch(&d[1], "hostile", glsl, (uint32_t)n, 2, (int32_t[]){0, 1},
               (uint64_t[]){0, bytes});
  // 2: copy the three scratch tensors out.
  snprintf(glsl, sizeof glsl,
           "#version 450\nlayout(local_size_x = 64) in;\n"
           "layout(binding = 0) readonly buffer V { float v[]; };\n"
           "layout(binding = 1) readonly buffer L { float lo[]; };\n"
           "layout(binding = 2) readonly buffer H { float hi[]; };\n"
           "layout(binding = 3) writeonly buffer O { float o[]; };\n"
           "layout(binding = 4) writeonly buffer P { float olo[]; };\n"
           "layout(binding = 5) writeonly buffer Q { float ohi[]; };\n"
           "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i < %uu) { o[i] = v[i]; olo[i] = lo[i]; ohi[i] = hi[i]; }\n}\n",
           (unsigned)n);
  raw_dispatch(&d[2], "copy", glsl, (uint32_t)n, 6, (int32_t[]){1, 1, 1, 2, 3, 4},
               (uint64_t[]){bytes, 0, 2 * bytes, 0, 0, 0});
  // 3: stray writes around the middle output binding.
  snprintf(glsl, sizeof glsl,
           "#version 450\nlayout(local_size_x = 64) in;\n"
           "layout(binding = 0) writeonly buffer O { float o[]; };\n"
           "void main() {\n  uint i = gl_GlobalInvocationID.x;\n"
           "  if (i >= %uu) return;\n"
           "  o[i + %uu] = -4.0e30;\n  o[int(i) - %d] = -5.0e30;\n}\n",
           (unsigned)n, (unsigned)n, (int)n);
  raw_dispatch(&d[3], "stray", glsl, (uint32_t)n, 1, (int32_t[]){3}, (uint64_t[]){0});
  vkp_spirv_program_t prog = {.n_buffers = 5, .buffers = bufs, .n_dispatches = 4,
                              .dispatches = d};
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  vkp_vk_test_program_free(&prog);
  for (int rep = 0; rep < 2; ++rep) {
    vkp_tensor_t x, out[3];
    tensors(n, 1, &x);
    tensors(n, 3, out);
    VKP_TEST_OK(vkp_vk_stage_run(stage, &x, out));
    const float *xp = x.data;
    const float *o = out[0].data, *lo = out[1].data, *hi = out[2].data;
    for (int64_t i = 0; i < n; ++i) {
      // Bit-exact: the same float operations on both sides.
      float want_lo = xp[i] + 1.0f, want_hi = 2.0f * xp[i];
      cr_assert(memcmp(&lo[i], &want_lo, 4) == 0, "lo[%lld] = %g, want %g (x = %g)",
                (long long)i, lo[i], want_lo, xp[i]);
      cr_assert(memcmp(&hi[i], &want_hi, 4) == 0, "hi[%lld] = %g, want %g (x = %g)",
                (long long)i, hi[i], want_hi, xp[i]);
      // Reads out of range give 0.0.
      cr_assert(memcmp(&o[i], &xp[i], 4) == 0, "out[%lld] = %g, want %g", (long long)i,
                o[i], xp[i]);
    }
    vkp_tensor_deinit(&x);
    deinit_all(out, 3);
  }
  vkp_vk_stage_destroy(stage);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}

Test(stage, out_of_range_shader_keeps_to_its_bindings, .timeout = 60) {
  run_out_of_range(false);
}
Test(stage, out_of_range_shader_keeps_to_its_bindings_with_copies, .timeout = 60) {
  run_out_of_range(true);
}

// A program that breaks one rule: create fails with `code` and a message
// containing `needle`, and nothing leaks (ASan checks the rest).
static void expect_rejected(vkp_vk_device_t *dev, const vkp_graph_t *g,
                            vkp_spirv_program_t *prog, vkp_status_code_t code,
                            const char *needle) {
  vkp_vk_stage_t *stage = NULL;
  vkp_status_t st = vkp_vk_stage_create(dev, g, prog, &stage);
  cr_assert_eq(vkp_status_code(st), code, "%s", vkp_status_message(st));
  cr_assert(strstr(vkp_status_message(st), needle), "'%s' not in: %s", needle,
            vkp_status_message(st));
  cr_assert_null(stage);
  vkp_status_free(st);
}

Test(stage, rejects_bad_programs, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  const int64_t n = 64;
  vkp_graph_t *g = binary_graph(n);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_SCRATCH, -1, 0}};
  vkp_spirv_dispatch_t d;
  vkp_vk_test_dispatch(&d, "add", "a[i] + b[i]", n, 64, 0, 1, 2);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  // A binding wider than maxStorageBufferRange (128 MiB on lavapipe).
  uint64_t huge = (uint64_t)dev->properties.limits.maxStorageBufferRange + 16;
  bufs[3].size = huge;
  prog.n_buffers = 4;
  d.bindings[2] = (vkp_spirv_binding_t){.buffer = 3, .offset = 0, .range = huge};
  expect_rejected(dev, g, &prog, VKP_STATUS_OUT_OF_RANGE, "buffer 3 (scratch #-1)");
  d.bindings[2] = (vkp_spirv_binding_t){.buffer = 2, .offset = 0, .range = n * 4};
  prog.n_buffers = 3;
  // Input size not matching the graph.
  bufs[0].size = n * 4 - 4;
  expect_rejected(dev, g, &prog, VKP_STATUS_INVALID_ARGUMENT, "input 'x'");
  bufs[0].size = n * 4;
  // A binding past its buffer, a misaligned offset, a missing buffer.
  d.bindings[1].offset = 16;
  expect_rejected(dev, g, &prog, VKP_STATUS_INVALID_ARGUMENT, "outside buffer 1");
  d.bindings[1].offset = 4;
  d.bindings[1].range = 16;
  expect_rejected(dev, g, &prog, VKP_STATUS_INVALID_ARGUMENT,
                  "minStorageBufferOffsetAlignment");
  d.bindings[1] = (vkp_spirv_binding_t){.buffer = 7, .offset = 0, .range = 4};
  expect_rejected(dev, g, &prog, VKP_STATUS_INVALID_ARGUMENT, "no buffer 7");
  d.bindings[1] = (vkp_spirv_binding_t){.buffer = 1, .offset = 0, .range = n * 4};
  // An output index the graph does not have.
  bufs[2].index = 3;
  expect_rejected(dev, g, &prog, VKP_STATUS_INVALID_ARGUMENT, "output #3");
  bufs[2].index = 0;
  // Wrong tensor sizes at run time.
  vkp_vk_stage_t *stage = NULL;
  VKP_TEST_OK(vkp_vk_stage_create(dev, g, &prog, &stage));
  int64_t m = n - 1;
  vkp_tensor_t in[2], out;
  VKP_TEST_OK(vkp_tensor_init(&in[0], VKP_DTYPE_FLOAT32, 1, &n));
  VKP_TEST_OK(vkp_tensor_init(&in[1], VKP_DTYPE_FLOAT32, 1, &m));
  VKP_TEST_OK(vkp_tensor_init(&out, VKP_DTYPE_FLOAT32, 1, &n));
  vkp_status_t st = vkp_vk_stage_run(stage, in, &out);
  cr_assert_eq(vkp_status_code(st), VKP_STATUS_INVALID_ARGUMENT);
  vkp_status_free(st);
  deinit_all(in, 2);
  vkp_tensor_deinit(&out);
  vkp_vk_stage_destroy(stage);
  vkp_vk_test_program_free(&prog);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}

Test(stage, pipeline_cache_is_saved, .timeout = 60) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  run_binary(dev, 10, 64);
  struct stat sb;
  cr_assert_not_null(dev->pipeline_cache_path);
  cr_assert_eq(stat(dev->pipeline_cache_path, &sb), 0, "no cache file at %s",
               dev->pipeline_cache_path);
  cr_assert_geq(sb.st_size, 32);  // at least the header (lavapipe caches nothing)
  vkp_vk_test_device_done(dev);
}

Test(stage, allocation_failures_are_statuses, .timeout = 120) {
  vkp_vk_device_t *dev = vkp_vk_test_device(false);
  const int64_t n = 32;
  vkp_graph_t *g = binary_graph(n);
  vkp_spirv_buffer_t bufs[] = {{VKP_SPIRV_BUFFER_INPUT, 0, n * 4},
                               {VKP_SPIRV_BUFFER_INPUT, 1, n * 4},
                               {VKP_SPIRV_BUFFER_OUTPUT, 0, n * 4}};
  vkp_spirv_dispatch_t d;
  vkp_vk_test_dispatch(&d, "add", "a[i] + b[i]", n, 64, 0, 1, 2);
  vkp_spirv_program_t prog = {.n_buffers = 3, .buffers = bufs, .n_dispatches = 1,
                              .dispatches = &d};
  for (int64_t fail_at = 1;; ++fail_at) {
    vkp_test_counting_alloc_t counter;
    vkp_test_counting_alloc_install(&counter, fail_at);
    vkp_vk_stage_t *stage = NULL;
    vkp_status_t st = vkp_vk_stage_create(dev, g, &prog, &stage);
    if (!st) {
      // Either nothing failed, or what failed is optional (saving the
      // pipeline cache): the stage works and frees everything.
      vkp_vk_stage_destroy(stage);
      vkp_test_counting_alloc_uninstall();
      cr_assert_eq(counter.live, 0, "fail_at %lld leaked", (long long)fail_at);
      if (!counter.failed) break;
      continue;
    }
    cr_assert_eq(vkp_status_code(st), VKP_STATUS_OUT_OF_MEMORY, "fail_at %lld: %s",
                 (long long)fail_at, vkp_status_message(st));
    cr_assert_null(stage);
    vkp_status_free(st);
    vkp_test_counting_alloc_uninstall();
    cr_assert_eq(counter.live, 0, "fail_at %lld leaked %lld", (long long)fail_at,
                 (long long)counter.live);
  }
  vkp_vk_test_program_free(&prog);
  vkp_graph_destroy(g);
  vkp_vk_test_device_done(dev);
}
