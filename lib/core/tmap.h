/* Tensor maps on the CPU: DLPack tensor + options -> the arguments of cuTensorMapEncodeTiled
 * (or cuTensorMapEncodeIm2col).
 * Internal; lib/cuda/tmap_driver.c calls the driver with the result. */
#ifndef GCL_TMAP_H
#define GCL_TMAP_H

#include "internal.h"

#include <stddef.h>
#include <string.h>

/* The global address a map may name: below 2^57 (bits 57 ... 63 zero). Measured (driver 580,
 * CUDA 13.0, sm_90, H100): cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col refuse
 * 2^57 and above, whatever the tensor's extent, rank, type, interleave or mode, and take every
 * aligned address below (bench/experiments/address_probe.py); cuTensorMapReplaceAddress has the
 * same bound and refuses 0 too. Not in the CUDA 13.0 header. */
#define GCL__TMAP_ADDRESS_LIMIT (1ull << 57)

/* Who a map is in messages, as pieces: the text is formatted only when a call fails, so that
 * the success path does no snprintf and builds nothing. text non-NULL: used as is ("tensor");
 * indexed: "<text> entry <rel / 128>" (a table's map). Otherwise the map rel bytes past the one
 * field names (the caller's gcl_field, read only when a message is formatted, so that the hot
 * path copies nothing out of it): "parameter 0 'g' field 'g.maps[3]'", or "parameter 2 'm'" when
 * the map is the whole parameter (rel 0, and the parameter is a map: asked only then). */
typedef struct gcl__tmap_who {
  const char *text;
  const gcl_field *field;
  size_t rel;
  bool indexed;
} gcl__tmap_who;

/* Formats who into buf (cap bytes) and returns buf. */
const char *gcl__tmap_who_format(const gcl__tmap_who *who, char *buf, size_t cap);
/* Records "WHO: <fmt...>" as this thread's failure and returns s. Failure paths only. */
gcl_status gcl__tmap_fail(const gcl__tmap_who *who, gcl_status s, const char *fmt, ...)
    GCL__PRINTF(3, 4);

/* Checks t and o against every rule of docs/tensormap-rules.md in one pass (lib/core/tmap_pass.h;
 * lib/core/tmap.c's rule table: each rule's condition written once in the pass, its message once
 * in the table)
 * and fills *out, in place: on failure *out
 * holds scratch (callers pass a local; gcl_tensormap_check keeps the caller's desc untouched).
 * who names the tensor in messages ("tensor", "parameter 0 'maps' element 7"). Reads only t and
 * o. GCL_ERROR_TENSOR for the tensor's own faults, GCL_ERROR_INVALID_ARGUMENT for NULL pointers
 * and bad option values. Formats nothing on success. */
gcl_status gcl__tmap_translate(const DLTensor *t, const gcl_tensormap_options *o,
                               const gcl__tmap_who *who, gcl_tensormap_desc *out);
/* The rule table's size: rules are numbered 1 ... GCL__TMAP_RULES - 1 (docs/tensormap-rules.md). */
#define GCL__TMAP_RULES 29

/* The DLPack flags a tensor map's source may carry: those the pointer setters know. */
#define GCL__TMAP_DLFLAGS_KNOWN (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED)

/* Rules 27 and 28 of docs/tensormap-rules.md, the DLPack flags of a map's tensor (as its producer
 * gave them, DLManagedTensorVersioned.flags) against its options: 0 when they hold, else the
 * number of the rule broken -- 27 for a bit gclaunch does not know, 28 for a read-only tensor
 * under a store map. Inline: the admission asks it of every map whose flags are not 0. */
static inline int gcl__tmap_flags_rule(uint64_t flags, const gcl_tensormap_options *o) {
  if (flags & ~(uint64_t)GCL__TMAP_DLFLAGS_KNOWN) return 27;
  if ((flags & DLPACK_FLAG_BITMASK_READ_ONLY) && o->store) return 28;
  return 0;
}
/* Rule `rule` (27 or 28, from gcl__tmap_flags_rule) refused t with o and flags: its message from
 * the rule table, naming who. GCL_ERROR_TENSOR. Failure paths only. */
gcl_status gcl__tmap_refuse_flags(int rule, const gcl__tmap_who *who, const DLTensor *t,
                                  const gcl_tensormap_options *o, uint64_t flags);

/* The number of check stages gcl__tmap_translate runs (1: arguments and reserved words; 2: the
 * one pass over the rules); bench/tmap_stages.c times them (issues 25, 36). */
#define GCL__TMAP_STAGES 2

