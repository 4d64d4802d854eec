/* rt_stream.c -- gclaunch.Stream, gclaunch.Event, gclaunch.Graph over gcl_stream, gcl_event and
 * gcl_graph; the int argument helpers of the runtime files.
 *
 * Lifetimes: a Stream, Event or Graph keeps its Context alive; a Stream made by from_handle keeps
 * the wrapped object (a torch/CuPy/cuda.core stream) alive; a Graph keeps every Kernel launched
 * on a gclaunch.Stream during its capture (their modules own the CUfunctions the graph's nodes
 * run). Types holding arbitrary objects are GC-tracked. */
#include "gclpy.h"

#include <limits.h>

/* --- int arguments --------------------------------------------------------------------------- */

int gclpy_uint_arg(PyObject *v, const char *what, unsigned long long max, unsigned long long *out) {
  if (!PyLong_Check(v) || PyBool_Check(v))
    return gclpy_type_error(what, v), -1; /* `what` reads "occupancy: block takes an int" */
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  unsigned long long u = (unsigned long long)x;
  if (overflow > 0) {
    u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) PyErr_Clear(), overflow = 2;
    else overflow = 0;
  }
  if (overflow || x < 0 || u > max)
    return gclpy_raise_range("%s: %R is out of range (0 ... %llu)", what, v, max), -1;
  *out = u;
  return 0;
}

int gclpy_int_arg(PyObject *v, const char *what, long long lo, long long hi, long long *out) {
  if (!PyLong_Check(v) || PyBool_Check(v)) return gclpy_type_error(what, v), -1;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (overflow || x < lo || x > hi)
    return gclpy_raise_range("%s: %R is out of range (%lld ... %lld)", what, v, lo, hi), -1;
  *out = x;
  return 0;
}

/* A zeroed object of tp (GC-tracked when tp is a GC type: tp_alloc tracks it). */
PyObject *gclpy_alloc(PyTypeObject *tp) {
  return ((allocfunc)PyType_GetSlot(tp, Py_tp_alloc))(tp, 0);
}

/* The dealloc of the runtime's types: untrack (GC types), release, free, drop the type. */
void gclpy_free(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static gclpy_context *context_arg(PyObject *v) {
  if (!v || v == Py_None) return gclpy_default_context(0);
  if (!PyObject_TypeCheck(v, gclpy.context_type))
    return (gclpy_context *)gclpy_type_error("context: expected a gclaunch.Context or None", v);
  return (gclpy_context *)v;
}

/* --- Stream ----------------------------------------------------------------------------------- */

static PyObject *stream_wrap(gcl_stream *st, gclpy_context *c, PyObject *owner) {
  gclpy_stream *s = (gclpy_stream *)gclpy_alloc(gclpy.stream_type);
  if (!s) return gcl_stream_destroy(st), NULL;
  s->stream = st, s->handle = gcl_stream_handle(st);
  s->context = Py_NewRef((PyObject *)c), s->owner = Py_XNewRef(owner), s->captured = NULL;
  return (PyObject *)s;
}

static PyObject *stream_create(gclpy_context *c, PyObject *priority) {
  long long p = 0;
  if (priority && gclpy_int_arg(priority, "priority: expected an int", INT_MIN, INT_MAX, &p) < 0)
    return NULL;
  gcl_stream *st = NULL;
  gcl_status s = gcl_stream_create(c->ctx, (int)p, &st); /* the library refuses, naming the range */
  return s == GCL_OK ? stream_wrap(st, c, NULL) : gclpy_raise(s);
}

PyObject *gclpy_context_create_stream(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  static const char *const names[] = {"priority"};
  PyObject *v[1];
  if (gclpy_parse("create_stream", argv, nargs, kwnames, names, 1, 1, 0, v) < 0) return NULL;
  return stream_create((gclpy_context *)self, v[0]);
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"context", "priority", NULL};
  PyObject *ctx = NULL, *priority = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:Stream", kw, &ctx, &priority)) return NULL;
  gclpy_context *c = context_arg(ctx);
  return c ? stream_create(c, priority) : NULL;
}

/* The CUstream of an int or a __cuda_stream__ object (torch streams older than the protocol:
 * their int attribute cuda_stream). */
