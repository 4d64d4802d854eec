/* dlpack.c -- consuming __dlpack__ as the DLPack protocol says.
 *
 * obj.__dlpack__(max_version=(1, minor), stream=-1) first: a producer that knows DLPack 1.x
 * returns a "dltensor_versioned" capsule (DLManagedTensorVersioned), an older one raises
 * TypeError for the keyword and is asked again without max_version (a legacy "dltensor"
 * capsule). stream=-1 asks for no synchronisation: gclaunch reads only the description and the
 * address, and launches are ordered by the caller's streams; a producer that refuses it (NumPy
 * accepts only stream=None) is asked without it. What each type of producer accepted is kept (one
 * entry per producer type, in the module state, with no bound), so later calls ask once.
 *
 * Ownership: a tensor stored in args is handed to gcl_args_take_field_dlpack(_legacy) after the
 * capsule was renamed "used_dltensor[_versioned]": from then on the library runs the deleter
 * exactly once (overwritten, args destroyed, or the take refused). A tensor only read (tensor
 * maps, addresses) is borrowed: the capsule is released unrenamed afterwards and its destructor,
 * the producer's, runs the deleter.
 *
 * On unless GCL_DLPACK_C_API=0 at import: DLPack 1.3's C exchange API. A producer
 * type may carry __dlpack_c_exchange_api__ (a PyCapsule "dlpack_exchange_api", or an int address)
 * pointing at a DLPackExchangeAPI table; then a tensor is had without a Python call:
 * dltensor_from_py_object_no_sync (a borrowed view, for tensor maps and addresses) or
 * managed_tensor_from_py_object_no_sync (an owned DLManagedTensorVersioned, for pointers). With
 * torch 2.11 on the H200 (2026-12-04) the Python GPU suite passes through it and 240 maps set from
 * torch views + launch take 122 us against 891 us through __dlpack__ (2.4 us a call). */
#include "gclpy.h"

#include <stdlib.h>

#include <string.h>

enum { ASK_VERSIONED_NOSYNC, ASK_VERSIONED, ASK_LEGACY_NOSYNC, ASK_LEGACY, ASK_COUNT };

/* DLPack 1.3's exchange table (dlpack.h's DLPackExchangeAPI), as far as it is used here. */
typedef struct xapi_header {
  DLPackVersion version;
  struct xapi_header *prev_api;
} xapi_header;
typedef struct xapi {
  xapi_header header;
  void *managed_tensor_allocator;
  int (*managed_tensor_from_py_object_no_sync)(void *py_object, DLManagedTensorVersioned **out);
  void *managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void *py_object, DLTensor *out); /* optional */
  void *current_work_stream;
} xapi;

/* What is known of a producer type: kept for every type seen (the module state's `producers`
 * dict, type -> a capsule of this; no bound, no eviction), so each type is looked at once. */
typedef struct gclpy_producer {
  int ask;              /* the way of asking __dlpack__ that worked (-1: not asked yet) */
  const xapi *api;      /* the type's exchange table, NULL when none (or the API is off) */
} gclpy_producer;

#define PRODUCER_CAPSULE "gclaunch._producer"

static void producer_free(PyObject *cap) { PyMem_Free(PyCapsule_GetPointer(cap, PRODUCER_CAPSULE)); }

int gclpy_dlpack_init(gclpy_state *st) {
  const char *c_api = getenv("GCL_DLPACK_C_API");
  st->use_c_api = !(c_api && strcmp(c_api, "0") == 0); /* on unless GCL_DLPACK_C_API=0 */
  if (!(st->producers = PyDict_New())) return -1;
  PyObject *version = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  PyObject *minus1 = PyLong_FromLong(-1);
  int rc = version && minus1 ? 0 : -1;
  for (int i = 0; rc == 0 && i < ASK_COUNT; i++) {
    if (!(st->dlpack_kwargs[i] = PyDict_New())) rc = -1;
    else if ((i == ASK_VERSIONED_NOSYNC || i == ASK_VERSIONED) &&
             PyDict_SetItemString(st->dlpack_kwargs[i], "max_version", version) < 0)
      rc = -1;
    else if ((i == ASK_VERSIONED_NOSYNC || i == ASK_LEGACY_NOSYNC) &&
             PyDict_SetItemString(st->dlpack_kwargs[i], "stream", minus1) < 0)
      rc = -1;
  }
  Py_XDECREF(version), Py_XDECREF(minus1);
  return rc;
}

bool gclpy_has_dlpack(gclpy_state *st, PyObject *obj) {
  PyObject *m = PyObject_GetAttr((PyObject *)Py_TYPE(obj), st->str_dlpack);
  if (!m) return PyErr_Clear(), false;
  Py_DECREF(m);
  return true;
}

/* type.__dlpack_c_exchange_api__ when usable: a capsule "dlpack_exchange_api" or an int, a table
 * of major version 1 with the managed-tensor entry. */
static const xapi *find_api(gclpy_state *st, PyObject *type) {
  if (!st->use_c_api) return NULL;
  PyObject *v = PyObject_GetAttrString(type, "__dlpack_c_exchange_api__");
  const xapi *api = NULL;
  if (v && PyCapsule_IsValid(v, "dlpack_exchange_api")) api = PyCapsule_GetPointer(v, "dlpack_exchange_api");
  else if (v && PyLong_Check(v)) api = PyLong_AsVoidPtr(v);
  Py_XDECREF(v);
  PyErr_Clear();
  if (api && (api->header.version.major != DLPACK_MAJOR_VERSION || !api->managed_tensor_from_py_object_no_sync))
    api = NULL;
  return api;
}

