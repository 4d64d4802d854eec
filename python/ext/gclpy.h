/* gclpy.h -- the `gclaunch` Python extension: a thin view of libgclaunch on CPython's limited API.
 *
 * One build (Py_LIMITED_API 3.10, the abi3 tag) imports on every CPython >= 3.10. The extension
 * keeps no model of its own: layouts, fields, checks and messages are the C library's; what is
 * here converts Python values into the C calls (fields: one table keyed by the field's kind,
 * convert.c; call arguments: one converter per kind, argkinds.c) and turns a failed status into
 * gclaunch.Error carrying gcl_last_error().
 *
 * Layering (a file calls only functions of files above it in this list; no include or call
 * cycle -- tests/python/test_cpu.py checks it from the sources):
 *   L0  state.c      module state, errors, names, image bytes
 *   L1  argkinds.c   one converter per kind of argument: ints with ranges, dims (grid, block,
 *                    cluster), threads, shared memory, streams (ours and other libraries'),
 *                    addresses, PE lists, arch, bools and pdl, str, bytes, images, contexts
 *       parse.c      the one parser: a table per call names each argument's converter and
 *                    where its result goes (every call converts its arguments through it)
 *   L2  dlpack.c     consuming __dlpack__ (the protocol and the DLPack C exchange API)
 *       layout.c     Layout, Param, Field, the resolved-field cache (_FieldRef)
 *       context.c    making contexts; the default context per device; a layout's context
 *       handles.c    a Stream or Buffer still open; a Buffer's DLPack export and its take into a
 *                    pointer field
 *       device.c     devices, occupancy and kernel attributes (Kernel methods, module functions)
 *   L3  event.c      Event
 *       graph.c      Graph, and graph capture on a Stream
 *       addresses.c  the addresses of a repoint (ints, tensors, host arrays) as one uint64 array
 *       buffer.c     Buffer: device memory, copies, fills, views, __dlpack__, CUDA Array Interface
 *   L4  stream.c     Stream (streams of other libraries wrapped)
 *       tensormap.c  TensorMap, and every tensor-map call of the library
 *   L5  convert.c    the conversion table: Python values into fields
 *       pe.c         NVSHMEM: the library found, unique ids, a PE on a Context, the barrier and
 *                    stop; Module.attach/detach (docs/multigpu.md)
 *   L6  args.c       Args
 *       maps.c       TensorMapTable, and the tensor-map methods Args and it share
 *       values.c     launches given values: the kernel's plan (plain values straight into bytes)
 *   L7  launch.c     Kernel.launch (the hot path)
 *   L8  driver.c     the Context, Module and Kernel types
 *   L9  module.c     the module: multi-phase init (PyModuleDef_Init + Py_mod_exec), inspect,
 *                    status_name, the constants
 * A new file takes the level above everything it calls and below what calls it.
 *
 * Module state, not global state: everything the module makes (types, exceptions, caches,
 * interned names) is in a gclpy_state inside the module object (PyModule_GetState). Types are
 * heap types made by PyType_FromModuleAndSpec, so a method finds the state through its object's
 * type: gclpy_state_of(self) (PyType_GetModuleState, limited API 3.10; PyType_GetModuleByDef is
 * 3.13 in the limited API and is not used). Module functions get the module as `self`
 * (gclpy_module_state). None of the types is subclassable, so the type is always ours.
 *
 * The pattern every type follows (copy it for a new one):
 *   1. a struct beginning with PyObject_HEAD; its Python references listed in one place;
 *   2. tp_alloc (PyType_GenericAlloc: zeroed, and GC-tracked for GC types) in a constructor that
 *      calls gclpy_alloc(st->foo_type);
 *   3. Py_TPFLAGS_HAVE_GC with tp_traverse (visits Py_TYPE(self) and every reference) and tp_clear
 *      (drops references that may close a cycle: user objects, caches) whenever the object holds
 *      any Python object; references that keep C memory alive (a layout's owner module) are
 *      dropped in tp_dealloc only -- they never form cycles (the ownership graph is a DAG);
 *   4. tp_dealloc: PyObject_GC_UnTrack (GC types), release, tp_free, Py_DECREF(type);
 *   5. tp_new (if instantiable) parses with gclpy_parse_tuple and a gclpy_params, and tp_doc
 *      starts with "Name(sig)\n--\n\n" so that inspect.signature works; methods are
 *      METH_FASTCALL | METH_KEYWORDS through gclpy_parse (or METH_O / METH_NOARGS) with docs
 *      starting "name($self, ...)\n--\n\n";
 *   6. Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE (| Py_TPFLAGS_DISALLOW_INSTANTIATION for
 *      objects made by a factory), spec name "gclaunch.Name";
 *   7. a `PyTypeObject *foo_type` in gclpy_state, made in an init function of the file called
 *      from module.c's exec, added to the module with PyModule_AddType, visited and cleared in
 *      module.c's m_traverse / m_clear (the GCLPY_STATE_OBJECTS list below does both);
 *   8. every failure raises a gclaunch.Error subclass (gclpy_raise*) or TypeError; ints out of
 *      range raise gclpy_raise_range (gclaunch.RangeError); a refused call changes nothing.
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

/* ============================== L0: state.c ================================================= */

