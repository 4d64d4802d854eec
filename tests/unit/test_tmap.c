/* Tensor-map checks on the CPU (lib/core/tmap.c): every cuTensorMapEncodeTiled constraint has a
 * rejecting and an accepting case; rejections must name the tensor, the dimension and the value. */
#include <criterion/criterion.h>
#include <string.h>

#include "tmap.h"

#define WHO_TEXT "parameter 0 'maps' element 7"
/* The setters pass pieces formatted on failure only (tests/unit/test_tensormap_args.c checks
 * those labels); here the label is given as text. */
static const gcl__tmap_who who_pieces = {.text = WHO_TEXT};
#define WHO (&who_pieces)

/* A 2-D float32 view of rows x cols in storage with a row pitch of `pitch` elements. */
typedef struct fixture {
  int64_t shape[5], strides[5];
  DLTensor t;
  gcl_tensormap_options o;
  gcl_tensormap_desc d;
} fixture;

static void make(fixture *f, int64_t rows, int64_t cols, int64_t pitch) {
  memset(f, 0, sizeof *f);
  f->shape[0] = rows;
  f->shape[1] = cols;
  f->strides[0] = pitch;
  f->strides[1] = 1;
  f->t.data = (void *)(uintptr_t)0x10000;
  f->t.device.device_type = kDLCUDA;
  f->t.ndim = 2;
  f->t.dtype = (DLDataType){kDLFloat, 32, 1};
  f->t.shape = f->shape;
  f->t.strides = f->strides;
  f->o.box[0] = 32;
  f->o.box[1] = 8;
}

static gcl_status run(fixture *f) { return gcl__tmap_translate(&f->t, &f->o, WHO, &f->d); }

/* Fails the test unless the call was rejected with status s and a message holding each needle. */
static void rejects(fixture *f, gcl_status s, const char *n1, const char *n2, const char *n3) {
  gcl_status got = run(f);
  const char *m = gcl_last_error();
  cr_assert_eq(got, s, "expected %s, got %s: %s", gcl_status_name(s), gcl_status_name(got), m);
  cr_assert(strstr(m, WHO_TEXT), "message does not name the tensor: %s", m);
  const char *needles[] = {n1, n2, n3};
  for (int i = 0; i < 3; i++)
    if (needles[i]) cr_assert(strstr(m, needles[i]), "message lacks '%s': %s", needles[i], m);
}

static void accepts(fixture *f) {
  gcl_status s = run(f);
  cr_assert_eq(s, GCL_OK, "%s: %s", gcl_status_name(s), gcl_last_error());
}

Test(tmap, compact_2d_translates_in_tma_order) {
  fixture f;
  make(&f, 100, 1000, 1024);
  accepts(&f);
  cr_assert_eq(f.d.type, GCL_TENSORMAP_F32);
  cr_assert_eq(f.d.rank, 2u);
  cr_assert_eq(f.d.element_bytes, 4u);
  cr_assert_eq(f.d.dims[0], 1000u, "TMA dim 0 is the last DLPack dim");
  cr_assert_eq(f.d.dims[1], 100u);
  cr_assert_eq(f.d.strides[0], 4096u, "row pitch in bytes");
  cr_assert_eq(f.d.address, 0x10000u);
  cr_assert_eq(f.d.box[0], 32u);
  cr_assert_eq(f.d.box[1], 8u);
  cr_assert_eq(f.d.element_strides[0], 1u, "0 is taken as 1");
  cr_assert_eq(f.d.box_bytes, 32u * 8u * 4u);
}

Test(tmap, null_strides_are_compact_row_major) {
  fixture f;
  make(&f, 0, 0, 0);
  int64_t shape[3] = {4, 8, 16};
  f.t.ndim = 3;
  f.t.shape = shape;
  f.t.strides = NULL;
  f.t.dtype = (DLDataType){kDLFloat, 16, 1};
  f.o.box[0] = 16;
  f.o.box[1] = 8;
  f.o.box[2] = 4;
  accepts(&f);
  cr_assert_eq(f.d.type, GCL_TENSORMAP_F16);
  cr_assert_eq(f.d.dims[0], 16u);
  cr_assert_eq(f.d.dims[2], 4u);
  cr_assert_eq(f.d.strides[0], 32u);
  cr_assert_eq(f.d.strides[1], 256u);
}

