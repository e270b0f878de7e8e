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
//
// A hop is two messages when its tensors are small: the command and the
// inputs rank 0 sends travel as one message, the reply header and the
// outputs rank 0 reads as another, each described by an MPI datatype over
// the command and the slots themselves (absolute addresses, MPI_BOTTOM), so
// nothing is copied into a buffer of ours. Above VKP__PACK_MAX_BYTES (4000)
// of tensors one way, that way sends the command (or header) and each tensor
// as messages of their own, which keeps MPI's single-copy paths for large
// contiguous buffers. Both sides decide from the plan.
//
// A value from a stage on rank a != 0 to a stage on rank b != 0 goes
// straight from a to b (a "direct route"), never through rank 0: for every
// frame the producer's server sends, per route, a header (the frame's seq;
// whether a payload follows) and, when the stage ran fine, the payload. The
// consumer's server takes exactly one header per frame per direct input.
// To keep both in step, rank 0 tells a server with direct routes about every
// frame, also the ones it skips (a SKIP command: no run, no reply). Rank 0's
// rings still hold the credits: a producer is at most `depth` frames ahead
// of its consumers. Route tags follow the stage tags: n_stages * 8 +
// 2 * (consumer input number over the plan) + part (0 header, 1 payload).
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/sanitizer.h"
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

enum { VKP__CMD_RUN = 1, VKP__CMD_STOP = 2, VKP__CMD_SKIP = 3 };

// Header seq of the last message on a direct route (the producer stopped).
#define VKP__SEQ_END UINT64_MAX

// A command or header is VKP__HEAD_BYTES, then, when the tensors it goes
// with include data-dependent ("bounded") values, their run-time extents
// along the bounded axis (in input or output order): the message carries
// VKP__HEAD_BYTES + 8 per such value, so hops without them are unchanged.
// A direct route's header always carries one (VKP__ROUTE_HDR_BYTES).
#define VKP__MAX_EXTENTS 8
#define VKP__HEAD_BYTES 16
#define VKP__ROUTE_HDR_BYTES (VKP__HEAD_BYTES + 8)

typedef struct vkp__cmd_t {
  uint64_t seq;
  int32_t cmd;
  int32_t pad;
  int64_t ext[VKP__MAX_EXTENTS];
} vkp__cmd_t;

typedef struct vkp__hdr_t {
  uint64_t seq;
  int32_t code;     // vkp_status_code_t of the stage's error, 0 when fine
  int32_t msg_len;  // bytes of error text that follow (with the NUL)
  int64_t ext[VKP__MAX_EXTENTS];
} vkp__hdr_t;

static int vkp__head_bytes(int n_extents) { return VKP__HEAD_BYTES + 8 * n_extents; }

// Tags from here up are not a stage's: ping-pong (0x7ff0), heartbeats. MPI
// guarantees tags up to 32767.
#define VKP__TAG_RESERVED 0x7ff0
#define VKP__TAG_HEARTBEAT 0x7ff1

// How long rank 0 waits for a serving rank to report a loaded stage.
#define VKP__READY_TIMEOUT_NS (300ull * 1000000000ull)

// Tensors of one hop direction up to this many bytes in all travel in the
// command's (or the reply header's) message: with the header, within Open
// MPI's smallest eager limit (4 KiB, shared memory), so the message goes in
// one step. A larger packed message would need the rendezvous' round trips,
// each waiting on a side that may be asleep between tests: at 16 KiB it
// measured 2.5x slower than separate messages.
#define VKP__PACK_MAX_BYTES 4000u

static MPI_Comm vkp__comm = MPI_COMM_NULL;
// A rank a proxy gave up on (-1: none): stop commands skip it and
// vkp_mpi_finalize aborts rather than wait for it.
static _Atomic int vkp_mpi_lost_rank = -1;
static int vkp__rank = -1, vkp__size = 0;
static bool vkp__we_initialised;

// How long a wait keeps testing (with a yield) before it sleeps: 20 us, or
// $VKPIPE_MPI_SPIN_US (0..1000000) read once at vkp_mpi_init, which then
// holds for every wait. Without it, the waits of a rank whose threads fit
// in its cores (vkp__mpi_rank_cores) test for VKP__SPIN_OWN_CORES_NS: they
// take no core from a stage, and a hop no longer depends on a sleeping
// thread waking (64 B hops, 2 ranks on the 2-core VM: 63-76 us added per
// round trip with 20 us on both sides, 3.8-4.5 us with 2 ms).
static uint64_t vkp__spin_ns = 20000;
static bool vkp__spin_set;  // VKPIPE_MPI_SPIN_US was given
#define VKP__SPIN_OWN_CORES_NS 200000ull
// The spin of the calling thread's waits, when longer than vkp__spin_ns:
// set by the server threads and the proxies' completers.
static __thread uint64_t vkp__thread_spin_ns;
static int32_t vkp__local_ranks = 1;  // ranks on this node (MPI_COMM_TYPE_SHARED)

// How long rank 0 waits for one hop of a remote stage (its inputs out, its
// outputs back) before it takes the rank as lost: 60 s, or
// $VKPIPE_MPI_TIMEOUT_S (1..86400; 0: wait for ever), read at vkp_mpi_init.
// MPI itself reports nothing when a peer dies under Open MPI's recovery
// mode, and ends the whole job otherwise.
static uint64_t vkp__hop_timeout_ns = 60ull * 1000000000ull;

// Heartbeats: while it serves, a rank sends rank 0 a small message every
// $VKPIPE_MPI_HEARTBEAT_MS (default 250; 0: none), and rank 0 takes a rank
// whose heartbeats stopped for VKP__HEARTBEAT_MISSED intervals as lost, even
// within the hop timeout: a dead or stopped process is told apart from a
// slow stage (which keeps beating) in a bounded time.
#define VKP__HEARTBEAT_MISSED 40
static uint64_t vkp__heartbeat_ns = 250000000ull;
static _Atomic uint64_t *vkp__heard_ns;  // rank 0: per rank, last heartbeat
static pthread_t vkp__monitor;
static bool vkp__monitor_started;
static atomic_bool vkp__monitor_stop;

static int vkp__tag(int32_t stage, int kind) {
  return (int)stage * VKP__KINDS + kind;
}

// Tensor payload moved by this process (vkp_mpi_traffic_get).
static _Atomic uint64_t vkp__bytes_sent, vkp__bytes_received,
    vkp__bytes_received_direct;

void vkp_mpi_traffic_get(vkp_mpi_traffic_t *out) {
  out->bytes_sent = atomic_load(&vkp__bytes_sent);
  out->bytes_received = atomic_load(&vkp__bytes_received);
  out->bytes_received_direct = atomic_load(&vkp__bytes_received_direct);
}

// ---------------------------------------------------------------------------
// Routes: which values go where, computed the same way on every rank from
// the plan.

typedef struct vkp__routes_t {
  int32_t n_stages;
  int32_t *in_offset;   // owned: n_stages + 1, prefix sums of stage inputs
  int32_t *out_offset;  // owned: n_stages + 1, prefix sums of stage outputs
  // Per stage input (in_offset[s] + i): the producing stage and output when
  // the value comes straight from another non-zero rank, else -1.
  int32_t *in_src_stage, *in_src_output;  // owned
  // Per stage output (out_offset[s] + o): rank 0 needs it (a stage there or
  // a global output reads it).
  bool *out_to_root;    // owned
} vkp__routes_t;

static void vkp__routes_deinit(vkp__routes_t *r) {
  vkp__free(r->in_offset);
  vkp__free(r->out_offset);
  vkp__free(r->in_src_stage);
  vkp__free(r->in_src_output);
  vkp__free(r->out_to_root);
  memset(r, 0, sizeof(*r));
}

static int32_t vkp__io_index(const vkp_graph_t *g, bool outputs, const char *name) {
  int32_t n = outputs ? g->n_outputs : g->n_inputs;
  const int32_t *ids = outputs ? g->outputs : g->inputs;
  for (int32_t i = 0; i < n; ++i)
    if (strcmp(g->values[ids[i]].name, name) == 0) return i;
  return -1;
}

static vkp_status_t vkp__routes_init(const vkp_plan_t *plan, vkp__routes_t *r) {
  memset(r, 0, sizeof(*r));
  int32_t n = plan->n_stages;
  r->n_stages = n;
  r->in_offset = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  r->out_offset = vkp__calloc((size_t)n + 1, sizeof(int32_t));
  if (!r->in_offset || !r->out_offset) return VKP_OOM("MPI routes");
  for (int32_t s = 0; s < n; ++s) {
    r->in_offset[s + 1] = r->in_offset[s] + plan->stages[s].graph->n_inputs;
    r->out_offset[s + 1] = r->out_offset[s] + plan->stages[s].graph->n_outputs;
  }
  r->in_src_stage = vkp__calloc((size_t)r->in_offset[n] + 1, sizeof(int32_t));
  r->in_src_output = vkp__calloc((size_t)r->in_offset[n] + 1, sizeof(int32_t));
  r->out_to_root = vkp__calloc((size_t)r->out_offset[n] + 1, sizeof(bool));
  if (!r->in_src_stage || !r->in_src_output || !r->out_to_root)
    return VKP_OOM("MPI routes");
  for (int32_t k = 0; k < r->in_offset[n]; ++k) r->in_src_stage[k] = -1;
  for (int32_t b = 0; b < plan->n_bindings; ++b) {
    const vkp_plan_binding_t *bind = &plan->bindings[b];
    if (bind->src_stage == VKP_PLAN_GLOBAL) continue;
    int32_t o = vkp__io_index(plan->stages[bind->src_stage].graph, true,
                              bind->src_name);
    if (o < 0) continue;  // vkp_plan_validate refuses such a plan
    int32_t src_rank = plan->stages[bind->src_stage].rank;
    int32_t dst_rank =
        bind->dst_stage == VKP_PLAN_GLOBAL ? 0 : plan->stages[bind->dst_stage].rank;
    if (src_rank == 0 || dst_rank == 0) {
      r->out_to_root[r->out_offset[bind->src_stage] + o] = true;
      continue;
    }
    int32_t i = vkp__io_index(plan->stages[bind->dst_stage].graph, false,
                              bind->dst_name);
    if (i < 0) continue;
    r->in_src_stage[r->in_offset[bind->dst_stage] + i] = bind->src_stage;
    r->in_src_output[r->in_offset[bind->dst_stage] + i] = o;
  }
  return NULL;
}

