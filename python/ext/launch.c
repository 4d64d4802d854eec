/* launch.c -- L5: Kernel.launch, the hot path.
 *
 * METH_FASTCALL | METH_KEYWORDS (no tuple or dict per call); keywords are matched by identity
 * against interned names first (gclpy_parse with the module's interned names; CPython interns
 * keyword names in calls), grid and block ints
 * are read directly, prepared Args go straight to gcl_launch, and a sequence of values is
 * converted into a buffer the kernel keeps (its parameter fields were resolved once, when the
 * kernel was looked up). Nothing is allocated per call. */
#include "gclpy.h"

#include <limits.h>
#include <stdint.h>

/* An int or a tuple of up to three ints into out (missing dimensions stay 0: the library takes
 * them as 1). */
static int dims(gclpy_state *st, PyObject *v, unsigned out[3], const char *what) {
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
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(items[i], &overflow);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow || x < 0 || x > (long long)UINT_MAX)
      return gclpy_raise_range(st, "launch: %s[%zd] = %R is out of range (0 ... %u)", what, i,
                               items[i], UINT_MAX), -1;
    out[i] = (unsigned)x;
  }
  return 0;
}

/* A CUstream given as an int: 0 (the context's default stream), CU_STREAM_LEGACY (1),
 * CU_STREAM_PER_THREAD (2), or an address in user space; anything else (negative, another value
 * below 4096, past the pointer range) is refused before the driver sees it. */
static int stream_int(gclpy_state *st, PyObject *h, void **out) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(h, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(h);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) PyErr_Clear();
    else if (u <= UINTPTR_MAX) return *out = (void *)(uintptr_t)u, 0;
  }
  if (overflow || x < 0)
    return gclpy_raise_range(st, "launch: stream handle %R is out of range (0 ... 2**64-1); a "
                             "CUstream is a pointer", h), -1;
  if (x > 2 && x < 4096)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "launch: stream handle %R is no stream "
                           "(0, 1: CU_STREAM_LEGACY, 2: CU_STREAM_PER_THREAD, or a CUstream)", h), -1;
  return *out = (void *)(uintptr_t)x, 0;
}