/* Every Python object the state owns (visited by m_traverse, dropped by m_clear). */
#define GCLPY_STATE_OBJECTS(X)                                                                   \
  X(error) X(range_error) X(tensor_error) X(layout_type) X(args_type) X(fieldref_type) X(tensormap_type)          \
  X(context_type) X(module_type) X(kernel_type) X(param_type) X(field_type) X(contexts)           \
  X(producers) X(empty_tuple) X(str_dlpack) X(str_cuda_stream) X(str_fspath) X(dlpack_kwargs[0])  \
  X(dlpack_kwargs[1]) X(dlpack_kwargs[2]) X(dlpack_kwargs[3]) X(launch_kw[0]) X(launch_kw[1])     \
  X(launch_kw[2]) X(launch_kw[3]) X(launch_kw[4]) X(launch_kw[5]) X(launch_kw[6])                 \
  X(launch_kw[7]) X(launch_kw[8]) X(launch_kw[9]) X(stream_type) X(event_type) X(graph_type)     \
  X(buffer_type) X(stream_kinds) X(str_cuda_stream_attr) X(tmtable_type) X(last_stream_ref)

#define GCLPY_LAUNCH_KW 10 /* grid, block, args_or_values, shared, stream, cluster, cooperative,
                             args, pdl, priority */

typedef struct gclpy_state {
  PyObject *error;          /* gclaunch.Error */
  PyObject *range_error;    /* gclaunch.Error and OverflowError: an int out of a C type's range */
  PyObject *tensor_error;   /* gclaunch.TensorError: GCL_ERROR_TENSOR (a tensor or tensor map refused) */
  PyTypeObject *layout_type, *args_type, *fieldref_type, *tensormap_type;
  PyTypeObject *context_type, *module_type, *kernel_type;
  PyTypeObject *stream_type, *event_type, *graph_type, *buffer_type; /* stream.c, buffer.c */
  PyTypeObject *tmtable_type; /* maps.c: gclaunch.TensorMapTable */
  PyObject *param_type, *field_type; /* NamedTuple subclasses (attributes beyond the tuple) */
  PyObject *contexts;       /* dict device -> Context made for tensor maps of CPU-made Args */
  PyObject *producers;      /* dict type -> capsule of a gclpy_producer (dlpack.c), one per type */
  PyObject *empty_tuple;
  PyObject *str_dlpack, *str_cuda_stream, *str_fspath;
  PyObject *dlpack_kwargs[4]; /* __dlpack__ keyword dicts, one per way of asking (dlpack.c) */
  PyObject *launch_kw[GCLPY_LAUNCH_KW]; /* interned keyword names of launch (identity matches) */
  PyObject *last_producer_type; /* dlpack.c's one-entry memo (borrowed: `producers` holds it) */
  PyObject *stream_kinds;   /* dict type -> 1 (__cuda_stream__) or 2 (an int cuda_stream): where a
                             * stream type of another library keeps its handle (argkinds.c) */
  PyObject *str_cuda_stream_attr; /* "cuda_stream" */
  PyObject *last_stream_type; /* argkinds.c's one-entry memo (borrowed: stream_kinds holds it) */
  int last_stream_kind;
  PyObject *last_stream_ref;  /* argkinds.c: a weak reference to the last stream object of a
                               * type with a fixed handle, and that handle */
  void *last_stream_handle;
  void *last_producer;
  bool use_c_api;           /* the DLPack C exchange API is used (GCL_DLPACK_C_API != 0 at import) */
  PyObject *pe_context;     /* the Context this process's PE was started on (pe.c), or NULL: kept
                             * alive while the PE runs; not in GCLPY_STATE_OBJECTS (m_clear must
                             * not destroy it under a running PE: module_free stops the PE first) */
  Py_ssize_t symmetric_open; /* symmetric Buffers neither closed nor collected: pe_stop refuses */
} gclpy_state;

/* The state of the module that made obj's type (obj: an instance of one of our types). */
static inline gclpy_state *gclpy_state_of(PyObject *obj) {
  return (gclpy_state *)PyType_GetModuleState(Py_TYPE(obj));
}
/* The state of a module object (module functions get it as self). */
static inline gclpy_state *gclpy_module_state(PyObject *module) {
  return (gclpy_state *)PyModule_GetState(module);
}
#define GCLPY_ST(obj) gclpy_state_of((PyObject *)(obj))

/* A new zeroed instance of type (tracked by the GC for GC types); NULL with an exception. */
PyObject *gclpy_alloc(PyTypeObject *type);
/* The end of every tp_dealloc: tp_free and the type's reference. */
void gclpy_free(PyObject *self);

/* Raises gclaunch.Error for status s with gcl_last_error() as its message; returns NULL. */
PyObject *gclpy_raise(gclpy_state *st, gcl_status s);
/* Raises gclaunch.Error for status s with a message formatted by PyUnicode_FromFormat
 * (extension-side refusals that have no C call); returns NULL. */
