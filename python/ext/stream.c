/* stream.c -- L2: gclaunch.Stream, gclaunch.Event, gclaunch.Graph over gcl_stream, gcl_event and
 * gcl_graph.
 *
 * Lifetimes: a Stream, Event or Graph keeps its Context alive; a Stream made by from_handle keeps
 * the wrapped object (a torch/CuPy/cuda.core stream) alive; a Graph keeps every Kernel launched
 * on a gclaunch.Stream during its capture (their modules own the CUfunctions the graph's nodes
 * run). Stream and Graph hold arbitrary objects and are GC-tracked. */
#include "gclpy.h"

#include <limits.h>

static gclpy_context *context_arg(gclpy_state *st, PyObject *v) {
  if (!v || v == Py_None) return gclpy_default_context(st, 0);
  if (!Py_IS_TYPE(v, st->context_type))
    return (gclpy_context *)gclpy_type_error("context: expected a gclaunch.Context or None", v);
  return (gclpy_context *)v;
}

static int open_or_raise(gclpy_state *st, gclpy_stream *s) {
  if (s->stream) return 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "stream: the Stream was closed");
  return -1;
}

/* --- Stream ----------------------------------------------------------------------------------- */

static PyObject *stream_wrap(gclpy_state *st, gcl_stream *gs, gclpy_context *c, PyObject *owner) {
  gclpy_stream *s = (gclpy_stream *)gclpy_alloc(st->stream_type);
  if (!s) return gcl_stream_destroy(gs), NULL;
  s->stream = gs, s->handle = gcl_stream_handle(gs);
  s->context = Py_NewRef((PyObject *)c), s->owner = Py_XNewRef(owner), s->captured = NULL;
  return (PyObject *)s;
}

static PyObject *stream_create(gclpy_state *st, gclpy_context *c, PyObject *priority) {
  long long p = 0;
  if (priority && gclpy_long_arg(st, priority, "priority", INT_MIN, INT_MAX, &p) < 0) return NULL;
  gcl_stream *gs = NULL;
  gcl_status s = gcl_stream_create(c->ctx, (int)p, &gs); /* the library refuses, naming the range */
  return s == GCL_OK ? stream_wrap(st, gs, c, NULL) : gclpy_raise(st, s);
}

static const char *const create_names[] = {"priority"};
static const gclpy_params create_params = {"create_stream", create_names, 1, 1, 0};

PyObject *gclpy_context_create_stream(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[1];
  if (gclpy_parse(&create_params, NULL, argv, nargs, kwnames, v) < 0) return NULL;
  return stream_create(st, (gclpy_context *)self, v[0]);
}

const char gclpy_doc_create_stream[] =
    "create_stream($self, /, priority=0)\n--\n\n"
    "A non-blocking Stream of this device; priority 0 is the lowest, lower numbers are higher (a\n"
    "priority outside the device's range is refused, naming the range).";

static const char *const stream_names[] = {"context", "priority"};
static const gclpy_params stream_params = {"Stream", stream_names, 2, 2, 0};

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  PyObject *v[2];
  if (gclpy_parse_tuple(&stream_params, args, kwds, v) < 0) return NULL;
  gclpy_context *c = context_arg(st, v[0]);
  return c ? stream_create(st, c, v[1]) : NULL;
}

static const char *const from_names[] = {"obj", "context"};
static const gclpy_params from_params = {"from_handle", from_names, 2, 2, 1};

