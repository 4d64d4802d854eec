/* Tensor maps on the CPU: validates a DLPack tensor and options against the constraints of
 * cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col (CUDA 13 cuda.h; docs/facts.md "Tensor maps:
 * encode rules") and translates them into their arguments, so that every mistake is reported
 * with the tensor, the dimension and the value before the driver, which would only say
 * CUDA_ERROR_INVALID_VALUE. No cuda.h here: the enum values are gclaunch's own, asserted equal
 * to the driver's in lib/cuda/tensormap.c. */
#include "tmap.h"
#include "layout_internal.h"

#include <stdio.h>
#include <string.h>

#define tfail(...) gcl__tmap_fail(__VA_ARGS__)

#define TMAP_DIM_MAX (1ull << 32)     /* globalDim[i] <= 2^32 */
#define TMAP_STRIDE_LIMIT (1ull << 40) /* globalStrides[i] < 2^40 */
#define TMAP_BOX_MAX 256u
#define TMAP_ESTRIDE_MAX 8u
/* Numeric, because Debian's DLPack 0.6 header lacks the names. */
#define GCL_DL_FLOAT8_FIRST 7
#define GCL_DL_FLOAT8_LAST 14

static const char *const type_names[] = {"uint8",   "uint16",  "uint32",  "int32",  "uint64",
                                         "int64",   "float16", "float32", "float64", "bfloat16"};

const char *gcl__tmap_type_name(gcl_tensormap_type type) {
  if ((unsigned)type >= sizeof type_names / sizeof *type_names) return "?";
  return type_names[type];
}

static bool is_float(gcl_tensormap_type type) {
  return type == GCL_TENSORMAP_F16 || type == GCL_TENSORMAP_F32 || type == GCL_TENSORMAP_F64 ||
         type == GCL_TENSORMAP_BF16;
}

/* TMA moves bytes, so integer signedness matters only where the driver has both (32, 64 bits). */
static int int_type(unsigned bits, bool is_signed) {
  switch (bits) {
  case 8: return GCL_TENSORMAP_U8;
  case 16: return GCL_TENSORMAP_U16;
  case 32: return is_signed ? GCL_TENSORMAP_I32 : GCL_TENSORMAP_U32;
  case 64: return is_signed ? GCL_TENSORMAP_I64 : GCL_TENSORMAP_U64;
  default: return -1;
  }
}

static int dtype_to_type(DLDataType dt) {
  if (dt.lanes != 1) return -1;
  switch (dt.code) {
  case kDLInt: return int_type(dt.bits, true);
  case kDLUInt: return int_type(dt.bits, false);
  case GCL_DL_BOOL: return dt.bits == 8 ? GCL_TENSORMAP_U8 : -1;
  case kDLBfloat: return dt.bits == 16 ? GCL_TENSORMAP_BF16 : -1;
  case kDLFloat:
    return dt.bits == 16 ? GCL_TENSORMAP_F16
           : dt.bits == 32 ? GCL_TENSORMAP_F32
           : dt.bits == 64 ? GCL_TENSORMAP_F64
                           : -1;
  default:
    /* The 8-bit float8 formats (DLPack 1.1 codes 7-14) are bytes to TMA. */
    return dt.code >= GCL_DL_FLOAT8_FIRST && dt.code <= GCL_DL_FLOAT8_LAST && dt.bits == 8
               ? GCL_TENSORMAP_U8
               : -1;
  }
}

