/* Tensor-map batches, planned (tmap_plan.h), and the tensor-map cache of args: one slot per
 * tensormap leaf of the layout (top level, in arrays, in structs, in arrays of structs), numbered
 * in buffer order when the layout is made. A slot remembers where its map points and the inputs
 * gclaunch last encoded it from (tmap.h's snapshot), so that a plan re-points instead of
 * re-encoding. The plan is made here: every check, the cache read and every failure message but
 * the driver's own; lib/cuda/tensormap.c executes it and the commit (tmap_plan.h, and
 * args_internal.h for args) changes the maps and slots. Here too: forgetting slots when raw bytes
 * are written over their maps. */
#include "args_internal.h" /* and layout_internal.h */

#include <inttypes.h>
#include <string.h>

gcl_status gcl__args_tmap_run_error(const gcl_args *a, const gcl_field *f, size_t n,
                                    const char *fn) {
  if (!f) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: first is NULL", fn);
  if (gcl__f_layout(f) != a->layout || f->param >= a->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: the field was resolved in another layout "
                     "than the args' (a field belongs to the layout given to gcl_layout_field)", fn);
  char l[768];
  gcl__field_label(f, l, sizeof l);
  size_t span = gcl__f(f, GCL__F_SPAN);
  if (!span)
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "%s: %s is no tensor map (%zu bytes, %s): expected "
                     "a tensormap leaf or an array of them", fn, l, f->size,
                     f->info.kind == GCL_PARAM_STRUCT ? "a struct: name one of its maps" : "not a map");
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: n = %zu maps from here, but only %zu lie "
                   "from here to the end of its array (a map in no array counts as one)", fn, l,
                   n, span);
}

void gcl__args_tmap_forget(gcl_args *args, size_t slot, size_t n) {
  for (size_t i = slot; i < slot + n; i++) args->tmaps[i].snap.ndim = 0;
}

/* --- the plan ------------------------------------------------------------------------------ */

__attribute__((noinline)) static gcl_status batch_error(size_t n, const DLTensor *const *tensors,
                                                        const gcl_tensormap_options *options,
                                                        size_t options_count, unsigned flags,
                                                        const char *fn) {
  if (!tensors)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: tensors: expected %zu tensors, got NULL", fn, n);
  if (!options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options: expected a pointer, got NULL", fn);
  if (options_count != 1 && options_count != n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options_count = %zu: expected 1 (the same "
                     "options for every map) or n = %zu", fn, options_count, n);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: flags = 0x%x: expected 0 or "
                   "GCL_TENSORMAP_REFRESH (0x1)", fn, flags);
}

__attribute__((noinline)) static gcl_status device_error(const gcl__tmap_run *run, size_t i,
                                                         gcl__tmap_device dev, const DLTensor *t) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  if (dev.sm < 90)
    return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                          "device %d is sm_%d: tensor maps need sm_90 or later", dev.device, dev.sm);
  return gcl__tmap_fail(&who, GCL_ERROR_TENSOR, "tensor is on CUDA device %d, the context on "
                        "device %d", (int)t->device.device_id, dev.device);
}

/* Field by field: a compound literal of the whole plan becomes `rep stos`, which costs more than
 * planning a one-map re-point. */
static inline void plan_fill(gcl__tmap_plan *p, size_t n,
                             size_t encodes, size_t repoints, const gcl__tmap_space *space,
                             const DLTensor *const *tensors, const gcl_tensormap_options *options,
                             size_t options_count) {
  p->n = n;
  p->encodes = encodes;
  p->repoints = repoints;
  p->space = space;
  p->tensors = tensors;
  p->options = options;
  p->options_count = options_count;
}

static inline bool batch_ok(size_t n, const DLTensor *const *tensors,
                            const gcl_tensormap_options *options, size_t options_count,
                            unsigned flags) {
  return tensors && options && (options_count == 1 || options_count == n) &&
         !(flags & ~GCL_TENSORMAP_REFRESH);
}

static inline bool device_ok(gcl__tmap_device dev, const DLTensor *t) {
  return gcl__tmap_device_ok(dev.device, t);
}

/* The plans' bodies, inlined into the args' entry points (one call less on the hot path) and
 * behind gcl__tmap_plan_set / gcl__tmap_plan_repoint for the tables. */
__attribute__((always_inline)) static inline gcl_status
plan_set(gcl__tmap_plan *plan, const gcl__tmap_space *space, gcl__tmap_device dev, size_t n,
                              const DLTensor *const *tensors,
                              const gcl_tensormap_options *options, size_t options_count,
                              unsigned flags, const char *fn) {
  const gcl__tmap_run *run = &plan->run;
  if (!batch_ok(n, tensors, options, options_count, flags))
    return batch_error(n, tensors, options, options_count, flags, fn);
  if (dev.sm < 90) return device_error(run, 0, dev, NULL);
  (void)flags; /* GCL_TENSORMAP_REFRESH or not: every set encodes only what is new */
  const size_t ostep = options_count == 1 ? 0 : 1;
  size_t encodes = 0, repoints = 0;
  for (size_t i = 0; i < n; i++) {
    const DLTensor *t = tensors[i];
    const gcl_tensormap_options *o = options + i * ostep;
    const gcl__tmap_entry *e = &run->entry[i];
    uint64_t a;
    if (gcl__tmap_snap_match(&e->snap, t, o) &&
        gcl__tmap_snap_address(t, e->snap.align, &a) && device_ok(dev, t)) {
      unsigned op = a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT;
      space->ops[i] = (unsigned char)op;
      space->addresses[i] = a;
      repoints += op;
      continue;
    }
    gcl__tmap_who who = gcl__tmap_run_who(run, i);
    gcl_tensormap_desc *d = &space->descs[i];
    gcl_status s = gcl__tmap_translate(t, o, &who, d);
    if (s != GCL_OK) return s;
    if (!device_ok(dev, t)) return device_error(run, i, dev, t);
    space->ops[i] = GCL__TMAP_ENCODE;
    space->addresses[i] = d->address;
    encodes++;
  }
  plan_fill(plan, n, encodes, repoints, space, tensors, options, options_count);
  return GCL_OK;
}

