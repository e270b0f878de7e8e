// SPDX-License-Identifier: Apache-2.0
// Models, plans and artifacts: loading, checking, running on one target,
// partitioning, saving and building; the process registry; calibration.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkpy.h"

// ---------------------------------------------------------------------------
// Registry

static PyObject *vkpy__registry;  // the process's, created on first use

static void vkpy__registry_dealloc(PyObject *self) {
  vkp_registry_destroy(((vkpy_registry_t *)self)->registry);
  Py_TYPE(self)->tp_free(self);
}

PyTypeObject vkpy_registry_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkpipe._vkpipe.Registry",
    .tp_basicsize = sizeof(vkpy_registry_t),
    .tp_dealloc = vkpy__registry_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The built-in targets (ref, cpu, vulkan) of this process.",
};

PyObject *vkpy_registry_get(void) {
  if (!vkpy__registry) {
    // Under the GIL on purpose: bringing up Vulkan happens once, and two
    // threads must not both do it.
    vkp_registry_t *reg = NULL;
    vkp_status_t st = vkp_registry_create_default(&reg);
    if (st) return vkpy_raise(st);
    vkpy_registry_t *obj = PyObject_New(vkpy_registry_t, &vkpy_registry_type);
    if (!obj) {
      vkp_registry_destroy(reg);
      return NULL;
    }
    obj->registry = reg;
    vkpy__registry = (PyObject *)obj;
  }
  Py_INCREF(vkpy__registry);
  return vkpy__registry;
}

static const vkp_registry_t *vkpy__registry_ptr(PyObject *reg) {
  return ((vkpy_registry_t *)reg)->registry;
}

PyObject *vkpy_targets(PyObject *self, PyObject *args) {
  PyObject *reg = vkpy_registry_get();
  if (!reg) return NULL;
  vkp_profile_t *prof = NULL;
  vkp_status_t st = vkp_profile_create_default(&prof);
  if (st) {
    Py_DECREF(reg);
    return vkpy_raise(st);
  }
  const vkp_registry_t *r = vkpy__registry_ptr(reg);
  PyObject *list = PyList_New(0);
  // Every registered target in registration order (the built-ins first),
  // the unavailable ones with their reason.
  int32_t n = vkp_registry_count_all(r);
  for (int32_t i = 0; list && i < n; ++i) {
    const char *name = vkp_registry_name(r, i);
    bool available = vkp_registry_find(r, name) != NULL;
    const char *reason = vkp_registry_unavailable_reason(r, name);
    PyObject *item = Py_BuildValue("(sOzs)", name, available ? Py_True : Py_False,
                                   reason, vkp_profile_device_of(prof, name));
    if (!item || PyList_Append(list, item) < 0) Py_CLEAR(list);
    Py_XDECREF(item);
  }
  vkp_profile_destroy(prof);
  Py_DECREF(reg);
  return list;
}

// ---------------------------------------------------------------------------
// Graph

