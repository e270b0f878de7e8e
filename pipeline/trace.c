// SPDX-License-Identifier: Apache-2.0
// The pipeline's optional per-frame stage events (vkp_pipeline_get_trace),
// the raw material of vkpipe-bench --trace.
#include <string.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "pipeline/pipeline_internal.h"


void vkp__trace_record(vkp_pipeline_t *p, int32_t stage, uint64_t seq,
                       uint64_t start_ns, uint64_t end_ns, bool failed) {
  if (p->trace_count >= p->trace_capacity) return;
  vkp_pipeline_event_t *e = &p->trace[p->trace_count++];
  e->stage = stage;
  e->seq = seq;
  e->start_ns = start_ns;
  e->end_ns = end_ns >= start_ns ? end_ns : start_ns;
  e->failed = failed;
}

vkp_status_t vkp_pipeline_get_trace(vkp_pipeline_t *p,
                                    vkp_pipeline_event_t **out_events,
                                    int32_t *out_count) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  *out_events = NULL;
  *out_count = 0;
  pthread_mutex_lock(&p->mu);
  int32_t n = p->trace_count;
  vkp_pipeline_event_t *copy = vkp__calloc((size_t)n + 1, sizeof(*copy));
  if (copy && n) memcpy(copy, p->trace, (size_t)n * sizeof(*copy));
  pthread_mutex_unlock(&p->mu);
  if (!copy) return VKP_OOM("trace copy");
  *out_events = copy;
  *out_count = n;
  return NULL;
}

void vkp_pipeline_trace_free(vkp_pipeline_event_t *events) { vkp__free(events); }
