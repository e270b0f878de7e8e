// SPDX-License-Identifier: Apache-2.0
// The pipeline type: a thin, GIL-releasing wrapper of vkp_pipeline_t.
// vkpipe/__init__.py adds the threading contract on top (one producer lock,
// one collector lock, futures, the ordered iterator); this file only makes
// sure no call can crash the process: close() refuses while another thread
// is inside a call, and every call on a closed pipeline raises.
#include <math.h>
#include <string.h>

#include "vkpy.h"

typedef struct vkpy_pipeline_t {
  PyObject_HEAD
  vkp_pipeline_t *pipe;  // NULL once closed
  PyObject *plan;        // vkpy_plan_t, kept alive: the pipeline borrows it
  PyObject *registry;    // likewise
  int32_t n_inputs;
  int32_t n_outputs;
  vkpy_spec_t *specs;    // n_inputs entries (names borrowed from the plan)
  PyObject *input_names;   // tuple of str, plan order
  PyObject *output_names;  // likewise
  int busy;              // calls running with the GIL released
  bool producing;        // a submit or infer is running (the C API allows one)
} vkpy_pipeline_t;

static void vkpy__pipeline_dealloc(PyObject *self) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  if (p->pipe) {
    // Nothing else can be inside a call (it would hold a reference).
    Py_BEGIN_ALLOW_THREADS
    vkp_pipeline_destroy(p->pipe);
    Py_END_ALLOW_THREADS
  }
  PyMem_Free(p->specs);
  Py_XDECREF(p->input_names);
  Py_XDECREF(p->output_names);
  Py_XDECREF(p->plan);
  Py_XDECREF(p->registry);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *vkpy__pipeline_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"plan", "ring_depth", "sequential", "threads", "trace_capacity",
                           NULL};
  PyObject *plan_obj;
  int ring_depth = 0, sequential = 0, threads = 0, trace_capacity = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|ipii", kwlist, &vkpy_plan_type,
                                   &plan_obj, &ring_depth, &sequential, &threads,
                                   &trace_capacity))
    return NULL;
  if (ring_depth < 0 || ring_depth > VKP_PIPELINE_MAX_RING_DEPTH)
    return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "ring_depth %d is outside 1..%d",
                           ring_depth, VKP_PIPELINE_MAX_RING_DEPTH);
  if (threads < 0 || trace_capacity < 0)
    return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                           "threads and trace_capacity must be >= 0");
  vkpy_plan_t *plan = (vkpy_plan_t *)plan_obj;
  const vkp_plan_t *p = plan->plan;
  vkpy_pipeline_t *self = (vkpy_pipeline_t *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->registry = vkpy_registry_get();
  if (!self->registry) goto fail;
  Py_INCREF(plan_obj);
  self->plan = plan_obj;
  self->specs = PyMem_Calloc((size_t)p->n_inputs + 1, sizeof *self->specs);
  vkp_compile_options_t *copts =
      threads > 0 ? PyMem_Calloc((size_t)p->n_stages, sizeof *copts) : NULL;
  if (!self->specs || (threads > 0 && !copts)) {
    PyMem_Free(copts);
    PyErr_NoMemory();
    goto fail;
  }
  for (int32_t s = 0; copts && s < p->n_stages; ++s) copts[s].threads = threads;
  if (vkpy_plan_input_specs(p, self->specs) < 0) {
    PyMem_Free(copts);
    goto fail;
  }
  self->n_inputs = p->n_inputs;
  self->n_outputs = p->n_outputs;
  self->input_names = PyTuple_New(p->n_inputs);
  self->output_names = PyTuple_New(p->n_outputs);
  if (!self->input_names || !self->output_names) {
    PyMem_Free(copts);
    goto fail;
  }
  for (int32_t i = 0; i < p->n_inputs + p->n_outputs; ++i) {
    bool in = i < p->n_inputs;
    PyObject *name = PyUnicode_InternFromString(in ? p->inputs[i] : p->outputs[i - p->n_inputs]);
    if (!name) {
      PyMem_Free(copts);
      goto fail;
    }
    PyTuple_SET_ITEM(in ? self->input_names : self->output_names,
                     in ? i : i - p->n_inputs, name);
  }
  vkp_pipeline_options_t opt = {.ring_depth = ring_depth, .sequential = sequential != 0,
                                .stage_compile_options = copts,
                                .trace_capacity = trace_capacity};
  const vkp_registry_t *reg = ((vkpy_registry_t *)self->registry)->registry;
  const vkp_blob_t *blobs =
      plan->artifact ? vkp_artifact_blobs(((vkpy_artifact_t *)plan->artifact)->artifact) : NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = blobs ? vkp_pipeline_create_from_blobs(p, reg, blobs, &opt, &self->pipe)
             : vkp_pipeline_create(p, reg, &opt, &self->pipe);
  Py_END_ALLOW_THREADS
  PyMem_Free(copts);
  if (st) {
    vkpy_raise(st);
    goto fail;
  }
  return (PyObject *)self;
fail:
  Py_DECREF(self);
  return NULL;
}

