#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

Test(status, names_cover_every_value) {
  cr_assert_str_eq(gcl_status_name(GCL_OK), "GCL_OK");
  cr_assert_str_eq(gcl_status_name(GCL_ERROR_PARSE), "GCL_ERROR_PARSE");
  cr_assert_str_eq(gcl_status_name(GCL_ERROR_NO_DRIVER), "GCL_ERROR_NO_DRIVER");
  for (int s = 0; s < GCL_STATUS_COUNT; s++) {
    cr_assert_not_null(gcl_status_name((gcl_status)s));
    cr_assert(strncmp(gcl_status_name((gcl_status)s), "GCL_", 4) == 0);
    cr_assert(strlen(gcl_status_text((gcl_status)s)) > 0);
  }
  cr_assert_str_eq(gcl_status_name((gcl_status)GCL_STATUS_COUNT), "GCL_STATUS_UNKNOWN");
  cr_assert_str_eq(gcl_status_name((gcl_status)-1), "GCL_STATUS_UNKNOWN");
}

Test(status, last_error_is_written_only_on_failure) {
  cr_assert_str_eq(gcl_last_error(), "");
  gcl_status s = gcl__fail(GCL_ERROR_PARSE, "col %d: expected a type", 17);
  cr_assert_eq(s, GCL_ERROR_PARSE);
  cr_assert_str_eq(gcl_last_error(), "col 17: expected a type");
  cr_assert_str_eq(gcl_version(), GCL_VERSION_STRING); /* a success touches nothing */
  cr_assert_str_eq(gcl_last_error(), "col 17: expected a type");
}

static void *other_thread(void *arg) {
  (void)arg;
  gcl__fail(GCL_ERROR_IO, "from the other thread");
  return NULL;
}

Test(status, last_error_is_per_thread) {
  gcl__fail(GCL_ERROR_PARSE, "mine");
  pthread_t t;
  pthread_create(&t, NULL, other_thread, NULL);
  pthread_join(t, NULL);
  cr_assert_str_eq(gcl_last_error(), "mine");
}

Test(status, long_messages_are_truncated_not_overflowed) {
  char big[GCL__MESSAGE_MAX * 2];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  gcl__fail(GCL_ERROR_COMPILE, "%s", big);
  cr_assert_eq(strlen(gcl_last_error()), GCL__MESSAGE_MAX - 1);
  gcl__fail_append("more");
  cr_assert_eq(strlen(gcl_last_error()), GCL__MESSAGE_MAX - 1);
}
