/* pe.c -- L5: NVSHMEM from Python (docs/multigpu.md): which host library was found, unique ids,
 * this process's PE started on a Context (Context.pe_start), its rank, count, barrier and stop,
 * Module.attach/detach/uses_nvshmem, and PE lists for Args.set_peer_tensormaps. Symmetric
 * Buffers are buffer.c's, peer tensor maps tensormap.c's. Every rule is the library's (runtime.h
 * "Several GPUs"); the one added here: pe_stop refuses while symmetric Buffers are open (their
 * memory would go under them), and the PE's Context is kept alive while the PE runs. */
#include "gclpy.h"

#include <limits.h>
#include <string.h>

/* --- the library -------------------------------------------------------------------------------- */

/* The pip wheel's host library, found by the package through Python's import system
 * (gclaunch/__init__.py) and opened before the first call that needs NVSHMEM, unless
 * GCL_NVSHMEM_PATH names one. Process-wide like the library it names (one per process). */
static char wheel_path[1024];
static bool wheel_tried;

static void wheel_first(void) {
  const char *env = getenv("GCL_NVSHMEM_PATH");
  if (wheel_tried || !wheel_path[0] || (env && *env)) return;
  wheel_tried = true;
  gcl_nvshmem_open(wheel_path); /* failing, the library's own search still runs */
}

const char gclpy_doc_nvshmem_wheel[] =
    "_nvshmem_wheel($module, path, /)\n--\n\nRemembers the NVSHMEM wheel's host library (found by\n"
    "import at package load) to open before the first call that needs NVSHMEM.";

static const gclpy_arg wheel_arg = {"path", 0, gclpy_to_str, 0, 0, 0};

PyObject *gclpy_nvshmem_wheel(PyObject *module, PyObject *path) {
  const char *p = NULL;
  if (gclpy_parse_one(gclpy_module_state(module), "_nvshmem_wheel", &wheel_arg, path, &p) < 0)
    return NULL;
  snprintf(wheel_path, sizeof wheel_path, "%s", p);
  wheel_tried = false;
  Py_RETURN_NONE;
}

const char gclpy_doc_nvshmem_open[] =
    "nvshmem_open($module, path, /)\n--\n\nOpens NVSHMEM's host library at path (the file, or a folder\n"
    "holding libnvshmem_host.so.3) instead of searching (gcl_nvshmem_open). One per process: the\n"
    "library already open again is fine, another is gclaunch.Error GCL_ERROR_NVSHMEM naming both;\n"
    "GCL_ERROR_NO_NVSHMEM naming what was tried and why. Without it gclaunch opens the pip wheel\n"
    "nvidia-nvshmem-cu13 that `import nvidia.nvshmem` finds (unless GCL_NVSHMEM_PATH is set), then\n"
    "searches as the C library does.";

PyObject *gclpy_nvshmem_open(PyObject *module, PyObject *path) {
  gclpy_state *st = gclpy_module_state(module);
  PyObject *b = gclpy_path_bytes(st, path);
  if (!b) return NULL;
  gcl_status s = gcl_nvshmem_open(PyBytes_AsString(b));
  Py_DECREF(b);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}

const char gclpy_doc_nvshmem_info[] =
    "nvshmem_info($module, /)\n--\n\n-> dict: 'found' (bool), 'path' (the libnvshmem_host.so.3 opened,\n"
    "or found too old; '(not found)'), 'version' ('3.4.5', or None) and 'error' (None, or why it\n"
    "cannot be used: every path tried, or both versions). Opens the library once (GCL_NVSHMEM_PATH,\n"
    "else the pip wheel found by import, else the loader's search and $NVSHMEM_HOME); raises\n"
    "nothing.";

PyObject *gclpy_nvshmem_info(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  wheel_first();
  gcl_status s = gcl_nvshmem_init();
  PyObject *error = s == GCL_OK ? Py_NewRef(Py_None) : PyUnicode_FromString(gcl_last_error());
  int v[3];
  PyObject *version = gcl_nvshmem_version(&v[0], &v[1], &v[2]) == GCL_OK
                          ? PyUnicode_FromFormat("%d.%d.%d", v[0], v[1], v[2])
                          : Py_NewRef(Py_None);
  if (!error || !version) return Py_XDECREF(error), Py_XDECREF(version), NULL;
  return Py_BuildValue("{s:O,s:s,s:N,s:N}", "found", s == GCL_OK ? Py_True : Py_False, "path",
                       gcl_nvshmem_path(), "version", version, "error", error);
}

const char gclpy_doc_pe_unique_id[] =
    "pe_unique_id($module, /)\n--\n\n-> bytes: a fresh NVSHMEM unique id (128 bytes) for this run. Rank 0\n"
    "makes it before any PE starts and sends it to the other ranks by any channel\n"
    "(torch.distributed, a pipe, a file); every rank passes it to Context.pe_start.";

