/* Tensor maps on the driver edge: cuTensorMapEncodeTiled or cuTensorMapEncodeIm2col from a
 * checked description (lib/core/tmap.c), and cuTensorMapReplaceAddress when only the address
 * changed (refresh and re-point, for megakernels that relaunch on new buffers). Where the maps
 * sit in the args and what they were made from is lib/core/tmap_args.c's: this file translates,
 * calls the driver, and hands the results to it.
 *
 * Batches are admitted map by map by the one admission (lib/core/tmap_admit.h: every check, the
 * cache, the messages; see tmap_plan.h), executed here (gcl__tmap_execute: the patch or the
 * driver is chosen here, after admission), and committed by the core. The hot paths format nothing (messages are built from their pieces on
 * failure only), allocate nothing (the plan space and the cache come with the args or the table),
 * call the driver only after the fault check, and change nothing when they fail. */
#include "cuda_internal.h"
#include "tmap.h"
#include "args_internal.h"
#include "tmap_admit.h"

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
  if (ctx->sm < 100 || ctx->sm >= 130) return false;
  int v = 0;
  return gcl_driver_version(&v) == GCL_OK && v <= GCL__TMAP_BIT85_LAST_DRIVER;
}

/* The context's tensor-map execution state, learned (cuda_internal.h): the fix-up's verdict
 * (the driver version is the process's, the architecture the context's), and for a plan with
 * re-points the device's patched modes (a per-process state, tmap_patch.c). Racing threads
 * learn the same bits; each ORs in what it learned. */
__attribute__((noinline, cold)) unsigned gcl__tmap_exec_learn(gcl_context *ctx, unsigned need) {
  unsigned add = GCL__TMAP_EXEC_FIXUP | (bit85_device(ctx) ? GCL__TMAP_EXEC_BIT85 : 0u);
  if (need & GCL__TMAP_EXEC_PATCH) /* the modes the driver re-points: those not patched */
    add |= GCL__TMAP_EXEC_PATCH | (~gcl__tmap_patch_modes(ctx) & GCL__TMAP_PATCH_MODES);
  return atomic_fetch_or_explicit(&ctx->tmap_exec, (unsigned char)add, memory_order_relaxed) |
         add;
}

static void clear_bit85(void *map) {
  uint64_t q;
  memcpy(&q, (unsigned char *)map + 8, sizeof q);
  q &= ~(1ull << 21);
  memcpy((unsigned char *)map + 8, &q, sizeof q);
}

/* After cuTensorMapReplaceAddress of a map gclaunch encoded from snap: the fix-up again (the
 * description, and so the predicate, is the snapshot's). */
