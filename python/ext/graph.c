/* graph.c -- L3: gclaunch.Graph over gcl_graph, and graph capture on a Stream (begin, end, the
 * with block of stream.capture()).
 *
 * Lifetimes: a Graph keeps its Context alive, and every Kernel launched on the gclaunch.Stream
 * during its capture (their modules own the CUfunctions the graph's nodes run). It holds
 * arbitrary objects and is GC-tracked. */
#include "gclpy.h"

#include <limits.h>

/* --- Graph (capture) ---------------------------------------------------------------------------- */

typedef struct gclpy_graph {
  PyObject_HEAD
  gcl_graph *graph;         /* NULL until the capture ended (and after close) */
  PyObject *stream;         /* the Stream captured (until the capture ended) */
  PyObject *context;
  PyObject *kernels;        /* list: the Kernels launched and TensorMapTables captured */
  int state;                /* GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED */
} gclpy_graph;
enum { GRAPH_PENDING, GRAPH_CAPTURING, GRAPH_READY, GRAPH_CLOSED };

PyObject *gclpy_graph_new(gclpy_state *st, gclpy_stream *s) {
  gclpy_graph *g = (gclpy_graph *)gclpy_alloc(st->graph_type);
  if (!g) return NULL;
  g->graph = NULL, g->stream = Py_NewRef((PyObject *)s), g->context = Py_NewRef(s->context);
  g->kernels = NULL, g->state = GRAPH_PENDING;
  return (PyObject *)g;
}

int gclpy_capture_begin(gclpy_state *st, gclpy_stream *s) {
  if (gclpy_stream_open(st, s, "begin_capture") < 0) return -1;
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

/* The TensorMapTable obj, open; NULL with an exception set. */
static gcl_tensormap_table *table_arg(gclpy_state *st, PyObject *obj, const char *fn) {
  if (!PyObject_TypeCheck(obj, st->tmtable_type))
    return gclpy_type_error("expected a gclaunch.TensorMapTable", obj), NULL;
  gcl_tensormap_table *t = ((gclpy_tmtable *)obj)->table;
  if (!t) gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the table was closed", fn);
  return t;
}

int gclpy_capture_table(gclpy_state *st, gclpy_stream *s, PyObject *table) {
  gcl_tensormap_table *t = table_arg(st, table, "capture_table");
  if (!t || gclpy_stream_open(st, s, "capture_table") < 0) return -1;
  if (!s->captured)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "capture_table: the stream is not "
                           "capturing (begin_capture first)"), -1;
  gcl_status rc = gcl_graph_capture_table(s->stream, t);
  if (rc != GCL_OK) return gclpy_raise(st, rc), -1;
  return PyList_Append(s->captured, table); /* the graph keeps the table alive */
}

PyObject *gclpy_capture_end(gclpy_state *st, gclpy_stream *s, PyObject *graph_or_null) {
  gclpy_graph *g = (gclpy_graph *)graph_or_null;
  if (gclpy_stream_open(st, s, "end_capture") < 0) return NULL;
  if (!s->captured)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "end_capture: the stream is not "
                           "capturing (begin_capture first)");
  PyObject *kernels = s->captured;
  s->captured = NULL;
  gcl_graph *graph = NULL;
  gcl_status rc = gcl_graph_capture_end(s->stream, &graph); /* the capture ended, also on failure */
  if (rc != GCL_OK) return Py_DECREF(kernels), gclpy_raise(st, rc);
  if (g) Py_INCREF(g);
  else if (!(g = (gclpy_graph *)gclpy_graph_new(st, s))) return Py_DECREF(kernels), gcl_graph_destroy(graph), NULL;
  g->graph = graph, g->kernels = kernels, g->state = GRAPH_READY;
  Py_CLEAR(g->stream);
  return (PyObject *)g;
}

static PyObject *graph_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_graph *g = (gclpy_graph *)self;
  if (g->state != GRAPH_PENDING)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "Graph: only a graph from "
                           "stream.capture() can be entered, once");
  if (gclpy_capture_begin(st, (gclpy_stream *)g->stream) < 0) return NULL;
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
  PyObject *r = gclpy_capture_end(st, s, self);
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

