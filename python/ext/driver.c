/* driver.c -- L8: the types gclaunch.Context, gclaunch.Module, gclaunch.Kernel (making a
 * context and the default contexts are context.c's; launch is launch.c's).
 *
 * Lifetimes follow the C library's ownership: a Module keeps its Context alive, a Kernel its
 * Module (which owns the gcl_kernel and its layout), a kernel's Layout its Module. No object
 * refers back to one that owns it, so there are no cycles. */
#include "gclpy.h"

#include <stdlib.h>
#include <string.h>

/* --- Context ---------------------------------------------------------------------------------- */

struct context_in { int device; };
static const gclpy_arg context_args[] = {GCLPY_ARG(struct context_in, device, gclpy_to_int, 0, INT32_MAX)};
static const gclpy_params context_params = {"Context", context_args, 1, 1, 0};

static PyObject *context_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  gclpy_state *st = (gclpy_state *)PyType_GetModuleState(type);
  struct context_in in = {0};
  if (gclpy_parse_tuple(st, &context_params, args, kwds, &in) < 0) return NULL;
  /* One Context per device for the module's life (the primary context is one per device):
   * streams, events and buffers of Context(0) and of a stream wrapped for device 0 then belong
   * to the same gcl_context, which the library's checks compare. */
  return Py_XNewRef((PyObject *)gclpy_default_context(st, in.device));
}

static void context_dealloc(PyObject *self) {
  gcl_context_destroy(((gclpy_context *)self)->ctx);
  gclpy_free(self);
}

static PyObject *module_wrap(gclpy_context *c, gcl_module *mod) {
  gclpy_module *m = (gclpy_module *)gclpy_alloc(GCLPY_ST(c)->module_type);
  if (!m) return gcl_module_destroy(mod), NULL;
  m->mod = mod, m->context = Py_NewRef((PyObject *)c);
  return (PyObject *)m;
}

static const gclpy_arg load_src = {"path_or_bytes", 0, gclpy_to_image, 0, 0, 0};

/* A module loaded from a path is named by it in messages (gcl_module_load_file: "k.cubin", not
 * "image of 518104 bytes"); one from bytes by its size. */
static PyObject *context_load_path(gclpy_context *c, PyObject *src) {
  PyObject *bpath = gclpy_path_bytes(GCLPY_ST(c), src);
  if (!bpath) return NULL;
  gcl_module *mod = NULL;
  const char *path = PyBytes_AsString(bpath);
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS /* a file read: judged by its first bytes, never waits on a FIFO */
  s = gcl_module_load_file(c->ctx, path, &mod);
  Py_END_ALLOW_THREADS
  Py_DECREF(bpath);
  return s == GCL_OK ? module_wrap(c, mod) : gclpy_raise(GCLPY_ST(c), s);
}

static PyObject *context_load(PyObject *self, PyObject *src) {
  gclpy_context *c = (gclpy_context *)self;
  if (gclpy_is_path(GCLPY_ST(self), src)) return context_load_path(c, src);
  PyObject *bytes = NULL;
  if (gclpy_parse_one(GCLPY_ST(self), "load", &load_src, src, &bytes) < 0) return NULL;
  gcl_module *mod = NULL;
  const char *data = PyBytes_AsString(bytes);
  size_t size = (size_t)PyBytes_Size(bytes);
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_module_load_data(c->ctx, data, size, &mod);
  Py_END_ALLOW_THREADS
  Py_DECREF(bytes);
  return s == GCL_OK ? module_wrap(c, mod) : gclpy_raise(GCLPY_ST(self), s);
}

struct compile_in {
  const char *source, *name;
  gclpy_strs options;
};
static const gclpy_arg compile_args[] = {
  GCLPY_ARG(struct compile_in, source, gclpy_to_str),
  GCLPY_ARG(struct compile_in, name, gclpy_to_str, 0, 0, GCLPY_NONE),
  GCLPY_ARG(struct compile_in, options, gclpy_to_strs),
};
static const gclpy_params compile_params = {"compile", compile_args, 3, 3, 1};

