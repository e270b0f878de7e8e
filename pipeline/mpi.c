// SPDX-License-Identifier: Apache-2.0
// Scale-out over MPI (docs/scale-out.md). Rank 0 runs the pipeline; a stage
// placed on another rank is a host stage on rank 0 whose run is a proxy: it
// posts non-blocking sends of the frame's inputs straight from the ring
// slots and receives of the outputs straight into the output slots, then
// waits (polling with a growing sleep, never a busy loop) for all of them.
// The serving rank has one thread per stage that receives a command, the
// inputs, runs the stage and sends a reply header and the outputs back.
//
// Messages between rank 0 and the rank of stage s use tags 8 * s + kind, on
// a private duplicate of MPI_COMM_WORLD; MPI keeps messages of one tag
// between two ranks in order, so frames need no reordering.
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "pipeline/pipeline_internal.h"
#include "vkpipe/mpi.h"

enum {
  VKP__K_CMD = 0,    // rank 0 -> server: vkp__cmd_t
  VKP__K_IN = 1,     // rank 0 -> server: the inputs, one message each
  VKP__K_HDR = 2,    // server -> rank 0: vkp__hdr_t (reply or ready)
  VKP__K_OUT = 3,    // server -> rank 0: the outputs, one message each
  VKP__K_MSG = 4,    // server -> rank 0: error text after a failing header
  VKP__K_READY = 5,  // server -> rank 0: vkp__hdr_t once the stage loaded
  VKP__K_READY_MSG = 6,
  VKP__KINDS = 8,
};

enum { VKP__CMD_RUN = 1, VKP__CMD_STOP = 2 };

typedef struct vkp__cmd_t {
  uint64_t seq;
  int32_t cmd;
  int32_t pad;
} vkp__cmd_t;

typedef struct vkp__hdr_t {
  uint64_t seq;
  int32_t code;     // vkp_status_code_t of the stage's error, 0 when fine
  int32_t msg_len;  // bytes of error text that follow (with the NUL)
} vkp__hdr_t;

// How long rank 0 waits for a serving rank to report a loaded stage.
#define VKP__READY_TIMEOUT_NS (300ull * 1000000000ull)

static MPI_Comm vkp__comm = MPI_COMM_NULL;
// A rank a proxy gave up on (-1: none): stop commands skip it and
// vkp_mpi_finalize aborts rather than wait for it.
static _Atomic int vkp_mpi_lost_rank = -1;
static int vkp__rank = -1, vkp__size = 0;
static bool vkp__we_initialised;

// How long a wait keeps testing (with a yield) before it sleeps: 20 us, or
// $VKPIPE_MPI_SPIN_US (0..1000000) read once at vkp_mpi_init: on hosts with
// cores to spare, a longer spin shortens every hop (docs/scale-out.md).
static uint64_t vkp__spin_ns = 20000;

// How long rank 0 waits for one hop of a remote stage (its inputs out, its
// outputs back) before it takes the rank as lost: 60 s, or
// $VKPIPE_MPI_TIMEOUT_S (1..86400; 0: wait for ever), read at vkp_mpi_init.
// MPI itself reports nothing when a peer dies under Open MPI's recovery
// mode, and ends the whole job otherwise.
static uint64_t vkp__hop_timeout_ns = 60ull * 1000000000ull;

static int vkp__tag(int32_t stage, int kind) {
  return (int)stage * VKP__KINDS + kind;
}

bool vkp_mpi_available(void) { return true; }

bool vkp_mpi_launched(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") ||
         getenv("PMI_RANK");
}

static vkp_status_t vkp__mpi_error(int rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return vkp_status_make(VKP_STATUS_UNAVAILABLE, "MPI %s failed: %s", what,
                         text);
}

