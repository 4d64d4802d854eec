/* argkinds.c -- L1: one converter per kind of argument (parse.c calls them), used by every call
 * that takes one, so every call takes the same forms and refuses the same values with the same
 * words (gclpy.h: gclpy_arg, gclpy_parse).
 *
 *   int, i64, size  an int (or any object with __index__, not a bool) in the entry's [lo, hi]
 *   address   pointer                an int, 0 ... 2**64-1
 *   dims      grid, block, cluster   an int, or a tuple or list of 1 to 3 ints, each 0 ... 2**32-1;
 *                                    missing dimensions are 0 (the library takes them as 1)
 *   threads   block of the occupancy calls: dims, as the product of the dimensions
 *   shared    dynamic shared memory  an int, 0 ... 2**32-1 bytes
 *   stream    stream=                None (where the entry says GCLPY_NONE), a gclaunch.Stream
 *                                    (open), an int CUstream (0, 1 = CU_STREAM_LEGACY, 2 =
 *                                    CU_STREAM_PER_THREAD, or an address), an object with
 *                                    __cuda_stream__ (torch, CuPy, cuda.core), or a torch stream of
 *                                    before the protocol (its int cuda_stream)
 *   pes       a list, tuple or range of ints (PEs), or None: every PE in rank order
 *   context   a gclaunch.Context, or None
 *   arch      None, an int 0 ... 1000 or "sm_NN" / "NN"
 *   bool      any object's truth;   pdl: True, False or 'unchecked'
 *   str       a str without NUL and lone surrogates
 *   pair      a tuple of two ints (as PyArg's "ii")
 *   strs      a sequence of str (not a str or bytes)
 *   bytes     a bytes-like object (any buffer)
 *   writable  a writable C-contiguous buffer
 *   image     a path (str or os.PathLike, read by the library) or a bytes-like object
 *
 * Refusals: TypeError "<fn>: <what> takes <forms>, got <type>"; gclaunch.RangeError "<fn>: <what>
 * = <value> is out of range (lo ... hi)"; gclaunch.Error "<fn>: <what> ..." for a value of the
 * right type that is refused. An exact int, the common case, is read without a call through
 * the number protocol. */
#include "gclpy.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* TypeError "<fn>: <what> takes <forms>, got <type>"; -1. */
static int refuse_type(const char *fn, const char *what, const char *forms, PyObject *v) {
  char msg[320];
  snprintf(msg, sizeof msg, "%s: %s takes %s", fn, what, forms);
  gclpy_type_error(msg, v);
  return -1;
}

/* --- ints ----------------------------------------------------------------------------------- */

int gclpy_int_value(PyObject *v, bool bools, int64_t lo, uint64_t hi, uint64_t *out, PyObject **n) {
  PyObject *k = v, *owned = NULL; /* an exact int (the common case) is read without a reference */
  *n = NULL;
  if (!PyLong_CheckExact(v) && !(bools && PyBool_Check(v))) {
    if (PyBool_Check(v) || PyFloat_Check(v) || !PyIndex_Check(v)) return 1;
    if (!(k = owned = PyNumber_Index(v))) return -1;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(k, &overflow);
  if (x == -1 && PyErr_Occurred()) return Py_XDECREF(owned), -1;
  uint64_t u = (uint64_t)x;
  bool ok = !overflow && x >= lo && (x < 0 || u <= hi);
  if (overflow > 0 && hi > (uint64_t)INT64_MAX) {
    u = (uint64_t)PyLong_AsUnsignedLongLong(k);
    ok = !(u == (uint64_t)-1 && PyErr_Occurred()) && u <= hi;
    PyErr_Clear();
  }
  if (!ok) return *n = owned ? owned : Py_NewRef(k), 2;
  Py_XDECREF(owned);
  return *out = u, 0;
}

/* v as an int (not a bool) in [lo, hi] (bits: two's complement): 0; 1 when v is no int (nothing
 * raised); -1 with RangeError "<fn>: <what> = v is out of range (lo ... hi)". */
static int int_in(gclpy_state *st, PyObject *v, const char *fn, const char *what, int64_t lo,
                  uint64_t hi, uint64_t *out) {
  PyObject *n;
  int rc = gclpy_int_value(v, false, lo, hi, out, &n);
  if (rc != 2) return rc;
  if (lo < 0) gclpy_raise_range(st, "%s: %s = %R is out of range (%lld ... %llu)", fn, what, n,
                                (long long)lo, (unsigned long long)hi);
  else gclpy_raise_range(st, "%s: %s = %R is out of range (%llu ... %llu)", fn, what, n,
                         (unsigned long long)lo, (unsigned long long)hi);
  Py_DECREF(n);
  return -1;
}

int gclpy_int_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what, int64_t lo,
                  uint64_t hi, int64_t *out) {
  uint64_t u;
  int rc = int_in(st, v, fn, what, lo, hi, &u);
  if (rc == 1) return refuse_type(fn, what, "an int", v);
  if (rc == 0) *out = (int64_t)u;
  return rc;
}

