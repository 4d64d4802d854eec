/* gclaunch/runtime.h -- the runtime edge: NVRTC, the driver (opened at run time, never linked),
 * devices, contexts, memory, modules, kernels, launch, streams, events, occupancy, graphs, several
 * GPUs -- each area in its own header, included here -- and the tensor-map calls that need a
 * context (encode, set and re-point maps in args, device-resident tables), below. lib/cuda
 * implements it; without a driver every call returns a status. The conventions are written in
 * gclaunch.h.
 */
#ifndef GCLAUNCH_RUNTIME_H
#define GCLAUNCH_RUNTIME_H

#include "gclaunch/core.h"     /* the CPU model */
#include "gclaunch/context.h"  /* NVRTC, driver, devices, contexts */
#include "gclaunch/module.h"   /* modules and kernels */
#include "gclaunch/launch.h"   /* launch and its safety checks */
#include "gclaunch/stream.h"   /* streams, events, memory and copies, occupancy */
#include "gclaunch/graph.h"    /* CUDA graphs */
#include "gclaunch/multigpu.h" /* several GPUs: NVSHMEM PEs, symmetric memory, peer maps */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Tensor maps encoded by the driver (the types, options and the CPU check are in core.h)
 * ------------------------------------------------------------------------------------------- */

/* Encodes a tiled (or im2col) descriptor for t into map (GCL_TENSORMAP_BYTES bytes, 64-byte
 * aligned), e.g. to upload descriptors to global memory. Checks as gcl_tensormap_check, then
 * that the context's device is sm_90 or later and that a kDLCUDA tensor lives on it; makes ctx
 * current. map is untouched on failure. */
GCL_API gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                        const gcl_tensormap_options *options, void *map);
/* As gcl_tensormap_encode, with t's DLPack flags (DLManagedTensorVersioned.flags): read-only
 * with options->store set, or unknown bits, is GCL_ERROR_TENSOR, as gcl_args_set_tensormaps_flags. */
GCL_API gcl_status gcl_tensormap_encode_flags(gcl_context *ctx, const DLTensor *t,
                                              uint64_t dlpack_flags,
                                              const gcl_tensormap_options *options, void *map);
/* --- Tensor maps in args, addressed like everything else ---------------------------------------
 *
 * `first` is a tensormap leaf: a tensormap parameter, a struct member, an element of an array of
 * maps (top level, in a struct, in an array of structs), any align(N), or a raw 128-byte
 * parameter; an array of maps as `first` means its element 0. n > 1 covers elements
 * first ... first + n - 1 of its array. Every tensormap leaf has a cache slot in the args (made
 * with them, no allocation later): every map gclaunch encodes there remembers the inputs it was
 * encoded from (the DLPack description but data and byte_offset, and the options) and its
 * address, so a refresh re-points instead of re-encoding and a re-point needs no tensor at all.
 * Raw setters over a map (gcl_args_set_field on it or on a field containing it) make the args
 * forget it. None of these calls allocates or formats text on success; on failure nothing
 * changes (batches are all or nothing) and the message names the parameter and the map's path
 * ("parameter 0 'g' field 'g.loads[7]'"). After a kernel fault they return
 * GCL_ERROR_KERNEL_FAULT without calling the driver. Not thread-safe on one args. */

#define GCL_TENSORMAP_REFRESH 1u /* flag, kept for compatibility: since 0.4 every set does what
                                    it asked for -- a map whose tensor and options equal those of
                                    its last encode but for data + byte_offset is re-pointed (the
                                    bytes of a fresh encode), not re-encoded, and nothing is done
                                    when the address is the same too */