PyObject *gclpy_raise_msg(gclpy_state *st, gcl_status s, const char *fmt, ...);
/* Raises gclaunch.RangeError (an Error with GCL_ERROR_INVALID_ARGUMENT, and an OverflowError). */
PyObject *gclpy_raise_range(gclpy_state *st, const char *fmt, ...);
/* Name of a scalar type as the signature spells it ("u32"); "void" for VOID. */
const char *gclpy_scalar_name(gcl_scalar s);
const char *gclpy_kind_name(gcl_param_kind k);
/* The name of obj's type into buf (the limited API has no tp_name). */
void gclpy_tname(PyObject *obj, char *buf, size_t cap);
/* Raises TypeError "<what>, got <type name>"; returns NULL. */
PyObject *gclpy_type_error(const char *what, PyObject *obj);

#define GCLPY_METH(f) ((PyCFunction)(void (*)(void))(f))
#define GCLPY_FASTKW (METH_FASTCALL | METH_KEYWORDS)

/* ============================== L1: argkinds.c, parse.c ===================================== */

/* A gclaunch.Stream (stream.c; here because the stream converter reads it). */
typedef struct gclpy_stream {
  PyObject_HEAD
  gcl_stream *stream;       /* NULL after close() */
  void *handle;             /* the CUstream */
  PyObject *context;        /* the gclpy_context it belongs to */
  PyObject *owner;          /* the object wrapped by Stream.from_handle (kept alive), or NULL */
  PyObject *captured;       /* list of the Kernels launched on it during a capture, else NULL */
  int waiting;              /* threads inside synchronize() (GIL released): close() refuses */
} gclpy_stream;

/* A gclaunch.Context (context.c; here because the context converter reads it). */
typedef struct gclpy_context {
  PyObject_HEAD
  gcl_context *ctx;
  int device;
} gclpy_context;

/* The parser and its converters (CPython's O&, with Py_CLEANUP_SUPPORTED). A call describes its
 * parameters once, in a static table of gclpy_arg: each entry names the keyword, the converter
 * and where the result goes (offsetof in the call's own struct of results, which holds the
 * defaults). gclpy_parse matches positionals and keywords, then converts every argument given;
 * when one is refused, the converters of the ones before it are called again with v NULL to
 * release what they made (a wrapped stream, a PE list, bytes), and the struct is left to be
 * dropped. After a successful parse the caller ends with gclpy_release (streams, PE lists, strs,
 * bytes, images and writable views hold something; the other kinds nothing).
 *
 * Every refusal has one shape: TypeError "<fn>: <name> takes <forms>, got <type>";
 * gclaunch.RangeError "<fn>: <name> = <value> is out of range (<lo> ... <hi>)"; gclaunch.Error
 * "<fn>: <name> ..." for a value of the right type that is refused. tests/python/test_cpu.py
 * refuses conversions of arguments outside this layer (and convert.c / values.c, the field
 * table). */
typedef struct gclpy_arg gclpy_arg;
/* Converts v into *out (v NULL: releases what an earlier call made). 0, or -1 with an
 * exception set (and nothing to release). fn names the call in messages. */
typedef int (*gclpy_conv)(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v,
                          void *out);
enum {
  GCLPY_NONE = 1,           /* None leaves the default (the converter is not called) */
  GCLPY_ONES = 2            /* dims: missing dimensions are 1 (else 0, which the library takes as 1) */
};
struct gclpy_arg {
  const char *name;         /* the keyword and the name in messages */
  size_t at;                /* offsetof the result in the call's struct */
  gclpy_conv conv;
  int64_t lo;               /* ints: the range */
  uint64_t hi;
  unsigned flags;           /* GCLPY_NONE ... */
};
/* One entry: GCLPY_ARG(struct call_in, field, converter[, lo, hi[, flags]]); the keyword is the
 * field's name (GCLPY_ARGN names it when they differ). */
#define GCLPY_ARG(T, field, ...) {#field, offsetof(T, field), GCLPY_REST_(__VA_ARGS__, 0, 0, 0, 0)}
#define GCLPY_ARGN(name, T, field, ...) {name, offsetof(T, field), GCLPY_REST_(__VA_ARGS__, 0, 0, 0, 0)}
#define GCLPY_REST_(conv, lo, hi, flags, ...) conv, lo, hi, flags
#define GCLPY_COUNT(a) ((int)(sizeof(a) / sizeof *(a)))
#define GCLPY_MAX_ARGS 16

typedef struct gclpy_params {
  const char *fn;           /* the callable's name in messages: "launch", "TensorMap" */
  const gclpy_arg *args;
  int count, npos, required; /* the first npos may be positional, the first `required` must be
                              * given */
} gclpy_params;
/* parse.c: for METH_FASTCALL | METH_KEYWORDS. keys (optional, count interned names) are matched
 * by identity first. TypeError for unknown or repeated keywords, too many positionals or a
 * missing argument, as CPython words them. Only the arguments given are converted. Returns the
 * mask of the arguments converted (bit i: args[i]; None left to a GCLPY_NONE entry's default is
 * not), the mask gclpy_release takes; or -1 with an exception set (nothing left to release).
 * Keep tp_doc / ml_doc's text signature in step with the table. */
int gclpy_parse(gclpy_state *st, const gclpy_params *p, PyObject *const *keys,
                PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames, void *out);
/* The same for tp_new (a tuple and a dict). */
int gclpy_parse_tuple(gclpy_state *st, const gclpy_params *p, PyObject *args, PyObject *kwds,
                      void *out);
