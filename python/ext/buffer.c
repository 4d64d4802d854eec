/* buffer.c -- L3: gclaunch.Buffer: device memory (gcl_mem_alloc) with copies, fills, DLPack and
 * CUDA Array Interface export, and typed views.
 *
 * A Buffer keeps its Context alive. Every DLPack export (a capsule, or a Buffer taken by Args as
 * a pointer argument) and every view holds a reference to the buffer that owns the memory and
 * counts as an export: close() refuses while any is alive (the memory would be freed under the
 * consumer), and the memory goes when the owner is closed or collected. The CUDA Array Interface
 * hands out a bare pointer: keep the Buffer alive while the consumer uses it.
 *
 * A symmetric Buffer (Context.symmetric_alloc, docs/multigpu.md) is NVSHMEM symmetric memory of
 * this process's PE: the same Buffer in every way, but close() frees it with gcl_symmetric_free,
 * a collective call (every PE closes its copy, in the same order), and one collected while open
 * is not freed then (a collective call from the garbage collector would wait on the other PEs
 * at a moment of its own): it stays allocated until pe_stop, which refuses while any symmetric
 * Buffer is open. peer_address(pe) gives a peer's copy. */
#include "gclpy.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dtype names: the signature's and NumPy's. */
static const struct { const char *name, *alt, *typestr; uint8_t code, bits; } dtypes[] = {
  {"bool", "bool", "|b1", 6 /* kDLBool */, 8},     {"i8", "int8", "|i1", kDLInt, 8},
  {"u8", "uint8", "|u1", kDLUInt, 8},      {"i16", "int16", "<i2", kDLInt, 16},
  {"u16", "uint16", "<u2", kDLUInt, 16},   {"i32", "int32", "<i4", kDLInt, 32},
  {"u32", "uint32", "<u4", kDLUInt, 32},   {"i64", "int64", "<i8", kDLInt, 64},
  {"u64", "uint64", "<u8", kDLUInt, 64},   {"f16", "float16", "<f2", kDLFloat, 16},
  {"bf16", "bfloat16", "<V2", kDLBfloat, 16}, {"f32", "float32", "<f4", kDLFloat, 32},
  {"f64", "float64", "<f8", kDLFloat, 64}};
enum { NDTYPES = sizeof dtypes / sizeof *dtypes, DTYPE_U8 = 2 };

static int dtype_index(DLDataType t) {
  for (int i = 0; i < NDTYPES; i++)
    if (dtypes[i].code == t.code && dtypes[i].bits == t.bits) return i;
  return DTYPE_U8;
}

static gclpy_buffer *buffer_make(gclpy_state *st, gclpy_context *c, uint64_t ptr, size_t size, PyObject *base) {
  gclpy_buffer *b = (gclpy_buffer *)gclpy_alloc(st->buffer_type);
  if (!b) return NULL;
  b->ptr = ptr, b->size = size, b->context = Py_NewRef((PyObject *)c), b->base = Py_XNewRef(base);
  b->dtype = (DLDataType){kDLUInt, 8, 1}, b->ndim = 1, b->shape[0] = (int64_t)size;
  if (base) ((gclpy_buffer *)base)->exports++, ((gclpy_buffer *)base)->views++;
  return b;
}

const char gclpy_doc_alloc[] =
    "alloc($self, nbytes, /)\n--\n\nDevice memory of nbytes bytes (cuMemAlloc) as a Buffer, freed\n"
    "by close() or when the Buffer is collected.";

static const gclpy_arg nbytes_arg = {"nbytes", 0, gclpy_to_size, 0, PY_SSIZE_T_MAX, 0};

PyObject *gclpy_context_alloc(PyObject *self, PyObject *nbytes) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_context *c = (gclpy_context *)self;
  size_t n;
  if (gclpy_parse_one(st, "alloc", &nbytes_arg, nbytes, &n) < 0) return NULL;
  uint64_t ptr = 0;
  gcl_status s = gcl_mem_alloc(c->ctx, (size_t)n, &ptr);
  if (s != GCL_OK) return gclpy_raise(st, s);
  gclpy_buffer *b = buffer_make(st, c, ptr, (size_t)n, NULL);
  if (!b) gcl_mem_free(c->ctx, ptr);
  return (PyObject *)b;
}

