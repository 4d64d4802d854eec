/* launch.c -- L7: Kernel.launch, the hot path.
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

/* A sequence of one value per parameter into the kernel's own buffer (values.c). */
static gclpy_args *values_into_scratch(gclpy_state *st, gclpy_kernel *k, PyObject *values) {
  bool list = PyList_Check(values);
  if (!list && !PyTuple_Check(values))
    return (gclpy_args *)gclpy_type_error("launch: args_or_values takes a gclaunch.Args or a list "
                                          "or tuple of values", values);
  Py_ssize_t n = list ? PyList_Size(values) : PyTuple_Size(values);
  if ((size_t)n != k->layout->nparams)
    return (gclpy_args *)PyErr_Format(PyExc_TypeError, "launch: kernel %R takes %zu values, got %zd",
                                      k->name, k->layout->nparams, n);
  if (!k->scratch) { /* a new scratch (first use, or after the GC cleared it): a new plan */
    PyMem_Free(k->values);
    k->values = NULL;
    if (!(k->scratch = gclpy_args_new(st, k->layout))) return NULL;
    k->scratch->scratch = true;
  }
  if (!k->values && !(k->values = gclpy_values_new(k->layout))) return NULL;
  if (gclpy_values_set(st, k->values, k->scratch, k->layout, values, list) < 0) return NULL;
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

/* stream=: a gclaunch.Stream (noted in its capture), or a handle from outside, checked to be a
 * live stream of the kernel's context (in full the first time a handle is seen in a row). */
static int launch_stream(gclpy_state *st, gclpy_kernel *k, PyObject *v, void **out) {
  gclpy_stream *ours = NULL;
  if (gclpy_stream_handle_arg(st, v, "launch", true, out, &ours) < 0) return -1;
  if (ours) return ours->captured ? PyList_Append(ours->captured, (PyObject *)k) : 0;
  if ((uintptr_t)*out <= 2) return 0; /* the default, legacy and per-thread streams */
  gcl_context *ctx = ((gclpy_context *)((gclpy_module *)k->module)->context)->ctx;
  gcl_status s = gcl_stream_check(ctx, *out, *out == k->stream_seen ? GCL_STREAM_CHECK_MAPPED : 0);
  if (s != GCL_OK) return gclpy_raise(st, s), -1;
  k->stream_seen = *out;
  return 0;
}

/* cooperative=, pdl= and priority=. */
static int launch_flags(gclpy_state *st, PyObject *v[], gcl_launch_config *cfg) {
  if (v[A_COOP]) {
    int c = PyObject_IsTrue(v[A_COOP]);
    if (c < 0) return -1;
    cfg->cooperative = c;
  }
  if (v[A_PDL]) { /* programmatic dependent launch (programmatic stream serialization) */
    int c = PyUnicode_Check(v[A_PDL]) ? 2 : PyObject_IsTrue(v[A_PDL]);
    if (c < 0) return -1;
    if (c == 2) { /* "unchecked": launch even though the kernel's code never waits */
      if (PyUnicode_CompareWithASCIIString(v[A_PDL], "unchecked") != 0)
        return gclpy_type_error("launch: pdl takes True, False or 'unchecked'", v[A_PDL]), -1;
      cfg->flags |= GCL_LAUNCH_PDL_UNCHECKED;
    }
    cfg->programmatic_dependent_launch = c != 0;
  }
  if (v[A_PRIORITY]) { /* the launch priority attribute (0: none) */
    long long p;
    if (gclpy_long_arg(st, v[A_PRIORITY], "launch: priority", INT_MIN, INT_MAX, &p) < 0) return -1;
    cfg->priority = (int)p;
  }
  return 0;
}

/* The launch configuration from the keywords (every argument through argkinds.c's converters). */
static int launch_config(gclpy_state *st, gclpy_kernel *k, PyObject *v[], gcl_launch_config *cfg) {
  if (gclpy_dims_arg(st, v[A_GRID], "launch", "grid", cfg->grid) < 0 ||
      gclpy_dims_arg(st, v[A_BLOCK], "launch", "block", cfg->block) < 0)
    return -1;
  if (v[A_CLUSTER] && v[A_CLUSTER] != Py_None &&
      gclpy_dims_arg(st, v[A_CLUSTER], "launch", "cluster", cfg->cluster) < 0)
    return -1;
  if (gclpy_shared_arg(st, v[A_SHARED], "launch", &cfg->shared_bytes) < 0) return -1;
  if (v[A_STREAM] && launch_stream(st, k, v[A_STREAM], &cfg->stream) < 0) return -1;
  if ((v[A_COOP] || v[A_PDL] || v[A_PRIORITY]) && launch_flags(st, v, cfg) < 0) return -1;
  return 0;
}

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
  if (launch_config(st, k, v, &cfg) < 0) return NULL;
  gclpy_args *a;
  if (Py_IS_TYPE(v[A_ARGS], st->args_type)) a = (gclpy_args *)v[A_ARGS];
  else if (!(a = values_into_scratch(st, k, v[A_ARGS]))) return NULL;
  gcl_status s = gcl_launch(k->kernel, &cfg, a->args);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}
