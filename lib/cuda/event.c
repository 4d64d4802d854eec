/* gcl_event: a CUDA event of one context, for ordering streams and timing work by the device's
 * clock. */
#include "cuda_internal.h"

#include <stdlib.h>

static gcl_status event_check(const gcl_event *e, const char *what) {
  if (!e) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: expected an event, got NULL", what);
  if (e->magic != GCL__EVENT_MAGIC)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "%s: not a live event (destroyed, or never made by gcl_event_create)", what);
  return gcl__context_bind(e->ctx);
}

gcl_status gcl_event_create(gcl_context *ctx, gcl_event **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "out: expected a pointer, got NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "ctx: expected a context, got NULL");
  gcl_status s = gcl__context_bind(ctx);
  if (s != GCL_OK) return s;
  gcl_event *e = gcl__calloc(1, sizeof *e);
  if (!e) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_event_create: out of memory");
  CUresult rc = gcl__cu.cuEventCreate(&e->event, CU_EVENT_DEFAULT); /* timing enabled */
  if (rc != CUDA_SUCCESS) {
    gcl__free(e);
    return gcl__cu_fail(rc, "cuEventCreate(device %d)", ctx->device);
  }
  e->magic = GCL__EVENT_MAGIC, e->ctx = ctx;
  *out = e;
  return GCL_OK;
}

void gcl_event_destroy(gcl_event *e) {
  if (!e || e->magic != GCL__EVENT_MAGIC) return;
  (void)gcl__context_bind(e->ctx); /* best effort, as gcl_stream_destroy */
  gcl__cu.cuEventDestroy(e->event);
  e->magic = 0;
  gcl__free(e);
}

gcl_status gcl_event_record(gcl_event *e, gcl_stream *s) {
  gcl_status st = event_check(e, "e");
  if (st == GCL_OK) st = gcl__stream_check(s, e->ctx, "s", true);
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuEventRecord(e->event, gcl__cu_stream(s));
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuEventRecord(device %d)", e->ctx->device);
  e->recorded = true;
  return GCL_OK;
}

gcl_status gcl_event_synchronize(gcl_event *e) {
  gcl_status st = event_check(e, "e");
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuEventSynchronize(e->event);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuEventSynchronize(device %d)", e->ctx->device);
  return GCL_OK;
}

gcl_status gcl_event_query(gcl_event *e, bool *done) {
  gcl_status st = event_check(e, "e");
  if (st != GCL_OK) return st;
  if (!done) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "done: expected a pointer, got NULL");
  CUresult rc = gcl__cu.cuEventQuery(e->event);
  if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY)
    return gcl__cu_fail(rc, "cuEventQuery(device %d)", e->ctx->device);
  *done = rc == CUDA_SUCCESS;
  return GCL_OK;
}

gcl_status gcl_event_elapsed_us(gcl_event *start, gcl_event *stop, double *us) {
  gcl_status st = event_check(start, "start");
  if (st == GCL_OK) st = event_check(stop, "stop");
  if (st != GCL_OK) return st;
  if (!us) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "us: expected a pointer, got NULL");
  if (start->ctx != stop->ctx)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "stop: an event of device %d, start is of device "
                     "%d: expected events of one context", stop->ctx->device, start->ctx->device);
  if (!start->recorded || !stop->recorded)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "%s: never recorded (gcl_event_record)",
                     start->recorded ? "stop" : "start");
  CUresult rc = gcl__cu.cuEventSynchronize(stop->event); /* the time exists once stop completed */
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuEventSynchronize(stop event, device %d)", stop->ctx->device);
  float ms = 0;
  rc = gcl__cu.cuEventElapsedTime(&ms, start->event, stop->event);
  if (rc != CUDA_SUCCESS) return gcl__cu_fail(rc, "cuEventElapsedTime(device %d)", stop->ctx->device);
  *us = (double)ms * 1000.0;
  return GCL_OK;
}

gcl_status gcl_stream_wait_event(gcl_stream *s, gcl_event *e) {
  gcl_status st = event_check(e, "e");
  if (st == GCL_OK) st = gcl__stream_check(s, NULL, "s", false); /* any device's event may gate s */
  if (st != GCL_OK) return st;
  CUresult rc = gcl__cu.cuStreamWaitEvent(s->stream, e->event, 0);
  if (rc != CUDA_SUCCESS)
    return gcl__cu_fail(rc, "cuStreamWaitEvent(stream of device %d, event of device %d)",
                        s->ctx->device, e->ctx->device);
  return GCL_OK;
}