static void vkpy__graph_dealloc(PyObject *self) {
  vkp_graph_destroy(((vkpy_graph_t *)self)->graph);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *vkpy__value_list(const vkp_graph_t *g, int32_t n,
                                  const int32_t *values) {
  PyObject *list = PyList_New(n);
  if (!list) return NULL;
  for (int32_t i = 0; i < n; ++i) {
    const vkp_value_t *v = &g->values[values[i]];
    PyObject *shape = vkpy_shape_tuple(v->rank, v->shape);
    PyObject *item = shape ? Py_BuildValue("(ssN)", v->name, vkp_dtype_name(v->dtype), shape)
                           : NULL;
    if (!item) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

static PyObject *vkpy__graph_info(PyObject *self, PyObject *unused) {
  const vkp_graph_t *g = ((vkpy_graph_t *)self)->graph;
  PyObject *nodes = PyList_New(g->n_nodes);
  if (!nodes) return NULL;
  for (int32_t i = 0; i < g->n_nodes; ++i) {
    const vkp_node_t *n = &g->nodes[i];
    PyObject *item = Py_BuildValue("(ssz)", n->name, vkp_op_name(n->op), n->target);
    if (!item) {
      Py_DECREF(nodes);
      return NULL;
    }
    PyList_SET_ITEM(nodes, i, item);
  }
  return Py_BuildValue("{s:s,s:N,s:N,s:N,s:n}", "name", g->name, "inputs",
                       vkpy__value_list(g, g->n_inputs, g->inputs), "outputs",
                       vkpy__value_list(g, g->n_outputs, g->outputs), "nodes", nodes,
                       "constant_bytes", (Py_ssize_t)vkp_graph_constant_bytes(g));
}

static PyObject *vkpy__lookup_target(PyObject *reg, const char *name,
                                     const vkp_target_t **out) {
  vkp_status_t st = vkp_registry_lookup(vkpy__registry_ptr(reg), name, out);
  return st ? vkpy_raise(st) : Py_None;
}

static PyObject *vkpy__graph_check(PyObject *self, PyObject *args) {
  const char *target_name;
  if (!PyArg_ParseTuple(args, "s", &target_name)) return NULL;
  PyObject *reg = vkpy_registry_get();
  if (!reg) return NULL;
  const vkp_target_t *target = NULL;
  PyObject *ok = vkpy__lookup_target(reg, target_name, &target);
  vkp_status_t st = NULL;
  if (ok) {
    Py_BEGIN_ALLOW_THREADS
    st = vkp_target_check_graph(target, ((vkpy_graph_t *)self)->graph);
    Py_END_ALLOW_THREADS
  }
  Py_DECREF(reg);
  if (!ok) return NULL;
  if (st) return vkpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *vkpy__graph_save(PyObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_graph_save(((vkpy_graph_t *)self)->graph, PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return vkpy_raise(st);
  Py_RETURN_NONE;
}

// Converts a sequence of input objects against `specs`; on failure releases
// what was converted and returns -1.
static int vkpy__convert_inputs(PyObject *seq, int32_t n, const vkpy_spec_t *specs,
                                vkpy_input_t *inputs) {
  for (int32_t i = 0; i < n; ++i) {
    if (vkpy_input_from_object(PySequence_Fast_GET_ITEM(seq, i), &specs[i],
                               &inputs[i]) < 0) {
      while (i-- > 0) vkpy_input_release(&inputs[i]);
      return -1;
    }
  }
  return 0;
}

// graph.run(target, inputs): the whole graph once on one target.
static PyObject *vkpy__graph_run(PyObject *self, PyObject *args) {
  const char *target_name;
  PyObject *in_obj;
  if (!PyArg_ParseTuple(args, "sO", &target_name, &in_obj)) return NULL;
  const vkp_graph_t *g = ((vkpy_graph_t *)self)->graph;
  PyObject *seq = PySequence_Fast(in_obj, "inputs must be a sequence");
  if (!seq) return NULL;
  if (PySequence_Fast_GET_SIZE(seq) != g->n_inputs) {
    Py_DECREF(seq);
    return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "graph '%s' has %d inputs, got %zd",
                           g->name, (int)g->n_inputs, PySequence_Fast_GET_SIZE(seq));
  }
  PyObject *reg = vkpy_registry_get();
  const vkp_target_t *target = NULL;
  if (!reg || !vkpy__lookup_target(reg, target_name, &target)) {
    Py_XDECREF(reg);
    Py_DECREF(seq);
    return NULL;
  }
  vkpy_spec_t specs[64];
  vkpy_input_t inputs[64];
  vkp_tensor_t views[64];
  vkp_tensor_t outputs[64];
  if (g->n_inputs > 64 || g->n_outputs > 64) {
    Py_DECREF(reg);
    Py_DECREF(seq);
    return vkpy_raise_code(VKP_STATUS_UNSUPPORTED, "graph '%s': more than 64 inputs or outputs",
                           g->name);
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) {
    const vkp_value_t *v = &g->values[g->inputs[i]];
    specs[i].name = v->name;
    specs[i].dtype = v->dtype;
    specs[i].rank = v->rank;
    memcpy(specs[i].shape, v->shape, sizeof v->shape);
    specs[i].bounded_axis = v->bounded ? v->bounded_axis : -1;
  }
  if (vkpy__convert_inputs(seq, g->n_inputs, specs, inputs) < 0) {
    Py_DECREF(reg);
    Py_DECREF(seq);
    return NULL;
  }
  for (int32_t i = 0; i < g->n_inputs; ++i) views[i] = inputs[i].view;
  memset(outputs, 0, sizeof outputs);
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_target_run_graph(target, g, /*options=*/NULL, views, outputs);
  Py_END_ALLOW_THREADS
  for (int32_t i = 0; i < g->n_inputs; ++i) vkpy_input_release(&inputs[i]);
  Py_DECREF(reg);
  Py_DECREF(seq);
  if (st) return vkpy_raise(st);
  PyObject *result = PyTuple_New(g->n_outputs);
  for (int32_t i = 0; i < g->n_outputs; ++i) {
    PyObject *arr = result ? vkpy_array_from_tensor(&outputs[i]) : NULL;
    if (!arr) {
      Py_CLEAR(result);
      vkp_tensor_deinit(&outputs[i]);
      continue;
    }
    PyTuple_SET_ITEM(result, i, arr);
  }
  return result;
}

static PyMethodDef vkpy__graph_methods[] = {
    {"info", vkpy__graph_info, METH_NOARGS, "name, inputs, outputs, nodes"},
    {"check", vkpy__graph_check, METH_VARARGS, "check(target): every node supported"},
    {"save", vkpy__graph_save, METH_VARARGS, "save(path): JSON plus .bin"},
    {"run", vkpy__graph_run, METH_VARARGS, "run(target, inputs) -> outputs"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject vkpy_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkpipe._vkpipe.Graph",
    .tp_basicsize = sizeof(vkpy_graph_t),
    .tp_dealloc = vkpy__graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A validated vkpipe graph (made by load_graph).",
    .tp_methods = vkpy__graph_methods,
};

// load_graph(path, dims=[(name, size[, up_to])], shapes=[(input, [dims])], no_fusion)
PyObject *vkpy_load_graph(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", "dims", "shapes", "no_fusion", NULL};
  PyObject *path, *dims_obj = Py_None, *shapes_obj = Py_None;
  int no_fusion = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|OOp", kwlist, PyUnicode_FSConverter,
                                   &path, &dims_obj, &shapes_obj, &no_fusion))
    return NULL;
  enum { kMaxBindings = 64 };
  vkp_dim_binding_t dims[kMaxBindings];
  vkp_shape_binding_t shapes[kMaxBindings];
  vkp_graph_load_options_t opt = {.dims = dims, .shapes = shapes,
                                  .no_fusion = no_fusion != 0};
  PyObject *dims_seq = NULL, *shapes_seq = NULL, *result = NULL;
  if (dims_obj != Py_None) {
    dims_seq = PySequence_Fast(dims_obj, "dims must be a sequence of (name, size)");
    if (!dims_seq) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(dims_seq);
    if (n > kMaxBindings) {
      vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "more than %d dims", kMaxBindings);
      goto done;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      long long v;
      int up_to = 0;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(dims_seq, i), "sL|p;dims entries are "
                            "(name, size[, up_to])", &dims[i].name, &v, &up_to))
        goto done;
      dims[i].value = v;
      dims[i].up_to = up_to != 0;
    }
    opt.n_dims = (int32_t)n;
  }
  if (shapes_obj != Py_None) {
    shapes_seq = PySequence_Fast(shapes_obj, "shapes must be a sequence of (input, shape)");
    if (!shapes_seq) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(shapes_seq);
    if (n > kMaxBindings) {
      vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "more than %d shapes", kMaxBindings);
      goto done;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject *shape;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(shapes_seq, i),
                            "sO;shapes entries are (input, shape)", &shapes[i].input, &shape))
        goto done;
      PyObject *dseq = PySequence_Fast(shape, "a shape must be a sequence of ints");
      if (!dseq) goto done;
      Py_ssize_t rank = PySequence_Fast_GET_SIZE(dseq);
      if (rank > VKP_MAX_RANK) {
        Py_DECREF(dseq);
        vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "shape of '%s': rank %zd above %d",
                        shapes[i].input, rank, VKP_MAX_RANK);
        goto done;
      }
      shapes[i].rank = (int32_t)rank;
      for (Py_ssize_t d = 0; d < rank; ++d) {
        shapes[i].shape[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(dseq, d));
        if (shapes[i].shape[d] == -1 && PyErr_Occurred()) {
          Py_DECREF(dseq);
          goto done;
        }
      }
      Py_DECREF(dseq);
    }
    opt.n_shapes = (int32_t)n;
  }
  vkp_graph_t *graph = NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_graph_load_with_options(PyBytes_AS_STRING(path), &opt, &graph);
  Py_END_ALLOW_THREADS
  if (st) {
    vkpy_raise(st);
    goto done;
  }
  vkpy_graph_t *obj = PyObject_New(vkpy_graph_t, &vkpy_graph_type);
  if (!obj) {
    vkp_graph_destroy(graph);
    goto done;
  }
  obj->graph = graph;
  result = (PyObject *)obj;