/* The key of args[key] and lay.field(key) as a parameter index: negative ones count from the end
 * (args[-1]: the last); anything out of [-n, n) is a RangeError quoting the index as given (no
 * arithmetic on it before the check). */
int gclpy_index_arg(gclpy_state *st, PyObject *key, size_t count, size_t *out) {
  if (PyLong_CheckExact(key)) { /* the common case, args[7] = v: an index in range, no reference */
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(key, &overflow);
    if (!overflow && i >= 0 && (unsigned long long)i < count) return *out = (size_t)i, 0;
  }
  if (PyBool_Check(key) || PyFloat_Check(key) || !PyIndex_Check(key)) return 1;
  PyObject *k = PyLong_Check(key) ? Py_NewRef(key) : PyNumber_Index(key); /* NumPy ints */
  if (!k) return -1;
  int overflow = 0;
  long long i = PyLong_AsLongLongAndOverflow(k, &overflow), n = (long long)count;
  int rc = i == -1 && PyErr_Occurred() ? -1 : 0;
  if (rc == 0 && !overflow && i < 0 && i >= -n) i += n;
  if (rc == 0 && !overflow && i >= 0 && i < n) *out = (size_t)i;
  else if (rc == 0 && n == 0)
    rc = -1, gclpy_raise_range(st, "parameter index %R is out of range: the layout has no "
                               "parameters", k);
  else if (rc == 0)
    rc = -1, gclpy_raise_range(st, "parameter index %R is out of range for %zu parameters (-%zu "
                               "... %zu)", k, count, count, count - 1);
  Py_DECREF(k);
  return rc;
}

int gclpy_to_i64(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  if (!v) return 0;
  return gclpy_int_arg(st, v, fn, a->name, a->lo, a->hi, out);
}

int gclpy_to_int(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  int64_t x = 0;
  if (!v || gclpy_int_arg(st, v, fn, a->name, a->lo, a->hi, &x) < 0) return v ? -1 : 0;
  return *(int *)out = (int)x, 0;
}

int gclpy_to_size(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  int64_t x = 0;
  if (!v || gclpy_int_arg(st, v, fn, a->name, a->lo, a->hi, &x) < 0) return v ? -1 : 0;
  return *(size_t *)out = (size_t)x, 0;
}

/* An exact int's value as a uint64_t: 0, or 1 (nothing set, no exception) when it is negative or
 * past 2**64-1. PyLong_AsUnsignedLong where a long has 64 bits: CPython (3.11, 3.12) reads an int
 * of more than one 30-bit digit -- every device address and stream handle -- through
 * _PyLong_AsByteArray in PyLong_AsUnsignedLongLong, and with a loop over its digits here. */
static inline int u64_exact(PyObject *v, uint64_t *out) {
#if ULONG_MAX == UINT64_MAX
  uint64_t u = PyLong_AsUnsignedLong(v);
#else
  uint64_t u = PyLong_AsUnsignedLongLong(v);
#endif
  if (u == UINT64_MAX && PyErr_Occurred()) return PyErr_Clear(), 1;
  return *out = u, 0;
}

int gclpy_to_address(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  if (!v) return 0;
  if (PyLong_CheckExact(v) && u64_exact(v, out) == 0) return 0; /* the common case: no Python call */
  int rc = int_in(st, v, fn, a->name, 0, UINT64_MAX, out);
  return rc == 1 ? refuse_type(fn, a->name, "an int address", v) : rc;
}

/* --- dims, threads, shared ------------------------------------------------------------------- */

static const char dims_forms[] = "an int or a tuple or list of 1 to 3 ints";

