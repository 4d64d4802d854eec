/* args.c -- L6: gclaunch.Args, a gcl_args with setting by path or index (args[key] = value).
 *
 * Keep-alive: an Args holds (in `keep`, leaf offset -> object) every object a tensor-map or
 * pointer leaf points into -- the TensorMap's tensor, the pointer's producer -- until that leaf is
 * overwritten or the args go, and a clone holds the same; a launch never reads freed memory. */
#include "gclpy.h"

gclpy_args *gclpy_args_new(gclpy_state *st, gclpy_layout *lay) {
  gclpy_args *a = (gclpy_args *)gclpy_alloc(st->args_type);
  if (!a) return NULL;
  a->layout = (gclpy_layout *)Py_NewRef((PyObject *)lay);
  gcl_status s = gcl_args_create(lay->layout, &a->args);
  if (s == GCL_OK && lay->context) /* a kernel's args: tensors are checked against its device */
    s = gcl_args_restrict_device(a->args, ((gclpy_context *)lay->context)->device);
  if (s != GCL_OK) return Py_DECREF(a), (gclpy_args *)gclpy_raise(st, s);
  return a;
}

struct args_in { PyObject *layout; };
static const gclpy_arg args_args[] = {GCLPY_ARG(struct args_in, layout, gclpy_to_object)};
static const gclpy_params args_params = {"Args", args_args, 1, 1, 1};

static PyObject *args_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct args_in in = {NULL};
  if (gclpy_parse_tuple(st, &args_params, args, kwds, &in) < 0) return NULL;
  PyObject *lay = in.layout;
  if (!PyObject_TypeCheck(lay, st->layout_type))
    return gclpy_type_error("Args: layout must be a gclaunch.Layout", lay);
  return (PyObject *)gclpy_args_new(st, (gclpy_layout *)lay);
}

static int args_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(((gclpy_args *)self)->layout);
  Py_VISIT(((gclpy_args *)self)->keep);
  return 0;
}

/* The kept tensors may refer back to the args (a cycle); the layout is kept to the end: the
 * gcl_args points into it. */
static int args_clear(PyObject *self) {
  Py_CLEAR(((gclpy_args *)self)->keep);
  return 0;
}

static void args_dealloc(PyObject *self) {
  gclpy_args *a = (gclpy_args *)self;
  PyObject_GC_UnTrack(self);
  gcl_args_destroy(a->args); /* runs the deleters of the tensors it took (the GIL is held) */
  Py_CLEAR(a->keep);         /* after: the tensors stay alive until the args stop pointing */
  Py_CLEAR(a->layout);
  gclpy_free(self);
}

static int args_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
  gclpy_args *a = (gclpy_args *)self;
  if (!value) return PyErr_SetString(PyExc_TypeError, "Args fields cannot be deleted"), -1;
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, key);
  if (!f) return -1;
  Py_INCREF(f); /* the conversion may run Python code (__dlpack__) that empties the path cache */
  int rc = gclpy_convert_set(a, f, value);
  Py_DECREF(f);
  return rc;
}

static PyObject *args_subscript(PyObject *self, PyObject *key) {
  gclpy_args *a = (gclpy_args *)self;
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, key);
  if (!f) return NULL;
  Py_INCREF(f);
  PyObject *r = gclpy_convert_get(a, f);
  Py_DECREF(f);
  return r;
}

static PyObject *args_is_set(PyObject *self, PyObject *key) {
  gclpy_args *a = (gclpy_args *)self;
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, key);
  if (!f) return NULL;
  return PyBool_FromLong(gcl_args_field_is_set(a->args, &f->field));
}

static PyObject *args_buffer(PyObject *self, PyObject *unused) {
  (void)unused;
  const void *data;
  size_t size;
  gcl_status s = gcl_args_buffer(((gclpy_args *)self)->args, &data, &size);
  if (s != GCL_OK) return gclpy_raise(GCLPY_ST(self), s);
  return PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
}