/* True when a map of d is one NVIDIA's Blackwell defect concerns (driver 595.71.05 release
 * notes, known issues): the tensor is not dense and non-overlapping, and its footprint (the
 * bytes from its first to its last element) is under 128 KiB, so that its allocation may be too
 * (gclaunch does not know the allocation; the footprint is a lower bound of it). The driver edge
 * clears descriptor bit 85 of such maps on the drivers and architectures concerned
 * (docs/tensormap-rules.md). */
bool gcl__tmap_sparse_small(const gcl_tensormap_desc *d);

/* "float32", "uint8", "bfloat16", ... for messages; "?" for values outside the enum. */
const char *gcl__tmap_type_name(gcl_tensormap_type type);

/* The inputs a map was last encoded from, but for data and byte_offset: a refresh whose tensor
 * and options equal them translates to the same description but for the address
 * (gcl__tmap_translate reads nothing else), so it re-checks only what depends on the address --
 * data non-NULL, data + byte_offset without overflow and aligned -- and the device, then calls
 * cuTensorMapReplaceAddress: no translation. Compared field by field (no hash). ndim 0: no map
 * gclaunch encoded (never set, or overwritten by a raw setter). Only entries of the used
 * dimensions are compared and stored. */
typedef struct gcl__tmap_snap {
  /* device, ndim, dtype: in DLTensor's order, without padding, so that one 16-byte comparison
   * reads them (gcl__tmap_snap_match). */
  DLDevice device;
  int32_t ndim;      /* 0: no snapshot; else 1 ... GCL_TENSORMAP_MAX_RANK */
  DLDataType dtype;
  uint16_t align;    /* 16 or 32: the global-address alignment the map needs */
  uint8_t mode;      /* 1 << options.interleave: a re-point reads this, not the options (which
                        lie a cache line further: two lines per map in a batch) */
  uint8_t has_strides;
  int64_t shape[GCL_TENSORMAP_MAX_RANK], strides[GCL_TENSORMAP_MAX_RANK];
  gcl_tensormap_options options; /* 16-byte aligned in a cache entry (tmap_plan.h) */
} gcl__tmap_snap;
#define GCL__TMAP_SNAP_HEAD 16 /* device, ndim, dtype: the same 16 bytes in a DLTensor */
_Static_assert(offsetof(gcl__tmap_snap, ndim) == offsetof(gcl__tmap_snap, device) + 8 &&
                   offsetof(gcl__tmap_snap, dtype) == offsetof(gcl__tmap_snap, device) + 12 &&
                   offsetof(DLTensor, ndim) == offsetof(DLTensor, device) + 8 &&
                   offsetof(DLTensor, dtype) == offsetof(DLTensor, device) + 12 &&
                   sizeof(DLDevice) + sizeof(int32_t) + sizeof(DLDataType) == GCL__TMAP_SNAP_HEAD,
               "the snapshot's head is DLTensor's device, ndim and dtype");

/* The global-address alignment a map made with options o needs: 32 with 32-byte interleave. */
static inline unsigned gcl__tmap_align(const gcl_tensormap_options *o) {
  return o->interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
}

/* Records t and o (which gcl__tmap_translate accepted). Inline, no call: a set encodes and
 * records every map. */
static inline void gcl__tmap_snap_make(const DLTensor *t, const gcl_tensormap_options *o,
                                       gcl__tmap_snap *snap) {
  int n = t->ndim; /* 1 ... 5: t was translated */
  memcpy(&snap->device, &t->device, GCL__TMAP_SNAP_HEAD); /* device, ndim, dtype */
  snap->align = (uint16_t)gcl__tmap_align(o);
  snap->mode = (uint8_t)(1u << o->interleave); /* 0 ... 2: o was translated */
  const int64_t *shape = t->shape, *strides = t->strides;
  snap->has_strides = strides != NULL;
  /* straight-line from the last dimension down, as gcl__tmap_snap_match reads them */
#define GCL__SNAP_SET(i)                                                                           \
  (snap->shape[i] = shape[i], strides ? (void)(snap->strides[i] = strides[i]) : (void)0)
  switch (n) {
  case 5: GCL__SNAP_SET(4); __attribute__((fallthrough));
  case 4: GCL__SNAP_SET(3); __attribute__((fallthrough));
  case 3: GCL__SNAP_SET(2); __attribute__((fallthrough));
  case 2: GCL__SNAP_SET(1); __attribute__((fallthrough));
  default: GCL__SNAP_SET(0);
  }
#undef GCL__SNAP_SET
  snap->options = *o;
}

