/* The launch-safety checks on a device (kernels/pdl.cu; public API only):
 * - a PDL launch of a kernel that never executes griddepcontrol.wait is refused before the
 *   driver; the waiting kernel, launched with PDL after a producer on one stream, reads every
 *   value the producer wrote;
 * - a kernel of a destroyed module is refused by name, also when the driver gave its function
 *   handle to the next module's kernel (logged when it did);
 * - a cooperative grid one block larger than can be resident is refused before the driver with
 *   the numbers, the largest one launches; the same for grids of clusters (gcl_launch_check). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gclaunch/gclaunch.h"

#define CHECK(call) cr_assert_eq((call), GCL_OK, "%s: %s", #call, gcl_last_error())
#define HAS(text) cr_assert(strstr(gcl_last_error(), (text)), "expected '%s' in: %s", (text), gcl_last_error())

static gcl_context *ctx;

static void setup(void) { CHECK(gcl_context_create(0, &ctx)); }
static void teardown(void) { gcl_context_destroy(ctx); }

TestSuite(launchsafe, .init = setup, .fini = teardown);

static gcl_module *load_pdl(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/pdl.fatbin", GCL_KERNEL_DIR);
  gcl_module *m = NULL;
  CHECK(gcl_module_load_file(ctx, path, &m));
  return m;
}

static gcl_args *copy_args(gcl_kernel *k, uint64_t src, uint64_t dst, int n) {
  gcl_args *a = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &a));
  CHECK(gcl_args_set_ptr(a, 0, src));
  CHECK(gcl_args_set_ptr(a, 1, dst));
  CHECK(gcl_args_set(a, 2, &n, sizeof n));
  return a;
}

Test(launchsafe, pdl_without_wait_is_refused_and_with_wait_reads_the_producers_output) {
  if (gcl_context_sm(ctx) < 90) cr_skip_test("PDL needs sm_90 (device is sm_%d)", gcl_context_sm(ctx));
  enum { N = 1 << 22 };
  gcl_module *m = load_pdl();
  gcl_kernel *producer, *waits, *nowait;
  CHECK(gcl_module_find_kernel(m, "pdl_producer", NULL, &producer));
  CHECK(gcl_module_find_kernel(m, "pdl_waits", NULL, &waits));
  CHECK(gcl_module_find_kernel(m, "pdl_nowait", NULL, &nowait));
  cr_assert_eq(gcl_kernel_waits(waits), 1);
  cr_assert_eq(gcl_kernel_waits(nowait), 0);
  uint64_t src, dst;
  CHECK(gcl_mem_alloc(ctx, N * sizeof(int), &src));
  CHECK(gcl_mem_alloc(ctx, N * sizeof(int), &dst));
  CHECK(gcl_mem_fill_u8(ctx, src, 0, N * sizeof(int)));
  CHECK(gcl_mem_fill_u8(ctx, dst, 0, N * sizeof(int)));
  /* The fills run on the legacy stream, which a non-blocking stream does not wait for: without
   * this the zeros could land on dst after the copy (seen once on the H200: every value 0). */
  CHECK(gcl_context_synchronize(ctx));
  gcl_stream *s;
  CHECK(gcl_stream_create(ctx, 0, &s));
  gcl_args *pa = NULL;
  int n = N;
  CHECK(gcl_args_create(gcl_kernel_layout(producer), &pa));
  CHECK(gcl_args_set_ptr(pa, 0, src));
  CHECK(gcl_args_set(pa, 1, &n, sizeof n));
  gcl_args *wa = copy_args(waits, src, dst, N), *na = copy_args(nowait, src, dst, N);
  gcl_launch_config prod = {.grid = {N / 256}, .block = {256}, .stream = gcl_stream_handle(s)};
  gcl_launch_config pdl = prod;
  pdl.programmatic_dependent_launch = true;
  CHECK(gcl_launch(producer, &prod, pa));
  cr_assert_eq(gcl_launch(nowait, &pdl, na), GCL_ERROR_INVALID_CONFIG);
  HAS("kernel 'pdl_nowait' never executes griddepcontrol.wait");
  CHECK(gcl_launch(waits, &pdl, wa));
  CHECK(gcl_stream_synchronize(s));
  int *out = malloc(N * sizeof *out);
  CHECK(gcl_mem_download(ctx, out, dst, N * sizeof *out));
  size_t bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != i + 1;
  cr_assert_eq(bad, 0, "%zu of %d values not the producer's", bad, N);
  free(out);
  gcl_args_destroy(pa);
  gcl_args_destroy(wa);
  gcl_args_destroy(na);
  gcl_stream_destroy(s);
  CHECK(gcl_mem_free(ctx, src));
  CHECK(gcl_mem_free(ctx, dst));
  gcl_module_destroy(m);
}

