// SPDX-License-Identifier: Apache-2.0
//
// vkpipe scale-out: pipeline stages on several MPI ranks (docs/scale-out.md).
//
// A plan stage may name a `rank`. Rank 0 creates the pipeline with the usual
// C API (vkp_pipeline_create and friends); each stage placed on another rank
// is driven from rank 0 through a proxy that sends the frame's inputs
// straight from their ring slots and receives the outputs straight into the
// output slots, with non-blocking MPI point-to-point. Every other rank calls
// vkp_mpi_serve with the same plan: it compiles and loads its own stages and
// runs frames for rank 0 until the pipeline on rank 0 is destroyed. A value
// between two stages on ranks other than 0 goes straight from one rank to
// the other, not through rank 0.
//
//   int32_t rank, size;
//   st = vkp_mpi_init(&argc, &argv, &rank, &size);       // every rank
//   if (rank == 0) { create, set_input/run/get_output, destroy }
//   else st = vkp_mpi_serve(plan, registry, NULL);       // until destroy
//   vkp_mpi_finalize();
//
// Built without MPI (docs/scale-out.md), vkp_mpi_available() is false, every
// call here returns UNSUPPORTED, and creating a pipeline whose plan places a
// stage on a rank other than 0 fails saying so.
#ifndef VKPIPE_MPI_H_
#define VKPIPE_MPI_H_

#include <stdbool.h>
#include <stdint.h>

#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// True when libvkpipe was built with MPI.
bool vkp_mpi_available(void);

// Initialises MPI (thread level MPI_THREAD_MULTIPLE is required) unless it
// already is, and stores this process's rank and the world size. argc/argv
// may be NULL.
vkp_status_t vkp_mpi_init(int *argc, char ***argv, int32_t *out_rank,
                          int32_t *out_size) VKP_MUST_USE;

// Finalises MPI when vkp_mpi_init initialised it. Safe to call more than once.
void vkp_mpi_finalize(void);

// Ends every rank of the job (MPI_Abort with `exit_code`) when MPI is
// initialised and the world has more than one rank; otherwise does nothing.
// For a tool whose rank fails outside a pipeline's lifetime (bad input
// file, a plan that does not load), so that the other ranks do not wait.
void vkp_mpi_abort(int exit_code);

// True when the process was started by mpirun (Open MPI or PMIx environment
// present), whether or not MPI is initialised yet.
bool vkp_mpi_launched(void);

// Worker side of one pipeline lifetime on a rank other than 0: compiles
// (from `blobs`, plan->n_stages entries, when not NULL) and loads the stages
// the plan places on this rank, tells rank 0 whether each load worked, then
// runs frames for rank 0 until rank 0 destroys its pipeline. Returns at once
// when the plan places no stage here. A stage error fails that frame only
// (rank 0 gets the error); the error returned here is for set-up failures.
vkp_status_t vkp_mpi_serve(const vkp_plan_t *plan,
                           const vkp_registry_t *registry,
                           const vkp_blob_t *blobs) VKP_MUST_USE;

// Rank 0's plan on every rank (`vkpipe run --target auto --ranks N`: rank 0
// partitions, the others serve what it decided). Collective: every rank
// calls it. Rank 0 passes its plan (stages that are node lists of the model
// need plan->source set) and gets *out_plan = NULL; every other rank passes
// NULL and gets a copy built from rank 0's JSON against its own load of the
// same `model`. Rank 0 passes NULL when it could not make a plan: the
// others then get FAILED_PRECONDITION saying so instead of waiting.
vkp_status_t vkp_mpi_share_plan(const vkp_plan_t *plan, const vkp_graph_t *model,
                                vkp_plan_t **out_plan) VKP_MUST_USE;

// Synthetic pipelines (docs/pipeline.md) with stage i on rank ranks[i]:
// rank 0 creates, the other ranks serve the same description.
vkp_status_t vkp_pipeline_create_synthetic_ranks(
    const vkp_pipeline_synthetic_stage_t *stages, const int32_t *ranks,
    int32_t n_stages, int64_t numel, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) VKP_MUST_USE;
vkp_status_t vkp_mpi_serve_synthetic(
    const vkp_pipeline_synthetic_stage_t *stages, const int32_t *ranks,
    int32_t n_stages, int64_t numel) VKP_MUST_USE;

// Tensor payload this process moved over MPI since it started (headers and
// commands not counted): sent, received, and of the received bytes those
// that came straight from a rank other than 0 (a value between stages on
// two serving ranks goes from one to the other, not through rank 0).
typedef struct vkp_mpi_traffic_t {
  uint64_t bytes_sent;
  uint64_t bytes_received;
  uint64_t bytes_received_direct;
} vkp_mpi_traffic_t;

// Fills *out (all zero without MPI). Thread-safe.
void vkp_mpi_traffic_get(vkp_mpi_traffic_t *out);

// Plain MPI ping-pong between rank 0 and `peer` (blocking MPI_Send and
// MPI_Recv of `bytes` bytes, `iters` round trips after a few unmeasured
// ones), the yardstick for the pipeline's own hops. Both ranks call it; rank
// 0 gets the mean round-trip time in *out_round_trip_s (may be NULL).
vkp_status_t vkp_mpi_pingpong(int32_t peer, size_t bytes, int32_t iters,
                              double *out_round_trip_s) VKP_MUST_USE;

#ifdef __cplusplus
}
#endif

#endif  // VKPIPE_MPI_H_
