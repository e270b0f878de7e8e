// SPDX-License-Identifier: Apache-2.0
// Pipeline executor: construction (stages, rings, staging memory, per-slot
// bindings), destruction, and the producer/consumer API. The stage workers
// live in worker.c.
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/status_macros.h"
#include "base/strmap.h"
#include "base/tensor_check.h"
#include "pipeline/pipeline_internal.h"

uint64_t vkp__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool vkp__spin(vkp_pipeline_t *p, uint64_t spin_ns, uint64_t *spin_from) {
  if (spin_ns == 0 || atomic_load(&p->shutdown)) return false;
  uint64_t now = vkp__now_ns();
  if (*spin_from == 0) *spin_from = now;
  if (now - *spin_from >= spin_ns) return false;
  uint_fast64_t seen = atomic_load_explicit(&p->events, memory_order_acquire);
  pthread_mutex_unlock(&p->mu);
  for (uint32_t i = 1;; ++i) {
    if (atomic_load_explicit(&p->events, memory_order_acquire) != seen) break;
    vkp__cpu_relax();
    if ((i & 63) == 0) {
      // Give the core to a runnable thread (another stage, the caller
      // feeding frames) rather than hold it polling.
      sched_yield();
      if (vkp__now_ns() - *spin_from >= spin_ns) break;
    }
  }
  pthread_mutex_lock(&p->mu);
  return true;
}

// ---------------------------------------------------------------------------
// Allocation and teardown

vkp_status_t vkp__pipeline_alloc(const vkp_plan_t *plan,
                                 const vkp_pipeline_options_t *options,
                                 vkp_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  vkp_pipeline_options_t defaults = {0};
  if (!options) options = &defaults;
  int32_t depth = options->ring_depth ? options->ring_depth
                                      : VKP_PIPELINE_DEFAULT_RING_DEPTH;
  // By default a replicated stage's copies all get a slot, and one more
  // keeps its producer going.
  for (int32_t s = 0; s < plan->n_stages && !options->ring_depth; ++s)
    if (plan->stages[s].replicas + 1 > depth)
      depth = plan->stages[s].replicas + 1 < VKP_PIPELINE_MAX_RING_DEPTH
                  ? plan->stages[s].replicas + 1
                  : VKP_PIPELINE_MAX_RING_DEPTH;
  if (depth < 1 || depth > VKP_PIPELINE_MAX_RING_DEPTH)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "ring depth %d out of range 1..%d", (int)depth,
                           VKP_PIPELINE_MAX_RING_DEPTH);
  if (plan->n_stages < 1)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "plan '%s' has no stages", plan->name);
  if (options->trace_capacity < 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                           "trace capacity %d is negative",
                           (int)options->trace_capacity);
  vkp_pipeline_t *p = vkp__calloc(1, sizeof(*p));
  if (!p) return VKP_OOM("pipeline");
  p->allocator = vkp__allocator_resolve(NULL);  // the creator made options' current
  p->plan = plan;
  p->depth = depth;
  p->sequential = options->sequential;
  p->n_stages = plan->n_stages;
  p->n_inputs = plan->n_inputs;
  p->n_outputs = plan->n_outputs;
  p->stages = vkp__calloc((size_t)p->n_stages, sizeof(*p->stages));
  p->input_ring = vkp__calloc((size_t)p->n_inputs + 1, sizeof(int32_t));
  p->input_set = vkp__calloc((size_t)p->n_inputs + 1, sizeof(bool));
  p->outputs = vkp__calloc((size_t)p->n_outputs + 1, sizeof(*p->outputs));
  if (options->trace_capacity > 0) {
    p->trace = vkp__calloc((size_t)options->trace_capacity, sizeof(*p->trace));
    p->trace_capacity = options->trace_capacity;
  }
  p->frames_mask = 63;
  p->frames = vkp__calloc(p->frames_mask + 1, sizeof(*p->frames));
  if (!p->stages || !p->input_ring || !p->input_set || !p->outputs ||
      !p->frames || (p->trace_capacity && !p->trace)) {
    vkp__free(p->stages);
    vkp__free(p->input_ring);
    vkp__free(p->input_set);
    vkp__free(p->outputs);
    vkp__free(p->frames);
    vkp__free(p->trace);
    vkp__free(p);
    return VKP_OOM("pipeline");
  }
  for (int32_t s = 0; s < p->n_stages; ++s) {
    p->stages[s].pipeline = p;
    p->stages[s].index = s;
    p->stages[s].plan_stage = &plan->stages[s];
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv_input_space, &ca);
  pthread_cond_init(&p->cv_result, &ca);
  for (int32_t s = 0; s < p->n_stages; ++s) {
    pthread_cond_init(&p->stages[s].cv_ready, &ca);
    pthread_cond_init(&p->stages[s].cv_space, &ca);
    pthread_cond_init(&p->stages[s].cv_submitted, &ca);
    pthread_cond_init(&p->stages[s].cv_handed, &ca);
  }
  pthread_condattr_destroy(&ca);
  atomic_init(&p->shutdown, false);
  atomic_init(&p->failed, false);
  atomic_init(&p->events, 0);
  p->latency_min_ns = UINT64_MAX;
  *out_pipeline = p;
  return NULL;
}

static void vkp__frame_free(vkp_pipeline_t *p, vkp__frame_t *f) {
  if (!f) return;
  vkp_status_free(f->status);
  if (f->outputs)
    for (int32_t i = 0; i < p->n_outputs; ++i) vkp_tensor_deinit(&f->outputs[i]);
  vkp__free(f->outputs);
  vkp__free(f);
}

// Waits (bounded) until every device stage's semaphore reached what was
// submitted, so no device work still touches staging memory being freed.
static void vkp__pipeline_quiesce_devices(vkp_pipeline_t *p) {
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    if (!st->device || !st->has_semaphore || st->submitted == 0) continue;
    vkp_status_t w = st->target->vtable->device->timeline_wait(
        st->target, st->semaphore, st->submitted, /*timeout_ns=*/2000000000u);
    vkp_status_free(w);  // a lost device or a timeout: nothing more to do
  }
}