// Returns the pipeline, or NULL with StateError when closed.
static vkp_pipeline_t *vkpy__open(vkpy_pipeline_t *p) {
  if (!p->pipe) vkpy_raise_code(VKP_STATUS_FAILED_PRECONDITION, "the pipeline is closed");
  return p->pipe;
}

// Seconds (None: for ever) to nanoseconds.
static int vkpy__timeout_ns(PyObject *obj, uint64_t *out) {
  if (obj == Py_None) {
    *out = UINT64_MAX;
    return 0;
  }
  double s = PyFloat_AsDouble(obj);
  if (s == -1.0 && PyErr_Occurred()) return -1;
  if (!(s >= 0.0) || isinf(s)) {
    if (isinf(s) && s > 0) {
      *out = UINT64_MAX;
      return 0;
    }
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "timeout must be >= 0 seconds or None");
    return -1;
  }
  *out = s >= 1.8e10 ? UINT64_MAX : (uint64_t)(s * 1e9);
  return 0;
}

// Converts the input sequence (pipeline input order) into views.
static int vkpy__inputs(vkpy_pipeline_t *p, PyObject *in_obj, vkpy_input_t *inputs) {
  PyObject *seq = PySequence_Fast(in_obj, "inputs must be a sequence");
  if (!seq) return -1;
  if (PySequence_Fast_GET_SIZE(seq) != p->n_inputs) {
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "the pipeline has %d inputs, got %zd",
                    (int)p->n_inputs, PySequence_Fast_GET_SIZE(seq));
    Py_DECREF(seq);
    return -1;
  }
  for (int32_t i = 0; i < p->n_inputs; ++i) {
    if (vkpy_input_from_object(PySequence_Fast_GET_ITEM(seq, i), &p->specs[i],
                               &inputs[i]) < 0) {
      while (i-- > 0) vkpy_input_release(&inputs[i]);
      Py_DECREF(seq);
      return -1;
    }
  }
  Py_DECREF(seq);
  return 0;
}

enum { kMaxIo = 64 };