// Tag of part `part` (0 header, 1 payload) of the direct route into input
// `input` of stage `stage`.
static int vkp__route_tag(const vkp__routes_t *r, int32_t stage, int32_t input,
                          int part) {
  return r->n_stages * VKP__KINDS + 2 * (r->in_offset[stage] + input) + part;
}

// Whether stage `s` sends or receives some value on a direct route.
static bool vkp__stage_has_routes(const vkp__routes_t *r, int32_t s) {
  for (int32_t k = 0; k < r->in_offset[r->n_stages]; ++k)
    if (r->in_src_stage[k] == s) return true;
  for (int32_t k = r->in_offset[s]; k < r->in_offset[s + 1]; ++k)
    if (r->in_src_stage[k] >= 0) return true;
  return false;
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
    vkp__spin_set = true;
  }
  MPI_Comm local = MPI_COMM_NULL;
  if (MPI_Comm_split_type(vkp__comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) ==
          MPI_SUCCESS &&
      local != MPI_COMM_NULL) {
    int n = 1;
    MPI_Comm_size(local, &n);
    vkp__local_ranks = n > 0 ? n : 1;
    MPI_Comm_free(&local);
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
  const char *beat = getenv("VKPIPE_MPI_HEARTBEAT_MS");
  if (beat) {
    char *end = NULL;
    unsigned long long ms = strtoull(beat, &end, 10);
    if (end == beat || *end || ms > 3600000)
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "VKPIPE_MPI_HEARTBEAT_MS='%s' is not 0..3600000", beat);
    vkp__heartbeat_ns = ms * 1000000ull;
  }
  if (out_rank) *out_rank = vkp__rank;
  if (out_size) *out_size = vkp__size;
  return NULL;
}

// Rank 0: takes every heartbeat and notes when each rank was last heard.
static void *vkp__monitor_main(void *arg) {
  uint64_t beat = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  while (!atomic_load(&vkp__monitor_stop)) {
    if (req == MPI_REQUEST_NULL &&
        MPI_Irecv(&beat, sizeof beat, MPI_BYTE, MPI_ANY_SOURCE, VKP__TAG_HEARTBEAT,
                  vkp__comm, &req) != MPI_SUCCESS)
      break;
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&req, &done, &status) != MPI_SUCCESS) break;
    if (done) {
      if (status.MPI_SOURCE >= 0 && status.MPI_SOURCE < vkp__size)
        atomic_store(&vkp__heard_ns[status.MPI_SOURCE], vkp__now_ns());
      continue;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  if (req != MPI_REQUEST_NULL) {
    MPI_Cancel(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  return NULL;
}

static vkp_status_t vkp__monitor_start(void) {
  if (vkp__monitor_started || vkp__heartbeat_ns == 0) return NULL;
  // Process-wide state outlives the pipeline that starts it: the system
  // allocator, not the pipeline's.
  VKP__ALLOCATOR_SCOPE(vkp__allocator_system());
  vkp__heard_ns = vkp__calloc((size_t)vkp__size + 1, sizeof(*vkp__heard_ns));
  if (!vkp__heard_ns) return VKP_OOM("heartbeat table");
  atomic_store(&vkp__monitor_stop, false);
  if (pthread_create(&vkp__monitor, NULL, vkp__monitor_main, NULL)) {
    vkp__free((void *)vkp__heard_ns);
    vkp__heard_ns = NULL;
    return vkp_status_make(VKP_STATUS_UNAVAILABLE, "cannot start the heartbeat monitor");
  }
  vkp__monitor_started = true;
  return NULL;
}

static void vkp__monitor_join(void) {
  if (!vkp__monitor_started) return;
  atomic_store(&vkp__monitor_stop, true);
  pthread_join(vkp__monitor, NULL);
  vkp__monitor_started = false;
  vkp__free((void *)vkp__heard_ns);
  vkp__heard_ns = NULL;
}

// Rank 0: the first of `ranks` whose heartbeats stopped since `since_ns`
// (each is given the full window from `since_ns` on), or -1.
static int32_t vkp__silent_rank(const int32_t *ranks, int n, uint64_t since_ns) {
  if (!vkp__heard_ns || vkp__heartbeat_ns == 0) return -1;
  uint64_t now = vkp__now_ns(), limit = vkp__heartbeat_ns * VKP__HEARTBEAT_MISSED;
  for (int i = 0; i < n; ++i) {
    uint64_t heard = atomic_load(&vkp__heard_ns[ranks[i]]);
    if (heard < since_ns) heard = since_ns;
    if (now > heard && now - heard > limit) return ranks[i];
  }
  return -1;
}

void vkp_mpi_finalize(void) {
  // MPI_Finalize would wait for a lost rank: end the job instead.
  if (atomic_load(&vkp_mpi_lost_rank) >= 0) vkp_mpi_abort(1);
  // MPI_Finalize unloads Open MPI's components (base/sanitizer.h).
  vkp__keep_libraries_mapped();
  vkp__monitor_join();
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

static int32_t vkp__silent_rank(const int32_t *ranks, int n, uint64_t since_ns);

// Linux lets a sleep of 5 us last up to the thread's timer slack longer
// (50 us by default): a waiting thread asks for 1 us, once, so that its
// sleeps between tests are about as long as asked.
static void vkp__tight_timer(void) {
  static __thread bool tight;
  if (tight) return;
  tight = true;
#ifdef PR_SET_TIMERSLACK
  prctl(PR_SET_TIMERSLACK, 1000ul, 0ul, 0ul, 0ul);
#endif
}

// How long a wait keeps testing while `bytes` of tensors move: their time
// at VKP__SPIN_GBPS, so that a large transfer, whose protocol steps each
// need a test on both sides, is not paced by sleeps (at most 5 ms, at least
// the usual spin).
#define VKP__SPIN_GBPS 4.0
#define VKP__NEAR_NS 10000000ull     // 10 ms
#define VKP__SLEEP_NEAR_NS 20000ull  // 20 us
#define VKP__SLEEP_FAR_NS 100000ull  // 100 us
static uint64_t vkp__moving_spin_ns(size_t bytes) {
  double ns = (double)bytes / VKP__SPIN_GBPS;
  if (ns > 5e6) ns = 5e6;
  return (uint64_t)ns > vkp__spin_ns ? (uint64_t)ns : vkp__spin_ns;
}

int32_t vkp__mpi_rank_cores(void) {
  int32_t mine = vkp__host_cores();
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  // Bound to fewer cores than the host has (mpirun's --bind-to core, its
  // default for two ranks or fewer): those are this rank's own.
  if (online > 0 && mine < online) return mine;
  return vkp__local_ranks > 1 ? mine / vkp__local_ranks : mine;
}

// The spin of a rank's waits: VKP__SPIN_OWN_CORES_NS when `own_cores` (its
// threads fit in its cores) and no VKPIPE_MPI_SPIN_US was given.
static uint64_t vkp__spin_for(bool own_cores) {
  return !vkp__spin_set && own_cores && vkp__spin_ns < VKP__SPIN_OWN_CORES_NS
             ? VKP__SPIN_OWN_CORES_NS
             : vkp__spin_ns;
}

// Waits for `n` requests: tests back to back for `spin_ns` (0: the
// usual spin) from the start and again from each request that completes
// (the rest of a transfer usually follows), then between sleeps that grow
// to 20 us for the first 10 ms and to 100 us after, so a waiting thread
// leaves the cores to the stages. With
// `timeout_ns` not UINT64_MAX, TIMEOUT once it passed (the requests still
// open); on rank 0 also gives up (UNAVAILABLE, *out_silent set) once one of
// the `n_watch` ranks in `watch` stops its heartbeats.
static vkp_status_t vkp__wait_watch(int n, MPI_Request *reqs, uint64_t timeout_ns,
                                    uint64_t spin_ns, const int32_t *watch, int n_watch,
                                    int32_t *out_silent) {
  uint64_t start = vkp__now_ns(), spin_from = start, sleep_ns = 0;
  if (spin_ns < vkp__spin_ns) spin_ns = vkp__spin_ns;
  if (spin_ns < vkp__thread_spin_ns) spin_ns = vkp__thread_spin_ns;
  uint32_t spins = 0;
  *out_silent = -1;
  for (;;) {
    int done = 0, rc;
    int index[16], count = 0;
    if (n <= 16) {
      rc = MPI_Testsome(n, reqs, &count, index, MPI_STATUSES_IGNORE);
      done = rc == MPI_SUCCESS && count == MPI_UNDEFINED;
    } else {
      rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    }
    if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "point-to-point transfer");
    if (done) return NULL;
    uint64_t now = vkp__now_ns();
    if (count > 0) {
      spin_from = now;
      sleep_ns = 0;
    }
    if (now - spin_from < spin_ns) {
      // Test again at once, and offer the core to another thread every
      // 16th test: a yield per test costs a system call each, most of a hop
      // on an idle host, and a pause between tests (32 pauses, about 0.7 us
      // on Zen 5) left each waiting side up to that late: 4.2-4.3 us added
      // per 64-byte round trip with it, 1.0-1.9 us without (MPI's own
      // ping-pong: 0.4-1.0 us), 2 ranks on the 2-core VM.
      if ((++spins & 15) == 0) sched_yield();
      continue;
    }
    uint64_t waited = now - start;
    if (timeout_ns != UINT64_MAX && waited > timeout_ns)
      return vkp_status_make(VKP_STATUS_TIMEOUT, "MPI transfer timed out");
    if (n_watch > 0 && (*out_silent = vkp__silent_rank(watch, n_watch, start)) >= 0)
      return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                             "no heartbeat from rank %d for %.1f s "
                             "(VKPIPE_MPI_HEARTBEAT_MS)",
                             (int)*out_silent,
                             (double)(vkp__heartbeat_ns * VKP__HEARTBEAT_MISSED) * 1e-9);
    vkp__tight_timer();
    // Sleeps grow from 5 us to VKP__SLEEP_NEAR_NS for the first
    // VKP__NEAR_NS of a wait (a frame usually comes or returns within it:
    // a hop costs about one such sleep), then to VKP__SLEEP_FAR_NS.
    uint64_t cap = waited < VKP__NEAR_NS ? VKP__SLEEP_NEAR_NS : VKP__SLEEP_FAR_NS;
    sleep_ns = sleep_ns ? sleep_ns * 2 : 5000;
    if (sleep_ns > cap) sleep_ns = cap;
    struct timespec ts = {0, (long)sleep_ns};
    nanosleep(&ts, NULL);
  }
}

static vkp_status_t vkp__wait_all(int n, MPI_Request *reqs, uint64_t timeout_ns) {
  int32_t silent;
  return vkp__wait_watch(n, reqs, timeout_ns, 0, NULL, 0, &silent);
}

// A wait for requests that move `bytes` of tensors (vkp__moving_spin_ns).
static vkp_status_t vkp__wait_moving(int n, MPI_Request *reqs, size_t bytes) {
  int32_t silent;
  return vkp__wait_watch(n, reqs, UINT64_MAX, vkp__moving_spin_ns(bytes), NULL, 0, &silent);
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
// One message for a command or header and the tensors after it

// Whether input (`outputs` false) or output `k` of stage `stage` travels
// between it and rank 0: an input rank 0 sends (not one that comes straight
// from another serving rank), an output rank 0 reads.
static bool vkp__with_root(const vkp__routes_t *r, int32_t stage, bool outputs, int32_t k) {
  return outputs ? r->out_to_root[r->out_offset[stage] + k]
                 : r->in_src_stage[r->in_offset[stage] + k] < 0;
}

// The bytes of those tensors of stage `stage`, one way, from the plan.
static size_t vkp__root_bytes(const vkp_plan_t *plan, const vkp__routes_t *r, int32_t stage,
                              bool outputs) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  size_t total = 0;
  int32_t n = outputs ? g->n_outputs : g->n_inputs;
  for (int32_t k = 0; k < n; ++k) {
    if (!vkp__with_root(r, stage, outputs, k)) continue;
    const vkp_value_t *v = &g->values[outputs ? g->outputs[k] : g->inputs[k]];
    size_t bytes = 0;
    if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes)) return SIZE_MAX;
    total += bytes;
  }
  return total;
}

