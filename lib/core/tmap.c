/* Tensor maps on the CPU: validates a DLPack tensor and options against the constraints of
 * cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col (CUDA 13 cuda.h; docs/facts.md "Tensor maps:
 * encode rules") and translates them into their arguments, so that every mistake is reported
 * with the tensor, the dimension and the value before the driver, which would only say
 * CUDA_ERROR_INVALID_VALUE. No cuda.h here: the enum values are gclaunch's own, asserted equal
 * to the driver's in lib/cuda/tmap_driver.c. */
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

/* The element type of a DLPack dtype, one lookup: dtype_types[code * 16 + bits / 8] is 0 (no
 * tensor map element type) or the type + 1, with DT_FLOAT for the floating-point types (rule 7).
 * dtype_entry indexes it for lanes 1, codes 0 ... 15 and bits 0 ... 120 in steps of 8 only. TMA
 * moves bytes, so integer signedness matters only where the driver has both (32, 64 bits); bool
 * and the 8-bit float8 formats (DLPack 1.1 codes 7-14) are bytes to TMA. */
#define DT_FLOAT 0x40u
#define DT_TYPE(e) ((gcl_tensormap_type)(((e) & 0x3fu) - 1u))
#define DT(code, bits) [(code) * 16 + (bits) / 8]
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
    DT(7, 8) = GCL_TENSORMAP_U8 + 1,  DT(8, 8) = GCL_TENSORMAP_U8 + 1,  DT(9, 8) = GCL_TENSORMAP_U8 + 1,
    DT(10, 8) = GCL_TENSORMAP_U8 + 1, DT(11, 8) = GCL_TENSORMAP_U8 + 1, DT(12, 8) = GCL_TENSORMAP_U8 + 1,
    DT(13, 8) = GCL_TENSORMAP_U8 + 1, DT(14, 8) = GCL_TENSORMAP_U8 + 1};
#undef DT
_Static_assert(GCL_DL_FLOAT8_FIRST == 7 && GCL_DL_FLOAT8_LAST == 14, "the float8 rows above");
_Static_assert(GCL_TENSORMAP_BF16 + 1 < DT_FLOAT, "the types fit below DT_FLOAT");

HOT unsigned dtype_entry(DLDataType dt) {
  if (dt.lanes != 1 || dt.code >= 16 || (dt.bits & 0x87u)) return 0;
  return dtype_types[dt.code * 16u + dt.bits / 8u];
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

HOT unsigned swizzle_span(int swizzle) { return swizzle ? 16u << swizzle : 0u; }

/* --- the rules ---------------------------------------------------------------------------------
 *
 * Every rule of docs/tensormap-rules.md, written once: its condition in the pass below (one walk
 * in the table's order, without calls or messages while the rules hold), its message in the
 * table `rules`, indexed by the rule's number, which the pass calls (out of line, cold) for the
 * first rule broken. The pass's order is the table's: options (24), the tensor (1, 2, 3, 4), the
 * combinations (5, 7, 8), the innermost dimension (9), the strides (10), the address (11, 26),
 * then the tiled box (12, 13, 16, 14, 15) or im2col (17, 18, 19, 20, 13, 25, 22, 23, 21). */

#define TMAP_IM2COL_PIXELS_MAX 1024u
#define TMAP_IM2COL_CHANNELS_MAX 256u

/* Where a rule broke, for its message: the inputs, the description filled up to the rule, and
 * the dimension (TMA order unless the rule says otherwise) or corner. */
typedef struct tmap_at {
  const DLTensor *t;
  const gcl_tensormap_options *o;
  const gcl_tensormap_desc *d;
  uint32_t i;
  uint64_t flags; /* the tensor's DLPack flags (rules 27 and 28) */
} tmap_at;

/* Stride of DLPack dimension dl in elements: given, or compact row-major when strides is NULL.
 * The compact product saturates at INT64_MAX (shapes reach 2^32 each), which the stride limit
 * then refuses. For messages; the pass keeps a running product. */
static int64_t stride_elems(const DLTensor *t, int dl) {
  if (t->strides) return t->strides[dl];
  int64_t s = 1;
  for (int k = dl + 1; k < t->ndim; k++)
    if (__builtin_mul_overflow(s, t->shape[k], &s)) return INT64_MAX;
  return s;
}

static unsigned align_of(const tmap_at *at) { return gcl__tmap_align(at->o); }

static gcl_status say_options(const gcl__tmap_who *who, const tmap_at *at) { /* 24 */
  const gcl_tensormap_options *o = at->o;
  if ((unsigned)o->interleave > GCL_TENSORMAP_INTERLEAVE_32B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "interleave = %d: expected 0 ... 2",
                 o->interleave);
  if ((unsigned)o->swizzle > GCL_TENSORMAP_SWIZZLE_128B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "swizzle = %d: expected 0 ... 3", o->swizzle);
  if ((unsigned)o->l2_promotion > GCL_TENSORMAP_L2_256B)
    return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "l2_promotion = %d: expected 0 ... 3",
                 o->l2_promotion);
  return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "oob_fill = %d: expected 0 or 1", o->oob_fill);
}

