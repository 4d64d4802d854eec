/* Asynchronous copies and fills on a gcl_stream, and pinned host memory (the only host memory a
 * copy can run asynchronously from: pageable memory is staged by the driver first). */
#include "cuda_internal.h"

#include <stdio.h>

/* ctx non-NULL and s a stream of ctx (NULL: ctx's default stream); binds ctx. */
static gcl_status guard(gcl_context *ctx, const gcl_stream *s) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  gcl_status st = gcl__context_bind(ctx);
  return st == GCL_OK ? gcl__stream_check(s, ctx, "s", true) : st;
}

static gcl_status done(CUresult rc, const char *call, size_t bytes, const gcl_context *ctx) {
  if (rc == CUDA_SUCCESS) return GCL_OK;
  return gcl__cu_fail(rc, "%s(%zu bytes, device %d)", call, bytes, ctx->device);
}

gcl_status gcl_mem_upload_async(gcl_context *ctx, uint64_t dst, const void *src, size_t bytes,
                                gcl_stream *s) {
  gcl_status st = guard(ctx, s);
  if (st != GCL_OK) return st;
  if (!src && bytes) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "src: expected host memory, got NULL");
  CUresult rc = gcl__cu.cuMemcpyHtoDAsync((CUdeviceptr)dst, src, bytes, gcl__cu_stream(s));
  return done(rc, "cuMemcpyHtoDAsync", bytes, ctx);
}

gcl_status gcl_mem_download_async(gcl_context *ctx, void *dst, uint64_t src, size_t bytes,
                                  gcl_stream *s) {
  gcl_status st = guard(ctx, s);
  if (st != GCL_OK) return st;
  if (!dst && bytes) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "dst: expected host memory, got NULL");
  CUresult rc = gcl__cu.cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, gcl__cu_stream(s));
  return done(rc, "cuMemcpyDtoHAsync", bytes, ctx);
}

gcl_status gcl_mem_copy_async(gcl_context *ctx, uint64_t dst, uint64_t src, size_t bytes,
                              gcl_stream *s) {
  gcl_status st = guard(ctx, s);
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, gcl__cu_stream(s));
  return done(rc, "cuMemcpyDtoDAsync", bytes, ctx);
}

gcl_status gcl_mem_fill_u8_async(gcl_context *ctx, uint64_t dst, uint8_t value, size_t bytes,
                                 gcl_stream *s) {
  gcl_status st = guard(ctx, s);
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuMemsetD8Async((CUdeviceptr)dst, value, bytes, gcl__cu_stream(s));
  return done(rc, "cuMemsetD8Async", bytes, ctx);
}

gcl_status gcl_mem_fill_u32_async(gcl_context *ctx, uint64_t dst, uint32_t value, size_t count,
                                  gcl_stream *s) {
  gcl_status st = guard(ctx, s);
  if (st != GCL_OK) return st;
  if (dst % 4) /* the driver's rule for cuMemsetD32: 4-byte aligned */
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "dst: 0x%llx is not 4-byte aligned (32-bit fill)",
                     (unsigned long long)dst);
  CUresult rc = gcl__cu.cuMemsetD32Async((CUdeviceptr)dst, value, count, gcl__cu_stream(s));
  return done(rc, "cuMemsetD32Async", count * 4, ctx);
}

gcl_status gcl_host_alloc(gcl_context *ctx, size_t bytes, void **out) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!bytes) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "bytes: expected at least 1, got 0");
  gcl_status st = gcl__context_bind(ctx);
  if (st != GCL_OK) return st;
  void *p = NULL;
  /* PORTABLE: pinned for every context, so any device's stream copies from it asynchronously. */
  CUresult rc = gcl__cu.cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (rc != CUDA_SUCCESS) return done(rc, "cuMemHostAlloc", bytes, ctx);
  *out = p;
  return GCL_OK;
}

gcl_status gcl_host_free(gcl_context *ctx, void *p) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (!p) return GCL_OK;
  (void)gcl__context_bind(ctx); /* best effort: memory is given back even after a fault */
  CUresult rc = gcl__cu.cuMemFreeHost(p);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuMemFreeHost(%p)", p);
  return GCL_OK;
}
