// SPDX-License-Identifier: Apache-2.0
// Stage workers. A host stage has one thread that waits for its inputs and a
// free output slot, runs the stage and publishes. A device stage has two: a
// submitter that launches frames with their semaphore waits inside the
// submit, and a completer that waits for the stage's timeline semaphore,
// releases the input slots and finishes the frame. A stage on another MPI
// rank has two as well: a poster that sends frames ahead, and a completer
// that takes the replies.
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "pipeline/pipeline_internal.h"

// How long one host-side semaphore wait lasts before the shutdown and failed
// flags are looked at again, so destroy returns promptly.
#define VKP__WAIT_SLICE_NS 10000000u

// Waits from the host until `semaphore` of `target` reaches `value`, in
// bounded slices. CANCELLED on shutdown; DEVICE_LOST once the pipeline has
// failed, and for any error of the wait itself.
static vkp_status_t vkp__wait_point(vkp_pipeline_t *p, const vkp_target_t *target,
                                    uint64_t semaphore, uint64_t value) {
  for (;;) {
    vkp_status_t st = target->vtable->device->timeline_wait(target, semaphore, value,
                                                    VKP__WAIT_SLICE_NS);
    if (!st || vkp_status_is(st, VKP_STATUS_DEVICE_LOST)) return st;
    if (!vkp_status_is(st, VKP_STATUS_TIMEOUT)) {
      // A timeline that cannot be waited on is a broken device.
      vkp_status_t lost = vkp_status_make(
          VKP_STATUS_DEVICE_LOST, "waiting for a timeline semaphore failed: %s",
          vkp_status_message(st));
      vkp_status_free(st);
      return lost;
    }
    vkp_status_free(st);
    if (atomic_load(&p->shutdown))
      return vkp_status_make(VKP_STATUS_CANCELLED, "pipeline is shutting down");
    if (atomic_load(&p->failed))
      return vkp_status_make(VKP_STATUS_DEVICE_LOST,
                             "pipeline failed while waiting for a device");
  }
}

// Signals `semaphore` from the host. A timeline that cannot be signalled
// could leave device work waiting for ever, so any failure is reported as
// DEVICE_LOST: the pipeline fails and nothing more is submitted.
static vkp_status_t vkp__host_signal(const vkp_target_t *target,
                                     uint64_t semaphore, uint64_t value) {
  vkp_status_t st = target->vtable->device->timeline_signal(target, semaphore, value);
  if (!st || vkp_status_is(st, VKP_STATUS_DEVICE_LOST)) return st;
  vkp_status_t lost = vkp_status_make(
      VKP_STATUS_DEVICE_LOST, "signalling a timeline semaphore from the host "
                              "failed: %s", vkp_status_message(st));
  vkp_status_free(st);
  return lost;
}

// Frame `seq` may start at stage `st`: launched, every input available, and in
// sequential mode every earlier frame finished. mu held.
static bool vkp__inputs_ready(const vkp_pipeline_t *p, const vkp__stage_t *st,
                              uint64_t seq) {
  if (p->launched < seq) return false;
  if (p->sequential && p->finished + 1 < seq) return false;
  for (int32_t i = 0; i < st->n_inputs; ++i)
    if (p->rings[st->inputs[i].ring].available < seq) return false;
  return true;
}

// Every output slot of frame `seq` is released by all its consumers (and, for
// a device stage, its own copy-out of seq - depth is done). mu held.
static bool vkp__outputs_free(const vkp_pipeline_t *p, const vkp__stage_t *st,
                              uint64_t seq) {
  uint64_t depth = (uint64_t)p->depth;
  // A device or remote stage's own slot state is free once it completed
  // the frame that used it last.
  if ((st->device || st->remote) && st->completed + depth < seq) return false;
  for (int32_t o = 0; o < st->n_outputs; ++o) {
    if (st->outputs[o].ring < 0) continue;
    const vkp__ring_t *ring = &p->rings[st->outputs[o].ring];
    for (int32_t c = 0; c < ring->n_consumers; ++c)
      if (ring->released[c] + depth < seq) return false;
  }
  return true;
}

