/* module.c -- the _gclaunch module: errors, keyword parsing, inspect, and module init. */
#include "gclpy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gclpy_state gclpy;

/* --- errors ------------------------------------------------------------------------------ */

/* Builds an Error (or the range error) carrying .status, .code and .cuda_error; sets it. */
static PyObject *raise_with(PyObject *type, gcl_status s, const char *msg, int cuda_error) {
  PyObject *exc = PyObject_CallFunction(type, "s", msg);
  if (!exc) return NULL;
  PyObject *name = PyUnicode_FromString(gcl_status_name(s));
  PyObject *code = PyLong_FromLong((long)s);
  PyObject *cu = PyLong_FromLong(cuda_error);
  if (name && code && cu && PyObject_SetAttrString(exc, "status", name) == 0 &&
      PyObject_SetAttrString(exc, "code", code) == 0 &&
      PyObject_SetAttrString(exc, "cuda_error", cu) == 0)
    PyErr_SetObject(type, exc);
  Py_XDECREF(name), Py_XDECREF(code), Py_XDECREF(cu), Py_DECREF(exc);
  return NULL;
}

PyObject *gclpy_raise(gcl_status s) {
  return raise_with(gclpy.error, s, gcl_last_error(), gcl_last_cuda_error());
}

/* Messages are formatted by PyUnicode_FromFormatV (%R, %zd, %llu ...). */
static PyObject *raise_v(PyObject *type, gcl_status s, const char *fmt, va_list ap) {
  PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
  if (!msg) return NULL;
  const char *text = PyUnicode_AsUTF8AndSize(msg, NULL);
  if (text) raise_with(type, s, text, 0);
  Py_DECREF(msg);
  return NULL;
}

PyObject *gclpy_raise_msg(gcl_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(gclpy.error, s, fmt, ap);
  va_end(ap);
  return NULL;
}

PyObject *gclpy_raise_range(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  raise_v(gclpy.range_error, GCL_ERROR_INVALID_ARGUMENT, fmt, ap);
  va_end(ap);
  return NULL;
}

const char *gclpy_scalar_name(gcl_scalar s) { return gcl_scalar_name(s); }

const char *gclpy_kind_name(gcl_param_kind k) {
  static const char *const names[] = {"scalar", "pointer", "tensormap", "bytes", "struct", "array"};
  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

void gclpy_tname(PyObject *obj, char *buf, size_t cap) {
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__name__");
  const char *s = name ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
  if (!s) PyErr_Clear(), s = "?";
  snprintf(buf, cap, "%s", s);
  Py_XDECREF(name);
}

PyObject *gclpy_type_error(const char *what, PyObject *obj) {
  char t[128];
  gclpy_tname(obj, t, sizeof t);
  return PyErr_Format(PyExc_TypeError, "%s, got %s", what, t);
}

/* --- keyword parsing ---------------------------------------------------------------------- */

static int name_index(PyObject *key, const char *const *names, int count) {
  for (int i = 0; i < count; i++) {
    const char *k = PyUnicode_AsUTF8AndSize(key, NULL);
    if (k && strcmp(k, names[i]) == 0) return i;
  }
  return -1;
}

int gclpy_parse(const char *fn, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames,
                const char *const *names, int count, int npos, int required, PyObject **vals) {
  for (int i = 0; i < count; i++) vals[i] = NULL;
  if (nargs > npos)
    return PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                        fn, npos, nargs), -1;
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = argv[i];
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nkw; j++) {
    PyObject *key = PyTuple_GetItem(kwnames, j);
    int i = name_index(key, names, count);
    if (i < 0) return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                                   fn, key), -1;
    if (vals[i]) return PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                                     fn, names[i]), -1;
    vals[i] = argv[nargs + j];
  }
  for (int i = 0; i < required; i++)
    if (!vals[i])
      return PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]), -1;
  return 0;
}

/* --- inspect ------------------------------------------------------------------------------ */

