/* The bad-input matrix: every public function given NULL handles and outputs, out-of-range
 * indices, wrong sizes, unset arguments, oversize layouts, malformed modules and unacceptable
 * tensors. Each case asserts the status, that the message names the problem, and that nothing
 * changed: outputs keep their sentinel, argument buffers keep every byte, the fake driver saw no
 * launch and holds no library. Runs against libfakecuda.so so that the driver half is covered
 * on the CPU too; ASan/LSan (CI) check that no failing path leaks. */
#include "fakecuda_test.h"

#include <ctype.h>
#include <ffi.h>
#include <stdio.h>

#include "args_internal.h"

#include "gcl_public_api.h" /* generated from the headers by tests/abi/public_api.sh */
#include "../common/tmap_field.h"

static bool is_public(const char *name, size_t n) {
  for (size_t i = 0; i < sizeof gcl_public_api / sizeof *gcl_public_api; i++)
    if (strlen(gcl_public_api[i]) == n && memcmp(gcl_public_api[i], name, n) == 0) return true;
  return false;
}

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Every gcl_ identifier a message names is a public function: no gcl__ helper, no internal
 * name, no function that does not exist. */
static void assert_names_public(const char *call, const char *msg) {
  for (const char *p = msg; (p = strstr(p, "gcl_")) != NULL;) {
    size_t n = 0;
    while (ident_char(p[n])) n++;
    if (p == msg || !ident_char(p[-1]))
      cr_assert(is_public(p, n), "%s: the message names '%.*s', not a public function: %s", call,
                (int)n, p, msg);
    p += n;
  }
}

/* call must fail with status and a message containing needle that names only public functions. */
#define FAILS(call, status, needle)                                                               \
  do {                                                                                            \
    gcl_status fails_s = (call);                                                                  \
    cr_assert_eq(fails_s, (status), "%s: expected %s, got %s: %s", #call, gcl_status_name(status), \
                 gcl_status_name(fails_s), gcl_last_error());                                     \
    cr_assert(strstr(gcl_last_error(), (needle)) != NULL, "%s: message lacks \"%s\": %s", #call,   \
              (needle), gcl_last_error());                                                        \
    assert_names_public(#call, gcl_last_error());                                                 \
  } while (0)

/* call must fail with GCL_ERROR_INVALID_ARGUMENT and a message that starts with text: the one
 * style for NULL arguments and bad indexes, "fn: name is NULL", "fn: index I out of range: ...". */
#define SAYS(call, text)                                                                          \
  do {                                                                                            \
    FAILS(call, GCL_ERROR_INVALID_ARGUMENT, text);                                                \
    cr_assert(strncmp(gcl_last_error(), (text), strlen(text)) == 0,                               \
              "%s: expected the message to start \"%s\": %s", #call, (text), gcl_last_error());   \
  } while (0)

#define SENTINEL ((void *)0x5e17)

/* maps 0, src 1, dst 2, n 3, tile 4, k 5, d 6 */
#define SIG "grid_constant tensormap[4] maps, const f32* align(16) src, f32* dst, u64 n, " \
            "struct{i32,i32,f32} tile, i32 k, f64 d"

typedef struct fixture {
  gcl_signature *sig;
  gcl_layout *layout;
  gcl_args *args;
  unsigned char snapshot[1024];
  size_t size;
} fixture;

static fixture fx;

static void setup(void) {
  fake_use();
  cr_assert_eq(gcl_signature_parse(SIG, &fx.sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_layout_create(fx.sig, 90, &fx.layout), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(fx.layout, &fx.args), GCL_OK);
  fx.size = gcl_layout_size(fx.layout);
  cr_assert_leq(fx.size, sizeof fx.snapshot);
  /* Some bytes already set, so that "unchanged" means more than "still zero". */
  cr_assert_eq(gcl_args_set_u64(fx.args, 3, 0x1122334455667788ull), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(fx.args, 2, 0x7f0000000040ull), GCL_OK);
  memcpy(fx.snapshot, gcl__args_data(fx.args), fx.size);
}

static void teardown(void) {
  gcl_args_destroy(fx.args);
  gcl_layout_destroy(fx.layout);
  gcl_signature_destroy(fx.sig);
  memset(&fx, 0, sizeof fx);
}

static void assert_args_unchanged(void) {
  cr_assert(memcmp(fx.snapshot, gcl__args_data(fx.args), fx.size) == 0, "args bytes changed");
  cr_assert(!gcl_args_is_set(fx.args, 1), "src became set");
  cr_assert(gcl_args_is_set(fx.args, 3), "n became unset");
}

TestSuite(badinput, .init = setup, .fini = teardown);

/* --- signatures -------------------------------------------------------------------------------- */

Test(badinput, signature_parse) {
  gcl_signature *s = SENTINEL;
  FAILS(gcl_signature_parse(NULL, &s), GCL_ERROR_INVALID_ARGUMENT, "text");
  FAILS(gcl_signature_parse("f32 a", NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  static const char *const bad[] = {
      "f33 a", "f32* const", "bytes(0) b", "struct{} s", "f32 a,", "tensormap align(3) m",
      "grid_constant f32* p", "f32 align(2) x", "i32 a b", "u8[", "bytes(-1) b", "(", "f32 const",
      "struct{i32,} s", "tensormap[0] m", "const f32 x", "ptr*", "f32 a,,f32 b", "f32 1a",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    gcl_status st = gcl_signature_parse(bad[i], &s);
    cr_assert_eq(st, GCL_ERROR_PARSE, "\"%s\": %s: %s", bad[i], gcl_status_name(st), gcl_last_error());
    cr_assert(strstr(gcl_last_error(), "col "), "\"%s\": no column in \"%s\"", bad[i], gcl_last_error());
    cr_assert_eq(s, SENTINEL, "\"%s\": out written on failure", bad[i]);
  }
}

Test(badinput, signature_accessors) {
  gcl_param_info info, before;
  memset(&info, 0xAB, sizeof info);
  before = info;
  FAILS(gcl_signature_param(fx.sig, 7, &info), GCL_ERROR_INVALID_ARGUMENT, "7");
  FAILS(gcl_signature_param(NULL, 0, &info), GCL_ERROR_INVALID_ARGUMENT, "sig");
  FAILS(gcl_signature_param(fx.sig, 0, NULL), GCL_ERROR_INVALID_ARGUMENT, "info");
  cr_assert(memcmp(&info, &before, sizeof info) == 0);
  cr_assert_eq(gcl_signature_count(NULL), 0);
  char buf[8];
  size_t needed = 0;
  FAILS(gcl_signature_format(NULL, buf, sizeof buf, &needed), GCL_ERROR_INVALID_ARGUMENT, "sig");
  FAILS(gcl_signature_format(fx.sig, NULL, 16, NULL), GCL_ERROR_INVALID_ARGUMENT, "buf");
  gcl_signature_destroy(NULL);
}

/* The format functions have snprintf's contract: asked for their size (cap 0) or given a buffer
 * too small, they succeed, write what fits (NUL-terminated), tell the full length, and leave
 * gcl_last_error alone. */
Test(badinput, format_functions_size_like_snprintf) {
  gcl_signature *none = NULL;
  cr_assert_eq(gcl_signature_parse("i8 [", &none), GCL_ERROR_PARSE); /* a message to keep */
  char before[512];
  snprintf(before, sizeof before, "%s", gcl_last_error());
  size_t needed = 0;
  cr_assert_eq(gcl_signature_format(fx.sig, NULL, 0, &needed), GCL_OK);
  cr_assert_gt(needed, 8);
  char full[512], cut[8];
  memset(cut, 'x', sizeof cut);
  cr_assert_eq(gcl_signature_format(fx.sig, cut, sizeof cut, &needed), GCL_OK);
  cr_assert_eq(gcl_signature_format(fx.sig, full, sizeof full, NULL), GCL_OK);
  cr_assert_eq(strlen(full), needed);
  cr_assert_eq(cut[sizeof cut - 1], '\0', "a cut text is NUL-terminated");
  cr_assert(strncmp(cut, full, sizeof cut - 1) == 0, "the cut text is the start: %s / %s", cut, full);
  gcl_field f;
  cr_assert_eq(gcl_layout_field(fx.layout, "tile", &f), GCL_OK);
  cr_assert_eq(gcl_layout_field_path(fx.layout, &f, NULL, 0, &needed), GCL_OK);
  cr_assert_eq(needed, 4);
  char p2[3];
  cr_assert_eq(gcl_layout_field_path(fx.layout, &f, p2, sizeof p2, &needed), GCL_OK);
  cr_assert_str_eq(p2, "ti");
  cr_assert_str_eq(gcl_last_error(), before, "a size query changed gcl_last_error");
  FAILS(gcl_layout_field_path(fx.layout, &f, NULL, 4, &needed), GCL_ERROR_INVALID_ARGUMENT, "buf");
}

Test(badinput, enum_names_never_fail) {
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_SCALAR), "scalar");
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_POINTER), "pointer");
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_TENSORMAP), "tensormap");
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_BYTES), "bytes");
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_STRUCT), "struct");
  cr_assert_str_eq(gcl_param_kind_name(GCL_PARAM_ARRAY), "array");
  cr_assert_str_eq(gcl_param_kind_name((gcl_param_kind)99), "unknown");
  cr_assert_str_eq(gcl_format_name(GCL_IMAGE_PTX), "ptx");
  cr_assert_str_eq(gcl_format_name((gcl_format)0), "unknown");
}

