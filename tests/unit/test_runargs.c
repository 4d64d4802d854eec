/* The `gclaunch run --arg` parser and buffer helpers (tools/runargs.c, tools/runbuf.c), CPU only. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/runargs.h"

static char err[512];

static runarg ok(const char *spec) {
  runarg a;
  err[0] = 0;
  cr_assert(runarg_parse(spec, 1, &a, err, sizeof err), "'%s' rejected: %s", spec, err);
  return a;
}

static void rejects(const char *spec, int position, const char *message) {
  runarg a;
  memset(&a, 0x5a, sizeof a);
  cr_assert_not(runarg_parse(spec, position, &a, err, sizeof err), "'%s' accepted", spec);
  cr_assert_str_eq(err, message);
}

static uint64_t bits(const runarg *a) {
  uint64_t v = 0;
  memcpy(&v, a->value, a->size);
  return v;
}

Test(runargs, scalars_keep_their_bytes) {
  runarg a = ok("f32:1.5");
  float f;
  memcpy(&f, a.value, 4);
  cr_assert(a.kind == RUNARG_SCALAR && a.type == GCL_SCALAR_F32 && a.size == 4 && f == 1.5f);
  a = ok("u64:42");
  cr_assert(a.type == GCL_SCALAR_U64 && a.size == 8 && bits(&a) == 42);
  a = ok("i32:-3");
  cr_assert(a.size == 4 && bits(&a) == 0xfffffffdu);
  a = ok("u64:0xffffffffffffffff");
  cr_assert(bits(&a) == UINT64_MAX);
  a = ok("i8:-128");
  cr_assert(a.size == 1 && bits(&a) == 0x80);
  a = ok("bool:true");
  cr_assert(a.size == 1 && a.value[0] == 1);
  a = ok("f16:1");
  cr_assert(a.size == 2 && bits(&a) == 0x3c00);
  a = ok("bf16:-2");
  cr_assert(bits(&a) == 0xc000);
  a = ok("f64:0.1");
  double d;
  memcpy(&d, a.value, 8);
  cr_assert(a.size == 8 && d == 0.1);
}

Test(runargs, scalar_errors_name_the_argument) {
  rejects("i8:128", 2, "--arg 2 'i8:128': 128 out of range for i8");
  rejects("u8:-1", 1, "--arg 1 'u8:-1': -1 out of range for u8");
  rejects("u32:4294967296", 1, "--arg 1 'u32:4294967296': 4294967296 out of range for u32");
  rejects("i32:3x", 4, "--arg 4 'i32:3x': '3x' is not an integer");
  rejects("i32:", 1, "--arg 1 'i32:': '' is not an integer");
  rejects("f32:abc", 1, "--arg 1 'f32:abc': 'abc' is not a number");
  rejects("f32:1e39", 1, "--arg 1 'f32:1e39': 1e39 out of range for f32");
  rejects("bool:yes", 1, "--arg 1 'bool:yes': 'yes' is not a bool (true, false, 1, 0)");
  rejects("f33:1", 1, "--arg 1 'f33:1': unknown argument kind 'f33' (a scalar type such as f32, "
                      "or buf, tmap, hex)");
  rejects("42", 1, "--arg 1 '42': expected KIND:VALUE (e.g. f32:1.5, buf:f32:1024=iota, "
                   "tmap:BUF:box=64x64, hex:00ff)");
}

Test(runargs, buffers) {
  runarg a = ok("buf:f32:1048576=rand");
  cr_assert(a.kind == RUNARG_BUFFER && a.type == GCL_SCALAR_F32 && a.size == 4);
  cr_assert(a.count == 1048576 && a.rank == 1 && a.offset == 0 && a.fill == RUNARG_RAND);
  a = ok("buf:f32:1024@4=iota");
  cr_assert(a.count == 1024 && a.offset == 4 && a.fill == RUNARG_IOTA && a.name[0] == 0);
  a = ok("src=buf:bf16:64x32x2");
  cr_assert_str_eq(a.name, "src");
  cr_assert(a.rank == 3 && a.shape[0] == 64 && a.shape[1] == 32 && a.shape[2] == 2);
  cr_assert(a.count == 4096 && a.size == 2 && a.fill == RUNARG_ZEROS);
  a = ok("x=buf:u8:16@0=@data/in.bin");
  cr_assert(a.fill == RUNARG_FILE && a.offset == 0);
  cr_assert_str_eq(a.file, "data/in.bin");
}

Test(runargs, buffer_errors_name_the_argument) {
  rejects("buf:f33:16", 3, "--arg 3 'buf:f33:16': unknown element type 'f33'");
  rejects("buf:f32", 1, "--arg 1 'buf:f32': expected buf:f32:COUNT (a shape such as 1024 or 64x64)");
  rejects("buf:f32:0", 1, "--arg 1 'buf:f32:0': bad shape '0' (expected 1 to 5 counts >= 1 "
                          "joined by 'x', e.g. 64x64)");
  rejects("buf:f32:4x", 1, "--arg 1 'buf:f32:4x': bad shape '4x' (expected 1 to 5 counts >= 1 "
                           "joined by 'x', e.g. 64x64)");
  rejects("buf:f32:2x2x2x2x2x2", 1, "--arg 1 'buf:f32:2x2x2x2x2x2': bad shape '2x2x2x2x2x2' "
                                    "(expected 1 to 5 counts >= 1 joined by 'x', e.g. 64x64)");
  rejects("buf:f32:16@x", 2, "--arg 2 'buf:f32:16@x': bad element offset '@x' (expected @N with "
                             "0 <= N <= 2^32)");
  rejects("buf:f32:16=ones", 1, "--arg 1 'buf:f32:16=ones': unknown fill 'ones' (expected zeros, "
                                "iota, rand or @FILE)");
  rejects("buf:f64:4294967295x4294967295", 1, "--arg 1 'buf:f64:4294967295x4294967295': "
                                             "18446744065119617025 elements is more than 1 TiB");
  rejects("9a=buf:f32:4", 1, "--arg 1 '9a=buf:f32:4': bad name '9a' (a C identifier of at most 31 "
                             "characters, or a field path such as g.maps[3])");
  rejects("g.x-y=u32:1", 1, "--arg 1 'g.x-y=u32:1': bad name 'g.x-y' (a C identifier of at most 31 "
                             "characters, or a field path such as g.maps[3])");
}

Test(runargs, tensor_maps) {
  runarg a = ok("tmap:src,dst:box=64x32:swizzle=128:oob=nan");
  cr_assert(a.kind == RUNARG_TMAP && a.tmap_count == 2 && a.box_rank == 2);
  cr_assert(a.box[0] == 64 && a.box[1] == 32);
  cr_assert(a.swizzle == GCL_TENSORMAP_SWIZZLE_128B && a.oob_fill == GCL_TENSORMAP_OOB_NAN);
  char name[RUNARG_NAME_MAX];
  runarg_tmap_buffer(&a, 0, name);
  cr_assert_str_eq(name, "src");
  runarg_tmap_buffer(&a, 1, name);
  cr_assert_str_eq(name, "dst");
  a = ok("tmap:x:box=256");
  cr_assert(a.tmap_count == 1 && a.box_rank == 1 && a.box[0] == 256 && a.swizzle == 0);
  cr_assert(a.store == 0);
  a = ok("tmap:y:box=16x16:store=1");
  cr_assert(a.store == 1 && a.box_rank == 2);
}

Test(runargs, tensor_map_errors) {
  rejects("tmap:x", 1, "--arg 1 'tmap:x': a tmap needs box=AxB (the box size, in the buffer's "
                       "shape order) or im2col=PIXELSxCHANNELS");
  rejects("tmap:x:box=300", 1, "--arg 1 'tmap:x:box=300': bad box '300' (expected 1 to 5 sizes "
                               "1 ... 256 joined by 'x', e.g. 64x64)");
  rejects("tmap:x:box=8:swizzle=16", 1, "--arg 1 'tmap:x:box=8:swizzle=16': unknown swizzle '16' "
                                        "(none, 32, 64, 128)");
  rejects("tmap:x:size=8", 1, "--arg 1 'tmap:x:size=8': unknown tmap option 'size' (box=, "
                              "swizzle=, oob=, store=, im2col=, lower=, upper=)");
  rejects("tmap:x:box=8:store=2", 1, "--arg 1 'tmap:x:box=8:store=2': bad store '2' (0 or 1)");
  rejects("tmap:a,,b:box=8", 1, "--arg 1 'tmap:a,,b:box=8': bad buffer name '' in the tmap list");
  rejects("tmap::box=8", 1, "--arg 1 'tmap::box=8': expected tmap:BUFFER[,BUFFER...]:box=AxB");
}

Test(runargs, im2col_maps) {
  runarg a = ok("tmap:img:im2col=128x64:lower=-1,-1:upper=-1,-1");
  cr_assert(a.kind == RUNARG_TMAP && a.box_rank == 0);
  cr_assert(a.im2col_pixels == 128 && a.im2col_channels == 64);
  cr_assert(a.im2col_lower[0] == -1 && a.im2col_lower[1] == -1 && a.im2col_lower[2] == 0);
  cr_assert(a.im2col_upper[0] == -1 && a.im2col_upper[1] == -1 && a.im2col_upper[2] == 0);
  a = ok("tmap:vol:im2col=8x16:lower=-32768:upper=3,-2,15");
  cr_assert(a.im2col_lower[0] == -32768 && a.im2col_upper[2] == 15 && a.im2col_upper[1] == -2);
  rejects("tmap:x:im2col=0x64", 1, "--arg 1 'tmap:x:im2col=0x64': bad im2col '0x64' (expected "
                                   "PIXELSxCHANNELS, 1 ... 1024 pixels and 1 ... 256 channels, e.g. "
                                   "128x64)");
  rejects("tmap:x:im2col=8x257", 1, "--arg 1 'tmap:x:im2col=8x257': bad im2col '8x257' (expected "
                                    "PIXELSxCHANNELS, 1 ... 1024 pixels and 1 ... 256 channels, "
                                    "e.g. 128x64)");
  rejects("tmap:x:im2col=8", 1, "--arg 1 'tmap:x:im2col=8': bad im2col '8' (expected "
                                "PIXELSxCHANNELS, 1 ... 1024 pixels and 1 ... 256 channels, e.g. "
                                "128x64)");
  rejects("tmap:x:im2col=8x8:lower=1,,2", 1, "--arg 1 'tmap:x:im2col=8x8:lower=1,,2': bad lower "
                                             "'1,,2' (expected W[,H[,D]]: 1 to 3 offsets -32768 "
                                             "... 32767, e.g. -1,-1)");
  rejects("tmap:x:im2col=8x8:upper=1,2,3,4", 1, "--arg 1 'tmap:x:im2col=8x8:upper=1,2,3,4': bad "
                                                "upper '1,2,3,4' (expected W[,H[,D]]: 1 to 3 "
                                                "offsets -32768 ... 32767, e.g. -1,-1)");
  rejects("tmap:x:box=8:im2col=8x8", 1, "--arg 1 'tmap:x:box=8:im2col=8x8': box= and im2col= "
                                        "exclude each other (an im2col map has no box)");
}

Test(runargs, hex_bytes) {
  runarg a = ok("hex:0011aAff");
  cr_assert(a.kind == RUNARG_HEX && a.size == 4);
  cr_assert(a.bytes[0] == 0 && a.bytes[1] == 0x11 && a.bytes[2] == 0xaa && a.bytes[3] == 0xff);
  runarg_free(&a);
  cr_assert_null(a.bytes);
  rejects("hex:001", 1, "--arg 1 'hex:001': expected an even, non-zero number of hex digits, got 3");
  rejects("hex:", 1, "--arg 1 'hex:': expected an even, non-zero number of hex digits, got 0");
  rejects("hex:00zz", 1, "--arg 1 'hex:00zz': 'z' at 2 is not a hex digit");
}

Test(runargs, dim3) {
  unsigned d[3] = {7, 7, 7};
  cr_assert(runarg_parse_dim3("4", d) && d[0] == 4 && d[1] == 1 && d[2] == 1);
  cr_assert(runarg_parse_dim3("2,3", d) && d[0] == 2 && d[1] == 3 && d[2] == 1);
  cr_assert(runarg_parse_dim3("2,3,5", d) && d[2] == 5);
  const char *badv[] = {"", "0", "a", "1,", "1,2,3,4", "2147483648", "1;2", "-1"};
  for (size_t i = 0; i < sizeof badv / sizeof *badv; i++) {
    unsigned e[3] = {9, 9, 9};
    cr_assert_not(runarg_parse_dim3(badv[i], e), "'%s' accepted", badv[i]);
    cr_assert(e[0] == 9 && e[1] == 9 && e[2] == 9, "'%s' changed the output", badv[i]);
  }
}

Test(runbuf, half_conversions_round_to_nearest_even) {
  struct { double v; uint16_t f16, bf16; } cases[] = {
      {0, 0, 0}, {1, 0x3c00, 0x3f80}, {-2, 0xc000, 0xc000}, {65504, 0x7bff, 0x4780},
      {65520, 0x7c00, 0x4780}, {0x1p-24, 0x0001, 0x3380}, {0x1p-26, 0, 0x3280},
      {1.0 + 0x1p-11, 0x3c00, 0x3f80}, {1.0 + 3 * 0x1p-11, 0x3c02, 0x3f80}, {INFINITY, 0x7c00, 0x7f80}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint16_t h, b;
    runarg_store(GCL_SCALAR_F16, &h, cases[i].v);
    runarg_store(GCL_SCALAR_BF16, &b, cases[i].v);
    cr_assert(h == cases[i].f16, "f16(%g) = %#x, expected %#x", cases[i].v, h, cases[i].f16);
    cr_assert(b == cases[i].bf16, "bf16(%g) = %#x, expected %#x", cases[i].v, b, cases[i].bf16);
  }
  for (int i = 0; i <= 2048; i++) { /* every integer up to 2048 is exact in f16 */
    uint16_t h;
    runarg_store(GCL_SCALAR_F16, &h, i);
    cr_assert(runarg_element(GCL_SCALAR_F16, &h, 0) == i);
  }
}