// Waits for frame `seq` to be startable and its output slots free, recording
// the waiting time. Returns false on shutdown. mu held on entry and exit.
static bool vkp__stage_wait(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq) {
  uint64_t t0 = vkp__now_ns(), spin_from = 0;
  while (!atomic_load(&p->shutdown) && !vkp__inputs_ready(p, st, seq))
    if (!vkp__spin(p, p->spin_ns, &spin_from)) pthread_cond_wait(&st->cv_ready, &p->mu);
  uint64_t t1 = vkp__now_ns();
  while (!atomic_load(&p->shutdown) && !vkp__outputs_free(p, st, seq))
    pthread_cond_wait(&st->cv_space, &p->mu);
  uint64_t t2 = vkp__now_ns();
  st->stats.wait_input_ns += t1 - t0;
  st->stats.wait_slot_ns += t2 - t1;
  return !atomic_load(&p->shutdown);
}

// Makes frame `seq` of ring outputs of `st` available to consumers. mu held.
static void vkp__stage_publish(vkp_pipeline_t *p, vkp__stage_t *st,
                               uint64_t seq) {
  for (int32_t o = 0; o < st->n_outputs; ++o) {
    if (st->outputs[o].ring < 0) continue;
    vkp__ring_t *ring = &p->rings[st->outputs[o].ring];
    ring->available = seq;
    vkp__events_bump(p);
    // A device stage's slot stays in use until its own completion too.
    uint64_t oldest = st->device && st->completed < seq ? st->completed : seq;
    for (int32_t c = 0; c < ring->n_consumers; ++c)
      if (ring->released[c] < oldest) oldest = ring->released[c];
    if ((int32_t)(seq - oldest) > ring->peak_occupancy)
      ring->peak_occupancy = (int32_t)(seq - oldest);
    // Broadcast: a replicated consumer's copies all wait on it, each for
    // its own frame.
    for (int32_t c = 0; c < ring->n_consumers; ++c)
      pthread_cond_broadcast(&p->stages[ring->consumers[c]].cv_ready);
  }
}

// Stage `st` is done with frame `seq`: releases its input slots and, when it
// was the frame's last stage, finishes the frame. mu held.
static void vkp__stage_complete(vkp_pipeline_t *p, vkp__stage_t *st,
                                uint64_t seq) {
  for (int32_t i = 0; i < st->n_inputs; ++i) {
    vkp__ring_t *ring = &p->rings[st->inputs[i].ring];
    ring->released[st->inputs[i].consumer] = seq;
    if (ring->src_stage == VKP_PLAN_GLOBAL)
      pthread_cond_signal(&p->cv_input_space);
    else
      pthread_cond_broadcast(&p->stages[ring->src_stage].cv_space);
  }
  st->completed = seq;
  vkp__events_bump(p);
  st->stats.frames++;
  if (st->device || st->remote) pthread_cond_signal(&st->cv_space);
  vkp__frame_t *f = vkp__frame_get(p, seq);
  if (f->status) st->stats.failed_frames++;
  if (--f->stages_left > 0) return;
  f->done_ns = vkp__now_ns();
  bool advanced = false;
  while (p->finished < p->launched) {
    vkp__frame_t *next = vkp__frame_get(p, p->finished + 1);
    if (next->stages_left > 0) break;
    p->finished++;
    advanced = true;
    uint64_t latency = next->done_ns - next->run_ns;
    if (latency < p->latency_min_ns) p->latency_min_ns = latency;
    if (latency > p->latency_max_ns) p->latency_max_ns = latency;
    p->latency_sum_ns += latency;
    if (next->status) p->frames_failed++;
  }
  if (!advanced) return;
  pthread_cond_broadcast(&p->cv_result);
  if (p->sequential)
    for (int32_t s = 0; s < p->n_stages; ++s)
      pthread_cond_broadcast(&p->stages[s].cv_ready);
}

