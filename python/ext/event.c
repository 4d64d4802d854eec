/* event.c -- L3: gclaunch.Event over gcl_event (records, waits, timing: stop - start). An Event
 * keeps its Context alive and holds no other Python object. */
#include "gclpy.h"

/* --- Event -------------------------------------------------------------------------------------- */

PyObject *gclpy_event_make(gclpy_state *st, gclpy_context *c) {
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
  return gclpy_event_make(GCLPY_ST(self), (gclpy_context *)self);
}

const char gclpy_doc_create_event[] =
    "create_event($self, /)\n--\n\nA CUDA Event with timing of this device.";

struct event_in { gclpy_context *context; };
static const gclpy_arg event_args[] = {GCLPY_ARG(struct event_in, context, gclpy_to_context)};
static const gclpy_params event_params = {"Event", event_args, 1, 1, 0};

static PyObject *event_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct event_in in = {NULL};
  if (gclpy_parse_tuple(st, &event_params, args, kwds, &in) < 0) return NULL;
  gclpy_context *c = gclpy_context_or_default(st, in.context);
  return c ? gclpy_event_make(st, c) : NULL;
}

static void event_dealloc(PyObject *self) {
  gclpy_event *e = (gclpy_event *)self;
  gcl_event_destroy(e->event);
  Py_CLEAR(e->context);
  gclpy_free(self);
}

struct erecord_in { gclpy_streamarg stream; };
static const gclpy_arg erecord_args[] = {
  GCLPY_ARG(struct erecord_in, stream, gclpy_to_stream, 0, 0, GCLPY_NONE),
};
static const gclpy_params erecord_params = {"record", erecord_args, 1, 1, 0};

static PyObject *event_record(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_event *e = (gclpy_event *)self;
  struct erecord_in in = {{.ctx = (gclpy_context *)e->context}};
  int given = gclpy_parse(st, &erecord_params, NULL, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gcl_stream *s = in.stream.stream;
  gcl_status rc = gcl_event_record(e->event, s);
  gclpy_release(st, &erecord_params, given, &in);
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

int gclpy_event_init_types(PyObject *m, gclpy_state *st) {
  st->event_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &event_spec, NULL);
  if (!st->event_type) return -1;
  return PyModule_AddType(m, st->event_type);
}
