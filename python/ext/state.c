/* state.c -- L0: allocation, errors, argument helpers and the one keyword parser. Calls no other
 * file of the extension. */
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

/* --- arguments ------------------------------------------------------------------------------- */

int gclpy_long_arg(gclpy_state *st, PyObject *v, const char *what, long long lo, long long hi,
                   long long *out) {
  PyObject *n = PyLong_Check(v) ? Py_NewRef(v) : NULL;
  if (!n) {
    if (PyFloat_Check(v) || !PyIndex_Check(v)) {
      char msg[160];
      snprintf(msg, sizeof msg, "%s: expected an int", what);
      return gclpy_type_error(msg, v), -1;
    }
    if (!(n = PyNumber_Index(v))) return -1;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
  if (x == -1 && PyErr_Occurred()) return Py_DECREF(n), -1;
  if (overflow || x < lo || x > hi) {
    gclpy_raise_range(st, "%s: %R is out of range (%lld ... %lld)", what, n, lo, hi);
    return Py_DECREF(n), -1;
  }
  Py_DECREF(n);
  return *out = x, 0;
}

const char *gclpy_str_arg(gclpy_state *st, PyObject *v, const char *what) {
  if (!PyUnicode_Check(v)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected a str", what);
    return gclpy_type_error(msg, v), NULL;
  }
  Py_ssize_t n = 0;
  const char *s = PyUnicode_AsUTF8AndSize(v, &n);
  if (!s) { /* a lone surrogate: no UTF-8 for it */
    PyErr_Clear();
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: %R is not valid text (a lone "
                           "surrogate has no UTF-8 form)", what, v), NULL;
  }
  if ((size_t)n != strlen(s))
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: %R holds a NUL character at "
                           "index %zu", what, v, strlen(s)), NULL;
  return s;
}

int gclpy_is_path(gclpy_state *st, PyObject *src) {
  return PyUnicode_Check(src) || PyObject_HasAttr(src, st->str_fspath);
}

PyObject *gclpy_path_bytes(gclpy_state *st, PyObject *src) {
  PyObject *path = PyOS_FSPath(src);
  if (!path) return NULL;
  PyObject *bpath = NULL;
  if (PyUnicode_Check(path)) {
    if (!PyUnicode_FSConverter(path, &bpath)) { /* a lone surrogate the file system refuses */
      PyErr_Clear();
      gclpy_raise_msg(st, GCL_ERROR_IO, "path %R cannot be encoded for the file system", path);
      return Py_DECREF(path), NULL;
    }
  } else if (PyBytes_Check(path)) {
    bpath = Py_NewRef(path);
  }
  Py_DECREF(path);
  if (!bpath) return gclpy_type_error("expected a path (str or os.PathLike)", src);
  if ((size_t)PyBytes_Size(bpath) != strlen(PyBytes_AsString(bpath))) {
    gclpy_raise_msg(st, GCL_ERROR_IO, "path %R holds a NUL byte", bpath);
    return Py_DECREF(bpath), NULL;
  }
  return bpath;
}

PyObject *gclpy_image_bytes(gclpy_state *st, PyObject *src) {
  if (gclpy_is_path(st, src)) {
    PyObject *bpath = gclpy_path_bytes(st, src);
    if (!bpath) return NULL;
    void *data = NULL;
    size_t size = 0;
    gcl_status s;
    const char *cpath = PyBytes_AsString(bpath);
    Py_BEGIN_ALLOW_THREADS /* a file read: judged by its first bytes, never waits on a FIFO */
    s = gcl_image_file_read(cpath, &data, &size);
    Py_END_ALLOW_THREADS
    Py_DECREF(bpath);
    if (s != GCL_OK) return gclpy_raise(st, s);
    PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    gcl_file_free(data);
    return b;
  }
  if (PyBytes_Check(src)) return Py_NewRef(src);
  PyObject *mv = PyMemoryView_FromObject(src);
  if (!mv) {
    PyErr_Clear();
    return gclpy_type_error("expected a path (str or os.PathLike) or a bytes-like object", src);
  }
  PyObject *b = PyBytes_FromObject(mv);
  Py_DECREF(mv);
  return b;
}

/* --- the keyword parser ------------------------------------------------------------------------ */

static int name_index(const gclpy_params *p, PyObject *const *keys, PyObject *key) {
  if (keys)
    for (int i = 0; i < p->count; i++)
      if (key == keys[i]) return i;
  for (int i = 0; i < p->count; i++)
    if (PyUnicode_CompareWithASCIIString(key, p->names[i]) == 0) return i;
  return -1;
}

static int positional(const gclpy_params *p, Py_ssize_t nargs, PyObject **vals) {
  for (int i = 0; i < p->count; i++) vals[i] = NULL;
  if (nargs > p->npos)
    return PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
                        p->fn, p->npos, p->npos == 1 ? "" : "s", nargs), -1;
  return 0;
}

static int keyword(const gclpy_params *p, PyObject *const *keys, PyObject *key, PyObject *value,
                   PyObject **vals) {
  int i = name_index(p, keys, key);
  if (i < 0)
    return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", p->fn, key), -1;
  if (vals[i])
    return PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", p->fn,
                        p->names[i]), -1;
  vals[i] = value;
  return 0;
}

static int required(const gclpy_params *p, PyObject **vals) {
  for (int i = 0; i < p->required; i++)
    if (!vals[i])
      return PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", p->fn,
                          p->names[i], i + 1), -1;
  return 0;
}

int gclpy_parse(const gclpy_params *p, PyObject *const *keys, PyObject *const *argv,
                Py_ssize_t nargs, PyObject *kwnames, PyObject **vals) {
  if (positional(p, nargs, vals) < 0) return -1;
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = argv[i];
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++)
    if (keyword(p, keys, PyTuple_GetItem(kwnames, j), argv[nargs + j], vals) < 0) return -1;
  return required(p, vals);
}

int gclpy_parse_tuple(const gclpy_params *p, PyObject *args, PyObject *kwds, PyObject **vals) {
  Py_ssize_t nargs = PyTuple_Size(args);
  if (positional(p, nargs, vals) < 0) return -1;
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = PyTuple_GetItem(args, i);
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (kwds && PyDict_Next(kwds, &pos, &key, &value))
    if (keyword(p, NULL, key, value, vals) < 0) return -1;
  return required(p, vals);
}