/* The tensor-map field a refresh or repoint names: a tensormap leaf or a tensormap[N]. */
static gclpy_fieldref *tensormap_field(gclpy_args *a, PyObject *key, const char *fn) {
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, key);
  if (!f || f->conv == GCLPY_CONV_TENSORMAP || f->conv == GCLPY_CONV_TENSORMAPS) return f;
  char label[400];
  gclpy_field_label(a, f, label, sizeof label);
  return gclpy_raise_msg(GCLPY_ST(a), GCL_ERROR_TYPE_MISMATCH, "%s: %s is a %s, not a tensormap or "
                         "tensormap[N]", fn, label, f->field.info.kind == GCL_PARAM_SCALAR
                         ? gclpy_scalar_name(f->field.info.scalar) : gclpy_kind_name(f->field.info.kind)),
         NULL;
}

/* path and what goes there (the maps' own conversions are tensormap.c's). */
struct maps_in { PyObject *path, *what; };
static const gclpy_arg refresh_args[] = {
  GCLPY_ARGN("path", struct maps_in, path, gclpy_to_object),
  GCLPY_ARGN("tensormaps", struct maps_in, what, gclpy_to_object),
};
static const gclpy_params refresh_params = {"refresh", refresh_args, 2, 2, 2};
static const gclpy_arg repoint_args[] = {
  GCLPY_ARGN("path", struct maps_in, path, gclpy_to_object),
  GCLPY_ARGN("addresses", struct maps_in, what, gclpy_to_object),
};
static const gclpy_params repoint_params = {"repoint", repoint_args, 2, 2, 2};

