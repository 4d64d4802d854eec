/* tensormap.c -- gclaunch.TensorMap, and every tensor-map call of the library in one place.
 *
 * A TensorMap is a description (tensor, box, options); it is encoded when assigned into args,
 * from the tensor's __dlpack__ at that moment (borrowed: only the description and the address
 * are read), into the field by gcl_args_set_tensormaps -- n consecutive elements in one call, all
 * or nothing. The box is given in the tensor's dimension order (like its shape); the C options
 * are in TMA order (innermost first), so it is reversed here. */
#include "gclpy.h"

#include <string.h>

/* --- the library's tensor-map calls ------------------------------------------------------------ */

static gcl_status set_maps(gcl_args *args, gcl_context *ctx, const gcl_field *first, size_t n,
                           const DLTensor *const *tensors, const gcl_tensormap_options *options,
                           bool refresh) {
  return gcl_args_set_tensormaps(args, ctx, first, n, tensors, options, n,
                                 refresh ? GCL_TENSORMAP_REFRESH : 0u);
}

static gcl_status repoint_maps(gcl_args *args, gcl_context *ctx, const gcl_field *first, size_t n,
                               const uint64_t *addresses) {
  return gcl_args_repoint_tensormaps(args, ctx, first, n, addresses);
}

/* --- TensorMap ------------------------------------------------------------------------------ */

/* swizzle and l2 in bytes (32/64/128, 64/128/256) or as the C enum (1/2/3); 0 is none. */
static int enum_of(const char *what, long v, const long *bytes, int *out) {
  for (int i = 0; i < 4; i++)
    if (v == bytes[i] || (v == i)) return *out = i, 0;
  gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "TensorMap %s: expected 0, %ld, %ld or %ld (bytes), "
                  "got %ld", what, bytes[1], bytes[2], bytes[3], v);
  return -1;
}

static PyObject *tensormap_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"tensor", "box", "swizzle", "store", "oob_nan", "l2", "element_strides",
                       "interleave", NULL};
  PyObject *tensor, *box, *estrides = Py_None;
  long swizzle = 0, l2 = 0;
  int store = 0, oob_nan = 0, interleave = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|$lpplOi:TensorMap", kw, &tensor, &box,
                                   &swizzle, &store, &oob_nan, &l2, &estrides, &interleave))
    return NULL;
  if (!gclpy_has_dlpack(tensor)) return gclpy_type_error("TensorMap: expected a __dlpack__ tensor", tensor);
  static const long sw_bytes[4] = {0, 32, 64, 128}, l2_bytes[4] = {0, 64, 128, 256};
  gclpy_tensormap *tm = PyObject_New(gclpy_tensormap, gclpy.tensormap_type);
  if (!tm) return NULL;
  memset(&tm->options, 0, sizeof tm->options);
  tm->tensor = Py_NewRef(tensor);
  tm->box = PyLong_Check(box) ? Py_BuildValue("(O)", box) : PySequence_Tuple(box);
  if (!tm->box) return Py_DECREF(tm), NULL;
  Py_ssize_t r = PyTuple_Size(tm->box);
  if (r < 1 || r > GCL_TENSORMAP_MAX_RANK)
    return Py_DECREF(tm), gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "TensorMap box: expected 1 to "
                                          "%d sizes, got %zd", GCL_TENSORMAP_MAX_RANK, r);
  /* box and element strides in TMA order (reversed); ranges are the library's checks */
  for (Py_ssize_t i = 0; i < r; i++) {
    unsigned long b = PyLong_AsUnsignedLong(PyTuple_GetItem(tm->box, r - 1 - i));
    if (b == (unsigned long)-1 && PyErr_Occurred()) return Py_DECREF(tm), NULL;
    tm->options.box[i] = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
  }
  if (estrides != Py_None) {
    PyObject *es = PySequence_Tuple(estrides);
    if (!es) return Py_DECREF(tm), NULL;
    Py_ssize_t ne = PyTuple_Size(es);
    for (Py_ssize_t i = 0; i < ne && i < GCL_TENSORMAP_MAX_RANK; i++) {
      unsigned long e = PyLong_AsUnsignedLong(PyTuple_GetItem(es, ne - 1 - i));
      if (e == (unsigned long)-1 && PyErr_Occurred()) return Py_DECREF(es), Py_DECREF(tm), NULL;
      tm->options.element_strides[i] = e > UINT32_MAX ? UINT32_MAX : (uint32_t)e;
    }
    Py_DECREF(es);
  }
  if (enum_of("swizzle", swizzle, sw_bytes, &tm->options.swizzle) < 0 ||
      enum_of("l2", l2, l2_bytes, &tm->options.l2_promotion) < 0)
    return Py_DECREF(tm), NULL;
  tm->options.store = store;
  tm->options.oob_fill = oob_nan ? GCL_TENSORMAP_OOB_NAN : GCL_TENSORMAP_OOB_ZERO;
  tm->options.interleave = interleave;
  return (PyObject *)tm;
}

