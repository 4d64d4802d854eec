/* bench_tmap_diff: the long differential of gclaunch's tensor-map checks against the driver
 * (issue 36; tests/common/tmap_diff.h says what is compared and counted).
 *
 * Usage: bench_tmap_diff [--count N] [--seed S] [--show K]
 *   --count  descriptions (default 100000)
 *   --seed   the generator's seed (default: from the clock; printed either way)
 *   --show   reproducers printed of each disagreement kind (default 8)
 *   --only-a 1: the exit status looks at A alone (for the fake driver, whose rules are weaker)
 *   --dump   a CSV line per compared description: the driver's arguments, both verdicts and
 *            gclaunch's message (for bisecting disagreements offline)
 *   --interleave32 N  one description in N from tmap_gen_interleave32 (rank 3-5, 32-byte
 *            interleave, a swizzle, inner box over and under 128 bytes, tiled and im2col: where
 *            the driver refused maps gclaunch accepted, issue 50); default 0, none
 * Exit: 0 when both counts are 0, 1 when either is not, 77 without a usable GPU (or driver).
 * With GCL_LIBCUDA pointing at tests/fakecuda's library it runs on the CPU against the fake's
 * (weaker) rules: there only A = 0 means anything (unit_bench_tmap_diff, with --only-a 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmap_diff.h" /* tests/common (test_common_inc) */

int main(int argc, char **argv) {
  tmap_diff_options o = {.seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock(),
                         .count = 100000, .show = 8};
  int only_a = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) o.count = strtol(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--seed")) o.seed = strtoull(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--show")) o.show = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--only-a")) only_a = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--interleave32")) o.interleave32_share = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--dump")) {
      if (!(o.dump = fopen(argv[i + 1], "w"))) {
        fprintf(stderr, "bench_tmap_diff: cannot write %s\n", argv[i + 1]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: bench_tmap_diff [--count N] [--seed S] [--show K] [--only-a 0|1] [--dump CSV] "
                      "[--interleave32 N]\n");
      return 2;
    }
  }
  printf("bench_tmap_diff: seed %llu (--seed reproduces), %ld descriptions%s\n",
         (unsigned long long)o.seed, o.count,
         o.interleave32_share ? ", some drawn with 32-byte interleave and a swizzle" : "");
  gcl_context *ctx;
  if (gcl_context_create(0, &ctx) != GCL_OK) {
    printf("bench_tmap_diff: skipped, no usable GPU: %s\n", gcl_last_error());
    return 77;
  }
  tmap_diff_result r;
  int rc = tmap_diff_run(ctx, &o, stdout, &r);
  gcl_context_destroy(ctx);
  if (rc) return 77;
  return r.a || (r.b && !only_a) ? 1 : 0;
}