// The values of `dict` (inputs by name) as a tuple in the pipeline's input
// order; a missing or unknown name is an error listing them all.
static PyObject *vkpy__gather(vkpy_pipeline_t *p, PyObject *dict) {
  if (!PyDict_Check(dict)) {
    PyErr_SetString(PyExc_TypeError, "inputs must be a dict of name -> tensor");
    return NULL;
  }
  PyObject *t = PyTuple_New(p->n_inputs);
  if (!t) return NULL;
  int32_t found = 0;
  for (int32_t i = 0; i < p->n_inputs; ++i) {
    PyObject *v = PyDict_GetItemWithError(dict, PyTuple_GET_ITEM(p->input_names, i));
    if (!v && PyErr_Occurred()) {
      Py_DECREF(t);
      return NULL;
    }
    if (!v) continue;
    Py_INCREF(v);
    PyTuple_SET_ITEM(t, i, v);
    ++found;
  }
  if (found == p->n_inputs && PyDict_GET_SIZE(dict) == p->n_inputs) return t;
  // Say what is wrong: every missing name, or every unknown one.
  PyObject *bad = PyList_New(0);
  bool missing = found != p->n_inputs;
  if (bad && missing) {
    for (int32_t i = 0; i < p->n_inputs; ++i)
      if (!PyTuple_GET_ITEM(t, i) && PyList_Append(bad, PyTuple_GET_ITEM(p->input_names, i)) < 0)
        Py_CLEAR(bad);
  } else if (bad) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (bad && PyDict_Next(dict, &pos, &key, &value)) {
      int known = PySequence_Contains(p->input_names, key);
      if (known < 0 || (!known && PyList_Append(bad, key) < 0)) Py_CLEAR(bad);
    }
  }
  Py_DECREF(t);
  if (!bad) return NULL;
  PyObject *bad_repr = PyObject_Repr(bad), *names_repr = PyObject_Repr(p->input_names);
  if (bad_repr && names_repr)
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "%s input(s) %s; the pipeline takes %s",
                    missing ? "missing" : "unknown", PyUnicode_AsUTF8(bad_repr),
                    PyUnicode_AsUTF8(names_repr));
  Py_XDECREF(bad_repr);
  Py_XDECREF(names_repr);
  Py_DECREF(bad);
  return NULL;
}

static PyObject *vkpy__outputs_tuple(int32_t n, vkp_tensor_t *outputs) {
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; i < n; ++i) {
    PyObject *arr = t ? vkpy_array_from_tensor(&outputs[i]) : NULL;
    if (!arr) {
      Py_CLEAR(t);
      vkp_tensor_deinit(&outputs[i]);
      continue;
    }
    PyTuple_SET_ITEM(t, i, arr);
  }
  return t;
}

// submit(inputs) -> seq: sets every input and launches a frame.
static PyObject *vkpy__pipeline_submit(PyObject *self, PyObject *in_obj);
static PyObject *vkpy__pipeline_infer(PyObject *self, PyObject *in_obj);

// infer_named({name: tensor}) -> {name: array}
static PyObject *vkpy__pipeline_infer_named(PyObject *self, PyObject *dict) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  PyObject *args = vkpy__gather(p, dict);
  if (!args) return NULL;
  PyObject *outs = vkpy__pipeline_infer(self, args);
  Py_DECREF(args);
  if (!outs) return NULL;
  PyObject *result = PyDict_New();
  for (int32_t i = 0; result && i < p->n_outputs; ++i)
    if (PyDict_SetItem(result, PyTuple_GET_ITEM(p->output_names, i), PyTuple_GET_ITEM(outs, i)) < 0)
      Py_CLEAR(result);
  Py_DECREF(outs);
  return result;
}

// submit_named({name: tensor}) -> seq
static PyObject *vkpy__pipeline_submit_named(PyObject *self, PyObject *dict) {
  PyObject *args = vkpy__gather((vkpy_pipeline_t *)self, dict);
  if (!args) return NULL;
  PyObject *seq = vkpy__pipeline_submit(self, args);
  Py_DECREF(args);
  return seq;
}

static PyObject *vkpy__pipeline_submit(PyObject *self, PyObject *in_obj) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  vkp_pipeline_t *pipe = vkpy__open(p);
  if (!pipe) return NULL;
  vkpy_input_t inputs[kMaxIo];
  if (p->n_inputs > kMaxIo)
    return vkpy_raise_code(VKP_STATUS_UNSUPPORTED, "more than %d inputs", kMaxIo);
  if (p->producing)
    return vkpy_raise_code(VKP_STATUS_FAILED_PRECONDITION,
                           "submit: another thread is submitting to this pipeline");
  if (vkpy__inputs(p, in_obj, inputs) < 0) return NULL;
  uint64_t seq = 0;
  vkp_status_t st = NULL;
  ++p->busy;
  p->producing = true;
  Py_BEGIN_ALLOW_THREADS
  for (int32_t i = 0; i < p->n_inputs && !st; ++i)
    st = vkp_pipeline_set_input(pipe, p->specs[i].name, &inputs[i].view);
  if (!st) st = vkp_pipeline_run(pipe, &seq);
  Py_END_ALLOW_THREADS
  p->producing = false;
  --p->busy;
  for (int32_t i = 0; i < p->n_inputs; ++i) vkpy_input_release(&inputs[i]);
  if (st) return vkpy_raise(st);
  return PyLong_FromUnsignedLongLong(seq);
}