static PyObject *context_compile(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  gclpy_context *c = (gclpy_context *)self;
  gclpy_state *st = GCLPY_ST(self);
  struct compile_in in = {NULL, "kernel.cu", {NULL, 0, NULL}};
  int given = gclpy_parse(st, &compile_params, NULL, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gcl_module *mod = NULL;
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_module_compile(c->ctx, in.source, in.name, in.options.at, in.options.n, &mod);
  Py_END_ALLOW_THREADS
  gclpy_release(st, &compile_params, given, &in);
  return s == GCL_OK ? module_wrap(c, mod) : gclpy_raise(st, s);
}

static PyObject *context_synchronize(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status s;
  Py_BEGIN_ALLOW_THREADS
  s = gcl_context_synchronize(((gclpy_context *)self)->ctx);
  Py_END_ALLOW_THREADS
  if (s != GCL_OK) return gclpy_raise(GCLPY_ST(self), s);
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
    return s == GCL_OK ? PyUnicode_DecodeUTF8(info.name, (Py_ssize_t)strlen(info.name), "backslashreplace")
                       : gclpy_raise(GCLPY_ST(self), s);
  }
  }
}

static PyObject *context_repr(PyObject *self) {
  gclpy_context *c = (gclpy_context *)self;
  return PyUnicode_FromFormat("<gclaunch.Context device %d, sm_%d>", c->device, gcl_context_sm(c->ctx));
}

static PyMethodDef context_methods[] = {
  {"load", context_load, METH_O,
   "load($self, path_or_bytes, /)\n--\n\nLoads a cubin, fatbin, PTX or host-ELF image (format from the\n"
   "content), from a path or a bytes-like object. PTX JIT errors are in the message."},
  {"compile", GCLPY_METH(context_compile), METH_FASTCALL | METH_KEYWORDS,
   "compile($self, /, source, name='kernel.cu', options=())\n--\n\nCompiles CUDA C++ with NVRTC for\n"
   "this device and loads it (gcl_module_compile): -arch=sm_NN of the device after the options\n"
   "unless one starts with -arch or --gpu-architecture; the toolkit's CCCL headers (include/cccl\n"
   "beside the NVRTC library) first on the include path; -I<dir> in options for your own. name:\n"
   "the program's name in messages. GCL_ERROR_COMPILE carries the compiler log; GCL_ERROR_NO_NVRTC\n"
   "when NVRTC is not found."},
  {"synchronize", context_synchronize, METH_NOARGS,
   "synchronize($self, /)\n--\n\nWaits for all work of the context (GCL_ERROR_KERNEL_FAULT after a fault)."},
  /* the runtime (stream.c, buffer.c) */
  {"create_stream", GCLPY_METH(gclpy_context_create_stream), GCLPY_FASTKW, gclpy_doc_create_stream},
  {"create_event", gclpy_context_create_event, METH_NOARGS, gclpy_doc_create_event},
  {"alloc", gclpy_context_alloc, METH_O, gclpy_doc_alloc},
  {"symmetric_alloc", gclpy_context_symmetric_alloc, METH_O, gclpy_doc_symmetric_alloc},
  {"pe_start", GCLPY_METH(gclpy_context_pe_start), GCLPY_FASTKW, gclpy_doc_pe_start},
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
  {Py_tp_doc, "Context(device=0)\n--\n\n"
              "The Context of a device: Context(d) is the same object every time.\n"
              "The primary context of a CUDA device (the driver is opened at run time: without one,\n"
              "gclaunch.Error GCL_ERROR_NO_DRIVER / GCL_ERROR_NO_DEVICE). Loads and compiles modules."},
  {0, NULL}};
static PyType_Spec context_spec = {"gclaunch.Context", sizeof(gclpy_context), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, context_slots};

