/* module.c -- L9: the _gclaunch module: multi-phase init (PyModuleDef_Init, Py_mod_exec) with
 * its state in the module object (gclpy_state), the module functions (inspect, status_name) and
 * the constants. Every other file is below this one (gclpy.h lists the layers). */
#include "gclpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- inspect ------------------------------------------------------------------------------ */

/* One kernel as `gclaunch inspect --json` prints it. */
static PyObject *kernel_dict(gclpy_state *st, const gcl_image *img, size_t k) {
  gcl_image_kernel_info info;
  if (gcl_image_kernel(img, k, &info) != GCL_OK) return gclpy_raise(st, GCL_ERROR_BAD_IMAGE);
  PyObject *params = PyList_New(0);
  for (size_t p = 0; params && p < info.param_count; p++) {
    size_t off = 0, size = 0, align = 0;
    gcl_image_param(img, k, p, &off, &size, &align);
    PyObject *d = align ? Py_BuildValue("{s:n,s:n,s:n,s:n}", "index", (Py_ssize_t)p, "offset",
                                        (Py_ssize_t)off, "size", (Py_ssize_t)size, "align",
                                        (Py_ssize_t)align)
                        : Py_BuildValue("{s:n,s:n,s:n}", "index", (Py_ssize_t)p, "offset",
                                        (Py_ssize_t)off, "size", (Py_ssize_t)size);
    gcl_param_kind pk;
    gcl_scalar sc;
    if (d && gcl_image_param_type(img, k, p, &pk, &sc) == GCL_OK) { /* PTX says; cubins do not */
      PyObject *ks = pk == GCL_PARAM_POINTER  ? PyUnicode_FromString("ptr")
                     : pk == GCL_PARAM_SCALAR ? PyUnicode_FromString(gcl_scalar_name(sc))
                                              : PyUnicode_FromFormat("bytes(%zu) align(%zu)",
                                                                     size, align);
      if (!ks || PyDict_SetItemString(d, "kind", ks) < 0) Py_CLEAR(d);
      Py_XDECREF(ks);
    }
    if (!d || PyList_Append(params, d) < 0) Py_CLEAR(params);
    Py_XDECREF(d);
  }
  if (!params) return NULL;
  PyObject *name = PyUnicode_DecodeUTF8(info.name, (Py_ssize_t)strlen(info.name), "backslashreplace");
  if (!name) return Py_DECREF(params), NULL;
  int waits = gcl_image_kernel_waits(img, k); /* griddepcontrol.wait: True, False, None */
  PyObject *w = waits > 0 ? Py_True : waits == 0 ? Py_False : Py_None;
  return Py_BuildValue("{s:N,s:n,s:N,s:O}", "name", name, "param_bytes",
                       (Py_ssize_t)info.param_bytes, "params", params, "waits", w);
}

/* The arguments of inspect. */
struct inspect_in {
  PyObject *path_or_bytes; /* the image's bytes */
  int arch;                /* 0: the image's own */
};
static const gclpy_arg inspect_args[] = {
  GCLPY_ARG(struct inspect_in, path_or_bytes, gclpy_to_image),
  GCLPY_ARG(struct inspect_in, arch, gclpy_to_arch),
};
static const gclpy_params inspect_params = {"inspect", inspect_args, 2, 2, 1};

static PyObject *inspect(PyObject *module, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames) {
  gclpy_state *st = gclpy_module_state(module);
  struct inspect_in in = {NULL, 0};
  int given = gclpy_parse(st, &inspect_params, NULL, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  PyObject *bytes = in.path_or_bytes;
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(PyBytes_AsString(bytes), (size_t)PyBytes_Size(bytes), in.arch, &img);
  gclpy_release(st, &inspect_params, given, &in);
  if (s != GCL_OK) return gclpy_raise(st, s);
  size_t n = gcl_image_kernel_count(img);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t k = 0; list && k < n; k++) {
    PyObject *d = kernel_dict(st, img, k);
    if (!d) Py_CLEAR(list);
    else PyList_SetItem(list, (Py_ssize_t)k, d);
  }
  gcl_image_destroy(img);
  return list;
}

/* --- status_name ---------------------------------------------------------------------------- */

static const gclpy_arg status_code = {"code", 0, gclpy_to_int, INT32_MIN, INT32_MAX, 0};