static gcl_status say_device(const gcl__tmap_who *who, const tmap_at *at) { /* 1 */
  return tfail(who, GCL_ERROR_TENSOR,
               "device type %d is not CUDA (%d) or CUDA managed (%d): TMA reads device memory",
               (int)at->t->device.device_type, (int)kDLCUDA, GCL_DL_DEVICE_CUDA_MANAGED);
}

/* NULL data is no refusal: the driver encodes address 0 (measured, driver 580), and template maps
 * whose address a kernel patches on the device (tensormap.replace) are encoded so. */
static gcl_status say_rank(const gcl__tmap_who *who, const tmap_at *at) { /* 2 */
  const DLTensor *t = at->t;
  if (t->ndim < 1 || t->ndim > GCL_TENSORMAP_MAX_RANK)
    return tfail(who, GCL_ERROR_TENSOR, "ndim = %d: a tensor map has rank 1 ... %d",
                 (int)t->ndim, GCL_TENSORMAP_MAX_RANK);
  return tfail(who, GCL_ERROR_TENSOR, "shape is NULL with ndim %d", t->ndim);
}

static gcl_status say_dtype(const gcl__tmap_who *who, const tmap_at *at) { /* 3 */
  DLDataType dt = at->t->dtype;
  return tfail(who, GCL_ERROR_TENSOR,
               "dtype (code %u, bits %u, lanes %u) has no tensor map element type (expected "
               "8/16/32/64-bit int, uint, float, bfloat16, bool, float8; lanes 1)",
               dt.code, dt.bits, dt.lanes);
}

static gcl_status say_dim(const gcl__tmap_who *who, const tmap_at *at) { /* 4; i: DLPack dim */
  return tfail(who, GCL_ERROR_TENSOR, "dimension %d has size %lld: expected 1 ... 2^32",
               (int)at->i, (long long)at->t->shape[at->i]);
}

static gcl_status say_interleave_rank(const gcl__tmap_who *who, const tmap_at *at) { /* 5 */
  return tfail(who, GCL_ERROR_TENSOR, "interleave %d needs rank >= 3, the tensor has rank %u",
               at->d->interleave, at->d->rank);
}

static gcl_status say_nan_fill(const gcl__tmap_who *who, const tmap_at *at) { /* 7 */
  return tfail(who, GCL_ERROR_TENSOR, "the NaN out-of-bounds fill needs a floating-point type, "
               "the tensor is %s", gcl__tmap_type_name(at->d->type));
}

/* 8. TMA stores write global memory in whole 16-byte chunks: a box that reaches the end of a row
 * whose length in bytes is not a multiple of 16 also writes the bytes after the row, up to the
 * next 16-byte boundary (padding, or another tensor's data). The driver encodes such a map
 * without complaint (triton-lang/triton#11583; seen on the H200), so a map meant for stores is
 * refused here. Rows start 16-byte aligned (address and strides are checked), so the row length
 * alone decides. */
static gcl_status say_store(const gcl__tmap_who *who, const tmap_at *at) {
  const gcl_tensormap_desc *d = at->d;
  uint64_t row = d->dims[0] * d->element_bytes;
  return tfail(who, GCL_ERROR_TENSOR,
               "store = 1 and dimension %d (innermost) has %llu elements of %u bytes = %llu "
               "bytes, not a multiple of 16: TMA stores write whole 16-byte chunks and would "
               "overwrite the %llu bytes after each row", (int)d->rank - 1,
               (unsigned long long)d->dims[0], d->element_bytes, (unsigned long long)row,
               (unsigned long long)(16u - row % 16u));
}

static gcl_status say_innermost(const gcl__tmap_who *who, const tmap_at *at) { /* 9 */
  int dl = at->t->ndim - 1;
  return tfail(who, GCL_ERROR_TENSOR, "dimension %d (innermost) has stride %lld elements: TMA "
               "needs it contiguous (stride 1)", dl, (long long)stride_elems(at->t, dl));
}

