/* Tensor maps into fields: a tensormap anywhere inside a by-value aggregate (a struct member, an
 * element of an array of maps or of structs), checked and encoded like a tensormap parameter. */
#include "cuda_internal.h"

#include "../core/layout_internal.h"

#include <string.h>

/* A field takes a map when it is a tensormap, or untyped bytes of exactly 128 (raw layouts). */
static gcl_status check_map_field(const gcl_args *args, const gcl_field *f) {
  if (!f) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_tensormap: field is NULL");
  if (f->priv_layout != (const void *)gcl_args_layout(args) || f->param >= gcl_layout_count(gcl_args_layout(args)))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_tensormap: the field was "
                     "resolved in another layout than the args'");
  bool map = f->info.kind == GCL_PARAM_TENSORMAP ||
             (f->info.kind == GCL_PARAM_BYTES && f->size == GCL_TENSORMAP_BYTES && !f->priv_type);
  char who[512];
  if (!map && gcl__field_label(f, who, sizeof who))
    return gcl__fail(GCL_ERROR_TYPE_MISMATCH, "gcl_args_set_field_tensormap: %s: expected a "
                     "tensormap field, got one of %zu bytes (kind %d)", who, f->size, (int)f->info.kind);
  return GCL_OK;
}

gcl_status gcl_args_set_field_tensormap(gcl_args *args, gcl_context *ctx, const gcl_field *field,
                                        const DLTensor *t, const gcl_tensormap_options *options) {
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_tensormap: args is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_args_set_field_tensormap: ctx is NULL");
  gcl_status s = check_map_field(args, field);
  if (s != GCL_OK) return s;
  const gcl__tmap_who who = {.field = field}; /* formatted only if the encode fails */
  _Alignas(64) unsigned char m[GCL_TENSORMAP_BYTES];
  if ((s = gcl__tensormap_encode_as(ctx, t, options, &who, m)) != GCL_OK) return s;
  return gcl_args_set_field(args, field, m, sizeof m);
}
