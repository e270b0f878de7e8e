// SPDX-License-Identifier: Apache-2.0
// Status codes to Python exceptions: one class per family of codes, each also
// deriving from the built-in exception a Python caller would expect.
#include <assert.h>
#include <stdarg.h>

#include "vkpy.h"

// X(ENUM, "ClassName", builtin base, doc): the families.
#define VKPY_FAMILY_LIST(X)                                                  \
  X(BASE, "Error", NULL, "Base of every vkpipe error; .code names the status.") \
  X(INVALID, "InvalidArgumentError", PyExc_ValueError,                       \
    "A bad argument, attribute, dtype or shape (invalid argument, out of "   \
    "range, already exists).")                                               \
  X(PARSE, "ParseError", PyExc_ValueError,                                   \
    "A model, plan, profile or artifact file that cannot be read (parse "    \
    "error, data loss).")                                                    \
  X(NOT_FOUND, "NotFoundError", PyExc_LookupError,                           \
    "A name (input, target, stage, file) that does not exist.")              \
  X(UNSUPPORTED, "UnsupportedError", PyExc_NotImplementedError,              \
    "Something the library or a target cannot do (an op, a dtype).")         \
  X(IO, "IOError", PyExc_OSError, "Reading or writing a file failed.")       \
  X(DEVICE, "DeviceError", PyExc_RuntimeError,                               \
    "A target or device is unavailable or was lost.")                        \
  X(STATE, "StateError", PyExc_RuntimeError,                                 \
    "A call made at the wrong time (failed precondition, empty).")           \
  X(TIMEOUT, "TimeoutError", PyExc_TimeoutError, "A wait ran out of time.")  \
  X(CANCELLED, "CancelledError", PyExc_RuntimeError,                         \
    "The pipeline was closed before the frame finished.")                    \
  X(MEMORY, "OutOfMemoryError", PyExc_MemoryError, "An allocation failed.")  \
  X(INTERNAL, "InternalError", PyExc_RuntimeError,                           \
    "A bug in vkpipe: please report it with the message.")

typedef enum vkpy_family_t {
#define VKPY__FAMILY_ENUM(e, n, b, d) VKPY_FAMILY_##e,
  VKPY_FAMILY_LIST(VKPY__FAMILY_ENUM)
#undef VKPY__FAMILY_ENUM
  VKPY_FAMILY_COUNT
} vkpy_family_t;

// The family of every status code, in VKP_STATUS_CODE_LIST order.
static const vkpy_family_t vkpy__family_of_code[] = {
    VKPY_FAMILY_INTERNAL,     // OK never raises
    VKPY_FAMILY_INVALID,      // INVALID_ARGUMENT
    VKPY_FAMILY_PARSE,        // PARSE_ERROR
    VKPY_FAMILY_NOT_FOUND,    // NOT_FOUND
    VKPY_FAMILY_INVALID,      // ALREADY_EXISTS
    VKPY_FAMILY_MEMORY,       // OUT_OF_MEMORY
    VKPY_FAMILY_INVALID,      // OUT_OF_RANGE
    VKPY_FAMILY_UNSUPPORTED,  // UNSUPPORTED
    VKPY_FAMILY_IO,           // IO_ERROR
    VKPY_FAMILY_DEVICE,       // UNAVAILABLE
    VKPY_FAMILY_DEVICE,       // DEVICE_LOST
    VKPY_FAMILY_STATE,        // FAILED_PRECONDITION
    VKPY_FAMILY_STATE,        // EMPTY
    VKPY_FAMILY_TIMEOUT,      // TIMEOUT
    VKPY_FAMILY_CANCELLED,    // CANCELLED
    VKPY_FAMILY_PARSE,        // DATA_LOSS
    VKPY_FAMILY_INTERNAL,     // INTERNAL
};
_Static_assert(sizeof vkpy__family_of_code / sizeof vkpy__family_of_code[0] ==
                   VKP_STATUS_CODE_COUNT,
               "one family per status code");

static PyObject *vkpy__classes[VKPY_FAMILY_COUNT];

int vkpy_errors_init(PyObject *module) {
  static const struct {
    const char *name;
    const char *doc;
  } info[] = {
#define VKPY__FAMILY_INFO(e, n, b, d) {n, d},
      VKPY_FAMILY_LIST(VKPY__FAMILY_INFO)
#undef VKPY__FAMILY_INFO
  };
  PyObject *builtin[] = {
#define VKPY__FAMILY_BASE(e, n, b, d) b,
      VKPY_FAMILY_LIST(VKPY__FAMILY_BASE)
#undef VKPY__FAMILY_BASE
  };
  for (int f = 0; f < VKPY_FAMILY_COUNT; ++f) {
    char qualified[96];
    snprintf(qualified, sizeof qualified, "vkpipe.%s", info[f].name);
    PyObject *bases = f == VKPY_FAMILY_BASE
                          ? PyTuple_Pack(1, PyExc_Exception)
                          : PyTuple_Pack(2, vkpy__classes[VKPY_FAMILY_BASE],
                                         builtin[f]);
    if (!bases) return -1;
    vkpy__classes[f] =
        PyErr_NewExceptionWithDoc(qualified, info[f].doc, bases, NULL);
    Py_DECREF(bases);
    if (!vkpy__classes[f]) return -1;
    Py_INCREF(vkpy__classes[f]);  // one for the table, one for the module
    if (PyModule_AddObject(module, info[f].name, vkpy__classes[f]) < 0) {
      Py_DECREF(vkpy__classes[f]);
      return -1;
    }
  }
  return 0;
}

static PyObject *vkpy__make(vkp_status_code_t code, const char *message) {
  vkpy_family_t family = (int)code >= 0 && code < VKP_STATUS_CODE_COUNT
                             ? vkpy__family_of_code[code]
                             : VKPY_FAMILY_INTERNAL;
  PyObject *cls = vkpy__classes[family];
  PyObject *exc = PyObject_CallFunction(cls, "s", message);
  if (!exc) return NULL;
  PyObject *name = PyUnicode_FromString(vkp_status_code_name(code));
  if (!name || PyObject_SetAttrString(exc, "code", name) < 0) {
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
  }
  Py_DECREF(name);
  return exc;
}

PyObject *vkpy_exception_from_status(vkp_status_t status) {
  assert(status);
  PyObject *exc = vkpy__make(vkp_status_code(status), vkp_status_message(status));
  vkp_status_free(status);
  return exc;
}

static PyObject *vkpy__set(PyObject *exc) {
  if (exc) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

PyObject *vkpy_raise(vkp_status_t status) {
  return vkpy__set(vkpy_exception_from_status(status));
}

PyObject *vkpy_raise_code(vkp_status_code_t code, const char *fmt, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return vkpy__set(vkpy__make(code, message));
}
