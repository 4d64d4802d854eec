/* Fields: named members, paths into nested aggregates, setters by field, set-tracking by leaf
 * bytes, leaf listing, ownership of tensors inside structs, and every bad path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gclaunch/gclaunch.h"
#include "../common/args_fixture.h"

static gcl_field field(const fixture *f, const char *path) {
  gcl_field out;
  cr_assert_eq(gcl_layout_field(f->layout, path, &out), GCL_OK, "%s: %s", path, gcl_last_error());
  return out;
}

#define GLOBALS "grid_constant struct{tensormap[4] loads, tensormap[4] stores, f32*[2] bufs, i32 n} g"

Test(fields, names_parse_and_round_trip) {
  const char *text = "u32 a, grid_constant struct{tensormap[4] loads, struct{ptr p, u32 n}[8] segs, "
                     "struct{i8, f64 x} align(32), u16} g";
  gcl_signature *s;
  cr_assert_eq(gcl_signature_parse(text, &s), GCL_OK, "%s", gcl_last_error());
  char buf[512];
  cr_assert_eq(gcl_signature_format(s, buf, sizeof buf, NULL), GCL_OK);
  cr_assert_str_eq(buf, "u32 a, grid_constant struct{tensormap[4] loads, struct{void* p, u32 n}[8] "
                        "segs, struct{i8, f64 x} align(32), u16} g");
  gcl_signature *again;
  cr_assert_eq(gcl_signature_parse(buf, &again), GCL_OK, "%s", gcl_last_error());
  char buf2[512];
  cr_assert_eq(gcl_signature_format(again, buf2, sizeof buf2, NULL), GCL_OK);
  cr_assert_str_eq(buf, buf2);
  gcl_signature_destroy(again);
  gcl_signature_destroy(s);
}

Test(fields, duplicate_member_names_are_a_parse_error_naming_both) {
  gcl_signature *s = NULL;
  cr_assert_eq(gcl_signature_parse("struct{u32 n, f32 x, u64 n} g", &s), GCL_ERROR_PARSE);
  cr_assert_null(s);
  cr_assert_str_eq(gcl_last_error(), "col 26: duplicate member name 'n' in struct{...}: member 0 "
                                     "(col 12) and member 2");
  /* the same name in two different structs is fine */
  cr_assert_eq(gcl_signature_parse("struct{struct{u32 n} a, struct{u32 n} b} g", &s), GCL_OK);
  gcl_signature_destroy(s);
  cr_assert_eq(gcl_signature_parse("struct{u32 const} g", &s), GCL_ERROR_PARSE);
}

Test(fields, paths_resolve_to_c_offsets_inside_the_device_placement) {
  fixture f = make(GLOBALS, 90);
  gcl_field g = field(&f, "g"), l3 = field(&f, "g.loads[3]"), s0 = field(&f, "g.stores[0]");
  gcl_field b1 = field(&f, "g.bufs[1]"), n = field(&f, "g.n"), n3 = field(&f, "g.3"), z = field(&f, "0");
  cr_assert_eq(g.offset, 112);
  cr_assert_eq(g.size, 1152);
  cr_assert_eq(l3.offset, 112 + 3 * 128);
  cr_assert_eq(l3.info.kind, GCL_PARAM_TENSORMAP);
  cr_assert_eq(s0.offset, 112 + 512);
  cr_assert_eq(b1.offset, 112 + 1024 + 8);
  cr_assert_eq(b1.info.kind, GCL_PARAM_POINTER);
  cr_assert_eq(b1.info.scalar, GCL_SCALAR_F32);
  cr_assert_eq(n.offset, 112 + 1040);
  cr_assert_str_eq(n.info.name, "n");
  cr_assert(n.info.grid_constant);
  cr_assert_eq(n3.offset, n.offset);
  cr_assert_eq(z.offset, g.offset);
  cr_assert_eq(z.size, g.size);
  char path[64];
  size_t need = 0;
  cr_assert_eq(gcl_layout_field_path(f.layout, &l3, path, sizeof path, &need), GCL_OK);
  cr_assert_str_eq(path, "g.loads[3]");
  cr_assert_eq(need, 10);
  cr_assert_eq(gcl_layout_field_path(f.layout, &g, path, sizeof path, NULL), GCL_OK);
  cr_assert_str_eq(path, "g");
  cr_assert_eq(gcl_layout_field_path(f.layout, &n, path, 3, &need), GCL_OK, "cut, as snprintf");
  cr_assert_eq(need, 3);
  cr_assert_eq(strlen(path), 2);
  drop(&f);
}