Test(tmap, byte_offset_is_folded_and_must_keep_16_byte_alignment) {
  fixture f;
  make(&f, 64, 64, 64);
  f.t.byte_offset = 4096 + 64;
  accepts(&f);
  cr_assert_eq(f.d.address, 0x10000u + 4096u + 64u);
  f.t.byte_offset = 8; /* two floats: a legal view for a pointer, not for TMA */
  rejects(&f, GCL_ERROR_TENSOR, "0x10008", "16-byte aligned", "byte_offset");
}

Test(tmap, unaligned_data_pointer_is_rejected) {
  fixture f;
  make(&f, 64, 64, 64);
  f.t.data = (void *)(uintptr_t)0x10004;
  rejects(&f, GCL_ERROR_TENSOR, "0x10004", "16-byte aligned", NULL);
}

Test(tmap, device_type_must_be_cuda_or_managed) {
  fixture f;
  make(&f, 64, 64, 64);
  f.t.device.device_type = kDLCPU;
  rejects(&f, GCL_ERROR_TENSOR, "device type 1", NULL, NULL);
  f.t.device.device_type = (DLDeviceType)GCL_DL_DEVICE_CUDA_MANAGED;
  accepts(&f);
}

Test(tmap, rank_is_1_to_5) {
  fixture f;
  make(&f, 64, 64, 64);
  int64_t shape[6] = {2, 2, 2, 2, 2, 16}, strides[6] = {512, 256, 128, 64, 32, 1};
  f.t.shape = shape + 1;
  f.t.strides = strides + 1;
  f.t.ndim = 5;
  for (int i = 0; i < 5; i++) f.o.box[i] = i ? 2 : 16;
  accepts(&f);
  cr_assert_eq(f.d.rank, 5u);
  f.t.shape = shape;
  f.t.strides = strides;
  f.t.ndim = 6;
  rejects(&f, GCL_ERROR_TENSOR, "ndim = 6", "rank 1 ... 5", NULL);
  f.t.ndim = 0;
  rejects(&f, GCL_ERROR_TENSOR, "ndim = 0", NULL, NULL);
}

Test(tmap, dtypes_map_by_width) {
  struct { DLDataType dt; gcl_tensormap_type want; } table[] = {
      {{kDLUInt, 8, 1}, GCL_TENSORMAP_U8},    {{kDLInt, 8, 1}, GCL_TENSORMAP_U8},
      {{GCL_DL_BOOL, 8, 1}, GCL_TENSORMAP_U8}, {{10 /* float8 e4m3fn */, 8, 1}, GCL_TENSORMAP_U8},
      {{kDLUInt, 16, 1}, GCL_TENSORMAP_U16},  {{kDLInt, 16, 1}, GCL_TENSORMAP_U16},
      {{kDLUInt, 32, 1}, GCL_TENSORMAP_U32},  {{kDLInt, 32, 1}, GCL_TENSORMAP_I32},
      {{kDLUInt, 64, 1}, GCL_TENSORMAP_U64},  {{kDLInt, 64, 1}, GCL_TENSORMAP_I64},
      {{kDLFloat, 16, 1}, GCL_TENSORMAP_F16}, {{kDLBfloat, 16, 1}, GCL_TENSORMAP_BF16},
      {{kDLFloat, 32, 1}, GCL_TENSORMAP_F32}, {{kDLFloat, 64, 1}, GCL_TENSORMAP_F64},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    fixture f;
    make(&f, 64, 256, 256);
    f.t.dtype = table[i].dt;
    f.o.box[0] = 16; /* 16 bytes or more for every width */
    accepts(&f);
    cr_assert_eq(f.d.type, table[i].want, "entry %zu: got %s", i, gcl__tmap_type_name(f.d.type));
    cr_assert_eq(f.d.element_bytes, table[i].dt.bits / 8u);
  }
}

