/* Tensor maps on the driver edge: cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col from a
 * checked description (lib/core/tmap.c), and cuTensorMapReplaceAddress when only the address
 * changed (refresh and re-point, for megakernels that relaunch on new buffers). Where the maps
 * sit in the args and what they were made from is lib/core/args_tmap.c's: this file translates,
 * calls the driver, and hands the results to it.
 *
 * The hot paths format nothing (messages are built from their pieces on failure only), allocate
 * nothing (the cache and the batch scratch come with the args), call the driver only after the
 * fault check, and change nothing when they fail. */
#include "cuda_internal.h"
#include "tmap.h"
#include "args_internal.h"

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

/* t is on ctx's device (check_device, without its message). */
static inline bool device_ok(const gcl_context *ctx, const DLTensor *t) {
  return t->device.device_type != kDLCUDA || t->device.device_id == ctx->device;
}

/* Once per call: the device has TMA. (A context exists only once the driver loaded, so there is
 * no gcl__cu_load here.) ctx is not made current here: the encode needs some current context,
 * and its bytes should not depend on which (docs/facts.md "Tensor maps: cost and bytes"), so
 * encode_into binds ctx only when the driver refuses without it -- one cuCtxGetCurrent less per
 * map. */
static gcl_status begin(gcl_context *ctx, const gcl__tmap_who *who) {
  if (ctx->sm < 90)
    return gcl__tmap_fail(who, GCL_ERROR_INVALID_ARGUMENT,
                          "device %d is sm_%d: tensor maps need sm_90 or later", ctx->device,
                          ctx->sm);
  return GCL_OK;
}

/* --- NVIDIA's Blackwell descriptor defect (docs/tensormap-rules.md) ---------------------------
 * The 595.71.05 driver release notes (known issues): on Blackwell, cuTensorMapEncodeTiled and
 * cuTensorMapEncodeIm2col* may configure a descriptor wrongly when the tensor's allocation is
 * under 128 KB and the tensor is not dense and non-overlapping (sporadic illegal memory accesses,
 * MMU faults); the documented fix-up clears bit 85 of the encoded bytes (bit 21 of the second
 * 8-byte word) after the encode. CUTLASS, Triton and CCCL apply it on drivers up to CUDA 13.1
 * (13010); 595.71.05 is a CUDA 13.2 driver (13020) and lists the issue as its own. So: devices
 * sm_100 ... sm_12x (Blackwell), drivers reporting 13020 or less, maps gcl__tmap_sparse_small
 * calls small and not dense. A re-point (cuTensorMapReplaceAddress) applies it again. */
#define GCL__TMAP_BIT85_LAST_DRIVER 13020

static bool bit85_device(const gcl_context *ctx) {
  if (ctx->sm < 100 || ctx->sm >= 130) return false; /* Hopper pays one comparison */
  int v = 0;
  return gcl_driver_version(&v) == GCL_OK && v <= GCL__TMAP_BIT85_LAST_DRIVER;
}

static void clear_bit85(void *map) {
  uint64_t q;
  memcpy(&q, (unsigned char *)map + 8, sizeof q);
  q &= ~(1ull << 21);
  memcpy((unsigned char *)map + 8, &q, sizeof q);
}

/* After cuTensorMapReplaceAddress of a map gclaunch encoded from snap: the fix-up again (the
 * description, and so the predicate, is the snapshot's). */
__attribute__((noinline)) static void bit85_after_replace(const gcl_context *ctx,
                                                          const gcl__tmap_snap *snap, void *map) {
  if (!snap->ndim || !bit85_device(ctx)) return;
  DLTensor t = {.data = (void *)(uintptr_t)256, .device = snap->device, .ndim = snap->ndim,
                .dtype = snap->dtype, .shape = (int64_t *)(uintptr_t)snap->shape,
                .strides = snap->has_strides ? (int64_t *)(uintptr_t)snap->strides : NULL};
  static const gcl__tmap_who who = {.text = "tensor"};
  gcl_tensormap_desc d;
  if (gcl__tmap_translate(&t, &snap->options, &who, &d) == GCL_OK && gcl__tmap_sparse_small(&d))
    clear_bit85(map);
}
#define BIT85_AFTER_REPLACE(ctx, snap, map)                                                       \
  do {                                                                                            \
    if ((ctx)->sm >= 100) bit85_after_replace((ctx), (snap), (map));                             \
  } while (0)

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

