#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
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

/* The numbers are ABI: a program built against an older header compares against them. Written
 * out by hand, not from GCL_STATUS_LIST, so that a renumbering in the table fails here. */
Test(status, values_are_pinned) {
  static const struct { gcl_status s; int value; const char *name; } pins[] = {
      {GCL_OK, 0, "GCL_OK"},
      {GCL_ERROR_INVALID_ARGUMENT, 1, "GCL_ERROR_INVALID_ARGUMENT"},
      {GCL_ERROR_OUT_OF_MEMORY, 2, "GCL_ERROR_OUT_OF_MEMORY"},
      {GCL_ERROR_PARSE, 3, "GCL_ERROR_PARSE"},
      {GCL_ERROR_LAYOUT_TOO_LARGE, 4, "GCL_ERROR_LAYOUT_TOO_LARGE"},
      {GCL_ERROR_UNSET_ARGUMENT, 5, "GCL_ERROR_UNSET_ARGUMENT"},
      {GCL_ERROR_TYPE_MISMATCH, 6, "GCL_ERROR_TYPE_MISMATCH"},
      {GCL_ERROR_TENSOR, 7, "GCL_ERROR_TENSOR"},
      {GCL_ERROR_TENSOR_VERSION, 8, "GCL_ERROR_TENSOR_VERSION"},
      {GCL_ERROR_BAD_IMAGE, 9, "GCL_ERROR_BAD_IMAGE"},
      {GCL_ERROR_NOT_FOUND, 10, "GCL_ERROR_NOT_FOUND"},
      {GCL_ERROR_SIGNATURE_MISMATCH, 11, "GCL_ERROR_SIGNATURE_MISMATCH"},
      {GCL_ERROR_NO_DRIVER, 12, "GCL_ERROR_NO_DRIVER"},
      {GCL_ERROR_STUB_DRIVER, 13, "GCL_ERROR_STUB_DRIVER"},
      {GCL_ERROR_NO_DEVICE, 14, "GCL_ERROR_NO_DEVICE"},
      {GCL_ERROR_DRIVER_TOO_OLD, 15, "GCL_ERROR_DRIVER_TOO_OLD"},
      {GCL_ERROR_DRIVER, 16, "GCL_ERROR_DRIVER"},
      {GCL_ERROR_NO_NVRTC, 17, "GCL_ERROR_NO_NVRTC"},
      {GCL_ERROR_COMPILE, 18, "GCL_ERROR_COMPILE"},
      {GCL_ERROR_INVALID_CONFIG, 19, "GCL_ERROR_INVALID_CONFIG"},
      {GCL_ERROR_IO, 20, "GCL_ERROR_IO"},
      {GCL_ERROR_KERNEL_FAULT, 21, "GCL_ERROR_KERNEL_FAULT"},
      {GCL_ERROR_NO_NVSHMEM, 22, "GCL_ERROR_NO_NVSHMEM"},
      {GCL_ERROR_NVSHMEM, 23, "GCL_ERROR_NVSHMEM"},
      {GCL_ERROR_NVSHMEM_VERSION, 24, "GCL_ERROR_NVSHMEM_VERSION"},
      {GCL_ERROR_NOT_ATTACHED, 25, "GCL_ERROR_NOT_ATTACHED"},
      {GCL_ERROR_PEER_UNREACHABLE, 26, "GCL_ERROR_PEER_UNREACHABLE"},
  };
  size_t n = sizeof pins / sizeof *pins, listed = 0;
  for (size_t i = 0; i < n; i++) {
    cr_expect_eq((int)pins[i].s, pins[i].value, "%s is %d, pinned at %d", pins[i].name,
                 (int)pins[i].s, pins[i].value);
    cr_expect_str_eq(gcl_status_name(pins[i].s), pins[i].name);
    cr_expect_str_neq(gcl_status_text(pins[i].s), "unknown status", "%s has no text", pins[i].name);
  }
#define COUNT_ONE(name, value, text) listed++;
  GCL_STATUS_LIST(COUNT_ONE)
#undef COUNT_ONE
  cr_expect_eq(listed, n, "GCL_STATUS_LIST has %zu statuses, %zu are pinned here: pin the new one",
               listed, n);
  cr_assert_str_eq(gcl_status_text(GCL_ERROR_KERNEL_FAULT),
                   "a kernel faulted: the process's CUDA state is lost; only a new process recovers");
}

Test(status, version_number) {
  cr_assert_eq(GCL_VERSION_NUMBER,
               10000 * GCL_VERSION_MAJOR + 100 * GCL_VERSION_MINOR + GCL_VERSION_PATCH);
  cr_assert_eq(gcl_version_number(), (unsigned)GCL_VERSION_NUMBER);
  char text[32];
  snprintf(text, sizeof text, "%u.%u.%u", gcl_version_number() / 10000,
           gcl_version_number() / 100 % 100, gcl_version_number() % 100);
  cr_assert_str_eq(text, gcl_version());
  /* The header, the library and the build (meson's project version, the soname's) agree; 0.4.0
   * is the one tensor-map surface (gclaunch/tensormap.h; CHANGELOG.md). */
  cr_assert_str_eq(gcl_version(), GCL_PROJECT_VERSION);
  cr_assert_str_eq(GCL_VERSION_STRING, "0.4.0");
  cr_assert_eq(GCL_VERSION_NUMBER, 400);
}