static int foreign_handle(PyObject *v, void **out, const char *what) {
  if (PyLong_Check(v) && !PyBool_Check(v)) {
    unsigned long long h;
    if (gclpy_uint_arg(v, what, UINTPTR_MAX, &h) < 0) return -1;
    *out = (void *)(uintptr_t)h;
    return 0;
  }
  PyObject *fn = PyObject_GetAttr(v, gclpy.str_cuda_stream), *h = NULL, *r = NULL;
  if (fn) {
    r = PyObject_CallNoArgs(fn);
    Py_DECREF(fn);
    if (!r) return -1;
    h = PyTuple_Check(r) && PyTuple_Size(r) == 2 ? PyTuple_GetItem(r, 1) : NULL;
    if (!h || !PyLong_Check(h)) {
      Py_DECREF(r);
      return gclpy_type_error("__cuda_stream__() must return a tuple (version, handle: int)", v), -1;
    }
    Py_INCREF(h);
    Py_DECREF(r);
  } else {
    PyErr_Clear();
    h = PyObject_GetAttrString(v, "cuda_stream");
    if (!h || !PyLong_Check(h)) {
      Py_XDECREF(h);
      PyErr_Clear();
      return gclpy_type_error(what, v), -1;
    }
  }
  unsigned long long x;
  int rc = gclpy_uint_arg(h, what, UINTPTR_MAX, &x);
  Py_DECREF(h);
  if (rc == 0) *out = (void *)(uintptr_t)x;
  return rc;
}

static PyObject *stream_from_handle(PyObject *cls, PyObject *const *argv, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  (void)cls;
  static const char *const names[] = {"obj", "context"};
  PyObject *v[2];
  if (gclpy_parse("from_handle", argv, nargs, kwnames, names, 2, 2, 1, v) < 0) return NULL;
  if (PyObject_TypeCheck(v[0], gclpy.stream_type)) return Py_NewRef(v[0]);
  gclpy_context *c = context_arg(v[1]);
  void *h = NULL;
  if (!c || foreign_handle(v[0], &h, "from_handle: obj takes an int CUstream or an object with "
                                     "__cuda_stream__") < 0)
    return NULL;
  gcl_stream *st = NULL;
  gcl_status s = gcl_stream_wrap(c->ctx, h, &st);
  if (s != GCL_OK) return gclpy_raise(s);
  return stream_wrap(st, c, PyLong_Check(v[0]) ? NULL : v[0]);
}

static int stream_open(gclpy_stream *s) {
  if (s->stream) return 0;
  gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "stream: the Stream was closed");
  return -1;
}

int gclpy_stream_for_launch(gclpy_stream *s, PyObject *kernel, void **handle) {
  if (stream_open(s) < 0) return -1;
  if (s->captured && PyList_Append(s->captured, kernel) < 0) return -1;
  *handle = s->handle;
  return 0;
}

int gclpy_stream_arg(PyObject *v, gclpy_context *ctx, gcl_stream **out, gcl_stream **tmp,
                     const char *what) {
  *out = NULL, *tmp = NULL;
  if (!v || v == Py_None) return 0;
  if (PyObject_TypeCheck(v, gclpy.stream_type)) {
    if (stream_open((gclpy_stream *)v) < 0) return -1;
    *out = ((gclpy_stream *)v)->stream;
    return 0;
  }
  void *h = NULL;
  if (foreign_handle(v, &h, what) < 0) return -1;
  gcl_status s = gcl_stream_wrap(ctx->ctx, h, tmp);
  if (s != GCL_OK) return gclpy_raise(s), -1;
  *out = *tmp;
  return 0;
}

static int stream_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_stream *s = (gclpy_stream *)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(s->context);
  Py_VISIT(s->owner);
  Py_VISIT(s->captured);
  return 0;
}

static int stream_clear(PyObject *self) {
  gclpy_stream *s = (gclpy_stream *)self;
  Py_CLEAR(s->owner);
  Py_CLEAR(s->captured);
  return 0;
}

