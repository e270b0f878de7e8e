// SPDX-License-Identifier: Apache-2.0
// Scale-out without MPI: libvkpipe was configured without Open MPI (or with
// -DVKPIPE_WITH_MPI=OFF). Plans that place stages on other ranks are refused
// with a clear error; everything else works as before.
#include <stdlib.h>

#include "base/file.h"
#include "pipeline/pipeline_internal.h"
#include "vkpipe/mpi.h"

#define VKP__NO_MPI                                                          \
  vkp_status_make(VKP_STATUS_UNSUPPORTED,                                    \
                  "this libvkpipe was built without MPI (install "           \
                  "libopenmpi-dev and reconfigure; docs/scale-out.md)")

bool vkp_mpi_available(void) { return false; }

bool vkp_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
         getenv("PMI_RANK");
}

vkp_status_t vkp_mpi_init(int *argc, char ***argv, int32_t *out_rank,
                          int32_t *out_size) {
  if (out_rank) *out_rank = 0;
  if (out_size) *out_size = 1;
  return VKP__NO_MPI;
}

void vkp_mpi_finalize(void) {}

void vkp_mpi_abort(int exit_code) {}

bool vkp__plan_has_ranks(const vkp_plan_t *plan) {
  for (int32_t s = 0; plan && s < plan->n_stages; ++s)
    if (plan->stages[s].rank != 0) return true;
  return false;
}

vkp_status_t vkp__mpi_proxy_load(const vkp_plan_t *plan, int32_t stage, int32_t depth,
                                 const vkp_target_t **out_target,
                                 vkp_stage_t **out_stage) {
  *out_stage = NULL;
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "stage '%s' is placed on rank %d, but this libvkpipe "
                         "was built without MPI (docs/scale-out.md)",
                         plan->stages[stage].name, (int)plan->stages[stage].rank);
}

void vkp__mpi_proxy_frame(vkp_stage_t *stage, uint64_t seq, bool run) {}

uint64_t vkp__mpi_spin_ns(const vkp_stage_t *stage) { return 0; }

void vkp__mpi_proxy_set_spin(vkp_stage_t *stage, bool own_cores) {}

int32_t vkp__mpi_rank_cores(void) { return vkp__host_cores(); }

// Never called: without MPI no proxy loads.
vkp_status_t vkp__mpi_proxy_post(vkp_stage_t *stage, uint64_t seq, int32_t slot,
                                 const vkp_tensor_t *inputs, vkp_tensor_t *outputs) {
  return vkp_status_make(VKP_STATUS_UNSUPPORTED, "built without MPI");
}

vkp_status_t vkp__mpi_proxy_finish(vkp_stage_t *stage, int32_t slot,
                                   vkp_tensor_t *outputs) {
  return vkp_status_make(VKP_STATUS_UNSUPPORTED, "built without MPI");
}

void vkp__mpi_stop(vkp_pipeline_t *p) {}

void vkp_mpi_traffic_get(vkp_mpi_traffic_t *out) {
  *out = (vkp_mpi_traffic_t){0};
}

vkp_status_t vkp_mpi_serve(const vkp_plan_t *plan, const vkp_registry_t *registry,
                           const vkp_blob_t *blobs) {
  return VKP__NO_MPI;
}

vkp_status_t vkp_mpi_serve_synthetic(const vkp_pipeline_synthetic_stage_t *stages,
                                     const int32_t *ranks, int32_t n_stages,
                                     int64_t numel) {
  return VKP__NO_MPI;
}

vkp_status_t vkp_mpi_pingpong(int32_t peer, size_t bytes, int32_t iters,
                              double *out_round_trip_s) {
  return VKP__NO_MPI;
}

vkp_status_t vkp_mpi_share_plan(const vkp_plan_t *plan, const vkp_graph_t *model,
                                vkp_plan_t **out_plan) {
  (void)plan;
  (void)model;
  *out_plan = NULL;
  return VKP__NO_MPI;
}
