/* argkinds.c -- L1: one converter per kind of argument, used by every call that takes one, so
 * every call takes the same forms and refuses the same values with the same words.
 *
 *   dims      grid, block, cluster   an int, or a tuple or list of 1 to 3 ints (an int is also any
 *                                    object with __index__, not a bool), each 0 ... 2**32-1;
 *                                    missing dimensions are 0 (the library takes them as 1)
 *   threads   block of the occupancy calls: dims, as the product of the dimensions
 *   shared    dynamic shared memory  an int, 0 ... 2**32-1 bytes
 *   stream    stream=                None, a gclaunch.Stream (open), an int CUstream (0, 1 =
 *                                    CU_STREAM_LEGACY, 2 = CU_STREAM_PER_THREAD, or an address), an
 *                                    object with __cuda_stream__ (torch, CuPy, cuda.core), or a torch
 *                                    stream of before the protocol (its int cuda_stream)
 *   address   pointer                an int, 0 ... 2**64-1
 *
 * Refusals: TypeError "<fn>: <what> takes <forms>, got <type>" for a value of another type;
 * gclaunch.RangeError "<fn>: <what> ... is out of range (lo ... hi)" for an int outside the range.
 * An exact int, the common case, is read without a call through the number protocol. */
#include "gclpy.h"

#include <limits.h>
#include <stdio.h>

static const char dims_forms[] = "an int or a tuple or list of 1 to 3 ints";

/* An int (not a bool) of [0, hi] as an unsigned 64-bit value: 0; 1 when v is no int (nothing
 * raised); -1 with RangeError ("<fn>: <what> = v is out of range (0 ... hi)"). */
static int uint_of(gclpy_state *st, PyObject *v, const char *fn, const char *what, uint64_t hi,
                   uint64_t *out) {
  PyObject *n;
  if (PyLong_CheckExact(v)) n = Py_NewRef(v);
  else if (PyBool_Check(v) || PyFloat_Check(v) || !PyIndex_Check(v)) return 1;
  else if (!(n = PyNumber_Index(v))) return -1;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(n, &overflow);
  uint64_t u = (uint64_t)x;
  if (x == -1 && PyErr_Occurred()) return Py_DECREF(n), -1;
  if (overflow > 0) {
    u = (uint64_t)PyLong_AsUnsignedLongLong(n);
    if (u == (uint64_t)-1 && PyErr_Occurred()) PyErr_Clear(), x = -1;
    else x = 0;
  }
  if (x < 0 || u > hi) {
    gclpy_raise_range(st, "%s: %s = %R is out of range (0 ... %llu)", fn, what, n,
                      (unsigned long long)hi);
    return Py_DECREF(n), -1;
  }
  Py_DECREF(n);
  return *out = u, 0;
}

int gclpy_dims_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what, unsigned out[3]) {
  out[0] = out[1] = out[2] = 0;
  uint64_t x;
  if (PyLong_CheckExact(v) && (x = PyLong_AsUnsignedLong(v)) <= UINT_MAX) /* the common case */
    return out[0] = (unsigned)x, 1;
  PyErr_Clear();
  bool seq = PyTuple_Check(v) || PyList_Check(v);
  Py_ssize_t n = seq ? (PyTuple_Check(v) ? PyTuple_Size(v) : PyList_Size(v)) : 1;
  if (seq && (n < 1 || n > 3))
    return PyErr_Format(PyExc_TypeError, "%s: %s takes %s, got %zd ints", fn, what, dims_forms, n), -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = !seq ? v : PyTuple_Check(v) ? PyTuple_GetItem(v, i) : PyList_GetItem(v, i);
    char name[64];
    if (seq) snprintf(name, sizeof name, "%s[%zd]", what, i);
    else snprintf(name, sizeof name, "%s", what);
    int rc = uint_of(st, item, fn, name, UINT_MAX, &x);
    if (rc == 1) {
      char msg[160];
      snprintf(msg, sizeof msg, "%s: %s takes %s", fn, what, dims_forms);
      return gclpy_type_error(msg, item), -1;
    }
    if (rc < 0) return -1;
    out[i] = (unsigned)x;
  }
  return (int)n;
}

int gclpy_threads_arg(gclpy_state *st, PyObject *v, const char *fn, unsigned *threads) {
  unsigned d[3];
  int n = gclpy_dims_arg(st, v, fn, "block", d);
  if (n < 0) return -1;
  unsigned long long t = 1;
  for (int i = 0; i < n; i++) t *= d[i]; /* a 0 dimension makes 0 threads: the library refuses it */
  if (t > UINT_MAX)
    return gclpy_raise_range(st, "%s: block %R has more than %u threads", fn, v, UINT_MAX), -1;
  *threads = (unsigned)t;
  return 0;
}