/* What is known of type (made on first sight: its exchange table looked up once). Borrowed
 * (the dict keeps it); NULL with an exception set. */
static gclpy_producer *producer_of(gclpy_state *st, PyObject *type) {
  if (type == st->last_producer_type) return st->last_producer;
  PyObject *cap = PyDict_GetItemWithError(st->producers, type);
  gclpy_producer *p;
  if (cap) {
    p = PyCapsule_GetPointer(cap, PRODUCER_CAPSULE);
  } else {
    if (PyErr_Occurred()) return NULL;
    if (!(p = PyMem_Malloc(sizeof *p))) return PyErr_NoMemory(), NULL;
    p->ask = -1, p->api = find_api(st, type);
    if (!(cap = PyCapsule_New(p, PRODUCER_CAPSULE, producer_free))) return PyMem_Free(p), NULL;
    int rc = PyDict_SetItem(st->producers, type, cap);
    Py_DECREF(cap); /* the dict holds it */
    if (rc < 0) return NULL;
  }
  st->last_producer_type = type, st->last_producer = p;
  return p;
}

/* Through the exchange table: a borrowed view when allowed and offered, else an owned tensor. */
static int from_api(const xapi *api, PyObject *obj, gclpy_dlpack *out, bool borrow) {
  memset(out, 0, sizeof *out);
  int rc;
  if (borrow && api->dltensor_from_py_object_no_sync) {
    rc = api->dltensor_from_py_object_no_sync(obj, &out->view);
    out->tensor = &out->view;
  } else {
    DLManagedTensorVersioned *m = NULL;
    rc = api->managed_tensor_from_py_object_no_sync(obj, &m);
    if (rc == 0 && m)
      out->managed = m, out->tensor = &m->dl_tensor, out->flags = m->flags, out->versioned = true,
      out->api_owned = true;
    else if (rc == 0) rc = -1;
  }
  if (rc != 0 && !PyErr_Occurred())
    PyErr_SetString(PyExc_BufferError, "__dlpack_c_exchange_api__: the producer refused the tensor");
  return rc == 0 ? 0 : -1;
}

/* Reads the capsule; 0 or -1 (TypeError: not a DLPack capsule). */
static int open_capsule(PyObject *cap, gclpy_dlpack *out) {
  memset(out, 0, sizeof *out);
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (!m) return -1;
    out->versioned = true, out->managed = m, out->tensor = &m->dl_tensor, out->flags = m->flags;
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (!m) return -1;
    out->managed = m, out->tensor = &m->dl_tensor;
  } else {
    return gclpy_type_error("__dlpack__() must return a 'dltensor' or 'dltensor_versioned' "
                            "capsule that was not used yet", cap), -1;
  }
  out->capsule = cap;
  return 0;
}

int gclpy_dlpack_get(gclpy_state *st, PyObject *obj, gclpy_dlpack *out, bool borrow) {
  gclpy_producer *p = producer_of(st, (PyObject *)Py_TYPE(obj));
  if (!p) return -1;
  if (p->api) return from_api(p->api, obj, out, borrow);
  PyObject *fn = PyObject_GetAttr(obj, st->str_dlpack);
  if (!fn) return -1;
  int known = p->ask, ask = known >= 0 ? known : 0;
  PyObject *cap = NULL;
  for (; ask < ASK_COUNT; ask++) {
    cap = PyObject_Call(fn, st->empty_tuple, st->dlpack_kwargs[ask]);
    if (cap) break;
    /* TypeError: an unknown keyword; others (NumPy's RuntimeError/BufferError for a stream):
     * ask again with less. The last attempt's error is the one raised. */
    if (ask + 1 < ASK_COUNT) PyErr_Clear();
  }
  Py_DECREF(fn);
  if (!cap) return -1;
  p->ask = ask; /* p is still the dict's: entries are never removed while the module lives */
  if (open_capsule(cap, out) < 0) return Py_DECREF(cap), -1;
  return 0;
}

gcl_status gclpy_dlpack_take(gclpy_dlpack *d, gcl_args *args, const gcl_field *f) {
  gcl_status s;
  /* Used first: the library owns the tensor from the call on, whatever it returns. */
  if (d->api_owned) {
    d->api_owned = false;
    return gcl_args_take_field_dlpack(args, f, d->managed);
  }
  if (d->versioned) {
    PyCapsule_SetName(d->capsule, "used_dltensor_versioned");
    s = gcl_args_take_field_dlpack(args, f, d->managed);
  } else {
    PyCapsule_SetName(d->capsule, "used_dltensor");
    s = gcl_args_take_field_dlpack_legacy(args, f, d->managed);
  }
  Py_CLEAR(d->capsule);
  return s;
}

void gclpy_dlpack_release(gclpy_dlpack *d) {
  if (d->api_owned) {
    DLManagedTensorVersioned *m = d->managed;
    d->api_owned = false;
    if (m->deleter) m->deleter(m);
    return;
  }
  if (!d->capsule) return;
  /* The producer's destructor may run Python code: keep a pending exception out of its way. */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  Py_CLEAR(d->capsule);
  PyErr_Restore(type, value, tb);
}