static gcl_status say_stride(const gcl__tmap_who *who, const tmap_at *at) { /* 10; i: TMA dim */
  int dl = at->t->ndim - 1 - (int)at->i;
  int64_t s = stride_elems(at->t, dl);
  unsigned shift = (unsigned)__builtin_ctz(at->d->element_bytes), multiple = align_of(at);
  if (s < 0 || (uint64_t)s >= TMAP_STRIDE_LIMIT >> shift)
    return tfail(who, GCL_ERROR_TENSOR, "dimension %d has stride %lld elements: expected 0 ... "
                 "2^40 bytes", dl, (long long)s);
  return tfail(who, GCL_ERROR_TENSOR, "dimension %d has stride %lld elements = %llu bytes: TMA "
               "needs a multiple of %u bytes", dl, (long long)s,
               (unsigned long long)((uint64_t)s << shift), multiple);
}

static gcl_status say_address(const gcl__tmap_who *who, const tmap_at *at) { /* 11 */
  uint64_t base = (uint64_t)(uintptr_t)at->t->data, off = at->t->byte_offset;
  unsigned align = align_of(at);
  if (off > UINT64_MAX - base)
    return tfail(who, GCL_ERROR_TENSOR, "data 0x%llx + byte_offset %llu overflows",
                 (unsigned long long)base, (unsigned long long)off);
  return tfail(who, GCL_ERROR_TENSOR, "data + byte_offset = 0x%llx + %llu = 0x%llx is not %u-byte "
               "aligned (TMA needs a %u-byte aligned global address)", (unsigned long long)base,
               (unsigned long long)off, (unsigned long long)(base + off), align, align);
}

static gcl_status say_address_bits(const gcl__tmap_who *who, const tmap_at *at) { /* 26 */
  uint64_t base = (uint64_t)(uintptr_t)at->t->data, off = at->t->byte_offset;
  return tfail(who, GCL_ERROR_TENSOR, "data + byte_offset = 0x%llx + %llu = 0x%llx: the driver "
               "encodes global addresses below 2^57 = 0x200000000000000 only",
               (unsigned long long)base, (unsigned long long)off,
               (unsigned long long)(base + off));
}

static gcl_status say_box(const gcl__tmap_who *who, const tmap_at *at) { /* 12 */
  return tfail(who, GCL_ERROR_TENSOR, "box[%u] (dimension %d) = %u: expected 1 ... %u", at->i,
               (int)at->d->rank - 1 - (int)at->i, at->o->box[at->i], TMAP_BOX_MAX);
}

static gcl_status say_element_stride(const gcl__tmap_who *who, const tmap_at *at) { /* 13 */
  return tfail(who, GCL_ERROR_TENSOR, "element_strides[%u] (dimension %d) = %u: expected 1 ... %u",
               at->i, (int)at->d->rank - 1 - (int)at->i, at->o->element_strides[at->i],
               TMAP_ESTRIDE_MAX);
}

static gcl_status say_inner_box(const gcl__tmap_who *who, const tmap_at *at) { /* 14 */
  const gcl_tensormap_desc *d = at->d;
  return tfail(who, GCL_ERROR_TENSOR, "box[0] (dimension %d) = %u elements of %u bytes = %u "
               "bytes: the inner box must be a multiple of 16 bytes", (int)d->rank - 1,
               d->box[0], d->element_bytes, d->box[0] * d->element_bytes);
}

static gcl_status say_swizzle_span(const gcl__tmap_who *who, const tmap_at *at) { /* 15 */
  const gcl_tensormap_desc *d = at->d;
  return tfail(who, GCL_ERROR_TENSOR, "box[0] (dimension %d) = %u elements = %u bytes exceeds "
               "the %u-byte swizzle span", (int)d->rank - 1, d->box[0],
               d->box[0] * d->element_bytes, swizzle_span(d->swizzle));
}

