/* stream.c -- L4: gclaunch.Stream over gcl_stream (graph capture on it: graph.c; its events:
 * event.c).
 *
 * Lifetimes: a Stream keeps its Context alive; a Stream made by from_handle keeps the wrapped
 * object (a torch/CuPy/cuda.core stream) alive; during a capture it lists the Kernels launched
 * on it (the Graph keeps them). It holds arbitrary objects and is GC-tracked. */
#include "gclpy.h"

#include <limits.h>

/* --- Stream ----------------------------------------------------------------------------------- */

static PyObject *stream_wrap(gclpy_state *st, gcl_stream *gs, gclpy_context *c, PyObject *owner) {
  gclpy_stream *s = (gclpy_stream *)gclpy_alloc(st->stream_type);
  if (!s) return gcl_stream_destroy(gs), NULL;
  s->stream = gs, s->handle = gcl_stream_handle(gs);
  s->context = Py_NewRef((PyObject *)c), s->owner = Py_XNewRef(owner), s->captured = NULL;
  return (PyObject *)s;
}

static PyObject *stream_create(gclpy_state *st, gclpy_context *c, int priority) {
  gcl_stream *gs = NULL;
  gcl_status s = gcl_stream_create(c->ctx, priority, &gs); /* the library refuses, naming the range */
  return s == GCL_OK ? stream_wrap(st, gs, c, NULL) : gclpy_raise(st, s);
}

struct stream_in { gclpy_context *context; int priority; };
static const gclpy_arg stream_args[] = {
  GCLPY_ARG(struct stream_in, context, gclpy_to_context),
  GCLPY_ARG(struct stream_in, priority, gclpy_to_int, INT_MIN, INT_MAX),
};
static const gclpy_params create_params = {"create_stream", stream_args + 1, 1, 1, 0};

