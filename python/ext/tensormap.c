/* tensormap.c -- L4: gclaunch.TensorMap, and every tensor-map call of the library in one place.
 *
 * A TensorMap is a description (tensor, box, options); it is encoded when assigned into args,
 * from the tensor's __dlpack__ at that moment (borrowed: only the description and the address
 * are read), into the field by gcl_args_set_tensormaps -- n consecutive elements in one call, all
 * or nothing. The box is given in the tensor's dimension order (like its shape); the C options
 * are in TMA order (innermost first), so it is reversed here. */
#include "gclpy.h"

#include <stdio.h>
#include <string.h>

/* --- where maps go: slots of Args or of a TensorMapTable ------------------------------------- */

/* n consecutive slots from at (gcl_args_tensormap_slots / gcl_tensormap_table_slots). */
static int slots_for(gclpy_state *st, const gclpy_maps_at *at, size_t n, gcl_tensormap_slots *out) {
  gcl_status s;
  if (at->table) {
    if (!at->table->table)
      return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMapTable: the table was closed"), -1;
    s = gcl_tensormap_table_slots(at->table->table, at->index, n, out);
  } else {
    s = gcl_args_tensormap_slots(at->args->args, &at->first->field, n, out);
  }
  return s == GCL_OK ? 0 : (gclpy_raise(st, s), -1);
}

/* The context maps at `at` are made in: the args' kernel's (or device's default), or NULL for a
 * table (its own). *ok false with an exception set. */
static gcl_context *context_for(gclpy_state *st, const gclpy_maps_at *at, int device, bool *ok) {
  *ok = true;
  if (at->table) return NULL;
  gcl_context *ctx = gclpy_layout_context(st, at->args->layout, device);
  *ok = ctx != NULL;
  return ctx;
}

/* Keep-alive: the maps of slots [i, i + n) from at point into obj (NULL: into nothing kept). */
static int keep_maps(const gclpy_maps_at *at, size_t i, size_t n, PyObject *obj) {
  if (!at->table) {
    size_t size = at->first->field.size;
    return gclpy_keep_set(at->args, at->first->field.offset + i * size, n * size, obj);
  }
  gclpy_tmtable *t = at->table;
  if (!t->keep && !(t->keep = PyDict_New())) return -1;
  for (size_t k = at->index + i; k < at->index + i + n; k++) {
    PyObject *key = PyLong_FromSize_t(k);
    int rc = !key ? -1 : obj ? PyDict_SetItem(t->keep, key, obj) : 0;
    if (key && !obj && PyDict_DelItem(t->keep, key) < 0) PyErr_Clear();
    Py_XDECREF(key);
    if (rc < 0) return -1;
  }
  return 0;
}

/* --- TensorMap ------------------------------------------------------------------------------ */

/* An int in [lo, hi] through the converter layer (gclpy_int_arg); what: "TensorMap <name>". */
static int long_arg(gclpy_state *st, PyObject *v, const char *what, long long lo, long long hi,
                    long long *out) {
  const char *name = strchr(what, ' ');
  int64_t x = 0;
  int rc = gclpy_int_arg(st, v, "TensorMap", name ? name + 1 : what, lo, (uint64_t)hi, &x);
  *out = x;
  return rc;
}

/* swizzle and l2 in bytes (32/64/128, 64/128/256) or as the C enum (1/2/3); 0 is none. Any other
 * int is out of range (gclaunch.RangeError). */
static int enum_arg(gclpy_state *st, PyObject *v, const char *what, const long long *bytes, int *out) {
  long long x = 0;
  if (v && long_arg(st, v, what, INT64_MIN, INT64_MAX, &x) < 0) return -1;
  for (int i = 0; i < 4; i++)
    if (x == bytes[i] || x == i) return *out = i, 0;
  gclpy_raise_range(st, "%s: expected 0, %lld, %lld or %lld (bytes), got %lld", what, bytes[1],
                    bytes[2], bytes[3], x);
  return -1;
}