static gcl_status say_box_limit(const gcl__tmap_who *who, const tmap_at *at) { /* 16 */
  const gcl_tensormap_desc *d = at->d;
  uint32_t b[GCL_TENSORMAP_MAX_RANK] = {0}, e[GCL_TENSORMAP_MAX_RANK] = {0};
  uint64_t limit = d->element_bytes;
  for (uint32_t i = 0; i < d->rank; i++)
    b[i] = d->box[i], e[i] = d->element_strides[i], limit *= b[i] / e[i];
  return tfail(who, GCL_ERROR_TENSOR,
               "box = {%u, %u, %u, %u, %u} with element_strides = {%u, %u, %u, %u, %u} (TMA "
               "order): %u bytes x the product of floor(box / element stride) = %llu bytes, over "
               "the driver's %u (228 KiB; measured on the H200, driver 580: the documentation "
               "names no limit)", b[0], b[1], b[2], b[3], b[4], e[0], e[1], e[2], e[3], e[4],
               d->element_bytes, (unsigned long long)limit, TMAP_BOX_LIMIT_BYTES);
}

static gcl_status say_im2col_rank(const gcl__tmap_who *who, const tmap_at *at) { /* 17 */
  return tfail(who, GCL_ERROR_TENSOR, "im2col needs rank 3 ... 5 (N, spatial dimensions, C), "
               "the tensor has rank %u", at->d->rank);
}

static gcl_status say_pixels(const gcl__tmap_who *who, const tmap_at *at) { /* 18 */
  return tfail(who, GCL_ERROR_TENSOR, "im2col.pixels = %u: expected 1 ... %u",
               at->o->im2col.pixels, TMAP_IM2COL_PIXELS_MAX);
}

static gcl_status say_channels(const gcl__tmap_who *who, const tmap_at *at) { /* 19 */
  return tfail(who, GCL_ERROR_TENSOR, "im2col.channels = %u: expected 1 ... %u",
               at->o->im2col.channels, TMAP_IM2COL_CHANNELS_MAX);
}

static const char *const spatial_names[] = {"W", "H", "D"};
/* Corner ranges by rank: one 16-bit offset for rank 3, two 8-bit for rank 4, three 5-bit for 5. */
static const int32_t corner_min[] = {-32768, -128, -16}, corner_max[] = {32767, 127, 15};
#define TMAP_UPPER 8u /* tmap_at.i of rule 20: the corner, plus this for upper[] */

static gcl_status say_corner(const gcl__tmap_who *who, const tmap_at *at) { /* 20 */
  const gcl_tensormap_desc *d = at->d;
  bool upper = at->i >= TMAP_UPPER;
  uint32_t i = at->i % TMAP_UPPER;
  int32_t c = upper ? at->o->im2col.upper[i] : at->o->im2col.lower[i];
  return tfail(who, GCL_ERROR_TENSOR, "im2col.%s[%u] (%s, dimension %d) = %d: expected %d ... %d "
               "for rank %u", upper ? "upper" : "lower", i, spatial_names[i],
               (int)(d->rank - 2 - i), (int)c, (int)corner_min[d->rank - 3],
               (int)corner_max[d->rank - 3], d->rank);
}

/* 25. The bounding box along spatial corner i must hold a pixel: lower < size + upper, with the
 * sum taken as the driver takes it, in 32 bits and signed (a size of 2^31 or more wraps), and the
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

static gcl_status say_bounding_box(const gcl__tmap_who *who, const tmap_at *at) {
  const gcl_tensormap_desc *d = at->d;
  uint32_t i = at->i, k = d->interleave ? i : i + 1; /* the TMA dimension the driver measures */
  uint64_t size = d->dims[k];
  int32_t l = d->im2col.lower[i], u = d->im2col.upper[i];
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

static gcl_status say_channel_bytes(const gcl__tmap_who *who, const tmap_at *at) { /* 22 */
  const gcl_tensormap_desc *d = at->d;
  uint32_t c = at->o->im2col.channels;
  return tfail(who, GCL_ERROR_TENSOR, "im2col.channels (dimension %d) = %u elements of %u bytes "
               "= %u bytes: the channels of a pixel must be a multiple of 16 bytes",
               (int)d->rank - 1, c, d->element_bytes, c * d->element_bytes);
}

static gcl_status say_channel_span(const gcl__tmap_who *who, const tmap_at *at) { /* 23 */
  const gcl_tensormap_desc *d = at->d;
  uint32_t c = at->o->im2col.channels;
  return tfail(who, GCL_ERROR_TENSOR, "im2col.channels (dimension %d) = %u elements = %u bytes "
               "exceeds the %u-byte swizzle span", (int)d->rank - 1, c, c * d->element_bytes,
               swizzle_span(d->swizzle));
}