/* The dimensions given (1 to 3) into d (the rest 0), or -1. */
static int dims_of(gclpy_state *st, PyObject *v, const char *fn, const char *what, unsigned d[3]) {
  d[0] = d[1] = d[2] = 0;
  uint64_t x;
  if (PyLong_CheckExact(v) && (x = PyLong_AsUnsignedLong(v)) <= UINT_MAX) /* the common case */
    return d[0] = (unsigned)x, 1;
  PyErr_Clear();
  bool seq = PyTuple_Check(v) || PyList_Check(v);
  Py_ssize_t n = seq ? (PyTuple_Check(v) ? PyTuple_Size(v) : PyList_Size(v)) : 1;
  if (seq && (n < 1 || n > 3))
    return PyErr_Format(PyExc_TypeError, "%s: %s takes %s, got %zd ints", fn, what, dims_forms, n), -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = !seq ? v : PyTuple_Check(v) ? PyTuple_GetItem(v, i) : PyList_GetItem(v, i);
    char name[64];
    if (seq) snprintf(name, sizeof name, "%s[%zd]", what, i);
    else snprintf(name, sizeof name, "%s", what);
    int rc = int_in(st, item, fn, name, 0, UINT_MAX, &x);
    if (rc == 1) return refuse_type(fn, what, dims_forms, item);
    if (rc < 0) return -1;
    d[i] = (unsigned)x;
  }
  return (int)n;
}

int gclpy_to_dims(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  unsigned *d = out;
  if (v && PyLong_CheckExact(v) && !(a->flags & GCLPY_ONES)) { /* the common case, inline */
    unsigned long x = PyLong_AsUnsignedLong(v);
    if (x <= UINT_MAX) return d[0] = (unsigned)x, d[1] = d[2] = 0, 0;
    PyErr_Clear(); /* negative or too large: dims_of raises in its words */
  }
  int n = v ? dims_of(st, v, fn, a->name, d) : 0;
  for (int i = n; v && n > 0 && (a->flags & GCLPY_ONES) && i < 3; i++) d[i] = 1;
  return n < 0 ? -1 : 0;
}

int gclpy_to_threads(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  unsigned d[3];
  int n = v ? dims_of(st, v, fn, a->name, d) : 0;
  if (n < 0) return -1;
  unsigned long long t = 1;
  for (int i = 0; i < n; i++) t *= d[i]; /* a 0 dimension makes 0 threads: the library refuses it */
  if (t > UINT_MAX)
    return gclpy_raise_range(st, "%s: %s = %R has more than %u threads", fn, a->name, v, UINT_MAX), -1;
  if (v) *(unsigned *)out = (unsigned)t;
  return 0;
}

int gclpy_to_shared(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  uint64_t x = 0;
  int rc = v ? int_in(st, v, fn, a->name, 0, UINT32_MAX, &x) : 0;
  if (rc == 1) return refuse_type(fn, a->name, "an int (bytes)", v);
  if (rc == 0 && v) *(size_t *)out = (size_t)x;
  return rc;
}

/* --- streams ---------------------------------------------------------------------------------- */

/* An int CUstream: 0 (the context's default stream), 1 (CU_STREAM_LEGACY), 2
 * (CU_STREAM_PER_THREAD) or an address in user space; anything else below 4096 is refused before
 * the driver sees it (whether an address holds a stream is the library's check). */
/* A stream handle's one rule: 0, 1 (CU_STREAM_LEGACY), 2 (CU_STREAM_PER_THREAD) or a pointer
 * (none below 4096). handle_int and handle_exact both ask it. */
static inline bool stream_handle_ok(uint64_t x) { return x <= 2 || x >= 4096; }

static int handle_int(gclpy_state *st, PyObject *h, const char *fn, void **out) {
  uint64_t x;
  int rc = int_in(st, h, fn, "stream handle", 0, UINTPTR_MAX, &x);
  if (rc != 0) return rc;
  if (!stream_handle_ok(x))
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: stream handle %R is no stream "
                           "(0, 1: CU_STREAM_LEGACY, 2: CU_STREAM_PER_THREAD, or a CUstream)", fn, h), -1;
  return *out = (void *)(uintptr_t)x, 0;
}

/* The int handle of v's `cuda_stream` attribute (torch streams: a C property), or NULL and no
 * exception when it has none (or no int). */
