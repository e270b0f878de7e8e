// SPDX-License-Identifier: Apache-2.0
// The vkpipe._vkpipe module: types, functions and exception classes.
#define VKPY_IMPORT_ARRAY
#include "vkpy.h"

static PyObject *vkpy__version(PyObject *self, PyObject *unused) {
  return PyUnicode_FromString(VKPY_VERSION);
}

static PyMethodDef vkpy__functions[] = {
    {"load_graph", (PyCFunction)(void (*)(void))vkpy_load_graph, METH_VARARGS | METH_KEYWORDS,
     "load_graph(path, dims=None, shapes=None, no_fusion=False) -> Graph"},
    {"load_artifact", vkpy_load_artifact, METH_VARARGS, "load_artifact(path) -> Artifact"},
    {"is_artifact", vkpy_is_artifact, METH_VARARGS, "is_artifact(path) -> bool"},
    {"partition", (PyCFunction)(void (*)(void))vkpy_partition, METH_VARARGS | METH_KEYWORDS,
     "partition(graph, ...) -> (Plan, info)"},
    {"targets", vkpy_targets, METH_NOARGS, "[(name, available, reason, device)]"},
    {"calibrate", (PyCFunction)(void (*)(void))vkpy_calibrate, METH_VARARGS | METH_KEYWORDS,
     "calibrate(profile_json=None, ...) -> (profile_json, notes)"},
    {"version", vkpy__version, METH_NOARGS, "the vkpipe version built against"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef vkpy__module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "vkpipe._vkpipe",
    .m_doc = "Low-level binding of libvkpipe; use the vkpipe package instead.",
    .m_size = -1,
    .m_methods = vkpy__functions,
};

PyMODINIT_FUNC PyInit__vkpipe(void);

PyMODINIT_FUNC PyInit__vkpipe(void) {
  import_array();
  PyTypeObject *types[] = {&vkpy_registry_type, &vkpy_graph_type, &vkpy_artifact_type,
                           &vkpy_plan_type, &vkpy_pipeline_type};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (PyType_Ready(types[i]) < 0) return NULL;
  PyObject *m = PyModule_Create(&vkpy__module);
  if (!m) return NULL;
  if (vkpy_errors_init(m) < 0) goto fail;
  static const char *const names[] = {"Registry", "Graph", "Artifact", "Plan", "Pipeline"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    Py_INCREF(types[i]);
    if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
      Py_DECREF(types[i]);
      goto fail;
    }
  }
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
