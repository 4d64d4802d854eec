/* The driver edge without a GPU: a missing library, the toolkit's stub, a library without the
 * bootstrap symbol. Each Criterion test runs in its own process, so the once-only load is fresh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/suite.h"
#include "internal.h"

Test(driver, missing_library_is_no_driver) {
  setenv("GCL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_NO_DRIVER);
  cr_assert(strstr(gcl_last_error(), "no CUDA driver"), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "/nonexistent/libcuda.so.1"), "%s", gcl_last_error());
  cr_assert_str_eq(gcl_driver_path(), "/nonexistent/libcuda.so.1");
  int n = -1;
  cr_assert_eq(gcl_device_count(&n), GCL_ERROR_NO_DRIVER);
  cr_assert_eq(n, -1, "a failed call must not write its output");
  gcl_context *ctx = (gcl_context *)0x1;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_ERROR_NO_DRIVER);
  cr_assert_eq(ctx, (gcl_context *)0x1);
}

Test(driver, stub_library_is_its_own_status) {
  char path[1024];
  snprintf(path, sizeof path, "%s/lib64/stubs/libcuda.so", gcl_test_cuda_root());
  FILE *f = fopen(path, "rb");
  if (!f) GCL_SKIP("no stub libcuda at %s", path);
  fclose(f);
  setenv("GCL_LIBCUDA", path, 1);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_STUB_DRIVER, "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "stub"), "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "34"), "%s", gcl_last_error());
  /* Cached: the second call gives the same status and message. */
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_STUB_DRIVER);
  cr_assert(strstr(gcl_last_error(), "stub"));
}

Test(driver, library_without_bootstrap_symbol) {
  setenv("GCL_LIBCUDA", "libm.so.6", 1);
  cr_assert_eq(gcl_driver_init(), GCL_ERROR_DRIVER_TOO_OLD, "%s", gcl_last_error());
  cr_assert(strstr(gcl_last_error(), "cuGetProcAddress_v2"), "%s", gcl_last_error());
}

Test(driver, null_outputs_are_rejected) {
  cr_assert_eq(gcl_device_count(NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_context_create(0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_device_query(0, NULL), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_driver_version(NULL), GCL_ERROR_INVALID_ARGUMENT);
  gcl_context_destroy(NULL);
}

Test(nvrtc, found_and_reports_architectures) {
  int major = 0, minor = 0;
  if (gcl_nvrtc_version(&major, &minor) != GCL_OK) GCL_SKIP_NO_NVRTC("no NVRTC: %s", gcl_last_error());
  cr_assert_geq(major, 12);
  int archs[64];
  size_t n = 0;
  cr_assert_eq(gcl_nvrtc_archs(archs, 64, &n), GCL_OK);
  cr_assert_gt(n, 0);
  bool has90 = false;
  for (size_t i = 0; i < n && i < 64; i++) has90 |= archs[i] == 90;
  cr_assert(has90, "NVRTC should support sm_90");
}

Test(nvrtc, override_that_does_not_exist) {
  setenv("GCL_LIBNVRTC", "/nonexistent/libnvrtc.so", 1);
  int major, minor;
  cr_assert_eq(gcl_nvrtc_version(&major, &minor), GCL_ERROR_NO_NVRTC);
  cr_assert(strstr(gcl_last_error(), "/nonexistent/libnvrtc.so"), "%s", gcl_last_error());
}