static PyObject *attr_int(gclpy_state *st, PyObject *v) {
  PyObject *h = PyObject_GetAttr(v, st->str_cuda_stream_attr);
  if (h && PyLong_Check(h) && !PyBool_Check(h)) return h;
  Py_XDECREF(h);
  PyErr_Clear();
  return NULL;
}

/* __cuda_stream__()[1] (new reference), or NULL with an exception. */
static PyObject *protocol_int(gclpy_state *st, PyObject *v, const char *fn) {
  PyObject *r = PyObject_CallMethodObjArgs(v, st->str_cuda_stream, NULL); /* no bound method */
  if (!r) return NULL;
  PyObject *h = PyTuple_Check(r) && PyTuple_Size(r) == 2 ? Py_NewRef(PyTuple_GetItem(r, 1)) : NULL;
  Py_DECREF(r);
  if (h && PyLong_Check(h) && !PyBool_Check(h)) return h;
  Py_XDECREF(h);
  return PyErr_Format(PyExc_TypeError, "%s: __cuda_stream__() must return a tuple (version, "
                      "handle: int)", fn);
}

enum { STREAM_FIXED = 4 }; /* a kind's bit: the type's objects keep one handle (kind_of_type) */

/* How a type first seen keeps its handle: 1 __cuda_stream__; 2 an int `cuda_stream` attribute
 * (torch's streams of before the protocol; and a type with both, torch's, when the two agree on
 * v: the attribute is a C property, the protocol a Python method building a tuple); 0 neither on
 * the type (asked of each instance). -1 with an exception. */
static int kind_of_where(gclpy_state *st, PyObject *v, PyObject *tp, const char *fn) {
  int proto = PyObject_HasAttr(tp, st->str_cuda_stream), attr = PyObject_HasAttr(tp, st->str_cuda_stream_attr);
  if (!proto) return attr ? 2 : 0;
  PyObject *a = attr ? attr_int(st, v) : NULL;
  if (!a) return 1;
  PyObject *h = protocol_int(st, v, fn);
  int same = h ? PyObject_RichCompareBool(a, h, Py_EQ) : -1;
  Py_DECREF(a), Py_XDECREF(h);
  return same < 0 ? -1 : same ? 2 : 1;
}

/* The types whose objects give one handle for their life, and are asked once per object
 * (foreign_handle's memo): torch's and CuPy's streams, by exact type (a subclass may compute
 * its handle). An object of another type, one with `__cuda_stream__` written by a user (which
 * may follow a current stream), or cuda.core's (close() ends its handle while the object
 * lives) is asked at every launch. */
static const char *const fixed_handle_types[] = {
  "torch.cuda.streams.Stream", "torch.cuda.streams.ExternalStream",
  "cupy.cuda.stream.Stream", "cupy.cuda.stream.ExternalStream",
};

static bool fixed_handle_type(PyObject *tp) {
  PyObject *mod = PyObject_GetAttrString(tp, "__module__");
  PyObject *name = mod ? PyObject_GetAttrString(tp, "__qualname__") : NULL;
  PyObject *full = name && PyUnicode_Check(mod) && PyUnicode_Check(name)
                     ? PyUnicode_FromFormat("%U.%U", mod, name) : NULL;
  Py_XDECREF(mod), Py_XDECREF(name);
  bool fixed = false;
  for (size_t i = 0; full && i < sizeof fixed_handle_types / sizeof *fixed_handle_types; i++)
    fixed = fixed || PyUnicode_CompareWithASCIIString(full, fixed_handle_types[i]) == 0;
  Py_XDECREF(full);
  PyErr_Clear(); /* a type without names is asked at every launch */
  return fixed;
}

/* kind_of_where's answer, with STREAM_FIXED for the types above. */
static int kind_of_type(gclpy_state *st, PyObject *v, PyObject *tp, const char *fn) {
  int kind = kind_of_where(st, v, tp, fn);
  return kind > 0 && fixed_handle_type(tp) ? kind | STREAM_FIXED : kind;
}

/* Where a type of another library keeps its stream: one look-up per type, remembered by the
 * module (st->stream_kinds: type -> kind_of_type's answer; st->last_stream_type: the last one). */