/* Encodes n maps, tensors[i] (borrowed; only their description is read) into map first + i, with
 * options[i] (options_count == n) or options[0] for every map (options_count == 1). Checks as
 * gcl_tensormap_encode. Only what is new is encoded: a map whose slot remembers the same
 * tensor description (dtype, shape, strides, device) and options from its last encode is
 * re-pointed when only data + byte_offset moved (checked as a re-point: no translation, no
 * encode) and left alone when nothing did; the slot keeps one description (no cache grows), and
 * any difference in it encodes afresh. The bytes are a fresh encode's either way. flags: 0 or
 * GCL_TENSORMAP_REFRESH (the same). n = 0 does nothing.
 * GCL_ERROR_INVALID_ARGUMENT for NULL args, ctx, first, tensors or options, an options_count
 * other than 1 or n, unknown flags, a field of another layout, or maps past the end of first's
 * array (n > 1 on a map that is no array element); GCL_ERROR_TYPE_MISMATCH when first is no
 * tensormap leaf (nor an array of them); the tensor and driver errors of gcl_tensormap_encode. */
GCL_API gcl_status gcl_args_set_tensormaps(gcl_args *args, gcl_context *ctx,
                                           const gcl_field *first, size_t n,
                                           const DLTensor *const *tensors,
                                           const gcl_tensormap_options *options,
                                           size_t options_count, unsigned flags);
/* As gcl_args_set_tensormaps, with the DLPack flags of each tensor: dlpack_flags[i] (n of them)
 * as tensors[i]'s producer gave them (DLManagedTensorVersioned.flags; 0 for a legacy tensor).
 * A tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY is refused for a map whose options have store
 * set -- GCL_ERROR_TENSOR naming the map ("tensor is read-only (DLPack flags 0x1) but
 * options.store is set ...") -- exactly as gcl_args_set_field_dltensor_flags refuses it for a
 * pointer that is not const; loads over it are fine. Unknown flag bits are GCL_ERROR_TENSOR as
 * there; NULL dlpack_flags GCL_ERROR_INVALID_ARGUMENT. All or nothing, as the plain form. */
GCL_API gcl_status gcl_args_set_tensormaps_flags(gcl_args *args, gcl_context *ctx,
                                                 const gcl_field *first, size_t n,
                                                 const DLTensor *const *tensors,
                                                 const uint64_t *dlpack_flags,
                                                 const gcl_tensormap_options *options,
                                                 size_t options_count, unsigned flags);
/* Re-points maps first ... first + n - 1 to addresses[i] (the new data + byte_offset), keeping the
 * rest of their descriptions: the cheapest way to relaunch a megakernel on new buffers of the
 * same shapes (cuTensorMapReplaceAddress only; nothing for a map already at its address). Each
 * map must have been encoded by gclaunch into these args (GCL_ERROR_UNSET_ARGUMENT otherwise, or
 * after a raw setter wrote there); each address nonzero, 16-byte aligned (32 with 32-byte
 * interleave) and below 2^57, GCL_ERROR_INVALID_ARGUMENT otherwise. The tensors' shapes,
 * strides and devices are not seen here: use gcl_args_set_tensormaps with GCL_TENSORMAP_REFRESH
 * when they may have changed. ctx is made current only if the driver asks for it. */
GCL_API gcl_status gcl_args_repoint_tensormaps(gcl_args *args, gcl_context *ctx,
                                               const gcl_field *first, size_t n,
                                               const uint64_t *addresses);

/* How re-points (and refreshes that only move the address) reach the maps on a device. A map's
 * bytes depend on its description and address only; at the first re-point on a device gclaunch
 * re-points a few dozen maps both through cuTensorMapReplaceAddress and by writing the address
 * bits itself, and uses its own patch (no driver call) for each interleave mode whose maps came
 * out byte for byte equal. Anything not proven, and every re-point when the environment has
 * GCL_TMAP_PATCH=0, calls the driver. The refusals are the same either way (checked before). */
typedef struct gcl_tensormap_path {
  unsigned patched; /* bit i (1u << GCL_TENSORMAP_INTERLEAVE_*): maps of that interleave are
                       re-pointed by gclaunch's patch; 0: every re-point calls the driver */
  int checks;       /* re-points compared with cuTensorMapReplaceAddress on this device */
  int mismatches;   /* of those, how many differed (their modes are not patched) */
  char reason[160]; /* one line: what the check found, or why it did not run */
} gcl_tensormap_path;
/* The path of ctx's device into *out; runs the check if no re-point has yet. */
GCL_API gcl_status gcl_tensormap_repoint_path(gcl_context *ctx, gcl_tensormap_path *out);