// infer(inputs) -> outputs: one frame, synchronously.
static PyObject *vkpy__pipeline_infer(PyObject *self, PyObject *in_obj) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  vkp_pipeline_t *pipe = vkpy__open(p);
  if (!pipe) return NULL;
  if (p->n_inputs > kMaxIo || p->n_outputs > kMaxIo)
    return vkpy_raise_code(VKP_STATUS_UNSUPPORTED, "more than %d inputs or outputs", kMaxIo);
  vkpy_input_t inputs[kMaxIo];
  vkp_tensor_t views[kMaxIo];
  vkp_tensor_t outputs[kMaxIo];
  if (p->producing)
    return vkpy_raise_code(VKP_STATUS_FAILED_PRECONDITION,
                           "infer: another thread is submitting to this pipeline");
  if (vkpy__inputs(p, in_obj, inputs) < 0) return NULL;
  for (int32_t i = 0; i < p->n_inputs; ++i) views[i] = inputs[i].view;
  memset(outputs, 0, sizeof(vkp_tensor_t) * (size_t)p->n_outputs);
  vkp_status_t st;
  ++p->busy;
  p->producing = true;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_pipeline_infer(pipe, views, outputs);
  Py_END_ALLOW_THREADS
  p->producing = false;
  --p->busy;
  for (int32_t i = 0; i < p->n_inputs; ++i) vkpy_input_release(&inputs[i]);
  if (st) {
    for (int32_t i = 0; i < p->n_outputs; ++i) vkp_tensor_deinit(&outputs[i]);
    return vkpy_raise(st);
  }
  return vkpy__outputs_tuple(p->n_outputs, outputs);
}

// get_output(timeout=None) -> None when nothing finished in time, else
// (seq, outputs or None, exception or None, latency_ns).
static PyObject *vkpy__pipeline_get_output(PyObject *self, PyObject *args) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  PyObject *timeout_obj = Py_None;
  if (!PyArg_ParseTuple(args, "|O", &timeout_obj)) return NULL;
  uint64_t timeout_ns;
  if (vkpy__timeout_ns(timeout_obj, &timeout_ns) < 0) return NULL;
  vkp_pipeline_t *pipe = vkpy__open(p);
  if (!pipe) return NULL;
  vkp_pipeline_result_t res;
  vkp_status_t st;
  ++p->busy;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_pipeline_get_output(pipe, timeout_ns, &res);
  Py_END_ALLOW_THREADS
  --p->busy;
  if (st) {
    if (vkp_status_is(st, VKP_STATUS_EMPTY)) {
      vkp_status_free(st);
      Py_RETURN_NONE;
    }
    return vkpy_raise(st);
  }
  PyObject *outputs = Py_None, *error = Py_None;
  if (res.status) {
    Py_INCREF(outputs);
    error = vkpy_exception_from_status(res.status);
    res.status = NULL;
  } else {
    Py_INCREF(error);
    outputs = vkpy__outputs_tuple(res.n_outputs, res.outputs);
  }
  uint64_t seq = res.seq, latency = res.latency_ns;
  vkp_pipeline_result_deinit(&res);  // the tensors were moved out (zeroed)
  if (!outputs || !error) {
    Py_XDECREF(outputs);
    Py_XDECREF(error);
    return NULL;
  }
  return Py_BuildValue("(KNNK)", (unsigned long long)seq, outputs, error,
                       (unsigned long long)latency);
}

