// SPDX-License-Identifier: Apache-2.0
// Tensors across the boundary: NumPy arrays and DLPack producers in (as
// borrowed views, checked against what the model expects), library-owned
// output tensors out as NumPy arrays that own them (no copy either way).
#include <string.h>

#include "vkpy.h"

// The vkp dtype of a NumPy dtype, by kind and size (so that "long" and
// "long long" both read as int64). A uint16 array stands for bfloat16 when
// bfloat16 is what the model wants: NumPy has no bfloat16, and the raw bits
// are what both sides store.
static bool vkpy__dtype_of_descr(const PyArray_Descr *d, vkp_dtype_t want,
                                 vkp_dtype_t *out) {
  switch (d->kind) {
    case 'f':
      if (d->elsize == 4) *out = VKP_DTYPE_FLOAT32;
      else if (d->elsize == 2) *out = VKP_DTYPE_FLOAT16;
      else if (d->elsize == 8) *out = VKP_DTYPE_FLOAT64;
      else return false;
      return true;
    case 'i':
      if (d->elsize == 8) *out = VKP_DTYPE_INT64;
      else if (d->elsize == 4) *out = VKP_DTYPE_INT32;
      else if (d->elsize == 2) *out = VKP_DTYPE_INT16;
      else if (d->elsize == 1) *out = VKP_DTYPE_INT8;
      else return false;
      return true;
    case 'u':
      if (d->elsize == 8) *out = VKP_DTYPE_UINT64;
      else if (d->elsize == 4) *out = VKP_DTYPE_UINT32;
      else if (d->elsize == 2)
        *out = want == VKP_DTYPE_BFLOAT16 ? VKP_DTYPE_BFLOAT16 : VKP_DTYPE_UINT16;
      else if (d->elsize == 1) *out = VKP_DTYPE_UINT8;
      else return false;
      return true;
    case 'b':
      if (d->elsize != 1) return false;
      *out = VKP_DTYPE_BOOL;
      return true;
    default:
      return false;
  }
}

// The NumPy type number an output of `dtype` comes back as.
static int vkpy__typenum_of_dtype(vkp_dtype_t dtype) {
  switch (dtype) {
    case VKP_DTYPE_FLOAT32: return NPY_FLOAT32;
    case VKP_DTYPE_FLOAT16: return NPY_FLOAT16;
    case VKP_DTYPE_FLOAT64: return NPY_FLOAT64;
    case VKP_DTYPE_INT64: return NPY_INT64;
    case VKP_DTYPE_INT32: return NPY_INT32;
    case VKP_DTYPE_INT16: return NPY_INT16;
    case VKP_DTYPE_INT8: return NPY_INT8;
    case VKP_DTYPE_UINT64: return NPY_UINT64;
    case VKP_DTYPE_UINT32: return NPY_UINT32;
    case VKP_DTYPE_UINT16: return NPY_UINT16;
    case VKP_DTYPE_BFLOAT16: return NPY_UINT16;  // raw bits, see above
    case VKP_DTYPE_UINT8: return NPY_UINT8;
    case VKP_DTYPE_BOOL: return NPY_BOOL;
    case VKP_DTYPE_COUNT: break;
  }
  return -1;
}

PyObject *vkpy_shape_tuple(int32_t rank, const int64_t *shape) {
  PyObject *t = PyTuple_New(rank);
  if (!t) return NULL;
  for (int32_t i = 0; i < rank; ++i) {
    PyObject *d = PyLong_FromLongLong((long long)shape[i]);
    if (!d) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, d);
  }
  return t;
}

static bool vkpy__shape_equal(const vkp_tensor_t *t, const vkpy_spec_t *spec) {
  if (t->rank != spec->rank) return false;
  for (int32_t i = 0; i < t->rank; ++i)
    if (i == spec->bounded_axis ? t->shape[i] > spec->shape[i]
                                : t->shape[i] != spec->shape[i])
      return false;
  return true;
}