Test(fields, unnamed_members_by_index_and_arrays_of_structs) {
  fixture f = make("u8 c, struct{struct{ptr p, u32 n}[8] segs, i16, bytes(5) align(4) tag} s", 80);
  gcl_field s = field(&f, "s"), n2 = field(&f, "s.segs[2].n"), u = field(&f, "s.1");
  gcl_field tag = field(&f, "s.tag"), e = field(&f, "1.0[7].p");
  cr_assert_eq(n2.offset - s.offset, 2 * 16 + 8);
  cr_assert_eq(u.offset - s.offset, 128);
  cr_assert_eq(u.info.scalar, GCL_SCALAR_I16);
  cr_assert_null(u.info.name);
  cr_assert_eq(tag.offset - s.offset, 132);
  cr_assert_eq(tag.size, 8);
  cr_assert_eq(e.offset - s.offset, 7 * 16);
  char path[64];
  cr_assert_eq(gcl_layout_field_path(f.layout, &u, path, sizeof path, NULL), GCL_OK);
  cr_assert_str_eq(path, "s.1");
  drop(&f);
}

static void bad_path(const fixture *f, const char *path, gcl_status want, const char *msg) {
  gcl_field out;
  memset(&out, 0x5a, sizeof out);
  gcl_field before = out;
  cr_assert_eq(gcl_layout_field(f->layout, path, &out), want, "%s: %s", path, gcl_last_error());
  cr_assert_str_eq(gcl_last_error(), msg, "%s", path);
  cr_assert(memcmp(&out, &before, sizeof out) == 0, "%s: the output changed", path);
}

Test(fields, bad_paths_name_the_path_and_the_column) {
  fixture f = make("u32 k, " GLOBALS, 90);
  bad_path(&f, "g..x", GCL_ERROR_INVALID_ARGUMENT, "path 'g..x', col 3: expected a member name or index after '.'");
  bad_path(&f, "g.loads[", GCL_ERROR_INVALID_ARGUMENT, "path 'g.loads[', col 9: expected an index after '['");
  bad_path(&f, "g.loads[2", GCL_ERROR_INVALID_ARGUMENT, "path 'g.loads[2', col 10: expected ']' after the index");
  bad_path(&f, "g.loads[99999]", GCL_ERROR_INVALID_ARGUMENT,
           "path 'g.loads[99999]', col 9: index 99999 out of range: 'g.loads' (tensormap[4]) has 4 elements");
  bad_path(&f, "g.n[0]", GCL_ERROR_INVALID_ARGUMENT, "path 'g.n[0]', col 4: 'g.n' (i32) is not an array");
  bad_path(&f, "k.x", GCL_ERROR_NOT_FOUND, "path 'k.x', col 2: 'k' (u32) is not a struct: it has no members");
  bad_path(&f, "g.loads.x", GCL_ERROR_INVALID_ARGUMENT,
           "path 'g.loads.x', col 8: 'g.loads' (tensormap[4]) is not a struct: index an array with [N]");
  bad_path(&f, "g.nope", GCL_ERROR_NOT_FOUND,
           "path 'g.nope', col 3: no member 'nope' in 'g' (struct{tensormap[4] loads, tensormap[4] "
           "stores, f32*[2] bufs, i32 n}) (members: loads, stores, bufs, n)");
  bad_path(&f, "h.n", GCL_ERROR_NOT_FOUND, "path 'h.n', col 1: no parameter named 'h' among 2 parameters");
  bad_path(&f, "7", GCL_ERROR_INVALID_ARGUMENT, "path '7', col 1: parameter 7 out of range: the layout has 2");
  bad_path(&f, "g.9", GCL_ERROR_INVALID_ARGUMENT,
           "path 'g.9', col 3: member 9 out of range: 'g' (struct{tensormap[4] loads, tensormap[4] "
           "stores, f32*[2] bufs, i32 n}) has 4 members");
  bad_path(&f, "", GCL_ERROR_INVALID_ARGUMENT, "path '', col 1: expected a parameter name or index");
  bad_path(&f, "g.n ", GCL_ERROR_INVALID_ARGUMENT, "path 'g.n ', col 4: expected '.', '[' or the end of the path, got ' '");
  bad_path(&f, "g[0]", GCL_ERROR_INVALID_ARGUMENT, "path 'g[0]', col 2: 'g' (struct{tensormap[4] loads, "
           "tensormap[4] stores, f32*[2] bufs, i32 n}) is not an array");
  gcl_field out;
  cr_assert_eq(gcl_layout_field(NULL, "g", &out), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_layout_field(f.layout, NULL, &out), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_layout_field(f.layout, "g", NULL), GCL_ERROR_INVALID_ARGUMENT);
  drop(&f);
}