/* --- Module ----------------------------------------------------------------------------------- */

static int module_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(((gclpy_module *)self)->context);
  return 0;
}

static void module_dealloc(PyObject *self) {
  gclpy_module *m = (gclpy_module *)self;
  PyObject_GC_UnTrack(self);
  gcl_module_destroy(m->mod); /* and its kernels: every Kernel object kept the module alive */
  Py_CLEAR(m->context);
  gclpy_free(self);
}

struct kernel_in { const char *name, *signature; };
static const gclpy_arg kernel_find_args[] = {
  GCLPY_ARG(struct kernel_in, name, gclpy_to_str),
  GCLPY_ARG(struct kernel_in, signature, gclpy_to_str, 0, 0, GCLPY_NONE),
};
static const gclpy_params kernel_params = {"kernel", kernel_find_args, 2, 2, 1};

static PyObject *module_kernel(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_module *m = (gclpy_module *)self;
  gclpy_state *st = GCLPY_ST(self);
  struct kernel_in in = {NULL, NULL};
  if (gclpy_parse(st, &kernel_params, NULL, argv, nargs, kwnames, &in) < 0) return NULL;
  const char *name = in.name, *sig = in.signature;
  gcl_kernel *k = NULL;
  gcl_status s = gcl_module_find_kernel(m->mod, name, sig, &k);
  if (s != GCL_OK) return gclpy_raise(st, s);
  gclpy_kernel *ko = (gclpy_kernel *)gclpy_alloc(st->kernel_type);
  if (!ko) return NULL;
  ko->kernel = k, ko->module = Py_NewRef(self), ko->name = PyUnicode_FromString(name);
  if (!ko->name) return Py_DECREF(ko), NULL;
  ko->layout = (gclpy_layout *)gclpy_layout_wrap(st, gcl_kernel_layout(k), self, m->context);
  if (!ko->layout) return Py_DECREF(ko), NULL;
  return (PyObject *)ko;
}

static PyObject *module_get(PyObject *self, void *what) {
  gclpy_module *m = (gclpy_module *)self;
  if (what) return Py_NewRef(m->context);
  const char *log = gcl_module_log(m->mod);
  return PyUnicode_DecodeUTF8(log, (Py_ssize_t)strlen(log), "backslashreplace");
}

