// SPDX-License-Identifier: Apache-2.0
// C kernels of linear algebra beyond the GEMM family: det on float32, each
// [M, M] matrix factorised in double (LU with partial pivoting, as the
// reference in graph/op_linalg.c) in the node's scratch. Locals of the
// generated code start with 'l', which value names never do unprefixed.
#include <stdio.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

vkp_status_t vkp__c_emit_det(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long m = x->shape[x->rank - 1], batch = 1;
  for (int32_t d = 0; d < x->rank - 2; ++d) batch *= x->shape[d];
  vkp__sb_printf(k->body,
                 "  double *la = (double *)scratch;\n"
                 "  for (ptrdiff_t lb = 0; lb < %lld; ++lb) {\n"
                 "    const ptrdiff_t lm = %lld;\n"
                 "    for (ptrdiff_t li = 0; li < lm * lm; ++li) la[li] = (double)%s[lb * lm * lm + li];\n"
                 "    double ldet = 1.0;\n"
                 "    for (ptrdiff_t lc = 0; lc < lm && ldet != 0.0; ++lc) {\n"
                 "      ptrdiff_t lp = lc;\n"
                 "      for (ptrdiff_t lr = lc + 1; lr < lm; ++lr)\n"
                 "        if (fabs(la[lr * lm + lc]) > fabs(la[lp * lm + lc])) lp = lr;\n"
                 "      if (la[lp * lm + lc] == 0.0) {\n"
                 "        ldet = 0.0;\n"
                 "        break;\n"
                 "      }\n"
                 "      if (lp != lc) {\n"
                 "        for (ptrdiff_t lj = 0; lj < lm; ++lj) {\n"
                 "          double lt = la[lc * lm + lj];\n"
                 "          la[lc * lm + lj] = la[lp * lm + lj];\n"
                 "          la[lp * lm + lj] = lt;\n"
                 "        }\n"
                 "        ldet = -ldet;\n"
                 "      }\n"
                 "      ldet *= la[lc * lm + lc];\n"
                 "      for (ptrdiff_t lr = lc + 1; lr < lm; ++lr) {\n"
                 "        double lf = la[lr * lm + lc] / la[lc * lm + lc];\n"
                 "        for (ptrdiff_t lj = lc + 1; lj < lm; ++lj) la[lr * lm + lj] -= lf * la[lc * lm + lj];\n"
                 "      }\n"
                 "    }\n"
                 "    %s[lb] = (float)ldet;\n"
                 "  }\n",
                 batch, m, k->in[0], k->out);
  k->scratch_floats = (size_t)(2 * (m * m > 0 ? m * m : 1));
  return NULL;
}