PyObject *gclpy_pe_unique_id(PyObject *module, PyObject *unused) {
  (void)unused;
  gcl_pe_unique_id id;
  wheel_first();
  gcl_status s = gcl_pe_unique_id_create(&id);
  if (s != GCL_OK) return gclpy_raise(gclpy_module_state(module), s);
  return PyBytes_FromStringAndSize((const char *)id.bytes, GCL_PE_UNIQUE_ID_BYTES);
}

/* --- starting and stopping the PE --------------------------------------------------------------- */

/* unique_id: None (NULL *has) or a bytes-like object of exactly 128 bytes. */
static int unique_id_arg(gclpy_state *st, PyObject *v, gcl_pe_unique_id *id, bool *has) {
  *has = false;
  if (!v || v == Py_None) return 0;
  PyObject *mv = PyMemoryView_FromObject(v);
  PyObject *b = mv ? PyBytes_FromObject(mv) : NULL;
  Py_XDECREF(mv);
  if (!b) return PyErr_Clear(), gclpy_type_error("pe_start: unique_id takes the 128 bytes of "
                                                 "gclaunch.pe_unique_id() (bytes-like) or None", v), -1;
  Py_ssize_t n = PyBytes_Size(b);
  if (n != GCL_PE_UNIQUE_ID_BYTES) {
    Py_DECREF(b);
    gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "pe_start: unique_id: expected the %d bytes of "
                    "gclaunch.pe_unique_id(), got %zd", GCL_PE_UNIQUE_ID_BYTES, n);
    return -1;
  }
  memcpy(id->bytes, PyBytes_AsString(b), GCL_PE_UNIQUE_ID_BYTES);
  Py_DECREF(b);
  return *has = true, 0;
}

const char gclpy_doc_pe_start[] =
    "pe_start($self, /, unique_id=None, rank=0, count=1)\n--\n\nStarts this process's NVSHMEM PE on this\n"
    "Context's device: rank of count, bootstrapped from rank 0's unique_id (gclaunch.pe_unique_id();\n"
    "collective: every rank calls it with the same id and count; it returns once all joined).\n"
    "unique_id None: a single PE (count 1). One PE per process: a second start is gclaunch.Error\n"
    "GCL_ERROR_NVSHMEM; rank outside 0 ... count - 1, or no id for count > 1,\n"
    "GCL_ERROR_INVALID_ARGUMENT; no usable NVSHMEM, GCL_ERROR_NO_NVSHMEM. The Context is kept alive\n"
    "until pe_stop. Keep NVSHMEM_DISABLE_NVLS=1 in the environment.";

struct pe_start_in { PyObject *unique_id; int rank, count; };
static const gclpy_arg pe_start_args[] = {
  GCLPY_ARG(struct pe_start_in, unique_id, gclpy_to_object),
  GCLPY_ARG(struct pe_start_in, rank, gclpy_to_int, INT_MIN, INT_MAX),
  GCLPY_ARG(struct pe_start_in, count, gclpy_to_int, INT_MIN, INT_MAX),
};
static const gclpy_params pe_start_params = {"pe_start", pe_start_args, 3, 3, 0};