/* a == b byte for byte, inline (memcmp of a struct this size is a PLT call): XOR of 16-byte
 * vectors (GCC's generic vectors: SSE2 on x86-64, NEON on arm64, pairs of words elsewhere), then
 * the 8- and 4-byte tail. The options have only 4-byte members, so no padding. b is a
 * snapshot's, which lie 16-byte aligned in their cache entries (tmap_plan.h): its vectors are
 * read as operands of the XOR. */
static inline bool gcl__tmap_options_equal(const gcl_tensormap_options *a,
                                           const gcl_tensormap_options *b) {
  typedef uint64_t v2 __attribute__((vector_size(16)));
  _Static_assert(sizeof *a % 4 == 0, "options are 4-byte members");
  const unsigned char *x = (const unsigned char *)a;
  const unsigned char *y = (const unsigned char *)__builtin_assume_aligned(b, 16);
  v2 acc = {0, 0}, u, v;
  size_t i = 0;
#pragma GCC unroll 8 /* 7 vectors: straight-line loads, no loop (the refresh path runs this) */
  for (; i + 16 <= sizeof *a; i += 16) memcpy(&u, x + i, 16), memcpy(&v, y + i, 16), acc |= u ^ v;
  uint64_t diff = acc[0] | acc[1], p, q;
  for (; i + 8 <= sizeof *a; i += 8) memcpy(&p, x + i, 8), memcpy(&q, y + i, 8), diff |= p ^ q;
  for (; i < sizeof *a; i += 4) {
    uint32_t p4, q4;
    memcpy(&p4, x + i, 4), memcpy(&q4, y + i, 4), diff |= p4 ^ q4;
  }
  return diff == 0;
}

/* True when snap is valid and t and o (either may be NULL) equal it in everything but data and
 * byte_offset. Inline: the refresh fast path is this, an address check and the driver call. */
__attribute__((always_inline)) static inline bool
gcl__tmap_snap_match(const gcl__tmap_snap *s, const DLTensor *t, const gcl_tensormap_options *o) {
  if (!t || !o || !s->ndim) return false;
  uint64_t x[2], y[2]; /* device, ndim, dtype at once */
  memcpy(x, &t->device, GCL__TMAP_SNAP_HEAD), memcpy(y, &s->device, GCL__TMAP_SNAP_HEAD);
  if (((x[0] ^ y[0]) | (x[1] ^ y[1])) || !t->shape ||
      (t->strides != NULL) != (s->has_strides != 0) || !gcl__tmap_options_equal(o, &s->options))
    return false;
  /* The dimensions, shape and strides side by side, straight-line from the last used one down
   * (a jump into the sequence by ndim: no loop to count) */
  uint64_t diff = 0;
  const int64_t *shape = t->shape, *strides = t->strides;
#define GCL__SNAP_DIM(i)                                                                           \
  diff |= (uint64_t)(shape[i] ^ s->shape[i]) |                                                     \
          (strides ? (uint64_t)(strides[i] ^ s->strides[i]) : 0u)
  _Static_assert(GCL_TENSORMAP_MAX_RANK == 5, "five cases");
  switch (s->ndim) { /* 1 ... 5: the head compared equal, and t->ndim is s->ndim */
  case 5: GCL__SNAP_DIM(4); __attribute__((fallthrough));
  case 4: GCL__SNAP_DIM(3); __attribute__((fallthrough));
  case 3: GCL__SNAP_DIM(2); __attribute__((fallthrough));
  case 2: GCL__SNAP_DIM(1); __attribute__((fallthrough));
  default: GCL__SNAP_DIM(0);
  }
#undef GCL__SNAP_DIM
  return diff == 0;
}

/* data + byte_offset into *address when the fast path may use it: nonzero (a map at address 0 is
 * encoded afresh, not re-pointed: cuTensorMapReplaceAddress refuses 0, measured on driver 580),
 * no overflow, aligned to align, below GCL__TMAP_ADDRESS_LIMIT. Otherwise false: the full
 * translation then encodes the map, or reports what is wrong. */
static inline bool gcl__tmap_snap_address(const DLTensor *t, unsigned align, uint64_t *address) {
  uint64_t a;
  bool wrapped = __builtin_add_overflow((uint64_t)(uintptr_t)t->data, t->byte_offset, &a);
  *address = a;
  /* nonzero and below 2^57 in one comparison (a - 1 wraps for 0) */
  return !wrapped && a - 1u < GCL__TMAP_ADDRESS_LIMIT - 1u && !(a & (align - 1u));
}

#endif
