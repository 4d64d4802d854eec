/* gclaunch/tensormap.h -- tensor maps written by the driver into args and descriptor tables
 * (since 0.4; 0.3 declared these calls in runtime.h, which includes this header). lib/cuda
 * implements it. The conventions are written in gclaunch.h; the types, the options and the CPU
 * check (gcl_tensormap_check) are in core.h; the kernel side in gclaunch/tma.cuh.
 *
 * One surface: WHERE maps go, WHAT they are made from, and two verbs.
 *   where  gcl_tensormap_slots: a run of n consecutive tensormap slots -- of args, from a field
 *          (gcl_args_tensormap_slots: a parameter, a struct member, an element of an array of
 *          maps), or of a descriptor table, from an index (gcl_tensormap_table_slots).
 *   what   gcl_tensormap_source: a DLPack tensor and its producer's flags (READ_ONLY: a store
 *          map over it is refused), with gcl_tensormap_options. A symmetric buffer's copies on
 *          several PEs are sources too (gcl_symmetric_sources).
 *   verbs  gcl_tensormaps_set (encode what is new; re-point what only moved; skip what is the
 *          same) and gcl_tensormaps_repoint (new addresses for maps gclaunch encoded there).
 *   gcl_tensormap_slots at;
 *   gcl_args_tensormap_slots(args, &field, 16, &at);          // or gcl_tensormap_table_slots
 *   gcl_tensormap_source src[16] = {{.tensor = &t0, .dlpack_flags = m0->flags}, ...};
 *   gcl_tensormaps_set(ctx, &at, src, &options, 1);           // encode, checked, all or nothing
 *   gcl_tensormaps_repoint(ctx, &at, addresses);              // relaunch on new buffers
 *
 * Every write of a map -- these two verbs, the 0.3 calls below (thin wrappers over the same
 * code), peer maps, Python -- goes through one admission that decides per map: skip, re-point,
 * encode, or refuse by a numbered rule of docs/tensormap-rules.md (the DLPack flags among them),
 * before anything is written; how a re-point is made (gclaunch's proven patch of the address
 * bits, or cuTensorMapReplaceAddress) is decided after it, and gives the same bytes either way.
 * A failed call changes nothing. None of these calls allocates or formats text on success. After
 * a kernel fault they return GCL_ERROR_KERNEL_FAULT without calling the driver.
 *
 * 0.3 -> 0.4 (CHANGELOG.md has the whole list): the ten 0.3 calls stay, as wrappers:
 *   gcl_tensormap_encode[_flags]                      a one-map encode into caller memory
 *   gcl_args_set_tensormaps[_flags](args, ctx, first, n, tensors, [flags,] opts, count, 0)
 *       -> gcl_args_tensormap_slots(args, first, n, &at); gcl_tensormaps_set(ctx, &at, src, ...)
 *   gcl_args_repoint_tensormaps(args, ctx, first, n, addresses)
 *       -> gcl_tensormaps_repoint(ctx, &at, addresses)
 *   gcl_args_set_peer_tensormaps, gcl_tensormap_table_set_peers (runtime.h, "Several GPUs")
 *       -> gcl_symmetric_sources, then gcl_tensormaps_set
 *   gcl_tensormap_table_set[_flags], gcl_tensormap_table_repoint
 *       -> gcl_tensormap_table_slots(t, first, n, &at), then the two verbs
 * GCL_TENSORMAP_REFRESH is accepted where a 0.3 call takes `flags` and does nothing: every set
 * re-points what only moved. New code passes 0, or uses the verbs, which take no flags.
 */
#ifndef GCLAUNCH_TENSORMAP_H
#define GCLAUNCH_TENSORMAP_H

#include "gclaunch/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gcl_tensormap_table gcl_tensormap_table; /* below: tables in device memory */

/* ---------------------------------------------------------------------------------------------
 * Where and what: slots and sources (since 0.4)
 * ------------------------------------------------------------------------------------------- */

/* A run of n consecutive tensormap slots of args or of a descriptor table. Fill it with
 * gcl_args_tensormap_slots or gcl_tensormap_table_slots, then treat it as a value (it borrows
 * the args or the table, which must outlive its use; the verbs check it again). */
typedef struct gcl_tensormap_slots {
  gcl_args *args;             /* the args the maps live in, or NULL */
  gcl_tensormap_table *table; /* the table the maps live in, or NULL (exactly one is set) */
  gcl_field first;            /* args: the first map (a tensormap leaf) */
  size_t index;               /* table: the first entry */
  size_t n;                   /* how many consecutive maps */
  uint64_t reserved[4];       /* zero: room to grow */
} gcl_tensormap_slots;

