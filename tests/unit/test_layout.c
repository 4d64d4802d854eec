/* Layout engine against the offsets measured in cubins and on the H200 (docs/facts.md,
 * "Parameter bases", "Placement rule", "Parameter limit"), the 4352-byte base switch and the
 * 32764-byte limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static gcl_layout *layout_of(const char *text, int sm) {
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_OK, "%s", gcl_last_error());
  gcl_layout *l = NULL;
  gcl_status s = gcl_layout_create(sig, sm, &l);
  cr_assert_eq(s, GCL_OK, "'%s' sm_%d: %s", text, sm, gcl_last_error());
  gcl_signature_destroy(sig); /* the layout keeps its own copy */
  return l;
}

static size_t off(const gcl_layout *l, size_t i) {
  size_t o = 0;
  cr_assert_eq(gcl_layout_param(l, i, &o, NULL, NULL), GCL_OK);
  return o;
}

/* Checks offsets[0..n) and the total size of text on sm. */
static void expect(const char *text, int sm, const size_t *offsets, size_t n, size_t size) {
  gcl_layout *l = layout_of(text, sm);
  cr_assert_eq(gcl_layout_count(l), n);
  cr_assert_eq(gcl_layout_sm(l), sm);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(off(l, i), offsets[i], "'%s' sm_%d param %zu: %zu, expected %zu", text, sm, i,
                 off(l, i), offsets[i]);
  cr_assert_eq(gcl_layout_size(l), size, "'%s' sm_%d size %zu, expected %zu", text, sm,
               gcl_layout_size(l), size);
  gcl_layout_destroy(l);
}

#define EXPECT(text, sm, size, ...)                                                            \
  do {                                                                                         \
    const size_t o_[] = {__VA_ARGS__};                                                         \
    expect(text, sm, o_, sizeof o_ / sizeof *o_, size);                                         \
  } while (0)

Test(layout, tensormap_then_pointer_measured_tables) {
  EXPECT("tensormap a, i32* o", 80, 0xa8, 0x20, 0xa0);
  EXPECT("tensormap a, i32* o", 90, 0xf8, 0x70, 0xf0);  /* 112, 240, 248 */
  EXPECT("tensormap a, i32* o", 100, 0x88, 0, 0x80);
  EXPECT("tensormap a, i32* o", 120, 0x88, 0, 0x80);
}

Test(layout, h200_param_info) {
  /* cuFuncGetParamInfo on the H200: 112/128, 240/1, 248/8. */
  gcl_layout *l = layout_of("grid_constant tensormap m, i8 c, i32* out", 90);
  size_t o, s, a;
  cr_assert_eq(gcl_layout_param(l, 0, &o, &s, &a), GCL_OK);
  cr_assert_eq(o, 112);
  cr_assert_eq(s, 128);
  cr_assert_eq(a, 128);
  cr_assert_eq(gcl_layout_param(l, 1, &o, &s, &a), GCL_OK);
  cr_assert_eq(o, 240);
  cr_assert_eq(s, 1);
  cr_assert_eq(gcl_layout_param(l, 2, &o, &s, &a), GCL_OK);
  cr_assert_eq(o, 248);
  cr_assert_eq(s, 8);
  cr_assert_eq(a, 8);
  cr_assert_eq(gcl_layout_size(l), 256);
  gcl_layout_destroy(l);
}

Test(layout, lower_alignments) {
  int sms[] = {75, 80, 86, 89, 90, 100, 103, 120, 121};
  size_t a64[] = {0x20, 0x20, 0x20, 0x20, 0x30, 0, 0, 0, 0};
  size_t a32[] = {0, 0, 0, 0, 0x10, 0, 0, 0, 0};
  for (size_t i = 0; i < sizeof sms / sizeof *sms; i++) {
    EXPECT("tensormap align(64) a, i32* o", sms[i], a64[i] + 136, a64[i], a64[i] + 128);
    EXPECT("bytes(128) align(32) a", sms[i], a32[i] + 128, a32[i]);
    EXPECT("bytes(7) a, i8 b, u64 c", sms[i], 16, 0, 7, 8); /* bases are 8-aligned */
  }
}

Test(layout, no_tail_padding_and_c_order_holes) {
  EXPECT("i8 a, f64 b, u16 c", 90, 18, 0, 8, 16);
  EXPECT("struct{f64, i8} s, i8 c", 90, 17, 0, 16);
  EXPECT("", 90, 0);
}

