/* gclpy.h -- the `gclaunch` Python extension: a thin view of libgclaunch on CPython's limited API.
 *
 * One build (Py_LIMITED_API 3.10, the abi3 tag) imports on every CPython >= 3.10. The extension
 * keeps no model of its own: layouts, fields, checks and messages are the C library's; what is
 * here converts Python values into the C calls (one table keyed by the field's kind, convert.c)
 * and turns a failed status into gclaunch.Error carrying gcl_last_error().
 *
 * Files: module.c (module, errors, inspect), layout.c (Layout, Param, Field), args.c (Args),
 * convert.c (the conversion table), dlpack.c (the __dlpack__ protocol), driver.c (Context,
 * Module, Kernel), launch.c (Kernel.launch), tensormap.c (TensorMap and every tensor-map call).
 *
 * The GIL is held in every call into the library except the ones that wait (synchronize, module
 * load and compile): deleters of DLPack producers (NumPy's) take the GIL themselves, and they run
 * inside the setters. */
#ifndef GCLPY_H
#define GCLPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include "gclaunch/gclaunch.h"

/* --- module state (one interpreter: the module is single-phase and keeps its types here) --- */
typedef struct gclpy_state {
  PyObject *error;          /* gclaunch.Error */
  PyObject *range_error;    /* gclaunch.Error and OverflowError: an int out of a C type's range */
  PyTypeObject *layout_type, *args_type, *fieldref_type, *tensormap_type;
  PyTypeObject *context_type, *module_type, *kernel_type;
  PyTypeObject *param_type, *field_type; /* struct sequences */
  PyTypeObject *stream_type, *event_type, *graph_type, *buffer_type; /* the runtime (rt_*.c) */
  PyObject *contexts;       /* dict device -> Context made for tensor maps of CPU-made Args */
  PyObject *empty_tuple;
  PyObject *str_dlpack, *str_cuda_stream, *str_fspath;
  PyObject *kw_shared, *kw_stream, *kw_cluster, *kw_cooperative, *kw_grid, *kw_block, *kw_args;
  PyObject *kw_pdl, *kw_priority;
} gclpy_state;
extern gclpy_state gclpy;

/* --- errors (module.c) --- */
/* Raises gclaunch.Error for status s with gcl_last_error() as its message; returns NULL. */
PyObject *gclpy_raise(gcl_status s);
/* Raises gclaunch.Error for status s with a formatted message (extension-side refusals that have
 * no C call: a versioned capsule of an unknown major); returns NULL. */
PyObject *gclpy_raise_msg(gcl_status s, const char *fmt, ...);
/* Raises the range error (gclaunch.Error with GCL_ERROR_INVALID_ARGUMENT, also an OverflowError). */
PyObject *gclpy_raise_range(const char *fmt, ...);
/* Name of a scalar type as the signature spells it ("u32"); "void" for VOID. */
const char *gclpy_scalar_name(gcl_scalar s);
/* The name of obj's type into buf (the limited API has no tp_name). */
void gclpy_tname(PyObject *obj, char *buf, size_t cap);
/* Raises TypeError "<what>, got <type name>"; returns NULL. */
PyObject *gclpy_type_error(const char *what, PyObject *obj);
/* The bytes of an image: a path read by the library, or a bytes-like object (new reference). */
PyObject *gclpy_image_bytes(PyObject *src);
const char *gclpy_kind_name(gcl_param_kind k);

/* --- Layout (layout.c) --- */
typedef struct gclpy_layout {
  PyObject_HEAD
  gcl_layout *layout;
  gcl_signature *sig;       /* NULL for a kernel's layout */
  PyObject *owner;          /* the Module owning a kernel's layout (NULL: the layout is ours) */
  PyObject *context;        /* the kernel's Context, or NULL for a CPU layout */
  size_t nparams;
  struct gclpy_fieldref **params; /* cached parameter fields, index order */
  PyObject *paths;          /* dict: path str -> FieldRef (resolved once) */
} gclpy_layout;

/* A resolved field and how values are converted into it (convert.c's table index). */
typedef struct gclpy_fieldref {
  PyObject_HEAD
  gcl_field field;
  int conv;
  PyObject *path;           /* str: the path as given (for messages), or NULL for params */
} gclpy_fieldref;

int gclpy_layout_init_types(PyObject *module);
/* A Layout object over a kernel's layout (borrowed from the kernel, kept alive by owner). */
PyObject *gclpy_layout_wrap(const gcl_layout *layout, PyObject *owner, PyObject *context);
/* The field a key names: an int (parameter index) or a str (path). Borrowed; NULL with an
 * exception set. */
gclpy_fieldref *gclpy_layout_lookup(gclpy_layout *lay, PyObject *key);
/* The field of element 0 of an array field (new reference), for batches of tensor maps. */
gclpy_fieldref *gclpy_layout_element0(gclpy_layout *lay, gclpy_fieldref *array);
/* The Field struct sequence describing f (path: the canonical one). */
PyObject *gclpy_field_info(gclpy_layout *lay, const gcl_field *f, const char *path);