#ifdef __FLT16_MAX__
/* The compiler's own _Float16 conversion is the oracle: every 4099th float bit pattern. */
Test(runbuf, f16_matches_the_compiler) {
  for (uint64_t x = 0; x <= UINT32_MAX; x += 4099) {
    uint32_t b = (uint32_t)x;
    float f;
    memcpy(&f, &b, 4);
    _Float16 want = (_Float16)f;
    uint16_t w, got;
    memcpy(&w, &want, 2);
    runarg_store(GCL_SCALAR_F16, &got, f);
    if (f != f) cr_assert((got & 0x7c00) == 0x7c00 && (got & 0x3ff), "NaN %#x", b);
    else cr_assert(got == w, "f16(bits %#x = %g) = %#x, compiler says %#x", b, f, got, w);
    if (f == f) {
      double back = runarg_element(GCL_SCALAR_F16, &got, 0);
      cr_assert(back == (double)want, "f16 %#x reads back as %g, not %g", got, back, (double)want);
    }
  }
}
#endif

Test(runbuf, fills_and_checksums) {
  runarg a = ok("buf:i16:5@3=iota");
  int16_t v[5] = {9, 9, 9, 9, 9};
  runarg_fill_view(&a, v, 1);
  for (int i = 0; i < 5; i++) cr_assert(v[i] == i);
  cr_assert(runarg_sum(GCL_SCALAR_I16, v, 5) == 10);
  a = ok("buf:f32:1000=rand");
  float r1[1000], r2[1000], r3[1000];
  runarg_fill_view(&a, r1, 42);
  runarg_fill_view(&a, r2, 42);
  runarg_fill_view(&a, r3, 43);
  cr_assert(!memcmp(r1, r2, sizeof r1), "same seed, different data");
  cr_assert(memcmp(r1, r3, sizeof r1), "another seed, same data");
  double lo = 1, hi = -1;
  for (int i = 0; i < 1000; i++) lo = r1[i] < lo ? r1[i] : lo, hi = r1[i] > hi ? r1[i] : hi;
  cr_assert(lo >= -1 && hi < 1 && lo < -0.9 && hi > 0.9, "rand range [%g, %g]", lo, hi);
  /* Published FNV-1a 64 test vectors. */
  cr_assert(runarg_fnv1a("", 0) == UINT64_C(0xcbf29ce484222325));
  cr_assert(runarg_fnv1a("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
  cr_assert(runarg_fnv1a("foobar", 6) == UINT64_C(0x85944171f73967e8));
  uint64_t big = UINT64_MAX;
  cr_assert(runarg_element(GCL_SCALAR_U64, &big, 0) == 18446744073709551615.0);
  cr_assert_str_eq(runarg_type_name(GCL_SCALAR_BF16), "bf16");
  cr_assert_str_eq(runarg_type_name(GCL_SCALAR_VOID), "?");
}

/* --devices: "all" or a list; every malformed form names the text and what is wrong. */
static void bad_devices(const char *text, const char *why) {
  runarg_devices d = {.count = 99};
  char msg[256] = "";
  cr_assert(!runarg_parse_devices(text, &d, msg, sizeof msg), "'%s' accepted", text ? text : "(null)");
  cr_assert(strstr(msg, why), "'%s': message lacks \"%s\": %s", text ? text : "(null)", why, msg);
  cr_assert_eq(d.count, 99, "a failed parse must not write its output");
}

Test(runargs, devices_lists) {
  runarg_devices d;
  char msg[256];
  cr_assert(runarg_parse_devices("all", &d, msg, sizeof msg));
  cr_assert(d.all && d.count == 0);
  cr_assert(runarg_parse_devices("1", &d, msg, sizeof msg));
  cr_assert(!d.all && d.count == 1 && d.list[0] == 1);
  cr_assert(runarg_parse_devices("0,1,7", &d, msg, sizeof msg));
  cr_assert(d.count == 3 && d.list[0] == 0 && d.list[1] == 1 && d.list[2] == 7);
  cr_assert(runarg_parse_devices("3,0", &d, msg, sizeof msg), "any order");
  cr_assert(d.list[0] == 3 && d.list[1] == 0);
  cr_assert(runarg_parse_devices("1023", &d, msg, sizeof msg));
  bad_devices("", "expected 'all' or device numbers");
  bad_devices(NULL, "expected 'all' or device numbers");
  bad_devices("ALL", "expected 'all'");
  bad_devices("0,", "--devices '0,': expected 'all' or device numbers");
  bad_devices(",1", "expected 'all'");
  bad_devices("0;1", "expected ',' after device 0");
  bad_devices("-1", "expected 'all'");
  bad_devices("1024", "0 ... 1023");
  bad_devices("99999999999", "0 ... 1023");
  bad_devices("0,1,0", "device 0 listed twice");
  bad_devices("0 ,1", "expected ',' after device 0");
  char many[512] = "0";
  for (int i = 1; i <= RUNARG_MAX_DEVICES; i++) snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
  bad_devices(many, "more than 64 devices");
}

Test(runargs, devices_resolved_against_present_ones) {
  runarg_devices d;
  char msg[256];
  int list[RUNARG_MAX_DEVICES];
  cr_assert(runarg_parse_devices("all", &d, msg, sizeof msg));
  cr_assert_eq(runarg_resolve_devices(&d, 1, list, msg, sizeof msg), 1, "all on one GPU: one device");
  cr_assert_eq(list[0], 0);
  cr_assert_eq(runarg_resolve_devices(&d, 2, list, msg, sizeof msg), 2);
  cr_assert(list[0] == 0 && list[1] == 1);
  cr_assert_eq(runarg_resolve_devices(&d, 0, list, msg, sizeof msg), 0);
  cr_assert(strstr(msg, "no CUDA device"), "%s", msg);
  cr_assert(runarg_parse_devices("1,0", &d, msg, sizeof msg));
  cr_assert_eq(runarg_resolve_devices(&d, 2, list, msg, sizeof msg), 2);
  cr_assert(list[0] == 1 && list[1] == 0);
  cr_assert_eq(runarg_resolve_devices(&d, 1, list, msg, sizeof msg), 0);
  cr_assert(strstr(msg, "device 1 does not exist (1 device: 0 ... 0)"), "%s", msg);
}

Test(runargs, field_paths_are_kept_apart_from_names) {
  runarg a;
  char why[256];
  cr_assert(runarg_parse("g.loads[3]=tmap:a:box=64x64", 1, &a, why, sizeof why), "%s", why);
  cr_assert_str_eq(a.path, "g.loads[3]");
  cr_assert_str_eq(a.name, "");
  cr_assert_eq(a.kind, RUNARG_TMAP);
  runarg_free(&a);
  cr_assert(runarg_parse("g.bufs[0]=buf:f32:1024@4", 2, &a, why, sizeof why), "%s", why);
  cr_assert_str_eq(a.path, "g.bufs[0]");
  cr_assert_eq(a.offset, 4);
  runarg_free(&a);
  cr_assert(runarg_parse("x=buf:f32:8", 3, &a, why, sizeof why), "%s", why);
  cr_assert_str_eq(a.name, "x");
  cr_assert_str_eq(a.path, "");
  runarg_free(&a);
}