static gcl_status check_tensor(const DLTensor *t, const gcl__tmap_who *who) {
  if (t->device.device_type != kDLCUDA && (int)t->device.device_type != GCL_DL_DEVICE_CUDA_MANAGED)
    return tfail(who, GCL_ERROR_TENSOR,
                     "device type %d is not CUDA (%d) or CUDA managed (%d): TMA reads device "
                     "memory", (int)t->device.device_type, (int)kDLCUDA,
                     GCL_DL_DEVICE_CUDA_MANAGED);
  if (t->ndim < 1 || t->ndim > GCL_TENSORMAP_MAX_RANK)
    return tfail(who, GCL_ERROR_TENSOR, "ndim = %d: a tensor map has rank 1 ... %d",
                     (int)t->ndim, GCL_TENSORMAP_MAX_RANK);
  if (!t->shape) return tfail(who, GCL_ERROR_TENSOR, "shape is NULL with ndim %d", t->ndim);
  if (!t->data) return tfail(who, GCL_ERROR_TENSOR, "data is NULL");
  return GCL_OK;
}

static gcl_status fill_type(const DLTensor *t, const gcl__tmap_who *who, gcl_tensormap_desc *d) {
  int type = dtype_to_type(t->dtype);
  if (type < 0)
    return tfail(who, GCL_ERROR_TENSOR,
                     "dtype (code %u, bits %u, lanes %u) has no tensor map element type "
                     "(expected 8/16/32/64-bit int, uint, float, bfloat16, bool, float8; lanes 1)", t->dtype.code, t->dtype.bits, t->dtype.lanes);
  d->type = (gcl_tensormap_type)type;
  d->element_bytes = t->dtype.bits / 8u;
  return GCL_OK;
}

/* TMA dimension i is DLPack dimension ndim-1-i. */
static gcl_status fill_dims(const DLTensor *t, const gcl__tmap_who *who, gcl_tensormap_desc *d) {
  d->rank = (uint32_t)t->ndim;
  for (int dl = 0; dl < t->ndim; dl++) {
    int64_t n = t->shape[dl];
    if (n < 1 || (uint64_t)n > TMAP_DIM_MAX)
      return tfail(who, GCL_ERROR_TENSOR, "dimension %d has size %lld: expected 1 ... 2^32", dl, (long long)n);
    d->dims[t->ndim - 1 - dl] = (uint64_t)n;
  }
  return GCL_OK;
}

/* Stride of DLPack dimension dl in elements: given, or compact row-major when strides is NULL.
 * The compact product saturates at INT64_MAX (shapes reach 2^32 each), which the stride limit
 * check then refuses. */
static int64_t stride_elems(const DLTensor *t, int dl) {
  if (t->strides) return t->strides[dl];
  int64_t s = 1; /* shapes are checked positive by now (fill_dims); no division per step */
  for (int k = dl + 1; k < t->ndim; k++)
    if (__builtin_mul_overflow(s, t->shape[k], &s)) return INT64_MAX;
  return s;
}

static gcl_status check_innermost(const DLTensor *t, const gcl__tmap_who *who) {
  int dl = t->ndim - 1;
  if (t->shape[dl] > 1 && stride_elems(t, dl) != 1)
    return tfail(who, GCL_ERROR_TENSOR,
                     "dimension %d (innermost) has stride %lld elements: TMA needs it "
                     "contiguous (stride 1)", dl, (long long)stride_elems(t, dl));
  return GCL_OK;
}

static gcl_status fill_strides(const DLTensor *t, const gcl__tmap_who *who, unsigned multiple,
                               gcl_tensormap_desc *d) {
  for (uint32_t i = 1; i < d->rank; i++) {
    int dl = t->ndim - 1 - (int)i;
    if (t->shape[dl] == 1) { /* never stepped over: any valid stride describes it */
      d->strides[i - 1] = i == 1 ? (d->dims[0] * d->element_bytes + 15u) / 16u * 16u
                                 : d->strides[i - 2] * d->dims[i - 1];
      if (d->strides[i - 1] < TMAP_STRIDE_LIMIT) continue;
    }
    int64_t s = stride_elems(t, dl);
    /* element_bytes is 1, 2, 4 or 8: shifts, not divisions (this path runs per map) */
    unsigned shift = (unsigned)__builtin_ctz(d->element_bytes);
    if (s < 1 || (uint64_t)s >= TMAP_STRIDE_LIMIT >> shift)
      return tfail(who, GCL_ERROR_TENSOR,
                       "dimension %d has stride %lld elements: expected a positive stride "
                       "below 2^40 bytes", dl, (long long)s);
    uint64_t bytes = (uint64_t)s << shift;
    if (bytes & (multiple - 1u)) /* multiple is 16 or 32 */
      return tfail(who, GCL_ERROR_TENSOR,
                       "dimension %d has stride %lld elements = %llu bytes: TMA needs a "
                       "multiple of %u bytes", dl, (long long)s, (unsigned long long)bytes,
                       multiple);
    d->strides[i - 1] = bytes;
  }
  return GCL_OK;
}