done:
  Py_XDECREF(dims_seq);
  Py_XDECREF(shapes_seq);
  Py_DECREF(path);
  return result;
}

// ---------------------------------------------------------------------------
// Artifact

static void vkpy__artifact_dealloc(PyObject *self) {
  vkp_artifact_destroy(((vkpy_artifact_t *)self)->artifact);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *vkpy__plan_wrap(vkp_plan_t *owned, const vkp_plan_t *borrowed,
                                 PyObject *artifact);

static PyObject *vkpy__artifact_plan(PyObject *self, PyObject *unused) {
  return vkpy__plan_wrap(NULL, vkp_artifact_plan(((vkpy_artifact_t *)self)->artifact), self);
}

static PyObject *vkpy__artifact_metadata(PyObject *self, PyObject *unused) {
  return PyUnicode_FromString(vkp_artifact_metadata(((vkpy_artifact_t *)self)->artifact));
}

static PyMethodDef vkpy__artifact_methods[] = {
    {"plan", vkpy__artifact_plan, METH_NOARGS, "the artifact's plan"},
    {"metadata", vkpy__artifact_metadata, METH_NOARGS, "metadata JSON text"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject vkpy_artifact_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkpipe._vkpipe.Artifact",
    .tp_basicsize = sizeof(vkpy_artifact_t),
    .tp_dealloc = vkpy__artifact_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded .vkp artifact (made by load_artifact).",
    .tp_methods = vkpy__artifact_methods,
};

PyObject *vkpy_is_artifact(PyObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
  bool yes = vkp_artifact_is_artifact(PyBytes_AS_STRING(path));
  Py_DECREF(path);
  return PyBool_FromLong(yes);
}

PyObject *vkpy_load_artifact(PyObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
  vkp_artifact_t *art = NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_artifact_load(PyBytes_AS_STRING(path), &art);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return vkpy_raise(st);
  vkpy_artifact_t *obj = PyObject_New(vkpy_artifact_t, &vkpy_artifact_type);
  if (!obj) {
    vkp_artifact_destroy(art);
    return NULL;
  }
  obj->artifact = art;
  return (PyObject *)obj;
}

// ---------------------------------------------------------------------------
// Plan

static void vkpy__plan_dealloc(PyObject *self) {
  vkpy_plan_t *p = (vkpy_plan_t *)self;
  vkp_plan_destroy(p->owned);
  Py_XDECREF(p->artifact);
  Py_TYPE(self)->tp_free(self);
}

static PyObject *vkpy__plan_wrap(vkp_plan_t *owned, const vkp_plan_t *borrowed,
                                 PyObject *artifact) {
  vkpy_plan_t *obj = PyObject_New(vkpy_plan_t, &vkpy_plan_type);
  if (!obj) {
    vkp_plan_destroy(owned);
    return NULL;
  }
  obj->owned = owned;
  obj->plan = owned ? owned : borrowed;
  Py_XINCREF(artifact);
  obj->artifact = artifact;
  return (PyObject *)obj;
}

int vkpy_plan_input_specs(const vkp_plan_t *plan, vkpy_spec_t *out) {
  for (int32_t i = 0; i < plan->n_inputs; ++i) {
    const vkp_value_t *v = vkp_plan_input_value(plan, i);
    if (!v) {
      vkpy_raise_code(VKP_STATUS_INTERNAL, "plan '%s': global input '%s' feeds no stage",
                      plan->name, plan->inputs[i]);
      return -1;
    }
    out[i].name = plan->inputs[i];
    out[i].dtype = v->dtype;
    out[i].rank = v->rank;
    memcpy(out[i].shape, v->shape, sizeof v->shape);
    out[i].bounded_axis = v->bounded ? v->bounded_axis : -1;
  }
  return 0;
}

static PyObject *vkpy__plan_info(PyObject *self, PyObject *unused) {
  const vkp_plan_t *plan = ((vkpy_plan_t *)self)->plan;
  PyObject *stages = PyList_New(plan->n_stages);
  if (!stages) return NULL;
  for (int32_t s = 0; s < plan->n_stages; ++s) {
    const vkp_plan_stage_t *st = &plan->stages[s];
    PyObject *nodes = PyList_New(st->graph->n_nodes);
    PyObject *fallbacks = PyList_New(st->n_fallbacks);
    if (!nodes || !fallbacks) goto fail_stage;
    for (int32_t n = 0; n < st->graph->n_nodes; ++n) {
      PyObject *name = PyUnicode_FromString(st->graph->nodes[n].name);
      if (!name) goto fail_stage;
      PyList_SET_ITEM(nodes, n, name);
    }
    for (int32_t f = 0; f < st->n_fallbacks; ++f) {
      const vkp_plan_fallback_t *fb = &st->fallbacks[f];
      PyObject *item = Py_BuildValue("(sss)", fb->node, fb->instead_of, fb->reason);
      if (!item) goto fail_stage;
      PyList_SET_ITEM(fallbacks, f, item);
    }
    PyObject *ins = vkpy__value_list(st->graph, st->graph->n_inputs, st->graph->inputs);
    PyObject *outs = vkpy__value_list(st->graph, st->graph->n_outputs, st->graph->outputs);
    PyObject *item = Py_BuildValue("{s:s,s:s,s:d,s:i,s:N,s:N,s:N,s:N,s:i}", "name", st->name,
                                   "target", st->target, "estimated_ms", st->estimated_ms,
                                   "threads", (int)st->threads, "nodes", nodes, "fallbacks",
                                   fallbacks, "inputs", ins, "outputs", outs, "replicas",
                                   st->replicas > 1 ? (int)st->replicas : 1);
    if (!item) {
      Py_DECREF(stages);
      return NULL;
    }
    PyList_SET_ITEM(stages, s, item);
    continue;
  fail_stage:
    Py_XDECREF(nodes);
    Py_XDECREF(fallbacks);
    Py_DECREF(stages);
    return NULL;
  }
  PyObject *inputs = PyList_New(plan->n_inputs);
  PyObject *outputs = PyList_New(plan->n_outputs);
  vkpy_spec_t specs[64];
  if (!inputs || !outputs || plan->n_inputs > 64 || vkpy_plan_input_specs(plan, specs) < 0) {
    if (!PyErr_Occurred()) vkpy_raise_code(VKP_STATUS_UNSUPPORTED, "more than 64 inputs");
    Py_XDECREF(inputs);
    Py_XDECREF(outputs);
    Py_DECREF(stages);
    return NULL;
  }
  for (int32_t i = 0; i < plan->n_inputs; ++i)
    PyList_SET_ITEM(inputs, i,
                    Py_BuildValue("(ssN)", specs[i].name, vkp_dtype_name(specs[i].dtype),
                                  vkpy_shape_tuple(specs[i].rank, specs[i].shape)));
  for (int32_t i = 0; i < plan->n_outputs; ++i)
    PyList_SET_ITEM(outputs, i, PyUnicode_FromString(plan->outputs[i]));
  return Py_BuildValue("{s:s,s:N,s:N,s:N,s:z}", "name", plan->name, "stages", stages,
                       "inputs", inputs, "outputs", outputs, "source", plan->source);
}

static PyObject *vkpy__plan_to_json(PyObject *self, PyObject *unused) {
  char *json = NULL;
  vkp_status_t st = vkp_plan_to_json(((vkpy_plan_t *)self)->plan, &json);
  if (st) return vkpy_raise(st);
  PyObject *s = PyUnicode_FromString(json);
  vkp_free(json);
  return s;
}

static PyObject *vkpy__plan_save(PyObject *self, PyObject *args) {
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path)) return NULL;
  vkp_status_t st = vkp_plan_save(((vkpy_plan_t *)self)->plan, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (st) return vkpy_raise(st);
  Py_RETURN_NONE;
}

// plan.build(path, model=None, policy=None, profile_json=None, threads=0)
static PyObject *vkpy__plan_build(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"path", "model", "policy", "profile_json", "threads", NULL};
  PyObject *path;
  const char *model = NULL, *policy = NULL, *profile_json = NULL;
  int threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|zzzi", kwlist, PyUnicode_FSConverter,
                                   &path, &model, &policy, &profile_json, &threads))
    return NULL;
  const vkp_plan_t *plan = ((vkpy_plan_t *)self)->plan;
  PyObject *reg = vkpy_registry_get();
  vkp_compile_options_t *copts = NULL;
  if (reg && threads > 0) {
    copts = PyMem_Calloc((size_t)plan->n_stages, sizeof *copts);
    if (!copts) PyErr_NoMemory();
    for (int32_t s = 0; copts && s < plan->n_stages; ++s) copts[s].threads = threads;
  }
  if (!reg || (threads > 0 && !copts)) {
    Py_XDECREF(reg);
    Py_DECREF(path);
    return NULL;
  }
  vkp_artifact_info_t info = {.model = model, .policy = policy,
                              .profile_json = profile_json, .stage_compile_options = copts};
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkp_artifact_build(plan, vkpy__registry_ptr(reg), &info, PyBytes_AS_STRING(path));
  Py_END_ALLOW_THREADS
  PyMem_Free(copts);
  Py_DECREF(reg);
  Py_DECREF(path);
  if (st) return vkpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *vkpy__plan_is_artifact(PyObject *self, void *closure) {
  return PyBool_FromLong(((vkpy_plan_t *)self)->artifact != NULL);
}