static void tensormap_dealloc(PyObject *self) {
  gclpy_tensormap *tm = (gclpy_tensormap *)self;
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(tm->tensor);
  Py_XDECREF(tm->box);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

/* The options of tm for a tensor of ndim dimensions (the box must give each one). */
static int options_for(gclpy_tensormap *tm, const DLTensor *t, gcl_tensormap_options *o) {
  Py_ssize_t r = PyTuple_Size(tm->box);
  if (r != t->ndim) {
    gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "TensorMap box: %zd sizes for a tensor of %d "
                    "dimensions (give one per dimension, in the tensor's order)", r, (int)t->ndim);
    return -1;
  }
  *o = tm->options;
  return 0;
}

/* A borrowed tensor: a versioned capsule of another major version cannot be read. */
static int borrow(PyObject *obj, gclpy_dlpack *d) {
  if (gclpy_dlpack_get(obj, d, true) < 0) return -1;
  if (d->versioned && ((DLManagedTensorVersioned *)d->managed)->version.major != DLPACK_MAJOR_VERSION) {
    unsigned major = ((DLManagedTensorVersioned *)d->managed)->version.major;
    gclpy_dlpack_release(d);
    gclpy_raise_msg(GCL_ERROR_TENSOR_VERSION, "tensor: DLPack major version %u (expected %d)", major,
                    DLPACK_MAJOR_VERSION);
    return -1;
  }
  return 0;
}

static int device_of(const DLTensor *t) { return t->device.device_type == kDLCUDA ? t->device.device_id : 0; }

/* Scratch space for n entries: on the stack up to 8, else on the heap. */
typedef struct batch {
  gclpy_dlpack small_d[8];
  const DLTensor *small_t[8];
  gcl_tensormap_options small_o[8];
  gclpy_dlpack *d;
  const DLTensor **t;
  gcl_tensormap_options *o;
  size_t got;
} batch;

static int batch_init(batch *b, size_t n) {
  b->got = 0;
  if (n <= 8) return b->d = b->small_d, b->t = b->small_t, b->o = b->small_o, 0;
  b->d = PyMem_Calloc(n, sizeof *b->d), b->t = PyMem_Calloc(n, sizeof *b->t);
  b->o = PyMem_Calloc(n, sizeof *b->o);
  return b->d && b->t && b->o ? 0 : (PyErr_NoMemory(), -1);
}

static void batch_free(batch *b) {
  for (size_t i = 0; i < b->got; i++) gclpy_dlpack_release(&b->d[i]);
  if (b->d != b->small_d) PyMem_Free(b->d), PyMem_Free(b->t), PyMem_Free(b->o);
}

static PyObject *list_of_one(PyObject *v) {
  PyObject *l = PyList_New(1);
  if (l) PyList_SetItem(l, 0, Py_NewRef(v));
  return l;
}

/* maps as a new list (a TensorMap alone: a list of one). */
static PyObject *as_list(PyObject *maps) {
  if (PyObject_TypeCheck(maps, gclpy.tensormap_type)) return list_of_one(maps);
  if (PyList_Check(maps) || PyTuple_Check(maps)) return PySequence_List(maps);
  return gclpy_type_error("expected a gclaunch.TensorMap or a list of them", maps);
}