/* arch: None (0: the image's own), an int (90) or "sm_90". */
static int parse_arch(PyObject *arch, int *sm) {
  *sm = 0;
  if (!arch || arch == Py_None) return 0;
  if (PyLong_Check(arch)) {
    long v = PyLong_AsLong(arch);
    if (v == -1 && PyErr_Occurred()) return -1;
    return *sm = (int)v, (v < 0 || v > 1000) ? (gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT,
                                                 "arch: expected sm_NN or NN, got %ld", v), -1) : 0;
  }
  if (!PyUnicode_Check(arch))
    return gclpy_type_error("arch: expected int or str", arch), -1;
  const char *s = PyUnicode_AsUTF8AndSize(arch, NULL);
  if (!s) return -1;
  if (strncmp(s, "sm_", 3) == 0) s += 3;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v <= 0 || v > 1000) {
    gclpy_raise_msg(GCL_ERROR_INVALID_ARGUMENT, "arch: expected sm_NN or NN, got '%s'",
                    PyUnicode_AsUTF8AndSize(arch, NULL));
    return -1;
  }
  return *sm = (int)v, 0;
}

/* One kernel as `gclaunch inspect --json` prints it. */
static PyObject *kernel_dict(const gcl_image *img, size_t k) {
  gcl_image_kernel_info info;
  if (gcl_image_kernel(img, k, &info) != GCL_OK) return gclpy_raise(GCL_ERROR_BAD_IMAGE);
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
  return Py_BuildValue("{s:s,s:n,s:N}", "name", info.name, "param_bytes",
                       (Py_ssize_t)info.param_bytes, "params", params);
}

/* The bytes of path_or_bytes: a file read by the library, or a bytes-like object. */
static PyObject *image_bytes(PyObject *src) {
  if (PyUnicode_Check(src) || PyObject_HasAttr(src, gclpy.str_fspath)) {
    PyObject *path = PyOS_FSPath(src), *bpath = NULL;
    if (!path || !PyUnicode_FSConverter(path, &bpath)) return Py_XDECREF(path), NULL;
    Py_DECREF(path);
    void *data = NULL;
    size_t size = 0;
    gcl_status s = gcl_file_read(PyBytes_AsString(bpath), &data, &size);
    Py_DECREF(bpath);
    if (s != GCL_OK) return gclpy_raise(s);
    PyObject *b = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    gcl_file_free(data);
    return b;
  }
  if (PyBytes_Check(src)) return Py_NewRef(src);
  PyObject *mv = PyMemoryView_FromObject(src);
  if (!mv) {
    PyErr_Clear();
    return gclpy_type_error("expected a path (str or os.PathLike) or a bytes-like object", src);
  }
  PyObject *b = PyBytes_FromObject(mv);
  Py_DECREF(mv);
  return b;
}

PyObject *gclpy_inspect(PyObject *self, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames) {
  (void)self;
  static const char *const names[] = {"path_or_bytes", "arch"};
  PyObject *v[2];
  int sm;
  if (gclpy_parse("inspect", argv, nargs, kwnames, names, 2, 2, 1, v) < 0 || parse_arch(v[1], &sm) < 0)
    return NULL;
  PyObject *bytes = image_bytes(v[0]);
  if (!bytes) return NULL;
  gcl_image *img = NULL;
  gcl_status s = gcl_image_parse(PyBytes_AsString(bytes), (size_t)PyBytes_Size(bytes), sm, &img);
  Py_DECREF(bytes);
  if (s != GCL_OK) return gclpy_raise(s);
  size_t n = gcl_image_kernel_count(img);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t k = 0; list && k < n; k++) {
    PyObject *d = kernel_dict(img, k);
    if (!d) Py_CLEAR(list);
    else PyList_SetItem(list, (Py_ssize_t)k, d);
  }
  gcl_image_destroy(img);
  return list;
}

PyObject *gclpy_image_bytes(PyObject *src) { return image_bytes(src); }

/* --- module --------------------------------------------------------------------------------- */

