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
  /* Tensor-map cache entries (args.c's tmaps): one per map of a tensormap, a tensormap[N] (of
   * 128-byte elements) or a raw 128-byte parameter; 0 for anything else. */
  size_t tmap_at, tmap_count;
  gcl_field field;       /* the whole parameter as a field */
} gcl__lparam;

const gcl__lparam *gcl__layout_lparam(const gcl_layout *layout, size_t index);
/* The initial set-tracking bitmap (padding bits and the bits past each parameter's end set). */
const unsigned char *gcl__layout_bits(const gcl_layout *layout, size_t *bytes);
size_t gcl__layout_owner_count(const gcl_layout *layout);
/* Tensor-map cache entries of all parameters, and the most of one parameter. */
size_t gcl__layout_tmap_count(const gcl_layout *layout, size_t *widest);

/* field.c: fills field for a sub-field of parameter p at offset rel in it, of type t, owning the
 * owner slots [owner, owner + t's pointer leaves). */
void gcl__field_make(const gcl_layout *layout, const gcl__lparam *p, const gcl__type *t,
                     size_t rel, size_t owner, const char *name, gcl_field *out);
/* Sets bits [from, from + n) of bits. */
void gcl__bits_set(unsigned char *bits, size_t from, size_t n);
/* Sets (1) the bits of leaf bytes of t placed at bit offset `at` of bits. */
void gcl__type_mark_leaves(const gcl__type *t, unsigned char *bits, size_t at);
/* True when field is a whole parameter. */
bool gcl__field_is_whole(const gcl_field *field);
/* "parameter 0 'g'" or "parameter 0 'g' field 'g.loads[3]'" for messages; field may be a whole
 * parameter. Returns buf. */
const char *gcl__field_label(const gcl_field *field, char *buf, size_t cap);
/* Path of the leaf holding byte rel of parameter p ("g.stores[2]"), into buf. */
const char *gcl__leaf_path_at(const gcl_layout *layout, size_t p, size_t rel, char *buf,
                              size_t cap);

#endif
