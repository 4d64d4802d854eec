/* The tensor-map cache of args: one slot per tensormap leaf of the layout (top level, in arrays,
 * in structs, in arrays of structs), numbered in buffer order when the layout is made. A slot
 * remembers where its map points and the inputs gclaunch last encoded it from (tmap.h's
 * snapshot), so that lib/cuda/tensormap.c can re-point instead of re-encoding. Only this file
 * and its inline half in args_internal.h (the hot paths: finding the slots of a field,
 * committing staged maps, recording re-points) change slots; here are the failure messages and
 * forgetting slots when raw bytes are written over their maps. */
#include "args_internal.h" /* and layout_internal.h */

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
