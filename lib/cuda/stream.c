/* gcl_stream: a non-blocking CUDA stream of one context, with a priority. gcl_launch takes its
 * handle (gcl_stream_handle) in gcl_launch_config.stream; copies, events and graphs take the
 * stream itself, so that gclaunch can check it belongs to the right context. */
#include "cuda_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

gcl_status gcl__stream_check(const gcl_stream *s, const gcl_context *ctx, const char *what,
                             bool null_ok) {
  if (!s && null_ok) return ctx ? gcl__context_bind((gcl_context *)ctx) : GCL_OK;
  if (!s) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: expected a stream, got NULL", what);
  if (s->magic != GCL__STREAM_MAGIC)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: not a live stream (destroyed, or never made by gcl_stream_create)", what);
  if (ctx && s->ctx != ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: a stream of device %d, expected one of device %d (the context given)",
                     what, s->ctx->device, ctx->device);
  return gcl__context_bind(s->ctx);
}

/* The device's priority range: greatest (highest, most negative) ... least (0). */
static gcl_status priority_range(gcl_context *ctx, int *least, int *greatest) {
  CUresult rc = gcl__cu.cuCtxGetStreamPriorityRange(least, greatest);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuCtxGetStreamPriorityRange(device %d)", ctx->device);
  return GCL_OK;
}

gcl_status gcl_stream_create(gcl_context *ctx, int priority, gcl_stream **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  int least = 0, greatest = 0;
  gcl_status s = gcl__context_bind(ctx);
  if (s == GCL_OK) s = priority_range(ctx, &least, &greatest);
  if (s != GCL_OK) return s;
  /* Refused rather than clamped (the driver clamps): a priority that silently means another
   * one is a scheduling bug nobody sees. */
  if (priority < greatest || priority > least)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "priority: expected %d (highest) ... %d (lowest) on device %d, got %d",
                     greatest, least, ctx->device, priority);
  gcl_stream *st = gcl__calloc(1, sizeof *st);
  if (!st) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_stream_create: out of memory");
  CUresult rc = gcl__cu.cuStreamCreateWithPriority(&st->stream, CU_STREAM_NON_BLOCKING, priority);
  if (rc != CUDA_SUCCESS) {
    gcl__free(st);
    return gcl__cu_fail(rc, "cuStreamCreateWithPriority(device %d, priority %d)", ctx->device,
                        priority);
  }
  st->magic = GCL__STREAM_MAGIC, st->ctx = ctx, st->priority = priority;
  *out = st;
  return GCL_OK;
}

gcl_status gcl_stream_wrap(gcl_context *ctx, void *handle, gcl_stream **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  gcl_status s = gcl__context_bind(ctx);
  if (s == GCL_OK) s = gcl_stream_check(ctx, handle, 0); /* never reads an unmapped handle */
  if (s != GCL_OK) return s;
  int priority = 0;
  /* The driver's priority of it (as the driver clamped it when it was made). */
  CUresult rc = gcl__cu.cuStreamGetPriority((CUstream)handle, &priority);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuStreamGetPriority(handle %p, device %d): handle is no stream of "
                        "the device", handle, ctx->device);
  gcl_stream *st = gcl__calloc(1, sizeof *st);
  if (!st) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_stream_wrap: out of memory");
  st->magic = GCL__STREAM_MAGIC, st->ctx = ctx, st->stream = (CUstream)handle;
  st->priority = priority, st->borrowed = true;
  *out = st;
  return GCL_OK;
}