// The value of input (`outputs` false) or output `k` of stage `stage`.
static const vkp_value_t *vkp__io_value(const vkp_plan_t *plan, int32_t stage, bool outputs,
                                        int32_t k) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  return &g->values[outputs ? g->outputs[k] : g->inputs[k]];
}

// Bytes of value `v` at its declared shape (a bounded value's bound).
static size_t vkp__bound_bytes(const vkp_value_t *v) {
  size_t bytes = 0;
  return vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes) ? bytes : SIZE_MAX;
}

// How many of the tensors stage `stage` exchanges with rank 0 one way are
// bounded: the extents its commands (inputs) or replies (outputs) carry.
static int vkp__root_extents(const vkp_plan_t *plan, const vkp__routes_t *r, int32_t stage,
                             bool outputs) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  int n = 0;
  for (int32_t k = 0; k < (outputs ? g->n_outputs : g->n_inputs); ++k)
    n += vkp__with_root(r, stage, outputs, k) && vkp__io_value(plan, stage, outputs, k)->bounded;
  return n;
}

// Whether that direction travels as one message (VKP__PACK_MAX_BYTES).
static bool vkp__packed(const vkp_plan_t *plan, const vkp__routes_t *r, int32_t stage,
                        bool outputs) {
  size_t bytes = vkp__root_bytes(plan, r, stage, outputs);
  return bytes != SIZE_MAX &&
         bytes + 8u * (size_t)vkp__root_extents(plan, r, stage, outputs) <= VKP__PACK_MAX_BYTES;
}

// Writes the run-time extents of the bounded ones among those tensors `t`
// into `ext`.
static void vkp__extents_get(const vkp_plan_t *plan, const vkp__routes_t *r, int32_t stage,
                             bool outputs, const vkp_tensor_t *t, int64_t *ext) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  int n = 0;
  for (int32_t k = 0; k < (outputs ? g->n_outputs : g->n_inputs); ++k) {
    const vkp_value_t *v = vkp__io_value(plan, stage, outputs, k);
    if (vkp__with_root(r, stage, outputs, k) && v->bounded)
      ext[n++] = t[k].shape[v->bounded_axis];
  }
}

// Gives the bounded ones among those tensors `t` the extents `ext`; an
// extent outside 0..bound is a broken message (INTERNAL, naming the value).
static vkp_status_t vkp__extents_set(const vkp_plan_t *plan, const vkp__routes_t *r,
                                     int32_t stage, bool outputs, const int64_t *ext,
                                     vkp_tensor_t *t) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  int n = 0;
  for (int32_t k = 0; k < (outputs ? g->n_outputs : g->n_inputs); ++k) {
    const vkp_value_t *v = vkp__io_value(plan, stage, outputs, k);
    if (!vkp__with_root(r, stage, outputs, k) || !v->bounded) continue;
    int64_t e = ext[n++];
    if (e < 0 || e > v->shape[v->bounded_axis])
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "%s '%s' came with extent %lld, outside its bound %lld",
                             outputs ? "output" : "input", v->name, (long long)e,
                             (long long)v->shape[v->bounded_axis]);
    t[k].shape[v->bounded_axis] = e;
  }
  return NULL;
}

// How many of those tensors there are.
static int vkp__root_count(const vkp__routes_t *r, int32_t stage, bool outputs) {
  int n = 0;
  int32_t end = outputs ? r->out_offset[stage + 1] - r->out_offset[stage]
                        : r->in_offset[stage + 1] - r->in_offset[stage];
  for (int32_t k = 0; k < end; ++k) n += vkp__with_root(r, stage, outputs, k);
  return n;
}

// Addresses and byte counts of those of the stage's inputs or outputs `t`
// into `bufs` and `lens`; returns how many, their bytes added to *bytes.
// The counts are the tensors' run-time sizes when `actual` (what a send of
// its own moves), else their bounds (a receive, whose message may be
// shorter, and the packed types, which both sides build alike).
static int vkp__root_spans(const vkp_plan_t *plan, const vkp__routes_t *r, int32_t stage,
                           bool outputs, bool actual, const vkp_tensor_t *t, void **bufs,
                           int *lens, uint64_t *bytes) {
  const vkp_graph_t *g = plan->stages[stage].graph;
  int k = 0;
  for (int32_t i = 0; i < (outputs ? g->n_outputs : g->n_inputs); ++i) {
    if (!vkp__with_root(r, stage, outputs, i)) continue;
    size_t len = actual ? vkp_tensor_nbytes(&t[i])
                        : vkp__bound_bytes(vkp__io_value(plan, stage, outputs, i));
    bufs[k] = t[i].data;
    lens[k++] = (int)len;
    *bytes += len;
  }
  return k;
}

// A datatype, used with MPI_BOTTOM, that covers `head_bytes` at `head` and
// then the `n` buffers `bufs` of `lens` bytes (absolute addresses).
static vkp_status_t vkp__span_type(void *head, int head_bytes, int n, void *const *bufs,
                                   const int *lens, MPI_Datatype *out) {
  int count = n + 1;
  int *blocks = vkp__calloc((size_t)count, sizeof(int));
  MPI_Aint *displs = vkp__calloc((size_t)count, sizeof(MPI_Aint));
  MPI_Datatype *types = vkp__calloc((size_t)count, sizeof(MPI_Datatype));
  vkp_status_t st = blocks && displs && types ? NULL : VKP_OOM("MPI message type");
  int rc = MPI_SUCCESS;
  for (int i = 0; !st && rc == MPI_SUCCESS && i < count; ++i) {
    blocks[i] = i == 0 ? head_bytes : lens[i - 1];
    types[i] = MPI_BYTE;
    rc = MPI_Get_address(i == 0 ? head : bufs[i - 1], &displs[i]);
  }
  if (!st && rc == MPI_SUCCESS) rc = MPI_Type_create_struct(count, blocks, displs, types, out);
  if (!st && rc == MPI_SUCCESS) {
    rc = MPI_Type_commit(out);
    if (rc != MPI_SUCCESS) MPI_Type_free(out);
  }
  if (!st && rc != MPI_SUCCESS) st = vkp__mpi_error(rc, "building a message type");
  vkp__free(blocks);
  vkp__free(displs);
  vkp__free(types);
  return st;
}

// Message types a proxy slot built, by the tensor addresses they cover: a
// ring slot's tensors stay where they are, so a slot reuses one or a few.
#define VKP__TYPE_CACHE 4
typedef struct vkp__type_cache_t {
  int n;                 // tensors per entry
  void **keys;           // owned: VKP__TYPE_CACHE * n addresses
  MPI_Datatype types[VKP__TYPE_CACHE];
  bool used[VKP__TYPE_CACHE];
  int next;              // the entry replaced next
} vkp__type_cache_t;

static vkp_status_t vkp__type_cache_init(vkp__type_cache_t *c, int n) {
  memset(c, 0, sizeof(*c));
  c->n = n;
  c->keys = vkp__calloc((size_t)VKP__TYPE_CACHE * (size_t)n + 1, sizeof(void *));
  return c->keys ? NULL : VKP_OOM("MPI message types");
}

static void vkp__type_cache_deinit(vkp__type_cache_t *c) {
  for (int i = 0; i < VKP__TYPE_CACHE; ++i)
    if (c->used[i]) MPI_Type_free(&c->types[i]);
  vkp__free(c->keys);
  memset(c, 0, sizeof(*c));
}