// Whether stage work for frame `seq` is skipped: the frame already failed, or
// the pipeline did (then the frame fails with that error). mu held.
static bool vkp__frame_skip(vkp_pipeline_t *p, uint64_t seq) {
  vkp__frame_t *f = vkp__frame_get(p, seq);
  if (!f->status && atomic_load(&p->failed))
    f->status = vkp_status_make(VKP_STATUS_DEVICE_LOST,
                                "pipeline failed before frame %llu finished: %s",
                                (unsigned long long)seq,
                                p->failed_message ? p->failed_message
                                                  : "device lost");
  return f->status != NULL;
}

static vkp_status_t vkp__stage_error(const vkp__stage_t *st, uint64_t seq,
                                     vkp_status_t status) {
  return vkp_status_annotate(status, "stage '%s' (target '%s'), frame %llu",
                             st->plan_stage->name, st->plan_stage->target,
                             (unsigned long long)seq);
}

// Waits until frame `seq` may start at `st` (vkp__stage_wait) and reads its
// record and whether the stage skips it. False on shutdown. mu not held.
static bool vkp__stage_begin(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq,
                             vkp__frame_t **out_frame, bool *out_skip) {
  pthread_mutex_lock(&p->mu);
  bool go = vkp__stage_wait(p, st, seq);
  if (go) {
    *out_frame = vkp__frame_get(p, seq);
    *out_skip = vkp__frame_skip(p, seq);
  }
  pthread_mutex_unlock(&p->mu);
  return go;
}

// A stage driven from the host waits, there, for the device stages that
// produce frame `seq`'s inputs (host producers have already published).
// CANCELLED on shutdown.
static vkp_status_t vkp__wait_device_inputs(vkp_pipeline_t *p, const vkp__stage_t *st,
                                            uint64_t seq) {
  vkp_status_t err = NULL;
  for (int32_t i = 0; i < st->n_inputs && !err; ++i) {
    const vkp__ring_t *ring = &p->rings[st->inputs[i].ring];
    if (ring->src_stage == VKP_PLAN_GLOBAL) continue;
    const vkp__stage_t *src = &p->stages[ring->src_stage];
    if (src->device) err = vkp__wait_point(p, src->target, src->semaphore, seq);
  }
  return err;
}

// Frame `seq` at a stage driven from the host (a host stage, or one on
// another rank): vkp__stage_begin, then, unless it is skipped, the waits for
// its device producers, whose error (DEVICE_LOST) goes to *out_err. False
// on shutdown.
static bool vkp__host_side_start(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq,
                                 vkp__frame_t **out_frame, bool *out_skip,
                                 vkp_status_t *out_err) {
  *out_err = NULL;
  if (!vkp__stage_begin(p, st, seq, out_frame, out_skip)) return false;
  vkp_status_t err = *out_skip ? NULL : vkp__wait_device_inputs(p, st, seq);
  if (vkp_status_is(err, VKP_STATUS_CANCELLED)) {
    vkp_status_free(err);
    return false;
  }
  *out_err = err;
  return true;
}

// Points `outs` (n_outputs tensors) at where stage `st` writes frame `f`
// in ring slot `slot`: the ring slot, else the frame's first global output,
// else copy `copy`'s scratch; and gives its inputs the run-time shapes
// (bounded values) the producers left in the slot. mu not held.
static void vkp__frame_outputs_bind(vkp_pipeline_t *p, vkp__stage_t *st, const vkp__frame_t *f,
                                    size_t slot, vkp_tensor_t *outs, int32_t copy) {
  size_t n_in = (size_t)st->n_inputs, n_out = (size_t)st->n_outputs;
  for (size_t o = 0; o < n_out; ++o) {
    const vkp__stage_output_t *out = &st->outputs[o];
    if (out->ring >= 0) {
      outs[o] = st->out_views[slot * n_out + o];
    } else if (out->n_globals > 0) {
      outs[o] = f->outputs[out->globals[0]];
      outs[o].owns_data = false;
    } else {
      const vkp_graph_t *g = st->plan_stage->graph;
      const vkp_value_t *v = &g->values[g->outputs[o]];
      vkp_status_free(vkp_tensor_init_view(
          &outs[o], v->dtype, v->rank, v->shape,
          (char *)out->scratch + (size_t)copy * out->scratch_bytes));
    }
  }
  for (size_t i = 0; i < n_in; ++i) {
    const vkp__ring_t *ring = &p->rings[st->inputs[i].ring];
    memcpy(st->in_views[slot * n_in + i].shape, ring->slot_shapes[slot],
           sizeof ring->slot_shapes[slot]);
  }
}

