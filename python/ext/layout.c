/* layout.c -- gclaunch.Layout, gclaunch.Param, gclaunch.Field, and the resolved-field cache.
 *
 * A Layout is gcl_layout_create's (or a kernel's, borrowed from the kernel with its module kept
 * alive). Every field a key names is resolved once by gcl_layout_field and kept: parameters in an
 * array at creation, paths in a dict on first use. Setting a cached field then costs one dict
 * look-up (str hashes are cached by Python) and the typed C setter. */
#include "gclpy.h"

#include <stdlib.h>
#include <string.h>

#define GCLPY_PATH_CACHE_MAX 65536 /* paths kept per layout; the dict is emptied beyond it */

/* --- Param and Field: struct sequences (named tuples) --------------------------------------- */

static PyStructSequence_Field param_fields[] = {
  {"index", "parameter index"}, {"name", "parameter name, or None"},
  {"offset", "device offset of the parameter in the packed buffer"}, {"size", "bytes by value"},
  {"align", "alignment by value"},
  {"kind", "'scalar', 'pointer', 'tensormap', 'bytes', 'struct' or 'array'"},
  {"dtype", "scalar type ('u32'), a pointer's element type ('void' for ptr), else None"},
  {"count", "array element count (0: not an array)"},
  {"elem_kind", "an array's element kind, else == kind"},
  {"const", "pointer to const"}, {"grid_constant", "marked grid_constant"}, {NULL, NULL}};
static PyStructSequence_Desc param_desc = {
  "gclaunch.Param",
  "Param(index, name, offset, size, align, kind): one kernel parameter as the device lays it\n"
  "out (a named tuple; dtype, count, elem_kind, const and grid_constant are attributes).",
  param_fields, 6};

static PyStructSequence_Field field_fields[] = {
  {"path", "the field's canonical path ('g.loads[3]')"}, {"param", "the parameter it lies in"},
  {"offset", "byte offset in the packed buffer (the parameter's offset + the field's)"},
  {"size", "bytes"}, {"align", "alignment"},
  {"kind", "'scalar', 'pointer', 'tensormap', 'bytes', 'struct' or 'array'"},
  {"dtype", "scalar type ('u32'), a pointer's element type ('void' for ptr), else None"},
  {"count", "array element count (0: not an array)"},
  {"elem_kind", "an array's element kind, else == kind"}, {"const", "pointer to const"},
  {NULL, NULL}};
static PyStructSequence_Desc field_desc = {
  "gclaunch.Field",
  "Field(path, param, offset, size, align, kind): a place in the packed buffer -- a parameter,\n"
  "a struct member or an array element (a named tuple; dtype, count, elem_kind and const are\n"
  "attributes). offset is in the packed buffer, as gcl_field's.",
  field_fields, 6};

static PyObject *dtype_of(const gcl_param_info *i) {
  if (i->kind == GCL_PARAM_SCALAR || i->kind == GCL_PARAM_POINTER)
    return PyUnicode_FromString(gclpy_scalar_name(i->scalar));
  return Py_NewRef(Py_None);
}

/* Fills struct sequence slots from `first` on with kind, dtype, count, elem_kind, const. */
static int set_info(PyObject *seq, Py_ssize_t first, const gcl_param_info *i) {
  PyObject *v[5] = {PyUnicode_FromString(gclpy_kind_name(i->kind)), dtype_of(i),
                    PyLong_FromSize_t(i->count), PyUnicode_FromString(gclpy_kind_name(i->elem_kind)),
                    PyBool_FromLong(i->is_const)};
  int ok = 0;
  for (int k = 0; k < 5; k++) {
    if (!v[k]) ok = -1;
    else PyStructSequence_SetItem(seq, first + k, v[k]);
  }
  return ok;
}

