/* Parameter types on libffi: construction, canonical text, description, cloning, and matching a
 * user's libffi type against a parameter (gcl__type_match_ffi, at the end). */
#include "types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members of an opaque preset leaf are never read by libffi (its size is non-zero), but a
 * well-formed element list keeps debug builds of libffi happy. */
static ffi_type *leaf_elements[] = {&ffi_type_uint8, NULL};

/* The C-ABI libffi type of a scalar. f16/bf16 are 2-byte integers to libffi (same size and
 * alignment as __half / __nv_bfloat16); bool is one byte. */
static ffi_type *scalar_ffi(gcl_scalar s) {
  switch (s) {
  case GCL_SCALAR_BOOL: case GCL_SCALAR_U8: return &ffi_type_uint8;
  case GCL_SCALAR_I8: return &ffi_type_sint8;
  case GCL_SCALAR_I16: return &ffi_type_sint16;
  case GCL_SCALAR_U16: case GCL_SCALAR_F16: case GCL_SCALAR_BF16: return &ffi_type_uint16;
  case GCL_SCALAR_I32: return &ffi_type_sint32;
  case GCL_SCALAR_U32: return &ffi_type_uint32;
  case GCL_SCALAR_I64: return &ffi_type_sint64;
  case GCL_SCALAR_U64: return &ffi_type_uint64;
  case GCL_SCALAR_F32: return &ffi_type_float;
  case GCL_SCALAR_F64: return &ffi_type_double;
  default: return &ffi_type_uint8;
  }
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static gcl__type *type_new(gcl_param_kind kind) {
  gcl__type *t = gcl__calloc(1, sizeof *t);
  if (t) t->kind = kind;
  return t;
}

/* Points t->ffi at an opaque leaf carrying t's size and alignment as libffi cannot infer them. */
static void use_leaf(gcl__type *t) {
  t->ffi_leaf.size = t->size;
  t->ffi_leaf.alignment = (unsigned short)t->align;
  t->ffi_leaf.type = FFI_TYPE_STRUCT;
  t->ffi_leaf.elements = leaf_elements;
  t->ffi = &t->ffi_leaf;
}

gcl__type *gcl__type_scalar(gcl_scalar s) {
  gcl__type *t = type_new(GCL_PARAM_SCALAR);
  if (!t) return NULL;
  t->scalar = s;
  t->ffi = scalar_ffi(s);
  t->size = t->ffi->size;
  t->align = t->ffi->alignment;
  t->leaf_bytes = t->size;
  return t;
}

gcl__type *gcl__type_pointer(gcl_scalar elem, bool is_const) {
  gcl__type *t = type_new(GCL_PARAM_POINTER);
  if (!t) return NULL;
  t->scalar = elem;
  t->is_const = is_const;
  t->ffi = &ffi_type_pointer;
  t->size = ffi_type_pointer.size;
  t->align = ffi_type_pointer.alignment;
  t->pointee_align = elem == GCL_SCALAR_VOID ? 1 : scalar_ffi(elem)->alignment;
  t->leaf_bytes = t->size;
  t->ptr_leaves = 1;
  return t;
}

gcl__type *gcl__type_tensormap(void) {
  gcl__type *t = type_new(GCL_PARAM_TENSORMAP);
  if (!t) return NULL;
  t->size = t->leaf_bytes = GCL__TENSORMAP_SIZE;
  t->align = GCL__TENSORMAP_ALIGN;
  t->tmap_leaves = 1;
  use_leaf(t);
  return t;
}

gcl__type *gcl__type_bytes(size_t n) {
  gcl__type *t = type_new(GCL_PARAM_BYTES);
  if (!t) return NULL;
  t->count = n;
  t->size = t->leaf_bytes = n;
  t->align = 1;
  use_leaf(t);
  return t;
}

static void free_members(gcl__type **members, char **names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    gcl__type_destroy(members[i]);
    if (names) gcl__free(names[i]);
  }
  gcl__free(members);
  gcl__free(names);
}

gcl__type *gcl__type_struct(gcl__type **members, char **names, size_t n) {
  gcl__type *t = type_new(GCL_PARAM_STRUCT);
  ffi_type **el = gcl__calloc(n + 1, sizeof *el);
  size_t *off = gcl__calloc(n ? n : 1, sizeof *off);
  if (!names) names = gcl__calloc(n ? n : 1, sizeof *names);
  if (!t || !el || !off || !names) {
    gcl__free(t), gcl__free(el), gcl__free(off);
    free_members(members, names, n);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    el[i] = members[i]->ffi;
    t->leaf_bytes += members[i]->leaf_bytes;
    t->ptr_leaves += members[i]->ptr_leaves;
    t->tmap_leaves += members[i]->tmap_leaves;
  }
  t->members = members, t->names = names, t->member_count = n, t->offsets = off;
  t->ffi_elements = el;
  t->ffi_struct.type = FFI_TYPE_STRUCT;
  t->ffi_struct.elements = el;
  /* libffi computes the C-ABI member offsets, size and alignment (tail padding included). */
  if (ffi_get_struct_offsets(FFI_DEFAULT_ABI, &t->ffi_struct, off) != FFI_OK) {
    gcl__type_destroy(t);
    return NULL;
  }
  t->size = t->ffi_struct.size;
  t->align = t->ffi_struct.alignment;
  t->ffi = &t->ffi_struct;
  return t;
}

