/* The GPU suites' random data: xorshift64, seeded from GCL_TEST_SEED or the clock, the seed
 * printed so that a failure can be replayed. */
#ifndef GCL_TEST_RNG_H
#define GCL_TEST_RNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state;

static inline uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Seeds rng() and prints "SUITE seed N (GCL_TEST_SEED reproduces)" on stderr. */
static inline void seed_rng_for(const char *suite) {
  const char *env = getenv("GCL_TEST_SEED");
  rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
  fprintf(stderr, "%s seed %llu (GCL_TEST_SEED reproduces)\n", suite,
          (unsigned long long)rng_state);
}

#endif