vkp_status_t vkp_mpi_init(int *argc, char ***argv, int32_t *out_rank,
                          int32_t *out_size) {
  int inited = 0, provided = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "initialisation");
    vkp__we_initialised = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "the MPI library gives thread level %d; vkpipe's "
                           "pipeline needs MPI_THREAD_MULTIPLE",
                           provided);
  if (vkp__comm == MPI_COMM_NULL) {
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &vkp__comm);
    if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "MPI_Comm_dup");
    MPI_Comm_set_errhandler(vkp__comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(vkp__comm, &vkp__rank);
    MPI_Comm_size(vkp__comm, &vkp__size);
  }
  const char *spin = getenv("VKPIPE_MPI_SPIN_US");
  if (spin) {
    char *end = NULL;
    unsigned long long us = strtoull(spin, &end, 10);
    if (end == spin || *end || us > 1000000)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "VKPIPE_MPI_SPIN_US='%s' is not 0..1000000", spin);
    vkp__spin_ns = us * 1000u;
  }
  const char *hop = getenv("VKPIPE_MPI_TIMEOUT_S");
  if (hop) {
    char *end = NULL;
    unsigned long long sec = strtoull(hop, &end, 10);
    if (end == hop || *end || sec > 86400)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "VKPIPE_MPI_TIMEOUT_S='%s' is not 0..86400", hop);
    vkp__hop_timeout_ns = sec ? sec * 1000000000ull : UINT64_MAX;
  }
  if (out_rank) *out_rank = vkp__rank;
  if (out_size) *out_size = vkp__size;
  return NULL;
}

void vkp_mpi_finalize(void) {
  // MPI_Finalize would wait for a lost rank: end the job instead.
  if (atomic_load(&vkp_mpi_lost_rank) >= 0) vkp_mpi_abort(1);
  if (vkp__comm != MPI_COMM_NULL) MPI_Comm_free(&vkp__comm);
  vkp__comm = MPI_COMM_NULL;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (vkp__we_initialised && !finalized) MPI_Finalize();
  vkp__we_initialised = false;
}

void vkp_mpi_abort(int exit_code) {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized || vkp__size < 2) return;
  fflush(stdout);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
}

bool vkp__plan_has_ranks(const vkp_plan_t *plan) {
  for (int32_t s = 0; plan && s < plan->n_stages; ++s)
    if (plan->stages[s].rank != 0) return true;
  return false;
}

// Waits for `n` requests: tests with a yield in between for the first
// 20 us (a hop's reply usually comes within that), then tests between
// sleeps that grow to 100 us, so a waiting thread leaves the cores to the
// stages. With `timeout_ns` not UINT64_MAX, TIMEOUT once it passed (the
// requests still open).
static vkp_status_t vkp__wait_all(int n, MPI_Request *reqs, uint64_t timeout_ns) {
  uint64_t start = vkp__now_ns(), sleep_ns = 0;
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "point-to-point transfer");
    if (done) return NULL;
    uint64_t waited = vkp__now_ns() - start;
    if (waited < vkp__spin_ns) {
      sched_yield();
      continue;
    }
    if (timeout_ns != UINT64_MAX && waited > timeout_ns)
      return vkp_status_make(VKP_STATUS_TIMEOUT, "MPI transfer timed out");
    sleep_ns = sleep_ns ? sleep_ns * 2 : 5000;
    if (sleep_ns > 100000) sleep_ns = 100000;
    struct timespec ts = {0, (long)sleep_ns};
    nanosleep(&ts, NULL);
  }
}

static vkp_status_t vkp__check_count(const vkp_plan_t *plan, int32_t stage,
                                     size_t nbytes) {
  if (nbytes <= (size_t)0x7fffffff) return NULL;
  return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                         "stage '%s': a tensor of %zu bytes is too large for "
                         "one MPI message (2 GiB)",
                         plan->stages[stage].name, nbytes);
}

// ---------------------------------------------------------------------------
// Rank 0: proxies

typedef struct vkp__proxy_t {
  vkp_stage_t base;
  const vkp_plan_t *plan;
  int32_t stage;
  int32_t rank;
  uint64_t frames;
  MPI_Request *reqs;  // owned: 1 + n_inputs + 1 + n_outputs
} vkp__proxy_t;