// Frame `f` of `st` ran fine into `outs`: copies each output to its other
// global outputs and passes the run-time shapes (a bounded output's extent)
// on to the frame's global outputs and the ring slot. mu not held.
static void vkp__frame_outputs_done(vkp_pipeline_t *p, vkp__stage_t *st, vkp__frame_t *f,
                                    size_t slot, const vkp_tensor_t *outs) {
  for (int32_t o = 0; o < st->n_outputs; ++o) {
    const vkp__stage_output_t *out = &st->outputs[o];
    const vkp_tensor_t *fo = &outs[o];
    size_t nbytes = vkp_tensor_nbytes(fo);
    for (int32_t k = out->ring >= 0 ? 0 : 1; k < out->n_globals; ++k)
      memcpy(f->outputs[out->globals[k]].data, fo->data, nbytes);
    for (int32_t k = 0; k < out->n_globals; ++k)
      memcpy(f->outputs[out->globals[k]].shape, fo->shape, sizeof fo->shape);
    if (out->ring >= 0)
      memcpy(p->rings[out->ring].slot_shapes[slot], fo->shape, sizeof fo->shape);
  }
}

// A device consumer may already wait for frame `seq` of host stage `st`:
// signals it whatever happened to the frame. Returns `err` joined with any
// failure (DEVICE_LOST first).
static vkp_status_t vkp__signal_device_consumers(vkp_pipeline_t *p, const vkp__stage_t *st,
                                                 uint64_t seq, vkp_status_t err) {
  for (int32_t o = 0; o < st->n_outputs; ++o) {
    if (st->outputs[o].ring < 0) continue;
    const vkp__ring_t *ring = &p->rings[st->outputs[o].ring];
    if (!ring->has_host_semaphore) continue;
    vkp_status_t sig = vkp__host_signal(ring->device_target, ring->host_semaphore, seq);
    if (sig) err = vkp_status_join(sig, err);
  }
  return err;
}

// ---------------------------------------------------------------------------
// Host stages

// Waits until frame `seq` is the next one stage `st` hands on (the copies
// of a replicated stage finish out of order). False on shutdown. mu held.
static bool vkp__wait_turn(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq) {
  while (!atomic_load(&p->shutdown) && st->handed + 1 < seq)
    pthread_cond_wait(&st->cv_handed, &p->mu);
  return !atomic_load(&p->shutdown);
}

