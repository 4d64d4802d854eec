/* main() for GPU suites: exits 77 (skipped) when there is no usable device, else runs Criterion.
 * The probe runs in a child process so that this process never initialises the driver before
 * Criterion forks its workers. A suite that needs several devices defines GCL_GPU_MIN_DEVICES
 * and includes this file (tests/gpu/test_multigpu.c): with fewer it is skipped, saying why. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"

#ifndef GCL_GPU_MIN_DEVICES
#define GCL_GPU_MIN_DEVICES 1
#endif

static int probe_device(void) {
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) {
    int n = 0;
    gcl_status s = gcl_device_count(&n);
    if (s != GCL_OK || n == 0) {
      fprintf(stderr, "gpu suite skipped: %s\n", s != GCL_OK ? gcl_last_error() : "no device");
      _exit(1);
    }
    if (n < GCL_GPU_MIN_DEVICES) {
      fprintf(stderr, "gpu suite skipped: %d device(s), this suite needs %d\n", n, GCL_GPU_MIN_DEVICES);
      _exit(1);
    }
    _exit(0);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0) return 0;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char *argv[]) {
  if (!probe_device()) return 77;
  struct criterion_test_set *tests = criterion_initialize();
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return result;
}
