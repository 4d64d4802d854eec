/* What every benchmark needs: a monotonic clock and medians. Header-only (static inline), one
 * copy for bench/launch.c, refresh.c, descriptors.c and pack.c. */
#ifndef GCL_BENCH_UTIL_H
#define GCL_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Monotonic time in nanoseconds. */
static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v in place). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