/* The items of tuple t, each an int in [lo, hi] named "what[i]" in messages, into out. */
static int tuple_ints(gclpy_state *st, PyObject *t, const char *what, long long lo, long long hi,
                      long long *out) {
  for (Py_ssize_t i = 0; i < PyTuple_Size(t); i++) {
    char item[96];
    snprintf(item, sizeof item, "%s[%zd]", what, i);
    if (long_arg(st, PyTuple_GetItem(t, i), item, lo, hi, &out[i]) < 0) return -1;
  }
  return 0;
}

/* A sequence of 1 to GCL_TENSORMAP_MAX_RANK ints (or one int) in [lo, UINT32_MAX] into out, in
 * TMA order (reversed). *rank: how many. */
static int dims_arg(gclpy_state *st, PyObject *v, const char *what, long long lo, uint32_t *out,
                    Py_ssize_t *rank, PyObject **as_tuple) {
  PyObject *t = PyLong_Check(v) ? PyTuple_Pack(1, v) : NULL;
  if (!t) {
    if (PyLong_Check(v)) return -1;
    if (PyUnicode_Check(v) || PyBytes_Check(v) || PyByteArray_Check(v) ||
        (!PySequence_Check(v) && !PyIndex_Check(v))) {
      char msg[160];
      snprintf(msg, sizeof msg, "%s: expected an int or a sequence of ints", what);
      return gclpy_type_error(msg, v), -1;
    }
    t = PyIndex_Check(v) ? PyTuple_Pack(1, v) : PySequence_Tuple(v);
    if (!t) return -1;
  }
  Py_ssize_t r = PyTuple_Size(t);
  if (r < 1 || r > GCL_TENSORMAP_MAX_RANK) {
    gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: expected 1 to %d sizes, got %zd", what,
                    GCL_TENSORMAP_MAX_RANK, r);
    return Py_DECREF(t), -1;
  }
  long long x[GCL_TENSORMAP_MAX_RANK];
  if (tuple_ints(st, t, what, lo, UINT32_MAX, x) < 0) return Py_DECREF(t), -1;
  for (Py_ssize_t i = 0; i < r; i++) out[r - 1 - i] = (uint32_t)x[i];
  *rank = r;
  if (as_tuple) *as_tuple = t;
  else Py_DECREF(t);
  return 0;
}

/* The arguments (converted by tensormap_new's helpers below, but store, oob_nan, interleave). */
struct tensormap_in { PyObject *v[11]; bool store, oob_nan; int interleave; };
#define TM(name, i) GCLPY_ARGN(name, struct tensormap_in, v[i], gclpy_to_object)
static const gclpy_arg tensormap_args[] = {
  TM("tensor", 0), TM("box", 1), TM("swizzle", 2),
  GCLPY_ARG(struct tensormap_in, store, gclpy_to_bool),
  GCLPY_ARG(struct tensormap_in, oob_nan, gclpy_to_bool), TM("l2", 5), TM("element_strides", 6),
  GCLPY_ARG(struct tensormap_in, interleave, gclpy_to_int, 0, 2), TM("im2col", 8), TM("lower", 9),
  TM("upper", 10)};
#undef TM
static const gclpy_params tensormap_params = {"TensorMap", tensormap_args, 11, 2, 1};

/* A sequence of min ... max ints in [lo, hi] into out, in the given order. *n: how many. */
static int ints_arg(gclpy_state *st, PyObject *v, const char *what, Py_ssize_t min, Py_ssize_t max,
                    long long lo, long long hi, long long *out, Py_ssize_t *n) {
  if (PyUnicode_Check(v) || PyBytes_Check(v) || !PySequence_Check(v)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected a sequence of ints", what);
    return gclpy_type_error(msg, v), -1;
  }
  PyObject *t = PySequence_Tuple(v);
  if (!t) return -1;
  Py_ssize_t r = PyTuple_Size(t);
  if (r < min || r > max) {
    if (min == max)
      gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: expected %zd ints, got %zd", what, max, r);
    else
      gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: expected %zd to %zd ints, got %zd", what,
                      min, max, r);
    return Py_DECREF(t), -1;
  }
  int rc = tuple_ints(st, t, what, lo, hi, out);
  Py_DECREF(t);
  if (rc == 0 && n) *n = r;
  return rc;
}