__attribute__((noinline)) static void bit85_after_replace(const gcl__tmap_snap *snap, void *map) {
  if (!snap->ndim) return;
  DLTensor t = {.data = (void *)(uintptr_t)256, .device = snap->device, .ndim = snap->ndim,
                .dtype = snap->dtype, .shape = (int64_t *)(uintptr_t)snap->shape,
                .strides = snap->has_strides ? (int64_t *)(uintptr_t)snap->strides : NULL};
  static const gcl__tmap_who who = {.text = "tensor"};
  gcl_tensormap_desc d;
  if (gcl__tmap_translate(&t, &snap->options, &who, &d) == GCL_OK && gcl__tmap_sparse_small(&d))
    clear_bit85(map);
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

/* --- executing a plan (lib/core/tmap_plan.h) ------------------------------------------------ */

static CUresult replace(void *map, uint64_t address) {
  return gcl__cu.cuTensorMapReplaceAddress((CUtensorMap *)map, (void *)(uintptr_t)address);
}

/* Map i of run (its bytes at m), re-pointed to a, gave rc: with INVALID_CONTEXT, ctx is bound
 * and the call made once more; if it still fails, the failure is reported. Off the fast path.
 * The cold paths take the run's values (GCL__TMAP_RUN_PARAMS) and the space, never the plan or
 * the run's address: nothing takes either, so a one-map call keeps both in registers. */
__attribute__((noinline)) static gcl_status replace_failed(gcl_context *ctx,
                                                           GCL__TMAP_RUN_PARAMS, size_t i,
                                                           void *m, uint64_t a, CUresult rc) {
  GCL__TMAP_RUN_REBUILD;
  if (rc == CUDA_ERROR_INVALID_CONTEXT && gcl__context_bind(ctx) == GCL_OK) rc = replace(m, a);
  if (rc == CUDA_SUCCESS) return GCL_OK;
  char w[768];
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return gcl__cu_fail(rc, "%s: cuTensorMapReplaceAddress(0x%llx)",
                      gcl__tmap_who_format(&who, w, sizeof w), (unsigned long long)a);
}

/* Map i of run, encoded from d, gave rc (encode_into's retry done). Off the fast path. */
__attribute__((noinline)) static gcl_status step_encode_failed(GCL__TMAP_RUN_PARAMS, size_t i,
                                                               const gcl_tensormap_desc *d,
                                                               CUresult rc) {
  GCL__TMAP_RUN_REBUILD;
  gcl__tmap_who who = gcl__tmap_run_who(run, i);
  return encode_failed(d, &who, rc);
}

/* Whether a re-point of map i of run patches (its map's interleave is proven on the device,
 * modes from gcl__tmap_patch_modes) rather than calling the driver. */
static inline bool patches(const gcl__tmap_run *run, size_t i, unsigned modes) {
  return (modes & run->entry[i].snap.mode) != 0;
}

/* Execute failed at step i: the maps re-pointed in place before it (steps [0, i)) get their
 * saved bytes back (the first 8 of a patched map, all 128 of one the driver re-pointed) and their
 * entries their old addresses (which the step swapped into the plan's space). Map i itself is
 * as it was: the driver refused it (a refused cuTensorMapReplaceAddress leaves the map alone; an
 * encode writes only the scratch). */
__attribute__((noinline)) static void restore(GCL__TMAP_RUN_PARAMS, const gcl__tmap_space *sp,
                                              size_t i, unsigned modes) {
  GCL__TMAP_RUN_REBUILD;
  for (size_t j = 0; j < i; j++)
    if (sp->ops[j] == GCL__TMAP_REPOINT) {
      memcpy(run->map + j * GCL_TENSORMAP_BYTES, sp->out + j * GCL_TENSORMAP_BYTES,
             patches(run, j, modes) ? 8u : GCL_TENSORMAP_BYTES);
      run->entry[j].address = sp->addresses[j];
    }
}

/* Map i of run (its bytes at m), re-pointed to a by the driver, in place. The old bytes are
 * saved at save first when a later step could fail (else save is NULL), so that restore() can put
 * them back; the last step needs no copy (which in a loop of one-map re-points would read bytes
 * the driver just wrote: a store-forwarding stall that cost more than the rest of the call).
 * Values, not the space: a one-map plan's space then stays in registers. */
__attribute__((always_inline)) static inline gcl_status
repoint_by_driver(gcl_context *ctx, const gcl__tmap_run *run, size_t i,
                                    unsigned char *m, uint64_t a, unsigned char *save) {
  if (save) memcpy(save, m, GCL_TENSORMAP_BYTES);
  CUresult rc = replace(m, a);
  return rc == CUDA_SUCCESS ? GCL_OK
                            : replace_failed(ctx, GCL__TMAP_RUN_VALUES(run), i, m, a, rc);
}

/* Step i, a REPOINT made: the entry takes the new address, the space keeps the old one for
 * restore(). */
static inline void moved(const gcl__tmap_run *run, const gcl__tmap_space *sp, size_t i) {
  uint64_t *a = &sp->addresses[i], old = run->entry[i].address;
  run->entry[i].address = *a;
  *a = old;
}

/* The fast path, chosen here after admission: a plan of SKIP and REPOINT steps only, every
 * REPOINT of a mode the device patches (plan->repoint_modes), no Blackwell fix-up to apply, on a
 * context that learned both (st: ctx->tmap_exec). One test: the state's learned bits set, and
 * neither the fix-up's bit nor a re-pointed mode's driver bit. Nothing can fail, so nothing is
 * saved: 8 bytes and the entry's address per re-point. */
__attribute__((always_inline)) static inline bool patch_all(const gcl__tmap_plan *plan,
                                                           unsigned st) {
  const unsigned known = GCL__TMAP_EXEC_PATCH | GCL__TMAP_EXEC_FIXUP;
  if (plan->encodes || ((st ^ known) & (known | GCL__TMAP_EXEC_BIT85 | plan->repoint_modes)))
    return false;
  const uint32_t *ops = plan->space->ops; /* locals: the patches' byte stores alias anything */
  const uint64_t *to = plan->space->addresses;
  unsigned char *map = plan->run->map;
  gcl__tmap_entry *entry = plan->run->entry;
  for (size_t i = 0, n = plan->n; i < n; i++)
    if (ops[i] == GCL__TMAP_REPOINT) {
      uint64_t a = to[i];
      gcl__tmap_patch_address(map + i * GCL_TENSORMAP_BYTES, a);
      entry[i].address = a;
    }
  return true;
}

/* Step i of sp, a REPOINT of map i of run, in place: the patch where the device proved it for
 * the map's mode, else the driver. last: no step follows (nothing to save). */
__attribute__((always_inline)) static inline gcl_status
repoint_step(gcl_context *ctx, const gcl__tmap_run *run, const gcl__tmap_space *sp, size_t i,
             bool last, unsigned modes, bool bit85) {
  unsigned char *m = run->map + i * GCL_TENSORMAP_BYTES;
  if (patches(run, i, modes)) {
    /* The only bytes a patch changes (the bit-85 fix-up below finds that bit as its encode
     * left it: the same snapshot, so the same verdict). */
    if (!last) memcpy(sp->out + i * GCL_TENSORMAP_BYTES, m, 8);
    gcl__tmap_patch_address(m, sp->addresses[i]);
  } else {
    gcl_status s = repoint_by_driver(ctx, run, i, m, sp->addresses[i],
                                     last ? NULL : sp->out + i * GCL_TENSORMAP_BYTES);
    if (s != GCL_OK) return s;
  }
  if (bit85) bit85_after_replace(&run->entry[i].snap, m);
  moved(run, sp, i);
  return GCL_OK;
}

/* Step i of sp, an ENCODE of map i of run, into the scratch (commit copies it into the map). */
__attribute__((always_inline)) static inline gcl_status
encode_step(gcl_context *ctx, const gcl__tmap_run *run, const gcl__tmap_space *sp, size_t i,
            bool bit85) {
  unsigned char *out = sp->out + i * GCL_TENSORMAP_BYTES;
  CUresult rc = gcl__tmap_encode_desc(&sp->descs[i], (CUtensorMap *)(void *)out); /* inline */
  gcl_status s = rc == CUDA_SUCCESS ? GCL_OK
                                    : gcl__tmap_encode_retry(ctx, &sp->descs[i],
                                                             (CUtensorMap *)(void *)out, &rc);
  if (s == GCL_OK && rc != CUDA_SUCCESS)
    s = step_encode_failed(GCL__TMAP_RUN_VALUES(run), i, &sp->descs[i], rc);
  if (s == GCL_OK && bit85 && gcl__tmap_sparse_small(&sp->descs[i])) clear_bit85(out);
  return s;
}

/* gcl__tmap_execute's body, inlined into the args' entry points below. */
__attribute__((always_inline)) static inline gcl_status execute(gcl_context *ctx,
                                                                const gcl__tmap_plan *plan) {
  if (gcl__faulted()) return gcl__fault_check();
  if (!(plan->encodes | plan->repoints)) return GCL_OK;
  if (patch_all(plan, atomic_load_explicit(&ctx->tmap_exec, memory_order_relaxed)))
    return GCL_OK;
  /* Whether the Blackwell fix-up applies, and the patched modes (learned once per context) */
  const unsigned st = gcl__tmap_exec_state(
      ctx, GCL__TMAP_EXEC_FIXUP | (plan->repoints ? GCL__TMAP_EXEC_PATCH : 0u));
  const bool bit85 = (st & GCL__TMAP_EXEC_BIT85) != 0;
  const unsigned modes = plan->repoints ? ~st & GCL__TMAP_PATCH_MODES : 0u;
  const gcl__tmap_space *sp = plan->space;
  const gcl__tmap_run *run = plan->run;
  for (size_t i = 0, n = plan->n; i < n; i++) {
    unsigned op = sp->ops[i];
    gcl_status s = op == GCL__TMAP_REPOINT
                       ? repoint_step(ctx, run, sp, i, i + 1 == n, modes, bit85)
                   : op == GCL__TMAP_ENCODE ? encode_step(ctx, run, sp, i, bit85)
                                            : GCL_OK;
    if (s != GCL_OK) { /* nothing to put back before the first step (a one-map plan's only) */
      if (i) restore(GCL__TMAP_RUN_VALUES(run), sp, i, modes);
      return s;
    }
  }
  if (plan->encodes) gcl__fault_note_tensormaps(); /* a later ILLEGAL_INSTRUCTION names TMA */
  return GCL_OK;
}

gcl_status gcl__tmap_execute(gcl_context *ctx, const gcl__tmap_plan *plan) {
  return execute(ctx, plan);
}

/* --- one map into caller memory ----------------------------------------------------------- */

/* A one-map batch into a map no slot remembers (the entry is empty, so the admission answers
 * ENCODE or a refusal): the encode calls are the admission and execution of every other write,
 * inlined (the what, the entry and the space are known here, so their branches fold). */
static gcl_status encode_one(gcl_context *ctx, const DLTensor *t, const uint64_t *dlflags,
                             const gcl_tensormap_options *o, void *map) {
  static const char fn[] = "gcl_tensormap_encode";
  gcl__tmap_entry entry; /* no snapshot: the admission reads nothing else of it */
  entry.address = 0, entry.snap.ndim = 0;
  _Alignas(64) unsigned char out[GCL_TENSORMAP_BYTES]; /* map stays untouched on failure */
  uint32_t op;
  uint64_t address;
  gcl_tensormap_desc desc;
  const gcl__tmap_space space = {.cap = 1, .ops = &op, .addresses = &address, .descs = &desc,
                                 .out = out};
  const gcl__tmap_device dev = {.device = ctx->device, .sm = ctx->sm};
  gcl__tmap_what what;
  const gcl__tmap_run run = {.map = NULL, .entry = &entry, .who = {.text = "tensor"}};
  gcl__tmap_plan plan;
  plan.run = &run;
  gcl_status s;
  if ((s = gcl__tmap_what_tensors(&what, 1, &t, true, dlflags, o, 1, 0, fn)) ||
      (s = gcl__tmap_plan_inline(&plan, &space, dev, 1, &what, false)) ||
      (s = execute(ctx, &plan)))
    return s;
  memcpy(map, out, sizeof out);
  return GCL_OK;
}

gcl_status gcl_tensormap_encode(gcl_context *ctx, const DLTensor *t,
                                const gcl_tensormap_options *options, void *map) {
  return gcl_tensormap_encode_flags(ctx, t, 0, options, map);
}

gcl_status gcl_tensormap_encode_flags(gcl_context *ctx, const DLTensor *t, uint64_t dlpack_flags,
                                      const gcl_tensormap_options *options, void *map) {
  if (!ctx || !t || !options)
    return gcl__fail_null("gcl_tensormap_encode", 3, "ctx", (const void *)ctx, "t", (const void *)t,
                          "options", (const void *)options);
  if (!map || (uintptr_t)map % 64u)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_tensormap_encode: map is %p, expected a "
                     "64-byte aligned pointer", map);
  if (gcl__faulted()) return gcl__fault_check();
  return encode_one(ctx, t, &dlpack_flags, options, map);
}