/* --- Args (args.c) --- */
typedef struct gclpy_args {
  PyObject_HEAD
  gcl_args *args;
  gclpy_layout *layout;
} gclpy_args;
int gclpy_args_init_types(PyObject *module);
/* New Args over lay (a kernel's args when lay has a context). */
gclpy_args *gclpy_args_new(gclpy_layout *lay);
/* The context tensor maps of these args are encoded in: the kernel's, or one made for device
 * (the tensor's). Borrowed; NULL with an exception set. */
gcl_context *gclpy_args_context(gclpy_args *a, int device);

/* --- conversions (convert.c): the one table, keyed by the field's kind --- */
enum {
  GCLPY_CONV_BOOL, GCLPY_CONV_I8, GCLPY_CONV_U8, GCLPY_CONV_I16, GCLPY_CONV_U16, GCLPY_CONV_I32,
  GCLPY_CONV_U32, GCLPY_CONV_I64, GCLPY_CONV_U64, GCLPY_CONV_F16, GCLPY_CONV_BF16, GCLPY_CONV_F32,
  GCLPY_CONV_F64, GCLPY_CONV_POINTER, GCLPY_CONV_TENSORMAP, GCLPY_CONV_TENSORMAPS,
  GCLPY_CONV_BYTES, GCLPY_CONV_RAW, GCLPY_CONV_SCALARS, GCLPY_CONV_COUNT
};
/* The conversion of a field (from its gcl_param_info). */
int gclpy_conv_of(const gcl_field *f);
/* args[key] = value through the table. 0, or -1 with an exception set (nothing changed). */
int gclpy_convert_set(gclpy_args *a, gclpy_fieldref *f, PyObject *value);
/* A label for messages: "args['g.n'] (parameter 0 'g')" written into buf. */
void gclpy_field_label(gclpy_args *a, gclpy_fieldref *f, char *buf, size_t cap);

/* --- DLPack (dlpack.c) --- */
/* A consumed __dlpack__: the capsule (owned reference) or, through the DLPack C exchange API, a
 * managed tensor this extension owns or a borrowed view; and the tensor inside. */
typedef struct gclpy_dlpack {
  PyObject *capsule;
  bool versioned;
  bool api_owned;           /* managed came from the C exchange API: our deleter call to make */
  void *managed;            /* DLManagedTensorVersioned * or DLManagedTensor * (NULL: a view) */
  DLTensor *tensor;
  DLTensor view;            /* the borrowed view of the C exchange API */
  uint64_t flags;           /* versioned: the producer's flags; legacy: 0 */
} gclpy_dlpack;
/* True when obj has __dlpack__ (one attribute look-up on the type). */
bool gclpy_has_dlpack(PyObject *obj);
/* Calls obj.__dlpack__ per the protocol: a versioned capsule (max_version=(1, minor)) when the
 * producer offers one, else the legacy one; stream=-1 (no synchronisation: gclaunch reads the
 * description only) when the producer accepts it. borrow: the caller only reads the tensor
 * while obj is alive (a view is enough). 0, or -1 with an exception set. */
int gclpy_dlpack_get(PyObject *obj, gclpy_dlpack *out, bool borrow);
/* Hands the tensor to gcl_args_take_field_dlpack(_legacy): the capsule is marked used first, so
 * the library runs the deleter exactly once (also on failure). Releases out. */
gcl_status gclpy_dlpack_take(gclpy_dlpack *d, gcl_args *args, const gcl_field *f);
/* Done borrowing: the capsule goes (its destructor, the producer's, runs the deleter once), or
 * the exchange API's managed tensor is deleted. */
void gclpy_dlpack_release(gclpy_dlpack *d);
/* Whether the DLPack C exchange API is used (on unless GCL_DLPACK_C_API=0 at import). */
extern bool gclpy_use_c_api;

/* --- driver objects (driver.c) --- */
typedef struct gclpy_context {
  PyObject_HEAD
  gcl_context *ctx;
  int device;
} gclpy_context;
typedef struct gclpy_module {
  PyObject_HEAD
  gcl_module *mod;
  PyObject *context;
} gclpy_module;
typedef struct gclpy_kernel {
  PyObject_HEAD
  gcl_kernel *kernel;
  PyObject *module;
  PyObject *name;
  gclpy_layout *layout;
  gclpy_args *scratch;      /* args for launches given a sequence of values (made on first use) */
} gclpy_kernel;
int gclpy_driver_init_types(PyObject *module);
/* The default context of device (made once, kept for the process). Borrowed; NULL on error. */
gclpy_context *gclpy_default_context(int device);
PyObject *gclpy_kernel_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames);
/* A sequence of one value per parameter converted into the kernel's own buffer (launch.c).
 * Borrowed; NULL with an exception set. */
gclpy_args *gclpy_kernel_values(gclpy_kernel *k, PyObject *values);