Test(fields, a_parameter_is_set_when_every_leaf_is) {
  fixture f = make(GLOBALS, 90);
  unsigned char map[128];
  memset(map, 0xab, sizeof map);
  const void *d;
  size_t size;
  char p[32];
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "g.loads[%d]", i);
    gcl_field fl = field(&f, p);
    cr_assert_eq(gcl_args_set_field(f.args, &fl, map, sizeof map), GCL_OK, "%s", gcl_last_error());
    cr_assert(gcl_args_field_is_set(f.args, &fl));
  }
  gcl_field stores = field(&f, "g.stores");
  unsigned char four[512];
  memset(four, 0xcd, sizeof four);
  cr_assert_eq(gcl_args_set_field(f.args, &stores, four, sizeof four), GCL_OK);
  gcl_field b0 = field(&f, "g.bufs[0]"), n = field(&f, "g.n");
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &b0, 0x1000), GCL_OK);
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 'g' ('struct{tensormap[4] loads, tensormap[4] stores, "
                   "f32*[2] bufs, i32 n}'): field 'g.bufs[1]' was never set (12 of its 1044 leaf "
                   "bytes unset; 1 of 1 parameters unset)");
  cr_assert(!gcl_args_is_set(f.args, 0));
  gcl_field b1 = field(&f, "g.bufs[1]");
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &b1, 0x2000), GCL_OK);
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "field 'g.n' was never set"), "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_field_i32(f.args, &n, -7), GCL_OK);
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_OK, "%s", gcl_last_error());
  cr_assert(gcl_args_is_set(f.args, 0));
  const unsigned char *buf = d;
  cr_assert_eq(size, 112 + 1152 - 12 + 12); /* the param's size: no tail trimming of a struct */
  cr_assert_eq(buf[112 + 3 * 128 + 5], 0xab);
  cr_assert_eq(buf[112 + 512 + 300], 0xcd);
  uint64_t p1;
  int32_t nv;
  memcpy(&p1, buf + 112 + 1032, 8);
  memcpy(&nv, buf + 112 + 1040, 4);
  cr_assert_eq(p1, 0x2000);
  cr_assert_eq(nv, -7);
  drop(&f);
}

Test(fields, whole_parameter_setters_still_work) {
  fixture f = make("grid_constant struct{u8 a, u32 b} s, tensormap[3] maps", 90);
  unsigned char raw[8] = {1, 2, 3, 4, 5, 6, 7, 8}, m[128] = {0};
  cr_assert_eq(gcl_args_set(f.args, 0, raw, sizeof raw), GCL_OK);
  cr_assert(gcl_args_is_set(f.args, 0));
  for (size_t e = 0; e < 3; e++) cr_assert_eq(gcl_args_set_element(f.args, 1, e, m, sizeof m), GCL_OK);
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_OK, "%s", gcl_last_error());
  /* element fields agree with the element setter */
  gcl_field e2 = field(&f, "maps[2]");
  cr_assert(gcl_args_field_is_set(f.args, &e2));
  drop(&f);
}