static bool vkp__proxy_supports(const vkp_target_t *target,
                                const vkp_graph_t *graph, const vkp_node_t *node,
                                char *reason, size_t reason_size) {
  return false;
}

static vkp_status_t vkp__proxy_run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                                   vkp_tensor_t *outputs) {
  vkp__proxy_t *px = (vkp__proxy_t *)stage;
  const vkp_graph_t *g = px->plan->stages[px->stage].graph;
  vkp__cmd_t cmd = {.seq = ++px->frames, .cmd = VKP__CMD_RUN};
  vkp__hdr_t hdr = {0};
  int n = 0;
  MPI_Request *r = px->reqs;
  int rc = MPI_Isend(&cmd, sizeof cmd, MPI_BYTE, px->rank,
                     vkp__tag(px->stage, VKP__K_CMD), vkp__comm, &r[n++]);
  for (int32_t i = 0; rc == MPI_SUCCESS && i < g->n_inputs; ++i)
    rc = MPI_Isend(inputs[i].data, (int)vkp_tensor_nbytes(&inputs[i]), MPI_BYTE,
                   px->rank, vkp__tag(px->stage, VKP__K_IN), vkp__comm, &r[n++]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(&hdr, sizeof hdr, MPI_BYTE, px->rank,
                   vkp__tag(px->stage, VKP__K_HDR), vkp__comm, &r[n++]);
  for (int32_t o = 0; rc == MPI_SUCCESS && o < g->n_outputs; ++o)
    rc = MPI_Irecv(outputs[o].data, (int)vkp_tensor_nbytes(&outputs[o]),
                   MPI_BYTE, px->rank, vkp__tag(px->stage, VKP__K_OUT),
                   vkp__comm, &r[n++]);
  vkp_status_t st = rc == MPI_SUCCESS ? vkp__wait_all(n, r, vkp__hop_timeout_ns)
                                      : vkp__mpi_error(rc, "posting a transfer");
  if (st) {
    // A rank that does not answer, or a transport that fails, is lost: the
    // pipeline fails (DEVICE_LOST) and later runs are refused naming it.
    // The receives are cancelled so nothing writes into the slots later.
    for (int i = 0; i < n; ++i) {
      if (r[i] == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&r[i]);
      MPI_Request_free(&r[i]);
    }
    bool timeout = vkp_status_is(st, VKP_STATUS_TIMEOUT);
    vkp_status_t lost =
        timeout ? vkp_status_make(VKP_STATUS_DEVICE_LOST,
                                  "rank %d is lost: no answer within %llu s "
                                  "(VKPIPE_MPI_TIMEOUT_S)",
                                  (int)px->rank,
                                  (unsigned long long)(vkp__hop_timeout_ns / 1000000000ull))
                : vkp_status_make(VKP_STATUS_DEVICE_LOST, "rank %d is lost: %s",
                                  (int)px->rank, vkp_status_message(st));
    vkp_status_free(st);
    vkp_mpi_lost_rank = px->rank;
    return lost;
  }
  if (hdr.code == 0) return NULL;
  // The stage failed there: its message follows.
  int len = hdr.msg_len > 0 && hdr.msg_len < (1 << 20) ? hdr.msg_len : 1;
  char *text = vkp__calloc((size_t)len + 1, 1);
  if (!text) return VKP_OOM("remote error text");
  MPI_Request req;
  rc = MPI_Irecv(text, len, MPI_BYTE, px->rank, vkp__tag(px->stage, VKP__K_MSG),
                 vkp__comm, &req);
  st = rc == MPI_SUCCESS ? vkp__wait_all(1, &req, UINT64_MAX)
                         : vkp__mpi_error(rc, "receiving an error");
  if (!st)
    st = vkp_status_make((vkp_status_code_t)hdr.code, "on rank %d: %s",
                         (int)px->rank, text);
  vkp__free(text);
  return st;
}

static void vkp__proxy_unload(vkp_stage_t *stage) {
  vkp__proxy_t *px = (vkp__proxy_t *)stage;
  if (!px) return;
  vkp__free(px->reqs);
  vkp__free(px);
}

static const vkp_target_vtable_t vkp__proxy_vtable = {
    .name = "mpi-proxy",
    .supports = vkp__proxy_supports,
    .run = vkp__proxy_run,
    .unload = vkp__proxy_unload,
};

static const vkp_target_t vkp__proxy_target = {.vtable = &vkp__proxy_vtable,
                                               .impl = NULL};

// Receives the ready report of stage `stage` from `rank`: NULL, or the
// error the rank met loading it.
static vkp_status_t vkp__recv_ready(int32_t stage, int32_t rank,
                                    uint64_t timeout_ns) {
  vkp__hdr_t hdr = {0};
  MPI_Request req;
  int rc = MPI_Irecv(&hdr, sizeof hdr, MPI_BYTE, rank,
                     vkp__tag(stage, VKP__K_READY), vkp__comm, &req);
  if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "receiving a ready report");
  vkp_status_t st = vkp__wait_all(1, &req, timeout_ns);
  if (st) {
    MPI_Cancel(&req);
    MPI_Request_free(&req);
    return vkp_status_annotate(st, "rank %d did not report its stage loaded "
                                   "(is it running 'vkpipe serve' or "
                                   "vkp_mpi_serve with the same plan?)",
                               (int)rank);
  }
  if (hdr.code == 0) return NULL;
  int len = hdr.msg_len > 0 && hdr.msg_len < (1 << 20) ? hdr.msg_len : 1;
  char *text = vkp__calloc((size_t)len + 1, 1);
  if (!text) return VKP_OOM("remote error text");
  rc = MPI_Irecv(text, len, MPI_BYTE, rank, vkp__tag(stage, VKP__K_READY_MSG),
                 vkp__comm, &req);
  st = rc == MPI_SUCCESS ? vkp__wait_all(1, &req, timeout_ns)
                         : vkp__mpi_error(rc, "receiving an error");
  if (!st)
    st = vkp_status_make((vkp_status_code_t)hdr.code,
                         "rank %d could not load the stage: %s", (int)rank, text);
  vkp__free(text);
  return st;
}

