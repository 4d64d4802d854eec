/* gcl_timer against libfakecuda.so: the fake records the host clock at each cuEventRecord and
 * reports the difference, so a timed sleep must come back as at least that long. Also every
 * misuse (no start, no stop, NULLs) and every driver failure: a clean status naming the call,
 * and no event left behind. */
#include "fakecuda_test.h"

#include <time.h>

TestSuite(timer, .init = fake_use);

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts)) {}
}

Test(timer, measures_the_time_between_start_and_stop) {
  gcl_context *ctx;
  gcl_timer *t;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_timer_create(ctx, &t), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_live("event"), 2);
  for (int r = 0; r < 3; r++) { /* a timer is reused: each start forgets the last stop */
    double us = -1;
    cr_assert_eq(gcl_timer_start(t, NULL), GCL_OK, "%s", gcl_last_error());
    sleep_us(2000);
    cr_assert_eq(gcl_timer_stop(t, NULL), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_timer_elapsed_us(t, &us), GCL_OK, "%s", gcl_last_error());
    cr_assert(us >= 2000 * 0.99 && us < 2000000, "elapsed %.1f us for a 2000 us sleep", us);
  }
  cr_assert_eq(fakecuda_calls("cuEventRecord"), 6);
  cr_assert_eq(fakecuda_calls("cuEventSynchronize"), 3, "elapsed waits for the stop event");
  gcl_timer_destroy(t);
  gcl_timer_destroy(NULL);
  cr_assert_eq(fakecuda_live("event"), 0);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

Test(timer, misuse_is_named_and_changes_nothing) {
  gcl_context *ctx;
  gcl_timer *t = (gcl_timer *)0x5e17;
  double us = 42;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_timer_create(NULL, &t), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("ctx");
  cr_assert_eq(t, (gcl_timer *)0x5e17, "a failed create leaves *out alone");
  cr_assert_eq(gcl_timer_create(ctx, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("out");
  cr_assert_eq(gcl_timer_create(ctx, &t), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_timer_elapsed_us(t, &us), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("got neither");
  cr_assert_eq(gcl_timer_stop(t, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_timer_start before gcl_timer_stop");
  cr_assert_eq(gcl_timer_start(t, NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_timer_elapsed_us(t, &us), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("got a start only");
  cr_assert_eq(gcl_timer_stop(t, NULL), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_timer_elapsed_us(t, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_timer_elapsed_us: us is NULL");
  cr_assert_eq(us, 42, "a failed elapsed leaves *us alone");
  cr_assert_eq(gcl_timer_start(NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("timer");
  cr_assert_eq(gcl_timer_stop(NULL, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_timer_elapsed_us(NULL, &us), GCL_ERROR_INVALID_ARGUMENT);
  /* A stream that is no stream is the driver's error, with the driver's name in the message. */
  uint32_t not_a_stream[2] = {0xdead, 0};
  cr_assert_eq(gcl_timer_start(t, not_a_stream), GCL_ERROR_DRIVER);
  assert_msg_has("cuEventRecord(start event, device 0): CUDA_ERROR_INVALID_HANDLE");
  gcl_timer_destroy(t);
  gcl_context_destroy(ctx);
  assert_nothing_live();
}

/* The second cuEventCreate fails: the first event is destroyed, *out untouched; then it works. */
Test(timer, driver_failures_leave_nothing_behind) {
  gcl_context *ctx;
  gcl_timer *t = NULL;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  for (int after = 0; after < 2; after++) {
    fakecuda_fail_once("cuEventCreate", 2 /* CUDA_ERROR_OUT_OF_MEMORY */, after);
    cr_assert_eq(gcl_timer_create(ctx, &t), GCL_ERROR_OUT_OF_MEMORY, "%s", gcl_last_error());
    assert_msg_has("cuEventCreate(device 0): CUDA_ERROR_OUT_OF_MEMORY");
    cr_assert_null(t);
    cr_assert_eq(fakecuda_live("event"), 0, "failure after %d creates left events", after);
  }
  cr_assert_eq(gcl_timer_create(ctx, &t), GCL_OK, "%s", gcl_last_error());
  double us = 0;
  cr_assert_eq(gcl_timer_start(t, NULL), GCL_OK);
  cr_assert_eq(gcl_timer_stop(t, NULL), GCL_OK);
  fakecuda_fail_once("cuEventSynchronize", 719 /* CUDA_ERROR_LAUNCH_FAILED */, 0);
  cr_assert_eq(gcl_timer_elapsed_us(t, &us), GCL_ERROR_KERNEL_FAULT); /* sticky: a kernel fault */
  assert_msg_has("cuEventSynchronize(stop event, device 0): CUDA_ERROR_LAUNCH_FAILED");
  gcl_timer_destroy(t); /* release functions work in the lost state */
  cr_assert_eq(fakecuda_live("event"), 0);
  gcl_context_destroy(ctx);
}
