/* DLPack tensor validation: may tensor t go into a pointer parameter, and at which address?
 * The first element is at data + byte_offset (docs/facts.md "DLPack"); producers put a view's
 * offset in either field, so byte_offset may hold any value that keeps the tensor addressable and
 * aligned. */
#include "internal.h"

#include <inttypes.h>
#include <limits.h>
#include <stdalign.h>
#include <stdio.h>

/* The layouts gclaunch relies on, unchanged from DLPack 0.6 to 1.3 (docs/facts.md "DLPack"). A
 * header that disagrees would make every tensor read garbage, so refuse to build against it. */
_Static_assert(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
_Static_assert(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
_Static_assert(offsetof(DLDataType, bits) == 1 && offsetof(DLDataType, lanes) == 2,
               "DLDataType is {u8 code, u8 bits, u16 lanes}");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor is 48 bytes");
_Static_assert(offsetof(DLTensor, device) == 8 && offsetof(DLTensor, ndim) == 16 &&
                   offsetof(DLTensor, dtype) == 20 && offsetof(DLTensor, shape) == 24 &&
                   offsetof(DLTensor, strides) == 32,
               "DLTensor field offsets");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset at 40");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor is 64 bytes");
_Static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 &&
                   offsetof(DLManagedTensor, deleter) == 56,
               "DLManagedTensor field offsets");
_Static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion is 8 bytes");
_Static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned is 80 bytes");
_Static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
                   offsetof(DLManagedTensorVersioned, deleter) == 16 &&
                   offsetof(DLManagedTensorVersioned, flags) == 24 &&
                   offsetof(DLManagedTensorVersioned, dl_tensor) == 32,
               "DLManagedTensorVersioned field offsets");

/* Flags gclaunch understands. IS_COPIED only says writes won't reach the producer's array;
 * padded sub-byte storage has no meaning for a raw pointer, and unknown bits may change meaning. */
#define KNOWN_FLAGS (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED)

typedef struct check_ctx {
  const DLTensor *t;
  const gcl_param_info *p;
  size_t index;
  char label[512];
} check_ctx;

/* DLPack (code, bits) of each element type; code 255 for void (any dtype). */
static const struct { uint8_t code, bits; } scalar_dtypes[] = {
    [GCL_SCALAR_VOID] = {255, 0},           [GCL_SCALAR_BOOL] = {GCL_DL_BOOL, 8},
    [GCL_SCALAR_I8] = {kDLInt, 8},          [GCL_SCALAR_U8] = {kDLUInt, 8},
    [GCL_SCALAR_I16] = {kDLInt, 16},        [GCL_SCALAR_U16] = {kDLUInt, 16},
    [GCL_SCALAR_I32] = {kDLInt, 32},        [GCL_SCALAR_U32] = {kDLUInt, 32},
    [GCL_SCALAR_I64] = {kDLInt, 64},        [GCL_SCALAR_U64] = {kDLUInt, 64},
    [GCL_SCALAR_F16] = {kDLFloat, 16},      [GCL_SCALAR_BF16] = {kDLBfloat, 16},
    [GCL_SCALAR_F32] = {kDLFloat, 32},      [GCL_SCALAR_F64] = {kDLFloat, 64},
};

/* "float32", "bool", "bfloat16"; "dtype" for codes without a short name. */
static const char *dtype_text(char *buf, size_t cap, unsigned code, unsigned bits) {
  static const char *const names[] = {"int", "uint", "float", "opaque", "bfloat", "complex"};
  if (code == GCL_DL_BOOL && bits == 8) return "bool";
  if (code >= sizeof names / sizeof names[0]) return "dtype";
  snprintf(buf, cap, "%s%u", names[code], bits);
  return buf;
}

static gcl_status check_flags(const check_ctx *c, uint64_t flags) {
  if (flags & ~(uint64_t)KNOWN_FLAGS)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: unsupported DLPack flags 0x%" PRIx64
                     " (supported: READ_ONLY 0x1, IS_COPIED 0x2)", c->label, flags);
  if ((flags & DLPACK_FLAG_BITMASK_READ_ONLY) && !c->p->is_const)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: tensor is read-only (flags 0x%" PRIx64
                     ") but the parameter is not a const pointer", c->label, flags);
  return GCL_OK;
}

/* CUDA device memory, managed memory and pinned host memory are all plain addresses a kernel can
 * use. Only kDLCUDA's device_id names the device owning the memory: managed and pinned memory
 * report 0 by convention and are reachable from every device, so their id is not compared. */
