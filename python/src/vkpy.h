// SPDX-License-Identifier: Apache-2.0
//
// vkpipe._vkpipe: the CPython extension under the `vkpipe` package. It wraps
// the public C API (include/vkpipe/*.h, libvkpipe.so) in a few small types;
// vkpipe/__init__.py builds the Pythonic API (Model, Plan, Pipeline, Frame)
// on top of them.
//
// Rules every file here follows:
// - A vkp_status_t never escapes: vkpy_raise turns it into the exception of
//   its family (errors.c) carrying the library's message, and frees it.
// - Every call that can block or take long (loading, compiling, running,
//   waiting for a frame) runs with the GIL released; Python objects the C
//   call reads (input arrays) are kept alive by a reference held across it.
// - Output tensors become NumPy arrays without a copy: the array's base is a
//   capsule that owns the vkp_tensor_t and deinits it (tensor.c).
#ifndef VKPY_H_
#define VKPY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL vkpy_ARRAY_API
#ifndef VKPY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "vkpipe/artifact.h"
#include "vkpipe/cost.h"
#include "vkpipe/graph.h"
#include "vkpipe/partition.h"
#include "vkpipe/pipeline.h"
#include "vkpipe/plan.h"
#include "vkpipe/status.h"
#include "vkpipe/target.h"
#include "vkpipe/tensor.h"

// ---------------------------------------------------------------------------
// errors.c

// Creates the exception classes and adds them to `module`.
int vkpy_errors_init(PyObject *module);
// Sets the Python exception for `status` (consumed; must be non-NULL) and
// returns NULL.
PyObject *vkpy_raise(vkp_status_t status);
// Builds (without raising) the exception object for `status` (consumed).
PyObject *vkpy_exception_from_status(vkp_status_t status);
// Raises the family of `code` with a formatted message; returns NULL.
PyObject *vkpy_raise_code(vkp_status_code_t code, const char *fmt, ...)
    VKP_PRINTF(2, 3);

// ---------------------------------------------------------------------------
// tensor.c

// What a pipeline or graph expects of one input.
typedef struct vkpy_spec_t {
  const char *name;  // borrowed from the plan or graph
  vkp_dtype_t dtype;
  int32_t rank;
  int64_t shape[VKP_MAX_RANK];
  int32_t bounded_axis;  // an axis taking any extent up to shape[axis], or -1
} vkpy_spec_t;

// One converted input: `view` borrows memory that `owner` (a NumPy array) or
// `managed` (a DLPack producer's tensor) keeps alive until vkpy_input_release.
typedef struct vkpy_input_t {
  vkp_tensor_t view;
  PyObject *owner;          // strong reference, or NULL
  DLManagedTensor *managed; // call its deleter when done, or NULL
} vkpy_input_t;

// Converts `obj` (a NumPy array, or anything with __dlpack__) into a view
// checked against `spec`: dtype, shape, C-contiguity. Raises an exception
// naming the input and returns -1 on failure (nothing to release then).
int vkpy_input_from_object(PyObject *obj, const vkpy_spec_t *spec,
                           vkpy_input_t *out);
// Drops what vkpy_input_from_object holds. Needs the GIL.
void vkpy_input_release(vkpy_input_t *input);

// Turns `tensor` (consumed: its data moves into the array, the struct is
// zeroed) into a NumPy array without copying. NULL with an exception set on
// failure (the tensor is then deinitialised).
PyObject *vkpy_array_from_tensor(vkp_tensor_t *tensor);

// "float32", ... and a shape as a Python tuple.
PyObject *vkpy_shape_tuple(int32_t rank, const int64_t *shape);

// ---------------------------------------------------------------------------
// Types (module.c registers them)

// A registry of the built-in targets; one per process, shared by reference.
typedef struct vkpy_registry_t {
  PyObject_HEAD
  vkp_registry_t *registry;
} vkpy_registry_t;

// A validated graph.
typedef struct vkpy_graph_t {
  PyObject_HEAD
  vkp_graph_t *graph;
} vkpy_graph_t;

// A loaded .vkp artifact.
typedef struct vkpy_artifact_t {
  PyObject_HEAD
  vkp_artifact_t *artifact;
} vkpy_artifact_t;

// A validated plan: owned, or borrowed from `artifact` (kept alive).
typedef struct vkpy_plan_t {
  PyObject_HEAD
  vkp_plan_t *owned;
  const vkp_plan_t *plan;
  PyObject *artifact;  // vkpy_artifact_t or NULL
} vkpy_plan_t;

extern PyTypeObject vkpy_registry_type;
extern PyTypeObject vkpy_graph_type;
extern PyTypeObject vkpy_artifact_type;
extern PyTypeObject vkpy_plan_type;
extern PyTypeObject vkpy_pipeline_type;

// The process's registry (created on first use). New reference, or NULL
// with an exception set.
PyObject *vkpy_registry_get(void);

// model.c: module-level functions
PyObject *vkpy_load_graph(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *vkpy_load_artifact(PyObject *self, PyObject *args);
PyObject *vkpy_is_artifact(PyObject *self, PyObject *args);
PyObject *vkpy_partition(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *vkpy_targets(PyObject *self, PyObject *args);
PyObject *vkpy_calibrate(PyObject *self, PyObject *args, PyObject *kwargs);

// The global input specs of a validated plan (dtype and shape found through
// the stage inputs they bind to). `out` has plan->n_inputs entries.
int vkpy_plan_input_specs(const vkp_plan_t *plan, vkpy_spec_t *out);

#endif  // VKPY_H_
