/* The benchmarks' default kernel folders, relative to the executable's own folder (BUILD/bench,
 * or a copy of it elsewhere: the test kit, tests/kit/), so that no path of the build machine is
 * compiled in. The lookup is the tests' own (tests/common/testpaths.h, on the include path of
 * every bench program through meson's test_common_inc). */
#ifndef GCL_BENCH_EXEDIR_H
#define GCL_BENCH_EXEDIR_H

#include "testpaths.h"

/* realpath(<this executable's folder>/rel) (a ring of buffers: a few results at once); rel itself
 * when that does not exist. */
static inline const char *bench_exe_rel(const char *rel) {
  const char *p = gcl_test_from_exe_(rel);
  return p ? p : rel;
}

#endif