// Lock invariants of the loop: mu is held only to test and update the
// counters (ring available/released, stage completed, frame records); it is
// dropped while waiting on the condition variables (by pthread_cond_wait),
// while waiting for device semaphores and while the stage runs. Slot memory
// of frame seq is this worker's between its wait and its complete.
//
// One such loop per copy of the stage: copy c runs frames c + 1, c + 1 +
// n_copies, ... on its own instance; each waits its turn to hand its frame
// on (publish, device signals, complete), so consumers see frames in order.
static void *vkp__host_worker(void *arg) {
  vkp__copy_t *cp = arg;
  vkp__stage_t *st = cp->stage;
  vkp_pipeline_t *p = st->pipeline;
  VKP__ALLOCATOR_SCOPE(&p->allocator);  // the pipeline's, on its threads too
  const vkp_target_vtable_t *vt = st->target->vtable;
  size_t n_in = (size_t)st->n_inputs;
  const uint64_t step = (uint64_t)st->n_copies;
  for (uint64_t seq = 1 + (uint64_t)cp->index;; seq += step) {
    vkp__frame_t *f = NULL;
    bool skip = false;
    vkp_status_t err = NULL;
    if (!vkp__host_side_start(p, st, seq, &f, &skip, &err)) break;
    size_t slot = (size_t)(seq % (uint64_t)p->depth);
    vkp__frame_outputs_bind(p, st, f, slot, cp->frame_outputs, cp->index);
    uint64_t busy_ns = 0, cpu_ns = 0, t_start = vkp__now_ns();
    if (!skip && !err) {
      // The worker's own CPU time too: on a shared machine the wall time
      // also counts the time other processes held the core.
      struct timespec c0, c1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      err = vt->stage.run(cp->loaded, st->in_views + slot * n_in, cp->frame_outputs);
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      busy_ns = vkp__now_ns() - t_start;
      int64_t d = ((int64_t)c1.tv_sec - (int64_t)c0.tv_sec) * 1000000000 +
                  ((int64_t)c1.tv_nsec - (int64_t)c0.tv_nsec);
      cpu_ns = d > 0 ? (uint64_t)d : 0;
    }
    if (!skip && !err) vkp__frame_outputs_done(p, st, f, slot, cp->frame_outputs);
    if (step > 1) {
      pthread_mutex_lock(&p->mu);
      bool go = vkp__wait_turn(p, st, seq);
      pthread_mutex_unlock(&p->mu);
      if (!go) {
        vkp_status_free(err);
        break;
      }
    }
    // Timeline values only grow: device consumers are signalled in order.
    err = vkp__signal_device_consumers(p, st, seq, err);
    pthread_mutex_lock(&p->mu);
    vkp__trace_record(p, st->index, seq, t_start,
                      t_start + busy_ns, skip || err);
    if (err) vkp__frame_fail(p, seq, vkp__stage_error(st, seq, err));
    st->stats.busy_ns += busy_ns;
    st->stats.cpu_ns += cpu_ns;
    vkp__stage_publish(p, st, seq);
    vkp__stage_complete(p, st, seq);
    st->handed = seq;
    if (step > 1) pthread_cond_broadcast(&st->cv_handed);
    pthread_mutex_unlock(&p->mu);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Device stages

// Lock invariants of the loop: as for host stages. A frame is launched by
// one submit that waits, on the device, for the semaphores of its device
// producers and of its host producers (which have already signalled: the
// frame only starts once their rings are available, so no wait is ever
// submitted on a value nobody will signal). When the frame is skipped or the
// submit fails (which signals nothing), the stage's semaphore is signalled
// from the host so that its consumers and its completer move on.
static void *vkp__device_submitter(void *arg) {
  vkp__stage_t *st = arg;
  vkp_pipeline_t *p = st->pipeline;
  VKP__ALLOCATOR_SCOPE(&p->allocator);  // the pipeline's, on its threads too
  const vkp_target_vtable_t *vt = st->target->vtable;
  size_t n_in = (size_t)st->n_inputs, n_out = (size_t)st->n_outputs;
  for (uint64_t seq = 1;; ++seq) {
    vkp__frame_t *f = NULL;
    bool skip = false;
    if (!vkp__stage_begin(p, st, seq, &f, &skip)) break;
    size_t slot = (size_t)(seq % (uint64_t)p->depth);
    vkp_status_t err = NULL;
    uint64_t t_submit = vkp__now_ns();
    if (!skip) {
      int32_t n_waits = 0;
      for (size_t i = 0; i < n_in; ++i) {
        const vkp__ring_t *ring = &p->rings[st->inputs[i].ring];
        uint64_t sem;
        if (ring->src_stage != VKP_PLAN_GLOBAL && p->stages[ring->src_stage].device)
          sem = p->stages[ring->src_stage].semaphore;
        else if (ring->has_host_semaphore)
          sem = ring->host_semaphore;
        else
          continue;
        bool seen = false;
        for (int32_t w = 0; w < n_waits; ++w) seen |= st->waits[w].semaphore == sem;
        if (!seen) st->waits[n_waits++] = (vkp_timeline_point_t){sem, seq};
      }
      vkp_timeline_point_t signal = {st->semaphore, seq};
      vkp_submit_info_t info = {
          .inputs = st->in_views + slot * n_in,
          .outputs = st->out_views + slot * n_out,
          .slot = (int32_t)slot,
          .n_waits = n_waits,
          .waits = st->waits,
          .n_signals = 1,
          .signals = &signal,
      };
      err = vt->device->submit(st->loaded, &info);
    }
    if (skip || err) {
      // Timeline values only grow, and a host signal may not pass a pending
      // device signal (VUID-VkSemaphoreSignalInfo-value-03259): let the
      // device reach seq - 1 first. When it cannot (the device or the
      // pipeline has failed), signal nothing: in a failed pipeline nobody
      // submits a wait on this value and every host waiter gives up.
      vkp_status_t w = seq > 1 ? vkp__wait_point(p, st->target, st->semaphore,
                                                  seq - 1)
                               : NULL;
      if (vkp_status_is(w, VKP_STATUS_CANCELLED)) {
        vkp_status_free(w);
        vkp_status_free(err);
        break;
      }
      vkp_status_t sig = w ? w : vkp__host_signal(st->target, st->semaphore, seq);
      if (sig) err = vkp_status_join(sig, err);  // DEVICE_LOST first
    }
    pthread_mutex_lock(&p->mu);
    if (err) vkp__frame_fail(p, seq, vkp__stage_error(st, seq, err));
    st->submit_ns[seq % ((uint64_t)p->depth + 1)] = t_submit;
    st->submitted = seq;
    vkp__stage_publish(p, st, seq);
    pthread_cond_signal(&st->cv_submitted);
    pthread_mutex_unlock(&p->mu);
  }
  return NULL;
}

// The completer of a two-thread stage (device, remote): waits until frame
// `seq` is submitted and returns its record. NULL once the pipeline shuts
// down: at once, or (`drain`) only when every submitted frame is done.
static vkp__frame_t *vkp__completer_wait(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq,
                                         bool drain) {
  pthread_mutex_lock(&p->mu);
  while (!atomic_load(&p->shutdown) && st->submitted < seq)
    pthread_cond_wait(&st->cv_submitted, &p->mu);
  bool stop = drain ? st->submitted < seq : atomic_load(&p->shutdown);
  vkp__frame_t *f = stop ? NULL : vkp__frame_get(p, seq);
  pthread_mutex_unlock(&p->mu);
  return f;
}

// Frame `seq` is done at `st` at `t_done`: fails it with `err` (taken),
// counts the busy time from its submit (or the stage's last completion)
// when `busy`, traces it (`failed`), publishes its outputs when `publish`
// (else they were published at submit) and completes it.
static void vkp__completer_done(vkp_pipeline_t *p, vkp__stage_t *st, uint64_t seq,
                                uint64_t t_done, vkp_status_t err, bool failed, bool busy,
                                bool publish) {
  pthread_mutex_lock(&p->mu);
  if (err) vkp__frame_fail(p, seq, vkp__stage_error(st, seq, err));
  uint64_t started = st->submit_ns[seq % ((uint64_t)p->depth + 1)];
  if (started < st->last_complete_ns) started = st->last_complete_ns;
  if (busy) st->stats.busy_ns += t_done > started ? t_done - started : 0;
  vkp__trace_record(p, st->index, seq, started, t_done, failed);
  st->last_complete_ns = t_done;
  if (publish) vkp__stage_publish(p, st, seq);
  vkp__stage_complete(p, st, seq);
  pthread_mutex_unlock(&p->mu);
}

// Lock invariants of the loop: mu is held to read `submitted`, the frame
// record and to complete; dropped while waiting for the semaphore and while
// copying global outputs out of the staging slot (which stays this stage's
// until it completes the frame: the submitter reuses it only after
// `completed` passes seq).
static void *vkp__device_completer(void *arg) {
  vkp__stage_t *st = arg;
  vkp_pipeline_t *p = st->pipeline;
  VKP__ALLOCATOR_SCOPE(&p->allocator);  // the pipeline's, on its threads too
  size_t n_out = (size_t)st->n_outputs;
  for (uint64_t seq = 1;; ++seq) {
    vkp__frame_t *f = vkp__completer_wait(p, st, seq, false);
    if (!f) break;
    vkp_status_t err = vkp__wait_point(p, st->target, st->semaphore, seq);
    if (vkp_status_is(err, VKP_STATUS_CANCELLED)) {
      vkp_status_free(err);
      break;
    }
    uint64_t t_done = vkp__now_ns();
    pthread_mutex_lock(&p->mu);
    bool ok = !err && !f->status;
    pthread_mutex_unlock(&p->mu);
    size_t slot = (size_t)(seq % (uint64_t)p->depth);
    for (size_t o = 0; ok && o < n_out; ++o) {
      const vkp__stage_output_t *out = &st->outputs[o];
      const vkp_tensor_t *src = &st->out_views[slot * n_out + o];
      for (int32_t k = 0; k < out->n_globals; ++k)
        memcpy(f->outputs[out->globals[k]].data, src->data,
               vkp_tensor_nbytes(src));
    }
    vkp__completer_done(p, st, seq, t_done, err, !ok, true, false);
  }
  return NULL;
}

// ---------------------------------------------------------------------------
// Stages on another MPI rank

// Lock invariants: as for host stages. The poster sends frame seq as soon as
// its inputs are available and its slots free (up to `depth` frames ahead of
// the completer), so the serving rank gets the next frame while it runs this
// one; the completer takes the replies in order and finishes the frames.
// A frame's slot (its input and output slots and the proxy's slot state)
// is the poster's until it submits, then the completer's until it completes.
static void *vkp__remote_poster(void *arg) {
  vkp__stage_t *st = arg;
  vkp_pipeline_t *p = st->pipeline;
  VKP__ALLOCATOR_SCOPE(&p->allocator);  // the pipeline's, on its threads too
  size_t n_in = (size_t)st->n_inputs, n_out = (size_t)st->n_outputs;
  for (uint64_t seq = 1;; ++seq) {
    vkp__frame_t *f = NULL;
    bool skip = false;
    vkp_status_t err = NULL;
    if (!vkp__host_side_start(p, st, seq, &f, &skip, &err)) break;
    size_t slot = (size_t)(seq % (uint64_t)p->depth);
    vkp_tensor_t *outs = st->slot_outputs + slot * n_out;
    vkp__frame_outputs_bind(p, st, f, slot, outs, 0);
    // The stage's rank hears of every frame, skipped ones too.
    vkp__mpi_proxy_frame(st->loaded, seq, !skip && !err);
    uint64_t t_post = vkp__now_ns();
    if (!skip && !err)
      err = vkp__mpi_proxy_post(st->loaded, seq, (int32_t)slot, st->in_views + slot * n_in,
                                outs);
    pthread_mutex_lock(&p->mu);
    st->slot_error[slot] = err;
    st->slot_skip[slot] = skip;
    st->submit_ns[seq % ((uint64_t)p->depth + 1)] = t_post;
    st->submitted = seq;
    atomic_store(&st->posted, seq);
    pthread_cond_signal(&st->cv_submitted);
    pthread_mutex_unlock(&p->mu);
  }
  return NULL;
}

// Finishes every frame the poster submitted, in order, also after a
// shutdown: the serving rank answers each one, and its replies must not be
// left for a later pipeline to take.
static void *vkp__remote_completer(void *arg) {
  vkp__stage_t *st = arg;
  vkp_pipeline_t *p = st->pipeline;
  VKP__ALLOCATOR_SCOPE(&p->allocator);  // the pipeline's, on its threads too
  size_t n_out = (size_t)st->n_outputs;
  uint64_t spin_ns = vkp__mpi_spin_ns(st->loaded);
  for (uint64_t seq = 1;; ++seq) {
    // As long as an MPI wait would test before it sleeps, look for the next
    // frame before sleeping on the condition variable: a wake-up there costs
    // more than a hop on an idle host.
    for (uint64_t t0 = vkp__now_ns();
         atomic_load(&st->posted) < seq && !atomic_load(&p->shutdown) &&
         vkp__now_ns() - t0 < spin_ns;)
      sched_yield();
    vkp__frame_t *f = vkp__completer_wait(p, st, seq, true);
    if (!f) break;
    // The slot's record is the completer's once the frame is submitted.
    size_t slot = (size_t)(seq % (uint64_t)p->depth);
    pthread_mutex_lock(&p->mu);
    vkp_status_t err = st->slot_error[slot];
    st->slot_error[slot] = NULL;
    bool skip = st->slot_skip[slot];
    pthread_mutex_unlock(&p->mu);

    vkp_tensor_t *outs = st->slot_outputs + slot * n_out;
    if (!skip && !err) err = vkp__mpi_proxy_finish(st->loaded, (int32_t)slot, outs);
    if (!skip && !err) vkp__frame_outputs_done(p, st, f, slot, outs);
    err = vkp__signal_device_consumers(p, st, seq, err);
    vkp__completer_done(p, st, seq, vkp__now_ns(), err, skip || err, !skip, true);
  }
  return NULL;
}

// How long waiters poll before they sleep (vkp__spin). A poll only pays
// where the threads that poll have cores of their own: the stages' workers
// and the caller (run, get_output) when the stages' threads (a remote
// stage's proxy: one) fit in the cores this process may use (a small
// encoder block's two one-thread stages on two cores: 19.7k frames/s with
// no poll, 25.5k with both; SqueezeNet's: the same either way). Not with a
// device stage: a software device (lavapipe) computes on the same cores
// with threads of its own that the count cannot see. On rank 0 of an MPI
// job the cores are the rank's share (vkp__mpi_rank_cores), and the same
// test lets the remote stages' completers spin longer on MPI.
// VKPIPE_PIPELINE_SPIN_US sets the poll for both (0: never poll).
#define VKP__PIPELINE_SPIN_NS 50000u

static vkp_status_t vkp__spin_policy(vkp_pipeline_t *p) {
  int64_t demand = 0;
  bool device = false, remote = false;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    const vkp__stage_t *st = &p->stages[s];
    int32_t threads = st->plan_stage->threads > 1 ? st->plan_stage->threads : 1;
    demand += st->remote ? 1 : (int64_t)threads * st->n_copies;
    device |= st->device;
    remote |= st->remote;
  }
  // On rank 0 of an MPI job, the cores are its share of the node's.
  bool own_cores = !device && demand <= (remote ? vkp__mpi_rank_cores() : vkp__host_cores());
  for (int32_t s = 0; s < p->n_stages; ++s)
    if (p->stages[s].remote) vkp__mpi_proxy_set_spin(p->stages[s].loaded, own_cores);
  p->spin_ns = own_cores ? VKP__PIPELINE_SPIN_NS : 0;
  const char *env = getenv("VKPIPE_PIPELINE_SPIN_US");
  if (env) {
    char *end = NULL;
    errno = 0;
    unsigned long long us = strtoull(env, &end, 10);
    if (end == env || *end || errno || us > 1000000 || env[0] == '-')
      return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                             "VKPIPE_PIPELINE_SPIN_US='%s' is not a number of "
                             "microseconds in 0..1000000",
                             env);
    p->spin_ns = (uint64_t)us * 1000u;
  }
  return NULL;
}