static void stream_dealloc(PyObject *self) {
  gclpy_stream *s = (gclpy_stream *)self;
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  gcl_stream_destroy(s->stream); /* before the context it borrows */
  stream_clear(self);
  Py_CLEAR(s->context);
  (void)tp;
  gclpy_free(self);
}

static PyObject *stream_close(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_stream *s = (gclpy_stream *)self;
  gcl_stream_destroy(s->stream);
  s->stream = NULL;
  Py_CLEAR(s->captured);
  Py_RETURN_NONE;
}

static PyObject *stream_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_stream *s = (gclpy_stream *)self;
  if (stream_open(s) < 0) return NULL;
  gcl_status st;
  Py_BEGIN_ALLOW_THREADS
  st = gcl_stream_synchronize(s->stream);
  Py_END_ALLOW_THREADS
  if (st != GCL_OK) return gclpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *cuda_stream(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_stream *s = (gclpy_stream *)self;
  if (stream_open(s) < 0) return NULL;
  return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(s->handle));
}

static PyObject *event_make(gclpy_context *c);

static PyObject *stream_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  static const char *const names[] = {"event"};
  PyObject *v[1];
  gclpy_stream *s = (gclpy_stream *)self;
  if (gclpy_parse("record", argv, nargs, kwnames, names, 1, 1, 0, v) < 0 || stream_open(s) < 0)
    return NULL;
  PyObject *e;
  if (!v[0] || v[0] == Py_None) {
    if (!(e = event_make((gclpy_context *)s->context))) return NULL;
  } else if (PyObject_TypeCheck(v[0], gclpy.event_type)) {
    e = Py_NewRef(v[0]);
  } else {
    return gclpy_type_error("record: event takes a gclaunch.Event or None", v[0]);
  }
  gcl_status st = gcl_event_record(((gclpy_event *)e)->event, s->stream);
  if (st != GCL_OK) return Py_DECREF(e), gclpy_raise(st);
  return e;
}

static PyObject *stream_wait(PyObject *self, PyObject *what) {
  gclpy_stream *s = (gclpy_stream *)self;
  if (stream_open(s) < 0) return NULL;
  if (PyObject_TypeCheck(what, gclpy.event_type)) {
    gcl_status st = gcl_stream_wait_event(s->stream, ((gclpy_event *)what)->event);
    if (st != GCL_OK) return gclpy_raise(st);
    Py_RETURN_NONE;
  }
  /* Another stream (any kind): an event recorded on it now, waited for here. */
  gcl_stream *other = NULL, *tmp = NULL;
  if (gclpy_stream_arg(what, (gclpy_context *)s->context, &other, &tmp,
                       "wait: takes a gclaunch.Event or a stream") < 0)
    return NULL;
  if (!other) { /* None: the default stream */
    gcl_stream_destroy(tmp);
    return gclpy_type_error("wait: takes a gclaunch.Event or a stream", what);
  }
  gcl_event *e = NULL;
  gcl_status st = gcl_event_create(gcl_stream_context(other), &e);
  if (st == GCL_OK) st = gcl_event_record(e, other);
  if (st == GCL_OK) st = gcl_stream_wait_event(s->stream, e);
  gcl_event_destroy(e); /* the wait holds what it needs */
  gcl_stream_destroy(tmp);
  if (st != GCL_OK) return gclpy_raise(st);
  Py_RETURN_NONE;
}

/* --- Graph (capture) ----------------------------------------------------------------------- */

typedef struct gclpy_graph {
  PyObject_HEAD
  gcl_graph *graph;         /* NULL until the capture ended (and after close) */
  PyObject *stream;         /* the Stream captured (until the capture ended) */
  PyObject *context;
  PyObject *kernels;        /* list: the Kernels launched during the capture */
  int state;                /* GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED */
} gclpy_graph;
enum { GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED };

static gclpy_graph *graph_new(gclpy_stream *s) {
  gclpy_graph *g = (gclpy_graph *)gclpy_alloc(gclpy.graph_type);
  if (!g) return NULL;
  g->graph = NULL, g->stream = Py_NewRef((PyObject *)s), g->context = Py_NewRef(s->context);
  g->kernels = NULL, g->state = GRAPH_PENDING;
  return g;
}

