/* gclaunch's tensor-map checks against the driver's own encode (issue 36): random descriptions
 * (tests/common/tmap_gen.h: valid ones and ones on either side of every limit; seed printed,
 * GCL_TEST_SEED reproduces, GCL_TMAP_DIFF_COUNT sets how many, default 20000), each judged by
 * gcl_tensormap_check and by cuTensorMapEncodeTiled / Im2col with the same arguments. Both
 * disagreement counts must be 0; the tallies by aim and the first reproducers are printed.
 * bench/tmap_diff.c runs the same for longer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "gclaunch/gclaunch.h"
#include "../common/test_rng.h"
#include "../common/tmap_diff.h"

Test(tmap_diff_gpu, gclaunch_and_the_driver_agree_on_every_description) {
  seed_rng_for("test_tmap_diff");
  const char *env = getenv("GCL_TMAP_DIFF_COUNT");
  tmap_diff_options o = {.seed = rng(), .count = env ? strtol(env, NULL, 0) : 20000, .show = 8};
  gcl_context *ctx;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK, "%s", gcl_last_error());
  tmap_diff_result r;
  cr_assert_eq(tmap_diff_run(ctx, &o, stderr, &r), 0, "the driver's encode entry points");
  cr_assert_eq(r.a, 0, "%ld descriptions accepted by gclaunch were refused by the driver "
               "(reproducers above; generator seed %llu)", r.a, (unsigned long long)o.seed);
  cr_assert_eq(r.b, 0, "%ld descriptions refused by gclaunch were encoded by the driver "
               "(reproducers above; generator seed %llu)", r.b, (unsigned long long)o.seed);
  cr_assert_gt(r.both_accept, o.count / 10, "too few accepted descriptions compared");
  gcl_context_destroy(ctx);
}
