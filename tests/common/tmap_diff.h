/* The differential of gclaunch's tensor-map checks against the driver's own encode (issue 36),
 * shared by tests/gpu/test_tmap_diff.c and bench/tmap_diff.c: random descriptions from
 * tmap_gen.h (valid ones and ones pushed to every limit), each judged by gcl_tensormap_check
 * (the public API) and by cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col called directly with
 * the same arguments (the library named by GCL_LIBCUDA, else libcuda.so.1, through its
 * cuGetProcAddress_v2). Two disagreement counts, by aim, with the first reproducers of each:
 *   A  accepted by gclaunch, refused by the driver (a rule gclaunch lacks)
 *   B  refused by gclaunch, encoded by the driver (a rule gclaunch has too many)
 * Descriptions without driver arguments (no element type, a non-CUDA device, ...) count apart. */
#ifndef GCL_TMAP_DIFF_H
#define GCL_TMAP_DIFF_H

#include <stdio.h>

#include "tmap_gen.h"

typedef struct tmap_diff_options {
  uint64_t seed;   /* printed by the caller; reproduces the run */
  long count;      /* descriptions */
  int show;        /* reproducers printed per kind (A, B) */
  int valid_share; /* one in valid_share descriptions is a valid one (0: 4) */
  int interleave32_share; /* one in that many is tmap_gen_interleave32's (0: none) */
  FILE *dump;      /* if set: one CSV line per compared description (the driver's arguments,
                      both verdicts, gclaunch's message) for offline bisection */
} tmap_diff_options;

typedef struct tmap_diff_result {
  long cases, no_arguments, both_accept, both_refuse, a, b;
} tmap_diff_result;

/* Runs the differential with a current context of ctx's device (made current here), printing
 * the tallies and reproducers to out. Returns 0, or -1 when the driver's entry points cannot be
 * had (the reason printed). */
int tmap_diff_run(gcl_context *ctx, const tmap_diff_options *o, FILE *out, tmap_diff_result *r);

#endif
