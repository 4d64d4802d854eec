/* The launch-safety checks (include/gclaunch/gclaunch.h "Launch-safety checks") against
 * libfakecuda.so and images nvcc built at build time (kernels/pdl.cu):
 * - PDL: whether each kernel executes griddepcontrol.wait, read from SASS of every architecture
 *   gclaunch knows the encoding of, from nvcc's PTX and from PTX text; a PDL launch of a kernel
 *   that never waits refused before the driver, one that waits (or unknown) launched.
 * - Stale kernels: the fake driver hands an unloaded kernel's handles to the next lookup (as the
 *   real one does); the old kernel and args made from it are refused by name, and the new
 *   module's kernel is never launched through them.
 * - Grids that cannot all be resident: cooperative and cluster launches against the fake's
 *   occupancy formula (fakecuda.h: 132 SMs on device 0). */
#include <stdio.h>

#include "fakecuda_test.h"

TestSuite(launchsafe, .init = fake_use);

/* (const int *src, int *dst, int n) as the device places it. */
static void declare_copy(const char *name) {
  const size_t off[] = {0, 8, 16}, size[] = {8, 8, 4};
  cr_assert_eq(fakecuda_set_params(name, 3, off, size), 0);
}

static unsigned char *read_kernel_file(const char *name, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", GCL_KERNEL_DIR, name);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot read %s (built by kernels/meson.build)", path);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc((size_t)len + 1);
  cr_assert_eq(fread(data, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  data[len] = 0;
  *n = (size_t)len;
  return data;
}

static int waits_of(const gcl_image *img, const char *kernel) {
  size_t k;
  cr_assert_eq(gcl_image_find_kernel(img, kernel, &k), GCL_OK, "%s", gcl_last_error());
  return gcl_image_kernel_waits(img, k);
}

static gcl_image *parse_file(const char *name, int sm) {
  size_t n;
  unsigned char *data = read_kernel_file(name, &n);
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(data, n, sm, &img), GCL_OK, "%s: %s", name, gcl_last_error());
  free(data);
  return img;
}

/* pdl_producer executes griddepcontrol.launch_dependents but no wait: the encodings differ in
 * one bit, so it is the negative control that matters. */
static void expect_pdl_kernels(const gcl_image *img, const char *what, int waiting, int other) {
  cr_expect_eq(waits_of(img, "pdl_waits"), waiting, "%s: pdl_waits", what);
  cr_expect_eq(waits_of(img, "pdl_waits_api"), waiting, "%s: pdl_waits_api", what);
  cr_expect_eq(waits_of(img, "pdl_nowait"), other, "%s: pdl_nowait", what);
  cr_expect_eq(waits_of(img, "pdl_producer"), other, "%s: pdl_producer", what);
}

Test(launchsafe, waits_is_read_from_the_sass_of_every_known_architecture) {
  const int archs[] = {90, 100, 103, 110, 120, 121};
  for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
    char name[64];
    snprintf(name, sizeof name, "pdl.check.sm_%d.cubin", archs[i]);
    gcl_image *img = parse_file(name, 0);
    expect_pdl_kernels(img, name, 1, 0);
    gcl_image_destroy(img);
  }
  /* Before sm_90 there is no griddepcontrol: nothing waits (the #if compiled the wait out). */
  gcl_image *img = parse_file("pdl.check.sm_80.cubin", 0);
  expect_pdl_kernels(img, "sm_80", 0, 0);
  gcl_image_destroy(img);
}

Test(launchsafe, waits_is_read_from_nvccs_ptx_and_fatbin) {
  gcl_image *img = parse_file("pdl.compute_90.ptx", 0);
  expect_pdl_kernels(img, "compute_90 PTX", 1, 0);
  gcl_image_destroy(img);
  img = parse_file("pdl.fatbin", 90);
  expect_pdl_kernels(img, "fatbin", 1, 0);
  gcl_image_destroy(img);
}