static PyObject *status_name(PyObject *module, PyObject *code) {
  int c;
  if (gclpy_parse_one(gclpy_module_state(module), "status_name", &status_code, code, &c) < 0)
    return NULL;
  return PyUnicode_FromString(gcl_status_name((gcl_status)c));
}

static PyMethodDef module_methods[] = {
  {"inspect", GCLPY_METH(inspect), GCLPY_FASTKW,
   "inspect($module, /, path_or_bytes, arch=None)\n--\n\n"
   "Reads a cubin, fatbin, PTX or host ELF image on the CPU (no GPU, no driver) and returns its\n"
   "kernels as `gclaunch inspect --json` lists them: dicts with 'name', 'param_bytes' and\n"
   "'params' (dicts with 'index', 'offset', 'size', and 'align' where the image tells it; PTX\n"
   "images add 'kind', the parameter's type as signature text). arch: None (the image's own;\n"
   "PTX: sm_90), 90 or 'sm_90' (the fatbin entry, and the architecture PTX offsets are for;\n"
   "gclaunch.RangeError outside 0 ... 1000). Raises gclaunch.Error (GCL_ERROR_IO,\n"
   "GCL_ERROR_BAD_IMAGE) with the library's message."},
  {"device_count", gclpy_device_count, METH_NOARGS, gclpy_doc_device_count},
  {"_device_info", GCLPY_METH(gclpy_device_info), GCLPY_FASTKW, gclpy_doc_device_info},
  {"nvshmem_info", gclpy_nvshmem_info, METH_NOARGS, gclpy_doc_nvshmem_info},
  {"nvshmem_open", gclpy_nvshmem_open, METH_O, gclpy_doc_nvshmem_open},
  {"_nvshmem_wheel", gclpy_nvshmem_wheel, METH_O, gclpy_doc_nvshmem_wheel},
  {"pe_unique_id", gclpy_pe_unique_id, METH_NOARGS, gclpy_doc_pe_unique_id},
  {"pe_id", gclpy_pe_id, METH_NOARGS, gclpy_doc_pe_id},
  {"pe_count", gclpy_pe_count, METH_NOARGS, gclpy_doc_pe_count},
  {"pe_context", gclpy_pe_context, METH_NOARGS, gclpy_doc_pe_context},
  {"pe_barrier", GCLPY_METH(gclpy_pe_barrier), GCLPY_FASTKW, gclpy_doc_pe_barrier},
  {"pe_stop", gclpy_pe_stop, METH_NOARGS, gclpy_doc_pe_stop},
  {"status_name", status_name, METH_O,
   "status_name($module, code, /)\n--\n\nThe name of a gcl_status value (\"GCL_ERROR_TENSOR\" for 7;\n"
   "\"GCL_UNKNOWN_STATUS\"-like text for an unknown one; gclaunch.RangeError outside int32)."},
  {NULL, NULL, 0, NULL}};

/* --- module state and init ------------------------------------------------------------------- */

static int add_errors(PyObject *m, gclpy_state *st) {
  st->error = PyErr_NewExceptionWithDoc(
      "gclaunch.Error",
      "A call of the gclaunch C library failed.\n\n"
      "Attributes: status (the gcl_status name, e.g. 'GCL_ERROR_TENSOR'), code (its int value),\n"
      "cuda_error (the CUresult of a failed driver call, else 0); str(e) is the library's\n"
      "message (gcl_last_error()), naming the parameter and the expected and actual values.",
      NULL, NULL);
  if (!st->error) return -1;
  PyObject *bases = PyTuple_Pack(2, st->error, PyExc_OverflowError);
  if (!bases) return -1;
  st->range_error = PyErr_NewExceptionWithDoc(
      "gclaunch.RangeError",
      "An int out of the range its C type or its argument takes, or a float that would become\n"
      "inf in the field's type (a gclaunch.Error with status GCL_ERROR_INVALID_ARGUMENT, and an\n"
      "OverflowError).", bases, NULL);
  Py_DECREF(bases);
  if (!st->range_error) return -1;
  st->tensor_error = PyErr_NewExceptionWithDoc(
      "gclaunch.TensorError",
      "A tensor or a tensor map was refused (a gclaunch.Error with status GCL_ERROR_TENSOR),\n"
      "before any driver call: the message names the tensor, the DLPack dimension or option,\n"
      "the value and the limit (docs/tensormap-rules.md lists the tensor-map rules).",
      st->error, NULL);
  if (!st->tensor_error) return -1;
  if (PyModule_AddObjectRef(m, "Error", st->error) < 0 ||
      PyModule_AddObjectRef(m, "TensorError", st->tensor_error) < 0)
    return -1;
  return PyModule_AddObjectRef(m, "RangeError", st->range_error);
}

