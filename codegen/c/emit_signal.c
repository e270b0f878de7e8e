// SPDX-License-Identifier: Apache-2.0
// C kernels of the signal family: dft and stft on float32 through the
// mixed-radix FFT of codegen/c/prelude_signal.c (vkp_dft), with the
// reference's semantics (graph/op_signal.c). Each emitter describes its
// lines to vkp_dft as strides; shapes are literals.
#include <stdio.h>

#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"

static void vkp__emit_dft_job(vkp__c_kernel_t *k, const char *win, long long lines,
                              const long long *v, long long n, long long n_out,
                              bool inverse) {
  vkp__sb_printf(k->body,
                 "  vkp_dft_job_t j = {%s, %s, %s, %lld, %lld, %lld, %lld, %lld, %lld,\n"
                 "                     %lld, %lld, %lld, %lld, %lld, %d, NULL, NULL};\n"
                 "  vkp_dft(&j, %lld, scratch);\n",
                 k->in[0], win, k->out, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
                 v[8], n, n_out, (int)inverse, lines);
  int threads = k->threads < 1 ? 1 : k->threads;
  k->scratch_floats = (size_t)(2 * (n * 2 + (long long)threads * n * 6));
}

vkp_status_t vkp__c_emit_dft(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  int32_t axis = (int32_t)vkp_node_int(k->node, "axis");
  long long n = vkp_node_int(k->node, "length"), ch = x->shape[x->rank - 1];
  long long l_in = x->shape[axis], n_out = y->shape[axis], outer = 1, inner = 1;
  for (int32_t d = 0; d < x->rank - 1; ++d) {
    if (d < axis) outer *= x->shape[d];
    if (d > axis) inner *= x->shape[d];
  }
  // inner, xa, xb, xs, ch, have, ya, yb, ys
  long long v[9] = {inner, l_in * inner * ch, ch, inner * ch, ch,
                    l_in < n ? l_in : n, n_out * inner * 2, 2, inner * 2};
  vkp__emit_dft_job(k, "NULL", outer * inner, v, n, n_out,
                    vkp_node_int(k->node, "inverse") != 0);
  return NULL;
}

vkp_status_t vkp__c_emit_stft(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  long long n = vkp_node_int(k->node, "frame_length"), step = vkp_node_int(k->node, "frame_step");
  long long ch = x->shape[2], frames = y->shape[1], bins = y->shape[2];
  long long v[9] = {frames, x->shape[1] * ch, step * ch, ch, ch, n, frames * bins * 2,
                    bins * 2, 2};
  vkp__emit_dft_job(k, k->in[1] ? k->in[1] : "NULL", x->shape[0] * frames, v, n, bins,
                    false);
  return NULL;
}