const char gclpy_doc_symmetric_alloc[] =
    "symmetric_alloc($self, nbytes, /)\n--\n\nNVSHMEM symmetric memory of nbytes bytes on every PE\n"
    "(collective: every PE calls it with the same nbytes, in the same order) as a Buffer over this\n"
    "PE's copy, 256-byte aligned; the Context must be the one the PE was started on (pe_start).\n"
    "close() frees it, collectively; peer_address(pe) is a peer's copy. A size NVSHMEM would end the\n"
    "process for is refused first, naming the numbers (gcl_symmetric_alloc): gclaunch.Error\n"
    "GCL_ERROR_OUT_OF_MEMORY beyond the heap's limit or the device's free memory,\n"
    "GCL_ERROR_INVALID_ARGUMENT for 0; the PE goes on working.";

PyObject *gclpy_context_symmetric_alloc(PyObject *self, PyObject *nbytes) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_context *c = (gclpy_context *)self;
  size_t n;
  if (gclpy_parse_one(st, "symmetric_alloc", &nbytes_arg, nbytes, &n) < 0) return NULL;
  gcl_context *pe = gcl_pe_context();
  if (pe && pe != c->ctx) /* no PE: the library's refusal below names it */
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "symmetric_alloc: the PE runs on "
                           "another Context (device %d, gclaunch.pe_context()), not this one "
                           "(device %d)", gcl_context_device(pe), c->device);
  uint64_t ptr = 0;
  gcl_status s = gcl_symmetric_alloc((size_t)n, &ptr);
  if (s != GCL_OK) return gclpy_raise(st, s);
  gclpy_buffer *b = buffer_make(st, c, ptr, (size_t)n, NULL);
  if (!b) return gcl_symmetric_free(ptr), NULL;
  b->symmetric = true;
  st->symmetric_open++;
  return (PyObject *)b;
}

/* Frees the memory (the owner) or lets the owner go (a view). A symmetric owner is freed only
 * by close (collective); collected, it stays allocated until pe_stop. */
static gcl_status buffer_release(gclpy_buffer *b, bool closing) {
  if (b->base) {
    if (b->ptr) ((gclpy_buffer *)b->base)->exports--, ((gclpy_buffer *)b->base)->views--;
    b->ptr = 0;
    Py_CLEAR(b->base);
    return GCL_OK;
  }
  if (b->ptr && b->symmetric) {
    gcl_status s = closing ? gcl_symmetric_free(b->ptr) : GCL_OK;
    if (s != GCL_OK) return s;
    GCLPY_ST(b)->symmetric_open--;
  } else if (b->ptr) { /* on a capturing thread the free waits for the capture's end */
    gcl_status s = gcl_mem_free(((gclpy_context *)b->context)->ctx, b->ptr);
    if (s != GCL_OK && closing) return s; /* still allocated: close raises, the Buffer holds it */
  }
  b->ptr = 0;
  return GCL_OK;
}

static PyObject *buffer_close(PyObject *self, PyObject *unused) {
  gclpy_state *st = GCLPY_ST(self);
  (void)unused;
  gclpy_buffer *b = (gclpy_buffer *)self;
  if (!b->base && b->exports > 0) /* say what holds it, and what lets it go */
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT,
                           "close: the memory would be freed under what still uses this Buffer: "
                           "%zd DLPack export%s (tensors made by __dlpack__, e.g. "
                           "torch.from_dlpack, each alive while that tensor or any view of it "
                           "is), %zd Args holding it as a pointer argument (until that argument "
                           "is set to another value or the Args go), %zd view%s (Buffer.view; a "
                           "TensorMap of a view holds the view, so it counts here)",
                           b->capsules, b->capsules == 1 ? "" : "s", b->held, b->views,
                           b->views == 1 ? "" : "s");
  gcl_status s = buffer_release(b, true);
  if (s != GCL_OK) return gclpy_raise(st, s);
  Py_RETURN_NONE;
}