void vkp_pipeline_destroy(vkp_pipeline_t *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->shutdown, true);
  vkp__events_bump(p);
  pthread_cond_broadcast(&p->cv_input_space);
  pthread_cond_broadcast(&p->cv_result);
  for (int32_t s = 0; s < p->n_stages; ++s) {
    pthread_cond_broadcast(&p->stages[s].cv_ready);
    pthread_cond_broadcast(&p->stages[s].cv_space);
    pthread_cond_broadcast(&p->stages[s].cv_submitted);
    pthread_cond_broadcast(&p->stages[s].cv_handed);
  }
  pthread_mutex_unlock(&p->mu);
  for (int32_t s = 0; s < p->n_stages; ++s) {
    if (p->stages[s].worker_started) pthread_join(p->stages[s].worker, NULL);
    for (int32_t c = 1; c < p->stages[s].n_copies; ++c)
      if (p->stages[s].copies[c].started) pthread_join(p->stages[s].copies[c].thread, NULL);
    if (p->stages[s].completer_started)
      pthread_join(p->stages[s].completer, NULL);
  }
  vkp__pipeline_quiesce_devices(p);
  if (vkp__plan_has_ranks(p->plan)) vkp__mpi_stop(p);
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    for (int32_t c = 0; st->copies && c < st->n_copies; ++c) {
      if (c > 0 && st->copies[c].loaded) st->target->vtable->stage.unload(st->copies[c].loaded);
      vkp__free(st->copies[c].frame_outputs);
    }
    vkp__free(st->copies);
    if (st->loaded) st->target->vtable->stage.unload(st->loaded);
    if (st->has_semaphore)
      st->target->vtable->device->timeline_destroy(st->target, st->semaphore);
    vkp_blob_deinit(&st->blob);
    for (int32_t o = 0; st->outputs && o < st->n_outputs; ++o) {
      vkp__free(st->outputs[o].globals);
      vkp__free(st->outputs[o].scratch);
    }
    vkp__free(st->outputs);
    vkp__free(st->inputs);
    vkp__free(st->in_views);
    vkp__free(st->out_views);
    vkp__free(st->bind_in);
    vkp__free(st->bind_out);
    vkp__free(st->waits);
    vkp__free(st->submit_ns);
    for (int32_t k = 0; st->slot_error && k < p->depth; ++k) vkp_status_free(st->slot_error[k]);
    vkp__free(st->slot_error);
    vkp__free(st->slot_skip);
    vkp__free(st->slot_outputs);
    pthread_cond_destroy(&st->cv_ready);
    pthread_cond_destroy(&st->cv_space);
    pthread_cond_destroy(&st->cv_submitted);
    pthread_cond_destroy(&st->cv_handed);
  }
  for (int32_t r = 0; r < p->n_rings; ++r) {
    vkp__ring_t *ring = &p->rings[r];
    for (int32_t k = 0; ring->slots && k < p->depth; ++k) {
      if (ring->device_target) {
        if (ring->staging && ring->staging[k].host)
          ring->device_target->vtable->device->staging_free(ring->device_target,
                                                    &ring->staging[k]);
      } else {
        vkp__free(ring->slots[k]);
      }
    }
    if (ring->has_host_semaphore)
      ring->device_target->vtable->device->timeline_destroy(ring->device_target,
                                                    ring->host_semaphore);
    vkp__free(ring->slots);
    vkp__free(ring->slot_shapes);
    vkp__free(ring->staging);
    vkp__free(ring->consumers);
    vkp__free(ring->released);
    vkp__free(ring->name);
  }
  vkp__free(p->rings);
  for (uint64_t seq = p->taken + 1; seq <= p->launched; ++seq)
    vkp__frame_free(p, p->frames[seq & p->frames_mask]);
  vkp__free(p->frames);
  vkp__free(p->trace);
  vkp__free(p->stages);
  vkp__free(p->input_ring);
  vkp__free(p->input_set);
  vkp__free(p->outputs);
  vkp__free(p->failed_message);
  pthread_cond_destroy(&p->cv_input_space);
  pthread_cond_destroy(&p->cv_result);
  pthread_mutex_destroy(&p->mu);
  vkp_plan_destroy(p->owned_plan);
  vkp__free(p);
}

// ---------------------------------------------------------------------------
// Building the rings

// The ring carrying (src_stage, src_index), created on first use.
static vkp_status_t vkp__ring_for(vkp_pipeline_t *p, int32_t src_stage,
                                  int32_t src_index, int32_t *out_ring) {
  for (int32_t r = 0; r < p->n_rings; ++r) {
    if (p->rings[r].src_stage == src_stage &&
        p->rings[r].src_index == src_index) {
      *out_ring = r;
      return NULL;
    }
  }
  vkp__ring_t *rings =
      vkp__reallocarray(p->rings, (size_t)p->n_rings + 1, sizeof(*rings));
  if (!rings) return VKP_OOM("pipeline rings");
  p->rings = rings;
  vkp__ring_t *ring = &p->rings[p->n_rings];
  memset(ring, 0, sizeof(*ring));
  ring->src_stage = src_stage;
  ring->src_index = src_index;
  if (src_stage == VKP_PLAN_GLOBAL) {
    ring->name = vkp__strdup(p->plan->inputs[src_index]);
  } else {
    const vkp_graph_t *g = p->plan->stages[src_stage].graph;
    const vkp_value_t *v = &g->values[g->outputs[src_index]];
    ring->name = vkp__asprintf("%s.%s", p->plan->stages[src_stage].name,
                               v->name);
    ring->dtype = v->dtype;
    ring->rank = v->rank;
    memcpy(ring->shape, v->shape, sizeof ring->shape);
  }
  if (!ring->name) return VKP_OOM("ring name");
  *out_ring = p->n_rings++;
  return NULL;
}