static int add_constants(PyObject *m, gclpy_state *st) {
  if (PyModule_AddStringConstant(m, "__version__", gcl_version()) < 0) return -1;
  if (PyModule_AddIntConstant(m, "version_number", (long)gcl_version_number()) < 0) return -1;
  if (PyModule_AddIntConstant(m, "dlpack_c_api", st->use_c_api) < 0) return -1;
#define GCLPY_X(name, value, text) if (PyModule_AddIntConstant(m, #name, value) < 0) return -1;
  GCL_STATUS_LIST(GCLPY_X)
#undef GCLPY_X
  return 0;
}

static int intern_strings(gclpy_state *st) {
  static const char *const launch[GCLPY_LAUNCH_KW] = {"grid", "block", "args_or_values", "shared",
                                                      "stream", "cluster", "cooperative", "args",
                                                      "pdl", "priority"};
  for (int i = 0; i < GCLPY_LAUNCH_KW; i++)
    if (!(st->launch_kw[i] = PyUnicode_InternFromString(launch[i]))) return -1;
  if (!(st->str_dlpack = PyUnicode_InternFromString("__dlpack__")) ||
      !(st->str_cuda_stream = PyUnicode_InternFromString("__cuda_stream__")) ||
      !(st->str_fspath = PyUnicode_InternFromString("__fspath__")) ||
      !(st->str_cuda_stream_attr = PyUnicode_InternFromString("cuda_stream")))
    return -1;
  st->empty_tuple = PyTuple_New(0);
  st->contexts = PyDict_New();
  st->stream_kinds = PyDict_New();
  return st->empty_tuple && st->contexts && st->stream_kinds ? 0 : -1;
}

static int module_exec(PyObject *m) {
  gclpy_state *st = gclpy_module_state(m);
  if (intern_strings(st) < 0 || gclpy_dlpack_init(st) < 0 || add_errors(m, st) < 0 ||
      add_constants(m, st) < 0 || gclpy_layout_init_types(m, st) < 0 ||
      gclpy_tensormap_init_types(m, st) < 0 || gclpy_args_init_types(m, st) < 0 ||
      gclpy_driver_init_types(m, st) < 0 || gclpy_stream_init_types(m, st) < 0 ||
      gclpy_event_init_types(m, st) < 0 || gclpy_graph_init_types(m, st) < 0 ||
      gclpy_buffer_init_types(m, st) < 0 || gclpy_maps_init_types(m, st) < 0)
    return -1;
  return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  gclpy_state *st = gclpy_module_state(m);
  if (!st) return 0;
#define GCLPY_V(field) Py_VISIT(st->field);
  GCLPY_STATE_OBJECTS(GCLPY_V)
#undef GCLPY_V
  Py_VISIT(st->pe_context);
  return 0;
}

static int module_clear(PyObject *m) {
  gclpy_state *st = gclpy_module_state(m);
  if (!st) return 0;
  st->last_producer_type = NULL, st->last_producer = NULL;
  st->last_stream_type = NULL, st->last_stream_kind = 0;
#define GCLPY_C(field) Py_CLEAR(st->field);
  GCLPY_STATE_OBJECTS(GCLPY_C)
#undef GCLPY_C
  return 0;
}

static void module_free(void *m) {
  gclpy_state *st = gclpy_module_state((PyObject *)m);
  if (st) gclpy_pe_teardown(st);
  module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, (void *)module_exec}, {0, NULL}};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_gclaunch",
  "The C extension behind `import gclaunch` (see the package's docstring).", sizeof(gclpy_state),
  module_methods, module_slots, module_traverse, module_clear, module_free};

PyMODINIT_FUNC PyInit__gclaunch(void);
PyMODINIT_FUNC PyInit__gclaunch(void) { return PyModuleDef_Init(&module_def); }