static PyObject *stream_from_handle(PyObject *cls, PyObject *const *argv, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState((PyTypeObject *)cls);
  PyObject *v[2];
  if (gclpy_parse(&from_params, NULL, argv, nargs, kwnames, v) < 0) return NULL;
  if (Py_IS_TYPE(v[0], st->stream_type)) return Py_NewRef(v[0]);
  gclpy_context *c = context_arg(st, v[1]);
  void *h = NULL;
  if (!c || gclpy_foreign_handle(st, v[0], &h, "from_handle: obj takes an int CUstream or an "
                                 "object with __cuda_stream__") < 0)
    return NULL;
  gcl_stream *gs = NULL;
  gcl_status s = gcl_stream_wrap(c->ctx, h, &gs);
  if (s != GCL_OK) return gclpy_raise(st, s);
  return stream_wrap(st, gs, c, PyLong_Check(v[0]) ? NULL : v[0]);
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
  PyObject_GC_UnTrack(self);
  gcl_stream_destroy(s->stream); /* before the context it borrows */
  stream_clear(self);
  Py_CLEAR(s->context);
  gclpy_free(self);
}

static PyObject *stream_close(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_stream *s = (gclpy_stream *)self;
  if (s->waiting) /* synchronize() released the GIL and still uses the stream */
    return gclpy_raise_msg(GCLPY_ST(self), GCL_ERROR_INVALID_ARGUMENT, "close: %d other thread%s "
                           "%s waiting in synchronize() on this Stream: close it after %s returns",
                           s->waiting, s->waiting == 1 ? "" : "s", s->waiting == 1 ? "is" : "are",
                           s->waiting == 1 ? "that call" : "those calls");
  gcl_stream_destroy(s->stream);
  s->stream = NULL;
  Py_CLEAR(s->captured);
  Py_RETURN_NONE;
}

static PyObject *stream_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_stream *s = (gclpy_stream *)self;
  if (open_or_raise(st, s) < 0) return NULL;
  gcl_status rc;
  s->waiting++; /* with the GIL released another thread may call close(): it refuses meanwhile */
  Py_BEGIN_ALLOW_THREADS
  rc = gcl_stream_synchronize(s->stream);
  Py_END_ALLOW_THREADS
  s->waiting--;
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *cuda_stream(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_stream *s = (gclpy_stream *)self;
  if (open_or_raise(GCLPY_ST(self), s) < 0) return NULL;
  return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(s->handle));
}

static PyObject *event_make(gclpy_state *st, gclpy_context *c);

static const char *const record_names[] = {"event"};
static const gclpy_params record_params = {"record", record_names, 1, 1, 0};

static PyObject *stream_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[1];
  gclpy_stream *s = (gclpy_stream *)self;
  if (gclpy_parse(&record_params, NULL, argv, nargs, kwnames, v) < 0 || open_or_raise(st, s) < 0)
    return NULL;
  PyObject *e;
  if (!v[0] || v[0] == Py_None) {
    if (!(e = event_make(st, (gclpy_context *)s->context))) return NULL;
  } else if (Py_IS_TYPE(v[0], st->event_type)) {
    e = Py_NewRef(v[0]);
  } else {
    return gclpy_type_error("record: event takes a gclaunch.Event or None", v[0]);
  }
  gcl_status rc = gcl_event_record(((gclpy_event *)e)->event, s->stream);
  if (rc != GCL_OK) return Py_DECREF(e), gclpy_raise(st, rc);
  return e;
}

static PyObject *stream_wait(PyObject *self, PyObject *what) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_stream *s = (gclpy_stream *)self;
  if (open_or_raise(st, s) < 0) return NULL;
  if (Py_IS_TYPE(what, st->event_type)) {
    gcl_status rc = gcl_stream_wait_event(s->stream, ((gclpy_event *)what)->event);
    if (rc != GCL_OK) return gclpy_raise(st, rc);
    Py_RETURN_NONE;
  }
  if (what == Py_None) return gclpy_type_error("wait: takes a gclaunch.Event or a stream", what);
  /* Another stream (any kind): an event recorded on it now, waited for here. */
  gcl_stream *other = NULL, *tmp = NULL;
  if (gclpy_stream_arg(st, what, (gclpy_context *)s->context, &other, &tmp,
                       "wait: takes a gclaunch.Event or a stream") < 0)
    return NULL;
  gcl_event *e = NULL;
  gcl_status rc = gcl_event_create(gcl_stream_context(other), &e);
  if (rc == GCL_OK) rc = gcl_event_record(e, other);
  if (rc == GCL_OK) rc = gcl_stream_wait_event(s->stream, e);
  gcl_event_destroy(e); /* the wait holds what it needs */
  gcl_stream_destroy(tmp);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

