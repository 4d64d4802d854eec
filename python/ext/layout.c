/* layout.c -- gclaunch.Layout, gclaunch.Param, gclaunch.Field, and the resolved-field cache.
 *
 * A Layout is gcl_layout_create's (or a kernel's, borrowed from the kernel with its module kept
 * alive). Every field a key names is resolved once by gcl_layout_field and kept: parameters in an
 * array at creation, paths in a dict on first use. Setting a cached field then costs one dict
 * look-up (str hashes are cached by Python) and the typed C setter. */
#include "gclpy.h"

#include <stdlib.h>
#include <string.h>

/* --- Param and Field: NamedTuples -----------------------------------------------------------
 * collections.namedtuple types of six fields, subclassed to carry the rest as attributes (the
 * instance __dict__): p._asdict(), p._fields, unpacking and indexing work as for any NamedTuple. */

static const char param_names[] = "index name offset size align kind";
static const char param_doc[] =
  "Param(index, name, offset, size, align, kind): one kernel parameter as the device lays it\n"
  "out (a NamedTuple; dtype, count, elem_kind, const and grid_constant are attributes).";
static const char field_names[] = "path param offset size align kind";
static const char field_doc[] =
  "Field(path, param, offset, size, align, kind): a place in the packed buffer -- a parameter,\n"
  "a struct member or an array element (a NamedTuple; dtype, count, elem_kind and const are\n"
  "attributes). offset is in the packed buffer, as gcl_field's.";

static PyObject *named_tuple(const char *name, const char *fields, const char *doc) {
  PyObject *collections = PyImport_ImportModule("collections");
  if (!collections) return NULL;
  PyObject *fn = PyObject_GetAttrString(collections, "namedtuple");
  Py_DECREF(collections);
  PyObject *args = fn ? Py_BuildValue("(ss)", name, fields) : NULL;
  PyObject *kw = args ? Py_BuildValue("{s:s}", "module", "gclaunch") : NULL;
  PyObject *base = kw ? PyObject_Call(fn, args, kw) : NULL;
  Py_XDECREF(fn), Py_XDECREF(args), Py_XDECREF(kw);
  if (!base) return NULL;
  PyObject *ns = Py_BuildValue("{s:s,s:s,s:s}", "__doc__", doc, "__module__", "gclaunch",
                               "__qualname__", name);
  PyObject *r = ns ? PyObject_CallFunction((PyObject *)&PyType_Type, "s(O)O", name, base, ns) : NULL;
  Py_XDECREF(ns);
  Py_DECREF(base);
  return r;
}

/* A NamedTuple of type with the six values (stolen) and the extra attributes of info. */
static PyObject *make_tuple(PyObject *type, PyObject *v[6], const gcl_param_info *i, int grid_constant) {
  PyObject *args = PyTuple_New(6);
  for (int k = 0; k < 6; k++) {
    if (args && v[k]) PyTuple_SetItem(args, k, v[k]);
    else Py_XDECREF(v[k]);
  }
  for (int k = 0; args && k < 6; k++)
    if (!v[k]) Py_CLEAR(args);
  if (!args) return NULL;
  PyObject *r = PyObject_CallObject(type, args);
  Py_DECREF(args);
  if (!r) return NULL;
  const char *names[5] = {"dtype", "count", "elem_kind", "const", "grid_constant"};
  PyObject *x[5] = {
    i->kind == GCL_PARAM_SCALAR || i->kind == GCL_PARAM_POINTER
        ? PyUnicode_FromString(gclpy_scalar_name(i->scalar)) : Py_NewRef(Py_None),
    PyLong_FromSize_t(i->count), PyUnicode_FromString(gclpy_kind_name(i->elem_kind)),
    PyBool_FromLong(i->is_const), grid_constant >= 0 ? PyBool_FromLong(grid_constant) : NULL};
  for (int k = 0; k < 5; k++) {
    if (k == 4 && grid_constant < 0) break;
    if (r && (!x[k] || PyObject_SetAttrString(r, names[k], x[k]) < 0)) Py_CLEAR(r);
    Py_XDECREF(x[k]);
  }
  return r;
}

