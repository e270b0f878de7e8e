// SPDX-License-Identifier: Apache-2.0
// A cross-rank binding against raw MPI over the same link (docs/scale-out.md;
// a benchmark, not a test): `mpirun -np 2 bench_link [MAX_BYTES]`.
// Per tensor size, rank 0 measures
//   - MPI ping-pong: blocking MPI_Send/MPI_Recv round trip (the latency
//     yardstick, vkp_mpi_pingpong);
//   - MPI streaming (OSU-style): windows of 64 MPI_Isend of the size, then
//     a one-byte acknowledgement, one direction: the bandwidth yardstick;
//   - a binding's round trip: one frame at a time through a zero-cost
//     synthetic stage on rank 1 (the value goes there and back), minus the
//     same pipeline on rank 0;
//   - a binding's streaming: frames in flight through that stage; each
//     frame moves the size to rank 1 and back, so bytes/s per direction is
//     frames/s x size.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkpipe/mpi.h"
#include "vkpipe/pipeline.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int g_rank;

static const vkp_pipeline_synthetic_stage_t k_stage = {VKP_PIPELINE_SYNTHETIC_SLEEP, 0};

// One direction, windows of 64 non-blocking sends, then an acknowledgement.
static double osu_bw(size_t bytes, int windows) {
  enum { kWindow = 64 };
  char *buf = calloc(bytes + 1, 1), ack = 0;
  MPI_Request reqs[kWindow];
  double t0 = 0;
  for (int w = 0; w < windows + 2; ++w) {
    if (w == 2) {
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now_s();
    }
    for (int k = 0; k < kWindow; ++k) {
      if (g_rank == 0)
        MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &reqs[k]);
      else
        MPI_Irecv(buf, (int)bytes, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &reqs[k]);
    }
    MPI_Waitall(kWindow, reqs, MPI_STATUSES_IGNORE);
    if (g_rank == 0)
      MPI_Recv(&ack, 1, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Send(&ack, 1, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
  }
  double dt = now_s() - t0;
  free(buf);
  return (double)bytes * kWindow * windows / dt;
}

// Frames through the one-stage pipeline on `rank`: one at a time (mean
// seconds per frame in *out_rtt) or `in_flight` at a time (frames/s).
static vkp_status_t binding(int32_t rank, int64_t numel, int32_t frames,
                            int32_t in_flight, double *out) {
  vkp_pipeline_t *pipe = NULL;
  vkp_pipeline_options_t opt = {.ring_depth = in_flight > 1 ? in_flight : 0};
  vkp_status_t st =
      vkp_pipeline_create_synthetic_ranks(&k_stage, &rank, 1, numel, &opt, &pipe);
  if (st) return st;
  vkp_tensor_t x;
  int64_t shape[1] = {numel};
  st = vkp_tensor_init(&x, VKP_DTYPE_FLOAT32, 1, shape);
  int32_t warm = 3, done = 0, started = 0;
  double t0 = 0;
  while (!st && done < frames + warm) {
    if (done == warm && t0 == 0) t0 = now_s();
    while (!st && started < frames + warm && started - done < in_flight) {
      st = vkp_pipeline_set_input(pipe, "x", &x);
      if (!st) st = vkp_pipeline_run(pipe, NULL);
      started++;
    }
    vkp_pipeline_result_t res;
    if (!st) st = vkp_pipeline_get_output(pipe, UINT64_MAX, &res);
    if (!st) {
      if (res.status) st = vkp_status_make(VKP_STATUS_INTERNAL, "%s", vkp_status_message(res.status));
      vkp_pipeline_result_deinit(&res);
      done++;
    }
  }
  double dt = now_s() - t0;
  *out = in_flight > 1 ? frames / dt : dt / frames;
  vkp_tensor_deinit(&x);
  vkp_pipeline_destroy(pipe);
  return st;
}

int main(int argc, char **argv) {
  int32_t rank = 0, size = 0;
  vkp_status_t st = vkp_mpi_init(&argc, &argv, &rank, &size);
  if (st || size < 2) {
    fprintf(stderr, "bench_link: %s\n", st ? vkp_status_message(st) : "needs mpirun -np 2");
    return 1;
  }
  g_rank = rank;
  size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (4u << 20);
  if (rank == 0)
    printf("| bytes | MPI ping-pong RTT us | binding RTT us (rank 1 - rank 0) | "
           "binding / MPI latency | MPI stream MB/s | binding stream MB/s | "
           "binding / MPI bandwidth |\n|---|---|---|---|---|---|---|\n");
  for (size_t bytes = 64; !st && bytes <= max_bytes; bytes *= 16) {
    int64_t numel = (int64_t)(bytes / 4);
    int32_t frames = bytes <= 4096 ? 2000 : bytes <= (1u << 16) ? 500 : 60;
    double rtt = 0, bw = 0;
    st = vkp_mpi_pingpong(1, bytes, frames, &rtt);
    bw = osu_bw(bytes, bytes <= 65536 ? 50 : 4);
    if (rank != 0) {
      for (int k = 0; !st && k < 2; ++k) st = vkp_mpi_serve_synthetic(&k_stage, &(int32_t){1}, 1, numel);
      continue;
    }
    double local = 0, remote = 0, fps = 0;
    st = binding(0, numel, frames, 1, &local);
    if (!st) st = binding(1, numel, frames, 1, &remote);
    if (!st) st = binding(1, numel, frames, 8, &fps);
    double hop = remote - local;
    printf("| %zu | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", bytes, rtt * 1e6,
           hop * 1e6, hop / rtt, bw / 1e6, fps * (double)bytes / 1e6,
           fps * (double)bytes / bw);
    fflush(stdout);
  }
  if (st) {
    fprintf(stderr, "bench_link: rank %d: %s\n", (int)rank, vkp_status_message(st));
    vkp_status_free(st);
    vkp_mpi_abort(1);
  }
  vkp_mpi_finalize();
  return 0;
}
