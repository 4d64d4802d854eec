/* gclaunch info: what this machine offers -- driver, devices, NVRTC -- and why not if not. */
#include "cli.h"

#include <gclaunch/gclaunch.h>
#include <stdio.h>

static void print_devices(void) {
  int count = 0;
  if (gcl_device_count(&count) != GCL_OK) {
    printf("devices:  none (%s)\n", gcl_last_error());
    return;
  }
  printf("devices:  %d\n", count);
  for (int d = 0; d < count; d++) {
    gcl_device_info info;
    if (gcl_device_get_info(d, &info) != GCL_OK) {
      printf("  [%d] %s\n", d, gcl_last_error());
      continue;
    }
    printf("  [%d] %s, sm_%d, %d multiprocessors, %.1f GiB, max parameter bytes %d, "
           "max dynamic shared memory %d bytes\n",
           d, info.name, info.sm, info.multiprocessors,
           (double)info.total_memory / (1024.0 * 1024.0 * 1024.0), GCL_PARAM_LIMIT,
           info.max_shared_per_block_optin);
  }
}

static void print_driver(void) {
  gcl_status s = gcl_driver_init();
  int version = 0;
  if (gcl_driver_version(&version) == GCL_OK)
    printf("driver:   %s, CUDA %d.%d\n", gcl_driver_path(), version / 1000, (version % 1000) / 10);
  if (s != GCL_OK) {
    if (s == GCL_ERROR_NO_DRIVER)
      printf("driver:   not found -- there is no CUDA driver on this machine (looked for '%s').\n"
             "          GPU features are unavailable; everything on the CPU works.\n",
             gcl_driver_path());
    printf("          %s: %s\n", gcl_status_name(s), gcl_last_error());
    return;
  }
  print_devices();
}

static void print_nvrtc(void) {
  int major = 0, minor = 0;
  if (gcl_nvrtc_version(&major, &minor) != GCL_OK) {
    printf("nvrtc:    not found (%s)\n", gcl_last_error());
    return;
  }
  printf("nvrtc:    %s, version %d.%d\n", gcl_nvrtc_path(), major, minor);
  int archs[64];
  size_t n = 0;
  if (gcl_nvrtc_archs(archs, 64, &n) != GCL_OK) {
    printf("          architectures unknown (%s)\n", gcl_last_error());
    return;
  }
  printf("          architectures:");
  for (size_t i = 0; i < n && i < 64; i++) printf(" sm_%d", archs[i]);
  printf("\n");
}

int gcl_cmd_info(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "usage: gclaunch info\n");
    return 2;
  }
  printf("gclaunch: %s\n", gcl_version());
  print_driver();
  print_nvrtc();
  return 0;
}
