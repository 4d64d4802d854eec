/* gcl_timer: a pair of CUDA events for timing work on a stream by the device's clock. */
#include "cuda_internal.h"

#include <stdlib.h>

struct gcl_timer {
  gcl_context *ctx; /* borrowed: the events belong to its device */
  CUevent start, stop;
  bool started, stopped;
};

gcl_status gcl_timer_create(gcl_context *ctx, gcl_timer **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_create: out is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_create: ctx is NULL");
  gcl_status s = gcl__context_bind(ctx);
  if (s != GCL_OK) return s;
  gcl_timer *t = gcl__calloc(1, sizeof *t);
  if (!t) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_timer_create: out of memory");
  t->ctx = ctx;
  CUresult rc = gcl__cu.cuEventCreate(&t->start, CU_EVENT_DEFAULT);
  if (rc == CUDA_SUCCESS) {
    rc = gcl__cu.cuEventCreate(&t->stop, CU_EVENT_DEFAULT);
    if (rc != CUDA_SUCCESS) gcl__cu.cuEventDestroy(t->start);
  }
  if (rc != CUDA_SUCCESS) {
    gcl__free(t);
    return gcl__cu_fail(rc, "cuEventCreate(device %d)", ctx->device);
  }
  *out = t;
  return GCL_OK;
}

void gcl_timer_destroy(gcl_timer *timer) {
  if (!timer) return;
  /* Best effort: after a sticky error (a faulted kernel) binding fails, and the events must
   * still be given back. */
  (void)gcl__context_bind(timer->ctx);
  gcl__cu.cuEventDestroy(timer->start);
  gcl__cu.cuEventDestroy(timer->stop);
  gcl__free(timer);
}

static gcl_status record(gcl_timer *t, CUevent e, void *stream, const char *which) {
  gcl_status s = gcl__context_bind(t->ctx);
  if (s != GCL_OK) return s;
  CUresult rc = gcl__cu.cuEventRecord(e, (CUstream)stream);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuEventRecord(%s event, device %d)", which,
                                               t->ctx->device);
  return GCL_OK;
}

gcl_status gcl_timer_start(gcl_timer *timer, void *stream) {
  if (!timer) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_start: timer is NULL");
  gcl_status s = record(timer, timer->start, stream, "start");
  if (s != GCL_OK) return s;
  timer->started = true, timer->stopped = false;
  return GCL_OK;
}

gcl_status gcl_timer_stop(gcl_timer *timer, void *stream) {
  if (!timer) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_stop: timer is NULL");
  if (!timer->started)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "gcl_timer_stop: timer: expected gcl_timer_start before gcl_timer_stop, got no start");
  gcl_status s = record(timer, timer->stop, stream, "stop");
  if (s != GCL_OK) return s;
  timer->stopped = true;
  return GCL_OK;
}

gcl_status gcl_timer_elapsed_us(gcl_timer *timer, double *us) {
  if (!timer) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_elapsed_us: timer is NULL");
  if (!us) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_elapsed_us: us is NULL");
  if (!timer->stopped)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_elapsed_us: timer: expected a start and a stop, got %s",
                     timer->started ? "a start only" : "neither");
  gcl_status s = gcl__context_bind(timer->ctx);
  if (s != GCL_OK) return s;
  CUresult rc = gcl__cu.cuEventSynchronize(timer->stop);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuEventSynchronize(stop event, device %d)", timer->ctx->device);
  float ms = 0;
  rc = gcl__cu.cuEventElapsedTime(&ms, timer->start, timer->stop);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuEventElapsedTime(device %d)", timer->ctx->device);
  *us = (double)ms * 1000.0;
  return GCL_OK;
}
