/* Tests name a tensor map as (parameter index, element): TMAP_FIELD(args, index, element) is that
 * map as a field, resolved through the public resolvers (gcl_layout_param_field, then
 * gcl_layout_element_field for an array), for gcl_args_set_tensormaps and
 * gcl_args_repoint_tensormaps. An index or element that resolves to nothing gives a zeroed field,
 * which those calls refuse as a field of another layout. */
#ifndef GCL_TEST_TMAP_FIELD_H
#define GCL_TEST_TMAP_FIELD_H

#include <gclaunch/gclaunch.h>

static inline gcl_field tmap_field_of(const gcl_args *args, size_t index, size_t element) {
  gcl_field f, e, none = {0};
  const gcl_layout *l = gcl_args_layout(args);
  if (!l || gcl_layout_param_field(l, index, &f) != GCL_OK) return none;
  if (f.info.kind == GCL_PARAM_ARRAY)
    return gcl_layout_element_field(l, &f, element, &e) == GCL_OK ? e : none;
  return element == 0 ? f : none;
}
#define TMAP_FIELD(args, index, element)                                                           \
  ((const gcl_field *)(gcl_field[1]){tmap_field_of((args), (index), (element))})

#endif