/* Maps first ... first + n - 1 of args (first: a tensormap leaf -- a tensormap parameter, a
 * struct member, an element of an array of maps, top level or nested, any align(N), or a raw
 * 128-byte parameter; an array of maps means its element 0; n > 1 covers the next elements of
 * its array) into *out. GCL_ERROR_INVALID_ARGUMENT for NULL args, first or out, n = 0, a field
 * of another layout, or maps past the end of first's array; GCL_ERROR_TYPE_MISMATCH when first
 * is no tensormap leaf. Reads args; *out untouched on failure. */
GCL_API gcl_status gcl_args_tensormap_slots(gcl_args *args, const gcl_field *first, size_t n,
                                            gcl_tensormap_slots *out);
/* Entries first ... first + n - 1 of table t into *out. GCL_ERROR_INVALID_ARGUMENT for NULL t or
 * out, n = 0, or entries past the table's count. Reads t; *out untouched on failure. */
GCL_API gcl_status gcl_tensormap_table_slots(gcl_tensormap_table *t, size_t first, size_t n,
                                             gcl_tensormap_slots *out);

/* What a map is made from: a DLPack tensor (borrowed: only its description and data +
 * byte_offset are read) and the flags its producer gave it (DLManagedTensorVersioned.flags; 0
 * for a legacy DLManagedTensor or a bare DLTensor). Zero-initialise it: reserved must be 0. */
typedef struct gcl_tensormap_source {
  const DLTensor *tensor;
  uint64_t dlpack_flags;      /* DLPACK_FLAG_BITMASK_READ_ONLY, _IS_COPIED; other bits refused */
  uint64_t reserved[2];
} gcl_tensormap_source;

/* Writes maps: map i of where from what[i] with options[i] (options_count == where->n) or
 * options[0] for every map (options_count == 1), each decided by the one admission: a slot
 * that holds the same description (dtype, shape, strides, device, options) at the same
 * data + byte_offset is left alone; at another address it is re-pointed (the bytes of a fresh
 * encode there); anything else is checked (docs/tensormap-rules.md) and encoded. All or
 * nothing. For args, ctx is the context the maps are made in (required); for a table, NULL or
 * the table's context. where->n = 0 does nothing.
 * GCL_ERROR_INVALID_ARGUMENT for NULL where, what or options, an options_count other than 1 or
 * n, slots that name neither or both of args and table (or nonzero reserved words), a ctx other
 * than the table's, a source's nonzero reserved words, and the errors of the slots calls;
 * GCL_ERROR_TENSOR naming the map and the rule for a tensor the rules refuse (rule 27: unknown
 * DLPack flag bits; rule 28: a read-only tensor under a store map; the tensor's own faults);
 * the driver's error with its name. The maps and the caches are as before on any failure. */
GCL_API gcl_status gcl_tensormaps_set(gcl_context *ctx, const gcl_tensormap_slots *where,
                                      const gcl_tensormap_source *what,
                                      const gcl_tensormap_options *options, size_t options_count);
/* Re-points map i of where to addresses[i] (the new data + byte_offset), keeping the rest of its
 * description: the cheapest way to relaunch on new buffers of the same shapes. Nothing for a
 * map already there. Each map must have been encoded by gclaunch in that slot
 * (GCL_ERROR_UNSET_ARGUMENT otherwise, or after a raw setter wrote there); each address nonzero,
 * 16-byte aligned (32 with 32-byte interleave) and below 2^57 (GCL_ERROR_INVALID_ARGUMENT). The
 * tensors' shapes are not seen here: use gcl_tensormaps_set when they may have changed. ctx as
 * for gcl_tensormaps_set. All or nothing. */
GCL_API gcl_status gcl_tensormaps_repoint(gcl_context *ctx, const gcl_tensormap_slots *where,
                                          const uint64_t *addresses);

/* Sources over every PE's copy of a symmetric buffer (docs/multigpu.md): storage[i] becomes a
 * copy of *t whose data is PE pes[i]'s copy of t->data (gcl_symmetric_peer_address: shape,
 * strides, dtype and byte_offset as t's), and out[i] = {&storage[i], 0}. The caller owns
 * storage and out (n each) and keeps storage alive while the sources are used; set the flags of
 * out[i] as the buffer's producer gave them. Every PE is resolved before anything is written:
 * GCL_ERROR_PEER_UNREACHABLE naming the PE and its index in pes, GCL_ERROR_INVALID_ARGUMENT
 * for NULL arguments, n = 0 or more than 65536, no PE started. storage and out untouched on
 * failure. */