static gcl_status say_pixel_bytes(const gcl__tmap_who *who, const tmap_at *at) { /* 21 */
  const gcl_tensormap_im2col *m = &at->o->im2col;
  uint32_t eb = at->d->element_bytes;
  return tfail(who, GCL_ERROR_TENSOR, "im2col.pixels x channels = %u x %u elements of %u bytes = "
               "%llu bytes, over the driver's %u (228 KiB; measured on the H200, driver 580: the "
               "documentation names no limit)", m->pixels, m->channels, eb,
               (unsigned long long)m->pixels * m->channels * eb, TMAP_BOX_LIMIT_BYTES);
}

/* 27. The DLPack flags gclaunch knows are READ_ONLY and IS_COPIED (as the pointer setters,
 * lib/core/dltensor.c): a bit it does not know may change what the tensor's memory allows. */
static gcl_status say_flags_unknown(const gcl__tmap_who *who, const tmap_at *at) {
  return tfail(who, GCL_ERROR_TENSOR, "unsupported DLPack flags 0x%llx (supported: READ_ONLY 0x1, "
               "IS_COPIED 0x2)", (unsigned long long)at->flags);
}

/* 28. A store map over a tensor its producer declared read-only: refused as a read-only tensor
 * is for a pointer parameter that is not const. */
static gcl_status say_read_only_store(const gcl__tmap_who *who, const tmap_at *at) {
  return tfail(who, GCL_ERROR_TENSOR, "tensor is read-only (DLPack flags 0x%llx) but "
               "options.store is set: a TMA store through the map would write memory its "
               "producer declared read-only", (unsigned long long)at->flags);
}

/* The table: rule number (docs/tensormap-rules.md) -> its message. Rule 6 is gone (the driver
 * takes any swizzle with 32-byte interleave). */
typedef gcl_status (*tmap_say)(const gcl__tmap_who *who, const tmap_at *at);
static const tmap_say rules[GCL__TMAP_RULES] = {
    [1] = say_device,           [2] = say_rank,           [3] = say_dtype,
    [4] = say_dim,              [5] = say_interleave_rank, [7] = say_nan_fill,
    [8] = say_store,            [9] = say_innermost,      [10] = say_stride,
    [11] = say_address,         [12] = say_box,           [13] = say_element_stride,
    [14] = say_inner_box,       [15] = say_swizzle_span,  [16] = say_box_limit,
    [17] = say_im2col_rank,     [18] = say_pixels,        [19] = say_channels,
    [20] = say_corner,          [21] = say_pixel_bytes,   [22] = say_channel_bytes,
    [23] = say_channel_span,    [24] = say_options,       [25] = say_bounding_box,
    [26] = say_address_bits,    [27] = say_flags_unknown, [28] = say_read_only_store};

/* Rule `rule` broke at i: its message, formatted only here, and its status. */
__attribute__((noinline, cold)) static gcl_status refuse(int rule, const gcl__tmap_who *who,
                                                         const DLTensor *t,
                                                         const gcl_tensormap_options *o,
                                                         const gcl_tensormap_desc *d, uint32_t i) {
  tmap_at at = {t, o, d, i, 0};
  return rules[rule](who, &at);
}

gcl_status gcl__tmap_refuse_flags(int rule, const gcl__tmap_who *who, const DLTensor *t,
                                  const gcl_tensormap_options *o, uint64_t flags) {
  tmap_at at = {t, o, NULL, 0, flags};
  return rules[rule](who, &at);
}

/* A refusal's message reads only the fields of d filled before its rule's place in the pass;
 * where the pass is inlined into gcl_tensormap_check (its d a local), GCC cannot follow that
 * through the table of messages and calls d maybe uninitialised. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define REFUSE(rule, i) return refuse((rule), who, t, o, d, (uint32_t)(i))

/* --- the pass ----------------------------------------------------------------------------------
 * The rules' conditions in the table's order, in one function: no call, no message, no
 * allocation while every rule holds; *d filled when all do (on a refusal d is scratch, filled up
 * to the broken rule for its message). After the options and the tensor's rank (rules 24, 1, 2,
 * 3), the rest is compiled once per rank (pass_rank, rank a constant): its loops unrolled, every
 * field of *d written once (the entries past the rank zeroed by constant stores, no memset). */

/* Rules 4, 5, 7, 8, 9, 10, 11, 26: the dimensions, the options against the tensor, the innermost
 * dimension, the strides (TMA dimensions 1 ...; a size-1 dimension's is replaced), the address.
 * dt: the element type's dtype_types entry. */