/* im2col=(pixels, channels), lower=, upper= (innermost spatial dimension first: W, H, D, as the C
 * options and run's tmap: spec) into o; box must then be absent. */
static int im2col_args(gclpy_state *st, PyObject *const *v, bool has_box, gcl_tensormap_options *o) {
  enum { IM2COL = 8, LOWER, UPPER };
  bool on = v[IM2COL] && v[IM2COL] != Py_None;
  bool corners = (v[LOWER] && v[LOWER] != Py_None) || (v[UPPER] && v[UPPER] != Py_None);
  if (!on && corners)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap lower/upper: im2col corners "
                           "need im2col=(pixels, channels)"), -1;
  if (!on) {
    if (has_box) return 0;
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap: give a box, or "
                           "im2col=(pixels, channels) for an im2col map"), -1;
  }
  if (has_box)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap: box and im2col exclude "
                           "each other (an im2col map has no box)"), -1;
  long long pc[2], c[3];
  Py_ssize_t n;
  if (ints_arg(st, v[IM2COL], "TensorMap im2col", 2, 2, 0, UINT32_MAX, pc, NULL) < 0) return -1;
  if (pc[0] == 0)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap im2col: pixels = 0: "
                           "expected 1 ... 1024"), -1;
  o->im2col.pixels = (uint32_t)pc[0], o->im2col.channels = (uint32_t)pc[1];
  const char *what[2] = {"TensorMap lower", "TensorMap upper"};
  int32_t *out[2] = {o->im2col.lower, o->im2col.upper};
  for (int k = 0; k < 2; k++) {
    PyObject *x = v[LOWER + k];
    if (!x || x == Py_None) continue;
    if (ints_arg(st, x, what[k], 1, 3, INT32_MIN, INT32_MAX, c, &n) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) out[k][i] = (int32_t)c[i];
  }
  return 0;
}

static PyObject *tensormap_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  enum { T, BOX, SWIZZLE, L2 = 5, ESTRIDES };
  struct tensormap_in in = {{NULL}, false, false, 0};
  if (gclpy_parse_tuple(st, &tensormap_params, args, kwds, &in) < 0) return NULL;
  PyObject *const *v = in.v;
  if (!gclpy_has_dlpack(st, v[T])) return gclpy_type_error("TensorMap: expected a __dlpack__ tensor", v[T]);
  static const long long sw_bytes[4] = {0, 32, 64, 128}, l2_bytes[4] = {0, 64, 128, 256};
  gcl_tensormap_options o;
  memset(&o, 0, sizeof o);
  PyObject *box = NULL;
  Py_ssize_t rank = 0, erank = 0;
  bool has_box = v[BOX] && v[BOX] != Py_None;
  if (im2col_args(st, v, has_box, &o) < 0) return NULL;
  if (has_box ? dims_arg(st, v[BOX], "TensorMap box", 0, o.box, &rank, &box) < 0
              : !(box = Py_NewRef(Py_None)))
    return NULL;
  if ((v[ESTRIDES] && v[ESTRIDES] != Py_None &&
       dims_arg(st, v[ESTRIDES], "TensorMap element_strides", 0, o.element_strides, &erank, NULL) < 0) ||
      enum_arg(st, v[SWIZZLE], "TensorMap swizzle", sw_bytes, &o.swizzle) < 0 ||
      enum_arg(st, v[L2], "TensorMap l2", l2_bytes, &o.l2_promotion) < 0)
    return Py_DECREF(box), NULL;
  if (erank && has_box && erank != rank) {
    Py_DECREF(box);
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap element_strides: %zd values "
                           "for a box of %zd (give one per dimension)", erank, rank);
  }
  o.store = in.store;
  o.oob_fill = in.oob_nan ? GCL_TENSORMAP_OOB_NAN : GCL_TENSORMAP_OOB_ZERO;
  o.interleave = in.interleave;
  gclpy_tensormap *tm = (gclpy_tensormap *)gclpy_alloc(st->tensormap_type);
  if (!tm) return Py_DECREF(box), NULL;
  tm->tensor = Py_NewRef(v[T]);
  tm->box = box;
  tm->options = o;
  tm->estride_rank = erank;
  return (PyObject *)tm;
}