static PyObject *param_info(const gcl_layout *layout, size_t index) {
  size_t off = 0, size = 0, align = 0;
  gcl_field f;
  gcl_status s = gcl_layout_param(layout, index, &off, &size, &align);
  if (s == GCL_OK) s = gcl_layout_param_field(layout, index, &f);
  if (s != GCL_OK) return gclpy_raise(s);
  const gcl_param_info i = f.info;
  PyObject *p = PyStructSequence_New(gclpy.param_type);
  if (!p) return NULL;
  PyStructSequence_SetItem(p, 0, PyLong_FromSize_t(index));
  PyStructSequence_SetItem(p, 1, i.name ? PyUnicode_FromString(i.name) : Py_NewRef(Py_None));
  PyStructSequence_SetItem(p, 2, PyLong_FromSize_t(off));
  PyStructSequence_SetItem(p, 3, PyLong_FromSize_t(size));
  PyStructSequence_SetItem(p, 4, PyLong_FromSize_t(align));
  int bad = set_info(p, 5, &i);
  PyStructSequence_SetItem(p, 10, PyBool_FromLong(i.grid_constant));
  if (bad || PyErr_Occurred()) Py_CLEAR(p);
  return p;
}

PyObject *gclpy_field_info(gclpy_layout *lay, const gcl_field *f, const char *path) {
  char buf[256], *heap = NULL;
  if (!path) {
    size_t needed = 0;
    gcl_status s = gcl_layout_field_path(lay->layout, f, buf, sizeof buf, &needed);
    if (s != GCL_OK && needed >= sizeof buf && (heap = malloc(needed + 1)))
      s = gcl_layout_field_path(lay->layout, f, heap, needed + 1, NULL);
    if (s != GCL_OK) return free(heap), gclpy_raise(s);
    path = heap ? heap : buf;
  }
  PyObject *r = PyStructSequence_New(gclpy.field_type);
  if (r) {
    PyStructSequence_SetItem(r, 0, PyUnicode_FromString(path));
    PyStructSequence_SetItem(r, 1, PyLong_FromSize_t(f->param));
    PyStructSequence_SetItem(r, 2, PyLong_FromSize_t(f->offset));
    PyStructSequence_SetItem(r, 3, PyLong_FromSize_t(f->size));
    PyStructSequence_SetItem(r, 4, PyLong_FromSize_t(f->align));
    if (set_info(r, 5, &f->info) < 0 || PyErr_Occurred()) Py_CLEAR(r);
  }
  free(heap);
  return r;
}

/* --- FieldRef: a resolved gcl_field (internal) ---------------------------------------------- */

static void fieldref_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(((gclpy_fieldref *)self)->path);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static gclpy_fieldref *fieldref_new(const gcl_field *f, PyObject *path) {
  gclpy_fieldref *r = PyObject_New(gclpy_fieldref, gclpy.fieldref_type);
  if (!r) return NULL;
  r->field = *f;
  r->conv = gclpy_conv_of(f);
  r->path = path ? Py_NewRef(path) : NULL;
  return r;
}

/* --- Layout ---------------------------------------------------------------------------------- */

static int cache_params(gclpy_layout *lay) {
  lay->nparams = gcl_layout_count(lay->layout);
  lay->params = calloc(lay->nparams ? lay->nparams : 1, sizeof *lay->params);
  lay->paths = PyDict_New();
  if (!lay->params || !lay->paths) return PyErr_NoMemory(), -1;
  for (size_t i = 0; i < lay->nparams; i++) {
    gcl_field f;
    gcl_status s = gcl_layout_param_field(lay->layout, i, &f);
    if (s != GCL_OK) return gclpy_raise(s), -1;
    if (!(lay->params[i] = fieldref_new(&f, NULL))) return -1;
  }
  return 0;
}

static gclpy_layout *layout_alloc(void) {
  gclpy_layout *lay = PyObject_New(gclpy_layout, gclpy.layout_type);
  if (!lay) return NULL;
  lay->layout = NULL, lay->sig = NULL, lay->owner = NULL, lay->context = NULL;
  lay->nparams = 0, lay->params = NULL, lay->paths = NULL;
  return lay;
}

static PyObject *layout_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"signature", "sm", NULL};
  const char *text;
  int sm;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "si:Layout", kw, &text, &sm)) return NULL;
  gclpy_layout *lay = layout_alloc();
  if (!lay) return NULL;
  gcl_status s = gcl_signature_parse(text, &lay->sig);
  if (s == GCL_OK) s = gcl_layout_create(lay->sig, sm, &lay->layout);
  if (s != GCL_OK) return Py_DECREF(lay), gclpy_raise(s);
  if (cache_params(lay) < 0) return Py_DECREF(lay), NULL;
  return (PyObject *)lay;
}