vkp_status_t vkp__mpi_proxy_load(const vkp_plan_t *plan, int32_t stage,
                                 const vkp_target_t **out_target,
                                 vkp_stage_t **out_stage) {
  *out_stage = NULL;
  const vkp_plan_stage_t *ps = &plan->stages[stage];
  if (vkp__comm == MPI_COMM_NULL)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "stage '%s' is placed on rank %d, but MPI is not "
                           "initialised: start under mpirun and call "
                           "vkp_mpi_init first",
                           ps->name, (int)ps->rank);
  if (vkp__rank != 0)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "a pipeline with ranks is created on rank 0; this "
                           "is rank %d (run vkp_mpi_serve here)",
                           vkp__rank);
  if (ps->rank >= vkp__size)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "stage '%s' is placed on rank %d, but the MPI world "
                           "has %d ranks (mpirun -np %d or more)",
                           ps->name, (int)ps->rank, vkp__size, (int)ps->rank + 1);
  int64_t max_tag = (int64_t)plan->n_stages * VKP__KINDS;
  void *ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(vkp__comm, MPI_TAG_UB, &ub, &flag);
  if (flag && max_tag > *(int *)ub)
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "plan has %d stages, more than this MPI's tags allow",
                           (int)plan->n_stages);
  const vkp_graph_t *g = ps->graph;
  for (int32_t i = 0; i < g->n_inputs + g->n_outputs; ++i) {
    const vkp_value_t *v = &g->values[i < g->n_inputs ? g->inputs[i]
                                                      : g->outputs[i - g->n_inputs]];
    size_t bytes = 0;
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes))
      bytes = SIZE_MAX;
    VKP_RETURN_IF_ERROR(vkp__check_count(plan, stage, bytes));
  }
  vkp__proxy_t *px = vkp__calloc(1, sizeof(*px));
  if (px)
    px->reqs = vkp__calloc((size_t)g->n_inputs + (size_t)g->n_outputs + 2,
                           sizeof(MPI_Request));
  vkp_status_t st = px && px->reqs ? NULL : VKP_OOM("MPI proxy stage");
  // The ready report is taken even when this fails (vkp__mpi_stop waits for
  // the reports of stages without a proxy).
  vkp_status_t ready = vkp__recv_ready(stage, ps->rank, VKP__READY_TIMEOUT_NS);
  if (st || (ready && vkp_status_is(ready, VKP_STATUS_TIMEOUT))) {
    if (px) vkp__free(px->reqs);
    vkp__free(px);
    vkp_status_free(st);
    return ready ? ready : VKP_OOM("MPI proxy stage");
  }
  px->base.target = &vkp__proxy_target;
  px->plan = plan;
  px->stage = stage;
  px->rank = ps->rank;
  *out_target = &vkp__proxy_target;
  // On a load error the proxy is still handed out, so that destroy knows
  // the report was taken and stops the serving rank.
  *out_stage = &px->base;
  return ready;
}

