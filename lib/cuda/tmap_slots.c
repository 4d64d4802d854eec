/* The tensor-map surface of 0.4 (include/gclaunch/tensormap.h): where maps go (slots of args or
 * of a table), what they are made from (sources), and the two verbs, set and re-point. This file
 * only checks the slots and the batch's arguments and hands the batch to its owner -- the args
 * (tmap_driver.c) or the table (tmap_table.c) --, whose plan goes through the one admission
 * (lib/core/tmap_admit.h). */
#include "cuda_internal.h"
#include "tmap_plan.h"

#include <string.h>

gcl_status gcl_args_tensormap_slots(gcl_args *args, const gcl_field *first, size_t n,
                                    gcl_tensormap_slots *out) {
  static const char fn[] = "gcl_args_tensormap_slots";
  if (!args || !first || !out)
    return gcl__fail_null(fn, 3, "args", (const void *)args, "first", (const void *)first, "out",
                          (const void *)out);
  if (n == 0) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: n = 0: expected 1 or more maps", fn);
  gcl__tmap_run run;
  gcl_status s = gcl__args_tmap_run(args, first, n, fn, &run);
  if (s != GCL_OK) return s;
  memset(out, 0, sizeof *out);
  out->args = args, out->first = *first, out->n = n;
  return GCL_OK;
}

/* The slots' own consistency: exactly one owner, reserved words zero. */
static gcl_status slots_ok(const gcl_tensormap_slots *w, const char *fn) {
  if (!w) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: where is NULL", fn);
  if (!w->args == !w->table)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: where names %s: fill it with "
                     "gcl_args_tensormap_slots or gcl_tensormap_table_slots", fn,
                     w->args ? "both args and a table" : "neither args nor a table");
  for (size_t i = 0; i < sizeof w->reserved / sizeof *w->reserved; i++)
    if (w->reserved[i])
      return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: where->reserved[%zu] is 0x%llx, expected 0",
                       fn, i, (unsigned long long)w->reserved[i]);
  return GCL_OK;
}

/* what (its batch arguments checked) into the slots of where (checked by slots_ok). */
static gcl_status write_slots(gcl_context *ctx, const gcl_tensormap_slots *where,
                              const gcl__tmap_what *what, const char *fn) {
  if (where->table) return gcl__tmap_table_write(where->table, ctx, where->index, where->n, what, fn);
  return gcl__tmap_args_write(where->args, ctx, &where->first, where->n, what, fn);
}

gcl_status gcl__tensormaps_set(gcl_context *ctx, const gcl_tensormap_slots *where,
                               const gcl_tensormap_source *what,
                               const gcl_tensormap_options *options, size_t options_count,
                               const char *fn) {
  gcl_status s = slots_ok(where, fn);
  if (s != GCL_OK || where->n == 0) return s;
  gcl__tmap_what w;
  if ((s = gcl__tmap_what_sources(&w, where->n, what, options, options_count, fn))) return s;
  return write_slots(ctx, where, &w, fn);
}

gcl_status gcl_tensormaps_set(gcl_context *ctx, const gcl_tensormap_slots *where,
                              const gcl_tensormap_source *what,
                              const gcl_tensormap_options *options, size_t options_count) {
  return gcl__tensormaps_set(ctx, where, what, options, options_count, "gcl_tensormaps_set");
}

gcl_status gcl_tensormaps_repoint(gcl_context *ctx, const gcl_tensormap_slots *where,
                                  const uint64_t *addresses) {
  static const char fn[] = "gcl_tensormaps_repoint";
  gcl_status s = slots_ok(where, fn);
  if (s != GCL_OK || where->n == 0) return s;
  gcl__tmap_what w;
  if ((s = gcl__tmap_what_addresses(&w, where->n, addresses, fn))) return s;
  return write_slots(ctx, where, &w, fn);
}
