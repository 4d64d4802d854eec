/* Objects of the driver edge. Internal. */
#ifndef GCL_CUDA_INTERNAL_H
#define GCL_CUDA_INTERNAL_H

#include "driver.h"

struct gcl_context {
  CUcontext ctx;
  CUdevice dev;
  int device;
  int sm;
};

/* Makes ctx current on this thread if it is not already. */
gcl_status gcl__context_bind(gcl_context *ctx);
/* Checks and encodes a tensor map for t into map (64-byte aligned, written only on success);
 * messages name the target as who. (tensormap.c) */
gcl_status gcl__tensormap_encode_as(gcl_context *ctx, const DLTensor *t,
                                    const gcl_tensormap_options *options, const char *who,
                                    void *map);
/* The same with the common case (already current: one cuCtxGetCurrent) inline, for hot paths. */
static inline gcl_status gcl__context_bind_fast(gcl_context *ctx) {
  CUcontext cur = NULL;
  if (gcl__cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx->ctx) return GCL_OK;
  return gcl__context_bind(ctx);
}

/* --- Modules and kernels (module.c, kernel.c, launch.c) ------------------------------------- */

#include "args_internal.h"

#include <pthread.h>
#include <stdatomic.h>

#define GCL__JIT_LOG_BYTES 16384

struct gcl_module {
  gcl_context *ctx;          /* borrowed: the context it was loaded in (gcl_kernel_get's) */
  CUlibrary lib;
  gcl_kernel *kernels;       /* owned, singly linked through gcl_kernel.next */
  char *compile_log;         /* NVRTC log (owned), NULL for loaded images */
  /* The driver may fill these when it JIT-compiles PTX, possibly lazily after the load call
   * returned, so they live as long as the library. */
  char jit_error[GCL__JIT_LOG_BYTES];
  char jit_info[GCL__JIT_LOG_BYTES];
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
  uint64_t fingerprint;      /* gcl__layout_fingerprint(layout): equal layouts launch unchecked */
  int max_threads;           /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  size_t smem_limit;         /* device opt-in maximum minus the kernel's static shared memory */
  bool use_extra;            /* pass the packed buffer through `extra` instead of kernelParams */
  /* Dynamic shared memory the kernel accepts now (starts at the driver's default, raised by
   * cuFuncSetAttribute on demand) and whether non-portable clusters were allowed. Read
   * lock-free on the launch path; changed only under opt_lock. */
  _Atomic size_t smem_max;
  _Atomic bool nonportable;
  pthread_mutex_t opt_lock;
};

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
/* Frees a kernel (module.c unlinks it first). */
void gcl__kernel_free(gcl_kernel *k);

#endif