void vkp__mpi_stop(vkp_pipeline_t *p) {
  if (vkp__comm == MPI_COMM_NULL || vkp__rank != 0) return;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    int32_t rank = p->plan->stages[s].rank;
    if (rank == 0 || rank >= vkp__size || rank == atomic_load(&vkp_mpi_lost_rank))
      continue;
    // A stage whose proxy never loaded still has its ready report coming
    // (create failed earlier): take it so it cannot meet a later pipeline.
    if (!p->stages[s].loaded) vkp_status_free(vkp__recv_ready(s, rank, 10000000000ull));
    vkp__cmd_t cmd = {.cmd = VKP__CMD_STOP};
    MPI_Request req;
    if (MPI_Isend(&cmd, sizeof cmd, MPI_BYTE, rank, vkp__tag(s, VKP__K_CMD),
                  vkp__comm, &req) == MPI_SUCCESS)
      vkp_status_free(vkp__wait_all(1, &req, 10000000000ull));
  }
}

// ---------------------------------------------------------------------------
// Serving ranks

typedef struct vkp__server_t {
  const vkp_plan_t *plan;
  int32_t stage;
  const vkp_target_t *target;
  vkp_stage_t *loaded;
  vkp_status_t load_error;   // owned
  vkp_tensor_t *inputs;      // owned, n_inputs
  vkp_tensor_t *outputs;     // owned, n_outputs
  pthread_t thread;
  bool started;
  vkp_status_t error;        // owned: a transfer failure that ended serving
} vkp__server_t;

static vkp_status_t vkp__send_hdr(int32_t stage, int kind, int msg_kind,
                                  uint64_t seq, vkp_status_t err,
                                  const vkp_tensor_t *outputs, int32_t n_outputs) {
  const char *text = err ? vkp_status_message(err) : "";
  vkp__hdr_t hdr = {.seq = seq,
                    .code = err ? (int32_t)vkp_status_code(err) : 0,
                    .msg_len = err ? (int32_t)strlen(text) + 1 : 0};
  MPI_Request reqs[2];
  int n = 0;
  int rc = MPI_Isend(&hdr, sizeof hdr, MPI_BYTE, 0, vkp__tag(stage, kind),
                     vkp__comm, &reqs[n++]);
  if (rc == MPI_SUCCESS) rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  // Outputs go back whatever happened: rank 0 posted their receives.
  MPI_Request *out = NULL;
  if (rc == MPI_SUCCESS && n_outputs > 0) {
    out = vkp__calloc((size_t)n_outputs, sizeof(*out));
    if (!out) return VKP_OOM("output sends");
    for (int32_t o = 0; rc == MPI_SUCCESS && o < n_outputs; ++o)
      rc = MPI_Isend(outputs[o].data, (int)vkp_tensor_nbytes(&outputs[o]),
                     MPI_BYTE, 0, vkp__tag(stage, VKP__K_OUT), vkp__comm, &out[o]);
    vkp_status_t st = rc == MPI_SUCCESS ? vkp__wait_all(n_outputs, out, UINT64_MAX)
                                        : vkp__mpi_error(rc, "sending outputs");
    vkp__free(out);
    VKP_RETURN_IF_ERROR(st);
  }
  if (rc == MPI_SUCCESS && err) {
    MPI_Request req;
    rc = MPI_Isend(text, hdr.msg_len, MPI_BYTE, 0, vkp__tag(stage, msg_kind),
                   vkp__comm, &req);
    if (rc == MPI_SUCCESS) return vkp__wait_all(1, &req, UINT64_MAX);
  }
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "sending a reply");
}

