/* The tensor-map cache of args: one slot per tensormap leaf of the layout (top level, in arrays,
 * in structs, in arrays of structs), numbered in buffer order when the layout is made. A slot
 * remembers where its map points and the inputs gclaunch last encoded it from (tmap.h's
 * snapshot), so that lib/cuda/tensormap.c can re-point instead of re-encoding. This file alone
 * changes slots: it finds them from a field, commits staged maps into them, records re-points,
 * and forgets them when raw bytes are written over their maps. */
#include "args_internal.h"
#include "layout_internal.h"

#include <string.h>

/* Why no run of n maps starts at field f; failure paths only. */
__attribute__((noinline)) static gcl_status run_error(const gcl_args *a, const gcl_field *f,
                                                      size_t n, const char *fn) {
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

gcl_status gcl__args_tmap_run(gcl_args *args, const gcl_field *first, size_t n, const char *fn,
                              gcl__tmap_run *run) {
  if (!first || gcl__f_layout(first) != args->layout || first->param >= args->count ||
      n > gcl__f(first, GCL__F_SPAN) || n == 0)
    return run_error(args, first, n, fn);
  const gcl__lparam *p = &args->lparams[first->param];
  size_t rel = gcl__f(first, GCL__F_REL);
  run->map = args->data + first->offset;
  run->entry = args->tmaps + gcl__f(first, GCL__F_TMAP);
  run->who = (gcl__tmap_who){.layout = args->layout, .param = first->param, .rel = rel,
                             .whole = !p->type || p->type->kind == GCL_PARAM_TENSORMAP};
  return GCL_OK;
}

void gcl__args_tmap_commit(gcl_args *args, const gcl__tmap_run *run, size_t n,
                           const DLTensor *const *tensors, const gcl_tensormap_options *options,
                           size_t options_count) {
  memcpy(run->map, args->scratch, n * GCL_TENSORMAP_BYTES);
  for (size_t i = 0; i < n; i++) {
    run->entry[i].address = args->scratch_addresses[i];
    gcl__tmap_snap_make(tensors[i], options_count == 1 ? options : options + i, &run->entry[i].snap);
  }
  gcl__args_mark(args, run->who.param, run->who.rel, n * GCL_TENSORMAP_BYTES); /* own nothing */
}

void gcl__args_tmap_repointed(const gcl__tmap_run *run, size_t n, const void *addr, size_t stride) {
  for (size_t i = 0; i < n; i++)
    memcpy(&run->entry[i].address, (const unsigned char *)addr + i * stride, sizeof(uint64_t));
}

void gcl__args_tmap_forget(gcl_args *args, size_t slot, size_t n) {
  for (size_t i = slot; i < slot + n; i++) args->tmaps[i].snap.ndim = 0;
}