/* --- layouts --------------------------------------------------------------------------------- */

Test(badinput, layout_create) {
  gcl_layout *l = SENTINEL;
  FAILS(gcl_layout_create(NULL, 90, &l), GCL_ERROR_INVALID_ARGUMENT, "sig");
  FAILS(gcl_layout_create(fx.sig, 90, NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  FAILS(gcl_layout_create(fx.sig, 42, &l), GCL_ERROR_INVALID_ARGUMENT, "42");
  FAILS(gcl_layout_create(fx.sig, 1000, &l), GCL_ERROR_INVALID_ARGUMENT, "1000");
  gcl_signature *big = NULL;
  /* 256 tensor maps from offset 112 end at 32880: 116 bytes over on sm_90 */
  cr_assert_eq(gcl_signature_parse("tensormap[256] maps", &big), GCL_OK);
  FAILS(gcl_layout_create(big, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE, "bytes over");
  cr_assert(strstr(gcl_last_error(), "'maps'"), "%s", gcl_last_error());
  gcl_signature_destroy(big);
  cr_assert_eq(gcl_signature_parse("bytes(32765) b", &big), GCL_OK);
  FAILS(gcl_layout_create(big, 100, &l), GCL_ERROR_LAYOUT_TOO_LARGE, "32765");
  gcl_signature_destroy(big);
  cr_assert_eq(l, SENTINEL);
}

Test(badinput, layout_create_raw) {
  gcl_layout *l = SENTINEL;
  const size_t off_overlap[] = {0, 4}, size_overlap[] = {8, 8};
  gcl_status s = gcl_layout_create_raw(2, off_overlap, size_overlap, 90, &l);
  cr_assert_eq(s, GCL_ERROR_INVALID_ARGUMENT, "overlap: %s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "overlap"), "%s", gcl_last_error());
  /* (The header says "end within GCL_PARAM_LIMIT"; layout.c allows 128 bytes more.) */
  const size_t off_end[] = {40000}, size_end[] = {8};
  FAILS(gcl_layout_create_raw(1, off_end, size_end, 90, &l), GCL_ERROR_LAYOUT_TOO_LARGE, "40000");
  const size_t off_ok[] = {0}, size_zero[] = {0};
  FAILS(gcl_layout_create_raw(1, off_ok, size_zero, 90, &l), GCL_ERROR_INVALID_ARGUMENT, "size 0");
  FAILS(gcl_layout_create_raw(1, off_ok, size_end, 42, &l), GCL_ERROR_INVALID_ARGUMENT, "42");
  FAILS(gcl_layout_create_raw(1, NULL, size_end, 90, &l), GCL_ERROR_INVALID_ARGUMENT, "NULL");
  FAILS(gcl_layout_create_raw(1, off_end, NULL, 90, &l), GCL_ERROR_INVALID_ARGUMENT, "NULL");
  FAILS(gcl_layout_create_raw(0, NULL, NULL, 90, NULL), GCL_ERROR_INVALID_ARGUMENT, "NULL");
  cr_assert_eq(l, SENTINEL);
}

Test(badinput, layout_accessors) {
  size_t off = 1, size = 2, align = 3;
  FAILS(gcl_layout_param(fx.layout, 7, &off, &size, &align), GCL_ERROR_INVALID_ARGUMENT, "7");
  FAILS(gcl_layout_param(NULL, 0, &off, &size, &align), GCL_ERROR_INVALID_ARGUMENT, "layout");
  cr_assert(off == 1 && size == 2 && align == 3);
  gcl_field f;
  FAILS(gcl_layout_param_field(fx.layout, 7, &f), GCL_ERROR_INVALID_ARGUMENT, "7");
  FAILS(gcl_layout_field(fx.layout, "nope", &f), GCL_ERROR_NOT_FOUND, "nope");
  cr_assert_eq(gcl_layout_size(NULL), 0);
  cr_assert_eq(gcl_layout_count(NULL), 0);
  gcl_layout_destroy(NULL);
}

/* --- argument buffers ---------------------------------------------------------------------- */

Test(badinput, args_create_and_buffer) {
  gcl_args *a = SENTINEL;
  FAILS(gcl_args_create(NULL, &a), GCL_ERROR_INVALID_ARGUMENT, "layout");
  FAILS(gcl_args_create(fx.layout, NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  cr_assert_eq(a, SENTINEL);
  const void *data = SENTINEL;
  size_t size = 77;
  FAILS(gcl_args_buffer(fx.args, &data, &size), GCL_ERROR_UNSET_ARGUMENT, "'maps'");
  cr_assert(data == SENTINEL && size == 77);
  FAILS(gcl_args_buffer(NULL, &data, &size), GCL_ERROR_INVALID_ARGUMENT, "args");
  cr_assert(!gcl_args_is_set(NULL, 0));
  cr_assert(!gcl_args_is_set(fx.args, 99));
  gcl_args_destroy(NULL);
  assert_args_unchanged();
}

Test(badinput, args_set_raw) {
  uint64_t v = 5;
  FAILS(gcl_args_set(fx.args, 99, &v, 8), GCL_ERROR_INVALID_ARGUMENT, "99");
  FAILS(gcl_args_set(fx.args, 3, &v, 4), GCL_ERROR_INVALID_ARGUMENT, "'n'");
  FAILS(gcl_args_set(fx.args, 3, &v, 4), GCL_ERROR_INVALID_ARGUMENT, "4");
  FAILS(gcl_args_set(fx.args, 3, NULL, 8), GCL_ERROR_INVALID_ARGUMENT, "value");
  FAILS(gcl_args_set(NULL, 3, &v, 8), GCL_ERROR_INVALID_ARGUMENT, "args");
  unsigned char map[128] = {1};
  FAILS(gcl_args_set_element(fx.args, 0, 4, map, 128), GCL_ERROR_INVALID_ARGUMENT, "4");
  FAILS(gcl_args_set_element(fx.args, 0, 0, map, 64), GCL_ERROR_INVALID_ARGUMENT, "64");
  FAILS(gcl_args_set_element(fx.args, 3, 0, &v, 8), GCL_ERROR_INVALID_ARGUMENT, "'n'");
  FAILS(gcl_args_set_by_name(fx.args, "nope", &v, 8), GCL_ERROR_NOT_FOUND, "nope");
  FAILS(gcl_args_set_by_name(fx.args, NULL, &v, 8), GCL_ERROR_INVALID_ARGUMENT, "path is NULL");
  FAILS(gcl_args_set_by_name(fx.args, "n", &v, 2), GCL_ERROR_INVALID_ARGUMENT, "'n'");
  assert_args_unchanged();
}

Test(badinput, args_typed_setters) {
  FAILS(gcl_args_set_i32(fx.args, 3, 1), GCL_ERROR_TYPE_MISMATCH, "'n'");
  FAILS(gcl_args_set_u32(fx.args, 5, 1), GCL_ERROR_TYPE_MISMATCH, "'k'");
  FAILS(gcl_args_set_i64(fx.args, 6, 1), GCL_ERROR_TYPE_MISMATCH, "'d'");
  FAILS(gcl_args_set_u64(fx.args, 4, 1), GCL_ERROR_TYPE_MISMATCH, "'tile'");
  FAILS(gcl_args_set_f32(fx.args, 6, 1.0f), GCL_ERROR_TYPE_MISMATCH, "'d'");
  FAILS(gcl_args_set_f64(fx.args, 0, 1.0), GCL_ERROR_TYPE_MISMATCH, "'maps'");
  FAILS(gcl_args_set_f32(fx.args, 1, 1.0f), GCL_ERROR_TYPE_MISMATCH, "'src'");
  FAILS(gcl_args_set_i32(fx.args, 99, 1), GCL_ERROR_INVALID_ARGUMENT, "99");
  FAILS(gcl_args_set_ptr(fx.args, 3, 0x1000), GCL_ERROR_TYPE_MISMATCH, "'n'");
  gcl_status s = gcl_args_set_ptr(fx.args, 1, 0x7f0000000004ull); /* src is align(16) */
  cr_assert_neq(s, GCL_OK);
  cr_assert(strstr(gcl_last_error(), "'src'") && strstr(gcl_last_error(), "16"), "%s", gcl_last_error());
  int32_t i = 1;
  FAILS(gcl_args_set_ffi(fx.args, 4, &ffi_type_sint32, &i), GCL_ERROR_TYPE_MISMATCH, "'tile'");
  FAILS(gcl_args_set_ffi(fx.args, 4, NULL, &i), GCL_ERROR_INVALID_ARGUMENT, "type");
  FAILS(gcl_args_set_ffi(fx.args, 5, &ffi_type_sint32, NULL), GCL_ERROR_INVALID_ARGUMENT, "value");
  FAILS(gcl_args_restrict_device(fx.args, -2), GCL_ERROR_INVALID_ARGUMENT, "device");
  assert_args_unchanged();
}

/* --- tensors --------------------------------------------------------------------------------- */

static int deleted;
static void count_delete(DLManagedTensorVersioned *t) { (void)t, deleted++; }
static void count_delete_legacy(DLManagedTensor *t) { (void)t, deleted++; }

Test(badinput, tensors_rejected_into_pointers) {
  fake_tensor f;
  fake_tensor_init(&f, 0x7f0000001000ull, 4, 8);
  DLTensor t = f.t;
  t.device.device_type = kDLCPU;
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "'src'");
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "device");
  t = f.t;
  t.dtype = (DLDataType){kDLFloat, 16, 1};
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "'src'");
  t = f.t;
  t.byte_offset = 4; /* src is align(16) */
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "16");
  t = f.t;
  f.shape[0] = -3;
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "-3");
  f.shape[0] = 4;
  t.ndim = -1;
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "ndim");
  t = f.t;
  FAILS(gcl_args_set_dltensor_flags(fx.args, 2, &t, DLPACK_FLAG_BITMASK_READ_ONLY), GCL_ERROR_TENSOR, "'dst'");
  FAILS(gcl_args_set_dltensor(fx.args, 3, &t), GCL_ERROR_TYPE_MISMATCH, "'n'");
  FAILS(gcl_args_set_dltensor(fx.args, 1, NULL), GCL_ERROR_INVALID_ARGUMENT, "t");
  FAILS(gcl_args_set_dltensor(fx.args, 99, &t), GCL_ERROR_INVALID_ARGUMENT, "99");
  cr_assert_eq(gcl_args_restrict_device(fx.args, 0), GCL_OK);
  t.device.device_id = 1;
  FAILS(gcl_args_set_dltensor(fx.args, 1, &t), GCL_ERROR_TENSOR, "device");
  cr_assert_eq(gcl_args_restrict_device(fx.args, -1), GCL_OK);
  assert_args_unchanged();
}

