/* The checks of tensor maps: the pass over every rule of docs/tensormap-rules.md (lib/core/tmap.c
 * has the rule table and the messages; this is their conditions, each written once, in the
 * table's order), inlined into gcl__tmap_translate and gcl_tensormap_check (tmap.c). A header so
 * that another caller can inline it too: the one-map admissions did, and gave it up (it cost a
 * one-map refresh more than it saved a new description: docs/tensormaps.md). Internal. */
#ifndef GCL_TMAP_PASS_H
#define GCL_TMAP_PASS_H

#include "tmap.h"

#include <string.h>

#define GCL__TMAP_HOT static inline __attribute__((always_inline))

/* Rule `rule` broke at i (tmap.c): its message, formatted only there, and its status. */
__attribute__((noinline, cold)) gcl_status gcl__tmap_refuse(int rule, const gcl__tmap_who *who,
                                                            const DLTensor *t,
                                                            const gcl_tensormap_options *o,
                                                            const gcl_tensormap_desc *d,
                                                            uint32_t i);

#define TMAP_DIM_MAX (1ull << 32)     /* globalDim[i] <= 2^32 */
#define TMAP_STRIDE_LIMIT (1ull << 40) /* globalStrides[i] < 2^40 */
#define TMAP_BOX_MAX 256u
#define TMAP_ESTRIDE_MAX 8u
/* The driver's box limit, measured on the H200 (driver 580, CUDA 13.0; 400,000 descriptions, no
 * exception either way): element bytes x the product over every dimension of
 * floor(box[i] / element_strides[i]) at most 228 KiB -- the shared memory of an sm_90 SM. The
 * floor (not the elements TMA moves, which round up) and dimension 0's element stride (which TMA
 * ignores without interleave) are the driver's arithmetic, as measured. */
#define TMAP_BOX_LIMIT_BYTES (228u * 1024u)
/* Numeric, because Debian's DLPack 0.6 header lacks the names. */
#define GCL_DL_FLOAT8_FIRST 7
#define GCL_DL_FLOAT8_LAST 14

/* The element type of a DLPack dtype, one lookup: dtype_types[code * 16 + bits / 8] is 0 (no
 * tensor map element type) or the type + 1, with DT_FLOAT for the floating-point types (rule 7).
 * dtype_entry indexes it for lanes 1, codes 0 ... 15 and bits 0 ... 120 in steps of 8 only. TMA
 * moves bytes, so integer signedness matters only where the driver has both (32, 64 bits); bool
 * and the 8-bit float8 formats (DLPack 1.1 codes 7-14) are bytes to TMA. */
#define DT_FLOAT 0x40u
#define DT_TYPE(e) ((gcl_tensormap_type)(((e) & 0x3fu) - 1u))
#define DT(code, bits) [(code) * 16 + (bits) / 8]
_Static_assert(GCL_DL_FLOAT8_FIRST == 7 && GCL_DL_FLOAT8_LAST == 14, "the float8 rows above");
_Static_assert(GCL_TENSORMAP_BF16 + 1 < DT_FLOAT, "the types fit below DT_FLOAT");

GCL__TMAP_HOT unsigned dtype_entry(DLDataType dt) {
  static const uint8_t dtype_types[256] = {
      DT(kDLInt, 8) = GCL_TENSORMAP_U8 + 1,         DT(kDLInt, 16) = GCL_TENSORMAP_U16 + 1,
      DT(kDLInt, 32) = GCL_TENSORMAP_I32 + 1,       DT(kDLInt, 64) = GCL_TENSORMAP_I64 + 1,
      DT(kDLUInt, 8) = GCL_TENSORMAP_U8 + 1,        DT(kDLUInt, 16) = GCL_TENSORMAP_U16 + 1,
      DT(kDLUInt, 32) = GCL_TENSORMAP_U32 + 1,      DT(kDLUInt, 64) = GCL_TENSORMAP_U64 + 1,
      DT(kDLFloat, 16) = (GCL_TENSORMAP_F16 + 1) | DT_FLOAT,
      DT(kDLFloat, 32) = (GCL_TENSORMAP_F32 + 1) | DT_FLOAT,
      DT(kDLFloat, 64) = (GCL_TENSORMAP_F64 + 1) | DT_FLOAT,
      DT(kDLBfloat, 16) = (GCL_TENSORMAP_BF16 + 1) | DT_FLOAT,
      DT(GCL_DL_BOOL, 8) = GCL_TENSORMAP_U8 + 1,
      DT(7, 8) = GCL_TENSORMAP_U8 + 1,  DT(8, 8) = GCL_TENSORMAP_U8 + 1,
      DT(9, 8) = GCL_TENSORMAP_U8 + 1,  DT(10, 8) = GCL_TENSORMAP_U8 + 1,
      DT(11, 8) = GCL_TENSORMAP_U8 + 1, DT(12, 8) = GCL_TENSORMAP_U8 + 1,
      DT(13, 8) = GCL_TENSORMAP_U8 + 1, DT(14, 8) = GCL_TENSORMAP_U8 + 1};
  #undef DT
  if (dt.lanes != 1 || dt.code >= 16 || (dt.bits & 0x87u)) return 0;
  return dtype_types[dt.code * 16u + dt.bits / 8u];
}

