/* What a layout knows about each parameter beyond the public getters, for args.c (set-tracking,
 * owners) and field.c (paths, leaves). Internal. */
#ifndef GCL_LAYOUT_INTERNAL_H
#define GCL_LAYOUT_INTERNAL_H

#include "types.h"

typedef struct gcl__lparam {
  size_t offset, size, align;
  gcl_param_info info;
  const gcl__type *type; /* NULL for raw layouts */
  /* Set-tracking: one bit per parameter byte, starting at byte bit_at of the layout's bitmap;
   * leaf_bytes of them belong to leaves (the others are padding, preset in the initial map). */
  size_t bit_at, leaf_bytes;
  /* Owner slots (taken DLPack tensors) of the pointer leaves inside, in buffer order. */
  size_t owner_at, owners;
  /* Tensor-map cache slots (tmap_args.c) of the tensormap leaves inside, in buffer order; a raw
   * 128-byte parameter has one. */
  size_t tmap_at, tmap_count;
  gcl_field field;       /* the whole parameter as a field */
} gcl__lparam;

const gcl__lparam *gcl__layout_lparam(const gcl_layout *layout, size_t index);

/* gcl_field's opaque words: where the field is and what it owns, filled by gcl__field_make. */
enum {
  GCL__F_LAYOUT, /* the layout resolved in */
  GCL__F_TYPE,   /* its type tree; NULL for a raw parameter */
  GCL__F_REL,    /* byte offset inside its parameter */
  GCL__F_OWNER,  /* first owner slot (pointer leaves) inside, and */
  GCL__F_OWNERS, /* how many */
  GCL__F_TMAP,   /* first tensor-map slot inside, and */
  GCL__F_TMAPS,  /* how many */
  GCL__F_SPAN    /* maps 128 bytes apart from its start: for element i of a tensormap[N] N - i,
                    for the array itself N, for a lone map 1; 0 when it is no map (nor array) */
};
_Static_assert(GCL__F_SPAN < sizeof(((gcl_field *)0)->opaque) / sizeof(uint64_t), "opaque words");
static inline const gcl_layout *gcl__f_layout(const gcl_field *f) {
  return (const gcl_layout *)(uintptr_t)f->opaque[GCL__F_LAYOUT];
}
static inline const struct gcl__type *gcl__f_type(const gcl_field *f) {
  return (const struct gcl__type *)(uintptr_t)f->opaque[GCL__F_TYPE];
}
static inline size_t gcl__f(const gcl_field *f, int word) { return (size_t)f->opaque[word]; }
/* The initial set-tracking bitmap (padding bits and the bits past each parameter's end set). */
const unsigned char *gcl__layout_bits(const gcl_layout *layout, size_t *bytes);
size_t gcl__layout_owner_count(const gcl_layout *layout);
/* Tensor-map cache slots of all parameters, and the most in one parameter (the longest batch). */
size_t gcl__layout_tmap_count(const gcl_layout *layout, size_t *widest);

/* Kernel-owned layouts (lib/cuda/kernel.c): reference-counted so that args made from a kernel's
 * layout stay valid after its module was destroyed, and are refused by name then.
 * gcl__layout_own makes layout counted with one reference (the kernel's); args take one more
 * each (gcl_args_create, gcl_args_clone) and give it back at gcl_args_destroy; the last
 * gcl__layout_release frees the layout. Both do nothing for a layout never owned (the caller's:
 * gcl_layout_destroy frees those). gcl__layout_orphan records the kernel's name (a string that
 * outlives the layout) when its module is destroyed; gcl__layout_orphan_of returns it, NULL
 * while the kernel lives. Thread-safe. */
void gcl__layout_own(gcl_layout *layout);
void gcl__layout_retain(const gcl_layout *layout);
void gcl__layout_release(const gcl_layout *layout);
void gcl__layout_orphan(const gcl_layout *layout, const char *kernel_name);
const char *gcl__layout_orphan_of(const gcl_layout *layout);

/* Where a walk down a parameter's type tree is: the byte offset and the first owner and
 * tensor-map slots there, and (for a map reached as an array element) the maps from it to the
 * end of its array. */
typedef struct gcl__place {
  size_t rel, owner, tmap, span;
} gcl__place;
/* layout.c: fills field for the sub-field of parameter p of type t (NULL: the raw parameter) at
 * place pl, named name. */
void gcl__field_make(const gcl_layout *layout, const gcl__lparam *p, const gcl__type *t,
                     gcl__place pl, const char *name, gcl_field *out);
/* True when field is a whole parameter. */
bool gcl__field_is_whole(const gcl_field *field);
/* "parameter 0 'g'" or "parameter 0 'g' field 'g.loads[3]'" for messages; field may be a whole
 * parameter. Returns buf. */
const char *gcl__field_label(const gcl_field *field, char *buf, size_t cap);
/* The same for the leaf at byte rel of parameter param (whole: say only the parameter). */
const char *gcl__leaf_label(const gcl_layout *layout, size_t param, size_t rel, bool whole,
                            char *buf, size_t cap);
/* Path of the leaf holding byte rel of parameter p ("g.stores[2]"), into buf. */
const char *gcl__leaf_path_at(const gcl_layout *layout, size_t p, size_t rel, char *buf,
                              size_t cap);

#endif