Test(tmap, dtypes_without_tensor_map_type_are_rejected) {
  fixture f;
  make(&f, 64, 64, 64);
  f.t.dtype = (DLDataType){kDLComplex, 64, 1};
  rejects(&f, GCL_ERROR_TENSOR, "code 5, bits 64, lanes 1", NULL, NULL);
  f.t.dtype = (DLDataType){kDLFloat, 32, 4};
  rejects(&f, GCL_ERROR_TENSOR, "lanes 4", NULL, NULL);
  f.t.dtype = (DLDataType){kDLFloat, 32, 1};
  accepts(&f);
}

Test(tmap, dims_are_1_to_2_pow_32) {
  fixture f;
  make(&f, 64, 64, 64);
  f.shape[0] = 0;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0 has size 0", NULL, NULL);
  int64_t shape[1] = {(1ll << 32) + 1}, strides[1] = {1};
  f.t.ndim = 1;
  f.t.shape = shape;
  f.t.strides = strides;
  f.t.dtype = (DLDataType){kDLUInt, 8, 1};
  f.o.box[0] = 16;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0 has size 4294967297", NULL, NULL);
  shape[0] = 1ll << 32;
  accepts(&f);
  cr_assert_eq(f.d.dims[0], 1ull << 32);
}

Test(tmap, innermost_dimension_must_be_contiguous) {
  fixture f;
  make(&f, 64, 64, 128);
  f.strides[1] = 2;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 1 (innermost)", "stride 2 elements", NULL);
  f.shape[1] = 1; /* never stepped over: any stride is fine */
  f.o.box[0] = 4;
  accepts(&f);
}

Test(tmap, strides_must_be_multiples_of_16_bytes) {
  fixture f;
  make(&f, 64, 1001, 1001);
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0", "4004 bytes", "multiple of 16");
  f.strides[0] = 1004;
  accepts(&f);
  cr_assert_eq(f.d.strides[0], 4016u);
}

/* A zero stride (a broadcast view) is encoded by the driver (measured on the H200, driver 580):
 * gclaunch takes it too. */
Test(tmap, strides_must_be_0_to_below_2_pow_40_bytes) {
  fixture f;
  make(&f, 64, 64, (1ll << 38)); /* 2^38 floats = 2^40 bytes */
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0", "274877906944", "2^40");
  f.strides[0] = (1ll << 38) - 4; /* 2^40 - 16 bytes */
  accepts(&f);
  f.strides[0] = -64;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0", "stride -64", NULL);
  f.strides[0] = 0;
  accepts(&f);
  cr_assert_eq(f.d.strides[1], 0u);
}

Test(tmap, size_one_dimension_stride_is_replaced) {
  fixture f;
  make(&f, 1, 64, 7); /* 28 bytes would be rejected if it mattered */
  accepts(&f);
  cr_assert_eq(f.d.strides[0], 256u);
}

Test(tmap, box_is_1_to_256) {
  fixture f;
  make(&f, 64, 1024, 1024);
  f.o.box[1] = 0;
  rejects(&f, GCL_ERROR_TENSOR, "box[1] (dimension 0) = 0", "1 ... 256", NULL);
  f.o.box[1] = 257;
  rejects(&f, GCL_ERROR_TENSOR, "box[1] (dimension 0) = 257", NULL, NULL);
  f.o.box[1] = 256;
  f.o.box[0] = 64;
  accepts(&f);
  f.o.box[0] = 300;
  rejects(&f, GCL_ERROR_TENSOR, "box[0] (dimension 1) = 300", NULL, NULL);
}

Test(tmap, inner_box_bytes_must_be_a_multiple_of_16) {
  fixture f;
  make(&f, 64, 64, 64);
  f.o.box[0] = 3;
  rejects(&f, GCL_ERROR_TENSOR, "box[0] (dimension 1) = 3", "12 bytes", "multiple of 16");
  f.o.box[0] = 4;
  accepts(&f);
}