/* The stride that stands in for a size-1 dimension's (TMA dimension i >= 1), which TMA never
 * steps over: the padded row for i = 1, else the previous stride times the previous dimension,
 * in multiples of `multiple` (16, or 32 with 32-byte interleave). False when that would reach
 * 2^40 (the given stride is checked then). */
GCL__TMAP_HOT bool size1_stride(const gcl_tensormap_desc *d, uint32_t i, unsigned multiple,
                                uint64_t *out) {
  uint64_t s;
  if (i == 1)
    s = (d->dims[0] * d->element_bytes + multiple - 1u) & ~(uint64_t)(multiple - 1u);
  else if (__builtin_mul_overflow(d->strides[i - 2], d->dims[i - 1], &s))
    return false;
  *out = s;
  return s < TMAP_STRIDE_LIMIT;
}

GCL__TMAP_HOT unsigned swizzle_span(int swizzle) { return swizzle ? 16u << swizzle : 0u; }

#define TMAP_IM2COL_PIXELS_MAX 1024u
#define TMAP_IM2COL_CHANNELS_MAX 256u

/* Corner ranges by rank: one 16-bit offset for rank 3, two 8-bit for rank 4, three 5-bit for 5. */
static const int32_t corner_min[] = {-32768, -128, -16}, corner_max[] = {32767, 127, 15};
#define TMAP_UPPER 8u /* tmap_at.i of rule 20: the corner, plus this for upper[] */

GCL__TMAP_HOT int64_t wrap32(uint64_t v) {
  uint32_t w = (uint32_t)v;
  return w < 0x80000000u ? (int64_t)w : (int64_t)w - 0x100000000ll;
}

GCL__TMAP_HOT bool box_holds_pixel(uint64_t size, int32_t lower, int32_t upper) {
  return lower < wrap32(size + (uint64_t)(int64_t)upper);
}

/* A refusal's message reads only the fields of d filled before its rule's place in the pass;
 * where the pass is inlined into gcl_tensormap_check (its d a local), GCC cannot follow that
 * through the table of messages and calls d maybe uninitialised. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define REFUSE(rule, i) return gcl__tmap_refuse((rule), who, t, o, d, (uint32_t)(i))

/* --- the pass ----------------------------------------------------------------------------------
 * The rules' conditions in the table's order, in one function: no call, no message, no
 * allocation while every rule holds; *d filled when all do (on a refusal d is scratch, filled up
 * to the broken rule for its message). After the options and the tensor's rank (rules 24, 1, 2,
 * 3), the rest is compiled once per rank (pass_rank, rank a constant): its loops unrolled, every
 * field of *d written once (the entries past the rank zeroed by constant stores, no memset). */

/* Rules 4, 5, 7, 8, 9, 10, 11, 26: the dimensions, the options against the tensor, the innermost
 * dimension, the strides (TMA dimensions 1 ...; a size-1 dimension's is replaced), the address.
 * dt: the element type's dtype_types entry. */
