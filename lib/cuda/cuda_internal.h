/* Objects of the driver edge. Internal. */
#ifndef GCL_CUDA_INTERNAL_H
#define GCL_CUDA_INTERNAL_H

#include "driver.h"
#include "tmap.h"

struct gcl_context {
  CUcontext ctx;
  CUdevice dev;
  int device;
  int sm;
  /* What executing a tensor-map plan on this context needs to know, learned at its first plan
   * (gcl__tmap_exec_state): GCL__TMAP_EXEC_* bits, 0 until then. One byte the hot paths load. */
  _Atomic unsigned char tmap_exec;
};

/* Makes ctx current on this thread if it is not already. */
gcl_status gcl__context_bind(gcl_context *ctx);

/* Executes a tensor-map plan (lib/core/tmap_plan.h) into its scratch: one loop, re-points
 * (cuTensorMapReplaceAddress on a copy of the map) and encodes; the maps are not written. After a
 * kernel fault GCL_ERROR_KERNEL_FAULT without a driver call. The caller commits on GCL_OK
 * (tmap_driver.c). */
struct gcl__tmap_plan;
gcl_status gcl__tmap_execute(gcl_context *ctx, const struct gcl__tmap_plan *plan);
/* gcl_tensormaps_set with fn naming the caller in messages (the peer calls: tmap_peers.c). */
gcl_status gcl__tensormaps_set(gcl_context *ctx, const gcl_tensormap_slots *where,
                               const gcl_tensormap_source *what,
                               const gcl_tensormap_options *options, size_t options_count,
                               const char *fn);
/* A batch (what: tmap_plan.h, its arguments checked) into entries first ... first + n - 1 of
 * table t (n >= 1; checked here) for ctx (NULL or t's context): plan, execute, commit, dirty
 * bits (tmap_table.c). */
struct gcl__tmap_what;
/* The same into maps first ... first + n - 1 of args, for ctx (required) (tmap_driver.c). */
gcl_status gcl__tmap_args_write(gcl_args *args, gcl_context *ctx, const gcl_field *first,
                               size_t n, const struct gcl__tmap_what *what, const char *fn);
gcl_status gcl__tmap_table_write(gcl_tensormap_table *t, gcl_context *ctx, size_t first, size_t n,
                                 const struct gcl__tmap_what *what, const char *fn);

/* cuTensorMapEncode* of the checked description d into m, its result in *rc; with a refusal and
 * no (or another) context current, ctx is bound and the call made once more. Not GCL_OK only when
 * that bind failed (tmap_driver.c). */
/* cuTensorMapEncodeTiled or, for im2col.pixels > 0, cuTensorMapEncodeIm2col of d into m: the
 * driver call alone. Inline: a plan's encode step makes it without a call of its own. */
