/* What a suite binary's exit status means, for meson and ctest (SKIP_RETURN_CODE 77):
 *   0   at least one test ran and passed, none failed;
 *   77  every test that ran was skipped (a skip is never a pass);
 *   1   a test failed or crashed.
 * GCL_REQUIRE_NVRTC=1 turns "NVRTC missing" skips into failures (GPU runners, which have the
 * toolkit); each skip prints its reason on stderr so that ctest -V / --output-on-failure shows it.
 * Included once per binary: by unit_main.c for the unit suites, by gpu_main.c for the GPU ones. */
#ifndef GCL_TEST_SUITE_H
#define GCL_TEST_SUITE_H

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* True when the environment variable var is "1": what a skip of that kind becomes a failure. */
static inline bool gcl_test_required(const char *var) {
  const char *v = getenv(var);
  return v && strcmp(v, "1") == 0;
}

/* Skips the calling test, saying why (printf format), unless var=1: then it fails, saying why. */
#define GCL_SKIP_UNLESS_REQUIRED(var, ...)                                                        \
  do {                                                                                            \
    char gcl_why_[4096];                                                                          \
    snprintf(gcl_why_, sizeof gcl_why_, __VA_ARGS__);                                             \
    if (gcl_test_required(var)) cr_assert_fail("%s=1, so this is a failure: %s", var, gcl_why_); \
    fprintf(stderr, "SKIP: %s (set %s=1 to make this a failure)\n", gcl_why_, var);               \
    cr_skip_test("%s", gcl_why_);                                                                 \
  } while (0)
/* NVRTC (or the toolkit files next to it) missing. */
#define GCL_SKIP_NO_NVRTC(...) GCL_SKIP_UNLESS_REQUIRED("GCL_REQUIRE_NVRTC", __VA_ARGS__)
/* Any other skip: prints the reason, then skips. */
#define GCL_SKIP(...)                                                                             \
  do {                                                                                            \
    char gcl_why_[4096];                                                                          \
    snprintf(gcl_why_, sizeof gcl_why_, __VA_ARGS__);                                             \
    fprintf(stderr, "SKIP: %s\n", gcl_why_);                                                      \
    cr_skip_test("%s", gcl_why_);                                                                 \
  } while (0)

#ifdef GCL_TEST_SUITE_MAIN
static struct criterion_global_stats gcl_suite_stats;
static bool gcl_suite_have_stats;

/* Runs in the runner process after every test: the counts main turns into the exit status. */
ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
  gcl_suite_stats = *stats;
  gcl_suite_have_stats = true;
}

/* Criterion's main, with "every test skipped" reported as 77 instead of success. A nonzero
 * status says why on stderr (the counts it comes from). */
static int gcl_suite_run(int argc, char *argv[]) {
  struct criterion_test_set *tests = criterion_initialize();
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  const struct criterion_global_stats *st = &gcl_suite_stats;
  if (result == 0 && gcl_suite_have_stats && st->tests_passed == 0 && st->tests_skipped > 0 &&
      st->tests_failed == 0 && st->tests_crashed == 0) {
    fprintf(stderr, "suite: all %zu tests skipped (see the SKIP lines): exit 77, not a pass\n",
            st->tests_skipped);
    return 77;
  }
  if (result != 0 && gcl_suite_have_stats)
    fprintf(stderr, "suite: exit %d: %zu of %zu tests failed, %zu crashed, %zu errors, %zu "
            "warnings (Criterion 2.4 fails a run that logged a warning: cr_log_warn)\n", result,
            st->tests_failed, st->nb_tests, st->tests_crashed, st->errors, st->warnings);
  return result;
}

/* Ends the runner process with status rc at once: nothing that runs at exit (a library's atexit
 * handler or destructor) may change the verdict or print after it. The runner runs no test (each
 * runs in its own worker process, which exits as Criterion decides), so nothing is lost. */
__attribute__((unused)) static _Noreturn void gcl_suite_exit(int rc) {
  fflush(NULL);
  _exit(rc);
}
#endif
#endif