GCL__TMAP_HOT gcl_status pass_layout(const DLTensor *t, const gcl_tensormap_options *o,
                           const gcl__tmap_who *who, gcl_tensormap_desc *restrict d,
                           const uint32_t rank, unsigned dt) {
  const uint32_t eb = t->dtype.bits / 8u;
  const unsigned shift = (unsigned)__builtin_ctz(eb); /* 1, 2, 4, 8 bytes: shifts */
  const unsigned align = gcl__tmap_align(o);
  const int64_t *shape = t->shape, *strides = t->strides;
  d->type = DT_TYPE(dt), d->rank = rank, d->element_bytes = eb;
  /* interleave, swizzle, l2_promotion, oob_fill: the same four ints in both structs */
  _Static_assert(offsetof(gcl_tensormap_desc, oob_fill) -
                         offsetof(gcl_tensormap_desc, interleave) == 3 * sizeof(int) &&
                 offsetof(gcl_tensormap_options, oob_fill) -
                         offsetof(gcl_tensormap_options, interleave) == 3 * sizeof(int),
                 "the four mode fields are adjacent");
  memcpy(&d->interleave, &o->interleave, 4 * sizeof(int));
#pragma GCC unroll 5
  for (uint32_t dl = 0; dl < rank; dl++) { /* DLPack order: TMA dimension rank - 1 - dl */
    int64_t n = shape[dl];
    if ((uint64_t)n - 1u >= TMAP_DIM_MAX) REFUSE(4, dl); /* 1 ... 2^32 */
    d->dims[rank - 1 - dl] = (uint64_t)n;
  }
  for (uint32_t i = rank; i < GCL_TENSORMAP_MAX_RANK; i++) d->dims[i] = 0;
  for (uint32_t i = rank - 1; i < GCL_TENSORMAP_MAX_RANK - 1; i++) d->strides[i] = 0;
  if (o->interleave && rank < 3) REFUSE(5, 0);
  if (o->oob_fill == GCL_TENSORMAP_OOB_NAN && !(dt & DT_FLOAT)) REFUSE(7, 0);
  if (o->store && (((uint64_t)shape[rank - 1] * eb) & 15u)) REFUSE(8, 0);
  if (shape[rank - 1] > 1 && strides && strides[rank - 1] != 1) REFUSE(9, 0);
  /* Rule 10 as one test per stride, in elements: s & refused is nonzero when s is negative or
   * reaches 2^40 bytes (the high bits) or is no multiple of align bytes (the low bits: align
   * >= 16 > the element size). */
#define GCL__TMAP_REFUSED(a, s) (~((TMAP_STRIDE_LIMIT >> (s)) - 1u) | (((a)-1u) >> (s)))
  static const uint64_t refused_by[2][4] = { /* [32-byte interleave][shift] */
      {GCL__TMAP_REFUSED(16u, 0), GCL__TMAP_REFUSED(16u, 1), GCL__TMAP_REFUSED(16u, 2),
       GCL__TMAP_REFUSED(16u, 3)},
      {GCL__TMAP_REFUSED(32u, 0), GCL__TMAP_REFUSED(32u, 1), GCL__TMAP_REFUSED(32u, 2),
       GCL__TMAP_REFUSED(32u, 3)}};
#undef GCL__TMAP_REFUSED
  const uint64_t refused = refused_by[align == 32u][shift];
  int64_t compact = 1; /* the stride of a NULL-strides tensor, in elements (saturating) */
#pragma GCC unroll 5
  for (uint32_t i = 1; i < rank; i++) {
    int dl = (int)(rank - 1 - i);
    if (!strides && __builtin_mul_overflow(compact, shape[dl + 1], &compact)) compact = INT64_MAX;
    uint64_t sub;
    if (shape[dl] == 1 && size1_stride(d, i, align, &sub)) { /* never stepped over */
      d->strides[i - 1] = sub;
      continue;
    }
    uint64_t s = (uint64_t)(strides ? strides[dl] : compact);
    if (s & refused) REFUSE(10, i); /* 0: broadcast */
    d->strides[i - 1] = s << shift;
  }
  uint64_t base = (uint64_t)(uintptr_t)t->data, address = base + t->byte_offset;
  if (address < base || (address & (align - 1u))) REFUSE(11, 0);
  if (address >= GCL__TMAP_ADDRESS_LIMIT) REFUSE(26, 0); /* the driver's bound, measured */
  d->address = address;
  return GCL_OK;
}

/* Rules 12, 13, 16, 14, 15: the tiled box. Without interleave TMA ignores element_strides[0]
 * (box_bytes); the limit (16) is the driver's arithmetic, floor(box / element stride). */
