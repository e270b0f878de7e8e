// SPDX-License-Identifier: Apache-2.0
#include "fakedev.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmath.h"

typedef struct fakedev_job_t {
  struct fakedev_stage_t *stage;
  int32_t slot;
  int32_t n_waits, n_signals;
  vkp_timeline_point_t waits[16];
  vkp_timeline_point_t signals[4];
  struct fakedev_job_t *next;
} fakedev_job_t;

typedef struct fakedev_t {
  fakedev_options_t options;
  pthread_mutex_t mu;
  pthread_cond_t cv;          // semaphore values, queue or state changed
  uint64_t *values;           // semaphore handle h -> values[h - 1]
  int32_t n_sems;
  fakedev_job_t *head, *tail;
  bool lost, stop;
  uint64_t violations, jobs;
  uint64_t rng;
  pthread_t thread;
} fakedev_t;

typedef struct fakedev_stage_t {
  vkp_stage_t base;
  const vkp_graph_t *graph;
  int32_t n_slots;
  vkp_tensor_t *in, *out;     // n_slots * n_inputs / n_outputs views
} fakedev_stage_t;

static fakedev_t *dev_of(const vkp_target_t *t) { return t->impl; }

static void violation(fakedev_t *d, const char *what) {
  fprintf(stderr, "fakedev: rule broken: %s\n", what);
  d->violations++;
}

// Whether queued work will signal `sem` with a value >= `value`. mu held.
static bool pending_signal(const fakedev_t *d, uint64_t sem, uint64_t value,
                           bool below) {
  for (const fakedev_job_t *j = d->head; j; j = j->next)
    for (int32_t s = 0; s < j->n_signals; ++s)
      if (j->signals[s].semaphore == sem &&
          (below ? j->signals[s].value < value : j->signals[s].value >= value))
        return true;
  return false;
}

static bool waits_met(const fakedev_t *d, const fakedev_job_t *j) {
  for (int32_t w = 0; w < j->n_waits; ++w)
    if (d->values[j->waits[w].semaphore - 1] < j->waits[w].value) return false;
  return true;
}

static void *device_queue(void *arg) {
  fakedev_t *d = arg;
  pthread_mutex_lock(&d->mu);
  for (;;) {
    while (!d->stop && (d->lost || !d->head || !waits_met(d, d->head)))
      pthread_cond_wait(&d->cv, &d->mu);
    if (d->stop) break;
    fakedev_job_t *j = d->head;
    d->rng ^= d->rng << 13;
    d->rng ^= d->rng >> 7;
    d->rng ^= d->rng << 17;
    uint64_t r = d->rng;
    pthread_mutex_unlock(&d->mu);
    if (d->options.delay_percent && r % 100 < d->options.delay_percent) {
      struct timespec ts = {0, (long)((r >> 8) % (d->options.max_delay_us + 1)) * 1000};
      nanosleep(&ts, NULL);
    }
    fakedev_stage_t *s = j->stage;
    const vkp_graph_t *g = s->graph;
    vkp_status_t st = tmath_eval(g, s->in + (size_t)j->slot * (size_t)g->n_inputs,
                                 s->out + (size_t)j->slot * (size_t)g->n_outputs);
    pthread_mutex_lock(&d->mu);
    d->head = j->next;
    if (!d->head) d->tail = NULL;
    d->jobs++;
    if (st) {
      d->lost = true;  // a kernel fault: the device is gone
      vkp_status_free(st);
    } else {
      for (int32_t k = 0; k < j->n_signals; ++k) {
        uint64_t *v = &d->values[j->signals[k].semaphore - 1];
        if (j->signals[k].value <= *v) violation(d, "device signal does not raise the value");
        else *v = j->signals[k].value;
      }
    }
    free(j);
    pthread_cond_broadcast(&d->cv);
  }
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

static vkp_status_t lost_status(void) {
  return vkp_status_make(VKP_STATUS_DEVICE_LOST, "fakedev: device lost");
}

// --- host-stage entries ----------------------------------------------------

static bool fd_supports(const vkp_target_t *t, const vkp_graph_t *g,
                        const vkp_node_t *n, char *reason, size_t size) {
  return n->op == VKP_OP_ADD || n->op == VKP_OP_MUL || n->op == VKP_OP_RELU ||
         n->op == VKP_OP_IDENTITY;
}

static vkp_status_t fd_compile(const vkp_target_t *t, const vkp_graph_t *g,
                               const vkp_compile_options_t *o, vkp_blob_t *out) {
  vkp_status_t st = vkp_blob_alloc(out, 4);
  if (!st) memcpy(out->data, "fdev", 4);
  return st;
}

static void fd_unload(vkp_stage_t *stage) {
  fakedev_stage_t *s = (fakedev_stage_t *)stage;
  if (!s) return;
  free(s->in);
  free(s->out);
  free(s);
}

static vkp_status_t fd_load(const vkp_target_t *t, const vkp_graph_t *g,
                            const void *blob, size_t size, vkp_stage_t **out) {
  *out = NULL;
  if (size != 4 || memcmp(blob, "fdev", 4) != 0)
    return vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "not a fakedev blob");
  fakedev_stage_t *s = calloc(1, sizeof(*s));
  if (!s) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "fakedev stage");
  s->base.target = t;
  s->graph = g;
  *out = &s->base;
  return NULL;
}

