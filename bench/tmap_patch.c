/* bench_tmap_patch: the long differential of gclaunch's re-points against the driver's
 * cuTensorMapReplaceAddress (issue 47; tests/common/tmap_patch_diff.h says what is compared).
 *
 * Usage: bench_tmap_patch [--count N] [--seed S] [--rounds R] [--show K]
 *   --count   descriptions (default 100000)
 *   --seed    the generator's seed (default: from the clock; printed either way)
 *   --rounds  re-points of each description (default 4)
 *   --show    differences printed (default 8)
 * GCL_TMAP_PATCH=0 compares the driver path instead of the patch.
 * Exit: 0 when every re-point equals the driver's, 1 when one does not, 77 without a usable GPU
 * (or driver). With GCL_LIBCUDA pointing at tests/fakecuda's library it runs on the CPU
 * (unit_bench_tmap_patch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmap_patch_diff.h" /* tests/common (test_common_inc) */

int main(int argc, char **argv) {
  tmap_patch_diff_options o = {.seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock(),
                               .count = 100000, .show = 8};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--count")) o.count = strtol(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--seed")) o.seed = strtoull(argv[i + 1], NULL, 0);
    else if (!strcmp(argv[i], "--rounds")) o.rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--show")) o.show = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: bench_tmap_patch [--count N] [--seed S] [--rounds R] [--show K]\n");
      return 2;
    }
  }
  printf("bench_tmap_patch: seed %llu (--seed reproduces), %ld descriptions\n",
         (unsigned long long)o.seed, o.count);
  gcl_context *ctx;
  if (gcl_context_create(0, &ctx) != GCL_OK) {
    printf("bench_tmap_patch: skipped, no usable GPU: %s\n", gcl_last_error());
    return 77;
  }
  tmap_patch_diff_result r;
  int rc = tmap_patch_diff_run(ctx, &o, stdout, &r);
  gcl_context_destroy(ctx);
  if (rc) return 77;
  return r.differ ? 1 : 0;
}