PyObject *gclpy_layout_wrap(const gcl_layout *layout, PyObject *owner, PyObject *context) {
  gclpy_layout *lay = layout_alloc();
  if (!lay) return NULL;
  lay->layout = (gcl_layout *)layout;
  lay->owner = Py_NewRef(owner);
  lay->context = Py_NewRef(context);
  if (cache_params(lay) < 0) return Py_DECREF(lay), NULL;
  return (PyObject *)lay;
}

static void layout_dealloc(PyObject *self) {
  gclpy_layout *lay = (gclpy_layout *)self;
  PyTypeObject *tp = Py_TYPE(self);
  for (size_t i = 0; lay->params && i < lay->nparams; i++) Py_XDECREF(lay->params[i]);
  free(lay->params);
  Py_XDECREF(lay->paths);
  if (!lay->owner) gcl_layout_destroy(lay->layout);
  gcl_signature_destroy(lay->sig);
  Py_XDECREF(lay->owner);
  Py_XDECREF(lay->context);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static gclpy_fieldref *lookup_index(gclpy_layout *lay, PyObject *key) {
  Py_ssize_t i = PyLong_AsSsize_t(key);
  if (i == -1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
    PyErr_Clear();
    i = PY_SSIZE_T_MAX;
  }
  if (i < 0 && (size_t)-i <= lay->nparams) i += (Py_ssize_t)lay->nparams; /* args[-1]: the last */
  if (i >= 0 && (size_t)i < lay->nparams) return lay->params[i];
  gcl_field f;
  gcl_status s = gcl_layout_param_field(lay->layout, i < 0 ? (size_t)-1 : (size_t)i, &f);
  return gclpy_raise(s != GCL_OK ? s : GCL_ERROR_INVALID_ARGUMENT), NULL;
}

static gclpy_fieldref *lookup_path(gclpy_layout *lay, PyObject *key) {
  PyObject *hit = PyDict_GetItemWithError(lay->paths, key);
  if (hit) return (gclpy_fieldref *)hit;
  if (PyErr_Occurred()) return NULL;
  const char *path = PyUnicode_AsUTF8AndSize(key, NULL);
  if (!path) return NULL;
  gcl_field f;
  gcl_status s = gcl_layout_field(lay->layout, path, &f);
  if (s != GCL_OK) return gclpy_raise(s), NULL;
  gclpy_fieldref *r = fieldref_new(&f, key);
  if (!r) return NULL;
  if (PyDict_Size(lay->paths) >= GCLPY_PATH_CACHE_MAX) PyDict_Clear(lay->paths);
  int rc = PyDict_SetItem(lay->paths, key, (PyObject *)r);
  Py_DECREF(r); /* the dict holds it */
  return rc < 0 ? NULL : r;
}

gclpy_fieldref *gclpy_layout_lookup(gclpy_layout *lay, PyObject *key) {
  if (PyUnicode_Check(key)) return lookup_path(lay, key);
  if (PyLong_Check(key) && !PyBool_Check(key)) return lookup_index(lay, key);
  if (!PyBool_Check(key) && !PyFloat_Check(key) && PyIndex_Check(key)) { /* numpy ints */
    PyObject *i = PyNumber_Index(key);
    gclpy_fieldref *r = i ? lookup_index(lay, i) : NULL;
    Py_XDECREF(i);
    return r;
  }
  return gclpy_type_error("a field is named by an int (parameter index) or a str (path)", key),
         NULL;
}

gclpy_fieldref *gclpy_layout_element0(gclpy_layout *lay, gclpy_fieldref *array) {
  gcl_field f;
  gcl_status s = gcl_layout_element_field(lay->layout, &array->field, 0, &f);
  if (s != GCL_OK) return gclpy_raise(s), NULL;
  return fieldref_new(&f, array->path);
}

static PyObject *layout_field(PyObject *self, PyObject *key) {
  gclpy_layout *lay = (gclpy_layout *)self;
  gclpy_fieldref *r = gclpy_layout_lookup(lay, key);
  return r ? gclpy_field_info(lay, &r->field, NULL) : NULL;
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
  if (s != GCL_OK) return Py_DECREF(c.list), gclpy_raise(s);
  return c.list;
}

static PyObject *layout_params(PyObject *self, void *closure) {
  (void)closure;
  gclpy_layout *lay = (gclpy_layout *)self;
  PyObject *list = PyList_New((Py_ssize_t)lay->nparams);
  for (size_t i = 0; list && i < lay->nparams; i++) {
    PyObject *p = param_info(lay->layout, i);
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
  PyObject *r = s == GCL_OK ? PyUnicode_FromString(buf) : gclpy_raise(s);
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
   "field(path_or_index) -> Field\n\nResolves a path ('g.loads[3]', 'g.segs[2].n', 'g.2', 'maps[17]')\n"
   "or a parameter index. Raises gclaunch.Error: GCL_ERROR_NOT_FOUND for an unknown name,\n"
   "GCL_ERROR_INVALID_ARGUMENT for a malformed path or an index out of range (the message quotes\n"
   "the path and the column)."},
  {"leaves", layout_leaves, METH_NOARGS,
   "leaves() -> list[Field]\n\nEvery leaf (scalar, pointer, tensormap, bytes) of every parameter, in\n"
   "buffer order, with its canonical path."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef layout_getset[] = {
  {"size", layout_size, NULL, "bytes of the packed buffer: max(offset + size)", NULL},
  {"params", layout_params, NULL, "list of Param, one per parameter, in order", NULL},
  {"sm", layout_sm, NULL, "the SM architecture the offsets are for (90 for sm_90)", NULL},
  {"signature", layout_signature, NULL,
   "the canonical signature text, or None for a kernel's layout looked up without one", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot layout_slots[] = {
  {Py_tp_new, layout_new}, {Py_tp_dealloc, layout_dealloc}, {Py_tp_methods, layout_methods},
  {Py_tp_getset, layout_getset}, {Py_tp_repr, layout_repr}, {Py_sq_length, layout_len},
  {Py_mp_length, layout_len},
  {Py_tp_doc, "Layout(signature, sm)\n\n"
              "The device-exact parameter layout of a signature on architecture sm (90 for sm_90):\n"
              "CPU only, no GPU or driver. Raises gclaunch.Error (GCL_ERROR_PARSE with the column,\n"
              "GCL_ERROR_LAYOUT_TOO_LARGE, GCL_ERROR_INVALID_ARGUMENT for an unknown sm).\n\n"
              "  lay = gclaunch.Layout('grid_constant tensormap[4] maps, const f32* src, u64 n', 90)\n"
              "  lay.size, lay.params, lay.field('maps[2]'), lay.leaves(), gclaunch.Args(lay)"},
  {0, NULL}};
static PyType_Spec layout_spec = {"gclaunch.Layout", sizeof(gclpy_layout), 0, Py_TPFLAGS_DEFAULT,
                                  layout_slots};

static PyType_Slot fieldref_slots[] = {{Py_tp_dealloc, fieldref_dealloc}, {0, NULL}};
static PyType_Spec fieldref_spec = {"gclaunch._FieldRef", sizeof(gclpy_fieldref), 0,
                                    Py_TPFLAGS_DEFAULT, fieldref_slots};

int gclpy_layout_init_types(PyObject *m) {
  gclpy.layout_type = (PyTypeObject *)PyType_FromSpec(&layout_spec);
  gclpy.fieldref_type = (PyTypeObject *)PyType_FromSpec(&fieldref_spec);
  gclpy.param_type = PyStructSequence_NewType(&param_desc);
  gclpy.field_type = PyStructSequence_NewType(&field_desc);
  if (!gclpy.layout_type || !gclpy.fieldref_type || !gclpy.param_type || !gclpy.field_type)
    return -1;
  if (PyModule_AddObjectRef(m, "Layout", (PyObject *)gclpy.layout_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Param", (PyObject *)gclpy.param_type) < 0) return -1;
  return PyModule_AddObjectRef(m, "Field", (PyObject *)gclpy.field_type);
}