Test(fields, typed_setters_check_the_leaf_type) {
  fixture f = make("struct{bool b, i8 c, u8 d, i16 e, u16 g, f16 h, bf16 i, f32 j, f64 k, u64 l, "
                   "const f32* align(16) src} s", 90);
  gcl_field b = field(&f, "s.b"), h = field(&f, "s.h"), i = field(&f, "s.i"), j = field(&f, "s.j");
  gcl_field src = field(&f, "s.src"), k = field(&f, "s.k");
  cr_assert_eq(gcl_args_set_field_bool(f.args, &b, true), GCL_OK);
  cr_assert_eq(gcl_args_set_field_f16_from_f32(f.args, &h, 1.5f), GCL_OK);
  cr_assert_eq(gcl_args_set_field_bf16_from_f32(f.args, &i, -2.0f), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u32(f.args, &j, 1), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 's' field 's.j' ('f32'): expected a value of the "
                                     "field's type, got u32");
  cr_assert_eq(gcl_args_set_field_f64(f.args, &k, 0.25), GCL_OK);
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &src, 0x1008), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 's' field 's.src' ('const f32* align(16)'): address "
                                     "0x1008 is not 16-byte aligned");
  cr_assert_eq(gcl_args_set_field_i32(f.args, &src, 1), GCL_ERROR_TYPE_MISMATCH);
  gcl_field whole = field(&f, "s");
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &whole, 0x1000), GCL_ERROR_TYPE_MISMATCH);
  const unsigned char *buf = NULL;
  gcl_field all[] = {field(&f, "s.c"), field(&f, "s.d"), field(&f, "s.e"), field(&f, "s.g"),
                     field(&f, "s.l")};
  cr_assert_eq(gcl_args_set_field_i8(f.args, &all[0], -3), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u8(f.args, &all[1], 250), GCL_OK);
  cr_assert_eq(gcl_args_set_field_i16(f.args, &all[2], -300), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u16(f.args, &all[3], 60000), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u64(f.args, &all[4], 1ull << 40), GCL_OK);
  cr_assert_eq(gcl_args_set_field_f32(f.args, &j, 3.25f), GCL_OK);
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &src, 0x1010), GCL_OK);
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_OK, "%s", gcl_last_error());
  buf = (const unsigned char *)d + whole.offset;
  uint16_t hv, iv;
  memcpy(&hv, buf + (h.offset - whole.offset), 2);
  memcpy(&iv, buf + (i.offset - whole.offset), 2);
  cr_assert_eq(buf[0], 1);
  cr_assert_eq(hv, 0x3e00); /* 1.5 in IEEE half */
  cr_assert_eq(iv, 0xc000); /* -2.0 in bfloat16 */
  drop(&f);
}

Test(fields, f16_rounding_matches_the_ieee_conversion) {
  fixture f = make("f16 h, bf16 b", 90);
  struct { float x; uint16_t h, b; } cases[] = {
      {0.0f, 0x0000, 0x0000},     {-0.0f, 0x8000, 0x8000},   {1.0f, 0x3c00, 0x3f80},
      {65504.0f, 0x7bff, 0x4780}, {65520.0f, 0x7c00, 0x4780}, {5.9604645e-8f, 0x0001, 0x3380},
      {1.0009765625f, 0x3c01, 0x3f80}, {1.00048828125f, 0x3c00, 0x3f80}, /* tie to even */
      {INFINITY, 0x7c00, 0x7f80}, {3.0e-8f, 0x0001, 0x3301}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    cr_assert_eq(gcl_args_set_f16_from_f32(f.args, 0, cases[c].x), GCL_OK);
    cr_assert_eq(gcl_args_set_bf16_from_f32(f.args, 1, cases[c].x), GCL_OK);
    const void *d;
    size_t size;
    cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_OK);
    uint16_t h, b;
    memcpy(&h, (const char *)d, 2);
    memcpy(&b, (const char *)d + 2, 2);
    cr_expect_eq(h, cases[c].h, "%g: f16 0x%04x, expected 0x%04x", (double)cases[c].x, h, cases[c].h);
    cr_expect_eq(b, cases[c].b, "%g: bf16 0x%04x, expected 0x%04x", (double)cases[c].x, b, cases[c].b);
  }
  drop(&f);
}

static int deleted;
static void count_delete(DLManagedTensorVersioned *m) { (void)m, deleted++; }

static DLManagedTensorVersioned tensor(float *host, int64_t *shape) {
  DLManagedTensorVersioned t = {0};
  t.version.major = DLPACK_MAJOR_VERSION;
  t.deleter = count_delete;
  t.dl_tensor.data = host;
  t.dl_tensor.device = (DLDevice){kDLCUDA, 0};
  t.dl_tensor.ndim = 1;
  t.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  t.dl_tensor.shape = shape;
  return t;
}