Test(launchsafe, a_kernel_of_a_destroyed_module_is_refused_by_name) {
  uint64_t buf;
  CHECK(gcl_mem_alloc(ctx, 1024 * sizeof(int), &buf));
  gcl_module *a = load_pdl();
  gcl_kernel *old;
  CHECK(gcl_module_find_kernel(a, "pdl_nowait", NULL, &old));
  void *old_fn = gcl_kernel_cu_function(old);
  gcl_args *old_args = copy_args(old, buf, buf, 1024);
  gcl_module_destroy(a);
  gcl_module *b = load_pdl();
  gcl_kernel *fresh;
  CHECK(gcl_module_find_kernel(b, "pdl_producer", NULL, &fresh));
  cr_log_info("the driver %s the unloaded kernel's CUfunction",
              gcl_kernel_cu_function(fresh) == old_fn ? "reused" : "did not reuse");
  gcl_launch_config cfg = {.grid = {4}, .block = {256}};
  cr_assert_eq(gcl_launch(old, &cfg, old_args), GCL_ERROR_INVALID_ARGUMENT);
  HAS("kernel 'pdl_nowait': its module was destroyed");
  cr_assert_eq(gcl_launch(fresh, &cfg, old_args), GCL_ERROR_INVALID_ARGUMENT);
  HAS("args: they were made for kernel 'pdl_nowait', whose module was destroyed");
  CHECK(gcl_context_synchronize(ctx));
  gcl_args_destroy(old_args);
  gcl_module_destroy(b);
  CHECK(gcl_mem_free(ctx, buf));
}

Test(launchsafe, a_cooperative_grid_too_large_is_refused_before_the_driver) {
  gcl_module *m = load_pdl();
  gcl_kernel *k;
  CHECK(gcl_module_find_kernel(m, "pdl_producer", NULL, &k));
  unsigned most = 0;
  CHECK(gcl_kernel_max_cooperative_grid(k, 256, 0, &most));
  int n = (int)(most + 1) * 256;
  uint64_t buf;
  CHECK(gcl_mem_alloc(ctx, (size_t)n * sizeof(int), &buf));
  gcl_args *a = NULL;
  CHECK(gcl_args_create(gcl_kernel_layout(k), &a));
  CHECK(gcl_args_set_ptr(a, 0, buf));
  CHECK(gcl_args_set(a, 1, &n, sizeof n));
  gcl_launch_config cfg = {.grid = {most + 1}, .block = {256}, .cooperative = true};
  cr_assert_eq(gcl_launch(k, &cfg, a), GCL_ERROR_INVALID_CONFIG);
  char want[128];
  snprintf(want, sizeof want, "= %u blocks, at most %u can be resident at once", most + 1, most);
  HAS(want);
  cfg.grid[0] = most;
  CHECK(gcl_launch_check(k, &cfg, a));
  CHECK(gcl_launch(k, &cfg, a));
  CHECK(gcl_context_synchronize(ctx));
  if (gcl_context_sm(ctx) >= 90) { /* clusters of 2 */
    gcl_launch_config cl = {.grid = {2}, .block = {256}, .cluster = {2}, .cooperative = true};
    int clusters = 0;
    CHECK(gcl_kernel_active_clusters(k, &cl, &clusters));
    cl.grid[0] = 2 * (unsigned)clusters + 2;
    cr_assert_eq(gcl_launch_check(k, &cl, a), GCL_ERROR_INVALID_CONFIG);
    HAS("clusters of 2x1x1 blocks, at most");
    cl.grid[0] = 2 * (unsigned)clusters;
    CHECK(gcl_launch_check(k, &cl, a));
  }
  gcl_args_destroy(a);
  CHECK(gcl_mem_free(ctx, buf));
  gcl_module_destroy(m);
}
