/* state.c -- L0: allocation, errors and names. Calls no other file of the
 * extension (arguments, image paths and bytes included, convert in argkinds.c, L1). */
#include "gclpy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

PyObject *gclpy_alloc(PyTypeObject *type) {
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  return alloc(type, 0);
}

void gclpy_free(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

/* --- errors ------------------------------------------------------------------------------ */

/* Builds an Error (or the range error) carrying .status, .code and .cuda_error; sets it. The
 * message is decoded with errors="backslashreplace": the library's messages are UTF-8, and a
 * byte that is not is shown escaped rather than turned into a UnicodeDecodeError. */
static PyObject *raise_with(PyObject *type, gcl_status s, const char *msg, int cuda_error) {
  PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "backslashreplace");
  if (!text) return NULL;
  PyObject *exc = PyObject_CallFunctionObjArgs(type, text, NULL);
  Py_DECREF(text);
  if (!exc) return NULL;
  PyObject *name = PyUnicode_FromString(gcl_status_name(s));
  PyObject *code = PyLong_FromLong((long)s);
  PyObject *cu = PyLong_FromLong(cuda_error);
  if (name && code && cu && PyObject_SetAttrString(exc, "status", name) == 0 &&
      PyObject_SetAttrString(exc, "code", code) == 0 &&
      PyObject_SetAttrString(exc, "cuda_error", cu) == 0)
    PyErr_SetObject(type, exc);
  Py_XDECREF(name), Py_XDECREF(code), Py_XDECREF(cu), Py_DECREF(exc);
  return NULL;
}

PyObject *gclpy_raise(gclpy_state *st, gcl_status s) {
  PyObject *type = s == GCL_ERROR_TENSOR ? st->tensor_error : st->error;
  return raise_with(type, s, gcl_last_error(), gcl_last_cuda_error());
}

/* Messages are formatted by PyUnicode_FromFormatV (%R, %zd, %llu ...). */
static PyObject *raise_v(PyObject *type, gcl_status s, const char *fmt, va_list ap) {
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  if (!msg) return NULL;
  PyObject *b = PyUnicode_AsEncodedString(msg, "utf-8", "backslashreplace");
  Py_DECREF(msg);
  if (!b) return NULL;
  raise_with(type, s, PyBytes_AsString(b), 0);
  Py_DECREF(b);
  return NULL;
}

PyObject *gclpy_raise_msg(gclpy_state *st, gcl_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(s == GCL_ERROR_TENSOR ? st->tensor_error : st->error, s, fmt, ap);
  va_end(ap);
  return NULL;
}

PyObject *gclpy_raise_range(gclpy_state *st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(st->range_error, GCL_ERROR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *gclpy_scalar_name(gcl_scalar s) { return gcl_scalar_name(s); }

const char *gclpy_kind_name(gcl_param_kind k) {
  static const char *const names[] = {"scalar", "pointer", "tensormap", "bytes", "struct", "array"};
  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

void gclpy_tname(PyObject *obj, char *buf, size_t cap) {
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__name__");
  const char *s = name ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
  if (!s) PyErr_Clear(), s = "?";
  snprintf(buf, cap, "%s", s);
  Py_XDECREF(name);
}

PyObject *gclpy_type_error(const char *what, PyObject *obj) {
  char t[128];
  gclpy_tname(obj, t, sizeof t);
  return PyErr_Format(PyExc_TypeError, "%s, got %s", what, t);
}
