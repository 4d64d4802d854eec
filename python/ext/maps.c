/* maps.c -- L6: tensor maps from Python, one method set for every owner (gcl_tensormap_slots):
 * Args (maps at a path: a tensormap leaf, or a tensormap[N] from its element 0) and
 * gclaunch.TensorMapTable (maps at an entry index of a descriptor table in device memory) share
 * set_tensormaps, repoint, refresh (an alias of set_tensormaps, kept for 0.3 programs) and
 * set_peer_tensormaps, with the same arguments, conversions and refusals: each method turns its
 * first argument into a gclpy_maps_at and calls tensormap.c, which calls the library's one
 * surface (gcl_tensormaps_set / gcl_tensormaps_repoint). The methods are listed once
 * (GCLPY_MAP_METHODS in gclpy.h) and both types' method tables include that list.
 *
 * TensorMapTable keeps its Context alive (the C table borrows it) and the objects its maps
 * point into, by entry; close() frees the device memory (a kernel still reading it must have
 * finished). Graphs capture it with Stream.capture_table and take new maps with
 * Graph.set_table (graph.c). */
#include "gclpy.h"

#include <stdio.h>

/* --- where: a path of Args or an entry of a table ------------------------------------------ */

/* The tensor-map field a method names in Args: a tensormap leaf, or a tensormap[N] (its element
 * 0). *first: a new reference. */
static int args_where(gclpy_args *a, PyObject *key, const char *fn, gclpy_fieldref **first) {
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, key);
  if (!f) return -1;
  if (f->conv == GCLPY_CONV_TENSORMAPS)
    return (*first = gclpy_layout_element0(a->layout, f)) ? 0 : -1;
  if (f->conv == GCLPY_CONV_TENSORMAP) return *first = (gclpy_fieldref *)Py_NewRef((PyObject *)f), 0;
  char label[400];
  gclpy_field_label(a, f, label, sizeof label);
  gclpy_raise_msg(GCLPY_ST(a), GCL_ERROR_TYPE_MISMATCH, "%s: %s is a %s, not a tensormap or "
                  "tensormap[N]", fn, label, f->field.info.kind == GCL_PARAM_SCALAR
                  ? gclpy_scalar_name(f->field.info.scalar) : gclpy_kind_name(f->field.info.kind));
  return -1;
}

/* self's slots from key into *at (Args: a path or index; a table: an entry index). Release with
 * where_done. 0, or -1 with an exception set. */
static int where_of(PyObject *self, PyObject *key, const char *fn, gclpy_maps_at *at) {
  gclpy_state *st = GCLPY_ST(self);
  *at = (gclpy_maps_at){0};
  if (PyObject_TypeCheck(self, st->args_type)) {
    at->args = (gclpy_args *)self;
    return args_where(at->args, key, fn, &at->first);
  }
  static const gclpy_arg index_arg = {"index", 0, gclpy_to_size, 0, INT64_MAX, 0};
  size_t index = 0;
  if (gclpy_parse_one(st, fn, &index_arg, key, &index) < 0) return -1;
  at->table = (gclpy_tmtable *)self, at->index = index;
  return 0;
}

static void where_done(gclpy_maps_at *at) { Py_XDECREF((PyObject *)at->first); }

/* --- the shared method set ------------------------------------------------------------------ */

struct maps_in { PyObject *where, *what; };
static const gclpy_arg set_args[] = {
  GCLPY_ARG(struct maps_in, where, gclpy_to_object),
  GCLPY_ARGN("tensormaps", struct maps_in, what, gclpy_to_object),
};
static const gclpy_params set_params = {"set_tensormaps", set_args, 2, 2, 2};
static const gclpy_params refresh_params = {"refresh", set_args, 2, 2, 2};
static const gclpy_arg repoint_args[] = {
  GCLPY_ARG(struct maps_in, where, gclpy_to_object),
  GCLPY_ARGN("addresses", struct maps_in, what, gclpy_to_object),
};
static const gclpy_params repoint_params = {"repoint", repoint_args, 2, 2, 2};
struct peers_in { PyObject *where, *map; gclpy_pes pes; bool refresh; };
static const gclpy_arg peers_args[] = {
  GCLPY_ARG(struct peers_in, where, gclpy_to_object),
  GCLPY_ARG(struct peers_in, map, gclpy_to_object),
  GCLPY_ARG(struct peers_in, pes, gclpy_to_pes), /* None (and not given): every PE */
  GCLPY_ARG(struct peers_in, refresh, gclpy_to_bool), /* accepted, ignored (0.3's REFRESH) */
};
static const gclpy_params peers_params = {"set_peer_tensormaps", peers_args, 4, 3, 2};