// Checks a converted view against the spec; raises naming the input.
static int vkpy__check_view(const vkp_tensor_t *view, const vkpy_spec_t *spec) {
  if (view->dtype != spec->dtype) {
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': dtype %s does not match the model's %s "
                    "(convert it first, e.g. x.astype(numpy.%s))",
                    spec->name, vkp_dtype_name(view->dtype),
                    vkp_dtype_name(spec->dtype),
                    spec->dtype == VKP_DTYPE_BFLOAT16 ? "uint16"
                                                      : vkp_dtype_name(spec->dtype));
    return -1;
  }
  if (!vkpy__shape_equal(view, spec)) {
    char got[160], want[160];
    vkp_shape_format(view->rank, view->shape, got, sizeof got);
    vkp_shape_format(spec->rank, spec->shape, want, sizeof want);
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': shape %s does not match the model's %s%s",
                    spec->name, got, want,
                    spec->bounded_axis >= 0 ? " (at most that along the varying axis)" : "");
    return -1;
  }
  return 0;
}

static int vkpy__from_array(PyArrayObject *arr, const vkpy_spec_t *spec,
                            vkpy_input_t *out) {
  const PyArray_Descr *descr = PyArray_DESCR(arr);
  vkp_dtype_t dtype;
  if (!vkpy__dtype_of_descr(descr, spec->dtype, &dtype) ||
      !PyArray_ISNOTSWAPPED(arr)) {
    PyObject *repr = PyObject_Str((PyObject *)descr);
    const char *name = repr ? PyUnicode_AsUTF8(repr) : NULL;
    PyErr_Clear();
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': NumPy dtype %s%s has no vkpipe equivalent "
                    "(the model wants %s)",
                    spec->name, name ? name : "?",
                    PyArray_ISNOTSWAPPED(arr) ? "" : " (non-native byte order)",
                    vkp_dtype_name(spec->dtype));
    Py_XDECREF(repr);
    return -1;
  }
  if (!PyArray_IS_C_CONTIGUOUS(arr)) {
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': the array is not C-contiguous (a transposed "
                    "or sliced view); pass numpy.ascontiguousarray(x)",
                    spec->name);
    return -1;
  }
  int nd = PyArray_NDIM(arr);
  if (nd > VKP_MAX_RANK) {
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': rank %d is above the maximum %d", spec->name,
                    nd, VKP_MAX_RANK);
    return -1;
  }
  int64_t shape[VKP_MAX_RANK] = {0};
  const npy_intp *dims = PyArray_DIMS(arr);
  for (int i = 0; i < nd; ++i) shape[i] = (int64_t)dims[i];
  vkp_status_t st = vkp_tensor_init_view(&out->view, dtype, nd, shape,
                                         PyArray_DATA(arr));
  if (st) {
    vkpy_raise(vkp_status_annotate(st, "input '%s'", spec->name));
    return -1;
  }
  if (vkpy__check_view(&out->view, spec) < 0) return -1;
  Py_INCREF(arr);
  out->owner = (PyObject *)arr;
  out->managed = NULL;
  return 0;
}

static int vkpy__from_dlpack(PyObject *obj, PyObject *method,
                             const vkpy_spec_t *spec, vkpy_input_t *out) {
  PyObject *capsule = PyObject_CallNoArgs(method);
  if (!capsule) return -1;
  DLManagedTensor *managed = PyCapsule_IsValid(capsule, "dltensor")
                                 ? PyCapsule_GetPointer(capsule, "dltensor")
                                 : NULL;
  if (!managed) {
    Py_DECREF(capsule);
    PyErr_Clear();
    vkpy_raise_code(VKP_STATUS_INVALID_ARGUMENT,
                    "input '%s': __dlpack__() of %s did not return an unused "
                    "'dltensor' capsule",
                    spec->name, Py_TYPE(obj)->tp_name);
    return -1;
  }
  // The consumer owns the tensor now (DLPack's rule): rename the capsule so
  // its destructor leaves it alone, and call the deleter when done.
  if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
    Py_DECREF(capsule);
    return -1;
  }
  Py_DECREF(capsule);
  vkp_status_t st = vkp_tensor_from_dlpack(&managed->dl_tensor, &out->view);
  if (!st && vkpy__check_view(&out->view, spec) < 0) {
    if (managed->deleter) managed->deleter(managed);
    return -1;
  }
  if (st) {
    if (managed->deleter) managed->deleter(managed);
    vkpy_raise(vkp_status_annotate(st, "input '%s' (%s via DLPack)", spec->name,
                                   Py_TYPE(obj)->tp_name));
    return -1;
  }
  out->owner = NULL;
  out->managed = managed;
  return 0;
}

