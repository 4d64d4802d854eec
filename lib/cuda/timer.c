/* gcl_timer: a thin layer over two gcl_events, for timing work on a raw stream (a CUstream, or
 * gcl_stream_handle) by the device's clock. */
#include "cuda_internal.h"

#include <stdlib.h>

struct gcl_timer {
  gcl_context *ctx; /* borrowed: the events belong to its device */
  gcl_event *start, *stop;
  bool started, stopped;
};

gcl_status gcl_timer_create(gcl_context *ctx, gcl_timer **out) {
  if (!out) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_create: out is NULL");
  if (!ctx) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_create: ctx is NULL");
  gcl_timer *t = gcl__calloc(1, sizeof *t);
  if (!t) return gcl__fail(GCL_ERROR_OUT_OF_MEMORY, "gcl_timer_create: out of memory");
  t->ctx = ctx;
  gcl_status s = gcl_event_create(ctx, &t->start);
  if (s == GCL_OK && (s = gcl_event_create(ctx, &t->stop)) != GCL_OK) gcl_event_destroy(t->start);
  if (s != GCL_OK) {
    gcl__free(t);
    return s;
  }
  *out = t;
  return GCL_OK;
}

void gcl_timer_destroy(gcl_timer *timer) {
  if (!timer) return;
  gcl_event_destroy(timer->start); /* best effort after a fault, as every destroy */
  gcl_event_destroy(timer->stop);
  gcl__free(timer);
}

static gcl_status record(gcl_timer *t, gcl_event *e, void *stream, const char *which) {
  gcl_status s = gcl__context_bind(t->ctx);
  return s == GCL_OK ? gcl__event_record_on(e, (CUstream)stream, which) : s;
}

gcl_status gcl_timer_start(gcl_timer *timer, void *stream) {
  if (!timer) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_start: timer is NULL");
  gcl_status s = record(timer, timer->start, stream, "start event");
  if (s != GCL_OK) return s;
  timer->started = true, timer->stopped = false;
  return GCL_OK;
}

gcl_status gcl_timer_stop(gcl_timer *timer, void *stream) {
  if (!timer) return gcl__fail(GCL_ERROR_INVALID_ARGUMENT, "gcl_timer_stop: timer is NULL");
  if (!timer->started)
    return gcl__fail(GCL_ERROR_INVALID_ARGUMENT,
                     "gcl_timer_stop: timer: expected gcl_timer_start before gcl_timer_stop, got no start");
  gcl_status s = record(timer, timer->stop, stream, "stop event");
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
  return gcl_event_elapsed_us(timer->start, timer->stop, us);
}