static int tensormap_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(((gclpy_tensormap *)self)->tensor);
  Py_VISIT(((gclpy_tensormap *)self)->box);
  return 0;
}

static int tensormap_clear(PyObject *self) {
  Py_CLEAR(((gclpy_tensormap *)self)->tensor);
  Py_CLEAR(((gclpy_tensormap *)self)->box);
  return 0;
}

static void tensormap_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  tensormap_clear(self);
  gclpy_free(self);
}

/* A TensorMap emptied by the GC (tp_clear) while a finalizer still reaches it. */
static int cleared(gclpy_state *st, gclpy_tensormap *tm) {
  if (tm->tensor && tm->box) return 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap: cleared by the garbage collector");
  return -1;
}

/* The options of tm for a tensor of ndim dimensions (the box must give each one). */
static int options_for(gclpy_state *st, gclpy_tensormap *tm, const DLTensor *t,
                       gcl_tensormap_options *o) {
  if (tm->box == Py_None) { /* im2col: the library checks the rank */
    if (tm->estride_rank && tm->estride_rank != t->ndim) {
      gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap element_strides: %zd values for "
                      "a tensor of %d dimensions (give one per dimension, in the tensor's order)",
                      tm->estride_rank, (int)t->ndim);
      return -1;
    }
    return *o = tm->options, 0;
  }
  Py_ssize_t r = PyTuple_Size(tm->box);
  if (r != t->ndim) {
    gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "TensorMap box: %zd sizes for a tensor of %d "
                    "dimensions (give one per dimension, in the tensor's order)", r, (int)t->ndim);
    return -1;
  }
  *o = tm->options;
  return 0;
}

/* A borrowed tensor: a versioned capsule of another major version cannot be read. */
static int borrow(gclpy_state *st, PyObject *obj, gclpy_dlpack *d) {
  if (gclpy_dlpack_get(st, obj, d, true) < 0) return -1;
  if (d->versioned && ((DLManagedTensorVersioned *)d->managed)->version.major != DLPACK_MAJOR_VERSION) {
    unsigned major = ((DLManagedTensorVersioned *)d->managed)->version.major;
    gclpy_dlpack_release(d);
    gclpy_raise_msg(st, GCL_ERROR_TENSOR_VERSION, "tensor: DLPack major version %u (expected %d)", major,
                    DLPACK_MAJOR_VERSION);
    return -1;
  }
  return 0;
}

static int device_of(const DLTensor *t) { return t->device.device_type == kDLCUDA ? t->device.device_id : 0; }

/* Scratch space for n entries: on the stack up to 8, else on the heap. */
typedef struct batch {
  gclpy_dlpack small_d[8];
  gcl_tensormap_source small_s[8];
  gcl_tensormap_options small_o[8];
  gclpy_dlpack *d;
  gcl_tensormap_source *s;  /* the tensors with their producers' DLPack flags (READ_ONLY) */
  gcl_tensormap_options *o;
  size_t got;
} batch;

static int batch_init(batch *b, size_t n) {
  b->got = 0;
  if (n <= 8) return b->d = b->small_d, b->s = b->small_s, b->o = b->small_o, 0;
  b->d = PyMem_Calloc(n, sizeof *b->d), b->s = PyMem_Calloc(n, sizeof *b->s);
  b->o = PyMem_Calloc(n, sizeof *b->o);
  return b->d && b->s && b->o ? 0 : (PyErr_NoMemory(), -1);
}

