/* gclaunch/ffi.h -- the libffi bridge: pack a value described by a libffi ffi_type into a field
 * or parameter. The only part of the API that speaks libffi's types; include <ffi.h> to build
 * an ffi_type. The conventions are written in gclaunch.h.
 */
#ifndef GCLAUNCH_FFI_H
#define GCLAUNCH_FFI_H

#include "gclaunch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct _ffi_type; /* libffi's ffi_type; include <ffi.h> to build one */
/* Packs value described by a libffi type (struct, scalar or pointer) into field.
 * GCL_ERROR_TYPE_MISMATCH unless the type's size, alignment and member offsets equal the
 * field's. */
GCL_API gcl_status gcl_args_set_field_ffi(gcl_args *args, const gcl_field *field,
                                          const struct _ffi_type *type, const void *value);
static inline gcl_status gcl_args_set_ffi(gcl_args *args, size_t index,
                                          const struct _ffi_type *type, const void *value) {
  gcl_field f_;
  if (args) {
    gcl_status s_ = gcl_layout_param_field(gcl_args_layout(args), index, &f_);
    if (s_ != GCL_OK) return s_;
  }
  return gcl_args_set_field_ffi(args, args ? &f_ : NULL, type, value);
}

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_FFI_H */
