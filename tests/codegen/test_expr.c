// SPDX-License-Identifier: Apache-2.0
// codegen/expr.c: the expression templates both code generators render
// their elementwise rows from.
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "codegen/expr.h"
#include "support/test_graph.h"
#include "support/test_support.h"

static void literal(double v, char *buf, size_t size) { snprintf(buf, size, "%gf", v); }

// A validated node of `op` with a float attribute "alpha" and `n_inputs`
// float32 inputs.
static vkp_graph_t *one_node(vkp_op_t op, int32_t n_inputs, const char *const *ins,
                             int32_t n_attrs, const vkp_attr_t *attrs) {
  vkp_graph_t *g = g_new("expr");
  int64_t shape[1] = {1};  // one element: clip bounds too
  const char *names[4] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i)
    g_in(g, names[i], VKP_DTYPE_FLOAT32, 1, shape);
  const char *out[1] = {"y"};
  VKP_TEST_OK(vkp_graph_add_node(g, "n", op, n_inputs, ins, 1, out, n_attrs, attrs, NULL));
  g_out(g, "y");
  g_validate(g);
  return g;
}

static const char *render(const char *tmpl, const vkp_node_t *n,
                          const char *const *ops, int n_ops, char *buf, size_t size) {
  return vkp_codegen_expr_render(tmpl, n, ops, n_ops, "float", literal, buf, size)
             ? buf
             : NULL;
}

// %[...%] repeats for every operand after the first, %@ naming it; %n is the
// operand count; non-atomic operands are parenthesised.
Test(codegen_expr, repeat_blocks_and_operand_count, .timeout = 30) {
  const char *ins[4] = {"a", "b", "c", "d"};
  vkp_graph_t *g = one_node(VKP_OP_SUM, 4, ins, 0, NULL);
  const char *ops[4] = {"x[i]", "t_b", "a + b", "f(c)"};
  char buf[256];
  cr_assert_str_eq(render("(%0%[ + %@%]) / %n", &g->nodes[0], ops, 4, buf, sizeof buf),
                   "(x[i] + t_b + (a + b) + f(c)) / (4f)");
  cr_assert_str_eq(render("%[max(%]%0%[, %@)%]", &g->nodes[0], ops, 4, buf, sizeof buf),
                   "max(max(max(x[i], t_b), (a + b)), f(c))");
  cr_assert_str_eq(render("%[max(%]%0%[, %@)%]", &g->nodes[0], ops, 1, buf, sizeof buf),
                   "x[i]");
  // %@ outside a block, an unterminated or nested block: a table bug.
  cr_assert_null(render("%0 + %@", &g->nodes[0], ops, 2, buf, sizeof buf));
  cr_assert_null(render("%0%[ + %@", &g->nodes[0], ops, 2, buf, sizeof buf));
  cr_assert_null(render("%0%[%[%@%]%]", &g->nodes[0], ops, 2, buf, sizeof buf));
  cr_assert_null(render("%0 %]", &g->nodes[0], ops, 2, buf, sizeof buf));
  // Too small a buffer fails instead of truncating.
  cr_assert_null(render("%0%[ + %@%]", &g->nodes[0], ops, 4, buf, 12));
  vkp_graph_destroy(g);
}

// %1{name}: the operand when given, else the attribute (clip's bounds).
Test(codegen_expr, operand_or_attribute, .timeout = 30) {
  const char *ins[3] = {"a", "", "c"};
  vkp_attr_t attrs[2] = {{.name = "min", .kind = VKP_ATTR_FLOAT, .f = -2.0},
                         {.name = "max", .kind = VKP_ATTR_FLOAT, .f = 6.0}};
  vkp_graph_t *g = one_node(VKP_OP_CLIP, 3, ins, 2, attrs);
  const char *ops[3] = {"x", NULL, "hi[0]"};
  char buf[128];
  cr_assert_str_eq(render("clip(%0, %1{min}, %2{max})", &g->nodes[0], ops, 3, buf, sizeof buf),
                   "clip(x, (-2f), hi[0])");
  cr_assert_str_eq(render("clip(%0, %1{min}, %2{max})", &g->nodes[0], ops, 1, buf, sizeof buf),
                   "clip(x, (-2f), (6f))");
  // A plain %1 with the operand omitted is a table bug.
  cr_assert_null(render("%0 + %1", &g->nodes[0], ops, 3, buf, sizeof buf));
  vkp_graph_destroy(g);
}