/* One argument (METH_O, and items of a sequence) through entry a, into out (a->at unused). */
int gclpy_parse_one(gclpy_state *st, const char *fn, const gclpy_arg *a, PyObject *v, void *out);
/* Releases what the given arguments (mask from gclpy_parse) hold. */
void gclpy_release(gclpy_state *st, const gclpy_params *p, int given, void *out);

/* argkinds.c: the converters (its comment lists the forms each takes), by the type of the result:
 *   object   PyObject * (borrowed; no conversion: the callee looks at it)
 *   int      int in [lo, hi];   i64: int64_t in [lo, hi];   size: size_t in [lo, hi]
 *   address  uint64_t (an int address, 0 ... 2**64-1)
 *   dims     unsigned[3] (grid, block, cluster);   threads: unsigned (block's product)
 *   shared   size_t (dynamic shared memory bytes)
 *   stream   gclpy_streamarg;   pes: gclpy_pes;   context: gclpy_context * (None: NULL)
 *   arch     int (None: 0, an int or "sm_90")
 *   bool     bool (any object's truth);   pdl: int (0, 1, or 2 for "unchecked")
 *   str      const char * (UTF-8 without NUL, valid while the argument lives)
 *   pair     int[2] (a tuple of two ints, as PyArg "ii")
 *   strs     gclpy_strs (a sequence of str, not a str or bytes; released)
 *   bytes    PyObject * bytes (new reference, released): a copy of any buffer
 *   writable gclpy_writable (a writable buffer: a bytearray, or any other through its byte view)
 *   image    PyObject * bytes (new reference, released): a path read, or a bytes-like object */