/* --- args ------------------------------------------------------------------------------------ */

/* The args and the context given (n: the call's count, for GCL__REFUSED_IF_CONST). */
__attribute__((always_inline)) static inline gcl_status need(const gcl_args *args,
                                                             const gcl_context *ctx, size_t n,
                                                             const char *fn) {
  if (!args)
    return GCL__REFUSED_IF_CONST(n, gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn));
  if (!ctx)
    return GCL__REFUSED_IF_CONST(n, gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", fn));
  return GCL_OK;
}

/* args_write's answer, with hot true, for a write that execution's fast path does not finish:
 * no status of the table (gcl__refused tells the compiler a refusal is none of them either). */
#define GCL__TMAP_AGAIN ((gcl_status)0x40000000)

/* A one-map plan's space for args: its step in op and address (the caller's locals, in registers
 * where the compiler can), its description and scratch the args' (the encode reads them through
 * pointers). */
#define ARGS_ONE_SPACE(args, op, address)                                                          \
  {.cap = 1, .ops = (op), .addresses = (address), .descs = (args)->tspace.descs,                   \
   .out = (args)->tspace.out}

/* what into the n maps of args from first: admit, execute, commit (tmap_plan.h). Inlined, and
 * called with n a constant 1 where one map is written: the same admission and execution, their
 * loops and plan counts folded by the compiler (a one-map call is most of its own cost). */