static void batch_free(batch *b) {
  for (size_t i = 0; i < b->got; i++) gclpy_dlpack_release(&b->d[i]);
  if (b->d != b->small_d) PyMem_Free(b->d), PyMem_Free(b->s), PyMem_Free(b->o);
}

static PyObject *list_of_one(PyObject *v) {
  PyObject *l = PyList_New(1);
  if (l) PyList_SetItem(l, 0, Py_NewRef(v));
  return l;
}

/* maps as a new list (a TensorMap alone: a list of one). */
static PyObject *as_list(gclpy_state *st, PyObject *maps) {
  if (PyObject_TypeCheck(maps, st->tensormap_type)) return list_of_one(maps);
  if (PyList_Check(maps) || PyTuple_Check(maps)) return PySequence_List(maps);
  return gclpy_type_error("expected a gclaunch.TensorMap or a list of them", maps);
}

int gclpy_keep_set(gclpy_args *a, size_t offset, size_t size, PyObject *obj) {
  if (a->keep && PyDict_Size(a->keep)) {
    PyObject *key = PyLong_FromSize_t(offset);
    if (!key) return -1;
    if (size <= 128) { /* one leaf: only an entry at its offset can be in it */
      if (PyDict_DelItem(a->keep, key) < 0) PyErr_Clear();
    } else { /* raw bytes over a struct or an array: every entry inside goes */
      PyObject *gone = PyList_New(0), *k, *val;
      Py_ssize_t pos = 0;
      while (gone && PyDict_Next(a->keep, &pos, &k, &val)) {
        size_t at = PyLong_AsSize_t(k);
        if (at >= offset && at - offset < size && PyList_Append(gone, k) < 0) Py_CLEAR(gone);
      }
      for (Py_ssize_t i = 0; gone && i < PyList_Size(gone); i++)
        PyDict_DelItem(a->keep, PyList_GetItem(gone, i));
      if (!gone) return Py_DECREF(key), -1;
      Py_DECREF(gone);
    }
    Py_DECREF(key);
  }
  if (!obj) return 0;
  if (!a->keep && !(a->keep = PyDict_New())) return -1;
  PyObject *key = PyLong_FromSize_t(offset);
  int rc = key ? PyDict_SetItem(a->keep, key, obj) : -1;
  Py_XDECREF(key);
  return rc;
}

/* The sources of list (TensorMaps) into b (n of them: borrowed tensors, flags, options). */
static int sources_of(gclpy_state *st, PyObject *list, size_t n, batch *b) {
  for (size_t i = 0; i < n; i++) {
    PyObject *m = PyList_GetItem(list, (Py_ssize_t)i);
    if (!PyObject_TypeCheck(m, st->tensormap_type))
      return gclpy_type_error("expected a list of gclaunch.TensorMap", m), -1;
    gclpy_tensormap *tm = (gclpy_tensormap *)m;
    if (cleared(st, tm) < 0 || borrow(st, tm->tensor, &b->d[i]) < 0) return -1;
    b->got++;
    b->s[i] = (gcl_tensormap_source){.tensor = b->d[i].tensor, .dlpack_flags = b->d[i].flags};
    if (options_for(st, tm, b->s[i].tensor, &b->o[i]) < 0) return -1;
  }
  return 0;
}

int gclpy_tensormaps_set(const gclpy_maps_at *at, PyObject *maps) {
  gclpy_state *st = GCLPY_ST(at->table ? (PyObject *)at->table : (PyObject *)at->args);
  PyObject *list = as_list(st, maps);
  if (!list) return -1;
  size_t n = (size_t)PyList_Size(list);
  batch b;
  gcl_tensormap_slots where;
  bool ok = true;
  int rc = batch_init(&b, n);
  if (rc == 0 && n) rc = sources_of(st, list, n, &b);
  gcl_context *ctx = rc == 0 && n ? context_for(st, at, device_of(b.s[0].tensor), &ok) : NULL;
  if (rc == 0 && n && (!ok || slots_for(st, at, n, &where) < 0)) rc = -1;
  if (rc == 0 && n) {
    gcl_status s = gcl_tensormaps_set(ctx, &where, b.s, b.o, n);
    if (s != GCL_OK) rc = (gclpy_raise(st, s), -1);
  }
  batch_free(&b);
  /* set: each map's tensor is kept alive by the owner (the map points into it) */
  for (size_t i = 0; rc == 0 && i < n; i++)
    rc = keep_maps(at, i, 1, ((gclpy_tensormap *)PyList_GetItem(list, (Py_ssize_t)i))->tensor);
  Py_DECREF(list);
  return rc;
}