static PyObject *param_info(gclpy_state *st, const gcl_layout *layout, size_t index) {
  size_t off = 0, size = 0, align = 0;
  gcl_field f;
  gcl_status s = gcl_layout_param(layout, index, &off, &size, &align);
  if (s == GCL_OK) s = gcl_layout_param_field(layout, index, &f);
  if (s != GCL_OK) return gclpy_raise(st, s);
  const gcl_param_info i = f.info;
  PyObject *v[6] = {PyLong_FromSize_t(index), i.name ? PyUnicode_FromString(i.name) : Py_NewRef(Py_None),
                    PyLong_FromSize_t(off), PyLong_FromSize_t(size), PyLong_FromSize_t(align),
                    PyUnicode_FromString(gclpy_kind_name(i.kind))};
  return make_tuple(st->param_type, v, &i, i.grid_constant);
}

PyObject *gclpy_field_info(gclpy_layout *lay, const gcl_field *f, const char *path) {
  gclpy_state *st = GCLPY_ST(lay);
  char buf[256], *heap = NULL;
  if (!path) {
    size_t needed = 0;
    gcl_status s = gcl_layout_field_path(lay->layout, f, buf, sizeof buf, &needed);
    if (s != GCL_OK && needed >= sizeof buf && (heap = malloc(needed + 1)))
      s = gcl_layout_field_path(lay->layout, f, heap, needed + 1, NULL);
    if (s != GCL_OK) return free(heap), gclpy_raise(st, s);
    path = heap ? heap : buf;
  }
  PyObject *v[6] = {PyUnicode_DecodeUTF8(path, (Py_ssize_t)strlen(path), "backslashreplace"),
                    PyLong_FromSize_t(f->param), PyLong_FromSize_t(f->offset),
                    PyLong_FromSize_t(f->size), PyLong_FromSize_t(f->align),
                    PyUnicode_FromString(gclpy_kind_name(f->info.kind))};
  free(heap);
  return make_tuple(st->field_type, v, &f->info, -1);
}

/* --- FieldRef: a resolved gcl_field (internal) ---------------------------------------------- */

static int fieldref_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(((gclpy_fieldref *)self)->path);
  return 0;
}

static int fieldref_clear(PyObject *self) {
  Py_CLEAR(((gclpy_fieldref *)self)->path);
  return 0;
}

static void fieldref_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  fieldref_clear(self);
  gclpy_free(self);
}

static gclpy_fieldref *fieldref_new(gclpy_state *st, const gcl_field *f, PyObject *path) {
  gclpy_fieldref *r = (gclpy_fieldref *)gclpy_alloc(st->fieldref_type);
  if (!r) return NULL;
  r->field = *f;
  r->conv = gclpy_conv_of(f);
  r->path = path ? Py_NewRef(path) : NULL;
  return r;
}

/* The conversion of a field: convert.c's table index (the enum is in gclpy.h). */
int gclpy_conv_of(const gcl_field *f) {
  const gcl_param_info *i = &f->info;
  switch (i->kind) {
  case GCL_PARAM_SCALAR:
    return i->scalar >= GCL_SCALAR_BOOL && i->scalar <= GCL_SCALAR_F64 ? (int)i->scalar - 1
                                                                          : GCLPY_CONV_BYTES;
  case GCL_PARAM_POINTER: return GCLPY_CONV_POINTER;
  case GCL_PARAM_TENSORMAP: return GCLPY_CONV_TENSORMAP;
  case GCL_PARAM_ARRAY:
    return i->elem_kind == GCL_PARAM_TENSORMAP ? GCLPY_CONV_TENSORMAPS
           : i->elem_kind == GCL_PARAM_SCALAR && i->scalar != GCL_SCALAR_VOID ? GCLPY_CONV_SCALARS
                                                                                : GCLPY_CONV_BYTES;
  case GCL_PARAM_BYTES:
    return f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8 ? GCLPY_CONV_RAW
                                                                           : GCLPY_CONV_BYTES;
  default: return GCLPY_CONV_BYTES;
  }
}

/* --- Layout ---------------------------------------------------------------------------------- */