static int capture_begin(gclpy_stream *s) {
  if (stream_open(s) < 0) return -1;
  if (s->captured)
    return gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "begin_capture: the stream is already "
                           "capturing a graph"), -1;
  PyObject *list = PyList_New(0);
  if (!list) return -1;
  gcl_status st = gcl_graph_capture_begin(s->stream);
  if (st != GCL_OK) return Py_DECREF(list), gclpy_raise(st), -1;
  s->captured = list;
  return 0;
}

/* Ends the capture into g (made when NULL). */
static PyObject *capture_end(gclpy_stream *s, gclpy_graph *g) {
  if (stream_open(s) < 0) return NULL;
  if (!s->captured)
    return gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "end_capture: the stream is not capturing "
                           "(begin_capture first)");
  PyObject *kernels = s->captured;
  s->captured = NULL;
  gcl_graph *graph = NULL;
  gcl_status st = gcl_graph_capture_end(s->stream, &graph); /* the capture ended, also on failure */
  if (st != GCL_OK) return Py_DECREF(kernels), gclpy_raise(st);
  if (g) Py_INCREF(g);
  else if (!(g = graph_new(s))) return Py_DECREF(kernels), gcl_graph_destroy(graph), NULL;
  g->graph = graph, g->kernels = kernels, g->state = GRAPH_READY;
  Py_CLEAR(g->stream);
  return (PyObject *)g;
}

static PyObject *stream_begin_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  if (capture_begin((gclpy_stream *)self) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_end_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  return capture_end((gclpy_stream *)self, NULL);
}

static PyObject *stream_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  if (stream_open((gclpy_stream *)self) < 0) return NULL;
  return (PyObject *)graph_new((gclpy_stream *)self);
}

static PyObject *graph_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state != GRAPH_PENDING)
    return gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "Graph: only a graph from "
                           "stream.capture() can be entered, once");
  if (capture_begin((gclpy_stream *)g->stream) < 0) return NULL;
  g->state = GRAPH_CAPTURING;
  return Py_NewRef(self);
}

static PyObject *graph_exit(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state != GRAPH_CAPTURING) Py_RETURN_FALSE;
  bool failed = nargs > 0 && argv[0] != Py_None; /* an exception left the block */
  gclpy_stream *s = (gclpy_stream *)g->stream;
  if (failed) { /* end the capture, drop what it made, let the exception through */
    gcl_graph *graph = NULL;
    if (s->stream && s->captured && gcl_graph_capture_end(s->stream, &graph) == GCL_OK)
      gcl_graph_destroy(graph);
    Py_CLEAR(s->captured);
    g->state = GRAPH_CLOSED;
    Py_CLEAR(g->stream);
    Py_RETURN_FALSE;
  }
  PyObject *r = capture_end(s, g);
  if (!r) {
    g->state = GRAPH_CLOSED;
    Py_CLEAR(g->stream);
    return NULL;
  }
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static int graph_ready(gclpy_graph *g, const char *what) {
  if (g->state == GRAPH_READY) return 0;
  gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "%s: the graph is %s", what,
                  g->state == GRAPH_CLOSED ? "closed" : "still being captured (leave the with block)");
  return -1;
}

static PyObject *graph_kernel_count(PyObject *self, void *closure) {
  (void)closure;
  gclpy_graph *g = (gclpy_graph *)self;
  if (graph_ready(g, "kernel_count") < 0) return NULL;
  size_t n = 0;
  gcl_status st = gcl_graph_kernel_count(g->graph, &n);
  return st == GCL_OK ? PyLong_FromSize_t(n) : gclpy_raise(st);
}