Test(badinput, taken_tensors_are_deleted_once_on_failure) {
  fake_tensor f;
  fake_tensor_init(&f, 0x7f0000001000ull, 4, 8);
  DLManagedTensorVersioned mv = {.version = {2, 0}, .deleter = count_delete, .dl_tensor = f.t};
  deleted = 0;
  FAILS(gcl_args_take_dlpack(fx.args, 1, &mv), GCL_ERROR_TENSOR_VERSION, "2");
  cr_assert_eq(deleted, 1);
  mv.version = (DLPackVersion){1, 3};
  mv.dl_tensor.device.device_type = kDLCPU;
  FAILS(gcl_args_take_dlpack(fx.args, 1, &mv), GCL_ERROR_TENSOR, "device");
  cr_assert_eq(deleted, 2);
  DLManagedTensor ml = {.dl_tensor = f.t, .deleter = count_delete_legacy};
  ml.dl_tensor.byte_offset = 8;
  FAILS(gcl_args_take_dlpack_legacy(fx.args, 1, &ml), GCL_ERROR_TENSOR, "16");
  cr_assert_eq(deleted, 3);
  FAILS(gcl_args_take_dlpack(fx.args, 1, NULL), GCL_ERROR_INVALID_ARGUMENT, "t");
  assert_args_unchanged();
}

