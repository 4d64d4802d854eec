/* gclaunch/context.h -- NVRTC, the driver (opened at run time, never linked), devices and
 * contexts: the runtime edge's ground. lib/cuda implements it; without a driver every call
 * returns a status. Included by gclaunch/runtime.h (and the umbrella gclaunch.h); the
 * conventions are written in gclaunch.h. */
#ifndef GCLAUNCH_CONTEXT_H
#define GCLAUNCH_CONTEXT_H

#include "gclaunch/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * NVRTC on the CPU
 * ------------------------------------------------------------------------------------------- */

/* Compiles CUDA source with NVRTC on the CPU -- no driver, no GPU -- as gcl_module_compile does
 * (options as given, -arch=sm_SM unless an -arch/--gpu-architecture option is given, the
 * toolkit's CCCL headers on the include path, gclaunch's kernel-side headers <gclaunch/tma.cuh> and
 * <gclaunch/tmap_table.cuh> built in): *image gets the cubin (or the PTX, NUL-terminated,
 * for a virtual architecture), to be freed with gcl_file_free. GCL_ERROR_NO_NVRTC without NVRTC;
 * GCL_ERROR_COMPILE with the compiler log in the message. Outputs untouched on failure.
 * Thread-safe. */
GCL_API gcl_status gcl_nvrtc_compile(const char *source, const char *name,
                                     const char *const *options, size_t option_count, int sm,
                                     void **image, size_t *size);

/* ---------------------------------------------------------------------------------------------
 * Driver, devices, contexts (opens libcuda.so.1 at run time; never linked)
 * ------------------------------------------------------------------------------------------- */

/* Loads the driver once (thread-safe, cached). GCL_ERROR_NO_DRIVER (dlopen failed),
 * GCL_ERROR_STUB_DRIVER (CUDA_ERROR_STUB_LIBRARY, 34), GCL_ERROR_NO_DEVICE (100),
 * GCL_ERROR_DRIVER_TOO_OLD, GCL_ERROR_DRIVER. The environment variable GCL_LIBCUDA names another
 * library to open instead of libcuda.so.1. */
GCL_API gcl_status gcl_driver_init(void);
/* Driver version as 1000*major + 10*minor. */
GCL_API gcl_status gcl_driver_version(int *version);
/* The path (or name) the driver was looked for at. Never NULL. */
GCL_API const char *gcl_driver_path(void);
GCL_API gcl_status gcl_device_count(int *count);

typedef struct gcl_device_info {
  char name[256];
  int sm;               /* 90 for sm_90 */
  int multiprocessors;
  size_t total_memory;
  int max_threads_per_block;
  int max_shared_per_block_optin;
} gcl_device_info;
/* Asks the driver for device's name, architecture and limits. GCL_ERROR_INVALID_ARGUMENT for
 * NULL info or a device out of range (the message gives the range); the driver's statuses. */
GCL_API gcl_status gcl_device_query(int device, gcl_device_info *info);

/* NVRTC, loaded lazily (GCL_LIBNVRTC overrides; else libnvrtc.so.13, then .12, also under
 * $CUDA_PATH/lib64 and /usr/local/cuda/lib64). */
GCL_API gcl_status gcl_nvrtc_init(void);
GCL_API gcl_status gcl_nvrtc_version(int *major, int *minor);
/* Fills archs with up to cap supported SM numbers; *count gets the total. */
GCL_API gcl_status gcl_nvrtc_archs(int *archs, size_t cap, size_t *count);
GCL_API const char *gcl_nvrtc_path(void);

typedef struct gcl_context gcl_context;
/* Retains the device's primary context. Thread-safe. */
GCL_API gcl_status gcl_context_create(int device, gcl_context **out);
/* Releases the primary context. A context does not own the modules loaded in it nor the kernels
 * looked up for it: destroy those first (they borrow ctx and use it until destroyed). */
GCL_API void gcl_context_destroy(gcl_context *ctx);
GCL_API int gcl_context_device(const gcl_context *ctx);
GCL_API int gcl_context_sm(const gcl_context *ctx);
/* Makes the context current on the calling thread. */
GCL_API gcl_status gcl_context_bind(gcl_context *ctx);

/* Device memory helpers for tests, tools and benchmarks (thin wrappers, context made current). */
GCL_API gcl_status gcl_mem_alloc(gcl_context *ctx, size_t bytes, uint64_t *address);
/* On a thread with a gclaunch stream between gcl_graph_capture_begin and _end, the driver refuses
 * cuMemFree and the refusal invalidates the capture: gcl_mem_free (and gcl_module_destroy's
 * unload) then returns GCL_OK and makes the release when the capture ends (or the capturing
 * stream or the context is destroyed). */
GCL_API gcl_status gcl_mem_free(gcl_context *ctx, uint64_t address);
GCL_API gcl_status gcl_mem_upload(gcl_context *ctx, uint64_t dst, const void *src, size_t bytes);
GCL_API gcl_status gcl_mem_download(gcl_context *ctx, void *dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_mem_fill_u8(gcl_context *ctx, uint64_t dst, uint8_t value, size_t bytes);
/* Device-to-device copy (cuMemcpyDtoD; synchronous with respect to the host). */
GCL_API gcl_status gcl_mem_copy(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes);
GCL_API gcl_status gcl_context_synchronize(gcl_context *ctx);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_CONTEXT_H */
