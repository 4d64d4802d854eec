/* Signature parser: accepted forms, what they describe, column-accurate errors, round trip. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "../common/test_rng.h"

static gcl_signature *parse_ok(const char *text) {
  gcl_signature *sig = NULL;
  gcl_status s = gcl_signature_parse(text, &sig);
  cr_assert_eq(s, GCL_OK, "'%s' -> %s: %s", text, gcl_status_name(s), gcl_last_error());
  cr_assert_not_null(sig);
  return sig;
}

static gcl_param_info info_of(const gcl_signature *sig, size_t i) {
  gcl_param_info info;
  cr_assert_eq(gcl_signature_param(sig, i, &info), GCL_OK);
  return info;
}

/* The error message a malformed text gives; the output pointer must stay untouched. */
static void parse_bad(const char *text, const char *message) {
  gcl_signature *sig = (gcl_signature *)(uintptr_t)0x1234;
  gcl_status s = gcl_signature_parse(text, &sig);
  cr_assert_eq(s, GCL_ERROR_PARSE, "'%s' -> %s", text, gcl_status_name(s));
  cr_assert_eq((uintptr_t)sig, 0x1234, "output changed on failure");
  cr_assert_str_eq(gcl_last_error(), message, "'%s'", text);
}

static char *format(const gcl_signature *sig) {
  size_t need = 0;
  gcl_signature_format(sig, NULL, 0, &need);
  char *buf = malloc(need + 1);
  cr_assert_eq(gcl_signature_format(sig, buf, need + 1, NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(strlen(buf), need);
  return buf;
}

Test(signature, design_example) {
  gcl_signature *sig = parse_ok("grid_constant tensormap[64] maps, const f32* align(16) src, "
                                "f32* dst, u64 n, struct{i32,i32,f32} tile");
  cr_assert_eq(gcl_signature_count(sig), 5);
  gcl_param_info m = info_of(sig, 0);
  cr_assert_str_eq(m.name, "maps");
  cr_assert_eq(m.kind, GCL_PARAM_ARRAY);
  cr_assert_eq(m.elem_kind, GCL_PARAM_TENSORMAP);
  cr_assert(m.grid_constant);
  cr_assert_eq(m.size, 64 * 128);
  cr_assert_eq(m.align, 128);
  cr_assert_eq(m.count, 64);
  cr_assert_eq(m.elem_size, 128);
  gcl_param_info src = info_of(sig, 1);
  cr_assert_eq(src.kind, GCL_PARAM_POINTER);
  cr_assert_eq(src.scalar, GCL_SCALAR_F32);
  cr_assert(src.is_const);
  cr_assert_eq(src.size, 8);
  cr_assert_eq(src.align, 8);
  cr_assert_eq(src.pointee_align, 16);
  gcl_param_info dst = info_of(sig, 2);
  cr_assert(!dst.is_const);
  cr_assert_eq(dst.pointee_align, 4);
  gcl_param_info n = info_of(sig, 3);
  cr_assert_eq(n.kind, GCL_PARAM_SCALAR);
  cr_assert_eq(n.scalar, GCL_SCALAR_U64);
  gcl_param_info tile = info_of(sig, 4);
  cr_assert_eq(tile.kind, GCL_PARAM_STRUCT);
  cr_assert_eq(tile.size, 12);
  cr_assert_eq(tile.align, 4);
  cr_assert_str_eq(info_of(sig, 2).name, "dst");
  gcl_signature_destroy(sig);
}

Test(signature, scalar_sizes_follow_the_c_abi) {
  const char *names[] = {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
                         "f16", "bf16", "f32", "f64"};
  const size_t sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
  for (size_t i = 0; i < 13; i++) {
    gcl_signature *sig = parse_ok(names[i]);
    gcl_param_info p = info_of(sig, 0);
    cr_assert_eq(p.kind, GCL_PARAM_SCALAR);
    cr_assert_eq(p.scalar, (gcl_scalar)(i + 1));
    cr_assert_eq(p.size, sizes[i], "%s", names[i]);
    cr_assert_eq(p.align, sizes[i], "%s", names[i]);
    cr_assert_null(p.name);
    gcl_signature_destroy(sig);
  }
}

Test(signature, empty_and_unnamed) {
  gcl_signature *sig = parse_ok("");
  cr_assert_eq(gcl_signature_count(sig), 0);
  gcl_signature_destroy(sig);
  sig = parse_ok("  \t\n ");
  cr_assert_eq(gcl_signature_count(sig), 0);
  gcl_signature_destroy(sig);
  sig = parse_ok("f32*,ptr,void*,const void*");
  cr_assert_eq(gcl_signature_count(sig), 4);
  for (size_t i = 0; i < 4; i++) {
    gcl_param_info p = info_of(sig, i);
    cr_assert_eq(p.kind, GCL_PARAM_POINTER);
    cr_assert_null(p.name);
  }
  cr_assert_eq(info_of(sig, 1).scalar, GCL_SCALAR_VOID);
  cr_assert_eq(info_of(sig, 1).pointee_align, 1);
  cr_assert(info_of(sig, 3).is_const);
  gcl_signature_destroy(sig);
}

Test(signature, align_and_bytes) {
  gcl_signature *sig = parse_ok("tensormap align(64) a, bytes(5) align(4) b, bytes(3) c, "
                                "i32 align(16) d, struct{i8, f64} align(32) e, i16 align(2) f");
  cr_assert_eq(info_of(sig, 0).align, 64);
  cr_assert_eq(info_of(sig, 0).size, 128);
  cr_assert_eq(info_of(sig, 1).size, 8);
  cr_assert_eq(info_of(sig, 1).align, 4);
  cr_assert_eq(info_of(sig, 1).kind, GCL_PARAM_BYTES);
  cr_assert_eq(info_of(sig, 2).size, 3);
  cr_assert_eq(info_of(sig, 2).align, 1);
  cr_assert_eq(info_of(sig, 3).size, 16);
  cr_assert_eq(info_of(sig, 3).align, 16);
  cr_assert_eq(info_of(sig, 4).size, 32);
  cr_assert_eq(info_of(sig, 4).align, 32);
  cr_assert_eq(info_of(sig, 5).size, 2);
  gcl_signature_destroy(sig);
}

Test(signature, nested_structs_get_c_offsets_from_libffi) {
  gcl_signature *sig = parse_ok("struct{i8, struct{i16, f64}, u8[3], tensormap, bf16} s");
  const gcl__type *t = gcl__signature_type(sig, 0);
  cr_assert_eq(t->member_count, 5);
  cr_assert_eq(t->offsets[0], 0);
  cr_assert_eq(t->offsets[1], 8);   /* inner struct: i16@0 f64@8, size 16 align 8 */
  cr_assert_eq(t->members[1]->size, 16);
  cr_assert_eq(t->offsets[2], 24);
  cr_assert_eq(t->offsets[3], 128); /* tensormap keeps its 128-byte alignment inside a struct */
  cr_assert_eq(t->offsets[4], 256);
  cr_assert_eq(t->size, 384);
  cr_assert_eq(t->align, 128);
  gcl_signature_destroy(sig);
}

Test(signature, arrays) {
  gcl_signature *sig = parse_ok("f16[3] h, struct{i32, i8}[2] s, f32* align(16)[4] ps, "
                                "bytes(6) align(4)[2] b");
  gcl_param_info h = info_of(sig, 0);
  cr_assert_eq(h.kind, GCL_PARAM_ARRAY);
  cr_assert_eq(h.elem_kind, GCL_PARAM_SCALAR);
  cr_assert_eq(h.scalar, GCL_SCALAR_F16);
  cr_assert_eq(h.size, 6);
  cr_assert_eq(h.align, 2);
  cr_assert_eq(info_of(sig, 1).size, 16);
  cr_assert_eq(info_of(sig, 1).elem_size, 8);
  gcl_param_info ps = info_of(sig, 2);
  cr_assert_eq(ps.elem_kind, GCL_PARAM_POINTER);
  cr_assert_eq(ps.size, 32);
  cr_assert_eq(ps.pointee_align, 16);
  cr_assert_eq(info_of(sig, 3).size, 16);
  gcl_signature_destroy(sig);
}

Test(signature, errors_point_at_the_column) {
  parse_bad("f32* src, const *dst", "col 17: expected a type after 'const', got '*'");
  parse_bad("const", "col 6: expected a type after 'const', got the end of the signature");
  parse_bad("const f32 x", "col 11: expected '*' after 'const f32', got 'x'");
  parse_bad("f32* const", "col 6: expected a parameter name, ',' or the end of the signature, "
                          "got 'const' (a reserved word)");
  parse_bad("float x", "col 1: expected a type, got 'float'");
  parse_bad("void x", "col 6: expected '*' after 'void', got 'x'");
  parse_bad("i32 a,", "col 7: expected a parameter after ',', got the end of the signature");
  parse_bad("i32 a, , f32 b", "col 8: expected a type, got ','");
  parse_bad("i32 a b", "col 7: expected ',' or the end of the signature, got 'b'");
  parse_bad("i32 a; f32 b", "col 6: expected a parameter name, ',' or the end of the signature, got ';'");
  parse_bad("bytes(0) b", "col 7: bytes(N) needs N >= 1, got 0");
  parse_bad("bytes 4", "col 7: expected '(' after 'bytes', got '4'");
  parse_bad("bytes(4", "col 8: expected ')' after the number, got the end of the signature");
  parse_bad("struct{} s", "col 8: expected a member type in 'struct{', got '}' (empty structs are not allowed)");
  parse_bad("struct{i32 f32}", "col 12: expected a member name, ',' or '}', got 'f32' (a reserved word)");
  parse_bad("struct{i32,", "col 12: expected a type, got the end of the signature");
  parse_bad("i32[0] a", "col 5: array length must be >= 1, got 0");
  parse_bad("i32[4", "col 6: expected ']' after the element count, got the end of the signature");
  parse_bad("i32[4][2]", "col 7: expected a parameter name, ',' or the end of the signature, got '['");
  parse_bad("i32 align(3)", "col 11: align(N) needs a power of two from 1 to 32768, got 3");
  parse_bad("i32 align(65536)", "col 11: align(N) needs a power of two from 1 to 32768, got 65536");
  parse_bad("bytes(2000000000)", "col 7: bytes(2000000000) is too large");
  parse_bad("i32 align(0)", "col 11: align(N) needs a power of two from 1 to 32768, got 0");
  parse_bad("i32 align(2)", "col 11: align(2) is below the natural alignment 4 of 'i32' (only "
                            "tensormap and bytes may be lowered)");
  parse_bad("struct{f64} align(4)", "col 19: align(4) is below the natural alignment 8 of "
                                    "'struct{f64}' (only tensormap and bytes may be lowered)");
  parse_bad("grid_constant f32* p", "col 1: grid_constant applies to by-value parameters only, "
                                    "not to the pointer 'f32*'");
  parse_bad("i32 a, f32 a", "col 12: duplicate parameter name 'a'");
  parse_bad("u8 x, tensormap tensormap", "col 17: expected a parameter name, ',' or the end of the "
                                          "signature, got 'tensormap' (a reserved word)");
  parse_bad("f32** p", "col 5: expected a parameter name, ',' or the end of the signature, got '*'");
  parse_bad("u8[99999999999]", "col 4: array of 99999999999 elements is too large");
}

Test(signature, hostile_nesting_is_an_error_not_a_crash) {
  char text[400] = "";
  for (int i = 0; i < 40; i++) strcat(text, "struct{");
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_ERROR_PARSE);
  cr_assert(strstr(gcl_last_error(), "nested deeper than") != NULL, "%s", gcl_last_error());
  cr_assert_eq(gcl_signature_parse(NULL, &sig), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_signature_parse("i32", NULL), GCL_ERROR_INVALID_ARGUMENT);
}

Test(signature, format_is_canonical) {
  gcl_signature *sig = parse_ok("  grid_constant   tensormap align(64)[ 4 ]m,ptr p , const  bf16 *"
                                "align(8) q,struct{ i8 ,struct{u16}}s");
  char *text = format(sig);
  cr_assert_str_eq(text, "grid_constant tensormap align(64)[4] m, void* p, const bf16* align(8) q, "
                         "struct{i8, struct{u16}} s");
  char small[8];
  size_t need = 0;
  cr_assert_eq(gcl_signature_format(sig, small, sizeof small, &need), GCL_OK, "cut, as snprintf");
  cr_assert_eq(need, strlen(text));
  cr_assert_str_eq(small, "grid_co");
  free(text);
  gcl_signature_destroy(sig);
}

/* --- round trip over generated signatures ----------------------------------------------- */

/* rnd(n): tests/common/test_rng.h's generator, each test seeding rng_state itself. */

static void gen_type(char *buf, size_t cap, int depth) {
  static const char *const sc[] = {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
                                   "f16", "bf16", "f32", "f64"};
  size_t len = strlen(buf);
  switch (rnd(depth > 2 ? 5 : 6)) {
  case 0: case 1: snprintf(buf + len, cap - len, "%s", sc[rnd(13)]); break;
  case 2:
    snprintf(buf + len, cap - len, "%s%s*", rnd(2) ? "const " : "", rnd(4) ? sc[rnd(13)] : "void");
    if (rnd(3) == 0) snprintf(buf + strlen(buf), cap - strlen(buf), " align(%u)", 1u << rnd(8));
    break;
  case 3:
    snprintf(buf + len, cap - len, "tensormap%s", rnd(3) ? "" : " align(64)");
    break;
  case 4: snprintf(buf + len, cap - len, "bytes(%u) align(%u)", 1 + rnd(40), 1u << rnd(8)); break;
  default: {
    unsigned n = 1 + rnd(4);
    snprintf(buf + len, cap - len, "struct{");
    for (unsigned i = 0; i < n; i++) {
      if (i) strncat(buf, ", ", cap - strlen(buf) - 1);
      gen_type(buf, cap, depth + 1);
    }
    strncat(buf, "}", cap - strlen(buf) - 1);
  }
  }
  if (rnd(4) == 0) snprintf(buf + strlen(buf), cap - strlen(buf), "[%u]", 1 + rnd(5));
}

static void same_params(const gcl_signature *a, const gcl_signature *b, const char *text) {
  cr_assert_eq(gcl_signature_count(a), gcl_signature_count(b), "%s", text);
  for (size_t i = 0; i < gcl_signature_count(a); i++) {
    gcl_param_info x = info_of(a, i), y = info_of(b, i);
    cr_assert((x.name == NULL) == (y.name == NULL));
    if (x.name) cr_assert_str_eq(x.name, y.name);
    x.name = y.name = NULL;
    cr_assert(!memcmp(&x, &y, sizeof x), "param %zu differs after round trip: %s", i, text);
  }
}

Test(signature, round_trip_of_generated_signatures) {
  rng_state = 12345;
  for (int iter = 0; iter < 1000; iter++) {
    char text[4096] = "";
    unsigned n = rnd(6);
    for (unsigned i = 0; i < n; i++) {
      if (i) strcat(text, ", ");
      char type[2048] = "";
      gen_type(type, sizeof type, 0);
      bool plain_pointer = strchr(type, '*') && !strchr(type, '[') && !strchr(type, '{');
      if (!plain_pointer && rnd(4) == 0) strcat(text, "grid_constant ");
      strncat(text, type, sizeof text - strlen(text) - 1);
      if (rnd(2)) snprintf(text + strlen(text), sizeof text - strlen(text), " p%u", i);
    }
    gcl_signature *a = NULL;
    gcl_status s = gcl_signature_parse(text, &a);
    if (s == GCL_ERROR_PARSE && strstr(gcl_last_error(), "below the natural alignment")) continue;
    cr_assert_eq(s, GCL_OK, "iteration %d: '%s': %s", iter, text, gcl_last_error());
    char *canon = format(a);
    gcl_signature *b = parse_ok(canon);
    char *again = format(b);
    cr_assert_str_eq(canon, again);
    same_params(a, b, text);
    gcl_signature *c = gcl__signature_share(a); /* what a layout holds: a outlives one destroy */
    gcl_signature_destroy(a);
    same_params(b, c, text);
    a = NULL;
    free(canon), free(again);
    gcl_signature_destroy(a), gcl_signature_destroy(b), gcl_signature_destroy(c);
  }
}

/* Mutated signatures: never a crash; every failure is a parse error with a column in the text. */
Test(signature, mutations_fail_cleanly_with_a_column) {
  static const char *const seeds[] = {
      "grid_constant tensormap[64] maps, const f32* align(16) src, f32* dst, u64 n",
      "struct{i8, struct{i16, f64}[2], u8[3]} align(64) s, bytes(7) align(4) b, ptr p",
      "tensormap align(64) a, bf16 h, const void* v, bool f"};
  static const char alphabet[] = "abcfiu0123456789*,()[]{} _#";
  rng_state = 777;
  for (int iter = 0; iter < 20000; iter++) {
    char text[256];
    snprintf(text, sizeof text, "%s", seeds[rnd(3)]);
    size_t len = strlen(text);
    for (unsigned m = 1 + rnd(3); m; m--) {
      size_t at = rnd((unsigned)len);
      if (rnd(4) == 0) memmove(text + at, text + at + 1, len - at), len--;
      else text[at] = alphabet[rnd(sizeof alphabet - 1)];
    }
    gcl_signature *sig = NULL;
    gcl_status s = gcl_signature_parse(text, &sig);
    if (s == GCL_OK) {
      char *canon = format(sig);
      gcl_signature *back = parse_ok(canon);
      same_params(sig, back, text);
      free(canon);
      gcl_signature_destroy(back);
      gcl_signature_destroy(sig);
      continue;
    }
    cr_assert_eq(s, GCL_ERROR_PARSE, "'%s': %s", text, gcl_status_name(s));
    unsigned col = 0;
    cr_assert_eq(sscanf(gcl_last_error(), "col %u:", &col), 1, "'%s': %s", text, gcl_last_error());
    cr_assert(col >= 1 && col <= strlen(text) + 1, "'%s': %s", text, gcl_last_error());
  }
}

/* --- the public scalar helpers: names and sizes as the grammar spells them, f16/bf16 --------- */

Test(scalar, names_and_sizes_round_trip_through_the_grammar) {
  for (int t = GCL_SCALAR_BOOL; t <= GCL_SCALAR_F64; t++) {
    char text[32];
    snprintf(text, sizeof text, "%s x", gcl_scalar_name((gcl_scalar)t));
    gcl_signature *sig = parse_ok(text);
    gcl_param_info p = info_of(sig, 0);
    cr_assert_eq(p.scalar, (gcl_scalar)t, "%s", text);
    cr_assert_eq(gcl_scalar_size((gcl_scalar)t), p.size, "%s", text);
    gcl_signature_destroy(sig);
  }
  cr_assert_str_eq(gcl_scalar_name(GCL_SCALAR_VOID), "void");
  cr_assert_eq(gcl_scalar_size(GCL_SCALAR_VOID), 0);
  cr_assert_str_eq(gcl_scalar_name((gcl_scalar)99), "?");
  cr_assert_eq(gcl_scalar_size((gcl_scalar)-1), 0);
}

static uint64_t scalar_rng = 0x2545f4914f6cdd1dull;
static uint32_t next_bits(void) { return (uint32_t)(test_rng_next(&scalar_rng) >> 16); }

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The compiler's _Float16 conversion (round to nearest even) is the oracle for f16, both ways. */
Test(scalar, f16_matches_the_compilers_conversion) {
  for (int i = 0; i < 200000; i++) {
    uint32_t u = i < 65536 ? (uint32_t)i << 16 | (next_bits() & 0xffffu) : next_bits();
    if (i % 3 == 0) u = (u & 0x80ffffffu) | ((100u + next_bits() % 50u) << 23); /* near halves */
    float x = from_bits(u);
    _Float16 h = (_Float16)x;
    uint16_t want;
    memcpy(&want, &h, sizeof want);
    uint16_t got = gcl_f16_from_f32(x);
    if (x != x) cr_assert((got & 0x7c00u) == 0x7c00u && (got & 0x3ffu), "NaN 0x%08x -> 0x%04x", u, got);
    else cr_assert_eq(got, want, "0x%08x (%g): 0x%04x, the compiler 0x%04x", u, x, got, want);
    _Float16 back;
    memcpy(&back, &want, sizeof back);
    if (x == x) cr_assert_eq(gcl_f16_to_f32(want), (float)back, "0x%04x", want);
  }
}

/* bf16 keeps the top 16 bits of a float, rounded to nearest even: the result is the nearer of
 * the two bf16 values around x (the even one on a tie), and converts back exactly. */
Test(scalar, bf16_rounds_to_the_nearest_even) {
  for (int i = 0; i < 200000; i++) {
    uint32_t u = next_bits();
    if ((u & 0x7f800000u) == 0x7f800000u) continue; /* inf and NaN: below */
    float x = from_bits(u);
    uint16_t got = gcl_bf16_from_f32(x);
    uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
    /* Past the largest finite bf16 the next value up is infinity, standing for 2^128 here. */
    double h = (hi & 0x7fffffffu) == 0x7f800000u ? copysign(ldexp(1.0, 128), (double)x)
                                                 : (double)from_bits(hi);
    double dl = fabs((double)x - (double)from_bits(lo)), dh = fabs(h - (double)x);
    uint16_t want = (uint16_t)((dl < dh || (dl == dh && !((lo >> 16) & 1u))) ? lo >> 16 : hi >> 16);
    cr_assert_eq(got, want, "0x%08x: 0x%04x, expected 0x%04x", u, got, want);
    cr_assert_eq(gcl_bf16_to_f32(got), from_bits((uint32_t)got << 16));
  }
  cr_assert_eq(gcl_bf16_from_f32(from_bits(0x7f800000u)), 0x7f80u);
  uint16_t nan = gcl_bf16_from_f32(from_bits(0x7f800001u));
  cr_assert((nan & 0x7f80u) == 0x7f80u && (nan & 0x7fu), "NaN stays NaN: 0x%04x", nan);
}

/* --- long signatures (issue 34): the duplicate-name checks are hash lookups, not scans -------- */

/* n u32 parameters named p0 ... p(n-1), then `extra` (NULL: nothing). malloc'ed. */
static char *named_u32s(size_t n, const char *extra) {
  char *text = malloc(n * 16 + 64), *at = text;
  cr_assert_not_null(text);
  for (size_t i = 0; i < n; i++) at += sprintf(at, "%su32 p%zu", i ? ", " : "", i);
  if (extra) sprintf(at, ", %s", extra);
  return text;
}

Test(signature, two_hundred_thousand_named_parameters_parse) {
  char *text = named_u32s(200000, NULL);
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_signature_count(sig), 200000);
  cr_assert_str_eq(info_of(sig, 199999).name, "p199999");
  gcl_signature_destroy(sig);
  free(text);
  /* A duplicate at the very end is still found, at its column, naming it. */
  text = named_u32s(200000, "f32 p123456");
  sig = NULL;
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_ERROR_PARSE);
  char want[96];
  snprintf(want, sizeof want, "col %zu: duplicate parameter name 'p123456'", strlen(text) - 6);
  cr_assert(strstr(gcl_last_error(), want), "%s (want %s)", gcl_last_error(), want);
  cr_assert_null(sig);
  free(text);
}

Test(signature, a_struct_of_many_named_members_finds_its_duplicate) {
  size_t n = 50000;
  char *text = malloc(n * 16 + 64), *at = text;
  cr_assert_not_null(text);
  at += sprintf(at, "struct{");
  for (size_t i = 0; i < n; i++) at += sprintf(at, "%su8 m%zu", i ? ", " : "", i);
  sprintf(at, ", u8 m777} s");
  gcl_signature *sig = NULL;
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_ERROR_PARSE);
  char want[128];
  snprintf(want, sizeof want, "duplicate member name 'm777' in struct{...}: member 777 (col");
  cr_assert(strstr(gcl_last_error(), want), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "and member 50000"), "%s", gcl_last_error());
  at[-0] = '\0';
  strcpy(at, "} s"); /* without the duplicate it parses */
  cr_assert_eq(gcl_signature_parse(text, &sig), GCL_OK, "%s", gcl_last_error());
  gcl_param_info s = info_of(sig, 0);
  cr_assert_eq(s.size, n);
  gcl_signature_destroy(sig);
  free(text);
}