static gcl_status fill_address(const DLTensor *t, const gcl__tmap_who *who, unsigned align,
                               gcl_tensormap_desc *d) {
  uint64_t base = (uint64_t)(uintptr_t)t->data;
  if (t->byte_offset > UINT64_MAX - base)
    return tfail(who, GCL_ERROR_TENSOR, "data 0x%llx + byte_offset %llu overflows",
                     (unsigned long long)base, (unsigned long long)t->byte_offset);
  uint64_t address = base + t->byte_offset;
  if (address & (align - 1u)) /* align is 16 or 32 */
    return tfail(who, GCL_ERROR_TENSOR,
                     "data + byte_offset = 0x%llx + %llu = 0x%llx is not %u-byte aligned "
                     "(TMA needs a %u-byte aligned global address)",
                     (unsigned long long)base, (unsigned long long)t->byte_offset,
                     (unsigned long long)address, align, align);
  d->address = address;
  return GCL_OK;
}

static unsigned swizzle_span(int swizzle) { return swizzle ? 16u << swizzle : 0u; }

static gcl_status check_enums(const gcl_tensormap_options *o, const gcl__tmap_who *who,
                              gcl_tensormap_desc *d) {
  if (o->interleave < 0 || o->interleave > GCL_TENSORMAP_INTERLEAVE_32B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "interleave = %d: expected 0 ... 2",
                     o->interleave);
  if (o->swizzle < 0 || o->swizzle > GCL_TENSORMAP_SWIZZLE_128B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "swizzle = %d: expected 0 ... 3",
                     o->swizzle);
  if (o->l2_promotion < 0 || o->l2_promotion > GCL_TENSORMAP_L2_256B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "l2_promotion = %d: expected 0 ... 3",
                     o->l2_promotion);
  if (o->oob_fill < 0 || o->oob_fill > GCL_TENSORMAP_OOB_NAN)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "oob_fill = %d: expected 0 or 1",
                     o->oob_fill);
  d->interleave = o->interleave;
  d->swizzle = o->swizzle;
  d->l2_promotion = o->l2_promotion;
  d->oob_fill = o->oob_fill;
  return GCL_OK;
}

/* Rules that tie options to the tensor: interleave needs rank >= 3 and, at 32 bytes, the 32-byte
 * swizzle; the NaN fill is for floating-point types only. */
static gcl_status check_combination(const gcl__tmap_who *who, const gcl_tensormap_desc *d) {
  if (d->interleave && d->rank < 3)
    return tfail(who, GCL_ERROR_TENSOR, "interleave %d needs rank >= 3, the tensor has rank %u", d->interleave, d->rank);
  if (d->interleave == GCL_TENSORMAP_INTERLEAVE_32B && d->swizzle != GCL_TENSORMAP_SWIZZLE_32B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT,
                     "32-byte interleave needs swizzle %d (32B), got swizzle %d",
                     GCL_TENSORMAP_SWIZZLE_32B, d->swizzle);
  if (d->oob_fill == GCL_TENSORMAP_OOB_NAN && !is_float(d->type))
    return tfail(who, GCL_ERROR_TENSOR, "the NaN out-of-bounds fill needs a floating-point "
                     "type, the tensor is %s", gcl__tmap_type_name(d->type));
  return GCL_OK;
}