static gcl_status check_device(const check_ctx *c, int device_id) {
  int type = (int)c->t->device.device_type, id = (int)c->t->device.device_id;
  if (type != kDLCUDA && type != kDLCUDAHost && type != GCL_DL_DEVICE_CUDA_MANAGED)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: device type %d is not CUDA memory (expected kDLCUDA 2,"
                     " kDLCUDAHost 3 or kDLCUDAManaged 13)", c->label, type);
  if (type == kDLCUDA && id < 0)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: CUDA device id %d is negative", c->label, id);
  if (type == kDLCUDA && device_id != -1 && id != device_id)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: tensor is on CUDA device %d, expected device %d",
                     c->label, id, device_id);
  return GCL_OK;
}

/* Checks the dtype and returns the element size in bytes. */
static gcl_status check_dtype(const check_ctx *c, uint64_t *itemsize) {
  DLDataType d = c->t->dtype;
  unsigned want_code = scalar_dtypes[c->p->scalar].code;
  unsigned want_bits = scalar_dtypes[c->p->scalar].bits;
  unsigned total = (unsigned)d.bits * d.lanes;
  if (want_code == 255) { /* void*: any dtype of whole bytes */
    if (d.lanes == 0 || total == 0 || total % 8 != 0)
      return gcl__fail(GCL_ERROR_TENSOR, "%s: dtype (code %u, bits %u, lanes %u) is not a whole "
                       "number of bytes", c->label, d.code, d.bits, d.lanes);
  } else if (d.code != want_code || d.bits != want_bits || d.lanes != 1) {
    char got[32], want[32];
    return gcl__fail(GCL_ERROR_TENSOR, "%s: %s (code %u, bits %u, lanes %u) does not match the "
                     "element type, expected %s (code %u, bits %u, lanes 1)", c->label,
                     dtype_text(got, sizeof got, d.code, d.bits), d.code, d.bits, d.lanes,
                     dtype_text(want, sizeof want, want_code, want_bits), want_code, want_bits);
  }
  *itemsize = total / 8;
  return GCL_OK;
}

/* Checks ndim and shape; *empty is true when some dimension is 0 (the tensor has no element). */
static gcl_status check_shape(const check_ctx *c, bool *empty) {
  const DLTensor *t = c->t;
  if (t->ndim < 0)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: ndim %d is negative", c->label, (int)t->ndim);
  if (t->ndim > 0 && !t->shape)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: shape is NULL with ndim %d", c->label, (int)t->ndim);
  *empty = false;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0)
      return gcl__fail(GCL_ERROR_TENSOR, "%s: shape[%d] = %" PRId64 " is negative", c->label,
                       (int)i, t->shape[i]);
    if (t->shape[i] == 0) *empty = true;
  }
  return GCL_OK;
}

/* A kernel may write through a non-const pointer: a broadcast (stride 0) dimension would make
 * several elements one, a negative stride would put elements below the pointer the kernel gets.
 * Strides of size-1 dimensions are arbitrary (producers differ) and never matter. */
static gcl_status check_strides(const check_ctx *c) {
  const DLTensor *t = c->t;
  if (!t->strides || c->p->is_const) return GCL_OK;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->shape[i] > 1 && t->strides[i] <= 0)
      return gcl__fail(GCL_ERROR_TENSOR, "%s: strides[%d] = %" PRId64 " (%s) is allowed only into"
                       " a const pointer", c->label, (int)i, t->strides[i],
                       t->strides[i] == 0 ? "broadcast" : "negative");
  }
  return GCL_OK;
}

/* Element offsets [lo, hi] of the lowest and highest element relative to the first one. */
static gcl_status element_span(const check_ctx *c, int64_t *lo, int64_t *hi) {
  const DLTensor *t = c->t;
  int64_t compact = 1; /* row-major stride of the current dimension when strides is NULL */
  *lo = 0, *hi = 0;
  for (int32_t i = t->ndim - 1; i >= 0; i--) {
    int64_t stride = t->strides ? t->strides[i] : compact, span;
    if (__builtin_mul_overflow(t->shape[i] - 1, stride, &span) ||
        __builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi) ||
        (!t->strides && __builtin_mul_overflow(compact, t->shape[i], &compact)))
      return gcl__fail(GCL_ERROR_TENSOR, "%s: extent overflows at dimension %d (shape %" PRId64
                       ", stride %" PRId64 ")", c->label, (int)i, t->shape[i], stride);
  }
  return GCL_OK;
}

