/* gclaunch/stream.h -- streams (own and wrapped), events, device memory and asynchronous copies,
 * pinned host memory, occupancy. Included by gclaunch/runtime.h; the conventions are written in
 * gclaunch.h. */
#ifndef GCLAUNCH_STREAM_H
#define GCLAUNCH_STREAM_H

#include "gclaunch/launch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Streams, events, asynchronous copies, pinned host memory, occupancy
 *
 * Everything a persistent-kernel host program needs without cuda.h or libcuda. A stream or
 * event belongs to the context it was made in (borrowed: the context must outlive it); calls
 * that take a context and a stream refuse a stream of another context (GCL_ERROR_INVALID_ARGUMENT
 * naming "s"). Where a stream parameter may be NULL it means the context's default stream.
 * A handle passed after its destroy is detected while its memory was not reused ("not a live
 * stream"); do not rely on it. One stream or event must not be used from two threads at once;
 * different ones are independent.
 *
 * Kernel faults. A kernel that faults (CUDA_ERROR_ILLEGAL_ADDRESS, ILLEGAL_INSTRUCTION,
 * MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, HARDWARE_STACK_ERROR, LAUNCH_FAILED,
 * LAUNCH_TIMEOUT, ASSERT, CONTAINED, EXTERNAL_DEVICE) leaves the whole process's CUDA state lost:
 * the driver fails every later call, even a new primary context. The first call that sees such
 * a CUresult (a launch, synchronize, event, copy ...) returns GCL_ERROR_KERNEL_FAULT with a
 * message naming the CUresult; gclaunch records the fault process-wide and every later call that
 * would reach the driver returns the same status and message at once, without calling it
 * (the destroy functions and gcl_host_free still give their handles back;
 * gcl_mem_free returns the fault, and releasing the context frees device memory). gcl_last_cuda_error() gives the
 * CUresult. Only a new process recovers. After ILLEGAL_INSTRUCTION in a process that uses tensor
 * maps (gclaunch encoded one, or looked up a kernel with a tensormap parameter) the message names
 * the likely cause: a TMA load/store whose innermost coordinate x element size is not a multiple
 * of 16 bytes.
 * ------------------------------------------------------------------------------------------- */

typedef struct gcl_stream gcl_stream;
typedef struct gcl_event gcl_event;

/* Creates a non-blocking stream (it does not synchronize with the legacy default stream) of
 * ctx's device. priority: 0 is the lowest (the default); lower numbers are higher priorities,
 * down to the device's greatest (cuCtxGetStreamPriorityRange). Out of range is refused, not
 * clamped: GCL_ERROR_INVALID_ARGUMENT "priority: expected -5 (highest) ... 0 (lowest) on
 * device 0, got 3" (the device's range in the message).
 * Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_create(gcl_context *ctx, int priority, gcl_stream **out);
/* Destroys s (pending work still runs; an unfinished capture is discarded). NULL is fine. */
GCL_API void gcl_stream_destroy(gcl_stream *s);
/* Waits for the stream's work. GCL_ERROR_INVALID_ARGUMENT while the stream is capturing a
 * graph; GCL_ERROR_KERNEL_FAULT when a kernel on it faulted. */
GCL_API gcl_status gcl_stream_synchronize(gcl_stream *s);
/* The CUstream as void *: put it in gcl_launch_config.stream. NULL for NULL. Reads. */
GCL_API void *gcl_stream_handle(const gcl_stream *s);
/* The stream's context (borrowed), NULL for NULL. Reads. */
GCL_API gcl_context *gcl_stream_context(const gcl_stream *s);
/* The priority the stream was created with (0 for NULL). Reads. */
GCL_API int gcl_stream_priority(const gcl_stream *s);
/* Whether `stream`, a CUstream handle from outside gclaunch (an int from Python, another
 * library's stream), can be given to a launch in ctx: GCL_OK for NULL, CU_STREAM_LEGACY (1),
 * CU_STREAM_PER_THREAD (2) and a live stream of ctx's context. Refused without touching the
 * handle's memory (GCL_ERROR_INVALID_ARGUMENT naming the handle): any other value below 4096,
 * a value with the top bit set (a negative int), one not 8-byte aligned, an address no memory is mapped at (asked of the
 * kernel, not read); then the driver is asked (cuStreamGetCtx): a handle it refuses is
 * GCL_ERROR_DRIVER with its error, a stream of another context GCL_ERROR_INVALID_ARGUMENT.
 * flags: GCL_STREAM_CHECK_MAPPED skips the mapping question (the caller saw this handle pass
 * before). A handle the driver freed may still pass (its memory mapped, the driver's answer is
 * the driver's): keep streams alive while you launch on them. */
#define GCL_STREAM_CHECK_MAPPED 1u
GCL_API gcl_status gcl_stream_check(gcl_context *ctx, void *stream, unsigned flags);
/* A gcl_stream over a CUstream someone else created (handle; NULL, CU_STREAM_LEGACY (1) and
 * CU_STREAM_PER_THREAD (2) are the default streams) of ctx's device, so that events, copies and
 * graph captures can use it (torch, CuPy and cuda.core streams in Python). The handle is checked
 * as gcl_stream_check does (refusals as it words them), then asked its priority
 * (cuStreamGetPriority);
 * gcl_stream_priority gives the driver's priority of it. gcl_stream_destroy frees the wrapper
 * only: the CUstream stays its creator's, who must keep it alive while the wrapper is used.
 * Thread-safe on ctx. */
GCL_API gcl_status gcl_stream_wrap(gcl_context *ctx, void *handle, gcl_stream **out);


/* Creates an event of ctx's device with timing enabled. */
GCL_API gcl_status gcl_event_create(gcl_context *ctx, gcl_event **out);
GCL_API void gcl_event_destroy(gcl_event *e); /* NULL is fine */
/* Records e at the current end of s (NULL: the default stream of e's context). s must be of
 * e's context. */
GCL_API gcl_status gcl_event_record(gcl_event *e, gcl_stream *s);
/* Waits until the work before e's last record completed (at once if never recorded). */
GCL_API gcl_status gcl_event_synchronize(gcl_event *e);
/* *done = whether the work before e's last record completed (true if never recorded); does not
 * wait. A failed query leaves *done alone. */
GCL_API gcl_status gcl_event_query(gcl_event *e, bool *done);
/* Waits for stop, then *us = device time from start to stop in microseconds (resolution about
 * 0.5 us). Both must be recorded events of one context (GCL_ERROR_INVALID_ARGUMENT naming the
 * one that was not). */
GCL_API gcl_status gcl_event_elapsed_us(gcl_event *start, gcl_event *stop, double *us);
/* Makes work submitted to s after this call wait for e's last record (events of another device
 * are fine). Does not block the host. */
GCL_API gcl_status gcl_stream_wait_event(gcl_stream *s, gcl_event *e);

/* Asynchronous copies and fills on s (a stream of ctx; NULL: ctx's default stream), ordered with
 * the stream's launches. They return once queued; the host memory must stay valid and untouched
 * until the stream reached them (synchronize, or an event). Pageable host memory makes the driver
 * stage the copy (it may then return only after the data was read); memory from gcl_host_alloc
 * is copied truly asynchronously. A bad address is the driver's error (GCL_ERROR_DRIVER naming
 * the call). */
GCL_API gcl_status gcl_mem_upload_async(gcl_context *ctx, uint64_t dst, const void *src,
                                        size_t bytes, gcl_stream *s);
GCL_API gcl_status gcl_mem_download_async(gcl_context *ctx, void *dst, uint64_t src, size_t bytes,
                                          gcl_stream *s);
/* Device-to-device copy (cuMemcpyDtoDAsync). */
GCL_API gcl_status gcl_mem_copy_async(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes,
                                      gcl_stream *s);
/* bytes bytes of value (cuMemsetD8Async). */
GCL_API gcl_status gcl_mem_fill_u8_async(gcl_context *ctx, uint64_t dst, uint8_t value,
                                         size_t bytes, gcl_stream *s);
/* count 32-bit words of value (cuMemsetD32Async); dst must be 4-byte aligned. */
GCL_API gcl_status gcl_mem_fill_u32_async(gcl_context *ctx, uint64_t dst, uint32_t value,
                                          size_t count, gcl_stream *s);
/* Pinned (page-locked) host memory of bytes (>= 1) bytes, portable to every context
 * (cuMemHostAlloc): the source or destination of truly asynchronous copies. Free it with
 * gcl_host_free before the context is destroyed. *out untouched on failure. */
GCL_API gcl_status gcl_host_alloc(gcl_context *ctx, size_t bytes, void **out);
/* Frees memory from gcl_host_alloc; NULL p is fine. */
GCL_API gcl_status gcl_host_free(gcl_context *ctx, void *p);

/* Occupancy. *blocks_per_sm = how many blocks of block_threads threads with dynamic_smem bytes
 * of dynamic shared memory can be resident on one SM at once
 * (cuOccupancyMaxActiveBlocksPerMultiprocessor); 0 when none fits. block_threads must be
 * 1 ... the kernel's maximum and dynamic_smem within its limit (GCL_ERROR_INVALID_CONFIG naming
 * them); a dynamic_smem over the kernel's current limit raises it as gcl_launch would. */
GCL_API gcl_status gcl_kernel_occupancy(const gcl_kernel *k, unsigned block_threads,
                                        size_t dynamic_smem, int *blocks_per_sm);
/* The largest cooperative (or persistent) grid: blocks per SM x the device's SM count.
 * GCL_ERROR_INVALID_CONFIG when not one block fits on an SM. */
GCL_API gcl_status gcl_kernel_max_cooperative_grid(const gcl_kernel *k, unsigned block_threads,
                                                   size_t dynamic_smem, unsigned *blocks);
/* *clusters = how many clusters of config->cluster (all dimensions given) with config->block
 * threads and config->shared_bytes can be active at once on the device
 * (cuOccupancyMaxActiveClusters; config->grid is ignored). Clusters of more than 8 blocks need
 * GCL_KERNEL_NONPORTABLE_CLUSTER_SIZE_ALLOWED set first. */
GCL_API gcl_status gcl_kernel_active_clusters(const gcl_kernel *k, const gcl_launch_config *config,
                                              int *clusters);
/* Fills config for a persistent launch: grid = {SMs x blocks per SM, 1, 1},
 * block = {block_threads, 1, 1}, shared_bytes = dynamic_smem; the other fields (stream,
 * cooperative, cluster, ...) stay as the caller set them. config untouched on failure. */
GCL_API gcl_status gcl_kernel_persistent_config(const gcl_kernel *k, unsigned block_threads,
                                                size_t dynamic_smem, gcl_launch_config *config);

#ifdef __cplusplus
}
#endif
#endif /* GCLAUNCH_STREAM_H */
