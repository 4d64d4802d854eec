/* Shared by the ThreadSanitizer programs (plain pthreads: Criterion does not run under TSan).
 * Each program points gclaunch at the TSan-built libfakecuda.so (FAKECUDA_PATH), runs its
 * threads and exits 0 when every check held; TSan itself makes a race exit 66 (TSAN_OPTIONS set
 * by tests/tsan/run.sh), 77 is a skip (with its reason printed), anything else a failure. */
#ifndef GCL_TSAN_COMMON_H
#define GCL_TSAN_COMMON_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "gclaunch/gclaunch.h"

#define CHECK(call)                                                                               \
  do {                                                                                            \
    gcl_status check_s = (call);                                                                  \
    if (check_s != GCL_OK) {                                                                      \
      fprintf(stderr, "FAIL %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,                      \
              gcl_status_name(check_s), gcl_last_error());                                        \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

#define EXPECT(cond, ...)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                            \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fputc('\n', stderr);                                                                        \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

/* The fake driver, before any gclaunch call (the loader initialises once per process). */
static inline void tsan_use_fake(void) {
  setenv("GCL_LIBCUDA", FAKECUDA_PATH, 1);
  fakecuda_reset();
  fakecuda_restore();
}

/* Runs fn(i) on n threads released together by a barrier. */
typedef struct tsan_job {
  pthread_barrier_t *start;
  void (*fn)(int);
  int i;
} tsan_job;

static inline void *tsan_trampoline(void *arg) {
  tsan_job *j = arg;
  pthread_barrier_wait(j->start);
  j->fn(j->i);
  return NULL;
}

static inline void tsan_run(int n, void (*fn)(int)) {
  pthread_barrier_t start;
  pthread_t t[64];
  tsan_job jobs[64];
  EXPECT(n <= 64, "at most 64 threads");
  pthread_barrier_init(&start, NULL, (unsigned)n);
  for (int i = 0; i < n; i++) {
    jobs[i] = (tsan_job){&start, fn, i};
    EXPECT(pthread_create(&t[i], NULL, tsan_trampoline, &jobs[i]) == 0, "pthread_create %d", i);
  }
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
}

#endif
