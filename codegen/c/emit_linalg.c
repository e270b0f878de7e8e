// SPDX-License-Identifier: Apache-2.0
// C kernels of linear algebra beyond the GEMM family: det on float32, each
// [M, M] matrix factorised in double (LU with partial pivoting, as the
// reference in graph/op_linalg.c) in the node's scratch.
#include <stdio.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

vkp_status_t vkp__c_emit_det(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0);
  long long m = x->shape[x->rank - 1], batch = 1;
  for (int32_t d = 0; d < x->rank - 2; ++d) batch *= x->shape[d];
  vkp__sb_printf(k->body,
                 "  double *a = (double *)scratch;\n"
                 "  for (ptrdiff_t b = 0; b < %lld; ++b) {\n"
                 "    const ptrdiff_t m = %lld;\n"
                 "    for (ptrdiff_t i = 0; i < m * m; ++i) a[i] = (double)%s[b * m * m + i];\n"
                 "    double det = 1.0;\n"
                 "    for (ptrdiff_t c = 0; c < m && det != 0.0; ++c) {\n"
                 "      ptrdiff_t p = c;\n"
                 "      for (ptrdiff_t r = c + 1; r < m; ++r)\n"
                 "        if (fabs(a[r * m + c]) > fabs(a[p * m + c])) p = r;\n"
                 "      if (a[p * m + c] == 0.0) {\n"
                 "        det = 0.0;\n"
                 "        break;\n"
                 "      }\n"
                 "      if (p != c) {\n"
                 "        for (ptrdiff_t j = 0; j < m; ++j) {\n"
                 "          double t = a[c * m + j];\n"
                 "          a[c * m + j] = a[p * m + j];\n"
                 "          a[p * m + j] = t;\n"
                 "        }\n"
                 "        det = -det;\n"
                 "      }\n"
                 "      det *= a[c * m + c];\n"
                 "      for (ptrdiff_t r = c + 1; r < m; ++r) {\n"
                 "        double f = a[r * m + c] / a[c * m + c];\n"
                 "        for (ptrdiff_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];\n"
                 "      }\n"
                 "    }\n"
                 "    %s[b] = (float)det;\n"
                 "  }\n",
                 batch, m, k->in[0], k->out);
  k->scratch_floats = (size_t)(2 * (m * m > 0 ? m * m : 1));
  return NULL;
}