static PyObject *vkpy__pipeline_drain(PyObject *self, PyObject *args) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  PyObject *timeout_obj = Py_None;
  if (!PyArg_ParseTuple(args, "|O", &timeout_obj)) return NULL;
  uint64_t timeout_ns;
  if (vkpy__timeout_ns(timeout_obj, &timeout_ns) < 0) return NULL;
  vkp_pipeline_t *pipe = vkpy__open(p);
  if (!pipe) return NULL;
  vkp_status_t st;
  ++p->busy;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_pipeline_drain(pipe, timeout_ns);
  Py_END_ALLOW_THREADS
  --p->busy;
  if (st) return vkpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *vkpy__pipeline_stats(PyObject *self, PyObject *unused) {
  vkp_pipeline_t *pipe = vkpy__open((vkpy_pipeline_t *)self);
  if (!pipe) return NULL;
  vkp_pipeline_stats_t s;
  vkp_status_t st = vkp_pipeline_get_stats(pipe, &s);
  if (st) return vkpy_raise(st);
  PyObject *stages = PyList_New(s.n_stages), *bindings = PyList_New(s.n_bindings);
  PyObject *result = NULL;
  if (!stages || !bindings) goto done;
  for (int32_t i = 0; i < s.n_stages; ++i) {
    const vkp_pipeline_stage_stats_t *x = &s.stages[i];
    PyObject *item = Py_BuildValue(
        "{s:s,s:s,s:K,s:K,s:d,s:d,s:d}", "name", x->name, "target", x->target, "frames",
        (unsigned long long)x->frames, "failed_frames", (unsigned long long)x->failed_frames,
        "busy_ms", (double)x->busy_ns / 1e6, "wait_input_ms", (double)x->wait_input_ns / 1e6,
        "wait_slot_ms", (double)x->wait_slot_ns / 1e6);
    if (!item) goto done;
    PyList_SET_ITEM(stages, i, item);
  }
  for (int32_t i = 0; i < s.n_bindings; ++i) {
    const vkp_pipeline_binding_stats_t *b = &s.bindings[i];
    PyObject *item = Py_BuildValue("{s:s,s:i,s:i,s:O}", "name", b->name, "depth",
                                   (int)b->depth, "peak_occupancy", (int)b->peak_occupancy,
                                   "device_memory", b->device_memory ? Py_True : Py_False);
    if (!item) goto done;
    PyList_SET_ITEM(bindings, i, item);
  }
  uint64_t done_ok = s.frames_finished;
  result = Py_BuildValue(
      "{s:O,s:O,s:K,s:K,s:K,s:d,s:d,s:d}", "stages", stages, "bindings", bindings,
      "frames_run", (unsigned long long)s.frames_run, "frames_finished",
      (unsigned long long)s.frames_finished, "frames_failed",
      (unsigned long long)s.frames_failed, "latency_min_ms",
      done_ok ? (double)s.latency_min_ns / 1e6 : 0.0, "latency_max_ms",
      done_ok ? (double)s.latency_max_ns / 1e6 : 0.0, "latency_mean_ms",
      done_ok ? (double)s.latency_sum_ns / 1e6 / (double)done_ok : 0.0);
done:
  Py_XDECREF(stages);
  Py_XDECREF(bindings);
  vkp_pipeline_stats_deinit(&s);
  return result;
}

// trace() -> [(stage, seq, start_ns, end_ns, failed)]
static PyObject *vkpy__pipeline_trace(PyObject *self, PyObject *unused) {
  vkp_pipeline_t *pipe = vkpy__open((vkpy_pipeline_t *)self);
  if (!pipe) return NULL;
  vkp_pipeline_event_t *events = NULL;
  int32_t n = 0;
  vkp_status_t st = vkp_pipeline_get_trace(pipe, &events, &n);
  if (st) return vkpy_raise(st);
  PyObject *list = PyList_New(n);
  for (int32_t i = 0; list && i < n; ++i) {
    const vkp_pipeline_event_t *e = &events[i];
    PyObject *item = Py_BuildValue("(iKKKO)", (int)e->stage, (unsigned long long)e->seq,
                                   (unsigned long long)e->start_ns,
                                   (unsigned long long)e->end_ns,
                                   e->failed ? Py_True : Py_False);
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, item);
  }
  vkp_pipeline_trace_free(events);
  return list;
}