static vkp_status_t vkp__ring_add_consumer(vkp__ring_t *ring, int32_t stage,
                                           int32_t *out_consumer) {
  for (int32_t c = 0; c < ring->n_consumers; ++c) {
    if (ring->consumers[c] == stage) {
      *out_consumer = c;
      return NULL;
    }
  }
  int32_t *grown = vkp__reallocarray(ring->consumers,
                                     (size_t)ring->n_consumers + 1,
                                     sizeof(int32_t));
  if (!grown) return VKP_OOM("ring consumers");
  ring->consumers = grown;
  ring->consumers[ring->n_consumers] = stage;
  *out_consumer = ring->n_consumers++;
  return NULL;
}

// Connects every stage input to a ring and every stage output to its ring,
// global outputs or scratch memory.
static vkp_status_t vkp__pipeline_connect(vkp_pipeline_t *p) {
  const vkp_plan_t *plan = p->plan;
  for (int32_t i = 0; i < p->n_inputs; ++i) p->input_ring[i] = -1;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    const vkp_graph_t *g = st->plan_stage->graph;
    st->n_inputs = g->n_inputs;
    st->n_outputs = g->n_outputs;
    st->inputs = vkp__calloc((size_t)g->n_inputs + 1, sizeof(*st->inputs));
    st->outputs = vkp__calloc((size_t)g->n_outputs + 1, sizeof(*st->outputs));
    if (!st->inputs || !st->outputs) return VKP_OOM("stage bindings");
    for (int32_t o = 0; o < st->n_outputs; ++o) st->outputs[o].ring = -1;
    for (int32_t i = 0; i < st->n_inputs; ++i) st->inputs[i].ring = -1;
  }
  for (int32_t b = 0; b < plan->n_bindings; ++b) {
    const vkp_plan_binding_t *bind = &plan->bindings[b];
    int32_t src_index;
    if (bind->src_stage == VKP_PLAN_GLOBAL) {
      src_index = vkp__strlist_index(plan->inputs, plan->n_inputs, bind->src_name);
    } else {
      src_index = vkp_graph_find_output(plan->stages[bind->src_stage].graph,
                                        bind->src_name);
    }
    if (src_index < 0)
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "binding source '%s' not found", bind->src_name);
    if (bind->dst_stage == VKP_PLAN_GLOBAL) {
      if (bind->src_stage == VKP_PLAN_GLOBAL)
        return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                               "global input '%s' bound straight to a global "
                               "output", bind->src_name);
      int32_t g = vkp__strlist_index(plan->outputs, plan->n_outputs, bind->dst_name);
      if (g < 0)
        return vkp_status_make(VKP_STATUS_INTERNAL,
                               "global output '%s' not found", bind->dst_name);
      vkp__stage_output_t *out = &p->stages[bind->src_stage].outputs[src_index];
      int32_t *grown = vkp__reallocarray(out->globals, (size_t)out->n_globals + 1,
                                         sizeof(int32_t));
      if (!grown) return VKP_OOM("stage output bindings");
      out->globals = grown;
      out->globals[out->n_globals++] = g;
      const vkp_graph_t *sg = plan->stages[bind->src_stage].graph;
      const vkp_value_t *v = &sg->values[sg->outputs[src_index]];
      p->outputs[g].src_stage = bind->src_stage;
      p->outputs[g].src_output = src_index;
      p->outputs[g].dtype = v->dtype;
      p->outputs[g].rank = v->rank;
      memcpy(p->outputs[g].shape, v->shape, sizeof v->shape);
      continue;
    }
    vkp__stage_t *dst = &p->stages[bind->dst_stage];
    int32_t dst_index = vkp_graph_find_input(dst->plan_stage->graph, bind->dst_name);
    if (dst_index < 0)
      return vkp_status_make(VKP_STATUS_INTERNAL,
                             "binding destination '%s' not found",
                             bind->dst_name);
    int32_t r;
    VKP_RETURN_IF_ERROR(vkp__ring_for(p, bind->src_stage, src_index, &r));
    vkp__ring_t *ring = &p->rings[r];
    if (bind->src_stage == VKP_PLAN_GLOBAL) {
      const vkp_graph_t *dg = dst->plan_stage->graph;
      const vkp_value_t *v = &dg->values[dg->inputs[dst_index]];
      ring->dtype = v->dtype;
      ring->rank = v->rank;
      memcpy(ring->shape, v->shape, sizeof ring->shape);
      p->input_ring[src_index] = r;
    } else {
      p->stages[bind->src_stage].outputs[src_index].ring = r;
    }
    dst->inputs[dst_index].ring = r;
    VKP_RETURN_IF_ERROR(vkp__ring_add_consumer(ring, bind->dst_stage,
                                               &dst->inputs[dst_index].consumer));
  }
  // A device stage writes every output into staging slots: give each output
  // without consumer stages a ring of its own.
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    for (int32_t i = 0; i < st->n_inputs; ++i)
      if (st->inputs[i].ring < 0)
        return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT,
                               "stage '%s' input %d is not bound",
                               st->plan_stage->name, (int)i);
    for (int32_t o = 0; o < st->n_outputs; ++o) {
      if (st->outputs[o].ring >= 0) continue;
      if (st->device) {
        VKP_RETURN_IF_ERROR(vkp__ring_for(p, s, o, &st->outputs[o].ring));
      } else if (st->outputs[o].n_globals == 0) {
        const vkp_graph_t *g = st->plan_stage->graph;
        const vkp_value_t *v = &g->values[g->outputs[o]];
        size_t bytes = 0;
        if (!vkp_shape_numel(v->rank, v->shape, vkp_dtype_size(v->dtype), &bytes))
          return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                                 "stage '%s' output '%s' is too large",
                                 st->plan_stage->name, v->name);
        // One region per copy: the copies of a replicated stage run at once.
        size_t copies = st->n_copies > 1 ? (size_t)st->n_copies : 1;
        st->outputs[o].scratch_bytes = bytes;
        st->outputs[o].scratch = vkp__calloc(copies, bytes ? bytes : 1);
        if (!st->outputs[o].scratch) return VKP_OOM("stage scratch output");
      }
    }
  }
  return NULL;
}