static int cache_params(gclpy_state *st, gclpy_layout *lay) {
  lay->nparams = gcl_layout_count(lay->layout);
  lay->params = calloc(lay->nparams ? lay->nparams : 1, sizeof *lay->params);
  lay->paths = PyDict_New();
  if (!lay->params || !lay->paths) return PyErr_NoMemory(), -1;
  for (size_t i = 0; i < lay->nparams; i++) {
    gcl_field f;
    gcl_status s = gcl_layout_param_field(lay->layout, i, &f);
    if (s != GCL_OK) return gclpy_raise(st, s), -1;
    if (!(lay->params[i] = fieldref_new(st, &f, NULL))) return -1;
  }
  return 0;
}

struct layout_in { const char *signature; int sm; };
static const gclpy_arg layout_args[] = {
  GCLPY_ARG(struct layout_in, signature, gclpy_to_str),
  GCLPY_ARG(struct layout_in, sm, gclpy_to_int, 0, INT32_MAX),
};
static const gclpy_params layout_params_spec = {"Layout", layout_args, 2, 2, 2};

static PyObject *layout_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct layout_in in = {NULL, 0};
  if (gclpy_parse_tuple(st, &layout_params_spec, args, kwds, &in) < 0) return NULL;
  const char *text = in.signature;
  int sm = in.sm;
  gclpy_layout *lay = (gclpy_layout *)gclpy_alloc(st->layout_type);
  if (!lay) return NULL;
  gcl_status s = gcl_signature_parse(text, &lay->sig);
  if (s == GCL_OK) s = gcl_layout_create(lay->sig, sm, &lay->layout);
  if (s != GCL_OK) return Py_DECREF(lay), gclpy_raise(st, s);
  if (cache_params(st, lay) < 0) return Py_DECREF(lay), NULL;
  return (PyObject *)lay;
}

PyObject *gclpy_layout_wrap(gclpy_state *st, const gcl_layout *layout, PyObject *owner,
                            PyObject *context) {
  gclpy_layout *lay = (gclpy_layout *)gclpy_alloc(st->layout_type);
  if (!lay) return NULL;
  lay->layout = (gcl_layout *)layout;
  lay->borrowed = true;
  lay->owner = Py_NewRef(owner);
  lay->context = Py_NewRef(context);
  if (cache_params(st, lay) < 0) return Py_DECREF(lay), NULL;
  return (PyObject *)lay;
}

static int layout_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_layout *lay = (gclpy_layout *)self;
  Py_VISIT(Py_TYPE(self));
  for (size_t i = 0; lay->params && i < lay->nparams; i++) Py_VISIT(lay->params[i]);
  Py_VISIT(lay->paths);
  Py_VISIT(lay->owner);
  Py_VISIT(lay->context);
  return 0;
}

/* Only the path cache can close a cycle (FieldRefs hold strs); owner and context keep the
 * layout's memory and are dropped in dealloc. */
static int layout_clear(PyObject *self) {
  Py_CLEAR(((gclpy_layout *)self)->paths);
  return 0;
}

static void layout_dealloc(PyObject *self) {
  gclpy_layout *lay = (gclpy_layout *)self;
  PyObject_GC_UnTrack(self);
  for (size_t i = 0; lay->params && i < lay->nparams; i++) Py_XDECREF(lay->params[i]);
  free(lay->params);
  Py_CLEAR(lay->paths);
  if (!lay->borrowed) gcl_layout_destroy(lay->layout);
  gcl_signature_destroy(lay->sig);
  Py_CLEAR(lay->owner);
  Py_CLEAR(lay->context);
  gclpy_free(self);
}

#define GCLPY_PATH_CACHE_MAX 65536 /* paths kept per layout; the dict is emptied beyond it */

