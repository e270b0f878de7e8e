// SPDX-License-Identifier: Apache-2.0
// Property tests over the op table (include/vkpipe/ops.h, graph/ops.c): every
// op has every property, in range and consistent with itself, and the code
// generators agree with the table about what fuses and what is a view.
#include <criterion/criterion.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "codegen/spirv/kernels.h"
#include "codegen/spirv/program.h"
#include "graph/ops_internal.h"
#include "support/test_graph.h"
#include "support/test_support.h"

Test(ops, every_op_has_every_property, .timeout = 30) {
  for (int o = 0; o < VKP_OP_COUNT; ++o) {
    vkp_op_t op = (vkp_op_t)o;
    const char *name = vkp_op_name(op);
    cr_assert(name && name[0] && strcmp(name, "unknown") != 0, "op %d", o);
    cr_assert_eq(vkp_op_parse(name), op, "'%s' does not parse back", name);
    int32_t imin, imax, omin, omax;
    vkp_op_arity(op, &imin, &imax, &omin, &omax);
    cr_assert(imin >= 0 && (imax == -1 || imax >= imin), "%s: inputs %d..%d", name,
              imin, imax);
    cr_assert(omin >= 1 && (omax == -1 || omax >= omin), "%s: outputs %d..%d", name,
              omin, omax);
    cr_assert((unsigned)vkp_op_pattern(op) < VKP_OP_PATTERN_COUNT, "%s", name);
    cr_assert(strcmp(vkp_op_pattern_name(vkp_op_pattern(op)), "unknown") != 0);
    cr_assert((unsigned)vkp_op_cost_class(op) < VKP_OP_COST_COUNT, "%s", name);
    cr_assert(vkp_op_cost_factor(op) >= 0, "%s", name);
    cr_assert(vkp_op_dtypes(op) != 0 && (vkp_op_dtypes(op) & ~VKP_DTYPE_SET_ALL) == 0,
              "%s: dtypes", name);
    // A view relabels input 0's bytes: one input, one output, any dtype,
    // injective, no work.
    if (vkp_op_is_view(op)) {
      cr_assert(imin == 1 && imax == 1 && omin == 1 && omax == 1, "%s", name);
      cr_assert_eq(vkp_op_pattern(op), VKP_OP_PATTERN_INJECTIVE, "%s", name);
      cr_assert_eq(vkp_op_dtypes(op), VKP_DTYPE_SET_ALL, "%s", name);
      cr_assert_eq(vkp_op_cost_class(op), VKP_OP_COST_VIEW, "%s", name);
    } else {
      cr_assert_neq(vkp_op_cost_class(op), VKP_OP_COST_VIEW, "%s", name);
    }
    // Elementwise and broadcast ops have one output per input element.
    if (vkp_op_pattern(op) <= VKP_OP_PATTERN_BROADCAST)
      cr_assert(omin == 1 && omax == 1, "%s", name);
  }
  cr_assert_eq(vkp_op_parse("no_such_op"), VKP_OP_COUNT);
  cr_assert_eq(vkp_op_parse(NULL), VKP_OP_COUNT);
  cr_assert_str_eq(vkp_op_name(VKP_OP_COUNT), "unknown");
}

// Defaults live in the schema and validation writes them: a node built with
// no attributes reads every defaulted one back.
Test(ops, schema_defaults_are_written_at_validation, .timeout = 30) {
  vkp_graph_t *g = g_new("defaults");
  int64_t s[] = {2, 3};
  g_in(g, "x", VKP_DTYPE_FLOAT32, 2, s);
  g_node(g, "lr", VKP_OP_LEAKY_RELU, "x", "a", 0, NULL);
  g_node(g, "ge", VKP_OP_GELU, "a", "b", 0, NULL);
  g_node(g, "sm", VKP_OP_SOFTMAX, "b", "c", 0, NULL);
  g_out(g, "c");
  g_validate(g);
  const vkp_node_t *lr = &g->nodes[vkp_graph_find_node(g, "lr")];
  const vkp_node_t *ge = &g->nodes[vkp_graph_find_node(g, "ge")];
  const vkp_node_t *sm = &g->nodes[vkp_graph_find_node(g, "sm")];
  cr_assert(vkp_node_attr(lr, "alpha"));
  cr_assert_float_eq(vkp_node_float(lr, "alpha"), 0.01, 1e-12);
  cr_assert_str_eq(vkp_node_string(ge, "approximate"), "none");
  cr_assert_eq(vkp_node_int(sm, "axis"), 1);  // -1, canonical non-negative
  vkp_graph_destroy(g);
}

// Input 0's dtype is checked against the table for every op, with a message
// naming the input, its dtype and what the op takes.
Test(ops, input_dtype_is_checked_against_the_table, .timeout = 30) {
  vkp_graph_t *g = g_new("dtype");
  int64_t s[] = {4};
  g_in(g, "flag", VKP_DTYPE_BOOL, 1, s);
  g_node(g, "e", VKP_OP_EXP, "flag", "y", 0, NULL);
  g_out(g, "y");
  vkp_status_t st = vkp_graph_validate(g);
  cr_assert(vkp_status_is(st, VKP_STATUS_UNSUPPORTED));
  cr_assert(strstr(vkp_status_message(st), "input 'flag' has dtype bool; this op takes "
                                           "float32, float16, float64, bfloat16"),
            "%s", vkp_status_message(st));
  vkp_status_free(st);
  vkp_graph_destroy(g);
}

// The generators agree with the table: what they fuse as an expression is
// elementwise or broadcast there, every elementwise op they run has an
// expression, and they claim no dtype the table does not give the op.
Test(ops, code_generators_agree_with_the_table, .timeout = 30) {
  for (int o = 0; o < VKP_OP_COUNT; ++o) {
    vkp_op_t op = (vkp_op_t)o;
    const char *name = vkp_op_name(op);
    bool fusable = vkp_op_pattern(op) <= VKP_OP_PATTERN_BROADCAST;
    vkp_dtype_set_t c = vkp_codegen_c_dtypes(op);
    cr_assert_eq(c & ~vkp_op_dtypes(op), 0, "%s: C claims dtypes the op lacks", name);
    for (int d = 0; d < VKP_DTYPE_COUNT; ++d) {
      if (!(c & VKP_DTYPE_SET(d))) continue;
      bool has_expr = vkp_codegen_c_expr(op, (vkp_dtype_t)d) != NULL;
      cr_assert(!has_expr || fusable, "%s: a C expression for a non-fusable op", name);
      cr_assert(has_expr || !fusable || op == VKP_OP_CAST,
                "%s: fusable, run by the C generator, but no expression", name);
    }
    bool glsl = vkp__glsl_expr(op) != NULL;
    cr_assert(!glsl || fusable, "%s: a GLSL expression for a non-fusable op", name);
    cr_assert(glsl || !fusable || !vkp_spirv_has_kernel(op),
              "%s: fusable, run by the Vulkan generator, but no expression", name);
    cr_assert_eq(vkp__op_is_alias(op), vkp_op_is_view(op), "%s", name);
    cr_assert_eq(vkp__op_is_elementwise(op), fusable, "%s", name);
  }
}
