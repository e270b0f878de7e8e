// SPDX-License-Identifier: Apache-2.0
// C kernel emitter for the losses softmax_cross_entropy_loss and
// negative_log_likelihood_loss (float32): one pass over the positions
// [N, d...], each reading its class column of X (strided by the positions
// per image); the softmax's shift and the sums in float, the totals of the
// reductions in double. A label outside [0, C) (ref's run-time error)
// contributes nothing here: generated code has no way to report it.
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

vkp_status_t vkp__c_emit_loss(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *x = vkp__c_in(k, 0), *w = vkp__c_in(k, 2);
  int64_t N = x->shape[0], C = x->shape[1], D = 1;
  for (int32_t d = 2; d < x->rank; ++d) D *= x->shape[d];
  bool softmax = n->op == VKP_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
  const char *reduction = vkp_node_string(n, "reduction");
  const vkp_attr_t *ignore = vkp_node_attr(n, "ignore_index");
  const char *log_prob = n->n_outputs > 1 ? k->outs[1] : NULL;
  vkp__sb_t *sb = k->body;
  vkp__sb_printf(sb,
                 "  double ltotal = 0.0, lwsum = 0.0;\n"
                 "  for (ptrdiff_t i = 0; i < %lld; ++i)\n"
                 "    for (ptrdiff_t ik = 0; ik < %lld; ++ik) {\n"
                 "      const float *lx = %s + i * %lld + ik;\n"
                 "      float lmax = 0.0f, llse = 0.0f;\n",
                 (long long)N, (long long)D, k->in[0], (long long)(C * D));
  if (softmax) {
    // log_softmax(x) = (x - max) - log(sum(exp(x - max))), in that order:
    // max + log(sum) would round away up to half an ulp of a large max.
    vkp__sb_printf(sb,
                   "      float lsum = 0.0f;\n"
                   "      lmax = -INFINITY;\n"
                   "      for (ptrdiff_t ic = 0; ic < %lld; ++ic) lmax = fmaxf(lmax, lx[ic * %lld]);\n"
                   "      for (ptrdiff_t ic = 0; ic < %lld; ++ic) lsum += expf(lx[ic * %lld] - lmax);\n"
                   "      llse = logf(lsum);\n",
                   (long long)C, (long long)D, (long long)C, (long long)D);
    if (log_prob)
      vkp__sb_printf(sb,
                     "      for (ptrdiff_t ic = 0; ic < %lld; ++ic)\n"
                     "        %s[i * %lld + ic * %lld + ik] = (lx[ic * %lld] - lmax) - llse;\n",
                     (long long)C, log_prob, (long long)(C * D), (long long)D, (long long)D);
  }
  vkp__sb_printf(sb,
                 "      const int64_t llab = (int64_t)%s[i * %lld + ik];\n"
                 "      float lloss = 0.0f, lw = 0.0f;\n"
                 "      if (llab >= 0 && llab < %lld",
                 k->in[1], (long long)D, (long long)C);
  if (ignore) vkp__sb_printf(sb, " && llab != %lldLL", (long long)ignore->i);
  vkp__sb_append(sb, ") {\n");
  if (w) vkp__sb_printf(sb, "        lw = %s[llab];\n", k->in[2]);
  else vkp__sb_append(sb, "        lw = 1.0f;\n");
  vkp__sb_printf(sb,
                 "        lloss = -lw * ((lx[llab * %lld] - lmax) - llse);\n      }\n",
                 (long long)D);
  if (strcmp(reduction, "none") == 0)
    vkp__sb_printf(sb, "      %s[i * %lld + ik] = lloss;\n", k->out, (long long)D);
  vkp__sb_append(sb,
                 "      ltotal += lloss;\n      lwsum += lw;\n    }\n"
                 "  (void)ltotal;\n  (void)lwsum;\n");
  if (strcmp(reduction, "sum") == 0)
    vkp__sb_printf(sb, "  %s[0] = (float)ltotal;\n", k->out);
  else if (strcmp(reduction, "mean") == 0)
    vkp__sb_printf(sb, "  %s[0] = (float)(ltotal / lwsum);\n", k->out);
  return NULL;
}