static PyGetSetDef vkpy__plan_getset[] = {
    {"from_artifact", vkpy__plan_is_artifact, NULL, "made from a .vkp", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef vkpy__plan_methods[] = {
    {"info", vkpy__plan_info, METH_NOARGS, "stages, inputs, outputs"},
    {"to_json", vkpy__plan_to_json, METH_NOARGS, "the plan file's text"},
    {"save", vkpy__plan_save, METH_VARARGS, "save(path)"},
    {"build", (PyCFunction)(void (*)(void))vkpy__plan_build, METH_VARARGS | METH_KEYWORDS,
     "build(path, model=None, policy=None, profile_json=None, threads=0)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject vkpy_plan_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "vkpipe._vkpipe.Plan",
    .tp_basicsize = sizeof(vkpy_plan_t),
    .tp_dealloc = vkpy__plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A validated pipeline plan (made by partition or an artifact).",
    .tp_methods = vkpy__plan_methods,
    .tp_getset = vkpy__plan_getset,
};

// Loads a profile from JSON text, or the defaults when `json` is NULL or
// "default".
static vkp_status_t vkpy__profile(const char *json, vkp_profile_t **out) {
  return json && strcmp(json, "default") != 0 ? vkp_profile_load_json(json, strlen(json), out)
                                               : vkp_profile_create_default(out);
}

// The profile partition() plans with, as the command-line tools choose it
// (tools/tool_profile.c): `json` (a profile's JSON text, or "default" for the
// documented defaults, which no JSON text can be); else $VKPIPE_PROFILE
// ("default" or a file); else the machine's own, measured on the first run
// (a few seconds, a line on stderr) and cached (vkp_profile_create_for_machine).
// Called without the GIL.
static void vkpy__measure_progress(void *user, const char *target, int32_t done,
                                   int32_t total) {
  (void)user;
  (void)total;
  if (done == 0)
    fprintf(stderr, "vkpipe: first run on this machine: measuring its profile "
                    "(once, a few seconds; VKPIPE_PROFILE=default skips it):");
  if (target) fprintf(stderr, " %s", target);
  else fprintf(stderr, ", done\n");
  fflush(stderr);
}

static vkp_status_t vkpy__partition_profile(const char *json, const vkp_registry_t *registry,
                                            vkp_profile_t **out) {
  if (!json) {
    const char *env = getenv("VKPIPE_PROFILE");
    if (env && env[0] && strcmp(env, "default") != 0) return vkp_profile_load(env, out);
    if (!env || !env[0]) {
      vkp_machine_profile_options_t o = {
          .calibrate = {.progress = vkpy__measure_progress}};
      return vkp_profile_create_for_machine(registry, &o, out, NULL, NULL);
    }
    return vkp_profile_create_default(out);
  }
  if (strcmp(json, "default") == 0) return vkp_profile_create_default(out);
  return vkp_profile_load_json(json, strlen(json), out);
}

// partition(graph, policy, fallback, stages, max_stages, assigns,
//           keep_islands, profile_json, name, source, replicas) -> (plan, info)
// replicas: copies of every stage (0 or 1: one; -1: choose).
PyObject *vkpy_partition(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"graph",        "policy", "fallback", "stages", "max_stages",
                           "assigns",      "keep_islands", "profile_json", "name", "source",
                           "replicas",     NULL};
  PyObject *graph_obj, *assigns_obj = Py_None;
  const char *policy = NULL, *fallback = NULL, *profile_json = NULL, *name = "plan",
             *source = NULL;
  int stages = 0, max_stages = 0, keep_islands = 0, replicas = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|zziiOpzzzi", kwlist, &vkpy_graph_type,
                                   &graph_obj, &policy, &fallback, &stages, &max_stages,
                                   &assigns_obj, &keep_islands, &profile_json, &name, &source,
                                   &replicas))
    return NULL;
  if (stages < 0 || max_stages < 0)
    return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "stages must be >= 0, got %d",
                           stages < 0 ? stages : max_stages);
  enum { kMaxAssigns = 64 };
  vkp_assign_t assigns[kMaxAssigns];
  int32_t n_assigns = 0;
  PyObject *aseq = NULL;
  if (assigns_obj != Py_None) {
    aseq = PySequence_Fast(assigns_obj, "assign must be a sequence of (pattern, target)");
    if (!aseq) return NULL;
    if (PySequence_Fast_GET_SIZE(aseq) > kMaxAssigns) {
      Py_DECREF(aseq);
      return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT, "more than %d assignments",
                             kMaxAssigns);
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(aseq); ++i) {
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(aseq, i),
                            "ss;assign entries are (pattern, target)", &assigns[i].pattern,
                            &assigns[i].target)) {
        Py_DECREF(aseq);
        return NULL;
      }
    }
    n_assigns = (int32_t)PySequence_Fast_GET_SIZE(aseq);
  }
  PyObject *reg = vkpy_registry_get();
  if (!reg) {
    Py_XDECREF(aseq);
    return NULL;
  }
  const vkp_graph_t *graph = ((vkpy_graph_t *)graph_obj)->graph;
  vkp_partition_options_t opt = {.policy = policy, .fallback = fallback,
                                 .n_assigns = n_assigns, .assigns = assigns,
                                 .stages = stages, .max_auto_stages = max_stages,
                                 .keep_islands = keep_islands != 0, .replicas = replicas};
  vkp_profile_t *prof = NULL;
  vkp_partition_t *part = NULL;
  vkp_plan_t *plan = NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkpy__partition_profile(profile_json, vkpy__registry_ptr(reg), &prof);
  if (!st) st = vkp_partition_create(graph, vkpy__registry_ptr(reg), prof, &opt, &part);
  if (!st) st = vkp_partition_to_plan(part, name, &plan);
  if (!st && source) st = vkp_plan_set_source(plan, source);
  Py_END_ALLOW_THREADS
  Py_XDECREF(aseq);
  PyObject *result = NULL;
  if (st) {
    vkpy_raise(st);
    goto done;
  }
  PyObject *stage_info = PyList_New(part->n_stages);
  PyObject *moved = PyList_New(0);
  if (!stage_info || !moved) goto fail_info;
  for (int32_t s = 0; s < part->n_stages; ++s) {
    const vkp_partition_stage_t *ps = &part->stages[s];
    PyObject *item = Py_BuildValue("{s:d,s:d,s:d,s:d}", "compute_ms", ps->compute_s * 1e3,
                                   "transfer_ms", ps->transfer_s * 1e3, "bytes_in",
                                   ps->bytes_in, "bytes_out", ps->bytes_out);
    if (!item) goto fail_info;
    PyList_SET_ITEM(stage_info, s, item);
  }
  for (int32_t n = 0; n < graph->n_nodes; ++n) {
    if (!part->node_reason[n]) continue;
    PyObject *item = Py_BuildValue(
        "(sss)", graph->nodes[n].name,
        vkp_partition_target_name(part, part->node_target[n]), part->node_reason[n]);
    if (!item || PyList_Append(moved, item) < 0) {
      Py_XDECREF(item);
      goto fail_info;
    }
    Py_DECREF(item);
  }
  PyObject *info = Py_BuildValue("{s:d,s:z,s:N,s:N}", "bottleneck_ms", part->bottleneck_s * 1e3,
                                 "notes", part->notes, "stages", stage_info, "moved", moved);
  stage_info = moved = NULL;
  if (!info) goto fail_info;
  PyObject *plan_obj = vkpy__plan_wrap(plan, NULL, NULL);
  plan = NULL;
  if (!plan_obj) {
    Py_DECREF(info);
    goto done;
  }
  result = Py_BuildValue("(NN)", plan_obj, info);
  goto done;
