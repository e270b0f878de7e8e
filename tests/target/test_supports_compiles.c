// SPDX-License-Identifier: Apache-2.0
// supports() is a promise: a node a target accepts compiles there. Placement
// relies on it to put a node the target cannot compile elsewhere, visibly,
// instead of failing at compile. For the built-in target named by
// VKPIPE_SUPPORTS_TARGET (one ctest per target), every node of the SPIR-V
// cases' graphs (every op in several shapes, fused patterns too) that the
// target accepts is extracted alone and compiled; the first two per op keep
// the run short. "cpu" is checked up to its generated C (vkp_codegen_c_emit,
// the step that can refuse a node; cts_cpu compiles and runs that C).
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/c/emit.h"
#include "tests/codegen/spirv/spirv_cases.h"
#include "support/test_support.h"
#include "vkpipe/graph.h"
#include "vkpipe/target.h"

enum { PER_OP = 2 };

// Compiles `sub` on `target`; NULL or the compile's error.
static vkp_status_t compile_alone(const vkp_target_t *target, const vkp_graph_t *sub) {
  if (strcmp(target->vtable->name, "cpu") == 0) {
    vkp_codegen_c_t code;
    vkp_status_t st = vkp_codegen_c_emit(sub, /*threads=*/1, &code);
    if (!st) vkp_codegen_c_deinit(&code);
    return st;
  }
  vkp_blob_t blob = {0};
  vkp_status_t st = target->vtable->compiler.compile(target, sub, NULL, &blob);
  vkp_blob_deinit(&blob);
  return st;
}

Test(supports, every_accepted_node_compiles, .timeout = 300) {
  const char *name = getenv("VKPIPE_SUPPORTS_TARGET");
  cr_assert_not_null(name, "set VKPIPE_SUPPORTS_TARGET");
  vkp_registry_t *reg;
  VKP_TEST_OK(vkp_registry_create_builtin(&name, 1, &reg));
  const vkp_target_t *target = vkp_registry_find(reg, name);
  if (!target) {
    vkp_registry_destroy(reg);
    cr_skip_test("target '%s' is unavailable here", name);
  }
  vkp_test_rng_t rng;
  unsigned long long seed = (unsigned long long)vkp_test_rng_init(&rng);
  int32_t per_op[VKP_OP_COUNT] = {0};
  int accepted = 0, refused = 0, compiled = 0, failed = 0;
  for (int32_t c = 0; c < vkp_spirv_case_count; ++c) {
    vkp_graph_t *g = vkp_spirv_cases[c].build(&rng);
    cr_assert_not_null(g, "case %s", vkp_spirv_cases[c].name);
    for (int32_t i = 0; i < g->n_nodes; ++i) {
      const vkp_node_t *n = &g->nodes[i];
      char why[256];
      if (!vkp_target_supports(target, g, n, why, sizeof why)) {
        ++refused;
        cr_expect(why[0], "'%s' refused node '%s' (%s) without a reason", name, n->name,
                  vkp_op_name(n->op));
        continue;
      }
      ++accepted;
      if (per_op[n->op] >= PER_OP) continue;
      ++per_op[n->op];
      vkp_graph_t *sub = NULL;
      VKP_TEST_OK(vkp_graph_extract(g, 1, &i, n->name, &sub));
      vkp_status_t st = compile_alone(target, sub);
      ++compiled;
      if (st) {
        ++failed;
        cr_expect_fail("'%s' accepted node '%s' (%s) of case %s but cannot compile it "
                       "(VKPIPE_TEST_SEED=%llu): %s",
                       name, n->name, vkp_op_name(n->op), vkp_spirv_cases[c].name, seed,
                       vkp_status_message(st));
        vkp_status_free(st);
      }
      vkp_graph_destroy(sub);
    }
    vkp_graph_destroy(g);
  }
  cr_log_info("target '%s': %d nodes accepted (%d compiled alone, %d failed), %d refused",
              name, accepted, compiled, failed, refused);
  cr_assert_gt(compiled, 0);
  vkp_registry_destroy(reg);
}