static int buffer_traverse(PyObject *self, visitproc visit, void *arg) {
  gclpy_buffer *b = (gclpy_buffer *)self;
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(b->context);
  Py_VISIT(b->base);
  return 0;
}

static void buffer_dealloc(PyObject *self) {
  gclpy_buffer *b = (gclpy_buffer *)self;
  PyObject_GC_UnTrack(self);
  buffer_release(b, false);
  Py_CLEAR(b->context);
  gclpy_free(self);
}

/* --- views -------------------------------------------------------------------------------------- */

/* The dtype a name (converted by gclpy_to_str) names. */
static int parse_dtype(gclpy_state *st, const char *s, DLDataType *out) {
  for (int i = 0; i < NDTYPES; i++)
    if (strcmp(s, dtypes[i].name) == 0 || strcmp(s, dtypes[i].alt) == 0)
      return *out = (DLDataType){dtypes[i].code, dtypes[i].bits, 1}, 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "view: dtype: expected one of bool, i8, u8, i16, "
                  "u16, i32, u32, i64, u64, f16, bf16, f32, f64 (or NumPy's names), got '%s'", s);
  return -1;
}

struct view_in { const char *dtype; PyObject *shape; };
static const gclpy_arg view_args[] = {
  GCLPY_ARG(struct view_in, dtype, gclpy_to_str),
  GCLPY_ARG(struct view_in, shape, gclpy_to_object, 0, 0, GCLPY_NONE),
};
static const gclpy_params view_params = {"view", view_args, 2, 2, 1};

static PyObject *buffer_view(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  DLDataType dt;
  struct view_in in = {NULL, NULL};
  if (gclpy_buffer_open(st, b, "view") < 0 || /* a closed Buffer refuses first, whatever the arguments */
      gclpy_parse(st, &view_params, NULL, argv, nargs, kwnames, &in) < 0 ||
      parse_dtype(st, in.dtype, &dt) < 0)
    return NULL;
  size_t item = dt.bits / 8;
  int64_t shape[GCLPY_BUF_MAX_NDIM];
  int ndim = 1;
  shape[0] = (int64_t)(b->size / item);
  if (in.shape) {
    PyObject *t = PyLong_Check(in.shape) ? PyTuple_Pack(1, in.shape) : PySequence_Tuple(in.shape);
    if (!t) return NULL;
    Py_ssize_t n = PyTuple_Size(t);
    if (n < 1 || n > GCLPY_BUF_MAX_NDIM) {
      Py_DECREF(t);
      return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "view: shape takes 1 ... %d dimensions, "
                             "got %zd", GCLPY_BUF_MAX_NDIM, n);
    }
    unsigned long long total = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
      int64_t d;
      char what[32];
      snprintf(what, sizeof what, "shape[%zd]", i);
      if (gclpy_int_arg(st, PyTuple_GetItem(t, i), "view", what, 0, INT64_MAX, &d) < 0)
        return Py_DECREF(t), NULL;
      shape[i] = (int64_t)d;
      total = d && total > ULLONG_MAX / (unsigned long long)d ? ULLONG_MAX : total * (unsigned long long)d;
    }
    Py_DECREF(t);
    ndim = (int)n;
    if (total > b->size / item)
      return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "view: shape %R of %s needs %llu bytes, "
                             "the buffer has %zu", in.shape, dtypes[dtype_index(dt)].name,
                             total > ULLONG_MAX / item ? ULLONG_MAX : total * item, b->size);
  }
  gclpy_buffer *owner = (b->base ? (gclpy_buffer *)b->base : b);
  gclpy_buffer *w = buffer_make(st, (gclpy_context *)b->context, b->ptr, b->size, (PyObject *)owner);
  if (!w) return NULL;
  w->typed = true, w->dtype = dt, w->ndim = ndim;
  memcpy(w->shape, shape, sizeof shape);
  return (PyObject *)w;
}

/* --- DLPack export ------------------------------------------------------------------------------ */

static void capsule_gone(PyObject *cap) {
  /* Unconsumed (the name was not changed to used_...): the producer deletes. */
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Clear();
}