// Allocates slot memory for every ring: staging memory of the device target
// that touches it, host memory otherwise.
static vkp_status_t vkp__pipeline_alloc_slots(vkp_pipeline_t *p) {
  for (int32_t r = 0; r < p->n_rings; ++r) {
    vkp__ring_t *ring = &p->rings[r];
    if (!vkp_shape_numel(ring->rank, ring->shape, vkp_dtype_size(ring->dtype),
                         &ring->nbytes))
      return vkp_status_make(VKP_STATUS_OUT_OF_RANGE,
                             "binding '%s' is too large", ring->name);
    const vkp_target_t *dev = NULL;
    bool host_producer = true;
    if (ring->src_stage != VKP_PLAN_GLOBAL && p->stages[ring->src_stage].device) {
      dev = p->stages[ring->src_stage].target;
      host_producer = false;
    }
    bool device_consumer = false;
    for (int32_t c = 0; c < ring->n_consumers; ++c) {
      const vkp__stage_t *cs = &p->stages[ring->consumers[c]];
      if (!cs->device) continue;
      device_consumer = true;
      if (!dev) dev = cs->target;
      if (cs->target != dev)
        return vkp_status_make(
            VKP_STATUS_UNSUPPORTED,
            "binding '%s' joins stages on two device targets ('%s' and '%s')",
            ring->name, dev->vtable->name, cs->target->vtable->name);
    }
    ring->released = vkp__calloc((size_t)ring->n_consumers + 1, sizeof(uint64_t));
    ring->slots = vkp__calloc((size_t)p->depth, sizeof(void *));
    ring->slot_shapes = vkp__calloc((size_t)p->depth, sizeof(*ring->slot_shapes));
    if (!ring->released || !ring->slots || !ring->slot_shapes) return VKP_OOM("ring");
    for (int32_t k = 0; k < p->depth; ++k)
      memcpy(ring->slot_shapes[k], ring->shape, sizeof ring->shape);
    ring->device_target = dev;
    if (dev) {
      ring->staging = vkp__calloc((size_t)p->depth, sizeof(vkp_staging_t));
      if (!ring->staging) return VKP_OOM("ring staging");
      for (int32_t k = 0; k < p->depth; ++k) {
        VKP_RETURN_IF_ERROR(vkp_status_annotate(
            dev->vtable->device->staging_alloc(dev, ring->nbytes ? ring->nbytes : 1,
                                       &ring->staging[k]),
            "staging slot %d of binding '%s'", (int)k, ring->name));
        ring->slots[k] = ring->staging[k].host;
      }
      if (host_producer && ring->src_stage != VKP_PLAN_GLOBAL && device_consumer) {
        VKP_RETURN_IF_ERROR(vkp_status_annotate(
            dev->vtable->device->timeline_create(dev, &ring->host_semaphore),
            "timeline semaphore of binding '%s'", ring->name));
        ring->has_host_semaphore = true;
      }
    } else {
      for (int32_t k = 0; k < p->depth; ++k) {
        ring->slots[k] = vkp__calloc(1, ring->nbytes ? ring->nbytes : 1);
        if (!ring->slots[k]) return VKP_OOM("ring slot");
      }
    }
  }
  return NULL;
}

// Per-slot tensor views of every stage, and the device stages' recordings.
static vkp_status_t vkp__pipeline_bind_stages(vkp_pipeline_t *p) {
  size_t depth = (size_t)p->depth;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    st->in_views = vkp__calloc(depth * (size_t)st->n_inputs + 1,
                               sizeof(vkp_tensor_t));
    st->out_views = vkp__calloc(depth * (size_t)st->n_outputs + 1,
                                sizeof(vkp_tensor_t));
    if (!st->in_views || !st->out_views)
      return VKP_OOM("stage slot views");
    for (size_t k = 0; k < depth; ++k) {
      for (int32_t i = 0; i < st->n_inputs; ++i) {
        const vkp__ring_t *ring = &p->rings[st->inputs[i].ring];
        VKP_RETURN_IF_ERROR(vkp_tensor_init_view(
            &st->in_views[k * (size_t)st->n_inputs + (size_t)i], ring->dtype,
            ring->rank, ring->shape, ring->slots[k]));
      }
      for (int32_t o = 0; o < st->n_outputs; ++o) {
        if (st->outputs[o].ring < 0) continue;
        const vkp__ring_t *ring = &p->rings[st->outputs[o].ring];
        VKP_RETURN_IF_ERROR(vkp_tensor_init_view(
            &st->out_views[k * (size_t)st->n_outputs + (size_t)o], ring->dtype,
            ring->rank, ring->shape, ring->slots[k]));
      }
    }
    if (st->remote) {
      st->submit_ns = vkp__calloc(depth + 1, sizeof(uint64_t));
      st->slot_outputs = vkp__calloc(depth * (size_t)st->n_outputs + 1, sizeof(vkp_tensor_t));
      st->slot_error = vkp__calloc(depth, sizeof(vkp_status_t));
      st->slot_skip = vkp__calloc(depth, sizeof(bool));
      if (!st->submit_ns || !st->slot_outputs || !st->slot_error || !st->slot_skip)
        return VKP_OOM("remote stage slots");
    }
    if (!st->device) continue;
    st->submit_ns = vkp__calloc(depth + 1, sizeof(uint64_t));
    st->bind_in = vkp__calloc(depth * (size_t)st->n_inputs + 1,
                              sizeof(vkp_staging_t));
    st->bind_out = vkp__calloc(depth * (size_t)st->n_outputs + 1,
                               sizeof(vkp_staging_t));
    st->waits = vkp__calloc((size_t)st->n_inputs + 1, sizeof(vkp_timeline_point_t));
    if (!st->submit_ns || !st->bind_in || !st->bind_out || !st->waits)
      return VKP_OOM("stage slot bindings");
    for (size_t k = 0; k < depth; ++k) {
      for (int32_t i = 0; i < st->n_inputs; ++i)
        st->bind_in[k * (size_t)st->n_inputs + (size_t)i] =
            p->rings[st->inputs[i].ring].staging[k];
      for (int32_t o = 0; o < st->n_outputs; ++o)
        st->bind_out[k * (size_t)st->n_outputs + (size_t)o] =
            p->rings[st->outputs[o].ring].staging[k];
    }
    VKP_RETURN_IF_ERROR(vkp_status_annotate(
        st->target->vtable->device->bind_slots(st->loaded, p->depth, st->bind_in,
                                       st->bind_out),
        "binding the staging slots of stage '%s'", st->plan_stage->name));
    VKP_RETURN_IF_ERROR(vkp_status_annotate(
        st->target->vtable->device->timeline_create(st->target, &st->semaphore),
        "timeline semaphore of stage '%s'", st->plan_stage->name));
    st->has_semaphore = true;
  }
  return NULL;
}