static int stream_kind(gclpy_state *st, PyObject *v, const char *fn) {
  PyObject *tp = (PyObject *)Py_TYPE(v);
  if (tp == st->last_stream_type) return st->last_stream_kind;
  PyObject *k = st->stream_kinds ? PyDict_GetItemWithError(st->stream_kinds, tp) : NULL;
  if (!k && PyErr_Occurred()) return -1;
  int kind = k ? (int)PyLong_AsLong(k) : kind_of_type(st, v, tp, fn);
  if (kind < 0) return -1;
  if (!k && kind && st->stream_kinds) {
    if (PyDict_Size(st->stream_kinds) >= 256) { /* types made in a loop; the memo borrowed from it */
      st->last_stream_type = NULL;
      PyDict_Clear(st->stream_kinds);
    }
    PyObject *n = PyLong_FromLong(kind);
    int rc = n ? PyDict_SetItem(st->stream_kinds, tp, n) : -1;
    Py_XDECREF(n);
    if (rc < 0) return -1;
  }
  if (kind) st->last_stream_type = tp, st->last_stream_kind = kind; /* borrowed: the dict holds it */
  return kind;
}

/* The int a stream object of another library gives: __cuda_stream__()[1], or (torch streams of
 * before the protocol) its cuda_stream attribute. New reference; NULL and no exception: neither. */
static PyObject *foreign_int(gclpy_state *st, PyObject *v, const char *fn) {
  int kind = stream_kind(st, v, fn);
  if (kind < 0) return NULL;
  kind &= ~STREAM_FIXED;
  if (kind == 0) kind = PyObject_HasAttr(v, st->str_cuda_stream) ? 1 : 2; /* set per instance */
  return kind == 2 ? attr_int(st, v) : protocol_int(st, v, fn);
}

/* An exact int handle that handle_int takes (the common case: torch's s.cuda_stream), read
 * without the number protocol: 0; 1 for anything else (handle_int then decides, in its words). */
static inline int handle_exact(PyObject *h, void **out) {
  uint64_t x;
  if (!PyLong_CheckExact(h) || u64_exact(h, &x) != 0 || !stream_handle_ok(x)) return 1;
  return *out = (void *)(uintptr_t)x, 0;
}

/* The handle of a stream object of another library. An object of a type whose objects keep one
 * handle (fixed_handle_types) is asked once: the last such object is remembered through a weak
 * reference beside its handle, and found again by comparing the reference's object with the one
 * given. That comparison reads what CPython clears when the object dies (no callback is relied
 * on: a memo that forgot its object in a weak reference's callback crashed on an H100, torch's
 * objects dying without it running, so a new object at a freed one's address took its handle).
 * No strong reference is kept: the object dies when its owner lets it go. A type without weak
 * references is asked at every launch. */
static void remember_stream(gclpy_state *st, PyObject *v, void *handle) {
  PyObject *ref = PyWeakref_NewRef(v, NULL);
  if (!ref) { /* the type has no weak references: its objects are asked every time, and the */
    PyErr_Clear(); /* type is not tried again (its kind loses STREAM_FIXED, here and in the dict) */
    st->last_stream_kind &= ~STREAM_FIXED;
    PyObject *k = PyLong_FromLong(st->last_stream_kind);
    if (!k || (st->stream_kinds && PyDict_SetItem(st->stream_kinds, st->last_stream_type, k) < 0))
      PyErr_Clear();
    Py_XDECREF(k);
    return;
  }
  PyObject *old = st->last_stream_ref;
  st->last_stream_ref = ref, st->last_stream_handle = handle;
  Py_XDECREF(old);
}