/* stream: the memory has no pending work of its own to order; any value is accepted. */
struct dlpack_in { PyObject *stream; int max_version[2], dl_device[2]; bool copy; };
static const gclpy_arg dlpack_args[] = {
  GCLPY_ARG(struct dlpack_in, stream, gclpy_to_object),
  GCLPY_ARG(struct dlpack_in, max_version, gclpy_to_pair, 0, 0, GCLPY_NONE),
  GCLPY_ARG(struct dlpack_in, dl_device, gclpy_to_pair, 0, 0, GCLPY_NONE),
  GCLPY_ARG(struct dlpack_in, copy, gclpy_to_bool),
};
static const gclpy_params dlpack_params = {"__dlpack__", dlpack_args, 4, 0, 0};

static PyObject *buffer_dlpack(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  struct dlpack_in in = {NULL, {-1, 0}, {-1, 0}, false};
  if (gclpy_buffer_open(st, b, "__dlpack__") < 0 || /* closed: refused first */
      gclpy_parse(st, &dlpack_params, NULL, argv, nargs, kwnames, &in) < 0)
    return NULL;
  if (in.copy)
    return PyErr_Format(PyExc_BufferError, "gclaunch.Buffer.__dlpack__: copy=True is not supported");
  if (in.dl_device[0] != -1) {
    int type = in.dl_device[0], id = in.dl_device[1];
    if (type != kDLCUDA || id != ((gclpy_context *)b->context)->device)
      return PyErr_Format(PyExc_BufferError, "gclaunch.Buffer.__dlpack__: the buffer is on "
                          "(%d, %d), dl_device asks for (%d, %d)", kDLCUDA,
                          ((gclpy_context *)b->context)->device, type, id);
  }
  bool versioned = in.max_version[0] >= 1; /* not given: -1 */
  /* stream: the memory has no pending work of its own to order; any value is accepted. */
  void *x = gclpy_buffer_export(b, versioned, NULL);
  if (!x) return NULL;
  PyObject *cap = PyCapsule_New(x, versioned ? "dltensor_versioned" : "dltensor", capsule_gone);
  if (!cap && versioned) ((DLManagedTensorVersioned *)x)->deleter(x);
  else if (!cap) ((DLManagedTensor *)x)->deleter(x);
  return cap;
}

static PyObject *buffer_dlpack_device(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("(ii)", kDLCUDA, ((gclpy_context *)((gclpy_buffer *)self)->context)->device);
}

/* --- CUDA Array Interface ---------------------------------------------------------------------- */

static PyObject *buffer_cai(PyObject *self, void *closure) {
  gclpy_state *st = GCLPY_ST(self);
  (void)closure;
  gclpy_buffer *b = (gclpy_buffer *)self;
  if (gclpy_buffer_open(st, b, "__cuda_array_interface__") < 0) return NULL;
  PyObject *shape = PyTuple_New(b->ndim);
  for (int i = 0; shape && i < b->ndim; i++)
    PyTuple_SetItem(shape, i, PyLong_FromLongLong(b->shape[i]));
  if (!shape) return NULL;
  return Py_BuildValue("{s:N,s:s,s:(NO),s:i,s:O,s:O}", "shape", shape, "typestr",
                       dtypes[dtype_index(b->dtype)].typestr, "data",
                       PyLong_FromUnsignedLongLong(b->ptr), Py_False, "version", 3, "strides",
                       Py_None, "stream", Py_None);
}

/* --- copies and fills -------------------------------------------------------------------------- */

/* The arguments of the copies and the fill: stream None (not given) is synchronous; else the
 * stream (another library's wrapped in the buffer's context). */
struct copy_in {
  PyObject *data;           /* upload's src (bytes), copy_from's src */
  gclpy_writable dst;       /* download's dst */
  int64_t offset;
  int value;
  gclpy_streamarg stream;
};
#define CP(name, field, ...) GCLPY_ARGN(name, struct copy_in, field, __VA_ARGS__)
static const gclpy_arg upload_args[] = {
  CP("src", data, gclpy_to_bytes), CP("offset", offset, gclpy_to_i64, 0, LLONG_MAX),
  CP("stream", stream, gclpy_to_stream, 0, 0, GCLPY_NONE)};