int gclpy_tensormaps_repoint(const gclpy_maps_at *at, PyObject *addresses) {
  gclpy_state *st = GCLPY_ST(at->table ? (PyObject *)at->table : (PyObject *)at->args);
  gclpy_addresses ad;
  gcl_tensormap_slots where;
  bool ok = true;
  int rc = gclpy_addresses_get(st, addresses, &ad);
  size_t n = ad.n;
  gcl_context *ctx = rc == 0 && n ? context_for(st, at, ad.device, &ok) : NULL;
  if (rc == 0 && n && (!ok || slots_for(st, at, n, &where) < 0)) rc = -1;
  if (rc == 0 && n) {
    gcl_status s = gcl_tensormaps_repoint(ctx, &where, ad.at);
    if (s != GCL_OK) rc = (gclpy_raise(st, s), -1);
  }
  /* re-pointed: a tensor given is kept alive; an int address is the caller's to keep (one pass
   * over the range drops what the maps pointed into before) */
  if (rc == 0 && n) rc = keep_maps(at, 0, n, NULL);
  for (size_t i = 0; rc == 0 && ad.tensors && i < n; i++) {
    PyObject *v = PyTuple_GetItem(ad.items, (Py_ssize_t)i);
    if (!PyLong_Check(v)) rc = keep_maps(at, i, 1, v);
  }
  gclpy_addresses_free(&ad);
  return rc;
}

/* Sets n peer maps of tm's description (its tensor borrowed as d) into where. */
static int set_peers(gclpy_state *st, const gclpy_maps_at *at, gclpy_tensormap *tm,
                     const gclpy_dlpack *d, const int *pes, size_t n) {
  gcl_tensormap_options o;
  gcl_tensormap_slots where;
  if (options_for(st, tm, d->tensor, &o) < 0 || slots_for(st, at, n, &where) < 0) return -1;
  DLTensor *storage = PyMem_Calloc(n, sizeof *storage);
  gcl_tensormap_source *src = PyMem_Calloc(n, sizeof *src);
  gcl_status s = GCL_OK;
  if (!storage || !src) s = GCL_ERROR_OUT_OF_MEMORY;
  else if ((s = gcl_symmetric_sources(d->tensor, pes, n, storage, src)) == GCL_OK) {
    for (size_t i = 0; i < n; i++) src[i].dlpack_flags = d->flags;
    s = gcl_tensormaps_set(at->table ? NULL : gcl_pe_context(), &where, src, &o, 1);
  }
  PyMem_Free(storage), PyMem_Free(src);
  if (s == GCL_ERROR_OUT_OF_MEMORY && (!storage || !src)) return PyErr_NoMemory(), -1;
  return s == GCL_OK ? 0 : (gclpy_raise(st, s), -1);
}

int gclpy_tensormaps_set_peers(const gclpy_maps_at *at, PyObject *map, const int *pes, size_t n) {
  gclpy_state *st = GCLPY_ST(at->table ? (PyObject *)at->table : (PyObject *)at->args);
  if (!PyObject_TypeCheck(map, st->tensormap_type))
    return gclpy_type_error("set_peer_tensormaps: map takes a gclaunch.TensorMap over this PE's "
                            "copy of a symmetric buffer", map), -1;
  gclpy_tensormap *tm = (gclpy_tensormap *)map;
  gclpy_dlpack d;
  if (cleared(st, tm) < 0 || borrow(st, tm->tensor, &d) < 0) return -1;
  int rc = set_peers(st, at, tm, &d, pes, n);
  gclpy_dlpack_release(&d);
  /* every peer's copy lives as long as this one: this PE's tensor is kept for each map */
  if (rc == 0) rc = keep_maps(at, 0, n, tm->tensor);
  return rc;
}

