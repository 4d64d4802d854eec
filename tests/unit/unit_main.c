/* main() of every unit suite: Criterion's, with an all-skipped run exiting 77 (suite.h). */
#define GCL_TEST_SUITE_MAIN
#include "../common/suite.h"

int main(int argc, char *argv[]) { return gcl_suite_run(argc, argv); }