GCL__TMAP_HOT gcl_status pass_box(const DLTensor *t, const gcl_tensormap_options *o,
                        const gcl__tmap_who *who, gcl_tensormap_desc *restrict d,
                        const uint32_t rank) {
  const uint32_t eb = t->dtype.bits / 8u, il = (uint32_t)o->interleave;
  uint64_t bytes = eb, limit = eb;
#pragma GCC unroll 5
  for (uint32_t i = 0; i < rank; i++) {
    uint32_t b = o->box[i], e = o->element_strides[i]; /* 0 is taken as 1 */
    if (b - 1u >= TMAP_BOX_MAX) REFUSE(12, i);
    if (e <= 1) { /* the usual case: no division (two per dimension cost more than the rest) */
      d->box[i] = b, d->element_strides[i] = 1;
      bytes *= b, limit *= b;
      continue;
    }
    if (e > TMAP_ESTRIDE_MAX) REFUSE(13, i);
    d->box[i] = b, d->element_strides[i] = e;
    bytes *= i == 0 && !il ? b : (b + e - 1) / e;
    limit *= b / e;
  }
  for (uint32_t i = rank; i < GCL_TENSORMAP_MAX_RANK; i++) d->box[i] = 0, d->element_strides[i] = 0;
  if (limit > TMAP_BOX_LIMIT_BYTES) REFUSE(16, 0);
  /* Rule 15's bound: the swizzle span, none without swizzle or with interleave */
  static const uint32_t span_bound[4] = {UINT32_MAX, 32, 64, 128};
  _Static_assert(GCL_TENSORMAP_SWIZZLE_32B == 1 && GCL_TENSORMAP_SWIZZLE_128B == 3, "0 ... 3");
  uint32_t inner = o->box[0] * eb, bound = il ? UINT32_MAX : span_bound[o->swizzle];
  if (inner & 15u) REFUSE(14, 0); /* with interleave too: measured on the H200 */
  if (inner > bound) REFUSE(15, 0); /* span_bound[s] is swizzle_span(s) for s > 0 */
  d->box_bytes = (uint32_t)bytes;
  return GCL_OK;
}

/* Rules 17, 18, 19, 20, 13, 25, 22, 23, 21: im2col (cuTensorMapEncodeIm2col). */
GCL__TMAP_HOT gcl_status pass_im2col(const DLTensor *t, const gcl_tensormap_options *o,
                           const gcl__tmap_who *who, gcl_tensormap_desc *d, const uint32_t rank) {
  const gcl_tensormap_im2col *m = &o->im2col;
  const uint32_t eb = d->element_bytes, il = (uint32_t)d->interleave;
  memset(d->box, 0, sizeof d->box); /* unused by im2col */
  memset(d->element_strides, 0, sizeof d->element_strides);
  memset(&d->im2col, 0, sizeof d->im2col);
  d->box_bytes = 0;
  if (rank < 3) REFUSE(17, 0);
  if (m->pixels > TMAP_IM2COL_PIXELS_MAX) REFUSE(18, 0);
  if (m->channels - 1u >= TMAP_IM2COL_CHANNELS_MAX) REFUSE(19, 0);
  const int32_t min = corner_min[rank - 3], max = corner_max[rank - 3];
  for (uint32_t i = 0; i + 2 < rank; i++) {
    if (m->lower[i] < min || m->lower[i] > max) REFUSE(20, i);
    d->im2col.lower[i] = m->lower[i];
  }
  for (uint32_t i = 0; i + 2 < rank; i++) {
    if (m->upper[i] < min || m->upper[i] > max) REFUSE(20, TMAP_UPPER + i);
    d->im2col.upper[i] = m->upper[i];
  }
  for (uint32_t i = 0; i < rank; i++) {
    uint32_t e = o->element_strides[i] ? o->element_strides[i] : 1u;
    if (e > TMAP_ESTRIDE_MAX) REFUSE(13, i);
    d->element_strides[i] = e;
  }
  for (uint32_t i = 0; i + 2 < rank; i++) /* interleave: the dimension one further in */
    if (!box_holds_pixel(d->dims[il ? i : i + 1], m->lower[i], m->upper[i])) REFUSE(25, i);
  uint32_t inner = m->channels * eb, span = swizzle_span(d->swizzle);
  if (inner & 15u) REFUSE(22, 0); /* with interleave too (measured on the H200, driver 580) */
  if (!il && span && inner > span) REFUSE(23, 0);
  if ((uint64_t)m->pixels * inner > TMAP_BOX_LIMIT_BYTES) REFUSE(21, 0);
  d->im2col.pixels = m->pixels, d->im2col.channels = m->channels;
  d->box_bytes = m->pixels * inner; /* at most 1024 * 256 * 8 bytes */
  return GCL_OK;
}