struct set_args_in { size_t node; PyObject *kernel, *args_or_values; };
static const gclpy_arg set_args_args[] = {
  GCLPY_ARG(struct set_args_in, node, gclpy_to_size, 0, LLONG_MAX),
  GCLPY_ARG(struct set_args_in, kernel, gclpy_to_object),
  GCLPY_ARG(struct set_args_in, args_or_values, gclpy_to_object),
};
static const gclpy_params set_args_params = {"set_args", set_args_args, 3, 3, 3};

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
  gclpy_graph *g = (gclpy_graph *)self;
  struct set_args_in in = {0, NULL, NULL};
  if (graph_ready(st, g, "set_args") < 0 || /* a graph not ready refuses first */
      gclpy_parse(st, &set_args_params, NULL, argv, nargs, kwnames, &in) < 0)
    return NULL;
  if (!Py_IS_TYPE(in.kernel, st->kernel_type))
    return gclpy_type_error("set_args: kernel takes a gclaunch.Kernel", in.kernel);
  gclpy_kernel *k = (gclpy_kernel *)in.kernel;
  PyObject *a = Py_IS_TYPE(in.args_or_values, st->args_type) ? Py_NewRef(in.args_or_values)
                                                             : values_args(in.kernel, in.args_or_values);
  if (!a) return NULL;
  gcl_status rc = gcl_graph_set_args(g->graph, in.node, k->kernel, ((gclpy_args *)a)->args);
  Py_DECREF(a); /* the driver copied the values */
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

struct glaunch_in { gclpy_streamarg stream; };
static const gclpy_arg glaunch_args[] = {
  GCLPY_ARG(struct glaunch_in, stream, gclpy_to_stream, 0, 0, GCLPY_NONE),
};
static const gclpy_params glaunch_params = {"launch", glaunch_args, 1, 1, 0};

static PyObject *graph_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_graph *g = (gclpy_graph *)self;
  if (graph_ready(st, g, "launch") < 0) return NULL;
  struct glaunch_in in = {{.ctx = (gclpy_context *)g->context}};
  int given = gclpy_parse(st, &glaunch_params, NULL, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gcl_status rc = gcl_graph_launch(g->graph, in.stream.stream);
  gclpy_release(st, &glaunch_params, given, &in);
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

/* The Kernels of g->kernels (which holds the captured TensorMapTables too), as a tuple. */
static PyObject *graph_kernels(PyObject *self, void *closure) {
  (void)closure;
  gclpy_graph *g = (gclpy_graph *)self;
  gclpy_state *st = GCLPY_ST(self);
  PyObject *l = PyList_New(0);
  for (Py_ssize_t i = 0; l && g->kernels && i < PyList_Size(g->kernels); i++) {
    PyObject *k = PyList_GetItem(g->kernels, i);
    if (!PyObject_TypeCheck(k, st->tmtable_type) && PyList_Append(l, k) < 0) Py_CLEAR(l);
  }
  PyObject *t = l ? PyList_AsTuple(l) : NULL;
  Py_XDECREF(l);
  return t;
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

static PyObject *graph_set_table(PyObject *self, PyObject *table) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_graph *g = (gclpy_graph *)self;
  gcl_tensormap_table *t = table_arg(st, table, "set_table");
  if (!t || graph_ready(st, g, "set_table") < 0) return NULL;
  gcl_status rc = gcl_graph_set_table(g->graph, t);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
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
  {"set_table", graph_set_table, METH_O,
   "set_table($self, table, /)\n--\n\nTakes the TensorMapTable's maps as they are now into the\n"
   "copy later launches upload before their kernels (gcl_graph_set_table): after\n"
   "table.repoint(...) or table.set_tensormaps(...), as set_args is for parameters. The table\n"
   "must have been captured into this graph (stream.capture_table)."},
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

int gclpy_graph_init_types(PyObject *m, gclpy_state *st) {
  st->graph_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &graph_spec, NULL);
  if (!st->graph_type) return -1;
  return PyModule_AddType(m, st->graph_type);
}