// The type for `head` and `bufs` (c->n of them), built on a miss.
static vkp_status_t vkp__type_cache_get(vkp__type_cache_t *c, void *head, int head_bytes,
                                        void *const *bufs, const int *lens,
                                        MPI_Datatype *out) {
  size_t key_bytes = (size_t)c->n * sizeof(void *);
  for (int i = 0; i < VKP__TYPE_CACHE; ++i) {
    if (!c->used[i] || (key_bytes && memcmp(c->keys + (size_t)i * (size_t)c->n, bufs, key_bytes)))
      continue;
    *out = c->types[i];
    return NULL;
  }
  int e = c->next;
  c->next = (c->next + 1) % VKP__TYPE_CACHE;
  if (c->used[e]) MPI_Type_free(&c->types[e]);
  c->used[e] = false;
  VKP_RETURN_IF_ERROR(vkp__span_type(head, head_bytes, c->n, bufs, lens, &c->types[e]));
  if (key_bytes) memcpy(c->keys + (size_t)e * (size_t)c->n, bufs, key_bytes);
  c->used[e] = true;
  *out = c->types[e];
  return NULL;
}

// ---------------------------------------------------------------------------
// Rank 0: proxies

// One frame in flight from a proxy, in the ring slot it uses: its command
// and reply header (the packed types cover them), its requests.
typedef struct vkp__proxy_slot_t {
  vkp__cmd_t cmd;
  vkp__hdr_t hdr;
  MPI_Request *reqs;  // owned: 1 + n_inputs + 1 + n_outputs
  int n;              // requests posted
  uint64_t sent, received;
  vkp__type_cache_t in_types, out_types;
} vkp__proxy_slot_t;

typedef struct vkp__proxy_t {
  vkp_stage_t base;
  const vkp_plan_t *plan;
  int32_t stage;
  int32_t rank;
  bool has_routes;    // the server must hear of skipped frames too
  vkp__routes_t routes;  // owned
  int32_t n_watch;
  int32_t *watch;     // owned: the ranks a hop depends on (its own, then
                      // those that feed it directly), for heartbeats
  // One message each way when the tensors are small (VKP__PACK_MAX_BYTES).
  bool pack_in, pack_out;
  int n_ext_in, n_ext_out;  // bounded tensors each way (vkp__root_extents)
  int32_t depth;
  vkp__proxy_slot_t *slots;  // owned: depth
  void **bufs;        // owned: the poster's scratch, n_inputs + n_outputs addresses
  int *lens;          // owned: their byte counts
  uint64_t spin_ns;   // its completer's waits (vkp__mpi_proxy_set_spin)
} vkp__proxy_t;

static bool vkp__proxy_supports(const vkp_target_t *target,
                                const vkp_graph_t *graph, const vkp_node_t *node,
                                char *reason, size_t reason_size) {
  return false;
}

// Sends a command for frame `seq` to the serving rank and waits for it to
// leave (a small message: MPI sends it eagerly).
static vkp_status_t vkp__send_cmd(int32_t stage, int32_t rank, int32_t what,
                                  uint64_t seq) {
  vkp__cmd_t cmd = {.seq = seq, .cmd = what};
  MPI_Request req;
  int rc = MPI_Isend(&cmd, VKP__HEAD_BYTES, MPI_BYTE, rank, vkp__tag(stage, VKP__K_CMD),
                     vkp__comm, &req);
  if (rc != MPI_SUCCESS) return vkp__mpi_error(rc, "sending a command");
  return vkp__wait_all(1, &req, 10000000000ull);
}

void vkp__mpi_proxy_frame(vkp_stage_t *stage, uint64_t seq, bool run) {
  vkp__proxy_t *px = (vkp__proxy_t *)stage;
  // A skipped frame matters to a server with direct routes only; once a
  // rank is lost the pipeline has failed and nothing more is sent.
  if (run || !px->has_routes || atomic_load(&vkp_mpi_lost_rank) >= 0) return;
  vkp_status_free(vkp__send_cmd(px->stage, px->rank, VKP__CMD_SKIP, seq));
}

// The ranks that feed stage `px` directly, as text for a lost-rank message.
static void vkp__direct_sources(const vkp__proxy_t *px, char *text, size_t size) {
  const vkp__routes_t *r = &px->routes;
  size_t len = 0;
  text[0] = 0;
  for (int32_t k = r->in_offset[px->stage]; k < r->in_offset[px->stage + 1]; ++k) {
    if (r->in_src_stage[k] < 0 || len + 32 > size) continue;
    len += (size_t)snprintf(text + len, size - len, "%s%d", len ? ", " : "",
                            (int)px->plan->stages[r->in_src_stage[k]].rank);
  }
}

// Posts the sends of frame `seq` (the command and the inputs rank 0 sends)
// into the requests of slot `sl`.
static vkp_status_t vkp__proxy_post_sends(vkp__proxy_t *px, vkp__proxy_slot_t *sl, uint64_t seq,
                                          const vkp_tensor_t *inputs) {
  MPI_Request *r = sl->reqs;
  int tag = vkp__tag(px->stage, VKP__K_CMD), rc = MPI_SUCCESS;
  sl->cmd = (vkp__cmd_t){.seq = seq, .cmd = VKP__CMD_RUN};
  if (px->n_ext_in > 0)
    vkp__extents_get(px->plan, &px->routes, px->stage, false, inputs, sl->cmd.ext);
  int head = vkp__head_bytes(px->n_ext_in);
  int k = vkp__root_spans(px->plan, &px->routes, px->stage, false, !px->pack_in, inputs,
                          px->bufs, px->lens, &sl->sent);
  if (px->pack_in) {
    MPI_Datatype type;
    VKP_RETURN_IF_ERROR(
        vkp__type_cache_get(&sl->in_types, &sl->cmd, head, px->bufs, px->lens, &type));
    rc = MPI_Isend(MPI_BOTTOM, 1, type, px->rank, tag, vkp__comm, &r[sl->n++]);
    return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "posting a transfer");
  }
  rc = MPI_Isend(&sl->cmd, head, MPI_BYTE, px->rank, tag, vkp__comm, &r[sl->n++]);
  for (int i = 0; rc == MPI_SUCCESS && i < k; ++i)
    rc = MPI_Isend(px->bufs[i], px->lens[i], MPI_BYTE, px->rank,
                   vkp__tag(px->stage, VKP__K_IN), vkp__comm, &r[sl->n++]);
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "posting a transfer");
}

// Posts the receives of the reply (the header and the outputs rank 0
// reads) into the requests of slot `sl`.
static vkp_status_t vkp__proxy_post_receives(vkp__proxy_t *px, vkp__proxy_slot_t *sl,
                                             vkp_tensor_t *outputs) {
  MPI_Request *r = sl->reqs;
  int tag = vkp__tag(px->stage, VKP__K_HDR), rc = MPI_SUCCESS;
  sl->hdr = (vkp__hdr_t){0};
  int k = vkp__root_spans(px->plan, &px->routes, px->stage, true, false, outputs, px->bufs,
                          px->lens, &sl->received);
  if (px->pack_out) {
    MPI_Datatype type;
    VKP_RETURN_IF_ERROR(vkp__type_cache_get(&sl->out_types, &sl->hdr,
                                            vkp__head_bytes(px->n_ext_out), px->bufs,
                                            px->lens, &type));
    rc = MPI_Irecv(MPI_BOTTOM, 1, type, px->rank, tag, vkp__comm, &r[sl->n++]);
    return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "posting a transfer");
  }
  rc = MPI_Irecv(&sl->hdr, sizeof sl->hdr, MPI_BYTE, px->rank, tag, vkp__comm, &r[sl->n++]);
  for (int i = 0; rc == MPI_SUCCESS && i < k; ++i)
    rc = MPI_Irecv(px->bufs[i], px->lens[i], MPI_BYTE, px->rank,
                   vkp__tag(px->stage, VKP__K_OUT), vkp__comm, &r[sl->n++]);
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "posting a transfer");
}

