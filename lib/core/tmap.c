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
#define HOT static inline __attribute__((always_inline))

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

static const char *const type_names[] = {"uint8",   "uint16",  "uint32",  "int32",  "uint64",
                                         "int64",   "float16", "float32", "float64", "bfloat16"};

const char *gcl__tmap_type_name(gcl_tensormap_type type) {
  if ((unsigned)type >= sizeof type_names / sizeof *type_names) return "?";
  return type_names[type];
}

HOT bool is_float(gcl_tensormap_type type) {
  return type == GCL_TENSORMAP_F16 || type == GCL_TENSORMAP_F32 || type == GCL_TENSORMAP_F64 ||
         type == GCL_TENSORMAP_BF16;
}

/* TMA moves bytes, so integer signedness matters only where the driver has both (32, 64 bits). */
HOT int int_type(unsigned bits, bool is_signed) {
  switch (bits) {
  case 8: return GCL_TENSORMAP_U8;
  case 16: return GCL_TENSORMAP_U16;
  case 32: return is_signed ? GCL_TENSORMAP_I32 : GCL_TENSORMAP_U32;
  case 64: return is_signed ? GCL_TENSORMAP_I64 : GCL_TENSORMAP_U64;
  default: return -1;
  }
}

HOT int dtype_to_type(DLDataType dt) {
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
  /* NULL data is no refusal: the driver encodes address 0 (measured, driver 580), and template
   * maps whose address a kernel patches on the device (tensormap.replace) are encoded so. */
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

/* The stride that stands in for a size-1 dimension's (TMA dimension i >= 1), which TMA never
 * steps over: the padded row for i = 1, else the previous stride times the previous dimension,
 * in multiples of `multiple` (16, or 32 with 32-byte interleave). False when that would reach
 * 2^40 (the given stride is checked then). */
HOT bool size1_stride(const gcl_tensormap_desc *d, uint32_t i, unsigned multiple,
                                uint64_t *out) {
  uint64_t s;
  if (i == 1)
    s = (d->dims[0] * d->element_bytes + multiple - 1u) & ~(uint64_t)(multiple - 1u);
  else if (__builtin_mul_overflow(d->strides[i - 2], d->dims[i - 1], &s))
    return false;
  *out = s;
  return s < TMAP_STRIDE_LIMIT;
}

static gcl_status fill_strides(const DLTensor *t, const gcl__tmap_who *who, unsigned multiple,
                               gcl_tensormap_desc *d) {
  for (uint32_t i = 1; i < d->rank; i++) {
    int dl = t->ndim - 1 - (int)i;
    if (t->shape[dl] == 1) { /* never stepped over: any valid stride describes it */
      uint64_t sub;
      if (size1_stride(d, i, multiple, &sub)) {
        d->strides[i - 1] = sub;
        continue;
      }
    }
    int64_t s = stride_elems(t, dl);
    /* element_bytes is 1, 2, 4 or 8: shifts, not divisions (this path runs per map) */
    unsigned shift = (unsigned)__builtin_ctz(d->element_bytes);
    if (s < 0 || (uint64_t)s >= TMAP_STRIDE_LIMIT >> shift) /* 0: a broadcast view (the driver takes it) */
      return tfail(who, GCL_ERROR_TENSOR,
                       "dimension %d has stride %lld elements: expected 0 ... 2^40 bytes", dl,
                       (long long)s);
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
  if (address >= GCL__TMAP_ADDRESS_LIMIT) /* the driver's bound, measured (tmap.h) */
    return tfail(who, GCL_ERROR_TENSOR,
                     "data + byte_offset = 0x%llx + %llu = 0x%llx: the driver encodes global "
                     "addresses below 2^57 = 0x200000000000000 only",
                     (unsigned long long)base, (unsigned long long)t->byte_offset,
                     (unsigned long long)address);
  d->address = address;
  return GCL_OK;
}

HOT unsigned swizzle_span(int swizzle) { return swizzle ? 16u << swizzle : 0u; }

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

/* Rules that tie options to the tensor: interleave needs rank >= 3; the NaN fill is for
 * floating-point types only. (The documentation's "32-byte interleave needs the 32-byte swizzle"
 * is not enforced by the driver -- 2,289 of 400,000 descriptions encoded on the H200, driver 580 --
 * and gclaunch follows the driver.) */
static gcl_status check_combination(const gcl__tmap_who *who, const gcl_tensormap_desc *d) {
  if (d->interleave && d->rank < 3)
    return tfail(who, GCL_ERROR_TENSOR, "interleave %d needs rank >= 3, the tensor has rank %u", d->interleave, d->rank);
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
  uint64_t bytes = d->element_bytes, limit = d->element_bytes;
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
    limit *= b / e;
  }
  if (limit > TMAP_BOX_LIMIT_BYTES)
    return tfail(who, GCL_ERROR_TENSOR,
                 "box = {%u, %u, %u, %u, %u} with element_strides = {%u, %u, %u, %u, %u} (TMA "
                 "order): %u bytes x the product of floor(box / element stride) = %llu bytes, over "
                 "the driver's %u (228 KiB; measured on the H200, driver 580: the documentation "
                 "names no limit)",
                 d->box[0], d->rank > 1 ? d->box[1] : 0, d->rank > 2 ? d->box[2] : 0,
                 d->rank > 3 ? d->box[3] : 0, d->rank > 4 ? d->box[4] : 0,
                 d->element_strides[0], d->rank > 1 ? d->element_strides[1] : 0,
                 d->rank > 2 ? d->element_strides[2] : 0, d->rank > 3 ? d->element_strides[3] : 0,
                 d->rank > 4 ? d->element_strides[4] : 0, d->element_bytes,
                 (unsigned long long)limit, TMAP_BOX_LIMIT_BYTES);
  d->box_bytes = (uint32_t)bytes;
  return GCL_OK;
}

static gcl_status check_inner_box(const gcl__tmap_who *who, const gcl_tensormap_desc *d) {
  uint32_t inner = d->box[0] * d->element_bytes;
  int dl = (int)d->rank - 1;
  if (inner & 15u) /* with interleave too: measured on the H200 (the documentation says without) */
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

/* The bounding box along spatial corner i must hold a pixel: lower < size + upper, with the sum
 * taken as the driver takes it, in 32 bits and signed (a size of 2^31 or more wraps), and the
 * size that of TMA dimension i + 1 -- or of dimension i with interleave, where the driver pairs
 * corner i with the dimension below. Measured on the H200 (driver 580): 0 exceptions in 200,000
 * im2col descriptions and 340,000 structured probes (bench/experiments/im2col_probe.py); the
 * element strides play no part. */
static inline int64_t wrap32(uint64_t v) {
  uint32_t w = (uint32_t)v;
  return w < 0x80000000u ? (int64_t)w : (int64_t)w - 0x100000000ll;
}

static inline bool box_holds_pixel(uint64_t size, int32_t lower, int32_t upper) {
  return lower < wrap32(size + (uint64_t)(int64_t)upper);
}

static gcl_status check_bounding_box(uint32_t i, const gcl__tmap_who *who,
                                     const gcl_tensormap_desc *d) {
  uint32_t k = d->interleave ? i : i + 1; /* the TMA dimension the driver measures */
  uint64_t size = d->dims[k];
  int32_t l = d->im2col.lower[i], u = d->im2col.upper[i];
  if (box_holds_pixel(size, l, u)) return GCL_OK;
  int64_t sum = (int64_t)size + u, wrapped = wrap32(size + (uint64_t)(int64_t)u);
  char paired[96] = "";
  if (d->interleave)
    snprintf(paired, sizeof paired, " (with interleave the driver measures corner %u against "
             "dimension %d, one further in)", i, (int)(d->rank - 1 - k));
  if (sum == wrapped)
    return tfail(who, GCL_ERROR_TENSOR,
                 "im2col bounding box along %s is empty: dimension %d has size %llu, and size + "
                 "upper[%u] - lower[%u] = %llu + %d - %d = %lld; expected at least 1%s",
                 spatial_names[i], (int)(d->rank - 1 - k), (unsigned long long)size, i, i,
                 (unsigned long long)size, (int)u, (int)l, (long long)(sum - l), paired);
  return tfail(who, GCL_ERROR_TENSOR,
               "im2col bounding box along %s: dimension %d has size %llu, and size + upper[%u] = "
               "%lld wraps to %lld in the driver's signed 32-bit arithmetic; lower[%u] = %d must "
               "be below it%s", spatial_names[i], (int)(d->rank - 1 - k),
               (unsigned long long)size, i, (long long)sum, (long long)wrapped, i, (int)l, paired);
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
  for (uint32_t i = 0; i + 2 < d->rank; i++)
    if ((s = check_bounding_box(i, who, d)) != GCL_OK) return s;
  uint32_t inner = m->channels * d->element_bytes, span = swizzle_span(d->swizzle);
  if (inner & 15u) /* with interleave too (measured on the H200, driver 580) */
    return tfail(who, GCL_ERROR_TENSOR,
                 "im2col.channels (dimension %d) = %u elements of %u bytes = %u bytes: the "
                 "channels of a pixel must be a multiple of 16 bytes", (int)d->rank - 1,
                 m->channels, d->element_bytes, inner);
  if (!d->interleave && span && inner > span)
    return tfail(who, GCL_ERROR_TENSOR,
                     "im2col.channels (dimension %d) = %u elements = %u bytes exceeds the "
                     "%u-byte swizzle span", (int)d->rank - 1, m->channels, inner, span);
  if ((uint64_t)m->pixels * inner > TMAP_BOX_LIMIT_BYTES) /* measured on the H200, driver 580 */
    return tfail(who, GCL_ERROR_TENSOR,
                 "im2col.pixels x channels = %u x %u elements of %u bytes = %llu bytes, over the "
                 "driver's %u (228 KiB; measured on the H200, driver 580: the documentation names "
                 "no limit)", m->pixels, m->channels, d->element_bytes,
                 (unsigned long long)m->pixels * inner, TMAP_BOX_LIMIT_BYTES);
  d->im2col.pixels = m->pixels;
  d->im2col.channels = m->channels;
  d->box_bytes = m->pixels * inner; /* at most 1024 * 256 * 8 bytes */
  return GCL_OK;
}

/* Unused entries must be zero (the refresh key and the driver see them). Field by field: one
 * memset of the whole struct becomes `rep stos`, which costs more than the rest of a
 * translation; pieces of at most 40 bytes become a few vector stores. */
HOT void zero_desc(gcl_tensormap_desc *d) {
  memset(d->dims, 0, sizeof d->dims);
  memset(d->strides, 0, sizeof d->strides);
  memset(d->box, 0, sizeof d->box);
  memset(d->element_strides, 0, sizeof d->element_strides);
  memset(&d->im2col, 0, sizeof d->im2col);
  d->type = 0, d->rank = 0, d->element_bytes = 0, d->box_bytes = 0, d->address = 0;
  d->interleave = d->swizzle = d->l2_promotion = d->oob_fill = 0;
}

/* --- the slow path: the checks one by one, for the message ---------------------------------
 *
 * Runs only when the one pass below refused (or for gcl__tmap_translate_slow): the same rules,
 * checked in a fixed order by small functions, so that the message names the first rule broken
 * in that order. The one pass and this must agree on every description (tests/unit/
 * test_tmap_diff_cpu.c compares them on random descriptions at every limit). */
static gcl_status translate_slow(const DLTensor *t, const gcl_tensormap_options *o,
                                 const gcl__tmap_who *who, gcl_tensormap_desc *d) {
  zero_desc(d);
  gcl_status s = GCL_OK;
  unsigned align = o->interleave == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
  if ((s = check_enums(o, who, d)) || (s = check_tensor(t, who)) || (s = fill_type(t, who, d)) ||
      (s = fill_dims(t, who, d)) || (s = check_combination(who, d)) ||
      (s = check_store_extent(o, who, d)) || (s = check_innermost(t, who)) ||
      (s = fill_strides(t, who, align, d)) || (s = fill_address(t, who, align, d)))
    return s;
  if (o->im2col.pixels ? (s = fill_im2col(o, who, d)) != GCL_OK
                       : ((s = fill_box(o, who, d)) || (s = check_inner_box(who, d))))
    return s;
  return GCL_OK;
}

/* --- the one pass ------------------------------------------------------------------------------
 *
 * Every rule of the slow path above, in one walk over the dimensions (dims, strides, element
 * strides and box together), branch-light and without calls or messages: true and *d filled
 * when t and o pass every rule, false (d scratch) when any fails; the slow path then says which. */
HOT bool one_pass(const DLTensor *t, const gcl_tensormap_options *o,
                            gcl_tensormap_desc *d) {
  if ((unsigned)o->interleave > GCL_TENSORMAP_INTERLEAVE_32B ||
      (unsigned)o->swizzle > GCL_TENSORMAP_SWIZZLE_128B ||
      (unsigned)o->l2_promotion > GCL_TENSORMAP_L2_256B || (unsigned)o->oob_fill > 1u)
    return false;
  int dev = (int)t->device.device_type;
  if ((dev != kDLCUDA && dev != GCL_DL_DEVICE_CUDA_MANAGED) ||
      (unsigned)(t->ndim - 1) >= GCL_TENSORMAP_MAX_RANK || !t->shape)
    return false;
  int type = dtype_to_type(t->dtype);
  if (type < 0) return false;
  uint32_t rank = (uint32_t)t->ndim, eb = t->dtype.bits / 8u, pixels = o->im2col.pixels;
  unsigned shift = (unsigned)__builtin_ctz(eb), il = (unsigned)o->interleave;
  unsigned align = il == GCL_TENSORMAP_INTERLEAVE_32B ? 32u : 16u;
  if ((il && rank < 3) ||
      (o->oob_fill && !is_float((gcl_tensormap_type)type)) || (pixels && rank < 3))
    return false;
  uint64_t base = (uint64_t)(uintptr_t)t->data, address = base + t->byte_offset;
  if (address < base || (address & (align - 1u)) || address >= GCL__TMAP_ADDRESS_LIMIT)
    return false;
  zero_desc(d);
  d->type = (gcl_tensormap_type)type, d->rank = rank, d->element_bytes = eb;
  d->address = address;
  d->interleave = o->interleave, d->swizzle = o->swizzle;
  d->l2_promotion = o->l2_promotion, d->oob_fill = o->oob_fill;
  const int64_t *shape = t->shape + rank - 1, *strides = t->strides;
  int64_t compact = 1; /* the stride of a NULL-strides tensor, in elements (saturating) */
  uint64_t box_bytes = eb, limit = eb;
  for (uint32_t i = 0; i < rank; i++) {
    int64_t n = shape[-(int64_t)i];
    if (n < 1 || (uint64_t)n > TMAP_DIM_MAX) return false;
    d->dims[i] = (uint64_t)n;
    int64_t s = strides ? strides[rank - 1 - i] : compact;
    if (!strides && __builtin_mul_overflow(compact, n, &compact)) compact = INT64_MAX;
    if (i == 0) {
      if (n > 1 && s != 1) return false;
    } else {
      uint64_t sub;
      if (n == 1 && size1_stride(d, i, align, &sub)) {
        d->strides[i - 1] = sub;
      } else {
        if (s < 0 || (uint64_t)s >= TMAP_STRIDE_LIMIT >> shift) return false;
        uint64_t bytes = (uint64_t)s << shift;
        if (bytes & (align - 1u)) return false;
        d->strides[i - 1] = bytes;
      }
    }
    uint32_t e = o->element_strides[i] ? o->element_strides[i] : 1u;
    if (e > TMAP_ESTRIDE_MAX) return false;
    d->element_strides[i] = e;
    if (!pixels) {
      uint32_t b = o->box[i];
      if (b - 1u >= TMAP_BOX_MAX) return false;
      d->box[i] = b;
      box_bytes *= (i == 0 && !il) || e == 1 ? b : (b + e - 1) / e;
      limit *= b / e;
    }
  }
  if (o->store && ((d->dims[0] * eb) & 15u)) return false;
  unsigned span = swizzle_span(o->swizzle);
  if (!pixels) {
    uint32_t inner = d->box[0] * eb;
    if ((inner & 15u) || (!il && span && inner > span) || limit > TMAP_BOX_LIMIT_BYTES)
      return false;
    d->box_bytes = (uint32_t)box_bytes;
    return true;
  }
  const gcl_tensormap_im2col *m = &o->im2col;
  if (pixels > TMAP_IM2COL_PIXELS_MAX || m->channels - 1u >= TMAP_IM2COL_CHANNELS_MAX) return false;
  static const int32_t lo[] = {-32768, -128, -16}, hi[] = {32767, 127, 15};
  int32_t min = lo[rank - 3], max = hi[rank - 3];
  for (uint32_t i = 0; i + 2 < rank; i++) {
    int32_t l = m->lower[i], u = m->upper[i];
    if (l < min || l > max || u < min || u > max ||
        !box_holds_pixel(d->dims[il ? i : i + 1], l, u)) /* interleave: one further in */
      return false;
    d->im2col.lower[i] = l, d->im2col.upper[i] = u;
  }
  uint32_t inner = m->channels * eb;
  if ((inner & 15u) || (!il && span && inner > span) ||
      (uint64_t)pixels * inner > TMAP_BOX_LIMIT_BYTES)
    return false;
  d->im2col.pixels = pixels, d->im2col.channels = m->channels;
  d->box_bytes = pixels * inner; /* at most 1024 * 256 * 8 bytes */
  return true;
}

/* The slow path behind a refusal of the one pass: it names the rule. Should it accept (the two
 * disagree: a bug the CPU differential test exists to catch), its verdict stands. */
__attribute__((noinline, cold)) static gcl_status refused(const DLTensor *t,
                                                          const gcl_tensormap_options *o,
                                                          const gcl__tmap_who *who,
                                                          gcl_tensormap_desc *d) {
  return translate_slow(t, o, who, d);
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
  /* The growth rule: four 8-byte words ORed (no vector reduction), the index only on failure. */
  _Static_assert(sizeof o->reserved == 32, "reserved is 8 words");
  uint64_t w[4];
  memcpy(w, o->reserved, sizeof w);
  bool any = (w[0] | w[1] | w[2] | w[3]) != 0;
  for (size_t i = 0; any && i < sizeof o->reserved / sizeof *o->reserved; i++)
    if (o->reserved[i])
      return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "options.reserved[%zu] is %u, expected 0 "
                   "(zero-initialise the options)", i, (unsigned)o->reserved[i]);
  if (upto < 2) return GCL_OK;
  return one_pass(t, o, out) ? GCL_OK : refused(t, o, who, out);
}

gcl_status gcl__tmap_translate(const DLTensor *t, const gcl_tensormap_options *o,
                               const gcl__tmap_who *who, gcl_tensormap_desc *out) {
  return translate_upto(t, o, who, out, GCL__TMAP_STAGES);
}

gcl_status gcl__tmap_translate_slow(const DLTensor *t, const gcl_tensormap_options *o,
                                    const gcl__tmap_who *who, gcl_tensormap_desc *out) {
  return translate_slow(t, o, who, out);
}

bool gcl__tmap_one_pass(const DLTensor *t, const gcl_tensormap_options *o,
                        gcl_tensormap_desc *out) {
  return one_pass(t, o, out);
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

/* --- the Blackwell descriptor defect (driver edge: lib/cuda/tensormap.c) ------------------- */

#define TMAP_SMALL_ALLOCATION (128u * 1024u)

/* Dense and non-overlapping: the dimensions of size > 1, ordered by stride, tile memory without
 * gaps or overlap (each stride equals the extent of the ones below it). At most 5 dimensions:
 * an insertion sort. */
static bool dense(const gcl_tensormap_desc *d) {
  uint64_t st[GCL_TENSORMAP_MAX_RANK], n[GCL_TENSORMAP_MAX_RANK];
  int k = 0;
  for (uint32_t i = 0; i < d->rank; i++) {
    if (d->dims[i] == 1) continue;
    uint64_t s = i == 0 ? d->element_bytes : d->strides[i - 1];
    int j = k++;
    for (; j > 0 && st[j - 1] > s; j--) st[j] = st[j - 1], n[j] = n[j - 1];
    st[j] = s, n[j] = d->dims[i];
  }
  uint64_t extent = d->element_bytes;
  for (int j = 0; j < k; j++) {
    if (st[j] != extent) return false;
    extent *= n[j];
  }
  return true;
}

bool gcl__tmap_sparse_small(const gcl_tensormap_desc *d) {
  uint64_t last = 0; /* byte offset of the last element: at most 5 * 2^32 * 2^40, no overflow
                        below the 128 KiB test that matters (saturated) */
  for (uint32_t i = 0; i < d->rank; i++) {
    uint64_t s = i == 0 ? d->element_bytes : d->strides[i - 1], step;
    if (__builtin_mul_overflow(d->dims[i] - 1, s, &step) || step >= TMAP_SMALL_ALLOCATION)
      return false;
    last += step;
  }
  return last + d->element_bytes < TMAP_SMALL_ALLOCATION && !dense(d);
}

/* --- messages, built only on failure ------------------------------------------------------- */

const char *gcl__tmap_who_format(const gcl__tmap_who *who, char *buf, size_t cap) {
  if (!who->text) return gcl__leaf_label(who->layout, who->param, who->rel, who->whole, buf, cap);
  if (who->indexed)
    snprintf(buf, cap, "%s entry %zu", who->text, who->rel / GCL_TENSORMAP_BYTES);
  else
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