int vkpy_input_from_object(PyObject *obj, const vkpy_spec_t *spec,
                           vkpy_input_t *out) {
  memset(out, 0, sizeof *out);
  if (PyArray_Check(obj)) return vkpy__from_array((PyArrayObject *)obj, spec, out);
  PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
  if (!method) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
  }
  if (method) {
    int rc = vkpy__from_dlpack(obj, method, spec, out);
    Py_DECREF(method);
    return rc;
  }
  PyErr_Format(PyExc_TypeError,
               "input '%s': expected a numpy.ndarray or an object with "
               "__dlpack__, got %s",
               spec->name, Py_TYPE(obj)->tp_name);
  return -1;
}

void vkpy_input_release(vkpy_input_t *input) {
  Py_CLEAR(input->owner);
  if (input->managed && input->managed->deleter)
    input->managed->deleter(input->managed);
  input->managed = NULL;
  vkp_tensor_deinit(&input->view);  // a view: frees nothing but the struct
}

// ---------------------------------------------------------------------------
// Outputs

static const char vkpy__tensor_capsule[] = "vkpipe.tensor";

static void vkpy__tensor_capsule_free(PyObject *capsule) {
  vkp_tensor_t *t = PyCapsule_GetPointer(capsule, vkpy__tensor_capsule);
  if (!t) {
    PyErr_Clear();
    return;
  }
  vkp_tensor_deinit(t);
  PyMem_RawFree(t);
}

PyObject *vkpy_array_from_tensor(vkp_tensor_t *tensor) {
  int typenum = vkpy__typenum_of_dtype(tensor->dtype);
  if (typenum < 0) {
    vkp_tensor_deinit(tensor);
    return vkpy_raise_code(VKP_STATUS_UNSUPPORTED, "output dtype %d unknown",
                           (int)tensor->dtype);
  }
  npy_intp dims[VKP_MAX_RANK];
  for (int32_t i = 0; i < tensor->rank; ++i) dims[i] = (npy_intp)tensor->shape[i];
  if (!tensor->owns_data || !tensor->data) {
    // Nothing to take over (an empty tensor, or a view): copy.
    PyObject *arr = PyArray_SimpleNew(tensor->rank, dims, typenum);
    if (arr && vkp_tensor_nbytes(tensor))
      memcpy(PyArray_DATA((PyArrayObject *)arr), tensor->data,
             vkp_tensor_nbytes(tensor));
    vkp_tensor_deinit(tensor);
    return arr;
  }
  vkp_tensor_t *held = PyMem_RawMalloc(sizeof *held);
  if (!held) {
    vkp_tensor_deinit(tensor);
    return PyErr_NoMemory();
  }
  *held = *tensor;
  memset(tensor, 0, sizeof *tensor);
  PyObject *capsule =
      PyCapsule_New(held, vkpy__tensor_capsule, vkpy__tensor_capsule_free);
  if (!capsule) {
    vkp_tensor_deinit(held);
    PyMem_RawFree(held);
    return NULL;
  }
  PyObject *arr = PyArray_SimpleNewFromData(held->rank, dims, typenum, held->data);
  if (!arr) {
    Py_DECREF(capsule);
    return NULL;
  }
  if (PyArray_SetBaseObject((PyArrayObject *)arr, capsule) < 0) {  // steals
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}