static void *vkp__server_main(void *arg) {
  vkp__server_t *sv = arg;
  const vkp_graph_t *g = sv->plan->stages[sv->stage].graph;
  MPI_Request *reqs = vkp__calloc((size_t)g->n_inputs + 1, sizeof(MPI_Request));
  if (!reqs) {
    sv->error = VKP_OOM("input receives");
    return NULL;
  }
  for (;;) {
    // The command and the inputs are received together: rank 0 sends the
    // inputs right behind a run command. A stop command comes alone; the
    // input receives are then cancelled.
    vkp__cmd_t cmd = {0};
    int rc = MPI_Irecv(&cmd, sizeof cmd, MPI_BYTE, 0,
                       vkp__tag(sv->stage, VKP__K_CMD), vkp__comm, &reqs[0]);
    int posted = rc == MPI_SUCCESS ? 1 : 0;
    for (int32_t i = 0; rc == MPI_SUCCESS && i < g->n_inputs; ++i) {
      rc = MPI_Irecv(sv->inputs[i].data, (int)vkp_tensor_nbytes(&sv->inputs[i]),
                     MPI_BYTE, 0, vkp__tag(sv->stage, VKP__K_IN), vkp__comm,
                     &reqs[1 + i]);
      if (rc == MPI_SUCCESS) posted++;
    }
    vkp_status_t st = rc == MPI_SUCCESS ? vkp__wait_all(1, reqs, UINT64_MAX)
                                        : vkp__mpi_error(rc, "receiving a command");
    if (!st && cmd.cmd == VKP__CMD_RUN)
      st = vkp__wait_all(posted - 1, reqs + 1, UINT64_MAX);
    if (st || cmd.cmd != VKP__CMD_RUN) {
      for (int i = 1; i < posted; ++i) {
        MPI_Cancel(&reqs[i]);
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
      }
      sv->error = st;
      break;
    }
    vkp_status_t err = sv->load_error
                           ? vkp_status_make(vkp_status_code(sv->load_error), "%s",
                                             vkp_status_message(sv->load_error))
                           : sv->target->vtable->run(sv->loaded, sv->inputs,
                                                     sv->outputs);
    st = vkp__send_hdr(sv->stage, VKP__K_HDR, VKP__K_MSG, cmd.seq, err,
                       sv->outputs, g->n_outputs);
    vkp_status_free(err);
    if (st) {
      sv->error = st;
      break;
    }
  }
  vkp__free(reqs);
  return NULL;
}

static vkp_status_t vkp__tensors_for(const vkp_graph_t *g, bool outputs,
                                     vkp_tensor_t **out) {
  int32_t n = outputs ? g->n_outputs : g->n_inputs;
  const int32_t *ids = outputs ? g->outputs : g->inputs;
  *out = vkp__calloc((size_t)n + 1, sizeof(vkp_tensor_t));
  if (!*out) return VKP_OOM("stage tensors");
  for (int32_t i = 0; i < n; ++i) {
    const vkp_value_t *v = &g->values[ids[i]];
    VKP_RETURN_IF_ERROR(vkp_tensor_init(&(*out)[i], v->dtype, v->rank, v->shape));
  }
  return NULL;
}

