/* Tensor maps on the driver edge: cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col from a
 * checked description (lib/core/tmap.c), written straight into one element of a tensormap[N]
 * parameter; cuTensorMapReplaceAddress when only the address changed (the refresh and replace
 * calls, for megakernels that re-point their maps on every launch).
 *
 * The hot paths format nothing (messages are built from their pieces on failure only), allocate
 * nothing (the per-map cache and the batch scratch come with the args), bind the context once
 * per call, and change nothing when they fail. */
#include "cuda_internal.h"
#include "tmap.h"
#include "../core/layout_internal.h"

#include <stdio.h>
#include <string.h>

/* lib/core keeps its own copies of the driver's enum values; they must not drift. */
#define GCL_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
GCL_SAME(GCL_TENSORMAP_U8, CU_TENSOR_MAP_DATA_TYPE_UINT8);
GCL_SAME(GCL_TENSORMAP_U16, CU_TENSOR_MAP_DATA_TYPE_UINT16);
GCL_SAME(GCL_TENSORMAP_U32, CU_TENSOR_MAP_DATA_TYPE_UINT32);
GCL_SAME(GCL_TENSORMAP_I32, CU_TENSOR_MAP_DATA_TYPE_INT32);
GCL_SAME(GCL_TENSORMAP_U64, CU_TENSOR_MAP_DATA_TYPE_UINT64);
GCL_SAME(GCL_TENSORMAP_I64, CU_TENSOR_MAP_DATA_TYPE_INT64);
GCL_SAME(GCL_TENSORMAP_F16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
GCL_SAME(GCL_TENSORMAP_F32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
GCL_SAME(GCL_TENSORMAP_F64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
GCL_SAME(GCL_TENSORMAP_BF16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_NONE, CU_TENSOR_MAP_INTERLEAVE_NONE);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_16B, CU_TENSOR_MAP_INTERLEAVE_16B);
GCL_SAME(GCL_TENSORMAP_INTERLEAVE_32B, CU_TENSOR_MAP_INTERLEAVE_32B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B);
GCL_SAME(GCL_TENSORMAP_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B);
GCL_SAME(GCL_TENSORMAP_L2_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
GCL_SAME(GCL_TENSORMAP_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
GCL_SAME(GCL_TENSORMAP_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
GCL_SAME(GCL_TENSORMAP_L2_256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
GCL_SAME(GCL_TENSORMAP_OOB_ZERO, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
GCL_SAME(GCL_TENSORMAP_OOB_NAN, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
GCL_SAME(GCL_TENSORMAP_BYTES, sizeof(CUtensorMap));
GCL_SAME(GCL_TENSORMAP_MAX_RANK, 5);
_Static_assert(sizeof(cuuint64_t) == sizeof(uint64_t) && sizeof(cuuint32_t) == sizeof(uint32_t),
               "driver integer types");
_Static_assert(sizeof(int) == sizeof(int32_t), "im2col corners are passed as int arrays");
_Static_assert(_Alignof(CUtensorMap) >= 64, "CUtensorMap must be 64-byte aligned (build as C11)");
#undef GCL_SAME

/* Checks that a kDLCUDA tensor lives on the context's device. */
static gcl_status check_device(const gcl_context *ctx, const DLTensor *t, const gcl__tmap_who *who) {
  if (t->device.device_type == kDLCUDA && t->device.device_id != ctx->device)
    return gcl__tmap_fail(who, GCL_ERROR_TENSOR,
                          "tensor is on CUDA device %d, the context on device %d",
                          (int)t->device.device_id, ctx->device);
  return GCL_OK;
}

/* Once per call: the device has TMA and no kernel faulted. (A context exists only once the
 * driver loaded, so there is no gcl__cu_load here.) ctx is not made current here: the encode
 * needs some current context, and its bytes do not depend on which (FACTS.md), so encode_into
 * binds ctx only when the driver refuses without it -- one cuCtxGetCurrent less per map. */
static gcl_status begin(gcl_context *ctx, const gcl__tmap_who *who) {
  if (ctx->sm < 90)
    return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT,
                          "device %d is sm_%d: tensor maps need sm_90 or later", ctx->device,
                          ctx->sm);
  return gcl__faulted() ? gcl__fault_check() : GCL_OK;
}

/* cuTensorMapEncodeTiled or, for im2col.pixels > 0, cuTensorMapEncodeIm2col. */
static CUresult encode_desc(const gcl_tensormap_desc *d, CUtensorMap *m) {
  void *address = (void *)(uintptr_t)d->address;
  if (!d->im2col.pixels)
    return gcl__cu.cuTensorMapEncodeTiled(
        m, (CUtensorMapDataType)d->type, d->rank, address, (const cuuint64_t *)d->dims,
        (const cuuint64_t *)d->strides, (const cuuint32_t *)d->box,
        (const cuuint32_t *)d->element_strides, (CUtensorMapInterleave)d->interleave,
        (CUtensorMapSwizzle)d->swizzle, (CUtensorMapL2promotion)d->l2_promotion,
        (CUtensorMapFloatOOBfill)d->oob_fill);
  return gcl__cu.cuTensorMapEncodeIm2col(
      m, (CUtensorMapDataType)d->type, d->rank, address, (const cuuint64_t *)d->dims,
      (const cuuint64_t *)d->strides, (const int *)d->im2col.lower, (const int *)d->im2col.upper,
      d->im2col.channels, d->im2col.pixels, (const cuuint32_t *)d->element_strides,
      (CUtensorMapInterleave)d->interleave, (CUtensorMapSwizzle)d->swizzle,
      (CUtensorMapL2promotion)d->l2_promotion, (CUtensorMapFloatOOBfill)d->oob_fill);
}

static gcl_status encode_failed(const gcl_tensormap_desc *d, const gcl__tmap_who *who,
                                CUresult rc) {
  char w[512];
  gcl__tmap_who_format(who, w, sizeof w);
  if (d->im2col.pixels)
    return gcl__cu_fail(rc, "%s: cuTensorMapEncodeIm2col(%s, rank %u, dims[0] %llu, %u pixels of "
                        "%u channels, lower W %d, upper W %d)", w, gcl__tmap_type_name(d->type),
                        d->rank, (unsigned long long)d->dims[0], d->im2col.pixels,
                        d->im2col.channels, (int)d->im2col.lower[0], (int)d->im2col.upper[0]);
  return gcl__cu_fail(rc, "%s: cuTensorMapEncodeTiled(%s, rank %u, dims[0] %llu, box[0] %u, "
                      "box %u bytes)", w, gcl__tmap_type_name(d->type), d->rank,
                      (unsigned long long)d->dims[0], d->box[0], d->box_bytes);
}

/* Encodes a translated description into *m (written only on success) and, unless e is NULL,
 * its cache entry. */
static gcl_status encode_into(gcl_context *ctx, const gcl_tensormap_desc *d,
                              const gcl__tmap_who *who, void *m, gcl__tmap_entry *e) {
  CUtensorMap tmp;
  CUresult rc = encode_desc(d, &tmp);
  CUcontext cur = NULL;
  if (rc != CUDA_SUCCESS && (gcl__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx->ctx)) {
    gcl_status s = gcl__context_bind(ctx); /* no context, or another device's, was current */
    if (s != GCL_OK) return s;
    rc = encode_desc(d, &tmp);
  }
  if (rc != CUDA_SUCCESS) return encode_failed(d, who, rc);
  memcpy(m, &tmp, sizeof tmp);
  gcl__fault_note_tensormaps(); /* a later ILLEGAL_INSTRUCTION names the TMA rule */
  if (e) {
    gcl__tmap_key_make(d, &e->key);
    e->address = d->address;
  }
  return GCL_OK;
}

gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                const gcl_tensormap_options *options, void *map) {
  if (!ctx || !t || !options)
    return gcl__fail_null("gcl_tensormap_encode", 3, "ctx", (const void *)ctx, "t", (const void *)t,
                          "options", (const void *)options);
  if (!map || (uintptr_t)map % 64u)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_tensormap_encode: map is %p, expected a 64-byte aligned pointer",
                     map);
  static const gcl__tmap_who who = {.text = "tensor"};
  gcl_tensormap_desc d;
  gcl_status s;
  if ((s = gcl__tmap_translate(t, options, &who, &d)) || (s = begin(ctx, &who)) ||
      (s = check_device(ctx, t, &who)))
    return s;
  return encode_into(ctx, &d, &who, map, NULL);
}

/* args, ctx and the parameter index (SIZE_MAX: not checked here), named as fn's. */
static gcl_status need(const gcl_args *args, const gcl_context *ctx, size_t index, const char *fn) {
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  if (index != SIZE_MAX && index >= args->count)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: index %zu out of range: the kernel has %zu "
                     "parameters", fn, index, args->count);
  return GCL_OK;
}

/* Who map element of parameter index is in messages (gcl__args_tmap_slot's pieces); failure
 * paths only. */
static gcl__tmap_who who_of(const gcl_args *args, size_t index, size_t element) {
  const gcl__lparam *p = &args->lparams[index];
  return (gcl__tmap_who){.index = index, .name = p->info.name, .element = element,
                         .is_element = p->info.kind == GCL_PARAM_ARRAY};
}

/* Maps [element, element + n) of parameter index, inline for the single-map fast paths: their
 * bytes in the buffer and *at the index of the first entry (tmaps, snaps); NULL when there is no
 * such slot, and gcl__args_tmap_slot then says why. */
static inline unsigned char *slot_fast(const gcl_args *args, size_t index, size_t element,
                                       size_t n, size_t *at) {
  if (index >= args->count) return NULL;
  const gcl__lparam *p = &args->lparams[index];
  if (element >= p->tmap_count || n > p->tmap_count - element) return NULL;
  *at = p->tmap_at + element;
  return args->data + p->offset + element * GCL_TENSORMAP_BYTES;
}

/* gcl_args_set_tensormap; static so that the batch calls reach it without the PLT. */
static gcl_status set_one(gcl_args *args, gcl_context *ctx, size_t index, size_t element,
                          const DLTensor *t, const gcl_tensormap_options *options) {
  size_t at;
  unsigned char *map;
  gcl_status s;
  if (!args || !ctx || !(map = slot_fast(args, index, element, 1, &at))) {
    gcl__tmap_who who; /* the slow way, for its message */
    gcl__tmap_entry *e;
    if ((s = need(args, ctx, index, "gcl_args_set_tensormap")) ||
        (s = gcl__args_tmap_slot(args, index, element, 1, &who, &map, &e)))
      return s;
    at = (size_t)(e - args->tmaps); /* not reached: slot_fast refuses what these refuse */
  }
  gcl__tmap_who who = who_of(args, index, element);
  gcl_tensormap_desc d;
  if ((s = gcl__tmap_translate(t, options, &who, &d)) || (s = begin(ctx, &who)) ||
      (s = check_device(ctx, t, &who)) || (s = encode_into(ctx, &d, &who, map, &args->tmaps[at])))
    return s;
  args->snaps[at].ndim = 0; /* the entry changed; the next refresh translates */
  if (args->unset_bytes[index]) gcl__args_tmap_mark(args, index, element, 1);
  return GCL_OK;
}

gcl_status gcl_args_set_tensormap(gcl_args *args, gcl_context *ctx, size_t index, size_t element,
                                  const DLTensor *t, const gcl_tensormap_options *options) {
  return set_one(args, ctx, index, element, t, options);
}

/* --- re-pointing maps: cuTensorMapReplaceAddress -------------------------------------------- */

static CUresult replace(void *map, uint64_t address) {
  return gcl__cu.cuTensorMapReplaceAddress((CUtensorMap *)map, (void *)(uintptr_t)address);
}

static uint64_t address_at(const void *base, size_t stride, size_t i) {
  uint64_t a;
  memcpy(&a, (const unsigned char *)base + stride * i, sizeof a);
  return a;
}

/* Puts maps [0, k) back at the addresses their entries still hold (replace-address gives the
 * bytes of a fresh encode, so this restores them exactly). */
static void rollback(unsigned char *map, const gcl__tmap_entry *e, size_t k) {
  for (size_t j = 0; j < k; j++) replace(map + j * GCL_TENSORMAP_BYTES, e[j].address);
}

/* Map i of a run (at map, entries e) whose re-point to a gave rc: with INVALID_CONTEXT, ctx is
 * bound and the call made once more; if it still fails, maps [0, i] are put back and the
 * failure reported. Off the fast path. */
__attribute__((noinline)) static gcl_status replace_failed(gcl_context *ctx, const gcl_args *args,
                                                           size_t index, size_t first,
                                                           unsigned char *map,
                                                           const gcl__tmap_entry *e, size_t i,
                                                           uint64_t a, CUresult rc) {
  if (rc == CUDA_ERROR_INVALID_CONTEXT && gcl__context_bind(ctx) == GCL_OK)
    rc = replace(map + i * GCL_TENSORMAP_BYTES, a);
  if (rc == CUDA_SUCCESS) return GCL_OK;
  rollback(map, e, i + 1);
  char w[192];
  gcl__tmap_who who = who_of(args, index, first + i);
  return gcl__cu_fail(rc, "%s: cuTensorMapReplaceAddress(0x%llx)",
                      gcl__tmap_who_format(&who, w, sizeof w), (unsigned long long)a);
}

/* Re-points maps [0, n) in place to the addresses at addr (stride bytes apart), skipping those
 * already there; then records the addresses. The driver may want a current context
 * (CUDA_ERROR_INVALID_CONTEXT): ctx is bound then and the call retried, so the common case
 * costs no context check. On failure every map is put back. */
static gcl_status replace_run(gcl_context *ctx, const gcl_args *args, size_t index, size_t first,
                              unsigned char *map, gcl__tmap_entry *e, size_t n, const void *addr,
                              size_t stride) {
  for (size_t i = 0; i < n; i++) {
    uint64_t a = address_at(addr, stride, i);
    if (a == e[i].address) continue;
    CUresult rc = replace(map + i * GCL_TENSORMAP_BYTES, a);
    gcl_status s = rc == CUDA_SUCCESS ? GCL_OK
                                      : replace_failed(ctx, args, index, first, map, e, i, a, rc);
    if (s != GCL_OK) return s;
  }
  for (size_t i = 0; i < n; i++) e[i].address = address_at(addr, stride, i);
  return GCL_OK;
}

/* One map re-pointed to a checked address, inline: no call but the driver's; anything but
 * success (a context to bind, a failure to report and undo) goes to replace_failed. */
static inline gcl_status replace_single(gcl_context *ctx, const gcl_args *args, size_t index,
                                        size_t element, unsigned char *map, gcl__tmap_entry *e,
                                        uint64_t a) {
  if (a == e->address) return GCL_OK;
  CUresult rc = replace(map, a);
  gcl_status s = rc == CUDA_SUCCESS ? GCL_OK
                                    : replace_failed(ctx, args, index, element, map, e, 0, a, rc);
  if (s == GCL_OK) e->address = a;
  return s;
}

static gcl_status check_replace(const gcl__tmap_who *who, const gcl__tmap_entry *e, uint64_t a) {
  if (!gcl__tmap_key_valid(&e->key))
    return gcl__tmap_fail(who, GCL_ERROR_UNSET_ARGUMENT,
                          "no tensor map encoded by gclaunch here to re-point (encode it with "
                          "gcl_args_set_tensormap first; raw setters forget it)");
  unsigned align = gcl__tmap_key_align(&e->key);
  if (a == 0 || a % align)
    return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT,
                          "address 0x%llx: TMA needs a nonzero %u-byte aligned global address",
                          (unsigned long long)a, align);
  return GCL_OK;
}

static gcl_status replace_many(gcl_args *args, gcl_context *ctx, size_t index, size_t first,
                               size_t n, const uint64_t *addresses) {
  gcl_status s = need(args, ctx, index, "gcl_args_replace_tensormap_addresses");
  if (s || n == 0) return s;
  if (!addresses)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "addresses: expected %zu addresses, got NULL", n);
  gcl__tmap_who who;
  unsigned char *map;
  gcl__tmap_entry *e;
  if ((s = gcl__args_tmap_slot(args, index, first, n, &who, &map, &e))) return s;
  for (size_t i = 0; i < n; i++) {
    gcl__tmap_who w = who;
    w.element += i;
    if ((s = check_replace(&w, &e[i], addresses[i]))) return s;
  }
  return replace_run(ctx, args, index, first, map, e, n, addresses, sizeof *addresses);
}

/* One map: the checks of replace_many inline, in the order of their cost; anything they refuse
 * goes to replace_many, which checks again and says what is wrong. */
static inline gcl_status replace_one(gcl_args *args, gcl_context *ctx, size_t index,
                                     size_t element, uint64_t address) {
  size_t at;
  unsigned char *map;
  if (args && ctx && (map = slot_fast(args, index, element, 1, &at))) {
    gcl__tmap_entry *e = &args->tmaps[at];
    if (gcl__tmap_key_valid(&e->key) && address &&
        !(address & (gcl__tmap_key_align(&e->key) - 1u)))
      return replace_single(ctx, args, index, element, map, e, address);
  }
  return replace_many(args, ctx, index, element, 1, &address);
}

gcl_status gcl_args_replace_tensormap_addresses(gcl_args *args, gcl_context *ctx, size_t index,
                                                size_t first, size_t n,
                                                const uint64_t *addresses) {
  if (n == 1 && addresses) /* a batch of one: the single map's path, same checks and messages */
    return replace_one(args, ctx, index, first, addresses[0]);
  return replace_many(args, ctx, index, first, n, addresses);
}

gcl_status gcl_args_replace_tensormap_address(gcl_args *args, gcl_context *ctx, size_t index,
                                              size_t element, uint64_t address) {
  return replace_one(args, ctx, index, element, address);
}

/* --- refresh: re-encode only what changed beyond the address -------------------------------- */

/* Translates t for a refresh into *d and the key and address into *fresh; true in *same when
 * the map there was encoded by gclaunch from a description equal but for the address. */
static gcl_status refresh_probe(gcl_context *ctx, const DLTensor *t, const gcl_tensormap_options *o,
                                const gcl__tmap_who *who, const gcl__tmap_entry *old,
                                gcl_tensormap_desc *d, gcl__tmap_entry *fresh, bool *same) {
  gcl_status s;
  if ((s = gcl__tmap_translate(t, o, who, d)) || (s = check_device(ctx, t, who))) return s;
  gcl__tmap_key_make(d, &fresh->key);
  fresh->address = d->address;
  *same = gcl__tmap_key_valid(&old->key) && gcl__tmap_key_equal(&fresh->key, &old->key);
  return GCL_OK;
}

static gcl_status refresh_one(gcl_args *args, gcl_context *ctx, size_t index, size_t element,
                              const DLTensor *t, const gcl_tensormap_options *options) {
  gcl__tmap_who who;
  unsigned char *map;
  gcl__tmap_entry *e, fresh;
  gcl_tensormap_desc d;
  bool same = false;
  gcl_status s;
  if ((s = need(args, ctx, index, "gcl_args_refresh_tensormap")) ||
      (s = gcl__args_tmap_slot(args, index, element, 1, &who, &map, &e)) ||
      (s = refresh_probe(ctx, t, options, &who, e, &d, &fresh, &same)))
    return s;
  if (same) s = replace_run(ctx, args, index, element, map, e, 1, &fresh.address, 0);
  else if ((s = begin(ctx, &who)) == GCL_OK && (s = encode_into(ctx, &d, &who, map, e)) == GCL_OK)
    gcl__args_tmap_mark(args, index, element, 1);
  if (s == GCL_OK) /* the next refresh from these inputs compares them and re-points */
    gcl__tmap_snap_make(t, options, gcl__tmap_key_align(&e->key), &args->snaps[e - args->tmaps]);
  return s;
}

/* t is on ctx's device (check_device, without its message). */
static inline bool device_ok(const gcl_context *ctx, const DLTensor *t) {
  return t->device.device_type != kDLCUDA || t->device.device_id == ctx->device;
}

/* The fast path: t and options equal the inputs of the map's last refresh but for the address
 * (tmap.h: they translate to the same description), so the address alone is checked and the
 * map re-pointed. Anything else -- no snapshot, another shape, stride, dtype, device, option,
 * a NULL, misaligned or overflowing address -- goes to refresh_one: a full translation, its
 * messages, and a re-encode unless only the address changed. */
static gcl_status refresh_fast(gcl_args *args, gcl_context *ctx, size_t index, size_t element,
                               const DLTensor *t, const gcl_tensormap_options *options) {
  size_t at;
  unsigned char *map;
  uint64_t a;
  if (args && ctx && (map = slot_fast(args, index, element, 1, &at))) {
    const gcl__tmap_snap *snap = &args->snaps[at];
    if (gcl__tmap_snap_match(snap, t, options) && gcl__tmap_snap_address(t, snap->align, &a) &&
        device_ok(ctx, t))
      return replace_single(ctx, args, index, element, map, &args->tmaps[at], a);
  }
  return refresh_one(args, ctx, index, element, t, options);
}

gcl_status gcl_args_refresh_tensormap(gcl_args *args, gcl_context *ctx, size_t index,
                                      size_t element, const DLTensor *t,
                                      const gcl_tensormap_options *options) {
  return refresh_fast(args, ctx, index, element, t, options);
}

static const gcl_tensormap_options *option_at(const gcl_tensormap_options *o, size_t count,
                                              size_t i) {
  return count == 1 ? o : o + i;
}

/* The batch fast path: every map's snapshot matches (see refresh_fast); the new addresses go to
 * the scratch entries. False at the first map that does not. */
static bool refresh_all_same(gcl_args *args, const gcl_context *ctx, size_t at, size_t n,
                             const DLTensor *const *tensors,
                             const gcl_tensormap_options *options, size_t options_count) {
  const gcl__tmap_snap *snap = &args->snaps[at];
  for (size_t i = 0; i < n; i++) {
    const DLTensor *t = tensors[i];
    if (!gcl__tmap_snap_match(&snap[i], t, option_at(options, options_count, i)) ||
        !gcl__tmap_snap_address(t, snap[i].align, &args->scratch_entries[i].address) ||
        !device_ok(ctx, t))
      return false;
  }
  return true;
}

/* After a slow batch refresh succeeded: the snapshots of the inputs it translated. */
static void snap_all(gcl_args *args, size_t at, size_t n, const DLTensor *const *tensors,
                     const gcl_tensormap_options *options, size_t options_count) {
  for (size_t i = 0; i < n; i++)
    gcl__tmap_snap_make(tensors[i], option_at(options, options_count, i),
                        gcl__tmap_key_align(&args->tmaps[at + i].key), &args->snaps[at + i]);
}

static gcl_status check_batch(const gcl_args *args, const gcl_context *ctx, size_t n,
                              const DLTensor *const *tensors,
                              const gcl_tensormap_options *options, size_t options_count,
                              const char *fn) {
  gcl_status s = need(args, ctx, SIZE_MAX, fn);
  if (s || n == 0) return s;
  if (!tensors)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "tensors: expected %zu tensors, got NULL", n);
  if (!options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "options: expected a pointer, got NULL");
  if (options_count != 1 && options_count != n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "options_count = %zu: expected 1 (the same options for every map) or n = %zu",
                     options_count, n);
  return GCL_OK;
}

/* Commits n maps and entries from the args' scratch into the buffer, marks them set. */
static void commit(gcl_args *args, size_t index, size_t first, size_t n, unsigned char *map,
                   gcl__tmap_entry *e) {
  memcpy(map, args->scratch, n * GCL_TENSORMAP_BYTES);
  memcpy(e, args->scratch_entries, n * sizeof *e);
  gcl__args_tmap_mark(args, index, first, n);
}

gcl_status gcl_args_set_tensormaps(gcl_args *args, gcl_context *ctx, size_t index, size_t first,
                                   size_t n, const DLTensor *const *tensors,
                                   const gcl_tensormap_options *options, size_t options_count) {
  gcl_status s = check_batch(args, ctx, n, tensors, options, options_count, "gcl_args_set_tensormaps");
  if (s || n == 0) return s;
  if (n == 1) return set_one(args, ctx, index, first, tensors[0], options);
  gcl__tmap_who who;
  unsigned char *map;
  gcl__tmap_entry *e;
  if ((s = gcl__args_tmap_slot(args, index, first, n, &who, &map, &e))) return s;
  for (size_t i = 0; i < n; i++) {
    gcl_tensormap_desc d;
    who.element = first + i;
    if ((s = gcl__tmap_translate(tensors[i], option_at(options, options_count, i), &who, &d)) ||
        (i == 0 && (s = begin(ctx, &who))) || (s = check_device(ctx, tensors[i], &who)) ||
        (s = encode_into(ctx, &d, &who, args->scratch + i * GCL_TENSORMAP_BYTES,
                         &args->scratch_entries[i])))
      return s;
  }
  commit(args, index, first, n, map, e);
  gcl__args_tmap_unsnap(args, index, first, n);
  return GCL_OK;
}

/* The slow half of a batch refresh (some description changed): every map is built in the
 * scratch -- copied and re-pointed, or encoded -- and committed only when all succeeded. */
static gcl_status refresh_rebuild(gcl_args *args, gcl_context *ctx, gcl__tmap_who who,
                                  unsigned char *map, const gcl__tmap_entry *e, size_t n,
                                  const DLTensor *const *tensors,
                                  const gcl_tensormap_options *options, size_t options_count) {
  size_t first = who.element;
  gcl_status s = begin(ctx, &who);
  for (size_t i = 0; s == GCL_OK && i < n; i++) {
    unsigned char *out = args->scratch + i * GCL_TENSORMAP_BYTES;
    gcl__tmap_entry *fresh = &args->scratch_entries[i];
    who.element = first + i;
    if (gcl__tmap_key_valid(&e[i].key) && gcl__tmap_key_equal(&fresh->key, &e[i].key)) {
      memcpy(out, map + i * GCL_TENSORMAP_BYTES, GCL_TENSORMAP_BYTES);
      CUresult rc = fresh->address == e[i].address ? CUDA_SUCCESS : replace(out, fresh->address);
      char w[192];
      if (rc != CUDA_SUCCESS)
        s = gcl__cu_fail(rc, "%s: cuTensorMapReplaceAddress(0x%llx)",
                         gcl__tmap_who_format(&who, w, sizeof w),
                         (unsigned long long)fresh->address);
      continue;
    }
    gcl_tensormap_desc d;
    if ((s = gcl__tmap_translate(tensors[i], option_at(options, options_count, i), &who, &d)) ==
        GCL_OK)
      s = encode_into(ctx, &d, &who, out, fresh);
  }
  return s;
}

gcl_status gcl_args_refresh_tensormaps(gcl_args *args, gcl_context *ctx, size_t index,
                                       size_t first, size_t n, const DLTensor *const *tensors,
                                       const gcl_tensormap_options *options,
                                       size_t options_count) {
  gcl_status s = check_batch(args, ctx, n, tensors, options, options_count, "gcl_args_refresh_tensormaps");
  if (s || n == 0) return s;
  if (n == 1) return refresh_fast(args, ctx, index, first, tensors[0], options);
  size_t at;
  unsigned char *map = slot_fast(args, index, first, n, &at);
  if (map && refresh_all_same(args, ctx, at, n, tensors, options, options_count))
    return replace_run(ctx, args, index, first, map, &args->tmaps[at], n,
                       &args->scratch_entries[0].address, sizeof *args->scratch_entries);
  gcl__tmap_who who;
  gcl__tmap_entry *e;
  if ((s = gcl__args_tmap_slot(args, index, first, n, &who, &map, &e))) return s;
  size_t changed = 0;
  for (size_t i = 0; i < n; i++) {
    gcl__tmap_who w = who;
    gcl_tensormap_desc d;
    bool same = false;
    w.element = first + i;
    if ((s = refresh_probe(ctx, tensors[i], option_at(options, options_count, i), &w, &e[i], &d,
                           &args->scratch_entries[i], &same)))
      return s;
    changed += !same;
  }
  if (!changed)
    s = replace_run(ctx, args, index, first, map, e, n, &args->scratch_entries[0].address,
                    sizeof *args->scratch_entries);
  else if ((s = refresh_rebuild(args, ctx, who, map, e, n, tensors, options, options_count)) ==
           GCL_OK)
    commit(args, index, first, n, map, e);
  if (s == GCL_OK) snap_all(args, (size_t)(e - args->tmaps), n, tensors, options, options_count);
  return s;
}

gcl_status gcl__tensormap_encode_as(gcl_context *ctx, const DLTensor *t,
                                    const gcl_tensormap_options *options, const gcl__tmap_who *who,
                                    void *map) {
  gcl_tensormap_desc d;
  gcl_status s;
  if ((s = gcl__tmap_translate(t, options, who, &d)) || (s = begin(ctx, who)) ||
      (s = check_device(ctx, t, who)))
    return s;
  return encode_into(ctx, &d, who, map, NULL);
}