/* --- tensor maps ---------------------------------------------------------------------------- */

Test(badinput, tensormap_check) {
  fake_tensor f;
  fake_tensor_init(&f, 0x7f0000001000ull, 64, 64);
  gcl_tensormap_options o = fake_tmap_options();
  gcl_tensormap_desc d, before;
  memset(&d, 0x3C, sizeof d);
  before = d;
  FAILS(gcl_tensormap_check(NULL, &o, &d), GCL_ERROR_INVALID_ARGUMENT, "t");
  FAILS(gcl_tensormap_check(&f.t, NULL, &d), GCL_ERROR_INVALID_ARGUMENT, "options");
  o.swizzle = 9;
  FAILS(gcl_tensormap_check(&f.t, &o, &d), GCL_ERROR_INVALID_ARGUMENT, "9");
  o = fake_tmap_options();
  o.box[0] = 0;
  FAILS(gcl_tensormap_check(&f.t, &o, &d), GCL_ERROR_TENSOR, "box");
  o = fake_tmap_options();
  f.t.byte_offset = 4;
  FAILS(gcl_tensormap_check(&f.t, &o, &d), GCL_ERROR_TENSOR, "16");
  f.t.byte_offset = 0;
  f.strides[1] = 2;
  FAILS(gcl_tensormap_check(&f.t, &o, &d), GCL_ERROR_TENSOR, "contiguous");
  f.strides[1] = 1;
  f.t.device.device_type = kDLCPU;
  FAILS(gcl_tensormap_check(&f.t, &o, &d), GCL_ERROR_TENSOR, "tensor");
  cr_assert(memcmp(&d, &before, sizeof d) == 0, "desc written on failure");
}