// Cancels what is still open of slot `sl`, so nothing writes into the ring
// slots later.
static void vkp__proxy_cancel(vkp__proxy_slot_t *sl) {
  for (int i = 0; i < sl->n; ++i) {
    if (sl->reqs[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&sl->reqs[i]);
    MPI_Request_free(&sl->reqs[i]);
  }
  sl->n = 0;
}

vkp_status_t vkp__mpi_proxy_post(vkp_stage_t *stage, uint64_t seq, int32_t slot,
                                 const vkp_tensor_t *inputs, vkp_tensor_t *outputs) {
  vkp__proxy_t *px = (vkp__proxy_t *)stage;
  vkp__proxy_slot_t *sl = &px->slots[slot];
  sl->n = 0;
  sl->sent = sl->received = 0;
  int lost = atomic_load(&vkp_mpi_lost_rank);
  if (lost >= 0)
    return vkp_status_make(VKP_STATUS_DEVICE_LOST, "rank %d is lost", lost);
  // The receives go first: the reply can then land in place at once.
  vkp_status_t st = vkp__proxy_post_receives(px, sl, outputs);
  if (!st) st = vkp__proxy_post_sends(px, sl, seq, inputs);
  if (st) vkp__proxy_cancel(sl);
  return st;
}

void vkp__mpi_proxy_set_spin(vkp_stage_t *stage, bool own_cores) {
  if (stage) ((vkp__proxy_t *)stage)->spin_ns = vkp__spin_for(own_cores);
}

uint64_t vkp__mpi_spin_ns(const vkp_stage_t *stage) {
  const vkp__proxy_t *px = (const vkp__proxy_t *)stage;
  return px && px->spin_ns > vkp__spin_ns ? px->spin_ns : vkp__spin_ns;
}

vkp_status_t vkp__mpi_proxy_finish(vkp_stage_t *stage, int32_t slot, vkp_tensor_t *outputs) {
  vkp__proxy_t *px = (vkp__proxy_t *)stage;
  vkp__proxy_slot_t *sl = &px->slots[slot];
  int32_t silent = -1;
  int lost_before = atomic_load(&vkp_mpi_lost_rank);
  vkp__thread_spin_ns = px->spin_ns;  // the completer's thread
  vkp_status_t st =
      lost_before >= 0
          ? vkp_status_make(VKP_STATUS_UNAVAILABLE, "an earlier frame found it gone")
          : vkp__wait_watch(sl->n, sl->reqs, vkp__hop_timeout_ns,
                            vkp__moving_spin_ns(sl->sent + sl->received), px->watch,
                            px->n_watch, &silent);
  if (st && lost_before >= 0) {
    vkp__proxy_cancel(sl);
    vkp_status_free(st);
    return vkp_status_make(VKP_STATUS_DEVICE_LOST, "rank %d is lost", lost_before);
  }
  if (st && silent >= 0) {
    vkp__proxy_cancel(sl);
    vkp_status_t lost = vkp_status_make(VKP_STATUS_DEVICE_LOST, "rank %d is lost: %s",
                                        (int)silent, vkp_status_message(st));
    vkp_status_free(st);
    vkp_mpi_lost_rank = silent;
    return lost;
  }
  if (st) {
    // A rank that does not answer, or a transport that fails, is lost: the
    // pipeline fails (DEVICE_LOST) and later runs are refused naming it.
    vkp__proxy_cancel(sl);
    char sources[128];
    vkp__direct_sources(px, sources, sizeof sources);
    char also[sizeof sources + 48] = "";
    if (sources[0])
      snprintf(also, sizeof also, " (or rank %s, which feeds it directly)", sources);
    bool timeout = vkp_status_is(st, VKP_STATUS_TIMEOUT);
    vkp_status_t lost =
        timeout ? vkp_status_make(VKP_STATUS_DEVICE_LOST,
                                  "rank %d%s is lost: no answer within %llu s "
                                  "(VKPIPE_MPI_TIMEOUT_S)",
                                  (int)px->rank, also,
                                  (unsigned long long)(vkp__hop_timeout_ns / 1000000000ull))
                : vkp_status_make(VKP_STATUS_DEVICE_LOST, "rank %d%s is lost: %s",
                                  (int)px->rank, also, vkp_status_message(st));
    vkp_status_free(st);
    vkp_mpi_lost_rank = px->rank;
    return lost;
  }
  sl->n = 0;
  vkp__hdr_t hdr = sl->hdr;
  if (hdr.code == 0 && px->n_ext_out > 0) {
    // The bounded outputs' run-time extents; what came, unless packed at
    // the bounds, is their run-time size.
    VKP_RETURN_IF_ERROR(
        vkp__extents_set(px->plan, &px->routes, px->stage, true, hdr.ext, outputs));
  }
  if (hdr.code == 0 && px->n_ext_out > 0 && !px->pack_out) {
    sl->received = 0;
    const vkp_graph_t *g = px->plan->stages[px->stage].graph;
    for (int32_t o = 0; o < g->n_outputs; ++o)
      if (vkp__with_root(&px->routes, px->stage, true, o))
        sl->received += vkp_tensor_nbytes(&outputs[o]);
  }
  atomic_fetch_add(&vkp__bytes_sent, sl->sent);
  atomic_fetch_add(&vkp__bytes_received, sl->received);
  if (hdr.code == 0) return NULL;
  // The stage failed there: its message follows (messages of one tag keep
  // their order, so it is this frame's).
  int len = hdr.msg_len > 0 && hdr.msg_len < (1 << 20) ? hdr.msg_len : 1;
  char *text = vkp__calloc((size_t)len + 1, 1);
  if (!text) return VKP_OOM("remote error text");
  MPI_Request req;
  int rc = MPI_Irecv(text, len, MPI_BYTE, px->rank, vkp__tag(px->stage, VKP__K_MSG),
                     vkp__comm, &req);
  st = rc == MPI_SUCCESS ? vkp__wait_all(1, &req, UINT64_MAX)
                         : vkp__mpi_error(rc, "receiving an error");
  if (!st)
    st = vkp_status_make((vkp_status_code_t)hdr.code, "on rank %d: %s",
                         (int)px->rank, text);
  vkp__free(text);
  return st;
}

// A frame at a time, in slot 0: the vtable's run, which the executor does
// not use (it posts and finishes frames itself).
static vkp_status_t vkp__proxy_run(vkp_stage_t *stage, const vkp_tensor_t *inputs,
                                   vkp_tensor_t *outputs) {
  VKP_RETURN_IF_ERROR(vkp__mpi_proxy_post(stage, 0, 0, inputs, outputs));
  return vkp__mpi_proxy_finish(stage, 0, outputs);
}

static void vkp__proxy_free(vkp__proxy_t *px) {
  if (!px) return;
  vkp__routes_deinit(&px->routes);
  for (int32_t k = 0; px->slots && k < px->depth; ++k) {
    vkp__proxy_cancel(&px->slots[k]);
    vkp__type_cache_deinit(&px->slots[k].in_types);
    vkp__type_cache_deinit(&px->slots[k].out_types);
    vkp__free(px->slots[k].reqs);
  }
  vkp__free(px->slots);
  vkp__free(px->bufs);
  vkp__free(px->lens);
  vkp__free(px->watch);
  vkp__free(px);
}

static void vkp__proxy_unload(vkp_stage_t *stage) {
  vkp__proxy_free((vkp__proxy_t *)stage);
}

// Never registered: stages are made by vkp__mpi_proxy_load, not load, and
// the pipeline drives them through vkp__mpi_proxy_post and _finish (its
// poster and completer) and unload; run is never called by it.
static const vkp_target_vtable_t vkp__proxy_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "mpi-proxy",
    .compiler = {.supports = vkp__proxy_supports},
    .stage = {.run = vkp__proxy_run, .unload = vkp__proxy_unload},
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

vkp_status_t vkp__mpi_proxy_load(const vkp_plan_t *plan, int32_t stage, int32_t depth,
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
  int64_t n_inputs_all = 0;
  for (int32_t k = 0; k < plan->n_stages; ++k)
    n_inputs_all += plan->stages[k].graph->n_inputs;
  int64_t max_tag = (int64_t)plan->n_stages * VKP__KINDS + 2 * n_inputs_all;
  void *ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(vkp__comm, MPI_TAG_UB, &ub, &flag);
  if (max_tag >= VKP__TAG_RESERVED || (flag && max_tag > *(int *)ub))
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
  size_t n_io = (size_t)g->n_inputs + (size_t)g->n_outputs;
  if (px) {
    px->depth = depth > 0 ? depth : 1;
    px->slots = vkp__calloc((size_t)px->depth, sizeof(vkp__proxy_slot_t));
    px->bufs = vkp__calloc(n_io + 1, sizeof(void *));
    px->lens = vkp__calloc(n_io + 1, sizeof(int));
  }
  vkp_status_t st = px && px->slots && px->bufs && px->lens ? NULL : VKP_OOM("MPI proxy stage");
  if (!st) st = vkp__routes_init(plan, &px->routes);
  if (!st) {
    px->pack_in = vkp__packed(plan, &px->routes, stage, false);
    px->pack_out = vkp__packed(plan, &px->routes, stage, true);
    px->n_ext_in = vkp__root_extents(plan, &px->routes, stage, false);
    px->n_ext_out = vkp__root_extents(plan, &px->routes, stage, true);
  }
  int n_in_root = st ? 0 : vkp__root_count(&px->routes, stage, false);
  int n_out_root = st ? 0 : vkp__root_count(&px->routes, stage, true);
  for (int32_t k = 0; !st && k < px->depth; ++k) {
    vkp__proxy_slot_t *sl = &px->slots[k];
    sl->reqs = vkp__calloc(n_io + 2, sizeof(MPI_Request));
    st = sl->reqs ? vkp__type_cache_init(&sl->in_types, n_in_root) : VKP_OOM("MPI proxy slot");
    if (!st) st = vkp__type_cache_init(&sl->out_types, n_out_root);
  }
  if (!st) {
    px->watch = vkp__calloc((size_t)g->n_inputs + 2, sizeof(int32_t));
    if (!px->watch) st = VKP_OOM("MPI proxy stage");
  }
  if (!st) {
    px->watch[px->n_watch++] = ps->rank;
    for (int32_t i = 0; i < g->n_inputs; ++i) {
      int32_t src = px->routes.in_src_stage[px->routes.in_offset[stage] + i];
      if (src >= 0) px->watch[px->n_watch++] = plan->stages[src].rank;
    }
  }
  if (!st) st = vkp__monitor_start();
  // The ready report is taken even when this fails (vkp__mpi_stop waits for
  // the reports of stages without a proxy).
  vkp_status_t ready = vkp__recv_ready(stage, ps->rank, VKP__READY_TIMEOUT_NS);
  if (st || (ready && vkp_status_is(ready, VKP_STATUS_TIMEOUT))) {
    vkp__proxy_free(px);
    if (ready) {
      vkp_status_free(st);
      return ready;
    }
    return st;
  }
  px->has_routes = vkp__stage_has_routes(&px->routes, stage);
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
    vkp_status_free(vkp__send_cmd(s, rank, VKP__CMD_STOP, 0));
  }
}

// ---------------------------------------------------------------------------
// Serving ranks

typedef struct vkp__server_t {
  const vkp_plan_t *plan;
  const vkp__routes_t *routes;  // borrowed: shared by the rank's servers
  int32_t stage;
  const vkp_target_t *target;
  vkp_stage_t *loaded;
  vkp_status_t load_error;   // owned
  vkp_tensor_t *inputs;      // owned, n_inputs
  vkp_tensor_t *outputs;     // owned, n_outputs
  pthread_t thread;
  bool started;
  vkp_status_t error;        // owned: a transfer failure that ended serving
  uint64_t spin_ns;          // its waits' (vkp__spin_for)
  int n_ext_in, n_ext_out;   // bounded tensors each way (vkp__root_extents)
  vkp_allocator_t allocator;  // current on its thread: the serving call's
  // One message each way when the tensors are small (as the proxy's): the
  // types cover the command and the inputs rank 0 sends, the reply header
  // and the outputs it reads.
  vkp__cmd_t cmd;
  vkp__hdr_t reply;
  MPI_Datatype in_type, out_type;  // MPI_DATATYPE_NULL when not packed
} vkp__server_t;