Test(fields, tensors_into_pointer_fields_are_checked_and_owned) {
  fixture f = make("struct{const f32* src, i32* dst, u32 n}[2] jobs", 90);
  float *base = (float *)(uintptr_t)0x10000;
  int64_t shape[1] = {16};
  DLManagedTensorVersioned a = tensor(base, shape), b = tensor(base + 4, shape);
  gcl_field s0 = field(&f, "jobs[0].src"), d1 = field(&f, "jobs[1].dst"), j1 = field(&f, "jobs[1]");
  deleted = 0;
  cr_assert_eq(gcl_args_take_field_dlpack(f.args, &s0, &a), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(deleted, 0);
  cr_assert_eq(gcl_args_take_field_dlpack(f.args, &d1, &b), GCL_ERROR_TENSOR);
  cr_assert_eq(deleted, 1); /* a failed take runs the deleter before returning */
  cr_assert(strstr(gcl_last_error(), "parameter 0 'jobs' field 'jobs[1].dst'"), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "float32"), "%s", gcl_last_error());
  a.dl_tensor.dtype = (DLDataType){kDLInt, 32, 1};
  cr_assert_eq(gcl_args_set_field_dltensor(f.args, &d1, &a.dl_tensor), GCL_OK, "%s", gcl_last_error());
  DLManagedTensorVersioned c = tensor(base, shape);
  c.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  c.dl_tensor.dtype = (DLDataType){kDLInt, 32, 1};
  cr_assert_eq(gcl_args_take_field_dlpack(f.args, &d1, &c), GCL_ERROR_TENSOR);
  cr_assert(strstr(gcl_last_error(), "read-only"), "%s", gcl_last_error());
  cr_assert_eq(deleted, 2);
  /* overwriting the struct holding the taken tensor releases it */
  gcl_field j0 = field(&f, "jobs[0]");
  unsigned char raw[24] = {0};
  cr_assert_eq(gcl_args_set_field(f.args, &j1, raw, sizeof raw), GCL_OK);
  cr_assert_eq(deleted, 2);
  DLManagedTensorVersioned e = tensor(base, shape);
  cr_assert_eq(gcl_args_take_field_dlpack(f.args, &s0, &e), GCL_OK);
  cr_assert_eq(deleted, 3); /* the first taken tensor was replaced */
  cr_assert_eq(gcl_args_set_field(f.args, &j0, raw, sizeof raw), GCL_OK);
  cr_assert_eq(deleted, 4);
  DLManagedTensorVersioned g = tensor(base, shape);
  cr_assert_eq(gcl_args_take_field_dlpack(f.args, &s0, &g), GCL_OK);
  gcl_args_destroy(f.args);
  f.args = NULL;
  cr_assert_eq(deleted, 5);
  drop(&f);
}