fail_info:
  Py_XDECREF(stage_info);
  Py_XDECREF(moved);
done:
  vkp_plan_destroy(plan);
  vkp_partition_destroy(part);
  vkp_profile_destroy(prof);
  Py_DECREF(reg);
  return result;
}

// calibrate(profile_json=None, matmul_size=0, elementwise=0, repeats=0)
//   -> (profile_json, notes)
PyObject *vkpy_calibrate(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *kwlist[] = {"profile_json", "matmul_size", "elementwise", "repeats", NULL};
  const char *profile_json = NULL;
  int matmul_size = 0, repeats = 0;
  long long elementwise = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|ziLi", kwlist, &profile_json, &matmul_size,
                                   &elementwise, &repeats))
    return NULL;
  if (matmul_size < 0 || elementwise < 0 || repeats < 0)
    return vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                           "calibrate: sizes and repeats must be >= 0");
  PyObject *reg = vkpy_registry_get();
  if (!reg) return NULL;
  vkp_calibrate_options_t opt = {.matmul_size = matmul_size, .elementwise = elementwise,
                                 .repeats = repeats};
  vkp_profile_t *prof = NULL;
  char *notes = NULL, *json = NULL;
  vkp_status_t st;
  Py_BEGIN_ALLOW_THREADS
  st = vkpy__profile(profile_json, &prof);
  if (!st) st = vkp_profile_calibrate(prof, vkpy__registry_ptr(reg), &opt, &notes);
  if (!st) st = vkp_profile_to_json(prof, &json);
  Py_END_ALLOW_THREADS
  Py_DECREF(reg);
  vkp_profile_destroy(prof);
  PyObject *result = st ? vkpy_raise(st) : Py_BuildValue("(sz)", json, notes);
  vkp_free(json);
  vkp_free(notes);
  return result;
}