// A direct route out of a server: output `output` to input `input` of stage
// `stage` on rank `rank`.
typedef struct vkp__out_route_t {
  int32_t output, stage, input, rank;
} vkp__out_route_t;

// Sends rank 0 a header of `kind` for frame `seq` (`err`'s code, or 0), the
// outputs it reads, and after a failing header the error's text (kind
// `msg_kind`). With `packed` (not MPI_DATATYPE_NULL) the header goes into
// *packed_hdr, which `packed` covers with the outputs: one message. The
// header carries the run-time extents of the `n_ext` bounded outputs rank 0
// reads (vkp__root_extents), and each output goes at its run-time size.
static vkp_status_t vkp__send_hdr(const vkp_plan_t *plan, const vkp__routes_t *routes,
                                  int32_t stage, int kind, int msg_kind, uint64_t seq,
                                  vkp_status_t err, const vkp_tensor_t *outputs,
                                  int32_t n_outputs, int n_ext, MPI_Datatype packed,
                                  vkp__hdr_t *packed_hdr) {
  const char *text = err ? vkp_status_message(err) : "";
  vkp__hdr_t hdr = {.seq = seq,
                    .code = err ? (int32_t)vkp_status_code(err) : 0,
                    .msg_len = err ? (int32_t)strlen(text) + 1 : 0};
  if (n_ext > 0) vkp__extents_get(plan, routes, stage, true, outputs, hdr.ext);
  // Outputs rank 0 reads go back whatever happened: it posted their receives.
  uint64_t sent = 0;
  int n_root = 0;
  for (int32_t o = 0; o < n_outputs; ++o) {
    if (!vkp__with_root(routes, stage, true, o)) continue;
    n_root++;
    sent += packed != MPI_DATATYPE_NULL
                ? vkp__bound_bytes(vkp__io_value(plan, stage, true, o))
                : vkp_tensor_nbytes(&outputs[o]);
  }
  MPI_Request req;
  int rc = MPI_SUCCESS;
  if (packed != MPI_DATATYPE_NULL) {
    *packed_hdr = hdr;
    rc = MPI_Isend(MPI_BOTTOM, 1, packed, 0, vkp__tag(stage, kind), vkp__comm, &req);
    VKP_RETURN_IF_ERROR(rc == MPI_SUCCESS ? vkp__wait_all(1, &req, UINT64_MAX)
                                          : vkp__mpi_error(rc, "sending a reply"));
  } else {
    rc = MPI_Isend(&hdr, vkp__head_bytes(n_ext), MPI_BYTE, 0, vkp__tag(stage, kind),
                   vkp__comm, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && n_root > 0) {
      MPI_Request *out = vkp__calloc((size_t)n_outputs, sizeof(*out));
      if (!out) return VKP_OOM("output sends");
      int posted = 0;
      for (int32_t o = 0; rc == MPI_SUCCESS && o < n_outputs; ++o) {
        if (!vkp__with_root(routes, stage, true, o)) continue;
        rc = MPI_Isend(outputs[o].data, (int)vkp_tensor_nbytes(&outputs[o]), MPI_BYTE, 0,
                       vkp__tag(stage, VKP__K_OUT), vkp__comm, &out[posted++]);
      }
      vkp_status_t st = rc == MPI_SUCCESS ? vkp__wait_moving(posted, out, (size_t)sent)
                                          : vkp__mpi_error(rc, "sending outputs");
      vkp__free(out);
      VKP_RETURN_IF_ERROR(st);
    }
  }
  if (rc == MPI_SUCCESS) atomic_fetch_add(&vkp__bytes_sent, sent);
  if (rc == MPI_SUCCESS && err) {
    rc = MPI_Isend(text, hdr.msg_len, MPI_BYTE, 0, vkp__tag(stage, msg_kind), vkp__comm,
                   &req);
    if (rc == MPI_SUCCESS) return vkp__wait_all(1, &req, UINT64_MAX);
  }
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "sending a reply");
}

// Receive side of the direct routes into one server: per direct input, a
// header receive always posted, and a payload receive posted until a
// payload arrives (a header without payload leaves it posted for the next).
typedef struct vkp__inbox_t {
  int32_t n_inputs;
  int32_t *src_rank;      // owned, per input: the producer's rank, or -1
  vkp__hdr_t *hdr;        // owned, per input
  MPI_Request *hdr_req;   // owned, per input
  MPI_Request *data_req;  // owned, per input
} vkp__inbox_t;

static vkp_status_t vkp__inbox_post(vkp__server_t *sv, vkp__inbox_t *box,
                                    int32_t i) {
  const vkp__routes_t *r = sv->routes;
  int rc = MPI_SUCCESS;
  if (box->hdr_req[i] == MPI_REQUEST_NULL)
    rc = MPI_Irecv(&box->hdr[i], sizeof box->hdr[i], MPI_BYTE, box->src_rank[i],
                   vkp__route_tag(r, sv->stage, i, 0), vkp__comm, &box->hdr_req[i]);
  if (rc == MPI_SUCCESS && box->data_req[i] == MPI_REQUEST_NULL)
    rc = MPI_Irecv(sv->inputs[i].data,
                   (int)vkp__bound_bytes(vkp__io_value(sv->plan, sv->stage, false, i)),
                   MPI_BYTE, box->src_rank[i], vkp__route_tag(r, sv->stage, i, 1),
                   vkp__comm, &box->data_req[i]);
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "receiving a direct input");
}

// Takes the header of frame `seq` on direct input `i` (and its payload, if
// any); *out_payload says whether one came. The receives are posted again
// (vkp__inbox_post) once the frame is done with the input tensor.
static vkp_status_t vkp__inbox_take(vkp__server_t *sv, vkp__inbox_t *box,
                                    int32_t i, uint64_t seq, bool *out_payload) {
  *out_payload = false;
  VKP_RETURN_IF_ERROR(vkp__wait_all(1, &box->hdr_req[i], UINT64_MAX));
  uint64_t got = box->hdr[i].seq;
  bool payload = got != VKP__SEQ_END && box->hdr[i].code == 0;
  if (payload) {
    VKP_RETURN_IF_ERROR(vkp__wait_all(1, &box->data_req[i], UINT64_MAX));
    const vkp_value_t *v = vkp__io_value(sv->plan, sv->stage, false, i);
    if (v->bounded) {
      int64_t e = box->hdr[i].ext[0];
      if (e < 0 || e > v->shape[v->bounded_axis])
        return vkp_status_make(VKP_STATUS_INTERNAL,
                               "stage '%s': direct input '%s' came with extent %lld, "
                               "outside its bound %lld",
                               sv->plan->stages[sv->stage].name, v->name, (long long)e,
                               (long long)v->shape[v->bounded_axis]);
      sv->inputs[i].shape[v->bounded_axis] = e;
    }
    size_t nbytes = vkp_tensor_nbytes(&sv->inputs[i]);
    atomic_fetch_add(&vkp__bytes_received, nbytes);
    atomic_fetch_add(&vkp__bytes_received_direct, nbytes);
  }
  if (got != seq)
    return vkp_status_make(VKP_STATUS_INTERNAL,
                           "stage '%s': direct input %d brought frame %llu "
                           "while frame %llu was expected",
                           sv->plan->stages[sv->stage].name, (int)i,
                           (unsigned long long)got, (unsigned long long)seq);
  *out_payload = payload;
  return NULL;
}

// After a stop: takes every message still coming on the direct inputs,
// until each producer's end header, then cancels the payload receives.
static vkp_status_t vkp__inbox_drain(vkp__server_t *sv, vkp__inbox_t *box) {
  vkp_status_t st = NULL;
  for (int32_t i = 0; i < box->n_inputs; ++i) {
    if (box->src_rank[i] < 0) continue;
    while (!st && box->hdr_req[i] != MPI_REQUEST_NULL) {
      st = vkp__wait_all(1, &box->hdr_req[i], UINT64_MAX);
      if (st || box->hdr[i].seq == VKP__SEQ_END) break;
      if (box->hdr[i].code == 0)
        st = vkp__wait_all(1, &box->data_req[i], UINT64_MAX);
      if (!st) st = vkp__inbox_post(sv, box, i);
    }
    if (box->data_req[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&box->data_req[i]);
      MPI_Wait(&box->data_req[i], MPI_STATUS_IGNORE);
    }
  }
  return st;
}

// Sends frame `seq` on every direct route out of the server: a header, and
// the payload when `payload`. The requests go into `reqs` (2 per route);
// `hdrs` (1 per route) must live until they complete.
static vkp_status_t vkp__routes_send(vkp__server_t *sv, const vkp__out_route_t *out,
                                     int32_t n_out, uint64_t seq, bool payload,
                                     vkp__hdr_t *hdrs, MPI_Request *reqs,
                                     int *n_reqs) {
  const vkp__routes_t *r = sv->routes;
  int rc = MPI_SUCCESS;
  *n_reqs = 0;
  uint64_t sent = 0;
  for (int32_t k = 0; rc == MPI_SUCCESS && k < n_out; ++k) {
    const vkp_tensor_t *t = &sv->outputs[out[k].output];
    const vkp_value_t *v = vkp__io_value(sv->plan, sv->stage, true, out[k].output);
    hdrs[k] = (vkp__hdr_t){.seq = seq, .code = payload ? 0 : 1};
    hdrs[k].ext[0] = v->bounded ? t->shape[v->bounded_axis] : 0;
    rc = MPI_Isend(&hdrs[k], VKP__ROUTE_HDR_BYTES, MPI_BYTE, out[k].rank,
                   vkp__route_tag(r, out[k].stage, out[k].input, 0), vkp__comm,
                   &reqs[(*n_reqs)++]);
    if (rc != MPI_SUCCESS || !payload) continue;
    sent += vkp_tensor_nbytes(t);
    rc = MPI_Isend(t->data, (int)vkp_tensor_nbytes(t), MPI_BYTE, out[k].rank,
                   vkp__route_tag(r, out[k].stage, out[k].input, 1), vkp__comm,
                   &reqs[(*n_reqs)++]);
  }
  atomic_fetch_add(&vkp__bytes_sent, sent);
  return rc == MPI_SUCCESS ? NULL : vkp__mpi_error(rc, "sending a direct output");
}