PyObject *gclpy_context_create_stream(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                      PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  struct stream_in in = {NULL, 0};
  if (gclpy_parse(st, &create_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  return stream_create(st, (gclpy_context *)self, in.priority);
}

const char gclpy_doc_create_stream[] =
    "create_stream($self, /, priority=0)\n--\n\n"
    "A non-blocking Stream of this device; priority 0 is the lowest, lower numbers are higher (a\n"
    "priority outside the device's range is refused, naming the range).";

static const gclpy_params stream_params = {"Stream", stream_args, 2, 2, 0};

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct stream_in in = {NULL, 0};
  if (gclpy_parse_tuple(st, &stream_params, args, kwds, &in) < 0) return NULL;
  gclpy_context *c = gclpy_context_or_default(st, in.context);
  return c ? stream_create(st, c, in.priority) : NULL;
}

struct from_in { gclpy_streamarg obj; gclpy_context *context; };
static const gclpy_arg from_args[] = {
  GCLPY_ARG(struct from_in, obj, gclpy_to_stream),
  GCLPY_ARG(struct from_in, context, gclpy_to_context),
};
static const gclpy_params from_params = {"from_handle", from_args, 2, 2, 1};

/* The stream given, or a Stream wrapping another library's (kept alive: `owner`) or a handle. */
static PyObject *stream_from_handle(PyObject *cls, PyObject *const *argv, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState((PyTypeObject *)cls);
  struct from_in in = {{NULL}, NULL};
  if (gclpy_parse(st, &from_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  if (in.obj.ours) return Py_NewRef((PyObject *)in.obj.ours);
  gclpy_context *c = gclpy_context_or_default(st, in.context);
  if (!c) return NULL;
  gcl_stream *gs = NULL;
  gcl_status s = gcl_stream_wrap(c->ctx, in.obj.handle, &gs);
  if (s != GCL_OK) return gclpy_raise(st, s);
  return stream_wrap(st, gs, c, PyLong_Check(in.obj.obj) ? NULL : in.obj.obj);
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
  if (gclpy_stream_open(st, s, "synchronize") < 0) return NULL;
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
  if (gclpy_stream_open(GCLPY_ST(self), s, "__cuda_stream__") < 0) return NULL;
  return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(s->handle));
}

struct srecord_in { PyObject *event; };
static const gclpy_arg record_args[] = {GCLPY_ARG(struct srecord_in, event, gclpy_to_object, 0, 0, GCLPY_NONE)};
static const gclpy_params record_params = {"record", record_args, 1, 1, 0};

static PyObject *stream_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_stream *s = (gclpy_stream *)self;
  struct srecord_in in = {NULL};
  if (gclpy_parse(st, &record_params, NULL, argv, nargs, kwnames, &in) < 0 ||
      gclpy_stream_open(st, s, "record") < 0)
    return NULL;
  PyObject *e;
  if (!in.event) {
    if (!(e = gclpy_event_make(st, (gclpy_context *)s->context))) return NULL;
  } else if (Py_IS_TYPE(in.event, st->event_type)) {
    e = Py_NewRef(in.event);
  } else {
    return gclpy_type_error("record: event takes a gclaunch.Event or None", in.event);
  }
  gcl_status rc = gcl_event_record(((gclpy_event *)e)->event, s->stream);
  if (rc != GCL_OK) return Py_DECREF(e), gclpy_raise(st, rc);
  return e;
}

static const gclpy_arg wait_stream = {"stream", 0, gclpy_to_stream, 0, 0, 0};

static PyObject *stream_wait(PyObject *self, PyObject *what) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_stream *s = (gclpy_stream *)self;
  if (gclpy_stream_open(st, s, "wait") < 0) return NULL;
  if (Py_IS_TYPE(what, st->event_type)) {
    gcl_status rc = gcl_stream_wait_event(s->stream, ((gclpy_event *)what)->event);
    if (rc != GCL_OK) return gclpy_raise(st, rc);
    Py_RETURN_NONE;
  }
  if (what == Py_None) return gclpy_type_error("wait: takes a gclaunch.Event or a stream", what);
  /* Another stream (any kind): an event recorded on it now, waited for here. */
  gclpy_streamarg sa = {.ctx = (gclpy_context *)s->context};
  if (gclpy_parse_one(st, "wait", &wait_stream, what, &sa) < 0) return NULL;
  gcl_stream *other = sa.stream;
  gcl_event *e = NULL;
  gcl_status rc = gcl_event_create(gcl_stream_context(other), &e);
  if (rc == GCL_OK) rc = gcl_event_record(e, other);
  if (rc == GCL_OK) rc = gcl_stream_wait_event(s->stream, e);
  gcl_event_destroy(e); /* the wait holds what it needs */
  gclpy_to_stream(st, "wait", &wait_stream, NULL, &sa); /* released */
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *stream_begin_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  if (gclpy_capture_begin(GCLPY_ST(self), (gclpy_stream *)self) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_end_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  return gclpy_capture_end(GCLPY_ST(self), (gclpy_stream *)self, NULL);
}

static PyObject *stream_capture_table(PyObject *self, PyObject *table) {
  if (gclpy_capture_table(GCLPY_ST(self), (gclpy_stream *)self, table) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *stream_capture(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_state *st = GCLPY_ST(self);
  if (gclpy_stream_open(st, (gclpy_stream *)self, "capture") < 0) return NULL;
  return gclpy_graph_new(st, (gclpy_stream *)self);
}

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
  {"capture_table", stream_capture_table, METH_O,
   "capture_table($self, table, /)\n--\n\nDuring a capture: every replay of the graph first\n"
   "copies the TensorMapTable's maps (as they are when the capture ends, or at\n"
   "graph.set_table) to its device memory, before the captured work (gcl_graph_capture_table).\n"
   "The graph keeps the table alive; do not upload it on the capturing stream."},
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

int gclpy_stream_init_types(PyObject *m, gclpy_state *st) {
  st->stream_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &stream_spec, NULL);
  if (!st->stream_type) return -1;
  return PyModule_AddType(m, st->stream_type);
}
