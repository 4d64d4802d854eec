/* driver.c -- gclaunch.Context, gclaunch.Module, gclaunch.Kernel.
 *
 * Lifetimes follow the C library's ownership: a Module keeps its Context alive, a Kernel its
 * Module (which owns the gcl_kernel and its layout), a kernel's Layout its Module. No object
 * refers back to one that owns it, so there are no cycles. */
#include "gclpy.h"

#include <stdlib.h>

/* --- Context ---------------------------------------------------------------------------------- */

static gclpy_context *context_create(int device) {
  gcl_context *ctx = NULL;
  gcl_status s = gcl_context_create(device, &ctx);
  if (s != GCL_OK) return (gclpy_context *)gclpy_raise(s);
  gclpy_context *c = PyObject_New(gclpy_context, gclpy.context_type);
  if (!c) return gcl_context_destroy(ctx), NULL;
  c->ctx = ctx, c->device = device;
  return c;
}

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  (void)type;
  static char *kw[] = {"device", NULL};
  int device = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:Context", kw, &device)) return NULL;
  return (PyObject *)context_create(device);
}

gclpy_context *gclpy_default_context(int device) {
  PyObject *key = PyLong_FromLong(device);
  if (!key) return NULL;
  PyObject *c = PyDict_GetItemWithError(gclpy.contexts, key);
  if (!c && !PyErr_Occurred() && (c = (PyObject *)context_create(device))) {
    int rc = PyDict_SetItem(gclpy.contexts, key, c);
    Py_DECREF(c); /* the dict keeps it for the process */
    if (rc < 0) c = NULL;
  }
  Py_DECREF(key);
  return (gclpy_context *)c;
}

static void context_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  gcl_context_destroy(((gclpy_context *)self)->ctx);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static PyObject *module_wrap(gclpy_context *c, gcl_module *mod) {
  gclpy_module *m = PyObject_New(gclpy_module, gclpy.module_type);
  if (!m) return gcl_module_destroy(mod), NULL;
  m->mod = mod, m->context = Py_NewRef((PyObject *)c);
  return (PyObject *)m;
}

static PyObject *context_load(PyObject *self, PyObject *src) {
  gclpy_context *c = (gclpy_context *)self;
  PyObject *bytes = gclpy_image_bytes(src); /* a path is read by gcl_file_read */
  if (!bytes) return NULL;
  gcl_module *mod = NULL;
  const char *data = PyBytes_AsString(bytes);
  size_t size = (size_t)PyBytes_Size(bytes);
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_module_load_data(c->ctx, data, size, &mod);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  return s == GCL_OK ? module_wrap(c, mod) : gclpy_raise(s);
}

static PyObject *context_compile(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  static const char *const names[] = {"source", "name", "options"};
  PyObject *v[3];
  gclpy_context *c = (gclpy_context *)self;
  if (gclpy_parse("compile", argv, nargs, kwnames, names, 3, 1, 1, v) < 0) return NULL;
  const char *src = PyUnicode_Check(v[0]) ? PyUnicode_AsUTF8AndSize(v[0], NULL) : NULL;
  if (!src) return PyErr_Occurred() ? NULL : gclpy_type_error("compile: source must be a str", v[0]);
  const char *name = "kernel.cu";
  if (v[1] && v[1] != Py_None && !(name = PyUnicode_Check(v[1]) ? PyUnicode_AsUTF8AndSize(v[1], NULL) : NULL))
    return PyErr_Occurred() ? NULL : gclpy_type_error("compile: name must be a str", v[1]);
  PyObject *opts = v[2] ? PySequence_Tuple(v[2]) : PyTuple_New(0);
  if (!opts) return NULL;
  Py_ssize_t n = PyTuple_Size(opts);
  const char **o = calloc(n ? (size_t)n : 1, sizeof *o);
  if (!o) return Py_DECREF(opts), PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *it = PyTuple_GetItem(opts, i);
    if (!PyUnicode_Check(it) || !(o[i] = PyUnicode_AsUTF8AndSize(it, NULL))) {
      free(o), Py_DECREF(opts);
      return PyErr_Occurred() ? NULL : gclpy_type_error("compile: options must be strs", it);
    }
  }
  gcl_module *mod = NULL;
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_module_compile(c->ctx, src, name, o, (size_t)n, &mod);
  Py_END_ALLOW_THREADS
  free(o), Py_DECREF(opts);
  return s == GCL_OK ? module_wrap(c, mod) : gclpy_raise(s);
}

static PyObject *context_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_context_synchronize(((gclpy_context *)self)->ctx);
  Py_END_ALLOW_THREADS
  if (s != GCL_OK) return gclpy_raise(s);
  Py_RETURN_NONE;
}