Test(tmap, inner_box_bytes_must_fit_the_swizzle_span) {
  static const struct { int swizzle; uint32_t ok, bad; const char *span; } table[] = {
      {GCL_TENSORMAP_SWIZZLE_32B, 8, 12, "32-byte"},
      {GCL_TENSORMAP_SWIZZLE_64B, 16, 20, "64-byte"},
      {GCL_TENSORMAP_SWIZZLE_128B, 32, 64, "128-byte"},
  };
  for (size_t i = 0; i < 3; i++) {
    fixture f;
    make(&f, 64, 256, 256);
    f.o.swizzle = table[i].swizzle;
    f.o.box[0] = table[i].ok;
    accepts(&f);
    f.o.box[0] = table[i].bad;
    rejects(&f, GCL_ERROR_TENSOR, "box[0] (dimension 1)", table[i].span, "swizzle span");
  }
}

Test(tmap, element_strides_are_1_to_8) {
  fixture f;
  make(&f, 64, 64, 64);
  f.o.element_strides[1] = 9;
  rejects(&f, GCL_ERROR_TENSOR, "element_strides[1] (dimension 0) = 9", "1 ... 8", NULL);
  f.o.element_strides[1] = 8;
  accepts(&f);
  cr_assert_eq(f.d.box_bytes, 32u * 1u * 4u, "ceil(8 / 8) rows of the box are loaded");
  f.o.element_strides[1] = 3;
  accepts(&f);
  cr_assert_eq(f.d.box_bytes, 32u * 3u * 4u, "ceil(8 / 3) = 3 rows");
}

static void make_3d(fixture *f, int64_t pitch) {
  make(f, 0, 0, 0);
  f->shape[0] = 4;
  f->shape[1] = 8;
  f->shape[2] = 16;
  f->strides[0] = 8 * pitch;
  f->strides[1] = pitch;
  f->strides[2] = 1;
  f->t.ndim = 3;
  f->t.dtype = (DLDataType){kDLFloat, 16, 1};
  f->o.box[0] = 16;
  f->o.box[1] = 8;
  f->o.box[2] = 4;
}

Test(tmap, interleave_needs_rank_3) {
  fixture f;
  make(&f, 64, 64, 64);
  f.o.interleave = GCL_TENSORMAP_INTERLEAVE_16B;
  rejects(&f, GCL_ERROR_TENSOR, "interleave 1 needs rank >= 3", "rank 2", NULL);
  make_3d(&f, 16);
  f.o.interleave = GCL_TENSORMAP_INTERLEAVE_16B;
  accepts(&f);
}

/* The documentation asks the 32-byte swizzle of a 32-byte interleave; the driver encodes any
 * (measured on the H200, driver 580), and gclaunch follows the driver. */
Test(tmap, interleave_32b_takes_any_swizzle_and_needs_32_byte_alignment) {
  fixture f;
  make_3d(&f, 16);
  f.o.interleave = GCL_TENSORMAP_INTERLEAVE_32B;
  accepts(&f);
  f.o.swizzle = GCL_TENSORMAP_SWIZZLE_32B;
  accepts(&f);
  f.t.byte_offset = 16;
  rejects(&f, GCL_ERROR_TENSOR, "0x10010", "32-byte aligned", NULL);
  f.t.byte_offset = 0;
  make_3d(&f, 24); /* 48-byte pitch: a multiple of 16 only */
  f.o.interleave = GCL_TENSORMAP_INTERLEAVE_32B;
  f.o.swizzle = GCL_TENSORMAP_SWIZZLE_32B;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 1", "48 bytes", "multiple of 32");
}

Test(tmap, enum_values_are_checked) {
  fixture f;
  make(&f, 64, 64, 64);
  f.o.interleave = 3;
  rejects(&f, GCL_ERROR_INVALID_ARGUMENT, "interleave = 3", NULL, NULL);
  f.o.interleave = 0;
  f.o.swizzle = 4;
  rejects(&f, GCL_ERROR_INVALID_ARGUMENT, "swizzle = 4", NULL, NULL);
  f.o.swizzle = 0;
  f.o.l2_promotion = -1;
  rejects(&f, GCL_ERROR_INVALID_ARGUMENT, "l2_promotion = -1", NULL, NULL);
  f.o.l2_promotion = GCL_TENSORMAP_L2_256B;
  f.o.oob_fill = 2;
  rejects(&f, GCL_ERROR_INVALID_ARGUMENT, "oob_fill = 2", NULL, NULL);
  f.o.oob_fill = 0;
  accepts(&f);
}

