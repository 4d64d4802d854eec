/* main() of every unit suite: Criterion's, with an all-skipped run exiting 77 (suite.h); the
 * verdict is the status, whatever runs at exit (gcl_suite_exit). */
#define GCL_TEST_SUITE_MAIN
#include "../common/suite.h"

int main(int argc, char *argv[]) { gcl_suite_exit(gcl_suite_run(argc, argv)); }