static gclpy_fieldref *lookup_path(gclpy_layout *lay, PyObject *key) {
  gclpy_state *st = GCLPY_ST(lay);
  PyObject *hit = lay->paths ? PyDict_GetItemWithError(lay->paths, key) : NULL;
  if (hit) return (gclpy_fieldref *)hit;
  if (PyErr_Occurred()) return NULL;
  const char *path = gclpy_str_arg(st, key, "field", "path");
  if (!path) return NULL;
  gcl_field f;
  gcl_status s = gcl_layout_field(lay->layout, path, &f);
  if (s != GCL_OK) return gclpy_raise(st, s), NULL;
  gclpy_fieldref *r = fieldref_new(st, &f, key);
  if (!r) return NULL;
  if (!lay->paths && !(lay->paths = PyDict_New())) return Py_DECREF(r), NULL;
  if (PyDict_Size(lay->paths) >= GCLPY_PATH_CACHE_MAX) PyDict_Clear(lay->paths);
  int rc = PyDict_SetItem(lay->paths, key, (PyObject *)r);
  Py_DECREF(r); /* the dict holds it */
  return rc < 0 ? NULL : r;
}

gclpy_fieldref *gclpy_layout_lookup(gclpy_layout *lay, PyObject *key) {
  if (PyUnicode_Check(key)) return lookup_path(lay, key);
  size_t i;
  int rc = gclpy_index_arg(GCLPY_ST(lay), key, lay->nparams, &i);
  if (rc == 0) return lay->params[i];
  if (rc == 1)
    gclpy_type_error("a field is named by an int (parameter index) or a str (path)", key);
  return NULL;
}

gclpy_fieldref *gclpy_layout_element0(gclpy_layout *lay, gclpy_fieldref *array) {
  gclpy_state *st = GCLPY_ST(lay);
  gcl_field f;
  gcl_status s = gcl_layout_element_field(lay->layout, &array->field, 0, &f);
  if (s != GCL_OK) return gclpy_raise(st, s), NULL;
  return fieldref_new(st, &f, array->path);
}

static PyObject *layout_field(PyObject *self, PyObject *key) {
  gclpy_layout *lay = (gclpy_layout *)self;
  gclpy_fieldref *r = gclpy_layout_lookup(lay, key);
  if (!r) return NULL;
  Py_INCREF(r);
  PyObject *info = gclpy_field_info(lay, &r->field, NULL);
  Py_DECREF(r);
  return info;
}

typedef struct leaves_ctx {
  gclpy_layout *lay;
  PyObject *list;
} leaves_ctx;

static int leaf_fn(const gcl_field *leaf, const char *path, void *user) {
  leaves_ctx *c = user;
  PyObject *f = gclpy_field_info(c->lay, leaf, path);
  int rc = f ? PyList_Append(c->list, f) : -1;
  Py_XDECREF(f);
  return rc < 0;
}

static PyObject *layout_leaves(PyObject *self, PyObject *unused) {
  (void)unused;
  leaves_ctx c = {(gclpy_layout *)self, PyList_New(0)};
  if (!c.list) return NULL;
  gcl_status s = gcl_layout_visit_leaves(c.lay->layout, leaf_fn, &c);
  if (PyErr_Occurred()) return Py_DECREF(c.list), NULL;
  if (s != GCL_OK) return Py_DECREF(c.list), gclpy_raise(GCLPY_ST(self), s);
  return c.list;
}

static PyObject *layout_params(PyObject *self, void *closure) {
  (void)closure;
  gclpy_layout *lay = (gclpy_layout *)self;
  PyObject *list = PyList_New((Py_ssize_t)lay->nparams);
  for (size_t i = 0; list && i < lay->nparams; i++) {
    PyObject *p = param_info(GCLPY_ST(self), lay->layout, i);
    if (!p) Py_CLEAR(list);
    else PyList_SetItem(list, (Py_ssize_t)i, p);
  }
  return list;
}

static PyObject *layout_size(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(gcl_layout_size(((gclpy_layout *)self)->layout));
}

static PyObject *layout_sm(PyObject *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(gcl_layout_sm(((gclpy_layout *)self)->layout));
}

static PyObject *layout_signature(PyObject *self, void *closure) {
  (void)closure;
  gclpy_layout *lay = (gclpy_layout *)self;
  if (!lay->sig) Py_RETURN_NONE;
  size_t needed = 0;
  gcl_signature_format(lay->sig, NULL, 0, &needed);
  char *buf = malloc(needed + 1);
  if (!buf) return PyErr_NoMemory();
  gcl_status s = gcl_signature_format(lay->sig, buf, needed + 1, NULL);
  PyObject *r = s == GCL_OK ? PyUnicode_DecodeUTF8(buf, (Py_ssize_t)strlen(buf), "backslashreplace")
                            : gclpy_raise(GCLPY_ST(self), s);
  free(buf);
  return r;
}