// Every host stage's copies (one unless the create loaded replicas): which
// instance each runs and its per-frame output views.
static vkp_status_t vkp__pipeline_copies(vkp_pipeline_t *p) {
  for (int32_t s = 0; s < p->n_stages; ++s) {
    vkp__stage_t *st = &p->stages[s];
    if (st->device || st->remote) continue;
    if (!st->copies) {
      st->copies = vkp__calloc(1, sizeof(vkp__copy_t));
      if (!st->copies) return VKP_OOM("stage copies");
      st->n_copies = 1;
    }
    st->copies[0].loaded = st->loaded;
    for (int32_t c = 0; c < st->n_copies; ++c) {
      st->copies[c].stage = st;
      st->copies[c].index = c;
      st->copies[c].frame_outputs =
          vkp__calloc((size_t)st->n_outputs + 1, sizeof(vkp_tensor_t));
      if (!st->copies[c].frame_outputs) return VKP_OOM("stage copy outputs");
    }
  }
  return NULL;
}

vkp_status_t vkp__pipeline_build(vkp_pipeline_t *p) {
  for (int32_t s = 0; s < p->n_stages; ++s)
    // Declared, and checked at registration to come with a complete device
    // part: async submit, host-visible staging and timeline export.
    p->stages[s].device = vkp_target_is_device(p->stages[s].target);
  for (int32_t s = 0; s < p->n_stages; ++s) p->stages[s].remote = p->plan->stages[s].rank != 0;
  VKP_RETURN_IF_ERROR(vkp__pipeline_connect(p));
  VKP_RETURN_IF_ERROR(vkp__pipeline_alloc_slots(p));
  VKP_RETURN_IF_ERROR(vkp__pipeline_bind_stages(p));
  VKP_RETURN_IF_ERROR(vkp__pipeline_copies(p));
  return vkp__pipeline_start_workers(p);
}

// ---------------------------------------------------------------------------
// Creation

// Loads copies 1..n-1 of host stage `stage` (plan "replicas") from its
// blob; copy 0 is the stage's own instance.
static vkp_status_t vkp__load_copies(vkp__stage_t *stage, int32_t n) {
  if (vkp_target_is_device(stage->target))
    return vkp_status_make(VKP_STATUS_UNSUPPORTED,
                           "%d replicas: only stages on host targets run as copies (a "
                           "device stage keeps its frames on its own queue)",
                           (int)n);
  stage->copies = vkp__calloc((size_t)n, sizeof(vkp__copy_t));
  if (!stage->copies) return VKP_OOM("stage copies");
  stage->n_copies = n;
  for (int32_t c = 1; c < n; ++c)
    VKP_RETURN_IF_ERROR(vkp_status_annotate(
        stage->target->vtable->stage.load(stage->target, stage->plan_stage->graph,
                                          stage->blob.data, stage->blob.size,
                                          &stage->copies[c].loaded),
        "copy %d of %d", (int)c + 1, (int)n));
  return NULL;
}

static vkp_status_t vkp__pipeline_create_impl(const vkp_plan_t *plan,
                                              const vkp_registry_t *registry,
                                              const vkp_blob_t *blobs,
                                              const vkp_pipeline_options_t *options,
                                              vkp_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  const vkp_allocator_t *allocator = options ? options->allocator : NULL;
  VKP_RETURN_IF_ERROR(vkp__allocator_check(allocator, "pipeline"));
  VKP__ALLOCATOR_SCOPE(allocator);
  VKP_RETURN_IF_ERROR(vkp_plan_validate(plan));
  vkp_pipeline_t *p = NULL;
  VKP_RETURN_IF_ERROR(vkp__pipeline_alloc(plan, options, &p));
  vkp_status_t st = NULL;
  for (int32_t s = 0; s < p->n_stages && !st; ++s) {
    vkp__stage_t *stage = &p->stages[s];
    const vkp_plan_stage_t *ps = &plan->stages[s];
    if (ps->rank != 0) {
      // Placed on another MPI rank: compiled and loaded there.
      st = vkp__mpi_proxy_load(plan, s, p->depth, &stage->target, &stage->loaded);
      if (st)
        st = vkp_status_annotate(st, "stage '%s' (target '%s', rank %d)",
                                 ps->name, ps->target, (int)ps->rank);
      continue;
    }
    st = vkp_registry_lookup(registry, ps->target, &stage->target);
    if (!st && blobs) {
      st = vkp_blob_alloc(&stage->blob, blobs[s].size);
      if (!st && blobs[s].size) memcpy(stage->blob.data, blobs[s].data, blobs[s].size);
    } else if (!st) {
      vkp_compile_options_t copts = {0};
      if (options && options->stage_compile_options)
        copts = options->stage_compile_options[s];
      if (copts.threads == 0) copts.threads = ps->threads;
      if (copts.precision == VKP_PRECISION_FP32) copts.precision = ps->precision;
      if (!copts.cpu_affinity) {
        copts.cpu_affinity = ps->cpu_affinity;
        copts.n_cpu_affinity = ps->n_cpu_affinity;
      }
      st = vkp_target_check_graph(stage->target, ps->graph);
      if (!st)
        st = stage->target->vtable->compiler.compile(stage->target, ps->graph, &copts,
                                            &stage->blob);
    }
    if (!st)
      st = stage->target->vtable->stage.load(stage->target, ps->graph,
                                       stage->blob.data, stage->blob.size,
                                       &stage->loaded);
    if (!st && ps->replicas > 1) st = vkp__load_copies(stage, ps->replicas);
    if (st)
      st = vkp_status_annotate(st, "stage '%s' (target '%s')", ps->name,
                               ps->target);
  }
  if (!st) st = vkp__pipeline_build(p);
  if (st) {
    vkp_pipeline_destroy(p);
    return vkp_status_annotate(st, "creating pipeline '%s'", plan->name);
  }
  *out_pipeline = p;
  return NULL;
}

