/* gclaunch/status.h -- what every area of gclaunch builds on: the export macro, the version,
 * the status codes with their names and the thread's last error, and the allocator. Included by
 * every other header (gclaunch/core.h, the umbrella gclaunch.h); the conventions are written in
 * gclaunch.h. */
#ifndef GCLAUNCH_STATUS_H
#define GCLAUNCH_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gclaunch/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GCL_STATIC)
#  define GCL_API
#elif defined(GCL_BUILDING)
#  define GCL_API __attribute__((visibility("default")))
#else
#  define GCL_API
#endif

#define GCL_VERSION_MAJOR 0
#define GCL_VERSION_MINOR 4
#define GCL_VERSION_PATCH 0
#define GCL_VERSION_STRING "0.4.0"
/* 10000 * major + 100 * minor + patch (zstd's ZSTD_VERSION_NUMBER): 0.4.0 is 400. Compare it
 * with gcl_version_number() to see whether the library loaded at run time is older than the
 * header a program was built with. */
#define GCL_VERSION_NUMBER (10000 * GCL_VERSION_MAJOR + 100 * GCL_VERSION_MINOR + GCL_VERSION_PATCH)

/* Runtime version, "MAJOR.MINOR.PATCH". Never NULL. Thread-safe. */
GCL_API const char *gcl_version(void);
/* Runtime version as GCL_VERSION_NUMBER of the library's own build. Thread-safe. */
GCL_API unsigned gcl_version_number(void);

/* ---------------------------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------------------------- */

/* One table: enum name, value, default text. The values are part of the ABI: they never change;
 * new statuses are appended with the next number (tests/unit/test_status.c pins every one). */
#define GCL_STATUS_LIST(X)                                                                         \
  X(GCL_OK, 0, "success")                                                                          \
  X(GCL_ERROR_INVALID_ARGUMENT, 1, "invalid argument")                                             \
  X(GCL_ERROR_OUT_OF_MEMORY, 2, "out of memory (host, or device: the message says which)")         \
  X(GCL_ERROR_PARSE, 3, "malformed signature")                                                     \
  X(GCL_ERROR_LAYOUT_TOO_LARGE, 4, "parameters exceed the 32764-byte limit")                       \
  X(GCL_ERROR_UNSET_ARGUMENT, 5, "a parameter was never set")                                      \
  X(GCL_ERROR_TYPE_MISMATCH, 6, "value does not match the parameter's type")                       \
  X(GCL_ERROR_TENSOR, 7, "tensor rejected")                                                        \
  X(GCL_ERROR_TENSOR_VERSION, 8, "unsupported DLPack major version")                               \
  X(GCL_ERROR_BAD_IMAGE, 9, "malformed or unsupported module image")                               \
  X(GCL_ERROR_NOT_FOUND, 10, "not found")                                                          \
  X(GCL_ERROR_SIGNATURE_MISMATCH, 11, "declared signature disagrees with the kernel")              \
  X(GCL_ERROR_NO_DRIVER, 12, "no CUDA driver library")                                             \
  X(GCL_ERROR_STUB_DRIVER, 13, "the CUDA driver is the toolkit's stub library")                    \
  X(GCL_ERROR_NO_DEVICE, 14, "no CUDA device")                                                     \
  X(GCL_ERROR_DRIVER_TOO_OLD, 15, "the CUDA driver lacks a needed entry point")                    \
  X(GCL_ERROR_DRIVER, 16, "a CUDA driver call failed")                                             \
  X(GCL_ERROR_NO_NVRTC, 17, "NVRTC library not found")                                             \
  X(GCL_ERROR_COMPILE, 18, "compilation failed")                                                   \
  X(GCL_ERROR_INVALID_CONFIG, 19, "invalid launch configuration")                                  \
  X(GCL_ERROR_IO, 20, "file could not be read")                                                    \
  X(GCL_ERROR_KERNEL_FAULT, 21, "a kernel faulted: the process's CUDA state is lost; "             \
                               "only a new process recovers")                                      \
  X(GCL_ERROR_NO_NVSHMEM, 22, "NVSHMEM host library not found or too old")                          \
  X(GCL_ERROR_NVSHMEM, 23, "an NVSHMEM call failed or is not allowed in this state")                \
  X(GCL_ERROR_NVSHMEM_VERSION, 24, "the module's NVSHMEM device library does not match the host's") \
  X(GCL_ERROR_NOT_ATTACHED, 25, "the kernel's module uses NVSHMEM and is not attached")            \
  X(GCL_ERROR_PEER_UNREACHABLE, 26, "the peer's memory is not load/store reachable from this PE")

typedef enum gcl_status {
#define GCL_X_ENUM(name, value, text) name = value,
  GCL_STATUS_LIST(GCL_X_ENUM)
#undef GCL_X_ENUM
  GCL_STATUS_COUNT /* one past the largest value today; it grows when a status is appended: do
                      not store it or compile it into a program that must run with later versions */
} gcl_status;

/* "GCL_OK", "GCL_ERROR_PARSE", ...; "GCL_STATUS_UNKNOWN" for values outside the enum.
 * Never NULL. Thread-safe. */
GCL_API const char *gcl_status_name(gcl_status s);
/* The default one-line text of a status ("malformed signature"). Never NULL. Thread-safe. */
GCL_API const char *gcl_status_text(gcl_status s);
/* Detail of this thread's last failure ("" if none yet). Written only when a call fails; a
 * successful call leaves it as it was. Never NULL; valid until this thread's next failing call. */
GCL_API const char *gcl_last_error(void);
/* The CUresult (as an int: 700 is CUDA_ERROR_ILLEGAL_ADDRESS) of this thread's last failure,
 * or 0 when that failure was not a driver call (a bad argument, a layout check, ...). Written
 * with gcl_last_error, only on failure. Thread-safe (per thread). */
GCL_API int gcl_last_cuda_error(void);

/* ---------------------------------------------------------------------------------------------
 * Allocator (libuv's uv_replace_allocator)
 * ------------------------------------------------------------------------------------------- */

typedef void *(*gcl_malloc_fn)(size_t size);
typedef void *(*gcl_realloc_fn)(void *ptr, size_t size);
typedef void *(*gcl_calloc_fn)(size_t count, size_t size);
typedef void (*gcl_free_fn)(void *ptr);

/* Makes every host allocation of the library go through these four functions (they must behave
 * as the C library's; sizes passed are never 0, free_fn is never given NULL). All four NULL
 * restore the C library's. GCL_ERROR_INVALID_ARGUMENT when only some are NULL, or while blocks
 * of the current allocator are still live (objects not destroyed): a block must go back to the
 * allocator that made it. Not thread-safe: call it before any other gclaunch call and before
 * starting threads that use gclaunch. Memory the driver and NVRTC allocate is theirs and does
 * not go through it. */
GCL_API gcl_status gcl_replace_allocator(gcl_malloc_fn malloc_fn, gcl_realloc_fn realloc_fn,
                                         gcl_calloc_fn calloc_fn, gcl_free_fn free_fn);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_STATUS_H */
