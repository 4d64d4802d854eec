/* launch.c -- L7: Kernel.launch, the hot path.
 *
 * METH_FASTCALL | METH_KEYWORDS (no tuple or dict per call); keywords are matched by identity
 * against interned names first (gclpy_parse with the module's interned names; CPython interns
 * keyword names in calls), every argument converts through argkinds.c's converters straight
 * into the gcl_launch_config (grid and block ints are read directly), prepared Args go straight
 * to gcl_launch, and a sequence of values is converted into a buffer the kernel keeps (its
 * parameter fields were resolved once, when the kernel was looked up). Nothing is allocated per
 * call. */
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
    gclpy_values_free(k->values);
    k->values = NULL;
    if (!(k->scratch = gclpy_args_new(st, k->layout))) return NULL;
    k->scratch->scratch = true;
  }
  if (!k->values && !(k->values = gclpy_values_new(k->layout))) return NULL;
  if (gclpy_values_set(st, k->values, k->scratch, k->layout, values, list) < 0) return NULL;
  return k->scratch;
}

/* The arguments of launch, in st->launch_kw's order (module.c interns them); "args" is an alias
 * of args_or_values. */
struct launch_in {
  gcl_launch_config cfg;
  PyObject *args_or_values, *args;
  gclpy_streamarg stream;   /* its handle only (ctx NULL): checked below, as a launch needs */
  int pdl;
};
#define L(name, field, ...) GCLPY_ARGN(name, struct launch_in, field, __VA_ARGS__)
static const gclpy_arg launch_args[] = {
  L("grid", cfg.grid, gclpy_to_dims),
  L("block", cfg.block, gclpy_to_dims),
  L("args_or_values", args_or_values, gclpy_to_object),
  L("shared", cfg.shared_bytes, gclpy_to_shared),
  L("stream", stream, gclpy_to_stream, 0, 0, GCLPY_NONE),
  L("cluster", cfg.cluster, gclpy_to_dims, 0, 0, GCLPY_NONE),
  L("cooperative", cfg.cooperative, gclpy_to_bool),
  L("args", args, gclpy_to_object),
  L("pdl", pdl, gclpy_to_pdl),
  L("priority", cfg.priority, gclpy_to_int, INT_MIN, INT_MAX),
};
#undef L
static const gclpy_params launch_params = {"launch", launch_args, GCLPY_COUNT(launch_args), 3, 2};

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
 * live stream of the kernel's context the first time it comes (gcl_stream_check, in full). The
 * handle the kernel's last launch was checked on is not asked again: a launch on it costs what
 * C's gcl_launch does (no cuStreamGetCtx per launch). Keeping the stream alive while launching
 * on it is the caller's, as in C. */
static int launch_stream(gclpy_state *st, gclpy_kernel *k, gclpy_streamarg *sa) {
  if (sa->ours) return sa->ours->captured ? PyList_Append(sa->ours->captured, (PyObject *)k) : 0;
  if ((uintptr_t)sa->handle <= 2 || sa->handle == k->stream_seen) return 0; /* default streams */
  gcl_context *ctx = ((gclpy_context *)((gclpy_module *)k->module)->context)->ctx;
  gcl_status s = gcl_stream_check(ctx, sa->handle, 0);
  if (s != GCL_OK) return gclpy_raise(st, s), -1;
  k->stream_seen = sa->handle;
  return 0;
}

/* The launch configuration from the arguments converted (stream, pdl, the args alias). */
static int launch_config(gclpy_state *st, gclpy_kernel *k, struct launch_in *in) {
  if (in->args) {
    if (in->args_or_values)
      return PyErr_SetString(PyExc_TypeError, "launch() got multiple values for argument "
                             "'args_or_values'"), -1;
    in->args_or_values = in->args;
  }
  if (!in->args_or_values)
    return PyErr_SetString(PyExc_TypeError, "launch() missing required argument 'args_or_values' "
                           "(pos 3)"), -1;
  if ((in->stream.ours || in->stream.handle) && launch_stream(st, k, &in->stream) < 0) return -1;
  in->cfg.stream = in->stream.handle;
  in->cfg.programmatic_dependent_launch = in->pdl != 0; /* programmatic stream serialization */
  if (in->pdl == 2) in->cfg.flags |= GCL_LAUNCH_PDL_UNCHECKED; /* the code never waits: launch */
  return 0;
}

PyObject *gclpy_kernel_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  gclpy_state *st = GCLPY_ST(self);
  struct launch_in in = {.cfg = {.stream = NULL}};
  if (gclpy_parse(st, &launch_params, st->launch_kw, argv, nargs, kwnames, &in) < 0 ||
      launch_config(st, k, &in) < 0)
    return NULL;
  gclpy_args *a;
  if (Py_IS_TYPE(in.args_or_values, st->args_type)) a = (gclpy_args *)in.args_or_values;
  else if (!(a = values_into_scratch(st, k, in.args_or_values))) return NULL;
  gcl_status s = gcl_launch(k->kernel, &in.cfg, a->args);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}

/* Kernel._launch_loop_c: C's loop in this process, the reference bench/bench_python.py divides
 * by. n times gcl_args_set_i32(args, index, i) + gcl_launch(grid 1, block 32) -- bench_launch's
 * "gcl_launch params" path -- with no Python between the launches; the caller times the call.
 * Private (a benchmark's instrument, not an API): the underscore keeps it out of the docs. */
struct loop_in {
  PyObject *args;
  size_t index, n;
  gclpy_streamarg stream;
};
static const gclpy_arg loop_args[] = {
  GCLPY_ARG(struct loop_in, args, gclpy_to_object),
  GCLPY_ARG(struct loop_in, index, gclpy_to_size, 0, UINT32_MAX),
  GCLPY_ARG(struct loop_in, n, gclpy_to_size, 0, INT32_MAX),
  GCLPY_ARG(struct loop_in, stream, gclpy_to_stream, 0, 0, GCLPY_NONE),
};
static const gclpy_params loop_params = {"_launch_loop_c", loop_args, 4, 3, 1};

const char gclpy_launch_loop_doc[] =
  "_launch_loop_c($self, /, args, index, n, stream=None)\n--\n\n"
  "bench/bench_python.py's C reference: n x (gcl_args_set_i32(args, index, i); gcl_launch) in C.";

PyObject *gclpy_kernel_launch_loop(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                   PyObject *kwnames) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  gclpy_state *st = GCLPY_ST(self);
  struct loop_in in = {.args = NULL};
  if (gclpy_parse(st, &loop_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  if (!Py_IS_TYPE(in.args, st->args_type))
    return gclpy_type_error("_launch_loop_c: args takes a gclaunch.Args", in.args);
  gcl_args *a = ((gclpy_args *)in.args)->args;
  gcl_launch_config cfg = {.grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = in.stream.handle};
  gcl_status s = GCL_OK;
  for (size_t i = 0; i < in.n && s == GCL_OK; i++)
    if ((s = gcl_args_set_i32(a, in.index, (int32_t)i)) == GCL_OK) s = gcl_launch(k->kernel, &cfg, a);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}