vkp_status_t vkp_pipeline_create(const vkp_plan_t *plan,
                                 const vkp_registry_t *registry,
                                 const vkp_pipeline_options_t *options,
                                 vkp_pipeline_t **out_pipeline) {
  return vkp__pipeline_create_impl(plan, registry, NULL, options, out_pipeline);
}

vkp_status_t vkp_pipeline_create_from_blobs(
    const vkp_plan_t *plan, const vkp_registry_t *registry,
    const vkp_blob_t *blobs, const vkp_pipeline_options_t *options,
    vkp_pipeline_t **out_pipeline) {
  if (!blobs) {
    *out_pipeline = NULL;
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "no stage blobs given");
  }
  return vkp__pipeline_create_impl(plan, registry, blobs, options, out_pipeline);
}

// ---------------------------------------------------------------------------
// Names

int32_t vkp_pipeline_input_count(const vkp_pipeline_t *p) { return p->n_inputs; }
const char *vkp_pipeline_input_name(const vkp_pipeline_t *p, int32_t i) {
  return i >= 0 && i < p->n_inputs ? p->plan->inputs[i] : NULL;
}
int32_t vkp_pipeline_output_count(const vkp_pipeline_t *p) { return p->n_outputs; }
const char *vkp_pipeline_output_name(const vkp_pipeline_t *p, int32_t i) {
  return i >= 0 && i < p->n_outputs ? p->plan->outputs[i] : NULL;
}

// ---------------------------------------------------------------------------
// Frames

vkp__frame_t *vkp__frame_get(vkp_pipeline_t *p, uint64_t seq) {
  return p->frames[seq & p->frames_mask];
}

void vkp__frame_fail(vkp_pipeline_t *p, uint64_t seq, vkp_status_t status) {
  if (!status) return;
  if (vkp_status_is(status, VKP_STATUS_DEVICE_LOST) && !atomic_load(&p->failed)) {
    atomic_store(&p->failed, true);
    p->failed_message = vkp__strdup(vkp_status_message(status));
  }
  vkp__frame_t *f = vkp__frame_get(p, seq);
  if (f && !f->status) {
    f->status = status;
  } else {
    vkp_status_free(status);
  }
}

// Makes room in the frame table for one more frame; call with mu held.
static vkp_status_t vkp__frames_reserve(vkp_pipeline_t *p) {
  uint64_t cap = p->frames_mask + 1;
  if (p->launched + 1 - p->taken <= cap) return NULL;
  uint64_t new_cap = cap * 2;
  vkp__frame_t **grown = vkp__calloc((size_t)new_cap, sizeof(*grown));
  if (!grown) return VKP_OOM("frame table");
  for (uint64_t seq = p->taken + 1; seq <= p->launched; ++seq)
    grown[seq & (new_cap - 1)] = p->frames[seq & p->frames_mask];
  vkp__free(p->frames);
  p->frames = grown;
  p->frames_mask = new_cap - 1;
  return NULL;
}

static vkp_status_t vkp__frame_create(vkp_pipeline_t *p, vkp__frame_t **out) {
  *out = NULL;
  vkp__frame_t *f = vkp__calloc(1, sizeof(*f));
  if (!f) return VKP_OOM("frame");
  f->outputs = vkp__calloc((size_t)p->n_outputs + 1, sizeof(vkp_tensor_t));
  if (!f->outputs) {
    vkp__free(f);
    return VKP_OOM("frame outputs");
  }
  for (int32_t i = 0; i < p->n_outputs; ++i) {
    const vkp__global_output_t *g = &p->outputs[i];
    vkp_status_t st = vkp_tensor_init(&f->outputs[i], g->dtype, g->rank, g->shape);
    if (st) {
      vkp__frame_free(p, f);
      return st;
    }
  }
  f->stages_left = p->n_stages;
  *out = f;
  return NULL;
}

// ---------------------------------------------------------------------------
// Producer API

// The stage-graph input a global input's ring feeds (its first consumer's),
// for the bounded flag; NULL when none has one by that name.
static const vkp_value_t *vkp__global_input_value(const vkp_pipeline_t *p,
                                                  const vkp__ring_t *ring) {
  if (ring->n_consumers < 1) return NULL;
  const vkp_graph_t *g = p->stages[ring->consumers[0]].plan_stage->graph;
  int32_t v = g ? vkp_graph_find_value(g, ring->name) : -1;
  return v >= 0 ? &g->values[v] : NULL;
}