void gcl_stream_destroy(gcl_stream *s) {
  if (!s || s->magic != GCL__STREAM_MAGIC) return;
  gcl__free(s->tables); /* an unfinished capture's tables (lib/cuda/graph.c) */
  if (s->capturing) gcl__capture_forget(s);
  if (s->borrowed) { /* the CUstream stays its owner's; an unfinished capture is still ended */
    if (s->capturing && gcl__context_bind(s->ctx) == GCL_OK) {
      CUgraph g = NULL;
      if (gcl__cu.cuStreamEndCapture(s->stream, &g) == CUDA_SUCCESS && g) gcl__cu.cuGraphDestroy(g);
      gcl__deferred_drain(s->ctx); /* what this thread released during that capture */
    }
    s->magic = 0;
    gcl__free(s);
    return;
  }
  /* Best effort: after a kernel fault binding fails, and the stream must still be given back. */
  (void)gcl__context_bind(s->ctx);
  if (s->capturing) { /* an unfinished capture is discarded */
    CUgraph g = NULL;
    if (gcl__cu.cuStreamEndCapture(s->stream, &g) == CUDA_SUCCESS && g) gcl__cu.cuGraphDestroy(g);
  }
  gcl__cu.cuStreamDestroy(s->stream);
  if (gcl__context_bind(s->ctx) == GCL_OK) gcl__deferred_drain(s->ctx); /* its capture's frees */
  s->magic = 0;
  gcl__free(s);
}

gcl_status gcl_stream_synchronize(gcl_stream *s) {
  gcl_status st = gcl__stream_check(s, NULL, "s", false);
  if (st != GCL_OK) return st;
  if (s->capturing) /* the driver would invalidate the capture */
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "s: the stream is capturing a graph; end the capture (gcl_graph_capture_end) "
                     "before synchronizing it");
  CUresult rc = gcl__cu.cuStreamSynchronize(s->stream);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuStreamSynchronize(device %d)", s->ctx->device);
  return GCL_OK;
}

void *gcl_stream_handle(const gcl_stream *s) { return s ? (void *)s->stream : NULL; }

gcl_context *gcl_stream_context(const gcl_stream *s) { return s ? s->ctx : NULL; }

int gcl_stream_priority(const gcl_stream *s) { return s ? s->priority : 0; }

/* --- handles from outside ------------------------------------------------------------------- */

/* Whether n bytes at p are mapped and readable, asked of the kernel (process_vm_readv of this
 * process: EFAULT, no signal, for an unmapped or unreadable address). When the kernel will not
 * answer (ENOSYS, EPERM under a sandbox), a write of the bytes into a pipe does (EFAULT too). */
static bool readable(const void *p, size_t n) {
  char buf[64];
  if (n > sizeof buf) n = sizeof buf;
  struct iovec local = {buf, n}, remote = {(void *)p, n};
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == (ssize_t)n) return true;
  if (got < 0 && errno == EFAULT) return false;
  int fd[2];
  if (pipe(fd) != 0) return false; /* cannot tell: refuse rather than read */
  ssize_t w = write(fd[1], p, n);
  close(fd[0]), close(fd[1]);
  return w == (ssize_t)n;
}

gcl_status gcl_stream_check(gcl_context *ctx, void *stream, unsigned flags) {
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  if (flags & ~GCL_STREAM_CHECK_MAPPED)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "flags: unknown bits 0x%x", flags & ~GCL_STREAM_CHECK_MAPPED);
  uintptr_t h = (uintptr_t)stream;
  if (h == 0 || stream == (void *)CU_STREAM_LEGACY || stream == (void *)CU_STREAM_PER_THREAD)
    return GCL_OK;
  if (h < 4096 || h > (uintptr_t)INTPTR_MAX || h % 8) /* the driver's streams are allocations */
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "stream 0x%llx: not a stream handle (0: the default stream, 1: "
                     "CU_STREAM_LEGACY, 2: CU_STREAM_PER_THREAD, or a CUstream)",
                     (unsigned long long)h);
  if (!(flags & GCL_STREAM_CHECK_MAPPED) && !readable(stream, 16))
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "stream 0x%llx: not a live stream (no memory is mapped there)",
                     (unsigned long long)h);
  if (!gcl__cu.cuStreamGetCtx) return GCL_OK; /* a driver before 9.2: the launch decides */
  CUcontext c = NULL;
  CUresult rc = gcl__cu.cuStreamGetCtx((CUstream)stream, &c);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "stream 0x%llx: not a live stream (cuStreamGetCtx)", (unsigned long long)h);
  if (c != ctx->ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "stream 0x%llx: a stream of another context, expected one of device %d's",
                     (unsigned long long)h, ctx->device);
  return GCL_OK;
}