/* None: the context's default stream; an int CUstream; an object with __cuda_stream__. */
static int stream_of(gclpy_state *st, PyObject *v, void **out) {
  *out = NULL;
  if (v == Py_None) return 0;
  if (PyLong_Check(v) && !PyBool_Check(v)) return stream_int(st, v, out);
  PyObject *fn = PyObject_GetAttr(v, st->str_cuda_stream);
  if (!fn) {
    PyErr_Clear();
    /* torch streams older than the protocol: their CUstream is the int attribute cuda_stream */
    PyObject *h = PyObject_GetAttrString(v, "cuda_stream");
    if (h && PyLong_Check(h)) {
      int rc = stream_int(st, h, out);
      Py_DECREF(h);
      return rc;
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
  int rc = stream_int(st, h, out);
  Py_DECREF(r);
  return rc;
}

/* A sequence of one value per parameter into the kernel's own buffer. */
static gclpy_args *values_into_scratch(gclpy_state *st, gclpy_kernel *k, PyObject *values) {
  bool list = PyList_Check(values);
  if (!list && !PyTuple_Check(values))
    return (gclpy_args *)gclpy_type_error("launch: args_or_values takes a gclaunch.Args or a list "
                                          "or tuple of values", values);
  Py_ssize_t n = list ? PyList_Size(values) : PyTuple_Size(values);
  if ((size_t)n != k->layout->nparams)
    return (gclpy_args *)PyErr_Format(PyExc_TypeError, "launch: kernel %R takes %zu values, got %zd",
                                      k->name, k->layout->nparams, n);
  if (!k->scratch) {
    if (!(k->scratch = gclpy_args_new(st, k->layout))) return NULL;
    k->scratch->scratch = true;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = list ? PyList_GetItem(values, i) : PyTuple_GetItem(values, i);
    if (gclpy_convert_set(k->scratch, k->layout->params[i], v) < 0) return NULL;
  }
  return k->scratch;
}

/* The keywords, in st->launch_kw's order (module.c interns them); "args" is an alias of
 * args_or_values. */
enum { A_GRID, A_BLOCK, A_ARGS, A_SHARED, A_STREAM, A_CLUSTER, A_COOP, A_ARGS_ALIAS, A_PDL,
       A_PRIORITY, A_COUNT };
static const char *const launch_names[A_COUNT] = {"grid", "block", "args_or_values", "shared",
                                                  "stream", "cluster", "cooperative", "args",
                                                  "pdl", "priority"};
static const gclpy_params launch_params = {"launch", launch_names, A_COUNT, 3, 2};

const char gclpy_launch_doc[] =
  "launch($self, /, grid, block, args_or_values, *, shared=0, stream=None, cluster=None, "
  "cooperative=False, pdl=False, priority=0)\n--\n\n"
  "Launches the kernel (cuLaunchKernelEx through gcl_launch). grid, block, cluster: an int or a\n"
  "tuple of up to 3 ints (0 ... 2**32-1; gclaunch.RangeError outside). args_or_values (or args=):\n"
  "an Args of this kernel, or a sequence of one value per parameter (each converted as\n"
  "args[i] = v into a buffer kept by the kernel; a tensor or Buffer there gives its address and\n"
  "is not kept: keep it alive while the kernel runs). shared: dynamic shared memory bytes (over 48 KiB\n"
  "opted in). stream: None (the context's default stream), an int CUstream (0, 1 =\n"
  "CU_STREAM_LEGACY, 2 = CU_STREAM_PER_THREAD, or a live stream of the kernel's context), or any\n"
  "object with __cuda_stream__ (torch, CuPy, cuda.core streams), or a gclaunch.Stream; a handle\n"
  "that is no live stream raises gclaunch.Error. grid counts blocks (not clusters); cluster: blocks\n"
  "per cluster per dimension (the grid a multiple of it; None: no cluster). pdl: programmatic\n"
  "dependent launch (the kernel may start before the previous one on the stream ends: it must\n"
  "wait, griddepcontrol.wait, before reading that one's results; a kernel whose code never waits\n"
  "is refused, GCL_ERROR_INVALID_CONFIG, unless pdl='unchecked'). priority: the launch priority\n"
  "attribute (0: none; lower numbers are higher). The driver copies the parameters: args may\n"
  "change as soon as launch returns.";

PyObject *gclpy_kernel_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[A_COUNT];
  gcl_launch_config cfg = {0};
  if (gclpy_parse(&launch_params, st->launch_kw, argv, nargs, kwnames, v) < 0) return NULL;
  if (v[A_ARGS_ALIAS]) {
    if (v[A_ARGS])
      return PyErr_SetString(PyExc_TypeError, "launch() got multiple values for argument "
                             "'args_or_values'"), NULL;
    v[A_ARGS] = v[A_ARGS_ALIAS];
  }
  if (!v[A_ARGS])
    return PyErr_SetString(PyExc_TypeError, "launch() missing required argument 'args_or_values' "
                           "(pos 3)"), NULL;
  if (dims(st, v[A_GRID], cfg.grid, "grid") < 0 || dims(st, v[A_BLOCK], cfg.block, "block") < 0)
    return NULL;
  if (v[A_CLUSTER] && v[A_CLUSTER] != Py_None && dims(st, v[A_CLUSTER], cfg.cluster, "cluster") < 0)
    return NULL;
  if (v[A_SHARED]) {
    long long shared;
    if (gclpy_long_arg(st, v[A_SHARED], "launch: shared", 0, UINT32_MAX, &shared) < 0) return NULL;
    cfg.shared_bytes = (size_t)shared;
  }
  bool ours = v[A_STREAM] && Py_IS_TYPE(v[A_STREAM], st->stream_type); /* checked when made */
  if (ours && gclpy_stream_for_launch(st, (gclpy_stream *)v[A_STREAM], self, &cfg.stream) < 0)
    return NULL;
  if (!ours && v[A_STREAM] && stream_of(st, v[A_STREAM], &cfg.stream) < 0) return NULL;
  if (!ours && (uintptr_t)cfg.stream > 2) { /* a handle from outside: a live stream of the kernel's context */
    gcl_context *ctx = ((gclpy_context *)((gclpy_module *)k->module)->context)->ctx;
    gcl_status s = gcl_stream_check(ctx, cfg.stream, cfg.stream == k->stream_seen ? GCL_STREAM_CHECK_MAPPED : 0);
    if (s != GCL_OK) return gclpy_raise(st, s);
    k->stream_seen = cfg.stream;
  }
  if (v[A_COOP]) {
    int c = PyObject_IsTrue(v[A_COOP]);
    if (c < 0) return NULL;
    cfg.cooperative = c;
  }
  if (v[A_PDL]) { /* programmatic dependent launch (programmatic stream serialization) */
    int c = PyUnicode_Check(v[A_PDL]) ? 2 : PyObject_IsTrue(v[A_PDL]);
    if (c < 0) return NULL;
    if (c == 2) { /* "unchecked": launch even though the kernel's code never waits */
      if (PyUnicode_CompareWithASCIIString(v[A_PDL], "unchecked") != 0)
        return gclpy_type_error("launch: pdl takes True, False or 'unchecked'", v[A_PDL]);
      cfg.flags |= GCL_LAUNCH_PDL_UNCHECKED;
    }
    cfg.programmatic_dependent_launch = c != 0;
  }
  if (v[A_PRIORITY]) { /* the launch priority attribute (0: none) */
    long long p;
    if (gclpy_long_arg(st, v[A_PRIORITY], "launch: priority", INT_MIN, INT_MAX, &p) < 0) return NULL;
    cfg.priority = (int)p;
  }
  gclpy_args *a;
  if (PyObject_TypeCheck(v[A_ARGS], st->args_type)) a = (gclpy_args *)v[A_ARGS];
  else if (!(a = values_into_scratch(st, k, v[A_ARGS]))) return NULL;
  gcl_status s = gcl_launch(k->kernel, &cfg, a->args);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}
