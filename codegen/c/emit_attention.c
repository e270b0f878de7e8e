// SPDX-License-Identifier: Apache-2.0
// C kernel emitter for attention (float32): the batch offsets of every
// operand as static tables (batch dims broadcast like matmul's), then one
// call of vkp_attention (codegen/c/prelude_attention.c).
#include <stdio.h>
#include <string.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

// The element offset of each output batch's matrix in `t` (its last two
// dims are the matrix; the mask's and condition's strides come from
// `strides` when given).
static void vkp__emit_offsets(vkp__sb_t *sb, const char *name,
                              const vkp_value_t *t, const vkp_value_t *y,
                              int64_t batches) {
  int32_t brank = y->rank - 2, tb = t->rank - 2;
  int64_t strides[VKP_MAX_RANK], stride = 1;
  for (int32_t d = t->rank - 1; d >= 0; --d) {
    strides[d] = t->shape[d] == 1 ? 0 : stride;
    stride *= t->shape[d];
  }
  vkp__sb_printf(sb, "  static const int64_t %s[%lld] = {", name,
                 (long long)batches);
  int64_t idx[VKP_MAX_RANK] = {0};
  for (int64_t b = 0; b < batches; ++b) {
    int64_t off = 0;
    for (int32_t d = 0; d < tb; ++d) off += idx[brank - tb + d] * strides[d];
    vkp__sb_printf(sb, "%s%lld", b ? ", " : "", (long long)off);
    for (int32_t d = brank - 1; d >= 0; --d) {
      if (++idx[d] < y->shape[d]) break;
      idx[d] = 0;
    }
  }
  vkp__sb_append(sb, "};\n");
}

// Strides over [Lq, Lk] of a mask of rank <= brank + 2, and its offsets.
static void vkp__mask_strides(const vkp_value_t *m, int64_t *rs, int64_t *cs) {
  int64_t stride = 1, st[VKP_MAX_RANK];
  for (int32_t d = m->rank - 1; d >= 0; --d) {
    st[d] = m->shape[d] == 1 ? 0 : stride;
    stride *= m->shape[d];
  }
  *cs = m->rank >= 1 ? st[m->rank - 1] : 0;
  *rs = m->rank >= 2 ? st[m->rank - 2] : 0;
}

vkp_status_t vkp__c_emit_attention(vkp__c_kernel_t *k) {
  const vkp_node_t *n = k->node;
  const vkp_value_t *q = vkp__c_in(k, 0), *kt = vkp__c_in(k, 1), *v = vkp__c_in(k, 2);
  const vkp_value_t *m = vkp__c_in(k, 3), *c = vkp__c_in(k, 4), *y = vkp__c_out(k);
  int32_t brank = y->rank - 2;
  int64_t batches = 1;
  for (int32_t d = 0; d < brank; ++d) batches *= y->shape[d];
  int64_t lq = y->shape[brank], dv = y->shape[brank + 1];
  int64_t d = q->shape[q->rank - 1], lk = kt->shape[kt->rank - 1];
  vkp__sb_t *sb = k->body;
  vkp__emit_offsets(sb, "aoq", q, y, batches);
  vkp__emit_offsets(sb, "aok", kt, y, batches);
  vkp__emit_offsets(sb, "aov", v, y, batches);
  int64_t mrs = 0, mcs = 0, crs = 0, ccs = 0;
  // A mask broadcasts to the whole scores [batch..., Lq, Lk]: its offsets
  // are those of a matrix view with its last two dims.
  if (m) {
    vkp__emit_offsets(sb, "aom", m, y, batches);
    vkp__mask_strides(m, &mrs, &mcs);
  }
  if (c) {
    vkp__emit_offsets(sb, "aoc", c, y, batches);
    vkp__mask_strides(c, &crs, &ccs);
  }
  char scale[48], fill[48];
  vkp_codegen_c_literal(vkp_node_float(n, "scale"), scale, sizeof scale);
  vkp_codegen_c_literal(vkp_node_float(n, "fill"), fill, sizeof fill);
  vkp__sb_printf(sb,
                 "  const vkp_att_t la = {%s, %s, %s, %s, %s, %s,\n"
                 "      aoq, aok, aov, %s, %s,\n"
                 "      %lld, %lld, %lld, %lld, %lld,\n"
                 "      %lld, %lld, %lld, %lld, %s, %s, %d};\n"
                 "  vkp_attention(&la, scratch, VKP_STAGE_THREADS);\n",
                 k->in[0], k->in[1], k->in[2], m ? k->in[3] : "NULL",
                 c ? k->in[4] : "NULL", k->out, m ? "aom" : "NULL",
                 c ? "aoc" : "NULL", (long long)batches, (long long)lq,
                 (long long)lk, (long long)d, (long long)dv, (long long)mrs,
                 (long long)mcs, (long long)crs, (long long)ccs,
                 scale, fill, (int)(vkp_node_int(n, "fill_where") != 0));
  // After the threads' GEMM scratch: at most 8 * VKP_MR (<= 112) rows of
  // scores per thread.
  int threads = k->threads < 1 ? 1 : k->threads;
  k->scratch_floats = (size_t)threads * (size_t)(112 * lk);
  k->after_gemm_scratch = true;
  return NULL;
}