__attribute__((noinline)) static gcl_status addresses_null(size_t n, const char *fn) {
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: addresses: expected %zu addresses, got NULL",
                   fn, n);
}

__attribute__((noinline)) static gcl_status repoint_refused(const gcl__tmap_run *run, size_t i,
                                                            const uint64_t *addresses) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  const gcl__tmap_snap *snap = &run->entry[i].snap;
  if (!snap->ndim)
    return gcl__tmap_fail(&who, GCL_ERROR_UNSET_ARGUMENT,
                          "no tensor map encoded by gclaunch here to re-point (encode it with "
                          "gcl_args_set_tensormaps or gcl_tensormap_table_set first; raw setters "
                          "forget it)");
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                        "address 0x%llx: TMA needs a nonzero %u-byte aligned global address "
                        "below 2^57 = 0x200000000000000",
                        (unsigned long long)addresses[i], snap->align);
}

__attribute__((always_inline)) static inline gcl_status
plan_repoint(gcl__tmap_plan *plan, const gcl__tmap_space *space, size_t n,
             const uint64_t *addresses, const char *fn) {
  const gcl__tmap_run *run = &plan->run;
  if (!addresses) return addresses_null(n, fn);
  size_t repoints = 0;
  for (size_t i = 0; i < n; i++) {
    const gcl__tmap_entry *e = &run->entry[i];
    uint64_t a = addresses[i];
    if (!gcl__tmap_repoint_ok(e, a)) return repoint_refused(run, i, addresses);
    unsigned op = a == e->address ? GCL__TMAP_SKIP : GCL__TMAP_REPOINT;
    space->ops[i] = (unsigned char)op;
    space->addresses[i] = a;
    repoints += op;
  }
  plan_fill(plan, n, 0, repoints, space, NULL, NULL, 0);
  return GCL_OK;
}

gcl_status gcl__tmap_plan_set(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                              gcl__tmap_device dev, size_t n, const DLTensor *const *tensors,
                              const gcl_tensormap_options *options, size_t options_count,
                              unsigned flags, const char *fn) {
  return plan_set(plan, space, dev, n, tensors, options, options_count, flags, fn);
}

gcl_status gcl__tmap_plan_repoint(gcl__tmap_plan *plan, const gcl__tmap_space *space, size_t n,
                                  const uint64_t *addresses, const char *fn) {
  return plan_repoint(plan, space, n, addresses, fn);
}

gcl_status gcl__args_tmap_plan_set(gcl_args *args, const gcl_field *first, size_t n,
                                   gcl__tmap_device dev, const DLTensor *const *tensors,
                                   const gcl_tensormap_options *options, size_t options_count,
                                   unsigned flags, const char *fn, gcl__tmap_plan *plan) {
  if (!batch_ok(n, tensors, options, options_count, flags))
    return batch_error(n, tensors, options, options_count, flags, fn);
  gcl_status s = gcl__args_tmap_run(args, first, n, fn, &plan->run);
  if (s != GCL_OK) return s;
  return plan_set(plan, &args->tspace, dev, n, tensors, options, options_count, flags, fn);
}

gcl_status gcl__args_tmap_plan_repoint(gcl_args *args, const gcl_field *first, size_t n,
                                       const uint64_t *addresses, const char *fn,
                                       gcl__tmap_plan *plan) {
  if (!addresses) return addresses_null(n, fn);
  gcl_status s = gcl__args_tmap_run(args, first, n, fn, &plan->run);
  if (s != GCL_OK) return s;
  return plan_repoint(plan, &args->tspace, n, addresses, fn);
}

/* --- DLPack flags (READ_ONLY) ---------------------------------------------------------------- */

/* The flags the pointer setters know (lib/core/dltensor.c): READ_ONLY and IS_COPIED. */
#define DLFLAGS_KNOWN (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED)

gcl_status gcl__tmap_plan_dlflags(const gcl__tmap_plan *plan, size_t n, const uint64_t *dlflags,
                                  const gcl_tensormap_options *options, size_t options_count,
                                  const char *fn) {
  if (!dlflags)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: dlpack_flags: expected %zu flags, got NULL",
                     fn, n);
  const size_t ostep = options_count == 1 ? 0 : 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t f = dlflags[i];
    if (!f) continue;
    gcl__tmap_who who = gcl__tmap_run_who(&plan->run, i);
    if (f & ~(uint64_t)DLFLAGS_KNOWN)
      return gcl__tmap_fail(&who, GCL_ERROR_TENSOR, "unsupported DLPack flags 0x%" PRIx64
                            " (supported: READ_ONLY 0x1, IS_COPIED 0x2)", f);
    if ((f & DLPACK_FLAG_BITMASK_READ_ONLY) && options[i * ostep].store)
      return gcl__tmap_fail(&who, GCL_ERROR_TENSOR, "tensor is read-only (DLPack flags 0x%" PRIx64
                            ") but options.store is set: a TMA store through the map would write "
                            "memory its producer declared read-only", f);
  }
  return GCL_OK;
}