/* TMA stores write global memory in whole 16-byte chunks: a box that reaches the end of a row
 * whose length in bytes is not a multiple of 16 also writes the bytes after the row, up to the next
 * 16-byte boundary (padding, or another tensor's data), with whatever the box holds there (the
 * out-of-bounds fill of the load). The driver encodes such a map without complaint (triton-lang/
 * triton#11583; seen on the H200), so a map meant for stores is refused here. Rows start 16-byte
 * aligned (address and strides are checked), so the row length alone decides. */
static gcl_status check_store_extent(const gcl_tensormap_options *o, const gcl__tmap_who *who,
                                     const gcl_tensormap_desc *d) {
  uint64_t row = d->dims[0] * d->element_bytes;
  if (!o->store || (row & 15u) == 0) return GCL_OK;
  return tfail(who, GCL_ERROR_TENSOR,
                   "store = 1 and dimension %d (innermost) has %llu elements of %u bytes = "
                   "%llu bytes, not a multiple of 16: TMA stores write whole 16-byte chunks and "
                   "would overwrite the %llu bytes after each row", (int)d->rank - 1,
                   (unsigned long long)d->dims[0], d->element_bytes, (unsigned long long)row,
                   (unsigned long long)(16u - row % 16u));
}

/* Element stride of TMA dimension i into d (0 is taken as 1), for tiled and im2col maps. */
static gcl_status fill_element_stride(const gcl_tensormap_options *o, uint32_t i, const gcl__tmap_who *who,
                                      gcl_tensormap_desc *d) {
  uint32_t e = o->element_strides[i] ? o->element_strides[i] : 1u;
  if (e > TMAP_ESTRIDE_MAX)
    return tfail(who, GCL_ERROR_TENSOR,
                     "element_strides[%u] (dimension %d) = %u: expected 1 ... %u", i,
                     (int)d->rank - 1 - (int)i, e, TMAP_ESTRIDE_MAX);
  d->element_strides[i] = e;
  return GCL_OK;
}

static gcl_status fill_box(const gcl_tensormap_options *o, const gcl__tmap_who *who,
                           gcl_tensormap_desc *d) {
  uint64_t bytes = d->element_bytes;
  for (uint32_t i = 0; i < d->rank; i++) {
    int dl = (int)d->rank - 1 - (int)i;
    uint32_t b = o->box[i];
    if (b < 1 || b > TMAP_BOX_MAX)
      return tfail(who, GCL_ERROR_TENSOR, "box[%u] (dimension %d) = %u: expected 1 ... %u", i, dl, b, TMAP_BOX_MAX);
    gcl_status s = fill_element_stride(o, i, who, d);
    if (s != GCL_OK) return s;
    uint32_t e = d->element_strides[i];
    d->box[i] = b;
    /* Without interleave TMA ignores element_strides[0]. */
    bytes *= (i == 0 && !d->interleave) || e == 1 ? b : (b + e - 1) / e;
  }
  if (bytes > UINT32_MAX) /* 256^5 * 8 bytes would not fit the transaction count */
    return tfail(who, GCL_ERROR_TENSOR, "the box holds %llu bytes: too large",
                     (unsigned long long)bytes);
  d->box_bytes = (uint32_t)bytes;
  return GCL_OK;
}

static gcl_status check_inner_box(const gcl__tmap_who *who, const gcl_tensormap_desc *d) {
  uint32_t inner = d->box[0] * d->element_bytes;
  int dl = (int)d->rank - 1;
  if (!d->interleave && (inner & 15u))
    return tfail(who, GCL_ERROR_TENSOR,
                     "box[0] (dimension %d) = %u elements of %u bytes = %u bytes: the inner "
                     "box must be a multiple of 16 bytes", dl, d->box[0], d->element_bytes,
                     inner);
  unsigned span = swizzle_span(d->swizzle);
  if (!d->interleave && span && inner > span)
    return tfail(who, GCL_ERROR_TENSOR,
                     "box[0] (dimension %d) = %u elements = %u bytes exceeds the %u-byte "
                     "swizzle span", dl, d->box[0], inner, span);
  return GCL_OK;
}

