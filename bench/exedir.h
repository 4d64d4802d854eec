/* The benchmarks' default kernel folders, relative to the executable's own folder (BUILD/bench,
 * or a copy of it elsewhere: the test kit, tests/kit/), so that no path of the build machine is
 * compiled in. */
#ifndef GCL_BENCH_EXEDIR_H
#define GCL_BENCH_EXEDIR_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* realpath(<this executable's folder>/rel) in one of 4 static buffers (main's thread only);
 * rel itself when that does not exist. */
static inline const char *bench_exe_rel(const char *rel) {
  static char bufs[4][PATH_MAX];
  static unsigned next;
  char exe[PATH_MAX], joined[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return rel;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return rel;
  *slash = 0;
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", exe, rel) >= sizeof joined) return rel;
  char *out = bufs[next++ % 4];
  return realpath(joined, out) ? out : rel;
}

#endif