Test(layout, grid_constant_array_of_tensormaps) {
  EXPECT("grid_constant tensormap[240] maps, u32 n", 90, 112 + 240 * 128 + 4, 112, 112 + 240 * 128);
  /* 255 maps fit on sm_90: (32764 - 112) / 128 = 255 */
  EXPECT("tensormap[255] maps", 90, 112 + 255 * 128, 112);
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse("tensormap[256] maps", &sig), GCL_OK);
  gcl_layout *l = (gcl_layout *)(uintptr_t)0x99;
  cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert_eq((uintptr_t)l, 0x99);
  cr_assert_str_eq(gcl_last_error(), "parameters need 32768 bytes on sm_90, 4 bytes over the "
                                     "32764-byte limit (parameter 0 'maps' ends at 32768)");
  gcl_signature_destroy(sig);
}

Test(layout, exact_limit) {
  /* nvcc accepts struct{char[32760]} + int: 32764 bytes; the int sits at 32760 */
  EXPECT("bytes(32760) big, i32 x", 90, 32764, 0, 32760);
  EXPECT("bytes(32760) big, i32 x", 75, 32764, 0, 32760);
  EXPECT("bytes(32764) big", 100, 32764, 0);
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_signature_parse("bytes(32761) big, i32 x", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert(strstr(gcl_last_error(), "32768 bytes on sm_90, 4 bytes over") != NULL, "%s",
            gcl_last_error());
  gcl_signature_destroy(sig);
  cr_assert_eq(gcl_signature_parse("bytes(32765)", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 100, &l), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert(strstr(gcl_last_error(), "1 bytes over") != NULL, "%s", gcl_last_error());
  cr_assert_null(l);
  gcl_signature_destroy(sig);
}

/* sm_75-89 switch from base 0x160 to 0x1a80 when the parameters laid out from offset 0 exceed
 * 4352 bytes. Every row was measured on cubins from nvcc 13.0 (-arch=sm_80). */
Test(layout, sm80_base_moves_past_4352_bytes) {
  /* 0-based: 0, 4096, 4224 -> 4320 or 4321 bytes: base 0x160 stays (352 + 4128 = 37 * 128),
   * although with that base the 97-byte version ends at 4353 */
  EXPECT("bytes(4096) a, tensormap m, bytes(96) c", 80, 4352, 0, 4128, 4256);
  EXPECT("bytes(4096) a, tensormap m, bytes(97) c", 80, 4353, 0, 4128, 4256);
  /* 0-based: 0, 4352 -> 4480 > 4352: base 0x1a80 (6784 = 53 * 128) */
  EXPECT("bytes(4225) a, tensormap m", 80, 4480, 0, 4352);
  EXPECT("tensormap m, bytes(4400) b", 80, 4528, 0, 128);
  /* the sizes sum to 4329 but the 0-based layout ends at 4456: base 0x1a80 */
  EXPECT("i8 c, tensormap m, bytes(4200) b", 80, 4456, 0, 128, 256);
  EXPECT("i8 c, tensormap m, bytes(4223) b", 80, 4479, 0, 128, 256);
  EXPECT("bytes(4224) b, i8 c, tensormap m", 80, 4480, 0, 4224, 4352);
  EXPECT("tensormap m, bytes(4000) b", 80, 4160, 32, 160);
  /* sm_90 and sm_100 keep their base */
  EXPECT("bytes(4096) a, tensormap m, bytes(97) c", 90, 4433, 0, 4208, 4336); /* 528 + 4208 = 4736 */
  EXPECT("bytes(4096) a, tensormap m, bytes(97) c", 100, 4321, 0, 4096, 4224); /* 896 = 7 * 128 */
}

/* Two limits, both measured: ptxas counts 32764 bytes on the 0-based layout (nvcc/ptxas 13.0), and
 * the driver refuses an image whose device placement exceeds it (H200, driver 580). */
Test(layout, limit_counts_from_offset_zero_like_ptxas) {
  /* rejected on every arch ("0x8000 bytes, 0x7ffc max") though sm_90 would place it in 32752 */
  int sms[] = {75, 80, 90, 100, 120};
  for (size_t i = 0; i < 5; i++) {
    gcl_signature *sig = NULL;
    gcl_layout *l = NULL;
    char want[200];
    cr_assert_eq(gcl_signature_parse("i8 c, tensormap[255] m", &sig), GCL_OK);
    cr_assert_eq(gcl_layout_create(sig, sms[i], &l), GCL_ERROR_LAYOUT_TOO_LARGE);
    snprintf(want, sizeof want, "parameters need 32768 bytes on sm_%d, 4 bytes over the "
             "32764-byte limit (parameter 1 'm' ends at 32768)", sms[i]);
    cr_assert_str_eq(gcl_last_error(), want);
    gcl_signature_destroy(sig);
  }
}

Test(layout, limit_counts_the_device_placement_like_the_driver) {
  /* ptxas accepts it (0-based 32728 bytes) but its sm_90 placement ends at 32840: the driver
   * refuses to load such an image, so the engine refuses the layout; sm_80 places it in 32728. */
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_signature_parse("tensormap m, bytes(32600) b", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert_str_eq(gcl_last_error(), "parameters need 32840 bytes on sm_90 once placed for the "
                   "device (the compiler accepts it, the driver refuses to load it), 76 bytes over "
                   "the 32764-byte limit (parameter 1 'b' ends at 32840)");
  cr_assert_null(l);
  gcl_signature_destroy(sig);
  EXPECT("tensormap m, bytes(32600) b", 80, 32728, 0, 128);
  EXPECT("tensormap m, bytes(32480) b", 90, 32720, 112, 240);
  size_t offs[] = {112, 240}, sizes[] = {128, 32600};
  gcl_layout *raw = NULL;
  cr_assert_eq(gcl_layout_create_raw(2, offs, sizes, 90, &raw), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert_null(raw);
}

Test(layout, bad_arguments) {
  gcl_signature *sig = NULL;
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_signature_parse("i32 a", &sig), GCL_OK);
  cr_assert_eq(gcl_layout_create(sig, 70, &l), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "sm_70") != NULL);
  cr_assert_eq(gcl_layout_create(sig, 91, &l), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_layout_create(NULL, 90, &l), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_null(l);
  cr_assert_eq(gcl_layout_create(sig, 90, &l), GCL_OK);
  cr_assert_eq(gcl_layout_param(l, 1, NULL, NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  gcl_field f; /* a parameter by name is a field: its index is f.param, its description f.info */
  cr_assert_eq(gcl_layout_field(l, "a", &f), GCL_OK);
  cr_assert_eq(f.param, 0);
  cr_assert_str_eq(f.info.name, "a");
  cr_assert_eq(gcl_layout_field(l, "b", &f), GCL_ERROR_NOT_FOUND);
  cr_assert_eq(gcl_layout_param_field(l, 0, &f), GCL_OK);
  cr_assert_str_eq(f.info.name, "a");
  gcl_signature_destroy(sig);
  gcl_layout_destroy(l);
  gcl_layout_destroy(NULL);
  cr_assert_eq(gcl_layout_size(NULL), 0);
}

Test(layout, param_base_table) {
  cr_assert_eq(gcl__param_base(75, 100), 0x160);
  cr_assert_eq(gcl__param_base(89, 4352), 0x160);
  cr_assert_eq(gcl__param_base(89, 4353), 0x1a80);
  cr_assert_eq(gcl__param_base(90, 30000), 0x210);
  cr_assert_eq(gcl__param_base(100, 0), 0x380);
  cr_assert_eq(gcl__param_base(121, 30000), 0x380);
  cr_assert_eq(gcl__param_base(60, 0), 0);
  cr_assert(gcl__sm_known(88));
  cr_assert(!gcl__sm_known(95));
}

Test(layout, raw_from_driver_offsets) {
  size_t offs[] = {112, 240, 248}, sizes[] = {128, 1, 8};
  gcl_layout *l = NULL;
  cr_assert_eq(gcl_layout_create_raw(3, offs, sizes, 90, &l), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_size(l), 256);
  gcl_field f;
  cr_assert_eq(gcl_layout_param_field(l, 1, &f), GCL_OK);
  const gcl_param_info info = f.info;
  cr_assert_eq(info.kind, GCL_PARAM_BYTES);
  cr_assert_null(info.name);
  cr_assert_eq(info.size, 1);
  gcl_layout_destroy(l);
  size_t overlap[] = {0, 4}, osz[] = {8, 4};
  l = NULL;
  cr_assert_eq(gcl_layout_create_raw(2, overlap, osz, 90, &l), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "overlaps") != NULL, "%s", gcl_last_error());
  size_t far[] = {32888}, fsz[] = {8};
  cr_assert_eq(gcl_layout_create_raw(1, far, fsz, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE);
  cr_assert_null(l);
  cr_assert_eq(gcl_layout_create_raw(0, NULL, NULL, 90, &l), GCL_OK);
  cr_assert_eq(gcl_layout_size(l), 0);
  gcl_layout_destroy(l);
}