gcl__type *gcl__type_array(gcl__type *elem, size_t n) {
  gcl__type *t = type_new(GCL_PARAM_ARRAY);
  if (!t) {
    gcl__type_destroy(elem);
    return NULL;
  }
  t->elem = elem;
  t->count = n;
  t->size = elem->size * n;
  t->leaf_bytes = elem->leaf_bytes * n;
  t->ptr_leaves = elem->ptr_leaves * n;
  t->tmap_leaves = elem->tmap_leaves * n;
  t->align = elem->align;
  t->scalar = elem->scalar;
  t->is_const = elem->is_const;
  t->pointee_align = elem->pointee_align;
  use_leaf(t);
  return t;
}

void gcl__type_set_align(gcl__type *t, size_t n) {
  t->explicit_align = n;
  if (t->kind == GCL_PARAM_POINTER) {
    t->pointee_align = n; /* the data's alignment; the pointer itself stays 8 */
    return;
  }
  t->align = n;
  t->size = align_up(t->size, n); /* as in C: size is a multiple of alignment */
  if (t->ffi->alignment != n || t->ffi->size != t->size) use_leaf(t);
}

void gcl__type_destroy(gcl__type *t) {
  if (!t) return;
  gcl__type_destroy(t->elem);
  if (t->kind == GCL_PARAM_STRUCT) free_members(t->members, t->names, t->member_count);
  gcl__free(t->offsets);
  gcl__free(t->ffi_elements);
  gcl__free(t);
}


/* Appends formatted text at *len, never writing past cap; *len counts the full length. */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) GCL__PRINTF(4, 5);
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = buf && *len < cap ? buf + *len : NULL;
  int n = vsnprintf(dst, dst ? cap - *len : 0, fmt, ap);
  va_end(ap);
  if (n > 0) *len += (size_t)n;
}

void gcl__type_format(const gcl__type *t, char *buf, size_t cap, size_t *len) {
  switch (t->kind) {
  case GCL_PARAM_SCALAR: put(buf, cap, len, "%s", gcl__scalar_name(t->scalar)); break;
  case GCL_PARAM_POINTER:
    put(buf, cap, len, "%s%s*", t->is_const ? "const " : "", gcl__scalar_name(t->scalar));
    break;
  case GCL_PARAM_TENSORMAP: put(buf, cap, len, "tensormap"); break;
  case GCL_PARAM_BYTES: put(buf, cap, len, "bytes(%zu)", t->count); break;
  case GCL_PARAM_STRUCT:
    put(buf, cap, len, "struct{");
    for (size_t i = 0; i < t->member_count; i++) {
      if (i) put(buf, cap, len, ", ");
      gcl__type_format(t->members[i], buf, cap, len);
      if (t->names[i]) put(buf, cap, len, " %s", t->names[i]);
    }
    put(buf, cap, len, "}");
    break;
  case GCL_PARAM_ARRAY:
    gcl__type_format(t->elem, buf, cap, len);
    put(buf, cap, len, "[%zu]", t->count);
    return;
  }
  if (t->explicit_align) put(buf, cap, len, " align(%zu)", t->explicit_align);
}

const char *gcl__type_name(const gcl__type *t, char *buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  gcl__type_format(t, buf, cap, &len);
  return buf;
}

long gcl__type_member(const gcl__type *t, const char *name, size_t len) {
  for (size_t i = 0; i < t->member_count; i++) {
    const char *n = t->names[i];
    if (n && strlen(n) == len && !memcmp(n, name, len)) return (long)i;
  }
  return -1;
}

void gcl__type_describe(const gcl__type *t, gcl_param_info *info) {
  info->kind = t->kind;
  info->elem_kind = t->kind == GCL_PARAM_ARRAY ? t->elem->kind : t->kind;
  info->scalar = t->scalar;
  info->is_const = t->is_const;
  info->size = t->size;
  info->align = t->align;
  info->count = t->kind == GCL_PARAM_ARRAY ? t->count : 0;
  info->elem_size = t->kind == GCL_PARAM_ARRAY ? t->elem->size : t->size;
  info->pointee_align = t->pointee_align;
}

/* --- a user's libffi type against a parameter ------------------------------------------- */

#define FFI_MAX_DEPTH 64

/* Size and alignment of u as libffi would compute them, without writing to u (ffi_prep_cif and
 * ffi_get_struct_offsets fill in size 0 structs; the caller's type is const). */
