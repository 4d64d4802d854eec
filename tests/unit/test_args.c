/* Argument buffers: placement at device offsets, set/unset tracking, array elements, names,
 * typed and libffi setters, failed sets leaving values alone, owner release counting. */
#include <criterion/criterion.h>
#include <ffi.h>
#include <stdint.h>
#include <string.h>

#include "args_internal.h"
#include "../common/args_fixture.h"

/* Parameter index of args as a field; a zeroed field (refused as another layout's) past the end. */
static gcl_field param_field_of(const gcl_args *a, size_t index) {
  gcl_field f = {0};
  gcl_layout_param_field(gcl_args_layout(a), index, &f);
  return f;
}
#define PF(a, index) ((const gcl_field *)(gcl_field[1]){param_field_of((a), (index))})

static const unsigned char *buffer(const gcl_args *a) {
  const void *data = NULL;
  size_t size = 0;
  cr_assert_eq(gcl_args_buffer(a, &data, &size), GCL_OK, "%s", gcl_last_error());
  return data;
}

Test(args, fresh_args_are_unset_and_named) {
  fixture f = make("tensormap m, i8 c, i32* out", 90);
  const void *data = (void *)1;
  size_t size = 7;
  cr_assert_eq(gcl_args_buffer(f.args, &data, &size), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert_eq((uintptr_t)data, 1);
  cr_assert_eq(size, 7);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 'm' ('tensormap') was never set (3 of 3 "
                                     "parameters unset)");
  cr_assert_eq(gcl__args_unset_count(f.args), 3);
  cr_assert_eq((uintptr_t)gcl__args_data(f.args) % 128, 0);
  void **ptrs = gcl__args_param_pointers(f.args);
  cr_assert_eq((unsigned char *)ptrs[0], (unsigned char *)gcl__args_data(f.args) + 112);
  cr_assert_eq((unsigned char *)ptrs[1], (unsigned char *)gcl__args_data(f.args) + 240);
  cr_assert_eq((unsigned char *)ptrs[2], (unsigned char *)gcl__args_data(f.args) + 248);
  cr_assert_eq(gcl_args_layout(f.args), f.layout);
  drop(&f);
}

Test(args, values_land_at_device_offsets) {
  fixture f = make("tensormap m, i8 c, i32* out", 90);
  unsigned char map[128];
  for (int i = 0; i < 128; i++) map[i] = (unsigned char)(i + 1);
  cr_assert_eq(gcl_args_set(f.args, 0, map, sizeof map), GCL_OK);
  int8_t c = -5;
  cr_assert_eq(gcl_args_set_by_name(f.args, "c", &c, 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(f.args, 2, 0x7f0000001000ull), GCL_OK);
  cr_assert_eq(gcl__args_unset_count(f.args), 0);
  const void *data;
  size_t size;
  cr_assert_eq(gcl_args_buffer(f.args, &data, &size), GCL_OK);
  cr_assert_eq(size, 256);
  const unsigned char *b = data;
  cr_assert(!memcmp(b + 112, map, 128));
  cr_assert_eq((int8_t)b[240], -5);
  uint64_t p;
  memcpy(&p, b + 248, 8);
  cr_assert_eq(p, 0x7f0000001000ull);
  for (int i = 0; i < 112; i++) cr_assert_eq(b[i], 0, "hole byte %d not zero", i);
  drop(&f);
}

Test(args, failed_sets_leave_the_previous_value) {
  fixture f = make("u64 n, f32* align(16) src, f32 x", 80);
  cr_assert_eq(gcl_args_set_u64(f.args, 0, 42), GCL_OK);
  uint32_t small = 9;
  cr_assert_eq(gcl_args_set(f.args, 0, &small, 4), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 'n' ('u64'): value is 4 bytes, the parameter is "
                                     "8 bytes");
  cr_assert_eq(gcl_args_set_i64(f.args, 0, -1), GCL_ERROR_TYPE_MISMATCH);
  cr_assert(strstr(gcl_last_error(), "'u64'") && strstr(gcl_last_error(), "got i64"), "%s",
            gcl_last_error());
  cr_assert_eq(gcl_args_set_ptr(f.args, 1, 0x1000), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(f.args, 1, 0x1004), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 1 'src' ('f32* align(16)'): address 0x1004 is not "
                                     "16-byte aligned");
  cr_assert_eq(gcl_args_set_ptr(f.args, 2, 0x1000), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_eq(gcl_args_set_f64(f.args, 2, 1.0), GCL_ERROR_TYPE_MISMATCH);
  cr_assert(!gcl_args_is_set(f.args, 2));
  cr_assert_eq(gcl_args_set_f32(f.args, 2, 2.5f), GCL_OK);
  cr_assert_eq(gcl_args_set(f.args, 9, &small, 4), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_set(f.args, 0, NULL, 8), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_set_by_name(f.args, "nope", &small, 4), GCL_ERROR_NOT_FOUND);
  const unsigned char *b = buffer(f.args);
  uint64_t n, src;
  float x;
  memcpy(&n, b, 8), memcpy(&src, b + 8, 8), memcpy(&x, b + 16, 4);
  cr_assert_eq(n, 42);
  cr_assert_eq(src, 0x1000);
  cr_assert_eq(x, 2.5f);
  drop(&f);
}

Test(args, array_elements_are_set_one_by_one) {
  fixture f = make("u32 n, grid_constant tensormap[4] maps", 90);
  cr_assert_eq(gcl_args_set_u32(f.args, 0, 4), GCL_OK);
  unsigned char m[128];
  for (size_t e = 0; e < 3; e++) {
    memset(m, (int)(0xa0 + e), sizeof m);
    cr_assert_eq(gcl_args_set_element(f.args, 1, e, m, sizeof m), GCL_OK);
    cr_assert_eq(gcl_args_set_element(f.args, 1, e, m, sizeof m), GCL_OK); /* twice: counts once */
  }
  cr_assert(!gcl_args_is_set(f.args, 1));
  const void *d;
  size_t s;
  cr_assert_eq(gcl_args_buffer(f.args, &d, &s), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 1 'maps' ('tensormap[4]'): field 'maps[3]' was never "
                                     "set (128 of its 512 leaf bytes unset; 1 of 2 parameters unset)");
  cr_assert_eq(gcl_args_set_element(f.args, 1, 4, m, sizeof m), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_set_element(f.args, 1, 3, m, 64), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_set_element(f.args, 0, 0, m, 4), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "is not an array") != NULL);
  memset(m, 0xa3, sizeof m);
  cr_assert_eq(gcl_args_set_element(f.args, 1, 3, m, sizeof m), GCL_OK);
  cr_assert(gcl_args_is_set(f.args, 1));
  const unsigned char *b = buffer(f.args);
  for (size_t e = 0; e < 4; e++) /* the maps start at 128 - 0x210 % 128 = 112 on sm_90 */
    for (size_t i = 0; i < 128; i++) cr_assert_eq(b[112 + e * 128 + i], 0xa0 + e);
  /* replacing one element touches only that element */
  memset(m, 0x55, sizeof m);
  cr_assert_eq(gcl_args_set_element(f.args, 1, 2, m, sizeof m), GCL_OK);
  b = buffer(f.args);
  cr_assert_eq(b[112 + 1 * 128 + 127], 0xa1);
  cr_assert_eq(b[112 + 2 * 128], 0x55);
  cr_assert_eq(b[112 + 3 * 128], 0xa3);
  drop(&f);
}

Test(args, whole_array_set_counts_every_element) {
  fixture f = make("f16[3] h", 100);
  uint16_t v[3] = {1, 2, 3};
  cr_assert_eq(gcl_args_set_element(f.args, 0, 1, &v[1], 2), GCL_OK);
  cr_assert_eq(gcl_args_set(f.args, 0, v, sizeof v), GCL_OK);
  cr_assert(gcl_args_is_set(f.args, 0));
  cr_assert_eq(gcl__args_unset_count(f.args), 0);
  cr_assert(!memcmp(buffer(f.args), v, 6));
  drop(&f);
}

/* A padded, nested C struct described with libffi. */
struct inner { int16_t a; double b; };
struct outer { int8_t c; struct inner in; uint8_t arr[3]; float f; };

Test(args, libffi_struct_with_padding_and_nesting) {
  fixture f = make("i32 k, struct{i8, struct{i16, f64}, u8[3], f32} s", 90);
  ffi_type *inner_el[] = {&ffi_type_sint16, &ffi_type_double, NULL};
  ffi_type inner = {0, 0, FFI_TYPE_STRUCT, inner_el};
  ffi_type *outer_el[] = {&ffi_type_sint8, &inner, &ffi_type_uint8, &ffi_type_uint8,
                          &ffi_type_uint8, &ffi_type_float, NULL};
  ffi_type outer = {0, 0, FFI_TYPE_STRUCT, outer_el};
  struct outer v;
  memset(&v, 0, sizeof v);
  v.c = 3, v.in.a = -7, v.in.b = 2.25, v.arr[0] = 1, v.arr[2] = 9, v.f = 0.5f;
  cr_assert_eq(gcl_args_set_ffi(f.args, 1, &outer, &v), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(outer.size, 0, "the caller's libffi type must not be modified");
  size_t off;
  gcl_layout_param(f.layout, 1, &off, NULL, NULL);
  cr_assert_eq(off, 8);
  cr_assert_eq(gcl_args_set_i32(f.args, 0, 1), GCL_OK);
  cr_assert(!memcmp(buffer(f.args) + off, &v, sizeof v));
  /* an initialized type (as after ffi_prep_cif) matches too */
  size_t offs[6];
  cr_assert_eq(ffi_get_struct_offsets(FFI_DEFAULT_ABI, &outer, offs), FFI_OK);
  cr_assert_eq(gcl_args_set_ffi(f.args, 1, &outer, &v), GCL_OK, "%s", gcl_last_error());
  /* members in another order move offsets: refused, value kept */
  ffi_type *bad_el[] = {&ffi_type_sint8, &inner, &ffi_type_float, &ffi_type_uint8,
                        &ffi_type_uint8, &ffi_type_uint8, NULL};
  ffi_type bad = {0, 0, FFI_TYPE_STRUCT, bad_el};
  struct outer w;
  memset(&w, 0xee, sizeof w);
  cr_assert_eq(gcl_args_set_ffi(f.args, 1, &bad, &w), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_str_eq(gcl_last_error(), "parameter 1 's' ('struct{i8, struct{i16, f64}, u8[3], f32}'): "
                   "the libffi type does not match: size 4 align 4, expected size 1 align 1 for 'u8'");
  /* a scalar where a struct is expected; a struct of the wrong size */
  cr_assert_eq(gcl_args_set_ffi(f.args, 1, &ffi_type_double, &w), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_eq(gcl_args_set_ffi(f.args, 1, &inner, &w), GCL_ERROR_TYPE_MISMATCH);
  cr_assert(strstr(gcl_last_error(), "size 16 align 8, expected size 32 align 8") != NULL, "%s",
            gcl_last_error());
  cr_assert(!memcmp(buffer(f.args) + off, &v, sizeof v));
  cr_assert_eq(gcl_args_set_ffi(f.args, 0, &ffi_type_sint32, &v.c), GCL_OK);
  cr_assert_eq(gcl_args_set_ffi(f.args, 0, &ffi_type_float, &v.f), GCL_OK); /* same shape */
  cr_assert_eq(gcl_args_set_ffi(f.args, 0, &ffi_type_sint16, &v.c), GCL_ERROR_TYPE_MISMATCH);
  drop(&f);
}

Test(args, libffi_member_offsets_are_compared) {
  fixture f = make("struct{i8, f64} s", 90);
  ffi_type *el[] = {&ffi_type_sint8, &ffi_type_sint32, &ffi_type_double, NULL}; /* also 16 B */
  ffi_type st = {0, 0, FFI_TYPE_STRUCT, el};
  unsigned char v[16] = {0};
  cr_assert_eq(gcl_args_set_ffi(f.args, 0, &st, v), GCL_ERROR_TYPE_MISMATCH);
  cr_assert(strstr(gcl_last_error(), "libffi member 1 is at offset 4, expected 8") != NULL, "%s",
            gcl_last_error());
  cr_assert(!gcl_args_is_set(f.args, 0));
  drop(&f);
}

Test(args, libffi_over_aligned_members) {
  fixture f = make("struct{i32, tensormap, u8} s", 90);
  ffi_type map = {128, 128, FFI_TYPE_STRUCT, (ffi_type *[]){&ffi_type_uint8, NULL}};
  ffi_type *el[] = {&ffi_type_sint32, &map, &ffi_type_uint8, NULL};
  ffi_type st = {0, 0, FFI_TYPE_STRUCT, el};
  static _Alignas(128) unsigned char v[384];
  memset(v, 0x3c, sizeof v);
  cr_assert_eq(gcl_args_set_ffi(f.args, 0, &st, v), GCL_OK, "%s", gcl_last_error());
  cr_assert(!memcmp(buffer(f.args) + 112, v, 384));
  drop(&f);
}

Test(args, raw_layouts_take_any_value_of_the_right_size) {
  size_t offs[] = {0, 8, 16}, sizes[] = {4, 8, 12};
  gcl_layout *l = NULL;
  gcl_args *a = NULL;
  cr_assert_eq(gcl_layout_create_raw(3, offs, sizes, 90, &l), GCL_OK);
  cr_assert_eq(gcl_args_create(l, &a), GCL_OK);
  cr_assert_eq(gcl_args_set_f32(a, 0, 1.5f), GCL_OK);
  cr_assert_eq(gcl_args_set_i32(a, 0, 7), GCL_OK);
  cr_assert_eq(gcl_args_set_u64(a, 0, 7), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_eq(gcl_args_set_ptr(a, 1, 0x1001), GCL_OK); /* raw: nothing known about alignment */
  cr_assert_eq(gcl_args_set_ptr(a, 2, 0x1000), GCL_ERROR_TYPE_MISMATCH);
  ffi_type *el[] = {&ffi_type_float, &ffi_type_float, &ffi_type_float, NULL};
  ffi_type st = {0, 0, FFI_TYPE_STRUCT, el};
  float v[3] = {1, 2, 3};
  cr_assert_eq(gcl_args_set_ffi(a, 2, &st, v), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_ffi(a, 2, &ffi_type_double, v), GCL_ERROR_TYPE_MISMATCH);
  const unsigned char *b = buffer(a);
  int32_t k;
  memcpy(&k, b, 4);
  cr_assert_eq(k, 7);
  cr_assert(!memcmp(b + 16, v, 12));
  gcl_args_destroy(a);
  gcl_layout_destroy(l);
}

static int released[4];
static void count_release(void *owner) { released[(intptr_t)owner]++; }

Test(args, owners_are_released_exactly_once) {
  memset(released, 0, sizeof released);
  fixture f = make("f32* a, const void* b", 90);
  gcl_param_info info;
  int dev = 5;
  cr_assert_eq(gcl_args_restrict_device(f.args, 2), GCL_OK);
  cr_assert_eq(gcl__args_pointer_field(f.args, PF(f.args, 1), "test", &info, &dev), GCL_OK);
  cr_assert_eq(dev, 2);
  cr_assert(info.is_const);
  gcl__args_store_field_pointer(f.args, PF(f.args, 0), 0x100, count_release, (void *)(intptr_t)1);
  cr_assert_eq(released[1], 0);
  gcl__args_store_field_pointer(f.args, PF(f.args, 0), 0x200, count_release, (void *)(intptr_t)2);
  cr_assert_eq(released[1], 1); /* overwritten by another tensor */
  cr_assert_eq(gcl_args_set_ptr(f.args, 0, 0x300), GCL_OK);
  cr_assert_eq(released[2], 1); /* overwritten by a plain address */
  gcl__args_store_field_pointer(f.args, PF(f.args, 1), 0x400, count_release, (void *)(intptr_t)3);
  cr_assert_eq(gcl_args_set_ptr(f.args, 1, 0x401), GCL_OK);
  cr_assert_eq(released[3], 1);
  gcl__args_store_field_pointer(f.args, PF(f.args, 1), 0x500, count_release, (void *)(intptr_t)3);
  uint64_t raw = 0x600;
  cr_assert_eq(gcl_args_set(f.args, 1, &raw, 7), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(released[3], 1); /* a failed set keeps the owner */
  drop(&f);
  cr_assert_eq(released[1], 1);
  cr_assert_eq(released[2], 1);
  cr_assert_eq(released[3], 2); /* destroy released the last one */
  gcl_args_destroy(NULL);
}

Test(args, pointer_param_rejects_by_value_slots) {
  fixture f = make("u64 n", 90);
  gcl_param_info info;
  int dev;
  cr_assert_eq(gcl__args_pointer_field(f.args, PF(f.args, 0), "test", &info, &dev), GCL_ERROR_TYPE_MISMATCH);
  cr_assert(strstr(gcl_last_error(), "parameter 0 'n'") != NULL);
  cr_assert_eq(gcl__args_pointer_field(f.args, PF(f.args, 1), "test", &info, &dev), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_restrict_device(f.args, -2), GCL_ERROR_INVALID_ARGUMENT);
  drop(&f);
}

Test(args, no_parameters) {
  fixture f = make("", 90);
  const void *d = NULL;
  size_t s = 9;
  cr_assert_eq(gcl_args_buffer(f.args, &d, &s), GCL_OK);
  cr_assert_eq(s, 0);
  drop(&f);
}

/* Argument errors name the argument and the value. */
Test(args, bad_arguments_are_named) {
  fixture f = make("f32* x, u64 n", 90);
  cr_assert_eq(gcl_args_restrict_device(f.args, -2), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "device_id -2") != NULL, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_restrict_device(f.args, 3), GCL_OK);
  cr_assert_eq(gcl_layout_field(f.layout, "n", NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "out is NULL") != NULL, "%s", gcl_last_error());
  const void *data = NULL;
  cr_assert_eq(gcl_args_buffer(f.args, &data, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "gcl_args_buffer: size is NULL");
  cr_assert_null(data);
  drop(&f);
}
