/* main() for GPU suites: exits 77 (skipped) when there is no usable device, else runs Criterion
 * (and exits 77 if every test skipped, tests/common/suite.h). GCL_REQUIRE_GPU=1 (GPU runners,
 * scripts/h200.sh) makes "no usable device" a failure (exit 1, saying why): a broken driver
 * loader then shows up as failing suites, not as skipped ones. Too few devices for a suite that
 * needs several stays a skip.
 * The probe runs in a child process so that this process never initialises the driver before
 * Criterion forks its workers. A suite that needs several devices defines GCL_GPU_MIN_DEVICES
 * and includes this file (tests/gpu/test_multigpu.c): with fewer it is skipped, saying why. */
#define GCL_TEST_SUITE_MAIN
#include "../common/suite.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

#ifndef GCL_GPU_MIN_DEVICES
#define GCL_GPU_MIN_DEVICES 1
#endif

/* 0: usable; 1: no device or no driver (a failure under GCL_REQUIRE_GPU=1); 2: too few devices. */
static int probe_device(void) {
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    int n = 0;
    gcl_status s = gcl_device_count(&n);
    if (s != GCL_OK || n == 0) {
      fprintf(stderr, "gpu suite: no usable device: %s\n", s != GCL_OK ? gcl_last_error() : "0 devices");
      _exit(1);
    }
    if (n < GCL_GPU_MIN_DEVICES) {
      fprintf(stderr, "gpu suite skipped: %d device(s), this suite needs %d\n", n, GCL_GPU_MIN_DEVICES);
      _exit(2);
    }
    _exit(0);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return 1;
  if (!WIFEXITED(st)) {
    fprintf(stderr, "gpu suite: the device probe died (signal %d)\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 1;
  }
  return WEXITSTATUS(st);
}

int main(int argc, char *argv[]) {
  int probe = probe_device();
  if (probe == 1 && gcl_test_required("GCL_REQUIRE_GPU")) {
    fprintf(stderr, "gpu suite FAILED: GCL_REQUIRE_GPU=1 and there is no usable device (above)\n");
    return 1;
  }
  if (probe != 0) {
    if (probe == 1) fprintf(stderr, "gpu suite skipped (exit 77); set GCL_REQUIRE_GPU=1 to make this a failure\n");
    return 77;
  }
  /* The verdict is the status (issue 55: gpu_nvshmem_1pe printed "Failing: 0" and exited 1 with
   * nothing said; a process that loaded NVSHMEM or the driver is not trusted to leave it). */
  gcl_suite_exit(gcl_suite_run(argc, argv));
}
