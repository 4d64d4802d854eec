/* Tensor-map batches: the refusals of the one admission (lib/core/tmap_admit.h, whose inline
 * body the args' entry points in lib/cuda/tmap_driver.c and gcl__tmap_plan_make below share), and
 * the tensor-map cache of args: one slot per tensormap leaf of the layout (top level, in arrays,
 * in structs, in arrays of structs), numbered in buffer order when the layout is made. A slot
 * remembers where its map points and the inputs gclaunch last encoded it from (tmap.h's
 * snapshot), so that the admission re-points instead of re-encoding. Every failure message but
 * the driver's own is formed here, on failure only. Here too: forgetting slots when raw bytes are
 * written over their maps. */
#include "args_internal.h" /* and layout_internal.h */
#include "tmap_admit.h"

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

/* --- the plan: one admission per map ------------------------------------------------------ */

__attribute__((noinline, cold)) gcl_status
gcl__tmap_what_error(size_t n, const void *items, const char *items_name, const uint64_t *dlflags,
                     bool with_flags, const gcl_tensormap_options *options, size_t options_count,
                     unsigned flags, const char *fn) {
  if (!items)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: %s: expected %zu %s, got NULL", fn,
                     items_name, n, items_name);
  if (!options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options: expected a pointer, got NULL", fn);
  if (options_count != 1 && options_count != n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options_count = %zu: expected 1 (the same "
                     "options for every map) or n = %zu", fn, options_count, n);
  if (with_flags && !dlflags)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: dlpack_flags: expected %zu flags, got NULL",
                     fn, n);
  return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: flags = 0x%x: expected 0 or "
                   "GCL_TENSORMAP_REFRESH (0x1)", fn, flags);
}

gcl_status gcl__tmap_refuse_device(GCL__TMAP_RUN_PARAMS, size_t i, gcl__tmap_device dev,
                                  const DLTensor *t) {
  GCL__TMAP_RUN_REBUILD;
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  if (dev.sm < 90)
    return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                          "device %d is sm_%d: tensor maps need sm_90 or later", dev.device, dev.sm);
  return gcl__tmap_fail(&who, GCL_ERROR_TENSOR, "tensor is on CUDA device %d, the context on "
                        "device %d", (int)t->device.device_id, dev.device);
}

gcl_status gcl__tmap_refuse_repoint(GCL__TMAP_RUN_PARAMS, size_t i, uint64_t a) {
  GCL__TMAP_RUN_REBUILD;
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  const gcl__tmap_snap *snap = &run->entry[i].snap;
  if (!snap->ndim)
    return gcl__tmap_fail(&who, GCL_ERROR_UNSET_ARGUMENT,
                          "no tensor map encoded by gclaunch here to re-point (encode it with "
                          "gcl_args_set_tensormaps or gcl_tensormap_table_set first; raw setters "
                          "forget it)");
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                        "address 0x%llx: TMA needs a nonzero %u-byte aligned global address "
                        "below 2^57 = 0x200000000000000", (unsigned long long)a, (unsigned)snap->align);
}

gcl_status gcl__tmap_refuse_source_flags(GCL__TMAP_RUN_PARAMS, size_t i, int rule,
                                        const DLTensor *t, const gcl_tensormap_options *o,
                                        uint64_t flags) {
  GCL__TMAP_RUN_REBUILD;
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return gcl__tmap_refuse_flags(rule, &who, t, o, flags);
}

gcl_status gcl__tmap_refuse_reserved(GCL__TMAP_RUN_PARAMS, size_t i, uint64_t r0,
                                     uint64_t r1) {
  GCL__TMAP_RUN_REBUILD;
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT, "source.reserved[%d] is 0x%llx, "
                        "expected 0 (zero-initialise the sources)", r0 ? 0 : 1,
                        (unsigned long long)(r0 ? r0 : r1));
}

gcl_status gcl__tmap_plan_make(gcl__tmap_plan *plan, const gcl__tmap_space *space,
                               gcl__tmap_device dev, size_t n, const gcl__tmap_what *what) {
  return gcl__tmap_plan_inline(plan, space, dev, n, what, false);
}
