/* Tensor maps on the CPU: DLPack tensor + options -> the arguments of cuTensorMapEncodeTiled
 * (or cuTensorMapEncodeIm2col).
 * Internal; lib/cuda/tensormap.c calls the driver with the result. */
#ifndef GCL_TMAP_H
#define GCL_TMAP_H

#include "internal.h"

/* Checks t and o against every documented constraint and fills *out (untouched on failure).
 * who names the tensor in messages ("tensor", "parameter 0 'maps' element 7"). Reads only t and
 * o. GCL_ERROR_TENSOR for the tensor's own faults, GCL_ERROR_INVALID_ARGUMENT for NULL pointers
 * and bad option values. */
gcl_status gcl__tmap_translate(const DLTensor *t, const gcl_tensormap_options *o, const char *who,
                               gcl_tensormap_desc *out);

/* "float32", "uint8", "bfloat16", ... for messages; "?" for values outside the enum. */
const char *gcl__tmap_type_name(gcl_tensormap_type type);

#endif