Test(launchsafe, waits_in_ptx_text_body_comment_and_device_function) {
  static const char body[] =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      "// griddepcontrol.wait in a comment is no wait\n"
      ".visible .entry a(.param .u64 p) { /* griddepcontrol.wait */ ret; }\n"
      ".visible .entry b(.param .u64 p) { { griddepcontrol.wait; } ret; }\n"
      ".visible .entry c(.param .u64 p) { @%p1 griddepcontrol.wait; ret; }\n";
  gcl_image *img = NULL;
  cr_assert_eq(gcl_image_parse(body, sizeof body - 1, 0, &img), GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(waits_of(img, "a"), 0);
  cr_expect_eq(waits_of(img, "b"), 1);
  cr_expect_eq(waits_of(img, "c"), 1);
  cr_expect_eq(gcl_image_kernel_waits(img, 3), -1, "index out of range: unknown");
  cr_expect_eq(gcl_image_kernel_waits(NULL, 0), -1);
  gcl_image_destroy(img);
  /* A wait in a .func the entry may call: unknown, not "never". */
  static const char func[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                             ".func w() { griddepcontrol.wait; ret; }\n"
                             ".visible .entry a(.param .u64 p) { call w; ret; }\n";
  cr_assert_eq(gcl_image_parse(func, sizeof func - 1, 0, &img), GCL_OK, "%s", gcl_last_error());
  cr_expect_eq(waits_of(img, "a"), -1);
  gcl_image_destroy(img);
}

typedef struct pdl_world {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
} pdl_world;

static void open_pdl(pdl_world *w, const void *image, size_t size, const char *kernel) {
  declare_copy(kernel);
  cr_assert_eq(gcl_context_create(0, &w->ctx), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_load_data(w->ctx, image, size, &w->mod), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_module_find_kernel(w->mod, kernel, NULL, &w->k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(w->k), &w->args), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(w->args, 0, 0x1000), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(w->args, 1, 0x2000), GCL_OK);
  cr_assert_eq(gcl_args_set_i32(w->args, 2, 64), GCL_OK, "%s", gcl_last_error());
}

static void close_pdl(pdl_world *w) {
  gcl_args_destroy(w->args);
  gcl_module_destroy(w->mod);
  gcl_context_destroy(w->ctx);
  assert_nothing_live();
}

Test(launchsafe, pdl_launch_of_a_kernel_that_never_waits_is_refused_by_name) {
  size_t n;
  unsigned char *cubin = read_kernel_file("pdl.check.sm_90.cubin", &n);
  pdl_world w;
  open_pdl(&w, cubin, n, "pdl_nowait");
  cr_expect_eq(gcl_kernel_waits(w.k), 0);
  gcl_launch_config cfg = {.grid = {1}, .block = {64}, .programmatic_dependent_launch = true};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("config.programmatic_dependent_launch: kernel 'pdl_nowait' never executes "
                 "griddepcontrol.wait");
  cr_assert_eq(fakecuda_launch_count(), 0, "refused before the driver");
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("kernel 'pdl_nowait'");
  /* Without PDL it is an ordinary launch; with the opt-out flag, a PDL launch. */
  cfg.programmatic_dependent_launch = false;
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cfg.programmatic_dependent_launch = true;
  cfg.flags = GCL_LAUNCH_PDL_UNCHECKED;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 2);
  close_pdl(&w);
  free(cubin);
}

Test(launchsafe, pdl_launch_of_a_kernel_that_waits_goes_ahead) {
  const char *kernels[] = {"pdl_waits", "pdl_waits_api"};
  size_t n;
  unsigned char *cubin = read_kernel_file("pdl.check.sm_90.cubin", &n);
  for (size_t i = 0; i < 2; i++) {
    pdl_world w;
    open_pdl(&w, cubin, n, kernels[i]);
    cr_expect_eq(gcl_kernel_waits(w.k), 1, "%s", kernels[i]);
    gcl_launch_config cfg = {.grid = {1}, .block = {64}, .programmatic_dependent_launch = true};
    cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
    cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
    close_pdl(&w);
  }
  cr_assert_eq(fakecuda_launch_count(), 2);
  free(cubin);
}

Test(launchsafe, pdl_launch_where_the_image_does_not_tell_goes_ahead) {
  static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                            ".func w() { griddepcontrol.wait; ret; }\n"
                            ".visible .entry copy(.param .u64 a, .param .u64 b, .param .u32 n)\n"
                            "{ call w; ret; }\n";
  pdl_world w;
  open_pdl(&w, ptx, sizeof ptx, "copy");
  cr_expect_eq(gcl_kernel_waits(w.k), -1);
  gcl_launch_config cfg = {.grid = {1}, .block = {64}, .programmatic_dependent_launch = true};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 1);
  close_pdl(&w);
}