Test(tmap, nan_fill_only_for_floats) {
  fixture f;
  make(&f, 64, 64, 64);
  f.o.oob_fill = GCL_TENSORMAP_OOB_NAN;
  accepts(&f);
  f.t.dtype = (DLDataType){kDLInt, 32, 1};
  rejects(&f, GCL_ERROR_TENSOR, "NaN", "int32", NULL);
}

Test(tmap, null_pointers_are_rejected) {
  fixture f;
  make(&f, 64, 64, 64);
  cr_assert_eq(gcl__tmap_translate(NULL, &f.o, WHO, &f.d), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl__tmap_translate(&f.t, NULL, WHO, &f.d), GCL_ERROR_INVALID_ARGUMENT);
  /* NULL data is encoded as the driver encodes it, at address byte_offset: a template map whose
   * address the kernel patches (measured: driver 580 encodes address 0). */
  f.t.data = NULL, f.t.byte_offset = 256;
  cr_assert_eq(gcl__tmap_translate(&f.t, &f.o, WHO, &f.d), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(f.d.address, 256);
  f.t.byte_offset = 8;
  rejects(&f, GCL_ERROR_TENSOR, "= 0x0 + 8 = 0x8 is not 16-byte aligned", NULL, NULL);
  f.t.byte_offset = 0;
  f.t.data = (void *)(uintptr_t)0x10000;
  f.t.shape = NULL;
  rejects(&f, GCL_ERROR_TENSOR, "shape is NULL", NULL, NULL);
}

Test(tmap, public_check_names_tensor_and_leaves_desc_on_failure) {
  fixture f;
  make(&f, 64, 64, 64);
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, NULL), GCL_OK, "%s", gcl_last_error());
  memset(&f.d, 0xab, sizeof f.d);
  gcl_tensormap_desc before = f.d;
  f.t.byte_offset = 4;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, &f.d), GCL_ERROR_TENSOR);
  cr_assert(strstr(gcl_last_error(), "tensor: data + byte_offset"), "%s", gcl_last_error());
  cr_assert(!memcmp(&before, &f.d, sizeof before), "desc changed on failure");
  f.t.byte_offset = 0;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, &f.d), GCL_OK);
  cr_assert_eq(f.d.dims[0], 64u);
}

/* TMA stores write whole 16-byte chunks: a store map needs rows that end on a 16-byte boundary,
 * or a store reaching the row's end would overwrite the bytes after it. Loads are not affected. */
Test(tmap, store_needs_innermost_extent_multiple_of_16_bytes) {
  fixture f;
  make(&f, 5, 7, 8); /* 7 float32 = 28 bytes per row, pitch 32 */
  accepts(&f);       /* a load map: fine */
  f.o.store = 1;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 1 (innermost) has 7 elements of 4 bytes = 28 bytes",
          "16-byte chunks", "overwrite the 4 bytes after each row");
  f.shape[1] = 8; /* 32 bytes */
  accepts(&f);
  cr_assert_eq(f.d.dims[0], 8u);
  f.t.dtype = (DLDataType){kDLUInt, 8, 1}; /* 8 bytes per row, pitch 8: stride check first */
  f.strides[0] = 16;
  f.o.box[0] = 16;
  rejects(&f, GCL_ERROR_TENSOR, "8 elements of 1 bytes = 8 bytes", "the 8 bytes after", NULL);
  f.shape[1] = 48;
  f.strides[0] = 48;
  accepts(&f);
}