__attribute__((always_inline)) static inline gcl_status
args_write(gcl_args *args, gcl_context *ctx, const gcl_field *first, size_t n,
           const gcl__tmap_what *what, const char *fn, bool hot) {
  gcl__tmap_run run = {.map = NULL}; /* in registers: zero stores a refusal path never reads */
  gcl__tmap_plan plan;
  plan.run = &run;
  /* A one-map plan's step on the stack, in registers where the compiler can (nothing but the
   * inlined admission and execution reads it; its description and scratch, which the encode
   * reads through pointers, stay the args'); a batch's in the args' space. */
  uint32_t op1;
  uint64_t address1;
  const gcl__tmap_space one = ARGS_ONE_SPACE(args, &op1, &address1);
  const gcl__tmap_device dev = {.device = ctx->device, .sm = ctx->sm};
  gcl_status s;
  if ((s = gcl__args_tmap_run(args, first, n, fn, &run)) ||
      (s = gcl__tmap_plan_inline(&plan, n == 1 ? &one : &args->tspace, dev, n, what, hot)))
    return s;
  if (hot) /* execute's fast path alone: no fault, and nothing to do or every re-point patched */
    return !gcl__faulted() && (!(plan.encodes | plan.repoints) ||
                               patch_all(&plan, atomic_load_explicit(&ctx->tmap_exec,
                                                                     memory_order_relaxed)))
               ? GCL_OK : GCL__TMAP_AGAIN; /* (an ENCODE is deferred by the admission: none here) */
  if ((s = execute(ctx, &plan))) return s;
  gcl__args_tmap_commit(args, &plan, what);
  return GCL_OK;
}