int gclpy_tensormaps_set(gclpy_args *a, gclpy_fieldref *first, PyObject *maps, bool refresh) {
  PyObject *list = as_list(maps);
  if (!list) return -1;
  size_t n = (size_t)PyList_Size(list);
  batch b;
  int rc = batch_init(&b, n);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    PyObject *m = PyList_GetItem(list, (Py_ssize_t)i);
    if (!PyObject_TypeCheck(m, gclpy.tensormap_type)) {
      rc = (gclpy_type_error("expected a list of gclaunch.TensorMap", m), -1);
      break;
    }
    gclpy_tensormap *tm = (gclpy_tensormap *)m;
    if (borrow(tm->tensor, &b.d[i]) < 0) { rc = -1; break; }
    b.got++;
    b.t[i] = b.d[i].tensor;
    rc = options_for(tm, b.t[i], &b.o[i]);
  }
  gcl_context *ctx = rc == 0 && n ? gclpy_args_context(a, device_of(b.t[0])) : NULL;
  if (rc == 0 && n && !ctx) rc = -1;
  if (rc == 0 && n) {
    gcl_status s = set_maps(a->args, ctx, &first->field, n, b.t, b.o, refresh);
    if (s != GCL_OK) rc = (gclpy_raise(s), -1);
  }
  batch_free(&b);
  Py_DECREF(list);
  return rc;
}

/* One address: an int, or a __dlpack__ tensor's data + byte_offset (*device: its device). */
static int address_of(PyObject *v, uint64_t *out, int *device) {
  if (PyLong_Check(v) && !PyBool_Check(v)) {
    *out = PyLong_AsUnsignedLongLong(v);
    if (*out == (uint64_t)-1 && PyErr_Occurred()) {
      if (PyErr_ExceptionMatches(PyExc_OverflowError))
        PyErr_Clear(), gclpy_raise_range("address %R is out of range for u64", v);
      return -1;
    }
    return 0;
  }
  if (!gclpy_has_dlpack(v)) return gclpy_type_error("expected an int address or a __dlpack__ tensor", v), -1;
  gclpy_dlpack d;
  if (borrow(v, &d) < 0) return -1;
  *out = (uint64_t)(uintptr_t)d.tensor->data + d.tensor->byte_offset;
  *device = device_of(d.tensor);
  gclpy_dlpack_release(&d);
  return 0;
}

int gclpy_tensormaps_repoint(gclpy_args *a, gclpy_fieldref *first, PyObject *addresses) {
  PyObject *list = PyList_Check(addresses) || PyTuple_Check(addresses)
                       ? PySequence_List(addresses) : list_of_one(addresses);
  if (!list) return -1;
  size_t n = (size_t)PyList_Size(list);
  uint64_t small[16], *addr = n <= 16 ? small : PyMem_Calloc(n, sizeof *addr);
  int rc = addr ? 0 : (PyErr_NoMemory(), -1), device = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) rc = address_of(PyList_GetItem(list, (Py_ssize_t)i), &addr[i], &device);
  gcl_context *ctx = rc == 0 && n ? gclpy_args_context(a, device) : NULL;
  if (rc == 0 && n && !ctx) rc = -1;
  if (rc == 0 && n) {
    gcl_status s = repoint_maps(a->args, ctx, &first->field, n, addr);
    if (s != GCL_OK) rc = (gclpy_raise(s), -1);
  }
  if (addr != small) PyMem_Free(addr);
  Py_DECREF(list);
  return rc;
}

/* TensorMap.describe(): gcl_tensormap_check on the CPU, the arguments of the encode as a dict. */
static PyObject *tensormap_describe(PyObject *self, PyObject *unused) {
  (void)unused;
  gclpy_tensormap *tm = (gclpy_tensormap *)self;
  gclpy_dlpack d;
  gcl_tensormap_options o;
  gcl_tensormap_desc desc;
  if (borrow(tm->tensor, &d) < 0) return NULL;
  if (options_for(tm, d.tensor, &o) < 0) return gclpy_dlpack_release(&d), NULL;
  gcl_status s = gcl_tensormap_check(d.tensor, &o, &desc);
  gclpy_dlpack_release(&d);
  if (s != GCL_OK) return gclpy_raise(s);
  PyObject *dims = PyTuple_New(desc.rank), *strides = PyTuple_New(desc.rank ? desc.rank - 1 : 0);
  PyObject *box = PyTuple_New(desc.rank);
  for (uint32_t i = 0; dims && strides && box && i < desc.rank; i++) { /* TMA order */
    PyTuple_SetItem(dims, i, PyLong_FromUnsignedLongLong(desc.dims[i]));
    PyTuple_SetItem(box, i, PyLong_FromUnsignedLong(desc.box[i]));
    if (i + 1 < desc.rank) PyTuple_SetItem(strides, i, PyLong_FromUnsignedLongLong(desc.strides[i]));
  }
  return Py_BuildValue("{s:i,s:I,s:K,s:N,s:N,s:N,s:I,s:i,s:i}", "type", (int)desc.type,
                       "element_bytes", desc.element_bytes, "address",
                       (unsigned long long)desc.address, "dims", dims, "strides", strides, "box",
                       box, "box_bytes", desc.box_bytes, "swizzle", desc.swizzle, "l2_promotion",
                       desc.l2_promotion);
}