Test(tmap, store_check_covers_rank_1_and_bf16) {
  fixture f;
  make(&f, 0, 0, 0);
  int64_t shape[1] = {4095};
  f.t.ndim = 1;
  f.t.shape = shape;
  f.t.strides = NULL;
  f.t.dtype = (DLDataType){kDLBfloat, 16, 1};
  f.o.box[0] = 64;
  f.o.store = 1;
  rejects(&f, GCL_ERROR_TENSOR, "dimension 0 (innermost) has 4095 elements", "8190 bytes",
          "overwrite the 2 bytes");
  shape[0] = 4096;
  accepts(&f);
  shape[0] = 4095;
  f.o.store = 0;
  accepts(&f);
}

Test(tmap, public_check_refuses_odd_store_destination) {
  fixture f;
  make(&f, 512, 4095, 4096);
  f.o.store = 1;
  gcl_tensormap_desc d;
  memset(&d, 0x5a, sizeof d);
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, &d), GCL_ERROR_TENSOR);
  cr_assert(strstr(gcl_last_error(), "tensor: store = 1"), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "16380 bytes"), "%s", gcl_last_error());
  cr_assert_eq(((unsigned char *)&d)[0], 0x5a, "desc untouched on failure");
  f.shape[1] = 4096;
  cr_assert_eq(gcl_tensormap_check(&f.t, &f.o, &d), GCL_OK, "%s", gcl_last_error());
}

/* --- im2col --------------------------------------------------------------------------------- */

/* An NHWC float16 tensor [2, 9, 14, 64] (TMA order C 64, W 14, H 9, N 2), compact. */
static void make_nhwc(fixture *f) {
  memset(f, 0, sizeof *f);
  int64_t shape[4] = {2, 9, 14, 64};
  memcpy(f->shape, shape, sizeof shape);
  f->t.data = (void *)(uintptr_t)0x20000;
  f->t.device.device_type = kDLCUDA;
  f->t.ndim = 4;
  f->t.dtype = (DLDataType){kDLFloat, 16, 1};
  f->t.shape = f->shape;
  f->t.strides = NULL;
  f->o.im2col.pixels = 128;
  f->o.im2col.channels = 64;
  f->o.im2col.lower[0] = -1, f->o.im2col.lower[1] = -1; /* padding 1 */
  f->o.im2col.upper[0] = -1, f->o.im2col.upper[1] = -1; /* a 3x3 filter: 1 - 3 + 1 */
}

Test(tmap, im2col_translates_pixels_channels_and_corners) {
  fixture f;
  make_nhwc(&f);
  f.o.box[0] = 999; /* ignored in im2col mode */
  f.o.im2col.lower[2] = 77, f.o.im2col.upper[2] = -77; /* past rank - 2: ignored, zeroed */
  accepts(&f);
  cr_assert_eq(f.d.rank, 4u);
  cr_assert_eq(f.d.dims[0], 64u, "C first in TMA order");
  cr_assert_eq(f.d.dims[1], 14u);
  cr_assert_eq(f.d.dims[3], 2u, "N last");
  cr_assert_eq(f.d.strides[0], 64u * 2u, "pixel pitch in bytes");
  cr_assert_eq(f.d.strides[1], 64u * 2u * 14u);
  cr_assert_eq(f.d.im2col.pixels, 128u);
  cr_assert_eq(f.d.im2col.channels, 64u);
  cr_assert(f.d.im2col.lower[0] == -1 && f.d.im2col.lower[1] == -1 && f.d.im2col.lower[2] == 0);
  cr_assert(f.d.im2col.upper[0] == -1 && f.d.im2col.upper[1] == -1 && f.d.im2col.upper[2] == 0);
  cr_assert_eq(f.d.box_bytes, 128u * 64u * 2u, "pixels x channels x element bytes");
  cr_assert_eq(f.d.box[0], 0u, "no box in im2col mode");
  cr_assert_eq(f.d.element_strides[0], 1u);
}

Test(tmap, im2col_needs_rank_3_to_5) {
  fixture f;
  make(&f, 16, 64, 64);
  f.o.im2col.pixels = 16;
  f.o.im2col.channels = 16;
  rejects(&f, GCL_ERROR_TENSOR, "im2col needs rank 3 ... 5", "rank 2", NULL);
  int64_t shape[3] = {2, 30, 16};
  f.t.ndim = 3, f.t.shape = shape, f.t.strides = NULL;
  accepts(&f);
  cr_assert_eq(f.d.box_bytes, 16u * 16u * 4u);
}