GCL_API gcl_status gcl_symmetric_sources(const DLTensor *t, const int *pes, size_t n,
                                         DLTensor *storage, gcl_tensormap_source *out);

/* ---------------------------------------------------------------------------------------------
 * Tensor maps encoded by the driver (the types, options and the CPU check are in core.h)
 * ------------------------------------------------------------------------------------------- */

/* Encodes a tiled (or im2col) descriptor for t into map (GCL_TENSORMAP_BYTES bytes, 64-byte
 * aligned), e.g. to upload descriptors to global memory: a map no slot remembers, so the one
 * admission always encodes it. Checks as gcl_tensormap_check, then that the context's device is
 * sm_90 or later and that a kDLCUDA tensor lives on it; makes ctx current. map is untouched on
 * failure. */
GCL_API gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                        const gcl_tensormap_options *options, void *map);
/* As gcl_tensormap_encode, with t's DLPack flags (DLManagedTensorVersioned.flags): unknown bits
 * (rule 27) and read-only with options->store set (rule 28) are GCL_ERROR_TENSOR, as for
 * gcl_tensormaps_set. */
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

/* Accepted by the 0.3 calls' `flags` and ignored (every set re-points what only moved); new code
 * passes 0. Kept so that 0.3 programs compile. */
#define GCL_TENSORMAP_REFRESH 1u

/* The 0.3 form of gcl_tensormaps_set over gcl_args_tensormap_slots(args, first, n): encodes n maps, tensors[i] (borrowed; only their description is read) into map first + i, with
 * options[i] (options_count == n) or options[0] for every map (options_count == 1). Checks as
 * gcl_tensormap_encode. Only what is new is encoded: a map whose slot remembers the same
 * tensor description (dtype, shape, strides, device) and options from its last encode is
 * re-pointed when only data + byte_offset moved (checked as a re-point: no translation, no
 * encode) and left alone when nothing did; the slot keeps one description (no cache grows), and
 * any difference in it encodes afresh. The bytes are a fresh encode's either way. flags: 0 (or
 * the retired GCL_TENSORMAP_REFRESH, the same). n = 0 does nothing.
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
/* The 0.3 form of gcl_tensormaps_repoint over gcl_args_tensormap_slots: re-points maps
 * first ... first + n - 1 to addresses[i] (the new data + byte_offset), keeping the
 * rest of their descriptions: the cheapest way to relaunch a megakernel on new buffers of the
 * same shapes (cuTensorMapReplaceAddress only; nothing for a map already at its address). Each
 * map must have been encoded by gclaunch into these args (GCL_ERROR_UNSET_ARGUMENT otherwise, or
 * after a raw setter wrote there); each address nonzero, 16-byte aligned (32 with 32-byte
 * interleave) and below 2^57, GCL_ERROR_INVALID_ARGUMENT otherwise. The tensors' shapes,
 * strides and devices are not seen here: use gcl_args_set_tensormaps when they may have
 * changed. ctx is made current only if the driver asks for it. */
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
 * and fences each map before its first use (include/gclaunch/tmap_table.cuh,
 * gcl_tmap_table_acquire), because the maps were written by another proxy. Up to 240 maps a
 * grid-constant tensormap[K] parameter is faster (docs/tensormaps.md has the study). Messages
 * name the entry ("gcl_tensormap_table entry 17: ..."). Not thread-safe on one table. */
/* A table of k >= 1 maps on ctx's device (ctx borrowed: it must outlive the table), every map
 * zeros (not a valid map) on the device until set and uploaded. */
GCL_API gcl_status gcl_tensormap_table_create(gcl_context *ctx, size_t k, gcl_tensormap_table **out);
/* Frees the device and host memory. NULL is fine. A kernel still reading the table must have
 * finished (synchronize its stream first). */
GCL_API void gcl_tensormap_table_destroy(gcl_tensormap_table *t);
/* The 0.3 form of gcl_tensormaps_set over gcl_tensormap_table_slots: encodes entries
 * first ... first + n - 1 from tensors[i] with options[i] (options_count n) or
 * options[0] (options_count 1), flags 0 (or the retired GCL_TENSORMAP_REFRESH), exactly as
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
/* The 0.3 form of gcl_tensormaps_repoint over gcl_tensormap_table_slots: re-points entries
 * first ... first + n - 1 to addresses[i], as gcl_args_repoint_tensormaps;
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
#endif /* GCLAUNCH_TENSORMAP_H */