static PyObject *done(int rc) {
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *set_with(const gclpy_params *p, PyObject *self, PyObject *const *argv,
                          Py_ssize_t nargs, PyObject *kwnames) {
  struct maps_in in = {NULL, NULL};
  gclpy_maps_at at;
  if (gclpy_parse(GCLPY_ST(self), p, NULL, argv, nargs, kwnames, &in) < 0 ||
      where_of(self, in.where, p->fn, &at) < 0)
    return NULL;
  int rc = gclpy_tensormaps_set(&at, in.what); /* at.first held: __dlpack__ runs Python code */
  where_done(&at);
  return done(rc);
}

PyObject *gclpy_maps_set(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                         PyObject *kwnames) {
  return set_with(&set_params, self, argv, nargs, kwnames);
}

PyObject *gclpy_maps_refresh(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames) {
  return set_with(&refresh_params, self, argv, nargs, kwnames);
}

PyObject *gclpy_maps_repoint(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames) {
  struct maps_in in = {NULL, NULL};
  gclpy_maps_at at;
  if (gclpy_parse(GCLPY_ST(self), &repoint_params, NULL, argv, nargs, kwnames, &in) < 0 ||
      where_of(self, in.where, "repoint", &at) < 0)
    return NULL;
  int rc = gclpy_tensormaps_repoint(&at, in.what);
  where_done(&at);
  return done(rc);
}

PyObject *gclpy_maps_set_peers(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  struct peers_in in = {NULL, NULL, {NULL, 0}, false};
  gclpy_maps_at at;
  int given = gclpy_parse(st, &peers_params, NULL, argv, nargs, kwnames, &in);
  if (given >= 0 && !(given & 1 << 2)) { /* pes not given: every PE, as None */
    if (gclpy_parse_one(st, "set_peer_tensormaps", &peers_args[2], Py_None, &in.pes) < 0)
      return gclpy_release(st, &peers_params, given, &in), NULL;
    given |= 1 << 2;
  }
  if (given < 0) return NULL;
  int rc = where_of(self, in.where, "set_peer_tensormaps", &at);
  if (rc == 0) {
    rc = gclpy_tensormaps_set_peers(&at, in.map, in.pes.pes, in.pes.n);
    where_done(&at);
  }
  gclpy_release(st, &peers_params, given, &in);
  return done(rc);
}

/* --- TensorMapTable -------------------------------------------------------------------------- */

struct table_in { size_t count; gclpy_context *context; };
static const gclpy_arg table_args[] = {
  GCLPY_ARG(struct table_in, count, gclpy_to_size, 1, INT64_MAX),
  GCLPY_ARG(struct table_in, context, gclpy_to_context),
};
static const gclpy_params table_params = {"TensorMapTable", table_args, 2, 2, 1};

static PyObject *table_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct table_in in = {0, NULL};
  if (gclpy_parse_tuple(st, &table_params, args, kwds, &in) < 0) return NULL;
  gclpy_context *c = in.context ? in.context : gclpy_default_context(st, 0);
  if (!c) return NULL;
  size_t k = in.count;
  gclpy_tmtable *t = (gclpy_tmtable *)gclpy_alloc(st->tmtable_type);
  if (!t) return NULL;
  t->context = Py_NewRef((PyObject *)c);
  gcl_status s = gcl_tensormap_table_create(c->ctx, (size_t)k, &t->table);
  if (s != GCL_OK) return Py_DECREF(t), gclpy_raise(st, s);
  return (PyObject *)t;
}

static int table_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_tmtable *t = (gclpy_tmtable *)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(t->keep);
  return 0;
}

static int table_clear(PyObject *self) {
  Py_CLEAR(((gclpy_tmtable *)self)->keep);
  return 0;
}

static void table_dealloc(PyObject *self) {
  gclpy_tmtable *t = (gclpy_tmtable *)self;
  PyObject_GC_UnTrack(self);
  gcl_tensormap_table_destroy(t->table);
  t->table = NULL;
  Py_CLEAR(t->keep);
  Py_CLEAR(t->context); /* after the table: it borrowed the context */
  gclpy_free(self);
}

static gcl_tensormap_table *open_table(PyObject *self, const char *what) {
  gclpy_tmtable *t = (gclpy_tmtable *)self;
  if (!t->table)
    gclpy_raise_msg(GCLPY_ST(self), GCL_ERROR_INVALID_ARGUMENT, "TensorMapTable.%s: the table "
                    "was closed", what);
  return t->table;
}

static PyObject *table_close(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_tmtable *t = (gclpy_tmtable *)self;
  gcl_tensormap_table_destroy(t->table);
  t->table = NULL;
  Py_CLEAR(t->keep);
  Py_RETURN_NONE;
}

static PyObject *table_upload(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  struct upload_in { gclpy_streamarg stream; };
  static const gclpy_arg upload_args[] = {
    GCLPY_ARG(struct upload_in, stream, gclpy_to_stream, 0, 0, GCLPY_NONE)};
  static const gclpy_params p = {"upload", upload_args, 1, 1, 0};
  gclpy_state *st = GCLPY_ST(self);
  gcl_tensormap_table *table = open_table(self, "upload");
  struct upload_in in = {.stream = {.ctx = (gclpy_context *)((gclpy_tmtable *)self)->context}};
  int given = table ? gclpy_parse(st, &p, NULL, argv, nargs, kwnames, &in) : -1;
  if (given < 0) return NULL;
  gcl_status rc = gcl_tensormap_table_upload(table, in.stream.stream);
  gclpy_release(st, &p, given, &in);
  return rc == GCL_OK ? Py_NewRef(Py_None) : gclpy_raise(st, rc);
}