Test(tmap, im2col_pixels_are_1_to_1024_and_channels_1_to_256) {
  fixture f;
  make_nhwc(&f);
  f.o.im2col.pixels = 1025;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.pixels = 1025", "1 ... 1024", NULL);
  f.o.im2col.pixels = 1024;
  accepts(&f);
  f.o.im2col.channels = 0;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.channels = 0", "1 ... 256", NULL);
  f.o.im2col.channels = 257;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.channels = 257", NULL, NULL);
  f.o.im2col.channels = 256; /* 1024 x 256 x 2 bytes: over the 228 KiB box limit */
  rejects(&f, GCL_ERROR_TENSOR, "im2col.pixels x channels = 1024 x 256", "228 KiB", NULL);
  f.o.im2col.pixels = 456; /* 233472 bytes */
  accepts(&f);
}

/* Ranks 3, 4, 5 allow 16-, 8- and 5-bit signed corner offsets. */
Test(tmap, im2col_corner_ranges_depend_on_rank) {
  fixture f;
  make_nhwc(&f);
  f.o.im2col.lower[1] = -129;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.lower[1] (H, dimension 1) = -129", "-128 ... 127",
          "rank 4");
  f.o.im2col.lower[1] = -128;
  f.o.im2col.upper[0] = 128;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.upper[0] (W, dimension 2) = 128", NULL, NULL);
  f.o.im2col.upper[0] = 127;
  accepts(&f);
  int64_t shape5[5] = {2, 4, 9, 14, 64};
  f.t.ndim = 5, f.t.shape = shape5;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.lower[1] (H, dimension 2) = -128", "-16 ... 15", "rank 5");
  f.o.im2col.lower[1] = -16, f.o.im2col.upper[0] = 15, f.o.im2col.lower[2] = 16;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.lower[2] (D, dimension 1) = 16", NULL, NULL);
  f.o.im2col.lower[2] = -16;
  accepts(&f);
  int64_t shape3[3] = {2, 100, 64};
  f.t.ndim = 3, f.t.shape = shape3;
  f.o.im2col.lower[0] = -32768, f.o.im2col.upper[0] = 32767;
  accepts(&f);
  f.o.im2col.lower[0] = -32769;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.lower[0] (W, dimension 1) = -32769", "rank 3", NULL);
}

Test(tmap, im2col_channels_must_fit_the_swizzle_span) {
  fixture f;
  make_nhwc(&f); /* 64 float16 channels = 128 bytes */
  f.o.swizzle = GCL_TENSORMAP_SWIZZLE_64B;
  rejects(&f, GCL_ERROR_TENSOR, "im2col.channels (dimension 3) = 64 elements = 128 bytes",
          "64-byte swizzle span", NULL);
  f.o.swizzle = GCL_TENSORMAP_SWIZZLE_128B;
  accepts(&f);
}

Test(tmap, im2col_keeps_the_common_checks) {
  fixture f;
  make_nhwc(&f);
  f.o.element_strides[2] = 9;
  rejects(&f, GCL_ERROR_TENSOR, "element_strides[2] (dimension 1) = 9", NULL, NULL);
  f.o.element_strides[2] = 2;
  accepts(&f);
  cr_assert_eq(f.d.element_strides[2], 2u);
  f.t.byte_offset = 8; /* the address after byte_offset must stay 16-byte aligned */
  rejects(&f, GCL_ERROR_TENSOR, "is not 16-byte aligned", NULL, NULL);
  f.t.byte_offset = 64 * 2 * 14; /* one row of pixels in: a view */
  accepts(&f);
  cr_assert_eq(f.d.address, 0x20000u + 64u * 2u * 14u);
  f.o.store = 1;
  f.shape[3] = 60; /* 120-byte pixels: a store would overwrite 8 bytes after each */
  rejects(&f, GCL_ERROR_TENSOR, "store = 1", NULL, NULL);
}