static const gclpy_arg download_args[] = {
  CP("dst", dst, gclpy_to_writable, 0, 0, GCLPY_NONE), CP("offset", offset, gclpy_to_i64, 0, LLONG_MAX),
  CP("stream", stream, gclpy_to_stream, 0, 0, GCLPY_NONE)};
static const gclpy_arg copy_from_args[] = {
  CP("src", data, gclpy_to_object), CP("stream", stream, gclpy_to_stream, 0, 0, GCLPY_NONE)};
static const gclpy_arg fill_args[] = {
  CP("value", value, gclpy_to_int, 0, 255), CP("stream", stream, gclpy_to_stream, 0, 0, GCLPY_NONE)};
#undef CP
static const gclpy_params upload_params = {"upload", upload_args, 3, 1, 1};
static const gclpy_params download_params = {"download", download_args, 3, 1, 0};
static const gclpy_params copy_from_params = {"copy_from", copy_from_args, 2, 1, 1};
static const gclpy_params fill_params = {"fill", fill_args, 2, 1, 1};

/* Parses a copy's arguments into in (the stream wrapped in b's context): the mask, or -1. */
static int copy_parse(gclpy_state *st, gclpy_buffer *b, const gclpy_params *p, PyObject *const *argv,
                      Py_ssize_t nargs, PyObject *kwnames, struct copy_in *in) {
  *in = (struct copy_in){.stream = {.ctx = (gclpy_context *)b->context}};
  if (gclpy_buffer_open(st, b, p->fn) < 0) return -1;
  return gclpy_parse(st, p, NULL, argv, nargs, kwnames, in);
}

static int range_check(gclpy_state *st, gclpy_buffer *b, const char *what, long long offset, size_t n) {
  if (offset >= 0 && (size_t)offset <= b->size && n <= b->size - (size_t)offset) return 0;
  gclpy_raise_range(st, "%s: %zu bytes at offset %lld do not fit the buffer's %zu", what, n, offset,
                    b->size);
  return -1;
}

static gcl_context *ctx_of(gclpy_buffer *b, gcl_stream *s) {
  return s ? gcl_stream_context(s) : ((gclpy_context *)b->context)->ctx;
}

static PyObject *finish(gclpy_state *st, gcl_status rc, const gclpy_params *p, int given,
                        struct copy_in *in) {
  gclpy_release(st, p, given, in);
  if (rc != GCL_OK) return gclpy_raise(st, rc);
  Py_RETURN_NONE;
}

static PyObject *buffer_upload(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                               PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  struct copy_in in;
  int given = copy_parse(st, b, &upload_params, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  long long off = in.offset;
  gcl_stream *s = in.stream.stream;
  PyObject *bytes = in.data;
  size_t n = (size_t)PyBytes_Size(bytes);
  if (range_check(st, b, "upload", off, n) < 0) return gclpy_release(st, &upload_params, given, &in), NULL;
  gcl_status rc = GCL_OK;
  const char *src = PyBytes_AsString(bytes);
  /* The driver stages pageable memory before an asynchronous upload returns, so the temporary
   * copy may go right after the call. */
  if (n && s) rc = gcl_mem_upload_async(ctx_of(b, s), b->ptr + off, src, n, s);
  else if (n) rc = gcl_mem_upload(ctx_of(b, s), b->ptr + off, src, n);
  return finish(st, rc, &upload_params, given, &in);
}

/* n bytes at off into dst (host memory), on s or synchronously. */
static gcl_status download_into(gclpy_buffer *b, char *dst, long long off, size_t n, gcl_stream *s) {
  if (n && s) return gcl_mem_download_async(ctx_of(b, s), dst, b->ptr + off, n, s);
  return n ? gcl_mem_download(ctx_of(b, s), dst, b->ptr + off, n) : GCL_OK;
}

/* A new bytearray of the rest of the buffer. */
static PyObject *download_new(gclpy_state *st, gclpy_buffer *b, struct copy_in *in, int given) {
  long long off = in->offset;
  PyObject *out = (size_t)off > b->size ? NULL
                  : PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(b->size - (size_t)off));
  if ((size_t)off > b->size) range_check(st, b, "download", off, 0);
  gcl_status rc = out ? download_into(b, PyByteArray_AsString(out), off, b->size - (size_t)off,
                                      in->stream.stream) : GCL_OK;
  gclpy_release(st, &download_params, given, in);
  if (rc != GCL_OK) return Py_DECREF(out), gclpy_raise(st, rc);
  return out;
}