static bool ffi_measure(const ffi_type *u, size_t *size, size_t *align, int depth) {
  if (!u || depth > FFI_MAX_DEPTH || u->type == FFI_TYPE_VOID) return false;
  if (u->size) {
    *size = u->size, *align = u->alignment ? u->alignment : 1;
    return true;
  }
  if (u->type != FFI_TYPE_STRUCT || !u->elements || !u->elements[0]) return false;
  size_t s = 0, a = 1;
  for (ffi_type *const *e = u->elements; *e; e++) {
    size_t es, ea;
    if (!ffi_measure(*e, &es, &ea, depth + 1)) return false;
    s = align_up(s, ea) + es;
    a = ea > a ? ea : a;
  }
  *size = align_up(s, a), *align = a;
  return true;
}

static bool match(const gcl__type *t, const ffi_type *u, char *why, size_t cap, int depth);

/* Matches the members of t (n of them, at offs) against u's element list. An array member may
 * be one element of its size or, libffi's convention for arrays, count consecutive elements. */
static bool match_members(gcl__type *const *ms, const size_t *offs, size_t n, ffi_type *const *el,
                          char *why, size_t cap, int depth) {
  size_t off = 0, k = 0, es, ea;
  for (size_t i = 0; i < n; i++) {
    const gcl__type *m = ms[i], *want = m;
    size_t reps = 1;
    if (m->kind == GCL_PARAM_ARRAY && el[k] && ffi_measure(el[k], &es, &ea, depth) && es != m->size)
      reps = m->count, want = m->elem;
    for (size_t r = 0; r < reps; r++, k++) {
      if (!el[k] || !ffi_measure(el[k], &es, &ea, depth))
        return snprintf(why, cap, "the libffi struct has fewer members than expected (%zu)", k), false;
      off = align_up(off, ea);
      if (off != offs[i] + r * want->size)
        return snprintf(why, cap, "libffi member %zu is at offset %zu, expected %zu", k, off,
                        offs[i] + r * want->size), false;
      if (!match(want, el[k], why, cap, depth + 1)) return false;
      off += es;
    }
  }
  if (el[k]) return snprintf(why, cap, "the libffi struct has more than %zu members", k), false;
  return true;
}

static bool match(const gcl__type *t, const ffi_type *u, char *why, size_t cap, int depth) {
  size_t s, a;
  char name[128];
  if (!ffi_measure(u, &s, &a, depth))
    return snprintf(why, cap, "the libffi type is malformed (void, NULL or empty struct)"), false;
  if (s != t->size || a != t->align)
    return snprintf(why, cap, "size %zu align %zu, expected size %zu align %zu for '%s'", s, a,
                    t->size, t->align, gcl__type_name(t, name, sizeof name)), false;
  bool u_struct = u->type == FFI_TYPE_STRUCT && u->elements && u->elements[0];
  if (t->kind == GCL_PARAM_STRUCT && u->type != FFI_TYPE_STRUCT)
    return snprintf(why, cap, "a libffi scalar for '%s'", gcl__type_name(t, name, sizeof name)), false;
  if (!u_struct) return true; /* a libffi scalar or pointer: size and alignment agree */
  if (t->kind == GCL_PARAM_STRUCT)
    return match_members(t->members, t->offsets, t->member_count, u->elements, why, cap, depth);
  if (t->kind == GCL_PARAM_ARRAY) { /* one element of the array's shape, or count elements */
    gcl__type *self[1] = {(gcl__type *)t};
    size_t zero[1] = {0};
    return match_members(self, zero, 1, u->elements, why, cap, depth + 1);
  }
  return true; /* a scalar, pointer, tensormap or bytes described as a struct of the same shape */
}

bool gcl__ffi_measure(const ffi_type *u, size_t *size, size_t *align) {
  return ffi_measure(u, size, align, 0);
}

bool gcl__type_match_ffi(const gcl__type *t, const ffi_type *u, char *why, size_t cap) {
  return match(t, u, why, cap, 0);
}

/* --- The leaf bitmap of a type (which bytes are not padding): the layout presets set-tracking
 * from it. */

/* Sets bits [from, from + n) of bits. */
static void bits_set(unsigned char *bits, size_t from, size_t n) {
  size_t i = from, end = from + n;
  for (; i < end && i % 8; i++) bits[i / 8] |= (unsigned char)(1u << (i % 8));
  if (end - i >= 8) {
    memset(bits + i / 8, 0xff, (end - i) / 8);
    i += (end - i) / 8 * 8;
  }
  for (; i < end; i++) bits[i / 8] |= (unsigned char)(1u << (i % 8));
}

void gcl__type_mark_leaves(const gcl__type *t, unsigned char *bits, size_t at) {
  switch (t->kind) {
  case GCL_PARAM_STRUCT:
    for (size_t i = 0; i < t->member_count; i++)
      gcl__type_mark_leaves(t->members[i], bits, at + t->offsets[i]);
    return;
  case GCL_PARAM_ARRAY:
    if (t->elem->leaf_bytes == t->elem->size) { /* no padding inside: one run */
      bits_set(bits, at, t->size);
      return;
    }
    for (size_t i = 0; i < t->count; i++) gcl__type_mark_leaves(t->elem, bits, at + i * t->elem->size);
    return;
  default: /* a leaf's own bytes; an align(N) above its natural size is padding */
    bits_set(bits, at, t->leaf_bytes);
  }
}