vkp_status_t vkp__pipeline_start_workers(vkp_pipeline_t *p) {
  VKP_RETURN_IF_ERROR(vkp__spin_policy(p));
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    int rc = pthread_create(&st->worker, NULL,
                            st->device   ? vkp__device_submitter
                            : st->remote ? vkp__remote_poster
                                         : vkp__host_worker,
                            st->device || st->remote ? (void *)st : (void *)&st->copies[0]);
    if (rc)
      return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                             "cannot start the worker of stage '%s': %s",
                             st->plan_stage->name, strerror(rc));
    st->worker_started = true;
    for (int32_t c = 1; c < st->n_copies; ++c) {
      rc = pthread_create(&st->copies[c].thread, NULL, vkp__host_worker, &st->copies[c]);
      if (rc)
        return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                               "cannot start copy %d of stage '%s': %s", (int)c + 1,
                               st->plan_stage->name, strerror(rc));
      st->copies[c].started = true;
    }
    if (!st->device && !st->remote) continue;
    rc = pthread_create(&st->completer, NULL,
                        st->device ? vkp__device_completer : vkp__remote_completer, st);
    if (rc)
      return vkp_status_make(VKP_STATUS_UNAVAILABLE,
                             "cannot start the completer of stage '%s': %s",
                             st->plan_stage->name, strerror(rc));
    st->completer_started = true;
  }
  return NULL;
}