static inline CUresult gcl__tmap_encode_desc(const gcl_tensormap_desc *d, CUtensorMap *m) {
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
/* After gcl__tmap_encode_desc(d, m) gave *rc, not CUDA_SUCCESS: with no (or another) context
 * current, ctx is bound and the call made once more (*rc its result). Not GCL_OK only when that
 * bind failed (tmap_encode.c). gcl__tmap_encode_bound is the two in one. */
gcl_status gcl__tmap_encode_retry(gcl_context *ctx, const gcl_tensormap_desc *d, CUtensorMap *m,
                                  CUresult *rc);
gcl_status gcl__tmap_encode_bound(gcl_context *ctx, const gcl_tensormap_desc *d, CUtensorMap *m,
                                  CUresult *rc);

/* Re-points without the driver call (tmap_patch.c). Per device ordinal below
 * GCL__TMAP_PATCH_DEVICES: 0 until the first re-point checked the device, then
 * GCL__TMAP_PATCH_KNOWN | bit i for each interleave mode i whose re-points gclaunch patches
 * itself (proven byte-identical to cuTensorMapReplaceAddress on this device and driver). */
#define GCL__TMAP_PATCH_DEVICES 64
#define GCL__TMAP_PATCH_KNOWN 0x80u
#define GCL__TMAP_PATCH_MODES 0x07u
extern _Atomic unsigned char gcl__tmap_patch_state[GCL__TMAP_PATCH_DEVICES];
/* Runs the check for ctx's device once (later callers get its answer): the proven modes. */
unsigned gcl__tmap_patch_learn(gcl_context *ctx);

/* ctx->tmap_exec: GCL__TMAP_EXEC_PATCH when the device's patched modes were learned (the low bits,
 * GCL__TMAP_PATCH_MODES, are then those NOT patched: bit i, the driver re-points the maps of
 * interleave i; the complement of gcl__tmap_patch_modes' answer), GCL__TMAP_EXEC_FIXUP
 * when whether the Blackwell bit-85 fix-up applies was learned, GCL__TMAP_EXEC_BIT85 when it
 * does. The patch is learned only for a plan with re-points (its check calls the driver). */
#define GCL__TMAP_EXEC_PATCH 0x80u
#define GCL__TMAP_EXEC_FIXUP 0x40u
#define GCL__TMAP_EXEC_BIT85 0x20u
/* Learns what `need` (GCL__TMAP_EXEC_FIXUP, with GCL__TMAP_EXEC_PATCH for re-points) asks for
 * into ctx->tmap_exec and returns it (tmap_driver.c). Once per context. */
unsigned gcl__tmap_exec_learn(gcl_context *ctx, unsigned need);
/* ctx->tmap_exec with at least `need` learned: one load after the first plan. */
static inline unsigned gcl__tmap_exec_state(gcl_context *ctx, unsigned need) {
  unsigned st = atomic_load_explicit(&ctx->tmap_exec, memory_order_relaxed);
  return (st & need) == need ? st : gcl__tmap_exec_learn(ctx, need);
}

/* The interleave modes whose maps ctx's device re-points by patching (bit i: interleave i; 0:
 * every re-point calls the driver). One atomic load once the device was checked. */
static inline unsigned gcl__tmap_patch_modes(gcl_context *ctx) {
  unsigned dev = (unsigned)ctx->device;
  if (dev >= GCL__TMAP_PATCH_DEVICES) return 0;
  unsigned st = atomic_load_explicit(&gcl__tmap_patch_state[dev], memory_order_acquire);
  return st ? st & GCL__TMAP_PATCH_MODES : gcl__tmap_patch_learn(ctx);
}

/* Writes address a (nonzero, aligned, below 2^57: the caller checked) into the map: descriptor
 * bits 4 ... 56 of its first 8 bytes, the rest unchanged. Only for maps of a proven mode. */
static inline void gcl__tmap_patch_address(void *map, uint64_t a) {
  const uint64_t mask = (GCL__TMAP_ADDRESS_LIMIT - 1u) & ~(uint64_t)15u;
  uint64_t w;
  memcpy(&w, map, sizeof w);
  w = (w & ~mask) | (a & mask);
  memcpy(map, &w, sizeof w);
}

/* --- Streams, events, graphs (stream.c, event.c, graph.c) ------------------------------------ */

/* Set at create, cleared at destroy: a handle whose magic is wrong was never created or was
 * destroyed (detected while its memory has not been reused). */
enum { GCL__STREAM_MAGIC = 0x7374726du, GCL__EVENT_MAGIC = 0x6576746eu, GCL__GRAPH_MAGIC = 0x67726170u };

struct gcl_stream {
  uint32_t magic;
  gcl_context *ctx;          /* borrowed */
  CUstream stream;
  int priority;
  bool capturing;            /* between gcl_graph_capture_begin and _end */
  bool borrowed;             /* gcl_stream_wrap: the CUstream is the caller's (never destroyed) */
  gcl_tensormap_table **tables; /* gcl_graph_capture_table's, until gcl_graph_capture_end (owned) */
  size_t table_count;
  const void *capture_thread;   /* while capturing: the thread that began it (capture.c) */
  struct gcl_stream *capture_next; /* capture.c's list of capturing streams */
};

/* capture.c: the captures of each thread. note at a capture's begin, forget at its end (or the
 * stream's destroy); hint writes what a capture error r (900 ... 908) should add to its message:
 * the streams this thread captures on and how to end them ("" for other errors). */
void gcl__capture_note(gcl_stream *s);
void gcl__capture_forget(gcl_stream *s);
void gcl__capture_hint(CUresult r, char *out, size_t n);
/* Whether a gclaunch stream of the calling thread captures now. */
bool gcl__capture_mine(void);

/* deferred.c: releases a capturing thread may not make (cuMemFree, cuLibraryUnload, a graph's
 * destroy: refused during a THREAD_LOCAL capture, and the refusal invalidates it). defer_call
 * keeps fn(arg), a release of ctx's; drain calls ctx's (ctx current) unless this thread
 * captures; destroy calls them before ctx goes, or drops them uncalled while this thread still
 * captures (what they hold is left). */
gcl_status gcl__defer_call(gcl_context *ctx, void (*fn)(void *), void *arg);
void gcl__deferred_drain(gcl_context *ctx);
void gcl__deferred_destroy(gcl_context *ctx);

struct gcl_event {
  uint32_t magic;
  gcl_context *ctx;          /* borrowed */
  CUevent event;
  bool recorded;
};

/* Checks that s (named `what` in messages) is a live stream; with ctx, one of ctx's device.
 * NULL s is an error unless null_ok (then the context's default stream). Binds the context. */
gcl_status gcl__stream_check(const gcl_stream *s, const gcl_context *ctx, const char *what,
                             bool null_ok);
/* The CUstream of s, NULL for NULL (the default stream). */
static inline CUstream gcl__cu_stream(const gcl_stream *s) { return s ? s->stream : NULL; }

/* --- Modules and kernels (module.c, kernel.c, launch.c) ------------------------------------- */

#include "args_internal.h"

#include <pthread.h>
#include <stdatomic.h>

#define GCL__JIT_LOG_BYTES 16384

struct gcl_module {
  gcl_context *ctx;          /* borrowed: the context it was loaded in (gcl_module_find_kernel's) */
  CUlibrary lib;
  gcl_kernel *kernels;       /* owned, singly linked through gcl_kernel.next */
  char *compile_log;         /* NVRTC log (owned), NULL for loaded images */
  /* The image's own records (owned), read once at load with lib/core's readers for the
   * context's sm: cubin EIATTR_KPARAM_INFO, the PTX .entry lists, the fatbin entry the driver
   * picks (or, without one for that sm, any entry: a fatbin's entries come from one source and
   * list the same parameters). NULL when they cannot be read (records_why says why, for
   * messages): kernel lookups then fall back to probing the driver (kernel.c). */
  gcl_image *records;
  char records_why[256];
  /* The driver may fill these when it JIT-compiles PTX, possibly lazily after the load call
   * returned, so they live as long as the library. */
  char jit_error[GCL__JIT_LOG_BYTES];
  char jit_info[GCL__JIT_LOG_BYTES];
  char name[256];            /* for messages: the file, the NVRTC program, or "image of N bytes" */
  bool nvshmem;              /* device-linked with NVSHMEM (its records say so): attach first */
  bool attached;             /* gcl_module_attach succeeded in ctx (module_attach.c; written
                              * with the PE held: gcl__pe_hold) */
};

struct gcl_kernel {
  gcl_module *mod;           /* owner */
  gcl_context *ctx;          /* borrowed: the context (device) the kernel runs in */
  gcl_kernel *next;
  char *name;                /* owned copy */
  CUkernel kern;             /* context-independent: the same for every device */
  CUfunction fn;             /* kern in ctx */
  gcl_layout *layout;        /* owned: typed (signature given) or raw (driver's) */
  size_t param_count;
  size_t param_bytes;        /* gcl_layout_size(layout): the exact `extra` buffer size */
  size_t *offsets, *sizes;   /* param_count each (owned): to accept args of an equal layout */
  int max_threads;           /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  size_t smem_limit;         /* device opt-in maximum minus the kernel's static shared memory */
  bool use_extra;            /* pass the packed buffer through `extra` instead of kernelParams */
  /* Dynamic shared memory the kernel accepts now (starts at the driver's default, raised by
   * cuFuncSetAttribute on demand) and whether non-portable clusters were allowed. Read
   * lock-free on the launch path; changed only under opt_lock. */
  _Atomic size_t smem_max;
  _Atomic bool nonportable;
  pthread_mutex_t opt_lock;
  int waits;                 /* gcl_kernel_waits: 1, 0, -1 unknown (from the module's records) */
  /* Set by gcl_module_destroy: the kernel is a tombstone (module.c): name, layout, offsets and
   * sizes kept, mod, kern and fn cleared; every call but the accessors refuses it. */
  bool stale;
  /* Its module uses NVSHMEM and is not attached in this kernel's context: gcl_launch refuses it
   * (module_attach.c keeps it current on attach and detach, the PE held). Next to stale: one
   * test on the launch path. */
  bool unattached;
  bool owned_layout;         /* gcl__layout_own was called on layout (the lookup succeeded) */
};

/* GCL_OK for a live kernel; for a tombstone GCL_ERROR_INVALID_ARGUMENT "fn: kernel 'name': its
 * module was destroyed ..." (fn the public function). */
gcl_status gcl__kernel_stale(const gcl_kernel *k, const char *fn);


/* gcl__image_format and gcl__read_file are lib/core's (internal.h): one detector, one reader. */
/* Compiles source with NVRTC for sm (an -arch option in options wins). On success *image is a
 * cubin, or NUL-terminated PTX for a virtual -arch (*size without the NUL); *log (may be NULL
 * on entry) gets the compiler log either way. Both are the caller's to free (gcl__free). Needs no
 * driver. (nvrtc.c) */
gcl_status gcl__nvrtc_compile(const char *source, const char *name, const char *const *options,
                              size_t option_count, int sm, void **image, size_t *size,
                              char **log);
/* The launch path's checks of args against kernel k: the same layout (pointer or equal offsets
 * and sizes) and every parameter set; a failure names the parameter. */
gcl_status gcl__launch_check_args(const gcl_kernel *k, const gcl_args *args);
/* A launch config's grid or block (field "grid"/"block") with trailing zeros taken as 1; x = 0
 * or a zero before a given dimension is GCL_ERROR_INVALID_CONFIG naming config.field[i]: a grid
 * computed as n / 256 for a small n would otherwise launch one block silently; y and z may be
 * left 0 after the last dimension given (`.grid = {n}` is n x 1 x 1). Here, not in launch.c or
 * occupancy.c: both check configs, and neither calls the other for it. */
static inline gcl_status gcl__config_dims(const unsigned v[3], const char *field, unsigned out[3]) {
  for (int i = 0; i < 3; i++) {
    bool later = false;
    for (int j = i + 1; j < 3; j++) later = later || v[j];
    if (v[i] == 0 && (i == 0 || later))
      return gcl__fail(GCL_ERROR_INVALID_CONFIG, "config.%s[%d]: expected at least 1, got 0 "
                       "(%s %ux%ux%u)", field, i, field, v[0], v[1], v[2]);
    out[i] = v[i] ? v[i] : 1;
  }
  return GCL_OK;
}
/* Whether config's grid can be resident at once (occupancy.c): for a cooperative launch every
 * block (every cluster with clusters); with clusters (the flag) that one cluster fits at least.
 * GCL_ERROR_INVALID_CONFIG with the numbers otherwise. Binds the kernel's context; calls the
 * occupancy API. The config's grid, block and cluster were checked (check_config). */
gcl_status gcl__launch_check_resident(gcl_kernel *k, const gcl_launch_config *c, bool clusters);
/* Raises the kernel's dynamic shared memory limit to bytes, once (kernel.c; launch.c and
 * occupancy.c call it). */
gcl_status gcl__kernel_opt_in_shared(gcl_kernel *k, size_t bytes);
/* Frees a kernel (module.c unlinks it first). */
void gcl__kernel_free(gcl_kernel *k);
/* Makes k a tombstone: marks its layout orphaned (when k->stale), gives its layout reference
 * back and frees its offsets and sizes; name and lock stay (kernel.c). */
void gcl__kernel_bury(gcl_kernel *k);

/* --- Modules attached to the PE (module_attach.c: the module floor) ------------------------ */

/* The refusal of a launch of an unattached NVSHMEM kernel, naming module and kernel (launch.c,
 * graph.c). */
gcl_status gcl__kernel_unattached(const gcl_kernel *k, const char *fn);
/* Whether kernel k (found in k->ctx) of module m may launch: m does not use NVSHMEM, or it is
 * attached in k's context (kernel.c at lookup). */
bool gcl__kernel_attached(const gcl_module *m, const gcl_context *ctx);
/* Detaches m if attached (gcl_module_destroy, before the unload). */
void gcl__module_detach_quiet(gcl_module *m);

/* --- The PE (pe.c), for the floors above it ------------------------------------------------
 * pe.c owns the PE's life and its symmetric memory and calls nothing above it; module attach
 * and peer tensor maps reach it through these four. Its one lock, pe_lock, guards the PE's
 * state, the symmetric blocks, the count of modules attached and every module's `attached` and
 * its kernels' `unattached` (written only between gcl__pe_hold and gcl__pe_release), and
 * serializes every NVSHMEM host call. It is taken with no other gclaunch lock held, and under it
 * only NVSHMEM's loader lock (nvshmem.c) is ever taken. */

/* "fn: no PE is started in this process (call gcl_pe_start first)", GCL_ERROR_NVSHMEM. */
gcl_status gcl__pe_not_started(const char *fn);
/* Takes the PE's lock and returns the PE's context, NULL when no PE is started (the lock is
 * taken either way). While it is held, NVSHMEM may be called for a module and gcl_pe_stop
 * waits. gcl__pe_release adds attached (+1 an attach, -1 a detach, 0 neither) to the count of
 * modules attached -- gcl_pe_stop refuses while it is not 0 -- and releases the lock. */
gcl_context *gcl__pe_hold(void);
void gcl__pe_release(int attached);
/* The peers' addresses of a symmetric address: visit(user, i, PE pes[i]'s address of address)
 * for i = 0 ... n-1, called under the PE's lock after every PE was resolved (so it must take no
 * lock and call nothing of the PE's). The PE's context is bound. On failure messages begin with
 * fn and nothing was visited: no PE started, address in no symmetric buffer, a PE out of range
 * (GCL_ERROR_INVALID_ARGUMENT) or not load/store reachable (GCL_ERROR_PEER_UNREACHABLE); *failed
 * is the index in pes of the PE that failed, n when no one PE did. */
typedef void gcl__pe_visit(void *user, size_t i, uint64_t peer_address);
gcl_status gcl__pe_peer_addresses(const char *fn, uint64_t address, const int *pes, size_t n,
                                  gcl__pe_visit *visit, void *user, size_t *failed);

#endif