/* gcl_args_repoint_tensormaps for n maps: n a constant 1 in repoint_one. One-map calls and
 * batches are functions of their own, and the entry point only chooses (a tail call): the batch
 * loop's registers would make a one-map call save and restore six of them. */
__attribute__((always_inline)) static inline gcl_status
args_repoint(gcl_args *args, gcl_context *ctx, const gcl_field *first, size_t n,
             const uint64_t *addresses, bool hot) {
  static const char fn[] = "gcl_args_repoint_tensormaps";
  gcl_status s = need(args, ctx, n, fn);
  if (s || n == 0) return s;
  gcl__tmap_what what;
  if ((s = gcl__tmap_what_addresses(&what, n, addresses, fn))) return s;
  return args_write(args, ctx, first, n, &what, fn, hot);
}

/* A one-map re-point: the admission, then execution's fast path (a SKIP, or a patch); any other
 * execution (the driver's re-point, a context still to learn, a recorded fault) is repoint_full's,
 * which admits again (the admission changes nothing but the plan's space) and executes in full.
 * Called last, it leaves repoint_one without a call it returns from: no frame, no register saved
 * (they were a sixth of a one-map re-point). */
__attribute__((noinline)) static gcl_status repoint_full(gcl_args *args, gcl_context *ctx,
                                                         const gcl_field *first,
                                                         const uint64_t *addresses) {
  return args_repoint(args, ctx, first, 1, addresses, false);
}

