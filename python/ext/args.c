/* args.c -- gclaunch.Args: a gcl_args with setting by path or index (args[key] = value). */
#include "gclpy.h"

gclpy_args *gclpy_args_new(gclpy_layout *lay) {
  gclpy_args *a = PyObject_New(gclpy_args, gclpy.args_type);
  if (!a) return NULL;
  a->args = NULL;
  a->layout = (gclpy_layout *)Py_NewRef((PyObject *)lay);
  gcl_status s = gcl_args_create(lay->layout, &a->args);
  if (s == GCL_OK && lay->context) /* a kernel's args: tensors are checked against its device */
    s = gcl_args_restrict_device(a->args, ((gclpy_context *)lay->context)->device);
  if (s != GCL_OK) return Py_DECREF(a), (gclpy_args *)gclpy_raise(s);
  return a;
}

static PyObject *args_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"layout", NULL};
  PyObject *lay;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!:Args", kw, gclpy.layout_type, &lay)) return NULL;
  return (PyObject *)gclpy_args_new((gclpy_layout *)lay);
}

static void args_dealloc(PyObject *self) {
  gclpy_args *a = (gclpy_args *)self;
  PyTypeObject *tp = Py_TYPE(self);
  gcl_args_destroy(a->args); /* runs the deleters of the tensors it took (the GIL is held) */
  Py_XDECREF(a->layout);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

gcl_context *gclpy_args_context(gclpy_args *a, int device) {
  if (a->layout->context) return ((gclpy_context *)a->layout->context)->ctx;
  gclpy_context *c = gclpy_default_context(device < 0 ? 0 : device);
  return c ? c->ctx : NULL;
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
  if (s != GCL_OK) return gclpy_raise(s);
  return PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
}

static PyObject *args_refresh(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  static const char *const names[] = {"path", "tensormaps"};
  PyObject *v[2];
  gclpy_args *a = (gclpy_args *)self;
  if (gclpy_parse("refresh", argv, nargs, kwnames, names, 2, 2, 2, v) < 0) return NULL;
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, v[0]), *first = f;
  if (!f) return NULL;
  if (f->conv == GCLPY_CONV_TENSORMAPS && !(first = gclpy_layout_element0(a->layout, f))) return NULL;
  if (first == f) Py_INCREF(first); /* held: the maps' __dlpack__ calls run Python code */
  int rc = gclpy_tensormaps_set(a, first, v[1], true);
  Py_DECREF(first);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *args_repoint(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames) {
  static const char *const names[] = {"path", "addresses"};
  PyObject *v[2];
  gclpy_args *a = (gclpy_args *)self;
  if (gclpy_parse("repoint", argv, nargs, kwnames, names, 2, 2, 2, v) < 0) return NULL;
  gclpy_fieldref *f = gclpy_layout_lookup(a->layout, v[0]), *first = f;
  if (!f) return NULL;
  if (f->conv == GCLPY_CONV_TENSORMAPS && !(first = gclpy_layout_element0(a->layout, f))) return NULL;
  if (first == f) Py_INCREF(first); /* held: the maps' __dlpack__ calls run Python code */
  int rc = gclpy_tensormaps_repoint(a, first, v[1]);
  Py_DECREF(first);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *args_clone(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_args *a = (gclpy_args *)self;
  gclpy_args *c = PyObject_New(gclpy_args, gclpy.args_type);
  if (!c) return NULL;
  c->args = NULL;
  c->layout = (gclpy_layout *)Py_NewRef((PyObject *)a->layout);
  gcl_status s = gcl_args_clone(a->args, &c->args);
  if (s != GCL_OK) return Py_DECREF(c), gclpy_raise(s);
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
   "is_set(path_or_index) -> bool\n\nTrue when every leaf byte of the field was set."},
  {"buffer", args_buffer, METH_NOARGS,
   "buffer() -> bytes\n\nThe packed parameter buffer, exactly as the device reads it (layout.size\n"
   "bytes). Raises gclaunch.Error GCL_ERROR_UNSET_ARGUMENT naming the first unset leaf by path."},
  {"refresh", GCLPY_METH(args_refresh), METH_FASTCALL | METH_KEYWORDS,
   "refresh(path, tensormaps)\n\nSets tensor maps like args[path] = tensormaps, but a map whose\n"
   "description differs from the one already there only in its address is re-pointed\n"
   "(cuTensorMapReplaceAddress) instead of re-encoded: gcl_args_set_tensormaps with\n"
   "GCL_TENSORMAP_REFRESH. path: a tensormap (one TensorMap or a list from that element on) or a\n"
   "tensormap[N] (a list of N). All or nothing."},
  {"repoint", GCLPY_METH(args_repoint), METH_FASTCALL | METH_KEYWORDS,
   "repoint(path, addresses)\n\nRe-points maps gclaunch encoded earlier to new addresses, keeping\n"
   "the rest of their description (gcl_args_repoint_tensormaps): the cheapest relaunch on new\n"
   "buffers of the same shapes. addresses: one or a list of ints (data + byte_offset) or\n"
   "__dlpack__ tensors (their data + byte_offset; nothing else of them is checked). All or nothing."},
  {"clone", args_clone, METH_NOARGS,
   "clone() -> Args\n\nA copy (gcl_args_clone): same bytes and set state; tensors the original\n"
   "took stay owned by it, so keep the original alive while the copy is launched."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef args_getset[] = {
  {"layout", args_get_layout, NULL, "the Layout these args are packed for", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot args_slots[] = {
  {Py_tp_new, args_new}, {Py_tp_dealloc, args_dealloc}, {Py_tp_methods, args_methods},
  {Py_tp_getset, args_getset}, {Py_tp_repr, args_repr},
  {Py_mp_ass_subscript, args_ass_subscript},
  {Py_tp_doc, "Args(layout)\n\n"
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
              "A refused value raises gclaunch.Error with the library's message and changes nothing."},
  {0, NULL}};
static PyType_Spec args_spec = {"gclaunch.Args", sizeof(gclpy_args), 0, Py_TPFLAGS_DEFAULT,
                                args_slots};

int gclpy_args_init_types(PyObject *m) {
  gclpy.args_type = (PyTypeObject *)PyType_FromSpec(&args_spec);
  if (!gclpy.args_type) return -1;
  return PyModule_AddObjectRef(m, "Args", (PyObject *)gclpy.args_type);
}
