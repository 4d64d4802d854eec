/* The tests' one random generator: splitmix64 (Steele, Lea, Flood; any state, 0 included), one
 * step in test_rng_next, over a caller's state (sig_gen.c's dg_next, tmap_gen.c's, ptx_oracle.c's,
 * a test's own) or this file's rng_state:
 *   rng()        the next 64 bits;   rnd(n): 0 ... n-1 (n >= 1)
 *   rng_state    a fixed start: UNIT_RNG_SEED defined (nonzero) before the include, or the
 *                default below (the unit suites: the same numbers every run), or
 *   seed_rng_for(suite): from GCL_TEST_SEED or the clock, the seed printed on stderr so that a
 *                failure replays (the GPU suites).
 * tests/cli/files.sh refuses another generator in tests/ and bench/. */
#ifndef GCL_TEST_RNG_H
#define GCL_TEST_RNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef UNIT_RNG_SEED
#define UNIT_RNG_SEED 0x9e3779b97f4a7c15ull
#endif

/* One step of splitmix64 over *state. */
static inline uint64_t test_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rng_state = UNIT_RNG_SEED;

static inline uint64_t rng(void) { return test_rng_next(&rng_state); }

static inline uint32_t rnd(uint32_t n) { return (uint32_t)(rng() >> 33) % n; } /* 0 ... n-1 */

/* Seeds rng() and prints "SUITE seed N (GCL_TEST_SEED reproduces)" on stderr. */
static inline void seed_rng_for(const char *suite) {
  const char *env = getenv("GCL_TEST_SEED");
  rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
  fprintf(stderr, "%s seed %llu (GCL_TEST_SEED reproduces)\n", suite,
          (unsigned long long)rng_state);
}

#endif