static Py_ssize_t layout_len(PyObject *self) { return (Py_ssize_t)((gclpy_layout *)self)->nparams; }

static PyObject *layout_repr(PyObject *self) {
  gclpy_layout *lay = (gclpy_layout *)self;
  return PyUnicode_FromFormat("<gclaunch.Layout sm_%d, %zu parameters, %zu bytes>",
                              gcl_layout_sm(lay->layout), lay->nparams,
                              gcl_layout_size(lay->layout));
}

static PyMethodDef layout_methods[] = {
  {"field", layout_field, METH_O,
   "field($self, path_or_index, /)\n--\n\n"
   "Resolves a path ('g.loads[3]', 'g.segs[2].n', 'g.2', 'maps[17]') or a parameter index\n"
   "(negative: from the end). Raises gclaunch.Error: GCL_ERROR_NOT_FOUND for an unknown name,\n"
   "GCL_ERROR_INVALID_ARGUMENT for a malformed path (the message quotes the path and the\n"
   "column), gclaunch.RangeError for an index out of range."},
  {"leaves", layout_leaves, METH_NOARGS,
   "leaves($self, /)\n--\n\nEvery leaf (scalar, pointer, tensormap, bytes) of every parameter, in\n"
   "buffer order, with its canonical path (a list of Field)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef layout_getset[] = {
  {"size", layout_size, NULL, "bytes of the packed buffer: max(offset + size)", NULL},
  {"params", layout_params, NULL, "list of Param, one per parameter, in order", NULL},
  {"sm", layout_sm, NULL, "the SM architecture the offsets are for (90 for sm_90)", NULL},
  {"signature", layout_signature, NULL,
   "the canonical signature text, or None for a kernel's layout looked up without one", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot layout_slots[] = {
  {Py_tp_new, layout_new}, {Py_tp_dealloc, layout_dealloc}, {Py_tp_traverse, layout_traverse},
  {Py_tp_clear, layout_clear}, {Py_tp_methods, layout_methods},
  {Py_tp_getset, layout_getset}, {Py_tp_repr, layout_repr}, {Py_sq_length, layout_len},
  {Py_mp_length, layout_len},
  {Py_tp_doc, "Layout(signature, sm)\n--\n\n"
              "The device-exact parameter layout of a signature on architecture sm (90 for sm_90):\n"
              "CPU only, no GPU or driver. Raises gclaunch.Error (GCL_ERROR_PARSE with the column,\n"
              "GCL_ERROR_LAYOUT_TOO_LARGE, GCL_ERROR_INVALID_ARGUMENT for an unknown sm).\n\n"
              "  lay = gclaunch.Layout('grid_constant tensormap[4] maps, const f32* src, u64 n', 90)\n"
              "  lay.size, lay.params, lay.field('maps[2]'), lay.leaves(), gclaunch.Args(lay)"},
  {0, NULL}};
static PyType_Spec layout_spec = {"gclaunch.Layout", sizeof(gclpy_layout), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC,
                                  layout_slots};

static PyType_Slot fieldref_slots[] = {
  {Py_tp_dealloc, fieldref_dealloc}, {Py_tp_traverse, fieldref_traverse},
  {Py_tp_clear, fieldref_clear}, {0, NULL}};
static PyType_Spec fieldref_spec = {"gclaunch._FieldRef", sizeof(gclpy_fieldref), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                        Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                    fieldref_slots};

int gclpy_layout_init_types(PyObject *m, gclpy_state *st) {
  st->layout_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &layout_spec, NULL);
  st->fieldref_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &fieldref_spec, NULL);
  st->param_type = named_tuple("Param", param_names, param_doc);
  st->field_type = named_tuple("Field", field_names, field_doc);
  if (!st->layout_type || !st->fieldref_type || !st->param_type || !st->field_type) return -1;
  if (PyModule_AddType(m, st->layout_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Param", st->param_type) < 0) return -1;
  return PyModule_AddObjectRef(m, "Field", st->field_type);
}