/* Rules 4 ... 26 for a tensor of rank `rank` (a constant where pass_ranked inlines it). */
GCL__TMAP_HOT gcl_status pass_rank(const DLTensor *t, const gcl_tensormap_options *o,
                         const gcl__tmap_who *who, gcl_tensormap_desc *d, const uint32_t rank,
                         unsigned dt) {
  gcl_status s = pass_layout(t, o, who, d, rank, dt);
  if (s != GCL_OK) return s;
  if (o->im2col.pixels) return pass_im2col(t, o, who, d, rank);
  memset(&d->im2col, 0, sizeof d->im2col);
  return pass_box(t, o, who, d, rank);
}

/* Every rule, in the table's order: the options and the tensor (rules 24, 1, 2, 3), then the
 * rest compiled for each rank. */
GCL__TMAP_HOT gcl_status pass(const DLTensor *t, const gcl_tensormap_options *o,
                              const gcl__tmap_who *who,
                    gcl_tensormap_desc *d) {
  /* Rule 24's four ranges in three tests (swizzle and L2 promotion are both 0 ... 3); which one
   * broke is say_options' question. */
  if ((unsigned)o->interleave > GCL_TENSORMAP_INTERLEAVE_32B ||
      (((unsigned)o->swizzle | (unsigned)o->l2_promotion) & ~3u) || (unsigned)o->oob_fill > 1u)
    REFUSE(24, 0);
  _Static_assert(GCL_TENSORMAP_SWIZZLE_128B == 3 && GCL_TENSORMAP_L2_256B == 3, "0 ... 3");
  int dev = (int)t->device.device_type;
  if (dev != kDLCUDA && dev != GCL_DL_DEVICE_CUDA_MANAGED) REFUSE(1, 0);
  if ((unsigned)(t->ndim - 1) >= GCL_TENSORMAP_MAX_RANK || !t->shape) REFUSE(2, 0);
  unsigned dt = dtype_entry(t->dtype);
  if (!dt) REFUSE(3, 0);
  switch (t->ndim) {
  case 1: return pass_rank(t, o, who, d, 1, dt);
  case 2: return pass_rank(t, o, who, d, 2, dt);
  case 3: return pass_rank(t, o, who, d, 3, dt);
  case 4: return pass_rank(t, o, who, d, 4, dt);
  default: return pass_rank(t, o, who, d, 5, dt);
  }
}

/* Stages [0, upto) of the translation, in the order they run; gcl__tmap_translate is all
 * GCL__TMAP_STAGES of them (upto is a constant there, so the comparisons fold away).
 * (bench/tmap_stages.c, which timed a prefix of them, is gone: issue 56.) */
GCL__TMAP_HOT gcl_status translate_upto(const DLTensor *t, const gcl_tensormap_options *o,
                                        const gcl__tmap_who *who, gcl_tensormap_desc *out,
                                        int upto) {
  if (!t) return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT, "expected a DLTensor, got NULL");
  if (!o)
    return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT, "options: expected a pointer, got NULL");
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  /* The growth rule: four 8-byte words ORed (no vector reduction), the index only on failure. */
  _Static_assert(sizeof o->reserved == 32, "reserved is 8 words");
  const unsigned char *r = (const unsigned char *)o->reserved;
  uint64_t w0, w1, w2, w3; /* four loads: an array here went through the stack */
  memcpy(&w0, r, 8), memcpy(&w1, r + 8, 8), memcpy(&w2, r + 16, 8), memcpy(&w3, r + 24, 8);
  bool any = (w0 | w1 | w2 | w3) != 0;
  for (size_t i = 0; any && i < sizeof o->reserved / sizeof *o->reserved; i++)
    if (o->reserved[i])
      return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT,
                            "options.reserved[%zu] is %u, expected 0 "
                            "(zero-initialise the options)", i, (unsigned)o->reserved[i]);
  if (upto < 2) return GCL_OK;
  return pass(t, o, who, out);
}

#pragma GCC diagnostic pop

#endif