static PyObject *table_map(PyObject *self, PyObject *arg) {
  gcl_tensormap_table *table = open_table(self, "map");
  if (!table) return NULL;
  const gclpy_arg index_arg = {"index", 0, gclpy_to_size, 0, gcl_tensormap_table_count(table) - 1, 0};
  size_t i = 0;
  if (gclpy_parse_one(GCLPY_ST(self), "map", &index_arg, arg, &i) < 0) return NULL;
  return PyBytes_FromStringAndSize(gcl_tensormap_table_map(table, (size_t)i), 128);
}

static PyObject *table_get(PyObject *self, void *closure) {
  gcl_tensormap_table *table = open_table(self, "address");
  if (!table) return NULL;
  switch ((int)(intptr_t)closure) {
  case 0: return PyLong_FromUnsignedLongLong(gcl_tensormap_table_address(table));
  case 1: return PyLong_FromSize_t(gcl_tensormap_table_dirty(table));
  default: return Py_NewRef(((gclpy_tmtable *)self)->context);
  }
}

static Py_ssize_t table_len(PyObject *self) {
  gcl_tensormap_table *table = open_table(self, "__len__");
  return table ? (Py_ssize_t)gcl_tensormap_table_count(table) : -1;
}

static PyObject *table_repr(PyObject *self) {
  gclpy_tmtable *t = (gclpy_tmtable *)self;
  if (!t->table) return PyUnicode_FromString("<gclaunch.TensorMapTable closed>");
  return PyUnicode_FromFormat("<gclaunch.TensorMapTable %zu maps at 0x%llx, %zu dirty>",
                              gcl_tensormap_table_count(t->table),
                              (unsigned long long)gcl_tensormap_table_address(t->table),
                              gcl_tensormap_table_dirty(t->table));
}

static PyMethodDef table_methods[] = {
  GCLPY_MAP_METHODS("index: the first entry (an int)"),
  {"upload", GCLPY_METH(table_upload), GCLPY_FASTKW,
   "upload($self, /, stream=None)\n--\n\nCopies the maps changed since the last upload to the\n"
   "device on stream (None: the context's default stream; gcl_tensormap_table_upload). A kernel\n"
   "launched on that stream afterwards sees them; the maps may be set again at once."},
  {"map", table_map, METH_O,
   "map($self, index, /)\n--\n\nThe host copy of map index: its 128 bytes."},
  {"close", table_close, METH_NOARGS,
   "close($self, /)\n--\n\nFrees the table's device memory now (a kernel still reading it must\n"
   "have finished). Later calls raise gclaunch.Error."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef table_getset[] = {
  {"address", table_get, NULL, "the device address of map 0 (128-byte aligned): the kernel's "
   "pointer argument; map i is at address + 128 * i", (void *)0},
  {"dirty", table_get, NULL, "how many maps changed since the last upload", (void *)1},
  {"context", table_get, NULL, "the Context the table lives in", (void *)2},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot table_slots[] = {
  {Py_tp_new, table_new}, {Py_tp_dealloc, table_dealloc}, {Py_tp_methods, table_methods},
  {Py_tp_traverse, table_traverse}, {Py_tp_clear, table_clear}, {Py_tp_getset, table_getset},
  {Py_tp_repr, table_repr}, {Py_sq_length, table_len}, {Py_mp_length, table_len},
  {Py_tp_doc, "TensorMapTable(count, context=None)\n--\n\n"
              "count tensor maps in device memory (gcl_tensormap_table), for kernels with more\n"
              "descriptors than a parameter holds: the kernel takes table.address as a pointer and\n"
              "fences each map before its first use (<gclaunch/tmap_table.cuh>). The same\n"
              "methods as Args write its maps, by entry index instead of a path:\n"
              "  table.set_tensormaps(0, [TensorMap(x, (64, 64)), ...])\n"
              "  table.repoint(0, addresses)\n"
              "  table.upload(stream)\n"
              "Graphs: stream.capture_table(table) during a capture; graph.set_table(table) after\n"
              "re-pointing. context: a Context (None: device 0's default one)."},
  {0, NULL}};
static PyType_Spec table_spec = {"gclaunch.TensorMapTable", sizeof(gclpy_tmtable), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
                                 table_slots};

int gclpy_maps_init_types(PyObject *m, gclpy_state *st) {
  st->tmtable_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &table_spec, NULL);
  if (!st->tmtable_type) return -1;
  return PyModule_AddType(m, st->tmtable_type);
}