/* The byte range [first + lo*itemsize, first + (hi+1)*itemsize) must fit the address space. */
static gcl_status check_extent(const check_ctx *c, uint64_t itemsize, uint64_t *first) {
  const DLTensor *t = c->t;
  int64_t lo, hi;
  gcl_status s = element_span(c, &lo, &hi);
  if (s != GCL_OK) return s;
  uint64_t data = (uint64_t)(uintptr_t)t->data, below, above, end;
  if (!t->data)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: data is NULL for a tensor with elements (byte_offset %"
                     PRIu64 ")", c->label, t->byte_offset);
  if (__builtin_add_overflow(data, t->byte_offset, first))
    return gcl__fail(GCL_ERROR_TENSOR, "%s: data 0x%" PRIx64 " + byte_offset %" PRIu64
                     " overflows", c->label, data, t->byte_offset);
  uint64_t lo_elems = (uint64_t)0 - (uint64_t)lo; /* lo <= 0; negating INT64_MIN is UB */
  if (__builtin_mul_overflow(lo_elems, itemsize, &below) || below > *first)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: negative strides reach %" PRIu64 " elements below "
                     "data + byte_offset = 0x%" PRIx64 ", below address 0", c->label, lo_elems,
                     *first);
  if (__builtin_mul_overflow((uint64_t)hi + 1, itemsize, &above) ||
      __builtin_add_overflow(*first, above, &end))
    return gcl__fail(GCL_ERROR_TENSOR, "%s: extent of %" PRIu64 " elements of %" PRIu64 " bytes "
                     "from data + byte_offset = 0x%" PRIx64 " overflows", c->label,
                     (uint64_t)hi + 1, itemsize, *first); /* hi may be INT64_MAX */
  return GCL_OK;
}

static gcl_status check_align(const check_ctx *c, uint64_t first) {
  uint64_t align = c->p->pointee_align ? c->p->pointee_align : 1;
  if (first % align != 0)
    return gcl__fail(GCL_ERROR_TENSOR, "%s: data + byte_offset = 0x%" PRIx64 " is not %" PRIu64
                     "-byte aligned (data 0x%" PRIx64 ", byte_offset %" PRIu64 ")", c->label,
                     first, align, (uint64_t)(uintptr_t)c->t->data, c->t->byte_offset);
  return GCL_OK;
}

static gcl_status check_target(const check_ctx *c) {
  const gcl_param_info *p = c->p;
  if (p->kind != GCL_PARAM_POINTER)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: a tensor needs a pointer parameter", c->label);
  if ((unsigned)p->scalar >= sizeof scalar_dtypes / sizeof scalar_dtypes[0])
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: unknown element type %d", c->label,
                     (int)p->scalar);
  return GCL_OK;
}

gcl_status gcl__dltensor_check(const DLTensor *t, uint64_t flags, const gcl_param_info *p,
                               size_t index, int device_id, uint64_t *address) {
  char label[96];
  gcl__param_label(label, sizeof label, index, p ? p->name : NULL);
  return gcl__dltensor_check_as(t, flags, p, label, device_id, address);
}

gcl_status gcl__dltensor_check_as(const DLTensor *t, uint64_t flags, const gcl_param_info *p,
                                  const char *label, int device_id, uint64_t *address) {
  check_ctx c = {.t = t, .p = p};
  snprintf(c.label, sizeof c.label, "%s", label);
  if (!t || !p || !address)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", c.label,
                     !t ? "tensor" : !p ? "parameter info" : "address");
  uint64_t itemsize = 0, first = 0;
  bool empty = false;
  gcl_status s = check_target(&c);
  if (s == GCL_OK) s = check_flags(&c, flags);
  if (s == GCL_OK) s = check_device(&c, device_id);
  if (s == GCL_OK) s = check_dtype(&c, &itemsize);
  if (s == GCL_OK) s = check_shape(&c, &empty);
  if (s != GCL_OK) return s;
  if (empty) { /* no element: data may be anything, even NULL; nothing is addressed */
    *address = (uint64_t)(uintptr_t)t->data + t->byte_offset;
    return GCL_OK;
  }
  s = check_strides(&c);
  if (s == GCL_OK) s = check_extent(&c, itemsize, &first);
  if (s == GCL_OK) s = check_align(&c, first);
  if (s == GCL_OK) *address = first;
  return s;
}
