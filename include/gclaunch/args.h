/* gclaunch/args.h -- argument buffers: a layout's parameters packed exactly as the device reads
 * them (CPU only until launch). Included by gclaunch/core.h; the conventions are written in
 * gclaunch.h. */
#ifndef GCLAUNCH_ARGS_H
#define GCLAUNCH_ARGS_H

#include "gclaunch/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Argument buffers (CPU only until launch)
 *
 * One address for every parameter byte: a field (below). Every setter takes a gcl_field -- a
 * whole parameter (gcl_layout_param_field), a struct member, an array element, a whole
 * sub-aggregate -- resolved once and then set as fast as a parameter of its size. The
 * index-addressed forms further down (gcl_args_set_u32(args, index, v), ...) are static inline
 * conveniences over the field setters, kept because most kernels take a few plain parameters
 * and an index is what a C caller has at hand; they cost one gcl_layout_param_field more.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_args gcl_args;

/* Creates a zeroed buffer with every parameter unset (one allocation: the buffer, set-tracking,
 * an owner slot per pointer leaf and a cache slot per tensor-map leaf). The layout must outlive
 * the args. */
GCL_API gcl_status gcl_args_create(const gcl_layout *layout, gcl_args **out);
/* Releases owned tensors (their deleters run once). NULL is fine. */
GCL_API void gcl_args_destroy(gcl_args *args);
/* The layout the args were created from (NULL for NULL). Reads. */
GCL_API const gcl_layout *gcl_args_layout(const gcl_args *args);
/* A copy of args: same layout, same bytes, same set state, same device restriction, the same
 * tensor-map descriptions (the copy's maps can be re-pointed). Tensors the original took
 * (take_dlpack) stay owned by the original: the copy holds their addresses borrowed, so the
 * original must outlive every launch of the copy that uses them. Allocates once.
 * Args may be changed (or destroyed) as soon as gcl_launch returns: the driver copies the
 * parameter buffer at launch. */
GCL_API gcl_status gcl_args_clone(const gcl_args *args, gcl_args **out);
/* Restricts the tensors later set into args to those on device_id (CUDA device ordinal); -1 (the
 * default) accepts any. Not a parameter setter: it changes what the DLPack setters accept. With
 * several GPUs, pass the kernel's device: gcl_context_device(gcl_kernel_context(k)).
 * GCL_ERROR_INVALID_ARGUMENT for NULL args or device_id < -1. */
GCL_API gcl_status gcl_args_restrict_device(gcl_args *args, int device_id);
/* The packed buffer and its exact size. GCL_ERROR_UNSET_ARGUMENT naming the first leaf never set
 * ("parameter 0 'g': field 'g.stores[2]' was never set"). The data pointer stays valid until
 * args is destroyed. Reads. */
GCL_API gcl_status gcl_args_buffer(const gcl_args *args, const void **data, size_t *size);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_ARGS_H */