// Receives the next command from rank 0 into sv->cmd, and for a RUN the
// inputs rank 0 sends: one message when packed (a SKIP or STOP is the
// command alone, shorter than the type, which MPI allows); else the command
// and one message per input, whose receives go up with the command's unless
// the stage gets SKIPs (a RUN's inputs may follow a SKIP at once, and
// receives posted early could take them and could not be cancelled), and
// are cancelled after a STOP. `reqs` has room for 1 + n_inputs requests.
static vkp_status_t vkp__server_recv(vkp__server_t *sv, bool skips, const vkp__inbox_t *box,
                                     MPI_Request *reqs) {
  const vkp_graph_t *g = sv->plan->stages[sv->stage].graph;
  int tag = vkp__tag(sv->stage, VKP__K_CMD);
  uint64_t from_root = 0;
  for (int32_t i = 0; i < g->n_inputs; ++i)
    if (box->src_rank[i] < 0)
      from_root += vkp__bound_bytes(vkp__io_value(sv->plan, sv->stage, false, i));
  sv->cmd = (vkp__cmd_t){0};
  if (sv->in_type != MPI_DATATYPE_NULL) {
    int rc = MPI_Irecv(MPI_BOTTOM, 1, sv->in_type, 0, tag, vkp__comm, &reqs[0]);
    VKP_RETURN_IF_ERROR(rc == MPI_SUCCESS ? vkp__wait_all(1, reqs, UINT64_MAX)
                                          : vkp__mpi_error(rc, "receiving a command"));
    if (sv->cmd.cmd == VKP__CMD_RUN) atomic_fetch_add(&vkp__bytes_received, from_root);
    return NULL;
  }
  int rc = MPI_Irecv(&sv->cmd, sizeof sv->cmd, MPI_BYTE, 0, tag, vkp__comm, &reqs[0]);
  if (skips && rc == MPI_SUCCESS) VKP_RETURN_IF_ERROR(vkp__wait_all(1, reqs, UINT64_MAX));
  int posted = rc == MPI_SUCCESS ? 1 : 0;
  for (int32_t i = 0; rc == MPI_SUCCESS && i < g->n_inputs; ++i) {
    if (skips && sv->cmd.cmd != VKP__CMD_RUN) break;
    if (box->src_rank[i] >= 0) continue;
    rc = MPI_Irecv(sv->inputs[i].data,
                   (int)vkp__bound_bytes(vkp__io_value(sv->plan, sv->stage, false, i)),
                   MPI_BYTE, 0, vkp__tag(sv->stage, VKP__K_IN), vkp__comm, &reqs[posted]);
    if (rc == MPI_SUCCESS) posted++;
  }
  vkp_status_t st = rc == MPI_SUCCESS ? vkp__wait_all(1, reqs, UINT64_MAX)
                                      : vkp__mpi_error(rc, "receiving a command");
  if (!st && sv->cmd.cmd == VKP__CMD_RUN) {
    st = vkp__wait_moving(posted - 1, reqs + 1, (size_t)from_root);
    if (!st) atomic_fetch_add(&vkp__bytes_received, from_root);
    return st;
  }
  for (int i = 1; i < posted; ++i) {
    MPI_Cancel(&reqs[i]);
    MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
  }
  return st;
}

// Builds the server's packed message types (vkp__server_t.in_type and
// out_type), when its tensors are small enough.
static vkp_status_t vkp__server_types(vkp__server_t *sv) {
  const vkp__routes_t *r = sv->routes;
  const vkp_graph_t *g = sv->plan->stages[sv->stage].graph;
  bool pack_in = vkp__packed(sv->plan, r, sv->stage, false);
  bool pack_out = vkp__packed(sv->plan, r, sv->stage, true);
  sv->n_ext_in = vkp__root_extents(sv->plan, r, sv->stage, false);
  sv->n_ext_out = vkp__root_extents(sv->plan, r, sv->stage, true);
  if (!sv->inputs || !sv->outputs) return VKP_OOM("server tensors");
  size_t n_io = (size_t)g->n_inputs + (size_t)g->n_outputs;
  void **bufs = vkp__calloc(n_io + 1, sizeof(void *));
  int *lens = vkp__calloc(n_io + 1, sizeof(int));
  vkp_status_t st = bufs && lens ? NULL : VKP_OOM("server message types");
  uint64_t bytes = 0;
  if (!st && pack_in) {
    int k = vkp__root_spans(sv->plan, r, sv->stage, false, false, sv->inputs, bufs, lens,
                            &bytes);
    st = vkp__span_type(&sv->cmd,
                        vkp__head_bytes(sv->n_ext_in), k,
                        bufs, lens, &sv->in_type);
  }
  if (!st && pack_out) {
    int k = vkp__root_spans(sv->plan, r, sv->stage, true, false, sv->outputs, bufs, lens,
                            &bytes);
    st = vkp__span_type(&sv->reply,
                        vkp__head_bytes(sv->n_ext_out), k,
                        bufs, lens, &sv->out_type);
  }
  vkp__free(bufs);
  vkp__free(lens);
  return st;
}