vkp_status_t vkp_pipeline_set_input(vkp_pipeline_t *p, const char *name,
                                    const vkp_tensor_t *tensor) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  int32_t i = name ? vkp__strlist_index(p->plan->inputs, p->n_inputs, name) : -1;
  if (i < 0)
    return vkp_status_make(VKP_STATUS_NOT_FOUND,
                           "pipeline '%s' has no input '%s'", p->plan->name,
                           name ? name : "(null)");
  int32_t r = p->input_ring[i];
  if (r >= 0) {
    vkp__ring_t *ring = &p->rings[r];
    // A bounded input (a dimension bound with up_to): any extent up to the
    // bound along its axis, stored compactly with its run-time shape.
    const vkp_value_t *bv = vkp__global_input_value(p, ring);
    size_t nbytes = ring->nbytes;
    if (bv && bv->bounded) {
      VKP_RETURN_IF_ERROR(vkp_value_check_tensor(bv, tensor, "input"));
      nbytes = vkp_tensor_nbytes(tensor);
    } else {
      VKP_RETURN_IF_ERROR(vkp__tensor_check_matches(tensor, "input", name, ring->dtype,
                                                    ring->rank, ring->shape));
    }
    // The slot of the next frame is free: run() returned only once it was.
    // Only the producer thread reads `launched` outside the lock.
    pthread_mutex_lock(&p->mu);
    uint64_t next = p->launched + 1;
    pthread_mutex_unlock(&p->mu);
    uint64_t slot = next % (uint64_t)p->depth;
    if (nbytes) memcpy(ring->slots[slot], tensor->data, nbytes);
    memcpy(ring->slot_shapes[slot], tensor->shape, sizeof ring->slot_shapes[slot]);
  }
  p->input_set[i] = true;
  return NULL;
}

// True when every input ring has a free slot for frame `seq`; mu held.
static bool vkp__input_slots_free(const vkp_pipeline_t *p, uint64_t seq) {
  for (int32_t i = 0; i < p->n_inputs; ++i) {
    if (p->input_ring[i] < 0) continue;
    const vkp__ring_t *ring = &p->rings[p->input_ring[i]];
    for (int32_t c = 0; c < ring->n_consumers; ++c)
      if (ring->released[c] + (uint64_t)p->depth < seq) return false;
  }
  return true;
}

static vkp_status_t vkp__failed_status(const vkp_pipeline_t *p) {
  return vkp_status_make(VKP_STATUS_DEVICE_LOST, "pipeline '%s' has failed: %s",
                         p->plan->name,
                         p->failed_message ? p->failed_message : "device lost");
}

vkp_status_t vkp_pipeline_run(vkp_pipeline_t *p, uint64_t *out_seq) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  if (out_seq) *out_seq = 0;
  for (int32_t i = 0; i < p->n_inputs; ++i)
    if (!p->input_set[i])
      return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                             "pipeline '%s': input '%s' was not set since the "
                             "last run",
                             p->plan->name, p->plan->inputs[i]);
  vkp__frame_t *frame = NULL;
  VKP_RETURN_IF_ERROR(vkp__frame_create(p, &frame));
  pthread_mutex_lock(&p->mu);
  vkp_status_t st = NULL;
  if (atomic_load(&p->shutdown))
    st = vkp_status_make(VKP_STATUS_CANCELLED, "pipeline is shutting down");
  else if (atomic_load(&p->failed))
    st = vkp__failed_status(p);
  else
    st = vkp__frames_reserve(p);
  if (st) {
    pthread_mutex_unlock(&p->mu);
    vkp__frame_free(p, frame);
    return st;
  }
  uint64_t seq = ++p->launched;
  frame->seq = seq;
  frame->run_ns = vkp__now_ns();
  p->frames[seq & p->frames_mask] = frame;
  for (int32_t i = 0; i < p->n_inputs; ++i) {
    p->input_set[i] = false;
    if (p->input_ring[i] < 0) continue;
    vkp__ring_t *ring = &p->rings[p->input_ring[i]];
    ring->available = seq;
    uint64_t oldest = seq;
    for (int32_t c = 0; c < ring->n_consumers; ++c)
      if (ring->released[c] < oldest) oldest = ring->released[c];
    if ((int32_t)(seq - oldest) > ring->peak_occupancy)
      ring->peak_occupancy = (int32_t)(seq - oldest);
  }
  vkp__events_bump(p);
  for (int32_t s = 0; s < p->n_stages; ++s)
    pthread_cond_broadcast(&p->stages[s].cv_ready);  // a stage's copies all wait
  // Keep the next frame's input slots free so that set_input never waits.
  uint64_t spin_from = 0;
  while (!atomic_load(&p->shutdown) && !vkp__input_slots_free(p, seq + 1))
    if (!vkp__spin(p, p->spin_ns, &spin_from))
      pthread_cond_wait(&p->cv_input_space, &p->mu);
  pthread_mutex_unlock(&p->mu);
  if (out_seq) *out_seq = seq;
  return NULL;
}

// ---------------------------------------------------------------------------
// Consumer API

void vkp_pipeline_result_deinit(vkp_pipeline_result_t *r) {
  if (!r) return;
  vkp_status_free(r->status);
  for (int32_t i = 0; r->outputs && i < r->n_outputs; ++i)
    vkp_tensor_deinit(&r->outputs[i]);
  vkp__free(r->outputs);
  memset(r, 0, sizeof(*r));
}

// Absolute CLOCK_MONOTONIC deadline `timeout_ns` from now.
static struct timespec vkp__deadline(uint64_t timeout_ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns % 1000000000u;
  ts.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
  ts.tv_nsec = (long)(ns % 1000000000u);
  return ts;
}