static inline bool remembered_stream(const gclpy_state *st, PyObject *v) {
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* 3.13's; its successor is not in 3.10's ABI */
#endif
  /* a dead reference gives None: never a match (None is refused as a stream, or is no stream) */
  return st->last_stream_ref && v != Py_None && PyWeakref_GetObject(st->last_stream_ref) == v;
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

static int foreign_handle(gclpy_state *st, PyObject *v, const char *fn, const gclpy_arg *a,
                          void **out) {
  if (remembered_stream(st, v)) return *out = st->last_stream_handle, 0;
  PyObject *h = v == Py_None || PyBool_Check(v) ? NULL : foreign_int(st, v, fn);
  if (!h) {
    if (PyErr_Occurred()) return -1;
    return refuse_type(fn, "stream", a->flags & GCLPY_NONE ? "None, a gclaunch.Stream, an int "
                       "CUstream or an object with __cuda_stream__" : "a gclaunch.Stream, an int "
                       "CUstream or an object with __cuda_stream__", v);
  }
  int rc = handle_int(st, h, fn, out);
  Py_DECREF(h);
  if (rc == 0 && Py_TYPE(v) == (PyTypeObject *)st->last_stream_type &&
      (st->last_stream_kind & STREAM_FIXED))
    remember_stream(st, v, *out);
  return rc;
}

/* The handle v gives (ours: the gclaunch.Stream given). */
static int stream_handle(gclpy_state *st, PyObject *v, const char *fn, const gclpy_arg *a,
                         gclpy_streamarg *s) {
  if (handle_exact(v, &s->handle) == 0) return 0;
  if (Py_IS_TYPE(v, st->stream_type)) {
    gclpy_stream *ours = (gclpy_stream *)v;
    if (!ours->stream)
      return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the Stream was closed", fn), -1;
    s->ours = ours, s->stream = ours->stream;
    return s->handle = ours->handle, 0;
  }
  if (PyLong_Check(v) && !PyBool_Check(v)) return handle_int(st, v, fn, &s->handle);
  return foreign_handle(st, v, fn, a, &s->handle);
}

int gclpy_to_stream(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  gclpy_streamarg *s = out;
  if (!v) { /* release */
    gcl_stream_destroy(s->tmp);
    return s->tmp = NULL, 0;
  }
  s->obj = v;
  if (stream_handle(st, v, fn, a, s) < 0) return -1;
  if (s->ours || !s->ctx) return 0;
  gcl_status rc = gcl_stream_wrap(s->ctx->ctx, s->handle, &s->tmp);
  if (rc != GCL_OK) return gclpy_raise(st, rc), -1;
  s->stream = s->tmp;
  return 0;
}

/* --- PE lists, contexts, arch ------------------------------------------------------------------ */

static int every_pe(gclpy_state *st, gclpy_pes *p) {
  int count = 0;
  gcl_status s = gcl_pe_count(&count);
  if (s != GCL_OK) return gclpy_raise(st, s), -1;
  if (!(p->pes = PyMem_Malloc((size_t)(count ? count : 1) * sizeof *p->pes))) return PyErr_NoMemory(), -1;
  for (int i = 0; i < count; i++) p->pes[i] = i;
  return p->n = (size_t)count, 0;
}

int gclpy_to_pes(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  gclpy_pes *p = out;
  if (!v) return PyMem_Free(p->pes), p->pes = NULL, p->n = 0, 0; /* release */
  if (v == Py_None) return every_pe(st, p);
  PyObject *t = PyList_Check(v) || PyTuple_Check(v) || PyRange_Check(v) ? PySequence_Tuple(v) : NULL;
  if (!t) return PyErr_Occurred() ? -1 : refuse_type(fn, a->name, "a list, tuple or range of ints, or None", v);
  Py_ssize_t len = PyTuple_Size(t);
  if (!(p->pes = PyMem_Malloc((size_t)(len ? len : 1) * sizeof *p->pes)))
    return Py_DECREF(t), PyErr_NoMemory(), -1;
  for (Py_ssize_t i = 0; i < len; i++) {
    int64_t x = 0;
    char what[64];
    snprintf(what, sizeof what, "%s[%zd]", a->name, i);
    if (gclpy_int_arg(st, PyTuple_GetItem(t, i), fn, what, INT_MIN, INT_MAX, &x) < 0) {
      PyMem_Free(p->pes), p->pes = NULL, Py_DECREF(t);
      return -1;
    }
    p->pes[i] = (int)x;
  }
  Py_DECREF(t);
  return p->n = (size_t)len, 0;
}

int gclpy_to_context(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  if (!v) return 0;
  if (v != Py_None && !Py_IS_TYPE(v, st->context_type))
    return refuse_type(fn, a->name, "a gclaunch.Context or None", v);
  *(gclpy_context **)out = v == Py_None ? NULL : (gclpy_context *)v;
  return 0;
}

int gclpy_to_arch(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  if (!v || v == Py_None) return 0;
  int64_t x = 0;
  if (!PyUnicode_Check(v)) {
    if (PyBool_Check(v) || PyFloat_Check(v) || !PyIndex_Check(v))
      return refuse_type(fn, a->name, "an int or a str ('sm_90')", v);
    if (gclpy_int_arg(st, v, fn, a->name, 0, 1000, &x) < 0) return -1;
    return *(int *)out = (int)x, 0;
  }
  const char *s = gclpy_str_arg(st, v, fn, a->name);
  if (!s) return -1;
  const char *digits = strncmp(s, "sm_", 3) == 0 ? s + 3 : s;
  bool ok = *digits && strlen(digits) <= 4;
  for (const char *c = digits; ok && *c; c++) ok = *c >= '0' && *c <= '9', x = x * 10 + (*c - '0');
  if (!ok || x <= 0 || x > 1000)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: %s takes sm_NN or NN, got %R", fn,
                           a->name, v), -1;
  return *(int *)out = (int)x, 0;
}