static vkp_status_t vkp__serve(const vkp_plan_t *plan, vkp__stage_loader_t load,
                               void *ctx) {
  if (vkp__comm == MPI_COMM_NULL)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "MPI is not initialised: call vkp_mpi_init first");
  if (vkp__rank == 0)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "rank 0 creates the pipeline; vkp_mpi_serve is for "
                           "the other ranks");
  int32_t n = 0;
  for (int32_t s = 0; s < plan->n_stages; ++s) n += plan->stages[s].rank == vkp__rank;
  if (n == 0) return NULL;
  vkp__server_t *sv = vkp__calloc((size_t)n, sizeof(*sv));
  if (!sv) return VKP_OOM("servers");
  int32_t k = 0;
  vkp_status_t st = NULL;
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    if (plan->stages[s].rank != vkp__rank) continue;
    vkp__server_t *v = &sv[k++];
    v->plan = plan;
    v->stage = s;
    const vkp_graph_t *g = plan->stages[s].graph;
    v->load_error = load(ctx, plan, s, &v->target, &v->loaded);
    vkp_status_t t = vkp__tensors_for(g, false, &v->inputs);
    if (!t) t = vkp__tensors_for(g, true, &v->outputs);
    if (t && !v->load_error) v->load_error = t;
    else vkp_status_free(t);
    if (v->load_error)
      v->load_error = vkp_status_annotate(v->load_error, "stage '%s' on rank %d",
                                          plan->stages[s].name, vkp__rank);
    vkp_status_t sent = vkp__send_hdr(s, VKP__K_READY, VKP__K_READY_MSG, 0,
                                      v->load_error, NULL, 0);
    if (sent && !st) st = sent;
    else vkp_status_free(sent);
  }
  for (int32_t i = 0; i < n && !st; ++i) {
    int rc = pthread_create(&sv[i].thread, NULL, vkp__server_main, &sv[i]);
    if (rc)
      st = vkp_status_make(VKP_STATUS_UNAVAILABLE, "cannot start a server thread");
    else
      sv[i].started = true;
  }
  for (int32_t i = 0; i < n; ++i) {
    if (sv[i].started) pthread_join(sv[i].thread, NULL);
    if (sv[i].error && !st) st = sv[i].error;
    else vkp_status_free(sv[i].error);
    if (sv[i].loaded) sv[i].target->vtable->unload(sv[i].loaded);
    vkp_status_free(sv[i].load_error);
    const vkp_graph_t *g = plan->stages[sv[i].stage].graph;
    for (int32_t t = 0; sv[i].inputs && t < g->n_inputs; ++t)
      vkp_tensor_deinit(&sv[i].inputs[t]);
    for (int32_t t = 0; sv[i].outputs && t < g->n_outputs; ++t)
      vkp_tensor_deinit(&sv[i].outputs[t]);
    vkp__free(sv[i].inputs);
    vkp__free(sv[i].outputs);
  }
  vkp__free(sv);
  return st;
}

typedef struct vkp__registry_ctx_t {
  const vkp_registry_t *registry;
  const vkp_blob_t *blobs;
  vkp_blob_t *owned;  // per stage: the blob its loaded stage uses
} vkp__registry_ctx_t;

static vkp_status_t vkp__registry_load(void *arg, const vkp_plan_t *plan,
                                       int32_t s, const vkp_target_t **out_target,
                                       vkp_stage_t **out_stage) {
  vkp__registry_ctx_t *ctx = arg;
  const vkp_plan_stage_t *ps = &plan->stages[s];
  VKP_RETURN_IF_ERROR(vkp_registry_lookup(ctx->registry, ps->target, out_target));
  vkp_blob_t *blob = &ctx->owned[s];
  if (ctx->blobs) {
    VKP_RETURN_IF_ERROR(vkp_blob_alloc(blob, ctx->blobs[s].size));
    if (ctx->blobs[s].size) memcpy(blob->data, ctx->blobs[s].data, ctx->blobs[s].size);
  } else {
    vkp_compile_options_t copts = {0};
    copts.threads = ps->threads;
    copts.precision = ps->precision;
    VKP_RETURN_IF_ERROR(vkp_target_check_graph(*out_target, ps->graph));
    VKP_RETURN_IF_ERROR(
        (*out_target)->vtable->compile(*out_target, ps->graph, &copts, blob));
  }
  return (*out_target)->vtable->load(*out_target, ps->graph, blob->data,
                                     blob->size, out_stage);
}