Test(fields, fields_of_another_layout_are_refused) {
  fixture f = make(GLOBALS, 90), o = make(GLOBALS, 100);
  gcl_field n = field(&o, "g.n");
  cr_assert_eq(gcl_args_set_field_i32(f.args, &n, 1), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "another layout"), "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_field(f.args, NULL, "x", 1), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "gcl_args_set_field: field is NULL");
  gcl_field nn = field(&f, "g.n");
  cr_assert_eq(gcl_args_set_field(f.args, &nn, "abc", 3), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter 0 'g' field 'g.n' ('i32'): value is 3 bytes, the field is 4 bytes");
  drop(&o);
  drop(&f);
}

typedef struct count_ctx { size_t leaves, bytes, last_end; char first[64], last[64]; } count_ctx;

static int count_leaf(const gcl_field *leaf, const char *path, void *user) {
  count_ctx *c = user;
  if (!c->leaves) snprintf(c->first, sizeof c->first, "%s", path);
  snprintf(c->last, sizeof c->last, "%s", path);
  cr_assert_geq(leaf->offset, c->last_end, "%s: leaves in buffer order", path);
  c->last_end = leaf->offset + leaf->size;
  c->leaves++;
  c->bytes += leaf->size;
  return 0;
}

Test(fields, leaves_are_listed_in_buffer_order_at_any_scale) {
  fixture f = make("u8[32000] blob", 90);
  count_ctx c = {0};
  cr_assert_eq(gcl_layout_visit_leaves(f.layout, count_leaf, &c), GCL_OK);
  cr_assert_eq(c.leaves, 32000);
  cr_assert_str_eq(c.first, "blob[0]");
  cr_assert_str_eq(c.last, "blob[31999]");
  drop(&f);
  fixture p = make("u32 n, struct{u16 a, u8 b}[4000] pairs", 90);
  count_ctx q = {0};
  cr_assert_eq(gcl_layout_visit_leaves(p.layout, count_leaf, &q), GCL_OK);
  cr_assert_eq(q.leaves, 1 + 8000);
  cr_assert_eq(q.bytes, 4 + 4000 * 3);
  cr_assert_str_eq(q.last, "pairs[3999].b");
  /* set every element's leaves but one: the message names it */
  gcl_field a, b;
  char path[32];
  cr_assert_eq(gcl_args_set_u32(p.args, 0, 1), GCL_OK);
  for (int i = 0; i < 4000; i++) {
    snprintf(path, sizeof path, "pairs[%d].a", i);
    a = field(&p, path);
    snprintf(path, sizeof path, "pairs[%d].b", i);
    b = field(&p, path);
    cr_assert_eq(gcl_args_set_field_u16(p.args, &a, (uint16_t)i), GCL_OK);
    if (i != 2718) cr_assert_eq(gcl_args_set_field_u8(p.args, &b, (uint8_t)i), GCL_OK);
  }
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(p.args, &d, &size), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "field 'pairs[2718].b' was never set (1 of its 12000 leaf"),
            "%s", gcl_last_error());
  drop(&p);
  fixture l = make("grid_constant tensormap[255] maps", 90);
  count_ctx m = {0};
  cr_assert_eq(gcl_layout_visit_leaves(l.layout, count_leaf, &m), GCL_OK);
  cr_assert_eq(m.leaves, 255);
  cr_assert_eq(m.bytes, 255 * 128);
  drop(&l);
}

static int stop_after_two(const gcl_field *leaf, const char *path, void *user) {
  (void)leaf, (void)path;
  return ++*(int *)user == 2;
}

Test(fields, the_visitor_stops_when_asked) {
  fixture f = make("u32 a, u32 b, u32 c", 90);
  int n = 0;
  cr_assert_eq(gcl_layout_visit_leaves(f.layout, stop_after_two, &n), GCL_OK);
  cr_assert_eq(n, 2);
  drop(&f);
}

Test(fields, raw_layouts_have_whole_parameters_only) {
  size_t offs[] = {0, 8}, sizes[] = {8, 4};
  gcl_layout *l;
  cr_assert_eq(gcl_layout_create_raw(2, offs, sizes, 90, &l), GCL_OK);
  gcl_field f1;
  cr_assert_eq(gcl_layout_field(l, "1", &f1), GCL_OK);
  cr_assert_eq(f1.offset, 8);
  cr_assert_eq(gcl_layout_field(l, "1.x", &f1), GCL_ERROR_NOT_FOUND);
  gcl_args *a;
  cr_assert_eq(gcl_args_create(l, &a), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u32(a, &f1, 9), GCL_OK);
  gcl_field f0;
  cr_assert_eq(gcl_layout_param_field(l, 0, &f0), GCL_OK);
  cr_assert_eq(gcl_args_set_field_ptr(a, &f0, 0x40), GCL_OK);
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(a, &d, &size), GCL_OK);
  gcl_args_destroy(a);
  gcl_layout_destroy(l);
}

Test(fields, clone_copies_bytes_and_state) {
  fixture f = make("u32 n, grid_constant struct{u32 a, u64 b} s", 90);
  gcl_field a = field(&f, "s.a");
  cr_assert_eq(gcl_args_set_u32(f.args, 0, 5), GCL_OK);
  cr_assert_eq(gcl_args_set_field_u32(f.args, &a, 6), GCL_OK);
  gcl_args *c;
  cr_assert_eq(gcl_args_clone(f.args, &c), GCL_OK);
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(c, &d, &size), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "field 's.b' was never set"), "%s", gcl_last_error());
  gcl_field b = field(&f, "s.b");
  cr_assert_eq(gcl_args_set_field_u64(c, &b, 7), GCL_OK);
  cr_assert_eq(gcl_args_buffer(c, &d, &size), GCL_OK);
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_ERROR_UNSET_ARGUMENT); /* independent */
  gcl_args_destroy(c);
  cr_assert_eq(gcl_args_clone(NULL, &c), GCL_ERROR_INVALID_ARGUMENT);
  drop(&f);
}