/* --- bools, pdl, str, pairs, objects -------------------------------------------------------------- */

int gclpy_to_bool(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)st, (void)fn, (void)a;
  int c = v ? PyObject_IsTrue(v) : 0;
  if (c < 0) return -1;
  if (v) *(bool *)out = c != 0;
  return 0;
}

int gclpy_to_pdl(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)st;
  if (!v) return 0;
  if (PyUnicode_Check(v)) { /* "unchecked": launch even though the kernel's code never waits */
    if (PyUnicode_CompareWithASCIIString(v, "unchecked") != 0)
      return refuse_type(fn, a->name, "True, False or 'unchecked'", v);
    return *(int *)out = 2, 0;
  }
  int c = PyObject_IsTrue(v);
  if (c < 0) return -1;
  return *(int *)out = c, 0;
}

const char *gclpy_str_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what) {
  if (!PyUnicode_Check(v)) return refuse_type(fn, what, "a str", v), NULL;
  Py_ssize_t n = 0;
  const char *s = PyUnicode_AsUTF8AndSize(v, &n);
  if (!s) { /* a lone surrogate: no UTF-8 for it */
    PyErr_Clear();
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: %s = %R is not valid text (a lone "
                           "surrogate has no UTF-8 form)", fn, what, v), NULL;
  }
  if ((size_t)n != strlen(s))
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: %s = %R holds a NUL character at "
                           "index %zu", fn, what, v, strlen(s)), NULL;
  return s;
}

int gclpy_to_str(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  const char *s = v ? gclpy_str_arg(st, v, fn, a->name) : NULL;
  if (v && !s) return -1;
  if (v) *(const char **)out = s;
  return 0;
}

int gclpy_to_strs(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  gclpy_strs *s = out;
  if (!v) { /* release */
    PyMem_Free(s->at), s->at = NULL, s->n = 0;
    Py_CLEAR(s->keep);
    return 0;
  }
  if (PyUnicode_Check(v) || PyBytes_Check(v) || !PySequence_Check(v))
    return refuse_type(fn, a->name, "a sequence of strs", v);
  if (!(s->keep = PySequence_Tuple(v))) return -1;
  s->n = (size_t)PyTuple_Size(s->keep);
  if (!(s->at = PyMem_Calloc(s->n ? s->n : 1, sizeof *s->at)))
    return gclpy_to_strs(st, fn, a, NULL, out), PyErr_NoMemory(), -1;
  for (size_t i = 0; i < s->n; i++) {
    char what[64];
    snprintf(what, sizeof what, "%s[%zu]", a->name, i);
    if (!(s->at[i] = gclpy_str_arg(st, PyTuple_GetItem(s->keep, (Py_ssize_t)i), fn, what)))
      return gclpy_to_strs(st, fn, a, NULL, out), -1;
  }
  return 0;
}

int gclpy_to_pair(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  if (!v) return 0;
  if (!PyTuple_Check(v) || PyTuple_Size(v) != 2)
    return refuse_type(fn, a->name, "a tuple of two ints", v);
  int *pair = out;
  for (Py_ssize_t i = 0; i < 2; i++) {
    int64_t x = 0;
    char what[64];
    snprintf(what, sizeof what, "%s[%zd]", a->name, i);
    if (gclpy_int_arg(st, PyTuple_GetItem(v, i), fn, what, INT_MIN, INT_MAX, &x) < 0) return -1;
    pair[i] = (int)x;
  }
  return 0;
}