/* --- Graph (capture) ---------------------------------------------------------------------------- */

typedef struct gclpy_graph {
  PyObject_HEAD
  gcl_graph *graph;         /* NULL until the capture ended (and after close) */
  PyObject *stream;         /* the Stream captured (until the capture ended) */
  PyObject *context;
  PyObject *kernels;        /* list: the Kernels launched during the capture */
  int state;                /* GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED */
} gclpy_graph;
enum { GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED };

static gclpy_graph *graph_new(gclpy_state *st, gclpy_stream *s) {
  gclpy_graph *g = (gclpy_graph *)gclpy_alloc(st->graph_type);
  if (!g) return NULL;
  g->graph = NULL, g->stream = Py_NewRef((PyObject *)s), g->context = Py_NewRef(s->context);
  g->kernels = NULL, g->state = GRAPH_PENDING;
  return g;
}

static int capture_begin(gclpy_state *st, gclpy_stream *s) {
  if (open_or_raise(st, s) < 0) return -1;
  if (s->captured)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "begin_capture: the stream is already "
                           "capturing a graph"), -1;
  if (s->waiting) /* the driver would invalidate the capture under that synchronize() */
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "begin_capture: another thread is "
                           "waiting in synchronize() on this Stream"), -1;
  PyObject *list = PyList_New(0);
  if (!list) return -1;
  gcl_status rc = gcl_graph_capture_begin(s->stream);
  if (rc != GCL_OK) return Py_DECREF(list), gclpy_raise(st, rc), -1;
  s->captured = list;
  return 0;
}

/* Ends the capture into g (a new Graph when NULL); a new reference to it. */
static PyObject *capture_end(gclpy_state *st, gclpy_stream *s, gclpy_graph *g) {
  if (open_or_raise(st, s) < 0) return NULL;
  if (!s->captured)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "end_capture: the stream is not "
                           "capturing (begin_capture first)");
  PyObject *kernels = s->captured;
  s->captured = NULL;
  gcl_graph *graph = NULL;
  gcl_status rc = gcl_graph_capture_end(s->stream, &graph); /* the capture ended, also on failure */
  if (rc != GCL_OK) return Py_DECREF(kernels), gclpy_raise(st, rc);
  if (g) Py_INCREF(g);
  else if (!(g = graph_new(st, s))) return Py_DECREF(kernels), gcl_graph_destroy(graph), NULL;
  g->graph = graph, g->kernels = kernels, g->state = GRAPH_READY;
  Py_CLEAR(g->stream);
  return (PyObject *)g;
}

static PyObject *stream_begin_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  if (capture_begin(GCLPY_ST(self), (gclpy_stream *)self) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_end_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  return capture_end(GCLPY_ST(self), (gclpy_stream *)self, NULL);
}

static PyObject *stream_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = GCLPY_ST(self);
  if (open_or_raise(st, (gclpy_stream *)self) < 0) return NULL;
  return (PyObject *)graph_new(st, (gclpy_stream *)self);
}

static PyObject *graph_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state != GRAPH_PENDING)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "Graph: only a graph from "
                           "stream.capture() can be entered, once");
  if (capture_begin(st, (gclpy_stream *)g->stream) < 0) return NULL;
  g->state = GRAPH_CAPTURING;
  return Py_NewRef(self);
}

static PyObject *graph_exit(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
  gclpy_state *st = GCLPY_ST(self);
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
  PyObject *r = capture_end(st, s, g);
  if (!r) {
    g->state = GRAPH_CLOSED;
    Py_CLEAR(g->stream);
    return NULL;
  }
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static int graph_ready(gclpy_state *st, gclpy_graph *g, const char *what) {
  if (g->state == GRAPH_READY) return 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the graph is %s", what,
                  g->state == GRAPH_CLOSED ? "closed"
                  : g->state == GRAPH_PENDING ? "not captured yet (use it in a with block)"
                                              : "still being captured (leave the with block)");
  return -1;
}

