/* Parameter types: the tree a signature is parsed into, with C-ABI sizes, alignments and struct
 * member offsets from libffi, plus gclaunch's own over-aligned types (tensormap, bytes(N)
 * align(A), align(A) on anything) that libffi cannot describe. Internal; tests and the
 * differential test may read these trees (gcl__signature_type) to emit matching CUDA C++. */
#ifndef GCL_TYPES_H
#define GCL_TYPES_H

#include "internal.h"

#include <ffi.h>

#define GCL__TENSORMAP_SIZE 128
#define GCL__TENSORMAP_ALIGN 128
/* No single type may be larger than this (keeps size arithmetic far from overflow). */
#define GCL__TYPE_MAX_BYTES ((size_t)1 << 30)

typedef struct gcl__type gcl__type;
struct gcl__type {
  gcl_param_kind kind;   /* SCALAR POINTER TENSORMAP BYTES STRUCT ARRAY */
  gcl_scalar scalar;     /* SCALAR: the type; POINTER: the element type (VOID for void*) */
  bool is_const;         /* POINTER: pointer to const */
  size_t size;           /* by value, rounded up to align */
  size_t align;          /* by value, after align(N) */
  size_t explicit_align; /* the N of align(N) as written; 0 when absent */
  size_t count;          /* ARRAY: element count; BYTES: N of bytes(N); else 0 */
  size_t pointee_align;  /* POINTER: align(N) or the element type's alignment */
  gcl__type *elem;       /* ARRAY: the element type */
  gcl__type **members;   /* STRUCT: member types */
  char **names;          /* STRUCT: member names (an entry is NULL for an unnamed member) */
  size_t *offsets;       /* STRUCT: member offsets (from ffi_get_struct_offsets) */
  size_t member_count;   /* STRUCT */
  /* Leaves (scalars, pointers, tensor maps, bytes) inside the type, for fields and set-tracking:
   * the bytes they cover (size minus padding) and how many of them are pointers (the slots a
   * taken DLPack tensor may own). */
  size_t leaf_bytes;
  size_t ptr_leaves;
  /* Tensor maps inside (tensormap leaves, in buffer order): each has a cache slot in the args
   * (tmap_args.c), numbered like the owner slots of pointers. */
  size_t tmap_leaves;
  /* libffi view. `ffi` is what an enclosing struct sees: one of libffi's predefined types, the
   * computed struct (`ffi_struct`), or `ffi_leaf`, an opaque FFI_TYPE_STRUCT whose size and
   * alignment are preset (libffi trusts preset non-zero sizes of members, which is how
   * alignments it cannot infer reach it). */
  ffi_type *ffi;
  ffi_type ffi_struct;
  ffi_type ffi_leaf;
  ffi_type **ffi_elements; /* STRUCT: member_count + 1, NULL-terminated */
};

/* The grammar's scalar names and C-ABI sizes: the public gcl_scalar_name / gcl_scalar_size. */
#define gcl__scalar_name gcl_scalar_name
#define gcl__scalar_size gcl_scalar_size

/* Constructors. Each returns NULL when out of memory (and frees what it was given). */
gcl__type *gcl__type_scalar(gcl_scalar s);
gcl__type *gcl__type_pointer(gcl_scalar elem, bool is_const);
gcl__type *gcl__type_tensormap(void);
gcl__type *gcl__type_bytes(size_t n);
/* Takes ownership of members[0..n) and of names[0..n) (each entry NULL or a malloc'd string;
 * names itself may be NULL: all unnamed), and of both arrays (allocated by malloc). */
gcl__type *gcl__type_struct(gcl__type **members, char **names, size_t n);
/* Takes ownership of elem. The caller checked elem->size * n <= GCL__TYPE_MAX_BYTES. */
gcl__type *gcl__type_array(gcl__type *elem, size_t n);
/* Applies align(n) (a power of two; the parser checked it is allowed): for pointers it sets the
 * pointee alignment, for by-value types the alignment and rounds the size up. */
void gcl__type_set_align(gcl__type *t, size_t n);
void gcl__type_destroy(gcl__type *t);

/* Canonical text of t, appended to buf at *len (never beyond cap; *len counts everything). */
void gcl__type_format(const gcl__type *t, char *buf, size_t cap, size_t *len);
/* Canonical spelling of t into a small buffer (for messages; truncated if long). */
const char *gcl__type_name(const gcl__type *t, char *buf, size_t cap);

/* Index of the member called name (len bytes, not NUL-terminated) of struct t; -1 if none. */
long gcl__type_member(const gcl__type *t, const char *name, size_t len);

/* Fills the type fields of info (not name / grid_constant). */
void gcl__type_describe(const gcl__type *t, gcl_param_info *info);

/* Checks that the libffi type u lays out exactly like t (size, alignment, and recursively the
 * member offsets). On a mismatch returns false and writes why into why. u is not modified. */
bool gcl__type_match_ffi(const gcl__type *t, const ffi_type *u, char *why, size_t cap);

/* Size and alignment libffi would give u, computed without modifying u; false if malformed. */
bool gcl__ffi_measure(const ffi_type *u, size_t *size, size_t *align);

/* The type tree of parameter index (NULL when out of range). Owned by sig. */
const gcl__type *gcl__signature_type(const gcl_signature *sig, size_t index);
/* sig, shared: one more gcl_signature_destroy is needed to free it (signatures never change
 * after parsing, so a layout holds the caller's instead of a copy). Thread-safe. */
gcl_signature *gcl__signature_share(const gcl_signature *sig);

/* Sets (1) the bits of leaf bytes of t placed at bit offset `at` of bits (types.c). */
void gcl__type_mark_leaves(const gcl__type *t, unsigned char *bits, size_t at);

#endif
