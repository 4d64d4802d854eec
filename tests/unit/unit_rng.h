/* The unit suites' small random numbers: xorshift64* over one state per test file. A file picks
 * its fixed start by defining UNIT_RNG_SEED (nonzero) before the include, or assigns rng_state
 * (never 0) from a printed seed. */
#ifndef GCL_TEST_UNIT_RNG_H
#define GCL_TEST_UNIT_RNG_H

#include <stdint.h>

#ifndef UNIT_RNG_SEED
#define UNIT_RNG_SEED 0x9e3779b97f4a7c15ull
#endif

static uint64_t rng_state = UNIT_RNG_SEED;

static inline uint32_t rnd(uint32_t n) { /* 0 ... n-1 */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

#endif