static PyObject *buffer_download(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                 PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  struct copy_in in;
  int given = copy_parse(st, b, &download_params, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  if (!in.dst.obj) return download_new(st, b, &in, given);
  /* A bytearray is written directly; another writable buffer through a bytearray copied into
   * its byte view (the limited API of 3.10 has no Py_buffer). */
  PyObject *view = in.dst.view;
  Py_ssize_t len = view ? PyObject_Size(view) : PyByteArray_Size(in.dst.obj);
  size_t n = len < 0 ? 0 : (size_t)len;
  PyObject *into = view ? PyByteArray_FromStringAndSize(NULL, len < 0 ? 0 : len) : Py_NewRef(in.dst.obj);
  int ok = len < 0 || !into || range_check(st, b, "download", in.offset, n) < 0 ? -1 : 0;
  /* Into pageable memory the driver returns once the data is there. */
  gcl_status rc = ok == 0 ? download_into(b, PyByteArray_AsString(into), in.offset, n, in.stream.stream)
                          : GCL_OK;
  if (rc != GCL_OK) ok = (gclpy_raise(st, rc), -1);
  if (ok == 0 && view) ok = PySequence_SetSlice(view, 0, len, into);
  PyObject *dst = in.dst.obj;
  Py_XDECREF(into);
  gclpy_release(st, &download_params, given, &in);
  return ok == 0 ? Py_NewRef(dst) : NULL;
}

static PyObject *buffer_copy_from(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  struct copy_in in;
  int given = copy_parse(st, b, &copy_from_params, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gclpy_buffer *src = (gclpy_buffer *)in.data;
  gcl_stream *s = in.stream.stream;
  if (!Py_IS_TYPE(in.data, st->buffer_type))
    return gclpy_release(st, &copy_from_params, given, &in),
           gclpy_type_error("copy_from: src takes a gclaunch.Buffer", in.data);
  if (gclpy_buffer_open(st, src, "copy_from: src") < 0 || range_check(st, b, "copy_from", 0, src->size) < 0)
    return gclpy_release(st, &copy_from_params, given, &in), NULL;
  gcl_status rc = GCL_OK;
  if (src->size && s) rc = gcl_mem_copy_async(ctx_of(b, s), b->ptr, src->ptr, src->size, s);
  else if (src->size) rc = gcl_mem_copy(ctx_of(b, s), b->ptr, src->ptr, src->size);
  return finish(st, rc, &copy_from_params, given, &in);
}

static PyObject *buffer_fill(PyObject *self, PyObject *const *argv, Py_ssize_t nargs,
                             PyObject *kwnames) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  struct copy_in in;
  int given = copy_parse(st, b, &fill_params, argv, nargs, kwnames, &in);
  if (given < 0) return NULL;
  gcl_stream *s = in.stream.stream;
  uint8_t value = (uint8_t)in.value;
  gcl_status rc = GCL_OK;
  if (b->size && s) rc = gcl_mem_fill_u8_async(ctx_of(b, s), b->ptr, value, b->size, s);
  else if (b->size) rc = gcl_mem_fill_u8(ctx_of(b, s), b->ptr, value, b->size);
  return finish(st, rc, &fill_params, given, &in);
}

/* --- symmetric memory: a peer's copy ----------------------------------------------------------- */

static const gclpy_arg pe_arg = {"pe", 0, gclpy_to_int, INT_MIN, INT_MAX, 0};

static PyObject *buffer_peer_address(PyObject *self, PyObject *pe) {
  gclpy_state *st = GCLPY_ST(self);
  gclpy_buffer *b = (gclpy_buffer *)self;
  int p;
  if (gclpy_buffer_open(st, b, "peer_address") < 0 ||
      gclpy_parse_one(st, "peer_address", &pe_arg, pe, &p) < 0)
    return NULL;
  if (!(b->base ? (gclpy_buffer *)b->base : b)->symmetric)
    return gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "peer_address: the Buffer is not "
                           "symmetric memory (Context.alloc); Context.symmetric_alloc makes one");
  uint64_t out = 0;
  gcl_status s = gcl_symmetric_peer_address(b->ptr, p, &out);
  if (s != GCL_OK) return gclpy_raise(st, s);
  return PyLong_FromUnsignedLongLong(out);
}

