// SPDX-License-Identifier: Apache-2.0
// C kernel emitters of the sampling family: grid_sample and roi_align on
// float32 through the prelude's loops (codegen/c/prelude_sample.c), their
// attributes checked by the same readers the reference uses
// (graph/sample.h).
#include <stdio.h>

#include "base/status_macros.h"
#include "codegen/c/emit.h"
#include "codegen/c/emit_internal.h"
#include "graph/sample.h"

vkp_status_t vkp__c_emit_grid_sample(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *y = vkp__c_out(k);
  vkp__grid_params_t p;
  VKP_RETURN_IF_ERROR(vkp__grid_sample_params(k->node, &p));
  int32_t r = x->rank - 2;
  long long in_plane = 1, out_plane = 1;
  vkp__sb_append(k->body, "  static const ptrdiff_t in_shape[] = {");
  for (int32_t d = 0; d < r; ++d) {
    vkp__sb_printf(k->body, "%s%lld", d ? ", " : "", (long long)x->shape[2 + d]);
    in_plane *= x->shape[2 + d];
    out_plane *= y->shape[2 + d];
  }
  vkp__sb_printf(k->body,
                 "};\n  vkp_grid_sample_f32(&(vkp_grid_sample_t){%s, %s, %s, %d, %d, %d, %d, "
                 "%lld, %lld, %lld, in_shape}, %lld);\n",
                 k->in[0], k->in[1], k->out, (int)r, p.mode, p.padding, p.align_corners,
                 (long long)x->shape[1], in_plane, out_plane, (long long)x->shape[0]);
  return NULL;
}

vkp_status_t vkp__c_emit_roi_align(vkp__c_kernel_t *k) {
  const vkp_value_t *x = vkp__c_in(k, 0), *rois = vkp__c_in(k, 1), *bi = vkp__c_in(k, 2);
  vkp__roi_params_t p;
  VKP_RETURN_IF_ERROR(vkp__roi_align_params(k->node, &p));
  if (bi->dtype != VKP_DTYPE_INT32 && bi->dtype != VKP_DTYPE_INT64)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "the C kernel reads batch_indices as int32 or int64, not %s",
                           vkp_dtype_name(bi->dtype));
  char scale[64];
  vkp_codegen_c_literal(p.spatial_scale, scale, sizeof scale);
  k->can_fail = true;
  snprintf(k->fail_message, sizeof k->fail_message,
           "a batch index is outside 0..%lld", (long long)x->shape[0] - 1);
  vkp__sb_printf(k->body,
                 "  return vkp_roi_align_f32(&(vkp_roi_align_t){%s, %s, %s, %d, %d, %d, %s, "
                 "%lld, %lld, %lld, %lld, %lld, %lld, %lld, %s}, %s);\n",
                 k->in[0], k->in[1], k->in[2], bi->dtype == VKP_DTYPE_INT64, p.max ? 1 : 0,
                 p.half_pixel ? 1 : 0, k->out, (long long)x->shape[0], (long long)x->shape[1],
                 (long long)x->shape[2], (long long)x->shape[3], (long long)p.out_h,
                 (long long)p.out_w, (long long)p.sampling_ratio, scale,
                 vkp__c_dims(rois, k->in_ext[1], 0, 1).s);  // bounded: at run time
  return NULL;
}