static PyObject *status_name(PyObject *self, PyObject *code) {
  (void)self;
  long c = PyLong_AsLong(code);
  if (c == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(gcl_status_name((gcl_status)c));
}

static PyMethodDef module_methods[] = {
  {"inspect", GCLPY_METH(gclpy_inspect), METH_FASTCALL | METH_KEYWORDS,
   "inspect(path_or_bytes, arch=None) -> list[dict]\n\n"
   "Reads a cubin, fatbin, PTX or host ELF image on the CPU (no GPU, no driver) and returns its\n"
   "kernels as `gclaunch inspect --json` lists them: dicts with 'name', 'param_bytes' and\n"
   "'params' (dicts with 'index', 'offset', 'size', and 'align' where the image tells it; PTX\n"
   "images add 'kind', the parameter's type as signature text). arch: None (the image's own;\n"
   "PTX: sm_90), 90 or 'sm_90' (the fatbin entry, and the architecture PTX offsets are for).\n"
   "Raises gclaunch.Error (GCL_ERROR_IO, GCL_ERROR_BAD_IMAGE) with the library's message."},
  {"status_name", status_name, METH_O,
   "status_name(code) -> str\n\nThe name of a gcl_status value (\"GCL_ERROR_TENSOR\" for 7)."},
  {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "_gclaunch",
  "The C extension behind `import gclaunch` (see the package's docstring).", -1, module_methods,
  NULL, NULL, NULL, NULL};

static int add_errors(PyObject *m) {
  gclpy.error = PyErr_NewExceptionWithDoc(
      "gclaunch.Error",
      "A call of the gclaunch C library failed.\n\n"
      "Attributes: status (the gcl_status name, e.g. 'GCL_ERROR_TENSOR'), code (its int value),\n"
      "cuda_error (the CUresult of a failed driver call, else 0); str(e) is the library's\n"
      "message (gcl_last_error()), naming the parameter and the expected and actual values.",
      NULL, NULL);
  if (!gclpy.error) return -1;
  PyObject *bases = PyTuple_Pack(2, gclpy.error, PyExc_OverflowError);
  if (!bases) return -1;
  gclpy.range_error = PyErr_NewExceptionWithDoc(
      "gclaunch.RangeError",
      "An int out of the range of the field's C type (a gclaunch.Error with status\n"
      "GCL_ERROR_INVALID_ARGUMENT, and an OverflowError).", bases, NULL);
  Py_DECREF(bases);
  if (!gclpy.range_error) return -1;
  if (PyModule_AddObjectRef(m, "Error", gclpy.error) < 0) return -1;
  return PyModule_AddObjectRef(m, "RangeError", gclpy.range_error);
}

static int add_constants(PyObject *m) {
  if (PyModule_AddStringConstant(m, "__version__", gcl_version()) < 0) return -1;
  if (PyModule_AddIntConstant(m, "version_number", (long)gcl_version_number()) < 0) return -1;
  if (PyModule_AddIntConstant(m, "dlpack_c_api", gclpy_use_c_api) < 0) return -1;
#define GCLPY_X(name, value, text) if (PyModule_AddIntConstant(m, #name, value) < 0) return -1;
  GCL_STATUS_LIST(GCLPY_X)
#undef GCLPY_X
  return 0;
}

static int intern_strings(void) {
#define GCLPY_S(field, text) if (!(gclpy.field = PyUnicode_InternFromString(text))) return -1;
  GCLPY_S(str_dlpack, "__dlpack__") GCLPY_S(str_cuda_stream, "__cuda_stream__")
  GCLPY_S(str_fspath, "__fspath__") GCLPY_S(kw_shared, "shared") GCLPY_S(kw_stream, "stream")
  GCLPY_S(kw_cluster, "cluster") GCLPY_S(kw_cooperative, "cooperative")
  GCLPY_S(kw_grid, "grid") GCLPY_S(kw_block, "block") GCLPY_S(kw_args, "args")
#undef GCLPY_S
  const char *c_api = getenv("GCL_DLPACK_C_API");
  gclpy_use_c_api = !(c_api && strcmp(c_api, "0") == 0); /* on unless GCL_DLPACK_C_API=0 */
  gclpy.empty_tuple = PyTuple_New(0);
  gclpy.contexts = PyDict_New();
  return gclpy.empty_tuple && gclpy.contexts ? 0 : -1;
}

PyMODINIT_FUNC PyInit__gclaunch(void);
PyMODINIT_FUNC PyInit__gclaunch(void) {
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (intern_strings() < 0 || add_errors(m) < 0 || add_constants(m) < 0 ||
      gclpy_layout_init_types(m) < 0 || gclpy_args_init_types(m) < 0 ||
      gclpy_tensormap_init_types(m) < 0 || gclpy_driver_init_types(m) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