/* --- type ----------------------------------------------------------------------------------------- */

static PyObject *buffer_get(PyObject *self, void *what) {
  gclpy_buffer *b = (gclpy_buffer *)self;
  switch ((int)(intptr_t)what) {
  case 0: return PyLong_FromUnsignedLongLong(b->ptr);
  case 1: return PyLong_FromSize_t(b->size);
  case 2: return Py_NewRef(b->context);
  case 3: return PyLong_FromLong(((gclpy_context *)b->context)->device);
  case 4: return PyUnicode_FromString(dtypes[dtype_index(b->dtype)].name);
  case 5: {
    PyObject *t = PyTuple_New(b->ndim);
    for (int i = 0; t && i < b->ndim; i++) PyTuple_SetItem(t, i, PyLong_FromLongLong(b->shape[i]));
    return t;
  }
  case 7: return PyBool_FromLong((b->base ? (gclpy_buffer *)b->base : b)->symmetric);
  default: return PyBool_FromLong(b->ptr == 0 || (b->base ? (gclpy_buffer *)b->base : b)->ptr == 0);
  }
}

static PyObject *buffer_repr(PyObject *self) {
  gclpy_buffer *b = (gclpy_buffer *)self;
  char addr[24]; /* PyUnicode_FromFormat has no %llx before 3.12 */
  snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)b->ptr);
  return PyUnicode_FromFormat("<gclaunch.Buffer %s, %zu bytes, device %d, %s%s%s>", addr, b->size,
                              ((gclpy_context *)b->context)->device,
                              dtypes[dtype_index(b->dtype)].name,
                              (b->base ? (gclpy_buffer *)b->base : b)->symmetric ? ", symmetric" : "",
                              b->base ? " view" : "");
}