static PyObject *vkpy__pipeline_close(PyObject *self, PyObject *unused) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  if (!p->pipe) Py_RETURN_NONE;
  if (p->busy)
    return vkpy_raise_code(VKP_STATUS_FAILED_PRECONDITION,
                           "close: another thread is inside a call on this pipeline");
  vkp_pipeline_t *pipe = p->pipe;
  p->pipe = NULL;  // later calls raise, even while destroy runs
  Py_BEGIN_ALLOW_THREADS
  vkp_pipeline_destroy(pipe);
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}

static PyObject *vkpy__pipeline_input_specs(PyObject *self, PyObject *unused) {
  vkpy_pipeline_t *p = (vkpy_pipeline_t *)self;
  PyObject *list = PyList_New(p->n_inputs);
  for (int32_t i = 0; list && i < p->n_inputs; ++i) {
    const vkpy_spec_t *s = &p->specs[i];
    PyObject *item = Py_BuildValue("(ssN)", s->name, vkp_dtype_name(s->dtype),
                                   vkpy_shape_tuple(s->rank, s->shape));
    if (!item) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

static PyObject *vkpy__pipeline_output_names(PyObject *self, PyObject *unused) {
  const vkp_plan_t *plan = ((vkpy_plan_t *)((vkpy_pipeline_t *)self)->plan)->plan;
  PyObject *list = PyList_New(plan->n_outputs);
  for (int32_t i = 0; list && i < plan->n_outputs; ++i) {
    PyObject *s = PyUnicode_FromString(plan->outputs[i]);
    if (!s) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

static PyObject *vkpy__pipeline_closed(PyObject *self, void *closure) {
  return PyBool_FromLong(((vkpy_pipeline_t *)self)->pipe == NULL);
}

static PyGetSetDef vkpy__pipeline_getset[] = {
    {"closed", vkpy__pipeline_closed, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef vkpy__pipeline_methods[] = {
    {"submit", vkpy__pipeline_submit, METH_O, "submit(inputs) -> seq"},
    {"infer", vkpy__pipeline_infer, METH_O, "infer(inputs) -> outputs"},
    {"infer_named", vkpy__pipeline_infer_named, METH_O, "infer_named(dict) -> dict"},
    {"submit_named", vkpy__pipeline_submit_named, METH_O, "submit_named(dict) -> seq"},
    {"get_output", vkpy__pipeline_get_output, METH_VARARGS,
     "get_output(timeout=None) -> (seq, outputs, error, latency_ns) or None"},
    {"drain", vkpy__pipeline_drain, METH_VARARGS, "drain(timeout=None)"},
    {"stats", vkpy__pipeline_stats, METH_NOARGS, "counters since creation"},
    {"trace", vkpy__pipeline_trace, METH_NOARGS, "recorded stage events"},
    {"close", vkpy__pipeline_close, METH_NOARGS, "stop and free (frames in flight too)"},
    {"input_specs", vkpy__pipeline_input_specs, METH_NOARGS, "[(name, dtype, shape)]"},
    {"output_names", vkpy__pipeline_output_names, METH_NOARGS, "[name]"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject vkpy_pipeline_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkpipe._vkpipe.Pipeline",
    .tp_basicsize = sizeof(vkpy_pipeline_t),
    .tp_dealloc = vkpy__pipeline_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Pipeline(plan, ring_depth=0, sequential=False, threads=0, trace_capacity=0)",
    .tp_methods = vkpy__pipeline_methods,
    .tp_getset = vkpy__pipeline_getset,
    .tp_new = vkpy__pipeline_new,
};