__attribute__((noinline)) static gcl_status repoint_one(gcl_args *args, gcl_context *ctx,
                                                        const gcl_field *first,
                                                        const uint64_t *addresses) {
  gcl_status s = args_repoint(args, ctx, first, 1, addresses, true);
  return s == GCL__TMAP_AGAIN ? repoint_full(args, ctx, first, addresses) : s;
}

__attribute__((noinline)) static gcl_status repoint_n(gcl_args *args, gcl_context *ctx,
                                                      const gcl_field *first, size_t n,
                                                      const uint64_t *addresses) {
  return args_repoint(args, ctx, first, n, addresses, false);
}

gcl_status gcl_args_repoint_tensormaps(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                                       size_t n, const uint64_t *addresses) {
  return n == 1 ? repoint_one(args, ctx, first, addresses)
                : repoint_n(args, ctx, first, n, addresses);
}

/* gcl_args_set_tensormaps(_flags): with_flags false for the plain form (dlflags unread).
 * Inlined into each caller, with n a constant 1 in the one-map ones: a call with eleven arguments
 * cost a one-map refresh a tenth of its time. */
__attribute__((always_inline)) static inline gcl_status args_set_maps(gcl_args *args, gcl_context *ctx, const gcl_field *first, size_t n,
                                const DLTensor *const *tensors, bool with_flags,
                                const uint64_t *dlflags, const gcl_tensormap_options *options,
                                size_t options_count, unsigned flags, const char *fn,
                                bool hot) {
  gcl_status s = need(args, ctx, n, fn);
  if (s || n == 0) return s;
  gcl__tmap_what what;
  if ((s = gcl__tmap_what_tensors(&what, n, tensors, with_flags, dlflags, options, options_count,
                                  flags, fn)))
    return s;
  return args_write(args, ctx, first, n, &what, fn, hot);
}

/* The end of a one-map set's admission, deferred (GCL__TMAP_DEFERRED: the source passed every
 * rule before the snapshot comparison and is not the slot's description moved), then execution
 * and commit: out of set_one's way, which then makes no call it returns from and needs no
 * frame. The admission's end is the one gcl__tmap_admit_source ends with (gcl__tmap_admit_new):
 * nothing is checked twice, nothing skipped. */
__attribute__((noinline)) static gcl_status set_new(gcl_args *args, gcl_context *ctx,
                                                    const gcl_field *first,
                                                    const DLTensor *const *tensors,
                                                    const gcl_tensormap_options *o) {
  gcl__tmap_run run; /* the one the admission's start accepted */
  gcl__args_tmap_run_at(args, first, &run);
  uint32_t op1;
  uint64_t address1 = 0; /* the admission writes it; GCC cannot tell that a refusal returns */
  const gcl__tmap_space one = ARGS_ONE_SPACE(args, &op1, &address1);
  const gcl__tmap_device dev = {.device = ctx->device, .sm = ctx->sm};
  unsigned op;
  gcl_status s = gcl__tmap_admit_new(&run, 0, tensors[0], o, dev, &one, &op);
  if (s != GCL_OK) return s;
  gcl__tmap_plan plan;
  plan.run = &run, plan.n = 1, plan.encodes = 1, plan.repoints = 0, plan.repoint_modes = 0;
  plan.space = &one;
  if ((s = execute(ctx, &plan)) != GCL_OK) return s;
  const gcl__tmap_what what = {.tensor = (const unsigned char *)tensors, .step = sizeof *tensors,
                               .options = o, .ostep = 0};
  gcl__args_tmap_commit(args, &plan, &what);
  return GCL_OK;
}
/* One-map calls and batches in functions of their own, as for re-points above. */
__attribute__((noinline)) static gcl_status set_full(gcl_args *args, gcl_context *ctx,
                                                     const gcl_field *first,
                                                     const DLTensor *const *tensors,
                                                     const uint64_t *dlflags, bool with_flags,
                                                     const gcl_tensormap_options *options,
                                                     size_t options_count, unsigned flags) {
  return args_set_maps(args, ctx, first, 1, tensors, with_flags, dlflags, options, options_count,
                       flags, with_flags ? "gcl_args_set_tensormaps_flags"
                                         : "gcl_args_set_tensormaps", false);
}

