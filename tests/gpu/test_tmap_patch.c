/* gclaunch's re-points against the driver's cuTensorMapReplaceAddress, byte for byte (issue
 * 47): fresh random descriptions (tests/common/tmap_gen.h; seed printed, GCL_TEST_SEED
 * reproduces, GCL_TMAP_PATCH_COUNT sets how many, default 4000) re-pointed four times each to
 * fresh random addresses below 2^57 by gcl_args_repoint_tensormaps and by refreshes, their
 * copies by the driver (tests/common/tmap_patch_diff.h). On a device whose re-points gclaunch
 * proved, these are its own patches; with GCL_TMAP_PATCH=0 the driver's calls (the second
 * test runs that way in a child process). bench/tmap_patch.c runs the same for longer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"
#include "../common/tmap_patch_diff.h"

static void run(const char *suite, unsigned want_patched) {
  seed_rng_for(suite);
  const char *env = getenv("GCL_TMAP_PATCH_COUNT");
  tmap_patch_diff_options o = {.seed = rng(), .count = env ? strtol(env, NULL, 0) : 4000,
                               .show = 8};
  gcl_context *ctx;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  tmap_patch_diff_result r;
  cr_assert_eq(tmap_patch_diff_run(ctx, &o, stderr, &r), 0, "the run (reason above)");
  cr_assert_eq(r.differ, 0, "%ld of %ld re-points differ from cuTensorMapReplaceAddress "
               "(above; generator seed %llu)", r.differ, r.repoints, (unsigned long long)o.seed);
  cr_assert_geq(r.repoints, 3 * o.count, "too few re-points compared"); /* 31 of 32 per 8 */
  for (int il = 0; il < 3; il++)
    cr_assert_gt(r.by_interleave[il], 0, "no re-point of interleave %d compared", il);
  cr_assert_gt(r.im2col, 0, "no im2col re-point compared");
  if (want_patched != ~0u)
    cr_assert_eq(r.path.patched, want_patched, "patched 0x%x: %s", r.path.patched,
                 r.path.reason);
  gcl_context_destroy(ctx);
}

/* The path the device chose (on driver 580 and an H100, at least interleave 0 is patched: the
 * check must prove what the measurement found). */
Test(tmap_patch_gpu, repoints_equal_the_drivers_replace) {
  gcl_context *ctx;
  gcl_tensormap_path p;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_tensormap_repoint_path(ctx, &p), GCL_OK, "%s", gcl_last_error());
  fprintf(stderr, "re-point path on device 0: patched 0x%x (%d checks, %d mismatches): %s\n",
          p.patched, p.checks, p.mismatches, p.reason);
  cr_assert(p.patched & 1u, "the check did not prove interleave 0: %s", p.reason);
  gcl_context_destroy(ctx);
  run("test_tmap_patch", ~0u);
}

/* GCL_TMAP_PATCH=0: every re-point is the driver's, and the path says so. */
Test(tmap_patch_gpu, forced_driver_path_equals_too) {
  setenv("GCL_TMAP_PATCH", "0", 1);
  run("test_tmap_patch (GCL_TMAP_PATCH=0)", 0u);
}