static PyObject *args_refresh(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_args *a = (gclpy_args *)self;
  struct maps_in in = {NULL, NULL};
  if (gclpy_parse(GCLPY_ST(self), &refresh_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  gclpy_fieldref *f = tensormap_field(a, in.path, "refresh"), *first = f;
  if (!f) return NULL;
  if (f->conv == GCLPY_CONV_TENSORMAPS && !(first = gclpy_layout_element0(a->layout, f))) return NULL;
  if (first == f) Py_INCREF(first); /* held: the maps' __dlpack__ calls run Python code */
  int rc = gclpy_tensormaps_set(a, first, in.what, true);
  Py_DECREF(first);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *args_repoint(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  gclpy_args *a = (gclpy_args *)self;
  struct maps_in in = {NULL, NULL};
  if (gclpy_parse(GCLPY_ST(self), &repoint_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  gclpy_fieldref *f = tensormap_field(a, in.path, "repoint"), *first = f;
  if (!f) return NULL;
  if (f->conv == GCLPY_CONV_TENSORMAPS && !(first = gclpy_layout_element0(a->layout, f))) return NULL;
  if (first == f) Py_INCREF(first); /* held: the maps' __dlpack__ calls run Python code */
  int rc = gclpy_tensormaps_repoint(a, first, in.what);
  Py_DECREF(first);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

struct peers_in { PyObject *path, *map; gclpy_pes pes; bool refresh; };
static const gclpy_arg peers_args[] = {
  GCLPY_ARG(struct peers_in, path, gclpy_to_object),
  GCLPY_ARG(struct peers_in, map, gclpy_to_object),
  GCLPY_ARG(struct peers_in, pes, gclpy_to_pes), /* None (and not given): every PE */
  GCLPY_ARG(struct peers_in, refresh, gclpy_to_bool),
};
static const gclpy_params peers_params = {"set_peer_tensormaps", peers_args, 4, 3, 2};

static PyObject *args_set_peer_tensormaps(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                          PyObject *kwnames) {
  gclpy_args *a = (gclpy_args *)self;
  struct peers_in in = {NULL, NULL, {NULL, 0}, false};
  gclpy_state *st = GCLPY_ST(self);
  int given = gclpy_parse(st, &peers_params, NULL, argv, nargs, kwnames, &in);
  if (given >= 0 && !(given & 1 << 2)) { /* pes not given: every PE, as None */
    if (gclpy_parse_one(st, "set_peer_tensormaps", &peers_args[2], Py_None, &in.pes) < 0)
      return gclpy_release(st, &peers_params, given, &in), NULL;
    given |= 1 << 2;
  }
  if (given < 0) return NULL;
  gclpy_fieldref *f = tensormap_field(a, in.path, "set_peer_tensormaps"), *first = f;
  if (f && f->conv == GCLPY_CONV_TENSORMAPS) first = gclpy_layout_element0(a->layout, f);
  else if (f) Py_INCREF(first); /* held: the map's __dlpack__ call runs Python code */
  int rc = first ? gclpy_tensormaps_set_peers(a, first, in.map, in.pes.pes, in.pes.n, in.refresh) : -1;
  gclpy_release(st, &peers_params, given, &in);
  Py_XDECREF(first);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *args_clone(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_args *a = (gclpy_args *)self;
  gclpy_state *st = GCLPY_ST(self);
  gclpy_args *c = (gclpy_args *)gclpy_alloc(st->args_type);
  if (!c) return NULL;
  c->layout = (gclpy_layout *)Py_NewRef((PyObject *)a->layout);
  /* the copy keeps alive what the original keeps (it points at the same tensors) */
  if (a->keep && !(c->keep = PyDict_Copy(a->keep))) return Py_DECREF(c), NULL;
  gcl_status s = gcl_args_clone(a->args, &c->args);
  if (s != GCL_OK) return Py_DECREF(c), gclpy_raise(st, s);
  return (PyObject *)c;
}

static PyObject *args_get_layout(PyObject *self, void *closure) {
  (void)closure;
  return Py_NewRef((PyObject *)((gclpy_args *)self)->layout);
}

static PyObject *args_repr(PyObject *self) {
  gclpy_args *a = (gclpy_args *)self;
  size_t set = 0;
  for (size_t i = 0; i < a->layout->nparams; i++) set += gcl_args_is_set(a->args, i);
  return PyUnicode_FromFormat("<gclaunch.Args %zu of %zu parameters set, %zu bytes>", set,
                              a->layout->nparams, gcl_layout_size(a->layout->layout));
}

static PyMethodDef args_methods[] = {
  {"is_set", args_is_set, METH_O,
   "is_set($self, path_or_index, /)\n--\n\nTrue when every leaf byte of the field was set."},
  {"buffer", args_buffer, METH_NOARGS,
   "buffer($self, /)\n--\n\nThe packed parameter buffer, exactly as the device reads it (layout.size\n"
   "bytes). Raises gclaunch.Error GCL_ERROR_UNSET_ARGUMENT naming the first unset leaf by path."},
  {"refresh", GCLPY_METH(args_refresh), METH_FASTCALL | METH_KEYWORDS,
   "refresh($self, /, path, tensormaps)\n--\n\nSets tensor maps like args[path] = tensormaps, but a map whose\n"
   "description differs from the one already there only in its address is re-pointed\n"
   "(cuTensorMapReplaceAddress) instead of re-encoded: gcl_args_set_tensormaps with\n"
   "GCL_TENSORMAP_REFRESH. path: a tensormap (one TensorMap or a list from that element on) or a\n"
   "tensormap[N] (a list of N). All or nothing; gclaunch.Error GCL_ERROR_TYPE_MISMATCH for a\n"
   "field that is no tensor map."},
  {"repoint", GCLPY_METH(args_repoint), METH_FASTCALL | METH_KEYWORDS,
   "repoint($self, /, path, addresses)\n--\n\nRe-points maps gclaunch encoded earlier to new addresses, keeping\n"
   "the rest of their description (gcl_args_repoint_tensormaps): the cheapest relaunch on new\n"
   "buffers of the same shapes. addresses: one or a list of ints (data + byte_offset) or\n"
   "__dlpack__ tensors (their data + byte_offset; nothing else of them is checked; a tensor is\n"
   "kept alive by the args, an int address is yours to keep). All or nothing; GCL_ERROR_TYPE_MISMATCH\n"
   "for a field that is no tensor map."},
  {"set_peer_tensormaps", GCLPY_METH(args_set_peer_tensormaps), METH_FASTCALL | METH_KEYWORDS,
   "set_peer_tensormaps($self, /, path, map, pes=None, refresh=False)\n--\n\nPeer tensor maps\n"
   "(gcl_args_set_peer_tensormaps): map, a TensorMap over this PE's copy of a symmetric buffer\n"
   "(a symmetric Buffer or a view of it, or a torch tensor over one), encoded once per PE of pes\n"
   "over that PE's copy (same shape, strides, dtype, box and options) into consecutive maps from\n"
   "path (a tensormap, or a tensormap[N] from its element 0), so the kernel picks a peer by\n"
   "run-time index. pes: a list of PE ranks, None for every PE in rank order. Every peer is\n"
   "resolved before any map is encoded: gclaunch.Error GCL_ERROR_PEER_UNREACHABLE naming the PE\n"
   "and its index, nothing changed. refresh: GCL_TENSORMAP_REFRESH. The maps are ordinary maps\n"
   "afterwards: repoint(path, [buf.peer_address(p) for p in pes]) re-points them."},
  {"clone", args_clone, METH_NOARGS,
   "clone($self, /)\n--\n\nA copy (gcl_args_clone): same bytes and set state. The copy keeps\n"
   "alive every tensor the original points at (the deleters of tensors the original took still run\n"
   "once, when the original lets them go)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef args_getset[] = {
  {"layout", args_get_layout, NULL, "the Layout these args are packed for", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot args_slots[] = {
  {Py_tp_new, args_new}, {Py_tp_dealloc, args_dealloc}, {Py_tp_methods, args_methods},
  {Py_tp_traverse, args_traverse}, {Py_tp_clear, args_clear},
  {Py_tp_getset, args_getset}, {Py_tp_repr, args_repr},
  {Py_mp_ass_subscript, args_ass_subscript}, {Py_mp_subscript, args_subscript},
  {Py_tp_doc, "Args(layout)\n--\n\n"
              "A parameter buffer for layout, every parameter unset (or kernel.args()).\n"
              "  args[path_or_index] = value\n"
              "sets a parameter (by index) or any field (by path: 'g.loads[3]', 'g.segs[2].n'):\n"
              "  int/float/bool into scalars (type and range checked: TypeError, gclaunch.RangeError)\n"
              "  an int address or any __dlpack__ object into a pointer (the tensor is owned by the\n"
              "    args until overwritten or the args go; checked for device, dtype, alignment,\n"
              "    read-only; byte_offset honoured)\n"
              "  bytes-like of the field's exact size into anything\n"
              "  a TensorMap into a tensormap; a list of TensorMaps into tensormap[N] (a parameter\n"
              "    or a struct's member), encoded in the kernel's context\n"
              "  a list of N numbers into an array of N scalars (all checked before any is set)\n"
              "A refused value raises gclaunch.Error with the library's message and changes nothing.\n"
              "  args[path_or_index]\n"
              "reads a field back as the device will see it: scalars as int/float/bool, pointers as\n"
              "int addresses, arrays of scalars as lists, a tensormap as its 128 bytes, a\n"
              "tensormap[N] as a list of them, anything else (structs, untyped parameters) as bytes;\n"
              "gclaunch.Error GCL_ERROR_UNSET_ARGUMENT while a byte of it is unset."},
  {0, NULL}};
static PyType_Spec args_spec = {"gclaunch.Args", sizeof(gclpy_args), 0,
                                Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
                                args_slots};

int gclpy_args_init_types(PyObject *m, gclpy_state *st) {
  st->args_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &args_spec, NULL);
  if (!st->args_type) return -1;
  return PyModule_AddType(m, st->args_type);
}
