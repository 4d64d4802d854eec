/* launch.c -- Kernel.launch: the hot path.
 *
 * METH_FASTCALL | METH_KEYWORDS (no tuple or dict per call); keywords are matched by identity
 * against interned names first (CPython interns keyword names in calls), grid and block ints
 * are read directly, prepared Args go straight to gcl_launch, and a sequence of values is
 * converted into a buffer the kernel keeps (its parameter fields were resolved once, when the
 * kernel was looked up). Nothing is allocated per call. */
#include "gclpy.h"

#include <limits.h>

/* An int or a tuple of up to three ints into out (missing dimensions stay 0: the library takes
 * them as 1). */
static int dims(PyObject *v, unsigned out[3], const char *what) {
  out[0] = out[1] = out[2] = 0;
  PyObject *items[3] = {v, NULL, NULL};
  Py_ssize_t n = 1;
  if (PyTuple_Check(v) || PyList_Check(v)) {
    n = PySequence_Size(v);
    if (n < 1 || n > 3)
      return PyErr_Format(PyExc_TypeError, "launch: %s takes an int or 1 to 3 ints, got %zd", what, n), -1;
    for (Py_ssize_t i = 0; i < n; i++)
      items[i] = PyTuple_Check(v) ? PyTuple_GetItem(v, i) : PyList_GetItem(v, i);
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!PyLong_Check(items[i]) || PyBool_Check(items[i]))
      return gclpy_type_error(what[0] == 'g' ? "launch: grid takes ints"
                              : what[0] == 'b' ? "launch: block takes ints" : "launch: cluster takes ints",
                              items[i]), -1;
    unsigned long x = PyLong_AsUnsignedLong(items[i]);
    if ((x == (unsigned long)-1 && PyErr_Occurred()) || x > UINT_MAX) {
      PyErr_Clear();
      return gclpy_raise_range("launch: %s[%zd] = %R is out of range (0 ... %u)", what, i, items[i],
                               UINT_MAX), -1;
    }
    out[i] = (unsigned)x;
  }
  return 0;
}

/* None: the context's default stream; a gclaunch.Stream; an int CUstream; an object with
 * __cuda_stream__. */
static int stream_of(PyObject *v, PyObject *kernel, void **out) {
  *out = NULL;
  if (v == Py_None) return 0;
  if (Py_IS_TYPE(v, gclpy.stream_type))
    return gclpy_stream_for_launch((gclpy_stream *)v, kernel, out);
  if (PyLong_Check(v)) {
    *out = PyLong_AsVoidPtr(v);
    return *out == NULL && PyErr_Occurred() ? -1 : 0;
  }
  PyObject *fn = PyObject_GetAttr(v, gclpy.str_cuda_stream);
  if (!fn) {
    PyErr_Clear();
    /* torch streams older than the protocol: their CUstream is the int attribute cuda_stream */
    PyObject *h = PyObject_GetAttrString(v, "cuda_stream");
    if (h && PyLong_Check(h)) {
      *out = PyLong_AsVoidPtr(h);
      Py_DECREF(h);
      return *out == NULL && PyErr_Occurred() ? -1 : 0;
    }
    Py_XDECREF(h);
    PyErr_Clear();
    return gclpy_type_error("launch: stream takes None, an int CUstream or an object with "
                            "__cuda_stream__", v), -1;
  }
  PyObject *r = PyObject_CallNoArgs(fn);
  Py_DECREF(fn);
  if (!r) return -1;
  PyObject *h = PyTuple_Check(r) && PyTuple_Size(r) == 2 ? PyTuple_GetItem(r, 1) : NULL;
  if (!h || !PyLong_Check(h)) {
    Py_DECREF(r);
    return PyErr_SetString(PyExc_TypeError, "launch: __cuda_stream__() must return a tuple "
                           "(version, handle: int)"), -1;
  }
  *out = PyLong_AsVoidPtr(h);
  Py_DECREF(r);
  return *out == NULL && PyErr_Occurred() ? -1 : 0;
}

/* A sequence of one value per parameter into the kernel's own buffer. */
gclpy_args *gclpy_kernel_values(gclpy_kernel *k, PyObject *values) {
  bool list = PyList_Check(values);
  if (!list && !PyTuple_Check(values))
    return (gclpy_args *)gclpy_type_error("launch: args_or_values takes a gclaunch.Args or a list "
                                          "or tuple of values", values);
  Py_ssize_t n = list ? PyList_Size(values) : PyTuple_Size(values);
  if ((size_t)n != k->layout->nparams)
    return (gclpy_args *)PyErr_Format(PyExc_TypeError, "launch: kernel %R takes %zu values, got %zd",
                                      k->name, k->layout->nparams, n);
  if (!k->scratch && !(k->scratch = gclpy_args_new(k->layout))) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = list ? PyList_GetItem(values, i) : PyTuple_GetItem(values, i);
    if (gclpy_convert_set(k->scratch, k->layout->params[i], v) < 0) return NULL;
  }
  return k->scratch;
}

