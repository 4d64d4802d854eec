/* The seam between args.c (buffers, slots) and args_dlpack.c (tensors into pointer slots), and
 * what the launch path reads. Internal. */
#ifndef GCL_ARGS_INTERNAL_H
#define GCL_ARGS_INTERNAL_H

#include "internal.h"

/* Releases an owned object (a taken DLPack tensor); called exactly once. */
typedef void (*gcl__release_fn)(void *owner);

/* Checks that index names a pointer parameter of args and describes it; *device_id gets the
 * device the args are restricted to (-1: any). Records a failure message naming the parameter
 * otherwise. Changes nothing. */
gcl_status gcl__args_pointer_param(const gcl_args *args, size_t index, gcl_param_info *info,
                                   int *device_id, const char *fn); /* fn: the public function */

/* Stores address into pointer slot index and marks it set. The slot's previous owner, if any, is
 * released after the store; (release, owner) -- release may be NULL -- becomes the slot's owner,
 * released when the slot is next overwritten (by any setter) or when args is destroyed. Cannot
 * fail: call it only after every check passed. */
void gcl__args_store_pointer(gcl_args *args, size_t index, uint64_t address,
                             gcl__release_fn release, void *owner);

/* The field versions: fn names the public function in messages. */
gcl_status gcl__args_pointer_field(const gcl_args *args, const gcl_field *field, const char *fn,
                                   gcl_param_info *info, int *device_id);
void gcl__args_store_field_pointer(gcl_args *args, const gcl_field *field, uint64_t address,
                                   gcl__release_fn release, void *owner);
/* The whole parameter index as a field (owned by the layout; index must be in range). */
const gcl_field *gcl__args_param_field(const gcl_args *args, size_t index);

/* For the launch path, no checks: the packed buffer (exact size), and an array of one pointer per
 * parameter into that buffer (for cuLaunchKernel's kernelParams). Valid while args lives. */
const void *gcl__args_data(const gcl_args *args);
void **gcl__args_param_pointers(const gcl_args *args);
/* Number of parameters never set (0 when the buffer is complete). O(1). */
size_t gcl__args_unset_count(const gcl_args *args);

#endif