static vkp_status_t fd_run(vkp_stage_t *stage, const vkp_tensor_t *in,
                           vkp_tensor_t *out) {
  fakedev_stage_t *s = (fakedev_stage_t *)stage;
  return tmath_eval(s->graph, in, out);
}

// --- device entries --------------------------------------------------------

static vkp_status_t fd_bind_slots(vkp_stage_t *stage, int32_t n_slots,
                                  const vkp_staging_t *inputs,
                                  const vkp_staging_t *outputs) {
  fakedev_stage_t *s = (fakedev_stage_t *)stage;
  const vkp_graph_t *g = s->graph;
  s->n_slots = n_slots;
  s->in = calloc((size_t)n_slots * (size_t)g->n_inputs + 1, sizeof(vkp_tensor_t));
  s->out = calloc((size_t)n_slots * (size_t)g->n_outputs + 1, sizeof(vkp_tensor_t));
  if (!s->in || !s->out) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "bind");
  for (int32_t k = 0; k < n_slots; ++k) {
    for (int32_t i = 0; i < g->n_inputs; ++i) {
      const vkp_value_t *v = &g->values[g->inputs[i]];
      vkp_status_t st = vkp_tensor_init_view(
          &s->in[k * g->n_inputs + i], v->dtype, v->rank, v->shape,
          inputs[k * g->n_inputs + i].host);
      if (st) return st;
    }
    for (int32_t o = 0; o < g->n_outputs; ++o) {
      const vkp_value_t *v = &g->values[g->outputs[o]];
      vkp_status_t st = vkp_tensor_init_view(
          &s->out[k * g->n_outputs + o], v->dtype, v->rank, v->shape,
          outputs[k * g->n_outputs + o].host);
      if (st) return st;
    }
  }
  return NULL;
}