static PyObject *graph_kernel_count(PyObject *self, void *closure) {
  (void)closure;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_graph *g = (gclpy_graph *)self;
  if (graph_ready(st, g, "kernel_count") < 0) return NULL;
  size_t n = 0;
  gcl_status rc = gcl_graph_kernel_count(g->graph, &n);
  return rc == GCL_OK ? PyLong_FromSize_t(n) : gclpy_raise(st, rc);
}

static const char *const set_args_names[] = {"node", "kernel", "args_or_values"};
static const gclpy_params set_args_params = {"set_args", set_args_names, 3, 3, 3};

/* Values (a sequence, one per parameter) into a new Args of the kernel, through the public
 * methods (kernel.args(), args[i] = v: the same conversion as a launch's values). */
static PyObject *values_args(PyObject *kernel, PyObject *values) {
  if (!PyList_Check(values) && !PyTuple_Check(values))
    return gclpy_type_error("set_args: args_or_values takes a gclaunch.Args or a list or tuple of "
                            "values", values);
  PyObject *a = PyObject_CallMethod(kernel, "args", NULL);
  Py_ssize_t n = PySequence_Size(values);
  for (Py_ssize_t i = 0; a && i < n; i++) {
    PyObject *key = PyLong_FromSsize_t(i), *item = PySequence_GetItem(values, i);
    if (!key || !item || PyObject_SetItem(a, key, item) < 0) Py_CLEAR(a);
    Py_XDECREF(key), Py_XDECREF(item);
  }
  return a;
}

static PyObject *graph_set_args(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[3];
  gclpy_graph *g = (gclpy_graph *)self;
  long long node;
  if (gclpy_parse(&set_args_params, NULL, argv, nargs, kwnames, v) < 0 ||
      graph_ready(st, g, "set_args") < 0 ||
      gclpy_long_arg(st, v[0], "set_args: node", 0, LLONG_MAX, &node) < 0)
    return NULL;
  if (!Py_IS_TYPE(v[1], st->kernel_type))
    return gclpy_type_error("set_args: kernel takes a gclaunch.Kernel", v[1]);
  gclpy_kernel *k = (gclpy_kernel *)v[1];
  PyObject *a = Py_IS_TYPE(v[2], st->args_type) ? Py_NewRef(v[2]) : values_args(v[1], v[2]);
  if (!a) return NULL;
  gcl_status rc = gcl_graph_set_args(g->graph, (size_t)node, k->kernel, ((gclpy_args *)a)->args);
  Py_DECREF(a); /* the driver copied the values */
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

static const char *const glaunch_names[] = {"stream"};
static const gclpy_params glaunch_params = {"launch", glaunch_names, 1, 1, 0};

static PyObject *graph_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[1];
  gclpy_graph *g = (gclpy_graph *)self;
  if (gclpy_parse(&glaunch_params, NULL, argv, nargs, kwnames, v) < 0 ||
      graph_ready(st, g, "launch") < 0)
    return NULL;
  gcl_stream *s = NULL, *tmp = NULL;
  if (gclpy_stream_arg(st, v[0], (gclpy_context *)g->context, &s, &tmp,
                       "launch: stream takes None, a gclaunch.Stream, an int CUstream or an "
                       "object with __cuda_stream__") < 0)
    return NULL;
  gcl_status rc = gcl_graph_launch(g->graph, s);
  gcl_stream_destroy(tmp);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *graph_close(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state == GRAPH_CAPTURING)
    return gclpy_raise_msg(GCLPY_ST(self), GCL_ERROR_INVALID_ARGUMENT,
                           "close: the graph is still being captured");
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
  PyObject_GC_UnTrack(self);
  gcl_graph_destroy(g->graph); /* before the kernels and the context it uses */
  graph_clear(self);
  Py_CLEAR(g->context);
  gclpy_free(self);
}