/* --- Tensor-map tables in device memory (runtime edge) ------------------------------------------
 *
 * For megakernels with more descriptors than the parameter holds (240 maps in 32,764 bytes): K
 * maps in device memory, 128 bytes and 128-byte aligned each (map i at
 * gcl_tensormap_table_address + 128 i), any K the device memory holds. The maps are written
 * through the same checks, cache and all-or-nothing batches as gcl_args_set_tensormaps (a host
 * copy is changed; nothing reaches the device until gcl_tensormap_table_upload, which copies only
 * the maps changed since the last upload). The kernel takes the address as a pointer parameter
 * and fences each map before its first use (include/gclaunch/gclaunch_tmap_table.cuh,
 * gcl_tmap_table_acquire), because the maps were written by another proxy. Up to 240 maps a
 * grid-constant tensormap[K] parameter is faster (docs/tensormaps.md has the study). Messages
 * name the entry ("gcl_tensormap_table entry 17: ..."). Not thread-safe on one table. */
typedef struct gcl_tensormap_table gcl_tensormap_table;

/* A table of k >= 1 maps on ctx's device (ctx borrowed: it must outlive the table), every map
 * zeros (not a valid map) on the device until set and uploaded. */
GCL_API gcl_status gcl_tensormap_table_create(gcl_context *ctx, size_t k, gcl_tensormap_table **out);
/* Frees the device and host memory. NULL is fine. A kernel still reading the table must have
 * finished (synchronize its stream first). */
GCL_API void gcl_tensormap_table_destroy(gcl_tensormap_table *t);
/* Encodes entries first ... first + n - 1 from tensors[i] with options[i] (options_count n) or
 * options[0] (options_count 1), flags 0 or GCL_TENSORMAP_REFRESH, exactly as
 * gcl_args_set_tensormaps (checks, refresh by re-point, all or nothing), into the host copy; the
 * entries that changed become dirty. GCL_ERROR_INVALID_ARGUMENT also for entries past k. */
GCL_API gcl_status gcl_tensormap_table_set(gcl_tensormap_table *t, size_t first, size_t n,
                                           const DLTensor *const *tensors,
                                           const gcl_tensormap_options *options,
                                           size_t options_count, unsigned flags);
/* As gcl_tensormap_table_set, with each tensor's DLPack flags, as gcl_args_set_tensormaps_flags
 * (a read-only tensor is refused for a store map). */
GCL_API gcl_status gcl_tensormap_table_set_flags(gcl_tensormap_table *t, size_t first, size_t n,
                                                 const DLTensor *const *tensors,
                                                 const uint64_t *dlpack_flags,
                                                 const gcl_tensormap_options *options,
                                                 size_t options_count, unsigned flags);
/* Re-points entries first ... first + n - 1 to addresses[i], as gcl_args_repoint_tensormaps;
 * the entries whose address changed become dirty. */
GCL_API gcl_status gcl_tensormap_table_repoint(gcl_tensormap_table *t, size_t first, size_t n,
                                               const uint64_t *addresses);
/* Copies the dirty maps to the device on stream s (NULL: the context's default stream), one
 * asynchronous copy per run of consecutive dirty maps; a kernel launched on s afterwards sees
 * them. The host copy may be changed again as soon as this returns. On failure the maps not
 * copied stay dirty. */
GCL_API gcl_status gcl_tensormap_table_upload(gcl_tensormap_table *t, gcl_stream *s);
/* The device address of map 0 (128-byte aligned), for the kernel's pointer parameter. */
GCL_API uint64_t gcl_tensormap_table_address(const gcl_tensormap_table *t);
/* k; the number of maps changed since the last upload; the host copy of map i (NULL past k). */
GCL_API size_t gcl_tensormap_table_count(const gcl_tensormap_table *t);
GCL_API size_t gcl_tensormap_table_dirty(const gcl_tensormap_table *t);
GCL_API const void *gcl_tensormap_table_map(const gcl_tensormap_table *t, size_t i);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_RUNTIME_H */