static PyObject *buffer_enter(PyObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *buffer_exit(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
  (void)argv, (void)nargs;
  PyObject *r = buffer_close(self, NULL);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static PyMethodDef buffer_methods[] = {
  {"upload", GCLPY_METH(buffer_upload), GCLPY_FASTKW,
   "upload($self, /, src, offset=0, stream=None)\n--\n\nCopies the bytes of src (any bytes-like object: bytes,\n"
   "bytearray, memoryview, a NumPy array) into the buffer at offset. stream None: returns when\n"
   "done; else queued on the stream (gclaunch.Stream, int CUstream or __cuda_stream__ object)."},
  {"download", GCLPY_METH(buffer_download), GCLPY_FASTKW,
   "download($self, /, dst=None, offset=0, stream=None)\n--\n\n-> bytearray | dst. dst None: the rest of the\n"
   "buffer from offset, as a new bytearray. Else copies len(dst) bytes (its size in bytes) from\n"
   "offset into dst (a bytearray or any writable C-contiguous buffer; TypeError otherwise) and\n"
   "returns dst; gclaunch.RangeError when they do not fit the buffer (nothing copied). Into\n"
   "pageable memory the copy has finished when this returns, also on a stream."},
  {"copy_from", GCLPY_METH(buffer_copy_from), GCLPY_FASTKW,
   "copy_from($self, /, src, stream=None)\n--\n\nCopies all of src (a Buffer, at most this one's size) to the\n"
   "start of this buffer, device to device."},
  {"fill", GCLPY_METH(buffer_fill), GCLPY_FASTKW,
   "fill($self, /, value, stream=None)\n--\n\nSets every byte to value (0 ... 255)."},
  {"view", GCLPY_METH(buffer_view), GCLPY_FASTKW,
   "view($self, /, dtype, shape=None)\n--\n\nThe same memory typed: dtype 'f32' (or 'float32', ...),\n"
   "shape an int or a tuple (None: 1-D, as many elements as fit). __dlpack__ and\n"
   "__cuda_array_interface__ of the view describe it so; the view keeps the buffer alive."},
  {"close", buffer_close, METH_NOARGS,
   "close($self, /)\n--\n\nFrees the memory now (a view: lets its buffer go). Refused while views or DLPack\n"
   "exports (tensors made from it, Args holding it) are alive. Symmetric memory: collective\n"
   "(every PE closes its copy, in the same order)."},
  {"peer_address", buffer_peer_address, METH_O,
   "peer_address($self, pe, /)\n--\n\nPE pe's copy of this symmetric buffer (a view: of its start) as an\n"
   "int address this PE can load from and store to (gcl_symmetric_peer_address); this PE's own\n"
   "address for pe = pe_id(). gclaunch.Error GCL_ERROR_PEER_UNREACHABLE naming the peer when NVSHMEM\n"
   "has no load/store path to it; GCL_ERROR_INVALID_ARGUMENT for a Buffer that is not symmetric or\n"
   "pe outside 0 ... pe_count() - 1."},
  {"__dlpack__", GCLPY_METH(buffer_dlpack), GCLPY_FASTKW,
   "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
   "DLPack export: "
   "a versioned capsule when max_version >= (1, 0), else a legacy one; 1-D uint8 of size bytes,\n"
   "or the view's dtype and shape. The tensor keeps the buffer alive."},
  {"__dlpack_device__", buffer_dlpack_device, METH_NOARGS, "__dlpack_device__($self, /)\n--\n\n(kDLCUDA, device)"},
  {"__enter__", buffer_enter, METH_NOARGS, "__enter__($self, /)\n--\n\n"},
  {"__exit__", GCLPY_METH(buffer_exit), METH_FASTCALL, "__exit__($self, /, *exc)\n--\n\nclose()"},
  {NULL, NULL, 0, NULL}};

static PyGetSetDef buffer_getset[] = {
  {"ptr", buffer_get, NULL, "the device address (int; 0 after close)", (void *)0},
  {"size", buffer_get, NULL, "bytes", (void *)1},
  {"context", buffer_get, NULL, "the Context the memory belongs to", (void *)2},
  {"device", buffer_get, NULL, "the device ordinal", (void *)3},
  {"dtype", buffer_get, NULL, "'u8', or a view's dtype", (void *)4},
  {"shape", buffer_get, NULL, "(size,), or a view's shape", (void *)5},
  {"closed", buffer_get, NULL, "True after close()", (void *)6},
  {"symmetric", buffer_get, NULL, "True for NVSHMEM symmetric memory (Context.symmetric_alloc)", (void *)7},
  {"__cuda_array_interface__", buffer_cai, NULL,
   "CUDA Array Interface version 3 (shape, typestr, data, strides None, stream None): a bare\n"
   "pointer, so keep the Buffer alive while it is used", NULL},
  {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot buffer_slots[] = {
  {Py_tp_dealloc, buffer_dealloc}, {Py_tp_traverse, buffer_traverse},
  {Py_tp_methods, buffer_methods}, {Py_tp_getset, buffer_getset}, {Py_tp_repr, buffer_repr},
  {Py_tp_doc, "Device memory: ctx.alloc(nbytes). Exports __dlpack__ (1-D uint8, or a view's\n"
              "dtype and shape) and __cuda_array_interface__; .ptr, .size; upload/download/\n"
              "copy_from/fill, each synchronous or on a stream; close() or a with block frees it.\n"
              "As a kernel's pointer argument (launch values or args[...] = buf) it is passed by\n"
              "address and kept alive by the Args; an untyped buffer takes the pointer's type."},
  {0, NULL}};
static PyType_Spec buffer_spec = {"gclaunch.Buffer", sizeof(gclpy_buffer), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_GC |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION, buffer_slots};

int gclpy_buffer_init_types(PyObject *m, gclpy_state *st) {
  st->buffer_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &buffer_spec, NULL);
  if (!st->buffer_type) return -1;
  return PyModule_AddType(m, st->buffer_type);
}