static vkp_status_t fd_submit(vkp_stage_t *stage, const vkp_submit_info_t *info) {
  fakedev_stage_t *s = (fakedev_stage_t *)stage;
  fakedev_t *d = dev_of(stage->target);
  const vkp_graph_t *g = s->graph;
  fakedev_job_t *j = calloc(1, sizeof(*j));
  if (!j) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "fakedev job");
  pthread_mutex_lock(&d->mu);
  vkp_status_t st = NULL;
  if (d->lost) {
    st = lost_status();
  } else if (info->slot < 0 || info->slot >= s->n_slots ||
             info->n_waits > 16 || info->n_signals > 4) {
    st = vkp_status_make(VKP_STATUS_INVALID_ARGUMENT, "fakedev: bad submit");
  } else if (d->options.fail_stage && strcmp(d->options.fail_stage, g->name) == 0 &&
             info->n_signals && info->signals[0].value % d->options.fail_every == 0) {
    st = vkp_status_make(VKP_STATUS_INTERNAL, "fakedev: injected submit failure");
  }
  if (!st) {
    for (int32_t i = 0; i < g->n_inputs; ++i)
      if (info->inputs[i].data != s->in[info->slot * g->n_inputs + i].data)
        violation(d, "submit input is not the bound slot");
    for (int32_t o = 0; o < g->n_outputs; ++o)
      if (info->outputs[o].data != s->out[info->slot * g->n_outputs + o].data)
        violation(d, "submit output is not the bound slot");
    for (int32_t w = 0; w < info->n_waits; ++w) {
      uint64_t sem = info->waits[w].semaphore, v = info->waits[w].value;
      if (d->values[sem - 1] < v && !pending_signal(d, sem, v, false))
        violation(d, "wait submitted on a value nobody has signalled or submitted");
    }
    j->stage = s;
    j->slot = info->slot;
    j->n_waits = info->n_waits;
    j->n_signals = info->n_signals;
    memcpy(j->waits, info->waits, sizeof(vkp_timeline_point_t) * (size_t)info->n_waits);
    memcpy(j->signals, info->signals,
           sizeof(vkp_timeline_point_t) * (size_t)info->n_signals);
    if (d->tail) d->tail->next = j;
    else d->head = j;
    d->tail = j;
    j = NULL;
    pthread_cond_broadcast(&d->cv);
  }
  pthread_mutex_unlock(&d->mu);
  free(j);
  return st;
}

static vkp_status_t fd_staging_alloc(const vkp_target_t *t, size_t size,
                                     vkp_staging_t *out) {
  memset(out, 0, sizeof(*out));
  out->host = calloc(1, size);
  if (!out->host) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "staging");
  out->size = size;
  out->buffer = (uint64_t)(uintptr_t)out->host;
  return NULL;
}

static void fd_staging_free(const vkp_target_t *t, vkp_staging_t *staging) {
  free(staging->host);
  memset(staging, 0, sizeof(*staging));
}

static vkp_status_t fd_timeline_create(const vkp_target_t *t, uint64_t *out) {
  fakedev_t *d = dev_of(t);
  pthread_mutex_lock(&d->mu);
  uint64_t *grown = realloc(d->values, sizeof(uint64_t) * (size_t)(d->n_sems + 1));
  vkp_status_t st = NULL;
  if (grown) {
    d->values = grown;
    d->values[d->n_sems++] = 0;
    *out = (uint64_t)d->n_sems;
  } else {
    st = vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "semaphore");
  }
  pthread_mutex_unlock(&d->mu);
  return st;
}

static void fd_timeline_destroy(const vkp_target_t *t, uint64_t sem) {
  fakedev_t *d = dev_of(t);
  pthread_mutex_lock(&d->mu);
  if (!d->lost && pending_signal(d, sem, 0, false)) violation(d, "semaphore destroyed with work pending");
  pthread_mutex_unlock(&d->mu);
}

static vkp_status_t fd_timeline_signal(const vkp_target_t *t, uint64_t sem,
                                       uint64_t value) {
  fakedev_t *d = dev_of(t);
  pthread_mutex_lock(&d->mu);
  vkp_status_t st = NULL;
  if (d->lost) {
    st = lost_status();
  } else if (d->options.fail_host_signal && value == d->options.fail_host_signal) {
    st = vkp_status_make(VKP_STATUS_INTERNAL, "fakedev: injected host signal failure");
  } else {
    if (value <= d->values[sem - 1]) violation(d, "host signal does not raise the value");
    if (pending_signal(d, sem, value, true))
      violation(d, "host signal passes a pending device signal");
    if (value > d->values[sem - 1]) d->values[sem - 1] = value;
    pthread_cond_broadcast(&d->cv);
  }
  pthread_mutex_unlock(&d->mu);
  return st;
}

