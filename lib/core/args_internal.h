/* The seam between args.c (buffers, slots) and args_dlpack.c (tensors into pointer slots), and
 * what the launch path reads. Internal. */
#ifndef GCL_ARGS_INTERNAL_H
#define GCL_ARGS_INTERNAL_H

#include "internal.h"
#include "tmap.h"

/* Releases an owned object (a taken DLPack tensor); called exactly once. */
typedef void (*gcl__release_fn)(void *owner);

/* Checks that index names a pointer parameter of args and describes it; *device_id gets the
 * device the args are restricted to (-1: any). Records a failure message naming the parameter
 * otherwise. Changes nothing. */
gcl_status gcl__args_pointer_param(const gcl_args *args, size_t index, gcl_param_info *info,
                                   int *device_id, const char *fn); /* fn: the public function */

/* Stores address into pointer slot index and marks it set. The slot's previous owner, if any, is
 * released after the store; (release, owner) -- release may be NULL -- becomes the slot's owner,
 * released when the slot is next overwritten (by any setter) or when args is destroyed. Cannot
 * fail: call it only after every check passed. */
void gcl__args_store_pointer(gcl_args *args, size_t index, uint64_t address,
                             gcl__release_fn release, void *owner);

/* The field versions: fn names the public function in messages. */
gcl_status gcl__args_pointer_field(const gcl_args *args, const gcl_field *field, const char *fn,
                                   gcl_param_info *info, int *device_id);
void gcl__args_store_field_pointer(gcl_args *args, const gcl_field *field, uint64_t address,
                                   gcl__release_fn release, void *owner);
/* The whole parameter index as a field (owned by the layout; index must be in range). */
const gcl_field *gcl__args_param_field(const gcl_args *args, size_t index);

/* What the last encode into one tensor map of the buffer described (tensormap.c's refresh and
 * replace-address paths read it): the key of its description without the address, and the
 * address. An all-zero key: the bytes there were not encoded by gclaunch (never set, or
 * overwritten by a raw setter), so only a full encode may write there. 72 bytes per map of a
 * tensormap, tensormap[N] or raw 128-byte parameter. */
typedef struct gcl__tmap_entry {
  uint64_t address; /* first: the replace path reads it with key.w[2] (valid, alignment), so */
  gcl__tmap_key key;/* both sit in the first 32 bytes, mostly one cache line */
} gcl__tmap_entry;

typedef struct gcl__owner_slot {
  gcl__release_fn release; /* NULL: the slot owns nothing */
  void *owner;
} gcl__owner_slot;

/* Visible here so that the launch path reads it inline (no calls, no PLT). Only args.c and
 * tensormap.c write it. */
struct gcl_args {
  const gcl_layout *layout;
  size_t count, size, unset, bit_bytes, owner_count;
  int device_id;
  uint64_t fingerprint;   /* gcl__layout_fingerprint(layout), made at creation */
  size_t *unset_bytes;    /* per parameter: leaf bytes not yet set (0: the parameter is set) */
  void **ptrs;            /* kernelParams: one pointer per parameter into data */
  gcl__owner_slot *owners;/* per pointer leaf, in buffer order (layout's owner_at) */
  gcl__tmap_entry *tmaps; /* per map of the tensor-map parameters (layout's tmap_at) */
  gcl__tmap_snap *snaps;  /* per map, beside tmaps: the refresh fast path's inputs (tmap.h);
                             valid only while its entry is, reset by every other writer */
  const struct gcl__lparam *lparams; /* the layout's parameters (gcl__layout_lparam(layout, 0)),
                             so that the map calls find a slot without a call */
  unsigned char *bits;    /* set-tracking; starts as the layout's initial bitmap */
  unsigned char *data;    /* BUFFER_ALIGN-aligned, size bytes */
  unsigned char *scratch; /* 128 bytes per element of the largest tensormap[N], and */
  gcl__tmap_entry *scratch_entries; /* one entry each: batch encodes land here first, so that a
                             failure changes nothing */
  void *block;            /* what calloc returned; args sit at block + up to BUFFER_ALIGN */
};

/* For the launch path, no checks: the packed buffer (exact size), and an array of one pointer per
 * parameter into that buffer (for cuLaunchKernel's kernelParams). Valid while args lives. */
static inline const void *gcl__args_data(const gcl_args *args) { return args->data; }
static inline void **gcl__args_param_pointers(const gcl_args *args) { return args->ptrs; }
/* Number of parameters never set (0 when the buffer is complete). O(1). */
static inline size_t gcl__args_unset_count(const gcl_args *args) { return args->unset; }

/* A 64-bit digest of a layout's parameter count, offsets and sizes (FNV-1a over them), so that
 * the launch path compares two layouts in O(1): equal layouts have equal fingerprints. */
uint64_t gcl__layout_fingerprint(const gcl_layout *layout);

/* The tensor-map slot(s) of parameter index: elements [element, element + n) of a
 * tensormap[N], or element 0 (n 1) of a tensormap or 128-byte raw parameter. On success *map is
 * the first map's bytes in the buffer (128 apart) and *entry its cache entry (consecutive); who
 * gets the parameter's name pieces for messages. Records a failure naming the parameter
 * otherwise; changes nothing. */
gcl_status gcl__args_tmap_slot(gcl_args *args, size_t index, size_t element, size_t n,
                               gcl__tmap_who *who, unsigned char **map, gcl__tmap_entry **entry);
/* After maps [element, element + n) of parameter index were written (and their entries): marks
 * them set and releases owners inside them. Cannot fail. */
void gcl__args_tmap_mark(gcl_args *args, size_t index, size_t element, size_t n);
/* Marks maps [element, element + n) of parameter index as having no refresh snapshot: every
 * writer of their entries but the refresh calls does this. Cannot fail. */
void gcl__args_tmap_unsnap(gcl_args *args, size_t index, size_t element, size_t n);

#endif