// Waits on `cv` until `*ready(p)` or the timeout; mu held. False on timeout.
static bool vkp__wait_until(vkp_pipeline_t *p, pthread_cond_t *cv,
                            bool (*ready)(const vkp_pipeline_t *),
                            uint64_t timeout_ns) {
  if (ready(p)) return true;
  if (timeout_ns == 0) return false;
  bool forever = timeout_ns == UINT64_MAX;
  struct timespec deadline = vkp__deadline(forever ? 0 : timeout_ns);
  // The poll stays within the caller's timeout.
  uint64_t spin_from = 0, spin_ns = p->spin_ns < timeout_ns ? p->spin_ns : timeout_ns;
  while (!ready(p)) {
    if (atomic_load(&p->shutdown)) return false;
    if (vkp__spin(p, spin_ns, &spin_from)) continue;
    if (forever) {
      pthread_cond_wait(cv, &p->mu);
    } else if (pthread_cond_timedwait(cv, &p->mu, &deadline) == ETIMEDOUT) {
      return ready(p);
    }
  }
  return true;
}

static bool vkp__result_ready(const vkp_pipeline_t *p) {
  return p->finished > p->taken;
}

static bool vkp__all_finished(const vkp_pipeline_t *p) {
  return p->finished >= p->launched;
}

vkp_status_t vkp_pipeline_get_output(vkp_pipeline_t *p, uint64_t timeout_ns,
                                     vkp_pipeline_result_t *out) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&p->mu);
  if (!vkp__wait_until(p, &p->cv_result, vkp__result_ready, timeout_ns)) {
    pthread_mutex_unlock(&p->mu);
    return vkp_status_make(VKP_STATUS_EMPTY, "no finished frame is ready");
  }
  uint64_t seq = ++p->taken;
  vkp__frame_t *f = p->frames[seq & p->frames_mask];
  p->frames[seq & p->frames_mask] = NULL;
  pthread_mutex_unlock(&p->mu);
  out->seq = seq;
  out->status = f->status;
  out->n_outputs = p->n_outputs;
  out->outputs = f->outputs;
  out->latency_ns = f->done_ns - f->run_ns;
  if (out->status)
    for (int32_t i = 0; i < p->n_outputs; ++i) vkp_tensor_deinit(&out->outputs[i]);
  vkp__free(f);
  return NULL;
}

vkp_status_t vkp_pipeline_drain(vkp_pipeline_t *p, uint64_t timeout_ns) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  pthread_mutex_lock(&p->mu);
  bool done = vkp__wait_until(p, &p->cv_result, vkp__all_finished, timeout_ns);
  pthread_mutex_unlock(&p->mu);
  return done ? NULL
              : vkp_status_make(VKP_STATUS_TIMEOUT,
                                "frames still in flight after the drain timeout");
}

vkp_status_t vkp_pipeline_infer(vkp_pipeline_t *p, const vkp_tensor_t *inputs,
                                vkp_tensor_t *outputs) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  for (int32_t i = 0; i < p->n_outputs; ++i) memset(&outputs[i], 0, sizeof(vkp_tensor_t));
  pthread_mutex_lock(&p->mu);
  bool idle = p->launched == p->taken;
  pthread_mutex_unlock(&p->mu);
  if (!idle)
    return vkp_status_make(VKP_STATUS_FAILED_PRECONDITION,
                           "infer needs a pipeline with no frames in flight or "
                           "uncollected");
  for (int32_t i = 0; i < p->n_inputs; ++i)
    VKP_RETURN_IF_ERROR(vkp_pipeline_set_input(p, p->plan->inputs[i], &inputs[i]));
  uint64_t seq = 0;
  VKP_RETURN_IF_ERROR(vkp_pipeline_run(p, &seq));
  vkp_pipeline_result_t res;
  VKP_RETURN_IF_ERROR(vkp_pipeline_get_output(p, UINT64_MAX, &res));
  if (res.status) {
    vkp_status_t st = res.status;
    res.status = NULL;
    vkp_pipeline_result_deinit(&res);
    return st;
  }
  for (int32_t i = 0; i < p->n_outputs; ++i) {
    outputs[i] = res.outputs[i];
    memset(&res.outputs[i], 0, sizeof(vkp_tensor_t));
  }
  vkp_pipeline_result_deinit(&res);
  return NULL;
}

// ---------------------------------------------------------------------------
// Stats

vkp_status_t vkp_pipeline_get_stats(vkp_pipeline_t *p, vkp_pipeline_stats_t *out) {
  VKP__ALLOCATOR_SCOPE(&p->allocator);
  memset(out, 0, sizeof(*out));
  out->stages = vkp__calloc((size_t)p->n_stages + 1, sizeof(*out->stages));
  out->bindings = vkp__calloc((size_t)p->n_rings + 1, sizeof(*out->bindings));
  if (!out->stages || !out->bindings) {
    vkp_pipeline_stats_deinit(out);
    return VKP_OOM("pipeline stats");
  }
  pthread_mutex_lock(&p->mu);
  out->n_stages = p->n_stages;
  for (int32_t s = 0; s < p->n_stages; ++s) {
    out->stages[s] = p->stages[s].stats;
    out->stages[s].name = p->stages[s].plan_stage->name;
    out->stages[s].target = p->stages[s].plan_stage->target;
  }
  out->n_bindings = p->n_rings;
  for (int32_t r = 0; r < p->n_rings; ++r) {
    out->bindings[r].name = p->rings[r].name;
    out->bindings[r].depth = p->depth;
    out->bindings[r].peak_occupancy = p->rings[r].peak_occupancy;
    out->bindings[r].device_memory = p->rings[r].device_target != NULL;
  }
  out->frames_run = p->launched;
  out->frames_finished = p->finished;
  out->frames_failed = p->frames_failed;
  out->latency_min_ns = p->finished ? p->latency_min_ns : 0;
  out->latency_max_ns = p->latency_max_ns;
  out->latency_sum_ns = p->latency_sum_ns;
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

void vkp_pipeline_stats_deinit(vkp_pipeline_stats_t *stats) {
  if (!stats) return;
  vkp__free(stats->stages);
  vkp__free(stats->bindings);
  memset(stats, 0, sizeof(*stats));
}