/* A one-map set, as repoint_one: the admission up to the snapshot comparison; a map that only
 * moved made here (execution's fast path); a new description's admission finished, executed and
 * committed by set_new; anything else set_full's (which admits again and executes in full). */
__attribute__((always_inline)) static inline gcl_status
set_one_map(gcl_args *args, gcl_context *ctx, const gcl_field *first,
            const DLTensor *const *tensors, bool with_flags, const uint64_t *dlflags,
            const gcl_tensormap_options *options, size_t options_count, unsigned flags,
            const char *fn) {
  gcl_status s = args_set_maps(args, ctx, first, 1, tensors, with_flags, dlflags, options,
                               options_count, flags, fn, true);
  if (s == GCL__TMAP_DEFERRED) return set_new(args, ctx, first, tensors, options);
  if (s == GCL__TMAP_AGAIN)
    return set_full(args, ctx, first, tensors, dlflags, with_flags, options, options_count, flags);
  return s;
}

__attribute__((noinline)) static gcl_status set_one(gcl_args *args, gcl_context *ctx,
                                                    const gcl_field *first,
                                                    const DLTensor *const *tensors,
                                                    const gcl_tensormap_options *options,
                                                    size_t options_count, unsigned flags) {
  return set_one_map(args, ctx, first, tensors, false, NULL, options, options_count, flags,
                     "gcl_args_set_tensormaps");
}

__attribute__((noinline)) static gcl_status set_n(gcl_args *args, gcl_context *ctx,
                                                  const gcl_field *first, size_t n,
                                                  const DLTensor *const *tensors,
                                                  const gcl_tensormap_options *options,
                                                  size_t options_count, unsigned flags) {
  return args_set_maps(args, ctx, first, n, tensors, false, NULL, options, options_count, flags,
                       "gcl_args_set_tensormaps", false);
}

gcl_status gcl_args_set_tensormaps(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                                   size_t n, const DLTensor *const *tensors,
                                   const gcl_tensormap_options *options, size_t options_count,
                                   unsigned flags) {
  return n == 1 ? set_one(args, ctx, first, tensors, options, options_count, flags)
                : set_n(args, ctx, first, n, tensors, options, options_count, flags);
}

__attribute__((noinline)) static gcl_status set_flags_one(gcl_args *args, gcl_context *ctx,
                                                          const gcl_field *first,
                                                          const DLTensor *const *tensors,
                                                          const uint64_t *dlpack_flags,
                                                          const gcl_tensormap_options *options,
                                                          size_t options_count, unsigned flags) {
  return set_one_map(args, ctx, first, tensors, true, dlpack_flags, options, options_count, flags,
                     "gcl_args_set_tensormaps_flags");
}

__attribute__((noinline)) static gcl_status set_flags_n(gcl_args *args, gcl_context *ctx,
                                                        const gcl_field *first, size_t n,
                                                        const DLTensor *const *tensors,
                                                        const uint64_t *dlpack_flags,
                                                        const gcl_tensormap_options *options,
                                                        size_t options_count, unsigned flags) {
  return args_set_maps(args, ctx, first, n, tensors, true, dlpack_flags, options, options_count,
                       flags, "gcl_args_set_tensormaps_flags", false);
}

gcl_status gcl_args_set_tensormaps_flags(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                                         size_t n, const DLTensor *const *tensors,
                                         const uint64_t *dlpack_flags,
                                         const gcl_tensormap_options *options,
                                         size_t options_count, unsigned flags) {
  return n == 1 ? set_flags_one(args, ctx, first, tensors, dlpack_flags, options, options_count,
                                flags)
                : set_flags_n(args, ctx, first, n, tensors, dlpack_flags, options, options_count,
                              flags);
}

gcl_status gcl__tmap_args_write(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                               size_t n, const gcl__tmap_what *what, const char *fn) {
  gcl_status s = need(args, ctx, n, fn);
  if (s != GCL_OK) return s;
  return args_write(args, ctx, first, n, what, fn, false);
}
