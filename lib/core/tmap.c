/* Tensor maps on the CPU: validates a DLPack tensor and options against the constraints of
 * cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col (CUDA 13 cuda.h; docs/facts.md "Tensor maps:
 * encode rules") and translates them into their arguments, so that every mistake is reported
 * with the tensor, the dimension and the value before the driver, which would only say
 * CUDA_ERROR_INVALID_VALUE. No cuda.h here: the enum values are gclaunch's own, asserted equal
 * to the driver's in lib/cuda/tmap_driver.c. The rules' conditions are the pass in tmap_pass.h
 * (inlined where a map is translated); their messages are here, in the table `rules`. */
#include "tmap.h"
#include "tmap_pass.h"
#include "layout_internal.h"

#include <stdio.h>
#include <string.h>

#define tfail(...) gcl__tmap_fail(__VA_ARGS__)
#define HOT GCL__TMAP_HOT

static const char *const type_names[] = {"uint8",   "uint16",  "uint32",  "int32",  "uint64",
                                         "int64",   "float16", "float32", "float64", "bfloat16"};

const char *gcl__tmap_type_name(gcl_tensormap_type type) {
  if ((unsigned)type >= sizeof type_names / sizeof *type_names) return "?";
  return type_names[type];
}

/* --- the rules ---------------------------------------------------------------------------------
 *
 * Every rule of docs/tensormap-rules.md, written once: its condition in the pass (tmap_pass.h:
 * one walk in the table's order, without calls or messages while the rules hold), its message
 * in the table `rules`, indexed by the rule's number, which the pass calls (out of line, cold)
 * for the first rule broken. The pass's order is the table's: options (24), the tensor (1, 2, 3, 4), the
 * combinations (5, 7, 8), the innermost dimension (9), the strides (10), the address (11, 26),
 * then the tiled box (12, 13, 16, 14, 15) or im2col (17, 18, 19, 20, 13, 25, 22, 23, 21). */

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
gcl_status gcl__tmap_refuse(int rule, const gcl__tmap_who *who, const DLTensor *t,
                            const gcl_tensormap_options *o, const gcl_tensormap_desc *d,
                            uint32_t i) {
  tmap_at at = {t, o, d, i, 0};
  return rules[rule](who, &at);
}

gcl_status gcl__tmap_refuse_flags(int rule, const gcl__tmap_who *who, const DLTensor *t,
                                  const gcl_tensormap_options *o, uint64_t flags) {
  tmap_at at = {t, o, NULL, 0, flags};
  return rules[rule](who, &at);
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
  /* the pass inlined (no call; tmap_pass.h) */
  gcl_status s = translate_upto(t, options, &who, &d, GCL__TMAP_STAGES);
  if (s == GCL_OK && desc) *desc = d;
  return s;
}

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
