/* The differential of gclaunch's re-points against the driver's cuTensorMapReplaceAddress
 * (issue 47), shared by tests/gpu/test_tmap_patch.c (suite gpu_tmap_patch) and
 * bench/tmap_patch.c (bench_tmap_patch, longer): fresh random valid descriptions from
 * tmap_gen.h (every rank, type, interleave, swizzle, L2 promotion, fill, tiled and im2col), set
 * into args through gclaunch, then re-pointed again and again to fresh random addresses (random
 * bits below 2^57, and the ends: the alignment and 2^57 minus it) by gclaunch -- by
 * gcl_args_repoint_tensormaps and by gcl_args_set_tensormaps with GCL_TENSORMAP_REFRESH, in
 * batches, one round in four mixed with an encode (the plan's path) -- while a copy of each map is re-pointed to the same address by
 * cuTensorMapReplaceAddress, called directly (the library named by GCL_LIBCUDA, else
 * libcuda.so.1, through its cuGetProcAddress_v2). Every re-pointed map must equal the driver's
 * copy byte for byte; the first differences are printed with their description. */
#ifndef GCL_TMAP_PATCH_DIFF_H
#define GCL_TMAP_PATCH_DIFF_H

#include <stdio.h>

#include "tmap_gen.h"

typedef struct tmap_patch_diff_options {
  uint64_t seed; /* printed by the caller; reproduces the run */
  long count;    /* descriptions */
  int rounds;    /* re-points of each description (0: 4) */
  int show;      /* differences printed */
} tmap_patch_diff_options;

typedef struct tmap_patch_diff_result {
  long descriptions, repoints, differ;
  long by_interleave[3]; /* re-points compared per interleave mode */
  long im2col;           /* of them, of im2col maps */
  gcl_tensormap_path path;
} tmap_patch_diff_result;

/* Runs the differential on ctx's device, printing the path, the tallies and the differences to
 * out. Returns 0, or -1 when the driver's entry point cannot be had or gclaunch refused a call
 * (the reason printed). */
int tmap_patch_diff_run(gcl_context *ctx, const tmap_patch_diff_options *o, FILE *out,
                        tmap_patch_diff_result *r);

#endif