static PyObject *graph_repr(PyObject *self) {
  gclpy_graph *g = (gclpy_graph *)self;
  static const char *const states[] = {"not begun", "capturing", "ready", "closed"};
  Py_ssize_t n = g->kernels ? PyList_Size(g->kernels) : 0;
  return PyUnicode_FromFormat("<gclaunch.Graph %s, %zd kernel launches seen>", states[g->state], n);
}

static PyMethodDef graph_methods[] = {
  {"__enter__", graph_enter, METH_NOARGS,
   "__enter__($self, /)\n--\n\nBegins capturing the stream (stream.capture())."},
  {"__exit__", GCLPY_METH(graph_exit), METH_FASTCALL,
   "__exit__($self, /, *exc)\n--\n\nEnds the capture and instantiates the graph; after an\n"
   "exception in the block the capture is ended and dropped, and the exception goes on."},
  {"set_args", GCLPY_METH(graph_set_args), GCLPY_FASTKW,
   "set_args($self, /, node, kernel, args_or_values)\n--\n\nReplaces the arguments of kernel node\n"
   "`node` (0 = the first kernel launched in the capture) with an Args of `kernel` (the kernel\n"
   "the node was captured from) or one value per parameter (gcl_graph_set_args). The driver\n"
   "copies them; grid, block and launch attributes of the node stay. Takes effect for later\n"
   "launch() calls."},
  {"launch", GCLPY_METH(graph_launch), GCLPY_FASTKW,
   "launch($self, /, stream=None)\n--\n\nReplays the graph on stream (None: the context's default\n"
   "stream; a gclaunch.Stream, an int CUstream or an object with __cuda_stream__)."},
  {"close", graph_close, METH_NOARGS,
   "close($self, /)\n--\n\nDestroys the graph now (a replay in flight completes)."},
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
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                                     Py_TPFLAGS_DISALLOW_INSTANTIATION, graph_slots};

/* --- Stream type ------------------------------------------------------------------------------- */

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
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static PyMethodDef stream_methods[] = {
  {"from_handle", GCLPY_METH(stream_from_handle), GCLPY_FASTKW | METH_CLASS,
   "from_handle($type, /, obj, context=None)\n--\n\nWraps a stream made by someone else: an int\n"
   "CUstream or any object with __cuda_stream__ (torch, CuPy, cuda.core streams), kept alive by\n"
   "the Stream. The handle is checked (gclaunch.Error when it is no live stream of the device).\n"
   "context: the device's Context (None: device 0's)."},
  {"__cuda_stream__", cuda_stream, METH_NOARGS,
   "__cuda_stream__($self, /)\n--\n\nThe CUDA stream protocol: (0, the CUstream as an int)."},
  {"synchronize", stream_synchronize, METH_NOARGS,
   "synchronize($self, /)\n--\n\nWaits for the stream's work (gclaunch.Error while it is\n"
   "capturing a graph; GCL_ERROR_KERNEL_FAULT when a kernel on it faulted)."},
  {"record", GCLPY_METH(stream_record), GCLPY_FASTKW,
   "record($self, /, event=None)\n--\n\nRecords event (a new Event of the stream's context when\n"
   "None) at the stream's current end and returns it."},
  {"wait", stream_wait, METH_O,
   "wait($self, event_or_stream, /)\n--\n\nMakes work queued on this stream from now on wait for\n"
   "the event's last record, or for everything queued so far on another stream (any kind).\n"
   "Does not block the host."},
  {"begin_capture", stream_begin_capture, METH_NOARGS,
   "begin_capture($self, /)\n--\n\nStarts capturing the stream's launches, copies and fills into\n"
   "a graph (thread-local mode). The stream must not be synchronized until end_capture()."},
  {"end_capture", stream_end_capture, METH_NOARGS,
   "end_capture($self, /)\n--\n\nEnds the capture and returns the instantiated Graph\n"
   "(gclaunch.Error when no kernel was launched, or the driver invalidated the capture)."},
  {"capture", stream_capture, METH_NOARGS,
   "capture($self, /)\n--\n\nA Graph to fill in a with block: `with stream.capture() as g: ...`."},
  {"close", stream_close, METH_NOARGS,
   "close($self, /)\n--\n\nDestroys the stream now (a wrapped one: only the wrapper); later use\n"
   "raises gclaunch.Error."},
  {"__enter__", stream_self, METH_NOARGS, "__enter__($self, /)\n--\n\n"},
  {"__exit__", GCLPY_METH(stream_exit), METH_FASTCALL, "__exit__($self, /, *exc)\n--\n\nclose()"},
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
  {Py_tp_doc, "Stream(context=None, priority=0)\n--\n\n"
              "A non-blocking CUDA stream of the context's device (None: device 0), or\n"
              "ctx.create_stream(priority). priority: 0 is the lowest; lower numbers are higher\n"
              "priorities, down to the device's greatest: out of range is refused, naming the range.\n"
              "Stream.from_handle(obj) wraps a torch/CuPy/cuda.core stream. Exports __cuda_stream__;\n"
              "k.launch(..., stream=s), Event.record, Buffer copies and graphs take it."},
  {0, NULL}};