static PyObject *context_get(PyObject *self, void *what) {
  gclpy_context *c = (gclpy_context *)self;
  switch ((int)(intptr_t)what) {
  case 0: return PyLong_FromLong(c->device);
  case 1: return PyLong_FromLong(gcl_context_sm(c->ctx));
  case 2: return PyLong_FromVoidPtr(gcl_context_cu_context(c->ctx));
  default: {
    gcl_device_info info;
    gcl_status s = gcl_device_query(c->device, &info);
    return s == GCL_OK ? PyUnicode_FromString(info.name) : gclpy_raise(s);
  }
  }
}

static PyObject *context_repr(PyObject *self) {
  gclpy_context *c = (gclpy_context *)self;
  return PyUnicode_FromFormat("<gclaunch.Context device %d, sm_%d>", c->device, gcl_context_sm(c->ctx));
}

static PyMethodDef context_methods[] = {
  {"load", context_load, METH_O,
   "load(path_or_bytes) -> Module\n\nLoads a cubin, fatbin, PTX or host-ELF image (format from the\n"
   "content), from a path or a bytes-like object. PTX JIT errors are in the message."},
  {"compile", GCLPY_METH(context_compile), METH_FASTCALL | METH_KEYWORDS,
   "compile(source, name='kernel.cu', options=()) -> Module\n\nCompiles CUDA C++ with NVRTC for\n"
   "this device (-arch=sm_NN unless options give one) and loads it. GCL_ERROR_COMPILE carries the\n"
   "compiler log; GCL_ERROR_NO_NVRTC when NVRTC is not found."},
  {"synchronize", context_synchronize, METH_NOARGS,
   "synchronize()\n\nWaits for all work of the context (GCL_ERROR_KERNEL_FAULT after a fault)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef context_getset[] = {
  {"device", context_get, NULL, "the CUDA device ordinal", (void *)0},
  {"sm", context_get, NULL, "the device's architecture (90 for sm_90)", (void *)1},
  {"handle", context_get, NULL, "the CUcontext (primary context) as an int", (void *)2},
  {"name", context_get, NULL, "the device's name", (void *)3},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot context_slots[] = {
  {Py_tp_new, context_new}, {Py_tp_dealloc, context_dealloc}, {Py_tp_methods, context_methods},
  {Py_tp_getset, context_getset}, {Py_tp_repr, context_repr},
  {Py_tp_doc, "Context(device=0)\n\n"
              "The primary context of a CUDA device (the driver is opened at run time: without one,\n"
              "gclaunch.Error GCL_ERROR_NO_DRIVER / GCL_ERROR_NO_DEVICE). Loads and compiles modules."},
  {0, NULL}};
static PyType_Spec context_spec = {"gclaunch.Context", sizeof(gclpy_context), 0,
                                   Py_TPFLAGS_DEFAULT, context_slots};

/* --- Module ----------------------------------------------------------------------------------- */

static void module_dealloc(PyObject *self) {
  gclpy_module *m = (gclpy_module *)self;
  PyTypeObject *tp = Py_TYPE(self);
  gcl_module_destroy(m->mod); /* and its kernels: every Kernel object kept the module alive */
  Py_XDECREF(m->context);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static PyObject *module_kernel(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  static const char *const names[] = {"name", "signature"};
  PyObject *v[2];
  gclpy_module *m = (gclpy_module *)self;
  if (gclpy_parse("kernel", argv, nargs, kwnames, names, 2, 2, 1, v) < 0) return NULL;
  const char *name = PyUnicode_Check(v[0]) ? PyUnicode_AsUTF8AndSize(v[0], NULL) : NULL;
  if (!name) return PyErr_Occurred() ? NULL : gclpy_type_error("kernel: name must be a str", v[0]);
  const char *sig = NULL;
  if (v[1] && v[1] != Py_None && !(sig = PyUnicode_Check(v[1]) ? PyUnicode_AsUTF8AndSize(v[1], NULL) : NULL))
    return PyErr_Occurred() ? NULL : gclpy_type_error("kernel: signature must be a str or None", v[1]);
  gcl_kernel *k = NULL;
  gcl_status s = gcl_module_find_kernel(m->mod, name, sig, &k);
  if (s != GCL_OK) return gclpy_raise(s);
  gclpy_kernel *ko = PyObject_New(gclpy_kernel, gclpy.kernel_type);
  if (!ko) return NULL;
  ko->kernel = k, ko->module = Py_NewRef(self), ko->name = Py_NewRef(v[0]), ko->scratch = NULL;
  ko->layout = (gclpy_layout *)gclpy_layout_wrap(gcl_kernel_layout(k), self, m->context);
  if (!ko->layout) return Py_DECREF(ko), NULL;
  return (PyObject *)ko;
}

static PyObject *module_get(PyObject *self, void *what) {
  gclpy_module *m = (gclpy_module *)self;
  if (what) return Py_NewRef(m->context);
  return PyUnicode_FromString(gcl_module_log(m->mod));
}

static PyMethodDef module_methods[] = {
  {"kernel", GCLPY_METH(module_kernel), METH_FASTCALL | METH_KEYWORDS,
   "kernel(name, signature=None) -> Kernel\n\nLooks up a kernel. Its layout comes from the driver;\n"
   "a signature is checked against it (GCL_ERROR_SIGNATURE_MISMATCH naming the parameter and both\n"
   "offsets and sizes) and gives the parameters their types. Without one the parameters are\n"
   "untyped bytes (ints of their width or bytes-like values)."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef module_getset[] = {
  {"log", module_get, NULL, "the JIT or compiler log of the load ('' if none)", NULL},
  {"context", module_get, NULL, "the Context the module was loaded in", (void *)1},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot module_slots[] = {
  {Py_tp_dealloc, module_dealloc}, {Py_tp_methods, module_methods}, {Py_tp_getset, module_getset},
  {Py_tp_doc, "A loaded module (Context.load / Context.compile); owns its kernels."}, {0, NULL}};
static PyType_Spec module_spec = {"gclaunch.Module", sizeof(gclpy_module), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, module_slots};

/* --- Kernel ----------------------------------------------------------------------------------- */

static void kernel_dealloc(PyObject *self) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(k->scratch);
  Py_XDECREF(k->layout);
  Py_XDECREF(k->name);
  Py_XDECREF(k->module); /* last: it owns the gcl_kernel */
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static PyObject *kernel_args(PyObject *self, PyObject *unused) {
  (void)unused;
  return (PyObject *)gclpy_args_new(((gclpy_kernel *)self)->layout);
}

static PyObject *kernel_get(PyObject *self, void *what) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  switch ((int)(intptr_t)what) {
  case 0: return Py_NewRef((PyObject *)k->layout);
  case 1: return Py_NewRef(k->name);
  case 2: return PyLong_FromVoidPtr(gcl_kernel_cu_function(k->kernel));
  default: return Py_NewRef(((gclpy_module *)k->module)->context);
  }
}

static PyObject *kernel_repr(PyObject *self) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  return PyUnicode_FromFormat("<gclaunch.Kernel %R, %zu parameters, %zu bytes>", k->name,
                              k->layout->nparams, gcl_layout_size(k->layout->layout));
}

static PyMethodDef kernel_methods[] = {
  {"args", kernel_args, METH_NOARGS,
   "args() -> Args\n\nA new parameter buffer for this kernel (tensors checked against its device)."},
  {"launch", GCLPY_METH(gclpy_kernel_launch), METH_FASTCALL | METH_KEYWORDS,
   "launch(grid, block, args_or_values, *, shared=0, stream=None, cluster=None, cooperative=False)\n\n"
   "Launches the kernel (cuLaunchKernelEx through gcl_launch). grid, block, cluster: an int or a\n"
   "tuple of up to 3 ints. args_or_values: an Args of this kernel, or a sequence of one value per\n"
   "parameter (each converted as args[i] = v into a buffer kept by the kernel). shared: dynamic\n"
   "shared memory bytes (over 48 KiB opted in). stream: None (the context's default stream), an\n"
   "int CUstream, or any object with __cuda_stream__ (torch, CuPy, cuda.core streams).\n"
   "The driver copies the parameters: args may change as soon as launch returns."},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef kernel_getset[] = {
  {"layout", kernel_get, NULL, "the kernel's Layout (from the driver, typed by the signature)", (void *)0},
  {"name", kernel_get, NULL, "the kernel's name", (void *)1},
  {"handle", kernel_get, NULL, "the CUfunction as an int", (void *)2},
  {"context", kernel_get, NULL, "the Context the kernel runs in", (void *)3},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot kernel_slots[] = {
  {Py_tp_dealloc, kernel_dealloc}, {Py_tp_methods, kernel_methods}, {Py_tp_getset, kernel_getset},
  {Py_tp_repr, kernel_repr},
  {Py_tp_doc, "A kernel of a Module (Module.kernel): layout, args(), launch()."}, {0, NULL}};
static PyType_Spec kernel_spec = {"gclaunch.Kernel", sizeof(gclpy_kernel), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, kernel_slots};

int gclpy_driver_init_types(PyObject *m) {
  gclpy.context_type = (PyTypeObject *)PyType_FromSpec(&context_spec);
  gclpy.module_type = (PyTypeObject *)PyType_FromSpec(&module_spec);
  gclpy.kernel_type = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
  if (!gclpy.context_type || !gclpy.module_type || !gclpy.kernel_type) return -1;
  if (PyModule_AddObjectRef(m, "Context", (PyObject *)gclpy.context_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Module", (PyObject *)gclpy.module_type) < 0) return -1;
  return PyModule_AddObjectRef(m, "Kernel", (PyObject *)gclpy.kernel_type);
}