/* --- stale kernels ------------------------------------------------------------------------- */

Test(launchsafe, a_kernel_of_a_destroyed_module_is_refused_and_never_reaches_the_new_one) {
  fakecuda_reuse_handles(1);
  gcl_context *ctx;
  gcl_module *a, *b;
  gcl_kernel *old, *fresh;
  cr_assert_eq(gcl_context_create(0, &ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &a), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(a, "k", FAKE_K_SIGNATURE, &old), GCL_OK, "%s", gcl_last_error());
  void *old_fn = gcl_kernel_cu_function(old);
  gcl_args *old_args;
  unsigned char map[128] = {0};
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(old), &old_args), GCL_OK);
  cr_assert_eq(gcl_args_set(old_args, 0, map, sizeof map), GCL_OK);
  cr_assert_eq(gcl_args_set(old_args, 1, "c", 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(old_args, 2, 0x1000), GCL_OK);
  gcl_module_destroy(a);
  /* The next module's kernel gets the unloaded one's handle back (the fake, like the driver). */
  cr_assert_eq(gcl_module_load_data(ctx, fake_ptx, sizeof fake_ptx, &b), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(b, "k", FAKE_K_SIGNATURE, &fresh), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_kernel_cu_function(fresh), old_fn, "the fake did not reuse the handle");

  gcl_launch_config cfg = {.grid = {1}, .block = {32}};
  cr_assert_eq(gcl_launch(old, &cfg, old_args), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_launch: kernel 'k': its module was destroyed");
  cr_assert_eq(gcl_launch_check(old, &cfg, old_args), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("gcl_launch_check: kernel 'k': its module was destroyed");
  int v = 0;
  cr_assert_eq(gcl_kernel_attribute(old, GCL_KERNEL_REGISTERS, &v), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("kernel 'k': its module was destroyed");
  cr_assert_eq(gcl_kernel_set_attribute(old, GCL_KERNEL_MAX_DYNAMIC_SHARED_BYTES, 0), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_kernel_occupancy(old, 32, 0, &v), GCL_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(gcl_kernel_set_launch_mode(old, GCL_LAUNCH_EXTRA_BUFFER), GCL_ERROR_INVALID_ARGUMENT);
  cr_expect_null(gcl_kernel_cu_function(old));
  cr_expect_null(gcl_kernel_layout(old));
  cr_expect_null(gcl_kernel_context(old));
  cr_expect_eq(gcl_kernel_waits(old), -1);
  /* The old kernel's args on the new kernel: the same offsets and sizes, still refused. */
  cr_assert_eq(gcl_launch(fresh, &cfg, old_args), GCL_ERROR_INVALID_ARGUMENT);
  assert_msg_has("args: they were made for kernel 'k', whose module was destroyed");
  cr_assert_eq(fakecuda_launch_count(), 0, "nothing reached the driver");
  /* The new kernel with its own args launches. */
  gcl_args *args;
  cr_assert_eq(gcl_args_clone(old_args, &args), GCL_OK); /* a clone is as stale as its original */
  cr_assert_eq(gcl_launch(fresh, &cfg, args), GCL_ERROR_INVALID_ARGUMENT);
  gcl_args_destroy(args);
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(fresh), &args), GCL_OK);
  cr_assert_eq(gcl_args_set(args, 0, map, sizeof map), GCL_OK);
  cr_assert_eq(gcl_args_set(args, 1, "c", 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(args, 2, 0x1000), GCL_OK);
  cr_assert_eq(gcl_launch(fresh, &cfg, args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 1);
  gcl_args_destroy(args);
  gcl_args_destroy(old_args); /* after its module: the layout lived on for it (ASan checks) */
  gcl_module_destroy(b);
  gcl_context_destroy(ctx);
  fakecuda_reuse_handles(0);
  assert_nothing_live();
}

/* --- grids that cannot all be resident ----------------------------------------------------- */

typedef struct world {
  gcl_context *ctx;
  gcl_module *mod;
  gcl_kernel *k;
  gcl_args *args;
} world;

static void open_world(world *w) {
  unsigned char map[128] = {0};
  cr_assert_eq(gcl_context_create(0, &w->ctx), GCL_OK);
  cr_assert_eq(gcl_module_load_data(w->ctx, fake_ptx, sizeof fake_ptx, &w->mod), GCL_OK);
  cr_assert_eq(gcl_module_find_kernel(w->mod, "k", FAKE_K_SIGNATURE, &w->k), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_args_create(gcl_kernel_layout(w->k), &w->args), GCL_OK);
  cr_assert_eq(gcl_args_set(w->args, 0, map, 128), GCL_OK);
  cr_assert_eq(gcl_args_set(w->args, 1, "c", 1), GCL_OK);
  cr_assert_eq(gcl_args_set_ptr(w->args, 2, 0), GCL_OK);
}

static void close_world(world *w) {
  gcl_args_destroy(w->args);
  gcl_module_destroy(w->mod);
  gcl_context_destroy(w->ctx);
  assert_nothing_live();
}

/* The fake's 1024-thread blocks: 2 per SM (2048 threads), 132 SMs: 264 resident blocks; its
 * own numbers, asked from it, so the test follows the formula. */
static unsigned most_resident(world *w, unsigned threads) {
  unsigned most = 0;
  cr_assert_eq(gcl_kernel_max_cooperative_grid(w->k, threads, 0, &most), GCL_OK, "%s", gcl_last_error());
  return most;
}

Test(launchsafe, a_cooperative_grid_too_large_is_refused_before_the_driver_with_the_numbers) {
  world w;
  open_world(&w);
  unsigned most = most_resident(&w, 1024);
  cr_assert_eq(most, 264);
  gcl_launch_config cfg = {.grid = {most + 1}, .block = {1024}, .cooperative = true};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("config.grid: cooperative launch of kernel 'k': grid 265x1x1 = 265 blocks, at "
                 "most 264 can be resident at once (2 blocks of 1024 threads with 0 bytes of "
                 "dynamic shared memory per SM x 132 SMs on device 0)");
  cr_assert_eq(gcl_launch_check(w.k, &cfg, NULL), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("at most 264 can be resident");
  cr_assert_eq(fakecuda_launch_count(), 0);
  /* 2-D grids count every block. */
  cfg.grid[0] = 12, cfg.grid[1] = 23;
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("grid 12x23x1 = 276 blocks");
  cfg.grid[0] = most, cfg.grid[1] = 0;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  /* Not cooperative: the same large grid runs in waves. */
  cfg.cooperative = false;
  cfg.grid[0] = 100000;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 2);
  close_world(&w);
}

Test(launchsafe, a_cooperative_grid_of_clusters_must_fit_and_a_cluster_must_fit_at_all) {
  world w;
  open_world(&w);
  /* 2 blocks per SM, clusters of 2: the fake counts 132 x 2 / 2 = 132 resident clusters. */
  gcl_launch_config cfg = {.grid = {266}, .block = {1024}, .cluster = {2}, .cooperative = true};
  int clusters = 0;
  cr_assert_eq(gcl_kernel_active_clusters(w.k, &cfg, &clusters), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(clusters, 132);
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("config.grid: cooperative launch of kernel 'k': grid 266x1x1 = 133 clusters of "
                 "2x1x1 blocks, at most 132 clusters");
  cfg.grid[0] = 264;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cfg.cooperative = false; /* clusters need not all be resident without cooperative */
  cfg.grid[0] = 2000;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_OK, "%s", gcl_last_error());
  cr_assert_eq(fakecuda_launch_count(), 0, "gcl_launch_check launches nothing");
  close_world(&w);
}

Test(launchsafe, no_block_or_cluster_fits_when_registers_run_out) {
  fakecuda_set_func_attribute(4 /* CU_FUNC_ATTRIBUTE_NUM_REGS */, 255); /* 255 x 1024 > 65536 */
  world w;
  open_world(&w);
  gcl_launch_config cfg = {.grid = {1}, .block = {1024}, .cooperative = true};
  cr_assert_eq(gcl_launch(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("grid 1x1x1 = 1 blocks, at most 0 can be resident at once (0 blocks of 1024 "
                 "threads");
  cfg.cooperative = false;
  cfg.cluster[0] = 1;
  cr_assert_eq(gcl_launch_check(w.k, &cfg, w.args), GCL_ERROR_INVALID_CONFIG);
  assert_msg_has("config.cluster: cluster launch of kernel 'k': not one cluster of 1x1x1 = 1 "
                 "blocks of 1024 threads with 0 bytes of dynamic shared memory fits on device 0");
  cr_assert_eq(fakecuda_launch_count(), 0);
  close_world(&w);
}