static PyObject *graph_set_args(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                PyObject *kwnames) {
  static const char *const names[] = {"node", "kernel", "args_or_values"};
  PyObject *v[3];
  gclpy_graph *g = (gclpy_graph *)self;
  if (gclpy_parse("set_args", argv, nargs, kwnames, names, 3, 3, 3, v) < 0 ||
      graph_ready(g, "set_args") < 0)
    return NULL;
  unsigned long long node;
  if (gclpy_uint_arg(v[0], "set_args: node takes an int", SIZE_MAX, &node) < 0) return NULL;
  if (!PyObject_TypeCheck(v[1], gclpy.kernel_type))
    return gclpy_type_error("set_args: kernel takes a gclaunch.Kernel", v[1]);
  gclpy_kernel *k = (gclpy_kernel *)v[1];
  gclpy_args *a = PyObject_TypeCheck(v[2], gclpy.args_type) ? (gclpy_args *)v[2]
                                                            : gclpy_kernel_values(k, v[2]);
  if (!a) return NULL;
  gcl_status st = gcl_graph_set_args(g->graph, (size_t)node, k->kernel, a->args);
  if (st != GCL_OK) return gclpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *graph_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  static const char *const names[] = {"stream"};
  PyObject *v[1];
  gclpy_graph *g = (gclpy_graph *)self;
  if (gclpy_parse("launch", argv, nargs, kwnames, names, 1, 1, 0, v) < 0 ||
      graph_ready(g, "launch") < 0)
    return NULL;
  gcl_stream *s = NULL, *tmp = NULL;
  if (gclpy_stream_arg(v[0], (gclpy_context *)g->context, &s, &tmp,
                       "launch: stream takes None, a gclaunch.Stream, an int CUstream or an "
                       "object with __cuda_stream__") < 0)
    return NULL;
  gcl_status st = gcl_graph_launch(g->graph, s);
  gcl_stream_destroy(tmp);
  if (st != GCL_OK) return gclpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *graph_close(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state == GRAPH_CAPTURING)
    return gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "close: the graph is still being captured");
  gcl_graph_destroy(g->graph);
  g->graph = NULL, g->state = GRAPH_CLOSED;
  Py_CLEAR(g->kernels);
  Py_CLEAR(g->stream);
  Py_RETURN_NONE;
}

static PyObject *graph_kernels(PyObject *self, void *closure) {
  (void)closure;
  gclpy_graph *g = (gclpy_graph *)self;
  return g->kernels ? PyList_AsTuple(g->kernels) : PyTuple_New(0);
}

static int graph_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_graph *g = (gclpy_graph *)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(g->stream);
  Py_VISIT(g->context);
  Py_VISIT(g->kernels);
  return 0;
}

static int graph_clear(PyObject *self) {
  gclpy_graph *g = (gclpy_graph *)self;
  Py_CLEAR(g->stream);
  Py_CLEAR(g->kernels);
  return 0;
}

static void graph_dealloc(PyObject *self) {
  gclpy_graph *g = (gclpy_graph *)self;
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  gcl_graph_destroy(g->graph); /* before the kernels and the context it uses */
  graph_clear(self);
  Py_CLEAR(g->context);
  (void)tp;
  gclpy_free(self);
}

static PyObject *graph_repr(PyObject *self) {
  gclpy_graph *g = (gclpy_graph *)self;
  static const char *const states[] = {"not begun", "capturing", "ready", "closed"};
  Py_ssize_t n = g->kernels ? PyList_Size(g->kernels) : 0;
  return PyUnicode_FromFormat("<gclaunch.Graph %s, %zd kernel launches seen>", states[g->state], n);
}