static PyObject *tm_get_tensor(PyObject *self, void *c) { (void)c; return Py_NewRef(((gclpy_tensormap *)self)->tensor); }
static PyObject *tm_get_box(PyObject *self, void *c) { (void)c; return Py_NewRef(((gclpy_tensormap *)self)->box); }
static PyObject *tm_get_store(PyObject *self, void *c) { (void)c; return PyBool_FromLong(((gclpy_tensormap *)self)->options.store); }

static PyObject *tensormap_repr(PyObject *self) {
  gclpy_tensormap *tm = (gclpy_tensormap *)self;
  return PyUnicode_FromFormat("<gclaunch.TensorMap box=%R swizzle=%d store=%d>", tm->box,
                              tm->options.swizzle, tm->options.store);
}

static PyMethodDef tensormap_methods[] = {
  {"describe", tensormap_describe, METH_NOARGS,
   "describe() -> dict\n\nChecks the map on the CPU (gcl_tensormap_check: every documented\n"
   "cuTensorMapEncodeTiled rule) and returns what would be encoded, in TMA order (innermost\n"
   "first): type, element_bytes, address (data + byte_offset), dims, strides (bytes), box,\n"
   "box_bytes (the mbarrier transaction count), swizzle, l2_promotion. Raises gclaunch.Error."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef tensormap_getset[] = {
  {"tensor", tm_get_tensor, NULL, "the __dlpack__ tensor the map describes", NULL},
  {"box", tm_get_box, NULL, "the box, in the tensor's dimension order", NULL},
  {"store", tm_get_store, NULL, "True: a TMA store destination (checked for the 16-byte rule)", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot tensormap_slots[] = {
  {Py_tp_new, tensormap_new}, {Py_tp_dealloc, tensormap_dealloc}, {Py_tp_repr, tensormap_repr},
  {Py_tp_methods, tensormap_methods}, {Py_tp_getset, tensormap_getset},
  {Py_tp_doc, "TensorMap(tensor, box, *, swizzle=0, store=False, oob_nan=False, l2=0,\n"
              "          element_strides=None, interleave=0)\n\n"
              "A TMA descriptor to encode from any __dlpack__ tensor (CUDA memory; byte_offset\n"
              "honoured, 16-byte alignment checked) when assigned into args: args['maps[3]'] = tm,\n"
              "or a list into a tensormap[N]. box and element_strides are in the tensor's dimension\n"
              "order (like its shape): TensorMap(t, (64, 32)) for a [M, K] tensor loads 64 rows of 32\n"
              "elements. swizzle 0/32/64/128 and l2 0/64/128/256 in bytes; store=True for a TMA store\n"
              "destination; oob_nan fills out-of-bounds float elements with NaN. Every rule of the\n"
              "encode is checked by the library when the map is assigned (gclaunch.Error)."},
  {0, NULL}};
static PyType_Spec tensormap_spec = {"gclaunch.TensorMap", sizeof(gclpy_tensormap), 0,
                                     Py_TPFLAGS_DEFAULT, tensormap_slots};

int gclpy_tensormap_init_types(PyObject *m) {
  gclpy.tensormap_type = (PyTypeObject *)PyType_FromSpec(&tensormap_spec);
  if (!gclpy.tensormap_type) return -1;
  return PyModule_AddObjectRef(m, "TensorMap", (PyObject *)gclpy.tensormap_type);
}