static PyType_Spec stream_spec = {"gclaunch.Stream", sizeof(gclpy_stream), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
                                  stream_slots};

/* --- Event -------------------------------------------------------------------------------------- */

static PyObject *event_make(gclpy_state *st, gclpy_context *c) {
  gcl_event *ev = NULL;
  gcl_status rc = gcl_event_create(c->ctx, &ev);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  gclpy_event *e = (gclpy_event *)gclpy_alloc(st->event_type);
  if (!e) return gcl_event_destroy(ev), NULL;
  e->event = ev, e->context = Py_NewRef((PyObject *)c);
  return (PyObject *)e;
}

PyObject *gclpy_context_create_event(PyObject *self, PyObject *unused) {
  (void)unused;
  return event_make(GCLPY_ST(self), (gclpy_context *)self);
}

const char gclpy_doc_create_event[] =
    "create_event($self, /)\n--\n\nA CUDA Event with timing of this device.";

static const char *const event_names[] = {"context"};
static const gclpy_params event_params = {"Event", event_names, 1, 1, 0};

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  PyObject *v[1];
  if (gclpy_parse_tuple(&event_params, args, kwds, v) < 0) return NULL;
  gclpy_context *c = context_arg(st, v[0]);
  return c ? event_make(st, c) : NULL;
}

static void event_dealloc(PyObject *self) {
  gclpy_event *e = (gclpy_event *)self;
  gcl_event_destroy(e->event);
  Py_CLEAR(e->context);
  gclpy_free(self);
}

static const char *const erecord_names[] = {"stream"};
static const gclpy_params erecord_params = {"record", erecord_names, 1, 1, 0};

static PyObject *event_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  PyObject *v[1];
  gclpy_event *e = (gclpy_event *)self;
  if (gclpy_parse(&erecord_params, NULL, argv, nargs, kwnames, v) < 0) return NULL;
  gcl_stream *s = NULL, *tmp = NULL;
  if (gclpy_stream_arg(st, v[0], (gclpy_context *)e->context, &s, &tmp,
                       "record: stream takes None, a gclaunch.Stream, an int CUstream or an "
                       "object with __cuda_stream__") < 0)
    return NULL;
  gcl_status rc = gcl_event_record(e->event, s);
  gcl_stream_destroy(tmp);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  return Py_NewRef(self);
}

static PyObject *event_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status rc;
  gcl_event *e = ((gclpy_event *)self)->event;
  Py_BEGIN_ALLOW_THREADS
  rc = gcl_event_synchronize(e);
  Py_END_ALLOW_THREADS
  if (rc != GCL_OK) return gclpy_raise(GCLPY_ST(self), rc);
  Py_RETURN_NONE;
}

