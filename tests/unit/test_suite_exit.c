/* The suite's status is Criterion's verdict (issue 55: gpu_nvshmem_1pe printed "Failing: 0" and
 * exited 1 with nothing said). Every process of this suite registers an exit handler that ends
 * it with status 3, as a library's handler could (NVSHMEM's, a driver's): the runner must still
 * exit 0 because its one test passes (tests/common/suite.h, gcl_suite_exit), and the worker's
 * status after a passed test must not turn the pass into a failure. Registered before main (the
 * runner) and inherited by every worker Criterion forks. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>

static void late_exit(void) { _exit(3); }

__attribute__((constructor)) static void register_late_exit(void) { atexit(late_exit); }

Test(suite_exit, a_passing_test_makes_a_passing_suite) { cr_assert(1); }