static PyMethodDef graph_methods[] = {
  {"__enter__", graph_enter, METH_NOARGS, "Begins capturing the stream (stream.capture())."},
  {"__exit__", GCLPY_METH(graph_exit), METH_FASTCALL,
   "Ends the capture and instantiates the graph; after an exception in the block the capture\n"
   "is ended and dropped, and the exception goes on."},
  {"set_args", GCLPY_METH(graph_set_args), METH_FASTCALL | METH_KEYWORDS,
   "set_args(node, kernel, args_or_values)\n\nReplaces the arguments of kernel node `node` (0 = the\n"
   "first kernel launched in the capture) with an Args of `kernel` (the kernel the node was\n"
   "captured from) or one value per parameter (gcl_graph_set_args). The driver copies them; grid,\n"
   "block and launch attributes of the node stay. Takes effect for later launch() calls."},
  {"launch", GCLPY_METH(graph_launch), METH_FASTCALL | METH_KEYWORDS,
   "launch(stream=None)\n\nReplays the graph on stream (None: the context's default stream; a\n"
   "gclaunch.Stream, an int CUstream or an object with __cuda_stream__)."},
  {"close", graph_close, METH_NOARGS, "close()\n\nDestroys the graph now (a replay in flight completes)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef graph_getset[] = {
  {"kernel_count", graph_kernel_count, NULL, "the number of kernel nodes", NULL},
  {"kernels", graph_kernels, NULL,
   "the Kernels launched on the gclaunch.Stream during the capture, in order (kept alive)", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot graph_slots[] = {
  {Py_tp_dealloc, graph_dealloc}, {Py_tp_traverse, graph_traverse}, {Py_tp_clear, graph_clear},
  {Py_tp_methods, graph_methods}, {Py_tp_getset, graph_getset}, {Py_tp_repr, graph_repr},
  {Py_tp_doc, "A CUDA graph captured from a Stream's launches, instantiated:\n"
              "  with stream.capture() as g:\n"
              "      k.launch(grid, block, args, stream=stream)\n"
              "  g.set_args(0, k, new_args); g.launch(stream)\n"
              "or stream.begin_capture() ... g = stream.end_capture(). Copies and fills queued on\n"
              "the stream during the capture become nodes too (not kernel nodes)."},
  {0, NULL}};
static PyType_Spec graph_spec = {"gclaunch.Graph", sizeof(gclpy_graph), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                     Py_TPFLAGS_DISALLOW_INSTANTIATION, graph_slots};

/* --- Stream type ------------------------------------------------------------------------------ */

static PyObject *stream_get(PyObject *self, void *what) {
  gclpy_stream *s = (gclpy_stream *)self;
  switch ((int)(intptr_t)what) {
  case 0: return PyLong_FromVoidPtr(s->handle);
  case 1: return PyLong_FromLong(s->stream ? gcl_stream_priority(s->stream) : 0);
  case 2: return Py_NewRef(s->context);
  case 3: return PyBool_FromLong(s->captured != NULL);
  default: return PyBool_FromLong(s->stream == NULL);
  }
}

static PyObject *stream_repr(PyObject *self) {
  gclpy_stream *s = (gclpy_stream *)self;
  return PyUnicode_FromFormat("<gclaunch.Stream %p, device %d, priority %d%s%s>", s->handle,
                              ((gclpy_context *)s->context)->device,
                              s->stream ? gcl_stream_priority(s->stream) : 0,
                              s->owner ? ", wrapped" : "", s->stream ? "" : ", closed");
}

static PyObject *stream_self(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *stream_exit(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
  (void)argv, (void)nargs;
  PyObject *r = stream_close(self, NULL);
  Py_XDECREF(r);
  if (!r) return NULL;
  Py_RETURN_FALSE;
}

static PyMethodDef stream_methods[] = {
  {"from_handle", GCLPY_METH(stream_from_handle), METH_FASTCALL | METH_KEYWORDS | METH_CLASS,
   "from_handle(obj, context=None) -> Stream\n\nWraps a stream made by someone else: an int\n"
   "CUstream or any object with __cuda_stream__ (torch, CuPy, cuda.core streams), kept alive by\n"
   "the Stream. The driver checks the handle (gclaunch.Error GCL_ERROR_DRIVER when it is no\n"
   "stream of the device). context: the device's Context (None: device 0's)."},
  {"__cuda_stream__", cuda_stream, METH_NOARGS,
   "__cuda_stream__() -> (0, handle)\n\nThe CUDA stream protocol (version 0, the CUstream as an int)."},
  {"synchronize", stream_synchronize, METH_NOARGS,
   "synchronize()\n\nWaits for the stream's work (gclaunch.Error while it is capturing a graph;\n"
   "GCL_ERROR_KERNEL_FAULT when a kernel on it faulted)."},
  {"record", GCLPY_METH(stream_record), METH_FASTCALL | METH_KEYWORDS,
   "record(event=None) -> Event\n\nRecords event (a new one of the stream's context when None)\n"
   "at the stream's current end and returns it."},
  {"wait", stream_wait, METH_O,
   "wait(event_or_stream)\n\nMakes work queued on this stream from now on wait for the event's\n"
   "last record, or for everything queued so far on another stream. Does not block the host."},
  {"begin_capture", stream_begin_capture, METH_NOARGS,
   "begin_capture()\n\nStarts capturing the stream's launches, copies and fills into a graph\n"
   "(thread-local mode). The stream must not be synchronized until end_capture()."},
  {"end_capture", stream_end_capture, METH_NOARGS,
   "end_capture() -> Graph\n\nEnds the capture and instantiates the graph (gclaunch.Error when no\n"
   "kernel was launched, or the driver invalidated the capture)."},
  {"capture", stream_capture, METH_NOARGS,
   "capture() -> Graph\n\nA graph to fill in a with block: `with stream.capture() as g: ...`."},
  {"close", stream_close, METH_NOARGS,
   "close()\n\nDestroys the stream now (a wrapped one: only the wrapper); later use raises."},
  {"__enter__", stream_self, METH_NOARGS, NULL},
  {"__exit__", GCLPY_METH(stream_exit), METH_FASTCALL, NULL},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef stream_getset[] = {
  {"handle", stream_get, NULL, "the CUstream as an int", (void *)0},
  {"priority", stream_get, NULL,
   "the stream's priority (0 lowest; lower numbers are higher priorities)", (void *)1},
  {"context", stream_get, NULL, "the Context of the stream's device", (void *)2},
  {"is_capturing", stream_get, NULL, "True between begin_capture and end_capture", (void *)3},
  {"closed", stream_get, NULL, "True after close()", (void *)4},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot stream_slots[] = {
  {Py_tp_new, stream_new}, {Py_tp_dealloc, stream_dealloc}, {Py_tp_traverse, stream_traverse},
  {Py_tp_clear, stream_clear}, {Py_tp_methods, stream_methods}, {Py_tp_getset, stream_getset},
  {Py_tp_repr, stream_repr},
  {Py_tp_doc, "Stream(context=None, priority=0)\n\n"
              "A non-blocking CUDA stream of the context's device (None: device 0), or\n"
              "ctx.create_stream(priority). priority: 0 is the lowest; lower numbers are higher\n"
              "priorities, down to the device's greatest: out of range is refused, naming the range.\n"
              "Stream.from_handle(obj) wraps a torch/CuPy/cuda.core stream. Exports __cuda_stream__;\n"
              "k.launch(..., stream=s), Event.record, Buffer copies and graphs take it."},
  {0, NULL}};
static PyType_Spec stream_spec = {"gclaunch.Stream", sizeof(gclpy_stream), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, stream_slots};

/* --- Event ------------------------------------------------------------------------------------ */

static PyObject *event_make(gclpy_context *c) {
  gcl_event *ev = NULL;
  gcl_status st = gcl_event_create(c->ctx, &ev);
  if (st != GCL_OK) return gclpy_raise(st);
  gclpy_event *e = (gclpy_event *)gclpy_alloc(gclpy.event_type);
  if (!e) return gcl_event_destroy(ev), NULL;
  e->event = ev, e->context = Py_NewRef((PyObject *)c);
  return (PyObject *)e;
}

PyObject *gclpy_context_create_event(PyObject *self, PyObject *unused) {
  (void)unused;
  return event_make((gclpy_context *)self);
}

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"context", NULL};
  PyObject *ctx = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Event", kw, &ctx)) return NULL;
  gclpy_context *c = context_arg(ctx);
  return c ? event_make(c) : NULL;
}

static void event_dealloc(PyObject *self) {
  gclpy_event *e = (gclpy_event *)self;
  PyTypeObject *tp = Py_TYPE(self);
  gcl_event_destroy(e->event);
  Py_CLEAR(e->context);
  (void)tp;
  gclpy_free(self);
}

static PyObject *event_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  static const char *const names[] = {"stream"};
  PyObject *v[1];
  gclpy_event *e = (gclpy_event *)self;
  if (gclpy_parse("record", argv, nargs, kwnames, names, 1, 1, 0, v) < 0) return NULL;
  gcl_stream *s = NULL, *tmp = NULL;
  if (gclpy_stream_arg(v[0], (gclpy_context *)e->context, &s, &tmp,
                       "record: stream takes None, a gclaunch.Stream, an int CUstream or an "
                       "object with __cuda_stream__") < 0)
    return NULL;
  gcl_status st = gcl_event_record(e->event, s);
  gcl_stream_destroy(tmp);
  if (st != GCL_OK) return gclpy_raise(st);
  return Py_NewRef(self);
}

static PyObject *event_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status st;
  gcl_event *e = ((gclpy_event *)self)->event;
  Py_BEGIN_ALLOW_THREADS
  st = gcl_event_synchronize(e);
  Py_END_ALLOW_THREADS
  if (st != GCL_OK) return gclpy_raise(st);
  Py_RETURN_NONE;
}

static PyObject *event_is_done(PyObject *self, void *closure) {
  (void)closure;
  bool done = false;
  gcl_status st = gcl_event_query(((gclpy_event *)self)->event, &done);
  return st == GCL_OK ? PyBool_FromLong(done) : gclpy_raise(st);
}

static PyObject *event_context(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(((gclpy_event *)self)->context);
}

/* stop - start: milliseconds of device time from start's record to stop's (waits for stop). */
static PyObject *event_sub(PyObject *a, PyObject *b) {
  if (!PyObject_TypeCheck(a, gclpy.event_type) || !PyObject_TypeCheck(b, gclpy.event_type))
    Py_RETURN_NOTIMPLEMENTED;
  double us = 0;
  gcl_status st;
  gcl_event *start = ((gclpy_event *)b)->event, *stop = ((gclpy_event *)a)->event;
  Py_BEGIN_ALLOW_THREADS
  st = gcl_event_elapsed_us(start, stop, &us);
  Py_END_ALLOW_THREADS
  return st == GCL_OK ? PyFloat_FromDouble(us / 1000.0) : gclpy_raise(st);
}

static PyObject *event_elapsed(PyObject *self, PyObject *stop) { return event_sub(stop, self); }

static PyMethodDef event_methods[] = {
  {"record", GCLPY_METH(event_record), METH_FASTCALL | METH_KEYWORDS,
   "record(stream=None) -> Event\n\nRecords the event at the current end of stream (None: the\n"
   "context's default stream; a gclaunch.Stream, an int CUstream or a __cuda_stream__ object of\n"
   "the event's device). Returns the event."},
  {"synchronize", event_synchronize, METH_NOARGS,
   "synchronize()\n\nWaits until the work before the last record completed (at once if never recorded)."},
  {"elapsed_ms", event_elapsed, METH_O,
   "elapsed_ms(stop) -> float\n\nMilliseconds of device time from this event's record to stop's\n"
   "(waits for stop; resolution about 0.5 us): the same as stop - self."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef event_getset[] = {
  {"is_done", event_is_done, NULL,
   "whether the work before the last record completed (True if never recorded); does not wait", NULL},
  {"context", event_context, NULL, "the Context of the event's device", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot event_slots[] = {
  {Py_tp_new, event_new}, {Py_tp_dealloc, event_dealloc}, {Py_tp_methods, event_methods},
  {Py_tp_getset, event_getset}, {Py_nb_subtract, event_sub},
  {Py_tp_doc, "Event(context=None)\n\n"
              "A CUDA event with timing (or ctx.create_event(), stream.record()).\n"
              "stop - start is the device time between their records in milliseconds (float), as\n"
              "cuda.core's Event and CuPy's get_elapsed_time give it."},
  {0, NULL}};
static PyType_Spec event_spec = {"gclaunch.Event", sizeof(gclpy_event), 0, Py_TPFLAGS_DEFAULT,
                                 event_slots};

int gclpy_rt_stream_init_types(PyObject *m) {
  gclpy.stream_type = (PyTypeObject *)PyType_FromSpec(&stream_spec);
  gclpy.event_type = (PyTypeObject *)PyType_FromSpec(&event_spec);
  gclpy.graph_type = (PyTypeObject *)PyType_FromSpec(&graph_spec);
  if (!gclpy.stream_type || !gclpy.event_type || !gclpy.graph_type) return -1;
  if (PyModule_AddObjectRef(m, "Stream", (PyObject *)gclpy.stream_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Event", (PyObject *)gclpy.event_type) < 0) return -1;
  return PyModule_AddObjectRef(m, "Graph", (PyObject *)gclpy.graph_type);
}
