/* The seam between args.c (buffers, slots) and args_dlpack.c (tensors into pointer slots), and
 * what the launch path reads. Internal. */
#ifndef GCL_ARGS_INTERNAL_H
#define GCL_ARGS_INTERNAL_H

#include "internal.h"
#include "layout_internal.h"
#include "tmap_plan.h"

/* Releases an owned object (a taken DLPack tensor); called exactly once. */
typedef void (*gcl__release_fn)(void *owner);

/* Checks that field is a pointer field of args and describes it; *device_id gets the device
 * the args are restricted to (-1: any). Records a failure naming fn (the public function) and
 * the field otherwise. Changes nothing. */
gcl_status gcl__args_pointer_field(const gcl_args *args, const gcl_field *field, const char *fn,
                                   gcl_param_info *info, int *device_id);
/* Stores address into pointer field and marks it set. The field's previous owner, if any, is
 * released after the store; (release, owner) -- release may be NULL -- becomes its owner,
 * released when the field is next overwritten (by any setter) or when args is destroyed. Cannot
 * fail: call it only after every check passed. */
void gcl__args_store_field_pointer(gcl_args *args, const gcl_field *field, uint64_t address,
                                   gcl__release_fn release, void *owner);

typedef struct gcl__owner_slot {
  gcl__release_fn release; /* NULL: the slot owns nothing */
  void *owner;
} gcl__owner_slot;

/* Visible here so that the launch path reads it inline (no calls, no PLT). Only args.c and
 * tmap_args.c (with its inline half below) change it; lib/cuda/tmap_driver.c executes plans into
 * tspace and hands the commit to tmap_args.c. */
struct gcl_args {
  const gcl_layout *layout;
  size_t count, size, unset, bit_bytes, owner_count;
  int device_id;
  size_t *unset_bytes;    /* per parameter: leaf bytes not yet set (0: the parameter is set) */
  void **ptrs;            /* kernelParams: one pointer per parameter into data */
  gcl__owner_slot *owners;/* per pointer leaf, in buffer order (layout's owner_at) */
  gcl__tmap_entry *tmaps; /* per tensormap leaf, in buffer order (layout's tmap_at) */
  const struct gcl__lparam *lparams; /* the layout's parameters (gcl__layout_lparam(layout, 0)),
                             so that the setters find one without a call */
  unsigned char *bits;    /* set-tracking; starts as the layout's initial bitmap */
  unsigned char *data;    /* BUFFER_ALIGN-aligned, size bytes */
  gcl__tmap_space tspace; /* plans of up to the parameter with the most maps (tmap_plan.h):
                             batches land here first, so that a failure changes nothing */
  void *block;            /* what calloc returned; args sit at block + up to BUFFER_ALIGN */
};

/* For the launch path, no checks: the packed buffer (exact size), and an array of one pointer per
 * parameter into that buffer (for cuLaunchKernel's kernelParams). Valid while args lives. */
static inline const void *gcl__args_data(const gcl_args *args) { return args->data; }
static inline void **gcl__args_param_pointers(const gcl_args *args) { return args->ptrs; }
/* Number of parameters never set (0 when the buffer is complete). O(1). */
static inline size_t gcl__args_unset_count(const gcl_args *args) { return args->unset; }


/* Marks bytes [rel, rel + n) of parameter param set (set-tracking). Cannot fail. */
void gcl__args_mark(gcl_args *args, size_t param, size_t rel, size_t n);

/* --- the tensor-map cache (tmap_args.c; lib/cuda/tmap_driver.c encodes and re-points) --------- */

/* Why no run of n maps starts at first: GCL_ERROR_INVALID_ARGUMENT (NULL first, a field of
 * another layout, maps past the end of first's array) or GCL_ERROR_TYPE_MISMATCH (no tensormap
 * leaf), messages naming fn and the field. Failure paths only. */
gcl_status gcl__args_tmap_run_error(const gcl_args *args, const gcl_field *first, size_t n,
                                    const char *fn);
/* The run of args' maps from first, a field gcl__args_tmap_run accepted. */
static inline void gcl__args_tmap_run_at(gcl_args *args, const gcl_field *first,
                                         gcl__tmap_run *run) {
  run->map = args->data + first->offset;
  run->entry = args->tmaps + gcl__f(first, GCL__F_TMAP);
  run->who = (gcl__tmap_who){.field = first}; /* a message reads the rest from the field */
}
/* Maps first ... first + n - 1 (n >= 1) of args into *run; else gcl__args_tmap_run_error.
 * Inline: the one-map calls are this, their checks and the driver call. Changes nothing. */
static inline gcl_status gcl__args_tmap_run(gcl_args *args, const gcl_field *first, size_t n,
                                            const char *fn, gcl__tmap_run *run) {
  if (!first || gcl__f_layout(first) != args->layout || first->param >= args->count ||
      n - 1 >= gcl__f(first, GCL__F_SPAN)) /* n = 0 wraps: refused too */
    return GCL__REFUSED_IF_CONST(n, gcl__args_tmap_run_error(args, first, n, fn));
  gcl__args_tmap_run_at(args, first, run);
  return GCL_OK;
}
/* After the plan was executed: commits it (gcl__tmap_plan_commit) and marks the maps set. Cannot
 * fail. Inline: no call on the way. */
__attribute__((always_inline)) static inline void
gcl__args_tmap_commit(gcl_args *args, const gcl__tmap_plan *plan, const gcl__tmap_what *what) {
  gcl__tmap_plan_commit(plan, what);
  if (!plan->encodes) return;
  const gcl_field *first = plan->run->who.field;
  if (args->unset_bytes[first->param]) /* set-tracking is all that is left */
    gcl__args_mark(args, first->param, gcl__f(first, GCL__F_REL), plan->n * GCL_TENSORMAP_BYTES);
}
/* Forgets slots [slot, slot + n): raw bytes were written over them. Cannot fail. */
void gcl__args_tmap_forget(gcl_args *args, size_t slot, size_t n);

#endif