// One server thread. Per frame it receives a command from rank 0 (RUN,
// SKIP or STOP) and, for RUN, the inputs rank 0 sends; the direct inputs
// come from their producers' ranks, one header per frame each. The inputs
// rank 0 sends are received together with the command (they follow a RUN
// right away) when the stage gets no SKIPs; after a STOP those receives are
// cancelled.
static void *vkp__server_main(void *arg) {
  vkp__server_t *sv = arg;
  VKP__ALLOCATOR_SCOPE(&sv->allocator);  // the serving call's
  vkp__thread_spin_ns = sv->spin_ns;
  const vkp__routes_t *r = sv->routes;
  const vkp_plan_t *plan = sv->plan;
  const vkp_graph_t *g = plan->stages[sv->stage].graph;
  int32_t n_in = g->n_inputs;
  // Direct routes out of this stage.
  int32_t n_out = 0;
  for (int32_t k = 0; k < r->in_offset[r->n_stages]; ++k) n_out += r->in_src_stage[k] == sv->stage;
  vkp__out_route_t *out = vkp__calloc((size_t)n_out + 1, sizeof(*out));
  vkp__hdr_t *out_hdrs = vkp__calloc((size_t)n_out + 1, sizeof(*out_hdrs));
  MPI_Request *out_reqs = vkp__calloc(2 * (size_t)n_out + 1, sizeof(MPI_Request));
  MPI_Request *reqs = vkp__calloc((size_t)n_in + 1, sizeof(MPI_Request));
  vkp__inbox_t box = {.n_inputs = n_in};
  box.src_rank = vkp__calloc((size_t)n_in + 1, sizeof(int32_t));
  box.hdr = vkp__calloc((size_t)n_in + 1, sizeof(vkp__hdr_t));
  box.hdr_req = vkp__calloc((size_t)n_in + 1, sizeof(MPI_Request));
  box.data_req = vkp__calloc((size_t)n_in + 1, sizeof(MPI_Request));
  vkp_status_t st = NULL;
  if (!out || !out_hdrs || !out_reqs || !reqs || !box.src_rank || !box.hdr ||
      !box.hdr_req || !box.data_req)
    st = VKP_OOM("server requests");
  for (int32_t s = 0, k = 0; !st && s < r->n_stages; ++s)
    for (int32_t i = 0; i < r->in_offset[s + 1] - r->in_offset[s]; ++i)
      if (r->in_src_stage[r->in_offset[s] + i] == sv->stage)
        out[k++] = (vkp__out_route_t){r->in_src_output[r->in_offset[s] + i], s, i,
                                      plan->stages[s].rank};
  bool any_direct = false;
  for (int32_t i = 0; !st && i < n_in; ++i) {
    box.hdr_req[i] = box.data_req[i] = MPI_REQUEST_NULL;
    int32_t src = r->in_src_stage[r->in_offset[sv->stage] + i];
    box.src_rank[i] = src >= 0 ? plan->stages[src].rank : -1;
    if (src < 0) continue;
    any_direct = true;
    st = vkp__inbox_post(sv, &box, i);
  }
  // A stage with direct routes gets SKIP commands (vkp__server_recv).
  bool skips = vkp__stage_has_routes(r, sv->stage);
  sv->in_type = sv->out_type = MPI_DATATYPE_NULL;
  if (!st) st = vkp__server_types(sv);
  while (!st) {
    st = vkp__server_recv(sv, skips, &box, reqs);
    vkp__cmd_t cmd = sv->cmd;
    if (st || (cmd.cmd != VKP__CMD_RUN && cmd.cmd != VKP__CMD_SKIP)) break;
    // This frame's direct inputs: taken for a skipped frame too.
    bool complete = true;
    for (int32_t i = 0; !st && i < n_in; ++i) {
      if (box.src_rank[i] < 0) continue;
      bool payload = false;
      st = vkp__inbox_take(sv, &box, i, cmd.seq, &payload);
      complete = complete && payload;
    }
    if (st) break;
    vkp_status_t err = NULL;
    if (cmd.cmd == VKP__CMD_RUN) {
      // Bounded values: the inputs' run-time extents came with the command
      // (or a direct route's header); the outputs start at their bounds.
      for (int32_t o = 0; o < g->n_outputs; ++o) {
        const vkp_value_t *v = vkp__io_value(plan, sv->stage, true, o);
        if (v->bounded) sv->outputs[o].shape[v->bounded_axis] = v->shape[v->bounded_axis];
      }
      if (sv->load_error)
        err = vkp_status_make(vkp_status_code(sv->load_error), "%s",
                              vkp_status_message(sv->load_error));
      else if (!complete)
        err = vkp_status_make(VKP_STATUS_INTERNAL,
                              "frame %llu: a direct input came without its value",
                              (unsigned long long)cmd.seq);
      else
        err = sv->n_ext_in > 0
                  ? vkp__extents_set(plan, r, sv->stage, false, cmd.ext, sv->inputs)
                  : NULL;
      if (!err) err = sv->target->vtable->stage.run(sv->loaded, sv->inputs, sv->outputs);
    }
    // Direct sends first, then the reply, then wait for the direct sends:
    // rank 0 must hear of the frame before a consumer's credit can depend
    // on it.
    int n_out_reqs = 0;
    st = vkp__routes_send(sv, out, n_out, cmd.seq, cmd.cmd == VKP__CMD_RUN && !err,
                          out_hdrs, out_reqs, &n_out_reqs);
    if (!st && cmd.cmd == VKP__CMD_RUN)
      st = vkp__send_hdr(plan, r, sv->stage, VKP__K_HDR, VKP__K_MSG, cmd.seq, err, sv->outputs,
                         g->n_outputs, sv->n_ext_out, sv->out_type, &sv->reply);
    vkp_status_free(err);
    vkp_status_t sent = vkp__wait_all(n_out_reqs, out_reqs, UINT64_MAX);
    if (!st) st = sent;
    else vkp_status_free(sent);
    for (int32_t i = 0; !st && i < n_in; ++i)
      if (box.src_rank[i] >= 0) st = vkp__inbox_post(sv, &box, i);
  }
  // Stopped (or broken): tell the consumers, then take what producers still
  // send until they say the same.
  int n_end = 0;
  if (out && out_hdrs && out_reqs) {
    for (int32_t k = 0; k < n_out; ++k) {
      out_hdrs[k] = (vkp__hdr_t){.seq = VKP__SEQ_END};
      if (MPI_Isend(&out_hdrs[k], VKP__ROUTE_HDR_BYTES, MPI_BYTE, out[k].rank,
                    vkp__route_tag(r, out[k].stage, out[k].input, 0), vkp__comm,
                    &out_reqs[n_end]) == MPI_SUCCESS)
        n_end++;
    }
  }
  if (any_direct) {
    vkp_status_t drained = vkp__inbox_drain(sv, &box);
    if (!st) st = drained;
    else vkp_status_free(drained);
  }
  vkp_status_free(vkp__wait_all(n_end, out_reqs, UINT64_MAX));
  if (sv->in_type != MPI_DATATYPE_NULL) MPI_Type_free(&sv->in_type);
  if (sv->out_type != MPI_DATATYPE_NULL) MPI_Type_free(&sv->out_type);
  sv->error = st;
  vkp__free(out);
  vkp__free(out_hdrs);
  vkp__free(out_reqs);
  vkp__free(reqs);
  vkp__free(box.src_rank);
  vkp__free(box.hdr);
  vkp__free(box.hdr_req);
  vkp__free(box.data_req);
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

// A serving rank's heartbeat thread: a small message to rank 0 every
// vkp__heartbeat_ns until `stop` is set.
static void *vkp__heartbeat_main(void *arg) {
  atomic_bool *stop = arg;
  uint64_t beat = 0;
  while (!atomic_load(stop)) {
    ++beat;
    MPI_Request req;
    if (MPI_Isend(&beat, sizeof beat, MPI_BYTE, 0, VKP__TAG_HEARTBEAT, vkp__comm,
                  &req) != MPI_SUCCESS)
      break;
    vkp_status_t st = vkp__wait_all(1, &req, 10000000000ull);
    if (st) {
      vkp_status_free(st);
      MPI_Cancel(&req);
      MPI_Request_free(&req);
      break;
    }
    // Sleep the interval in short slices, so that serving ends promptly.
    for (uint64_t slept = 0; slept < vkp__heartbeat_ns && !atomic_load(stop);
         slept += 10000000ull) {
      uint64_t left = vkp__heartbeat_ns - slept;
      struct timespec ts = {0, (long)(left < 10000000ull ? left : 10000000ull)};
      nanosleep(&ts, NULL);
    }
  }
  return NULL;
}

// A stage served here sends the run-time extents of its bounded inputs and
// outputs in its commands and replies, at most VKP__MAX_EXTENTS each way.
static vkp_status_t vkp__check_extents(const vkp_plan_t *plan, const vkp__routes_t *r,
                                       int32_t stage) {
  for (int outputs = 0; outputs < 2; ++outputs) {
    int n = vkp__root_extents(plan, r, stage, outputs);
    if (n > VKP__MAX_EXTENTS)
      return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                             "%d of its %s exchanged with rank 0 are data-dependent "
                             "(bounded); at most %d cross ranks per stage: cut the "
                             "stage elsewhere (docs/scale-out.md)",
                             n, outputs ? "outputs" : "inputs", VKP__MAX_EXTENTS);
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
  vkp__routes_t routes;
  vkp_status_t st = vkp__routes_init(plan, &routes);
  vkp__server_t *sv = st ? NULL : vkp__calloc((size_t)n, sizeof(*sv));
  if (!sv) {
    vkp__routes_deinit(&routes);
    return st ? st : VKP_OOM("servers");
  }
  int32_t k = 0;
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    if (plan->stages[s].rank != vkp__rank) continue;
    vkp__server_t *v = &sv[k++];
    v->allocator = vkp__allocator_resolve(NULL);
    v->plan = plan;
    v->routes = &routes;
    v->stage = s;
    const vkp_graph_t *g = plan->stages[s].graph;
    v->load_error = vkp__check_extents(plan, &routes, s);
    if (!v->load_error) v->load_error = load(ctx, plan, s, &v->target, &v->loaded);
    vkp_status_t t = vkp__tensors_for(g, false, &v->inputs);
    if (!t) t = vkp__tensors_for(g, true, &v->outputs);
    if (t && !v->load_error) v->load_error = t;
    else vkp_status_free(t);
    if (v->load_error)
      v->load_error = vkp_status_annotate(v->load_error, "stage '%s' on rank %d",
                                          plan->stages[s].name, vkp__rank);
    vkp_status_t sent = vkp__send_hdr(plan, &routes, s, VKP__K_READY, VKP__K_READY_MSG,
                                      0, v->load_error, NULL, 0, 0, MPI_DATATYPE_NULL, NULL);
    if (sent && !st) st = sent;
    else vkp_status_free(sent);
  }
  // The waits spin longer when this rank's stages' threads fit in its cores
  // and none is a device's (a software device computes on the same cores,
  // with threads the count cannot see).
  int64_t demand = 0;
  bool device = false;
  for (int32_t i = 0; i < n; ++i) {
    const vkp_plan_stage_t *ps = &plan->stages[sv[i].stage];
    demand += ps->threads > 1 ? ps->threads : 1;
    device |= sv[i].target && vkp_target_is_device(sv[i].target);
  }
  uint64_t spin_ns = vkp__spin_for(!device && demand <= vkp__mpi_rank_cores());
  for (int32_t i = 0; i < n; ++i) sv[i].spin_ns = spin_ns;
  atomic_bool beat_stop = false;
  pthread_t beat;
  bool beating = !st && vkp__heartbeat_ns > 0 &&
                 pthread_create(&beat, NULL, vkp__heartbeat_main, &beat_stop) == 0;
  for (int32_t i = 0; i < n && !st; ++i) {
    int rc = pthread_create(&sv[i].thread, NULL, vkp__server_main, &sv[i]);
    if (rc)
      st = vkp_status_make(VKP_STATUS_UNAVAILABLE, "cannot start a server thread");
    else
      sv[i].started = true;
  }
  for (int32_t i = 0; i < n; ++i)
    if (sv[i].started) pthread_join(sv[i].thread, NULL);
  if (beating) {
    atomic_store(&beat_stop, true);
    pthread_join(beat, NULL);
  }
  for (int32_t i = 0; i < n; ++i) {
    if (sv[i].error && !st) st = sv[i].error;
    else vkp_status_free(sv[i].error);
    if (sv[i].loaded) sv[i].target->vtable->stage.unload(sv[i].loaded);
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
  vkp__routes_deinit(&routes);
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
        (*out_target)->vtable->compiler.compile(*out_target, ps->graph, &copts, blob));
  }
  return (*out_target)->vtable->stage.load(*out_target, ps->graph, blob->data,
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

vkp_status_t vkp_mpi_share_plan(const vkp_plan_t *plan, const vkp_graph_t *model,
                                vkp_plan_t **out_plan) {
  *out_plan = NULL;
  if (vkp__comm == MPI_COMM_NULL)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "MPI is not initialised: call vkp_mpi_init first");
  // The JSON's length (-1: rank 0 has no plan), then the JSON.
  long long len = -1;
  char *json = NULL;
  vkp_status_t st = NULL;
  if (vkp__rank == 0 && plan) {
    st = vkp_plan_to_json(plan, &json);
    size_t n = st ? 0 : strlen(json);
    if (n > 0x7ffffffe)
      st = vkp_status_make(VKP_STATUS_UNSUPPORTED, "the plan's JSON is over 2 GiB");
    if (!st) len = (long long)n;
  }
  int rc = MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, vkp__comm);
  if (rc != MPI_SUCCESS) {
    vkp_free(json);
    vkp_status_free(st);
    return vkp__mpi_error(rc, "sharing the plan");
  }
  if (len < 0) {
    vkp_free(json);
    if (st || vkp__rank == 0) return st;
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "rank 0 made no plan to share (it failed; its own error says why)");
  }
  if (vkp__rank != 0) {
    json = vkp__calloc((size_t)len + 1, 1);
    if (!json) return VKP_OOM("the shared plan");  // MPI_Abort by the caller
  }
  rc = MPI_Bcast(json, (int)len, MPI_BYTE, 0, vkp__comm);
  if (rc != MPI_SUCCESS) st = vkp__mpi_error(rc, "sharing the plan");
  if (!st && vkp__rank != 0) {
    st = vkp_plan_from_json(json, (size_t)len, NULL, model, out_plan);
    if (st) st = vkp_status_annotate(st, "the plan rank 0 shared");
  }
  if (vkp__rank == 0) vkp_free(json);
  else vkp__free(json);
  return st;
}