Test(fields, top_level_typed_setters_for_every_scalar) {
  fixture f = make("bool a, i8 b, u8 c, i16 d, u16 e, f16 g, bf16 h", 90);
  cr_assert_eq(gcl_args_set_bool(f.args, 0, true), GCL_OK);
  cr_assert_eq(gcl_args_set_i8(f.args, 1, -1), GCL_OK);
  cr_assert_eq(gcl_args_set_u8(f.args, 2, 2), GCL_OK);
  cr_assert_eq(gcl_args_set_i16(f.args, 3, -3), GCL_OK);
  cr_assert_eq(gcl_args_set_u16(f.args, 4, 4), GCL_OK);
  cr_assert_eq(gcl_args_set_f16(f.args, 5, 0x3c00), GCL_OK);
  cr_assert_eq(gcl_args_set_bf16(f.args, 6, 0x3f80), GCL_OK);
  cr_assert_eq(gcl_args_set_u8(f.args, 1, 1), GCL_ERROR_TYPE_MISMATCH);
  cr_assert_eq(gcl_args_set_i8(f.args, 9, 1), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(gcl_last_error(), "parameter index 9 out of range: the layout has 7 parameters");
  const void *d;
  size_t size;
  cr_assert_eq(gcl_args_buffer(f.args, &d, &size), GCL_OK);
  drop(&f);
}

/* gcl_args_field_bytes: a field read back as the device will read it, only when every leaf byte is
 * set; nothing for a wrong size or another layout's field. */
Test(fields, get_field_reads_back_set_fields_only) {
  fixture f = make("struct{u32 a, f32* p} s, u16[3] arr", 90);
  gcl_field a, p, s, arr;
  cr_assert_eq(gcl_layout_field(f.layout, "s.a", &a), GCL_OK);
  cr_assert_eq(gcl_layout_field(f.layout, "s.p", &p), GCL_OK);
  cr_assert_eq(gcl_layout_field(f.layout, "s", &s), GCL_OK);
  cr_assert_eq(gcl_layout_field(f.layout, "arr", &arr), GCL_OK);
  uint32_t x = 0;
  cr_assert_eq(gcl_args_field_bytes(f.args, &a, &x, 4), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert(strstr(gcl_last_error(), "is not set"), "%s", gcl_last_error());
  cr_assert_eq(gcl_args_set_field_u32(f.args, &a, 0xdeadbeef), GCL_OK);
  cr_assert_eq(gcl_args_field_bytes(f.args, &a, &x, 4), GCL_OK);
  cr_assert_eq(x, 0xdeadbeef);
  unsigned char whole[16];
  cr_assert_eq(gcl_args_field_bytes(f.args, &s, whole, sizeof whole), GCL_ERROR_UNSET_ARGUMENT);
  cr_assert_eq(gcl_args_set_field_ptr(f.args, &p, 0x1000), GCL_OK);
  cr_assert_eq(gcl_args_field_bytes(f.args, &s, whole, sizeof whole), GCL_OK, "%s", gcl_last_error());
  uint64_t ptr;
  memcpy(&ptr, whole + 8, 8);
  cr_assert_eq(ptr, 0x1000);
  cr_assert_eq(gcl_args_field_bytes(f.args, &a, &x, 8), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_args_field_bytes(f.args, &a, NULL, 4), GCL_ERROR_INVALID_ARGUMENT);
  fixture o = make("u32 a", 90);
  gcl_field oa;
  cr_assert_eq(gcl_layout_field(o.layout, "a", &oa), GCL_OK);
  cr_assert_eq(gcl_args_field_bytes(f.args, &oa, &x, 4), GCL_ERROR_INVALID_ARGUMENT);
  uint16_t three[3] = {1, 2, 3}, back[3] = {0};
  cr_assert_eq(gcl_args_set_field(f.args, &arr, three, sizeof three), GCL_OK);
  cr_assert_eq(gcl_args_field_bytes(f.args, &arr, back, sizeof back), GCL_OK);
  cr_assert_eq(memcmp(three, back, sizeof back), 0);
  drop(&o);
  drop(&f);
}