PyObject *gclpy_context_pe_start(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  struct pe_start_in in = {NULL, 0, 1};
  int rank, count;
  gcl_pe_unique_id id;
  bool has;
  if (gclpy_parse(st, &pe_start_params, NULL, argv, nargs, kwnames, &in) < 0 ||
      unique_id_arg(st, in.unique_id, &id, &has) < 0)
    return NULL;
  rank = in.rank, count = in.count;
  gcl_context *ctx = ((gclpy_context *)self)->ctx;
  gcl_status s;
  wheel_first();
  Py_BEGIN_ALLOW_THREADS /* collective: waits for every rank */
  s = gcl_pe_start(ctx, has ? &id : NULL, rank, count);
  Py_END_ALLOW_THREADS
  if (s != GCL_OK) return gclpy_raise(st, s);
  PyObject *old = st->pe_context;
  st->pe_context = Py_NewRef(self);
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

const char gclpy_doc_pe_stop[] =
    "pe_stop($module, /)\n--\n\nStops this process's PE (collective; nvshmemx_hostlib_finalize). Refused\n"
    "(gclaunch.Error GCL_ERROR_NVSHMEM, nothing changed) when no PE is started, while symmetric\n"
    "Buffers are open (close them first: each close is collective) and while modules are attached\n"
    "(detach them, or let them go). A new PE may start afterwards.";

PyObject *gclpy_pe_stop(PyObject *module, PyObject *unused) {
  (void)unused;
  gclpy_state *st = gclpy_module_state(module);
  if (st->symmetric_open > 0)
    return gclpy_raise_msg(st, GCL_ERROR_NVSHMEM, "pe_stop: %zd symmetric Buffer%s still open: "
                           "close() each first (collectively, on every PE; a Buffer refuses while "
                           "tensors or Args use it)", st->symmetric_open,
                           st->symmetric_open == 1 ? " is" : "s are");
  gcl_status s = gcl_pe_stop();
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_CLEAR(st->pe_context);
  Py_RETURN_NONE;
}

void gclpy_pe_teardown(gclpy_state *st) {
  if (!st->pe_context) return;
  if (gcl_pe_context() == ((gclpy_context *)st->pe_context)->ctx && gcl_pe_stop() != GCL_OK) {
    st->pe_context = NULL; /* still running on it (a module attached): the Context must stay */
    return;
  }
  Py_CLEAR(st->pe_context);
}

/* --- queries and the barrier -------------------------------------------------------------------- */

const char gclpy_doc_pe_id[] =
    "pe_id($module, /)\n--\n\nThis process's PE (its rank). gclaunch.Error GCL_ERROR_NVSHMEM when none\n"
    "is started.";
const char gclpy_doc_pe_count[] =
    "pe_count($module, /)\n--\n\nThe number of PEs. gclaunch.Error GCL_ERROR_NVSHMEM when none is started.";
const char gclpy_doc_pe_context[] =
    "pe_context($module, /)\n--\n\nThe Context this process's PE runs on, or None.";

PyObject *gclpy_pe_id(PyObject *module, PyObject *unused) {
  (void)unused;
  int id = 0;
  gcl_status s = gcl_pe_id(&id);
  return s == GCL_OK ? PyLong_FromLong(id) : gclpy_raise(gclpy_module_state(module), s);
}

PyObject *gclpy_pe_count(PyObject *module, PyObject *unused) {
  (void)unused;
  int n = 0;
  gcl_status s = gcl_pe_count(&n);
  return s == GCL_OK ? PyLong_FromLong(n) : gclpy_raise(gclpy_module_state(module), s);
}

PyObject *gclpy_pe_context(PyObject *module, PyObject *unused) {
  (void)unused;
  gclpy_state *st = gclpy_module_state(module);
  return Py_NewRef(st->pe_context ? st->pe_context : Py_None);
}

const char gclpy_doc_pe_barrier[] =
    "pe_barrier($module, /, stream=None)\n--\n\nA barrier of all PEs ordered on stream (a gclaunch.Stream, an\n"
    "int CUstream or a __cuda_stream__ object of the PE's Context; None: its default stream):\n"
    "work after it on the stream starts once every PE reached it, their earlier symmetric writes\n"
    "visible (collective; nvshmemx_barrier_all_on_stream). Synchronize the stream for the host to\n"
    "know it passed. gclaunch.Error GCL_ERROR_NVSHMEM when no PE is started.";

struct pe_barrier_in { gclpy_streamarg stream; };
static const gclpy_arg pe_barrier_args[] = {
  GCLPY_ARG(struct pe_barrier_in, stream, gclpy_to_stream, 0, 0, GCLPY_NONE),
};
static const gclpy_params pe_barrier_params = {"pe_barrier", pe_barrier_args, 1, 1, 0};

PyObject *gclpy_pe_barrier(PyObject *module, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames) {
  gclpy_state *st = gclpy_module_state(module);
  /* no PE: the stream is not wrapped (ctx NULL), the library's refusal names it */
  struct pe_barrier_in in = {{.ctx = (gclpy_context *)st->pe_context}};
  int given = gclpy_parse(st, &pe_barrier_params, NULL, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gcl_stream *s = in.stream.stream;
  gcl_status rc = gcl_pe_barrier(s); /* no PE: the library names it */
  gclpy_release(st, &pe_barrier_params, given, &in);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

/* --- modules ------------------------------------------------------------------------------------ */

const char gclpy_doc_attach[] =
    "attach($self, /)\n--\n\nAttaches this NVSHMEM module to the PE (gcl_module_attach): its device\n"
    "library's version is checked against the host library's (GCL_ERROR_NVSHMEM_VERSION naming\n"
    "both), then NVSHMEM fills its device state; its kernels may launch from then on. Refused:\n"
    "before pe_start (GCL_ERROR_NVSHMEM), a module that does not use NVSHMEM or was loaded on\n"
    "another device's Context (GCL_ERROR_INVALID_ARGUMENT). Attaching twice does nothing.";
const char gclpy_doc_detach[] =
    "detach($self, /)\n--\n\nDetaches the module: its kernels are refused again (GCL_ERROR_NOT_ATTACHED)\n"
    "until the next attach. GCL_ERROR_INVALID_ARGUMENT when it is not attached. A module that goes\n"
    "is detached first.";
const char gclpy_doc_uses_nvshmem[] =
    "True when the module is device-linked with NVSHMEM (defines nvshmemi_device_state_d): attach\n"
    "it before any launch";

PyObject *gclpy_module_attach(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status s = gcl_module_attach(((gclpy_module *)self)->mod);
  if (s != GCL_OK) return gclpy_raise(GCLPY_ST(self), s);
  Py_RETURN_NONE;
}

PyObject *gclpy_module_detach(PyObject *self, PyObject *unused) {
  (void)unused;
  gcl_status s = gcl_module_detach(((gclpy_module *)self)->mod);
  if (s != GCL_OK) return gclpy_raise(GCLPY_ST(self), s);
  Py_RETURN_NONE;
}

PyObject *gclpy_module_uses_nvshmem(PyObject *self, void *closure) {
  (void)closure;
  return PyBool_FromLong(gcl_module_uses_nvshmem(((gclpy_module *)self)->mod));
}