HOT gcl_status pass_layout(const DLTensor *t, const gcl_tensormap_options *o,
                           const gcl__tmap_who *who, gcl_tensormap_desc *restrict d,
                           const uint32_t rank, unsigned dt) {
  const uint32_t eb = t->dtype.bits / 8u;
  const unsigned shift = (unsigned)__builtin_ctz(eb); /* 1, 2, 4, 8 bytes: shifts */
  const unsigned align = gcl__tmap_align(o);
  const int64_t *shape = t->shape, *strides = t->strides;
  d->type = DT_TYPE(dt), d->rank = rank, d->element_bytes = eb;
  /* interleave, swizzle, l2_promotion, oob_fill: the same four ints in both structs */
  _Static_assert(offsetof(gcl_tensormap_desc, oob_fill) - offsetof(gcl_tensormap_desc, interleave) ==
                     3 * sizeof(int) &&
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
  const uint64_t refused = ~((TMAP_STRIDE_LIMIT >> shift) - 1u) | ((align - 1u) >> shift);
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
HOT gcl_status pass_box(const DLTensor *t, const gcl_tensormap_options *o,
                        const gcl__tmap_who *who, gcl_tensormap_desc *restrict d,
                        const uint32_t rank) {
  const uint32_t eb = t->dtype.bits / 8u, il = (uint32_t)o->interleave;
  uint64_t bytes = eb, limit = eb;
#pragma GCC unroll 5
  for (uint32_t i = 0; i < rank; i++) {
    uint32_t b = o->box[i], e = o->element_strides[i] ? o->element_strides[i] : 1u;
    if (b - 1u >= TMAP_BOX_MAX) REFUSE(12, i);
    if (e > TMAP_ESTRIDE_MAX) REFUSE(13, i);
    d->box[i] = b, d->element_strides[i] = e;
    if (e == 1) { /* the usual case: no division (two per dimension cost more than the rest) */
      bytes *= b, limit *= b;
      continue;
    }
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
HOT gcl_status pass_im2col(const DLTensor *t, const gcl_tensormap_options *o,
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
HOT gcl_status pass_rank(const DLTensor *t, const gcl_tensormap_options *o,
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
HOT gcl_status pass(const DLTensor *t, const gcl_tensormap_options *o, const gcl__tmap_who *who,
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
 * bench/tmap_stages.c compiles this file into bench_refresh to time a prefix of them. */
__attribute__((always_inline)) static inline gcl_status translate_upto(const DLTensor *t, const gcl_tensormap_options *o,
                                        const gcl__tmap_who *who, gcl_tensormap_desc *out,
                                        int upto) {
  if (!t) return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "expected a DLTensor, got NULL");
  if (!o) return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "options: expected a pointer, got NULL");
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  /* The growth rule: four 8-byte words ORed (no vector reduction), the index only on failure. */
  _Static_assert(sizeof o->reserved == 32, "reserved is 8 words");
  const unsigned char *r = (const unsigned char *)o->reserved;
  uint64_t w0, w1, w2, w3; /* four loads: an array here went through the stack */
  memcpy(&w0, r, 8), memcpy(&w1, r + 8, 8), memcpy(&w2, r + 16, 8), memcpy(&w3, r + 24, 8);
  bool any = (w0 | w1 | w2 | w3) != 0;
  for (size_t i = 0; any && i < sizeof o->reserved / sizeof *o->reserved; i++)
    if (o->reserved[i])
      return tfail(who, GCL_ERROR_INVALID_ARGUMENT, "options.reserved[%zu] is %u, expected 0 "
                   "(zero-initialise the options)", i, (unsigned)o->reserved[i]);
  if (upto < 2) return GCL_OK;
  return pass(t, o, who, out);
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
  /* the pass inlined (no call): see the diagnostic pragma before REFUSE */
  gcl_status s = translate_upto(t, options, &who, &d, GCL__TMAP_STAGES);
  if (s == GCL_OK && desc) *desc = d;
  return s;
}
#pragma GCC diagnostic pop

/* --- the Blackwell descriptor defect (driver edge: lib/cuda/tmap_driver.c) ------------------- */

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
  if (!who->text) {
    const gcl_layout *layout = gcl__f_layout(who->field);
    size_t param = who->field->param;
    const gcl__type *type = gcl__layout_lparam(layout, param)->type;
    bool whole = who->rel == 0 && (!type || type->kind == GCL_PARAM_TENSORMAP);
    return gcl__leaf_label(layout, param, gcl__f(who->field, GCL__F_REL) + who->rel, whole, buf,
                           cap);
  }
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
