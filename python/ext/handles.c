/* handles.c -- L2: what the files above share of streams and buffers: a Stream or Buffer still
 * open, and a Buffer's DLPack export (its capsules, and its take into a pointer field of Args).
 * Stream arguments convert in argkinds.c (gclpy_to_stream). */
#include "gclpy.h"

#include <stdlib.h>
#include <string.h>

#define KDL_BOOL 6 /* kDLBool (DLPack 0.8 headers do not name it) */

/* --- streams ---------------------------------------------------------------------------------- */

int gclpy_stream_open(gclpy_state *st, gclpy_stream *s, const char *fn) {
  if (s->stream) return 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the Stream was closed", fn);
  return -1;
}

/* --- buffers ---------------------------------------------------------------------------------- */

static gclpy_buffer *owner_of(gclpy_buffer *b) { return b->base ? (gclpy_buffer *)b->base : b; }

int gclpy_buffer_open(gclpy_state *st, gclpy_buffer *b, const char *what) {
  if (b->ptr && owner_of(b)->ptr) return 0;
  gclpy_raise_msg(st, GCL_ERROR_INVALID_ARGUMENT, "%s: the Buffer was closed", what);
  return -1;
}

typedef struct export_ctx {
  PyObject *owner;          /* the owner Buffer (a reference) */
  bool held;                /* taken by Args (else a __dlpack__ capsule's consumer holds it) */
  int64_t shape[GCLPY_BUF_MAX_NDIM];
  union { DLManagedTensorVersioned v; DLManagedTensor l; } m;
} export_ctx;

static void export_release(export_ctx *x) {
  PyGILState_STATE g = PyGILState_Ensure(); /* deleters may run on any thread */
  gclpy_buffer *owner = (gclpy_buffer *)x->owner;
  owner->exports--;
  if (x->held) owner->held--;
  else owner->capsules--;
  Py_DECREF(x->owner);
  free(x);
  PyGILState_Release(g);
}
static void delete_versioned(DLManagedTensorVersioned *m) { export_release(m->manager_ctx); }
static void delete_legacy(DLManagedTensor *m) { export_release(m->manager_ctx); }

void *gclpy_buffer_export(gclpy_buffer *b, bool versioned, const DLDataType *as) {
  export_ctx *x = calloc(1, sizeof *x);
  if (!x) return PyErr_NoMemory();
  gclpy_buffer *owner = owner_of(b);
  x->owner = Py_NewRef((PyObject *)owner);
  owner->exports++;
  x->held = as != NULL; /* gclpy_buffer_take passes the field's type; __dlpack__ none */
  if (x->held) owner->held++;
  else owner->capsules++;
  DLTensor *t = versioned ? &x->m.v.dl_tensor : &x->m.l.dl_tensor;
  t->data = (void *)(uintptr_t)b->ptr;
  t->device = (DLDevice){kDLCUDA, ((gclpy_context *)b->context)->device};
  t->dtype = b->dtype;
  t->ndim = b->ndim;
  memcpy(x->shape, b->shape, sizeof x->shape);
  if (!b->typed && as && as->bits >= 8) { /* untyped memory as the elements the field expects */
    t->dtype = *as;
    x->shape[0] = (int64_t)(b->size / (as->bits / 8u));
  }
  t->shape = x->shape, t->strides = NULL, t->byte_offset = 0;
  if (versioned) {
    x->m.v.version = (DLPackVersion){DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    x->m.v.manager_ctx = x, x->m.v.deleter = delete_versioned, x->m.v.flags = 0;
    return &x->m.v;
  }
  x->m.l.manager_ctx = x, x->m.l.deleter = delete_legacy;
  return &x->m.l;
}

int gclpy_buffer_take(gclpy_state *st, gcl_args *args, const gcl_field *f, gclpy_buffer *b) {
  if (gclpy_buffer_open(st, b, "Buffer") < 0) return -1;
  DLDataType as = {kDLUInt, 8, 1};
  gcl_scalar el = f->info.scalar;
  if (f->info.kind == GCL_PARAM_POINTER && el != GCL_SCALAR_VOID) {
    static const uint8_t codes[] = {0, KDL_BOOL, kDLInt, kDLUInt, kDLInt, kDLUInt, kDLInt, kDLUInt,
                                    kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLFloat, kDLFloat};
    if ((size_t)el < sizeof codes)
      as = (DLDataType){codes[el], (uint8_t)(8 * gcl_scalar_size(el)), 1};
  }
  DLManagedTensorVersioned *m = gclpy_buffer_export(b, true, &as);
  if (!m) return -1;
  gcl_status s = gcl_args_take_field_dlpack(args, f, m); /* its deleter runs on failure too */
  return s == GCL_OK ? 0 : (gclpy_raise(st, s), -1);
}
