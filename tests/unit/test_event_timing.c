/* Timing with gcl_events (the one way to time device work) against libfakecuda.so: the fake
 * records the host clock at each cuEventRecord and reports the difference, so a timed sleep must
 * come back as at least that long. A pair of events is reused across measurements; a fault seen
 * while waiting for the stop event is the sticky kernel fault, and the events are still given
 * back. (Misuse of events is test_stream.c's.) */
#include "fakecuda_test.h"

#include <time.h>

TestSuite(event_timing, .init = fake_use);

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts)) {}
}

Test(event_timing, measures_the_time_between_two_records) {
  gcl_context *ctx;
  gcl_event *start, *stop;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_create(ctx, &start), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_create(ctx, &stop), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("event"), 2);
  for (int r = 0; r < 3; r++) { /* reused: each record replaces the last */
    double us = -1;
    cr_assert_eq(gcl_event_record(start, NULL), GCL_OK, "%s", gcl_last_error());
    sleep_us(2000);
    cr_assert_eq(gcl_event_record(stop, NULL), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_event_elapsed_us(start, stop, &us), GCL_OK, "%s", gcl_last_error());
    cr_assert(us >= 2000 * 0.99 && us < 2000000, "elapsed %.1f us for a 2000 us sleep", us);
  }
  cr_assert_eq(fakecuda_calls("cuEventRecord"), 6);
  cr_assert_eq(fakecuda_calls("cuEventSynchronize"), 3, "elapsed waits for the stop event");
  gcl_event_destroy(start);
  gcl_event_destroy(stop);
  gcl_event_destroy(NULL);
  cr_assert_eq(fakecuda_live("event"), 0);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* cuEventCreate fails: nothing is left behind, *out untouched. A fault while waiting for the stop
 * event is the sticky kernel fault; destroying the events still works. */
Test(event_timing, driver_failures_leave_nothing_behind) {
  gcl_context *ctx;
  gcl_event *start = NULL, *stop = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  fakecuda_fail_once("cuEventCreate", 2 /* CUDA_ERROR_OUT_OF_MEMORY */, 0);
  cr_assert_eq(gcl_event_create(ctx, &start), GCL_ERROR_OUT_OF_MEMORY, "%s", gcl_last_error());
  assert_msg_has("CUDA_ERROR_OUT_OF_MEMORY");
  cr_assert_null(start);
  cr_assert_eq(fakecuda_live("event"), 0);
  cr_assert_eq(gcl_event_create(ctx, &start), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_event_create(ctx, &stop), GCL_OK, "%s", gcl_last_error());
  double us = 0;
  cr_assert_eq(gcl_event_record(start, NULL), GCL_OK);
  cr_assert_eq(gcl_event_record(stop, NULL), GCL_OK);
  fakecuda_fail_once("cuEventSynchronize", 719 /* CUDA_ERROR_LAUNCH_FAILED */, 0);
  cr_assert_eq(gcl_event_elapsed_us(start, stop, &us), GCL_ERROR_KERNEL_FAULT); /* sticky */
  assert_msg_has("CUDA_ERROR_LAUNCH_FAILED");
  gcl_event_destroy(start); /* release functions work in the lost state */
  gcl_event_destroy(stop);
  cr_assert_eq(fakecuda_live("event"), 0);
  gcl_context_destroy(ctx);
}