Test(badinput, tensormap_into_args) {
  gcl_context *ctx = NULL;
  uint64_t buf = 0;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_mem_alloc(ctx, 64 * 64 * 4, &buf), GCL_OK);
  fake_tensor f;
  fake_tensor_init(&f, buf, 64, 64);
  gcl_tensormap_options o = fake_tmap_options();
  FAILS(gcl_args_set_tensormaps(fx.args, ctx, TMAP_FIELD(fx.args, 0, 3), 2, (const DLTensor *const[]){&f.t, &f.t}, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT, "n = 2 maps from here, but only 1");
  FAILS(gcl_args_set_tensormaps(fx.args, ctx, TMAP_FIELD(fx.args, 3, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TYPE_MISMATCH, "'n'");
  FAILS(gcl_args_set_tensormaps(fx.args, NULL, TMAP_FIELD(fx.args, 0, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  FAILS(gcl_args_set_tensormaps(NULL, ctx, TMAP_FIELD(NULL, 0, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_INVALID_ARGUMENT, "args");
  f.t.device.device_id = 1;
  FAILS(gcl_args_set_tensormaps(fx.args, ctx, TMAP_FIELD(fx.args, 0, 0), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR, "device");
  f.t.device.device_id = 0;
  f.t.byte_offset = 8;
  FAILS(gcl_args_set_tensormaps(fx.args, ctx, TMAP_FIELD(fx.args, 0, 1), 1, (const DLTensor *const[]){&f.t}, &o, 1, 0), GCL_ERROR_TENSOR, "field 'maps[1]'");
  unsigned char map[128] __attribute__((aligned(64)));
  memset(map, 0x99, sizeof map);
  FAILS(gcl_tensormap_encode(ctx, &f.t, &o, map), GCL_ERROR_TENSOR, "16");
  FAILS(gcl_tensormap_encode(ctx, &f.t, &o, NULL), GCL_ERROR_INVALID_ARGUMENT, "map");
  FAILS(gcl_tensormap_encode(NULL, &f.t, &o, map), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  for (int i = 0; i < 128; i++) cr_assert_eq(map[i], 0x99);
  cr_assert_eq(fakecuda_calls("cuTensorMapEncodeTiled"), 0, "a rejected tensor reached the driver");
  assert_args_unchanged();
  cr_assert_eq(gcl_mem_free(ctx, buf), GCL_OK);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* --- images -------------------------------------------------------------------------------- */

static void *read_kernel(const char *name, size_t *size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, name);
  FILE *f = fopen(path, "rb");
  cr_assert(f != NULL, "missing %s (build the kernels)", path);
  static unsigned char buf[1 << 20];
  *size = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

Test(badinput, image_parse) {
  gcl_image *img = SENTINEL;
  size_t n = 0;
  const unsigned char *cubin = read_kernel("smoke.sm_90.cubin", &n);
  static const char garbage[] = "this is not a module";
  FAILS(gcl_image_parse(garbage, sizeof garbage, 0, &img), GCL_ERROR_BAD_IMAGE, "not a cubin");
  FAILS(gcl_image_parse(cubin, 100, 0, &img), GCL_ERROR_BAD_IMAGE, "past the end");
  FAILS(gcl_image_parse(cubin, 3, 0, &img), GCL_ERROR_BAD_IMAGE, "3 bytes");
  FAILS(gcl_image_parse(cubin, 0, 0, &img), GCL_ERROR_BAD_IMAGE, "0 bytes");
  gcl_status s = gcl_image_parse(NULL, 16, 0, &img);
  cr_assert(s == GCL_ERROR_INVALID_ARGUMENT || s == GCL_ERROR_BAD_IMAGE, "%s", gcl_status_name(s));
  FAILS(gcl_image_parse(cubin, n, 0, NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  size_t fn = 0;
  const unsigned char *fatbin = read_kernel("smoke.fatbin", &fn);
  unsigned char *cut = malloc(fn / 2);
  memcpy(cut, fatbin, fn / 2);
  FAILS(gcl_image_parse(cut, fn / 2, 90, &img), GCL_ERROR_BAD_IMAGE, "past the end");
  free(cut);
  cr_assert_eq(img, SENTINEL);
}

Test(badinput, image_accessors) {
  size_t n = 0;
  const unsigned char *cubin = read_kernel("smoke.sm_90.cubin", &n);
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(cubin, n, 0, &img), GCL_OK, "%s", gcl_last_error());
  size_t count = gcl_image_kernel_count(img);
  gcl_image_kernel_info info;
  memset(&info, 0x11, sizeof info);
  gcl_image_kernel_info before = info;
  FAILS(gcl_image_kernel(img, count, &info), GCL_ERROR_INVALID_ARGUMENT, "out of range");
  FAILS(gcl_image_kernel(NULL, 0, &info), GCL_ERROR_INVALID_ARGUMENT, "img");
  cr_assert(memcmp(&info, &before, sizeof info) == 0);
  size_t off = 5, size = 6, align = 7;
  FAILS(gcl_image_param(img, count, 0, &off, &size, &align), GCL_ERROR_INVALID_ARGUMENT, "out of range");
  FAILS(gcl_image_param(img, 0, 99, &off, &size, &align), GCL_ERROR_INVALID_ARGUMENT, "99");
  cr_assert(off == 5 && size == 6 && align == 7);
  gcl_param_kind kind = GCL_PARAM_ARRAY;
  gcl_scalar scalar = GCL_SCALAR_F64;
  FAILS(gcl_image_param_type(img, 0, 99, &kind, &scalar), GCL_ERROR_INVALID_ARGUMENT, "99");
  FAILS(gcl_image_param_type(NULL, 0, 0, &kind, &scalar), GCL_ERROR_INVALID_ARGUMENT, "img");
  FAILS(gcl_image_param_type(img, 0, 0, &kind, &scalar), GCL_ERROR_NOT_FOUND, "no parameter types");
  cr_assert(kind == GCL_PARAM_ARRAY && scalar == GCL_SCALAR_F64);
  size_t idx = 3;
  FAILS(gcl_image_find_kernel(img, "nope", &idx), GCL_ERROR_NOT_FOUND, "nope");
  cr_assert_eq(idx, 3);
  gcl_image_destroy(img);
  gcl_image_destroy(NULL);
}

/* --- driver, contexts, memory, modules, kernels, launches --------------------------------- */

Test(badinput, devices_and_contexts) {
  gcl_device_info info;
  memset(&info, 0x22, sizeof info);
  FAILS(gcl_device_query(5, &info), GCL_ERROR_INVALID_ARGUMENT, "5");
  FAILS(gcl_device_query(-1, &info), GCL_ERROR_INVALID_ARGUMENT, "-1");
  cr_assert_eq((unsigned char)info.name[0], 0x22);
  gcl_context *ctx = SENTINEL;
  FAILS(gcl_context_create(1, &ctx), GCL_ERROR_INVALID_ARGUMENT, "1");
  cr_assert_eq(ctx, SENTINEL);
  FAILS(gcl_context_bind(NULL), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  uint64_t a = 9;
  FAILS(gcl_mem_alloc(NULL, 8, &a), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  FAILS(gcl_mem_free(NULL, 0), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  FAILS(gcl_context_synchronize(NULL), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  cr_assert_eq(a, 9);
  cr_assert_eq(gcl_context_device(NULL), -1);
  size_t count = 0;
  int archs[4];
  FAILS(gcl_nvrtc_archs(NULL, 4, &count), GCL_ERROR_INVALID_ARGUMENT, "archs");
  FAILS(gcl_nvrtc_archs(archs, 4, NULL), GCL_ERROR_INVALID_ARGUMENT, "count");
  FAILS(gcl_nvrtc_version(NULL, NULL), GCL_ERROR_INVALID_ARGUMENT, "major");
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  FAILS(gcl_mem_alloc(ctx, 8, NULL), GCL_ERROR_INVALID_ARGUMENT, "address");
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(badinput, modules) {
  gcl_context *ctx = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  gcl_module *mod = SENTINEL;
  static const char garbage[] = "not a module at all";
  FAILS(gcl_module_load_data(NULL, fake_ptx, sizeof fake_ptx, &mod), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  FAILS(gcl_module_load_data(ctx, NULL, 10, &mod), GCL_ERROR_INVALID_ARGUMENT, "data");
  FAILS(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  FAILS(gcl_module_load_data(ctx, garbage, sizeof garbage, &mod), GCL_ERROR_BAD_IMAGE, "not a cubin");
  size_t n = 0;
  const unsigned char *cubin = read_kernel("smoke.sm_90.cubin", &n);
  FAILS(gcl_module_load_data(ctx, cubin, 200, &mod), GCL_ERROR_BAD_IMAGE, "truncated");
  FAILS(gcl_module_load_file(ctx, "/nonexistent/k.cubin", &mod), GCL_ERROR_IO, "/nonexistent/k.cubin");
  FAILS(gcl_module_load_file(ctx, NULL, &mod), GCL_ERROR_INVALID_ARGUMENT, "path");
  FAILS(gcl_module_compile(ctx, NULL, "k.cu", NULL, 0, &mod), GCL_ERROR_INVALID_ARGUMENT, "source");
  FAILS(gcl_module_compile(ctx, "", "k.cu", NULL, 2, &mod), GCL_ERROR_INVALID_ARGUMENT, "options");
  const char *opts[] = {"-O3", NULL};
  FAILS(gcl_module_compile(ctx, "", "k.cu", opts, 2, &mod), GCL_ERROR_INVALID_ARGUMENT, "options[1]");
  cr_assert_eq(mod, SENTINEL);
  cr_assert_eq(fakecuda_calls("cuLibraryLoadData"), 0, "a rejected image reached the driver");
  cr_assert_str_eq(gcl_module_log(NULL), "");
  gcl_module_destroy(NULL);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(badinput, kernels_and_launches) {
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = SENTINEL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  FAILS(gcl_module_find_kernel(NULL, "k", NULL, &k), GCL_ERROR_INVALID_ARGUMENT, "mod");
  FAILS(gcl_module_find_kernel(mod, NULL, NULL, &k), GCL_ERROR_INVALID_ARGUMENT, "name");
  FAILS(gcl_module_find_kernel(mod, "", NULL, &k), GCL_ERROR_INVALID_ARGUMENT, "name");
  FAILS(gcl_module_find_kernel(mod, "k", NULL, NULL), GCL_ERROR_INVALID_ARGUMENT, "out");
  FAILS(gcl_module_find_kernel(mod, "k", "f33 x", &k), GCL_ERROR_PARSE, "'k'");
  cr_assert_eq(k, SENTINEL);
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  int v = 123;
  FAILS(gcl_kernel_attribute(k, (gcl_kernel_attr)99, &v), GCL_ERROR_INVALID_ARGUMENT, "99");
  FAILS(gcl_kernel_attribute(k, GCL_KERNEL_REGISTERS, NULL), GCL_ERROR_INVALID_ARGUMENT, "value");
  FAILS(gcl_kernel_attribute(NULL, GCL_KERNEL_REGISTERS, &v), GCL_ERROR_INVALID_ARGUMENT, "kernel");
  cr_assert_eq(v, 123);
  cr_assert_null(gcl_kernel_layout(NULL));
  gcl_args *args = NULL;
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &args), GCL_OK);
  gcl_launch_config c = {.grid = {4, 1, 1}, .block = {128, 1, 1}};
  FAILS(gcl_launch(k, &c, args), GCL_ERROR_UNSET_ARGUMENT, "'m'");
  unsigned char map[128] = {0};
  int8_t ch = 1;
  cr_assert_eq(gcl_args_set(args, 0, map, 128), GCL_OK);
  cr_assert_eq(gcl_args_set(args, 1, &ch, 1), GCL_OK);
  FAILS(gcl_launch(k, &c, args), GCL_ERROR_UNSET_ARGUMENT, "'out'");
  cr_assert_eq(gcl_args_set_ptr(args, 2, 0x7f0000000000ull), GCL_OK);
  FAILS(gcl_launch(NULL, &c, args), GCL_ERROR_INVALID_ARGUMENT, "kernel");
  FAILS(gcl_launch(k, NULL, args), GCL_ERROR_INVALID_ARGUMENT, "config");
  FAILS(gcl_launch(k, &c, NULL), GCL_ERROR_INVALID_ARGUMENT, "args");
  FAILS(gcl_launch(k, &c, fx.args), GCL_ERROR_INVALID_ARGUMENT, "parameters");
  c.block[0] = 2048;
  FAILS(gcl_launch(k, &c, args), GCL_ERROR_INVALID_CONFIG, "2048");
  c.block[0] = 128;
  c.cluster[0] = 3;
  FAILS(gcl_launch(k, &c, args), GCL_ERROR_INVALID_CONFIG, "cluster");
  c.cluster[0] = 0;
  c.shared_bytes = 1u << 20;
  FAILS(gcl_launch(k, &c, args), GCL_ERROR_INVALID_CONFIG, "shared");
  cr_assert_eq(fakecuda_launch_count(), 0, "a rejected launch reached the driver");
  FAILS(gcl_graph_set_args(NULL, 0, k, args), GCL_ERROR_INVALID_ARGUMENT, "g: expected a graph");
  gcl_args_destroy(args);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* --- one message style, naming the public function and its parameter ------------------------- */

static void no_delete(DLManagedTensorVersioned *t) { (void)t; }

Test(badinput, null_and_index_messages_name_the_public_function) {
  int32_t i = 0;
  uint64_t v = 0;
  DLTensor t = {0};
  SAYS(gcl_args_set_i32(fx.args, 9, 1), "parameter index 9 out of range: the layout has 7 parameters");
  SAYS(gcl_args_set_u32(fx.args, 7, 1), "parameter index 7 out of range");
  SAYS(gcl_args_set_i64(NULL, 0, 1), "gcl_args_set_field_scalar: args is NULL");
  SAYS(gcl_args_set_u64(NULL, 0, 1), "gcl_args_set_field_scalar: args is NULL");
  SAYS(gcl_args_set_f32(NULL, 0, 1), "gcl_args_set_field_scalar: args is NULL");
  SAYS(gcl_args_set_f64(fx.args, 70, 1), "parameter index 70 out of range");
  SAYS(gcl_args_set_i32(NULL, 0, 1), "gcl_args_set_field_scalar: args is NULL");
  SAYS(gcl_args_set(NULL, 0, &v, 8), "gcl_args_set_field: args is NULL");
  SAYS(gcl_args_set(fx.args, 8, &v, 8), "parameter index 8 out of range: the layout has 7 parameters");
  SAYS(gcl_args_set_element(NULL, 0, 0, &v, 8), "gcl_args_set_field: args is NULL");
  SAYS(gcl_args_set_element(fx.args, 9, 0, &v, 8), "parameter index 9 out of range");
  SAYS(gcl_args_set_by_name(NULL, "n", &v, 8), "gcl_args_set_field: args is NULL");
  SAYS(gcl_args_set_ptr(NULL, 1, 0x1000), "gcl_args_set_field_ptr: args is NULL");
  SAYS(gcl_args_set_ptr(fx.args, 7, 0x1000), "parameter index 7 out of range");
  SAYS(gcl_args_set_ffi(NULL, 5, &ffi_type_sint32, &i), "gcl_args_set_field_ffi: args is NULL");
  SAYS(gcl_args_set_ffi(fx.args, 5, NULL, &i), "gcl_args_set_field_ffi: type is NULL");
  SAYS(gcl_args_set_dltensor(NULL, 1, &t), "gcl_args_set_field_dltensor_flags: args is NULL");
  SAYS(gcl_args_set_dltensor(fx.args, 1, NULL), "gcl_args_set_field_dltensor_flags: t is NULL");
  SAYS(gcl_args_set_dltensor(fx.args, 12, &t), "parameter index 12 out of range");
  SAYS(gcl_args_set_dltensor_flags(NULL, 1, &t, 0), "gcl_args_set_field_dltensor_flags: args is NULL");
  DLManagedTensorVersioned mt = {.version = {DLPACK_MAJOR_VERSION, 0}, .deleter = no_delete};
  SAYS(gcl_args_take_dlpack(NULL, 1, &mt), "gcl_args_take_field_dlpack: args is NULL");
  SAYS(gcl_args_take_dlpack(fx.args, 1, NULL), "gcl_args_take_field_dlpack: t is NULL");
  SAYS(gcl_args_take_dlpack_legacy(fx.args, 1, NULL), "gcl_args_take_field_dlpack_legacy: t is NULL");
  SAYS(gcl_args_restrict_device(NULL, 0), "gcl_args_restrict_device: args is NULL");
  SAYS(gcl_args_buffer(NULL, NULL, NULL), "gcl_args_buffer: args is NULL");
  SAYS(gcl_args_create(NULL, NULL), "gcl_args_create: layout is NULL");
  SAYS(gcl_layout_param(fx.layout, 7, NULL, NULL, NULL), "gcl_layout_param: index 7 out of range: the layout has 7 parameters");
  SAYS(gcl_layout_param(NULL, 0, NULL, NULL, NULL), "gcl_layout_param: layout is NULL");
  SAYS(gcl_layout_param_field(fx.layout, 7, NULL), "gcl_layout_param_field: out is NULL");
  SAYS(gcl_layout_create(NULL, 90, NULL), "gcl_layout_create: sig is NULL");
  SAYS(gcl_signature_parse(NULL, NULL), "gcl_signature_parse: text is NULL");
  SAYS(gcl_tensormap_check(NULL, NULL, NULL), "gcl_tensormap_check: t is NULL");
  SAYS(gcl_file_read(NULL, NULL, NULL), "gcl_file_read: path is NULL");
  SAYS(gcl_image_kernel(NULL, 0, NULL), "gcl_image_kernel: img is NULL");
  SAYS(gcl_image_parse(NULL, 0, 0, NULL), "gcl_image_parse: data is NULL");
  assert_args_unchanged();
}

Test(badinput, a_struct_is_not_a_pointer) {
  FAILS(gcl_args_set_ptr(fx.args, 4, 0x1000), GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_field_ptr: parameter 4 'tile'");
  FAILS(gcl_args_set_ptr(fx.args, 4, 0x1000), GCL_ERROR_TYPE_MISMATCH, "is not a pointer parameter");
  DLTensor t = {0};
  FAILS(gcl_args_set_dltensor(fx.args, 4, &t), GCL_ERROR_TYPE_MISMATCH,
        "gcl_args_set_field_dltensor_flags: parameter 4 'tile'");
  assert_args_unchanged();
}

Test(badinput, driver_side_null_messages_name_the_public_function) {
  gcl_context *ctx = NULL;
  gcl_module *mod = NULL;
  gcl_kernel *k = NULL;
  gcl_event *event = NULL;
  int n = 0;
  gcl_launch_config cfg = {.grid = {1}, .block = {1}};
  SAYS(gcl_device_count(NULL), "gcl_device_count: count is NULL");
  SAYS(gcl_device_query(0, NULL), "gcl_device_query: info is NULL");
  SAYS(gcl_device_query(7, &(gcl_device_info){0}), "gcl_device_query: device out of range: expected 0 ... 0, got 7");
  SAYS(gcl_context_create(0, NULL), "gcl_context_create: out is NULL");
  SAYS(gcl_context_create(3, &ctx), "gcl_context_create: device out of range");
  SAYS(gcl_context_bind(NULL), "gcl_context_bind: ctx is NULL");
  SAYS(gcl_mem_alloc(NULL, 8, NULL), "gcl_mem_alloc: ctx is NULL");
  SAYS(gcl_mem_upload(NULL, 0, &n, 4), "gcl_mem_upload: ctx is NULL");
  SAYS(gcl_mem_download(NULL, &n, 0, 4), "gcl_mem_download: ctx is NULL");
  SAYS(gcl_context_synchronize(NULL), "gcl_context_synchronize: ctx is NULL");
  SAYS(gcl_driver_version(NULL), "gcl_driver_version: version is NULL");
  SAYS(gcl_nvrtc_version(&n, NULL), "gcl_nvrtc_version: minor is NULL");
  FAILS(gcl_event_create(NULL, &event), GCL_ERROR_INVALID_ARGUMENT, "ctx");
  SAYS(gcl_module_load_data(NULL, fake_ptx, sizeof fake_ptx, &mod), "gcl_module_load_data: ctx is NULL");
  SAYS(gcl_module_load_file(NULL, "x.cubin", &mod), "gcl_module_load_file: ctx is NULL");
  SAYS(gcl_module_compile(NULL, "", "k.cu", NULL, 0, &mod), "gcl_module_compile: ctx is NULL");
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  const char *opts[] = {NULL};
  SAYS(gcl_module_compile(ctx, "", "k.cu", opts, 1, &mod), "gcl_module_compile: options[0] is NULL");
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &mod), GCL_OK);
  SAYS(gcl_module_find_kernel(NULL, "k", NULL, &k), "gcl_module_find_kernel: mod is NULL");
  SAYS(gcl_module_find_kernel(mod, "", NULL, &k), "gcl_module_find_kernel: name is empty");
  SAYS(gcl_module_find_kernel_on(mod, NULL, "k", NULL, &k), "gcl_module_find_kernel_on: ctx is NULL");
  cr_assert_eq(gcl_module_find_kernel(mod, "k", FAKE_K_SIGNATURE, &k), GCL_OK, "%s", gcl_last_error());
  SAYS(gcl_kernel_attribute(k, (gcl_kernel_attr)99, &n), "gcl_kernel_attribute: attr 99 out of range");
  SAYS(gcl_kernel_attribute(NULL, GCL_KERNEL_REGISTERS, &n), "gcl_kernel_attribute: kernel is NULL");
  SAYS(gcl_launch(NULL, &cfg, fx.args), "gcl_launch: kernel is NULL");
  SAYS(gcl_launch(k, NULL, fx.args), "gcl_launch: config is NULL");
  SAYS(gcl_launch(k, &cfg, NULL), "gcl_launch: args is NULL");
  SAYS(gcl_graph_set_args(NULL, 0, k, fx.args), "g: expected a graph, got NULL");
  SAYS(gcl_args_set_tensormaps(NULL, ctx, TMAP_FIELD(NULL, 0, 0), 1, (const DLTensor *const[]){NULL}, NULL, 1, 0), "gcl_args_set_tensormaps: args is NULL");
  SAYS(gcl_args_set_tensormaps(fx.args, ctx, TMAP_FIELD(fx.args, 9, 0), 1, (const DLTensor *const[]){&(DLTensor){0}}, &(gcl_tensormap_options){0}, 1, 0),
       "gcl_args_set_tensormaps: the field was resolved in another layout");
  SAYS(gcl_tensormap_encode(NULL, NULL, NULL, NULL), "gcl_tensormap_encode: ctx is NULL");
  SAYS(gcl_kernel_set_launch_mode(NULL, GCL_LAUNCH_KERNEL_PARAMS), "gcl_kernel_set_launch_mode: kernel is NULL");
  gcl_args *ka = NULL; /* complete args of k, so that only the config is wrong */
  unsigned char map[128] = {0};
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(k), &ka), GCL_OK);
  cr_assert_eq(gcl_args_set(ka, 0, map, sizeof map), GCL_OK);
  cr_assert_eq(gcl_args_set(ka, 1, "c", 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(ka, 2, 0x1000), GCL_OK);
  cfg.reserved[4] = 1; /* the growth rule: reserved members must be zero */
  FAILS(gcl_launch(k, &cfg, ka), GCL_ERROR_INVALID_CONFIG, "gcl_launch: config.reserved[4] is 1, expected 0");
  cfg.reserved[4] = 0;
  cfg.flags = 6; /* unknown flags */
  FAILS(gcl_launch(k, &cfg, ka), GCL_ERROR_INVALID_CONFIG, "gcl_launch: config.flags is 0x6, expected 0 or GCL_LAUNCH_PDL_UNCHECKED (0x1)");
  gcl_args_destroy(ka);
  cr_assert_eq(fakecuda_launch_count(), 0);
  gcl_module_destroy(mod);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}