vkp_status_t vkp_mpi_serve(const vkp_plan_t *plan, const vkp_registry_t *registry,
                           const vkp_blob_t *blobs) {
  VKP_RETURN_IF_ERROR(vkp_plan_validate(plan));
  vkp__registry_ctx_t ctx = {.registry = registry, .blobs = blobs};
  ctx.owned = vkp__calloc((size_t)plan->n_stages + 1, sizeof(vkp_blob_t));
  if (!ctx.owned) return VKP_OOM("stage blobs");
  vkp_status_t st = vkp__serve(plan, vkp__registry_load, &ctx);
  for (int32_t s = 0; s < plan->n_stages; ++s) vkp_blob_deinit(&ctx.owned[s]);
  vkp__free(ctx.owned);
  return st;
}

static vkp_status_t vkp__synthetic_load(void *arg, const vkp_plan_t *plan,
                                        int32_t s, const vkp_target_t **out_target,
                                        vkp_stage_t **out_stage) {
  const vkp_pipeline_synthetic_stage_t *stages = arg;
  return vkp__synthetic_stage_new(&stages[s], out_target, out_stage);
}

vkp_status_t vkp_mpi_serve_synthetic(const vkp_pipeline_synthetic_stage_t *stages,
                                     const int32_t *ranks, int32_t n_stages,
                                     int64_t numel) {
  if (n_stages < 1 || numel < 1 || !stages || !ranks)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "a synthetic pipeline needs >= 1 stage, ranks and "
                           ">= 1 element");
  vkp_plan_t *plan = NULL;
  VKP_RETURN_IF_ERROR(vkp_plan_create("synthetic", &plan));
  vkp_status_t st = vkp__synthetic_plan(n_stages, numel, plan);
  for (int32_t i = 0; i < n_stages && !st; ++i)
    st = vkp_plan_set_stage_rank(plan, i, ranks[i]);
  if (!st) st = vkp__serve(plan, vkp__synthetic_load, (void *)stages);
  vkp_plan_destroy(plan);
  return st;
}

vkp_status_t vkp_mpi_pingpong(int32_t peer, size_t bytes, int32_t iters,
                              double *out_round_trip_s) {
  if (out_round_trip_s) *out_round_trip_s = 0;
  if (vkp__comm == MPI_COMM_NULL)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "MPI is not initialised: call vkp_mpi_init first");
  if (peer <= 0 || peer >= vkp__size || iters < 1 || bytes > 0x7fffffff)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "ping-pong with rank %d of %d, %zu bytes, %d times",
                           (int)peer, vkp__size, bytes, (int)iters);
  if (vkp__rank != 0 && vkp__rank != peer) return NULL;
  char *buf = vkp__calloc(bytes + 1, 1);
  if (!buf) return VKP_OOM("ping-pong buffer");
  const int tag = 0x7ff0;
  int rc = MPI_SUCCESS, warm = iters < 10 ? iters : 10;
  uint64_t start = 0;
  for (int32_t i = 0; rc == MPI_SUCCESS && i < warm + iters; ++i) {
    if (i == warm) start = vkp__now_ns();
    if (vkp__rank == 0) {
      rc = MPI_Send(buf, (int)bytes, MPI_BYTE, peer, tag, vkp__comm);
      if (rc == MPI_SUCCESS)
        rc = MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, tag, vkp__comm,
                      MPI_STATUS_IGNORE);
    } else {
      rc = MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, tag, vkp__comm,
                    MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS)
        rc = MPI_Send(buf, (int)bytes, MPI_BYTE, 0, tag, vkp__comm);
    }
  }
  uint64_t elapsed = vkp__now_ns() - start;
  vkp__free(buf);
  if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "ping-pong");
  if (out_round_trip_s && vkp__rank == 0)
    *out_round_trip_s = (double)elapsed * 1e-9 / iters;
  return NULL;
}