/* --- im2col (cuTensorMapEncodeIm2col) -------------------------------------------------------- */

#define TMAP_IM2COL_PIXELS_MAX 1024u
#define TMAP_IM2COL_CHANNELS_MAX 256u

static const char *const spatial_names[] = {"W", "H", "D"};

/* Corner ranges by rank: one 16-bit offset for rank 3, two 8-bit for rank 4, three 5-bit for 5. */
static gcl_status check_corners(const int32_t *c, const char *which, const gcl__tmap_who *who,
                                gcl_tensormap_desc *d, int32_t *out) {
  static const int32_t lo[] = {-32768, -128, -16}, hi[] = {32767, 127, 15};
  uint32_t spatial = d->rank - 2;
  for (uint32_t i = 0; i < spatial; i++) {
    int32_t min = lo[d->rank - 3], max = hi[d->rank - 3];
    if (c[i] < min || c[i] > max)
      return tfail(who, GCL_ERROR_TENSOR,
                       "im2col.%s[%u] (%s, dimension %d) = %d: expected %d ... %d for rank %u", which, i, spatial_names[i], (int)(d->rank - 2 - i), (int)c[i],
                       (int)min, (int)max, d->rank);
    out[i] = c[i];
  }
  return GCL_OK;
}

static gcl_status fill_im2col(const gcl_tensormap_options *o, const gcl__tmap_who *who,
                              gcl_tensormap_desc *d) {
  const gcl_tensormap_im2col *m = &o->im2col;
  if (d->rank < 3)
    return tfail(who, GCL_ERROR_TENSOR,
                     "im2col needs rank 3 ... 5 (N, spatial dimensions, C), the tensor has "
                     "rank %u", d->rank);
  if (m->pixels > TMAP_IM2COL_PIXELS_MAX)
    return tfail(who, GCL_ERROR_TENSOR, "im2col.pixels = %u: expected 1 ... %u",
                     m->pixels, TMAP_IM2COL_PIXELS_MAX);
  if (m->channels < 1 || m->channels > TMAP_IM2COL_CHANNELS_MAX)
    return tfail(who, GCL_ERROR_TENSOR, "im2col.channels = %u: expected 1 ... %u",
                     m->channels, TMAP_IM2COL_CHANNELS_MAX);
  gcl_status s;
  if ((s = check_corners(m->lower, "lower", who, d, d->im2col.lower)) ||
      (s = check_corners(m->upper, "upper", who, d, d->im2col.upper)))
    return s;
  for (uint32_t i = 0; i < d->rank; i++)
    if ((s = fill_element_stride(o, i, who, d)) != GCL_OK) return s;
  uint32_t inner = m->channels * d->element_bytes, span = swizzle_span(d->swizzle);
  if (!d->interleave && span && inner > span)
    return tfail(who, GCL_ERROR_TENSOR,
                     "im2col.channels (dimension %d) = %u elements = %u bytes exceeds the "
                     "%u-byte swizzle span", (int)d->rank - 1, m->channels, inner, span);
  d->im2col.pixels = m->pixels;
  d->im2col.channels = m->channels;
  d->box_bytes = m->pixels * inner; /* at most 1024 * 256 * 8 bytes */
  return GCL_OK;
}

/* Unused entries must be zero (the refresh key and the driver see them). Field by field: one
 * memset of the whole struct becomes `rep stos`, which costs more than the rest of a
 * translation; pieces of at most 40 bytes become a few vector stores. */