/* TensorMap.describe(): gcl_tensormap_check on the CPU, the arguments of the encode as a dict. */
static PyObject *tensormap_describe(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_tensormap *tm = (gclpy_tensormap *)self;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_dlpack d;
  gcl_tensormap_options o;
  gcl_tensormap_desc desc;
  if (cleared(st, tm) < 0 || borrow(st, tm->tensor, &d) < 0) return NULL;
  if (options_for(st, tm, d.tensor, &o) < 0) return gclpy_dlpack_release(&d), NULL;
  gcl_status s = gcl_tensormap_check(d.tensor, &o, &desc);
  gclpy_dlpack_release(&d);
  if (s != GCL_OK) return gclpy_raise(st, s);
  PyObject *dims = PyTuple_New(desc.rank), *strides = PyTuple_New(desc.rank ? desc.rank - 1 : 0);
  PyObject *box = PyTuple_New(desc.rank);
  for (uint32_t i = 0; dims && strides && box && i < desc.rank; i++) { /* TMA order */
    PyTuple_SetItem(dims, i, PyLong_FromUnsignedLongLong(desc.dims[i]));
    PyTuple_SetItem(box, i, PyLong_FromUnsignedLong(desc.box[i]));
    if (i + 1 < desc.rank) PyTuple_SetItem(strides, i, PyLong_FromUnsignedLongLong(desc.strides[i]));
  }
  PyObject *r = Py_BuildValue("{s:i,s:I,s:K,s:N,s:N,s:N,s:I,s:i,s:i}", "type", (int)desc.type,
                              "element_bytes", desc.element_bytes, "address",
                              (unsigned long long)desc.address, "dims", dims, "strides", strides,
                              "box", box, "box_bytes", desc.box_bytes, "swizzle", desc.swizzle,
                              "l2_promotion", desc.l2_promotion);
  if (!r || !desc.im2col.pixels) return r;
  uint32_t spatial = desc.rank - 2; /* im2col: rank 3 ... 5 */
  PyObject *lo = PyTuple_New(spatial), *up = PyTuple_New(spatial);
  for (uint32_t i = 0; lo && up && i < spatial; i++) {
    PyTuple_SetItem(lo, i, PyLong_FromLong(desc.im2col.lower[i]));
    PyTuple_SetItem(up, i, PyLong_FromLong(desc.im2col.upper[i]));
  }
  PyObject *m = lo && up ? Py_BuildValue("{s:I,s:I,s:N,s:N}", "pixels", desc.im2col.pixels,
                                         "channels", desc.im2col.channels, "lower", lo, "upper", up)
                         : (Py_XDECREF(lo), Py_XDECREF(up), NULL);
  if (!m || PyDict_SetItemString(r, "im2col", m) < 0) Py_CLEAR(r);
  Py_XDECREF(m);
  return r;
}

static PyObject *tm_get_tensor(PyObject *self, void *c) {
  (void)c;
  PyObject *t = ((gclpy_tensormap *)self)->tensor;
  return Py_NewRef(t ? t : Py_None);
}
static PyObject *tm_get_box(PyObject *self, void *c) {
  (void)c;
  PyObject *b = ((gclpy_tensormap *)self)->box;
  return Py_NewRef(b ? b : Py_None);
}
static PyObject *tm_get_store(PyObject *self, void *c) { (void)c; return PyBool_FromLong(((gclpy_tensormap *)self)->options.store); }