static PyObject *event_is_done(PyObject *self, void *closure) {
  (void)closure;
  bool done = false;
  gcl_status rc = gcl_event_query(((gclpy_event *)self)->event, &done);
  return rc == GCL_OK ? PyBool_FromLong(done) : gclpy_raise(GCLPY_ST(self), rc);
}

static PyObject *event_context(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(((gclpy_event *)self)->context);
}

/* Whether x is an Event (of any instance of this module): its type's dealloc is ours. */
static bool is_event(PyObject *x) {
  return PyType_GetSlot(Py_TYPE(x), Py_tp_dealloc) == (void *)event_dealloc;
}

/* stop - start: milliseconds of device time from start's record to stop's (waits for stop). */
static PyObject *event_sub(PyObject *a, PyObject *b) {
  if (!is_event(a) || !is_event(b)) {
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
  }
  gclpy_state *st = GCLPY_ST(a);
  double us = 0;
  gcl_status rc;
  gcl_event *start = ((gclpy_event *)b)->event, *stop = ((gclpy_event *)a)->event;
  Py_BEGIN_ALLOW_THREADS
  rc = gcl_event_elapsed_us(start, stop, &us);
  Py_END_ALLOW_THREADS
  return rc == GCL_OK ? PyFloat_FromDouble(us / 1000.0) : gclpy_raise(st, rc);
}

static PyObject *event_elapsed(PyObject *self, PyObject *stop) {
  gclpy_state *st = GCLPY_ST(self);
  if (!Py_IS_TYPE(stop, st->event_type))
    return gclpy_type_error("elapsed_ms: stop takes a gclaunch.Event", stop);
  return event_sub(stop, self);
}

static PyMethodDef event_methods[] = {
  {"record", GCLPY_METH(event_record), GCLPY_FASTKW,
   "record($self, /, stream=None)\n--\n\nRecords the event at the current end of stream (None:\n"
   "the context's default stream; a gclaunch.Stream, an int CUstream or a __cuda_stream__ object\n"
   "of the event's device). Returns the event."},
  {"synchronize", event_synchronize, METH_NOARGS,
   "synchronize($self, /)\n--\n\nWaits until the work before the last record completed (at once\n"
   "if never recorded)."},
  {"elapsed_ms", event_elapsed, METH_O,
   "elapsed_ms($self, stop, /)\n--\n\nMilliseconds of device time from this event's record to\n"
   "stop's (waits for stop; resolution about 0.5 us): the same as stop - self."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef event_getset[] = {
  {"is_done", event_is_done, NULL,
   "whether the work before the last record completed (True if never recorded); does not wait", NULL},
  {"context", event_context, NULL, "the Context of the event's device", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot event_slots[] = {
  {Py_tp_new, event_new}, {Py_tp_dealloc, event_dealloc}, {Py_tp_methods, event_methods},
  {Py_tp_getset, event_getset}, {Py_nb_subtract, event_sub},
  {Py_tp_doc, "Event(context=None)\n--\n\n"
              "A CUDA event with timing (or ctx.create_event(), stream.record()).\n"
              "stop - start is the device time between their records in milliseconds (float), as\n"
              "cuda.core's Event and CuPy's get_elapsed_time give it."},
  {0, NULL}};
static PyType_Spec event_spec = {"gclaunch.Event", sizeof(gclpy_event), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, event_slots};

int gclpy_stream_init_types(PyObject *m, gclpy_state *st) {
  st->stream_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &stream_spec, NULL);
  st->event_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &event_spec, NULL);
  st->graph_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &graph_spec, NULL);
  if (!st->stream_type || !st->event_type || !st->graph_type) return -1;
  if (PyModule_AddType(m, st->stream_type) < 0 || PyModule_AddType(m, st->event_type) < 0)
    return -1;
  return PyModule_AddType(m, st->graph_type);
}