/* --- tensor maps (tensormap.c): every tensor-map call of the library is made there --- */
typedef struct gclpy_tensormap {
  PyObject_HEAD
  PyObject *tensor;         /* the __dlpack__ object */
  PyObject *box;            /* the box as given (tuple, the tensor's dimension order) */
  gcl_tensormap_options options; /* TMA order */
} gclpy_tensormap;
int gclpy_tensormap_init_types(PyObject *module);
/* Encodes maps (a TensorMap or a sequence of them) into n consecutive tensormap leaves from
 * first; refresh: GCL_TENSORMAP_REFRESH. 0, or -1 with an exception set (nothing changed). */
int gclpy_tensormaps_set(gclpy_args *a, gclpy_fieldref *first, PyObject *maps, bool refresh);
/* Re-points n consecutive maps from first to addresses (ints or __dlpack__ objects). */
int gclpy_tensormaps_repoint(gclpy_args *a, gclpy_fieldref *first, PyObject *addresses);

/* --- the runtime: streams, events, graphs (rt_stream.c), device memory (rt_buffer.c), devices,
 * occupancy and kernel attributes (rt_device.c) --- */
typedef struct gclpy_stream {
  PyObject_HEAD
  gcl_stream *stream;       /* NULL after close() */
  void *handle;             /* the CUstream */
  PyObject *context;        /* the gclpy_context it belongs to */
  PyObject *owner;          /* the object wrapped by Stream.from_handle (kept alive), or NULL */
  PyObject *captured;       /* list of the Kernels launched on it during a capture, else NULL */
} gclpy_stream;
typedef struct gclpy_event {
  PyObject_HEAD
  gcl_event *event;
  PyObject *context;
} gclpy_event;
int gclpy_rt_stream_init_types(PyObject *module);  /* Stream, Event, Graph */
int gclpy_rt_buffer_init_types(PyObject *module);  /* Buffer */
/* A zeroed instance of a heap type (tracked when it is a GC type), and its free. */
PyObject *gclpy_alloc(PyTypeObject *tp);
void gclpy_free(PyObject *self);
/* A launch's stream= on a gclaunch.Stream: its handle, and the kernel remembered when the stream
 * is capturing a graph (the graph keeps it alive). 0, or -1 with an exception set. */
int gclpy_stream_for_launch(gclpy_stream *s, PyObject *kernel, void **handle);
/* A stream argument (None: the context's default stream; a gclaunch.Stream; an int CUstream or
 * a __cuda_stream__ object, wrapped for the call) as a gcl_stream: *tmp is a wrapper to destroy
 * after the call (gcl_stream_destroy), or NULL. ctx: the context a None or foreign stream is of.
 * 0, or -1 with an exception set. */
int gclpy_stream_arg(PyObject *v, gclpy_context *ctx, gcl_stream **out, gcl_stream **tmp,
                     const char *what);
/* An int argument in 0 ... max (TypeError for non-ints, RangeError naming `what` otherwise). */
int gclpy_uint_arg(PyObject *v, const char *what, unsigned long long max, unsigned long long *out);
/* A signed int in lo ... hi, the same way. */
int gclpy_int_arg(PyObject *v, const char *what, long long lo, long long hi, long long *out);
/* Context methods and module functions of the runtime (rt_*.c, in driver.c's and module.c's
 * method tables). */
PyObject *gclpy_context_create_stream(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                      PyObject *kwnames);
PyObject *gclpy_context_create_event(PyObject *self, PyObject *unused);
PyObject *gclpy_context_alloc(PyObject *self, PyObject *nbytes);
PyObject *gclpy_device_count(PyObject *self, PyObject *unused);
PyObject *gclpy_device_info(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames);
typedef PyObject *(*gclpy_fastcall)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_occupancy(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_max_cooperative_grid(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_active_clusters(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_persistent_config(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_attribute(PyObject *self, PyObject *name);
PyObject *gclpy_kernel_set_attribute(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_attributes(PyObject *self, void *closure);
/* The docstrings of those (rt_device.c). */
extern const char gclpy_doc_occupancy[], gclpy_doc_max_cooperative_grid[],
    gclpy_doc_active_clusters[], gclpy_doc_persistent_config[], gclpy_doc_attribute[],
    gclpy_doc_set_attribute[], gclpy_doc_attributes[];
/* A gclaunch.Buffer into a pointer field: the args own a reference to it until overwritten
 * (gcl_args_take_field_dlpack); an untyped buffer is given the pointer's element type. */
int gclpy_buffer_take(gclpy_args *a, gclpy_fieldref *f, PyObject *buffer);

/* --- module functions (module.c) --- */
PyObject *gclpy_inspect(PyObject *self, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames);

/* Keyword parsing for METH_FASTCALL | METH_KEYWORDS (the limited API has no argument clinic):
 * fills vals[i] (borrowed) for names[i] from the positional and keyword arguments; at most npos
 * positionally. -1 with TypeError for unknown or repeated keywords or too many positionals. */
int gclpy_parse(const char *fn, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames,
                const char *const *names, int count, int npos, int required, PyObject **vals);

#define GCLPY_METH(f) ((PyCFunction)(void (*)(void))(f))

#endif