static PyMethodDef module_methods[] = {
  {"kernel", GCLPY_METH(module_kernel), METH_FASTCALL | METH_KEYWORDS,
   "kernel($self, /, name, signature=None)\n--\n\nLooks up a kernel. Its layout comes from the driver;\n"
   "a signature is checked against it (GCL_ERROR_SIGNATURE_MISMATCH naming the parameter and both\n"
   "offsets and sizes) and gives the parameters their types. Without one the parameters are\n"
   "untyped bytes (ints of their width or bytes-like values)."},
  {"attach", gclpy_module_attach, METH_NOARGS, gclpy_doc_attach},
  {"detach", gclpy_module_detach, METH_NOARGS, gclpy_doc_detach},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef module_getset[] = {
  {"log", module_get, NULL, "the JIT or compiler log of the load ('' if none)", NULL},
  {"context", module_get, NULL, "the Context the module was loaded in", (void *)1},
  {"uses_nvshmem", gclpy_module_uses_nvshmem, NULL, gclpy_doc_uses_nvshmem, NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot module_slots[] = {
  {Py_tp_dealloc, module_dealloc}, {Py_tp_traverse, module_traverse},
  {Py_tp_methods, module_methods}, {Py_tp_getset, module_getset},
  {Py_tp_doc, "A loaded module (Context.load / Context.compile); owns its kernels."}, {0, NULL}};
static PyType_Spec module_spec = {"gclaunch.Module", sizeof(gclpy_module), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION, module_slots};

/* --- Kernel ----------------------------------------------------------------------------------- */

static int kernel_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(k->scratch);
  Py_VISIT(k->layout);
  Py_VISIT(k->name);
  Py_VISIT(k->module);
  return 0;
}

/* The scratch args may keep user objects that refer back to the kernel. */
static int kernel_clear(PyObject *self) {
  Py_CLEAR(((gclpy_kernel *)self)->scratch);
  return 0;
}

static void kernel_dealloc(PyObject *self) {
  gclpy_kernel *k = (gclpy_kernel *)self;
  PyObject_GC_UnTrack(self);
  Py_CLEAR(k->scratch);
  gclpy_values_free(k->values);
  Py_CLEAR(k->layout);
  Py_CLEAR(k->name);
  Py_CLEAR(k->module); /* last: it owns the gcl_kernel */
  gclpy_free(self);
}

static PyObject *kernel_args(PyObject *self, PyObject *unused) {
  (void)unused;
  return (PyObject *)gclpy_args_new(GCLPY_ST(self), ((gclpy_kernel *)self)->layout);
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
   "args($self, /)\n--\n\nA new parameter buffer for this kernel (tensors checked against its device)."},
  {"launch", GCLPY_METH(gclpy_kernel_launch), GCLPY_FASTKW, gclpy_launch_doc},
  {"_launch_loop_c", GCLPY_METH(gclpy_kernel_launch_loop), GCLPY_FASTKW, gclpy_launch_loop_doc},
  /* the runtime (device.c) */
  {"occupancy", GCLPY_METH(gclpy_kernel_occupancy), GCLPY_FASTKW, gclpy_doc_occupancy},
  {"max_cooperative_grid", GCLPY_METH(gclpy_kernel_max_cooperative_grid), GCLPY_FASTKW,
   gclpy_doc_max_cooperative_grid},
  {"active_clusters", GCLPY_METH(gclpy_kernel_active_clusters), GCLPY_FASTKW,
   gclpy_doc_active_clusters},
  {"persistent_config", GCLPY_METH(gclpy_kernel_persistent_config), GCLPY_FASTKW,
   gclpy_doc_persistent_config},
  {"attribute", gclpy_kernel_attribute, METH_O, gclpy_doc_attribute},
  {"set_attribute", GCLPY_METH(gclpy_kernel_set_attribute), GCLPY_FASTKW, gclpy_doc_set_attribute},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef kernel_getset[] = {
  {"layout", kernel_get, NULL, "the kernel's Layout (from the driver, typed by the signature)", (void *)0},
  {"name", kernel_get, NULL, "the kernel's name", (void *)1},
  {"handle", kernel_get, NULL, "the CUfunction as an int", (void *)2},
  {"context", kernel_get, NULL, "the Context the kernel runs in", (void *)3},
  {"attributes", gclpy_kernel_attributes, NULL, gclpy_doc_attributes, NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot kernel_slots[] = {
  {Py_tp_dealloc, kernel_dealloc}, {Py_tp_traverse, kernel_traverse}, {Py_tp_clear, kernel_clear},
  {Py_tp_methods, kernel_methods}, {Py_tp_getset, kernel_getset},
  {Py_tp_repr, kernel_repr},
  {Py_tp_doc, "A kernel of a Module (Module.kernel): layout, args(), launch()."}, {0, NULL}};
static PyType_Spec kernel_spec = {"gclaunch.Kernel", sizeof(gclpy_kernel), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION, kernel_slots};

int gclpy_driver_init_types(PyObject *m, gclpy_state *st) {
  st->context_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &context_spec, NULL);
  st->module_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &module_spec, NULL);
  st->kernel_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &kernel_spec, NULL);
  if (!st->context_type || !st->module_type || !st->kernel_type) return -1;
  if (PyModule_AddType(m, st->context_type) < 0 || PyModule_AddType(m, st->module_type) < 0) return -1;
  return PyModule_AddType(m, st->kernel_type);
}