static void zero_desc(gcl_tensormap_desc *d) {
  memset(d->dims, 0, sizeof d->dims);
  memset(d->strides, 0, sizeof d->strides);
  memset(d->box, 0, sizeof d->box);
  memset(d->element_strides, 0, sizeof d->element_strides);
  memset(&d->im2col, 0, sizeof d->im2col);
  d->type = 0, d->rank = 0, d->element_bytes = 0, d->box_bytes = 0, d->address = 0;
  d->interleave = d->swizzle = d->l2_promotion = d->oob_fill = 0;
}

/* Stages [0, upto) of the translation, in the order they run; gcl__tmap_translate is all
 * GCL__TMAP_STAGES of them (upto is a constant there, so the comparisons fold away).
 * bench/tmap_stages.c compiles this file into bench_refresh to time a prefix of them. */
static inline gcl_status translate_upto(const DLTensor *t, const gcl_tensormap_options *o,
                                        const gcl__tmap_who *who, gcl_tensormap_desc *out,
                                        int upto) {
  if (!t) return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "expected a DLTensor, got NULL");
  if (!o) return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "options: expected a pointer, got NULL");
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  uint32_t any = 0; /* the growth rule; one branch, the index only on failure */
  for (size_t i = 0; i < sizeof o->reserved / sizeof *o->reserved; i++) any |= o->reserved[i];
  for (size_t i = 0; any && i < sizeof o->reserved / sizeof *o->reserved; i++)
    if (o->reserved[i])
      return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "options.reserved[%zu] is %u, expected 0 "
                   "(zero-initialise the options)", i, (unsigned)o->reserved[i]);
  gcl_tensormap_desc *d = out; /* filled in place: the callers pass scratch (see tmap.h) */
  zero_desc(d);
  gcl_status s = GCL_OK;
  unsigned align = o->interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
  if ((upto > 1 && (s = check_enums(o, who, d))) || (upto > 2 && (s = check_tensor(t, who))) ||
      (upto > 3 && (s = fill_type(t, who, d))) || (upto > 4 && (s = fill_dims(t, who, d))) ||
      (upto > 5 && (s = check_combination(who, d))) ||
      (upto > 6 && (s = check_store_extent(o, who, d))) ||
      (upto > 7 && (s = check_innermost(t, who))) ||
      (upto > 8 && (s = fill_strides(t, who, align, d))) ||
      (upto > 9 && (s = fill_address(t, who, align, d))) || upto <= 10)
    return s;
  if (o->im2col.pixels ? (s = fill_im2col(o, who, d)) != GCL_OK
                       : ((s = fill_box(o, who, d)) || (s = check_inner_box(who, d))))
    return s;
  return GCL_OK;
}

gcl_status gcl__tmap_translate(const DLTensor *t, const gcl_tensormap_options *o,
                               const gcl__tmap_who *who, gcl_tensormap_desc *out) {
  return translate_upto(t, o, who, out, GCL__TMAP_STAGES);
}

gcl_status gcl_tensormap_check(const DLTensor *t, const gcl_tensormap_options *options,
                               gcl_tensormap_desc *desc) {
  if (!t || !options)
    return gcl__fail_null("gcl_tensormap_check", 2, "t", (const void *)t, "options",
                          (const void *)options);
  gcl_tensormap_desc d;
  static const gcl__tmap_who who = {.text = "tensor"};
  gcl_status s = gcl__tmap_translate(t, options, &who, &d);
  if (s == GCL_OK && desc) *desc = d;
  return s;
}

/* --- messages, built only on failure ------------------------------------------------------- */

const char *gcl__tmap_who_format(const gcl__tmap_who *who, char *buf, size_t cap) {
  if (!who->text) return gcl__leaf_label(who->layout, who->param, who->rel, who->whole, buf, cap);
  snprintf(buf, cap, "%s", who->text);
  return buf;
}

gcl_status gcl__tmap_fail(const gcl__tmap_who *who, gcl_status s, const char *fmt, ...) {
  char label[512], msg[GCL__MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return gcl__fail(s, "%s: %s", gcl__tmap_who_format(who, label, sizeof label), msg);
}