static vkp_status_t fd_timeline_wait(const vkp_target_t *t, uint64_t sem,
                                     uint64_t value, uint64_t timeout_ns) {
  fakedev_t *d = dev_of(t);
  struct timespec deadline;
  if (timeout_ns > 1000000000000ull) timeout_ns = 1000000000000ull;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns;
  deadline.tv_sec += (time_t)(ns / 1000000000u);
  deadline.tv_nsec = (long)(ns % 1000000000u);
  pthread_mutex_lock(&d->mu);
  vkp_status_t st = NULL;
  for (;;) {
    if (d->lost) {
      st = lost_status();
      break;
    }
    if (d->values[sem - 1] >= value) break;
    if (pthread_cond_timedwait(&d->cv, &d->mu, &deadline) == ETIMEDOUT &&
        d->values[sem - 1] < value && !d->lost) {
      st = vkp_status_make(VKP_STATUS_TIMEOUT, "fakedev: wait timed out");
      break;
    }
  }
  pthread_mutex_unlock(&d->mu);
  return st;
}

static void fd_destroy(vkp_target_t *t) {
  fakedev_t *d = t->impl;
  pthread_mutex_lock(&d->mu);
  d->stop = true;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
  pthread_join(d->thread, NULL);
  while (d->head) {
    fakedev_job_t *next = d->head->next;
    free(d->head);
    d->head = next;
  }
  free(d->values);
  pthread_cond_destroy(&d->cv);
  pthread_mutex_destroy(&d->mu);
  free(d);
}

static const vkp_target_device_ops_t fakedev_device_ops = {
    .submit = fd_submit,
    .staging_alloc = fd_staging_alloc,
    .staging_free = fd_staging_free,
    .bind_slots = fd_bind_slots,
    .timeline_create = fd_timeline_create,
    .timeline_destroy = fd_timeline_destroy,
    .timeline_signal = fd_timeline_signal,
    .timeline_wait = fd_timeline_wait,
};

static const vkp_target_vtable_t fakedev_vtable = {
    .api_version = VKP_TARGET_API_VERSION,
    .name = "fakedev",
    .caps = {.flags = VKP_TARGET_DEVICE_FLAGS, .dtypes = VKP_DTYPE_SET_ALL},
    .compiler = {.supports = fd_supports, .compile = fd_compile},
    .stage = {.load = fd_load, .run = fd_run, .unload = fd_unload},
    .device = &fakedev_device_ops,
    .destroy = fd_destroy,
};

vkp_status_t fakedev_register(vkp_registry_t *registry,
                              const fakedev_options_t *options) {
  fakedev_t *d = calloc(1, sizeof(*d));
  if (!d) return vkp_status_make(VKP_STATUS_OUT_OF_MEMORY, "fakedev");
  if (options) d->options = *options;
  if (!d->options.fail_every) d->options.fail_every = 1;
  d->rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, &ca);
  pthread_condattr_destroy(&ca);
  if (pthread_create(&d->thread, NULL, device_queue, d) != 0) {
    free(d);
    return vkp_status_make(VKP_STATUS_UNAVAILABLE, "fakedev: no thread");
  }
  return vkp_registry_add(registry, &fakedev_vtable, d);
}

uint64_t fakedev_violations(const vkp_target_t *t) {
  fakedev_t *d = dev_of(t);
  pthread_mutex_lock(&d->mu);
  uint64_t v = d->violations;
  pthread_mutex_unlock(&d->mu);
  return v;
}

uint64_t fakedev_jobs(const vkp_target_t *t) {
  fakedev_t *d = dev_of(t);
  pthread_mutex_lock(&d->mu);
  uint64_t v = d->jobs;
  pthread_mutex_unlock(&d->mu);
  return v;
}