__attribute__((noinline)) static gcl_status encode_failed(const gcl_tensormap_desc *d,
                                                          const gcl__tmap_who *who, CUresult rc) {
  char w[768];
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

/* Encodes a translated description into *m, which may be written also on failure (the args'
 * scratch, or a caller's temporary). */
static gcl_status encode_into(gcl_context *ctx, const gcl_tensormap_desc *d,
                              const gcl__tmap_who *who, CUtensorMap *m) {
  CUresult rc = encode_desc(d, m);
  CUcontext cur = NULL;
  if (rc != CUDA_SUCCESS && (gcl__cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx->ctx)) {
    gcl_status s = gcl__context_bind(ctx); /* no context, or another device's, was current */
    if (s != GCL_OK) return s;
    rc = encode_desc(d, m);
  }
  if (rc != CUDA_SUCCESS) return encode_failed(d, who, rc);
  if (ctx->sm >= 100 && bit85_device(ctx) && gcl__tmap_sparse_small(d)) clear_bit85(m);
  gcl__fault_note_tensormaps(); /* a later ILLEGAL_INSTRUCTION names the TMA rule */
  return GCL_OK;
}

/* Translates t with o, checks it against ctx and encodes it into m (which the failure may leave
 * written); *address gets the map's. */
static gcl_status encode_tensor(gcl_context *ctx, const DLTensor *t, const gcl_tensormap_options *o,
                                const gcl__tmap_who *who, CUtensorMap *m, uint64_t *address) {
  gcl_tensormap_desc d;
  gcl_status s;
  if ((s = gcl__tmap_translate(t, o, who, &d)) || (s = check_device(ctx, t, who)) ||
      (s = encode_into(ctx, &d, who, m)))
    return s;
  *address = d.address;
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
  if (gcl__faulted()) return gcl__fault_check();
  static const gcl__tmap_who who = {.text = "tensor"};
  uint64_t address;
  CUtensorMap tmp; /* map stays untouched on failure */
  gcl_status s = begin(ctx, &who);
  if (!s) s = encode_tensor(ctx, t, options, &who, &tmp, &address);
  if (!s) memcpy(map, &tmp, sizeof tmp);
  return s;
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

/* Map i of run (at m) whose re-point to a gave rc: with INVALID_CONTEXT, ctx is bound and the
 * call made once more; if it still fails, the failure is reported. Off the fast path. */
__attribute__((noinline)) static gcl_status replace_failed(gcl_context *ctx,
                                                           const gcl__tmap_run *run, size_t i,
                                                           void *m, uint64_t a, CUresult rc) {
  if (rc == CUDA_ERROR_INVALID_CONTEXT && gcl__context_bind(ctx) == GCL_OK) rc = replace(m, a);
  if (rc == CUDA_SUCCESS) {
    BIT85_AFTER_REPLACE(ctx, &run->entry[i].snap, m);
    return GCL_OK;
  }
  char w[768];
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return gcl__cu_fail(rc, "%s: cuTensorMapReplaceAddress(0x%llx)",
                      gcl__tmap_who_format(&who, w, sizeof w), (unsigned long long)a);
}

/* Re-points maps [0, n) of run in place to the addresses at addr (stride bytes apart), skipping
 * those already there, then has the cache record them. The driver may want a current context
 * (CUDA_ERROR_INVALID_CONTEXT): ctx is bound then and the call retried, so the common case
 * costs no context check. On failure maps [0, i) go back to the addresses their entries still
 * hold (replace-address gives the bytes of a fresh encode, so this restores them exactly). */
static gcl_status repoint_run(gcl_context *ctx, const gcl__tmap_run *run, size_t n,
                              const void *addr, size_t stride) {
  for (size_t i = 0; i < n; i++) {
    uint64_t a = address_at(addr, stride, i);
    unsigned char *m = run->map + i * GCL_TENSORMAP_BYTES;
    if (a == run->entry[i].address) continue;
    CUresult rc = replace(m, a);
    if (rc == CUDA_SUCCESS) {
      BIT85_AFTER_REPLACE(ctx, &run->entry[i].snap, m);
      continue;
    }
    gcl_status s = replace_failed(ctx, run, i, m, a, rc);
    if (s == GCL_OK) continue;
    for (size_t j = 0; j < i; j++) {
      replace(run->map + j * GCL_TENSORMAP_BYTES, run->entry[j].address);
      BIT85_AFTER_REPLACE(ctx, &run->entry[j].snap, run->map + j * GCL_TENSORMAP_BYTES);
    }
    return s;
  }
  gcl__args_tmap_repointed(run, n, addr, stride);
  return GCL_OK;
}

__attribute__((noinline)) static gcl_status repoint_refused(const gcl__tmap_run *run, size_t i,
                                                            uint64_t a) {
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  const gcl__tmap_snap *snap = &run->entry[i].snap;
  if (!snap->ndim)
    return gcl__tmap_fail(&who, GCL_ERROR_UNSET_ARGUMENT,
                          "no tensor map encoded by gclaunch here to re-point (encode it with "
                          "gcl_args_set_tensormaps first; raw setters forget it)");
  return gcl__tmap_fail(&who, GCL_ERROR_INVALID_ARGUMENT,
                        "address 0x%llx: TMA needs a nonzero %u-byte aligned global address",
                        (unsigned long long)a, snap->align);
}

static gcl_status need(const gcl_args *args, const gcl_context *ctx, const char *fn) {
  if (!args) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  return GCL_OK;
}

gcl_status gcl_args_repoint_tensormaps(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                                       size_t n, const uint64_t *addresses) {
  static const char fn[] = "gcl_args_repoint_tensormaps";
  gcl_status s = need(args, ctx, fn);
  if (s || n == 0) return s;
  if (!addresses)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: addresses: expected %zu addresses, got NULL",
                     fn, n);
  gcl__tmap_run run = {0};
  if ((s = gcl__args_tmap_run(args, first, n, fn, &run))) return s;
  for (size_t i = 0; i < n; i++) {
    const gcl__tmap_snap *snap = &run.entry[i].snap;
    uint64_t a = addresses[i];
    if (!snap->ndim || !a || (a & (snap->align - 1u))) return repoint_refused(&run, i, a);
  }
  if (gcl__faulted()) return gcl__fault_check();
  return repoint_run(ctx, &run, n, addresses, sizeof *addresses);
}

/* --- setting and refreshing maps ------------------------------------------------------------ */

static const gcl_tensormap_options *option_at(const gcl_tensormap_options *o, size_t count,
                                              size_t i) {
  return count == 1 ? o : o + i;
}

/* Map i may be re-pointed for a refresh: its entry holds inputs equal to t and o but for the
 * address, and t's address is usable (tmap.h); *a gets it. */
static inline bool refreshable(const gcl_context *ctx, const gcl__tmap_entry *e, const DLTensor *t,
                               const gcl_tensormap_options *o, uint64_t *a) {
  return gcl__tmap_snap_match(&e->snap, t, o) && gcl__tmap_snap_address(t, e->snap.align, a) &&
         device_ok(ctx, t);
}

/* The refresh fast path: every map is refreshable; the addresses go to the scratch. */
static bool all_refreshable(gcl_args *args, const gcl_context *ctx, const gcl__tmap_run *run,
                            size_t n, const DLTensor *const *tensors,
                            const gcl_tensormap_options *options, size_t options_count) {
  for (size_t i = 0; i < n; i++)
    if (!refreshable(ctx, &run->entry[i], tensors[i], option_at(options, options_count, i),
                     &args->scratch_addresses[i]))
      return false;
  return true;
}

/* Map i into the scratch: copied and re-pointed when refresh allows it, else encoded. */
static gcl_status stage(gcl_args *args, gcl_context *ctx, const gcl__tmap_run *run, size_t i,
                        const DLTensor *t, const gcl_tensormap_options *o, bool refresh) {
  CUtensorMap *out = (CUtensorMap *)(void *)(args->scratch + i * GCL_TENSORMAP_BYTES);
  uint64_t *a = &args->scratch_addresses[i];
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  if (!refresh || !refreshable(ctx, &run->entry[i], t, o, a))
    return encode_tensor(ctx, t, o, &who, out, a);
  memcpy(out, run->map + i * GCL_TENSORMAP_BYTES, GCL_TENSORMAP_BYTES);
  if (*a == run->entry[i].address) return GCL_OK;
  CUresult rc = replace(out, *a);
  if (rc != CUDA_SUCCESS) return replace_failed(ctx, run, i, out, *a, rc);
  BIT85_AFTER_REPLACE(ctx, &run->entry[i].snap, out);
  return GCL_OK;
}

static gcl_status check_batch(const gcl_args *args, const gcl_context *ctx, size_t n,
                              const DLTensor *const *tensors, const gcl_tensormap_options *options,
                              size_t options_count, unsigned flags, const char *fn) {
  gcl_status s = need(args, ctx, fn);
  if (s || n == 0) return s;
  if (!tensors)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: tensors: expected %zu tensors, got NULL", fn, n);
  if (!options)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options: expected a pointer, got NULL", fn);
  if (options_count != 1 && options_count != n)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: options_count = %zu: expected 1 (the same "
                     "options for every map) or n = %zu", fn, options_count, n);
  if (flags & ~GCL_TENSORMAP_REFRESH)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: flags = 0x%x: expected 0 or "
                     "GCL_TENSORMAP_REFRESH (0x1)", fn, flags);
  return GCL_OK;
}

gcl_status gcl_args_set_tensormaps(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                                   size_t n, const DLTensor *const *tensors,
                                   const gcl_tensormap_options *options, size_t options_count,
                                   unsigned flags) {
  static const char fn[] = "gcl_args_set_tensormaps";
  gcl_status s = check_batch(args, ctx, n, tensors, options, options_count, flags, fn);
  if (s || n == 0) return s;
  gcl__tmap_run run = {0};
  if ((s = gcl__args_tmap_run(args, first, n, fn, &run)) || (s = begin(ctx, &run.who))) return s;
  if (gcl__faulted()) return gcl__fault_check();
  bool refresh = flags & GCL_TENSORMAP_REFRESH;
  if (refresh && all_refreshable(args, ctx, &run, n, tensors, options, options_count))
    return repoint_run(ctx, &run, n, args->scratch_addresses, sizeof *args->scratch_addresses);
  for (size_t i = 0; i < n; i++)
    if ((s = stage(args, ctx, &run, i, tensors[i], option_at(options, options_count, i), refresh)))
      return s;
  gcl__args_tmap_commit(args, &run, n, tensors, options, options_count);
  return GCL_OK;
}