int gclpy_to_object(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)st, (void)fn, (void)a;
  if (v) *(PyObject **)out = v;
  return 0;
}

/* --- images ---------------------------------------------------------------------------------- */

int gclpy_is_path(gclpy_state *st, PyObject *src) {
  return PyUnicode_Check(src) || PyObject_HasAttr(src, st->str_fspath);
}

PyObject *gclpy_path_bytes(gclpy_state *st, PyObject *src) {
  PyObject *path = PyOS_FSPath(src);
  if (!path) return NULL;
  PyObject *bpath = NULL;
  if (PyUnicode_Check(path)) {
    if (!PyUnicode_FSConverter(path, &bpath)) { /* a lone surrogate the file system refuses */
      PyErr_Clear();
      gclpy_raise_msg(st, GCL_ERROR_IO, "path %R cannot be encoded for the file system", path);
      return Py_DECREF(path), NULL;
    }
  } else if (PyBytes_Check(path)) {
    bpath = Py_NewRef(path);
  }
  Py_DECREF(path);
  if (!bpath) return gclpy_type_error("expected a path (str or os.PathLike)", src);
  if ((size_t)PyBytes_Size(bpath) != strlen(PyBytes_AsString(bpath))) {
    gclpy_raise_msg(st, GCL_ERROR_IO, "path %R holds a NUL byte", bpath);
    return Py_DECREF(bpath), NULL;
  }
  return bpath;
}

PyObject *gclpy_image_bytes(gclpy_state *st, PyObject *src) {
  if (gclpy_is_path(st, src)) {
    PyObject *bpath = gclpy_path_bytes(st, src);
    if (!bpath) return NULL;
    void *data = NULL;
    size_t size = 0;
    gcl_status s;
    const char *cpath = PyBytes_AsString(bpath);
    Py_BEGIN_ALLOW_THREADS /* a file read: judged by its first bytes, never waits on a FIFO */
    s = gcl_image_file_read(cpath, &data, &size);
    Py_END_ALLOW_THREADS
    Py_DECREF(bpath);
    if (s != GCL_OK) return gclpy_raise(st, s);
    PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    gcl_file_free(data);
    return b;
  }
  if (PyBytes_Check(src)) return Py_NewRef(src);
  PyObject *mv = PyMemoryView_FromObject(src);
  if (!mv) {
    PyErr_Clear();
    return gclpy_type_error("expected a path (str or os.PathLike) or a bytes-like object", src);
  }
  PyObject *b = PyBytes_FromObject(mv);
  Py_DECREF(mv);
  return b;
}

int gclpy_to_bytes(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)st;
  PyObject **bytes = out;
  if (!v) { /* release */
    Py_CLEAR(*bytes);
    return 0;
  }
  PyObject *mv = PyMemoryView_FromObject(v);
  if (!mv)
    return PyErr_Clear(), refuse_type(fn, a->name, "a bytes-like object (any buffer: bytes, "
                                      "bytearray, NumPy array)", v);
  *bytes = PyBytes_FromObject(mv); /* one contiguous copy (any buffer layout) */
  Py_DECREF(mv);
  return *bytes ? 0 : -1;
}

int gclpy_to_writable(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)st;
  gclpy_writable *w = out;
  if (!v) { /* release */
    Py_CLEAR(w->view);
    return 0;
  }
  w->obj = v;
  if (PyByteArray_Check(v)) return 0;
  PyObject *mv = PyMemoryView_FromObject(v);
  w->view = mv ? PyObject_CallMethod(mv, "cast", "s", "B") : NULL;
  Py_XDECREF(mv);
  PyObject *ro = w->view ? PyObject_GetAttrString(w->view, "readonly") : NULL;
  int readonly = ro ? PyObject_IsTrue(ro) : 1;
  Py_XDECREF(ro);
  if (w->view && !readonly) return 0;
  Py_CLEAR(w->view);
  PyErr_Clear();
  return refuse_type(fn, a->name, "a writable C-contiguous buffer (bytearray, memoryview, NumPy "
                     "array) or None", v);
}

int gclpy_to_image(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out) {
  (void)fn, (void)a;
  PyObject **bytes = out;
  if (!v) { /* release */
    Py_CLEAR(*bytes);
    return 0;
  }
  return (*bytes = gclpy_image_bytes(st, v)) ? 0 : -1;
}