int gclpy_shared_arg(gclpy_state *st, PyObject *v, const char *fn, size_t *bytes) {
  uint64_t x = 0;
  int rc = v ? uint_of(st, v, fn, "shared", UINT32_MAX, &x) : 0;
  if (rc == 1) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s: shared takes an int (bytes)", fn);
    return gclpy_type_error(msg, v), -1;
  }
  *bytes = (size_t)x;
  return rc;
}

int gclpy_address_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what, uint64_t *out) {
  if (PyLong_CheckExact(v)) { /* the common case: no Python call */
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (!(u == (unsigned long long)-1 && PyErr_Occurred())) return *out = u, 0;
    PyErr_Clear();
  }
  int rc = uint_of(st, v, fn, what, UINT64_MAX, out);
  if (rc == 1) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s takes an int address", fn, what);
    return gclpy_type_error(msg, v), -1;
  }
  return rc;
}

/* --- streams ---------------------------------------------------------------------------------- */

/* An int CUstream: 0 (the context's default stream), 1 (CU_STREAM_LEGACY), 2
 * (CU_STREAM_PER_THREAD) or an address in user space; anything else below 4096 is refused before
 * the driver sees it (whether an address holds a stream is the library's check). */
static int handle_int(gclpy_state *st, PyObject *h, const char *fn, void **out) {
  uint64_t x;
  int rc = uint_of(st, h, fn, "stream handle", UINTPTR_MAX, &x);
  if (rc != 0) return rc;
  if (x > 2 && x < 4096)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: stream handle %R is no stream "
                           "(0, 1: CU_STREAM_LEGACY, 2: CU_STREAM_PER_THREAD, or a CUstream)", fn, h), -1;
  return *out = (void *)(uintptr_t)x, 0;
}

/* The int a stream object of another library gives: __cuda_stream__()[1], or (torch streams of
 * before the protocol) its cuda_stream attribute. New reference; NULL and no exception: neither. */
static PyObject *foreign_int(gclpy_state *st, PyObject *v, const char *fn) {
  /* called as a method (no bound method is made); a missing method raises AttributeError */
  PyObject *r = PyObject_CallMethodObjArgs(v, st->str_cuda_stream, NULL);
  if (!r) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int has = PyObject_HasAttr(v, st->str_cuda_stream); /* then the error came from inside it */
    if (has) return PyErr_Restore(type, value, tb), NULL;
    Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
    PyObject *h = PyObject_GetAttrString(v, "cuda_stream");
    if (h && PyLong_Check(h) && !PyBool_Check(h)) return h;
    Py_XDECREF(h);
    PyErr_Clear();
    return NULL;
  }
  PyObject *h = PyTuple_Check(r) && PyTuple_Size(r) == 2 ? Py_NewRef(PyTuple_GetItem(r, 1)) : NULL;
  Py_DECREF(r);
  if (h && PyLong_Check(h) && !PyBool_Check(h)) return h;
  Py_XDECREF(h);
  return PyErr_Format(PyExc_TypeError, "%s: __cuda_stream__() must return a tuple (version, "
                      "handle: int)", fn);
}

int gclpy_stream_handle_arg(gclpy_state *st, PyObject *v, const char *fn, bool none_ok,
                            void **out, gclpy_stream **ours) {
  *out = NULL;
  if (ours) *ours = NULL;
  if (v == Py_None && none_ok) return 0;
  if (Py_IS_TYPE(v, st->stream_type)) {
    gclpy_stream *s = (gclpy_stream *)v;
    if (!s->stream)
      return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the Stream was closed", fn), -1;
    if (ours) *ours = s;
    return *out = s->handle, 0;
  }
  if (PyLong_Check(v) && !PyBool_Check(v)) return handle_int(st, v, fn, out);
  PyObject *h = v == Py_None || PyBool_Check(v) ? NULL : foreign_int(st, v, fn);
  if (!h) {
    if (PyErr_Occurred()) return -1;
    char msg[200];
    snprintf(msg, sizeof msg, "%s: stream takes %sa gclaunch.Stream, an int CUstream or an object "
             "with __cuda_stream__", fn, none_ok ? "None, " : "");
    return gclpy_type_error(msg, v), -1;
  }
  int rc = handle_int(st, h, fn, out);
  Py_DECREF(h);
  return rc;
}