enum { A_GRID, A_BLOCK, A_ARGS, A_SHARED, A_STREAM, A_CLUSTER, A_COOP, A_PDL, A_PRIORITY, A_COUNT };

static int keyword_slot(PyObject *key) {
  PyObject *const known[A_COUNT] = {gclpy.kw_grid, gclpy.kw_block, gclpy.kw_args, gclpy.kw_shared,
                                    gclpy.kw_stream, gclpy.kw_cluster, gclpy.kw_cooperative,
                                    gclpy.kw_pdl, gclpy.kw_priority};
  for (int i = 0; i < A_COUNT; i++)
    if (key == known[i]) return i;
  for (int i = 0; i < A_COUNT; i++)
    if (PyUnicode_Compare(key, known[i]) == 0) return i;
  static const char *const other[] = {"args_or_values"};
  return PyUnicode_CompareWithASCIIString(key, other[0]) == 0 ? A_ARGS : -1;
}

static int parse(PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames, PyObject **v) {
  for (int i = 0; i < A_COUNT; i++) v[i] = NULL;
  if (nargs > 3)
    return PyErr_Format(PyExc_TypeError, "launch() takes 3 positional arguments (%zd given)", nargs), -1;
  for (Py_ssize_t i = 0; i < nargs; i++) v[i] = argv[i];
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *key = PyTuple_GetItem(kwnames, j);
    int i = keyword_slot(key);
    if (i < 0) return PyErr_Format(PyExc_TypeError, "launch() got an unexpected keyword argument '%U'", key), -1;
    if (v[i]) return PyErr_Format(PyExc_TypeError, "launch() got multiple values for argument '%U'", key), -1;
    v[i] = argv[nargs + j];
  }
  if (!v[A_GRID] || !v[A_BLOCK] || !v[A_ARGS])
    return PyErr_SetString(PyExc_TypeError, "launch() needs grid, block and args_or_values"), -1;
  return 0;
}

PyObject *gclpy_kernel_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  PyObject *v[A_COUNT];
  gcl_launch_config cfg = {0};
  if (parse(argv, nargs, kwnames, v) < 0 || dims(v[A_GRID], cfg.grid, "grid") < 0 ||
      dims(v[A_BLOCK], cfg.block, "block") < 0)
    return NULL;
  if (v[A_CLUSTER] && v[A_CLUSTER] != Py_None && dims(v[A_CLUSTER], cfg.cluster, "cluster") < 0) return NULL;
  if (v[A_SHARED]) {
    if (!PyLong_Check(v[A_SHARED])) return gclpy_type_error("launch: shared takes an int", v[A_SHARED]);
    cfg.shared_bytes = PyLong_AsSize_t(v[A_SHARED]);
    if (cfg.shared_bytes == (size_t)-1 && PyErr_Occurred()) return NULL;
  }
  if (v[A_STREAM] && stream_of(v[A_STREAM], self, &cfg.stream) < 0) return NULL;
  if (v[A_COOP]) {
    int c = PyObject_IsTrue(v[A_COOP]);
    if (c < 0) return NULL;
    cfg.cooperative = c;
  }
  if (v[A_PDL]) { /* programmatic dependent launch (the driver's programmatic stream serialization) */
    int c = PyObject_IsTrue(v[A_PDL]);
    if (c < 0) return NULL;
    cfg.programmatic_dependent_launch = c;
  }
  if (v[A_PRIORITY]) { /* the launch priority attribute (0: none) */
    long long p;
    if (gclpy_int_arg(v[A_PRIORITY], "launch: priority takes an int", INT_MIN, INT_MAX, &p) < 0)
      return NULL;
    cfg.priority = (int)p;
  }
  gclpy_args *a;
  if (PyObject_TypeCheck(v[A_ARGS], gclpy.args_type)) a = (gclpy_args *)v[A_ARGS];
  else if (!(a = gclpy_kernel_values(k, v[A_ARGS]))) return NULL;
  gcl_status s = gcl_launch(k->kernel, &cfg, a->args);
  if (s != GCL_OK) return gclpy_raise(s);
  Py_RETURN_NONE;
}