static PyObject *tensormap_repr(PyObject *self) {
  gclpy_tensormap *tm = (gclpy_tensormap *)self;
  if (tm->options.im2col.pixels)
    return PyUnicode_FromFormat("<gclaunch.TensorMap im2col=(%u, %u) lower=(%d, %d, %d) "
                                "upper=(%d, %d, %d) swizzle=%d>", tm->options.im2col.pixels,
                                tm->options.im2col.channels, tm->options.im2col.lower[0],
                                tm->options.im2col.lower[1], tm->options.im2col.lower[2],
                                tm->options.im2col.upper[0], tm->options.im2col.upper[1],
                                tm->options.im2col.upper[2], tm->options.swizzle);
  return PyUnicode_FromFormat("<gclaunch.TensorMap box=%R swizzle=%d store=%d>", tm->box,
                              tm->options.swizzle, tm->options.store);
}

static PyMethodDef tensormap_methods[] = {
  {"describe", tensormap_describe, METH_NOARGS,
   "describe($self, /)\n--\n\nChecks the map on the CPU (gcl_tensormap_check: every documented\n"
   "cuTensorMapEncodeTiled rule) and returns what would be encoded, in TMA order (innermost\n"
   "first): type, element_bytes, address (data + byte_offset), dims, strides (bytes), box,\n"
   "box_bytes (the mbarrier transaction count), swizzle, l2_promotion; an im2col map adds\n"
   "im2col: {pixels, channels, lower, upper}. Raises gclaunch.Error (TensorError naming the rule)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef tensormap_getset[] = {
  {"tensor", tm_get_tensor, NULL, "the __dlpack__ tensor the map describes", NULL},
  {"box", tm_get_box, NULL, "the box, in the tensor's dimension order (None: an im2col map)", NULL},
  {"store", tm_get_store, NULL, "True: a TMA store destination (checked for the 16-byte rule)", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tensormap_slots[] = {
  {Py_tp_new, tensormap_new}, {Py_tp_dealloc, tensormap_dealloc}, {Py_tp_repr, tensormap_repr},
  {Py_tp_traverse, tensormap_traverse}, {Py_tp_clear, tensormap_clear},
  {Py_tp_methods, tensormap_methods}, {Py_tp_getset, tensormap_getset},
  {Py_tp_doc, "TensorMap(tensor, box=None, *, swizzle=0, store=False, oob_nan=False, l2=0, "
              "element_strides=None, interleave=0, im2col=None, lower=None, upper=None)\n--\n\n"
              "A TMA descriptor to encode from any __dlpack__ tensor (CUDA memory; byte_offset\n"
              "honoured, 16-byte alignment checked) when assigned into args: args['maps[3]'] = tm,\n"
              "or a list into a tensormap[N]. box and element_strides are in the tensor's dimension\n"
              "order (like its shape): TensorMap(t, (64, 32)) for a [M, K] tensor loads 64 rows of 32\n"
              "elements. swizzle 0/32/64/128 and l2 0/64/128/256 in bytes; store=True for a TMA store\n"
              "destination; oob_nan fills out-of-bounds float elements with NaN. Every rule of the\n"
              "encode is checked by the library when the map is assigned (gclaunch.Error); ints out of\n"
              "their C range (box, element_strides < 0 or >= 2**32; swizzle, l2, interleave not one\n"
              "of their values) raise gclaunch.RangeError. Args keep the tensor alive while they\n"
              "hold a map encoded from it.\n"
              "im2col=(pixels, channels) instead of a box makes an im2col map (cuTensorMapEncodeIm2col)\n"
              "over a channels-last tensor ([N, W, C], [N, H, W, C] or [N, D, H, W, C]); lower and\n"
              "upper are the bounding box's corners, innermost spatial dimension first (W, H, D),\n"
              "as in the C options and run's tmap: spec."},
  {0, NULL}};
static PyType_Spec tensormap_spec = {"gclaunch.TensorMap", sizeof(gclpy_tensormap), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
                                     tensormap_slots};

int gclpy_tensormap_init_types(PyObject *m, gclpy_state *st) {
  st->tensormap_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &tensormap_spec, NULL);
  if (!st->tensormap_type) return -1;
  return PyModule_AddType(m, st->tensormap_type);
}