int gclpy_to_object(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_int(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_i64(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_size(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_address(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_dims(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_threads(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_shared(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_stream(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_pes(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_context(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_arch(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_bool(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_pdl(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_str(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_pair(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_strs(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_bytes(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_writable(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
int gclpy_to_image(gclpy_state *, const char *, const gclpy_arg *, PyObject *, void *);
/* The bytes of an image: a path read by the library, or a bytes-like object (new reference). */
PyObject *gclpy_image_bytes(gclpy_state *st, PyObject *src);
/* Whether src is a path (str or os.PathLike); its file-system bytes (new reference; NULL with an
 * exception: not encodable, a NUL byte). gclpy_image_bytes reads such a path. */
int gclpy_is_path(gclpy_state *st, PyObject *src);
PyObject *gclpy_path_bytes(gclpy_state *st, PyObject *src);

/* A stream argument. ctx is set by the caller before the parse: the context another library's
 * stream is wrapped in (gcl_stream_wrap, checked as gcl_stream_check does), or NULL for the
 * handle only (launch checks it itself). */
typedef struct gclpy_streamarg {
  gclpy_context *ctx;       /* in */
  PyObject *obj;            /* the object given (borrowed) */
  void *handle;             /* the CUstream (NULL: None, the default stream) */
  gclpy_stream *ours;       /* the gclaunch.Stream given (borrowed), else NULL */
  gcl_stream *stream;       /* ours' gcl_stream or the wrapper (NULL: None or not wrapped) */
  gcl_stream *tmp;          /* the wrapper made for the call: released */
} gclpy_streamarg;

/* A PE list: a sequence of ints, or None for every PE in rank order (0 ... pe_count() - 1). */
typedef struct gclpy_pes {
  int *pes;                 /* PyMem: released */
  size_t n;
} gclpy_pes;

/* A writable buffer: a bytearray (view NULL: written directly), or another one's byte
 * memoryview (a new reference: released). */
typedef struct gclpy_writable {
  PyObject *obj;            /* the object given (borrowed) */
  PyObject *view;
} gclpy_writable;

/* A sequence of str as a C array (valid while `keep`, the tuple of them, lives). */
typedef struct gclpy_strs {
  const char **at;          /* n strs (PyMem): released */
  size_t n;
  PyObject *keep;
} gclpy_strs;

/* The one reading of an int, under every int converter here and the field table's (convert.c):
 * v an int (an object with __index__; a bool only when bools) in [lo, hi], its bits (two's
 * complement) into *out. 0; 1 when v is no int (nothing raised); 2 when it is out of range (*n:
 * the int, a new reference, for the caller's message); -1 with an exception. */
int gclpy_int_value(PyObject *v, bool bools, int64_t lo, uint64_t hi, uint64_t *out, PyObject **n);
/* The one int converter, for callers converting the items of a sequence: v an int (not a
 * bool; an object with __index__) in [lo, hi], named "<fn>: <what>" in messages. 0 or -1. */
int gclpy_int_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what, int64_t lo,
                  uint64_t hi, int64_t *out);
/* A key (args[key], lay.field(key)) as a parameter index of count: an int in [-count, count)
 * (negative: from the end). 0; 1 when key is no int (nothing raised); -1 with RangeError. */
int gclpy_index_arg(gclpy_state *st, PyObject *key, size_t count, size_t *out);
/* The str converter for items: TypeError for a non-str, gclaunch.Error for a NUL or a lone
 * surrogate. NULL with an exception set. Valid while v lives. */
const char *gclpy_str_arg(gclpy_state *st, PyObject *v, const char *fn, const char *what);

/* ============================== L2: dlpack.c ================================================ */

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
int gclpy_dlpack_init(gclpy_state *st);
/* True when obj has __dlpack__ (one attribute look-up on the type). */
bool gclpy_has_dlpack(gclpy_state *st, PyObject *obj);
/* Calls obj.__dlpack__ per the protocol: a versioned capsule (max_version=(1, minor)) when the
 * producer offers one, else the legacy one; stream=-1 (no synchronisation: gclaunch reads the
 * description only) when the producer accepts it. borrow: the caller only reads the tensor
 * while obj is alive (a view is enough). 0, or -1 with an exception set. */
int gclpy_dlpack_get(gclpy_state *st, PyObject *obj, gclpy_dlpack *out, bool borrow);
/* Hands the tensor to gcl_args_take_field_dlpack(_legacy): the capsule is marked used first, so
 * the library runs the deleter exactly once (also on failure). Releases out. */
gcl_status gclpy_dlpack_take(gclpy_dlpack *d, gcl_args *args, const gcl_field *f);
/* Done borrowing: the capsule goes (its destructor, the producer's, runs the deleter once), or
 * the exchange API's managed tensor is deleted. */
void gclpy_dlpack_release(gclpy_dlpack *d);

/* ============================== L2: layout.c ================================================ */

typedef struct gclpy_layout {
  PyObject_HEAD
  gcl_layout *layout;
  gcl_signature *sig;       /* NULL for a kernel's layout */
  bool borrowed;            /* a kernel's layout: owned by owner's gcl_module */
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

int gclpy_layout_init_types(PyObject *module, gclpy_state *st);
/* A Layout object over a kernel's layout (borrowed from the kernel, kept alive by owner). */
PyObject *gclpy_layout_wrap(gclpy_state *st, const gcl_layout *layout, PyObject *owner,
                            PyObject *context);
/* The field a key names: an int (parameter index) or a str (path). Borrowed; NULL with an
 * exception set. */
gclpy_fieldref *gclpy_layout_lookup(gclpy_layout *lay, PyObject *key);
/* The field of element 0 of an array field (new reference), for batches of tensor maps. */
gclpy_fieldref *gclpy_layout_element0(gclpy_layout *lay, gclpy_fieldref *array);
/* The Field named tuple describing f (path: the canonical one; NULL: asked of the library). */
PyObject *gclpy_field_info(gclpy_layout *lay, const gcl_field *f, const char *path);
/* The conversion of a field (convert.c's table index, from its gcl_param_info). */
int gclpy_conv_of(const gcl_field *f);

/* ============================== L2: context.c =============================================== */

/* A new Context of device (gcl_context_create). */
gclpy_context *gclpy_context_new(gclpy_state *st, int device);
/* The default context of device (made once, kept by the module). Borrowed; NULL on error. */
gclpy_context *gclpy_default_context(gclpy_state *st, int device);
/* The context tensor maps of args over lay are encoded in: the kernel's, or the default one of
 * device (the tensor's). Borrowed; NULL with an exception set. */
gcl_context *gclpy_layout_context(gclpy_state *st, gclpy_layout *lay, int device);
/* A context= argument as converted (gclpy_to_context): c, or for NULL (None, not given) device
 * 0's default one. Borrowed; NULL with an exception set. */
gclpy_context *gclpy_context_or_default(gclpy_state *st, gclpy_context *c);

/* ============================== L2: handles.c =============================================== */


typedef struct gclpy_event {
  PyObject_HEAD
  gcl_event *event;
  PyObject *context;        /* the gclpy_context */
} gclpy_event;

#define GCLPY_BUF_MAX_NDIM 8
typedef struct gclpy_buffer {
  PyObject_HEAD
  uint64_t ptr;             /* 0 after close() */
  size_t size;              /* bytes the buffer (or view) covers */
  PyObject *context;        /* the gclpy_context */
  PyObject *base;           /* a view's owner Buffer; NULL for the owner */
  Py_ssize_t exports;       /* the owner's live capsules, taken tensors and views: the sum of */
  Py_ssize_t capsules;      /*   DLPack exports by __dlpack__ (a consumer's tensor holds each) */
  Py_ssize_t held;          /*   Buffers taken by Args as a pointer argument */
  Py_ssize_t views;         /*   views (Buffer.view) */
  bool typed;               /* a view with a dtype (else 1-D uint8) */
  bool symmetric;           /* NVSHMEM symmetric memory (Context.symmetric_alloc): close() frees it
                             * collectively; collected open, it stays allocated until pe_stop */
  DLDataType dtype;
  int ndim;
  int64_t shape[GCLPY_BUF_MAX_NDIM];
} gclpy_buffer;

/* 0 when s is open, else gclaunch.Error "<fn>: the Stream was closed". */
int gclpy_stream_open(gclpy_state *st, gclpy_stream *s, const char *fn);
/* 0 when b and the memory it views are open, else gclaunch.Error "<what>: the Buffer was closed". */
int gclpy_buffer_open(gclpy_state *st, gclpy_buffer *b, const char *what);
/* A managed DLPack tensor over b (its dtype and shape; an untyped buffer as elements of `as`
 * when given) owning a reference to b's owner and counted in its exports; the deleter takes
 * the GIL. versioned: a DLManagedTensorVersioned, else a DLManagedTensor. NULL with an
 * exception set. */
void *gclpy_buffer_export(gclpy_buffer *b, bool versioned, const DLDataType *as);
/* A Buffer into a pointer field: the args own a reference to it until the field is overwritten
 * (gcl_args_take_field_dlpack); an untyped buffer takes the pointer's element type. */
int gclpy_buffer_take(gclpy_state *st, gcl_args *args, const gcl_field *f, gclpy_buffer *b);

/* ============================== L2: device.c ================================================ */

PyObject *gclpy_device_count(PyObject *module, PyObject *unused);
PyObject *gclpy_device_info(PyObject *module, PyObject *const *argv, Py_ssize_t nargs,
                            PyObject *kwnames);
/* Kernel methods (in driver.c's tables); self is a Kernel (struct gclpy_kernel). */
PyObject *gclpy_kernel_occupancy(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_max_cooperative_grid(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_active_clusters(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_persistent_config(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_attribute(PyObject *self, PyObject *name);
PyObject *gclpy_kernel_set_attribute(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
PyObject *gclpy_kernel_attributes(PyObject *self, void *closure);
extern const char gclpy_doc_occupancy[], gclpy_doc_max_cooperative_grid[],
    gclpy_doc_active_clusters[], gclpy_doc_persistent_config[], gclpy_doc_attribute[],
    gclpy_doc_set_attribute[], gclpy_doc_attributes[], gclpy_doc_device_count[],
    gclpy_doc_device_info[];

/* ============================== L3: event.c, graph.c, buffer.c; L4: stream.c ================== */

int gclpy_event_init_types(PyObject *module, gclpy_state *st);
int gclpy_graph_init_types(PyObject *module, gclpy_state *st);
int gclpy_stream_init_types(PyObject *module, gclpy_state *st);
int gclpy_buffer_init_types(PyObject *module, gclpy_state *st);
/* A new Event of c's device (event.c). */
PyObject *gclpy_event_make(gclpy_state *st, gclpy_context *c);
/* graph.c: a Graph pending a capture of s (for a with block); begins a capture of s; ends it
 * into graph_or_null (a new Graph when NULL), returning a new reference to the Graph. */
PyObject *gclpy_graph_new(gclpy_state *st, gclpy_stream *s);
int gclpy_capture_begin(gclpy_state *st, gclpy_stream *s);
PyObject *gclpy_capture_end(gclpy_state *st, gclpy_stream *s, PyObject *graph_or_null);
/* During a capture of s: every replay copies the TensorMapTable table's maps to the device first
 * (gcl_graph_capture_table); the graph keeps the table alive. 0, or -1 with an exception. */
int gclpy_capture_table(gclpy_state *st, gclpy_stream *s, PyObject *table);
/* Context methods (in driver.c's table). */
PyObject *gclpy_context_create_stream(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                      PyObject *kwnames);
PyObject *gclpy_context_create_event(PyObject *self, PyObject *unused);
PyObject *gclpy_context_alloc(PyObject *self, PyObject *nbytes);
PyObject *gclpy_context_symmetric_alloc(PyObject *self, PyObject *nbytes);
extern const char gclpy_doc_create_stream[], gclpy_doc_create_event[], gclpy_doc_alloc[],
    gclpy_doc_symmetric_alloc[];

/* ============================== L3: addresses.c ============================================= */

/* The addresses of a repoint (addresses.c's forms) as one array. */
typedef struct gclpy_addresses {
  uint64_t *at;             /* n addresses (small, or PyMem) */
  size_t n;
  PyObject *items;          /* a tuple of what was given per address (ints, tensors), or NULL when
                             * they came as one host array or one int */
  int device;               /* the device of the last tensor given (0 without one) */
  size_t tensors;           /* how many of items are tensors (the rest: ints) */
  uint64_t small[16];
} gclpy_addresses;
/* 0, or -1 with an exception set (then free it too). */
int gclpy_addresses_get(gclpy_state *st, PyObject *v, gclpy_addresses *a);
void gclpy_addresses_free(gclpy_addresses *a);

/* ============================== L4: tensormap.c ============================================= */

typedef struct gclpy_args {
  PyObject_HEAD
  gcl_args *args;
  gclpy_layout *layout;
  PyObject *keep;           /* dict: leaf offset -> the objects a tensor-map or pointer leaf points
                             * into, kept alive while the args can be launched (NULL: none) */
  bool scratch;             /* a kernel's buffer for launches of values: a Buffer in it gives its
                             * address only (not held, not pinned as an export), so it can be
                             * closed after the launch (each launch sets the field again) */
} gclpy_args;

typedef struct gclpy_tensormap {
  PyObject_HEAD
  PyObject *tensor;         /* the __dlpack__ object */
  PyObject *box;            /* the box as given (tuple, the tensor's dimension order) */
  gcl_tensormap_options options; /* TMA order */
  Py_ssize_t estride_rank;  /* element_strides given: how many (0: none) */
} gclpy_tensormap;
int gclpy_tensormap_init_types(PyObject *module, gclpy_state *st);
/* A gclaunch.TensorMapTable: a gcl_tensormap_table (maps in device memory) of a Context. */
typedef struct gclpy_tmtable {
  PyObject_HEAD
  gcl_tensormap_table *table; /* NULL after close() */
  PyObject *context;        /* the gclpy_context (the table borrows its gcl_context) */
  PyObject *keep;           /* dict: entry index -> the object its map points into (or NULL) */
} gclpy_tmtable;
/* Where maps go (gcl_tensormap_slots): consecutive tensormap slots of Args from a field, or of a
 * TensorMapTable from an entry index. Borrowed references. */
typedef struct gclpy_maps_at {
  gclpy_args *args;         /* Args, or NULL */
  gclpy_fieldref *first;    /* Args: the first map (a tensormap leaf) */
  gclpy_tmtable *table;     /* a TensorMapTable, or NULL */
  size_t index;             /* a table: the first entry */
} gclpy_maps_at;
/* Sets maps (a TensorMap or a sequence of them) into n consecutive slots from at
 * (gcl_tensormaps_set: each map's tensor with its producer's DLPack flags). 0, or -1 with an
 * exception set (nothing changed). */
int gclpy_tensormaps_set(const gclpy_maps_at *at, PyObject *maps);
/* Re-points n consecutive maps from at to addresses (ints or __dlpack__ objects;
 * gcl_tensormaps_repoint). */
int gclpy_tensormaps_repoint(const gclpy_maps_at *at, PyObject *addresses);
/* Peer maps: map (a TensorMap over this PE's copy of a symmetric buffer) set once per PE of
 * pes[0 ... n-1], over that PE's copy (gcl_symmetric_sources), into n consecutive slots from
 * at. 0, or -1 with an exception set (nothing changed). */
int gclpy_tensormaps_set_peers(const gclpy_maps_at *at, PyObject *map, const int *pes, size_t n);
/* Keep-alive bookkeeping of args (`keep`): the leaves in [offset, offset + size) now point
 * into obj (NULL: into nothing kept; the old entries of the range go). 0 or -1. */
int gclpy_keep_set(gclpy_args *a, size_t offset, size_t size, PyObject *obj);

/* ============================== L5: convert.c =============================================== */

enum {
  GCLPY_CONV_BOOL, GCLPY_CONV_I8, GCLPY_CONV_U8, GCLPY_CONV_I16, GCLPY_CONV_U16, GCLPY_CONV_I32,
  GCLPY_CONV_U32, GCLPY_CONV_I64, GCLPY_CONV_U64, GCLPY_CONV_F16, GCLPY_CONV_BF16, GCLPY_CONV_F32,
  GCLPY_CONV_F64, GCLPY_CONV_POINTER, GCLPY_CONV_TENSORMAP, GCLPY_CONV_TENSORMAPS,
  GCLPY_CONV_BYTES, GCLPY_CONV_RAW, GCLPY_CONV_SCALARS, GCLPY_CONV_COUNT
};
/* args[key] = value through the table. 0, or -1 with an exception set (nothing changed). */
int gclpy_convert_set(gclpy_args *a, gclpy_fieldref *f, PyObject *value);
/* args[key]: the value of a field read back (convert.c's table, backwards). */
PyObject *gclpy_convert_get(gclpy_args *a, gclpy_fieldref *f);
/* A label for messages: "parameter 0 'g' field 'g.n'" written into buf. */
void gclpy_field_label(gclpy_args *a, gclpy_fieldref *f, char *buf, size_t cap);

/* ============================== L5: pe.c ==================================================== */

/* Module functions (module.c's table), Context, Module and Args methods (driver.c's and args.c's
 * tables). */
PyObject *gclpy_nvshmem_info(PyObject *module, PyObject *unused);
PyObject *gclpy_nvshmem_open(PyObject *module, PyObject *path);
PyObject *gclpy_nvshmem_wheel(PyObject *module, PyObject *path);
PyObject *gclpy_pe_unique_id(PyObject *module, PyObject *unused);
PyObject *gclpy_pe_id(PyObject *module, PyObject *unused);
PyObject *gclpy_pe_count(PyObject *module, PyObject *unused);
PyObject *gclpy_pe_context(PyObject *module, PyObject *unused);
PyObject *gclpy_pe_barrier(PyObject *module, PyObject *const *argv, Py_ssize_t nargs,
                           PyObject *kwnames);
PyObject *gclpy_pe_stop(PyObject *module, PyObject *unused);
/* At the module's end: a PE still running on a Context of ours is stopped, the Context let go. */
void gclpy_pe_teardown(gclpy_state *st);
PyObject *gclpy_context_pe_start(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames);
PyObject *gclpy_module_attach(PyObject *self, PyObject *unused);
PyObject *gclpy_module_detach(PyObject *self, PyObject *unused);
PyObject *gclpy_module_uses_nvshmem(PyObject *self, void *closure);
extern const char gclpy_doc_nvshmem_info[], gclpy_doc_nvshmem_open[], gclpy_doc_nvshmem_wheel[],
    gclpy_doc_pe_unique_id[], gclpy_doc_pe_id[],
    gclpy_doc_pe_count[], gclpy_doc_pe_context[], gclpy_doc_pe_barrier[], gclpy_doc_pe_stop[],
    gclpy_doc_pe_start[], gclpy_doc_attach[], gclpy_doc_detach[], gclpy_doc_uses_nvshmem[];

/* ============================== L6: args.c, maps.c ========================================== */

/* The tensor-map methods of Args and TensorMapTable (maps.c): one implementation, one list.
 * where_doc says what `where` is for the type. */
PyObject *gclpy_maps_set(PyObject *self, PyObject *const *argv, Py_ssize_t nargs, PyObject *kwnames);
PyObject *gclpy_maps_refresh(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *gclpy_maps_repoint(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames);
PyObject *gclpy_maps_set_peers(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames);
int gclpy_maps_init_types(PyObject *module, gclpy_state *st);
#define GCLPY_MAP_METHODS(where_doc)                                                              \
  {"set_tensormaps", GCLPY_METH(gclpy_maps_set), GCLPY_FASTKW,                                    \
   "set_tensormaps($self, /, where, tensormaps)\n--\n\nSets maps (one TensorMap, or a list for "  \
   "consecutive maps)\nat where (gcl_tensormaps_set): each map's tensor is read through\n"          \
   "__dlpack__ with its producer's flags (a read-only tensor under a store map is refused); a\n"   \
   "map whose description the slot already holds is re-pointed (only its address moved) or\n"     \
   "left alone, anything else is checked and encoded. All or nothing; gclaunch.Error naming\n"     \
   "the map and the rule. " where_doc "."},                                                        \
  {"refresh", GCLPY_METH(gclpy_maps_refresh), GCLPY_FASTKW,                                       \
   "refresh($self, /, where, tensormaps)\n--\n\nset_tensormaps under its 0.3 name (every set "     \
   "re-points what only\nmoved)."},                                                                \
  {"repoint", GCLPY_METH(gclpy_maps_repoint), GCLPY_FASTKW,                                       \
   "repoint($self, /, where, addresses)\n--\n\nRe-points maps gclaunch set earlier to new "       \
   "addresses, keeping the\nrest of their description (gcl_tensormaps_repoint): the cheapest "     \
   "relaunch on new buffers\nof the same shapes. addresses: one or a list of ints "                \
   "(data + byte_offset) or\n__dlpack__ tensors (their data + byte_offset; a tensor is kept "       \
   "alive, an int address is\nyours to keep). All or nothing. " where_doc "."},                    \
  {"set_peer_tensormaps", GCLPY_METH(gclpy_maps_set_peers), GCLPY_FASTKW,                         \
   "set_peer_tensormaps($self, /, where, map, pes=None, refresh=False)\n--\n\nPeer tensor maps: "  \
   "map, a TensorMap over this PE's copy of a\nsymmetric buffer, set once per PE of pes over "     \
   "that PE's copy (gcl_symmetric_sources,\nthen gcl_tensormaps_set) into consecutive maps from "  \
   "where, so the kernel picks a peer\nby run-time index. pes: PE ranks, None for every PE. "     \
   "Every peer is resolved before any\nmap is set (GCL_ERROR_PEER_UNREACHABLE naming the PE). "   \
   "refresh: accepted, ignored.\n" where_doc "."}

int gclpy_args_init_types(PyObject *module, gclpy_state *st);
/* New Args over lay (a kernel's args when lay has a context). */
gclpy_args *gclpy_args_new(gclpy_state *st, gclpy_layout *lay);

/* ============================== L6: values.c ================================================ */

/* How one parameter takes a plain value directly (values.c). */
typedef struct gclpy_plain {
  size_t offset;            /* in the packed buffer */
  size_t align;             /* pointers: the alignment the kernel assumes (1: none) */
  int64_t lo;               /* integers and pointers: the range the C type takes */
  uint64_t hi;
  uint8_t size, kind;
  bool direct;              /* its last value was plain: the next plain one is written directly */
  PyObject *last;           /* that value when an exact int or float (held), else NULL: the same
                             * object again is skipped (its bytes are in place) */
} gclpy_plain;
/* A kernel's plan for launches given values, over its scratch Args. */
typedef struct gclpy_values {
  uint8_t *bytes;           /* the scratch's packed bytes once every parameter was set, else NULL */
  size_t count;
  gclpy_plain params[];
} gclpy_values;
/* A plan for lay's parameters (gclpy_values_free it); NULL with an exception set. */
gclpy_values *gclpy_values_new(gclpy_layout *lay);
/* Drops the values the plan holds and frees it; NULL is accepted. */
void gclpy_values_free(gclpy_values *plan);
/* One value per parameter (a list or a tuple of plan->count) into a, the scratch Args the plan
 * belongs to. 0, or -1 with an exception set (the values before the refused one stay set). */
int gclpy_values_set(gclpy_state *st, gclpy_values *plan, gclpy_args *a, gclpy_layout *lay,
                     PyObject *values, bool list);

/* ============================== L7: launch.c ================================================ */

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
  gclpy_values *values;     /* the plan over scratch (made with it, PyMem_Free'd with it) */
  void *stream_seen;        /* the last stream handle that passed gcl_stream_check in full */
} gclpy_kernel;
PyObject *gclpy_kernel_launch(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                              PyObject *kwnames);
extern const char gclpy_launch_doc[];
PyObject *gclpy_kernel_launch_loop(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                   PyObject *kwnames);
extern const char gclpy_launch_loop_doc[];

/* ============================== L8: driver.c ================================================ */

int gclpy_driver_init_types(PyObject *module, gclpy_state *st);

/* ============================== L9: module.c ================================================ */
/* PyInit__gclaunch only. */

#endif
